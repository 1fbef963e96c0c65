# SPDX-License-Identifier: MIT
"""Dask's own settings, as a matrix: every leaf of Dask's configuration (its defaults, as
``dask.config.defaults`` holds them: 183 leaves with the pinned Dask) set through its
``DASK_*`` variable to a text Dask cannot read as that leaf's kind ("abc"), to an empty text,
to -1 and 0, and (campaign 53) to the other kinds Dask's reading of a variable or a YAML file
gives (None, a list, True, 1e400: infinity), and each of its 65 sections to a text where Dask
has a mapping, under ``ccsim sweep --executor dask`` against a scheduler with one worker.

The settings matrix (test_environment_settings.py) cannot see these: Dask reads its variables by
walking the environment for the prefix, asking for no name. Stop 58 of issue 32 walked them
all by hand and found six kinds of failure: a leaf Dask reads as the client starts named by
no setting, with a traceback of the half-made client 10 s later ("an integer is required");
"internal error (TypeError)" and "(IndexError)" for a number or an empty duration read late;
Dask's own refusal of a tcp:// address under require-encryption; an event loop it does not
know, with a warning of a coroutine never awaited; a security loader that cannot be imported.

Each cell must end as a user can act on: the sweep's two runs made (status 0; a warning of
Dask's about the setting's effect may come, as docs/environments.md allows), or one line
``ccsim: error: ...`` with status 1, never an internal error, a traceback or a wait past
the connect timeout. By default a pinned cell and a fixed draw of two more (about 2 s each,
in a child: Dask reads its variables as it loads); ``CCSIM_DASK_CELLS=all`` runs all 1,529
(about 35 min on two loaded cores), ``CCSIM_DASK_SEED`` draws others, and
``CCSIM_DASK_VALUES="None []"`` (values apart by spaces) walks some values only.

Campaign 53's walk of the four new values (797 cells with the sections) found a list or a
mapping for one value, and null for a size or a count, said as internal errors, and a sweep
waiting forever with retry.count null: test_dask.py pins each.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip(
    "distributed",
    reason="Dask's distributed scheduler is not installed (scripts/test installs it)",
)

import dask  # after the skip: distributed brings it
from conftest import dask_scheduler_in_a_process

ALL = os.environ.get("CCSIM_DASK_CELLS") == "all"
#: Each read by Dask with ast.literal_eval: a text, an empty text, numbers, and (campaign 53)
#: the other kinds a YAML file or a variable can give a leaf: null, a list, a boolean, and a
#: float's infinity.
VALUES = ("abc", "", "-1", "0", "None", "[]", "True", "1e400")
if os.environ.get("CCSIM_DASK_VALUES"):  # a walk of some values only, by hand
    VALUES = tuple(os.environ["CCSIM_DASK_VALUES"].split(" "))
#: Run whatever is drawn: it failed once, and only there (an empty duration, stop 58).
PINNED = [("distributed.comm.timeouts.connect", "")]
DRAWN = 2


def _keys() -> tuple[list[str], list[str]]:
    """Every leaf of Dask's default configuration, and every section above leaves, as dotted
    keys."""
    leaves: list[str] = []
    sections: list[str] = []
    stack: list[tuple[str, object]] = [("", dask.config.merge(*dask.config.defaults))]
    while stack:
        where, value = stack.pop()
        if isinstance(value, dict) and value:
            sections.append(where)
            stack.extend((f"{where}.{k}" if where else str(k), v) for k, v in value.items())
        elif where:
            leaves.append(where)
    return sorted(leaves), sorted(s for s in sections if s)


def _cells() -> list[tuple[str, str]]:
    leaves, sections = _keys()
    # A section set to a text (DASK_DISTRIBUTED__COMM=abc) stands where Dask has a mapping.
    every = [(leaf, value) for leaf in leaves for value in VALUES]
    every += [(section, "abc") for section in sections]
    if ALL:
        return every
    # A fixed draw by default, as the other matrices': the suite's run is the same cells
    # every time (a cell failing must fail again); other seeds draw others.
    seed = int(os.environ.get("CCSIM_DASK_SEED") or 58)
    others = [c for c in every if c not in PINNED]
    return PINNED + random.Random(seed).sample(others, DRAWN)


def _variable(leaf: str) -> str:
    """Dask's variable for a leaf: DASK_ and the keys upper-cased, "__" between them (Dask
    takes "_" for "-")."""
    return "DASK_" + "__".join(k.upper().replace("-", "_") for k in leaf.split("."))


@pytest.fixture(scope="module")
def scheduler_with_a_worker() -> Iterator[str]:
    """A scheduler and one worker in a process of their own: the settings tried are the
    client's alone."""
    with dask_scheduler_in_a_process(workers=1) as address:
        yield address


@pytest.mark.parametrize(("leaf", "value"), _cells())
def test_a_dask_setting_of_any_kind_ends_the_sweep_made_or_in_one_line(
    leaf: str, value: str, scheduler_with_a_worker: str, tmp_path: Path, examples: Path
) -> None:
    name = _variable(leaf)
    env = {k: v for k, v in os.environ.items() if not k.startswith("DASK_")}
    env[name] = value
    out = tmp_path / "o"
    argv = [sys.executable, "-m", "ccsim", "sweep", str(examples / "dumbbell.toml"), "--param",
            "duration=100ms,200ms", "--out", str(out), "--executor", "dask", "--scheduler",
            scheduler_with_a_worker]  # fmt: skip
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=90, env=env,
                          cwd=tmp_path)  # fmt: skip
    lines = proc.stderr.splitlines()
    said = f"{name}={value!r}: status {proc.returncode}, stderr {proc.stderr!r}"
    assert "internal error" not in proc.stderr and "Traceback" not in proc.stderr, said
    if proc.returncode == 0:
        assert all(line.startswith("ccsim: warning: ") for line in lines), said
        assert (out / "flows.parquet").exists(), said
    else:
        assert proc.returncode == 1, said
        assert len(lines) == 1 and lines[0].startswith("ccsim: error: "), said
        assert not out.exists(), said
