# SPDX-License-Identifier: MIT
"""A plan checked against its scenario before anything runs (``check_plan``).

Apart from ``plan.py`` so that reading a plan needs neither the summary tables' code
(``tables.py``, which reads plan items) nor a simulation: a check builds short probe runs of
the core.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ccsim import _core
from ccsim.sweep import _execute_one

from .arguments import BOOL, arguments, of
from .plan import (
    PLACEHOLDER,
    RUN_NAMES,
    Metric,
    Plan,
    PlanError,
    SeriesFigure,
    SummaryTable,
    grid_overrides,
    line_metric,
    metric_columns,
    quick_overrides,
    resolved_scenario,
    resolved_value,
    where_matches,
    x_overrides,
)
from .tables import table_row

#: Stops a probe run at its first event: enough for the core to build the network and return
#: every table with a row per flow and link direction, which is all a plan check reads.
_PROBE = "limits.max_events=1"


def _probe(plan: Plan, overrides: Sequence[str], where: str) -> dict[str, Any]:
    """The record of a run of ``overrides`` stopped at once; a scenario error names ``where``."""
    try:
        return _execute_one(plan.scenario_text, [*overrides, _PROBE], 1)
    except _core.ScenarioError as e:
        raise PlanError(f"{where}: {e}") from None


def _rows(record: dict[str, Any], table: str) -> list[dict[str, Any]]:
    columns = record[table]
    n = len(next(iter(columns.values()), ()))
    return [{name: col[i] for name, col in columns.items()} for i in range(n)]


def _check_link_and_flows(record: dict[str, Any], item: SeriesFigure | SummaryTable) -> None:
    name, _, direction = item.link.partition(":")
    links = {(r["link"], r["direction"]) for r in _rows(record, "links")}
    # A flow_series may name no link (goodput in Mbit/s); every other item needs one.
    if item.link and (name, direction or "a_to_b") not in links:
        known = ", ".join(sorted(f"{a}:{b}" for a, b in links))
        raise PlanError(f'{item.origin}.link: no link direction "{item.link}"; there are {known}')
    names = [r["name"] for r in _rows(record, "flows")]
    for flow in item.flows:
        if flow not in names:
            raise PlanError(
                f'{item.origin}.flows: no flow "{flow}" in the scenario; flows are '
                f"{', '.join(names)}"
            )


def _check_metric(record: dict[str, Any], m: Metric, where: str) -> None:
    """A metric's columns and filter against a probe run's table."""
    columns = record[m.table]
    used = [("column", c) for c in metric_columns(m.column) if c not in RUN_NAMES]
    for key, col in used + [(f"where.{c}", c) for c in m.where]:
        if col not in columns:
            raise PlanError(
                f'{m.origin}.{key}: "{col}" is not a column of {m.table}; columns are '
                f"{', '.join(columns)}"
            )
    rows = _rows(record, m.table)
    if not any(where_matches(m.where, r) for r in rows):
        if m.origin.endswith(".link"):  # a queue_delay figure's filter, made from its `link`
            known = ", ".join(sorted(f"{r['link']}:{r['direction']}" for r in rows))
            asked = f"{m.where['link']}:{m.where['direction']}"
            raise PlanError(f'{m.origin}: no link direction "{asked}"; there are {known}')
        raise PlanError(f"{m.origin}.where: {m.where} matches no row of {m.table} in {where}")


@arguments(plan=of(Plan), quick=BOOL)
def check_plan(plan: Plan, quick: bool = False) -> None:
    """Check everything a plan refers to against the scenario before anything runs, so that a
    mistake is one error naming its key and not a KeyError after every simulation.

    Every run's overrides (line, figure, x value, quick mode) must resolve; a figure's metric
    column and its filter's columns must be columns of the table, and the filter must match a
    row; a time-series figure's or a table's link and flows must exist; a table claim's columns
    must be columns of the summary table. The columns are not listed here: they are read from
    short probe runs of the core (stopped at their first event), one per figure and line, and
    the summary columns from :func:`table_row` applied to a probe, so they cannot drift from
    what a run produces. An assumption's ``${path}`` must name a key of the resolved scenario.
    """
    _check_placeholders(plan, quick)
    _check_assumptions_against_items(plan)
    for fig in plan.figures:
        extra = quick_overrides(plan, fig, quick)
        for lid in fig.lines:
            base = [*fig.overrides, *plan.lines[lid].overrides]
            xs = fig.x_quick if quick else fig.x_values
            for x in xs:
                ov = [*base, *x_overrides(fig, x), *extra]
                try:
                    _core.validate(plan.scenario_text, ov, 1)
                except _core.ScenarioError as e:
                    raise PlanError(f"{fig.origin} (line {lid}, x = {x}): {e}") from None
            where = f"{fig.origin} (line {lid})"
            record = _probe(plan, [*base, *x_overrides(fig, xs[0]), *extra], where)
            _check_metric(record, line_metric(plan, fig, lid), where)
    for grid in plan.grids:
        extra = quick_overrides(plan, grid, quick)
        rows = [r for r in grid.rows if r.id in grid.quick_rows] if quick else grid.rows
        for lid in grid.lines:
            for row in rows:
                ov = grid_overrides(plan, grid, lid, row, extra)
                try:
                    _core.validate(plan.scenario_text, ov, 1)
                except _core.ScenarioError as e:
                    raise PlanError(f"{grid.origin} (line {lid}, row {row.id}): {e}") from None
            where = f"{grid.origin} (line {lid}, row {rows[0].id})"
            record = _probe(plan, grid_overrides(plan, grid, lid, rows[0], extra), where)
            for m in grid.metrics:
                _check_metric(record, m, where)
    for item in [*plan.series_figures, *plan.tables]:
        extra = quick_overrides(plan, item, quick)
        for lid in item.lines:
            where = f"{item.origin} (line {lid})"
            record = _probe(plan, [*item.overrides, *plan.lines[lid].overrides, *extra], where)
            _check_link_and_flows(record, item)
            if isinstance(item, SummaryTable):
                summary_columns = set(table_row(record, item))
                for _line, col in item.paper.values if item.paper is not None else []:
                    if col not in summary_columns:
                        raise PlanError(
                            f'{item.paper.origin}.values.{_line}.{col}: "{col}" is not a column '
                            f"of table {item.id}; columns are "
                            f"{', '.join(sorted(summary_columns))}"
                        )
                for c in plan.claims:
                    if c.table != item.id:
                        continue
                    for key in ("column", "above"):
                        col = getattr(c, key)
                        if col is not None and col not in summary_columns:
                            raise PlanError(
                                f'{c.origin}.{key}: "{col}" is not a column of table {item.id}; '
                                f"columns are {', '.join(sorted(summary_columns))}"
                            )


#: An assumption saying a figure or table of the paper is not drawn: "Fig. 5 is not drawn".
_NOT_DRAWN = re.compile(
    r"\b(Figs?\.|Tables?)\s*(\d+)\b[^.;]{0,80}?\b(?:is|are)\s+not\s+(?:drawn|reproduced|run)\b"
)


def _check_assumptions_against_items(plan: Plan) -> None:
    """An assumption may not say that a figure or table of the paper is left out while the plan
    draws it (issue 27: paper 001's assumptions said Fig. 5 was not drawn beside its figure)."""
    titles = [(f.id, f.title) for f in [*plan.figures, *plan.series_figures, *plan.tables]]
    titles += [(g.id, g.title) for g in plan.grids]
    for i, text in enumerate(plan.assumptions):
        for m in _NOT_DRAWN.finditer(text):
            word = "Fig" if m.group(1).startswith("Fig") else "Table"
            num = m.group(2)
            named = re.compile(rf"^{word}s?\.?\s*{num}\b")
            for item_id, title in titles:
                if named.match(title):
                    raise PlanError(f"assumptions[{i}].text says {m.group(1)} {num} is not drawn, "
                                    f"but {item_id} draws it (its title: {title!r})")  # fmt: skip


def _check_placeholders(plan: Plan, quick: bool) -> None:
    """Every ``${path}`` of an assumption names a key of the scenario as resolved."""
    if not any("${" in a for a in plan.assumptions):
        return
    resolved = resolved_scenario(plan, quick)
    for i, text in enumerate(plan.assumptions):
        for m in PLACEHOLDER.finditer(text):
            try:
                resolved_value(resolved, m.group(1))
            except KeyError:
                raise PlanError(f"assumptions[{i}].text: ${{{m.group(1)}}} is not a key of the "
                                "resolved scenario") from None  # fmt: skip
