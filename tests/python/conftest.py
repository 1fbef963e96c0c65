# SPDX-License-Identifier: MIT
from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

# No example database in the work tree, and no per-example deadline: runs share two cores with
# whatever else the machine is doing, and timing is not what these properties are about.
settings.register_profile("ccsim", database=None, deadline=None)
settings.load_profile("ccsim")

# The suite's children start as a terminal's would. A script that runs the tests in its
# background (`scripts/test &`, or a CI runner's job) gives them SIGINT ignored, which the
# system passes on to every child; ccsim keeps a stop signal ignored at its start by design
# (nohup, `ccsim explore &`), so the tests that send SIGINT to a child read "stopped by
# SIGTERM" or waited for an explorer that would never stop. A handler here is reset to the
# default in each child, an ignored signal is not.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def examples() -> Path:
    return ROOT / "examples"


TWO_HOSTS = """
duration = "5s"
[nodes]
h1 = "host"
r1 = "router"
h2 = "host"
[links.access]
a = "h1"
b = "r1"
rate = "100Mbps"
delay = "1ms"
[links.bottleneck]
a = "r1"
b = "h2"
rate = "10Mbps"
delay = "20ms"
queue = { type = "droptail", limit = 50 }
[flows.f1]
type = "tcp"
src = "h1"
dst = "h2"
size = "500KB"
[trace]
interval = "100ms"
"""


@pytest.fixture
def two_hosts() -> str:
    return TWO_HOSTS


# Two hosts joined by two disjoint paths (h1 -a0- r0 -b0- h2, h1 -a1- r1 -b1- h2) of 10 Mbit/s,
# 5 ms links, and one SCTP association over them: the paths table (test_sctp.py) and the SCTP
# capture (test_pcap.py) run it.
TWO_PATHS = """
duration = "5s"
[nodes]
h1 = "host"
h2 = "host"
r0 = "router"
r1 = "router"
[links.a0]
a = "h1"
b = "r0"
rate = "10Mbps"
delay = "5ms"
[links.b0]
a = "r0"
b = "h2"
rate = "10Mbps"
delay = "5ms"
[links.a1]
a = "h1"
b = "r1"
rate = "10Mbps"
delay = "5ms"
[links.b1]
a = "r1"
b = "h2"
rate = "10Mbps"
delay = "5ms"
[flows.assoc]
type = "sctp"
src = "h1"
dst = "h2"
"""


# One flow over a 60-second line (~0.1 s of wall time per run): long enough to kill a sweep or
# a worker while runs are going on. The lossy link is `b`.
SLOW_LINE = """
duration = "60s"
[nodes]
h1 = "host"
r1 = "router"
h2 = "host"
[links.a]
a = "h1"
b = "r1"
rate = "100Mbps"
delay = "1ms"
[links.b]
a = "r1"
b = "h2"
rate = "50Mbps"
delay = "10ms"
queue = { type = "droptail", limit = 100 }
loss = { type = "uniform", rate = 0.001, direction = "a_to_b" }
[flows.f]
type = "tcp"
src = "h1"
dst = "h2"
"""


@pytest.fixture
def slow_line() -> str:
    return SLOW_LINE


#: The error a command gives when stdout is ``closed`` (``>&-``) or ``full`` (``> /dev/full``).
STDOUT_ERRORS = {
    "closed": "ccsim: error: stdout: closed (nothing can be printed)\n",
    "full": "ccsim: error: stdout: no space left on device\n",
}


def main_without_stdout(
    stdout: str, argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> tuple[int, str]:
    """``ccsim.cli.main(argv)`` with stdout ``closed`` (None, as Python starts after ``>&-``)
    or ``full`` (/dev/full, line-buffered): its status and stderr."""
    import sys

    from ccsim.cli import main

    with open("/dev/full", "w", buffering=1) as full:
        monkeypatch.setattr(sys, "stdout", None if stdout == "closed" else full)
        try:
            status = main(argv)
        finally:
            monkeypatch.setattr(sys, "stdout", sys.__stdout__)
    return status, capsys.readouterr().err


# A plan's metric (f1's goodput) and its two lines (SACK, Reno), shared by the small test plans
# of test_experiment.py and test_api_contract.py.
METRIC_AND_TWO_LINES = """[metric]
table = "flows"
where = { name = "f1" }
column = "goodput_bps"
label = "goodput"

[lines.sack]
label = "SACK"
set = { "tcp.variant" = "sack" }

[lines.reno]
label = "Reno"
set = { "tcp.variant" = "reno" }
"""


@pytest.fixture(scope="session")
def m01_quick(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """m01's quick reproduction with one seed, made in this process once for the session; the
    tests that start from it copy it (test_output_folders.py, test_concurrent_outputs.py)."""
    import matplotlib.pyplot  # noqa: F401  (its config folder is chosen before HOME moves)

    from ccsim.experiment import reproduce

    folder = tmp_path_factory.mktemp("m01") / "m01-quick"
    reproduce(ROOT / "experiments" / "m01-dctcp", folder, quick=True, workers=1, seeds=1,
              progress=False)  # fmt: skip
    return folder


@pytest.fixture(scope="session")
def m01_quick_by_ccsim(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """m01's quick reproduction with one seed made by the installed ``ccsim`` command in a
    plain state, once for the session: what report and the explorer read and the figures a
    reproduction in another state must draw byte for byte (test_cli_states.py,
    test_resource_limits.py; neither writes into it)."""
    import subprocess
    import sys

    out = tmp_path_factory.mktemp("plain") / "finished"
    ccsim = Path(sys.executable).parent / "ccsim"
    subprocess.run([str(ccsim), "reproduce", str(ROOT / "experiments" / "m01-dctcp"), "--quick",
                    "--seeds", "1", "--workers", "1", "--out", str(out)],
                   check=True, capture_output=True)  # fmt: skip
    return out
