// SPDX-License-Identifier: MIT
//! Random Early Detection (Floyd and Jacobson, "Random Early Detection Gateways for Congestion
//! Avoidance", IEEE/ACM ToN 1(4), 1993; "FJ93" below), in two parts so that WRED (`wred.rs`)
//! reuses both:
//!
//! ```text
//!   RedAverage  the EWMA of the queue size, aged over idle periods       (one per queue)
//!   RedProfile  min_th, max_th, max_p, gentle, and its own `count`       (RED: one; WRED: one
//!               → Verdict: Pass | Signal (mark or drop) | Force (drop)    per DSCP)
//! ```
//!
//! [`signal`] applies a `Signal` verdict to one packet: a CE mark when ECN is on and the packet
//! is ECN-capable (RFC 3168 §5), a drop otherwise.

use crate::packet::{Packet, ECN_CE, ECN_ECT0, ECN_ECT1};
use crate::rng::RngStream;
use crate::time::{Rate, SimTime};

/// What RED's early-detection step decided for one arriving packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Enqueue it unchanged.
    Pass,
    /// Signal congestion: mark it if ECN applies, otherwise drop it.
    Signal,
    /// Drop it even if it is ECN-capable.
    Force,
}

/// The EWMA average queue size of FJ93 §4, and the idle period it ages over.
#[derive(Clone, Debug)]
pub(crate) struct RedAverage {
    w_q: f64,
    /// ln(1 − w_q), precomputed: ageing by m packets is exp(m · ln(1 − w_q)).
    ln_keep: f64,
    /// Link rate in bit/s and mean_packet_size in bit·ns·1e9 (8e9 · bytes): the number of
    /// "small packets" that fit in an idle span of `d` ns is d · rate / (8e9 · mean_size).
    rate_bps: u128,
    mean_pkt_bit_ns: u128,
    /// The EWMA average queue size, in packets or bytes (FJ93 §4 `avg`).
    pub(crate) avg: f64,
    /// The transmitter is idle and the queue is empty, since `idle_since` (FJ93 `q_time`).
    idle: bool,
    idle_since: SimTime,
}

impl RedAverage {
    pub(crate) fn new(w_q: f64, mean_packet_size: u32, link_rate: Rate) -> RedAverage {
        RedAverage {
            w_q,
            ln_keep: libm::log1p(-w_q),
            rate_bps: link_rate.bits_per_sec() as u128,
            mean_pkt_bit_ns: (mean_packet_size.max(1) as u128) * 8 * 1_000_000_000,
            avg: 0.0,
            // The link starts idle at time zero (as ns-2's REDQueue::reset does).
            idle: true,
            idle_since: SimTime::ZERO,
        }
    }

    /// The transmitter found the queue empty: the idle period starts now, unless it already
    /// started (several empty dequeues in a row must not move `q_time`). FJ93 Fig. 2: "when
    /// queue becomes empty: q_time ← time". As in ns-2 (`REDQueue::deque` sets `idle_` and
    /// `idle_time_` when it finds no packet), the period starts when the *link* goes idle, not
    /// when the last waiting packet enters the transmitter.
    #[inline]
    pub(crate) fn on_idle(&mut self, now: SimTime) {
        if !self.idle {
            self.idle = true;
            self.idle_since = now;
        }
    }

    /// A packet left the queue: the link is busy.
    #[inline]
    pub(crate) fn on_dequeue(&mut self) {
        self.idle = false;
    }

    /// FJ93 §4 (Fig. 2) and §6: avg ← (1 − w_q)·avg + w_q·q on each arrival. After an idle period
    /// the average is first aged as if m = f(time − q_time) small packets had arrived to an
    /// empty queue, avg ← (1 − w_q)^m · avg, where f counts the transmission times of a packet
    /// of `mean_packet_size` at the link rate that fit in the idle span (ns-2 red.cc: m =
    /// ptc · idle_time, then the ordinary EWMA update for the arriving packet).
    #[inline]
    pub(crate) fn update(&mut self, now: SimTime, q: f64) {
        if self.idle {
            self.idle = false;
            let idle_ns = now.saturating_since(self.idle_since).as_nanos() as u128;
            let m = idle_ns * self.rate_bps / self.mean_pkt_bit_ns;
            if m > 0 {
                self.avg *= libm::exp(m as f64 * self.ln_keep);
            }
        }
        self.avg += self.w_q * (q - self.avg);
    }
}

/// One drop profile: thresholds, the probability at `max_th`, and the count of packets since
/// the last mark (FJ93 Fig. 2). RED has one; WRED one per DSCP.
#[derive(Clone, Debug)]
pub(crate) struct RedProfile {
    min_th: f64,
    max_th: f64,
    max_p: f64,
    gentle: bool,
    /// 1 / (max_th − min_th), precomputed.
    inv_range: f64,
    /// Packets since the last marked/dropped one (FJ93 Fig. 2 `count`, −1 below min_th).
    pub(crate) count: i64,
}

impl RedProfile {
    pub(crate) fn new(min_th: f64, max_th: f64, max_p: f64, gentle: bool) -> RedProfile {
        let range = max_th - min_th;
        RedProfile {
            min_th,
            max_th,
            max_p,
            gentle,
            inv_range: if range > 0.0 {
                1.0 / range
            } else {
                f64::INFINITY
            },
            // FJ93 Fig. 2, initialization: count ← −1.
            count: -1,
        }
    }

    /// The marking probability p_b before uniformisation at average `avg` (None below min_th,
    /// 1 where every packet is dropped). For tests and documentation tables.
    #[cfg(test)]
    pub(crate) fn p_b(&self, avg: f64) -> Option<f64> {
        if avg < self.min_th {
            None
        } else if avg < self.max_th {
            Some(self.max_p * (avg - self.min_th) * self.inv_range)
        } else if self.gentle && avg < 2.0 * self.max_th {
            Some(self.max_p + (1.0 - self.max_p) * (avg - self.max_th) / self.max_th)
        } else {
            Some(1.0)
        }
    }

    /// FJ93 Fig. 2 (with §7's uniformisation) and Floyd's "gentle" RED (2000): decide the fate
    /// of the arriving packet from the average; updates `count`, draws at most one uniform.
    #[inline]
    pub(crate) fn early_detection(&mut self, avg: f64, rng: &mut RngStream) -> Verdict {
        let pb = if avg < self.min_th {
            // FJ93 Fig. 2: "else count ← −1".
            self.count = -1;
            return Verdict::Pass;
        } else if avg < self.max_th {
            // FJ93 §7: p_b ← max_p (avg − min_th)/(max_th − min_th).
            self.max_p * (avg - self.min_th) * self.inv_range
        } else if self.gentle && avg < 2.0 * self.max_th {
            // Gentle RED (Floyd, "Recommendation on using the gentle variant of RED", 2000):
            // p_b rises linearly from max_p at max_th to 1 at 2·max_th.
            self.max_p + (1.0 - self.max_p) * (avg - self.max_th) / self.max_th
        } else {
            // FJ93 Fig. 2: "else if max_th ≤ avg: mark the arriving packet; count ← 0" (with
            // gentle, from 2·max_th). RFC 3168 §7: "During periods where the average queue size
            // exceeds an upper threshold ... routers drop packets rather than set the CE
            // codepoint", hence Force even for ECN-capable packets.
            self.count = 0;
            return Verdict::Force;
        };
        // FJ93 §7: count packets since the last mark and p_a ← p_b / (1 − count·p_b), so that
        // the gaps between marks are roughly uniform on [1, 1/p_b] instead of geometric.
        self.count += 1;
        let pa = uniformised(pb, self.count);
        if rng.uniform() < pa {
            self.count = 0;
            Verdict::Signal
        } else {
            Verdict::Pass
        }
    }
}

/// FJ93 §7: p_a = p_b / (1 − count·p_b), 1 once count·p_b reaches 1.
#[inline]
pub(crate) fn uniformised(pb: f64, count: i64) -> f64 {
    let denom = 1.0 - count as f64 * pb;
    if denom > 0.0 {
        pb / denom
    } else {
        1.0
    }
}

/// What a `Signal` verdict did to a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Signalled {
    /// ECN-capable: now CE, keep it.
    Marked,
    /// Already CE: keep it unchanged.
    AlreadyCe,
    /// Not ECN-capable, or ECN off: drop it.
    Dropped,
}

/// Apply a congestion signal to `pkt`: RFC 3168 §5.
#[inline]
pub(crate) fn signal(pkt: &mut Packet, ecn: bool) -> Signalled {
    if !ecn {
        return Signalled::Dropped;
    }
    match pkt.ecn {
        // RFC 3168 §5: "If so [ECT set], then instead of dropping the packet, the router MAY
        // instead set the CE codepoint in the IP header."
        ECN_ECT1 | ECN_ECT0 => {
            pkt.ecn = ECN_CE;
            Signalled::Marked
        }
        // RFC 3168 §5: "When a CE packet ... is received by a router, the CE codepoint is left
        // unchanged, and the packet is transmitted as usual."
        ECN_CE => Signalled::AlreadyCe,
        // Not-ECT: the congestion signal can only be a drop (RFC 3168 §5).
        _ => Signalled::Dropped,
    }
}

/// RED on a whole queue: one average, one profile.
#[derive(Clone, Debug)]
pub(crate) struct Red {
    pub(crate) average: RedAverage,
    pub(crate) profile: RedProfile,
    pub(crate) ecn: bool,
    /// The queue is measured in bytes (thresholds in bytes) when the limit is in bytes. Only
    /// the measurement changes: the drop/mark probability is *not* scaled by packet size
    /// (FJ93 §4's byte-mode p_b·size/max_size). RFC 7141 (BCP 41), recommendations (2) and
    /// (3): packet size should not be taken into account when the network creates congestion
    /// signals, and RED's byte-mode packet drop variant should not be used.
    pub(crate) byte_mode: bool,
    pub(crate) rng: RngStream,
}

impl Red {
    /// The average and the verdict for an arrival that finds `q` (packets or bytes) queued.
    #[inline]
    pub(crate) fn on_arrival(&mut self, now: SimTime, q: f64) -> Verdict {
        // FJ93 §4: the average is computed on every arrival, from the queue size the arriving
        // packet finds (ns-2 red.cc uses the length before the enqueue, as here).
        self.average.update(now, q);
        self.profile
            .early_detection(self.average.avg, &mut self.rng)
    }
}
