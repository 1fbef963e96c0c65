# SPDX-License-Identifier: MIT
"""The public Python API's contract, checked for every function at once (issue 32).

Four hostile-input campaigns found, one by one, public functions that took a wrong type or
value silently or failed with a bare ``AttributeError``/``ZeroDivisionError``. Finding them
one at a time does not converge; this file checks every public callable against one pool of
hostile values instead:

    for each public function f            (listed by introspection, EXCLUDED below)
      for each parameter p of f
        for each value v of HOSTILE
          f(**{**VALID[f], p: v})   ->  returns, or raises TypeError / ValueError /
                                        ccsim.Error (and subclasses) whose message names p
                                        (a ScenarioError may name its scenario path instead)

and nothing is written outside the test's ``tmp_path`` (the working directory is moved into
it, and the repository's top level is compared before and after). A hang is turned into a
failure by an alarm (a guard, not a timing assertion).
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import math
import os
import signal
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import METRIC_AND_TWO_LINES

import ccsim
from ccsim import experiment, models, sweep, topologies
from ccsim.cluster import ClusterError
from ccsim.result import Result

ROOT = Path(__file__).resolve().parents[2]


class _Opaque:
    """An object no function has any business accepting (``object()`` with a stable repr, so
    that the test ids are the same on every run)."""

    def __repr__(self) -> str:
        return "<opaque>"


#: The hostile values, each with the id it has in the test names.
HOSTILE: dict[str, Any] = {
    "None": None,
    "True": True,
    "empty_str": "",
    "str_x": "x",
    "bytes_x": b"x",
    "zero": 0,
    "minus_one": -1,
    "two_pow_70": 2**70,
    "nan": math.nan,
    "inf": math.inf,
    "minus_zero": -0.0,
    "subnormal": 1e-320,
    "empty_list": [],
    "empty_dict": {},
    "lone_surrogate": "\ud800",
    "object": _Opaque(),
}

#: The exceptions a public function may raise on bad input: the two Python ones for a wrong
#: type or value, ccsim's own (``ccsim.Error``: ScenarioError, SimulationError; PlanError is a
#: ValueError), ``ClusterError`` for a cluster that cannot be used, and an OSError for a file
#: or folder that cannot be read or written, when it names that file (``filename``).
ALLOWED = (TypeError, ValueError, ccsim.Error, ClusterError, OSError)

#: Parameters whose errors name them as the command line does (the function is that
#: option's parser): (function, parameter) -> the option.
NAMED_AS: dict[tuple[str, str], tuple[str, ...]] = {
    ("sweep.parse_param", "spec"): ("--param",),
    ("sweep.execute", "cluster"): ("--scheduler",),
    # `ccsim reproduce NAME`: the experiment, or the paper's id
    ("experiment.find_experiment", "name"): ("experiment", "paper's id"),
}

# ---------------------------------------------------------------------------------------------
# A tiny experiment (one line, one x value, one seed, 10 ms): what the experiment functions
# need as valid arguments, built once.

SCENARIO = """
duration = "10ms"
[nodes]
a = "host"
r = "router"
b = "host"
[links.access]
a = "a"
b = "r"
rate = "100Mbps"
delay = "1ms"
[links.bottleneck]
a = "r"
b = "b"
rate = "10Mbps"
delay = "1ms"
[flows.f1]
type = "tcp"
src = "a"
dst = "b"
size = "10KB"
[flows.f2]
type = "tcp"
src = "a"
dst = "b"
size = "10KB"
[trace]
interval = "5ms"
"""

PLAN = (
    """
id = "t"
title = "test"
paper = 'A. Author, "A Title", Some Venue, 2001'
scenario = "scenario.toml"
seeds = 1
quick_seeds = 1

"""
    + METRIC_AND_TWO_LINES
    + """
[[figures]]
id = "rate"
title = "goodput vs rate"
x = { path = "links.bottleneck.delay", values = ["1ms"], quick = ["1ms"] }
lines = ["sack", "reno"]

[[figures]]
id = "shares"
kind = "flow_series"
lines = ["sack"]
flows = ["f1", "f2"]
link = "bottleneck:a_to_b"

[[tables]]
id = "fairness"
lines = ["sack"]
flows = ["f1", "f2"]
link = "bottleneck:a_to_b"
from_s = 0.0
window_s = 0.01

[[claims]]
figure = "rate"
text = "reno is below sack"
lower = "reno"
than = "sack"

[[assumptions]]
text = "a test plan"
"""
)


class World:
    """Valid arguments, made once per module in a folder of their own (never written by the
    calls under test, which get a fresh ``tmp_path`` for anything they write)."""

    def __init__(self, base: Path) -> None:
        self.folder = base / "experiments" / "t-test"
        self.folder.mkdir(parents=True)
        (self.folder / "scenario.toml").write_text(SCENARIO)
        (self.folder / "plan.toml").write_text(PLAN)
        self.scenario = ccsim.Scenario(SCENARIO)
        self.result = ccsim.run(self.scenario, seed=1)
        self.parquet = base / "result"
        self.result.to_parquet(self.parquet)
        self.plan = experiment.load_plan(self.folder)
        self.runs = experiment.plan_runs(self.plan, False)
        self.records = sweep.execute(
            self.runs, sweep.Store(base / "store"), workers=1, progress=False
        ).records
        self.figure = self.plan.figures[0]
        self.series_figure = self.plan.series_figures[0]
        self.table = self.plan.tables[0]
        self.claim = self.plan.claims[0]
        self.points = experiment.point_values(self.records, self.figure.metric, self.figure.id)
        self.summary = experiment.summarize(self.points)
        self.rec = self.records[0]
        self.series_recs = {"sack": self.rec}
        self.raw = sweep._execute_one(self.runs[0].text, self.runs[0].overrides, 1)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    return World(tmp_path_factory.mktemp("world"))


# ---------------------------------------------------------------------------------------------
# Valid arguments per function: each entry gives, for a World and the test's tmp_path, the
# callable and a complete set of keyword arguments that it accepts.

Case = Callable[[World, Path], tuple[Callable[..., Any], dict[str, Any]]]

VALID: dict[str, Case] = {
    # ccsim.__all__
    "ccsim.Scenario": lambda w, t: (ccsim.Scenario, {"text": SCENARIO, "overrides": (),
                                                     "source": "s.toml"}),
    "ccsim.Scenario.from_str": lambda w, t: (ccsim.Scenario.from_str, {"text": SCENARIO}),
    "ccsim.Scenario.from_dict": lambda w, t: (
        ccsim.Scenario.from_dict, {"tree": {"duration": "10ms", "nodes": {"a": "host"}}}),
    "ccsim.Scenario.from_toml": lambda w, t: (
        ccsim.Scenario.from_toml, {"path": w.folder / "scenario.toml"}),
    "ccsim.Scenario.set": lambda w, t: (w.scenario.set, {"path": "duration", "value": "5ms"}),
    "ccsim.Scenario.with_overrides": lambda w, t: (
        w.scenario.with_overrides, {"overrides": ["duration=5ms"]}),
    "ccsim.Scenario.validate": lambda w, t: (w.scenario.validate, {"seed": 1}),
    "ccsim.run": lambda w, t: (ccsim.run, {"scenario": w.scenario, "seed": 1, "overrides": (),
                                           "progress": None, "pcap_dir": None}),
    "ccsim.Result.from_parquet": lambda w, t: (Result.from_parquet, {"directory": w.parquet}),
    "ccsim.Result.to_parquet": lambda w, t: (w.result.to_parquet, {"directory": t / "out"}),
    "ccsim.Result.series_of": lambda w, t: (
        w.result.series_of, {"name": "bottleneck:a_to_b", "metric": "queue_packets"}),
    # ccsim.topologies
    "topologies.dumbbell": lambda w, t: (topologies.dumbbell, {
        "n_flows": 2, "rate": "10Mbps", "delay_ms": 1.0, "access_rate": "100Mbps",
        "access_delay_ms": 1.0, "hosts": 2, "buffer_packets": 10, "start_gap_ms": 1.0,
        "duration": "10ms", "web_rate": 0.0, "web_sizes": topologies.WEB_SIZES,
        "tcp": topologies.P1_TCP, "seed": 1}),
    "topologies.fat_tree": lambda w, t: (topologies.fat_tree, {
        "k": 4, "rate": "1Gbps", "delay_us": 10.0, "buffer_packets": 10, "long_flows": 2,
        "start_gap_ms": 1.0, "web_rate": 0.0, "web_hosts": 0, "web_sizes": topologies.WEB_SIZES,
        "duration": "10ms", "tcp": topologies.P1_TCP, "seed": 1}),
    # ccsim.models
    "models.mathis_constant": lambda w, t: (models.mathis_constant, {"b": 1.0}),
    "models.mathis": lambda w, t: (models.mathis, {"mss_bytes": 1448, "rtt_s": 0.1,
                                                   "p": 0.01, "b": 1.0}),
    "models.padhye_packets": lambda w, t: (models.padhye_packets, {
        "rtt_s": 0.1, "p": 0.01, "t0_s": 1.0, "b": 1.0, "wmax": 64.0}),
    "models.padhye": lambda w, t: (models.padhye, {
        "mss_bytes": 1448, "rtt_s": 0.1, "p": 0.01, "t0_s": 1.0, "b": 1.0, "wmax": 64.0}),
    "models.padhye_approx": lambda w, t: (models.padhye_approx, {
        "mss_bytes": 1448, "rtt_s": 0.1, "p": 0.01, "t0_s": 1.0, "b": 1.0, "wmax": 64.0}),
    "models.sqrt_bound": lambda w, t: (models.sqrt_bound, {
        "segment_bytes": 1448, "rtt_s": 0.1, "p": 0.01, "delayed_acks": True,
        "p_when_no_loss": 1e-6}),
    # ccsim.sweep
    "sweep.record_problem": lambda w, t: (sweep.record_problem, {"record": dict(w.rec)}),
    "sweep.record_of": lambda w, t: (sweep.record_of, {
        "raw": dict(w.raw), "overrides": ["duration=10ms"], "seed": 1}),
    "sweep.execute": lambda w, t: (sweep.execute, {
        "runs": w.runs[:1], "store": sweep.Store(t / "store"), "workers": 1, "progress": False,
        "description": "runs", "cluster": None}),
    "sweep.gather": lambda w, t: (sweep.gather, {"records": w.records, "table": "flows"}),
    "sweep.split_path": lambda w, t: (sweep.split_path, {"item": "duration=1s"}),
    "sweep.key_path": lambda w, t: (sweep.key_path, {"path": "links.bottleneck.rate"}),
    "sweep.parse_param": lambda w, t: (sweep.parse_param, {"spec": "duration=1s,2s"}),
    "sweep.tag_value": lambda w, t: (sweep.tag_value, {"raw": "1s"}),
    "sweep.plan_grid": lambda w, t: (sweep.plan_grid, {
        "text": SCENARIO, "base_overrides": ["duration=5ms"],
        "params": [("links.bottleneck.delay", ["1ms", "2ms"])], "seeds": [1, 2]}),
    "sweep.t975": lambda w, t: (sweep.t975, {"df": 3}),
    "sweep.mean_ci": lambda w, t: (sweep.mean_ci, {"values": [1.0, 2.0, 3.0]}),
    # ccsim.experiment
    "experiment.check_plan": lambda w, t: (experiment.check_plan, {"plan": w.plan,
                                                                   "quick": False}),
    "experiment.check_claim": lambda w, t: (experiment.check_claim, {
        "claim": w.claim, "points": w.points, "tables": None, "x_scale": 1.0, "plan": w.plan}),
    "experiment.check_table_claim": lambda w, t: (experiment.check_table_claim, {
        "claim": w.claim, "table": None}),
    "experiment.compare_lines": lambda w, t: (experiment.compare_lines, {
        "points": w.points, "figure": "rate", "a": "reno", "b": "sack", "margin": 0.05}),
    "experiment.default_out": lambda w, t: (experiment.default_out, {"plan_id": "t",
                                                                     "quick": False}),
    "experiment.draw_figure": lambda w, t: (experiment.draw_figure, {
        "fig": w.figure, "plan": w.plan, "summary": w.summary, "out": t / "fig"}),
    "experiment.draw_series_figure": lambda w, t: (experiment.draw_series_figure, {
        "fig": w.series_figure, "plan": w.plan, "recs": w.series_recs, "out": t / "fig"}),
    "experiment.find_experiment": lambda w, t: (experiment.find_experiment, {
        "name": "t-test", "root": w.folder.parent.parent}),
    "experiment.flow_rates": lambda w, t: (experiment.flow_rates, {
        "rec": w.rec, "flows": ["f1", "f2"], "series": None}),
    "experiment.jain_index": lambda w, t: (experiment.jain_index, {"xs": [1.0, 2.0]}),
    "experiment.link_capacity": lambda w, t: (experiment.link_capacity, {
        "rec": w.rec, "link": "bottleneck:a_to_b", "links": None}),
    "experiment.link_rate": lambda w, t: (experiment.link_rate, {
        "rec": w.rec, "link": "bottleneck:a_to_b", "series": None}),
    "experiment.load_plan": lambda w, t: (experiment.load_plan, {"folder": w.folder}),
    "experiment.paired_comparisons": lambda w, t: (experiment.paired_comparisons, {
        "plan": w.plan, "points": w.points}),
    "experiment.plan_runs": lambda w, t: (experiment.plan_runs, {
        "plan": w.plan, "quick": False, "seeds": 1}),
    "experiment.point_values": lambda w, t: (experiment.point_values, {
        "records": w.records, "metric": w.figure.metric, "figure": "rate"}),
    "experiment.rerun_command": lambda w, t: (experiment.rerun_command, {
        "plan_id": "t", "out": t / "out", "quick": False, "seeds": None}),
    "experiment.summarize": lambda w, t: (experiment.summarize, {"points": w.points}),
    "experiment.table_row": lambda w, t: (experiment.table_row, {"rec": w.rec, "t": w.table}),
    "experiment.write_report": lambda w, t: (experiment.write_report, {
        "plan": w.plan, "summary": w.summary, "out": t / "out", "quick": False, "n_runs": 2,
        "tables": None, "points": w.points, "table_seeds": None, "command": None,
        "judged": None}),
}  # fmt: skip

#: Public callables deliberately not called here, and why.
EXCLUDED: dict[str, str] = {
    # Exception and warning types: raised by the package, not called with user input.
    "ccsim.Error": "an exception type",
    "ccsim.ScenarioError": "an exception type",
    "ccsim.SimulationError": "an exception type",
    "experiment.PlanError": "an exception type",
    # Records the package builds and returns; they hold what they are given, and the
    # functions that take them back are the ones checked.
    "ccsim.Result": "a record of tables built by run() and from_parquet()",
    "ccsim.Summary": "a record built by run()",
    "experiment.Claim": "a record built by load_plan()",
    "experiment.Figure": "a record built by load_plan()",
    "experiment.Line": "a record built by load_plan()",
    "experiment.Metric": "a record built by load_plan()",
    "experiment.Plan": "a record built by load_plan()",
    "experiment.SeriesFigure": "a record built by load_plan()",
    "experiment.SummaryTable": "a record built by load_plan()",
    "experiment.Reproduction": "a record returned by reproduce()",
    # Each valid call runs a whole (if tiny) reproduction and draws its figures: checked in
    # test_experiment_machinery.py (its options refused before anything is written), and
    # run_cli is the body of `ccsim reproduce`, whose arguments come from argparse
    # (test_bad_input.py, test_cli.py) and which builds an HTML site.
    "experiment.reproduce": "runs a whole reproduction per call (options: test_experiment_*)",
    "experiment.run_cli": "the body of `ccsim reproduce` (test_cli.py, test_bad_input.py)",
    "ccsim.Scenario.to_toml": "takes no argument",
}


def _public(module: types.ModuleType, prefix: str) -> Iterator[str]:
    """The public callables defined in ``module`` (its ``__all__`` if it has one)."""
    names = getattr(module, "__all__", None) or [
        n for n, o in vars(module).items()
        if not n.startswith("_") and getattr(o, "__module__", None) == module.__name__
    ]  # fmt: skip
    for n in names:
        if n.startswith("_"):
            continue
        obj = getattr(module, n)
        if isinstance(obj, types.ModuleType) or not callable(obj):
            continue
        yield f"{prefix}.{n}"


def public_callables() -> list[str]:
    """Every public callable the contract covers, listed by introspection (so a new public
    function without an entry in VALID or EXCLUDED fails ``test_every_public_callable_...``)."""
    found = list(_public(ccsim, "ccsim"))
    for cls in (ccsim.Scenario, Result):
        for n, o in vars(cls).items():
            if not n.startswith("_") and not isinstance(o, property):
                found.append(f"ccsim.{cls.__name__}.{n}")
    found += _public(topologies, "topologies")
    found += _public(models, "models")
    found += _public(importlib.import_module("ccsim.sweep"), "sweep")
    found += _public(experiment, "experiment")
    return sorted(set(found))


# The sweep module's classes (RunSpec, Store, SweepReport...) are its machinery's records and
# errors: the public *functions* of ccsim.sweep are what the brief's "public functions" means.
SWEEP_CLASSES = {
    n for n, o in vars(sweep).items() if isinstance(o, type) and o.__module__ == "ccsim.sweep"
}


def test_every_public_callable_has_valid_arguments_or_a_stated_exclusion() -> None:
    listed = {
        n for n in public_callables()
        if not (n.startswith("sweep.") and n.split(".", 1)[1] in SWEEP_CLASSES)
    }  # fmt: skip
    assert sorted(listed - set(VALID) - set(EXCLUDED)) == []
    assert sorted(set(VALID) - listed) == []


def _cases() -> Iterator[Any]:
    for name in sorted(VALID):
        params = _VALID_PARAMS[name]
        for p in params:
            for label, value in HOSTILE.items():
                yield pytest.param(name, p, value, id=f"{name}-{p}-{label}")


class _LazyWorld:
    """Stands in for World when only the parameter names are wanted."""

    def __getattr__(self, _: str) -> Any:
        return _LazyWorld()

    def __getitem__(self, _: Any) -> Any:
        return _LazyWorld()

    def __call__(self, *_: Any, **__: Any) -> Any:
        return _LazyWorld()

    def __iter__(self) -> Iterator[Any]:
        return iter(())

    def keys(self) -> list[str]:
        return []

    def __truediv__(self, _: Any) -> Any:
        return _LazyWorld()


_VALID_PARAMS = {n: list(VALID[n](_LazyWorld(), Path("."))[1]) for n in VALID}  # type: ignore[arg-type]


def test_every_function_is_given_each_of_its_parameters() -> None:
    for name, case in VALID.items():
        fn = case(_LazyWorld(), Path("."))[0]  # type: ignore[arg-type]
        if isinstance(fn, _LazyWorld):
            continue
        sig = inspect.signature(fn)
        assert list(sig.parameters) == _VALID_PARAMS[name], name


class _Hang(Exception):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise _Hang


def _top_level() -> set[str]:
    return set(os.listdir(ROOT)) | {f"experiments/{n}" for n in os.listdir(ROOT / "experiments")}


@pytest.mark.parametrize(("name", "param", "value"), list(_cases()))
def test_a_hostile_argument_is_taken_or_refused_naming_its_parameter(
    name: str, param: str, value: Any, world: World, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)
    before = _top_level()
    siblings = set(os.listdir(tmp_path.parent))
    fn, valid = VALID[name](world, tmp_path)
    args = {**valid, param: value}
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(30)  # a guard against a hang, far above any call's time
    try:
        fn(**args)
    except _Hang:
        pytest.fail(f"{name}({param}={value!r}) did not return in 30 s")
    except ALLOWED as e:
        message = str(e)
        if isinstance(e, OSError):
            assert e.filename is not None, f"{type(e).__name__} naming no file: {message}"
        elif isinstance(e, ccsim.ScenarioError):
            assert param in message or e.path, (type(e), message)
        else:
            named = (param, *NAMED_AS.get((name, param), ()))
            assert any(n in message for n in named), f"{type(e).__name__}: {message}"
    except Exception as e:
        pytest.fail(f"{name}({param}={value!r}) raised {type(e).__name__}: {e}")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    assert _top_level() == before
    assert set(os.listdir(tmp_path.parent)) == siblings


def _reloaded(module: str) -> types.ModuleType:
    """A second copy of ``module``, as ``importlib.reload`` in a notebook makes it: its classes
    have the same names and module as the first's but are other objects. Left out of
    ``sys.modules``, so the other tests keep the first."""
    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.loader is not None
    copy = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(copy)
    return copy


@pytest.mark.parametrize("argument", ["scenario", "runs", "store"])
def test_an_object_made_before_its_module_was_reloaded_is_named_so_with_the_cure(
    argument: str, world: World, tmp_path: Path
) -> None:
    # Bug: `importlib.reload(ccsim.scenario)` in a notebook, then `ccsim.run(sc)` of a
    # Scenario made before: "scenario: expected a path (str or os.PathLike), not Scenario",
    # as if a Scenario were not taken (campaign 61c, issue 32).
    where = "ccsim.scenario" if argument == "scenario" else "ccsim.sweep"
    old = _reloaded(where)
    with pytest.raises(TypeError) as raised:
        if argument == "scenario":
            ccsim.run(old.Scenario.from_str(SCENARIO), seed=1)
        else:
            runs = old.plan_grid(SCENARIO, [], [], [1]) if argument == "runs" else world.runs[:1]
            store = old.Store(tmp_path) if argument == "store" else sweep.Store(tmp_path)
            sweep.execute(runs, store, workers=1, progress=False)
    assert str(raised.value).startswith(f"{argument if argument != 'runs' else 'runs[0]'}: ")
    assert f"made before {where} was reloaded (importlib.reload)" in str(raised.value)
    assert "make it again, or restart the kernel" in str(raised.value)


def test_run_of_neither_a_scenario_nor_a_path_says_it_takes_both() -> None:
    with pytest.raises(TypeError, match=r"^scenario: expected a Scenario or a path \(str or "):
        ccsim.run(3)  # type: ignore[arg-type]
