# SPDX-License-Identifier: MIT
"""The runs of a plan: one per (figure or table, line, x, seed), and the values they give."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from ccsim.sweep import RunSpec

from .plan import Metric, Plan, metric_value, quick_overrides, x_overrides


def plan_runs(plan: Plan, quick: bool, seeds: int | None = None) -> list[RunSpec]:
    n = seeds if seeds is not None else (plan.quick_seeds if quick else plan.seeds)
    runs = []
    for fig in plan.figures:
        extra = tuple(quick_overrides(plan, fig, quick))
        xs = fig.x_quick if quick else fig.x_values
        for lid in fig.lines:
            line = plan.lines[lid]
            for x in xs:
                ov = (*fig.overrides, *line.overrides, *x_overrides(fig, x), *extra)
                tags = (("figure", fig.id), ("line", lid), ("x", x))
                for s in range(1, n + 1):
                    runs.append(RunSpec(plan.scenario_text, ov, s, tags))
    # Time-series figures and tables: one run per line and seed; identical runs share a key.
    for item in [*plan.series_figures, *plan.tables]:
        extra = tuple(quick_overrides(plan, item, quick))
        for lid in item.lines:
            ov = (*item.overrides, *plan.lines[lid].overrides, *extra)
            seeds_of_item = (
                [item.seed] if getattr(item, "kind", "") == "packet_trace" else range(1, n + 1)
            )
            for s in seeds_of_item:
                runs.append(
                    RunSpec(
                        plan.scenario_text, ov, s, (("figure", item.id), ("line", lid), ("x", None))
                    )
                )
    return runs


def point_values(records: list[dict[str, Any]], metric: Metric) -> pd.DataFrame:
    """One value per record: the metric column of the (single) row matching ``where``. Read
    from the record's column lists directly (a DataFrame per record costs milliseconds)."""
    rows = []
    for rec in records:
        tbl = rec[metric.table]
        where = [(tbl[col], val) for col, val in metric.where.items()]
        n = len(next(iter(tbl.values()), ()))
        hit = next((i for i in range(n) if all(c[i] == v for c, v in where)), None)
        if hit is None:
            value = math.nan
        elif metric.column in tbl:
            value = math.nan if tbl[metric.column][hit] is None else float(tbl[metric.column][hit])
        else:
            value = metric_value(metric.column, {k: c[hit] for k, c in tbl.items()})
        tags = rec["tags"]
        rows.append({"figure": tags["figure"], "line": tags["line"], "x": tags["x"],
                     "seed": rec["seed"], "value": value})  # fmt: skip
    return pd.DataFrame(rows)
