// SPDX-License-Identifier: MIT
//! HighSpeed TCP (S. Floyd, RFC 3649, 2003): a steeper response function for large windows, so
//! that a flow can hold a 10 Gb/s window with a realistic loss rate. Standard TCP sustains
//! w = 1.2/√p segments (RFC 3649 §5, eq. (1)); HighSpeed TCP, above `Low_Window`, sustains
//!
//! ```text
//!   log w = log Low_Window + (log p − log Low_P) · S            (RFC 3649 §5)
//!   S     = (log High_Window − log Low_Window) / (log High_P − log Low_P)
//!         ≈ 0.12 / p^0.835 with the defaults (RFC 3649 §5, its table of w against p)
//! ```
//!
//! and gets there with window-dependent AIMD parameters (RFC 3649 §7):
//!
//! ```text
//!   b(w) = (High_Decrease − 0.5) · (log w − log Low_Window)/(log High_Window − log Low_Window) + 0.5
//!   p(w) = Low_P · (w / Low_Window)^(1/S)                        (the response function inverted)
//!   a(w) = w² · p(w) · 2·b(w) / (2 − b(w))
//!   per ACK in congestion avoidance: w += a(w)/w;   on loss: w ← (1 − b(w)) · w
//! ```
//!
//! At or below `Low_Window` a = 1 and b = 0.5: the flow is standard TCP, and this controller
//! hands the ACK to an embedded [`Reno`], so its trace equals Reno's exactly. Slow start is
//! Reno's too (RFC 3649 leaves it unchanged; Limited Slow-Start, RFC 3742, is a separate option).
//!
//! a(w) and b(w) come from the formulas, not from RFC 3649 Appendix B's rounded table (which Linux
//! `tcp_highspeed.c` and ns-3 use). They are computed once per whole-segment window size and
//! cached, so `on_ack` costs two logarithms and a power only when cwnd crosses a segment
//! boundary, and a multiply otherwise.

use super::common::{ack_credit, floor_ssthresh, segments, Fraction};
use super::Growth;
use super::{AckEvent, CcMetrics, CongestionControl, CongestionEvent, CongestionKind, Window};
use super::{Reno, RenoConfig};
use crate::time::SimTime;

/// The four parameters of RFC 3649 §5 and §7, plus the loss rate at `low_window`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HighSpeedConfig {
    /// Segments; at or below it the flow is standard TCP (RFC 3649 §5: 38).
    pub low_window: f64,
    /// Segments; the window reached at loss rate `high_p` (RFC 3649 §5: 83 000).
    pub high_window: f64,
    /// Loss rate at `high_window` (RFC 3649 §5: 10⁻⁷).
    pub high_p: f64,
    /// Loss rate at `low_window`. RFC 3649 §5 uses standard TCP's rate there, 10⁻³ (w = 1.2/√p
    /// gives 38 at p ≈ 10⁻³); ns-2.35 `tcp.cc` uses 1.5/low_window² ≈ 1.0388·10⁻³.
    pub low_p: f64,
    /// b(high_window), the decrease factor at the high end (RFC 3649 §7: 0.1).
    pub high_decrease: f64,
    /// The window a fast-retransmit or ECN reduction takes b(w) of: cwnd (false; RFC 3649 §7's
    /// w) or the data in flight the sender counts (true; FlightSize, or the pipe with
    /// `ssthresh_flight = "pipe"`), as ns-3.48's `TcpHighSpeed::GetSsThresh`, which looks up b
    /// for its `bytesInFlight` and multiplies that. A timeout is RFC 5681 eq. (4) either way.
    pub decrease_from_flight: bool,
    /// The count of acknowledged data towards the next increase survives a loss (true), as
    /// ns-3.48's `TcpHighSpeed` keeps `m_ackCnt` (its `GetSsThresh` leaves it), or starts again
    /// (false), as RFC 3465 §2.1's byte counting and Linux's `snd_cwnd_cnt` do. It matters at
    /// small windows: the count carried over a reduction is most of a window, worth a segment
    /// soon after the loss.
    pub keep_count_on_loss: bool,
}

impl Default for HighSpeedConfig {
    fn default() -> Self {
        HighSpeedConfig {
            low_window: 38.0,
            high_window: 83_000.0,
            high_p: 1e-7,
            low_p: 1e-3,
            high_decrease: 0.1,
            decrease_from_flight: false,
            keep_count_on_loss: false,
        }
    }
}

impl HighSpeedConfig {
    /// `growth` is the flow's ACK-counting rule, shared with Reno (see `common::ack_credit`).
    pub fn build(self, growth: Growth) -> HighSpeed {
        let ln_low_w = libm::log(self.low_window);
        let ln_span_w = libm::log(self.high_window) - ln_low_w;
        // RFC 3649 §5: S = (log High_Window − log Low_Window)/(log High_P − log Low_P).
        let s = ln_span_w / (libm::log(self.high_p) - libm::log(self.low_p));
        HighSpeed {
            cfg: self,
            growth,
            reno: RenoConfig { growth }.build(),
            ln_low_w,
            ln_span_w,
            inv_s: 1.0 / s,
            cached_segments: 0,
            cached_a: 1.0,
            cached_b: 0.5,
            fraction: Fraction::default(),
        }
    }
}

#[derive(Clone, Debug)]
pub struct HighSpeed {
    cfg: HighSpeedConfig,
    growth: Growth,
    /// Slow start, and congestion avoidance at or below `low_window`.
    reno: Reno,
    ln_low_w: f64,
    /// log High_Window − log Low_Window.
    ln_span_w: f64,
    /// 1/S.
    inv_s: f64,
    /// The whole-segment window the cached a(w), b(w) belong to (0: none yet).
    cached_segments: u64,
    cached_a: f64,
    cached_b: f64,
    fraction: Fraction,
}

impl HighSpeed {
    /// (a(w), b(w)) for a window of `w` segments, from RFC 3649 §7's formulas.
    pub fn params(&self, w: f64) -> (f64, f64) {
        if w <= self.cfg.low_window || !w.is_finite() {
            // RFC 3649 §7: a(w) = 1 and b(w) = 0.5 for w <= Low_Window (standard TCP).
            return (1.0, 0.5);
        }
        let frac = (libm::log(w) - self.ln_low_w) / self.ln_span_w;
        // RFC 3649 §7: b(w) = (High_Decrease − 0.5)·(log w − log Low_Window)
        //                     / (log High_Window − log Low_Window) + 0.5.
        let b = (self.cfg.high_decrease - 0.5) * frac + 0.5;
        // The response function of §5 solved for p: p(w) = Low_P·(w/Low_Window)^(1/S).
        let p = self.cfg.low_p * libm::pow(w / self.cfg.low_window, self.inv_s);
        // RFC 3649 §7: a(w) = w²·p(w)·2·b(w)/(2 − b(w)).
        let a = w * w * p * 2.0 * b / (2.0 - b);
        (a, b)
    }

    /// a(w), b(w) for cwnd, recomputed only when cwnd crosses a whole-segment boundary.
    fn cached(&mut self, cwnd: u64, mss: u64) -> (f64, f64) {
        let w = cwnd / mss.max(1);
        if w != self.cached_segments {
            let (a, b) = self.params(w as f64);
            self.cached_segments = w;
            self.cached_a = a;
            self.cached_b = b;
        }
        (self.cached_a, self.cached_b)
    }
}

impl CongestionControl for HighSpeed {
    fn name(&self) -> &'static str {
        "highspeed"
    }

    fn on_ack(&mut self, now: SimTime, ev: &AckEvent, w: &mut Window) {
        let mss = ev.mss.max(1);
        if w.in_slow_start() || segments(w.cwnd, mss) <= self.cfg.low_window {
            // RFC 3649 §7: standard TCP at or below Low_Window; slow start unchanged.
            self.reno.on_ack(now, ev, w);
            return;
        }
        let (a, _) = self.cached(w.cwnd, mss);
        // RFC 3649 §7: w += a(w)/w per ACK, in bytes a·SMSS²/cwnd.
        let inc = a * (mss * mss) as f64 / w.cwnd as f64 * ack_credit(self.growth, ev);
        w.cwnd = w.cwnd.saturating_add(self.fraction.take(inc));
    }

    fn on_congestion(&mut self, now: SimTime, ev: &CongestionEvent) -> u64 {
        self.fraction.clear();
        let count = self.reno.metrics().bytes_acked_accumulator;
        let reno = self.reno.on_congestion(now, ev);
        if self.cfg.keep_count_on_loss {
            self.reno.restore_bytes_acked(count);
        }
        if ev.kind == CongestionKind::Rto {
            // RFC 3649 changes the response to fast-retransmit losses only; a timeout is
            // standard TCP's (RFC 5681 eq. (4)).
            return reno;
        }
        let cwnd = if self.cfg.decrease_from_flight {
            ev.flight_size
        } else {
            ev.window.cwnd
        };
        let (_, b) = self.params(segments(cwnd, ev.mss));
        // RFC 3649 §7: w ← (1 − b(w))·w (b = 0.5 at or below Low_Window).
        let ssthresh = (cwnd as f64 * (1.0 - b)) as u64;
        floor_ssthresh(ssthresh.min(cwnd), ev.mss)
    }

    fn metrics(&self) -> CcMetrics {
        self.reno.metrics()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testkit::Driver;
    use crate::time::SimDuration;

    const MSS: u64 = 1000;

    fn hs() -> HighSpeed {
        HighSpeedConfig::default().build(Growth::Rfc5681)
    }

    #[test]
    fn with_count_after_loss_keep_the_segments_counted_before_a_loss_still_count() {
        // Byte counting at cwnd 10 (congestion avoidance): 9 segments acknowledged, one short
        // of an increase; then a loss halves cwnd to 5 (b = 0.5 below Low_Window). Kept, as
        // ns-3's m_ackCnt is, the 9 counted segments plus the next one reach the new cwnd: one
        // segment more. Reset (RFC 3465 §2.1, Linux), the next segment is 1 of 5.
        for (keep, expected) in [(true, 6 * MSS), (false, 5 * MSS)] {
            let cfg = HighSpeedConfig {
                keep_count_on_loss: keep,
                ..HighSpeedConfig::default()
            };
            let mut d = Driver::new(
                cfg.build(Growth::ByteCounting { limit_segments: 1 }),
                MSS,
                10,
                10 * MSS,
                SimDuration::from_millis(100),
            );
            for _ in 0..9 {
                d.ack(MSS, None);
            }
            assert_eq!(d.w.cwnd, 10 * MSS);
            assert_eq!(
                d.congestion(CongestionKind::DupAck, 10 * MSS),
                Some(5 * MSS)
            );
            d.recovery_end();
            d.ack(MSS, None);
            assert_eq!(d.w.cwnd, expected, "keep {keep}");
        }
    }

    #[test]
    fn with_decrease_from_flight_b_is_taken_of_the_data_in_flight_not_cwnd() {
        // ns-3.48's TcpHighSpeed::GetSsThresh: (1 − b) of the bytesInFlight it is handed (a
        // pipe of 20 segments under a cwnd of 30; b = 0.5 below Low_Window), where RFC 3649 §7
        // takes it of cwnd.
        for (from_flight, expected) in [(true, 10 * MSS), (false, 15 * MSS)] {
            let cfg = HighSpeedConfig {
                decrease_from_flight: from_flight,
                ..HighSpeedConfig::default()
            };
            let mut d = Driver::new(
                cfg.build(Growth::Rfc5681),
                MSS,
                30,
                30 * MSS,
                SimDuration::from_millis(100),
            );
            assert_eq!(
                d.congestion(CongestionKind::DupAck, 20 * MSS),
                Some(expected),
                "decrease_from_flight {from_flight}"
            );
        }
    }

    #[test]
    fn the_parameters_meet_the_rfc_at_both_ends_of_the_response_function() {
        // Pins the formulas of RFC 3649 §7: b(Low_Window) = 0.5, b(High_Window) = High_Decrease,
        // a(High_Window) = 83000²·1e-7·0.2/1.9 ≈ 72.5, and b falls monotonically in between.
        let cc = hs();
        assert_eq!(cc.params(38.0), (1.0, 0.5));
        let (a, b) = cc.params(83_000.0);
        assert!((b - 0.1).abs() < 1e-9, "b(83000) = {b}");
        assert!((a - 72.5).abs() < 0.1, "a(83000) = {a}");
        let mut last = 0.5;
        for w in [39.0, 100.0, 1000.0, 10_000.0, 83_000.0, 1e6] {
            let (_, b) = cc.params(w);
            assert!(b < last, "b({w}) = {b} not below {last}");
            last = b;
        }
        // Appendix B's table, which rounds a(w) (row upper bounds): a(1058) = 8, a(10661) = 30.
        assert!((cc.params(1058.0).0 - 8.0).abs() < 0.6);
        assert!((cc.params(10_661.0).0 - 30.0).abs() < 1.0);
    }

    #[test]
    fn at_or_below_low_window_the_trace_equals_renos() {
        // Pins the hand-over to standard TCP (RFC 3649 §7, a = 1 and b = 0.5 at w <= 38).
        let mut h = Driver::new(hs(), MSS, 10, 10 * MSS, SimDuration::from_millis(50));
        let mut r = Driver::new(
            RenoConfig {
                growth: Growth::Rfc5681,
            }
            .build(),
            MSS,
            10,
            10 * MSS,
            SimDuration::from_millis(50),
        );
        for _ in 0..25 {
            h.round();
            r.round();
            assert_eq!(h.w, r.w);
        }
        assert!(h.w.cwnd <= 38 * MSS);
        assert_eq!(
            h.loss(CongestionKind::DupAck),
            r.loss(CongestionKind::DupAck)
        );
    }

    #[test]
    fn a_loss_at_a_large_window_keeps_one_minus_b_of_it() {
        // Pins the decrease: b(83000) = 0.1 keeps 90 %, while a timeout falls back to halving.
        let mut d = Driver::new(
            hs(),
            MSS,
            83_000,
            83_000 * MSS,
            SimDuration::from_millis(100),
        );
        let ssthresh = d.loss(CongestionKind::DupAck);
        assert!((ssthresh as f64 / (83_000 * MSS) as f64 - 0.9).abs() < 1e-6);
        let mut d = Driver::new(
            hs(),
            MSS,
            83_000,
            83_000 * MSS,
            SimDuration::from_millis(100),
        );
        assert_eq!(d.loss(CongestionKind::Rto), 83_000 * MSS / 2);
    }

    /// The time-average window (segments) under one loss every 1/p segments, driven for
    /// `cycles` loss cycles after one cycle of warm-up, starting near the expected window.
    fn steady_window(p: f64, cycles: u32) -> f64 {
        let start = (0.12 / libm::pow(p, 0.835)) as u64;
        let mut d = Driver::new(hs(), MSS, start, start * MSS, SimDuration::from_millis(100));
        let period = (1.0 / p).round() as u64;
        let (mut acked, mut rounds, mut losses) = (0u64, 0u64, 0u32);
        let (mut measured_acked, mut measured_rounds) = (0u64, 0u64);
        while losses < cycles + 1 {
            // One RTT: a window of ACKs, one per segment; a loss every `period` segments.
            let n = d.w.cwnd / MSS;
            for _ in 0..n {
                d.ack(MSS, Some(d.rtt));
                acked += 1;
                if acked % period == 0 {
                    d.loss(CongestionKind::DupAck);
                    losses += 1;
                    if losses == 1 {
                        (measured_acked, measured_rounds) = (acked, rounds);
                    }
                }
            }
            rounds += 1;
        }
        (acked - measured_acked) as f64 / (rounds - measured_rounds) as f64
    }

    #[test]
    fn the_steady_window_under_periodic_loss_follows_rfc_3649s_response_function() {
        // Pins a(w) and b(w) together: RFC 3649 §5 gives the average window w = 0.12/p^0.835
        // (its table: 38, 263, 1795, 12279, 83981 for p = 1e-3 ... 1e-7). A deterministic
        // sawtooth with one loss every 1/p segments must average within 10 % of it.
        for (p, cycles) in [(1e-3, 40), (1e-4, 20), (1e-5, 8), (1e-6, 4), (1e-7, 2)] {
            let rfc = 0.12 / libm::pow(p, 0.835);
            let got = steady_window(p, cycles);
            let err = got / rfc - 1.0;
            eprintln!("p = {p:e}: window {got:.1} segments, RFC 3649 {rfc:.1} ({err:+.3})");
            assert!(err.abs() <= 0.10, "p = {p}: {got} vs {rfc}");
        }
    }
}
