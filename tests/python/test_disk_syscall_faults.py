# SPDX-License-Identifier: MIT
"""A disk failing under a command's folder at the system-call level, as a matrix: command x
call kind x k x errno.

test_disk_faults.py fails the calls of Python's ``os``, ``open`` and pyarrow's ``write_table``
in the command's own process; the writes under them (pyarrow's C++ writers, the Rust core's
capture files, a sweep's or reproduction's workers) it cannot reach. Campaign 52 (issue 32)
found disk defects again once it failed the C library's calls instead; its library was not
kept. Here it is (disk_syscall_faults.c, beside this file): built once per session with the
system's C compiler (without one these tests skip, saying so) and loaded first (``LD_PRELOAD``)
into the command and every process it starts, it fails the k-th write-side call of one kind
(open for writing, write, rename, mkdir, fsync, unlink, rmdir, copy, link, truncate) on a path
under the cell's folder, once, with EROFS, ENOSPC or EIO; the count is shared by the command's
processes.

Each cell holds docs/environments.md's contract: status 0 with the output a plain run writes
(nothing lost to the failed call), or status 1 with exactly one ``ccsim: error:`` line naming a
file of the cell's folder and no hidden one; no traceback; no hidden file left; ``--out``
absent or as it was, or the line saying what it holds (a reproduction's plan/ and runs/ are
kept to resume from, a sweep's finished runs are kept in its store); and the same command then
succeeding without the fault.

The commands: ``run`` and ``run --pcap``, ``sweep``, the quick reproduction of m01 cut to one
figure (test_disk_faults.one_figure), ``report`` and ``bench`` (its plot), each into a new
``--out`` and over an earlier output; ``validate``, which must make no write-side call at all.
By default the tests of what the matrix found (below it) and a small fixed draw, a few
seconds; ``CCSIM_SYSCALL_CELLS=all`` counts each command's calls of each kind and runs, for
every kind it makes, its first three calls, its first on each file and two drawn later ones
(the first with every errno, the others with one, in turn): 469 cells, about 20 minutes;
``CCSIM_SYSCALL_SEED`` draws others.
"""

from __future__ import annotations

import errno
import os
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import output_digests
from test_disk_faults import M01, error_line, hidden, one_figure, snapshot

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = str(ROOT / "examples" / "random-loss.toml")
ALL = os.environ.get("CCSIM_SYSCALL_CELLS") == "all"
SEED = int(os.environ.get("CCSIM_SYSCALL_SEED") or 53)
#: The kinds of call the library counts, in its order (disk_syscall_faults.c's KIND_NAMES).
KINDS = ("open", "write", "rename", "mkdir", "fsync", "unlink", "rmdir", "copy", "link",
         "truncate")  # fmt: skip
#: What a disk says to a write: gone read-only, full, failing.
ERRNOS = (errno.EROFS, errno.ENOSPC, errno.EIO)
#: Each command, into a new --out and over an earlier output ("-over").
COMMANDS = ("run", "run-over", "run-pcap", "run-pcap-over", "sweep", "sweep-over", "reproduce",
            "reproduce-over", "report", "report-over", "bench", "bench-over",
            "validate")  # fmt: skip
#: The cheap commands and kinds the default draw takes its cells from, and how many.
DRAW_FROM = (("run-pcap", "run-pcap-over", "run-over", "sweep"),
             ("open", "write", "mkdir", "rename"), (1, 2, 3))  # fmt: skip
DRAWN = 2


@pytest.fixture(scope="session")
def shim(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """disk_syscall_faults.c built with the system's C compiler, or the test skipped."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler (cc) builds disk_syscall_faults.c: system-level faults unseen")
    built = tmp_path_factory.mktemp("shim") / "disk_syscall_faults.so"
    made = subprocess.run([cc, "-shared", "-fPIC", "-O1", "-o", str(built),
                           str(Path(__file__).with_name("disk_syscall_faults.c")), "-ldl"],
                          capture_output=True, text=True, check=False)  # fmt: skip
    if made.returncode != 0:
        pytest.skip(f"{cc} could not build disk_syscall_faults.c: {made.stderr[-300:]}")
    return built


@pytest.fixture(scope="session")
def paper(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """m01's plan cut to one figure (test_disk_faults.one_figure): a reproduction in seconds."""
    return one_figure(M01, tmp_path_factory.mktemp("paper") / M01.name)


@pytest.fixture(scope="session")
def finished(tmp_path_factory: pytest.TempPathFactory, paper: Path) -> Path:
    """The quick reproduction of ``paper`` with one seed, made once by a plain ccsim: what
    report reads and reproduce-over starts from (copied)."""
    out = tmp_path_factory.mktemp("finished") / "m01-quick"
    done = ccsim(["reproduce", str(paper), "--quick", "--seeds", "1", "--workers", "1",
                  "--out", str(out)], {})  # fmt: skip
    assert done.returncode == 0, done.stderr
    return out


def ccsim(argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``python -m ccsim ARGV`` in a child with ``env`` added, from the repository's root."""
    return subprocess.run([sys.executable, "-m", "ccsim", *argv], capture_output=True,
                          text=True, cwd=ROOT, env={**os.environ, **env}, timeout=300,
                          check=False)  # fmt: skip


def command_line(
    command: str, base: Path, request: pytest.FixtureRequest
) -> tuple[list[str], Path]:
    """The command's line, its output made under ``base`` (an earlier one first, for
    "-over"), and its --out."""
    out = base / "out"
    name = command.removesuffix("-over")
    if name.startswith("run"):
        line = ["run", SCENARIO, "--set", "duration=100ms", "--out", str(out)]
        if name == "run-pcap":
            line[-2:-2] = ["--pcap", "r1"]
    elif name == "sweep":
        line = ["sweep", SCENARIO, "--set", "duration=100ms", "--param",
                "links.bottleneck.loss.rate=0.01,0.02", "--workers", "1",
                "--out", str(out)]  # fmt: skip
    elif name == "reproduce":
        line = ["reproduce", str(request.getfixturevalue("paper")), "--quick", "--seeds", "1",
                "--workers", "1", "--out", str(out)]  # fmt: skip
        if command != name:  # over a finished reproduction
            shutil.copytree(request.getfixturevalue("finished"), out, symlinks=True)
            return line, out
    elif name == "report":
        shutil.copytree(request.getfixturevalue("finished"), base / "results" / "m01-quick",
                        symlinks=True)  # fmt: skip
        line = ["report", "--results", str(base / "results"), "--out", str(out)]
    elif name == "bench":
        line = ["bench", "--only", "F10", "--plot", str(out / "scale.png")]
        out.mkdir()
    else:
        return ["validate", SCENARIO, "--set", "duration=100ms"], out
    if command != name:
        earlier = ccsim(line, {})
        assert earlier.returncode == 0, earlier.stderr
    return line, out


class Cell:
    """One command under the library, failing its ``k``-th call of ``kind`` (k 0: counting
    only; with ``suffix``, of those on a path ending so), in ``base``; its status, stderr, and
    the calls it made (kind, path) in order."""

    def __init__(self, shim: Path, base: Path, line: list[str], kind: str = "any", k: int = 0,
                 code: int = errno.EIO, suffix: str | None = None) -> None:  # fmt: skip
        notes = base.parent / f"{base.name}.calls"
        counter = base.parent / f"{base.name}.counter"
        counter.write_bytes(bytes(8 * (len(KINDS) + 2)))
        env = {"LD_PRELOAD": str(shim), "CCSIM_FAULT_DIR": str(base), "CCSIM_FAULT_KIND": kind,
               "CCSIM_FAULT_AT": str(k), "CCSIM_FAULT_ERRNO": str(code),
               "CCSIM_FAULT_LOG": str(notes), "CCSIM_FAULT_COUNTER": str(counter)}  # fmt: skip
        if suffix is not None:
            env["CCSIM_FAULT_SUFFIX"] = suffix
        done = ccsim(line, env)
        self.status = done.returncode
        self.err = done.stderr
        said = notes.read_text(encoding="utf-8").splitlines() if notes.exists() else []
        self.failed = next((s.split("\t", 1)[1] for s in said if s.startswith("FAIL\t")), None)
        self.calls = [tuple(s.split("\t", 1)) for s in said if not s.startswith("FAIL\t")]
        notes.unlink(missing_ok=True)
        counter.unlink()


#: A plain run's output of each command (conftest.output_digests), once per session.
PLAIN: dict[str, dict[str, str]] = {}


def plain_output(command: str, tmp: Path, request: pytest.FixtureRequest) -> dict[str, str]:
    if command not in PLAIN:
        base = tmp / f"plain-{command}"
        base.mkdir()
        line, out = command_line(command, base, request)
        done = ccsim(line, {})
        assert done.returncode == 0, done.stderr
        PLAIN[command] = output_digests(out)
    return PLAIN[command]


def _shown_name(failed: str, base: Path) -> str | None:
    """The path a user knows the file ``failed`` by: a hidden folder an output is staged in
    stands for where it goes (``.<name>.partial-*`` for ``<name>`` beside it, or for the
    folder it is in when that is ``<name>``; ``.ccsim-partial-*`` for the folder it is in);
    None for a file hidden itself (a store's ``.tmp-*``), named by where it goes, in words
    the matrix cannot guess."""
    parts: list[str] = []
    for part in failed.removeprefix(str(base)).split("/"):
        staged = re.fullmatch(r"\.(.+)\.partial-[^/]+", part)
        if part.startswith(".ccsim-partial-") or (staged and parts[-1:] == [staged[1]]):
            continue
        parts.append(staged[1] if staged else part)
    if any(part.startswith(".") for part in parts):
        return None
    return str(base) + "/".join(parts)


def _files_under(folder: str) -> list[str]:
    return [os.path.join(top, f) for top, _, files in os.walk(folder) for f in files]


def check_cell(shim: Path, command: str, kind: str, k: int, code: int, base: Path,
               request: pytest.FixtureRequest) -> list[str] | None:  # fmt: skip
    """What is wrong with how ``command`` ended when its k-th call of ``kind`` failed with
    ``code``; None when it made fewer such calls (nothing failed)."""
    base.mkdir()
    line, out = command_line(command, base, request)
    before = snapshot(base)
    cell = Cell(shim, base, line, kind, k, code)
    if cell.failed is None:
        shutil.rmtree(base)
        return None
    problems: list[str] = []
    # A hidden folder holding no file, only folders the disk would not remove after every
    # file was in place, is passed over (test_disk_faults.py): the next command writing there
    # removes it (staging._remove_left_behind).
    left = [h for h in hidden(base) if not os.path.isdir(h) or _files_under(h)]
    if cell.status == 0:
        # Passed over (the removal of a leftover the disk would not remove): only if nothing
        # of the output was lost with it.
        if "Traceback" in cell.err or "internal error" in cell.err:
            problems.append(f"stderr {cell.err[-600:]!r}")
        if output_digests(out) != plain_output(command, base.parent, request):
            problems.append("status 0 with an output other than a plain run's")
        text = ""
    else:
        text, problems = error_line(cell.status, cell.err, base)
        shown = _shown_name(cell.failed, base)
        if kind in ("open", "write", "copy") and shown is not None and shown not in text:
            # A file the user will see, failed as it was written: the line names it (pyarrow's
            # and a write()'s errors name none; the folder was named instead).
            problems.append(f"names not {shown.replace(str(base), '<base>')}")
        after = snapshot(base)
        changed = [p for p in sorted(before.keys() | after.keys()) if before.get(p) != after.get(p)]
        if command.startswith("reproduce"):
            # plan/ and runs/ are kept to resume from (test_disk_faults.py), in a --out the
            # command made for them.
            kept = (str(out / "plan"), str(out / "runs"))
            changed = [p for p in changed if not p.startswith(kept) and p != str(out)]
        if command.startswith("sweep") and "finished run" in text and "kept in" in text:
            changed = [p for p in changed if not p.startswith(str(out / "runs")) and p != str(out)]
        # What --out holds said of it, or of its site (a reproduction's site/ is written after
        # the rest is in place: site.build's "<out>/site holds part of this site").
        if changed and not re.search(rf"{re.escape(str(out))}(/site)? holds", text):
            problems.append(f"changed {[p.replace(str(base), '') for p in changed]}")
    if left:
        problems.append(f"left {[h.replace(str(base), '') for h in left]}")
    again = ccsim(line, {})
    if again.returncode != 0:
        problems.append(f"re-run failed: {again.stderr[-400:]!r}")
    shutil.rmtree(base)
    if problems:
        where = cell.failed.replace(str(base), "")
        return [f"{command} {kind} #{k} ({where}) {errno.errorcode[code]}: {'; '.join(problems)}"
                f" [{text.replace(str(base), '<base>')}]"]  # fmt: skip
    return []


def _drawn() -> list[tuple[str, str, int, str]]:
    commands, kinds, ks = DRAW_FROM
    every = [(c, kind, k, errno.errorcode[code]) for c in commands for kind in kinds
             for k in ks for code in ERRNOS]  # fmt: skip
    return random.Random(SEED).sample(every, DRAWN)


# A draw by default; with CCSIM_SYSCALL_CELLS=all every cell runs below, and this is not defined.
if not ALL:

    @pytest.mark.parametrize(("command", "kind", "k", "code"), _drawn())
    def test_a_drawn_system_call_failing_ends_the_command_whole_or_in_one_line(
        command: str, kind: str, k: int, code: str, shim: Path, tmp_path: Path,
        request: pytest.FixtureRequest,
    ) -> None:  # fmt: skip
        wrong = check_cell(shim, command, kind, k, getattr(errno, code), tmp_path / "cell", request)
        assert wrong in (None, [])  # None: the command made fewer such calls


def _file_kind(path: str) -> str:
    """``path`` without its random parts (a hidden folder's or file's suffix, a run's
    fingerprint and its store's shard): the calls on one file of every command alike."""
    path = re.sub(r"\.((ccsim|site|out)[.-]partial)-[^/]+", r".\1", path)
    path = re.sub(r"\.tmp-[^/]*", ".tmp", path)
    return re.sub(r"/[0-9a-f]{2}(/|$)|[0-9a-f]{32}", "/HEX", path)


def _every_cell(calls: list[tuple[str, ...]], rng: random.Random) -> list[tuple[str, int, int]]:
    """(kind, k, errno) for each kind the command made: its first three calls, its first on
    each file, and two drawn later ones; the first call with every errno, the others' errnos
    in turn."""
    cells = []
    for kind in KINDS:
        ours = [_file_kind(c[1]) for c in calls if c[0] == kind]
        firsts = {ours.index(f) + 1 for f in set(ours)}
        ks = set(range(1, min(len(ours), 3) + 1)) | firsts
        later = sorted(set(range(1, len(ours) + 1)) - ks)
        ks |= set(rng.sample(later, min(2, len(later))))
        for i, k in enumerate(sorted(ks)):
            codes = ERRNOS if k == 1 else (ERRNOS[i % len(ERRNOS)],)
            cells += [(kind, k, code) for code in codes]
    return cells


# Defined with CCSIM_SYSCALL_CELLS=all only: skipped by default, its 13 commands were 13
# skips in every run of the suite, where a skip is kept for what a machine lacks.
if ALL:

    @pytest.mark.parametrize("command", COMMANDS)
    def test_every_system_call_of_a_command_failing_ends_it_whole_or_in_one_line(
        command: str, shim: Path, tmp_path: Path, request: pytest.FixtureRequest
    ) -> None:
        base = tmp_path / "count"
        base.mkdir()
        line, _ = command_line(command, base, request)
        counted = Cell(shim, base, line)
        assert counted.status == 0, counted.err
        if command == "validate":
            assert counted.calls == [], "validate wrote into its folder"
            return
        assert counted.calls, f"{command} made no call the library counts"
        cells = _every_cell(counted.calls, random.Random(f"{SEED}-{command}"))
        wrong: list[str] = []
        tested = 0
        for n, (kind, k, code) in enumerate(cells):
            found = check_cell(shim, command, kind, k, code, tmp_path / f"c{n}", request)
            if found is not None:
                tested += 1
                wrong += found
        kinds = {kind: sum(1 for c in counted.calls if c[0] == kind) for kind in KINDS}
        print(f"{command}: calls {kinds}, {tested} cells")
        assert wrong == [], f"{len(wrong)} of {tested} cells:\n" + "\n".join(wrong)


def _fail_the_call_to(
    shim: Path, base: Path, command: str, kind: str, suffix: str, request: pytest.FixtureRequest
) -> tuple[Cell, Path]:
    """``command`` run under the library in ``base``, failing with ENOSPC its first call of
    ``kind`` on a path ending with ``suffix``; the cell and its --out."""
    base.mkdir()
    line, out = command_line(command, base, request)
    cell = Cell(shim, base, line, kind, 1, errno.ENOSPC, suffix)
    assert cell.failed is not None and cell.failed.endswith(suffix), cell.failed
    return cell, out


def test_a_capture_folder_the_disk_will_not_make_is_said_as_a_folder_not_a_capture_file(
    shim: Path, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    # Campaigns 52 and 53 (issue 32): the Rust core's failed mkdir of pcap/ was said as
    # "writing the capture file <out>/pcap", a file of the folder's name.
    cell, out = _fail_the_call_to(shim, tmp_path / "c", "run-pcap", "mkdir", "/pcap", request)
    assert cell.status == 1
    assert cell.err == (f"ccsim: error: making the folder {out}/pcap: No space left on device "
                        f"(os error 28); nothing was written to {out}\n")  # fmt: skip


@pytest.mark.parametrize("file", ["summary.parquet", "site/index.html"])
def test_a_reproduction_s_table_or_page_the_disk_fails_to_write_is_named_not_its_folder(
    file: str, shim: Path, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    # Campaign 53 (issue 32): pyarrow's and a write()'s errors carry no file name, and a
    # reproduction's table or a page of its site on a full disk was said as "<out>: no space
    # left on device; ..." (or "<out>/site: ..."), where run names its table (the matrix's
    # every write of a reproduction and of report checks the others: the report, figures,
    # records and pages). A reproduction of one figure's two runs: 1.5 to 2.5 s.
    name = file.rsplit("/", 1)[-1]
    cell, out = _fail_the_call_to(shim, tmp_path / "c", "reproduce", "write", f"/{name}",
                                  request)  # fmt: skip
    assert cell.status == 1
    said = f"ccsim: error: {out / file}: no space left on device; the "
    assert cell.err.startswith(said), cell.err
