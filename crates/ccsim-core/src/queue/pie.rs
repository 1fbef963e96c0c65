// SPDX-License-Identifier: MIT
//! PIE, "Proportional Integral controller Enhanced" (RFC 8033): a drop probability steered
//! by the queueing delay, applied at enqueue.
//!
//! ```text
//!   every t_update (15 ms):  p  = alpha·(qdelay − target) + beta·(qdelay − qdelay_old)
//!                            p /= 2048 … 2 while drop_prob is small     (§4.2 auto-tuning)
//!                            p  = min(p, 2 %) once drop_prob >= 10 %    (§5.5 cap)
//!                            drop_prob += p; × 0.98 when both delays are 0; clamp to [0, 1]
//!                            burst_allowance −= t_update, refilled to max_burst when calm
//!   arrival:  burst_allowance left, or (qdelay_old < target/2 and drop_prob < 20 %), or two
//!             packets or less queued ─> enqueue (§4.1, §4.4)
//!             otherwise drop (or CE-mark an ECT packet while drop_prob <= mark_ecnth, §5.1)
//!             with probability drop_prob (or by §5.4's derandomized accumulator)
//! ```
//!
//! `alpha` and `beta` are in Hz: delays enter in seconds, so with the defaults a delay 1 ms
//! above target adds 0.125 · 0.001 = 0.0125 % a step before the auto-tuning scales it.
//!
//! The queue delay is measured, by default, as Linux does: the sojourn time of the last packet
//! to leave (0 if the queue emptied behind it), from its enqueue timestamp (RFC 8033 §4.3
//! allows timestamps). With `dq_rate_estimator` it is RFC 8033 §5.2's estimate instead: the
//! bytes queued divided by the departure rate, measured over runs of `dq_threshold` bytes
//! (16 KB) that start only while that much is queued, and averaged with weight 1/8.
//!
//! The update is RFC 8033's periodic timer. It runs lazily here, before the first arrival or
//! departure at or after its time, for every period that has passed: between packets nothing
//! it reads changes, so the result is the one a timer would give (a timer at t runs before a
//! packet at t). A long idle spell where the controller sits at rest (probability 0, both
//! delays 0, burst allowance full) is skipped in one step.

use super::fifo::Waiting;
use crate::rng::RngStream;
use crate::time::{SimDuration, SimTime};

/// PIE's parameters (RFC 8033 §4 and §5; defaults in `scenario/parse/links.rs`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PieParams {
    /// QDELAY_REF (15 ms).
    pub target: SimDuration,
    /// T_UPDATE (15 ms).
    pub t_update: SimDuration,
    /// MAX_BURST (150 ms).
    pub max_burst: SimDuration,
    /// alpha (0.125 Hz) and beta (1.25 Hz).
    pub alpha: f64,
    pub beta: f64,
    /// MEAN_PKTSIZE: with two of these or fewer queued PIE never drops (§4.1).
    pub mean_packet_size: u64,
    /// §5.2's departure-rate estimate instead of timestamps.
    pub dq_rate_estimator: bool,
    /// DQ_THRESHOLD (16 KB).
    pub dq_threshold: u64,
    /// §5.4's derandomization.
    pub derandomize: bool,
    /// §5.1: mark ECT packets instead of dropping while drop_prob <= mark_ecnth (10 %).
    pub ecn: bool,
    pub mark_ecnth: f64,
}

/// What PIE decided for an arriving packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PieVerdict {
    Enqueue,
    /// Drop it, or mark it if ECN applies (`ecn` and drop_prob <= mark_ecnth).
    Signal {
        may_mark: bool,
    },
}

#[derive(Clone, Debug)]
pub(crate) struct Pie {
    p: PieParams,
    /// drop_prob_.
    pub(crate) drop_prob: f64,
    /// The current queue delay estimate (timestamps: the last departure's sojourn), ns.
    pub(crate) qdelay: u64,
    /// qdelay_old_: the delay at the last update, ns.
    pub(crate) qdelay_old: u64,
    /// burst_allowance_, ns.
    pub(crate) burst_allowance: u64,
    /// accu_prob_ (§5.4).
    accu_prob: f64,
    /// The next periodic update.
    next_update: SimTime,
    /// §5.2: bytes departed in the current measurement (None: not measuring), its start, and
    /// the averaged time to send `dq_threshold` bytes (ns; 0 before the first measurement).
    dq_count: Option<u64>,
    dq_tstamp: SimTime,
    avg_dq_time: f64,
    rng: RngStream,
}

impl Pie {
    pub(crate) fn new(p: PieParams, rng: RngStream) -> Pie {
        Pie {
            p,
            drop_prob: 0.0,
            qdelay: 0,
            qdelay_old: 0,
            burst_allowance: p.max_burst.as_nanos(),
            accu_prob: 0.0,
            next_update: SimTime::ZERO + p.t_update,
            dq_count: None,
            dq_tstamp: SimTime::ZERO,
            avg_dq_time: 0.0,
            rng,
        }
    }

    /// Run the periodic updates due by `now`, with `bytes` queued (the estimate of §5.2
    /// reads it; nothing changes it between packets).
    #[inline]
    pub(crate) fn catch_up(&mut self, now: SimTime, bytes: u64) {
        while self.next_update <= now {
            let at_rest = self.drop_prob == 0.0
                && self.qdelay_old == 0
                && self.current_qdelay(bytes) == 0
                && self.burst_allowance == self.p.max_burst.as_nanos();
            if at_rest {
                // Every further update would leave this state as it is.
                let period = self.p.t_update.as_nanos().max(1);
                let behind = (now.as_nanos() - self.next_update.as_nanos()) / period;
                self.next_update += SimDuration::from_nanos((behind + 1) * period);
                return;
            }
            self.update(bytes);
            self.next_update += self.p.t_update;
        }
    }

    /// The queue delay the update uses (ns).
    fn current_qdelay(&self, bytes: u64) -> u64 {
        if self.p.dq_rate_estimator {
            // §5.2: queue length over the departure rate (bytes · time per dq_threshold bytes).
            (bytes as f64 * self.avg_dq_time / self.p.dq_threshold as f64) as u64
        } else {
            self.qdelay
        }
    }

    /// RFC 8033 §4.2 (with §4.4's burst allowance and §5.5's cap): one periodic update.
    pub(crate) fn update(&mut self, bytes: u64) {
        let qdelay = self.current_qdelay(bytes);
        let target = self.p.target.as_nanos();
        let secs = |ns: i128| ns as f64 * 1e-9;
        let mut p = self.p.alpha * secs(qdelay as i128 - target as i128)
            + self.p.beta * secs(qdelay as i128 - self.qdelay_old as i128);
        // §4.2's auto-tuning: small probabilities move in small steps, so that a light
        // congestion does not swing the probability by more than its own size.
        let prob = self.drop_prob;
        p /= if prob < 0.000001 {
            2048.0
        } else if prob < 0.00001 {
            512.0
        } else if prob < 0.0001 {
            128.0
        } else if prob < 0.001 {
            32.0
        } else if prob < 0.01 {
            8.0
        } else if prob < 0.1 {
            2.0
        } else {
            1.0
        };
        // §5.5: above 10 %, no step of more than 2 % (one step cannot double the drops).
        if prob >= 0.1 && p > 0.02 {
            p = 0.02;
        }
        self.drop_prob += p;
        // §4.2: decay slowly when the queue has been empty for two updates.
        if qdelay == 0 && self.qdelay_old == 0 {
            self.drop_prob *= 0.98;
        }
        self.drop_prob = self.drop_prob.clamp(0.0, 1.0);
        // §4.4: the burst allowance runs down by the update interval, and is restored when the
        // controller is at rest below half the target.
        self.burst_allowance = self
            .burst_allowance
            .saturating_sub(self.p.t_update.as_nanos());
        if self.drop_prob == 0.0 && qdelay < target / 2 && self.qdelay_old < target / 2 {
            self.burst_allowance = self.p.max_burst.as_nanos();
        }
        self.qdelay_old = qdelay;
    }

    /// RFC 8033 §4.1 with §4.4 and §5.4: the fate of a packet arriving to `bytes` queued
    /// (updates due are run first by the caller, `catch_up`).
    pub(crate) fn on_arrival(&mut self, bytes: u64) -> PieVerdict {
        if self.burst_allowance > 0 {
            return PieVerdict::Enqueue;
        }
        let half = self.p.target.as_nanos() / 2;
        // §4.1's safeguards: a calm controller, or too little queued to matter.
        if (self.qdelay_old < half && self.drop_prob < 0.2) || bytes <= 2 * self.p.mean_packet_size
        {
            return PieVerdict::Enqueue;
        }
        let drop = if self.p.derandomize {
            // §5.4: drop after enough probability has accumulated, never too early or late.
            if self.drop_prob == 0.0 {
                self.accu_prob = 0.0;
            }
            self.accu_prob += self.drop_prob;
            if self.accu_prob < 0.85 {
                false
            } else if self.accu_prob >= 8.5 {
                true
            } else {
                self.rng.uniform() < self.drop_prob
            }
        } else {
            self.rng.uniform() < self.drop_prob
        };
        if !drop {
            return PieVerdict::Enqueue;
        }
        self.accu_prob = 0.0;
        PieVerdict::Signal {
            may_mark: self.p.ecn && self.drop_prob <= self.p.mark_ecnth,
        }
    }

    /// A packet leaves at `now`, `left` bytes queued behind it: the delay measure.
    pub(crate) fn on_departure(&mut self, now: SimTime, w: &Waiting, left: u64) {
        if !self.p.dq_rate_estimator {
            // Linux: the sojourn of the packet leaving, 0 once the queue is empty.
            self.qdelay = if left == 0 {
                0
            } else {
                now.saturating_since(w.since).as_nanos()
            };
            return;
        }
        // §5.2: start a measurement when enough is queued to keep the link busy through it.
        let before = left + w.size as u64;
        if self.dq_count.is_none() && before >= self.p.dq_threshold {
            self.dq_count = Some(0);
            self.dq_tstamp = now;
        }
        if let Some(n) = &mut self.dq_count {
            *n += w.size as u64;
            if *n >= self.p.dq_threshold {
                let dq_int = now.saturating_since(self.dq_tstamp).as_nanos() as f64;
                self.avg_dq_time = if self.avg_dq_time == 0.0 {
                    dq_int
                } else {
                    // Weight 1/8 on the new sample (Linux's `avg_dq_rate` update).
                    self.avg_dq_time * 0.875 + dq_int * 0.125
                };
                self.dq_count = (left >= self.p.dq_threshold).then_some(0);
                self.dq_tstamp = now;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> PieParams {
        PieParams {
            target: SimDuration::from_millis(15),
            t_update: SimDuration::from_millis(15),
            max_burst: SimDuration::from_millis(150),
            alpha: 0.125,
            beta: 1.25,
            mean_packet_size: 1500,
            dq_rate_estimator: false,
            dq_threshold: 16384,
            derandomize: false,
            ecn: false,
            mark_ecnth: 0.1,
        }
    }

    #[test]
    fn the_drop_probability_follows_rfc_8033s_update_for_a_given_delay_sequence() {
        let mut pie = Pie::new(params(), RngStream::derive(1, "test/pie"));
        // By hand, from §4.2's pseudo-code (seconds, alpha 0.125, beta 1.25):
        // 1. qdelay 25 ms, old 0:  p = 0.125·0.010 + 1.25·0.025 = 0.0325; prob 0 < 1e-6: /2048
        //    → 1.5869140625e-5.
        // 2. qdelay 25 ms, old 25: p = 0.00125; prob in [1e-5, 1e-4): /128 → 9.765625e-6;
        //    prob = 2.5634765625e-5.
        // 3. qdelay 40 ms, old 25: p = 0.125·0.025 + 1.25·0.015 = 0.021875; /128 →
        //    1.708984375e-4; prob = 1.96533203125e-4.
        // 4. qdelay 40 ms, old 40: p = 0.003125; prob in [1e-4, 1e-3): /32 → 9.765625e-5;
        //    prob = 2.94189453125e-4.
        // 5. qdelay 5 ms, old 40:  p = 0.125·(−0.010) + 1.25·(−0.035) = −0.045; /32 →
        //    −1.40625e-3; prob < 0 → 0.
        let steps = [
            (25, 1.5869140625e-5),
            (25, 2.5634765625e-5),
            (40, 1.96533203125e-4),
            (40, 2.94189453125e-4),
            (5, 0.0),
        ];
        for (i, (delay_ms, expected)) in steps.into_iter().enumerate() {
            pie.qdelay = delay_ms * 1_000_000;
            pie.update(0);
            assert!(
                (pie.drop_prob - expected).abs() < 1e-15,
                "step {}: {} vs {expected}",
                i + 1,
                pie.drop_prob
            );
        }
        // The burst allowance ran down by 15 ms a step (150 → 75 ms), and is not refilled:
        // the delay before (40 ms) was above half the target.
        assert_eq!(pie.burst_allowance, 75_000_000);
        // 6. qdelay 5, old 5 ms with prob 0: the controller is calm, the allowance refills.
        pie.update(0);
        assert_eq!(pie.burst_allowance, 150_000_000);
    }

    #[test]
    fn above_ten_percent_a_step_is_capped_at_two_percent_and_an_empty_queue_decays_by_two() {
        let mut pie = Pie::new(params(), RngStream::derive(1, "test/pie"));
        pie.drop_prob = 0.5;
        pie.qdelay_old = 15_000_000;
        pie.qdelay = 200_000_000; // p = 0.125·0.185 + 1.25·0.185 = 0.254 → capped
        pie.update(0);
        assert!((pie.drop_prob - 0.52).abs() < 1e-12, "{}", pie.drop_prob);
        pie.qdelay = 0;
        pie.update(0); // p = 0.125·(−0.015) + 1.25·(−0.2) = −0.251875: prob 0.268125
        assert!(
            (pie.drop_prob - 0.268125).abs() < 1e-12,
            "{}",
            pie.drop_prob
        );
        pie.update(0); // both 0: p = −0.001875, then × 0.98
        assert!(
            (pie.drop_prob - (0.268125 - 0.001875) * 0.98).abs() < 1e-12,
            "{}",
            pie.drop_prob
        );
    }

    #[test]
    fn updates_run_lazily_once_per_period_and_an_idle_controller_skips_ahead() {
        let mut pie = Pie::new(params(), RngStream::derive(1, "test/pie"));
        pie.qdelay = 25_000_000;
        // Three periods (15, 30, 45 ms) have passed by 50 ms: three updates.
        let mut by_hand = pie.clone();
        for _ in 0..3 {
            by_hand.update(0);
        }
        pie.catch_up(SimTime::from_millis(50), 0);
        assert_eq!(pie.drop_prob, by_hand.drop_prob);
        assert_eq!(pie.next_update, SimTime::from_millis(60));
        // At rest: an hour of idleness costs one step.
        let mut calm = Pie::new(params(), RngStream::derive(1, "test/pie"));
        calm.catch_up(SimTime::from_secs(3600), 0);
        assert_eq!(
            calm.next_update,
            SimTime::from_nanos(3_600_000_000_000 + 15_000_000)
        );
    }

    #[test]
    fn pie_never_drops_while_its_burst_allowance_lasts_nor_below_two_packets_queued() {
        let mut pie = Pie::new(params(), RngStream::derive(1, "test/pie"));
        pie.drop_prob = 1.0;
        pie.qdelay_old = 100_000_000;
        assert_eq!(pie.on_arrival(1_000_000), PieVerdict::Enqueue);
        pie.burst_allowance = 0;
        assert_eq!(pie.on_arrival(3000), PieVerdict::Enqueue);
        assert_eq!(pie.on_arrival(3001), PieVerdict::Signal { may_mark: false });
    }

    #[test]
    fn derandomized_pie_drops_after_the_accumulated_probability_reaches_its_bounds() {
        let mut p = params();
        p.derandomize = true;
        let mut pie = Pie::new(p, RngStream::derive(1, "test/pie"));
        pie.burst_allowance = 0;
        pie.qdelay_old = 100_000_000;
        pie.drop_prob = 0.1;
        // accu 0.1 … 0.8 (8 arrivals) cannot drop; from 0.85 a draw decides; from 8.5 it drops.
        for _ in 0..8 {
            assert_eq!(pie.on_arrival(1 << 20), PieVerdict::Enqueue);
        }
        pie.accu_prob = 8.45;
        assert_eq!(
            pie.on_arrival(1 << 20),
            PieVerdict::Signal { may_mark: false }
        );
        assert_eq!(pie.accu_prob, 0.0);
    }
}
