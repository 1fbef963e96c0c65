# SPDX-License-Identifier: MIT
"""Summaries of time-series runs (paper 002's tables): each flow's rate, the link's, Jain's
index, convergence and stability, one row per run."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .arguments import NAMES, NONE, NUMBERS, RECORD, TEXT, arguments, of
from .plan import SummaryTable

if TYPE_CHECKING:
    from .plan import SummaryTable


def _series(rec: dict[str, Any]) -> pd.DataFrame:
    return pd.DataFrame(rec.get("series", {}))


@arguments(rec=RECORD, flows=NAMES, series=of(pd.DataFrame, "a pandas DataFrame") | NONE)
def flow_rates(
    rec: dict[str, Any], flows: Sequence[str], series: pd.DataFrame | None = None
) -> pd.DataFrame:
    """Each flow's goodput (bit/s) per trace interval, from its delivered-bytes series
    (``series``: the record's series table as a frame, if the caller has built it already)."""
    s = _series(rec) if series is None else series
    if s.empty:
        return pd.DataFrame(columns=list(flows), dtype=float)
    d = s[(s["kind"] == "flow") & (s["metric"] == "delivered_bytes") & s["name"].isin(flows)]
    p = d.pivot(index="time_s", columns="name", values="value").sort_index()
    p = p.reindex(columns=list(flows))
    times = p.index.to_numpy(dtype=float)
    dt = pd.Series(times).diff().fillna(times[0] if len(times) else 1.0).to_numpy()
    rates = p.diff()
    rates.iloc[0] = p.iloc[0]
    return rates.mul(8.0 / dt, axis=0)


def flow_series_values(
    rec: dict[str, Any], flows: Sequence[str], link: str
) -> tuple[pd.DataFrame, str]:
    """Each flow's goodput per trace interval as a ``flow_series`` figure draws it, and its
    axis label: a share of ``link``'s capacity, or Mbit/s when the figure names no link (a
    multipath transfer whose paths come and go has no one bottleneck to divide by)."""
    rates = flow_rates(rec, flows)
    if not link:
        return rates / 1e6, "goodput (Mbit/s)"
    return rates / link_capacity(rec, link), "share of the bottleneck"


@arguments(rec=RECORD, link=TEXT, links=of(pd.DataFrame, "a pandas DataFrame") | NONE)
def link_capacity(rec: dict[str, Any], link: str, links: pd.DataFrame | None = None) -> float:
    """The rate (bit/s) of ``link`` given as ``name:direction`` (``links``: the record's links
    table as a frame, if the caller has built it already)."""
    name, _, direction = link.partition(":")
    if links is None and not isinstance(rec.get("links"), Mapping):  # was KeyError: 'links'
        raise ValueError("rec: a run record without its links table")
    lk = pd.DataFrame(rec["links"]) if links is None else links
    row = lk[(lk["link"] == name) & (lk["direction"] == (direction or "a_to_b"))]
    return float(row["rate_bps"].iloc[0]) if len(row) else math.nan


@arguments(rec=RECORD, link=TEXT, series=of(pd.DataFrame, "a pandas DataFrame") | NONE)
def link_rate(rec: dict[str, Any], link: str, series: pd.DataFrame | None = None) -> pd.Series:
    """The throughput (bit/s) of ``name:direction`` per trace interval."""
    s = _series(rec) if series is None else series
    if s.empty:
        return pd.Series(dtype=float)
    d = s[(s["kind"] == "link") & (s["name"] == link) & (s["metric"] == "throughput_bps")]
    return pd.Series(d["value"].to_numpy(), index=d["time_s"].to_numpy(dtype=float))


@arguments(xs=NUMBERS)
def jain_index(xs: Sequence[float]) -> float:
    """Jain's fairness index: (sum x)^2 / (n sum x^2); 1 is a perfectly even split."""
    v = [float(x) for x in xs]
    sq = sum(x * x for x in v)
    return sum(v) ** 2 / (len(v) * sq) if v and sq > 0 else math.nan


def shares_text(shares: dict[str, float]) -> str:
    """Each flow's share of the tested goodput as a percentage: ``"f1 26 %, f2 20 %"``."""
    return ", ".join(f"{f} {100 * v:.0f} %" for f, v in shares.items() if not math.isnan(v))


def line_summary(per_seed: Sequence[dict[str, Any]], flows: Sequence[str],
                 distinct: int | None = None) -> dict[str, Any]:  # fmt: skip
    """One line of a summary table over its seeds, as reports and the explorer show it.

    Each numeric column of :func:`table_row`: its mean over the seeds where it is a number and
    ``<column>_ci95``, the half-width of the 95 % interval (NaN for one seed); ``n``, the
    seeds; ``converged``, how many of them converged (a run that never does has no
    convergence time, so the mean convergence is over the converged seeds only and the report
    says how many). ``shares`` is written from the mean shares, so it agrees with the
    ``share_<flow>`` columns instead of showing one seed's split. ``distinct``: how many of
    the runs differ (None: all); copies of one run have no interval (``_ci95`` NaN).
    """
    from .stats import deterministic, mean_ci

    same = deterministic(len(per_seed), len(per_seed) if distinct is None else distinct)
    out: dict[str, Any] = {}
    for col in per_seed[0]:
        if col == "shares":
            continue
        mean, half, _ = mean_ci([float(p[col]) for p in per_seed])
        out[col] = mean
        out[f"{col}_ci95"] = math.nan if same else half
    out["n"] = len(per_seed)
    out["distinct"] = len(per_seed) if distinct is None else distinct
    out["converged"] = sum(1 for p in per_seed if not math.isnan(float(p["convergence_s"])))
    out["shares"] = shares_text({f: out.get(f"share_{f}", math.nan) for f in flows})
    return out


def _std(rates: pd.Series) -> float:
    """The population standard deviation of ``rates`` (NaN skipped), in the arithmetic pandas
    uses without bottleneck: numpy's pairwise sums, NaN counted as absent but kept in place.

    ``Series.std`` hands the work to bottleneck whenever it is importable (Anaconda and many
    users' Pythons have it), and bottleneck sums in one naive pass: the last bits of paper
    002's ``rate_cv`` changed with what else was installed, so the same runs made other
    tables, reports and sites.
    """
    values = rates.to_numpy(dtype=float)
    absent = np.isnan(values)
    n = int(values.size - absent.sum())
    if n == 0:
        return math.nan
    values = np.where(absent, 0.0, values)
    mean = values.sum() / n
    squares = (mean - values) ** 2
    squares[absent] = 0.0
    return float(np.sqrt(squares.sum() / n))


@arguments(rec=RECORD, t=of(SummaryTable))
def table_row(rec: dict[str, Any], t: SummaryTable) -> dict[str, Any]:
    """The summary of one run: utilization, fairness, loss and convergence after ``from_s``.

    ``utilization`` is the link's (every packet, headers included); ``tested_utilization`` the
    goodput of ``flows`` (the flows under test) over the capacity; ``background_utilization``
    the difference (background traffic plus the tested flows' headers).

    Convergence time: smooth each flow's rate over ``window_s``; it is the time from ``from_s``
    until Jain's index of the smoothed rates stays at or above ``jain_threshold`` to the end of
    the run (NaN if it is below at the end).
    """
    # Each table built once (a cached reproduction of paper 002 spent most of its time outside
    # the simulator building these frames from the records, twice each; issue 33).
    series = _series(rec)
    if not isinstance(rec.get("links"), Mapping):  # was KeyError: 'links'
        raise ValueError("rec: a run record without its links table")
    lk = pd.DataFrame(rec["links"])
    rates = flow_rates(rec, t.flows, series)
    cap = link_capacity(rec, t.link, lk)
    after = rates[rates.index > t.from_s]
    totals = after.sum()
    link_u = link_rate(rec, t.link, series)
    util = float(link_u[link_u.index > t.from_s].mean() / cap) if len(link_u) else math.nan
    # The flows under test apart from the background (web and FTP flows): their goodput summed
    # over the trace samples after from_s, relative to the capacity. The link's utilization
    # counts every packet with its headers, so "background" (link minus tested) also holds the
    # tested flows' header bytes: about 3 % of their rate at a 1,460 B MSS.
    tested = float(after.sum(axis=1).mean() / cap) if len(after) else math.nan
    name, _, direction = t.link.partition(":")
    row = lk[(lk["link"] == name) & (lk["direction"] == (direction or "a_to_b"))].iloc[0]
    offered = float(row.get("packets_offered", row["packets"]))
    loss = float(row["drops_queue"] + row["drops_loss"]) / offered if offered else math.nan
    conv = math.nan
    if len(after) > 1:
        step = float(after.index[1] - after.index[0])
        k = max(1, round(t.window_s / step))
        smooth = after.rolling(window=k, min_periods=k).mean().dropna()
        # Row by row as plain floats (the same arithmetic as `apply`, without a Series a row).
        jt = pd.Series(
            [jain_index(r) for r in smooth.to_numpy(dtype=float).tolist()],
            index=smooth.index,
            dtype=float,
        )
        if len(jt) and jt.iloc[-1] >= t.jain_threshold:
            below = jt[jt < t.jain_threshold]
            start = jt.index[0] if below.empty else jt.index[jt.index > below.index[-1]][0]
            conv = float(start - t.from_s)
    total = float(totals.sum())
    share_of = {f"share_{f}": float(totals[f]) / total if total else math.nan for f in t.flows}
    shares = shares_text({f: share_of[f"share_{f}"] for f in t.flows})
    for g, members in getattr(t, "groups", {}).items():
        share_of[f"share_{g}"] = float(totals[members].sum()) / total if total else math.nan
    # Stability: how much each flow's rate swings around its mean (coefficient of variation
    # over the trace samples after from_s), averaged over the flows.
    means = after.mean()
    cvs = [_std(after[f]) / float(means[f]) for f in t.flows if means[f] > 0]
    rate_cv = float(sum(cvs) / len(cvs)) if cvs else math.nan
    return {"utilization": util, "tested_utilization": tested,
            "background_utilization": util - tested, "jain": jain_index(list(totals)),
            "loss_rate": loss, "convergence_s": conv, "rate_cv": rate_cv, "shares": shares,
            **share_of}  # fmt: skip
