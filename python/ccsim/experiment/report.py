# SPDX-License-Identifier: MIT
"""The Markdown report: the paper's findings beside ours, every figure, point and table."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from .claims import check_claim
from .plan import Plan


def write_report(
    plan: Plan,
    summary: pd.DataFrame,
    out: Path,
    quick: bool,
    n_runs: int,
    tables: dict[str, pd.DataFrame] | None = None,
) -> Path:
    lines = [f"# {plan.id}: {plan.title}", ""]
    if plan.paper:
        lines += [f"Paper: {plan.paper}", ""]
    mode = "quick (fewer points and seeds; for CI, not for conclusions)" if quick else "full"
    lines += [f"Mode: {mode}. Runs: {n_runs}. Every point: mean and 95 % confidence interval "
              "(Student t) over seeds 1..n.", ""]  # fmt: skip
    lines += ["## The paper's findings and ours", "", "| figure | the paper says | our points |",
              "|---|---|---|"]  # fmt: skip
    for c in plan.claims:
        lines.append(f"| {c.figure} | {c.text} | {check_claim(c, summary, tables)} |")
    lines.append("")
    for fig in plan.figures:
        lines += [f"## {fig.id}: {fig.title}", "", f"![{fig.id}]({fig.id}.png)", ""]
        lines += [f"| {fig.x_label} | line | mean {fig.metric.label} | ± 95 % CI | n |",
                  "|---|---|---|---|---|"]  # fmt: skip
        s = summary[summary["figure"] == fig.id]
        for _, r in s.iterrows():
            ci = "-" if math.isnan(r["ci95"]) else f"{r['ci95']:.4g}"
            note = f" ({int(r['unfinished'])} unfinished)" if r["unfinished"] else ""
            x = float(r["x"]) * fig.x_scale
            lines.append(f"| {x:g} | {plan.lines[r['line']].label} | {r['mean']:.4g} | {ci} | "
                         f"{int(r['n'])}{note} |")  # fmt: skip
        lines.append("")
    for sf in plan.series_figures:
        lines += [f"## {sf.id}: {sf.title}", "", f"![{sf.id}]({sf.id}.png)", ""]
    for t in plan.tables:
        df = (tables or {}).get(t.id)
        lines += [f"## {t.id}: {t.title}", "",
                  f"Measured after {t.from_s:g} s; convergence: smoothed over {t.window_s:g} s, "
                  f"Jain's index at or above {t.jain_threshold:g} to the end.", "",
                  "Rate swing: each flow's coefficient of variation over the trace samples, "
                  "averaged over the flows (lower is steadier).", "",
                  "| line | utilization | Jain's index | loss rate | convergence (s) | rate swing "
                  "| shares |",
                  "|---|---|---|---|---|---|---|"]  # fmt: skip
        if df is not None:
            for _, r in df.iterrows():
                conv = (
                    "not converged"
                    if math.isnan(r["convergence_s"])
                    else f"{r['convergence_s']:.0f}"
                )
                lines.append(f"| {plan.lines[r['line']].label} | {r['utilization']:.3f} | "
                             f"{r['jain']:.3f} | {r['loss_rate']:.2e} | {conv} | "
                             f"{r['rate_cv']:.2f} | {r['shares']} |")  # fmt: skip
        lines.append("")
    if plan.assumptions:
        lines += ["## Assumptions", ""] + [f"- {a}" for a in plan.assumptions] + [""]
    path = out / "report.md"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path
