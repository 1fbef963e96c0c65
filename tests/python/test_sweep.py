# SPDX-License-Identifier: MIT
"""Sweeps: parallel runs, the store, resuming after a kill, confidence intervals."""

from __future__ import annotations

import errno
import functools
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from types import TracebackType
from typing import Any

import pandas as pd
import pytest

from ccsim import _core, sweep
from ccsim.cli import main
from ccsim.cluster import ClusterError
from ccsim.running_clock import RunningClock


def test_a_sweep_has_one_row_per_flow_and_run_with_a_column_per_parameter(
    tmp_path: Path, two_hosts: str
) -> None:
    f = tmp_path / "s.toml"
    f.write_text(two_hosts)
    out = tmp_path / "out"
    args = ["sweep", str(f), "--param", "links.bottleneck.rate=2Mbps,5Mbps", "--seeds", "3",
            "--out", str(out), "--workers", "2"]  # fmt: skip
    assert main(args) == 0
    flows = pd.read_parquet(out / "flows.parquet")
    assert len(flows) == 6
    assert sorted(set(flows["links.bottleneck.rate"])) == ["2Mbps", "5Mbps"]
    assert sorted(set(flows["seed"])) == [1, 2, 3]
    by_rate = flows.groupby("links.bottleneck.rate")["completion_time_s"].mean()
    assert by_rate["2Mbps"] > by_rate["5Mbps"]


def test_a_second_sweep_reuses_every_finished_run(tmp_path: Path, two_hosts: str) -> None:
    store = sweep.Store(tmp_path / "runs")
    runs = sweep.plan_grid(two_hosts, [], [("links.bottleneck.rate", ["2Mbps", "5Mbps"])],
                           [1, 2])  # fmt: skip
    first = sweep.execute(runs, store, workers=1, progress=False)
    assert (first.executed, first.cached) == (4, 0)
    again = sweep.execute(runs, store, workers=1, progress=False)
    assert (again.executed, again.cached) == (0, 4)
    assert [r["flows"] for r in again.records] == [r["flows"] for r in first.records]


def test_a_store_holds_all_of_some_keys_only_when_each_has_its_record(tmp_path: Path) -> None:
    store = sweep.Store(tmp_path / "runs")
    keys = ["ab" + "0" * 30, "ab" + "1" * 30, "cd" + "0" * 30]
    assert store.has_all([]) and not store.has_all(keys[:1]), "no store folder yet"
    for k in keys:
        store.save(k, {"version": sweep.RECORD_VERSION})
    assert store.has_all(keys) and store.has_all(keys[1:])
    store.path(keys[1]).unlink()
    assert not store.has_all(keys) and store.has_all([keys[0], keys[2]])
    assert not store.has_all(["ef" + "0" * 30]), "a shard that is not there"


def test_a_store_moved_away_while_a_record_is_written_names_the_record_not_the_hidden_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Bug pinned (campaign 27, issue 32): `mv OUT OUT.old` during a sweep made the save's
    # rename fail, and the error named the hidden temporary file it renames from
    # ("OUT/runs/0a/.tmp-0a...-20691-140090972724096.json -> OUT/runs/0a/0a....json: no such
    # file"), a file the user never made, and not why.
    store = sweep.Store(tmp_path / "out" / "runs")
    dump = sweep.json.dump

    def dump_then_move_out(obj: Any, fh: Any) -> None:
        dump(obj, fh)
        (tmp_path / "out").rename(tmp_path / "out.old")

    monkeypatch.setattr(sweep.json, "dump", dump_then_move_out)
    key = "0a" + "0" * 30
    with pytest.raises(OSError) as e:
        store.save(key, {"version": sweep.RECORD_VERSION})
    shown = str(sweep.RecordNotSaved(e.value, store))
    assert ".tmp-" not in shown
    assert shown.startswith(f"{store.path(key)}: ")
    assert "moved or removed" in shown and shown.endswith("no finished run is kept")


def test_a_store_moved_away_after_some_runs_were_saved_says_they_went_with_it_not_lost(
    tmp_path: Path, two_hosts: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Campaign 43a (issue 32): `mv OUT OUT.old` in the middle of a sweep or a reproduction
    # ended "... was moved or removed while the record was written; no finished run is kept",
    # the store counted where it no longer was: the runs finished so far (268 of a
    # reproduction's) were all in OUT.old/runs, and the same command resumes from them there.
    store = sweep.Store(tmp_path / "out" / "runs")
    runs = sweep.plan_grid(two_hosts, [], [("links.bottleneck.rate", ["2Mbps", "5Mbps"])],
                           [1, 2])  # fmt: skip
    dump, dumped = sweep.json.dump, []

    def dump_then_move_out_at_the_third(obj: Any, fh: Any) -> None:
        dump(obj, fh)
        dumped.append(1)
        if len(dumped) == 3:
            (tmp_path / "out").rename(tmp_path / "out.old")

    monkeypatch.setattr(sweep.json, "dump", dump_then_move_out_at_the_third)
    with pytest.raises(sweep.RecordNotSaved) as e:
        sweep.execute(runs, store, workers=1, progress=False)
    shown = str(e.value)
    assert "was moved or removed while the record was written" in shown
    assert shown.endswith(
        f"; the 2 finished runs stored in {store.directory} before went with it: moved back, "
        "the same command resumes from them"
    ), shown
    assert len(sweep.Store(tmp_path / "out.old" / "runs")) == 2


def test_a_store_on_a_disk_out_of_inodes_names_the_record_not_the_hidden_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Bug pinned (campaign 27, issue 32): on a disk with bytes free but no inode left (a tmpfs
    # mounted with nr_inodes=), creating the temporary file fails (ENOSPC) naming it, and
    # `ccsim reproduce m01 --quick` said "OUT/runs/b1/.tmp-b10f...-23283-139752189528960.json:
    # no space left on device". A full disk of bytes fails the write instead, named as the
    # record; both now name the record.
    store = sweep.Store(tmp_path / "runs")

    def no_inode_left(path: Any, *args: Any, **kwargs: Any) -> Any:
        if Path(path).name.startswith(".tmp-"):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        return open(path, *args, **kwargs)

    monkeypatch.setattr(sweep, "open", no_inode_left, raising=False)
    key = "b1" + "0" * 30
    with pytest.raises(OSError) as e:
        store.save(key, {"version": sweep.RECORD_VERSION})
    shown = str(sweep.RecordNotSaved(e.value, store))
    assert shown == f"{store.path(key)}: no space left on device; no finished run is kept"


def test_a_cluster_given_without_dask_installed_names_cluster_and_the_install(
    tmp_path: Path, two_hosts: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Bug pinned (campaign 27, issue 32): without the extra `dask`, `sweep.execute(...,
    # cluster="tcp://host:8786")` raised "ModuleNotFoundError: No module named
    # 'distributed'": the message saying what to install was never reached, and it named
    # `--executor dask`, an option of the command line a Python caller never gave.
    for name in [m for m in sys.modules if m == "distributed" or m.startswith("distributed.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "distributed", None)
    runs = sweep.plan_grid(two_hosts, [], [], [1])
    with pytest.raises(ClusterError) as e:
        sweep.execute(runs, sweep.Store(tmp_path / "runs"), progress=False,
                      cluster="tcp://127.0.0.1:8786")  # fmt: skip
    assert "cluster=" in str(e.value) and "pip install" in str(e.value)
    assert "--executor" not in str(e.value)
    # An ImportError too (campaign 30): `except ImportError` is how a caller falls back when
    # an optional package is missing, and this one was a RuntimeError alone.
    assert isinstance(e.value, ImportError) and e.value.name == "distributed"
    assert not (tmp_path / "runs").exists()


def test_a_store_whose_temporary_file_passes_path_max_names_the_record(
    tmp_path: Path,
) -> None:
    # Bug pinned (campaign 27, issue 32): a sweep into an --out ~4,040 bytes long, where a
    # record's path fits PATH_MAX (4,096) and its temporary file's (~30 bytes longer) does
    # not, failed in the cleanup's unlink of a file never made, and the error named that
    # hidden file ("OUT/runs/60/.tmp-60e1...-31595-140205915388800.json: file name too long").
    key = "60" + "0" * 30
    deep = tmp_path
    while len(str(deep / "runs" / key[:2] / f"{key}.json")) < 4080:
        room = 4080 - len(str(deep / "runs" / key[:2] / f"{key}.json")) - 1
        deep = deep / ("d" * max(1, min(200, room)))
    deep.mkdir(parents=True)
    store = sweep.Store(deep / "runs")
    with pytest.raises(OSError) as e:
        store.save(key, {"version": sweep.RECORD_VERSION})
    assert (e.value.errno, e.value.filename) == (errno.ENAMETOOLONG, str(store.path(key)))


def test_runs_stored_by_another_build_of_the_simulator_are_made_again(
    tmp_path: Path, two_hosts: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Bug pinned (issue 28): the store was keyed by the scenario alone, so runs made before a
    # change to the TCP code came back as this code's results.
    store = sweep.Store(tmp_path / "runs")
    runs = sweep.plan_grid(two_hosts, [], [("links.bottleneck.rate", ["2Mbps"])], [1, 2])
    first = sweep.execute(runs, store, workers=1, progress=False)
    assert {r["engine"] for r in first.records} == {_core.ENGINE}
    monkeypatch.setattr(_core, "ENGINE", "0123456789abcdef")
    again = sweep.execute(runs, store, workers=1, progress=False)
    assert (again.executed, again.cached) == (2, 0)


def test_two_spellings_of_the_same_point_share_one_result(tmp_path: Path, two_hosts: str) -> None:
    a = sweep.RunSpec(two_hosts, ('links.bottleneck.rate="10Mbps"',), 1)
    b = sweep.RunSpec(two_hosts, ("links.bottleneck.rate=10Mbps",), 1)
    c = sweep.RunSpec(two_hosts, ("links.bottleneck.rate=10Mbps",), 2)
    assert a.key() == b.key() != c.key()


def _children(pid: int) -> list[int]:
    kids = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                stat = (d / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                kids.append(int(d.name))
    return kids


@pytest.mark.skipif(sys.platform == "win32", reason="no limit of open files to lower")
def test_a_sweep_under_too_low_a_limit_of_open_files_is_one_line_saying_so_not_a_wait_for_ever(
    tmp_path: Path,
) -> None:
    # Campaign 32 (issue 32): under `ulimit -n 14` to 19, a sweep with 4 workers waited for
    # ever (the pool's start failed with EMFILE inside the pool's own thread); under 12 or 13
    # it said a bare "[Errno 24] Too many open files".
    import resource

    def limited() -> None:
        resource.setrlimit(
            resource.RLIMIT_NOFILE, (16, resource.getrlimit(resource.RLIMIT_NOFILE)[1])
        )

    out = tmp_path / "out"
    example = Path(__file__).resolve().parents[2] / "examples" / "random-loss.toml"
    cmd = [sys.executable, "-m", "ccsim.cli", "sweep", str(example), "--param",
           "links.bottleneck.loss.rate=0.01,0.02", "--seeds", "2", "--set", "duration=100ms",
           "--workers", "4", "--out", str(out)]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, preexec_fn=limited)
    assert proc.returncode == 1, proc.stderr
    [line] = proc.stderr.splitlines()
    assert line.startswith("ccsim: error: the limit of open files is 16 (ulimit -n): 4 worker "
                           "processes need "), line  # fmt: skip
    assert "raise it (ulimit -n " in line and "or give fewer workers" in line, line


def test_a_sweep_killed_mid_way_resumes_without_losing_or_repeating_a_point(
    tmp_path: Path, slow_line: str
) -> None:
    f = tmp_path / "slow.toml"
    f.write_text(slow_line)
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "ccsim.cli", "sweep", str(f), "--param",
           "links.b.loss.rate=0.001,0.002,0.003,0.004,0.005,0.006,0.007,0.008", "--seeds", "5",
           "--out", str(out), "--workers", "2"]  # fmt: skip
    total = 40
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    store = sweep.Store(out / "runs")
    deadline = time.monotonic() + 120
    while len(store) < 4 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.02)
    workers = _children(proc.pid)
    assert workers, "the sweep should have worker processes"
    os.kill(workers[0], signal.SIGKILL)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 1, err
    # As the out-of-memory killer ends a process: the error says so (campaign 39, issue 32).
    last = err.strip().splitlines()[-1]
    assert last.startswith("ccsim: error: a worker process died, killed by SIGKILL: the "
                           "system's out-of-memory killer ends a process so"), err  # fmt: skip
    finished = len(store)
    assert 4 <= finished < total, finished
    # Resume: only the missing points run, and the gathered table has every point once.
    resumed = subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=300)
    assert f"{total - finished} executed, {finished} reused" in resumed.stdout
    flows = pd.read_parquet(out / "flows.parquet")
    assert len(flows) == total
    assert not flows.duplicated(["links.b.loss.rate", "seed"]).any()
    assert len(store) == total


class _PoolWhoseWorkerDiesAfter:
    """Runs the first `n` submissions in this process, then acts as a pool whose worker died:
    `submit` raises, as `ProcessPoolExecutor.submit` does once the pool is broken."""

    def __init__(self, n: int) -> None:
        self.left = n

    def __enter__(self) -> _PoolWhoseWorkerDiesAfter:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        return None

    def submit(self, fn: Callable[..., dict[str, Any]], *args: Any) -> Future[dict[str, Any]]:
        if self.left == 0:
            raise BrokenProcessPool("A child process terminated abruptly")
        self.left -= 1
        fut: Future[dict[str, Any]] = Future()
        fut.set_result(fn(*args))
        return fut


class _WorkerReapedLate:
    """A pool's worker that has ended but whose exit code is known only once the pool's own
    thread, reaping it, has stored it: as a forked worker is when that thread's ``waitpid`` took
    its status a moment before ``join`` here asked."""

    def __init__(self, code: int) -> None:
        self.code = code
        self.exitcode: int | None = None

    def join(self, timeout: float | None = None) -> None:
        return None


class _PoolReapingItsWorkers:
    """The parts of a broken ``ProcessPoolExecutor`` that ``sweep._death`` reads: its workers,
    and its own thread, which stores their codes after ``delay_s``."""

    def __init__(self, codes: list[int], delay_s: float) -> None:
        workers = [_WorkerReapedLate(c) for c in codes]
        self._processes = dict(enumerate(workers))

        def reap() -> None:
            time.sleep(delay_s)
            for w in workers:
                w.exitcode = w.code

        self._executor_manager_thread = threading.Thread(target=reap)
        self._executor_manager_thread.start()


def test_a_worker_killed_by_sigkill_is_named_so_while_the_pools_thread_still_reaps_it() -> None:
    # Seen once in a full test run (stop 53, issue 32): the sweep whose worker was SIGKILLed
    # said only "a worker process died", its code read while the pool's thread reaped it.
    pool = _PoolReapingItsWorkers([-signal.SIGTERM, -signal.SIGKILL], delay_s=0.1)
    assert sweep._death(pool).startswith(  # type: ignore[arg-type]
        "a worker process died, killed by SIGKILL: the system's out-of-memory killer"
    )


@pytest.mark.parametrize(
    ("codes", "named"),
    [
        ([-signal.SIGTERM, -signal.SIGKILL], "killed by SIGKILL"),
        ([-signal.SIGTERM, 3], "exit status 3"),
        ([-signal.SIGTERM, -signal.SIGSEGV], "killed by SIGSEGV"),
        ([-signal.SIGTERM, -signal.SIGTERM], "killed by SIGTERM"),
        ([0, 0], None),
    ],
)
def test_a_dead_workers_cause_is_the_most_telling_code_whatever_the_pools_order(
    codes: list[int], named: str | None
) -> None:
    # The pool sends SIGTERM to the other workers once one died, so a SIGTERM is the cause only
    # when nothing else is; a worker SIGTERMed by a user was named "killed by SIGTERM" or "a
    # worker process died" depending on which way the sweep met the death (campaign 42).
    for order in (codes, codes[::-1]):
        said = sweep._death(_PoolReapingItsWorkers(order, delay_s=0.0))  # type: ignore[arg-type]
        if named is None:
            assert said == "a worker process died"
        else:
            assert said.startswith(f"a worker process died, {named}"), (order, said)


def test_a_worker_death_seen_when_submitting_is_reported_as_an_interrupted_sweep(
    tmp_path: Path, two_hosts: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Bug: a run finishing in the same instant as a worker's death made the next `submit`
    # raise BrokenProcessPool, which escaped as "A child process terminated abruptly ...".
    monkeypatch.setattr(
        sweep, "ProcessPoolExecutor", lambda max_workers, **_: _PoolWhoseWorkerDiesAfter(3)
    )
    runs = [sweep.RunSpec(two_hosts, (), seed) for seed in range(1, 7)]
    store = sweep.Store(tmp_path / "runs")
    with pytest.raises(sweep.SweepInterrupted, match="2 finished runs are stored"):
        sweep.execute(runs, store, workers=1, progress=False)
    # Two results were saved before the failing submit; the third run was still pending.
    assert len(store) == 2


def test_stopping_the_workers_waits_for_the_pools_manager_thread_to_end() -> None:
    # At exit Python wakes each pool's manager thread through a pipe the thread closes as it
    # ends, unordered in 3.11: a sweep stopped by SIGTERM under load printed a traceback from
    # the exit's thread joins below its own line (seen once, in a full test run).
    # Ended before _stop_workers returns, the thread leaves the exit nothing to race.
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"))
    future = pool.submit(time.sleep, 30)
    deadline = time.monotonic() + 30
    while not pool._processes:  # the worker started
        assert time.monotonic() < deadline
        time.sleep(0.01)
    manager = pool._executor_manager_thread
    assert manager is not None and manager.is_alive()
    sweep._stop_workers(pool)
    assert not manager.is_alive()
    assert future.done()


def test_a_sweep_starts_no_more_worker_processes_than_it_has_runs_to_make(
    tmp_path: Path, two_hosts: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Campaign 20 (issue 32): the pool forks all its workers at once, so `--workers 1000`
    # for a sweep of two runs forked 1,000 processes (8.2 s instead of 0.9 s).
    sizes: list[int] = []

    def pool(max_workers: int, **_: Any) -> _PoolWhoseWorkerDiesAfter:
        sizes.append(max_workers)
        return _PoolWhoseWorkerDiesAfter(100)

    monkeypatch.setattr(sweep, "ProcessPoolExecutor", pool)
    store = sweep.Store(tmp_path / "runs")
    runs = [sweep.RunSpec(two_hosts, (), seed) for seed in (1, 2, 1)]  # two to make
    sweep.execute(runs, store, workers=1000, progress=False)
    sweep.execute([*runs, sweep.RunSpec(two_hosts, (), 3)], store, progress=False)
    assert sizes == [2, 1]


def test_the_confidence_interval_uses_student_t() -> None:
    m, ci, n = sweep.mean_ci([1.0, 2.0, 3.0])
    assert (m, n) == (2.0, 3)
    assert ci == pytest.approx(4.303 / 3**0.5, rel=1e-4)
    m, ci, n = sweep.mean_ci([5.0, float("nan")])
    assert (m, n) == (5.0, 1) and ci != ci  # NaN: no interval from one value


def test_a_folder_where_a_run_record_goes_is_refused_before_any_run_naming_it(
    tmp_path: Path, two_hosts: str
) -> None:
    # Campaign 23 (issue 32): the run was made, then its save failed naming the hidden
    # temporary file, ".../.tmp-<key>-<pid>-<thread>.json -> ...: is a directory". Campaign
    # 48b: the refusal came after a warning saying the opposite ("damaged run record (is a
    # directory); running it again"); no warning now.
    import warnings

    store = sweep.Store(tmp_path / "runs")
    runs = sweep.plan_grid(two_hosts, [], [("links.bottleneck.rate", ["2Mbps", "5Mbps"])], [1])
    in_the_way = store.path(runs[1].key())
    in_the_way.mkdir(parents=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", sweep.CorruptRecordWarning)
        with pytest.raises(ValueError) as e:
            sweep.execute(runs, store, workers=1, progress=False)
    assert str(e.value) == (
        f"{in_the_way} is a folder, where a run record goes: move it away or write elsewhere"
    )
    assert not store.has(runs[0].key()), "a run was made before the refusal"
    assert not store.has(runs[1].key()), "a folder is no record"


def test_a_bad_param_is_a_one_line_error(tmp_path: Path, two_hosts: str) -> None:
    f = tmp_path / "s.toml"
    f.write_text(two_hosts)
    proc = subprocess.run(
        [sys.executable, "-m", "ccsim.cli", "sweep", str(f), "--param", "seed", "--out",
         str(tmp_path / "o")],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert proc.returncode == 1
    assert proc.stderr.strip() == 'ccsim: error: --param "seed": expected PATH=V1,V2,...'


@pytest.mark.parametrize("path", ["links..rate", "a b", ".duration", "duration."])
def test_a_param_path_that_is_not_a_key_path_is_refused_naming_param_not_set(path: str) -> None:
    # The core refused it as each run applied it, naming `--set "links..rate=1"`: an option the
    # user never gave (campaign 21, issue 32).
    with pytest.raises(ValueError) as e:
        sweep.parse_param(f"{path}=1,2")
    assert str(e.value).startswith(f'--param "{path}=1,2": {path!r} is not a key path')


def test_gather_puts_tags_first_and_fills_a_column_a_record_lacks() -> None:
    records = [
        {"tags": {"rate": "2Mbps"}, "seed": 1, "key": "k1",
         "flows": {"name": ["a", "b"], "goodput_bps": [1.0, 2.0]}},
        {"tags": {"rate": "5Mbps"}, "seed": 2, "key": "k2",
         "flows": {"name": ["a"], "goodput_bps": [3.0], "timeouts": [4]}},
    ]  # fmt: skip
    df = sweep.gather(records)
    assert list(df.columns) == ["rate", "seed", "run", "name", "goodput_bps", "timeouts"]
    assert list(df["rate"]) == ["2Mbps", "2Mbps", "5Mbps"]
    assert list(df["seed"]) == [1, 1, 2]
    assert list(df["goodput_bps"]) == [1.0, 2.0, 3.0]
    assert df["timeouts"].isna().tolist() == [True, True, False]
    assert sweep.gather([]).empty


def test_confidence_intervals_use_the_exact_t_quantile_past_30_degrees_of_freedom() -> None:
    # Bug pinned (issue 12): a hand-kept table fell back to the normal 1.96 past 30 degrees of
    # freedom, so intervals over 40 seeds were about 3 % too narrow. Quantiles from the
    # standard t table (two-sided 95 %).
    from ccsim.sweep import t975

    for df, q in [(1, 12.706), (10, 2.228), (29, 2.045), (39, 2.023), (120, 1.980)]:
        assert abs(t975(df) - q) < 5e-4, (df, t975(df))
    xs = [float(i % 7) for i in range(40)]
    _, half, n = sweep.mean_ci(xs)
    assert n == 40
    assert abs(half - 2.0227 * statistics.stdev(xs) / 40**0.5) < 1e-3


def _engine_of(root: Path) -> str:
    """The engine identity as crates/ccsim-py/build.rs computes it, written out again: FNV-1a
    over (path relative to the repository, NUL, contents, NUL) of the files that decide a
    run, in path order."""
    inputs = ["crates/ccsim-core/src", "crates/ccsim-core/Cargo.toml", "crates/ccsim-py/src",
              "crates/ccsim-py/Cargo.toml", "Cargo.lock"]  # fmt: skip
    files: list[Path] = []
    for name in inputs:
        p = root / name
        if p.is_dir():
            files += [
                f for f in p.rglob("*") if f.is_file() and f.suffix in (".rs", ".toml", ".lock")
            ]
        elif p.exists():
            files.append(p)
    h = 0xCBF29CE484222325
    for f in sorted(files, key=lambda f: f.relative_to(root).as_posix()):
        for part in (f.relative_to(root).as_posix().encode(), b"\0", f.read_bytes(), b"\0"):
            for byte in part:
                h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def test_the_engine_identity_is_the_sources_alone_not_where_the_checkout_lies() -> None:
    # Bug: build.rs hashed ccsim-py's own files with their absolute paths, so two checkouts
    # of one commit had different engines and a copied store was run again in full.
    root = Path(__file__).resolve().parents[2]  # the tests live in the source checkout
    assert (root / "crates" / "ccsim-py" / "build.rs").is_file()
    assert _core.ENGINE == _engine_of(root), "rebuild: pip install -e . (the core is stale)"


def test_a_parameter_given_twice_is_refused_naming_it_and_the_one_option_to_write(
    two_hosts: str,
) -> None:
    # Campaign 8: `--param duration=1s --param duration=2s` made one run, set to 2 s, and its
    # row in the table said 1 s; the user meant two points.
    params = [("duration", ["1s"]), ("links.bottleneck.rate", ["2Mbps"]), (" duration", ["2s"])]
    with pytest.raises(ValueError, match=r"^--param duration: given twice; give all its "
                                         r"values in one \(--param duration=1s,2s\)$"):  # fmt: skip
        sweep.plan_grid(two_hosts, [], params, [1])


@pytest.mark.parametrize(
    "second",
    ['"duration"', "'duration'", '"dur\\u0061tion"', ' "duration" ', '"dur\\x61tion"'],
)
def test_a_parameter_given_twice_in_another_spelling_is_refused_too(
    two_hosts: str, second: str
) -> None:
    # Campaign 9: a quoted key names the same key as the bare one (the core reads a --set path
    # as TOML dotted keys), yet `--param duration=1s --param '"duration"=2s'` made one run set
    # to 2 s whose row said 1 s, as the same spelling twice did before campaign 8.
    with pytest.raises(ValueError, match=r"given twice; give all its values in one "
                                         r"\(--param duration=1s,2s\)$"):  # fmt: skip
        sweep.plan_grid(two_hosts, [], [("duration", ["1s"]), (second, ["2s"])], [1])


def test_a_key_with_toml_1_1_escapes_names_the_key_the_core_reads() -> None:
    # Campaign 14: the core reads TOML 1.1 (`\xHH`, `\e`), Python's tomllib 1.0; a path it
    # could not read was taken for its text, so `--param '"se\x65d"=1,2'` was swept (two rows
    # of one run) and `"dur\x61tion"` slipped past the check for a parameter given twice.
    assert sweep.key_path('"se\\x65d"') == ("seed",)
    assert sweep.key_path('links."a\\x2eb\\\\x41".rate') == ("links", "a.b\\x41", "rate")
    assert sweep.key_path('"\\e"') == ("\x1b",)


def test_a_path_with_spaces_around_its_dots_is_the_same_parameter(two_hosts: str) -> None:
    params = [("links.bottleneck.rate", ["1Mbps"]), ("links . bottleneck . rate", ["2Mbps"])]
    with pytest.raises(ValueError, match=r"^--param links.bottleneck.rate and links . "
                                         r"bottleneck . rate: given twice"):  # fmt: skip
        sweep.plan_grid(two_hosts, [], params, [1])


@pytest.mark.parametrize("seed", ["'seed'", '"se\\u0065d"', " 'seed' ", '"se\\x65d"'])
def test_the_seed_in_any_spelling_is_not_a_parameter_or_an_override(
    two_hosts: str, seed: str
) -> None:
    # Campaign 9: only a bare or double-quoted `seed` was refused; `'seed'` was swept, every
    # row labelled by the sweep's seed while the run used the swept one.
    with pytest.raises(ValueError, match=r"^--param seed: the seed is not a parameter"):
        sweep.plan_grid(two_hosts, [], [(seed, ["1", "2"])], [1])
    with pytest.raises(ValueError, match=r"^--set seed: a sweep gives each run its seed"):
        sweep.plan_grid(two_hosts, [f"{seed}=3"], [("duration", ["1s"])], [1])


def test_a_quoted_key_holding_an_equals_sign_is_one_parameter_path() -> None:
    assert sweep.parse_param('nodes."a=b".hook=x, y') == ('nodes."a=b".hook', ["x", "y"])


def test_param_values_split_only_at_commas_outside_tables_arrays_and_strings() -> None:
    # Campaign 10: two queue tables were split at every comma into four pieces, and the sweep
    # was refused with `queue: expected a table ..., found string "{type=\"red\""`.
    two_queues = 'links.l.queue={type="red", limit=50},{ type = "red", limit = 100 }'
    assert sweep.parse_param(two_queues) == (
        "links.l.queue",
        ['{type="red", limit=50}', '{ type = "red", limit = 100 }'],
    )
    assert sweep.parse_param("x=[1, 2],[3]") == ("x", ["[1, 2]", "[3]"])
    assert sweep.parse_param('v="a,b", \'c,d\', "e\\",f"') == (
        "v",
        ['"a,b"', "'c,d'", '"e\\",f"'],
    )


@pytest.mark.parametrize(
    ("spec", "where"), [("a=0.01,,0.02", "value 2 of 3"), ("a=0.01,", "value 2 of 2"),
                        ("a=,0.01", "value 1 of 2")],
)  # fmt: skip
def test_an_empty_param_value_is_refused_not_dropped(spec: str, where: str) -> None:
    # Campaign 10: `0.01,,0.02` ran two points, the empty one dropped without a word.
    with pytest.raises(ValueError) as raised:
        sweep.parse_param(spec)
    assert str(raised.value) == (
        f'--param "{spec}": {where} is empty (two commas in a row, or one at an end)'
    )


def test_a_param_value_written_twice_is_refused_not_run_into_duplicate_rows(
    two_hosts: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Campaign 13: `--param duration=1s,1s` ran once, wrote both rows (the same run twice in
    # flows.parquet) and said "2 runs: 1 executed, 0 reused from the store".
    from ccsim.cli import main

    f = tmp_path / "s.toml"
    f.write_text(two_hosts)
    out = tmp_path / "out"
    assert main(["sweep", str(f), "--param", "duration=1s, 2s,1s", "--out", str(out)]) == 1
    assert capsys.readouterr().err == (
        "ccsim: error: --param duration: the value 1s is given twice; give each value once\n"
    )
    assert not out.exists()


@pytest.mark.parametrize(
    ("overrides", "params", "seeds", "error", "message"),
    [
        ('duration="1s"', [], [1], TypeError, "base_overrides: expected a list of PATH=VALUE "
         "strings, not one string"),
        ([], [("duration", "1s")], [1], TypeError, "--param duration: expected a list of "
         "values as --set writes them (strings), not '1s'"),
        ([], [("duration", [1])], [1], TypeError, "--param duration: expected a list"),
        ([], [], [-1], ValueError, "seeds: -1 is out of range; a seed is an integer from 0"),
        ([], [], ["1"], ValueError, "seeds: '1' is not an integer"),
        ([], [], [1.5], ValueError, "seeds: 1.5 is not an integer"),
    ],
)  # fmt: skip
def test_a_sweep_planned_from_python_with_a_string_for_a_list_or_a_bad_seed_is_refused(
    two_hosts: str,
    overrides: Any,
    params: Any,
    seeds: Any,
    error: type[Exception],
    message: str,
) -> None:
    # Campaign 13: one string where a list goes was a sequence of its characters (overrides
    # "d", "u", ...; the values "1s" two runs, duration=1 and duration=s), and a seed of -1 or
    # "1" was planned, then failed in every run.
    with pytest.raises(error) as raised:
        sweep.plan_grid(two_hosts, overrides, params, seeds)
    assert str(raised.value).startswith(message)


def test_a_sweep_over_two_queue_tables_runs_both(two_hosts: str, tmp_path: Path) -> None:
    from ccsim.cli import main

    f = tmp_path / "s.toml"
    f.write_text(two_hosts)
    out = tmp_path / "out"
    queues = 'links.bottleneck.queue={type="droptail", limit=5},{type="droptail", limit=50}'
    assert main(["sweep", str(f), "--param", queues, "--out", str(out)]) == 0
    import pandas as pd

    assert len(set(pd.read_parquet(out / "links.parquet")["links.bottleneck.queue"])) == 2


def test_a_parameter_column_holds_one_type_when_its_values_are_written_in_two_ways(
    tmp_path: Path, two_hosts: str
) -> None:
    # A queue limit in packets and one in bytes (50 and "60000B"), or a TOML hex integer
    # beside a decimal one (0x10 and 20): the column mixed numbers and text, and writing
    # flows.parquet ended the sweep in pyarrow's "Conversion failed" or "internal error
    # (ArrowTypeError)" after every run (campaign 15, issue 32).
    hexed = sweep.plan_grid(two_hosts, [], [("links.bottleneck.queue.limit", ["0x10", "20"])],
                            [1])  # fmt: skip
    assert [r.tags[0][1] for r in hexed] == [16, 20]
    mixed = sweep.plan_grid(
        two_hosts, [], [("links.bottleneck.queue.limit", ["50", '"60000B"'])], [1]
    )
    assert [r.tags[0][1] for r in mixed] == ["50", "60000B"]
    f = tmp_path / "s.toml"
    f.write_text(two_hosts.replace('duration = "5s"', 'duration = "100ms"'))
    out = tmp_path / "sw"
    args = ["sweep", str(f), "--workers", "1", "--out", str(out),
            "--param", 'links.bottleneck.queue.limit=50,"60000B"']  # fmt: skip
    assert main(args) == 0
    flows = pd.read_parquet(out / "flows.parquet")
    assert sorted(set(flows["links.bottleneck.queue.limit"])) == ["50", "60000B"]


def test_a_comment_in_a_swept_table_hides_neither_its_commas_nor_the_next_value() -> None:
    # TOML 1.1 lets a comment end a line of an inline table written over several lines; an
    # apostrophe in it opened a literal string for the splitter, and both queues became one
    # value the core read as text (campaign 15, issue 32).
    first = '{type="droptail", # don\'t go } over, 40\n limit=50}'
    path, values = sweep.parse_param(f'links.x.queue={first},{{type="red", limit=60}}')
    assert (path, values) == ("links.x.queue", [first, '{type="red", limit=60}'])


def test_a_multi_line_string_value_with_an_apostrophe_and_a_comma_is_one_swept_value() -> None:
    # The Python splitter before the core's (issue 32) read `'''` as three one-character
    # strings: the apostrophe of `it's` closed one, and the comma after it cut a value in two.
    spec = 'nodes.a.label=\'\'\'it\'s, mine\'\'\',"""a "q", b""",plain'
    assert sweep.parse_param(spec) == (
        "nodes.a.label",
        ["'''it's, mine'''", '"""a "q", b"""', "plain"],
    )


@pytest.mark.parametrize(
    ("raw", "tag"),
    [("'cubic'", "cubic"), ('"cubic"', "cubic"), ("cubic", "cubic"), ("Infinity", "Infinity"),
     ("1e3", 1000.0), ("1_000", 1000), ("0b101", 5), ("05", "05"), ("true", "true"),
     ('"a\\tb"', "a\tb"), (" 2.5 ", 2.5)],
)  # fmt: skip
def test_a_swept_value_is_tagged_as_the_core_reads_it(raw: str, tag: object) -> None:
    # A column holds what the run used: `'cubic'` kept its quotes in the table (campaign 15's
    # note), and `Infinity`, `05` were numbers to Python's float() but text to the core.
    got = sweep.tag_value(raw)
    assert got == tag and type(got) is type(tag)


@pytest.mark.parametrize(("spec", "twice"), [("a=1000,1_000", "1000 (as 1_000)"),
                                            ("a=cubic,'cubic'", "cubic (as 'cubic')")])  # fmt: skip
def test_a_param_value_written_twice_in_two_spellings_is_refused(spec: str, twice: str) -> None:
    # Two spellings of one value ran the same run twice and gave its rows twice.
    with pytest.raises(ValueError, match=rf"^--param a: the value {re.escape(twice)} is given "
                                         r"twice; give each value once$"):  # fmt: skip
        sweep.parse_param(spec)


@pytest.mark.parametrize(
    ("spec", "twice"),
    [("a=5,5", "5"), ("a=x, x", "x"), ("a=é,é", "é"), ("a=0,0.0", "0 (as 0.0)"),
     ('a={type="red",limit=50},{ type = "red", # one table\n limit = 50, }',
      '{type="red",limit=50} (as { type = "red", # one table\n limit = 50, })'),
     ("a=[1,2],[1, 0x2]", "[1,2] (as [1, 0x2])"),
     ("a=1979-05-27T07:32:00Z,1979-05-27 07:32:00Z",
      "1979-05-27T07:32:00Z (as 1979-05-27 07:32:00Z)")],
)  # fmt: skip
def test_one_value_written_twice_in_any_spelling_is_refused(spec: str, twice: str) -> None:
    # Each ran one run twice, "2 runs: 1 executed", and gave its rows twice (campaign 17, issue
    # 32): a one-character value passed an identity test (Python keeps one object for each),
    # 0 and 0.0 were told apart by type, and a table or array was compared as written.
    with pytest.raises(ValueError, match=rf"^--param a: the value {re.escape(twice)} is given "
                                         r"twice; give each value once$"):  # fmt: skip
        sweep.parse_param(spec)


@pytest.mark.parametrize(
    ("spec", "twice"),
    [('a={type="red",limit=50},{limit=50,type="red"}',
      '{type="red",limit=50} (as {limit=50,type="red"})'),
     ('a=[{at="1s",link="l"}],[{link="l",at="1s"}]',
      '[{at="1s",link="l"}] (as [{link="l",at="1s"}])'),
     ("a={x={p=1,q=2}},{x={q=2,p=1}}", "{x={p=1,q=2}} (as {x={q=2,p=1}})")],
)  # fmt: skip
def test_one_table_with_its_keys_in_another_order_is_refused_as_given_twice(
    spec: str, twice: str
) -> None:
    # Campaign 22 (issue 32): a table's tag keeps its keys in the order written, so
    # `queue={type="droptail",limit=10},{limit=10,type="droptail"}` ran one run twice ("2 runs:
    # 2 executed", two run ids, the same rows), labelled apart in the tables.
    with pytest.raises(ValueError, match=rf"^--param a: the value {re.escape(twice)} is given "
                                         r"twice; give each value once$"):  # fmt: skip
        sweep.parse_param(spec)


def test_tables_that_differ_or_a_string_that_reads_like_one_are_values_of_their_own() -> None:
    # The keys' order is set aside, nothing else: a value differing, an array in another
    # order, and text written like a table stay values of their own.
    for spec in ('a={type="red",limit=50},{limit=60,type="red"}', "a=[1,2],[2,1]",
                 'a={p=1},"{p=1}"', "a={p=1},{p=1.5}"):  # fmt: skip
        assert len(sweep.parse_param(spec)[1]) == 2, spec


def test_a_swept_table_shows_in_the_table_as_the_core_read_it() -> None:
    # Its column held the text as written, comment and line breaks included; it holds the
    # value the run used, written once by TOML (campaign 17, issue 32).
    assert sweep.tag_value('{type = "red", # a comment\n limit = 0x32,}') == (
        '{ type = "red", limit = 50 }'
    )
    assert sweep.tag_value("[ 1 ,2 ]") == "[1, 2]"


def test_a_run_a_limit_stopped_before_its_end_is_a_failed_run_not_a_stored_record(
    two_hosts: str, tmp_path: Path
) -> None:
    # Campaign 18 (issue 32): `--param 'limits.max_wall="1ms","100s"'` reported "2 runs: 2
    # executed"; the run stopped at 1.9 s of 60 s gave rows that read as a whole run's, and was
    # stored and reused though where a wall-clock limit stops a run depends on the machine.
    runs = sweep.plan_grid(two_hosts, ["limits.max_events=100"], [("duration", ["1s", "2s"])],
                           [1])  # fmt: skip
    store = sweep.Store(tmp_path / "runs")
    with pytest.raises(sweep.SweepError) as raised:
        sweep.execute(runs, store, workers=1, progress=False)
    assert len(raised.value.failures) == 2
    assert isinstance(raised.value.failures[0][1], sweep.RunCutShort)
    assert "stopped by limits.max_events at " in str(raised.value)
    assert len(store) == 0
    # What the summary says of a wall-clock or memory limit, and of a whole run.
    wall = sweep._cut_short({"summary": {"stop_reason": "wall_limit", "sim_seconds": 1.928}})
    assert str(wall).startswith("stopped by limits.max_wall at 1.928 s simulated, before the "
                                "run's end: a partial run, not stored")  # fmt: skip
    memory = sweep._cut_short({"summary": {"stop_reason": "memory_limit"}})
    assert "limits.max_memory" in str(memory)
    assert sweep._cut_short({"summary": {"stop_reason": "duration"}}) is None
    assert sweep._cut_short({"summary": {"stop_reason": "idle"}}) is None


@pytest.mark.parametrize("set_path", ["duration", '"duration"', " duration "])
def test_a_path_both_set_and_swept_is_refused_naming_both(two_hosts: str, set_path: str) -> None:
    # Campaign 18 (issue 32): `--set duration=5s --param duration=1s,2s` swept 1 s and 2 s, the
    # --set replaced in every run without a word.
    with pytest.raises(ValueError, match=r"^--set .*duration.* and --param duration: the swept "
                                         r"values replace the set one in every run"):  # fmt: skip
        sweep.plan_grid(two_hosts, [f"{set_path}=5s"], [("duration", ["1s", "2s"])], [1])


FLOW = '{type="tcp", src="h1", dst="h2", size="%s"}'


@pytest.mark.parametrize(
    ("base", "params"),
    [
        (["flows.f1.mss=500"], [("flows.f1", [FLOW % "100KB", FLOW % "200KB"])]),
        (['flows."f1".mss=500'], [("flows . f1", [FLOW % "100KB", FLOW % "200KB"])]),
        ([], [("flows.f1.mss", ["500", "600"]), ("flows.f1", [FLOW % "100KB", FLOW % "200KB"])]),
        ([], [("links.bottleneck.queue.limit", ["20", "30"]), ("links", ["{}", "{a={}}"])]),
    ],
)
def test_a_swept_table_holding_a_path_given_before_it_is_refused_naming_both(
    two_hosts: str, base: list[str], params: list[tuple[str, list[str]]]
) -> None:
    # Campaign 19 (issue 32): each run applies --set, then the swept values in order, so a
    # swept table replaced what was given inside it before: `--param flows.f1.mss=500,600
    # --param flows.f1={...},{...}` labelled its rows 500 and 600 over runs that were all the
    # default MSS ("4 runs: 2 executed"), and a --set inside it was dropped without a word.
    refused = r"^--(set|param) .* and --param .*: each swept value replaces .*, given before it"
    with pytest.raises(ValueError, match=refused):
        sweep.plan_grid(two_hosts, base, params, [1])


def test_a_path_inside_a_swept_table_given_after_it_is_kept(two_hosts: str) -> None:
    # The order that works (the inner path applied after its table) stays allowed.
    runs = sweep.plan_grid(
        two_hosts,
        ["duration=1s"],
        [("flows.f1", [FLOW % "100KB", FLOW % "200KB"]), ("flows.f1.mss", ["500", "600"])],
        [1],
    )
    assert len(runs) == 4
    assert runs[0].overrides[-1] == "flows.f1.mss=500"


def test_two_swept_values_that_would_share_a_label_are_refused(two_hosts: str) -> None:
    # Campaign 19 (issue 32): `--param 'flows.f1.mss="""1000""",1000'` ran two identical runs
    # whose rows both read 1000: a string and an integer, one label.
    with pytest.raises(ValueError, match=r'^--param tcp.mss: the values """1000""" and 1000 '
                                         r"would both show as 1000 in the tables"):  # fmt: skip
        sweep.plan_grid(two_hosts, [], [("tcp.mss", ['"""1000"""', "1000", '"x"'])], [1])


def test_two_threads_saving_one_run_at_once_both_save_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Campaign 22 (issue 32): the temporary file was named per process, so two threads saving
    # the same run (two sweeps over one store at once, in one program) wrote the same file,
    # and the second to rename found it gone: "RecordNotSaved: ... no such file". Thread A is
    # held at its rename, its file written, while thread B saves the same run in full.
    import json
    import threading

    store, key = sweep.Store(tmp_path / "runs"), "ab" * 16
    a_written, b_saved = threading.Event(), threading.Event()
    replace = os.replace

    def held_replace(src: Any, dst: Any) -> None:
        if threading.current_thread().name == "A":
            a_written.set()
            assert b_saved.wait(30)
        replace(src, dst)

    monkeypatch.setattr(os, "replace", held_replace)
    failed: list[BaseException] = []

    def save(record: dict[str, Any]) -> None:
        try:
            store.save(key, record)
        except BaseException as e:  # reported below, whichever thread raised it
            failed.append(e)

    a = threading.Thread(target=save, args=({"by": "a"},), name="A")
    a.start()
    assert a_written.wait(30)
    b = threading.Thread(target=save, args=({"by": "b"},), name="B")
    b.start()
    b.join(30)
    b_saved.set()
    a.join(30)
    assert failed == []
    assert json.loads(store.path(key).read_text()) == {"by": "a"}, "A's, renamed last"
    assert os.listdir(store.path(key).parent) == [store.path(key).name], "no file left behind"


@pytest.mark.parametrize("method", ["forkserver", "spawn"])
def test_a_sweep_runs_its_workers_under_the_start_method_a_users_script_set(
    tmp_path: Path, method: str
) -> None:
    # Campaign 37 (issue 32): a script that set multiprocessing's start method to
    # "forkserver" (Python 3.14's default on Linux) before sweep.execute(workers=2) got
    # "SweepInterrupted: a worker process died; 0 finished runs are stored": each worker,
    # forked by the server, took the server's id for the sweeping process's and ended at once.
    script = (
        "import multiprocessing, sys\n"
        "from ccsim import sweep\n"
        "if __name__ == '__main__':\n"
        f"    multiprocessing.set_start_method({method!r})\n"
        "    text = open(sys.argv[1]).read()\n"
        "    runs = [sweep.RunSpec(text, (), seed) for seed in (1, 2, 3)]\n"
        "    report = sweep.execute(runs, sweep.Store(sys.argv[2]), workers=2, progress=False)\n"
        "    print(len(report.records))\n"
    )
    examples = Path(__file__).resolve().parents[2] / "examples"
    done = subprocess.run(
        [sys.executable, "-c", script, str(examples / "random-loss.toml"), str(tmp_path / "runs")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "3\n", "")


#: A sweep whose worker for seed 2 is killed by SIGKILL halfway through sending its result: it
#: writes the head of a 1 MB message and 10 bytes of it into the pool's result pipe, as a
#: worker does that the out-of-memory killer ends mid-send, then kills itself. The other runs
#: are real. Run in a child process (the fork start method carries the patch into workers).
KILLED_MID_SEND = """
import inspect, os, signal, struct, sys
from ccsim import sweep

real = sweep._execute_one

def execute_one(text, overrides, seed):
    if seed != 2:
        return real(text, overrides, seed)
    frame = inspect.currentframe()
    while "result_queue" not in frame.f_locals:
        frame = frame.f_back
    writer = frame.f_locals["result_queue"]._writer
    os.write(writer.fileno(), struct.pack("!i", 1_000_000) + b"x" * 10)
    os.kill(os.getpid(), signal.SIGKILL)

sweep._execute_one = execute_one
runs = sweep.plan_grid(open(sys.argv[1]).read(), [], [], [1, 2, 3, 4])
try:
    sweep.execute(runs, sweep.Store(sys.argv[2]), workers=2, progress=False)
except sweep.SweepInterrupted as e:
    print(e)
"""


def test_a_worker_killed_while_sending_its_result_ends_the_sweep_in_one_line(
    tmp_path: Path, two_hosts: str
) -> None:
    # Campaign 40 (issue 32): a worker killed by SIGKILL (the out-of-memory killer) while it
    # sent a run's record (2.9 MB for a 300 s run with its series) left half a message in the
    # result pipe; the pool's thread waited for the rest for ever, no future ended, and the
    # sweep hung with its finished runs stored (1 kill in 3 under forkserver, 40a and the
    # lead). The sweep sees the dead worker itself.
    (tmp_path / "two.toml").write_text(two_hosts)
    done = subprocess.run(
        [sys.executable, "-c", KILLED_MID_SEND, str(tmp_path / "two.toml"), str(tmp_path / "s")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.stderr == ""
    assert done.stdout.startswith(
        "a worker process died, killed by SIGKILL: the system's out-of-memory killer"
    ), done.stdout
    # The runs that finished meanwhile (0 to 3, as the other worker got on) are kept.
    kept = r"; [0-3] finished runs? (is|are) stored, and running the same command again resumes"
    assert re.search(kept, done.stdout), done.stdout


def _pool_command(command: str, out: Path) -> list[str]:
    root = Path(__file__).resolve().parents[2]
    return {
        "sweep": ["sweep", str(root / "examples" / "random-loss.toml"), "--set",
                  "duration=100ms", "--param", "links.bottleneck.loss.rate=0.01,0.02",
                  "--workers", "2", "--out", str(out)],
        "reproduce": ["reproduce", "m01", "--quick", "--seeds", "1", "--workers", "2",
                      "--out", str(out)],
    }[command]  # fmt: skip


def assert_pool_output_whole(command: str, stdout: str, out: Path) -> None:
    """``_pool_command``'s sweep or reproduction ran every run and left its output whole."""
    if command == "sweep":
        assert "2 runs: 2 executed" in stdout and (out / "flows.parquet").is_file(), stdout
    else:
        assert "runs executed" in stdout and (out / "site" / "index.html").is_file(), stdout


def start_method_env(tmp_path: Path, method: str) -> dict[str, str]:
    """An environment whose Python starts with multiprocessing's start method ``method`` (set
    by a sitecustomize in ``tmp_path/site``, as an interpreter's default would be)."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        f"import multiprocessing\nmultiprocessing.set_start_method({method!r})\n"
    )
    return dict(
        os.environ, PYTHONPATH=os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])
    )


@pytest.mark.parametrize("method", ["forkserver", "spawn"])
@pytest.mark.parametrize("command", ["sweep", "reproduce"])
def test_the_commands_with_a_pool_work_under_each_start_method_as_python_3_14_runs_them(
    tmp_path: Path, method: str, command: str
) -> None:
    # Python 3.14 makes "forkserver" multiprocessing's default on Linux, where every worker of
    # `ccsim sweep --workers 2` ended at its start (campaign 37, issue 32, found through the
    # API). The command line, under each start method (set by a sitecustomize, as an
    # interpreter's default would be): every run done, the output whole, nothing on stderr.
    env = start_method_env(tmp_path, method)
    root = Path(__file__).resolve().parents[2]
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "ccsim", *_pool_command(command, out)],
                          capture_output=True, text=True, timeout=600, env=env,
                          cwd=root)  # fmt: skip
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    assert_pool_output_whole(command, done.stdout, out)


@pytest.mark.parametrize("command", ["sweep", "reproduce"])
def test_a_pool_under_forkserver_with_a_tmpdir_too_long_for_its_socket_is_refused_before_writing(
    tmp_path: Path, command: str
) -> None:
    # Campaign 41 (issue 32): the fork server listens on $TMPDIR/pymp-XXXXXXXX/listener-
    # XXXXXXXX, and a socket's path holds at most 108 bytes. Under a batch job's long TMPDIR
    # (here a Hangul name, 3 bytes a letter) a sweep said a bare "AF_UNIX path too long" and a
    # reproduction left its plan/ in --out.
    env = start_method_env(tmp_path, "forkserver")
    tmp = tmp_path / ("임시" * 12)
    tmp.mkdir()
    env["TMPDIR"] = str(tmp)
    out = tmp_path / "out"
    root = Path(__file__).resolve().parents[2]
    argv = [sys.executable, "-m", "ccsim", *_pool_command(command, out)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300, env=env, cwd=root)
    if sys.version_info >= (3, 14):  # Python falls back to /tmp for a TMPDIR this long
        assert (done.returncode, done.stderr) == (0, ""), done.stderr
        return
    assert done.returncode == 1
    assert done.stderr.startswith(
        "ccsim: error: the worker processes cannot start: the forkserver start method's server "
        f"cannot listen on a socket in the temporary folder {tmp} (AF_UNIX path too long"
    ), done.stderr
    assert done.stderr.endswith("set TMPDIR to a short writable folder (TMPDIR=/tmp)\n")
    assert not out.exists() and os.listdir(tmp) == []


@pytest.mark.parametrize("command", ["sweep", "reproduce"])
def test_a_pool_under_forkserver_whose_tmpdir_a_job_epilogue_removed_ends_without_a_traceback(
    tmp_path: Path, command: str
) -> None:
    # Campaign 42 (issue 32): a batch job's epilogue removes the job's TMPDIR (Slurm's
    # tmpfs/job_container plugins, a /tmp cleaner) while its last process still runs. Under
    # forkserver the fork server's folder $TMPDIR/pymp-XXXXXXXX went with it, and
    # multiprocessing's finalizer printed a FileNotFoundError traceback after the command's
    # output, status 0. Here the folder is removed by an exit handler that runs before
    # multiprocessing's own (registered after it), so the moment is the same every time.
    env = start_method_env(tmp_path, "forkserver")
    tmp = tmp_path / "job-tmp"
    tmp.mkdir()
    env["TMPDIR"] = str(tmp)
    (tmp_path / "site" / "sitecustomize.py").write_text(
        "import atexit, multiprocessing, multiprocessing.util, os, shutil\n"
        "multiprocessing.set_start_method('forkserver')\n"
        "if os.environ.pop('EPILOGUE', None):  # the command's own process, not its children\n"
        "    atexit.register(shutil.rmtree, os.environ['TMPDIR'])\n"
    )
    env["EPILOGUE"] = "1"
    out = tmp_path / "out"
    root = Path(__file__).resolve().parents[2]
    argv = [sys.executable, "-m", "ccsim", *_pool_command(command, out)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300, env=env, cwd=root,
                          stdin=subprocess.DEVNULL)  # fmt: skip
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    assert not tmp.exists()
    assert_pool_output_whole(command, done.stdout, out)


def test_a_ctrl_c_to_the_group_as_the_fork_server_starts_leaves_it_quiet_and_serving(
    tmp_path: Path,
) -> None:
    # Campaign 53 (issue 32): the fork server, a Python of the command's process group,
    # ignores SIGINT once it runs, not while its interpreter starts: a Ctrl-C to the group
    # then printed its KeyboardInterrupt traceback under the command's "interrupted" line
    # (the states matrix at seed 7003, a reproduction under forkserver interrupted at
    # 0.2 s, under load). Here SIGINT reaches the server just after its spawn, inside its
    # start (~20 ms); before the fix it printed the traceback or died of it.
    script = (
        "import multiprocessing, os, signal, sys, time\n"
        "from multiprocessing import forkserver\n"
        "from ccsim import limits\n"
        "multiprocessing.set_start_method('forkserver')\n"
        "assert limits.check_fork_server('the workers') is None\n"
        "pid = forkserver._forkserver._forkserver_pid\n"
        "os.kill(pid, signal.SIGINT)\n"
        "time.sleep(1.0)\n"
        "os.kill(pid, 0)  # serving still: a process, not a dead one's leftover\n"
        "state = open(f'/proc/{pid}/stat').read().rsplit(')', 1)[1].split()[0]\n"
        "print(state)\n"
        "with multiprocessing.Pool(1) as pool:  # and it forks a worker that runs\n"
        "    print(pool.apply(abs, (-3,)))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL)  # fmt: skip
    assert done.stderr == "" and done.returncode == 0, done.stderr
    state, answer = done.stdout.split()
    assert state != "Z" and answer == "3"


@pytest.mark.parametrize("method", ["forkserver", "spawn"])
def test_a_sweep_under_umask_0777_fails_in_one_line_under_each_start_method_as_under_fork(
    tmp_path: Path, method: str
) -> None:
    # Campaign 41 (issue 32): under spawn and forkserver each worker opens the pool's
    # semaphores again by name (and, under forkserver, connects to the server's socket), which
    # a umask of 0777 had made mode 000: every worker died on a "Permission denied" traceback,
    # "a worker process died", and the fork server's folder was left, its removal one more
    # traceback. Under fork the sweep said in one line that --out cannot be written.
    setpriv = shutil.which("setpriv") if os.geteuid() == 0 else None
    if os.geteuid() == 0 and setpriv is None:
        pytest.skip("as root without setpriv, a folder of mode 000 is written anyway")
    drop = [f"--{which}=-dac_override,-dac_read_search" for which in ("bounding-set", "inh-caps")]
    env = start_method_env(tmp_path, method)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env["TMPDIR"] = str(tmp)
    out = tmp_path / "res" / "out"
    (tmp_path / "res").mkdir()
    prefix = [setpriv, *drop] if setpriv else []
    done = subprocess.run([*prefix, sys.executable, "-m", "ccsim", *_pool_command("sweep", out)],
                          capture_output=True, text=True, timeout=300, env=env,
                          preexec_fn=lambda: os.umask(0o777))  # fmt: skip
    assert (done.returncode, done.stderr) == (1, f"ccsim: error: {out}/runs: permission denied\n")
    assert os.listdir(tmp) == [] and os.listdir(tmp_path / "res") == []


def _group(pgid: int) -> list[int]:
    """The processes of process group ``pgid`` (read from /proc: field 5 of each stat)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid:
            found.append(int(stat.parent.name))
    return found


@pytest.mark.parametrize("method", ["forkserver", "spawn"])
def test_a_hangup_of_the_whole_group_under_a_start_method_with_a_resource_tracker_says_one_line(
    tmp_path: Path, method: str
) -> None:
    # Campaign 40 (issue 32): a terminal or ssh session that hangs up signals the foreground
    # process group, and `ccsim sweep ... 2>log` logged under forkserver (Python 3.14's default)
    # or spawn "ccsim: warning: resource_tracker: process died unexpectedly, relaunching. Some
    # resources might leak." and a KeyError traceback per semaphore: multiprocessing's
    # resource tracker, a process of the group that ignores SIGINT and SIGTERM but not SIGHUP,
    # died, and the pool's semaphores were unregistered with a new one that never knew them.
    env = start_method_env(tmp_path, method)
    root = Path(__file__).resolve().parents[2]
    argv = ["sweep", str(root / "examples" / "random-loss.toml"), "--set", "duration=3000s",
            "--param", "links.bottleneck.loss.rate=0.01,0.02,0.03,0.04", "--workers", "2",
            "--out", str(tmp_path / "out")]  # fmt: skip
    log = tmp_path / "log"
    with log.open("wb") as err:
        # SIGHUP at its default, as a terminal's job has it, even where the tests run under
        # nohup (there the sweep ran to its end: campaign 41).
        heard = functools.partial(signal.signal, signal.SIGHUP, signal.SIG_DFL)
        proc = subprocess.Popen([sys.executable, "-m", "ccsim", *argv], stdout=subprocess.DEVNULL,
                                stderr=err, env=env, start_new_session=True,
                                preexec_fn=heard)  # fmt: skip
        # The sweeping process, its resource tracker, two workers (and a fork server): running.
        deadline = time.monotonic() + 60
        while len(_group(proc.pid)) < 4 and time.monotonic() < deadline:
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGHUP)
        status = proc.wait(60)
    assert status == 128 + signal.SIGHUP
    assert (
        log.read_text()
        == "ccsim: interrupted by SIGHUP; no run had finished: nothing was written\n"
    )


@pytest.mark.parametrize(
    ("seed", "message"),
    [
        (-5, "runs[1].seed: -5 is out of range; a seed is an integer from 0 to 2^63 - 1"),
        (2**64, f"runs[1].seed: {2**64} is out of range; a seed is an integer from 0 to 2^63 - 1"),
        (1.0, "runs[1].seed: 1.0 is not an integer"),
    ],
)
def test_execute_refuses_a_run_whose_seed_is_no_seed_naming_it_before_any_run(
    tmp_path: Path, two_hosts: str, seed: object, message: str
) -> None:
    # Campaign 38 (issue 32): a RunSpec made by hand with its seed from hash() (negative half
    # the time) failed with "OverflowError: can't convert negative int to unsigned", 2**64 with
    # "int too big to convert", 1.0 with "'float' object cannot be interpreted as an integer".
    runs = [sweep.RunSpec(two_hosts, (), 1), sweep.RunSpec(two_hosts, (), seed)]  # type: ignore[arg-type]
    with pytest.raises(ValueError) as raised:
        sweep.execute(runs, sweep.Store(tmp_path / "store"), workers=1, progress=False)
    assert str(raised.value) == message
    assert not (tmp_path / "store").exists()


#: A system without POSIX named semaphores (sem_open failing: no /dev/shm in the container, or
#: AWS Lambda), as Python sees it: every SemLock refused with ENOSYS.
NO_SEMAPHORES = """
import _multiprocessing, errno
class _Refused:
    SEM_VALUE_MAX = 2**31 - 1
    def __init__(self, *args, **kwargs):
        raise OSError(errno.ENOSYS, "Function not implemented")
_multiprocessing.SemLock = _Refused
"""


@pytest.mark.parametrize("command", ["sweep", "reproduce"])
def test_a_sweep_where_the_system_refuses_semaphores_is_refused_in_one_line_naming_them(
    tmp_path: Path, examples: Path, command: str
) -> None:
    # Campaign 38 (issue 32): the pool's start failed with a bare "ccsim: error: [Errno 38]
    # Function not implemented", naming neither the workers nor /dev/shm.
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "sitecustomize.py").write_text(NO_SEMAPHORES, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "site")}
    out = tmp_path / "out"
    if command == "sweep":
        argv = ["sweep", str(examples / "random-loss.toml"), "--set", 'duration="100ms"',
                "--seeds", "2", "--workers", "2", "--out", str(out)]  # fmt: skip
    else:  # it stored its plan/ in --out before the pool's start failed
        m01 = examples.parent / "experiments" / "m01-dctcp"
        argv = ["reproduce", str(m01), "--quick", "--seeds", "1", "--out", str(out)]
    done = subprocess.run([sys.executable, "-m", "ccsim", *argv], capture_output=True,
                          text=True, env=env, timeout=60)  # fmt: skip
    assert done.returncode == 1
    assert done.stderr == (
        "ccsim: error: the worker processes cannot start: this system refuses the POSIX "
        "semaphores a process pool shares (Function not implemented; /dev/shm missing, "
        "read-only or full?): give it a writable /dev/shm (a container: not --ipc=none)\n"
    )
    assert not out.exists()


def test_execute_where_the_system_refuses_semaphores_names_them_before_any_run(
    tmp_path: Path, two_hosts: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Campaign 38 (issue 32): from Python, the pool's start raised "OSError: [Errno 38]
    # Function not implemented".
    import _multiprocessing
    import errno

    class Refused:
        SEM_VALUE_MAX = 2**31 - 1

        def __init__(self, *args: object, **kwargs: object) -> None:
            raise OSError(errno.ENOSYS, "Function not implemented")

    monkeypatch.setattr(_multiprocessing, "SemLock", Refused)
    runs = [sweep.RunSpec(two_hosts, (), s) for s in (1, 2)]
    with pytest.raises(ValueError, match=r"^2 worker processes cannot start: this system refuses"):
        sweep.execute(runs, sweep.Store(tmp_path / "store"), workers=2, progress=False)
    assert not (tmp_path / "store").exists()


def test_a_sweep_without_workers_starts_one_per_cpu_it_may_use_not_per_cpu_of_the_machine(
    tmp_path: Path, two_hosts: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Campaign 39 (issue 32): under `taskset -c 0` (a batch scheduler's CPU set, `docker run
    # --cpuset-cpus`) a sweep started one worker per CPU of the machine, all on the one CPU
    # it was given. Here a 64-CPU machine that lets the process use CPUs 3 and 5.
    started: list[int] = []

    def pool(todo: dict[str, sweep.RunSpec], store: sweep.Store, workers: int, *_: Any) -> None:
        started.append(workers)
        raise KeyboardInterrupt  # no run needed: the number of workers is what is checked

    monkeypatch.setattr(sweep, "_execute_local", pool)
    monkeypatch.setattr(os, "cpu_count", lambda: 64)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {3, 5}, raising=False)
    runs = sweep.plan_grid(two_hosts, [], [("links.bottleneck.rate", ["2Mbps", "5Mbps"])],
                           [1, 2])  # fmt: skip
    with pytest.raises(KeyboardInterrupt):
        sweep.execute(runs, sweep.Store(tmp_path / "runs"), progress=False)
    assert started == [2]
    # Where the system says neither (os.cpu_count() is None there), one worker.
    monkeypatch.delattr(os, "sched_getaffinity")
    monkeypatch.setattr(os, "cpu_count", lambda: None)
    with pytest.raises(KeyboardInterrupt):
        sweep.execute(runs, sweep.Store(tmp_path / "runs2"), progress=False)
    assert started == [2, 1]
    assert sweep._usable_cpus() == 1


def test_a_sweeps_progress_bar_counts_its_time_forward_when_the_wall_clock_steps_back(
    tmp_path: Path, two_hosts: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Campaign 39 (issue 32): the wall clock stepped back an hour after the bar started (NTP
    # after a laptop's resume): tqdm's bar stood still for that hour and ended reading
    # "-59:54<00:00, -0.00run/s".
    import io

    import tqdm.std

    real = time.time
    calls = [0]

    def stepped_back() -> float:
        calls[0] += 1
        return real() - (3600.0 if calls[0] > 2 else 0.0)  # after the bar's start

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr(tqdm.std, "time", stepped_back)
    monkeypatch.setattr(sys, "stderr", Terminal())
    runs = sweep.plan_grid(two_hosts, [], [("links.bottleneck.rate", ["2Mbps", "5Mbps"])],
                           [1, 2])  # fmt: skip
    sweep.execute(runs, sweep.Store(tmp_path / "runs"), workers=1)
    shown = sys.stderr.getvalue().replace("\r", "\n").splitlines()
    ends = [line for line in shown if "4/4" in line]
    assert ends, shown
    assert all("[00:0" in line and "-" not in line.split("[")[1] for line in ends), ends


def test_a_sweeps_progress_bar_leaves_out_the_time_the_process_was_stopped(
    tmp_path: Path, two_hosts: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Campaign 60b: stopped (Ctrl-Z, then fg), the bar's rate and time left counted the stop:
    # 8 s of it in a sweep of 12 one-second runs read "3/12 [00:10<00:38, 4.31s/run]" with
    # 6 s of runs left. Here the process is stopped for real, 1 s, at its first
    # record's save (the watch's gap made 0.3 s), and the bar's elapsed time leaves it out.
    import io
    import subprocess

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    elapsed: list[float] = []

    class Bar(sweep._ProgressBar):  # type: ignore[misc]
        def close(self) -> None:
            elapsed.append(self._time() - self.start_t)
            super().close()

    save = sweep.Store.save
    saves = [0]

    def stopped_at_first(store: Any, key: str, record: Any) -> None:
        saves[0] += 1
        if saves[0] == 1:
            waker = subprocess.Popen(["sh", "-c", f"sleep 1; kill -CONT {os.getpid()}"])
            os.kill(os.getpid(), signal.SIGSTOP)
            waker.wait()
        save(store, key, record)

    monkeypatch.setattr(sweep, "_ProgressBar", Bar)
    monkeypatch.setattr(sweep.Store, "save", stopped_at_first)
    monkeypatch.setattr(RunningClock, "GAP_S", 0.3)
    monkeypatch.setattr(sys, "stderr", Terminal())
    runs = sweep.plan_grid(two_hosts, [], [("links.bottleneck.rate", ["2Mbps", "5Mbps"])], [1])
    started = time.monotonic()
    sweep.execute(runs, sweep.Store(tmp_path / "runs"), workers=1)
    assert time.monotonic() - started >= 1.0
    assert elapsed and max(elapsed) < 0.9, elapsed


def test_a_stop_signal_another_thread_receives_waits_for_the_end_of_a_held_block() -> None:
    # Campaign 41 (issue 32): a pool's submit and a record's save held SIGINT, SIGTERM and
    # SIGHUP off with the main thread's signal mask only. The kernel gives a signal sent to the
    # process to any thread that does not block it, and Python runs the main thread's handler
    # at its next switch of threads, inside the block: under spawn a hang-up to the whole
    # group cut a worker's start between its launch and its start-up data, and the worker
    # printed "EOFError: Ran out of input" under the command's line (1 in 5-12). Here the
    # signal goes to a busy thread, as to the pool's threads.
    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    stop = threading.Event()
    busy = threading.Thread(target=lambda: [0 for _ in iter(stop.is_set, True)], daemon=True)
    busy.start()
    previous = signal.signal(signal.SIGTERM, interrupt)
    steps = 0
    try:
        with pytest.raises(KeyboardInterrupt):
            with sweep._signals_held():
                assert busy.ident is not None
                signal.pthread_kill(busy.ident, signal.SIGTERM)
                deadline = time.monotonic() + 0.3
                while time.monotonic() < deadline:  # many switches of threads
                    steps += 1
                steps = -steps  # the block ran to its end
        assert steps < 0, f"acted on inside the block, after {steps} steps"
    finally:
        signal.signal(signal.SIGTERM, previous)
        stop.set()
        busy.join(5)


def test_a_sweeps_progress_bar_goes_to_stderr_whatever_tqdm_file_says(
    tmp_path: Path, two_hosts: str
) -> None:
    # Campaign 46 (issue 32): tqdm takes its defaults from TQDM_* variables, and TQDM_FILE=x
    # made the bar's file a text: "internal error (AttributeError): 'str' object has no
    # attribute 'write'" before any run.
    f = tmp_path / "s.toml"
    f.write_text(two_hosts)
    argv = ["sweep", str(f), "--param", "links.bottleneck.rate=2Mbps", "--out", str(tmp_path / "o")]
    env = {**os.environ, "TQDM_FILE": "x"}
    done = subprocess.run([sys.executable, "-m", "ccsim", *argv], capture_output=True,
                          text=True, timeout=120, env=env, cwd=tmp_path)  # fmt: skip
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    assert (tmp_path / "o" / "flows.parquet").is_file() and not (tmp_path / "x").exists()


def _sweep_on_a_terminal(tmp_path: Path, two_hosts: str, setting: str) -> tuple[int, str, str]:
    """A two-run sweep in a child whose stderr is a terminal of its own (a pseudo-terminal:
    the bar is drawn only on one), under one environment ``NAME=value`` (tqdm reads its
    variables as it loads): its status, what the terminal got (carriage returns as line
    ends) and its stdout."""
    import contextlib
    import pty

    f = tmp_path / "s.toml"
    f.write_text(two_hosts)
    name, _, value = setting.partition("=")
    argv = ["sweep", str(f), "--param", "links.bottleneck.rate=2Mbps,5Mbps", "--workers", "1",
            "--out", str(tmp_path / "o")]  # fmt: skip
    terminal, its_end = pty.openpty()
    try:
        done = subprocess.run([sys.executable, "-m", "ccsim", *argv], stdout=subprocess.PIPE,
                              stderr=its_end, text=True, timeout=120, cwd=tmp_path,
                              env={**os.environ, name: value})  # fmt: skip
        os.close(its_end)
        said = b""
        with contextlib.suppress(OSError):  # EIO: the terminal's other end is closed
            while chunk := os.read(terminal, 65536):
                said += chunk
    finally:
        os.close(terminal)
    return done.returncode, said.decode().replace("\r", "\n"), done.stdout


@pytest.mark.parametrize(
    ("setting", "failure"),
    [("TQDM_ASCII=x", "ZeroDivisionError: integer division or modulo by zero"),
     ("TQDM_LOCK_ARGS=abc", "TypeError: acquire() takes at most 2 arguments (3 given)")],
)  # fmt: skip
def test_a_progress_bar_tqdm_cannot_draw_under_a_setting_goes_said_once_and_the_sweep_runs(
    setting: str, failure: str, tmp_path: Path, two_hosts: str
) -> None:
    # Stop 58 (issue 32): values tqdm reads well from its TQDM_* variables and then fails on as
    # the bar is drawn (on a terminal only) ended the sweep before its first run, "internal
    # error (ZeroDivisionError)" or "(TypeError)". The two cases fail in the two places a bar
    # is drawn from (display, refresh). A child on a pseudo-terminal: ~1.5 s each.
    status, said, stdout = _sweep_on_a_terminal(tmp_path, two_hosts, setting)
    name, _, value = setting.partition("=")
    assert status == 0, said
    assert [line for line in said.splitlines() if line] == [
        f"ccsim: warning: no progress bar: tqdm failed with {name}={value!r} in the "
        f"environment ({failure}): mend or unset it"
    ]
    assert stdout.startswith("2 runs: 2 executed")


def test_a_sweeps_progress_bar_counts_its_runs_from_zero_whatever_tqdm_initial_says(
    tmp_path: Path, two_hosts: str
) -> None:
    # Stop 58 (issue 32): TQDM_INITIAL=-5 started the bar at "-5/2", "-250%".
    status, said, _ = _sweep_on_a_terminal(tmp_path, two_hosts, "TQDM_INITIAL=-5")
    assert status == 0, said
    counts = re.findall(r"\| *(-?\d+)/2 \[", said)
    assert counts and counts[0] == "0" and counts[-1] == "2", said


def test_a_sweep_resumed_by_another_build_says_why_no_run_was_reused(
    two_hosts: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    # Campaign 61d's notice (issue 32): a store made by another install or an older checkout
    # of ccsim holds runs under its own engine's keys, and the sweep resumed there said "2
    # executed, 0 reused from the store" with no word why. Here the first sweep is made as
    # if by an engine "0123456789abcdef".
    from ccsim.cli import main

    f = tmp_path / "s.toml"
    f.write_text(two_hosts)
    argv = ["sweep", str(f), "--set", "duration=100ms", "--param",
            "links.bottleneck.rate=2Mbps,5Mbps", "--out", str(tmp_path / "out")]  # fmt: skip
    real = _core.ENGINE
    monkeypatch.setattr(_core, "ENGINE", "0123456789abcdef")
    assert main(argv) == 0
    monkeypatch.setattr(_core, "ENGINE", real)
    capsys.readouterr()
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert out.startswith("2 runs: 2 executed, 0 reused from the store\n(the runs stored there "
                          "were made by engine 0123456789abcdef, another build of ccsim than "
                          f"this one's {real}: made again, as a sweep never mixes two builds' "
                          "runs)\n"), out  # fmt: skip
    assert main(argv) == 0  # its own runs now: reused, and nothing more said
    assert "another build" not in capsys.readouterr().out
