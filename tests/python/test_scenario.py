# SPDX-License-Identifier: MIT
"""Scenario building, overrides and the documented error messages (docs/scenario.md)."""

from __future__ import annotations

import doctest

import pytest

import ccsim
import ccsim.cli
import ccsim.result
import ccsim.scenario


def test_a_scenario_built_from_a_dict_runs_like_its_toml(two_hosts: str) -> None:
    import tomllib

    tree = tomllib.loads(two_hosts)
    from_dict = ccsim.run(ccsim.Scenario.from_dict(tree), seed=3)
    from_text = ccsim.run(ccsim.Scenario.from_str(two_hosts), seed=3)
    assert from_dict.flows.equals(from_text.flows)


def test_from_dict_writes_toml_that_reads_back_as_the_same_tree(two_hosts: str) -> None:
    import tomllib

    tree = tomllib.loads(two_hosts)
    sc = ccsim.Scenario.from_dict(tree)
    assert tomllib.loads(sc.to_toml()) == tree
    # Units stay strings, for the core to parse.
    assert 'rate = "10Mbps"' in sc.to_toml()
    assert sc.validate() == ccsim.Scenario.from_str(two_hosts).validate()


def test_set_writes_tables_inline_and_later_overrides_win(two_hosts: str) -> None:
    import tomllib

    sc = (
        ccsim.Scenario.from_str(two_hosts)
        .set("links.bottleneck.queue", {"type": "droptail", "limit": 7})
        .set("links.bottleneck.queue.limit", 9)
    )
    assert sc.overrides == (
        'links.bottleneck.queue={ type = "droptail", limit = 7 }',
        "links.bottleneck.queue.limit=9",
    )
    queue = tomllib.loads(sc.validate())["links"]["bottleneck"]["queue"]
    assert queue == {"type": "droptail", "limit": 9}


def test_set_appends_overrides_that_change_the_run(two_hosts: str) -> None:
    sc = ccsim.Scenario.from_str(two_hosts)
    slower = sc.set("links.bottleneck.rate", "2Mbps")
    assert sc.overrides == ()
    assert slower.overrides == ('links.bottleneck.rate="2Mbps"',)
    fast = ccsim.run(sc).flows.loc[0, "completion_time_s"]
    slow = ccsim.run(slower).flows.loc[0, "completion_time_s"]
    # 500 KB cannot cross a 2 Mbit/s link in less than 2 s.
    assert slow >= 2.0 > fast


def test_the_seed_argument_replaces_the_scenarios_seed(two_hosts: str) -> None:
    res = ccsim.run(ccsim.Scenario.from_str(two_hosts), seed=42)
    assert res.summary is not None and res.summary.seed == 42
    assert "seed = 42" in res.resolved_toml


@pytest.mark.parametrize(
    ("override", "message"),
    [
        (
            'links.bottleneck.rate="10 Mbs"',
            'links.bottleneck.rate: "10 Mbs" is not a rate, e.g. "10Mbps"',
        ),
        (
            'flows.f1.variant="vegas"',
            'flows.f1.variant: "vegas" is not one of reno, newreno, sack',
        ),
        (
            "flows.f1.start=5",
            'flows.f1.start: expected a duration such as "1.5s" (units ns, us, ms, s, min), '
            "found integer 5",
        ),
        (
            'flows.f1.dst="h9"',
            'flows.f1.dst: no node named "h9"; nodes are h1, r1, h2',
        ),
        ("links.bottleneck.rat=1", "links.bottleneck.rat: unknown key; allowed: "),
    ],
)
def test_invalid_scenarios_raise_the_documented_message(
    two_hosts: str, override: str, message: str
) -> None:
    sc = ccsim.Scenario.from_str(two_hosts).with_overrides([override])
    with pytest.raises(ccsim.ScenarioError) as err:
        sc.validate()
    assert str(err.value).startswith(message)
    assert err.value.path == message.split(":")[0]


def test_a_flow_between_unconnected_hosts_is_rejected_before_the_run(two_hosts: str) -> None:
    text = two_hosts.replace('h2 = "host"', 'h2 = "host"\nh3 = "host"').replace(
        'dst = "h2"', 'dst = "h3"'
    )
    with pytest.raises(ccsim.ScenarioError, match="not connected"):
        ccsim.run(ccsim.Scenario.from_str(text))


def test_every_ccsim_error_is_a_ccsim_error() -> None:
    assert issubclass(ccsim.ScenarioError, ccsim.Error)
    assert issubclass(ccsim.SimulationError, ccsim.Error)
    assert issubclass(ccsim.Error, Exception)


def test_the_docstring_examples_hold() -> None:
    for module in (ccsim, ccsim.scenario, ccsim.result, ccsim.cli):
        assert doctest.testmod(module, raise_on_error=False).failed == 0, module.__name__


def test_overrides_given_as_one_string_or_not_strings_are_refused_naming_the_argument(
    two_hosts: str,
) -> None:
    # Campaign 8: overrides="duration=1s" was read character by character, and the run
    # failed with `--set "d": expected PATH=VALUE`, an override the caller never wrote.
    with pytest.raises(TypeError, match=r"^overrides: expected a list of PATH=VALUE strings, "
                                        r"not one string; write \['duration=1s'\]$"):  # fmt: skip
        ccsim.Scenario(two_hosts, overrides="duration=1s")
    sc = ccsim.Scenario.from_str(two_hosts)
    with pytest.raises(TypeError, match=r"^overrides: expected a list of PATH=VALUE strings"):
        sc.with_overrides("duration=1s")
    with pytest.raises(TypeError, match=r"^overrides: expected PATH=VALUE strings, found int 1$"):
        sc.with_overrides([1])  # type: ignore[list-item]
    with pytest.raises(TypeError, match=r"^path: expected dotted keys \(str\), not int$"):
        sc.set(1, 2)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^text: expected TOML text \(str\), not bytes$"):
        ccsim.Scenario.from_str(two_hosts.encode())  # type: ignore[arg-type]
    assert sc.with_overrides(["duration=1s"]).overrides == ("duration=1s",)
