# SPDX-License-Identifier: MIT
"""Scenarios: TOML text (from a file, a string or a Python dict) plus ``--set`` overrides.

The Rust core parses and validates; this class only carries the text and the overrides, so a
scenario built in Python and one read from a file are checked by the same code and give the same
errors.
"""

from __future__ import annotations

import math
import os
import re
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Union

from ccsim import _core
from ccsim.result import Result, path_argument, reloaded
from ccsim.stop_signals import import_whole

PathLike = Union[str, "os.PathLike[str]"]

#: The largest master seed. The scenario file holds the seed as a TOML integer, which is a
#: signed 64-bit number (TOML 1.0, "Integer"), so the range is 0 to 2^63 - 1, not 2^64 - 1.
MAX_SEED = 2**63 - 1


def _numpy() -> Any:
    """numpy if something has imported it, else None.

    A numpy scalar or array can only exist once numpy is imported, so the checks for them need
    not import it themselves; importing it here would cost ``ccsim validate`` a tenth of a
    second of start-up (issue 11).
    """
    return sys.modules.get("numpy")


def seed_problem(seed: object) -> str | None:
    """Why ``seed`` cannot be a master seed, or None when it can.

    >>> seed_problem(3) is None, seed_problem(-1), seed_problem(True)
    (True, '-1 is out of range; a seed is an integer from 0 to 2^63 - 1', 'True is not an integer')
    """
    np = _numpy()
    integer_types = (int, np.integer) if np is not None else (int,)
    if isinstance(seed, bool) or not isinstance(seed, integer_types):
        return f"{seed!r} is not an integer"
    if not 0 <= int(seed) <= MAX_SEED:
        return f"{int_text(int(seed))} is out of range; a seed is an integer from 0 to 2^63 - 1"
    return None


def int_text(value: int) -> str:
    """``value`` in digits, or its size when it is too long to write: Python refuses to turn
    an int of more than 4300 digits into text (its ``sys.get_int_max_str_digits()``), and the
    error naming the out-of-range seed or key failed with that ValueError instead, naming
    nothing (campaign 38, issue 32)."""
    if value.bit_length() <= 200:
        return str(value)
    return f"{'a negative' if value < 0 else 'an'} integer of {value.bit_length()} bits"


#: The most runs one sweep or reproduction holds. Its runs are listed before the first starts
#: (about 200 bytes each), so a count of seeds a few digits too long (``--seeds 10^15``) would
#: exhaust memory, or spend minutes building the list, before a word was said.
MAX_RUNS = 1_000_000

#: The most worker processes or threads a sweep starts (``--workers``, ``sweep.execute``): far
#: more than a machine has cores; 2**70 was an OverflowError from the process pool, and a count
#: a few digits too long overflows its C semaphore.
MAX_WORKERS = 4096


def check_run_count(runs: int, what: str) -> None:
    """Refuse ``what`` (``"the sweep"``) of ``runs`` runs when it is over ``MAX_RUNS``."""
    if runs > MAX_RUNS:
        raise ValueError(
            f"{what} has {runs:,} runs; one holds at most {MAX_RUNS:,}: ask for fewer seeds "
            "or values"
        )


def _scenario_error(path: str, reason: str) -> _core.ScenarioError:
    """A ScenarioError raised from Python, with the same ``path`` and ``reason`` attributes as
    the core's."""
    err = _core.ScenarioError(f"{path}: {reason}" if path else reason)
    err.path = path
    err.reason = reason
    return err


def check_toml(text: str, source: str) -> None:
    """A ScenarioError naming ``source`` (a file) when ``text`` is not TOML: the core's own
    "TOML syntax error at line 1, column 1: invalid key" named no file, so `ccsim validate`
    given a JSON file, or bytes that happen to be UTF-8, did not say which file was no
    scenario. Only the syntax is checked: a scenario (or a plan's base scenario) may lack
    what overrides later set, so only the text is parsed (a whole validation here built the
    network too: 1.6 s of a 10,000-host-pair run, issue 33)."""
    try:
        _core.check_syntax(text)
    except _core.ScenarioError as e:
        raise _scenario_error("", f"{source}: {e}") from None


def check_seed(seed: int | None) -> int | None:
    """``seed`` unchanged if it is None or a valid master seed; otherwise a ScenarioError on
    ``seed`` (the binding would raise a bare OverflowError, and would take ``True`` as 1)."""
    if seed is None:
        return None
    problem = seed_problem(seed)
    if problem is not None:
        raise _scenario_error("seed", problem)
    return int(seed)


#: The most bytes ccsim reads of a text file it is given (a scenario, a plan, a report): far
#: more than any of them holds, and a bound on what a path to something endless (/dev/zero,
#: a pipe that never closes) costs. A pipe is still a file to read (``<(...)``, /dev/stdin).
MAX_TEXT_BYTES = 64 * 2**20


class TooLarge(ValueError):
    """A file over :data:`MAX_TEXT_BYTES` (the message says so without naming the file)."""


class NotAFile(ValueError):
    """Something other than a regular file where ccsim wrote one (the message says what, without
    naming the file)."""


def check_regular(path: PathLike) -> None:
    """:class:`NotAFile` unless ``path`` (its symbolic links followed) is a regular file; an
    OSError (missing, a dangling link) passes up. For the files of a results folder, which
    ccsim writes as regular files: opening a FIFO there waits for a writer that never comes
    (``ccsim report`` hung, inside pyarrow past Ctrl-C and SIGTERM), and a device such as
    /dev/zero never ends."""
    import stat

    mode = os.stat(path).st_mode
    if stat.S_ISREG(mode):
        return
    kind = file_kind(mode)
    raise NotAFile(kind if kind == "is a directory" else f"{kind}, not a regular file")


def file_kind(mode: int) -> str:
    """What a file of ``mode`` (``os.stat``'s ``st_mode``) is, as "is a FIFO (named pipe)"."""
    import stat

    kinds = [(stat.S_ISREG, "is a file"), (stat.S_ISDIR, "is a directory"),
             (stat.S_ISFIFO, "is a FIFO (named pipe)"), (stat.S_ISCHR, "is a character device"),
             (stat.S_ISBLK, "is a block device"), (stat.S_ISSOCK, "is a socket")]  # fmt: skip
    return next((k for test, k in kinds if test(mode)), "is not a file")


def read_limited(path: PathLike, regular: bool = False) -> bytes:
    """The bytes of ``path``, at most :data:`MAX_TEXT_BYTES`, or :class:`TooLarge`; reading
    stops one byte past the limit, so an endless file costs no more memory than that. With
    ``regular``, anything but a regular file is :class:`NotAFile` before it is opened."""
    if regular:
        check_regular(path)
    # In chunks: read(MAX_TEXT_BYTES + 1) allocates its whole buffer first, so every scenario
    # read cost 64 MiB of address space, a MemoryError under a memory limit (ulimit -v).
    chunks: list[bytes] = []
    size = 0
    with open(path, "rb") as fh:
        while size <= MAX_TEXT_BYTES:
            chunk = fh.read(min(_READ_CHUNK, MAX_TEXT_BYTES + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    if size > MAX_TEXT_BYTES:
        raise TooLarge(f"larger than {MAX_TEXT_BYTES >> 20} MiB")
    return b"".join(chunks)


#: How much :func:`read_limited` reads at a time.
_READ_CHUNK = 2**20


def not_utf8(text: str) -> tuple[str, int, str | None] | None:
    """None when ``text`` is UTF-8; otherwise (a byte such as 0xff reaches Python as a lone
    surrogate) the text as shown (that byte replaced), the byte, and the cure when the bytes
    are UTF-8 after all, read in the locale's encoding (LC_ALL=C with PYTHONUTF8=0: ASCII):
    such a name was refused as "not UTF-8 (byte 0xed)" with the cure "rename it" (campaign
    24, issue 32). One reading for every argument a user writes: a path, a scenario file's
    name, a text option."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        byte = text[e.start].encode("utf-8", "surrogateescape")[0]
    else:
        return None
    raw = text.encode("utf-8", "surrogateescape")
    try:
        raw.decode("utf-8")
    except UnicodeError:
        return raw.decode("utf-8", "replace"), byte, None
    cure = (f"it is UTF-8, read in this locale's encoding ({sys.getfilesystemencoding()}): "
            "run ccsim in a UTF-8 locale (LC_ALL=C.UTF-8) or with PYTHONUTF8=1")  # fmt: skip
    return raw.decode("utf-8", "replace"), byte, cure


def not_utf8_said(name: str, otherwise: str) -> str | None:
    """None when the path or name ``name`` is UTF-8; otherwise ``name`` as shown, then the
    locale's cure when its bytes are UTF-8 after all, else ``otherwise`` with its ``{byte}``
    (the first byte that is not, as 0xff) filled in: the words of every refused name."""
    bad = not_utf8(name)
    if bad is None:
        return None
    shown, byte, cure = bad
    return f"{shown}: {cure or otherwise.format(byte=f'0x{byte:02x}')}"


def read_text(path: PathLike, kind: str = "scenario") -> str:
    """A scenario or plan file's text (``kind``), which must be UTF-8; the error names the file,
    and the line of a byte that is not UTF-8. A byte order mark first (Windows' Notepad saved
    UTF-8 so until 2019) is not part of the text: the core reads a scenario beside it, and
    tomllib refused a plan.toml so saved as "Invalid statement (at line 1, column 1)", with a
    word on TOML 1.1 syntax (campaign 60b, issue 32)."""
    p = Path(path)
    try:
        data = read_limited(p)
    except TooLarge as e:
        raise _scenario_error(
            "", f"{p}: {e}, so not a {kind} ({kind}s are small UTF-8 TOML files)"
        ) from None
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as e:
        # The line as well: a Latin-1 or Windows-1252 character (a smart quote pasted from a
        # word processor) was found by its offset alone, which no editor shows.
        line = data.count(b"\n", 0, e.start) + 1
        raise _scenario_error(
            "",
            f"{p}: not UTF-8 text (byte 0x{data[e.start]:02x} at line {line}, offset "
            f"{e.start}); {kind} files are UTF-8 TOML: save it as UTF-8",
        ) from None


_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")

# TOML basic-string escapes; other control characters become \uXXXX.
_ESCAPES = {
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\f": "\\f",
    "\r": "\\r",
    '"': '\\"',
    "\\": "\\\\",
}


def _override_strings(overrides: Sequence[str], name: str = "overrides") -> tuple[str, ...]:
    """``overrides`` as a tuple of ``PATH=VALUE`` strings, or TypeError. One string is refused:
    it is a sequence of its characters, and each was an override of its own, refused as
    ``--set "d": expected PATH=VALUE`` for ``"duration=1s"`` (campaign 8, issue 32)."""
    if isinstance(overrides, str):
        raise TypeError(
            f"{name}: expected a list of PATH=VALUE strings, not one string; write [{overrides!r}]"
        )
    if not isinstance(overrides, Iterable):  # None was "'NoneType' object is not iterable"
        raise TypeError(
            f"{name}: expected a list of PATH=VALUE strings, not {type(overrides).__name__}"
        )
    items = tuple(overrides)
    for item in items:
        if not isinstance(item, str):
            raise TypeError(
                f"{name}: expected PATH=VALUE strings, found {type(item).__name__} {item!r}"
            )
    return items


def _unicode(what: str, text: str) -> str:
    """``text``, which the core can take: a lone surrogate (``"\\ud800"``, from a file read
    with ``errors="surrogateescape"``) has no UTF-8 form, and was a bare UnicodeEncodeError
    from the core's call when the scenario was run (campaign 12, issue 32)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        at = f" at line {text.count(chr(10), 0, e.start) + 1}" if "\n" in text else ""
        raise ValueError(
            f"{what}: U+{ord(text[e.start]):04X}{at} is a lone surrogate, not a character; "
            "TOML text is Unicode"
        ) from None
    return text


def _toml_string(s: str) -> str:
    out = []
    for ch in s:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _toml_key(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else _toml_string(key)


def _zero_d(np: Any, value: Any) -> bool:
    """A numpy array of no dimensions (``np.array(1000)``, what many reductions give): a
    scalar, which iterated as an array was "iteration over a 0-d array" (campaign 19)."""
    return isinstance(value, np.ndarray) and value.ndim == 0


def format_value(value: Any) -> str:
    """Format a Python value as TOML on one line: the right-hand side of ``--set PATH=VALUE``.

    Numbers and booleans become literals, strings quoted strings (units stay in them), lists
    arrays and dicts inline tables.

    >>> format_value(0.01), format_value(True), format_value("10Mbps"), format_value(3)
    ('0.01', 'true', '"10Mbps"', '3')
    >>> format_value({"type": "red", "limit": 500})
    '{ type = "red", limit = 500 }'
    >>> format_value(["a", 1.5])
    '["a", 1.5]'
    """
    np = _numpy()
    if np is not None and (isinstance(value, np.generic) or _zero_d(np, value)):
        value = value.item()
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return _toml_string(value)
    if isinstance(value, Mapping):
        if not value:
            return "{}"
        items = ", ".join(f"{_toml_key(str(k))} = {format_value(v)}" for k, v in value.items())
        return "{ " + items + " }"
    # bytes are a Sequence of ints: b"10Mbps" became the array [49, 48, ...] (campaign 12);
    # so did a memoryview of them (noticed in campaign 20, issue 32).
    if isinstance(value, Sequence) and not isinstance(value, (bytes, bytearray, memoryview)):
        return "[" + ", ".join(format_value(v) for v in value) + "]"
    if np is not None and isinstance(value, np.ndarray):
        return "[" + ", ".join(format_value(v) for v in value) + "]"
    raise TypeError(f"cannot use a {type(value).__name__} as a scenario value")


#: TOML's integers are 64-bit (TOML 1.0, "Integer").
_TOML_INT = range(-(2**63), 2**63)


def _plain_tree(value: Any, path: str) -> Any:
    """``from_dict``'s tree as TOML can write it, or an error naming the key that cannot be
    written (campaign 10, issue 32: ``{"seed": 10**30}`` was "TOML syntax error at line 2,
    column 8" of a text the user never wrote, a set "Object of type 'set' is not TOML
    serializable", a number key "Invalid mapping key '1'"; none said where). numpy's scalars
    and arrays become Python's, as in :func:`format_value`."""
    np = _numpy()
    if np is not None and (isinstance(value, np.generic) or _zero_d(np, value)):
        value = value.item()
    where = path or "tree"
    if isinstance(value, Mapping):
        plain = {}
        for key, v in value.items():
            if not isinstance(key, str):
                raise TypeError(f"{where}: key {key!r} is not a string (TOML keys are strings)")
            plain[_unicode(where, key)] = _plain_tree(v, f"{path}.{key}" if path else key)
        return plain
    if isinstance(value, str):
        return _unicode(where, value)
    if isinstance(value, (bool, float)):
        return value
    if isinstance(value, int):
        if value not in _TOML_INT:
            raise ValueError(
                f"{where}: {int_text(value)} is out of range; an integer is from -2^63 to 2^63 - 1 "
                '(TOML 1.0, "Integer": 64 bit)'
            )
        return value
    if isinstance(value, (list, tuple)) or (np is not None and isinstance(value, np.ndarray)):
        return [_plain_tree(v, f"{where}[{i}]") for i, v in enumerate(value)]
    raise TypeError(f"{where}: cannot use a {type(value).__name__} as a scenario value")


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
        if not isinstance(text, str):
            raise TypeError(f"text: expected TOML text (str), not {type(text).__name__}")
        self._text = _unicode("text", text)
        self._overrides = tuple(_unicode("overrides", o) for o in _override_strings(overrides))
        if not isinstance(source, str):
            raise TypeError(
                f"source: expected a name for messages (str), not {type(source).__name__}"
            )
        self._source = _unicode("source", source)

    @classmethod
    def from_toml(cls, path: PathLike) -> Scenario:
        """Read a scenario file (UTF-8 TOML).

        Parameters
        ----------
        path
            The file, e.g. ``examples/dumbbell.toml``. A FIFO (a shell's ``<(...)``) is read
            as a stream, as ``cat`` reads it: until its writer closes it.
        """
        p = path_argument("path", path)
        text = read_text(p)
        check_toml(text, str(p))
        return cls(text, source=str(p))

    @classmethod
    def from_str(cls, text: str) -> Scenario:
        """Use TOML text as it is.

        >>> Scenario.from_str('duration = "1s"').to_toml()
        'duration = "1s"'
        """
        return cls(text)

    @classmethod
    def from_dict(cls, tree: Mapping[str, Any]) -> Scenario:
        """Build a scenario from the same structure as the TOML file, units as strings.

        >>> sc = Scenario.from_dict({"duration": "1s", "nodes": {"a": "host", "b": "host"}})
        >>> 'duration = "1s"' in sc.to_toml()
        True
        """
        # Imported here: at the top, a missing tomli_w stopped every command, `ccsim --help`
        # included, with a traceback before the CLI could name it.
        import tomli_w

        if not isinstance(tree, Mapping):
            raise TypeError(
                f"tree: expected the scenario's tables as a dict, not {type(tree).__name__}"
            )
        return cls(tomli_w.dumps(_plain_tree(tree, "")), source="<dict>")

    @property
    def overrides(self) -> tuple[str, ...]:
        return self._overrides

    @property
    def source(self) -> str:
        return self._source

    def set(self, path: str, value: Any) -> Scenario:
        """A new scenario with one more override ``path = value``; this one is unchanged.

        Parameters
        ----------
        path
            Dotted keys, e.g. ``links.bottleneck.loss.rate``.
        value
            A number, bool, string (units stay in strings: ``"10Mbps"``), list or dict.

        Examples
        --------
        >>> sc = Scenario.from_str('duration = "1s"')
        >>> sc.set("links.l.rate", "2Mbps").set("links.l.queue", {"limit": 50}).overrides
        ('links.l.rate="2Mbps"', 'links.l.queue={ limit = 50 }')
        >>> sc.overrides
        ()
        """
        if not isinstance(path, str):
            raise TypeError(f"path: expected dotted keys (str), not {type(path).__name__}")
        # Read as the core will read it, and refused here: `set("a..b", 1)` was taken, then
        # refused at validate() as `--set "a..b=1"`, an option a Python caller never wrote
        # (noticed in campaign 24, issue 32).
        if _core.override_keys(_unicode("path", path)) is None:
            raise ValueError(f"path: {path!r} is not a key path: expected keys joined by "
                             "dots, each bare (letters, digits, _ and -) or quoted (\"x/y\", "
                             "'a.b')")  # fmt: skip
        # Each named on its own: a lone surrogate in either was refused as "overrides: ...".
        try:
            text = format_value(value)
        except TypeError as e:  # "cannot use a date as a scenario value", naming no path
            raise TypeError(f"{path}: {e}") from None
        override = f"{_unicode('path', path)}={_unicode('value', text)}"
        return Scenario(self._text, (*self._overrides, override), self._source)

    def with_overrides(self, overrides: Sequence[str]) -> Scenario:
        """A new scenario with raw ``PATH=VALUE`` overrides appended."""
        return Scenario(self._text, (*self._overrides, *_override_strings(overrides)), self._source)

    def to_toml(self) -> str:
        """The TOML text, before overrides."""
        return self._text

    def validate(self, seed: int | None = None) -> str:
        """Check the scenario without running it.

        Parameters
        ----------
        seed
            Replaces the scenario's master seed, as ``run(..., seed=)`` would.

        Returns
        -------
        str
            The resolved TOML: overrides and seed applied; running it gives the same run.

        Raises
        ------
        ScenarioError
            With ``.path`` naming the field and ``.reason`` saying what is wrong.

        Examples
        --------
        >>> sc = Scenario.from_dict({
        ...     "duration": "1s",
        ...     "nodes": {"a": "host", "b": "host"},
        ...     "links": {"l": {"a": "a", "b": "b", "rate": "1Mbps", "delay": "1ms"}},
        ... })
        >>> print(sc.validate(seed=2).splitlines()[0])
        seed = 2
        >>> sc.set("links.l.rate", "fast").validate()
        Traceback (most recent call last):
          ...
        ccsim._core.ScenarioError: links.l.rate: "fast" is not a rate, e.g. "10Mbps"
        """
        return _core.validate(self._text, list(self._overrides), check_seed(seed))

    def __repr__(self) -> str:
        return f"Scenario(source={self._source!r}, overrides={list(self._overrides)!r})"


def run(
    scenario: Scenario | PathLike,
    *,
    seed: int | None = None,
    overrides: Sequence[str] = (),
    progress: Callable[[float, int, float], None] | None = None,
    pcap_dir: PathLike | None = None,
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
    progress
        Called about twice a second while the run goes on (from this thread), with the
        simulated seconds reached, the events so far and the scenario's duration in seconds.
        An exception it raises stops the run and is raised here.
    pcap_dir
        The folder (created if missing) for the pcap files the scenario's ``[trace] pcap``
        asks for, one per interface, ``<node>-<link>.pcap``. A scenario asking for captures
        does not run without one.

    Raises
    ------
    ScenarioError
        The scenario is invalid (nothing ran).
    SimulationError
        The run failed.
    """
    if progress is not None and not callable(progress):
        # Found out only by a run long enough to report progress, and then as "'str' object
        # is not callable" from inside the core (campaign 10, issue 32).
        raise TypeError(
            "progress: expected a function of (sim_s, events, duration_s), not "
            f"{type(progress).__name__}"
        )
    if isinstance(scenario, Scenario):
        sc = scenario
    else:
        stale = reloaded("scenario", scenario, Scenario)
        if stale is not None:
            raise TypeError(stale)
        if isinstance(scenario, (bytes, bool)) or not isinstance(scenario, (str, os.PathLike)):
            # Not path_argument's words alone: "expected a path" read as if a Scenario were
            # not taken.
            raise TypeError(f"scenario: expected a Scenario or a path (str or os.PathLike), not "
                            f"{type(scenario).__name__} {scenario!r}")  # fmt: skip
        sc = Scenario.from_toml(path_argument("scenario", scenario))
    sc = sc.with_overrides(overrides)
    folder = None if pcap_dir is None else str(path_argument("pcap_dir", pcap_dir))
    # The core hands its columns over as numpy arrays: numpy loaded whole first, even when
    # interrupted (a notebook's kernel lives on).
    import_whole(("numpy",))
    raw = _core.run(sc.to_toml(), list(sc.overrides), check_seed(seed), progress, folder)
    return Result._from_raw(raw)
