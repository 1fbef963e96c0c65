# SPDX-License-Identifier: MIT
"""Every refused override names the option the user wrote it with.

The same ``PATH=VALUE`` reaches the core from ``run --set``, ``validate --set``, ``sweep --set``
and ``sweep --param``. The core wrote ``--set "duration.x=1"`` in its errors whatever the
option, so a sweep's ``--param duration.x=1,2`` was refused naming an option the user never gave
(campaign 21, issue 32). This matrix crosses kinds of bad override with the four ways to give
one. Each cell must be refused in one ``ccsim: error:`` line that names the path, names the
option given when it names one, never names the other option, and leaves no output folder.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ccsim.cli import main

#: Kinds of bad override, as (name, PATH, a bad VALUE, what the error says about it).
BAD = [
    ("through a value that is not a table", "duration.x", "1", "not a table"),
    ("inside a flow that does not exist", "flows.nosuch.mss", "1000", 'no flow named "nosuch"'),
    ("inside a link that does not exist", "links.nosuch.rate", "1Mbps", 'no link named "nosuch"'),
    ("inside a node that does not exist", "nodes.nosuch.type", "host", 'no node named "nosuch"'),
    ("a path with an empty key", "links..rate", "1", "is not a key path"),
    ("an unknown key", "flows.f1.nosuch", "1", "unknown key"),
    ("a value out of the key's range", "flows.f1.mss", "-5", "flows.f1.mss"),
    ("an integer past 64 bits", "flows.f1.mss", "99999999999999999999", "out of range"),
]

#: The ways to give one override, as (name, the option it names, the other option).
WAYS = [
    ("run --set", "--set", "--param"),
    ("validate --set", "--set", "--param"),
    ("sweep --set", "--set", "--param"),
    ("sweep --param", "--param", "--set"),
]


def argv_of(way: str, scenario: str, out: str, path: str, value: str) -> list[str]:
    """The command line giving ``path=value`` the way ``way`` says."""
    if way == "run --set":
        return ["run", scenario, "--set", f"{path}={value}", "--out", out]
    if way == "validate --set":
        return ["validate", scenario, "--set", f"{path}={value}"]
    if way == "sweep --set":
        return ["sweep", scenario, "--set", f"{path}={value}",
                "--param", "trace.interval=100ms,200ms", "--out", out]  # fmt: skip
    assert way == "sweep --param", way
    return ["sweep", scenario, "--param", f"{path}={value},{value}0", "--out", out]


@pytest.mark.parametrize(("kind", "path", "value", "says"), BAD, ids=[b[0] for b in BAD])
@pytest.mark.parametrize(("way", "option", "other"), WAYS, ids=[w[0] for w in WAYS])
def test_a_refused_override_names_the_option_it_was_given_with_and_never_the_other(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    two_hosts: str,
    kind: str,
    path: str,
    value: str,
    says: str,
    way: str,
    option: str,
    other: str,
) -> None:
    scenario = tmp_path / "s.toml"
    scenario.write_text(two_hosts)
    out = tmp_path / "out"
    assert main(argv_of(way, str(scenario), str(out), path, value)) == 1
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("ccsim: error: "), captured.err
    message = lines[0]
    assert says in message, message
    assert path.split(".")[0] in message, message
    assert other not in message, f"{way}, {kind}: names {other}: {message}"
    # A message about the override itself (not about the value the scenario then holds) names
    # how it was given.
    if option in message or "--set" in message or "--param" in message:
        assert option in message, message
    assert not out.exists(), f"{way}, {kind}: left {sorted(p.name for p in out.iterdir())}"


def test_the_overrides_that_name_an_option_name_it_in_every_way_they_can_be_given(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], two_hosts: str
) -> None:
    # The conditional above must not let the matrix pass with no option named anywhere: these
    # kinds are about the override itself, and each way names its own option for them.
    scenario = tmp_path / "s.toml"
    scenario.write_text(two_hosts)
    named = {"through a value that is not a table", "inside a flow that does not exist",
             "a path with an empty key"}  # fmt: skip
    for kind, path, value, _ in BAD:
        if kind not in named:
            continue
        for way, option, _ in WAYS:
            assert main(argv_of(way, str(scenario), str(tmp_path / "out"), path, value)) == 1
            err = capsys.readouterr().err
            assert option in err, f"{way}, {kind}: {err}"
