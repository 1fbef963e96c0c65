# SPDX-License-Identifier: MIT
"""Output folders written in full or not at all, and the OSErrors of their writes in ccsim's
words: ``ccsim run``'s tables and captures, ``ccsim reproduce``'s figures, tables and report.

A command writes into a hidden folder (:func:`staged_output`) and renames what it wrote into
place once all of it is written: renames need no space, so a full disk or an interruption
leaves the output folder as it was, never with some new files beside the old ones."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import re
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ccsim.errors import Error

#: How ``shown_path`` writes the characters a bash ANSI-C string (``$'...'``) escapes by name.
_NAMED_ESCAPES = {"\n": "\\n", "\t": "\\t", "\r": "\\r", "\\": "\\\\", "'": "\\'"}


def shown_path(path: str | os.PathLike[str]) -> str:
    """A path as a line of a command's output shows it: as it is, or, when it holds a
    character that is not printable (a newline, a tab, a byte that is not UTF-8), as a bash
    ANSI-C string (``$'r\\n1'``) that can be pasted back into a shell. A folder named with a
    newline was printed across two lines ("results: r" then "1/"), which a script reading the
    output line by line took for two (campaign 47, issue 32)."""
    text = os.fspath(path)
    if text.isprintable():
        return text
    out = []
    for ch in text:
        if ch in _NAMED_ESCAPES:
            out.append(_NAMED_ESCAPES[ch])
        elif "\udc80" <= ch <= "\udcff":  # a byte that is not UTF-8 (surrogateescape, PEP 383)
            out.append(f"\\x{ord(ch) - 0xDC00:02x}")
        elif ch.isprintable():
            out.append(ch)
        elif ord(ch) < 0x80:  # a control character: its byte
            out.append(f"\\x{ord(ch):02x}")
        else:  # a character, which bash writes in the locale's encoding
            out.append(f"\\u{ord(ch):04x}" if ord(ch) <= 0xFFFF else f"\\U{ord(ch):08x}")
    return "$'" + "".join(out) + "'"


@contextlib.contextmanager
def staged_output(out: Path, ours: Sequence[str], state: str | None = None) -> Iterator[Path]:
    """A command's output folder written in full or not at all: yields an empty folder to
    write into; when the block ends without an error its contents are put in place as
    ``out``; otherwise (a full disk, an interruption) it is removed and ``out`` is as it was.

    A new ``out`` is written as a hidden sibling, ``.<name>.partial-XXXX``, renamed to ``out``
    in one step once complete: no folder named ``out`` exists before the whole output does.
    An existing ``out`` (an earlier run's, or the scenario's own folder) gets the hidden
    folder inside it instead (its parent need not be writable, as with ``--out .``); once
    complete, the earlier output's files named in ``ours`` are removed, so two runs' tables are
    never mixed, and each new file is renamed over its namesake. Renames need no space, so a
    full disk cannot stop them half-way.

    An OSError of a write, or an error of the core naming a file (a capture file), is
    re-raised as a ValueError naming that file as it would have been in ``out`` (``out``
    itself, when it names none) and saying what became of ``out`` (``state``, when the caller
    knows better: a sweep's runs are kept though its tables are not written).
    """
    existed = out.is_dir()
    if state is None:
        state = f"{out} was left as it was" if existed else f"nothing was written to {out}"
    # The folders above a new ``out`` that this makes go again with a failed output: "nothing
    # was written" was said of a run refused by the core (a bad value) that had made new/a
    # for `--out new/a/out` (campaign 30, issue 32).
    parent = out.absolute().parent
    made = [] if existed else [p for p in [*reversed(parent.parents), parent] if not p.exists()]
    try:
        if existed:
            # Absolute: pandas expands a leading ~ in every path it writes, and an --out
            # '~/x' (a folder named ~ in the working directory) was staged in $HOME/x instead
            # (campaign 19, issue 32).
            stage = hidden_folder(".ccsim-partial-", out.absolute())
        else:
            parent.mkdir(parents=True, exist_ok=True)
            stage = staging_folder(hidden_name(out.name), parent)
    except OSError as e:
        remove_empty(made)
        # A disk that went read-only or filled up after a sweep's runs: the error named the
        # hidden folder, which was never made, and not that the runs are kept (campaign 13,
        # issue 32).
        shown = OSError(e.errno, e.strerror or str(e), str(out))
        raise ValueError(f"{os_error_text(shown)}; {state}") from e
    try:
        yield stage
    except BaseException as e:
        discard(stage)
        remove_empty(made)
        if existed and not out.is_dir():
            # ``out`` removed (rm -rf) or moved away while the command wrote into it: the
            # state said what was kept there ("the finished runs are kept in OUT/runs", an
            # earlier output "left as it was") of a folder that was gone (campaign 27,
            # issue 32).
            state = (f"{out} was removed or moved away while this command wrote into it: "
                     "nothing of this output or of an earlier one is kept there")  # fmt: skip
        changed = package_changed(e, (stage, out), state)
        if changed is not None:
            raise ValueError(changed) from e
        if isinstance(e, Error) and str(stage) in str(e):
            # The core's own write errors (a capture file on a full disk) name the file in the
            # hidden folder, which is gone now: named where it would have been.
            from ccsim.limits import core_exhausted

            text = str(e).replace(str(stage), str(out))
            raise ValueError(f"{core_exhausted(text) or text}; {state}") from e
        if not isinstance(e, OSError) or not (e.filename or e.errno) or raised_importing(e):
            # What became of ``out``, for the command's line to say beside an error that is
            # not a write's: a figure failing on matplotlib's SOURCE_DATE_EPOCH=abc said
            # nothing of the finished runs kept (campaign 47, issue 32).
            with contextlib.suppress(AttributeError, TypeError):
                e.ccsim_state = state  # type: ignore[union-attr]
            raise
        # A write that names no file (pyarrow's "[Errno 28] Error writing bytes to file") is
        # named by the folder, in the system's words for its errno.
        name = Path(os.fsdecode(e.filename)) if e.filename else out
        if e.filename2 and Path(os.fsdecode(e.filename2)).is_relative_to(stage):
            # A copy into the stage names its source first, then the file it writes
            # (shutil.copyfile): the one written is what failed (campaign 25, issue 32).
            name = Path(os.fsdecode(e.filename2))
        if name.is_relative_to(stage):
            name = out / name.relative_to(stage)
        reason = e.strerror if e.filename else os.strerror(e.errno)
        # pandas' words for a folder gone name it ("Cannot save file into a non-existent
        # directory: '<out>/.ccsim-partial-...'", its --out moved away meanwhile): named as
        # in --out, as the file is (campaign 62b, issue 32).
        reason = str(reason).replace(str(stage), str(out))
        shown = OSError(e.errno, reason, str(name))
        raise ValueError(f"{os_error_text(shown)}; {state}") from e
    if not existed:
        try:
            os.replace(stage, out)
            _let_go(stage)
            return
        except OSError as e:  # something put there meanwhile: no hidden folder is left
            if not (e.errno in (errno.ENOTEMPTY, errno.EEXIST) and out.is_dir()):
                discard(stage)
                raise ValueError(f"{out}: cannot be made the output folder ({e.strerror or e}); "
                                 "nothing was written to it") from None  # fmt: skip
        # Another command made ``out`` while this one wrote (two runs into one new --out at
        # once): the one ending second failed, "cannot be made the output folder (Directory
        # not empty)", its whole output lost, where in a row the second replaces the first's
        # (campaign 31, issue 32). It is put in place as into a folder that existed.
        state = f"{out} holds the output of a command that ended meanwhile"
    try:
        with moving_in(out):
            _put_in_place(stage, out, ours, state)
    finally:  # interrupted while waiting for the lock: no hidden folder is left in ``out``
        discard(stage)


@contextlib.contextmanager
def stops_deferred() -> Iterator[None]:
    """SIGTERM and SIGHUP that would end the process at once (their default action, as in a
    user's own script calling ``Result.to_parquet``) wait until the block ends, then end it as
    they would have. Killed mid-write, a script left its hidden ``.<name>.partial-XXXX``
    folder beside the output for good (campaign 36, issue 32); the CLI turns these signals
    into KeyboardInterrupt, which :func:`staged_output` already cleans up after. A handler the
    user set is left alone, and Python sets handlers in the main thread only."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    named = (signal.SIGTERM, getattr(signal, "SIGHUP", None))  # no SIGHUP on Windows
    stops = [s for s in named if s is not None and signal.getsignal(s) == signal.SIG_DFL]
    came: list[int] = []
    for s in stops:
        signal.signal(s, lambda n, _frame: came.append(n))
    try:
        yield
    finally:
        for s in stops:
            signal.signal(s, signal.SIG_DFL)
        if came:
            os.kill(os.getpid(), came[0])


def discard(folder: Path) -> None:
    """Remove ``folder`` (a hidden folder this made) with what it holds, as far as the disk
    allows. Under a umask of 0777 the hidden folder takes mode 000 (its mode is the umask's,
    ``staging_folder``), a folder its owner cannot list: shutil.rmtree could not open it and
    left it, empty, beside --out (campaign 30, issue 32). An empty folder goes without a
    listing."""
    where = _moved_to(folder) or folder
    _let_go(folder)
    shutil.rmtree(where, ignore_errors=True)
    with contextlib.suppress(OSError):
        os.rmdir(where)


def _moved_to(folder: Path) -> Path | None:
    """Where the hidden ``folder`` this process holds (:func:`_hold`) is now, when a folder
    above it was moved while the command wrote (``mv OUT OUT.old``): the system follows it by
    its open descriptor. Removed by its old path, it stayed in the moved folder for good,
    hidden, with the figures written so far, and no later command writes there to take it
    away (campaign 62b, issue 32). None when it is where it was, is gone, or cannot be told
    (no /proc)."""
    fd = _HELD.get(folder)
    if fd is None or os.path.lexists(folder):
        return None
    try:
        now = Path(os.readlink(f"/proc/self/fd/{fd}"))
    except OSError:
        return None
    # A folder removed reads "<path> (deleted)": its name is not the folder's.
    return now if now.name == folder.name and now.is_dir() else None


def remove_empty(made: list[Path]) -> None:
    """Remove the folders ``made`` (outermost first in the list), innermost first, each only
    when empty: anything put there meanwhile keeps it."""
    for folder in reversed(made):
        with contextlib.suppress(OSError):
            folder.rmdir()


@contextlib.contextmanager
def moving_in(out: Path) -> Iterator[None]:
    """An exclusive lock on the folder ``out`` itself (``flock``, so nothing is written there)
    while an output is put in place: two commands writing one ``--out`` at once (two sweeps)
    each renamed its files in one by one, and the two sets could interleave, leaving one
    command's flows beside the other's links (noticed in campaign 27, issue 32). With the lock
    the output of the command that ends last is there whole, as after two commands in a row.
    Where the system has no ``flock`` (or ``out`` cannot be opened), nothing is locked."""
    fd = None
    with contextlib.suppress(ImportError, OSError):
        import fcntl

        fd = os.open(out, os.O_RDONLY)
    if fd is None:
        yield
        return
    try:
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def _put_in_place(stage: Path, out: Path, ours: Sequence[str], state: str) -> None:
    """:func:`staged_output`'s last step into an existing ``out``: ``stage``'s files renamed
    over their namesakes, the earlier output's other files of ``ours`` removed."""
    try:
        clash = in_the_way(stage, out)
    except OSError as e:
        # The hidden folder's listing or a file's lookup there failing (a failing disk: EIO)
        # named the hidden folder, ".ccsim-partial-XXXX: input/output error", a name the user
        # never made (campaign 29, issue 32): the file is named where it would have been.
        shown = OSError(e.errno, e.strerror or str(e), str(_as_in_out(e, stage, out)))
        raise ValueError(f"{os_error_text(shown)}; {state}") from e
    if clash is not None:
        # Checked before a rename: a folder where a file goes (claims.csv/ in a reproduction's
        # folder) failed the rename half-way, naming the hidden folder, which was left in
        # ``out`` with part of the new output beside the old (campaign 22, issue 32).
        discard(stage)
        kind = "a folder" if clash.is_dir() else "a file"
        raise ValueError(f"{clash} is {kind}, where the output's {clash.name} goes: move it "
                         f"away or name another folder; {state}")  # fmt: skip
    removed: list[str] = []
    try:
        for name in ours:
            if (out / name).is_file() and not (stage / name).exists():
                (out / name).unlink()
                removed.append(name)
    except OSError as e:
        # An earlier output's file this one lacks (a traced run's packets.parquet) that the
        # disk would not remove (gone read-only, failing) was named without a word of ``out``;
        # after another was removed, ``out`` had lost it unsaid (campaign 52, issue 32).
        if removed:
            state = f"{out} holds the earlier output without its {', '.join(removed)}"
        shown = OSError(e.errno, e.strerror or str(e), str(_as_in_out(e, stage, out)))
        raise ValueError(f"{os_error_text(shown)}; {state}") from e
    try:
        _move_into(stage, out)
    except OSError as e:
        # The hidden folder is not left in ``out`` (its name in the error said nothing).
        discard(stage)
        shown = OSError(e.errno, e.strerror or str(e), str(_as_in_out(e, stage, out)))
        raise ValueError(f"{os_error_text(shown)}; {out} holds part of this output") from e
    # Every file is in place: the output is whole. The empty hidden folder's removal failing
    # (a disk gone read-only just after the renames) failed the command naming that folder,
    # ".ccsim-partial-XXXX: read-only file system", with the output written (campaign 28,
    # issue 32); an empty folder the disk will not remove is left to it.
    discard(stage)


def _as_in_out(e: OSError, stage: Path, out: Path) -> Path:
    """The file ``e`` names (a rename's destination first), as it is or would be in ``out``
    when it lies in the hidden folder ``stage``; ``out`` when it names none."""
    if not e.filename:
        return out
    name = Path(os.fsdecode(e.filename2 or e.filename))
    return out / name.relative_to(stage) if name.is_relative_to(stage) else name


def in_the_way(source: Path, dest: Path) -> Path | None:
    """The first entry of ``dest`` that :func:`_move_into` could not rename ``source``'s
    namesake over (a folder where a file goes, or a file where a folder goes), or None. A link
    is replaced, as a file is."""
    for entry in sorted(source.iterdir()):
        target = dest / entry.name
        if target.is_symlink() or not target.exists():
            continue
        if entry.is_dir() and target.is_dir():
            inner = in_the_way(entry, target)
            if inner is not None:
                return inner
        elif entry.is_dir() or target.is_dir():
            return target
    return None


def reproduction_of(folder: Path) -> str | None:
    """The paper whose reproduction ``folder`` holds: its report.md beside a run.json that
    names the paper (``ccsim reproduce`` writes both), or None. A report.md alone is not
    one: it is a common name for a file of the user's own."""
    try:
        if not (folder / "report.md").is_file():
            return None
        paper = json.loads((folder / "run.json").read_text(encoding="utf-8")).get("paper")
    except (OSError, ValueError, AttributeError):
        return None
    return paper if isinstance(paper, str) else None


def finished_runs(count: int, kept: str = "kept") -> str:
    """``1 finished run is kept`` or ``N finished runs are kept``: the messages said "1 finished
    runs are kept" (campaign 22, issue 32)."""
    return f"{count} finished run is {kept}" if count == 1 else f"{count} finished runs are {kept}"


def kept_runs(count: int, store: Path) -> str:
    """``N finished runs are kept in STORE, and the same command resumes from them`` (``it``
    for one: "resumes from them" of one run, noticed in campaign 25, issue 32)."""
    return (f"{finished_runs(count)} in {store}, and the same command resumes from "
            f"{'it' if count == 1 else 'them'}")  # fmt: skip


def site_at(folder: Path) -> bool:
    """Whether ``folder`` holds a site ``ccsim report`` (or ``reproduce``) wrote: its
    index.html beside its site.json (``ccsim.site.build``). ``reproduce --out results/site``
    wrote a reproduction among the pages, and every later ``ccsim report`` refused the
    results, its site's folder now holding a report.md (campaign 21, issue 32)."""
    return (folder / "index.html").is_file() and (folder / "site.json").is_file()


def refuse_a_site(out: Path, option: str, what: str) -> None:
    """ValueError naming ``option`` when ``out`` is a site's folder (:func:`site_at`):
    ``what`` would be mixed with its pages."""
    if site_at(out):
        raise ValueError(f"{option} {out}: this is a site ccsim report wrote (its index.html "
                         f"and site.json); {what} would be mixed with its pages: choose "
                         "another folder")  # fmt: skip


def reproduction_around(path: Path) -> tuple[Path, str] | None:
    """The reproduction ``path`` is, or lies inside (its ``plan/``, ``runs/``, ``site/``):
    (its folder, its paper), or None. The folders around it are those of the path the
    system writes to, links and ``..`` resolved: a link to a reproduction's ``runs/`` wrote
    a run's tables into its store, and ``results/m01/plan/../../other`` (a folder beside it)
    was refused as inside it (campaign 20)."""
    paper = reproduction_of(path)
    if paper is not None:
        return path, paper
    try:
        real = path.resolve()
    except (OSError, RuntimeError):  # a loop of links, refused as no folder by the caller
        real = path.absolute()
    for folder in (real, *real.parents):
        paper = reproduction_of(folder)
        if paper is not None:
            return folder, paper
    return None


def hidden_folder(prefix: str, parent: Path) -> Path:
    """A new folder ``parent/<prefix>XXXXXXXX`` (``mkdtemp``'s, mode 0o700), held
    (:func:`_hold`) while this process writes it; the folders of the same name that commands
    killed before they could remove theirs left in ``parent`` go first
    (:func:`_remove_left_behind`)."""
    _remove_left_behind(prefix, parent)
    folder = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    _hold(folder)
    return folder


def staging_folder(prefix: str, parent: Path) -> Path:
    """A new folder ``parent/<prefix>XXXX`` to be renamed into place once written, with the
    permissions of any folder made there (0o777 less the umask). mkdtemp makes it 0o700, for
    a temporary folder's privacy; renamed into place as ``--out`` or a site, that left a
    results folder the group, or a web server serving the site, could not read. The mode is
    read off a folder made inside it, as the umask cannot be read without setting it, which
    would race with other threads."""
    stage = hidden_folder(prefix, parent)
    try:
        probe = stage / "umask"
        probe.mkdir()
        mode = probe.stat().st_mode & 0o777
        probe.rmdir()
        stage.chmod(mode)
    except BaseException:  # a full disk, an interruption: no hidden folder is left
        discard(stage)
        raise
    return stage


#: The hidden folders this process is writing, each with an open descriptor holding an
#: exclusive ``flock`` on it: the mark by which another command tells a folder being written
#: from one left behind. The system lets the lock go when the process ends, however it ends
#: (SIGKILL, the out-of-memory killer, a power cut: the folder is left; campaigns 48b and
#: 49b, issue 32).
_HELD: dict[Path, int] = {}

#: A hidden folder younger than this is never taken for left behind: made by another command
#: an instant ago, before it could take its lock.
LEFT_BEHIND_AFTER_S = 60.0


def _hold(folder: Path) -> None:
    """Take the lock that marks ``folder`` as being written by this process (nothing, where
    the file system takes no lock: the folder is then never removed as left behind, as
    nothing can tell)."""
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return
    _HELD[folder] = fd


def _let_go(folder: Path) -> None:
    """Let go of ``folder``'s lock (renamed into place, or removed)."""
    fd = _HELD.pop(folder, None)
    if fd is not None:
        os.close(fd)


def _remove_left_behind(prefix: str, parent: Path) -> None:
    """Remove the hidden folders ``parent/<prefix>XXXXXXXX`` that no live command holds: left
    by a command killed while it wrote (SIGKILL, a power cut), or by one that could not remove
    its own (a disk gone read-only under it). They stayed for good, hidden, beside or inside
    the output they were for, with whatever they held (campaigns 48b and 49b, issue 32). A
    folder whose lock cannot be taken is being written, and one made in the last
    :data:`LEFT_BEHIND_AFTER_S` may be about to be: both are left alone, as is anything not
    a folder of exactly that name."""
    pattern = re.compile(re.escape(prefix) + f"[a-z0-9_]{{{_RANDOM}}}")
    try:
        entries = [e for e in os.scandir(parent) if pattern.fullmatch(e.name)]
    except OSError:
        return
    now = time.time()
    for entry in entries:
        try:
            if not entry.is_dir(follow_symlinks=False):
                continue
            if now - entry.stat(follow_symlinks=False).st_mtime < LEFT_BEHIND_AFTER_S:
                continue
            fd = os.open(entry.path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # held: a live command writes it
            continue
        else:
            shutil.rmtree(entry.path, ignore_errors=True)
            with contextlib.suppress(OSError):
                os.rmdir(entry.path)
        finally:
            os.close(fd)


#: The longest file name Linux's file systems take, in bytes (NAME_MAX: ext4, XFS, tmpfs).
NAME_MAX = 255

#: The random characters ``tempfile.mkdtemp`` appends to a prefix.
_RANDOM = 8


def is_staging(name: str) -> bool:
    """Whether ``name`` is that of a hidden folder a command writes its output in before it
    moves it into place (:func:`hidden_folder` ``.ccsim-partial-XXXXXXXX`` inside an output,
    :func:`staging_folder` ``.<name>.partial-XXXXXXXX`` beside one): another command's work
    in progress, never an output of the user's."""
    return re.fullmatch(rf"\.(ccsim-|.*\.)partial-[a-z0-9_]{{{_RANDOM}}}", name, re.S) is not None


def hidden_name(name: str, tag: str = ".partial-") -> str:
    """``.<name><tag>``: the name of the hidden file or folder an output called ``name`` is
    written as, beside its place, before it is renamed there; ``name`` is cut (at a character)
    so that the whole, with ``mkdtemp``'s random characters, stays within :data:`NAME_MAX`. A
    name the system takes (250 characters) failed with "file name too long", naming the
    hidden file, once the hidden one's 18 more characters were added."""
    room = NAME_MAX - _RANDOM - len(os.fsencode(f".{tag}"))
    cut = os.fsencode(name)[:room].decode("utf-8", errors="ignore")  # whole characters only
    return f".{cut}{tag}"


def _move_into(source: Path, dest: Path) -> None:
    """Rename each entry of ``source`` over its namesake in ``dest``, merging subfolders (an
    earlier run's pcap/ keeps the captures this run did not make)."""
    for entry in sorted(source.iterdir()):
        target = dest / entry.name
        if entry.is_dir() and target.is_dir():
            _move_into(entry, target)
            # Emptied: removed with the hidden folder it lies in if this fails (its name in
            # the error, "<hidden folder>/pcap: input/output error", said nothing).
            with contextlib.suppress(OSError):
                entry.rmdir()
        else:
            _replace(entry, target)


def _replace(entry: Path, target: Path) -> None:
    """``entry`` renamed over ``target``; across file systems (``target`` reached through a
    link to a folder on another disk, as a run's pcap/ may be) copied beside ``target`` under a
    hidden name, then renamed over it, so ``target`` is never seen half-written. A rename
    cannot cross file systems: the run said "<hidden folder>/pcap/r1-access.pcap ->
    <out>/pcap/r1-access.pcap: invalid cross-device link" and left its hidden folder in
    ``--out`` (campaign 26, issue 32)."""
    try:
        os.replace(entry, target)
        return
    except OSError as e:
        if e.errno != errno.EXDEV:
            raise
    try:
        part = Path(tempfile.mkdtemp(prefix=hidden_name(target.name, ".copy-"),
                                     dir=target.parent))  # fmt: skip
    except OSError as e:
        # Its folder never made (a full disk), the error named it, "<out>/.flows.parquet.copy-
        # XXXX: no space left on device" (campaign 28, issue 32): the file it is for is named.
        raise OSError(e.errno, e.strerror or str(e), str(target)) from e
    try:
        copy = part / entry.name
        if entry.is_dir() and not entry.is_symlink():
            shutil.copytree(entry, copy, symlinks=True)
        else:
            shutil.copy2(entry, copy, follow_symlinks=False)
        os.replace(copy, target)
    except OSError as e:
        # Named as the file it writes, not the hidden copy (a full disk there).
        raise OSError(e.errno, e.strerror or str(e), str(target)) from e
    finally:
        discard(part)
    # ``target`` is in place: the staged original's removal failing named it, a file in the
    # hidden folder ("<hidden folder>/flows.parquet: input/output error"; campaign 28, issue
    # 32); it goes with that folder, as far as the disk allows.
    if entry.is_dir() and not entry.is_symlink():
        discard(entry)
    else:
        with contextlib.suppress(OSError):
            entry.unlink()


def dangling(path: Path) -> str | None:
    """ "is a link to <target>, which does not exist" when ``path`` is a symbolic link to
    nothing, else None. Such a link is no folder yet cannot be made one: ``--out`` a dangling
    link ran the whole run, then failed renaming its output over the link and left the hidden
    folder beside it; a sweep's runs/ one ran every run and saved none."""
    if path.is_symlink() and not path.exists():
        return f"is a link to {os.readlink(path)}, which does not exist"
    return None


LINK_LOOP = "is a loop of symbolic links"


def not_a_folder(path: Path) -> str | None:
    """ "<folder> is a file, not a folder" (or a FIFO, a device, a loop of symbolic links...)
    for the first of ``path``'s folders, from the root down to ``path`` itself, that exists
    and is not a folder; None when there is none. Under a file nothing can be made: ``--out
    afile/sub`` was refused only in the system's words, "cannot write there (File exists)",
    which do not say that ``afile`` is a file; ``--out`` a loop of links said "Symlink loop
    from '<out>/flows.parquet'", naming neither the option nor the loop."""
    import errno
    import stat

    from ccsim.scenario import file_kind

    for folder in [*reversed(path.parents), path]:
        try:
            mode = folder.stat().st_mode
        except OSError as e:  # not there yet (made by the write), or not ours to look in
            if e.errno == errno.ELOOP:
                return f"{folder} {LINK_LOOP}, not a folder"
            continue
        if not stat.S_ISDIR(mode):
            return f"{folder} {file_kind(mode)}, not a folder"
    return None


def name_max(folder: Path) -> int:
    """The most bytes a file name may have in ``folder`` (or in the nearest folder above it
    that exists): the file system's NAME_MAX, 255 on Linux's local ones."""
    for at in [folder, *folder.absolute().parents]:
        with contextlib.suppress(OSError, ValueError):
            return os.pathconf(at, "PC_NAME_MAX")
    return 255


def distribution_left(package: str) -> str | None:
    """The distribution whose metadata names ``package``'s files while none of them is there
    (an uninstall or a copy of site-packages cut short: pip takes it as installed, so only
    --force-reinstall brings its files back), or None."""
    try:
        from importlib.metadata import distribution, packages_distributions

        for name in packages_distributions().get(package) or []:
            # Its own entry file still there (a package hidden from the import system, not
            # gone): not this case.
            # RECORD read as text: the importlib_metadata backport (loaded by dask) answers
            # the standard library's lookups, and its ``files`` listed distributed's
            # dist-info alone.
            dist = distribution(name)
            own = (f"{package}/__init__.py", f"{package}.py")
            entries = [
                line.partition(",")[0] for line in (dist.read_text("RECORD") or "").splitlines()
            ]
            entries = [e for e in entries if e in own]
            if entries and not any(Path(str(dist.locate_file(e))).exists() for e in entries):
                return name
    except Exception:  # metadata that cannot be read: the other cures stand
        return None
    return None


def package_of_file(path: str) -> str | None:
    """The top-level package or module of the file ``path``, by the innermost folder of
    sys.path it is under, or None. The innermost: under ``python -m ccsim`` the working
    folder is first on sys.path, and from a home folder holding the virtual environment a
    library of pyarrow's, gone, was "ccsim needs venv, which is installed but cannot be
    imported" (campaign 50, issue 32)."""
    import sys

    file = Path(path).absolute()
    best: Path | None = None
    for entry in sys.path:
        with contextlib.suppress(OSError, ValueError):
            folder = Path(entry or ".").absolute()
            if file.is_relative_to(folder) and (best is None or folder.is_relative_to(best)):
                best = folder
    if best is None:
        return None
    if file.parent == best:  # a module of its own (six.py, a top-level extension), or no module
        from importlib.machinery import all_suffixes

        return file.name.split(".")[0] if file.name.endswith(tuple(all_suffixes())) else None
    return file.relative_to(best).parts[0]


def reinstall_cure(file: str, dist: str) -> str:
    """The words for a file of ``dist`` not as pip installed it (:func:`file_not_as_installed`)
    and the cure that rewrites it, as every command says them."""
    return (f"{file} is not as pip installed it for {dist} (cut short or emptied), and pip "
            f"takes {dist} as installed: pip install --force-reinstall -c constraints.txt "
            f"{dist} (from the repository root)")  # fmt: skip


def file_not_as_installed(error: BaseException) -> tuple[str, str] | None:
    """A file named by ``error`` (or by the errors it was raised from, or whose code is in
    their tracebacks) that an installed distribution's RECORD lists with another size or
    hash, and that distribution's name; or None. Such a file was cut short or emptied after
    pip wrote it (a truncated module: SyntaxError; an emptied library: "file too short"):
    only ``pip install --force-reinstall`` rewrites it, since pip takes the distribution as
    installed (campaign 51, issue 32)."""
    import base64
    import hashlib
    from importlib import metadata

    files: list[str] = []
    chain: list[BaseException] = []
    todo: list[BaseException | None] = [error]
    while todo and len(chain) < 8:
        e = todo.pop(0)
        if e is None or e in chain:
            continue
        chain.append(e)
        todo += [e.__cause__, e.__context__]
        files += [f for f in (getattr(e, "filename", None), getattr(e, "path", None))
                  if isinstance(f, str)]  # fmt: skip
        # A package re-raising in its own words keeps the file in them: pyarrow's "not built
        # with support for the Parquet file format (.../_parquet....so: file too short)".
        files += re.findall(r"(/[^\s'\"():]+)", str(e))
        tb = e.__traceback__
        while tb is not None:
            files.append(tb.tb_frame.f_code.co_filename)
            tb = tb.tb_next
    try:
        owners = metadata.packages_distributions()
        for name in dict.fromkeys(files):
            file = Path(name)
            if not file.is_absolute() or not file.is_file():
                continue
            top = package_of_file(name)
            for dist in owners.get(top or "", []):
                for record in metadata.files(dist) or []:
                    if record.hash is None or Path(str(record.locate())).resolve() != (
                        file.resolve()
                    ):
                        continue
                    if record.size is not None and record.size != file.stat().st_size:
                        return name, dist
                    if record.hash.mode == "sha256":
                        digest = hashlib.sha256(file.read_bytes()).digest()
                        if base64.urlsafe_b64encode(digest).rstrip(b"=").decode() != (
                            record.hash.value
                        ):
                            return name, dist
    except Exception:  # metadata or a file that cannot be read: the other cures stand
        return None
    return None


def shadowing_file(package: str) -> str | None:
    """The file of a module imported under ``package``'s name that no installed distribution
    holds (a plain ``numpy.py`` where numpy is a package), or the folder of such a package (a
    ``numpy/`` of the user's with an ``__init__.py``) when another of that name comes after it
    on sys.path, or a folder of that name without ``__init__.py`` that no distribution holds
    (imported as an empty namespace package: a clone of a package's sources on PYTHONPATH);
    or None."""
    import sys
    from importlib import machinery, metadata

    module = sys.modules.get(package)
    if module is None:
        return None
    file = getattr(module, "__file__", None)
    try:
        if file is None:
            return _users_namespace(package, module)
        mine = Path(file).resolve()
        for dist in metadata.packages_distributions().get(package, []):
            if any(Path(str(f.locate())).resolve() == mine for f in metadata.files(dist) or []):
                return None  # installed as a module (six, typing_extensions): not a shadow
        if hasattr(module, "__path__"):
            # A package no distribution lists: a folder of the user's, said as "installed but
            # cannot be imported (cannot import name 'frombuffer' from 'numpy' (.../numpy/
            # __init__.py)): install ccsim again" (campaign 34, issue 32); or one installed
            # in a way whose metadata lists no files (an editable install), which is not a
            # shadow unless another package of that name is found after it.
            folder = mine.parent
            rest = [p for p in sys.path if Path(p or ".").resolve() != folder.parent]
            if machinery.PathFinder.find_spec(package, rest) is None:
                return None
            return str(Path(file).parent)
    except Exception:  # metadata that cannot be read: say nothing of a shadow
        return None
    return file


def _users_namespace(package: str, module: Any) -> str | None:
    """The folder of a namespace package ``module`` when no installed distribution has a
    package of that name, or None. Where one has (matplotlib's namespace mpl_toolkits; a
    package whose folder lost its ``__init__.py``, a broken install rather than the user's
    folder, since a whole package of that name would have been imported instead), it is not
    the user's. A dependency takes such a folder for the optional package of that name and
    fails on it: an ``lz4/`` without ``__init__.py`` on PYTHONPATH was "Dask's distributed
    scheduler ... cannot be imported (module 'lz4' has no attribute '__version__'): pip
    install '.[dask]'" (campaign 50, issue 32)."""
    from importlib import metadata

    folders = list(getattr(module, "__path__", None) or [])
    if not folders or metadata.packages_distributions().get(package):
        return None
    return str(folders[0])


def shadow_words(shadow: str) -> str:
    """What ``shadow`` (from :func:`shadowing_file`) is, in the words of the line naming it."""
    if Path(shadow).is_dir() and not (Path(shadow) / "__init__.py").exists():
        return "a folder of that name without __init__.py, which Python imports as an empty package"
    return "a module of that name found first where Python looks for it"


def shadow_cure(shadow: str) -> str:
    """How to take ``shadow`` (from :func:`shadowing_file`) out of the way, by what put its
    folder where Python looks: PYTHONPATH, the working folder (put first by ``python -m``), or
    a ``.pth`` file of a site folder (``import sys; sys.path.insert(0, ...)``, as some
    installers write). "take its folder off PYTHONPATH" was said of all three, and of the
    last two no PYTHONPATH holds it (campaign 51, issue 32)."""
    import site
    import sys

    folder = Path(shadow).parent
    cure = "rename or move it"

    def same(entry: str) -> bool:
        with contextlib.suppress(OSError, ValueError):
            return Path(entry or ".").resolve() == folder.resolve()
        return False

    if any(same(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p):
        return f"{cure}, or take its folder off PYTHONPATH"
    if sys.path and same(sys.path[0]) and same(os.curdir):
        return f"{cure}, or run the command from another folder"
    sites = [*getattr(site, "getsitepackages", list)(), site.getusersitepackages()]
    for pth in sorted(p for d in sites if os.path.isdir(d) for p in Path(d).glob("*.pth")):
        with contextlib.suppress(OSError, UnicodeDecodeError):
            if str(folder) in pth.read_text(encoding="utf-8"):
                return f"{cure}, or take out the line of {pth} that puts its folder on sys.path"
    return f"{cure}, or take its folder off sys.path"


def plugin_failing(e: BaseException) -> str | None:
    """The plugin (an entry point another distribution declares) whose loading raised ``e``,
    in words with its cure, or None. Dask loads every ``dask.sizeof`` plugin installed as it
    loads, outside any try: one whose distribution's files are gone though its metadata is
    left, or whose module fails, made ``--executor dask`` say "which needs ghost, which is not
    installed: pip install '.[dask]'", an install that leaves that distribution as it is
    (campaign 50, issue 32)."""
    plugin = None
    tb = e.__traceback__
    while tb is not None:
        frame = tb.tb_frame
        module = str(frame.f_globals.get("__name__", ""))
        if frame.f_code.co_name == "load" and module in ("importlib.metadata",
                                                          "importlib_metadata"):  # fmt: skip
            found = frame.f_locals.get("self")
            if isinstance(getattr(found, "group", None), str):
                plugin = found
        tb = tb.tb_next
    if plugin is None:
        return None
    try:
        dist = plugin.dist.metadata["Name"] if plugin.dist is not None else None
    except Exception:  # metadata that cannot be read: named by the plugin alone
        dist = None
    named = f"{plugin.value} ({plugin.group}" + (f", declared by {dist})" if dist else ")")
    cure = (f"reinstall {dist} (pip install --force-reinstall {dist}) or uninstall it" if dist
            else "reinstall or uninstall the package that declares it")  # fmt: skip
    return f"which loads the plugin {named}, which cannot be imported ({failure_text(e)}): {cure}"


def raised_importing(e: BaseException) -> bool:
    """Whether ``e`` was raised while a module was being imported (the import system's own
    frames in its traceback): an OSError there is a package failing to load (one of its files
    unreadable, a shared library its code loads with ctypes gone), not a write of the output
    (campaign 49, issue 32). Or a package's own module code raised it as it loaded (a frame
    ``<module>`` not ccsim's): CPython removes the import system's frames from an ``import``
    statement's traceback, and numpy's OSError as a run imported it was said as "<out>:
    input/output error", a fault of the --out no one had written to (campaign 64b, issue 32)."""
    tb = e.__traceback__
    while tb is not None:
        name = str(tb.tb_frame.f_globals.get("__name__", ""))
        if name.startswith("importlib._bootstrap"):
            return True
        if tb.tb_frame.f_code.co_name == "<module>" and name.split(".")[0] not in (
            "ccsim",
            "__main__",
            "",
        ):
            return True
        tb = tb.tb_next
    return False


def failure_text(e: BaseException) -> str:
    """A package's failure to load, in the words of the line that names it. A SyntaxError (a
    module of it cut short by a full disk or a stopped upgrade, or one written for a newer
    Python) by its whole file: CPython's own words name the file by its last name alone, and
    "ccsim needs pandas, which is installed but cannot be imported (invalid syntax (_inner.py,
    line 3))" did not say that the file was dateutil's (campaign 50, issue 32). A SystemExit or
    KeyboardInterrupt its code raised (``sys.exit()`` in a module, as a CPU check or a licence
    prompt does) by what it says. An error without words (an ``assert`` failing, a bare
    RecursionError) by its name: the line read "cannot be imported ()" (campaign 64b, issue
    32)."""
    if isinstance(e, SyntaxError) and e.filename:
        return f"{e.msg} ({e.filename}, line {e.lineno})"
    words = str(e)
    if isinstance(e, (SystemExit, KeyboardInterrupt)) or not words.strip():
        # The module whose code raised it, the innermost one loading: the line names the
        # package ccsim imports, which may be another that loads this one.
        module, tb = "a module", e.__traceback__
        while tb is not None:
            name = str(tb.tb_frame.f_globals.get("__name__", ""))
            if tb.tb_frame.f_code.co_name == "<module>" and name.split(".")[0] != "ccsim":
                module = name
            tb = tb.tb_next
        if isinstance(e, SystemExit):
            return f"{module} called sys.exit({e.code!r}) as it loaded"
        if isinstance(e, KeyboardInterrupt):
            return f"{module} raised KeyboardInterrupt as it loaded, with no signal sent"
        return f"{module} raised {type(e).__name__}, with no words of its own, as it loaded"
    return words


def os_error_text(e: OSError) -> str:
    """An OSError in the words of the rest of ccsim's errors: ``<path>: no such file`` rather
    than ``[Errno 2] No such file or directory: '<path>'``; one without a file as it is."""
    if not e.filename:
        return str(e)
    if isinstance(e, FileNotFoundError):
        reason = "no such file"
    else:
        reason = e.strerror or str(e)
        reason = reason[:1].lower() + reason[1:]
    other = f" -> {e.filename2}" if e.filename2 else ""
    return f"{e.filename}{other}: {reason}"


def requirement_closure() -> set[str] | None:
    """The distributions ccsim needs (every one of its extras too) and, recursively, what each
    of them needs without its optional extras, by normalized name (``dask-expr``); None when
    the markers cannot be read (``packaging``, which matplotlib brings, missing or failing as
    it loads).

    Called while the words for another package's failure are found, it may meet packaging
    itself failing again: matplotlib imports it, so a packaging whose ``__init__`` raised
    (an OSError, a SyntaxError, ``sys.exit()``, a KeyboardInterrupt of its own) made
    ``reproduce`` and ``bench`` end with that traceback instead of their one line (the extras
    matrix, stop 61, issue 32). Whatever its code raises means no closure; a stop signal's
    KeyboardInterrupt (raised by ccsim's handler, not by packaging's code) goes on."""
    import re
    from importlib import metadata

    try:
        from packaging.requirements import InvalidRequirement, Requirement
    except ImportError:
        return None
    except (Exception, SystemExit, KeyboardInterrupt) as e:
        if isinstance(e, KeyboardInterrupt) and not _raised_by_module_code(e, "packaging"):
            raise
        return None

    def norm(name: str) -> str:
        return re.sub(r"[-_.]+", "-", name).lower()

    needed: set[str] = set()
    try:
        extras = metadata.metadata("ccsim").get_all("Provides-Extra") or []
    except metadata.PackageNotFoundError:
        return None
    todo: list[tuple[str, tuple[str, ...]]] = [("ccsim", ("", *extras))]
    while todo:
        name, wanted = todo.pop()
        if norm(name) in needed:
            continue
        needed.add(norm(name))
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue  # an optional dependency's own dependency that is not installed
        for line in requires:
            try:
                req = Requirement(line)
            except InvalidRequirement:
                continue
            if req.marker is None or any(req.marker.evaluate({"extra": e}) for e in wanted):
                todo.append((req.name, ("", *req.extras)))
    return needed


def _raised_by_module_code(e: BaseException, top: str) -> bool:
    """Whether ``e`` was raised by code of the package ``top`` itself (its traceback's last
    frame is in it): a KeyboardInterrupt a stop signal raised comes from the signal handler's
    frame, ccsim's, wherever the signal landed."""
    tb = e.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is not None and str(tb.tb_frame.f_globals.get("__name__", "")).split(".")[0] == top


def optional_package_failing(error: BaseException, loader: str, raising: str | None) -> str | None:
    """The distribution of ``raising`` (the top-level package whose code raised ``error``
    as ``loader`` was imported) when it is installed and none of ccsim's requirements needs it:
    a package ``loader`` takes when it can import it (linkify_it under markdown_it). None
    otherwise, and when the distributions' metadata cannot be read: a METADATA that is not
    UTF-8 (plotly's, which it reads as it loads) failed these words again, and report,
    reproduce and explore ended with that traceback (the extras matrix, stop 61, issue 32)."""
    import re
    from importlib import metadata

    if raising is None or raising == loader:
        return None
    try:
        dists = metadata.packages_distributions().get(raising)
        closure = requirement_closure()
    except (OSError, ValueError):  # UnicodeDecodeError is a ValueError
        return None
    if not dists or closure is None:
        return None
    if any(re.sub(r"[-_.]+", "-", d).lower() in closure for d in dists):
        return None
    return dists[0]


def package_changed(e: BaseException, ours: Sequence[Path], state: str) -> str | None:
    """The error, in words and followed by ``state`` (what became of the output), for ``e``
    when it shows a package changed since the command looked it up at its start; or None."""
    package = _package_changed(e, ours)
    if package is None:
        return None
    return changed_text(package, os_error_text(e) if isinstance(e, OSError) else str(e), state)


def changed_text(package: str, detail: str, state: str | None = None) -> str:
    """The words of :func:`package_changed` for ``package``, failing with ``detail``, followed
    by ``state`` when given (a caller adding its own)."""
    return (f"{package} cannot be loaded any more ({detail}): was it removed or upgraded while "
            "this command ran? If it was removed, install ccsim again with its dependencies (pip "
            "install -c constraints.txt . from the repository root)"
            + (f"; {state}" if state is not None else ""))  # fmt: skip


def packages_gone() -> list[str]:
    """The packages and top-level modules (ccsim too) loaded in this process whose own file
    (a package's ``__init__``) is gone since: removed while the command ran."""
    import sys

    return sorted(name for name, module in list(sys.modules.items())
                  if "." not in name and name != "__main__" and _file_gone(module))  # fmt: skip


def _file_gone(module: object) -> bool:
    """Whether ``module`` was loaded from a file of its own that is gone now. Only a module
    loaded from the file system counts: one from a zip on PYTHONPATH has a ``__file__``
    inside the zip, which no path names."""
    from importlib.abc import FileLoader

    file = getattr(module, "__file__", None)
    loader = getattr(getattr(module, "__spec__", None), "loader", None)
    return isinstance(file, str) and isinstance(loader, FileLoader) and not os.path.exists(file)


def _package_changed(e: BaseException, ours: Sequence[Path]) -> str | None:
    """The package (not ccsim) that ``e`` shows changed since the command looked it up at its
    start, or None: a module of it imported only now, at the output's writing, that cannot be
    (pyarrow.pandas_compat, matplotlib's SVG backend), or a file of it read only now that is
    gone (plotly.min.js, a font of matplotlib's). A package removed or upgraded while a sweep
    or reproduction ran failed it after every run as "ccsim needs pyarrow, which is not
    installed", not saying the runs were kept, or as ".../plotly/package_data/plotly.min.js:
    no such file" and ".../matplotlib/mpl-data/fonts/ttf/LastResortHE-Regular.ttf: no such
    file", naming a file inside the package instead of the package (campaign 41, issue 32)."""
    import sys

    from ccsim import limits

    if limits.exhausted(e) is not None:  # a library that could not be mapped: the limit
        return None
    if getattr(e, "found_at_start", False):
        # The command's own look at its packages as it started (a pyarrow without its parquet
        # part, a conda pyarrow-core): not installed whole, not changed since (the full suite
        # on campaign 41's fix).
        return None
    if isinstance(e, ImportError):
        # A submodule gone of a package loaded whole at the start; not a package that failed
        # its first import here (the run's own check of pyarrow, a user's numpy.py under it:
        # those are named as not installed, or shadowed, by the command).
        package, _, sub = (e.name or "").partition(".")
        module = sys.modules.get(package)
        if package == "ccsim" or getattr(module, "__file__", None) is None:
            return None
        if isinstance(e, ModuleNotFoundError) and sub:
            return package
        # A name asked of a package loaded whole at the start whose own files are gone now:
        # PIL removed while a reproduction ran failed it after every run with "ccsim needs PIL,
        # which is installed but cannot be imported (cannot import name 'features' from
        # 'PIL')", not saying the runs were kept (the install-change matrix, campaign 43).
        if not isinstance(e, ModuleNotFoundError) and _file_gone(module):
            return package
        return None
    if not isinstance(e, OSError) or not e.filename:
        return None
    try:
        file = Path(os.fsdecode(e.filename)).absolute()
    except (OSError, TypeError, ValueError):
        return None
    if any(file.is_relative_to(Path(folder).absolute()) for folder in ours):
        return None  # the output's own file (a user's package may hold the output folder)
    for name, module in list(sys.modules.items()):
        if "." in name or name == "ccsim" or getattr(module, "__file__", None) is None:
            continue
        for folder in getattr(module, "__path__", None) or []:
            if file.is_relative_to(Path(folder).absolute()):
                return name
    return None
