# SPDX-License-Identifier: MIT
"""``ccsim reproduce``: run (or resume) a plan, then its figures, tables and report."""

from __future__ import annotations

import contextlib
import os
import shlex
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from ccsim.result import naming_the_file
from ccsim.scenario import PathLike
from ccsim.staging import (
    is_staging,
    name_max,
    not_a_folder,
    refuse_a_site,
    remove_empty,
    reproduction_around,
    reproduction_of,
    shown_path,
    staged_output,
)
from ccsim.sweep import CorruptRecordWarning, Store, _usable_cpus, execute, gather

from . import derived
from .arguments import BOOL, COUNT, NONE, PATH, TEXT, arguments, of
from .checks import check_plan
from .claims import Judgement
from .drawn import Manifest
from .figures import FIGURES_MANIFEST, draw_figure, draw_series_figure, figure_inputs
from .plan import Claim, Plan, find_experiment, line_metric, load_plan
from .report import judge_claims, write_report
from .runs import POINT_COLUMNS, plan_runs, point_rows, points_frame, run_fingerprint
from .stats import compare_lines, summarize
from .tables import line_summary, table_row


@dataclass
class Reproduction:
    report: Path
    results: Path
    executed: int
    cached: int


def reproduce(
    folder: PathLike,
    out: PathLike,
    quick: bool = False,
    workers: int | None = None,
    seeds: int | None = None,
    progress: bool = True,
    cluster: Any = None,
) -> Reproduction:
    """Run (or resume) an experiment and write its figures and report into ``out``; with
    ``cluster`` (a Dask scheduler address or client) the runs go to that cluster. ``folder``
    and ``out`` may be str or Path."""
    _check_options(quick, workers, seeds)
    started = time.monotonic()
    try:
        return _reproduce(folder, out, quick, workers, seeds, progress, cluster, started)
    except _RecordDamaged:
        # The values were filed, but a record a time series is drawn from is damaged: that
        # run is made again and everything derived from the records (campaign 9, issue 32).
        return _reproduce(folder, out, quick, workers, seeds, progress, cluster, started,
                          filed_values=False)  # fmt: skip


def _check_options(quick: Any, workers: Any, seeds: Any) -> None:
    """What ``ccsim reproduce`` checks of --quick, --workers and --seeds, for callers from
    Python: ``seeds=0`` (or -1) wrote a reproduction of no runs over the folder's ("Runs: 0",
    every claim not judged) whose re-run command the CLI refuses, ``quick="no"`` ran the quick
    mode (campaign 13, issue 32)."""
    import numbers

    if not isinstance(quick, bool):
        raise TypeError(f"quick: expected True or False, not {type(quick).__name__} {quick!r}")
    for name, value in (("workers", workers), ("seeds", seeds)):
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise TypeError(f"{name}: expected a whole number or None, not "
                            f"{type(value).__name__} {value!r}")  # fmt: skip
        if value < 1:
            raise ValueError(f"{name}: {value}; it must be at least 1 (None: the default)")


class _RecordDamaged(Exception):
    """A record read for a figure, with the derived values taken from derived.json, is
    damaged or missing (the sweep names it as it runs it again)."""


def _reproduce(folder: PathLike, out: PathLike, quick: bool, workers: int | None,
               seeds: int | None, progress: bool, cluster: Any, started: float,
               filed_values: bool = True) -> Reproduction:  # fmt: skip
    """:func:`reproduce`; ``filed_values``: whether the derived values filed in ``out`` may
    be taken (derived.py)."""
    folder, out = Path(folder), Path(out)
    plan = load_plan(folder)
    check_plan(plan, quick)
    runs = plan_runs(plan, quick, seeds)  # refused over MAX_RUNS: before a file is written
    store = Store(out / "runs")
    store.check()  # a file named runs in --out: refused before plan.toml is written
    # The folders made here go again when the plan cannot be stored in them: under a umask
    # of 0777 --out is made with mode 000, and it was left (campaign 30, issue 32).
    made = [p for p in [*reversed(out.absolute().parents), out.absolute()] if not p.exists()]
    out.mkdir(parents=True, exist_ok=True)
    try:
        store_plan(folder, out)
    except BaseException:
        remove_empty(made)
        raise
    # A re-run over the same runs takes what it derived from their records last time
    # (derived.py); otherwise the sweep runs what the store lacks and returns every record.
    derived_inputs = derived.runs_digest(plan, runs)
    made = Manifest(out, derived.DERIVED_MANIFEST)
    filed = (derived.load(out, made, derived_inputs, store, plan, len(runs))
             if filed_values else None)  # fmt: skip
    if filed is None:
        rep = execute(runs, store, workers=workers, progress=progress,
                      description=plan.id, cluster=cluster)  # fmt: skip
        records = rep.records
        keys = [r["key"] for r in records]
        executed, cached = rep.executed, rep.cached
    else:
        records = []
        keys = filed.keys
        executed, cached = 0, len(set(keys))

    def record_of(i: int) -> dict[str, Any]:
        """Run ``i``'s record, tagged as the sweep tags it (read from the store when the
        values were filed: only for a figure drawn from a record, and only when it is drawn)."""
        if records:
            return records[i]
        # Checked as the sweep checks a record: one cut short, edited or not a regular file
        # (a FIFO waited for ever) is run again with the values derived again, below.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", CorruptRecordWarning)  # the sweep names it
            loaded = store.load_valid(keys[i])
        if loaded is None:
            raise _RecordDamaged
        rec = dict(loaded)
        rec["tags"] = dict(runs[i].tags)
        rec["key"] = keys[i]
        return rec

    # Written into a hidden folder and renamed into place once all is written: on a full disk
    # (or Ctrl-C) midway, the figures and tables written so far stood in --out, beside an
    # earlier reproduction's report.md or none, and the error named no file.
    # An earlier reproduction is said to be left only when there is one (its report.md): the
    # first reproduction into a folder said so too, of outputs that never were (campaign 47,
    # issue 32).
    earlier = (f" (those of an earlier reproduction in {out} were left as they were)"
               if (out / "report.md").exists() else "")  # fmt: skip
    state = (f"the figures, tables and report were not written{earlier}; the finished runs are "
             f"kept in {out / 'runs'}, and the same command resumes from them")  # fmt: skip
    with staged_output(out, [], state=state) as stage:
        if filed is None:
            filed = derive(plan, records)
            results = stage / "results.parquet"
            flows = gather(records, "flows")
            if "x" in flows:
                flows["x"] = flows["x"].astype(str)
            with naming_the_file(results):
                flows.to_parquet(results, index=False)
            derived.save(stage, made, derived_inputs, filed, results)
        made.write(stage)
        frames = [points_frame(rows) for rows in filed.point_frames]
        points = (pd.concat(frames, ignore_index=True) if frames else
                  pd.DataFrame(columns=POINT_COLUMNS))  # fmt: skip
        summary = summarize(points)

        def first_seed(item_id: str, seed: int = 1) -> dict[str, int]:
            """The run of each line of ``item_id`` with ``seed`` (the last, as a dict keeps)."""
            chosen: dict[str, int] = {}
            for i, r in enumerate(runs):
                tags = dict(r.tags)
                if tags["figure"] == item_id and r.seed == seed:
                    chosen[tags["line"]] = i
            return chosen

        # A figure is drawn only when what it is drawn from changed (drawn.py): a cached
        # re-run draws none, and imports no matplotlib.
        drawn = Manifest(out, FIGURES_MANIFEST)
        for sf in plan.series_figures:
            chosen = first_seed(sf.id, sf.seed)
            inputs = figure_inputs("series", sf, [plan.lines[ln] for ln in sf.lines],
                                   sorted((ln, keys[i]) for ln, i in chosen.items()))  # fmt: skip
            if inputs is None or not drawn.up_to_date(sf.id, inputs, into=stage):
                recs = {ln: record_of(i) for ln, i in chosen.items()}
                paths = draw_series_figure(sf, plan, recs, stage)
                if inputs is not None:
                    drawn.drew(sf.id, inputs, paths)
        table_frames: dict[str, pd.DataFrame] = {}
        table_seeds: dict[str, pd.DataFrame] = {}
        for t in plan.tables:
            rows = filed.table_rows.get(t.id, [])
            df = pd.DataFrame(rows)
            if len(df):
                per_line: dict[str, list[dict[str, Any]]] = {}
                fingerprints: dict[str, set[str]] = {}
                for row in rows:
                    per_line.setdefault(row["line"], []).append(
                        {k: v for k, v in row.items() if k not in ("table", "line", "seed", "run")}
                    )
                    fingerprints.setdefault(row["line"], set()).add(row["run"])
                table_frames[t.id] = pd.DataFrame(
                    [
                        {"line": ln, **line_summary(rs, t.flows, len(fingerprints[ln]))}
                        for ln, rs in per_line.items()
                    ]
                )
                table_seeds[t.id] = df
            with naming_the_file(stage / f"table-{t.id}.parquet"):
                df.to_parquet(stage / f"table-{t.id}.parquet", index=False)
        with naming_the_file(stage / "points.parquet"):
            _x_column_for_parquet(points).to_parquet(stage / "points.parquet", index=False)
        with naming_the_file(stage / "summary.parquet"):
            _x_column_for_parquet(summary).to_parquet(stage / "summary.parquet", index=False)
        for fig in plan.figures:
            rows = summary[summary["figure"] == fig.id]
            inputs = figure_inputs("points", fig, [plan.lines[ln] for ln in fig.lines],
                                   list(rows.columns), rows.to_numpy().tolist())  # fmt: skip
            if inputs is None or not drawn.up_to_date(fig.id, inputs, into=stage):
                paths = draw_figure(fig, plan, summary, stage)
                if inputs is not None:
                    drawn.drew(fig.id, inputs, paths)
        drawn.write(stage)
        with naming_the_file(stage / "paired.parquet"):
            paired_comparisons(plan, points).to_parquet(stage / "paired.parquet", index=False)
        # Figures and tables with the same overrides share runs: count each simulation once.
        command = rerun_command(plan.id, out, quick, seeds)
        judged = judge_claims(plan, points, table_seeds)
        write_report(plan, summary, stage, quick, executed + cached, table_frames,
                     points=points, table_seeds=table_seeds, command=command,
                     judged=judged)  # fmt: skip
        write_record(plan, stage, quick, filed, executed, cached, summary, judged, table_seeds,
                     command, time.monotonic() - started, workers)  # fmt: skip
    report = out / "report.md"
    return Reproduction(report, out / "results.parquet", executed, cached)


def derive(plan: Plan, records: list[dict[str, Any]]) -> derived.Derived:
    """What the reproduction needs of ``records`` (in the order of the plan's runs) beyond
    drawing a time series: the points of every figure line and grid metric, every summary
    table's rows, and the counts ``run.json`` reports (derived.py files them)."""
    point_frames = []
    for fig in plan.figures:
        for lid in fig.lines:
            recs = [r for r in records
                    if r["tags"]["figure"] == fig.id and r["tags"]["line"] == lid]  # fmt: skip
            point_frames.append(point_rows(recs, line_metric(plan, fig, lid)))
    for grid in plan.grids:
        recs = [r for r in records if r["tags"]["figure"] == grid.id]
        for m in grid.metrics:
            point_frames.append(point_rows(recs, m, grid.cell_id(m)))
    table_rows: dict[str, list[dict[str, Any]]] = {}
    for t in plan.tables:
        table_rows[t.id] = [{"table": t.id, "line": r["tags"]["line"], "seed": r["seed"],
                             "run": run_fingerprint(r), **table_row(r, t)}
                            for r in records if r["tags"]["figure"] == t.id]  # fmt: skip
    return derived.Derived(
        keys=[r["key"] for r in records],
        point_frames=point_frames,
        table_rows=table_rows,
        seeds=sorted({int(r["seed"]) for r in records}),
        runs=len(records),
        simulation_cpu_seconds=derived.simulation_cpu_seconds(records),
    )


#: The folder of a reproduction holding the plan it ran (plan.toml and the scenario it names),
#: from which ``ccsim report`` reads labels and store keys: results are self-contained, so the
#: site is the same wherever it is built from and after the plan in experiments/ changes.
PLAN_FOLDER = "plan"


def store_plan(folder: Path, out: Path) -> Path:
    """Copy ``folder``'s plan.toml and the scenario file it names into ``out/plan/``, byte for
    byte, and return that folder. A scenario named by a path (``../common/x.toml``) is stored
    beside the plan under its file name, and the stored plan's ``scenario`` key says so. Each
    file ends with a line break (one is added when its last line has none): a stored file
    without one was cut short, and is refused as damaged when read back (load_stored_plan)."""
    import re

    from ccsim._tomllib import tomllib
    from ccsim.scenario import read_text

    text = read_text(folder / "plan.toml", "plan")
    scenario = Path(str(tomllib.loads(text)["scenario"]))  # load_plan has checked it
    if scenario.as_posix() != scenario.name:
        text = re.sub(r"(?m)^scenario\s*=.*$", f'scenario = "{scenario.name}"', text, count=1)
    dest = out / PLAN_FOLDER
    # Something other than a folder where the stored plan goes was refused in the system's
    # words, "D/plan: file exists", which do not say what is wrong (campaign 9).
    wrong = not_a_folder(dest)
    if wrong is not None:
        raise ValueError(f"{wrong}, where the reproduction stores its plan: move it away or "
                         "write elsewhere")  # fmt: skip
    made = not dest.exists()
    dest.mkdir(parents=True, exist_ok=True)
    data = (folder / scenario).read_bytes()
    plan_bytes = text.encode("utf-8")
    try:
        _write_whole([
            (dest / "plan.toml", plan_bytes if plan_bytes.endswith(b"\n") else plan_bytes + b"\n"),
            (dest / scenario.name, data if data.endswith(b"\n") else data + b"\n"),
        ])  # fmt: skip
    except BaseException:
        if made:  # the caller removes the folders it made above, when empty
            with contextlib.suppress(OSError):
                dest.rmdir()
        raise
    return dest


def _write_whole(files: list[tuple[Path, bytes]]) -> None:
    """Write each ``(path, data)`` whole, or none of them: each into a temporary file beside
    it, all renamed over theirs once all are written. Written in place, a re-run that met a
    full disk or a file-size limit (``ulimit -f``) cut the stored plan of a finished
    reproduction short, and ``ccsim report`` then left that reproduction out; the error,
    "[Errno 27] File too large", named no file (campaign 23, issue 32). One file renamed
    before the next was written, a disk out of inodes at the scenario kept a new plan.toml
    in plan/ (beside an earlier run's scenario, or in a --out the command had made), and the
    error did not say so (campaign 51, issue 32). A failed write is named by its ``path``,
    the file the user knows."""
    tmps = [path.with_name(f".tmp-{os.getpid()}-{path.name}") for path, _ in files]
    try:
        for (path, data), tmp in zip(files, tmps):
            with naming_the_file(path):
                try:
                    tmp.write_bytes(data)
                except OSError as e:
                    if e.filename != str(tmp):
                        raise
                    # A disk with bytes free but no inode left (a tmpfs with nr_inodes=)
                    # fails the temporary file's creation naming it, a file the user never
                    # made (campaign 27, issue 32).
                    raise OSError(e.errno, e.strerror, str(path)) from e
        for (path, _), tmp in zip(files, tmps):
            with naming_the_file(path):
                try:
                    os.replace(tmp, path)
                except OSError as e:
                    # The rename names the hidden file first, "<plan>/.tmp-<pid>-plan.toml
                    # -> <plan>/plan.toml: read-only file system" (campaign 28, issue 32).
                    raise OSError(e.errno, e.strerror, str(path)) from e
    finally:
        # One never made (its path past PATH_MAX though ``path`` fits) fails this unlink
        # too, whose error named the hidden file in place of the write's (campaign 27).
        for tmp in tmps:
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)


#: The files of a reproduction that ``--record`` keeps in ``experiments/<paper>/full-run/``:
#: small, text, and what the README's numbers are checked against.
RECORD_FILES = ("run.json", "claims.csv", "summary.csv")


def write_record(plan: Plan, out: Path, quick: bool, filed: derived.Derived, executed: int,
                 cached: int, summary: pd.DataFrame, judged: list[tuple[Claim, Judgement]],
                 table_seeds: dict[str, pd.DataFrame], command: str, wall_seconds: float,
                 workers: int | None = None) -> None:  # fmt: skip
    """The reproduction's record as text: ``run.json`` (what ran: ccsim, commit, mode, seeds,
    runs, the simulations' CPU time, this invocation's wall time and how many of the runs it
    executed; a resumed reproduction's wall time covers only what it ran), ``claims.csv``
    (each claim's verdict and evidence, as report.md has them), ``summary.csv`` (every point)
    and ``table-<id>.csv`` (each summary table, one row per line and seed). The report and
    these come from the same runs."""
    import json

    from ccsim import _core

    from .report import git_commit

    info = {
        "paper": plan.id, "command": command, "ccsim": _core.__version__,
        "engine": _core.ENGINE, "commit": git_commit(plan.folder),
        "mode": "quick" if quick else "full",
        "seeds": len(filed.seeds), "runs": filed.runs,
        "simulation_cpu_seconds": round(filed.simulation_cpu_seconds, 1),
        "wall_seconds": round(wall_seconds, 1), "executed": executed, "cached": cached,
        "workers": workers or _usable_cpus(), "cpus": os.cpu_count(),
    }  # fmt: skip
    with naming_the_file(out / "run.json"):
        (out / "run.json").write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")
    rows = []
    for c, j in judged:
        rows.append({"item": c.figure, "headline": c.headline, "claim": c.text,
                     "verdict": j.verdict, "evidence": j.detail})  # fmt: skip
    with naming_the_file(out / "claims.csv"):
        claims = pd.DataFrame(rows, columns=["item", "headline", "claim", "verdict", "evidence"])
        claims.to_csv(out / "claims.csv", index=False)
    with naming_the_file(out / "summary.csv"):
        summary.to_csv(out / "summary.csv", index=False, float_format="%.6g")
    for tid, df in table_seeds.items():
        with naming_the_file(out / f"table-{tid}.csv"):
            df.to_csv(out / f"table-{tid}.csv", index=False, float_format="%.6g")


def record_full_run(out: Path, folder: Path) -> Path:
    """Keep a full reproduction's record (:func:`write_record`) in ``folder/full-run/``, where
    the README's numbers are checked against it (tests/python/test_readme_numbers.py)."""
    import shutil

    from ccsim.staging import staged_output

    dest = folder / "full-run"
    # Written whole or not at all (staged_output): the earlier record was removed first and
    # the new one copied file by file, so a full disk left a new run.json and claims.csv
    # beside an empty summary.csv, the record the README is checked against (campaign 25,
    # issue 32). The earlier record's tables go only once the new one is in place.
    ours = [*RECORD_FILES, *sorted(p.name for p in dest.glob("table-*.csv"))]
    with staged_output(dest, ours) as stage:
        for name in [*RECORD_FILES, *sorted(p.name for p in out.glob("table-*.csv"))]:
            shutil.copyfile(out / name, stage / name)
    return dest


def _x_column_for_parquet(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with its x column as text when some x values are (a unit: "10Mbps"): a Parquet
    column has one type. Numbers alone stay numbers."""
    if "x" in df and any(isinstance(x, str) for x in df["x"]):
        return df.assign(x=df["x"].astype(str))
    return df


@arguments(plan=of(Plan), points=of(pd.DataFrame, "a pandas DataFrame"))
def paired_comparisons(plan: Plan, points: pd.DataFrame) -> pd.DataFrame:
    """Every figure claim's paired comparison (:func:`compare_lines`), one row per x, with
    the figure and the two lines: what the report's paired tables show."""
    frames = []
    for c in plan.claims:
        if c.table is None and c.lower and c.than and len(points):
            margin = c.margin if c.relation == "similar" else None
            cmp = compare_lines(points, c.figure, c.lower, c.than, margin)
            frames.append(cmp.assign(figure=c.figure, a=c.lower, b=c.than))
    if not frames:
        return pd.DataFrame(columns=["figure", "a", "b", "x", "n", "diff", "low", "high"])
    df = pd.concat(frames, ignore_index=True)
    df["x"] = df["x"].astype(str)
    return df


@arguments(plan_id=TEXT, out=PATH, quick=BOOL, seeds=COUNT | NONE)
def rerun_command(plan_id: str, out: Path, quick: bool, seeds: int | None) -> str:
    """The command line that writes this reproduction again."""
    parts = ["ccsim", "reproduce", plan_id]
    if quick:
        parts.append("--quick")
    if seeds is not None:
        parts += ["--seeds", str(seeds)]
    if Path(out) != default_out(plan_id, quick):
        parts += ["--out", str(out)]
    # Quoted as a shell reads it: an --out with a space (`--out "my results/m01"`) was written
    # bare, and the line pasted from report.md or run.json failed "unrecognized arguments: ..."
    # (campaign 61, issue 32).
    return shlex.join(parts)


@arguments(plan_id=TEXT, quick=BOOL)
def default_out(plan_id: str, quick: bool) -> Path:
    base = Path(os.environ.get("CCSIM_RESULTS") or "results")  # empty is unset (campaign 19)
    return base / (plan_id + ("-quick" if quick else ""))


def _stored_plan_id(folder: Path) -> str | None:
    """The id of the plan a reproduction stored in ``folder`` (its plan/plan.toml), or None
    when there is none or it cannot be read."""
    from ccsim._tomllib import tomllib
    from ccsim.errors import Error
    from ccsim.scenario import read_text

    try:
        # Read as a plan is (a byte order mark first is not part of it: re-saved by hand).
        stored = tomllib.loads(read_text(folder / "plan" / "plan.toml", "plan"))
    except (OSError, ValueError, Error):  # TOMLDecodeError is a ValueError
        return None
    plan_id = stored.get("id")
    return plan_id if isinstance(plan_id, str) else None


def _stored_engine(folder: Path) -> str | None:
    """The engine that made the reproduction in ``folder`` (its run.json), or None when there
    is none or it cannot be read."""
    import json

    try:
        info = json.loads((folder / "run.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        return None
    engine = info.get("engine") if isinstance(info, dict) else None
    return engine if isinstance(engine, str) else None


def run_cli(name: str, out: PathLike | None, quick: bool, workers: int | None, seeds: int | None,
            cluster: str | None = None, record: bool = False,
            warn: Any = None, say: Any = print) -> Path:  # fmt: skip
    """``ccsim reproduce``: the reproduction, its site, and the lines that say so, each given
    to ``say`` (the command's, which names stdout when it cannot be written)."""
    folder = find_experiment(name)
    plan_id = load_plan(folder).id
    if record and (quick or seeds is not None):
        raise ValueError("--record keeps a full reproduction's tables: not with --quick or "
                         "--seeds (the plan's seeds are the record's)")  # fmt: skip
    target = Path(out or default_out(plan_id, quick))
    # The folder's errors name what gave it: the default's, under $CCSIM_RESULTS, was refused
    # as "--out .../m01-quick: it is inside ...", an option never given (campaign 24, issue 32).
    if out is not None:
        option = "--out"
    elif os.environ.get("CCSIM_RESULTS"):
        option = "$CCSIM_RESULTS's folder"
    else:
        option = "the default folder"
    site_in_the_way = not_a_folder(target / "site")
    if site_in_the_way is not None:
        # The site is written after every run and the report: it failed then, naming
        # "<out>/site/<name>: not a directory", and the report.md beside it looked finished
        # (campaign 22, issue 32).
        raise ValueError(f"{option} {target}: the reproduction's site goes in {target / 'site'}, "
                         f"and {site_in_the_way}; move it away or name another folder")  # fmt: skip
    page = f"{target.absolute().name}.html"
    if len(os.fsencode(page)) > name_max(target):
        # The site names the reproduction's page after its folder: a folder of 251 to 255
        # bytes ran every run, then said "<out>/site/NAME.html: file name too long; ... the
        # same command writes the site from them", which fails the same way (campaign 48,
        # issue 32).
        raise ValueError(f"{option} {target}: the reproduction's site names its page after "
                         f"the folder, and {page} would be longer than a file name may be "
                         f"here ({name_max(target)} bytes); name a shorter folder")  # fmt: skip
    if target.resolve() == (folder / "full-run").resolve():
        # Its claims.csv, summary.csv and run.json are the ones a reproduction writes: a quick
        # run there replaced the record the README's numbers are checked against, which
        # --record refuses to do with --quick (campaign 13, issue 32).
        raise ValueError(f"{option} {target}: that is the plan's full-run record (the README's "
                         "numbers are checked against it; --record writes it after a full "
                         "run); name another folder")  # fmt: skip
    other = reproduction_of(target)
    said_by = "its run.json"
    if other is None and (target / "report.md").is_file():
        # A reproduction whose run.json is damaged or gone (a disk's fault, a hand's) is
        # still named by the plan stored with it: `ccsim reproduce p003 --out` such a folder
        # of m01's wrote p003's report beside m01's figures, status 0 (campaign 48, issue 32).
        other = _stored_plan_id(target)
        said_by = "the plan stored in it; its run.json is missing or damaged"
    if other is not None and other != plan_id:
        # A slip of the paper's id (`ccsim reproduce p001 --out results/m01`) wrote p001's
        # report.md and run.json over m01's and left m01's figures beside p001's: m01's
        # reproduction was gone, status 0 (campaign 18, issue 32). The same paper's folder is
        # where a reproduction resumes.
        raise ValueError(f"{option} {target}: it holds the reproduction of {other} "
                         f"({said_by}), not of {plan_id}: reproduced there, its report and "
                         "figures would be replaced by and mixed with these; name another "
                         "folder (or remove that one)")  # fmt: skip
    blocked = not_a_folder(target)
    if blocked is not None:
        # A file above --out (`--out afile/out`) was named as where "the run records are
        # stored", not as the --out given (issue 32's output-folder matrix).
        raise ValueError(f"{option} {target}: {blocked}; move it away or name another folder")
    around = reproduction_around(target)
    if around is not None and other is None:
        # A folder inside a reproduction (its plan/, runs/, directly or through a link): the
        # new reproduction's plan/ was stored over the other's plan.toml, and its report,
        # figures and run store were mixed with the other's files (issue 32's output-folder
        # matrix, tests/python/test_output_folders.py).
        raise ValueError(f"{option} {target}: it is inside {around[0]}, the reproduction of "
                         f"{around[1]} (its report.md and run.json); a reproduction there would "
                         "be mixed with its files: name another folder")  # fmt: skip
    # Another reproduction writing this folder holds its finished one in a hidden folder
    # here before moving it into place: it was refused as "it holds the reproductions
    # .ccsim-partial-XXXX", a name of no folder of the user's (CCSIM_CONCURRENT_CASES=12,
    # campaign 54).
    held = sorted(p.name for p in target.iterdir()
                  if p.is_dir() and not is_staging(p.name) and reproduction_of(p)) \
        if target.is_dir() and other is None else []  # fmt: skip
    if held:
        # A folder of reproductions (`--out results`): its report.md made the whole folder one
        # reproduction to `ccsim report`, whose site then showed it alone and none of those
        # inside it (issue 32's output-folder matrix, noted by its helper).
        raise ValueError(f"{option} {target}: it holds the reproductions {', '.join(held[:5])}"
                         f"{' ...' if len(held) > 5 else ''}; one written there would hide them "
                         f"from the site: name a folder of its own, such as "
                         f"{target / default_out(plan_id, quick).name}")  # fmt: skip
    refuse_a_site(target, option, "a reproduction's report, figures and run store")
    # Resumed by another build of ccsim (a second install, an older checkout): its store
    # keys hold the engine, so every run is made again, and the one line said "21 runs
    # executed, 0 reused from the store" with no word why (campaign 61, issue 32).
    before = _stored_engine(target) if other == plan_id else None
    r = reproduce(folder, target, quick, workers, seeds, cluster=cluster)
    recorded = None
    if record:
        try:
            recorded = record_full_run(r.report.parent, folder)
        except (OSError, ValueError) as e:
            # The record is copied after every run, the report, figures and tables: its full
            # disk said only "<paper>/full-run/claims.csv: no space left on device; <paper>/
            # full-run was left as it was", as if the hours of the full run were lost, and the
            # site, written after it, was not (campaign 29, issue 32).
            from ccsim.staging import os_error_text

            said = os_error_text(e) if isinstance(e, OSError) else str(e)
            raise ValueError(f"{said}; {r.report.parent} holds this reproduction (its report, "
                             "figures, tables and runs; not its site), and the same command "
                             "records it from the stored runs") from e  # fmt: skip
    # This reproduction's HTML site, inside its own folder: nothing is written outside --out
    # (`ccsim report` builds one site over several reproductions).
    from ccsim.site import build_site
    from ccsim.site.build import AllLeftOut

    try:
        site = build_site(r.report.parent, warn=warn)
    except AllLeftOut as e:
        # Its files written, then one failing as the site read it back (a failing disk:
        # claims.csv, "input/output error", in the warning above): the error said "every
        # reproduction in it was left out", as if this one were lost (campaign 29, issue 32).
        raise ValueError(f"{r.report.parent / 'site'} was not written, as the file named "
                         f"above could not be read; {r.report.parent} holds the rest of this "
                         "reproduction (its report, figures and tables), and the same command "
                         "writes the site from them") from e  # fmt: skip
    except (OSError, ImportError) as e:
        # The reproduction's report, figures and tables are in place by now: "<out>/site/
        # index.html: no space left on device; the site was not written" left the user to
        # think the reproduction lost too (campaign 28, issue 32).
        from ccsim.staging import os_error_text, package_changed

        state = (f"{r.report.parent} holds the rest of this reproduction (its report, figures "
                 "and tables), and the same command writes the site from them")  # fmt: skip
        # plotly removed or upgraded during the runs: its plotly.min.js, read only now, was
        # named as ".../plotly/package_data/plotly.min.js: no such file" (campaign 41).
        changed = package_changed(e, [r.report.parent], state)
        if changed is not None:
            raise ValueError(changed) from e
        if not isinstance(e, OSError):
            raise
        raise ValueError(f"{os_error_text(e)}; {state}") from e
    # Said once all is written: a stdout that cannot be written (closed, a full disk) fails the
    # first line, and said as each step ended, it stopped the command before the site and the
    # record of a full run were written (campaign 16, issue 32).
    say(f"{r.executed} runs executed, {r.cached} reused from the store")
    from ccsim import _core
    from ccsim.sweep import _other_build_said

    if before is not None and before != _core.ENGINE and r.executed:
        say(_other_build_said(before, "a reproduction"))
    # Shown as the report: line is (staging.shown_path): an --out with a newline, a tab or an
    # escape sequence printed this line raw, across two lines or in the terminal's red,
    # beside a report: line in bash's $'...' (campaign 63b, issue 32).
    if recorded is not None:
        say(f"recorded: {shown_path(recorded)}")
    say(f"site: {shown_path(site)}")
    return r.report
