# SPDX-License-Identifier: MIT
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import settings

# No example database in the work tree, and no per-example deadline: runs share two cores with
# whatever else the machine is doing, and timing is not what these properties are about.
settings.register_profile("ccsim", database=None, deadline=None)
settings.load_profile("ccsim")

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
