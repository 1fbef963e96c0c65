# SPDX-License-Identifier: MIT
"""``ccsim bench``: whole-scenario benchmarks P0, P1 and P2 of docs/performance.md, and on request
(``--only P002``, ~1.5 min) paper 002's full case-1 run with HighSpeed TCP, read from
``experiments/p002-highspeed`` (so run it from the repository root).

Each run happens in a fresh child process so that its peak memory is its own (read with
``os.wait4``). Reported per scenario, as the median over ``repeat`` runs:

- ``sim s``: wall time of the simulation itself (building the network and the event loop), the
  figure comparable with ns-3's ``Simulator::Run`` and htsim's loop;
- ``process s``: the whole child process, Python start-up and result conversion included;
- events, events per second, data packets sent per second, events per data packet;
- peak RSS, and bytes per packet at the peak: (peak RSS - RSS of a trivial run) / peak packets.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

BENCH_DIR = Path(__file__).parent / "benchmarks"
SCENARIOS = {"P0": "p0.toml", "P1": "p1.toml", "P2": "p2.toml", "PDS": "pds.toml"}
#: Run only when asked for by name: too long for the default set.
ON_REQUEST = {"P002": "p002"}
#: Paper 002's case 1 (P002 in docs/performance.md, first milestone <= 3 min) with its
#: algorithm under test set to HighSpeed, as in P2.
P002_OVERRIDES = tuple(f'flows.{f}.cc="highspeed"' for f in ("f1", "f2", "f3", "f4"))

_CHILD = """
import json, sys
import ccsim
res = ccsim.run(sys.argv[1], overrides=sys.argv[2:])
s = res.summary
print(json.dumps({"wall": s.wall_seconds, "events": s.events,
                  "pkts": s.data_packets_sent, "peak": s.peak_packets}))
"""

_TRIVIAL = """
duration = "1ms"
[nodes]
a = "host"
b = "host"
[links.l]
a = "a"
b = "b"
rate = "1Mbps"
delay = "1ms"
"""


@dataclass
class BenchRow:
    name: str
    sim_s: float
    process_s: float
    events: int
    data_packets: int
    peak_packets: int
    peak_rss_mb: float
    bytes_per_packet: float

    @property
    def events_per_s(self) -> float:
        return self.events / self.sim_s if self.sim_s > 0 else float("nan")

    @property
    def packets_per_s(self) -> float:
        return self.data_packets / self.sim_s if self.sim_s > 0 else float("nan")

    @property
    def events_per_packet(self) -> float:
        return self.events / self.data_packets if self.data_packets else float("nan")


def benchmark_scenario(name: str) -> tuple[Path, tuple[str, ...]]:
    """The scenario file and overrides of benchmark ``name``."""
    if name in SCENARIOS:
        return BENCH_DIR / SCENARIOS[name], ()
    if name in ON_REQUEST:
        from ccsim.experiment import find_experiment

        return find_experiment(ON_REQUEST[name]) / "scenario.toml", P002_OVERRIDES
    known = ", ".join([*SCENARIOS, *ON_REQUEST])
    raise ValueError(f"unknown benchmark {name}; known: {known}")


def _child_run(
    path: Path, overrides: tuple[str, ...] = ()
) -> tuple[dict[str, float], float, float]:
    """Run one scenario in a child; returns its summary, whole-process seconds, peak RSS MB."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(path), *overrides], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    with proc.stdout:
        out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    elapsed = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"benchmark {path.name} failed with status {proc.returncode}")
    # ru_maxrss is in KiB on Linux.
    return json.loads(out), elapsed, usage.ru_maxrss / 1024.0


def run_benchmarks(repeat: int = 3, only: list[str] | None = None) -> list[BenchRow]:
    names = only or list(SCENARIOS)
    cases = {n: benchmark_scenario(n) for n in names}  # unknown names fail before any run
    trivial = Path(os.environ.get("TMPDIR", "/tmp")) / f"ccsim-bench-trivial-{os.getpid()}.toml"
    trivial.write_text(_TRIVIAL, encoding="utf-8")
    try:
        _, _, base_rss = _child_run(trivial)
    finally:
        trivial.unlink(missing_ok=True)
    rows = []
    for name in names:
        runs = [_child_run(*cases[name]) for _ in range(max(1, repeat))]
        summ = [r[0] for r in runs]
        rss = statistics.median(r[2] for r in runs)
        peak = int(statistics.median(s["peak"] for s in summ))
        rows.append(
            BenchRow(
                name=name,
                sim_s=statistics.median(s["wall"] for s in summ),
                process_s=statistics.median(r[1] for r in runs),
                events=int(statistics.median(s["events"] for s in summ)),
                data_packets=int(statistics.median(s["pkts"] for s in summ)),
                peak_packets=peak,
                peak_rss_mb=rss,
                bytes_per_packet=max(0.0, rss - base_rss) * 1024 * 1024 / peak if peak else 0.0,
            )
        )
    return rows


def format_table(rows: list[BenchRow]) -> str:
    head = (
        f"{'bench':<6} {'sim s':>8} {'process s':>10} {'events':>11} {'Mev/s':>7} "
        f"{'data pkt/s':>11} {'ev/pkt':>7} {'peak pkts':>10} {'RSS MB':>8} {'B/pkt':>7}"
    )
    out = [head]
    for r in rows:
        out.append(
            f"{r.name:<6} {r.sim_s:>8.3f} {r.process_s:>10.3f} {r.events:>11d} "
            f"{r.events_per_s / 1e6:>7.2f} {r.packets_per_s:>11.0f} {r.events_per_packet:>7.2f} "
            f"{r.peak_packets:>10d} {r.peak_rss_mb:>8.1f} {r.bytes_per_packet:>7.0f}"
        )
    out.append("(medians; sim s = building the network + event loop, as ns-3's Simulator::Run)")
    return "\n".join(out)
