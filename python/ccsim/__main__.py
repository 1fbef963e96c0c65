# SPDX-License-Identifier: MIT
"""The ``ccsim`` command's entry point (``python -m ccsim`` too): the stop signals handled
before anything heavy is imported.

Loading the command (the core, the result tables, argparse: ~0.1 s, more on a busy machine) is
the first thing a user's Ctrl-C can land in. With Python's own handler it raised
KeyboardInterrupt inside whatever module was being imported, and the user saw that traceback
instead of the line every later Ctrl-C prints (campaign 9, issue 32); SIGTERM and SIGHUP
killed the process without a word. So this module imports nothing the interpreter has not
loaded before it runs (``sys``, ``os`` and ``_signal``, the C module under :mod:`signal`;
``import ccsim`` is lazy, PEP 562), and :func:`main` first sets a handler that notes a stop
signal, then imports :mod:`signal`, :mod:`ccsim.stop_signals` and :mod:`warnings` and sets the
handler that acts on one, and only then imports :mod:`ccsim.cli`, whose
:func:`ccsim.cli.main` sets its own handlers for the command's run. A signal before that is
reported as cli's are: ``ccsim: interrupted by SIGINT; nothing was written``, status 128 + the
signal's number.
"""

from __future__ import annotations

import os
import sys

try:  # the C module, loaded with the interpreter: signal.py makes enums (a few ms)
    import _signal
except ImportError:  # a Python without it (not CPython)
    import signal as _signal  # type: ignore[no-redef]

TYPE_CHECKING = False  # not typing's: a large import, before the handlers are set
if TYPE_CHECKING:
    from types import FrameType

#: The signals that stop a command (ccsim.stop_signals.STOP_SIGNALS, as numbers): SIGINT,
#: SIGTERM and SIGHUP where there is one.
STOP_SIGNALS = tuple(
    getattr(_signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(_signal, name)
)


def main() -> int:
    # First of all, before any module is imported (campaign 64b, issue 32): a handler that
    # notes a stop signal and raises nothing, so that it cannot land inside the import
    # system's locks either. signal, ccsim.stop_signals (threading, select) and warnings,
    # imported before the handlers were set, were ~8 ms of the command's start (a quarter of
    # the tracebacks a Ctrl-C 0-0.4 s after exec gave on a loaded machine).
    noted: list[int] = []

    def note(signum: int, _frame: FrameType | None) -> None:
        noted.append(signum)

    # What a Python that runs the command inside itself had before (IPython's and Jupyter's
    # `%run -m ccsim ...`, a script's runpy.run_module("ccsim")): it is given back at the end.
    previous = {s: _signal.getsignal(s) for s in STOP_SIGNALS}
    # A stop signal ignored when ccsim started stays ignored: `nohup ccsim reproduce ...`
    # sets SIGHUP to SIG_IGN so that the run outlives the terminal, and a shell script's
    # `ccsim ... &` starts it with SIGINT ignored (POSIX, "Signal Actions": ignored signals
    # are inherited across exec; Python's own SIGINT handler is not installed then either).
    # Setting a handler regardless stopped a nohup'd run when its terminal closed (campaign
    # 12, issue 32).
    handled = [s for s, handler in previous.items() if handler != _signal.SIG_IGN]
    for s in handled:
        _signal.signal(s, note)
    import signal
    import warnings

    from ccsim.stop_signals import (
        inside_import_locking,
        raised_by_a_stop,
        resends_dropped,
        send_again,
    )

    received: list[int] = []
    done = False
    # The command's status, put here by ccsim.cli as it ends while its own handlers hold; a
    # signal after that is late, however soon: the output is whole (stop 54, issue 32).
    ended: list[int] = []
    shown = warnings.showwarning

    def interrupt(signum: int, frame: FrameType | None) -> None:
        # A second signal while the first unwinds the import: already stopping. One after
        # the command returned: its output is written, and its status is the one to exit with.
        if received or done or ended:
            return
        if inside_import_locking(frame):
            # Raised there, it would leave the import lock held: inside IPython (`%run -m
            # ccsim`) every later import on another thread of the kernel hung (stop 57).
            send_again(signum)
            return
        received.append(signum)
        raise KeyboardInterrupt

    def unraisable(info: object) -> None:
        # The KeyboardInterrupt raised inside a finalizer (an import lock's weakref callback)
        # cannot get out of it, and the import went on, deaf. Sent again a moment later from
        # another thread, so that it is raised where it can stop the command, as cli does.
        if received and isinstance(getattr(info, "exc_value", None), ResourceWarning):
            return  # a file the interrupt left open, closed by its finalizer (as cli's hook)
        if not (isinstance(getattr(info, "exc_value", None), KeyboardInterrupt) and received):
            sys.__unraisablehook__(info)  # type: ignore[arg-type]
            return
        send_again(received.pop())

    for s in handled:
        signal.signal(s, interrupt)
    sys.unraisablehook = unraisable
    try:
        if noted:  # while the handlers above were being loaded
            received.append(noted[0])
            return _interrupted_at_start(noted[0])
        # Read by the handlers (stop_signals._waiting_for_another_import), which import
        # nothing themselves; loaded now, not with stop_signals, so that Python's own
        # handler, before ours, holds no longer.
        import dis  # noqa: F401

        try:
            from ccsim.cli import main as cli_main
        except ImportError as e:
            if e.name != "ccsim._core":
                raise
            return _no_core(e)

        # cli's own handlers (and its unraisable hook) replace these while the command runs;
        # a signal while its arguments are parsed (nothing written yet) still ends here.
        try:
            status = cli_main(ended=ended)
        except SystemExit:
            # argparse ends --version and --help by SystemExit, their output written: as
            # much the command's end as a return. Left to the handler above, a signal at the
            # exit printed "Exception ignored in atexit callback" and a KeyboardInterrupt
            # traceback, or killed the process (status -2, -15: campaign 45a, issue 32).
            done = True
            _late_signals_ignored()
            raise
        done = True
        # The command has ended; what is left is the interpreter's exit, where Python puts
        # the default action back and a late signal killed the process, its status lost.
        _late_signals_ignored()
        return status
    except (KeyboardInterrupt, RuntimeError) as e:
        # Not one of ours (raised by the command itself): left as it is. A RuntimeError Python
        # raised around ours (stop_signals.raised_by_a_stop) is ours.
        if not received or not raised_by_a_stop(e):
            raise
        return _interrupted_at_start(received[0])
    finally:
        sys.unraisablehook = sys.__unraisablehook__
        _streams_emptied()
        resends_dropped()
        _unhandled_interrupt_forgotten()
        if not _owns_the_process():
            # Run inside another program's Python, the command's end is not the process's
            # exit: left ignored, Ctrl-C stopped nothing more in that IPython session, and
            # every later warning of the session (pandas' own) read "ccsim: warning: ..."
            # (campaign 38, issue 32).
            for s, handler in previous.items():
                signal.signal(s, signal.SIG_DFL if handler is None else handler)
            warnings.showwarning = shown


def _late_signals_ignored() -> None:
    """Ignore the stop signals from the command's end to the process's exit."""
    for s in STOP_SIGNALS:
        _signal.signal(s, _signal.SIG_IGN)


def _unhandled_interrupt_forgotten() -> None:
    """Clear the interpreter's note that a KeyboardInterrupt went unhandled, which the exit
    turns into a death by SIGINT. CPython (3.11 and later) takes that note whenever a
    KeyboardInterrupt leaves code run from a string (``exec(str)``, which dataclasses and
    namedtuples use to make their methods) even when the code that called it handled it, and
    clears it only at the next such run. So a stop signal landing while a module defining a
    dataclass was imported was handled ("ccsim: interrupted by SIGHUP; ...") and the process
    then died by SIGINT, status 130 whatever the signal (the CLI states matrix, 3 in 34 at one
    moment of `reproduce --list`; stop 54, issue 32). The stop signals are ignored here (or
    handed back to their owner), so no other interruption can come from this process's code."""
    exec("None")  # a run from a string that ends normally clears the note


def _owns_the_process() -> bool:
    """Whether this process was started as the command (``ccsim ARGS``, ``python -m ccsim
    ARGS``), which ends when it does: its original command line ends with the command's
    arguments after the program's own name. IPython's ``%run -m ccsim ARGS`` and
    ``runpy.run_module`` set ``sys.argv`` alone, not ``sys.orig_argv`` (Python 3.10)."""
    given = getattr(sys, "orig_argv", None)
    if given is None:  # Python 3.9: no way to tell; the command's own process, as before
        return True
    args = sys.argv[1:]
    if len(given) < len(args) + 1 or given[len(given) - len(args) :] != args:
        return False
    program = given[len(given) - len(args) - 1]
    # The entry script under another name is the command all the same: a link to it
    # (`ln -s ~/venv/bin/ccsim ~/bin/ccsim-dev`) or pipx's `--suffix` (ccsim@old, a second
    # version beside the first). Python ran the file sys.argv[0] names; by its name alone
    # such a command was not its process's owner, and its stop signals went back to
    # Python's defaults before the exit, where a late one killed the process or printed a
    # KeyboardInterrupt traceback (campaign 61, issue 32).
    if program == sys.argv[0] and os.path.isfile(program):
        return True
    return os.path.basename(program).lower() in ("ccsim", "ccsim.exe", "-mccsim")  # -m too


def _streams_emptied() -> None:
    """Flush stdout and stderr, or point each at /dev/null when it cannot take what is left.
    A line that could not be written (``2>/dev/full``; a terminal window closed, EIO) stays in
    the stream's buffer: the interpreter's own flush at exit failed again, printed "Exception
    ignored" and exited 120, so that ``ccsim nosuch 2>/dev/full`` ended 120, not 1, and so did
    a run's error (a path its ASCII stdout cannot show) with its table buffered for a
    ``>/dev/full`` (campaign 30, issue 32; only without PYTHONUNBUFFERED, under which a write
    fails at once and leaves nothing). The error was said, or there is no one to tell: the
    status says how the command ended."""
    for stream in (sys.stdout, sys.stderr):
        if stream is None:  # closed (``>&-``, ``2>&-``)
            continue
        try:
            stream.flush()
        except (OSError, ValueError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            try:
                os.dup2(devnull, stream.fileno())
            except (OSError, ValueError):
                pass
            finally:
                os.close(devnull)


def _no_core(error: ImportError) -> int:
    """The line for a ccsim package without its core: a source folder (a clone, never built)
    ahead of the installed ccsim on the module path (PYTHONPATH=python, ``python -m ccsim``
    from inside python/), or one whose core is another version's. Every command ended in a
    traceback, "No module named 'ccsim._core'" (campaign 39, issue 32)."""
    here = os.path.dirname(os.path.abspath(__file__))
    if isinstance(error, ModuleNotFoundError):
        what = "has no built core (ccsim._core)"
    else:  # a name the Python code needs that this core has not
        what = f"has a core of another version ({error})"
    line = (
        f"ccsim: error: the ccsim package in {here} {what}: a source folder ahead of the "
        "installed ccsim on the module path (PYTHONPATH, the working folder)? Build it "
        "(pip install -e . in its repository) or take it off the path\n"
    )
    if sys.stderr is not None:
        try:
            sys.stderr.write(line)
            sys.stderr.flush()
        except OSError:
            pass
    return 1


def _interrupted_at_start(signum: int) -> int:
    """The line and status of ``ccsim.cli``'s interruptions, for a stop before it could run."""
    import signal

    from ccsim.stop_signals import takes_a_line_soon

    # Ignored from here to the exit, as cli does once stopping: a late signal must not kill
    # the process after its message, with the signal's status instead of the command's.
    for s in STOP_SIGNALS:
        signal.signal(s, signal.SIG_IGN)
    line = f"ccsim: interrupted by {signal.Signals(signum).name}; nothing was written\n"
    # Closed (``2>&-``), or a terminal no one reads: the status still says it.
    if sys.stderr is not None and takes_a_line_soon(sys.stderr):
        try:
            sys.stderr.write(line)
            sys.stderr.flush()
        except OSError:  # a terminal that hung up: no one to tell
            pass
    return 128 + int(signum)


if __name__ == "__main__":
    sys.exit(main())
