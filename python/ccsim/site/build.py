# SPDX-License-Identifier: MIT
"""``build_site``: the site folder written from a results folder, standing alone."""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Callable
from pathlib import Path

from ccsim.staging import (
    discard,
    hidden_name,
    in_the_way,
    moving_in,
    name_max,
    staging_folder,
)

from .pages import index_page, linked_files, page_inputs, paper_page
from .reports import DamagedResults, SiteWarning, check_tables, find_reports, plan_for, read_report


class AllLeftOut(ValueError):
    """No site was written: every reproduction's files were left out of it (each named in a
    warning), unreadable or damaged."""


#: The manifest of a site's pages (ccsim.experiment.drawn): what each was drawn from.
PAGES_MANIFEST = "pages.json"
#: The site's own files beside its pages: a reproduction's folder of one of these names
#: cannot have its figures' folder there.
SITE_FILES = ("index.html", PAGES_MANIFEST, "site.json", "plotly.min.js")


def build_site(
    results: Path,
    out: Path | None = None,
    root: Path | None = None,
    warn: Callable[[str], None] | None = None,
    progress: Callable[[int, int, str], None] | None = None,
) -> Path:
    """Write the site for every reproduction under ``results`` (or for ``results`` alone when
    it is one reproduction's folder) into ``out`` (default ``results/site``) and return the
    path of its index.html.

    The site stands alone: the pages link only files inside ``out`` (plotly.min.js, and each
    reproduction's PNG and SVG figures copied into ``out/<name>/``), so the folder can be
    moved, copied or served by itself. Each plan (labels, the time series' store keys) is the
    one stored with its reproduction; results from before plans were stored fall back to
    ``root/experiments`` (default: the working directory's), and one found in neither is
    named to ``warn`` (its figures are then static images).

    A reproduction whose files cannot be read (:class:`DamagedResults`: report.md not UTF-8,
    a table or record cut short: :func:`check_tables`) is left out with one message naming the
    file, given to ``warn`` (default: a :class:`SiteWarning`); the others are built. The page a
    skipped reproduction had from an earlier build is removed, so no stale page remains.

    ``progress``, when given, is called as each reproduction's page is begun, with how many
    were begun before it, how many there are, and its folder's name."""

    results = Path(results)
    out = Path(out) if out is not None else results / "site"
    if (out / "report.md").is_file():
        # The reproduction there was left out of its own site (a page is never written over
        # its own results), and the site's files mixed with its own (issue 32's noticed list).
        # The results folder itself stays allowed: the pages are written beside the
        # reproductions' folders, their figures linked in place, nothing of theirs touched.
        raise ValueError(
            f"{out}: this is the reproduction {out.absolute().name}'s folder (it holds "
            "report.md); the site would leave it out and mix its files with the "
            f"reproduction's: give the site a folder of its own (default: {results / 'site'})"
        )
    out.parent.mkdir(parents=True, exist_ok=True)
    # Written beside its place and moved in only when whole: a build that fails midway (a
    # dependency missing, a full disk, Ctrl-C) left the folder holding plotly.min.js alone, a
    # site begun; now it leaves no new folder, and an earlier site as it was.
    # An existing folder is staged inside, as a command's --out is (staging.staged_output):
    # a rename cannot cross file systems, and beside a folder that is a mount point (a USB
    # disk, a tmpfs) or a link to a folder on another disk, every page failed to move in with
    # "<hidden folder>/m01/fig12.png -> <out>/m01/fig12.png: invalid cross-device link", an
    # empty m01/ left in the site (campaign 26, issue 32).
    try:
        work = staging_folder(hidden_name(out.name), out if out.is_dir() else out.parent)
    except OSError as e:
        # The hidden folder never made (a full disk, a disk gone read-only) was the name in
        # the error, "<parent>/.site.partial-XXXX: read-only file system" (campaign 28,
        # issue 32): the site's folder is named.
        reason = os.strerror(e.errno) if e.errno else (e.strerror or str(e))
        raise OSError(e.errno, f"{reason}; the site was not written", str(out)) from e
    try:
        index, left_out = _write_site(results, out, work, root, warn, progress)
        with moving_in(out if out.is_dir() else out.parent):  # two reports at once: not mixed
            _move_into_place(work, out, left_out)
    except OSError as e:
        if not work.is_dir():
            # The folder the site was staged in removed or moved away (`mv results/site
            # old`) while it was written: that was "<out>/m01: no such file", a page of the
            # site's named as if it alone were missing (campaign 48, issue 32).
            moved = out if work.parent == out else out.parent
            where = _named_in_place(e, work, out).filename or out
            raise ValueError(
                f"{where}: no such file; {moved} was removed or moved away while this "
                "command wrote the site into it: nothing of this site or of an earlier one is "
                "kept there"
            ) from e
        raise _named_in_place(e, work, out) from e
    finally:
        discard(work)
    return index


def _named_in_place(e: OSError, work: Path, out: Path) -> OSError:
    """``e`` naming the file where the site would have it: a write into ``work`` that failed
    (a full disk: a bare "[Errno 28] No space left on device", no file named) names ``out``,
    and a file inside ``work`` (removed now) its place in ``out``; any other file as it is."""
    if e.filename is None:
        where = out
    else:
        # A copy into ``work`` names its source first and the file it writes second
        # (shutil.copyfile): a full disk failing the copy of the kept plotly.min.js named
        # both, the hidden folder among them, and not that the site was not written
        # (campaign 25, issue 32).
        written = Path(os.fsdecode(e.filename2 if e.filename2 is not None else e.filename))
        if written.is_relative_to(work):
            where = out / written.relative_to(work)
        elif e.filename2 is not None and Path(os.fsdecode(e.filename)).is_relative_to(work):
            # A rename out of ``work`` into the site (a disk gone read-only) named the hidden
            # folder first, "<hidden folder>/index.html -> <out>/index.html" (campaign 28,
            # issue 32): the file it would have put in place is named.
            where = written
        else:  # a file of the results, not of the site
            return e
    reason = os.strerror(e.errno) if e.errno else (e.strerror or str(e))
    return OSError(e.errno, f"{reason}; the site was not written", str(where))


def _write_site(
    results: Path,
    out: Path,
    work: Path,
    root: Path | None,
    warn: Callable[[str], None] | None,
    progress: Callable[[int, int, str], None] | None = None,
) -> tuple[Path, list[str]]:
    """The site for ``out`` written into ``work``: the path its index.html will have, and
    the pages of reproductions left out (an earlier build's are removed from ``out``)."""
    import shutil

    from ccsim.experiment.drawn import Manifest, inputs_digest

    # A page (and plotly.min.js) is drawn only when what it is drawn from changed: one kept is
    # copied from the site as it stands, and its copy's bytes checked against the manifest
    # (checked before the copy, a page another `ccsim report` put in place between the two
    # was kept under this build's manifest).
    drawn = Manifest(out, PAGES_MANIFEST)
    js = inputs_digest("plotly.min.js")
    if not drawn.up_to_date("plotly.min.js", js, into=work):
        import plotly.offline

        _write_text(work / "plotly.min.js", plotly.offline.get_plotlyjs())
        drawn.drew("plotly.min.js", js, [work / "plotly.min.js"])
    pages, left_out, clashing = [], [], []
    reports = find_reports(results)
    names = {folder.name for folder in reports}
    for begun, folder in enumerate(reports):
        if progress is not None:
            progress(begun, len(reports), folder.name)
        if folder.resolve() == out.resolve():
            continue
        if folder.name == "index":
            # Its page, index.html, was overwritten by the site's index, which then linked to
            # itself: that reproduction's page was lost (noticed16, issue 32).
            clashing.append(folder.name)
            _warn(f"{folder.name} left out of the site: its page would be the site's own "
                  "index.html; rename the folder (any other name) and run report again",
                  warn)  # fmt: skip
            continue
        if folder.name in SITE_FILES:
            # Its figures' folder (site/NAME/) would be one of the site's own files: the
            # build failed on it and no page was written for any reproduction (campaign 18,
            # issue 32).
            clashing.append(folder.name)
            _warn(f"{folder.name} left out of the site: its figures' folder would be the "
                  f"site's own {folder.name}; rename the folder (any other name) and run "
                  "report again", warn)  # fmt: skip
            continue
        if folder.name.endswith(".html") and folder.name.removesuffix(".html") in names:
            # Its figures' folder (site/NAME.html/) would be the page of the reproduction
            # named without .html: the build failed on it and no site was written ("site/
            # a.html: file exists", naming neither reproduction) (campaign 20, issue 32).
            clashing.append(folder.name)
            _warn(f"{folder.name} left out of the site: its figures' folder would be the page "
                  f"of {folder.name.removesuffix('.html')}; rename the folder (any other "
                  "name) and run report again", warn)  # fmt: skip
            continue
        limit = name_max(work)
        if len(os.fsencode(f"{folder.name}.html")) > limit:
            # Its page is named after its folder: a folder of 251 to 255 bytes failed the
            # whole site, "<out>/NAME.html: file name too long; the site was not written",
            # every other reproduction's page with it (campaign 48, issue 32).
            clashing.append(folder.name)
            _warn(f"{folder.name} left out of the site: its page, {folder.name}.html, would "
                  f"have a longer name than a file may have here ({limit} bytes); rename the "
                  "folder (a shorter name) and run report again", warn)  # fmt: skip
            continue
        try:
            check_tables(folder)
            page = read_report(folder)
            plan, missing = plan_for(page, root)
            inputs = page_inputs(page, plan)
            kept = drawn.up_to_date(page.name, inputs, into=work)
            if kept:
                linked = linked_files(page)
            else:
                body, _, linked = paper_page(page, plan)
        except DamagedResults as e:
            left_out.append(f"{folder.name}.html")
            _warn(f"{folder.name} left out of the site: {e}", warn)
            continue
        if missing is not None:
            _warn(missing, warn)
        for name in linked:
            src, dest = folder / name, out / page.name / name
            if dest.exists() and os.path.samefile(src, dest):  # --out inside results
                continue
            (work / page.name).mkdir(exist_ok=True)
            shutil.copyfile(src, work / page.name / name)
        if not kept:
            _write_text(work / f"{page.name}.html", body)
            drawn.drew(page.name, inputs, [work / f"{page.name}.html"])
        pages.append(page)
    if (left_out or clashing) and not pages:
        # Every reproduction damaged: the index said "No reproduction yet" with status 0,
        # the site `ccsim report` refuses to write for a folder without one (campaign 12,
        # issue 32). Nothing is moved into place, so an earlier site stays as it was.
        raise AllLeftOut(
            f"{results}: every reproduction in it was left out (named above), so no site was "
            "written; run `ccsim reproduce` again for them"
        )
    # The page of a reproduction no longer under ``results`` (deleted, or its folder renamed)
    # stayed beside the new ones, unlinked but reachable, its results gone (campaign 13,
    # issue 32): the earlier manifest names what earlier builds wrote, and it is removed.
    built = {p.name for p in pages} | {"plotly.min.js"}
    for item, entry in drawn.old.items():
        files = entry.get("files") if isinstance(entry, dict) else None
        if item not in built and isinstance(files, dict):
            left_out += [f for f in files if isinstance(f, str) and Path(f).name == f
                         and f.endswith(".html") and f != "index.html"]  # fmt: skip
    _write_text(work / "index.html", index_page(pages))
    drawn.write(work)
    claims = [{"name": p.name, "claims": p.counts()} for p in pages]
    _write_text(work / "site.json", json.dumps(claims, indent=1))
    return out / "index.html", left_out


def _write_text(path: Path, text: str) -> None:
    """``text`` written to ``path``, a failed write named by it: a write()'s error carries no
    file name, and a page on a full disk was said as "<out>: no space left on device; the
    site was not written" (campaign 53, issue 32)."""
    from ccsim.result import naming_the_file

    with naming_the_file(path):
        path.write_text(text, encoding="utf-8")


def _move_into_place(work: Path, out: Path, left_out: list[str]) -> None:
    """The whole site in ``work`` made ``out``: renamed there when ``out`` is new; otherwise
    moved in file by file (``out`` may hold more than a site: ``--out`` the results folder
    itself), index.html last, and the pages of reproductions left out or gone removed."""
    if not out.exists():
        work.rename(out)
        return
    clash = in_the_way(work, out)
    if clash is not None:
        # Checked before the first file moves: index.html a folder failed the last rename,
        # with every other page already moved in, and the error said the site was not
        # written (campaign 22, issue 32).
        kind = "a folder" if clash.is_dir() else "a file"
        raise ValueError(f"{clash} is {kind}, where the site's {clash.name} goes: move it away "
                         "or name another folder; the site was not written")  # fmt: skip
    files = sorted(p for p in work.rglob("*") if p.is_file())
    # A folder that is not a site already may hold the user's own index.html (or pages.json, a
    # page named as a reproduction's): `report --out notes` wrote over it without a word
    # (noticed in campaign 21, issue 32). A site's own files are replaced, as a rebuild must;
    # its site.json marks it as one, even with its index.html removed.
    if not (out / "site.json").is_file():
        taken = [out / f.relative_to(work) for f in files if (out / f.relative_to(work)).exists()]
        if taken:
            raise ValueError(
                f"{out}: {taken[0].relative_to(out)} there is not a file of a site ccsim report "
                f"wrote (no site.json there), and the site would write over it"
                f"{f' and {len(taken) - 1} more' if len(taken) > 1 else ''}: give the site a "
                "folder of its own"
            )
    moved = 0
    try:
        for src in sorted(files, key=lambda p: p.name == "index.html"):
            dest = out / src.relative_to(work)
            dest.parent.mkdir(parents=True, exist_ok=True)
            os.replace(src, dest)
            moved += 1
        for name in left_out:
            (out / name).unlink(missing_ok=True)
    except OSError as e:
        if not moved:
            raise
        # A rename failing after others (a disk gone read-only, a failing disk) said "<out>/
        # repro/fig12.svg: read-only file system; the site was not written", of a site whose
        # pages were by then part this build's, part the earlier one's (campaign 51, issue
        # 32), as a command's --out says "holds part of this output" (staging.staged_output).
        shown = _named_in_place(e, work, out)
        where = shown.filename or out
        reason = os.strerror(e.errno) if e.errno else (e.strerror or str(e))
        reason = reason[:1].lower() + reason[1:]
        raise ValueError(f"{where}: {reason}; {out} holds part of this site, the rest the "
                         "earlier one's: the same command writes it whole") from e  # fmt: skip


def _warn(message: str, warn: Callable[[str], None] | None) -> None:
    if warn is not None:
        warn(message)
    else:
        warnings.warn(message, SiteWarning, stacklevel=3)
