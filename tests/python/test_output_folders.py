# SPDX-License-Identifier: MIT
"""Every command that writes a folder, crossed with every kind of folder it may be given.

Issue 32's campaigns found the defects of this class one at a time (a folder named ``~``
written in $HOME, a link into a reproduction's runs/, ``..`` out of one, a name not in UTF-8):
this matrix closes it. Each cell holds one of two outcomes, checked against the whole tree
around it (and a $HOME of its own):

- status 0, and every file written, changed or removed lies inside the folder ``--out``
  resolves to (links and ``..`` followed, as the system writes);
- status 1, one ``ccsim: error:`` line naming the option or the folder, and no file written,
  changed or removed anywhere.

A folder's own mtime is not compared: the write check (a temporary file made and removed in
the folder) moves it without leaving anything.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ccsim.cli import main
from ccsim.experiment import find_experiment, reproduce

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = str(ROOT / "examples" / "random-loss.toml")
M01 = find_experiment("m01", ROOT)

#: What each kind of folder is, from the test's tree (see ``tree``): its path, relative to the
#: tree (``cwd/`` is the working folder, where a relative path is read).
FOLDERS = {
    "new": "out",
    "existing empty": "out",
    "an existing file": "out",
    "a dangling link": "out",
    "a link to a folder elsewhere": "out",
    "a reproduction": "results/m01-quick",
    "a reproduction's plan/": "results/m01-quick/plan",
    "a reproduction's runs/": "results/m01-quick/runs",
    "a link to a reproduction's runs/": "out",
    "a link to a reproduction's plan/": "out",
    "a reproduction's site/": "results/m01-quick/site",
    "the results' site": "results/site",
    "a path with .. leaving a reproduction": "results/m01-quick/plan/../../beside",
    "a folder named ~ (relative)": "~/out",
    "a name with a space": "my out",
    "a name with #": "out #2",
    "a name with a newline": "out\nx",
    "a name in Hangul": "결과",
    "a name not in UTF-8": os.fsdecode(b"x\xff"),
    "a read-only parent": "ro/out",
    "a folder under a file": "afile/out",
    "a loop of links": "out",
    "the results root": "results",
}

#: The kinds every command must refuse; the rest must be written.
REFUSED = {
    "an existing file",
    "a dangling link",
    "a reproduction's plan/",
    "a reproduction's runs/",
    "a link to a reproduction's runs/",
    "a link to a reproduction's plan/",
    "a name not in UTF-8",
    "a read-only parent",
    "a folder under a file",
    "a loop of links",
}

COMMANDS = ("run", "sweep", "reproduce", "report")


def cells() -> Iterator[Any]:
    for command in COMMANDS:
        for kind in FOLDERS:
            if kind == "the results root" and command not in ("report", "reproduce"):
                continue  # report reads a results folder; reproduce must not become one
            yield pytest.param(command, kind, id=f"{command}-{kind}")


@pytest.fixture
def reproduction(m01_quick: Path) -> Path:
    """m01's quick reproduction with one seed (the session's), copied into each cell's tree."""
    return m01_quick


@pytest.fixture(scope="module")
def one_figure_m01(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """m01 with one figure (test_disk_faults.one_figure) and its quick reproduction with one
    seed, made once: what the folder matrix reproduces, and reports on. Its cells are the same
    commands into the same folders, refused or written as with m01's five figures; each
    reproduction and report there draws one figure, not five (campaign 46)."""
    import matplotlib.pyplot  # noqa: F401  (its config folder is chosen before HOME moves)
    from test_disk_faults import one_figure

    base = tmp_path_factory.mktemp("m01-one-figure")
    paper = one_figure(M01, base / M01.name)
    folder = base / "m01-quick"
    reproduce(paper, folder, quick=True, workers=1, seeds=1, progress=False)
    return paper, folder


def tree(base: Path, reproduction: Path, kind: str) -> Path:
    """The cell's tree under ``base``: home/, cwd/ (the working folder, with a folder ``~``),
    results/m01-quick, elsewhere/ and the folder of ``kind``; returns the --out as given."""
    for name in ("home", "cwd/~", "elsewhere"):
        (base / name).mkdir(parents=True)
    (base / "elsewhere" / "theirs.txt").write_text("not ours\n")
    shutil.copytree(reproduction, base / "results" / "m01-quick", symlinks=True)
    out = base / FOLDERS[kind]
    repro = base / "results" / "m01-quick"
    if kind == "existing empty":
        out.mkdir()
    elif kind == "an existing file":
        out.write_text("a file\n")
    elif kind == "a dangling link":
        out.symlink_to(base / "nowhere")
    elif kind == "a link to a folder elsewhere":
        out.symlink_to(base / "elsewhere")
    elif kind == "a link to a reproduction's runs/":
        out.symlink_to(repro / "runs")
    elif kind == "a link to a reproduction's plan/":
        out.symlink_to(repro / "plan")
    elif kind == "a folder under a file":
        out.parent.write_text("a file\n")
    elif kind == "a loop of links":
        out.symlink_to(base / "loop")
        (base / "loop").symlink_to(out)
    elif kind == "a folder named ~ (relative)":
        return Path(FOLDERS[kind])  # read in cwd/
    elif kind == "the results' site":
        from ccsim.site import build_site

        build_site(base / "results")  # ccsim report's site of every reproduction
    elif kind == "a read-only parent":
        out.parent.mkdir()
        out.parent.chmod(0o555)
        if os.geteuid() == 0:
            # Root writes into a folder whatever its mode: a place no process may make a
            # folder in stands for it, so the cell checks the refusal here too (it was skipped).
            return Path("/proc") / f"ccsim-matrix-{base.name}" / "out"
    return out


def snapshot(base: Path) -> dict[str, tuple[Any, ...]]:
    """Every entry under ``base`` (links not followed): a file's or link's size, mtime and
    target; a folder's presence."""
    seen: dict[str, tuple[Any, ...]] = {}
    for top, dirs, files in os.walk(base):
        for name in dirs + files:
            path = os.path.join(top, name)
            st = os.lstat(path)
            if os.path.islink(path):
                seen[path] = ("link", os.readlink(path), st.st_mtime_ns)
            elif os.path.isdir(path):
                seen[path] = ("dir",)
            else:
                seen[path] = ("file", st.st_size, st.st_mtime_ns)
    return seen


def argv(command: str, out: Path, base: Path, paper: Path = M01) -> tuple[list[str], str]:
    """The command line of ``command`` writing to ``out`` (a reproduction of ``paper``), and
    the option naming it."""
    if command == "run":
        return ["run", SCENARIO, "--set", "duration=100ms", "--out", str(out)], "--out"
    if command == "sweep":
        return ["sweep", SCENARIO, "--set", "duration=100ms", "--param",
                "links.bottleneck.loss.rate=0.01,0.02", "--workers", "1",
                "--out", str(out)], "--out"  # fmt: skip
    if command == "reproduce":
        return ["reproduce", str(paper), "--quick", "--seeds", "1", "--workers", "1",
                "--out", str(out)], "--out"  # fmt: skip
    return ["report", "--results", str(base / "results"), "--out", str(out)], "--out"


@pytest.mark.parametrize(("command", "kind"), list(cells()))
def test_a_command_writes_inside_its_out_or_refuses_it_in_one_line_and_writes_nothing(
    command: str,
    kind: str,
    one_figure_m01: tuple[Path, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    paper, reproduction = one_figure_m01
    base = tmp_path.resolve()
    out = tree(base, reproduction, kind)
    monkeypatch.setenv("HOME", str(base / "home"))
    monkeypatch.delenv("CCSIM_RESULTS", raising=False)
    monkeypatch.chdir(base / "cwd")
    line, option = argv(command, out, base, paper)
    before = snapshot(base)
    try:
        status = main(line)
    finally:
        if kind == "a read-only parent":
            (base / "ro").chmod(0o755)
    err = capsys.readouterr().err
    after = snapshot(base)
    changed = sorted(p for p in before.keys() | after.keys() if before.get(p) != after.get(p))
    refused = kind in REFUSED or (kind == "a reproduction" and command != "reproduce")
    # A reproduction written into a folder of reproductions made the whole folder one to
    # `ccsim report`, its site showing it alone (noted by the matrix's helper).
    refused = refused or (kind == "the results root" and command == "reproduce")
    # A reproduction's site/ is where its own site is written, and results/site where
    # report writes the site of them all: report's to rebuild. `reproduce --out results/site`
    # wrote a reproduction among the pages, and report refused the results ever after
    # (campaign 21, issue 32).
    site = kind in ("a reproduction's site/", "the results' site")
    if refused or (site and command != "report"):
        errors = [x for x in err.splitlines() if x.startswith("ccsim: error:")]
        assert status == 1, err
        assert len(errors) == 1, err
        shown = os.path.basename(os.path.normpath(out)).split("\n")[0].replace("\udcff", "\ufffd")
        assert option in errors[0] or shown in errors[0], errors[0]
        assert changed == [], changed
    else:
        assert status == 0, err
        real = Path(os.path.realpath(base / "cwd" / out))
        outside = [p for p in changed if not Path(p).is_relative_to(real)]
        assert outside == [], (real, outside)
        assert any(Path(p).is_relative_to(real) for p in changed)  # it did write


def _taken(place: Path, was_folder: bool) -> None:
    """Something of the user's at ``place`` of the other kind than the command's output there:
    a folder (holding a file) where a file goes, a file where a folder goes."""
    if was_folder:
        place.write_text("the user's own\n")
    else:
        place.mkdir()
        (place / "theirs.txt").write_text("the user's own\n")


@pytest.mark.parametrize("command", COMMANDS)
def test_every_output_whose_place_in_out_is_taken_is_refused_naming_it_and_leaves_out_as_it_was(
    command: str,
    reproduction: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Campaign 22 (issue 32) found this class one command at a time: a folder named
    # flows.parquet (a dataset another tool wrote), a file named pcap or site, a folder named
    # claims.csv or index.html. Each command ran, then failed in the last rename naming the
    # hidden staging folder, left in --out beside part of the new output. Here every entry a
    # command writes into --out, read from a run into an empty folder (so a new output is
    # covered as soon as it exists), is taken by the other kind in turn.
    base = tmp_path.resolve()
    for name in ("home", "cwd"):
        (base / name).mkdir()
    shutil.copytree(reproduction, base / "results" / "m01-quick", symlinks=True)
    monkeypatch.setenv("HOME", str(base / "home"))
    monkeypatch.delenv("CCSIM_RESULTS", raising=False)
    monkeypatch.chdir(base / "cwd")
    first = base / "first"
    assert main(argv(command, first, base)[0]) == 0, capsys.readouterr().err
    capsys.readouterr()
    entries = {p.name: p.is_dir() for p in first.iterdir()}
    assert entries, f"{command} wrote nothing into --out"
    wrong = []
    for name, was_folder in sorted(entries.items()):
        out = base / f"out-{len(wrong)}-{name}"
        out.mkdir()
        if command == "reproduce" and name != "runs":
            shutil.copytree(reproduction / "runs", out / "runs")  # its runs stored: no rerun
        _taken(out / name, was_folder)
        before = snapshot(base)
        status = main(argv(command, out, base)[0])
        err = capsys.readouterr().err
        after = snapshot(base)
        changed = [p for p in sorted(before.keys() | after.keys()) if before.get(p) != after.get(p)]
        if command == "reproduce":
            # What a resumed reproduction starts from, stored as it goes and said to be kept:
            # its plan/ and its runs/ store.
            changed = [p for p in changed if not any(
                Path(p).is_relative_to(out / kept) for kept in ("plan", "runs"))]  # fmt: skip
        errors = [x for x in err.splitlines() if x.startswith("ccsim: error:")]
        if status != 1 or len(errors) != 1 or name not in errors[0] or changed:
            wrong.append(f"{name} ({'a file' if was_folder else 'a folder'} there): status "
                         f"{status}, {err.strip()!r}, changed {changed}")  # fmt: skip
    assert wrong == [], "\n".join(wrong)


def test_an_out_removed_while_a_command_writes_into_it_is_said_to_hold_nothing(
    tmp_path: Path,
) -> None:
    # Bug pinned (campaign 27, issue 32): `rm -rf OUT` while `ccsim reproduce m01 --quick
    # --out OUT` drew its figures said "OUT/fig12.png: no such file; the figures, tables and
    # report were not written (those of an earlier reproduction in OUT were left as they
    # were); the finished runs are kept in OUT/runs, and the same command resumes from them":
    # nothing was there any more.
    from ccsim.staging import staged_output

    out = tmp_path / "m01-quick"
    (out / "runs").mkdir(parents=True)
    with pytest.raises(ValueError) as e:
        with staged_output(out, [], state="the finished runs are kept in OUT/runs") as stage:
            shutil.rmtree(out)
            raise FileNotFoundError(2, "No such file or directory", str(stage / "fig12.png"))
    assert str(e.value) == (
        f"{out / 'fig12.png'}: no such file; {out} was removed or moved away while this "
        "command wrote into it: nothing of this output or of an earlier one is kept there"
    )


def test_a_site_whose_folder_is_moved_away_while_report_writes_it_says_so_in_one_line(
    m01_quick: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    # Campaign 48 (issue 32): `mv results/site old` while `ccsim report` wrote its pages said
    # "results/site/m01-quick: no such file", a page of the site named as if it alone were
    # missing, nothing of the folder having gone with everything in it.
    from ccsim.site import build

    results = tmp_path / "results"
    results.mkdir()
    shutil.copytree(m01_quick, results / "m01-quick")
    out = tmp_path / "site"
    out.mkdir()
    write_site = build._write_site

    def moved_first(*args: Any) -> Any:
        out.rename(tmp_path / "old")
        return write_site(*args)

    monkeypatch.setattr(build, "_write_site", moved_first)
    assert main(["report", "--results", str(results), "--out", str(out)]) == 1
    assert capsys.readouterr().err == (
        f"ccsim: error: {out / 'plotly.min.js'}: no such file; {out} was removed or moved away "
        "while this command wrote the site into it: nothing of this site or of an earlier one "
        "is kept there\n"
    )
    assert not out.exists()


def test_a_reproduction_whose_page_name_would_be_too_long_is_refused_or_left_out_by_name(
    m01_quick: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Campaign 48 (issue 32): the site names a reproduction's page after its folder, and a
    # folder of 251 to 255 bytes (a legal name) failed it: `ccsim report` wrote no site for
    # any reproduction ("<out>/NAME.html: file name too long"), and `ccsim reproduce --out`
    # such a folder ran every run, then said the same command would write the site, which
    # fails the same way. The reproduction is refused before its runs; report leaves that
    # one out, naming it and the cure, and writes the others' pages.
    long = "m" * 251
    folder = find_experiment("m01")
    out = tmp_path / long
    argv = ["reproduce", str(folder), "--quick", "--seeds", "1", "--workers", "1", "--out"]
    assert main([*argv, str(out)]) == 1
    assert capsys.readouterr().err == (
        f"ccsim: error: --out {out}: the reproduction's site names its page after the folder, "
        f"and {long}.html would be longer than a file name may be here (255 bytes); name a "
        "shorter folder\n"
    )
    assert not out.exists()
    results = tmp_path / "results"
    results.mkdir()
    shutil.copytree(m01_quick, results / long)
    shutil.copytree(m01_quick, results / "m01")
    assert main(["report", "--results", str(results), "--out", str(tmp_path / "site")]) == 0
    assert capsys.readouterr().err == (
        f"ccsim: warning: {long} left out of the site: its page, {long}.html, would have a "
        "longer name than a file may have here (255 bytes); rename the folder (a shorter "
        "name) and run report again\n"
    )
    assert (tmp_path / "site" / "m01.html").is_file()


def test_an_output_is_put_in_place_under_a_lock_on_its_folder_so_two_commands_never_mix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Noticed in campaign 27 (issue 32): two commands writing one --out at once each renamed
    # its files in one by one, and the two sets could interleave (one sweep's flows beside
    # the other's links). Each command now holds a lock on the folder while it moves in; a
    # second lock taken then (another command's) must wait.
    import fcntl

    from ccsim import staging

    out = tmp_path / "out"
    out.mkdir()
    seen: list[bool] = []
    move_into = staging._move_into

    def moving(stage: Path, dest: Path) -> None:
        fd = os.open(dest, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            seen.append(False)  # nobody held it
        except BlockingIOError:
            seen.append(True)
        finally:
            os.close(fd)
        move_into(stage, dest)

    monkeypatch.setattr(staging, "_move_into", moving)
    with staging.staged_output(out, ["a.txt"]) as stage:
        (stage / "a.txt").write_text("new", encoding="utf-8")
    assert seen == [True]
    assert (out / "a.txt").read_text(encoding="utf-8") == "new"
    # The lock ends with the move: a later command takes it at once.
    fd = os.open(out, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    os.close(fd)


def _hidden_folder_left(where: Path, name: str, age_s: float) -> Path:
    """A hidden staging folder as a command killed mid-write leaves it, ``age_s`` old."""
    folder = where / name
    (folder / "pcap").mkdir(parents=True)
    (folder / "flows.parquet").write_bytes(b"half a table")
    then = time.time() - age_s
    os.utime(folder, (then, then))
    return folder


@pytest.mark.parametrize("out_existed", [False, True])
def test_a_hidden_folder_a_killed_command_left_goes_with_the_next_output_and_a_live_one_stays(
    tmp_path: Path, capsys: Any, out_existed: bool
) -> None:
    # Campaigns 48b and 49b (issue 32): a command killed while it wrote (SIGKILL, a power
    # cut), or one whose disk went read-only under it, left its hidden folder beside or
    # inside --out, and every later run into that --out left it there for good, with what it
    # held. A folder another command holds (it is writing it), or made a moment ago, stays.
    out = tmp_path / "r1"
    where, prefix = (out, ".ccsim-partial-") if out_existed else (tmp_path, ".r1.partial-")
    where.mkdir(exist_ok=True)
    left = _hidden_folder_left(where, prefix + "k1ll3d_x", 3600)
    young = _hidden_folder_left(where, prefix + "y0ung000", 5)
    held = _hidden_folder_left(where, prefix + "h3ld0000", 3600)
    other = _hidden_folder_left(where, ".r2.partial-abcdefgh", 3600)  # another output's
    lock = os.open(held, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)  # as a live command holds its own
        assert main(["run", SCENARIO, "--set", 'duration="100ms"', "--out", str(out)]) == 0
    finally:
        os.close(lock)
    capsys.readouterr()
    assert not left.exists()
    assert young.is_dir() and held.is_dir() and other.is_dir()
    assert (out / "flows.parquet").is_file()
    hidden = {p.name for p in where.iterdir() if p.name.startswith(".")}
    assert hidden == {young.name, held.name, other.name}, "the run's own hidden folder stayed"


def test_a_reproduction_another_is_moving_into_the_same_folder_is_not_a_reproduction_held_there(
    tmp_path: Path, monkeypatch: Any
) -> None:
    # CCSIM_CONCURRENT_CASES=12 (campaign 54, issue 32): two `ccsim reproduce m01 --quick` at
    # once on one --out; the second looked while the first held its finished reproduction in
    # its hidden folder inside --out, and was refused as "it holds the reproductions
    # .ccsim-partial-1okyhdv6; ... name a folder of its own", a folder the user never made.
    # Stopped where the checks of --out end: no run goes.
    from ccsim.experiment import reproduction

    class Reached(Exception):
        pass

    def past_the_checks(*_: Any) -> None:
        raise Reached

    out = tmp_path / "m01-quick"
    moving = out / ".ccsim-partial-1okyhdv6"
    moving.mkdir(parents=True)
    (moving / "report.md").write_text("# m01\n")
    (moving / "run.json").write_text('{"paper": "m01"}\n')
    monkeypatch.setattr(reproduction, "refuse_a_site", past_the_checks)
    with pytest.raises(Reached):
        reproduction.run_cli(str(ROOT / "experiments" / "m01-dctcp"), out, True, None, None)


def test_an_out_moved_away_while_a_command_writes_into_it_keeps_no_hidden_folder_where_it_went(
    tmp_path: Path,
) -> None:
    # Campaign 62b (issue 32): `mv OUT OUT.old` while `ccsim reproduce m01 --quick --out OUT`
    # drew its figures said "OUT/guideline_k.svg: no such file; OUT was removed or moved away
    # while this command wrote into it: nothing of this output or of an earlier one is kept
    # there", and OUT.old kept the hidden .ccsim-partial-* folder with the figures drawn so
    # far, for good: removed by its old path, it was not found.
    from ccsim.staging import staged_output

    out = tmp_path / "m01-quick"
    (out / "runs").mkdir(parents=True)
    moved = tmp_path / "m01-quick.old"
    with pytest.raises(ValueError, match="was removed or moved away"):
        with staged_output(out, [], state="the finished runs are kept in OUT/runs") as stage:
            (stage / "fig12.png").write_bytes(b"drawn")
            out.rename(moved)
            raise FileNotFoundError(2, "No such file or directory", str(stage / "fig12.svg"))
    assert [p.name for p in moved.iterdir()] == ["runs"]
    # A new --out is staged beside it: its folder moved, the same.
    parent = tmp_path / "results"
    parent.mkdir()
    with pytest.raises(ValueError) as e:
        with staged_output(parent / "run", []) as stage:
            (stage / "flows.parquet").write_bytes(b"written")
            parent.rename(tmp_path / "results.old")
            # pandas' words, with the file named (result.naming_the_file): they named the
            # hidden folder.
            said = f"Cannot save file into a non-existent directory: '{stage}'"
            raise OSError(None, said, str(stage / "links.parquet"))
    assert list((tmp_path / "results.old").iterdir()) == []
    assert ".partial" not in str(e.value), e.value


@pytest.mark.parametrize("command", ["sweep", "reproduce"])
def test_an_out_too_long_for_the_run_records_under_it_is_refused_before_anything_is_written(
    command: str,
    one_figure_m01: tuple[Path, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Campaign 62b (issue 32): under a --out of ~4,050 bytes a sweep ran until its first save,
    # "runs/15/1522....json: file name too long", and a reproduction left plan/, plan.toml
    # and scenario.toml there, a folder that looked begun and that the same command could
    # never finish. The record paths (their temporary names the longest) are checked first.
    paper, _ = one_figure_m01
    base = tmp_path.resolve()
    parent = base
    while len(os.fsencode(parent / ("d" * 200))) < 4030:  # the system's PATH_MAX is 4096
        parent = parent / ("d" * 200)
    parent = parent / ("e" * (4030 - len(os.fsencode(parent)) - 1))
    parent.mkdir(parents=True)
    out = parent / "out"
    line, _ = argv(command, out, base, paper)
    before = snapshot(base)
    assert main(line) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"ccsim: error: {out / 'runs'}: a path of "), err
    assert "too long for the run records under it" in err and err.count("\n") == 1, err
    assert snapshot(base) == before
