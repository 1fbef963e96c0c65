# SPDX-License-Identifier: MIT
"""The signals that stop a command (Ctrl-C's SIGINT, SIGTERM, SIGHUP) and the one place in a
Python process where they must not land: the import system taking or giving back its locks.

ccsim's handlers (the entry point's, :mod:`ccsim.__main__`, then the command's,
``ccsim.cli._signals_interrupt``) turn a stop signal into ``KeyboardInterrupt`` wherever the
main thread is, and the command unwinds and says what it kept. Python runs a handler between
two bytecodes of whatever code is running, and inside ``importlib._bootstrap`` there are such
points between taking a lock and the ``try`` that gives it back::

    def _get_module_lock(name):
        _imp.acquire_lock()  <- the interpreter's import lock, taken
                             <- a KeyboardInterrupt raised here leaves it taken for ever
        try:
            ...
        finally:
            _imp.release_lock()

The lock is re-entrant for the main thread, which goes on as if nothing happened; any other
thread that imports then waits for it for ever. A run imports its table libraries on a thread
of its own while the simulation goes on (``ccsim.cli._importing_table_libraries_meanwhile``),
and a SIGHUP that landed there (2 runs in 154 with the signal 0-0.3 s into ``ccsim run`` on a
loaded machine) hung the command: its main thread waiting to join that thread, that thread
waiting for the lock (the CLI states matrix in CI, stop 57, issue 32). Inside IPython or
Jupyter (``%run -m ccsim``) the held lock outlives the command: every later import on another
thread of the kernel hangs. A module's own lock (``_ModuleLock.acquire`` and the context
manager around it) has the same kind of instant.

So a stop signal whose nearest import-system frame is one of the functions that take or give
back these locks is not raised there: it is sent again :data:`SIGNAL_AGAIN_S` later, by when
the lock is held inside its ``try`` (or given back). Anywhere else in an import (finding a
module, loading it, a module's own code) the import's ``try`` blocks give every lock back as
the interrupt passes, and the signal is raised at once, as before: putting off every signal
that found the command importing made a Ctrl-C in the first half-second of a short command
land after its end (stop 57).
"""

from __future__ import annotations

import os
import select
import signal
import sys
import threading
from types import FrameType

#: The signals that stop a command as Ctrl-C does: SIGHUP too, since closing the terminal
#: (or ``kill -HUP``) otherwise killed ccsim without its clean-up, leaving a hidden partial
#: output folder behind and a bench case running (campaign 7, issue 32).
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

#: How long after a stop signal was put off (inside the import system, or lost in a
#: finalizer, see ccsim.cli) it is sent again.
SIGNAL_AGAIN_S = 0.05

#: The import system's modules, by the names their code runs under: frozen into the
#: interpreter (CPython 3.11 and later) or read from importlib's folder (``-X
#: frozen_modules=off``, a debug build).
_IMPORT_SYSTEM = frozenset(
    {"importlib._bootstrap", "importlib._bootstrap_external", "_frozen_importlib",
     "_frozen_importlib_external"}
)  # fmt: skip

#: Its functions that take or give back the import lock or a module's lock (CPython 3.9-3.13:
#: ``_get_module_lock`` and its weakref callback ``cb``, ``_lock_unlock_module``,
#: ``_ModuleLock``'s and ``_DummyModuleLock``'s ``acquire``/``release``, the context managers
#: ``_ModuleLockManager``, ``_ImportLockContext`` and 3.12's ``_BlockingOnManager``).
_LOCKING = frozenset(
    {"_get_module_lock", "cb", "_lock_unlock_module", "acquire", "release", "has_deadlock",
     "__enter__", "__exit__"}
)  # fmt: skip


def inside_import_locking(frame: FrameType | None) -> bool:
    """Whether a signal handled in ``frame`` lands where the import system takes or gives back
    a lock: the nearest frame of importlib's (``frame`` or one it was called from, before any
    module body, ``<module>``) is one of its locking functions. A function importlib calls
    there (a profiler) counts as that function; a finder, a loader and a module being imported
    do not."""
    while frame is not None:
        if frame.f_globals.get("__name__") in _IMPORT_SYSTEM:
            return frame.f_code.co_name in _LOCKING and not _waiting_for_another_import(frame)
        if frame.f_code.co_name == "<module>":
            return False
        frame = frame.f_back
    return False


def _waiting_for_another_import(frame: FrameType) -> bool:
    """Whether ``frame`` is a module lock's ``acquire`` waiting, in ``self.wakeup.acquire()``,
    for another thread's import of that module to end. Raised there, the interrupt leaves the
    lock as a release expects it (the waiter counted, its wake-up lock held, both given back
    by the owner's release), and it must be: that wait lasts as long as the other import, and
    a package whose import hung (or slept for seconds) on the thread importing the table
    libraries held a Ctrl-C, SIGTERM or SIGHUP put off again and again until it ended, for
    ever if it never did (campaign 51, issue 32)."""
    if frame.f_code.co_name != "acquire":
        return False
    # dis as loaded, never imported here: a handler's import, landing in a module lock's
    # acquire, took that lock's place in importlib's _blocking_on (a dict by thread in CPython
    # 3.11) and removed it, and the waiting acquire's own `del` then failed: two SIGINTs to
    # `ccsim report` in its first second ended it with status 1 and a traceback, "KeyError:
    # 140568745..." (campaign 63b, issue 32). ccsim.__main__ loads dis once its handlers are
    # set; until it is loaded whole, such a wait is taken for none (the signal is put off).
    dis = sys.modules.get("dis")
    if dis is None or getattr(dis.__spec__, "_initializing", True):
        return False
    loads: list[str] = []
    for instruction in dis.get_instructions(frame.f_code):
        if instruction.offset > frame.f_lasti:
            return False
        if instruction.opname in ("LOAD_ATTR", "LOAD_METHOD"):
            loads = [*loads[-1:], str(instruction.argval)]
        if instruction.offset == frame.f_lasti:
            # The call of self.wakeup.acquire() with no argument: the blocking wait (the
            # same lock's acquire(False) before it is the waiter being counted).
            return (instruction.opname == "CALL" and instruction.arg == 0
                    and loads == ["wakeup", "acquire"])  # fmt: skip
    return False


def raised_by_a_stop(error: BaseException) -> bool:
    """Whether ``error`` is a stop signal's KeyboardInterrupt, or an error Python raised around
    one (through ``__cause__``). CPython 3.11 wraps any exception raised inside a descriptor's
    ``__set_name__`` as a class is made in ``RuntimeError("Error calling __set_name__ on
    'cached_property' instance ...")``: a Ctrl-C or SIGHUP landing there, as ``ipaddress``
    defines its classes during ccsim's import, ended the command with that traceback, status 1
    (or 120, its stderr gone) instead of its interruption's line (the CLI states matrix's
    state, ~1 run in 300; stop 57, issue 32)."""
    seen: set[int] = set()
    cause: BaseException | None = error
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, KeyboardInterrupt):
            return True
        seen.add(id(cause))
        cause = cause.__cause__
    return False


def import_failed_by_a_stop(error: BaseException) -> bool:
    """Whether ``error`` is an ImportError, or an error raised from or while handling one:
    the shape a stop signal's KeyboardInterrupt takes when it lands in a module that C code
    imports. numpy's and pandas' C extensions import datetime's C API as they load, through
    CPython's ``PyCapsule_Import``, which replaces whatever the import raised with
    ``ImportError('PyCapsule_Import could not import module "datetime"')``, the
    KeyboardInterrupt cleared, not chained: a Ctrl-C or SIGHUP landing there ended the command
    with "ccsim needs numpy, which is installed but cannot be imported (...): install ccsim
    again", status 1 (the CLI states matrix, seed 6201, 1 case in 300; campaign 62b, issue 32).
    Only asked once a stop signal was handled, which the import's failure follows."""
    seen: set[int] = set()
    cause: BaseException | None = error
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, ImportError):
            return True
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return False


#: How long a command that is stopping waits for its terminal (or pipe) to take a line.
STOPPING_WRITE_WAIT_S = 1.0


def takes_a_line_soon(stream: object, wait: float = STOPPING_WRITE_WAIT_S) -> bool:
    """Whether ``stream`` (stderr, a progress bar's file) can be written within ``wait``
    seconds, or cannot be asked (no descriptor: a caller's StringIO). A command stopping writes
    its bar's last state and its interruption line; to a terminal no one reads (an ssh session
    whose network stalled, a terminal emulator hung: its buffer full) each write waited for
    ever, and the first stop signal's clean-up with it, every later SIGINT or SIGTERM ignored as
    the command was already stopping: only SIGKILL ended it (campaign 62b, issue 32). Such a
    line is left out; the status still says how the command ended."""
    try:
        fd = stream.fileno()  # type: ignore[attr-defined]
        return bool(select.select([], [fd], [], wait)[1])
    except (AttributeError, OSError, ValueError):
        return True


#: The signals :func:`send_again` will send, not sent yet (their timers), under the lock.
_resends: set[threading.Timer] = set()
_resends_lock = threading.Lock()


def send_again(signum: int) -> None:
    """Send this process ``signum`` again :data:`SIGNAL_AGAIN_S` from now, from a thread (a
    daemon: it never holds the process's exit), unless :func:`resends_dropped` is called
    first."""

    def again() -> None:
        with _resends_lock:
            if timer not in _resends:
                return
            _resends.discard(timer)
            os.kill(os.getpid(), signum)

    timer = threading.Timer(SIGNAL_AGAIN_S, again)
    timer.daemon = True
    with _resends_lock:
        _resends.add(timer)
    timer.start()


def resends_dropped() -> None:
    """Drop the signals :func:`send_again` has not sent yet. Called as a command run inside
    another program's Python (IPython's ``%run -m ccsim``, ``runpy``) hands the stop signals
    back to their owner: a signal put off out of the import lock near the command's end was
    sent again after that, to the host's own handler, and a ``python -c`` host died of the
    SIGHUP the command had received (1 run of ``test_interrupts`` in a loaded CI run, stop 61).
    The command has ended, its output written: a signal it received is, as a late one, not
    acted on. One sent already was handled by ccsim's handler, which the caller still has in
    place (Python runs it at the main thread's next instruction)."""
    with _resends_lock:
        for timer in _resends:
            timer.cancel()
        _resends.clear()


def import_whole(names: tuple[str, ...]) -> None:
    """Import the modules ``names`` not yet loaded with the stop signals noted, not acted on,
    and act on the first one noted once they are loaded.

    For the Python API, whose process outlives an interruption: a notebook's interrupt that
    landed while ``ccsim.run`` first loaded numpy (a tenth of a second) left numpy half made
    for the kernel's life: ``numpy._core.fromnumeric`` kept the half-made ``numpy`` it had
    imported, and the next reproduction failed in pandas with "AttributeError: module 'numpy'
    has no attribute 'maximum'" (campaign 61c, issue 32). Python runs handlers in the main
    thread only: in another thread nothing is put off. A signal the process ignores stays
    ignored."""
    import importlib
    import sys

    missing = [name for name in names if name not in sys.modules]
    if not missing:
        return
    if threading.current_thread() is not threading.main_thread():
        for name in missing:
            importlib.import_module(name)
        return
    came: list[int] = []
    swapped = {}
    for s in STOP_SIGNALS:
        handler = signal.getsignal(s)
        if handler not in (signal.SIG_IGN, signal.SIG_DFL, None):
            swapped[s] = handler
            signal.signal(s, lambda n, _frame: came.append(n))
    try:
        for name in missing:
            importlib.import_module(name)
    finally:
        for s, handler in swapped.items():
            signal.signal(s, handler)
        if came:  # the first: a second would only repeat it
            signal.raise_signal(came[0])
