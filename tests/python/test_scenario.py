# SPDX-License-Identifier: MIT
"""Scenario building, overrides and the documented error messages (docs/scenario.md)."""

from __future__ import annotations

import doctest
import os
import re
from pathlib import Path
from typing import Any

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


def test_overrides_that_are_no_list_at_all_are_refused_naming_the_argument(
    two_hosts: str,
) -> None:
    # Campaign 10: with_overrides(None) was "'NoneType' object is not iterable".
    sc = ccsim.Scenario.from_str(two_hosts)
    with pytest.raises(TypeError, match=r"^overrides: expected a list of PATH=VALUE strings, "
                                        r"not NoneType$"):  # fmt: skip
        sc.with_overrides(None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^overrides: .* not int$"):
        ccsim.run(sc, overrides=3)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("tree", "error", "message"),
    [
        (None, TypeError, "tree: expected the scenario's tables as a dict, not NoneType"),
        ([], TypeError, "tree: expected the scenario's tables as a dict, not list"),
        ({1: 2}, TypeError, "tree: key 1 is not a string (TOML keys are strings)"),
        ({"nodes": {"a": {2: "x"}}}, TypeError,
         "nodes.a: key 2 is not a string (TOML keys are strings)"),
        ({"duration": {1, 2}}, TypeError, "duration: cannot use a set as a scenario value"),
        ({"links": {"l": {"rate": b"1Mbps"}}}, TypeError,
         "links.l.rate: cannot use a bytes as a scenario value"),
        ({"seed": 10**30}, ValueError,
         'seed: 1000000000000000000000000000000 is out of range; an integer is from -2^63 to '
         '2^63 - 1 (TOML 1.0, "Integer": 64 bit)'),
        ({"x": [1, -(2**63) - 1]}, ValueError,
         f'x[1]: {-(2**63) - 1} is out of range; an integer is from -2^63 to 2^63 - 1 '
         '(TOML 1.0, "Integer": 64 bit)'),
        # Campaign 38: past Python's 4300 digits the message itself failed ("Exceeds the limit
        # (4300 digits) for integer string conversion"), naming no key.
        ({"links": {"l": {"rate": -(10**5000)}}}, ValueError,
         'links.l.rate: a negative integer of 16610 bits is out of range; an integer is from '
         '-2^63 to 2^63 - 1 (TOML 1.0, "Integer": 64 bit)'),
    ],
)  # fmt: skip
def test_from_dict_refuses_what_toml_cannot_hold_naming_the_key(
    tree: object, error: type[Exception], message: str
) -> None:
    # Campaign 10: None was "'NoneType' object is not iterable", a list was taken, a set was
    # "Object of type 'set' is not TOML serializable", and a seed of 10**30 "TOML syntax error
    # at line 2, column 8" of a text the caller never wrote: none said which key.
    with pytest.raises(error) as raised:
        ccsim.Scenario.from_dict(tree)  # type: ignore[arg-type]
    assert str(raised.value) == message


def test_from_dict_takes_numpy_numbers_as_their_python_values(two_hosts: str) -> None:
    import numpy as np
    import tomllib

    tree = tomllib.loads(two_hosts)
    tree["seed"] = np.int64(4)
    tree["duration"] = "1s"
    assert "seed = 4" in ccsim.Scenario.from_dict(tree).to_toml()


def test_an_integer_beyond_64_bits_set_from_python_is_out_of_range_naming_the_key(
    two_hosts: str,
) -> None:
    # Campaign 10: it was "seed: expected an integer, found string "1000...""; a queue limit
    # "has no unit; write 99999999999999999999 for packets", the same number again.
    sc = ccsim.Scenario.from_str(two_hosts).set("seed", 10**30)
    out_of_range = (
        r"^seed: 1000000000000000000000000000000 is out of range; an integer is from -2\^63"
    )
    with pytest.raises(ccsim.ScenarioError, match=out_of_range):
        sc.validate()


# Campaign 12 (issue 32): b"10Mbps" is a sequence of ints and became the TOML array [49, 48,
# ...], refused at validation as "expected a rate, found array".
# A memoryview of bytes did too (noticed in campaign 20).
@pytest.mark.parametrize("value", [b"10Mbps", bytearray(b"10Mbps"), memoryview(b"10Mbps")])
def test_set_refuses_bytes_rather_than_write_them_as_an_array_of_numbers(
    two_hosts: str, value: object
) -> None:
    sc = ccsim.Scenario.from_str(two_hosts)
    with pytest.raises(TypeError, match=f"cannot use a {type(value).__name__} as a scenario"):
        sc.set("links.bottleneck.rate", value)


# Campaign 12: a lone surrogate (text read with errors="surrogateescape") was a bare
# UnicodeEncodeError from the core's call, only when the scenario was validated or run.
@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda t: ccsim.Scenario.from_str(t + "# \udc80\n"),
         "text: U+DC80 at line "),
        # set() names its own parameter (issue 32's API contract test), as "overrides" before.
        (lambda t: ccsim.Scenario.from_str(t).set("flows.f.src", "h\ud800"),
         "value: U+D800 is a lone surrogate"),
        (lambda t: ccsim.Scenario.from_dict({"duration": "1s", "nodes": {"\udcff": "host"}}),
         "nodes: U+DCFF is a lone surrogate"),
    ],
)  # fmt: skip
def test_a_lone_surrogate_is_refused_when_the_scenario_is_made_naming_where(
    two_hosts: str, make: Any, message: str
) -> None:
    with pytest.raises(ValueError) as caught:
        make(two_hosts)
    assert str(caught.value).startswith(message)


@pytest.mark.parametrize("source", [5, None, b"file.toml"])
def test_a_scenarios_source_that_is_not_text_is_refused_naming_the_parameter(
    two_hosts: str, source: Any
) -> None:
    # `source` names the text in every message; a number was taken and printed as "5: ..."
    # (campaign 12, issue 32).
    with pytest.raises(TypeError, match=r"^source: expected a name for messages"):
        ccsim.Scenario(two_hosts, source=source)
    assert ccsim.Scenario(two_hosts, source="mine.toml").validate()


def test_from_toml_reads_a_fifo_as_a_stream_as_a_shells_process_substitution_gives(
    tmp_path: Path, two_hosts: str
) -> None:
    # `ccsim run <(generate)` hands ccsim a FIFO; it is read to its writer's end, as `cat`
    # would, rather than refused as not a regular file.
    import threading

    fifo = tmp_path / "scenario.fifo"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_text(two_hosts, encoding="utf-8"))
    writer.start()
    try:
        sc = ccsim.Scenario.from_toml(fifo)
    finally:
        writer.join()
    assert sc.to_toml() == ccsim.Scenario.from_str(two_hosts).to_toml()


def test_a_scenario_in_toml_1_1_is_read_and_its_resolved_copy_is_toml_1_0(two_hosts: str) -> None:
    # The core's reader (toml 0.9) takes TOML 1.1: an inline table over several lines with a
    # trailing comma. What it writes back must stay TOML 1.0, which Python's tomllib (3.11)
    # reads: every run's scenario.toml and the plans' resolved scenarios go through it.
    import tomllib

    one_line = 'queue = { type = "droptail", limit = 50 }'
    assert one_line in two_hosts
    text = two_hosts.replace(one_line, 'queue = {\n  type = "droptail",\n  limit = 70,\n}')
    with pytest.raises(tomllib.TOMLDecodeError):
        tomllib.loads(text)
    resolved = ccsim.Scenario.from_str(text).validate()
    assert tomllib.loads(resolved)["links"]["bottleneck"]["queue"] == {"type": "droptail",
                                                                      "limit": 70}  # fmt: skip


def test_a_zero_dimensional_numpy_array_is_its_scalar_and_a_value_toml_cannot_hold_names_the_path(
    two_hosts: str,
) -> None:
    # Campaign 19 (issue 32): `sc.set("flows.f1.mss", np.array(1000))` (a 0-d array, what
    # `np.median` and many reductions give) was "iteration over a 0-d array", and a date or a
    # timedelta "cannot use a date as a scenario value", naming no path.
    import datetime

    import numpy as np

    sc = ccsim.Scenario.from_str(two_hosts)
    assert sc.set("flows.f1.mss", np.array(1000)).overrides == ("flows.f1.mss=1000",)
    assert ccsim.scenario.format_value(np.array(0.5)) == "0.5"
    with pytest.raises(TypeError, match=r"^duration: cannot use a timedelta as a scenario value"):
        sc.set("duration", datetime.timedelta(seconds=1))
    tree = {"seed": np.array(4), "duration": "1s"}
    assert "seed = 4" in ccsim.Scenario.from_dict(tree).to_toml()


@pytest.mark.parametrize("path", ["a..b", "", ".duration", "duration.", "a b", "nodes.h1 x"])
def test_set_refuses_a_path_that_is_not_a_key_path_when_called_naming_path_not_set(
    two_hosts: str, path: str
) -> None:
    # It was taken, then refused at validate() as `--set "a..b=1"`, an option a Python caller
    # never wrote (noticed in campaign 24, issue 32).
    sc = ccsim.Scenario.from_str(two_hosts)
    with pytest.raises(ValueError, match=rf"^path: {re.escape(repr(path))} is not a key path"):
        sc.set(path, 1)
    assert sc.set('nodes."h1".type', "host").overrides == ('nodes."h1".type="host"',)


def test_a_seed_too_long_for_python_to_write_is_refused_naming_seed(examples: Path) -> None:
    # Campaign 38 (issue 32): ccsim.run(..., seed=10**5000) raised Python's "Exceeds the limit
    # (4300 digits) for integer string conversion" from the message meant to name the seed.
    with pytest.raises(ccsim.ScenarioError) as raised:
        ccsim.run(examples / "random-loss.toml", seed=10**5000)
    assert str(raised.value) == (
        "seed: an integer of 16610 bits is out of range; a seed is an integer from 0 to 2^63 - 1"
    )
