# SPDX-License-Identifier: MIT
"""The per-packet trace and the agents table as Python sees them: columns, bulk crossing,
Parquet round trips, and directories written before the tables existed."""

from __future__ import annotations

from pathlib import Path

import numpy as np

import ccsim
from ccsim import _core

# Paper 001's topology with a SPACK agent at the base station and 5 % loss on the data hop.
SPACK = """
seed = 2
duration = "60s"
[nodes]
fh = "host"
bs = { type = "router", hook = { type = "spack", split_acks = 4 } }
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
size = "100KB"
preset = "ns2-2001"
[trace]
packets = { flows = ["transfer"], links = ["wl:a_to_b"], nodes = ["fh", "mh"] }
"""


def test_the_packet_trace_crosses_as_columns_and_follows_the_flow() -> None:
    raw = _core.run(SPACK, [], None)
    pk = raw["packets"]
    # Counters cross as int64 arrays, like the flows table's.
    assert isinstance(pk["time_ns"], np.ndarray) and pk["time_ns"].dtype == np.int64
    assert np.all(np.diff(pk["time_ns"]) >= 0)
    assert set(pk["where"]) <= {"wl:a_to_b", "fh", "mh"}
    assert set(pk["flow"]) == {"transfer"}
    events = list(pk["event"])
    lost = sum(1 for r in pk["reason"] if r == "loss")
    links = raw["links"]
    row = next(
        i
        for i, (lk, d) in enumerate(zip(links["link"], links["direction"]))
        if lk == "wl" and d == "a_to_b"
    )
    assert lost == int(links["drops_loss"][row]) > 0
    # The FH's retransmissions are flagged where it sends them.
    retx_sent = sum(
        1
        for e, w, r in zip(events, pk["where"], pk["retransmission"])
        if e == "sent" and w == "fh" and r == 1
    )
    assert retx_sent == int(raw["flows"]["retransmits"][0])
    assert raw["summary"]["packets_untraced"] == 0


def test_the_agents_table_and_trace_reach_the_result_and_survive_parquet(tmp_path: Path) -> None:
    res = ccsim.run(ccsim.Scenario.from_str(SPACK))
    assert list(res.agents["node"]) == ["bs"] and list(res.agents["agent"]) == ["spack"]
    assert float(res.agents.loc[0, "acks_created"]) > 0
    assert len(res.packets) > 0 and "seq" in res.packets
    assert "duplicate_segments_received" in res.flows
    back = ccsim.Result.from_parquet(res.to_parquet(tmp_path / "run"))
    assert back.agents.equals(res.agents)
    assert back.packets.equals(res.packets)
    assert back.summary == res.summary


def test_a_directory_written_before_the_new_tables_reads_back_with_empty_ones(
    tmp_path: Path, two_hosts: str
) -> None:
    out = ccsim.run(ccsim.Scenario.from_str(two_hosts)).to_parquet(tmp_path / "old")
    # A run without agents or a trace writes neither table, as results from before them.
    assert not (out / "agents.parquet").exists() and not (out / "packets.parquet").exists()
    back = ccsim.Result.from_parquet(out)
    assert back.agents.empty and back.packets.empty
    assert len(back.flows) == 1
