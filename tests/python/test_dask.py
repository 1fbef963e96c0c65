# SPDX-License-Identifier: MIT
"""Sweeps on a Dask cluster: same results as local runs, one store, worker deaths, errors.

Each test starts its own ``LocalCluster`` of two worker processes (real processes talking to a
real scheduler over TCP, as a cluster of machines would).
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from ccsim import sweep
from ccsim.cli import main

distributed = pytest.importorskip(
    "distributed",
    reason="Dask's distributed scheduler is not installed (scripts/test installs it)",
)

from ccsim import cluster  # noqa: E402  (after the skip: it needs distributed)


@pytest.fixture
def local_cluster() -> Iterator[Any]:
    """Two single-threaded worker processes and a scheduler on 127.0.0.1."""
    with distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=":0",  # any free port: 8787 may be taken (another cluster)
        silence_logs=50,  # logging.CRITICAL: a killed worker is expected here
    ) as lc:
        yield lc


def _grid(text: str, rates: list[str], seeds: list[int]) -> list[sweep.RunSpec]:
    return sweep.plan_grid(text, [], [("links.bottleneck.rate", rates)], seeds)


def test_a_sweep_on_a_dask_cluster_gives_the_same_tables_as_local_processes(
    tmp_path: Path, two_hosts: str, local_cluster: Any
) -> None:
    runs = _grid(two_hosts, ["2Mbps", "5Mbps"], [1, 2, 3])
    local = sweep.execute(runs, sweep.Store(tmp_path / "local"), workers=2, progress=False)
    on_dask = sweep.execute(
        runs,
        sweep.Store(tmp_path / "dask"),
        progress=False,
        cluster=local_cluster.scheduler_address,
    )
    assert on_dask.executed == 6
    for table in ("flows", "links", "series"):
        a = sweep.gather(local.records, table)
        b = sweep.gather(on_dask.records, table)
        pd.testing.assert_frame_equal(a, b)

    # The same records in the store, but for the wall-clock time each run took.
    def stored(root: Path) -> dict[Path, Any]:
        out = {}
        for p in root.rglob("*.json"):
            record = json.loads(p.read_text())
            del record["summary"]["wall_seconds"]
            out[p.relative_to(root)] = record
        return out

    local_records = stored(tmp_path / "local")
    assert len(local_records) == 6
    assert stored(tmp_path / "dask") == local_records


def test_a_sweep_started_locally_finishes_on_the_cluster_and_back_without_repeating_a_point(
    tmp_path: Path, two_hosts: str, local_cluster: Any
) -> None:
    store = sweep.Store(tmp_path / "runs")
    all_runs = _grid(two_hosts, ["2Mbps", "5Mbps"], [1, 2])
    first = sweep.execute(all_runs[:2], store, workers=1, progress=False)
    assert first.executed == 2
    with distributed.Client(local_cluster.scheduler_address, set_as_default=False) as client:
        middle = sweep.execute(all_runs, store, progress=False, cluster=client)
    assert (middle.executed, middle.cached) == (2, 2)
    last = sweep.execute(all_runs, store, workers=1, progress=False)
    assert (last.executed, last.cached) == (0, 4)


def test_a_worker_killed_mid_run_loses_only_that_run_which_runs_again(
    tmp_path: Path, local_cluster: Any, slow_line: str
) -> None:
    runs = sweep.plan_grid(slow_line, [], [("links.b.rate", ["40Mbps", "50Mbps"])], [1, 2, 3])
    with distributed.Client(local_cluster.scheduler_address, set_as_default=False) as client:
        pids = list(client.run(os.getpid).values())
        killed: list[int] = []

        def kill_one_worker_while_it_runs() -> None:
            # Wait until a task is executing, then kill that worker's process outright.
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                busy = [w for w, ts in client.processing().items() if ts]
                if busy:
                    pid = client.run(os.getpid, workers=[busy[0]])[busy[0]]
                    os.kill(pid, signal.SIGKILL)
                    killed.append(pid)
                    return
                time.sleep(0.02)

        killer = threading.Thread(target=kill_one_worker_while_it_runs)
        killer.start()
        rep = sweep.execute(runs, sweep.Store(tmp_path / "runs"), progress=False, cluster=client)
        killer.join()
    assert killed and killed[0] in pids
    assert rep.executed == 6
    local = sweep.execute(runs, sweep.Store(tmp_path / "local"), workers=2, progress=False)
    pd.testing.assert_frame_equal(sweep.gather(rep.records), sweep.gather(local.records))


def test_a_run_that_fails_with_a_scenario_error_is_reported_once_with_its_parameters(
    tmp_path: Path, two_hosts: str, local_cluster: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The core refuses a bad scenario before any run (a run's key is its validated form), so
    # the error is injected: a run function that fails for seed 2 and logs every attempt to a
    # file the workers share with this process. Defined here, it travels to the workers by
    # value.
    attempts = tmp_path / "attempts.log"
    real_run = sweep._execute_one

    def failing_for_seed_2(text: str, overrides: list[str], seed: int) -> dict[str, Any]:
        with open(attempts, "a", encoding="utf-8") as fh:
            fh.write(f"{seed}\n")
        if seed == 2:
            from ccsim import _core

            raise _core.ScenarioError("refused on purpose")
        return real_run(text, overrides, seed)

    monkeypatch.setattr(sweep, "_execute_one", failing_for_seed_2)
    store = sweep.Store(tmp_path / "runs")
    runs = _grid(two_hosts, ["2Mbps"], [1, 2, 3])
    with pytest.raises(sweep.SweepError) as info:
        sweep.execute(runs, store, progress=False, cluster=local_cluster.scheduler_address)
    assert [(r.seed, r.overrides) for r, _ in info.value.failures] == [
        (2, ("links.bottleneck.rate=2Mbps",))
    ]
    assert "seed 2" in str(info.value) and "refused on purpose" in str(info.value)
    assert sorted(attempts.read_text().split()) == ["1", "2", "3"]  # tried once, not retried
    assert len(store) == 2  # the runs that finished are stored


def test_workers_running_another_ccsim_version_are_refused_before_any_run(
    tmp_path: Path, two_hosts: str, local_cluster: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cluster, "_worker_version", lambda: "0.0.0-other")
    with pytest.raises(cluster.ClusterError, match=r"0\.0\.0-other"):
        sweep.execute(
            _grid(two_hosts, ["2Mbps"], [1]),
            sweep.Store(tmp_path / "runs"),
            progress=False,
            cluster=local_cluster.scheduler_address,
        )


def test_the_cli_runs_a_sweep_on_a_scheduler_given_by_address(
    tmp_path: Path, two_hosts: str, local_cluster: Any
) -> None:
    f = tmp_path / "s.toml"
    f.write_text(two_hosts)
    out = tmp_path / "out"
    args = ["sweep", str(f), "--param", "links.bottleneck.rate=2Mbps,5Mbps", "--seeds", "2",
            "--out", str(out), "--executor", "dask",
            "--scheduler", local_cluster.scheduler_address]  # fmt: skip
    assert main(args) == 0
    assert len(pd.read_parquet(out / "flows.parquet")) == 4


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--executor", "dask"], "--executor dask needs --scheduler"),
        (["--scheduler", "tcp://127.0.0.1:1"], "--scheduler is for --executor dask"),
        (
            ["--executor", "dask", "--scheduler", "tcp://127.0.0.1:1", "--workers", "2"],
            "--workers counts local processes",
        ),
    ],
)
def test_executor_options_that_do_not_fit_together_are_one_line_errors(
    tmp_path: Path,
    two_hosts: str,
    capsys: pytest.CaptureFixture[str],
    extra: list[str],
    message: str,
) -> None:
    f = tmp_path / "s.toml"
    f.write_text(two_hosts)
    assert main(["sweep", str(f), "--out", str(tmp_path / "o"), *extra]) == 1
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert not (tmp_path / "o").exists()


def test_short_runs_travel_in_batches_and_a_long_run_alone() -> None:
    assert cluster.batch_size(None) == 1  # nothing measured yet
    assert cluster.batch_size(10.0) == 1
    assert cluster.batch_size(cluster.TASK_TARGET_S / 4) == 4
    assert cluster.batch_size(1e-9) == cluster.MAX_BATCH


def test_a_reproduction_on_the_cluster_gives_the_same_points_as_on_local_processes(
    tmp_path: Path, local_cluster: Any
) -> None:
    from ccsim import experiment

    root = Path(__file__).resolve().parents[2]
    folder = experiment.find_experiment("p001", root=root)
    local = experiment.reproduce(folder, tmp_path / "local", quick=True, seeds=2, progress=False)
    on_dask = experiment.reproduce(
        folder,
        tmp_path / "dask",
        quick=True,
        seeds=2,
        progress=False,
        cluster=local_cluster.scheduler_address,
    )
    assert on_dask.executed == local.executed > 0
    pd.testing.assert_frame_equal(
        pd.read_parquet(tmp_path / "local" / "points.parquet"),
        pd.read_parquet(tmp_path / "dask" / "points.parquet"),
    )
