# SPDX-License-Identifier: MIT
"""``build_site``: the site folder written from a results folder, standing alone."""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Callable
from pathlib import Path

from .pages import index_page, paper_page
from .reports import DamagedResults, SiteWarning, check_tables, find_reports, plan_for, read_report


def build_site(
    results: Path,
    out: Path | None = None,
    root: Path | None = None,
    warn: Callable[[str], None] | None = None,
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
    skipped reproduction had from an earlier build is removed, so no stale page remains."""
    import shutil

    import plotly.offline

    results = Path(results)
    out = Path(out) if out is not None else results / "site"
    out.mkdir(parents=True, exist_ok=True)
    js = out / "plotly.min.js"
    source = plotly.offline.get_plotlyjs()
    if not js.exists() or js.stat().st_size != len(source.encode("utf-8")):
        js.write_text(source, encoding="utf-8")
    pages = []
    for folder in find_reports(results):
        if folder.resolve() == out.resolve():
            continue
        try:
            check_tables(folder)
            page = read_report(folder)
            plan, missing = plan_for(page, root)
            body, _, linked = paper_page(page, plan)
        except DamagedResults as e:
            (out / f"{folder.name}.html").unlink(missing_ok=True)
            _warn(f"{folder.name} left out of the site: {e}", warn)
            continue
        if missing is not None:
            _warn(missing, warn)
        assets = out / page.name
        for name in linked:
            src, dest = folder / name, assets / name
            assets.mkdir(exist_ok=True)
            if not dest.exists() or not os.path.samefile(src, dest):  # --out inside results
                shutil.copyfile(src, dest)
        (out / f"{page.name}.html").write_text(body, encoding="utf-8")
        pages.append(page)
    index = out / "index.html"
    index.write_text(index_page(pages), encoding="utf-8")
    (out / "site.json").write_text(
        json.dumps([{"name": p.name, "claims": p.counts()} for p in pages], indent=1),
        encoding="utf-8",
    )
    return index


def _warn(message: str, warn: Callable[[str], None] | None) -> None:
    if warn is not None:
        warn(message)
    else:
        warnings.warn(message, SiteWarning, stacklevel=3)
