# SPDX-License-Identifier: MIT
"""Scenario generators for networks too large to write by hand: the scale cases of
``ccsim bench --scale`` (issue 11) and a starting point for experiments.

Each function returns a ``Scenario`` that ``ccsim.run`` runs as it is; ``.to_toml()`` gives the
file (for ``ccsim run``, or the core's ``run_scenario`` example under a profiler).

>>> from ccsim import topologies
>>> sc = topologies.dumbbell(10, duration="2s")
>>> res = ccsim.run(sc)  # doctest: +SKIP
>>> ft = topologies.fat_tree(4, long_flows=4, duration="1s")
>>> 'core_0_0' in ft.to_toml()
True

Every flow uses the scenario's ``[tcp]`` section, which the generators set as P1's (SACK,
delayed ACKs, MSS 1448 B, docs/performance.md) unless ``tcp`` is given.

A count of flows, hosts or packets is at most :data:`MAX_ELEMENTS` (a million) and a fat-tree's
``k`` at most :data:`MAX_K` (128, 524,288 hosts); larger ones are refused naming the parameter.
"""

from __future__ import annotations

import math
import numbers
import random
from collections.abc import Mapping
from typing import Any

from ccsim.scenario import Scenario

#: P1's TCP (docs/performance.md): SACK, delayed ACKs, MSS 1448 B.
P1_TCP: Mapping[str, Any] = {"variant": "sack", "mss": 1448, "delayed_ack": True}

#: Web-like short transfers (docs/scenario.md, ``short_tcp``): Pareto sizes of mean 30 KB,
#: shape 1.2, as the web background of paper 002's scenario.
WEB_SIZES: Mapping[str, Any] = {"dist": "pareto", "mean": "30KB", "shape": 1.2}


def _ms(x: float) -> str:
    """A duration in milliseconds as the scenario writes it (exact to the nanosecond)."""
    return f"{round(x * 1e6)}ns"


# The generators' own parameters are checked here, naming the parameter: a NaN or infinite
# delay was "cannot convert float NaN to integer", a string one "can only concatenate str (not
# "float") to str", and `buffer_packets=0` silently became the default (campaign 12, issue 32).
# What the scenario itself refuses (a negative duration, a rate's unit) is left to its reader.


def _number(name: str, x: Any) -> float:
    """``x``, a finite real number (numpy's included), or an error naming ``name``."""
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        raise TypeError(f"{name}: expected a number, not {type(x).__name__} {x!r}")
    if not math.isfinite(x):
        raise ValueError(f"{name}: {x!r} is not a finite number")
    return float(x)


def _non_negative(name: str, x: Any) -> float:
    """``x``, a finite number of at least 0: a negative arrival rate made no transfers, as 0
    does, without a word (campaign 13, issue 32)."""
    value = _number(name, x)
    if value < 0:
        raise ValueError(f"{name} must be >= 0 (0: none), not {x!r}")
    return value


#: The most flows or hosts a generator builds (and the largest ``buffer_packets``, TOML's
#: largest integer): ``dumbbell(2**70)`` built flows until memory ran out, without a word
#: (the API contract test, issue 32). A million is far past what one process simulates.
MAX_ELEMENTS = 1_000_000

#: The largest fat-tree arity: k = 128 is k^3/4 = 524,288 hosts, under MAX_ELEMENTS.
MAX_K = 128


def _whole(name: str, x: Any, low: int, high: int = MAX_ELEMENTS) -> int:
    """``x``, an integer from ``low`` to ``high``, or an error naming ``name``."""
    if isinstance(x, bool) or not isinstance(x, numbers.Integral):
        raise TypeError(f"{name}: expected an integer, not {type(x).__name__} {x!r}")
    if x < low:
        raise ValueError(f"{name} must be >= {low}, not {x}")
    if x > high:
        raise ValueError(f"{name}: {x} is more than this generator builds (at most {high:,})")
    return int(x)


def _seed(x: Any) -> int:
    """``seed``, a seed the scenario takes (0 to 2^63 - 1), or an error naming it: a string
    seed was hashed by ``random.Random`` (a lone surrogate: UnicodeEncodeError)."""
    if isinstance(x, bool) or not isinstance(x, numbers.Integral):
        raise TypeError(f"seed: expected an integer, not {type(x).__name__} {x!r}")
    return _whole("seed", x, 0, 2**63 - 1)


def _table(name: str, x: Any) -> dict[str, Any]:
    """``x``, a mapping (a TOML table such as ``[tcp]``), as a dict, or an error naming ``name``."""
    if not isinstance(x, Mapping):
        raise TypeError(f"{name}: expected a table (a mapping), not {type(x).__name__} {x!r}")
    return dict(x)


def dumbbell(
    n_flows: int,
    *,
    rate: str = "1Gbps",
    delay_ms: float = 10.0,
    access_rate: str = "10Gbps",
    access_delay_ms: float = 1.0,
    hosts: int | None = None,
    buffer_packets: int | None = None,
    start_gap_ms: float = 1.0,
    duration: str | None = None,
    web_rate: float = 0.0,
    web_sizes: Mapping[str, Any] = WEB_SIZES,
    tcp: Mapping[str, Any] = P1_TCP,
    seed: int = 1,
) -> Scenario:
    """``n_flows`` long TCP flows over one bottleneck, started ``start_gap_ms`` apart.

    ::

        s0 ─┐                          ┌─ d0
        s1 ─┼─ r1 ══ bottleneck ══ r2 ─┼─ d1      flow i: s(i mod H) -> d(i mod H),
        ... │   rate, delay_ms         │  ...     starting at i * start_gap_ms
        sH ─┘                          └─ dH

    Parameters
    ----------
    n_flows
        Bulk TCP flows (``type = "tcp"``, no size), flow ``i`` from host ``s{i % H}`` to
        ``d{i % H}``.
    rate, delay_ms
        The bottleneck ``r1 -> r2`` (one way delay).
    access_rate, access_delay_ms
        Every host's link to its router (queues large enough never to drop).
    hosts
        H, the hosts on each side; default ``min(n_flows, 100)``, so that the network stays
        small (202 nodes) whatever the number of flows.
    buffer_packets
        The bottleneck's drop-tail queue; default one bandwidth-delay product of 1,500-byte
        packets at the round-trip time without queueing.
    duration
        Default: the last flow's start plus 10 s.
    web_rate
        Poisson arrivals per second of short transfers (``short_tcp``) from ``s0`` to ``d0``
        with ``web_sizes``; 0 for none.
    tcp
        The ``[tcp]`` section.
    seed
        The scenario's master seed.
    """
    n_flows = _whole("n_flows", n_flows, 0)
    h = _whole("hosts", hosts, 1) if hosts is not None else max(1, min(n_flows, 100))
    delay_ms = _number("delay_ms", delay_ms)
    access_delay_ms = _number("access_delay_ms", access_delay_ms)
    start_gap_ms = _number("start_gap_ms", start_gap_ms)
    web_rate = _non_negative("web_rate", web_rate)
    # Taken as "not given" by the `or` below: "" and 0 ran for the default duration without a
    # word (campaign 13, issue 32); None is the default.
    if duration is not None and not duration:
        raise ValueError(f'duration: {duration!r} is no duration; give one such as "10s", or '
                         "None for the last flow's start plus 10 s")  # fmt: skip
    rtt_s = 2 * (delay_ms + 2 * access_delay_ms) / 1e3
    bits = _rate_bps("rate", rate)
    _rate_bps("access_rate", access_rate)
    seed = _seed(seed)
    # At most TOML's largest integer: a delay far too long for the scenario is then refused
    # naming the delay, not a queue limit the caller never set.
    bdp = min(max(10, round(bits * max(rtt_s, 0.0) / (1500 * 8))), 2**63 - 1)
    if buffer_packets is not None:
        bdp = _whole("buffer_packets", buffer_packets, 1, 2**63 - 1)
    nodes: dict[str, str] = {"r1": "router", "r2": "router"}
    links: dict[str, Any] = {
        "bottleneck": {
            "a": "r1",
            "b": "r2",
            "rate": rate,
            "delay": _ms(delay_ms),
            "queue": {"type": "droptail", "limit": bdp},
        }
    }
    big = {"type": "droptail", "limit": 1_000_000}
    for i in range(h):
        nodes[f"s{i}"] = "host"
        nodes[f"d{i}"] = "host"
        for name, a, b in ((f"in{i}", f"s{i}", "r1"), (f"out{i}", "r2", f"d{i}")):
            links[name] = {
                "a": a,
                "b": b,
                "rate": access_rate,
                "delay": _ms(access_delay_ms),
                "queue": big,
            }
    flows: dict[str, Any] = {}
    for i in range(n_flows):
        flows[f"f{i}"] = {
            "type": "tcp",
            "src": f"s{i % h}",
            "dst": f"d{i % h}",
            "start": _ms(i * start_gap_ms),
        }
    if web_rate > 0:
        flows["web"] = {
            "type": "short_tcp",
            "src": "s0",
            "dst": "d0",
            "arrival_rate": web_rate,
            "sizes": _table("web_sizes", web_sizes),
        }
    last_start_s = max(0, n_flows - 1) * start_gap_ms / 1e3
    tree = {
        "seed": seed,
        "duration": duration or f"{last_start_s + 10:g}s",
        "nodes": nodes,
        "links": links,
        "tcp": _table("tcp", tcp),
        "flows": flows,
    }
    return Scenario.from_dict(tree)


def fat_tree(
    k: int,
    *,
    rate: str = "1Gbps",
    delay_us: float = 10.0,
    buffer_packets: int = 100,
    long_flows: int | None = None,
    start_gap_ms: float = 1.0,
    web_rate: float = 0.0,
    web_hosts: int = 0,
    web_sizes: Mapping[str, Any] = WEB_SIZES,
    duration: str = "1s",
    tcp: Mapping[str, Any] = P1_TCP,
    seed: int = 1,
) -> Scenario:
    """A k-ary fat-tree (Al-Fares et al., SIGCOMM 2008, §3): ``k`` pods of ``k/2`` edge and
    ``k/2`` aggregation switches, ``(k/2)²`` core switches, ``k³/4`` hosts; every link
    ``rate`` with ``delay_us`` one way. k = 8: 128 hosts, 80 switches; k = 16: 1,024 hosts,
    320 switches.

    ::

        core_j_i           (k/2)² cores; core_j_i links to aggregation switch j of every pod
        agg_p_j            pod p, j < k/2: linked to every edge switch of its pod
        edge_p_e           pod p: k/2 hosts h_p_e_x below it

    Routes are ccsim's static shortest paths by hops (``[routing]`` default), one path per
    destination address, no ECMP: of the equal-cost paths the one through the lowest-numbered
    interfaces wins (``network.rs``, ties decided by interface order), so traffic between pods
    crosses few cores. Explicit ``[routing] routes`` are not needed for correctness.

    Traffic: a permutation of long flows (host ``i`` sends a bulk TCP flow to host
    ``perm(i)`` in another pod, ``perm`` drawn with ``seed``), the first ``long_flows`` hosts
    (default all), each started ``start_gap_ms`` after the previous; and ``web_hosts``
    Poisson sources of short transfers at ``web_rate`` per second each, to a host of another
    pod. ``long_flows`` and ``web_hosts`` are at most the ``k³/4`` hosts (one each per host);
    more are refused naming the parameter.
    """
    if _whole("k", k, 2, MAX_K) % 2:
        raise ValueError(f"k must be an even number >= 2, not {k}")
    delay_us = _number("delay_us", delay_us)
    start_gap_ms = _number("start_gap_ms", start_gap_ms)
    web_rate = _non_negative("web_rate", web_rate)
    # At most one long flow and one web source per host: more were cut to the host count
    # without a word, so `long_flows=100` on k = 4 ran 16 (campaign 13, issue 32).
    n_hosts = k**3 // 4
    web_hosts = _at_most_hosts("web_hosts", web_hosts, k, n_hosts)
    buffer_packets = _whole("buffer_packets", buffer_packets, 1, 2**63 - 1)
    if long_flows is not None:
        long_flows = _at_most_hosts("long_flows", long_flows, k, n_hosts)
    _rate_bps("rate", rate)
    seed = _seed(seed)
    half = k // 2
    nodes: dict[str, str] = {}
    links: dict[str, Any] = {}
    spec = {
        "rate": rate,
        "delay": _ms(delay_us / 1e3),
        "queue": {"type": "droptail", "limit": buffer_packets},
    }

    def link(a: str, b: str) -> None:
        links[f"{a}__{b}"] = {"a": a, "b": b, **spec}

    hosts: list[tuple[str, int]] = []  # (name, pod)
    for j in range(half):
        for i in range(half):
            nodes[f"core_{j}_{i}"] = "router"
    for p in range(k):
        for j in range(half):
            nodes[f"agg_{p}_{j}"] = "router"
        for e in range(half):
            nodes[f"edge_{p}_{e}"] = "router"
            for x in range(half):
                name = f"h_{p}_{e}_{x}"
                nodes[name] = "host"
                hosts.append((name, p))
    for p in range(k):
        for e in range(half):
            for x in range(half):
                link(f"h_{p}_{e}_{x}", f"edge_{p}_{e}")
            for j in range(half):
                link(f"edge_{p}_{e}", f"agg_{p}_{j}")
        for j in range(half):
            for i in range(half):
                link(f"agg_{p}_{j}", f"core_{j}_{i}")
    rng = random.Random(seed)
    perm = _inter_pod_permutation([p for _, p in hosts], rng)
    n_long = len(hosts) if long_flows is None else long_flows
    flows: dict[str, Any] = {}
    for i in range(n_long):
        flows[f"long{i}"] = {
            "type": "tcp",
            "src": hosts[i][0],
            "dst": hosts[perm[i]][0],
            "start": _ms(i * start_gap_ms),
        }
    for w in range(web_hosts):
        src = rng.randrange(len(hosts))
        dst = rng.choice([j for j, (_, p) in enumerate(hosts) if p != hosts[src][1]])
        flows[f"web{w}"] = {
            "type": "short_tcp",
            "src": hosts[src][0],
            "dst": hosts[dst][0],
            "arrival_rate": web_rate,
            "sizes": _table("web_sizes", web_sizes),
        }
    tree = {
        "seed": seed,
        "duration": duration,
        "nodes": nodes,
        "links": links,
        "tcp": _table("tcp", tcp),
        "flows": flows,
    }
    return Scenario.from_dict(tree)


def _at_most_hosts(name: str, x: Any, k: int, n_hosts: int) -> int:
    """``x``, a count of hosts from 0 to the fat-tree's ``n_hosts``, or an error naming
    ``name`` and the maximum."""
    x = _whole(name, x, 0)
    if x > n_hosts:
        raise ValueError(f"{name}: {x} is more than the fat-tree's hosts (k = {k}: at most "
                         f"{n_hosts:,}, one per host)")  # fmt: skip
    return x


def _inter_pod_permutation(pods: list[int], rng: random.Random) -> list[int]:
    """A permutation of the hosts in which every host's image is in another pod (a random
    shuffle, then a rotation by one pod's hosts wherever a host maps into its own pod)."""
    n = len(pods)
    order = list(range(n))
    rng.shuffle(order)
    per_pod = sum(1 for p in pods if p == pods[0])
    perm = [0] * n
    for i in range(n):
        j = order[i]
        if pods[j] == pods[i]:
            j = (j + per_pod) % n
        perm[i] = j
    # Rotating collided hosts can map two hosts onto one: fall back to a shift by one pod,
    # which is always a permutation across pods.
    if len(set(perm)) != n or any(pods[perm[i]] == pods[i] for i in range(n)):
        perm = [(i + per_pod) % n for i in range(n)]
    return perm


def _rate_bps(name: str, rate: str) -> float:
    """A rate such as ``"1Gbps"`` or ``"100Mbps"`` in bit/s (the units docs/scenario.md
    lists), or an error naming the parameter ``name``."""
    if not isinstance(rate, str):
        raise TypeError(f"{name}: expected a rate such as '1Gbps', not {type(rate).__name__}")
    units = {"Gbps": 1e9, "Mbps": 1e6, "Kbps": 1e3, "kbps": 1e3, "bps": 1.0}
    for suffix, scale in units.items():
        if rate.endswith(suffix):
            try:
                bits = float(rate[: -len(suffix)]) * scale
            except ValueError:
                break
            # "nanMbps", "infGbps": float() reads them; the scenario's reader would not.
            if math.isfinite(bits):
                return bits
            break
    raise ValueError(f"{name}: {rate!r} is not a rate such as '1Gbps'")
