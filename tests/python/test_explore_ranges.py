# SPDX-License-Identifier: MIT
"""The plan's ``explore`` key (ccsim.explore.ranges): a free range's values, and the one-line
errors naming the field when a plan declares one wrongly."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ccsim.experiment import load_plan
from ccsim.experiment.plan import PlanError
from ccsim.explore.ranges import Range, RangeError, parse_range

ROOT = Path(__file__).resolve().parents[2]


def test_a_range_writes_each_value_as_the_plan_writes_a_listed_one() -> None:
    percent = parse_range({"min": "0%", "max": "20%", "step": "0.5%"}, "x.explore", False)
    assert [percent.literal(v) for v in ("5%", 3.5, "0.035", "0.5%", "20%")] == [
        "0.05", "0.035", "0.035", "0.005", "0.2"]  # fmt: skip
    # 0.07 is 7.000000000000001 % in binary: snapped to the grid, written without the noise.
    assert percent.literal(0.07 * 100) == "0.07"
    seconds = parse_range({"min": "40s", "max": "500s", "step": "10s"}, "e", False)
    assert seconds.literal("120s") == '"120s"' and seconds.literal(120) == '"120s"'
    packets = parse_range({"min": 10, "max": 20000, "step": 10}, "e", False)
    assert packets.literal(1230) == "1230" and packets.literal("960") == "960"
    plain = parse_range({"min": 0.0, "max": 1.0, "step": 0.25}, "e", False)
    assert plain.literal(0.75) == "0.75"


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("21%", "'21%' is outside the range 0% to 20% in steps of 0.5%"),
        (-0.5, "-0.5 is outside the range"),
        ("3.3%", "'3.3%' is not on the range's grid: 0% to 20% in steps of 0.5%"),
        ("3ms", "'3ms' is not in %"),
        ("lots", "'lots' is not a value of the range 0% to 20% in steps of 0.5%"),
        (True, "true is not a value of the range"),
    ],
)
def test_a_value_off_its_range_its_grid_or_its_unit_is_refused_saying_what_is_allowed(
    value: object, message: str
) -> None:
    r = Range("x.explore", 0.0, 20.0, 0.5, "%")
    with pytest.raises(RangeError) as e:
        r.literal(value)
    assert str(e.value).startswith(message)


def plan_with(tmp_path: Path, paper: str, old: str, new: str) -> Path:
    """A copy of a paper's experiment folder with one edit of its plan.toml."""
    folder = tmp_path / paper
    shutil.copytree(ROOT / "experiments" / paper, folder)
    text = (folder / "plan.toml").read_text(encoding="utf-8")
    assert old in text
    (folder / "plan.toml").write_text(text.replace(old, new, 1), encoding="utf-8")
    return folder


P001_X = 'label = "packet loss rate (%)", scale = 100, explore = { min = "0%", max = "20%", step = "0.5%" } }'  # noqa: E501
P002_RANGE = '"links.bottleneck.queue.limit" = { min = 10, max = 20000, step = 10 }'
P002_LINE = 'explore = { "flows.f1.cc.alpha" = { min = 1, max = 1000, step = 1, also = ["flows.f2.cc.alpha", "flows.f3.cc.alpha", "flows.f4.cc.alpha"] } }'  # noqa: E501


@pytest.mark.parametrize(
    ("paper", "old", "new", "message"),
    [
        ("p001-spack", P001_X, P001_X.replace('min = "0%"', 'min = "30%"'),
         "figures[0].x.explore: min must be below max"),
        ("p001-spack", P001_X, P001_X.replace('step = "0.5%"', 'step = "0.5ms"'),
         "figures[0].x.explore: min, max and step must have one unit; found min %, max %, step ms"),
        ("p001-spack", P001_X, P001_X.replace('step = "0.5%"', 'step = "0%"'),
         "figures[0].x.explore.step: must be > 0 and at most max - min"),
        ("p001-spack", P001_X, P001_X.replace('step = "0.5%"', 'stride = "0.5%"'),
         "figures[0].x.explore.stride: unknown key; allowed: max, min, step"),
        ("p001-spack", P001_X, P001_X.replace('max = "20%"', 'max = "twenty"'),
         "figures[0].x.explore.max: 'twenty' is not a number or a number with a unit"),
        # Campaign 12 (issue 32): a subnormal step was taken as any other; a scale of
        # 1e-320 was "internal error (ZeroDivisionError)", 0 and nan drew every point at 0 or
        # nowhere.
        ("p001-spack", P001_X, P001_X.replace('step = "0.5%"', 'step = "1e-320%"'),
         "figures[0].x.explore.step: '1e-320%' is subnormal"),
        ("p002-highspeed", P002_RANGE, P002_RANGE.replace("min = 10,", "min = 5e-324,"),
         'explore."links.bottleneck.queue.limit".min: 5e-324 is subnormal'),
        ("p001-spack", P001_X, P001_X.replace("scale = 100", "scale = 1e-320"),
         "figures[0].x.scale: 1e-320 is not a finite number other than 0"),
        ("p001-spack", P001_X, P001_X.replace("scale = 100", "scale = 0"),
         "figures[0].x.scale: 0.0 is not a finite number other than 0"),
        ("p001-spack", P001_X, P001_X.replace("scale = 100", "scale = nan"),
         "figures[0].x.scale: nan is not a finite number other than 0"),
        ("p002-highspeed", P002_RANGE, P002_RANGE.replace("step = 10", "step = -10"),
         'explore."links.bottleneck.queue.limit".step: must be > 0 and at most max - min'),
        ("p002-highspeed", P002_RANGE, '"links.bottleneck.delay" = { min = 1, max = 2, step = 1 }',
         'explore."links.bottleneck.delay": not a key the plan sets'),
        ("p002-highspeed", P002_LINE, P002_LINE.replace('"flows.f4.cc.alpha"]', '"flows.f5.cc"]'),
         'lines.fast_a20.explore."flows.f1.cc.alpha": "flows.f5.cc" is not a key line fast_a20 '
         "sets"),
        ("p002-highspeed", P002_LINE, P002_LINE.replace("also", "with"),
         'lines.fast_a20.explore."flows.f1.cc.alpha".with: unknown key; allowed: also, max, min'),
    ],
)  # fmt: skip
def test_a_malformed_range_in_a_plan_is_refused_naming_its_field(
    tmp_path: Path, paper: str, old: str, new: str, message: str
) -> None:
    with pytest.raises(PlanError) as e:
        load_plan(plan_with(tmp_path, paper, old, new))
    assert str(e.value).startswith(message), str(e.value)


def test_a_range_in_a_unit_its_key_does_not_take_is_refused_when_the_explorer_starts(
    tmp_path: Path,
) -> None:
    pytest.importorskip("starlette", reason="ccsim explore needs the extra `explore`")
    from ccsim.explore import Catalog

    old = '"duration" = { min = "40s", max = "500s", step = "10s" }'
    plan_with(tmp_path, "p002-highspeed", old, old.replace('s"', 'pkt"'))
    with pytest.raises(PlanError, match=r'p002-highspeed/plan.toml: explore\."duration": '):
        Catalog(tmp_path)
