// SPDX-License-Identifier: MIT
//! The parameters of one TCP connection, owned by the protocol: [`TcpSpec`] with the RFCs'
//! defaults ([`TcpSpec::default`]), two ns-2 releases' ([`TcpSpec::ns2_235`],
//! [`TcpSpec::ns2_2001`]) and ns-3.48's ([`TcpSpec::ns3`]), and the choices inside it
//! ([`Recovery`], [`PrrBound`], [`EcnFeedback`], [`InitialWindow`], [`RecoverGuard`],
//! [`RttSampling`], [`RtoBackoffReset`], [`AckCredit`]).
//!
//! ```text
//!   scenario/parse/tcp.rs ──reads [tcp] and a flow's keys into──> TcpSpec
//!                                                                   │
//!   TcpSender / TcpReceiver (and the I-TCP relay) <──built from─────┘
//!                                 └── TcpSpec.cc + TcpSpec.growth ──> crate::cc::AnyCc
//! ```
//!
//! The congestion-control choice ([`CcAlgorithm`]) and the window-growth rule ([`Growth`]) are
//! the controllers' own types, in [`crate::cc`]: the controllers serve every transport, not
//! only TCP. Nothing here knows about TOML; the scenario layer builds these values and the
//! protocol never looks back at it.

use crate::cc::{CcAlgorithm, CubicConfig, Growth};
use crate::time::{SimDuration, SimTime};

/// How a receiver with ECN on echoes the CE marks it receives (scenario key `ecn`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EcnFeedback {
    /// RFC 3168 §6.1.3 (`ecn = true`): once a CE-marked segment arrives, every ACK carries ECE
    /// until a segment with CWR arrives: one congestion signal per window.
    Rfc3168,
    /// RFC 8257 §3.2 (`ecn = "dctcp"`): an ACK carries ECE exactly when the segments it
    /// acknowledges carried CE; with delayed ACKs an ACK is sent at once when the CE state of
    /// arriving segments changes, so each ACK covers segments of one state. CWR is ignored.
    Dctcp,
}

/// The loss-recovery algorithm run after a fast retransmit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recovery {
    /// RFC 5681 fast retransmit / fast recovery.
    Reno,
    /// RFC 6582 partial-ACK handling.
    NewReno,
    /// RFC 6675 SACK-based loss recovery (receiver sends SACK blocks, RFC 2018).
    Sack,
    /// RFC 6937 Proportional Rate Reduction on top of RFC 6675's SACK recovery: how much may be
    /// sent on each ACK of the recovery follows the data the ACK reports delivered, so the
    /// window comes down to ssthresh over one round trip instead of at once, with the given
    /// reduction bound.
    Prr(PrrBound),
}

/// PRR's reduction bound (RFC 6937 §3): how fast the sender may catch up once the pipe has
/// fallen to ssthresh or below.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrrBound {
    /// PRR-CRB, the conservative reduction bound: never send more than has been delivered
    /// during the recovery (packet conservation, `limit = prr_delivered − prr_out`).
    Conservative,
    /// PRR-SSRB, the slow start reduction bound: one segment more than was delivered on each
    /// ACK, as slow start would (`limit = max(prr_delivered − prr_out, DeliveredData) +
    /// SMSS`). RFC 6937 §3 recommends it. (Linux's `tcp_cwnd_reduction` since 2015 and RFC
    /// 9937 add the segment only on an ACK that advances SND.UNA and reports no new loss.)
    SlowStart,
}

/// The initial congestion window: a fixed number of segments or an RFC's rule by SMSS.
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

/// When a loss may trigger a new congestion response after an earlier one. `recover` is SND.MAX
/// at the last fast retransmit or RTO (RFC 6582's `recover`, RFC 6675's RecoveryPoint).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecoverGuard {
    /// Once SND.UNA reaches `recover` (RFC 6675 §5.1: HighACK ≥ RecoveryPoint). Safe with SACK
    /// only: a duplicate ACK then needs new SACK information (RFC 6675 §2), which the
    /// duplicates of a go-back-N resend after an RTO never carry.
    AtRecoveryPoint,
    /// Only once SND.UNA passes `recover` (ns-2's `bug_fix_`, `highest_ack_ > recover_`). Without
    /// SACK this is what keeps the duplicate ACKs that a go-back-N resend draws from the
    /// receiver, all carrying ACK = `recover`, from starting a second fast retransmit.
    PastRecoveryPoint,
}

/// How the sender takes RTT samples for its RFC 6298 estimator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RttSampling {
    /// From every ACK that completes a segment never retransmitted (Karn's rule), at the
    /// simulator's nanosecond resolution.
    EveryAck,
    /// As ns-2's `Agent/TCP` does: one timed segment at a time (a new one is timed when the
    /// last is acknowledged), the sample counted in whole clock ticks (`clock_granularity`),
    /// and the timing cancelled when anything is retransmitted.
    Ns2,
}

/// When the retransmission timer returns from its exponential back-off (RFC 6298 (5.5)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RtoBackoffReset {
    /// RFC 6298 §5 (the note after (5.7)) with Karn's algorithm: the backed-off RTO stays until
    /// a valid RTT sample is taken, which can only come from data sent and acknowledged after the
    /// retransmissions (or from a timestamp echo); the sample then recomputes it from SRTT and
    /// RTTVAR.
    ValidSample,
    /// ns-3.48's `TcpSocketBase::NewAck`: every ACK of new data that restarts the timer
    /// recomputes the RTO from SRTT and RTTVAR, a valid sample or not (an ACK of retransmitted
    /// data, which Karn's rule keeps out of the estimator, ends the back-off too).
    NewAck,
}

/// How many bytes an ACK credits to window growth (the "bytes acknowledged" of RFC 3465 §2.1
/// and RFC 5681 §3.1), outside loss recovery.
///
/// The two differ only with SACK, when a cumulative ACK covers data the receiver had already
/// reported:
///
/// ```text
///   SND.UNA        hole         SACKed (reported on earlier duplicate ACKs)
///      |<-- 1 segment -->|<------------ 40 segments ------------->|
///      the hole's retransmission arrives: one ACK covers all 41 segments
///      cumulative: credits 41 segments    delivered: credits 1
/// ```
///
/// In slow start with unlimited byte counting the difference is the whole SACKed block added to
/// cwnd at once (docs/validation.md §4, the CUBIC cell).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AckCredit {
    /// RFC 3465 §2.1 and RFC 5681 §3.1: the previously unacknowledged bytes the cumulative ACK
    /// covers, including those already SACKed.
    Cumulative,
    /// Linux's `tcp_cong_control` (`acked_sacked`) and ns-3.48's `ProcessAck`
    /// (`currentDelivered`, from TcpRateOps): the bytes newly delivered by this ACK, cumulatively
    /// or by its SACK blocks, each byte counted once. An ACK that delivers nothing new credits
    /// nothing, and the controller is not called (ns-3's `IncreaseWindow` with no segment adds
    /// nothing in NewReno, HighSpeed, Scalable or CUBIC).
    Delivered,
}

/// What a window reduction counts as the data in flight: the `FlightSize` of RFC 5681 eq. (4)
/// and RFC 6675 §5 step (4.2), or the `pipe` of RFC 6675 §4.
///
/// ```text
///   SND.UNA                                                     SND.MAX
///      |  lost  | in flight | SACKed | in flight | SACKed | in flight |
///      |<------------------------ FlightSize ------------------------>|
///                 pipe = FlightSize − SACKed − lost (plus retransmissions in flight)
/// ```
///
/// With several losses in one window the two part by the SACKed and lost segments: halving
/// `pipe` leaves a smaller ssthresh than halving FlightSize.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SsthreshFlight {
    /// RFC 5681 eq. (4) at an RTO and RFC 6675 (4.2) at the third duplicate ACK: SND.MAX −
    /// SND.UNA (less what Limited Transmit sent, RFC 5681 §3.2 step 2).
    FlightSize,
    /// ns-3.48's `TcpSocketBase`: `EnterRecovery` marks the front segment lost and passes
    /// `BytesInFlight()` (RFC 6675's pipe) to `GetSsThresh`; `ReTxTimeout` passes the pipe as
    /// it was before the timeout, and reduces during fast recovery too (it skips only a
    /// repeated expiry). Applies with SACK recovery only: it needs the scoreboard.
    Pipe,
}

/// What the ACK that ends loss recovery credits to window growth.
///
/// ```text
///   fast recovery:  ... partial ACKs ... | exit ACK (SND.UNA >= RecoveryPoint)
///                                          cwnd = ssthresh   (both)
///                                          + grow by the ACK's advance   (Acked only)
///   after an RTO:   ACKs below the point credit as usual | the ACK past the point credits
///                                                          everything (None) or only the
///                                                          bytes above the point (Acked)
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecoveryExitCredit {
    /// RFC 5681 §3.2 step 6, RFC 6582 §3.2 step 3 and RFC 6675 §5 (A): the ACK that ends fast
    /// recovery deflates cwnd and grows nothing. After an RTO every ACK credits what
    /// `ack_credit` says, the one that passes the recovery point included.
    None,
    /// ns-3.48's `ProcessAck`: the ACK that ends fast recovery (`CA_RECOVERY`) sets cwnd =
    /// ssthresh and then calls `IncreaseWindow` with its whole cumulative advance in whole
    /// segments, SACKed bytes included (`(ackNumber − oldHeadSequence) / segmentSize`). The ACK
    /// that ends an RTO's recovery (`CA_LOSS`) credits only the whole segments above the
    /// recovery point (`(ackNumber − m_recover) / segmentSize`). With a controller whose growth
    /// counts acknowledged segments (Scalable, HighSpeed) the first credit is large: a whole
    /// recovered window at once.
    Acked,
}

/// How the sender decides that a segment is lost (scenario key `loss_detection`). RACK's
/// constants are boxed: the spec is embedded in other configurations (an I-TCP relay's), which
/// stay small, and only a RACK flow pays for them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LossDetection {
    /// By counting (`"dupack"`): DupThresh duplicate ACKs (RFC 5681 §3.2) or, with SACK,
    /// RFC 6675's `IsLost` (more than (DupThresh − 1)·SMSS SACKed above a hole).
    DupAck,
    /// By time (`"rack"`): RFC 8985's RACK, optionally with its tail loss probe. Needs SACK.
    Rack(Box<RackSpec>),
}

/// RACK-TLP's constants (RFC 8985), each a scenario key (docs/scenario.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RackSpec {
    /// reo_wnd = reo_wnd_mult · min_RTT / this (RFC 8985 §6.2 step 4: 4).
    pub min_rtt_divisor: u32,
    /// Recoveries without DSACK after which reo_wnd_mult returns to 1 (RFC 8985 §6.2 step 4:
    /// 16).
    pub reo_wnd_persist: u32,
    /// The tail loss probe (RFC 8985 §7), if on.
    pub tlp: Option<TlpSpec>,
}

impl Default for RackSpec {
    fn default() -> Self {
        RackSpec {
            min_rtt_divisor: 4,
            reo_wnd_persist: 16,
            tlp: None,
        }
    }
}

/// TLP's constants (RFC 8985 §7.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TlpSpec {
    /// PTO = this · SRTT (2).
    pub srtt_multiple: u32,
    /// WCDelAckT, added to the PTO when one segment is in flight: the longest the receiver may
    /// delay its ACK (200 ms, RFC 5681 §4.2's bound on delayed ACKs as RFC 8985 §7.2 takes it).
    pub max_ack_delay: SimDuration,
    /// The PTO before any RTT sample (1 s).
    pub initial_pto: SimDuration,
}

impl Default for TlpSpec {
    fn default() -> Self {
        TlpSpec {
            srtt_multiple: 2,
            max_ack_delay: SimDuration::from_millis(200),
            initial_pto: SimDuration::from_secs(1),
        }
    }
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
    /// When a new loss may reduce the window again (None: `AtRecoveryPoint` with SACK,
    /// `PastRecoveryPoint` without).
    pub recover_guard: Option<RecoverGuard>,
    /// How RTT samples are taken.
    pub rtt_sampling: RttSampling,
    /// RFC 5681 §4.1: after an idle period longer than the RTO, cwnd restarts from at most the
    /// initial window.
    pub restart_after_idle: bool,
    /// RFC 3168 ECN: data segments are sent ECN-capable (ECT(0)), the receiver echoes CE marks
    /// with ECE until the sender's CWR, and the sender reduces its window once per window of
    /// data. Off by default, as RFC 3168 §6.1.1 makes it a negotiated option.
    pub ecn: bool,
    /// How the receiver echoes CE marks when `ecn` is on: RFC 3168's ECE until CWR, or
    /// DCTCP's per-segment echo (RFC 8257 §3.2), which `cc = "dctcp"` needs.
    pub ecn_feedback: EcnFeedback,
    /// With `ecn` on: every segment either end sends is ECT(0) (the SYN, the SYN-ACK, pure
    /// ACKs and retransmissions too), as Linux does for a congestion control that needs ECN
    /// (DCTCP: `tcp_ecn_send_syn` and `tcp_ecn_send` in net/ipv4/tcp_output.c keep ECT where
    /// `tcp_ca_needs_ecn`). Off: only new data is ECT (RFC 3168 §6.1.1, §6.1.4, §6.1.5). A
    /// queue that marks at a low threshold drops the non-ECT rest, so with it off a SYN that
    /// meets a DCTCP queue above K is lost and its flow waits out the handshake's RTO.
    pub ect_all: bool,
    /// An L4S sender (`ecn = "l4s"`): new data carries ECT(1), the L4S identifier (RFC 9331
    /// §4.1), instead of ECT(0), so that a DualPI2 queue (RFC 9332) classifies it into its
    /// low-latency queue; the echo is DCTCP's (`ecn_feedback` Dctcp) and so is the response.
    pub l4s: bool,
    /// Three-way handshake before the first data segment and a FIN exchange after the last
    /// (RFC 9293 §3.5): a transfer's time includes the setup RTT. Off in the `ns2-2001` preset, whose
    /// one-way agents have none.
    pub handshake: bool,
    /// RFC 7323 timestamps: every segment carries TSval and TSecr (12 option bytes), the
    /// receiver echoes TS.Recent by §4.3's rules, and the RTO estimator takes a sample from the
    /// echo of every ACK that advances SND.UNA, retransmitted data included (RTTM, §4.1). Off in
    /// the `rfc` preset: the option is negotiated (§3.2), and the textbook sender assumes no
    /// peer that agreed to it.
    pub timestamps: bool,
    /// One tick of the timestamp clock (RFC 7323 §5.4 recommends 1 ms to 1 s; Linux and ns-3
    /// tick every millisecond). RTTM samples are whole ticks.
    pub timestamp_clock: SimDuration,
    /// When the RTO returns from back-off.
    pub rto_backoff_reset: RtoBackoffReset,
    /// What an ACK credits to window growth.
    pub ack_credit: AckCredit,
    /// A window reduction counted in whole segments: the controller is given cwnd rounded down
    /// to whole segments and its ssthresh is rounded down to whole segments (at least 2), as
    /// Linux computes it (`snd_cwnd` counts packets) and as ns-3.48's `TcpCubic::GetSsThresh`
    /// (`GetCwndInSegments`, then `static_cast<uint32_t>(segCwnd * m_beta)`) and
    /// `TcpHighSpeed`/`TcpScalable` (`static_cast<uint32_t>(segCwnd * b)`) do. Off, it is
    /// computed in bytes, as RFC 5681 eq. (4) and RFC 9438 §4.6 write it. At small windows
    /// the two part by most of a segment per reduction: CUBIC's β = 0.7 of 5.9 segments is
    /// 4.13 segments in bytes, 3 in whole segments (docs/validation.md §4).
    pub whole_segment_ssthresh: bool,
    /// What a reduction counts as the data in flight (SACK recovery only).
    pub ssthresh_flight: SsthreshFlight,
    /// ns-3.48's `ProcessAck` in SACK recovery: a partial ACK whose new front segment has not
    /// been retransmitted yet sends one segment whatever pipe says (`DoRetransmit`: the first
    /// segment deemed lost, else new data, else the front again), before RFC 6675 §5 step
    /// (C) sends by pipe. RFC 6675 sends by pipe alone; RFC 6582 §3.2 step 3 resends the front
    /// on a partial ACK, without SACK. SACK recovery only.
    pub partial_ack_send: bool,
    /// What the ACK that ends loss recovery credits to window growth.
    pub recovery_exit_credit: RecoveryExitCredit,
    /// Pacing: segments leave spaced at a rate instead of in bursts as the ACKs release them
    /// (None: off, every preset's default; on for `cc = "bbr"` unless the scenario says
    /// otherwise).
    pub pacing: Option<PacingSpec>,
    /// RFC 2883 DSACK: the receiver reports a duplicate segment in the first SACK block, and
    /// the sender tells such a block from new SACK information. SACK recovery only. Off by
    /// default so that existing results keep their bits; Linux has it on (`tcp_dsack`).
    pub dsack: bool,
    /// How the sender detects losses: counting duplicates (RFC 5681 / RFC 6675) or RACK-TLP
    /// (RFC 8985).
    pub loss_detection: LossDetection,
}

/// How a paced sender spaces its segments (`pacing = true`, docs/tcp.md "Pacing").
///
/// The rate is the controller's when it sets one (BBR), else Linux's default for any
/// controller (`tcp_update_pacing_rate` in net/ipv4/tcp_input.c): a ratio of the current rate
/// cwnd / SRTT, `ss_ratio` while cwnd < ssthresh / 2, `ca_ratio` after, with
/// max(cwnd, FlightSize) for cwnd. A segment of `size` wire bytes pushes the next departure
/// `size / rate` later.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PacingSpec {
    /// Linux's `tcp_pacing_ss_ratio` (200 %) as a factor.
    pub ss_ratio: f64,
    /// Linux's `tcp_pacing_ca_ratio` (120 %) as a factor.
    pub ca_ratio: f64,
    /// How many segments may leave back to back when the sender has fallen behind its pacing
    /// schedule (the depth of a token bucket, in segments). 2, as the fq qdisc's default
    /// `quantum` of 2 MTU: a delayed ACK that releases two segments at a time below the pacing
    /// rate then wakes no timer.
    pub quantum: u32,
    /// How many of the connection's first data segments leave unpaced: Linux's TCP paces none of
    /// the first 10 (`tcp_update_skb_after_send`: `data_segs_out >= 10`), which is also fq's
    /// `initial_quantum` of 10 MTU: the initial window goes out as a burst.
    pub initial_quantum: u32,
}

impl Default for PacingSpec {
    fn default() -> Self {
        PacingSpec {
            ss_ratio: 2.0,
            ca_ratio: 1.2,
            quantum: 2,
            initial_quantum: 10,
        }
    }
}

impl TcpSpec {
    /// The ECN-capable codepoint this flow's segments carry where they are ECT: ECT(1) for an
    /// L4S sender (RFC 9331 §4.1), ECT(0) otherwise (RFC 3168 §5).
    pub fn ect(&self) -> u8 {
        if self.l4s {
            crate::packet::ECN_ECT1
        } else {
            crate::packet::ECN_ECT0
        }
    }

    /// RACK's constants, if this flow detects losses by RACK.
    pub fn rack(&self) -> Option<&RackSpec> {
        match &self.loss_detection {
            LossDetection::Rack(r) => Some(r),
            LossDetection::DupAck => None,
        }
    }
}

impl Default for TcpSpec {
    /// RFC defaults: NewReno, MSS 1460, IW per RFC 5681, RFC 5681's recommended window growth
    /// (byte counting), Limited Transmit (RFC 5681 §3.2 step 1 and RFC 3042 §2: SHOULD), RTO 1 s
    /// initial and minimum, 60 s cap, delayed ACKs every 2nd segment or 200 ms. docs/tcp.md §10
    /// audits every value against its RFC.
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
            // RFC 5681 §3.1's RECOMMENDED rules: min(N, SMSS) per ACK in slow start (eq. (2),
            // byte counting with L = 1) and byte counting in congestion avoidance.
            growth: Growth::ByteCounting { limit_segments: 1 },
            dupthresh: 3,
            limited_transmit: true,
            delayed_ack: true,
            delack_timeout: SimDuration::from_millis(200),
            delack_count: 2,
            max_sack_blocks: 4,
            rto_initial: SimDuration::from_secs(1),
            rto_min: SimDuration::from_secs(1),
            rto_max: SimDuration::from_secs(60),
            clock_granularity: SimDuration::ZERO,
            recover_guard: None,
            rtt_sampling: RttSampling::EveryAck,
            restart_after_idle: true,
            ecn: false,
            ecn_feedback: EcnFeedback::Rfc3168,
            ect_all: false,
            l4s: false,
            handshake: true,
            timestamps: false,
            timestamp_clock: SimDuration::from_millis(1),
            rto_backoff_reset: RtoBackoffReset::ValidSample,
            // RFC 3465 §2.1 counts "previously unacknowledged bytes": SACKed ones included.
            ack_credit: AckCredit::Cumulative,
            // RFC 5681 eq. (4) and RFC 9438 §4.6 in bytes.
            whole_segment_ssthresh: false,
            // RFC 5681 eq. (4), RFC 6675 (4.2).
            ssthresh_flight: SsthreshFlight::FlightSize,
            // RFC 6675 §5 sends by pipe alone.
            partial_ack_send: false,
            // RFC 5681 §3.2 step 6, RFC 6675 §5 (A): the exit ACK only deflates.
            recovery_exit_credit: RecoveryExitCredit::None,
            pacing: None,
            dsack: false,
            loss_detection: LossDetection::DupAck,
        }
    }
}

impl TcpSpec {
    /// ns-2.35's one-way `Agent/TCP/Reno` and `TCPSink` as its `tcl/lib/ns-default.tcl` (2011)
    /// leaves them: `windowInit_ 2`, `window_` and `ssthresh_` 20 packets, per-ACK growth,
    /// `syn_ true` (the first packet stands for a SYN: a handshake here), `singledup_ 1`
    /// (limited transmit), `slow_start_restart_ true`, RFC 2988 timers with `tcpTick_` 10 ms,
    /// `minrto_` 200 ms, `rtxcur_init_` 3 s and `maxrto_` 60 s, `useHeaders_ true` (40 B of
    /// TCP/IP header on every packet), no delayed ACKs, `maxSackBlocks_` 3.
    pub fn ns2_235() -> Self {
        let mss = 1000;
        TcpSpec {
            recovery: Recovery::Reno,
            mss,
            initial_window: InitialWindow::Segments(2),
            initial_ssthresh: Some(20 * mss as u64),
            max_window: Some(20 * mss as u64),
            growth: Growth::PerAck,
            limited_transmit: true,
            delayed_ack: false,
            delack_timeout: SimDuration::from_millis(100),
            rto_initial: SimDuration::from_secs(3),
            rto_min: SimDuration::from_millis(200),
            rto_max: SimDuration::from_secs(60),
            clock_granularity: SimDuration::from_millis(10),
            max_sack_blocks: 3,
            recover_guard: Some(RecoverGuard::PastRecoveryPoint),
            rtt_sampling: RttSampling::Ns2,
            restart_after_idle: true,
            handshake: true,
            ..TcpSpec::default()
        }
    }

    /// The ns-2 of early 2001 (ns-2.1b7a and ns-2.1b8: `tcp/tcp.cc` before the RFC 2988 timer
    /// of 2002 and `tcl/lib/ns-default.tcl` before `minrto_` was added on 2001-05-10), which
    /// papers of that year ran: `windowInit_ 1`, `window_` and `ssthresh_` 20 packets, per-ACK
    /// growth, `syn_ false` (no handshake), `singledup_ 0` (no limited transmit),
    /// `slow_start_restart_ true`, `tcpTick_` 100 ms, `rtxcur_init_` 6 s, no `minrto_` (the
    /// RTO's floor is two ticks, 200 ms), no delayed ACKs, `maxSackBlocks_` 3.
    pub fn ns2_2001() -> Self {
        TcpSpec {
            initial_window: InitialWindow::Segments(1),
            limited_transmit: false,
            rto_initial: SimDuration::from_secs(6),
            rto_min: SimDuration::from_millis(200),
            clock_granularity: SimDuration::from_millis(100),
            // `maxrto_ 100000`: no cap worth the name.
            rto_max: SimDuration::from_secs(100_000),
            handshake: false,
            ..TcpSpec::ns2_235()
        }
    }

    /// The timestamp clock at `now`, as a TSval: whole ticks since time zero, modulo 2^32 (the
    /// clock of RFC 7323 §5.4 wraps; both ends of a ccsim connection read the same clock, with
    /// no offset between them).
    pub fn ts_value(&self, now: SimTime) -> u32 {
        (now.as_nanos() / self.timestamp_clock.as_nanos().max(1)) as u32
    }

    /// The RTT an echo (TSecr) of `ecr` measures at `now` (RFC 7323 §4.1), in whole ticks and
    /// at least one: an echo of the current tick says the RTT is below the clock's resolution,
    /// not zero (Linux counts it as one tick too).
    pub fn ts_rtt(&self, now: SimTime, ecr: u32) -> SimDuration {
        let ticks = self.ts_value(now).wrapping_sub(ecr).max(1) as u64;
        SimDuration(ticks * self.timestamp_clock.as_nanos())
    }

    /// SACK blocks one ACK may carry: `max_sack_blocks`, at most three beside the timestamp
    /// option (RFC 2018 §3: the 40 option bytes then hold no fourth).
    pub fn sack_blocks_per_ack(&self) -> usize {
        let room = if self.timestamps { 3 } else { 4 };
        (self.max_sack_blocks as usize).clamp(1, room)
    }

    /// Header bytes of every segment before any SACK option: `header_bytes` and, with
    /// timestamps, the timestamp option.
    pub fn segment_header_bytes(&self) -> u32 {
        self.header_bytes
            + if self.timestamps {
                crate::packet::TIMESTAMP_OPTION_BYTES
            } else {
                0
            }
    }

    /// ns-3.48's TCP as its attributes leave it, as far as ccsim has each mechanism: the
    /// defaults of `TcpSocket`, `TcpSocketBase`, `TcpL4Protocol`, `RttEstimator` and `TcpCubic`
    /// in `src/internet/model/` at tag ns-3.48. Each value and what ccsim cannot follow (PRR,
    /// HyStart, ns-3's giving up after six retransmissions) are in docs/tcp.md §11.
    pub fn ns3() -> Self {
        TcpSpec {
            // `Sack` true. `RecoveryType` is TcpPrrRecovery (RFC 6937); the preset keeps RFC
            // 6675's recovery by pipe, which the validation's matrix was fitted with, and
            // `variant = "prr"` over it follows ns-3's default (docs/tcp.md §11, "PRR").
            recovery: Recovery::Sack,
            // `SocketType` TcpCubic (C 0.4, beta 0.7, fast convergence and TCP friendliness
            // on, as ccsim's CUBIC defaults), in its whole-segment arithmetic (`model = "ns3"`);
            // its HyStart is not modelled.
            cc: CcAlgorithm::Cubic(CubicConfig {
                model: crate::cc::CubicModel::Ns3,
                ..CubicConfig::default()
            }),
            // `SegmentSize`.
            mss: 536,
            initial_window: InitialWindow::Segments(10),
            // `InitialSlowStartThreshold` UINT32_MAX.
            initial_ssthresh: None,
            // `SndBufSize` 131072: a bulk application keeps the send buffer full, so at most
            // that much is ever unacknowledged.
            max_window: Some(131_072),
            // `RcvBufSize`.
            rcv_buffer: 131_072,
            // TcpCubic's `IncreaseWindow`: slow start adds SMSS per segment acknowledged (ABC
            // without a limit, "to approximate QUICKACK"), congestion avoidance counts
            // segments acknowledged.
            growth: Growth::ByteCounting {
                limit_segments: u32::MAX,
            },
            // `ReTxThreshold`, `LimitedTransmit`, `DelAckCount`, `DelAckTimeout`.
            dupthresh: 3,
            limited_transmit: true,
            delayed_ack: true,
            delack_timeout: SimDuration::from_millis(200),
            delack_count: 2,
            // ns-3 fills the option space: 3 blocks beside the timestamps.
            max_sack_blocks: 4,
            // `ConnTimeout` 3 s is the SYN's timer; data always starts with the SYN-ACK's
            // sample.
            rto_initial: SimDuration::from_secs(3),
            // `MinRto`, the 60 s cap of `ReTxTimeout`, `ClockGranularity`.
            rto_min: SimDuration::from_secs(1),
            rto_max: SimDuration::from_secs(60),
            clock_granularity: SimDuration::from_millis(1),
            // `ProcessAck` enters recovery once m_highRxAckMark >= m_recover, SACK or not.
            recover_guard: Some(RecoverGuard::AtRecoveryPoint),
            rtt_sampling: RttSampling::EveryAck,
            // TcpSocketBase has no RFC 5681 §4.1 restart after idle.
            restart_after_idle: false,
            // `UseEcn` Off.
            ecn: false,
            ecn_feedback: EcnFeedback::Rfc3168,
            ect_all: false,
            l4s: false,
            handshake: true,
            // `Timestamp` true; TcpOptionTS::NowToTsValue counts milliseconds.
            timestamps: true,
            timestamp_clock: SimDuration::from_millis(1),
            // `NewAck` recomputes the RTO on every ACK of new data.
            rto_backoff_reset: RtoBackoffReset::NewAck,
            // `ProcessAck` hands the controller `currentDelivered` (TcpRateOps), not the
            // cumulative advance.
            ack_credit: AckCredit::Delivered,
            // TcpNewReno's `GetSsThresh` halves bytes in flight, in bytes; the classes that
            // count whole segments set it (docs/tcp.md §11).
            whole_segment_ssthresh: false,
            // `EnterRecovery` and `ReTxTimeout` pass `BytesInFlight()`.
            ssthresh_flight: SsthreshFlight::Pipe,
            // `ProcessAck`'s `DoRetransmit` on a partial ACK in CA_RECOVERY.
            partial_ack_send: true,
            // `ProcessAck`'s exits from CA_RECOVERY and CA_LOSS call `IncreaseWindow`.
            recovery_exit_credit: RecoveryExitCredit::Acked,
            header_bytes: 40,
            // `TcpSocketState::EnablePacing` false.
            pacing: None,
            // ns-3.48's `TcpSocketBase` sends no DSACK and detects losses by RFC 6675 (its
            // `TcpTxBuffer::IsLost`).
            dsack: false,
            loss_detection: LossDetection::DupAck,
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
