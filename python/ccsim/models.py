# SPDX-License-Identifier: MIT
"""Steady-state TCP throughput models, to set simulations beside.

All functions return bytes per second and accept numpy arrays (broadcast) or floats; a masked
array with masked entries is refused (its masked values would be computed as numbers).

- ``mathis``: the square-root law (Mathis, Semke, Mahdavi, Ott, "The macroscopic behavior of the
  TCP congestion avoidance algorithm", ACM CCR 27(3), 1997): ``MSS/RTT * C/sqrt(p)`` with
  ``C = sqrt(3/(2b))``; ``b = 2`` (delayed ACKs) gives 0.866, the constant paper 003 uses.
- ``padhye``: the full PFTK model (Padhye, Firoiu, Towsley, Kurose, "Modeling TCP throughput: a
  simple model and its empirical validation", SIGCOMM 1998), with timeouts and the receiver
  window.
- ``padhye_approx``: the approximation everyone implements (PFTK eq. 33).
- ``sqrt_bound``: paper 003's bound (its eq. 7), ``BW <= C * B / (R * sqrt(p))`` with
  ``C = 0.866`` under delayed ACKs and ``1.22`` without (Floyd and Fall's form), fed with R and p
  measured by ping; where no loss was seen the paper sets ``p = 1e-6``.

``p`` is the probability that a packet is lost (a loss *event* rate), ``b`` the number of packets
acknowledged per ACK, ``t0`` the first timeout, ``wmax`` the receiver window in packets.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Union

import numpy as np
import numpy.typing as npt

ArrayLike = Union[float, npt.NDArray[np.float64]]


def _out(x: npt.NDArray[np.float64]) -> ArrayLike:
    return float(x) if np.ndim(x) == 0 else x


def _overflow_is_inf() -> Any:
    """Inside the domain :func:`_arg` checks, a tiny value (a subnormal RTT, 1e-320 s) can
    still overflow a quotient, or underflow a divisor to 0: the throughput is then infinite,
    which is the formula's answer, not a reason for a warning."""
    return np.errstate(over="ignore", divide="ignore", under="ignore")


def _arg(
    name: str,
    x: Any,
    low: float,
    high: float = np.inf,
    *,
    low_open: bool = False,
    high_open: bool = False,
    infinite: bool = False,
) -> npt.NDArray[np.float64]:
    """``x`` as an array of floats in its domain, or an error naming ``name``. Outside it the
    formulas divide by zero or take the root of a negative number: ``b=0`` was a bare
    ZeroDivisionError, ``p=0`` a numpy divide-by-zero warning, ``p="x"`` numpy's "could not
    convert string to float" (the API contract test, issue 32)."""
    # A bytearray or memoryview, like bytes, is text, not numbers: b"ab" was read as 97, 98
    # (noticed in campaign 23, issue 32).
    if x is None or isinstance(x, (str, bytes, bytearray, memoryview, bool, Mapping)):
        raise TypeError(f"{name}: expected a number or an array of numbers, not "
                        f"{type(x).__name__} {x!r}")  # fmt: skip
    # Text or booleans anywhere inside (a pandas column of text, a list mixing text and
    # numbers): float() read "1460" as the number it spells and True as 1, which the same
    # values refuse alone or in a numpy array (campaign 23, issue 32); and numpy reads a
    # bytearray or memoryview inside a list as its bytes' values, [bytearray(b"ab")] as
    # [97, 98] (noticed in stop 48, issue 32). Looked for before numpy converts anything.
    found = _text_or_boolean_inside(x)
    try:
        kind = (
            "b"
            if isinstance(found, (bool, np.bool_))
            else "U"
            if found is not None
            else (np.asarray(x).dtype.kind)
        )
    except ValueError as e:  # nested lists of unequal lengths: numpy's words name no argument
        raise TypeError(f"{name}: expected a number or an array of numbers, not "
                        f"{type(x).__name__} {x!r} ({e})") from None  # fmt: skip
    # A masked array's masked entries were computed and checked as numbers like the rest, so
    # a value the user had masked out (a failed run, a -1 placeholder) came back as a result or
    # refused the whole call (noticed in campaign 19, issue 32).
    if np.ma.is_masked(x):
        raise TypeError(f"{name}: a masked array with masked entries; the models would read "
                        "them as numbers: give x.compressed() (the unmasked values) or "
                        "x.filled(value)")  # fmt: skip
    # Converted to float, a duration (numpy's timedelta64, a pandas column of them) became its
    # count of its own unit: an RTT of 100 ms was read as 100 s, one in ns as 1e8 s; a complex
    # number lost its imaginary part and text was read as the number it spells (campaign 16,
    # issue 32). Each is refused, a duration saying how to give seconds.
    if kind in "mMcUSb":
        # A boolean (numpy's or pandas') is refused as Python's True is: read as 1 or 0, a
        # mask given in place of the values gave an MSS of 1 byte (campaign 23, issue 32).
        what = {"m": "durations", "M": "dates", "c": "complex numbers",
                "b": "booleans"}.get(kind, "text")  # fmt: skip
        cure = " (seconds: divide by np.timedelta64(1, 's'))" if kind == "m" else ""
        shown = np.asarray(x).dtype if found is None else f"{found!r} among them"
        raise TypeError(f"{name}: expected a number or an array of numbers, not {what} "
                        f"({shown}){cure}")  # fmt: skip
    try:
        a = np.asarray(x, dtype=float)
    except (TypeError, ValueError, OverflowError) as e:
        raise TypeError(f"{name}: expected a number or an array of numbers, not "
                        f"{type(x).__name__} {x!r} ({e})") from None  # fmt: skip
    if a.size == 0:
        raise ValueError(f"{name}: an empty array; give at least one number")
    finite = np.isfinite(a) | (infinite & (a == np.inf))
    above = a > low if low_open else a >= low
    below = a < high if high_open else a <= high
    bad = ~(finite & above & below)
    if bad.any():
        lo, hi = "(" if low_open else "[", ")" if high_open else "]"
        hi_text = "inf" if high == np.inf else f"{high:g}"
        raise ValueError(f"{name}: {float(a[bad].flat[0])!r} is outside {lo}{low:g}, {hi_text}{hi}")
    return a


def _text_or_boolean_inside(x: Any) -> Any:
    """The first text (str, bytes, bytearray, memoryview) or boolean inside ``x``'s lists,
    tuples and object arrays, or None."""
    stack = [x]
    while stack:
        v = stack.pop()
        if isinstance(v, (list, tuple)):
            stack.extend(reversed(v))
        elif isinstance(v, np.ndarray):
            if v.dtype.kind == "O":
                stack.extend(reversed(list(v.flat)))
        elif hasattr(v, "__array__"):  # a pandas Series or Index of objects, an xarray
            stack.append(np.asarray(v))
        elif isinstance(v, (str, bytes, bytearray, memoryview, bool, np.bool_)) and v is not x:
            return v
    return None


def _together(**args: npt.NDArray[np.float64]) -> None:
    """The checked arguments of one call broadcast together, or ValueError naming them and
    their shapes: numpy's "operands could not be broadcast together with shapes (3,) (2,)"
    named no parameter (campaign 23, issue 32)."""
    try:
        np.broadcast_shapes(*(a.shape for a in args.values()))
    except ValueError:
        shapes = ", ".join(f"{n} {a.shape}" for n, a in args.items() if a.ndim)
        raise ValueError(f"{shapes}: arrays of these shapes do not broadcast together (numpy's "
                         "rules: equal lengths, or 1); give one value or arrays that "
                         "match") from None  # fmt: skip


def _c(b: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """C = sqrt(3/(2b)) on a checked ``b``."""
    return np.sqrt(3.0 / (2.0 * b))  # type: ignore[no-any-return]


def mathis_constant(b: ArrayLike = 1.0) -> ArrayLike:
    """C = sqrt(3/(2b)) of the periodic-loss derivation (an array for an array of ``b``).

    >>> round(mathis_constant(1), 4), round(mathis_constant(2), 4)
    (1.2247, 0.866)
    """
    with _overflow_is_inf():
        return _out(_c(_arg("b", b, 0.0, low_open=True)))


def mathis(mss_bytes: ArrayLike, rtt_s: ArrayLike, p: ArrayLike, b: ArrayLike = 1.0) -> ArrayLike:
    """Square-root throughput, bytes/s: ``mss/rtt * sqrt(3/(2b)) / sqrt(p)``.

    >>> round(mathis(1000, 0.1, 0.01, b=2))
    86603
    """
    mss = _arg("mss_bytes", mss_bytes, 0.0)
    rtt = _arg("rtt_s", rtt_s, 0.0, low_open=True)
    pp = _arg("p", p, 0.0, 1.0, low_open=True)
    # An array of b broadcasts as in the PFTK models; it went through float() and failed
    # with numpy's "only 0-dimensional arrays can be converted", naming nothing (campaign 23).
    bb = _arg("b", b, 0.0, low_open=True)
    _together(mss_bytes=mss, rtt_s=rtt, p=pp, b=bb)
    with _overflow_is_inf():
        return _out(mss / rtt * _c(bb) / np.sqrt(pp))


def _q_hat(p: npt.NDArray[np.float64], w: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Probability that a loss indication in a window of ``w`` packets is a timeout (PFTK)."""
    q = 1.0 - p
    num = (1.0 - q**3) * (1.0 + q**3 * (1.0 - q ** (w - 3.0)))
    den = 1.0 - q**w
    return np.minimum(1.0, num / den)


def _f(p: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Timeout back-off factor, doubling up to 64·T0 (PFTK)."""
    return 1 + p + 2 * p**2 + 4 * p**3 + 8 * p**4 + 16 * p**5 + 32 * p**6


def padhye_packets(
    rtt_s: ArrayLike, p: ArrayLike, t0_s: ArrayLike, b: float = 1.0, wmax: float = np.inf
) -> ArrayLike:
    """The full PFTK model in packets per second.

    >>> round(padhye_packets(0.1, 0.01, 1.0, b=2), 2)
    69.52
    """
    rtt = _arg("rtt_s", rtt_s, 0.0, low_open=True)
    # p = 1 (every packet lost) divides by 1 - p in the timeout terms: the model has no value;
    # a subnormal p makes 1/p and the window both infinite, and their ratio NaN.
    pp = _arg("p", p, float(np.finfo(float).tiny), 1.0, high_open=True)
    t0 = _arg("t0_s", t0_s, 0.0)
    b = _arg("b", b, 0.0, low_open=True)
    wmax = _arg("wmax", wmax, 0.0, low_open=True, infinite=True)
    _together(rtt_s=rtt, p=pp, t0_s=t0, b=b, wmax=wmax)
    with _overflow_is_inf():
        return _out(_pftk_packets(rtt, pp, t0, b, wmax))


def _pftk_packets(
    rtt: npt.NDArray[np.float64],
    pp: npt.NDArray[np.float64],
    t0: npt.NDArray[np.float64],
    b: npt.NDArray[np.float64],
    wmax: npt.NDArray[np.float64],
) -> npt.NDArray[np.float64]:
    """:func:`padhye_packets` on checked arrays."""
    a = (2.0 + b) / (3.0 * b)
    ew = a + np.sqrt(8.0 * (1.0 - pp) / (3.0 * b * pp) + a * a)
    limited = ew >= wmax
    w = np.where(limited, wmax, ew)
    qh = _q_hat(pp, w)
    num = (1.0 - pp) / pp + w + qh / (1.0 - pp)
    tail = qh * t0 * _f(pp) / (1.0 - pp)
    den_free = rtt * (b * w / 2.0 + 1.0) + tail
    den_limited = rtt * (b * w / 8.0 + (1.0 - pp) / (pp * w) + 2.0) + tail
    return num / np.where(limited, den_limited, den_free)  # type: ignore[no-any-return]


def padhye(
    mss_bytes: ArrayLike,
    rtt_s: ArrayLike,
    p: ArrayLike,
    t0_s: ArrayLike,
    b: float = 1.0,
    wmax: float = np.inf,
) -> ArrayLike:
    """The full PFTK model, bytes/s.

    >>> round(padhye(1, 0.1, 0.001, 1.0, b=2, wmax=20), 1)
    174.2
    """
    mss = _arg("mss_bytes", mss_bytes, 0.0)
    packets = padhye_packets(rtt_s, p, t0_s, b, wmax)
    _together(mss_bytes=mss, **{"the other arguments": np.asarray(packets)})
    with _overflow_is_inf():
        return _out(mss * packets)


def padhye_approx(
    mss_bytes: ArrayLike,
    rtt_s: ArrayLike,
    p: ArrayLike,
    t0_s: ArrayLike,
    b: float = 1.0,
    wmax: float = np.inf,
) -> ArrayLike:
    """PFTK's approximate model, bytes/s.

    >>> round(padhye_approx(1, 0.1, 0.01, 1.0, b=2), 2)
    70.65
    """
    mss = _arg("mss_bytes", mss_bytes, 0.0)
    rtt = _arg("rtt_s", rtt_s, 0.0, low_open=True)
    pp = _arg("p", p, 0.0, 1.0, low_open=True)
    t0 = _arg("t0_s", t0_s, 0.0)
    b = _arg("b", b, 0.0, low_open=True)
    wmax = _arg("wmax", wmax, 0.0, low_open=True, infinite=True)
    _together(mss_bytes=mss, rtt_s=rtt, p=pp, t0_s=t0, b=b, wmax=wmax)
    with _overflow_is_inf():
        den = rtt * np.sqrt(2 * b * pp / 3) + t0 * np.minimum(
            1.0, 3 * np.sqrt(3 * b * pp / 8)
        ) * pp * (1 + 32 * pp**2)
        pkts = np.minimum(wmax / rtt, 1.0 / den)
        return _out(mss * pkts)


#: Paper 003's stand-in for a loss rate of zero: no ping was lost, so p = 1e-6.
P_WHEN_NO_LOSS = 1e-6


def sqrt_bound(
    segment_bytes: ArrayLike,
    rtt_s: ArrayLike,
    p: ArrayLike,
    delayed_acks: bool = True,
    p_when_no_loss: float = P_WHEN_NO_LOSS,
) -> ArrayLike:
    """Paper 003's upper bound on TCP throughput, bytes/s: ``C * B / (R * sqrt(p))``.

    ``C = sqrt(3/4) = 0.866`` with delayed ACKs (two segments per ACK), ``sqrt(3/2) = 1.22``
    without: the square-root law's constant (``mathis_constant``), which the paper's own
    derivation reaches despite slips in its intermediate steps. A loss rate of 0 (nothing was
    lost during the measurement) is replaced by ``p_when_no_loss``, as the paper does.

    >>> round(sqrt_bound(1000, 0.1, 0.01))
    86603
    >>> round(sqrt_bound(1000, 0.1, 0.01, delayed_acks=False))
    122474
    >>> round(sqrt_bound(1000, 0.1, 0.0))
    8660254
    """
    if not isinstance(delayed_acks, (bool, np.bool_)):
        raise TypeError(f"delayed_acks: expected True or False, not "
                        f"{type(delayed_acks).__name__} {delayed_acks!r}")  # fmt: skip
    seg = _arg("segment_bytes", segment_bytes, 0.0)
    pp = _arg("p", p, 0.0, 1.0)
    no_loss = _arg("p_when_no_loss", p_when_no_loss, 0.0, 1.0, low_open=True)
    rtt = _arg("rtt_s", rtt_s, 0.0, low_open=True)
    _together(segment_bytes=seg, rtt_s=rtt, p=pp, p_when_no_loss=no_loss)
    pp = np.where(pp > 0, pp, no_loss)
    return mathis(segment_bytes, rtt_s, pp, b=2.0 if delayed_acks else 1.0)
