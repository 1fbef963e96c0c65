# SPDX-License-Identifier: MIT
"""The paper's claims checked against our points and tables."""

from __future__ import annotations

import math
import operator

import pandas as pd

from .plan import Claim


def check_table_claim(claim: Claim, table: pd.DataFrame | None) -> str:
    """What a summary table says about a claim on one of its columns, line by line."""
    if table is None or not len(table):
        return "no table to compare"
    t = table.set_index("line")
    col = claim.column or ""
    if col not in t.columns:
        return f'the table has no column "{col}"'
    # The rule: a fixed reference (a number, or another line's value) compared with `op`,
    # or, for `above`, another column of the same row.
    ref: float | None = None
    if claim.at_least is not None:
        op, ref, rule = operator.ge, claim.at_least, f"{col} ≥ {claim.at_least:g}"
    elif claim.at_most is not None:
        op, ref, rule = operator.le, claim.at_most, f"{col} ≤ {claim.at_most:g}"
    elif claim.above is not None:
        op, rule = operator.gt, f"{col} > {claim.above}"
    else:
        other, op, word = (
            (claim.below_line, operator.lt, "<")
            if claim.below_line is not None
            else (claim.above_line, operator.gt, ">")
        )
        ref = float(t.loc[other, col])
        rule = f"{col} {word} {other}'s {ref:.3g}"
    held, shown = [], []
    for ln in claim.lines:
        if ln not in t.index:
            continue
        v = float(t.loc[ln, col])
        if ref is None:
            w = float(t.loc[ln, claim.above])
            held.append(op(v, w))
            shown.append(f"{ln} {v:.3g} vs {w:.3g}")
        else:
            held.append(op(v, ref))
            shown.append(f"{ln} {v:.3g}")
    if not held:
        return "no lines to compare"
    n = sum(held)
    verdict = "holds" if n == len(held) else ("partly holds" if n else "does not hold")
    return f"{verdict}: {rule} for {n} of {len(held)} lines ({'; '.join(shown)})"


def check_claim(
    claim: Claim, summary: pd.DataFrame, tables: dict[str, pd.DataFrame] | None = None
) -> str:
    """What our points say about a claim of the form "line A lower than line B", or about a
    table claim (see :func:`check_table_claim`)."""
    if claim.table is not None:
        return check_table_claim(claim, (tables or {}).get(claim.table))
    if not claim.lower or not claim.than:
        return "not checked automatically"
    s = summary[summary["figure"] == claim.figure]
    a = s[s["line"] == claim.lower].set_index("x")
    b = s[s["line"] == claim.than].set_index("x")
    xs = [x for x in a.index if x in b.index]
    if not xs:
        return "no points to compare"
    # A point of fewer than 2 seeds has no confidence interval (its ci95 is NaN): there is
    # nothing to overlap or not, so such points are left out of every judgement on CIs.
    ca, cb = a["ci95"], b["ci95"]
    with_ci = [x for x in xs if not (math.isnan(ca.loc[x]) or math.isnan(cb.loc[x]))]
    no_ci = "no significance can be judged: fewer than 2 seeds per point, so no 95 % CIs"
    if claim.relation == "similar":
        if not with_ci:
            return f"not judged: {no_ci}"
        overlap = [
            x for x in with_ci if abs(a.loc[x, "mean"] - b.loc[x, "mean"]) <= ca.loc[x] + cb.loc[x]
        ]
        verdict = "holds" if len(overlap) == len(with_ci) else ("partly holds" if overlap else
                                                                "does not hold")  # fmt: skip
        unjudged = (
            f"; {len(xs) - len(with_ci)} points without a CI" if len(with_ci) < len(xs) else ""
        )
        return (f"{verdict}: {claim.lower} and {claim.than} overlap within their 95 % CIs at "
                f"{len(overlap)} of {len(with_ci)} points{unjudged}")  # fmt: skip
    lower = [x for x in xs if a.loc[x, "mean"] < b.loc[x, "mean"]]
    verdict = "holds" if len(lower) == len(xs) else ("partly holds" if lower else "does not hold")
    if not with_ci:
        significance = no_ci
    else:
        significant = [
            x
            for x in lower
            if x in with_ci and a.loc[x, "mean"] + ca.loc[x] < b.loc[x, "mean"] - cb.loc[x]
        ]
        significance = f"{len(significant)} with non-overlapping 95 % CIs"
        if len(with_ci) < len(xs):
            significance += f"; {len(xs) - len(with_ci)} points without a CI"
    return f"{verdict}: {claim.lower} is lower at {len(lower)} of {len(xs)} points ({significance})"
