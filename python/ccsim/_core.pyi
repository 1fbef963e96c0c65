# SPDX-License-Identifier: MIT
"""Type stubs of the compiled core (crates/ccsim-py)."""

from typing import Any

__version__: str

class Error(Exception): ...

class ScenarioError(Error):
    path: str
    reason: str

class SimulationError(Error): ...

def validate(text: str, overrides: list[str] = ..., seed: int | None = ...) -> str: ...
def run(text: str, overrides: list[str] = ..., seed: int | None = ...) -> dict[str, Any]: ...
