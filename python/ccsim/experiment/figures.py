# SPDX-License-Identifier: MIT
"""Figures as PNG and SVG: points with their CIs, and time series."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pandas as pd

from ccsim.fonts import (
    configure_matplotlib,
    has_cjk,
    matplotlib_cjk_family,
    missing_glyphs_said_once,
)
from ccsim.scenario import PathLike

from .arguments import PATH, arguments, of
from .plan import SERIES_KINDS, Figure, Plan, SeriesFigure, x_number
from .tables import flow_series_values, link_capacity, link_rate


def _pyplot() -> Any:
    """matplotlib's pyplot, headless, writing the same SVG bytes for the same figure (without a
    fixed salt its SVG element ids are random, so two reproductions would differ), and drawing
    Hangul with a CJK font when the system has one (ccsim.fonts).

    In matplotlib's own style, not the user's matplotlibrc: a paper author's ``text.usetex:
    True`` without LaTeX failed every reproduction after its runs ("Failed to process string
    with tex because latex could not be found", naming no file), and ``savefig.dpi: 2000``
    wrote PNGs 25 times the size, a reproduction's figures differing with the machine's
    settings (campaign 39, issue 32)."""
    import matplotlib

    matplotlib.use("Agg")
    matplotlib.rcdefaults()  # the backend stays: rcdefaults leaves it as it is
    matplotlib.rcParams["svg.hashsalt"] = "ccsim"
    configure_matplotlib(matplotlib.rcParams)
    import matplotlib.pyplot as plt

    return plt


#: The manifest of a reproduction's figures (ccsim.experiment.drawn): what each PNG and SVG
#: was drawn from, so that a re-run draws only the figures whose inputs changed.
FIGURES_MANIFEST = "figures.json"


def figure_inputs(*parts: Any) -> str | None:
    """The hash of what a figure is drawn from (:func:`ccsim.experiment.drawn.inputs_digest`),
    with the CJK font matplotlib draws its Hangul with when its text has any (a font installed
    since changes the figure); None, "draw it every time", when its Hangul has no font: those
    figures are drawn as boxes, and every reproduction says so (ccsim.fonts)."""
    from .drawn import inputs_digest

    if has_cjk(repr(parts)):
        family = matplotlib_cjk_family()
        if family is None:
            return None
        parts = (*parts, family)
    return inputs_digest(*parts)


def _wrap(title: str, width_in: float) -> str:
    """``title`` broken into lines that fit a figure ``width_in`` inches wide at 10 points
    (about 11 characters per inch), so that no title is cut off at the figure's edge."""
    return textwrap.fill(title, width=max(30, int(width_in * 11)))


def _save(plt: Any, f: Any, out: PathLike, name: str) -> list[Path]:
    """Write figure ``f`` as ``name``.png and .svg (the SVG without a date, so it is the same
    bytes every time) into ``out`` (a str or a Path) and close it."""
    from ccsim.result import naming_the_file

    paths = [Path(out) / f"{name}.png", Path(out) / f"{name}.svg"]
    try:
        for p in paths:
            with naming_the_file(p):  # a write's error names no file (campaign 53, issue 32)
                f.savefig(p, metadata={"Date": None} if p.suffix == ".svg" else None)
    finally:
        # Closed when a save fails too (a full disk): pyplot keeps every figure open until it
        # is closed, so each failed reproduction in one process (a notebook, the explorer)
        # kept its figure, and after 20 of them the next reproduction failed on matplotlib's
        # "More than 20 figures have been opened" (campaign 28, issue 32).
        plt.close(f)
    return paths


@arguments(
    fig=of(SeriesFigure),
    plan=of(Plan),
    recs=of(dict, "a dict of run records by line"),
    out=PATH,
)
def draw_series_figure(
    fig: SeriesFigure, plan: Plan, recs: dict[str, dict[str, Any]], out: PathLike
) -> list[Path]:
    """A time-series figure's PNG and SVG (Korean text without a CJK font: said once)."""
    with missing_glyphs_said_once():
        return _draw_series_figure(fig, plan, recs, out)


def _draw_series_figure(
    fig: SeriesFigure, plan: Plan, recs: dict[str, dict[str, Any]], out: PathLike
) -> list[Path]:
    plt = _pyplot()

    if fig.kind == "packet_trace":
        return _save(plt, packet_trace_axes(fig, plan, recs)[0], out, fig.id)
    if fig.kind == "atm_window":
        return _draw_atm_window(plt, fig, plan, recs, out)
    check_series_kind(fig)
    if fig.kind == "flow_series":
        n = len(fig.lines)
        cols = 2 if n > 1 else 1
        rows = (n + cols - 1) // cols
        f, axes = plt.subplots(rows, cols, figsize=(6.4 * cols / 1.3, 2.6 * rows), dpi=120,
                               sharex=True, sharey=True, squeeze=False)  # fmt: skip
        what = "share of the bottleneck"
        for ax, lid in zip(axes.flat, fig.lines):
            rec = recs.get(lid)
            if rec is None:
                continue
            values, what = flow_series_values(rec, fig.flows, fig.link)
            for flow in fig.flows:
                ax.plot(values.index, values[flow], lw=0.9, label=flow)
            ax.set_title(plan.lines[lid].label, fontsize=9)
            ax.grid(alpha=0.3)
        for ax in axes.flat[n:]:
            ax.set_visible(False)
        axes.flat[0].legend(fontsize=7)
        f.supxlabel("time (s)")
        f.supylabel(what)
    else:  # link_series
        f, ax = plt.subplots(figsize=(6.4, 4.2), dpi=120)
        for lid in fig.lines:
            rec = recs.get(lid)
            if rec is None:
                continue
            u = link_rate(rec, fig.link) / link_capacity(rec, fig.link)
            ax.plot(u.index, u.to_numpy(), lw=0.9, label=plan.lines[lid].label)
        ax.set_xlabel("time (s)")
        ax.set_ylabel(f"utilization of {fig.link_name()}")
        ax.set_ylim(0, 1.05)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    f.suptitle(_wrap(f"{fig.id}: {fig.title}", f.get_figwidth()), fontsize=10)
    f.tight_layout()
    return _save(plt, f, out, fig.id)


def check_series_kind(fig: SeriesFigure) -> None:
    """Refuse a time-series figure of a kind no drawer knows (a plan's loader refuses it too; a
    figure built in code must not fall through to another kind's drawing)."""
    if fig.kind not in SERIES_KINDS:
        raise ValueError(
            f'figure {fig.id}: kind "{fig.kind}" is not one of {", ".join(SERIES_KINDS)}'
        )


@arguments(
    fig=of(Figure),
    plan=of(Plan),
    summary=of(pd.DataFrame, "a pandas DataFrame"),
    out=PATH,
)
def draw_figure(fig: Figure, plan: Plan, summary: pd.DataFrame, out: PathLike) -> list[Path]:
    """A figure of points' PNG and SVG (Korean text without a CJK font: said once)."""
    with missing_glyphs_said_once():
        plt = _pyplot()
        f, _ = point_axes(fig, plan, summary)
        return _save(plt, f, out, fig.id)


#: The legend entry of the crosses that mark points none of whose runs finished.
STALLED = "no run finished (cross at the top)"


def point_axes(fig: Figure, plan: Plan, summary: pd.DataFrame) -> tuple[Any, Any]:
    """A figure of points drawn (its matplotlib figure and axes, not yet saved): each line's
    means with their 95 % CIs, the paper's values as hollow markers, the legend under the
    axes."""
    plt = _pyplot()
    s = summary[summary["figure"] == fig.id]
    # The legend goes under the axes, where it covers no point, in one column of labels wrapped
    # to the figure's width (two columns when they are short); the figure grows by its rows.
    labels = {ln: _legend_label(plan.lines[ln].label) for ln in fig.lines}
    entries = [labels[ln] for ln in fig.lines]
    entries += [f"{labels[ln]}: paper" for ln in fig.lines if paper_points(fig, ln)[0]]
    if "unfinished" in s and (s["mean"].isna() & (s["unfinished"] > 0)).any():
        entries.append(STALLED)
    ncol = 2 if max(len(max(e.splitlines(), key=len)) for e in entries) <= 40 else 1
    rows = sum(e.count("\n") + 1 for e in entries) / ncol
    f, ax = plt.subplots(figsize=(6.4, 4.2 + 0.2 * rows), dpi=120)
    stalled_label = STALLED
    crosses: dict[float, int] = {}
    for lid in fig.lines:
        d = s[s["line"] == lid]
        if d.empty:
            continue
        d = d.iloc[sorted(range(len(d)), key=lambda i: x_number(d["x"].iloc[i]))]
        xs = [x_number(x) * fig.x_scale for x in d["x"]]
        bars = ax.errorbar(xs, d["mean"], yerr=d["ci95"].fillna(0), marker="o", capsize=3,
                           label=labels[lid])  # fmt: skip
        # A point none of whose runs finished has no mean; a cross at the top of the axes (x in
        # data, y in axes units) says so, in the line's colour, instead of a silent gap.
        # Several lines stalled at one x are stacked downwards, so each colour shows.
        if "unfinished" in d:
            stalled = [x for x, m, u in zip(xs, d["mean"], d["unfinished"]) if pd.isna(m) and u]
            for x in stalled:
                y = 0.96 - 0.06 * crosses.get(x, 0)
                crosses[x] = crosses.get(x, 0) + 1
                ax.plot([x], [y], "x", ms=8, mew=2, color=bars[0].get_color(),
                        transform=ax.get_xaxis_transform(), label=stalled_label)  # fmt: skip
                stalled_label = "_"  # one legend entry for every line's crosses
        px, py = paper_points(fig, lid)
        if px:
            colour = bars[0].get_color()
            ax.scatter(px, py, s=70, facecolors="none", edgecolors=colour, linewidths=1.5,
                       zorder=3, label=f"{labels[lid]}: paper")  # fmt: skip
    ax.set_xlabel(fig.x_label)
    ax.set_ylabel(fig.metric.label)
    ax.set_yscale(fig.y_scale)
    _ticks_at_points(ax, [x_number(x) * fig.x_scale for x in s["x"]])
    ax.set_title(_wrap(f"{fig.id}: {fig.title}", 6.4), fontsize=10)
    ax.grid(alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=7, ncol=ncol, loc="upper center", bbox_to_anchor=(0.5, -0.14))
    f.tight_layout()
    return f, ax


def _ticks_at_points(ax: Any, xs: list[float]) -> None:
    """x ticks at a figure's own x values, written short (``%g``: 554241, 0.05, 25), when they
    are few enough to read: no tick between two points (7.5 between 5 and 10) and no tick
    written as an offset or in engineering notation (554.2405k)."""
    points = sorted(set(xs))
    if not points or len(points) > 12 or ax.get_xscale() != "linear":
        return
    ax.set_xticks(points, [f"{x:g}" for x in points])


def _legend_label(label: str) -> str:
    """A line's label as a legend under a 6.4-inch figure shows it: wrapped at 90 characters
    (7-point type), so that no entry runs off the figure's edge."""
    return textwrap.fill(label, width=90)


def paper_points(fig: Figure, line: str) -> tuple[list[float], list[float]]:
    """Where the paper's values of ``line`` go on the figure (x in the axis' units), in the
    order of the figure's x values; none where the paper gives no number."""
    if fig.paper is None:
        return [], []
    xs, ys = [], []
    for x in fig.x_values:
        v = fig.paper.get(line, x)
        if v is not None:
            xs.append(x_number(x) * fig.x_scale)
            ys.append(v)
    return xs, ys


def packet_trace_points(rec: dict[str, Any], flow: str, link: str) -> dict[str, pd.DataFrame]:
    """What a ``packet_trace`` panel shows, from a run's ``packets`` table (times in seconds):
    ``sent``, the flow's data departures on ``link`` (first transmissions and retransmissions
    apart); ``dropped``, its data packets lost anywhere (queue, random loss, MTU, no route);
    ``acked``, the cumulative ACK numbers its sender was delivered."""
    p = pd.DataFrame(rec.get("packets", {}))
    empty = pd.DataFrame(columns=["time_s", "seq"])
    if p.empty:
        return {"sent": empty, "resent": empty, "dropped": empty, "acked": empty}
    p = p[p["flow"] == flow].assign(time_s=p["time_ns"] / 1e9)
    data = p[p["kind"] == "data"]
    sent = data[(data["where"] == link) & (data["event"] == "departed")]
    acks = p[(p["kind"] == "ack") & (p["event"] == "delivered")]
    return {
        "sent": sent[sent["retransmission"] == 0][["time_s", "seq"]],
        "resent": sent[sent["retransmission"] != 0][["time_s", "seq"]],
        "dropped": data[data["event"] == "dropped"][["time_s", "seq"]],
        "acked": acks.rename(columns={"seq": "_seq", "ack": "seq"})[["time_s", "seq"]],
    }


def sequence_axis_label(rec: dict[str, Any], flow: str) -> str:
    """The y axis of a packet-trace panel, in the flow's own unit: a TCP sequence number numbers
    bytes (RFC 9293 §3.4), an SCTP TSN numbers DATA chunks (RFC 4960 §1.3)."""
    flows = rec.get("flows", {})
    kinds = dict(zip(flows.get("name", []), flows.get("kind", [])))
    if str(kinds.get(flow, "")).startswith("sctp"):
        return "TSN (one per DATA chunk)"
    return "sequence number (bytes)"


#: What a packet-trace figure draws of :func:`packet_trace_points`, in the PNG and on the
#: site alike: each set's legend entry (``{link}``: the figure's link as its reader knows it),
#: colour and matplotlib marker.
PACKET_TRACE_STYLE = {
    "acked": ("ACK number the sender receives", "#2ca02c", ""),
    "sent": ("data sent on {link}", "#1f77b4", "o"),
    "resent": ("retransmission on {link}", "#ff7f0e", "^"),
    "dropped": ("data dropped", "#d62728", "x"),
}


def packet_trace_axes(
    fig: SeriesFigure, plan: Plan, recs: dict[str, dict[str, Any]]
) -> tuple[Any, Any]:
    """A packet-trace figure (its matplotlib figure and axes, not yet saved): sequence number
    against time, a panel per line on one time axis (so the lines' transfer times compare at a
    glance), each panel's y axis in its flow's unit."""
    plt = _pyplot()
    n = len(fig.lines)
    f, axes = plt.subplots(n, 1, figsize=(6.4, 2.4 * n), dpi=120, sharex=True, squeeze=False)
    flow = fig.flows[0]
    sizes = {"sent": 3, "resent": 10, "dropped": 30}
    for ax, lid in zip(axes.flat, fig.lines):
        ax.set_title(plan.lines[lid].label, fontsize=9)
        ax.grid(alpha=0.3)
        rec = recs.get(lid)
        if rec is None:
            continue
        pts = packet_trace_points(rec, flow, fig.link)
        for what, (label, colour, marker) in PACKET_TRACE_STYLE.items():
            label = label.format(link=fig.link_name())
            d = pts[what]
            if what == "acked":
                ax.plot(d["time_s"], d["seq"], lw=0.8, color=colour, drawstyle="steps-post",
                        label=label)  # fmt: skip
            else:
                ax.scatter(d["time_s"], d["seq"], s=sizes[what], marker=marker, color=colour,
                           label=label)  # fmt: skip
        ax.set_ylabel(sequence_axis_label(rec, flow), fontsize=8)
    axes.flat[0].legend(fontsize=7, loc="upper left")
    axes.flat[-1].set_xlabel("time (s)")
    f.suptitle(_wrap(f"{fig.id}: {fig.title}", f.get_figwidth()), fontsize=10)
    f.tight_layout()
    return f, axes


def atm_window_series(rec: dict[str, Any], flow: str) -> dict[str, pd.Series]:
    """What an ``atm_window`` panel shows (paper 000's Figs. 2 and 3), from a run's series:
    the flow's ``cwnd_bytes`` and the ``acr_bps`` and ``er_bps`` of its ABR VC, which the ATM
    layer names ``src>dst`` after the flow's end hosts. Series absent from the run are empty."""
    s = pd.DataFrame(rec.get("series", {}))
    fl = pd.DataFrame(rec["flows"])
    row = fl[fl["name"] == flow]
    vc = f"{row['src'].iloc[0]}>{row['dst'].iloc[0]}" if len(row) else ""

    def pick(kind: str, name: str, metric: str) -> pd.Series:
        if s.empty:
            return pd.Series(dtype=float)
        d = s[(s["kind"] == kind) & (s["name"] == name) & (s["metric"] == metric)]
        return pd.Series(d["value"].to_numpy(), index=d["time_s"].to_numpy(dtype=float))

    return {
        "cwnd": pick("flow", flow, "cwnd_bytes"),
        "acr": pick("vc", vc, "acr_bps"),
        "er": pick("vc", vc, "er_bps"),
    }


def _draw_atm_window(
    plt: Any, fig: SeriesFigure, plan: Plan, recs: dict[str, dict[str, Any]], out: PathLike
) -> list[Path]:
    """A panel per line: the first flow's cwnd (kB, left axis) and its VC's ACR and ER
    (Mbit/s, right axis) over time."""
    n = len(fig.lines)
    f, axes = plt.subplots(n, 1, figsize=(6.4, 2.8 * n), dpi=120, sharex=True, squeeze=False)
    flow = fig.flows[0] if fig.flows else "f1"
    for ax, lid in zip(axes.flat, fig.lines):
        rec = recs.get(lid)
        if rec is None:
            continue
        ser = atm_window_series(rec, flow)
        ax.step(ser["cwnd"].index, ser["cwnd"].to_numpy() / 1e3, where="post", lw=0.9,
                color="#1f77b4", label=f"{flow} cwnd")  # fmt: skip
        ax.set_ylabel("cwnd (kB)")
        right = ax.twinx()
        right.step(ser["acr"].index, ser["acr"].to_numpy() / 1e6, where="post", lw=0.8,
                   color="#2ca02c", label="ACR")  # fmt: skip
        right.step(ser["er"].index, ser["er"].to_numpy() / 1e6, where="post", lw=0.8,
                   color="#d62728", ls="--", label="ER (latest BRM)")  # fmt: skip
        right.set_ylabel("Mbit/s")
        ax.set_title(plan.lines[lid].label, fontsize=9)
        ax.grid(alpha=0.3)
        handles = ax.get_legend_handles_labels()[0] + right.get_legend_handles_labels()[0]
        ax.legend(handles=handles, fontsize=7, loc="upper right")
    axes.flat[-1].set_xlabel("time (s)")
    f.suptitle(_wrap(f"{fig.id}: {fig.title}", f.get_figwidth()), fontsize=10)
    f.tight_layout()
    return _save(plt, f, out, fig.id)
