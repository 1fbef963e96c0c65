# SPDX-License-Identifier: MIT
"""The ccsim command: run, validate, bench, and their errors."""

from __future__ import annotations

import errno
import functools
import io
import math
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import ccsim
from ccsim.cli import main


def test_run_writes_the_four_files_and_they_read_back_identical(
    tmp_path: Path, examples: Path, capsys: object
) -> None:
    out = tmp_path / "res"
    assert main(["run", str(examples / "random-loss.toml"), "--out", str(out), "--seed", "5"]) == 0
    for name in ("flows.parquet", "links.parquet", "series.parquet", "scenario.toml"):
        assert (out / name).exists(), name
    direct = ccsim.run(examples / "random-loss.toml", seed=5)
    back = ccsim.Result.from_parquet(out)
    pd.testing.assert_frame_equal(back.flows, direct.flows)
    pd.testing.assert_frame_equal(back.links, direct.links)
    pd.testing.assert_frame_equal(back.series, direct.series)
    # The resolved scenario replays the same run.
    again = ccsim.run(out / "scenario.toml")
    pd.testing.assert_frame_equal(again.flows, direct.flows)


def test_set_overrides_reach_the_run(tmp_path: Path, examples: Path) -> None:
    out = tmp_path / "res"
    args = ["run", str(examples / "random-loss.toml"), "--out", str(out)]
    assert main([*args, "--set", "links.bottleneck.loss.rate=0.0", "--set", 'duration="10s"']) == 0
    links = pd.read_parquet(out / "links.parquet")
    assert links["drops_loss"].sum() == 0
    assert 'duration = "10s"' in (out / "scenario.toml").read_text()


def test_a_bad_scenario_exits_1_with_one_line_naming_the_field(
    tmp_path: Path, examples: Path
) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "ccsim.cli",
            "validate",
            str(examples / "random-loss.toml"),
            "--set",
            "links.bottleneck.rate=10",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert lines == [
        'ccsim: error: links.bottleneck.rate: expected a rate such as "10Mbps" '
        "(units bps, Kbps, Mbps, Gbps), found integer 10"
    ]


def test_validate_prints_ok_and_what_the_scenario_holds(examples: Path, capsys: Any) -> None:
    assert main(["validate", str(examples / "dumbbell.toml"), "--set", "seed=8"]) == 0
    out = capsys.readouterr().out
    summary = "duration 60s, seed 8; nodes: 22, links: 21, flows: 10"
    assert out == f"ok: {examples / 'dumbbell.toml'}: {summary}\n"


def test_validate_counts_each_copy_of_a_flow_with_count(tmp_path: Path, capsys: Any) -> None:
    # Campaign 11: a flow with count = 100000 was "flows: 1", where the run has 100000 flows
    # (rows of the flows table, each with its own streams).
    f = tmp_path / "s.toml"
    f.write_text(
        'duration = "1s"\n[nodes]\na = "host"\nb = "host"\n'
        '[links.l]\na = "a"\nb = "b"\nrate = "10Mbps"\ndelay = "1ms"\n'
        '[flows.f]\ntype = "tcp"\nsrc = "a"\ndst = "b"\ncount = 3\n'
        '[flows.g]\ntype = "cbr"\nsrc = "b"\ndst = "a"\nrate = "1Mbps"\n'
    )
    assert main(["validate", str(f)]) == 0
    assert capsys.readouterr().out.endswith("; nodes: 2, links: 1, flows: 4\n")


def test_usage_errors_exit_1_on_one_line_like_every_other_error() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "ccsim.cli", "run", "--seed", "x"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 1
    assert len(proc.stderr.splitlines()) == 1 and "Traceback" not in proc.stderr


def test_a_missing_file_is_a_one_line_error(tmp_path: Path) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "ccsim.cli",
            "run",
            str(tmp_path / "nope.toml"),
            "--out",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 1
    assert proc.stderr.startswith("ccsim: error:") and "nope.toml" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_validate_accepts_every_example(examples: Path) -> None:
    for f in sorted(examples.glob("*.toml")):
        assert main(["validate", str(f)]) == 0, f.name


def test_bench_runs_a_scenario_and_reports_its_figures() -> None:
    from ccsim import bench

    rows = bench.run_benchmarks(repeat=1, only=["P0"])
    (r,) = rows
    assert r.name == "P0" and r.events > 100_000 and r.data_packets > 10_000
    assert r.peak_packets > 0 and r.peak_rss_mb > 0
    assert "P0" in bench.format_table(rows)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc (Linux)")
def test_bench_memory_of_a_run_is_its_own_not_what_the_bench_process_held_when_it_started_it(
    tmp_path: Path,
) -> None:
    from ccsim import bench

    trivial = tmp_path / "trivial.toml"
    trivial.write_text(bench._TRIVIAL, encoding="utf-8")
    # 300 MB held (and touched) by this process while it starts the child, as `ccsim bench`
    # held ~105 MB once it had imported the experiment machinery for P002.
    ballast = bytearray(300 * 1024 * 1024)
    for i in range(0, len(ballast), 4096):
        ballast[i] = 1
    _, _, rss_mb = bench._child_run(trivial)
    assert rss_mb < 150, f"{rss_mb:.0f} MB: the child reported its parent's memory"
    del ballast


def test_an_interrupted_bench_leaves_no_case_running(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Campaign 6: `ccsim bench` stopped by SIGINT or SIGTERM (sent to it alone, as `kill` or a
    # supervisor does) left its case's process running; that one finished the case and, its
    # reader gone, died with "BrokenPipeError" and a traceback on the terminal.
    from ccsim import bench

    started: list[subprocess.Popen[str]] = []
    real_popen = subprocess.Popen

    class Interrupted:
        """The child's stdout, whose read is interrupted as Ctrl-C interrupts it."""

        def __init__(self, stream: Any) -> None:
            self.stream = stream

        def __enter__(self) -> Interrupted:
            return self

        def __exit__(self, *_: object) -> None:
            self.stream.close()

        def read(self) -> str:
            raise KeyboardInterrupt

    def popen(*args: Any, **kwargs: Any) -> subprocess.Popen[str]:
        proc = real_popen(*args, **kwargs)
        started.append(proc)
        proc.stdout = Interrupted(proc.stdout)  # type: ignore[assignment]
        return proc

    # A case that never ends by itself: only a signal stops it.
    monkeypatch.setattr(bench, "_CHILD", "import signal; signal.pause()")
    monkeypatch.setattr(bench.subprocess, "Popen", popen)
    trivial = tmp_path / "trivial.toml"
    trivial.write_text(bench._TRIVIAL, encoding="utf-8")
    try:
        with pytest.raises(KeyboardInterrupt):
            bench._child_run(trivial)
        assert started and started[0].poll() is not None, "the case's process still runs"
    finally:
        for proc in started:
            proc.kill()
            proc.wait()


def test_a_benchs_case_does_not_hear_the_ctrl_c_its_terminal_sends_the_whole_group(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Campaign 41 (issue 32): Ctrl-C signals the terminal's whole foreground process group,
    # and a case just starting printed its KeyboardInterrupt traceback (a few lines of
    # "Traceback (most recent call last): ... importlib") above "ccsim: interrupted by
    # SIGINT". The command hears it and ends the case; the case itself keeps SIGINT blocked.
    # Here a case that gets a SIGINT as it starts still answers.
    from ccsim import bench

    case = ("import json, os, signal, time\nos.kill(os.getpid(), signal.SIGINT)\n"
            'time.sleep(0.2)\nprint("ccsim-bench: " + json.dumps({"hwm_kb": 1}))\n')  # fmt: skip
    monkeypatch.setattr(bench, "_CHILD", case)
    trivial = tmp_path / "trivial.toml"
    trivial.write_text(bench._TRIVIAL, encoding="utf-8")
    summary, _, _ = bench._child_run(trivial)
    assert summary == {"hwm_kb": 1}


def test_bench_whose_temporary_folder_is_removed_mid_run_says_so_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    # Campaign 42 (issue 32): a batch job's epilogue (Slurm removes the job's TMPDIR) or a
    # cleaner of /tmp removed the bench's temporary folder while it ran: the next case's child
    # printed a FileNotFoundError traceback and the bench said "benchmark F10.toml failed with
    # status 1". Here the generated case is removed as soon as it is written.
    from ccsim import bench

    write = bench._write_scale_case

    def written_then_removed(name: str, directory: Path) -> tuple[str, ...]:
        overrides = write(name, directory)
        (directory / f"{name}.toml").unlink()
        return overrides

    monkeypatch.setattr(bench, "_write_scale_case", written_then_removed)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr("tempfile.tempdir", None)
    assert main(["bench", "--only", "F10", "--repeat", "1"]) == 1
    err = capfd.readouterr().err
    assert err.startswith("ccsim: error: benchmark F10: its scenario ") and err.count("\n") == 1
    assert "was removed while the bench ran" in err and "Traceback" not in err, err


def test_bench_reports_no_bytes_per_packet_where_the_memory_above_a_trivial_run_is_noise() -> None:
    from ccsim import bench

    # P2 with mimalloc: 30 MB at its peak against the trivial run's 31, 873 packets alive.
    assert math.isnan(bench.bytes_per_packet(30.0, 31.0, 873))
    assert math.isnan(bench.bytes_per_packet(33.0, 31.0, 873))
    assert math.isnan(bench.bytes_per_packet(500.0, 31.0, 0))
    # Well above the resolution the figure is the difference over the packets alive.
    assert bench.bytes_per_packet(991.0, 31.0, 4_000_000) == pytest.approx(960 * 1024 * 1024 / 4e6)
    row = bench.BenchRow(
        "P2", 1.0, 1.0, 10, 10, 873, 30.0, float("nan"), rates=(1.0,), hop_rates=(1.0,)
    )
    line = next(ln for ln in bench.format_table([row]).splitlines() if ln.startswith("P2"))
    assert line.split()[-1] == "-"


def test_bench_ratios_to_p1_pair_runs_by_round_so_a_drifting_machine_cancels_out() -> None:
    from ccsim import bench

    def row(name: str, rates: tuple[float, ...], cell_hops: int = 0) -> bench.BenchRow:
        return bench.BenchRow(name, 1.0, 1.0, 10, 10, 1, 1.0, 0.0, cell_hops=cell_hops,
                              rates=rates)  # fmt: skip

    # The machine halves its speed in round 2 and doubles it in round 3: every round, PDS
    # moves 0.7 of P1's packets per second. Unpaired medians would give 1.4 / 2 = 0.7 only by
    # luck; paired, each round says 0.7.
    p1 = row("P1", (2.0, 1.0, 4.0))
    pds = row("PDS", (1.4, 0.7, 2.8))
    atm = row("PATM", (0.1, 0.1, 0.1), cell_hops=100)
    rel = bench.relative_to([p1, pds, atm])
    assert rel == {"PDS": pytest.approx(0.7)}, "ATM's cells are not packets: left out"
    assert "relative to P1" in bench.format_table([p1, pds])
    assert bench.relative_to([pds]) == {}


def test_bench_also_pairs_ratios_per_link_crossed_so_a_fat_tree_is_judged_per_hop() -> None:
    from ccsim import bench

    def row(name: str, rates: tuple[float, ...], hops: tuple[float, ...]) -> bench.BenchRow:
        return bench.BenchRow(name, 1.0, 1.0, 10, 10, 1, 1.0, 0.0, rates=rates,
                              hop_rates=hops)  # fmt: skip

    # P1's packets cross 3 links, the fat-tree's 6: per packet 0.3 of P1, per hop 0.6.
    p1 = row("P1", (2.0, 1.0), (6.0, 3.0))
    ft = row("FT8", (0.6, 0.3), (3.6, 1.8))
    assert bench.relative_to([p1, ft]) == {"FT8": pytest.approx(0.3)}
    assert bench.relative_to([p1, ft], per_hop=True) == {"FT8": pytest.approx(0.6)}
    assert "per link crossed): FT8 0.60" in bench.format_table([p1, ft])


def test_the_paper_002_benchmark_is_case_1_with_highspeed_and_runs_only_when_named(
    monkeypatch: Any,
) -> None:
    from ccsim import bench

    monkeypatch.chdir(Path(__file__).resolve().parents[2])
    assert "P002" not in bench.SCENARIOS, "not in the default set: it takes ~1.5 min"
    path, overrides = bench.benchmark_scenario("P002")
    resolved = ccsim.Scenario.from_toml(path).with_overrides(overrides).validate()
    ccs = [line for line in resolved.splitlines() if line.startswith("cc = ")]
    assert ccs.count('cc = "highspeed"') == 4
    assert 'duration = "500s"' in resolved
    known = "P0, P1, P2, PSCTP, PATM, PDS, PAQM, PACED, BBR, RACK, P002"
    with pytest.raises(ValueError, match=f"unknown benchmark P9; known: {known}"):
        bench.run_benchmarks(only=["P9"])


def test_the_aqm_benchmark_is_p1_with_fq_codel_at_its_bottleneck_and_runs_by_default():
    from ccsim import bench

    path, overrides = bench.benchmark_scenario("PAQM")
    assert path == bench.BENCH_DIR / bench.SCENARIOS["P1"]
    resolved = ccsim.Scenario.from_toml(path).with_overrides(overrides).validate()
    assert resolved.count("fq_codel") == 1, "the bottleneck only"


def test_the_pacing_benchmarks_are_p1_paced_and_p1_with_bbr_and_run_by_default():
    from ccsim import bench

    for name, line in [("PACED", "pacing = true"), ("BBR", 'cc = "bbr"')]:
        path, overrides = bench.benchmark_scenario(name)
        assert path == bench.BENCH_DIR / bench.SCENARIOS["P1"]
        assert name in bench.P1_VARIANTS
        resolved = ccsim.Scenario.from_toml(path).with_overrides(overrides).validate()
        assert line in resolved.splitlines(), resolved


def test_the_rack_benchmark_is_p1_with_rack_tlp_on_every_flow_and_runs_by_default():
    from ccsim import bench

    path, overrides = bench.benchmark_scenario("RACK")
    assert path == bench.BENCH_DIR / bench.SCENARIOS["P1"]
    resolved = ccsim.Scenario.from_toml(path).with_overrides(overrides).validate()
    assert 'loss_detection = "rack"' in resolved
    assert "tlp = true" in resolved


def test_version_prints_the_package_version_and_exits_with_status_0(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    # With the engine (campaign 61d's notice): two builds of one version are told apart.
    from ccsim import _core

    assert capsys.readouterr().out.strip() == f"ccsim {ccsim.__version__} (engine {_core.ENGINE})"


def test_help_says_what_ccsim_is_and_shows_examples_not_the_module_docstring(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert "packet-level network simulator" in out
    assert "ccsim reproduce p001" in out
    assert "The ``ccsim`` command" not in out


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_long_run_shows_its_progress_on_a_terminal_and_nothing_elsewhere() -> None:
    from ccsim.cli import _progress_line

    with _progress_line(io.StringIO()) as none:
        assert none is None, "no progress line when stderr is not a terminal"
    term = _Terminal()
    with _progress_line(term) as line:
        assert line is not None
        line(1.0, 1_000, 500.0)  # within its first second: nothing yet
        assert term.getvalue() == ""
        line.started -= 2.0
        line.last = (line.last[0] - 1.0, line.last[1])
        line(125.0, 4_001_000, 500.0)
    out = term.getvalue()
    assert out.startswith("\rsimulated 125.0 s of 500 s (25 %), ")
    assert "M events/s" in out and out.endswith("\n")
    # 125 s simulated in its 2 s so far: the 375 s to go take about 6 s more.
    assert ", about 6 s left" in out


def test_the_time_left_covers_a_longer_earlier_line_when_it_shrinks() -> None:
    from ccsim.cli import _progress_line

    term = _Terminal()
    with _progress_line(term) as line:
        assert line is not None
        line.started -= 100.0
        line(1.0, 1_000, 500.0)  # 1 s simulated in 100 s: 499 s to go take 13.9 h
        line.started += 99.0
        line(499.0, 2_000, 500.0)  # 499 s in 1 s: about 1 s left
    first, second = term.getvalue().rstrip("\n").split("\r")[1:]
    assert "about 13 h 51 min left" in first and "about 1 s left" in second
    assert len(second) >= len(first), "the shorter line is padded over the longer one"


def test_the_time_left_and_the_rate_leave_out_the_time_the_process_was_stopped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Campaign 60b: after Ctrl-Z and fg, the pace counted the stop: a run 10 s from its end
    # said "0.8 M events/s, about 28 s left" after a 5 s stop, and counted down from there.
    from ccsim import cli

    clock = [1000.0]
    monkeypatch.setattr(cli.time, "monotonic", lambda: clock[0])
    term = _Terminal()
    with cli._progress_line(term) as line:
        assert line is not None
        for k in range(1, 5):  # a report every 0.5 s: 20 s simulated a second, 2 M events/s
            clock[0] += 0.5
            line(10.0 * k, 1_000_000 * k, 100.0)
        clock[0] += 60.0  # stopped a minute (the core's next report comes after it)
        line(50.0, 5_000_000, 100.0)
        clock[0] += 0.5
        line(60.0, 6_000_000, 100.0)
    shown = [s.rstrip() for s in term.getvalue().rstrip("\n").split("\r")[1:]]
    assert shown[-2:] == [
        "simulated 50.0 s of 100 s (50 %), 2.0 M events/s, about 2 s left",
        "simulated 60.0 s of 100 s (60 %), 2.0 M events/s, about 2 s left",
    ]


def test_the_progress_line_fits_a_terminal_narrower_than_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Campaign 33 (issue 32): the ~68-character line in a 40-column terminal (a tmux split,
    a phone's ssh client) wrapped, and its "\\r" went back to the start of the second row
    only: every report (each second) left a new row. It is cut to the width, less one column
    (a line that fills the last one wraps on some terminals)."""
    from ccsim.cli import _progress_line

    monkeypatch.setenv("COLUMNS", "40")
    term = _Terminal()
    with _progress_line(term) as line:
        assert line is not None
        line.started -= 2.0
        line(26.1, 10_000_000, 100.0)
        line(35.9, 20_000_000, 100.0)
    shown = term.getvalue().rstrip("\n").split("\r")[1:]
    assert len(shown) == 2 and all(len(s) <= 39 for s in shown), shown
    assert shown[0].startswith("simulated 26.1 s of 100 s (26 %)"), shown


class _HungUpTerminal(_Terminal):
    """A terminal whose window was closed: every write fails, as a hung-up tty's does (EIO)."""

    def write(self, text: str) -> int:
        import errno

        raise OSError(errno.EIO, "Input/output error")


def test_a_run_whose_terminal_hung_up_with_sighup_ignored_goes_on_and_writes_its_results(
    tmp_path: Path, examples: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Campaign 13: `trap '' HUP; ccsim run ...` in a window then closed: the progress line's
    # write failed (EIO) and stopped the run, status 1 and nothing written, though the user
    # had asked for it to survive the terminal.
    from ccsim import cli

    real_run = cli.run

    def run_reporting_progress_at_once(sc: Any, *, progress: Any, **kwargs: Any) -> Any:
        assert progress is not None, "stderr is a terminal: the line is shown"
        progress.started -= 2.0  # past its first second
        progress(0.5, 1_000, 1.0)
        progress(0.7, 2_000, 1.0)
        return real_run(sc, progress=progress, **kwargs)

    monkeypatch.setattr(cli, "run", run_reporting_progress_at_once)
    monkeypatch.setattr(sys, "stderr", _HungUpTerminal())
    out = tmp_path / "res"
    args = ["run", str(examples / "random-loss.toml"), "--out", str(out), "--set", 'duration="1s"']
    assert main(args) == 0
    assert (out / "flows.parquet").is_file() and (out / "scenario.toml").is_file()


def test_a_sweeps_progress_bar_goes_to_a_terminal_only(
    tmp_path: Path, examples: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """The bar shows the runs left and tqdm's estimate of the time left; redirected, its
    carriage-return rewrites would fill the log, so nothing is written."""
    from ccsim import sweep

    text = (examples / "random-loss.toml").read_text()
    runs = sweep.plan_grid(text, ['duration="1s"'], [], [1])
    sweep.execute(runs, sweep.Store(tmp_path / "runs"), workers=1)
    assert capfd.readouterr().err == ""


def test_a_short_flow_storm_stops_at_max_memory_with_the_rows_it_keeps_inside_it(
    tmp_path: Path,
) -> None:
    """Issue 32: a storm of Poisson transfers grew by its rows, which max_memory did not count
    (a run stopped at max_wall 10 s peaked at 2.67 GB). Each transfer's row now takes its share
    (about 1 KB, held by the run and then by its table), so the run stops at memory_limit and
    what it hands over, in the core and in Python, stays within the limit."""
    from ccsim import topologies

    limit = 8 << 20
    storm = topologies.dumbbell(
        0, hosts=1, web_rate=5000.0, web_sizes={"dist": "pareto", "mean": "10KB", "shape": 1.2},
        duration="1000s",
    )  # fmt: skip
    scenario = tmp_path / "storm.toml"
    scenario.write_text(storm.to_toml())
    out = tmp_path / "out"
    assert main(["run", str(scenario), "--out", str(out), "--set", 'limits.max_memory="8MiB"']) == 0
    res = ccsim.Result.from_parquet(out)
    assert res.summary is not None and res.summary.stop_reason == "memory_limit"
    rows = len(res.flows)
    assert 4_000 < rows <= limit // 1_000, rows  # it ran, and stopped at about 1 KB a row
    assert res.summary.sim_seconds < 10, "a thousand-second storm, stopped within seconds"
    # What Python holds of the table (numbers and text) is within the limit too.
    assert int(res.flows.memory_usage(deep=True).sum()) < limit


def test_a_sweep_of_more_runs_than_it_can_hold_is_one_line_naming_the_count(
    tmp_path: Path, examples: Path, capsys: Any
) -> None:
    out = tmp_path / "sweep"
    args = ["sweep", str(examples / "random-loss.toml"), "--out", str(out),
            "--param", "links.bottleneck.loss.rate=0.01,0.02"]  # fmt: skip
    # 10^15 seeds (a typo's worth of digits): the list of seeds alone does not fit in memory;
    # 10^26 does not fit in a C integer either, nor 10^21 workers in the pool's semaphore.
    for option, value in (("--seeds", "999999999999999"), ("--seeds", "1" + "0" * 26),
                          ("--workers", "1" + "0" * 21)):  # fmt: skip
        assert main([*args, option, value]) == 1
        err = capsys.readouterr().err
        assert err.startswith(f"ccsim: error: argument {option}: {value} "), err
        assert "it must be at most" in err and len(err.splitlines()) == 1
    assert main([*args, "--seeds", "999999"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("ccsim: error: the sweep has 1,999,998 runs; one holds at most 1,000,000")
    # Seven parameters of ten values each: 10^7 runs.
    many = [f"--param=tcp.{k}=" + ",".join(str(v) for v in range(1, 11))
            for k in ("a", "b", "c", "d", "e", "f", "g")]  # fmt: skip
    assert main(["sweep", str(examples / "random-loss.toml"), "--out", str(out), *many]) == 1
    assert capsys.readouterr().err.startswith("ccsim: error: the sweep has 10,000,000 runs")
    assert not out.exists(), "nothing is written for a sweep refused before it starts"


def test_a_reproduction_of_more_runs_than_it_can_hold_is_refused_before_it_builds_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ccsim.experiment import load_plan, plan_runs

    root = Path(__file__).resolve().parents[2]
    monkeypatch.chdir(root)
    plan = load_plan(root / "experiments" / "p001-spack")
    with pytest.raises(
        ValueError, match=r"the reproduction has [\d,]+ runs; one holds at most 1,000,000"
    ):
        plan_runs(plan, True, 10**15)
    assert len(plan_runs(plan, True, 2)) > 0
    out = tmp_path / "p001"
    assert main(["reproduce", "p001", "--quick", "--seeds", "999999", "--out", str(out)]) == 1
    assert not out.exists(), "a refused reproduction leaves no folder that looks like one"


@pytest.mark.parametrize(
    ("command", "buffering"),
    [(["validate", "random-loss.toml"], -1), (["validate", "random-loss.toml"], 1),
     (["reproduce", "--list"], 1), (["--help"], -1), (["--version"], -1), (["--help"], 0),
     (["run", "--help"], 0), (["--version"], 0)],
)  # fmt: skip
def test_output_to_a_full_disk_is_an_error_naming_stdout_not_a_silent_success(
    command: list[str], buffering: int, examples: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: Any,
) -> None:  # fmt: skip
    # `ccsim ... > /dev/full`: a buffered write fails at the flush, a line-buffered one (or
    # PYTHONUNBUFFERED) in print itself, with ENOSPC. The error was a bare "[Errno 28] ..."
    # (validate), or nothing at all with status 0 (--help and --version: argparse prints them
    # and leaves before the command's own flush). Unbuffered (buffering 0, as under
    # PYTHONUNBUFFERED=1), argparse's own write of --help fails, and argparse ignores that.
    monkeypatch.chdir(examples.parent)
    argv = [str(examples / a) if a.endswith(".toml") else a for a in command]
    if buffering == 0:
        stream = io.TextIOWrapper(open("/dev/full", "wb", buffering=0), write_through=True)
    else:
        stream = open("/dev/full", "w", buffering=buffering)
    with stream as full:
        monkeypatch.setattr(sys, "stdout", full)
        status = main(argv)
        monkeypatch.undo()
    assert status == 1
    err = capsys.readouterr().err
    assert err == "ccsim: error: stdout: no space left on device\n"


@pytest.mark.parametrize(
    "command",
    [["validate", "random-loss.toml"], ["--help"], ["run", "--help"], ["--version"],
     ["reproduce", "--list"]],
)  # fmt: skip
def test_output_with_stdout_closed_is_an_error_naming_stdout_not_a_silent_success(
    command: list[str], examples: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    # `ccsim validate x.toml >&-`: Python starts with sys.stdout None, and print() to None
    # writes nothing: validate exited 0 having said nothing, and --help raised AttributeError.
    monkeypatch.chdir(examples.parent)
    argv = [str(examples / a) if a.endswith(".toml") else a for a in command]
    monkeypatch.setattr(sys, "stdout", None)
    status = main(argv)
    monkeypatch.undo()
    assert status == 1
    assert capsys.readouterr().err == "ccsim: error: stdout: closed (nothing can be printed)\n"


@pytest.mark.parametrize("stdout", ["closed", "full"])
def test_bench_draws_its_plot_when_stdout_cannot_take_the_table(
    stdout: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    # Campaign 16 (issue 32): `ccsim bench --scale --plot x.png > /dev/full` failed printing the
    # table, before the plot was drawn: minutes of benchmarks, and no figure.
    from conftest import STDOUT_ERRORS, main_without_stdout

    plot = tmp_path / "scale.png"
    argv = ["bench", "--only", "F10", "--repeat", "1", "--plot", str(plot)]
    assert main_without_stdout(stdout, argv, monkeypatch, capsys) == (1, STDOUT_ERRORS[stdout])
    assert plot.read_bytes().startswith(b"\x89PNG")


def test_bench_prints_its_table_when_its_plot_cannot_be_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    # Campaign 52 (issue 32): `ccsim bench --scale --plot x.png` with x.png's disk full (a
    # tmpfs of 16 KiB) ended with the plot's error alone: the table of minutes of benchmarks
    # was never printed. The rows are made up here: the plot's write is what is tested.
    import matplotlib.figure

    from ccsim import bench

    def full(*_: Any, **__: Any) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    row = bench.BenchRow("F10", 0.5, 0.7, 1000, 200, 10, 50.0, 100.0, data_hops=400)
    monkeypatch.setattr(bench, "run_benchmarks", lambda repeat=1, only=None: [row])
    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", full)
    plot = tmp_path / "scale.png"
    assert main(["bench", "--only", "F10", "--repeat", "1", "--plot", str(plot)]) == 1
    out, err = capsys.readouterr()
    assert out == bench.format_table([row]) + "\n"
    assert err == f"ccsim: error: {plot}: no space left on device\n"
    assert os.listdir(tmp_path) == []


def test_a_stdout_that_cannot_encode_a_line_is_named_with_the_cure(
    tmp_path: Path, examples: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    # Campaign 16 (issue 32): PYTHONIOENCODING=ascii and a scenario named in Hangul: the error
    # was "'ascii' codec can't encode characters in position 4-6: ordinal not in range(128)".
    scenario = tmp_path / "시나리오.toml"
    scenario.write_bytes((examples / "random-loss.toml").read_bytes())
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(io.BytesIO(), encoding="ascii"))
    status = main(["validate", scenario.name])
    monkeypatch.undo()
    assert status == 1
    assert capsys.readouterr().err == (
        "ccsim: error: stdout: its encoding (ascii) cannot show '시나리오'; set "
        "PYTHONIOENCODING=utf-8 or a UTF-8 locale\n"
    )


def test_a_dependency_missing_from_a_broken_install_is_one_line_saying_how_to_reinstall(
    tmp_path: Path, examples: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    # pip install --no-deps, or a package removed since: pyarrow writes the run's tables. The
    # error was "internal error (ModuleNotFoundError)" after a traceback from the thread that
    # imports pyarrow while the core runs.
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    out = tmp_path / "res"
    assert main(["run", str(examples / "random-loss.toml"), "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert err == (
        "ccsim: error: ccsim needs pyarrow, which is not installed: install ccsim again with its "
        "dependencies (pip install -c constraints.txt . from the repository root)\n"
    )
    assert not out.exists()


def test_a_pyarrow_without_its_parquet_part_stops_a_run_at_its_first_report_not_its_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    # Bug pinned (the extras matrix, campaign 30, issue 32): pyarrow installed but its parquet
    # module failing to load (a conda pyarrow-core, a libparquet gone) was found only when
    # the tables were written, after the whole run: hours of it before "ccsim needs pyarrow".
    # The run is stopped at its first progress report now (~0.5 s); this one lasts ~2 s.
    from ccsim import _core

    finished = []
    real = _core.run

    def watched(*args: Any, **kwargs: Any) -> Any:
        out = real(*args, **kwargs)
        finished.append(True)  # not reached when the run was stopped
        return out

    monkeypatch.setattr(_core, "run", watched)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    scenario = Path(__file__).resolve().parents[2] / "python/ccsim/benchmarks/p2.toml"
    out = tmp_path / "res"
    assert main(["run", str(scenario), "--out", str(out)]) == 1
    monkeypatch.undo()
    assert capsys.readouterr().err.startswith("ccsim: error: ccsim needs pyarrow, which is not ")
    assert finished == [] and not out.exists()


@pytest.mark.parametrize("command", ["run", "sweep", "reproduce", "report", "explore"])
def test_an_output_or_results_folder_whose_name_is_not_utf8_is_refused_before_any_run(
    command: str, tmp_path: Path, examples: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    # Campaign 16 (issue 32): a name holding the byte 0xff (a lone surrogate to Python) is one
    # pyarrow cannot take: `ccsim sweep --out` ran every run, then failed on its tables with
    # "'utf-8' codec can't encode character '\\udcff' in position 2: surrogates not allowed";
    # `ccsim run` wrote a folder that Result.from_parquet refuses.
    import os

    monkeypatch.chdir(examples.parent)
    folder = tmp_path / os.fsdecode(b"out\xff")
    scenario = str(examples / "random-loss.toml")
    option, argv = {
        "run": ("--out", ["run", scenario, "--out", str(folder)]),
        "sweep": ("--out", ["sweep", scenario, "--param", "duration=1s", "--out", str(folder)]),
        "reproduce": ("--out", ["reproduce", "m01", "--quick", "--out", str(folder)]),
        "report": ("--results", ["report", "--results", str(folder)]),
        "explore": ("--results", ["explore", "--results", str(folder)]),
    }[command]  # fmt: skip
    assert main(argv) == 1
    assert capsys.readouterr().err == (
        f"ccsim: error: {option} {tmp_path}/out\ufffd: the name is not UTF-8 (byte 0xff); "
        "ccsim's tables are read and written by names in UTF-8: rename it or name another "
        "folder\n"
    )
    assert not folder.exists()


# A package there that fails to load: what a shared library it was built against, gone since,
# makes of its import.
BROKEN_IMPORT = """
import sys
class Broken:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == {package!r}:
            raise ImportError("libbroken.so.1: cannot open shared object file", name=name)
sys.meta_path.insert(0, Broken())
from ccsim.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize(
    ("package", "command"),
    [("pyarrow", "run"), ("numpy", "run"), ("pandas", "sweep"), ("matplotlib", "reproduce"),
     ("uvicorn", "explore")],
)  # fmt: skip
def test_a_dependency_that_is_installed_but_fails_to_import_is_named_with_the_cure(
    package: str, command: str, tmp_path: Path, examples: Path
) -> None:
    # Campaign 16 (issue 32): only a missing package was named; one that failed to load was
    # "internal error (ImportError): libarrow.so...: cannot open shared object file", which
    # names neither the package nor that installing ccsim again mends it.
    scenario = str(examples / "random-loss.toml")
    argv = {
        "run": ["run", scenario, "--out", str(tmp_path / "o")],
        "sweep": ["sweep", scenario, "--param", "duration=1s", "--out", str(tmp_path / "o")],
        "reproduce": ["reproduce", "m01", "--quick", "--out", str(tmp_path / "o")],
        "explore": ["explore", "--results", str(tmp_path), "--port", "1"],
    }[command]  # fmt: skip
    code = BROKEN_IMPORT.format(package=package)
    proc = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True,
                          timeout=120, cwd=examples.parent)  # fmt: skip
    who = "ccsim explore" if command == "explore" else "ccsim"
    assert (proc.returncode, proc.stderr) == (1, (
        f"ccsim: error: {who} needs {package}, which is installed but cannot be imported "
        "(libbroken.so.1: cannot open shared object file): install ccsim again with its "
        "dependencies (pip install -c constraints.txt . from the repository root)\n"
    ))  # fmt: skip
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(("package", "command"), [("pyarrow", "run"), ("pandas", "sweep")])
def test_a_dependency_whose_import_raises_another_error_than_importerror_is_named_with_the_cure(
    package: str, command: str, tmp_path: Path, examples: Path
) -> None:
    # Campaign 20 (issue 32): a binary built against another numpy raises ValueError at its
    # import, not ImportError; it was shown alone ("ccsim: error: numpy.dtype size changed,
    # ..."), naming neither the package nor that installing ccsim again mends it.
    shadow = tmp_path / "shadow" / package
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text(
        'raise ValueError("numpy.dtype size changed, may indicate binary incompatibility")\n'
    )
    scenario = str(examples / "random-loss.toml")
    argv = {
        "run": ["run", scenario, "--out", str(tmp_path / "o")],
        "sweep": ["sweep", scenario, "--param", "duration=1s", "--out", str(tmp_path / "o")],
    }[command]
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "shadow")}
    proc = subprocess.run([sys.executable, "-m", "ccsim", *argv], capture_output=True,
                          text=True, timeout=120, cwd=examples.parent, env=env)  # fmt: skip
    assert (proc.returncode, proc.stderr) == (1, (
        f"ccsim: error: ccsim needs {package}, which is installed but cannot be imported "
        "(numpy.dtype size changed, may indicate binary incompatibility): install ccsim again "
        "with its dependencies (pip install -c constraints.txt . from the repository root)\n"
    ))  # fmt: skip
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(("raised", "said"), [
    ('OSError("libfoo.so.3: cannot open shared object file")',
     "libfoo.so.3: cannot open shared object file"),
    ('PermissionError(13, "Permission denied", __file__)', "[Errno 13] Permission denied: "),
])  # fmt: skip
def test_a_dependency_whose_import_raises_an_oserror_is_named_with_the_cure(
    raised: str, said: str, tmp_path: Path, examples: Path
) -> None:
    # Campaign 49 (issue 32): a package whose import fails with an OSError (a shared library
    # its code loads with ctypes gone, one of its files left unreadable by an install under
    # another user's umask 077) was said as the bare OSError: "ccsim: error: libfoo.so.3:
    # cannot open shared object file", or ".../site-packages/matplotlib/pyplot.py: permission
    # denied", naming neither the package nor the cure, as a ValueError was before campaign 20.
    shadow = tmp_path / "shadow" / "pyarrow"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text(f"raise {raised}\n")
    argv = ["run", str(examples / "random-loss.toml"), "--out", str(tmp_path / "o")]
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "shadow")}
    proc = subprocess.run([sys.executable, "-m", "ccsim", *argv], capture_output=True,
                          text=True, timeout=120, cwd=examples.parent, env=env)  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.startswith(
        f"ccsim: error: ccsim needs pyarrow, which is installed but cannot be imported ({said}"
    ), proc.stderr
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.endswith(
        "): install ccsim again with its dependencies (pip install -c constraints.txt . from "
        "the repository root)\n"
    ), proc.stderr
    assert not (tmp_path / "o").exists()


def test_a_file_failing_to_load_is_read_against_the_innermost_folder_of_the_module_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Campaign 50 (issue 32): under `python -m ccsim` the working folder is first on sys.path;
    # run from a home folder holding the virtual environment, a library of pyarrow's failing
    # to load (or a module file of a package unreadable) was read against the home folder,
    # "ccsim needs venv, which is installed but cannot be imported"; and a module of its own
    # (six.py) directly in site-packages against a folder above it.
    from ccsim.staging import package_of_file

    site = tmp_path / "venv" / "lib" / "site-packages"
    monkeypatch.setattr(sys, "path", [str(tmp_path), str(site)])
    assert package_of_file(str(site / "pyarrow" / "lib.cpython-311-x86_64-linux-gnu.so")) == (
        "pyarrow"
    )
    assert package_of_file(str(site / "six.py")) == "six"
    assert package_of_file(str(tmp_path / "notes.txt")) is None


def test_tqdm_failing_to_import_is_said_once_not_inside_ccsim_sweeps_own_words(
    tmp_path: Path, examples: Path
) -> None:
    # Campaign 49 (issue 32): ccsim.sweep names tqdm itself for the Python API, and the command
    # line wrapped those words in its own: "ccsim needs tqdm, which is installed but cannot be
    # imported (ccsim.sweep needs tqdm, which is installed but cannot be imported: boom)".
    shadow = tmp_path / "shadow" / "tqdm"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text('raise RuntimeError("boom")\n')
    argv = ["sweep", str(examples / "random-loss.toml"), "--param", "duration=1s", "--out",
            str(tmp_path / "o")]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "shadow")}
    proc = subprocess.run([sys.executable, "-m", "ccsim", *argv], capture_output=True,
                          text=True, timeout=120, cwd=examples.parent, env=env)  # fmt: skip
    assert (proc.returncode, proc.stderr) == (1, (
        "ccsim: error: ccsim needs tqdm, which is installed but cannot be imported (boom): "
        "install ccsim again with its dependencies (pip install -c constraints.txt . from the "
        "repository root)\n"
    ))  # fmt: skip
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("package", ["pyarrow", "distributed"])
def test_a_dependency_whose_files_are_gone_but_its_metadata_left_is_reinstalled_by_force(
    package: str, tmp_path: Path, examples: Path
) -> None:
    # Campaign 49 (issue 32): pyarrow's folder gone but its pyarrow-*.dist-info left (an
    # uninstall or a copy of site-packages cut short) was "ccsim needs pyarrow, which is not
    # installed: install ccsim again ... (pip install -c constraints.txt .)", and pip, finding
    # the metadata, answered "Requirement already satisfied" and left it so. Here no finder
    # finds pyarrow, and a pyarrow metadata names its files, none of them there.
    hide = tmp_path / "hide"
    info = hide / f"{package}-99.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {package}\nVersion: 99.0\n")
    (info / "RECORD").write_text(f"{package}/__init__.py,,\n{info.name}/METADATA,,\n")
    (hide / "sitecustomize.py").write_text(
        textwrap.dedent("""\
        import sys

        class Gone:
            def find_spec(self, name, path=None, target=None):
                if name.partition(".")[0] == PACKAGE:
                    raise ModuleNotFoundError(f"No module named {name!r}", name=name)

        sys.meta_path.insert(0, Gone())
    """).replace("PACKAGE", repr(package))
    )
    argv = ["run", str(examples / "random-loss.toml"), "--out", str(tmp_path / "o")]
    who = "ccsim needs pyarrow"
    if package == "distributed":
        argv = ["sweep", argv[1], "--param", "duration=1s", "--executor", "dask",
                "--scheduler", "tcp://127.0.0.1:1", "--out", str(tmp_path / "o")]  # fmt: skip
        who = "--executor dask needs Dask's distributed scheduler, which needs distributed"
    env = {**os.environ, "PYTHONPATH": str(hide)}
    proc = subprocess.run([sys.executable, "-m", "ccsim", *argv], capture_output=True,
                          text=True, timeout=120, cwd=examples.parent, env=env)  # fmt: skip
    assert (proc.returncode, proc.stderr) == (1, (
        f"ccsim: error: {who}, whose files are gone though its metadata is left, so pip takes "
        f"{package} as installed: pip install --force-reinstall -c constraints.txt {package} "
        "(from the repository root)\n"
    ))  # fmt: skip
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    ("package", "damage"),
    [("pyarrow", "module"), ("pyarrow", "library"), ("distributed", "module")],
)
def test_a_dependency_with_a_file_cut_short_or_emptied_is_reinstalled_by_force(
    package: str, damage: str, tmp_path: Path, examples: Path
) -> None:
    # Campaign 50b (issue 32): a module of an installed package cut short (a full disk as pip
    # wrote it) or a library of it emptied was "installed but cannot be imported (...):
    # install ccsim again" (or "pip install '.[dask]'"), and pip, taking the package as
    # installed, answered "Requirement already satisfied" and left the file so. Here a
    # stand-in package first on PYTHONPATH, with its metadata, has one file differing from
    # its RECORD; the cure named must be the one that rewrites it.
    import base64
    import hashlib
    from importlib.machinery import EXTENSION_SUFFIXES

    site = tmp_path / "site"
    (site / package).mkdir(parents=True)
    whole = b"def f():\n    return 1\n" * 20
    name = f"_lib{EXTENSION_SUFFIXES[0]}" if damage == "library" else "_lib.py"
    (site / package / "__init__.py").write_text(f"from {package} import _lib\n")
    (site / package / name).write_bytes(whole[: 0 if damage == "library" else 30])
    digest = base64.urlsafe_b64encode(hashlib.sha256(whole).digest()).rstrip(b"=").decode()
    info = site / f"{package}-99.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {package}\nVersion: 99.0\n")
    (info / "RECORD").write_text(
        f"{package}/__init__.py,,\n{package}/{name},sha256={digest},{len(whole)}\n"
        f"{info.name}/METADATA,,\n"
    )
    argv = ["run", str(examples / "random-loss.toml"), "--out", str(tmp_path / "o")]
    who = "ccsim needs pyarrow"
    if package == "distributed":
        argv = ["sweep", argv[1], "--param", "duration=1s", "--executor", "dask",
                "--scheduler", "tcp://127.0.0.1", "--out", str(tmp_path / "o")]  # fmt: skip
        who = "--executor dask needs Dask's distributed scheduler"
    env = {**os.environ, "PYTHONPATH": str(site)}
    proc = subprocess.run([sys.executable, "-m", "ccsim", *argv], capture_output=True,
                          text=True, timeout=120, cwd=examples.parent, env=env)  # fmt: skip
    lines = proc.stderr.splitlines()
    assert proc.returncode == 1 and len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"ccsim: error: {who}, which is installed but cannot be imported ")
    assert lines[0].endswith(
        f": {site / package / name} is not as pip installed it for {package} (cut short or "
        f"emptied), and pip takes {package} as installed: pip install --force-reinstall -c "
        f"constraints.txt {package} (from the repository root)"
    ), lines[0]
    assert not (tmp_path / "o").exists()


def test_a_dependency_failing_to_import_for_a_warning_made_an_error_says_so_not_reinstall(
    tmp_path: Path, examples: Path
) -> None:
    # Campaign 46 (issue 32): under PYTHONWARNINGS=error, pandas' warning about an optional
    # package of its own too old for it (bottleneck 1.3 beside pandas 3, as an older Anaconda
    # has) failed its import, and ccsim said "installed but cannot be imported (...): install
    # ccsim again", which brings back the same packages and the same warning. The stand-in
    # bottleneck (the real one need not be installed) is one pandas finds too old.
    old = tmp_path / "old" / "bottleneck"
    old.mkdir(parents=True)
    (old / "__init__.py").write_text('__version__ = "1.3.0"\n')
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "old"), "PYTHONWARNINGS": "error"}
    argv = ["reproduce", "m01", "--quick", "--out", str(tmp_path / "o")]
    proc = subprocess.run([sys.executable, "-m", "ccsim", *argv], capture_output=True,
                          text=True, timeout=120, cwd=examples.parent, env=env)  # fmt: skip
    assert (proc.returncode, proc.stderr) == (1, (
        "ccsim: error: ccsim needs pandas, which cannot be imported while warnings are errors "
        "(PYTHONWARNINGS=error or -W error) for its warning \"Pandas requires version '1.5.0' "
        "or newer of 'bottleneck' (version '1.3.0' currently installed).\": do what it says, "
        "or run without warnings as errors\n"
    ))  # fmt: skip
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    ("setting", "argv", "said"),
    [
        ("TQDM_MININTERVAL=abc", ["--workers", "1"],
         "ccsim needs tqdm, which cannot be imported with TQDM_MININTERVAL='abc' in the "
         "environment (could not convert string to float: 'abc'): mend or unset it"),
        ("DASK_DISTRIBUTED__COMM__OFFLOAD=abc", ["--executor", "dask", "--scheduler",
                                                 "tcp://127.0.0.1:1"],
         "--executor dask needs Dask's distributed scheduler, which cannot be imported with "
         "DASK_DISTRIBUTED__COMM__OFFLOAD='abc' in the environment (Could not interpret 'abc' "
         "as a byte unit): mend or unset it"),
    ],
    ids=["tqdm", "distributed"],
)  # fmt: skip
def test_a_dependency_failing_on_a_setting_of_its_own_names_the_variable_not_reinstall(
    setting: str, argv: list[str], said: str, tmp_path: Path, examples: Path
) -> None:
    # Campaign 46 (issue 32): tqdm and distributed read their environment variables as they
    # load, and a value they cannot parse failed their import: "ccsim needs tqdm, which is
    # installed but cannot be imported (...): install ccsim again", an install that changes
    # nothing.
    pytest.importorskip("distributed")  # the test command installs it; the tqdm case too
    name, _, value = setting.partition("=")
    out = tmp_path / "o"
    proc = subprocess.run(
        [sys.executable, "-m", "ccsim", "sweep", str(examples / "random-loss.toml"), "--set",
         "duration=100ms", "--param", "links.bottleneck.loss.rate=0.01,0.02", *argv,
         "--out", str(out)],
        capture_output=True, text=True, timeout=120, cwd=examples.parent,
        env={**os.environ, name: value},
    )  # fmt: skip
    assert (proc.returncode, proc.stderr) == (1, f"ccsim: error: {said}\n")
    assert not out.exists()


def test_a_setting_is_blamed_only_where_the_error_quotes_its_value_or_names_its_module(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from ccsim.cli import _setting_failed_on

    for name in [n for n in os.environ if n.startswith(("TQDM_", "DASK_", "MPL"))]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("TQDM_DISABLE", "1")  # a valid setting beside an unrelated failure
    assert _setting_failed_on("tqdm", ImportError("libfoo.so.1: cannot open")) is None
    monkeypatch.setenv("TQDM_MININTERVAL", "abc")
    assert _setting_failed_on("tqdm", ValueError("could not convert: 'abc'")) == (
        "TQDM_MININTERVAL='abc'"
    )
    assert _setting_failed_on("pandas", ValueError("could not convert: 'abc'")) is None
    monkeypatch.setenv("DASK_DISTRIBUTED__CLIENT__SECURITY_LOADER", "nomod.load")
    missing = ModuleNotFoundError("No module named 'nomod'", name="nomod")
    assert _setting_failed_on("nomod", missing) == (
        "DASK_DISTRIBUTED__CLIENT__SECURITY_LOADER='nomod.load'"
    )


@pytest.mark.parametrize("package", ["numpy", "pyarrow"])
@pytest.mark.parametrize("command", ["sweep", "reproduce", "report"])
def test_numpy_or_pyarrow_missing_is_named_by_every_command_that_needs_them(
    package: str, command: str, tmp_path: Path, examples: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: Any,
) -> None:  # fmt: skip
    # Campaign 3: imported by pandas, a missing numpy was "internal error (ImportError): Unable
    # to import required dependency numpy"; a missing pyarrow, after the sweep's runs,
    # "internal error (ImportError): Unable to find a usable engine".
    monkeypatch.chdir(examples.parent)
    monkeypatch.setitem(sys.modules, package, None)
    monkeypatch.setitem(sys.modules, f"{package}.parquet", None)
    argv = {
        "sweep": ["sweep", str(examples / "random-loss.toml"), "--param",
                  "links.bottleneck.loss.rate=0.01", "--seeds", "1", "--out", str(tmp_path / "o")],
        "reproduce": ["reproduce", "p001", "--quick", "--seeds", "1", "--out", str(tmp_path / "o")],
        "report": ["report", "--results", str(tmp_path)],
    }[command]  # fmt: skip
    status = main(argv)
    monkeypatch.undo()
    assert status == 1
    assert capsys.readouterr().err == (
        f"ccsim: error: ccsim needs {package}, which is not installed: install ccsim again with "
        "its dependencies (pip install -c constraints.txt . from the repository root)\n"
    )
    assert not (tmp_path / "o").exists()


def test_with_stderr_closed_a_sweep_runs_and_an_error_stays_out_of_the_output(
    tmp_path: Path, examples: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    # Campaign 3: `ccsim sweep ... 2>&-` (Python starts with sys.stderr None) ended with
    # "internal error (AttributeError)" from the progress bar, and that line, like every error
    # with stderr closed, was printed into stdout, the command's output.
    monkeypatch.setattr(sys, "stderr", None)
    argv = ["sweep", str(examples / "random-loss.toml"), "--param",
            "links.bottleneck.loss.rate=0.01", "--seeds", "1", "--set", 'duration="1s"',
            "--out", str(tmp_path / "o")]  # fmt: skip
    assert main(argv) == 0
    assert main(["validate", str(tmp_path / "missing.toml")]) == 1
    monkeypatch.undo()
    out = capsys.readouterr().out
    assert "1 run: 1 executed" in out and "error" not in out, out


def test_tomli_w_missing_stops_no_command_that_does_not_write_toml(examples: Path) -> None:
    # Campaign 3: imported by ccsim.scenario at its top, a missing tomli_w stopped every
    # command, `ccsim validate` and `--help` included, with a traceback.
    code = ("import sys; sys.modules['tomli_w'] = None; from ccsim.cli import main; "
            "sys.exit(main(sys.argv[1:]))")  # fmt: skip
    argv = [sys.executable, "-c", code, "validate", str(examples / "random-loss.toml")]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert (proc.returncode, proc.stderr) == (0, "")
    assert proc.stdout.startswith("ok: ")


@pytest.mark.parametrize(
    "command",
    [["run", "random-loss.toml", "--out"], ["sweep", "random-loss.toml", "--out"],
     ["reproduce", "p001", "--out"], ["report", "--results"], ["report", "--out"],
     ["explore", "--results"]],
)  # fmt: skip
def test_an_empty_output_folder_is_refused_not_taken_for_the_working_folder(
    command: list[str], examples: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: Any,
) -> None:  # fmt: skip
    # `--out "$OUT"` with OUT unset: Path("") is ".", and ccsim run wrote its four files, its
    # scenario.toml among them, into the working folder.
    monkeypatch.chdir(tmp_path)
    argv = [str(examples / a) if a.endswith(".toml") else a for a in command]
    assert main([*argv, ""]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"ccsim: error: argument {command[-1]}: empty; name a folder")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command", ["run", "validate", "sweep"])
def test_an_empty_scenario_file_argument_is_refused_as_empty_not_as_a_directory(
    command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    # Campaign 12: `ccsim run "$F" --out x` with F unset said ".: is a directory".
    monkeypatch.chdir(tmp_path)
    assert main([command, "", *(["--out", "x"] if command != "validate" else [])]) == 1
    err = capsys.readouterr().err
    assert err.startswith("ccsim: error: argument file: empty; name the scenario's TOML file")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command", ["run", "validate", "sweep"])
def test_a_scenario_file_whose_name_is_not_utf8_is_refused_naming_the_argument_and_the_cure(
    command: str, tmp_path: Path, examples: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    # Campaign 22 (issue 32): a file named with a byte 0xff (a Latin-1 name from another
    # system) was refused as "path: 'bad\udcffname.toml' has a lone surrogate, not a
    # character", naming the reader's parameter, not the argument, nor what to do.
    monkeypatch.chdir(tmp_path)
    name = os.fsdecode(b"bad\xffname.toml")
    (tmp_path / name).write_text((examples / "random-loss.toml").read_text())
    assert main([command, name, *(["--out", "x"] if command != "validate" else [])]) == 1
    err = capsys.readouterr().err
    assert err.startswith(
        "ccsim: error: argument file: bad\ufffdname.toml: the name is not UTF-8 (byte 0xff); "
        "rename the file, or link to it by a name in UTF-8"
    ), err
    assert err.count("\n") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]


@pytest.mark.parametrize(
    ("argv", "option"),
    [(["run", "S", "--out", "x", "--set", "links.bottleneck.rate=1\udcffMbps"], "--set"),
     (["validate", "S", "--set", "flows.reno.variant=\udcff"], "--set"),
     (["run", "S", "--out", "x", "--pcap", "h\udcff"], "--pcap"),
     (["sweep", "S", "--out", "x", "--param", "duration=1s,\udcff"], "--param"),
     (["reproduce", "m\udcff"], "experiment"),
     (["bench", "--only", "P\udcff"], "--only"),
     (["explore", "--host", "\udcff"], "--host")],
)  # fmt: skip
def test_a_text_argument_that_is_not_utf8_is_refused_naming_its_option(
    argv: list[str], option: str, tmp_path: Path, examples: Path,
    monkeypatch: pytest.MonkeyPatch, capsys: Any,
) -> None:  # fmt: skip
    # Campaign 22 (issue 32): a byte 0xff (a lone surrogate to Python) in a text argument was
    # refused naming the parameter of the code that took it ("overrides: U+DCFF is a lone
    # surrogate", "spec: ...", "value: ..."), and `ccsim reproduce $'m\xff'` was "internal
    # error (TypeError): name: expected a string, not str".
    monkeypatch.chdir(tmp_path)
    argv = [str(examples / "random-loss.toml") if a == "S" else a for a in argv]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"ccsim: error: argument {option}: "), err
    assert "is not UTF-8 (byte 0xff); ccsim reads its arguments as UTF-8 text" in err
    assert err.count("\n") == 1
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("command", "name"), [("run", "flows.parquet"), ("run", "scenario.toml"),
                                             ("sweep", "links.parquet")])  # fmt: skip
def test_an_out_holding_a_folder_where_one_of_its_files_goes_is_refused_before_the_runs(
    command: str, name: str, tmp_path: Path, examples: Path, capsys: Any
) -> None:
    # Campaign 22 (issue 32): `--out d` with d/flows.parquet a folder (a dataset another tool
    # wrote under that name) made the whole run, then failed renaming the table over it,
    # naming the hidden staging folder, which was left in d with some new files beside it.
    out = tmp_path / "d"
    (out / name).mkdir(parents=True)
    (out / name / "part-0.parquet").write_text("theirs")
    scenario = str(examples / "random-loss.toml")
    extra = ["--param", "duration=0.1s,0.2s"] if command == "sweep" else ["--set", "duration=0.1s"]
    assert main([command, scenario, "--out", str(out), *extra]) == 1
    err = capsys.readouterr().err
    assert err == (f"ccsim: error: --out {out}: {out / name} is a folder, where the output's "
                   f"{name} goes; move it away or name another folder\n")  # fmt: skip
    assert [p.name for p in out.iterdir()] == [name]
    assert (out / name / "part-0.parquet").read_text() == "theirs"


def test_a_reproduction_folder_holding_a_folder_where_one_of_its_files_goes_is_left_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    # Campaign 22 (issue 32): with claims.csv a folder in --out, the rename after every run
    # failed half-way, naming the hidden staging folder, which stayed in --out.
    monkeypatch.chdir(Path(__file__).resolve().parents[2])
    out = tmp_path / "m"
    (out / "claims.csv").mkdir(parents=True)
    assert main(["reproduce", "m01", "--quick", "--workers", "1", "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(
        f"ccsim: error: {out}/claims.csv is a folder, where the output's claims.csv goes: move "
        "it away or name another folder; "
    ), err
    assert "the finished runs are kept in" in err and err.count("\n") == 1
    assert sorted(p.name for p in out.iterdir()) == ["claims.csv", "plan", "runs"]


def test_a_reproduction_folder_whose_site_is_a_file_is_refused_before_the_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    # Campaign 22 (issue 32): the site is written last, and it failed then, naming
    # "<out>/site/<name>: not a directory", with report.md beside it looking finished.
    monkeypatch.chdir(Path(__file__).resolve().parents[2])
    out = tmp_path / "m"
    out.mkdir()
    (out / "site").write_text("mine")
    assert main(["reproduce", "m01", "--quick", "--workers", "1", "--out", str(out)]) == 1
    assert capsys.readouterr().err == (
        f"ccsim: error: --out {out}: the reproduction's site goes in {out}/site, and {out}/site "
        "is a file, not a folder; move it away or name another folder\n"
    )
    assert [p.name for p in out.iterdir()] == ["site"]


def _interrupted_block(imports: str, body: str, after: str = "") -> tuple[int, str, str]:
    """Run ``body`` (lines indented for the block) inside ``cli._signals_interrupt`` in a fresh
    interpreter, then print which signal stopped it and ``after``'s lines: the status, stdout
    and stderr."""
    code = (
        f"import signal\nfrom ccsim import cli\n{imports}"
        f"try:\n    with cli._signals_interrupt() as received:\n{body}    print('went on')\n"
        f"except KeyboardInterrupt:\n    print('stopped by', signal.Signals(received[0]).name)\n"
        f"{after}"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=False)  # fmt: skip
    return proc.returncode, proc.stdout, proc.stderr


def test_a_second_stop_signal_pending_with_the_first_is_no_traceback() -> None:
    # Campaign 9: SIGINT and SIGTERM at once to `ccsim explore` printed "OSError: Signal 15
    # ignored due to race condition" and its traceback above ccsim's line: the first signal's
    # handler set SIG_IGN while the second was still pending in Python. Both made pending
    # here, then let in together.
    body = (
        "        both = {signal.SIGINT, signal.SIGTERM}\n"
        "        old = signal.pthread_sigmask(signal.SIG_BLOCK, both)\n"
        "        os.kill(os.getpid(), signal.SIGTERM)\n"
        "        os.kill(os.getpid(), signal.SIGINT)\n"
        "        signal.pthread_sigmask(signal.SIG_SETMASK, old)\n"
        "        sum(range(100000))\n"
    )
    ignored = "print(all(signal.getsignal(s) is signal.SIG_IGN for s in cli.STOP_SIGNALS))\n"
    # And the stop signals are ignored by the system from then to the exit: Python puts
    # their default action back as it exits, and a late one killed the process after its
    # message (a third Ctrl-C to the explorer: status -2 instead of 130).
    assert _interrupted_block("import os\n", body, ignored) == (0, "stopped by SIGINT\nTrue\n", "")


def test_a_stop_signal_handled_inside_a_finalizer_still_stops_the_command() -> None:
    # Campaign 9: SIGHUP to `ccsim reproduce` while it drew its figures raised the CLI's
    # KeyboardInterrupt inside a weakref callback, where Python only prints it ("Exception
    # ignored in ...", a traceback): the reproduction went on to status 0, deaf to any further
    # signal. Here a finalizer takes the signal; the block must still stop, with no output.
    imports = (
        "import time\n"
        "class Finalized:\n"
        "    def __del__(self):\n"
        "        signal.raise_signal(signal.SIGHUP)\n"
        "        sum(range(10))  # the handler runs here, inside the finalizer\n"
    )
    body = "        Finalized()\n        for _ in range(1000):\n            time.sleep(0.01)\n"
    assert _interrupted_block(imports, body) == (0, "stopped by SIGHUP\n", "")


@pytest.mark.parametrize("command", ["run", "sweep"])
def test_an_out_folder_named_tilde_is_written_where_ccsim_made_it_not_in_home(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    two_hosts: str,
    command: str,
) -> None:
    # Campaign 19 (issue 32): an existing --out '~/x' (quoted: a folder named ~ under the
    # working directory, as the shell leaves it) was staged in './~/x/.ccsim-partial-...', and
    # pandas, which expands a leading ~ in every path it writes, looked for that folder in
    # $HOME: 'Cannot save file into a non-existent directory: /home/.../x/.ccsim-partial-...'
    # after every run of a sweep or a reproduction, naming a folder outside --out.
    home, work = tmp_path / "home", tmp_path / "work"
    (home / "x").mkdir(parents=True)
    (work / "~" / "x").mkdir(parents=True)
    (work / "s.toml").write_text(two_hosts.replace('"5s"', '"200ms"'), encoding="utf-8")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(work)
    args = ["--param", "duration=100ms,200ms"] if command == "sweep" else []
    assert main([command, "s.toml", "--out", "~/x", *args]) == 0
    assert (work / "~" / "x" / "flows.parquet").is_file()
    # And says so: "results: ~/x/" read as the home folder, and `rm -r ~` to clean up the
    # stray folder would delete the home (campaign 38, issue 32).
    err = capsys.readouterr().err
    assert err.startswith(f"ccsim: warning: --out ~/x: a folder named '~' in the working "
                          f"folder ({work / '~'})"), err  # fmt: skip
    assert err.count("\n") == 1, err
    assert [p.name for p in (home / "x").iterdir()] == []
    if command == "run":  # and read back from there (pandas and pyarrow looked in $HOME)
        assert len(ccsim.Result.from_parquet("~/x").flows) == 1


def test_a_results_folder_from_the_environment_not_in_utf8_is_refused_before_any_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Campaign 19 (issue 32): --out and --results were checked (campaign 16), $CCSIM_RESULTS
    # was not: `CCSIM_RESULTS=$'x\xff' ccsim reproduce m01 --quick` ran all 21 runs, then
    # failed with "'utf-8' codec can't encode character '\udcff'", naming nothing.
    monkeypatch.chdir(Path(__file__).resolve().parents[2])
    monkeypatch.setenv("CCSIM_RESULTS", str(tmp_path) + "/r\udcff")
    assert main(["reproduce", "m01", "--quick", "--workers", "1"]) == 1
    assert "$CCSIM_RESULTS " in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
    assert main(["report"]) == 1
    assert "$CCSIM_RESULTS " in capsys.readouterr().err


@pytest.mark.parametrize("where", ["a file", "unwritable"])
def test_a_results_folder_from_the_environment_that_cannot_be_used_is_refused_naming_it(
    where: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Campaign 22 (issue 32): `CCSIM_RESULTS=/proc/x ccsim reproduce m01 --quick` said
    # "ccsim: error: /proc/x: no such file" after reading the plan (what 9325efa mended for
    # --out); a file there was refused naming --out (reproduce) or --results (report,
    # explore), options the user never gave. Each names $CCSIM_RESULTS now.
    monkeypatch.chdir(Path(__file__).resolve().parents[2])
    if where == "a file":
        folder = tmp_path / "r"
        folder.write_text("not a folder\n")
    else:  # no process may make a folder under /proc, root included
        folder = Path("/proc/ccsim-campaign22")
    monkeypatch.setenv("CCSIM_RESULTS", str(folder))
    assert main(["reproduce", "m01", "--quick", "--workers", "1"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"ccsim: error: $CCSIM_RESULTS {folder}: "), err
    assert err.count("\n") == 1
    assert main(["report"]) == 1
    # A file there is named as one, as reproduce names it (campaign 48).
    said = f"$CCSIM_RESULTS {folder}: " if where == "a file" else f"$CCSIM_RESULTS: {folder} "
    assert capsys.readouterr().err.startswith(f"ccsim: error: {said}"), err
    if where == "a file":
        assert sorted(p.name for p in tmp_path.iterdir()) == ["r"]
        assert folder.read_text() == "not a folder\n"


def test_an_empty_results_folder_from_the_environment_is_the_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # `CCSIM_RESULTS= ccsim reproduce m01` wrote m01/ into the working directory (the
    # repository root), where the shell's empty assignment means "unset" (campaign 19).
    from ccsim.cli import _results_dir, build_parser
    from ccsim.experiment.reproduction import default_out

    monkeypatch.setenv("CCSIM_RESULTS", "")
    assert default_out("m01", True) == Path("results") / "m01-quick"
    assert _results_dir(build_parser().parse_args(["report"])) == Path("results")


@pytest.mark.parametrize("env", ["", "set"])
def test_reproduces_default_folder_inside_a_reproduction_is_refused_naming_what_gave_it(
    env: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    # Campaign 24 (issue 32): CCSIM_RESULTS=<a reproduction's folder> ccsim reproduce m01
    # --quick was refused as "--out <it>/m01-quick: it is inside ...", naming --out, an option
    # never given; so was the default results/ when it is one.
    results = tmp_path / "results"
    results.mkdir()
    (results / "report.md").write_text("# p001\n", encoding="utf-8")
    (results / "run.json").write_text('{"paper": "p001"}', encoding="utf-8")
    repo = Path(__file__).resolve().parents[2]
    if env:
        monkeypatch.setenv("CCSIM_RESULTS", str(results))
        option, shown = "$CCSIM_RESULTS's folder", results / "m01-quick"
    else:
        monkeypatch.delenv("CCSIM_RESULTS", raising=False)
        # The default, results/ under the working folder: the plans are found by --out-less
        # reproduce from the repository root, so the paper is given by its folder.
        monkeypatch.chdir(tmp_path)
        option, shown = "the default folder", Path("results") / "m01-quick"
    assert main(["reproduce", str(repo / "experiments" / "m01-dctcp"), "--quick"]) == 1
    assert capsys.readouterr().err == (
        f"ccsim: error: {option} {shown}: it is inside {results}, the reproduction of p001 "
        "(its report.md and run.json); a reproduction there would be mixed with its files: "
        "name another folder\n"
    )
    assert sorted(p.name for p in results.iterdir()) == ["report.md", "run.json"]


@pytest.mark.parametrize("inside", ["plan", "runs", "site"])
def test_explore_refuses_results_inside_a_reproduction_and_takes_the_reproduction_itself(
    inside: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    # Campaign 24 (issue 32): `ccsim explore --results results/m01/plan` started, and its jobs
    # stored their runs in results/m01/plan/m01/runs, among the stored plan's files, where run,
    # sweep and reproduce refuse to write. The reproduction's own folder stays a results folder.
    import ccsim.explore

    served: list[Path] = []
    monkeypatch.setattr(ccsim.explore, "serve", lambda results, *a, **k: served.append(results))
    monkeypatch.chdir(Path(__file__).resolve().parents[2])  # the plans: experiments/
    m01 = tmp_path / "m01"
    (m01 / inside).mkdir(parents=True)
    (m01 / "report.md").write_text("# m01\n", encoding="utf-8")
    (m01 / "run.json").write_text('{"paper": "m01"}', encoding="utf-8")
    assert main(["explore", "--results", str(m01 / inside)]) == 1
    assert capsys.readouterr().err == (
        f"ccsim: error: --results {m01 / inside}: it is inside {m01}, the reproduction of m01 "
        "(its report.md and run.json); the explorer's run stores would be mixed with its files: "
        "choose another folder\n"
    )
    assert (served, sorted(p.name for p in (m01 / inside).iterdir())) == ([], [])
    assert main(["explore", "--results", str(m01)]) == 0
    assert served == [m01]


@pytest.mark.parametrize("command", ["run", "validate"])
@pytest.mark.parametrize("written", ["seed=5", "'seed' = 5"])
def test_seed_beside_a_set_of_the_seed_is_refused_naming_both(
    command: str, written: str, tmp_path: Path, examples: Path, capsys: Any
) -> None:
    # Campaign 24 (issue 32): `ccsim run x.toml --set seed=5 --seed 6` ran seed 6 and dropped
    # the --set without a word.
    out = tmp_path / "out"
    argv = [command, str(examples / "random-loss.toml"), "--set", written, "--seed", "6"]
    assert main(argv + (["--out", str(out)] if command == "run" else [])) == 1
    assert capsys.readouterr() == ("", (
        f'ccsim: error: --seed 6 and --set "{written}" both give the seed: give one of them\n'
    ))  # fmt: skip
    assert not out.exists()
    argv = [command, str(examples / "random-loss.toml"), "--set", "flows.reno.mss=1000"]
    argv += ["--seed", "6", "--set", "duration=0.1s"]
    assert main(argv + (["--out", str(out)] if command == "run" else [])) == 0


@pytest.mark.parametrize("command", ["sweep", "reproduce"])
def test_seed_given_to_a_command_of_seeds_is_refused_not_read_as_seeds(
    command: str, tmp_path: Path, examples: Path, capsys: Any
) -> None:
    # Campaign 24 (issue 32): argparse reads an option's prefix as the option, and
    # `ccsim sweep x.toml --seed 3` (run's option: that one seed) ran the seeds 1, 2 and 3.
    out = tmp_path / "out"
    argv = {
        "sweep": ["sweep", str(examples / "random-loss.toml"), "--param", "duration=0.1s"],
        "reproduce": ["reproduce", "m01", "--quick"],
    }[command]
    assert main([*argv, "--seed", "3", "--out", str(out)]) == 1
    assert capsys.readouterr() == ("", (
        f"ccsim: error: --seed: {command} takes --seeds N (the seeds 1..N at every point), not "
        f"one seed as run's --seed (see ccsim {command} --help)\n"
    ))  # fmt: skip
    assert not out.exists()


def test_no_command_reads_another_commands_option_as_a_prefix_of_one_of_its_own() -> None:
    # The class of the test above: argparse takes an option's prefix as the option, so an
    # option of one command given to another that has a longer one beginning with it is read
    # as that one, without a word (sweep's --seeds read run's --seed: campaign 24, issue 32).
    import argparse

    from ccsim.cli import build_parser

    commands = next(a for a in build_parser()._actions
                    if isinstance(a, argparse._SubParsersAction)).choices  # fmt: skip
    options = {name: {o for a in command._actions for o in a.option_strings}
               for name, command in commands.items()}  # fmt: skip
    misread = [(name, other, own) for name in commands
               for other in set().union(*options.values()) - options[name]
               for own in options[name] if own.startswith(other)]  # fmt: skip
    assert misread == []


def test_a_fifo_in_place_of_a_plan_under_experiments_is_named_not_waited_on(
    tmp_path: Path, examples: Path
) -> None:
    # Campaign 48 (issue 32): `ccsim reproduce --list` and `ccsim explore` read every plan
    # under experiments/; a FIFO named plan.toml there (made by hand, a tool's leftover) made
    # them wait for a writer that never came, for ever.
    experiments = tmp_path / "experiments"
    shutil.copytree(examples.parent / "experiments" / "m01-dctcp", experiments / "m01-dctcp")
    (experiments / "zz").mkdir()
    os.mkfifo(experiments / "zz" / "plan.toml")
    run = functools.partial(subprocess.run, capture_output=True, text=True, timeout=60,
                            cwd=tmp_path)  # fmt: skip
    listed = run([sys.executable, "-m", "ccsim", "reproduce", "--list"])
    assert listed.returncode == 0, listed.stderr
    assert [line.split()[:2] for line in listed.stdout.splitlines()] == [
        ["m01", "m01-dctcp"], ["?", "zz"]]  # fmt: skip
    served = run([sys.executable, "-m", "ccsim", "explore", "--port", "1"])
    assert (served.returncode, served.stderr) == (1, (
        "ccsim: error: experiments/zz/plan.toml: is a FIFO (named pipe), not a regular file\n"
    ))  # fmt: skip


@pytest.mark.parametrize("kind", ["file", "fifo", "dangling", "under-dangling", "loop"])
def test_report_results_that_are_no_folder_are_named_as_what_they_are_not_to_reproduce_first(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Campaign 48 (issue 32): `ccsim report --results X`, X a file, a FIFO, a link to nothing
    # or a loop of links, said "X is not a folder (run `ccsim reproduce p001` first)", a cure
    # that writes results/p001 and changes nothing of X; explore's --results named each.
    results = tmp_path / "x"
    if kind == "file":
        results.write_text("")
    elif kind == "fifo":
        os.mkfifo(results)
    elif kind == "dangling":
        results.symlink_to(tmp_path / "nowhere")
    elif kind == "under-dangling":  # (campaign 48b's leftover: still "reproduce first")
        (tmp_path / "gone").symlink_to(tmp_path / "nowhere")
        results = tmp_path / "gone" / "x"
    else:
        results.symlink_to(tmp_path / "y")
        (tmp_path / "y").symlink_to(results)
    assert main(["report", "--results", str(results)]) == 1
    said = {
        "file": f"{results} is a file, not a folder; give the folder of reproductions",
        "fifo": f"{results} is a FIFO (named pipe), not a folder; give the folder of reproductions",
        "dangling": f"is a link to {tmp_path / 'nowhere'}, which does not exist; mend the link "
        "or give the folder of reproductions",
        "under-dangling": f"{tmp_path / 'gone'} is a link to {tmp_path / 'nowhere'}, which does "
        "not exist; mend the link or give the folder of reproductions",
        "loop": f"{results} is a loop of symbolic links, not a folder; give the folder of "
        "reproductions",
    }[kind]
    assert capsys.readouterr().err == f"ccsim: error: --results {results}: {said}\n"


def test_an_options_value_written_as_two_dashes_reaches_the_option_as_that_value(
    tmp_path: Path, examples: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Campaign 48 (issue 32): Python 3.11's argparse drops "--" from an option's own value
    # (`--out=--`, a folder named --), giving [], which no option's type saw: `run --out=--`
    # was "internal error (AttributeError): 'list' object has no attribute 'parents'",
    # `explore --workers=--` a traceback, `bench --only=--` ran every case, status 0.
    import argparse

    from ccsim.cli import UsageError, build_parser

    commands = next(a for a in build_parser()._actions
                    if isinstance(a, argparse._SubParsersAction)).choices  # fmt: skip
    misread = []
    for name, command in commands.items():
        needs = [a.dest for a in command._actions if a.required or not a.option_strings]
        base = (["x.toml"] if "file" in needs else []) + (["--out", "o"] if "out" in needs else [])
        for action in command._actions:
            if not action.option_strings or action.nargs not in (None, "?"):
                continue  # a flag (--help, --quick, --list) takes no value
            option = action.option_strings[-1]
            try:
                args = build_parser().parse_args([name, *base, f"{option}=--"])
            except UsageError:
                continue  # refused in one line, as "--" is no value of this option
            value = getattr(args, action.dest)
            if value == [] or (isinstance(value, list) and [] in value):
                misread.append(f"{name} {option}")
    assert misread == []
    monkeypatch.chdir(tmp_path)
    scenario = str(examples / "random-loss.toml")
    assert main(["run", scenario, "--set", "duration=1s", "--out=--"]) == 0
    assert (tmp_path / "--" / "flows.parquet").is_file()


@pytest.mark.parametrize("argument", ["file", "--out", "--set"])
def test_a_utf8_argument_read_in_an_ascii_locale_says_so_not_that_it_is_not_utf8(
    argument: str, tmp_path: Path, examples: Path
) -> None:
    # Campaign 24 (issue 32): under LC_ALL=C with PYTHONUTF8=0 Python reads the arguments as
    # ASCII, and a Hangul name, UTF-8, was refused as "not UTF-8 (byte 0xed)" with the cure
    # "rename it". A byte that is not UTF-8 (0xff) keeps its own message (test_bad_input).
    # The scenario is a copy beside the test's files: read from a repository at a Hangul path
    # (stop 61's CI run from "ci clone 실험"), its own name was the one refused first.
    (tmp_path / "given").mkdir()
    scenario = str(shutil.copy(examples / "random-loss.toml", tmp_path / "given"))
    argv = {
        "file": ["validate", str(tmp_path / "한.toml")],
        "--out": ["run", scenario, "--out", str(tmp_path / "한")],
        "--set": ["validate", scenario, "--set", 'nodes."한"=host'],
    }[argument]
    env = {**os.environ, "LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONIOENCODING": "utf-8"}
    proc = subprocess.run([sys.executable, "-m", "ccsim", *argv], capture_output=True,
                          env=env, text=True, timeout=120)  # fmt: skip
    assert proc.returncode == 1
    help_ = " (see ccsim validate --help)" if argument == "file" else ""
    assert proc.stderr.endswith(
        "it is UTF-8, read in this locale's encoding (ascii): run ccsim in a UTF-8 locale "
        f"(LC_ALL=C.UTF-8) or with PYTHONUTF8=1{help_}\n"
    ), proc.stderr
    assert "not UTF-8" not in proc.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["given"]


def test_a_papers_folder_given_by_its_absolute_path_is_found_from_a_removed_working_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Campaign 24 (issue 32): `ccsim reproduce /abs/experiments/m01-dctcp --out /abs/out` from
    # a shell left in a removed folder was refused as "a relative path names nothing: ... give
    # absolute paths", every path given being absolute: the working folder was asked for
    # before the argument was seen to be a folder.
    from ccsim.experiment.plan import find_experiment

    folder = Path(__file__).resolve().parents[2] / "experiments" / "m01-dctcp"
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    assert find_experiment(str(folder)) == folder


SCENARIO_FILE = str(Path(__file__).resolve().parents[2] / "examples" / "random-loss.toml")


def test_a_sweep_into_an_earlier_runs_folder_leaves_none_of_that_runs_tables_beside_its_own(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Campaign 26: the run's series.parquet and scenario.toml stayed beside the sweep's
    # flows and links, and Result.from_parquet read the folder as one run's results: that
    # run's scenario and series with the sweep's flows.
    out = tmp_path / "out"
    assert main(["run", SCENARIO_FILE, "--set", "duration=1s", "--out", str(out)]) == 0
    assert (out / "series.parquet").is_file()
    rates = "links.bottleneck.loss.rate=0.01,0.02"
    argv = ["sweep", SCENARIO_FILE, "--set", "duration=1s", "--param", rates, "--out", str(out)]
    assert main(argv) == 0
    capsys.readouterr()
    assert sorted(p.name for p in out.iterdir()) == ["flows.parquet", "links.parquet", "runs"]


@pytest.mark.parametrize(
    ("argv", "relative"),
    [(["run", SCENARIO_FILE, "--set", "duration=0.1s", "--out", "out"], "--out out"),
     (["sweep", SCENARIO_FILE, "--param", "duration=0.1s,0.2s", "--out", "out"], "--out out"),
     (["run", "s.toml", "--out", "/nowhere/x"], "the scenario file s.toml"),
     (["validate", "s.toml"], "the scenario file s.toml"),
     (["reproduce", "m01", "--quick", "--out", "/nowhere/x"],
      "experiments/ (where the papers are looked for)"),
     (["reproduce", "--list"], "experiments/ (where the papers are looked for)"),
     (["report"], "the results folder results"),
     (["report", "--results", "r"], "--results r"),
     (["explore"], "the results folder results"),
     (["bench", "--plot", "p.png"], "--plot p.png")],
    ids=lambda v: " ".join(v) if isinstance(v, list) else None,
)  # fmt: skip
def test_a_relative_path_from_a_removed_working_folder_is_one_error_naming_it(
    argv: list[str], relative: str, tmp_path: Path
) -> None:
    # Campaign 20 (issue 32): a shell left in a folder removed since (a build folder cleaned
    # away): a relative --out was "ccsim: error: [Errno 2] No such file or directory", naming
    # nothing. Each command then said it in its own words, none of them this one (campaign
    # 24): "results is not a folder (run reproduce first)", "x.toml: no such file", "no
    # experiments/*/plan.toml here".
    gone = tmp_path / "gone"
    gone.mkdir()
    code = ("import os, sys; os.chdir(sys.argv[1]); os.rmdir(sys.argv[1]); "
            "from ccsim.cli import main; sys.exit(main(sys.argv[2:]))")  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k != "CCSIM_RESULTS"}
    proc = subprocess.run([sys.executable, "-c", code, str(gone), *argv], capture_output=True,
                          text=True, timeout=120, env=env)  # fmt: skip
    assert (proc.returncode, proc.stderr) == (1, (
        f"ccsim: error: the working folder no longer exists (removed while the shell was in "
        f"it), so {relative} names nothing: cd to a folder that exists, or give absolute "
        "paths\n"
    ))  # fmt: skip
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_absolute_paths_from_a_removed_working_folder_still_run(tmp_path: Path) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    code = ("import os, sys; os.chdir(sys.argv[1]); os.rmdir(sys.argv[1]); "
            "from ccsim.cli import main; sys.exit(main(sys.argv[2:]))")  # fmt: skip
    out = tmp_path / "out"
    argv = ["run", SCENARIO_FILE, "--set", "duration=0.1s", "--out", str(out)]
    proc = subprocess.run([sys.executable, "-c", code, str(gone), *argv], capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert (out / "flows.parquet").is_file()


def test_bench_reads_its_cases_figures_past_what_a_sitecustomize_prints_on_stdout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Campaign 36 (issue 32): a sitecustomize.py on PYTHONPATH that prints (a site's
    # greeting, a debugging print left in) runs in each case's child too, whose stdout
    # carries the case's figures as JSON: `ccsim bench` said "ccsim: error: Expecting value:
    # line 1 column 1 (char 0)", naming neither the case nor why. So did a generated case's.
    from ccsim import bench

    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text('print("hello from sitecustomize")\n')
    path = os.environ.get("PYTHONPATH")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(site), *([path] if path else [])]))
    trivial = tmp_path / "trivial.toml"
    trivial.write_text(bench._TRIVIAL, encoding="utf-8")
    summary, _, _ = bench._child_run(trivial)
    assert summary["events"] >= 0 and "wall" in summary
    assert bench._write_scale_case("F10", tmp_path) == ()
