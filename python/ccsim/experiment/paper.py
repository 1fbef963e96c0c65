# SPDX-License-Identifier: MIT
"""The paper's own numbers, read from a plan's ``paper`` keys, and what ours are beside them.

A ``paper`` key sits on a figure of points, on a metric of a grid table or on a summary
table::

    paper = { source = "Table 1", relative_tolerance = 0.1,
              values = { reno = [92.6, "-", "9.4Mbps"] } }

``values`` is keyed the way the item's rows are: a figure's by line (a list with one entry per x
value), a grid metric's by row (one entry per line, in the table's ``lines`` order), a summary
table's by line (a table of column = value). An entry is a number in the metric's unit, a
number with a unit ("9.4Mbps", "14.4%", "6ms") converted to the metric's ``unit`` (or, when the
metric names none, to the base unit: bit/s, a fraction, seconds, bytes), or "-" where the paper
gives no number.

A cell matches the paper when our whole 95 % interval lies within ``max(tolerance,
relative_tolerance * |paper|)`` of the paper's value; a cell without an interval (one run, or
identical runs) shows whether its mean is within it, and no claim judges it.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

#: Units a paper value or a metric may carry: name -> (dimension, factor to the base unit).
UNITS: dict[str, tuple[str, float]] = {
    "bps": ("rate", 1.0), "bit/s": ("rate", 1.0), "kbps": ("rate", 1e3),
    "kbit/s": ("rate", 1e3), "Mbps": ("rate", 1e6), "Mbit/s": ("rate", 1e6),
    "Gbps": ("rate", 1e9), "Gbit/s": ("rate", 1e9),
    "%": ("share", 0.01), "fraction": ("share", 1.0),
    "s": ("time", 1.0), "ms": ("time", 1e-3), "us": ("time", 1e-6),
    "B": ("size", 1.0), "KB": ("size", 1e3), "KiB": ("size", 1024.0), "MB": ("size", 1e6),
    "MiB": ("size", 1024.0**2),
}  # fmt: skip

#: What a plan writes where the paper gives no number.
NO_NUMBER = "-"
NO_NUMBER_TEXT = "paper: no number"

_NUMBER = re.compile(r"^\s*([-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?)\s*(\S*)\s*$")


class PaperValueError(ValueError):
    """A paper value or unit that cannot be read; the caller adds the field's path."""


def unit_names() -> str:
    return ", ".join(UNITS)


def check_unit(unit: str) -> str:
    if unit not in UNITS:
        raise PaperValueError(f'"{unit}" is not a unit; units are {unit_names()}')
    return unit


def paper_number(value: Any, unit: str | None) -> float | None:
    """A paper value in the metric's ``unit`` (None: the base unit of the value's own unit);
    None for "-" (no number). Raises :class:`PaperValueError` naming what is wrong."""
    if isinstance(value, bool):
        raise PaperValueError(f"{value!r} is not a number")
    if isinstance(value, (int, float)):
        return float(value)
    if not isinstance(value, str):
        raise PaperValueError(f"{value!r} is not a number")
    if value.strip() == NO_NUMBER:
        return None
    m = _NUMBER.match(value)
    if m is None:
        raise PaperValueError(
            f'"{value}" is not a number, a number with a unit ({unit_names()}) or "-" for no number'
        )
    number, its_unit = float(m.group(1)), m.group(2)
    if not its_unit:
        return number
    if its_unit not in UNITS:
        raise PaperValueError(f'"{value}": "{its_unit}" is not a unit; units are {unit_names()}')
    dim, factor = UNITS[its_unit]
    if unit is None:
        return number * factor
    want_dim, want_factor = UNITS[unit]
    if dim != want_dim:
        raise PaperValueError(f'"{value}" is a {dim}; the metric\'s unit {unit} is a {want_dim}')
    return number * factor / want_factor


@dataclass
class PaperValues:
    """The paper's numbers for one figure, grid metric or summary table.

    ``values`` maps (row, column) to the paper's value in the metric's unit: (line, x) for a
    figure, (row id, line) for a grid metric, (line, column) for a summary table; a cell the
    paper gives no number for is absent."""

    source: str
    values: dict[tuple[Any, Any], float] = field(default_factory=dict)
    tolerance: float = 0.0
    relative_tolerance: float = 0.0
    unit: str | None = None
    origin: str = ""
    #: The tolerance as the plan wrote it when it carried a unit ("2%"), for the report.
    tolerance_text: str = ""

    def get(self, row: Any, column: Any) -> float | None:
        return self.values.get((row, column))

    def allowed(self, paper: float) -> float:
        """How far ours may be from ``paper`` in one run and still match."""
        return max(self.tolerance, self.relative_tolerance * abs(paper))

    def describe_tolerance(self) -> str:
        parts = []
        if self.tolerance > 0 and self.tolerance_text:
            # "±2%" on a share is 2 percentage points, not 2 % of the value.
            absolute = " (absolute)" if self.tolerance_text.endswith("%") else ""
            parts.append(f"±{self.tolerance_text}{absolute}")
        elif self.tolerance > 0:
            # A tolerance on a percentage is in percentage points, not a share of the value.
            unit = {"%": " percentage points", None: ""}.get(self.unit, f" {self.unit}")
            parts.append(f"±{self.tolerance:g}{unit}")
        if self.relative_tolerance > 0:
            parts.append(f"±{100 * self.relative_tolerance:g} %")
        return " or ".join(parts) if parts else "exactly (no tolerance)"


def matches(paper: float, mean: float, ci95: float, n: int, pv: PaperValues) -> bool:
    """Whether our cell (mean, 95 % CI half-width, seeds) matches the paper's value as a
    table shows it: with an interval, the whole interval within the paper's tolerance; without
    one (one run, or identical runs), the mean within it (shown, but no claim judges it)."""
    if math.isnan(mean):
        return False
    if n >= 2 and not math.isnan(ci95):
        return abs(mean - paper) + ci95 <= pv.allowed(paper)
    return abs(mean - paper) <= pv.allowed(paper)


def fmt(v: float | None) -> str:
    """A number as the report shows it (4 significant digits), "-" for none or NaN."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    return f"{v:.4g}"


def difference(ours: float, paper: float) -> str:
    """ours - paper, with its share of the paper's value when that is not zero."""
    d = ours - paper
    if math.isnan(d):
        return "-"
    rel = f" ({100 * d / abs(paper):+.1f} %)" if paper else ""
    return f"{d:+.3g}{rel}"


def read_paper(
    raw: Any,
    where: str,
    unit: str | None,
    rows: list[Any],
    columns: list[Any] | None,
    row_word: str,
    column_word: str,
) -> PaperValues:
    """Read a ``paper`` table at ``where``. ``values`` is keyed by one of ``rows`` and holds a
    list with one entry per one of ``columns`` (or, with ``columns`` None, a table of column
    name = value, the names checked later against the item's columns)."""
    if not isinstance(raw, dict):
        raise ValueError(f"{where}: expected a table with source, values and optionally "
                         "tolerance, relative_tolerance")  # fmt: skip
    allowed = {"source", "values", "tolerance", "relative_tolerance"}
    unknown = sorted(set(raw) - allowed)
    if unknown:
        raise ValueError(
            f"{where}.{unknown[0]}: unknown key; allowed: {', '.join(sorted(allowed))}"
        )
    if "source" not in raw:
        raise ValueError(f'{where}.source: missing; say where the numbers are ("Table 1", '
                         '"Fig. 9, read off the graph")')  # fmt: skip
    if "values" not in raw:
        raise ValueError(f"{where}.values: missing")
    pv = PaperValues(source=str(raw["source"]), unit=unit, origin=where)
    if "tolerance" in raw:
        try:
            tol = paper_number(raw["tolerance"], unit)
        except PaperValueError as e:
            raise ValueError(f"{where}.tolerance: {e}") from None
        if tol is None or not tol >= 0:
            raise ValueError(f"{where}.tolerance: {raw['tolerance']!r} must be a number >= 0")
        pv.tolerance = tol
        if isinstance(raw["tolerance"], str):
            pv.tolerance_text = raw["tolerance"].strip()
    if "relative_tolerance" in raw:
        rel = raw["relative_tolerance"]
        if isinstance(rel, bool) or not isinstance(rel, (int, float)) or not rel >= 0:
            raise ValueError(f"{where}.relative_tolerance: {rel!r} must be a number >= 0 (a "
                             "share of the paper's value: 0.1 is 10 %)")  # fmt: skip
        pv.relative_tolerance = float(rel)
    values = raw["values"]
    if not isinstance(values, dict):
        raise ValueError(f"{where}.values: expected a table keyed by {row_word}")
    names = [str(r) for r in rows]
    for key, entries in values.items():
        at = f"{where}.values.{key}"
        if key not in names:
            raise ValueError(f'{at}: "{key}" is not a {row_word} of this item; '
                             f"{row_word}s are {', '.join(names)}")  # fmt: skip
        row = rows[names.index(key)]
        if columns is None:
            if not isinstance(entries, dict):
                raise ValueError(f"{at}: expected a table of {column_word} = value")
            cells = list(entries.items())
        else:
            if not isinstance(entries, list):
                raise ValueError(f"{at}: expected a list with one value per {column_word}")
            if len(entries) != len(columns):
                raise ValueError(f"{at}: {len(entries)} values for {len(columns)} "
                                 f"{column_word}s; give one per {column_word}, \"-\" where the "
                                 "paper gives no number")  # fmt: skip
            cells = list(zip(columns, entries))
        for i, (col, v) in enumerate(cells):
            try:
                number = paper_number(v, unit)
            except PaperValueError as e:
                sub = f".{col}" if columns is None else f"[{i}]"
                raise ValueError(f"{at}{sub}: {e}") from None
            if number is not None:
                pv.values[(row, col)] = number
    return pv
