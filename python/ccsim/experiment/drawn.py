# SPDX-License-Identifier: MIT
"""What is already drawn: a reproduction's figures and a site's pages are drawn again only
when what they are drawn from has changed.

A reproduction re-run over a full store changed nothing, yet it drew every figure again (PNG
and SVG through matplotlib: most of a cached ``ccsim reproduce``, issue 33), and the site drew
every page again (Plotly). Now each output is filed in a *manifest*, a JSON file in the folder
beside it (``figures.json`` in a reproduction's folder, ``pages.json`` in a site's), under its
id with two things:

- ``inputs``: a SHA-256 of everything the output is drawn from, as the caller names it (a
  figure's plan entry, its lines' labels, its summary rows or the store keys of its runs)
  together with :func:`code_version`: the sources of the ``ccsim`` package, the core's version
  and engine, and the versions of the libraries that draw;
- ``files``: the SHA-256 of each file written for it.

An output is *up to date* only when its inputs hash is the one filed and every one of its files
is there with the bytes filed: a figure deleted, cut short or edited, a manifest damaged or
missing, or any change of code is drawn again. Nothing is ever taken as up to date on trust.

Hashing a figure's inputs and files costs milliseconds; drawing it costs a quarter of a second
to several seconds.
"""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from ccsim.scenario import read_limited

#: The manifest's format; a manifest of another version is ignored (everything is drawn).
MANIFEST_VERSION = 1

#: The libraries whose versions change what is drawn (matplotlib: the PNG and SVG; Plotly and
#: markdown-it: the site's pages; pandas and NumPy: the numbers formatted into them).
_DRAWING_LIBRARIES = ("matplotlib", "plotly", "markdown-it-py", "pandas", "numpy", "pyarrow")


@lru_cache(maxsize=1)
def code_version() -> str:
    """A hash of the code that draws: every ``.py`` file of the ``ccsim`` package (by path and
    bytes), the core's version and engine hash, and the drawing libraries' versions. Read once
    per process (about 50 small files)."""
    from importlib import metadata

    from ccsim import _core

    root = Path(__file__).resolve().parent.parent
    h = hashlib.sha256()
    h.update(f"core {_core.__version__} {_core.ENGINE}\n".encode())
    for lib in _DRAWING_LIBRARIES:
        try:
            h.update(f"{lib} {metadata.version(lib)}\n".encode())
        except metadata.PackageNotFoundError:
            h.update(f"{lib} absent\n".encode())
        except Exception:
            # METADATA damaged (a byte not UTF-8: UnicodeDecodeError; its Version line gone:
            # KeyError from the importlib_metadata backport's distributions once it is
            # imported) while the library imports: a reproduction failed after its runs with
            # "'utf-8' codec can't decode byte", naming no file (campaign 37, issue 32). Its
            # outputs are drawn again once the metadata reads.
            h.update(f"{lib} unreadable\n".encode())
    for p in sorted(root.rglob("*.py")):
        h.update(p.relative_to(root).as_posix().encode() + b"\0")
        h.update(p.read_bytes())
    return h.hexdigest()


def inputs_digest(*parts: Any) -> str:
    """The SHA-256 of ``parts`` (their ``repr``: plan entries are dataclasses, rows are lists
    of plain values, so equal inputs give equal text) and of :func:`code_version`."""
    h = hashlib.sha256(code_version().encode())
    h.update(repr(parts).encode())
    return h.hexdigest()


def file_digest(path: Path) -> str | None:
    """The SHA-256 of ``path``'s bytes, or None when it cannot be read as a regular file."""
    try:
        if not path.is_file():
            return None
        # In chunks: a file named in a manifest may be a link to something of any size.
        h = hashlib.sha256()
        with path.open("rb") as fh:
            while chunk := fh.read(_HASH_CHUNK):
                h.update(chunk)
        return h.hexdigest()
    except OSError:
        return None


#: How much :func:`file_digest` reads at a time.
_HASH_CHUNK = 2**20


class Manifest:
    """The outputs of a folder with their inputs and files, read from ``folder/name`` (an
    absent, unreadable or damaged manifest is an empty one: everything is drawn), and the new
    manifest being made: each output either kept (:meth:`up_to_date`) or drawn
    (:meth:`drew`); :meth:`write` files both, and no other."""

    def __init__(self, folder: Path, name: str) -> None:
        self.folder, self.name = Path(folder), name
        self.old: dict[str, Any] = {}
        # Read only as a regular file and at most MAX_TEXT_BYTES: a FIFO in its place waited
        # for a writer for ever (``ccsim reproduce`` hung before its first run), a link to a
        # huge file was read whole.
        try:
            data = json.loads(read_limited(self.folder / name, regular=True).decode("utf-8"))
        except (OSError, ValueError):
            data = None
        if (isinstance(data, dict) and data.get("version") == MANIFEST_VERSION
                and isinstance(data.get("outputs"), dict)):  # fmt: skip
            self.old = data["outputs"]
        self.new: dict[str, Any] = {}
        #: The outputs kept whose files are not yet in the staging folder (see :meth:`write`).
        self.unstaged: set[str] = set()

    def up_to_date(self, item: str, inputs: str, into: Path | None = None) -> bool:
        """Whether ``item`` was drawn from ``inputs`` and each of its files is in the folder
        with the bytes it was written with; if so it is kept in the new manifest.

        With ``into`` (the staging folder of the output being made), each file is copied there
        first and the copy is what is checked: the output put in place then holds the bytes
        filed, whatever another command renames into the folder meanwhile. Left out of the
        staging folder, a kept figure was whatever stood in the folder when the output was
        put in place: two reproductions at once left one's report beside the other's figures
        (campaign 31, issue 32)."""
        entry = self.old.get(item)
        if not isinstance(entry, dict) or entry.get("inputs") != inputs:
            return False
        files = entry.get("files")
        if not isinstance(files, dict) or not files:
            return False
        for file, digest in files.items():
            if not isinstance(file, str) or Path(file).name != file:
                return False  # a manifest edited to name a file outside the folder
            # A digest of null matched a missing file (file_digest's None): a figure
            # deleted under a manifest edited so was counted as drawn.
            if not isinstance(digest, str):
                return False
            checked = self.folder / file if into is None else _copied(self.folder / file, into)
            if checked is None or file_digest(checked) != digest:
                return False
        self.new[item] = entry
        if into is None:
            self.unstaged.add(item)
        return True

    def drew(self, item: str, inputs: str, files: list[Path]) -> None:
        """``item`` drawn from ``inputs`` into ``files`` (their bytes are hashed now)."""
        digests = {}
        for p in files:
            digest = file_digest(p)
            if digest is None:
                return  # not written: not filed, so drawn again next time
            digests[p.name] = digest
        self.new[item] = {"inputs": inputs, "files": dict(sorted(digests.items()))}

    def write(self, folder: Path) -> Path:
        """The new manifest written into ``folder`` (the staging folder the outputs are
        written into, put in place with them); sorted, so the same outputs give the same
        bytes.

        The files of outputs kept before the staging folder existed (:meth:`up_to_date`
        without ``into``) are copied into it first, unless the caller put them there, and
        checked again: one another command replaced since is an error naming it, the output
        not put in place."""
        for item in sorted(self.unstaged & self.new.keys()):
            for file, digest in self.new[item]["files"].items():
                staged = Path(folder) / file
                if not staged.exists():
                    staged = _copied(self.folder / file, Path(folder)) or staged
                if file_digest(staged) != digest:
                    raise ValueError(f"{self.folder / file}: replaced by another command while "
                                     "this one ran; run this command again")  # fmt: skip
        self.unstaged.clear()
        path = Path(folder) / self.name
        body = {"version": MANIFEST_VERSION, "outputs": dict(sorted(self.new.items()))}
        from ccsim.result import naming_the_file

        with naming_the_file(path):  # a write's error names no file (campaign 53, issue 32)
            path.write_text(json.dumps(body, indent=1) + "\n", encoding="utf-8")
        return path


def _copied(path: Path, into: Path) -> Path | None:
    """``path`` copied into the folder ``into`` (its modification time kept: a cached re-run
    leaves its figures as they were), or None when it is not a regular file that can be read
    (drawn again). A failed write into ``into`` (a full disk) is raised: the output cannot be
    written either way."""
    import shutil

    try:
        if not path.is_file():
            return None
        with path.open("rb"):
            pass
    except OSError:
        return None
    return Path(shutil.copy2(path, into / path.name))
