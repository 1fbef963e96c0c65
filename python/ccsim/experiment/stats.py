# SPDX-License-Identifier: MIT
"""Statistics over seeds: a point's mean and 95 % confidence interval."""

from __future__ import annotations

import pandas as pd

from ccsim.sweep import mean_ci


def summarize(points: pd.DataFrame) -> pd.DataFrame:
    """Mean, 95 % CI half-width and n per (figure, line, x)."""
    out = []
    for (fig, line, x), grp in points.groupby(["figure", "line", "x"], sort=False):
        m, ci, n = mean_ci(list(grp["value"]))
        out.append({"figure": fig, "line": line, "x": x, "mean": m, "ci95": ci, "n": n,
                    "unfinished": int(grp["value"].isna().sum())})  # fmt: skip
    return pd.DataFrame(out)
