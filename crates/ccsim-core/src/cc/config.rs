// SPDX-License-Identifier: MIT
//! Which controller a connection runs and how it counts ACKs: [`CcAlgorithm`] (an algorithm
//! with its constants) and [`Growth`] (what one ACK is worth when the window grows).
//!
//! Each algorithm's constants live in its own file with the paper's or RFC's values in
//! `Default` ([`super::CubicConfig`], [`super::HighSpeedConfig`], ...); this enum only picks one.
//! [`super::AnyCc::new`] builds the controller from the two. Transports hold these values in
//! their own configuration ([`crate::tcp::TcpSpec`]), so the controllers depend on no transport
//! and no scenario format.

use super::{
    BbrConfig, BicConfig, CubicConfig, DctcpConfig, ErConfig, FastConfig, HighSpeedConfig,
    HtcpConfig, LedbatConfig, ScalableConfig, VegasConfig, XcpSenderConfig,
};

/// How the congestion window grows per ACK, whatever the algorithm.
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
/// (in the algorithm's file). Windows in the configs are in segments.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CcAlgorithm {
    /// Additive increase, multiplicative decrease of RFC 5681 (used by Reno, NewReno and SACK).
    Reno,
    /// HighSpeed TCP (RFC 3649).
    HighSpeed(HighSpeedConfig),
    /// Scalable TCP (Kelly 2003).
    Scalable(ScalableConfig),
    /// BIC-TCP (Xu, Harfoush, Rhee 2004).
    Bic(BicConfig),
    /// CUBIC (RFC 9438).
    Cubic(CubicConfig),
    /// TCP Vegas (Brakmo, Peterson 1995).
    Vegas(VegasConfig),
    /// FAST TCP (Jin, Wei, Low 2004).
    Fast(FastConfig),
    /// The XCP sender (Katabi, Handley, Rohrs 2002); its window follows the feedback of XCP
    /// router ports (`queue = { type = "xcp" }`).
    Xcp(XcpSenderConfig),
    /// ER-TCP (paper 000): the window follows the explicit rate of the ATM ABR VC under the
    /// flow; needs a route over `[atm]` links.
    Er(ErConfig),
    /// DCTCP (RFC 8257): the ECN window reduction in proportion to the marked fraction; needs
    /// the receiver's per-segment echo (`TcpSpec::ecn_feedback`).
    Dctcp(DctcpConfig),
    /// H-TCP (Leith, Shorten 2004; draft-leith-tcp-htcp-06).
    Htcp(HtcpConfig),
    /// LEDBAT (RFC 6817), a delay-based scavenger.
    Ledbat(LedbatConfig),
    /// BBR v1 (Cardwell et al., ACM Queue 2016; Linux net/ipv4/tcp_bbr.c): a model of the
    /// path's bottleneck bandwidth and minimum RTT sets the pacing rate and cwnd.
    Bbr(BbrConfig),
}
