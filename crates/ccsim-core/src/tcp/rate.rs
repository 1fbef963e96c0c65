// SPDX-License-Identifier: MIT
//! Delivery-rate estimation (draft-cheng-iccrg-delivery-rate-estimation-02, Linux
//! net/ipv4/tcp_rate.c): on every ACK, how fast the path delivered the data the ACK reports,
//! for a controller that builds a model from it (BBR, `cc/bbr.rs`).
//!
//! ```text
//!   send (or resend) of P:  P.delivered = C.delivered, P.delivered_time = C.delivered_time,
//!                           P.first_sent_time = C.first_sent_time, P.sent_time = now,
//!                           P.is_app_limited = C.app_limited != 0        (draft §3.2)
//!   ACK delivering P1..Pn:  C.delivered += their bytes, C.delivered_time = now;
//!                           P = the most recently sent of them                     (§3.3)
//!                           send_elapsed = P.sent_time − P.first_sent_time
//!                           ack_elapsed  = C.delivered_time − P.delivered_time
//!                           rs.delivered = C.delivered − P.delivered
//!                           rs.interval  = max(send_elapsed, ack_elapsed)
//!                           C.first_sent_time = P.sent_time
//!
//!       P.first_sent_time          P.sent_time         (the sender's clock)
//!            |──── send_elapsed ────|
//!       P.delivered_time                    now        (the ACKs' clock)
//!            |──────── ack_elapsed ──────────|
//! ```
//!
//! The larger interval is the conservative one: data sent in a burst is delivered no faster
//! than the bottleneck, and ACKs that arrive compressed do not make the path look faster than
//! the sender could send. A segment "delivered" is one cumulatively acknowledged or SACKed
//! (§2, SACKed data counts); a segment SACKed earlier does not count again when the cumulative
//! ACK passes it.
//!
//! The state of each segment in flight lives here, in a ring parallel to the scoreboard's
//! segments (same boundaries: segments keep those of their first transmission), and only a
//! sender whose controller asks for rate samples has one: the scoreboard's own segment stays as
//! small, and the other runs pay nothing. Each ACK touches only the segments it newly delivers
//! (the scoreboard tells each segment it newly SACKs, as a [`DeliveryHook`]), never the window.
//!
//! Application-limited marking (§3.4): when the sender has nothing to send although the window
//! would let it ([`RateSampler::mark_app_limited`]), the data in flight then is the "bubble";
//! samples of segments sent before the bubble is delivered are marked, so the controller can
//! tell a slow application from a slow path.

use std::collections::VecDeque;

use crate::cc::{CaState, RateSample};
use crate::tcp::scoreboard::{Delivered, DeliveryHook};
use crate::tcp::NO_POINT;
use crate::time::{SimDuration, SimTime};

/// The rate state of one segment, taken when it was last (re)sent.
#[derive(Clone, Copy, Debug)]
struct TxRecord {
    start: u64,
    end: u64,
    /// C.delivered when it was sent.
    delivered: u64,
    /// C.delivered_time when it was sent.
    delivered_time: SimTime,
    /// C.first_sent_time when it was sent.
    first_sent_time: SimTime,
    sent_time: SimTime,
    is_app_limited: bool,
    /// Sent more than once: no RTT sample from it (Karn's rule).
    retransmitted: bool,
    /// Delivered already (SACKed): not counted again.
    delivered_once: bool,
}

/// The connection's rate state (draft §3.1's C.*) and the segments in flight.
#[derive(Clone, Debug)]
pub struct RateSampler {
    /// C.delivered: bytes delivered so far.
    delivered: u64,
    /// C.delivered_time.
    delivered_time: SimTime,
    /// C.first_sent_time: the send time of the segment whose delivery started the current
    /// sending interval.
    first_sent_time: SimTime,
    /// C.app_limited: 0, or the C.delivered past which the bubble has been delivered.
    app_limited: u64,
    /// The smallest RTT of the samples here (cumulative or SACKed, never a retransmission):
    /// Linux's `tcp_min_rtt`, which SACK-based samples feed too ([`SimDuration::MAX`]: none).
    min_rtt: SimDuration,
    /// After an RTO: SND.MAX at the timeout, until SND.UNA passes it (Linux's TCP_CA_Loss;
    /// [`NO_POINT`]: none).
    loss_until: u64,
    segs: VecDeque<TxRecord>,
    mss: u64,
    /// The most recently sent segment this ACK delivered so far.
    newest: Option<TxRecord>,
}

impl RateSampler {
    pub fn new(mss: u64) -> Self {
        RateSampler {
            delivered: 0,
            delivered_time: SimTime::ZERO,
            first_sent_time: SimTime::ZERO,
            app_limited: 0,
            min_rtt: SimDuration::MAX,
            loss_until: NO_POINT,
            segs: VecDeque::new(),
            mss: mss.max(1),
            newest: None,
        }
    }

    /// C.delivered.
    pub fn delivered(&self) -> u64 {
        self.delivered
    }

    /// Whether samples are being marked application-limited.
    pub fn is_app_limited(&self) -> bool {
        self.app_limited != 0
    }

    fn record(&self, start: u64, end: u64, now: SimTime) -> TxRecord {
        TxRecord {
            start,
            end,
            delivered: self.delivered,
            delivered_time: self.delivered_time,
            first_sent_time: self.first_sent_time,
            sent_time: now,
            is_app_limited: self.app_limited != 0,
            retransmitted: false,
            delivered_once: false,
        }
    }

    /// Draft §3.2: a transmission that finds nothing in flight starts a new sending interval
    /// (Linux's `tcp_rate_skb_sent` with `packets_out` 0).
    fn start_interval_if_idle(&mut self, flight_size: u64, now: SimTime) {
        if flight_size == 0 {
            self.first_sent_time = now;
            self.delivered_time = now;
        }
    }

    /// A new segment `[seq, seq + len)` leaves now; `flight_size` is SND.MAX − SND.UNA before it.
    pub fn on_send(&mut self, seq: u64, len: u64, flight_size: u64, now: SimTime) {
        self.start_interval_if_idle(flight_size, now);
        let r = self.record(seq, seq + len, now);
        self.segs.push_back(r);
    }

    /// The segment holding `seq` is resent now: its state is taken afresh (draft §3.2: every
    /// transmission, retransmissions included).
    pub fn on_retransmit(&mut self, seq: u64, flight_size: u64, now: SimTime) {
        self.start_interval_if_idle(flight_size, now);
        let Some(i) = self.index_of(seq) else {
            return;
        };
        let old = self.segs[i];
        let mut r = self.record(old.start, old.end, now);
        r.retransmitted = true;
        r.delivered_once = old.delivered_once;
        self.segs[i] = r;
    }

    /// Index of the record holding byte `seq`: by division when the segments before it are all
    /// one MSS (as in the scoreboard), else by binary search.
    fn index_of(&self, seq: u64) -> Option<usize> {
        let base = self.segs.front()?.start;
        let guess = (seq.saturating_sub(base) / self.mss) as usize;
        if let Some(s) = self.segs.get(guess) {
            if s.start <= seq && seq < s.end {
                return Some(guess);
            }
        }
        let i = self.segs.partition_point(|s| s.end <= seq);
        (i < self.segs.len() && self.segs[i].start <= seq).then_some(i)
    }

    /// Keep `r` if it was sent after the newest so far: later send time, or the same time and a
    /// higher end (Linux's `tcp_skb_sent_after`).
    fn consider(&mut self, r: TxRecord) {
        if self
            .newest
            .is_none_or(|n| (r.sent_time, r.end) > (n.sent_time, n.end))
        {
            self.newest = Some(r);
        }
    }

    /// The cumulative ACK reached `ack`: segments wholly below it are delivered (unless SACKed
    /// before) and forgotten.
    pub fn on_cumulative_ack(&mut self, ack: u64) {
        while let Some(&r) = self.segs.front() {
            if r.end > ack {
                break;
            }
            self.segs.pop_front();
            if !r.delivered_once {
                self.consider(r);
            }
        }
    }

    /// The scoreboard newly SACKed `[from, to)` (whole segments).
    pub fn on_sacked(&mut self, from: u64, to: u64) {
        let Some(mut i) = self.index_of(from) else {
            return;
        };
        while let Some(r) = self.segs.get_mut(i) {
            if r.start >= to {
                break;
            }
            if !r.delivered_once {
                r.delivered_once = true;
                let r = *r;
                self.consider(r);
            }
            i += 1;
        }
    }

    /// An RTO: the connection is in the loss state until SND.UNA passes `snd_max`.
    pub fn on_rto(&mut self, snd_max: u64) {
        self.loss_until = snd_max;
    }

    /// The recovery state for the controller: fast recovery, the loss state after an RTO, or
    /// open.
    pub fn ca_state(&mut self, in_recovery: bool, snd_una: u64) -> CaState {
        if in_recovery {
            return CaState::Recovery;
        }
        if self.loss_until != NO_POINT {
            if snd_una < self.loss_until {
                return CaState::Loss;
            }
            self.loss_until = NO_POINT;
        }
        CaState::Open
    }

    /// Draft §3.4: the sender has nothing to send although its window is open: samples of what
    /// is sent until the data now in flight (`pipe` bytes) is delivered are app-limited.
    pub fn mark_app_limited(&mut self, pipe: u64) {
        self.app_limited = (self.delivered + pipe).max(1);
    }

    /// The sample of an ACK that newly delivered `acked_sacked` bytes, after
    /// [`RateSampler::on_cumulative_ack`] and [`RateSampler::on_sacked`]; `min_rtt` is the
    /// sender's smallest RTT, taken with this sampler's own (an interval shorter than the
    /// minimum RTT is ACK compression, not a rate; none yet: no valid interval, as in Linux). The
    /// fields of the connection's state (`losses`, pipes, state) are the caller's to fill.
    pub fn sample(
        &mut self,
        now: SimTime,
        acked_sacked: u64,
        min_rtt: SimDuration,
        mss: u64,
    ) -> RateSample {
        if acked_sacked > 0 {
            self.delivered += acked_sacked;
            self.delivered_time = now;
        }
        // Draft §3.4 (Linux `tcp_rate_gen`): the bubble is gone once delivered passes it.
        if self.app_limited != 0 && self.delivered > self.app_limited {
            self.app_limited = 0;
        }
        let mut rs = RateSample {
            delivered: 0,
            interval: SimDuration::ZERO,
            prior_delivered: 0,
            delivered_total: self.delivered,
            delivered_time: self.delivered_time,
            is_app_limited: false,
            rtt: None,
            acked_sacked,
            losses: 0,
            prior_in_flight: 0,
            in_flight: 0,
            mss,
            srtt: None,
            ca_state: CaState::Open,
        };
        let Some(p) = self.newest.take() else {
            return rs;
        };
        rs.prior_delivered = p.delivered;
        rs.is_app_limited = p.is_app_limited;
        rs.delivered = self.delivered - p.delivered;
        if !p.retransmitted {
            let rtt = now.saturating_since(p.sent_time);
            rs.rtt = Some(rtt);
            self.min_rtt = self.min_rtt.min(rtt);
        }
        let min_rtt = min_rtt.min(self.min_rtt);
        let send_elapsed = p.sent_time.saturating_since(p.first_sent_time);
        let ack_elapsed = self.delivered_time.saturating_since(p.delivered_time);
        self.first_sent_time = p.sent_time;
        let interval = send_elapsed.max(ack_elapsed);
        // Draft §3.3: an interval below the minimum RTT cannot be a path's rate (Linux
        // `tcp_rate_gen` discards it too); the round-trip bookkeeping then waits for the next.
        if min_rtt != SimDuration::MAX && interval >= min_rtt && rs.delivered > 0 {
            rs.interval = interval;
        }
        rs
    }
}

/// The scoreboard's walk of an ACK tells the sampler each segment it newly SACKs; what the
/// cumulative ACK delivers the sampler finds itself ([`RateSampler::on_cumulative_ack`] pops its
/// own records up to the ACK).
impl DeliveryHook for RateSampler {
    #[inline]
    fn delivered(&mut self, seg: Delivered) {
        if seg.by_sack {
            self.on_sacked(seg.start, seg.end);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn ms(x: u64) -> SimTime {
        SimTime::from_millis(x)
    }

    #[test]
    fn a_window_sent_in_a_burst_is_measured_over_the_ack_interval() {
        // Ten segments leave at t = 0 (nothing in flight: the interval starts there); the path
        // delivers one per ms and their ACKs arrive at 40, 41, ..., 49 ms.
        let mut r = RateSampler::new(MSS);
        for i in 0..10 {
            r.on_send(i * MSS, MSS, i * MSS, ms(0));
        }
        let rtt = SimDuration::from_millis(40);
        // The first ACK: send_elapsed 0, ack_elapsed 40 ms − 0 (C.delivered_time was set at the
        // send from idle): 1000 B over 40 ms, not below the minimum RTT, so a valid sample.
        r.on_cumulative_ack(MSS);
        let s = r.sample(ms(40), MSS, rtt, MSS);
        assert_eq!((s.delivered, s.interval), (MSS, rtt));
        assert_eq!(s.rtt, Some(rtt));
        // The tenth ACK at 49 ms: segment 9 was sent with C.delivered 0 at delivered_time 0:
        // 10,000 B over max(0, 49 ms) = 49 ms.
        for i in 2..=10 {
            r.on_cumulative_ack(i * MSS);
            let s = r.sample(ms(39 + i), MSS, rtt, MSS);
            if i == 10 {
                assert_eq!(s.delivered, 10 * MSS);
                assert_eq!(s.interval, SimDuration::from_millis(49));
                assert_eq!(s.prior_delivered, 0);
            }
        }
        assert_eq!(r.delivered(), 10 * MSS);
    }

    #[test]
    fn an_ack_clocked_segment_is_measured_over_one_round_trip_of_delivery() {
        // A segment sent at 50 ms on the ACK that brought C.delivered to 5000 (at 50 ms); its own
        // ACK at 90 ms, after 4 more segments were delivered (at 60, 70, 80, 90 ms): 5 segments
        // over 40 ms.
        let mut r = RateSampler::new(MSS);
        r.on_send(0, MSS, 0, ms(0));
        r.on_cumulative_ack(MSS);
        let _ = r.sample(ms(40), MSS, SimDuration::from_millis(40), MSS);
        r.delivered = 5 * MSS;
        r.delivered_time = ms(50);
        r.first_sent_time = ms(10);
        r.on_send(MSS, MSS, 4 * MSS, ms(50));
        r.delivered = 9 * MSS;
        r.delivered_time = ms(80);
        r.on_cumulative_ack(2 * MSS);
        let s = r.sample(ms(90), MSS, SimDuration::from_millis(40), MSS);
        // send_elapsed = 50 − 10 = 40 ms, ack_elapsed = 90 − 50 = 40 ms; delivered 10 − 5.
        assert_eq!(s.delivered, 5 * MSS);
        assert_eq!(s.interval, SimDuration::from_millis(40));
        assert_eq!(s.prior_delivered, 5 * MSS);
    }

    #[test]
    fn sacked_data_counts_once_and_the_newest_sent_segment_gives_the_sample() {
        let mut r = RateSampler::new(MSS);
        for i in 0..4 {
            r.on_send(i * MSS, MSS, i * MSS, ms(i));
        }
        // Segment 0 lost; SACK of 1..3 delivers segments 1 and 2 (3 still in flight).
        r.on_sacked(MSS, 3 * MSS);
        let s = r.sample(ms(50), 2 * MSS, SimDuration::from_millis(40), MSS);
        assert_eq!(
            s.rtt,
            Some(SimDuration::from_millis(48)),
            "segment 2, sent at 2 ms"
        );
        assert_eq!(s.delivered_total, 2 * MSS);
        // Segment 0 is resent at 60 ms and its cumulative ACK (to 3000) arrives at 100 ms: only
        // the resent segment is new, and its RTT is not a sample (Karn).
        r.on_retransmit(0, 4 * MSS, ms(60));
        r.on_cumulative_ack(3 * MSS);
        let s = r.sample(ms(100), MSS, SimDuration::from_millis(40), MSS);
        assert_eq!(s.rtt, None);
        assert_eq!(s.delivered_total, 3 * MSS);
        // Resent with C.delivered 2000 (at 50 ms): 1000 B since.
        assert_eq!(s.delivered, MSS);
        assert_eq!(s.prior_delivered, 2 * MSS);
    }

    #[test]
    fn samples_are_app_limited_until_the_bubble_is_delivered() {
        let mut r = RateSampler::new(MSS);
        r.on_send(0, MSS, 0, ms(0));
        r.on_send(MSS, MSS, MSS, ms(0));
        // Nothing more to send with 2000 B in flight: the bubble ends past C.delivered 2000.
        r.mark_app_limited(2 * MSS);
        r.on_send(2 * MSS, MSS, 2 * MSS, ms(1));
        r.on_cumulative_ack(2 * MSS);
        let s = r.sample(ms(40), 2 * MSS, SimDuration::from_millis(39), MSS);
        assert!(!s.is_app_limited, "sent before the mark");
        assert!(r.is_app_limited(), "delivered 2000 has not passed 2000");
        r.on_cumulative_ack(3 * MSS);
        let s = r.sample(ms(41), MSS, SimDuration::from_millis(39), MSS);
        assert!(s.is_app_limited, "segment 2 was sent inside the bubble");
        assert!(!r.is_app_limited(), "3000 delivered: the bubble is gone");
    }

    #[test]
    fn no_sample_is_valid_before_an_rtt_is_known() {
        // The only segment delivered was resent (Karn: no RTT of its own) and the sender has
        // no RTT either: the interval cannot be checked against a minimum RTT, so no sample
        // (Linux: tcp_min_rtt unset makes every interval too short).
        let mut r = RateSampler::new(MSS);
        r.on_send(0, MSS, 0, ms(0));
        r.on_retransmit(0, MSS, ms(50));
        r.on_cumulative_ack(MSS);
        let s = r.sample(ms(60), MSS, SimDuration::MAX, MSS);
        assert_eq!((s.interval, s.rtt), (SimDuration::ZERO, None));
        assert_eq!(s.delivered_total, MSS, "delivered counts all the same");
        // With a minimum RTT known (40 ms), the same 60 ms interval is a sample.
        r.on_send(MSS, MSS, 0, ms(60));
        r.on_retransmit(MSS, MSS, ms(100));
        r.on_cumulative_ack(2 * MSS);
        let s = r.sample(ms(110), MSS, SimDuration::from_millis(40), MSS);
        assert_eq!(s.interval, SimDuration::from_millis(50));
    }
}
