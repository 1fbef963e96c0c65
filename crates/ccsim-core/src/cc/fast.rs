// SPDX-License-Identifier: MIT
//! FAST TCP (C. Jin, D. Wei, S. Low, "FAST TCP: motivation, architecture, algorithms,
//! performance", INFOCOM 2004; "JWL04"): a delay-based window with an equilibrium of α packets
//! of its own queued in the path, reached by a periodic, damped update.
//!
//! ```text
//!   every update period (about one RTT):
//!     w ← min{ 2w, (1 − γ)·w + γ·(baseRTT/avgRTT · w + α) }          (JWL04, eq. (1))
//!   equilibrium: w·(1 − baseRTT/avgRTT) = α, i.e. α packets queued per flow
//!   avgRTT ← (1 − η)·avgRTT + η·RTT per sample, η = min(3/w, 1/4)    (JWL04, estimation)
//! ```
//!
//! baseRTT is the smallest RTT seen (`AckEvent::min_rtt`). An increase is paced over the next
//! round's ACKs rather than sent as a burst (as the CUBIN ns-2 module's `fast_pace` does); a
//! decrease applies at once. With RTT held fixed the distance to the fixed point shrinks by the
//! factor 1 − γ·(1 − baseRTT/avgRTT) per update.
//!
//! Start-up and losses: the update is the window control once the flow is out of slow start.
//! Slow start is Reno's and ends when the flow's estimated backlog w·(1 − baseRTT/avgRTT)
//! reaches α (this model's choice: the equilibrium the update aims for; the CUBIN module grows
//! by one per ACK while the queueing delay is below `mi_threshold_` instead). Losses are
//! handled Reno-style (RFC 5681 eq. (4)), as in the CUBIN module. Until an RTT sample exists
//! the flow is plain Reno.

use super::common::{bytes, segments, Fraction, Rounds};
use super::Growth;
use super::{AckEvent, CcMetrics, CongestionControl, CongestionEvent, Window};
use super::{Reno, RenoConfig};
use crate::time::SimTime;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FastConfig {
    /// Packets the flow aims to keep queued in its path (JWL04's α; 200 is the value usually
    /// quoted for its experiments, not checked against the paper's text here).
    pub alpha: f64,
    /// Damping of the update, in (0, 1] (JWL04: γ = 0.5; CUBIN ns-2 `gamma_` 0.5).
    pub gamma: f64,
    /// Rounds (RTTs) between updates (JWL04: about one RTT; the CUBIN module's default became
    /// every other RTT, "as in Linux").
    pub update_interval: u32,
    /// η = min(eta_scale/w, eta_max) is the weight of a new RTT sample in avgRTT (JWL04: 3).
    pub eta_scale: f64,
    /// (JWL04: 1/4.)
    pub eta_max: f64,
}

impl Default for FastConfig {
    fn default() -> Self {
        FastConfig {
            alpha: 200.0,
            gamma: 0.5,
            update_interval: 1,
            eta_scale: 3.0,
            eta_max: 0.25,
        }
    }
}

impl FastConfig {
    /// `growth` is the flow's ACK-counting rule for the Reno parts (slow start, no samples).
    pub fn build(self, growth: Growth) -> Fast {
        Fast {
            cfg: self,
            reno: RenoConfig { growth }.build(),
            rounds: Rounds::default(),
            rounds_since_update: 0,
            avg_rtt: None,
            pace_target: 0,
            pace_per_byte: 0.0,
            fraction: Fraction::default(),
        }
    }
}

#[derive(Clone, Debug)]
pub struct Fast {
    cfg: FastConfig,
    /// Slow start, and the window before any RTT sample exists.
    reno: Reno,
    rounds: Rounds,
    rounds_since_update: u32,
    /// Seconds; the EWMA of RTT samples (None: no sample yet).
    avg_rtt: Option<f64>,
    /// Bytes; the window the last update asked for, reached by pacing (0: none pending).
    pace_target: u64,
    /// Bytes of window per byte acknowledged while pacing towards `pace_target`.
    pace_per_byte: f64,
    fraction: Fraction,
}

impl Fast {
    /// JWL04 eq. (1), in segments: the window the next period aims for.
    fn target(&self, w: f64, ratio: f64) -> f64 {
        let g = self.cfg.gamma;
        let damped = (1.0 - g) * w + g * (ratio * w + self.cfg.alpha);
        // At least 2 segments, as the CUBIN module's `fast_calc_cwnd`.
        damped.min(2.0 * w).max(2.0)
    }
}

impl CongestionControl for Fast {
    fn name(&self) -> &'static str {
        "fast"
    }

    fn on_ack(&mut self, now: SimTime, ev: &AckEvent, w: &mut Window) {
        let mss = ev.mss.max(1);
        let cwnd = segments(w.cwnd, mss);
        if let Some(r) = ev.rtt_sample {
            // JWL04 estimation: avgRTT ← (1 − η)·avgRTT + η·RTT, η = min(3/w, 1/4).
            let r = r.as_secs_f64();
            let eta = (self.cfg.eta_scale / cwnd).min(self.cfg.eta_max);
            self.avg_rtt = Some(self.avg_rtt.map_or(r, |a| (1.0 - eta) * a + eta * r));
        }
        let (Some(base), Some(avg)) = (ev.min_rtt, self.avg_rtt) else {
            self.reno.on_ack(now, ev, w);
            return;
        };
        let ratio = if avg > 0.0 {
            (base.as_secs_f64() / avg).min(1.0)
        } else {
            1.0
        };
        let new_round = self.rounds.starts_round(ev);
        if w.in_slow_start() {
            self.reno.on_ack(now, ev, w);
            if new_round && cwnd * (1.0 - ratio) >= self.cfg.alpha {
                // Backlog at α: the equilibrium is near; the update takes over. ssthresh is
                // only ever lowered (to cwnd, at least 2 segments).
                w.ssthresh = w.ssthresh.min(w.cwnd.max(2 * mss));
            }
            return;
        }
        if new_round {
            self.rounds_since_update += 1;
            if self.rounds_since_update >= self.cfg.update_interval {
                self.rounds_since_update = 0;
                let target = bytes(self.target(cwnd, ratio), mss);
                if target <= w.cwnd {
                    // A decrease applies at once, and ssthresh follows it down so that the
                    // smaller window is not taken for slow start.
                    w.cwnd = target;
                    w.ssthresh = w.ssthresh.min(w.cwnd);
                    self.pace_target = 0;
                } else {
                    // An increase is spread over the next round's ACKs (CUBIN `fast_pace`).
                    self.pace_target = target;
                    self.pace_per_byte = (target - w.cwnd) as f64 / w.cwnd.max(1) as f64;
                }
            }
        }
        if w.cwnd < self.pace_target {
            let add = self
                .fraction
                .take(self.pace_per_byte * ev.bytes_acked as f64);
            w.cwnd = w.cwnd.saturating_add(add).min(self.pace_target);
        }
    }

    fn on_congestion(&mut self, now: SimTime, ev: &CongestionEvent) -> u64 {
        self.rounds.reset();
        self.rounds_since_update = 0;
        self.pace_target = 0;
        self.fraction.clear();
        // Reno-style loss response (CUBIN ns-2 `tcp-fast.cc`: halve on a fast retransmit).
        self.reno.on_congestion(now, ev)
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

    fn fast(alpha: f64) -> Fast {
        FastConfig {
            alpha,
            ..FastConfig::default()
        }
        .build(Growth::Rfc5681)
    }

    #[test]
    fn with_the_rtt_held_the_distance_to_the_fixed_point_shrinks_by_the_damping_factor() {
        // Pins eq. (1): base 100 ms, RTT 110 ms, α = 20 → fixed point w* = 20/(1 − 100/110)
        // = 220; each update leaves (1 − γ·(1 − 100/110)) = 0.9545 of the distance.
        let mut d = Driver::new(
            fast(20.0),
            MSS,
            100,
            100 * MSS,
            SimDuration::from_millis(110),
        );
        d.min_rtt = Some(SimDuration::from_millis(100));
        d.round();
        d.round();
        let factor = 1.0 - 0.5 * (1.0 - 100.0 / 110.0);
        let mut dist = 220.0 - d.segments();
        for _ in 0..10 {
            d.round();
            let next = 220.0 - d.segments();
            assert!(
                (next / dist - factor).abs() < 0.01,
                "{dist:.2} -> {next:.2} (factor {factor:.4})"
            );
            dist = next;
        }
    }

    #[test]
    fn the_update_at_most_doubles_the_window() {
        // Pins the min{2w, ·} of eq. (1): no queue (RTT = base) and α = 200 from w = 10.
        let mut d = Driver::new(fast(200.0), MSS, 10, 10 * MSS, SimDuration::from_millis(50));
        d.round();
        let mut last = d.segments();
        for _ in 0..3 {
            d.round();
            assert!(
                d.segments() <= 2.0 * last + 0.01,
                "{last} -> {}",
                d.segments()
            );
            assert!(d.segments() >= 1.9 * last, "{last} -> {}", d.segments());
            last = d.segments();
        }
    }

    #[test]
    fn a_lone_flow_settles_with_alpha_segments_queued() {
        // A modelled bottleneck (BDP 50 segments, 1 ms per segment, base RTT 50 ms): from slow
        // start the flow settles at w = 50 + α.
        for alpha in [10.0, 40.0] {
            let base = SimDuration::from_millis(50);
            let mut d = Driver::new(fast(alpha), MSS, 2, u64::MAX, base);
            for _ in 0..200 {
                let queued = (d.segments() - 50.0).max(0.0);
                d.rtt = base + SimDuration::from_micros((queued * 1000.0) as u64);
                d.round();
            }
            let queued = d.segments() - 50.0;
            assert!((queued / alpha - 1.0).abs() < 0.05, "α {alpha}: {queued}");
        }
    }
}
