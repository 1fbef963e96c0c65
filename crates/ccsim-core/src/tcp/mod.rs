// SPDX-License-Identifier: MIT
//! TCP: a one-way data sender and its receiver, as two sans-IO endpoints.
//!
//! - [`sender`]: Reno / NewReno / SACK / PRR loss recovery, RFC 6298 timer, any [`crate::cc`]
//!   algorithm;
//! - [`receiver`]: cumulative and selective ACKs, delayed ACKs, finite buffer;
//! - [`recovery`]: what Reno, NewReno, SACK and PRR loss recovery do differently, one file each;
//! - [`scoreboard`]: the sender's segments in flight, SACK and loss marks, `pipe`, NextSeg;
//! - [`rto`]: the RFC 6298 estimator;
//! - [`config`]: [`TcpSpec`], every parameter of a connection, with the RFCs' and ns-2's defaults.

pub mod config;
pub mod receiver;
pub mod recovery;
pub mod rto;
pub mod scoreboard;
pub mod sender;

pub use config::{
    AckCredit, EcnFeedback, InitialWindow, PrrBound, RecoverGuard, Recovery, RecoveryExitCredit,
    RtoBackoffReset, RttSampling, SsthreshFlight, TcpSpec,
};
pub use receiver::{TcpReceiver, TcpReceiverConfig};
pub use sender::{TcpSender, TcpSenderConfig};
