# SPDX-License-Identifier: MIT
"""The signals that stop a command (Ctrl-C's SIGINT, SIGTERM, SIGHUP) and the one place in a
Python process where they must not land: the import system's own code.

ccsim's handlers (the entry point's, :mod:`ccsim.__main__`, then the command's,
``ccsim.cli._signals_interrupt``) turn a stop signal into ``KeyboardInterrupt`` wherever the
main thread is, and the command unwinds and says what it kept. Python runs a handler between
two bytecodes of whatever code is running, and inside ``importlib._bootstrap`` there are such
points between taking a lock and the ``try`` that gives it back::

    _imp.acquire_lock()      <- the interpreter's import lock (or a module's lock), taken
                             <- a KeyboardInterrupt raised here leaves it taken for ever
    try:
        ...
    finally:
        _imp.release_lock()

The lock is re-entrant for the main thread, which goes on as if nothing happened; any other
thread that imports then waits for it for ever. A run imports its table libraries on a thread
of its own while the simulation goes on (``ccsim.cli._importing_table_libraries_meanwhile``),
and a SIGHUP that landed there (1 run in ~70 with the signal 0.2 s into ``ccsim run`` on a
loaded machine) hung the command: its main thread waiting to join that thread, that thread
waiting for the lock (the CLI states matrix in CI, stop 57, issue 32). Inside IPython or
Jupyter (``%run -m ccsim``) the held lock outlives the command: every later import on another
thread of the kernel hangs.

So a stop signal that finds the main thread inside the import system's code is not raised
there: it is sent again :data:`SIGNAL_AGAIN_S` later, when the import has (usually) moved on;
found there again, it waits again. A module being imported runs its own code (its
``<module>`` frame and what that calls) outside the import system, where the import's own
``try`` blocks release every lock as the interrupt passes, so a long import is still stopped
at once.
"""

from __future__ import annotations

import os
import signal
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
#: frozen_modules=off``, a debug build), and zipimport, which loads from a zip file.
_IMPORT_SYSTEM = frozenset(
    {
        "importlib._bootstrap",
        "importlib._bootstrap_external",
        "_frozen_importlib",
        "_frozen_importlib_external",
        "zipimport",
    }
)


def inside_import_system(frame: FrameType | None) -> bool:
    """Whether a signal handled in ``frame`` lands in the import system's own code: the frame
    or one it was called from is importlib's, before any module body (``<module>``) is met. A
    function a finder or a profiler runs for importlib counts as importlib's; a module being
    imported, and all it calls, does not."""
    while frame is not None:
        if frame.f_globals.get("__name__") in _IMPORT_SYSTEM:
            return True
        if frame.f_code.co_name == "<module>":
            return False
        frame = frame.f_back
    return False


def send_again(signum: int) -> None:
    """Send this process ``signum`` again :data:`SIGNAL_AGAIN_S` from now, from a thread (a
    daemon: it never holds the process's exit)."""
    again = threading.Timer(SIGNAL_AGAIN_S, os.kill, args=(os.getpid(), signum))
    again.daemon = True
    again.start()
