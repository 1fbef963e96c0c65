# SPDX-License-Identifier: MIT
"""The paths table of an SCTP association, through the binding and a Parquet round trip."""

from __future__ import annotations

from pathlib import Path

from conftest import TWO_PATHS

import ccsim


def test_an_sctp_run_has_one_paths_row_per_path_and_keeps_it_through_parquet(
    tmp_path: Path,
) -> None:
    res = ccsim.run(ccsim.Scenario.from_str(TWO_PATHS))
    paths = res.paths
    assert list(paths["local"]) == ["h1:a0", "h1:a1"]
    assert list(paths["peer"]) == ["h2:b0", "h2:b1"]
    assert list(paths["primary"]) == [1, 0]
    # New data goes to the primary only; the alternate sees heartbeats at most.
    assert paths["data_packets"][0] > 1000
    assert paths["data_packets"][1] == 0
    assert res.flows["kind"][0] == "sctp"
    back = ccsim.Result.from_parquet(res.to_parquet(tmp_path / "out"))
    assert back.paths.equals(res.paths)


def test_a_run_without_multipath_flows_writes_no_paths_file(tmp_path: Path) -> None:
    text = TWO_PATHS.replace('type = "sctp"', 'type = "tcp"')
    res = ccsim.run(ccsim.Scenario.from_str(text))
    assert res.paths.empty
    out = res.to_parquet(tmp_path / "out")
    assert not (out / "paths.parquet").exists()
    assert ccsim.Result.from_parquet(out).paths.empty
