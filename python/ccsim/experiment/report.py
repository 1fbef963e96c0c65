# SPDX-License-Identifier: MIT
"""The Markdown report: the paper's findings beside ours, every figure, point and table.

What a newcomer needs to trust and re-run it comes first: the paper's reference, the ccsim
version and git commit that produced the report, the command that re-runs it, and the
topology and settings as the core resolved them. Each claim on a figure gets a table of its
paired comparison (x, mean difference, 95 % CI, significant?) under the figure.
"""

from __future__ import annotations

import math
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from ccsim import _core
from ccsim._tomllib import tomllib
from ccsim.scenario import PathLike

from .arguments import BOOL, COUNT, NONE, PATH, TEXT, arguments, of
from .claims import Judgement, judge_claim
from .paper import NO_NUMBER_TEXT, PaperValues, difference, fmt, matches
from .plan import (
    Claim,
    Figure,
    GridRow,
    GridTable,
    Metric,
    Plan,
    assumption_text,
    axis_value,
)
from .stats import compare_lines, deterministic
from .verdicts import DETERMINISTIC, headline_word

#: The variables that tie git to one repository (``git rev-parse --local-env-vars``, git
#: 2.39): git sets GIT_DIR for its hooks, and a user's shell may export it (a dotfiles
#: repository). Inherited, they made ``git -C folder`` read that repository: a reproduction
#: started from a hook or such a shell stated another repository's commit, or "unknown"
#: (GIT_DIR=.git, relative, read from the plan's folder) (campaign 39, issue 32). Git's own
#: submodule commands clear the same list before they work in another repository.
GIT_LOCAL_ENV = (
    "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_CONFIG", "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT", "GIT_OBJECT_DIRECTORY", "GIT_DIR", "GIT_WORK_TREE",
    "GIT_IMPLICIT_WORK_TREE", "GIT_GRAFT_FILE", "GIT_INDEX_FILE", "GIT_NO_REPLACE_OBJECTS",
    "GIT_REPLACE_REF_BASE", "GIT_PREFIX", "GIT_INTERNAL_SUPER_PREFIX", "GIT_SHALLOW_FILE",
    "GIT_COMMON_DIR",
)  # fmt: skip


def git_commit(folder: Path) -> str:
    """The commit checked out where ``folder`` is, with "+ local changes" when tracked files
    differ from it; "unknown" outside a git work tree or without git. The repository is the
    one ``folder`` is in, whatever repository the environment names (GIT_DIR)."""
    env = {k: v for k, v in os.environ.items() if k not in GIT_LOCAL_ENV}

    def git(*args: str) -> str:
        done = subprocess.run(["git", "-C", str(folder), *args], capture_output=True,
                              text=True, check=True, timeout=10, env=env)  # fmt: skip
        return done.stdout.strip()

    try:
        commit = git("rev-parse", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return f"{commit} + local changes" if dirty else commit


def _setting(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} {_setting(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_setting(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"  # as TOML writes it
    return str(value)


def parameter_rows(resolved_toml: str) -> list[tuple[str, str, str]]:
    """(part, name, settings) for each node, link, flow and other table of a resolved
    scenario, and one "run" row for its top-level keys."""
    tree = tomllib.loads(resolved_toml)
    rows = []
    top = {k: v for k, v in tree.items() if not isinstance(v, dict)}
    if top:
        rows.append(("run", "", ", ".join(f"{k} {_setting(v)}" for k, v in top.items())))
    for part, entries in tree.items():
        if not isinstance(entries, dict):
            continue
        named = part in ("nodes", "links", "flows")
        for name, body in entries.items() if named else [("", entries)]:
            if isinstance(body, dict):
                text = ", ".join(f"{k} {_setting(v)}" for k, v in body.items())
            else:
                text = _setting(body)
            rows.append((part.rstrip("s") if named else part, name, text))
    return rows


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


#: The verdict scale as every report states it once (docs/experiments.md has the details).
SCALE_TEXT = (
    "Each claim is judged at its points (x values, rows, lines or cells) on one scale. A point "
    "is judged when it has independent replicates: runs paired by seed, a 95 % interval of the "
    "difference (copies of one run are one sample and judge nothing). *holds*: the claimed "
    "direction is significant at the share of the points the claim asks for, the opposite at "
    "none; *partly holds*: at half that share or more, the opposite at none; *contradicted*: "
    "the opposite direction is significant at the share asked; *does not hold*: anything "
    "else; *not judged*: no point could be judged, and why. An effect claim sets our effect and "
    "its interval beside the paper's own. docs/experiments.md has the rules."
)


def replicates_sentence(summary: pd.DataFrame, tables: dict[str, pd.DataFrame] | None) -> str:
    """What the report's points stand on: how many seeds, and how many points came out the
    same in every seed (deterministic: no interval)."""
    frames = [summary[["n", "distinct"]]] if len(summary) and "distinct" in summary else []
    frames += [t[["n", "distinct"]] for t in (tables or {}).values()
               if len(t) and "distinct" in t]  # fmt: skip
    if not frames:
        return "No points."
    both = pd.concat(frames, ignore_index=True)
    n = int(both["n"].max())
    if n < 2:
        return ("One seed per point: no confidence intervals, and no claim can be judged "
                "(a claim needs independent replicates).")  # fmt: skip
    same = sum(deterministic(int(a), int(b)) for a, b in zip(both["n"], both["distinct"]))
    text = (f"Every point: the mean and its 95 % confidence interval (Student t) over up to {n} "
            f"seeds, each an independent replicate.")  # fmt: skip
    if same:
        text += (f" {same} of {len(both)} points came out the same in every seed "
                 f"({DETERMINISTIC.format(n=n)}): they have no interval and judge "
                 "nothing.")  # fmt: skip
    return text


def main_result_lines(plan: Plan, judged: list[tuple[Claim, Judgement]]) -> list[str]:
    """The section "The paper's main result": a paragraph per headline claim, its verdict in
    the paper's words (reproduced, partly, not reproduced, contradicted, not judged) first."""
    out = ["## The paper's main result", ""]
    heads = [(c, j) for c, j in judged if c.headline]
    if not heads:
        return [*out, "The plan marks none of its claims as the paper's main result.", ""]
    for c, j in heads:
        word = headline_word(j.verdict)
        text = c.text.rstrip(".")
        para = f"**{word[0].upper()}{word[1:]}.** {text}: {j.detail}."
        if c.note:
            para += f" {c.note}"
        out += [para, ""]
    return out


def _no_number_lines(plan: Plan) -> list[str]:
    """Once per report: the figures and tables of the paper whose numbers it does not give."""
    missing = [f.id for f in plan.figures if f.paper is None and not f.beyond_paper]
    missing += [t.id for t in plan.tables if t.paper is None and not t.beyond_paper]
    missing += [g.id for g in plan.grids if not g.paper and not g.beyond_paper]
    if not missing:
        return []
    return [f"The paper gives no numbers for {', '.join(missing)}: there, our lines are "
            "compared with each other by the claims above, not with the paper's values.",
            ""]  # fmt: skip


def _n_note(r: Any) -> str:
    """After a point's n: how many runs did not finish, and whether they were all one run."""
    note = ""
    if r.get("unfinished", 0):
        within = r.get("sim_seconds", math.nan)
        limit = f" within {within:g} s" if not math.isnan(within) else ""
        note += f" ({int(r['unfinished'])} did not finish{limit})"
    if deterministic(int(r["n"]), int(r.get("distinct", r["n"]))):
        note += " (identical runs)"
    return note


def _mean_text(r: Any) -> str:
    """A point's mean, or "did not finish within 40 s" when no run of it finished."""
    if math.isnan(r["mean"]):
        within = r.get("sim_seconds", math.nan)
        return "did not finish" + (f" within {within:g} s" if not math.isnan(within) else "")
    return f"{r['mean']:.4g}"


def _paired_table(fig: Figure, claim: Claim, points: pd.DataFrame) -> list[str]:
    a, b = str(claim.lower), str(claim.than)
    similar = claim.relation == "similar"
    cmp = compare_lines(points, fig.id, a, b, claim.margin if similar else None)
    if cmp.empty:
        return []
    unit = fig.metric.label
    eq_head = f" within ±{100 * claim.margin:g} % (TOST)? |" if similar else ""
    out = [f"{a} - {b}, paired by seed ({unit}; a significant difference: its 95 % CI "
           "excludes 0):", "",
           f"| {fig.x_label} | pairs | mean {b} | mean {a} - {b} | 95 % CI | p | "
           f"significant? |{eq_head}",
           "|---|---|---|---|---|---|---|" + ("---|" if similar else "")]  # fmt: skip
    for _, r in cmp.iterrows():
        x = axis_value(r["x"], fig.x_scale)
        if r["deterministic"]:
            ci, p, sig = "-", "-", DETERMINISTIC.format(n=int(r["n"]))
        elif r["n"] >= 2:
            ci = f"{r['low']:.3g} to {r['high']:.3g}"
            p = f"{r['p_value']:.2g}"
            sig = {-1: f"yes, {a} lower", 1: f"yes, {a} higher"}.get(int(r["sign"]), "no")
        else:
            ci, p, sig = "-", "-", "not judged"
        if r["n"] == 0:
            sig = "no pair finished"
        diff = fmt(r["diff"])
        if r["unfinished"]:
            # One line never finished, the other always did: no difference, a sign test.
            other = a if r["unfinished"] == b else b
            diff, ci = f"{other} finished, {r['unfinished']} never", "- (sign test)"
        row = (f"| {x} | {int(r['n'])} | {fmt(r['mean_b'])} | {diff} | {ci} | {p} "
               f"| {sig} |")  # fmt: skip
        if similar:
            judged = r["n"] >= 2 and not r["deterministic"]
            row += (" yes |" if bool(r["equivalent"]) else " no |") if judged else " - |"
        out.append(row)
    return [*out, ""]


def judge_claims(
    plan: Plan, points: pd.DataFrame, table_seeds: dict[str, pd.DataFrame] | None
) -> list[tuple[Claim, Judgement]]:
    """Each of the plan's claims with its judgement, in the plan's order: judged once per
    reproduction, for report.md and claims.csv alike (judging a paper's cells costs seconds)."""
    return [(c, judge_claim(c, points, table_seeds, plan=plan)) for c in plan.claims]


@arguments(
    plan=of(Plan),
    summary=of(pd.DataFrame, "a pandas DataFrame"),
    out=PATH,
    quick=BOOL,
    n_runs=COUNT,
    tables=of(dict, "a dict of DataFrames") | NONE,
    points=of(pd.DataFrame, "a pandas DataFrame") | NONE,
    table_seeds=of(dict, "a dict of DataFrames") | NONE,
    command=TEXT | NONE,
    judged=of(list, "a list of (claim, judgement) pairs") | NONE,
)
def write_report(
    plan: Plan,
    summary: pd.DataFrame,
    out: PathLike,
    quick: bool,
    n_runs: int,
    tables: dict[str, pd.DataFrame] | None = None,
    points: pd.DataFrame | None = None,
    table_seeds: dict[str, pd.DataFrame] | None = None,
    command: str | None = None,
    judged: list[tuple[Claim, Judgement]] | None = None,
) -> Path:
    """Write ``out/report.md``. ``summary``: a row per (figure, line, x); ``points``: a row per
    run (the paired comparisons need the seeds); ``tables``: a summary table's means per line,
    ``table_seeds`` its rows per line and seed (the table claims read these); ``command``:
    the command line that re-runs this report; ``judged``: each claim with its judgement
    (:func:`judge_claims`), when the caller has them already (the record reads them too)."""
    points = points if points is not None else pd.DataFrame()
    lines = [f"# {plan.id}: {plan.title}", ""]
    if plan.paper:
        lines += [f"**Paper:** {plan.paper}", ""]
    # The engine names the build that ran (ccsim._core.ENGINE, a hash of the core's sources);
    # the commit is the one of the plan's checkout. A ccsim installed from a wheel, by pipx or
    # from another checkout is not built from that commit: an older build run at the root of
    # a newer checkout said "Produced by ccsim 0.1.0, git commit <the newer one>" (campaign
    # 61, issue 32).
    lines += [f"Produced by ccsim {_core.__version__} (engine {_core.ENGINE}) from the plan at "
              f"git commit {git_commit(plan.folder)}."]  # fmt: skip
    if command:
        lines += [f"Re-run it from the repository's root with `{command}` (finished runs are "
                  "reused from the store in the output folder)."]  # fmt: skip
    mode = "quick (fewer points and seeds; for CI, not for conclusions)" if quick else "full"
    lines += ["", f"Mode: {mode}. Runs: {n_runs}. {replicates_sentence(summary, tables)}", ""]
    if judged is None:
        seeds_of = table_seeds if table_seeds is not None else tables
        judged = judge_claims(plan, points, seeds_of)
    lines += main_result_lines(plan, judged)
    lines += ["## The paper's findings and ours", "", SCALE_TEXT, "",
              "| figure | the paper says | our verdict and the evidence |",
              "|---|---|---|"]  # fmt: skip
    for c, j in judged:
        lines.append(f"| {c.figure} | {_cell(c.text)} | {_cell(j.text)} |")
    lines.append("")
    lines += _setup(plan, quick)
    lines += _no_number_lines(plan)
    for fig in plan.figures:
        lines += [f"## {fig.id}: {fig.title}", "", f"![{fig.id}]({fig.id}.png)", ""]
        pv = fig.paper
        if pv is not None:
            lines += [f"The paper's values (hollow markers): {_cell(pv.source)}; a point "
                      f"matches when our whole 95 % CI is within {pv.describe_tolerance()} of "
                      "the paper's value (without an interval: our mean).", ""]  # fmt: skip
        head = " paper | ours - paper | matches? |" if pv is not None else ""
        lines += [f"| {fig.x_label} | line | mean {fig.metric.label} | ± 95 % CI | n |{head}",
                  "|---|---|---|---|---|" + ("---|---|---|" if pv is not None else "")]  # fmt: skip
        s = summary[summary["figure"] == fig.id]
        for _, r in s.iterrows():
            ci = "-" if math.isnan(r["ci95"]) else f"{r['ci95']:.4g}"
            note = _n_note(r)
            x = axis_value(r["x"], fig.x_scale)
            row = (f"| {x} | {plan.lines[r['line']].label} | {_mean_text(r)} | {ci} | "
                   f"{int(r['n'])}{note} |")  # fmt: skip
            if pv is not None:
                paper = pv.get(r["line"], r["x"])
                if paper is None:
                    row += f" {NO_NUMBER_TEXT} | - | - |"
                else:
                    ok = matches(paper, float(r["mean"]), float(r["ci95"]), int(r["n"]), pv)
                    row += (f" {fmt(paper)} | {difference(float(r['mean']), paper)} | "
                            f"{'yes' if ok else 'no'} |")  # fmt: skip
            lines.append(row)
        lines.append("")
        if len(points):
            for c in plan.claims:
                if c.table is None and c.figure == fig.id and c.lower and c.than:
                    lines += _paired_table(fig, c, points)
    for grid in plan.grids:
        lines += grid_lines(grid, plan, summary)
    for sf in plan.series_figures:
        lines += [f"## {sf.id}: {sf.title}", "", f"![{sf.id}]({sf.id}.png)", ""]
    for t in plan.tables:
        df = (tables or {}).get(t.id)
        lines += [f"## {t.id}: {t.title}", "",
                  f"Measured after {t.from_s:g} s; convergence: smoothed over {t.window_s:g} s, "
                  f"Jain's index at or above {t.jain_threshold:g} to the end.", "",
                  "Rate swing: each flow's coefficient of variation over the trace samples, "
                  "averaged over the flows (lower is steadier).", "",
                  "Utilization: tested = the listed flows' goodput over the capacity; "
                  "background = the link's utilization (every packet, headers included) less "
                  "the tested.", "",
                  "| line | tested utilization | background | link utilization | Jain's index "
                  "| loss rate | convergence (s) | rate swing | shares |",
                  "|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
        if df is not None:
            for _, r in df.iterrows():
                lines.append(f"| {plan.lines[r['line']].label} | "
                             f"{_pm(r, 'tested_utilization', '.3f')} | "
                             f"{_pm(r, 'background_utilization', '.3f')} | "
                             f"{_pm(r, 'utilization', '.3f')} | {_pm(r, 'jain', '.3f')} | "
                             f"{_pm(r, 'loss_rate', '.2e')} | {_convergence(r)} | "
                             f"{_pm(r, 'rate_cv', '.2f')} | {r['shares']} |")  # fmt: skip
            if df["n"].max() > 1:
                lines += ["", "Each cell: the mean over the seeds ± the half-width of its 95 % "
                          "interval; shares from the mean shares; convergence over the seeds "
                          "that converged (how many is said where not all did)."]  # fmt: skip
        lines.append("")
        lines += _summary_paper_lines(t.paper, (table_seeds or {}).get(t.id), plan)
    if plan.assumptions:
        said = [assumption_text(plan, a, quick) for a in plan.assumptions]
        lines += ["## Assumptions", ""] + [f"- {a}" for a in said] + [""]
    from ccsim.result import naming_the_file

    path = Path(out) / "report.md"
    with naming_the_file(path):  # a write's error names no file (campaign 53, issue 32)
        path.write_text("\n".join(lines), encoding="utf-8")
    return path


def _pm(row: Any, col: str, spec: str) -> str:
    """A summary-table cell: the mean, and ``± half-width`` where several seeds give one."""
    half = row.get(f"{col}_ci95", math.nan)
    text = format(row[col], spec)
    return text if math.isnan(half) else f"{text} ± {format(half, spec)}"


def _convergence(row: Any) -> str:
    """The convergence cell: "not converged" when no seed did, the mean over those that did
    (with "k of n seeds" when only some did)."""
    n, k = int(row.get("n", 1)), int(row.get("converged", 1))
    if k == 0 or math.isnan(row["convergence_s"]):
        return "not converged" if n == 1 else f"not converged ({n} seeds)"
    text = _pm(row, "convergence_s", ".0f")
    return text if k == n else f"{text} ({k} of {n} seeds)"


@dataclass(frozen=True)
class GridCell:
    """One cell of a grid table: our summary (mean, 95 % half-width, seeds; n = 0 when not run)
    and the paper's value where it gives one."""

    mean: float
    ci95: float
    n: int
    paper: float | None
    pv: PaperValues | None

    @property
    def matches(self) -> bool:
        """Ours matches the paper's: our whole CI (without one, our mean) within its tolerance."""
        if self.paper is None or self.pv is None or not self.n:
            return False
        return matches(self.paper, self.mean, self.ci95, self.n, self.pv)

    @property
    def text(self) -> str:
        """The cell as report.md shows it: "ours / paper", ours with its CI when there are
        several seeds, a ✓ when it matches the paper, "paper: no number" where the paper has
        none for this cell; ours alone where the paper has no number for the whole metric."""
        ours = fmt(self.mean) + (
            f" ± {self.ci95:.2g}" if self.n >= 2 and not math.isnan(self.ci95) else ""
        )
        if self.n == 0:
            ours = "not run"
        if self.pv is None:
            return ours
        if self.paper is None:
            return f"{ours} / {NO_NUMBER_TEXT}"
        return f"{ours} / {fmt(self.paper)}{' ✓' if self.matches else ''}"


def grid_rows(
    grid: GridTable, summary: pd.DataFrame
) -> list[tuple[GridRow, Metric, list[GridCell]]]:
    """A grid table's rows as papers print them: one per (row, metric), a cell per line. Every
    view of a grid (report.md, the site's HTML) reads its cells from here."""
    ours = {}
    for m in grid.metrics:
        s = summary[summary["figure"] == grid.cell_id(m)] if len(summary) else summary
        for _, r in s.iterrows():
            ours[(m.id, str(r["x"]), str(r["line"]))] = r
    out = []
    for row in grid.rows:
        for m in grid.metrics:
            pv = grid.paper.get(m.id)
            cells = []
            for ln in grid.lines:
                r = ours.get((m.id, row.id, ln))
                mean, ci, n = ((float(r["mean"]), float(r["ci95"]), int(r["n"])) if r is not None
                               else (math.nan, math.nan, 0))  # fmt: skip
                paper = pv.get(row.id, ln) if pv is not None else None
                cells.append(GridCell(mean, ci, n, paper, pv))
            out.append((row, m, cells))
    return out


def grid_lines(grid: GridTable, plan: Plan, summary: pd.DataFrame) -> list[str]:
    """A grid table in report.md: a row per (row, metric) as papers print them, a column per
    line, each cell "ours / paper"."""
    out = [f"## {grid.id}: {_cell(grid.title)}", ""]
    sources = sorted({pv.source for pv in grid.paper.values()})
    if sources:
        tol = "; ".join(f"{m.label}: {grid.paper[m.id].describe_tolerance()}"
                        for m in grid.metrics if m.id in grid.paper)  # fmt: skip
        out += [f"Each cell: ours / the paper's ({', '.join(sources)}). ✓: our whole 95 % CI "
                f"is within the paper's tolerance ({tol}; without an interval, our mean "
                "is).", ""]  # fmt: skip
    else:
        out += ["Each cell: ours (the paper has no numbers for this table).", ""]
    out += ["| row | metric | " + " | ".join(_cell(plan.lines[ln].label) for ln in grid.lines)
            + " |", "|---|---|" + "---|" * len(grid.lines)]  # fmt: skip
    total = held = 0
    for row, m, cells in grid_rows(grid, summary):
        for c in cells:
            if c.paper is not None and c.n:
                total += 1
                held += c.matches
        out.append(f"| {_cell(row.label)} | {_cell(m.label)} | "
                   + " | ".join(_cell(c.text) for c in cells) + " |")  # fmt: skip
    out.append("")
    if total:
        out += [f"Cells matching the paper: {held} of {total}.", ""]
    return out


def _summary_paper_lines(pv: PaperValues | None, seeds: pd.DataFrame | None,
                         plan: Plan) -> list[str]:  # fmt: skip
    """The paper's numbers for a summary table's columns beside ours."""
    if pv is None:
        return []  # said once per report (_no_number_lines)
    out = [f"The paper's values ({_cell(pv.source)}; a match: our whole 95 % CI within "
           f"{pv.describe_tolerance()} of it, or without an interval our mean):", "",
           "| line | column | ours | paper | ours - paper | matches? |",
           "|---|---|---|---|---|---|"]  # fmt: skip
    from .stats import mean_ci

    for (line, col), paper in pv.values.items():
        vals = []
        if seeds is not None and col in seeds:
            vals = [float(v) for v in seeds[seeds["line"] == line][col] if not math.isnan(v)]
        m, ci, n = mean_ci(vals) if vals else (math.nan, math.nan, 0)
        ok = "yes" if n and matches(paper, m, ci, n, pv) else "no"
        out.append(f"| {_cell(plan.lines[line].label)} | {col} | {fmt(m)} | {fmt(paper)} | "
                   f"{difference(m, paper)} | {ok} |")  # fmt: skip
    return [*out, ""]


def _setup(plan: Plan, quick: bool) -> list[str]:
    """The base scenario as the core resolved it (quick overrides applied in quick mode), then
    what each line and figure changes."""
    resolved = _core.validate(plan.scenario_text, list(plan.quick_overrides) if quick else [], 1)
    out = ["## Setup", "",
           "The base scenario as ccsim resolved it (each run then sets its seed, its line's "
           "and its figure's settings):", "",
           "| part | name | settings |", "|---|---|---|"]  # fmt: skip
    out += [f"| {p} | {n} | {_cell(t)} |" for p, n, t in parameter_rows(resolved)]
    out += ["", "| line | label | settings |", "|---|---|---|"]
    for ln in plan.lines.values():
        out.append(f"| {ln.id} | {_cell(ln.label)} | {_cell(', '.join(ln.overrides) or '-')} |")
    out += ["", "| figure or table | x | settings |", "|---|---|---|"]
    for f in plan.figures:
        xs = f.x_quick if quick else f.x_values
        x = f"{f.x_path} = {', '.join(str(v) for v in xs)}"
        out.append(f"| {f.id} | {_cell(x)} | {_cell(', '.join(f.overrides) or '-')} |")
    for item in [*plan.series_figures, *plan.tables]:
        out.append(f"| {item.id} | - | {_cell(', '.join(item.overrides) or '-')} |")
    for g in plan.grids:
        rows = [r for r in g.rows if r.id in g.quick_rows] if quick else g.rows
        for r in rows:
            out.append(f"| {g.id}, row {r.id} | - | "
                       f"{_cell(', '.join([*g.overrides, *r.overrides]) or '-')} |")  # fmt: skip
    if quick and plan.quick_overrides:
        out += ["", f"Quick mode adds: {_cell(', '.join(plan.quick_overrides))}."]
    return [*out, ""]
