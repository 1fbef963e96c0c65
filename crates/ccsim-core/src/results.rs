// SPDX-License-Identifier: MIT
//! Results as columns, ready to cross into Python (pandas) or Parquet in bulk.
//!
//! A run produces these tables:
//! - `flows`: one row per flow (a short-flow generator adds one row per transfer it started);
//! - `links`: one row per link direction;
//! - `series`: the time series in long form: `time_s, kind, name, metric, value`;
//! - `paths`: one row per path of each multipath flow (SCTP): what went where (empty without);
//! - `agents`: one row per node hook that counts (base-station agents): `node, agent` and
//!   the counters of every agent type present, NaN where a row's agent does not keep one;
//! - `packets`: the per-packet trace of `[trace] packets` (empty unless asked for);
//! - `classes`: one row per DiffServ class of each link direction with class-based queueing
//!   (empty without);
//! - `pings`: one row per echo request of each ping probe, with its RTT (empty without).
//!
//! Column names carry their unit (`_s`, `_bps`, `_bytes`) unless they are counts or ratios.

/// One column of a table. Equality is bitwise for floats (NaN equals NaN): two runs are the
/// same when they produced the same bits.
#[derive(Clone, Debug)]
pub enum Column {
    F64(Vec<f64>),
    U64(Vec<u64>),
    Str(Vec<String>),
}

impl PartialEq for Column {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Column::F64(a), Column::F64(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
            }
            (Column::U64(a), Column::U64(b)) => a == b,
            (Column::Str(a), Column::Str(b)) => a == b,
            _ => false,
        }
    }
}

impl Column {
    pub fn len(&self) -> usize {
        match self {
            Column::F64(v) => v.len(),
            Column::U64(v) => v.len(),
            Column::Str(v) => v.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A table: named columns of equal length, in a fixed order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    pub columns: Vec<(String, Column)>,
}

impl Table {
    pub fn rows(&self) -> usize {
        self.columns.first().map_or(0, |(_, c)| c.len())
    }
    pub fn column(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|(n, _)| n == name).map(|(_, c)| c)
    }
    pub fn f64(&self, name: &str) -> Option<&[f64]> {
        match self.column(name)? {
            Column::F64(v) => Some(v),
            _ => None,
        }
    }
    pub fn u64(&self, name: &str) -> Option<&[u64]> {
        match self.column(name)? {
            Column::U64(v) => Some(v),
            _ => None,
        }
    }
    pub fn str(&self, name: &str) -> Option<&[String]> {
        match self.column(name)? {
            Column::Str(v) => Some(v),
            _ => None,
        }
    }
}

/// Why a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// Simulated time reached the scenario's duration.
    Duration,
    /// Every flow finished and nothing was left to happen.
    Idle,
    /// `limits.max_events` reached.
    EventLimit,
    /// `limits.max_wall_seconds` reached.
    WallLimit,
    /// What grows during the run, the transfers short-flow generators started and the packets
    /// alive (in queues, on links, in hooks), reached what `limits.max_memory` leaves for it.
    MemoryLimit,
    /// The caller asked the run to stop ([`StopSignal`](crate::sim::StopSignal), e.g. on
    /// Ctrl-C). Where it stopped depends on when the request came, so the tables are a partial
    /// run that the same scenario and seed will not reproduce: not a result to keep.
    Interrupted,
}

impl StopReason {
    pub fn as_str(self) -> &'static str {
        match self {
            StopReason::Duration => "duration",
            StopReason::Idle => "idle",
            StopReason::EventLimit => "event_limit",
            StopReason::WallLimit => "wall_limit",
            StopReason::MemoryLimit => "memory_limit",
            StopReason::Interrupted => "interrupted",
        }
    }
}

/// Whole-run figures, for the CLI summary and `ccsim bench`.
#[derive(Clone, Debug, PartialEq)]
pub struct RunSummary {
    pub stop_reason: StopReason,
    /// Simulated time when the run ended, seconds.
    pub sim_seconds: f64,
    /// Events processed by the event loop.
    pub events: u64,
    /// Wall-clock seconds spent building the network and running the event loop.
    pub wall_seconds: f64,
    /// Data-carrying packets put on any link (each hop counts once per link).
    pub data_packets: u64,
    /// Data packets sent by endpoints (each counts once, whatever its path length).
    pub data_packets_sent: u64,
    /// The largest number of packets alive at once (queues, links, hooks).
    pub peak_packets: u64,
    /// The largest number of pending events in the heap.
    pub peak_heap: u64,
    /// Master seed used.
    pub seed: u64,
    /// Packet conservation at the end: created (by endpoints and hooks) = delivered (to
    /// endpoints) + dropped + alive (still in queues, links and hooks).
    pub packets_created: u64,
    pub packets_delivered: u64,
    pub packets_dropped: u64,
    pub packets_alive: u64,
    /// ATM (0 without `[atm]`): cells that crossed a link (one per cell per hop), and the cell
    /// network's own events (not in `events`).
    pub cell_hops: u64,
    pub atm_events: u64,
    /// Packet-trace events past `[trace] packets.max_rows`: counted, not kept.
    pub packets_untraced: u64,
}

/// Everything a run returns.
#[derive(Clone, Debug, PartialEq)]
pub struct RunOutput {
    pub summary: RunSummary,
    pub flows: Table,
    pub links: Table,
    pub series: Table,
    /// ATM (empty without `[atm]`): one row per ABR VC and CBR source, and per ATM port.
    pub atm_vcs: Table,
    pub atm_ports: Table,
    /// One row per path of each multipath flow (SCTP): what went where.
    pub paths: Table,
    /// Counters of node hooks (base-station agents), one row per hook that keeps any.
    pub agents: Table,
    /// The per-packet trace (`[trace] packets`), one row per recorded event.
    pub packets: Table,
    /// One row per DiffServ class of each link direction with class-based queueing.
    pub classes: Table,
    /// One row per echo request of each ping probe.
    pub pings: Table,
}
