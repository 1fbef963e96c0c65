# SPDX-License-Identifier: MIT
"""Type stubs of the compiled core (crates/ccsim-py, module ``ccsim._core``)."""

from typing import Any

import numpy as np
import numpy.typing as npt

__version__: str
#: A hash of the sources a run's result depends on (the core's, this module's, Cargo.lock).
ENGINE: str

class Error(Exception):
    """Base class of every ccsim error."""

class ScenarioError(Error):
    """The scenario is invalid and nothing was run; ``str(e)`` is ``"path: reason"``."""

    path: str
    """The field, e.g. ``links.bottleneck.rate``; empty when the whole file is at fault."""
    reason: str
    """What is wrong with it."""

class SimulationError(Error):
    """The run failed (an internal error of the core included)."""

Column = npt.NDArray[np.float64] | npt.NDArray[np.int64] | list[str]
"""float64 and int64 columns are numpy arrays; text columns are lists of str."""

def check_syntax(text: str) -> None:
    """Raise ScenarioError ("TOML syntax error at line L, column C: ...") unless ``text`` is
    TOML; the scenario's keys are not read."""

def split_override(item: str) -> tuple[str, str] | None:
    """``PATH=VALUE`` cut at the first ``=`` outside a quoted key, as ``--set`` is cut; None
    without one; ValueError when a quote in PATH is not closed."""

def override_keys(path: str) -> list[str] | None:
    """The keys a dotted ``--set`` path names (TOML's parser reads it); None when it is not
    a key path."""

def param_values(text: str) -> list[str]:
    """A sweep's ``V1,V2,...`` cut at the commas TOML's lexer calls separators (outside
    strings, arrays, inline tables and comments), each trimmed; empty ones kept."""

def override_value(raw: str) -> int | float | str:
    """An override's VALUE as the core reads it: a TOML integer or float as a number, a
    string as its text, anything else (or a bare word) as written, trimmed."""

def validate(
    text: str, overrides: list[str] = ..., seed: int | None = ..., params: list[str] = ...
) -> str:
    """Check a scenario as ``run`` does before its first event, without running it: parse,
    validate and build the network (so a flow whose packets exceed the MTU of a link on its
    route is refused here too). Returns the resolved TOML (overrides and seed applied).
    ``params`` are a sweep's ``--param`` values for one run, applied after ``overrides`` and
    named ``--param`` in errors."""

def run(text: str, overrides: list[str] = ..., seed: int | None = ...) -> dict[str, Any]:
    """Check and run a scenario with the GIL released.

    Returns ``{"summary": dict, "flows": dict[str, Column], "links": ..., "series": ...,
    "paths": ..., "agents": ..., "packets": ..., "classes": ..., "pings": ...,
    "resolved_toml": str}``.

    Interruptible: every 50 ms the calling thread runs Python's signal handlers (in the main
    thread only, as Python does). If one raises, such as ``KeyboardInterrupt`` on Ctrl-C, the
    core stops within milliseconds, its partial run is dropped and the exception propagates; a
    handler that returns leaves the run alone.
    """
