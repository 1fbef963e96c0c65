# SPDX-License-Identifier: MIT
"""Every file-system call a command makes to *read* its inputs, failed in turn with each errno
a disk gives a read (fault injection; the writes are tests/python/test_disk_faults.py's).

Campaign 29 (issue 32): the Nth ``open`` for reading, ``os.scandir``, ``os.listdir``,
``os.stat``, ``json.load`` or pyarrow's ``read_table``/``ParquetFile`` on a path inside the
test's tree raises an OSError (EIO: a failing disk; EACCES: permissions changed; ENOENT: a file
removed between listing and reading; EISDIR: a folder where a file was; ELOOP: a link cycle),
for each kind of call of a first run of the command counted. The inputs (the scenario file, a
sweep's or reproduction's store, the results a report reads) are inside the tree. Each cell
must end like a write's: status 1 and one ``ccsim: error:`` line naming a path of the tree and
no hidden file, no traceback, no hidden file left, ``--out`` as it was or said to hold part of
the output, and the same command succeeding once the fault is gone; or, for a fault the
command may pass over (a store's record it runs again), status 0 and the output whole.

The writes the first matrix left out are here too: the close of each file written failing
(ENOSPC or EIO with no file named, as NFS reports a write it could not make) and ``os.chmod``
(a staging folder's mode); ``reproduce --record``'s writes into ``<paper>/full-run``; and
``ccsim explore``: its start (the plans of the reproductions under ``--results``, read before
it serves) and a job's run store (saves, loads and closes), where the job must end with an
error event naming a file of the store, or finish, and the next job run.
"""

from __future__ import annotations

import builtins
import errno
import io
import json
import os
import shutil
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from test_disk_faults import (
    HIDDEN,
    M01,
    ROOT,
    SCENARIO,
    error_line,
    hidden,
    paper_of,
    reproduction,
    snapshot,
)

from ccsim.cli import main
from ccsim.sweep import CorruptRecordWarning

__all__ = ["reproduction"]  # the fixture, shared with the writes' matrix

#: The errnos a disk gives a read.
ERRNOS = (errno.EIO, errno.EACCES, errno.ENOENT, errno.EISDIR, errno.ELOOP)

#: The errnos a close gives: NFS reports a write it could not make (a full disk, a failing
#: server) only there.
CLOSE_ERRNOS = (errno.ENOSPC, errno.EIO)


class ReadFaults:
    """Counts the read-side calls on paths under ``base`` and fails the ``fail``-th (1-based)
    with ``code``; ``fail`` 0 counts only."""

    def __init__(self, base: Path, fail: int = 0, code: int = errno.EIO) -> None:
        self.base = str(base)
        self.fail = fail
        self.code = code
        self.calls: list[str] = []

    def hit(self, what: str, path: Any) -> None:
        try:
            name = os.path.abspath(os.fsdecode(path))
        except TypeError:  # a file descriptor, a file object
            return
        if not name.startswith(self.base):
            return
        self.calls.append(f"{what} {name}")
        if len(self.calls) == self.fail:
            raise OSError(self.code, os.strerror(self.code), name)

    def wrap(self, what: str, real: Callable[..., Any]) -> Callable[..., Any]:
        def faulty(*args: Any, **kwargs: Any) -> Any:
            if args:
                self.hit(what, args[0])
            return real(*args, **kwargs)

        return faulty

    def wrap_open(self, real: Callable[..., Any]) -> Callable[..., Any]:
        def faulty(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
            if isinstance(file, (str, bytes, os.PathLike)) and not any(c in mode for c in "wax+"):
                self.hit("open", file)
            return real(file, mode, *args, **kwargs)

        return faulty

    def wrap_json(self, real: Callable[..., Any]) -> Callable[..., Any]:
        def faulty(fp: Any, *args: Any, **kwargs: Any) -> Any:
            self.hit("json.load", getattr(fp, "name", None))
            return real(fp, *args, **kwargs)

        return faulty


@contextmanager
def injected(monkeypatch: pytest.MonkeyPatch, faults: ReadFaults) -> Iterator[ReadFaults]:
    import pyarrow.parquet as pq

    with monkeypatch.context() as m:
        for name in ("scandir", "listdir", "stat"):
            m.setattr(os, name, faults.wrap(f"os.{name}", getattr(os, name)))
        m.setattr(builtins, "open", faults.wrap_open(builtins.open))
        m.setattr(io, "open", faults.wrap_open(io.open))
        m.setattr(json, "load", faults.wrap_json(json.load))
        m.setattr(pq, "read_table", faults.wrap("pq.read_table", pq.read_table))
        m.setattr(pq, "ParquetFile", faults.wrap("pq.ParquetFile", pq.ParquetFile))
        yield faults


class ClosingFile:
    """A file open for writing whose close may fail, as NFS reports a write it could not make
    (ENOSPC, EIO) only at close(), with no file named."""

    def __init__(self, f: Any, faults: CloseFaults, path: str) -> None:
        self._f = f
        self._faults = faults
        self._path = path
        self._closed = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._f, name)

    def __iter__(self) -> Iterator[Any]:
        return iter(self._f)

    def __enter__(self) -> ClosingFile:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._f.close()
        self._faults.closed(self._path)


class CloseFaults(ReadFaults):
    """Counts the closes of files opened for writing and the ``os.chmod`` calls under
    ``base``, and fails the ``fail``-th: a close with no file named, as the system's."""

    def closed(self, path: str) -> None:
        self.calls.append(f"close {os.path.abspath(path)}")
        if len(self.calls) == self.fail:
            raise OSError(self.code, os.strerror(self.code))

    def wrap_open(self, real: Callable[..., Any]) -> Callable[..., Any]:
        def faulty(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
            f = real(file, mode, *args, **kwargs)
            if isinstance(file, (str, bytes, os.PathLike)) and any(c in mode for c in "wax+"):
                path = os.path.abspath(os.fsdecode(file))
                if path.startswith(self.base):
                    return ClosingFile(f, self, path)
            return f

        return faulty


@contextmanager
def injected_close(monkeypatch: pytest.MonkeyPatch, faults: CloseFaults) -> Iterator[CloseFaults]:
    with monkeypatch.context() as m:
        m.setattr(os, "chmod", faults.wrap("os.chmod", os.chmod))
        m.setattr(builtins, "open", faults.wrap_open(builtins.open))
        m.setattr(io, "open", faults.wrap_open(io.open))
        yield faults


COMMANDS = ("run", "sweep-resumed", "reproduce-resumed", "report", "from-parquet")
#: The commands whose writes' closes are failed: a run into a new folder, a sweep, a fresh
#: reproduction (its store's records are saved) and a report.
WRITERS = ("run", "sweep", "reproduce", "report")


def setup(command: str, base: Path, reproduction: Path) -> tuple[list[str], Path]:
    out = base / "out"
    if command == "run":
        scenario = base / "scenario.toml"
        shutil.copyfile(SCENARIO, scenario)
        return ["run", str(scenario), "--set", "duration=100ms", "--out", str(out)], out
    if command == "reproduce":
        paper = base / "experiments" / M01.name
        shutil.copytree(paper_of(reproduction), paper)
        return ["reproduce", str(paper), "--quick", "--seeds", "1", "--workers", "1",
                "--out", str(out)], out  # fmt: skip
    if command.startswith("sweep"):
        scenario = base / "scenario.toml"
        shutil.copyfile(SCENARIO, scenario)
        line = ["sweep", str(scenario), "--set", "duration=100ms", "--param",
                "links.bottleneck.loss.rate=0.01,0.02", "--seeds", "1", "--workers", "1",
                "--out", str(out)]  # fmt: skip
        if command == "sweep-resumed":
            assert main(line) == 0
        return line, out
    if command == "reproduce-resumed":
        paper = base / "experiments" / M01.name
        shutil.copytree(paper_of(reproduction), paper)
        shutil.copytree(reproduction, out, symlinks=True)
        return ["reproduce", str(paper), "--quick", "--seeds", "1", "--workers", "1",
                "--out", str(out)], out  # fmt: skip
    if command == "report":
        shutil.copytree(reproduction, base / "results" / "m01-quick", symlinks=True)
        return ["report", "--results", str(base / "results"), "--out", str(out)], out
    # Result.from_parquet through `ccsim run`'s output, read back by the API.
    assert main(["run", SCENARIO, "--set", "duration=100ms", "--out", str(out)]) == 0
    return [], out


def sampled(calls: list[str], base: Path) -> list[int]:
    """The N of the first call of each kind: function, folder (a store's shards one), suffix."""
    import re

    seen: dict[tuple[str, str, str], int] = {}
    for n, call in enumerate(calls, start=1):
        what, path = call.split(" ", 1)
        rel = Path(path).relative_to(base)
        folder = re.sub(r"/[0-9a-f]{2}(/|$)", "/SHARD\\1", str(rel.parent))
        folder = re.sub(r"\.(site\.partial|ccsim-partial|out\.partial)-\w+", "STAGE", folder)
        seen.setdefault((what, folder, rel.suffix), n)
    return sorted(seen.values())


def entries(out: Path) -> set[str]:
    """The names of the files and folders in ``out``, relative to it."""
    return {str(Path(top, n).relative_to(out)) for top, dirs, files in os.walk(out)
            for n in dirs + files}  # fmt: skip


def from_parquet(out: Path) -> int:
    """``Result.from_parquet`` of ``out``: 0, or an OSError/ValueError naming the file."""
    from ccsim import Result

    try:
        Result.from_parquet(out)
    except (OSError, ValueError) as e:
        print(f"ccsim: error: {e}", file=__import__("sys").stderr)
        return 1
    return 0


@pytest.mark.parametrize(
    ("fault", "command"), [("read", c) for c in COMMANDS] + [("close", c) for c in WRITERS]
)
def test_every_failed_read_or_close_is_one_line_naming_a_real_path_and_leaves_out_whole(
    fault: str,
    command: str,
    reproduction: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.delenv("CCSIM_RESULTS", raising=False)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))

    def execute(line: list[str], out: Path) -> int:
        # A record that cannot be read is a warning ("damaged run record ...; running it
        # again"), shown as one line, as outside the suite: under -W error it was raised,
        # and read as the command's own error.
        with warnings.catch_warnings():
            warnings.simplefilter("default", CorruptRecordWarning)
            return from_parquet(out) if command == "from-parquet" else main(line)

    count_base = tmp_path / "count"
    count_base.mkdir()
    line, out = setup(command, count_base, reproduction)
    capsys.readouterr()
    inject, Kind, codes = {
        "read": (injected, ReadFaults, ERRNOS),
        "close": (injected_close, CloseFaults, CLOSE_ERRNOS),
    }[fault]
    with inject(monkeypatch, Kind(count_base)) as counting:
        assert execute(line, out) == 0, capsys.readouterr().err
    capsys.readouterr()
    calls = counting.calls
    assert calls, f"{command} made no read in its tree"
    whole = entries(out)
    kinds = sampled(calls, count_base)
    wrong = []
    over: list[str] = []
    tested = passed_over = 0
    for i, n in enumerate(kinds):
        code = codes[i % len(codes)]
        base = tmp_path / f"c{n}-{code}"
        base.mkdir()
        line, out = setup(command, base, reproduction)
        capsys.readouterr()
        before = snapshot(base)
        with inject(monkeypatch, Kind(base, n, code)) as faults:
            status = execute(line, out)
        err = capsys.readouterr().err
        after = snapshot(base)
        if len(faults.calls) < n:
            shutil.rmtree(base)
            continue
        tested += 1
        where = f"{calls[n - 1].replace(str(count_base), '')} {errno.errorcode[code]}"
        errors = [x for x in err.splitlines() if x.startswith("ccsim: error:")]
        problems = []
        if status == 0 and not errors and "Traceback" not in err:
            passed_over += 1
            lost = whole - entries(out)
            if lost:
                problems.append(f"status 0, saying nothing, without {sorted(lost)[:5]}")
            over.append(f"{where} {err.strip()[-200:]!r}".replace(str(base), ""))
        else:
            text, problems = error_line(status, err, base)
            changed = [p for p in sorted(before.keys() | after.keys())
                       if before.get(p) != after.get(p)]  # fmt: skip
            if command.startswith("reproduce"):
                kept = (str(out / "plan"), str(out / "runs"))
                changed = [p for p in changed if not p.startswith(kept)]
                if changed == [str(out)] and set(os.listdir(out)) <= {"plan", "runs"}:
                    changed = []  # made for its store, kept to resume from
            if command.startswith("sweep") and "kept in" in text:
                runs = str(out / "runs")
                changed = [p for p in changed if not p.startswith(runs) and p != str(out)]
            if changed and f"{out} holds" not in text:
                problems.append(f"changed {[p.replace(str(base), '') for p in changed][:5]}")
        left = hidden(base)
        if left:
            problems.append(f"left {[p.replace(str(base), '') for p in left]}")
        if execute(line, out) != 0:
            problems.append(f"re-run failed: {capsys.readouterr().err[-300:]!r}")
        capsys.readouterr()
        if problems:
            wrong.append(f"{where}: {'; '.join(problems)} [{text.replace(str(base), '')}]")
        shutil.rmtree(base)
    print(f"{command}: {len(calls)} reads, {len(kinds)} kinds, {tested} cells, "
          f"{passed_over} passed over:\n  " + "\n  ".join(over))  # fmt: skip
    assert wrong == [], f"{len(wrong)} of {tested} cells:\n" + "\n".join(wrong)


#: The faults of the explorer's run store: the writes' (test_disk_faults.Faults), reads and
#: closes, each with the errnos of its kind.
STORE_FAULTS = ("write", "read", "close")


@pytest.mark.parametrize("fault", STORE_FAULTS)
def test_a_job_whose_store_fails_ends_with_an_error_naming_the_record_and_the_next_job_runs(
    fault: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `ccsim explore` saves a job's runs in the store reproductions share and loads them
    # back: the Nth call there failing must end the job with an error event naming a file of
    # the store (never a hidden one) or, for a record it can run again, finish it; and the
    # explorer must go on serving: the same job, posted again, is done.
    pytest.importorskip("starlette", reason="ccsim explore needs the extra `explore`")
    import time

    from test_disk_faults import ERRNOS as WRITE_ERRNOS
    from test_disk_faults import Faults
    from test_disk_faults import injected as injected_write

    from ccsim.explore import Catalog, Engine

    request = {"paper": "p001", "figure": "fig8", "x": ["0.05"], "lines": ["spack"], "seeds": 2}
    inject, Kind, codes = {
        "write": (injected_write, Faults, WRITE_ERRNOS),
        "read": (injected, ReadFaults, ERRNOS),
        "close": (injected_close, CloseFaults, CLOSE_ERRNOS),
    }[fault]

    def job_events(engine: Engine) -> list[dict[str, Any]]:
        job = engine.submit(Catalog(ROOT / "experiments").request(request))
        deadline = time.monotonic() + 60
        while not job.finished:
            assert time.monotonic() < deadline, f"the job never finished: {job.events}"
            time.sleep(0.02)
        return job.events

    def engine_over(results: Path, prefill: bool) -> Engine:
        if prefill:  # a store with the job's records, for the reads
            first = Engine(results, workers=1)
            try:
                assert job_events(first)[-1]["type"] == "done"
            finally:
                first.close()
        return Engine(results, workers=1)

    prefill = fault == "read"
    count = tmp_path / "count"
    engine = engine_over(count / "results", prefill)
    try:
        with inject(monkeypatch, Kind(count)) as counting:
            assert job_events(engine)[-1]["type"] == "done"
    finally:
        engine.close()
    calls = counting.calls
    assert calls, f"the job made no {fault} in its store"
    wrong = []
    tested = 0
    for i, n in enumerate(sampled(calls, count)):
        code = codes[i % len(codes)]
        base = tmp_path / f"c{n}-{code}"
        engine = engine_over(base / "results", prefill)
        try:
            with inject(monkeypatch, Kind(base, n, code)) as faults:
                events = job_events(engine)
            if len(faults.calls) < n:
                continue
            tested += 1
            last = events[-1]
            where = f"{calls[n - 1].replace(str(count), '')} {errno.errorcode[code]}"
            problems = []
            if last["type"] == "error":
                text = last["message"].replace(str(base), "")
                if any(h in text for h in HIDDEN):
                    problems.append("names a hidden file")
                if str(base) not in last["message"]:
                    problems.append("names no path")
            elif last["type"] != "done":
                problems.append(f"ended {last}")
            left = hidden(base)
            if left:
                problems.append(f"left {[p.replace(str(base), '') for p in left]}")
            again = job_events(engine)[-1]
            if again["type"] != "done":
                problems.append(f"the next job: {again}")
            if problems:
                wrong.append(f"{where}: {'; '.join(problems)} [{last}]")
        finally:
            engine.close()
    print(f"explore store {fault}: {len(calls)} calls, {tested} cells")
    assert wrong == [], f"{len(wrong)} of {tested} cells:\n" + "\n".join(wrong)


def test_every_failed_read_of_the_explorers_start_is_one_line_naming_a_real_path(
    reproduction: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # `ccsim explore --results DIR` away from the repository: its plans are the ones stored
    # with the reproductions under DIR, scanned before it serves. Each read of that scan
    # failing must be one error line naming a file there, or the start passing it over (the
    # reproduction named in a warning, or read whole); never a traceback.
    pytest.importorskip("uvicorn", reason="ccsim explore needs the extra `explore`")
    import socket

    import ccsim.explore.server as server

    class Served:
        """A server that says its address as it starts serving, then stops at once."""

        unsaid = None

        def __init__(self, started: Any) -> None:
            self.started = started

        def run(self, sockets: Any = None) -> None:
            self.started()

    monkeypatch.setattr(server, "stopping_server", lambda _c, _e, started: Served(started))
    monkeypatch.setenv("HOME", str(tmp_path))

    def prepare(base: Path) -> None:
        base.mkdir()
        shutil.copytree(reproduction, base / "results" / "m01-quick", symlinks=True)

    def start(base: Path) -> int:
        results = base / "results"
        monkeypatch.chdir(base)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        return main(["explore", "--port", str(port), "--results", str(results)])

    count = tmp_path / "count"
    prepare(count)
    with injected(monkeypatch, ReadFaults(count)) as counting:
        assert start(count) == 0, capsys.readouterr().err
    capsys.readouterr()
    calls = counting.calls
    assert calls
    wrong = []
    tested = 0
    for i, n in enumerate(sampled(calls, count)):
        code = ERRNOS[i % len(ERRNOS)]
        base = tmp_path / f"c{n}-{code}"
        prepare(base)
        with injected(monkeypatch, ReadFaults(base, n, code)) as faults:
            status = start(base)
        err = capsys.readouterr().err
        if len(faults.calls) < n:
            continue
        tested += 1
        where = f"{calls[n - 1].replace(str(count), '')} {errno.errorcode[code]}"
        problems = []
        if "Traceback" in err or "internal error" in err:
            problems.append(f"stderr {err[-400:]!r}")
        if status != 0:
            problems += error_line(status, err, base)[1]
        if start(base) != 0:
            problems.append(f"restart failed: {capsys.readouterr().err[-300:]!r}")
        capsys.readouterr()
        if problems:
            wrong.append(f"{where}: {'; '.join(problems)} [{err.strip().replace(str(base), '')}]")
    print(f"explore start: {len(calls)} reads, {tested} cells")
    assert wrong == [], f"{len(wrong)} of {tested} cells:\n" + "\n".join(wrong)


@pytest.mark.parametrize("fault", ["write", "close"])
def test_every_failed_write_of_reproduce_record_is_one_line_and_leaves_full_run_whole(
    fault: str,
    reproduction: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # `ccsim reproduce PAPER --record` keeps the full run's tables in PAPER/full-run, where
    # the README's numbers are checked against them: each write there failing must be one
    # error line naming a file, with full-run as it was (or said to hold part). A full run
    # takes hours: the reproduction is the quick one's, put in --out by a stand-in; what is
    # tested is the record's writes and what the error says.
    from test_disk_faults import ERRNOS as WRITE_ERRNOS
    from test_disk_faults import Faults
    from test_disk_faults import injected as injected_write

    import ccsim.experiment.reproduction as reproduction_module
    from ccsim.experiment.reproduction import Reproduction

    def quick_as_full(folder: Any, out: Any, *_a: Any, **_k: Any) -> Reproduction:
        shutil.copytree(reproduction, out, symlinks=True, dirs_exist_ok=True)
        return Reproduction(Path(out) / "report.md", Path(out) / "results.parquet", 0, 8)

    monkeypatch.setattr(reproduction_module, "reproduce", quick_as_full)
    monkeypatch.setenv("HOME", str(tmp_path))
    inject, Kind, codes = {
        "write": (injected_write, Faults, WRITE_ERRNOS),
        "close": (injected_close, CloseFaults, CLOSE_ERRNOS),
    }[fault]

    def setup_record(base: Path) -> tuple[list[str], Path]:
        paper = base / "experiments" / M01.name
        shutil.copytree(paper_of(reproduction), paper)
        return ["reproduce", str(paper), "--record", "--workers", "1",
                "--out", str(base / "out")], paper / "full-run"  # fmt: skip

    count = tmp_path / "count"
    count.mkdir()
    line, record = setup_record(count)
    with inject(monkeypatch, Kind(count / "experiments")) as counting:
        assert main(line) == 0, capsys.readouterr().err
    capsys.readouterr()
    calls = counting.calls
    assert calls, "--record made no write"
    wrong = []
    tested = 0
    for i, n in enumerate(sampled(calls, count)):
        code = codes[i % len(codes)]
        base = tmp_path / f"c{n}-{code}"
        base.mkdir()
        line, record = setup_record(base)
        before = snapshot(record)
        with inject(monkeypatch, Kind(base / "experiments", n, code)) as faults:
            status = main(line)
        err = capsys.readouterr().err
        if len(faults.calls) < n:
            continue
        tested += 1
        where = f"{calls[n - 1].replace(str(count), '')} {errno.errorcode[code]}"
        text, problems = error_line(status, err, base)
        if status == 0 and "ccsim: error:" not in err and not hidden(base / "experiments"):
            problems = []  # passed over, leaving nothing behind
        elif not problems:
            changed = snapshot(record) != before
            if changed and f"{record} holds" not in text:
                problems.append("full-run changed")
            if str(base / "out") not in text:
                problems.append("says nothing of --out (its reproduction is whole)")
        left = hidden(base / "experiments")
        if left:
            problems.append(f"left {[p.replace(str(base), '') for p in left]}")
        if main(line) != 0:
            problems.append(f"re-run failed: {capsys.readouterr().err[-300:]!r}")
        capsys.readouterr()
        if problems:
            wrong.append(f"{where}: {'; '.join(problems)} [{text.replace(str(base), '')}]")
    print(f"reproduce --record {fault}: {len(calls)} calls, {tested} cells")
    assert wrong == [], f"{len(wrong)} of {tested} cells:\n" + "\n".join(wrong)
