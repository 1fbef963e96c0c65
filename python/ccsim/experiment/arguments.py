# SPDX-License-Identifier: MIT
"""The public functions' arguments, checked at the door.

The functions of this package take the records ``load_plan`` builds (a ``Plan``, its
``Figure``s and ``Claim``s), the tables ``point_values`` and ``summarize`` make, and run
records. Given anything else they failed deep inside, as ``'NoneType' object has no attribute
'lines'``, ``string indices must be integers`` or pandas' ``NotImplementedError``, naming
nothing the caller wrote (the API contract test, tests/python/test_api_contract.py, issue 32).
:func:`arguments` checks each named parameter's type before the body runs:

    @arguments(plan=Plan, points=pd.DataFrame, margin=NUMBER | NONE)
    def compare(plan, points, margin=None): ...

    compare(None, df)  ->  TypeError: plan: expected a Plan, not NoneType None
"""

from __future__ import annotations

import functools
import inspect
import math
import numbers
import os
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


class Kind:
    """What a parameter takes: a test and the words for it in the error."""

    def __init__(self, words: str, test: Callable[[Any], bool]) -> None:
        self.words = words
        self.test = test

    def __or__(self, other: Kind) -> Kind:
        return Kind(f"{self.words} or {other.words}", lambda x: self.test(x) or other.test(x))


def of(cls: type, words: str | None = None) -> Kind:
    """Instances of ``cls``."""
    return Kind(words or f"a {cls.__name__}", lambda x: isinstance(x, cls))


def _text(x: Any) -> bool:
    if not isinstance(x, str):
        return False
    try:
        x.encode("utf-8")  # a lone surrogate: no file name, no table key has one
    except UnicodeEncodeError:
        return False
    return True


def _path(x: Any) -> bool:
    if isinstance(x, os.PathLike):
        x = os.fspath(x)
    return _text(x) and x != ""


NONE = Kind("None", lambda x: x is None)
TEXT = Kind("a string", _text)
PATH = Kind("a path (a non-empty str or os.PathLike)", _path)
BOOL = Kind("True or False", lambda x: isinstance(x, bool))
NUMBER = Kind(
    "a finite number",
    lambda x: not isinstance(x, bool) and isinstance(x, numbers.Real) and math.isfinite(x),
)
COUNT = Kind(
    "a whole number of at least 1",
    lambda x: not isinstance(x, bool) and isinstance(x, numbers.Integral) and x >= 1,
)


def _record(x: Any) -> bool:
    """A run record as the store keeps it (a function reading a table it lacks says so)."""
    return isinstance(x, Mapping)


RECORD = Kind("a run record (a dict, as execute() returns)", _record)
RECORDS = Kind(
    "a list of run records (dicts, as execute() returns)",
    lambda x: isinstance(x, (list, tuple)) and all(_record(r) for r in x),
)
NAMES = Kind(
    "a non-empty list of names (strings)",
    lambda x: isinstance(x, (list, tuple)) and len(x) > 0 and all(_text(n) for n in x),
)
NUMBERS = Kind(
    "a list of numbers",
    lambda x: (
        isinstance(x, (list, tuple))
        and all(not isinstance(v, bool) and isinstance(v, numbers.Real) for v in x)
    ),
)


def arguments(**kinds: Kind) -> Callable[[F], F]:
    """Check the named parameters of the decorated function against their kinds, raising
    TypeError (or ValueError for a value of the right type out of its kind) naming the
    parameter."""

    def wrap(fn: F) -> F:
        sig = inspect.signature(fn)
        unknown = set(kinds) - set(sig.parameters)
        assert not unknown, f"{fn.__name__} has no parameter {unknown}"

        @functools.wraps(fn)
        def checked(*args: Any, **kwargs: Any) -> Any:
            bound = sig.bind(*args, **kwargs)
            for name, kind in kinds.items():
                if name in bound.arguments and not kind.test(bound.arguments[name]):
                    value = bound.arguments[name]
                    shown = repr(value)
                    if len(shown) > 60:
                        shown = shown[:57] + "..."
                    raise TypeError(
                        f"{name}: expected {kind.words}, not {type(value).__name__} {shown}"
                    )
            return fn(*args, **kwargs)

        return checked  # type: ignore[return-value]

    return wrap
