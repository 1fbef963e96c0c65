// SPDX-License-Identifier: MIT
//! BIC-TCP (L. Xu, K. Harfoush, I. Rhee, "Binary Increase Congestion Control for Fast, Long
//! Distance Networks", INFOCOM 2004; "XHR04"): window growth as a search for the window at which
//! the last loss happened, W_max.
//!
//! ```text
//!   once per RTT (XHR04 §III):              binary search        max probing
//!     if cwnd < W_max: inc = (W_max − cwnd)/2         W_max ─ ─ ─ ─ ─ ─ ─ ─.─'
//!     else:            inc = cwnd − W_max                       .-'‾‾‾  ,'
//!     inc = clamp(inc, S_min, S_max)                         .-'       ,'
//!     spread over the RTT's ACKs: cwnd += inc/cwnd        ,'  (additive, S_max per RTT, far
//!   on loss:                                             /    from W_max)
//!     W_max = cwnd·(2 − β)/2 if cwnd < W_max (fast convergence), else cwnd
//!     cwnd  = cwnd·(1 − β)
//! ```
//!
//! Far below W_max the increase is additive (S_max per RTT); near it the distance halves every
//! RTT (binary search), so the window lingers just below the last loss point; past it, "max
//! probing" mirrors the search (S_min, 2·S_min, 4·S_min, … up to S_max). Before the first loss
//! W_max is unknown (0 here), so BIC probes additively at S_max per RTT. At or below
//! `low_window`, and in slow start, the flow is Reno (an embedded [`Reno`] gets the ACK).
//!
//! The increment is computed once per round (one RTT, from sequence numbers: `common::Rounds`)
//! and spread evenly over the round's ACKs, so a round adds `inc` whatever the ACK pattern.
//! Linux `tcp_bic.c` recomputes a per-ACK count instead, with a search divisor of 4 rather than
//! 2 and a `smooth_part` instead of S_min; [`BicConfig::linux`] approximates its constants.

use super::common::{ack_credit, floor_ssthresh, segments, Fraction, Rounds};
use super::Growth;
use super::{AckEvent, CcMetrics, CongestionControl, CongestionEvent, CongestionKind, Window};
use super::{Reno, RenoConfig};
use crate::time::SimTime;

/// XHR04's constants. The defaults are the values usually quoted for the paper (not checked
/// against its text here): S_max = 32, S_min = 0.01, β = 0.125; `low_window` 14 is
/// Linux's `low_window` (`tcp_bic.c`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BicConfig {
    /// Largest increment per RTT, segments (XHR04: S_max = 32).
    pub s_max: f64,
    /// Smallest increment per RTT, segments (XHR04: S_min = 0.01).
    pub s_min: f64,
    /// Multiplicative decrease: a loss keeps (1 − β) of cwnd (XHR04: β = 0.125).
    pub beta: f64,
    /// Segments; at or below it the flow is Reno (Linux `tcp_bic.c`: 14).
    pub low_window: f64,
    /// XHR04 fast convergence: a loss below W_max lowers W_max further, to cwnd·(2 − β)/2.
    pub fast_convergence: bool,
    /// The search step is the distance to W_max divided by this (XHR04: 2, a binary search;
    /// Linux: `BICTCP_B` = 4).
    pub search_divisor: f64,
    /// After a timeout erases W_max, take the window at the start of the next
    /// congestion-avoidance stage as the plateau to probe from (true), as RFC 9438 §4.8 does for
    /// CUBIC, BIC's successor; or probe from nothing (false), as Linux `bictcp_state` does
    /// (W_max = 0: additive growth at S_max per RTT at once). XHR04 leaves the case open.
    pub plateau_after_timeout: bool,
    /// How congestion avoidance grows at or below `low_window`.
    pub low_window_growth: LowWindowGrowth,
}

/// Congestion avoidance at or below `low_window`, where BIC behaves as standard TCP.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LowWindowGrowth {
    /// The flow's Reno growth (`growth`): one segment per window of acknowledged data, the
    /// excess carried to the next increase (RFC 3465 §2.1; Linux `tcp_cong_avoid_ai` carries it
    /// likewise).
    Reno,
    /// ns-3.48's `TcpBic`: `Update` returns cnt = cwnd in segments below `LowWnd`, and
    /// `IncreaseWindow` adds one segment once its count of acknowledged segments exceeds cnt
    /// (`m_cWndCnt > cnt`), then sets the count to zero: the segments counted past cnt are
    /// dropped, so with delayed ACKs an increase takes cwnd + 1 or cwnd + 2 segments.
    CountReset,
}

impl Default for BicConfig {
    fn default() -> Self {
        BicConfig {
            s_max: 32.0,
            s_min: 0.01,
            beta: 0.125,
            low_window: 14.0,
            fast_convergence: true,
            search_divisor: 2.0,
            plateau_after_timeout: true,
            low_window_growth: LowWindowGrowth::Reno,
        }
    }
}

impl BicConfig {
    /// Linux `tcp_bic.c`'s constants in this model: `max_increment` 16, `BICTCP_B` 4,
    /// `beta` 819/1024 (a loss keeps 80 %), `low_window` 14, and S_min = B/`smooth_part` =
    /// 4/20 (Linux's increment near W_max).
    pub fn linux() -> Self {
        BicConfig {
            s_max: 16.0,
            s_min: 4.0 / 20.0,
            beta: 1.0 - 819.0 / 1024.0,
            low_window: 14.0,
            fast_convergence: true,
            search_divisor: 4.0,
            plateau_after_timeout: false,
            low_window_growth: LowWindowGrowth::Reno,
        }
    }

    /// `growth` is the flow's ACK-counting rule, shared with Reno (see `common::ack_credit`).
    pub fn build(self, growth: Growth) -> Bic {
        Bic {
            cfg: self,
            growth,
            reno: RenoConfig { growth }.build(),
            w_max: 0.0,
            inc: 0.0,
            round_cwnd: 1.0,
            rounds: Rounds::default(),
            fraction: Fraction::default(),
            plateau_from_next_stage: false,
            low_window_count: 0,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Bic {
    cfg: BicConfig,
    growth: Growth,
    /// Slow start, and congestion avoidance at or below `low_window`.
    reno: Reno,
    /// Segments; the window of the last loss as fast convergence left it (0: none yet).
    w_max: f64,
    /// This round's increment, segments.
    inc: f64,
    /// cwnd at the start of this round, segments: the round's ACKs share `inc` by it.
    round_cwnd: f64,
    rounds: Rounds,
    fraction: Fraction,
    /// A timeout erased W_max: the next congestion-avoidance stage takes its starting cwnd as
    /// the plateau to probe from ([`BicConfig::plateau_after_timeout`]).
    plateau_from_next_stage: bool,
    /// `LowWindowGrowth::CountReset`: bytes acknowledged since the last increase (ns-3's
    /// `m_cWndCnt`, which a loss does not clear).
    low_window_count: u64,
}

impl Bic {
    /// XHR04 §III: the increment for the next RTT at a window of `cwnd` segments.
    fn increment(&self, cwnd: f64) -> f64 {
        let inc = if cwnd < self.w_max {
            // Binary search increase: halfway to W_max.
            (self.w_max - cwnd) / self.cfg.search_divisor
        } else {
            // Max probing: the mirror image of the search.
            cwnd - self.w_max
        };
        // Additive increase above S_max; at least S_min.
        inc.max(self.cfg.s_min).min(self.cfg.s_max)
    }
}

impl CongestionControl for Bic {
    fn name(&self) -> &'static str {
        "bic"
    }

    fn on_ack(&mut self, now: SimTime, ev: &AckEvent, w: &mut Window) {
        let mss = ev.mss.max(1);
        let cwnd = segments(w.cwnd, mss);
        if !w.in_slow_start()
            && cwnd <= self.cfg.low_window
            && self.cfg.low_window_growth == LowWindowGrowth::CountReset
        {
            // ns-3.48 `TcpBic::IncreaseWindow` with cnt = cwnd in whole segments.
            self.low_window_count += ev.bytes_acked;
            if self.low_window_count > (w.cwnd / mss) * mss {
                w.cwnd = w.cwnd.saturating_add(mss);
                self.low_window_count = 0;
            }
            self.rounds.reset();
            return;
        }
        if w.in_slow_start() || cwnd <= self.cfg.low_window {
            // XHR04 (and Linux `low_window`): standard TCP for small windows.
            self.reno.on_ack(now, ev, w);
            self.rounds.reset();
            return;
        }
        if self.rounds.starts_round(ev) {
            if self.plateau_from_next_stage {
                self.plateau_from_next_stage = false;
                self.w_max = cwnd;
            }
            self.round_cwnd = cwnd;
            self.inc = self.increment(cwnd);
        }
        // XHR04: cwnd += inc/cwnd per ACK, with the round's starting cwnd so the round adds inc.
        let add = self.inc / self.round_cwnd * mss as f64 * ack_credit(self.growth, ev);
        w.cwnd = w.cwnd.saturating_add(self.fraction.take(add));
    }

    fn on_congestion(&mut self, now: SimTime, ev: &CongestionEvent) -> u64 {
        self.fraction.clear();
        self.rounds.reset();
        let reno = self.reno.on_congestion(now, ev);
        let cwnd_bytes = ev.window.cwnd;
        let cwnd = segments(cwnd_bytes, ev.mss);
        self.w_max = if cwnd < self.w_max && self.cfg.fast_convergence {
            // XHR04 fast convergence: release bandwidth to a newcomer sooner.
            cwnd * (2.0 - self.cfg.beta) / 2.0
        } else {
            cwnd
        };
        if ev.kind == CongestionKind::Rto {
            // After a timeout the search restarts from nothing (Linux `bictcp_state` resets
            // `last_max_cwnd` on entering loss state).
            self.w_max = 0.0;
            self.plateau_from_next_stage = self.cfg.plateau_after_timeout;
        }
        if cwnd <= self.cfg.low_window {
            // Reno's decrease for small windows (RFC 5681 eq. (4)).
            return reno;
        }
        // XHR04: cwnd ← cwnd·(1 − β).
        let ssthresh = (cwnd_bytes as f64 * (1.0 - self.cfg.beta)) as u64;
        floor_ssthresh(ssthresh.min(cwnd_bytes), ev.mss)
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

    const MSS: u64 = 1460;

    fn driver(cfg: BicConfig, segments: u64) -> Driver<Bic> {
        Driver::new(
            cfg.build(Growth::Rfc5681),
            MSS,
            segments,
            segments * MSS,
            SimDuration::from_millis(100),
        )
    }

    /// The window after each of `trace.len()` RTTs, against a trace computed by hand.
    fn follows(d: &mut Driver<Bic>, trace: &[f64]) {
        let mut before = d.segments();
        for (rtt, &expected) in trace.iter().enumerate() {
            d.round();
            let got = d.segments();
            eprintln!("RTT {}: {got:.4} (by hand {expected})", rtt + 1);
            // A BIC round is found from sequence numbers (common::Rounds) and begins one ACK
            // after the driver's RTT does, so it starts from a window a fraction of a segment
            // larger: 0.1 segment plus 1 % of this RTT's step.
            let tolerance = 0.1 + 0.01 * (expected - before).abs();
            assert!(
                (got - expected).abs() < tolerance,
                "RTT {}: {got:.3} segments, by hand {expected}",
                rtt + 1
            );
            before = expected;
        }
    }

    /// Below `low_window` with byte counting (`abc_limit` 1, the ns-3 driver's growth): the
    /// window after ACKs of `acks[i]` segments each, from 4 segments in congestion avoidance.
    fn low_window_cwnd(growth: LowWindowGrowth, acks: &[u64]) -> f64 {
        let cfg = BicConfig {
            low_window_growth: growth,
            ..BicConfig::default()
        };
        let mut d = Driver::new(
            cfg.build(Growth::ByteCounting { limit_segments: 1 }),
            MSS,
            4,
            2 * MSS,
            SimDuration::from_millis(100),
        );
        for &segments in acks {
            d.ack(segments * MSS, None);
        }
        d.segments()
    }

    #[test]
    fn below_low_window_ns3s_count_drops_what_it_counted_past_cwnd() {
        // Four ACKs of 4 segments from cwnd 4. Byte counting carries the excess, one increase
        // per ACK at most: 4 >= 4 (cwnd 5, 0 left), 4, 8 >= 5 (6, 3 left), 7 >= 6 (7). ns-3's
        // count starts again from zero: 4, 8 > 4 (5), 4, 8 > 5 (6).
        assert_eq!(low_window_cwnd(LowWindowGrowth::Reno, &[4, 4, 4, 4]), 7.0);
        assert_eq!(
            low_window_cwnd(LowWindowGrowth::CountReset, &[4, 4, 4, 4]),
            6.0
        );
        // The ACK that ends recovery credits a whole window (recovery_exit_credit = "acked"):
        // 8 segments at cwnd 4 add one segment, and the next ACK nothing more.
        assert_eq!(low_window_cwnd(LowWindowGrowth::Reno, &[8, 1]), 6.0);
        assert_eq!(low_window_cwnd(LowWindowGrowth::CountReset, &[8, 1]), 5.0);
        // ns-3 counts past cnt, not up to it: cwnd 4 grows on the fifth segment.
        assert_eq!(
            low_window_cwnd(LowWindowGrowth::CountReset, &[1, 1, 1, 1]),
            4.0
        );
        assert_eq!(
            low_window_cwnd(LowWindowGrowth::CountReset, &[1, 1, 1, 1, 1]),
            5.0
        );
    }

    #[test]
    fn the_search_climbs_to_w_max_as_the_papers_binary_search_does() {
        // XHR04 §III with S_max = 32, S_min = 0.01, beta = 0.125, computed by hand:
        // a loss at 1 000 sets W_max = 1 000 and cwnd = 875. Per RTT,
        // inc = (W_max - cwnd)/2 clamped to [S_min, S_max]:
        //   875     (125/2 = 62.5 -> 32, additive)  907
        //   907     (93/2  = 46.5 -> 32, additive)  939
        //   939     61/2    = 30.5                   969.5
        //   969.5   30.5/2  = 15.25                  984.75
        //   984.75  15.25/2 = 7.625                  992.375
        //   992.375 7.625/2 = 3.8125                 996.1875
        //   996.1875          + 1.90625              998.09375
        //   998.09375         + 0.953125             999.046875
        // The distance keeps halving (0.48, 0.24, 0.12, 0.06, 0.03, 0.015 after RTT 14) until
        // half of it is below S_min: RTT 15 adds 0.01 (0.005 left), RTT 16 passes W_max.
        let mut d = driver(BicConfig::default(), 1000);
        assert_eq!(d.loss(CongestionKind::DupAck), 875 * MSS);
        follows(
            &mut d,
            &[
                907.0, 939.0, 969.5, 984.75, 992.375, 996.1875, 998.09375, 999.046875,
            ],
        );
        let mut rtt = 8;
        while d.segments() <= 1000.0 {
            d.round();
            rtt += 1;
            assert!(
                rtt <= 17,
                "still below W_max after {rtt} RTTs: {}",
                d.segments()
            );
        }
        assert!(rtt >= 15, "passed W_max after {rtt} RTTs: {}", d.segments());
    }

    #[test]
    fn past_w_max_it_probes_with_doubling_steps_then_additively() {
        // XHR04 §III, max probing, by hand: W_max = 1 000 and the stage starts at 1 001, so
        // inc = cwnd - W_max clamped to [S_min, S_max] = [0.01, 32]:
        //   1001 +1 -> 1002 +2 -> 1004 +4 -> 1008 +8 -> 1016 +16 -> 1032 +32 -> 1064,
        //   then 64 is clamped to S_max: +32 -> 1096 +32 -> 1128.
        let mut d = driver(BicConfig::default(), 1000);
        d.loss(CongestionKind::DupAck);
        d.w.cwnd = 1001 * MSS;
        d.snd_max = d.snd_una + d.w.cwnd;
        follows(
            &mut d,
            &[
                1002.0, 1004.0, 1008.0, 1016.0, 1032.0, 1064.0, 1096.0, 1128.0,
            ],
        );
    }

    #[test]
    fn fast_convergence_lowers_w_max_after_a_loss_below_it() {
        // Pins XHR04's fast convergence: a loss at 900 below W_max 1 000 sets W_max to
        // 900·(2 − 0.125)/2 = 843.75, so the search after it aims below the last loss point.
        let mut d = driver(BicConfig::default(), 1000);
        d.loss(CongestionKind::DupAck);
        d.w.cwnd = 900 * MSS;
        d.loss(CongestionKind::DupAck);
        assert!((d.cc.w_max - 843.75).abs() < 1e-9, "{}", d.cc.w_max);
        let mut plain = driver(
            BicConfig {
                fast_convergence: false,
                ..BicConfig::default()
            },
            1000,
        );
        plain.loss(CongestionKind::DupAck);
        plain.w.cwnd = 900 * MSS;
        plain.loss(CongestionKind::DupAck);
        assert_eq!(plain.cc.w_max, 900.0);
    }

    #[test]
    fn before_any_loss_it_probes_additively_and_small_windows_are_reno() {
        // Pins W_max = 0 before the first loss (S_max per RTT) and the low_window hand-over.
        let mut d = driver(BicConfig::default(), 100);
        d.round();
        d.round();
        assert!((d.segments() - 164.0).abs() < 0.5, "{}", d.segments());
        let mut small = driver(BicConfig::default(), 10);
        small.round();
        assert!((10 * MSS + MSS * 9 / 10..=11 * MSS).contains(&small.w.cwnd));
        let mut small = driver(BicConfig::default(), 10);
        assert_eq!(small.loss(CongestionKind::DupAck), 5 * MSS);
    }

    #[test]
    fn the_linux_constants_keep_eighty_percent_on_a_loss() {
        // Pins BicConfig::linux(): loss at 1 000 → ssthresh 799.8 segments (Linux `tcp_bic.c`
        // works in whole segments: 1000·819/1024 = 799).
        let mut d = driver(BicConfig::linux(), 1000);
        let s = d.loss(CongestionKind::DupAck);
        assert_eq!(s, (1000.0 * MSS as f64 * 819.0 / 1024.0) as u64);
    }

    #[test]
    fn after_a_timeout_bic_probes_from_the_next_stages_window_unless_told_to_forget_it() {
        // A timeout at 100 segments: slow start back to ssthresh (87.5), then congestion
        // avoidance. With the plateau rule, max probing starts next to the new W_max, by S_min;
        // without it (Linux), W_max = 0 and BIC adds S_max = 32 segments in the first rounds.
        let grow = |plateau_after_timeout: bool| {
            let mut d = driver(
                BicConfig {
                    plateau_after_timeout,
                    ..BicConfig::default()
                },
                100,
            );
            d.loss(CongestionKind::Rto);
            while d.segments() < 87.0 {
                d.round();
            }
            d.round();
            let before = d.segments();
            d.round();
            d.round();
            d.segments() - before
        };
        let plateau = grow(true);
        let forget = grow(false);
        assert!(plateau < 1.0, "plateau: +{plateau:.2} segments in two RTTs");
        assert!(
            forget > 60.0,
            "W_max = 0: +{forget:.2} segments in two RTTs"
        );
    }
}
