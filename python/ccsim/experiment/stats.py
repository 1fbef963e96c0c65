# SPDX-License-Identifier: MIT
"""Statistics over seeds: a point's mean and CI, paired differences, equivalence, trends.

Student's t distribution is computed here, from the regularized incomplete beta function
(Abramowitz and Stegun 26.7.1 and 26.5.8, its continued fraction evaluated by Lentz's method),
not imported from SciPy: ``import scipy.stats`` alone took 1.7 s, a fifth of a cached
reproduction. The formulas are the textbook ones, written out so that the degenerate cases a
deterministic simulator produces (two lines with the very same runs, hence differences that are
all zero) have an answer instead of a warning or a NaN:

- a point: mean and half-width of the 95 % interval ``t(0.975, n-1) * s / sqrt(n)``;
- two lines at one point, runs paired by seed (same seed, same loss draws): the differences
  ``d_i = a_i - b_i``, their mean, its 95 % interval and the two-sided p-value of the paired
  t-test (``t = mean(d) / (s_d / sqrt(n))``, n - 1 degrees of freedom);
- equivalence within ``(low, high)``: two one-sided tests (TOST, Schuirmann 1987) on the same
  differences, ``p = max(p_low, p_high)``; equivalent at 5 % exactly when the 90 % interval of
  the mean difference lies inside ``(low, high)``;
- a trend: the least-squares slope of y against x and its 95 % interval
  ``slope ± t(0.975, k-2) * stderr``, stderr the slope's standard error
  ``sqrt(SSE / (k-2) / Sxx)``.

``docs/experiments.md`` says how the claims use them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import pandas as pd

from .arguments import NONE, NUMBER, TEXT, arguments, of

#: The level of every interval and test in the reports.
LEVEL = 0.95


def _beta_continued_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (A&S 26.5.8), by the modified
    Lentz method; it converges quickly for ``x < (a + 1) / (a + b + 2)``."""
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 500):
        m2 = 2 * m
        # The even step, then the odd step, of the fraction's terms.
        for coeff in (
            m * (b - m) * x / ((a + m2 - 1.0) * (a + m2)),
            -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1.0)),
        ):
            d = 1.0 + coeff * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + coeff / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-16:
            break
    return h


def _incomplete_beta(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b), for ``0 <= x <= 1``."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _beta_continued_fraction(a, b, x) / a
    # The symmetry I_x(a, b) = 1 - I_{1-x}(b, a), where the fraction converges.
    return 1.0 - math.exp(log_front) * _beta_continued_fraction(b, a, 1.0 - x) / b


def t_sf(t: float, df: float) -> float:
    """P(T > t) for Student's t with ``df`` degrees of freedom (A&S 26.7.1:
    P(T > t) = I_{df/(df+t²)}(df/2, 1/2) / 2 for t >= 0)."""
    tail = 0.5 * _incomplete_beta(df / 2.0, 0.5, df / (df + t * t))
    return tail if t >= 0 else 1.0 - tail


def t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with ``df`` degrees of freedom."""
    return t_sf(-t, df)


@lru_cache(maxsize=1024)
def t_quantile(p: float, df: float) -> float:
    """The ``p`` quantile of Student's t with ``df`` degrees of freedom; NaN if ``df < 1`` or
    ``p`` is not inside (0, 1). Found by bisection on :func:`t_cdf` to the last bit."""
    if not df >= 1 or not 0.0 < p < 1.0:
        return math.nan
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    if p == 0.5:
        return 0.0
    low, high = 0.0, 1.0
    while t_cdf(high, df) < p:
        low, high = high, 2.0 * high
    for _ in range(200):
        mid = 0.5 * (low + high)
        if mid in (low, high):
            break
        if t_cdf(mid, df) < p:
            low = mid
        else:
            high = mid
    return 0.5 * (low + high)


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
    se = sd / math.sqrt(n)
    if se == 0:
        # Every pair differs by the same amount (often 0: identical runs): no spread, so the
        # difference is exact; it is significant unless it is 0.
        return Paired(n, m, 0.0, 1.0 if m == 0 else 0.0)
    p = 2.0 * t_sf(abs(m / se), n - 1)
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
    m, sd = _mean_sd(d)
    se = sd / math.sqrt(n)
    if se == 0:
        inside = low < m < high
        return Equivalence(n, m, (m, m), low, high, 0.0 if inside else 1.0)
    df = n - 1
    p_low = t_sf((m - low) / se, df)  # H0: mean <= low
    p_high = t_cdf((m - high) / se, df)  # H0: mean >= high
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
    mx = sum(u for u, _ in pts) / k
    my = sum(v for _, v in pts) / k
    sxx = sum((u - mx) ** 2 for u, _ in pts)
    slope = sum((u - mx) * (v - my) for u, v in pts) / sxx
    if k < 3:
        return Slope(k, slope, math.nan)
    # The slope's standard error: residual variance over k - 2 degrees of freedom, over Sxx.
    sse = sum((v - my - slope * (u - mx)) ** 2 for u, v in pts)
    return Slope(k, slope, t975(k - 2) * math.sqrt(sse / (k - 2) / sxx))


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


@arguments(points=of(pd.DataFrame, "a pandas DataFrame"))
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


@arguments(
    points=of(pd.DataFrame, "a pandas DataFrame"),
    figure=TEXT,
    a=TEXT,
    b=TEXT,
    margin=NUMBER | NONE,
)
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
    # The two lines' points by x, each {seed: value} with the distinct run fingerprints, in
    # one pass over the figure's rows (filtering the frame per x and line took 2 s of a
    # cached full p001's 3 s, issue 33).
    s = points[points["figure"] == figure]
    runs = s["run"] if "run" in s else pd.Series(range(len(s)), index=s.index)
    by: dict[str, dict[Any, tuple[dict[Any, float], set[Any]]]] = {a: {}, b: {}}
    for line, x, seed, value, run in zip(s["line"], s["x"], s["seed"], s["value"], runs):
        of_line = by.get(line)
        if of_line is None:
            continue
        values, fingerprints = of_line.setdefault(x, ({}, set()))
        values[seed] = value
        if isinstance(run, str) or (run is not None and run == run):  # nunique: NaN apart
            fingerprints.add(run)
    rows = []
    for x, (va, runs_a) in by[a].items():
        vb, runs_b = by[b].get(x, ({}, set()))
        seeds = [k for k in va if k in vb]
        if not seeds:
            continue
        ya = [float(va[k]) for k in seeds]
        yb = [float(vb[k]) for k in seeds]
        both = [(u, v) for u, v in zip(ya, yb) if not (math.isnan(u) or math.isnan(v))]
        p = paired_t([u for u, _ in both], [v for _, v in both])
        same = deterministic(p.n, max(len(runs_a), len(runs_b)))
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
