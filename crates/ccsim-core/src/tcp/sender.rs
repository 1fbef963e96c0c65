// SPDX-License-Identifier: MIT
//! TCP sender: one-way bulk or finite transfer, with Reno (RFC 5681), NewReno (RFC 6582),
//! SACK-based (RFC 6675) or PRR (RFC 6937) loss recovery, the RFC 6298 retransmission timer,
//! and a pluggable congestion-control algorithm ([`crate::cc`]).
//!
//! With `handshake` (the `rfc` preset), the connection opens with a SYN and the receiver's
//! SYN-ACK before the first data segment (the third segment of the handshake travels with the
//! data, as it does when the client has data to send), and the last data segment of a finite
//! transfer carries FIN; the receiver answers with FIN-ACK and the sender's last ACK closes
//! (RFC 9293 §3.5, §3.6). A transfer's time then includes the setup RTT. Without it (the `ns2`
//! preset, whose one-way agents have none) the connection starts established. Control segments
//! take no sequence space here: data bytes are numbered from 0 either way.
//!
//! ```text
//!   ACK ──> scoreboard (cumulative ACK, SACK blocks, loss marks; reneging check)
//!       ├─ new data acked:  outside recovery → cc.on_ack grows cwnd
//!       │                   in recovery      → recovery point reached: it ends;
//!       │                                      partial ACK: the algorithm says (tcp::recovery)
//!       ├─ duplicate ACK?   the algorithm's definition (RFC 5681 §2 / RFC 6675 §2)
//!       ├─ DCTCP only:      cc.on_ecn_ack(bytes acked, ECE) on every ACK (RFC 8257 §3.3)
//!       ├─ ECN-Echo:        cc.on_congestion(Ecn), once per window (RFC 3168, RFC 8257 §3.4)
//!       ├─ loss detected:   DupThresh dupacks or a segment deemed lost, and the window not
//!       │                   reduced for it yet → cc.on_congestion(DupAck) → fast retransmit
//!       ├─ PRR only:        in recovery, cwnd = pipe + sndcnt from the bytes this ACK
//!       │                   delivered (RFC 6937 §3, tcp::recovery::Prr)
//!       ├─ BBR only:        the ACK's delivery-rate sample (tcp::rate) → cc.on_rate_sample sets
//!       │                   cwnd, in recovery too (the recovery algorithm's window rules are
//!       │                   skipped), and the pacing rate
//!       └─ transmit(): NextSeg order (lost segments, new data, rule 3, rescue) while pipe + len
//!                      ≤ window; paced: and the departure time has come, else the deadline is
//!                      that time
//!   RTO ──> cc.on_congestion(Rto) (first expiry only), cwnd = 1 SMSS, everything unSACKed lost
//!   deadline ──> pacing's departure time: transmit(); the RTO's: as above
//! ```
//!
//! With `loss_detection = "rack"` ([`crate::tcp::rack`], RFC 8985) RACK marks segments lost by
//! time instead of RFC 6675's IsLost and the duplicate count, the reordering timer and the tail
//! loss probe share the endpoint's one deadline with the RTO, and a DSACK block (`dsack`,
//! RFC 2883) is told from new SACK information.
//!
//! One sending rule serves every variant: send while `pipe + len ≤ min(cwnd, max_window)`, where
//! `pipe` is RFC 6675's estimate (for Reno and NewReno, which have no SACK information, it equals
//! SND.MAX − SND.UNA during fast recovery, so the inflated cwnd of RFC 5681 §3.2 step 4 works as
//! the RFC describes). What differs between Reno, NewReno and SACK recovery lives in
//! [`crate::tcp::recovery`], one file each. The full model, with every departure from the RFCs
//! and from ns-2, is described in `docs/tcp.md`.
//!
//! # Layout
//!
//! An ACK reads and writes a few dozen of the sender's fields: the window, SND.UNA and the
//! pipe terms, the duplicate count, the recovery state, the RTT estimator, the timer, a few
//! counters and the controller's state; the segments it releases read the addresses and the
//! spec. Where a run has many flows (F10000, F100000: tens of thousands of senders, each
//! seeing an ACK only now and then) every cache line of a sender that an ACK touches is a miss
//! of its own. So [`TcpSender`] is laid out by hand (`repr(C)`, aligned to a line), and so are
//! the parts it holds (`RtoEstimator`, `TcpSenderConfig`, `FlowCounters`, the `Scoreboard`'s
//! head):
//!
//! ```text
//!   line  0  cwnd ssthresh mss peer_rwnd app_limit rto_deadline last_send limited_tx ┐
//!   line  1  min_rtt rto_point reduction_point episode dupacks ts_recent flags algo  │
//!   line  2  rto: srtt rttvar base_rto backoff, min max granularity                  │ an ACK
//!   line  3  cfg: spec addresses ports flow stop size                                │ and its
//!   line  5  counters: rtt sums, bytes and packets sent                              │ segments
//!   line  8  cc: the controller's tag and state (all of Reno's)                      │
//!   line 11  board: snd_una snd_max segs sacked_bytes lost_bytes                     │
//!   line 12  board: retx_bytes lost_upto rxt_next rule3_next sacked mss              ┘
//!   line  4  cfg.start; PRR's counters, ns-2's timed segment, ecn_point             variants
//!   lines 6, 7       the other counters                                              rare
//!   lines 9, 10      the larger controllers' state (CUBIC, Vegas, XCP, ...)
//!   lines 13, 14     the board's recent SACK ranges and scratch; the SYN's state;    SACK, SYN,
//!                    pacing's next departure and the rate sampler                     pacing, BBR
//!   line 15          RACK-TLP's state, boxed (`loss_detection = "rack"`)             RACK
//! ```
//!
//! Pacing, the rate sampler and RACK each have a flag in line 1 (`paced`, `cc_rate`,
//! `rack_on`), read before their field: a flow without the option never loads lines 14 and 15
//! for it, and a flow with it pays one more line per ACK (RACK: its pointer, then the box).
//!
//! Times and sequence points that were `Option`s (16 bytes) are plain words with a named
//! sentinel (`NO_TIME`, `NO_POINT`, `SimDuration::MAX` for `min_rtt`), read through
//! `time_opt` / `point_opt`; the handshake's state moved behind a flag (`established`).
//! Compile-time asserts pin the offsets. `docs/performance.md` ("A sender's lines") has the
//! cache profile before and after.
//!
//! Where new state belongs: a field every ACK or send reads (pacing's next send time, RACK's
//! most recent delivery, BBR's model) goes in line 1's free bytes, then in a line of its own
//! after line 1 (the asserts then move `rto` and what follows down a line); state of one
//! variant that only its own path reads goes beside `prr` in line 4 or behind the board.

use std::sync::Arc;

use crate::cc::{
    AckEvent, AnyCc, CongestionControl, CongestionEvent, CongestionKind, EcnAck, RateSample,
    SendEvent, Window,
};
use crate::endpoint::{Endpoint, FlowCounters};
use crate::packet::{
    Acknowledgment, Addr, CcHeader, FlowId, Packet, Port, TcpHeader, Timestamps, Transport,
    ECN_NOT_ECT,
};
use crate::rng::RngStream;
use crate::tcp::config::{
    AckCredit, RecoverGuard, RecoveryExitCredit, RtoBackoffReset, RttSampling, SsthreshFlight,
    TcpSpec,
};
use crate::tcp::rack::Rack;
use crate::tcp::rate::RateSampler;
use crate::tcp::recovery::{AckView, AnyRecovery, PartialAck, Prr, PrrAck, RecoveryOps};
use crate::tcp::rto::{RtoConfig, RtoEstimator};
use crate::tcp::scoreboard::Scoreboard;
use crate::tcp::{point_opt, time_opt, NO_POINT, NO_TIME};
use crate::time::{SimDuration, SimTime};

/// Where a sender sits and what it sends.
// `repr(C)`: what every ACK (the spec) and every segment sent (addresses, ports, flow, `stop`,
// `size`) reads fills the first 64 bytes, one cache line of the sender; `start`, read once,
// comes last (`TcpSender`'s "Layout").
#[repr(C)]
#[derive(Clone, Debug)]
pub struct TcpSenderConfig {
    /// Shared with the receiver and every flow of the same spec (`Arc`, as in
    /// [`crate::tcp::TcpReceiverConfig`]).
    pub tcp: Arc<TcpSpec>,
    pub addr: Addr,
    pub dst_addr: Addr,
    pub port: Port,
    pub dst_port: Port,
    pub flow: FlowId,
    /// No new data after this time (retransmissions go on).
    pub stop: Option<SimTime>,
    /// Bytes to transfer (None: unlimited).
    pub size: Option<u64>,
    pub start: SimTime,
}

/// The handshake's SYN (RFC 9293 §3.5): when it was last sent and whether it was resent. Read
/// only until the SYN-ACK arrives, so it lives with the cold fields; the per-ACK question
/// "is the connection open" is [`TcpSender`]'s `established` flag.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct SynState {
    sent_at: Option<SimTime>,
    retransmitted: bool,
}

#[derive(Clone, Copy, Debug)]
struct RecoveryEpisode {
    /// RFC 6582 `recover` / RFC 6675 RecoveryPoint: SND.MAX when recovery began.
    point: u64,
    /// NewReno restarts the timer on the first partial ACK only (RFC 6582 §3.2 step 3).
    partial_seen: bool,
    /// RFC 6675 NextSeg rule (4): the one rescue retransmission of this recovery was sent.
    rescue_sent: bool,
}

/// PRR's counters over the recovery in progress (RFC 6937 §3), apart from
/// [`RecoveryEpisode`] so that the other algorithms copy nothing more per ACK.
#[derive(Clone, Copy, Debug, Default)]
struct PrrCounters {
    /// prr_delivered: the bytes the ACKs of this recovery reported delivered.
    delivered: u64,
    /// The sender's bytes-sent counter at the fast retransmit: prr_out is the counter less
    /// this, so sending does no PRR bookkeeping.
    sent_base: u64,
    /// RecoverFS: FlightSize (SND.MAX − SND.UNA) at the fast retransmit.
    recover_fs: u64,
}

// Layout: `repr(C)` keeps the declared order, chosen so that an ACK and the segments it
// releases touch eight of the sender's sixteen cache lines: 0 to 3, 5, 8, 11 and 12 (module
// docs, "Layout", has the map). It used to spread an ACK over 12 to 14 of 16 lines (Rust's
// own order, 16-byte options, the counters' 128-bit sum first). The offsets that matter are
// asserted at compile time below; `align(64)` makes the lines the cache's lines wherever the
// sender is stored.
#[repr(C, align(64))]
#[derive(Clone, Debug)]
pub struct TcpSender {
    // Line 0: the window and what the send loop compares with it.
    w: Window,
    mss: u64,
    peer_rwnd: u64,
    app_limit: u64,
    /// The retransmission timer's deadline ([`NO_TIME`]: not armed).
    rto_deadline: SimTime,
    /// When data was last sent (RFC 5681 §4.1 restart after idle; [`NO_TIME`]: never).
    last_send: SimTime,
    /// New data sent by Limited Transmit since the last cumulative ACK: excluded from FlightSize
    /// when ssthresh is computed (RFC 5681 §3.2 step 2, RFC 3042 §2).
    limited_transmit_bytes: u64,

    // Line 1: recovery state and flags.
    /// The smallest RTT sample ([`SimDuration::MAX`]: none yet).
    min_rtt: SimDuration,
    /// SND.MAX at the last RTO while SND.UNA has not passed it (ns-3's `m_recover` in
    /// `CA_LOSS`), for `recovery_exit_credit = "acked"` ([`NO_POINT`]: none).
    rto_point: u64,
    /// SND.MAX at the last fast retransmit or RTO (RFC 6582's `recover`, RFC 6675's
    /// RecoveryPoint after an RTO): losses below it belong to a window already reduced for, so
    /// no new congestion response until SND.UNA reaches it ([`TcpSender::may_respond`];
    /// [`NO_POINT`]: none yet).
    reduction_point: u64,
    /// The fast recovery in progress, if any.
    episode: Option<RecoveryEpisode>,
    dupacks: u32,
    /// RFC 7323 §4.3 TS.Recent: the newest TSval of the receiver's segments, echoed in the
    /// TSecr of the sender's (the receiver's segments all carry the same sequence number, at or
    /// below the sender's Last.ACK.sent, so each newer TSval is taken).
    ts_recent: u32,
    started: bool,
    /// The connection is open: no handshake, or the SYN-ACK arrived.
    established: bool,
    /// `algo.uses_sack()`, asked several times per ACK and per segment sent: read once.
    sack: bool,
    /// `cc.counts_ecn_acks()`, read once: only DCTCP is told every ACK's bytes and ECE.
    cc_counts_ecn: bool,
    /// Without SACK: the duplicate ACK being processed is the first or second, so Limited
    /// Transmit may send one new segment beyond cwnd for it (RFC 3042 §2). Cleared once the
    /// ACK has been processed: the allowance belongs to the ACK's arrival, not to later sends.
    limited_transmit_credit: bool,
    /// Send the next retransmission even if the window is full (fast retransmit, RTO).
    force_retransmit: bool,
    /// `partial_ack_send`: a partial ACK in SACK recovery lets one segment out whatever pipe
    /// says, on the next transmit.
    partial_ack_send_due: bool,
    /// RFC 3168 §6.1.2: the window was reduced for ECN-Echo; the next new data segment says so
    /// with CWR.
    cwr_pending: bool,
    /// `pacing` is on: each segment waits for `pace_next` (read once: a flag here, the time
    /// behind the board, so unpaced flows touch no more lines).
    paced: bool,
    /// `cc.samples_rate()`, read once: the controller (BBR) gets a rate sample on every ACK and
    /// owns cwnd; the recovery algorithm then leaves cwnd alone.
    cc_rate: bool,
    /// The send loop stopped with the window open because of pacing: the deadline is
    /// `pace_next`.
    pace_waiting: bool,
    /// `loss_detection = "rack"`: RACK-TLP's state is in `rack`, behind the board (read once:
    /// a flow without RACK never loads that line).
    rack_on: bool,
    /// The recovery algorithm (Reno, NewReno, SACK, PRR): [`crate::tcp::recovery`].
    algo: AnyRecovery,

    // Line 2.
    rto: RtoEstimator,

    // Line 3 and the first word of line 4.
    cfg: TcpSenderConfig,

    // The rest of line 4: state of one variant or one option each.
    /// PRR's counters of that recovery (`variant = "prr"` only).
    prr: PrrCounters,
    /// `RttSampling::Ns2`: the one segment being timed, by its end and send time.
    timed: Option<(u64, SimTime)>,
    /// SND.MAX at the last reduction for ECN-Echo: no second one, and no loss response that
    /// reduces again, until SND.UNA reaches it ([`NO_POINT`]: none yet).
    ecn_point: u64,

    // Lines 5 to 7: the first is the one every ACK and send writes.
    counters: FlowCounters,
    // Lines 8 to 10.
    cc: AnyCc,
    // Lines 11 to 14: its first two are the per-ACK head.
    board: Scoreboard,
    /// The handshake, until the SYN-ACK.
    syn: SynState,
    /// Pacing: the earliest time the next segment may leave (`paced` only).
    pace_next: SimTime,
    /// Delivery-rate state (`cc_rate` only): `tcp/rate.rs`.
    rate: Option<Box<RateSampler>>,
    // Line 15: the RACK pointer alone (`rack_on` only; lines 13 and 14 are full).
    /// RACK-TLP's state (`loss_detection = "rack"`), boxed: a flow without it carries one word,
    /// and the lines above keep their places.
    rack: Option<Box<Rack>>,
    /// Every congestion event reported to the controller, for tests.
    #[cfg(test)]
    congestion_log: Vec<CongestionKind>,
}

const _: () = {
    use std::mem::{offset_of, size_of};
    const LINE: usize = 64;
    assert!(size_of::<Window>() + 6 * 8 == LINE);
    assert!(offset_of!(TcpSender, limited_transmit_bytes) == LINE - 8);
    assert!(offset_of!(TcpSender, min_rtt) == LINE);
    assert!(offset_of!(TcpSender, algo) < 2 * LINE);
    assert!(size_of::<AnyRecovery>() == 1);
    assert!(offset_of!(TcpSender, rto) == 2 * LINE);
    assert!(size_of::<RtoEstimator>() == LINE);
    assert!(offset_of!(TcpSender, cfg) == 3 * LINE);
    // The config's per-ACK and per-send fields fill line 3; only `start` spills into line 4.
    assert!(offset_of!(TcpSenderConfig, start) == LINE);
    assert!(offset_of!(TcpSender, ecn_point) + 8 <= 5 * LINE);
    assert!(offset_of!(TcpSender, counters) == 5 * LINE);
    assert!(offset_of!(TcpSender, cc) == 8 * LINE);
    assert!(size_of::<AnyCc>() <= 3 * LINE);
    assert!(offset_of!(TcpSender, board) == 11 * LINE);
    // Pacing's time and the rate sampler fill the last 16 bytes of line 14; the RACK pointer
    // starts line 15.
    assert!(offset_of!(TcpSender, rate) + 8 <= 15 * LINE);
    assert!(offset_of!(TcpSender, rack) == 15 * LINE);
    #[cfg(not(test))]
    assert!(size_of::<TcpSender>() == 16 * LINE);
};

/// The boxed state of an option, behind its flag in line 1 (`cc_rate`, `rack_on`): the flag is
/// read first, so a flow without the option never loads the line that holds the pointer.
#[inline(always)]
fn boxed<T>(on: bool, b: &mut Option<Box<T>>) -> Option<&mut T> {
    if on {
        b.as_deref_mut()
    } else {
        None
    }
}

impl TcpSender {
    pub fn new(cfg: TcpSenderConfig) -> Self {
        let t = &cfg.tcp;
        let mss = t.mss as u64;
        let cc = AnyCc::new(&t.cc, t.growth);
        let cc_counts_ecn = cc.counts_ecn_acks();
        let cc_rate = cc.samples_rate();
        let algo = AnyRecovery::new(t.recovery);
        let w = Window {
            cwnd: t.initial_cwnd().min(t.max_window.unwrap_or(u64::MAX)),
            ssthresh: t.initial_ssthresh.unwrap_or(u64::MAX),
        };
        let rto = RtoEstimator::new(RtoConfig {
            initial: t.rto_initial,
            min: t.rto_min,
            max: t.rto_max,
            granularity: t.clock_granularity,
        });
        TcpSender {
            w,
            mss,
            peer_rwnd: t.rcv_buffer,
            app_limit: cfg.size.unwrap_or(u64::MAX),
            rto_deadline: NO_TIME,
            last_send: NO_TIME,
            limited_transmit_bytes: 0,
            min_rtt: SimDuration::MAX,
            rto_point: NO_POINT,
            reduction_point: NO_POINT,
            episode: None,
            dupacks: 0,
            ts_recent: 0,
            started: false,
            established: !t.handshake,
            sack: algo.uses_sack(),
            cc_counts_ecn,
            limited_transmit_credit: false,
            force_retransmit: false,
            partial_ack_send_due: false,
            cwr_pending: false,
            paced: t.pacing.is_some(),
            cc_rate,
            pace_waiting: false,
            rack_on: t.rack().is_some(),
            algo,
            rto,
            prr: PrrCounters::default(),
            timed: None,
            ecn_point: NO_POINT,
            counters: FlowCounters::default(),
            cc,
            board: Scoreboard::new(t.mss),
            syn: SynState::default(),
            pace_next: SimTime::ZERO,
            rate: cc_rate.then(|| Box::new(RateSampler::new(mss))),
            rack: t.rack().map(|r| Box::new(Rack::new(*r))),
            #[cfg(test)]
            congestion_log: Vec::new(),
            cfg,
        }
    }

    pub fn counters(&self) -> &FlowCounters {
        &self.counters
    }
    pub fn cwnd(&self) -> u64 {
        self.w.cwnd
    }
    pub fn ssthresh(&self) -> u64 {
        self.w.ssthresh
    }
    pub fn srtt(&self) -> Option<SimDuration> {
        self.rto.srtt()
    }
    pub fn rto(&self) -> SimDuration {
        self.rto.rto()
    }
    pub fn snd_una(&self) -> u64 {
        self.board.snd_una()
    }
    pub fn snd_max(&self) -> u64 {
        self.board.snd_max()
    }
    pub fn in_recovery(&self) -> bool {
        self.episode.is_some()
    }
    pub fn pipe(&self) -> u64 {
        self.board.pipe()
    }
    /// True once a finite transfer is fully acknowledged.
    pub fn is_complete(&self) -> bool {
        self.counters.completed_at.is_some()
    }

    /// Hands `bytes` more application data to the sender and sends what the windows allow. For
    /// a sender whose transfer size is not known up front (a relay, such as I-TCP's base
    /// station): build it with `size: Some(0)` and offer bytes as they arrive. The transfer is
    /// complete again only once the new bytes are acknowledged.
    pub fn offer(&mut self, now: SimTime, bytes: u64, out: &mut Vec<Packet>) {
        if bytes == 0 {
            return;
        }
        self.app_limit = self.app_limit.saturating_add(bytes);
        self.counters.completed_at = None;
        self.transmit(now, out);
    }

    /// Whether the controller draws random numbers: the builder then hands it the flow's own
    /// stream ([`TcpSender::give_cc_stream`]).
    pub fn cc_draws(&self) -> bool {
        self.cc.draws()
    }

    /// The flow's random stream for its controller (BBR's first ProbeBW phase).
    pub fn give_cc_stream(&mut self, rng: RngStream) {
        self.cc.take_stream(rng);
    }

    /// The controller, for tests and traces.
    pub fn cc(&self) -> &AnyCc {
        &self.cc
    }

    fn uses_sack(&self) -> bool {
        self.sack
    }

    fn max_window(&self) -> u64 {
        self.cfg.tcp.max_window.unwrap_or(u64::MAX)
    }

    fn restart_timer(&mut self, now: SimTime) {
        self.rto_deadline = if self.board.flight_size() > 0 {
            now + self.rto.rto()
        } else {
            NO_TIME
        };
    }

    fn on_ack(&mut self, now: SimTime, h: &TcpHeader, out: &mut Vec<Packet>) {
        let window_changed = h.rwnd as u64 != self.peer_rwnd;
        self.peer_rwnd = h.rwnd as u64;
        let snd_una = self.board.snd_una();
        // Rate sampling: the pipe before this ACK (BBR's prior_in_flight).
        let prior_pipe = if self.cc_rate { self.board.pipe() } else { 0 };
        let ack = h.ack.number().min(self.board.snd_max());
        let echo = self.read_timestamps(h);
        let in_recovery_before = self.episode.is_some();
        if let Some(rack) = boxed(self.rack_on, &mut self.rack) {
            // RFC 8985 §6.2 step 2's timestamp check: a retransmission counts only if the echo
            // names it or later; the last instant whose TSval is at most the echo (RFC 7323's
            // clock, within its first 2^32 ticks).
            let tick = self.cfg.tcp.timestamp_clock.as_nanos().max(1);
            let echo_sent_by = echo.map(|e| SimTime((e as u64 + 1) * tick - 1));
            rack.start_ack(now, echo_sent_by);
        }
        let cum = match boxed(self.rack_on, &mut self.rack) {
            Some(rack) => self.board.on_cumulative_ack_with(ack, &mut rack.delivery),
            None => self.board.on_cumulative_ack(ack),
        };
        if let Some(rate) = boxed(self.cc_rate, &mut self.rate) {
            rate.on_cumulative_ack(ack);
        }
        let mut newly_sacked = 0;
        // Rate sampling: the bytes marked lost before this ACK's marking (what it newly marks
        // lost is the difference when the controller is called).
        let mut lost_before = 0;
        let mut dsack = None;
        if self.uses_sack() && h.ack.sack_len() > 0 {
            // RFC 2883 §4: a DSACK block reports a duplicate, not new SACK information.
            if self.cfg.tcp.dsack {
                dsack = h.ack.dsack();
            }
            let blocks = h.ack.sack_blocks().skip(dsack.is_some() as usize);
            // The segments the blocks newly SACK go to whoever listens (the scoreboard's
            // `DeliveryHook`): RACK, the rate sampler, both, or no one, each case its own code.
            let (board, rack_on, cc_rate) = (&mut self.board, self.rack_on, self.cc_rate);
            newly_sacked = match (
                boxed(rack_on, &mut self.rack),
                boxed(cc_rate, &mut self.rate),
            ) {
                (None, None) => board.on_sack_blocks(blocks, &mut ()),
                (Some(rack), None) => board.on_sack_blocks(blocks, &mut rack.delivery),
                (None, Some(rate)) => board.on_sack_blocks(blocks, rate),
                (Some(rack), Some(rate)) => {
                    board.on_sack_blocks(blocks, &mut (&mut rack.delivery, rate))
                }
            };
            lost_before = self.board.lost_bytes();
            if !self.rack_on {
                self.board.update_lost(self.cfg.tcp.dupthresh);
            }
        } else if self.cc_rate {
            lost_before = self.board.lost_bytes();
        }
        if self.uses_sack() && self.board.receiver_reneged() {
            // RFC 2018 §8: SACK is advisory. A receiver that dropped data it had SACKed would
            // otherwise leave that data unsent for ever.
            self.board.forget_sacks();
        }
        if cum.bytes_acked > 0 {
            if let Some(r) = self.estimator_sample(now, ack, cum.sample_sent_at, echo) {
                self.rto.on_sample(r);
                if let Some(rack) = boxed(self.rack_on, &mut self.rack) {
                    rack.on_rtt_sample(r);
                }
            }
            if let Some(sent_at) = cum.sample_sent_at {
                let r = now.saturating_since(sent_at);
                let c = &mut self.counters;
                c.rtt_sum_ns += r.as_nanos() as u128;
                c.rtt_samples += 1;
                c.rtt_min_ns = Some(c.rtt_min_ns.map_or(r.as_nanos(), |m| m.min(r.as_nanos())));
                self.min_rtt = self.min_rtt.min(r);
            }
            // What this ACK credits to window growth (`AckCredit`).
            let credit = match self.cfg.tcp.ack_credit {
                AckCredit::Cumulative => cum.bytes_acked,
                AckCredit::Delivered => cum.bytes_acked - cum.previously_sacked + newly_sacked,
            };
            self.on_new_ack(
                now,
                cum.bytes_acked,
                credit,
                h.cc,
                cum.sample_sent_at.map(|s| now.saturating_since(s)),
            );
        }
        let duplicate = self.algo.is_duplicate(&AckView {
            bytes_acked: cum.bytes_acked,
            ack_unchanged: ack == snd_una,
            carries_data_or_control: h.len > 0 || h.is_fin() || h.is_syn(),
            window_changed,
            data_outstanding: self.board.flight_size() > 0,
            newly_sacked,
        });
        if duplicate {
            self.on_dupack();
        }
        if self.cc_counts_ecn {
            // RFC 8257 §3.3: every ACK's bytes and ECE, before the reduction this ECE may
            // cause (§3.4 uses the alpha of the window that just ended, as Linux does).
            self.cc.on_ecn_ack(&EcnAck {
                bytes_acked: cum.bytes_acked,
                ece: h.is_ece(),
                snd_una: self.board.snd_una(),
                snd_nxt: self.board.snd_max(),
            });
        }
        if h.is_ece() {
            self.on_ecn_echo(now);
        }
        if self.rack_on {
            let exited = in_recovery_before && self.episode.is_none();
            let bare_dupack = cum.bytes_acked == 0 && h.ack.sack_len() == 0 && h.len == 0;
            self.rack_on_ack(now, ack, dsack, bare_dupack, exited);
            if cum.bytes_acked > 0 {
                // RFC 8985 §7.2: an ACK that acknowledges data (re)schedules the probe.
                self.rack_schedule_pto(now, true);
            }
        }
        self.detect_loss(now);
        // RFC 6937 §3's DeliveredData: the cumulative advance and the change in SACKed bytes
        // (those the advance covered were counted when they were SACKed); also the bytes this
        // ACK delivers for a rate sample (draft-cheng-iccrg-delivery-rate-estimation §2).
        let delivered = cum.bytes_acked - cum.previously_sacked + newly_sacked;
        if let Some(prr) = self.algo.prr().filter(|_| !self.cc_rate) {
            self.prr_on_ack(prr, delivered);
        }
        if self.cc_rate {
            self.on_rate_sample(now, delivered, prior_pipe, lost_before);
        }
        self.transmit(now, out);
        self.limited_transmit_credit = false;
    }

    /// `bytes_acked` is the cumulative advance, `credit` what the ACK counts for window growth.
    fn on_new_ack(
        &mut self,
        now: SimTime,
        bytes_acked: u64,
        credit: u64,
        echo: CcHeader,
        rtt_sample: Option<SimDuration>,
    ) {
        // RFC 5681 §3.2 / RFC 6675 §5 step (1): a cumulative ACK resets the duplicate count.
        self.dupacks = 0;
        self.limited_transmit_bytes = 0;
        let una = self.board.snd_una();
        let mut restart = true;
        // What this ACK credits to window growth; nothing during recovery.
        let mut growth = 0;
        match self.episode {
            Some(rec) if una >= rec.point => {
                self.end_recovery(now);
                growth = self.exit_credit(bytes_acked);
            }
            Some(mut rec) => match self.partial_ack(bytes_acked) {
                PartialAck::Ends => {
                    self.end_recovery(now);
                    growth = self.exit_credit(bytes_acked);
                }
                PartialAck::ResendFront => {
                    self.board.mark_front_lost();
                    self.force_retransmit = true;
                    restart = !rec.partial_seen;
                    rec.partial_seen = true;
                    self.episode = Some(rec);
                }
                PartialAck::KeepSending => {
                    // ns-3's `ProcessAck` sends one segment on a partial ACK unless the new
                    // front has been retransmitted already (`IsRetransmittedDataAcked`).
                    self.partial_ack_send_due =
                        self.cfg.tcp.partial_ack_send && !self.board.front_is_retransmitted();
                }
            },
            None => growth = self.open_credit(una, credit),
        }
        // An ACK that credits nothing (`AckCredit::Delivered` with nothing newly delivered, or
        // the end of recovery by the RFCs) does not call the controller.
        if growth > 0 {
            let ev = AckEvent {
                bytes_acked: growth,
                snd_una: una,
                flight_size: self.board.flight_size(),
                mss: self.mss,
                rtt_sample,
                srtt: self.rto.srtt(),
                min_rtt: (self.min_rtt != SimDuration::MAX).then_some(self.min_rtt),
                echo,
            };
            self.cc.on_ack(now, &ev, &mut self.w);
            self.w.cwnd = self.w.cwnd.min(self.max_window()).max(self.mss);
        }
        if una >= self.app_limit && self.counters.completed_at.is_none() {
            self.counters.completed_at = Some(now);
        }
        if restart && self.cfg.tcp.rto_backoff_reset == RtoBackoffReset::NewAck {
            // ns-3's NewAck: the RTO is recomputed whenever the timer restarts on new data.
            self.rto.end_backoff();
        }
        if restart || self.board.flight_size() == 0 {
            // RFC 6298 (5.2), (5.3).
            self.restart_timer(now);
        }
    }

    /// The recovery algorithm's answer to a partial ACK; with a controller that owns cwnd
    /// (`cc_rate`) the window it would set is dropped.
    fn partial_ack(&mut self, bytes_acked: u64) -> PartialAck {
        if self.cc_rate {
            let mut w = self.w;
            return self.algo.on_partial_ack(&mut w, bytes_acked, self.mss);
        }
        self.algo.on_partial_ack(&mut self.w, bytes_acked, self.mss)
    }

    /// BBR and any controller that asks for rate samples: the sample of this ACK, which newly
    /// delivered `delivered` bytes (pipe `prior_pipe` before it, `lost_before` bytes marked
    /// lost before its loss marking), and the controller's window after it.
    #[inline(never)]
    fn on_rate_sample(&mut self, now: SimTime, delivered: u64, prior_pipe: u64, lost_before: u64) {
        let Some(rate) = self.rate.as_deref_mut() else {
            return;
        };
        let mut rs: RateSample = rate.sample(now, delivered, self.min_rtt, self.mss);
        rs.losses = self.board.lost_bytes().saturating_sub(lost_before);
        rs.prior_in_flight = prior_pipe;
        rs.in_flight = self.board.pipe();
        rs.srtt = self.rto.srtt();
        rs.ca_state = rate.ca_state(self.episode.is_some(), self.board.snd_una());
        self.cc.on_rate_sample(now, &rs, &mut self.w);
        let max_window = self.cfg.tcp.max_window.unwrap_or(u64::MAX);
        self.w.cwnd = self.w.cwnd.min(max_window).max(self.mss);
        if self.cc.app_limited_now() {
            rate.mark_app_limited(rs.in_flight);
        }
    }

    /// What the ACK that ended fast recovery credits, `bytes_acked` being its cumulative
    /// advance: nothing by RFC 6675 §5 (A), its whole segments with ns-3's exit
    /// ([`RecoveryExitCredit`]).
    fn exit_credit(&self, bytes_acked: u64) -> u64 {
        match self.cfg.tcp.recovery_exit_credit {
            RecoveryExitCredit::None => 0,
            RecoveryExitCredit::Acked => bytes_acked - bytes_acked % self.mss,
        }
    }

    /// What an ACK outside fast recovery credits: `credit` (`ack_credit`), except that with
    /// ns-3's exit the ACK that passes an RTO's recovery point credits only the whole segments
    /// above it ([`RecoveryExitCredit`]).
    fn open_credit(&mut self, una: u64, credit: u64) -> u64 {
        match point_opt(self.rto_point) {
            Some(point) if una >= point => {
                self.rto_point = NO_POINT;
                let above = una - point;
                above - above % self.mss
            }
            _ => credit,
        }
    }

    /// With timestamps: the ACK's TSecr, after taking its TSval into TS.Recent (RFC 7323 §4.3
    /// rule (2)).
    fn read_timestamps(&mut self, h: &TcpHeader) -> Option<u32> {
        if !self.cfg.tcp.timestamps {
            return None;
        }
        let ts = h.ack.timestamps()?;
        if ts_not_older(ts.val, self.ts_recent) {
            self.ts_recent = ts.val;
        }
        Some(ts.ecr)
    }

    /// The RTT sample an ACK that advanced SND.UNA gives the RFC 6298 estimator, if any.
    /// `sent_at` is the send time of the last segment the ACK completed when Karn's rule allows
    /// a sample; `echo` the ACK's TSecr when timestamps are on.
    fn estimator_sample(
        &mut self,
        now: SimTime,
        ack: u64,
        sent_at: Option<SimTime>,
        echo: Option<u32>,
    ) -> Option<SimDuration> {
        if self.cfg.tcp.timestamps {
            // RFC 7323 §4.1 RTTM: every ACK that advances the left edge gives a sample, from the
            // echo of the segment the receiver chose by §4.3 (a retransmission's own TSval when
            // it filled the hole, so no Karn ambiguity), whatever `rtt_sampling` says.
            return echo.map(|ecr| self.cfg.tcp.ts_rtt(now, ecr));
        }
        match self.cfg.tcp.rtt_sampling {
            RttSampling::EveryAck => sent_at.map(|t| now.saturating_since(t)),
            RttSampling::Ns2 => {
                // ns-2 `TcpAgent::newack`: the timed segment's ACK ends the timing;
                // `rtt_update` counts the tick boundaries crossed since it was sent (its clock
                // ticks at multiples of `tcp_tick_` from time zero: `boot_time_` 0), at least 1.
                let (end, t0) = self.timed?;
                if ack < end {
                    return None;
                }
                self.timed = None;
                let tick = self.cfg.tcp.clock_granularity.as_nanos();
                if tick == 0 {
                    return Some(now.saturating_since(t0));
                }
                let ticks = (now.as_nanos() / tick)
                    .saturating_sub(t0.as_nanos() / tick)
                    .max(1);
                Some(SimDuration(ticks * tick))
            }
        }
    }

    /// RFC 3168 §6.1.2: an ACK with ECN-Echo. The sender reduces as for a loss (the controller
    /// chooses ssthresh, cwnd = ssthresh) but retransmits nothing, and at most once per window
    /// of data: not during loss recovery, nor before the data outstanding at the last reduction
    /// is acknowledged.
    fn on_ecn_echo(&mut self, now: SimTime) {
        if !self.cfg.tcp.ecn || self.episode.is_some() {
            return;
        }
        let una = self.board.snd_una();
        if point_opt(self.reduction_point).is_some_and(|r| una < r)
            || point_opt(self.ecn_point).is_some_and(|r| una < r)
        {
            return;
        }
        #[cfg(test)]
        self.congestion_log.push(CongestionKind::Ecn);
        let ssthresh =
            self.reduced_ssthresh(now, CongestionKind::Ecn, self.board.flight_size(), self.w);
        self.w.ssthresh = ssthresh;
        if !self.cc_rate {
            self.w.cwnd = ssthresh.max(self.mss);
        }
        self.ecn_point = self.board.snd_max();
        self.cwr_pending = true;
        self.counters.ecn_reductions += 1;
    }

    /// The controller's ssthresh for a congestion signal of `kind`, given FlightSize and the
    /// window at the signal. With `whole_segment_ssthresh` the controller sees both rounded
    /// down to whole segments and its answer is rounded down to whole segments, at least 2
    /// (Linux counts `snd_cwnd` in packets; ns-3's CUBIC, HighSpeed and Scalable truncate).
    fn reduced_ssthresh(
        &mut self,
        now: SimTime,
        kind: CongestionKind,
        flight_size: u64,
        mut window: Window,
    ) -> u64 {
        let mss = self.mss;
        let whole = self.cfg.tcp.whole_segment_ssthresh;
        let flight_size = if whole {
            window.cwnd -= window.cwnd % mss;
            flight_size - flight_size % mss
        } else {
            flight_size
        };
        let ssthresh = self.cc.on_congestion(
            now,
            &CongestionEvent {
                kind,
                flight_size,
                window,
                mss,
            },
        );
        if whole {
            (ssthresh / mss).max(2) * mss
        } else {
            ssthresh
        }
    }

    /// A duplicate ACK (RFC 5681 §2, or RFC 6675 §2 with SACK).
    fn on_dupack(&mut self) {
        if self.episode.is_none() {
            self.dupacks += 1;
            // RFC 3042 §2: the first two duplicate ACKs may each release one new segment. With
            // SACK, RFC 6675 §5 step (3) sends by pipe instead ([`TcpSender::in_flight`]).
            self.limited_transmit_credit =
                self.cfg.tcp.limited_transmit && !self.uses_sack() && self.dupacks <= 2;
        } else if !self.cc_rate {
            self.algo.on_dupack_in_recovery(&mut self.w, self.mss);
        }
    }

    /// PRR (RFC 6937 §3) on an ACK of `delivered` bytes: during recovery, cwnd = pipe + sndcnt,
    /// so that the send loop lets out sndcnt bytes. An ACK that delivers nothing leaves cwnd as
    /// it was (Linux's `tcp_cwnd_reduction` and ns-3.48's `DoRecovery` return at once too).
    #[inline(never)]
    fn prr_on_ack(&mut self, prr: Prr, delivered: u64) {
        if self.episode.is_none() || delivered == 0 {
            return;
        }
        let c = &mut self.prr;
        c.delivered += delivered;
        let pipe = self.board.pipe();
        let sndcnt = prr.sndcnt(&PrrAck {
            prr_delivered: c.delivered,
            prr_out: self.counters.bytes_sent - c.sent_base,
            delivered,
            recover_fs: c.recover_fs,
            pipe,
            ssthresh: self.w.ssthresh,
            mss: self.mss,
        });
        self.w.cwnd = pipe + sndcnt;
    }

    /// The recovery point was acknowledged (or, for Reno, any new data).
    fn end_recovery(&mut self, now: SimTime) {
        self.episode = None;
        if !self.cc_rate {
            self.w.cwnd = self
                .algo
                .cwnd_on_exit(&self.w, self.board.flight_size(), self.mss);
        }
        self.cc.on_recovery_end(now, &mut self.w);
    }

    /// Whether a loss now calls for a congestion response: not while it belongs to a window
    /// already reduced for, i.e. while SND.UNA has not reached `recover` ([`RecoverGuard`]).
    fn may_respond(&self) -> bool {
        let una = self.board.snd_una();
        let guard = self
            .cfg
            .tcp
            .recover_guard
            .unwrap_or(self.algo.default_guard());
        match (point_opt(self.reduction_point), guard) {
            (None, _) => true,
            (Some(r), RecoverGuard::AtRecoveryPoint) => una >= r,
            (Some(r), RecoverGuard::PastRecoveryPoint) => una > r,
        }
    }

    /// Outside recovery: enter it when the duplicate ACKs or the scoreboard say a segment is
    /// lost (RFC 5681 §3.2 step 2, RFC 6675 §5 steps (2.a), (2.b)), unless that loss belongs to a
    /// window already reduced for.
    fn detect_loss(&mut self, now: SimTime) {
        if self.episode.is_some() || self.board.flight_size() == 0 {
            return;
        }
        // With SACK any segment the scoreboard deems lost is a congestion signal, not only the
        // one at SND.UNA: a loss found after the last recovery ended is a new event (RFC 6675
        // §5), never a silent resend.
        let sack_loss = self.uses_sack() && self.board.lost_bytes() > 0;
        // With RACK only what it marked lost counts: it replaces the duplicate count (RFC 8985
        // §6.2 step 4 sets reo_wnd to 0 once DupThresh segments are SACKed instead).
        if self.rack_on && !sack_loss {
            return;
        }
        if self.dupacks < self.cfg.tcp.dupthresh && !sack_loss {
            return;
        }
        if !self.may_respond() {
            return;
        }
        // A loss in a window already reduced for ECN-Echo is repaired by fast retransmit and
        // recovery, but the window is not reduced twice (RFC 3168 §6.1.2).
        let reduced_for_ecn = point_opt(self.ecn_point).is_some_and(|p| self.board.snd_una() < p);
        self.enter_recovery(now, !reduced_for_ecn);
    }

    /// Fast retransmit and recovery; `reduce`: ask the controller for a new ssthresh (not if
    /// this window was already reduced for ECN).
    fn enter_recovery(&mut self, now: SimTime, reduce: bool) {
        if reduce {
            let flight = if self.pipe_ssthresh() {
                // ns-3's `EnterRecovery`: the front is marked lost first, then the pipe taken.
                if self.board.lost_bytes() == 0 {
                    self.board.mark_front_lost();
                }
                self.board.pipe()
            } else {
                // RFC 5681 §3.2 step 2: segments sent by Limited Transmit do not count in
                // FlightSize.
                self.board
                    .flight_size()
                    .saturating_sub(self.limited_transmit_bytes)
            };
            #[cfg(test)]
            self.congestion_log.push(CongestionKind::DupAck);
            self.w.ssthresh = self.reduced_ssthresh(now, CongestionKind::DupAck, flight, self.w);
        }
        let ssthresh = self.w.ssthresh;
        let point = self.board.snd_max();
        self.reduction_point = point;
        self.rto_point = NO_POINT;
        self.episode = Some(RecoveryEpisode {
            point,
            partial_seen: false,
            rescue_sent: false,
        });
        self.prr = PrrCounters {
            delivered: 0,
            sent_base: self.counters.bytes_sent,
            recover_fs: self.board.flight_size(),
        };
        if !self.cc_rate {
            self.w.cwnd = self
                .algo
                .cwnd_on_entry(ssthresh, self.cfg.tcp.dupthresh, self.mss);
        }
        if self.board.lost_bytes() == 0 {
            // DupThresh duplicate ACKs: the segment at SND.UNA is presumed lost (RFC 6675
            // (4.3), RFC 5681 §3.2 step 3).
            self.board.mark_front_lost();
        }
        self.board.start_recovery();
        // The first retransmission goes out whatever pipe says (RFC 6675 (4.3)).
        self.force_retransmit = true;
        self.counters.fast_retransmits += 1;
    }

    fn on_rto(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        self.counters.timeouts += 1;
        // RFC 5681 §3.1 eq. (4): reduce ssthresh on the first expiry only, not on back-offs.
        // Nor when the timer fires during fast recovery: this window was already reduced for,
        // and FlightSize now counts everything sent while cwnd was inflated, so halving it
        // would *raise* ssthresh (Linux `tcp_enter_loss` keeps ssthresh in that state too).
        if self.rto.backoff() == 0 {
            let in_recovery = self.episode.is_some();
            // The controller hears of every first expiry (CUBIC and BIC restart their epoch,
            // RFC 9438 §4.8), with the window recovery had settled on, not an inflated one.
            let window = Window {
                cwnd: if in_recovery {
                    self.w.cwnd.min(self.w.ssthresh)
                } else {
                    self.w.cwnd
                },
                ssthresh: self.w.ssthresh,
            };
            #[cfg(test)]
            self.congestion_log.push(CongestionKind::Rto);
            // The pipe (`ssthresh_flight = "pipe"`) holds no segment sent on an inflated
            // window, so that reduction applies in recovery too, as ns-3's `ReTxTimeout` does.
            let pipe = self.pipe_ssthresh();
            let flight = if pipe {
                self.board.pipe()
            } else {
                self.board.flight_size()
            };
            let ssthresh = self.reduced_ssthresh(now, CongestionKind::Rto, flight, window);
            if !in_recovery || pipe {
                self.w.ssthresh = ssthresh;
            }
        }
        // RFC 5681 §3.1: loss window of one full-sized segment.
        self.w.cwnd = self.mss;
        self.reduction_point = self.board.snd_max();
        if let Some(rate) = boxed(self.cc_rate, &mut self.rate) {
            rate.on_rto(self.reduction_point);
        }
        if self.cfg.tcp.recovery_exit_credit == RecoveryExitCredit::Acked {
            self.rto_point = self.reduction_point;
        }
        self.episode = None;
        self.dupacks = 0;
        self.limited_transmit_bytes = 0;
        self.rto.on_expiry();
        // ns-2 `reset_rtx_timer`: an RTO ends any RTT timing in progress.
        self.timed = None;
        if let Some(rack) = boxed(self.rack_on, &mut self.rack) {
            rack.on_rto(self.board.snd_max());
        }
        self.board.mark_all_lost();
        self.force_retransmit = true;
        self.rto_deadline = now + self.rto.rto();
        self.transmit(now, out);
    }

    /// What the window is compared with. During loss recovery, after an RTO while data is
    /// marked lost, and during SACK Limited Transmit, it is RFC 6675's `pipe`; otherwise RFC
    /// 5681's FlightSize (SND.MAX − SND.UNA), so SACKed duplicate ACKs before DupThresh release
    /// no new data unless Limited Transmit is on.
    fn in_flight(&self) -> u64 {
        if self.episode.is_some() || self.board.lost_bytes() > 0 || self.sack_limited_transmit() {
            self.board.pipe()
        } else {
            self.board.flight_size()
        }
    }

    /// With SACK, duplicate ACKs are being counted outside recovery and Limited Transmit is on:
    /// new data goes out by pipe (RFC 6675 §5 step (3)).
    fn sack_limited_transmit(&self) -> bool {
        self.uses_sack()
            && self.cfg.tcp.limited_transmit
            && self.episode.is_none()
            && self.dupacks > 0
    }

    /// The window new transmissions are held to.
    fn send_window(&self) -> u64 {
        self.w.cwnd.min(self.max_window())
    }

    /// A reduction counts the pipe, not FlightSize (`ssthresh_flight`, SACK only).
    fn pipe_ssthresh(&self) -> bool {
        self.uses_sack() && self.cfg.tcp.ssthresh_flight == SsthreshFlight::Pipe
    }

    /// RFC 3042 §2 (RFC 5681 §3.2 step 1), without SACK: a new segment of `len` bytes that the
    /// window refuses may still go out if this is the first or second duplicate ACK and nothing
    /// went out for it yet, FlightSize stays within cwnd plus two segments, and within
    /// `max_window`, the largest window the sender may have outstanding (ns-2's `window_`, a
    /// send buffer). The receiver's window is checked by the caller. cwnd itself is unchanged.
    fn limited_transmit_allows(&self, len: u64) -> bool {
        let flight = self.board.flight_size() + len;
        self.limited_transmit_credit
            && flight <= self.w.cwnd + 2 * self.mss
            && flight <= self.max_window()
    }

    /// Send what the window allows, in RFC 6675 §4 NextSeg order: (1) segments deemed lost,
    /// (2) new data, and in SACK recovery when neither applies (3) un-SACKed segments below the
    /// highest SACKed byte, then (4) one rescue retransmission of the highest un-SACKed segment.
    fn transmit(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        if !self.started || !self.established {
            return;
        }
        self.restart_after_idle(now);
        let snd_max_before = self.board.snd_max();
        let window = self.send_window();
        self.pace_waiting = false;
        if std::mem::take(&mut self.partial_ack_send_due) {
            self.send_beyond_pipe(now, out);
        }
        loop {
            let in_flight = self.in_flight();
            if let Some((seq, len)) = self.board.next_retransmission() {
                if self.force_retransmit || in_flight + len as u64 <= window {
                    // The first retransmission of a recovery or an RTO goes at once (Linux's
                    // `tcp_retransmit_skb` from the timer and fast retransmit are not held
                    // back); the others wait for their departure time.
                    if !self.force_retransmit && self.pacing_holds(now) {
                        break;
                    }
                    self.force_retransmit = false;
                    self.retransmit(now, seq, len, out);
                    continue;
                }
                break;
            }
            self.force_retransmit = false;
            if let Some(len) = self.new_segment_len(now) {
                let fits = in_flight + len <= window;
                if !fits && !self.limited_transmit_allows(len) {
                    break;
                }
                if self.pacing_holds(now) {
                    break;
                }
                if fits {
                    // With SACK, what pipe lets out while duplicates are counted is Limited
                    // Transmit too (RFC 6675 §5 step (3)).
                    if self.sack_limited_transmit() {
                        self.limited_transmit_bytes += len;
                    }
                } else {
                    self.limited_transmit_credit = false;
                    self.limited_transmit_bytes += len;
                }
                self.send_new_segment(now, len, out);
                continue;
            }
            if self.cc_rate {
                self.check_app_limited(now, in_flight, window);
            }
            // Rules (3) and (4): only when there is no new data to send (none left, or the
            // receiver's window is closed), and only in SACK recovery.
            let Some(rec) = self.episode.filter(|_| self.uses_sack()) else {
                break;
            };
            let (candidate, rescue) = match self.board.next_unsacked_below_highest_sack() {
                Some(c) => (Some(c), false),
                None if !rec.rescue_sent => (self.board.rescue_candidate(), true),
                None => (None, false),
            };
            let Some((seq, len)) = candidate else {
                break;
            };
            if in_flight + len as u64 > window || self.pacing_holds(now) {
                break;
            }
            if rescue {
                self.episode = Some(RecoveryEpisode {
                    rescue_sent: true,
                    ..rec
                });
            }
            self.retransmit(now, seq, len, out);
        }
        if self.rto_deadline == NO_TIME && self.board.flight_size() > 0 {
            // RFC 6298 (5.1).
            self.rto_deadline = now + self.rto.rto();
        }
        if self.rack_on {
            // RFC 8985 §7.2: new data sent (not a probe) schedules the probe.
            self.rack_schedule_pto(now, self.board.snd_max() > snd_max_before);
        }
    }

    /// Pacing: the window would let a segment out now, but its departure time has not come.
    /// The send loop then stops and the sender's deadline is that time (one timer per
    /// endpoint, `sim/timers.rs`): a wake-up only where pacing, not the ACK clock, spaces the
    /// segments.
    #[inline]
    fn pacing_holds(&mut self, now: SimTime) -> bool {
        if self.paced && now < self.pace_next {
            self.pace_waiting = true;
            return true;
        }
        false
    }

    /// The pacing rate, bytes per second: the controller's if it sets one (BBR), else Linux's
    /// `tcp_update_pacing_rate`: `ss_ratio` (while cwnd < ssthresh / 2) or `ca_ratio` times
    /// max(cwnd, FlightSize) / SRTT. None (no SRTT yet, or a controller without a rate yet):
    /// unpaced, as Linux before its first RTT sample.
    fn pacing_rate(&self) -> Option<u64> {
        if self.cc_rate {
            return self.cc.pacing_rate();
        }
        let p = self.cfg.tcp.pacing?;
        let srtt = self.rto.srtt()?.as_secs_f64();
        if srtt <= 0.0 {
            return None;
        }
        let ratio = if self.w.cwnd < self.w.ssthresh / 2 {
            p.ss_ratio
        } else {
            p.ca_ratio
        };
        let window = self.w.cwnd.max(self.board.flight_size()) as f64;
        Some((ratio * window / srtt) as u64)
    }

    /// A segment of `size` wire bytes left at `now`: the next may leave `size / rate` later. A
    /// sender behind its schedule may catch up by `quantum` segments at most (a token bucket of
    /// that depth); the first `initial_quantum` data segments of the connection are not paced.
    #[inline(never)]
    fn pace_after_send(&mut self, now: SimTime, size: u64) {
        let Some(p) = self.cfg.tcp.pacing else {
            return;
        };
        if self.counters.packets_sent <= p.initial_quantum as u64 {
            return;
        }
        let Some(rate) = self.pacing_rate().filter(|&r| r > 0) else {
            self.pace_next = now;
            return;
        };
        let gap = |bytes: u64| SimDuration((bytes as u128 * 1_000_000_000 / rate as u128) as u64);
        let full = self.mss + self.cfg.tcp.segment_header_bytes() as u64;
        let slack = gap(full * p.quantum.saturating_sub(1) as u64);
        let from = SimTime(now.as_nanos().saturating_sub(slack.as_nanos()));
        self.pace_next = self.pace_next.max(from) + gap(size);
    }

    /// Draft-cheng-iccrg-delivery-rate-estimation §3.4 (Linux `tcp_rate_check_app_limited`):
    /// nothing new to send though the window is open and no loss waits to be resent: the
    /// samples of what follows are application-limited. (A closed receive window is not the
    /// application's doing.)
    fn check_app_limited(&mut self, now: SimTime, in_flight: u64, window: u64) {
        // Linux: less than one segment left to send.
        let no_data = self.cfg.stop.is_some_and(|t| now >= t)
            || self.app_limit.saturating_sub(self.board.snd_max()) < self.mss;
        if no_data && in_flight < window && self.board.lost_bytes() == 0 {
            if let Some(rate) = boxed(self.cc_rate, &mut self.rate) {
                rate.mark_app_limited(in_flight);
            }
        }
    }

    /// The length of the next new segment, if there is new data, the application has not
    /// stopped, and the receiver's window takes it.
    fn new_segment_len(&self, now: SimTime) -> Option<u64> {
        let snd_max = self.board.snd_max();
        if self.cfg.stop.is_some_and(|t| now >= t) || snd_max >= self.app_limit {
            return None;
        }
        let len = self.mss.min(self.app_limit - snd_max);
        let rwnd_edge = self.board.snd_una().saturating_add(self.peer_rwnd);
        (snd_max + len <= rwnd_edge).then_some(len)
    }

    fn send_new_segment(&mut self, now: SimTime, len: u64, out: &mut Vec<Packet>) {
        let snd_max = self.board.snd_max();
        if self.cfg.tcp.rtt_sampling == RttSampling::Ns2 && self.timed.is_none() {
            self.timed = Some((snd_max + len, now));
        }
        if let Some(rate) = boxed(self.cc_rate, &mut self.rate) {
            rate.on_send(snd_max, len, self.board.flight_size(), now);
        }
        self.board.on_send(len as u32, now);
        self.emit(now, snd_max, len as u32, false, out);
    }

    /// `partial_ack_send` (ns-3's `DoRetransmit` on a partial ACK): one segment whatever
    /// pipe says, chosen as ns-3's `NextSeg` without rule (3): the first segment deemed lost
    /// and not retransmitted, else new data, else the front segment again.
    fn send_beyond_pipe(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        if let Some((seq, len)) = self.board.next_retransmission() {
            self.retransmit(now, seq, len, out);
        } else if let Some(len) = self.new_segment_len(now) {
            self.send_new_segment(now, len, out);
        } else if let Some((seq, len)) = self.board.front_segment() {
            self.retransmit(now, seq, len, out);
        }
    }

    /// RFC 5681 §4.1: a sender that has sent nothing for longer than the RTO has lost its ACK
    /// clock; it restarts from cwnd = min(IW, cwnd) rather than bursting a stale window.
    fn restart_after_idle(&mut self, now: SimTime) {
        if self.cfg.tcp.restart_after_idle
            && self.board.flight_size() == 0
            && time_opt(self.last_send).is_some_and(|t| now.saturating_since(t) > self.rto.rto())
        {
            self.w.cwnd = self.w.cwnd.min(self.cfg.tcp.initial_cwnd().max(self.mss));
        }
    }

    /// RACK (RFC 8985 §6.2 steps 2 to 5) and TLP's loss detection (§7.4) on an ACK whose
    /// cumulative and selective information the scoreboard has taken in. `ack`: its number;
    /// `dsack`: its DSACK block; `exited`: it ended a fast recovery.
    #[inline(never)]
    fn rack_on_ack(
        &mut self,
        now: SimTime,
        ack: u64,
        dsack: Option<(u64, u64)>,
        bare_dupack: bool,
        exited: bool,
    ) {
        let (una, nxt) = (self.board.snd_una(), self.board.snd_max());
        let Some(rack) = self.rack.as_deref_mut() else {
            return;
        };
        rack.on_ack(now, una, nxt, dsack.is_some(), exited);
        let repaired = rack.tlp_process_ack(ack, dsack, bare_dupack);
        self.rack_detect_loss(now);
        if repaired {
            self.tlp_loss_response(now);
        }
    }

    /// RFC 8985 §6.2 step 5 with the reo_wnd of step 4: mark what is lost, arm the
    /// reordering timer for what waits.
    fn rack_detect_loss(&mut self, now: SimTime) {
        let Some(rack) = self.rack.as_deref_mut() else {
            return;
        };
        let in_recovery = self.episode.is_some() || rack.in_rto_recovery();
        // RACK.segs_sacked >= DupThresh, counted in bytes as RFC 6675's IsLost counts them.
        let dupthresh_sacked =
            self.board.sacked_bytes() >= self.cfg.tcp.dupthresh as u64 * self.mss;
        let reo_wnd = rack.reo_wnd(in_recovery, dupthresh_sacked, self.rto.srtt());
        rack.detect_loss(&mut self.board, reo_wnd, now);
    }

    /// The reordering timer expired (RFC 8985 §6.3): detect again, enter recovery for what is
    /// now lost, and send.
    fn on_reo_timeout(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        if let Some(rack) = self.rack.as_deref_mut() {
            rack.on_reo_timeout();
        }
        self.rack_detect_loss(now);
        self.detect_loss(now);
        self.transmit(now, out);
    }

    /// RFC 8985 §7.2: arm the probe timeout if a probe may be scheduled (SACK, nothing SACKed,
    /// no fast or RTO recovery, data outstanding), disarm it otherwise. `rearm`: something
    /// that schedules it happened (new data sent, data acknowledged); else an armed PTO stays.
    fn rack_schedule_pto(&mut self, now: SimTime, rearm: bool) {
        let flight = self.board.flight_size();
        let may_probe = self.uses_sack()
            && self.board.sacked_bytes() == 0
            && self.episode.is_none()
            && flight > 0;
        let Some(rack) = self.rack.as_deref_mut() else {
            return;
        };
        let may_probe = may_probe && !rack.in_rto_recovery() && rack.tlp();
        if may_probe && !rearm && rack.pto_deadline() != NO_TIME {
            return;
        }
        rack.schedule_pto(
            now,
            may_probe,
            flight <= self.mss,
            self.rto.srtt(),
            self.rto_deadline,
        );
    }

    /// The probe timeout expired (RFC 8985 §7.3): unless a probe is outstanding or no RTT
    /// sample came since the last one, send one segment whatever cwnd says (as Linux's
    /// `tcp_send_loss_probe` does): new data if the receiver's window takes it, else the
    /// highest segment sent again. Then the RTO is re-armed, not the PTO.
    fn on_pto(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        let Some(rack) = self.rack.as_deref_mut() else {
            return;
        };
        if rack.probe_allowed() {
            if let Some(len) = self.new_segment_len(now) {
                self.send_new_segment(now, len, out);
                self.note_probe(false);
            } else if let Some((seq, len)) = self.board.last_segment() {
                self.retransmit(now, seq, len, out);
                self.note_probe(true);
            }
        }
        self.rto_deadline = if self.board.flight_size() > 0 {
            now + self.rto.rto()
        } else {
            NO_TIME
        };
    }

    fn note_probe(&mut self, is_retrans: bool) {
        let nxt = self.board.snd_max();
        if let Some(rack) = self.rack.as_deref_mut() {
            rack.on_probe_sent(nxt, is_retrans);
        }
    }

    /// RFC 8985 §7.4.2: the probe repaired a loss, so the window is reduced as for one
    /// (Linux's `tcp_process_tlp_ack`: a CWR episode that ends at once, cwnd = ssthresh),
    /// unless this window was already reduced for.
    fn tlp_loss_response(&mut self, now: SimTime) {
        if self.episode.is_some() || !self.may_respond() {
            return;
        }
        #[cfg(test)]
        self.congestion_log.push(CongestionKind::DupAck);
        let ssthresh = self.reduced_ssthresh(
            now,
            CongestionKind::DupAck,
            self.board.flight_size(),
            self.w,
        );
        self.w.ssthresh = ssthresh;
        // A controller that owns cwnd (BBR, `cc_rate`) sets it from its model on this ACK's
        // rate sample, as after an ECN reduction.
        if !self.cc_rate {
            self.w.cwnd = ssthresh.max(self.mss);
        }
        self.reduction_point = self.board.snd_max();
    }

    /// RACK-TLP's state, for tests and reports.
    pub fn rack(&self) -> Option<&Rack> {
        self.rack.as_deref()
    }

    fn retransmit(&mut self, now: SimTime, seq: u64, len: u32, out: &mut Vec<Packet>) {
        // ns-2 `reset_rtx_timer`: any retransmission ends the timing (Karn's rule).
        self.timed = None;
        if let Some(rate) = boxed(self.cc_rate, &mut self.rate) {
            rate.on_retransmit(seq, self.board.flight_size(), now);
        }
        self.board.on_retransmit(seq, now);
        self.counters.retransmits += 1;
        self.emit(now, seq, len, true, out);
    }

    fn emit(&mut self, now: SimTime, seq: u64, len: u32, retx: bool, out: &mut Vec<Packet>) {
        let mut cc_hdr = CcHeader::None;
        self.cc.on_send(
            now,
            &SendEvent {
                seq,
                len,
                is_retransmission: retx,
                window: self.w,
                srtt: self.rto.srtt(),
            },
            &mut cc_hdr,
        );
        let size = len + self.cfg.tcp.segment_header_bytes();
        // RFC 9293 §3.6: the last data segment of a finite transfer carries FIN when the
        // connection was opened with a handshake (a relay's stream, offered piece by piece,
        // never ends).
        let fin = if self.cfg.tcp.handshake
            && self.cfg.size.is_some()
            && seq + len as u64 == self.app_limit
        {
            TcpHeader::FLAG_FIN
        } else {
            0
        };
        // RFC 3168 §6.1.2 and §6.1.5: new data is ECN-capable and the first after a reduction
        // carries CWR; a retransmission is never ECT, so a mark on it cannot be echoed, unless
        // `ect_all` (Linux with DCTCP) keeps ECT on it too. An L4S sender's ECN-capable
        // codepoint is ECT(1) (RFC 9331 §4.1).
        let (ecn, cwr) = if self.cfg.tcp.ecn && !retx {
            let cwr = std::mem::take(&mut self.cwr_pending);
            (
                self.cfg.tcp.ect(),
                if cwr { TcpHeader::FLAG_CWR } else { 0 },
            )
        } else if self.cfg.tcp.ect_all {
            (self.cfg.tcp.ect(), 0)
        } else {
            (ECN_NOT_ECT, 0)
        };
        self.last_send = now;
        let c = &mut self.counters;
        // The first data packet: `first_send` (in the counters' cold lines) is written once
        // and not read per send.
        if c.packets_sent == 0 {
            c.first_send = Some(now);
        }
        c.bytes_sent += len as u64;
        c.wire_bytes_sent += size as u64;
        c.packets_sent += 1;
        if self.paced {
            self.pace_after_send(now, size as u64);
        }
        out.push(Packet::tcp_segment(
            (self.cfg.addr, self.cfg.dst_addr),
            size,
            ecn,
            self.cfg.flow,
            now,
            TcpHeader {
                src_port: self.cfg.port,
                dst_port: self.cfg.dst_port,
                seq,
                ack: Acknowledgment::default(),
                len,
                rwnd: 0,
                flags: if retx { TcpHeader::FLAG_RETX } else { 0 } | fin | cwr,
                cc: cc_hdr,
            },
        ));
        // The option is written into the packet once it is in `out`: built in place, a segment
        // without options costs no copy of an option space (measured: 2 % of the sender's
        // instructions in P1 when the header took a computed one).
        if self.cfg.tcp.timestamps {
            let ts = self.timestamps(now);
            if let Some(h) = out.last_mut().and_then(Packet::tcp_mut) {
                h.ack = h.ack.with_timestamps(ts);
            }
        }
    }

    /// A segment with no data: the SYN, or the ACK of the receiver's FIN.
    fn emit_control(&mut self, now: SimTime, flags: u16, out: &mut Vec<Packet>) {
        let options = if self.cfg.tcp.timestamps {
            Acknowledgment::default().with_timestamps(self.timestamps(now))
        } else {
            Acknowledgment::default()
        };
        let size = self.cfg.tcp.header_bytes + options.option_bytes();
        self.counters.wire_bytes_sent += size as u64;
        // RFC 3168 §6.1.1: a SYN is not ECT; Linux with DCTCP sends it ECT(0) (`ect_all`).
        let ecn = if self.cfg.tcp.ect_all {
            self.cfg.tcp.ect()
        } else {
            ECN_NOT_ECT
        };
        out.push(Packet::tcp_segment(
            (self.cfg.addr, self.cfg.dst_addr),
            size,
            ecn,
            self.cfg.flow,
            now,
            TcpHeader {
                src_port: self.cfg.port,
                dst_port: self.cfg.dst_port,
                ack: options,
                flags,
                ..TcpHeader::default()
            },
        ));
    }

    /// The timestamp option of the next segment: TSval now and TS.Recent echoed (RFC 7323 §4.3
    /// rule (3); 0 on the SYN, which acknowledges nothing, §3.2).
    fn timestamps(&self, now: SimTime) -> Timestamps {
        Timestamps {
            val: self.cfg.tcp.ts_value(now),
            ecr: self.ts_recent,
        }
    }

    /// Sends (or resends) the SYN and arms the timer for it.
    fn send_syn(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        self.syn = SynState {
            sent_at: Some(now),
            retransmitted: self.syn.sent_at.is_some(),
        };
        self.emit_control(now, TcpHeader::FLAG_SYN, out);
        self.rto_deadline = now + self.rto.rto();
    }

    /// The SYN-ACK arrived: the connection is open. Its RTT is a valid sample unless the SYN
    /// was resent (Karn's rule); if it was, RFC 6298 (5.7) sets the data's RTO to 3 s (with
    /// timestamps too: the echo would name the SYN answered, but (5.7) asks for 3 s all the
    /// same).
    fn on_syn_ack(&mut self, now: SimTime, h: &TcpHeader, out: &mut Vec<Packet>) {
        if self.established {
            return;
        }
        let SynState {
            sent_at: Some(sent_at),
            retransmitted,
        } = self.syn
        else {
            return;
        };
        self.established = true;
        self.rto_deadline = NO_TIME;
        if retransmitted {
            self.rto.after_syn_timeout();
        } else {
            // The RTO estimator may start from the SYN's RTT (RFC 6298 §2); the base RTT of the
            // delay-based controllers may not: a 40-byte SYN spends less time serialized than a
            // full segment, and Vegas would take the difference for queueing. With timestamps
            // the sample is the echo's, as every later one (RFC 7323 §4.1).
            let rtt = match self.read_timestamps(h) {
                Some(ecr) => self.cfg.tcp.ts_rtt(now, ecr),
                None => now.saturating_since(sent_at),
            };
            self.rto.on_sample(rtt);
            if let Some(rack) = boxed(self.rack_on, &mut self.rack) {
                rack.on_rtt_sample(rtt);
            }
        }
        self.transmit(now, out);
    }
}

/// RFC 7323 §4.3 rule (2)'s SEG.TSval >= TS.Recent on a clock that wraps: `val` is at or after
/// `recent` within half the clock's range (timestamps compare modulo 2^32, as sequence numbers
/// do).
pub(crate) fn ts_not_older(val: u32, recent: u32) -> bool {
    (val.wrapping_sub(recent) as i32) >= 0
}

impl Endpoint for TcpSender {
    fn handle_packet(&mut self, now: SimTime, pkt: Packet, out: &mut Vec<Packet>) {
        let Transport::Tcp(h) = &pkt.transport else {
            return;
        };
        if h.is_syn() {
            if h.is_ack() {
                self.on_syn_ack(now, h, out);
            }
            return;
        }
        if !self.established || !h.is_ack() {
            return;
        }
        self.on_ack(now, h, out);
        if h.is_fin() && self.is_complete() {
            // The receiver closed its side: the last ACK of the exchange.
            self.emit_control(now, TcpHeader::FLAG_ACK, out);
        }
    }

    fn handle_timeout(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        if !self.started {
            if now < self.cfg.start {
                return;
            }
            self.started = true;
            if self.established {
                self.transmit(now, out);
            } else {
                self.send_syn(now, out);
            }
            return;
        }
        if self.pace_waiting && self.pace_next <= now {
            // Pacing's departure time: send what the window allows.
            self.transmit(now, out);
        }
        if self.rack_on && self.established {
            // The reordering timer and the probe timeout share the endpoint's deadline with
            // the RTO (RFC 8985 §8) and pacing; whichever expired is served.
            let (reo, pto) = self
                .rack
                .as_deref()
                .map_or((NO_TIME, NO_TIME), |r| (r.reo_deadline(), r.pto_deadline()));
            if reo <= now {
                self.on_reo_timeout(now, out);
                return;
            }
            if pto <= now {
                self.on_pto(now, out);
                return;
            }
        }
        if time_opt(self.rto_deadline).is_none_or(|t| t > now) {
            return;
        }
        if self.established {
            self.on_rto(now, out);
        } else {
            // RFC 6298 (5.5): the SYN's timer backs off like any other.
            self.counters.timeouts += 1;
            self.rto.on_expiry();
            self.send_syn(now, out);
        }
    }

    fn poll_timeout(&self) -> Option<SimTime> {
        if !self.started {
            Some(self.cfg.start)
        } else if self.pace_waiting || self.rack_on {
            // One deadline for the RTO, pacing's departure time and RACK-TLP's two timers.
            let mut t = self.rto_deadline;
            if self.pace_waiting {
                t = t.min(self.pace_next);
            }
            if self.rack_on {
                t = t.min(self.rack.as_deref().map_or(NO_TIME, Rack::deadline));
            }
            time_opt(t)
        } else {
            time_opt(self.rto_deadline)
        }
    }
}

/// A sender at address 0, port 0, talking to a receiver at address 1, port 1, flow 0, from
/// time 0 (`size` None: bulk): the fixture of the TCP unit tests, beside
/// `TcpReceiver::for_test`.
#[cfg(test)]
impl TcpSender {
    pub(crate) fn for_test(tcp: TcpSpec, size: Option<u64>) -> TcpSender {
        TcpSender::new(TcpSenderConfig {
            addr: 0,
            dst_addr: 1,
            port: 0,
            dst_port: 1,
            flow: 0,
            start: SimTime::ZERO,
            stop: None,
            size,
            tcp: tcp.into(),
        })
    }
}

#[cfg(test)]
mod tests {
    //! Hand-computed traces of RFC 5681 §3.2, RFC 6582 §3.2, RFC 6675 §5 and RFC 6298 §5: a
    //! 20-segment window, MSS 1000, the receiver's ACKs crafted by hand.
    use super::*;
    use crate::cc::Growth;
    use crate::packet::SackBlocks;
    use crate::packet::ECN_ECT0;
    use crate::tcp::config::{InitialWindow, PrrBound, Recovery};
    use crate::tcp::receiver::TcpReceiver;

    const MSS: u64 = 1000;

    /// The traces below are RFC 5681's, RFC 6582's and RFC 6675's own, without Limited Transmit
    /// (its tests turn it on).
    fn sender(recovery: Recovery) -> TcpSender {
        let tcp = TcpSpec {
            recovery,
            mss: MSS as u32,
            initial_window: InitialWindow::Segments(20),
            delayed_ack: false,
            handshake: false,
            limited_transmit: false,
            ..TcpSpec::default()
        };
        TcpSender::for_test(tcp, None)
    }

    fn ack_pkt(ack: u64, sack: &[(u64, u64)]) -> Packet {
        let mut blocks = SackBlocks::default();
        for &b in sack {
            blocks.push(b);
        }
        Packet {
            src: 1,
            dst: 0,
            size: 40,
            dscp: 0,
            ecn: 0,
            ttl: crate::packet::DEFAULT_TTL,
            flow: 0,
            sent_at: SimTime::ZERO,
            transport: Transport::Tcp(TcpHeader {
                src_port: 1,
                dst_port: 0,
                ack: Acknowledgment::with_sack(ack, &blocks),
                // What the receiver of `sender()` advertises: its whole buffer.
                rwnd: TcpSpec::default().rcv_buffer as u32,
                flags: TcpHeader::FLAG_ACK,
                ..TcpHeader::default()
            }),
        }
    }

    fn seqs(out: &[Packet]) -> Vec<u64> {
        out.iter().map(|p| p.tcp().map_or(0, |h| h.seq)).collect()
    }

    fn t(ms: u64) -> SimTime {
        SimTime::from_millis(ms)
    }

    fn start(s: &mut TcpSender) -> Vec<Packet> {
        let mut out = vec![];
        s.handle_timeout(SimTime::ZERO, &mut out);
        out
    }

    #[test]
    fn reno_halves_the_flight_inflates_by_three_and_deflates_on_the_new_ack() {
        let mut s = sender(Recovery::Reno);
        assert_eq!(start(&mut s).len(), 20);
        let mut out = vec![];
        for _ in 0..2 {
            s.handle_packet(t(50), ack_pkt(0, &[]), &mut out);
        }
        assert!(out.is_empty(), "no retransmission before the third dupack");
        s.handle_packet(t(50), ack_pkt(0, &[]), &mut out);
        assert_eq!(s.ssthresh(), 10 * MSS);
        assert_eq!(s.cwnd(), 13 * MSS);
        assert_eq!(seqs(&out), vec![0], "fast retransmit of the first segment");
        out.clear();
        for _ in 3..19 {
            s.handle_packet(t(51), ack_pkt(0, &[]), &mut out);
        }
        assert_eq!(s.cwnd(), 29 * MSS, "+1 MSS per further dupack");
        // Inflation lets 9 new segments out: pipe 20 + n + 1 <= 29.
        assert_eq!(seqs(&out), (20..29).map(|i| i * MSS).collect::<Vec<_>>());
        out.clear();
        s.handle_packet(t(100), ack_pkt(20 * MSS, &[]), &mut out);
        assert_eq!(s.cwnd(), 10 * MSS, "deflated to ssthresh");
        assert!(!s.in_recovery());
        assert_eq!(s.counters().fast_retransmits, 1);
    }

    #[test]
    fn newreno_recovers_three_losses_in_one_window_with_one_reduction() {
        let mut s = sender(Recovery::NewReno);
        start(&mut s);
        let mut out = vec![];
        // Segments 0, 5 and 10 are lost; the other 17 produce 17 dupacks.
        for _ in 0..17 {
            s.handle_packet(t(50), ack_pkt(0, &[]), &mut out);
        }
        assert_eq!(s.cwnd(), 27 * MSS);
        let sent: Vec<u64> = seqs(&out);
        assert_eq!(sent[0], 0);
        // Inflation lets pipe reach cwnd: 20 + n <= 27, seven new segments.
        assert_eq!(sent.len(), 1 + 7, "retransmission and seven new segments");
        out.clear();
        // The retransmission of 0 arrives: partial ACK up to the next hole.
        s.handle_packet(t(100), ack_pkt(5 * MSS, &[]), &mut out);
        assert_eq!(
            seqs(&out)[0],
            5 * MSS,
            "partial ACK resends the next hole at once"
        );
        assert_eq!(s.cwnd(), 27 * MSS - 5 * MSS + MSS);
        assert!(s.in_recovery());
        out.clear();
        s.handle_packet(t(150), ack_pkt(10 * MSS, &[]), &mut out);
        assert_eq!(seqs(&out)[0], 10 * MSS);
        out.clear();
        s.handle_packet(t(200), ack_pkt(26 * MSS, &[]), &mut out);
        assert!(!s.in_recovery(), "ACK beyond recover ends recovery");
        assert_eq!(s.ssthresh(), 10 * MSS, "one reduction for the whole window");
        let c = s.counters();
        assert_eq!((c.fast_retransmits, c.retransmits, c.timeouts), (1, 3, 0));
    }

    #[test]
    fn sack_recovery_sends_by_pipe_without_inflating_cwnd() {
        let mut s = sender(Recovery::Sack);
        start(&mut s);
        let mut out = vec![];
        // Segment 0 lost; each dupack SACKs one more segment.
        for k in 1..=19 {
            s.handle_packet(t(50), ack_pkt(0, &[(MSS, (k + 1) * MSS)]), &mut out);
            if k == 3 {
                assert_eq!(
                    seqs(&out),
                    vec![0],
                    "three SACKed segments mark the hole lost"
                );
                assert_eq!(s.cwnd(), 10 * MSS);
                assert_eq!(s.ssthresh(), 10 * MSS);
            }
        }
        assert_eq!(s.cwnd(), 10 * MSS, "no inflation under RFC 6675");
        // pipe = the retransmission + new data; new data flows once pipe < cwnd: 9 segments.
        assert_eq!(out.len(), 1 + 9);
        assert_eq!(s.pipe(), 10 * MSS);
        out.clear();
        s.handle_packet(t(100), ack_pkt(20 * MSS, &[]), &mut out);
        assert!(!s.in_recovery());
    }

    /// One loss (segment 0 of 20), each duplicate ACK SACKing one more segment: the segments
    /// each ACK from the 3rd to the 19th lets out, and the pipe and cwnd after the last.
    fn one_loss_sends(recovery: Recovery) -> (Vec<usize>, u64, u64, TcpSender) {
        let mut s = sender(recovery);
        start(&mut s);
        let mut sent = vec![];
        for k in 1..=19 {
            let mut out = vec![];
            s.handle_packet(t(50), ack_pkt(0, &[(MSS, (k + 1) * MSS)]), &mut out);
            if k >= 3 {
                sent.push(out.len());
            }
        }
        let (pipe, cwnd) = (s.pipe(), s.cwnd());
        (sent, pipe, cwnd, s)
    }

    #[test]
    fn prr_sends_through_the_recovery_where_rfc_6675_first_waits_half_a_window() {
        // RFC 6937 §4's single loss: ssthresh 10 of a 20-segment window. RFC 6675 sets cwnd =
        // ssthresh at once, so after the retransmission nothing goes out until the pipe (16 at
        // the third duplicate ACK, one less per ACK) is below 10: eight silent ACKs, then one
        // segment per ACK. PRR lets out one segment per two delivered from the start (its
        // sndcnt per ACK by hand in `recovery/prr.rs`), so the ACK clock never stops.
        let (sack, sack_pipe, _, _) = one_loss_sends(Recovery::Sack);
        assert_eq!(
            sack,
            [1, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1],
            "RFC 6675"
        );
        let (prr, prr_pipe, _, _) = one_loss_sends(Recovery::Prr(PrrBound::SlowStart));
        assert_eq!(
            prr,
            [1, 0, 0, 1, 0, 1, 0, 1, 0, 1, 0, 0, 1, 1, 1, 1, 1],
            "RFC 6937"
        );
        // Both send the retransmission and nine new segments, and end with the pipe at
        // ssthresh.
        assert_eq!(sack.iter().sum::<usize>(), 10);
        assert_eq!(prr.iter().sum::<usize>(), 10);
        assert_eq!((sack_pipe, prr_pipe), (10 * MSS, 10 * MSS));
    }

    #[test]
    fn prr_brings_cwnd_to_ssthresh_by_the_end_of_recovery() {
        // RFC 6937 §3: the window PRR computes on the last duplicate ACK is already ssthresh
        // (pipe 9 + sndcnt 1), and the ACK of the retransmission leaves recovery with cwnd =
        // ssthresh, so the exit changes nothing and sends one segment for the one delivered.
        let (_, _, cwnd, mut s) = one_loss_sends(Recovery::Prr(PrrBound::SlowStart));
        assert_eq!((cwnd, s.ssthresh()), (10 * MSS, 10 * MSS));
        let mut out = vec![];
        s.handle_packet(t(100), ack_pkt(20 * MSS, &[]), &mut out);
        assert!(!s.in_recovery());
        assert_eq!(s.cwnd(), 10 * MSS);
        assert_eq!(seqs(&out), [29 * MSS]);
    }

    #[test]
    fn with_the_pipe_far_below_ssthresh_crb_rebuilds_it_one_for_one_and_ssrb_faster() {
        // RFC 6937 §4's burst loss: segments 0-14 of 20 lost, 15-19 SACKed. On the third
        // duplicate ACK all 15 holes have 3 SACKed segments above: pipe = 20 − 3 − 15 = 2, far
        // below ssthresh 10. CRB sends what was delivered (the retransmission, then one per
        // ACK); SSRB one more per ACK; neither reaches ssthresh here, and leaving recovery
        // would then set cwnd = ssthresh whatever the pipe (Linux and ns-3 do the same).
        for (bound, expect) in [
            (PrrBound::Conservative, [1, 1, 1]),
            (PrrBound::SlowStart, [2, 2, 2]),
        ] {
            let mut s = sender_with(spec(Recovery::Prr(bound), 20), None);
            start(&mut s);
            let mut sent = vec![];
            for k in 1..=5 {
                let mut out = vec![];
                s.handle_packet(t(50), ack_pkt(0, &[(15 * MSS, (15 + k) * MSS)]), &mut out);
                if k >= 3 {
                    sent.push(out.len());
                }
            }
            assert_eq!(sent, expect, "{bound:?}");
            assert!(s.cwnd() < s.ssthresh());
        }
    }

    /// SACK recovery with ns-3's rules chosen or not; segments 0-3 of 20 lost, 4-6 SACKed by
    /// three duplicate ACKs: FlightSize 20 segments, pipe 13 (20 − 3 SACKed − 4 deemed lost,
    /// RFC 6675 §4 IsLost: 3 segments SACKed above each hole).
    fn sack_after_four_losses(flight: SsthreshFlight, partial_ack_send: bool) -> TcpSender {
        sack_after_four_losses_with(TcpSpec {
            ssthresh_flight: flight,
            partial_ack_send,
            ..spec(Recovery::Sack, 20)
        })
    }

    fn sack_after_four_losses_with(tcp: TcpSpec) -> TcpSender {
        let mut s = sender_with(tcp, None);
        start(&mut s);
        let mut out = vec![];
        for k in 5..=7 {
            s.handle_packet(t(50), ack_pkt(0, &[(4 * MSS, k * MSS)]), &mut out);
        }
        assert!(s.in_recovery());
        assert_eq!(seqs(&out), vec![0], "the fast retransmission only");
        s
    }

    #[test]
    fn a_fast_retransmit_halves_flight_size_or_with_ssthresh_flight_pipe_the_pipe() {
        let s = sack_after_four_losses(SsthreshFlight::FlightSize, false);
        assert_eq!(s.ssthresh(), 10 * MSS, "RFC 6675 (4.2): FlightSize / 2");
        let s = sack_after_four_losses(SsthreshFlight::Pipe, false);
        assert_eq!(
            s.ssthresh(),
            6500,
            "ns-3: BytesInFlight() / 2 = 13 segments / 2"
        );
        assert_eq!(s.cwnd(), 6500);
    }

    #[test]
    fn an_rto_in_sack_recovery_reduces_again_only_with_ssthresh_flight_pipe() {
        for (flight, expected) in [
            (SsthreshFlight::FlightSize, 10 * MSS),
            (SsthreshFlight::Pipe, 7 * MSS),
        ] {
            let mut s = sack_after_four_losses(flight, false);
            // The pipe before the timeout: 13 segments and the retransmission of segment 0.
            assert_eq!(s.pipe(), 14 * MSS);
            let mut out = vec![];
            s.handle_timeout(t(1000), &mut out);
            assert_eq!(s.counters().timeouts, 1);
            assert_eq!(s.ssthresh(), expected, "{flight:?}");
            assert_eq!(s.cwnd(), MSS);
        }
    }

    #[test]
    fn with_partial_ack_send_each_partial_ack_lets_the_next_hole_out_beyond_pipe() {
        for on in [false, true] {
            let mut s = sack_after_four_losses(SsthreshFlight::Pipe, on);
            let mut out = vec![];
            // Segment 0's retransmission arrives: pipe is 13 segments against a cwnd of 6.5,
            // so RFC 6675 sends nothing; ns-3's DoRetransmit resends segment 1.
            s.handle_packet(t(100), ack_pkt(MSS, &[(4 * MSS, 7 * MSS)]), &mut out);
            assert_eq!(
                seqs(&out),
                if on { vec![MSS] } else { vec![] },
                "partial_ack_send {on}"
            );
            out.clear();
            s.handle_packet(t(150), ack_pkt(2 * MSS, &[(4 * MSS, 7 * MSS)]), &mut out);
            if on {
                assert_eq!(seqs(&out), vec![2 * MSS], "and segment 2 on the next");
            } else {
                assert!(out.is_empty());
            }
        }
    }

    /// The recovery of [`sack_after_four_losses`] (FlightSize basis, ssthresh 10 segments)
    /// ended by one ACK of all 20 segments, with `credit` the exit rule.
    fn cwnd_after_sack_recovery_exit(credit: RecoveryExitCredit) -> u64 {
        let mut s = sack_after_four_losses_with(TcpSpec {
            recovery_exit_credit: credit,
            ..spec(Recovery::Sack, 20)
        });
        let mut out = vec![];
        assert_eq!(s.ssthresh(), 10 * MSS);
        s.handle_packet(t(100), ack_pkt(20 * MSS, &[]), &mut out);
        assert!(!s.in_recovery());
        s.cwnd()
    }

    #[test]
    fn the_ack_that_ends_fast_recovery_grows_cwnd_only_with_ns3s_exit_credit() {
        // RFC 6675 §5 (A): the exit ACK leaves cwnd at ssthresh.
        assert_eq!(
            cwnd_after_sack_recovery_exit(RecoveryExitCredit::None),
            10 * MSS
        );
        // ns-3's ProcessAck: cwnd = ssthresh, then IncreaseWindow with the 20 segments the ACK
        // advanced; byte counting in congestion avoidance (cwnd = ssthresh) adds one segment
        // for a window's worth of acknowledged bytes.
        assert_eq!(
            cwnd_after_sack_recovery_exit(RecoveryExitCredit::Acked),
            11 * MSS
        );
    }

    #[test]
    fn after_an_rto_the_ack_that_passes_the_recovery_point_credits_only_what_lies_above_it() {
        for (credit, cwnd) in [
            // RFC 5681 §3.1 slow start: min(N, SMSS) for the 4 segments acknowledged.
            (RecoveryExitCredit::None, 2 * MSS),
            // ns-3's CA_LOSS exit: (ackNumber − m_recover) / segmentSize = 0 segments.
            (RecoveryExitCredit::Acked, MSS),
        ] {
            let mut s = sender_with(
                TcpSpec {
                    recovery_exit_credit: credit,
                    ..spec(Recovery::Sack, 4)
                },
                None,
            );
            assert_eq!(start(&mut s).len(), 4);
            // No ACK comes back: the timer expires and segment 0 is resent.
            let mut out = vec![];
            s.handle_timeout(t(1000), &mut out);
            assert_eq!(seqs(&out), vec![0]);
            assert_eq!((s.cwnd(), s.ssthresh()), (MSS, 2 * MSS));
            // The receiver held segments 1-3: one ACK covers everything up to SND.MAX, the
            // recovery point the RTO set.
            out.clear();
            s.handle_packet(t(1100), ack_pkt(4 * MSS, &[]), &mut out);
            assert_eq!(s.cwnd(), cwnd, "{credit:?}");
        }
    }

    #[test]
    fn partial_ack_send_skips_a_front_segment_already_retransmitted() {
        let mut s = sack_after_four_losses(SsthreshFlight::FlightSize, true);
        // cwnd 10 segments, pipe 14: nothing goes out by pipe. An ACK of nothing new that
        // SACKs 7-16 takes pipe to 4 and lets segments 1, 2 and 3 be resent by pipe.
        let mut out = vec![];
        s.handle_packet(t(60), ack_pkt(0, &[(4 * MSS, 17 * MSS)]), &mut out);
        assert_eq!(&seqs(&out)[..3], &[MSS, 2 * MSS, 3 * MSS]);
        out.clear();
        // Segment 0 arrives: the front is now segment 1, whose retransmission is in flight, so
        // nothing beyond pipe.
        let before = s.counters().retransmits;
        s.handle_packet(t(100), ack_pkt(MSS, &[(4 * MSS, 17 * MSS)]), &mut out);
        assert_eq!(s.counters().retransmits, before, "{:?}", seqs(&out));
        assert!(
            out.iter().all(|p| p.tcp().unwrap().seq >= 20 * MSS),
            "{:?}",
            seqs(&out)
        );
    }

    #[test]
    fn consecutive_timeouts_back_off_and_cut_ssthresh_once() {
        let mut s = sender(Recovery::NewReno);
        start(&mut s);
        let mut out = vec![];
        // RFC 6298 (2.1): initial RTO 1 s.
        assert_eq!(s.poll_timeout(), Some(t(1000)));
        s.handle_timeout(t(1000), &mut out);
        assert_eq!(seqs(&out), vec![0]);
        assert_eq!(s.cwnd(), MSS, "loss window of one segment");
        assert_eq!(s.ssthresh(), 10 * MSS, "half of the 20-segment flight");
        assert_eq!(s.poll_timeout(), Some(t(3000)), "RTO doubled to 2 s");
        out.clear();
        s.handle_timeout(t(3000), &mut out);
        assert_eq!(seqs(&out), vec![0]);
        assert_eq!(s.ssthresh(), 10 * MSS, "no second cut on a back-off");
        assert_eq!(s.poll_timeout(), Some(t(7000)), "then 4 s");
        assert_eq!(s.counters().timeouts, 2);
        // A stale wake-up does nothing.
        out.clear();
        s.handle_timeout(t(5000), &mut out);
        assert!(out.is_empty());
    }

    #[test]
    fn a_timeout_during_fast_recovery_keeps_the_recovery_ssthresh() {
        // Bug pinned: a long NewReno recovery inflates FlightSize, and halving it at the RTO
        // raised ssthresh above the first reduction, so slow start overshot again every cycle
        // (one flow on a clean 10 Mbit/s path got 50 % utilization).
        let mut s = sender(Recovery::NewReno);
        start(&mut s);
        let mut out = vec![];
        for _ in 0..19 {
            s.handle_packet(t(50), ack_pkt(0, &[]), &mut out);
        }
        assert_eq!(s.ssthresh(), 10 * MSS);
        assert!(s.snd_max() > 20 * MSS, "inflation sent new data");
        let deadline = s.poll_timeout().expect("timer running");
        s.handle_timeout(deadline, &mut out);
        assert_eq!(s.counters().timeouts, 1);
        assert_eq!(s.ssthresh(), 10 * MSS);
        assert_eq!(s.cwnd(), MSS);
        // Issue 9: the controller still hears of the timeout (CUBIC and BIC restart their
        // epoch, RFC 9438 §4.8), though ssthresh keeps the recovery's value.
        assert_eq!(
            s.congestion_log,
            vec![CongestionKind::DupAck, CongestionKind::Rto]
        );
    }

    #[test]
    fn dupacks_after_a_timeout_do_not_trigger_a_fast_retransmit() {
        // RFC 6582 §3.2 step 2 (the `recover` guard).
        let mut s = sender(Recovery::NewReno);
        start(&mut s);
        let mut out = vec![];
        s.handle_timeout(t(1000), &mut out);
        out.clear();
        for _ in 0..5 {
            s.handle_packet(t(1050), ack_pkt(0, &[]), &mut out);
        }
        assert_eq!(s.counters().fast_retransmits, 0);
        assert!(out.is_empty());
    }

    #[test]
    fn a_finite_transfer_completes_when_its_last_byte_is_acknowledged() {
        let mut s = sender(Recovery::NewReno);
        s.cfg.size = Some(2500);
        s.app_limit = 2500;
        let out = start(&mut s);
        assert_eq!(
            out.iter().map(|p| p.payload_len()).collect::<Vec<_>>(),
            vec![1000, 1000, 500]
        );
        let mut more = vec![];
        s.handle_packet(t(40), ack_pkt(2500, &[]), &mut more);
        assert!(more.is_empty());
        assert_eq!(s.counters().completed_at, Some(t(40)));
        assert_eq!(
            s.poll_timeout(),
            None,
            "timer stopped with nothing in flight"
        );
    }

    fn sender_with(tcp: TcpSpec, size: Option<u64>) -> TcpSender {
        TcpSender::for_test(tcp, size)
    }

    fn spec(recovery: Recovery, iw: u32) -> TcpSpec {
        TcpSpec {
            recovery,
            mss: MSS as u32,
            initial_window: InitialWindow::Segments(iw),
            delayed_ack: false,
            handshake: false,
            limited_transmit: false,
            ..TcpSpec::default()
        }
    }

    fn ack_rwnd(ack: u64, rwnd: u32) -> Packet {
        let mut p = ack_pkt(ack, &[]);
        if let Some(h) = p.tcp_mut() {
            h.rwnd = rwnd;
        }
        p
    }

    /// Sequence numbers of the retransmissions in `out`.
    fn resent(out: &[Packet]) -> Vec<u64> {
        out.iter()
            .filter_map(|p| p.tcp())
            .filter(|h| h.flags & TcpHeader::FLAG_RETX != 0)
            .map(|h| h.seq)
            .collect()
    }

    /// SACK blocks a receiver holding `held` segments (indices) above a hole would send, newest
    /// first: contiguous runs of held segments.
    fn blocks(held: &[u64]) -> Vec<(u64, u64)> {
        let mut runs: Vec<(u64, u64)> = vec![];
        for &i in held {
            match runs.last_mut() {
                Some(r) if r.1 == i * MSS => r.1 = (i + 1) * MSS,
                _ => runs.push((i * MSS, (i + 1) * MSS)),
            }
        }
        runs.reverse();
        runs.truncate(4);
        runs
    }

    /// Segment 0 is lost and segments 1..=`last` arrive one by one: one ACK each, for 0, SACKing
    /// all that arrived so far.
    fn sack_one_by_one(s: &mut TcpSender, last: u64, at: SimTime, out: &mut Vec<Packet>) {
        for k in 1..=last {
            let held: Vec<u64> = (1..=k).collect();
            s.handle_packet(at, ack_pkt(0, &blocks(&held)), out);
        }
    }

    #[test]
    fn no_rtt_sample_from_an_ack_that_covers_a_fast_retransmission() {
        // Bug pinned (issue 9): the ACK that the retransmission of segment 1 releases also
        // covers segments sent 60 ms earlier; timing the last of them counted the recovery in
        // the RTT (Karn's rule, RFC 6298 §3).
        let mut s = sender(Recovery::NewReno);
        start(&mut s);
        let mut out = vec![];
        s.handle_packet(t(50), ack_pkt(MSS, &[]), &mut out);
        assert_eq!(s.srtt(), Some(SimDuration::from_millis(50)));
        for _ in 0..3 {
            s.handle_packet(t(60), ack_pkt(MSS, &[]), &mut out);
        }
        assert_eq!(resent(&out), vec![MSS]);
        s.handle_packet(t(110), ack_pkt(22 * MSS, &[]), &mut out);
        assert_eq!(s.srtt(), Some(SimDuration::from_millis(50)));
    }

    #[test]
    fn limited_transmit_sends_one_segment_per_early_dupack_and_they_do_not_count_in_ssthresh() {
        // RFC 3042 §2 and RFC 5681 §3.2 step 2.
        let mut s = sender_with(
            TcpSpec {
                limited_transmit: true,
                ..spec(Recovery::NewReno, 20)
            },
            None,
        );
        start(&mut s);
        let mut out = vec![];
        s.handle_packet(t(50), ack_pkt(0, &[]), &mut out);
        s.handle_packet(t(50), ack_pkt(0, &[]), &mut out);
        assert_eq!(seqs(&out), vec![20 * MSS, 21 * MSS]);
        out.clear();
        s.handle_packet(t(50), ack_pkt(0, &[]), &mut out);
        assert_eq!(resent(&out), vec![0]);
        assert_eq!(s.ssthresh(), 10 * MSS, "half of 20 segments, not of 22");
    }

    #[test]
    fn the_rfc_preset_grows_by_rfc_5681s_recommended_rules_whatever_the_ack_frequency() {
        // RFC 5681 §3.1: slow start adds min(N, SMSS) per ACK (eq. (2)); congestion avoidance
        // counts bytes (RECOMMENDED), one SMSS per cwnd acknowledged, so a receiver that
        // acknowledges every second segment does not halve the growth, as eq. (3) (a MAY, one
        // SMSS²/cwnd per ACK) would: 10.5 segments here instead of 11.
        let rfc = TcpSpec::default();
        let ss = |ssthresh: Option<u64>| {
            sender_with(
                TcpSpec {
                    mss: MSS as u32,
                    initial_window: InitialWindow::Segments(10),
                    initial_ssthresh: ssthresh,
                    handshake: false,
                    ..rfc.clone()
                },
                None,
            )
        };
        let mut s = ss(None);
        start(&mut s);
        let mut out = vec![];
        s.handle_packet(t(50), ack_pkt(2 * MSS, &[]), &mut out);
        assert_eq!(
            s.cwnd(),
            11 * MSS,
            "slow start: one SMSS for an ACK of two segments"
        );
        let mut s = ss(Some(10 * MSS));
        start(&mut s);
        for k in 1..=5 {
            s.handle_packet(t(50 + k), ack_pkt(2 * k * MSS, &[]), &mut out);
        }
        assert_eq!(
            s.cwnd(),
            11 * MSS,
            "congestion avoidance: one SMSS per window acked"
        );
    }

    /// A NewReno sender with Limited Transmit, `iw` segments in its initial window.
    fn limited_transmit_sender(iw: u32, size: Option<u64>) -> TcpSender {
        sender_with(
            TcpSpec {
                limited_transmit: true,
                ..spec(Recovery::NewReno, iw)
            },
            size,
        )
    }

    #[test]
    fn limited_transmit_sends_one_new_segment_on_each_of_the_first_two_dupacks_only() {
        // RFC 3042 §2: the first two duplicate ACKs each release one new segment, cwnd
        // unchanged; later ones (DupThresh 5 here) release nothing until recovery.
        let mut s = sender_with(
            TcpSpec {
                limited_transmit: true,
                dupthresh: 5,
                ..spec(Recovery::NewReno, 20)
            },
            None,
        );
        start(&mut s);
        let mut out = vec![];
        for k in 1..=4 {
            s.handle_packet(t(50), ack_pkt(0, &[]), &mut out);
            assert_eq!(s.cwnd(), 20 * MSS, "cwnd unchanged at dupack {k}");
        }
        assert_eq!(seqs(&out), vec![20 * MSS, 21 * MSS]);
    }

    #[test]
    fn limited_transmit_releases_new_data_only_never_a_retransmission() {
        // RFC 3042 §2 sends "new data". After an RTO, go-back-N holds the resends to cwnd = 1
        // segment; a duplicate ACK (a late one of the old window) must not let a second resend
        // out beyond it (the old allowance widened the window for retransmissions too).
        let mut s = limited_transmit_sender(4, None);
        start(&mut s);
        let mut out = vec![];
        s.handle_timeout(t(1000), &mut out);
        assert_eq!(resent(&out), vec![0]);
        out.clear();
        s.handle_packet(t(1010), ack_pkt(0, &[]), &mut out);
        assert!(out.is_empty(), "{:?}", seqs(&out));
    }

    #[test]
    fn limited_transmit_waits_for_the_receivers_window() {
        // RFC 3042 §2: only if the advertised window allows. The window closes at the 20
        // segments in flight (a window change, not a duplicate); the next two duplicates send
        // nothing and the third starts fast retransmit.
        let mut s = limited_transmit_sender(20, None);
        start(&mut s);
        let mut out = vec![];
        for _ in 0..3 {
            s.handle_packet(t(50), ack_rwnd(0, 20 * MSS as u32), &mut out);
        }
        assert!(out.is_empty(), "{:?}", seqs(&out));
        s.handle_packet(t(50), ack_rwnd(0, 20 * MSS as u32), &mut out);
        assert_eq!(seqs(&out), vec![0]);
        assert_eq!(resent(&out), vec![0]);
    }

    #[test]
    fn limited_transmit_keeps_the_flight_within_cwnd_plus_two_segments_and_max_window() {
        // RFC 3042 §2: outstanding data at most cwnd + 2 segments. After an ECN reduction cwnd
        // is 9.5 segments with 19 in flight: nothing may go.
        let mut s = sender_with(
            TcpSpec {
                ecn: true,
                limited_transmit: true,
                ..spec(Recovery::NewReno, 20)
            },
            None,
        );
        start(&mut s);
        let mut out = vec![];
        s.handle_packet(t(50), ece_ack(MSS), &mut out);
        assert_eq!(s.cwnd(), 19 * MSS / 2);
        out.clear();
        for _ in 0..2 {
            s.handle_packet(t(51), ack_pkt(MSS, &[]), &mut out);
        }
        assert!(out.is_empty(), "{:?}", seqs(&out));
        // Nor beyond max_window, the most the sender may have outstanding (ns-2's window_,
        // which its `send_one` also checks): the allowance once went past it.
        let mut s = sender_with(
            TcpSpec {
                limited_transmit: true,
                max_window: Some(20 * MSS),
                ..spec(Recovery::NewReno, 20)
            },
            None,
        );
        start(&mut s);
        for _ in 0..2 {
            s.handle_packet(t(50), ack_pkt(0, &[]), &mut out);
        }
        assert!(out.is_empty(), "{:?}", seqs(&out));
    }

    #[test]
    fn a_limited_transmit_allowance_belongs_to_its_duplicate_ack_and_lapses_after_it() {
        // RFC 3042 §2 sends "upon the arrival" of the duplicate ACK. A 20-segment transfer is
        // all in flight when the first duplicate arrives; data offered later (a relay's) waits
        // for cwnd instead of using the lapsed allowance.
        let mut s = limited_transmit_sender(20, Some(20 * MSS));
        start(&mut s);
        let mut out = vec![];
        s.handle_packet(t(50), ack_pkt(0, &[]), &mut out);
        assert!(out.is_empty());
        s.offer(t(51), 10 * MSS, &mut out);
        assert!(out.is_empty(), "{:?}", seqs(&out));
        // The second duplicate brings its own allowance.
        s.handle_packet(t(52), ack_pkt(0, &[]), &mut out);
        assert_eq!(seqs(&out), vec![20 * MSS]);
    }

    #[test]
    fn sack_limited_transmit_sends_by_pipe_on_duplicate_acks_with_new_sack_information() {
        // RFC 6675 §5 step (3): pipe, not an allowance of two segments.
        let mut s = sender_with(
            TcpSpec {
                limited_transmit: true,
                ..spec(Recovery::Sack, 20)
            },
            None,
        );
        start(&mut s);
        let mut out = vec![];
        s.handle_packet(t(50), ack_pkt(0, &blocks(&[1])), &mut out);
        assert_eq!(seqs(&out), vec![20 * MSS]);
        // The same SACK again is not a duplicate ACK (RFC 6675 §2) and sends nothing.
        s.handle_packet(t(50), ack_pkt(0, &blocks(&[1])), &mut out);
        assert_eq!(out.len(), 1);
        s.handle_packet(t(50), ack_pkt(0, &blocks(&[1, 2])), &mut out);
        assert_eq!(seqs(&out), vec![20 * MSS, 21 * MSS]);
        out.clear();
        s.handle_packet(t(50), ack_pkt(0, &blocks(&[1, 2, 3])), &mut out);
        assert_eq!(resent(&out), vec![0]);
        assert_eq!(s.ssthresh(), 10 * MSS);
    }

    /// A SACK sender in slow start with byte counting and no limit: every credited byte goes
    /// into cwnd, so cwnd shows what each ACK credited.
    fn unlimited_abc(credit: AckCredit) -> TcpSender {
        sender_with(
            TcpSpec {
                growth: Growth::ByteCounting {
                    limit_segments: u32::MAX,
                },
                ack_credit: credit,
                ..spec(Recovery::Sack, 20)
            },
            None,
        )
    }

    #[test]
    fn a_cumulative_ack_over_sacked_data_credits_it_all_unless_credit_is_delivered_bytes() {
        // Segment 0 is late (reordered), 1 and 2 arrive and are SACKed on two duplicate ACKs
        // (below DupThresh: no recovery), then 0 arrives and one ACK covers 0-2.
        for (credit, cwnd_after) in [
            // RFC 3465 §2.1: three previously unacknowledged segments.
            (AckCredit::Cumulative, 23 * MSS),
            // Linux `acked_sacked`, ns-3 `currentDelivered`: only segment 0 is new.
            (AckCredit::Delivered, 21 * MSS),
        ] {
            let mut s = unlimited_abc(credit);
            start(&mut s);
            let mut out = vec![];
            s.handle_packet(t(50), ack_pkt(0, &[(MSS, 2 * MSS)]), &mut out);
            s.handle_packet(t(50), ack_pkt(0, &[(MSS, 3 * MSS)]), &mut out);
            assert_eq!(
                s.cwnd(),
                20 * MSS,
                "{credit:?}: duplicate ACKs grow nothing"
            );
            s.handle_packet(t(51), ack_pkt(3 * MSS, &[]), &mut out);
            assert_eq!(s.cwnd(), cwnd_after, "{credit:?}");
            assert!(!s.in_recovery());
        }
    }

    #[test]
    fn delivered_credit_counts_bytes_newly_sacked_by_an_ack_that_also_advances_snd_una() {
        // One ACK covers segment 0 and SACKs 2: 1 + 1 segments delivered by it (ns-3's
        // TcpRateOps counts both); the cumulative rule counts only segment 0.
        for (credit, cwnd_after) in [
            (AckCredit::Cumulative, 21 * MSS),
            (AckCredit::Delivered, 22 * MSS),
        ] {
            let mut s = unlimited_abc(credit);
            start(&mut s);
            let mut out = vec![];
            s.handle_packet(t(50), ack_pkt(MSS, &[(2 * MSS, 3 * MSS)]), &mut out);
            assert_eq!(s.cwnd(), cwnd_after, "{credit:?}");
            // The ACK that later covers segment 2 credits it only under the cumulative rule.
            s.handle_packet(t(51), ack_pkt(3 * MSS, &[]), &mut out);
            assert_eq!(s.cwnd(), 23 * MSS, "{credit:?}: each byte is credited once");
        }
    }

    #[test]
    fn whole_segment_ssthresh_rounds_a_reduction_down_to_whole_segments() {
        // 21 segments in flight: RFC 5681 eq. (4) halves them to 10.5 segments in bytes;
        // counted as Linux and ns-3's CUBIC count, 10. The same at fast retransmit and at an
        // RTO.
        for (whole, ssthresh) in [(false, 10 * MSS + MSS / 2), (true, 10 * MSS)] {
            let tcp = TcpSpec {
                whole_segment_ssthresh: whole,
                ..spec(Recovery::Sack, 21)
            };
            let mut s = sender_with(tcp.clone(), None);
            start(&mut s);
            let mut out = vec![];
            for k in 1..=3 {
                let held: Vec<u64> = (1..=k).collect();
                s.handle_packet(t(50), ack_pkt(0, &blocks(&held)), &mut out);
            }
            assert!(s.in_recovery());
            assert_eq!(s.ssthresh(), ssthresh, "fast retransmit, whole = {whole}");

            let mut s = sender_with(tcp, None);
            start(&mut s);
            let rto = s.poll_timeout().expect("the RTO is armed");
            s.handle_timeout(rto, &mut out);
            assert_eq!(s.counters().timeouts, 1);
            assert_eq!(s.ssthresh(), ssthresh, "RTO, whole = {whole}");
        }
    }

    #[test]
    fn a_loss_found_after_sack_recovery_ends_is_a_new_congestion_event() {
        // Bug pinned (issue 9): segments the scoreboard deemed lost outside recovery were
        // resent with no congestion response.
        let mut s = sender(Recovery::Sack);
        start(&mut s);
        let mut out = vec![];
        sack_one_by_one(&mut s, 19, t(50), &mut out);
        assert_eq!(s.counters().fast_retransmits, 1);
        assert!(s.snd_max() >= 25 * MSS, "recovery sent new data by pipe");
        out.clear();
        // Segment 0's retransmission arrives: recovery ends. The new segment 20 was lost and
        // 21..=23 arrived: that loss belongs to data sent after the recovery point.
        s.handle_packet(t(100), ack_pkt(20 * MSS, &blocks(&[21, 22, 23])), &mut out);
        assert_eq!(s.counters().fast_retransmits, 2);
        assert_eq!(resent(&out), vec![20 * MSS]);
        assert!(s.ssthresh() < 10 * MSS, "{}", s.ssthresh());
    }

    #[test]
    fn rules_3_and_4_resend_holes_not_deemed_lost_when_no_new_data_is_left() {
        // RFC 6675 NextSeg (3) and (4). A 20-segment transfer loses segments 0 and 18; 18 has a
        // single SACKed segment above it, so it is never deemed lost, and used to wait for the
        // RTO. Once pipe allows (11 segments SACKed), the rescue retransmission (4) resends the
        // highest un-SACKed segment, 19, whose SACK has not arrived yet; when it does, 18 lies
        // below the highest SACKed byte and rule (3) resends it.
        let mut s = sender_with(spec(Recovery::Sack, 20), Some(20 * MSS));
        start(&mut s);
        let mut out = vec![];
        sack_one_by_one(&mut s, 17, t(50), &mut out);
        let mut held: Vec<u64> = (1..=17).collect();
        held.push(19);
        s.handle_packet(t(51), ack_pkt(0, &blocks(&held)), &mut out);
        assert_eq!(resent(&out), vec![0, 19 * MSS, 18 * MSS]);
        assert_eq!(s.counters().timeouts, 0);
    }

    #[test]
    fn one_rescue_retransmission_per_recovery_resends_a_lost_tail() {
        // RFC 6675 NextSeg (4). Segments 0 and 19 (the last) are lost: nothing is SACKed above
        // 19, so only the rescue retransmission resends it before the RTO.
        let mut s = sender_with(spec(Recovery::Sack, 20), Some(20 * MSS));
        start(&mut s);
        let mut out = vec![];
        sack_one_by_one(&mut s, 18, t(50), &mut out);
        assert_eq!(resent(&out), vec![0, 19 * MSS]);
        // A partial ACK later: no second rescue.
        out.clear();
        s.handle_packet(t(100), ack_pkt(19 * MSS, &[]), &mut out);
        assert!(resent(&out).is_empty(), "{:?}", resent(&out));
    }

    #[test]
    fn the_receive_window_limits_what_is_sent() {
        let mut s = sender(Recovery::NewReno);
        start(&mut s);
        let mut out = vec![];
        s.handle_packet(t(50), ack_rwnd(20 * MSS, 5 * MSS as u32), &mut out);
        assert_eq!(seqs(&out), (20..25).map(|i| i * MSS).collect::<Vec<_>>());
        assert!(s.cwnd() > 5 * MSS, "cwnd is not the limit");
    }

    #[test]
    fn after_an_idle_period_longer_than_the_rto_cwnd_restarts_from_the_initial_window() {
        // RFC 5681 §4.1. A 4-segment transfer grows cwnd to 4 segments; 5 s later more data.
        for (restart, expected) in [(true, 2), (false, 4)] {
            let mut s = sender_with(
                TcpSpec {
                    restart_after_idle: restart,
                    ..spec(Recovery::NewReno, 2)
                },
                Some(4 * MSS),
            );
            start(&mut s);
            let mut out = vec![];
            s.handle_packet(t(50), ack_pkt(2 * MSS, &[]), &mut out);
            s.handle_packet(t(100), ack_pkt(4 * MSS, &[]), &mut out);
            assert_eq!(s.cwnd(), 4 * MSS);
            out.clear();
            s.offer(t(5000), 10 * MSS, &mut out);
            assert_eq!(out.len(), expected, "restart_after_idle = {restart}");
        }
    }

    #[test]
    fn ns2_rtt_sampling_times_one_segment_and_counts_whole_ticks() {
        let mut s = sender_with(
            TcpSpec {
                rtt_sampling: RttSampling::Ns2,
                clock_granularity: SimDuration::from_millis(10),
                rto_min: SimDuration::ZERO,
                ..spec(Recovery::NewReno, 2)
            },
            None,
        );
        start(&mut s);
        let mut out = vec![];
        // Segment 0 is timed: 23 ms cross two tick boundaries (10, 20): a 20 ms sample.
        s.handle_packet(t(23), ack_pkt(MSS, &[]), &mut out);
        assert_eq!(s.srtt(), Some(SimDuration::from_millis(20)));
        // Segment 1 was not timed (one at a time): no sample, whatever its ACK says.
        s.handle_packet(t(30), ack_pkt(2 * MSS, &[]), &mut out);
        assert_eq!(s.srtt(), Some(SimDuration::from_millis(20)));
        // A retransmission cancels the timing of the segment sent at 23 ms.
        for _ in 0..3 {
            s.handle_packet(t(40), ack_pkt(2 * MSS, &[]), &mut out);
        }
        assert_eq!(s.counters().fast_retransmits, 1);
        s.handle_packet(t(90), ack_pkt(6 * MSS, &[]), &mut out);
        assert_eq!(s.srtt(), Some(SimDuration::from_millis(20)));
    }

    #[test]
    fn no_new_data_is_offered_after_the_stop_time() {
        let mut s = sender(Recovery::NewReno);
        s.cfg.stop = Some(t(100));
        start(&mut s);
        let mut out = vec![];
        s.handle_packet(t(50), ack_pkt(MSS, &[]), &mut out);
        assert_eq!(out.len(), 2, "slow start before the stop time");
        out.clear();
        s.handle_packet(t(150), ack_pkt(5 * MSS, &[]), &mut out);
        assert!(out.is_empty());
    }

    /// Runs a sender against a real receiver, one RTT per round, dropping the first copy of
    /// each segment whose index is in `lost`. Returns the number of rounds until the transfer
    /// completed.
    fn exchange(s: &mut TcpSender, r: &mut TcpReceiver, lost: &[u64], rounds: u64) -> u64 {
        let mut to_receiver = start(s);
        let mut dropped = std::collections::HashSet::new();
        for round in 1..=rounds {
            let now = t(50 * round);
            let mut acks = vec![];
            for p in to_receiver.drain(..) {
                let seq = p.tcp().map_or(0, |h| h.seq);
                if lost.contains(&(seq / MSS)) && dropped.insert(seq) {
                    continue;
                }
                r.handle_packet(now, p, &mut acks);
            }
            for a in acks {
                s.handle_packet(now, a, &mut to_receiver);
            }
            if s.is_complete() {
                return round;
            }
            if to_receiver.is_empty() {
                if let Some(deadline) = s.poll_timeout() {
                    s.handle_timeout(deadline, &mut to_receiver);
                }
            }
        }
        panic!("transfer not complete after {rounds} rounds");
    }

    #[test]
    fn sack_recovers_several_losses_in_one_window_with_one_reduction_and_no_timeout() {
        let tcp = spec(Recovery::Sack, 20);
        let mut s = sender_with(tcp.clone(), Some(40 * MSS));
        let mut r = TcpReceiver::for_test(tcp);
        let rounds = exchange(&mut s, &mut r, &[0, 5, 10, 15], 20);
        let c = s.counters();
        assert_eq!((c.fast_retransmits, c.retransmits, c.timeouts), (1, 4, 0));
        assert_eq!(s.ssthresh(), 10 * MSS);
        assert_eq!(r.rcv_nxt(), 40 * MSS);
        assert!(rounds <= 4, "{rounds} rounds");
    }

    fn receiver_for(tcp: TcpSpec) -> TcpReceiver {
        TcpReceiver::for_test(tcp)
    }

    fn flags(out: &[Packet]) -> Vec<u16> {
        out.iter()
            .filter_map(|p| p.tcp())
            .map(|h| h.flags)
            .collect()
    }

    #[test]
    fn with_a_handshake_data_waits_one_rtt_for_the_syn_ack_and_the_stream_ends_with_fin() {
        let tcp = TcpSpec {
            handshake: true,
            ..spec(Recovery::NewReno, 4)
        };
        let mut s = sender_with(tcp.clone(), Some(2 * MSS));
        let mut r = receiver_for(tcp);
        let syn = start(&mut s);
        assert_eq!(flags(&syn), vec![TcpHeader::FLAG_SYN], "a SYN and no data");
        let mut back = vec![];
        r.handle_packet(t(20), syn[0].clone(), &mut back);
        assert_eq!(
            flags(&back),
            vec![TcpHeader::FLAG_SYN | TcpHeader::FLAG_ACK]
        );
        let mut data = vec![];
        s.handle_packet(t(40), back.remove(0), &mut data);
        assert_eq!(
            s.srtt(),
            Some(SimDuration::from_millis(40)),
            "the SYN's RTT"
        );
        assert_eq!(seqs(&data), vec![0, MSS]);
        assert_eq!(
            flags(&data),
            vec![0, TcpHeader::FLAG_FIN],
            "FIN on the last segment"
        );
        for p in data {
            r.handle_packet(t(60), p, &mut back);
        }
        // The segment that completes the stream is acknowledged at once, with FIN.
        let last = back.pop().expect("an ACK");
        assert_eq!(
            last.tcp().map(|h| (h.ack.number(), h.flags)),
            Some((2 * MSS, TcpHeader::FLAG_ACK | TcpHeader::FLAG_FIN))
        );
        let mut close = vec![];
        s.handle_packet(t(80), last, &mut close);
        assert_eq!(
            s.counters().completed_at,
            Some(t(80)),
            "one RTT more than without"
        );
        assert_eq!(flags(&close), vec![TcpHeader::FLAG_ACK], "the last ACK");
    }

    #[test]
    fn a_lost_syn_is_resent_after_the_initial_rto_and_data_then_starts_with_a_3_s_rto() {
        // RFC 6298 (2.1), (5.5) and (5.7).
        let mut s = sender_with(
            TcpSpec {
                handshake: true,
                ..spec(Recovery::NewReno, 4)
            },
            None,
        );
        start(&mut s);
        assert_eq!(s.poll_timeout(), Some(t(1000)));
        let mut out = vec![];
        s.handle_timeout(t(1000), &mut out);
        assert_eq!(flags(&out), vec![TcpHeader::FLAG_SYN]);
        assert_eq!(s.poll_timeout(), Some(t(3000)), "backed off to 2 s");
        out.clear();
        let mut syn_ack = ack_pkt(0, &[]);
        if let Some(h) = syn_ack.tcp_mut() {
            h.flags = TcpHeader::FLAG_SYN | TcpHeader::FLAG_ACK;
        }
        s.handle_packet(t(1100), syn_ack, &mut out);
        assert_eq!(out.len(), 4, "the initial window of data");
        assert_eq!(s.srtt(), None, "no sample from a resent SYN (Karn)");
        assert_eq!(s.poll_timeout(), Some(t(4100)), "RTO 3 s");
    }

    /// A NewReno sender with timestamps on a 1 ms clock, `iw` segments in its initial window.
    fn ts_sender(iw: u32) -> TcpSender {
        sender_with(
            TcpSpec {
                timestamps: true,
                ..spec(Recovery::NewReno, iw)
            },
            None,
        )
    }

    /// An ACK carrying the timestamp option (the receiver's TSval `val`, echoing `ecr`).
    fn ts_ack(ack: u64, val: u32, ecr: u32) -> Packet {
        let mut p = ack_pkt(ack, &[]);
        if let Some(h) = p.tcp_mut() {
            h.ack = h.ack.with_timestamps(Timestamps { val, ecr });
        }
        p
    }

    fn ts_of(p: &Packet) -> Option<Timestamps> {
        p.tcp().and_then(|h| h.ack.timestamps())
    }

    #[test]
    fn with_timestamps_every_segment_carries_tsval_now_and_echoes_the_newest_tsval_received() {
        // RFC 7323 §3.2 and §4.3 rule (3): 12 more bytes on the wire, TSval the clock in ticks,
        // TSecr the receiver's newest TSval (0 before any).
        let mut s = ts_sender(2);
        let first = start(&mut s);
        assert_eq!(first[0].size, 1000 + 40 + 12);
        assert_eq!(ts_of(&first[0]), Some(Timestamps { val: 0, ecr: 0 }));
        let mut out = vec![];
        s.handle_packet(t(37), ts_ack(MSS, 36, 0), &mut out);
        assert_eq!(ts_of(&out[0]), Some(Timestamps { val: 37, ecr: 36 }));
        // An older TSval (a reordered ACK) does not replace TS.Recent.
        out.clear();
        s.handle_packet(t(38), ts_ack(2 * MSS, 35, 0), &mut out);
        assert_eq!(ts_of(&out[0]).map(|t| t.ecr), Some(36));
    }

    #[test]
    fn rttm_takes_a_sample_from_every_ack_that_advances_snd_una_in_whole_ticks() {
        // RFC 7323 §4.1: the RTT is now minus the echoed TSval; a duplicate ACK (SND.UNA
        // unchanged) gives none. 23.6 ms after time 0 the clock reads 23 ticks.
        let mut s = ts_sender(4);
        start(&mut s);
        let mut out = vec![];
        s.handle_packet(
            SimTime::from_nanos(23_600_000),
            ts_ack(MSS, 20, 0),
            &mut out,
        );
        assert_eq!(s.srtt(), Some(SimDuration::from_millis(23)));
        s.handle_packet(t(40), ts_ack(MSS, 39, 0), &mut out);
        assert_eq!(
            s.srtt(),
            Some(SimDuration::from_millis(23)),
            "a duplicate ACK"
        );
        // RFC 6298 (2.3): the second sample, 40 - 0 = 40 ms.
        s.handle_packet(t(40), ts_ack(2 * MSS, 39, 0), &mut out);
        assert_eq!(s.srtt(), Some(SimDuration::from_micros(25_125)));
    }

    #[test]
    fn rttm_samples_the_ack_of_a_retransmission_where_karns_rule_forbids_it() {
        // RFC 7323 §4.1 and RFC 6298 §3: the echo names the copy that was answered. Four
        // segments at 0 ms, all lost; the RTO resends the first at 1 s with TSval 1000; its ACK
        // at 1.05 s echoes 1000: a 50 ms sample, and the back-off ends with it. Without
        // timestamps the same ACK gives no sample and the RTO stays doubled.
        for timestamps in [true, false] {
            let mut s = sender_with(
                TcpSpec {
                    timestamps,
                    rto_min: SimDuration::from_millis(200),
                    ..spec(Recovery::NewReno, 4)
                },
                None,
            );
            start(&mut s);
            let mut out = vec![];
            s.handle_timeout(t(1000), &mut out);
            assert_eq!(resent(&out), vec![0]);
            if timestamps {
                assert_eq!(ts_of(&out[0]).map(|t| t.val), Some(1000));
            }
            out.clear();
            s.handle_packet(t(1050), ts_ack(MSS, 1049, 1000), &mut out);
            if timestamps {
                assert_eq!(s.srtt(), Some(SimDuration::from_millis(50)));
                // RFC 6298 (2.2): 50 + 4 x 25 = 150 ms, raised to the 200 ms floor.
                assert_eq!(s.rto(), SimDuration::from_millis(200));
            } else {
                assert_eq!(s.srtt(), None);
                assert_eq!(s.rto(), SimDuration::from_millis(2000), "still backed off");
            }
        }
    }

    #[test]
    fn with_timestamps_the_syn_ack_echo_seeds_the_estimator() {
        let tcp = TcpSpec {
            timestamps: true,
            handshake: true,
            ..spec(Recovery::NewReno, 2)
        };
        let mut s = sender_with(tcp.clone(), Some(2 * MSS));
        let mut r = TcpReceiver::for_test(tcp);
        let syn = start(&mut s);
        assert_eq!(syn[0].size, 40 + 12);
        let mut back = vec![];
        r.handle_packet(t(20), syn[0].clone(), &mut back);
        assert_eq!(ts_of(&back[0]), Some(Timestamps { val: 20, ecr: 0 }));
        let mut data = vec![];
        s.handle_packet(SimTime::from_nanos(40_700_000), back.remove(0), &mut data);
        assert_eq!(s.srtt(), Some(SimDuration::from_millis(40)), "40 ticks");
        assert_eq!(ts_of(&data[0]), Some(Timestamps { val: 40, ecr: 20 }));
    }

    #[test]
    fn the_rto_returns_from_back_off_on_a_valid_sample_or_on_any_new_ack_as_chosen() {
        // A hand-computed timeline, RFC 6298 with a 200 ms floor. 0 ms: segments 0-3. 100 ms:
        // the ACK of segment 0 samples 100 ms (SRTT 100, RTTVAR 50, RTO 300 ms) and slow start
        // sends 4 and 5. 400 ms: the RTO resends 1 and doubles (600 ms); 1000 ms: again (1200
        // ms). 1100 ms: the ACK of the resent 1 gives no sample (Karn). RFC 6298 keeps 1200 ms
        // until a valid sample; ns-3 recomputes 300 ms at once. The next expiry doubles what
        // each has.
        for (reset, after_ack, next) in [
            (RtoBackoffReset::ValidSample, 2300, 4700),
            (RtoBackoffReset::NewAck, 1400, 2000),
        ] {
            let mut s = sender_with(
                TcpSpec {
                    rto_min: SimDuration::from_millis(200),
                    rto_backoff_reset: reset,
                    ..spec(Recovery::NewReno, 4)
                },
                None,
            );
            start(&mut s);
            let mut out = vec![];
            s.handle_packet(t(100), ack_pkt(MSS, &[]), &mut out);
            assert_eq!(seqs(&out), vec![4 * MSS, 5 * MSS]);
            assert_eq!(s.poll_timeout(), Some(t(400)));
            s.handle_timeout(t(400), &mut out);
            assert_eq!(s.poll_timeout(), Some(t(1000)));
            s.handle_timeout(t(1000), &mut out);
            assert_eq!(s.poll_timeout(), Some(t(2200)));
            s.handle_packet(t(1100), ack_pkt(2 * MSS, &[]), &mut out);
            assert_eq!(s.srtt(), Some(SimDuration::from_millis(100)), "no sample");
            assert_eq!(s.poll_timeout(), Some(t(after_ack)), "{reset:?}");
            s.handle_timeout(t(after_ack), &mut out);
            assert_eq!(s.poll_timeout(), Some(t(next)), "{reset:?}");
            assert_eq!(s.counters().timeouts, 3);
        }
    }

    /// A NewReno sender with ECN and a 20-segment initial window.
    fn ecn_sender() -> TcpSender {
        sender_with(
            TcpSpec {
                ecn: true,
                ..spec(Recovery::NewReno, 20)
            },
            None,
        )
    }

    fn ece_ack(ack: u64) -> Packet {
        let mut p = ack_pkt(ack, &[]);
        if let Some(h) = p.tcp_mut() {
            h.flags |= TcpHeader::FLAG_ECE;
        }
        p
    }

    #[test]
    fn a_retransmission_is_ect_only_with_ect_all_as_linux_sends_it_for_dctcp() {
        // RFC 3168 §6.1.5 keeps retransmissions not-ECT; Linux keeps ECT on them when the
        // congestion control needs ECN, and a step-marking queue drops what is not ECT.
        for (ect_all, want) in [(false, ECN_NOT_ECT), (true, ECN_ECT0)] {
            let mut s = sender_with(
                TcpSpec {
                    ecn: true,
                    ect_all,
                    ..spec(Recovery::NewReno, 4)
                },
                None,
            );
            assert!(start(&mut s).iter().all(|p| p.ecn == ECN_ECT0));
            let rto = s.poll_timeout().expect("the RTO is armed");
            let mut out = vec![];
            s.handle_timeout(rto, &mut out);
            assert_eq!(resent(&out), vec![0], "ect_all = {ect_all}");
            assert!(out.iter().all(|p| p.ecn == want), "ect_all = {ect_all}");
        }
    }

    #[test]
    fn ecn_echo_halves_the_window_once_per_window_without_retransmitting() {
        // RFC 3168 §6.1.2: reduce as for a loss, at most once per window, resend nothing, and
        // say CWR on the next new segment; new data is ECT(0).
        let mut s = ecn_sender();
        let first = start(&mut s);
        assert!(first.iter().all(|p| p.ecn == ECN_ECT0));
        let mut out = vec![];
        s.handle_packet(t(50), ece_ack(MSS), &mut out);
        assert_eq!(s.ssthresh(), 19 * MSS / 2, "half the flight of 19 segments");
        assert_eq!(s.cwnd(), 19 * MSS / 2);
        assert!(resent(&out).is_empty());
        assert_eq!(s.counters().ecn_reductions, 1);
        // More echoes from the same window change nothing.
        s.handle_packet(t(51), ece_ack(2 * MSS), &mut out);
        s.handle_packet(t(52), ece_ack(3 * MSS), &mut out);
        assert_eq!(s.counters().ecn_reductions, 1);
        assert_eq!(s.congestion_log, vec![CongestionKind::Ecn]);
        // Once the window outstanding at the reduction is acknowledged, data flows again and
        // its first new segment carries CWR.
        out.clear();
        s.handle_packet(t(100), ack_pkt(20 * MSS, &[]), &mut out);
        let cwr: Vec<bool> = out
            .iter()
            .filter_map(|p| p.tcp())
            .map(|h| h.is_cwr())
            .collect();
        assert_eq!(cwr.first(), Some(&true));
        assert!(cwr[1..].iter().all(|c| !c));
        // An echo now belongs to a new window: a second reduction.
        s.handle_packet(t(101), ece_ack(20 * MSS), &mut out);
        assert_eq!(s.counters().ecn_reductions, 2);
    }

    #[test]
    fn a_loss_in_a_window_already_reduced_for_ecn_is_resent_at_once_without_a_second_cut() {
        // Found by the docs review: the ECN reduction used the loss guard, so without SACK
        // this loss waited for the RTO and cwnd fell to one segment. RFC 3168 §6.1.2 only
        // forbids a second reduction in the window.
        let mut s = ecn_sender();
        start(&mut s);
        let mut out = vec![];
        s.handle_packet(t(50), ece_ack(MSS), &mut out);
        let ssthresh = s.ssthresh();
        for _ in 0..3 {
            s.handle_packet(t(51), ack_pkt(MSS, &[]), &mut out);
        }
        assert_eq!(resent(&out), vec![MSS], "fast retransmit, no RTO");
        assert_eq!(s.counters().fast_retransmits, 1);
        assert_eq!(s.ssthresh(), ssthresh, "no second reduction");
        assert_eq!(s.congestion_log, vec![CongestionKind::Ecn]);
    }

    #[test]
    fn retransmissions_are_never_ecn_capable() {
        let mut s = ecn_sender();
        start(&mut s);
        let mut out = vec![];
        s.handle_timeout(t(1000), &mut out);
        assert_eq!(resent(&out), vec![0]);
        assert_eq!(out[0].ecn, ECN_NOT_ECT);
    }

    fn paced(quantum: u32, initial_quantum: u32, handshake: bool) -> TcpSender {
        sender_with(
            TcpSpec {
                handshake,
                pacing: Some(crate::tcp::PacingSpec {
                    quantum,
                    initial_quantum,
                    ..Default::default()
                }),
                ..spec(Recovery::Sack, 20)
            },
            None,
        )
    }

    #[test]
    fn paced_segments_leave_size_over_rate_apart_and_the_deadline_is_the_next_departure() {
        // No RTT sample yet: no rate, and the initial window leaves at once (Linux too).
        let mut s = paced(1, 0, false);
        assert_eq!(start(&mut s).len(), 20);
        // The first ACK: SRTT 100 ms, cwnd 21 segments in slow start (ssthresh unset), so the
        // rate is 200 % of max(cwnd, FlightSize) / SRTT = 2 · 21,000 B / 0.1 s = 420,000 B/s
        // and a 1040 B segment (1000 + 40 of headers) takes 2,476,190 ns.
        let mut out = vec![];
        s.handle_packet(t(100), ack_pkt(MSS, &[]), &mut out);
        assert_eq!(
            seqs(&out),
            vec![20 * MSS],
            "one of the two the window allows"
        );
        let next = SimTime::from_nanos(100_000_000 + 2_476_190);
        assert_eq!(
            s.poll_timeout(),
            Some(next),
            "the deadline is the next departure"
        );
        out.clear();
        s.handle_timeout(next, &mut out);
        assert_eq!(seqs(&out), vec![21 * MSS]);
        // The window is full now: no pacing deadline, the RTO's (1 s after the ACK).
        assert_eq!(s.poll_timeout(), Some(t(1100)));
    }

    #[test]
    fn the_initial_quantum_leaves_unpaced_and_the_quantum_is_the_largest_burst_after() {
        // The SYN-ACK gives SRTT 100 ms before any data; then the window is 20 segments: the
        // first 10 are the initial quantum, then the rate (2 · 20,000 B / 0.1 s = 400 kB/s,
        // 2.6 ms per 1040 B segment) with a bucket of 2 segments: a sender that has sent
        // nothing paced yet may send 2 at once, then one per 2.6 ms.
        let mut s = paced(2, 10, true);
        let syn = start(&mut s);
        let mut r = receiver_for(TcpSpec {
            handshake: true,
            ..spec(Recovery::Sack, 20)
        });
        let mut back = vec![];
        r.handle_packet(t(50), syn[0].clone(), &mut back);
        let mut out = vec![];
        s.handle_packet(t(100), back.remove(0), &mut out);
        assert_eq!(out.len(), 12, "10 unpaced and a burst of 2");
        assert_eq!(s.poll_timeout(), Some(SimTime::from_nanos(102_600_000)));
        out.clear();
        s.handle_timeout(SimTime::from_nanos(102_600_000), &mut out);
        assert_eq!(seqs(&out), vec![12 * MSS]);
        assert_eq!(s.poll_timeout(), Some(SimTime::from_nanos(105_200_000)));
        // An early wake-up (a stale timer) sends nothing.
        out.clear();
        s.handle_timeout(SimTime::from_nanos(105_000_000), &mut out);
        assert!(out.is_empty());
    }

    #[test]
    fn unpaced_senders_never_set_a_pacing_deadline() {
        let mut s = sender(Recovery::Sack);
        start(&mut s);
        assert!(!s.paced && s.rate.is_none());
        let mut out = vec![];
        s.handle_packet(t(100), ack_pkt(MSS, &[]), &mut out);
        assert_eq!(out.len(), 2, "slow start: the ACK releases two at once");
        assert_eq!(s.poll_timeout(), Some(t(1100)));
    }

    fn bbr_sender() -> TcpSender {
        sender_with(
            TcpSpec {
                cc: crate::cc::CcAlgorithm::Bbr(crate::cc::BbrConfig::default()),
                pacing: Some(crate::tcp::PacingSpec::default()),
                ..spec(Recovery::Sack, 20)
            },
            None,
        )
    }

    #[test]
    fn bbr_sets_cwnd_in_recovery_by_packet_conservation_instead_of_the_recovery_algorithm() {
        let mut s = bbr_sender();
        assert!(s.cc_rate && s.rate.is_some());
        start(&mut s);
        let mut out = vec![];
        // Segment 0 lost; SACKs of 1, 2, 3. In Startup each of the first two grows cwnd by the
        // segment it delivered and releases one new segment (22 sent). The third marks 0 lost
        // (RFC 6675) and recovery starts: SACK recovery would set cwnd = ssthresh; BBR keeps
        // ssthresh (unset) and sets cwnd = pipe + delivered = (22 − 3 SACKed − 1 lost) + 1.
        for k in 1..=3 {
            s.handle_packet(t(100), ack_pkt(0, &[(MSS, (k + 1) * MSS)]), &mut out);
        }
        assert!(s.in_recovery());
        assert_eq!(s.ssthresh(), u64::MAX);
        assert_eq!(s.cwnd(), 19 * MSS);
        assert_eq!(
            seqs(&out),
            vec![20 * MSS, 21 * MSS, 0],
            "then the fast retransmit"
        );
        // The next SACK, in the same round: cwnd = max(cwnd, pipe + delivered) with pipe 22 −
        // 4 SACKed − 1 lost + 1 resent = 18: cwnd stays, and one new segment goes.
        out.clear();
        s.handle_packet(t(101), ack_pkt(0, &[(MSS, 5 * MSS)]), &mut out);
        assert_eq!(s.cwnd(), 19 * MSS);
        assert_eq!(seqs(&out), vec![22 * MSS]);
    }
}
