# SPDX-License-Identifier: MIT
"""The plan machinery papers 001, 002 and 004 need: records with every table, metrics from the
paths and agents tables, per-item quick overrides, tested vs background utilization, groups of
flows and packet-trace figures (issues 12 and 15)."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from test_experiment import PLAN, SCENARIO

from ccsim import experiment
from ccsim.experiment.figures import packet_trace_points
from ccsim.experiment.plan import Metric, PlanError, load_plan, metric_value, x_number
from ccsim.experiment.runs import plan_runs, record_value
from ccsim.experiment.tables import flow_rates, table_row
from ccsim.sweep import RECORD_TABLES, _execute_one, record_problem


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    d = tmp_path / "experiments" / "t-test"
    d.mkdir(parents=True)
    (d / "scenario.toml").write_text(SCENARIO)
    (d / "plan.toml").write_text(PLAN)
    return d


def _append(folder: Path, text: str) -> None:
    plan = folder / "plan.toml"
    plan.write_text(plan.read_text() + text)


def test_a_record_keeps_the_paths_agents_and_packets_tables_and_refuses_one_without() -> None:
    rec = _execute_one(SCENARIO, ['trace.packets={ flows = ["f1"], max_rows = 50 }'], 1)
    assert set(RECORD_TABLES) <= set(rec)
    assert record_problem(rec) is None
    assert len(rec["packets"]["time_ns"]) == 50
    rec.pop("agents")
    assert record_problem(rec) == 'no "agents" table'


def test_a_metric_may_read_the_agents_table_but_not_an_unknown_one(folder: Path) -> None:
    text = (folder / "plan.toml").read_text().replace('table = "flows"', 'table = "agents"', 1)
    (folder / "plan.toml").write_text(text)
    assert load_plan(folder).figures[0].metric.table == "agents"
    (folder / "plan.toml").write_text(text.replace('table = "agents"', 'table = "queues"'))
    with pytest.raises(PlanError, match=r'metric\.table: "queues" is not one of flows, links, '
                       r"paths, agents"):  # fmt: skip
        load_plan(folder)


def test_a_tables_quick_set_comes_after_the_plans_and_only_in_quick_mode(folder: Path) -> None:
    text = (folder / "plan.toml").read_text()
    text = text.replace('id = "fairness"\n', 'id = "fairness"\nquick_set = { duration = "7s" }\n')
    (folder / "plan.toml").write_text(text)
    plan = load_plan(folder)

    def overrides(quick: bool) -> tuple[str, ...]:
        runs = plan_runs(plan, quick)
        return next(r.overrides for r in runs if dict(r.tags)["figure"] == "fairness")

    quick = overrides(True)
    assert quick[-2:] == ('duration="10s"', 'duration="7s"')
    assert not any(o.startswith("duration") for o in overrides(False))
    others = [r for r in plan_runs(plan, True) if dict(r.tags)["figure"] != "fairness"]
    assert all('duration="7s"' not in r.overrides for r in others)


def test_tested_and_background_utilization_split_the_links(folder: Path) -> None:
    # f2 is background here: the tested utilization is f1's goodput alone.
    plan = load_plan(folder)
    table = plan.tables[0]
    rec = _execute_one(plan.scenario_text, [], 1)
    both = table_row(rec, table)
    table.flows = ["f1"]
    alone = table_row(rec, table)
    assert 0.9 < both["utilization"] <= 1.0
    assert both["tested_utilization"] == pytest.approx(both["utilization"], abs=0.06)
    assert alone["utilization"] == both["utilization"]
    assert 0.2 < alone["tested_utilization"] < both["tested_utilization"] - 0.2
    assert alone["background_utilization"] == pytest.approx(
        alone["utilization"] - alone["tested_utilization"]
    )


def test_a_summary_row_reads_each_table_of_its_record_once(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Issue 33: building the series frame twice per record (and the links frame twice) was
    # most of a cached paper 002 reproduction's time outside the simulator.
    from ccsim.experiment import tables

    plan = load_plan(folder)
    rec = _execute_one(plan.scenario_text, [], 1)
    built: list[int] = []
    real = tables._series

    def counting(r: dict[str, object]) -> object:
        built.append(1)
        return real(r)

    monkeypatch.setattr(tables, "_series", counting)
    row = table_row(rec, plan.tables[0])
    assert len(built) == 1
    assert row["convergence_s"] >= 0, "the run converges: the Jain index was computed per row"


def test_a_group_of_flows_is_a_share_column_and_must_name_the_tables_flows(folder: Path) -> None:
    text = (folder / "plan.toml").read_text()
    grouped = text.replace('flows = ["f1", "f2"]\nlink', 'flows = ["f1", "f2"]\ngroups = '
                           '{ late = ["f2"], all = ["f1", "f2"] }\nlink')  # fmt: skip
    (folder / "plan.toml").write_text(grouped)
    plan = load_plan(folder)
    row = table_row(_execute_one(plan.scenario_text, [], 1), plan.tables[0])
    assert row["share_late"] == pytest.approx(row["share_f2"])
    assert row["share_all"] == pytest.approx(1.0)
    (folder / "plan.toml").write_text(grouped.replace('late = ["f2"]', 'late = ["f3"]'))
    with pytest.raises(PlanError, match=r'tables\[0\]\.groups\.late: "f3" is not one of'):
        load_plan(folder)


PACKET_TRACE = """
[[figures]]
id = "trace"
kind = "packet_trace"
set = { "links.bottleneck.loss.rate" = 0.02, duration = "3s" }
lines = ["sack", "reno"]
flow = "f1"
link = "bottleneck:a_to_b"
seed = 2
"""


def test_a_packet_trace_figure_runs_one_seed_per_line_and_marks_the_drops(
    folder: Path, tmp_path: Path
) -> None:
    _append(folder, PACKET_TRACE)
    plan = load_plan(folder)
    runs = [r for r in plan_runs(plan, False) if dict(r.tags)["figure"] == "trace"]
    assert sorted((dict(r.tags)["line"], r.seed) for r in runs) == [("reno", 2), ("sack", 2)]
    rec = _execute_one(runs[0].text, runs[0].overrides, runs[0].seed)
    pts = packet_trace_points(rec, "f1", "bottleneck:a_to_b")
    assert len(pts["sent"]) > 100
    assert len(pts["dropped"]) > 0
    assert len(pts["resent"]) > 0
    # The ACK numbers never run ahead of what was sent.
    assert pts["acked"]["seq"].max() <= pts["sent"]["seq"].max() + 1460
    out = tmp_path / "out"
    experiment.reproduce(folder, out, quick=True, workers=1, progress=False)
    assert (out / "trace.png").stat().st_size > 0
    assert "![trace](trace.png)" in (out / "report.md").read_text()


def test_p001s_trace_png_has_every_scheme_on_one_time_axis_in_the_papers_words() -> None:
    import matplotlib.pyplot as plt

    from ccsim.experiment.figures import packet_trace_axes

    root = Path(__file__).resolve().parents[2]
    plan = load_plan(root / "experiments" / "p001-spack")
    sf = next(s for s in plan.series_figures if s.id == "fig5_trace")
    recs = {}
    for r in plan_runs(plan, False):
        if dict(r.tags)["figure"] == "fig5_trace":
            recs[dict(r.tags)["line"]] = _execute_one(r.text, r.overrides, r.seed)
    f, axes = packet_trace_axes(sf, plan, recs)
    axes = list(axes.flat)
    # Every scheme the paper compares, I-TCP included.
    assert [ax.get_title() for ax in axes] == ["TCP Reno", "SPACK", "Snoop", "I-TCP"]
    # One time axis: Snoop's 2 s transfer is drawn on Reno's 6 s scale.
    assert all(ax.get_shared_x_axes().joined(axes[0], ax) for ax in axes)
    assert len({ax.get_xlim() for ax in axes}) == 1
    assert axes[-1].get_xlabel() == "time (s)"
    # A TCP paper's trace says nothing of SCTP, and names the link as the paper does.
    texts = [f.get_suptitle(), *(ax.get_ylabel() for ax in axes)]
    texts += [t.get_text() for t in axes[0].get_legend().get_texts()]
    assert all(ax.get_ylabel() == "sequence number (bytes)" for ax in axes)
    assert "data sent on the wireless hop (BS to MH)" in texts
    assert not [t for t in texts if "SCTP" in t or "TSN" in t or ":a_to_b" in t], texts
    plt.close(f)


def _korean_trace(folder: Path) -> tuple[object, object, dict]:
    """The packet-trace figure of the test plan, its lines labelled in Korean, and its runs."""
    _append(folder, PACKET_TRACE)
    plan = load_plan(folder)
    plan.lines["sack"].label = "SACK (선택적 확인응답)"
    plan.lines["reno"].label = "Reno (리노)"
    sf = next(s for s in plan.series_figures if s.id == "trace")
    recs = {dict(r.tags)["line"]: _execute_one(r.text, r.overrides, r.seed)
            for r in plan_runs(plan, False) if dict(r.tags)["figure"] == "trace"}  # fmt: skip
    return sf, plan, recs


def test_a_figures_hangul_is_drawn_with_a_cjk_font_not_as_boxes(
    folder: Path, tmp_path: Path
) -> None:
    import warnings

    import matplotlib
    from test_site import korean_font

    from ccsim.experiment import draw_series_figure

    reason = korean_font()
    if reason:
        pytest.skip(reason)
    sf, plan, recs = _korean_trace(folder)
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        paths = draw_series_figure(sf, plan, recs, tmp_path)
    # matplotlib warns for every glyph its fonts lack (here, with DejaVu Sans alone): none.
    assert [str(w.message) for w in said] == []
    assert all(p.stat().st_size > 0 for p in paths)
    # Latin text keeps matplotlib's default font; Hangul falls back to a CJK family.
    family = matplotlib.rcParams["font.family"]
    assert family[0] == "sans-serif" and len(family) == 2
    cjk = matplotlib.font_manager.FontProperties(family=family[1])
    assert matplotlib.font_manager.findfont(cjk, fallback_to_default=False)


def test_without_a_cjk_font_the_figures_say_once_which_package_to_install(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import warnings

    from ccsim import fonts
    from ccsim.experiment import draw_series_figure

    sf, plan, recs = _korean_trace(folder)
    monkeypatch.setattr(fonts, "_found", [None])  # as on a system without one
    monkeypatch.setattr(fonts, "_warned", [])
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        draw_series_figure(sf, plan, recs, tmp_path / "a")
        draw_series_figure(sf, plan, recs, tmp_path / "b")
    # One warning naming the package, not one per glyph drawn as a box.
    assert [w.category for w in said] == [fonts.MissingFontWarning], [str(w.message) for w in said]
    assert "fonts-noto-cjk" in str(said[0].message)
    assert (tmp_path / "b" / "trace.png").stat().st_size > 0


def test_a_packet_trace_figure_needs_its_flow(folder: Path) -> None:
    _append(folder, PACKET_TRACE.replace('flow = "f1"\n', ""))
    with pytest.raises(PlanError, match=r"figures\[3\]\.flow: missing"):
        load_plan(folder)


UNITS = """
[[figures]]
id = "by_rate"
lines = ["sack"]
[figures.x]
path = "links.bottleneck.rate"
values = ["10Mbps", "2Mbps"]
label = "rate (Mbit/s)"
also = { "links.bottleneck.delay" = ["10ms", "30ms"] }
[figures.metric]
where = { name = "f1" }
column = "(bytes_sent - bytes_delivered) / bytes_sent"
"""


def test_an_x_with_units_sets_its_companion_keys_and_plots_by_its_number(
    folder: Path, tmp_path: Path
) -> None:
    _append(folder, UNITS)
    plan = load_plan(folder)
    fig = plan.figures[1]
    runs = [r for r in plan_runs(plan, False) if dict(r.tags)["figure"] == "by_rate"]
    slow = next(r for r in runs if dict(r.tags)["x"] == "2Mbps")
    assert 'links.bottleneck.rate="2Mbps"' in slow.overrides
    assert 'links.bottleneck.delay="30ms"' in slow.overrides
    assert [x_number(x) for x in fig.x_values] == [10.0, 2.0]
    out = tmp_path / "out"
    experiment.reproduce(folder, out, seeds=1, workers=2, progress=False)
    points = pd.read_parquet(out / "points.parquet")
    over = points[points["figure"] == "by_rate"]["value"]
    assert len(over) == 2 and ((over >= 0) & (over < 0.5)).all()


def test_a_metric_column_may_be_arithmetic_on_columns_and_nothing_else(folder: Path) -> None:
    assert metric_value("(a - b) / a", {"a": 4, "b": 1}) == 0.75
    assert math.isnan(metric_value("b / (a - 4)", {"a": 4, "b": 1}))
    original = (folder / "plan.toml").read_text()
    _append(folder, UNITS.replace("(bytes_sent - bytes_delivered)", "__import__('os')"))
    with pytest.raises(PlanError, match=r"figures\[3\]\.metric\.column: .*a call must be one of"):
        load_plan(folder)
    (folder / "plan.toml").write_text(original)
    _append(folder, UNITS.replace("(bytes_sent - bytes_delivered)", "os.environ"))
    with pytest.raises(PlanError, match=r"figures\[3\]\.metric\.column: .*only column names"):
        load_plan(folder)


def test_a_metric_expression_may_divide_by_the_runs_simulated_seconds() -> None:
    rec = {
        "summary": {"sim_seconds": 20.0, "events": 7},
        "flows": {"name": ["a", "b"], "fast_retransmits": [10, 30]},
    }
    rate = Metric(table="flows", column="fast_retransmits / sim_seconds", label="", where={},
                  origin="t", unit=None, aggregate=None)  # fmt: skip
    one = dataclasses.replace(rate, where={"name": "b"})
    assert record_value(rec, one) == 1.5
    pooled = dataclasses.replace(rate, where={"name": ["a", "b"]}, aggregate="sum")
    assert record_value(rec, pooled) == 2.0, "the sum of the rows, over the run's length once"
    summary_only = dataclasses.replace(rate, column="events / sim_seconds")
    assert math.isnan(record_value(rec, summary_only)), "only sim_seconds of the summary"


def test_companion_keys_need_one_value_per_x(folder: Path) -> None:
    _append(folder, UNITS.replace('["10ms", "30ms"]', '["10ms"]'))
    with pytest.raises(PlanError, match=r"x\.also\.links\.bottleneck\.delay: 1 values for 2"):
        load_plan(folder)


def test_a_title_states_the_items_own_settings_from_its_scenario(folder: Path) -> None:
    title = (
        'title = "goodput vs loss (${links.bottleneck.rate}, ${links.bottleneck.queue.limit} '
        'packets, ${links.i1.loss.rate:%} on i1)"\n'
        'set = { "links.bottleneck.queue.limit" = 25, "links.i1.loss" = { type = "uniform", '
        "rate = 0.035 } }\n"
    )
    text = (folder / "plan.toml").read_text()
    (folder / "plan.toml").write_text(text.replace('title = "goodput vs loss"\n', title))
    fig = load_plan(folder).figures[0]
    # The report and the site show the filled-in title; the explorer keeps the template.
    assert fig.title == "goodput vs loss (10Mbps, 25 packets, 3.5 % on i1)"
    assert fig.title_template.startswith("goodput vs loss (${links.bottleneck.rate}, ")


@pytest.mark.parametrize(
    ("placeholder", "message"),
    [
        ("${links.bottleneck.loss.rate}", r"takes more than one value in loss \(set by its x axis"),
        ("${tcp.variant}", r"takes more than one value in loss \(set by line sack, line reno\)"),
        ("${links.nowhere.rate}", r"\$\{links.nowhere.rate\} is not a key of the resolved"),
    ],
)
def test_a_title_may_not_state_a_value_its_lines_or_x_move_or_a_key_there_is_not(
    folder: Path, placeholder: str, message: str
) -> None:
    text = (folder / "plan.toml").read_text()
    text = text.replace('title = "goodput vs loss"', f'title = "goodput at {placeholder}"')
    (folder / "plan.toml").write_text(text)
    with pytest.raises(PlanError, match=rf"figures\[0\]\.title: .*{message}"):
        load_plan(folder)


QUEUE_DELAY = """
[[figures]]
id = "delay"
kind = "queue_delay"
title = "queue delay vs buffer"
set = { duration = "4s" }
x = { path = "links.bottleneck.queue.limit", values = [10, 60], label = "buffer (packets)" }
lines = ["sack"]
link = "bottleneck:a_to_b"
"""


def test_a_queue_delay_figure_draws_the_links_percentiles_across_the_x_values(
    folder: Path, tmp_path: Path
) -> None:
    _append(folder, QUEUE_DELAY)
    plan = load_plan(folder)
    fig = next(f for f in plan.figures if f.id == "delay")
    assert fig.lines == ["sack_p50", "sack_p95", "sack_p99"]
    assert plan.lines["sack_p99"].label == "SACK: p99"
    assert fig.metric.label == "queue delay of bottleneck:a_to_b (ms)"
    # The three percentiles of a point are read off one run: one run per (x, seed).
    runs = [r for r in plan_runs(plan, False, seeds=1) if dict(r.tags)["figure"] == "delay"]
    assert len({(r.overrides, r.seed) for r in runs}) == 2
    out = tmp_path / "out"
    experiment.reproduce(folder, out, seeds=1, workers=1, progress=False)
    points = pd.read_parquet(out / "points.parquet")
    d = points[points["figure"] == "delay"].set_index(["x", "line"])["value"]
    for x in (10.0, 60.0):
        p50, p95, p99 = (d[(x, f"sack_p{q}")] for q in (50, 95, 99))
        assert 0 <= p50 <= p95 <= p99, (x, p50, p95, p99)
    # A deeper buffer holds a longer queue: one 1500 B packet is 1.2 ms at 10 Mbit/s, so 10
    # packets hold at most 12 ms (measured p99 11.7 ms) and 60 about 72 ms (measured 71.7).
    assert d[(10.0, "sack_p99")] < 12.5
    assert d[(60.0, "sack_p99")] > 5 * d[(10.0, "sack_p99")]
    assert (out / "delay.png").stat().st_size > 0
    assert "![delay](delay.png)" in (out / "report.md").read_text()


@pytest.mark.parametrize("kind", ["points", "flow_series", "link_series", "table",
                                  "queue_delay"])  # fmt: skip
def test_an_item_with_no_lines_is_refused_naming_the_plans_lines(folder: Path, kind: str) -> None:
    # Campaign 11: `lines = []` on a queue_delay figure was loaded, its runs (none) done, then
    # the drawing failed with "max() arg is an empty sequence" (other kinds ran nothing and
    # drew an empty figure or table).
    head = PLAN[: PLAN.index("[[figures]]")]
    item = {
        "points": PLAN[PLAN.index("[[figures]]") : PLAN.index('[[figures]]\nid = "shares"')],
        "flow_series": PLAN[
            PLAN.index('[[figures]]\nid = "shares"') : PLAN.index('[[figures]]\nid = "util"')
        ],
        "link_series": PLAN[PLAN.index('[[figures]]\nid = "util"') : PLAN.index("[[tables]]")],
        "table": PLAN[PLAN.index("[[tables]]") : PLAN.index("[[claims]]")],
        "queue_delay": QUEUE_DELAY,
    }[kind]
    item = item.replace('lines = ["sack", "reno"]', "lines = []")
    item = item.replace('lines = ["sack"]', "lines = []")
    (folder / "plan.toml").write_text(head + item)
    with pytest.raises(PlanError) as e:
        load_plan(folder)
    where = "tables[0]" if kind == "table" else "figures[0]"
    assert str(e.value) == f"{where}.lines: empty; give one or more of the plan's lines: sack, reno"


def test_a_queue_delay_figure_on_a_link_the_scenario_lacks_names_its_link_and_the_links(
    folder: Path,
) -> None:
    # Campaign 11: the refusal named "figures[3].link.where", a key no plan has, and quoted
    # a Python dict ({'link': 'nowhere', 'direction': 'a_to_b'}).
    from ccsim.experiment.checks import check_plan

    _append(folder, QUEUE_DELAY.replace("bottleneck:a_to_b", "nowhere:a_to_b"))
    with pytest.raises(PlanError) as e:
        check_plan(load_plan(folder))
    assert str(e.value).startswith(
        'figures[3].link: no link direction "nowhere:a_to_b"; there are bottleneck:a_to_b, '
        "bottleneck:b_to_a, i1:a_to_b, "
    )


def test_a_queue_delay_figure_needs_a_link_direction_and_known_percentiles(folder: Path) -> None:
    for change, message in [
        ('link = "bottleneck"', 'figures[3].link: "bottleneck" is not NAME:a_to_b or NAME:b_to_a'),
        ('link = "bottleneck:a_to_b"\npercentiles = [90]',
         "figures[3].percentiles: 90 is not one of 50, 95, 99"),
        ('link = "bottleneck:a_to_b"\nmetric = { column = "goodput_bps" }',
         "figures[3].metric: a queue_delay figure measures its link's queue delay and takes no "
         "metric"),
    ]:  # fmt: skip
        (folder / "plan.toml").write_text(
            PLAN + QUEUE_DELAY.replace('link = "bottleneck:a_to_b"', change)
        )
        with pytest.raises(PlanError) as e:
            load_plan(folder)
        assert str(e.value) == message


@pytest.mark.parametrize(
    ("options", "error"),
    [
        ({"seeds": 0}, "seeds: 0; it must be at least 1 (None: the default)"),
        ({"seeds": -1}, "seeds: -1; it must be at least 1 (None: the default)"),
        ({"seeds": 1.5}, "seeds: expected a whole number or None, not float 1.5"),
        ({"seeds": True}, "seeds: expected a whole number or None, not bool True"),
        ({"workers": 0}, "workers: 0; it must be at least 1 (None: the default)"),
        ({"workers": "2"}, "workers: expected a whole number or None, not str '2'"),
        ({"quick": "no"}, "quick: expected True or False, not str 'no'"),
    ],
)
def test_reproduce_from_python_refuses_what_the_cli_refuses_before_writing_anything(
    folder: Path, tmp_path: Path, options: dict[str, object], error: str
) -> None:
    # Campaign 13: seeds=0 wrote a reproduction of no runs ("Runs: 0", every claim not judged)
    # over the folder, its re-run command one the CLI refuses; quick="no" ran the quick mode.
    out = tmp_path / "out"
    with pytest.raises((TypeError, ValueError)) as raised:
        experiment.reproduce(folder, out, **{"workers": 1, **options})  # type: ignore[arg-type]
    assert str(raised.value) == error
    assert not out.exists()


def test_reproduce_refuses_to_write_into_the_plans_full_run_record(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Campaign 13: `ccsim reproduce p001 --quick --out experiments/p001-spack/full-run` wrote
    # its quick claims.csv, summary.csv and run.json over the record the README is checked
    # against, which `--record` refuses to do with --quick.
    from ccsim.cli import main

    record = folder / "full-run"
    record.mkdir()
    (record / "claims.csv").write_text("the full run's\n")
    argv = ["reproduce", str(folder), "--quick", "--workers", "1", "--out", str(record)]
    assert main(argv) == 1
    assert capsys.readouterr().err == (
        f"ccsim: error: --out {record}: that is the plan's full-run record (the README's numbers "
        "are checked against it; --record writes it after a full run); name another folder\n"
    )
    assert [p.name for p in record.iterdir()] == ["claims.csv"]
    assert (record / "claims.csv").read_text() == "the full run's\n"


def test_reproduce_refuses_an_out_holding_another_papers_reproduction(
    folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Campaign 18: `ccsim reproduce p001 --quick --out results/m01` (a slip of the paper's id)
    # wrote p001's report.md and run.json over m01's and left m01's figures beside p001's, its
    # site then p001's: m01's reproduction was gone, status 0.
    from ccsim.cli import main

    other = tmp_path / "results" / "m01"
    other.mkdir(parents=True)
    (other / "report.md").write_text("# m01's report\n")
    (other / "run.json").write_text('{"paper": "m01", "mode": "quick"}\n')
    argv = ["reproduce", str(folder), "--quick", "--workers", "1", "--out", str(other)]
    assert main(argv) == 1
    assert capsys.readouterr().err == (
        f"ccsim: error: --out {other}: it holds the reproduction of m01 (its run.json), not "
        "of t: reproduced there, its report and figures would be replaced by and mixed with "
        "these; name another folder (or remove that one)\n"
    )
    assert sorted(p.name for p in other.iterdir()) == ["report.md", "run.json"]
    assert (other / "report.md").read_text() == "# m01's report\n"
    # The same paper's folder is where a reproduction resumes: taken.
    (other / "run.json").write_text('{"paper": "t", "mode": "quick"}\n')
    assert main(argv) == 0


@pytest.mark.parametrize(
    ("run_json", "bom"), [(None, ""), ('{"paper": "m0', ""), ("[]\n", ""), (None, "\ufeff")]
)
def test_reproduce_refuses_another_papers_reproduction_whose_run_json_is_damaged_or_gone(
    run_json: str | None, bom: str, folder: Path, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    # Campaign 48 (issue 32): the refusal above read the paper from run.json alone; with it
    # truncated or removed, `ccsim reproduce p003 --quick --out` m01's folder wrote p003's
    # report and site beside m01's figures, status 0. The plan stored with it names it, also
    # re-saved by hand with a byte order mark, as a plan is read (stop 61).
    from ccsim.cli import main

    other = tmp_path / "results" / "m01"
    (other / "plan").mkdir(parents=True)
    (other / "report.md").write_text("# m01's report\n")
    (other / "plan" / "plan.toml").write_text(f'{bom}id = "m01"\ntitle = "m01"\n', "utf-8")
    if run_json is not None:
        (other / "run.json").write_text(run_json)
    before = sorted(p.name for p in other.iterdir())
    argv = ["reproduce", str(folder), "--quick", "--workers", "1", "--out", str(other)]
    assert main(argv) == 1
    assert capsys.readouterr().err == (
        f"ccsim: error: --out {other}: it holds the reproduction of m01 (the plan stored in "
        "it; its run.json is missing or damaged), not of t: reproduced there, its report and "
        "figures would be replaced by and mixed with these; name another folder (or remove "
        "that one)\n"
    )
    assert sorted(p.name for p in other.iterdir()) == before
    assert (other / "report.md").read_text() == "# m01's report\n"


def test_a_full_run_record_that_cannot_be_written_leaves_the_earlier_record_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Campaign 25 (issue 32): `--record` removed the paper's earlier full-run/ record, then
    # copied the new one file by file; a full disk at the third file left a new run.json and
    # claims.csv beside an empty summary.csv (what the README's numbers are checked against),
    # and the error named the results' own file -> the record's, "[Errno 28]".
    import errno
    import shutil

    from ccsim.experiment.reproduction import RECORD_FILES, record_full_run

    out = tmp_path / "m01"
    out.mkdir()
    for name in [*RECORD_FILES, "table-t1.csv"]:
        (out / name).write_text(f"new {name}\n", encoding="utf-8")
    record = tmp_path / "paper" / "full-run"
    record.mkdir(parents=True)
    for name in [*RECORD_FILES, "table-old.csv"]:
        (record / name).write_text(f"old {name}\n", encoding="utf-8")
    copy = shutil.copyfile
    copies: list[str] = []

    def full_at_the_third(src: Path, dst: Path) -> Path:
        copies.append(Path(src).name)
        if len(copies) == 3:
            Path(dst).write_bytes(b"")  # begun, then the disk is full, as shutil leaves it
            raise OSError(errno.ENOSPC, "No space left on device", str(src), None, str(dst))
        return copy(src, dst)

    monkeypatch.setattr(shutil, "copyfile", full_at_the_third)
    with pytest.raises(ValueError) as e:
        record_full_run(out, tmp_path / "paper")
    assert str(e.value) == (
        f"{record / RECORD_FILES[2]}: no space left on device; {record} was left as it was"
    )
    kept = {p.name: p.read_text(encoding="utf-8") for p in record.iterdir()}
    assert kept == {n: f"old {n}\n" for n in [*RECORD_FILES, "table-old.csv"]}
    # With room, the new record replaces the old whole: no earlier table is left beside it.
    monkeypatch.setattr(shutil, "copyfile", copy)
    assert record_full_run(out, tmp_path / "paper") == record
    kept = {p.name: p.read_text(encoding="utf-8") for p in record.iterdir()}
    assert kept == {n: f"new {n}\n" for n in [*RECORD_FILES, "table-t1.csv"]}


def test_a_drawing_librarys_damaged_metadata_still_gives_the_code_a_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Campaign 37 (issue 32): matplotlib imports whole, but its METADATA holds a byte that is
    # not UTF-8 (a hand edit, a disk error). `ccsim reproduce` ran its runs, then failed with
    # "ccsim: error: 'utf-8' codec can't decode byte 0xe9 ...", naming no file.
    from ccsim.experiment import drawn

    dist = tmp_path / "matplotlib-3.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_bytes(b"Metadata-Version: 2.1\nName: matplotlib\nSummary: caf\xe9\n")
    readable = drawn.code_version()
    monkeypatch.syspath_prepend(str(tmp_path))
    drawn.code_version.cache_clear()
    try:
        damaged = drawn.code_version()
    finally:
        drawn.code_version.cache_clear()
    assert damaged != readable  # the outputs are drawn again once it reads


def test_figures_are_drawn_in_matplotlibs_own_style_not_the_users_matplotlibrc(
    tmp_path: Path,
) -> None:
    # Campaign 39 (issue 32): a user's matplotlibrc with `text.usetex: True` and no LaTeX
    # failed every reproduction after its runs ("Failed to process string with tex because
    # latex could not be found"); `savefig.dpi: 2000` wrote PNGs 25 times the size.
    import subprocess
    import sys

    (tmp_path / "matplotlibrc").write_text("text.usetex: True\nsavefig.dpi: 2000\n")
    code = (
        "import matplotlib\n"
        "assert matplotlib.rcParams['text.usetex'], 'the user file is read'\n"
        "from ccsim.experiment import figures\n"
        "from ccsim import bench\n"
        "r = matplotlib.rcParams\n"
        "bench.plot_scale([], __import__('pathlib').Path(r'" + str(tmp_path / "b.png") + "'))\n"
        "print(r['text.usetex'], r['savefig.dpi'])\n"
        "matplotlib.rc_file_defaults()  # the user's file again\n"
        "assert r['text.usetex']\n"
        "plt = figures._pyplot()\n"
        "print(r['text.usetex'], r['savefig.dpi'], r['svg.hashsalt'], matplotlib.get_backend())\n"
    )
    env = {**__import__("os").environ, "MPLCONFIGDIR": str(tmp_path), "MPLBACKEND": "Agg"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, env=env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["False figure", "False figure ccsim Agg"], done.stdout


def test_bench_plot_draws_whatever_backend_the_users_mplbackend_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Bug (campaign 46): matplotlib checks MPLBACKEND as it is imported, and a name it no
    # longer knows (Qt4Agg, from an old dotfile) failed every reproduction and bench --plot
    # with "ccsim needs matplotlib, which is installed but cannot be imported (Key backend:
    # 'Qt4Agg' is not a valid value for backend ...): install ccsim again", though ccsim draws
    # with Agg alone. Reproductions import matplotlib through the same main.
    import os
    import subprocess
    import sys

    from ccsim.cli import main

    env = {**os.environ, "MPLBACKEND": "Qt4Agg", "MPLCONFIGDIR": str(tmp_path)}
    png = tmp_path / "scale.png"
    done = subprocess.run(
        [sys.executable, "-m", "ccsim", "bench", "--only", "F10", "--plot", str(png)],
        capture_output=True, text=True, timeout=300, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stderr == "" and png.stat().st_size > 0
    # Run inside another Python (`%run -m ccsim` in a notebook's kernel), the caller's
    # variable is its own again once the command has ended.
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    assert main(["validate", str(Path(__file__).parents[2] / "examples" / "dumbbell.toml")]) == 0
    assert os.environ["MPLBACKEND"] == "module://matplotlib_inline.backend_inline"


def test_a_summary_rows_rate_cv_is_the_same_whether_or_not_bottleneck_is_installed(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Bug (campaign 46): pandas hands Series.std to bottleneck when it can import it, and
    # bottleneck sums in one naive pass where numpy sums pairwise, so paper 002's rate_cv
    # (0.2594118312482358 without, 0.25941183124823586 with) and every table, report and site
    # built from it changed with what else the user's Python held. A stand-in (the real
    # bottleneck need not be installed) computes as bottleneck's nanstd does.
    from pandas.core import nanops

    def naive_std(values: Any, *, axis: Any = None, skipna: bool = True, ddof: int = 1,
                  mask: Any = None) -> float:  # fmt: skip
        xs = [x for x in values.tolist() if x == x]
        total = 0.0
        for x in xs:
            total += x
        mean = total / len(xs)
        squares = 0.0
        for x in xs:
            squares += (x - mean) ** 2
        return math.sqrt(squares / (len(xs) - ddof))

    plan = load_plan(folder)
    # 150 samples a flow (30 at the plan's interval sum the same both ways for this seed).
    rec = _execute_one(plan.scenario_text, ['trace.interval="100ms"'], 1)
    table = plan.tables[0]
    without = table_row(rec, table)
    rates = flow_rates(rec, table.flows)
    after = rates[rates.index > table.from_s]
    monkeypatch.setattr(nanops, "nanstd", naive_std)
    assert any(after[f].std(ddof=0) != np.std(after[f].to_numpy()) for f in table.flows), (
        "the stand-in is pandas' std, and its sums differ from numpy's on these rates"
    )
    assert table_row(rec, table)["rate_cv"] == without["rate_cv"]
