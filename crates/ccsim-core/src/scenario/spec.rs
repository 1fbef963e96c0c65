// SPDX-License-Identifier: MIT
//! The validated scenario: plain typed data, every value in simulator units.
//!
//! The parser (`parse.rs`) turns TOML (or the same tree built from Python) into these types and
//! checks everything a user can get wrong, naming the field path. The engine trusts a `Spec`:
//! it never re-validates, and it never panics on one that the parser accepted.
//!
//! Maps keep the user's order (`IndexMap`), so ids, outputs and random streams do not depend on
//! hashing.

use indexmap::IndexMap;

use crate::time::{Rate, SimDuration, SimTime};

#[derive(Clone, Debug, PartialEq)]
pub struct Spec {
    /// Master seed of all random streams.
    pub seed: u64,
    /// Simulated time to run for.
    pub duration: SimDuration,
    pub limits: Limits,
    pub nodes: IndexMap<String, NodeSpec>,
    pub links: IndexMap<String, LinkSpec>,
    pub flows: IndexMap<String, FlowSpec>,
    pub routing: RoutingSpec,
    pub trace: TraceSpec,
}

/// Resource limits; hitting one ends the run cleanly with a stop reason.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Limits {
    /// Stop after this many events (None: no limit).
    pub max_events: Option<u64>,
    /// Stop after this much wall-clock time, in seconds (None: no limit).
    pub max_wall_seconds: Option<f64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    /// Terminates flows; never forwards transit traffic.
    Host,
    /// Forwards by its routing table.
    Router,
}

#[derive(Clone, Debug, PartialEq)]
pub struct NodeSpec {
    pub kind: NodeKind,
    /// A packet processor that sees every packet at this node (None: plain forwarding).
    pub hook: Option<HookSpec>,
}

/// Built-in node hooks. Later issues add policers and striping here.
#[derive(Clone, Debug, PartialEq)]
pub enum HookSpec {
    /// Drops every packet with the given probability and delays the others by a fixed time;
    /// a simple, documented example of the hook interface (and a fault injector for tests).
    Impair { drop: f64, delay: SimDuration },
    /// Split ACKs at a base station (paper 001 §IV): [`crate::agents::spack`].
    Spack(crate::agents::SpackConfig),
    /// Snoop, local retransmission at a base station: [`crate::agents::snoop`].
    Snoop(crate::agents::SnoopConfig),
    /// I-TCP, a split connection relayed at a base station: [`crate::agents::itcp`].
    Itcp(crate::agents::ItcpConfig),
}

#[derive(Clone, Debug, PartialEq)]
pub struct LinkSpec {
    /// The node at end A (name).
    pub a: String,
    /// The node at end B (name).
    pub b: String,
    pub rate: Rate,
    /// One-way propagation delay.
    pub delay: SimDuration,
    /// Largest IP packet, bytes; larger packets are dropped (reason `mtu`).
    pub mtu: u32,
    /// Configuration of direction A→B.
    pub a_to_b: DirSpec,
    /// Configuration of direction B→A.
    pub b_to_a: DirSpec,
}

/// One direction of a link: each has its own queue and loss model instance (and RNG stream).
#[derive(Clone, Debug, PartialEq)]
pub struct DirSpec {
    pub rate: Rate,
    pub delay: SimDuration,
    pub queue: QueueSpec,
    pub loss: LossSpec,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueLimit {
    Packets(u64),
    Bytes(u64),
}

#[derive(Clone, Debug, PartialEq)]
pub enum QueueSpec {
    DropTail {
        limit: QueueLimit,
    },
    /// Random Early Detection (Floyd and Jacobson 1993), thresholds in the unit of `limit`.
    Red {
        limit: QueueLimit,
        min_th: f64,
        max_th: f64,
        /// Drop probability at `max_th`.
        max_p: f64,
        /// Weight of the exponentially weighted average queue.
        w_q: f64,
        /// "Gentle" RED: probability rises from max_p to 1 between max_th and 2·max_th.
        gentle: bool,
        /// Mark ECN-capable packets instead of dropping them (RFC 3168).
        ecn: bool,
        /// Mean packet size used to age the average over idle periods, bytes.
        mean_packet_size: u32,
    },
    /// A FIFO whose link is an XCP router port (Katabi et al. 2002): it rewrites the congestion
    /// header of XCP packets (see `xcp.rs`); `limit` is its hard limit.
    Xcp {
        limit: QueueLimit,
        /// Efficiency controller gain on spare bandwidth (0.4).
        alpha: f64,
        /// Efficiency controller gain on the persistent queue (0.226).
        beta: f64,
        /// Fraction of traffic shuffled each interval for fairness (0.1).
        gamma: f64,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub enum LossSpec {
    None,
    /// Each packet lost independently with probability `rate`.
    Uniform {
        rate: f64,
    },
    /// Bit error rate; a packet of `b` bits is lost with probability 1 − (1 − ber)^b.
    BitError {
        ber: f64,
    },
    /// Two-state Markov chain evaluated once per packet.
    GilbertElliott {
        /// P(good → bad) per packet.
        p_good_to_bad: f64,
        /// P(bad → good) per packet.
        p_bad_to_good: f64,
        /// Loss probability in the good state.
        loss_good: f64,
        /// Loss probability in the bad state.
        loss_bad: f64,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct FlowSpec {
    /// Source node name.
    pub src: String,
    /// Destination node name.
    pub dst: String,
    /// When the application starts.
    pub start: SimTime,
    /// When the application stops offering new data (None: never).
    pub stop: Option<SimTime>,
    pub kind: FlowKind,
}

#[derive(Clone, Debug, PartialEq)]
pub enum FlowKind {
    /// One TCP connection: bulk (size None) or a finite transfer of `size` bytes.
    Tcp { size: Option<u64>, tcp: TcpSpec },
    /// Constant-rate UDP.
    Cbr { rate: Rate, packet_size: u32 },
    /// On-off UDP: sends at `rate` during on periods.
    OnOff {
        rate: Rate,
        packet_size: u32,
        on: SimDuration,
        off: SimDuration,
        exponential: bool,
    },
    /// Poisson arrivals of short TCP transfers with random sizes (web-like traffic).
    ShortTcp {
        /// Mean arrivals per second.
        arrival_rate: f64,
        sizes: SizeDist,
        tcp: TcpSpec,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub enum SizeDist {
    /// Pareto with minimum `scale` bytes and shape `shape` (mean = shape·scale/(shape−1)).
    Pareto {
        scale: f64,
        shape: f64,
    },
    /// Lognormal with parameters of the underlying normal (sizes in bytes).
    Lognormal {
        mu: f64,
        sigma: f64,
    },
    Constant {
        bytes: u64,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recovery {
    /// RFC 5681 fast retransmit / fast recovery.
    Reno,
    /// RFC 6582 partial-ACK handling.
    NewReno,
    /// RFC 6675 SACK-based loss recovery (receiver sends SACK blocks, RFC 2018).
    Sack,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Growth {
    /// Classic (ns-2, Jacobson 1988): +1 SMSS per ACK in slow start, +SMSS²/cwnd per ACK in
    /// congestion avoidance, whatever the ACK covers.
    PerAck,
    /// RFC 5681 §3.1: slow start adds min(N, SMSS) per ACK, N = bytes newly acknowledged.
    Rfc5681,
    /// RFC 3465 Appropriate Byte Counting with limit L (in segments).
    ByteCounting { limit_segments: u32 },
}

/// The congestion-control algorithm and its constants; defaults in each `Config::default`
/// (`crate::cc`). Windows in the configs are in segments.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CcAlgorithm {
    /// Additive increase, multiplicative decrease of RFC 5681 (used by Reno, NewReno and SACK).
    Reno,
    /// HighSpeed TCP (RFC 3649).
    HighSpeed(crate::cc::HighSpeedConfig),
    /// Scalable TCP (Kelly 2003).
    Scalable(crate::cc::ScalableConfig),
    /// BIC-TCP (Xu, Harfoush, Rhee 2004).
    Bic(crate::cc::BicConfig),
    /// CUBIC (RFC 9438).
    Cubic(crate::cc::CubicConfig),
    /// TCP Vegas (Brakmo, Peterson 1995).
    Vegas(crate::cc::VegasConfig),
    /// FAST TCP (Jin, Wei, Low 2004).
    Fast(crate::cc::FastConfig),
    /// The XCP sender (Katabi, Handley, Rohrs 2002); its window follows the feedback of XCP
    /// router ports (`queue = { type = "xcp" }`).
    Xcp(crate::cc::XcpSenderConfig),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InitialWindow {
    Segments(u32),
    /// RFC 5681 §3.1 by SMSS: 2, 3 or 4 segments.
    Rfc5681,
    /// RFC 3390: min(4·SMSS, max(2·SMSS, 4380 B)).
    Rfc3390,
    /// RFC 6928: min(10·SMSS, max(2·SMSS, 14600 B)).
    Rfc6928,
}

/// Every parameter of one TCP connection (sender and receiver).
#[derive(Clone, Debug, PartialEq)]
pub struct TcpSpec {
    pub recovery: Recovery,
    pub cc: CcAlgorithm,
    /// Sender maximum segment size: payload bytes per segment.
    pub mss: u32,
    /// TCP + IP header bytes added to every segment on the wire (40 without options).
    pub header_bytes: u32,
    pub initial_window: InitialWindow,
    /// Initial ssthresh in bytes (None: "arbitrarily high", RFC 5681 §3.1).
    pub initial_ssthresh: Option<u64>,
    /// Largest congestion/send window, bytes (None: unlimited).
    pub max_window: Option<u64>,
    /// Receiver buffer, bytes: the advertised window is what of it is free.
    pub rcv_buffer: u64,
    pub growth: Growth,
    pub dupthresh: u32,
    /// RFC 3042 Limited Transmit.
    pub limited_transmit: bool,
    pub delayed_ack: bool,
    /// Delayed-ACK timer (RFC 1122 §4.2.3.2: at most 500 ms).
    pub delack_timeout: SimDuration,
    /// Segments per delayed ACK (RFC 5681 §4.2: every second full-sized segment).
    pub delack_count: u32,
    /// Most SACK blocks per ACK (RFC 2018: 4, or 3 with timestamps).
    pub max_sack_blocks: u32,
    /// RFC 6298 (2.1) initial RTO.
    pub rto_initial: SimDuration,
    /// RFC 6298 (2.4) lower bound on the RTO.
    pub rto_min: SimDuration,
    /// RFC 6298 (2.5) upper bound on the RTO.
    pub rto_max: SimDuration,
    /// RFC 6298 clock granularity G; the RTO is also rounded up to a multiple of it (0: exact).
    pub clock_granularity: SimDuration,
}

impl Default for TcpSpec {
    /// RFC defaults: NewReno, MSS 1460, IW per RFC 5681, RTO 1 s initial and minimum, 60 s cap,
    /// delayed ACKs every 2nd segment or 200 ms, SACK-capable receiver.
    fn default() -> Self {
        TcpSpec {
            recovery: Recovery::NewReno,
            cc: CcAlgorithm::Reno,
            mss: 1460,
            header_bytes: 40,
            initial_window: InitialWindow::Rfc5681,
            initial_ssthresh: None,
            max_window: None,
            rcv_buffer: 64 * 1024 * 1024,
            growth: Growth::Rfc5681,
            dupthresh: 3,
            limited_transmit: false,
            delayed_ack: true,
            delack_timeout: SimDuration::from_millis(200),
            delack_count: 2,
            max_sack_blocks: 4,
            rto_initial: SimDuration::from_secs(1),
            rto_min: SimDuration::from_secs(1),
            rto_max: SimDuration::from_secs(60),
            clock_granularity: SimDuration::ZERO,
        }
    }
}

impl TcpSpec {
    /// The classic ns-2 `Agent/TCP` defaults used by papers run on ns-2: IW 1, ssthresh and
    /// window 20 packets, per-ACK growth, 200 ms minimum RTO, 3 s initial RTO, 10 ms tick, no
    /// delayed ACKs (`TCPSink`) [ns-2.35 tcl/lib/ns-default.tcl].
    pub fn ns2() -> Self {
        let mss = 1000;
        TcpSpec {
            recovery: Recovery::Reno,
            mss,
            initial_window: InitialWindow::Segments(1),
            initial_ssthresh: Some(20 * mss as u64),
            max_window: Some(20 * mss as u64),
            growth: Growth::PerAck,
            delayed_ack: false,
            delack_timeout: SimDuration::from_millis(100),
            rto_initial: SimDuration::from_secs(3),
            rto_min: SimDuration::from_millis(200),
            clock_granularity: SimDuration::from_millis(10),
            max_sack_blocks: 3,
            ..TcpSpec::default()
        }
    }

    /// Initial congestion window in bytes.
    pub fn initial_cwnd(&self) -> u64 {
        let smss = self.mss as u64;
        match self.initial_window {
            InitialWindow::Segments(n) => n as u64 * smss,
            InitialWindow::Rfc5681 => {
                if smss > 2190 {
                    2 * smss
                } else if smss > 1095 {
                    3 * smss
                } else {
                    4 * smss
                }
            }
            InitialWindow::Rfc3390 => (4 * smss).min((2 * smss).max(4380)),
            InitialWindow::Rfc6928 => (10 * smss).min((2 * smss).max(14600)),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RouteMetric {
    Hops,
    Delay,
}

#[derive(Clone, Debug, PartialEq)]
pub struct RoutingSpec {
    pub metric: RouteMetric,
    /// Explicit routes, applied over the shortest paths.
    pub routes: Vec<RouteSpec>,
}

/// At node `at`, packets for any address of node `to` leave over link `via`.
#[derive(Clone, Debug, PartialEq)]
pub struct RouteSpec {
    pub at: String,
    pub to: String,
    pub via: String,
}

#[derive(Clone, Debug, PartialEq)]
pub struct TraceSpec {
    /// Sampling interval of the time series (None: no time series).
    pub interval: Option<SimDuration>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn initial_windows_follow_rfc_3390_and_6928() {
        let mut t = TcpSpec {
            initial_window: InitialWindow::Rfc3390,
            ..TcpSpec::default()
        };
        for (mss, iw) in [(536, 2144), (1460, 4380), (2191, 4382)] {
            t.mss = mss;
            assert_eq!(t.initial_cwnd(), iw, "mss {mss}");
        }
        t.initial_window = InitialWindow::Rfc6928;
        for (mss, iw) in [(1460, 14600), (4000, 14600)] {
            t.mss = mss;
            assert_eq!(t.initial_cwnd(), iw, "mss {mss}");
        }
        t.initial_window = InitialWindow::Rfc5681;
        t.mss = 1200;
        assert_eq!(t.initial_cwnd(), 3600);
    }
}
