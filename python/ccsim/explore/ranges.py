# SPDX-License-Identifier: MIT
"""Free ranges: the plan's ``explore`` key, which lets the explorer's page choose any value in a
declared range for a scenario key, besides the values the plan lists.

Three places in ``plan.toml`` may declare one (docs/site.md, "Free ranges")::

    [[figures]]                                   # 1. a figure's x axis: the page may add any
    x = { path = "links.wireless.loss.rate", values = [...],          # x in the range
          explore = { min = "0%", max = "20%", step = "0.5%" } }

    [lines.fast_a20]                              # 2. a key the line sets (or a key inside a
    set = { "flows.f1.cc" = { type = "fast", alpha = 20 }, ... }      # table the line sets),
    explore = { "flows.f1.cc.alpha" = { min = 1, max = 1000, step = 1,  # for that line's runs;
                also = ["flows.f2.cc.alpha", ...] } }                # also: set to the same value

    [explore]                                     # 3. a key the plan sets somewhere (a
    "links.bottleneck.queue.limit" = { min = 10, max = 20000, step = 10 }  # figure's or table's
                                                  # set, another figure's x, quick_set)

``min``, ``max`` and ``step`` are all numbers, or all strings with one unit: ``"40s"``,
``"7.5ms"``, ``"250Mbps"`` (the value is sent to the scenario with that unit), or ``"%"``, a
percentage of a plain number (``"5%"`` is sent as ``0.05``). A value must lie in [min, max] on
the grid min + k * step; the server refuses any other (the page's inputs are only a
convenience). Whole-number bounds and step give whole numbers (a queue limit in packets).

A request's value is a JSON number, in the range's unit (``3.5`` in a "%" range is 3.5 %), or
text: with the unit (``"3.5%"``, ``"120s"``), or without it the key's own value as the plan
writes it (``"0.035"``).

A range does not let the page name a key: only keys declared here (or values the plan lists)
reach a scenario.
"""

from __future__ import annotations

import math
import re
import reprlib
import sys
from dataclasses import dataclass
from typing import Any

__all__ = ["PlanRanges", "Range", "RangeError", "parse_plan_ranges"]

# ASCII only: Python's `\d` and `float` take any script's digits ("١٢" is 12), which no
# TOML reader does, so a value the page sent that way ran as a number (campaign 12, issue 32).
_QUANTITY = re.compile(
    r'\s*"?\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*([A-Za-z%]*)\s*"?\s*', re.ASCII
)


class RangeError(ValueError):
    """A value outside its range, off its grid, or in another unit."""


class _Brief(reprlib.Repr):
    """Python's repr, cut short, with null, true and false as JSON and TOML write them: a run
    request's `"paper": null` was refused as "no paper None", and `"quick": null` as "quick
    must be true or false, not None", in words of the explorer's Python, not of the JSON the
    request was written in (campaign 53a, issue 32)."""

    def repr_NoneType(self, value: None, level: int) -> str:
        return "null"

    def repr_bool(self, value: bool, level: int) -> str:
        return "true" if value else "false"


_BRIEF = _Brief()
_BRIEF.maxstring = _BRIEF.maxlong = 60
_BRIEF.maxlevel, _BRIEF.maxlist, _BRIEF.maxdict = 2, 6, 4


def brief(value: Any) -> str:
    """``repr(value)`` cut to a few dozen characters: a message about a value from the page
    names it without echoing a 60 KB string or a 400-digit number back."""
    return _BRIEF.repr(value)


def _normal(number: float, value: Any, where: str) -> float:
    """``number``, unless it is subnormal: the scenario's reader refuses those wherever it
    reads a number, and a range's step of 1e-320 was taken (campaign 12, issue 32)."""
    if number != 0 and abs(number) < sys.float_info.min:
        raise ValueError(f"{where}: {brief(value)} is subnormal; a number is 0 or at least "
                         "2.2e-308 in magnitude")  # fmt: skip
    return number


def _quantity(value: Any, where: str) -> tuple[float, str, bool]:
    """(number, unit, whole) of a bound: a TOML number or a string such as ``"7.5ms"``."""
    if isinstance(value, bool):
        raise ValueError(
            f"{where}: expected a number or a string with a unit, found {brief(value)}"
        )
    if isinstance(value, (int, float)):
        try:
            number = float(value)  # an int of 400 digits (JSON's 1e400 written out) overflows
        except OverflowError:
            number = math.inf
        if not math.isfinite(number):
            raise ValueError(f"{where}: {brief(value)} is not a finite number")
        return _normal(number, value, where), "", isinstance(value, int)
    if isinstance(value, str):  # "7.5ms"; or "1000", a listed literal sent back as text
        m = _QUANTITY.fullmatch(value)
        if m is not None:
            return _normal(float(m.group(1)), value, where), m.group(2), False
    raise ValueError(
        f'{where}: {brief(value)} is not a number or a number with a unit ("40s", "7.5ms", "5%")'
    )


@dataclass(frozen=True)
class Range:
    """The values one key may take: [min, max] on the grid min + k * step, in ``unit``."""

    where: str  # the plan field that declared it, for messages
    min: float
    max: float
    step: float
    unit: str = ""  # "" a plain number, "%" a percentage of one, else a unit kept in the value
    whole: bool = False  # bounds and step are integers: the value is one too
    also: tuple[str, ...] = ()  # keys set to the same value (a line's four flows)

    def shown(self, v: float) -> str:
        return f"{v:.12g}{self.unit}"

    def allowed(self) -> str:
        return (
            f"{self.shown(self.min)} to {self.shown(self.max)} in steps of {self.shown(self.step)}"
        )

    def describe(self) -> dict[str, Any]:
        return {"min": self.min, "max": self.max, "step": self.step, "unit": self.unit}

    def literal(self, value: Any) -> str:
        """The TOML literal a value from the page stands for, or RangeError saying why not.

        The value is snapped to its grid point (so 0.07 and 0.07000000000000001 are one run)
        and written as the plan writes a listed value (``0.05``, ``"8ms"``, ``960``), so a
        free value equal to a listed one is the same scenario and the same store key."""
        allowed = self.allowed()
        try:
            v, unit, _ = _quantity(value, "value")
        except ValueError:
            raise RangeError(f"{brief(value)} is not a value of the range {allowed}") from None
        if isinstance(value, (int, float)) and self.unit:
            unit = self.unit  # a bare number from a number input is in the range's unit
        elif isinstance(value, str) and not unit and self.unit == "%":
            v, unit = v * 100, "%"  # text without a unit is the key's own value: "0.05" is 5 %
        if unit != self.unit:
            raise RangeError(f"{brief(value)} is not in {self.unit or 'a plain number'}; "
                             f"allowed: {allowed}")  # fmt: skip
        k = (v - self.min) / self.step
        if not (self.min - 1e-9 * self.step <= v <= self.max + 1e-9 * self.step):
            raise RangeError(f"{brief(value)} is outside the range {allowed}")
        if abs(k - round(k)) > 1e-6:
            raise RangeError(f"{brief(value)} is not on the range's grid: {allowed}")
        v = self.min + round(k) * self.step
        if self.whole:
            return str(round(v))
        if self.unit == "%":
            return repr(float(f"{v / 100:.12g}"))
        if self.unit:
            return f'"{v:.12g}{self.unit}"'
        return repr(float(f"{v:.12g}"))


def parse_range(tbl: Any, where: str, with_also: bool) -> Range:
    """A range from its plan table; ValueError naming the field."""
    if not isinstance(tbl, dict):
        raise ValueError(f"{where}: expected a table {{ min = ..., max = ..., step = ... }}")
    allowed = {"min", "max", "step", *(("also",) if with_also else ())}
    unknown = sorted(set(tbl) - allowed)
    if unknown:
        raise ValueError(
            f"{where}.{unknown[0]}: unknown key; allowed: {', '.join(sorted(allowed))}"
        )
    got = {}
    for key in ("min", "max", "step"):
        if key not in tbl:
            raise ValueError(f"{where}.{key}: missing")
        got[key] = _quantity(tbl[key], f"{where}.{key}")
    units = {k: u for k, (_, u, _) in got.items()}
    if len(set(units.values())) != 1:
        raise ValueError(f"{where}: min, max and step must have one unit; found "
                         + ", ".join(f"{k} {u or 'none'}" for k, u in units.items()))  # fmt: skip
    lo, hi, step = (got[k][0] for k in ("min", "max", "step"))
    if not lo < hi:
        raise ValueError(f"{where}: min must be below max")
    if not step > 0 or step > hi - lo:
        raise ValueError(f"{where}.step: must be > 0 and at most max - min")
    also = tbl.get("also", [])
    if not isinstance(also, list) or not all(isinstance(a, str) for a in also):
        raise ValueError(f"{where}.also: expected a list of scenario keys")
    return Range(where, lo, hi, step, units["min"], all(g[2] for g in got.values()),
                 tuple(also))  # fmt: skip


@dataclass
class PlanRanges:
    """Every range a plan declares."""

    x: dict[str, Range]  # figure id -> its x axis's range
    lines: dict[str, dict[str, Range]]  # line id -> key -> range
    keys: dict[str, Range]  # key the plan sets -> range


def _inside(path: str, set_paths: list[str]) -> bool:
    return any(path == p or path.startswith(p + ".") for p in set_paths)


def parse_plan_ranges(raw: dict[str, Any]) -> PlanRanges:
    """The ``explore`` keys of a plan file as read by tomllib; ValueError naming the field when
    one is malformed or names a key the plan does not set in that place."""
    out = PlanRanges({}, {}, {})
    for i, f in enumerate(raw.get("figures", [])):
        x = f.get("x") if isinstance(f, dict) else None
        if isinstance(x, dict) and "explore" in x:
            where = f"figures[{i}].x.explore"
            if x.get("also"):
                raise ValueError(f"{where}: not with x.also (the companion keys' values are "
                                 "listed per x value; a free x has none)")  # fmt: skip
            out.x[str(f.get("id"))] = parse_range(x["explore"], where, with_also=False)
    for lid, ltbl in raw.get("lines", {}).items():
        if not isinstance(ltbl, dict) or "explore" not in ltbl:
            continue
        where = f"lines.{lid}.explore"
        tbl = ltbl["explore"]
        if not isinstance(tbl, dict) or not tbl:
            raise ValueError(f"{where}: expected a table of PATH = {{ min, max, step }}")
        sets = list(ltbl.get("set", {}))
        ranges = {}
        for path, rtbl in tbl.items():
            r = parse_range(rtbl, f'{where}."{path}"', with_also=True)
            for p in (path, *r.also):
                if not _inside(p, sets):
                    raise ValueError(
                        f'{where}."{path}": "{p}" is not a key line {lid} sets (or a key inside '
                        f"one); it sets {', '.join(sets) or 'none'}"
                    )
            ranges[path] = r
        out.lines[str(lid)] = ranges
    tbl = raw.get("explore", {})
    if not isinstance(tbl, dict):
        raise ValueError("explore: expected a table of PATH = { min, max, step }")
    if tbl:
        plan_sets: list[str] = list(raw.get("quick_set", {}))
        for item in [*raw.get("figures", []), *raw.get("tables", [])]:
            if isinstance(item, dict):
                plan_sets += list(item.get("set", {})) + list(item.get("quick_set", {}))
                if isinstance(item.get("x"), dict) and "path" in item["x"]:
                    plan_sets.append(str(item["x"]["path"]))
        for path, rtbl in tbl.items():
            if path not in plan_sets:
                raise ValueError(f'explore."{path}": not a key the plan sets (in a figure\'s or '
                                 "table's set, an x path or quick_set); a line's key takes "
                                 "lines.ID.explore")  # fmt: skip
            out.keys[path] = parse_range(rtbl, f'explore."{path}"', with_also=False)
    return out
