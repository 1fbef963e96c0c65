# SPDX-License-Identifier: MIT
"""Every command under every low resource limit, as a class (campaign 33, issue 32): a matrix
of the limits a login node, a batch system or a user's shell sets (setrlimit(2), the shell's
``ulimit``) x the commands.

    limit            ulimit  levels
    RLIMIT_NOFILE    -n      5 .. 64 open files (below 5 the interpreter itself cannot start)
    RLIMIT_NPROC     -u      3 .. 32 processes and threads of the user (as root: a user of
                             the test's own, the kernel never holding root to it)
    RLIMIT_AS        -v      256 MiB .. 2 GiB of address space
    RLIMIT_FSIZE     -f      0 .. 20 MB per file

    x validate, run, sweep with 1, 2 and 4 workers, a quick reproduction, report, bench,
      explore (start, a run through its API, Ctrl-C), --help

Whatever the cell:

- it ends within a minute (a pool or a Parquet reader waiting for ever for a thread the limit
  refused was the class's worst);
- its status is 0, or 1 with one ``ccsim: error:`` line that names the limit (``ulimit -n``,
  ``-u``, ``-v``, or "file too large"); the explorer ends 130 on its Ctrl-C;
- stderr holds nothing but ccsim's own lines (no traceback, no OpenBLAS or jemalloc paragraph,
  no "internal error");
- nothing is left beside --out, and --out is whole or absent (a reproduction keeps its plan
  to resume from: decided);
- at or above what the README's commands need (SUFFICIENT), it succeeds.

In the suite a sample chosen by a fixed seed runs, with the cells that failed when the matrix
was first run (FOUND); ``CCSIM_LIMITS_CELLS=all`` (380 cells, about 15 minutes) or a number, and
``CCSIM_LIMITS_SEED``, run it longer by hand."""

from __future__ import annotations

import http.client
import json
import os
import random
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from conftest import free_port

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "random-loss.toml"
M01 = ROOT / "experiments" / "m01-dctcp"
CCSIM = Path(sys.executable).parent / "ccsim"
MIB = 2**20

LEVELS = {
    "NOFILE": [5, 6, 8, 10, 12, 14, 16, 20, 24, 32, 64],
    "NPROC": [3, 4, 5, 6, 7, 8, 9, 10, 12, 14, 17, 21, 32],
    "AS": [256 * MIB, 384 * MIB, 448 * MIB, 512 * MIB, 640 * MIB, 768 * MIB, 1024 * MIB,
           2048 * MIB],
    "FSIZE": [0, 1024, 16384, 200_000, 2_000_000, 20_000_000],
}  # fmt: skip
#: At or above these, every command of the matrix succeeds (sweep's 4 workers need 18-20
#: open files and 17 tasks, the explorer 64 files and 9 tasks; the explorer 768 MiB and every
#: other command 512 MiB; a site 5 MB files).
SUFFICIENT = {"NOFILE": 64, "NPROC": 21, "AS": 768 * MIB, "FSIZE": 20_000_000}
#: The words a failure must hold for each limit.
NAMED = {"NOFILE": ("ulimit -n",), "NPROC": ("ulimit -u",), "AS": ("ulimit -v",),
         "FSIZE": ("ulimit -f", "file too large")}  # fmt: skip
COMMANDS = ["validate", "run", "sweep1", "sweep2", "sweep4", "reproduce", "report", "bench",
            "explore", "help"]  # fmt: skip
#: What each command's --out holds once whole.
WHOLE = {
    "run": ["flows.parquet", "links.parquet", "series.parquet", "scenario.toml"],
    "sweep": ["flows.parquet", "links.parquet", "runs"],
    "reproduce": ["run.json", "report.md", "summary.csv", "site/index.html", "plan"],
    "report": ["index.html"],
}

pytestmark = pytest.mark.skipif(not CCSIM.is_file(), reason="needs the installed ccsim command")


def cells() -> list[tuple[str, int, str]]:
    return [(r, level, c) for r, levels in LEVELS.items() for level in levels for c in COMMANDS]


def _sample() -> list[tuple[str, int, str]]:
    every = cells()
    want = os.environ.get("CCSIM_LIMITS_CELLS", "10")
    if want == "all":
        return every
    seed = int(os.environ.get("CCSIM_LIMITS_SEED", "33"))
    return sorted(random.Random(seed).sample(every, min(int(want), len(every))))


def argv(command: str, out: Path, finished: Path) -> list[str]:
    if command.startswith("sweep"):
        workers = int(command[-1])
        rates = ",".join(f"0.0{i + 1}" for i in range(workers))
        return ["sweep", str(EXAMPLE), "--set", 'duration="100ms"', "--param",
                f"links.bottleneck.loss.rate={rates}", "--workers", str(workers), "--out",
                str(out)]  # fmt: skip
    return {
        "validate": ["validate", str(EXAMPLE)],
        "run": ["run", str(EXAMPLE), "--set", 'duration="100ms"', "--out", str(out)],
        "reproduce": [
            "reproduce",
            str(M01),
            "--quick",
            "--seeds",
            "1",
            "--workers",
            "1",
            "--out",
            str(out),
        ],
        "report": ["report", "--results", str(finished), "--out", str(out)],
        "bench": ["bench", "--only", "F10", "--repeat", "1"],
        "explore": ["explore", "--results", str(finished), "--port", str(free_port())],
        "help": ["--help"],
    }[command]


#: A user of the test's own for RLIMIT_NPROC, which counts a real user's tasks and never holds
#: root: the command keeps root's effective id (to read this checkout and the interpreter)
#: without the capabilities that lift the limit. One per test process, so that two suites on
#: one machine do not count each other's tasks.
NPROC_UID = 50000 + os.getpid() % 10000
SETPRIV = shutil.which("setpriv")
PRLIMIT = shutil.which("prlimit")
AS_USER = ["--bounding-set=-sys_resource,-sys_admin", "--inh-caps=-sys_resource,-sys_admin"]


def limited(resource_name: str, level: int, args: list[str]) -> tuple[list[str], object]:
    """The command line and a preexec function that hold ``ccsim ARGS`` to the limit."""
    if resource_name == "NPROC":
        return [PRLIMIT, f"--nproc={level}", SETPRIV, "--ruid", str(NPROC_UID), *AS_USER,
                str(CCSIM), *args], None  # fmt: skip
    which = getattr(resource, f"RLIMIT_{resource_name}")

    def hold() -> None:
        _, hard = resource.getrlimit(which)
        top = level if hard == resource.RLIM_INFINITY else min(level, hard)
        resource.setrlimit(which, (top, hard))

    return [str(CCSIM), *args], hold


@pytest.fixture
def finished(m01_quick_by_ccsim: Path) -> Path:
    """A quick reproduction of m01 (the session's) for report and the explorer to read
    (copied per cell: the explorer writes its runs into the store)."""
    return m01_quick_by_ccsim


def environment(case: Path) -> dict[str, str]:
    """Its own home, for matplotlib's caches; under NPROC the command's real user is not its
    owner, and access(2) asks the real user, so the home is open to all."""
    home = case / "home"
    home.mkdir()
    home.chmod(0o777)
    mine = ("OPENBLAS", "OMP_", "MALLOC_", "ARROW_", "MPLCONFIGDIR", "NUMEXPR_")  # ccsim's
    env = {k: v for k, v in os.environ.items() if not k.startswith(mine)}
    env["HOME"] = str(home)
    return env


def explore(cmd: list[str], hold: object, env: dict[str, str], case: Path) -> tuple[int, str, str]:
    """Start the explorer, ask for the papers and one run through its API, then Ctrl-C it:
    its status, its stderr, and what went wrong on the way (empty: nothing)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                            cwd=case, preexec_fn=hold)  # type: ignore[arg-type]  # fmt: skip
    port = int(cmd[cmd.index("--port") + 1])
    wrong = ""
    try:
        assert proc.stdout is not None and proc.stderr is not None
        line = proc.stdout.readline()  # the URL once serving, or nothing when it is refused
        if line:
            try:
                wrong = ask_for_a_run(port)
            except Exception as e:  # an answer not as expected: said, and the explorer stopped
                wrong = f"the API failed: {e!r}"
            proc.send_signal(signal.SIGINT)
        try:
            _, err = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
            return -999, err.decode(errors="replace"), "hung"
        return proc.returncode, err.decode(errors="replace"), wrong
    finally:
        # Whatever happened above, no explorer outlives its cell (one asked for by a test that
        # failed early kept serving after the suite).
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def ask_for_a_run(port: int) -> str:
    """What went wrong asking the explorer at ``port`` for a run of m01 (empty: nothing). An
    error event is allowed when it names the limit (checked by the caller from the text)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        return _ask(conn)
    finally:
        conn.close()


def _ask(conn: http.client.HTTPConnection) -> str:
    conn.request("GET", "/api/papers")
    answer = conn.getresponse()
    answer.read()
    if answer.status != 200:
        return f"/api/papers answered {answer.status}"
    body = json.dumps({"paper": "m01", "figure": "fig12", "seeds": 1})
    conn.request("POST", "/api/run", body=body, headers={"Content-Type": "application/json"})
    answer = conn.getresponse()
    text = answer.read()
    if answer.status != 200:
        return f"/api/run answered {answer.status}: {text[:200]!r}"
    job = json.loads(text)["job"]
    conn.request("GET", f"/api/jobs/{job}/events")
    events = conn.getresponse().read().decode(errors="replace")
    last = [ln for ln in events.splitlines() if ln.startswith("data: ")][-1]
    event = json.loads(last[len("data: ") :])
    if event["type"] == "error":
        return f"job error: {event['message']}"
    return "" if event["type"] == "done" else f"the job ended with {event['type']}"


def run_cell(resource_name: str, level: int, command: str, finished: Path, tmp_path: Path,
             request: pytest.FixtureRequest) -> list[str]:  # fmt: skip
    """What went wrong in one cell, in words (empty: nothing)."""
    if resource_name == "NPROC" and (os.geteuid() != 0 or not SETPRIV or not PRLIMIT):
        pytest.skip("ulimit -u never holds root, and only root can run a command as a user of "
                    "the test's own (setpriv, prlimit)")  # fmt: skip
    case = tmp_path / "case"
    if resource_name == "NPROC":
        # Under a folder every user can pass through: access(2), which matplotlib asks of its
        # folders, answers for the real user, and pytest's folders are its owner's alone.
        case = Path(tempfile.mkdtemp(prefix="ccsim-limits-")) / "case"
        case.parent.chmod(0o755)
        request.addfinalizer(lambda: shutil.rmtree(case.parent, ignore_errors=True))
    case.mkdir()
    case.chmod(0o777)
    results = case / "finished"
    shutil.copytree(finished, results)
    out = case / "out"
    env = environment(case)
    args = argv(command, out, results)
    cmd, hold = limited(resource_name, level, args)
    started = time.monotonic()
    if command == "explore":
        status, err, wrong = explore(cmd, hold, env, case)
    else:
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=case,
                                  preexec_fn=hold, timeout=60)  # type: ignore[arg-type]  # fmt: skip
            status, err, wrong = done.returncode, done.stderr, ""
        except subprocess.TimeoutExpired as e:
            status, wrong = -999, "hung"
            err = (e.stderr or b"").decode(errors="replace") if isinstance(e.stderr, bytes) else ""
    took = time.monotonic() - started
    problems = [wrong] if wrong and not any(w in wrong for w in NAMED[resource_name]) else []
    if wrong == "hung":
        problems = [f"hung for {took:.0f} s"]
    ok = {0, 130} if command == "explore" else {0}
    if status not in ok | {1}:
        problems.append(f"status {status}")
    lines = err.splitlines()
    foreign = [ln for ln in lines if ln and not ln.startswith("ccsim: ")]
    if foreign:
        problems.append(f"stderr has lines not ccsim's: {foreign[:4]!r}")
    if "internal error" in err or "Traceback" in err:
        problems.append(f"stderr: {err[-400:]!r}")
    errors = [ln for ln in lines if ln.startswith("ccsim: error:")]
    if status == 1:
        if len(errors) != 1:
            problems.append(f"status 1 with {len(errors)} error lines: {err[-400:]!r}")
        elif not any(w in errors[0] for w in NAMED[resource_name]):
            problems.append(f"the error does not name the limit: {errors[0][:300]!r}")
    if level >= SUFFICIENT[resource_name] and (status not in ok or wrong):
        problems.append(f"failed at a limit the README's commands fit in: {err[-300:]!r}")
    left = sorted(p.name for p in case.iterdir()) if case.is_dir() else []
    extra = [n for n in left if n not in ("home", "finished", "out")]
    if extra:
        problems.append(f"left beside --out: {extra}")
    kind = command.rstrip("124")
    if out.exists() and status == 0 and kind in WHOLE:
        missing = [n for n in WHOLE[kind] if not (out / n).exists()]
        if missing:
            problems.append(f"--out is missing {missing}")
    # A reproduction keeps its plan, and a sweep the runs it finished, for the same command to
    # resume from (said in its line); anything else failed leaves no --out.
    keeps = kind == "reproduce" or (kind == "sweep" and "the same command resumes" in err)
    if out.exists() and status != 0 and not keeps:
        problems.append(f"a failed {command} left --out: {sorted(p.name for p in out.iterdir())}")
    return problems


# The cells that failed when the matrix was first run (campaign 33, issue 32), always run:
# bench's bare "[Errno 24] Too many open files"; a sweep's pool whose thread or worker the
# limit of processes refused (a worker's traceback, then a wait for ever); report's Parquet
# reader waiting for ever for a thread (ulimit -u 3, ulimit -v 384 MiB); OpenBLAS's paragraph
# on stderr at numpy's import; numpy said "installed but cannot be imported" for a library
# the address space could not map; a run's worker aborted by Rust's allocation failure; the
# explorer's job failing "RuntimeError: can't start new thread"; a bare "[Errno 27] File too
# large" from a sweep and from bench. Then, once those were fixed: the explorer's event loop
# not made (an asyncio traceback) under ulimit -n 5, the explorer aborted by Rust's
# allocation failure at 512 MiB, and matplotlib's own "Could not save font_manager cache"
# line under ulimit -f. Campaign 53, the whole matrix at main with numexpr 2.14: numexpr's
# threads started as pandas loaded ended a sweep at ulimit -u 3 with "ERROR; return code from
# pthread_create() is 11" (status 255), and report at 5 waited for ever.
FOUND = [("NOFILE", 6, "bench"), ("NPROC", 6, "sweep2"), ("NPROC", 3, "report"),
         ("NPROC", 3, "run"), ("NPROC", 5, "explore"), ("AS", 384 * MIB, "report"),
         ("AS", 256 * MIB, "run"), ("AS", 256 * MIB, "sweep1"), ("FSIZE", 0, "sweep1"),
         ("FSIZE", 1024, "bench"), ("NOFILE", 5, "explore"), ("AS", 512 * MIB, "explore"),
         ("FSIZE", 1024, "reproduce"), ("NPROC", 3, "sweep1"), ("NPROC", 5, "report")]  # fmt: skip


@pytest.mark.parametrize(("resource_name", "level", "command"), sorted(set(_sample()) | set(FOUND)))
def test_every_command_under_a_low_resource_limit_succeeds_or_names_the_limit_in_one_line(
    resource_name: str,
    level: int,
    command: str,
    finished: Path,
    tmp_path: Path,
    request: pytest.FixtureRequest,
) -> None:
    problems = run_cell(resource_name, level, command, finished, tmp_path, request)
    assert not problems, f"{resource_name}={level} {command}: " + "; ".join(problems)


def test_the_limits_matrix_reaches_every_command_and_limit() -> None:
    # Pinned so that the matrix cannot shrink unseen.
    every = cells()
    assert len(every) == sum(len(v) for v in LEVELS.values()) * len(COMMANDS) == 380
    assert {c for _, _, c in every} == set(COMMANDS)
    assert {r for r, _, _ in every} == set(SUFFICIENT) == set(NAMED)
    assert set(FOUND) <= set(every)


NOCHECK = """
import sys
try:
    from ccsim import limits
    limits.check = limits.check_pool = lambda *a, **k: None
except ImportError:  # before the checks existed
    pass
from ccsim.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize("level", [4, 5, 6, 7, 8, 9, 10])
def test_a_pool_the_limit_of_processes_refuses_after_the_check_ends_in_one_line(
    level: int, tmp_path: Path
) -> None:
    # Campaign 33 (issue 32): another program of the user's may take the room between the
    # check and the pool's start. With the checks off, under `ulimit -u` 4 to 10 a sweep of
    # two workers met it in each of the pool's places by turn: a worker's orphan watchdog
    # (its traceback, then the pool broken), the pool's own thread (never started: "cannot
    # join thread before it is started", then the exit joined the waiting workers for ever),
    # its queue's feeder thread (the pool's thread died; no run ever finished), or a run's
    # thread (the core's bare "(os error 11)"). Each is now one line naming the limit.
    if os.geteuid() != 0 or not SETPRIV or not PRLIMIT:
        pytest.skip("ulimit -u never holds root, and only root can run a command as a user of "
                    "the test's own (setpriv, prlimit)")  # fmt: skip
    case = Path(tempfile.mkdtemp(prefix="ccsim-limits-"))
    try:
        case.chmod(0o777)
        env = environment(case)
        env["MPLCONFIGDIR"] = env["HOME"]
        args = argv("sweep2", case / "out", case)
        cmd = [PRLIMIT, f"--nproc={level}", SETPRIV, "--ruid", str(NPROC_UID), *AS_USER,
               sys.executable, "-c", NOCHECK, *args]  # fmt: skip
        done = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=case, timeout=60)
        assert done.returncode in (0, 1), done.stderr
        if done.returncode == 1:
            assert done.stderr.count("\n") == 1 and "ulimit -u" in done.stderr, done.stderr
        else:
            assert done.stderr == ""
    finally:
        shutil.rmtree(case, ignore_errors=True)


def test_a_capture_file_past_the_limit_of_file_size_names_the_limit(tmp_path: Path) -> None:
    # Campaign 52 (issue 32): `ccsim run --pcap r1` under `ulimit -f 100` said the core's
    # words, "writing the capture file out/pcap/r1-access.pcap: File too large (os error 27)",
    # naming no limit (a router's many capture files under `ulimit -n`: "Too many open files
    # (os error 24)"). One subprocess: the limit holds a process.
    out = tmp_path / "out"
    cmd, hold = limited("FSIZE", 100 * 1024, ["run", str(EXAMPLE), "--pcap", "r1", "--out",
                                              str(out)])  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, preexec_fn=hold,
                          timeout=60)  # type: ignore[arg-type]  # fmt: skip
    assert (done.returncode, done.stdout) == (1, ""), done.stderr
    assert done.stderr == (
        f"ccsim: error: writing the capture file {out}/pcap/r1-access.pcap: file too large: the "
        "limit of file size is 102400 bytes (ulimit -f 100); raise it; nothing was written to "
        f"{out}\n"
    )
    assert os.listdir(tmp_path) == []


def test_a_library_the_limit_of_open_files_keeps_from_loading_names_the_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Campaign 52 (issue 32): numpy, imported while `ccsim run --pcap` of a router's many
    # interfaces held their capture files open under `ulimit -n 20`, could not open its
    # library: "ccsim needs numpy, which is installed but cannot be imported (...: cannot open
    # shared object file: Too many open files): install ccsim again", a cure that mends
    # nothing.
    import ccsim.cli

    library = "/site/numpy/_core/_multiarray_umath.so"

    def refused(*_: object, **__: object) -> None:
        raise ImportError(f"{library}: cannot open shared object file: Too many open files",
                          name="numpy._core._multiarray_umath")  # fmt: skip

    monkeypatch.setattr(ccsim.cli, "run", refused)
    assert ccsim.cli.main(["run", str(EXAMPLE), "--out", str(tmp_path / "out")]) == 1
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    shown = "" if soft == resource.RLIM_INFINITY else f" is {soft}"
    assert capsys.readouterr().err == (
        f"ccsim: error: too many open files: {library}: the limit (ulimit -n){shown}; raise it\n"
    )
    assert os.listdir(tmp_path) == []


def test_a_run_whose_capture_file_fails_stops_at_its_next_check_not_at_its_end(
    tmp_path: Path,
) -> None:
    # Campaign 52 (issue 32): a capture file's first failed write (a full disk, here `ulimit -f
    # 100`) stopped the writing, and the run went on to its end before it said so: a million
    # simulated seconds, some 100 s here, for an error known in its first. It now
    # stops at its next check. One subprocess: the limit holds a process.
    out = tmp_path / "out"
    cmd, hold = limited("FSIZE", 100 * 1024, ["run", str(EXAMPLE), "--set", "duration=1000000s",
                                              "--set", "trace.interval=100000s", "--pcap", "r1",
                                              "--out", str(out)])  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, preexec_fn=hold,
                          timeout=20)  # type: ignore[arg-type]  # fmt: skip
    assert done.returncode == 1 and "(ulimit -f 100)" in done.stderr, done.stderr
