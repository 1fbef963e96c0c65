# SPDX-License-Identifier: MIT
"""Claims judged by paired statistics, on small synthetic points (no simulation).

Two lines' runs at one x share a seed; ``_points`` builds them so: each seed has a base value
that both lines share (the seeds spread far more than the lines differ, as with loss draws),
and line a adds its own gap plus a small per-seed jitter.
"""

from __future__ import annotations

import shlex
import subprocess
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest

from ccsim import experiment
from ccsim.experiment import figures, report, reproduction

SEEDS = range(1, 9)
JITTER = [0.02, -0.01, 0.03, -0.02, 0.0, 0.01, -0.03, 0.015]


def _points(xs: list[float], gap: Callable[[float], float], jitter: float = 1.0) -> pd.DataFrame:
    rows = []
    for x in xs:
        for s in SEEDS:
            base = 10.0 * s + x
            rows.append({"figure": "f", "line": "b", "x": x, "seed": s, "value": base})
            value = base + gap(x) + jitter * JITTER[s - 1]
            rows.append({"figure": "f", "line": "a", "x": x, "seed": s, "value": value})
    return pd.DataFrame(rows)


def _claim(relation: str = "lower", **kw: object) -> experiment.Claim:
    c = experiment.Claim("f", "text", "a", "b", relation)
    for k, v in kw.items():
        setattr(c, k, v)
    return c


XS = [1.0, 2.0, 3.0, 4.0]


def test_a_lower_claim_holds_when_every_point_is_significantly_lower() -> None:
    # Independent 95 % CIs over the seeds (spread 10 per seed) would overlap everywhere; the
    # paired differences (-0.5 ± 0.02) do not.
    verdict = experiment.check_claim(_claim(), _points(XS, lambda x: -0.5))
    assert verdict == (
        "holds: a is lower at 4 of 4 points, significantly (paired 95 % CI) at 4 of 4 (100 %; "
        "the claim needs 50 %); significantly higher at none"
    )


def test_a_lower_claim_significant_at_under_half_its_share_does_not_hold() -> None:
    # Lower at every point, but by more than the noise only at x = 4: 1 of 4 is a quarter,
    # under half of the 50 % asked for, so not even "partly holds".
    pts = _points(XS, lambda x: -0.5 if x == 4.0 else -0.01)
    verdict = experiment.check_claim(_claim(min_significant_share=0.75), pts)
    assert verdict.startswith("does not hold: a is lower at 4 of 4 points, significantly")
    assert "at 1 of 4 (25 %; the claim needs 75 %)" in verdict
    # The share is the plan's to state: a quarter of the points is enough if it says so.
    assert experiment.check_claim(_claim(min_significant_share=0.25), pts).startswith("holds")


def test_a_lower_claim_significant_at_half_its_share_partly_holds() -> None:
    # 1 of 4 points (25 %) significant, the claim asks for 50 %: half the share, none opposite.
    pts = _points(XS, lambda x: -0.5 if x == 4.0 else -0.01)
    assert experiment.check_claim(_claim(), pts).startswith("partly holds: a is lower at 4 of 4")


def test_a_lower_claim_with_a_point_significantly_the_other_way_does_not_hold() -> None:
    pts = _points(XS, lambda x: 0.5 if x == 1.0 else -0.5)
    verdict = experiment.check_claim(_claim(min_significant_share=0.75), pts, x_scale=100)
    assert verdict.startswith("does not hold: a is lower at 3 of 4 points")
    assert verdict.endswith("significantly higher at x = 100")


def test_a_lower_claim_whose_opposite_is_significant_is_contradicted() -> None:
    # a is significantly HIGHER at every point: the data say the opposite of the claim.
    verdict = experiment.check_claim(_claim(), _points(XS, lambda x: 0.5))
    assert verdict.startswith("contradicted: a is lower at 0 of 4 points")
    assert verdict.endswith("significantly higher at x = 1, 2, 3, 4")


def test_identical_replicates_are_deterministic_and_never_evidence() -> None:
    # Eight seeds that are copies of one run (the same fingerprint): one sample. Before, their
    # spread of 0 made every difference "significant" with an interval of width 0.
    rows = []
    for x in XS:
        for s in SEEDS:
            rows.append({"figure": "f", "line": "b", "x": x, "seed": s, "value": 10.0, "run": "B"})
            rows.append({"figure": "f", "line": "a", "x": x, "seed": s, "value": 9.0, "run": "A"})
    pts = pd.DataFrame(rows)
    verdict = experiment.check_claim(_claim(), pts)
    assert verdict.startswith("not judged: a is lower at 4 of 4 points (deterministic: 8")
    assert "significantly" not in verdict
    assert experiment.check_claim(_claim("similar"), pts).startswith("not judged")
    summary = experiment.summarize(pts)
    assert list(summary["distinct"]) == [1] * 8 and summary["ci95"].isna().all()
    # The same values from runs that differ (other fingerprints) are eight samples.
    pts["run"] = [f"{r['line']}{r['seed']}" for _, r in pts.iterrows()]
    assert experiment.check_claim(_claim(), pts).startswith("holds")


def test_a_higher_claim_reads_the_difference_the_other_way() -> None:
    verdict = experiment.check_claim(_claim("higher"), _points(XS, lambda x: 0.5))
    assert verdict.startswith("holds: a is higher at 4 of 4 points")
    assert verdict.endswith("significantly lower at none")


def test_a_trend_holds_only_if_the_gap_grows_significantly() -> None:
    grows = _points(XS, lambda x: -0.2 * x - 0.01 * x * x)
    verdict = experiment.check_claim(_claim(trend="increasing"), grows)
    assert verdict.startswith("holds")
    assert "trend claimed: the gap b - a grows with x; its slope is 0.25 per unit of x" in verdict
    assert verdict.endswith(": as claimed")
    # Lower everywhere, significantly, but by the same amount: only partly.
    flat = _points(XS, lambda x: -0.5 + (0.001 if x % 2 else 0.0))
    verdict = experiment.check_claim(_claim(trend="increasing"), flat)
    assert verdict.startswith("partly holds")
    assert verdict.endswith(": no significant trend")
    # A gap that shrinks: the opposite of the claimed trend, significantly.
    shrinks = _points(XS, lambda x: -1.0 + 0.2 * x + 0.01 * x * x)
    verdict = experiment.check_claim(_claim(trend="increasing"), shrinks)
    assert verdict.startswith("contradicted") and verdict.endswith("the opposite, significantly")
    assert experiment.check_claim(_claim(trend="decreasing"), shrinks).startswith("holds")


def test_a_slope_is_said_in_the_axes_units() -> None:
    plan = experiment.Plan("t", "", "", Path("."), "", 1, 1, {}, [], [], [])
    metric = experiment.Metric("flows", "v", "transfer time (s)")
    plan.figures.append(experiment.Figure("f", "", "x", XS, XS, "packet loss rate (%)", [],
                                          ["a", "b"], metric, x_scale=100))  # fmt: skip
    grows = _points(XS, lambda x: -0.2 * x - 0.01 * x * x)
    verdict = experiment.check_claim(_claim(trend="increasing"), grows, plan=plan)
    assert "its slope is 0.0025 s per % of packet loss rate" in verdict


def test_a_trend_over_two_points_is_not_judged_and_the_claim_is_only_partly() -> None:
    verdict = experiment.check_claim(_claim(trend="increasing"), _points(XS[:2], lambda x: -x))
    assert verdict.startswith("partly holds")
    assert verdict.endswith("not judged (2 points with a CI: a slope's interval needs 3)")


def test_a_similar_claim_holds_within_the_margin_and_fails_outside_it() -> None:
    # b's means are 45 + x, so ±5 % is about ±2.3: a gap of 0.1 is well inside.
    inside = experiment.check_claim(_claim("similar"), _points(XS, lambda x: 0.1))
    assert inside.startswith(
        "holds: a within ±5 % of b (paired two one-sided tests, 5 %) at 4 of 4 points (100 %"
    )
    # 10 % above b: outside the margin at every point, and significantly higher.
    outside = _points(XS, lambda x: 0.1 * (45 + x))
    verdict = experiment.check_claim(_claim("similar"), outside, x_scale=10)
    assert verdict == (
        "contradicted: a within ±5 % of b (paired two one-sided tests, 5 %) at 0 of 4 points "
        "(0 %; the claim needs 50 %); significantly outside the margin at x = 10, 20, 30, 40; "
        "a significantly lower (paired 95 % CI) at x = none, higher at x = 10, 20, 30, 40"
    )
    # The margin is the plan's: 15 % takes the 10 % gap in.
    assert experiment.check_claim(_claim("similar", margin=0.15), outside).startswith("holds")


def test_a_similar_claim_lists_where_one_line_is_still_significantly_lower() -> None:
    # The byte-counting control of paper 001: equivalent at two points, lower beyond the margin
    # at the other two. Outside the margin at the share asked (half): the opposite holds there.
    pts = _points(XS, lambda x: -3.0 if x <= 2 else 0.0)
    verdict = experiment.check_claim(_claim("similar"), pts)
    assert verdict.startswith("contradicted: a within ±5 % of b (paired two one-sided tests, 5 %)")
    assert "at 2 of 4 points (50 %; the claim needs 50 %)" in verdict
    assert "a significantly lower (paired 95 % CI) at x = 1, 2, higher at x = none" in verdict
    # Outside at one point of four only (under the share asked): equivalence at three does not
    # make it hold, since one point says the opposite; asking for a fifth, that one contradicts.
    pts = _points(XS, lambda x: -3.0 if x == 1 else 0.0)
    assert experiment.check_claim(_claim("similar"), pts).startswith("does not hold")
    assert experiment.check_claim(_claim("similar", min_significant_share=0.2), pts).startswith(
        "contradicted"
    )


def _table(values: dict[str, list[float]], column: str = "utilization") -> pd.DataFrame:
    rows = []
    for line, vs in values.items():
        for s, v in enumerate(vs, start=1):
            rows.append({"line": line, "seed": s, column: v})
    return pd.DataFrame(rows)


def _table_claim(**kw: object) -> experiment.Claim:
    c = experiment.Claim("case", "text", None, None, table="case", column="utilization")
    for k, v in kw.items():
        setattr(c, k, v)
    return c


def test_a_single_run_table_claim_is_not_judged_but_shows_its_values() -> None:
    t = _table({"hs": [0.94], "bic": [0.99], "fast": [0.80]})
    c = _table_claim(lines=["hs", "bic", "fast"], at_least=0.95)
    assert experiment.check_table_claim(c, t) == (
        "not judged: utilization ≥ 0.95: one run per line: no 95 % CI (hs 0.94; bic 0.99; fast 0.8)"
    )


def test_a_table_claim_over_several_seeds_is_judged_by_its_interval() -> None:
    t = _table({"hs": [0.97, 0.98, 0.99], "bic": [0.93, 0.99, 0.96], "fast": [0.5, 0.6, 0.55]})
    c = _table_claim(lines=["hs", "bic", "fast"], at_least=0.95)
    verdict = experiment.check_table_claim(c, t)
    # hs holds, fast is significantly below (the opposite), bic's CI reaches 0.95.
    assert verdict.startswith(
        "does not hold: utilization ≥ 0.95 significantly (95 % CI over 3 seeds) for 1 of 3 "
        "lines (hs 0.98 ± "
    )
    assert "the opposite, significantly: fast 0.55 ± " in verdict
    assert "too close to call (the CI reaches the rule): bic 0.96 ± " in verdict
    # A value whose mean is above the rule but whose CI reaches it is never counted as held
    # (paper 002's "≥ 0.95 for 0 of 4 lines (scalable 0.954 ...)" read as a contradiction).
    assert "for 1 of 3" in verdict
    # Against another line, seed by seed: a below b by 0.01 in every seed is significant.
    t = _table({"a": [0.50, 0.70, 0.90], "b": [0.51, 0.71, 0.91]})
    c = _table_claim(lines=["a"], below_line="b")
    assert experiment.check_table_claim(c, t).startswith("holds: utilization < b's 0.71")


def test_a_table_claim_whose_every_line_breaks_the_rule_is_contradicted() -> None:
    t = _table({"hs": [0.5, 0.6, 0.55], "bic": [0.6, 0.62, 0.61]})
    c = _table_claim(lines=["hs", "bic"], at_least=0.95)
    assert experiment.check_table_claim(c, t).startswith("contradicted: utilization ≥ 0.95")


def test_a_table_claim_on_identical_runs_is_deterministic() -> None:
    t = _table({"hs": [0.97, 0.97, 0.97]}).assign(run="same")
    c = _table_claim(lines=["hs"], at_least=0.95)
    assert experiment.check_table_claim(c, t).startswith(
        "not judged: utilization ≥ 0.95: deterministic: 3 identical runs"
    )


def _bound(**kw: object) -> experiment.Claim:
    c = experiment.Claim("f", "text", None, None)
    c.lines = ["a"]
    for k, v in kw.items():
        setattr(c, k, v)
    return c


def test_a_bound_claim_holds_when_every_points_interval_is_within_the_bound() -> None:
    # Line a's points: 10 * seed + x + jitter, so means 45.5 + x over 8 seeds (CI about ±20).
    pts = _points(XS, lambda x: 0.0)
    verdict = experiment.check_claim(_bound(at_most=100.0), pts)
    assert verdict.startswith("holds: a <= 100 at 4 of 4 points (a's largest run 84.02); outside")
    assert "the whole 95 % CI within at 4 of 4 (100 %" in verdict
    # 50 is above every mean (46.5 ... 49.5) but inside every interval: within, not significantly.
    verdict = experiment.check_claim(_bound(at_most=50.0), pts)
    assert verdict.startswith("does not hold: a <= 50 at 4 of 4 points")
    assert "the whole 95 % CI within at 0 of 4 (0 %" in verdict
    # 10 is below every point's whole interval: the data say the opposite.
    assert experiment.check_claim(_bound(at_most=10.0), pts).startswith("contradicted")


def test_a_bound_claim_names_the_points_outside_it_and_counts_a_missing_value_as_outside() -> None:
    pts = _points(XS, lambda x: 0.0)
    pts.loc[(pts["line"] == "a") & (pts["x"] == 4.0), "value"] = float("nan")
    verdict = experiment.check_claim(_bound(at_least=40.0), pts)
    assert "a >= 40 at 3 of 4 points" in verdict
    assert "outside at a at x = 4" in verdict and verdict.startswith("does not hold")
    # One run per point: counted, but not judged.
    one = pts[pts["seed"] == 1]
    assert experiment.check_claim(_bound(at_most=20.0), one).startswith(
        "not judged: a <= 20 at 3 of 4 points"
    )


@pytest.mark.parametrize(
    ("claim", "message"),
    [
        ('similar = "a"\nthan = "b"\ntrend = "increasing"', r"\.trend: only for a lower or"),
        ('lower = "a"\nthan = "b"\nmargin = 0.05', r"\.margin: only for a similar claim"),
        ('lower = "a"\nthan = "b"\nmin_significant_share = 0', r".*share; it must be in \(0, 1\]"),
        ('lower = "a"\nthan = "b"\ntrend = "up"', r'.*"up" is not one of increasing, decreasing'),
        ('lower = "a"\nhigher = "b"\nthan = "b"', r": give one of lower, higher, similar"),
        ('lower = "a"\nthan = "b"\ntolerance = 0.1', r"\.tolerance: only for a claim on a table"),
        ('effect = "ratio"\nof = "a"', r"\.than: missing"),
        ('effect = "size"\nof = "a"\nthan = "b"', r'\.effect: "size" is not one of ratio'),
        ('effect = "ratio"\nof = "a"\nthan = "b"', r"\.paper: f has no paper values"),
        (
            'effect = "ratio"\nof = "a"\nthan = "b"\npaper = [-5, 5]\nsource = "s"',
            r"\.paper: \[-5, 5\] has no direction",
        ),
        ('effect = "ratio"\nof = "a"\nthan = "b"\npaper = 20', r"\.source: missing"),
        (
            'effect = "slope"\nof = "a"\nthan = "b"\npaper = 1\nsource = "s"',
            r"\.than: a slope is one line's",
        ),
        (
            'effect = "ratio"\nof = "a"\nthan = "b"\nat = [7]\npaper = 1\nsource = "s"',
            r"\.at: 7 is not one of f's points",
        ),
        ('lower = "a"\nthan = "b"\nat = [2]', r"\.at: 2 is not one of f's points \(1\)"),
        ('lower = "a"\nthan = "b"\nsignificance = 0.1', r"\.significance: unknown key"),
        ('similar = "a"\nthan = "b"\nmargin = -1', r"\.margin: -1 must be > 0"),
        ('higher = "c"\nthan = "b"', r'\.higher: "c" is not a line of figure f'),
        ('lines = ["a"]\nat_most = 5\nat_least = 1', r": give one of at_most, at_least"),
        ('lines = ["a"]\nat_most = 5\nthan = "b"', r"\.than: not for a bound \(at_most\)"),
        ("at_most = 5", r"\.lines: a bound names the lines it is about"),
        ('lines = ["c"]\nat_most = 5', r'\.lines\[0\]: "c" is not a line of figure f'),
        ('lower = "a"\nthan = "b"\nlines = ["a"]', r"\.lines: only for a bound"),
    ],
)
def test_a_claim_key_that_does_not_fit_is_refused_with_its_path(
    tmp_path: Path, claim: str, message: str
) -> None:
    (tmp_path / "scenario.toml").write_text('duration = "1s"\n')
    (tmp_path / "plan.toml").write_text(
        'id = "t"\nscenario = "scenario.toml"\n[metric]\ncolumn = "goodput_bps"\n'
        "[lines.a]\n[lines.b]\n[lines.c]\n"
        '[[figures]]\nid = "f"\nx = { path = "seed", values = [1] }\nlines = ["a", "b"]\n'
        f'[[claims]]\nfigure = "f"\ntext = "t"\n{claim}\n'
    )
    with pytest.raises(experiment.PlanError, match=r"claims\[0\]" + message):
        experiment.load_plan(tmp_path)


def test_the_older_spelling_of_a_similar_claim_is_still_read(tmp_path: Path) -> None:
    (tmp_path / "scenario.toml").write_text('duration = "1s"\n')
    (tmp_path / "plan.toml").write_text(
        'id = "t"\nscenario = "scenario.toml"\n[metric]\ncolumn = "goodput_bps"\n'
        "[lines.a]\n[lines.b]\n"
        '[[figures]]\nid = "f"\nx = { path = "seed", values = [1] }\nlines = ["a", "b"]\n'
        '[[claims]]\nfigure = "f"\ntext = "t"\nrelation = "similar"\nlower = "a"\nthan = "b"\n'
        '[[claims]]\nfigure = "f"\ntext = "t"\nsimilar = "a"\nthan = "b"\nmargin = 0.1\n'
    )
    old, new = experiment.load_plan(tmp_path).claims
    assert (old.relation, old.lower, old.than, old.margin) == ("similar", "a", "b", 0.05)
    assert (new.relation, new.lower, new.than, new.margin) == ("similar", "a", "b", 0.1)


def test_the_package_exports_what_the_command_line_and_the_tests_use() -> None:
    for name in ("Claim", "Plan", "PlanError", "check_claim", "check_plan", "check_table_claim",
                 "find_experiment", "load_plan", "reproduce", "run_cli", "summarize"):  # fmt: skip
        assert name in experiment.__all__ and callable(getattr(experiment, name)), name
    from ccsim.experiment import claims, plan, runs, stats, tables

    assert experiment.load_plan is plan.load_plan and experiment.check_claim is claims.check_claim
    assert experiment.summarize is stats.summarize and experiment.table_row is tables.table_row
    assert experiment.plan_runs is runs.plan_runs


def test_the_commit_is_read_from_git_or_unknown(tmp_path: Path) -> None:
    assert report.git_commit(tmp_path) == "unknown"
    git = ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    (tmp_path / "f").write_text("1")
    subprocess.run([*git, "add", "f"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "m"], check=True)
    head = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True)
    assert report.git_commit(tmp_path) == head.stdout.strip()
    (tmp_path / "f").write_text("2")
    assert report.git_commit(tmp_path) == head.stdout.strip() + " + local changes"


def test_the_commit_is_the_folders_repositorys_whatever_git_dir_the_environment_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Campaign 39 (issue 32): git sets GIT_DIR for its hooks (a pre-push hook running a quick
    # reproduction) and a user's shell may export it; the report stated that repository's
    # commit, or "unknown" for a relative GIT_DIR=.git.
    heads = []
    for name in ("plans", "other"):
        repo = tmp_path / name
        git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", name], check=True)
        done = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True)
        heads.append(done.stdout.strip())
    assert heads[0] != heads[1]
    for git_dir in (str(tmp_path / "other" / ".git"), ".git"):
        monkeypatch.setenv("GIT_DIR", git_dir)
        monkeypatch.setenv("GIT_WORK_TREE", str(tmp_path / "other"))
        monkeypatch.setenv("GIT_INDEX_FILE", str(tmp_path / "nosuch-index"))
        assert report.git_commit(tmp_path / "plans") == heads[0], git_dir


def test_the_rerun_command_names_only_what_differs_from_the_defaults(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("CCSIM_RESULTS", raising=False)
    cmd = reproduction.rerun_command
    assert cmd("p001", Path("results/p001"), False, None) == "ccsim reproduce p001"
    assert cmd("p002", Path("results/p002-quick"), True, None) == "ccsim reproduce p002 --quick"
    assert cmd("p001", Path("/tmp/x"), False, 5) == "ccsim reproduce p001 --seeds 5 --out /tmp/x"


def test_the_rerun_command_quotes_an_output_folder_a_shell_would_split() -> None:
    # Pasted from report.md into a shell, it must give reproduce the same --out.
    for out in ("/tmp/my results/m01", "/tmp/실험 폴더/m01", "/tmp/it's/$HOME"):
        line = reproduction.rerun_command("m01", Path(out), True, None)
        assert shlex.split(line) == ["ccsim", "reproduce", "m01", "--quick", "--out", out]


def test_a_long_figure_title_is_wrapped_to_the_figures_width() -> None:
    title = "fig8_abc: Fig. 8 with byte counting (RFC 3465) at the FH: what SPACK's gain is made of"
    wrapped = figures._wrap(title, 6.4)
    assert "\n" in wrapped and all(len(ln) <= 70 for ln in wrapped.splitlines())
    assert wrapped.replace("\n", " ") == title


def test_the_parameter_table_lists_the_resolved_topology() -> None:
    rows = report.parameter_rows(
        'seed = 1\nduration = "5s"\n[nodes.h]\ntype = "host"\n[links.l]\na = "h"\nb = "r"\n'
        'rate = "2Mbps"\n[links.l.queue]\ntype = "droptail"\nlimit = 50\n'
        "[tcp]\ndelayed_ack = false\n"
    )
    assert rows == [
        ("run", "", "seed 1, duration 5s"),
        ("node", "h", "type host"),
        ("link", "l", "a h, b r, rate 2Mbps, queue {type droptail, limit 50}"),
        ("tcp", "", "delayed_ack false"),
    ]


def test_a_claim_at_some_points_is_judged_there_only() -> None:
    # Significantly lower at x = 1 only: over all four points it partly holds; at the one
    # point it names, it holds.
    pts = _points(XS, lambda x: -0.5 if x <= 1 else 0.0)
    assert experiment.check_claim(_claim(), pts).startswith("partly holds")
    assert experiment.check_claim(_claim(at=[1.0]), pts).startswith(
        "holds: a is lower at 1 of 1 points"
    )
