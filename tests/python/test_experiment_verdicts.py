# SPDX-License-Identifier: MIT
"""The verdict scale, effect claims, tolerances the paper's effect refuses, and the report's
opening: synthetic points (no simulation) unless a test says otherwise."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from ccsim import _core, experiment
from ccsim.experiment import report, verdicts
from ccsim.experiment.claims import judge_claim

SEEDS = range(1, 11)
NOISE = [0.01, -0.02, 0.015, 0.0, -0.01, 0.02, -0.015, 0.005, -0.005, 0.01]


@pytest.mark.parametrize(
    ("judged", "claimed", "opposite", "share", "verdict"),
    [
        (10, 5, 0, 0.5, "holds"),
        (10, 3, 0, 0.5, "partly holds"),  # 30 % >= half of 50 %
        (10, 2, 0, 0.5, "does not hold"),  # 20 % < 25 %
        (10, 9, 1, 0.5, "does not hold"),  # one point the other way blocks "holds"
        (10, 0, 5, 0.5, "contradicted"),
        (10, 5, 5, 0.5, "contradicted"),  # the opposite at the share asked outweighs
        (0, 0, 0, 0.5, "not judged"),
        (4, 4, 0, 1.0, "holds"),
        (4, 2, 0, 1.0, "partly holds"),
    ],
)
def test_the_verdict_scale_counts_significant_points_both_ways(
    judged: int, claimed: int, opposite: int, share: float, verdict: str
) -> None:
    assert verdicts.scale(judged, claimed, opposite, share) == verdict


def test_a_verdict_is_read_back_from_its_text_and_said_of_a_main_result() -> None:
    for v in verdicts.VERDICTS:
        assert verdicts.verdict_of(f"{v}: because") == v
    assert verdicts.headline_word("holds") == "reproduced"
    assert verdicts.headline_word("does not hold") == "not reproduced"
    assert verdicts.headline_word("contradicted") == "contradicted"


PLAN = """
id = "t"
scenario = "scenario.toml"
[metric]
column = "goodput_bps"
label = "throughput (Mbit/s)"
[lines.er]
[lines.reno]
[[figures]]
id = "f"
x = { path = "seed", values = [1, 2, 3], label = "safety factor S" }
lines = ["er", "reno"]
{paper}
[[claims]]
figure = "f"
text = "ER-TCP raises throughput 21-42 % over Reno"
headline = true
note = "The plan's note."
{claim}
"""


SCENARIO = """
duration = "1s"
[nodes]
h1 = "host"
h2 = "host"
[links.l]
a = "h1"
b = "h2"
rate = "10Mbps"
delay = "1ms"
[flows.f]
type = "tcp"
src = "h1"
dst = "h2"
"""


def _plan(tmp_path: Path, claim: str, paper: str = "") -> experiment.Plan:
    (tmp_path / "scenario.toml").write_text(SCENARIO)
    (tmp_path / "plan.toml").write_text(PLAN.replace("{claim}", claim).replace("{paper}", paper))
    return experiment.load_plan(tmp_path)


def _points(ratio: float, xs: tuple[int, ...] = (1, 2, 3), spread: float = 1.0) -> pd.DataFrame:
    """Line er = ratio * reno, seed by seed, with a little noise; reno varies by seed."""
    rows = []
    for x in xs:
        for s in SEEDS:
            base = 80.0 + 3 * s + x
            er = base * ratio * (1 + spread * NOISE[s - 1])
            rows += [{"figure": "f", "line": "reno", "x": x, "seed": s, "value": base,
                      "run": f"reno{x}{s}"},
                     {"figure": "f", "line": "er", "x": x, "seed": s, "value": er,
                      "run": f"er{x}{s}"}]  # fmt: skip
    return pd.DataFrame(rows)


RATIO = 'effect = "ratio"\nof = "er"\nthan = "reno"\npaper = [21, 42]\nsource = "abstract"'


@pytest.mark.parametrize(
    ("ratio", "verdict"),
    [
        (1.30, "holds"),  # +30 %: inside the paper's 21-42 %
        (1.14, "partly holds"),  # +14 %: the paper's direction, over half its size, not in range
        (1.05, "does not hold"),  # +5 %, significantly, but under half the paper's +21 %
        (1.002, "does not hold"),  # +0.2 %: no significant effect
        (0.85, "contradicted"),  # -15 %, significantly: the opposite
    ],
)
def test_an_effect_claim_sets_ours_beside_the_papers_range(
    tmp_path: Path, ratio: float, verdict: str
) -> None:
    plan = _plan(tmp_path, RATIO)
    j = judge_claim(plan.claims[0], _points(ratio, spread=0.2), plan=plan)
    assert j.verdict == verdict, j.text
    assert j.detail.startswith("er / reno - 1 (abstract): at 1: paper +21 % to +42 %, ours ")


def test_an_effect_on_identical_runs_is_not_judged(tmp_path: Path) -> None:
    plan = _plan(tmp_path, RATIO)
    pts = _points(1.3)
    pts["run"] = pts["line"] + pts["x"].astype(str)  # every seed a copy of one run
    j = judge_claim(plan.claims[0], pts, plan=plan)
    assert j.verdict == "not judged"
    assert "deterministic: 10 identical runs, no CI" in j.detail


def test_an_effect_read_from_the_papers_values_has_a_band_around_them(tmp_path: Path) -> None:
    paper = (
        '[figures.paper]\nsource = "Table 1"\nrelative_tolerance = 0.01\n'
        "[figures.paper.values]\ner = [128.8, 83.3, 107.6]\nreno = [92.6, 67.4, 75.6]"
    )
    plan = _plan(tmp_path, 'effect = "ratio"\nof = "er"\nthan = "reno"\nband = 0.5', paper)
    # The paper's effects: +39 %, +24 %, +42 %; +30 % is within half of each.
    j = judge_claim(plan.claims[0], _points(1.30, spread=0.2), plan=plan)
    assert j.verdict == "holds", j.text
    assert "(from its values): at 1: paper +19.5 % to +58.6 %" in j.detail
    assert judge_claim(plan.claims[0], _points(1.002), plan=plan).verdict == "does not hold"


def test_a_slope_effect_compares_the_trend_of_one_line(tmp_path: Path) -> None:
    claim = 'effect = "slope"\nof = "er"\npaper = [-8, -2]\nsource = "Table 1 row 10x10"'
    plan = _plan(tmp_path, claim)
    rows = []
    for x in (1, 2, 3):
        for s in SEEDS:
            v = 90 - 5 * x + 0.1 * NOISE[s - 1] * s + 0.01 * x * x
            rows.append({"figure": "f", "line": "er", "x": x, "seed": s, "value": v,
                         "run": f"{x}{s}"})  # fmt: skip
    j = judge_claim(plan.claims[0], pd.DataFrame(rows), plan=plan)
    assert j.verdict == "holds", j.text
    assert "the slope of er against x (Mbit/s per unit of safety factor S)" in j.detail
    flat = pd.DataFrame(rows).assign(value=lambda d: 80 + 0.001 * d["x"] ** 2 * d["seed"])
    assert judge_claim(plan.claims[0], flat, plan=plan).verdict != "holds"


def test_a_tolerance_wider_than_the_papers_own_effect_is_refused(tmp_path: Path) -> None:
    # Paper 000's S sweep falls from 86.0 to 74.1: ±10 % of the value covers that whole effect.
    paper = ('[figures.paper]\nsource = "Table 1"\nrelative_tolerance = 0.1\n'
             "[figures.paper.values]\ner = [86.0, 83.9, 74.1]")  # fmt: skip
    with pytest.raises(experiment.PlanError, match=(
        r"figures\[0\]\.paper\.relative_tolerance: ±10 % of the paper's value \(±8\.01 at 80\) "
        r"is at least half the paper's own largest difference \(86 to 74\.1, the values of line "
        r"er\).*give one below ±5\.95")):  # fmt: skip
        _plan(tmp_path, 'lower = "er"\nthan = "reno"', paper)
    # 3 % sees it.
    _plan(tmp_path, 'lower = "er"\nthan = "reno"', paper.replace("0.1", "0.03"))
    # A paper whose values are all equal shows no effect to hide.
    flat = paper.replace("[86.0, 83.9, 74.1]", "[99.9, 99.9, 99.9]")
    _plan(tmp_path, 'lower = "er"\nthan = "reno"', flat)


def test_a_table_claim_with_a_tolerance_is_refused_since_one_run_judges_nothing(
    tmp_path: Path,
) -> None:
    (tmp_path / "scenario.toml").write_text('duration = "1s"\n')
    (tmp_path / "plan.toml").write_text(
        'id = "t"\nscenario = "scenario.toml"\n[lines.a]\n'
        '[[tables]]\nid = "c"\nlines = ["a"]\nflows = ["f"]\nlink = "l"\n'
        '[[claims]]\ntable = "c"\ntext = "t"\nlines = ["a"]\ncolumn = "jain"\nat_most = 0.9\n'
        "tolerance = 0.02\n"
    )
    with pytest.raises(experiment.PlanError, match=r"claims\[0\]\.tolerance: a table claim is"):
        experiment.load_plan(tmp_path)


def test_a_report_opens_with_the_papers_main_result_judged_as_an_effect(tmp_path: Path) -> None:
    plan = _plan(tmp_path, RATIO)
    pts = _points(1.002)
    summary = experiment.summarize(pts)
    path = report.write_report(plan, summary, tmp_path, False, len(pts), points=pts)
    text = path.read_text()
    head = text.index("## The paper's main result")
    assert head < text.index("## The paper's findings and ours") < text.index("## Setup")
    para = text[head:].split("\n\n")[1]
    assert para.startswith("**Not reproduced.** ER-TCP raises throughput 21-42 % over Reno: er")
    assert para.endswith("The plan's note.")
    assert "10 seeds, each an independent replicate" in text
    # Identical replicates: the report says so, and nothing is judged.
    pts["run"] = pts["line"] + pts["x"].astype(str)
    summary = experiment.summarize(pts)
    text = report.write_report(plan, summary, tmp_path, False, 60, points=pts).read_text()
    assert "**Not judged.**" in text
    assert (
        "6 of 6 points came out the same in every seed (deterministic: 10 identical runs)" in text
    )
    assert "(identical runs)" in text


def test_a_report_names_the_engine_that_ran_and_the_commit_as_the_plans(tmp_path: Path) -> None:
    # ccsim installed from a wheel, by pipx or from another checkout: the checkout's commit
    # is not the build's.
    plan = _plan(tmp_path, RATIO)
    pts = _points(1.3)
    text = report.write_report(plan, experiment.summarize(pts), tmp_path, False, 60,
                               points=pts).read_text()  # fmt: skip
    assert (
        f"Produced by ccsim {_core.__version__} (engine {_core.ENGINE}) from the plan at git "
        f"commit {report.git_commit(tmp_path)}." in text
    )


def test_a_point_whose_runs_did_not_finish_says_within_how_long_never_nan(tmp_path: Path) -> None:
    plan = _plan(tmp_path, RATIO)
    pts = _points(1.3).assign(sim_seconds=40.0)
    pts.loc[pts["line"] == "er", "value"] = float("nan")
    text = report.write_report(plan, experiment.summarize(pts), tmp_path, False, 60,
                               points=pts).read_text()  # fmt: skip
    assert "did not finish within 40 s" in text
    assert "| nan |" not in text and " nan " not in text


def test_a_figures_legend_sits_under_its_axes_and_covers_no_point(tmp_path: Path) -> None:
    from ccsim.experiment import figures

    plan = _plan(tmp_path, RATIO)
    f, ax = figures.point_axes(plan.figures[0], plan, experiment.summarize(_points(1.3)))
    f.canvas.draw()
    legend, axes = ax.get_legend().get_window_extent(), ax.get_window_extent()
    assert legend.y1 <= axes.y0, (legend, axes)
    # The whole legend is inside the figure (tight_layout made room for it).
    assert legend.y0 >= 0
    figures._pyplot().close(f)


def test_a_figure_ticks_its_own_x_values_and_marks_a_point_where_no_run_finished(
    tmp_path: Path,
) -> None:
    from ccsim.experiment import figures

    plan = _plan(tmp_path, RATIO)
    pts = _points(1.3).assign(sim_seconds=40.0)
    pts.loc[(pts["line"] == "er") & (pts["x"] == 3), "value"] = float("nan")
    f, ax = figures.point_axes(plan.figures[0], plan, experiment.summarize(pts))
    # Ticks at 1, 2, 3 only, written plainly (no 1.5 between points, no offset notation).
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1", "2", "3"]
    # er at x = 3 has no mean: a cross of er's colour at the top, and one legend entry for it.
    crosses = [ln for ln in ax.get_lines() if ln.get_marker() == "x"]
    assert len(crosses) == 1 and list(crosses[0].get_xdata()) == [3]
    labels = ax.get_legend_handles_labels()[1]
    assert labels.count(figures.STALLED) == 1
    figures._pyplot().close(f)


def test_a_line_that_never_finished_is_the_slower_one_by_a_sign_test() -> None:
    # Paper 003 at 25 Mbit/s of background: without QoS the transfer never ends within the
    # run (every seed NaN), with QoS it always does. That is the strongest evidence of
    # "QoS is faster" there, not a point without evidence.
    rows = []
    for seed in range(1, 11):
        rows.append(("f", "qos", 25, seed, 1.2 + seed / 100))
        rows.append(("f", "noqos", 25, seed, float("nan")))
    points = pd.DataFrame(rows, columns=["figure", "line", "x", "seed", "value"])
    got = judge_claim(experiment.Claim("f", "QoS faster", "qos", "noqos"), points)
    assert got.verdict == "holds"
    assert "at x = 25 no run of noqos finished" in got.text and "10 pairs" in got.text
    # Five pairs cannot reach 5 % with a sign test (p = 0.062): judged, not significant.
    few = points[points["seed"] <= 5]
    assert judge_claim(experiment.Claim("f", "QoS faster", "qos", "noqos"), few).verdict == (
        "does not hold"
    )
    # Unfinished on both sides in some pairs: no conclusion from those pairs.
    mixed = points.copy()
    mixed.loc[(mixed["line"] == "qos") & (mixed["seed"] == 1), "value"] = float("nan")
    assert (
        "no run of noqos finished"
        not in judge_claim(experiment.Claim("f", "QoS faster", "qos", "noqos"), mixed).text
    )


def test_an_assumption_that_says_a_drawn_figure_is_not_drawn_is_refused(tmp_path: Path) -> None:
    # Paper 001's assumptions said "Fig. 5 is not drawn" while its plan drew fig5_trace.
    (tmp_path / "scenario.toml").write_text(SCENARIO)
    text = PLAN.replace("{paper}", "").replace("{claim}", 'lower = "er"\nthan = "reno"')
    text = text.replace('id = "f"\n', 'id = "f"\ntitle = "Fig. 5-like: one transfer"\n', 1)
    said = '\n[[assumptions]]\ntext = "The paper\'s Fig. 5 is not drawn: it shows one run."\n'
    (tmp_path / "plan.toml").write_text(text + said)
    with pytest.raises(experiment.PlanError, match=(
        r"assumptions\[0\]\.text says Fig\. 5 is not drawn, but f draws it")):  # fmt: skip
        experiment.check_plan(experiment.load_plan(tmp_path))
    # Saying so of a figure the plan does not draw is what assumptions are for.
    (tmp_path / "plan.toml").write_text(text + said.replace("Fig. 5", "Fig. 6"))
    experiment.check_plan(experiment.load_plan(tmp_path))
