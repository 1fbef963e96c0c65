// SPDX-License-Identifier: MIT
//! RACK-TLP (RFC 8985): loss detection by time instead of by counting, and the tail loss probe.
//! The sender's state for it, apart from the sender so that a flow without it carries none
//! (`loss_detection = "rack"` builds one; the sender holds it behind a pointer).
//!
//! ```text
//!   ACK ──> scoreboard: newly delivered segments ──> Delivery (newest xmit_ts, ends)
//!       ├─ step 1  RACK.min_RTT           from the RFC 6298 / RFC 7323 samples
//!       ├─ step 2  RACK.segment, RACK.rtt the most recently *sent* segment delivered
//!       ├─ step 3  RACK.fack, reordering_seen (a never-resent segment below fack delivered)
//!       ├─ step 4  reo_wnd = min(reo_wnd_mult · min_RTT / 4, SRTT), 0 before any reordering
//!       │          in recovery or once DupThresh segments are SACKed; a DSACK round grows
//!       │          reo_wnd_mult, 16 recoveries without one reset it
//!       ├─ step 5  every segment sent before RACK.segment is lost once RACK.rtt + reo_wnd has
//!       │          passed since it was (last) sent; the longest wait arms the reordering timer
//!       ├─ TLP §7.4 did the probe repair a loss? then reduce as for one
//!       └─ TLP §7.2 (re)schedule the probe timeout: PTO = 2·SRTT (+ WCDelAckT for a lone segment)
//!
//!   time ──> segment 1 sent ... segment 5 sent ........ ACK SACKs 5
//!            └── 1 is lost at xmit_ts(1) + RACK.rtt + reo_wnd, whatever its sequence distance
//! ```
//!
//! Why time: a retransmission is a segment sent *later*, so RACK finds a lost retransmission
//! the way it finds any loss (RFC 6675 counts SACKed bytes above a hole, and a hole that was
//! resent never has more above it than before: only the RTO repairs it). And a tail loss, with
//! nothing after it to be SACKed, is found by the probe (one segment, at 2·SRTT) instead of
//! the RTO.
//!
//! The three timers of RFC 8985 §8 (reordering, probe, retransmission) share the sender's one
//! deadline: the sender reports the earliest of them and dispatches on which one expired.
//! Where ccsim departs from the RFC or from Linux (`net/ipv4/tcp_recovery.c`,
//! `tcp_output.c`'s `tcp_schedule_loss_probe`) is listed in docs/tcp.md ("RACK-TLP").

use crate::tcp::config::RackSpec;
use crate::tcp::scoreboard::{sent_after, Delivery, Scoreboard};
use crate::tcp::{NO_POINT, NO_TIME};
use crate::time::{SimDuration, SimTime};

/// RACK-TLP's state of one sender.
#[derive(Clone, Debug)]
pub struct Rack {
    spec: RackSpec,
    /// The segments the ACK being processed delivered, as the scoreboard saw them.
    pub delivery: Delivery,
    /// RACK.xmit_ts and RACK.end_seq: the most recently sent segment delivered so far
    /// (`(ZERO, 0)`: none yet: no segment was sent before it).
    segment: (SimTime, u64),
    /// RACK.rtt: the RTT of that segment's delivery.
    rtt: SimDuration,
    /// RACK.min_RTT ([`SimDuration::MAX`]: no sample yet).
    min_rtt: SimDuration,
    /// RACK.fack: the highest sequence delivered.
    fack: u64,
    /// RACK.reordering_seen.
    reordering_seen: bool,
    /// RACK.dsack_round: SND.NXT when reo_wnd_mult last grew ([`NO_POINT`]: none).
    dsack_round: u64,
    /// RACK.reo_wnd_mult.
    reo_wnd_mult: u32,
    /// RACK.reo_wnd_persist.
    reo_wnd_persist: u32,
    /// SND.MAX at the last RTO while SND.UNA has not reached it: RTO recovery, which step 4
    /// counts as recovery ([`NO_POINT`]: none).
    rto_recovery_point: u64,
    /// The reordering timer ([`NO_TIME`]: not armed).
    reo_deadline: SimTime,
    /// The probe timeout ([`NO_TIME`]: not armed).
    pto_deadline: SimTime,
    /// TLP.end_seq: SND.NXT after the probe outstanding ([`NO_POINT`]: none).
    tlp_end_seq: u64,
    /// TLP.is_retrans: that probe resent old data.
    tlp_is_retrans: bool,
    /// An RTT sample was taken since the last probe (RFC 8985 §7.3's second condition).
    sampled_since_probe: bool,
    /// DSACK blocks received, probes sent, losses a probe revealed: for tests and reports.
    pub dsacks: u64,
    pub probes: u64,
    pub probe_repairs: u64,
}

impl Rack {
    pub fn new(spec: RackSpec) -> Self {
        Rack {
            spec,
            delivery: Delivery::start(SimTime::ZERO),
            segment: (SimTime::ZERO, 0),
            rtt: SimDuration::ZERO,
            min_rtt: SimDuration::MAX,
            fack: 0,
            reordering_seen: false,
            dsack_round: NO_POINT,
            reo_wnd_mult: 1,
            reo_wnd_persist: 0,
            rto_recovery_point: NO_POINT,
            reo_deadline: NO_TIME,
            pto_deadline: NO_TIME,
            tlp_end_seq: NO_POINT,
            tlp_is_retrans: false,
            // Before the first probe the connection's first sample is enough.
            sampled_since_probe: true,
            dsacks: 0,
            probes: 0,
            probe_repairs: 0,
        }
    }

    /// The earliest of the reordering timer and the probe timeout ([`NO_TIME`]: neither).
    pub fn deadline(&self) -> SimTime {
        self.reo_deadline.min(self.pto_deadline)
    }
    pub fn reo_deadline(&self) -> SimTime {
        self.reo_deadline
    }
    pub fn pto_deadline(&self) -> SimTime {
        self.pto_deadline
    }
    pub fn reo_wnd_mult(&self) -> u32 {
        self.reo_wnd_mult
    }
    pub fn reordering_seen(&self) -> bool {
        self.reordering_seen
    }
    pub fn tlp(&self) -> bool {
        self.spec.tlp.is_some()
    }
    /// A probe is outstanding (TLP.end_seq is set).
    pub fn probe_outstanding(&self) -> bool {
        self.tlp_end_seq != NO_POINT
    }

    /// Step 1: an RTT sample of RFC 6298 / RFC 7323 (RACK.min_RTT; ccsim keeps the minimum of
    /// the connection, where the RFC suggests a windowed one).
    pub fn on_rtt_sample(&mut self, rtt: SimDuration) {
        self.min_rtt = self.min_rtt.min(rtt);
        self.sampled_since_probe = true;
    }

    /// Before an ACK: ready the delivery record. A retransmitted segment the ACK delivers
    /// counts only if it was last sent at least RACK.min_RTT ago and, when the ACK echoes a
    /// timestamp, no later than the echoed one (step 2's checks); `echo_sent_by` is the last
    /// instant whose TSval is at most the echo.
    pub fn start_ack(&mut self, now: SimTime, echo_sent_by: Option<SimTime>) {
        let mut bound = if self.min_rtt == SimDuration::MAX {
            now
        } else {
            SimTime(now.as_nanos().saturating_sub(self.min_rtt.as_nanos()))
        };
        if let Some(t) = echo_sent_by {
            bound = bound.min(t);
        }
        self.delivery = Delivery::start(bound);
    }

    /// Steps 2 to 4 after the ACK's cumulative and selective information was taken in.
    /// `dsack`: the ACK carried a DSACK block; `snd_una`, `snd_nxt` after it; `exited`: the
    /// ACK ended a fast recovery.
    pub fn on_ack(&mut self, now: SimTime, snd_una: u64, snd_nxt: u64, dsack: bool, exited: bool) {
        let d = self.delivery;
        // Step 2: RACK.rtt from the most recently sent segment delivered, and RACK.segment.
        if d.newest != (SimTime::ZERO, 0) {
            self.rtt = now.saturating_since(d.newest.0);
            if sent_after(d.newest, self.segment) {
                self.segment = d.newest;
            }
        }
        // Step 3: a never-retransmitted segment delivered below RACK.fack arrived out of
        // order (segments delivered by this ACK in ascending order only raise fack above
        // themselves, so comparing with fack before the ACK is the same test).
        if d.lowest_original_end < self.fack {
            self.reordering_seen = true;
        }
        self.fack = self.fack.max(d.highest_end);
        // An RTO recovery ends when SND.UNA reaches SND.MAX as it was at the timeout.
        let mut exited = exited;
        if self.rto_recovery_point != NO_POINT && snd_una >= self.rto_recovery_point {
            self.rto_recovery_point = NO_POINT;
            exited = true;
        }
        // Step 4: grow the window once per round that sees a DSACK; decay after
        // reo_wnd_persist recoveries without one.
        if dsack {
            self.dsacks += 1;
        }
        if self.dsack_round != NO_POINT && snd_una >= self.dsack_round {
            self.dsack_round = NO_POINT;
        }
        if self.dsack_round == NO_POINT && dsack {
            self.dsack_round = snd_nxt;
            self.reo_wnd_mult += 1;
            self.reo_wnd_persist = self.spec.reo_wnd_persist;
        } else if exited {
            self.reo_wnd_persist = self.reo_wnd_persist.saturating_sub(1);
            if self.reo_wnd_persist == 0 {
                self.reo_wnd_mult = 1;
            }
        }
    }

    /// RTO recovery is under way.
    pub fn in_rto_recovery(&self) -> bool {
        self.rto_recovery_point != NO_POINT
    }

    /// Step 4's RACK.reo_wnd. `in_recovery`: fast or RTO recovery; `dupthresh_sacked`: at
    /// least DupThresh segments are SACKed; `srtt`: the RFC 6298 estimate.
    pub fn reo_wnd(
        &self,
        in_recovery: bool,
        dupthresh_sacked: bool,
        srtt: Option<SimDuration>,
    ) -> SimDuration {
        if !self.reordering_seen && (in_recovery || dupthresh_sacked) {
            return SimDuration::ZERO;
        }
        if self.min_rtt == SimDuration::MAX {
            return SimDuration::ZERO;
        }
        let w = SimDuration(
            self.min_rtt
                .as_nanos()
                .saturating_mul(self.reo_wnd_mult as u64)
                / self.spec.min_rtt_divisor.max(1) as u64,
        );
        srtt.map_or(w, |s| w.min(s))
    }

    /// Step 5 with the reordering timer: mark what is lost, arm the timer for what waits.
    /// Returns the number of segments newly marked lost.
    pub fn detect_loss(
        &mut self,
        board: &mut Scoreboard,
        reo_wnd: SimDuration,
        now: SimTime,
    ) -> u32 {
        if self.segment == (SimTime::ZERO, 0) {
            self.reo_deadline = NO_TIME;
            return 0;
        }
        let scan = board.rack_detect_loss(self.segment, self.rtt + reo_wnd, now);
        self.reo_deadline = scan.wait.map_or(NO_TIME, |w| now + w);
        scan.marked
    }

    /// The retransmission timer expired: RTO recovery begins at `snd_max`; the other timers and
    /// any probe are void (the RTO resends everything).
    pub fn on_rto(&mut self, snd_max: u64) {
        self.rto_recovery_point = snd_max;
        self.reo_deadline = NO_TIME;
        self.pto_deadline = NO_TIME;
        self.tlp_end_seq = NO_POINT;
    }

    /// The reordering timer expired: it is disarmed until the next detection arms it.
    pub fn on_reo_timeout(&mut self) {
        self.reo_deadline = NO_TIME;
    }

    /// RFC 8985 §7.2: arm the probe timeout if TLP is on and a probe may be scheduled (SACK is
    /// in use, nothing is SACKed, no recovery, data outstanding), else disarm it.
    /// `one_segment`: FlightSize is one segment; `rto_deadline`: the retransmission timer, which
    /// the PTO never outlasts.
    pub fn schedule_pto(
        &mut self,
        now: SimTime,
        may_probe: bool,
        one_segment: bool,
        srtt: Option<SimDuration>,
        rto_deadline: SimTime,
    ) {
        let Some(tlp) = self.spec.tlp.filter(|_| may_probe) else {
            self.pto_deadline = NO_TIME;
            return;
        };
        let pto = match srtt {
            Some(srtt) => {
                let mut pto = SimDuration(srtt.as_nanos().saturating_mul(tlp.srtt_multiple as u64));
                if one_segment {
                    pto = pto + tlp.max_ack_delay;
                }
                pto
            }
            None => tlp.initial_pto,
        };
        self.pto_deadline = (now + pto).min(rto_deadline);
    }

    /// RFC 8985 §7.3: the probe timeout expired. Whether a probe may go: none outstanding and an
    /// RTT sample since the last one. Disarms the PTO either way (the caller re-arms the RTO).
    pub fn probe_allowed(&mut self) -> bool {
        self.pto_deadline = NO_TIME;
        !self.probe_outstanding() && self.sampled_since_probe
    }

    /// A probe was sent: `snd_nxt` after it, `is_retrans` if it resent old data.
    pub fn on_probe_sent(&mut self, snd_nxt: u64, is_retrans: bool) {
        self.tlp_end_seq = snd_nxt;
        self.tlp_is_retrans = is_retrans;
        self.sampled_since_probe = false;
        self.probes += 1;
    }

    /// RFC 8985 §7.4.2, TLP_process_ack: `ack` is the ACK's cumulative number, `dsack` its
    /// DSACK block if any, `bare_dupack` whether it is a duplicate ACK without SACK blocks.
    /// True when the probe repaired a loss: the caller reduces the window as for one.
    pub fn tlp_process_ack(
        &mut self,
        ack: u64,
        dsack: Option<(u64, u64)>,
        bare_dupack: bool,
    ) -> bool {
        let end = self.tlp_end_seq;
        if end == NO_POINT || ack < end {
            return false;
        }
        if !self.tlp_is_retrans || dsack.is_some_and(|(_, r)| r == end) {
            // New data probed, or the probe resent what had arrived (DSACK names it).
            self.tlp_end_seq = NO_POINT;
            false
        } else if ack > end {
            // The probe repaired a loss: the original or its ACK was lost.
            self.tlp_end_seq = NO_POINT;
            self.probe_repairs += 1;
            true
        } else {
            if bare_dupack {
                // Both copies arrived and the receiver sent no DSACK: no loss.
                self.tlp_end_seq = NO_POINT;
            }
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::config::TlpSpec;

    fn ms(x: u64) -> SimDuration {
        SimDuration::from_millis(x)
    }

    fn rack() -> Rack {
        Rack::new(RackSpec {
            tlp: Some(TlpSpec::default()),
            ..RackSpec::default()
        })
    }

    #[test]
    fn reo_wnd_is_a_quarter_of_min_rtt_capped_by_srtt_and_zero_before_reordering_in_recovery() {
        let mut r = rack();
        r.on_rtt_sample(ms(40));
        // No reordering seen: outside recovery min_RTT/4; in recovery or with DupThresh
        // segments SACKed, 0 (RFC 8985 §6.2 step 4).
        assert_eq!(r.reo_wnd(false, false, Some(ms(50))), ms(10));
        assert_eq!(r.reo_wnd(true, false, Some(ms(50))), SimDuration::ZERO);
        assert_eq!(r.reo_wnd(false, true, Some(ms(50))), SimDuration::ZERO);
        // SRTT below min_RTT/4 caps it.
        assert_eq!(r.reo_wnd(false, false, Some(ms(8))), ms(8));
        r.reordering_seen = true;
        assert_eq!(r.reo_wnd(true, true, Some(ms(50))), ms(10));
    }

    #[test]
    fn a_dsack_grows_reo_wnd_once_per_round_and_sixteen_recoveries_without_one_reset_it() {
        let mut r = rack();
        r.on_rtt_sample(ms(40));
        r.reordering_seen = true;
        // A DSACK with SND.NXT = 10000: reo_wnd_mult 2, reo_wnd = 2·40/4 = 20 ms.
        r.on_ack(SimTime::ZERO, 0, 10_000, true, false);
        assert_eq!(r.reo_wnd_mult(), 2);
        assert_eq!(r.reo_wnd(false, false, Some(ms(100))), ms(20));
        // A second DSACK in the same round (SND.UNA below 10000) does not grow it again.
        r.on_ack(SimTime::ZERO, 5_000, 12_000, true, false);
        assert_eq!(r.reo_wnd_mult(), 2);
        // The next round's DSACK does: 3·40/4 = 30 ms, and SRTT caps it at 25 ms.
        r.on_ack(SimTime::ZERO, 10_000, 20_000, true, false);
        assert_eq!(r.reo_wnd_mult(), 3);
        assert_eq!(r.reo_wnd(false, false, Some(ms(25))), ms(25));
        // Fifteen recoveries end without a DSACK: the window persists; the sixteenth resets it.
        for i in 0..15 {
            r.on_ack(SimTime::ZERO, 30_000 + i, 40_000, false, true);
            assert_eq!(r.reo_wnd_mult(), 3, "after {} recoveries", i + 1);
        }
        r.on_ack(SimTime::ZERO, 30_100, 40_000, false, true);
        assert_eq!(r.reo_wnd_mult(), 1);
        assert_eq!(r.dsacks, 3);
    }

    #[test]
    fn the_pto_is_two_srtt_plus_the_delayed_ack_allowance_for_a_lone_segment_and_never_past_the_rto(
    ) {
        let mut r = rack();
        let t0 = SimTime::ZERO + ms(1000);
        let far = t0 + ms(10_000);
        r.schedule_pto(t0, true, false, Some(ms(30)), far);
        assert_eq!(r.pto_deadline(), t0 + ms(60));
        r.schedule_pto(t0, true, true, Some(ms(30)), far);
        assert_eq!(r.pto_deadline(), t0 + ms(260));
        // No SRTT yet: 1 s; the RTO 500 ms away comes first.
        r.schedule_pto(t0, true, false, None, t0 + ms(500));
        assert_eq!(r.pto_deadline(), t0 + ms(500));
        // Not allowed (SACKed data, recovery): no PTO.
        r.schedule_pto(t0, false, false, Some(ms(30)), far);
        assert_eq!(r.pto_deadline(), NO_TIME);
    }

    #[test]
    fn a_probe_that_resent_data_repairs_a_loss_when_the_ack_passes_it_and_not_when_dsacked() {
        let mut r = rack();
        r.on_probe_sent(10_000, true);
        assert!(!r.probe_allowed(), "one probe outstanding at most");
        // An ACK below the probe's end says nothing yet.
        assert!(!r.tlp_process_ack(9_000, None, false));
        // A DSACK for the probe: both copies arrived, no loss.
        assert!(!r.tlp_process_ack(10_000, Some((9_000, 10_000)), false));
        assert!(!r.probe_outstanding());
        // Another probe, and an ACK beyond it without DSACK: the probe repaired a loss.
        r.on_rtt_sample(ms(10));
        assert!(r.probe_allowed());
        r.on_probe_sent(12_000, true);
        assert!(r.tlp_process_ack(13_000, None, false));
        assert_eq!(r.probe_repairs, 1);
        // A probe of new data never counts as a repair.
        r.on_rtt_sample(ms(10));
        r.on_probe_sent(14_000, false);
        assert!(!r.tlp_process_ack(15_000, None, false));
        assert!(!r.probe_outstanding());
    }

    #[test]
    fn no_second_probe_without_an_rtt_sample_since_the_first() {
        let mut r = rack();
        r.on_probe_sent(10_000, false);
        assert!(!r.tlp_process_ack(11_000, None, false));
        assert!(!r.probe_allowed(), "no RTT sample since the probe");
        r.on_rtt_sample(ms(10));
        assert!(r.probe_allowed());
    }
}

/// RACK-TLP in a sender against a real receiver over a path the test controls: hand-built
/// traces of RFC 8985's cases, and the same trace with RFC 6675's loss detection beside it.
#[cfg(test)]
mod path_tests {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    use crate::endpoint::Endpoint;
    use crate::packet::{Packet, TcpHeader};
    use crate::tcp::config::{InitialWindow, LossDetection, RackSpec, Recovery, TcpSpec, TlpSpec};
    use crate::tcp::{TcpReceiver, TcpSender};
    use crate::time::{SimDuration, SimTime};

    const MSS: u64 = 1000;
    /// One-way delay each way: an RTT of 100 ms.
    const ONE_WAY: SimDuration = SimDuration::from_millis(50);
    /// The data direction delivers at most one segment per millisecond (an 8 Mbit/s
    /// bottleneck for 1000-byte segments): a window arrives spread out, as it does on a link.
    const SPACING: SimDuration = SimDuration::from_millis(1);

    /// What the path does with the `copy`-th transmission (0: the first) of segment `index`.
    #[derive(Clone, Copy, PartialEq, Debug)]
    enum Fate {
        Deliver,
        Drop,
        /// Delivered this much later than the others.
        Late(SimDuration),
    }

    fn spec(detection: LossDetection, dsack: bool) -> TcpSpec {
        TcpSpec {
            recovery: Recovery::Sack,
            mss: MSS as u32,
            initial_window: InitialWindow::Segments(20),
            delayed_ack: false,
            handshake: false,
            limited_transmit: false,
            dsack,
            loss_detection: detection,
            ..TcpSpec::default()
        }
    }

    fn by_rack(tlp: bool) -> LossDetection {
        LossDetection::Rack(Box::new(RackSpec {
            tlp: tlp.then(TlpSpec::default),
            ..RackSpec::default()
        }))
    }

    /// An ACK as the sender received it: when, its cumulative number, its SACK blocks.
    type AckSeen = (SimTime, u64, Vec<(u64, u64)>);

    struct Run {
        s: TcpSender,
        r: TcpReceiver,
        /// (time, seq, retransmission flag) of every data segment sent.
        sent: Vec<(SimTime, u64, bool)>,
        /// The ACKs the receiver sent, in order.
        acks: Vec<Packet>,
        /// When each ACK reached the sender, with its cumulative number and SACK blocks.
        ack_arrivals: Vec<AckSeen>,
    }

    /// Transfers `segments` segments from time 0 through a bottleneck of one segment per
    /// `spacing`; `fate` decides each data segment's fate by its index and copy. Runs until the
    /// transfer completes or 10 s pass.
    fn run(
        tcp: TcpSpec,
        segments: u64,
        spacing: SimDuration,
        fate: impl Fn(u64, u32) -> Fate,
    ) -> Run {
        let mut s = TcpSender::for_test(tcp.clone(), Some(segments * MSS));
        let mut r = TcpReceiver::for_test(tcp);
        let mut run_sent = vec![];
        let mut acks = vec![];
        let mut ack_arrivals = vec![];
        // (arrival, order, to the receiver?) with the packets kept aside.
        let mut heap = BinaryHeap::new();
        let mut pkts: Vec<Option<Packet>> = vec![];
        let mut copies = std::collections::HashMap::new();
        let mut now = SimTime::ZERO;
        let mut link_free = SimTime::ZERO;
        let mut out = vec![];
        s.handle_timeout(now, &mut out);
        loop {
            for p in out.drain(..) {
                let h = p.tcp().expect("tcp").clone();
                let to_receiver = h.len > 0;
                let mut at = now + ONE_WAY;
                if to_receiver {
                    run_sent.push((now, h.seq, h.flags & TcpHeader::FLAG_RETX != 0));
                    let copy = copies.entry(h.seq).or_insert(0u32);
                    let f = fate(h.seq / MSS, *copy);
                    *copy += 1;
                    // Through the bottleneck: one segment per SPACING, in the order sent.
                    link_free = link_free.max(now) + spacing;
                    at = link_free + ONE_WAY;
                    match f {
                        Fate::Drop => continue,
                        Fate::Late(d) => at += d,
                        Fate::Deliver => {}
                    }
                } else {
                    acks.push(p.clone());
                }
                heap.push(Reverse((at, pkts.len(), to_receiver)));
                pkts.push(Some(p));
            }
            if s.is_complete() || now > SimTime::from_secs(10) {
                break;
            }
            let next_pkt = heap.peek().map(|Reverse((t, _, _))| *t);
            let next_timer = s.poll_timeout();
            match (next_pkt, next_timer) {
                (Some(tp), Some(tt)) if tt < tp => {
                    now = tt;
                    s.handle_timeout(now, &mut out);
                }
                (Some(_), _) => {
                    let Reverse((t, i, to_receiver)) = heap.pop().unwrap();
                    now = t;
                    let p = pkts[i].take().unwrap();
                    if to_receiver {
                        r.handle_packet(now, p, &mut out);
                    } else {
                        let a = p.tcp().expect("tcp").ack;
                        ack_arrivals.push((now, a.number(), a.sack_blocks().collect()));
                        s.handle_packet(now, p, &mut out);
                    }
                }
                (None, Some(tt)) => {
                    now = tt;
                    s.handle_timeout(now, &mut out);
                }
                (None, None) => break,
            }
        }
        Run {
            s,
            r,
            sent: run_sent,
            acks,
            ack_arrivals,
        }
    }

    fn sends_of(run: &Run, index: u64) -> Vec<SimTime> {
        run.sent
            .iter()
            .filter(|(_, seq, _)| *seq == index * MSS)
            .map(|(t, _, _)| *t)
            .collect()
    }

    /// When the ACK that first SACKed (or acknowledged) segment `index` arrived.
    fn delivered_at(run: &Run, index: u64) -> SimTime {
        let (l, r) = (index * MSS, (index + 1) * MSS);
        run.ack_arrivals
            .iter()
            .find(|(_, ack, sack)| *ack >= r || sack.iter().any(|&(a, b)| a <= l && r <= b))
            .map(|(t, _, _)| *t)
            .expect("delivered")
    }

    fn ms(x: u64) -> SimTime {
        SimTime::from_millis(x)
    }

    const SPACED: SimDuration = SPACING;

    /// Segment 5 arrives 1.5 ms late (after 6, before 7: one segment SACKed above it, which no
    /// method takes for a loss, and RACK notes the reordering); then `later` happens.
    fn reordered_then(later: impl Fn(u64, u32) -> Fate) -> impl Fn(u64, u32) -> Fate {
        move |i, copy| {
            if i == 5 && copy == 0 {
                Fate::Late(SimDuration::from_micros(1500))
            } else {
                later(i, copy)
            }
        }
    }

    #[test]
    fn once_reordering_was_seen_a_segment_late_by_less_than_reo_wnd_is_not_resent() {
        // Segment 100 then arrives 5 ms late: five segments sent after it are SACKed first.
        // RFC 6675 deems it lost at the third and resends it needlessly (the receiver's DSACK
        // says so). RACK, having seen reordering, waits RACK.rtt + reo_wnd (min_RTT / 4, about
        // 25 ms) from its send time, and it arrives in time.
        let fate = reordered_then(|i, copy| {
            if i == 100 && copy == 0 {
                Fate::Late(SimDuration::from_millis(5))
            } else {
                Fate::Deliver
            }
        });
        let rack = run(spec(by_rack(false), true), 300, SPACED, &fate);
        assert!(rack.s.rack().unwrap().reordering_seen());
        assert_eq!(rack.s.counters().retransmits, 0);
        assert_eq!(rack.s.counters().fast_retransmits, 0);
        let dupack = run(spec(LossDetection::DupAck, true), 300, SPACED, &fate);
        assert_eq!(dupack.s.counters().fast_retransmits, 1);
        assert_eq!(sends_of(&dupack, 100).len(), 2);
        assert_eq!(dupack.r.counters().duplicate_segments, 1);
    }

    #[test]
    fn without_reordering_seen_dupthresh_sacked_segments_make_reo_wnd_zero() {
        // The same 5 ms late segment on a path that never reordered before: RFC 8985 §6.2
        // step 4 sets reo_wnd to 0 once DupThresh segments are SACKed, so RACK resends it
        // as RFC 6675 does, at the ACK that SACKs the third segment above it.
        let fate = |i, copy| {
            if i == 100 && copy == 0 {
                Fate::Late(SimDuration::from_millis(5))
            } else {
                Fate::Deliver
            }
        };
        let rack = run(spec(by_rack(false), false), 300, SPACED, fate);
        let sends = sends_of(&rack, 100);
        assert_eq!(sends.len(), 2);
        assert_eq!(sends[1], delivered_at(&rack, 103));
    }

    #[test]
    fn the_reordering_timer_marks_a_tail_segment_lost_without_waiting_for_more_acks() {
        // Segment 297 of 300 is lost after reordering was seen: only 298 and 299 are SACKed
        // above it, fewer than DupThresh, so RFC 6675 never deems it lost and waits for the
        // RTO. RACK arms its timer for xmit_ts(297) + RACK.rtt + reo_wnd, RACK.rtt being the
        // RTT of 299's delivery and reo_wnd min_RTT / 4, and resends it when the timer expires.
        let fate = reordered_then(|i, copy| {
            if i == 297 && copy == 0 {
                Fate::Drop
            } else {
                Fate::Deliver
            }
        });
        let rack = run(spec(by_rack(false), false), 300, SPACED, &fate);
        let sends = sends_of(&rack, 297);
        assert_eq!(sends.len(), 2);
        let sent_299 = sends_of(&rack, 299)[0];
        let rack_rtt = delivered_at(&rack, 299).saturating_since(sent_299);
        let min_rtt = SimDuration(rack.s.counters().rtt_min_ns.unwrap());
        let reo_wnd = SimDuration(min_rtt.as_nanos() / 4);
        assert_eq!(sends[1], sends[0] + rack_rtt + reo_wnd);
        assert_eq!(rack.s.counters().timeouts, 0);
        let dupack = run(spec(LossDetection::DupAck, false), 300, SPACED, &fate);
        assert_eq!(dupack.s.counters().timeouts, 1);
    }

    #[test]
    fn rack_finds_a_lost_retransmission_where_rfc_6675_waits_for_the_rto() {
        // Segment 100 and its first retransmission are both lost. New data sent after the
        // retransmission is SACKed one RTT later, so RACK (reo_wnd 0 in recovery) deems the
        // retransmission lost too and resends it at once. RFC 6675 never deems a resent hole
        // lost again: only the RTO (1 s minimum) repairs it, the transfer ends 0.8 s later.
        let fate = |i, copy| {
            if i == 100 && copy < 2 {
                Fate::Drop
            } else {
                Fate::Deliver
            }
        };
        let rack = run(spec(by_rack(false), false), 300, SPACED, fate);
        let sends = sends_of(&rack, 100);
        assert_eq!(sends.len(), 3);
        assert_eq!(rack.s.counters().timeouts, 0);
        // The first segment sent after the retransmission is delivered: the retransmission,
        // sent before it, is lost then (its RTT is RACK.rtt, reo_wnd is 0).
        let (after, _, _) = *rack.sent.iter().find(|(t, _, _)| *t > sends[1]).unwrap();
        let first_after = rack.sent.iter().find(|(t, _, _)| *t == after).unwrap().1 / MSS;
        assert_eq!(sends[2], delivered_at(&rack, first_after));
        let dupack = run(spec(LossDetection::DupAck, false), 300, SPACED, fate);
        assert_eq!(dupack.s.counters().timeouts, 1);
        let sends = sends_of(&dupack, 100);
        // The RTO (1 s, restarted by the last cumulative ACK before the retransmission).
        assert!(
            sends[2] > sends[1] + SimDuration::from_millis(900),
            "{sends:?}"
        );
        let done = |r: &Run| r.s.counters().completed_at.unwrap();
        assert!(done(&dupack) > done(&rack) + SimDuration::from_millis(700));
    }

    #[test]
    fn the_tail_loss_probe_repairs_a_lost_last_segment_without_an_rto() {
        // 30 segments, IW 20, no bottleneck: the first window's ACKs arrive at 100 ms and send
        // the last 10; the last one is lost. Nothing after it can be SACKed, so neither RFC
        // 6675 nor RACK alone sees the loss, and the RTO repairs it. With TLP, the ACK of
        // segment 28 at 200 ms leaves one segment in flight: PTO = 2·SRTT (100 ms, every
        // sample) + WCDelAckT (200 ms), and with no new data the probe resends the last
        // segment at 600 ms.
        let fate = |i, copy| {
            if i == 29 && copy == 0 {
                Fate::Drop
            } else {
                Fate::Deliver
            }
        };
        let tlp = run(spec(by_rack(true), false), 30, SimDuration::ZERO, fate);
        assert_eq!(tlp.s.counters().timeouts, 0);
        assert_eq!(sends_of(&tlp, 29), vec![ms(100), ms(600)]);
        assert_eq!(tlp.s.counters().completed_at, Some(ms(700)));
        let rack = tlp.s.rack().unwrap();
        // The probe's ACK equals TLP.end_seq (the probe was the last segment): RFC 8985
        // §7.4.2 counts a repaired loss only for an ACK beyond it, so none is counted here.
        assert_eq!((rack.probes, rack.probe_repairs), (1, 0));
        let no_tlp = run(spec(by_rack(false), false), 30, SimDuration::ZERO, fate);
        assert_eq!(no_tlp.s.counters().timeouts, 1);
        assert_eq!(sends_of(&no_tlp, 29), vec![ms(100), ms(1200)]);
    }

    #[test]
    fn a_spurious_retransmission_comes_back_as_a_dsack_and_widens_reo_wnd() {
        // Segment 100's first copy arrives 60 ms late: RACK deems it lost (DupThresh SACKed,
        // no reordering seen), resends it, and the original arrives first. The receiver
        // reports the retransmission as a duplicate (RFC 2883 §4: a block below the cumulative
        // ACK) and RACK grows reo_wnd_mult to 2 (RFC 8985 §6.2 step 4).
        let fate = |i, copy| {
            if i == 100 && copy == 0 {
                Fate::Late(SimDuration::from_millis(60))
            } else {
                Fate::Deliver
            }
        };
        let r = run(spec(by_rack(false), true), 300, SPACED, fate);
        assert_eq!(sends_of(&r, 100).len(), 2);
        let dsacks: Vec<_> = r.acks.iter().filter_map(|a| a.tcp()?.ack.dsack()).collect();
        assert_eq!(dsacks, vec![(100 * MSS, 101 * MSS)]);
        let rack = r.s.rack().unwrap();
        assert_eq!(rack.dsacks, 1);
        assert_eq!(rack.reo_wnd_mult(), 2);
        assert_eq!(r.r.counters().duplicate_segments, 1);
        // Without DSACK the receiver sends no such block and the window stays.
        let plain = run(spec(by_rack(false), false), 300, SPACED, fate);
        assert!(plain
            .acks
            .iter()
            .all(|a| a.tcp().unwrap().ack.dsack().is_none()));
        assert_eq!(plain.s.rack().unwrap().reo_wnd_mult(), 1);
    }
}
