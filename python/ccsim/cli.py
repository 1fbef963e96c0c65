# SPDX-License-Identifier: MIT
"""The ``ccsim`` command.

    ccsim run FILE --out DIR [--seed N] [--set PATH=VALUE ...]
    ccsim validate FILE [--set PATH=VALUE ...]
    ccsim bench [--repeat N] [--only P0,P1,P2,P002,F1000,FT8,...] [--scale] [--plot PNG]
    ccsim sweep FILE --param PATH=V1,V2,... [--param ...] --seeds N --out DIR [--workers N]
                     [--executor dask --scheduler tcp://HOST:PORT]
    ccsim reproduce EXPERIMENT [--quick] [--out DIR] [--workers N] [--seeds N]
                     [--executor dask --scheduler tcp://HOST:PORT]
    ccsim reproduce --list
    ccsim report [--results DIR] [--out DIR]
    ccsim explore [--port N] [--host 127.0.0.1] [--results DIR]
    ccsim --version

Errors print one line, ``ccsim: error: <message>``, and exit with status 1, usage errors
(a missing or malformed option) included, as README.md promises.

Ctrl-C (SIGINT), SIGTERM or SIGHUP (the terminal closed) stops any command within a second:
it prints one line, ``ccsim: interrupted by SIGINT; <what was kept>``, and exits with status
128 + the signal's number (130, 143, 129). A single run is stopped inside the core and nothing
is written; a sweep or a reproduction keeps every finished run, and the same command resumes
from them. A second signal
while the first is being handled is ignored, so it cannot interrupt the clean-up.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import errno
import logging
import math
import os
import re
import shutil
import signal
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

from ccsim import limits
from ccsim.errors import Error, ScenarioError
from ccsim.result import TABLES, naming_the_file
from ccsim.scenario import (
    MAX_RUNS,
    MAX_WORKERS,
    NotAFile,
    Scenario,
    check_regular,
    not_utf8_said,
    read_text,
    run,
    seed_problem,
)
from ccsim.scenario import not_utf8 as _not_utf8
from ccsim.staging import (
    dangling,
    distribution_left,
    failure_text,
    file_not_as_installed,
    kept_runs,
    not_a_folder,
    optional_package_failing,
    os_error_text,
    package_changed,
    package_of_file,
    raised_importing,
    refuse_a_site,
    reinstall_cure,
    reproduction_around,
    reproduction_of,
    shadow_cure,
    shadow_words,
    shadowing_file,
    shown_path,
    staged_output,
)
from ccsim.stop_signals import (
    STOP_SIGNALS,
    import_failed_by_a_stop,
    inside_import_locking,
    raised_by_a_stop,
    send_again,
    takes_a_line_soon,
)

if TYPE_CHECKING:
    from ccsim.result import Result

# Nothing imported here may import pandas, numpy or pyarrow: `ccsim --help` and `ccsim validate`
# need none of them, and loading them is most of a process's start-up (issue 11). The commands
# that need them import them when they run (Result's methods, ccsim.sweep, ccsim.experiment).


def _fmt(x: float, digits: int = 3) -> str:
    if isinstance(x, float) and math.isnan(x):
        return "-"
    return f"{x:.{digits}f}"


def _by_utilization(util: Any) -> list[int]:
    """Row order of ``DataFrame.sort_values("utilization", ascending=False)`` (pandas'
    ``nargsort``: quicksort of the reversed values, reversed again; NaN last), so the printed
    table is the same as when it was sorted with pandas."""
    import numpy as np

    items = np.asarray(util, dtype=np.float64)
    idx = np.arange(len(items))
    nan = np.isnan(items)
    values, positions = items[~nan][::-1], idx[~nan][::-1]
    order = positions[values.argsort(kind="quicksort")][::-1]
    return [int(i) for i in order] + [int(i) for i in idx[nan]]


def summary_text(res: Result) -> str:
    """The table `ccsim run` prints: one line per flow, one per busy link direction.

    Reads the result's columns, not DataFrames, so that `ccsim run` never imports pandas."""
    lines = []
    f = res._columns("flows")
    n_flows = len(f["name"])
    if n_flows:
        lines.append(
            f"{'flow':<16} {'goodput Mb/s':>12} {'retx':>6} {'RTOs':>5} {'done s':>8} {'RTT ms':>8}"
        )
        for i in range(min(n_flows, 40)):
            lines.append(
                f"{f['name'][i]:<16} {_fmt(float(f['goodput_bps'][i]) / 1e6):>12} "
                f"{int(f['retransmits'][i]):>6} {int(f['timeouts'][i]):>5} "
                f"{_fmt(float(f['completion_time_s'][i])):>8} "
                f"{_fmt(float(f['rtt_mean_s'][i]) * 1e3, 1):>8}"
            )
        if n_flows > 40:
            lines.append(f"... {n_flows - 40} more flows (flows.parquet has them all)")
    lk = res._columns("links")
    n_links = len(lk["link"])
    drops = [
        int(lk["drops_queue"][i]) + int(lk["drops_loss"][i]) + int(lk["drops_hook"][i])
        for i in range(n_links)
    ]
    busy = [i for i in range(n_links) if lk["utilization"][i] >= 0.05 or drops[i] > 0]
    order = _by_utilization([lk["utilization"][i] for i in busy])
    shown = [busy[j] for j in order][:12]
    if shown:
        lines.append("")
        lines.append(
            f"{'link':<22} {'util':>6} {'drops q/loss/hook':>18} {'mean queue':>10} {'max':>6}"
        )
        for i in shown:
            dropped = (
                f"{int(lk['drops_queue'][i])}/{int(lk['drops_loss'][i])}/{int(lk['drops_hook'][i])}"
            )
            lines.append(
                f"{lk['link'][i] + ':' + lk['direction'][i]:<22} "
                f"{_fmt(float(lk['utilization'][i])):>6} {dropped:>18} "
                f"{_fmt(float(lk['queue_mean_packets'][i]), 1):>10} "
                f"{int(lk['queue_max_packets'][i]):>6}"
            )
        hidden = n_links - len(shown)
        if hidden:
            lines.append(f"({hidden} quieter link directions in links.parquet)")
    s = res.summary
    if s is not None:
        lines.append("")
        lines.append(
            f"stop: {s.stop_reason} at {s.sim_seconds:.3f} s simulated; {s.events} events in "
            f"{s.wall_seconds:.3f} s wall; seed {s.seed}"
        )
    return "\n".join(lines)


def utf8_name(option: str, path: Path) -> Path:
    """``path``, or ValueError naming ``option`` when its name is not UTF-8: a byte such as
    0xff in a file name reaches Python as a lone surrogate, and pyarrow, which writes and reads
    the tables, takes UTF-8 names only. `ccsim sweep --out $'x\\xff'` ran every run, then
    failed on its tables with "'utf-8' codec can't encode character '\\udcff'", naming nothing;
    `ccsim run` wrote a folder Result.from_parquet refuses (campaign 16, issue 32)."""
    said = not_utf8_said(str(path), (
        "the name is not UTF-8 (byte {byte}); ccsim's tables are read and written by names "
        "in UTF-8: rename it or name another folder"))  # fmt: skip
    if said is not None:
        raise ValueError(f"{option} {said}")
    return path


def check_output_folder(
    out: Path,
    inputs: Sequence[Path],
    names: Sequence[str],
    option: str = "--out",
    create: bool = True,
) -> None:
    """Refuse ``--out`` (or ``option``) before anything runs: when writing ``names`` into it
    would replace an input file, or when the folder cannot be created or written to.

    A run writes the resolved scenario as ``scenario.toml``; with ``--out`` the input's own
    folder that was the user's file, comments and all. With ``create=False`` a missing
    ``out`` is not made (:func:`staged_output` makes it when the output is complete): its
    parent is checked instead.
    """
    utf8_name(option, out)
    # What is in the way is named first: the comparison with the inputs below resolves links,
    # and a loop of them raised there in the system's words.
    blocked = not_a_folder(out)
    if blocked is not None:
        raise ValueError(f"{option} {out}: {blocked}; move it away or name another folder")
    for name in names:
        target = out / name
        if target.is_dir() and not target.is_symlink():  # a link is replaced, as a file is
            # A folder where a file of the output goes (a dataset another tool wrote as
            # flows.parquet/): the whole run was made, then renaming the file over it failed
            # naming the hidden staging folder, which was left in --out with some of the new
            # files moved beside the old ones (campaign 22, issue 32).
            raise ValueError(f"{option} {out}: {target} is a folder, where the output's {name} "
                             "goes; move it away or name another folder")  # fmt: skip
        for inp in inputs:
            same = target.resolve() == inp.resolve()
            if not same and target.exists() and inp.exists():
                same = os.path.samefile(target, inp)  # a hard link or another path to it
            if same:
                raise ValueError(
                    f"{option} {out}: the run would write {name} over the input {inp}; "
                    "choose another output folder"
                )
    # A link to nothing above --out is in the way too: making the folders under it said
    # "cannot write there (File exists)" (campaign 7).
    for folder in [*reversed(out.parents), out]:
        link = dangling(folder)
        if link is not None:
            which = "" if folder == out else f"{folder} "
            raise ValueError(f"{option} {out}: {which}{link}; remove the link or name another "
                             "folder")  # fmt: skip
    where = out
    if not create and not out.exists():
        where = out.absolute().parent
    # The folders made only to try a write there are removed again, unless the folder is
    # wanted now (``create``): the command makes them when it writes. Left, a command refused
    # afterwards (a scenario's bad value, a umask of 0777) kept new empty folders outside its
    # --out: `ccsim run bad.toml --out new/a/out` made new/a (campaign 30, issue 32).
    absolute = where.absolute()
    made = [p for p in [*reversed(absolute.parents), absolute] if not p.exists()]
    ok = False
    try:
        where.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=where, prefix=".ccsim-write-check-"):
            pass
        if out.exists() and not out.is_dir():
            raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(out))
        ok = True
    except OSError as e:
        raise ValueError(f"{option} {out}: cannot write there ({e.strerror or e})") from None
    finally:
        if not (ok and create):
            _remove_empty_folders(made)


def refuse_a_reproduction(out: Path, option: str, what: str) -> None:
    """Refuse ``out`` when it is a reproduction's folder or one inside it: ``what`` (a run's
    or a sweep's tables) would be written among the reproduction's files, and a sweep's runs
    into its run store, with nothing to tell them apart (issue 32's noticed list); inside it,
    ``run --out results/m01/plan`` wrote over the stored plan's scenario.toml (campaign 18)."""
    around = reproduction_around(out)
    if around is None:
        return
    folder, paper = around
    where = "this is" if folder == out else f"it is inside {folder},"
    raise ValueError(f"{option} {out}: {where} the reproduction of {paper} (its report.md and "
                     f"run.json); {what} would be mixed with its files: choose another "
                     "folder")  # fmt: skip


def _import_table_libraries(failed: list[BaseException]) -> None:
    """Import what writing a run's tables as Parquet files needs (not pandas: ``Result``
    writes the core's columns with pyarrow alone); a failure is put in ``failed``."""
    # Missing or broken (an install's binaries built against another numpy raise ValueError),
    # the main thread's own import says so, in one line: not this thread's traceback.
    try:
        # numpy first: the core hands the tables over as numpy arrays, and pyarrow (16 and
        # later) loads without it, so a broken numpy failed after the run (campaign 30).
        # By name, what the core calls: a user's own numpy.py on PYTHONPATH (or in the
        # working folder, under `python -m ccsim`) imports, and the run went to its end
        # before "internal error (AttributeError): module 'numpy' has no attribute
        # 'frombuffer'" (campaign 33, issue 32). Named, its ImportError names the file.
        from numpy import frombuffer  # noqa: F401 (numpy first)

        _import_whole("pyarrow")
        _import_whole("pyarrow.parquet")
    except BaseException as e:
        # A package's own sys.exit() as it loads too (campaign 50, issue 32): left to the
        # thread, Python drops it without a word, and the run went to its end before the
        # main thread's import met it again. A stop signal never reaches this thread.
        failed.append(e)


def _import_whole(module: str) -> Any:
    """``module`` imported, or an ImportError naming it when it came as a namespace package: a
    package's folder left without its __init__.py (its .py files removed by hand, an uninstall
    cut short, its compiled libraries left) imports, holding nothing, and ccsim's first use
    of it failed, after the runs, as "internal error (AttributeError): module 'pyarrow' has
    no attribute 'Array'" (campaign 36, issue 32). Not a ModuleNotFoundError: the package is
    installed (its folder, its metadata), and reinstalling it is the cure."""
    import importlib

    loaded = importlib.import_module(module)
    if getattr(loaded, "__file__", None) is None:
        folders = list(getattr(loaded, "__path__", None) or [module])
        raise ImportError(f"{folders[0]} has no __init__.py: files of the package were "
                          "removed", name=module)  # fmt: skip
    return loaded


@contextlib.contextmanager
def _importing_table_libraries_meanwhile() -> Iterator[Callable[[], None]]:
    """Import pyarrow on a thread of its own while the block runs; yields a check that raises
    the import's failure once the thread has met one.

    Installed but broken (pyarrow.parquet's libparquet gone, numpy half-upgraded), the failure
    was raised only when the tables were written, after the whole run: an hour of it or more
    before "ccsim needs pyarrow" (the extras matrix, campaign 30, issue 32). The check, called
    from the run's progress callback, stops the run at its first report (within ~0.5 s).

    The core runs a simulation with Python's lock released, so the imports (about 0.2 s, as
    long as P1's simulation) overlap it on a second core instead of following it (issue 11).
    Python's import lock makes a later ``import pyarrow`` on the main thread wait for the
    thread's instead of starting another. The thread is joined before the block is left, also
    when it raises, so the interpreter never shuts down under a half-done import.
    """
    failed: list[BaseException] = []
    loader = threading.Thread(
        target=_import_table_libraries, args=(failed,), name="ccsim-import-tables", daemon=True
    )

    def check() -> None:
        if failed:
            # What the start found, said as not installed (staging.package_changed).
            failed[0].found_at_start = True  # type: ignore[attr-defined]
            raise failed[0]

    loader.start()
    try:
        yield check
    except Exception:
        # A run shorter than the first report ends before any check: the core's own call
        # into a package that did not import whole (a user's numpy.py: "internal error
        # (AttributeError): module 'numpy' has no attribute 'frombuffer'") is then said as
        # the import's failure, which names the package and its file (campaign 33, issue 32).
        loader.join()
        check()
        raise
    except BaseException:
        # A stop (or a package's own SystemExit) is not held for the imports: a package whose
        # import hung held a Ctrl-C for as long, for ever if it never ended (campaign 51,
        # issue 32). The thread is a daemon; the command is ending.
        raise
    loader.join()


def _refuse_two_seeds(args: argparse.Namespace) -> None:
    """Refuse ``--seed`` beside a ``--set`` of the seed: ``run --set seed=5 --seed 6`` ran
    seed 6, the --set dropped without a word (campaign 24, issue 32), as a --set beside a
    --param of its key was before it was refused (campaign 18)."""
    if args.seed is None:
        return
    from ccsim.sweep import key_path, split_path

    for override in args.set:
        if key_path((split_path(override) or (override, ""))[0]) == ("seed",):
            raise ValueError(f'--seed {args.seed} and --set "{override}" both give the seed: '
                             "give one of them")  # fmt: skip


def _cmd_run(args: argparse.Namespace) -> int:
    # pyarrow is imported while the run goes on (_importing_table_libraries_meanwhile); it is
    # looked for first, which takes no import: missing, the run ended, an hour of it or more,
    # before "ccsim needs pyarrow" (tests/python/test_imports_before_runs.py, issue 32).
    import importlib.util

    # numpy too: the core returns the tables as numpy arrays, and without it the run went to
    # its end before failing; pandas, whose version the tables' metadata records, as well
    # (the extras matrix, campaign 30, issue 32).
    for module in ("numpy", "pyarrow", "pandas"):
        if importlib.util.find_spec(module) is None:
            raise ModuleNotFoundError(f"No module named '{module}'", name=module)
    _refuse_two_seeds(args)
    sc = Scenario.from_toml(args.file).with_overrides(args.set)
    if args.pcap:
        sc = _with_capture_points(sc, args.pcap, args.seed)
    outputs = [f"{name}.parquet" for name in TABLES] + ["scenario.toml"]
    check_output_folder(args.out, [args.file], outputs, create=False)
    refuse_a_reproduction(args.out, "--out", "the run's tables")
    refuse_a_site(args.out, "--out", "the run's tables")
    _refuse_a_blocked_pcap_folder(sc, args.out, args.seed)
    # The core drops an interrupted run, and the output folder is written in full or not at
    # all (staged_output): an interruption or a full disk leaves --out as it was.
    args.kept = f"the run was stopped before it finished and nothing was written to {args.out}"
    with staged_output(args.out, outputs) as stage:
        with _importing_table_libraries_meanwhile() as imported, _progress_line(sys.stderr) as line:
            # A broken pyarrow stops the run at its first report: the core re-raises it.
            progress: Callable[[float, int, float], None]
            if line is not None:
                line.check = imported
                progress = line
            else:
                progress = lambda sim_s, events, end_s: imported()  # noqa: E731
            res = run(sc, seed=args.seed, progress=progress, pcap_dir=stage / "pcap")
        # The imports have ended (their thread is joined on leaving the block): a run shorter
        # than its first report never called the check, and a pyarrow whose folder had lost
        # its __init__.py failed in the writing below as an internal error (campaign 36).
        imported()
        args.kept = f"writing the results was stopped and nothing was written to {args.out}"
        res._write_tables(stage)  # staged here already, with the pcap files
        made = sorted(p.name for p in (stage / "pcap").glob("*.pcap"))
    out = args.out
    _say(summary_text(res))
    written = ", ".join(
        n for n in [f"{t}.parquet" for t in TABLES] + ["scenario.toml"] if (Path(out) / n).exists()
    )
    # This run's captures: an earlier run's, kept in pcap/ beside them, were counted too
    # ("pcap/: 2 captures" after a run that made one; campaign 22, issue 32).
    captures = [c for c in made if (Path(out) / "pcap" / c).is_file()]
    if captures:
        written += f"; pcap/: {len(captures)} capture{'s' if len(captures) > 1 else ''}"
    _say(f"\nresults: {_folder_text(out)} ({written})")
    return 0


def _refuse_a_blocked_pcap_folder(sc: Scenario, out: Path, seed: int | None) -> None:
    """Refuse ``--out`` now when the run captures packets and ``out/pcap`` is a file or a link
    to nothing: the captures were moved there after the run, which failed naming the hidden
    staging folder ("<out>/.ccsim-partial-x/pcap -> <out>/pcap: not a directory"), left that
    folder in ``out`` and two of the run's tables beside the earlier ones (campaign 22, issue
    32)."""
    pcap = Path(out) / "pcap"
    blocked = not_a_folder(pcap) or (f"{pcap} {d}" if (d := dangling(pcap)) else None)
    if blocked is not None and _capture_points(sc, seed):
        raise ValueError(f"--out {out}: the run's captures go in {pcap}, and {blocked}; move "
                         "it away or name another folder")  # fmt: skip


def _capture_points(sc: Scenario, seed: int | None) -> list[str]:
    """The scenario's ``[trace] pcap`` list, as the core resolves it (overrides applied)."""
    from ccsim._tomllib import tomllib

    return list(tomllib.loads(sc.validate(seed=seed)).get("trace", {}).get("pcap", []))


def _with_capture_points(sc: Scenario, points: list[str], seed: int | None) -> Scenario:
    """``sc`` with ``points`` added to its ``[trace] pcap`` list (each once)."""
    have = _capture_points(sc, seed)
    added = [p for p in points if p not in have]
    captured = sc.set("trace.pcap", list(have) + added)
    # A point given with --pcap was refused as `trace.pcap[0]: "" is not a node`, naming a key
    # the user never wrote (noticed in campaign 22, issue 32): it names the option now.
    try:
        captured.validate(seed=seed)
    except ScenarioError as e:
        at = re.fullmatch(r"trace\.pcap\[(\d+)\]", getattr(e, "path", "") or "")
        if at is None or int(at[1]) < len(have):
            raise
        raise ValueError(f"--pcap {added[int(at[1]) - len(have)]!r}: {e.reason}") from None
    return captured


#: How often the core calls a run's progress callback, seconds (``PROGRESS_EVERY`` in
#: crates/ccsim-py/src/lib.rs), and the gap between two calls past which the process was
#: stopped between them (the core looks every 50 ms; a busy machine delays it far less).
REPORT_EVERY_S = 0.5
STALLED_S = 5.0


class _ProgressLine:
    """``simulated 12.5 s of 500 s (2 %), 4.1 M events/s, about 6 min left``, rewritten in
    place on a terminal.

    Shown only when ``stream`` is a terminal and the run has gone on for a second (short runs
    and redirected output stay as they were). The time left is the simulated time still to go
    at the pace of the run so far (simulated seconds per wall second since it started, the
    time its process was stopped left out): a run whose traffic grows slows down, so early
    estimates are low."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.shown = False
        self.started = time.monotonic()
        #: Called at each report first; raising, it stops the run (see _cmd_run).
        self.check: Callable[[], None] = lambda: None
        self.last: tuple[float, int] = (self.started, 0)
        self.width = 0
        #: Set when the terminal no longer takes the line (see ``_show``).
        self.gone = False

    def __call__(self, sim_s: float, events: int, end_s: float) -> None:
        self.check()
        if self.gone:
            return
        now = time.monotonic()
        t0, e0 = self.last
        self.last = (now, events)
        if now - t0 > STALLED_S:
            # The process was stopped (Ctrl-Z and fg, kill -STOP and -CONT) since the last
            # report: the run did not run meanwhile, and its pace counted the stop. After a
            # 5 s Ctrl-Z, a run 10 s from its end said "about 28 s left" and then counted down
            # from there; stopped for an hour, "about 2 h left" (campaign 60b, issue 32). The
            # stop is left out, as if the run had gone on for one report's time.
            self.started += now - t0 - REPORT_EVERY_S
            t0 = now - REPORT_EVERY_S
        if now - self.started < 1.0:
            return
        rate = (events - e0) / max(now - t0, 1e-9)
        text = f"simulated {sim_s:.1f} s"
        if end_s > 0:
            text += f" of {end_s:g} s ({100 * sim_s / end_s:.0f} %)"
        text += f", {rate / 1e6:.1f} M events/s"
        if end_s > 0 and sim_s > 0:
            pace = sim_s / (now - self.started)  # simulated seconds per wall second
            text += f", about {time_left_text(max(end_s - sim_s, 0.0) / pace)} left"
        self.text(text)

    def text(self, text: str) -> None:
        """Show ``text`` as the line, once a second has gone by since the line was made."""
        if self.gone or time.monotonic() - self.started < 1.0:
            return
        # Cut to the terminal's width less one column, asked at each report (a window can be
        # resized): wider, the line wrapped and "\r" went back to the start of its last row
        # only, so a 40-column terminal (a tmux split, a phone's ssh client) got a new row at
        # every report (campaign 33, issue 32). A terminal that says 0 columns: 80.
        columns = _columns(self.stream) - 1
        text = text[:columns]
        # Padded to the longest line so far: a shorter line must cover the longer one's tail.
        self.width = min(max(self.width, len(text) + 1), columns)
        self.shown = self._show("\r" + text.ljust(self.width))

    def close(self) -> None:
        if self.shown and not self.gone:
            self._show("\n")

    def cleared(self) -> None:
        """Blank the line, for another line (a warning) to be written in its place; the next
        report writes it again below that one."""
        if self.shown and not self.gone:
            self._show("\r" + " " * self.width + "\r")
            self.shown = False

    def _show(self, text: str) -> bool:
        """Write ``text``; False, and no more lines, when the terminal is gone. A terminal that
        hung up fails the write (EIO): with SIGHUP ignored (``nohup``, ``trap '' HUP``) that
        failure stopped the run, with status 1 and nothing written, when the person watching
        had only closed the window (campaign 13, issue 32). The line is for them alone."""
        try:
            self.stream.write(text)
            self.stream.flush()
        except OSError:
            self.gone = True
            return False
        return True


def _columns(stream: Any) -> int:
    """The width of the terminal ``stream`` writes to; $COLUMNS or 80 when it cannot say."""
    try:
        columns = os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, OSError, ValueError):  # no descriptor (io.UnsupportedOperation)
        columns = shutil.get_terminal_size((80, 24)).columns
    return columns if columns > 1 else 80


def time_left_text(seconds: float) -> str:
    """A wall-time estimate as a person says it, no more precise than it is.

    >>> [time_left_text(s) for s in (0.4, 42, 200, 3725, 90000)]
    ['1 s', '42 s', '3 min', '1 h 2 min', '25 h 0 min']
    """
    s = max(1, round(seconds))
    if s < 100:
        return f"{s} s"
    if s < 3600:
        return f"{round(s / 60)} min"
    return f"{s // 3600} h {s % 3600 // 60} min"


@contextlib.contextmanager
def _progress_line(stream: Any) -> Iterator[_ProgressLine | None]:
    if not (hasattr(stream, "isatty") and stream.isatty()):
        yield None
        return
    line = _ProgressLine(stream)
    try:
        yield line
    finally:
        line.close()


def describe_resolved(resolved: str) -> str:
    r"""One line on what a resolved scenario holds: duration, seed and how many of each part.

    >>> describe_resolved('seed = 3\nduration = "2s"\n[nodes]\na = "host"\n[flows.f]\nsrc = "a"')
    'duration 2s, seed 3; nodes: 1, links: 0, flows: 1'
    >>> describe_resolved('[flows.f]\ncount = 5\n[flows.g]\nsrc = "a"')
    'duration ?, seed ?; nodes: 0, links: 0, flows: 6'
    """
    from ccsim._tomllib import tomllib

    tree = tomllib.loads(resolved)
    parts = [f"{k}: {len(tree.get(k, {}))}" for k in ("nodes", "links")]
    # A flow with `count` is that many flows, each a row of the flows table.
    flows = tree.get("flows", {}).values()
    parts.append(f"flows: {sum(f.get('count', 1) for f in flows)}")
    return f"duration {tree.get('duration', '?')}, seed {tree.get('seed', '?')}; " + ", ".join(
        parts
    )


def _cmd_validate(args: argparse.Namespace) -> int:
    _refuse_two_seeds(args)
    sc = Scenario.from_toml(args.file).with_overrides(args.set)
    resolved = sc.validate(seed=args.seed)
    _say(f"ok: {shown_path(args.file)}: {describe_resolved(resolved)}")
    return 0


def _cmd_bench(args: argparse.Namespace) -> int:
    import importlib

    # What each case's child needs to run the core (its tables come back as numpy arrays),
    # looked for here: missing, every child died with a ModuleNotFoundError traceback and
    # bench said "benchmark trivial.toml failed with status 1" (campaign 22, issue 32).
    importlib.import_module("numpy")
    from ccsim import bench

    only = args.only
    if args.scale:
        # A case named in --only too runs once (see _cases).
        only = list(dict.fromkeys([*(only or []), *bench.SCALE_DEFAULT]))
    if any(name in bench.SCALE for name in only or []):
        # A generated case is written as TOML (Scenario.to_toml: tomli_w) in a child before
        # the runs: missing, bench said "internal error (CalledProcessError): Command [...]
        # returned non-zero exit status 1", naming neither tomli_w nor the cure (campaign 25,
        # issue 32). By name, what writes it: a user's tomli_w.py imports, and the case's
        # child failed after the other cases had run, "its scenario could not be generated:
        # AttributeError: module 'tomli_w' has no attribute 'dumps'" (campaign 34, issue 32).
        from tomli_w import dumps  # noqa: F401
    if args.plot is not None:
        # Refused before the benchmarks run (--scale takes minutes), not after them: a plot
        # of no scale case was an empty figure, and one that cannot be written was lost.
        if not any(name in bench.SCALE for name in only or []):
            raise ValueError(f"--plot {args.plot}: the plot draws the generated scale cases, "
                             "and none runs; add --scale, or name them in --only (e.g. "
                             f"{','.join(list(bench.SCALE)[:2])})")  # fmt: skip
        if args.plot.is_dir():
            raise ValueError(f"--plot {args.plot}: is a directory; name a PNG file")
        try:
            check_regular(args.plot)
        except NotAFile as e:
            # The PNG is renamed over its place when drawn: run as root, --plot /dev/null
            # replaced the device with the figure (and a FIFO, a socket, without a word).
            raise ValueError(f"--plot {args.plot}: {e}; name a PNG file") from None
        except OSError:  # not there yet (or a link to nowhere): the PNG is made
            pass
        # The folder as the user wrote it (relative stays relative): it was named by its
        # absolute path, "--plot /home/u/ro: cannot write there" for `--plot ro/x.png`.
        check_output_folder(args.plot.parent, [], [], option=f"--plot {args.plot}: its folder",
                            create=False)  # fmt: skip
        # What draws it, before the benchmarks too: missing, "ccsim needs matplotlib" came
        # after them, minutes of them with --scale (campaign 13, issue 32).
        importlib.import_module("matplotlib.pyplot")
    rows = bench.run_benchmarks(repeat=args.repeat, only=only)
    # Drawn before the table is printed: a stdout that cannot be written (closed, a full disk)
    # fails the print, and the plot of minutes of benchmarks was lost (campaign 16, issue 32).
    plot = failed = None
    if args.plot is not None:
        try:
            plot = bench.plot_scale(rows, args.plot)
        except OSError as e:
            # The table is printed all the same, the error after it: a plot that could not be
            # written (a full disk, one gone read-only) ended the command before the table,
            # and minutes of benchmarks (--scale) were lost with the figure.
            failed = e
    _say(bench.format_table(rows))
    if failed is not None:
        raise failed
    if plot is not None:
        _say(f"plot: {shown_path(plot)}")
    return 0


def _needs_tables() -> None:
    """Import numpy, pyarrow and pandas, in that order: one missing is then the
    ModuleNotFoundError naming it that ``_dispatch`` turns into "ccsim needs ...". Imported by
    pandas first, numpy missing was "internal error (ImportError): Unable to import required
    dependency numpy", and pyarrow missing "Unable to find a usable engine" after the runs."""
    import importlib

    for module in ("numpy", "pyarrow", "pyarrow.parquet", "pandas"):
        _import_whole(module)
    # pandas loads what writes Parquet at the first to_parquet, after the runs: a part of it
    # failing there (a shared library gone, a pyarrow it finds too old) was "Unable to find a
    # usable engine" after every run (the extras matrix, campaign 30, issue 32). The engine
    # to_parquet would take, looked up now, loads it.
    importlib.import_module("pandas.io.parquet").get_engine("auto")


def _cmd_sweep(args: argparse.Namespace) -> int:
    _needs_tables()
    from ccsim import sweep

    cluster = _cluster(args)
    text = Scenario.from_toml(args.file).to_toml()  # a file that is no TOML is named
    params = [sweep.parse_param(p) for p in args.param]
    runs = sweep.plan_grid(text, args.set, params, range(1, args.seeds + 1))
    out: Path = args.out
    # Refused now, not at the first finished run's save (the store makes its folder then).
    check_output_folder(out, [args.file], ["flows.parquet", "links.parquet"], create=False)
    refuse_a_reproduction(out, "--out", "the sweep's tables and its runs/ store")
    refuse_a_site(out, "--out", "the sweep's tables and its runs/ store")
    store = sweep.Store(out / "runs")
    args.kept = lambda: (
        kept_runs(len(store), store.directory)
        if len(store)
        else "no run had finished: nothing was written"  # the store's folder was never made
    )
    made = [folder for folder in (out, store.directory) if not folder.exists()]
    before = store.other_engine()
    try:
        rep = sweep.execute(runs, store, workers=args.workers, cluster=cluster)
    except BaseException:
        if not _stored(store):
            # "no finished run is kept" was said of a new --out left holding runs/ and an
            # empty shard folder, made by the first save before a full disk failed it
            # (campaign 28, issue 32): the folders this sweep made are removed when empty.
            _remove_empty_folders(made)
        raise
    flows = sweep.gather(rep.records, "flows")
    links = sweep.gather(rep.records, "links")
    # Both tables or neither: written in place, a full disk left flows.parquet cut short, or
    # whole beside a links.parquet cut short (or an earlier sweep's).
    state = f"the tables were not written; {kept_runs(len(store), store.directory)}"
    # Every table a run writes is the sweep's to replace: a sweep into an earlier run's
    # folder kept its series.parquet and scenario.toml beside the sweep's tables, and
    # Result.from_parquet read the folder as one run's: that run's scenario and series with
    # the sweep's flows (campaign 26, issue 32).
    ours = [f"{name}.parquet" for name in TABLES] + ["scenario.toml"]
    with staged_output(out, ours, state=state) as stage:
        for name, table in (("flows", flows), ("links", links)):
            with naming_the_file(stage / f"{name}.parquet"):  # a full disk names the table
                table.to_parquet(stage / f"{name}.parquet", index=False)
    _say(
        f"{rep.total} run{'' if rep.total == 1 else 's'}: {rep.executed} executed, "
        f"{rep.cached} reused from the store\n"
        + (f"{sweep._other_build_said(before, 'a sweep')}\n" if before and rep.executed else "")
        + f"results: {_folder_text(out)} (flows.parquet, links.parquet; one row per flow or link "
        "direction per run, with a column per parameter and the seed)"
    )
    return 0


def _stored(store: Any) -> int:
    """How many records ``store`` holds; 0 when its folder cannot be read. Under a umask of
    0777 the sweep made --out with mode 000, and counting the records there raised
    PermissionError over the error that stopped the sweep, so its empty --out was left
    (campaign 30, issue 32)."""
    try:
        return len(store)
    except OSError:
        return 0


def _remove_empty_folders(folders: list[Path]) -> None:
    """Remove each of ``folders`` (innermost last in the list) with the empty folders inside
    it, when nothing else is there; a folder holding a file is left as it is."""
    for folder in reversed(folders):
        try:
            if not folder.is_dir() or folder.is_symlink():
                continue
        except OSError:  # inside a folder that cannot be listed (mode 000): not ours to see
            continue
        for top, _dirs, _files in sorted(os.walk(folder), reverse=True):
            with contextlib.suppress(OSError):
                os.rmdir(top)
        # One its owner cannot list (made under a umask of 0777, mode 000): os.walk yields
        # nothing of it, and it was left (campaign 30, issue 32). Empty, it goes as it is.
        with contextlib.suppress(OSError):
            os.rmdir(folder)


def _cmd_reproduce(args: argparse.Namespace) -> int:

    if args.list:
        # --list reads nothing else: a paper or option given with it would go unread.
        ignored = [
            name
            for name, given in (
                (args.experiment, args.experiment is not None),
                ("--quick", args.quick),
                ("--out", args.out is not None),
                ("--workers", args.workers is not None),
                ("--seeds", args.seeds is not None),
                ("--record", args.record),
                ("--executor", args.executor != "local"),
                ("--scheduler", args.scheduler is not None),
            )
            if given
        ]
        if ignored:
            raise ValueError(
                f"reproduce --list takes no {', '.join(map(str, ignored))}: it lists the papers "
                "(run `ccsim reproduce PAPER` to reproduce one)"
            )
        papers = list_papers(Path("experiments"))
        _say(papers)
        return 0
    if args.experiment is None:
        raise ValueError("reproduce needs a paper, e.g. p001 (ccsim reproduce --list shows them)")
    if args.out is not None:
        # As run and sweep check theirs: a folder no one may write in (its parent read-only,
        # or under /proc) was "ccsim: error: /proc/x: no such file" after the plan was read,
        # naming neither --out nor the cause (the output-folder matrix, issue 32).
        check_output_folder(Path(args.out), [], [], create=False)
    else:
        # The default's folder goes under $CCSIM_RESULTS (or results): checked as --out is,
        # naming where it came from. Not UTF-8, it ran every run, then failed naming nothing
        # (campaign 19); unwritable (CCSIM_RESULTS=/proc/x) it was "ccsim: error: /proc/x: no
        # such file", and a file there was refused naming --out, an option never given
        # (campaign 22, issue 32).
        env = os.environ.get("CCSIM_RESULTS")
        option = "$CCSIM_RESULTS" if env else "the default folder"
        check_output_folder(Path(env or "results"), [], [], option=option, create=False)
    _needs_tables()
    # What draws the figures (matplotlib) and the site (plotly; markdown-it-py writes its
    # pages from report.md), before the runs: missing, "ccsim needs matplotlib" came after
    # every run of the plan, hours of them for a full reproduction (campaign 15, issue 32;
    # bench --plot's was campaign 13's; markdown_it's campaign 18's).

    # The modules the figures import, not their packages alone: a module loaded later
    # failing (matplotlib.pyplot's backend, a shared library gone) was found after the runs,
    # leaving plan/ and runs/ (the extras matrix, campaign 30, issue 32).
    for module in ("matplotlib", "matplotlib.pyplot"):
        _import_whole(module)
    _load_the_site_code()
    from ccsim import experiment, sweep

    cluster = _cluster(args)

    def kept() -> str:
        # Counted when the stop comes, as sweep's: stopped while the plan was read or its
        # first runs ran, it said "finished runs are kept, and the same command resumes from
        # them" with no run finished and no --out made (campaign 23, issue 32).
        try:
            plan_id = experiment.load_plan(experiment.find_experiment(args.experiment)).id
        except Exception:  # stopped before the plan was found: nothing of it was run
            return "no run had finished, so none is kept"
        store = sweep.Store(Path(args.out or experiment.default_out(plan_id, args.quick)) / "runs")
        n = len(store)
        if not n:
            return "no run had finished, so none is kept"
        return kept_runs(n, store.directory)

    args.kept = kept
    report = experiment.run_cli(
        args.experiment,
        args.out,
        args.quick,
        args.workers,
        args.seeds,
        cluster=cluster,
        record=args.record,
        warn=_warning,
        say=_say,
    )
    _say(f"report: {shown_path(report)}")
    return 0


def _load_the_site_code() -> None:
    """Load what writing a site takes (plotly, markdown-it-py, ccsim's own site code), before
    the command's runs or its pages."""
    for module in ("plotly", "plotly.graph_objects", "plotly.subplots", "plotly.offline",
                   "markdown_it"):  # fmt: skip
        _import_whole(module)
    # By name, what the site takes from it: a user's markdown_it.py imports, and the error
    # came after every run (campaign 33, issue 32).
    from markdown_it import MarkdownIt  # noqa: F401

    # plotly reads its validators (a JSON file, by its path) when a figure is first made: from
    # a zip on PYTHONPATH, or with its data files stripped, it imported whole, and the site
    # failed after every run with "validator JSON file not found" (campaign 36, issue 32).
    from plotly.graph_objects import Figure

    try:
        Figure()
    except Exception as e:
        raise ImportError(f"it cannot make a figure: {e}", name="plotly") from None

    # ccsim's own site code, loaded now with the rest of ccsim, not after the runs: ccsim
    # upgraded while a reproduction ran (`git pull` in the clone of an editable install, pip
    # install -U) failed it after every run with "internal error (ImportError): cannot import
    # name ... from 'ccsim.staging'", the new site module asking the old, loaded ccsim for
    # what it did not have yet (campaign 41, issue 32). ccsim.experiment with it, which the
    # site's modules import as they write: ccsim removed while `ccsim report` wrote its pages
    # was "internal error (ModuleNotFoundError): No module named 'ccsim.explore'" (the
    # install-change matrix, campaign 43, issue 32).
    import ccsim.experiment
    import ccsim.explore.ranges  # the plans' ranges, which the site reads with each plan
    import ccsim.site  # noqa: F401


def list_papers(experiments: Path) -> str:
    """``ccsim reproduce --list``: one line per plan under ``experiments``: its id (what
    ``ccsim reproduce`` takes), its folder and its title. Read from each plan's first keys, so a
    plan with a mistake further down is still listed (reproducing it names the mistake)."""
    from ccsim._tomllib import tomllib

    rows = []
    from .experiment.plan import experiment_folders

    for plan in (f / "plan.toml" for f in experiment_folders(experiments)):
        try:
            check_regular(plan)  # a FIFO there waited for a writer (campaign 48, issue 32)
            tree = tomllib.loads(read_text(plan, "plan"))
        except (Error, ValueError):
            tree = {}
        rows.append((str(tree.get("id", "?")), plan.parent.name, str(tree.get("title", ""))))
    if not rows:
        raise ValueError(
            f"no {experiments}/*/plan.toml here: run ccsim reproduce --list from the repository "
            "root"
        )
    wid, wfolder = max(len(r[0]) for r in rows), max(len(r[1]) for r in rows)
    return "\n".join(f"{i:<{wid}}  {f:<{wfolder}}  {t}".rstrip() for i, f, t in rows)


def _results_dir(args: argparse.Namespace) -> Path:
    # An empty $CCSIM_RESULTS is unset, as the shell's `CCSIM_RESULTS= ccsim ...` means:
    # reproduce wrote its folder into the working directory (campaign 19, issue 32).
    env = os.environ.get("CCSIM_RESULTS") or "results"
    return utf8_name("--results" if args.results else "$CCSIM_RESULTS", Path(args.results or env))


def _results_option(args: argparse.Namespace) -> str:
    """What named the results folder, for its errors: $CCSIM_RESULTS's folder was refused as
    "--results", an option never given (campaign 22, issue 32)."""
    if os.environ.get("CCSIM_RESULTS") and not args.results:
        return "$CCSIM_RESULTS"
    return "--results"


def _cmd_report(args: argparse.Namespace) -> int:
    _needs_tables()
    _load_the_site_code()
    from ccsim.site import build_site

    results = _results_dir(args)
    given = _results_option(args)
    if not results.is_dir():
        # Something there that is no folder (a file, a FIFO, a loop of links, a link to
        # nothing) is named as what it is: it was "is not a folder (run `ccsim reproduce p001`
        # first)", a cure that writes results/p001 and mends nothing here (campaign 48,
        # issue 32).
        blocked = not_a_folder(results)
        if blocked is not None:
            raise ValueError(f"{given} {results}: {blocked}; give the folder of reproductions")
        # The link to nothing may be a folder above (`--results gone/r`, gone a dangling
        # link), which said "run reproduce first" still (campaign 48b, issue 32).
        for where in [*reversed(results.parents), results]:
            link = dangling(where)
            if link is not None:
                said = link if where == results else f"{where} {link}"
                raise ValueError(f"{given} {results}: {said}; mend the link or give the folder "
                                 "of reproductions")  # fmt: skip
        raise ValueError(f"{given}: {results} is not a folder (run `ccsim reproduce p001` first)")
    # Refused before the pages are built (the folder's parent is made then): a file in its
    # way said "<file>: file exists".
    option = "--out" if args.out is not None else "the site's folder"
    site = args.out or results / "site"
    check_output_folder(site, [], [], option=option, create=False)
    around = reproduction_around(site)
    # Inside a reproduction (its plan/, runs/, directly or through a link) the site's pages
    # were written among its files (issue 32's output-folder matrix); its own site/, where
    # `ccsim reproduce` writes its site, stays allowed, and the reproduction's folder itself
    # is refused by build_site.
    if around is not None and reproduction_of(site) is None:
        own = (around[0] / "site").resolve()
        if site.resolve() != own:
            refuse_a_reproduction(site, option, "the site's pages")
    from ccsim.site.reports import find_reports

    # A site of nothing ("No reproduction yet") was written and the status was 0, while
    # `ccsim explore` refused the same folder (issue 32): a report needs a reproduction.
    if not find_reports(results):
        # A report.md there that is no file (a FIFO, a folder) is named as what it is, as the
        # reproduction's other files are: "no report.md in it" was said of a folder whose
        # listing shows one (campaign 64b, issue 32).
        from ccsim.scenario import NotAFile, check_regular

        report = results / "report.md"
        try:
            check_regular(report)
        except NotAFile as e:
            raise ValueError(
                f"{given}: {report} {e}, where a reproduction keeps its report: move it away "
                "and run `ccsim reproduce` again into that folder, or give --results another"
            ) from None
        except OSError:  # not there (or a link to nothing): no reproduction, as said below
            pass
        raise ValueError(
            f"{given}: {results} holds no reproduction (no report.md in it or in a folder "
            "of it): run `ccsim reproduce p001` first, or give --results the folder "
            "`ccsim reproduce --out` wrote"
        )
    # A damaged reproduction is left out with a line naming its file; the rest are built.
    state = f"{site} was left as it was" if site.is_dir() else f"nothing was written to {site}"
    try:
        # A site of hundreds of reproductions takes minutes (100 s for 201 copies of p001's
        # quick one), and the command said nothing until its last line (campaign 61b, issue
        # 32): on a terminal, after a second, a line says which reproduction is being built.
        with _progress_line(sys.stderr) as line:

            def progress(done: int, total: int, name: str) -> None:
                if line is not None:
                    line.text(f"building the site: {done + 1} of {total} reproductions ({name})")

            def warn(message: str) -> None:
                if line is not None:
                    line.cleared()
                _warning(message)

            site = build_site(results, args.out, warn=warn, progress=progress)
    except (OSError, ImportError) as e:
        # plotly removed or upgraded while the pages were written: its plotly.min.js, read
        # only now, was named as ".../plotly/package_data/plotly.min.js: no such file", a file
        # inside the package (the install-change matrix, campaign 43, issue 32), as
        # reproduce's was in campaign 41.
        changed = package_changed(e, [site], state)
        if changed is not None:
            raise ValueError(changed) from e
        raise
    _say(f"site: {shown_path(site)}")
    return 0


def _cmd_explore(args: argparse.Namespace) -> int:
    # The server runs its own asyncio event loop in this thread, which cannot be done where
    # one already runs: a Jupyter kernel's, `%run -m ccsim explore` in a notebook's cell. It
    # listened, then failed with asyncio's "Cannot run the event loop while another loop is
    # running" and two "coroutine ... was never awaited" (campaign 38, issue 32).
    import asyncio

    try:
        asyncio.get_running_loop()
    except RuntimeError:  # none running: the usual case
        pass
    else:
        raise ValueError(
            "ccsim explore serves with its own event loop, and this Python already runs one "
            "in this thread (a Jupyter kernel's?): start it in a terminal, or in a cell as "
            "`!ccsim explore`"
        )
    # Starlette and uvicorn are ccsim's own dependencies (pyproject.toml): missing, ccsim was
    # installed without them (pip's --no-deps), and installing it again brings them. So are
    # numpy and pandas, which the explorer's points are computed with: numpy missing was
    # "internal error (ImportError): Unable to import required dependency numpy" (pandas').
    # And plotly, whose JavaScript the page draws with: missing, the explorer started, then
    # answered the page's /plotly.min.js with 500 and a traceback, a page that drew nothing.
    for module in ("numpy", "pandas", "plotly", "starlette", "uvicorn"):
        try:
            _import_whole(module)
        except ImportError as e:
            # The package missing under it named (as _dispatch does): click missing was
            # "ccsim explore needs uvicorn, which is not installed", of a uvicorn installed
            # (the extras matrix, campaign 30, issue 32).
            missing = (e.name or "").partition(".")[0]
            if not isinstance(e, ModuleNotFoundError) or not missing:
                missing = module
            raise ValueError(_not_installed("ccsim explore", missing, e)) from None
    from ccsim.explore import serve
    from ccsim.explore.catalog import reproductions

    results = _results_dir(args)
    # Each job's runs go to <results>/<plan>/runs: inside a reproduction (its plan/, runs/ or
    # site/) or a site's folder they were mixed with its files, as run's and sweep's --out
    # there are refused for: `--results results/m01/plan` wrote p001/runs/ into m01's stored
    # plan (campaign 24, issue 32). A reproduction's own folder stays allowed, as ccsim
    # report takes it: its plan's runs go to its own store, and only its plan is offered.
    if reproduction_of(results) is None:
        refuse_a_reproduction(results, _results_option(args), "the explorer's run stores")
    refuse_a_site(results, _results_option(args), "the explorer's run stores")
    # The plans: the repository's, run from its root; elsewhere, the ones stored with the
    # reproductions under --results (ccsim reproduce stores each with its results).
    experiments: Path | None = Path("experiments")
    # --results one reproduction's folder: its stored plan alone, wherever the command runs.
    # From the repository's root every plan was offered, and a job of another paper wrote
    # its run store inside that reproduction (results/m01/p001/runs; campaign 24, issue 32).
    # (One from before plans were stored keeps the repository's.)
    own = reproduction_of(results) is not None and bool(reproductions(results))
    if own or not any(experiments.glob("*/plan.toml")):
        experiments = None
        # Quiet here: serve names each damaged one as it loads the plans, once.
        if not reproductions(results):
            reproductions(results, warn=_warning)  # why the damaged ones were left out
            raise ValueError(
                f"no experiments/*/plan.toml here and no reproduction with its plan under "
                f"{results}: run ccsim explore from the repository root, or give --results "
                "the folder `ccsim reproduce --out` wrote"
            )
    # Every run is written there: a folder that cannot be written is refused now, not found
    # out by the first job.
    option = _results_option(args)
    # Made here and left empty by an explorer refused its address (a port in use, --host an
    # address not of this machine) or stopped before any job: an empty results/ stayed in the
    # working folder of a command that said it wrote nothing (campaign 53, issue 32).
    made = [f for f in [*reversed(results.parents), results] if not f.exists()]
    check_output_folder(results, [], [], option=option)
    args.kept = _explore_kept
    try:
        # The address is said once the server serves, after uvicorn has set its log up on
        # stdout: a closed stdout is named now, not by uvicorn's "Unable to configure
        # formatter 'default'".
        with naming_the_file(STDOUT):
            _stdout()
        serve(results, experiments, args.host, args.port, args.workers,
              say=lambda text: _say(text, flush=True), warn=_warning)  # fmt: skip
    finally:
        _remove_empty_folders(made)  # a folder holding a run is left as it is
    return 0


def _explore_kept() -> str:
    """What an interrupted explorer kept: every finished run, less those the store refused
    (each said on its job's page as it happened)."""
    from ccsim.explore.jobs import unsaved_runs

    unsaved = unsaved_runs()
    if not unsaved:
        return "every finished run is in the store"
    runs = "run" if unsaved == 1 else "runs"
    return (f"every finished run is in the store but {unsaved} {runs} whose record the disk "
            "refused (said on the page)")  # fmt: skip


def _cluster(args: argparse.Namespace) -> str | None:
    """The Dask scheduler address that ``--executor``/``--scheduler`` ask for, or None to run
    in local processes."""
    if args.executor == "dask":
        # Both by name: dask hidden or broken while distributed is already imported (a
        # session that used it) is missing all the same.
        # One there but raising as it loads (a library it was built against gone) is named
        # so, with the extra's install: it was "ccsim needs dask, ...: install ccsim again
        # with its dependencies", an install that leaves the extra as it is (campaign 25,
        # issue 32).
        try:
            import dask  # noqa: F401

            # What the probe of --scheduler and the sweep use, by name: a distributed.py of
            # the user's (or distributed's folder without its __init__.py) imports, and the
            # probe's own import failing was "the address answered, but not as a Dask
            # scheduler", of a port where nothing listens (campaign 50, issue 32).
            import distributed.comm  # noqa: F401
            from distributed import Client  # noqa: F401
        except (Exception, SystemExit) as e:
            if isinstance(e, BrokenPipeError) or _stdout_failing(e) is not None:
                # A package printing as it loads, to a stdout whose reader has gone (the
                # command's 141) or that cannot be written (a terminal that hung up, /dev/full):
                # not "Dask's distributed scheduler, which is installed but cannot be imported
                # ([Errno 32] Broken pipe): pip install '.[dask]'" (campaign 51).
                raise
            # SystemExit too: a package's own sys.exit() as it loads was "ccsim needs
            # distributed ...: install ccsim again", not the extra's cure (campaign 50).
            from ccsim.cluster import why_not_importable

            setting = _setting_failed_on("distributed", e)
            if setting is not None:
                raise ValueError(f"--executor dask needs Dask's distributed scheduler, which "
                                 f"cannot be imported with {setting} in the environment "
                                 f"({e}): mend or unset it") from None  # fmt: skip
            cure = ("pip install -c constraints.txt '.[dask]' from the repository root (the "
                    "extra `dask`)")  # fmt: skip
            why = why_not_importable(e, ("dask", "distributed"), cure)
            raise ValueError(f"--executor dask needs Dask's distributed scheduler, {why}") from None
        if args.scheduler is None:
            raise ValueError(
                "--executor dask needs --scheduler tcp://HOST:PORT (the address `dask "
                "scheduler` prints)"
            )
        if args.workers is not None:
            raise ValueError(
                "--workers counts local processes; with --executor dask the cluster's workers "
                "run the runs (start them with `dask worker`)"
            )
        from ccsim import cluster

        # Before any run or progress bar: an address where no scheduler answers is one line
        # within cluster.CONNECT_TIMEOUT_S; a configuration Dask cannot read, one line too.
        cluster.check_configuration()
        cluster.check_scheduler(str(args.scheduler))
        return str(args.scheduler)
    if args.scheduler is not None:
        raise ValueError("--scheduler is for --executor dask (the default executor is local)")
    return None


def _add_executor_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--executor",
        choices=("local", "dask"),
        default="local",
        help="where runs execute: local processes (default) or a Dask cluster",
    )
    p.add_argument(
        "--scheduler",
        default=None,
        metavar="tcp://HOST:PORT",
        help="the Dask scheduler's address, with --executor dask",
    )


def _version() -> str:
    from ccsim._core import __version__

    return str(__version__)


def _engine() -> str:
    from ccsim._core import ENGINE

    return str(ENGINE)


class UsageError(Exception):
    """A command line that argparse could not read (an unknown option, a missing argument)."""


class _Parser(argparse.ArgumentParser):
    """argparse, except that a usage error is one line and exit status 1 like every other
    error (argparse prints the usage and a message, two lines, and exits with 2)."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see {self.prog} --help)")

    def _get_values(self, action: argparse.Action, arg_strings: list[str]) -> Any:
        # An option's own value "--" (`--out=--`, a folder named --): CPython 3.11's argparse
        # drops every "--" from the strings it converts, as it does for positionals, so the
        # value was [], never given to the option's type nor checked against its choices:
        # `run --out=--` was "internal error (AttributeError): 'list' object has no
        # attribute 'parents'", `explore --workers=--` a traceback, `bench --only=--` ran
        # every case (campaign 48, issue 32). Later Pythons keep it, as here: a value it is.
        single = action.nargs in (None, argparse.OPTIONAL)
        if action.option_strings and single and arg_strings == ["--"]:
            value = self._get_value(action, "--")
            self._check_value(action, value)
            return value
        return super()._get_values(action, arg_strings)

    def _print_message(self, message: str, file: Any = None) -> None:
        # argparse ignores an OSError from writing --help or --version: with stdout
        # unbuffered (PYTHONUNBUFFERED=1) `ccsim --help > /dev/full` exited 0 having written
        # nothing. Raised, it reaches main, which reports it as any command's output.
        if message and file is sys.stdout:
            with naming_the_file(STDOUT):
                _stdout().write(message)
            return
        super()._print_message(message, file)


class _SeedIsRuns(argparse.Action):
    """``--seed`` given to sweep or reproduce, whose option is ``--seeds N`` (seeds 1..N):
    argparse takes an option's prefix as the option, and ``ccsim sweep ... --seed 3`` (run's
    option: that one seed) ran the seeds 1, 2 and 3 (campaign 24, issue 32)."""

    def __call__(self, parser: Any, namespace: Any, values: Any, option: Any = None) -> None:
        parser.error(f"--seed: {parser.prog.split()[-1]} takes --seeds N (the seeds 1..N at "
                     "every point), not one seed as run's --seed")  # fmt: skip


def _integer(text: str) -> int:
    """An option's integer, or argparse's one-line error. Written in ASCII digits: Python's
    int() reads any script's, and ``--seed ١٢`` ran seed 12 (campaign 13, issue 32).

    Decimal, with ``_`` allowed between digits (``--seeds 1_000``), as a scenario's TOML
    integers and ``--set`` read them: ``--port 18_653`` listening on 18653 is that rule, not
    a slip (campaign 52's question, decided in campaign 53). TOML's 0x/0o/0b forms are not
    taken here: no command-line tool reads a port or a count in hexadecimal."""
    try:
        if not text.isascii():
            raise ValueError(text)
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f'"{text}" is not an integer') from None


def _seed(text: str) -> int:
    """``--seed``: a master seed, 0 to 2^63 - 1."""
    value = _integer(text)
    problem = seed_problem(value)
    if problem is not None:
        raise argparse.ArgumentTypeError(problem)
    return value


def _png(text: str) -> Path:
    """``bench --plot``: a PNG file's path, not empty (``Path("")`` is the working folder,
    refused as "--plot .: is a directory") and ending in .png: the figure is drawn as PNG
    whatever the name, so ``--plot x.svg`` wrote PNG bytes into a file named .svg."""
    if not text.strip():
        raise argparse.ArgumentTypeError("empty; name a PNG file")
    path = Path(text)
    if path.suffix.lower() != ".png":
        raise argparse.ArgumentTypeError(f"{text}: the plot is drawn as PNG; name a .png file")
    return path


def _folder(text: str) -> Path:
    """``--out``, ``--results``: a folder, not empty. ``--out "$OUT"`` with OUT unset gives
    ``Path("")``, which is the working folder: a run wrote its tables there."""
    if not text.strip():
        raise argparse.ArgumentTypeError('empty; name a folder ("." for the working folder)')
    return Path(text)


def _scenario_file(text: str) -> Path:
    """``run``, ``validate``, ``sweep``'s FILE: not empty. ``ccsim run "$F"`` with F unset gave
    ``Path("")``, the working folder, refused as ".: is a directory" (campaign 12, issue 32)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("empty; name the scenario's TOML file")
    # A byte such as 0xff in the name reaches Python as a lone surrogate, which the scenario's
    # reader refuses (its source names it in every message): the file was refused as "path:
    # 'bad\udcffname.toml' has a lone surrogate", naming the reader's parameter, not this
    # argument or the cure (campaign 22, issue 32).
    bad = _not_utf8(text)
    if bad is not None:
        shown, byte, cure = bad
        raise argparse.ArgumentTypeError(f"{shown}: " + (cure or (
            f"the name is not UTF-8 (byte 0x{byte:02x}); rename the file, or link to it by a "
            "name in UTF-8")))  # fmt: skip
    return Path(text)


def _cases(text: str) -> list[str]:
    """``bench --only``: the cases named, upper-cased. None named (``--only "$CASES"`` with
    CASES unset) is refused: taken for "no filter", it ran every case, for minutes."""
    # Each case once, in the order named: named twice, it ran twice a round and printed two
    # rows, each a median over both rows' runs.
    cases = list(dict.fromkeys(c.strip().upper() for c in text.split(",") if c.strip()))
    if not cases:
        raise argparse.ArgumentTypeError("empty; name cases, e.g. P0,P1 (without --only: all)")
    return cases


def _port(text: str) -> int:
    """``--port``: a TCP port, 1 to 65535."""
    value = _integer(text)
    if not 1 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{value} is not a TCP port (1 to 65535)")
    return value


def _count(what: str, most: int | None = None) -> Any:
    """An option that counts something (seeds, workers, repetitions): an integer of 1 or more,
    and at most ``most``."""

    def parse(text: str) -> int:
        value = _integer(text)
        if value < 1:
            raise argparse.ArgumentTypeError(f"{value} {what}; it must be at least 1")
        if most is not None and value > most:
            raise argparse.ArgumentTypeError(f"{value} {what}; it must be at most {most:,}")
        return value

    return parse


DESCRIPTION = """\
ccsim: a fast, deterministic packet-level network simulator for transport-protocol research.
The same scenario file and seed give the same results, bit for bit, on any machine."""

EPILOG = """\
examples:
  ccsim run examples/random-loss.toml --out results/loss
  ccsim run examples/random-loss.toml --out results/loss5 --set links.bottleneck.loss.rate=0.05
  ccsim sweep examples/random-loss.toml --param links.bottleneck.loss.rate=0.01,0.02 \\
        --seeds 10 --out results/sweep
  ccsim reproduce p001            # paper 001's figures and report, in results/p001
  ccsim report                    # results/site/index.html: every reproduction, interactive
  ccsim explore                   # http://127.0.0.1:8765/: re-run a figure as you move it

Each command has its own --help. Scenario keys: docs/scenario.md. Errors are one line
(`ccsim: error: ...`) with exit status 1; Ctrl-C stops any command, keeping finished runs."""


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="ccsim",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    # The engine too: two builds of one version (a second install, an older checkout's) run
    # different cores, whose stored runs neither reuses, and both said "ccsim 0.1.0"
    # (campaign 61d's notice, issue 32).
    p.add_argument("--version", action="version", version=f"ccsim {_version()} (engine "
                   f"{_engine()})")  # fmt: skip
    sub = p.add_subparsers(dest="command", required=True)

    r = sub.add_parser(
        "run",
        help="run a scenario and write its results as Parquet",
        description="Run one scenario (a TOML file; keys in docs/scenario.md) and write its "
        "tables (flows, links, series, ...) as Parquet files and the resolved scenario, which "
        "replays the run, into --out; print one line per flow and per busy link.",
    )
    r.add_argument(
        "file", type=_scenario_file, help="the scenario, a TOML file (e.g. examples/*.toml)"
    )
    r.add_argument("--out", type=_folder, required=True, help="directory for the results")
    r.add_argument("--seed", type=_seed, default=None, help="replace the scenario's seed")
    r.add_argument(
        "--pcap",
        action="append",
        default=[],
        metavar="NODE[:LINK]",
        help="also capture this node's interfaces (or the one on LINK) into OUT/pcap/",
    )
    r.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="PATH=VALUE",
        help="override a scenario value, e.g. links.bottleneck.loss.rate=0.01",
    )
    r.set_defaults(func=_cmd_run)

    v = sub.add_parser(
        "validate",
        help="check a scenario without running it",
        description="Check a scenario as `ccsim run` would (the network is built, nothing is "
        "simulated) and print what it holds, or one line naming the first bad key.",
    )
    v.add_argument("file", type=_scenario_file, help="the scenario, a TOML file")
    v.add_argument("--seed", type=_seed, default=None, help="replace the scenario's seed")
    v.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="PATH=VALUE",
        help="override a scenario value before checking, e.g. links.bottleneck.rate=10Mbps",
    )
    v.set_defaults(func=_cmd_validate)

    from ccsim import bench  # the standard library only: --help stays light

    b = sub.add_parser(
        "bench",
        help=f"time the benchmark scenarios {', '.join([*bench.SCENARIOS, *bench.P1_VARIANTS])}",
        description=f"Time the benchmark scenarios {', '.join(bench.SCENARIOS)} (by default), "
        f"{', '.join(bench.ON_REQUEST)} and the generated scale cases (on request), each in a "
        "process of its own: wall time, events per second, peak memory (docs/performance.md).",
    )
    b.add_argument(
        "--repeat",
        type=_count("repetitions"),
        default=3,
        help="runs per scenario; medians are shown",
    )
    b.add_argument(
        "--only",
        type=_cases,
        default=None,
        help="comma-separated cases, e.g. P0,P1: any of "
        f"{', '.join(bench.SCENARIOS)}; {', '.join(bench.ON_REQUEST)} (on request only: paper "
        "002's full case-1 run, from the repository root); generated scale cases "
        f"{', '.join(bench.SCALE)}",
    )
    b.add_argument(
        "--scale",
        action="store_true",
        help="run the scale cases F*, FT*, T* and H* (minutes)",
    )
    b.add_argument(
        "--plot",
        type=_png,
        default=None,
        metavar="PNG",
        help="draw wall time against flows, nodes and simulated time (log-log) into PNG",
    )
    b.set_defaults(func=_cmd_bench)

    w = sub.add_parser(
        "sweep",
        help="run a scenario over parameter values and seeds",
        description="Run a scenario for every combination of the --param values and every "
        "seed 1..N, in parallel; finished runs are stored under OUT/runs, so an interrupted "
        "sweep resumes. Writes flows.parquet and links.parquet with a column per parameter.",
    )
    w.add_argument("file", type=_scenario_file, help="the scenario, a TOML file")
    w.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="PATH=V1,V2,...",
        help="a parameter to sweep, its values as --set writes them, split at the commas "
        'outside a table, array or string (queue={type="red", limit=50},{type="red", '
        "limit=100} is two); several --param give their cartesian product",
    )
    w.add_argument(
        "--seeds", type=_count("seeds", MAX_RUNS), default=1, help="seeds 1..N per point"
    )
    w.add_argument("--seed", action=_SeedIsRuns, help=argparse.SUPPRESS)
    w.add_argument(
        "--out", type=_folder, required=True, help="directory for the tables and the run store"
    )
    w.add_argument(
        "--workers",
        type=_count("workers", MAX_WORKERS),
        default=None,
        help="processes (default: one per CPU this process may use)",
    )
    w.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="PATH=VALUE",
        help="override a scenario value in every run (not one a --param sweeps)",
    )
    _add_executor_options(w)
    w.set_defaults(func=_cmd_sweep)

    rp = sub.add_parser(
        "reproduce",
        help="reproduce a paper's experiments and write a report",
        description="Run a paper's plan (experiments/<paper>/plan.toml): every figure's and "
        "table's runs, then report.md with each claim's verdict, and the reproduction's HTML "
        "site in OUT/site. Finished runs are stored, so the same command resumes. Run from the "
        "repository root.",
    )
    rp.add_argument(
        "experiment",
        nargs="?",
        default=None,
        help="the paper, e.g. p001 (a folder under ./experiments; --list shows them)",
    )
    rp.add_argument(
        "--list", action="store_true", help="list the papers (id, folder, title) and exit"
    )
    rp.add_argument("--quick", action="store_true", help="fewer points and seeds (for CI)")
    rp.add_argument(
        "--out",
        type=_folder,
        default=None,
        metavar="DIR",
        help="the reproduction's folder, holding all it writes: report.md, figures, tables, "
        "the run store (DIR/runs), the plan it ran (DIR/plan) and its HTML site (DIR/site); "
        "nothing is written outside it but --record's tables. Default: results/<id>, or "
        "results/<id>-quick with --quick ($CCSIM_RESULTS replaces results)",
    )
    rp.add_argument(
        "--workers",
        type=_count("workers", MAX_WORKERS),
        default=None,
        help="processes (default: one per CPU this process may use)",
    )
    rp.add_argument(
        "--seeds",
        type=_count("seeds", MAX_RUNS),
        default=None,
        help="override the plan's seed count",
    )
    rp.add_argument("--seed", action=_SeedIsRuns, help=argparse.SUPPRESS)
    rp.add_argument(
        "--record",
        action="store_true",
        help="keep this full run's tables (verdicts, points, summary tables) in "
        "experiments/<paper>/full-run/, where the README's numbers are checked against them",
    )
    _add_executor_options(rp)
    rp.set_defaults(func=_cmd_reproduce)

    rs = sub.add_parser(
        "report",
        help="write one offline HTML site for every reproduction under results/",
        description="Build one HTML site, readable offline, from every reproduction's report "
        "under --results: interactive figures, claims and verdicts, setup and assumptions. "
        "Each reproduction's plan is read from its own folder, so this runs from anywhere; "
        "the site folder stands alone (it links nothing outside itself).",
    )
    rs.add_argument(
        "--results",
        type=_folder,
        default=None,
        help="a folder of reproductions, or one reproduction's folder; default: results (or "
        "$CCSIM_RESULTS)",
    )
    rs.add_argument("--out", type=_folder, default=None, help="default: <results>/site")
    rs.set_defaults(func=_cmd_report)

    ex = sub.add_parser(
        "explore",
        help="a local web app: move a figure's parameters, watch it re-run",
        description="Serve a web page on this machine where a paper's figure or table re-runs "
        "as its parameters move (only to the values and ranges its plan allows); runs share "
        "ccsim reproduce's store. The plans are experiments/ under the working folder (the "
        "repository's root), else those stored with the reproductions under --results.",
    )
    ex.add_argument("--port", type=_port, default=8765, help="port to listen on (default 8765)")
    ex.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on (default 127.0.0.1: this machine only; another address "
        "lets other machines start simulations)",
    )
    ex.add_argument(
        "--results",
        type=_folder,
        default=None,
        help="where runs are stored: a folder of reproductions, or one reproduction's folder "
        "(ccsim reproduce --out's), whose run store is used (default: results, or "
        "$CCSIM_RESULTS)",
    )
    ex.add_argument(
        "--workers", type=_count("workers", MAX_WORKERS), default=2, help="runs at once (threads)"
    )
    ex.set_defaults(func=_cmd_explore)
    return p


@contextlib.contextmanager
def _signals_interrupt(received: list[int] | None = None) -> Iterator[list[int]]:
    """While the block runs, SIGINT, SIGTERM and SIGHUP raise KeyboardInterrupt, once: the
    handler ignores them from then on, so a second Ctrl-C cannot break into the clean-up after
    the first (stopping workers, saving a record, the message) with a traceback. Yields the list the
    signal's number is appended to. The previous handlers are back afterwards unless a signal
    came: then the process is on its way out, and a late Ctrl-C must not break into its exit
    either (seen: the third of three quick Ctrl-C killing the CLI after its message).

    Only the main thread can set handlers; elsewhere (ccsim's CLI called from a thread) the
    block runs with the process's handlers as they are. ``received``: the list to use, so that
    a caller knows it even when the block's start is what a signal cut.
    """
    received = [] if received is None else received
    if threading.current_thread() is not threading.main_thread():
        yield received
        return

    def interrupt(signum: int, frame: FrameType | None) -> None:
        if inside_import_locking(frame):
            # Raised there, it would leave the import lock held and the table libraries'
            # thread, joined below, waiting for it for ever (ccsim.stop_signals).
            send_again(signum)
            return
        # Caught by a handler that does nothing for the clean-up, not SIG_IGN: a second
        # signal that came before this one was handled is still pending in Python, and
        # finding SIG_IGN it raised "OSError: Signal 15 ignored due to race condition"
        # wherever the clean-up was (the explorer, SIGINT and SIGTERM at once: a traceback;
        # campaign 9, issue 32). SIG_IGN once the clean-up is done, below.
        for s in STOP_SIGNALS:
            signal.signal(s, _ignore_signal)
        received.append(signum)
        raise KeyboardInterrupt

    def unraisable(info: Any) -> None:
        # A signal handled inside a finalizer (a weakref callback, a __del__: drawing the
        # figures makes many) raised its KeyboardInterrupt there, where Python cannot let it
        # out: it printed "Exception ignored in ..." with a traceback and the command went on,
        # deaf to any further signal (campaign 9, issue 32). Armed again and sent again a
        # moment later from another thread, once the finalizer is done, so that it is raised
        # where the command can stop (lost again, it comes back here).
        if received and isinstance(info.exc_value, ResourceWarning):
            # A file the stop's KeyboardInterrupt left open (importlib's get_data, cut between
            # its open and its `with`), closed by its finalizer: under PYTHONWARNINGS=error its
            # warning is raised there, and Python printed "Exception ignored in: <_io.FileIO
            # ...>" and a traceback above the interruption's line (the CLI states matrix,
            # SIGTERM to `reproduce --list`; campaign 62b, issue 32).
            return None
        if not (isinstance(info.exc_value, KeyboardInterrupt) and received):
            return previous_hook(info)
        signum = received.pop()
        for s in armed:
            signal.signal(s, interrupt)
        send_again(signum)
        return None

    previous = {s: signal.getsignal(s) for s in STOP_SIGNALS}
    # One ignored when the block starts stays ignored (nohup's SIGHUP, a script's `ccsim &`
    # SIGINT): see ccsim.__main__, which leaves it so (campaign 12, issue 32).
    armed = [s for s, handler in previous.items() if handler is not signal.SIG_IGN]
    previous_hook = sys.unraisablehook
    sys.unraisablehook = unraisable
    for s in armed:
        signal.signal(s, interrupt)
    try:
        yield received
    finally:
        sys.unraisablehook = previous_hook
        for s, handler in previous.items() if not received else ():
            # None: a handler not set from Python; the default action is the safe guess.
            signal.signal(s, signal.SIG_DFL if handler is None else handler)
        # Stopping: ignored until the exit, by the system. Python puts the default action
        # back for a signal it handles as it exits, and a late one then killed the process
        # after its message, with the signal's status instead of the command's. Any signal
        # pending with the first has been handled (by nothing) during the clean-up.
        for s in STOP_SIGNALS if received else ():
            signal.signal(s, signal.SIG_IGN)


def _ignore_signal(signum: int, frame: object) -> None:
    """A stop signal after the first: the process is already stopping."""


def _interrupted(args: argparse.Namespace, received: list[int]) -> int:
    """Print the one line saying what an interruption kept; return the exit status."""
    kept = getattr(args, "kept", "nothing was written")
    if callable(kept):
        kept = kept()
    signum = received[0] if received else signal.SIGINT
    by = f" by {signal.Signals(signum).name}" if received else ""
    if takes_a_line_soon(sys.stderr):  # a terminal no one reads must not hold the stop
        _to_stderr(f"ccsim: interrupted{by}; {kept}")
    return 128 + int(signum)


def main(argv: Sequence[str] | None = None, *, ended: list[int] | None = None) -> int:
    """Run the command ``argv`` (the process's arguments by default) and return its status.
    ``ended``, when given, gets the status appended as the command ends, while its own signal
    handlers still hold: the entry point (ccsim.__main__) ignores a signal after that."""
    parser = build_parser()
    # Warnings (a damaged record in a sweep store) are one line, like errors.
    warnings.showwarning = _show_warning
    try:
        args, extra = parser.parse_known_args(argv)
        if extra:
            # argparse's own check named the top level ("see ccsim --help") for an argument
            # left over after a command's; the command's parser names its own help (noticed in
            # campaign 22, issue 32).
            commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
            commands.choices[args.command].error(f"unrecognized arguments: {' '.join(extra)}")
    except UsageError as e:
        _error(str(e))
        return 1
    except SystemExit as e:  # --help, --version: argparse printed them and leaves unflushed
        if e.code in (0, None) and (status := _flushed(0)) != 0:
            return status
        raise
    except OSError as e:  # the write of --help or --version itself failed (unbuffered stdout)
        return _output_failed(e)
    bad = _not_utf8_argument(args)
    if bad is not None:
        _error(bad)
        return 1
    for said in _unexpanded_home(args):
        _warning(said)
    relative = None if _working_folder_exists() else _relative_path_of(args)
    if relative is not None:
        # Read against a working folder removed while the shell was in it, a relative path
        # names nothing, and each command said so in its own words, none of them this: "results
        # is not a folder (run reproduce first)", "x.toml: no such file", "no experiments/ here"
        # (campaigns 20 and 24, issue 32). Absolute paths everywhere still work.
        _error(_working_folder_gone(relative))
        return 1
    users = frozenset(os.environ)  # the user's settings, before ccsim adds its own
    limits.fit_to_limits()
    unusable = _unusable_setting(users)
    if unusable is not None:
        _error(unusable)
        return 1
    # matplotlib's own warnings go to its logger, which Python's last-resort handler prints
    # on stderr beside ccsim's one-line messages ("Could not save font_manager cache [Errno 27]
    # File too large" under ulimit -f, campaign 33, issue 32): what they mean, a command says
    # in its own words when it matters.
    logging.getLogger("matplotlib").addHandler(logging.NullHandler())
    threads = 2 * args.workers if args.command == "explore" else 0
    refused = limits.check(args.command, threads)
    local_pool = args.command in ("sweep", "reproduce") and args.executor == "local"
    if refused is None and local_pool and not getattr(args, "list", False):
        # Before anything is written: found as the pool started, a reproduction had stored its
        # plan/ in --out already (campaign 38, issue 32).
        refused = limits.check_semaphores("the worker processes")
        if refused is None:
            refused = limits.check_fork_server("the worker processes")
    if refused is not None:
        _error(refused)
        return 1
    backend = _matplotlib_headless()
    _matplotlib_writable_config()
    received: list[int] = []
    status: int | None = None
    try:
        with _signals_interrupt(received):
            status = _dispatch(args, received)
            if ended is not None:
                ended.append(status)
    except KeyboardInterrupt:
        # A stop signal handled in the instant the block began or ended, outside the command's
        # own catching: it left the command as a bare KeyboardInterrupt and the process died
        # of SIGINT without its line, whatever the signal (the CLI states matrix: SIGHUP to
        # `reproduce --list`'s group, status -2; stop 54, issue 32). Once the command has
        # ended its output is whole, and its status stands, as ccsim.__main__ treats a late
        # signal. One not ours (the entry point's, the caller's) goes on to its owner.
        if not received:
            raise
        if status is None:
            return _interrupted(args, received)
    finally:
        if backend is not None:  # the caller's again (`%run -m ccsim` in a notebook's kernel)
            os.environ["MPLBACKEND"] = backend
    return status


def _unexpanded_home(args: argparse.Namespace) -> list[str]:
    """A warning for each output folder whose name starts with a ``~`` the shell did not
    expand (quoted in a script, ``--out="~/r1"``, or ``CCSIM_RESULTS='~/results'`` in a
    systemd unit or an .env file). ccsim writes such a folder where it says, a folder named
    ``~`` in the working folder (decided in campaign 19), but "results: ~/r1/" reads as the
    home folder, and a later ``rm -r ~`` to clean up the stray folder deletes the home
    (campaign 38, issue 32)."""
    named = [(f"--{name}", getattr(args, name, None)) for name in ("out", "results", "plot")]
    if not any(value for _, value in named):  # the environment's folder is used
        named.append(("$CCSIM_RESULTS", os.environ.get("CCSIM_RESULTS")))
    said = []
    for option, value in named:
        text = os.fspath(value) if isinstance(value, (str, os.PathLike)) else ""
        if isinstance(text, str) and text.startswith("~"):
            head = text.split("/", 1)[0]
            said.append(f"{option} {text}: a folder named {head!r} in the working folder "
                        f"({Path.cwd() / head}), as ccsim does not expand ~ (a shell does, "
                        "unquoted); for your home folder, write $HOME instead")  # fmt: skip
    return said


def _matplotlib_headless() -> str | None:
    """Leave the user's MPLBACKEND out of this process: ccsim draws with Agg alone
    (``matplotlib.use("Agg")`` before pyplot), but matplotlib checks the variable as it is
    imported, and a name it no longer knows (``Qt4Agg`` or ``GTKAgg`` from an old dotfile,
    removed in matplotlib 3.5 and 3.0) failed every reproduction and ``bench --plot`` with
    "ccsim needs matplotlib, which is installed but cannot be imported (Key backend: 'Qt4Agg'
    is not a valid value for backend ...): install ccsim again" (campaign 46, issue 32).

    Returns the variable's value, for the caller to put back once the command has ended.
    """
    backend = os.environ.get("MPLBACKEND")
    if backend is not None:
        os.environ["MPLBACKEND"] = "agg"
    return backend


def _matplotlib_writable_config() -> None:
    """Give matplotlib a folder of its own for its configuration and font cache when the ones
    it would use ($XDG_CONFIG_HOME or ~/.config, $XDG_CACHE_HOME or ~/.cache, each
    /matplotlib) cannot be written: a home folder read-only or owned by another user. It then
    made a temporary one itself and said so on stderr in its own words, a paragraph beside
    ccsim's one-line messages ("Matplotlib created a temporary cache directory at ..."); under
    a umask of 0777 that folder had mode 000, and its removal at exit printed a traceback
    (campaign 30, issue 32). Ours is made with mode 0700 and removed at exit."""
    if os.environ.get("MPLCONFIGDIR"):
        return
    try:
        home: Path | None = Path(os.environ.get("HOME") or "~").expanduser()
    except RuntimeError:
        # No $HOME and no entry in the user database: a container's user id of its own
        # (`docker run --user 1234`), `env -u HOME setpriv --reuid 1234`. Every command ended
        # here in a traceback, "Could not determine home directory" (campaign 38, issue 32),
        # and matplotlib, which looks for the same home, would have failed the same way.
        home = None
    umask = os.umask(0o022)
    os.umask(umask)
    for variable, default in (("XDG_CONFIG_HOME", ".config"), ("XDG_CACHE_HOME", ".cache")):
        base = os.environ.get(variable)
        if base and Path(base).is_absolute():
            folder = Path(base)
        elif home is not None:
            folder = home / default
        else:
            break
        folder = folder / "matplotlib"
        # The folder, or the nearest one above it that exists (matplotlib makes the rest,
        # which a umask taking the owner's write or search bits makes unusable).
        try:
            made = not folder.exists()
            while not folder.exists() and folder.parent != folder:
                folder = folder.parent
            usable = folder.is_dir() and os.access(folder, os.W_OK | os.X_OK)
        except OSError:
            # A home the user may not enter (another user's, mode 0700: `su user` without
            # `-`, `setpriv --reuid`), where nothing can even be looked at: every command
            # ended in a traceback, "Permission denied: '/root/.config/matplotlib'"
            # (campaign 43a, issue 32).
            break
        if not usable:
            break
        if made and umask & 0o300:
            break
    else:
        return
    try:
        made = Path(tempfile.mkdtemp(prefix="ccsim-matplotlib-"))
        made.chmod(0o700)
    except OSError:  # no temporary folder either: matplotlib says what it can
        return
    os.environ["MPLCONFIGDIR"] = str(made)
    atexit.register(_discard_matplotlib_config, made)


def _discard_matplotlib_config(folder: Path) -> None:
    from ccsim.staging import discard

    discard(folder)


def _not_utf8_argument(args: argparse.Namespace) -> str | None:
    """The error for the first text argument (not a path: those have their own checks) that is
    not UTF-8, or None. A byte such as 0xff reaches Python as a lone surrogate, and the code
    that took the value named its own parameter: `--set` was refused as "overrides: U+DCFF is
    a lone surrogate", `--param` as "spec: ...", `--pcap` as "value: ...", and `ccsim
    reproduce $'m\\xff'` was "internal error (TypeError): name: expected a string, not str"
    (campaign 22, issue 32)."""
    for dest, value in vars(args).items():
        for text in value if isinstance(value, list) else [value]:
            bad = _not_utf8(text) if isinstance(text, str) else None
            if bad is not None:
                shown, byte, cure = bad
                option = dest if dest == "experiment" else "--" + dest.replace("_", "-")
                if cure is not None:
                    return f"argument {option}: {shown!r}: {cure}"
                return (f"argument {option}: {shown!r} is not UTF-8 (byte 0x{byte:02x}); "
                        "ccsim reads its arguments as UTF-8 text")  # fmt: skip
    return None


def _dispatch(args: argparse.Namespace, received: list[int]) -> int:
    """Run the command; one that fails or is interrupted leaves none of the folders above and
    at its --out that it made and left empty. A sweep or report stopped by Ctrl-C, SIGTERM or
    a closed terminal before it wrote anything said "nothing was written" and left the new
    parents of its --out (`--out new/a/out` left new/a): the check of --out removes what it
    makes, the command's own writing made them again (the CLI states matrix's group signals,
    campaign 40, issue 32)."""
    try:
        absent = _absent_output_folders(args)
    except KeyboardInterrupt:  # reproduce's default folder reads the plan: nothing made yet
        return _interrupted(args, received)
    status = _run_command(args, received)
    if status != 0:
        _remove_empty_folders(absent)
    return status


def _absent_output_folders(args: argparse.Namespace) -> list[Path]:
    """--out and the folders above it that do not exist yet, outermost first (none where the
    working folder is gone and --out is relative: that is refused before anything is made)."""
    out = getattr(args, "out", None)
    if not out and args.command == "reproduce":
        out = _default_reproduction_folder(args)
    if not out:
        return []
    try:
        absolute = Path(out).absolute()
    except OSError:  # os.getcwd() of a removed working folder
        return []
    return [p for p in [*reversed(absolute.parents), absolute] if not os.path.lexists(p)]


def _default_reproduction_folder(args: argparse.Namespace) -> Path | None:
    """The folder ``reproduce`` without --out writes into (``results/<plan>[-quick]``, under
    $CCSIM_RESULTS when set), or None when there is none to name (``--list``, a paper that
    cannot be found or read: the command itself says why). A reproduction failing there before
    it kept anything (a home folder's quota full at its plan.toml) left results/m01-quick/plan
    empty where --out's would have been removed (campaign 41, issue 32)."""
    if args.list or args.experiment is None:
        return None
    try:
        from ccsim.experiment import default_out, find_experiment, load_plan

        return default_out(load_plan(find_experiment(args.experiment)).id, args.quick)
    except Exception:  # a package missing, a paper not found: the command names it
        return None


def _run_command(args: argparse.Namespace, received: list[int]) -> int:
    try:
        return _flushed(int(args.func(args)))
    except (KeyboardInterrupt, SystemExit) as e:
        # Raised by a package's own code as it loads (``sys.exit()`` at a check of the CPU
        # or of a licence), not by a stop signal: the interpreter printed its bare words
        # ("PIL: cannot start") and ended 1, or said "ccsim: interrupted" of no signal, and
        # `ccsim run` met it only after its run (campaign 50, issue 32).
        package = None if received else _package_failing_to_load(e)
        if package is None or not raised_importing(e):
            if isinstance(e, SystemExit):
                raise
            return _interrupted(args, received)
        _error(_not_installed("ccsim", package, e))
        return 1
    except ImportError as e:  # ModuleNotFoundError, or a package there that fails to load
        if received:  # a stop signal landed in the import (stop_signals.import_failed_by_a_stop)
            return _interrupted(args, received)
        if (met := _limit_met(e)) is not None:  # a library that could not be mapped
            return met
        if (failed := _stdout_failing(e)) is not None:
            return _output_failed(failed)
        # The package missing, under the one that failed for it: pandas re-raises numpy's
        # ModuleNotFoundError as "Unable to import required dependency numpy", naming no
        # module, and `ccsim reproduce --list` called that an internal error (campaign 19).
        while not e.name and isinstance(e.__cause__, ImportError):
            e = e.__cause__
        package = _package_of_extension(e) or (e.name or "").split(".")[0]
        loader = _package_failing_to_load(e)
        if package and loader not in (None, package) and _users_module(package):
            # A module of the user's named like a package a dependency takes when it can
            # (tqdm's envwrap): the dependency is what ccsim needs; the module is named after
            # it. It read "ccsim needs envwrap" (campaign 50, issue 32).
            package = str(loader)
        listed = re.match(r"Unable to import required dependencies:\s*([A-Za-z_]\w*):", str(e))
        if not package and listed:
            # pandas 2.0 (pyproject.toml allows pandas>=2.0) lists what it lacks in its
            # message, with no cause to follow: "internal error (ImportError): Unable to
            # import required dependencies:; numpy: ..." (campaign 27, issue 32).
            package = listed.group(1)
        if not package and str(e).startswith("Unable to find a usable engine"):
            # pandas' words for a pyarrow it cannot use (too old, or failing to load), with
            # no module named: "internal error (ImportError): Unable to find a usable engine;
            # tried using: 'pyarrow', 'fastparquet'" (the extras matrix, campaign 30).
            package = "pyarrow"
        if not package:
            # A package's own check of another, raised from its __init__ with no module
            # named: pyarrow 26 under a user site's numpy 1.26 (which pyproject.toml's range
            # allows) was "internal error (ImportError): pyarrow requires NumPy 2.0 or newer,
            # found 1.26.4" (campaign 33, issue 32). The module whose code raised it is named.
            package = _package_failing_to_load(e) or ""
        if not package or package == "ccsim":  # ccsim's own module: a bug, not an install
            return _internal_error(e)
        _error(_not_installed("ccsim", package, e))
        return 1
    except BrokenPipeError:
        return _reader_gone()
    except OSError as e:
        if (met := _limit_met(e)) is not None:
            return met
        if (failed := _stdout_failing(e)) is not None:
            return _output_failed(failed)
        package = _package_failing_to_import(e)
        if package is not None:
            _error(_not_installed("ccsim", package, e))
            return 1
        if e.filename is None and e.errno == errno.ENOENT and not _working_folder_exists():
            # A relative path is read against the working folder, removed while the shell was
            # in it: that was "[Errno 2] No such file or directory", naming nothing (campaign
            # 20, issue 32).
            _error(_working_folder_gone("a relative path"))
            return 1
        _error(os_error_text(e))
        return 1
    except Exception as e:
        # Python's RuntimeError around our interrupt, or the ImportError C code made of it
        # (said by a command as the package it needs: `ccsim explore`'s numpy).
        if received and (raised_by_a_stop(e) or import_failed_by_a_stop(e)):
            return _interrupted(args, received)
        if (met := _limit_met(e)) is not None:  # MemoryError, "can't start new thread"
            return met
        if (failed := _stdout_failing(e)) is not None:
            return _output_failed(failed)
        package = _package_failing_to_load(e) or _shadowed_module_lacking(e)
        if package is not None:
            _error(_not_installed("ccsim", package, e))
            return 1
        raiser = _innermost_package(e)
        setting = _setting_failed_on(raiser, e) if raiser is not None else None
        if setting is not None:
            # A dependency's own setting, read as ccsim used it: matplotlib's
            # SOURCE_DATE_EPOCH=abc as a reproduction drew its figures was "invalid literal
            # for int() with base 10: 'abc'", naming nothing (campaign 47, issue 32).
            state = getattr(e, "ccsim_state", None)  # what staging kept of the output
            _error(f"{raiser} failed with {setting} in the environment ({e}): mend or unset it"
                   + (f"; {state}" if state else ""))  # fmt: skip
            return 1
        if isinstance(e, (Error, ValueError, RuntimeError)):
            _error(str(e))
            return 1
        return _internal_error(e)


def _limit_met(e: BaseException) -> int | None:
    """Status 1 once ``e`` is said as the resource limit it met (open files, processes,
    memory: ``limits.exhausted``), or None when it is something else."""
    said = limits.exhausted(e)
    if said is None:
        return None
    _error(said)
    return 1


def _relative_path_of(args: argparse.Namespace) -> str | None:
    """The first path the command would read against the working folder, in words: a path
    argument that is not absolute, or a default that is relative (``results/``,
    ``experiments/``); None when every path it uses is absolute."""
    for option in ("file", "out", "results", "plot"):
        value = getattr(args, option, None)
        if value is not None and not Path(value).is_absolute():
            return f"{'the scenario file' if option == 'file' else '--' + option} {value}"
    command = args.command
    experiment = getattr(args, "experiment", None)
    if command == "reproduce" and (args.list or not Path(experiment or "").is_absolute()):
        return "experiments/ (where the papers are looked for)"
    results = os.environ.get("CCSIM_RESULTS") or "results"
    uses_results = command in ("report", "explore") or (command == "reproduce" and not args.out)
    if uses_results and not getattr(args, "results", None) and not Path(results).is_absolute():
        return f"the results folder {results}"
    return None


def _working_folder_gone(relative: str) -> str:
    """The error for ``relative`` (a path in words) read from a removed working folder."""
    return (
        f"the working folder no longer exists (removed while the shell was in it), so "
        f"{relative} names nothing: cd to a folder that exists, or give absolute paths"
    )


def _working_folder_exists() -> bool:
    try:
        os.getcwd()
    except FileNotFoundError:
        return False
    return True


def _package_of_extension(e: ImportError) -> str | None:
    """The top-level package holding the extension module that ``e`` failed to load, or None.
    CPython names such a failure by the module's last name alone, its file beside it: a shared
    library of pyarrow's gone (removed while the command started) was "ccsim needs lib, which
    is installed but cannot be imported (libarrow_substrait.so.2600: cannot open shared object
    file)" (the install-change matrix, campaign 43, issue 32)."""
    from importlib.machinery import EXTENSION_SUFFIXES

    path = getattr(e, "path", None)
    if not isinstance(path, str) or not e.name or "." in e.name:
        return None
    # An extension's file only: "cannot import name 'x' from 'envwrap'" carries the path of
    # envwrap.py, a module, not a package's library (campaign 50, issue 32).
    if not path.endswith(tuple(EXTENSION_SUFFIXES)):
        return None
    return package_of_file(path)


def _users_module(package: str) -> bool:
    """Whether ``package`` is loaded from a file or folder of the user's that no installed
    distribution holds (:func:`ccsim.staging.shadowing_file`), and no distribution ccsim
    requires itself has its name: a package only a dependency takes (anyio's sniffio) is
    named after that dependency whether or not it is installed. A sniffio.py shadowing an
    installed sniffio read "ccsim needs sniffio, which is shadowed by ...", and the same file
    with no sniffio installed "ccsim needs anyio, which loads sniffio, ..." (campaign 51,
    issue 32)."""
    from importlib import metadata

    if shadowing_file(package) is None:
        return False
    try:
        holders = metadata.packages_distributions().get(package)
        if not holders:
            return True
        # Its name, markers and extras aside: "dask[distributed]>=2024.1 ; extra == 'dask'".
        own = {_normalized(re.split(r"[\s\[<>=!~;(]", r, maxsplit=1)[0])
               for r in metadata.requires("ccsim") or []}  # fmt: skip
        return not any(_normalized(d) in own for d in holders)
    except Exception:  # metadata that cannot be read: not this case
        return False


def _normalized(distribution: str) -> str:
    """A distribution's name as pip compares names (PEP 503): tomli-w and tomli_w are one."""
    return re.sub(r"[-_.]+", "-", distribution).lower()


def _package_failing_to_load(e: BaseException) -> str | None:
    """The package (not ccsim) whose module code raised ``e`` while it was being imported, or
    None. A binary built against another numpy raises ValueError ("numpy.dtype size changed,
    may indicate binary incompatibility"), not ImportError, and it was shown alone, naming
    neither the package nor the cure (campaign 20, issue 32). A module's own code runs in a
    frame named ``<module>``; ccsim's calls into a package once loaded have none."""
    tb = e.__traceback__
    while tb is not None:
        frame = tb.tb_frame
        if frame.f_code.co_name == "<module>":
            package = str(frame.f_globals.get("__name__", "")).split(".")[0]
            if package and package not in ("ccsim", "__main__"):
                return package
        tb = tb.tb_next
    return None


def _package_failing_to_import(e: OSError) -> str | None:
    """The package (not ccsim) being imported when ``e`` was raised, or None. A file of the
    package that cannot be read (a module left mode 0600 by an install under another user's
    umask 077: "[Errno 13] Permission denied") fails in the import system's own code, before
    any of the package's runs; a shared library its code loads with ctypes fails in that
    code. Both were said as a bare OSError, ".../site-packages/matplotlib/pyplot.py:
    permission denied" or "libfoo.so: cannot open shared object file", naming neither the
    package nor the cure (campaign 49, issue 32). One a package's own module code raised as it
    loaded counts without the import system's frames, which CPython removes from an `import`
    statement's traceback: h11's or anyio's, imported so by the explorer, was said as a bare
    "[Errno 5] I/O error" (campaign 64b, issue 32)."""
    package = _package_failing_to_load(e)
    if package is None:
        if not raised_importing(e):
            return None
        if isinstance(e.filename, str):
            package = package_of_file(e.filename)
    return None if package in (None, "ccsim", "__main__") else package


def _shadowed_module_lacking(e: BaseException) -> str | None:
    """The package a user's module shadows when ``e`` is a name asked of that module ("module
    'plotly' has no attribute '__version__'"), or None. Such a module imports, so no look for
    a missing or broken package stops it, and ccsim's first use of it was said as "internal
    error (AttributeError)", naming neither the file nor the cure (campaign 34, issue 32)."""
    said = re.match(r"module '([A-Za-z_]\w*)[\w.]*' has no attribute", str(e))
    if not isinstance(e, AttributeError) or said is None:
        return None
    lacking = said.group(1)
    if shadowing_file(lacking) is None:
        return None
    raiser = _innermost_package(e)
    if raiser not in (None, lacking) and _users_module(lacking):
        # Named like a package a dependency takes when it can (anyio's sniffio, as the
        # explorer starts): the dependency is what ccsim needs, and the module is named after
        # it; "ccsim needs sniffio" named a package ccsim does not use (campaign 50, issue 32).
        return raiser
    return lacking


def _internal_error(e: Exception) -> int:
    """A bug rather than bad input: one line; CCSIM_TRACEBACK=1 shows where."""
    if os.environ.get("CCSIM_TRACEBACK"):
        raise e
    _error(f"internal error ({type(e).__name__}): {e} (CCSIM_TRACEBACK=1 shows the traceback)")
    return 1


def _not_installed(who: str, package: str, error: BaseException | None = None) -> str:
    """The error for one of ccsim's dependencies missing (an install with pip's --no-deps, or
    a package removed since) or there but failing to load (``error`` not a
    ModuleNotFoundError: a shared library it was built against gone, a version another
    package does not take): installing ccsim again brings it. A broken one was "internal
    error (ImportError): libarrow.so...: cannot open shared object file", naming neither the
    package nor the cure (campaign 16, issue 32)."""
    if isinstance(error, Warning):
        # A warning made an error (PYTHONWARNINGS=error, -W error) as the package loaded:
        # pandas' about an optional package of its own too old for it (bottleneck 1.3 beside
        # pandas 3) was "installed but cannot be imported ...: install ccsim again", which
        # brings back the same packages and the same warning (campaign 46, issue 32).
        return (f"{who} needs {package}, which cannot be imported while warnings are errors "
                f'(PYTHONWARNINGS=error or -W error) for its warning "{error}": do what it '
                "says, or run without warnings as errors")  # fmt: skip
    setting = _setting_failed_on(package, error)
    if setting is not None:
        cause = error.__cause__ or error if error is not None else error
        return (f"{who} needs {package}, which cannot be imported with {setting} in the "
                f"environment ({cause}): mend or unset it")  # fmt: skip
    why = "which is not installed"
    if error is not None and not isinstance(error, ModuleNotFoundError):
        # A module of ccsim's that says so itself for its Python API (ccsim.sweep's "ccsim.sweep
        # needs tqdm, which is installed but cannot be imported: ...") is said once: the line
        # read "ccsim needs tqdm, which is installed but cannot be imported (ccsim.sweep needs
        # tqdm, which is installed but cannot be imported: boom)" (campaign 49, issue 32).
        why = "which is installed but cannot be imported"
        own = rf"ccsim[\w.]* needs {re.escape(package)}, {why}: "
        why = f"{why} ({re.sub('^' + own, '', failure_text(error))})"
    # A module of the user's named like the package, first on sys.path (PYTHONPATH, or the
    # working folder under `python -m ccsim`): "matplotlib, which is not installed" sent the
    # user to reinstall what was there; a numpy.py under pandas or pyarrow ("module 'numpy'
    # has no attribute '__version__'") as well (campaign 33, issue 32).
    said = str(error or "")
    named = re.findall(r"(?:module|from) '([A-Za-z_]\w*)", said)
    # A module the package looked for as it loaded, named bare in its own words: pandas'
    # "Can't determine version for bottleneck" for a bottleneck.py of the user's (an optional
    # package pandas takes when it can import it) was "install ccsim again", which changes
    # nothing (campaign 48, issue 32). Only a module loaded, outside the standard library, is
    # looked at: a word of the message is not a module otherwise.
    not_theirs = {*getattr(sys, "stdlib_module_names", ()), "ccsim", "__main__"}
    named += [w for w in re.findall(r"[A-Za-z_]\w*", said)
              if w in sys.modules and w not in not_theirs]  # fmt: skip
    for name in dict.fromkeys([package, *named]):
        shadow = _best_effort(shadowing_file, name)
        if shadow is not None:
            through = "" if name == package else f", which loads {name}"
            return (f"{who} needs {package}{through}, which is shadowed by {shadow} "
                    f"({shadow_words(shadow)}): {shadow_cure(shadow)}")  # fmt: skip
    # The package's files gone but its metadata (*.dist-info) left, as an uninstall or a copy
    # of site-packages cut short leaves it: pip takes it as installed, so "install ccsim
    # again" answered "Requirement already satisfied" and the same line came back; and it is
    # not "not installed" to pip (campaign 49, issue 32).
    named_missing = not isinstance(error, ImportError) or isinstance(error, ModuleNotFoundError)
    left = _best_effort(distribution_left, package) if named_missing else None
    if left is not None:
        return (f"{who} needs {package}, whose files are gone though its metadata is left, so "
                f"pip takes {left} as installed: pip install --force-reinstall -c "
                f"constraints.txt {left} (from the repository root)")  # fmt: skip
    # A package the dependency takes when it can import it, installed but broken (an
    # ImportError of its own, not a shadow): "ccsim needs markdown_it, which is installed but
    # cannot be imported (...): install ccsim again", which leaves that package as it is
    # (campaign 48b, issue 32). It is named, with the cures that touch it.
    if error is not None and not isinstance(error, ModuleNotFoundError):
        inner = _innermost_package(error)
        optional = _best_effort(optional_package_failing, error, package, inner)
        if optional is not None:
            return (f"{who} needs {package}, which loads {inner} ({optional}, installed beside "
                    f"it and not needed by ccsim), which cannot be imported "
                    f"({failure_text(error)}): reinstall it (pip install --force-reinstall "
                    f"{optional}) or uninstall it")  # fmt: skip
    # A file of an installed package cut short or emptied (a full disk as pip wrote it, an
    # install stopped midway, a disk's fault): pip takes the package as installed, so
    # "install ccsim again" answered "Requirement already satisfied" for it and the same line
    # came back (campaign 50b, issue 32). The file and the distribution pip can rewrite it
    # from are named.
    damaged = _best_effort(file_not_as_installed, error) if error is not None else None
    if damaged is not None:
        file, dist = damaged
        return f"{who} needs {package}, {why}: {reinstall_cure(file, dist)}"
    # Its own metadata (or another's) unreadable as it loaded: plotly reads its version so, and
    # a METADATA with a byte that is not UTF-8 was "install ccsim again", which pip cannot do
    # while it cannot read that file either (stop 61, issue 32). The folder and its cure.
    if isinstance(error, UnicodeDecodeError) and _raised_reading_metadata(error):
        from ccsim.cluster import damaged_metadata

        unreadable = _best_effort(damaged_metadata)
        if unreadable is not None:
            return f"{who} needs {package}, which cannot be imported: {unreadable}"
    return (
        f"{who} needs {package}, {why}: install ccsim again with its dependencies (pip "
        "install -c constraints.txt . from the repository root)"
    )


#: The prefixes of the environment variables a package reads, where they are not (only) its
#: name in capitals and an underscore (TQDM_, PANDAS_): numpy's NPY_*, numexpr's
#: OMP_NUM_THREADS, matplotlib's SOURCE_DATE_EPOCH (written into each SVG figure).
_SETTINGS_PREFIXES = {
    "matplotlib": ("MPL", "SOURCE_DATE_EPOCH"),
    "dask": ("DASK_",),
    "distributed": ("DASK_",),
    "numpy": ("NUMPY_", "NPY_"),
    "numexpr": ("NUMEXPR_", "OMP_"),
}


def _packages_raising(error: BaseException) -> list[str]:
    """The top-level packages (not ccsim) whose code is in ``error``'s traceback, or in its
    cause's or context's: pandas failing as it loads numexpr, which failed on a setting of
    its own, names both."""
    found: list[str] = []
    for e in (error, error.__cause__, error.__context__):
        tb = e.__traceback__ if e is not None else None
        while tb is not None:
            name = str(tb.tb_frame.f_globals.get("__name__", "")).split(".")[0]
            if name and name not in ("ccsim", "__main__") and name not in found:
                found.append(name)
            tb = tb.tb_next
    return found


_T = TypeVar("_T")


def _best_effort(find: Callable[..., _T], *args: Any) -> _T | None:
    """``find(*args)``, or None when it raises: the words for a package that failed to load
    look into the installed distributions, and doing so may load that package again and meet
    it failing again. zipp (which importlib_metadata loads when it first looks into a
    distribution) raising as it loaded ended a Dask sweep with its traceback, and packaging
    raising did the same to reproduce (the extras matrix, stop 61, issue 32): the line is
    then said without that part. A stop signal's KeyboardInterrupt (raised from ccsim's own
    handler) goes on."""
    try:
        return find(*args)
    except (Exception, SystemExit, KeyboardInterrupt) as e:
        if isinstance(e, KeyboardInterrupt) and _innermost_package(e) is None:
            raise
        return None


def _raised_reading_metadata(error: BaseException) -> bool:
    """Whether ``error`` was raised while an installed distribution's metadata was read
    (importlib.metadata's frames in its traceback)."""
    tb = error.__traceback__
    while tb is not None:
        module = str(tb.tb_frame.f_globals.get("__name__", ""))
        if module.startswith(("importlib.metadata", "importlib_metadata")):
            return True
        tb = tb.tb_next
    return False


def _innermost_package(error: BaseException) -> str | None:
    """The top-level package whose code raised ``error`` itself (its traceback's last frame),
    or None when that is ccsim's own code: an error ccsim raises in its own words, from
    another's, already says what it means."""
    tb = error.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is None:
        return None
    name = str(tb.tb_frame.f_globals.get("__name__", "")).split(".")[0]
    return None if not name or name in ("ccsim", "__main__") else name


def _setting_failed_on(package: str, error: BaseException | None) -> str | None:
    """``NAME='value'`` of the environment variable a package failed on, or None: one of the
    settings of the package, or of a package whose code raised the error (TQDM_*, DASK_*,
    MPL*, NUMEXPR_*, ...), whose name the error says, or whose value the error quotes (an
    empty one quoted as ``''``); or any variable whose value is the missing module's dotted
    name. tqdm, dask and distributed read theirs as they load: `TQDM_MININTERVAL=abc`,
    `DASK_DISTRIBUTED__COMM__OFFLOAD=abc` and `DASK_DISTRIBUTED__CLIENT__SECURITY_LOADER=nomod.x`
    were "installed but cannot be imported" or "ccsim needs nomod, which is not installed",
    with "install ccsim again" for a cure, which brings back the same packages (campaign 46,
    issue 32). An empty value (`PANDAS_FUTURE=`, `NUMPY_MADVISE_HUGEPAGE=`), a setting of
    the package that pandas loads (`NUMEXPR_NUM_THREADS=abc`) and matplotlib's
    `SOURCE_DATE_EPOCH=abc` as a figure was drawn were still "install ccsim again", or
    "invalid literal for int() with base 10: 'abc'" naming nothing (the settings matrix,
    campaign 47, issue 32)."""
    if error is None:
        return None
    said = " ".join(str(e) for e in (error, error.__cause__, error.__context__) if e is not None)
    prefixes: tuple[str, ...] = ()
    for name in [package, *_packages_raising(error)]:
        prefixes += _SETTINGS_PREFIXES.get(name, (f"{name.upper()}_",))
    for name, value in sorted(os.environ.items()):
        value = value.strip()
        if isinstance(error, ModuleNotFoundError) and error.name:
            if value and (value == error.name or value.startswith(error.name + ".")):
                return f"{name}={value!r}"
        elif name.startswith(prefixes) and (
            re.search(rf"(?<![\w.]){re.escape(name)}(?![\w.])", said)
            or (value and re.search(rf"(?<![\w.]){re.escape(value)}(?![\w.])", said))
            or (not value and re.search(r"(?<!\w)(''|\"\")", said))
        ):
            return f"{name}={value!r}"
    return None


#: The settings of numexpr (which pandas loads when it is installed) that its extension
#: module reads as it loads, in C: one that is not a positive integer is said on stderr
#: there, in an unterminated line of its own ("Error.  nthreads must be a positive integer"
#: above the command's first line, status 0: the settings matrix, campaign 47, issue 32).
_NUMEXPR_COUNTS = ("NUMEXPR_MAX_THREADS",)


def _unusable_setting(users: frozenset[str]) -> str | None:
    """The error for a dependency's setting in the environment that would be complained of
    on stderr in its own words, outside ccsim's, as the dependency loads; or None. ``users``:
    the variables the user set (ccsim's own, as ``limits.fit_to_limits`` sets them, are
    not the user's to mend)."""
    import importlib.util

    for name in _NUMEXPR_COUNTS:
        value = os.environ.get(name)
        if value is None or (re.fullmatch(r"\s*\+?[0-9]+", value) and int(value) > 0):
            continue
        try:
            installed = importlib.util.find_spec("numexpr") is not None
        except (ImportError, ValueError):
            installed = False
        if installed:
            return (f"{name}={value!r} in the environment is not a positive integer (the "
                    "most threads numexpr, which pandas loads, may start): mend or unset "
                    "it")  # fmt: skip
    return _native_setting_failure(users)


#: The prefixes of settings read by the C code of libraries numpy and pyarrow load, which,
#: set to a value they cannot use, say so without naming it or end the process: Arrow's
#: jemalloc's (JE_ARROW_MALLOC_CONF: "<jemalloc>: Conf string ends with key" above a status-0
#: output) and the Fortran runtime of numpy's OpenBLAS (GFORTRAN_*: every command ended with
#: status 3 and "Internal Error: insert(): Duplicate key found!" as numpy loaded, for
#: GFORTRAN_STDOUT_UNIT=5 or GFORTRAN_STDIN_UNIT=''). Found by the settings matrix noting
#: ``getenv`` calls (campaign 47, issue 32). Arrow's own (ARROW_*, ACERO_*) are not checked:
#: Arrow reads each as it first uses what it sets, says one it cannot use on stderr naming it
#: ("Invalid value for ARROW_IO_THREADS: 'abc'"), and goes on with its default, the output
#: the same.
_NATIVE_SETTING_PREFIXES = ("JE_ARROW_", "GFORTRAN_")
#: What loads those libraries and has each read its settings (jemalloc's as Arrow's pools
#: start and a Parquet table is written). The working folder is taken off sys.path first, as
#: ``-c`` puts it there and ccsim's own start does not; warnings are not this check's
#: business.
_NATIVE_LOAD = ("import sys; sys.path.pop(0); import io, numpy, pyarrow as pa, pyarrow.parquet; "
                "pa.default_memory_pool(); pa.io_thread_count(); "
                "pa.parquet.write_table(pa.table({'x': [1.0]}), io.BytesIO())")  # fmt: skip


def _native_setting_failure(users: frozenset[str]) -> str | None:
    """The error for a setting of ``_NATIVE_SETTING_PREFIXES`` in the environment that
    numpy and pyarrow, loaded under it in a child, complain of or die on; or None. Only when
    one is set (rare), so a command pays for the child only then (about 0.3 s)."""
    import subprocess

    names = sorted(n for n in users & os.environ.keys() if n.startswith(_NATIVE_SETTING_PREFIXES))
    if not names:
        return None
    try:
        child = subprocess.run([sys.executable, "-W", "ignore", "-c", _NATIVE_LOAD],
                               stdin=subprocess.DEVNULL, capture_output=True, text=True,
                               errors="replace", timeout=120, check=False)  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None  # no look was possible: the command goes on and meets what it meets
    said = [re.sub(r"^\S+\.cc:\d+: ", "", ln.strip()) for ln in child.stderr.splitlines()]
    said = [ln for ln in said if ln]
    if child.returncode == 0 and not said:
        return None
    named = [n for n in names if any(n in ln for ln in said)] or names
    settings = ", ".join(f"{n}={os.environ[n]!r}" for n in named)
    it = "it" if len(named) == 1 else "them"
    if child.returncode != 0:
        # What the process ending said is the library's, not ccsim's, and libgfortran's
        # ("Internal Error: insert(): Duplicate key found!") would read as ccsim's own.
        what = f"cannot be loaded under {it} (a program loading them ends with status "
        what += f"{child.returncode}; python -c 'import numpy' shows it)"
    else:
        what = f'loaded under {it}, say "{said[0][:200]}"'
    return f"{settings} in the environment: numpy and pyarrow {what}: mend or unset {it}"


def _flushed(status: int) -> int:
    """``status`` once the command's output is flushed; a reader gone away or a full disk
    fails here, not in the interpreter's exit (which would lose the message, or the status)."""
    try:
        if sys.stdout is not None:
            with naming_the_file(STDOUT):
                sys.stdout.flush()
    except OSError as e:
        return _output_failed(e)
    return status


def _stdout_failing(e: BaseException) -> OSError | None:
    """stdout's own failure, named so, when ``e`` (or an error it was raised from) is an
    OSError naming no file that a write to stdout fails with now too; or None. A package
    printing as it loads, to a terminal that hung up (EIO, SIGHUP ignored) or to /dev/full
    (ENOSPC), failed its import with it, said as that package failing: "ccsim needs tqdm,
    which is installed but cannot be imported ([Errno 5] Input/output error): install ccsim
    again", or a bare "[Errno 28] No space left on device" (campaign 51, issue 32)."""
    seen: list[BaseException] = []
    cause: BaseException | None = e
    while cause is not None and len(seen) < 8 and all(cause is not s for s in seen):
        seen.append(cause)
        if isinstance(cause, OSError) and cause.filename is None and cause.errno:
            try:
                os.write(sys.stdout.fileno(), b"")  # a write of nothing: the device's answer
            except OSError as probe:
                if probe.errno == cause.errno:
                    return OSError(cause.errno, os.strerror(cause.errno), str(STDOUT))
            except (AttributeError, ValueError):  # no stdout, or one without a descriptor
                return None
        cause = cause.__cause__ or cause.__context__
    return None


def _output_failed(e: OSError) -> int:
    """The status of a command whose output to stdout could not be written: a reader gone
    away ends it quietly; anything else (``> /dev/full``: ENOSPC; a file on a failed disk:
    EIO) is one error line naming stdout."""
    if isinstance(e, BrokenPipeError):
        return _reader_gone()
    _error(os_error_text(e))
    _stdout_to_devnull()
    return 1


#: The name a failed write of a command's output gives: ``stdout: no space left on device``.
STDOUT = Path("stdout")


def _folder_text(folder: str | Path) -> str:
    """A folder as the "results:" line shows it, ending in one slash: `--out /` said `//`;
    one with a character that is not printable as ``shown_path`` writes it."""
    text = str(folder)
    return shown_path(text if text.endswith("/") else f"{text}/")


def _say(text: str, flush: bool = False) -> None:
    """Print a command's output (``flush``: now, as ``ccsim explore``'s address before it
    serves). Python's stdout is unbuffered under ``PYTHONUNBUFFERED`` (the write fails here,
    not in ``_flushed``): a failure names stdout, not a bare ``[Errno 28]``.

    One write of the line with its newline: print() writes them apart, and a stop signal
    handled between the two left ``ok: ...`` without its end before the interruption's line
    (a signal put off out of the import system, ccsim.stop_signals, landed there; stop 57)."""
    try:
        with naming_the_file(STDOUT):
            stream = _stdout()
            stream.write(f"{text}\n")
            if flush:
                stream.flush()
    except OSError:
        _stdout_to_devnull()  # what the failed write left in the buffer goes nowhere
        raise
    except UnicodeEncodeError as e:
        # A stdout in ASCII (PYTHONIOENCODING=ascii, a Latin-1 locale) and a path in Hangul:
        # the error was the codec's "'ascii' codec can't encode characters in position 8-10",
        # naming neither stdout nor the cure (campaign 16, issue 32).
        raise ValueError(f"stdout: its encoding ({e.encoding}) cannot show "
                         f"{e.object[e.start:e.end]!r}; set PYTHONIOENCODING=utf-8 or a UTF-8 "
                         "locale") from None  # fmt: skip


def _stdout() -> Any:
    """``sys.stdout``, or an OSError naming stdout when it is closed (``ccsim ... >&-``):
    Python then starts with ``sys.stdout`` None, to which print() writes nothing at all."""
    if sys.stdout is None:
        raise OSError(errno.EBADF, "Closed (nothing can be printed)", str(STDOUT))
    return sys.stdout


def _stdout_to_devnull() -> None:
    """Point stdout at /dev/null: what is left in its buffer cannot be written, and the
    interpreter's last flush must find nothing to complain about."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    with contextlib.suppress(OSError, ValueError, AttributeError):
        os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def _reader_gone() -> int:
    """The command's output went to a pipe whose reader has gone (``ccsim reproduce --list |
    head -1``): stop without a word, with the status of a command killed by SIGPIPE (128 + 13),
    as the shell's own tools do. Python ignores SIGPIPE, so a write raised BrokenPipeError
    instead; stdout now points at /dev/null, so the interpreter's last flush finds nothing to
    complain about. The command's files, if any, were written before it printed."""
    _stdout_to_devnull()
    return 128 + int(getattr(signal, "SIGPIPE", 13))


def _show_warning(message: Warning | str, *_args: Any, **_kwargs: Any) -> None:
    """Print a warning as ``ccsim: warning: <message>`` on stderr, on one line."""
    _warning(str(message))


def _warning(message: str) -> None:
    """Print ``ccsim: warning: <message>`` on stderr, on one line."""
    one_line = "; ".join(line.strip() for line in message.splitlines() if line.strip())
    _to_stderr(f"ccsim: warning: {one_line}")


def _error(message: str) -> None:
    """Print ``ccsim: error: <message>`` on stderr, on exactly one line."""
    one_line = "; ".join(line.strip() for line in message.splitlines() if line.strip())
    _to_stderr(f"ccsim: error: {one_line}")


def _to_stderr(line: str) -> None:
    """``line`` on stderr, or nowhere when it is closed (``2>&-``: Python starts with
    ``sys.stderr`` None, and print(file=None) writes to stdout, into the command's output);
    the status still says how the command ended. A terminal that hung up (SIGHUP) fails the
    write: then there is no one to tell. One write, the newline in it, as ``_say``'s."""
    if sys.stderr is not None:
        try:
            sys.stderr.write(f"{line}\n")
            sys.stderr.flush()
        except OSError:
            pass


if __name__ == "__main__":
    sys.exit(main())
