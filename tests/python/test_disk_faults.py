# SPDX-License-Identifier: MIT
"""Every file-system call a command makes into its output, failed in turn with each errno a
disk gives (fault injection).

Campaigns 22-27 (issue 32) found the defects of this class one at a time: errors naming a
hidden temporary or staging file (``.tmp-...``, ``.partial``, ``.site.partial-...``), saying
runs were kept where none were, or leaving ``--out`` part-written. Here the Nth call of
``os.replace``, ``os.rename``, ``os.mkdir``, ``os.rmdir``, ``os.unlink``, ``shutil.copyfile``,
``open`` for writing or pyarrow's ``write_table`` on a path inside the test's tree raises an
OSError, for each N a first run of the command counted (sampled, deterministically, with the
errno); ``run-across-disks`` also has every rename out of the hidden folder fail with EXDEV,
so that its files are copied into place.
Each cell must end with:

- status 1 and exactly one ``ccsim: error:`` line, no traceback;
- the line names no hidden file or staging folder, and names a path of the tree;
- no hidden file or folder left in the tree;
- ``--out`` as it was before, or the line says it holds part of the output (a
  reproduction's ``plan/`` and ``runs/`` store are kept to resume from, and say so);
- the same command, run again without the fault, succeeding.
"""

from __future__ import annotations

import builtins
import errno
import io
import os
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from ccsim.cli import main
from ccsim.experiment import find_experiment, reproduce

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = str(ROOT / "examples" / "random-loss.toml")
M01 = find_experiment("m01", ROOT)

#: The errnos a disk gives a write: full, over quota, gone read-only, a folder removed, a
#: name too long, a failing device, permissions changed.
ERRNOS = (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.ENOENT, errno.ENAMETOOLONG,
          errno.EIO, errno.EACCES)  # fmt: skip

#: What names a hidden file or folder ccsim writes before renaming it into place.
HIDDEN = (".partial", ".tmp", ".ccsim-partial", ".copy-", "/.", "staging")


def error_line(status: int, err: str, base: Path) -> tuple[str, list[str]]:
    """A failed command's ``ccsim: error:`` line, and what is wrong with how it failed: a
    status other than 1, not exactly one such line, a traceback, a hidden file named, or no
    path of the test's tree (``base``) named."""
    errors = [x for x in err.splitlines() if x.startswith("ccsim: error:")]
    text = errors[0] if errors else ""
    problems = []
    if status != 1:
        problems.append(f"status {status}")
    if len(errors) != 1 or "Traceback" in err or "internal error" in err:
        problems.append(f"stderr {err[-600:]!r}")
    if any(h in text.replace(str(base), "") for h in HIDDEN):
        problems.append(f"names a hidden file: {text!r}")
    if str(base) not in text:
        problems.append(f"names no path: {text!r}")
    return text, problems


class Faults:
    """Counts the file-system calls made on paths under ``base`` and fails the ``fail``-th
    (1-based) with ``code``; ``fail`` 0 counts only."""

    def __init__(self, base: Path, fail: int = 0, code: int = errno.ENOSPC) -> None:
        self.base = str(base)
        self.fail = fail
        self.code = code
        self.calls: list[str] = []

    def _ours(self, path: Any) -> bool:
        try:
            return os.path.abspath(os.fsdecode(path)).startswith(self.base)
        except TypeError:  # a file descriptor
            return False

    def hit(self, what: str, path: Any, source: Any = None) -> None:
        """Count the call on ``path``; fail it when it is the one. A rename's error names both
        files, its source first, as the system's does."""
        if not self._ours(path):
            return
        # A call the system fails anyway is not one a disk fault reaches first: a folder made
        # where one exists (Path.mkdir(exist_ok=True)), a file removed that is not there.
        exists = os.path.lexists(path)
        if (what == "os.mkdir" and exists) or (what in ("os.unlink", "os.rmdir") and not exists):
            return
        self.calls.append(f"{what} {os.fsdecode(path)}")
        if len(self.calls) == self.fail:
            if source is not None:
                raise OSError(self.code, os.strerror(self.code), os.fsdecode(source), None,
                              os.fsdecode(path))  # fmt: skip
            raise OSError(self.code, os.strerror(self.code), os.fsdecode(path))

    def wrap(self, what: str, real: Callable[..., Any], arg: int = 0) -> Callable[..., Any]:
        def faulty(*args: Any, **kwargs: Any) -> Any:
            if len(args) > arg:
                self.hit(what, args[arg], args[0] if what.startswith("os.re") else None)
            return real(*args, **kwargs)

        return faulty

    def wrap_open(self, real: Callable[..., Any]) -> Callable[..., Any]:
        def faulty(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
            if isinstance(file, (str, bytes, os.PathLike)) and any(c in mode for c in "wax+"):
                self.hit("open", file)
            return real(file, mode, *args, **kwargs)

        return faulty


@contextmanager
def injected(monkeypatch: pytest.MonkeyPatch, faults: Faults) -> Iterator[Faults]:
    import pyarrow.parquet as pq

    with monkeypatch.context() as m:
        for name in ("replace", "rename"):
            m.setattr(os, name, faults.wrap(f"os.{name}", getattr(os, name), 1))
        m.setattr(os, "mkdir", faults.wrap("os.mkdir", os.mkdir))
        m.setattr(os, "unlink", faults.wrap("os.unlink", os.unlink))
        m.setattr(os, "rmdir", faults.wrap("os.rmdir", os.rmdir))
        m.setattr(shutil, "copyfile", faults.wrap("shutil.copyfile", shutil.copyfile, 1))
        m.setattr(builtins, "open", faults.wrap_open(builtins.open))
        m.setattr(io, "open", faults.wrap_open(io.open))
        m.setattr(pq, "write_table", faults.wrap("pq.write_table", pq.write_table, 1))
        yield faults


def snapshot(base: Path) -> dict[str, tuple[Any, ...]]:
    seen: dict[str, tuple[Any, ...]] = {}
    for top, dirs, files in os.walk(base):
        for name in dirs + files:
            path = os.path.join(top, name)
            st = os.lstat(path)
            if os.path.isdir(path) and not os.path.islink(path):
                seen[path] = ("dir",)
            else:
                seen[path] = ("file", st.st_size, st.st_mtime_ns)
    return seen


def hidden(base: Path) -> list[str]:
    return [p for p in snapshot(base) if os.path.basename(p).startswith(".")]


#: The figure m01's copy keeps (see ``one_figure``): the one with the paper's values.
KEPT_FIGURE = "fig12"


def one_figure(paper: Path, dest: Path, keep: str = KEPT_FIGURE) -> Path:
    """A copy of ``paper`` at ``dest`` whose plan keeps one figure, ``keep``, and its claims.

    A cell's faulted command and its re-run each draw every figure of the plan (PNG and SVG
    through matplotlib, and a Plotly page each): most of a reproduction cell's time. The
    matrices fail the first call of each kind (function, folder, suffix), and one figure with
    the paper's values and its claims makes a call of every kind m01's five figures make: the
    kinds sampled, in the same order and so with the same errnos, are m01's (campaign 46
    printed both), in 2 runs' reproduction instead of 7 and a third of the time."""
    import re

    shutil.copytree(paper, dest)
    blocks: list[list[str]] = [[]]
    for line in (paper / "plan.toml").read_text(encoding="utf-8").splitlines(keepends=True):
        if re.match(r"\[\[?[a-z_.]+\]\]?\s*$", line):
            blocks.append([])
        blocks[-1].append(line)

    def value(block: list[str], key: str) -> str:
        return next(ln.split('"')[1] for ln in block if ln.startswith(f"{key} ="))

    kept: list[str] = []
    figure = None  # the figure a block belongs to ([[figures]] and its [figures.*] tables)
    for block in blocks:
        head = block[0].strip()
        if head == "[[figures]]":
            figure = value(block, "id")
        elif not head.startswith("[figures."):
            figure = None
        if head == "[[claims]]" and value(block, "figure") != keep:
            continue
        if figure is None or figure == keep:
            kept.append("".join(block))
    (dest / "plan.toml").write_text("".join(kept), encoding="utf-8")
    return dest


def paper_of(reproduction: Path) -> Path:
    """The plan folder ``reproduction`` was made from (m01 with one figure), beside it."""
    return reproduction.parent / M01.name


@pytest.fixture(scope="module")
def reproduction(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The quick reproduction with one seed of m01 with one figure (``one_figure``), made
    once: its runs/ are copied into each cell's --out so that the reproduction there reads
    them rather than running them; its plan folder is ``paper_of`` it."""
    import matplotlib.pyplot  # noqa: F401  (its config folder is chosen before HOME moves)

    base = tmp_path_factory.mktemp("m01")
    folder = base / "m01-quick"
    reproduce(one_figure(M01, base / M01.name), folder, quick=True, workers=1, seeds=1,
              progress=False)  # fmt: skip
    return folder


#: The commands: each makes its tree under ``base`` and gives its command line and --out.
COMMANDS = ("run", "run-again", "run-across-disks", "sweep", "reproduce", "reproduce-resumed",
            "report", "bench")  # fmt: skip


def setup(command: str, base: Path, reproduction: Path) -> tuple[list[str], Path]:
    out = base / "out"
    if command.startswith("run"):
        line = ["run", SCENARIO, "--set", "duration=100ms", "--pcap", "r1",
                "--out", str(out)]  # fmt: skip
        if command != "run":  # into an earlier run's folder
            assert main(line) == 0
        return line, out
    if command == "sweep":
        return ["sweep", SCENARIO, "--set", "duration=100ms", "--param",
                "links.bottleneck.loss.rate=0.01,0.02", "--seeds", "2", "--workers", "1",
                "--out", str(out)], out  # fmt: skip
    if command.startswith("reproduce"):
        out.mkdir()
        shutil.copytree(reproduction / "runs", out / "runs")
        if command == "reproduce-resumed":
            shutil.copytree(reproduction / "plan", out / "plan")
        return ["reproduce", str(paper_of(reproduction)), "--quick", "--seeds", "1",
                "--workers", "1", "--out", str(out)], out  # fmt: skip
    if command == "report":
        shutil.copytree(reproduction, base / "results" / "m01-quick", symlinks=True)
        return ["report", "--results", str(base / "results"), "--out", str(out)], out
    return ["bench", "--only", "F10", "--plot", str(out / "scale.png")], out


def across_disks(real: Callable[..., Any]) -> Callable[..., Any]:
    """``os.replace`` failing with EXDEV for a rename out of a command's hidden folder."""

    def replace(src: Any, dst: Any, *args: Any, **kwargs: Any) -> Any:
        if ".ccsim-partial-" in os.fsdecode(src) and ".copy-" not in os.fsdecode(src):
            raise OSError(errno.EXDEV, os.strerror(errno.EXDEV), os.fsdecode(src), None,
                          os.fsdecode(dst))  # fmt: skip
        return real(src, dst, *args, **kwargs)

    return replace


def fake_benchmarks(repeat: int = 1, only: Any = None) -> list[Any]:
    """bench's rows without running a child per case: the plot's writes are what is tested."""
    from ccsim.bench import BenchRow

    return [BenchRow("F10", 0.5, 0.7, 1000, 200, 10, 50.0, 100.0, data_hops=400)]


#: The commands whose calls each fail with every errno; the others' (a reproduction: a second
#: or more each) with one, turning from call to call.
QUICK = ("run", "run-again", "sweep", "bench")


def cells(command: str, kinds: list[int]) -> list[tuple[int, int]]:
    """(N, errno) of the cells of ``command``: each N of ``kinds`` with every errno for a
    quick command; for a reproduction each with one errno, and a fresh one's kinds split
    with a resumed one's (every other kind each), within the minute."""
    if command in QUICK:
        return [(n, code) for n in kinds for code in ERRNOS]
    if command.startswith("reproduce"):
        kinds = kinds[command == "reproduce-resumed" :: 2]
    return [(n, ERRNOS[i % len(ERRNOS)]) for i, n in enumerate(kinds)]


def sampled(calls: list[str], base: Path) -> list[int]:
    """The N (1-based) of the calls whose fault is tested: the first of each kind of call,
    a kind being the function, the folder and the file's suffix (a reproduction's figure
    files are one PNG and one SVG kind per folder), so that the test stays within a minute;
    the hidden files' random parts are not part of a kind."""
    import re

    seen: dict[tuple[str, str, str], int] = {}
    for n, call in enumerate(calls, start=1):
        what, path = call.split(" ", 1)
        rel = Path(path).relative_to(base)
        folder = re.sub(r"\.(site\.partial|ccsim-partial|out\.partial)-\w+", "STAGE",
                        str(rel.parent))  # fmt: skip
        folder = re.sub(r"/[0-9a-f]{2}$", "/SHARD", folder)
        seen.setdefault((what, folder, rel.suffix), n)
    return sorted(seen.values())


@pytest.mark.parametrize("command", COMMANDS)
def test_every_failed_write_of_a_command_is_one_line_naming_a_real_path_and_leaves_out_whole(
    command: str,
    reproduction: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    import ccsim.bench

    monkeypatch.setattr(ccsim.bench, "run_benchmarks", fake_benchmarks)
    if command == "run-across-disks":
        # --out's files on another disk than the hidden folder (a pcap/ linked to a USB
        # disk): each rename out of it fails with EXDEV, and the file is copied instead.
        monkeypatch.setattr(os, "replace", across_disks(os.replace))
    monkeypatch.delenv("CCSIM_RESULTS", raising=False)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    # Counted: the calls of one clean run.
    count_base = tmp_path / "count"
    count_base.mkdir()
    line, _ = setup(command, count_base, reproduction)
    with injected(monkeypatch, Faults(count_base)) as counting:
        assert main(line) == 0, capsys.readouterr().err
    capsys.readouterr()
    calls = counting.calls
    assert calls, f"{command} made no call into its tree"
    wrong = []
    tested = 0
    for n, code in cells(command, sampled(calls, count_base)):
        base = tmp_path / f"c{n}-{code}"
        base.mkdir()
        line, out = setup(command, base, reproduction)
        capsys.readouterr()
        before = snapshot(base)
        with injected(monkeypatch, Faults(base, n, code)) as faults:
            status = main(line)
        err = capsys.readouterr().err
        after = snapshot(base)
        where = f"{calls[n - 1].replace(str(count_base), '')} {errno.errorcode[code]}"
        if len(faults.calls) < n:
            continue  # this run took another path (fewer calls): nothing failed
        tested += 1
        empty = all(os.path.isdir(h) and not os.listdir(h) for h in hidden(base))
        if status == 0 and not err and empty:
            # A failure the command may pass over, and did: the removal of a leftover (an
            # emptied hidden folder, once every file is in place, left if the disk will not
            # remove it).
            continue
        text, problems = error_line(status, err, base)
        left = hidden(base)
        if left:
            problems.append(f"left {left}")
        changed = [p for p in sorted(before.keys() | after.keys()) if before.get(p) != after.get(p)]
        if command.startswith("reproduce"):
            kept = (str(out / "plan"), str(out / "runs"))
            changed = [p for p in changed if not p.startswith(kept)]
        if command == "sweep" and "finished run" in text and "kept in" in text:
            changed = [p for p in changed if not p.startswith(str(out / "runs")) and p != str(out)]
        if changed and f"{out} holds" not in text:
            problems.append(f"changed {[p.replace(str(base), '') for p in changed]}")
        if main(line) != 0:
            problems.append(f"re-run failed: {capsys.readouterr().err!r}")
        capsys.readouterr()
        if problems:
            wrong.append(f"{where}: {'; '.join(problems)} [{text.replace(str(base), '')}]")
        shutil.rmtree(base)
    print(f"{command}: {len(calls)} calls, {tested} cells")
    assert wrong == [], f"{len(wrong)} of {tested} cells:\n" + "\n".join(wrong)


def test_a_figure_whose_save_fails_is_closed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Bug pinned (campaign 28, issue 32): a figure whose savefig failed (a full disk) stayed
    # open in pyplot; in one process (a notebook, the explorer, the matrix above) the 21st
    # failed reproduction then stopped on matplotlib's "More than 20 figures have been
    # opened" warning, an error under -W error.
    import matplotlib.pyplot as plt
    from matplotlib.figure import Figure

    from ccsim.experiment.figures import _save

    def full(*_args: Any, **_kwargs: Any) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    fig = plt.figure()
    monkeypatch.setattr(Figure, "savefig", full)
    with pytest.raises(OSError):
        _save(plt, fig, tmp_path, "fig1")
    assert not plt.fignum_exists(fig.number)


@pytest.mark.parametrize("refused", ["packets.parquet", "pings.parquet"])
def test_an_earlier_runs_table_the_disk_will_not_remove_is_named_with_what_out_holds(
    refused: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Campaign 52 (issue 32): a run into the folder of an earlier traced one removes the
    # earlier tables this run has not (packets.parquet, pings.parquet) before it puts its
    # own in place. One the disk would not remove (gone read-only) was said as
    # "<out>/pings.parquet: read-only file system" alone: nothing of --out, which had by then
    # lost the earlier packets.parquet.
    out = tmp_path / "out"
    line = ["run", SCENARIO, "--set", "duration=100ms", "--out", str(out)]
    assert main(line) == 0
    for name in ("packets.parquet", "pings.parquet"):  # the earlier run's optional tables
        (out / name).write_bytes(b"an earlier table")
    capsys.readouterr()
    unlink = os.unlink

    def read_only(path: Any, *args: Any, **kwargs: Any) -> None:
        if os.fspath(path).endswith(refused):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), os.fspath(path))
        unlink(path, *args, **kwargs)

    monkeypatch.setattr(os, "unlink", read_only)
    assert main(line) == 1
    state = f"{out} was left as it was"
    if refused == "pings.parquet":
        state = f"{out} holds the earlier output without its packets.parquet"
    assert capsys.readouterr().err == (
        f"ccsim: error: {out / refused}: read-only file system; {state}\n"
    )
    assert hidden(out) == []
