# SPDX-License-Identifier: MIT
from __future__ import annotations

import contextlib
import hashlib
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

# No example database in the work tree, and no per-example deadline: runs share two cores with
# whatever else the machine is doing, and timing is not what these properties are about.
settings.register_profile("ccsim", database=None, deadline=None)
settings.load_profile("ccsim")

# The suite's children start as a terminal's would. A script that runs the tests in its
# background (`scripts/test &`, or a CI runner's job) gives them SIGINT ignored, which the
# system passes on to every child; ccsim keeps a stop signal ignored at its start by design
# (nohup, `ccsim explore &`), so the tests that send SIGINT to a child read "stopped by
# SIGTERM" or waited for an explorer that would never stop. A handler here is reset to the
# default in each child, an ignored signal is not.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

ROOT = Path(__file__).resolve().parents[2]

#: The folder under which this run's ``tmp_path`` folders are made, when the run is split over
#: pytest-xdist's workers and no ``--basetemp`` was given (``pytest_configure``).
_SHORT_BASETEMP: list[Path] = []


def pytest_configure(config: pytest.Config) -> None:
    """Split over pytest-xdist's workers (scripts/test), each worker's ``tmp_path`` lies one
    folder deeper than in one process (``/tmp/pytest-of-root/pytest-79/popen-gw1/...``), and
    the tests that run a pool under forkserver with TMPDIR in their ``tmp_path`` passed the
    108 bytes of an AF_UNIX socket's path: ccsim refused, rightly, to start its workers. The
    run's folders go under a short one instead, ``/tmp/ccsim-t-XXXXXXXX``, shorter than
    pytest's own by more than the worker's folder adds."""
    import tempfile

    split = getattr(config.option, "numprocesses", None)
    worker = hasattr(config, "workerinput")
    if split and not worker and not config.option.basetemp:
        _SHORT_BASETEMP.append(Path(tempfile.mkdtemp(prefix="ccsim-t-")))
        config.option.basetemp = str(_SHORT_BASETEMP[0])


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """The short folder of ``pytest_configure`` removed after a run that passed (pytest keeps
    its own last three; a failed run's folder stays for its tests' files to be read). Tests
    leave folders without write or search permission (a read-only HOME, umask 0777), which
    are opened up first."""
    if not _SHORT_BASETEMP or exitstatus != 0:
        return
    import shutil

    for folder, dirs, _files in os.walk(_SHORT_BASETEMP[0]):
        for d in dirs:
            with contextlib.suppress(OSError):
                if not os.path.islink(os.path.join(folder, d)):
                    os.chmod(os.path.join(folder, d), 0o700)
    shutil.rmtree(_SHORT_BASETEMP[0], ignore_errors=True)


@pytest.fixture
def examples() -> Path:
    return ROOT / "examples"


TWO_HOSTS = """
duration = "5s"
[nodes]
h1 = "host"
r1 = "router"
h2 = "host"
[links.access]
a = "h1"
b = "r1"
rate = "100Mbps"
delay = "1ms"
[links.bottleneck]
a = "r1"
b = "h2"
rate = "10Mbps"
delay = "20ms"
queue = { type = "droptail", limit = 50 }
[flows.f1]
type = "tcp"
src = "h1"
dst = "h2"
size = "500KB"
[trace]
interval = "100ms"
"""


@pytest.fixture
def two_hosts() -> str:
    return TWO_HOSTS


# Two hosts joined by two disjoint paths (h1 -a0- r0 -b0- h2, h1 -a1- r1 -b1- h2) of 10 Mbit/s,
# 5 ms links, and one SCTP association over them: the paths table (test_sctp.py) and the SCTP
# capture (test_pcap.py) run it.
TWO_PATHS = """
duration = "5s"
[nodes]
h1 = "host"
h2 = "host"
r0 = "router"
r1 = "router"
[links.a0]
a = "h1"
b = "r0"
rate = "10Mbps"
delay = "5ms"
[links.b0]
a = "r0"
b = "h2"
rate = "10Mbps"
delay = "5ms"
[links.a1]
a = "h1"
b = "r1"
rate = "10Mbps"
delay = "5ms"
[links.b1]
a = "r1"
b = "h2"
rate = "10Mbps"
delay = "5ms"
[flows.assoc]
type = "sctp"
src = "h1"
dst = "h2"
"""


# One flow over a 60-second line (~0.1 s of wall time per run): long enough to kill a sweep or
# a worker while runs are going on. The lossy link is `b`.
SLOW_LINE = """
duration = "60s"
[nodes]
h1 = "host"
r1 = "router"
h2 = "host"
[links.a]
a = "h1"
b = "r1"
rate = "100Mbps"
delay = "1ms"
[links.b]
a = "r1"
b = "h2"
rate = "50Mbps"
delay = "10ms"
queue = { type = "droptail", limit = 100 }
loss = { type = "uniform", rate = 0.001, direction = "a_to_b" }
[flows.f]
type = "tcp"
src = "h1"
dst = "h2"
"""


@pytest.fixture
def slow_line() -> str:
    return SLOW_LINE


#: The error a command gives when stdout is ``closed`` (``>&-``) or ``full`` (``> /dev/full``).
STDOUT_ERRORS = {
    "closed": "ccsim: error: stdout: closed (nothing can be printed)\n",
    "full": "ccsim: error: stdout: no space left on device\n",
}


def main_without_stdout(
    stdout: str, argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> tuple[int, str]:
    """``ccsim.cli.main(argv)`` with stdout ``closed`` (None, as Python starts after ``>&-``)
    or ``full`` (/dev/full, line-buffered): its status and stderr."""
    import sys

    from ccsim.cli import main

    with open("/dev/full", "w", buffering=1) as full:
        monkeypatch.setattr(sys, "stdout", None if stdout == "closed" else full)
        try:
            status = main(argv)
        finally:
            monkeypatch.setattr(sys, "stdout", sys.__stdout__)
    return status, capsys.readouterr().err


# A plan's metric (f1's goodput) and its two lines (SACK, Reno), shared by the small test plans
# of test_experiment.py and test_api_contract.py.
METRIC_AND_TWO_LINES = """[metric]
table = "flows"
where = { name = "f1" }
column = "goodput_bps"
label = "goodput"

[lines.sack]
label = "SACK"
set = { "tcp.variant" = "sack" }

[lines.reno]
label = "Reno"
set = { "tcp.variant" = "reno" }
"""


#: The wall clock's seconds, in a line or a table's metadata: the one thing a run's output may
#: differ in from the same run's.
WALL_CLOCK = re.compile(rb'[0-9.]+ s wall|"wall_seconds": [0-9.e+-]+')
#: Files whose bytes hold the wall clock, the runs' CPU seconds (derived-values.json) or a
#: digest of such a file (derived.json, the site's pages.json), or drawn from the wall clock
#: (bench's plot): compared by name only.
TIMED_FILES = re.compile(r"(^|/)(run|site|derived|derived-values|pages)\.json$|^scale\.png$")


def file_digest(p: Path, out: Path) -> str:
    """A file's bytes with ``out`` and the wall clock's seconds taken out; a Parquet file's
    table and metadata so (its schema, with the metadata, is also stored base64-encoded)."""
    if p.suffix != ".parquet":
        return hashlib.sha256(
            WALL_CLOCK.sub(b"{wall}", p.read_bytes().replace(bytes(out), b"{out}"))
        ).hexdigest()
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.read_table(p)
    meta = {k: WALL_CLOCK.sub(b"{wall}", v.replace(bytes(out), b"{out}"))
            for k, v in (table.schema.metadata or {}).items() if k != b"ARROW:schema"}  # fmt: skip
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema.remove_metadata()) as w:
        w.write_table(table.replace_schema_metadata(None))
    digest = hashlib.sha256(sink.getvalue().to_pybytes())
    for k in sorted(meta):
        digest.update(k + b"=" + meta[k])
    return digest.hexdigest()


def output_digests(out: Path) -> dict[str, str]:
    """Each file of a command's output folder and its digest: two runs of the same command
    with the same seed give the same mapping (the timed files by name only)."""
    if not out.exists():
        return {}
    tree = {}
    for p in sorted(out.rglob("*")):
        rel = p.relative_to(out).as_posix()
        if p.is_file():
            tree[rel] = "(timed)" if TIMED_FILES.search(rel) else file_digest(p, out)
    return tree


#: The commands that write outputs, each as cheap as it comes: {out} and {results} (a folder
#: holding a finished reproduction) are filled in by the matrices that run them.
CHEAP_COMMANDS: dict[str, list[str]] = {
    "run": ["run", str(ROOT / "examples" / "random-loss.toml"), "--set", "duration=100ms",
            "--out", "{out}"],
    "sweep": ["sweep", str(ROOT / "examples" / "random-loss.toml"), "--set", "duration=100ms",
              "--param", "links.bottleneck.loss.rate=0.01,0.02", "--workers", "1",
              "--out", "{out}"],
    "reproduce": ["reproduce", "m01", "--quick", "--seeds", "1", "--workers", "1",
                  "--out", "{out}"],
    "report": ["report", "--results", "{results}", "--out", "{out}"],
}  # fmt: skip


@dataclass
class CommandOutcome:
    """A command's status, its words (the output folder as ``{out}``, the wall clock's
    seconds as ``{wall}``) and its output folder's digests."""

    status: int
    stdout: str
    stderr: str
    tree: dict[str, str]


#: ``ccsim explore`` as a command of the matrices: its output is its answers (``{out}`` is the
#: folder its runs are stored in).
EXPLORE_COMMAND: dict[str, list[str]] = {"explore": ["explore", "--results", "{out}"]}
#: What the explorer is asked, in order: every route, and a job of one run read to its end.
_EXPLORER_JOB = {"paper": "p001", "figure": "fig8", "x": ["0.05"], "lines": ["spack"], "seeds": 1}


def _explorer_outcome(argv: list[str], out: Path, env: dict[str, str]) -> CommandOutcome:
    """``python -m ccsim explore ...`` in a child on a free port, asked every route and a job of
    one run, then stopped by SIGTERM. Its "files" are its answers: each one's status, headers
    but the date, and body's digest (a job's id and events parsed, without the job's random run
    token or its wall times)."""
    import http.client
    import json

    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "ccsim", *argv, "--port", str(port)], cwd=ROOT,
                            env=env, text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)  # fmt: skip
    answers: dict[str, str] = {}
    first = ""

    def ask(method: str, path: str, body: object = None, whole: bool = True) -> bytes:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        data = None if body is None else json.dumps(body).encode()
        c.request(method, path, data, {"Content-Type": "application/json"} if data else {})
        r = c.getresponse()
        got = r.read()
        c.close()
        head = sorted((k.lower(), v) for k, v in r.getheaders() if k.lower() != "date")
        digest = hashlib.sha256(got).hexdigest() if whole else ""
        answers[f"{method} {re.sub(r'j1-[0-9a-f]{8}', 'j1', path)}"] = f"{r.status} {head} {digest}"
        return got

    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        if first.startswith("ccsim explore: http"):
            for path in ("/", "/plotly.min.js", "/api/papers", "/api/jobs/j0/events"):
                ask("GET", path)
            job = json.loads(ask("POST", "/api/run", _EXPLORER_JOB, whole=False))["job"]
            events = ask("GET", f"/api/jobs/{job}/events", whole=False).decode()
            said = [json.loads(ln[6:]) for ln in events.splitlines() if ln.startswith("data: ")]
            answers["events"] = repr(
                [{k: v for k, v in e.items() if k != "elapsed_s"} for e in said]
            )
            ask("POST", f"/api/jobs/{job}/cancel")
            proc.send_signal(signal.SIGTERM)
        rest, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    said = [text.replace(f":{port}/", ":{port}/").replace(str(out), "{out}")
            for text in (first + rest, err)]  # fmt: skip
    return CommandOutcome(proc.returncode, *said, answers)


def ccsim_outcome(argv: list[str], out: Path, env: dict[str, str]) -> CommandOutcome:
    """``python -m ccsim ARGV`` in a child, from the repository's root, its output in ``out``
    (``ccsim explore``'s, its answers: ``_explorer_outcome``)."""
    if argv[0] == "explore":
        return _explorer_outcome(argv, out, env)
    proc = subprocess.run([sys.executable, "-m", "ccsim", *argv], capture_output=True,
                          text=True, cwd=ROOT, env=env, timeout=600, check=False)  # fmt: skip
    said = [WALL_CLOCK.sub(b"{wall}", text.encode()).decode().replace(str(out), "{out}")
            for text in (proc.stdout, proc.stderr)]  # fmt: skip
    return CommandOutcome(proc.returncode, *said, output_digests(out))


@pytest.fixture(scope="session")
def m01_quick(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """m01's quick reproduction with one seed, made in this process once for the session; the
    tests that start from it copy it (test_output_folders.py, test_concurrent_outputs.py)."""
    import matplotlib.pyplot  # noqa: F401  (its config folder is chosen before HOME moves)

    from ccsim.experiment import reproduce

    folder = tmp_path_factory.mktemp("m01") / "m01-quick"
    reproduce(ROOT / "experiments" / "m01-dctcp", folder, quick=True, workers=1, seeds=1,
              progress=False)  # fmt: skip
    return folder


@pytest.fixture(scope="session")
def m01_quick_by_ccsim(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """m01's quick reproduction with one seed made by the installed ``ccsim`` command in a
    plain state, once for the session: what report and the explorer read and the figures a
    reproduction in another state must draw byte for byte (test_cli_states.py,
    test_resource_limits.py; neither writes into it)."""
    import subprocess
    import sys

    out = tmp_path_factory.mktemp("plain") / "finished"
    ccsim = Path(sys.executable).parent / "ccsim"
    subprocess.run([str(ccsim), "reproduce", str(ROOT / "experiments" / "m01-dctcp"), "--quick",
                    "--seeds", "1", "--workers", "1", "--out", str(out)],
                   check=True, capture_output=True)  # fmt: skip
    return out


def ccsim_in_cell(boot: str, argv: list[str], cell: Path, results: Path | None,
                  env: dict[str, str]) -> CommandOutcome:  # fmt: skip
    """A command (``argv`` with {out} and {results} filled in) in a child whose sitecustomize
    is ``boot``, first on its PYTHONPATH (so in its workers too), with ``env`` added to the
    environment; its output in ``cell/out``."""
    folder = cell / "boot"
    folder.mkdir(parents=True)
    (folder / "sitecustomize.py").write_text(boot, encoding="utf-8")
    out = cell / "out"
    filled = [a.replace("{out}", str(out)).replace("{results}", str(results)) for a in argv]
    path = os.pathsep.join([str(folder), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return ccsim_outcome(filled, out, {**os.environ, **env, "PYTHONPATH": path})


def free_port() -> int:
    """A TCP port of 127.0.0.1 nothing listens on now (the system's choice)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def playwright_or_skip() -> Any:
    """Playwright's ``sync_playwright``, or the test skipped saying how to install it, as the
    Dask tests skip without Dask. Without it each of the ~60 browser tests ended in an error,
    "ModuleNotFoundError: No module named 'playwright'" (campaign 62b, issue 32)."""
    api = pytest.importorskip(
        "playwright.sync_api",
        reason="Playwright is not installed: pip install -c constraints.txt -r "
        "requirements-test.txt (scripts/test installs it)",
    )
    return api.sync_playwright


def system_chromium() -> Iterator[Any]:
    """The system's Chromium launched headless through Playwright, or the test skipped saying
    what is missing (scripts/test installs both)."""
    from ccsim.site.browser import CHROMIUM_ARGS, find_chromium

    chromium = find_chromium()
    if chromium is None:
        pytest.skip("no Chromium found (CCSIM_CHROMIUM, chromium on PATH, /usr/bin/chromium); "
                    "scripts/test installs Debian's chromium package")  # fmt: skip
    sync_playwright = playwright_or_skip()

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


#: The event loop Playwright's sync API runs its driver on, while the session's browser lives
#: (``chromium_browser``).
_PLAYWRIGHT_LOOP: list[Any] = []


@pytest.fixture(scope="session")
def chromium_browser() -> Iterator[Any]:
    """One headless Chromium for the session's page tests, each of which opens its page in a
    browser context of its own (no cookie, storage or cache shared: ``browser_page``). Launched
    per test (Playwright's driver, then the browser) it cost 1-2 s a test, a minute of the
    suite over its ~60 page tests.

    Playwright's sync API leaves its event loop marked as this thread's running loop for as
    long as it lives; every test in between that runs ``ccsim explore`` in this process was
    then refused as if in a Jupyter kernel. The mark is set only while a page test runs
    (``browser_page``) and for the browser's own start and end."""
    import asyncio

    for browser in system_chromium():
        _PLAYWRIGHT_LOOP[:] = [asyncio.events._get_running_loop()]
        asyncio.events._set_running_loop(None)
        try:
            yield browser
        finally:
            asyncio.events._set_running_loop(_PLAYWRIGHT_LOOP.pop())


def playwright_turn() -> Iterator[None]:
    """While a page test runs: Playwright's loop marked as running again (see
    ``chromium_browser``), unmarked after."""
    import asyncio

    asyncio.events._set_running_loop(_PLAYWRIGHT_LOOP[0] if _PLAYWRIGHT_LOOP else None)
    try:
        yield
    finally:
        asyncio.events._set_running_loop(None)


@pytest.fixture
def chromium(chromium_browser: Any) -> Iterator[Any]:
    """The session's browser, for a test that opens its own contexts and pages."""
    for _ in playwright_turn():
        yield chromium_browser


def browser_page(browser: Any) -> Iterator[tuple[Any, list[str]]]:
    """A Chromium page, in a context of its own in ``browser``, and the list its console
    errors and page errors go to; the context is closed after."""
    errors: list[str] = []
    for _ in playwright_turn():
        context = browser.new_context(viewport={"width": 1200, "height": 900})
        try:
            page = context.new_page()
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            yield page, errors
        finally:
            context.close()


@contextlib.contextmanager
def dask_scheduler_in_a_process(workers: int) -> Iterator[str]:
    """A Dask scheduler on tcp://127.0.0.1 (and ``workers`` worker threads) in a process of
    its own without the DASK_* variables: Dask's configuration set in this process, or in a
    command's child, is the client's alone, as on a user's laptop beside a cluster (an
    in-process LocalCluster's scheduler reads the client's settings too). Its address."""
    code = ("import asyncio; from distributed import Scheduler, Worker\n"
            "async def main():\n"
            "    async with Scheduler(host='127.0.0.1', port=0, dashboard=False) as s:\n"
            f"        workers = [Worker(s.address, nthreads=1) for _ in range({workers})]\n"
            "        await asyncio.gather(*workers)\n"
            "        print(s.address, flush=True); await asyncio.sleep(3600)\n"
            "asyncio.run(main())")  # fmt: skip
    env = {k: v for k, v in os.environ.items() if not k.startswith("DASK_")}
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, env=env)  # fmt: skip
    try:
        assert proc.stdout is not None
        yield proc.stdout.readline().strip()
    finally:
        proc.kill()
        proc.wait()
        proc.stdout.close()  # type: ignore[union-attr]
