# SPDX-License-Identifier: MIT
"""The runs of a plan: one per (figure or table, line, x, seed), and the values they give."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from typing import Any

import pandas as pd

from ccsim.scenario import check_run_count
from ccsim.sweep import RunSpec

from .arguments import BOOL, COUNT, NONE, RECORDS, TEXT, arguments, of
from .plan import (
    RUN_NAMES,
    Metric,
    Plan,
    grid_overrides,
    metric_value,
    quick_overrides,
    where_matches,
    x_overrides,
)


@arguments(plan=of(Plan), quick=BOOL, seeds=COUNT | NONE)
def plan_runs(plan: Plan, quick: bool, seeds: int | None = None) -> list[RunSpec]:
    n = seeds if seeds is not None else (plan.quick_seeds if quick else plan.seeds)
    # More seeds than a sweep holds is refused before their ranges are listed: 2**70 was an
    # OverflowError from len(range(...)) (the API contract test, issue 32).
    check_run_count(n, "the reproduction")
    # Each point's overrides, tags and seeds first: their count is checked before a run is
    # listed (a plan's or --seeds' count a few digits too long would exhaust memory).
    points: list[tuple[tuple[str, ...], tuple[tuple[str, Any], ...], Sequence[int]]] = []
    for fig in plan.figures:
        extra = tuple(quick_overrides(plan, fig, quick))
        xs = fig.x_quick if quick else fig.x_values
        for lid in fig.lines:
            line = plan.lines[lid]
            for x in xs:
                ov = (*fig.overrides, *line.overrides, *x_overrides(fig, x), *extra)
                points.append((ov, (("figure", fig.id), ("line", lid), ("x", x)), range(1, n + 1)))
    # Grid tables: a point per (row, line, seed), tagged with the row's id as x. A cell's run
    # resolves to the same scenario as a figure's point with the same settings, so the two
    # share a store key and the sweep runs it once.
    for grid in plan.grids:
        extra = tuple(quick_overrides(plan, grid, quick))
        rows = [r for r in grid.rows if r.id in grid.quick_rows] if quick else grid.rows
        for lid in grid.lines:
            for row in rows:
                ov = tuple(grid_overrides(plan, grid, lid, row, extra))
                tags = (("figure", grid.id), ("line", lid), ("x", row.id))
                points.append((ov, tags, range(1, n + 1)))
    # Time-series figures and tables: one run per line and seed; identical runs share a key.
    for item in [*plan.series_figures, *plan.tables]:
        extra = tuple(quick_overrides(plan, item, quick))
        for lid in item.lines:
            ov = (*item.overrides, *plan.lines[lid].overrides, *extra)
            seeds_of_item = (
                [item.seed] if getattr(item, "kind", "") == "packet_trace" else range(1, n + 1)
            )
            points.append((ov, (("figure", item.id), ("line", lid), ("x", None)), seeds_of_item))
    check_run_count(sum(len(s) for _, _, s in points), "the reproduction")
    return [RunSpec(plan.scenario_text, ov, s, tags) for ov, tags, ss in points for s in ss]


def record_value(rec: dict[str, Any], metric: Metric) -> float:
    """A metric's value in one run record: the column (or arithmetic on columns) of the one row
    matching ``where``, or, with ``aggregate``, of every matching row's columns summed or
    averaged first; the expression may also read the run's own :data:`RUN_NAMES`. NaN when no
    row matches. Read from the record's column lists directly (a DataFrame per record costs
    milliseconds)."""
    tbl = rec[metric.table]
    n = len(next(iter(tbl.values()), ()))
    names = list(tbl)
    summary = rec.get("summary", {})
    run = {k: summary[k] for k in RUN_NAMES if k in summary and k not in tbl}

    def row(i: int) -> dict[str, Any]:
        return {**{k: tbl[k][i] for k in names}, **run}

    if metric.aggregate is None:
        where = [(tbl.get(col), val) for col, val in metric.where.items()]
        if any(c is None for c, _ in where):
            return math.nan
        hit = next((i for i in range(n) if all(c[i] == v for c, v in where)), None)  # type: ignore[index]
        if hit is None:
            return math.nan
        if metric.column in tbl:
            v = tbl[metric.column][hit]
            return math.nan if v is None else float(v)
        return metric_value(metric.column, row(hit))
    hits = [i for i in range(n) if where_matches(metric.where, row(i))]
    if not hits:
        return math.nan
    combined: dict[str, Any] = {}
    for k in names:
        vals = [tbl[k][i] for i in hits]
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in vals):
            total = float(sum(vals))
            combined[k] = total / len(vals) if metric.aggregate == "mean" else total
    return metric_value(metric.column, {**combined, **run})


#: The summary fields that differ between copies of one run: its seed and its wall time.
_NOT_OF_THE_RUN = ("seed", "wall_seconds")


def run_fingerprint(rec: dict[str, Any]) -> str:
    """A short hash of what a run produced (its summary but for the seed and the wall time,
    its flows and links tables): two seeds of a scenario with nothing random in it give the
    same fingerprint, and so count as one sample, not two (docs/experiments.md)."""
    summary = {k: v for k, v in rec.get("summary", {}).items() if k not in _NOT_OF_THE_RUN}
    body = json.dumps([summary, rec.get("flows", {}), rec.get("links", {})], sort_keys=True,
                      default=str)  # fmt: skip
    return hashlib.sha1(body.encode()).hexdigest()[:16]


@arguments(records=RECORDS, metric=of(Metric), figure=TEXT | NONE)
def point_values(records: list[dict[str, Any]], metric: Metric, figure: str | None = None
                 ) -> pd.DataFrame:  # fmt: skip
    """One value per record (see :func:`record_value`), tagged with its figure (or ``figure``:
    a grid table's cells carry "<table>.<metric>"), line, x and seed, with the run's
    fingerprint (:func:`run_fingerprint`) in ``run``."""
    return points_frame(point_rows(records, metric, figure))


def point_rows(records: list[dict[str, Any]], metric: Metric, figure: str | None = None
               ) -> list[list[Any]]:  # fmt: skip
    """The rows of :func:`point_values`, each the values of ``POINT_COLUMNS`` (what a
    reproduction files to skip the records next time, ``derived.py``)."""
    rows = []
    for rec in records:
        tags = rec["tags"]
        sim = float(rec.get("summary", {}).get("sim_seconds", math.nan))
        rows.append([figure or tags["figure"], tags["line"], tags["x"], rec["seed"],
                     record_value(rec, metric), run_fingerprint(rec), sim])  # fmt: skip
    return rows


def points_frame(rows: list[list[Any]]) -> pd.DataFrame:
    """The points frame of :func:`point_rows`' rows."""
    return pd.DataFrame(rows, columns=POINT_COLUMNS)


#: The columns of a plan's points (points.parquet): one value per run.
POINT_COLUMNS = ["figure", "line", "x", "seed", "value", "run", "sim_seconds"]
