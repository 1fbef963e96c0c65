# SPDX-License-Identifier: MIT
"""What a reproduction derives from its runs' records, kept beside its output so that a re-run
over the same runs reads no record.

A cached ``ccsim reproduce p001`` (7,654 runs, every one in the store) spent most of its time
before the first figure: computing each run's store key (the core resolves every scenario),
reading and checking 7,654 JSON records, and hashing each run's tables for its fingerprint,
only to compute the same points again (issue 33). The records are a function of their runs
(the simulator is deterministic and the store key hashes the engine), and the points, table
rows and counts are a function of the records and the plan. So a reproduction files, beside
its figures:

- ``derived-values.json``: each run's store key, the rows of every points frame and summary
  table, and the counts ``run.json`` reports (seeds, runs, the simulations' CPU time);
- ``results.parquet``, the flows of every run;

in the manifest ``derived.json`` (:class:`ccsim.experiment.drawn.Manifest`), under the hash of
everything they come from: the plan, each run's scenario text, overrides, seed and tags, the
record format, and :func:`ccsim.experiment.drawn.code_version` (the package's sources and the
core's engine). A re-run whose inputs hash is the one filed, whose two files have the bytes
filed, and whose runs are all in the store takes the values from the file and reads no record.
Anything else (a changed plan, scenario or seed count, another build, a file edited or removed,
a record missing from the store) derives everything again from the records, as before.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from ccsim.sweep import RECORD_VERSION, RunSpec, Store

from .drawn import Manifest, inputs_digest
from .plan import Plan

#: The manifest of the derived values, in a reproduction's folder.
DERIVED_MANIFEST = "derived.json"
#: The values themselves.
DERIVED_FILE = "derived-values.json"
#: The item under which the two files are filed in the manifest.
ITEM = "runs"
#: The format of ``derived-values.json``; another version is derived again.
DERIVED_VERSION = 1


@dataclass
class Derived:
    """What a reproduction needs of its records beyond its figures' drawing."""

    #: The store key of each run, in the order of the plan's runs.
    keys: list[str]
    #: The rows of each points frame (one per figure line and grid metric, in plan order),
    #: each row the values of ``POINT_COLUMNS``.
    point_frames: list[list[list[Any]]]
    #: Each summary table's rows (``table``, ``line``, ``seed``, ``run`` and the table's
    #: measures), in record order.
    table_rows: dict[str, list[dict[str, Any]]]
    #: The distinct seeds of the records, how many records, and the sum of their
    #: simulations' wall seconds (for ``run.json``).
    seeds: list[int]
    runs: int
    simulation_cpu_seconds: float


def runs_digest(plan: Plan, runs: list[RunSpec]) -> str:
    """The hash of everything the derived values come from (module docs). Each distinct
    scenario text is hashed once: a plan's runs share a handful of texts."""
    texts: dict[int, str] = {}
    h = hashlib.sha256(f"derived {DERIVED_VERSION} record {RECORD_VERSION}\n".encode())
    h.update(repr(plan).encode())
    for r in runs:
        t = texts.get(id(r.text))
        if t is None:
            t = texts[id(r.text)] = hashlib.sha256(r.text.encode()).hexdigest()
        h.update(repr((t, r.overrides, r.seed, r.tags)).encode())
    return inputs_digest("derived", h.hexdigest())


def load(out: Path, manifest: Manifest, inputs: str, store: Store, plan: Plan,
         nruns: int) -> Derived | None:  # fmt: skip
    """The derived values filed in ``out`` for ``inputs``, or None when they must be derived
    again (module docs). ``nruns``: how many runs the plan has."""
    if not manifest.up_to_date(ITEM, inputs):
        return None
    try:
        data = json.loads((out / DERIVED_FILE).read_text(encoding="utf-8"))
        d = Derived(**{f.name: data[f.name] for f in fields(Derived)})
    except (OSError, ValueError, KeyError, TypeError):
        d = None
    usable = (
        d is not None
        and data.get("version") == DERIVED_VERSION
        and _well_formed(d, plan, nruns)
        # A record removed from the store (to run it again) is a run to make: the sweep
        # decides, from the records.
        and store.has_all(d.keys)
    )
    if not usable:
        manifest.new.pop(ITEM, None)
        return None
    return d


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _well_formed(d: Derived, plan: Plan, nruns: int) -> bool:
    """Whether ``d`` has the shape :func:`ccsim.experiment.reproduction.derive` gives it for
    ``plan``: a values file whose digest was filed by hand in the manifest (the manifest is
    trusted for the bytes, not for their types) may hold anything JSON can, and a value of
    the wrong type or a frame of another figure would stop the report with a traceback. Such
    values are derived again from the records; numbers of the right type are taken as
    written."""
    if not (isinstance(d.keys, list) and len(d.keys) == nruns
            and all(isinstance(k, str) for k in d.keys)):  # fmt: skip
        return False
    # One frame per figure line and grid metric, in plan order, each row of its figure.
    frames: list[tuple[str, set[str]]] = []
    for fig in plan.figures:
        frames += [(fig.id, {lid}) for lid in fig.lines]
    for grid in plan.grids:
        frames += [(grid.cell_id(m), set(grid.lines)) for m in grid.metrics]
    if not isinstance(d.point_frames, list) or len(d.point_frames) != len(frames):
        return False
    for rows, (figure, lines) in zip(d.point_frames, frames):
        if not isinstance(rows, list):
            return False
        for row in rows:
            if not (isinstance(row, list) and len(row) == 7):
                return False
            fig, line, x, seed, value, run, sim = row
            if not (fig == figure and line in lines and isinstance(run, str)
                    and (x is None or isinstance(x, str) or _number(x))
                    and isinstance(seed, int) and not isinstance(seed, bool)
                    and _number(value) and _number(sim)):  # fmt: skip
                return False
    tables = {t.id for t in plan.tables}
    if not (isinstance(d.table_rows, dict) and set(d.table_rows) <= tables):
        return False
    for tid, rows in d.table_rows.items():
        if not isinstance(rows, list):
            return False
        # Every row of a table has the columns of its first (tables.line_summary reads them
        # all), ``shares`` as text and each measure a number.
        columns = set(rows[0]) if rows and isinstance(rows[0], dict) else set()
        for row in rows:
            if not (isinstance(row, dict) and set(row) == columns
                    and {"table", "line", "seed", "run", "shares", "convergence_s"} <= columns
                    and row["table"] == tid
                    and isinstance(row["line"], str) and isinstance(row["run"], str)
                    and isinstance(row["seed"], int) and not isinstance(row["seed"], bool)
                    and isinstance(row["shares"], str)
                    and all(_number(v) for k, v in row.items()
                            if k not in ("table", "line", "seed", "run", "shares"))):  # fmt: skip
                return False
    return (isinstance(d.seeds, list) and all(isinstance(s, int) and not isinstance(s, bool)
                                              for s in d.seeds)
            and isinstance(d.runs, int) and not isinstance(d.runs, bool) and d.runs >= 0
            and _number(d.simulation_cpu_seconds))  # fmt: skip


def save(stage: Path, manifest: Manifest, inputs: str, d: Derived, results: Path) -> None:
    """File ``d`` in ``stage`` beside ``results`` (results.parquet, already written) under
    ``inputs``."""
    body = {"version": DERIVED_VERSION, **asdict(d)}
    path = stage / DERIVED_FILE
    from ccsim.result import naming_the_file

    # Floats as Python writes them (repr: read back bit for bit), NaN as NaN.
    with naming_the_file(path):  # a write's error names no file (campaign 53, issue 32)
        path.write_text(json.dumps(body, separators=(",", ":"), default=_plain) + "\n",
                        encoding="utf-8")  # fmt: skip
    manifest.drew(ITEM, inputs, [path, results])


def _plain(value: Any) -> Any:
    """A NumPy scalar as the Python number it is (json writes neither int64 nor bool_)."""
    item = getattr(value, "item", None)
    if callable(item):
        v = item()
        if isinstance(v, (int, float, bool, str)) or v is None:
            return v
    raise TypeError(f"a derived value of type {type(value).__name__} cannot be filed")


def simulation_cpu_seconds(records: list[dict[str, Any]]) -> float:
    """The sum of the records' simulation wall seconds, as ``run.json`` reports it."""
    return sum(float(r["summary"].get("wall_seconds", 0.0)) for r in records)
