# SPDX-License-Identifier: MIT
"""Paper reproductions: a declarative plan, its runs, figures and a report.

An experiment folder (``experiments/p001-spack/``) holds a base scenario and ``plan.toml``::

    id = "p001"
    title = "..."
    paper = "..."                       # the citation
    scenario = "scenario.toml"          # base scenario, relative to the folder
    seeds = 30                          # per point; quick_seeds for --quick
    quick_seeds = 3

    [metric]                            # what a point measures (default for every figure)
    table = "flows"                     # flows | links
    where = { name = "transfer" }       # row filter: column = value
    column = "completion_time_s"
    label = "transfer time (s)"

    [lines.reno]                        # the curves, each a set of overrides
    label = "Reno"
    set = { "flows.transfer.variant" = "reno" }

    [[figures]]
    id = "fig8"
    title = "Packet loss rate vs. transmission time (MSS = 1000 B)"
    x = { path = "links.wireless.loss.rate", values = [0.01, 0.05, 0.1], quick = [0.05],
          label = "loss rate (%)", scale = 100 }   # quick: the subset for --quick
    set = { "flows.transfer.mss" = 1000 }
    lines = ["reno", "spack"]

    [[claims]]                          # what the paper states, checked against our points
    figure = "fig8"
    text = "SPACK transfers finish sooner than Reno's at every loss rate"
    lower = "spack"                     # the line expected to be lower ...
    than = "reno"                       # ... than this one

    [[assumptions]]
    text = "The paper does not give the buffer size; we use ..."

``reproduce`` runs every (figure, line, x, seed) point through the sweep store (so it resumes),
gathers one table, computes means and 95 % confidence intervals, draws each figure as PNG and
SVG, and writes ``report.md`` with the figures, a table of every point, the paper's claims beside
what our points show, and every assumption. The data model (``results.parquet`` plus the
per-figure summary) is what an HTML report will read.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ccsim.scenario import format_value
from ccsim.sweep import RunSpec, Store, execute, gather, mean_ci

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


class PlanError(ValueError):
    """A plan file is invalid; the message names the field."""


@dataclass
class Metric:
    table: str
    column: str
    label: str
    where: dict[str, Any] = field(default_factory=dict)


@dataclass
class Line:
    id: str
    label: str
    overrides: list[str]


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


@dataclass
class Claim:
    figure: str
    text: str
    lower: str | None
    than: str | None


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


def _overrides(table: dict[str, Any], where: str) -> list[str]:
    if not isinstance(table, dict):
        raise PlanError(f"{where}: expected a table of PATH = value")
    return [f"{k}={format_value(v)}" for k, v in table.items()]


def _need(tbl: dict[str, Any], key: str, where: str) -> Any:
    if key not in tbl:
        raise PlanError(f"{where}.{key}: missing")
    return tbl[key]


def _metric(tbl: dict[str, Any], where: str, default: Metric | None) -> Metric:
    if not tbl:
        if default is None:
            raise PlanError(f"{where}: missing")
        return default
    allowed = {"table", "column", "label", "where"}
    unknown = sorted(set(tbl) - allowed)
    if unknown:
        raise PlanError(f"{where}.{unknown[0]}: unknown key; allowed: {', '.join(sorted(allowed))}")
    table = tbl.get("table", default.table if default else "flows")
    if table not in ("flows", "links"):
        raise PlanError(f'{where}.table: "{table}" is not one of flows, links')
    return Metric(
        table=table,
        column=str(_need(tbl, "column", where)),
        label=str(tbl.get("label", tbl["column"])),
        where=dict(tbl.get("where", {})),
    )


def load_plan(folder: Path) -> Plan:
    """Read and check ``folder/plan.toml``."""
    path = folder / "plan.toml"
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise PlanError(f"{path}: {e}") from e
    allowed = {"id", "title", "paper", "scenario", "seeds", "quick_seeds", "metric", "lines",
               "figures", "claims", "assumptions"}  # fmt: skip
    unknown = sorted(set(raw) - allowed)
    if unknown:
        raise PlanError(f"{unknown[0]}: unknown key; allowed: {', '.join(sorted(allowed))}")
    scenario_path = folder / str(_need(raw, "scenario", "plan"))
    default_metric = _metric(raw.get("metric", {}), "metric", None) if "metric" in raw else None
    lines = {}
    for lid, ltbl in raw.get("lines", {}).items():
        lines[lid] = Line(
            lid, str(ltbl.get("label", lid)), _overrides(ltbl.get("set", {}), f"lines.{lid}.set")
        )
    figures = []
    for i, f in enumerate(raw.get("figures", [])):
        where = f"figures[{i}]"
        x = _need(f, "x", where)
        for lid in _need(f, "lines", where):
            if lid not in lines:
                raise PlanError(
                    f'{where}.lines: no line named "{lid}"; lines are {", ".join(lines)}'
                )
        figures.append(
            Figure(
                id=str(_need(f, "id", where)),
                title=str(f.get("title", f["id"])),
                x_path=str(_need(x, "path", f"{where}.x")),
                x_values=list(_need(x, "values", f"{where}.x")),
                x_quick=list(x.get("quick", x["values"])),
                x_label=str(x.get("label", x["path"])),
                x_scale=float(x.get("scale", 1.0)),
                overrides=_overrides(f.get("set", {}), f"{where}.set"),
                lines=list(f["lines"]),
                metric=_metric(f.get("metric", {}), f"{where}.metric", default_metric),
            )
        )
    claims = [
        Claim(str(c.get("figure", "")), str(_need(c, "text", f"claims[{i}]")),
              c.get("lower"), c.get("than"))
        for i, c in enumerate(raw.get("claims", []))
    ]  # fmt: skip
    return Plan(
        id=str(_need(raw, "id", "plan")),
        title=str(raw.get("title", "")),
        paper=str(raw.get("paper", "")),
        folder=folder,
        scenario_text=scenario_path.read_text(encoding="utf-8"),
        seeds=int(raw.get("seeds", 30)),
        quick_seeds=int(raw.get("quick_seeds", 3)),
        lines=lines,
        figures=figures,
        claims=claims,
        assumptions=[str(a["text"]) for a in raw.get("assumptions", [])],
    )


def find_experiment(name: str, root: Path | None = None) -> Path:
    """``p001`` -> ``experiments/p001-spack`` (searched from ``root`` or the working directory)."""
    base = (root or Path.cwd()) / "experiments"
    direct = Path(name)
    if (direct / "plan.toml").exists():
        return direct
    matches = sorted(p for p in base.glob(f"{name}*") if (p / "plan.toml").exists())
    if not matches:
        known = sorted(p.name for p in base.glob("*") if (p / "plan.toml").exists())
        raise PlanError(
            f'no experiment "{name}" in {base}; known: {", ".join(known) or "none"} '
            "(run from the repository root, or give the folder)"
        )
    return matches[0]


def plan_runs(plan: Plan, quick: bool, seeds: int | None = None) -> list[RunSpec]:
    n = seeds if seeds is not None else (plan.quick_seeds if quick else plan.seeds)
    runs = []
    for fig in plan.figures:
        xs = fig.x_quick if quick else fig.x_values
        for lid in fig.lines:
            line = plan.lines[lid]
            for x in xs:
                ov = (*fig.overrides, *line.overrides, f"{fig.x_path}={format_value(x)}")
                tags = (("figure", fig.id), ("line", lid), ("x", x))
                for s in range(1, n + 1):
                    runs.append(RunSpec(plan.scenario_text, ov, s, tags))
    return runs


def point_values(records: list[dict[str, Any]], metric: Metric) -> pd.DataFrame:
    """One value per record: the metric column of the (single) row matching ``where``."""
    rows = []
    for rec in records:
        tbl = pd.DataFrame(rec[metric.table])
        for col, val in metric.where.items():
            tbl = tbl[tbl[col] == val]
        value = float(tbl[metric.column].iloc[0]) if len(tbl) else math.nan
        tags = rec["tags"]
        rows.append({"figure": tags["figure"], "line": tags["line"], "x": tags["x"],
                     "seed": rec["seed"], "value": value})  # fmt: skip
    return pd.DataFrame(rows)


def summarize(points: pd.DataFrame) -> pd.DataFrame:
    """Mean, 95 % CI half-width and n per (figure, line, x)."""
    out = []
    for (fig, line, x), grp in points.groupby(["figure", "line", "x"], sort=False):
        m, ci, n = mean_ci(list(grp["value"]))
        out.append({"figure": fig, "line": line, "x": x, "mean": m, "ci95": ci, "n": n,
                    "unfinished": int(grp["value"].isna().sum())})  # fmt: skip
    return pd.DataFrame(out)


def check_claim(claim: Claim, summary: pd.DataFrame) -> str:
    """What our points say about a claim of the form "line A lower than line B"."""
    if not claim.lower or not claim.than:
        return "not checked automatically"
    s = summary[summary["figure"] == claim.figure]
    a = s[s["line"] == claim.lower].set_index("x")
    b = s[s["line"] == claim.than].set_index("x")
    xs = [x for x in a.index if x in b.index]
    if not xs:
        return "no points to compare"
    lower = [x for x in xs if a.loc[x, "mean"] < b.loc[x, "mean"]]
    significant = [
        x for x in lower
        if a.loc[x, "mean"] + (a.loc[x, "ci95"] or 0) < b.loc[x, "mean"] - (b.loc[x, "ci95"] or 0)
    ]  # fmt: skip
    verdict = "holds" if len(lower) == len(xs) else ("partly holds" if lower else "does not hold")
    return (f"{verdict}: {claim.lower} is lower at {len(lower)} of {len(xs)} points "
            f"({len(significant)} with non-overlapping 95 % CIs)")  # fmt: skip


def draw_figure(fig: Figure, plan: Plan, summary: pd.DataFrame, out: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    s = summary[summary["figure"] == fig.id]
    f, ax = plt.subplots(figsize=(6.4, 4.2), dpi=120)
    for lid in fig.lines:
        d = s[s["line"] == lid].sort_values("x")
        if d.empty:
            continue
        xs = [float(x) * fig.x_scale for x in d["x"]]
        ax.errorbar(xs, d["mean"], yerr=d["ci95"].fillna(0), marker="o", capsize=3,
                    label=plan.lines[lid].label)  # fmt: skip
    ax.set_xlabel(fig.x_label)
    ax.set_ylabel(fig.metric.label)
    ax.set_title(f"{fig.id}: {fig.title}", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend()
    f.tight_layout()
    paths = [out / f"{fig.id}.png", out / f"{fig.id}.svg"]
    for p in paths:
        f.savefig(p, metadata={"Date": None} if p.suffix == ".svg" else None)
    plt.close(f)
    return paths


def write_report(plan: Plan, summary: pd.DataFrame, out: Path, quick: bool, n_runs: int) -> Path:
    lines = [f"# {plan.id}: {plan.title}", ""]
    if plan.paper:
        lines += [f"Paper: {plan.paper}", ""]
    mode = "quick (fewer points and seeds; for CI, not for conclusions)" if quick else "full"
    lines += [f"Mode: {mode}. Runs: {n_runs}. Every point: mean and 95 % confidence interval "
              "(Student t) over seeds 1..n.", ""]  # fmt: skip
    lines += ["## The paper's findings and ours", "", "| figure | the paper says | our points |",
              "|---|---|---|"]  # fmt: skip
    for c in plan.claims:
        lines.append(f"| {c.figure} | {c.text} | {check_claim(c, summary)} |")
    lines.append("")
    for fig in plan.figures:
        lines += [f"## {fig.id}: {fig.title}", "", f"![{fig.id}]({fig.id}.png)", ""]
        lines += [f"| {fig.x_label} | line | mean {fig.metric.label} | ± 95 % CI | n |",
                  "|---|---|---|---|---|"]  # fmt: skip
        s = summary[summary["figure"] == fig.id]
        for _, r in s.iterrows():
            ci = "-" if math.isnan(r["ci95"]) else f"{r['ci95']:.4g}"
            note = f" ({int(r['unfinished'])} unfinished)" if r["unfinished"] else ""
            x = float(r["x"]) * fig.x_scale
            lines.append(f"| {x:g} | {plan.lines[r['line']].label} | {r['mean']:.4g} | {ci} | "
                         f"{int(r['n'])}{note} |")  # fmt: skip
        lines.append("")
    if plan.assumptions:
        lines += ["## Assumptions", ""] + [f"- {a}" for a in plan.assumptions] + [""]
    path = out / "report.md"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


@dataclass
class Reproduction:
    report: Path
    results: Path
    executed: int
    cached: int


def reproduce(
    folder: Path,
    out: Path,
    quick: bool = False,
    workers: int | None = None,
    seeds: int | None = None,
    progress: bool = True,
) -> Reproduction:
    """Run (or resume) an experiment and write its figures and report into ``out``."""
    plan = load_plan(folder)
    out.mkdir(parents=True, exist_ok=True)
    runs = plan_runs(plan, quick, seeds)
    rep = execute(runs, Store(out / "runs"), workers=workers, progress=progress,
                  description=plan.id)  # fmt: skip
    frames = []
    for fig in plan.figures:
        recs = [r for r in rep.records if r["tags"]["figure"] == fig.id]
        frames.append(point_values(recs, fig.metric))
    points = pd.concat(frames, ignore_index=True)
    summary = summarize(points)
    flows = gather(rep.records, "flows")
    flows["x"] = flows["x"].astype(str)
    flows.to_parquet(out / "results.parquet", index=False)
    points.to_parquet(out / "points.parquet", index=False)
    summary.to_parquet(out / "summary.parquet", index=False)
    for fig in plan.figures:
        draw_figure(fig, plan, summary, out)
    report = write_report(plan, summary, out, quick, len(runs))
    return Reproduction(report, out / "results.parquet", rep.executed, rep.cached)


def default_out(plan_id: str, quick: bool) -> Path:
    base = Path(os.environ.get("CCSIM_RESULTS", "results"))
    return base / (plan_id + ("-quick" if quick else ""))


def run_cli(name: str, out: Path | None, quick: bool, workers: int | None,
            seeds: int | None) -> Path:  # fmt: skip
    folder = find_experiment(name)
    plan_id = load_plan(folder).id
    r = reproduce(folder, out or default_out(plan_id, quick), quick, workers, seeds)
    print(f"{r.executed} runs executed, {r.cached} reused from the store")
    return r.report


__all__: Sequence[str] = ["Plan", "PlanError", "find_experiment", "load_plan", "reproduce"]
