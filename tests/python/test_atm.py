# SPDX-License-Identifier: MIT
"""Paper 000's ATM network from Python: its ATM tables through Parquet and back, and pcap files
of ATM interfaces as tshark reads them (IP packets as they enter a VC and as they are
reassembled; docs/atm.md)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest

import ccsim
from ccsim.result import Result

ROOT = Path(__file__).resolve().parents[2]
PAPER = ROOT / "experiments" / "p000-atm-abr" / "scenario.toml"
TSHARK = shutil.which("tshark")


@pytest.fixture(scope="module")
def short_run() -> ccsim.Result:
    return ccsim.run(ccsim.Scenario.from_toml(PAPER).set("duration", "0.5s"), seed=1)


def test_the_atm_tables_read_back_from_parquet_with_the_same_columns_dtypes_and_values(
    short_run: ccsim.Result, tmp_path: Path
) -> None:
    res = short_run
    assert len(res.atm_vcs) == 10 + 10  # five VCs each way, ten CBR sources
    assert len(res.atm_ports) == 26  # 13 ATM links, two directions
    res.to_parquet(tmp_path)
    back = Result.from_parquet(tmp_path)
    for name in ("atm_vcs", "atm_ports"):
        ours, theirs = getattr(res, name), getattr(back, name)
        assert list(theirs.columns) == list(ours.columns), name
        assert list(theirs.dtypes) == list(ours.dtypes), name
        pd.testing.assert_frame_equal(theirs, ours)
    # The columns a reader needs are there and typed: counts as integers, rates as floats.
    vcs = back.atm_vcs
    assert vcs["cells_sent"].dtype == "int64" and vcs["acr_bps"].dtype == "float64"
    assert vcs.set_index("name").loc["h1>d1", "frames_delivered"] > 0


@pytest.mark.skipif(
    TSHARK is None, reason="tshark is not installed (scripts/test installs Debian's package)"
)
def test_a_capture_at_an_atm_interface_holds_the_ip_packets_and_reads_without_malformed_ones(
    tmp_path: Path,
) -> None:
    sc = (
        ccsim.Scenario.from_toml(PAPER)
        .set("duration", "0.3s")
        .set("trace.pcap", ["h1:l1_1", "d1"])
        .set("trace.pcap_snaplen", 1500)
    )
    res = ccsim.run(sc, seed=1, pcap_dir=tmp_path)
    files = sorted(f.name for f in tmp_path.glob("*.pcap"))
    assert files == ["d1-l3_1.pcap", "h1-l1_1.pcap"]

    def lines(path: Path, *args: str) -> list[str]:
        cmd = [TSHARK, "-n", "-r", str(path), *args]
        done = subprocess.run(cmd, capture_output=True, text=True, check=True)
        return [line for line in done.stdout.splitlines() if line]

    links = res.links.set_index(["link", "direction"])
    for f in tmp_path.glob("*.pcap"):
        assert lines(f, "-Y", "_ws.malformed", "-T", "fields", "-e", "frame.number") == []
        frames = lines(f, "-T", "fields", "-e", "tcp.srcport")
        assert len(frames) > 100 and all(p != "" for p in frames), f.name
    # At h1: every data segment it handed to its VC and every ACK reassembled for it.
    at_h1 = lines(tmp_path / "h1-l1_1.pcap", "-T", "fields", "-e", "frame.number")
    assert len(at_h1) == (
        links.loc[("l1_1", "a_to_b"), "packets"] + links.loc[("l1_1", "b_to_a"), "packets_arrived"]
    )
    # Whole 9,180-byte IP packets, not cells.
    sizes = lines(tmp_path / "d1-l3_1.pcap", "-Y", "tcp.len > 0", "-T", "fields", "-e", "ip.len")
    assert sizes and set(sizes) == {"9180"}


def test_the_atm_window_figure_finds_a_flows_cwnd_and_its_vcs_acr_and_er() -> None:
    from ccsim.experiment.figures import atm_window_series
    from ccsim.sweep import record_of

    overrides = ['duration="0.3s"', 'trace.interval="50ms"']
    raw = ccsim._core.run(PAPER.read_text(encoding="utf-8"), overrides, 1)
    got = atm_window_series(record_of(raw, overrides, 1), "f1")
    assert [len(got[k]) for k in ("cwnd", "acr", "er")] == [6, 6, 6]
    assert (got["cwnd"] > 0).all()
    # ACR within [MCR, PCR] = [0.1, 150] Mbit/s, and never above the ER that capped it.
    assert got["acr"].between(0.1e6 - 1, 150e6 + 1).all()
    assert (got["acr"] <= got["er"] + 1).all()
