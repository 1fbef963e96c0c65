# SPDX-License-Identifier: MIT
"""The site's interactive figures (Plotly): a figure's points with their CIs and the paper's
values, a grid table with hover text on every cell, and the time-series figures drawn from the
reproduction's run store."""

from __future__ import annotations

import html
import math
import os
import textwrap
import threading
from pathlib import Path
from typing import Any

#: Plotly writes a figure's JSON with orjson when that package is importable ("auto") and with
#: the standard library's json otherwise, and the two differ in bytes (``1e-07`` or ``1e-7``,
#: Hangul escaped or not): a site built from the same results would then depend on what else is
#: installed (CI's Python has orjson; campaign 43's matrix saw m01-quick.html change when it was
#: removed mid-report). The site always uses json; the engine is Plotly's one global setting,
#: so it is switched under a lock and put back for the caller's own figures.
_PLOTLY_ENGINE_LOCK = threading.Lock()


def figure_html(fig: Any, div_id: str, expected: int, kind: str) -> str:
    """A figure's div; ``data-kind`` (``points``, or the time-series kind: ``flow_series``,
    ``link_series``, ``packet_trace``, ``atm_window``) and ``data-count`` (markers drawn for
    points, traces for a time series) let a test check what the browser drew against the
    data. Its bytes depend on the figure only, not on whether orjson is installed."""
    from plotly.io import json as plotly_json

    with _PLOTLY_ENGINE_LOCK:
        engine = plotly_json.config.default_engine
        plotly_json.config.default_engine = "json"
        try:
            body = fig.to_html(
                full_html=False,
                include_plotlyjs=False,
                div_id=div_id,
                # Plotly.js 4 puts a "Share chart..." button on every figure, which sends
                # the figure's data to cloud.plotly.com: a site that links nothing outside
                # itself, of a researcher's unpublished results, keeps it off (stop 61).
                config={"displaylogo": False, "responsive": True, "showSendToCloud": False},
            )
        finally:
            plotly_json.config.default_engine = engine
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
    """A time-series figure drawn as what its kind says (:data:`SERIES_KINDS`), and how many
    traces it draws; from the runs in the reproduction's store that its PNG was drawn from
    (seed 1; a packet trace's own ``seed``), or None when the store lacks them. A kind no
    drawer knows is a ValueError, never another kind's figure."""
    from ccsim.experiment.figures import check_series_kind

    check_series_kind(sf)
    recs = _series_records(sf, plan, folder, quick)
    if not recs:
        return None
    lines = [lid for lid in sf.lines if lid in recs]
    draw = {
        "flow_series": _flow_series,
        "link_series": _link_series,
        "packet_trace": _packet_trace,
        "atm_window": _atm_window,
    }[sf.kind]
    return draw(sf, plan, recs, lines)


def series_run_keys(sf: Any, plan: Any, quick: bool) -> list[tuple[str, str]]:
    """(line, store key) of each run a time-series figure is drawn from (seed 1; a packet
    trace's own ``seed``), in the plan's order."""
    from ccsim.experiment.runs import plan_runs

    keys = []
    for r in plan_runs(plan, quick, 1):
        tags = dict(r.tags)
        if tags["figure"] == sf.id and r.seed == sf.seed:
            keys.append((str(tags["line"]), r.key()))
    return keys


def _series_records(sf: Any, plan: Any, folder: Path, quick: bool) -> dict[str, dict[str, Any]]:
    """The stored run of each of the figure's lines, by line id (those the store has)."""
    from ccsim.sweep import Store

    runs = folder / "runs"
    if not runs.is_dir():
        if os.path.lexists(runs):  # a file, a FIFO: a damaged store, not results without one
            _store_damaged(runs)
        return {}
    store = Store(runs)
    recs: dict[str, dict[str, Any]] = {}
    for line, key in series_run_keys(sf, plan, quick):
        # A report runs nothing: the figure goes without the run (or stays its PNG).
        rec = store.load_valid(
            key, then="its figure is drawn without this run (reproducing runs it again)"
        )
        if rec is not None:
            recs[line] = rec
    return recs


def _store_damaged(runs: Path) -> None:
    """Warn (a ``CorruptRecordWarning``, as for a damaged record) that ``runs`` is there but
    no folder: taken for results stored without their runs, the figure went static without a
    word."""
    import warnings

    from ccsim.scenario import file_kind
    from ccsim.sweep import CorruptRecordWarning

    try:
        kind = file_kind(os.stat(runs).st_mode)
    except OSError as e:  # a dangling link
        kind = f"cannot be read ({e.strerror or e})"
    warnings.warn(f"{runs}: {kind}, not a folder of run records; the figures drawn from runs "
                  "stay static images", CorruptRecordWarning, stacklevel=3)  # fmt: skip


def _layout(out: Any, sf: Any, height: int, subtitle: str = "") -> None:
    """The title (wrapped: Plotly does not wrap one), a subtitle under it, and the margins (room
    for the first panel's own title under it)."""
    title = "<br>".join(textwrap.wrap(f"{sf.id}: {sf.title}", width=90))
    if subtitle:
        title += f"<br><sup>{html.escape(subtitle)}</sup>"
    out.update_layout(
        title=title,
        template="plotly_white",
        height=height,
        margin={"t": 90 + 20 * title.count("<br>"), "l": 60, "r": 20, "b": 50},
    )


def _stacked(plan: Any, lines: list[str], secondary_y: bool = False) -> Any:
    """A panel per line, one above the other on one shared time axis (as the PNG)."""
    from plotly.subplots import make_subplots

    specs = [[{"secondary_y": secondary_y}] for _ in lines]
    return make_subplots(rows=len(lines), cols=1, shared_xaxes=True, specs=specs,
                         subplot_titles=[plan.lines[lid].label for lid in lines],
                         vertical_spacing=0.25 / len(lines))  # fmt: skip


def _flow_series(
    sf: Any, plan: Any, recs: dict[str, dict[str, Any]], lines: list[str]
) -> tuple[Any, int]:
    """Each flow's share of the link (or goodput) over time, a panel per line, as the PNG; a
    flow keeps its colour and legend entry across panels (clicking it hides that flow in every
    panel)."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    from ccsim.experiment.tables import flow_series_values

    count = 0
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
    _layout(out, sf, max(460, 230 * rows + 120), what)
    return out, count


def _link_series(
    sf: Any, plan: Any, recs: dict[str, dict[str, Any]], lines: list[str]
) -> tuple[Any, int]:
    """The link's utilization over time, a curve per line, as the PNG."""
    import plotly.graph_objects as go

    from ccsim.experiment.tables import link_capacity, link_rate

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
    out.update_layout(xaxis_title="time (s)", yaxis_title=f"utilization of {sf.link_name()}")
    _layout(out, sf, 460)
    return out, len(lines)


#: Plotly's marker for each matplotlib marker of ccsim.experiment.figures.PACKET_TRACE_STYLE.
_SYMBOLS = {"o": "circle", "^": "triangle-up", "x": "x"}


def _packet_trace(
    sf: Any, plan: Any, recs: dict[str, dict[str, Any]], lines: list[str]
) -> tuple[Any, int]:
    """Sequence number against time, a panel per line on one time axis, as the PNG: the
    flow's data departures on the link (first transmissions and retransmissions apart), its
    data dropped, and the cumulative ACK number its sender receives; each panel's y axis in
    its flow's unit (TCP bytes, SCTP TSNs)."""
    import plotly.graph_objects as go

    from ccsim.experiment.figures import (
        PACKET_TRACE_STYLE,
        packet_trace_points,
        sequence_axis_label,
    )

    out = _stacked(plan, lines)
    flow, count = sf.flows[0], 0
    for k, lid in enumerate(lines):
        rec = recs[lid]
        pts = packet_trace_points(rec, flow, sf.link)
        unit = sequence_axis_label(rec, flow)
        line = html.escape(plan.lines[lid].label)
        for what, (label, colour, marker) in PACKET_TRACE_STYLE.items():
            name = label.format(link=sf.link_name())
            d = pts[what]
            style: dict[str, Any] = (
                {"mode": "lines", "line": {"color": colour, "width": 1, "shape": "hv"}}
                if what == "acked"
                else {"mode": "markers",
                      "marker": {"color": colour, "symbol": _SYMBOLS[marker],
                                 "size": 9 if what == "dropped" else 5}}
            )  # fmt: skip
            out.add_trace(
                go.Scatter(
                    x=[float(v) for v in d["time_s"]],
                    y=[int(v) for v in d["seq"]],
                    name=name,
                    legendgroup=what,
                    showlegend=k == 0,
                    hovertemplate=f"{line}: {html.escape(name)}<br>t %{{x:.4f}} s<br>"
                    f"{html.escape(unit)} %{{y}}<extra></extra>",
                    **style,
                ),
                row=k + 1,
                col=1,
            )
            count += 1
        out.update_yaxes(title_text=unit, row=k + 1, col=1)
    out.update_xaxes(title_text="time (s)", row=len(lines), col=1)
    _layout(out, sf, max(460, 260 * len(lines) + 120))
    return out, count


def _atm_window(
    sf: Any, plan: Any, recs: dict[str, dict[str, Any]], lines: list[str]
) -> tuple[Any, int]:
    """Paper 000's Figs. 2 and 3, as the PNG: a panel per line, the first flow's cwnd (kB,
    left axis) and its ABR VC's ACR and latest ER (Mbit/s, right axis) over time."""
    import plotly.graph_objects as go

    from ccsim.experiment.figures import atm_window_series

    out = _stacked(plan, lines, secondary_y=True)
    flow, count = (sf.flows[0] if sf.flows else "f1"), 0
    curves = [  # (series, legend, colour, dash, scale, right axis)
        ("cwnd", f"{flow} cwnd (kB)", "#1f77b4", "solid", 1e3, False),
        ("acr", "ACR (Mbit/s)", "#2ca02c", "solid", 1e6, True),
        ("er", "ER, latest BRM (Mbit/s)", "#d62728", "dash", 1e6, True),
    ]
    for k, lid in enumerate(lines):
        ser = atm_window_series(recs[lid], flow)
        line = html.escape(plan.lines[lid].label)
        for what, name, colour, dash, scale, right in curves:
            s = ser[what]
            out.add_trace(
                go.Scatter(
                    x=[float(v) for v in s.index],
                    y=[float(v) / scale for v in s.to_numpy()],
                    mode="lines",
                    name=name,
                    legendgroup=what,
                    showlegend=k == 0,
                    line={"color": colour, "width": 1, "dash": dash, "shape": "hv"},
                    hovertemplate=f"{line}: {html.escape(name)}<br>t %{{x:.4f}} s<br>"
                    "%{y:.4g}<extra></extra>",
                ),
                row=k + 1,
                col=1,
                secondary_y=right,
            )
            count += 1
        out.update_yaxes(title_text="cwnd (kB)", row=k + 1, col=1, secondary_y=False)
        out.update_yaxes(title_text="Mbit/s", row=k + 1, col=1, secondary_y=True)
    out.update_xaxes(title_text="time (s)", row=len(lines), col=1)
    _layout(out, sf, max(460, 280 * len(lines) + 120))
    return out, count
