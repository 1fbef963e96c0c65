# SPDX-License-Identifier: MIT
"""The statistics of the reports (ccsim.experiment.stats), against values worked by hand.

With 2 degrees of freedom Student's t has a closed form, which the hand values use:
``cdf(t) = 1/2 + t / (2 sqrt(2 + t^2))`` and the 97.5 % quantile ``4.3027``.
"""

from __future__ import annotations

import math

import pandas as pd
import pytest

from ccsim import sweep
from ccsim.experiment import stats

T975_DF2 = 4.302653


def t_cdf_df2(t: float) -> float:
    return 0.5 + t / (2 * math.sqrt(2 + t * t))


def test_the_t_quantiles_are_the_tables_and_undefined_below_one_degree_of_freedom() -> None:
    for df, q in [(1, 12.706), (2, 4.303), (10, 2.228), (29, 2.045), (39, 2.023), (120, 1.980)]:
        assert stats.t975(df) == pytest.approx(q, abs=5e-4), df
    assert stats.t_quantile(0.95, 2) == pytest.approx(2.920, abs=5e-4)
    assert math.isnan(stats.t975(0))


def test_sweep_takes_its_interval_from_the_statistics_module() -> None:
    assert sweep.mean_ci([1.0, 2.0, 3.0]) == stats.mean_ci([1.0, 2.0, 3.0])
    assert sweep.t975(7) == stats.t975(7)


def test_a_paired_t_test_of_differences_1_2_3() -> None:
    # d = (1, 2, 3): mean 2, s = 1, se = 1/sqrt(3), t = 2 sqrt(3) = 3.4641 with 2 df.
    p = stats.paired_t([3.0, 5.0, 7.0], [2.0, 3.0, 4.0])
    assert (p.n, p.mean) == (3, 2.0)
    assert p.half == pytest.approx(T975_DF2 / math.sqrt(3), rel=1e-6)
    assert p.p_value == pytest.approx(2 * (1 - t_cdf_df2(2 * math.sqrt(3))), rel=1e-9)
    assert p.p_value == pytest.approx(0.0742, abs=1e-4)
    assert p.sign == 0, "the 95 % interval (-0.48, 4.48) holds 0"


def test_the_paired_test_agrees_with_scipys_ttest_rel() -> None:
    from scipy.stats import ttest_rel

    a = [12.1, 9.8, 11.4, 10.9, 13.0, 12.2, 10.1]
    b = [11.0, 9.9, 10.2, 10.1, 12.1, 11.0, 10.0]
    p = stats.paired_t(a, b)
    assert p.p_value == pytest.approx(float(ttest_rel(a, b).pvalue), rel=1e-9)
    assert p.sign == 1 and p.low > 0


def test_a_pair_with_an_unfinished_run_is_left_out_and_one_pair_has_no_interval() -> None:
    p = stats.paired_t([3.0, math.nan, 7.0, 1.0], [2.0, 1.0, 4.0, 0.0])
    assert p.n == 3
    one = stats.paired_t([3.0], [1.0])
    assert (one.n, one.mean) == (1, 2.0) and math.isnan(one.half) and not one.judged
    assert one.sign == 0


def test_identical_runs_differ_by_exactly_nothing_and_a_constant_shift_is_significant() -> None:
    # Two lines whose runs are the same (a mechanism that never triggers) give differences that
    # are all 0: no spread, p = 1, not a NaN or a warning.
    same = stats.paired_t([1.0, 2.0, 3.0], [1.0, 2.0, 3.0])
    assert (same.mean, same.half, same.p_value, same.sign) == (0.0, 0.0, 1.0, 0)
    shifted = stats.paired_t([1.5, 2.5, 3.5], [1.0, 2.0, 3.0])
    assert (shifted.mean, shifted.half, shifted.sign) == (0.5, 0.0, 1)


def test_two_one_sided_tests_by_hand() -> None:
    # d = (1, 2, 3), bounds (-3, 3): t_high = (2 - 3) / se = -sqrt(3), p_high = cdf(-sqrt(3));
    # p_low = sf((2 + 3) / se) is far smaller, so p = p_high = 0.1127: not equivalent.
    e = stats.tost_paired([1.0, 2.0, 3.0], [0.0, 0.0, 0.0], -3.0, 3.0)
    assert e.p_value == pytest.approx(t_cdf_df2(-math.sqrt(3)), rel=1e-9)
    assert e.p_value == pytest.approx(0.1127, abs=1e-4)
    assert not e.equivalent
    # The 90 % interval: 2 ± t(0.95, 2) / sqrt(3) = 2 ± 1.6859, which reaches past 3.
    assert e.ci90[1] == pytest.approx(2 + 2.919986 / math.sqrt(3), rel=1e-6)
    # Wider bounds: the 90 % interval (0.31, 3.69) fits inside (-4, 4), so equivalent.
    assert stats.tost_paired([1.0, 2.0, 3.0], [0.0, 0.0, 0.0], -4.0, 4.0).equivalent


def test_equivalence_is_not_shown_from_one_pair_and_bounds_must_not_be_empty() -> None:
    assert not stats.tost_paired([1.0], [1.0], -1.0, 1.0).equivalent
    with pytest.raises(ValueError, match="empty"):
        stats.tost_paired([1.0, 2.0], [1.0, 2.0], 0.0, 0.0)


def test_a_regression_slope_and_its_interval_by_hand() -> None:
    # (0,0) (1,1) (2,1) (3,2): slope Sxy/Sxx = 3/5 = 0.6; residuals (-.1, .3, -.3, .1), SSE 0.2,
    # s^2 = 0.1, stderr sqrt(0.1 / 5) = 0.14142, half-width 4.3027 * 0.14142 = 0.6085.
    s = stats.slope_ci([0.0, 1.0, 2.0, 3.0], [0.0, 1.0, 1.0, 2.0])
    assert s.slope == pytest.approx(0.6)
    assert s.half == pytest.approx(T975_DF2 * math.sqrt(0.02), rel=1e-6)
    assert s.sign == 0, "the interval (-0.01, 1.21) holds 0"
    assert stats.slope_ci([0.0, 1.0, 2.0], [1.0, 3.0, 5.0]).sign == 1
    assert stats.slope_ci([0.0, 1.0, 2.0], [5.0, 3.1, 0.9]).sign == -1
    two = stats.slope_ci([0.0, 1.0], [0.0, 1.0])
    assert two.slope == pytest.approx(1.0) and math.isnan(two.half) and two.sign == 0


def _points(rows: list[tuple[str, float, int, float]]) -> pd.DataFrame:
    return pd.DataFrame(
        [{"figure": "f", "line": ln, "x": x, "seed": s, "value": v} for ln, x, s, v in rows]
    )


def test_lines_are_compared_seed_by_seed_at_each_x() -> None:
    # At x = 1, a is below b by 1 in every seed although the seeds spread far more than that:
    # the paired test sees it, overlapping independent CIs would not.
    rows = []
    for seed, base in enumerate([10.0, 20.0, 30.0], start=1):
        rows += [("a", 1.0, seed, base - 1.0 + 0.01 * seed), ("b", 1.0, seed, base)]
        rows += [("a", 2.0, seed, base), ("b", 2.0, seed, base)]
    c = stats.compare_lines(_points(rows), "f", "a", "b", margin=0.05)
    assert list(c["x"]) == [1.0, 2.0]
    first = c.iloc[0]
    assert first["n"] == 3 and first["diff"] == pytest.approx(-0.98)
    assert first["sign"] == -1 and first["high"] < 0
    assert first["mean_b"] == pytest.approx(20.0)
    second = c.iloc[1]
    assert second["sign"] == 0 and second["diff"] == 0.0 and bool(second["equivalent"])


def test_pairs_are_matched_by_seed_whatever_the_row_order_and_other_rows_stay_out() -> None:
    # Line b's rows come in another seed order, a seed of a has no partner in b, and rows of
    # another line, another figure and another x are interleaved with them.
    rows = [("b", 1.0, 3, 33.0), ("a", 1.0, 1, 10.0), ("c", 1.0, 1, -99.0), ("b", 1.0, 1, 12.0),
            ("a", 1.0, 2, 20.0), ("a", 1.0, 3, 30.0), ("b", 1.0, 2, 21.0), ("a", 1.0, 4, 40.0),
            ("b", 2.0, 1, 5.0)]  # fmt: skip
    pts = _points(rows)
    other = pts.assign(figure="g", value=pts["value"] * 100)
    mixed = pd.concat([other.iloc[:4], pts, other.iloc[4:]], ignore_index=True)
    mixed["run"] = [f"r{i}" for i in range(len(mixed))]
    c = stats.compare_lines(mixed, "f", "a", "b")
    assert list(c["x"]) == [1.0], "x = 2 has no point of a"
    row = c.iloc[0]
    # Pairs (10, 12), (20, 21), (30, 33): differences -2, -1, -3.
    assert row["n"] == 3 and row["diff"] == pytest.approx(-2.0)
    assert row["mean_a"] == pytest.approx(20.0) and row["mean_b"] == pytest.approx(22.0)
    # The same three runs in each line, given one fingerprint per line: one sample, no interval.
    same = mixed.assign(run=mixed["line"])
    assert bool(stats.compare_lines(same, "f", "a", "b").iloc[0]["deterministic"])


def test_students_t_computed_here_agrees_with_scipys_to_ten_digits() -> None:
    from scipy import stats as scipy_stats

    for df in (1, 2, 3, 4, 9, 2.5, 7.3, 30, 1000):
        for p in (0.6, 0.9, 0.95, 0.975, 0.995):
            assert stats.t_quantile(p, df) == pytest.approx(
                float(scipy_stats.t.ppf(p, df)), rel=1e-10
            ), (p, df)
    for t in (-2.0, 0.1, 1.0, 3.3, 10.0, 40.0):
        for df in (1, 2.7, 4, 30, 300):
            assert stats.t_sf(t, df) == pytest.approx(float(scipy_stats.t.sf(t, df)), rel=1e-10)
    fit = scipy_stats.linregress([1, 2, 3, 4, 5], [2.1, 3.9, 6.2, 7.8, 10.1])
    slope = stats.slope_ci([1, 2, 3, 4, 5], [2.1, 3.9, 6.2, 7.8, 10.1])
    assert slope.slope == pytest.approx(float(fit.slope), rel=1e-12)
    assert slope.half == pytest.approx(stats.t975(3) * float(fit.stderr), rel=1e-12)
    assert math.isnan(stats.t_quantile(0.975, 0.5)) and math.isnan(stats.t_quantile(1.0, 4))
    assert math.isnan(stats.t_quantile(0.975, math.nan))


def test_a_report_s_statistics_do_not_import_scipy() -> None:
    # import scipy.stats took 1.7 s, a fifth of a cached reproduction of paper 003.
    import subprocess
    import sys

    code = (
        "import sys; from ccsim.experiment import stats as s; "
        "s.mean_ci([1.0, 2.0, 4.0]); s.paired_t([1.0, 2.0, 4.0], [1.5, 2.0, 3.0]); "
        "s.tost_paired([1.0, 2.0, 4.0], [1.5, 2.0, 3.0], -1.0, 1.0); "
        "s.slope_ci([1, 2, 3], [1.0, 2.5, 2.9]); print('scipy' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
