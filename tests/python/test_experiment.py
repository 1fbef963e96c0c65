# SPDX-License-Identifier: MIT
"""Declared experiments: plan checks, figures, claims, tables, resuming."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from conftest import METRIC_AND_TWO_LINES

import ccsim
from ccsim import _core, experiment
from ccsim.cli import main

SCENARIO = """
duration = "20s"
[nodes]
s1 = "host"
s2 = "host"
r1 = "router"
r2 = "router"
d1 = "host"
d2 = "host"
[links.bottleneck]
a = "r1"
b = "r2"
rate = "10Mbps"
delay = "10ms"
queue = { type = "droptail", limit = 40 }
loss = { type = "uniform", rate = 0.0, direction = "a_to_b" }
[links.i1]
a = "s1"
b = "r1"
rate = "100Mbps"
delay = "1ms"
[links.i2]
a = "s2"
b = "r1"
rate = "100Mbps"
delay = "1ms"
[links.o1]
a = "r2"
b = "d1"
rate = "100Mbps"
delay = "1ms"
[links.o2]
a = "r2"
b = "d2"
rate = "100Mbps"
delay = "1ms"
[flows.f1]
type = "tcp"
src = "s1"
dst = "d1"
[flows.f2]
type = "tcp"
src = "s2"
dst = "d2"
start = "5s"
[trace]
interval = "500ms"
[jitter]
start = "5ms"
"""

PLAN = (
    """
id = "t"
title = "test"
paper = 'A. Author, "A Title", Some Venue, 2001'
scenario = "scenario.toml"
seeds = 4
quick_seeds = 2
quick_set = { duration = "10s" }

"""
    + METRIC_AND_TWO_LINES
    + """
[[figures]]
id = "loss"
title = "goodput vs loss"
x = { path = "links.bottleneck.loss.rate", values = [0.0, 0.02], quick = [0.02] }
lines = ["sack", "reno"]

[[figures]]
id = "shares"
kind = "flow_series"
lines = ["sack", "reno"]
flows = ["f1", "f2"]
link = "bottleneck:a_to_b"

[[figures]]
id = "util"
kind = "link_series"
lines = ["sack", "reno"]
link = "bottleneck:a_to_b"

[[tables]]
id = "fairness"
lines = ["sack", "reno"]
flows = ["f1", "f2"]
link = "bottleneck:a_to_b"
from_s = 5.0
window_s = 2.0

[[claims]]
figure = "loss"
text = "loss lowers goodput"
lower = "reno"
than = "sack"

[[claims]]
table = "fairness"
text = "two flows of one kind split the bottleneck"
lines = ["sack", "reno"]
column = "jain"
at_least = 0.5

[[assumptions]]
text = "a test plan"
"""
)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    d = tmp_path / "experiments" / "t-test"
    d.mkdir(parents=True)
    (d / "scenario.toml").write_text(SCENARIO)
    (d / "plan.toml").write_text(PLAN)
    return d


def test_a_reproduction_writes_figures_points_tables_claims_and_assumptions(
    folder: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    r = experiment.reproduce(folder, out, workers=2, progress=False)
    for name in ("loss", "shares", "util"):
        assert (out / f"{name}.png").exists() and (out / f"{name}.svg").exists(), name
    points = pd.read_parquet(out / "summary.parquet")
    assert len(points) == 4, "2 lines x 2 loss rates"
    assert set(points["n"]) == {4} and points["ci95"].notna().all()
    # Loss lowers goodput for both lines.
    for line in ("sack", "reno"):
        p = points[points["line"] == line].set_index("x")["mean"]
        assert p[0.02] < p[0.0], line
    fair = pd.read_parquet(out / "table-fairness.parquet")
    assert set(fair["line"]) == {"sack", "reno"}
    assert fair["utilization"].between(0.5, 1.0).all()
    assert fair["jain"].between(0.5, 1.0).all()
    assert fair["shares"].str.contains("f1").all()
    assert (fair["share_f1"] + fair["share_f2"]).round(9).eq(1.0).all()
    assert fair["rate_cv"].between(0.0, 1.0).all()
    report = r.report.read_text()
    assert "| loss | loss lowers goodput | " in report
    assert "reno is lower at" in report
    assert (
        "| fairness | two flows of one kind split the bottleneck | holds: jain ≥ 0.5 "
        "significantly (95 % CI over 4 seeds) for 2 of 2 lines" in report
    )
    assert "## fairness" in report and "![shares](shares.png)" in report
    # Four seeds per line: each cell is the mean ± its 95 % half-width, and the shares text is
    # the mean shares (it once showed seed 1's split beside the other columns' means).
    row = next(ln for ln in report.splitlines() if ln.startswith("| SACK |"))
    assert row.count(" ± ") >= 6, row
    mean_f1 = fair[fair["line"] == "sack"]["share_f1"].mean()
    assert f"f1 {100 * mean_f1:.0f} %" in row
    assert "- a test plan" in report
    # What a newcomer needs to trust and re-run it (issue 12).
    assert '**Paper:** A. Author, "A Title", Some Venue, 2001' in report
    assert f"Produced by ccsim {ccsim.__version__} (engine " in report
    assert f"`ccsim reproduce t --out {out}`" in report
    assert "| link | bottleneck | a r1, b r2, rate 10Mbps, delay 10ms" in report
    assert '| reno | Reno | tcp.variant="reno" |' in report
    # The claim's paired comparison, one row per x.
    assert "reno - sack, paired by seed (goodput;" in report
    assert report.count("| 0 | 4 | ") == 1 and report.count("| 0.02 | 4 | ") == 1
    paired = pd.read_parquet(out / "paired.parquet")
    assert list(paired["n"]) == [4, 4] and set(paired["a"]) == {"reno"}
    # The record as text, from the same runs: what ran, every verdict, every point.
    import json

    run = json.loads((out / "run.json").read_text())
    assert (run["paper"], run["mode"], run["seeds"]) == ("t", "full", 4)
    assert run["executed"] > 0 and run["wall_seconds"] > 0 and run["runs"] >= run["executed"]
    claims = pd.read_csv(out / "claims.csv")
    assert list(claims["item"]) == ["loss", "fairness"]
    assert claims["verdict"].iloc[1] == "holds" and "for 2 of 2 lines" in claims["evidence"][1]
    assert len(pd.read_csv(out / "summary.csv")) == 4
    assert set(pd.read_csv(out / "table-fairness.csv")["seed"]) == {1, 2, 3, 4}


def test_a_summary_tables_line_averages_its_seeds_and_counts_the_converged_ones() -> None:
    from ccsim.experiment.tables import line_summary

    base = {
        "shares": "one seed's text",
        "utilization": 0.9,
        "jain": 0.8,
        "rate_cv": 0.2,
        "share_f1": 0.7,
        "share_f2": 0.3,
    }
    per_seed = [
        {**base, "convergence_s": 10.0},
        {**base, "convergence_s": float("nan"), "share_f1": 0.5, "share_f2": 0.5},
        {**base, "convergence_s": 30.0, "utilization": 0.6},
    ]
    s = line_summary(per_seed, ["f1", "f2"])
    assert s["n"] == 3 and s["converged"] == 2
    assert s["convergence_s"] == pytest.approx(20.0), "over the two seeds that converged"
    assert s["utilization"] == pytest.approx(0.8)
    assert s["jain_ci95"] == pytest.approx(0.0, abs=1e-12) and s["utilization_ci95"] > 0.3
    assert s["shares"] == "f1 63 %, f2 37 %"


def test_record_keeps_a_full_runs_tables_beside_its_plan_and_refuses_a_quick_one(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out"
    experiment.run_cli("t", out, quick=False, workers=2, seeds=None, record=True)
    kept = sorted(p.name for p in (folder / "full-run").iterdir())
    assert kept == ["claims.csv", "run.json", "summary.csv", "table-fairness.csv"]
    assert (folder / "full-run" / "claims.csv").read_text() == (out / "claims.csv").read_text()
    with pytest.raises(ValueError, match="--record keeps a full reproduction's tables"):
        experiment.run_cli("t", out, quick=True, workers=2, seeds=None, record=True)


def test_a_reproduction_resumed_by_another_build_says_why_no_run_was_reused(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Two installs of ccsim (another checkout's build): the store keys hold the engine. Two
    # reproductions of the smallest plan (about 2 s): the line needs the first one's record.
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out"
    said: list[str] = []
    engine = _core.ENGINE
    experiment.drawn.code_version.cache_clear()  # it holds the engine, read once per process
    monkeypatch.setattr(_core, "ENGINE", "0123456789abcdef")
    experiment.run_cli("t", out, quick=True, workers=1, seeds=None, say=said.append)
    monkeypatch.setattr(_core, "ENGINE", engine)
    experiment.drawn.code_version.cache_clear()
    said.clear()
    experiment.run_cli("t", out, quick=True, workers=1, seeds=None, say=said.append)
    assert said[1] == (
        "(the runs stored there were made by engine 0123456789abcdef, another build of ccsim "
        f"than this one's {engine}: made again, as a reproduction never mixes two builds' runs)"
    )


def test_a_file_where_the_plan_is_stored_is_refused_saying_what_it_is(
    folder: Path, tmp_path: Path
) -> None:
    # Campaign 9: "D/plan: file exists" said neither that plan was a file nor what goes there.
    out = tmp_path / "out"
    out.mkdir()
    (out / "plan").write_text("not a folder")
    with pytest.raises(ValueError, match=r"plan is a file, not a folder, where the reproduction "
                                         r"stores its plan"):  # fmt: skip
        experiment.reproduce(folder, out, workers=1, progress=False)
    assert (out / "plan").read_text() == "not a folder"


def test_a_second_reproduction_reuses_every_run(folder: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = experiment.reproduce(folder, out, workers=2, progress=False)
    figures = {p.name: p.read_bytes() for p in out.glob("*.svg")}
    # Without the manifest every figure is drawn again (a cached re-run draws none).
    (out / "figures.json").unlink()
    again = experiment.reproduce(folder, out, workers=2, progress=False)
    assert first.executed > 0 and again.executed == 0
    assert again.cached == first.executed + first.cached
    # Same runs, same bytes: SVG ids were once random, so every reproduction differed.
    assert figures and figures == {p.name: p.read_bytes() for p in out.glob("*.svg")}


@pytest.fixture
def drawn(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The figures drawn (saved as PNG and SVG) from now on, by id, in order."""
    from ccsim.experiment import figures

    names: list[str] = []
    save = figures._save

    def counted(plt: Any, f: Any, out: Any, name: str) -> list[Path]:
        names.append(name)
        return save(plt, f, out, name)

    monkeypatch.setattr(figures, "_save", counted)
    return names


def reproduce_drawing(folder: Path, out: Path, drawn: list[str]) -> list[str]:
    """The figures a quick reproduction into ``out`` draws, sorted."""
    drawn.clear()
    experiment.reproduce(folder, out, quick=True, progress=False)
    return sorted(drawn)


def figure_files(out: Path, mtimes: bool = False) -> dict[str, Any]:
    """Each PNG and SVG in ``out``: its bytes (and with ``mtimes`` its modification time)."""
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns) if mtimes else p.read_bytes()
            for p in out.glob("*.[ps][nv]g")}  # fmt: skip


@pytest.fixture
def reproduced(folder: Path, tmp_path: Path, drawn: list[str]) -> Path:
    """The folder of a first quick reproduction, which drew every figure."""
    out = tmp_path / "out"
    assert reproduce_drawing(folder, out, drawn) == ["loss", "shares", "util"]
    return out


def test_a_cached_reproduction_draws_no_figure_and_writes_the_same_report(
    folder: Path, reproduced: Path, drawn: list[str]
) -> None:
    out = reproduced
    report, files = (out / "report.md").read_bytes(), figure_files(out, mtimes=True)
    assert reproduce_drawing(folder, out, drawn) == []
    assert (out / "report.md").read_bytes() == report
    assert figure_files(out, mtimes=True) == files


def put_in_place_by_another_command(path: Path, data: bytes) -> None:
    """``data`` renamed over ``path``, as another command puts its output in place."""
    other = path.with_name(f".other-{path.name}")
    other.write_bytes(data)
    os.replace(other, path)


def test_a_kept_figure_is_put_in_place_with_its_own_bytes_whatever_another_command_wrote_meanwhile(
    folder: Path, reproduced: Path, drawn: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Campaign 31 (issue 32): a figure counted as up to date was left out of the staging
    # folder, so the output put in place held whatever stood in --out at that moment: two
    # reproductions at once left one's report.md beside the other's figures.
    from ccsim.experiment.drawn import Manifest

    out = reproduced
    first = figure_files(out)
    up_to_date = Manifest.up_to_date

    def another_reproduction_ends(self: Manifest, item: str, inputs: str, **into: Any) -> bool:
        kept = up_to_date(self, item, inputs, **into)
        if kept and self.name == "figures.json":
            for name in self.old[item]["files"]:
                put_in_place_by_another_command(out / name, b"another reproduction's figure")
        return kept

    monkeypatch.setattr(Manifest, "up_to_date", another_reproduction_ends)
    assert reproduce_drawing(folder, out, drawn) == []
    assert figure_files(out) == first


def test_a_reproduction_whose_kept_values_another_command_replaced_meanwhile_says_so(
    folder: Path, reproduced: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The same for the values derived from the runs (results.parquet), kept before the staging
    # folder exists: they are copied into it as it is written, and found replaced, the output
    # is not put in place (the other command's stays whole).
    from ccsim.experiment import derived

    out = reproduced
    load = derived.load

    def another_reproduction_ends(*args: Any, **kwargs: Any) -> Any:
        kept = load(*args, **kwargs)
        put_in_place_by_another_command(out / "results.parquet", b"another reproduction's")
        return kept

    monkeypatch.setattr(derived, "load", another_reproduction_ends)
    report = (out / "report.md").read_bytes()
    with pytest.raises(ValueError, match=r"results\.parquet: replaced by another command while "
                                         r"this one ran; run this command again"):  # fmt: skip
        experiment.reproduce(folder, out, quick=True, progress=False)
    assert (out / "results.parquet").read_bytes() == b"another reproduction's"
    assert (out / "report.md").read_bytes() == report


def test_a_changed_figure_input_redraws_that_figure_only(
    folder: Path, reproduced: Path, drawn: list[str]
) -> None:
    out = reproduced
    before = figure_files(out)
    # A title is no setting of any run: the runs are reused, the one figure redrawn.
    plan = folder / "plan.toml"
    plan.write_text(plan.read_text().replace('id = "util"', 'id = "util"\ntitle = "busy"'))
    assert reproduce_drawing(folder, out, drawn) == ["util"]
    after = figure_files(out)
    assert sorted(n for n in before if before[n] != after[n]) == ["util.png", "util.svg"]
    assert b"busy" in after["util.svg"]


def test_a_deleted_truncated_or_edited_figure_is_drawn_again(
    folder: Path, reproduced: Path, drawn: list[str]
) -> None:
    out = reproduced
    first = figure_files(out)
    (out / "loss.svg").unlink()
    (out / "shares.png").write_bytes(first["shares.png"][:100])
    (out / "util.png").write_bytes(first["util.png"] + b" ")
    assert reproduce_drawing(folder, out, drawn) == ["loss", "shares", "util"]
    assert figure_files(out) == first
    # A damaged manifest is no manifest: everything is drawn.
    (out / "figures.json").write_text("{")
    assert reproduce_drawing(folder, out, drawn) == ["loss", "shares", "util"]


def outputs(out: Path) -> dict[str, Any]:
    """What a reproduction wrote that a reader uses: the report, the record's tables and the
    Parquet tables (as frames), and run.json without its wall times (this invocation's and
    the simulations', which a run made again changes)."""
    import json

    seen: dict[str, Any] = {p.name: p.read_bytes() for p in out.glob("*.csv")}
    seen["report.md"] = (out / "report.md").read_bytes()
    for p in out.glob("*.parquet"):
        # As text with every float in full (NaN compares unequal to itself in a dict); a
        # column read back as another type shows (1 against 1.0).
        frame = pd.read_parquet(p)
        seen[p.name] = (frame.to_csv(index=False), [str(t) for t in frame.dtypes])
    info = json.loads((out / "run.json").read_text())
    seen["run.json"] = {k: v for k, v in info.items()
                        if k not in ("wall_seconds", "executed", "cached",
                                     "simulation_cpu_seconds")}  # fmt: skip
    return seen


@pytest.fixture
def record_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The store keys computed (each resolves a scenario in the core) and the records read
    from the store from now on."""
    from ccsim import sweep

    reads: list[str] = []
    load_valid, load, key = sweep.Store.load_valid, sweep.Store.load, sweep.RunSpec.key

    def counted_load_valid(self: Any, k: str, *a: Any, **kw: Any) -> Any:
        reads.append(f"load {k}")
        return load_valid(self, k, *a, **kw)

    def counted_load(self: Any, k: str) -> Any:
        reads.append(f"load {k}")
        return load(self, k)

    def counted_key(self: Any) -> str:
        reads.append("key")
        return key(self)

    monkeypatch.setattr(sweep.Store, "load_valid", counted_load_valid)
    monkeypatch.setattr(sweep.Store, "load", counted_load)
    monkeypatch.setattr(sweep.RunSpec, "key", counted_key)
    return reads


def test_a_cached_reproduction_reads_no_record_and_writes_the_same_tables(
    folder: Path, tmp_path: Path, record_reads: list[str]
) -> None:
    import json

    out = tmp_path / "out"
    first = experiment.reproduce(folder, out, workers=2, progress=False)
    before = outputs(out)
    cpu_seconds = json.loads((out / "run.json").read_text())["simulation_cpu_seconds"]
    assert any(r.startswith("load") for r in record_reads)
    record_reads.clear()
    again = experiment.reproduce(folder, out, workers=2, progress=False)
    assert record_reads == [], "neither a store key computed nor a record read"
    assert (again.executed, again.cached) == (0, first.executed + first.cached)
    assert outputs(out) == before
    assert cpu_seconds == json.loads((out / "run.json").read_text())["simulation_cpu_seconds"]


def test_derived_values_are_derived_again_from_the_records_when_anything_they_come_from_changes(
    folder: Path, tmp_path: Path, record_reads: list[str]
) -> None:
    import json

    out = tmp_path / "out"
    experiment.reproduce(folder, out, workers=2, progress=False)
    before = outputs(out)
    keys = json.loads((out / "derived-values.json").read_text())["keys"]
    # A record removed from the store is run again; the tables come out the same.
    store = experiment.reproduction.Store(out / "runs")
    store.path(keys[0]).unlink()
    record_reads.clear()
    again = experiment.reproduce(folder, out, workers=2, progress=False)
    assert again.executed == 1 and any(r.startswith("load") for r in record_reads)
    assert outputs(out) == before
    # The filed values edited, or cut short: not trusted, derived again, the same.
    filed = out / "derived-values.json"
    for damaged in (filed.read_text().replace('"runs":', '"runs":1', 1), filed.read_text()[:50]):
        filed.write_text(damaged)
        record_reads.clear()
        assert experiment.reproduce(folder, out, workers=2, progress=False).executed == 0
        assert any(r.startswith("load") for r in record_reads)
        assert outputs(out) == before
    # results.parquet removed: written again from the records.
    (out / "results.parquet").unlink()
    record_reads.clear()
    experiment.reproduce(folder, out, workers=2, progress=False)
    assert any(r.startswith("load") for r in record_reads) and outputs(out) == before
    # Another seed count is another set of runs: derived from its records.
    record_reads.clear()
    experiment.reproduce(folder, out, workers=2, progress=False, seeds=2)
    assert any(r.startswith("load") for r in record_reads)
    assert json.loads((out / "run.json").read_text())["seeds"] == 2


def test_derived_values_of_the_wrong_type_filed_with_their_digest_are_derived_again(
    folder: Path, tmp_path: Path, record_reads: list[str]
) -> None:
    """derived.json is trusted for the bytes of derived-values.json, not for their types: a
    values file edited by hand and its digest filed with it took a string, a dict, a list or
    null where a number or a list is, and the report stopped with an internal error
    (TypeError, ArrowTypeError, KeyError); now such values are derived again from the
    records. A number of the right type is taken as written."""
    import hashlib
    import json

    out = tmp_path / "out"
    experiment.reproduce(folder, out, workers=2, progress=False)
    before = outputs(out)
    filed = out / "derived-values.json"
    good = json.loads(filed.read_text())

    def forge(values: dict[str, Any]) -> None:
        filed.write_text(json.dumps(values))
        manifest = json.loads((out / "derived.json").read_text())
        digest = hashlib.sha256(filed.read_bytes()).hexdigest()
        manifest["outputs"]["runs"]["files"]["derived-values.json"] = digest
        (out / "derived.json").write_text(json.dumps(manifest))

    def changed(path: list[Any], value: Any) -> dict[str, Any]:
        values = json.loads(json.dumps(good))
        at = values
        for step in path[:-1]:
            at = at[step]
        at[path[-1]] = value
        return values

    table = next(iter(good["table_rows"]))
    wrong = [
        (["point_frames", 0, 0, 4], {"a": 1}),
        (["point_frames", 0, 0, 2], [1]),
        (["point_frames", 0, 0, 3], "one"),
        (["point_frames", 0, 0, 1], "no such line"),
        (["point_frames", 0, 0], [1]),
        (["point_frames", 0], 5),
        (["point_frames"], [[{"a": 1}]]),
        (["table_rows", table, 0, "convergence_s"], "slow"),
        (["table_rows", table, 0], {}),
        (["table_rows", table], 5),
        (["table_rows", "no such table"], []),
        (["seeds"], 5),
        (["seeds"], None),
        (["runs"], "sixty"),
        (["simulation_cpu_seconds"], "fast"),
        (["simulation_cpu_seconds"], None),
    ]
    for path, value in wrong:
        forge(changed(path, value))
        record_reads.clear()
        assert experiment.reproduce(folder, out, workers=2, progress=False).executed == 0
        assert any(r.startswith("load") for r in record_reads), path
        assert outputs(out) == before, path
    forge(changed(["simulation_cpu_seconds"], 12345.5))
    record_reads.clear()
    experiment.reproduce(folder, out, workers=2, progress=False)
    assert record_reads == []
    assert json.loads((out / "run.json").read_text())["simulation_cpu_seconds"] == 12345.5


@pytest.mark.parametrize(
    "syntax", ['queue = { type = "red", }', 'queue = {\n  type = "red" }', 'x = "\\e"']
)
def test_a_plan_in_toml_1_1_syntax_is_refused_saying_plans_are_toml_1_0(
    folder: Path, syntax: str
) -> None:
    # Campaign 14: the scenario beside a plan may be TOML 1.1 (the core reads it), the plan
    # is read by tomllib (TOML 1.0); a trailing comma in one of its inline tables was refused
    # in tomllib's words alone ("Invalid initial character for a key part"), as if it were a
    # typing slip, with the scenario in the same folder taking the same line.
    plan = folder / "plan.toml"
    plan.write_text(syntax + "\n" + plan.read_text())
    with pytest.raises(experiment.PlanError, match=r"plan\.toml: .*; plan files are read as "
                       r"TOML 1\.0 \(Python's tomllib\).*docs/scenario\.md"):  # fmt: skip
        experiment.load_plan(folder)


def test_a_plan_saved_with_a_byte_order_mark_is_read_as_the_same_plan(folder: Path) -> None:
    # Campaign 60b: Windows' Notepad saved UTF-8 with a byte order mark until 2019; the
    # scenario beside a plan so saved was read (the core drops the mark), the plan refused
    # as "Invalid statement (at line 1, column 1); plan files are read as TOML 1.0 ...: no
    # TOML 1.1 syntax", which it had none of.
    before = experiment.load_plan(folder)
    plan = folder / "plan.toml"
    plan.write_bytes(b"\xef\xbb\xbf" + plan.read_bytes())
    assert experiment.load_plan(folder) == before


def test_a_plan_in_windows_1252_is_named_as_a_plan_with_the_line_of_its_first_such_byte(
    folder: Path,
) -> None:
    # Campaign 60b: a smart quote pasted from a word processor, saved in Windows-1252, was
    # refused as "not UTF-8 text (byte 0x93 at offset 4021); scenario files are UTF-8 TOML":
    # an offset no editor shows, of a file that is no scenario.
    plan = folder / "plan.toml"
    text = plan.read_text()
    plan.write_bytes((text + "# \u201cour\u201d plan\n").encode("cp1252"))
    line = text.count("\n") + 1
    with pytest.raises(ccsim.ScenarioError, match=(
        rf"plan\.toml: not UTF-8 text \(byte 0x93 at line {line}, offset {len(text) + 2}\); "
        r"plan files are UTF-8 TOML: save it as UTF-8$")):  # fmt: skip
        experiment.load_plan(folder)


@pytest.mark.parametrize(
    ("tail", "said"),
    [("\x00", "the control character U+0000 at line {}, column 1: TOML allows no control "
               "character but a tab"),
     ("# a\rb\n", "a carriage return without its line feed at line {}, column 4: lines end in "
                   "LF or CRLF")],
)  # fmt: skip
def test_a_plan_with_a_control_character_names_it_and_its_line_not_toml_1_1(
    folder: Path, tail: str, said: str
) -> None:
    # Campaign 60b: a NUL left at a plan's end (a copy cut short), or a line ended by CR alone
    # (old Mac OS), was refused in tomllib's words ("Invalid statement (at line 230, column
    # 1)", "Found invalid character '\r'") with a word on TOML 1.1 syntax it had none of.
    plan = folder / "plan.toml"
    text = plan.read_text()
    plan.write_text(text + tail, newline="")
    line = text.count("\n") + 1
    with pytest.raises(experiment.PlanError, match=rf"plan\.toml: {re.escape(said.format(line))}$"):
        experiment.load_plan(folder)


def test_a_papers_folder_whose_name_is_not_utf8_is_named_not_an_internal_error(
    folder: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Campaign 60b: a paper's folder copied from a Latin-1 disk (or named in Hangul and read
    # under LC_ALL=C with PYTHONUTF8=0) stopped `ccsim reproduce ID` and `ccsim explore` with
    # "internal error (TypeError): folder: expected a path (a non-empty str or os.PathLike),
    # not PosixPath": the user typed only the paper's id.
    bad = folder.rename(folder.with_name("t-caf\udce9"))
    monkeypatch.chdir(bad.parent.parent)
    said = ("t-caf\ufffd: the paper's folder's name is not UTF-8 (byte 0xe9); plans are read "
            "from folders named in UTF-8: rename it")  # fmt: skip
    for command, found in ((["reproduce", "t", "--quick", "--out", "out"], bad.parent),
                           (["explore", "--port", "1"], "experiments")):  # fmt: skip
        assert main(command) == 1
        assert capsys.readouterr().err.splitlines() == [f"ccsim: error: {found}/{said}"]
    assert not Path("out").exists()


@pytest.mark.parametrize("damage", ["cut short", "a FIFO"])
def test_a_damaged_record_a_time_series_is_drawn_from_is_run_again_under_filed_values(
    folder: Path, tmp_path: Path, damage: str
) -> None:
    """Campaign 9: with the derived values filed, a time series drawn again (figures.json
    removed) read its runs' records unchecked: one cut short stopped the reproduction with a
    bare JSONDecodeError, one replaced by a FIFO waited for ever. Now the sweep names it and
    runs it again, and everything is derived from the records."""
    import json
    import os

    from ccsim.sweep import CorruptRecordWarning

    out = tmp_path / "out"
    experiment.reproduce(folder, out, workers=2, progress=False)
    before = outputs(out)
    plan = experiment.load_plan(folder)
    runs = experiment.reproduction.plan_runs(plan, False, None)
    keys = json.loads((out / "derived-values.json").read_text())["keys"]
    series = {sf.id for sf in plan.series_figures}
    victims = [keys[i] for i, r in enumerate(runs) if dict(r.tags)["figure"] in series]
    store = experiment.reproduction.Store(out / "runs")
    for key in victims:
        path = store.path(key)
        if damage == "a FIFO":
            path.unlink()
            os.mkfifo(path)
        else:
            path.write_text(path.read_text()[:40])
    (out / "figures.json").unlink()
    with pytest.warns(CorruptRecordWarning, match="damaged run record"):
        again = experiment.reproduce(folder, out, workers=2, progress=False)
    assert again.executed == len(set(victims)) > 0
    assert all(store.path(k).is_file() for k in victims)
    assert outputs(out) == before
    for sf in series:
        assert (out / f"{sf}.png").is_file()


def test_quick_mode_uses_the_quick_points_seeds_and_overrides(folder: Path, tmp_path: Path) -> None:
    out = tmp_path / "quick"
    experiment.reproduce(folder, out, quick=True, workers=2, progress=False)
    points = pd.read_parquet(out / "summary.parquet")
    assert list(points["x"].unique()) == [0.02]
    assert set(points["n"]) == {2}
    runs = pd.read_parquet(out / "results.parquet")
    assert (runs["start_s"] < 10).all()
    assert "quick" in (out / "report.md").read_text()


def test_a_plan_naming_an_unknown_line_is_rejected_with_its_path(folder: Path) -> None:
    plan = folder / "plan.toml"
    plan.write_text(
        plan.read_text().replace(
            'lines = ["sack", "reno"]\n\n[[figures]]\nid = "shares"',
            'lines = ["sack", "cubic"]\n\n[[figures]]\nid = "shares"',
        )
    )
    with pytest.raises(experiment.PlanError, match=r"figures\[0\]\.lines: no line named \"cubic\""):
        experiment.load_plan(folder)


MODEL_LINE = """
[lines.model]
label = "Mathis from f1's own RTT and loss"
set = { "tcp.variant" = "sack" }
[lines.model.metric]
where = { name = "f1" }
column = "mathis(1460, rtt_mean_s, max(retransmit_ratio, 1e-4)) * 8"

"""


def test_a_line_with_its_own_metric_draws_a_model_fed_by_the_same_runs(
    folder: Path, tmp_path: Path
) -> None:
    # Paper 003's Fig. 1: a model's line beside the measured one, computed per seed from the
    # very run the measured line's point comes from (same settings, so no extra simulation).
    plan = folder / "plan.toml"
    without = experiment.reproduce(folder, tmp_path / "without", quick=True, progress=False)
    text = plan.read_text().replace("[lines.reno]", MODEL_LINE + "[lines.reno]")
    text = text.replace(
        'x = { path = "links.bottleneck.loss.rate", values = [0.0, 0.02], quick = [0.02] }\n'
        'lines = ["sack", "reno"]',
        'x = { path = "links.bottleneck.loss.rate", values = [0.0, 0.02], quick = [0.02] }\n'
        'lines = ["sack", "reno", "model"]\ny_scale = "log"',
    )
    assert 'lines = ["sack", "reno", "model"]' in text
    plan.write_text(text)
    out = tmp_path / "out"
    r = experiment.reproduce(folder, out, quick=True, workers=2, progress=False)
    assert r.executed == without.executed, "the model line reuses the sack line's runs"
    runs = pd.read_parquet(out / "results.parquet")
    f1 = runs[(runs["name"] == "f1") & (runs["line"] == "sack") & (runs["figure"] == "loss")]
    f1 = f1.sort_values("seed")
    from ccsim import models

    expected = [
        float(models.mathis(1460, row.rtt_mean_s, max(row.retransmit_ratio, 1e-4))) * 8
        for row in f1.itertuples()
    ]
    points = pd.read_parquet(out / "points.parquet")
    got = points[(points["figure"] == "loss") & (points["line"] == "model")]
    assert list(got.sort_values("seed")["value"]) == pytest.approx(expected, rel=1e-12)
    import matplotlib.image

    assert matplotlib.image.imread(out / "loss.png").shape[0] > 0


def test_a_metric_expression_calls_only_known_functions_with_their_arguments(
    folder: Path,
) -> None:
    plan = folder / "plan.toml"
    text = plan.read_text()
    cases = [
        (
            "mathis(1460, rtt_mean_s)",
            r"lines\.model\.metric\.column: .*mathis takes 3-4 arguments, not 2",
        ),
        ("cube(rtt_mean_s)", r"lines\.model\.metric\.column: .*a call must be one of sqrt, min"),
        ("sqrt(x=rtt_mean_s)", r"a call must be one of .* with positional arguments"),
    ]
    for column, message in cases:
        model = MODEL_LINE.replace(
            "mathis(1460, rtt_mean_s, max(retransmit_ratio, 1e-4)) * 8", column
        )
        plan.write_text(text.replace("[lines.reno]", model + "[lines.reno]"))
        with pytest.raises(experiment.PlanError, match=message):
            experiment.load_plan(folder)
    # A line's own metric is for figures of points: a table cannot use it.
    plan.write_text(
        text.replace("[lines.reno]", MODEL_LINE + "[lines.reno]").replace(
            'id = "fairness"\nlines = ["sack", "reno"]', 'id = "fairness"\nlines = ["model"]'
        )
    )
    with pytest.raises(
        experiment.PlanError, match=r'tables\[0\]\.lines: "model" has its own metric'
    ):
        experiment.load_plan(folder)
    plan.write_text(
        text.replace('lines = ["sack", "reno"]\n', 'lines = ["sack", "reno"]\ny_scale = "ln"\n', 1)
    )
    with pytest.raises(
        experiment.PlanError, match=r'figures\[0\]\.y_scale: "ln" is not one of linear, log'
    ):
        experiment.load_plan(folder)


def _table_claim(**kw: object) -> experiment.Claim:
    # A table claim as a plan reads it: every line it names is asked for.
    c = experiment.Claim("case", "text", None, None, table="case", column="utilization",
                         min_significant_share=1.0)  # fmt: skip
    for k, v in kw.items():
        setattr(c, k, v)
    return c


def test_a_table_claim_shows_each_lines_value_against_the_rule() -> None:
    # Three seeds per line, a little spread around each line's value.
    base = {"hs": (0.93, 0.7, 0.4, 0.1), "fast": (0.41, 0.5, 0.6, 0.1),
            "bic": (0.97, 0.8, 0.2, 0.3)}  # fmt: skip
    rows = []
    for line, (u, j, f1, f4) in base.items():
        for seed, d in enumerate((-0.005, 0.0, 0.005), start=1):
            rows.append({"line": line, "seed": seed, "run": f"{line}{seed}",
                         "utilization": u + d, "jain": j + d, "share_f1": f1 + d,
                         "share_f4": f4 - d})  # fmt: skip
    tables = {"case": pd.DataFrame(rows)}
    summary = pd.DataFrame()
    check = experiment.check_claim
    assert check(_table_claim(lines=["fast"], at_most=0.5), summary, tables).startswith(
        "holds: utilization ≤ 0.5 significantly (95 % CI over 3 seeds) for 1 of 1 lines (fast 0.41"
    )
    # hs is significantly below 0.95, bic above: one line each way.
    verdict = check(_table_claim(lines=["hs", "bic"], at_least=0.95), summary, tables)
    assert verdict.startswith("does not hold: utilization ≥ 0.95 significantly")
    assert "the opposite, significantly: hs 0.93 ± " in verdict
    c = _table_claim(lines=["hs", "bic"], column="share_f1", above="share_f4")
    verdict = check(c, summary, tables)
    assert verdict.startswith("does not hold: share_f1 > share_f4 significantly")
    assert "for 1 of 2 lines (hs 0.4 ± 0.012 vs 0.1)" in verdict
    c = _table_claim(lines=["fast", "bic"], column="jain", below_line="hs")
    assert check(c, summary, tables).startswith("does not hold: jain < hs's 0.7 significantly")
    c = _table_claim(lines=["fast"], column="jain", above_line="bic")
    assert check(c, summary, tables).startswith("contradicted: jain > bic's 0.8 significantly")
    assert check(_table_claim(lines=["hs"], at_least=0.9), summary, {}) == (
        "not judged: no table to compare"
    )


def test_a_table_claim_needs_one_rule_and_known_lines(folder: Path) -> None:
    plan = folder / "plan.toml"
    text = plan.read_text()
    claim = '\n[[claims]]\ntable = "{t}"\ntext = "x"\nlines = ["{line}"]\ncolumn = "jain"\n{rule}\n'
    cases = [
        ("nope", "sack", "at_least = 0.5", r'claims\[\d\]\.table: "nope" is not a table'),
        ("fairness", "cubic", "at_least = 0.5", r'claims\[\d\]\.lines: "cubic" is not a line'),
        ("fairness", "sack", "", r"needs exactly one of at_least, at_most, above"),
        ("fairness", "sack", "at_least = 0.5\nat_most = 0.9", r"needs exactly one of"),
    ]
    for t, line, rule, message in cases:
        plan.write_text(text + claim.format(t=t, line=line, rule=rule))
        with pytest.raises(experiment.PlanError, match=message):
            experiment.load_plan(folder)


def test_experiments_are_found_by_their_id_prefix(folder: Path, tmp_path: Path) -> None:
    assert experiment.find_experiment("t", root=tmp_path) == folder
    with pytest.raises(experiment.PlanError, match="no experiment"):
        experiment.find_experiment("p999", root=tmp_path)


ROOT = Path(__file__).resolve().parents[2]


# Campaign 12 (issue 32): the id was a glob pattern. `ccsim reproduce "$PAPER"` with PAPER
# unset, or `ccsim reproduce '*'`, reproduced m01-dctcp (the first folder by name); "p00[1]"
# found p001; "p00*" stopped with "Invalid pattern: '**' can only be an entire path component".
@pytest.mark.parametrize("name", ["*", "p00[1]", "p?01", "p0*1", "p00*"])
def test_an_experiment_id_is_a_prefix_not_a_glob_pattern(name: str) -> None:
    with pytest.raises(experiment.PlanError, match=f'no experiment "{re.escape(name)}"'):
        experiment.find_experiment(name, root=ROOT)


# Campaign 16 (issue 32): an id that begins several papers' folders reproduced the first by
# name: `ccsim reproduce p00` (or `p`) ran paper 000's plan, a full ATM reproduction, without a
# word about p001-p004.
@pytest.mark.parametrize("name", ["p", "p00", "p0"])
def test_an_id_that_begins_several_papers_folders_is_refused_naming_them(name: str) -> None:
    with pytest.raises(experiment.PlanError) as e:
        experiment.find_experiment(name, root=ROOT)
    assert str(e.value).startswith(f'"{name}" begins the folders of several papers: p000-atm-abr, ')
    assert "p004-sctp-ls" in str(e.value) and "m01" not in str(e.value)


def test_an_id_that_is_a_papers_own_still_finds_its_folder_among_longer_ones(
    tmp_path: Path,
) -> None:
    # "p001" is p001-spack's id, and a prefix of a folder p0010-x's name too.
    for name in ("p001-spack", "p0010-x"):
        (tmp_path / "experiments" / name).mkdir(parents=True)
        (tmp_path / "experiments" / name / "plan.toml").write_text("")
    found = experiment.find_experiment("p001", root=tmp_path)
    assert found == tmp_path / "experiments" / "p001-spack"
    assert experiment.find_experiment("p0010", root=tmp_path).name == "p0010-x"
    assert experiment.find_experiment("p001-spack", root=tmp_path).name == "p001-spack"


def test_an_empty_experiment_id_is_refused_not_taken_for_every_paper(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(ROOT)
    out = tmp_path / "out"
    assert main(["reproduce", "", "--quick", "--out", str(out)]) == 1
    assert capsys.readouterr().err == (
        "ccsim: error: the paper's id is empty; give one, e.g. p001 (ccsim reproduce --list "
        "shows them)\n"
    )
    assert not out.exists()


def test_the_quick_reproduction_of_paper_001_runs_and_reports_every_figure(
    tmp_path: Path,
) -> None:
    folder = experiment.find_experiment("p001", root=ROOT)
    out = tmp_path / "p001"
    r = experiment.reproduce(folder, out, quick=True, workers=2, progress=False)
    report = r.report.read_text()
    plan = experiment.load_plan(folder)
    for fig in plan.figures:
        assert (out / f"{fig.id}.png").exists(), fig.id
        assert f"## {fig.id}:" in report
    points = pd.read_parquet(out / "points.parquet")
    # Every transfer finished: an unfinished one would leave a NaN transfer time.
    assert points["value"].notna().all()
    assert "not checked automatically" not in report
    # A clone of the repository has no shared/ folder: a report must not point there.
    assert "shared/" not in report
    assert "**Paper:** Kyo-hong Jin" in report and "`ccsim reproduce p001 --quick" in report


def test_no_file_a_newcomer_reads_points_into_the_shared_folder() -> None:
    # The papers are cited by their reference; a clone has no shared/ folder to point into.
    files = [ROOT / "README.md"]
    for folder in ("docs", "experiments", "python"):
        files += [p for p in (ROOT / folder).rglob("*") if p.suffix in (".md", ".toml", ".py")]
    assert len(files) > 10
    offenders = [str(p) for p in files if "shared/" in p.read_text(encoding="utf-8")]
    assert offenders == []


def test_the_quick_reproduction_of_paper_002_draws_every_figure_and_table(
    tmp_path: Path,
) -> None:
    folder = experiment.find_experiment("p002", root=ROOT)
    out = tmp_path / "p002"
    # One seed of the quick plan's three: what the pinned numbers are (CI's time is bounded).
    experiment.reproduce(folder, out, quick=True, workers=2, progress=False, seeds=1)
    plan = experiment.load_plan(folder)
    for fig in plan.series_figures:
        assert (out / f"{fig.id}.png").exists(), fig.id
    for table in plan.tables:
        t = pd.read_parquet(out / f"table-{table.id}.parquet").set_index("line")
        assert set(t.index) == set(table.lines)
        assert t["utilization"].between(0.0, 1.0).all()
        assert t["jain"].between(0.25, 1.0).all()
        # The XCP port keeps the bottleneck busy even with reverse traffic on its other
        # direction (a reverse port once rewrote the echoed feedback: 3.6 %).
        if "xcp" in table.lines:
            assert t.loc["xcp", "utilization"] > 0.8, table.id
    _assert_pinned_p002_quick_numbers(out, plan, tmp_path)


# Paper 002's quick numbers, pinned (issue 12): every run is deterministic, so a change in any
# high-speed controller, the web background or the table arithmetic moves one of these. A
# deliberate change rewrites the file from the one the failing test leaves (its path is in the
# message) and says why in the commit.
P002_PINNED = Path(__file__).parent / "pinned" / "p002_quick_tables.csv"
P002_PINNED_COLUMNS = ["utilization", "tested_utilization", "jain", "loss_rate", "rate_cv"]


def _assert_pinned_p002_quick_numbers(out: Path, plan: experiment.Plan, tmp_path: Path) -> None:
    rows = []
    for table in plan.tables:
        t = pd.read_parquet(out / f"table-{table.id}.parquet")
        rows.append(t[["table", "line", "seed", *P002_PINNED_COLUMNS]])
    ours = pd.concat(rows, ignore_index=True).round(6)
    written = tmp_path / "p002_quick_tables.csv"
    ours.to_csv(written, index=False)
    pinned = pd.read_csv(P002_PINNED)
    assert written.read_text() == P002_PINNED.read_text(), (
        f"paper 002's quick tables changed: compare {written} with {P002_PINNED}; "
        f"{len(pinned)} pinned rows, {len(ours)} now"
    )


def test_a_claim_from_one_seed_says_no_significance_can_be_judged() -> None:
    # Issue 10, defect 11: with one seed every CI is NaN, which was read as 0, so the report
    # claimed "non-overlapping 95 % CIs" where no CI exists.
    points = pd.DataFrame(
        {
            "figure": ["f"] * 4,
            "line": ["a", "a", "b", "b"],
            "x": [1, 2, 1, 2],
            "seed": [1] * 4,
            "value": [10.0, 10.0, 11.0, 20.0],
        }
    )
    lower = experiment.check_claim(experiment.Claim("f", "a below b", "a", "b"), points)
    assert lower == (
        "not judged: a is lower at 2 of 2 points (no significance can be judged: fewer than 2 "
        "seeds per point, so no 95 % CIs)"
    )
    similar = experiment.check_claim(experiment.Claim("f", "same", "a", "b", "similar"), points)
    assert similar.startswith("not judged: no significance can be judged")
    # A point with a second seed among points without one: only it is judged.
    extra = pd.DataFrame(
        {
            "figure": ["f"] * 2,
            "line": ["a", "b"],
            "x": [1, 1],
            "seed": [2, 2],
            "value": [10.0, 11.01],
        }
    )
    lower = experiment.check_claim(
        experiment.Claim("f", "a below b", "a", "b"), pd.concat([points, extra])
    )
    assert lower.endswith("significantly higher at none; 1 point without a CI")
    assert lower.startswith("holds: a is lower at 2 of 2 points, significantly (paired 95 % CI) "
                            "at 1 of 1 (100 %")  # fmt: skip


def test_a_quick_reproduction_with_one_seed_claims_no_significance(
    folder: Path, tmp_path: Path
) -> None:
    r = experiment.reproduce(folder, tmp_path / "o", quick=True, seeds=1, progress=False)
    report = r.report.read_text()
    assert "significantly (paired" not in report
    assert "no significance can be judged" in report


def _edit_plan(folder: Path, old: str, new: str) -> None:
    plan = folder / "plan.toml"
    text = plan.read_text()
    assert old in text, old
    plan.write_text(text.replace(old, new, 1))


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        # Issue 10, defect 12: a duplicate id pooled the seeds of two figures.
        (
            'id = "shares"',
            'id = "loss"',
            r'figures\[1\]\.id: "loss" is already the id of figures\[0\]',
        ),
        (
            'id = "fairness"',
            'id = "util"',
            r'tables\[0\]\.id: "util" is already the id of figures\[2\]',
        ),
        ('figure = "loss"', 'figure = "los"', r'claims\[0\]\.figure: "los" is not a figure'),
        (
            'lower = "reno"',
            'lower = "cubic"',
            r'claims\[0\]\.lower: "cubic" is not a line of figure loss',
        ),
        ("seeds = 4", "seeds = 0", r"seeds: 0 is not a count of seeds"),
        (
            'scenario = "scenario.toml"',
            'scenario = "nope.toml"',
            r"scenario: .*nope\.toml is not a file",
        ),
    ],
)
def test_a_plan_with_a_bad_key_is_refused_when_it_is_read(
    folder: Path, old: str, new: str, message: str
) -> None:
    _edit_plan(folder, old, new)
    with pytest.raises(experiment.PlanError, match=message):
        experiment.load_plan(folder)


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        # A filter matching nothing read "does not hold: 0 of 2"; a missing column was a
        # KeyError after every simulation had run.
        (
            'where = { name = "f1" }',
            'where = { name = "f9" }',
            r"metric\.where: .*matches no row of flows",
        ),
        (
            'column = "goodput_bps"',
            'column = "goodput"',
            r'metric\.column: "goodput" is not a column of flows',
        ),
        (
            'where = { name = "f1" }',
            'where = { nom = "f1" }',
            r'metric\.where\.nom: "nom" is not a column',
        ),
        (
            'path = "links.bottleneck.loss.rate"',
            'path = "links.bottlenek.loss.rate"',
            r"figures\[0\] \(line sack, x = 0\.0\): links",
        ),
        (
            'flows = ["f1", "f2"]\nlink',
            'flows = ["f1", "f3"]\nlink',
            r'figures\[1\]\.flows: no flow "f3"',
        ),
        (
            'link = "bottleneck:a_to_b"\nfrom_s',
            'link = "bottleneck:up"\nfrom_s',
            r'tables\[0\]\.link: no link direction "bottleneck:up"',
        ),
        (
            'column = "jain"',
            'column = "fairness"',
            r'claims\[1\]\.column: "fairness" is not a column of table fairness',
        ),
    ],
)
def test_a_plan_is_checked_against_the_scenario_before_the_first_run(
    folder: Path, tmp_path: Path, old: str, new: str, message: str
) -> None:
    _edit_plan(folder, old, new)
    out = tmp_path / "out"
    with pytest.raises(experiment.PlanError, match=message):
        experiment.reproduce(folder, out, workers=1, progress=False)
    assert not (out / "runs").exists(), "nothing ran"


def test_a_flow_series_without_a_link_draws_goodput_in_mbits_and_with_one_shares() -> None:
    from ccsim.experiment.tables import flow_series_values

    # 1.25 MB delivered per 1 s interval: 10 Mbit/s, half of a 20 Mbit/s link.
    rec = {
        "series": {
            "time_s": [1.0, 2.0],
            "kind": ["flow", "flow"],
            "name": ["assoc", "assoc"],
            "metric": ["delivered_bytes", "delivered_bytes"],
            "value": [1.25e6, 2.5e6],
        },
        "links": {"link": ["m0"], "direction": ["a_to_b"], "rate_bps": [20e6]},
    }
    mbps, label = flow_series_values(rec, ["assoc"], "")
    assert label == "goodput (Mbit/s)" and list(mbps["assoc"]) == [10.0, 10.0]
    share, label = flow_series_values(rec, ["assoc"], "m0:a_to_b")
    assert label == "share of the bottleneck" and list(share["assoc"]) == [0.5, 0.5]


def test_a_flow_series_figure_may_leave_out_its_link_but_a_link_series_may_not(
    folder: Path,
) -> None:
    plan = (folder / "plan.toml").read_text()
    no_link = plan.replace(
        'flows = ["f1", "f2"]\nlink = "bottleneck:a_to_b"', 'flows = ["f1", "f2"]', 1
    )
    (folder / "plan.toml").write_text(no_link)
    shares = next(f for f in experiment.load_plan(folder).series_figures if f.id == "shares")
    assert shares.link == ""
    (folder / "plan.toml").write_text(
        plan.replace(
            'kind = "link_series"\nlines = ["sack", "reno"]\nlink = "bottleneck:a_to_b"',
            'kind = "link_series"\nlines = ["sack", "reno"]',
        )
    )
    with pytest.raises(experiment.PlanError, match=r"figures\[2\]\.link: missing"):
        experiment.load_plan(folder)


def test_the_plan_stored_with_the_results_names_a_scenario_from_another_folder_by_its_name(
    tmp_path: Path,
) -> None:
    from ccsim.experiment.reproduction import store_plan

    (tmp_path / "common").mkdir()
    (tmp_path / "common" / "base.toml").write_text(SCENARIO)
    folder = tmp_path / "experiments" / "t-test"
    folder.mkdir(parents=True)
    (folder / "plan.toml").write_text(
        PLAN.replace('scenario = "scenario.toml"', 'scenario = "../../common/base.toml"')
    )
    stored = store_plan(folder, tmp_path / "results")
    assert stored == tmp_path / "results" / "plan"
    assert sorted(p.name for p in stored.iterdir()) == ["base.toml", "plan.toml"]
    assert 'scenario = "base.toml"' in (stored / "plan.toml").read_text()
    # The copy is a plan that loads by itself, the same plan as the original.
    again, original = experiment.load_plan(stored), experiment.load_plan(folder)
    assert again.scenario_text == original.scenario_text == SCENARIO
    assert again.figures == original.figures and again.claims == original.claims


def test_a_plans_scenario_that_is_not_toml_is_named_not_blamed_on_a_figures_title(
    folder: Path,
) -> None:
    # The scenario was first parsed to fill in the first figure's title, so the error said
    # "figures[0].title: TOML syntax error", and the site named plan.toml as the damaged file.
    (folder / "scenario.toml").write_text('seed = 1\nduration = "10s"\n[nodes\n')
    with pytest.raises(experiment.PlanError) as raised:
        experiment.load_plan(folder)
    message = str(raised.value)
    assert message.startswith(f"scenario: {folder / 'scenario.toml'}: TOML syntax error at line 3")
    assert "figures[" not in message


def test_the_python_api_takes_a_str_wherever_it_takes_a_path(folder: Path, tmp_path: Path) -> None:
    # Campaign 2, Part A: load_plan("experiments/p001-spack") raised TypeError (str / str).
    plan = experiment.load_plan(str(folder))
    assert plan.id == "t" and plan.folder == folder
    assert experiment.find_experiment("t", root=str(tmp_path)) == folder
    out = tmp_path / "out"
    r = experiment.reproduce(str(folder), str(out), quick=True, seeds=1, progress=False)
    assert r.report == out / "report.md" and (out / "loss.png").exists()
