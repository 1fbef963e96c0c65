# SPDX-License-Identifier: MIT
"""ccsim's TCP cross-checked against ns-3: the same dumbbell cells in both, one table.

::

    cell ─┬─> ccsim scenario (dumbbell, loss, queue, TCP keys) ──> row cache ───┐
          │                                                                    ├─> results.csv
          └─> ns-3 options (ccsim-dumbbell.cc, RngRun = seed) ──> ns-3 cache ──┘

A *cell* is one point of the matrix (algorithm, delayed ACKs, loss, flows, queue, RTT); each runs
under the same seeds in both simulators. ccsim runs through the sweep machinery
(``ccsim.sweep.execute``, one record per run in a store keyed by the resolved scenario); each
record is reduced at once to the table's measures, kept by the same key in a cache of its own
(``<store>/ccsim-rows``, a few hundred bytes a run), and the record (1-9 MB) is deleted. And
ns-3 through the scenario program ``ccsim-dumbbell.cc`` beside this file, built by the user in
an ns-3 tree of their own: this driver never builds anything, it is given the program's path
(``--ns3``). Each ns-3 run's output is kept in a cache keyed by its command line, so an
interrupted matrix resumes where it stopped, in either simulator.

The table has one row per cell, simulator and seed (aggregates over the cell's flows, and
each flow's goodput), with the ns-3 and ccsim commits. docs/validation.md explains every column
and every difference.

Usage (from the repository's root)::

    python validation/ns3/driver.py --ns3 /path/to/ns3-build/ccsim-dumbbell --design pilot
    python validation/ns3/driver.py --ns3 ... --design recovery --design algorithms
    python validation/ns3/driver.py --ns3 ... --traces          # the cwnd traces and figures
    python validation/ns3/driver.py --ns3 ... --design pilot --dry-run   # the runs, not run
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import hashlib
import itertools
import json
import math
import os
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ccsim
from ccsim import sweep
from ccsim.experiment.tables import jain_index
from ccsim.topologies import dumbbell

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
RESULTS = HERE / "results.csv"
TRACES = HERE / "traces"

#: Bytes of a full-sized packet used to turn a bandwidth-delay product into packets.
BDP_PACKET_BYTES = 1500
#: TCP payload per segment: 1500-byte IP packets with 20-byte IP and TCP headers and the 12
#: bytes of the timestamp option, the usual Ethernet MSS (the issue's scenario).
MSS = 1448


@dataclass(frozen=True)
class Algorithm:
    """What an algorithm of the matrix is in each simulator."""

    #: ccsim's ``variant`` (loss recovery).
    variant: str
    #: ccsim's ``cc``: a name or a table of parameters.
    cc: Any
    #: ns-3's congestion-control class, by ccsim-dumbbell.cc's ``--cc`` names.
    ns3_cc: str
    #: ns-3's SACK option (TcpSocketBase::Sack).
    ns3_sack: bool
    #: More ns-3 attributes, as ns-3's own ``--ns3::Class::Attribute=value`` options (or the
    #: program's own options, such as ``timestamps``).
    ns3_attributes: tuple[tuple[str, str], ...] = ()
    #: More ccsim ``[tcp]`` keys, applied after the profile's.
    ccsim_tcp: tuple[tuple[str, Any], ...] = ()


#: The algorithms of the matrix. ns-3 has one loss recovery for both of its non-SACK modes: with
#: Sack off, TcpSocketBase counts each duplicate ACK as a SACKed segment (TxBuffer's
#: "Reno SACK") and stays in recovery until the recovery point is acknowledged, retransmitting
#: on partial ACKs: that is NewReno (RFC 6582). It has no RFC 5681 Reno, which leaves recovery
#: on the first new ACK, so ccsim's ``reno`` is compared with the same ns-3 runs as ``newreno``
#: (the difference is then Reno's own, and docs/validation.md shows it). The other controllers
#: keep SACK recovery in both simulators (ns-3's default).
ALGORITHMS: Mapping[str, Algorithm] = {
    "reno": Algorithm("reno", "reno", "newreno", False),
    "newreno": Algorithm("newreno", "reno", "newreno", False),
    "sack": Algorithm("sack", "reno", "newreno", True),
    # RFC 6937 PRR on SACK recovery in both: ccsim's variant "prr" (SSRB) against ns-3's
    # TcpPrrRecovery (its cells set ns3_recovery = "prr").
    "prr": Algorithm("prr", "reno", "newreno", True),
    # TcpCubic: C 0.4, beta 0.7, fast convergence and TCP friendliness on, as RFC 9438 and
    # ccsim's defaults, computed in whole segments with a per-ACK count (ccsim's model "ns3");
    # its HyStart (on by default) has no counterpart in ccsim, so it is off.
    "cubic": Algorithm(
        "sack",
        {"type": "cubic", "model": "ns3"},
        "cubic",
        True,
        (("ns3::TcpCubic::HyStart", "false"),),
    ),
    # TcpHighSpeed: RFC 3649's table of a(w) and b(w); ccsim computes the same functions.
    # TcpHighSpeed: RFC 3649's table; GetSsThresh looks b(w) up for the bytes in flight it is
    # handed (the pipe) and keeps (1 - b) of them, not of cwnd, and leaves its count of
    # acknowledged segments (m_ackCnt) as it was.
    "highspeed": Algorithm(
        "sack",
        {"type": "highspeed", "decrease_from": "flight", "count_after_loss": "keep"},
        "highspeed",
        True,
    ),
    # TcpScalable: +1 segment per min(cwnd, AIFactor = 50) segments acknowledged, so Reno's
    # increase below 50 segments and a = 1/50 above; cwnd x (1 - MDFactor = 0.125) on a loss
    # at every window (no legacy decrease, as Linux's tcp_scalable_ssthresh), taken of the
    # bytes in flight GetSsThresh is handed (the pipe), not of cwnd as Linux takes it.
    "scalable": Algorithm(
        "sack",
        {
            "type": "scalable",
            "a": 0.02,
            "b": 0.125,
            "low_window": 50,
            "legacy_decrease": False,
            "decrease_from": "flight",
        },
        "scalable",
        True,
    ),
    # TcpBic: Beta 0.8 (a loss keeps 80 %), MaxIncr 16, LowWnd 14, BinarySearchCoefficient 4
    # (Linux tcp_bic.c's values), and SmoothPart 5 where Linux has 20: within B = 4 segments
    # of W_max ns-3 adds one segment per cwnd * SmoothPart / B acknowledged, so S_min = 4/5.
    # Below LowWnd its IncreaseWindow adds a segment once more than cwnd segments are counted
    # and drops the rest of the count (low_window_growth "count_reset").
    "bic": Algorithm(
        "sack",
        {
            "type": "bic",
            "beta": 0.2,
            "s_max": 16,
            "s_min": 0.8,
            "low_window": 14,
            "search_divisor": 4,
            "low_window_growth": "count_reset",
        },
        "bic",
        True,
    ),
    # TcpVegas: alpha 2, beta 4, gamma 1 (Linux tcp_vegas.c), slow start every RTT.
    "vegas": Algorithm(
        "sack",
        {
            "type": "vegas",
            "alpha": 2,
            "beta": 4,
            "gamma": 1,
            "slow_start_every_other_rtt": False,
        },
        "vegas",
        True,
    ),
    # TcpHtcp (DeltaL 1 s, DefaultBackoff 0.5, ThroughputRatio 0.2) against ccsim's htcp with
    # the draft's defaults: the departures are ns-3's own (docs/tcp.md, "H-TCP"), kept here so
    # that the cells show what a user of either gets.
    "htcp": Algorithm("sack", "htcp", "htcp", True),
    # The same ns-3 runs beside ccsim's H-TCP computed as ns-3's code does (model "ns3").
    "htcp_ns3": Algorithm("sack", {"type": "htcp", "model": "ns3"}, "htcp", True),
    # TcpLedbat (TargetDelay 100 ms, Gain 1, BaseHistoryLen 10, NoiseFilterLen 4, MinCwnd 2,
    # AllowedIncrease 1) measures one-way delay from the timestamp option, so both run with
    # timestamps (1,500-byte packets in both); ccsim's LEDBAT measures the RTT (docs/tcp.md
    # §6.3). With slow start (SSParam "yes", ccsim's default) and without.
    "ledbat": Algorithm(
        "sack",
        "ledbat",
        "ledbat",
        True,
        (("timestamps", "1"),),
        (("timestamps", True),),
    ),
    # TcpBbr (BBR v1 with ns-3's ACK-aggregation estimator, which ccsim's BBR does not model:
    # docs/tcp.md §12) paces itself; ccsim's `cc = "bbr"` turns pacing on by default.
    "bbr": Algorithm("sack", "bbr", "bbr", True),
    # TcpDctcp (g 1/16, alpha 1 at the start) with its DctcpEcn mode, which sends ECT(0) on
    # every segment: ccsim's `ecn = "dctcp"` with `ect_all` does the same (docs/tcp.md §6.1).
    # Its cells use the "step" queue.
    "dctcp": Algorithm(
        "sack",
        "dctcp",
        "dctcp",
        True,
        (),
        (("ecn", "dctcp"), ("ect_all", True)),
    ),
    "ledbat_noss": Algorithm(
        "sack",
        {"type": "ledbat", "slow_start": False},
        "ledbat",
        True,
        (("timestamps", "1"), ("ns3::TcpLedbat::SSParam", "no")),
        (("timestamps", True),),
    ),
}

#: With ``profile = "ns3"`` ccsim runs its ``ns3`` preset (ns-3.48's defaults, docs/tcp.md §11)
#: and these keys on top, where ccsim-dumbbell.cc sets ns-3 away from its defaults or where
#: ccsim's scenario leaves out a step ns-3 takes; docs/validation.md lists each.
NS3_PROGRAM_CHOICES: Mapping[str, Any] = {
    # The program turns the timestamp option off (--timestamps=0, its default), so that ns-3's
    # data segments carry no options (header_bytes 40 below).
    "timestamps": False,
    # SndBufSize and RcvBufSize 64 MiB: neither buffer limits a flow.
    "max_window": "inf",
    "rcv_buffer": "64MiB",
    # ccsim runs these cells without the handshake (loss hits only data, as ns-3's
    # DataOnlyErrorModel); ns-3's first data segment has the SYN-ACK's RTT sample, so its RTO
    # is MinRto, not ConnTimeout's 3 s.
    "rto_initial": "1s",
}

#: The growth rule, by ns-3 class (``Algorithm.ns3_cc``), of each controller that is not the
#: ``ns3`` preset's CUBIC (whose slow start counts every segment acknowledged,
#: ``TcpCubic::IncreaseWindow``). The others inherit ``TcpNewReno::SlowStart``: one SMSS per
#: ACK that acknowledges a segment. In congestion avoidance TcpNewReno (and TcpVegas, which
#: falls back to it) adds SMSS^2/cwnd per ACK, RFC 5681's equation (3); TcpHighSpeed,
#: TcpScalable and TcpBic count the segments acknowledged, which is ccsim's byte counting with
#: L = 1 (one SMSS per ACK in slow start). TcpCubic, TcpHighSpeed and TcpScalable also count a
#: reduction in whole segments (``GetSsThresh`` truncates: ``whole_segment_ssthresh``);
#: TcpNewReno's halves bytes in flight in bytes and TcpBic keeps the fraction of its product.
NS3_GROWTH: Mapping[str, Mapping[str, Any]] = {
    "newreno": {"growth": "rfc5681"},
    "vegas": {"growth": "rfc5681"},
    "cubic": {"whole_segment_ssthresh": True},
    "highspeed": {"growth": "abc", "abc_limit": 1, "whole_segment_ssthresh": True},
    "scalable": {"growth": "abc", "abc_limit": 1, "whole_segment_ssthresh": True},
    "bic": {"growth": "abc", "abc_limit": 1},
    # TcpHtcp inherits TcpNewReno's slow start (one SMSS per ACK); its own increase ignores
    # ccsim's growth rule under model "ns3".
    "htcp": {"growth": "rfc5681"},
    # TcpLedbat is a TcpNewReno: its slow start and its fallback without a delay sample.
    "ledbat": {"growth": "rfc5681"},
}


@dataclass(frozen=True)
class Aqm:
    """One active queue at r1's bottleneck port in both simulators: ccsim's queue table (the
    limit is the cell's) and the same values as ns-3 attribute defaults on the command line."""

    ccsim_queue: Mapping[str, Any]
    ns3_queue_type: str
    ns3_attributes: tuple[tuple[str, str], ...]


#: CoDel, FQ-CoDel and PIE (issue 35) with every parameter written out on both sides, where
#: the two simulators' defaults differ (docs/validation.md, "CoDel, FQ-CoDel and PIE"): ns-3's
#: PIE keeps 25 packets and takes 1,000-byte packets as its mean; its FQ-CoDel marks ECN by
#: default (no flow here is ECN-capable) and drops 64 packets at once from the fattest flow
#: on overflow (never reached at a 1,000-packet limit, set alike all the same); its quantum is
#: the device's MTU, 1,500 bytes, against RFC 8290's 1,514 in ccsim.
_AQMS: Mapping[str, Aqm] = {
    "codel": Aqm(
        {"type": "codel", "target": "5ms", "interval": "100ms", "maxpacket": 1500, "ecn": False},
        "codel",
        (
            ("ns3::CoDelQueueDisc::Target", "5ms"),
            ("ns3::CoDelQueueDisc::Interval", "100ms"),
            ("ns3::CoDelQueueDisc::MinBytes", "1500"),
            ("ns3::CoDelQueueDisc::UseEcn", "false"),
        ),
    ),
    "fq_codel": Aqm(
        {
            "type": "fq_codel",
            "target": "5ms",
            "interval": "100ms",
            "maxpacket": 1500,
            "flows": 1024,
            "quantum": 1500,
            "drop_batch": 64,
            "ecn": False,
        },
        "fqcodel",
        (
            ("ns3::FqCoDelQueueDisc::Target", "5ms"),
            ("ns3::FqCoDelQueueDisc::Interval", "100ms"),
            ("ns3::FqCoDelQueueDisc::Flows", "1024"),
            ("ns3::FqCoDelQueueDisc::DropBatchSize", "64"),
            ("ns3::FqCoDelQueueDisc::UseEcn", "false"),
            ("ns3::CoDelQueueDisc::MinBytes", "1500"),
        ),
    ),
    "pie": Aqm(
        {
            "type": "pie",
            "target": "15ms",
            "t_update": "15ms",
            "max_burst": "150ms",
            "alpha": 0.125,
            "beta": 1.25,
            "mean_packet_size": 1500,
            "dq_rate_estimator": False,
            "derandomize": False,
            "ecn": False,
        },
        "pie",
        (
            ("ns3::PieQueueDisc::QueueDelayReference", "15ms"),
            ("ns3::PieQueueDisc::Tupdate", "15ms"),
            ("ns3::PieQueueDisc::MaxBurstAllowance", "150ms"),
            ("ns3::PieQueueDisc::A", "0.125"),
            ("ns3::PieQueueDisc::B", "1.25"),
            ("ns3::PieQueueDisc::MeanPktSize", "1500"),
            ("ns3::PieQueueDisc::UseDequeueRateEstimator", "false"),
            ("ns3::PieQueueDisc::UseDerandomization", "false"),
            ("ns3::PieQueueDisc::UseCapDropAdjustment", "true"),
            ("ns3::PieQueueDisc::UseEcn", "false"),
        ),
    ),
}

#: The same ns-3 runs beside ccsim's FQ-CoDel with ns-3's maxpacket rule: a flow queue with at
#: most a packet's worth left is never dropped from, whatever the whole queue holds (ns-3's flow
#: queues are CoDel queue discs of their own; Linux and ccsim's default compare the whole
#: queue's backlog; docs/validation.md).
AQMS: Mapping[str, Aqm] = {
    **_AQMS,
    "fq_codel_ns3": dataclasses.replace(
        _AQMS["fq_codel"],
        ccsim_queue={**_AQMS["fq_codel"].ccsim_queue, "maxpacket_scope": "flow"},
    ),
}


@dataclass(frozen=True)
class Cell:
    """One point of the matrix. Every field but ``design`` decides the runs."""

    algorithm: str = "sack"
    delayed_ack: bool = True
    loss: float = 0.0
    flows: int = 1
    queue_bdp: float = 2.0
    rtt_ms: float = 20.0
    rate: str = "10Mbps"
    duration_s: float = 100.0
    #: ns-3's recovery (TcpL4Protocol::RecoveryType): "classic" (TcpClassicRecovery, RFC 6675's
    #: cwnd = ssthresh) or "prr" (TcpPrrRecovery, ns-3's default, RFC 6937).
    ns3_recovery: str = "classic"
    #: "ns3": ccsim's ``ns3`` preset with the program's settings (NS3_PROGRAM_CHOICES); "rfc":
    #: ccsim's ``rfc`` preset as it is.
    profile: str = "ns3"
    start_gap_ms: float = 1.0
    access_rate: str = "1Gbps"
    access_delay_ms: float = 1.0
    #: "droptail", "red" on r1 -> r2 with the RED fields below, one of ``AQMS``, or "step":
    #: marking at K = ``red_min_th`` packets (ccsim's ``threshold`` queue, RFC 8257 §3.1; ns-3's
    #: RED with MinTh = MaxTh = K, QW 1, Gentle off and UseHardDrop off).
    queue_type: str = "droptail"
    #: The queue limit in packets, when not ``queue_bdp`` bandwidth-delay products.
    queue_packets_fixed: int = 0
    red_min_th: float = 5.0
    red_max_th: float = 15.0
    red_max_p: float = 0.1
    ecn: bool = False
    design: str = ""

    @property
    def queue_packets(self) -> int:
        """The bottleneck's queue limit: ``queue_bdp`` times the path's bandwidth-delay product
        in 1,500-byte packets (at least 2), unless fixed."""
        if self.queue_packets_fixed:
            return self.queue_packets_fixed
        bdp = rate_bps(self.rate) * self.rtt_ms / 1e3 / (8 * BDP_PACKET_BYTES)
        return max(2, round(self.queue_bdp * bdp))

    @property
    def bottleneck_delay_ms(self) -> float:
        """One-way delay of the bottleneck: the RTT less both access links, both ways."""
        return self.rtt_ms / 2 - 2 * self.access_delay_ms

    def key(self) -> str:
        """The cell's identity in the table (every field but ``design``)."""
        parts = [
            f"{f.name}={getattr(self, f.name)}"
            for f in dataclasses.fields(self)
            if f.name != "design"
        ]
        return ",".join(parts)


def rate_bps(rate: str) -> float:
    """``"10Mbps"`` -> 1e7."""
    units = {"Gbps": 1e9, "Mbps": 1e6, "Kbps": 1e3, "kbps": 1e3, "bps": 1.0}
    for unit, scale in units.items():
        if rate.endswith(unit):
            return float(rate[: -len(unit)]) * scale
    raise ValueError(f'"{rate}" is not a rate such as "10Mbps"')


# --- ccsim ------------------------------------------------------------------------------------


def tcp_keys(cell: Cell) -> dict[str, Any]:
    """The ``[tcp]`` section of the cell's ccsim scenario."""
    algo = ALGORITHMS[cell.algorithm]
    if cell.profile not in ("ns3", "rfc"):
        raise ValueError(f'profile "{cell.profile}" is not ns3 or rfc')
    keys: dict[str, Any] = {
        "preset": cell.profile,
        "variant": algo.variant,
        "cc": algo.cc,
        "mss": MSS,
        # TCP and IP headers without options: ns-3 sends none on data segments with
        # timestamps off (window scale and SACK-permitted ride on the SYN only).
        "header_bytes": 40,
        "delayed_ack": cell.delayed_ack,
        "delack_timeout": "200ms",
        # Only data segments are lost in both (ns-3: DataOnlyErrorModel), and ccsim's data
        # direction carries nothing else without the handshake.
        "handshake": False,
        "ecn": cell.ecn,
    }
    if cell.profile == "ns3":
        keys.update(NS3_PROGRAM_CHOICES)
        keys.update(NS3_GROWTH.get(algo.ns3_cc, {}))
    keys.update(dict(algo.ccsim_tcp))
    return keys


def ccsim_scenario(cell: Cell, sample_ms: float = 100.0) -> ccsim.Scenario:
    """The cell as a ccsim scenario (the seed is given to the run)."""
    sc = dumbbell(
        cell.flows,
        rate=cell.rate,
        delay_ms=cell.bottleneck_delay_ms,
        access_rate=cell.access_rate,
        access_delay_ms=cell.access_delay_ms,
        buffer_packets=cell.queue_packets,
        start_gap_ms=cell.start_gap_ms,
        duration=f"{cell.duration_s:g}s",
        tcp=tcp_keys(cell),
    )
    sc = sc.set("trace.interval", f"{round(sample_ms * 1e6)}ns")
    if cell.loss > 0:
        sc = sc.set(
            "links.bottleneck.loss",
            {"type": "uniform", "rate": cell.loss, "direction": "a_to_b"},
        )
    if cell.queue_type in AQMS:
        queue = {**AQMS[cell.queue_type].ccsim_queue, "limit": cell.queue_packets}
        sc = sc.set("links.bottleneck.a_to_b.queue", queue)
    if cell.queue_type == "step":
        queue = {"type": "threshold", "limit": cell.queue_packets, "k": round(cell.red_min_th)}
        sc = sc.set("links.bottleneck.a_to_b.queue", queue)
    if cell.queue_type == "red":
        sc = sc.set(
            "links.bottleneck.a_to_b.queue",
            {
                "type": "red",
                "limit": cell.queue_packets,
                "min_th": cell.red_min_th,
                "max_th": cell.red_max_th,
                "max_p": cell.red_max_p,
                "ecn": cell.ecn,
            },
        )
    return sc


def ccsim_runs(cells: Sequence[Cell], seeds: Sequence[int]) -> list[sweep.RunSpec]:
    """One sweep run per cell and seed, tagged with the cell's key."""
    runs = []
    for cell in cells:
        sc = ccsim_scenario(cell)
        for s in seeds:
            runs.append(sweep.RunSpec(sc.to_toml(), sc.overrides, s, (("cell", cell.key()),)))
    return runs


def ccsim_row(record: Mapping[str, Any], cell: Cell) -> dict[str, Any]:
    """A sweep record reduced to the table's measures."""
    flows = record["flows"]
    series = record["series"]
    cwnd = mean_cwnd_by_flow(series, flows["name"], flows["start_s"])
    goodputs = [float(x) for x in flows["goodput_bps"]]
    queue: dict[str, float] = {}
    if cell.queue_type != "droptail":
        links = record["links"]
        (i,) = [
            k
            for k, (link, direction) in enumerate(zip(links["link"], links["direction"]))
            if link == "bottleneck" and direction == "a_to_b"
        ]
        queue = {
            "queue_drops": float(links["drops_queue"][i]),
            **{m: float(links[m][i]) for m in QUEUE_DELAYS},
        }
    return measures(
        goodputs,
        sum(int(x) for x in flows["bytes_delivered"]) * 8 / cell.duration_s,
        retransmits=sum(int(x) for x in flows["retransmits"]),
        timeouts=sum(int(x) for x in flows["timeouts"]),
        fast_recoveries=sum(int(x) for x in flows["fast_retransmits"]),
        ecn_reductions=sum(int(x) for x in flows["ecn_reductions"]),
        mean_cwnd=cwnd,
        wall_s=float(record["summary"]["wall_seconds"]),
        **queue,
    )


def mean_cwnd_by_flow(
    series: Mapping[str, Sequence[Any]], names: Sequence[str], starts: Sequence[float]
) -> list[float]:
    """Each flow's mean sampled cwnd over the samples from its start on."""
    start_of = dict(zip(names, starts))
    sums: dict[str, float] = {n: 0.0 for n in names}
    counts: dict[str, int] = {n: 0 for n in names}
    for t, metric, name, value in zip(
        series["time_s"], series["metric"], series["name"], series["value"]
    ):
        if metric == "cwnd_bytes" and name in sums and t >= start_of[name] and t > 0:
            sums[name] += float(value)
            counts[name] += 1
    return [sums[n] / counts[n] if counts[n] else math.nan for n in names]


# --- ns-3 -------------------------------------------------------------------------------------


def ns3_args(cell: Cell, seed: int, sample_ms: float = 100.0) -> list[str]:
    """ccsim-dumbbell.cc's options for the cell and seed (ns-3's RngRun = seed)."""
    algo = ALGORITHMS[cell.algorithm]
    aqm = AQMS.get(cell.queue_type)
    ns3_queue_type = aqm.ns3_queue_type if aqm else cell.queue_type
    if cell.queue_type == "step":
        ns3_queue_type = "red"
    args = [
        f"--flows={cell.flows}",
        f"--rate={cell.rate}",
        f"--rttMs={cell.rtt_ms:g}",
        f"--accessRate={cell.access_rate}",
        f"--accessDelayMs={cell.access_delay_ms:g}",
        f"--queue={cell.queue_packets}",
        f"--queueType={ns3_queue_type}",
        f"--loss={cell.loss:g}",
        f"--duration={cell.duration_s:g}",
        f"--startGapMs={cell.start_gap_ms:g}",
        f"--cc={algo.ns3_cc}",
        f"--recovery={cell.ns3_recovery}",
        f"--sack={int(algo.ns3_sack)}",
        f"--delAckCount={2 if cell.delayed_ack else 1}",
        f"--mss={MSS}",
        f"--ecn={int(cell.ecn)}",
        f"--seed={seed}",
        f"--sampleMs={sample_ms:g}",
    ]
    if cell.queue_type == "red":
        args += [
            f"--redMinTh={cell.red_min_th:g}",
            f"--redMaxTh={cell.red_max_th:g}",
            f"--redMaxP={cell.red_max_p:g}",
            # FJ93's drop probability p_a = p_b / (1 - count p_b), as ccsim's RED; ns-3's
            # default Wait (ns-2's wait_) spaces drops further apart.
            "--ns3::RedQueueDisc::Wait=false",
        ]
    if aqm:
        args += [f"--{name}={value}" for name, value in aqm.ns3_attributes]
    if cell.queue_type == "step":
        k = f"{cell.red_min_th:g}"
        args += [
            f"--redMinTh={k}",
            f"--redMaxTh={k}",
            "--redQw=1",
            "--redGentle=0",
            "--redMeanPktSize=1500",
            "--ns3::RedQueueDisc::UseHardDrop=false",
        ]
    args += [f"--{name}={value}" for name, value in algo.ns3_attributes]
    return args


def parse_ns3_output(text: str) -> dict[str, Any]:
    """The ns-3 program's output: ``{"program": {...}, "flows": [{...}, ...], "run": {...}}``,
    each record's ``key=value`` pairs with numbers as numbers.

    >>> out = parse_ns3_output("flow id=0 goodput_bps=9.5e6 timeouts=2\\nrun wall_s=1.5")
    >>> out["flows"][0]["timeouts"], out["run"]["wall_s"]
    (2, 1.5)
    """
    parsed: dict[str, Any] = {"program": {}, "flows": [], "run": {}}
    for line in text.splitlines():
        words = line.split()
        if not words or words[0] not in ("ccsim-dumbbell", "flow", "run"):
            continue
        fields: dict[str, Any] = {}
        for word in words[1:]:
            name, sep, value = word.partition("=")
            if sep:
                fields[name] = number(value)
        if words[0] == "flow":
            parsed["flows"].append(fields)
        else:
            parsed["program" if words[0] == "ccsim-dumbbell" else "run"] = fields
    return parsed


def number(value: str) -> Any:
    """An int, else a float, else the string."""
    for kind in (int, float):
        try:
            return kind(value)
        except ValueError:
            pass
    return value


def ns3_row(parsed: Mapping[str, Any], cell: Cell) -> dict[str, Any]:
    """The ns-3 program's parsed output reduced to the table's measures. Without SACK, ccsim's
    cwnd is inflated during fast recovery (RFC 5681 §3.2) as ns-3's ``cWndInfl`` is, while
    ns-3's ``cWnd`` stays at ssthresh: the inflated one is compared then."""
    flows = parsed["flows"]
    if not flows:
        raise ValueError("the ns-3 output has no flow lines")
    inflated = not ALGORITHMS[cell.algorithm].ns3_sack
    cwnd_key = "mean_cwnd_inflated_bytes" if inflated else "mean_cwnd_bytes"
    return measures(
        [float(f["goodput_bps"]) for f in flows],
        sum(int(f["bytes_delivered"]) for f in flows) * 8 / cell.duration_s,
        retransmits=sum(int(f["retransmits"]) for f in flows),
        timeouts=sum(int(f["timeouts"]) for f in flows),
        fast_recoveries=sum(int(f["fast_recoveries"]) for f in flows),
        ecn_reductions=sum(int(f["cwr_entries"]) for f in flows),
        mean_cwnd=[float(f[cwnd_key]) for f in flows],
        wall_s=float(parsed["run"].get("wall_s", math.nan)),
        **(
            {
                "queue_drops": float(parsed["run"]["qdisc_dropped"]),
                **{m: float(parsed["run"][NS3_SOJOURN[m]]) for m in QUEUE_DELAYS},
            }
            if cell.queue_type != "droptail"
            else {}
        ),
    )


@dataclass
class Ns3Runner:
    """Runs the ns-3 program, one process at a time, keeping each output in ``cache``."""

    program: Path
    cache: Path
    nice: int = 10

    def path(self, args: Sequence[str]) -> Path:
        h = hashlib.sha256("\n".join(args).encode()).hexdigest()[:32]
        return self.cache / h[:2] / f"{h}.txt"

    def has(self, args: Sequence[str]) -> bool:
        return self.path(args).exists()

    def run(self, args: Sequence[str], extra: Sequence[str] = ()) -> str:
        """The program's output for ``args`` (cached); ``extra`` options (a trace file) do
        not change the output and are not part of the key."""
        p = self.path(args)
        if p.exists():
            return p.read_text(encoding="utf-8")
        cmd = [str(self.program), *args, *extra]
        if self.nice and hasattr(os, "nice"):
            cmd = ["nice", "-n", str(self.nice), *cmd]
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(
                f"ns-3 failed ({done.returncode}): {' '.join(cmd)}\n{done.stderr[-2000:]}"
            )
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_suffix(".tmp")
        tmp.write_text(f"# {' '.join(args)}\n{done.stdout}", encoding="utf-8")
        os.replace(tmp, p)
        return p.read_text(encoding="utf-8")


# --- the table --------------------------------------------------------------------------------

#: The table's columns after the cell's own fields.
MEASURES = (
    "goodput_bps",
    "flow_goodputs_bps",
    "jain",
    "retransmits",
    "timeouts",
    "fast_recoveries",
    "ecn_reductions",
    "mean_cwnd_bytes",
    "wall_s",
    "queue_drops",
    "queue_delay_p50_s",
    "queue_delay_p95_s",
    "queue_delay_p99_s",
)
#: The queue delay percentiles compared (r1's bottleneck port; NaN without a queue disc in
#: ns-3, i.e. with droptail), and the ns-3 program's names for them.
QUEUE_DELAYS = ("queue_delay_p50_s", "queue_delay_p95_s", "queue_delay_p99_s")
NS3_SOJOURN = {
    "queue_delay_p50_s": "sojourn_p50_s",
    "queue_delay_p95_s": "sojourn_p95_s",
    "queue_delay_p99_s": "sojourn_p99_s",
}
CELL_FIELDS = tuple(f.name for f in dataclasses.fields(Cell))
COLUMNS = (
    *CELL_FIELDS,
    "queue_packets",
    "simulator",
    "seed",
    *MEASURES,
    "ns3_commit",
    "ccsim_commit",
)


def measures(
    goodputs: Sequence[float],
    aggregate_bps: float,
    *,
    retransmits: int,
    timeouts: int,
    fast_recoveries: int,
    ecn_reductions: int,
    mean_cwnd: Sequence[float],
    wall_s: float,
    queue_drops: float = math.nan,
    queue_delay_p50_s: float = math.nan,
    queue_delay_p95_s: float = math.nan,
    queue_delay_p99_s: float = math.nan,
) -> dict[str, Any]:
    """One run's row of measures: the aggregate goodput (all bytes delivered over the run's
    duration), each flow's (its bytes over the time since its start), Jain's index of those,
    the counts summed over flows and the mean of the flows' mean cwnd; with a queue disc at
    the bottleneck, its drops and its packets' queue delay percentiles (NaN otherwise)."""
    cwnds = [c for c in mean_cwnd if not math.isnan(c)]
    return {
        "goodput_bps": aggregate_bps,
        "flow_goodputs_bps": ";".join(f"{g:.0f}" for g in goodputs),
        "jain": jain_index(goodputs) if len(goodputs) > 1 else 1.0,
        "retransmits": retransmits,
        "timeouts": timeouts,
        "fast_recoveries": fast_recoveries,
        "ecn_reductions": ecn_reductions,
        "mean_cwnd_bytes": sum(cwnds) / len(cwnds) if cwnds else math.nan,
        "wall_s": wall_s,
        "queue_drops": queue_drops,
        "queue_delay_p50_s": queue_delay_p50_s,
        "queue_delay_p95_s": queue_delay_p95_s,
        "queue_delay_p99_s": queue_delay_p99_s,
    }


def table_row(
    cell: Cell,
    simulator: str,
    seed: int,
    values: Mapping[str, Any],
    ns3_commit: str,
    ccsim_commit: str,
) -> dict[str, Any]:
    """A full row of the table."""
    row: dict[str, Any] = {f: getattr(cell, f) for f in CELL_FIELDS}
    row.update(queue_packets=cell.queue_packets, simulator=simulator, seed=seed)
    row.update({m: values.get(m, math.nan) for m in MEASURES})
    row.update(ns3_commit=ns3_commit, ccsim_commit=ccsim_commit)
    return row


def row_id(row: Mapping[str, Any]) -> tuple[str, ...]:
    """A row's identity: the cell (every field but the design), simulator and seed, as the
    table writes them (so a row read back from the CSV has the identity it was written with)."""
    return tuple(str(fmt(row[f])) for f in (*CELL_FIELDS, "simulator", "seed") if f != "design")


def write_table(path: Path, rows: Iterable[Mapping[str, Any]], merge: bool = True) -> int:
    """Write ``rows`` to ``path`` as CSV; with ``merge``, rows already there for other cells,
    simulators or seeds are kept (a new row replaces the old one of the same identity).
    Returns the number of rows written."""
    kept: dict[tuple[str, ...], dict[str, Any]] = {}
    if merge and path.exists():
        with path.open(newline="", encoding="utf-8") as fh:
            for old in csv.DictReader(fh):
                kept[row_id(old)] = dict(old)
    for row in rows:
        kept[row_id(row)] = {c: fmt(row[c]) for c in COLUMNS}
    ordered = sorted(kept.values(), key=lambda r: (r["design"], row_id(r)))
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with tmp.open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(COLUMNS), lineterminator="\n")
        w.writeheader()
        for r in ordered:
            w.writerow({c: r.get(c, "") for c in COLUMNS})
    os.replace(tmp, path)
    return len(ordered)


def fmt(value: Any) -> Any:
    """Floats with 6 significant digits (the table is read, not re-computed from)."""
    if isinstance(value, float) and not value.is_integer():
        return f"{value:.6g}"
    if isinstance(value, float):
        return int(value)
    return value


@dataclass(frozen=True)
class Comparison:
    """One cell of the table, both simulators' seeds together."""

    row: Mapping[str, Any]  # the cell's fields (its first row)
    seeds: int
    means: tuple[tuple[float, float], ...]  # (ccsim, ns-3) of each of SHOWN's measures
    ratio: float  # ccsim's mean aggregate goodput over ns-3's
    half: float  # half-width of the 95 % interval of the difference, relative to ns-3's mean
    flow_gap: float  # the largest |ccsim/ns-3 - 1| of a flow's mean goodput (flows by start)
    # A flow beyond ±15 % whose difference is significant: its 95 % interval, widened for the
    # cell's number of flows (Bonferroni), excludes zero.
    flow_significant: bool = False

    @property
    def beyond(self) -> bool:
        """Beyond ±5 % in aggregate."""
        return abs(self.ratio - 1) > AGGREGATE_TOLERANCE

    @property
    def significant(self) -> bool:
        return self.half < abs(self.ratio - 1)


#: The issue's tolerances: ±5 % aggregate goodput, ±15 % per flow.
AGGREGATE_TOLERANCE = 0.05
FLOW_TOLERANCE = 0.15

#: The measures the summary shows: label, scale, format.
SHOWN = {
    "goodput_bps": ("goodput Mbit/s", 1e-6, "{:.3f}"),
    "retransmits": ("rtx", 1, "{:.0f}"),
    "timeouts": ("RTOs", 1, "{:.1f}"),
    "fast_recoveries": ("FR", 1, "{:.0f}"),
    "mean_cwnd_bytes": ("cwnd seg", 1 / MSS, "{:.1f}"),
}
#: What the summary shows instead of the cwnd for designs with a queue disc at the bottleneck
#: (``aqm``): its drops and its packets' queue delay.
SHOWN_QUEUE = {
    "goodput_bps": ("goodput Mbit/s", 1e-6, "{:.3f}"),
    "retransmits": ("rtx", 1, "{:.0f}"),
    "queue_drops": ("drops", 1, "{:.0f}"),
    "queue_delay_p50_s": ("delay p50 ms", 1e3, "{:.2f}"),
    "queue_delay_p95_s": ("p95 ms", 1e3, "{:.2f}"),
    "queue_delay_p99_s": ("p99 ms", 1e3, "{:.2f}"),
}
#: Designs whose summary shows ``SHOWN_QUEUE``.
QUEUE_DESIGNS = ("aqm", "dctcp")


def shown_for(designs: Sequence[str]) -> Mapping[str, tuple[str, float, str]]:
    """The summary's measures for ``designs``: the queue's when all of them have a queue disc."""
    if designs and all(d in QUEUE_DESIGNS for d in designs):
        return SHOWN_QUEUE
    return SHOWN


def comparisons(
    path: Path,
    designs: Sequence[str] = (),
    shown: Mapping[str, tuple[str, float, str]] = SHOWN,
) -> list[Comparison]:
    """The table's cells that have rows from both simulators, in the table's order."""
    import pandas as pd

    df = pd.read_csv(path)
    if designs:
        df = df[df["design"].isin(designs)]
    keys = [f for f in CELL_FIELDS if f != "design"]
    out = []
    for _, group in df.groupby(keys, sort=False, dropna=False):
        sims = {sim: g for sim, g in group.groupby("simulator")}
        if set(sims) != {"ccsim", "ns3"}:
            continue
        # Seeds that change nothing (no random loss: every run the same in both simulators)
        # are one sample, not five: no interval, no claim of significance.
        if all(same_runs(g) for g in sims.values()):
            sims = {sim: g.iloc[:1] for sim, g in sims.items()}
        means = tuple(
            (float(sims["ccsim"][col].mean()) * scale, float(sims["ns3"][col].mean()) * scale)
            for col, (_, scale, _) in shown.items()
        )
        ratio, half = welch_ratio(
            list(sims["ccsim"]["goodput_bps"]), list(sims["ns3"]["goodput_bps"])
        )
        flows = [
            [[float(g) for g in str(v).split(";")] for v in sims[sim]["flow_goodputs_bps"]]
            for sim in ("ccsim", "ns3")
        ]
        per_flow = [[sum(col) / len(col) for col in zip(*runs)] if runs else [] for runs in flows]
        flow_gap = max((abs(a / b - 1) for a, b in zip(*per_flow) if b > 0), default=math.nan)
        seeds = min(len(sims["ccsim"]), len(sims["ns3"]))
        out.append(
            Comparison(
                group.iloc[0],
                seeds,
                means,
                ratio,
                half,
                flow_gap,
                flow_beyond_significantly(*flows),
            )
        )
    return out


def summary_row(c: Comparison, shown: Mapping[str, tuple[str, float, str]] = SHOWN) -> str:
    """A cell as a row of the summary's table."""
    cells = [
        f"{form.format(a)} / {form.format(b)}"
        for (a, b), (_, _, form) in zip(c.means, shown.values())
    ]
    flag = (" !" if c.beyond else "") + (" *" if c.significant else "")
    shown_ci = f" ± {c.half:.3f}" if not math.isnan(c.half) else ""
    return (
        f"| {describe(c.row)} | {c.seeds} | "
        + " | ".join(cells)
        + f" | {c.ratio:.3f}{shown_ci}{flag} |"
    )


def summary(path: Path, designs: Sequence[str] = ()) -> str:
    """The table as docs/validation.md shows it: per cell, the mean over seeds of each measure
    in ccsim and in ns-3, and ccsim's aggregate goodput as a ratio of ns-3's with the
    half-width of the 95 % interval of the difference of the means (Welch), both relative to
    ns-3's mean. ``!`` marks a ratio beyond ±5 %, ``*`` a difference whose interval excludes 0.
    A cell whose seeds all give the same run in both simulators counts as one seed, with no
    interval and no ``*``. Cells without rows from both simulators are left out."""
    shown = shown_for(designs)
    lines = [
        "| cell | seeds | "
        + " | ".join(f"{label} ccsim / ns-3" for label, _, _ in shown.values())
        + " | goodput ratio (95 % CI) |",
        "|---|---|" + "---|" * (len(shown) + 1),
    ]
    lines += [summary_row(c, shown) for c in comparisons(path, designs, shown)]
    return "\n".join(lines)


def overview(path: Path, designs: Sequence[str] = (), worst: int = 12) -> str:
    """A large design in brief: per algorithm, delayed ACKs and loss rate, how many cells are
    beyond ±5 % in aggregate goodput (of which significantly) and how many have a flow beyond
    ±15 % (of which significantly, `flow_beyond_significantly`); then the ``worst`` cells
    furthest from ns-3, as the summary shows them."""
    cs = comparisons(path, designs)
    losses = sorted({float(c.row["loss"]) for c in cs})
    groups: dict[tuple[str, str], list[Comparison]] = {}
    for c in cs:
        delack = "delack" if str(c.row["delayed_ack"]) == "True" else "no delack"
        groups.setdefault((str(c.row["algorithm"]), delack), []).append(c)
    lines = [
        "Cells beyond ±5 % aggregate goodput (of which significant) / with a flow beyond ±15 %"
        " (of which significant), of the cells at each loss rate:",
        "",
        "| algorithm | ACKs | " + " | ".join(f"{loss:.1%}" for loss in losses) + " | all |",
        "|---|---|" + "---|" * (len(losses) + 1),
    ]

    def count(cells: list[Comparison]) -> str:
        b = sum(c.beyond for c in cells)
        s = sum(c.beyond and c.significant for c in cells)
        f = sum(c.flow_gap > FLOW_TOLERANCE for c in cells)
        fs = sum(c.flow_gap > FLOW_TOLERANCE and c.flow_significant for c in cells)
        return f"{b} ({s}) / {f} ({fs}) of {len(cells)}"

    for (alg, delack), cells in groups.items():
        by_loss = [[c for c in cells if float(c.row["loss"]) == loss] for loss in losses]
        lines.append(
            f"| {alg} | {delack} | "
            + " | ".join(count(b) for b in by_loss)
            + f" | {count(cells)} |"
        )
    lines.append("| all | | " + " | ".join("" for _ in losses) + f" | {count(cs)} |")
    far = sorted(cs, key=lambda c: -abs(math.log(c.ratio)) if c.ratio > 0 else 0)[:worst]
    lines += [
        "",
        f"The {len(far)} cells furthest from ns-3:",
        "",
        "| cell | seeds | "
        + " | ".join(f"{label} ccsim / ns-3" for label, _, _ in SHOWN.values())
        + " | goodput ratio (95 % CI) |",
        "|---|---|" + "---|" * (len(SHOWN) + 1),
        *(summary_row(c) for c in far),
    ]
    return "\n".join(lines)


def same_runs(runs: Any) -> bool:
    """Whether a simulator's rows of one cell are all the same run (seeds that change nothing:
    the goodput of every flow equal), by the reports' rule for identical replicates."""
    from ccsim.experiment.stats import deterministic

    return deterministic(len(runs), int(runs["flow_goodputs_bps"].astype(str).nunique()))


def flow_beyond_significantly(
    ccsim_runs: Sequence[Sequence[float]], ns3_runs: Sequence[Sequence[float]]
) -> bool:
    """Whether a flow's goodput (flows by start, each run a list of them) differs from ns-3's
    by more than ±15 % and significantly: its interval excludes zero at 95 % for the cell as a
    whole, each of its n flows tested at 1 - 0.05/n (Bonferroni). The flows of a dumbbell are
    nearly interchangeable, so without the test the largest of ten flows' differences passes
    ±15 % by chance at high loss, where one flow's goodput varies widely from seed to seed."""
    if not ccsim_runs or not ns3_runs:
        return False
    a_flows, b_flows = list(zip(*ccsim_runs)), list(zip(*ns3_runs))
    level = 1 - 0.025 / max(len(a_flows), 1)
    for a, b in zip(a_flows, b_flows):
        ratio, half = welch_ratio(a, b, level)
        gap = abs(ratio - 1)
        if gap > FLOW_TOLERANCE and gap > half:
            return True
    return False


def welch_ratio(
    a: Sequence[float], b: Sequence[float], level: float = 0.975
) -> tuple[float, float]:
    """mean(a) / mean(b), and the half-width of the interval of mean(a) - mean(b) over mean(b)
    whose upper tail is 1 - ``level`` (95 % two-sided by default; Welch's t with
    Welch-Satterthwaite degrees of freedom); 0 when neither varies, NaN with fewer than two
    values on a side."""
    from ccsim.experiment.stats import t_quantile

    na, nb = len(a), len(b)
    ma, mb = sum(a) / na, sum(b) / nb
    if not mb:
        return math.nan, math.nan
    if na < 2 or nb < 2:
        return ma / mb, math.nan
    va = sum((x - ma) ** 2 for x in a) / (na - 1) / na
    vb = sum((x - mb) ** 2 for x in b) / (nb - 1) / nb
    if va + vb == 0:
        return ma / mb, 0.0
    df = (va + vb) ** 2 / (va**2 / (na - 1) + vb**2 / (nb - 1))
    return ma / mb, t_quantile(level, df) * math.sqrt(va + vb) / mb


AQM_NAMES = {
    "codel": "CoDel",
    "fq_codel": "FQ-CoDel",
    "fq_codel_ns3": "FQ-CoDel, ns-3's maxpacket",
    "pie": "PIE",
}


def describe(row: Mapping[str, Any]) -> str:
    """A cell in a few words, for the summary: what differs from the defaults of ``Cell``."""
    base = Cell()
    words = [str(row["algorithm"])]
    if str(row["algorithm"]) in ("sack", "prr", "cubic", "highspeed", "scalable", "bic", "vegas"):
        words.append(f"ns-3 {row['ns3_recovery']}")
    if str(row["profile"]) != base.profile:
        words.append(f"ccsim {row['profile']}")
    words.append("delack" if str(row["delayed_ack"]) == "True" else "no delack")
    words.append(f"{float(row['loss']):.1%} loss")
    words.append(f"{row['flows']} fl")
    words.append(f"q {row['queue_packets']}")
    words.append(f"{float(row['rtt_ms']):g} ms")
    if str(row["rate"]) != base.rate:
        words.append(str(row["rate"]))
    if str(row["queue_type"]) in AQMS:
        words.append(AQM_NAMES[str(row["queue_type"])])
    elif str(row["queue_type"]) == "step":
        words.append(f"step K {float(row['red_min_th']):g}")
    elif str(row["queue_type"]) != base.queue_type:
        words.append("RED+ECN" if str(row["ecn"]) == "True" else "RED")
    if float(row["start_gap_ms"]) != base.start_gap_ms:
        words.append(f"gap {float(row['start_gap_ms']) / 1e3:g} s")
    if float(row["duration_s"]) != base.duration_s:
        words.append(f"{float(row['duration_s']):g} s")
    return ", ".join(words)


# --- designs ----------------------------------------------------------------------------------


def grid(design: str, **axes: Sequence[Any]) -> list[Cell]:
    """The cross product of ``axes`` (Cell fields) as cells of ``design``."""
    names = list(axes)
    return [
        Cell(design=design, **dict(zip(names, combo)))
        for combo in itertools.product(*(axes[n] for n in names))
    ]


LOSSES = (0.0, 0.001, 0.01, 0.02, 0.05, 0.1)


def design(name: str) -> list[Cell]:
    """The cells of a named design (docs/validation.md, "The matrix")."""
    if name == "pilot":
        return grid(
            "pilot",
            algorithm=["sack"],
            loss=[0.0, 0.01, 0.05],
            ns3_recovery=["classic", "prr"],
        )
    if name == "recovery":
        # The three loss recoveries at every factor of the issue.
        return grid(
            "recovery",
            algorithm=["reno", "newreno", "sack"],
            delayed_ack=[True, False],
            loss=list(LOSSES),
            flows=[1, 10],
            queue_bdp=[0.5, 2.0],
            rtt_ms=[10.0, 100.0],
        )
    if name == "prr":
        # ccsim's PRR against ns-3's TcpPrrRecovery: the pilot's cells (beside its SACK cells
        # with ns-3's PRR) and the recovery matrix's one-flow cells with delayed ACKs (beside
        # its SACK cells with ns-3's classic recovery), at the same seeds and loss rates.
        return grid("prr", algorithm=["prr"], loss=[0.0, 0.01, 0.05], ns3_recovery=["prr"]) + grid(
            "prr",
            algorithm=["prr"],
            ns3_recovery=["prr"],
            loss=list(LOSSES),
            queue_bdp=[0.5, 2.0],
            rtt_ms=[100.0, 10.0],
        )
    if name == "recovery-rfc":
        # The same cells with ccsim's rfc preset (RFC defaults, Limited Transmit on) against
        # the same ns-3 runs: what a user gets without choosing ns-3's options.
        return [dataclasses.replace(c, design=name, profile="rfc") for c in design("recovery")]
    if name == "algorithms":
        # The five other controllers on a reduced set: delayed ACKs on, the default RTT, both
        # queues, three loss rates, 1 and 10 flows.
        return grid(
            "algorithms",
            algorithm=["cubic", "highspeed", "scalable", "bic", "vegas"],
            loss=[0.0, 0.01, 0.05],
            flows=[1, 10],
            queue_bdp=[0.5, 2.0],
        )
    if name == "highspeed":
        # The high bandwidth-delay case: four HighSpeed flows on 1 Gbit/s with a
        # 225 ms RTT and the P2 benchmark's 3,750-packet buffer, started together and 10 s
        # apart, without loss.
        return grid(
            "highspeed",
            algorithm=["highspeed"],
            flows=[4],
            rate=["1Gbps"],
            rtt_ms=[225.0],
            access_rate=["10Gbps"],
            queue_packets_fixed=[3750],
            start_gap_ms=[0.0, 10000.0],
            duration_s=[60.0],
        )
    if name == "ecn":
        # RFC 3168 with RED: ten SACK flows over 100 Mbit/s, RED 50/150 packets, max_p 0.1,
        # a hard limit of 500; ECN marking against early dropping.
        return grid(
            "ecn",
            algorithm=["sack"],
            flows=[10],
            rate=["100Mbps"],
            queue_type=["red"],
            queue_packets_fixed=[500],
            red_min_th=[50.0],
            red_max_th=[150.0],
            red_max_p=[0.1],
            ecn=[True, False],
            duration_s=[60.0],
        )
    if name == "htcp":
        # H-TCP (issue 34): one and ten flows, both queues, three loss rates, the default
        # 10 Mbit/s, 20 ms path and a 100 ms one where its high-speed mode has room to act.
        return grid(
            "htcp",
            algorithm=["htcp", "htcp_ns3"],
            loss=[0.0, 0.001, 0.01],
            flows=[1, 10],
            queue_bdp=[0.5, 2.0],
            rtt_ms=[20.0, 100.0],
        )
    if name == "bbr":
        # BBR v1 (issue 34): one and two flows, queues of 1 and 4 BDP, RTT 20 and 100 ms,
        # 10 Mbit/s, no loss, 30 s; seeds draw BBR's first ProbeBW phase.
        return grid(
            "bbr",
            algorithm=["bbr"],
            flows=[1, 2],
            queue_bdp=[1.0, 4.0],
            rtt_ms=[20.0, 100.0],
            duration_s=[30.0],
        )
    if name == "dctcp":
        # DCTCP (issue 34): two and ten flows over a step-marking queue at K = 5 and 20 packets
        # (RFC 8257 §4: K > C·RTT/7 = 2.4 packets here), 200 packets deep, 10 Mbit/s, 20 ms,
        # 30 s.
        return grid(
            "dctcp",
            algorithm=["dctcp"],
            flows=[2, 10],
            queue_type=["step"],
            queue_packets_fixed=[200],
            red_min_th=[5.0, 20.0],
            ecn=[True],
            duration_s=[30.0],
        )
    if name == "ledbat":
        # LEDBAT (issue 34): one and two flows on a 1,000-packet buffer (1.2 s at 10 Mbit/s,
        # far above the 100 ms target) at 20 and 100 ms, with and without slow start.
        return grid(
            "ledbat",
            algorithm=["ledbat", "ledbat_noss"],
            queue_packets_fixed=[1000],
            flows=[1, 2],
            rtt_ms=[20.0, 100.0],
            duration_s=[60.0],
        )
    if name == "aqm":
        # CoDel, FQ-CoDel and PIE (issue 35) at r1's bottleneck port, 1,000 packets deep: one,
        # four and sixteen SACK flows over 10 Mbit/s at 20 and 100 ms, 60 s each.
        return grid(
            "aqm",
            algorithm=["sack"],
            queue_type=list(AQMS),
            queue_packets_fixed=[1000],
            flows=[1, 4, 16],
            rtt_ms=[20.0, 100.0],
            duration_s=[60.0],
        )
    if name == "rfc":
        # ccsim's rfc preset as it stands against the same ns-3 runs as the pilot's classic.
        return grid("rfc", algorithm=["sack"], loss=[0.0, 0.01, 0.05], profile=["rfc"])
    raise ValueError(f'design "{name}" is not one of {", ".join(DESIGNS)}')


DESIGNS = (
    "pilot",
    "recovery",
    "recovery-rfc",
    "prr",
    "algorithms",
    "rfc",
    "highspeed",
    "ecn",
    "htcp",
    "aqm",
    "ledbat",
    "bbr",
    "dctcp",
)


# --- running ----------------------------------------------------------------------------------


def git_commit(repo: Path) -> str:
    """``repo``'s HEAD, with ``+dirty`` when tracked files differ from it."""
    try:
        head = subprocess.run(
            ["git", "-C", str(repo), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+dirty" if dirty else "")


#: Cells whose ccsim runs are executed and reduced together (memory, not speed).
CCSIM_CHUNK_CELLS = 16


class RowCache:
    """The measures of each finished ccsim run (``ccsim_row``), one small JSON file per run
    under ``directory``, by the run's sweep key (engine and resolved scenario): what the
    matrix reads again when it resumes or is re-drawn, where the sweep store kept each run's
    whole tables. A file that cannot be read counts as missing, and its run is made again."""

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)

    def path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        try:
            with self.path(key).open(encoding="utf-8") as fh:
                row = json.load(fh)
        except (OSError, ValueError):
            return None
        return row if isinstance(row, dict) and set(row) == set(MEASURES) else None

    def put(self, key: str, row: Mapping[str, Any]) -> None:
        p = self.path(key)
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_name(f".tmp-{p.stem}-{os.getpid()}.json")
        try:
            with open(tmp, "w", encoding="utf-8") as fh:
                json.dump(dict(row), fh)
            os.replace(tmp, p)
        finally:
            tmp.unlink(missing_ok=True)


def row_cache_of(store: sweep.Store) -> RowCache:
    """The row cache beside a sweep store: ``<store>-rows``."""
    return RowCache(store.directory.with_name(store.directory.name + "-rows"))


def run_cells(
    cells: Sequence[Cell],
    seeds: Sequence[int],
    runner: Ns3Runner | None,
    store: sweep.Store,
    ns3_commit: str,
    ccsim_commit: str,
    progress: bool = True,
) -> list[dict[str, Any]]:
    """Every cell and seed in ccsim (a chunk of cells at a time, through the sweep store, each
    record reduced to its measures in the row cache beside it) and in ns-3 (one process at a
    time); the table's rows."""
    rows: list[dict[str, Any]] = []
    cache = row_cache_of(store)
    # A run's record holds its whole result tables: the recovery design's 1,440 runs held at
    # once grew past 23 GB and were killed. A chunk of cells at a time, each record reduced to
    # its measures as it comes and then deleted (they were 1-9 MB each on disk).
    for start in range(0, len(cells), CCSIM_CHUNK_CELLS):
        chunk = cells[start : start + CCSIM_CHUNK_CELLS]
        runs = ccsim_runs(chunk, seeds)
        keys = [r.key() for r in runs]
        by_run = {(dict(r.tags)["cell"], r.seed): k for r, k in zip(runs, keys)}
        by_cell = {c.key(): c for c in chunk}
        missing = [r for r, k in zip(runs, keys) if cache.get(k) is None]
        if missing:
            what = f"ccsim {start + 1}-{start + len(chunk)} of {len(cells)} cells"
            report = sweep.execute(missing, store, workers=1, progress=progress, description=what)
            for rec in report.records:
                key = by_run[(rec["tags"]["cell"], rec["seed"])]
                cache.put(key, ccsim_row(rec, by_cell[rec["tags"]["cell"]]))
                store.path(key).unlink(missing_ok=True)
            del report
        for r, k in zip(runs, keys):
            measured = cache.get(k)
            if measured is None:
                raise ValueError(f"{cache.path(k)}: the measures of a finished run are not there")
            cell = by_cell[dict(r.tags)["cell"]]
            rows.append(table_row(cell, "ccsim", r.seed, measured, ns3_commit, ccsim_commit))
    if runner is None:
        return rows
    todo = [(c, s) for c in cells for s in seeds]
    for i, (cell, s) in enumerate(todo, 1):
        args = ns3_args(cell, s)
        cached = runner.has(args)
        t0 = time.monotonic()
        out = runner.run(args)
        if progress:
            what = "cached" if cached else f"{time.monotonic() - t0:.1f} s"
            print(f"ns-3 {i}/{len(todo)} ({what}): {cell.key()} seed={s}", file=sys.stderr)
        rows.append(
            table_row(
                cell, "ns3", s, ns3_row(parse_ns3_output(out), cell), ns3_commit, ccsim_commit
            )
        )
    return rows


#: Cells whose cwnd is drawn from both simulators (seed 1, the first 20 s, 10 ms samples).
TRACE_CELLS = (
    Cell(algorithm="sack", loss=0.01, duration_s=20.0, design="trace"),
    Cell(algorithm="sack", loss=0.05, duration_s=20.0, design="trace"),
    Cell(algorithm="newreno", loss=0.01, duration_s=20.0, design="trace"),
)
TRACE_SAMPLE_MS = 10.0


def trace_name(cell: Cell) -> str:
    return f"{cell.algorithm}-loss{cell.loss:g}-delack{int(cell.delayed_ack)}-{cell.flows}f"


def write_traces(runner: Ns3Runner, out: Path, figures: Path) -> list[Path]:
    """The cwnd of seed 1 of each trace cell in both simulators: a CSV per cell
    (``time_s, simulator, cwnd_bytes``) and an overlaid figure per cell."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out.mkdir(parents=True, exist_ok=True)
    figures.mkdir(parents=True, exist_ok=True)
    written = []
    for cell in TRACE_CELLS:
        name = trace_name(cell)
        res = ccsim.run(ccsim_scenario(cell, TRACE_SAMPLE_MS), seed=1)
        s = res.series
        s = s[(s["metric"] == "cwnd_bytes") & (s["name"] == "f0")]
        points = [("ccsim", float(t), float(v)) for t, v in zip(s["time_s"], s["value"])]
        ns3_csv = out / f".{name}-ns3-raw.csv"
        args = ns3_args(cell, 1, TRACE_SAMPLE_MS)
        runner.path(args).unlink(missing_ok=True)  # the trace file comes with a fresh run
        runner.run(args, extra=[f"--cwndTrace={ns3_csv}"])
        inflated = not ALGORITHMS[cell.algorithm].ns3_sack
        with ns3_csv.open(newline="", encoding="utf-8") as fh:
            for r in csv.DictReader(fh):
                col = "cwnd_inflated_bytes" if inflated else "cwnd_bytes"
                points.append(("ns3", float(r["time_s"]), float(r[col])))
        ns3_csv.unlink()
        path = out / f"{name}.csv"
        with path.open("w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh, lineterminator="\n")
            w.writerow(["time_s", "simulator", "cwnd_bytes"])
            for sim, t, v in points:
                w.writerow([f"{t:.3f}", sim, f"{v:.0f}"])
        fig, ax = plt.subplots(figsize=(8, 3))
        for sim, style in (("ccsim", "-"), ("ns3", "--")):
            ts = [t for s_, t, _ in points if s_ == sim]
            vs = [v / MSS for s_, _, v in points if s_ == sim]
            ax.plot(ts, vs, style, lw=0.8, label="ns-3.48" if sim == "ns3" else "ccsim")
        ax.set_xlabel("time (s)")
        ax.set_ylabel("cwnd (segments)")
        ax.set_title(
            f"{cell.algorithm}, {cell.loss:.0%} loss, {cell.rtt_ms:g} ms, "
            f"queue {cell.queue_packets} pkt, seed 1"
        )
        ax.legend(loc="upper right")
        fig.tight_layout()
        png = figures / f"ns3-cwnd-{name}.png"
        fig.savefig(png, dpi=110)
        plt.close(fig)
        written += [path, png]
    return written


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ns3", type=Path, help="the built ccsim-dumbbell program of ns-3")
    ap.add_argument(
        "--ns3-commit",
        default="unknown",
        help="the ns-3 commit the program was built from (recorded in the table)",
    )
    ap.add_argument(
        "--design",
        action="append",
        choices=DESIGNS,
        help="cells to run (repeatable; default pilot)",
    )
    ap.add_argument("--seeds", type=int, default=5, help="seeds 1..N (default 5)")
    ap.add_argument(
        "--store",
        type=Path,
        default=REPO / "results" / "ns3-validation",
        help="where finished runs are kept (ccsim records, ns-3 outputs)",
    )
    ap.add_argument("--out", type=Path, default=RESULTS, help="the table (merged)")
    ap.add_argument("--ccsim-only", action="store_true", help="run no ns-3")
    ap.add_argument(
        "--traces", action="store_true", help="write the cwnd traces and their figures (docs/img/)"
    )
    ap.add_argument("--dry-run", action="store_true", help="list the runs, run nothing")
    ap.add_argument(
        "--summary",
        action="store_true",
        help="print the table's per-cell comparison (Markdown) and stop",
    )
    ap.add_argument(
        "--overview",
        action="store_true",
        help="print a large design in brief (cells beyond the tolerances, the worst cells)",
    )
    ap.add_argument(
        "--duration",
        type=float,
        help="simulated seconds of every cell instead of the design's (timing)",
    )
    args = ap.parse_args(argv)

    if args.summary:
        print(summary(args.out, args.design or ()))
        return 0
    if args.overview:
        print(overview(args.out, args.design or ()))
        return 0
    seeds = list(range(1, args.seeds + 1))
    cells = [c for d in (args.design or ["pilot"]) for c in design(d)]
    if args.duration is not None:
        cells = [dataclasses.replace(c, duration_s=args.duration) for c in cells]
    if args.dry_run:
        for c in cells:
            print(c.key(), " ".join(ns3_args(c, seeds[0])))
        print(f"{len(cells)} cells x {len(seeds)} seeds = {len(cells) * len(seeds)} runs each")
        return 0
    runner = None
    if not args.ccsim_only:
        if args.ns3 is None:
            ap.error("--ns3 PATH is required (or --ccsim-only)")
        if not os.access(args.ns3, os.X_OK):
            ap.error(f"--ns3: {args.ns3} is not an executable program")
        runner = Ns3Runner(args.ns3.resolve(), args.store / "ns3")
    store = sweep.Store(args.store / "ccsim")
    ccsim_commit = git_commit(REPO)
    rows = run_cells(cells, seeds, runner, store, args.ns3_commit, ccsim_commit)
    n = write_table(args.out, rows)
    print(f"{args.out}: {len(rows)} rows written, {n} in all")
    if args.traces:
        if runner is None:
            ap.error("--traces needs --ns3")
        for p in write_traces(runner, TRACES, REPO / "docs" / "img"):
            print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
