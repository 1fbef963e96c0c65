# SPDX-License-Identifier: MIT
"""The limits the system puts on a process (setrlimit(2); the shell's ``ulimit``), checked
before a command runs into them and named when it does anyway.

A login node, a batch system or a user's shell may set any of these low::

    ulimit -n  RLIMIT_NOFILE  open files            a sweep's pool: 2 pipes per worker
    ulimit -u  RLIMIT_NPROC   this user's processes  each worker, each thread (the run's,
                              and threads (Linux)    numpy's OpenBLAS, pyarrow's jemalloc)
    ulimit -v  RLIMIT_AS      address space          shared libraries, thread stacks, heaps
    ulimit -f  RLIMIT_FSIZE   a file's size          every table, figure and page written

Met deep inside a library, a limit showed as anything but itself (campaign 33, issue 32): a
bare ``[Errno 24] Too many open files`` or ``[Errno 11] Resource temporarily unavailable``,
OpenBLAS's own paragraph on stderr, a worker's traceback for the thread it could not start,
numpy "installed but cannot be imported" (a shared library that could not be mapped), a
MemoryError called an internal error. This module says it in one line that names the limit,
its value and the cure, in two places:

- :func:`check` before a command starts (from what it will run at once, measured);
- :func:`exhausted` for an error met all the same (another program of the user's took the
  room between the check and the need, or a limit nothing here counts).
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import signal
from collections.abc import Iterator
from types import ModuleType

try:
    import resource
except ImportError:  # no such limits (Windows)
    resource = None  # type: ignore[assignment]

#: Tasks (processes and threads: Linux counts both against ``ulimit -u``) a command runs at
#: once beyond the one it starts with, before any pool of workers (checked where it starts,
#: :func:`check_pool`): the run's own thread, pyarrow's jemalloc thread and its reader's
#: thread, the explorer's server. Measured on Linux with OpenBLAS held to one thread
#: (:func:`fit_to_limits`) by lowering ``ulimit -u`` until each command failed (campaign 33,
#: issue 32): run and bench worked from 3, report from 5 (at 3 pyarrow's Parquet reader
#: waited for ever for a thread it could not start), the explorer from 7 with one run at once.
#: `run` at 3 wrote "<jemalloc>: arena 0 background thread creation failed (11)" on stderr in
#: 4 of 6 tries with another command running beside it (the limits matrix, NPROC-3-run, under
#: the split test suite, stop 63; never alone, nor beside two busy loops): jemalloc starts its
#: thread at a moment set by time, and at times a third task of the command's is alive then.
#: It counts one more, so that at 3 it says the limit in one line.
TASKS = {"run": 3, "sweep": 2, "reproduce": 4, "report": 4, "bench": 2, "explore": 4}
#: Tasks each worker process adds: itself, its run thread and its orphan watchdog.
TASKS_PER_WORKER = 3
#: Tasks a process pool adds to the process that starts it: its management thread and its
#: queue's feeder thread.
POOL_TASKS = 2
#: Files a process pool holds open beyond its workers' (its queues, its wake-up pipe), and
#: each worker's: the thresholds measured under ``ulimit -n`` were 14, 16 and 20 for 1, 2 and
#: 4 workers from a sweep's 8 (campaign 32, issue 32).
POOL_FILES = 6
FILES_PER_WORKER = 2
#: The address space (``ulimit -v``) each command needs at least, with the threads and
#: allocators :func:`fit_to_limits` sets: numpy, pandas, pyarrow and the core mapped, a run's
#: thread, a site's plotly. Measured on Linux (Python 3.11, pyarrow 26) by lowering the
#: limit until each failed (campaign 33, issue 32): every command worked from 512 MiB; at
#: 384 MiB a run's workers failed and report's Parquet reader waited for ever for a thread.
#: validate, bench (whose runs are checked as runs) and --help load none of it.
#: The explorer runs two at once beside its server: it aborted at 512 MiB and worked from
#: 640 MiB; 768 MiB keeps a margin.
ADDRESS_SPACE = {c: 512 * 2**20 for c in ("run", "sweep", "reproduce", "report")}
ADDRESS_SPACE["explore"] = 768 * 2**20
#: The open files (``ulimit -n``) a command needs at least where that is more than the
#: interpreter's own: the explorer holds its listening socket, its event loop's, a browser's
#: up to 6 connections to one host and the run store's files, and imports as it serves. With
#: one client it worked at 7 and 10 files but not at 8 (a request failed importing: 500, and
#: records read as damaged), and at 5-6 its event loop could not be made (an asyncio
#: traceback). 64 is chosen for a browser's connections with a margin (campaign 33, issue 32).
FILES = {"explore": 64}
#: mallopt(3)'s parameter for the number of glibc's heap arenas, and how many are kept under
#: a limit of address space (each reserves 64 MiB on 64-bit Linux).
M_ARENA_MAX = -8
MALLOC_ARENAS = 2
#: The check is skipped above this limit: counting the user's tasks reads all of /proc.
TASKS_CHECKED_BELOW = 8192


def soft_limit(which: str) -> int | None:
    """The soft limit ``RLIMIT_<which>``, or None when there is none (unlimited, or not on
    this system)."""
    if resource is None or not hasattr(resource, f"RLIMIT_{which}"):
        return None
    soft, _ = resource.getrlimit(getattr(resource, f"RLIMIT_{which}"))
    return None if soft == resource.RLIM_INFINITY else soft


def user_tasks() -> int | None:
    """The processes and threads of this real user, as the kernel counts them against
    ``ulimit -u``; None where /proc cannot tell."""
    uid = os.getuid()
    count = 0
    try:
        entries = os.listdir("/proc")
    except OSError:
        return None
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status", encoding="ascii", errors="replace") as status:
                text = status.read()
        except OSError:  # ended meanwhile, or hidden (hidepid)
            continue
        real = re.search(r"^Uid:\s+(\d+)", text, re.MULTILINE)
        threads = re.search(r"^Threads:\s+(\d+)", text, re.MULTILINE)
        if real and threads and int(real.group(1)) == uid:
            count += int(threads.group(1))
    return count or None


def fit_to_limits() -> None:
    """Start fewer threads and reserve less address space, before numpy and pyarrow are
    imported, unless the user chose otherwise (campaign 33, issue 32):

    - numpy's OpenBLAS starts a thread per CPU at import, which ccsim's small tables never
      use, and which a low ``ulimit -u`` refused with a paragraph of its own on stderr:
      always one; numexpr's, under a limit of processes, one too;
    - under a limit of address space (``ulimit -v``), every thread reserves a stack and
      glibc a heap arena of 64 MiB for it, and pyarrow starts a thread per CPU and reserves
      for jemalloc: with the limit met, pyarrow's Parquet reader waited for ever for a
      thread it could not start, or crashed. There one thread for pyarrow, the system's
      allocator, and two arenas.
    """
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    processes = soft_limit("NPROC")
    if processes is not None and processes < TASKS_CHECKED_BELOW:
        # numexpr (which pandas loads when it is installed) starts a thread per CPU as it
        # loads, and one it cannot start ends the process: "ERROR; return code from
        # pthread_create() is 11" and status 255, from a sweep or a report under `ulimit -u
        # 3` to 6 (the limits matrix at main with numexpr 2.14, campaign 53, issue 32).
        os.environ.setdefault("NUMEXPR_NUM_THREADS", "1")
    if soft_limit("AS") is None:
        return
    os.environ.setdefault("OMP_NUM_THREADS", "1")  # pyarrow's pool of CPU threads
    os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")
    if "MALLOC_ARENA_MAX" not in os.environ:
        os.environ["MALLOC_ARENA_MAX"] = str(MALLOC_ARENAS)  # for the programs it starts
        try:  # and for this process and the workers it forks, whose glibc has read it
            import ctypes

            ctypes.CDLL(None).mallopt(M_ARENA_MAX, MALLOC_ARENAS)
        except (OSError, AttributeError):  # not glibc
            pass


def check(command: str, threads: int = 0) -> str | None:
    """The error for ``ccsim <command>`` when the limits of open files, address space or
    processes would stop it, or None. Called before the command starts anything; ``threads``:
    those its options add (the explorer's two per worker: the job's and its run's)."""
    files, limit = FILES.get(command), soft_limit("NOFILE")
    if files is not None and limit is not None and limit < files:
        return (
            f"the limit of open files is {limit} (ulimit -n): ccsim {command} needs at least "
            f"{files}; raise it (ulimit -n {files} or more)"
        )
    floor = ADDRESS_SPACE.get(command)
    limit = soft_limit("AS")
    if floor is not None and limit is not None and limit < floor:
        return (
            f"the limit of address space is {limit // 2**20} MiB (ulimit -v {limit // 1024}): "
            f"ccsim {command} needs at least {floor // 2**20} MiB; raise it (ulimit -v "
            f"{floor // 1024} or more)"
        )
    return check_tasks(f"ccsim {command}", TASKS.get(command, 0) + threads)


def check_pool(workers: int) -> str | None:
    """The error for a pool of ``workers`` processes that the limits of open files or of
    processes would not let start, or None. Called in the process that starts it, just
    before: what it has open and runs already is counted. Under ``ulimit -n 14`` with 4
    workers the pool's start failed inside its own thread, where nothing heard of it, and the
    sweep waited for ever (campaign 32); under ``ulimit -u 7`` a worker printed the traceback
    of the thread it could not start (campaign 33, issue 32)."""
    processes = "1 worker process" if workers == 1 else f"{workers} worker processes"
    cure = "give fewer workers" if workers > 1 else "end other programs"
    limit = soft_limit("NOFILE")
    if limit is not None:
        open_now = _open_files()
        need = None if open_now is None else open_now + POOL_FILES + FILES_PER_WORKER * workers
        if need is not None and limit < need:
            fewer = " or give fewer workers" if workers > 1 else ""
            return (f"the limit of open files is {limit} (ulimit -n): {processes} need"
                    f"{'s' if workers == 1 else ''} {need}; raise it (ulimit -n {need} or more)"
                    f"{fewer}")  # fmt: skip
    refused = check_tasks(processes, POOL_TASKS + TASKS_PER_WORKER * workers, cure)
    if refused is None:
        refused = check_semaphores(processes)
    return refused if refused is not None else check_fork_server(processes)


def check_semaphores(what: str) -> str | None:
    """The error when the system refuses the POSIX named semaphores that a process pool's
    queues are built on (``sem_open``, files under /dev/shm), or None. A container without
    /dev/shm (``docker run --ipc=none``) or with it read-only, AWS Lambda and the like refuse
    them: the pool's start failed there with a bare "[Errno 38] Function not implemented",
    naming neither the workers nor the cause (campaign 38, issue 32)."""
    import multiprocessing

    _start_resource_tracker_deaf_to_hangup()
    try:
        multiprocessing.get_context().Lock()  # made and unlinked at once
    except OSError as e:
        met = exhausted(e)  # `ulimit -f 0` refuses the semaphore's file too (EFBIG)
        if met is not None:
            return met
        why = os.strerror(e.errno) if e.errno else str(e)
        return (f"{what} cannot start: this system refuses the POSIX semaphores a process pool "
                f"shares ({why}; /dev/shm missing, read-only or full?): give it a writable "
                "/dev/shm (a container: not --ipc=none)")  # fmt: skip
    return None


def check_fork_server(what: str) -> str | None:
    """Start the ``forkserver`` start method's server, when that is the start method, and
    return the error when it cannot start, or None.

    The fork server (Python 3.14's default start method on Linux, or a user's script's
    choice) listens on a UNIX socket in a folder of its own under the temporary folder,
    ``$TMPDIR/pymp-XXXXXXXX/listener-XXXXXXXX``, and a socket's path may hold at most 108
    bytes (``sun_path``, unix(7)). A batch job's or a tool's long TMPDIR (a Hangul name takes
    3 bytes a letter) left no room for it: a sweep said a bare "AF_UNIX path too long",
    naming neither the folder nor the cure, and a reproduction had stored its plan/ in --out
    by then. Python 3.14 falls back to the system's temporary folder for some lengths, not
    all (CPython issues 132124, 140734). Under a umask of 0777 the folder and the socket took
    mode 000: every worker died connecting to it ("Permission denied" tracebacks), and the
    folder's removal at exit printed one more and left it (campaign 41, issue 32). So the
    server is started here, before anything is written, its folder and socket given back to
    their owner (the process's own: mkdtemp's mode 0700) whatever the umask.

    The folder is removed as the process exits, and a batch job's epilogue (Slurm removes the
    job's TMPDIR), or a cleaner of /tmp, may have removed it first: multiprocessing's
    finalizer then printed a FileNotFoundError traceback after the command's output, status
    0 (campaign 42, issue 32). :func:`_forgive_removed_temp_dir` lets a folder already gone
    be."""
    import multiprocessing

    if multiprocessing.get_context().get_start_method() != "forkserver":
        return None
    from multiprocessing import forkserver, util

    try:
        os.chmod(util.get_temp_dir(), 0o700)
        _forgive_removed_temp_dir()
        _start_fork_server_with_interrupt_blocked(forkserver)
        address = getattr(forkserver._forkserver, "_forkserver_address", None)
        if address is not None:
            os.chmod(address, 0o600)
    except OSError as e:
        met = exhausted(e)
        if met is not None:
            return met
        import tempfile

        return (f"{what} cannot start: the forkserver start method's server cannot listen on "
                f"a socket in the temporary folder {tempfile.gettempdir()} ({e}; a socket's "
                "path may hold 108 bytes): set TMPDIR to a short writable folder "
                "(TMPDIR=/tmp)")  # fmt: skip
    return None


def _start_fork_server_with_interrupt_blocked(forkserver: ModuleType) -> None:
    """Start the fork server with SIGINT blocked, as this thread's mask for the moment it is
    spawned, which the server keeps (a spawned program inherits it).

    The server is a Python of its own in the command's process group. It ignores SIGINT once
    it runs, not while its interpreter starts and imports multiprocessing: a Ctrl-C to the
    group then (a terminal's, a batch scheduler's) printed its KeyboardInterrupt traceback,
    ending ``File "<frozen importlib._bootstrap>" ... KeyboardInterrupt``, under the
    command's own "interrupted" line (the states matrix at seed 7003 under load; campaign
    53, issue 32). Blocked, the signal waits, and the server's SIG_IGN drops it. CPython's
    resource tracker is started so (``resource_tracker.ensure_running``); its fork server is
    not. SIGINT alone: SIGTERM and SIGHUP end a starting server by their default action,
    silently, and blocked they were inherited by every worker it forks, which a pool's
    terminate() (SIGTERM) then never ended (a first version of this fix hung so). The
    workers it forks keep SIGINT blocked: ccsim's unblock it once they have their handlers
    (``sweep._init_worker``), and another pool's are ended by SIGTERM, as a pool ends them."""
    if not hasattr(signal, "pthread_sigmask"):
        forkserver.ensure_running()
        return
    # The server starts the resource tracker first if it is not running, and the tracker's
    # start ends by unblocking SIGINT and SIGTERM (not restoring the mask it found): the
    # server was then spawned with them open. Running already, it is left as it is.
    _start_resource_tracker_deaf_to_hangup()
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        forkserver.ensure_running()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


def _forgive_removed_temp_dir() -> None:
    """Make multiprocessing's removal of its temporary folder at exit (a finalizer calling
    ``shutil.rmtree``, multiprocessing/util.py ``get_temp_dir``) pass over a folder that is no
    longer there; any other failure is still its own."""
    from multiprocessing import util

    remove = getattr(util, "_remove_temp_dir", None)
    for finalizer in list(getattr(util, "_finalizer_registry", {}).values()):
        args = getattr(finalizer, "_args", None)
        # Python 3.11-3.14 register it as (shutil.rmtree, folder); another shape is left as
        # it is (a private structure of multiprocessing's).
        if remove is not None and finalizer._callback is remove and len(args or ()) == 2:
            finalizer._args = (_rmtree_if_there, args[1])


def _rmtree_if_there(folder: str) -> None:
    import shutil

    try:
        shutil.rmtree(folder)
    except FileNotFoundError:  # removed already (a batch job's epilogue, a /tmp cleaner)
        pass


@contextlib.contextmanager
def owners_umask() -> Iterator[None]:
    """The umask less its owner's bits, for the moment a process pool is made: its queues'
    POSIX semaphores (files under /dev/shm, mode 0600 less the umask) are opened again by
    name in each worker under spawn and forkserver, which a umask of 0777 (mode 000) refused.
    Any other umask leaves them as they are."""
    umask = os.umask(0o077)
    os.umask(umask & 0o077)
    try:
        yield
    finally:
        os.umask(umask)


def _start_resource_tracker_deaf_to_hangup() -> None:
    """Start multiprocessing's resource tracker, where the start method has one, with SIGHUP
    blocked, which the tracker then keeps blocked.

    Under the forkserver and spawn start methods (Python 3.14's default on Linux, and
    macOS's) the pool's semaphores are registered with a tracker, a process of its own in
    the command's process group. It ignores SIGINT and SIGTERM, not SIGHUP: a terminal or ssh
    session that hangs up signals the whole group, the tracker died, and as the pool shut
    down its semaphores were unregistered with a new tracker that never knew them. A sweep
    logging to a file ended with "resource_tracker: process died unexpectedly, relaunching.
    Some resources might leak." and a KeyError traceback per semaphore (campaign 40, issue
    32). The command itself still stops on SIGHUP: the block is this thread's, for the
    moment the tracker is spawned. Under fork there is no tracker for semaphores (they are
    unlinked at once); a tracker already running (a notebook's earlier pool) is left as it is.
    """
    import multiprocessing
    from multiprocessing import resource_tracker

    if not hasattr(signal, "pthread_sigmask") or not hasattr(signal, "SIGHUP"):
        return
    if multiprocessing.get_context().get_start_method() == "fork":
        return
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGHUP})
    try:
        resource_tracker.ensure_running()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


def check_tasks(what: str, more: int, cure: str = "end other programs of this user") -> str | None:
    """The error for ``what`` (in words) needing ``more`` processes and threads than the
    limit of processes leaves, or None. Where /proc cannot count, or for root (whom the
    kernel never holds to it), the command is tried."""
    limit = soft_limit("NPROC")
    if limit is None or limit >= TASKS_CHECKED_BELOW or os.getuid() == 0:
        return None
    running = user_tasks()
    if running is None or running + more <= limit:
        return None
    needs = "needs" if what.startswith(("ccsim", "1 ")) else "need"
    return (
        f"the limit of processes is {limit} (ulimit -u), and this user runs {running} "
        f"processes and threads already: {what} {needs} {more} more; raise it (ulimit -u "
        f"{running + more} or more) or {cure}"
    )


def _open_files() -> int | None:
    """How many files this process has open, or None where that cannot be counted."""
    for fds in ("/proc/self/fd", "/dev/fd"):
        try:
            return len(os.listdir(fds))
        except OSError:
            continue
    return None


def exhausted(e: BaseException) -> str | None:
    """The error, in words, for ``e`` when it is a limit met (open files, processes or
    threads, memory), or None."""
    if isinstance(e, MemoryError):
        return _memory(type(e).__name__)
    if isinstance(e, RuntimeError) and "can't start new thread" in str(e):
        return _tasks("a thread could not be started")
    if isinstance(e, ImportError) and re.search(
        r"failed to map segment|cannot allocate memory|Cannot allocate memory", str(e)
    ):
        return _memory(f"a library could not be loaded: {e}")
    if isinstance(e, ImportError) and "Too many open files" in str(e):
        # A library loaded while the run holds its capture files open (numpy, imported
        # meanwhile): `ccsim run --pcap` of a router's many interfaces under `ulimit -n 20`
        # was "ccsim needs numpy, which is installed but cannot be imported (...: Too many
        # open files): install ccsim again" (campaign 52, issue 32).
        library = str(e).partition(": cannot open shared object file")[0]
        return exhausted(OSError(errno.EMFILE, "Too many open files", library))
    if not isinstance(e, OSError):
        return core_exhausted(str(e))
    if e.errno in (errno.EMFILE, errno.ENFILE):
        limit = soft_limit("NOFILE")
        where = f": {e.filename}" if e.filename else ""
        if e.errno == errno.ENFILE:
            return f"the system's table of open files is full{where}; close some programs"
        shown = f" is {limit}" if limit is not None else ""
        return f"too many open files{where}: the limit (ulimit -n){shown}; raise it"
    if e.errno == errno.ENOENT and str(e).startswith("[Errno 2] No usable temporary directory"):
        # tempfile tries each folder by writing a few bytes to it, and under `ulimit -f 0`
        # calls every one unusable (it takes EFBIG for a folder's fault).
        limit = soft_limit("FSIZE")
        if limit is not None and limit < 1024:
            e = OSError(errno.EFBIG, "File too large")
    if e.errno == errno.EFBIG:
        limit = soft_limit("FSIZE")
        where = f"{e.filename}: " if e.filename else ""
        if limit is None:
            return None
        return (
            f"{where}file too large: the limit of file size is {limit} bytes (ulimit -f "
            f"{limit // 1024}); raise it"
        )
    if e.errno == errno.EAGAIN and e.filename is None:
        return _tasks("a process could not be started")
    if e.errno == errno.ENOMEM:
        return _memory(str(e.filename or "out of memory"))
    return None


def core_exhausted(text: str) -> str | None:
    """The error, in words, for the core's own words ``text`` (Rust's io::Error, "<what>:
    <reason> (os error N)") when they say a limit met, or None: a thread or an allocation the
    system refused ("could not start the simulation thread: Resource temporarily unavailable
    (os error 11)"), and a capture file that could not be opened or grow, which said "writing
    the capture file X: Too many open files (os error 24)" (or "File too large (os error
    27)") naming neither limit (campaign 52, issue 32)."""
    core = re.search(r"^(.*?): [^:]*\(os error (\d+)\)$", text)
    if core is None:
        return None
    what, code = core.group(1), int(core.group(2))
    if code == errno.EAGAIN:
        return _tasks(what)
    if code == errno.ENOMEM:
        return _memory(what)
    if code in (errno.EMFILE, errno.ENFILE, errno.EFBIG):
        return exhausted(OSError(code, os.strerror(code), what))
    return None


def _tasks(what: str) -> str:
    """A thread or process refused (EAGAIN): by the limit of processes, or, under a limit of
    address space with no low limit of processes, for want of room for its stack."""
    limit = soft_limit("NPROC")
    if soft_limit("AS") is not None and (limit is None or limit >= TASKS_CHECKED_BELOW):
        return _memory(what)
    shown = f" is {limit} (ulimit -u)" if limit is not None else " (ulimit -u)"
    return (
        f"{what}: the limit of this user's processes and threads{shown}; raise it, or end "
        "other programs of this user"
    )


def _memory(what: str) -> str:
    limit = soft_limit("AS")
    if limit is None:
        return f"out of memory ({what})"
    return (
        f"out of memory ({what}): the limit of address space is {limit // 2**20} MiB "
        f"(ulimit -v {limit // 1024}); raise it"
    )
