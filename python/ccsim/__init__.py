# SPDX-License-Identifier: MIT
"""ccsim: a fast, deterministic packet-level network simulator for transport-protocol research.

>>> import ccsim
>>> sc = ccsim.Scenario.from_dict({
...     "duration": "2s",
...     "nodes": {"a": "host", "r": "router", "b": "host"},
...     "links": {
...         "l1": {"a": "a", "b": "r", "rate": "10Mbps", "delay": "5ms"},
...         "l2": {"a": "r", "b": "b", "rate": "10Mbps", "delay": "5ms"},
...     },
...     "flows": {"f": {"type": "tcp", "src": "a", "dst": "b", "size": "100KB"}},
... })
>>> res = ccsim.run(sc, seed=1)
>>> int(res.flows.loc[0, "bytes_delivered"])
100000
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ccsim._core import __version__
from ccsim.errors import Error, ScenarioError, SimulationError
from ccsim.result import Result, Summary
from ccsim.scenario import Scenario, run

if TYPE_CHECKING:
    from ccsim import models

__all__ = [
    "Error",
    "Result",
    "Scenario",
    "ScenarioError",
    "SimulationError",
    "Summary",
    "__version__",
    "models",
    "run",
]


def __getattr__(name: str) -> Any:
    """``ccsim.models`` on first use (PEP 562): it imports numpy, which ``import ccsim`` (and
    so every ``ccsim`` command) would otherwise pay for at start-up (issue 11)."""
    if name == "models":
        import importlib

        return importlib.import_module("ccsim.models")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
