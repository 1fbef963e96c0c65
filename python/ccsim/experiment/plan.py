# SPDX-License-Identifier: MIT
"""The plan of a paper's reproduction: its file format, loading and checks.

An experiment folder (``experiments/p001-spack/``) holds a base scenario and ``plan.toml``::

    id = "p001"
    title = "..."
    paper = "..."                       # the citation
    scenario = "scenario.toml"          # base scenario, relative to the folder
    seeds = 30                          # per point; quick_seeds for --quick
    quick_seeds = 3

    [metric]                            # what a point measures (default for every figure)
    table = "flows"                     # flows | links | paths | agents
    where = { name = "transfer" }       # row filter: column = value
    column = "completion_time_s"
    label = "transfer time (s)"

    [lines.reno]                        # the curves, each a set of overrides
    label = "Reno"
    set = { "flows.transfer.variant" = "reno" }

    [[figures]]
    id = "fig8"
    title = "Packet loss rate vs. transmission time (MSS ${flows.transfer.mss} B)"
    x = { path = "links.wireless.loss.rate", values = [0.01, 0.05, 0.1], quick = [0.05],
          label = "loss rate (%)", scale = 100 }   # quick: the subset for --quick
    set = { "flows.transfer.mss" = 1000 }
    lines = ["reno", "spack"]

    [[claims]]                          # what the paper states, checked against our points
    figure = "fig8"
    text = "SPACK transfers finish sooner than Reno's, more so as the loss rate grows"
    lower = "spack"                     # the line expected to be lower (or higher = ...) ...
    than = "reno"                       # ... than this one, paired by seed at each x
    min_significant_share = 0.5         # holds if significant at this share of the points
    trend = "increasing"                # optional: the gap (reno - spack) grows with x

    [[claims]]
    figure = "fig8_abc"
    text = "with byte counting, split ACKs change nothing"
    similar = "spack_abc"               # equivalent, by a paired TOST, within
    than = "reno_abc"                   # ± margin * reno_abc's mean at each x
    margin = 0.05

    [[assumptions]]
    text = "The paper does not give the buffer size; we use ..."

Time-series experiments (paper 002) use two more figure kinds and summary tables, run once per
line and seed (no x)::

    quick_set = { duration = "60s" }    # overrides added in --quick mode only; a figure or
                                        # table may have its own, applied after this one

    [[figures]]
    id = "fig1"
    kind = "flow_series"                # each flow's utilization over time, a panel per line
    set = { ... }                       # e.g. the case's RTTs
    lines = ["highspeed", "cubic"]
    flows = ["f1", "f2", "f3", "f4"]
    link = "bottleneck:a_to_b"          # whose rate utilization is relative to

    [[figures]]
    kind = "link_series"                # the link's utilization over time, a curve per line

    [[figures]]
    kind = "atm_window"                 # ATM (paper 000): a panel per line, each flow's cwnd
    flows = ["f1"]                      # beside the ACR and latest ER of its ABR VC (the
    link = "l2:a_to_b"                  # "vc" series named "src>dst"); link as above

    [[tables]]                          # per line: utilization, Jain, loss, convergence, shares
    id = "case1"
    title = "..."
    set = { ... }
    lines = [...]
    flows = [...]
    link = "bottleneck:a_to_b"
    from_s = 30.0                       # measure from here (all flows started)
    window_s = 10.0                     # smoothing window of the convergence test
    jain_threshold = 0.9

    [[claims]]                          # a claim on a table: a column, line by line, against
    table = "case1"                     # a number (at_least, at_most), another column of the
    text = "..."                        # row (above = "share_f4") or the same column of
    lines = ["highspeed", "bic"]        # another line (below_line = "fast", above_line)
    column = "utilization"              # utilization, jain, loss_rate, convergence_s, rate_cv
    at_least = 0.9                      # (stability), share_<flow> (fraction of the total)
    tolerance = 0.02                    # with one seed: a value this close is too close to call

Queue delay percentiles of one link direction across the x values (docs/queues.md, "Queue
delay")::

    [[figures]]
    id = "delay"
    kind = "queue_delay"                # a figure of points whose curves are, for each line,
    x = { path = "...", values = [...] }  # the link's p50, p95 and p99 sojourn time (ms)
    lines = ["reno", "cubic"]           # from the links table's queue_delay_p*_s columns
    link = "bottleneck:a_to_b"
    percentiles = [50, 99]              # optional: a subset of 50, 95, 99 (default all three)

A sequence-number trace of one run per line (paper 001's Fig. 5, paper 004's Fig. 11)::

    [[figures]]
    id = "fig5_trace"
    kind = "packet_trace"               # a panel per line: data departures on the link, drops,
    set = { ... }                       # and the ACK numbers the sender is delivered
    lines = ["reno", "spack"]
    flow = "transfer"
    link = "wireless:a_to_b"
    link_label = "the wireless hop"     # optional: the link as the legend names it (the
                                        # paper's words); default its NAME:DIRECTION
    seed = 1                            # optional; max_rows = 200000 likewise

The paper's own numbers beside ours (docs/experiments.md, "The paper's numbers beside ours")::

    [figures.paper]                     # on a figure of points (or a grid's metric, or a
    source = "Table 1"                  # summary table); required: where the numbers are
    relative_tolerance = 0.1            # and/or tolerance = "2%": what still matches
    [figures.paper.values]
    reno = ["9.4Mbps", "-", 14.2]       # one per x value; "-": the paper gives no number

    [[tables]]                          # a table as the paper prints it: rows x lines, each
    id = "table1_wan"                   # cell "ours / paper" for every metric
    kind = "grid"
    lines = ["reno", "er04"]
    rows = [{ id = "none", label = "no background", set = { ... } }, ...]
    [[tables.metrics]]
    id = "throughput"
    where = { name = ["f1", "f2"] }     # with aggregate = "sum": columns summed over the rows
    aggregate = "sum"
    column = "goodput_bps / 1e6"
    unit = "Mbit/s"
    paper = ...                         # values = { row = [one per line] }

    [[claims]]
    table = "table1_wan"                # or figure = ...
    matches_paper = true                # counts the cells within the paper's tolerance

A figure or table may have its own ``quick_set`` (after the plan's); a table's ``groups = {
reno = ["f2", "f4"] }`` adds the column ``share_reno``; an x may carry units (``"10Mbps"``) and
companion keys (``also = { PATH = [one value per x] }``); a metric's column may be arithmetic
on the row's columns (``"(packets_sent - packets_received) / packets_sent"``) calling
:data:`FUNCTIONS` (the models of ``ccsim.models``); a line may have its own ``metric`` (a
model fed with the same runs, on figures of points) and a figure ``y_scale = "log"``.

docs/experiments.md describes every key and the statistics behind each claim's verdict.

``reproduce`` runs every (figure, line, x, seed) point through the sweep store (so it resumes),
gathers one table, computes means and 95 % confidence intervals, draws each figure as PNG and
SVG, and writes ``report.md`` with the figures, a table of every point, the paper's claims beside
what our points show, and every assumption. The data model (``results.parquet`` plus the
per-figure summary) is what an HTML report will read.
"""

from __future__ import annotations

import ast
import math
import operator
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ccsim._tomllib import tomllib
from ccsim.scenario import (
    NotAFile,
    PathLike,
    check_regular,
    format_value,
    not_utf8_said,
    read_text,
)

from .arguments import NONE, PATH, TEXT, arguments
from .paper import PaperValueError, PaperValues, check_unit, read_paper


class PlanError(ValueError):
    """A plan file is invalid; the message names the field."""


@dataclass
class Metric:
    table: str
    column: str
    label: str
    where: dict[str, Any] = field(default_factory=dict)
    #: Where in the plan it was declared ("metric", "figures[2].metric"), for messages.
    origin: str = "metric"
    #: The unit of the metric's values (a key of :data:`~ccsim.experiment.paper.UNITS`), which
    #: a paper value with a unit is converted to; None: the base unit (bit/s, a fraction, s).
    unit: str | None = None
    #: None: the one row matching ``where``; "sum" / "mean": every matching row, each column
    #: summed (averaged) over them before ``column``'s arithmetic (paper 000's throughput is
    #: the sum over five flows, its retransmission ratio sum(retransmits) / sum(packets sent)).
    aggregate: str | None = None
    #: A grid table's metric: its id (the cells' second value, "throughput").
    id: str = ""


@dataclass
class Line:
    id: str
    label: str
    overrides: list[str]
    #: What this line measures instead of its figure's metric (a model fed with the run's own
    #: measurements, beside the line of the measured value); None: the figure's.
    metric: Metric | None = None


@dataclass
class Figure:
    id: str
    title: str
    x_path: str
    x_values: list[Any]
    x_quick: list[Any]
    x_label: str
    overrides: list[str]
    lines: list[str]
    metric: Metric
    x_scale: float = 1.0
    #: Keys set together with x: PATH -> one value per x value (Fig. 12 of paper 004: the cross
    #: traffic's rate follows path1's bandwidth).
    x_also: dict[str, list[Any]] = field(default_factory=dict)
    #: Where in the plan it was declared ("figures[2]"), for messages.
    origin: str = ""
    #: The plan's title as written: ``${path}`` where it states a setting (``title`` has them
    #: filled in with the item's own values; the explorer fills them in with a run's).
    title_template: str = ""
    #: Overrides added in --quick mode after the plan's ``quick_set`` (its own ``quick_set``).
    quick_overrides: list[str] = field(default_factory=list)
    #: The paper's values at (line, x), if the plan gives them (its ``paper`` key).
    paper: PaperValues | None = None
    #: The y axis: "linear" or "log" (a model's bound far above the measured values).
    y_scale: str = "linear"
    #: Not one of the paper's figures (ours, beyond it): the paper cannot give numbers for it.
    beyond_paper: bool = False


#: Every kind of time-series figure a plan can ask for; the PNG and the site each draw every
#: one of them as what it is, and refuse any other.
SERIES_KINDS = ("flow_series", "link_series", "packet_trace", "atm_window")


@dataclass
class SeriesFigure:
    """A time-series figure (one of :data:`SERIES_KINDS`), from one run per line (seed 1;
    ``packet_trace``: its ``seed``)."""

    id: str
    title: str
    kind: str
    overrides: list[str]
    lines: list[str]
    flows: list[str]
    link: str
    origin: str = ""
    #: The plan's title as written: ``${path}`` where it states a setting (``title`` has them
    #: filled in with the item's own values; the explorer fills them in with a run's).
    title_template: str = ""
    quick_overrides: list[str] = field(default_factory=list)
    #: packet_trace: the seed of its one run per line.
    seed: int = 1
    #: The link as a reader of the paper knows it ("the wireless hop"), for legends and axis
    #: labels; empty: ``link`` itself (``NAME:DIRECTION``).
    link_label: str = ""

    def link_name(self) -> str:
        """The link as a figure's legend names it."""
        return self.link_label or self.link


#: The most packet-trace rows a ``packet_trace`` figure keeps per run unless it says otherwise.
PACKET_TRACE_ROWS = 200_000


@dataclass
class SummaryTable:
    id: str
    title: str
    overrides: list[str]
    lines: list[str]
    flows: list[str]
    link: str
    from_s: float
    window_s: float
    jain_threshold: float
    origin: str = ""
    #: The plan's title as written: ``${path}`` where it states a setting (``title`` has them
    #: filled in with the item's own values; the explorer fills them in with a run's).
    title_template: str = ""
    quick_overrides: list[str] = field(default_factory=list)
    #: Named sets of ``flows`` whose summed share is a column ``share_<name>`` (paper 002's
    #: coexistence: the standard TCP flows' share of the total).
    groups: dict[str, list[str]] = field(default_factory=dict)
    #: The paper's values: (line, column) -> value.
    paper: PaperValues | None = None
    #: Not one of the paper's tables (ours, beyond it).
    beyond_paper: bool = False


@dataclass
class GridRow:
    id: str
    label: str
    overrides: list[str]


@dataclass
class GridTable:
    """A table as a paper prints it (``kind = "grid"``): rows and columns (the plan's lines)
    each set overrides, and every cell holds each metric's value, ours beside the paper's.
    Paper 000's Table 1: rows = backgrounds, columns = Reno and ER-TCP at S = 0.2 ... 0.7,
    cells = throughput and retransmission ratio. Its runs are points like a figure's (tagged
    with the table's id, the line and the row's id as x), so a run it shares with a figure has
    the same key and is simulated once."""

    id: str
    title: str
    overrides: list[str]
    lines: list[str]
    rows: list[GridRow]
    metrics: list[Metric]
    origin: str = ""
    #: The plan's title as written: ``${path}`` where it states a setting (``title`` has them
    #: filled in with the item's own values; the explorer fills them in with a run's).
    title_template: str = ""
    quick_overrides: list[str] = field(default_factory=list)
    #: The rows run in --quick mode (default: all).
    quick_rows: list[str] = field(default_factory=list)
    #: The paper's values per metric id: (row id, line) -> value.
    paper: dict[str, PaperValues] = field(default_factory=dict)
    #: Not one of the paper's tables (ours, beyond it).
    beyond_paper: bool = False

    def cell_id(self, metric: Metric) -> str:
        """The id its cells of ``metric`` carry in points.parquet and summary.parquet (in the
        ``figure`` column): "table1_wan.throughput"."""
        return f"{self.id}.{metric.id}"


#: The default share of the points at which a "lower"/"higher" claim's direction must be
#: significant (or a "similar" claim's equivalence shown): half of them.
DEFAULT_SIGNIFICANT_SHARE = 0.5
#: The default equivalence margin of a "similar" claim: ±5 % of the reference line's mean.
DEFAULT_MARGIN = 0.05


@dataclass
class Claim:
    figure: str
    text: str
    #: The line the claim is about ("A"); named ``lower`` for the plan key it came from first.
    lower: str | None
    #: The line it is compared with ("B").
    than: str | None
    #: "lower" / "higher": A below / above B, by the paired difference at each x; "similar":
    #: A within ``margin`` of B by a paired two-one-sided test at each x.
    relation: str = "lower"
    #: The share of the points (with an interval) at which the paired difference must be
    #: significant in the claimed direction, or equivalence shown, for the claim to hold.
    min_significant_share: float = DEFAULT_SIGNIFICANT_SHARE
    #: "increasing" / "decreasing": the gap in the claimed direction (B - A for "lower", A - B
    #: for "higher") grows / shrinks with x, by the 95 % interval of its regression slope.
    trend: str | None = None
    #: For "similar": the equivalence bounds, relative to B's mean at each x.
    margin: float = DEFAULT_MARGIN
    #: A claim on a summary table instead: ``column`` of each of ``lines`` compared with a number
    #: (``at_least``, ``at_most``), with another column of the same row (``above``), or with
    #: the same column of another line (``below_line``, ``above_line``). On a figure of points,
    #: ``lines`` with ``at_most`` (``at_least``) is a bound on every point of those lines.
    table: str | None = None
    lines: list[str] = field(default_factory=list)
    column: str | None = None
    at_least: float | None = None
    at_most: float | None = None
    above: str | None = None
    below_line: str | None = None
    above_line: str | None = None
    #: For a table claim from one run per line: a value within this of the rule's reference is
    #: too close to call (with several seeds the 95 % interval decides instead).
    tolerance: float = 0.0
    origin: str = ""
    #: "matches the paper": every cell of ``figure`` (a figure of points, or a grid table's
    #: ``table``) with a paper value, for ``lines`` (default all) and ``metric`` (a grid's
    #: metric id; default all), compared with the paper's value within its tolerance.
    matches_paper: bool = False
    metric: str | None = None
    #: One of the paper's main results: the report opens with it ("The paper's main result").
    headline: bool = False
    #: What the plan says beside the verdict (why the result differs, what decides it).
    note: str = ""
    #: An effect claim: "ratio" (A / B - 1, in %), "difference" (A - B, in the metric's unit)
    #: or "slope" (A against x, in the metric's unit per unit of the axis), compared with the
    #: paper's own effect at each point of ``at``.
    effect: str | None = None
    #: The x values (a grid's row ids) a claim on a figure is judged at; empty: every point.
    at: list[Any] = field(default_factory=list)
    #: The paper's effect as a range (low, high) in the effect's unit, as its text states it;
    #: None: computed at each point from the item's paper values, ± ``band`` of it.
    paper_effect: tuple[float, float] | None = None
    #: Where the paper states ``paper_effect`` ("abstract", "§4").
    source: str = ""
    #: With an effect computed from the paper's values: how far from it (a share of it) ours
    #: may be and still reproduce it.
    band: float = 0.5


#: The effects an effect claim can compare with the paper's.
EFFECTS = ("ratio", "difference", "slope")
#: The default share of a summary table's lines a table claim needs: all of them (it names the
#: lines it is about).
DEFAULT_TABLE_SHARE = 1.0


@dataclass
class Plan:
    id: str
    title: str
    paper: str
    folder: Path
    scenario_text: str
    seeds: int
    quick_seeds: int
    lines: dict[str, Line]
    figures: list[Figure]
    claims: list[Claim]
    assumptions: list[str]
    series_figures: list[SeriesFigure] = field(default_factory=list)
    tables: list[SummaryTable] = field(default_factory=list)
    quick_overrides: list[str] = field(default_factory=list)
    grids: list[GridTable] = field(default_factory=list)


def _overrides(table: dict[str, Any], where: str) -> list[str]:
    if not isinstance(table, dict):
        raise PlanError(f"{where}: expected a table of PATH = value")
    return [f"{k}={format_value(v)}" for k, v in table.items()]


def _need(tbl: dict[str, Any], key: str, where: str) -> Any:
    if key not in tbl:
        raise PlanError(f"{where}.{key}: missing")
    return tbl[key]


def _line_ids(tbl: dict[str, Any], where: str, lines: dict[str, Line]) -> list[str]:
    """An item's ``lines``, refused when empty: an item of no line runs nothing, and its
    figure or table had nothing to draw (a figure of points failed drawing its legend)."""
    ids = [str(x) for x in _need(tbl, "lines", where)]
    if not ids:
        raise PlanError(
            f"{where}.lines: empty; give one or more of the plan's lines: {', '.join(lines)}"
        )
    return ids


def title_text(template: str, scenario_text: str, overrides: Sequence[str]) -> str:
    """A title with its ``${path}`` filled in with the values of the scenario with
    ``overrides`` (a run's, or an item's own ``set``)."""
    if "${" not in template:
        return template
    from ccsim import _core

    return placeholder_text(
        template, tomllib.loads(_core.validate(scenario_text, list(overrides), 1))
    )


def _check_toml(path: Path, text: str) -> None:
    """PlanError naming the scenario file when it is not TOML. Only syntax: a base scenario
    may lack what every line sets. Checked here, or the first parse (a figure's title, or a
    run) would be blamed for it."""
    from ccsim import _core
    from ccsim.scenario import check_toml

    try:
        check_toml(text, str(path))
    except _core.ScenarioError as e:
        raise PlanError(f"scenario: {e}") from None


def _fill_title(item: Any, scenario_text: str, lines: dict[str, Line]) -> None:
    """Keep ``item``'s title as written (``title_template``) and fill in its ``${path}`` with
    the values its own scenario has (the base scenario with the item's ``set``), so the report
    and the site show the settings it runs with, and the explorer those of the run it shows.

    A title states one value per key: a key that its x axis or one of its lines moves is
    refused, as is a key the scenario does not have."""
    item.title_template = item.title
    if "${" not in item.title:
        return
    from ccsim import _core

    where = f"{item.origin}.title"

    def sets(overrides: Sequence[str], path: str) -> bool:
        """Whether ``overrides`` set ``path`` or a table holding it (``tcp.cc`` holds
        ``tcp.cc.safety``)."""
        keys = [o.partition("=")[0] for o in overrides]
        return any(path == k or path.startswith(k + ".") for k in keys)

    for m in PLACEHOLDER.finditer(item.title):
        path = m.group(1)
        moved_by = [f"line {lid}" for lid in item.lines if sets(lines[lid].overrides, path)]
        moved_by += [f"row {r.id}" for r in getattr(item, "rows", []) if sets(r.overrides, path)]
        x_keys = [getattr(item, "x_path", ""), *getattr(item, "x_also", {})]
        if sets([f"{k}=" for k in x_keys if k], path):
            moved_by.insert(0, "its x axis")
        if moved_by:
            raise PlanError(
                f"{where}: ${{{path}}} takes more than one value in {item.id} (set "
                f"by {', '.join(moved_by)}); a title states the item's own settings"
            )
    try:
        item.title = title_text(item.title_template, scenario_text, item.overrides)
    except KeyError as e:
        raise PlanError(
            f"{where}: ${{{e.args[0]}}} is not a key of the resolved scenario"
        ) from None
    except (ValueError, _core.ScenarioError) as e:
        raise PlanError(f"{where}: {e}") from None


_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
        ast.Div: operator.truediv}  # fmt: skip


def _model(name: str, *args: float, b_at: int | None = None) -> float:
    """``ccsim.models.<name>`` on positional ``args``; the argument at ``b_at``, if given, is
    the model's ``b`` (segments per ACK)."""
    # ccsim.models imports NumPy: only when a plan's expression calls a model.
    from ccsim import models

    fn = getattr(models, name)
    if b_at is not None and len(args) > b_at:
        return float(fn(*args[:b_at], b=args[b_at]))
    return float(fn(*args))


#: Functions a metric expression may call, with how many arguments each takes: the models of
#: ``ccsim.models`` (bytes/s; a paper's model beside the runs it describes, fed with that run's
#: own measurements) and a few helpers.
FUNCTIONS: dict[str, tuple[range, Any]] = {
    "sqrt": (range(1, 2), math.sqrt),
    "min": (range(2, 9), min),
    "max": (range(2, 9), max),
    # mathis(mss_bytes, rtt_s, p[, b]): the square-root law, b segments per ACK.
    "mathis": (range(3, 5), lambda *a: _model("mathis", *a, b_at=3)),
    # sqrt_bound(segment_bytes, rtt_s, p): paper 003's 0.866 B/(R sqrt p), p = 0 read as 1e-6.
    "sqrt_bound": (range(3, 4), lambda *a: _model("sqrt_bound", *a)),
    # padhye(mss_bytes, rtt_s, p, t0_s[, b]): the full PFTK model, no window limit.
    "padhye": (range(4, 6), lambda *a: _model("padhye", *a, b_at=4)),
}  # fmt: skip


def _expression(column: str) -> ast.expr:
    """A metric column is a column name or arithmetic (+ - * / and parentheses) on column
    names, numbers and calls of :data:`FUNCTIONS` on one row:
    "(packets_sent - packets_received) / packets_sent", "sqrt_bound(1000, rtt_mean_s, 0)"."""
    try:
        tree = ast.parse(column, mode="eval").body
    except SyntaxError:
        raise ValueError(f'"{column}" is not a column name or arithmetic on columns') from None
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = node.func.id if isinstance(node.func, ast.Name) else ""
            if name not in FUNCTIONS or node.keywords:
                raise ValueError(f'"{column}": a call must be one of {", ".join(FUNCTIONS)} '
                                 "with positional arguments")  # fmt: skip
            counts = FUNCTIONS[name][0]
            if len(node.args) not in counts:
                took = f"{counts.start}-{counts.stop - 1}" if len(counts) > 1 else counts.start
                raise ValueError(f'"{column}": {name} takes {took} argument'
                                 f"{'' if took == 1 else 's'}, not {len(node.args)}")  # fmt: skip
            continue
        ok = isinstance(node, (ast.BinOp, ast.Name, ast.Load, ast.UnaryOp, ast.USub, *_OPS))
        ok = ok or (isinstance(node, ast.Constant) and isinstance(node.value, (int, float)))
        if not ok:
            raise ValueError(f'"{column}": only column names, numbers, + - * / (), and calls '
                             f"of {', '.join(FUNCTIONS)} allowed")  # fmt: skip
    return tree


def metric_columns(column: str) -> list[str]:
    """The column names a metric column (a name or arithmetic on names) reads."""
    tree = _expression(column)
    called = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    return sorted({n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and id(n) not in called})


def metric_value(column: str, row: dict[str, Any]) -> float:
    """A metric column's value in ``row``; NaN if a column is missing or a division by zero."""

    def ev(node: ast.expr) -> float:
        if isinstance(node, ast.Constant):
            return float(node.value)
        if isinstance(node, ast.Name):
            v = row.get(node.id)
            return math.nan if v is None else float(v)
        if isinstance(node, ast.UnaryOp):
            return -ev(node.operand)
        if isinstance(node, ast.Call):
            assert isinstance(node.func, ast.Name)
            args = [ev(a) for a in node.args]
            if any(math.isnan(a) for a in args):
                return math.nan
            try:
                return float(FUNCTIONS[node.func.id][1](*args))
            except (ValueError, ZeroDivisionError):
                return math.nan
        assert isinstance(node, ast.BinOp)
        a, b = ev(node.left), ev(node.right)
        if isinstance(node.op, ast.Div) and b == 0:
            return math.nan
        return float(_OPS[type(node.op)](a, b))

    return ev(_expression(column))


#: Names a metric expression may read beside the matched row's columns: the run's simulated
#: length in seconds (its summary's ``sim_seconds``), so that a count becomes a rate per second
#: whatever the run's duration (``--quick`` shortens it): "fast_retransmits / sim_seconds".
RUN_NAMES = ("sim_seconds",)


#: The record tables a metric may read: flows and links (every run), paths (one row per path of
#: an SCTP association), agents (the counters of base-station agents: SPACK, Snoop, I-TCP),
#: and the ATM layer's atm_vcs (one row per ABR VC) and atm_ports (one per ATM link direction:
#: cells sent and lost per class, queue peaks, ER written).
METRIC_TABLES = ("flows", "links", "paths", "agents", "atm_vcs", "atm_ports")


#: How a metric combines the rows its ``where`` matches (none: exactly one row).
AGGREGATES = ("sum", "mean")


def _metric(
    tbl: dict[str, Any], where: str, default: Metric | None, extra: frozenset[str] = frozenset()
) -> Metric:
    if not tbl:
        if default is None:
            raise PlanError(f"{where}: missing")
        return default
    allowed = {"table", "column", "label", "where", "unit", "aggregate", *extra}
    unknown = sorted(set(tbl) - allowed)
    if unknown:
        raise PlanError(f"{where}.{unknown[0]}: unknown key; allowed: {', '.join(sorted(allowed))}")
    table = tbl.get("table", default.table if default else "flows")
    if table not in METRIC_TABLES:
        raise PlanError(f'{where}.table: "{table}" is not one of {", ".join(METRIC_TABLES)}')
    column = str(_need(tbl, "column", where))
    try:
        metric_columns(column)
    except ValueError as e:
        raise PlanError(f"{where}.column: {e}") from None
    unit = None
    if "unit" in tbl:
        try:
            unit = check_unit(str(tbl["unit"]))
        except PaperValueError as e:
            raise PlanError(f"{where}.unit: {e}") from None
    aggregate = None
    if "aggregate" in tbl:
        aggregate = str(tbl["aggregate"])
        if aggregate not in AGGREGATES:
            raise PlanError(f'{where}.aggregate: "{aggregate}" is not one of '
                            f"{', '.join(AGGREGATES)}")  # fmt: skip
    filt = dict(tbl.get("where", {}))
    for k, v in filt.items():
        if isinstance(v, list) and aggregate is None:
            raise PlanError(f"{where}.where.{k}: a list of values matches several rows; "
                            'give aggregate = "sum" or "mean"')  # fmt: skip
    return Metric(
        table=table,
        column=column,
        label=str(tbl.get("label", tbl["column"])),
        where=filt,
        origin=where,
        unit=unit,
        aggregate=aggregate,
    )


#: The queue delay percentiles the links table has (``queue_delay_p50_s`` ...), which a
#: ``queue_delay`` figure may draw.
QUEUE_DELAY_PERCENTILES = (50, 95, 99)


def _queue_delay_figure(f: dict[str, Any], where: str, lines: dict[str, Line]) -> dict[str, Any]:
    """A ``queue_delay`` figure as the figure of points it is: for each of its lines and each
    percentile, a line of its own (``<line>_p50`` ..., added to ``lines``) with the line's
    settings and the link's ``queue_delay_p<q>_s`` (in ms) as its metric. Runs are keyed by
    their settings, so the percentiles of one line share its runs."""
    if "metric" in f:
        raise PlanError(f"{where}.metric: a queue_delay figure measures its link's queue delay "
                        "and takes no metric")  # fmt: skip
    link = str(_need(f, "link", where))
    name, _, direction = link.partition(":")
    if not name or direction not in ("a_to_b", "b_to_a"):
        raise PlanError(f'{where}.link: "{link}" is not NAME:a_to_b or NAME:b_to_a')
    percentiles = f.get("percentiles", list(QUEUE_DELAY_PERCENTILES))
    if not percentiles:
        raise PlanError(f"{where}.percentiles: empty; give some of 50, 95, 99")
    for q in percentiles:
        if isinstance(q, bool) or q not in QUEUE_DELAY_PERCENTILES:
            raise PlanError(f"{where}.percentiles: {q!r} is not one of 50, 95, 99")
    at = {"link": name, "direction": direction}

    def metric(q: Any) -> Metric:
        return Metric(table="links", column=f"queue_delay_p{int(q)}_s * 1000",
                      label=f"queue delay of {link} (ms)", where=at,
                      origin=f"{where}.link")  # fmt: skip

    derived = []
    for lid in _line_ids(f, where, lines):
        if lid not in lines:
            raise PlanError(f'{where}.lines: no line named "{lid}"; lines are {", ".join(lines)}')
        base = lines[lid]
        if base.metric is not None:
            raise PlanError(f'{where}.lines: "{lid}" has its own metric (lines.{lid}.metric); '
                            "a queue_delay figure draws the link's delay")  # fmt: skip
        for q in percentiles:
            line = Line(f"{lid}_p{int(q)}", f"{base.label}: p{int(q)}", base.overrides, metric(q))
            if lines.get(line.id, line) != line:
                raise PlanError(f'{where}.lines: this figure draws "{lid}" as the line '
                                f'"{line.id}", which the plan already has')  # fmt: skip
            lines[line.id] = line
            derived.append(line.id)
    points = {k: v for k, v in f.items() if k not in ("kind", "link", "percentiles")}
    points["lines"] = derived
    points["metric"] = {"table": "links", "column": metric(percentiles[0]).column,
                        "label": metric(percentiles[0]).label, "where": at}  # fmt: skip
    return points


def where_matches(where: dict[str, Any], row: dict[str, Any]) -> bool:
    """Whether a row matches a metric's filter: each column equal to its value, or to one of
    them when the value is a list."""
    for col, want in where.items():
        got = row.get(col)
        if isinstance(want, list):
            if got not in want:
                return False
        elif got != want:
            return False
    return True


# The shape of a plan file: what each key's value must be. "scalar" is a string or a number
# (ids and labels are read with str()), "number" an int or float, "table" a table of anything;
# a dict is a table with those keys (others are checked by the reader), a one-element list a
# list of that. Checked before anything is interpreted, so that a value of the wrong kind is an
# error naming its key, not a TypeError deep in the reader (found by the plan-file fuzzer).
_METRIC_SHAPE = {
    "table": "scalar",
    "column": "scalar",
    "label": "scalar",
    "where": "table",
    "unit": "scalar",
    "aggregate": "scalar",
}
_PAPER_SHAPE = {
    "source": "scalar",
    "values": "table",
    "tolerance": "scalar",
    "relative_tolerance": "number",
}
_PLAN_SHAPE: dict[str, Any] = {
    "id": "scalar", "title": "scalar", "paper": "scalar", "scenario": "scalar",
    "metric": _METRIC_SHAPE, "quick_set": "table",
    "lines": ("each", {"label": "scalar", "set": "table", "metric": _METRIC_SHAPE}),
    "figures": [{
        "id": "scalar", "title": "scalar", "kind": "scalar", "set": "table", "lines": ["scalar"],
        "quick_set": "table",
        "flows": ["scalar"], "link": "scalar", "metric": _METRIC_SHAPE, "flow": "scalar",
        "seed": "number", "max_rows": "number", "paper": _PAPER_SHAPE, "y_scale": "scalar",
        "link_label": "scalar", "percentiles": ["number"],
        "beyond_paper": "bool",
        "x": {"path": "scalar", "values": ["scalar"], "quick": ["scalar"], "label": "scalar",
              "scale": "number", "also": ("each", ["scalar"])},
    }],
    "tables": [{
        "id": "scalar", "title": "scalar", "set": "table", "lines": ["scalar"],
        "quick_set": "table", "flows": ["scalar"], "link": "scalar", "from_s": "number",
        "groups": ("each", ["scalar"]), "window_s": "number",
        "jain_threshold": "number", "kind": "scalar", "paper": _PAPER_SHAPE,
        "rows": [{"id": "scalar", "label": "scalar", "set": "table"}],
        "metrics": [{**_METRIC_SHAPE, "id": "scalar", "paper": _PAPER_SHAPE}],
        "quick_rows": ["scalar"], "beyond_paper": "bool",
    }],
    "claims": [{
        "figure": "scalar", "table": "scalar", "text": "scalar", "lower": "scalar",
        "than": "scalar", "relation": "scalar", "lines": ["scalar"], "column": "scalar",
        "at_least": "number", "at_most": "number", "above": "scalar", "below_line": "scalar",
        "above_line": "scalar", "higher": "scalar", "similar": "scalar",
        "min_significant_share": "number", "trend": "scalar", "margin": "number",
        "tolerance": "number", "matches_paper": "bool", "metric": "scalar",
        "headline": "bool", "note": "scalar", "effect": "scalar", "of": "scalar",
        "at": ["scalar"], "paper": "any", "source": "scalar", "band": "number",
    }],
    "assumptions": [{"text": "scalar"}],
}  # fmt: skip


def _check_shape(value: Any, shape: Any, where: str) -> None:
    def wrong(expected: str) -> PlanError:
        return PlanError(f"{where}: expected {expected}, found {type(value).__name__} {value!r}")

    if shape == "any":
        return
    if shape == "scalar":
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise wrong("a string or a number")
    elif shape == "bool":
        if not isinstance(value, bool):
            raise wrong("true or false")
    elif shape == "number":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise wrong("a number")
    elif shape == "table":
        if not isinstance(value, dict):
            raise wrong("a table")
    elif isinstance(shape, tuple):  # ("each", shape): a table whose every value has that shape
        if not isinstance(value, dict):
            raise wrong("a table")
        for k, v in value.items():
            _check_shape(v, shape[1], f"{where}.{k}")
    elif isinstance(shape, list):
        if not isinstance(value, list):
            raise wrong("a list")
        for i, v in enumerate(value):
            _check_shape(v, shape[0], f"{where}[{i}]")
    else:
        if not isinstance(value, dict):
            raise wrong("a table")
        for k, sub in shape.items():
            if k in value:
                _check_shape(value[k], sub, f"{where}.{k}" if where else k)


_CLAIM_KEYS = set(_PLAN_SHAPE["claims"][0])


def _figure_claim(c: dict[str, Any], where: str) -> Claim:
    """A claim on a figure's points: ``lower``, ``higher`` or ``similar`` names line A (or
    ``lower`` with ``relation``, the older spelling), ``than`` line B."""
    named = [k for k in ("lower", "higher", "similar") if k in c]
    if len(named) > 1:
        raise PlanError(f"{where}: give one of lower, higher, similar, not {' and '.join(named)}")
    relation = named[0] if named else "lower"
    if "relation" in c:
        relation = str(c["relation"])
        if relation not in ("lower", "higher", "similar"):
            raise PlanError(f'{where}.relation: "{relation}" is not one of lower, higher, similar')
        if named and named[0] != "lower" and named[0] != relation:
            raise PlanError(f'{where}.relation: "{relation}" contradicts {named[0]}')
    bounds = [k for k in ("at_most", "at_least") if k in c]
    if bounds:
        return _figure_bound_claim(c, where, bounds, named)
    if "lines" in c:
        raise PlanError(f"{where}.lines: only for a bound (at_most, at_least) or a table claim")
    a = c.get(named[0]) if named else None
    claim = Claim(
        str(c.get("figure", "")),
        str(_need(c, "text", where)),
        None if a is None else str(a),
        None if c.get("than") is None else str(c["than"]),
        relation,
        origin=where,
    )
    if "tolerance" in c:
        raise PlanError(f"{where}.tolerance: only for a claim on a table")
    _read_significant_share(c, where, claim)
    if "trend" in c:
        if relation == "similar":
            raise PlanError(f"{where}.trend: only for a lower or higher claim")
        trend = str(c["trend"])
        if trend not in ("increasing", "decreasing"):
            raise PlanError(f'{where}.trend: "{trend}" is not one of increasing, decreasing')
        claim.trend = trend
    if "margin" in c:
        if relation != "similar":
            raise PlanError(f"{where}.margin: only for a similar claim")
        margin = float(c["margin"])
        if not margin > 0:
            raise PlanError(f"{where}.margin: {margin:g} must be > 0 (a share of the mean)")
        claim.margin = margin
    return claim


def _read_significant_share(c: dict[str, Any], where: str, claim: Claim) -> None:
    """``min_significant_share``, if given: a share in (0, 1]."""
    if "min_significant_share" in c:
        share = float(c["min_significant_share"])
        if not 0 < share <= 1:
            raise PlanError(
                f"{where}.min_significant_share: {share:g} is not a share; it must be in (0, 1]"
            )
        claim.min_significant_share = share


def _figure_bound_claim(
    c: dict[str, Any], where: str, bounds: list[str], named: list[str]
) -> Claim:
    """A bound on a figure's points: every point of each of ``lines`` at most (at least) a
    number in the metric's units ("the transfer takes under 5 s at every background")."""
    if len(bounds) > 1:
        raise PlanError(f"{where}: give one of at_most, at_least, not both")
    for key in (*named, "than", "relation", "trend", "margin", "tolerance"):
        if key in c:
            raise PlanError(f"{where}.{key}: not for a bound ({bounds[0]}) on a figure")
    lines = c.get("lines")
    if not isinstance(lines, list) or not lines:
        raise PlanError(f'{where}.lines: a bound names the lines it is about, e.g. lines = ["a"]')
    claim = Claim(str(c.get("figure", "")), str(_need(c, "text", where)), None, None, origin=where)
    claim.lines = [str(x) for x in lines]
    setattr(claim, bounds[0], float(c[bounds[0]]))
    _read_significant_share(c, where, claim)
    return claim


def _explore_ranges(raw: dict[str, Any]) -> None:
    """The explorer's free ranges (``explore`` on an x axis, a line or the plan; docs/site.md),
    checked when the plan loads so that every command refuses a malformed one."""
    from ccsim.explore.ranges import parse_plan_ranges

    try:
        parse_plan_ranges(raw)
    except ValueError as e:
        raise PlanError(str(e)) from None


#: What TOML allows nowhere in a file (TOML 1.0, "Spec"; comments too): a control character
#: other than a tab, and a carriage return not followed by a line feed.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]|\r(?!\n)")


@arguments(folder=PATH)
def load_plan(folder: PathLike) -> Plan:
    """Read and check ``folder/plan.toml`` (``folder`` a str or a Path)."""
    folder = Path(folder)
    path = folder / "plan.toml"
    try:
        # A FIFO there (or a device) is no plan: reading it waited for a writer that never
        # came, and `ccsim reproduce --list` and `ccsim explore`, which read every plan under
        # experiments/, hung on one (campaign 48, issue 32).
        check_regular(path)
    except NotAFile as e:
        raise PlanError(f"{path}: {e}") from None
    text = read_text(path, "plan")
    control = _CONTROL.search(text)
    if control is not None:
        # TOML allows no control character but a tab, nor a carriage return without its line
        # feed, anywhere, comments too: a NUL left at a file's end by a copy cut short was
        # refused as "Invalid statement (at line 230, column 1)" with a word on TOML 1.1
        # syntax, which it had none of (campaign 60b, issue 32).
        at = control.start()
        line = text.count("\n", 0, at) + 1
        column = at - text.rfind("\n", 0, at)
        if control.group() == "\r":
            what, allowed = "a carriage return without its line feed", "lines end in LF or CRLF"
        else:
            what = f"the control character U+{ord(control.group()):04X}"
            allowed = "TOML allows no control character but a tab"
        raise PlanError(f"{path}: {what} at line {line}, column {column}: {allowed}")
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        # The scenario beside the plan is read by the core as TOML 1.1, the plan by tomllib as
        # TOML 1.0: a trailing comma that one takes, the other refused in tomllib's words alone,
        # as if it were a typing slip (campaign 14, issue 32).
        raise PlanError(
            f"{path}: {e}; plan files are read as TOML 1.0 (Python's tomllib): no "
            "TOML 1.1 syntax (newlines or a trailing comma in an inline table, \\e, "
            "\\xHH), which their scenario files may use (docs/scenario.md)"
        ) from e
    _check_shape(raw, _PLAN_SHAPE, "")
    allowed = {"id", "title", "paper", "scenario", "seeds", "quick_seeds", "metric", "lines",
               "figures", "claims", "assumptions", "tables", "quick_set", "explore"}  # fmt: skip
    unknown = sorted(set(raw) - allowed)
    if unknown:
        raise PlanError(f"{unknown[0]}: unknown key; allowed: {', '.join(sorted(allowed))}")
    scenario_path = folder / str(_need(raw, "scenario", "plan"))
    _explore_ranges(raw)
    default_metric = _metric(raw.get("metric", {}), "metric", None) if "metric" in raw else None
    lines = {}
    for lid, ltbl in raw.get("lines", {}).items():
        lines[lid] = Line(
            lid,
            str(ltbl.get("label", lid)),
            _overrides(ltbl.get("set", {}), f"lines.{lid}.set"),
            _metric(ltbl["metric"], f"lines.{lid}.metric", None) if "metric" in ltbl else None,
        )

    def check_lines(tbl: dict[str, Any], where: str, points: bool = False) -> list[str]:
        ids = _line_ids(tbl, where, lines)
        for lid in ids:
            if lid not in lines:
                raise PlanError(
                    f'{where}.lines: no line named "{lid}"; lines are {", ".join(lines)}'
                )
            if not points and lines[lid].metric is not None:
                raise PlanError(f'{where}.lines: "{lid}" has its own metric (lines.{lid}.metric), '
                                "which only a figure of points can draw")  # fmt: skip
        return ids

    figures = []
    series_figures = []
    for i, f in enumerate(raw.get("figures", [])):
        where = f"figures[{i}]"
        kind = f.get("kind", "points")
        if kind == "packet_trace":
            flow = str(_need(f, "flow", where))
            seed = f.get("seed", 1)
            if isinstance(seed, bool) or not isinstance(seed, int) or seed < 1:
                raise PlanError(f"{where}.seed: {seed!r} is not a seed; it must be an integer >= 1")
            rows = f.get("max_rows", PACKET_TRACE_ROWS)
            if isinstance(rows, bool) or not isinstance(rows, int) or rows < 1:
                raise PlanError(f"{where}.max_rows: {rows!r} must be an integer >= 1")
            # The figure asks the core for the trace it draws: the flow's packets only.
            trace = format_value({"flows": [flow], "max_rows": rows})
            series_figures.append(
                SeriesFigure(
                    id=str(_need(f, "id", where)),
                    title=str(f.get("title", f["id"])),
                    kind=kind,
                    overrides=[
                        *_overrides(f.get("set", {}), f"{where}.set"),
                        f"trace.packets={trace}",
                    ],
                    lines=check_lines(f, where),
                    flows=[flow],
                    link=str(_need(f, "link", where)),
                    origin=where,
                    quick_overrides=_overrides(f.get("quick_set", {}), f"{where}.quick_set"),
                    seed=seed,
                    link_label=str(f.get("link_label", "")),
                )
            )
            continue
        if kind in SERIES_KINDS:
            series_figures.append(
                SeriesFigure(
                    id=str(_need(f, "id", where)),
                    title=str(f.get("title", f["id"])),
                    kind=kind,
                    overrides=_overrides(f.get("set", {}), f"{where}.set"),
                    lines=check_lines(f, where),
                    flows=[str(x) for x in f.get("flows", [])],
                    # A flow_series without a link draws goodput in Mbit/s, not shares.
                    link=str(
                        f.get("link", "") if kind == "flow_series" else _need(f, "link", where)
                    ),
                    origin=where,
                    quick_overrides=_overrides(f.get("quick_set", {}), f"{where}.quick_set"),
                    link_label=str(f.get("link_label", "")),
                )
            )
            continue
        if kind == "queue_delay":
            f = _queue_delay_figure(f, where, lines)
            kind = "points"
        if kind != "points":
            raise PlanError(
                f'{where}.kind: "{kind}" is not one of points, queue_delay, '
                f"{', '.join(SERIES_KINDS)}"
            )
        x = _need(f, "x", where)
        if not _need(x, "values", f"{where}.x"):
            raise PlanError(f"{where}.x.values: empty; a figure of points needs at least one x")
        check_lines(f, where, points=True)
        also = {str(k): list(v) for k, v in x.get("also", {}).items()}
        for k, v in also.items():
            if len(v) != len(x["values"]):
                raise PlanError(f"{where}.x.also.{k}: {len(v)} values for {len(x['values'])} x "
                                "values; give one per x value")  # fmt: skip
        for q in x.get("quick", []):
            if q not in x["values"]:
                raise PlanError(f"{where}.x.quick: {q!r} is not one of x.values")
        # The axis shows x times scale: 0, NaN or infinity put every point at one place or
        # nowhere, and 1e-320 was "internal error (ZeroDivisionError)" (campaign 12, issue 32).
        x_scale = float(x.get("scale", 1.0))
        if not math.isfinite(x_scale) or abs(x_scale) < sys.float_info.min:
            raise PlanError(f"{where}.x.scale: {x_scale!r} is not a finite number other than "
                            "0 (at least 2.2e-308 in magnitude)")  # fmt: skip
        metric = _metric(f.get("metric", {}), f"{where}.metric", default_metric)
        y_scale = str(f.get("y_scale", "linear"))
        if y_scale not in ("linear", "log"):
            raise PlanError(f'{where}.y_scale: "{y_scale}" is not one of linear, log')
        paper = None
        if "paper" in f:
            paper = _paper(f["paper"], f"{where}.paper", metric.unit, list(f["lines"]),
                           list(x["values"]), "line", "x value")  # fmt: skip
        figures.append(
            Figure(
                id=str(_need(f, "id", where)),
                title=str(f.get("title", f["id"])),
                x_path=str(_need(x, "path", f"{where}.x")),
                x_values=list(_need(x, "values", f"{where}.x")),
                x_quick=list(x.get("quick", x["values"])),
                x_label=str(x.get("label", x["path"])),
                x_scale=x_scale,
                x_also=also,
                overrides=_overrides(f.get("set", {}), f"{where}.set"),
                lines=list(f["lines"]),
                metric=metric,
                origin=where,
                quick_overrides=_overrides(f.get("quick_set", {}), f"{where}.quick_set"),
                paper=paper,
                y_scale=y_scale,
                beyond_paper=bool(f.get("beyond_paper", False)),
            )
        )
    tables = []
    grids = []
    for i, t in enumerate(raw.get("tables", [])):
        where = f"tables[{i}]"
        kind = str(t.get("kind", "summary"))
        if kind == "grid":
            grids.append(_grid(t, where, check_lines(t, where)))
            continue
        if kind != "summary":
            raise PlanError(f'{where}.kind: "{kind}" is not one of summary, grid')
        for key in ("rows", "metrics", "quick_rows"):
            if key in t:
                raise PlanError(f'{where}.{key}: only for a table of kind = "grid"')
        flows = [str(x) for x in _need(t, "flows", where)]
        groups = {str(g): [str(x) for x in members] for g, members in t.get("groups", {}).items()}
        for g, members in groups.items():
            if g in flows:
                raise PlanError(f'{where}.groups.{g}: "{g}" is already a flow of the table')
            for m in members:
                if m not in flows:
                    raise PlanError(f'{where}.groups.{g}: "{m}" is not one of the table\'s flows '
                                    f"({', '.join(flows)})")  # fmt: skip
        tables.append(
            SummaryTable(
                id=str(_need(t, "id", where)),
                title=str(t.get("title", t["id"])),
                overrides=_overrides(t.get("set", {}), f"{where}.set"),
                lines=check_lines(t, where),
                flows=flows,
                link=str(_need(t, "link", where)),
                groups=groups,
                from_s=float(t.get("from_s", 0.0)),
                window_s=float(t.get("window_s", 10.0)),
                jain_threshold=float(t.get("jain_threshold", 0.9)),
                origin=where,
                quick_overrides=_overrides(t.get("quick_set", {}), f"{where}.quick_set"),
                paper=None if "paper" not in t else _paper(
                    t["paper"], f"{where}.paper", None, [str(x) for x in t["lines"]], None,
                    "line", "column", groups=(1,)),
                beyond_paper=bool(t.get("beyond_paper", False)),
            )
        )  # fmt: skip
    # Runs are tagged with the id of their figure or table: two with one id would pool
    # their seeds (a CI twice as many seeds wide, so too narrow) and mix their points.
    first_use: dict[str, str] = {}
    for item in [*figures, *series_figures, *tables, *grids]:
        if item.id in first_use:
            raise PlanError(
                f'{item.origin}.id: "{item.id}" is already the id of {first_use[item.id]}; '
                "ids of figures and tables must be unique"
            )
        first_use[item.id] = item.origin
    points: dict[str, Any] = {f.id: f for f in figures}
    # A grid table's cells of one metric are points too (x = the row's id): a claim may
    # compare two of its lines row by row as on a figure ("table1_wan.retx").
    for g in grids:
        for m in g.metrics:
            points[g.cell_id(m)] = g
    claims = []
    table_ids = {t.id for t in tables}
    for i, c in enumerate(raw.get("claims", [])):
        where = f"claims[{i}]"
        unknown = sorted(set(c) - _CLAIM_KEYS)
        if unknown:
            raise PlanError(f"{where}.{unknown[0]}: unknown key; allowed: "
                            f"{', '.join(sorted(_CLAIM_KEYS))}")  # fmt: skip
        if "effect" not in c:
            for key in ("of", "paper", "source", "band"):
                if key in c:
                    raise PlanError(f"{where}.{key}: only for an effect claim (effect = ...)")
        if "matches_paper" in c:
            claim = _paper_claim(c, where, figures, tables, grids)
            _read_significant_share(c, where, claim)
            claims.append(_headline(c, claim))
            continue
        if "effect" in c:
            claims.append(_headline(c, _effect_claim(c, where, points)))
            continue
        if "metric" in c:
            raise PlanError(f"{where}.metric: only for a claim with matches_paper = true")
        claim = _figure_claim(c, where) if "table" not in c else Claim(
            str(c["table"]), str(_need(c, "text", where)), None, None, origin=where
        )  # fmt: skip
        if "table" not in c:
            fig = points.get(claim.figure)
            if fig is None:
                raise PlanError(
                    f'{where}.figure: "{claim.figure}" is not a figure of points of this plan; '
                    f"figures are {', '.join(points) or 'none'}"
                )
            if isinstance(fig, GridTable) and claim.trend is not None:
                raise PlanError(f"{where}.trend: a grid table's rows have no order to trend along")
            named = [(k, str(c[k])) for k in ("lower", "higher", "similar", "than") if k in c]
            named += [(f"lines[{j}]", ln) for j, ln in enumerate(claim.lines)]
            for key, ln in named:
                if ln not in fig.lines:
                    raise PlanError(
                        f'{where}.{key}: "{ln}" is not a line of figure {fig.id}; '
                        f"its lines are {', '.join(fig.lines)}"
                    )
            claim.at = _claim_points(c, where, fig)
        else:
            for key in ("lower", "higher", "similar", "than", "relation", "trend", "margin", "at"):
                if key in c:
                    raise PlanError(f"{where}.{key}: only for a claim on a figure, not a table")
            if "tolerance" in c:
                raise PlanError(f"{where}.tolerance: a table claim is judged by the 95 % CIs of "
                                "several independent seeds, never by a tolerance on one run; "
                                "leave it out")  # fmt: skip
            claim.min_significant_share = DEFAULT_TABLE_SHARE
            _read_significant_share(c, where, claim)
            claim.table = str(c["table"])
            if claim.table not in table_ids:
                raise PlanError(f'{where}.table: "{claim.table}" is not a table of this plan')
            claim.lines = [str(x) for x in _need(c, "lines", where)]
            for ln in claim.lines:
                if ln not in lines:
                    raise PlanError(f'{where}.lines: "{ln}" is not a line of this plan')
            claim.column = str(_need(c, "column", where))
            kinds = ("at_least", "at_most", "above", "below_line", "above_line")
            if sum(k in c for k in kinds) != 1:
                raise PlanError(f"{where}: a table claim needs exactly one of "
                                f"{', '.join(kinds)}")  # fmt: skip
            if "at_least" in c:
                claim.at_least = float(c["at_least"])
            if "at_most" in c:
                claim.at_most = float(c["at_most"])
            if "above" in c:
                claim.above = str(c["above"])
            for key in ("below_line", "above_line"):
                if key in c:
                    other = str(c[key])
                    if other not in lines:
                        raise PlanError(f'{where}.{key}: "{other}" is not a line of this plan')
                    setattr(claim, key, other)
        claims.append(_headline(c, claim))
    seeds = {}
    for key, default in (("seeds", 30), ("quick_seeds", 3)):
        n = raw.get(key, default)
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise PlanError(f"{key}: {n!r} is not a count of seeds; it must be an integer >= 1")
        seeds[key] = n
    if not scenario_path.is_file():
        raise PlanError(f"scenario: {scenario_path} is not a file")
    scenario_text = read_text(scenario_path)
    _check_toml(scenario_path, scenario_text)
    for item in [*figures, *series_figures, *tables, *grids]:
        _fill_title(item, scenario_text, lines)
    return Plan(
        id=str(_need(raw, "id", "plan")),
        title=str(raw.get("title", "")),
        paper=str(raw.get("paper", "")),
        folder=folder,
        scenario_text=scenario_text,
        seeds=seeds["seeds"],
        quick_seeds=seeds["quick_seeds"],
        lines=lines,
        figures=figures,
        claims=claims,
        assumptions=[
            str(_need(a, "text", f"assumptions[{i}]"))
            for i, a in enumerate(raw.get("assumptions", []))
        ],
        series_figures=series_figures,
        tables=tables,
        quick_overrides=_overrides(raw.get("quick_set", {}), "quick_set"),
        grids=grids,
    )


def _paper(raw: Any, where: str, unit: str | None, rows: list[Any], columns: list[Any] | None,
           row_word: str, column_word: str, groups: tuple[int, ...] = (0, 1)
           ) -> PaperValues:  # fmt: skip
    """Read a ``paper`` key and check its tolerance against the paper's own effect
    (:func:`check_tolerance`), grouping its values by the key positions in ``groups``."""
    try:
        pv = read_paper(raw, where, unit, rows, columns, row_word, column_word)
    except ValueError as e:
        raise PlanError(str(e)) from None
    check_tolerance(pv, groups, row_word, column_word)
    return pv


#: A paper's values that differ by less than this share of their magnitude show no effect.
FLAT = 0.01


def check_tolerance(pv: PaperValues, groups: tuple[int, ...], row_word: str = "row",
                    column_word: str = "column") -> None:  # fmt: skip
    """Refuse a tolerance too wide to see the paper's own effect.

    The paper's effect is the largest difference between its values in one group: along one
    line (a row of ``values``: position 0 of the keys) or at one point across lines (position
    1), as ``groups`` says. A cell matches when ours is within the tolerance of the paper's;
    if twice the tolerance reaches that difference, a value halfway between the two ends
    matches both, so a flat line would "match" a paper that shows a clear effect (paper 000's
    S sweep falls from 86.0 to 74.1 Mbit/s; ±10 % covers it). A group whose values differ by
    less than :data:`FLAT` of their largest magnitude shows no effect (paper 004's path1 at
    99.84-99.96 % everywhere): its tolerance checks a level, and is not refused."""
    best: tuple[float, float, float, str] | None = None
    for pos in groups:
        by: dict[Any, list[float]] = {}
        for key, v in pv.values.items():
            by.setdefault(key[pos], []).append(v)
        for name, vals in by.items():
            if len(vals) < 2:
                continue
            span = max(vals) - min(vals)
            if span <= FLAT * max(abs(v) for v in vals):
                continue
            if best is None or span > best[0]:
                word = row_word if pos == 0 else column_word
                best = (span, min(vals), max(vals), f"the values of {word} {name}")
    if best is None or best[0] <= 0:
        return
    span, low, high, how = best
    mid = (low + high) / 2
    allowed = pv.allowed(mid)
    if 2 * allowed >= span:
        key = "tolerance" if allowed == pv.tolerance else "relative_tolerance"
        raise PlanError(
            f"{pv.origin}.{key}: {pv.describe_tolerance()} of the paper's value (±{allowed:.3g} at "
            f"{mid:.3g}) is at "
            f"least half the paper's own largest difference ({high:.4g} to {low:.4g}, {how}): "
            f"a value halfway would match both ends, so the tolerance cannot see the effect; "
            f"give one below ±{span / 2:.3g}"
        )


def _grid(t: dict[str, Any], where: str, lines: list[str]) -> GridTable:
    """A ``kind = "grid"`` table: ``rows`` (each an id, a label and its overrides), the plan's
    ``lines`` as its columns, and ``metrics`` (each a metric with an ``id`` and optionally the
    paper's values: ``values = { row = [one per line] }``)."""
    for key in ("flows", "link", "from_s", "window_s", "jain_threshold", "groups", "paper"):
        if key in t:
            hint = " (a grid's paper values sit on each of its metrics)" if key == "paper" else ""
            raise PlanError(f"{where}.{key}: not a key of a grid table{hint}")
    rows = []
    for j, r in enumerate(_need(t, "rows", where)):
        at = f"{where}.rows[{j}]"
        unknown = sorted(set(r) - {"id", "label", "set"})
        if unknown:
            raise PlanError(f"{at}.{unknown[0]}: unknown key; allowed: id, label, set")
        rid = str(_need(r, "id", at))
        if any(rid == x.id for x in rows):
            raise PlanError(f'{at}.id: "{rid}" is already the id of another row')
        rows.append(GridRow(rid, str(r.get("label", rid)), _overrides(r.get("set", {}),
                                                                      f"{at}.set")))  # fmt: skip
    if not rows:
        raise PlanError(f"{where}.rows: a grid table needs at least one row")
    metrics = []
    papers = {}
    raw_metrics = _need(t, "metrics", where)
    if not raw_metrics:
        raise PlanError(f"{where}.metrics: a grid table needs at least one metric")
    for j, m in enumerate(raw_metrics):
        at = f"{where}.metrics[{j}]"
        metric = _metric(m, at, None, frozenset({"id", "paper"}))
        metric.id = str(_need(m, "id", at))
        if any(metric.id == x.id for x in metrics):
            raise PlanError(f'{at}.id: "{metric.id}" is already the id of another metric')
        metrics.append(metric)
        if "paper" in m:
            papers[metric.id] = _paper(m["paper"], f"{at}.paper", metric.unit,
                                       [r.id for r in rows], lines, "row", "line")  # fmt: skip
    quick_rows = [str(x) for x in t.get("quick_rows", [r.id for r in rows])]
    for q in quick_rows:
        if q not in [r.id for r in rows]:
            raise PlanError(f'{where}.quick_rows: "{q}" is not the id of a row')
    return GridTable(
        id=str(_need(t, "id", where)),
        title=str(t.get("title", t["id"])),
        overrides=_overrides(t.get("set", {}), f"{where}.set"),
        lines=lines,
        rows=rows,
        metrics=metrics,
        origin=where,
        quick_overrides=_overrides(t.get("quick_set", {}), f"{where}.quick_set"),
        quick_rows=quick_rows,
        paper=papers,
        beyond_paper=bool(t.get("beyond_paper", False)),
    )


def _paper_claim(
    c: dict[str, Any],
    where: str,
    figures: list[Figure],
    tables: list[SummaryTable],
    grids: list[GridTable],
) -> Claim:
    """A claim that our cells match the paper's values within their tolerance: ``figure``
    (of points) or ``table`` (a grid or summary table), optionally ``lines`` and, on a grid,
    ``metric``."""
    if c["matches_paper"] is not True:
        raise PlanError(f"{where}.matches_paper: only true is meaningful (leave it out otherwise)")
    allowed = ("matches_paper", "figure", "table", "text", "lines", "metric",
               "min_significant_share", "headline", "note")  # fmt: skip
    for key in sorted(c):
        if key not in allowed:
            raise PlanError(f"{where}.{key}: not a key of a matches_paper claim; it takes "
                            "figure or table, text, lines, metric, min_significant_share, "
                            "headline, note")  # fmt: skip
    if ("figure" in c) == ("table" in c):
        raise PlanError(f"{where}: a matches_paper claim names one figure or one table")
    text = str(_need(c, "text", where))
    lines: list[str] = []
    if "figure" in c:
        name = str(c["figure"])
        fig = next((f for f in figures if f.id == name), None)
        if fig is None or fig.paper is None:
            have = [f.id for f in figures if f.paper is not None]
            raise PlanError(f'{where}.figure: "{name}" is not a figure with paper values; those '
                            f"are {', '.join(have) or 'none'}")  # fmt: skip
        lines = fig.lines
        if "metric" in c:
            raise PlanError(f"{where}.metric: only for a claim on a grid table")
    else:
        name = str(c["table"])
        grid = next((g for g in grids if g.id == name), None)
        summary = next((t for t in tables if t.id == name), None)
        if (grid is None or not grid.paper) and (summary is None or summary.paper is None):
            have = [g.id for g in grids if g.paper] + [t.id for t in tables if t.paper]
            raise PlanError(f'{where}.table: "{name}" is not a table with paper values; those '
                            f"are {', '.join(have) or 'none'}")  # fmt: skip
        lines = grid.lines if grid is not None else summary.lines  # type: ignore[union-attr]
        if "metric" in c:
            if grid is None:
                raise PlanError(f"{where}.metric: only for a claim on a grid table")
            if str(c["metric"]) not in grid.paper:
                have = ", ".join(grid.paper)
                raise PlanError(f'{where}.metric: "{c["metric"]}" is not a metric of {name} '
                                f"with paper values; those are {have}")  # fmt: skip
    chosen = [str(x) for x in c.get("lines", lines)]
    for ln in chosen:
        if ln not in lines:
            raise PlanError(f'{where}.lines: "{ln}" is not a line of {name}; its lines are '
                            f"{', '.join(lines)}")  # fmt: skip
    return Claim(
        figure=name,
        text=text,
        lower=None,
        than=None,
        relation="matches_paper",
        table=name if "table" in c else None,
        lines=chosen,
        origin=where,
        matches_paper=True,
        metric=None if "metric" not in c else str(c["metric"]),
    )


def _headline(c: dict[str, Any], claim: Claim) -> Claim:
    """A claim's ``headline`` (one of the paper's main results) and ``note`` keys."""
    claim.headline = bool(c.get("headline", False))
    claim.note = str(c.get("note", ""))
    return claim


def _effect_claim(c: dict[str, Any], where: str, points: dict[str, Any]) -> Claim:
    """An effect claim: line ``of`` against line ``than`` (``ratio``, ``difference``) or
    against x (``slope``) on a figure of points or a grid's metric (``figure =
    "table1_wan.throughput"``), at the points ``at``, compared with the paper's effect
    (``paper``: a number or [low, high], with its ``source``; or, left out, computed from the
    item's paper values at each point, ± ``band`` of it)."""
    allowed = {"figure", "text", "effect", "of", "than", "at", "paper", "source", "band",
               "min_significant_share", "headline", "note"}  # fmt: skip
    for key in sorted(c):
        if key not in allowed:
            raise PlanError(f"{where}.{key}: not a key of an effect claim; it takes "
                            f"{', '.join(sorted(allowed))}")  # fmt: skip
    effect = str(c["effect"])
    if effect not in EFFECTS:
        raise PlanError(f'{where}.effect: "{effect}" is not one of {", ".join(EFFECTS)}')
    name = str(_need(c, "figure", where))
    item = points.get(name)
    if item is None:
        raise PlanError(f'{where}.figure: "{name}" is not a figure of points or a grid metric of '
                        f"this plan; those are {', '.join(points) or 'none'}")  # fmt: skip
    a = str(_need(c, "of", where))
    named = [("of", a)]
    b = None
    if effect == "slope":
        if "than" in c:
            raise PlanError(f"{where}.than: a slope is one line's, against x")
        if isinstance(item, GridTable):
            raise PlanError(f"{where}.effect: a grid table's rows have no order to take a slope "
                            "along")  # fmt: skip
    else:
        b = str(_need(c, "than", where))
        named.append(("than", b))
    for key, ln in named:
        if ln not in item.lines:
            raise PlanError(f'{where}.{key}: "{ln}" is not a line of {name}; its lines are '
                            f"{', '.join(item.lines)}")  # fmt: skip
    at = _claim_points(c, where, item)
    claim = Claim(name, str(_need(c, "text", where)), a, b, relation="effect", origin=where,
                  effect=effect, at=at)  # fmt: skip
    if "paper" in c:
        raw = c["paper"]
        values = raw if isinstance(raw, list) else [raw]
        if not 1 <= len(values) <= 2 or any(
            isinstance(v, bool) or not isinstance(v, (int, float)) for v in values
        ):
            raise PlanError(f"{where}.paper: {raw!r} is not the paper's effect: a number or "
                            "[low, high]" + (" in %" if effect == "ratio" else ""))  # fmt: skip
        lo, hi = float(min(values)), float(max(values))
        if lo < 0 < hi:
            raise PlanError(f"{where}.paper: [{lo:g}, {hi:g}] has no direction; an effect claim "
                            "compares a paper's effect of one sign")  # fmt: skip
        claim.paper_effect = (lo, hi)
        claim.source = str(_need(c, "source", where))
        if "band" in c:
            raise PlanError(f"{where}.band: only for an effect read from the paper's values "
                            "(without paper = ...)")  # fmt: skip
    else:
        if "source" in c:
            raise PlanError(f"{where}.source: only with paper = ... (the paper's values say "
                            "their own source)")  # fmt: skip
        pv = item.paper if isinstance(item, Figure) else _grid_paper(item, name)
        if pv is None:
            raise PlanError(f"{where}.paper: {name} has no paper values to read the paper's "
                            "effect from; give it: paper = [low, high], source = ...")  # fmt: skip
        if "band" in c:
            band = float(c["band"])
            if not 0 < band <= 1:
                raise PlanError(f"{where}.band: {band:g} is not a share in (0, 1]")
            claim.band = band
    _read_significant_share(c, where, claim)
    return claim


def _claim_points(c: dict[str, Any], where: str, item: Figure | GridTable) -> list[Any]:
    """A claim's ``at``: the x values (a grid's row ids) it is judged at, each one of the
    item's; empty: all of them. Paper 003's "about the same up to 15 Mbit/s" is a similar
    claim at 5, 10 and 15 Mbit/s of one figure whose x runs to 25."""
    xs = item.x_values if isinstance(item, Figure) else [r.id for r in item.rows]
    at = list(c.get("at", []))
    for x in at:
        if x not in xs:
            raise PlanError(f"{where}.at: {x!r} is not one of {item.id}'s points "
                            f"({', '.join(str(v) for v in xs)})")  # fmt: skip
    return at


def _grid_paper(grid: GridTable, cell_id: str) -> PaperValues | None:
    """The paper values of a grid's metric named by its cell id ("table1_wan.throughput")."""
    metric = cell_id.split(".", 1)[1] if "." in cell_id else ""
    return grid.paper.get(metric)


def x_overrides(fig: Figure, x: Any) -> list[str]:
    """The overrides of x value ``x``: its path and every key set with it (``x.also``)."""
    i = fig.x_values.index(x)
    also = [f"{k}={format_value(v[i])}" for k, v in fig.x_also.items()]
    return [f"{fig.x_path}={format_value(x)}", *also]


def x_number(x: Any) -> float:
    """An x value as a number to plot: a number as it is, a value with a unit by its number
    ("10Mbps" -> 10.0, "6ms" -> 6.0; the axis label names the unit)."""
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        return float(x)
    m = re.match(r"\s*([-+]?[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)", str(x))
    return float(m.group(1)) if m else math.nan


def axis_value(x: Any, scale: float = 1.0) -> str:
    """An x value as an axis and a table show it: a number in the axis' unit ("10Mbps" -> 10;
    0.05 with scale 100 -> 5), a grid row by its id ("10x10" stays "10x10": what follows its
    number is not a unit)."""
    from .paper import UNITS

    if isinstance(x, str):
        m = re.match(r"\s*[-+]?[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?\s*(.*?)\s*$", x)
        if m is None or (m.group(1) and m.group(1) not in UNITS):
            return x
    v = x_number(x)
    return str(x) if math.isnan(v) else f"{v * scale:g}"


#: A scenario value quoted in an assumption's text or a title: ``${duration}``,
#: ``${atm.feedback.interval}``; ``${links.wireless.loss.rate:%}`` writes a fraction as a
#: percentage (``5 %``).
PLACEHOLDER = re.compile(r"\$\{([A-Za-z0-9_.\-]+)(:%)?\}")


def placeholder_text(text: str, resolved: dict[str, Any]) -> str:
    """``text`` with each ``${path}`` replaced by that key's value in ``resolved`` (a resolved
    scenario's tree), as the scenario writes it without quotes (``30s``, ``1000``, ``10Mbps``),
    and each ``${path:%}`` by the value times 100 and `` %``; KeyError names a missing key.

    >>> placeholder_text("MSS ${tcp.mss} B, ${loss:%} loss, ${d}", {"tcp": {"mss": 500},
    ...                  "loss": 0.05, "d": "5s"})
    'MSS 500 B, 5 % loss, 5s'
    """

    def value(m: re.Match[str]) -> str:
        v = resolved_value(resolved, m.group(1))
        if m.group(2):
            return f"{float(v) * 100:.10g} %"
        return format_value(v).strip('"') if not isinstance(v, dict) else format_value(v)

    return PLACEHOLDER.sub(value, text)


def resolved_value(resolved: dict[str, Any], path: str) -> Any:
    """The value at dotted ``path`` in a resolved scenario; KeyError if there is none."""
    node: Any = resolved
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            raise KeyError(path)
        node = node[part]
    return node


def resolved_scenario(plan: Plan, quick: bool) -> dict[str, Any]:
    """The base scenario as the core resolves it in this mode (the plan's quick overrides
    applied in quick mode), as a TOML tree."""
    from ccsim import _core

    overrides = quick_overrides(plan, None, quick)
    return tomllib.loads(_core.validate(plan.scenario_text, overrides, 1))


def assumption_text(plan: Plan, text: str, quick: bool) -> str:
    """An assumption with each ``${path}`` replaced by that key's value in the base scenario as
    this mode resolves it, so that a quick report states its quick settings (a run length
    written out by hand once said 30 s over 5 s runs)."""
    if "${" not in text:
        return text
    return placeholder_text(text, resolved_scenario(plan, quick))


def quick_overrides(plan: Plan, item: Any, quick: bool) -> list[str]:
    """The overrides --quick adds to a run of ``item`` (a figure or table): the plan's
    ``quick_set``, then the item's own, so that an item can scale what the plan's quick mode
    changes (paper 002's small buffer follows its ten times slower link). Empty when not quick."""
    if not quick:
        return []
    return [*plan.quick_overrides, *getattr(item, "quick_overrides", [])]


def experiment_folders(experiments: PathLike) -> list[Path]:
    """The folders under ``experiments`` that hold a ``plan.toml``, the brief's papers
    (``p000-...``) first and the modern studies (``m01-...``) after them, each by name: the
    order ``ccsim reproduce --list``, the explorer and error messages show them in."""
    folders = [f.parent for f in Path(experiments).glob("*/plan.toml")]
    return sorted(folders, key=lambda f: (not f.name.startswith("p"), f.name))


@arguments(name=TEXT, root=PATH | NONE)
def find_experiment(name: str, root: PathLike | None = None) -> Path:
    """``p001`` -> ``experiments/p001-spack`` (searched from ``root`` or the working directory)."""
    # `ccsim reproduce "$PAPER"` with PAPER unset: Path("") is the working folder, and as a
    # prefix "" matched every paper.
    if not name.strip():
        raise PlanError("the paper's id is empty; give one, e.g. p001 (ccsim reproduce --list "
                        "shows them)")  # fmt: skip
    direct = Path(name)
    if (direct / "plan.toml").exists():
        return direct
    if direct.is_absolute() or len(direct.parts) > 1:  # a path, not an id to look up
        # A reproduction's folder holds its plan in plan/, which reproduce takes: said so, as
        # "give a paper's folder" named no folder of the user's that would do (campaign 61).
        stored = direct / "plan"
        hint = f"; its stored plan is {stored}" if (stored / "plan.toml").exists() else ""
        raise PlanError(f"{name}: no plan.toml there{hint}; give a paper's folder or its id "
                        "(ccsim reproduce --list shows them)")  # fmt: skip
    # The working folder is asked for only now, to look an id up: a paper's folder given by
    # its absolute path, from a working folder since removed, was refused as "a relative path
    # names nothing" (campaign 24, issue 32).
    base = Path(root or Path.cwd()) / "experiments"
    # The id is a prefix of the folder's name, read as text, not as a glob pattern: "" and "*"
    # matched every folder and reproduced m01-dctcp (the first by name), "p00[1]" found p001
    # and "p00*" was "Invalid pattern: '**' ..." (campaign 12, issue 32).
    folders = sorted(base.iterdir()) if base.is_dir() else []
    matches = [p for p in folders if p.name.startswith(name) and (p / "plan.toml").exists()]
    if not matches:
        known = [p.name for p in experiment_folders(base)]
        if not known:
            # Run away from the repository's root (ccsim installed by pipx, uv tool or a
            # wheel, and run where the results go): "no experiment "m01" in /x/experiments;
            # known: none (... or give the folder)" named a folder that is not there and left
            # "the folder" to guess (campaign 61, issue 32).
            raise PlanError(
                f'no experiment "{name}": no experiments/*/plan.toml in {base.parent}; run '
                "ccsim reproduce from the repository's root, or give the paper's folder "
                "(its experiments/<id>-<name>, or a reproduction's plan/)"
            )
        raise PlanError(
            f'no experiment "{name}" in {base}; known: {", ".join(known) or "none"} '
            "(run from the repository root, or give the folder)"
        )
    # An id begins its own folder's name ("p001" -> p001-spack): "p001" also begins a folder
    # "p0010-x", so the folder named for the id itself is taken; a prefix of several papers'
    # folders ("p00", "p") reproduced the first by name (campaign 16, issue 32).
    own = [p for p in matches if p.name == name or p.name.startswith(f"{name}-")]
    if len(own) == 1:
        return utf8_plan_folder(own[0])
    if len(matches) > 1:
        raise PlanError(
            f'"{name}" begins the folders of several papers: '
            f"{', '.join(p.name for p in matches)}; give one's id (ccsim reproduce --list "
            "shows them)"
        )
    return utf8_plan_folder(matches[0])


def utf8_plan_folder(folder: Path) -> Path:
    """``folder``, a plan's folder found under ``experiments/``, or :class:`PlanError` naming
    it when its path is not UTF-8 (a byte such as 0xff reaches Python as a lone surrogate),
    with the cure when it is UTF-8 read in the locale's encoding (LC_ALL=C with PYTHONUTF8=0).
    A paper's folder named in Hangul, or copied from a Latin-1 disk, stopped `ccsim reproduce`
    and `ccsim explore` with "internal error (TypeError): folder: expected a path ..., not
    PosixPath": the user typed only its id (campaign 60b, issue 32)."""
    said = not_utf8_said(str(folder), (
        "the paper's folder's name is not UTF-8 (byte {byte}); plans are read from folders "
        "named in UTF-8: rename it"))  # fmt: skip
    if said is not None:
        raise PlanError(said)
    return folder


def line_metric(plan: Plan, fig: Figure, line: str) -> Metric:
    """What a line of a figure of points measures: the line's own metric if it has one (a
    model beside the measured lines), else the figure's."""
    return plan.lines[line].metric or fig.metric


def grid_overrides(
    plan: Plan, grid: GridTable, line: str, row: GridRow, extra: Sequence[str]
) -> list[str]:
    """The overrides of a grid cell's runs: the table's, the line's, the row's, then quick
    mode's, in the order a figure applies its own, its line's and its x value's."""
    return [*grid.overrides, *plan.lines[line].overrides, *row.overrides, *extra]
