# SPDX-License-Identifier: MIT
"""Paper reproductions: a declarative plan, its runs, statistics, claims, figures and a report.

One module per concern, so that each can change alone (an HTML report beside the Markdown one
reads the same tables without touching the statistics)::

    plan.py ── plan.toml read (the file format is documented there and in
       │       docs/experiments.md); checks.py: checked against the scenario by probe runs
    runs.py ── the runs of a plan, one per (figure or table, line, x, seed); a point's value
       │
    stats.py ─ means, confidence intervals, paired tests        tables.py ── summaries of
       │                                                                    time-series runs
    claims.py ─ the paper's findings checked against our points and tables, each on the one
       │          scale of verdicts.py
    figures.py, report.py ── PNG/SVG figures, report.md
       │
    reproduction.py ── ``ccsim reproduce``: all of the above, resumable through the sweep store

This package is imported only by the commands that need it (it loads pandas and, for
statistics, SciPy).
"""

from __future__ import annotations

from collections.abc import Sequence

from .checks import check_plan
from .claims import check_claim, check_table_claim
from .figures import draw_figure, draw_series_figure
from .plan import (
    Claim,
    Figure,
    Line,
    Metric,
    Plan,
    PlanError,
    SeriesFigure,
    SummaryTable,
    find_experiment,
    load_plan,
)
from .report import write_report
from .reproduction import (
    Reproduction,
    default_out,
    paired_comparisons,
    reproduce,
    rerun_command,
    run_cli,
)
from .runs import plan_runs, point_values
from .stats import compare_lines, summarize
from .tables import flow_rates, jain_index, link_capacity, link_rate, table_row

__all__: Sequence[str] = [
    "Claim",
    "Figure",
    "Line",
    "Metric",
    "Plan",
    "PlanError",
    "Reproduction",
    "SeriesFigure",
    "SummaryTable",
    "check_claim",
    "check_plan",
    "check_table_claim",
    "compare_lines",
    "default_out",
    "draw_figure",
    "draw_series_figure",
    "find_experiment",
    "flow_rates",
    "jain_index",
    "link_capacity",
    "link_rate",
    "load_plan",
    "paired_comparisons",
    "plan_runs",
    "point_values",
    "reproduce",
    "rerun_command",
    "run_cli",
    "summarize",
    "table_row",
    "write_report",
]
