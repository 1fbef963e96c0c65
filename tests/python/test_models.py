# SPDX-License-Identifier: MIT
"""The throughput models against worked values of their formulas (Mathis 1997, Padhye 1998)."""

from __future__ import annotations

import doctest
import math
from typing import Any

import numpy as np
import pandas as pd
import pytest

from ccsim import models


def test_the_mathis_constants_are_those_of_the_periodic_loss_derivation() -> None:
    assert models.mathis_constant(1) == pytest.approx(1.2247, abs=1e-3)
    assert models.mathis_constant(2) == pytest.approx(0.8660, abs=1e-3)


@pytest.mark.parametrize(
    ("p", "b", "full", "approx", "mathis"),
    [
        (0.001, 1, 376.6, 378.8, 387.3),
        (0.001, 2, 265.6, 267.8, 273.9),
        (0.01, 1, 98.8, 99.9, 122.5),
        (0.01, 2, 69.5, 70.7, 86.6),
        (0.05, 2, 18.6, 17.5, 38.7),
        (0.1, 2, 9.11, 6.90, 27.4),
    ],
)
def test_the_models_reproduce_the_reference_table(
    p: float, b: int, full: float, approx: float, mathis: float
) -> None:
    # RTT 0.1 s, T0 1 s, Wmax infinite; packets per second (MSS = 1 byte).
    assert models.padhye(1, 0.1, p, 1.0, b=b) == pytest.approx(full, rel=0.01)
    assert models.padhye_approx(1, 0.1, p, 1.0, b=b) == pytest.approx(approx, rel=0.01)
    assert models.mathis(1, 0.1, p, b=b) == pytest.approx(mathis, rel=0.01)


def test_the_receiver_window_limits_the_full_model() -> None:
    assert models.padhye(1, 0.1, 0.001, 1.0, b=2, wmax=20) == pytest.approx(174.2, rel=0.005)
    assert models.padhye(1, 0.1, 0.001, 1.0, b=2, wmax=20) < 20 / 0.1


def test_mathis_and_padhye_agree_at_low_loss_and_diverge_at_high_loss() -> None:
    low = models.mathis(1, 0.1, 1e-3) / models.padhye(1, 0.1, 1e-3, 1.0)
    assert abs(low - 1) < 0.04
    assert models.mathis(1, 0.1, 0.1, b=2) >= 3 * models.padhye(1, 0.1, 0.1, 1.0, b=2)


def test_throughput_falls_as_loss_rtt_and_timeout_grow() -> None:
    p = np.array([1e-4, 1e-3, 1e-2, 5e-2])
    b = models.padhye(1000, 0.1, p, 1.0)
    assert np.all(np.diff(b) < 0)
    assert models.padhye(1000, 0.2, 0.01, 1.0) < models.padhye(1000, 0.1, 0.01, 1.0)
    assert models.padhye(1000, 0.1, 0.01, 2.0) < models.padhye(1000, 0.1, 0.01, 1.0)


def test_the_docstring_examples_hold() -> None:
    assert doctest.testmod(models, raise_on_error=False).failed == 0


@pytest.mark.parametrize(
    ("rtt", "p", "delayed", "expected"),
    [
        # C * B / (R sqrt p), B = 1000 B: 0.866 with delayed ACKs, 1.2247 without.
        (0.1, 0.01, True, 86_602.5),
        (0.1, 0.01, False, 122_474.5),
        (0.05, 1e-4, True, 1_732_050.8),
        (0.2, 0.04, False, 30_618.6),
        # No loss seen: the paper's p = 1e-6.
        (0.1, 0.0, True, 8_660_254.0),
    ],
)
def test_paper_003s_bound_matches_tabulated_values(
    rtt: float, p: float, delayed: bool, expected: float
) -> None:
    got = models.sqrt_bound(1000, rtt, p, delayed_acks=delayed)
    assert got == pytest.approx(expected, rel=1e-6)


def test_paper_003s_bound_broadcasts_and_replaces_only_zero_loss() -> None:
    got = models.sqrt_bound(1000, np.array([0.1, 0.1]), np.array([0.0, 1e-6]))
    assert got[0] == pytest.approx(got[1])
    assert models.sqrt_bound(1000, 0.1, 0.0, p_when_no_loss=1e-4) == pytest.approx(866_025.4)


def test_a_masked_array_with_masked_entries_is_refused_not_computed_as_numbers() -> None:
    # The masked entries were computed like the others: a loss rate masked out as a failed
    # run's came back as a throughput (noticed in campaign 19, issue 32).
    p = np.ma.array([0.01, 0.5, 0.02], mask=[False, True, False])
    with pytest.raises(TypeError, match=r"^p: a masked array with masked entries; .*compressed"):
        models.mathis(1460, 0.1, p)
    with pytest.raises(TypeError, match=r"^rtt_s: a masked array"):
        models.padhye(1460, np.ma.masked_less([0.1, -1.0], 0), 0.01, 1.0)
    unmasked = models.mathis(1460, 0.1, np.ma.array([0.01, 0.02]))  # nothing masked: as numbers
    assert np.allclose(unmasked, models.mathis(1460, 0.1, np.array([0.01, 0.02])))
    assert np.allclose(
        models.mathis(1460, 0.1, p.compressed()), models.mathis(1460, 0.1, [0.01, 0.02])
    )


@pytest.mark.parametrize(
    ("value", "what"),
    [(np.timedelta64(100, "ms"), "durations (timedelta64[ms])"),
     (pd.Series(pd.to_timedelta([0.1, 0.2], unit="s")), "durations (timedelta64[ns])"),
     (np.datetime64("2026-01-01"), "dates (datetime64[D])"),
     (np.complex128(0.1), "complex numbers (complex128)"),
     (np.array(["0.1"]), "text (<U3)")],
)  # fmt: skip
def test_an_rtt_given_as_a_duration_a_complex_number_or_text_is_refused_not_misread(
    value: object, what: str
) -> None:
    # Campaign 16 (issue 32): converted to float, numpy's timedelta64 became its count of its
    # own unit, so an RTT of 100 ms gave the throughput of 100 s (1,000 times too low), one of
    # a pandas column in ns 10^9 times; a complex RTT lost its imaginary part.
    with pytest.raises(TypeError) as e:
        models.mathis(1460, value, 0.01)
    assert str(e.value).startswith(f"rtt_s: expected a number or an array of numbers, not {what}")


@pytest.mark.parametrize(
    ("value", "what"),
    [(np.bool_(True), "booleans (bool)"),
     (np.array([True, False]), "booleans (bool)"),
     (pd.Series([True]), "booleans (bool)"),
     ([True, 1460], "booleans (True among them)"),
     (pd.Series(["1460"]), "text ('1460' among them)"),
     (np.array([1460, "x"], dtype=object), "text ('x' among them)")],
)  # fmt: skip
def test_booleans_and_text_are_refused_in_any_container_as_they_are_alone(
    value: object, what: str
) -> None:
    # Campaign 23 (issue 32): True and "1460" were refused, but numpy's booleans, a pandas
    # column of them or a list holding one were read as 1 and 0 (an MSS of 1 byte: 122 B/s),
    # and a pandas column of text as the numbers it spells.
    with pytest.raises(TypeError) as e:
        models.mathis(value, 0.1, 0.01)
    assert str(e.value) == f"mss_bytes: expected a number or an array of numbers, not {what}"


@pytest.mark.parametrize("value", [b"\x05\xb4", bytearray(b"\x05\xb4"), memoryview(b"\x05\xb4")])
def test_bytes_in_any_of_their_types_are_refused_not_read_as_their_byte_values(
    value: object,
) -> None:
    # bytes were refused, but a bytearray or a memoryview of the same was read as the numbers
    # 5 and 180 (noticed in campaign 23, issue 32).
    with pytest.raises(
        TypeError, match=rf"^mss_bytes: expected a number .*, not {type(value).__name__}"
    ):
        models.mathis(value, 0.1, 0.01)


@pytest.mark.parametrize(
    "container",
    [
        lambda v: [v],
        lambda v: [1460, v],
        lambda v: [[1460, v]],
        lambda v: np.array([v, 1460], dtype=object),
        lambda v: pd.Series([1460, v], dtype=object),
    ],
    ids=["alone-in-a-list", "beside-a-number", "nested", "object-array", "pandas-object"],
)
@pytest.mark.parametrize("value", [bytearray(b"\x05\xb4"), memoryview(b"\x05\xb4")])
def test_a_bytearray_or_memoryview_inside_a_container_is_refused_naming_the_argument(
    value: object, container: Any
) -> None:
    # Noticed in stop 48 (issue 32): given alone they were refused, but numpy reads one inside
    # a list as its bytes' values: [bytearray(b"\x05\xb4")] became an MSS of 5 and 180 bytes,
    # and beside a number it failed with numpy's "inhomogeneous shape", naming no argument.
    with pytest.raises(TypeError, match=r"^mss_bytes: expected a number .*, not text \("):
        models.mathis(container(value), 0.1, 0.01)


def test_nested_lists_of_unequal_lengths_are_refused_naming_the_argument() -> None:
    with pytest.raises(TypeError, match=r"^p: expected a number or an array of numbers, not list"):
        models.mathis(1460, 0.1, [0.01, [0.02, 0.03]])


def test_the_square_root_law_takes_an_array_of_b_as_the_pftk_models_do() -> None:
    # Campaign 23 (issue 32): b=[1, 2] went through float() and failed with numpy's "only
    # 0-dimensional arrays can be converted to Python scalars", naming no parameter.
    both = models.mathis(1000, 0.1, 0.01, b=[1, 2])
    assert np.allclose(both, [models.mathis(1000, 0.1, 0.01, b=1),
                              models.mathis(1000, 0.1, 0.01, b=2)])  # fmt: skip
    assert np.allclose(both, [10000 * math.sqrt(1.5) * 10, 10000 * math.sqrt(0.75) * 10])
    assert np.allclose(models.mathis_constant(np.array([1.0, 2.0])), [1.5**0.5, 0.75**0.5])


@pytest.mark.parametrize(
    ("call", "named"),
    [(lambda: models.mathis([1000, 1460, 9000], [0.1, 0.2], 0.01), "mss_bytes (3,), rtt_s (2,)"),
     (lambda: models.padhye_packets(0.1, [0.01, 0.02], 1.0, wmax=[10, 20, 30]),
      "p (2,), wmax (3,)"),
     (lambda: models.padhye(np.ones(3), [0.1, 0.2], 0.01, 1.0),
      "mss_bytes (3,), the other arguments (2,)"),
     (lambda: models.padhye_approx(1000, 0.1, [0.01, 0.02], [1.0, 2.0, 3.0]),
      "p (2,), t0_s (3,)"),
     (lambda: models.sqrt_bound(1000, 0.1, [0.0, 0.01], p_when_no_loss=[1e-6, 1e-5, 1e-4]),
      "p (2,), p_when_no_loss (3,)")],
)  # fmt: skip
def test_arrays_that_do_not_broadcast_together_are_refused_naming_the_parameters(
    call: Any, named: str
) -> None:
    # Campaign 23 (issue 32): numpy's "operands could not be broadcast together with shapes
    # (3,) (2,)" named no parameter.
    with pytest.raises(ValueError) as e:
        call()
    assert str(e.value).startswith(f"{named}: arrays of these shapes do not broadcast together")
