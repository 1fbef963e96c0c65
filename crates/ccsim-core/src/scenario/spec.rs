// SPDX-License-Identifier: MIT
//! The validated scenario: plain typed data, every value in simulator units.
//!
//! The parser (`parse/`, one file per section) turns TOML (or the same tree built from Python)
//! into these types and checks everything a user can get wrong, naming the field path. The
//! engine trusts a `Spec`: it never re-validates, and it never panics on one that the parser
//! accepted. The transports' parameters are the transports' own types ([`TcpSpec`] in
//! [`crate::tcp`], [`CcAlgorithm`] and [`Growth`] in [`crate::cc`]), re-exported here.
//!
//! Maps keep the user's order (`IndexMap`), so ids, outputs and random streams do not depend on
//! hashing.

use std::sync::Arc;

use indexmap::IndexMap;

use crate::time::{Rate, SimDuration, SimTime};

// The protocols own their parameter types; a scenario holds them as they are. Re-exported so
// that `scenario::TcpSpec` and friends keep naming the same types.
pub use crate::cc::{CcAlgorithm, Growth};
pub use crate::tcp::{InitialWindow, RecoverGuard, Recovery, RttSampling, TcpSpec};

/// The queue of a link direction; owned by `crate::queue` (its module docs), named here for the
/// scenario's readers.
pub use crate::queue::{QueueLimit, QueueSpec};

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
    /// `[atm]`: links that carry cells, ABR VCs, switch ports, CBR cell sources (None: no ATM).
    pub atm: Option<crate::atm::AtmSpec>,
    /// Link and interface state changes during the run (`[[events]]`), in time order.
    pub events: Vec<EventSpec>,
}

/// Resource limits; hitting one ends the run cleanly with a stop reason.
#[derive(Clone, Debug, PartialEq)]
pub struct Limits {
    /// Stop after this many events (None: no limit).
    pub max_events: Option<u64>,
    /// Stop after this much wall-clock time, in seconds (None: no limit).
    pub max_wall_seconds: Option<f64>,
    /// Bytes the run may use for its time series and its packets alive (default
    /// [`Limits::DEFAULT_MAX_MEMORY`]). A time series larger than this is refused before the
    /// run; packets alive beyond what is left stop the run.
    pub max_memory: u64,
}

impl Limits {
    /// 8 GiB: a fixed default rather than a share of the machine's memory, so that a scenario
    /// stops at the same point on every machine.
    pub const DEFAULT_MAX_MEMORY: u64 = 8 << 30;
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_events: None,
            max_wall_seconds: None,
            max_memory: Limits::DEFAULT_MAX_MEMORY,
        }
    }
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

/// Built-in node hooks.
#[derive(Clone, Debug, PartialEq)]
pub enum HookSpec {
    /// Drops every packet with the given probability and delays the others by a fixed time;
    /// a simple, documented example of the hook interface (and a fault injector for tests).
    Impair { drop: f64, delay: SimDuration },
    /// Split ACKs at a base station (paper 001 §IV): [`crate::agents::spack`].
    Spack(crate::agents::SpackConfig),
    /// Snoop, local retransmission at a base station: [`crate::agents::snoop`].
    Snoop(crate::agents::SnoopConfig),
    /// I-TCP, a split connection relayed at a base station: [`crate::agents::itcp`]. Boxed:
    /// its TCP parameters are several times the size of the other hooks'.
    Itcp(Box<crate::agents::ItcpConfig>),
    /// IP-layer round-robin striping of the data packets for host `dst` over its addresses on
    /// `links` (paper 004's "IP" line): [`crate::striping`].
    Stripe { dst: String, links: Vec<String> },
    /// A DiffServ edge: classifier, meters, markers and droppers ([`crate::diffserv::policer`]).
    Policer(crate::diffserv::PolicerSpec),
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
    /// When the application starts, as declared; the run adds the flow's jitter offset.
    pub start: SimTime,
    /// When the application stops offering new data (None: never): a time since the run
    /// began, like `start`, not a duration after `start`.
    pub stop: Option<SimTime>,
    /// The window of the start offset (`crate::jitter`): the flow starts at `start + U`, U
    /// uniform in [0, start_jitter); the flow's own `start_jitter` key, else `[jitter] start`,
    /// else 0 (no offset, no draw). Less than `stop - start`, so the flow starts before it stops.
    pub start_jitter: SimDuration,
    pub kind: FlowKind,
}

#[derive(Clone, Debug, PartialEq)]
pub enum FlowKind {
    /// One TCP connection: bulk (size None) or a finite transfer of `size` bytes.
    Tcp {
        size: Option<u64>,
        /// Shared by the copies of a flow with `count = N` (one spec, not N: a copy was ~1.9 KB
        /// at 1,000,000 copies, issue 32).
        tcp: Arc<TcpSpec>,
    },
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
    /// One SCTP association between two multihomed hosts (`crate::sctp`), bulk.
    Sctp {
        /// Each path: the link of the sender's interface and of the receiver's interface.
        paths: Vec<SctpPathSpec>,
        /// Index into `paths` of the primary path.
        primary: usize,
        sctp: crate::sctp::SctpSpec,
    },
    /// A ping probe: echo requests every `interval` (`crate::ping`), answered by the
    /// destination; results give each request's RTT and the loss ratio.
    Ping {
        interval: SimDuration,
        /// IP bytes per request and reply.
        packet_size: u32,
        /// DSCP of the requests (replies copy it).
        dscp: u8,
    },
    /// Poisson arrivals of short TCP transfers with random sizes (web-like traffic).
    ShortTcp {
        /// Mean arrivals per second.
        arrival_rate: f64,
        sizes: SizeDist,
        tcp: Arc<TcpSpec>,
    },
}

/// One path of an SCTP association: from the sender's address on link `src_link` to the
/// receiver's address on link `dst_link`.
#[derive(Clone, Debug, PartialEq)]
pub struct SctpPathSpec {
    pub src_link: String,
    pub dst_link: String,
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
pub enum RouteMetric {
    Hops,
    Delay,
}

#[derive(Clone, Debug, PartialEq)]
pub struct RoutingSpec {
    pub metric: RouteMetric,
    /// Explicit routes, applied over the shortest paths.
    pub routes: Vec<RouteSpec>,
    /// The IP time to live hosts give their packets (RFC 791 §3.2), 1 to 255.
    pub ttl: u8,
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
    /// The per-packet trace (None: off).
    pub packets: Option<PacketTraceSpec>,
    /// `pcap`: capture points, (node, `Some(link)` for its interface on that link or `None` for
    /// all its interfaces); one pcap file per interface (`sim/capture.rs`). Empty: none.
    pub pcap: Vec<(String, Option<String>)>,
    /// `pcap_snaplen`: bytes of each packet a capture keeps (the true length is recorded).
    pub pcap_snaplen: u32,
}

/// `[trace] packets`: which packets' events the `packets` table records (`sim/trace.rs`).
#[derive(Clone, Debug, PartialEq)]
pub struct PacketTraceSpec {
    /// Flow names (None: every flow, generated short transfers included).
    pub flows: Option<Vec<String>>,
    /// Link directions: (link name, `Some("a_to_b" | "b_to_a")` or `None` for both); None:
    /// every link.
    pub links: Option<Vec<(String, Option<String>)>>,
    /// Node names (None: every node).
    pub nodes: Option<Vec<String>>,
    /// Rows kept at most; later events are only counted.
    pub max_rows: u64,
}

/// A scheduled change of a link's or an interface's state (`[[events]]`).
#[derive(Clone, Debug, PartialEq)]
pub struct EventSpec {
    /// When it happens, since the run began.
    pub at: SimTime,
    pub target: EventTarget,
    /// The new state: up (true) or down (false).
    pub up: bool,
}

/// What an event switches.
#[derive(Clone, Debug, PartialEq)]
pub enum EventTarget {
    /// Both directions of link `link`.
    Link { link: String },
    /// The interface of node `node` on link `link`: what it sends and what it receives.
    Interface { node: String, link: String },
}
