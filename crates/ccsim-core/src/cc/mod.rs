// SPDX-License-Identifier: MIT
//! The congestion-control trait: how an algorithm plugs into a TCP endpoint.
//!
//! The endpoint (see [`crate::tcp`]) owns the connection state, detects losses and runs loss
//! recovery (Reno, NewReno, SACK); the algorithm only decides how the window grows and how far it
//! falls. The split follows ns-3's `TcpCongestionOps`/`TcpRecoveryOps` and quinn's `Controller`:
//!
//! ```text
//!                 ACK arrives                      loss detected (3 dupacks, RTO, ECN)
//!   endpoint ───────────────> on_ack(ev, &mut w)   endpoint ──> on_congestion(ev) ─> ssthresh
//!      │  (not in recovery)   grows w.cwnd            │          the endpoint applies it and sets
//!      │                                              │          cwnd by its recovery algorithm
//!      └── every data segment sent: on_send(ev, &mut hdr)  (XCP stamps its header)
//! ```
//!
//! Rules every algorithm follows:
//! - it works in **bytes**, never segments (`ev.mss` is there to convert);
//! - it never reads a clock: `now` comes in as an argument;
//! - `on_congestion` *returns* ssthresh and leaves cwnd alone: the endpoint applies it, which
//!   keeps loss recovery in one place and makes undo possible;
//! - queries are nouns ([`CongestionControl::name`], [`CongestionControl::metrics`]).
//!
//! ## How the later algorithms plug in
//! - **Delay-based (FAST, Vegas):** every [`AckEvent`] carries the RTT sample of this ACK (Karn's
//!   rule applied: none for retransmitted data), the smoothed RTT and the minimum RTT seen so far
//!   (`min_rtt`, the base RTT). FAST updates its window once per RTT from `min_rtt / rtt`; Vegas
//!   compares expected and actual rate once per RTT. Both keep their own per-RTT bookkeeping,
//!   using `now` and `ev.snd_una`.
//! - **Explicit rate from a lower layer (ER-TCP over ATM ABR, paper 000, `er.rs`):** the ATM
//!   layer at the sender's host writes the latest backward-RM ER into each ACK it delivers
//!   ([`CcHeader::ExplicitRate`]); it arrives as [`AckEvent::echo`] like XCP's feedback, and
//!   the algorithm derives cwnd from it.
//! - **ECN-proportional (DCTCP, RFC 8257, `dctcp.rs`):** an algorithm that answers `true` to
//!   [`CongestionControl::counts_ecn_acks`] (asked once, when the endpoint is built) is told
//!   every ACK's acknowledged bytes and ECE flag through [`CongestionControl::on_ecn_ack`],
//!   during loss recovery too; the others are never called, so their results and their cost
//!   per ACK do not change.
//! - **Model-based (BBR, `bbr.rs`):** an algorithm that answers `true` to
//!   [`CongestionControl::samples_rate`] (asked once, when the endpoint is built) gets a
//!   delivery-rate sample ([`RateSample`], draft-cheng-iccrg-delivery-rate-estimation, measured
//!   by `tcp/rate.rs`) on every ACK through [`CongestionControl::on_rate_sample`], after loss
//!   detection and in recovery too, and sets cwnd itself there, as Linux's `cong_control` hook
//!   does: the endpoint's recovery algorithm then leaves cwnd alone. Its
//!   [`CongestionControl::pacing_rate`] paces the sender. The others are asked neither, keep no
//!   per-segment rate state and pay nothing per ACK.
//! - **Router-assisted (XCP):** the algorithm writes its cwnd and RTT into the packet's
//!   [`CcHeader`] in [`CongestionControl::on_send`]; routers lower the feedback field on the way;
//!   the receiver echoes the header into the ACK, which arrives as [`AckEvent::echo`]; `on_ack`
//!   applies the feedback to `w.cwnd`.

pub mod bbr;
pub mod bic;
mod common;
pub mod config;
pub mod cubic;
mod cubic_ns3;
pub mod dctcp;
pub mod er;
pub mod fast;
pub mod highspeed;
pub mod htcp;
pub mod ledbat;
#[cfg(test)]
mod property;
pub mod reno;
pub mod scalable;
#[cfg(test)]
mod testkit;
pub mod vegas;
pub mod xcp;

use crate::packet::CcHeader;
use crate::rng::RngStream;
use crate::time::{SimDuration, SimTime};

pub use bbr::{Bbr, BbrConfig, BbrMode};
pub use bic::{Bic, BicConfig, LowWindowGrowth};
pub use config::{CcAlgorithm, Growth};
pub use cubic::{Cubic, CubicConfig, CubicModel};
pub use dctcp::{Dctcp, DctcpConfig};
pub use er::{ErConfig, ErTcp};
pub use fast::{Fast, FastConfig};
pub use highspeed::{HighSpeed, HighSpeedConfig};
pub use htcp::{Htcp, HtcpConfig, HtcpModel};
pub use ledbat::{Ledbat, LedbatConfig};
pub use reno::{Reno, RenoConfig};
pub use scalable::{Scalable, ScalableConfig};
pub use vegas::{Vegas, VegasConfig};
pub use xcp::{XcpSender, XcpSenderConfig};

/// The part of the endpoint's state an algorithm may change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    /// Congestion window, bytes.
    pub cwnd: u64,
    /// Slow-start threshold, bytes (`u64::MAX`: not yet set).
    pub ssthresh: u64,
}

impl Window {
    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }
}

/// An ACK that advanced SND.UNA while the endpoint was not in loss recovery.
#[derive(Clone, Copy, Debug)]
pub struct AckEvent {
    /// Bytes this ACK credits to window growth, > 0: those it newly acknowledges cumulatively
    /// (RFC 3465 §2.1), or, for a TCP with `ack_credit = "delivered"`, those it newly delivers
    /// cumulatively or by SACK (`tcp::config::AckCredit`).
    pub bytes_acked: u64,
    /// SND.UNA after this ACK.
    pub snd_una: u64,
    /// SND.MAX - SND.UNA after this ACK, bytes.
    pub flight_size: u64,
    /// Sender maximum segment size, bytes.
    pub mss: u64,
    /// RTT measured by this ACK (None: no valid sample, e.g. retransmitted data, Karn's rule).
    pub rtt_sample: Option<SimDuration>,
    /// Smoothed RTT (RFC 6298), if any sample has been taken.
    pub srtt: Option<SimDuration>,
    /// Smallest RTT sample so far: the base RTT of delay-based algorithms.
    pub min_rtt: Option<SimDuration>,
    /// The congestion header the receiver echoed (XCP feedback); `CcHeader::None` otherwise.
    pub echo: CcHeader,
}

/// What one ACK says about ECN, for an algorithm that counts marked bytes (DCTCP, RFC 8257
/// §3.3). Sent for every ACK, duplicate or not, in or out of loss recovery.
#[derive(Clone, Copy, Debug)]
pub struct EcnAck {
    /// Bytes this ACK newly acknowledges cumulatively (0 for a duplicate ACK).
    pub bytes_acked: u64,
    /// The ACK carries ECN-Echo.
    pub ece: bool,
    /// SND.UNA after this ACK.
    pub snd_una: u64,
    /// SND.NXT: the highest sequence number sent so far plus one (SND.MAX).
    pub snd_nxt: u64,
}

/// The endpoint's loss-recovery state as a rate-sampling controller sees it (Linux's
/// `icsk_ca_state`, the three states BBR v1 tells apart).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaState {
    /// No loss being repaired.
    Open,
    /// Fast recovery (a fast retransmit until the recovery point is acknowledged).
    Recovery,
    /// After a retransmission timeout, until SND.UNA passes what was outstanding at it.
    Loss,
}

/// One ACK's delivery-rate sample (draft-cheng-iccrg-delivery-rate-estimation §3.3) and the
/// connection state a model-based controller reads with it. Bytes, not packets.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateSample {
    /// Bytes delivered over `interval` (rs.delivered).
    pub delivered: u64,
    /// The sample's interval, max(send_elapsed, ack_elapsed) (rs.interval); ZERO: this ACK
    /// gives no valid sample (it delivered nothing new, or the interval is shorter than the
    /// minimum RTT, which the draft §3.3 discards as an ACK compression artefact).
    pub interval: SimDuration,
    /// C.delivered when the most recently sent of the segments this ACK delivered was sent
    /// (rs.prior_delivered): a round trip ends when it reaches the C.delivered of the round's
    /// start.
    pub prior_delivered: u64,
    /// C.delivered after this ACK: every byte delivered so far, cumulatively or by SACK.
    pub delivered_total: u64,
    /// When C.delivered last grew (C.delivered_time).
    pub delivered_time: SimTime,
    /// The delivered segments were sent while the sender was application-limited (§3.4).
    pub is_app_limited: bool,
    /// RTT of the most recently sent segment this ACK delivered, unless it was retransmitted.
    pub rtt: Option<SimDuration>,
    /// Bytes this ACK newly delivered, cumulatively or by SACK.
    pub acked_sacked: u64,
    /// Bytes this ACK newly marked lost.
    pub losses: u64,
    /// RFC 6675 pipe before this ACK.
    pub prior_in_flight: u64,
    /// RFC 6675 pipe after it (before anything it releases is sent).
    pub in_flight: u64,
    pub mss: u64,
    /// Smoothed RTT (RFC 6298), if any sample has been taken.
    pub srtt: Option<SimDuration>,
    pub ca_state: CaState,
}

/// What signalled congestion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CongestionKind {
    /// Fast retransmit: DupThresh duplicate ACKs or SACK loss detection.
    DupAck,
    /// The retransmission timer expired (first expiry for this data only).
    Rto,
    /// An ECN echo (RFC 3168).
    Ecn,
}

#[derive(Clone, Copy, Debug)]
pub struct CongestionEvent {
    pub kind: CongestionKind,
    /// FlightSize when the loss was detected (RFC 5681 eq. (4)), bytes.
    pub flight_size: u64,
    /// The window before the reduction.
    pub window: Window,
    pub mss: u64,
}

/// A data segment is about to be sent.
#[derive(Clone, Copy, Debug)]
pub struct SendEvent {
    pub seq: u64,
    pub len: u32,
    pub is_retransmission: bool,
    pub window: Window,
    pub srtt: Option<SimDuration>,
}

/// Internal state an algorithm exposes for traces; units in the field names.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct CcMetrics {
    /// Bytes acknowledged towards the next congestion-avoidance increase (byte counting).
    pub bytes_acked_accumulator: u64,
}

/// A congestion-control algorithm. Object-safe, so an algorithm can be chosen by name at run
/// time; built-ins are dispatched through [`AnyCc`] to avoid the indirection on the hot path.
pub trait CongestionControl {
    /// Short lower-case name, as in scenario files (`"reno"`).
    fn name(&self) -> &'static str;

    /// An ACK advanced SND.UNA outside loss recovery: grow `w.cwnd` (slow start or congestion
    /// avoidance). Not called for duplicate ACKs nor during fast recovery, where the endpoint's
    /// recovery algorithm owns cwnd.
    fn on_ack(&mut self, now: SimTime, ev: &AckEvent, w: &mut Window);

    /// Congestion was detected: return the new ssthresh in bytes. Must not return less than
    /// `2 * ev.mss` (RFC 5681 eq. (4)'s floor keeps the ACK clock alive).
    fn on_congestion(&mut self, now: SimTime, ev: &CongestionEvent) -> u64;

    /// Loss recovery ended (the recovery point was acknowledged).
    fn on_recovery_end(&mut self, _now: SimTime, _w: &mut Window) {}

    /// A data segment is leaving: an algorithm that carries a header (XCP) writes it here.
    fn on_send(&mut self, _now: SimTime, _ev: &SendEvent, _hdr: &mut CcHeader) {}

    /// Whether the endpoint must call [`CongestionControl::on_ecn_ack`] for every ACK. Asked
    /// once, when the endpoint is built.
    fn counts_ecn_acks(&self) -> bool {
        false
    }

    /// An ACK arrived (only if [`CongestionControl::counts_ecn_acks`]): its acknowledged
    /// bytes and ECE flag, before any window reduction it causes.
    fn on_ecn_ack(&mut self, _ev: &EcnAck) {}

    /// Whether the endpoint must measure the delivery rate and call
    /// [`CongestionControl::on_rate_sample`] on every ACK; such a controller sets cwnd itself
    /// and the endpoint's recovery algorithm leaves it alone. Asked once, when the endpoint is
    /// built.
    fn samples_rate(&self) -> bool {
        false
    }

    /// An ACK arrived (only if [`CongestionControl::samples_rate`]), after the endpoint's loss
    /// detection and before it sends: the rate sample and state; set `w.cwnd` (and
    /// `w.ssthresh` if the algorithm keeps one).
    fn on_rate_sample(&mut self, _now: SimTime, _rs: &RateSample, _w: &mut Window) {}

    /// The rate the algorithm wants its segments paced at, bytes per second (None: the
    /// endpoint's own pacing rule, if pacing is on).
    fn pacing_rate(&self) -> Option<u64> {
        None
    }

    /// A random stream of the flow's own (`flow/<name>/cc`), for an algorithm that draws (BBR's
    /// first ProbeBW phase). Given once, at build, and only to a controller that asks for
    /// it with [`CongestionControl::draws`], so no other stream is derived.
    fn take_stream(&mut self, _rng: RngStream) {}

    /// Whether the algorithm draws random numbers ([`CongestionControl::take_stream`]).
    fn draws(&self) -> bool {
        false
    }

    /// After [`CongestionControl::on_rate_sample`]: the algorithm asks that what is sent from
    /// now on be sampled as application-limited (BBR's ProbeRTT: its low rate is not the
    /// path's).
    fn app_limited_now(&self) -> bool {
        false
    }

    fn metrics(&self) -> CcMetrics {
        CcMetrics::default()
    }
}

/// The built-in algorithms, dispatched without a vtable.
#[derive(Clone, Debug)]
pub enum AnyCc {
    Reno(Reno),
    HighSpeed(HighSpeed),
    Scalable(Scalable),
    Bic(Bic),
    Cubic(Cubic),
    Vegas(Vegas),
    Fast(Fast),
    Xcp(XcpSender),
    /// ER-TCP over ATM ABR (paper 000).
    Er(ErTcp),
    /// DCTCP (RFC 8257).
    Dctcp(Dctcp),
    /// H-TCP (Leith, Shorten 2004).
    Htcp(Htcp),
    Ledbat(Ledbat),
    /// BBR v1 (Cardwell et al. 2016, Linux tcp_bbr.c).
    Bbr(Box<Bbr>),
}

impl AnyCc {
    /// The controller a flow's TCP spec names. `growth` is the flow's ACK-counting rule: Reno's
    /// growth rule, which the other algorithms also use for their Reno parts and to count ACKs.
    pub fn new(cc: &CcAlgorithm, growth: Growth) -> AnyCc {
        match *cc {
            CcAlgorithm::Reno => AnyCc::Reno(RenoConfig { growth }.build()),
            CcAlgorithm::HighSpeed(c) => AnyCc::HighSpeed(c.build(growth)),
            CcAlgorithm::Scalable(c) => AnyCc::Scalable(c.build(growth)),
            CcAlgorithm::Bic(c) => AnyCc::Bic(c.build(growth)),
            CcAlgorithm::Cubic(c) => AnyCc::Cubic(c.build(growth)),
            CcAlgorithm::Vegas(c) => AnyCc::Vegas(c.build(growth)),
            CcAlgorithm::Fast(c) => AnyCc::Fast(c.build(growth)),
            // XCP has no slow start nor ACK counting: the routers set the window.
            CcAlgorithm::Xcp(c) => AnyCc::Xcp(c.build()),
            CcAlgorithm::Er(c) => AnyCc::Er(c.build(growth)),
            CcAlgorithm::Dctcp(c) => AnyCc::Dctcp(c.build(growth)),
            CcAlgorithm::Htcp(c) => AnyCc::Htcp(c.build(growth)),
            CcAlgorithm::Ledbat(c) => AnyCc::Ledbat(c.build(growth)),
            // Boxed: its model is larger than the enum's three lines (tcp/sender.rs, "Layout").
            CcAlgorithm::Bbr(c) => AnyCc::Bbr(Box::new(c.build())),
        }
    }

    fn inner(&mut self) -> &mut dyn CongestionControl {
        match self {
            AnyCc::Reno(c) => c,
            AnyCc::HighSpeed(c) => c,
            AnyCc::Scalable(c) => c,
            AnyCc::Bic(c) => c,
            AnyCc::Cubic(c) => c,
            AnyCc::Vegas(c) => c,
            AnyCc::Fast(c) => c,
            AnyCc::Xcp(c) => c,
            AnyCc::Er(c) => c,
            AnyCc::Dctcp(c) => c,
            AnyCc::Htcp(c) => c,
            AnyCc::Ledbat(c) => c,
            AnyCc::Bbr(c) => c.as_mut(),
        }
    }
    fn inner_ref(&self) -> &dyn CongestionControl {
        match self {
            AnyCc::Reno(c) => c,
            AnyCc::HighSpeed(c) => c,
            AnyCc::Scalable(c) => c,
            AnyCc::Bic(c) => c,
            AnyCc::Cubic(c) => c,
            AnyCc::Vegas(c) => c,
            AnyCc::Fast(c) => c,
            AnyCc::Xcp(c) => c,
            AnyCc::Er(c) => c,
            AnyCc::Dctcp(c) => c,
            AnyCc::Htcp(c) => c,
            AnyCc::Ledbat(c) => c,
            AnyCc::Bbr(c) => c.as_ref(),
        }
    }
}

impl CongestionControl for AnyCc {
    fn name(&self) -> &'static str {
        self.inner_ref().name()
    }
    #[inline]
    fn on_ack(&mut self, now: SimTime, ev: &AckEvent, w: &mut Window) {
        match self {
            AnyCc::Reno(c) => c.on_ack(now, ev, w),
            AnyCc::HighSpeed(c) => c.on_ack(now, ev, w),
            AnyCc::Scalable(c) => c.on_ack(now, ev, w),
            AnyCc::Bic(c) => c.on_ack(now, ev, w),
            AnyCc::Cubic(c) => c.on_ack(now, ev, w),
            AnyCc::Vegas(c) => c.on_ack(now, ev, w),
            AnyCc::Fast(c) => c.on_ack(now, ev, w),
            AnyCc::Xcp(c) => c.on_ack(now, ev, w),
            AnyCc::Er(c) => c.on_ack(now, ev, w),
            AnyCc::Dctcp(c) => c.on_ack(now, ev, w),
            AnyCc::Htcp(c) => c.on_ack(now, ev, w),
            AnyCc::Ledbat(c) => c.on_ack(now, ev, w),
            AnyCc::Bbr(c) => c.on_ack(now, ev, w),
        }
    }
    fn on_congestion(&mut self, now: SimTime, ev: &CongestionEvent) -> u64 {
        self.inner().on_congestion(now, ev)
    }
    fn on_recovery_end(&mut self, now: SimTime, w: &mut Window) {
        self.inner().on_recovery_end(now, w)
    }
    #[inline]
    fn on_send(&mut self, now: SimTime, ev: &SendEvent, hdr: &mut CcHeader) {
        match self {
            AnyCc::Reno(c) => c.on_send(now, ev, hdr),
            AnyCc::HighSpeed(c) => c.on_send(now, ev, hdr),
            AnyCc::Scalable(c) => c.on_send(now, ev, hdr),
            AnyCc::Bic(c) => c.on_send(now, ev, hdr),
            AnyCc::Cubic(c) => c.on_send(now, ev, hdr),
            AnyCc::Vegas(c) => c.on_send(now, ev, hdr),
            AnyCc::Fast(c) => c.on_send(now, ev, hdr),
            AnyCc::Xcp(c) => c.on_send(now, ev, hdr),
            AnyCc::Er(c) => c.on_send(now, ev, hdr),
            AnyCc::Dctcp(c) => c.on_send(now, ev, hdr),
            AnyCc::Htcp(c) => c.on_send(now, ev, hdr),
            AnyCc::Ledbat(c) => c.on_send(now, ev, hdr),
            AnyCc::Bbr(c) => c.on_send(now, ev, hdr),
        }
    }
    fn counts_ecn_acks(&self) -> bool {
        self.inner_ref().counts_ecn_acks()
    }
    fn on_ecn_ack(&mut self, ev: &EcnAck) {
        self.inner().on_ecn_ack(ev)
    }
    fn samples_rate(&self) -> bool {
        self.inner_ref().samples_rate()
    }
    fn on_rate_sample(&mut self, now: SimTime, rs: &RateSample, w: &mut Window) {
        self.inner().on_rate_sample(now, rs, w)
    }
    fn pacing_rate(&self) -> Option<u64> {
        self.inner_ref().pacing_rate()
    }
    fn take_stream(&mut self, rng: RngStream) {
        self.inner().take_stream(rng)
    }
    fn draws(&self) -> bool {
        self.inner_ref().draws()
    }
    fn app_limited_now(&self) -> bool {
        self.inner_ref().app_limited_now()
    }
    fn metrics(&self) -> CcMetrics {
        self.inner_ref().metrics()
    }
}
