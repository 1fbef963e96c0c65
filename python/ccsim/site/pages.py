# SPDX-License-Identifier: MIT
"""The site's HTML pages: a reproduction's report.md rendered with its figures drawn
interactively in place of their PNGs, and the index of every reproduction."""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ccsim.experiment.verdicts import VERDICTS
from ccsim.fonts import CSS_FONT_FAMILY

from .figures import figure_html, grid_table_html, point_figure, series_figure, series_run_keys
from .reports import PaperPage, read_markdown, read_summary

#: A figure reference as report.md writes it, alone on its line: ``![fig8](fig8.png)``.
_IMAGE = re.compile(r"^!\[([^\]]+)\]\(([^)\s]+)\.png\)\s*$")
#: A section heading of report.md: ``## table1_wan: Table 1 ...``; a grid table's section has
#: its table replaced by the site's own (hover text on every cell).
_HEADING = re.compile(r"^## ([^:\s]+): ")

_STYLE = """
body { font-family: @FONTS@; max-width: 70rem; margin: 1rem auto; padding: 0 1rem;
       color: #222; line-height: 1.45; }
table { border-collapse: collapse; margin: 0.5rem 0 1rem; font-size: 0.9rem; }
th, td { border: 1px solid #ccc; padding: 0.25rem 0.5rem; vertical-align: top; text-align: left; }
th { background: #f3f3f3; }
code { background: #f3f3f3; padding: 0 0.2rem; }
nav { margin-bottom: 1rem; }
.verdict-holds { color: #17622b; font-weight: 600; }
.verdict-does-not-hold { color: #a11; font-weight: 600; }
.verdict-partly-holds { color: #8a5a00; font-weight: 600; }
.verdict-not-judged { color: #555; font-weight: 600; }
.verdict-contradicted { color: #fff; background: #a11; padding: 0 0.2rem; font-weight: 600; }
.figure { border: 1px solid #ddd; margin: 0.5rem 0; }
.files { font-size: 0.85rem; color: #555; }
.note { background: #f7f7e8; padding: 0.5rem; border-left: 3px solid #cc9; }
/* A table wider than the window scrolls in its own box, and so does a figure's title, which
   Plotly does not wrap, and a word longer than a line breaks: wider than a phone's screen,
   they made the phone shrink the whole page to their width, every word of it smaller
   (campaign 61a, issue 32). */
.wide, .figure { overflow-x: auto; }
body { overflow-wrap: break-word; }
/* Printed, a figure is kept on one page: cut by a page break, its top half ended one page and
   its axis and legend began the next (campaign 61a, issue 32). */
@media print { .figure { break-inside: avoid; } }
""".replace("@FONTS@", CSS_FONT_FAMILY)  # Hangul drawn with a CJK font (ccsim.fonts)


#: Run after the figures are drawn. On a touch screen a finger's swipe over a figure drew
#: Plotly's zoom box instead of scrolling the page, and a phone's figures are as wide as its
#: screen: the page scrolled only from the text between them (campaign 61a, issue 32). There
#: a figure is not dragged (its buttons still zoom); a mouse drags to zoom as before.
_TOUCH = """<script>
if (typeof Plotly !== "undefined" && matchMedia("(pointer: coarse)").matches)
  for (const g of document.querySelectorAll(".js-plotly-plot"))
    Plotly.relayout(g, {dragmode: false});
</script>
"""


def _page(title: str, body: str, plotly: bool) -> str:
    script = '<script src="plotly.min.js" charset="utf-8"></script>\n' if plotly else ""
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        # A phone lays out a page without it at a desktop's 980 px, shrunk to its screen: the
        # text a third of its size (campaign 61a, issue 32).
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{html.escape(title)}</title>\n<style>{_STYLE}</style>\n{script}</head>\n"
        f"<body>\n{body}\n{_TOUCH if plotly else ''}</body></html>\n"
    )


def _markdown(text: str) -> str:
    from markdown_it import MarkdownIt

    return str(MarkdownIt("commonmark", {"html": False}).enable("table").render(text))


def _mark_verdicts(rendered: str) -> str:
    """Colour each claim's verdict (the words a cell starts with)."""

    def mark(m: re.Match[str]) -> str:
        v = m.group(1)
        return f'<td><span class="verdict-{v.replace(" ", "-")}">{v}</span>'

    return re.sub(r"<td>(" + "|".join(VERDICTS) + r")(?=:)", mark, rendered)


#: A run of Hangul (syllables and jamo, and the spaces between them).
_HANGUL = re.compile(r"[\uac00-\ud7a3\u1100-\u11ff\u3130-\u318f]+"
                     r"(?:\s+[\uac00-\ud7a3\u1100-\u11ff\u3130-\u318f]+)*")  # fmt: skip


def _korean(rendered: str) -> str:
    """Each run of Hangul in the text of ``rendered`` (HTML) marked as Korean: under the page's
    ``lang="en"``, a screen reader read a paper's Korean title with its English voice, which
    spells Hangul out or skips it (campaign 61a, issue 32). Tags and their attributes are left
    as they are (their ``<`` and ``>`` are never in text, which is escaped)."""

    def text(m: re.Match[str]) -> str:
        return _HANGUL.sub(lambda h: f'<span lang="ko">{h.group(0)}</span>', m.group(0))

    return re.sub(r"(?<=>)[^<]+", text, rendered)


def _wide(rendered: str) -> str:
    """Each table of ``rendered`` (HTML) in a box of its own that scrolls (``.wide``)."""
    return rendered.replace("<table", '<div class="wide"><table').replace(
        "</table>", "</table></div>"
    )


def _prose(lines: list[str]) -> str:
    """Lines of report.md as HTML: verdicts coloured, Korean marked, tables in boxes."""
    return _wide(_korean(_mark_verdicts(_markdown("\n".join(lines)))))


def paper_page(page: PaperPage, plan: Any) -> tuple[str, int, list[str]]:
    """The HTML of one reproduction's page, how many figures it draws interactively, and the
    files of the reproduction it links (its figures' PNG and SVG), which the site copies into
    ``<site>/<page.name>/`` so that the site stands alone."""
    summary = read_summary(page.folder / "summary.parquet")
    figures: dict[str, str] = {}
    if plan is not None:
        for fig in plan.figures:
            if len(summary):
                f, n = point_figure(fig, plan, summary)
                if n:
                    figures[fig.id] = figure_html(f, fig.id, n, "points")
        for sf in plan.series_figures:
            drawn = series_figure(sf, plan, page.folder, page.quick)
            if drawn is not None:
                figures[sf.id] = figure_html(drawn[0], sf.id, drawn[1], sf.kind)
    grids = {g.id: g for g in plan.grids} if plan is not None else {}
    text = read_markdown(page.folder / "report.md")
    chunks: list[str] = []
    pending: list[str] = []
    base = html.escape(quote(page.name))
    linked: list[str] = []
    drawn: set[str] = set()
    grid_section: str | None = None  # in a grid's section, before its table
    in_grid = False  # inside that table, which the HTML one replaces
    for ln in text.splitlines():
        if in_grid:
            if ln.startswith("|"):
                continue
            in_grid = False
        h = _HEADING.match(ln)
        if h is not None:
            grid_section = h.group(1) if h.group(1) in grids else None
        elif grid_section is not None and ln.startswith("|"):
            chunks.append(_prose(pending))
            pending = []
            chunks.append(_wide(grid_table_html(grids[grid_section], plan, summary)))
            grid_section, in_grid = None, True
            continue
        m = _IMAGE.match(ln)
        if m is None:
            pending.append(ln)
            continue
        chunks.append(_prose(pending))
        pending = []
        fid, stem = m.group(1), m.group(2)
        found = _static_files(page, stem)
        linked += found
        links = " · ".join(
            f'<a href="{base}/{html.escape(quote(f))}">{f.rsplit(".", 1)[1].upper()}</a>'
            for f in found
        )
        files = f'<p class="files">Static figure: {links}</p>' if found else ""
        if fid in figures and fid not in drawn:
            # Once: a figure referenced twice (report.md edited by hand) gave two divs of one
            # id, and Plotly drew both into the first, leaving an empty box (campaign 24,
            # issue 32); a repeat shows the static image.
            drawn.add(fid)
            chunks.append(figures[fid] + files)
        elif f"{stem}.png" in found:
            img = f'<img src="{base}/{html.escape(quote(stem))}.png" alt="{html.escape(fid)}">'
            chunks.append(f"<p>{img}</p>" + files)
        else:
            chunks.append(f"<p>({html.escape(fid)}: no figure was drawn)</p>")
    chunks.append(_prose(pending))
    note = (
        '<p class="note">Hover a point for its mean and 95 % CI; click a legend entry to hide '
        "its line, drag to zoom, double-click to zoom out. Hollow markers are the paper's own "
        'values (hover: the value and where in the paper it is); a table cell reads "ours / '
        "paper\" (hover it for both, our CI and the paper's source). Where the paper gives no "
        "number, none is drawn.</p>"
    )
    nav = '<nav><a href="index.html">← all papers</a></nav>'
    body = nav + note + "".join(chunks)
    return _page(f"{page.plan_id}: {page.title}", body, plotly=True), len(figures), linked


def _static_files(page: PaperPage, stem: str) -> list[str]:
    """A figure's static files, PNG and SVG: only those that exist are linked (and copied),
    so that a figure never drawn leaves no broken link.

    Only a plain file name of the reproduction's own folder is one (report.md writes
    ``![fig8](fig8.png)``). A reference edited by hand into another folder was copied to
    the same place under ``<site>/<name>/``: ``../../x.png`` wrote ``x.png`` beside the site,
    outside ``--out``, and linked out of the site; ``sub/x.png`` stopped the whole site with
    "<site>/<name>/sub/x.png: no such file" (campaign 24, issue 32). Such a figure is drawn
    as if it had no static file."""
    if stem in (".", "..") or Path(stem).name != stem:
        return []
    return [f"{stem}.{x}" for x in ("png", "svg") if (page.folder / f"{stem}.{x}").is_file()]


def linked_files(page: PaperPage) -> list[str]:
    """The files of the reproduction its page links (:func:`paper_page`'s third answer),
    without drawing the page: the site copies them for a page it keeps as it was."""
    linked: list[str] = []
    for ln in read_markdown(page.folder / "report.md").splitlines():
        m = _IMAGE.match(ln)
        if m is not None:
            linked += _static_files(page, m.group(2))
    return linked


def page_inputs(page: PaperPage, plan: Any) -> str:
    """The hash of everything :func:`paper_page` draws a reproduction's page from
    (ccsim.experiment.drawn): its report.md and summary.parquet, the plan, which static
    figures exist, and each time-series figure's runs, by store key with their record file's
    size and time (a record written again, damaged or deleted since changes it)."""
    import os

    from ccsim.experiment.drawn import file_digest, inputs_digest
    from ccsim.sweep import Store

    statics = sorted(p.name for p in page.folder.glob("*.[ps][nv]g") if p.is_file())
    runs = page.folder / "runs"
    series: list[Any] = [os.path.isdir(runs)]
    for sf in plan.series_figures if plan is not None else []:
        for line, key in series_run_keys(sf, plan, page.quick):
            try:
                st = os.stat(Store(runs).path(key))
                series.append((sf.id, line, key, st.st_size, st.st_mtime_ns))
            except OSError:
                series.append((sf.id, line, key, None))
    return inputs_digest("page", page.name, page.quick, file_digest(page.folder / "report.md"),
                         file_digest(page.folder / "summary.parquet"), plan, statics,
                         series)  # fmt: skip


def index_page(pages: list[PaperPage]) -> str:
    rows = []
    for p in pages:
        c = p.counts()
        status = (
            f'<span class="verdict-holds">{c["holds"]} hold</span>, '
            f'<span class="verdict-partly-holds">{c["partly holds"]} partly</span>, '
            f'<span class="verdict-does-not-hold">{c["does not hold"]} do not hold</span>, '
            f'<span class="verdict-contradicted">{c["contradicted"]} contradicted</span>, '
            f'<span class="verdict-not-judged">{c["not judged"]} not judged</span>'
        )
        mode = "quick (not for conclusions)" if p.quick else "full"
        main = ", ".join(p.headlines) or "not stated"
        rows.append(
            # The folder's name quoted as a URL's path, as the page's own links are: "p001 #2"
            # was the page "p001 " with a fragment (campaign 16, issue 32).
            f'<tr><td><a href="{html.escape(quote(p.name))}.html">{html.escape(p.name)}</a></td>'
            f"<td>{html.escape(p.title)}</td><td>{mode}</td><td>{html.escape(main)}</td>"
            f"<td>{len(p.claims)}</td><td>{status}</td></tr>"
        )
    table = _wide(
        "<table><tr><th>reproduction</th><th>paper</th><th>mode</th>"
        "<th>the paper's main result</th><th>claims</th><th>our verdicts</th></tr>"
        + "".join(rows)
        + "</table>"
        if rows
        else "<p>No reproduction yet: run <code>ccsim reproduce p001</code>.</p>"
    )
    body = (
        "<h1>ccsim: reproduced papers</h1><p>Each page shows a paper's figures as we "
        "reproduced them (interactive), its claims with our verdict and why, the setup, every "
        "assumption and the command that re-runs it. Built by <code>ccsim report</code> from "
        "the reports in the results folder.</p>" + table
    )
    return _page("ccsim: reproduced papers", body, plotly=False)
