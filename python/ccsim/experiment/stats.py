# SPDX-License-Identifier: MIT
"""Statistics over seeds: a point's mean and CI, paired differences, equivalence, trends.

Every distribution comes from SciPy's ``stats`` (pinned in constraints.txt); the formulas are
the textbook ones, written out so that the degenerate cases a deterministic simulator produces
(two lines with the very same runs, hence differences that are all zero) have an answer instead
of a warning or a NaN:

- a point: mean and half-width of the 95 % interval ``t(0.975, n-1) * s / sqrt(n)``;
- two lines at one point, runs paired by seed (same seed, same loss draws): the differences
  ``d_i = a_i - b_i``, their mean, its 95 % interval and the two-sided p-value of the paired
  t-test (``t = mean(d) / (s_d / sqrt(n))``, n - 1 degrees of freedom);
- equivalence within ``(low, high)``: two one-sided tests (TOST, Schuirmann 1987) on the same
  differences, ``p = max(p_low, p_high)``; equivalent at 5 % exactly when the 90 % interval of
  the mean difference lies inside ``(low, high)``;
- a trend: the least-squares slope of y against x (SciPy's ``linregress``) and its 95 %
  interval ``slope ± t(0.975, k-2) * stderr``.

``docs/experiments.md`` says how the claims use them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

#: The level of every interval and test in the reports.
LEVEL = 0.95


def t_quantile(p: float, df: float) -> float:
    """The ``p`` quantile of Student's t with ``df`` degrees of freedom; NaN if ``df < 1``."""
    if df < 1:
        return math.nan
    # Imported here: SciPy takes a third of a second to import, and only statistics need it.
    from scipy import stats

    return float(stats.t.ppf(p, df))


def t975(df: int) -> float:
    """The 97.5 % quantile of Student's t (the two-sided 95 % interval's factor)."""
    return t_quantile(0.975, df)


def _finite(values: Sequence[float]) -> list[float]:
    return [float(v) for v in values if not math.isnan(float(v))]


def _mean_sd(xs: Sequence[float]) -> tuple[float, float]:
    n = len(xs)
    m = sum(xs) / n
    return m, math.sqrt(sum((x - m) ** 2 for x in xs) / (n - 1)) if n > 1 else math.nan


def mean_ci(values: Sequence[float]) -> tuple[float, float, int]:
    """Mean, half-width of the 95 % confidence interval (t-based), and n (NaNs dropped).

    One value has no interval: its half-width is NaN, never 0."""
    xs = _finite(values)
    n = len(xs)
    if n == 0:
        return math.nan, math.nan, 0
    m, sd = _mean_sd(xs)
    if n == 1:
        return m, math.nan, 1
    return m, t975(n - 1) * sd / math.sqrt(n), n


@dataclass(frozen=True)
class Paired:
    """The mean of paired differences ``a - b`` and its 95 % interval, over ``n`` pairs."""

    n: int
    mean: float
    #: Half-width of the 95 % interval (NaN with fewer than 2 pairs).
    half: float
    #: Two-sided p-value of the paired t-test that the mean difference is 0.
    p_value: float
    #: The pairs are copies of one run (identical replicates): one sample, never evidence.
    deterministic: bool = False

    @property
    def low(self) -> float:
        return self.mean - self.half

    @property
    def high(self) -> float:
        return self.mean + self.half

    @property
    def judged(self) -> bool:
        """Whether an interval exists: 2 pairs or more that are not copies of one run."""
        return self.n >= 2 and not self.deterministic

    @property
    def sign(self) -> int:
        """-1 if ``a`` is significantly below ``b`` (the interval is below 0), +1 if above, 0
        if the interval holds 0 or there is none."""
        if not self.judged:
            return 0
        return -1 if self.high < 0 else (1 if self.low > 0 else 0)


def paired_t(a: Sequence[float], b: Sequence[float]) -> Paired:
    """The paired t-test of ``a - b``: ``a[i]`` and ``b[i]`` are one pair (the same seed). A
    pair with a NaN (an unfinished run) is left out."""
    if len(a) != len(b):
        raise ValueError(f"paired_t: {len(a)} values against {len(b)}")
    d = [float(x) - float(y) for x, y in zip(a, b)]
    d = _finite(d)
    n = len(d)
    if n == 0:
        return Paired(0, math.nan, math.nan, math.nan)
    m, sd = _mean_sd(d)
    if n == 1:
        return Paired(1, m, math.nan, math.nan)
    from scipy import stats

    se = sd / math.sqrt(n)
    if se == 0:
        # Every pair differs by the same amount (often 0: identical runs): no spread, so the
        # difference is exact; it is significant unless it is 0.
        return Paired(n, m, 0.0, 1.0 if m == 0 else 0.0)
    p = 2.0 * float(stats.t.sf(abs(m / se), n - 1))
    return Paired(n, m, t975(n - 1) * se, p)


@dataclass(frozen=True)
class Equivalence:
    """Two one-sided tests of ``low < mean(a - b) < high`` (TOST)."""

    n: int
    mean: float
    #: The 90 % interval of the mean difference: inside (low, high) exactly when p < 0.05.
    ci90: tuple[float, float]
    low: float
    high: float
    #: The larger of the two one-sided p-values.
    p_value: float

    @property
    def equivalent(self) -> bool:
        return self.n >= 2 and self.p_value < 1 - LEVEL


def tost_paired(a: Sequence[float], b: Sequence[float], low: float, high: float) -> Equivalence:
    """TOST on paired differences ``a - b`` with the equivalence bounds ``(low, high)``:
    H0 ``mean <= low`` or ``mean >= high`` against H1 ``low < mean < high``."""
    if not low < high:
        raise ValueError(f"tost_paired: the bounds ({low}, {high}) are empty")
    d = _finite([float(x) - float(y) for x, y in zip(a, b)])
    n = len(d)
    if n < 2:
        m = d[0] if d else math.nan
        return Equivalence(n, m, (math.nan, math.nan), low, high, math.nan)
    from scipy import stats

    m, sd = _mean_sd(d)
    se = sd / math.sqrt(n)
    if se == 0:
        inside = low < m < high
        return Equivalence(n, m, (m, m), low, high, 0.0 if inside else 1.0)
    df = n - 1
    p_low = float(stats.t.sf((m - low) / se, df))  # H0: mean <= low
    p_high = float(stats.t.cdf((m - high) / se, df))  # H0: mean >= high
    h90 = t_quantile(0.95, df) * se
    return Equivalence(n, m, (m - h90, m + h90), low, high, max(p_low, p_high))


@dataclass(frozen=True)
class Slope:
    """The least-squares slope of y on x and its 95 % interval over ``k`` points."""

    k: int
    slope: float
    half: float

    @property
    def sign(self) -> int:
        """-1 or +1 if the interval excludes 0 on that side, else 0 (also with no interval)."""
        if math.isnan(self.half):
            return 0
        lo, hi = self.slope - self.half, self.slope + self.half
        return -1 if hi < 0 else (1 if lo > 0 else 0)


def slope_ci(x: Sequence[float], y: Sequence[float]) -> Slope:
    """Slope of ``y`` against ``x`` and its 95 % interval (k - 2 degrees of freedom); the
    half-width is NaN below 3 points, where no residual variance exists."""
    pts = [(float(u), float(v)) for u, v in zip(x, y) if not (math.isnan(u) or math.isnan(v))]
    k = len(pts)
    if k < 2 or len({u for u, _ in pts}) < 2:
        return Slope(k, math.nan, math.nan)
    from scipy import stats

    fit = stats.linregress([u for u, _ in pts], [v for _, v in pts])
    half = t975(k - 2) * float(fit.stderr) if k >= 3 else math.nan
    return Slope(k, float(fit.slope), half)


def distinct_runs(group: pd.DataFrame) -> int:
    """How many different runs a group of points holds: by their ``run`` fingerprint (a hash of
    what the run produced, :func:`ccsim.experiment.runs.run_fingerprint`) when the points
    carry one, else every row counts as its own run."""
    if "run" not in group:
        return len(group)
    return int(group["run"].nunique())


def deterministic(n: int, distinct: int) -> bool:
    """Whether ``n`` replicates are in fact one sample: several runs that all came out the
    same (a scenario with nothing random in it). They give no interval and no significance."""
    return n >= 2 and distinct <= 1


def summarize(points: pd.DataFrame) -> pd.DataFrame:
    """Mean, 95 % CI half-width and n per (figure, line, x); ``distinct``, how many of the n
    runs differ. Identical runs (:func:`deterministic`) have no interval: ci95 is NaN."""
    out = []
    for (fig, line, x), grp in points.groupby(["figure", "line", "x"], sort=False):
        m, ci, n = mean_ci(list(grp["value"]))
        distinct = distinct_runs(grp)
        if deterministic(n, distinct):
            ci = math.nan
        # How long the runs were: a point whose runs did not finish says "within 40 s".
        sim = float(grp["sim_seconds"].max()) if "sim_seconds" in grp else math.nan
        out.append({"figure": fig, "line": line, "x": x, "mean": m, "ci95": ci, "n": n,
                    "distinct": distinct, "unfinished": int(grp["value"].isna().sum()),
                    "sim_seconds": sim})  # fmt: skip
    return pd.DataFrame(out, columns=SUMMARY_COLUMNS)


#: The columns of :func:`summarize`'s table (summary.parquet).
SUMMARY_COLUMNS = ["figure", "line", "x", "mean", "ci95", "n", "distinct", "unfinished",
                   "sim_seconds"]  # fmt: skip


def _censored(ya: list[float], yb: list[float]) -> tuple[int, float] | None:
    """When in every pair exactly one run did not finish (NaN), always on the same side:
    (-1, p) if ``b``'s runs never finished (``a`` lower), (+1, p) if ``a``'s never did, with
    the two-sided sign test's p-value over the pairs; else None."""
    if not ya:
        return None
    a_open = [math.isnan(u) for u in ya]
    b_open = [math.isnan(v) for v in yb]
    if all(b_open) and not any(a_open):
        sign = -1
    elif all(a_open) and not any(b_open):
        sign = 1
    else:
        return None
    return sign, min(1.0, 2 * 0.5 ** len(ya))


def compare_lines(
    points: pd.DataFrame, figure: str, a: str, b: str, margin: float | None = None
) -> pd.DataFrame:
    """Line ``a`` against line ``b`` of ``figure``, per x, runs paired by seed.

    Columns: ``x``, ``n`` (pairs), ``mean_a``, ``mean_b`` (the lines' means over the pairs),
    ``diff`` (mean of ``a - b``), ``low``, ``high`` (its 95 % interval), ``p_value``, ``sign``
    (-1 a significantly lower, +1 higher, 0 neither or not judged), ``deterministic`` (both
    lines' runs identical across the seeds: one sample, so no interval and no sign) and, with
    a relative ``margin``, ``equivalent`` (TOST within ``± margin * |mean_b|``), its ``p_tost``
    and ``outside`` (the 95 % interval lies wholly outside the margin: significantly not
    equivalent).
    """
    s = points[points["figure"] == figure]
    rows = []
    xs = list(dict.fromkeys(s[s["line"] == a]["x"]))
    for x in xs:
        ga = s[(s["line"] == a) & (s["x"] == x)]
        gb = s[(s["line"] == b) & (s["x"] == x)]
        va = ga.set_index("seed")["value"]
        vb = gb.set_index("seed")["value"]
        seeds = [k for k in va.index if k in vb.index]
        if not seeds:
            continue
        ya = [float(va[k]) for k in seeds]
        yb = [float(vb[k]) for k in seeds]
        both = [(u, v) for u, v in zip(ya, yb) if not (math.isnan(u) or math.isnan(v))]
        p = paired_t([u for u, _ in both], [v for _, v in both])
        same = deterministic(p.n, max(distinct_runs(ga), distinct_runs(gb)))
        if same:
            p = Paired(p.n, p.mean, math.nan, math.nan, deterministic=True)
        mean_a = sum(u for u, _ in both) / len(both) if both else math.nan
        mean_b = sum(v for _, v in both) / len(both) if both else math.nan
        row = {"x": x, "n": p.n, "mean_a": mean_a, "mean_b": mean_b, "diff": p.mean,
               "low": p.low, "high": p.high, "p_value": p.p_value, "sign": p.sign,
               "deterministic": same, "unfinished": ""}  # fmt: skip
        censored = _censored(ya, yb)
        if censored is not None and not same:
            # Every pair has one run that did not finish (NaN: a transfer still going when the
            # run ended) and it is always the same line's: that line took longer in every pair.
            # No interval exists; a sign test over the pairs decides (two-sided, 5 %).
            sign, p_sign = censored
            row.update({"n": len(seeds), "diff": sign * math.inf, "p_value": p_sign,
                        "sign": sign if p_sign < 0.05 else 0,
                        "unfinished": b if sign < 0 else a})  # fmt: skip
        if margin is not None:
            delta = margin * abs(mean_b)
            row["equivalent"], row["p_tost"], row["outside"] = False, math.nan, False
            if len(both) >= 2 and delta > 0 and not same:
                e = tost_paired([u for u, _ in both], [v for _, v in both], -delta, delta)
                row["equivalent"] = e.equivalent
                row["p_tost"] = e.p_value
                row["outside"] = p.low > delta or p.high < -delta
        rows.append(row)
    cols = ["x", "n", "mean_a", "mean_b", "diff", "low", "high", "p_value", "sign",
            "deterministic", "unfinished"]  # fmt: skip
    if margin is not None:
        cols += ["equivalent", "p_tost", "outside"]
    return pd.DataFrame(rows, columns=cols)
