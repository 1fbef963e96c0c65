# SPDX-License-Identifier: MIT
"""Mutated plan files (issue 10, fuzzing): reading and checking a damaged plan gives a clean
error that names what is wrong, never an internal exception.

Each paper's plan.toml is mutated by a fixed-seed generator (delete, duplicate or swap lines,
replace a value with junk, truncate); every mutant is read with ``load_plan``, and those that
still read are checked with ``check_plan`` (which builds probe runs, so only a slice of them).
A wider run (1,500 mutants per plan, 60 checked) gave only clean errors: p001 1,279 refused when
read, 2 when checked, 58 checked; p002 1,355, 1 and 59. It first found a float where a list of
lines belongs (TypeError) and an assumption without text (KeyError), now named errors."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest

from ccsim import ScenarioError, experiment

ROOT = Path(__file__).resolve().parents[2]
PLANS = sorted((ROOT / "experiments").glob("*/plan.toml"))
MUTANTS_PER_PLAN = 300
CHECKED_PER_PLAN = 8

JUNK = [
    '""',
    '"x"',
    "-1",
    "0",
    "1e308",
    "-1e308",
    "nan",
    "inf",
    "true",
    "[]",
    "{}",
    "[1, 2]",
    "{ a = 1 }",
    '"../../etc/passwd"',
    '"lines.reno"',
    "9223372036854775807",
    '"\u00e9\u00e9"',
    "=",
    "[[",
    '"unterminated',
]


def mutate(text: str, rng: random.Random) -> str:
    lines = text.splitlines()
    if not lines:
        return text
    i = rng.randrange(len(lines))
    kind = rng.randrange(5)
    if kind == 0:
        del lines[i]
    elif kind == 1:
        lines.insert(i, lines[i])
    elif kind == 2:
        j = rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
    elif kind == 3 and "=" in lines[i]:
        key = lines[i].split("=", 1)[0]
        lines[i] = f"{key}= {rng.choice(JUNK)}"
    else:
        return "\n".join(lines)[: rng.randrange(len(text) + 1)]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("plan", PLANS, ids=[p.parent.name for p in PLANS])
def test_a_mutated_plan_gives_a_clean_error_or_a_plan_that_checks(
    plan: Path, tmp_path: Path
) -> None:
    rng = random.Random(f"plan-fuzz/{plan.parent.name}")
    text = plan.read_text(encoding="utf-8")
    outcomes = {"refused when read": 0, "refused when checked": 0, "checked": 0}
    checked = 0
    for n in range(MUTANTS_PER_PLAN):
        folder = tmp_path / f"m{n}"
        shutil.copytree(plan.parent, folder)
        mutant = text
        for _ in range(rng.randrange(1, 4)):
            mutant = mutate(mutant, rng)
        (folder / "plan.toml").write_text(mutant, encoding="utf-8")
        try:
            loaded = experiment.load_plan(folder)
        except (experiment.PlanError, ScenarioError) as e:
            assert str(e).strip(), f"mutant {n}: an empty message\n{mutant}"
            outcomes["refused when read"] += 1
            continue
        if checked >= CHECKED_PER_PLAN:
            continue
        checked += 1
        try:
            experiment.check_plan(loaded, quick=True)
        except (experiment.PlanError, ScenarioError) as e:
            assert str(e).strip(), f"mutant {n}: an empty message\n{mutant}"
            outcomes["refused when checked"] += 1
        else:
            outcomes["checked"] += 1
    print(plan.parent.name, outcomes)
    assert outcomes["refused when read"] > MUTANTS_PER_PLAN // 4, outcomes
