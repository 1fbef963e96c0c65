// SPDX-License-Identifier: MIT
//! TCP: a one-way data sender and its receiver, as two sans-IO endpoints.
//!
//! - [`sender`]: Reno / NewReno / SACK / PRR loss recovery, RFC 6298 timer, any [`crate::cc`]
//!   algorithm;
//! - [`receiver`]: cumulative and selective ACKs, delayed ACKs, finite buffer;
//! - [`recovery`]: what Reno, NewReno, SACK and PRR loss recovery do differently, one file each;
//! - [`scoreboard`]: the sender's segments in flight, SACK and loss marks, `pipe`, NextSeg;
//! - [`rate`]: delivery-rate samples (draft-cheng-iccrg-delivery-rate-estimation) for a
//!   controller that asks for them (BBR), with its own per-segment state;
//! - [`rto`]: the RFC 6298 estimator;
//! - [`rack`]: RACK-TLP's state (RFC 8985): time-based loss detection and the tail loss probe;
//! - [`config`]: [`TcpSpec`], every parameter of a connection, with the RFCs' and ns-2's defaults.

pub mod config;
pub mod rack;
pub mod rate;
pub mod receiver;
pub mod recovery;
pub mod rto;
pub mod scoreboard;
pub mod sender;

pub use config::{
    AckCredit, EcnFeedback, InitialWindow, LossDetection, PacingSpec, PrrBound, RackSpec,
    RecoverGuard, Recovery, RecoveryExitCredit, RtoBackoffReset, RttSampling, SsthreshFlight,
    TcpSpec, TlpSpec,
};
pub use receiver::{TcpReceiver, TcpReceiverConfig};
pub use sender::{TcpSender, TcpSenderConfig};

use crate::time::SimTime;

/// "Not armed" / "never" for the endpoints' times kept as plain [`SimTime`]s instead of
/// `Option<SimTime>` (8 bytes instead of 16 on their per-packet cache lines: `sender.rs` and
/// `receiver.rs`, "Layout"). No real time reaches it: a run ends by `MAX_SCENARIO_DURATION`
/// (2^62 ns) and every duration added to a time is below that too, so a sum saturates at most
/// to 2^63.
pub(crate) const NO_TIME: SimTime = SimTime::MAX;
/// "None" for a sequence point kept as a plain `u64` (the sender's `reduction_point`, the
/// receiver's `fin_at`): no sequence number reaches 2^64 − 1 (16 EiB sent).
pub(crate) const NO_POINT: u64 = u64::MAX;

/// `t` as an option: [`NO_TIME`] is `None`.
pub(crate) fn time_opt(t: SimTime) -> Option<SimTime> {
    (t != NO_TIME).then_some(t)
}

/// `p` as an option: [`NO_POINT`] is `None`.
pub(crate) fn point_opt(p: u64) -> Option<u64> {
    (p != NO_POINT).then_some(p)
}
