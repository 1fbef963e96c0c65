// SPDX-License-Identifier: MIT
//! Differentiated Services (RFC 2474, RFC 2475): the edge's classification, metering and
//! marking. The per-hop behaviours themselves (per-class queues, strict priority, WFQ, DRR,
//! CBWFQ with LLQ, WRED) are queue disciplines of a link direction, in [`crate::queue`].
//!
//! ```text
//!   edge router (node hook, `policer.rs`)             core router (link queue, `queue/`)
//!   classifier ─> meter ─> marker / dropper ─────────> classifier ─> class queues ─> scheduler
//!   (`classifier.rs`) (`meter.rs`: CAR,   (DSCP,        (by DSCP or   (limit, tail/   (priority,
//!                      srTCM, trTCM)       `dscp.rs`)    any field)    RED/WRED)       WFQ, DRR,
//!                                                                                     CBWFQ+LLQ)
//! ```
//!
//! The user's guide is `docs/diffserv.md`.

pub mod classifier;
pub mod dscp;
pub mod meter;
pub mod policer;

pub use classifier::{classify, Ipv4Prefix, MatchSpec, PortRange, Protocol};
pub use meter::{Action, CarLimit, Colour, Meter, MeterSpec, Step, TokenBucket};
pub use policer::{Policer, PolicerRule, PolicerSpec};
