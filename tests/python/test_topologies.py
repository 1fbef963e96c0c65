# SPDX-License-Identifier: MIT
"""The scenario generators of ``ccsim.topologies`` and the scale cases ``ccsim bench`` builds
from them (issue 11)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import ccsim
from ccsim import bench, topologies

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def tree(sc: ccsim.Scenario) -> dict:
    return tomllib.loads(sc.to_toml())


@pytest.mark.parametrize(("k", "hosts", "switches"), [(4, 16, 20), (8, 128, 80), (16, 1024, 320)])
def test_a_k_ary_fat_tree_has_k_cubed_over_4_hosts_and_5_k_squared_over_4_switches(
    k: int, hosts: int, switches: int
) -> None:
    t = tree(topologies.fat_tree(k, long_flows=0))
    kinds = list(t["nodes"].values())
    assert kinds.count("host") == hosts
    assert kinds.count("router") == switches
    # Every switch has k ports, every host one: k * switches + hosts link ends.
    assert 2 * len(t["links"]) == k * switches + hosts


def test_the_fat_tree_permutation_sends_every_host_to_one_host_of_another_pod() -> None:
    t = tree(topologies.fat_tree(8, seed=3))
    flows = t["flows"].values()
    pod = lambda host: host.split("_")[1]  # noqa: E731
    assert len(flows) == 128
    assert sorted(f["dst"] for f in flows) == sorted(f["src"] for f in flows)
    assert all(pod(f["src"]) != pod(f["dst"]) for f in flows)


def test_a_small_fat_tree_runs_and_every_long_flow_delivers_data() -> None:
    sc = topologies.fat_tree(4, rate="100Mbps", duration="3s", web_hosts=2, web_rate=50.0)
    res = ccsim.run(sc)
    long = res.flows[res.flows["name"].str.startswith("long")]
    assert len(long) == 16
    assert (long["bytes_delivered"] > 0).all()
    assert res.summary.packets_created == (
        res.summary.packets_delivered + res.summary.packets_dropped + res.summary.packets_alive
    )


def test_the_dumbbell_shares_its_hosts_and_starts_flows_one_gap_apart() -> None:
    t = tree(topologies.dumbbell(250, hosts=100, start_gap_ms=1.0))
    assert sum(1 for v in t["nodes"].values() if v == "host") == 200
    flows = t["flows"]
    assert flows["f0"]["start"] == "0ns"
    assert flows["f249"]["start"] == "249000000ns"
    assert flows["f249"]["src"] == "s49"
    assert t["duration"] == "10.249s"
    # One bandwidth-delay product of 1,500-byte packets: 1 Gbit/s x 24 ms.
    assert t["links"]["bottleneck"]["queue"]["limit"] == 2000


def test_a_dumbbell_with_web_transfers_validates_and_runs() -> None:
    sc = topologies.dumbbell(2, duration="200ms", web_rate=200.0)
    res = ccsim.run(sc)
    assert (res.flows["kind"] == "tcp_transfer").sum() > 10


def test_bad_sizes_are_refused_with_the_parameter_named() -> None:
    with pytest.raises(ValueError, match="k must be an even number"):
        topologies.fat_tree(5)
    with pytest.raises(ValueError, match="n_flows"):
        topologies.dumbbell(-1)


# Campaign 12 (issue 32): a NaN or infinite number was "cannot convert float NaN to integer",
# a string "can only concatenate str (not "float") to str", naming no parameter; a rate of
# "infMbps" an OverflowError; `buffer_packets=0` quietly became one BDP; `long_flows=-1` made
# no flows.
@pytest.mark.parametrize(
    ("make", "error", "message"),
    [
        (lambda: topologies.dumbbell(1, delay_ms=float("nan")), ValueError, "delay_ms: nan is"),
        (lambda: topologies.dumbbell(1, access_delay_ms=float("inf")), ValueError,
         "access_delay_ms: inf is"),
        (lambda: topologies.dumbbell(2, start_gap_ms="1"), TypeError, "start_gap_ms: expected"),
        (lambda: topologies.dumbbell(1, web_rate=float("nan")), ValueError, "web_rate: nan"),
        (lambda: topologies.dumbbell(1, rate="infMbps"), ValueError, "rate: 'infMbps' is not"),
        (lambda: topologies.dumbbell(1, rate=10**9), TypeError, "rate: expected a rate"),
        (lambda: topologies.dumbbell(1, buffer_packets=0), ValueError, "buffer_packets must"),
        (lambda: topologies.dumbbell(2.5), TypeError, "n_flows: expected an integer"),
        (lambda: topologies.fat_tree(4, long_flows=-1), ValueError, "long_flows must be >= 0"),
        (lambda: topologies.fat_tree(4, delay_us=float("nan")), ValueError, "delay_us: nan"),
        (lambda: topologies.fat_tree(4.0), TypeError, "k: expected an integer"),
        (lambda: topologies.dumbbell(2, tcp=None), TypeError, "tcp: expected a table"),
        (lambda: topologies.fat_tree(4, tcp=[("sack", True)]), TypeError, "tcp: expected a table"),
        (lambda: topologies.dumbbell(2, web_rate=1.0, web_sizes="pareto"), TypeError,
         "web_sizes: expected a table"),
    ],
)  # fmt: skip
def test_a_generator_parameter_of_the_wrong_kind_is_refused_naming_it(
    make: object, error: type[Exception], message: str
) -> None:
    with pytest.raises(error) as caught:
        make()  # type: ignore[operator]
    assert str(caught.value).startswith(message)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: topologies.dumbbell(1, web_rate=-1), "web_rate must be >= 0 (0: none), not -1"),
        (lambda: topologies.fat_tree(2, web_rate=-0.5), "web_rate must be >= 0 (0: none)"),
        (lambda: topologies.dumbbell(1, duration=""), "duration: '' is no duration; give one"),
        (lambda: topologies.dumbbell(1, duration=0), "duration: 0 is no duration; give one"),
    ],
)  # fmt: skip
def test_a_negative_web_rate_or_an_empty_duration_is_refused_not_taken_for_the_default(
    make: object, message: str
) -> None:
    # Campaign 13: web_rate=-1 made no short transfers, as 0 does; duration="" or 0 ran for
    # the default duration (the `or` took them for "not given"); neither said a word.
    with pytest.raises(ValueError) as caught:
        make()  # type: ignore[operator]
    assert str(caught.value).startswith(message)


@pytest.mark.parametrize("name", ["long_flows", "web_hosts"])
def test_more_fat_tree_flows_than_hosts_are_refused_naming_the_parameter_and_the_maximum(
    name: str,
) -> None:
    # Campaign 13 noticed, campaign 16 confirmed: fat_tree(4, long_flows=100) made 16 long
    # flows (k = 4 has 16 hosts), web_hosts=100 16 web sources, without a word.
    with pytest.raises(ValueError) as caught:
        topologies.fat_tree(4, **{name: 17})  # type: ignore[arg-type]
    assert str(caught.value) == (
        f"{name}: 17 is more than the fat-tree's hosts (k = 4: at most 16, one per host)"
    )
    flows = tree(topologies.fat_tree(4, **{name: 16}))["flows"]  # type: ignore[arg-type]
    assert sum(f.startswith("long" if name == "long_flows" else "web") for f in flows) == 16


def test_a_huge_dumbbell_delay_is_refused_naming_the_delay_not_the_queue() -> None:
    with pytest.raises(ccsim.ScenarioError) as caught:
        topologies.dumbbell(1, delay_ms=1e300).validate()
    assert caught.value.path == "links.bottleneck.delay"


def test_every_scale_case_has_a_scenario_the_core_accepts() -> None:
    for name in ("F10", "FT4", "T15", "W10K", "H1000"):
        text, overrides = bench.scale_scenario(name)
        assert ccsim.Scenario.from_str(text).with_overrides(overrides).validate()


def test_the_host_pair_case_gives_every_flow_hosts_of_its_own() -> None:
    text, _ = bench.scale_scenario("H1000")
    tree = tomllib.loads(text)
    assert len(tree["nodes"]) == bench.SCALE["H1000"][1] == 2_002
    ends = [(f["src"], f["dst"]) for f in tree["flows"].values()]
    assert len(ends) == 1_000
    assert len({e for pair in ends for e in pair}) == 2_000
    assert tree["duration"] == "30s"


def test_the_scale_plot_has_a_panel_per_group_measured(tmp_path: Path) -> None:
    row = bench.BenchRow("F10", 1.0, 1.5, 100, 10, 5, 20.0, 0.0, 30)
    rows = [row, bench.BenchRow("F100", 2.0, 2.5, 200, 20, 5, 20.0, 0.0, 60)]
    rows.append(bench.BenchRow("FT4", 1.0, 1.2, 100, 10, 5, 20.0, 0.0, 60))
    out = bench.plot_scale(rows, tmp_path / "scale.png")
    assert out.read_bytes().startswith(b"\x89PNG")
    assert "hops/s" in bench.format_table(rows)
