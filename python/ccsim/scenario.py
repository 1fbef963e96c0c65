# SPDX-License-Identifier: MIT
"""Scenarios: TOML text (from a file, a string or a Python dict) plus ``--set`` overrides.

The Rust core parses and validates; this class only carries the text and the overrides, so a
scenario built in Python and one read from a file are checked by the same code and give the same
errors.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Union

import tomli_w

from ccsim import _core
from ccsim.result import Result

PathLike = Union[str, "os.PathLike[str]"]


def format_value(value: Any) -> str:
    """Format a Python value as the right-hand side of ``--set PATH=VALUE``.

    >>> format_value(0.01), format_value(True), format_value("10Mbps"), format_value(3)
    ('0.01', 'true', '"10Mbps"', '3')
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, Mapping):
        return tomli_w.dumps({"v": dict(value)}).split("=", 1)[1].strip()
    if isinstance(value, Sequence):
        return "[" + ", ".join(format_value(v) for v in value) + "]"
    raise TypeError(f"cannot use a {type(value).__name__} as a scenario value")


class Scenario:
    """A scenario: TOML text and an ordered list of overrides.

    Parameters
    ----------
    text
        The scenario as TOML (see docs/scenario.md).
    overrides
        ``PATH=VALUE`` strings applied in order, as ``ccsim run --set``.
    source
        Where the text came from, for messages.

    Examples
    --------
    >>> sc = Scenario.from_str('duration = "1s"\\n[nodes]\\na = "host"\\nb = "host"\\n')
    >>> sc.set("seed", 7).overrides
    ('seed=7',)
    """

    def __init__(self, text: str, overrides: Sequence[str] = (), source: str = "<string>") -> None:
        self._text = text
        self._overrides = tuple(overrides)
        self._source = source

    @classmethod
    def from_toml(cls, path: PathLike) -> Scenario:
        """Read a scenario file."""
        p = Path(path)
        return cls(p.read_text(encoding="utf-8"), source=str(p))

    @classmethod
    def from_str(cls, text: str) -> Scenario:
        """Use TOML text as it is."""
        return cls(text)

    @classmethod
    def from_dict(cls, tree: Mapping[str, Any]) -> Scenario:
        """Build a scenario from the same structure as the TOML file, units as strings.

        >>> sc = Scenario.from_dict({"duration": "1s", "nodes": {"a": "host", "b": "host"}})
        >>> 'duration = "1s"' in sc.to_toml()
        True
        """
        return cls(tomli_w.dumps(dict(tree)), source="<dict>")

    @property
    def overrides(self) -> tuple[str, ...]:
        return self._overrides

    @property
    def source(self) -> str:
        return self._source

    def set(self, path: str, value: Any) -> Scenario:
        """A new scenario with one more override ``path = value``."""
        return Scenario(
            self._text, (*self._overrides, f"{path}={format_value(value)}"), self._source
        )

    def with_overrides(self, overrides: Sequence[str]) -> Scenario:
        """A new scenario with raw ``PATH=VALUE`` overrides appended."""
        return Scenario(self._text, (*self._overrides, *overrides), self._source)

    def to_toml(self) -> str:
        """The TOML text, before overrides."""
        return self._text

    def validate(self, seed: int | None = None) -> str:
        """Check the scenario; returns the resolved TOML or raises ``ScenarioError``."""
        return _core.validate(self._text, list(self._overrides), seed)

    def __repr__(self) -> str:
        return f"Scenario(source={self._source!r}, overrides={list(self._overrides)!r})"


def run(
    scenario: Scenario | PathLike,
    *,
    seed: int | None = None,
    overrides: Sequence[str] = (),
) -> Result:
    """Run a scenario and return its result tables.

    Parameters
    ----------
    scenario
        A ``Scenario``, or the path of a TOML file.
    seed
        Replaces the scenario's master seed.
    overrides
        More ``PATH=VALUE`` overrides, applied after the scenario's own.

    Raises
    ------
    ScenarioError
        The scenario is invalid (nothing ran).
    SimulationError
        The run failed.
    """
    sc = scenario if isinstance(scenario, Scenario) else Scenario.from_toml(scenario)
    sc = sc.with_overrides(overrides)
    raw = _core.run(sc.to_toml(), list(sc.overrides), seed)
    return Result._from_raw(raw)
