// SPDX-License-Identifier: MIT
//! What a scenario says of one link direction's queue: the discipline and its parameters, as
//! `scenario/parse` reads them and [`super::Queue::new`] builds them. It lives with the queues
//! so that no queue imports the scenario.

use crate::time::Rate;

/// A queue's hard limit, in packets or in bytes (a packet that would pass it is dropped).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueLimit {
    Packets(u64),
    Bytes(u64),
}

/// The discipline of one link direction and its parameters.
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
    /// Step marking at a threshold K on the instantaneous queue (DCTCP, RFC 8257 §3.1): an
    /// arriving packet that finds `k` or more packets (bytes, if `limit` is in bytes) waiting
    /// is CE-marked if ECN-capable and dropped if not (RFC 3168 §5); `limit` is its hard limit.
    Threshold {
        limit: QueueLimit,
        k: u64,
    },
    /// A FIFO whose link is an XCP router port (Katabi et al. 2002): it rewrites the congestion
    /// header of XCP packets (see `xcp_router.rs`); `limit` is its hard limit.
    Xcp {
        limit: QueueLimit,
        /// Efficiency controller gain on spare bandwidth (0.4).
        alpha: f64,
        /// Efficiency controller gain on the persistent queue (0.226).
        beta: f64,
        /// Fraction of traffic shuffled each interval for fairness (0.1).
        gamma: f64,
    },
    /// DiffServ per-class queues and a scheduler (strict priority, WFQ, DRR, CBWFQ with LLQ):
    /// [`super::SchedulerSpec`], read by `parse/diffserv.rs`.
    Scheduler(super::SchedulerSpec),
    /// CoDel (RFC 8289): drops (or marks) at dequeue once the sojourn time has stayed above
    /// `target` for an `interval`; `limit` is its hard limit.
    Codel {
        limit: QueueLimit,
        params: super::CodelParams,
    },
    /// FQ-CoDel (RFC 8290): hashed flow queues served by DRR, CoDel on each; its limits are
    /// its own (packets and bytes over all flow queues).
    FqCodel(super::FqCodelParams),
    /// PIE (RFC 8033): a drop probability updated every `t_update` from the queue delay.
    Pie {
        limit: QueueLimit,
        params: super::PieParams,
    },
    /// DualPI2 (RFC 9332): an L4S queue and a Classic queue coupled through one PI2 base
    /// probability; its shared limit is among its parameters.
    DualPi2(super::DualPi2Params),
    /// A token-bucket shaper: packets leave at `rate` on average, bursts of `burst` bytes.
    Tbf {
        limit: QueueLimit,
        rate: Rate,
        burst: u64,
    },
}
