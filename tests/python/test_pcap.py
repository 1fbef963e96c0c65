# SPDX-License-Identifier: MIT
"""ccsim's pcap files as tshark reads them: no malformed packet, TCP analysis that agrees with
ccsim's own counters, header fields checked by hand, SCTP chunks, and the CLI's --pcap."""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import TWO_PATHS

import ccsim
from ccsim import SimulationError
from ccsim.cli import main

TSHARK = shutil.which("tshark")
pytestmark = pytest.mark.skipif(
    TSHARK is None, reason="tshark is not installed (scripts/test installs Debian's package)"
)

# FH -- 100 Mbit/s, 100 ms -- BS -- 2 Mbit/s, 10 ms, 5 % loss on data -- MH; a Reno transfer.
LOSSY = """
seed = 4
duration = "60s"
[nodes]
fh = "host"
bs = "router"
mh = "host"
[links.wired]
a = "fh"
b = "bs"
rate = "100Mbps"
delay = "100ms"
[links.wl]
a = "bs"
b = "mh"
rate = "2Mbps"
delay = "10ms"
loss = { type = "uniform", rate = 0.05, direction = "a_to_b" }
[flows.transfer]
type = "tcp"
src = "fh"
dst = "mh"
size = "200KB"
cc = "reno"
variant = "reno"
preset = "ns2-2.35"
[trace]
pcap = ["fh", "mh"]
pcap_snaplen = 1500  # whole packets, so that tshark verifies the TCP checksums
packets = { flows = ["transfer"], nodes = ["mh"] }
"""


# tshark's resent data segments: a retransmission, a fast one (flagged both ways by recent
# tshark releases, so the union counts it once) or a spurious one (resent though it had
# arrived). Only segments with data: ccsim's receiver repeats FIN on each ACK after the
# sender's FIN (RFC 9293 §3.6 as modelled), which tshark calls retransmitted FINs; ccsim's
# counters count data segments.
RESENT = (
    "tcp.len > 0 && (tcp.analysis.retransmission || tcp.analysis.fast_retransmission"
    " || tcp.analysis.spurious_retransmission)"
)


def tshark(path: Path, *args: str) -> list[str]:
    """tshark's output lines for the file (two-pass, so that its TCP analysis is settled)."""
    cmd = [TSHARK, "-n", "-2", "-r", str(path), *args]
    done = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return [line for line in done.stdout.splitlines() if line]


def fields(path: Path, *names: str, filt: str = "", prefs: tuple[str, ...] = ()) -> list[list[str]]:
    args = [a for p in prefs for a in ("-o", p)]
    if filt:
        args += ["-Y", filt]
    args += ["-T", "fields", "-E", "separator=|"]
    for n in names:
        args += ["-e", n]
    return [line.split("|") for line in tshark(path, *args)]


def count(path: Path, filt: str) -> int:
    return len(tshark(path, "-Y", filt, "-T", "fields", "-e", "frame.number"))


@pytest.fixture(scope="module")
def lossy(tmp_path_factory: pytest.TempPathFactory) -> tuple[ccsim.Result, Path]:
    folder = tmp_path_factory.mktemp("pcap")
    res = ccsim.run(ccsim.Scenario.from_str(LOSSY), pcap_dir=folder)
    return res, folder


def test_every_file_reads_without_a_malformed_packet_or_a_checksum_error(lossy) -> None:
    _, folder = lossy
    files = sorted(folder.glob("*.pcap"))
    assert [f.name for f in files] == ["fh-wired.pcap", "mh-wl.pcap"]
    for f in files:
        assert count(f, "frame") > 100
        checked = ("tcp.check_checksum:TRUE", "ip.check_checksum:TRUE")
        bad = fields(
            f,
            "frame.number",
            "_ws.expert.message",
            filt="_ws.malformed || tcp.checksum.status == 0 || ip.checksum.status == 0",
            prefs=checked,
        )
        assert bad == [], f"{f.name}: {bad[:3]}"


def test_tshark_finds_the_retransmissions_ccsim_counted_at_the_sender(lossy) -> None:
    res, folder = lossy
    flow = res.flows.iloc[0]
    assert flow["retransmits"] > 3, "the run must lose and resend segments"
    at_sender = folder / "fh-wired.pcap"
    # Rule (RESENT): at the sender's interface every resent data segment is seen once.
    resent = count(at_sender, RESENT)
    assert resent == flow["retransmits"]
    # tshark calls a resend fast when two or more duplicate ACKs preceded it; ccsim's fast
    # retransmits are a subset of those segments (a SACK recovery resends more after the dupack).
    fast = count(at_sender, "tcp.analysis.fast_retransmission")
    assert flow["fast_retransmits"] <= fast <= flow["retransmits"]


def test_tshark_s_duplicate_acks_are_the_acks_the_receiver_repeated(lossy) -> None:
    res, folder = lossy
    # The receiver's ACKs from the packet trace: a duplicate ACK repeats the previous ACK number
    # (the window never changes and no ACK carries data: tshark's rule, RFC 5681 §2).
    sent = res.packets[(res.packets["event"] == "sent") & (res.packets["kind"] == "ack")]
    acks = list(sent["ack"])
    dups = sum(1 for a, b in zip(acks, acks[1:]) if a == b)
    assert dups > 0
    at_mh = count(folder / "mh-wl.pcap", "tcp.analysis.duplicate_ack")
    assert at_mh == dups


def test_a_sack_receiver_s_blocks_are_written_in_the_room_its_acks_took(tmp_path: Path) -> None:
    sc = ccsim.Scenario.from_str(LOSSY).set("flows.transfer.variant", "sack")
    res = ccsim.run(sc, pcap_dir=tmp_path)
    at_mh = tmp_path / "mh-wl.pcap"
    # An ACK longer than 40 bytes took room for SACK blocks, and carries them (RFC 2018 §3).
    longer = count(at_mh, "tcp.len == 0 && ip.len > 40 && tcp.flags.syn == 0 && tcp.flags.fin == 0")
    assert longer > 0
    assert count(at_mh, "tcp.options.sack_le") == longer
    assert count(at_mh, "_ws.malformed") == 0
    resent = count(tmp_path / "fh-wired.pcap", RESENT)
    assert resent == res.flows.iloc[0]["retransmits"]


def test_bytes_and_flows_agree_with_the_flows_table(lossy) -> None:
    res, folder = lossy
    flow = res.flows.iloc[0]
    at_sender = folder / "fh-wired.pcap"
    conversations = [line for line in tshark(at_sender, "-q", "-z", "conv,tcp") if "<->" in line]
    assert len(conversations) == len(res.flows)
    lens = fields(at_sender, "tcp.len", filt="tcp.len > 0 && ip.src == 10.0.0.1")
    assert sum(int(x[0]) for x in lens) == flow["bytes_sent"]
    wire = fields(at_sender, "ip.len", filt="ip.src == 10.0.0.1")
    assert sum(int(x[0]) for x in wire) == flow["wire_bytes_sent"]


def test_one_data_segment_s_header_fields_are_what_ccsim_sent(lossy) -> None:
    _, folder = lossy
    rows = fields(
        folder / "mh-wl.pcap",
        "ip.len",
        "ip.ttl",
        "ip.dsfield",
        "tcp.seq",
        "tcp.ack",
        "tcp.len",
        "tcp.hdr_len",
        "tcp.checksum.status",
        filt="tcp.len > 0 && !tcp.analysis.retransmission",
        prefs=("tcp.check_checksum:TRUE", "tcp.relative_sequence_numbers:FALSE"),
    )
    ip_len, ttl, ds, seq, ack, tcp_len, hdr, status = rows[1]
    mss = 1000  # ns-2.35's packet size: 1000 bytes of payload + 40 of headers
    assert (int(ip_len), int(tcp_len), int(hdr)) == (mss + 40, mss, 20)
    # Default TTL 64 less one router (bs); DSCP 0 and ECN not-ECT.
    assert int(ttl) == 63 and int(ds, 16) == 0
    # The second segment: ccsim byte 1000, on the wire 1000 + 1 (the SYN takes one).
    assert int(seq) == mss + 1
    assert int(ack) == 1  # the receiver's SYN-ACK
    assert status == "1"  # good


def test_an_sctp_capture_reads_as_sctp_with_data_and_sack_chunks(tmp_path: Path) -> None:
    # 1 % of path 0's data lost, so SACKs carry gap blocks; tshark dissects SCTP chunks only in
    # a packet captured whole.
    sc = (
        ccsim.Scenario.from_str(TWO_PATHS)
        .set("duration", "3s")
        .set("links.b0.loss", {"type": "uniform", "rate": 0.01, "direction": "a_to_b"})
        .set("trace.pcap", ["h2"])
        .set("trace.pcap_snaplen", 1500)
    )
    ccsim.run(sc, pcap_dir=tmp_path)
    f = tmp_path / "h2-b0.pcap"
    tsns = [int(r[0]) for r in fields(f, "sctp.data_tsn", filt="sctp.data_tsn")]
    assert len(tsns) > 100
    assert tsns[:3] == [tsns[0], tsns[0] + 1, tsns[0] + 2], "consecutive TSNs"
    cums = fields(f, "sctp.sack_cumulative_tsn_ack", filt="sctp.sack_cumulative_tsn_ack")
    assert len(cums) > 100
    bad = fields(
        f,
        "frame.number",
        filt="_ws.malformed || _ws.expert.severity >= 6291456 || sctp.checksum.status == 0",
        prefs=("sctp.checksum:CRC-32C",),
    )
    assert bad == []


def test_a_run_asking_for_captures_without_a_folder_says_how_to_give_one() -> None:
    with pytest.raises(ccsim.ScenarioError, match=r"trace\.pcap.*folder"):
        ccsim.run(ccsim.Scenario.from_str(LOSSY))


def test_a_capture_folder_that_cannot_be_made_is_a_simulation_error_naming_it(
    tmp_path: Path,
) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    with pytest.raises(SimulationError, match="file"):
        ccsim.run(ccsim.Scenario.from_str(LOSSY), pcap_dir=blocked)


def test_ccsim_run_writes_captures_under_out_pcap_and_adds_points_from_pcap(
    tmp_path: Path,
) -> None:
    scenario = tmp_path / "s.toml"
    scenario.write_text(LOSSY)
    out = tmp_path / "out"
    args = ["run", str(scenario), "--out", str(out), "--pcap", "bs:wl"]
    assert main([*args, "--set", "trace.pcap_snaplen=128"]) == 0
    names = sorted(p.name for p in (out / "pcap").glob("*.pcap"))
    assert names == ["bs-wl.pcap", "fh-wired.pcap", "mh-wl.pcap"]
    # Cut at the scenario's snap length, the records still read as whole, good TCP headers.
    cut = out / "pcap" / "bs-wl.pcap"
    assert count(cut, "frame.cap_len < frame.len") > 100
    assert count(cut, "_ws.malformed || _ws.expert.severity >= 8388608") == 0


@pytest.mark.parametrize("blocked", ["a file", "a link to nothing"])
def test_ccsim_run_refuses_an_out_whose_pcap_is_not_a_folder_before_the_run(
    blocked: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Campaign 22 (issue 32): the captures were moved into OUT/pcap after the run, which then
    # failed naming the hidden staging folder (".ccsim-partial-x/pcap -> out/pcap: not a
    # directory"), left that folder in OUT, and two of the run's tables beside the old ones.
    scenario = tmp_path / "s.toml"
    scenario.write_text(LOSSY)
    out = tmp_path / "out"
    out.mkdir()
    if blocked == "a file":
        (out / "pcap").write_text("mine")
    else:
        (out / "pcap").symlink_to(tmp_path / "nowhere")
    assert main(["run", str(scenario), "--out", str(out), "--pcap", "bs:wl"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(
        f"ccsim: error: --out {out}: the run's captures go in {out}/pcap, and "
    ), err
    assert err.endswith("; move it away or name another folder\n")
    assert [p.name for p in out.iterdir()] == ["pcap"]


def test_ccsim_run_whose_out_pcap_links_to_another_disk_moves_its_captures_there(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Campaign 26 (issue 32): OUT/pcap a link to a folder on a bigger disk; no rename crosses
    # file systems, and the run failed with "<hidden folder>/pcap/bs-wl.pcap -> OUT/pcap/
    # bs-wl.pcap: invalid cross-device link", its hidden folder left in OUT beside two of its
    # tables. Here ``disk`` is the other file system: a rename into it from outside fails.
    scenario = tmp_path / "s.toml"
    scenario.write_text(LOSSY)
    out, disk = tmp_path / "out", tmp_path / "disk"
    out.mkdir()
    (disk / "captures").mkdir(parents=True)
    (out / "pcap").symlink_to(disk / "captures")
    real = os.replace

    def replace(src: Any, dest: Any) -> None:
        inside = Path(dest).resolve().is_relative_to(disk)
        if inside and not Path(src).resolve().is_relative_to(disk):
            raise OSError(errno.EXDEV, os.strerror(errno.EXDEV), str(src), None, str(dest))
        real(src, dest)

    monkeypatch.setattr(os, "replace", replace)
    assert main(["run", str(scenario), "--out", str(out), "--pcap", "bs:wl"]) == 0
    assert "; pcap/: 3 captures)" in capsys.readouterr().out
    names = sorted(p.name for p in (disk / "captures").iterdir())
    assert names == ["bs-wl.pcap", "fh-wired.pcap", "mh-wl.pcap"]
    assert (out / "pcap").is_symlink() and (out / "flows.parquet").is_file()
    assert not [p.name for p in out.iterdir() if p.name.startswith(".")]
    assert not [p.name for p in (disk / "captures").iterdir() if p.name.startswith(".")]


def test_ccsim_run_counts_its_own_captures_not_an_earlier_run_s_kept_beside_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Campaign 22 (issue 32): an earlier run's captures stay in OUT/pcap, and the results line
    # counted them as this run's: "pcap/: 4 captures" after a run that made three.
    scenario = tmp_path / "s.toml"
    scenario.write_text(LOSSY)
    out = tmp_path / "out"
    assert main(["run", str(scenario), "--out", str(out), "--pcap", "bs:wl"]) == 0
    assert "; pcap/: 3 captures)" in capsys.readouterr().out
    assert main(["run", str(scenario), "--out", str(out), "--pcap", "bs:wired"]) == 0
    assert "; pcap/: 3 captures)" in capsys.readouterr().out
    assert len(list((out / "pcap").glob("*.pcap"))) == 4  # bs-wl.pcap kept from the first


def test_tshark_decodes_the_timestamp_option_and_the_receivers_echo(tmp_path: Path) -> None:
    # RFC 7323 (issue 28): with timestamps every segment carries TSval, the sender's clock in
    # milliseconds at its departure, and TSecr; the receiver's ACKs echo a TSval the sender
    # sent (RFC 7323 §4.3), never a later one. SACK blocks still fit beside the option.
    sc = ccsim.Scenario.from_str(
        LOSSY.replace(
            'preset = "ns2-2.35"', 'preset = "rfc"\ntimestamps = true\nmss = 1448'
        ).replace('variant = "reno"', 'variant = "sack"')
    )
    ccsim.run(sc, pcap_dir=tmp_path)
    f = tmp_path / "fh-wired.pcap"
    checked = ("tcp.check_checksum:TRUE", "ip.check_checksum:TRUE")
    bad = fields(f, "frame.number", filt="_ws.malformed || tcp.checksum.status == 0", prefs=checked)
    assert bad == []
    rows = fields(
        f,
        "ip.src",
        "frame.time_relative",
        "tcp.len",
        "tcp.options.timestamp.tsval",
        "tcp.options.timestamp.tsecr",
        "tcp.options.sack_le",
    )
    assert rows and all(r[3] != "" for r in rows), "every segment carries the option"
    sender = rows[0][0]  # the SYN's
    data = [(float(r[1]), int(r[3])) for r in rows if r[0] == sender and r[2] != "0"]
    acks = [r for r in rows if r[0] != sender]
    sent = {v for _, v in data}
    # Captured at the FH as the data starts to leave (after any wait in its queue): TSval is the
    # time the sender sent it in whole milliseconds, no later than the capture, and the queue
    # is first in, first out, resends included.
    assert all(v <= at * 1000 + 1e-6 for at, v in data)
    assert all(a[1] <= b[1] for a, b in zip(data, data[1:]))
    echoes = {int(r[4]) for r in acks if r[4] not in ("", "0")}
    assert echoes and echoes <= sent
    assert any(r[5] for r in acks), "SACK blocks beside the timestamps"


@pytest.mark.parametrize(
    ("point", "reason"),
    [("", '"" is not a node; nodes: fh, bs, mh'),
     ("nosuch", '"nosuch" is not a node; nodes: fh, bs, mh'),
     ("bs:nolink", '"nolink" is not a link; links: wired, wl')],
)  # fmt: skip
def test_a_capture_point_given_with_pcap_that_is_not_one_is_refused_naming_pcap(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], point: str, reason: str
) -> None:
    # It was refused as `trace.pcap[0]: "" is not a node`, a key the user never wrote
    # (noticed in campaign 22, issue 32); one of the scenario's own points keeps its key.
    scenario = tmp_path / "s.toml"
    scenario.write_text(LOSSY)
    out = tmp_path / "out"
    assert main(["run", str(scenario), "--out", str(out), "--pcap", "bs", "--pcap", point]) == 1
    assert capsys.readouterr().err == f"ccsim: error: --pcap {point!r}: {reason}\n"
    assert not out.exists()
    scenario.write_text(LOSSY.replace('pcap = ["fh", "mh"]', 'pcap = ["x", "mh"]'))
    assert main(["run", str(scenario), "--out", str(out), "--pcap", "bs"]) == 1
    assert capsys.readouterr().err.startswith('ccsim: error: trace.pcap[0]: "x" is not a node')
