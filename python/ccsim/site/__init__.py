# SPDX-License-Identifier: MIT
"""``ccsim report``: one offline HTML site for every reproduced paper under ``results/``.

::

    results/p001/report.md       ─┐ rendered as HTML (the source of truth: claims, verdicts,
    results/p001/summary.parquet  │ tables, assumptions and the re-run command come from it)
    results/p001/runs/            │ its figure images replaced by interactive Plotly figures
    results/p001/plan/           ─┘ drawn from summary.parquet (points) and the run store (time
                                    series), labelled and keyed by the plan the reproduction
        │                           ran, stored with it (not looked up from the working folder)
        ▼
    results/site/index.html       each paper's status: claims holding, not holding, not judged
    results/site/p001.html        a page per paper
    results/site/p001/            its PNG and SVG figures, copied
    results/site/plotly.min.js    Plotly's JavaScript, copied from its Python package

``ccsim reproduce --out DIR`` builds the site of that one reproduction in ``DIR/site``.

The site folder stands alone: its pages link nothing outside it, load ``plotly.min.js`` from
beside them and carry their data inline, so the folder works moved, from a file:// URL, a USB
stick or a web server, and nothing is fetched when a page is viewed.
No statistic is computed here: the points, means and CIs are the ones ``ccsim reproduce``
wrote, and the claims' verdicts are read from report.md.

Why Plotly (docs/site.md has more): its Python package ships the JavaScript it needs, so the
site is offline without another download, and hover text, error bars, zoom and legend toggling
are built in; Altair's HTML loads Vega from a CDN unless another package (vl-convert) inlines it.

Modules: ``reports`` (reading a reproduction's report.md, summary and stored plan),
``figures`` (the interactive Plotly figures and grid tables), ``pages`` (the HTML of a
reproduction's page and of the index), ``build`` (``build_site``: the folder), ``browser``
(where the browser tests find Chromium).
"""

from __future__ import annotations

from .build import build_site
from .figures import PALETTE, grid_table_html, point_figure, series_figure
from .pages import index_page, paper_page
from .reports import DamagedResults, PaperPage, SiteWarning, find_reports, read_report, verdict_of

__all__ = [
    "PALETTE",
    "DamagedResults",
    "PaperPage",
    "SiteWarning",
    "build_site",
    "find_reports",
    "grid_table_html",
    "index_page",
    "paper_page",
    "point_figure",
    "read_report",
    "series_figure",
    "verdict_of",
]
