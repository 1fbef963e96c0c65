# SPDX-License-Identifier: MIT
"""What the explorer's page may ask for: every plan's figures and summary tables, the keys each
one offers with the values the plan lists or a range it declares (``Catalog``), and the check of a
run request against them (``Catalog.request`` -> ``Request``, or ``RequestError`` naming what is
refused and what is allowed)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .ranges import Range, RangeError, brief


class RequestError(ValueError):
    """A request the explorer refuses (unknown paper, figure, key or value). ``index`` is the
    place in the request's ``x`` of the value refused, when that is what was refused: the page
    takes back the box it added for that value (the API's answer says it as ``x_index``)."""

    index: int | None = None


def _literal(value: Any) -> str:
    from ccsim.scenario import format_value

    return str(format_value(value))


def _split(override: str) -> tuple[str, str]:
    """A plan's ``PATH=VALUE`` cut where the core cuts a ``--set`` (the first ``=`` outside a
    quoted key: ``nodes."a=b".hook=x``)."""
    from ccsim.sweep import split_path

    path, value = split_path(override) or (override, "")
    return path.strip(), value


def _lookup(tree: dict[str, Any], path: str) -> Any:
    """The value at dotted ``path`` in a resolved scenario, or None; a table is not a value.
    The path's keys are read as the core reads them (``links."a.b".rate`` is three keys)."""
    from ccsim.sweep import key_path

    node: Any = tree
    for part in key_path(path):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return None if isinstance(node, dict) else node


def _order(values: list[str]) -> list[str]:
    """Numbers in numeric order, then quantities with a unit ("7.5ms", "2.5Gbps") in numeric
    order within each unit, then the rest as they came."""
    import re

    def key(v: str) -> tuple[int, str, float]:
        m = re.fullmatch(r'"?(\d+(?:\.\d+)?)\s*([A-Za-z%]*)"?', v, re.ASCII)
        if m is None:
            return (2, "", 0.0)
        return (0 if not m.group(2) else 1, m.group(2), float(m.group(1)))

    return sorted(values, key=key)  # stable: the rest keep their order


@dataclass
class FigureEntry:
    """What the page may change in one figure (or time-series figure, or summary table)."""

    id: str
    title: str
    kind: str  # "points" | "flow_series" | "link_series" | "table"
    item: Any  # the plan's Figure / SeriesFigure / SummaryTable
    lines: list[str]
    x_values: list[str] = field(default_factory=list)  # TOML literals
    #: Each listed x literal -> the plan's value (x_overrides needs it for ``x.also``).
    x_plan: dict[str, Any] = field(default_factory=dict)
    x_range: Range | None = None
    params: dict[str, list[str]] = field(default_factory=dict)  # path -> allowed literals
    ranges: dict[str, Range] = field(default_factory=dict)  # path -> free range (plan explore)
    defaults: dict[str, str] = field(default_factory=dict)  # as the figure runs in full mode
    quick_defaults: dict[str, str] = field(default_factory=dict)  # ... and in quick mode
    own: set[str] = field(default_factory=set)  # the keys the figure itself sets
    #: line -> key -> (range, full-mode value, quick-mode value): a line's free parameters.
    line_params: dict[str, dict[str, tuple[Range, str, str]]] = field(default_factory=dict)

    def describe(self, plan: Any) -> dict[str, Any]:
        d: dict[str, Any] = {
            "id": self.id,
            "title": self.title,
            "kind": self.kind,
            "lines": [{"id": lid, "label": plan.lines[lid].label} for lid in self.lines],
            "params": [
                {
                    "path": p,
                    "values": v,
                    "default": self.defaults[p],
                    "quick_default": self.quick_defaults[p],
                    "own": p in self.own,
                    "range": self.ranges[p].describe() if p in self.ranges else None,
                }
                for p, v in self.params.items()
            ],
            "line_params": [
                {
                    "line": lid,
                    "path": p,
                    "range": r.describe(),
                    "default": full,
                    "quick_default": quick,
                }
                for lid, ps in self.line_params.items()
                for p, (r, full, quick) in ps.items()
            ],
        }
        if self.kind == "points":
            fig = self.item
            d.update(
                x_path=fig.x_path,
                x_label=fig.x_label,
                x_values=self.x_values,
                x_shown=[_shown(x, fig.x_scale) for x in self.x_values],
                x_quick=[_literal(x) for x in fig.x_quick],
                x_scale=fig.x_scale,
                x_range=self.x_range.describe() if self.x_range else None,
                metric=fig.metric.label,
                y_scale=fig.y_scale,
            )
        if self.kind == "table":
            d.update(columns=TABLE_COLUMNS + [f"share_{f}" for f in self.item.flows]
                     + [f"share_{g}" for g in self.item.groups])  # fmt: skip
        return d


#: A summary table's numeric columns in the order the page shows them (then share_<flow> and
#: share_<group>); ``table_row`` (ccsim.experiment.tables) computes them per run.
TABLE_COLUMNS = ["utilization", "tested_utilization", "background_utilization", "jain",
                 "loss_rate", "convergence_s", "rate_cv"]  # fmt: skip


@dataclass
class PaperEntry:
    plan: Any
    figures: dict[str, FigureEntry]

    def describe(self) -> dict[str, Any]:
        p = self.plan
        return {
            "id": p.id,
            "title": p.title,
            "paper": p.paper,
            "seeds": p.seeds,
            "quick_seeds": p.quick_seeds,
            "has_quick": bool(p.quick_overrides),
            "figures": [f.describe(p) for f in self.figures.values()],
        }


@dataclass
class Reproduction:
    """A folder ``ccsim reproduce`` wrote, with the plan it ran stored in it."""

    folder: Path
    plan_id: str
    quick: bool

    @property
    def plan_folder(self) -> Path:
        from ccsim.experiment.reproduction import PLAN_FOLDER

        return self.folder / PLAN_FOLDER


def reproductions(results: Path, warn: Callable[[str], None] | None = None) -> list[Reproduction]:
    """The reproductions under ``results`` (or ``results`` itself, one reproduction's folder, as
    ``ccsim report`` takes it) whose plan is stored with them, by folder name. One whose
    report.md or stored plan cannot be read is left out, and ``warn`` (when given) is told in
    one line naming the file, through the check ``ccsim report`` makes (``read_report``,
    ``load_stored_plan``): passed over without a word, a damaged reproduction was simply not
    offered, and its damaged plan stopped the explorer from starting."""
    from ccsim.site import DamagedResults, find_reports, read_report
    from ccsim.site.reports import load_stored_plan

    found = []
    for folder in find_reports(Path(results)):
        try:
            page = read_report(folder)
            if load_stored_plan(folder) is None:
                continue
        except DamagedResults as e:
            if warn is not None:
                warn(f"{folder.name} left out of the explorer: {e}")
            continue
        found.append(Reproduction(folder, page.plan_id, page.quick))
    return found


class Catalog:
    """Every plan under ``experiments/`` and what the page may change in each figure and
    summary table: its x values, its lines, and the scenario keys the plan sets anywhere (a
    figure's or table's settings, another figure's x, the quick mode's settings), each to a
    value that the plan uses for that key or the item's own value, or to any value of the range
    the plan declares for it (``explore``, ranges.py). A key is offered to an item when the
    item's scenario has it (resolved with the item's settings), unless it is the figure's x or
    one of its lines sets it (the line would override the slider) or lacks it (a line that
    sets a table holding it without it): a line's own keys move only through the line's
    declared ranges."""

    def __init__(self, experiments: Path | list[Path]) -> None:
        """``experiments``: a folder of plans (``experiments/``: each ``*/plan.toml``), or the
        plan folders themselves (the plans stored with reproductions, :func:`reproductions`);
        of two plans with one id, the first is offered."""
        from ccsim.experiment.plan import (
            PlanError,
            experiment_folders,
            load_plan,
            utf8_plan_folder,
        )

        folders = (
            experiment_folders(experiments)
            if isinstance(experiments, (str, Path))
            else list(experiments)
        )
        self.papers: dict[str, PaperEntry] = {}
        for folder in folders:
            plan = load_plan(utf8_plan_folder(folder))
            if plan.id in self.papers:
                continue
            try:
                figures = self._figures(plan)
            except ValueError as e:  # a range whose key the scenario lacks, or a bad bound
                raise PlanError(f"{folder / 'plan.toml'}: {e}") from None
            if figures:  # a plan with no figure and no table has nothing to show here
                self.papers[plan.id] = PaperEntry(plan, figures)

    @staticmethod
    def _figures(plan: Any) -> dict[str, FigureEntry]:

        from ccsim import _core
        from ccsim._tomllib import tomllib
        from ccsim.experiment.plan import quick_overrides
        from ccsim.scenario import read_text

        from .ranges import parse_plan_ranges

        ranges = parse_plan_ranges(tomllib.loads(read_text(plan.folder / "plan.toml", "plan")))
        seen: dict[str, list[str]] = {}

        def note(path: str, value: str) -> None:
            seen.setdefault(path, [])
            if value not in seen[path]:
                seen[path].append(value)

        # A packet trace is drawn from one run's packet table, and an ATM window panel (paper
        # 000's Figs. 2-3) mixes cwnd, ACR and ER in their own units: the page draws neither (it
        # once drew the panel as the link's utilization, zero on an ATM link); the report does.
        series = [f for f in plan.series_figures if f.kind not in ("packet_trace", "atm_window")]
        items = [*plan.figures, *series, *plan.tables]
        for item in [*items, *plan.series_figures]:
            for ov in [*item.overrides, *item.quick_overrides]:
                note(*_split(ov))
        for fig in plan.figures:
            for x in fig.x_values:
                note(fig.x_path, _literal(x))
        for ov in plan.quick_overrides:
            note(*_split(ov))
        # A grid table's settings and its rows' are values the plan uses too (paper 000's
        # backgrounds: 1, 5 or 10 sources, 10 or 100 Mbit/s), though the page draws no grid.
        for g in plan.grids:
            for ov in [*g.overrides, *g.quick_overrides, *(o for r in g.rows for o in r.overrides)]:
                note(*_split(ov))

        def resolved(overrides: list[str]) -> dict[str, Any]:
            return dict(tomllib.loads(_core.validate(plan.scenario_text, overrides, 1)))

        def accepts(plan: Any, overrides: list[str]) -> bool:
            try:
                _core.validate(plan.scenario_text, overrides, 1)
            except _core.ScenarioError:
                return False
            return True

        def check(r: Range, overrides: list[str], paths: list[str]) -> None:
            """The range's lowest value must make a valid scenario (its key exists, its unit
            fits): a plan mistake is found when the explorer starts, not on a click."""
            lowest = [f"{p}={r.literal(r.min)}" for p in paths]
            try:
                _core.validate(plan.scenario_text, [*overrides, *lowest], 1)
            except _core.ScenarioError as e:
                raise ValueError(f"{r.where}: {e}") from None

        out: dict[str, FigureEntry] = {}
        for item in items:
            kind = getattr(item, "kind", "points") if item not in plan.tables else "table"
            entry = FigureEntry(item.id, item.title, kind, item, list(item.lines))
            base = list(item.overrides)
            if kind == "points":
                entry.x_values = [_literal(x) for x in item.x_values]
                entry.x_plan = dict(zip(entry.x_values, item.x_values))
                entry.x_range = ranges.x.get(item.id)
                if entry.x_range is not None:
                    check(entry.x_range, base, [item.x_path])
            entry.own = {_split(ov)[0] for ov in item.overrides}
            quick_ov = quick_overrides(plan, item, True)
            full = resolved(base)
            quick = resolved([*base, *quick_ov])
            by_lines = {_split(ov)[0] for lid in item.lines for ov in plan.lines[lid].overrides}
            # Each line's scenario: a key one of them lacks is not offered. m01's TCP lines set
            # the whole queue to drop-tail, which has no K, and fig13's K slider, applied after
            # them, ended every job with "links.bottleneck.queue.k: unknown key" (campaign 22,
            # issue 32). A line's table that holds the key (p002's queue with its limit) keeps
            # it offered: the slider's value is applied after the line's.
            per_line = [resolved([*base, *plan.lines[lid].overrides]) for lid in item.lines]
            for path, values in seen.items():
                if path == getattr(item, "x_path", None) or path in by_lines:
                    continue
                v_full, v_quick = _lookup(full, path), _lookup(quick, path)
                if v_full is None or v_quick is None:
                    continue  # not in this figure's scenario (a line adds it, or nothing)
                if any(_lookup(scenario, path) is None for scenario in per_line):
                    continue
                d_full, d_quick = _literal(v_full), _literal(v_quick)
                entry.params[path] = _order(list(dict.fromkeys([*values, d_full, d_quick])))
                entry.defaults[path] = d_full
                entry.quick_defaults[path] = d_quick
                if path in ranges.keys:
                    entry.ranges[path] = ranges.keys[path]
                    check(ranges.keys[path], base, [path])
            # A figure with [[events]] is not offered another figure's duration shorter than
            # its last event, which the core refuses ("events[i].at: ... is after the run's
            # end"): p004's failover_series, down from 10 s to 20 s, was offered 5 s.
            if "events" in full and "duration" in entry.params:
                entry.params["duration"] = [
                    v for v in entry.params["duration"] if accepts(plan, [*base, f"duration={v}"])
                ]
            # The figure's own settings first, then the others in the plan's order.
            entry.params = {p: entry.params[p] for p in sorted(entry.params,
                            key=lambda p: p not in entry.own)}  # fmt: skip
            for lid in item.lines:
                for path, r in ranges.lines.get(lid, {}).items():
                    line_ov = [*base, *plan.lines[lid].overrides]
                    check(r, line_ov, [path, *r.also])
                    v_full = _lookup(resolved(line_ov), path)
                    v_quick = _lookup(resolved([*line_ov, *quick_ov]), path)
                    entry.line_params.setdefault(lid, {})[path] = (
                        r,
                        _literal(v_full),
                        _literal(v_quick),
                    )
            out[item.id] = entry
        return out

    def describe(self) -> list[dict[str, Any]]:
        return [p.describe() for p in self.papers.values()]

    def request(self, body: Any) -> Request:
        """Check a run request from the page against the catalog; RequestError names what is
        refused and what is allowed."""
        if not isinstance(body, dict):
            raise RequestError("the request must be a JSON object")
        known = {"paper", "figure", "params", "line_params", "lines", "x", "seeds", "quick"}
        extra = sorted(set(body) - known)
        if extra:
            # Named through brief(), as every value from the page is: written as it came, a
            # field named by a JSON escape of half a UTF-16 pair ("\\ud800") made an answer
            # that cannot be encoded, a 500 and a traceback in the log (campaign 24, issue 32).
            raise RequestError(
                f"unknown field {brief(extra[0])}; allowed: {', '.join(sorted(known))}"
            )
        # A key left out is named as missing: looked up, it read "no paper None".
        if "paper" not in body:
            raise RequestError(f"paper: missing; known: {', '.join(self.papers)}")
        paper = self.papers.get(str(body["paper"]))
        if paper is None:
            raise RequestError(f"no paper {brief(body['paper'])}; known: {', '.join(self.papers)}")
        if "figure" not in body:
            raise RequestError(
                f"figure: missing; known in {paper.plan.id}: {', '.join(paper.figures)}"
            )
        fig = paper.figures.get(str(body["figure"]))
        if fig is None:
            raise RequestError(
                f"no figure {brief(body['figure'])} in {paper.plan.id}; known: "
                f"{', '.join(paper.figures)}"
            )
        params = body.get("params", {})
        if not isinstance(params, dict):
            raise RequestError("params must be an object of key: value")
        asked_quick = body.get("quick", False)
        if not isinstance(asked_quick, bool):  # not bool(): "false" and [0] would be true
            raise RequestError(f"quick must be true or false, not {brief(asked_quick)}")
        quick = asked_quick and bool(paper.plan.quick_overrides)
        defaults = fig.quick_defaults if quick else fig.defaults
        chosen: dict[str, str] = {}
        for path, value in params.items():
            if path not in fig.params:
                raise RequestError(
                    f"scenario key {brief(path)} is not one figure {fig.id} exposes; allowed: "
                    f"{', '.join(fig.params) or 'none'}"
                )
            literal = _choice(path, value, fig.params[path], fig.ranges.get(path))
            if literal != defaults[path]:
                chosen[path] = literal
        lines = body.get("lines", fig.lines)
        if not isinstance(lines, list) or not all(ln in fig.lines for ln in lines):
            raise RequestError(f"lines must be a list of {', '.join(fig.lines)}")
        # None asked for is refused: taken as asked, the job ran nothing and said "done".
        if not lines:
            raise RequestError(f"lines: empty; choose one or more of {', '.join(fig.lines)}")
        lines = list(dict.fromkeys(lines))  # each line once, as each x
        line_params = body.get("line_params", {})
        if not isinstance(line_params, dict):
            raise RequestError("line_params must be an object of line: {key: value}")
        moved_lines: dict[str, dict[str, str]] = {}
        for lid, ps in line_params.items():
            offered = fig.line_params.get(lid, {})
            if not offered:
                raise RequestError(f"line_params: line {brief(lid)} of {fig.id} has no free "
                                   "parameter; lines with one: "
                                   f"{', '.join(fig.line_params) or 'none'}")  # fmt: skip
            if not isinstance(ps, dict):
                raise RequestError(f"line_params.{lid} must be an object of key: value")
            for path, value in ps.items():
                if path not in offered:
                    raise RequestError(
                        f"line_params.{lid}: scenario key {brief(path)} is not one line {lid} "
                        f"exposes; allowed: {', '.join(offered)}"
                    )
                r, d_full, d_quick = offered[path]
                literal = _choice(f"line_params.{lid}.{path}", value, [], r)
                # A line not asked for runs nothing: the page sends the values typed for
                # unchecked lines too, and one kept here was said as a moved setting under
                # the title of a job without that line (campaign 48a, issue 32).
                if literal != (d_quick if quick else d_full) and lid in lines:
                    moved_lines.setdefault(lid, {})[path] = literal
        xs: list[str] = []
        if fig.kind != "points" and "x" in body:
            # A table or a time series has no x to choose: a request's x (any, even
            # "garbage") was dropped unread, and its job ran as if it had none (campaign 53a,
            # issue 32). The page sends x for a figure of points only.
            what = "a table" if fig.kind == "table" else "a time series"
            raise RequestError(f"x: figure {fig.id} is {what}, which has no x; leave x out")
        if fig.kind == "points":
            asked = body.get("x", fig.x_values)
            if not isinstance(asked, list):
                raise RequestError(f"x must be a list of {', '.join(fig.x_values)}")
            if not asked:
                raise RequestError(
                    f"x: empty; choose one or more of {_allowed(fig.x_values, fig.x_range)}"
                )
            for i, x in enumerate(asked):
                try:
                    xs.append(_choice("x", x, fig.x_values, fig.x_range))
                except RequestError as e:
                    e.index = i
                    raise
            xs = list(dict.fromkeys(xs))
        top = paper.plan.quick_seeds if quick else paper.plan.seeds
        seeds = body.get("seeds", top)
        # JSON has one kind of number: 5.0 (Python's json.dumps of n / 2) and 1e1 are whole,
        # and were refused as not whole (campaign 48a, issue 32).
        if isinstance(seeds, float) and seeds.is_integer():
            seeds = int(seeds)
        if isinstance(seeds, bool) or not isinstance(seeds, int) or not 1 <= seeds <= top:
            raise RequestError(f"seeds must be a whole number from 1 to {top}")
        return Request(paper.plan, fig, chosen, list(lines), xs, seeds, quick, moved_lines)


def _choice(where: str, value: Any, listed: list[str], r: Range | None) -> str:
    """The literal of a value the page chose: one the plan lists, or one in the key's range."""
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        if str(value) in listed:
            return str(value)
        if isinstance(value, str):
            # A listed TOML string ('"10Mbps"') sent as its text ("10Mbps", what a client
            # writing JSON by hand sends) was refused as '"10Mbps" is not one of "10Mbps",
            # "100Mbps"' (campaign 53, issue 32): the text of a listed string is that string.
            same = next((v for v in listed if _toml_text(v) == value), None)
            if same is not None:
                return same
        if not isinstance(value, str):
            # A JSON number is a number, however written: 10000.0 and 1e4 (Python's json.dumps
            # of a float) were refused as "not one of 10000, 20000, ..." (campaign 48a, issue
            # 32). The plan's literal is kept, so the run is the listed one's.
            same = next((v for v in listed if _same_number(v, value)), None)
            if same is not None:
                return same
        if r is not None:
            try:
                return r.literal(value)
            except RangeError as e:
                raise RequestError(f"{where}: {e}") from None
    raise RequestError(f"{where}: {brief(value)} is not one of {_allowed(listed, r)}")


def _toml_text(literal: str) -> str | None:
    """The text of a plan's ``literal`` when it is a TOML string (``"10Mbps"``), else None."""
    from ccsim._tomllib import tomllib

    if literal[:1] not in ("'", '"'):
        return None
    try:
        value = tomllib.loads(f"v = {literal}")["v"]
    except tomllib.TOMLDecodeError:
        return None
    return value if isinstance(value, str) else None


def _same_number(literal: str, value: float) -> bool:
    """Whether a plan's ``literal`` is a plain number equal to ``value`` (an integer compared
    exactly)."""
    try:
        return (int(literal) if isinstance(value, int) else float(literal)) == value
    except ValueError:
        try:
            return float(literal) == value
        except ValueError:  # a literal with a unit ('"5Mbps"') is no plain number
            return False


def _allowed(listed: list[str], r: Range | None) -> str:
    """The values a key takes, in words: those the plan lists, or (and) those of its range."""
    allowed = ", ".join(listed)
    if r is not None:
        allowed = f"{allowed} or {r.allowed()}" if allowed else r.allowed()
    return allowed


@dataclass
class Request:
    plan: Any
    figure: FigureEntry
    #: The settings moved away from the figure's (in this mode): applied after all others.
    params: dict[str, str]
    lines: list[str]
    xs: list[str]
    seeds: int
    quick: bool
    #: line -> the line's free parameters moved away from its own values.
    line_params: dict[str, dict[str, str]] = field(default_factory=dict)

    def title(self) -> str:
        """The item's title as the plan writes it, with each setting it states (``${path}``)
        filled in with the value this request's runs have, so that a moved MSS shows in the
        title and not only beside it. A title states no key its lines or x axis move (the
        plan refuses that), so any of its runs gives the same values. A scenario the core
        refuses (the job then ends with its error) keeps the plan's title."""
        from ccsim import _core
        from ccsim.experiment.plan import title_text

        item = self.figure.item
        line = self.lines[0] if self.lines else self.figure.lines[0]
        x = self.xs[0] if self.xs else None
        try:
            return title_text(item.title_template, self.plan.scenario_text, self.overrides(line, x))
        except _core.Error:
            return str(item.title)

    def changed(self) -> list[str]:
        """The settings moved away from the plan's, as the page names them under the title:
        ``flows.transfer.mss = 750``, ``fast_a20: flows.f1.cc.alpha = 30``."""
        out = [f"{p} = {v.strip(chr(34))}" for p, v in self.params.items()]
        for line, ps in self.line_params.items():
            out += [f"{line}: {p} = {v.strip(chr(34))}" for p, v in ps.items()]
        return out

    def overrides(self, line: str, x: str | None) -> tuple[str, ...]:
        """The run's overrides as ``plan_runs`` writes them, then the settings the page moved
        (last, so they win over the figure's, the line's and the quick mode's). Unmoved, a run
        is the reproduction's own: the same resolved scenario, the same store key."""
        from ccsim.experiment.plan import quick_overrides, x_overrides

        item = self.figure.item
        line_ov = list(self.plan.lines[line].overrides)
        extra = quick_overrides(self.plan, item, self.quick)
        if x is None:
            x_ov = []
        elif x in self.figure.x_plan:  # a listed x, with the keys it sets together (x.also)
            x_ov = x_overrides(item, self.figure.x_plan[x])
        else:  # a value of the x axis's range (which refuses x.also)
            x_ov = [f"{item.x_path}={x}"]
        moved = [f"{p}={v}" for p, v in self.params.items()]
        for path, v in self.line_params.get(line, {}).items():
            r = self.figure.line_params[line][path][0]
            moved += [f"{p}={v}" for p in (path, *r.also)]
        return (*item.overrides, *line_ov, *x_ov, *extra, *moved)


def _shown(x: str, scale: float) -> float | str:
    """An x value in the axis's units, without binary noise (0.07 * 100 is 7.000000000000001);
    an x with a unit (``"10Mbps"``, paper 004's plan) is shown as written."""
    try:
        return float(f"{float(x) * scale:.12g}")
    except ValueError:
        return x.strip('"')
