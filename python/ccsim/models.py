# SPDX-License-Identifier: MIT
"""Steady-state TCP throughput models, to set simulations beside.

All functions return bytes per second and accept numpy arrays (broadcast) or floats.

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

from typing import Union

import numpy as np
import numpy.typing as npt

ArrayLike = Union[float, npt.NDArray[np.float64]]


def _out(x: npt.NDArray[np.float64]) -> ArrayLike:
    return float(x) if np.ndim(x) == 0 else x


def mathis_constant(b: float = 1.0) -> float:
    """C = sqrt(3/(2b)) of the periodic-loss derivation.

    >>> round(mathis_constant(1), 4), round(mathis_constant(2), 4)
    (1.2247, 0.866)
    """
    return float(np.sqrt(3.0 / (2.0 * b)))


def mathis(mss_bytes: ArrayLike, rtt_s: ArrayLike, p: ArrayLike, b: float = 1.0) -> ArrayLike:
    """Square-root throughput, bytes/s: ``mss/rtt * sqrt(3/(2b)) / sqrt(p)``.

    >>> round(mathis(1000, 0.1, 0.01, b=2))
    86603
    """
    mss = np.asarray(mss_bytes, dtype=float)
    rtt = np.asarray(rtt_s, dtype=float)
    pp = np.asarray(p, dtype=float)
    return _out(mss / rtt * mathis_constant(b) / np.sqrt(pp))


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
    rtt = np.asarray(rtt_s, dtype=float)
    pp = np.asarray(p, dtype=float)
    t0 = np.asarray(t0_s, dtype=float)
    a = (2.0 + b) / (3.0 * b)
    ew = a + np.sqrt(8.0 * (1.0 - pp) / (3.0 * b * pp) + a * a)
    limited = ew >= wmax
    w = np.where(limited, wmax, ew)
    qh = _q_hat(pp, w)
    num = (1.0 - pp) / pp + w + qh / (1.0 - pp)
    tail = qh * t0 * _f(pp) / (1.0 - pp)
    den_free = rtt * (b * w / 2.0 + 1.0) + tail
    den_limited = rtt * (b * w / 8.0 + (1.0 - pp) / (pp * w) + 2.0) + tail
    return _out(num / np.where(limited, den_limited, den_free))


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
    return _out(np.asarray(mss_bytes, dtype=float) * padhye_packets(rtt_s, p, t0_s, b, wmax))


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
    rtt = np.asarray(rtt_s, dtype=float)
    pp = np.asarray(p, dtype=float)
    t0 = np.asarray(t0_s, dtype=float)
    den = rtt * np.sqrt(2 * b * pp / 3) + t0 * np.minimum(1.0, 3 * np.sqrt(3 * b * pp / 8)) * pp * (
        1 + 32 * pp**2
    )
    pkts = np.minimum(wmax / rtt, 1.0 / den)
    return _out(np.asarray(mss_bytes, dtype=float) * pkts)


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
    pp = np.asarray(p, dtype=float)
    pp = np.where(pp > 0, pp, p_when_no_loss)
    return mathis(segment_bytes, rtt_s, pp, b=2.0 if delayed_acks else 1.0)
