# SPDX-License-Identifier: MIT
"""Start jitter (``[jitter]``, docs/scenario.md): independent replicates of a deterministic
scenario, through ``ccsim.run`` and the command line."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import ccsim
from ccsim.cli import main


def test_a_scenario_with_jitter_runs_through_ccsim_run_one_replicate_per_seed(
    two_hosts: str,
) -> None:
    sc = ccsim.Scenario.from_str(two_hosts + '[jitter]\nstart = "2ms"\n')
    runs = {seed: ccsim.run(sc, seed=seed) for seed in (1, 2, 3)}
    starts = {seed: float(r.flows.loc[0, "start_s"]) for seed, r in runs.items()}
    assert all(0.0 <= s < 0.002 for s in starts.values()), starts
    assert len(set(starts.values())) == 3, starts
    # Alone on its path, the flow only moves in time: its transfer takes as long after its
    # start under every seed (completion_time_s counts from start_s).
    completions = {float(r.flows.loc[0, "completion_time_s"]) for r in runs.values()}
    assert len(completions) == 1
    # The same seed is the same run.
    pd.testing.assert_frame_equal(ccsim.run(sc, seed=2).flows, runs[2].flows)


def test_without_jitter_every_seed_gives_the_same_run_and_a_zero_window_changes_nothing(
    two_hosts: str,
) -> None:
    sc = ccsim.Scenario.from_str(two_hosts)
    plain = ccsim.run(sc, seed=1).flows
    pd.testing.assert_frame_equal(ccsim.run(sc, seed=2).flows, plain)
    zero = ccsim.run(sc.set("jitter.start", "0s"), seed=1).flows
    pd.testing.assert_frame_equal(zero, plain)
    assert plain.loc[0, "start_s"] == 0.0


def test_set_jitter_start_works_as_an_override_on_the_command_line(
    tmp_path: Path, examples: Path
) -> None:
    out = tmp_path / "res"
    args = ["run", str(examples / "dumbbell.toml"), "--out", str(out), "--seed", "4"]
    assert main([*args, "--set", "jitter.start=2ms", "--set", 'duration="1s"']) == 0
    flows = pd.read_parquet(out / "flows.parquet")
    # dumbbell.toml starts its ten flows at 0: each now starts at its own offset in [0, 2 ms).
    assert len(flows) == 10
    assert flows["start_s"].between(0.0, 0.002, inclusive="left").all()
    assert flows["start_s"].nunique() == 10
    # The resolved scenario keeps the override and replays the same run.
    assert "[jitter]" in (out / "scenario.toml").read_text()
    again = ccsim.run(out / "scenario.toml")
    pd.testing.assert_frame_equal(again.flows, flows)


def test_a_negative_window_is_an_error_naming_the_field(two_hosts: str) -> None:
    sc = ccsim.Scenario.from_str(two_hosts).set("jitter.start", "-2ms")
    with pytest.raises(ccsim.ScenarioError, match=r'^jitter\.start: "-2ms" is negative'):
        ccsim.run(sc)
