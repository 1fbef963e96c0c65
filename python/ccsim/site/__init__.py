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
"""

from __future__ import annotations

import html
import json
import math
import os
import re
import textwrap
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

__all__ = ["DamagedResults", "PaperPage", "SiteWarning", "build_site",
           "read_report"]  # fmt: skip

#: A figure reference as report.md writes it, alone on its line: ``![fig8](fig8.png)``.
_IMAGE = re.compile(r"^!\[([^\]]+)\]\(([^)\s]+)\.png\)\s*$")
#: The verdict scale of every claim (ccsim.experiment.verdicts), read back from report.md.
_VERDICTS = ("contradicted", "partly holds", "does not hold", "holds", "not judged")
#: A paragraph of report.md's "The paper's main result": its verdict in bold first.
_HEADLINE = re.compile(
    r"^\*\*(Reproduced|Partly reproduced|Not reproduced|Contradicted|Not judged)\.\*\* "
)
#: A section heading of report.md: ``## table1_wan: Table 1 ...``; a grid table's section has
#: its table replaced by the site's own (hover text on every cell).
_HEADING = re.compile(r"^## ([^:\s]+): ")


class DamagedResults(ValueError):
    """A file of one reproduction's results that cannot be read (bytes that are not UTF-8, a
    Parquet file cut short by a full disk or an interrupted copy); the message names it."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path


class SiteWarning(UserWarning):
    """What ``ccsim report`` could not put in the site: a reproduction left out (a damaged
    file, named), or one whose plan is not found (its figures stay static images). The other
    reproductions' pages are built."""


def _read_markdown(path: Path) -> str:
    """report.md's text; :class:`DamagedResults` naming it when it is not UTF-8."""
    data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise DamagedResults(
            path, f"not UTF-8 text (byte 0x{data[e.start]:02x} at offset {e.start})"
        ) from None


def _read_summary(path: Path) -> Any:
    """summary.parquet as a DataFrame (empty when the reproduction has none);
    :class:`DamagedResults` naming it when it is not a whole Parquet file."""
    import pandas as pd
    import pyarrow as pa

    if not path.exists():
        return pd.DataFrame()
    try:
        return pd.read_parquet(path)
    except (pa.ArrowException, ValueError) as e:
        raise DamagedResults(path, f"not a readable Parquet file ({e})") from None


@dataclass
class PaperPage:
    """What the index needs of one reproduction, read from its report.md."""

    folder: Path
    name: str  # the results folder's name: p001, p002-quick
    plan_id: str
    title: str
    quick: bool
    claims: list[tuple[str, str, str]] = field(default_factory=list)  # figure, paper, ours
    #: The verdict of each of the paper's main results, as report.md opens with them
    #: ("reproduced", "not reproduced", ...).
    headlines: list[str] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        out = dict.fromkeys(_VERDICTS, 0)
        out["other"] = 0
        for _, _, ours in self.claims:
            out[verdict_of(ours)] += 1
        return out


def verdict_of(text: str) -> str:
    """The verdict a claim's text in report.md starts with ("holds", "does not hold", ...)."""
    for v in _VERDICTS:
        if text.startswith(v):
            return v
    return "other"


def _cells(row: str) -> list[str]:
    """The cells of a Markdown table row, with report.md's escaped pipes put back."""
    parts = re.split(r"(?<!\\)\|", row.strip())[1:-1]
    return [p.strip().replace("\\|", "|") for p in parts]


def read_report(folder: Path) -> PaperPage:
    """The title, mode and claims of ``folder/report.md``."""
    text = _read_markdown(folder / "report.md")
    lines = text.splitlines()
    head = lines[0].lstrip("# ").strip() if lines else folder.name
    plan_id, _, title = head.partition(": ")
    page = PaperPage(folder, folder.name, plan_id, title or head, "Mode: quick" in text)
    in_claims = in_main = False
    for ln in lines:
        if ln.startswith("## "):
            in_claims = ln.startswith("## The paper's findings")
            in_main = ln.startswith("## The paper's main result")
            continue
        head = _HEADLINE.match(ln) if in_main else None
        if head is not None:
            page.headlines.append(head.group(1).lower())
        if in_claims and ln.startswith("|") and not ln.startswith("|---"):
            cells = _cells(ln)
            if len(cells) == 3 and cells[:2] != ["figure", "the paper says"]:
                page.claims.append((cells[0], cells[1], cells[2]))
    return page


def find_reports(results: Path) -> list[Path]:
    """Every reproduction under ``results`` (a folder holding a report.md), sorted by name;
    ``results`` itself when it is one reproduction's folder."""
    if (Path(results) / "report.md").is_file():
        return [Path(results)]
    return sorted(p.parent for p in Path(results).glob("*/report.md"))


# ---------------------------------------------------------------------------------------------
# Figures


def _plan_for(page: PaperPage, root: Path | None = None) -> tuple[Any, str | None]:
    """The plan a reproduction ran (for labels and the run store's keys) and, when there is
    none, why: its figures are then shown as their PNGs.

    Read from the copy ``ccsim reproduce`` stores with the results (``<reproduction>/plan/``),
    so the site does not depend on the working directory; a damaged copy is
    :class:`DamagedResults`. Results written before the plan was stored fall back to
    ``root/experiments`` (default: the working directory's)."""
    from ccsim.errors import Error
    from ccsim.experiment.plan import PlanError, find_experiment, load_plan
    from ccsim.experiment.reproduction import PLAN_FOLDER

    stored = page.folder / PLAN_FOLDER
    if (stored / "plan.toml").is_file():
        try:
            return load_plan(stored), None
        except (PlanError, Error, OSError) as e:
            raise DamagedResults(
                stored / "plan.toml", f"the plan stored with the results cannot be read ({e})"
            ) from None
    try:
        return load_plan(find_experiment(page.plan_id, root)), None
    except (PlanError, Error, OSError):
        return None, (
            f"{page.name}: no plan stored with the results ({stored / 'plan.toml'}) nor an "
            f"experiments/{page.plan_id}* folder here, so its figures are static images; "
            f"`ccsim reproduce {page.plan_id}` again stores the plan"
        )


def _fig_html(fig: Any, div_id: str, expected: int, kind: str) -> str:
    """A figure's div; ``data-kind`` (points, series) and ``data-count`` (markers drawn for
    points, lines for series) let a test check what the browser drew against the data."""
    body = fig.to_html(
        full_html=False,
        include_plotlyjs=False,
        div_id=div_id,
        config={"displaylogo": False, "responsive": True},
    )
    return (
        f'<div class="figure" data-figure="{html.escape(div_id)}" '
        f'data-kind="{kind}" data-count="{expected}">{body}</div>'
    )


#: Plotly's default colours, given explicitly so that a line's paper markers share its colour.
PALETTE = ["#636efa", "#ef553b", "#00cc96", "#ab63fa", "#ffa15a", "#19d3f3", "#ff6692",
           "#b6e880", "#ff97ff", "#fecb52"]  # fmt: skip


def point_figure(fig: Any, plan: Any, summary: Any) -> tuple[Any, int]:
    """A figure's points (mean and 95 % CI per line and x, as summary.parquet holds them) as a
    Plotly figure, and how many markers it draws: ours, and the paper's as hollow markers of
    the line's colour (hover: the paper's value and its source) where the plan gives them."""
    import plotly.graph_objects as go

    from ccsim.experiment.figures import paper_points
    from ccsim.experiment.plan import x_number

    s = summary[summary["figure"] == fig.id]
    out = go.Figure()
    count = 0
    for k, lid in enumerate(fig.lines):
        colour = PALETTE[k % len(PALETTE)]
        label = plan.lines[lid].label if lid in plan.lines else lid
        px, py = paper_points(fig, lid)
        if px:
            source = html.escape(fig.paper.source)
            out.add_trace(
                go.Scatter(
                    x=px,
                    y=py,
                    mode="markers",
                    name=f"{label}: paper",
                    legendgroup=lid,
                    marker={
                        "symbol": "circle-open",
                        "size": 11,
                        "color": colour,
                        "line": {"width": 2},
                    },
                    hovertemplate=(
                        f"{html.escape(label)}: the paper<br>{html.escape(fig.x_label)} %{{x}}"
                        f"<br>{html.escape(fig.metric.label)} %{{y:.4g}} ({source})"
                        "<extra></extra>"
                    ),
                )
            )
            count += len(px)
        d = s[s["line"] == lid].copy()
        if d.empty:
            continue
        # An x with a unit ("10Mbps") is plotted by its number, as the PNG does.
        d["xv"] = [x_number(x) * fig.x_scale for x in d["x"]]
        d = d.sort_values("xv")
        ci = [0.0 if math.isnan(c) else float(c) for c in d["ci95"]]
        out.add_trace(
            go.Scatter(
                x=list(d["xv"]),
                y=[float(m) for m in d["mean"]],
                error_y={"type": "data", "array": ci, "visible": True},
                mode="lines+markers",
                name=label,
                legendgroup=lid,
                line={"color": colour},
                customdata=[[c, int(n)] for c, n in zip(ci, d["n"])],
                hovertemplate=(
                    f"{html.escape(label)}<br>{html.escape(fig.x_label)} %{{x}}<br>"
                    f"{html.escape(fig.metric.label)} %{{y:.4g}} ± %{{customdata[0]:.3g}}"
                    " (95 % CI, n = %{customdata[1]})<extra></extra>"
                ),
            )
        )
        count += len(d)
    # Plotly neither wraps a title nor avoids SI ticks ("554.2405k" for one point at 554,241):
    # the title is broken into lines, and x ticks are written in plain numbers (d3's "~g").
    title = "<br>".join(textwrap.wrap(f"{fig.id}: {fig.title}", width=90))
    out.update_layout(
        title=title,
        xaxis_tickformat="~g",
        xaxis_title=fig.x_label,
        yaxis_title=fig.metric.label,
        yaxis_type=fig.y_scale,
        template="plotly_white",
        height=460,
        margin={"t": 60 + 20 * title.count("<br>"), "l": 60, "r": 20, "b": 50},
    )
    return out, count


def grid_table_html(grid: Any, plan: Any, summary: Any) -> str:
    """A grid table as HTML: a cell per line, row and metric holding "ours / paper" (the same
    text as report.md's), its title (the hover text) saying both values, our CI and seeds, the
    paper's source and whether they match; ``data-ours`` and ``data-paper`` for tests."""
    from ccsim.experiment.paper import NO_NUMBER_TEXT, fmt
    from ccsim.experiment.report import grid_rows

    head = "".join(f"<th>{html.escape(plan.lines[ln].label)}</th>" for ln in grid.lines)
    rows = []
    for row, m, cells in grid_rows(grid, summary):
        tds = []
        for c in cells:
            ours = "no run" if not c.n else (
                f"ours {fmt(c.mean)}" + (f" ± {c.ci95:.2g} (95 % CI, {c.n} seeds)" if c.n >= 2
                                         else " (one run)"))  # fmt: skip
            if c.paper is None or c.pv is None:
                title = f"{ours}; {NO_NUMBER_TEXT}"
            else:
                title = (f"{ours}; paper {fmt(c.paper)} ({c.pv.source}); "
                         f"{'matches' if c.matches else 'differs'} (tolerance "
                         f"{c.pv.describe_tolerance()})")  # fmt: skip
            tds.append(
                f'<td class="grid-cell" title="{html.escape(title)}" '
                f'data-ours="{"" if not c.n else repr(c.mean)}" '
                f'data-paper="{"" if c.paper is None else repr(c.paper)}">'
                f"{html.escape(c.text)}</td>"
            )
        rows.append(f"<tr><td>{html.escape(row.label)}</td><td>{html.escape(m.label)}</td>"
                    + "".join(tds) + "</tr>")  # fmt: skip
    return (f'<table class="grid" data-grid="{html.escape(grid.id)}"><tr><th>row</th>'
            f"<th>metric</th>{head}</tr>" + "".join(rows) + "</table>")  # fmt: skip


def series_figure(sf: Any, plan: Any, folder: Path, quick: bool) -> tuple[Any, int] | None:
    """A time-series figure from the first seed's runs in the reproduction's store (the runs
    its PNG was drawn from), or None when the store lacks them."""
    if sf.kind == "atm_window":
        return None  # paper 000's cwnd/ACR/ER panels: shown as their PNG (experiment/figures.py)
    import plotly.graph_objects as go

    from ccsim.experiment.runs import plan_runs
    from ccsim.experiment.tables import flow_series_values, link_capacity, link_rate
    from ccsim.sweep import Store

    store = Store(folder / "runs") if (folder / "runs").is_dir() else None
    if store is None:
        return None
    recs: dict[str, dict[str, Any]] = {}
    for r in plan_runs(plan, quick, 1):
        tags = dict(r.tags)
        if tags["figure"] == sf.id and r.seed == 1:
            rec = store.load_valid(r.key())
            if rec is not None:
                recs[tags["line"]] = rec
    if not recs:
        return None
    count = 0
    lines = [lid for lid in sf.lines if lid in recs]
    if sf.kind == "flow_series":
        # A panel per line, as the PNG; a flow keeps its colour and legend entry across panels
        # (clicking it hides that flow in every panel).
        from plotly.subplots import make_subplots

        cols = 2 if len(lines) > 1 else 1
        rows = (len(lines) + cols - 1) // cols
        out = make_subplots(rows=rows, cols=cols, shared_xaxes=True, shared_yaxes=True,
                            subplot_titles=[plan.lines[lid].label for lid in lines],
                            vertical_spacing=0.3 / rows)  # fmt: skip
        palette = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"]
        what = "share of the bottleneck"
        for k, lid in enumerate(lines):
            rec = recs[lid]
            values, what = flow_series_values(rec, sf.flows, sf.link)
            label = plan.lines[lid].label
            for j, flow in enumerate(sf.flows):
                out.add_trace(
                    go.Scatter(
                        x=list(values.index),
                        y=values[flow].tolist(),
                        mode="lines",
                        name=flow,
                        legendgroup=flow,
                        showlegend=k == 0,
                        line={"color": palette[j % len(palette)], "width": 1.2},
                        hovertemplate=f"{html.escape(label)}, {flow}<br>t %{{x:.3g}} s<br>"
                        f"{what} %{{y:.3f}}<extra></extra>",
                    ),
                    row=k // cols + 1,
                    col=k % cols + 1,
                )
                count += 1
        if sf.link:
            out.update_yaxes(range=[0, 1.1])
        for c in range(1, cols + 1):
            out.update_xaxes(title_text="time (s)", row=rows, col=c)
        height = max(460, 230 * rows + 120)
    else:
        out = go.Figure()
        for lid in lines:
            rec = recs[lid]
            u = link_rate(rec, sf.link) / link_capacity(rec, sf.link)
            label = plan.lines[lid].label
            out.add_trace(
                go.Scatter(
                    x=list(u.index),
                    y=u.tolist(),
                    mode="lines",
                    name=label,
                    hovertemplate=f"{html.escape(label)}<br>t %{{x:.3g}} s<br>"
                    "utilization %{y:.3f}<extra></extra>",
                )
            )
            count += 1
        height = 460
        what = f"utilization of {sf.link}"
        out.update_layout(xaxis_title="time (s)", yaxis_title=what)
    out.update_layout(
        title=f"{sf.id}: {sf.title}"
        + (f"<br><sup>{what}</sup>" if sf.kind == "flow_series" else ""),
        template="plotly_white",
        height=height,
        margin={"t": 80, "l": 60, "r": 20, "b": 50},
    )
    return out, count


# ---------------------------------------------------------------------------------------------
# Pages

_STYLE = """
body { font-family: system-ui, sans-serif; max-width: 70rem; margin: 1rem auto; padding: 0 1rem;
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
"""


def _page(title: str, body: str, plotly: bool) -> str:
    script = '<script src="plotly.min.js" charset="utf-8"></script>\n' if plotly else ""
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title>\n<style>{_STYLE}</style>\n{script}</head>\n"
        f"<body>\n{body}\n</body></html>\n"
    )


def _markdown(text: str) -> str:
    from markdown_it import MarkdownIt

    return str(MarkdownIt("commonmark", {"html": False}).enable("table").render(text))


def _mark_verdicts(rendered: str) -> str:
    """Colour each claim's verdict (the words a cell starts with)."""

    def mark(m: re.Match[str]) -> str:
        v = m.group(1)
        return f'<td><span class="verdict-{v.replace(" ", "-")}">{v}</span>'

    return re.sub(r"<td>(" + "|".join(_VERDICTS) + r")(?=:)", mark, rendered)


def paper_page(page: PaperPage, plan: Any) -> tuple[str, int, list[str]]:
    """The HTML of one reproduction's page, how many figures it draws interactively, and the
    files of the reproduction it links (its figures' PNG and SVG), which the site copies into
    ``<site>/<page.name>/`` so that the site stands alone."""
    summary = _read_summary(page.folder / "summary.parquet")
    figures: dict[str, str] = {}
    if plan is not None:
        for fig in plan.figures:
            if len(summary):
                f, n = point_figure(fig, plan, summary)
                if n:
                    figures[fig.id] = _fig_html(f, fig.id, n, "points")
        for sf in plan.series_figures:
            drawn = series_figure(sf, plan, page.folder, page.quick)
            if drawn is not None:
                figures[sf.id] = _fig_html(drawn[0], sf.id, drawn[1], "series")
    grids = {g.id: g for g in plan.grids} if plan is not None else {}
    text = _read_markdown(page.folder / "report.md")
    chunks: list[str] = []
    pending: list[str] = []
    base = html.escape(quote(page.name))
    linked: list[str] = []
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
            chunks.append(_mark_verdicts(_markdown("\n".join(pending))))
            pending = []
            chunks.append(grid_table_html(grids[grid_section], plan, summary))
            grid_section, in_grid = None, True
            continue
        m = _IMAGE.match(ln)
        if m is None:
            pending.append(ln)
            continue
        chunks.append(_mark_verdicts(_markdown("\n".join(pending))))
        pending = []
        fid, stem = m.group(1), m.group(2)
        # Only files that exist are linked (and copied): a figure never drawn leaves no
        # broken link.
        found = [f"{stem}.{x}" for x in ("png", "svg") if (page.folder / f"{stem}.{x}").is_file()]
        linked += found
        links = " · ".join(
            f'<a href="{base}/{html.escape(quote(f))}">{f.rsplit(".", 1)[1].upper()}</a>'
            for f in found
        )
        files = f'<p class="files">Static figure: {links}</p>' if found else ""
        if fid in figures:
            chunks.append(figures[fid] + files)
        elif f"{stem}.png" in found:
            img = f'<img src="{base}/{html.escape(quote(stem))}.png" alt="{html.escape(fid)}">'
            chunks.append(f"<p>{img}</p>" + files)
        else:
            chunks.append(f"<p>({html.escape(fid)}: no figure was drawn)</p>")
    chunks.append(_mark_verdicts(_markdown("\n".join(pending))))
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
            f'<tr><td><a href="{html.escape(p.name)}.html">{html.escape(p.name)}</a></td>'
            f"<td>{html.escape(p.title)}</td><td>{mode}</td><td>{html.escape(main)}</td>"
            f"<td>{len(p.claims)}</td><td>{status}</td></tr>"
        )
    table = (
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
    summary.parquet cut short) is left out with one message naming the file, given to ``warn``
    (default: a :class:`SiteWarning`); the others are built. The page a
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
            page = read_report(folder)
            plan, missing = _plan_for(page, root)
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
