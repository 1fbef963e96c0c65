# SPDX-License-Identifier: MIT
"""Two commands at once on one folder, as a class (campaign 31, issue 32).

A user starts a sweep in one terminal and, before it ends, a run into the same --out in
another (or the explorer over a reproduction being written, or a notebook's ``to_parquet``).
Each case draws two commands from {run, sweep of 2 points, reproduce m01 --quick --seeds 1,
report over the results, the explorer with a job POSTed and read, ``Result.to_parquet``,
``sweep.execute`` into a store}, starts the second after a random delay (0 to the first's
length), sometimes interrupts one (SIGINT or SIGTERM at a random moment) and then runs it
again to its end. Invariants:

- each command ends 0; or 1 with one ``ccsim: error:`` line that names no hidden folder, no
  traceback and no "internal error"; or 130/143 when interrupted;
- afterwards the folder's entries are those after the two commands in a row (either order),
  every Parquet table and every stored record reads back, and no hidden staging folder is
  left anywhere in the tree.

Seeded: ``CCSIM_CONCURRENT_SEED`` (default 31) and ``CCSIM_CONCURRENT_CASES`` (default 5,
about a minute) for long runs.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from conftest import free_port

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "examples" / "random-loss.toml"
M01 = ROOT / "experiments" / "m01-dctcp"
SEED = int(os.environ.get("CCSIM_CONCURRENT_SEED", "31"))
CASES = int(os.environ.get("CCSIM_CONCURRENT_CASES", "5"))

#: A run long enough (about a second) for another command to start and end inside it.
LONG_RUN = ["--set", "duration=600s", "--set", "links.bottleneck.rate=1Gbps", "--set",
            "links.access.rate=10Gbps", "--set", "links.bottleneck.loss.rate=0.0001"]  # fmt: skip
KINDS = ("run", "long run", "sweep", "reproduce", "report", "explore", "to_parquet", "execute")

API_PARQUET = """
import sys
import ccsim
from ccsim.errors import Error
try:
    r = ccsim.run(sys.argv[1], overrides=["duration=2s"])
    r.to_parquet(sys.argv[2])
except (ValueError, Error) as e:
    print(f"ccsim: error: {e}", file=sys.stderr)
    sys.exit(1)
except KeyboardInterrupt:
    sys.exit(130)
"""

API_EXECUTE = """
import sys
from pathlib import Path
from ccsim.sweep import RunSpec, Store, execute
text = Path(sys.argv[1]).read_text()
runs = [RunSpec(text, ("duration=1s", f"links.bottleneck.loss.rate={p}"), 1) for p in (0.01, 0.02)]
try:
    execute(runs, Store(Path(sys.argv[2]) / "runs"), workers=1, progress=False)
except (ValueError, RuntimeError) as e:
    print(f"ccsim: error: {e}", file=sys.stderr)
    sys.exit(1)
except KeyboardInterrupt:
    sys.exit(130)
"""


def command(kind: str, base: Path, port: int) -> list[str]:
    out = str(base / "results" / "m01-quick")
    ccsim = [sys.executable, "-m", "ccsim"]
    if kind == "run":
        return [*ccsim, "run", str(SCENARIO), "--set", "duration=2s", "--out", out]
    if kind == "long run":
        return [*ccsim, "run", str(SCENARIO), *LONG_RUN, "--out", out]
    if kind == "sweep":
        return [*ccsim, "sweep", str(SCENARIO), "--set", "duration=1s", "--param",
                "links.bottleneck.loss.rate=0.01,0.02", "--workers", "1", "--out", out]  # fmt: skip
    if kind == "reproduce":
        return [*ccsim, "reproduce", str(M01), "--quick", "--seeds", "1", "--workers", "1",
                "--out", out]  # fmt: skip
    if kind == "report":
        return [*ccsim, "report", "--results", str(base / "results")]
    if kind == "explore":
        return [*ccsim, "explore", "--results", str(base / "results"), "--port", str(port),
                "--workers", "1"]  # fmt: skip
    if kind == "to_parquet":
        return [sys.executable, "-c", API_PARQUET, str(SCENARIO), out]
    return [sys.executable, "-c", API_EXECUTE, str(SCENARIO), out]


class Running:
    """One command started in its own process group, the explorer driven by a job."""

    def __init__(self, kind: str, base: Path) -> None:
        self.kind = kind
        self.port = free_port()
        self.argv = command(kind, base, self.port)
        env = {**os.environ, "HOME": str(base / "home"), "PYTHONUNBUFFERED": "1"}
        env.pop("CCSIM_RESULTS", None)
        self.proc = subprocess.Popen(
            self.argv, cwd=ROOT if kind == "explore" else base, env=env,
            stdout=subprocess.PIPE if kind == "explore" else subprocess.DEVNULL,
            stderr=subprocess.PIPE, start_new_session=True,
        )  # fmt: skip
        self.signalled: int | None = None

    def drive(self) -> None:
        """The explorer: wait for its address, post m01's quick fig12 and read its events."""
        if self.kind != "explore":
            return
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            return
        url = f"http://127.0.0.1:{self.port}"
        ask = json.dumps({"paper": "m01", "figure": "fig12", "quick": True, "seeds": 1}).encode()
        try:
            json_type = {"Content-Type": "application/json"}
            req = urllib.request.Request(f"{url}/api/run", ask, json_type)
            with urllib.request.urlopen(req, timeout=30) as r:
                job = json.loads(r.read())["job"]
            with urllib.request.urlopen(f"{url}/api/jobs/{job}/events", timeout=60) as r:
                for raw in r:
                    text = raw.decode().strip()
                    if text.startswith("data:") and json.loads(text[5:])["type"] in (
                        "done", "error", "cancelled"):  # fmt: skip
                        self.events_end = json.loads(text[5:])
                        break
        except OSError:
            if self.signalled is None:
                raise
        if self.signalled is None:
            self.proc.send_signal(signal.SIGINT)

    def interrupt(self, sig: int) -> None:
        if self.proc.poll() is None:
            self.signalled = sig
            os.killpg(self.proc.pid, sig)

    def finish(self) -> tuple[int, str]:
        try:
            _, err = self.proc.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            _, err = self.proc.communicate()
            return -9, err.decode(errors="replace")
        return self.proc.returncode, err.decode(errors="replace")


def check_status(kind: str, status: int, err: str, signalled: int | None) -> None:
    said = f"{kind}: status {status}, stderr:\n{err}"
    assert "Traceback" not in err and "internal error" not in err, said
    assert ".partial-" not in err and ".ccsim-partial-" not in err and ".copy-" not in err, said
    if kind == "explore":
        assert status in (0, 130), said
        return
    allowed = {0, 1}
    if signalled is not None:
        allowed |= {128 + signalled, -signalled}
    assert status in allowed, said
    if status == 1:
        errors = [line for line in err.splitlines() if line.startswith("ccsim: error:")]
        assert len(errors) == 1, said


def hidden_left(base: Path) -> list[str]:
    left = []
    for top, dirs, files in os.walk(base):
        for name in dirs + files:
            if name.startswith(".") and ("partial" in name or ".copy-" in name):
                left.append(os.path.join(top, name))
    return left


def reads_back(folder: Path) -> None:
    import pyarrow.parquet as pq

    from ccsim.sweep import Store

    if not folder.is_dir():
        return
    for table in folder.rglob("*.parquet"):
        pq.read_table(table)
    store = folder / "runs"
    if store.is_dir():
        for record in store.rglob("*.json"):
            key = record.stem
            assert Store(store).load_valid(key) is not None, record


def entries(folder: Path) -> frozenset[str]:
    return frozenset(os.listdir(folder)) if folder.is_dir() else frozenset()


def start_state(base: Path, finished: Path | None) -> None:
    (base / "home").mkdir(parents=True)
    (base / "results").mkdir()
    if finished is not None:
        shutil.copytree(finished, base / "results" / "m01-quick", symlinks=True)


def in_a_row(kinds: tuple[str, str], scratch: Path, finished: Path | None) -> frozenset[str]:
    """The folder's entries after the two commands in a row, each one's status ignored."""
    if scratch.exists():
        shutil.rmtree(scratch)
    start_state(scratch, finished)
    for kind in kinds:
        r = Running(kind, scratch)
        r.drive()
        r.finish()
    return entries(scratch / "results" / "m01-quick")


@pytest.fixture
def finished(m01_quick: Path) -> Path:
    """m01's quick reproduction with one seed (the session's), the start state of some cases."""
    return m01_quick


#: The expected length of each command, seconds, for the delay and the interrupt's moment.
LENGTH = {"run": 0.6, "long run": 1.4, "sweep": 0.9, "reproduce": 3.0, "report": 1.5,
          "explore": 3.0, "to_parquet": 0.8, "execute": 0.9}  # fmt: skip


def cases() -> list[Any]:
    rng = random.Random(SEED)
    out = []
    for i in range(CASES):
        first, second = rng.choice(KINDS), rng.choice(KINDS)
        delay = rng.uniform(0, LENGTH[first])
        cut = None
        if rng.random() < 0.35:
            who = rng.choice((0, 1))
            kind = (first, second)[who]
            if kind != "explore":
                cut = (who, rng.choice((signal.SIGINT, signal.SIGTERM)),
                       rng.uniform(0, LENGTH[kind]))  # fmt: skip
        begin = rng.choice(("new", "finished"))
        out.append(pytest.param(first, second, delay, cut, begin, id=f"{i}-{first}-{second}"))
    return out


@pytest.mark.parametrize(("first", "second", "delay", "cut", "begin"), cases())
def test_two_commands_at_once_on_one_folder_end_cleanly_and_leave_one_whole_output(
    first: str, second: str, delay: float, cut: Any, begin: str, finished: Path, tmp_path: Path
) -> None:
    import threading

    source = finished if begin == "finished" else None
    base = tmp_path / "case"
    start_state(base, source)
    kinds = (first, second)
    running: list[Running] = []
    drivers = []
    for i, kind in enumerate(kinds):
        if i == 1:
            time.sleep(delay)
        r = Running(kind, base)
        running.append(r)
        t = threading.Thread(target=r.drive)
        t.start()
        drivers.append(t)
    if cut is not None:
        who, sig, when = cut
        time.sleep(max(0.0, when - (delay if who == 1 else 0.0)))
        running[who].interrupt(sig)
    for t in drivers:
        t.join(timeout=120)
    ends = [r.finish() for r in running]
    for r, (status, err) in zip(running, ends):
        check_status(r.kind, status, err, r.signalled)
    order = kinds
    if cut is not None and running[cut[0]].signalled is not None:
        # Interrupted: the same command again, to its end, after the other.
        again = Running(kinds[cut[0]], base)
        again.drive()
        status, err = again.finish()
        check_status(again.kind, status, err, None)
        order = (kinds[1 - cut[0]], kinds[cut[0]])
    out = base / "results" / "m01-quick"
    assert hidden_left(base) == []
    reads_back(out)
    got = entries(out)
    scratch = tmp_path / "row"
    # Both orders; one when the two commands are the same (reproduce twice): the same two
    # commands from the same start in the same order, made again, are the same entries.
    expected = {in_a_row(o, scratch, source) for o in dict.fromkeys([order, order[::-1]])}
    assert got in expected, (sorted(got), [sorted(e) for e in expected])


def test_an_output_whose_new_folder_another_command_made_meanwhile_replaces_that_output(
    tmp_path: Path,
) -> None:
    # Two runs into one new --out at once: the one ending second said "cannot be made the
    # output folder (Directory not empty)" and lost its whole output (campaign 31, issue 32);
    # in a row, the second replaces the first's tables.
    from ccsim.staging import staged_output

    out = tmp_path / "out"
    with staged_output(out, ["flows.parquet", "links.parquet", "series.parquet"]) as stage:
        (stage / "flows.parquet").write_text("second's flows\n")
        (stage / "links.parquet").write_text("second's links\n")
        out.mkdir()  # the first command ends meanwhile
        for name in ("flows.parquet", "links.parquet", "series.parquet"):
            (out / name).write_text(f"first's {name}\n")
    assert sorted(os.listdir(out)) == ["flows.parquet", "links.parquet"]
    assert (out / "flows.parquet").read_text() == "second's flows\n"
    assert (out / "links.parquet").read_text() == "second's links\n"
    assert os.listdir(tmp_path) == ["out"]  # no hidden folder beside it


KILLED_MID_WRITE = """
import os, signal, sys
import ccsim
from ccsim.result import Result

write = Result._write_tables

def write_then_killed(self, d):
    write(self, d)
    os.kill(os.getpid(), getattr(signal, sys.argv[3]))  # mid-write: the tables in the stage

Result._write_tables = write_then_killed
ccsim.run(sys.argv[1], overrides=["duration=200ms"]).to_parquet(sys.argv[2])
"""


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGHUP"])
def test_a_script_killed_while_its_to_parquet_writes_leaves_no_hidden_folder(
    tmp_path: Path, sig: str
) -> None:
    # Found by seed 3602's case 10 (to_parquet, SIGTERM at 0.15 s, beside a long run): a
    # user's script, whose SIGTERM ends it at once, left .out.partial-XXXX beside its output
    # for good (campaign 36, issue 32). The signal now ends it once the folder is in place.
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-c", KILLED_MID_WRITE, str(SCENARIO), str(out), sig],
                          capture_output=True)  # fmt: skip
    assert done.returncode == -getattr(signal, sig), done.stderr.decode()[-500:]
    assert os.listdir(tmp_path) == ["out"]
    assert "flows.parquet" in os.listdir(out)
