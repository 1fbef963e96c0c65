// SPDX-License-Identifier: MIT
//! CUBIC (RFC 9438, 2023; Ha, Rhee, Xu 2008): the window is a cubic function of the time since
//! the last congestion event, independent of the RTT, with its plateau at the window of that
//! event, W_max.
//!
//! ```text
//!   W_cubic(t) = C·(t − K)³ + W_max,   K = ∛((W_max − cwnd_epoch)/C)        (RFC 9438 §4.2)
//!
//!   W_max ─ ─ ─ ─ ─ ─ ─ ─ ─ ─ ─ ─.───────.─ ─ ─ ─ ─ ─ ─ ─
//!                          .-'‾      ‾'-.                   concave (§4.4) below W_max,
//!                       ,-'      K        ‾-.               convex (§4.5) above it
//!   β·W_max ─  ─  ─ ─ ,'                      ‾'-.
//!                    t = 0: the epoch starts at the first ACK in congestion avoidance
//! ```
//!
//! Per ACK in congestion avoidance (§4.2): target = W_cubic(t + RTT) clamped to
//! [cwnd, 1.5·cwnd], and cwnd += (target − cwnd)/cwnd. In parallel (§4.3) CUBIC estimates what
//! Reno would have, W_est (+α_cubic per RTT, α_cubic = 3(1 − β)/(1 + β), then +1 once W_est
//! reaches the window before the reduction): when W_cubic(t) < W_est the flow is in the
//! Reno-friendly region and cwnd follows W_est. On congestion (§4.6) ssthresh = β·cwnd and
//! W_max = cwnd, lowered to cwnd·(1 + β)/2 by fast convergence (§4.7) when the window is below
//! the previous W_max. Slow start is Reno's (§4.10), by an embedded [`Reno`].
//!
//! Time comes only from the `now` passed in; t is measured from the first ACK of the current
//! congestion-avoidance stage, and RTT is the smoothed RTT the endpoint hands over (the latest
//! sample, then the minimum, if there is no smoothed value yet; 0 if none at all).

use super::common::{ack_credit, bytes, floor_ssthresh, segments, Fraction};
use super::cubic_ns3::Ns3Counts;
use super::Growth;
use super::{AckEvent, CcMetrics, CongestionControl, CongestionEvent, CongestionKind, Window};
use super::{Reno, RenoConfig};
use crate::time::SimTime;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CubicConfig {
    /// Aggressiveness, segments/s³ (RFC 9438 §4.1.1 defines C; §5.1: C SHOULD be 0.4).
    pub c: f64,
    /// Multiplicative decrease factor: a congestion event keeps β of cwnd (RFC 9438 §4.1.1
    /// defines β_cubic; §4.6: it SHOULD be 0.7). α_cubic = 3(1 − β)/(1 + β) follows (§4.3).
    pub beta: f64,
    /// RFC 9438 §4.7 fast convergence (SHOULD be on).
    pub fast_convergence: bool,
    /// RFC 9438 §4.3 Reno-friendly region (W_est); off gives the pure cubic curve.
    pub reno_friendly: bool,
    /// How the window is computed.
    pub model: CubicModel,
}

/// How CUBIC's window is computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CubicModel {
    /// RFC 9438's equations in real numbers, per ACK (this file's module docs).
    Rfc9438,
    /// ns-3.48's `TcpCubic`: the curve in whole segments, a count of acknowledged segments per
    /// one-segment increase, an integer TCP-friendly window, W_max kept through a timeout
    /// (`cubic_ns3.rs`).
    Ns3,
}

impl Default for CubicConfig {
    fn default() -> Self {
        CubicConfig {
            c: 0.4,
            beta: 0.7,
            fast_convergence: true,
            reno_friendly: true,
            model: CubicModel::Rfc9438,
        }
    }
}

impl CubicConfig {
    /// `growth` is the flow's ACK-counting rule, shared with Reno (see `common::ack_credit`): it
    /// decides how the cubic increase counts ACKs. W_est counts segments acknowledged whatever
    /// the rule, as RFC 9438 §4.3 writes it.
    pub fn build(self, growth: Growth) -> Cubic {
        Cubic {
            cfg: self,
            growth,
            reno: RenoConfig { growth }.build(),
            // RFC 9438 §4.3: α_cubic = 3·(1 − β_cubic)/(1 + β_cubic) (≈ 0.529 for β = 0.7).
            alpha: 3.0 * (1.0 - self.beta) / (1.0 + self.beta),
            w_max: 0.0,
            k: 0.0,
            epoch: None,
            w_est: 0.0,
            cwnd_prior: 0.0,
            fraction: Fraction::default(),
            ns3: Ns3Counts::default(),
        }
    }
}

#[derive(Clone, Debug)]
pub struct Cubic {
    cfg: CubicConfig,
    growth: Growth,
    /// Slow start (RFC 9438 §4.10).
    reno: Reno,
    alpha: f64,
    /// Segments: the window at the last congestion event, after fast convergence (0: none, or
    /// reset by a timeout: the next stage then starts its curve at its own cwnd, §4.8).
    w_max: f64,
    /// Seconds from the start of the stage to the plateau.
    k: f64,
    /// Start of the current congestion-avoidance stage (None: the next ACK in congestion
    /// avoidance starts one). Cleared by every congestion event.
    epoch: Option<SimTime>,
    /// Segments: the Reno-friendly estimate (§4.3).
    w_est: f64,
    /// Segments: cwnd before the last reduction; W_est grows by α_cubic until it gets there.
    cwnd_prior: f64,
    fraction: Fraction,
    /// `model = "ns3"`: ns-3's counters (the fields above are then unused).
    ns3: Ns3Counts,
}

impl Cubic {
    /// RFC 9438 §4.2, Figure 1: W_cubic(t) = C·(t − K)³ + W_max, segments, t in seconds.
    fn w_cubic(&self, t: f64) -> f64 {
        let d = t - self.k;
        self.cfg.c * d * d * d + self.w_max
    }
}

impl CongestionControl for Cubic {
    fn name(&self) -> &'static str {
        "cubic"
    }

    fn on_ack(&mut self, now: SimTime, ev: &AckEvent, w: &mut Window) {
        if self.cfg.model == CubicModel::Ns3 {
            self.ns3.on_rtt(now, ev.srtt);
            if w.in_slow_start() {
                self.reno.on_ack(now, ev, w);
            } else {
                let c = &self.cfg;
                self.ns3.on_ack(now, ev, w, c.c, c.beta, c.reno_friendly);
            }
            return;
        }
        if w.in_slow_start() {
            // RFC 9438 §4.10: standard slow start.
            self.reno.on_ack(now, ev, w);
            return;
        }
        let mss = ev.mss.max(1);
        let cwnd = segments(w.cwnd, mss);
        let epoch = match self.epoch {
            Some(t) => t,
            None => {
                // RFC 9438 §4.2: a congestion-avoidance stage begins; §4.3: W_est = cwnd_epoch.
                self.epoch = Some(now);
                self.w_est = cwnd;
                if self.w_max <= cwnd {
                    // No plateau above us (first stage, or after a timeout, §4.8): K = 0 and
                    // W_max = cwnd_epoch, so the curve is convex from here (as Linux
                    // `bictcp_update` does).
                    self.w_max = cwnd;
                    self.k = 0.0;
                } else {
                    // RFC 9438 §4.2, Figure 2: K = ∛((W_max − cwnd_epoch)/C).
                    self.k = libm::cbrt((self.w_max - cwnd) / self.cfg.c);
                }
                now
            }
        };
        let t = now.saturating_since(epoch).as_secs_f64();
        let rtt = ev
            .srtt
            .or(ev.rtt_sample)
            .or(ev.min_rtt)
            .map_or(0.0, |d| d.as_secs_f64());
        let credit = ack_credit(self.growth, ev);
        if self.cfg.reno_friendly {
            // RFC 9438 §4.3: W_est += α_cubic·segments_acked/cwnd, α_cubic becoming 1 once
            // W_est reaches cwnd_prior. Segments, not ACKs: with delayed ACKs (one ACK per two
            // segments) counting ACKs would grow W_est at half Reno's rate per RTT.
            let alpha = if self.w_est >= self.cwnd_prior {
                1.0
            } else {
                self.alpha
            };
            let segments_acked = ev.bytes_acked as f64 / mss as f64;
            self.w_est += alpha * segments_acked / cwnd;
            // RFC 9438 §4.3: if W_cubic(t) < W_est, the Reno-friendly region: cwnd = W_est.
            // Only ever upwards (Linux `bictcp_update` likewise only speeds growth up).
            let est = bytes(self.w_est, mss);
            if self.w_cubic(t) < self.w_est && est > w.cwnd {
                w.cwnd = est;
                return;
            }
        }
        // RFC 9438 §4.2: target = W_cubic(t + RTT), within [cwnd, 1.5·cwnd] (§4.4, §4.5 use
        // the same rule in the concave and convex regions).
        let target = self.w_cubic(t + rtt).min(1.5 * cwnd).max(cwnd);
        // RFC 9438 §4.2: cwnd += (target − cwnd)/cwnd per ACK.
        let inc = (target - cwnd) / cwnd * mss as f64 * credit;
        w.cwnd = w.cwnd.saturating_add(self.fraction.take(inc));
    }

    fn on_congestion(&mut self, _now: SimTime, ev: &CongestionEvent) -> u64 {
        if self.cfg.model == CubicModel::Ns3 {
            let c = &self.cfg;
            return self.ns3.on_congestion(ev, c.beta, c.fast_convergence);
        }
        self.fraction.clear();
        let cwnd_bytes = ev.window.cwnd;
        let cwnd = segments(cwnd_bytes, ev.mss);
        // RFC 9438 §4.7: fast convergence; otherwise §4.6: W_max = cwnd.
        self.w_max = if self.cfg.fast_convergence && cwnd < self.w_max {
            cwnd * (1.0 + self.cfg.beta) / 2.0
        } else {
            cwnd
        };
        // RFC 9438 §4.6: cwnd_prior = cwnd, for the Reno-friendly region.
        self.cwnd_prior = cwnd;
        self.epoch = None;
        if ev.kind == CongestionKind::Rto {
            // RFC 9438 §4.8: after a timeout the first stage uses K = 0 and W_max = the cwnd
            // at its start.
            self.w_max = 0.0;
        }
        // RFC 9438 §4.6: ssthresh = β_cubic·cwnd (the RFC writes flight_size and allows cwnd,
        // which Linux uses), at least 2 segments.
        let ssthresh = (cwnd_bytes as f64 * self.cfg.beta) as u64;
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

    const MSS: u64 = 1000;

    fn driver(cfg: CubicConfig, segments: u64, rtt_ms: u64) -> Driver<Cubic> {
        Driver::new(
            cfg.build(Growth::Rfc5681),
            MSS,
            segments,
            segments * MSS,
            SimDuration::from_millis(rtt_ms),
        )
    }

    #[test]
    fn after_a_loss_the_window_follows_the_cubic_curve_through_both_regions() {
        // Pins RFC 9438 §4.2: a loss at W_max = 1 000 (RTT 100 ms) leaves 700 and
        // K = ∛(300/0.4) = 9.09 s; the window then tracks C(t − K)³ + W_max below W_max
        // (concave) and above it (convex). The Reno-friendly estimate stays far below
        // (700 + 0.53 per RTT), so this is the cubic region throughout.
        let mut d = driver(CubicConfig::default(), 1000, 100);
        assert_eq!(d.loss(CongestionKind::DupAck), 700 * MSS);
        let start = d.now;
        let (c, w_max) = (0.4, 1000.0);
        let k = libm::cbrt(300.0 / c);
        let mut worst: f64 = 0.0;
        let mut seen_concave = false;
        let mut seen_convex = false;
        for _ in 0..150 {
            d.round();
            let t = d.now.saturating_since(start).as_secs_f64();
            let dt = t - k;
            let model = c * dt * dt * dt + w_max;
            let err = d.segments() / model - 1.0;
            worst = worst.max(err.abs());
            assert!(
                err.abs() < 0.01,
                "t = {t:.2} s: {} vs {model:.1}",
                d.segments()
            );
            seen_concave |= t < k - 1.0;
            seen_convex |= t > k + 1.0;
        }
        eprintln!("CUBIC: worst relative error {worst:.5} over 15 s (K = {k:.3} s)");
        assert!(seen_concave && seen_convex);
        assert!((d.cc.k - k).abs() < 1e-9);
    }

    #[test]
    fn k_matches_the_rfc_for_a_loss_at_one_hundred_segments() {
        // Pins Figure 2 with the reference values: W_max = 100 → K = ∛75 = 4.217 s, and
        // W_cubic(1 s) = 86.68, W_cubic(6 s) = 102.27.
        let mut d = driver(CubicConfig::default(), 100, 100);
        d.loss(CongestionKind::DupAck);
        d.ack(MSS, Some(d.rtt));
        assert!((d.cc.k - 4.2172).abs() < 1e-3, "K = {}", d.cc.k);
        assert!((d.cc.w_cubic(1.0) - 86.68).abs() < 0.01);
        assert!((d.cc.w_cubic(6.0) - 102.27).abs() < 0.01);
    }

    #[test]
    fn fast_convergence_lowers_w_max_after_a_loss_below_it() {
        // Pins RFC 9438 §4.7: a loss at 800 below W_max 1 000 sets W_max = 800·1.7/2 = 680;
        // without fast convergence W_max = 800.
        for (fc, expected) in [(true, 680.0), (false, 800.0)] {
            let cfg = CubicConfig {
                fast_convergence: fc,
                ..CubicConfig::default()
            };
            let mut d = driver(cfg, 1000, 100);
            d.loss(CongestionKind::DupAck);
            d.w.cwnd = 800 * MSS;
            assert_eq!(d.loss(CongestionKind::DupAck), 560 * MSS);
            assert!((d.cc.w_max - expected).abs() < 1e-9, "{fc}: {}", d.cc.w_max);
        }
    }

    #[test]
    fn at_small_windows_and_short_rtts_the_reno_friendly_region_dominates() {
        // Pins RFC 9438 §4.3: W_max = 20 and RTT 10 ms give K = 2.47 s, so the cubic curve
        // barely moves in 1 s (18.7 segments at t = 1 s), while Reno's estimate grows
        // α_cubic = 0.53 per RTT up to 20 and 1 per RTT after: 14 + 6 + 88.7 ≈ 108.7.
        let mut d = driver(CubicConfig::default(), 20, 10);
        d.loss(CongestionKind::DupAck);
        let mut pure = driver(
            CubicConfig {
                reno_friendly: false,
                ..CubicConfig::default()
            },
            20,
            10,
        );
        pure.loss(CongestionKind::DupAck);
        for _ in 0..100 {
            d.round();
            pure.round();
        }
        let reno_model = 20.0 + (100.0 - 6.0 / d.cc.alpha);
        eprintln!(
            "Reno-friendly: {:.1} segments (model {reno_model:.1}); pure cubic {:.1}",
            d.segments(),
            pure.segments()
        );
        assert!((d.segments() / reno_model - 1.0).abs() < 0.05);
        assert!(pure.segments() < 21.0);
    }

    #[test]
    fn an_ack_of_two_segments_grows_w_est_as_much_as_two_acks_of_one() {
        // Pins RFC 9438 §4.3: W_est += α_cubic·segments_acked/cwnd. The bug it pins: W_est
        // grew by α_cubic/cwnd per ACK whatever the ACK covered, so a delayed-ACK receiver
        // halved the Reno-friendly estimate's growth. The stage starts at cwnd 700 after a
        // loss at 1 000 (the cubic region: cwnd itself moves by well under a byte per ACK).
        let started = || {
            let mut d = driver(CubicConfig::default(), 1000, 100);
            d.loss(CongestionKind::DupAck);
            d.ack(MSS, Some(d.rtt));
            d
        };
        let (mut one, mut two) = (started(), started());
        let w_est = one.cc.w_est;
        assert_eq!(w_est, two.cc.w_est);
        one.ack(2 * MSS, Some(one.rtt));
        two.ack(MSS, Some(two.rtt));
        two.ack(MSS, Some(two.rtt));
        let (by_one, by_two) = (one.cc.w_est - w_est, two.cc.w_est - w_est);
        // 2·α_cubic/700 = 2·0.5294/700 = 0.0015126 segments either way.
        assert!(
            (by_two - 2.0 * 0.529_411_8 / 700.0).abs() < 1e-6,
            "{by_two}"
        );
        assert!((by_one / by_two - 1.0).abs() < 1e-3, "{by_one} vs {by_two}");
    }

    #[test]
    fn with_delayed_acks_w_est_still_grows_alpha_cubic_per_rtt() {
        // RFC 9438 §4.3 with one ACK per two segments: the Reno-friendly region after a loss at
        // 20 segments (cwnd 14, RTT 10 ms, so the cubic curve barely moves) grows by
        // α_cubic = 0.529 per RTT, as with an ACK per segment: 14 + 10·0.529 = 19.3 segments
        // after 10 RTTs. Counting ACKs gave half: 14 + 2.6 = 16.6.
        let mut d = driver(CubicConfig::default(), 20, 10);
        d.loss(CongestionKind::DupAck);
        for _ in 0..10 {
            // The round's window, ACKed two segments at a time (an odd last one alone, as the
            // delayed-ACK timer would), spread over the RTT.
            let mut left = (d.snd_max - d.snd_una) / MSS;
            let (start, acks) = (d.now, left.div_ceil(2));
            for i in 1..=acks {
                d.now = start + SimDuration::from_nanos(d.rtt.as_nanos() * i / acks);
                let n = left.min(2);
                d.ack(n * MSS, Some(d.rtt));
                left -= n;
            }
        }
        let expected = 14.0 + 10.0 * d.cc.alpha;
        assert!(
            (d.cc.w_est - expected).abs() < 0.3,
            "W_est {:.2}, expected {expected:.2}",
            d.cc.w_est
        );
        assert!(
            (d.segments() - d.cc.w_est).abs() < 0.01,
            "cwnd follows W_est"
        );
    }

    #[test]
    fn after_a_timeout_the_curve_restarts_convex_from_the_window_it_reaches() {
        // Pins RFC 9438 §4.8: K = 0 and W_max = cwnd at the start of the next stage.
        let mut d = driver(CubicConfig::default(), 1000, 100);
        assert_eq!(d.loss(CongestionKind::Rto), 700 * MSS);
        assert_eq!(d.w.cwnd, MSS);
        d.w.cwnd = 700 * MSS;
        d.ack(MSS, Some(d.rtt));
        assert_eq!((d.cc.k, d.cc.w_max), (0.0, 700.0));
    }
}
