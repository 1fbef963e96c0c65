# SPDX-License-Identifier: MIT
"""Sweeps: many runs of one scenario over parameters and seeds, in parallel, resumable.

Every run is identified by a key derived from its *resolved* scenario (overrides and seed
applied, as the core serializes it) and from the engine that runs it (``_core.ENGINE``, a hash
of the core's sources and pinned dependencies), so two ways of writing the same point share one
result, and neither a changed scenario nor changed simulator code ever reuses a stale one. A
run's result is written to the store the moment it finishes, atomically (a temporary file
renamed into place), so a sweep that is interrupted or killed keeps every finished run and,
started again, runs only what is missing.

::

    runs ──> keys (engine + resolved TOML, sha256) ──> store has it? ── yes ──> load
                                                   └─ no ──> worker processes ──> save at once

Interruptions. Only the parent process handles Ctrl-C and SIGTERM: workers ignore SIGINT (the
terminal sends it to the whole process group) and keep SIGTERM's default action, so on a
``KeyboardInterrupt`` the parent terminates them, which ends each at once, mid-run, without a
traceback. Workers never write to the store (the parent saves each record, atomically), so
whatever is stored is a finished run. Workers also exit when their parent dies, even by SIGKILL:
on Linux the kernel kills them (``prctl(PR_SET_PDEATHSIG)``), and everywhere a watchdog thread
sees that they were re-parented.

Records hold the run summary and the ``flows``, ``links``, ``series``, ``paths``, ``agents`` and
``packets`` tables (the series and the packet trace are empty unless the scenario asks for a
trace, the paths without an SCTP flow, the agents without a node hook); they are gathered into
one table with a column per swept parameter and the seed.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import hashlib
import itertools
import json
import math
import os
import re
import signal
import stat
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from multiprocessing.connection import wait as wait_for_sentinels
from pathlib import Path
from typing import Any

import pandas as pd

try:
    from tqdm import tqdm
except (ImportError, BrokenPipeError):
    # BrokenPipeError: a package printing as it loads, to a stdout whose reader has gone (the
    # command's 141, said by the command line), not a tqdm that cannot be imported: it read
    # "ccsim needs tqdm, ... ([Errno 32] Broken pipe): install ccsim again" (campaign 51).
    raise
except Exception as e:
    # tqdm reads its own version from its metadata as it loads: a METADATA that cannot be
    # read (a byte not UTF-8) made `from ccsim import sweep` raise a bare UnicodeDecodeError
    # naming no file (the extras matrix's state bad-metadata, issue 32).
    from ccsim.cluster import damaged_metadata

    raise ImportError(f"ccsim.sweep needs tqdm, which is installed but cannot be imported: "
                      f"{damaged_metadata() or e}", name="tqdm") from e  # fmt: skip

from ccsim import _core, limits, worker
from ccsim.running_clock import RunningClock
from ccsim.scenario import (
    MAX_WORKERS,
    _override_strings,
    _unicode,
    check_run_count,
    int_text,
    seed_problem,
)
from ccsim.stop_signals import takes_a_line_soon


class _ProgressBar(tqdm):  # type: ignore[misc]
    """A sweep's bar, without tqdm's monitor thread (``monitor_interval``): a thread more per
    command for nothing (the bar shows every run, ``miniters=1``), and where threads are
    counted (``ulimit -u``, with numexpr's own threads started as pandas loads it) tqdm
    printed "ccsim: warning: tqdm:disabling monitor support (monitor_interval = 0) due to:;
    can't start new thread" above the command's one line (campaign 46, issue 32)."""

    monitor_interval = 0

    # tqdm takes every argument not named here from the user's TQDM_* variables, and some
    # values it reads well fail only as the bar is drawn (TQDM_ASCII=x: "internal error
    # (ZeroDivisionError)"; TQDM_BAR_FORMAT={x}: "(KeyError): 'x'"; TQDM_WRITE_BYTES=1,
    # TQDM_LOCK_ARGS=abc: "(TypeError)"; TQDM_COLOUR=#zzzzzz: "invalid literal for int() with
    # base 16", naming nothing), before the first run or as any later one finished (stop 58,
    # issue 32). The bar is the person's view of the runs, not the runs: where it fails under
    # such a setting it goes, said once with the setting, and the sweep goes on.
    def refresh(self, *args: Any, **kwargs: Any) -> Any:
        return self._drawn(super().refresh, *args, **kwargs)

    def display(self, *args: Any, **kwargs: Any) -> Any:
        return self._drawn(super().display, *args, **kwargs)

    def close(self) -> None:
        stopping = isinstance(sys.exc_info()[1], KeyboardInterrupt)
        if stopping and not self.disable and not takes_a_line_soon(getattr(self, "fp", None)):
            self.disable = True  # to a terminal that takes nothing: not drawn
        self._drawn(super().close)

    def _drawn(self, draw: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        if getattr(self, "_failed", False):
            return None
        try:
            return draw(*args, **kwargs)
        except Exception as e:
            settings = ", ".join(f"{n}={v!r}" for n, v in sorted(os.environ.items())
                                 if n.startswith("TQDM_"))  # fmt: skip
            if not settings:
                raise
            self._failed = self.disable = True
            # "\r": over what the bar drew of itself, on the terminal it draws on.
            line = (f"\rccsim: warning: no progress bar: tqdm failed with {settings} in the "
                    f"environment ({type(e).__name__}: {e}): mend or unset it\n")  # fmt: skip
            with contextlib.suppress(OSError, ValueError, AttributeError):
                sys.stderr.write(line)
                sys.stderr.flush()
            return None


#: 3: records keep the ``paths``, ``agents`` and ``packets`` tables too (2 had flows, links,
#: series only), so a plan can measure SCTP paths and base-station agents and draw packet traces.
#: 4: and the ATM tables ``atm_vcs`` and ``atm_ports``, so a plan can count cells lost at a
#: switch port beside the TCP flows that lost them.
RECORD_VERSION = 4
#: The tables a record holds, each as a column name -> list of values.
RECORD_TABLES = ("flows", "links", "series", "paths", "agents", "packets", "atm_vcs", "atm_ports")


@dataclass(frozen=True)
class RunSpec:
    """One run: scenario text, overrides, seed, and tags that label it in the gathered table.
    The last ``swept`` overrides are a sweep's ``--param`` values, named so in errors."""

    text: str
    overrides: tuple[str, ...]
    seed: int
    tags: tuple[tuple[str, Any], ...] = field(default=())
    swept: int = 0

    def key(self) -> str:
        """The store key: a hash of the engine and the resolved scenario (raises ScenarioError
        if invalid). A run stored by a build of other sources is not this run: after a change
        to the core, every run is made again rather than mixed with the old ones."""
        given = len(self.overrides) - self.swept
        resolved = _core.validate(
            self.text, list(self.overrides[:given]), self.seed, list(self.overrides[given:])
        )
        h = hashlib.sha256(
            f"v{RECORD_VERSION}\nengine {_core.ENGINE}\n{resolved}".encode()
        ).hexdigest()
        return h[:KEY_LENGTH]


#: Hex digits of a run's store key (RunSpec.key).
KEY_LENGTH = 32


class CorruptRecordWarning(UserWarning):
    """A run record in the store could not be read (empty, truncated, not a record); the run
    is treated as missing and runs again."""


def record_problem(record: Any) -> str | None:
    """What makes ``record`` (decoded JSON) unusable as a run record, or None if nothing."""
    if not isinstance(record, dict):
        return f"a JSON {type(record).__name__}, not an object"
    if record.get("version") != RECORD_VERSION:
        return f"version {record.get('version')!r}, not {RECORD_VERSION}"
    if not isinstance(record.get("seed"), int) or not isinstance(record.get("summary"), dict):
        return "no seed or summary"
    # Valid JSON holding a value of another type (an edit by hand: "0.2" for 0.2, null) was
    # taken, and the figures' arithmetic failed on it naming no file: ccsim reproduce said
    # "could not convert string to float: 'x'" (campaign 22, issue 32). The core writes the
    # summary's stop_reason as text and every other field as a number (ccsim-py's
    # summary_to_dict), and each table column as numbers or as text (results.rs, Column).
    for name, value in record["summary"].items():
        if not (isinstance(value, str) if name == "stop_reason" else _number(value)):
            return f"summary.{name} is {_json_kind(value)}"
    for table in RECORD_TABLES:
        columns = record.get(table)
        if not isinstance(columns, dict) or not all(isinstance(c, list) for c in columns.values()):
            return f'no "{table}" table'
        if len({len(c) for c in columns.values()}) > 1:
            return f'columns of unequal length in "{table}"'
        for name, column in columns.items():
            # By type first: a packet trace's columns run to millions of values.
            types = set(map(type, column))
            if types and not (types <= {int, float} or types == {str}):
                kinds = sorted({_json_kind(v) for v in column})
                return f'column "{name}" of "{table}" holds {" and ".join(kinds)}'
    return None


def _number(value: Any) -> bool:
    """Whether a decoded JSON value is a number (JSON's true and false are not)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _json_kind(value: Any) -> str:
    """A decoded JSON value's kind, in words."""
    if _number(value):
        return "a number"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return "text"
    if value is None:
        return "null"
    return "an array" if isinstance(value, list) else "an object"


class Store:
    """Finished runs on disk, one JSON file per run under ``directory``. The folder is made by
    the first save: a sweep refused for its input (a misspelled key, a bad swept value) leaves
    no empty store behind that looks like a sweep started there."""

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)

    def path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def has(self, key: str) -> bool:
        """Whether a record file is stored under ``key`` (damaged or not). A folder there is
        none: counted as one, the explorer's check before its runs passed it by and the job
        ended with the system's words for the save (campaign 23, issue 32)."""
        return self.path(key).is_file()

    def other_engine(self) -> str | None:
        """The engine of a record this store holds when it is not this build's (the store
        made by another install or an older checkout of ccsim), or None: its keys hold the
        engine, so none of those runs is reused, and a resumed sweep said "0 reused from the
        store" with no word why (campaign 61d's notice, issue 32). One record is read, its
        head alone (a record starts with its version and engine)."""
        try:
            with os.scandir(self.directory) as top:
                shards = sorted(e.path for e in top if e.is_dir())
            for shard in shards:
                with os.scandir(shard) as files:
                    first = next((e.path for e in files
                                  if e.name.endswith(".json") and e.is_file()), None)  # fmt: skip
                if first is None:
                    continue
                with open(first, "rb") as fh:
                    found = re.search(rb'"engine":\s*"([0-9A-Za-z._-]+)"', fh.read(512))
                engine = found.group(1).decode() if found else None
                return engine if engine not in (None, _core.ENGINE) else None
        except OSError:
            return None
        return None

    def has_all(self, keys: Iterable[str]) -> bool:
        """Whether the store holds a record file for every key: one folder listing per shard
        instead of a file lookup per key (7,654 lookups were a third of a second, issue 33)."""
        names_by_shard: dict[str, set[str]] = {}
        for k in keys:
            names_by_shard.setdefault(k[:2], set()).add(f"{k}.json")
        for shard, names in names_by_shard.items():
            try:
                present = set(os.listdir(self.directory / shard))
            except OSError:
                return False
            if not names <= present:
                return False
        return True

    def load(self, key: str) -> dict[str, Any]:
        with self.path(key).open(encoding="utf-8") as fh:
            record: dict[str, Any] = json.load(fh)
        return record

    def load_valid(self, key: str, then: str = "running it again") -> dict[str, Any] | None:
        """The record of ``key``, or None when the store lacks it or holds a damaged one (a
        disk that filled up, a copy cut short, an edit by hand): that file is named in a
        ``CorruptRecordWarning`` saying ``then`` (what the caller does instead: a sweep counts
        the run as missing, so it runs again and its file is replaced)."""
        from ccsim.scenario import NotAFile, check_regular

        p = self.path(key)
        if not p.exists():
            return None
        try:
            # Not a regular file (a FIFO, a link to /dev/zero): read, it blocked for ever or
            # until memory ran out. A record has no size bound of its own (packet traces).
            check_regular(p)
            record: Any = json.loads(p.read_text(encoding="utf-8"))
        except NotAFile as e:
            problem: str | None = str(e)
        except OSError as e:
            if limits.exhausted(e) is not None:
                # This process's limit (ulimit -n under the explorer), not the record's
                # damage: it was "damaged run record (Too many open files); running it
                # again" (campaign 33, issue 32).
                raise
            problem = e.strerror or str(e)
        except (ValueError, RecursionError) as e:  # JSONDecodeError, UnicodeDecodeError
            problem = f"not valid JSON ({e})"
        else:
            problem = record_problem(record)
        if problem is not None:
            warnings.warn(
                f"{p}: damaged run record ({problem}); {then}",
                CorruptRecordWarning,
                stacklevel=2,
            )
            return None
        return dict(record)

    def refuse_folders(self, keys: Iterable[str]) -> None:
        """ValueError naming the first record of ``keys`` that is a folder: no run can
        replace it. The record was run, then its save failed naming the hidden temporary file
        (".../.tmp-<key>-<pid>-<thread>.json -> ...: is a directory"), after every run of a
        sweep (campaign 23, issue 32); a sweep looks before it reads the records, as it read
        it as "damaged run record (is a directory); running it again" the line before
        refusing it (campaign 48b). A link is replaced by the save, as a file is."""
        for k in keys:
            record = self.path(k)
            if record.is_dir() and not record.is_symlink():
                raise ValueError(f"{record} is a folder, where a run record goes: move it "
                                 "away or write elsewhere")  # fmt: skip

    def check(self, keys: Iterable[str] = ()) -> None:
        """ValueError in one line naming the place, when the records of ``keys`` could not be
        saved: something other than a folder where the store's folder (or one of its shards)
        would be, or a store folder that cannot be written. Checked before any run starts: a
        sweep whose ``--out`` held a file named ``runs`` ran until its first save failed."""
        from ccsim.scenario import file_kind
        from ccsim.staging import LINK_LOOP, dangling

        keys = list(keys)
        self._check_path_length()
        folders = [*reversed(self.directory.parents), self.directory]
        folders += sorted({self.path(k).parent for k in keys})
        for folder in folders:
            try:
                mode = folder.stat().st_mode
            except FileNotFoundError:
                link = dangling(folder)
                if link is not None:
                    raise ValueError(f"{folder} {link}, where the run records are stored: "
                                     "remove the link or write elsewhere") from None  # fmt: skip
                continue
            except OSError as e:
                if e.errno == errno.ELOOP:
                    raise ValueError(f"{folder} {LINK_LOOP}, not a folder, where the run "
                                     "records are stored: move it away or write elsewhere"
                                     ) from None  # fmt: skip
                raise ValueError(f"{folder}: cannot be used as a folder ({e.strerror or e}); "
                                 "the run records are stored there") from None  # fmt: skip
            if not stat.S_ISDIR(mode):
                raise ValueError(f"{folder} {file_kind(mode)}, not a folder, where the run "
                                 "records are stored: move it away or write elsewhere")  # fmt: skip
        self.refuse_folders(keys)
        if self.directory.is_dir():
            try:
                with tempfile.TemporaryFile(dir=self.directory, prefix=".ccsim-write-check-"):
                    pass
            except OSError as e:
                raise ValueError(f"{self.directory}: cannot write the run records there "
                                 f"({e.strerror or e})") from None  # fmt: skip

    def _check_path_length(self) -> None:
        """ValueError when the paths of the records to be saved here (their temporary names
        the longest) would be longer than the system takes (PATH_MAX). A sweep under a
        4,000-byte ``--out`` ran until its first save, "runs/93/9345....json: file name too
        long", and a reproduction left its plan there, a folder that looked begun, which the
        same command could never finish (campaign 62b, issue 32)."""
        # A process id and a thread id as long as they come (10 and 20 digits).
        longest = _temporary(self.path("0" * KEY_LENGTH), 10**9, 10**19)
        try:
            existing = next(p for p in [self.directory, *self.directory.parents] if p.exists())
            path_max = os.pathconf(existing, "PC_PATH_MAX")
        except (OSError, ValueError, StopIteration):  # a path the system refuses to look up
            path_max = 4096  # Linux's; a path must be shorter, for its NUL
        if len(os.fsencode(longest)) >= path_max:
            raise ValueError(
                f"{self.directory}: a path of {len(os.fsencode(self.directory))} bytes, too long "
                f"for the run records under it (as long as {len(os.fsencode(longest))} bytes, "
                f"where this system takes at most {path_max - 1}): write to a folder with a "
                "shorter path"
            )

    def save(self, key: str, record: dict[str, Any]) -> None:
        """Store ``record`` under ``key``, whole or not at all. A run a limit stopped before
        its end is refused (:class:`RunCutShort`): a sweep counts it a failed run, and
        ``ccsim explore``, which stores its runs here too, stored and reused it as a whole
        run's (noticed in campaign 18, issue 32)."""
        partial = _cut_short(record)
        if partial is not None:
            raise partial
        p = self.path(key)
        p.parent.mkdir(parents=True, exist_ok=True)
        # The temporary file's name is known before it exists, so wherever an interruption
        # lands (even inside the call that creates it) the cleanup below can remove it; and
        # Ctrl-C or SIGTERM arriving during the save waits until the record is in place.
        # One per thread as well as per process: two threads of one program saving the same
        # run (two sweeps over one store at once) shared the name, and the second's rename
        # found the file gone, "RecordNotSaved: ... no such file" (campaign 22, issue 32).
        tmp = _temporary(p, os.getpid(), threading.get_ident())
        from ccsim.result import naming_the_file

        with _signals_held():
            try:
                # A full disk fails the write with no file named: the record's is.
                try:
                    fh = open(tmp, "w", encoding="utf-8")
                except OSError as e:
                    # A disk with bytes free but no inode left (a tmpfs with nr_inodes=)
                    # fails the file's creation, naming the hidden temporary file, which the
                    # user never made (campaign 27, issue 32): the record is named.
                    raise OSError(e.errno, e.strerror, str(p)) from e
                with naming_the_file(p), fh:
                    json.dump(record, fh)
                try:
                    os.replace(tmp, p)
                except FileNotFoundError as e:
                    # The store's folder was moved or removed (`mv OUT OUT.old`) after the
                    # record was written into it: the rename named the hidden temporary file
                    # ("OUT/runs/0a/.tmp-0a...-<pid>-<thread>.json -> ...: no such file"),
                    # a file the user never made (campaign 27, issue 32). No errno: it would
                    # make the error FileNotFoundError, shown as a bare "no such file".
                    raise OSError(None, f"{p.parent} was moved or removed while the record "
                                  "was written", str(p)) from e  # fmt: skip
                except OSError as e:
                    # The rename names the hidden temporary file first (a disk gone
                    # read-only, a failing device: "<...>/.tmp-<key>-<pid>-<thread>.json ->
                    # <record>: input/output error"; campaign 28, issue 32): the record is.
                    raise OSError(e.errno, e.strerror, str(p)) from e
            finally:
                # A temporary file never made (its path past PATH_MAX though the record's
                # fits) fails this unlink too, and its error named the hidden file in place
                # of the write's naming the record (campaign 27, issue 32).
                with contextlib.suppress(OSError):
                    tmp.unlink(missing_ok=True)

    def __len__(self) -> int:
        return sum(1 for f in self.directory.glob("*/*.json") if not f.name.startswith(".tmp-"))


def _stderr_columns() -> int:
    """The width stderr's terminal reports, 0 when it reports none or is no terminal."""
    try:
        return os.get_terminal_size(sys.stderr.fileno()).columns
    except (OSError, ValueError, AttributeError):
        return 0


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """Holds SIGINT, SIGTERM and SIGHUP back until the block ends; they are acted on then.

    Two holds, both needed. The main thread's signal mask: a worker forked or spawned in the
    block starts with them blocked (``_init_worker`` unblocks them once it has its handlers).
    And Python's handlers, swapped for one that notes the signal: the kernel gives a signal
    sent to the process to any thread that does not block it (tqdm's monitor, the pool's
    threads once they run), and Python then runs the main thread's handler inside the block
    at its next switch of threads. With the mask alone a hang-up to the whole group could cut
    a spawn worker's start between its launch and its start-up data, and the worker printed
    "EOFError: Ran out of input" under the command's own line (1 in 5-12 under spawn;
    campaign 41, issue 32). Python runs handlers in the main thread only: in another thread
    nothing is held, and a signal interrupts the main thread, not this block. A signal the
    process ignores stays ignored."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    came: list[int] = []
    swapped = {}
    for s in _PARENT_SIGNALS:
        handler = signal.getsignal(s)
        if handler not in (signal.SIG_IGN, None):
            swapped[s] = handler
            signal.signal(s, lambda n, _frame: came.append(n))
    masked = hasattr(signal, "pthread_sigmask")  # POSIX
    old = signal.pthread_sigmask(signal.SIG_BLOCK, _PARENT_SIGNALS) if masked else None
    try:
        yield
    finally:
        # Unmasked under the note-taking handlers: a signal pending on the main thread is
        # noted, not acted on half-way through the restoring.
        if old is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)
        for s, handler in swapped.items():
            signal.signal(s, handler)
        if came:  # the first: a second would only repeat it
            signal.raise_signal(came[0])


class RecordNotSaved(RuntimeError):
    """A finished run's record could not be written to the store (a full disk): the record
    named, and, as an interruption says, how many finished runs are kept and that the same
    command resumes from them. The record alone left the user to guess whether the sweep's
    work was lost."""

    def __init__(self, error: OSError, store: Store, stored: int = 0) -> None:
        """``stored``: how many records the store held before this one (reused or saved)."""
        from ccsim.staging import kept_runs, os_error_text

        kept = len(store)
        if not kept and stored and not store.directory.exists():
            # The store's folder moved away (`mv OUT OUT.old`) with the runs in it: "no
            # finished run is kept" counted where it no longer was, and the user was told the
            # work was lost (campaign 43a, issue 32).
            runs = "finished run" if stored == 1 else "finished runs"
            super().__init__(f"{os_error_text(error)}; the {stored} {runs} stored in "
                             f"{store.directory} before went with it: moved back, the same "
                             f"command resumes from {'it' if stored == 1 else 'them'}")  # fmt: skip
            return
        if not kept:  # "0 finished runs are kept in OUT/runs" named a folder never made
            super().__init__(f"{os_error_text(error)}; no finished run is kept")
            return
        super().__init__(f"{os_error_text(error)}; {kept_runs(kept, store.directory)}")


class SweepInterrupted(RuntimeError):
    """A worker process died (killed, out of memory); every finished run is stored."""

    def __init__(self, stored: int, why: str = "a worker process died") -> None:
        from ccsim.staging import finished_runs

        super().__init__(
            f"{why}; {finished_runs(stored, 'stored')}, and running the same "
            f"command again resumes from {'it' if stored == 1 else 'them'}"
        )


def _plain(table: dict[str, Any]) -> dict[str, list[Any]]:
    """Columns as plain lists (numpy arrays become lists), ready for JSON."""
    return {k: (v.tolist() if hasattr(v, "tolist") else list(v)) for k, v in table.items()}


# The signals the parent handles and its workers must not act on while they start.
_PARENT_SIGNALS = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}
# How often a worker's watchdog checks that its parent is alive, seconds.
_ORPHAN_POLL_S = 0.2
# How long the parent waits for terminated workers to exit before killing them, seconds.
_TERMINATE_GRACE_S = 0.5


def _die_with_parent(parent: int) -> None:
    """Make this worker exit when process ``parent`` does, however the parent ends."""
    pdeathsig = False
    if sys.platform.startswith("linux"):
        # prctl(2): PR_SET_PDEATHSIG = 1, the signal the kernel sends this process when the
        # thread that forked it (the parent's main thread, which submits every run) exits.
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            pdeathsig = libc.prctl(1, signal.SIGKILL, 0, 0, 0) == 0
        except (OSError, AttributeError):
            pass  # the watchdog below still covers it

    # A worker forked by the sweeping process itself ("fork" and "spawn") has it as its
    # parent; one made by a fork server (the start method a user's script may set, and
    # Python 3.14's default on Linux) has the server as its parent, and the sweeping process
    # is watched by its id instead: watched by its parent id, every such worker ended at its
    # start, and the sweep stopped with "a worker process died" (campaign 37, issue 32).
    forked_by_parent = os.getppid() == parent

    def parent_alive() -> bool:
        if forked_by_parent:
            # An orphan is re-parented (to init or a subreaper), so its parent id changes.
            return os.getppid() == parent
        try:
            os.kill(parent, 0)
        except ProcessLookupError:
            return False
        except OSError:  # EPERM: a process of that id exists
            pass
        return True

    def watch() -> None:
        while parent_alive():
            time.sleep(_ORPHAN_POLL_S)
        os._exit(1)

    try:
        threading.Thread(target=watch, name="ccsim-orphan-watchdog", daemon=True).start()
    except RuntimeError:
        # "can't start new thread": the limit of processes (ulimit -u) met by another program
        # of the user's since the pool was checked. Where prctl worked the kernel still ends
        # this worker with its parent; the run is not lost for want of a second guard
        # (campaign 33, issue 32: the worker printed this thread's traceback).
        if not pdeathsig:
            raise


def _init_worker(parent: int) -> None:
    """Worker initializer: leave SIGINT and SIGTERM to the parent, and die with it.

    The parent forks with both signals blocked (``_submit``), so none is acted on before this
    runs; the handlers inherited from the parent (the CLI's raises KeyboardInterrupt) would print
    a traceback in the worker.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # A closed terminal signals the whole group: a worker ends as on SIGTERM, the parent
    # keeps what finished (cli.STOP_SIGNALS). Unless the parent ignores it (started under
    # nohup: the handler inherited is SIG_IGN), and then the worker goes on as its parent
    # does (campaign 12, issue 32).
    for s in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(s) is not signal.SIG_IGN:
            signal.signal(s, signal.SIG_DFL)
    _die_with_parent(parent)
    if hasattr(signal, "pthread_sigmask"):  # POSIX
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _PARENT_SIGNALS)


def _submit(pool: ProcessPoolExecutor, r: RunSpec) -> Future[dict[str, Any]]:
    """Submit one run with the stop signals held off (:func:`_signals_held`): ``submit`` may
    start a worker, which must start with them blocked and be given its start-up data whole,
    and an interruption inside ``submit`` could leave the pool's locks held. A signal that
    arrives meanwhile is acted on just after."""
    with _signals_held():
        return pool.submit(_execute_one, r.text, r.overrides, r.seed)


def _stop_workers(pool: ProcessPoolExecutor) -> None:
    """End every worker now (SIGTERM, then SIGKILL for any still alive after a grace period)
    and let the pool wind down without waiting for runs in progress."""
    # The pool keeps its processes private; there is no public way to end them before 3.14.
    procs = list((getattr(pool, "_processes", None) or {}).values())
    manager = getattr(pool, "_executor_manager_thread", None)
    for p in procs:
        if p.is_alive():
            p.terminate()
    deadline = time.monotonic() + _TERMINATE_GRACE_S
    for p in procs:
        p.join(max(0.0, deadline - time.monotonic()))
        if p.is_alive():
            p.kill()
            p.join(1.0)
    # A worker killed while sending its result leaves half a message in the result pipe, and
    # the pool's manager thread waits for the rest for ever; the interpreter joins that thread
    # at exit, so the CLI hung after its message (1 Ctrl-C in 15). With the workers dead, this
    # process holds the last copy of the pipe's write end: closing it gives the reader an end of
    # file, and the pool winds down as broken.
    writer = getattr(getattr(pool, "_result_queue", None), "_writer", None)
    if writer is not None:
        writer.close()
    if manager is not None and manager.ident is None:
        # Never started (the limit of processes refused its thread): nothing to wake or join,
        # and joining it raises.
        pool._executor_manager_thread = None  # type: ignore[attr-defined]
        manager = None
    pool.shutdown(wait=False, cancel_futures=False)
    # And its end waited for, briefly. At exit Python wakes each pool's manager thread through a
    # pipe that the thread closes as it ends, and in 3.11 nothing orders the two: a sweep
    # stopped by SIGTERM under load printed "Exception ignored in: <module 'threading'>" and a
    # traceback from the exit's thread joins below its own line (seen once in a test run).
    if manager is not None:
        manager.join(_TERMINATE_GRACE_S)


def _workers(pool: ProcessPoolExecutor) -> list[Any]:
    """The pool's worker processes (kept private: there is no public way before 3.14)."""
    return list((getattr(pool, "_processes", None) or {}).values())


def _worker_ended(pool: ProcessPoolExecutor) -> bool:
    """Whether a worker of ``pool`` has ended. Asks without waiting, as the pool's own thread
    does (a worker's sentinel): workers live as long as the pool, so an ended one is a death."""
    return bool(wait_for_sentinels([p.sentinel for p in _workers(pool)], 0))


def _death(pool: ProcessPoolExecutor, workers: Sequence[Any] | None = None) -> str:
    """What ended the worker that broke ``pool``, as the error's first words (``workers``: the
    pool's processes, when it has already been shut down). A worker killed by SIGKILL is most
    often the system's out-of-memory killer's doing (a large scenario, or many workers on a node
    whose memory is shared): "a worker process died" named nothing a user could act on
    (campaign 39, issue 32).

    The exit codes are read once the pool's own thread has ended: a broken pool's thread ends
    the other workers with SIGTERM and reaps them all, and a code read while it reaps may be
    unknown (fork: its ``waitpid`` took the status a moment before it stored it) or wrong (fork
    server: the code is read from a pipe once, and the second reader gets 255). Read while that
    thread worked, a worker's SIGKILL was named "a worker process died" once in a test run,
    and whichever worker came first in the pool's table named the death, so a SIGTERM the pool
    sent itself could be named as the cause (campaigns 42 and 43, issue 32)."""
    workers = _workers(pool) if workers is None else list(workers)
    manager = getattr(pool, "_executor_manager_thread", None)
    if (
        manager is not None
        and manager.ident is not None
        and manager is not threading.current_thread()
    ):
        manager.join(_TERMINATE_GRACE_S)
    codes = []
    for p in workers:
        p.join(_TERMINATE_GRACE_S)
        if p.exitcode:
            codes.append(p.exitcode)
    # The most telling death: SIGKILL (the out-of-memory killer), then an exit status or
    # another signal, then SIGTERM (which the pool itself sends the others once broken, so it
    # is the cause only when nothing else is).
    for telling in (
        lambda c: c == -signal.SIGKILL,
        lambda c: c != -signal.SIGTERM,
        lambda c: True,
    ):
        for code in codes:
            if telling(code):
                return _death_of(code)
    return _death_of(None)


def _death_of(code: int | None) -> str:
    """A dead worker's exit code in words (None: not known)."""
    if code == -signal.SIGKILL:
        return (
            "a worker process died, killed by SIGKILL: the system's out-of-memory killer ends a "
            "process so (`dmesg` or the job's log says if it did; fewer --workers need less "
            "memory)"
        )
    if code is not None and code < 0 and -code in signal.valid_signals():
        return f"a worker process died, killed by {signal.Signals(-code).name}"
    from ccsim.staging import changed_text, packages_gone

    # A package removed since the start, which a worker under spawn or forkserver imports anew
    # (ccsim.worker). Named by its files gone here: the worker ends without a word, and its
    # code may not be known by the time the pool is found broken. (ccsim itself gone, the
    # interpreter's multiprocessing fails to load the worker before any of ccsim's code runs
    # in it, and prints its traceback: the line below still names ccsim.)
    gone = [name for name in packages_gone() if not name.startswith("_")]
    if code == worker.PACKAGE_GONE or gone:
        return changed_text(" and ".join(gone) or "a package ccsim needs",
                            "a worker process could not import it")  # fmt: skip
    return "a worker process died" if code is None else f"a worker process died, exit status {code}"


def _execute_one(text: str, overrides: Sequence[str], seed: int) -> dict[str, Any]:
    """Worker: run one point and return its record (plain, JSON-ready data)."""
    return record_of(_core.run(text, list(overrides), seed), overrides, seed)


def _temporary(record: Path, pid: int, thread: int) -> Path:
    """The name a record is written under before it is renamed into place: one per process
    and per thread (two threads of one program saving the same run shared one)."""
    return record.with_name(f".tmp-{record.stem}-{pid}-{thread}.json")


def _other_build_said(engine: str, what: str) -> str:
    """The words for runs stored by another build of ccsim (``engine``), made again by this
    one: ``what`` never mixes two builds' runs (a reproduction, a sweep)."""
    return (f"(the runs stored there were made by engine {engine}, another build of ccsim "
            f"than this one's {_core.ENGINE}: made again, as {what} never mixes two builds' "
            "runs)")  # fmt: skip


def record_of(raw: dict[str, Any], overrides: Sequence[str], seed: int) -> dict[str, Any]:
    """The store's record of one run: what ``_core.run`` returned, as plain JSON-ready data.
    Every writer of a store (sweeps, ``ccsim explore``) makes its records here."""
    if not isinstance(raw, Mapping) or not isinstance(raw.get("summary"), Mapping):
        raise TypeError(f"raw: expected what the core's run returns (a dict with a summary), "
                        f"not {type(raw).__name__}")  # fmt: skip
    overrides = _override_strings(overrides)
    problem = seed_problem(seed)
    if problem is not None:
        raise ValueError(f"seed: {problem}")
    return {
        "version": RECORD_VERSION,
        "engine": _core.ENGINE,
        "seed": seed,
        "overrides": list(overrides),
        "summary": dict(raw["summary"]),
        **{table: _plain(raw.get(table, {})) for table in RECORD_TABLES},
    }


#: The limits that stop a run before its end, by the summary's ``stop_reason``.
_LIMITS = {
    "event_limit": "limits.max_events",
    "wall_limit": "limits.max_wall",
    "memory_limit": "limits.max_memory",
}


class RunCutShort(RuntimeError):
    """A run a limit stopped before its end: in a sweep it is a failed run, not a record."""


def _cut_short(record: Mapping[str, Any]) -> RunCutShort | None:
    """Why ``record``'s run stopped before its end, or None when it ran to it (its duration,
    or nothing left to happen). A sweep's tables hold whole runs: one stopped by a limit
    gave rows that read as a whole run's, and was stored and reused, though where a
    wall-clock or memory limit stops a run depends on the machine (campaign 18, issue 32)."""
    summary = record.get("summary") or {}
    limit = _LIMITS.get(summary.get("stop_reason"))
    if limit is None:
        return None
    return RunCutShort(
        f"stopped by {limit} at {float(summary.get('sim_seconds', 0.0)):.3f} s simulated, "
        f"before the run's end: a partial run, not stored (where a wall-clock or memory "
        f"limit stops one depends on the machine); raise {limit}"
    )


@dataclass
class SweepReport:
    total: int
    cached: int
    executed: int
    records: list[dict[str, Any]]


class SweepError(RuntimeError):
    """Some runs failed; every run that finished was stored."""

    def __init__(self, failures: list[tuple[RunSpec, BaseException]]) -> None:
        self.failures = failures
        first_run, first_err = failures[0]
        # A run the system refused a thread or memory (ulimit -u, -v) is said as that limit,
        # not as the core's bare "(os error 11)" (campaign 33, issue 32).
        why = limits.exhausted(first_err) or first_err
        super().__init__(
            f"{len(failures)} run(s) failed; the others were stored. First: seed "
            f"{first_run.seed}, overrides {list(first_run.overrides)}: {why}"
        )


def execute(
    runs: Sequence[RunSpec],
    store: Store,
    workers: int | None = None,
    progress: bool = True,
    description: str = "runs",
    cluster: Any = None,
) -> SweepReport:
    """Run what the store does not have yet and return all records in the order of ``runs``.

    Runs go to ``workers`` local processes, or, with ``cluster`` (a Dask scheduler address such
    as ``"tcp://host:8786"``, or a ``distributed.Client``), to that cluster as tasks
    (``ccsim.cluster``). Either way this process saves each record the moment it arrives.
    """
    runs = _check_execute(runs, store, workers, progress, description, cluster)
    keys = [r.key() for r in runs]
    store._check_path_length()  # before a record's path is looked at (the system refuses it)
    store.refuse_folders(keys)  # before the records are read (their warning said otherwise)
    todo: dict[str, RunSpec] = {}
    have: dict[str, dict[str, Any]] = {}
    for k, r in zip(keys, runs):
        if k in have or k in todo:
            continue
        rec = store.load_valid(k)
        if rec is None:
            todo[k] = r
        else:
            have[k] = rec
    cached = len(set(keys)) - len(todo)
    store.check(todo)  # before any run: not at the first save
    failures: list[tuple[RunSpec, BaseException]] = []
    if todo:
        bar = _ProgressBar(
            total=len(todo),
            desc=f"{description} ({cached} cached)",
            unit="run",
            # Named too: TQDM_INITIAL=-5 started the bar at "-5/3", "-167%" (stop 58).
            initial=0,
            # None: only on a terminal. Redirected to a file or a pipe, the bar's rewrites
            # (carriage returns) would be the log's content; its ETA is for a person watching.
            # With stderr closed (2>&-, sys.stderr None) tqdm's first write was an
            # AttributeError that ended the sweep.
            disable=None if progress and sys.stderr is not None else True,
            # Named, not left to tqdm's default: tqdm takes its defaults from TQDM_* variables,
            # and TQDM_FILE=x gave it a text for a file, "internal error (AttributeError):
            # 'str' object has no attribute 'write'" (campaign 46, issue 32).
            file=sys.stderr,
            # Every finished run is shown (within tqdm's 0.1 s): the bar has no monitor thread
            # (_ProgressBar) to show what a growing miniters would hold back.
            miniters=1,
            # A terminal that reports no size (0 x 0: a serial console, a pseudo-terminal
            # whose size was never set, as `docker exec -t` or `script` may leave it) got a
            # bar 0 columns wide, that is nothing but its last newline (campaign 30, issue
            # 32): there the bar takes 80 columns of 24 rows.
            **({"dynamic_ncols": True} if _stderr_columns() else {"ncols": 80, "nrows": 24}),
        )
        # tqdm times its bar by the wall clock (time.time). Stepped back by an hour mid-sweep
        # (NTP setting a laptop's clock after a resume; a dual-boot machine's hardware clock
        # in local time), the bar stood still for that hour, then read "-59:54<00:00,
        # -0.00run/s"; stepped forward, it said an hour had passed (campaign 39, issue 32).
        # The monotonic clock, as the run's own progress line and max_wall use.
        # Less the time the process was stopped (Ctrl-Z: ccsim.running_clock).
        clock = RunningClock()
        bar._time = clock if not bar.disable and clock.start() else time.monotonic
        bar.start_t = bar.last_print_t = bar._time()

        def finished(k: str, record: dict[str, Any]) -> None:
            partial = _cut_short(record)
            if partial is not None:
                failed(k, partial)
                return
            have[k] = record
            try:
                store.save(k, record)
            except OSError as e:  # a full disk: the record is named, and what is kept said
                raise RecordNotSaved(e, store, len(have) - 1) from e
            bar.update(1)

        def failed(k: str, err: BaseException) -> None:
            failures.append((todo[k], err))
            bar.update(1)

        try:
            if cluster is not None:
                from ccsim import cluster as dask_cluster

                try:
                    dask_cluster.run_on_cluster(
                        todo,
                        cluster,
                        _execute_one,
                        finished,
                        failed,
                        lambda e: isinstance(e, _core.Error),
                    )
                except dask_cluster.SchedulerLost as e:
                    raise dask_cluster.ClusterError(
                        f"{e}: {len(have)} of {len(set(keys))} runs are finished and kept in "
                        f"{store.directory}, and the same command resumes from them"
                    ) from e
            else:
                # No more processes than runs: a pool forks all its workers at once, and
                # `--workers 1000` for a sweep of two runs took 8.2 s instead of 0.9 s
                # (campaign 20, issue 32).
                wanted = workers or _usable_cpus()
                _execute_local(todo, store, max(1, min(wanted, len(todo))), finished, failed)
        finally:
            bar.close()
            clock.stop()
    if failures:
        raise SweepError(failures)
    records = []
    for k, r in zip(keys, runs):
        # A copy per run: runs that share a key (the same point in two figures) get their own
        # tags.
        rec = dict(have[k])
        rec["tags"] = dict(r.tags)
        rec["key"] = k
        records.append(rec)
    return SweepReport(total=len(runs), cached=cached, executed=len(todo), records=records)


def _usable_cpus() -> int:
    """The CPUs this process may run on: the default number of local workers. Not
    ``os.cpu_count()``, the machine's: under ``taskset -c 0``, a batch scheduler's CPU set
    (Slurm's cgroup cpuset on a shared node) or ``docker run --cpuset-cpus``, a sweep started
    one worker per CPU of the machine on the few it was given, two on one CPU of this 2-CPU
    machine, each run taking twice its time (campaign 39, issue 32). Python 3.13's
    ``os.process_cpu_count()`` is this; ``os.sched_getaffinity`` is Linux's (and some other
    Unixes'), and ``os.cpu_count()`` may be None where the system does not say."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _check_execute(runs: Any, store: Any, workers: Any, progress: Any, description: Any,
                   cluster: Any) -> list[RunSpec]:  # fmt: skip
    """:func:`execute`'s arguments, or an error naming the one that is wrong: a store that is
    not a Store was "'str' object has no attribute 'load_valid'", ``cluster=True`` was taken
    as an address and tried (the API contract test, issue 32)."""
    runs = _sequence("runs", runs)
    for i, r in enumerate(runs):
        if not isinstance(r, RunSpec):
            from ccsim.result import reloaded

            stale = reloaded(f"runs[{i}]", r, RunSpec)
            if stale is not None:
                raise TypeError(stale)
            raise TypeError(f"runs: expected RunSpecs (plan_grid's), not {type(r).__name__} {r!r}")
        # A RunSpec made by hand, its seed from hash() (negative half the time): the store key
        # failed with "OverflowError: can't convert negative int to unsigned", naming nothing
        # (campaign 38, issue 32).
        problem = seed_problem(r.seed)
        if problem is not None:
            raise ValueError(f"runs[{i}].seed: {problem}")
    if not isinstance(store, Store):
        from ccsim.result import reloaded

        stale = reloaded("store", store, Store)
        if stale is not None:
            raise TypeError(stale)
        raise TypeError(f"store: expected a Store, not {type(store).__name__} {store!r}")
    if workers is not None:
        if isinstance(workers, bool) or not isinstance(workers, int):
            raise TypeError(f"workers: expected a whole number or None, not "
                            f"{type(workers).__name__} {workers!r}")  # fmt: skip
        if not 1 <= workers <= MAX_WORKERS:
            raise ValueError(f"workers: {int_text(workers)}; it must be from 1 to {MAX_WORKERS} "
                             "(None: one per core)")  # fmt: skip
    if not isinstance(progress, bool):
        raise TypeError(f"progress: expected True or False, not {type(progress).__name__} "
                        f"{progress!r}")  # fmt: skip
    _text("description", description)
    if cluster is not None and not isinstance(cluster, str) and not hasattr(cluster, "submit"):
        raise TypeError(f"cluster: expected a Dask scheduler's address (str) or a distributed."
                        f"Client, not {type(cluster).__name__} {cluster!r}")  # fmt: skip
    return runs


#: How often the wait for runs checks that the pool's own thread is alive, seconds.
_POOL_POLL_S = 1.0


@contextlib.contextmanager
def _pool_thread_deaths() -> Iterator[list[BaseException]]:
    """The errors that end a process pool's manager thread while the block runs, kept for the
    sweep to raise rather than printed as a traceback by ``threading.excepthook``; other
    threads' errors are left to the hook there was."""
    died: list[BaseException] = []
    previous = threading.excepthook

    def heard(args: Any) -> None:
        if type(args.thread).__name__ == "_ExecutorManagerThread" and args.exc_value is not None:
            died.append(args.exc_value)
        else:
            previous(args)

    threading.excepthook = heard
    try:
        yield died
    finally:
        threading.excepthook = previous


def _execute_local(
    todo: dict[str, RunSpec],
    store: Store,
    workers: int,
    finished: Callable[[str, dict[str, Any]], None],
    failed: Callable[[str, BaseException], None],
) -> None:
    """Run ``todo`` in a pool of ``workers`` processes, reporting each run as it ends."""
    refused = limits.check_pool(workers)
    if refused is not None:
        raise ValueError(refused)
    with limits.owners_umask():
        # The pool's queues' semaphores, opened again by name in each worker under spawn and
        # forkserver: made under a umask of 0777 with mode 000, every worker died on
        # "Permission denied" tracebacks (campaign 41, issue 32). The workers and the
        # records keep the user's umask.
        pool = ProcessPoolExecutor(
            max_workers=workers, initializer=worker.start, initargs=(os.getpid(),)
        )
    with pool, _pool_thread_deaths() as died:
        pending: dict[Future[dict[str, Any]], str] = {}
        queue = iter(todo.items())
        try:
            # Keep a bounded number in flight, so a huge sweep does not pickle everything
            # at once and an interruption loses at most `2 * workers` runs in progress.
            for k, r in itertools.islice(queue, 2 * workers):
                pending[_submit(pool, r)] = k
            while pending:
                done, _ = wait(pending, timeout=_POOL_POLL_S, return_when=FIRST_COMPLETED)
                if died:
                    # The pool's own thread ended on an error (its queue's feeder thread
                    # refused by ulimit -u): no future will ever finish (campaign 33).
                    _stop_workers(pool)
                    why = limits.exhausted(died[0]) or f"the process pool failed ({died[0]})"
                    raise SweepInterrupted(len(store), why) from died[0]
                if not done and _worker_ended(pool):
                    # A worker killed while it sent its result (the out-of-memory killer, a
                    # run's record of megabytes) left half a message in the result pipe: the
                    # pool's thread waits for the rest for ever and never sees the death, so
                    # no future ends. The sweep hung with its finished runs stored (1 kill in
                    # 3 under forkserver; campaign 40, issue 32). Workers live as long as the
                    # pool, so one that has ended is a death, whoever sees it first; its code
                    # is read once the workers are stopped and the pool's thread has ended.
                    workers_seen = _workers(pool)
                    _stop_workers(pool)
                    raise SweepInterrupted(len(store), _death(pool, workers_seen))
                for fut in done:
                    k = pending.pop(fut)
                    err = fut.exception()
                    if err is None:
                        finished(k, fut.result())
                    elif isinstance(err, _core.Error):
                        # A run the core rejected: report it, keep going.
                        failed(k, err)
                    elif isinstance(err, BrokenProcessPool):
                        raise SweepInterrupted(len(store), _death(pool)) from err
                    else:
                        raise err
                    nxt = next(queue, None)
                    if nxt is not None:
                        nk, nr = nxt
                        pending[_submit(pool, nr)] = nk
        except BaseException as exc:
            if isinstance(exc, KeyboardInterrupt):
                # Ctrl-C or SIGTERM (the CLI turns both into KeyboardInterrupt): runs in
                # progress are abandoned, and the `with` must not wait for them. Their
                # futures are left for the broken pool to fail: Python 3.11's pool sets an
                # exception on every pending future when it breaks, and one already
                # cancelled made its thread print an InvalidStateError traceback (seen in
                # 1 of several SIGTERM tests on a fresh clone).
                _stop_workers(pool)
            else:
                for fut in pending:
                    fut.cancel()
            if isinstance(exc, BrokenProcessPool):
                # Not only a future's result: `submit` on a pool whose worker died raises
                # it too (seen when a run finished in the same instant as the death).
                raise SweepInterrupted(len(store), _death(pool)) from exc
            met = limits.exhausted(exc)
            if met is not None and not isinstance(exc, MemoryError):
                # The pool could not start a worker or its own thread (ulimit -u or -n met
                # by another program since the check): the workers it did start wait for
                # work, and the interpreter's exit joined them for ever, after "cannot join
                # thread before it is started" (campaign 33, issue 32).
                _stop_workers(pool)
                raise SweepInterrupted(len(store), met) from exc
            raise


def gather(records: Iterable[dict[str, Any]], table: str = "flows") -> pd.DataFrame:
    """One DataFrame of ``table`` rows from every record, with the record's tags, seed and key
    as leading columns.

    Built as plain column lists and turned into one DataFrame at the end: a DataFrame per record
    cost ~4 ms each, 30 s of a 7,000-run reproduction.
    """
    if not isinstance(table, str) or table not in RECORD_TABLES:
        # KeyError: 'x' from the first record before (the API contract test, issue 32)
        raise ValueError(f"table: {table!r} is not a record's table; they are "
                         f"{', '.join(RECORD_TABLES)}")  # fmt: skip
    columns: dict[str, list[Any]] = {}
    rows = 0
    for rec in _sequence("records", records):
        if not isinstance(rec, Mapping) or not isinstance(rec.get(table), Mapping):
            raise TypeError(f"records: expected records as execute() returns them (dicts "
                            f"with a {table!r} table), not {type(rec).__name__}")  # fmt: skip
        tbl = rec[table]
        n = len(next(iter(tbl.values()), ()))
        lead = {**rec.get("tags", {}), "seed": rec["seed"], "run": rec.get("key", "")}
        for name, value in lead.items():
            _column(columns, name, rows).extend([value] * n)
        for name, col in tbl.items():
            _column(columns, name, rows).extend(col)
        rows += n
        for col in columns.values():
            if len(col) < rows:  # a column this record lacks
                col.extend([None] * (rows - len(col)))
    return pd.DataFrame(columns)


def _column(columns: dict[str, list[Any]], name: str, rows: int) -> list[Any]:
    """``columns[name]``, begun with ``rows`` Nones (the records before it lacked it) when
    new. Not ``setdefault(name, [None] * rows)``: that built a list of every row so far for
    each column of each record, used or not (2.8 s of a 12,723-run reproduction's 3 s)."""
    col = columns.get(name)
    if col is None:
        col = columns[name] = [None] * rows
    return col


def _text(name: str, x: Any) -> str:
    """``x``, a str, or TypeError naming ``name``: the helpers below index and split their
    argument, and anything else was an AttributeError or "'int' object is not iterable"
    (the API contract test, issue 32). A lone surrogate is a ValueError naming ``name``: the
    core, which reads these texts, takes only what has a UTF-8 form."""
    if not isinstance(x, str):
        raise TypeError(f"{name}: expected a string, not {type(x).__name__} {x!r}")
    return _unicode(name, x)


def _sequence(name: str, x: Any) -> list[Any]:
    """``x``, a list or tuple (not one string), as a list, or TypeError naming ``name``."""
    if isinstance(x, (str, bytes)) or not isinstance(x, (Sequence, Iterator)):
        raise TypeError(f"{name}: expected a list, not {type(x).__name__} {x!r}")
    return list(x)


def split_path(item: str) -> tuple[str, str] | None:
    """``PATH=VALUE`` split at the first ``=`` outside a quoted key (``nodes."a=b".hook=x``),
    by the core's own splitter (``split_override``), so a sweep cuts a ``--set`` where the
    run will; None when there is none or a quote in PATH is not closed (the core refuses
    such an override when it is applied, naming it)."""
    try:
        return _core.split_override(_text("item", item))
    except ValueError:
        return None


def key_path(path: str) -> tuple[str, ...]:
    r"""The keys of a dotted ``--set`` or ``--param`` path as the core reads them (TOML's own
    parser, ``override_keys`` in crates/ccsim-core/src/scenario/parse/mod.rs): so
    ``duration``, ``"duration"``, ``'duration'``, ``"dur\x61tion"`` and ``links . x . rate``
    name what ``duration`` and ``links.x.rate`` name. A path TOML cannot read is its text (the
    core refuses it, naming it). Python's tomllib read TOML 1.0 where the core reads 1.1, and
    ``--param '"se\x65d"=1,2'`` was swept where ``seed`` is refused (campaign 14, issue 32)."""
    keys = _core.override_keys(_text("path", path))
    return tuple(keys) if keys is not None else (path.strip(),)


def parse_param(spec: str) -> tuple[str, list[str]]:
    """``"links.x.loss.rate=0.01,0.02"`` -> (path, ["0.01", "0.02"]). The values are cut by
    the core (``param_values``) at the commas TOML's lexer calls separators, outside strings of
    all four kinds, arrays, inline tables and comments, so a value may be any ``--set`` value:
    ``links.x.queue={type="red", limit=50},{type="red", limit=100}`` is two queues (campaign
    10, issue 32), and ``x='''it's, mine''',y`` is two values, a multi-line literal string and
    ``y`` (a Python splitter read ``'''`` as three strings and cut it in three). An empty value
    (``0.01,,0.02``) is refused: it was dropped, and the sweep ran one point fewer than
    written."""
    split = split_path(_text("spec", spec))
    if split is None:
        raise ValueError(f'--param "{spec}": expected PATH=V1,V2,...')
    path, values = split
    vals = _core.param_values(values)
    if not path.strip() or not any(vals):
        raise ValueError(f'--param "{spec}": expected PATH=V1,V2,...')
    if _core.override_keys(path) is None:
        # Left to the core, it was refused as each run applied it, naming an option never
        # given: `--param links..rate=1,2` said `--set "links..rate=1"` (campaign 21, issue 32).
        raise ValueError(
            f'--param "{spec}": {path.strip()!r} is not a key path: expected keys joined by '
            "dots, each bare (letters, digits, _ and -) or quoted (\"x/y\", 'a.b')"
        )
    if "" in vals:
        raise ValueError(
            f'--param "{spec}": value {vals.index("") + 1} of {len(vals)} is empty (two '
            "commas in a row, or one at an end)"
        )
    # A value written twice ran once but gave its rows twice, and the count read "2 runs: 1
    # executed, 0 reused" (campaign 13, issue 32): a slip, as a path given twice is.
    # Compared as the core reads them: `1000,1_000` and `cubic,"cubic"` are one value each, and
    # so are `0,0.0` (one number to every key that takes both) and a table in two spellings.
    # By place, not by identity: Python keeps one object for each one-character string, and
    # `5,5` slipped past an `is` test (campaign 17, issue 32).
    read: dict[tuple[bool, Any], int] = {}
    for i, v in enumerate(vals):
        tag = _unordered(v, tag_value(v))
        at = read.setdefault((isinstance(tag, str), tag), i)
        if at != i:
            first = vals[at]
            same = v if first == v else f"{first} (as {v})"
            raise ValueError(f"--param {path.strip()}: the value {same} is given twice; give "
                             "each value once")  # fmt: skip
    return path.strip(), vals


def _unordered(raw: str, tag: Any) -> Any:
    """``tag``, or for a table or an array written as one (``raw`` opens with ``{`` or ``[``)
    its value with each table's keys in order: what the compared values are. A table's tag
    keeps its keys in the order written, and `queue={type="red",limit=50},{limit=50,type="red"}`
    ran one run twice, its rows labelled apart (campaign 22, issue 32). A string that reads
    like a table (`"{a=1}"`) opens with its quote and stays text."""
    if not isinstance(tag, str) or raw.strip()[:1] not in ("{", "["):
        return tag
    from ccsim._tomllib import tomllib

    try:
        value = tomllib.loads(f"x = {tag}")["x"]
    except ValueError:  # what TOML 1.0 reads otherwise than the core: compared as tagged
        return tag

    def ordered(x: Any) -> Any:
        if isinstance(x, dict):
            return ("table", tuple(sorted((k, ordered(v)) for k, v in x.items())))
        if isinstance(x, list):
            return ("array", tuple(ordered(v) for v in x))
        return (type(x).__name__, x)

    return ordered(value)


def tag_value(raw: str) -> Any:
    """How a swept value appears in the gathered table: what the core reads it as
    (``value_tag``), an integer or a float as a number, a string as its text (``'cubic'`` is
    ``cubic``), anything else (a boolean, an array, a table) as written. TOML's integers in
    another base are numbers (``0x10`` is 16: as text beside 20 it made a column of two types
    that flows.parquet could not hold, campaign 15); ``Infinity``, a number to Python's
    ``float``, is text to TOML and to the core."""
    return _core.override_value(_text("raw", raw))


def plan_grid(
    text: str,
    base_overrides: Sequence[str],
    params: Sequence[tuple[str, list[str]]],
    seeds: Sequence[int],
) -> list[RunSpec]:
    """The cartesian product of parameter values and seeds.

    The seed is not a parameter: each run's seed replaces the scenario's, so ``seed=1,2,3``
    (or an override of ``seed``) would give identical rows, all labelled alike.
    """

    # From Python, one string where a list of them goes was a sequence of its characters:
    # `plan_grid(text, "duration=1s", ...)` made the overrides "d", "u", ..., and the values
    # "1s" two runs, "duration=1" and "duration=s"; a seed of -1 or "1" was planned and failed
    # in every run (campaign 13, issue 32).
    base_overrides = _override_strings(base_overrides, "base_overrides")
    _text("text", text)
    params = _sequence("params", params)
    for pair in params:
        if isinstance(pair, (str, bytes)) or not isinstance(pair, Sequence) or len(pair) != 2:
            raise TypeError(f"params: expected (PATH, [V1, V2, ...]) pairs, not "
                            f"{type(pair).__name__} {pair!r}")  # fmt: skip
        _text("params: a path", pair[0])
    seeds = _sequence("seeds", seeds)
    for path, vals in params:
        if isinstance(vals, str) or not all(isinstance(v, str) for v in vals):
            raise TypeError(f"--param {path}: expected a list of values as --set writes them "
                            f"(strings), not {vals!r}")  # fmt: skip

    # Paths compared as the keys they name ('seed', "duration", links . x . rate): the same
    # key spelt two ways slipped past these checks (campaign 9, issue 32).
    def is_seed(path: str) -> bool:
        return key_path(path) == ("seed",)

    if any(is_seed(p) for p, _ in params):
        raise ValueError(
            "--param seed: the seed is not a parameter; use --seeds N (seeds 1..N at every point)"
        )
    if any(is_seed((split_path(o) or (o, ""))[0]) for o in base_overrides):
        raise ValueError("--set seed: a sweep gives each run its seed; use --seeds N instead")
    # The same path twice made one combination of both values: each run was set to the last,
    # and the table's column said the first (campaign 8, issue 32).
    seen: dict[tuple[str, ...], str] = {}
    for path, _ in params:
        keys = key_path(path)
        if keys in seen:
            same = [(p, vals) for p, vals in params if key_path(p) == keys]
            values = ",".join(v for _, vals in same for v in vals)
            spelt = " and ".join(dict.fromkeys(p.strip() for p, _ in same))
            raise ValueError(
                f"--param {spelt}: given twice; give all its values in one "
                f"(--param {seen[keys]}={values})"
            )
        seen[keys] = path.strip()
    # A --set of a swept path was replaced by every swept value without a word (campaign 18,
    # issue 32): one of the two is a slip.
    swept = {key_path(p): p.strip() for p, _ in params}
    for o in base_overrides:
        path = (split_path(o) or (o, ""))[0]
        if key_path(path) in swept:
            raise ValueError(f"--set {path.strip()} and --param {swept[key_path(path)]}: the "
                             "swept values replace the set one in every run; give one of the "
                             "two")  # fmt: skip
    # Each run applies the --set overrides, then the swept ones in order, so a swept table
    # replaces whatever was given inside it before: `--set flows.x.mss=500 --param
    # flows.x={...},{...}` ran every point at the default MSS, and `--param flows.x.mss=500,600
    # --param flows.x={...},{...}` labelled its rows 500 and 600 over runs that were all one
    # (campaign 19, issue 32). Inside a swept table given earlier, a path is applied after it
    # and kept, as in `--set flows.x={...} --param flows.x.mss=500,600`.
    given = [("--set", (split_path(o) or (o, ""))[0].strip()) for o in base_overrides]
    given += [("--param", p.strip()) for p, _ in params]
    for at, (_, table) in enumerate(given):
        if at < len(base_overrides):
            continue
        held = key_path(table)
        for option, inner in given[:at]:
            keys = key_path(inner)
            if len(keys) > len(held) and keys[: len(held)] == held:
                # "Each swept table": said too of values that are not tables (noticed in
                # campaign 22, issue 32); any swept value replaces what was set inside it.
                raise ValueError(f"{option} {inner} and --param {table}: each swept value "
                                 f"replaces {inner}, given before it, in every run; sweep the "
                                 f"path inside it after the table (--param {table}=... "
                                 f"{'--set' if option == '--set' else '--param'} {inner}=...), "
                                 "or put it in the table's values")  # fmt: skip
    check_run_count(math.prod(len(vals) for _, vals in params) * len(seeds), "the sweep")
    for seed in seeds:  # after the count: a range of 10^12 seeds is refused, not walked
        problem = seed_problem(seed)
        if problem is not None:
            raise ValueError(f"seeds: {problem}")
    # One type per parameter's column: a queue limit in packets and one in bytes (50 and
    # "60000B") are both valid, and a column of numbers and text could not be written to
    # flows.parquet after every run had finished (campaign 15, issue 32); such a parameter's
    # values are all tagged as text, as written.
    tag_of: list[dict[str, Any]] = []
    for path, vals in params:
        tagged = {v: tag_value(v) for v in vals}
        if len({isinstance(t, str) for t in tagged.values()}) > 1:
            tagged = {v: t if isinstance(t, str) else v for v, t in tagged.items()}
        # Two values must not share a label: `"1000",1000` (text and a number, which the
        # core may read alike) made two runs whose rows both said 1000 (campaign 19, issue 32).
        shown: dict[Any, str] = {}
        for v, t in tagged.items():
            first = shown.setdefault(t, v)
            if first != v:
                raise ValueError(f"--param {path.strip()}: the values {first} and {v} would "
                                 f"both show as {t} in the tables; give one of them")  # fmt: skip
        tag_of.append(tagged)
    runs = []
    for combo in itertools.product(*[vals for _, vals in params]) if params else [()]:
        ov = tuple(base_overrides) + tuple(f"{p}={v}" for (p, _), v in zip(params, combo))
        tags = tuple((p, t[v]) for (p, _), t, v in zip(params, tag_of, combo))
        for s in seeds:
            runs.append(RunSpec(text, ov, s, tags, swept=len(params)))
    return runs


def t975(df: int) -> float:
    """The 97.5 % quantile of Student's t with ``df`` degrees of freedom (SciPy's; see
    :func:`ccsim.experiment.stats.t975`, where every statistic of the reports lives)."""
    from ccsim.experiment.stats import t975 as quantile

    if isinstance(df, bool) or not isinstance(df, int):
        raise TypeError(f"df: expected a whole number, not {type(df).__name__} {df!r}")
    if df < 1:
        raise ValueError(f"df: {df}; degrees of freedom are at least 1")
    return quantile(df)


def mean_ci(values: Sequence[float]) -> tuple[float, float, int]:
    """Mean, half-width of the 95 % confidence interval (t-based), and n (NaNs dropped); see
    :func:`ccsim.experiment.stats.mean_ci`."""
    from ccsim.experiment.stats import mean_ci as interval

    values = _sequence("values", values)
    for v in values:
        if isinstance(v, bool) or not hasattr(v, "__float__"):
            raise TypeError(f"values: expected numbers, not {type(v).__name__} {v!r}")
    return interval(values)
