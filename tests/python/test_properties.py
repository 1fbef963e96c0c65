# SPDX-License-Identifier: MIT
"""Properties checked over many generated inputs (hypothesis)."""

from __future__ import annotations

import math
import sys
from typing import Any

import numpy as np
import pytest
import tomllib
from conftest import TWO_HOSTS
from hypothesis import assume, given
from hypothesis import strategies as st

import ccsim
from ccsim import models
from ccsim.scenario import format_value

I64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)
SCALARS = st.one_of(st.booleans(), I64, st.floats(allow_nan=False), st.text())
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


@given(VALUES)
def test_a_formatted_value_reads_back_as_the_same_toml_value(value: Any) -> None:
    text = format_value(value)
    assert "\n" not in text
    assert tomllib.loads(f"v = {text}")["v"] == value


def test_nan_and_numpy_scalars_format_as_toml_numbers() -> None:
    assert math.isnan(tomllib.loads(f"v = {format_value(float('nan'))}")["v"])
    assert format_value(np.float64(0.25)) == "0.25"
    assert format_value(np.int64(7)) == "7"
    assert format_value(np.array([1, 2])) == "[1, 2]"


# Subnormal numbers are refused by the core wherever it reads a number (issue 32: they mean
# nothing as a parameter and slow a run many times over); every other rate comes back exactly.
@given(st.floats(min_value=0.0, max_value=1.0, allow_subnormal=False))
def test_the_core_reads_every_loss_rate_python_writes_exactly(rate: float) -> None:
    sc = ccsim.Scenario.from_str(TWO_HOSTS).set(
        "links.bottleneck.loss", {"type": "uniform", "rate": rate}
    )
    resolved = tomllib.loads(sc.validate())
    assert resolved["links"]["bottleneck"]["loss"]["rate"] == rate


@given(st.floats(min_value=4.9e-324, max_value=2.2e-308, allow_subnormal=True))
def test_a_subnormal_loss_rate_is_refused_naming_the_field(rate: float) -> None:
    assume(0 < rate < sys.float_info.min)
    sc = ccsim.Scenario.from_str(TWO_HOSTS).set(
        "links.bottleneck.loss", {"type": "uniform", "rate": rate}
    )
    with pytest.raises(ccsim.ScenarioError, match=r"links\.bottleneck\.loss\.rate: .*subnormal"):
        sc.validate()


@given(
    st.floats(min_value=1e-4, max_value=0.2),
    st.floats(min_value=1e-3, max_value=1.0),
    st.floats(min_value=0.2, max_value=4.0),
    st.sampled_from([1, 2]),
)
def test_model_throughput_falls_with_loss_and_never_exceeds_the_window(
    p: float, rtt: float, t0: float, b: int
) -> None:
    full = models.padhye(1, rtt, p, t0, b=b)
    assert models.padhye(1, rtt, p * 1.5, t0, b=b) < full
    assert models.padhye(1, rtt * 1.5, p, t0, b=b) < full
    assert models.padhye(1, rtt, p, t0 * 1.5, b=b) <= full
    for wmax in (2.0, 10.0, 100.0):
        assert models.padhye(1, rtt, p, t0, b=b, wmax=wmax) <= wmax / rtt * (1 + 1e-12)
        assert models.padhye_approx(1, rtt, p, t0, b=b, wmax=wmax) <= wmax / rtt * (1 + 1e-12)
    # Vectorised calls give the scalar answers.
    ps = np.array([p, p * 2])
    assert np.allclose(
        models.padhye(1, rtt, ps, t0, b=b), [full, models.padhye(1, rtt, 2 * p, t0, b=b)]
    )
