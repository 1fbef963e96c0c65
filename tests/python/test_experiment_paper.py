# SPDX-License-Identifier: MIT
"""The paper's own numbers in a plan: the ``paper`` key, grid tables, paper markers on figures
and claims that our cells match the paper's."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest
from conftest import playwright_or_skip

from ccsim import experiment
from ccsim.experiment.claims import check_claim, paper_cells
from ccsim.experiment.paper import paper_number, read_paper
from ccsim.experiment.runs import plan_runs
from ccsim.site import grid_table_html, point_figure

ROOT = Path(__file__).resolve().parents[2]

SCENARIO = """
duration = "2s"
[nodes]
a = "host"
b = "host"
[links.l]
a = "a"
b = "b"
rate = "10Mbps"
delay = "5ms"
loss = { type = "uniform", rate = 0.0, direction = "a_to_b" }
[flows.f1]
type = "tcp"
src = "a"
dst = "b"
[flows.f2]
type = "tcp"
src = "a"
dst = "b"
"""

PLAN = """
id = "g"
title = "grid test"
scenario = "scenario.toml"
seeds = 1
quick_seeds = 1

[metric]
table = "flows"
where = { name = "f1" }
column = "goodput_bps"
unit = "Mbit/s"
label = "f1 goodput (bit/s)"

[lines.reno]
label = "Reno"
set = { "tcp.variant" = "reno" }

[lines.sack]
label = "SACK"
set = { "tcp.variant" = "sack" }

[[figures]]
id = "loss"
title = "f1 goodput against loss"
x = { path = "links.l.loss.rate", values = [0.0, 0.01, 0.02] }
lines = ["reno", "sack"]
metric = { table = "flows", where = { name = "f1" }, column = "goodput_bps", label = "goodput" }

[figures.paper]
source = "Table 9"
relative_tolerance = 0.1

[figures.paper.values]
reno = ["4.9Mbps", "-", "3Mbps"]
sack = [4900000, "4Mbps", "-"]

[[tables]]
id = "grid"
kind = "grid"
title = "a grid of losses"
lines = ["reno", "sack"]
rows = [
  { id = "clean", label = "no loss", set = { "links.l.loss.rate" = 0.0 } },
  { id = "lossy", label = "2 % loss", set = { "links.l.loss.rate" = 0.02 } },
]

[[tables.metrics]]
id = "total"
table = "flows"
where = { name = ["f1", "f2"] }
aggregate = "sum"
column = "goodput_bps / 1e6"
unit = "Mbit/s"
label = "goodput of f1 + f2 (Mbit/s)"

[tables.metrics.paper]
source = "Table 10"
tolerance = "1Mbps"

[tables.metrics.paper.values]
clean = [9.4, "-"]
lossy = [1000.0, 5.0]

[[tables.metrics]]
id = "retx"
table = "flows"
where = { name = ["f1", "f2"] }
aggregate = "sum"
column = "100 * retransmits / packets_sent"
unit = "%"
label = "retransmission ratio (%)"

[[claims]]
table = "grid"
metric = "total"
matches_paper = true
text = "the grid's totals match the paper's"

[[claims]]
figure = "loss"
matches_paper = true
text = "the figure matches the paper"
"""


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    d = tmp_path / "experiments" / "g-grid"
    d.mkdir(parents=True)
    (d / "scenario.toml").write_text(SCENARIO)
    (d / "plan.toml").write_text(PLAN)
    return d


def _edit(folder: Path, old: str, new: str) -> None:
    text = (folder / "plan.toml").read_text()
    assert old in text, old
    (folder / "plan.toml").write_text(text.replace(old, new, 1))


def test_a_tolerance_with_a_unit_is_reported_as_written_and_a_share_as_absolute() -> None:
    share = read_paper({"source": "T", "tolerance": "2%", "values": {}}, "p", None, [], [], "", "")
    assert share.tolerance == pytest.approx(0.02)
    assert share.describe_tolerance() == "±2% (absolute)"
    points = read_paper({"source": "T", "tolerance": 1.0, "values": {}}, "p", "%", [], [], "", "")
    assert points.describe_tolerance() == "±1 percentage points"


def test_paper_values_with_units_are_converted_to_the_metrics_unit() -> None:
    assert paper_number("9.4Mbps", "Mbit/s") == pytest.approx(9.4)
    assert paper_number("9.4Mbps", None) == pytest.approx(9.4e6)
    assert paper_number("14.4%", "%") == pytest.approx(14.4)
    assert paper_number("99.96%", None) == pytest.approx(0.9996)
    assert paper_number("6ms", "s") == pytest.approx(0.006)
    assert paper_number(92.6, "Mbit/s") == 92.6
    assert paper_number("-", "%") is None


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            'reno = ["4.9Mbps", "-", "3Mbps"]',
            'reno = ["4.9Mbps", "-"]',
            'figures[0].paper.values.reno: 2 values for 3 x values; give one per x value, "-" '
            "where the paper gives no number",
        ),
        (
            'reno = ["4.9Mbps", "-", "3Mbps"]',
            'cubic = ["4.9Mbps", "-", "3Mbps"]',
            'figures[0].paper.values.cubic: "cubic" is not a line of this item; lines are '
            "reno, sack",
        ),
        (
            'clean = [9.4, "-"]',
            'clean = [9.4, "5%"]',
            'tables[0].metrics[0].paper.values.clean[1]: "5%" is a share; the metric\'s unit '
            "Mbit/s is a rate",
        ),
        (
            'reno = ["4.9Mbps", "-", "3Mbps"]',
            'reno = ["4.9Mbps", "fast", "3Mbps"]',
            'figures[0].paper.values.reno[1]: "fast" is not a number, a number with a unit (bps, '
            "bit/s, kbps, kbit/s, Mbps, Mbit/s, Gbps, Gbit/s, %, fraction, s, ms, us, B, KB, KiB, "
            'MB, MiB) or "-" for no number',
        ),
        (
            'source = "Table 9"\n',
            "",
            'figures[0].paper.source: missing; say where the numbers are ("Table 1", "Fig. 9, '
            'read off the graph")',
        ),
        (
            "relative_tolerance = 0.1",
            "relative_tolerance = -1",
            "figures[0].paper.relative_tolerance: -1 must be a number >= 0 (a share of the "
            "paper's value: 0.1 is 10 %)",
        ),
        (
            "lossy = [1000.0, 5.0]",
            "huge = [1000.0, 5.0]",
            'tables[0].metrics[0].paper.values.huge: "huge" is not a row of this item; rows are '
            "clean, lossy",
        ),
        (
            'aggregate = "sum"\ncolumn = "goodput_bps / 1e6"',
            'column = "goodput_bps / 1e6"',
            "tables[0].metrics[0].where.name: a list of values matches several rows; give "
            'aggregate = "sum" or "mean"',
        ),
        (
            'unit = "Mbit/s"\nlabel = "goodput of',
            'unit = "furlongs"\nlabel = "goodput of',
            'tables[0].metrics[0].unit: "furlongs" is not a unit; units are bps, bit/s, kbps, '
            "kbit/s, Mbps, Mbit/s, Gbps, Gbit/s, %, fraction, s, ms, us, B, KB, KiB, MB, MiB",
        ),
        (
            'metric = "total"',
            'metric = "retx"',
            'claims[0].metric: "retx" is not a metric of grid with paper values; those are total',
        ),
        (
            'figure = "loss"\nmatches_paper = true',
            'figure = "loss"\nmatches_paper = true\nlower = "reno"',
            "claims[1].lower: not a key of a matches_paper claim; it takes figure or table, "
            "text, lines, metric, min_significant_share, headline, note",
        ),
        (
            'rows = [\n  { id = "clean"',
            'quick_rows = ["dirty"]\nrows = [\n  { id = "clean"',
            'tables[0].quick_rows: "dirty" is not the id of a row',
        ),
    ],
)
def test_a_wrong_paper_key_is_one_error_naming_its_field(
    folder: Path, old: str, new: str, message: str
) -> None:
    _edit(folder, old, new)
    with pytest.raises(experiment.PlanError) as err:
        experiment.load_plan(folder)
    assert str(err.value) == message


def test_a_grid_cells_run_is_shared_with_a_figures_point_and_simulated_once(
    folder: Path, tmp_path: Path
) -> None:
    plan = experiment.load_plan(folder)
    runs = plan_runs(plan, quick=False)
    keys = {r.key() for r in runs}
    # 6 figure points + 4 grid cells; the grid's two rows are the figure's x = 0 and 0.02.
    assert len(runs) == 10 and len(keys) == 6
    r = experiment.reproduce(folder, tmp_path / "out", workers=1, progress=False)
    assert r.executed == 6 and r.cached == 0
    again = experiment.reproduce(folder, tmp_path / "out", workers=1, progress=False)
    assert again.executed == 0 and again.cached == 6


@pytest.fixture
def reproduced(folder: Path, tmp_path: Path) -> tuple[experiment.Plan, Path]:
    out = tmp_path / "results" / "g"
    experiment.reproduce(folder, out, workers=1, progress=False)
    return experiment.load_plan(folder), out


def test_a_grid_tables_cell_shows_our_value_and_the_papers_side_by_side(
    reproduced: tuple[experiment.Plan, Path],
) -> None:
    plan, out = reproduced
    report = (out / "report.md").read_text()
    summary = pd.read_parquet(out / "summary.parquet")
    clean = summary[(summary["figure"] == "grid.total") & (summary["x"] == "clean")]
    reno = float(clean[clean["line"] == "reno"]["mean"].iloc[0])
    assert 1.0 < reno < 10.0
    # Reno, no loss: ours / the paper's 9.4 Mbit/s, a tick when within 1 Mbit/s.
    mark = " ✓" if abs(reno - 9.4) <= 1.0 else ""
    row = next(ln for ln in report.splitlines() if ln.startswith("| no loss | goodput of"))
    assert row.split(" | ")[2] == f"{reno:.4g} / 9.4{mark}"
    assert row.endswith("/ paper: no number |")
    # A metric the paper gives no number for shows ours alone, not "paper: no number" twice.
    retx = next(ln for ln in report.splitlines() if ln.startswith("| 2 % loss | retrans"))
    assert "paper" not in retx and "/" not in retx.split(" | ", 2)[2]
    # No mark for the site in the Markdown (the site finds the grid by its section heading).
    assert "[grid:" not in report
    # The HTML table: the same text, both values as data and in the hover text.
    cell = re.search(r'<td class="grid-cell" title="([^"]*)" data-ours="([^"]*)" '
                     r'data-paper="9.4">([^<]*)</td>', grid_table_html(plan.grids[0], plan,
                                                                         summary))  # fmt: skip
    assert cell is not None
    assert float(cell.group(2)) == pytest.approx(reno)
    assert cell.group(3) == f"{reno:.4g} / 9.4{mark}"
    assert "paper 9.4 (Table 10)" in cell.group(1)


def test_a_figure_draws_the_papers_values_as_markers_exactly_at_the_papers_points(
    reproduced: tuple[experiment.Plan, Path],
) -> None:
    plan, out = reproduced
    summary = pd.read_parquet(out / "summary.parquet")
    fig = plan.figures[0]
    drawn, count = point_figure(fig, plan, summary)
    paper = [t for t in drawn.data if t.name.endswith(": paper")]
    # Reno has values at x = 0 and 0.02, SACK at 0 and 0.01 ("-" elsewhere): 4 markers.
    assert [(t.name, list(t.x), list(t.y)) for t in paper] == [
        ("Reno: paper", [0.0, 0.02], [4.9e6, 3e6]),
        ("SACK: paper", [0.0, 0.01], [4.9e6, 4e6]),
    ]
    assert all(t.marker.symbol == "circle-open" for t in paper)
    ours = {t.name: t for t in drawn.data if not t.name.endswith(": paper")}
    assert paper[0].marker.color == ours["Reno"].line.color
    assert count == 4 + 6
    assert "Table 9" in paper[0].hovertemplate
    report = (out / "report.md").read_text()
    assert "| 0.01 | Reno |" in report
    reno_001 = next(ln for ln in report.splitlines() if ln.startswith("| 0.01 | Reno |"))
    assert "| paper: no number | - | - |" in reno_001


def test_a_claim_that_cells_match_the_paper_counts_them(
    reproduced: tuple[experiment.Plan, Path],
) -> None:
    plan, out = reproduced
    points = pd.read_parquet(out / "points.parquet")
    cells = [c for c in paper_cells(plan, points) if c.item == "grid.total"]
    assert {(c.line, c.at) for c in cells} == {("reno", "clean"), ("reno", "lossy"),
                                               ("sack", "lossy")}  # fmt: skip
    within = sum(c.mean_within for c in cells)
    # The lossy Reno cell's paper value (1000 Mbit/s) can never match.
    assert not next(c for c in cells if c.at == "lossy" and c.line == "reno").mean_within
    # One run per cell: its mean is shown against the tolerance, but nothing is judged.
    verdict = check_claim(plan.claims[0], points, {}, plan=plan)
    assert verdict == (
        f"not judged: our mean within ±1Mbps of the paper's value at {within} of 3 cells "
        "(Table 10) (no significance can be judged: fewer than 2 seeds per point, so no 95 % CIs)"
    )


def test_with_several_seeds_a_cell_matches_when_our_whole_ci_is_within_the_tolerance(
    folder: Path,
) -> None:
    plan = experiment.load_plan(folder)

    def pts(values: list[float]) -> pd.DataFrame:
        n = len(values)
        return pd.DataFrame({"figure": ["loss"] * n, "line": ["reno"] * n, "x": [0.0] * n,
                             "seed": range(1, n + 1), "value": values,
                             "run": [f"r{i}" for i in range(n)]})  # fmt: skip

    # Five seeds around 4.9 Mbit/s (the paper's value), a CI of about ±0.05: inside ±10 %.
    points = pts([4.85e6, 4.9e6, 4.95e6, 4.88e6, 4.92e6])
    cells = [c for c in paper_cells(plan, points) if c.item == "loss" and c.n]
    assert len(cells) == 1 and cells[0].n == 5 and cells[0].matches and not cells[0].off
    verdict = check_claim(plan.claims[1], points, {}, plan=plan)
    assert verdict.startswith(
        "holds: 1 of 1 cells match the paper (our whole 95 % CI within its tolerance; the "
        "claim needs 50 %), 0 are significantly off"
    )
    assert verdict.endswith("; 3 cells without a run of ours")
    # A relative tolerance is said once (p000's evidence read "... of the paper's value of the
    # paper's value").
    assert "our mean within ±10 % of the paper's value at 1 of 1 cells" in verdict
    # Two seeds at 4 and 6: the paper's value is inside our CI (±12.7), which is far wider
    # than the tolerance: neither a match nor off (before, "inside our CI" was a match).
    cell = next(c for c in paper_cells(plan, pts([4e6, 6e6])) if c.item == "loss" and c.n)
    assert not cell.matches and not cell.off
    # Significantly off: 3 Mbit/s in every seed but a little noise.
    points = pts([3.0e6, 3.01e6, 2.99e6, 3.02e6, 2.98e6])
    assert check_claim(plan.claims[1], points, {}, plan=plan).startswith("does not hold: 0 of 1")
    # Copies of one run: not judged.
    points = pts([4.9e6] * 5).assign(run="same")
    assert check_claim(plan.claims[1], points, {}, plan=plan).startswith("not judged")


def test_a_paper_cell_takes_exactly_its_figure_line_and_x_among_interleaved_points(
    folder: Path,
) -> None:
    # Issue 33: the points are split by (figure, line) once instead of filtered per cell; rows
    # of another line, another x or another figure, interleaved with the cell's, stay out.
    plan = experiment.load_plan(folder)
    rows = [("loss", "reno", 0.0, 4.8e6), ("loss", "sack", 0.0, 9e6), ("other", "reno", 0.0, 1),
            ("loss", "reno", 1.0, 7e6), ("loss", "reno", 0.0, 5.0e6), ("loss", "reno", 0.0, 4.9e6),
            ("loss", "reno", 0.0, float("nan"))]  # fmt: skip
    columns = ("figure", "line", "x", "value")
    points = pd.DataFrame({c: [r[i] for r in rows] for i, c in enumerate(columns)})
    points["seed"] = range(1, len(rows) + 1)
    points["run"] = [f"r{i}" for i in range(len(rows))]
    cell = next(c for c in paper_cells(plan, points) if c.item == "loss" and c.n)
    assert (cell.line, cell.at, cell.n, cell.distinct) == ("reno", 0.0, 3, 3)
    assert cell.mean == pytest.approx(4.9e6)


@pytest.mark.parametrize("name", ["p000", "p001", "p002", "p003", "p004", "m01"])
def test_every_figure_that_names_a_link_names_it_as_a_reader_of_the_paper_would(
    name: str,
) -> None:
    # Campaign 2, Part A: p002's utilization figures said "utilization of bottleneck:a_to_b",
    # the scenario's NAME:DIRECTION, on the y axis (PNG and site).
    plan = experiment.load_plan(experiment.find_experiment(name, ROOT))
    for fig in plan.series_figures:
        if fig.kind in ("link_series", "packet_trace"):  # the kinds that show link_name()
            assert not re.search(r":(a_to_b|b_to_a)$", fig.link_name()), (fig.id, fig.link)


@pytest.mark.parametrize("name", ["p000", "p001", "p002", "p003", "p004", "m01"])
def test_every_papers_plan_loads_and_checks_with_its_paper_values(name: str) -> None:
    plan = experiment.load_plan(experiment.find_experiment(name, ROOT))
    experiment.check_plan(plan, quick=True)
    if name == "p000":
        assert [g.id for g in plan.grids] == [
            "table1_wan",
            "table2_lan",
            "retx_sources",
            "unstated_map",
        ]
        # Tables 1 and 2: 4 backgrounds x 7 senders x 2 metrics each, every cell a number; the
        # table of where retransmissions come from and the map are ours alone.
        assert [sum(len(pv.values) for pv in g.paper.values()) for g in plan.grids] == [
            56,
            56,
            0,
            0,
        ]
        assert plan.grids[0].paper["retx"].get("10x10", "er04") == 2.2
        # The report opens with the paper's main result judged as effects: the gain at S = 0.4
        # on both tables and the cut in retransmissions (issue 29).
        headline = [(c.figure, c.relation, c.effect) for c in plan.claims if c.headline]
        assert headline == [
            ("table1_wan.throughput", "effect", "ratio"),
            ("table2_lan.throughput", "effect", "ratio"),
            ("table1_wan.retx", "effect", "difference"),
        ]
        # Every setting that decides the result is stated in the assumptions.
        said = " ".join(plan.assumptions)
        for setting in ("50 ms ticks", "minimum RTO of 1 s", "target utilization 0.9",
                        "averaging interval 1 ms", "early or partial packet discard",
                        "CBR source's phase"):  # fmt: skip
            assert setting in said, setting
        assert plan.grids[1].paper["throughput"].get("none", "reno") == 94.2
        # The curve against S is Table 1's 10 x 10 row: the same six runs, not six more.
        runs = plan_runs(plan, quick=False)
        keys = {tag: {r.key() for r in runs if dict(r.tags)["figure"] == tag}
                for tag in ("wan_10x10_s", "table1_wan", "table2_lan")}  # fmt: skip
        n = plan.seeds
        assert len(keys["wan_10x10_s"]) == 6 * n and keys["wan_10x10_s"] <= keys["table1_wan"]
        # Tables 1 and 2: 2 x 4 backgrounds x 7 senders, every one a run of its own per seed.
        assert len(keys["table1_wan"] | keys["table2_lan"] | keys["wan_10x10_s"]) == 56 * n
        # The retransmission table's first row (U = 0.9, no background) is Table 1's first row:
        # its two cells reuse those runs, the other 8 are new.
        extra = {r.key() for r in runs if dict(r.tags)["figure"] == "retx_sources"}
        assert len(extra) == 10 * n and len(extra & keys["table1_wan"]) == 2 * n
        # The map: 14 rows x 4 senders; its first row is Table 1's (4 senders in common) and its
        # U = 1 row the retransmission table's (Reno and S = 0.4), so 50 runs per seed are new.
        mapped = {r.key() for r in runs if dict(r.tags)["figure"] == "unstated_map"}
        assert len(mapped) == 56 * n
        assert len(mapped & keys["table1_wan"]) == 4 * n and len(mapped & extra) == 4 * n
    if name == "p004":
        with_paper = {f.id: len(f.paper.values) for f in plan.figures if f.paper is not None}
        assert with_paper == {"fig9": 15, "fig9_m0": 15, "fig9_m1": 10, "fig10_rate": 7,
                              "fig10_m0": 21, "fig10_m1": 14, "fig12_overhead": 10}  # fmt: skip
        # Table 2 is read per second: its 4.8 at 10 ms beside fast_retransmits / sim_seconds.
        rate = next(f for f in plan.figures if f.id == "fig10_rate")
        assert rate.metric.column == "fast_retransmits / sim_seconds"
        assert rate.paper is not None and rate.paper.get("ip", "10ms") == 4.8
        # Table 4's 1:1 column is path1 at 10 Mbit/s: redundant 0.142074 % overhead.
        overhead = next(f for f in plan.figures if f.id == "fig12_overhead").paper
        assert overhead is not None and overhead.get("ls", "10Mbps") == pytest.approx(0.00142074)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["p000", "p004"])
def test_the_quick_reproduction_runs_and_reports_the_papers_numbers(
    name: str, tmp_path: Path
) -> None:
    folder = experiment.find_experiment(name, ROOT)
    r = experiment.reproduce(folder, tmp_path / name, quick=True, workers=2, progress=False)
    report = r.report.read_text()
    assert "cells match the paper" in report
    if name == "p000":
        assert report.count("Cells matching the paper: ") == 2


def test_in_chromium_the_page_draws_paper_markers_and_the_grid_with_both_values(
    reproduced: tuple[experiment.Plan, Path], tmp_path: Path
) -> None:
    from ccsim.site import build_site
    from ccsim.site.browser import CHROMIUM_ARGS, find_chromium

    chromium = find_chromium()
    if chromium is None:
        pytest.skip("no Chromium found (CCSIM_CHROMIUM, chromium on PATH, /usr/bin/chromium); "
                    "scripts/test installs Debian's chromium package")  # fmt: skip
    sync_playwright = playwright_or_skip()

    _plan, out = reproduced
    # The plan is found under the results folder's parent (tmp/experiments/g-grid).
    index = build_site(out.parent, root=out.parent.parent)
    errors: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(index.with_name("g.html").as_uri())
            fig = page.locator('.figure[data-figure="loss"]')
            fig.locator(".scatterlayer .point").first.wait_for(timeout=30_000)
            # 6 of our points and 4 of the paper's, each a marker in the browser.
            assert fig.get_attribute("data-count") == "10"
            assert fig.locator(".scatterlayer .point").count() == 10
            traces = page.evaluate(
                "document.querySelector('.figure[data-figure=loss] .js-plotly-plot').data"
                ".map(t => [t.name, t.x.length])"
            )
            assert ["Reno: paper", 2] in traces and ["SACK: paper", 2] in traces
            # The grid: 2 rows x 2 metrics x 2 lines, every cell "ours / paper" with both
            # values in its hover text.
            cells = page.locator('table.grid[data-grid="grid"] td.grid-cell')
            assert cells.count() == 8
            first = cells.first
            assert " / 9.4" in (first.text_content() or "")
            assert "paper 9.4 (Table 10)" in (first.get_attribute("title") or "")
            page.screenshot(path=str(tmp_path / "paper-values.png"))
            print(f"screenshot: {tmp_path / 'paper-values.png'}")
        finally:
            browser.close()
    assert errors == []


def test_the_briefs_papers_are_listed_before_the_modern_studies() -> None:
    # A reader of `ccsim reproduce --list` and of the explorer meets the five papers first; m01
    # sorted first by name pushed p000 down the list when it landed.
    names = [f.name for f in experiment.plan.experiment_folders(ROOT / "experiments")]
    assert names[:5] == [
        "p000-atm-abr",
        "p001-spack",
        "p002-highspeed",
        "p003-diffserv",
        "p004-sctp-ls",
    ]
    assert names[5:] == ["m01-dctcp"]
