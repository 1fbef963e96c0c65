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

# Not `from typing import TYPE_CHECKING`: typing is a large import, and the entry point of the
# `ccsim` command (ccsim.__main__) imports this module before it can handle Ctrl-C.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ccsim import models
    from ccsim._core import __version__
    from ccsim.errors import Error, ScenarioError, SimulationError
    from ccsim.result import Result, Summary
    from ccsim.scenario import Scenario, run

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


#: Where each public name lives. Imported on first use (PEP 562), not by ``import ccsim``:
#: the ``ccsim`` command's entry point (``ccsim.__main__``) is inside this package, and it must
#: set up its Ctrl-C handling before the core and the result tables are loaded, so that a
#: Ctrl-C during that import is reported as any other (campaign 10, issue 32).
_PUBLIC = {
    "__version__": "ccsim._core",
    "Error": "ccsim.errors",
    "ScenarioError": "ccsim.errors",
    "SimulationError": "ccsim.errors",
    "Result": "ccsim.result",
    "Summary": "ccsim.result",
    "Scenario": "ccsim.scenario",
    "run": "ccsim.scenario",
}


def __getattr__(name: str) -> Any:
    """A public name on first use (PEP 562). ``ccsim.models`` imports numpy, which ``import
    ccsim`` (and so every ``ccsim`` command) would otherwise pay for at start-up (issue 11)."""
    import importlib

    if name == "models":
        return importlib.import_module("ccsim.models")
    if name in _PUBLIC:
        value = getattr(importlib.import_module(_PUBLIC[name]), name)
        globals()[name] = value  # once: later lookups do not come here
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
