# SPDX-License-Identifier: MIT
"""The paper's claims checked against our points and tables, each on one verdict scale.

Every claim is judged at several points and gets one verdict of
:mod:`ccsim.experiment.verdicts` (holds, partly holds, does not hold, contradicted, not judged)
from how many points are significant in the claimed direction and how many in the opposite
one. A point is judged only when it has independent replicates: at least two runs that differ
(copies of one run, which a scenario without randomness gives for every seed, are one sample:
"deterministic: n identical runs").

- ``lower`` / ``higher`` on a figure: lines A and B paired by seed at each x (the same seed
  gives both the same random draws), the mean difference and its 95 % interval
  (:func:`ccsim.experiment.stats.compare_lines`). A ``trend`` adds the regression slope of the
  gap against x; the claim holds only when both parts do.
- ``similar``: two one-sided tests within ``± margin`` of B's mean at each x; the opposite is a
  difference whose 95 % interval lies wholly outside the margin.
- a bound (``lines`` with ``at_most`` / ``at_least``) on every point of some lines: the whole
  95 % interval within the bound, or wholly beyond it.
- a claim on a summary table: each line's margin over the rule, by its 95 % interval over the
  seeds (paired by seed against another line or column); the lines are the points.
- ``matches_paper``: every cell the paper gives a number for; a cell matches when our whole
  95 % interval lies within the paper's tolerance of its value, and is off when it lies wholly
  outside. A match has no direction to contradict: too many cells off is "does not hold".
- an effect (``effect = "ratio" | "difference" | "slope"``): ours with its 95 % interval
  beside the paper's own effect, per point: reproduced where our interval reaches the paper's
  range and is significant in its direction. Partly when, at half the share asked, ours is
  significant in the paper's direction and at least half its size.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd

from .arguments import NONE, NUMBER, arguments, of
from .paper import PaperValues, fmt
from .plan import Claim, Plan, axis_value, x_number
from .stats import compare_lines, deterministic, distinct_runs, mean_ci, slope_ci
from .verdicts import (
    CONTRADICTED,
    DETERMINISTIC,
    DOES_NOT_HOLD,
    HOLDS,
    NOT_JUDGED,
    PARTLY,
    scale,
)

if TYPE_CHECKING:
    from .plan import Plan

NO_CI = "no significance can be judged: fewer than 2 seeds per point, so no 95 % CIs"


@dataclass(frozen=True)
class Judgement:
    """A claim's verdict and the evidence behind it, as one sentence."""

    verdict: str
    detail: str

    @property
    def text(self) -> str:
        return f"{self.verdict}: {self.detail}"


def _x_text(x: Any, scale_: float = 1.0) -> str:
    return axis_value(x, scale_)


def _xs(xs: Sequence[Any], scale_: float) -> str:
    return ", ".join(_x_text(x, scale_) for x in xs) or "none"


def _pct(k: int, n: int) -> str:
    return f"{100 * k / n:.0f} %" if n else "-"


def unit_of(label: str) -> str:
    """The unit an axis label names in its last parentheses ("throughput (Mbit/s, sum of
    ...)" -> "Mbit/s"; "retransmission ratio (%: retransmitted / sent)" -> "%"); "" when it
    names none."""
    m = re.search(r"\(([^()]*)\)\s*$", label)
    return re.split(r"[,:;]", m.group(1))[0].strip() if m else ""


def quantity_of(label: str) -> str:
    """An axis label without its unit ("packet loss rate (%)" -> "packet loss rate")."""
    return re.sub(r"\s*\([^()]*\)\s*$", "", label).strip() or label


@dataclass(frozen=True)
class Axis:
    """What a claim's figure says of its axes: the x scale, and the words for units."""

    x_scale: float = 1.0
    x_label: str = ""
    y_label: str = ""
    #: The metric's declared unit (``unit = "%"``), which wins over the label's.
    y_declared: str | None = None

    def slope_unit(self) -> str:
        """The unit of a slope of y against x: "s per % of packet loss rate"."""
        y, x = self.y_unit(), unit_of(self.x_label)
        per = f"{x} of {quantity_of(self.x_label)}" if x else f"unit of {self.x_label or 'x'}"
        return f"{y + ' ' if y else ''}per {per}"

    def y_unit(self) -> str:
        return self.y_declared or unit_of(self.y_label)

    def difference_unit(self) -> str:
        """The unit of a difference of y: percentage points for a metric in %."""
        unit = self.y_unit()
        return "points" if unit == "%" else unit


def _axis(plan: Plan | None, item_id: str, x_scale: float) -> Axis:
    if plan is None:
        return Axis(x_scale)
    fig = next((f for f in plan.figures if f.id == item_id), None)
    if fig is not None:
        return Axis(fig.x_scale, fig.x_label, fig.metric.label, fig.metric.unit)
    for g in plan.grids:
        for m in g.metrics:
            if g.cell_id(m) == item_id:
                return Axis(1.0, "row", m.label, m.unit)
    return Axis(x_scale)


def _no_interval(n_points: int, n_deterministic: int, runs: int) -> str:
    """Why no point has an interval: identical replicates, or too few of them."""
    if n_deterministic:
        what = DETERMINISTIC.format(n=runs)
        return (f"{what} per point at {n_deterministic} of {n_points} points (copies of one "
                "run are one sample: no interval, no significance)")  # fmt: skip
    return NO_CI


@arguments(
    claim=of(Claim),
    points=of(pd.DataFrame, "a pandas DataFrame"),
    tables=of(dict, "a dict of DataFrames") | NONE,
    x_scale=NUMBER,
    plan=of(Plan) | NONE,
)
def check_claim(
    claim: Claim,
    points: pd.DataFrame,
    tables: dict[str, pd.DataFrame] | None = None,
    x_scale: float = 1.0,
    plan: Plan | None = None,
) -> str:
    """The verdict and evidence of a claim as one sentence (see :func:`judge_claim`)."""
    return judge_claim(claim, points, tables, x_scale, plan).text


def judge_claim(
    claim: Claim,
    points: pd.DataFrame,
    tables: dict[str, pd.DataFrame] | None = None,
    x_scale: float = 1.0,
    plan: Plan | None = None,
) -> Judgement:
    """What our points (one row per figure, line, x and seed; a ``run`` column, the run's
    fingerprint, tells identical replicates apart) or a summary table (one row per line and
    seed) say about a claim. ``x_scale`` turns x values into the figure's axis units where
    no ``plan`` says it."""
    axis = _axis(plan, claim.figure, x_scale)
    if claim.at and len(points):
        mine = points[points["figure"] == claim.figure]
        if not any(x in claim.at for x in mine["x"]):
            return Judgement(NOT_JUDGED, f"none of its points (x = {_xs(claim.at, axis.x_scale)}) "
                             "was run (quick mode runs fewer)")  # fmt: skip
        if claim.effect is None:
            points = points[[x in claim.at for x in points["x"]]]
    if claim.matches_paper:
        if plan is None:
            return Judgement(NOT_JUDGED, "the plan's paper values were not given")
        return judge_paper_claim(claim, plan, points, tables or {})
    if claim.effect is not None:
        if plan is None:
            return Judgement(NOT_JUDGED, "the plan was not given")
        return judge_effect_claim(claim, plan, points, axis)
    if claim.table is not None:
        return judge_table_claim(claim, (tables or {}).get(claim.table))
    if claim.at_most is not None or claim.at_least is not None:
        return judge_bound_claim(claim, points, axis.x_scale)
    a, b = claim.lower, claim.than
    if not a or not b:
        return Judgement(NOT_JUDGED, "not checked automatically")
    similar = claim.relation == "similar"
    cmp = (
        compare_lines(points, claim.figure, a, b, claim.margin if similar else None)
        if len(points)
        else pd.DataFrame()
    )
    if cmp.empty:
        return Judgement(NOT_JUDGED, "no points to compare")
    xs = list(cmp["x"])
    judged = cmp[(cmp["n"] >= 2) & ~cmp["deterministic"].astype(bool)]
    n_det = int(cmp["deterministic"].astype(bool).sum())
    runs = int(cmp["n"].max())
    unjudged = ""
    if len(judged) < len(xs):
        why = f", {n_det} of them deterministic ({runs} identical runs)" if n_det else ""
        k = len(xs) - len(judged)
        unjudged = f"; {k} {'point' if k == 1 else 'points'} without a CI{why}"
    open_runs = cmp[cmp["unfinished"] != ""]
    if len(open_runs):
        unjudged += "; " + "; ".join(
            f"at x = {_xs([r.x], axis.x_scale)} no run of {r.unfinished} finished while every "
            f"run of the other line did (sign test over {int(r.n)} pairs, p = {r.p_value:.2g})"
            for r in open_runs.itertuples()
        )
    need = f"the claim needs {100 * claim.min_significant_share:g} %"
    sx = axis.x_scale
    lower_sig = list(judged[judged["sign"] < 0]["x"])
    higher_sig = list(judged[judged["sign"] > 0]["x"])
    if similar:
        if judged.empty:
            return Judgement(NOT_JUDGED, _no_interval(len(xs), n_det, runs))
        eq = list(judged[judged["equivalent"].astype(bool)]["x"])
        out = list(judged[judged["outside"].astype(bool)]["x"])
        verdict = scale(len(judged), len(eq), len(out), claim.min_significant_share)
        return Judgement(verdict, (
            f"{a} within ±{100 * claim.margin:g} % of {b} (paired two one-sided tests, 5 %) at "
            f"{len(eq)} of {len(judged)} points ({_pct(len(eq), len(judged))}; {need}); "
            f"significantly outside the margin at x = {_xs(out, sx)}; {a} significantly lower "
            f"(paired 95 % CI) at x = {_xs(lower_sig, sx)}, higher at x = "
            f"{_xs(higher_sig, sx)}{unjudged}"))  # fmt: skip
    word, other = ("lower", "higher") if claim.relation == "lower" else ("higher", "lower")
    want = -1 if claim.relation == "lower" else 1
    in_dir = cmp[cmp["diff"] * want > 0]
    counted = f"{a} is {word} at {len(in_dir)} of {len(xs)} points"
    if judged.empty:
        return Judgement(NOT_JUDGED, f"{counted} ({_no_interval(len(xs), n_det, runs)})")
    sig = lower_sig if want < 0 else higher_sig
    opp = higher_sig if want < 0 else lower_sig
    verdict = scale(len(judged), len(sig), len(opp), claim.min_significant_share)
    text = (
        f"{counted}, significantly (paired 95 % CI) at {len(sig)} of {len(judged)} "
        f"({_pct(len(sig), len(judged))}; {need}); significantly {other} at "
        f"{'x = ' + _xs(opp, sx) if opp else 'none'}{unjudged}"
    )
    if claim.trend is not None:
        # The gap in the claimed direction: B - A for "lower", A - B for "higher".
        # Points where one line never finished have no finite gap: the slope leaves them out.
        finite = judged[judged["diff"].map(math.isfinite)]
        gap = [want * float(d) for d in finite["diff"]]
        s = slope_ci([x_number(x) * sx for x in finite["x"]], gap)
        sign = 1 if claim.trend == "increasing" else -1
        gap_name = f"{b} - {a}" if want < 0 else f"{a} - {b}"
        text += f"; trend claimed: the gap {gap_name} {'grows' if sign > 0 else 'shrinks'} with x"
        if math.isnan(s.half):
            text += f"; not judged ({s.k} points with a CI: a slope's interval needs 3)"
            trend = NOT_JUDGED
        else:
            trend = {sign: HOLDS, -sign: CONTRADICTED}.get(s.sign, DOES_NOT_HOLD)
            found = {HOLDS: "as claimed", CONTRADICTED: "the opposite, significantly"}.get(
                trend, "no significant trend"
            )
            text += (
                f"; its slope is {s.slope:.3g} {axis.slope_unit()} (95 % CI "
                f"{s.slope - s.half:.3g} to {s.slope + s.half:.3g}): {found}"
            )
        verdict = combine(verdict, trend)
    return Judgement(verdict, text)


def combine(direction: str, trend: str) -> str:
    """A claim of a direction and a trend: it holds when both do; either contradicted
    contradicts it; a direction that holds (or partly) with a trend that does not is partly."""
    if direction == NOT_JUDGED:
        return NOT_JUDGED
    if CONTRADICTED in (direction, trend):
        return CONTRADICTED
    if direction == HOLDS and trend == HOLDS:
        return HOLDS
    if direction in (HOLDS, PARTLY):
        return PARTLY
    return DOES_NOT_HOLD


def _point_groups(s: pd.DataFrame) -> list[tuple[Any, pd.DataFrame]]:
    return [(x, s[s["x"] == x]) for x in dict.fromkeys(s["x"])] if len(s) else []


def judge_bound_claim(claim: Claim, points: pd.DataFrame, x_scale: float = 1.0) -> Judgement:
    """A bound on every point of ``claim.lines`` in a figure: a point holds significantly when
    its whole 95 % interval is within the bound, the opposite when wholly beyond it. A point
    without a value (a transfer that never finished) counts as beyond."""
    upper = claim.at_most is not None
    bound = claim.at_most if upper else claim.at_least
    assert bound is not None
    rule = f"{'<=' if upper else '>='} {bound:g}"

    def within(v: float) -> bool:
        return v <= bound if upper else v >= bound

    s = points[points["figure"] == claim.figure] if len(points) else points
    parts, outside = [], []
    n_points = n_within = n_judged = n_sig = n_beyond = n_det = runs = 0
    for line in claim.lines:
        rows = s[s["line"] == line] if len(s) else s
        for x, grp in _point_groups(rows):
            mean, half, n = mean_ci(list(grp["value"].astype(float)))
            n_points += 1
            runs = max(runs, len(grp))
            if n and within(mean):
                n_within += 1
            else:
                outside.append(f"{line} at x = {_x_text(x, x_scale)}")
            total = len(grp)
            if deterministic(total, distinct_runs(grp)):
                n_det += 1
            elif total >= 2:
                n_judged += 1
                if n == 0:  # no run finished: beyond any bound
                    n_beyond += 1
                elif n == total:  # with some runs unfinished, neither within nor beyond
                    n_sig += within(mean + half if upper else mean - half)
                    n_beyond += not within(mean - half if upper else mean + half)
        vals = rows["value"].astype(float) if len(rows) else pd.Series(dtype=float)
        worst = vals.max() if upper else vals.min()
        parts.append(f"{line}'s {'largest' if upper else 'smallest'} run {fmt(float(worst))}")
    if n_points == 0:
        return Judgement(NOT_JUDGED, "no points to compare")
    counted = (
        f"{' and '.join(claim.lines)} {rule} at {n_within} of {n_points} points "
        f"({'; '.join(parts)}); outside at {', '.join(outside) if outside else 'none'}"
    )
    if n_judged == 0:
        return Judgement(NOT_JUDGED, f"{counted} ({_no_interval(n_points, n_det, runs)})")
    verdict = scale(n_judged, n_sig, n_beyond, claim.min_significant_share)
    return Judgement(verdict, (
        f"{counted}; the whole 95 % CI within at {n_sig} of {n_judged} "
        f"({_pct(n_sig, n_judged)}; the claim needs {100 * claim.min_significant_share:g} %), "
        f"wholly beyond at {n_beyond}"))  # fmt: skip


def _values(t: pd.DataFrame, line: str, column: str) -> pd.Series:
    """One line's values of ``column``, indexed by seed (by position without a seed column)."""
    rows = t[t["line"] == line]
    if "seed" in rows:
        return rows.set_index("seed")[column].astype(float)
    return rows[column].astype(float).reset_index(drop=True)


def judge_table_claim(claim: Claim, table: pd.DataFrame | None) -> Judgement:
    """What a summary table says about a claim on one of its columns, line by line.

    ``table`` has one row per line and seed (a ``run`` column, the run's fingerprint, tells
    identical replicates apart). Each line's margin over the rule (paired by seed when the
    reference is another line or column) and its 95 % interval: significant when the interval
    is on the rule's side, the opposite when wholly on the other side, else too close to
    call. The lines are the claim's points."""
    if table is None or not len(table):
        return Judgement(NOT_JUDGED, "no table to compare")
    col = claim.column or ""
    if col not in table.columns:
        return Judgement(NOT_JUDGED, f'the table has no column "{col}"')
    # The rule: a fixed reference (a number, another line's value) or, for `above`, another
    # column of the same row. `sense` turns value - reference into a margin that is positive
    # when the rule holds.
    ref_line: str | None = None
    if claim.at_least is not None:
        sense, rule = 1, f"{col} ≥ {claim.at_least:g}"
    elif claim.at_most is not None:
        sense, rule = -1, f"{col} ≤ {claim.at_most:g}"
    elif claim.above is not None:
        sense, rule = 1, f"{col} > {claim.above}"
    else:
        ref_line = claim.below_line if claim.below_line is not None else claim.above_line
        below = claim.below_line is not None
        sense = -1 if below else 1
        ref_mean = float(_values(table, str(ref_line), col).mean())
        rule = f"{col} {'<' if below else '>'} {ref_line}'s {ref_mean:.3g}"
    held: list[str] = []
    opposite: list[str] = []
    close: list[str] = []
    unjudged: list[str] = []
    n_det = runs = 0
    for ln in claim.lines:
        v = _values(table, ln, col)
        if v.empty:
            continue
        if claim.at_least is not None or claim.at_most is not None:
            limit = claim.at_least if claim.at_least is not None else claim.at_most
            ref = pd.Series(float(limit), index=v.index)
        elif claim.above is not None:
            ref = _values(table, ln, claim.above)
        else:
            ref = _values(table, str(ref_line), col).reindex(v.index)
        m, half, n = mean_ci([sense * (x - r) for x, r in zip(v, ref)])
        runs = max(runs, len(v))
        rows = table[table["line"] == ln]
        value, spread = float(v.mean()), mean_ci(list(v))[1]
        versus = f" vs {float(ref.mean()):.3g}" if claim.above is not None else ""
        shown = f"{ln} {value:.3g}" + ("" if math.isnan(spread) else f" ± {spread:.2g}") + versus
        if deterministic(n, distinct_runs(rows)):
            n_det += 1
            unjudged.append(shown)
        elif n < 2:
            unjudged.append(shown)
        elif m - half > 0:
            held.append(shown)
        elif m + half < 0:
            opposite.append(shown)
        else:
            close.append(shown)
    judged = len(held) + len(opposite) + len(close)
    total = judged + len(unjudged)
    if total == 0:
        return Judgement(NOT_JUDGED, "no lines to compare")
    if judged == 0:
        why = _no_interval(total, n_det, runs) if n_det else "one run per line: no 95 % CI"
        return Judgement(NOT_JUDGED, f"{rule}: {why} ({'; '.join(unjudged)})")
    verdict = scale(judged, len(held), len(opposite), claim.min_significant_share)

    def listed(names: list[str]) -> str:
        return "; ".join(names) if names else "none"

    extra = f"; not judged: {listed(unjudged)}" if unjudged else ""
    return Judgement(verdict, (
        f"{rule} significantly (95 % CI over {runs} seeds) for {len(held)} of {judged} lines "
        f"({listed(held)}); the opposite, significantly: {listed(opposite)}; too close to call "
        f"(the CI reaches the rule): {listed(close)}{extra} [the claim needs "
        f"{100 * claim.min_significant_share:g} % of the lines]"))  # fmt: skip


@arguments(claim=of(Claim), table=of(pd.DataFrame, "a pandas DataFrame") | NONE)
def check_table_claim(claim: Claim, table: pd.DataFrame | None) -> str:
    """:func:`judge_table_claim` as one sentence."""
    return judge_table_claim(claim, table).text


@dataclass
class PaperCell:
    """One cell the paper gives a number for, with ours beside it."""

    item: str  # the figure, "<grid>.<metric>" or summary table
    line: str
    at: Any  # x value, grid row id or summary column
    paper: float
    mean: float
    ci95: float
    n: int
    values: PaperValues
    #: How many of the n runs differ (identical replicates are one sample).
    distinct: int = -1

    @property
    def judged(self) -> bool:
        """Whether the cell has an interval: 2 runs or more that are not all identical."""
        distinct = self.n if self.distinct < 0 else self.distinct
        return self.n >= 2 and not deterministic(self.n, distinct) and not math.isnan(self.ci95)

    @property
    def band(self) -> float:
        return self.values.allowed(self.paper)

    @property
    def matches(self) -> bool:
        """Significantly within the paper's tolerance: our whole 95 % CI inside its band."""
        return self.judged and abs(self.mean - self.paper) + self.ci95 <= self.band

    @property
    def off(self) -> bool:
        """Significantly outside the paper's tolerance: our whole 95 % CI outside its band."""
        return self.judged and abs(self.mean - self.paper) - self.ci95 > self.band

    @property
    def mean_within(self) -> bool:
        """Our mean within the tolerance (what a reader sees in a table; not a test)."""
        return not math.isnan(self.mean) and abs(self.mean - self.paper) <= self.band


def paper_cells(
    plan: Plan, points: pd.DataFrame, table_seeds: dict[str, pd.DataFrame] | None = None
) -> list[PaperCell]:
    """Every cell of the plan with a paper value, ours beside it (mean, 95 % CI, seeds,
    distinct runs; NaN and n = 0 where we have no run)."""
    out: list[PaperCell] = []
    # The points of each (figure, line), in their order, as plain (x, value, run) rows, split
    # once: a filter over every point per cell was 2-3 s of a cached quick reproduction of
    # papers 000 and 004, and a pandas filter per cell of the split frames still 2 s of p004's
    # (issue 33). Without a run column every point is its own run, as `distinct_runs` counts.
    by_line: dict[tuple[Any, Any], list[tuple[Any, float, Any]]] = {}
    if len(points):
        runs = points["run"] if "run" in points else pd.Series(range(len(points)))
        for fig, line, x, value, run in zip(points["figure"], points["line"], points["x"],
                                            points["value"], runs):  # fmt: skip
            by_line.setdefault((fig, line), []).append((x, float(value), run))

    def ours(item: str, line: str, at: Any) -> tuple[float, float, int, int]:
        rows = [
            (v, r) for x, v, r in by_line.get((item, line), ()) if x == at and not math.isnan(v)
        ]
        if not rows:
            return math.nan, math.nan, 0, 0
        # As pandas' nunique: a missing fingerprint (None, NaN) is no run.
        distinct = len({r for _, r in rows if isinstance(r, str) or (r is not None and r == r)})
        return (*mean_ci([v for v, _ in rows]), distinct)

    for fig in plan.figures:
        if fig.paper is not None:
            for (line, x), v in fig.paper.values.items():
                m, ci, n, k = ours(fig.id, line, x)
                out.append(PaperCell(fig.id, line, x, v, m, ci, n, fig.paper, k))
    for grid in plan.grids:
        for met in grid.metrics:
            pv = grid.paper.get(met.id)
            if pv is not None:
                for (row, line), v in pv.values.items():
                    cid = grid.cell_id(met)
                    m, ci, n, k = ours(cid, line, row)
                    out.append(PaperCell(cid, line, row, v, m, ci, n, pv, k))
    for t in plan.tables:
        if t.paper is not None:
            df = (table_seeds or {}).get(t.id)
            for (line, col), v in t.paper.values.items():
                rows = pd.DataFrame()
                if df is not None and col in df:
                    rows = df[(df["line"] == line) & ~df[col].astype(float).isna()]
                vals = [float(x) for x in rows[col]] if len(rows) else []
                m, ci, n = mean_ci(vals) if vals else (math.nan, math.nan, 0)
                k = distinct_runs(rows) if len(rows) else 0
                out.append(PaperCell(t.id, line, col, v, m, ci, n, t.paper, k))
    return out


def judge_paper_claim(
    claim: Claim, plan: Plan, points: pd.DataFrame, table_seeds: dict[str, pd.DataFrame]
) -> Judgement:
    """How many of a claim's cells match the paper (see :class:`PaperCell`), on the verdict
    scale: matching cells are the claimed direction, cells significantly off the opposite; a
    match has no direction to contradict, so too many cells off is "does not hold"."""
    if claim.table is None:
        items = {claim.figure}
    else:
        grid = next((g for g in plan.grids if g.id == claim.table), None)
        if grid is None:
            items = {claim.table}
        else:
            items = {grid.cell_id(m) for m in grid.metrics
                     if claim.metric is None or m.id == claim.metric}  # fmt: skip
    cells = [c for c in paper_cells(plan, points, table_seeds)
             if c.item in items and c.line in claim.lines]  # fmt: skip
    run = [c for c in cells if c.n > 0]
    if not run:
        return Judgement(NOT_JUDGED, "no cell with a paper value has a run of ours")
    judged = [c for c in run if c.judged]
    ok = [c for c in judged if c.matches]
    off = [c for c in judged if c.off]
    sources = sorted({c.values.source for c in run})
    tolerances = sorted({c.values.describe_tolerance() for c in run})
    within = sum(c.mean_within for c in run)
    missing = (
        f"; {len(cells) - len(run)} cells without a run of ours" if len(run) < len(cells) else ""
    )
    basis = (f"our mean within {' / '.join(tolerances)} of the paper's value at {within} of "
             f"{len(run)} cells ({', '.join(sources)})")  # fmt: skip
    if not judged:
        n_det = sum(1 for c in run if c.n >= 2)
        runs = max(c.n for c in run)
        return Judgement(NOT_JUDGED, f"{basis} ({_no_interval(len(run), n_det, runs)}){missing}")
    verdict = scale(len(judged), len(ok), len(off), claim.min_significant_share)
    if verdict == CONTRADICTED:
        verdict = DOES_NOT_HOLD
    worst = sorted(off, key=lambda c: -abs(c.mean - c.paper) / (abs(c.paper) or 1.0))[:4]

    def named(c: PaperCell) -> str:
        # A grid claim over several metrics names the cell's metric too.
        metric = "" if c.item == claim.figure else f" ({c.item.split('.')[-1]})"
        return f"{c.line} at {_x_text(c.at)}{metric} ours {fmt(c.mean)} vs {fmt(c.paper)}"

    far = "; furthest off: " + "; ".join(named(c) for c in worst) if worst else ""
    return Judgement(verdict, (
        f"{len(ok)} of {len(judged)} cells match the paper (our whole 95 % CI within its "
        f"tolerance; the claim needs {100 * claim.min_significant_share:g} %), {len(off)} are "
        f"significantly off; {basis}{missing}{far}"))  # fmt: skip


def check_paper_claim(
    claim: Claim, plan: Plan, points: pd.DataFrame, table_seeds: dict[str, pd.DataFrame]
) -> str:
    """:func:`judge_paper_claim` as one sentence."""
    return judge_paper_claim(claim, plan, points, table_seeds).text


@dataclass(frozen=True)
class EffectPoint:
    """An effect at one point: ours (mean, 95 % interval, pairs) and the paper's range."""

    x: Any
    mean: float
    low: float
    high: float
    n: int
    deterministic: bool
    paper_low: float
    paper_high: float

    @property
    def judged(self) -> bool:
        return self.n >= 2 and not self.deterministic and not math.isnan(self.low)

    @property
    def direction(self) -> int:
        mid = (self.paper_low + self.paper_high) / 2
        return 1 if mid > 0 else (-1 if mid < 0 else 0)

    @property
    def sign(self) -> int:
        if not self.judged:
            return 0
        return 1 if self.low > 0 else (-1 if self.high < 0 else 0)

    @property
    def reaches_paper(self) -> bool:
        return self.judged and self.low <= self.paper_high and self.high >= self.paper_low

    @property
    def same_order(self) -> bool:
        """Significant in the paper's direction, and our interval reaches half of the paper's
        smaller effect: the same effect, of another size ("partly"). A significant +0.2 %
        beside the paper's +21 % is not."""
        if self.direction == 0 or self.sign != self.direction:
            return False
        if self.direction > 0:
            return self.high >= self.paper_low / 2
        return self.low <= self.paper_high / 2


def _paper_value(plan: Plan, item_id: str, line: str, x: Any) -> float | None:
    fig = next((f for f in plan.figures if f.id == item_id), None)
    if fig is not None:
        return fig.paper.get(line, x) if fig.paper is not None else None
    for g in plan.grids:
        for m in g.metrics:
            if g.cell_id(m) == item_id and m.id in g.paper:
                return g.paper[m.id].get(x, line)
    return None


def _item_points(plan: Plan, item_id: str) -> list[Any]:
    fig = next((f for f in plan.figures if f.id == item_id), None)
    if fig is not None:
        return list(fig.x_values)
    grid = next((g for g in plan.grids if item_id.startswith(g.id + ".")), None)
    return [r.id for r in grid.rows] if grid is not None else []


def _signed(v: float, unit: str) -> str:
    return f"{v:+.3g} {unit}" if unit else f"{v:+.3g}"


def effect_points(claim: Claim, plan: Plan, points: pd.DataFrame) -> list[EffectPoint]:
    """An effect claim's points: at each x of ``claim.at`` (all of them when empty) ours, per
    seed (``ratio``: 100 (A / B - 1), ``difference``: A - B) with its 95 % interval, beside the
    paper's range (its stated one, or its values' effect ± ``band``). A slope is one point."""
    assert claim.effect is not None and claim.lower is not None
    s = points[points["figure"] == claim.figure] if len(points) else points
    xs = claim.at or [x for x in _item_points(plan, claim.figure)
                      if len(s) and (s["x"] == x).any()]  # fmt: skip

    def paper_range(effect: float | None) -> tuple[float, float]:
        if claim.paper_effect is not None:
            return claim.paper_effect
        if effect is None:
            return math.nan, math.nan
        lo, hi = effect * (1 - claim.band), effect * (1 + claim.band)
        return min(lo, hi), max(lo, hi)

    a = claim.lower
    if claim.effect == "slope":
        means, scale_ = [], _axis(plan, claim.figure, 1.0).x_scale
        distinct = []
        for x in xs:
            g = s[(s["line"] == a) & (s["x"] == x)]
            vals = [float(v) for v in g["value"] if not math.isnan(float(v))]
            if vals:
                means.append((x_number(x) * scale_, sum(vals) / len(vals)))
                distinct.append(deterministic(len(vals), distinct_runs(g)))
        fit = slope_ci([u for u, _ in means], [v for _, v in means])
        paper_xy = [(x_number(x) * scale_, _paper_value(plan, claim.figure, a, x)) for x in xs]
        known = [(u, v) for u, v in paper_xy if v is not None]
        paper_slope = slope_ci([u for u, _ in known], [v for _, v in known]).slope if len(
            known) >= 2 else None  # fmt: skip
        lo, hi = paper_range(paper_slope)
        det = bool(distinct) and all(distinct)
        return [EffectPoint("slope", fit.slope, fit.slope - fit.half, fit.slope + fit.half,
                            fit.k if not math.isnan(fit.half) else 0, det, lo, hi)]  # fmt: skip
    b = str(claim.than)
    out = []
    for x in xs:
        ga = s[(s["line"] == a) & (s["x"] == x)]
        gb = s[(s["line"] == b) & (s["x"] == x)]
        va, vb = ga.set_index("seed")["value"], gb.set_index("seed")["value"]
        pairs = [(float(va[k]), float(vb[k])) for k in va.index if k in vb.index]
        pairs = [(u, v) for u, v in pairs if not (math.isnan(u) or math.isnan(v))]
        if claim.effect == "ratio":
            per_seed = [100 * (u / v - 1) for u, v in pairs if v != 0]
        else:
            per_seed = [u - v for u, v in pairs]
        m, half, n = mean_ci(per_seed)
        det = deterministic(n, max(distinct_runs(ga), distinct_runs(gb)))
        pa, pb = _paper_value(plan, claim.figure, a, x), _paper_value(plan, claim.figure, b, x)
        paper = None
        if pa is not None and pb is not None:
            paper = 100 * (pa / pb - 1) if claim.effect == "ratio" and pb else pa - pb
        lo, hi = paper_range(paper)
        out.append(EffectPoint(x, m, m - half, m + half, n, det, lo, hi))
    return out


def judge_effect_claim(claim: Claim, plan: Plan, points: pd.DataFrame,
                       axis: Axis) -> Judgement:  # fmt: skip
    """An effect beside the paper's, point by point (see :func:`effect_points`): reproduced
    where our 95 % interval reaches the paper's range and is significant in its direction;
    the verdict is the scale's, with "partly" also when, at half the share asked, ours is
    significant in the paper's direction and of its order (the interval reaches half the
    paper's smaller effect) although not within its range."""
    pts = effect_points(claim, plan, points)
    unit = {"ratio": "%", "difference": axis.difference_unit(), "slope": ""}[str(claim.effect)]
    what = {"ratio": f"{claim.lower} / {claim.than} - 1",
            "difference": f"{claim.lower} - {claim.than}",
            "slope": f"the slope of {claim.lower} against x ({axis.slope_unit()})"}[
        str(claim.effect)]  # fmt: skip
    if not pts:
        return Judgement(NOT_JUDGED, f"{what}: no points to compare")
    source = f" ({claim.source})" if claim.source else " (from its values)"
    parts = []
    for p in pts:
        at = "" if p.x == "slope" else f"at {_x_text(p.x, axis.x_scale)}: "
        if math.isnan(p.paper_low):
            paper = "paper: no number"
        elif p.paper_low == p.paper_high:
            paper = f"paper {_signed(p.paper_low, unit)}"
        else:
            paper = f"paper {_signed(p.paper_low, unit)} to {_signed(p.paper_high, unit)}"
        if p.judged:
            ours = (f"ours {_signed(p.mean, unit)} (95 % CI {_signed(p.low, unit)} to "
                    f"{_signed(p.high, unit)})")  # fmt: skip
        elif p.deterministic:
            ours = f"ours {_signed(p.mean, unit)} ({DETERMINISTIC.format(n=p.n)}, no CI)"
        else:
            ours = f"ours {_signed(p.mean, unit) if not math.isnan(p.mean) else '-'} (no CI)"
        parts.append(f"{at}{paper}, {ours}")
    judged = [p for p in pts if p.judged and not math.isnan(p.paper_low)]
    head = f"{what}{source}: " + "; ".join(parts)
    if not judged:
        n_det = sum(p.deterministic for p in pts)
        why = "identical runs are one sample" if n_det else "no interval or no paper value"
        return Judgement(NOT_JUDGED, f"{head} ({why})")
    reproduced = [p for p in judged if p.reaches_paper and (p.sign == p.direction)]
    same = [p for p in judged if p.same_order]
    opposite = [p for p in judged if p.direction and p.sign == -p.direction]
    share = claim.min_significant_share
    verdict = scale(len(judged), len(reproduced), len(opposite), share)
    if verdict == DOES_NOT_HOLD and not opposite and len(same) / len(judged) >= share / 2:
        verdict = PARTLY
    counts = (f"the paper's effect reached at {len(reproduced)} of {len(judged)} points, "
              f"its direction at half its size or more at {len(same)}, the opposite "
              f"significantly at {len(opposite)} (the claim needs {100 * share:g} %)")  # fmt: skip
    return Judgement(verdict, f"{head}; {counts}")
