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
"""

from __future__ import annotations

import builtins
import errno
import io
import json
import os
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from test_disk_faults import HIDDEN, M01, SCENARIO, hidden, reproduction, snapshot

from ccsim.cli import main

__all__ = ["reproduction"]  # the fixture, shared with the writes' matrix

#: The errnos a disk gives a read.
ERRNOS = (errno.EIO, errno.EACCES, errno.ENOENT, errno.EISDIR, errno.ELOOP)


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


COMMANDS = ("run", "sweep-resumed", "reproduce-resumed", "report", "from-parquet")


def setup(command: str, base: Path, reproduction: Path) -> tuple[list[str], Path]:
    out = base / "out"
    if command == "run":
        scenario = base / "scenario.toml"
        shutil.copyfile(SCENARIO, scenario)
        return ["run", str(scenario), "--set", "duration=100ms", "--out", str(out)], out
    if command == "sweep-resumed":
        scenario = base / "scenario.toml"
        shutil.copyfile(SCENARIO, scenario)
        line = ["sweep", str(scenario), "--set", "duration=100ms", "--param",
                "links.bottleneck.loss.rate=0.01,0.02", "--seeds", "1", "--workers", "1",
                "--out", str(out)]  # fmt: skip
        assert main(line) == 0
        return line, out
    if command == "reproduce-resumed":
        paper = base / "experiments" / M01.name
        shutil.copytree(M01, paper)
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


@pytest.mark.parametrize("command", COMMANDS)
def test_every_failed_read_of_a_command_is_one_line_naming_a_real_path_and_leaves_out_whole(
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
        return from_parquet(out) if command == "from-parquet" else main(line)

    count_base = tmp_path / "count"
    count_base.mkdir()
    line, out = setup(command, count_base, reproduction)
    capsys.readouterr()
    with injected(monkeypatch, ReadFaults(count_base)) as counting:
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
        code = ERRNOS[i % len(ERRNOS)]
        base = tmp_path / f"c{n}-{code}"
        base.mkdir()
        line, out = setup(command, base, reproduction)
        capsys.readouterr()
        before = snapshot(base)
        with injected(monkeypatch, ReadFaults(base, n, code)) as faults:
            status = execute(line, out)
        err = capsys.readouterr().err
        after = snapshot(base)
        if len(faults.calls) < n:
            shutil.rmtree(base)
            continue
        tested += 1
        where = f"{calls[n - 1].replace(str(count_base), '')} {errno.errorcode[code]}"
        errors = [x for x in err.splitlines() if x.startswith("ccsim: error:")]
        text = errors[0] if errors else ""
        problems = []
        if status == 0 and not errors and "Traceback" not in err:
            passed_over += 1
            lost = whole - entries(out)
            if lost:
                problems.append(f"status 0, saying nothing, without {sorted(lost)[:5]}")
            over.append(f"{where} {err.strip()[-200:]!r}".replace(str(base), ""))
        else:
            if status != 1:
                problems.append(f"status {status}")
            if len(errors) != 1 or "Traceback" in err:
                problems.append(f"stderr {err[-600:]!r}")
            if any(h in text.replace(str(base), "") for h in HIDDEN):
                problems.append("names a hidden file")
            if str(base) not in text:
                problems.append("names no path")
            changed = [p for p in sorted(before.keys() | after.keys())
                       if before.get(p) != after.get(p)]  # fmt: skip
            if command == "reproduce-resumed":
                kept = (str(out / "plan"), str(out / "runs"))
                changed = [p for p in changed if not p.startswith(kept)]
            if command == "sweep-resumed":
                changed = [p for p in changed if not p.startswith(str(out / "runs"))]
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
