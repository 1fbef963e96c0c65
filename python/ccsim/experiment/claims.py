# SPDX-License-Identifier: MIT
"""The paper's claims checked against our points and tables.

A claim on a figure compares two of its lines, A and B, point by point. Runs of the two lines
at one x share their seeds, hence their random draws (the same losses hit both), so each
point's evidence is the mean of the per-seed differences A - B and its 95 % interval (a paired
t-test, :func:`ccsim.experiment.stats.compare_lines`), far sharper than asking whether two
independent intervals overlap.

- ``lower`` / ``higher``: how many points are lower (higher), how many significantly, and
  whether any is significant the other way. The claim holds when the claimed direction is
  significant at ``min_significant_share`` of the points with an interval and the opposite at
  none, and, with a ``trend``, when the regression slope of the gap in the claimed direction
  against x has the stated sign by its 95 % interval.
- ``similar``: two one-sided tests at each point, with bounds ``± margin`` times B's mean; the
  claim holds when equivalence is shown at ``min_significant_share`` of the points. Points
  where the difference is significant are listed, since a similar claim can fail by them.
- With fewer than 2 seeds there is no interval: the claim is "not judged", and says so.

A claim on a summary table (one row per line and seed) compares a column with a number, another
column, or another line; with one seed a value within ``tolerance`` of the rule is too close to
call, with several the 95 % interval of the (paired) margin decides.

A ``matches_paper`` claim compares every cell the paper gives a number for (a figure's point,
a grid table's cell, a summary table's column) with that number: a cell from one run matches
when it is within the ``paper`` key's tolerance, a cell from several seeds when the paper's
number lies in our 95 % interval. The verdict counts the cells that match.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd

from .paper import UNITS, PaperValues, fmt, matches
from .plan import Claim, x_number
from .stats import compare_lines, mean_ci, slope_ci

if TYPE_CHECKING:
    from .plan import Plan

NO_CI = "no significance can be judged: fewer than 2 seeds per point, so no 95 % CIs"


def _x_text(x: Any, scale: float = 1.0) -> str:
    """An x value as the report names it: a number in the axis' units ("10Mbps" -> 10), a
    grid row by its id ("10x10" stays "10x10": what follows its number is not a unit)."""
    if isinstance(x, str):
        m = re.match(r"\s*[-+]?[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?\s*(.*?)\s*$", x)
        if m is None or (m.group(1) and m.group(1) not in UNITS):
            return x
    v = x_number(x)
    return str(x) if math.isnan(v) else f"{v * scale:g}"


def _xs(xs: Sequence[Any], scale: float) -> str:
    return ", ".join(_x_text(x, scale) for x in xs) or "none"


def _pct(k: int, n: int) -> str:
    return f"{100 * k / n:.0f} %" if n else "-"


def check_claim(
    claim: Claim,
    points: pd.DataFrame,
    tables: dict[str, pd.DataFrame] | None = None,
    x_scale: float = 1.0,
    plan: Plan | None = None,
) -> str:
    """What our points (one row per figure, line, x and seed) say about a claim on a figure,
    or what a summary table says about a table claim (see :func:`check_table_claim`).
    ``x_scale`` turns x values into the figure's axis units in the text."""
    if claim.matches_paper:
        if plan is None:
            return "not checked: the plan's paper values were not given"
        return check_paper_claim(claim, plan, points, tables or {})
    if claim.table is not None:
        return check_table_claim(claim, (tables or {}).get(claim.table))
    if claim.at_most is not None or claim.at_least is not None:
        return check_bound_claim(claim, points, x_scale)
    a, b = claim.lower, claim.than
    if not a or not b:
        return "not checked automatically"
    similar = claim.relation == "similar"
    cmp = (
        compare_lines(points, claim.figure, a, b, claim.margin if similar else None)
        if len(points)
        else pd.DataFrame()
    )
    if cmp.empty:
        return "no points to compare"
    xs = list(cmp["x"])
    judged = cmp[cmp["n"] >= 2]
    unjudged = f"; {len(xs) - len(judged)} points without a CI" if len(judged) < len(xs) else ""
    need = f"the claim needs {100 * claim.min_significant_share:g} %"
    lower_sig = list(judged[judged["sign"] < 0]["x"])
    higher_sig = list(judged[judged["sign"] > 0]["x"])
    if similar:
        if judged.empty:
            return f"not judged: {NO_CI}"
        eq = list(judged[judged["equivalent"].astype(bool)]["x"])
        share = len(eq) / len(judged)
        verdict = "holds" if share >= claim.min_significant_share else "does not hold"
        return (
            f"{verdict}: {a} within ±{100 * claim.margin:g} % of {b} (paired two one-sided "
            f"tests, 5 %) at {len(eq)} of {len(judged)} points ({_pct(len(eq), len(judged))}; "
            f"{need}); {a} significantly lower (paired 95 % CI) at x = {_xs(lower_sig, x_scale)}"
            f", higher at x = {_xs(higher_sig, x_scale)}{unjudged}"
        )
    word, other = ("lower", "higher") if claim.relation == "lower" else ("higher", "lower")
    want = -1 if claim.relation == "lower" else 1
    in_dir = cmp[cmp["diff"] * want > 0]
    counted = f"{a} is {word} at {len(in_dir)} of {len(xs)} points"
    if judged.empty:
        return f"not judged: {counted} ({NO_CI})"
    sig = lower_sig if want < 0 else higher_sig
    opp = higher_sig if want < 0 else lower_sig
    share = len(sig) / len(judged)
    ok = share >= claim.min_significant_share and not opp
    text = (
        f"{counted}, significantly (paired 95 % CI) at {len(sig)} of {len(judged)} "
        f"({_pct(len(sig), len(judged))}; {need}); significantly {other} at "
        f"{'x = ' + _xs(opp, x_scale) if opp else 'none'}{unjudged}"
    )
    if claim.trend is not None:
        # The gap in the claimed direction: B - A for "lower", A - B for "higher".
        gap = [want * float(d) for d in cmp["diff"]]
        s = slope_ci([x_number(x) * x_scale for x in xs], gap)
        sign = 1 if claim.trend == "increasing" else -1
        gap_name = f"{b} - {a}" if want < 0 else f"{a} - {b}"
        claimed = f"; trend claimed: the gap {gap_name} {'grows' if sign > 0 else 'shrinks'} with x"
        if math.isnan(s.half):
            text += f"{claimed}; not judged ({s.k} points: a slope's interval needs 3)"
            ok = False
        else:
            found = {sign: "as claimed", -sign: "the opposite, significantly"}.get(
                s.sign, "no significant trend"
            )
            ok = ok and s.sign == sign
            text += (
                f"{claimed}; its slope is {s.slope:.3g} per unit of the x axis (95 % CI "
                f"{s.slope - s.half:.3g} to {s.slope + s.half:.3g}): {found}"
            )
    return f"{'holds' if ok else 'does not hold'}: {text}"


def check_bound_claim(claim: Claim, points: pd.DataFrame, x_scale: float = 1.0) -> str:
    """A bound on every point of ``claim.lines`` in a figure: each point's mean within the bound
    counts; with several seeds a point holds significantly when its whole 95 % interval is
    within. A point without a value (a transfer that never finished) is outside the bound."""
    upper = claim.at_most is not None
    bound = claim.at_most if upper else claim.at_least
    assert bound is not None
    rule = f"{'<=' if upper else '>='} {bound:g}"

    def within(v: float) -> bool:
        return v <= bound if upper else v >= bound

    s = points[points["figure"] == claim.figure] if len(points) else points
    parts, n_points, n_within, n_judged, n_sig, outside = [], 0, 0, 0, 0, []
    for line in claim.lines:
        rows = s[s["line"] == line] if len(s) else s
        for x in dict.fromkeys(rows["x"]) if len(rows) else []:
            mean, half, n = mean_ci(list(rows[rows["x"] == x]["value"].astype(float)))
            n_points += 1
            if n and within(mean):
                n_within += 1
            else:
                outside.append(f"{line} at x = {_x_text(x, x_scale)}")
            if n >= 2:
                n_judged += 1
                n_sig += within(mean + half if upper else mean - half)
        worst = rows["value"].astype(float).max() if upper else rows["value"].astype(float).min()
        parts.append(f"{line}'s {'largest' if upper else 'smallest'} run {fmt(float(worst))}")
    if n_points == 0:
        return "no points to compare"
    counted = (
        f"{' and '.join(claim.lines)} {rule} at {n_within} of {n_points} points "
        f"({'; '.join(parts)}); outside at {', '.join(outside) if outside else 'none'}"
    )
    if n_judged == 0:
        return f"not judged: {counted} ({NO_CI})"
    share = n_sig / n_judged
    ok = not outside and share >= claim.min_significant_share
    return (
        f"{'holds' if ok else 'does not hold'}: {counted}; the whole 95 % CI within at {n_sig} "
        f"of {n_judged} ({_pct(n_sig, n_judged)}; the claim needs "
        f"{100 * claim.min_significant_share:g} %)"
    )


def _values(t: pd.DataFrame, line: str, column: str) -> pd.Series:
    """One line's values of ``column``, indexed by seed (by position without a seed column)."""
    rows = t[t["line"] == line]
    if "seed" in rows:
        return rows.set_index("seed")[column].astype(float)
    return rows[column].astype(float).reset_index(drop=True)


def check_table_claim(claim: Claim, table: pd.DataFrame | None) -> str:
    """What a summary table says about a claim on one of its columns, line by line.

    ``table`` has one row per line and seed (or per line). With one value per line the rule is
    applied to it, and a value within ``claim.tolerance`` of the reference is too close to
    call; with several seeds the mean margin and its 95 % interval decide (paired by seed when
    the reference is another line or column)."""
    if table is None or not len(table):
        return "no table to compare"
    col = claim.column or ""
    if col not in table.columns:
        return f'the table has no column "{col}"'
    # The rule: a fixed reference (a number, another line's value) compared with `op`, or,
    # for `above`, another column of the same row. `sense` turns value - reference into a
    # margin that is positive when the rule holds.
    ref_line: str | None = None
    if claim.at_least is not None:
        op, sense, rule = operator.ge, 1, f"{col} ≥ {claim.at_least:g}"
    elif claim.at_most is not None:
        op, sense, rule = operator.le, -1, f"{col} ≤ {claim.at_most:g}"
    elif claim.above is not None:
        op, sense, rule = operator.gt, 1, f"{col} > {claim.above}"
    else:
        ref_line = claim.below_line if claim.below_line is not None else claim.above_line
        below = claim.below_line is not None
        op, sense = (operator.lt, -1) if below else (operator.gt, 1)
        ref_mean = float(_values(table, str(ref_line), col).mean())
        rule = f"{col} {'<' if below else '>'} {ref_line}'s {ref_mean:.3g}"
    held, close, shown = [], [], []
    seeds = 1
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
        seeds = max(seeds, len(v))
        m, half, n = mean_ci([sense * (x - r) for x, r in zip(v, ref)])
        value = float(v.mean())
        versus = f" vs {float(ref.mean()):.3g}" if claim.above is not None else ""
        if n >= 2:
            shown.append(f"{ln} {value:.3g} ± {mean_ci(list(v))[1]:.2g}{versus}")
            ok, near = m - half > 0, m - half <= 0 <= m + half
        else:
            shown.append(f"{ln} {value:.3g}{versus}")
            near = claim.tolerance > 0 and abs(m) <= claim.tolerance
            ok = not near and op(value, float(ref.mean()))
        held.append(ok)
        if near:
            close.append(ln)
    if not held:
        return "no lines to compare"
    k = sum(held)
    verdict = "holds" if k == len(held) else ("partly holds" if k else "does not hold")
    if seeds >= 2:
        basis = f"{seeds} seeds per line: mean ± 95 % CI; a CI reaching the rule is too close"
    elif claim.tolerance > 0:
        basis = f"one run per line, tolerance ±{claim.tolerance:g}"
    else:
        basis = "one run per line, no tolerance"
    near = f"; too close to call: {', '.join(close)}" if close else ""
    return f"{verdict}: {rule} for {k} of {len(held)} lines ({'; '.join(shown)}){near} [{basis}]"


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

    @property
    def matches(self) -> bool:
        return matches(self.paper, self.mean, self.ci95, self.n, self.values)


def paper_cells(
    plan: Plan, points: pd.DataFrame, table_seeds: dict[str, pd.DataFrame] | None = None
) -> list[PaperCell]:
    """Every cell of the plan with a paper value, ours beside it (mean, 95 % CI, seeds; NaN and
    n = 0 where we have no run)."""
    out: list[PaperCell] = []

    def ours(item: str, line: str, at: Any) -> tuple[float, float, int]:
        if not len(points):
            return math.nan, math.nan, 0
        d = points[(points["figure"] == item) & (points["line"] == line)]
        d = d[pd.Series([x == at for x in d["x"]], index=d.index, dtype=bool)]
        vals = [float(v) for v in d["value"] if not math.isnan(float(v))]
        if not vals:
            return math.nan, math.nan, 0
        return mean_ci(vals)

    for fig in plan.figures:
        if fig.paper is not None:
            for (line, x), v in fig.paper.values.items():
                out.append(PaperCell(fig.id, line, x, v, *ours(fig.id, line, x), fig.paper))
    for grid in plan.grids:
        for m in grid.metrics:
            pv = grid.paper.get(m.id)
            if pv is not None:
                for (row, line), v in pv.values.items():
                    cid = grid.cell_id(m)
                    out.append(PaperCell(cid, line, row, v, *ours(cid, line, row), pv))
    for t in plan.tables:
        if t.paper is not None:
            df = (table_seeds or {}).get(t.id)
            for (line, col), v in t.paper.values.items():
                vals: list[float] = []
                if df is not None and col in df:
                    vals = [float(x) for x in df[df["line"] == line][col] if not math.isnan(x)]
                m, ci, n = mean_ci(vals) if vals else (math.nan, math.nan, 0)
                out.append(PaperCell(t.id, line, col, v, m, ci, n, t.paper))
    return out


def check_paper_claim(
    claim: Claim, plan: Plan, points: pd.DataFrame, table_seeds: dict[str, pd.DataFrame]
) -> str:
    """How many of a claim's cells match the paper (see :func:`paper_cells`)."""
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
        return "not judged: no cell with a paper value has a run of ours"
    ok = [c for c in run if c.matches]
    k = len(ok)
    verdict = "holds" if k == len(run) else ("partly holds" if k else "does not hold")
    sources = sorted({c.values.source for c in run})
    tolerances = sorted({c.values.describe_tolerance() for c in run})
    seeds = sorted({c.n for c in run})
    if seeds == [1]:
        basis = f"one run per cell: within {' / '.join(tolerances)}"
    else:
        span = str(seeds[-1]) if seeds[0] == seeds[-1] else f"{seeds[0]}-{seeds[-1]}"
        basis = (f"{span} seeds per cell: the paper's value inside our 95 % CI (one run: "
                 f"within {' / '.join(tolerances)})")  # fmt: skip
    missing = (
        f"; {len(cells) - len(run)} cells without a run of ours" if len(run) < len(cells) else ""
    )
    worst = sorted((c for c in run if not c.matches),
                   key=lambda c: -abs(c.mean - c.paper) / (abs(c.paper) or 1.0))[:4]  # fmt: skip

    def named(c: PaperCell) -> str:
        # A grid claim over several metrics names the cell's metric too.
        metric = "" if c.item == claim.figure else f" ({c.item.split('.')[-1]})"
        return f"{c.line} at {_x_text(c.at)}{metric} ours {fmt(c.mean)} vs {fmt(c.paper)}"

    far = "; furthest off: " + "; ".join(named(c) for c in worst) if worst else ""
    return (f"{verdict}: {k} of {len(run)} cells match the paper ({', '.join(sources)}) "
            f"[{basis}]{missing}{far}")  # fmt: skip
