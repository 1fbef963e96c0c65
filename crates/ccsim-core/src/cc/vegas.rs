// SPDX-License-Identifier: MIT
//! TCP Vegas (L. Brakmo, L. Peterson, "TCP Vegas: End to End Congestion Avoidance on a Global
//! Internet", IEEE JSAC 13(8), 1995; "BP95"): a window that aims to keep a few of its own packets
//! queued in the network, judged from RTT rather than loss.
//!
//! ```text
//!   once per RTT (BP95 §III-B):
//!     Expected = cwnd / BaseRTT,  Actual = cwnd / RTT
//!     Diff     = (Expected − Actual) · BaseRTT = cwnd · (1 − BaseRTT/RTT)   segments queued
//!     Diff < α → cwnd += 1 segment;   Diff > β → cwnd −= 1 segment;   else unchanged
//!   slow start (BP95 §III-C): double only every other RTT; leave it when Diff > γ
//! ```
//!
//! BaseRTT is the smallest RTT seen (`AckEvent::min_rtt`); RTT is the smallest sample of the last
//! round (Linux `tcp_vegas.c`, which filters out delayed-ACK and burst noise that way). A round
//! with fewer than `min_rtt_samples` samples (Karn's rule gives none for retransmitted data;
//! small windows give few) cannot be judged, and the next round grows as Reno does (Linux:
//! "cntRTT <= 2" falls back to Reno). Losses are Reno's: ssthresh from RFC 5681 eq. (4), as
//! Linux `tcp_vegas.c` uses `tcp_reno_ssthresh`.
//!
//! At equilibrium a single flow thus keeps between α and β packets in the bottleneck queue.

use super::common::{bytes, segments, Rounds};
use super::Growth;
use super::{AckEvent, CcMetrics, CongestionControl, CongestionEvent, Window};
use super::{Reno, RenoConfig};
use crate::time::{SimDuration, SimTime};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VegasConfig {
    /// Below this many queued segments, grow by one per RTT (BP95 and ns-2 `v_alpha_`: 1;
    /// Linux: 2).
    pub alpha: f64,
    /// Above this many, shrink by one per RTT (BP95 and ns-2 `v_beta_`: 3; Linux: 4).
    pub beta: f64,
    /// Leave slow start above this many (BP95 and ns-2 `v_gamma_`: 1; Linux: 1).
    pub gamma: f64,
    /// Fewest RTT samples a round needs to be judged (Linux: more than 2, i.e. 3).
    pub min_rtt_samples: u32,
    /// BP95 §III-C: in slow start, grow only every other RTT (Linux grows every RTT).
    pub slow_start_every_other_rtt: bool,
}

impl Default for VegasConfig {
    fn default() -> Self {
        VegasConfig {
            alpha: 1.0,
            beta: 3.0,
            gamma: 1.0,
            min_rtt_samples: 3,
            slow_start_every_other_rtt: true,
        }
    }
}

impl VegasConfig {
    /// Linux `tcp_vegas.c`'s constants: α = 2, β = 4, γ = 1, slow start every RTT.
    pub fn linux() -> Self {
        VegasConfig {
            alpha: 2.0,
            beta: 4.0,
            gamma: 1.0,
            min_rtt_samples: 3,
            slow_start_every_other_rtt: false,
        }
    }

    /// `growth` is the flow's ACK-counting rule for the Reno parts (slow start, fallback).
    pub fn build(self, growth: Growth) -> Vegas {
        Vegas {
            cfg: self,
            reno: RenoConfig { growth }.build(),
            rounds: Rounds::default(),
            round_min_rtt: None,
            round_samples: 0,
            reno_round: true,
            slow_start_growing: true,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Vegas {
    cfg: VegasConfig,
    /// Slow start's growth, and the fallback for rounds without enough RTT samples.
    reno: Reno,
    rounds: Rounds,
    /// Smallest RTT sample of the current round.
    round_min_rtt: Option<SimDuration>,
    round_samples: u32,
    /// The last round could not be judged: this one grows as Reno does.
    reno_round: bool,
    /// BP95 §III-C: slow start grows in this round (it alternates with a round that measures).
    slow_start_growing: bool,
}

impl Vegas {
    /// The once-per-RTT decision, at the first ACK of a new round, from the round just ended.
    fn end_round(&mut self, ev: &AckEvent, w: &mut Window) {
        let mss = ev.mss.max(1);
        let rtt = self.round_min_rtt.take();
        let samples = std::mem::take(&mut self.round_samples);
        let grew = self.slow_start_growing;
        self.slow_start_growing = !self.cfg.slow_start_every_other_rtt || !grew;
        let (Some(base), Some(rtt)) = (ev.min_rtt, rtt) else {
            self.reno_round = true;
            return;
        };
        if samples < self.cfg.min_rtt_samples || rtt.as_nanos() == 0 {
            // Linux `tcp_vegas.c`: too few samples to judge (cntRTT <= 2) → Reno.
            self.reno_round = true;
            return;
        }
        self.reno_round = false;
        let cwnd = segments(w.cwnd, mss);
        let ratio = (base.as_nanos() as f64 / rtt.as_nanos() as f64).min(1.0);
        // BP95 §III-B: Diff = (Expected − Actual)·BaseRTT = cwnd·(1 − BaseRTT/RTT).
        let diff = cwnd * (1.0 - ratio);
        if w.in_slow_start() {
            if diff > self.cfg.gamma {
                // BP95 §III-C: leave slow start when Diff > γ. As Linux, trim cwnd to the
                // expected window plus one segment, and set ssthresh below it.
                let fit = bytes(cwnd * ratio + 1.0, mss);
                w.cwnd = w.cwnd.min(fit).max(2 * mss);
                stay_out_of_slow_start(w, mss);
            }
            return;
        }
        if diff < self.cfg.alpha {
            // BP95 §III-B: too little queued: one more segment this RTT.
            w.cwnd = w.cwnd.saturating_add(mss);
        } else if diff > self.cfg.beta {
            // BP95 §III-B: too much queued: one fewer (Linux keeps at least 2 segments).
            w.cwnd = w.cwnd.saturating_sub(mss).max(2 * mss);
            stay_out_of_slow_start(w, mss);
        }
    }
}

/// Lowers ssthresh below cwnd (never raises it, never below 2 segments), so that a window
/// Vegas trimmed is not taken for slow start again: Linux `tcp_vegas_ssthresh`,
/// min(ssthresh, cwnd − 1).
fn stay_out_of_slow_start(w: &mut Window, mss: u64) {
    w.ssthresh = w.ssthresh.min(w.cwnd.saturating_sub(mss).max(2 * mss));
}

impl CongestionControl for Vegas {
    fn name(&self) -> &'static str {
        "vegas"
    }

    fn on_ack(&mut self, now: SimTime, ev: &AckEvent, w: &mut Window) {
        if let Some(r) = ev.rtt_sample {
            // Linux `tcp_vegas.c`: the RTT of a round is its smallest sample.
            self.round_min_rtt = Some(self.round_min_rtt.map_or(r, |m| m.min(r)));
            self.round_samples = self.round_samples.saturating_add(1);
        }
        if self.rounds.starts_round(ev) {
            self.end_round(ev, w);
        }
        if w.in_slow_start() {
            if self.slow_start_growing {
                self.reno.on_ack(now, ev, w);
            }
        } else if self.reno_round {
            self.reno.on_ack(now, ev, w);
        }
    }

    fn on_congestion(&mut self, now: SimTime, ev: &CongestionEvent) -> u64 {
        // Linux `tcp_vegas.c`: Reno's ssthresh; the RTT bookkeeping starts afresh.
        self.rounds.reset();
        self.round_min_rtt = None;
        self.round_samples = 0;
        self.reno_round = true;
        self.slow_start_growing = true;
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
    use crate::cc::CongestionKind;

    const MSS: u64 = 1000;

    /// A driver whose RTT is `base` plus the queue its own window builds beyond `bdp` segments
    /// at one segment per `per_packet` of bottleneck time: a one-flow bottleneck without a
    /// network.
    fn queue_rtt(
        d: &Driver<Vegas>,
        base: SimDuration,
        bdp: f64,
        per_packet: SimDuration,
    ) -> SimDuration {
        let queued = (d.segments() - bdp).max(0.0);
        base + SimDuration::from_nanos((queued * per_packet.as_nanos() as f64) as u64)
    }

    #[test]
    fn diff_decides_one_segment_up_down_or_hold_per_rtt() {
        // Pins BP95 §III-B with the reference check: BaseRTT 100 ms, cwnd 30. RTT 110 ms gives
        // Diff 2.73 (hold, between 1 and 3); 130 ms gives 6.9 (−1); 101 ms gives 0.3 (+1).
        for (rtt_ms, change) in [(110, 0i64), (130, -1), (101, 1)] {
            let mut d = Driver::new(
                VegasConfig::default().build(Growth::Rfc5681),
                MSS,
                30,
                30 * MSS,
                SimDuration::from_millis(100),
            );
            d.min_rtt = Some(SimDuration::from_millis(100));
            d.rtt = SimDuration::from_millis(rtt_ms);
            d.round();
            let before = d.w.cwnd as i64;
            d.round();
            d.ack(MSS, Some(d.rtt));
            let got = (d.w.cwnd as i64 - before) / MSS as i64;
            assert_eq!(got, change, "RTT {rtt_ms} ms");
        }
    }

    #[test]
    fn a_lone_flow_settles_with_alpha_to_beta_segments_queued() {
        // A modelled bottleneck: BDP 50 segments at 1 ms per segment, base RTT 50 ms.
        let base = SimDuration::from_millis(50);
        let per = SimDuration::from_millis(1);
        for cfg in [VegasConfig::default(), VegasConfig::linux()] {
            let mut d = Driver::new(cfg.build(Growth::Rfc5681), MSS, 2, u64::MAX, base);
            for _ in 0..300 {
                d.rtt = queue_rtt(&d, base, 50.0, per);
                d.round();
            }
            let queued = d.segments() - 50.0;
            assert!(
                (cfg.alpha - 1.0..=cfg.beta + 1.0).contains(&queued),
                "α {} β {}: {queued} queued",
                cfg.alpha,
                cfg.beta
            );
            assert!(!d.w.in_slow_start());
        }
    }

    #[test]
    fn rounds_without_rtt_samples_grow_as_reno() {
        // Pins the Karn fallback: no samples → no Vegas decision, Reno's +1 per RTT.
        let mut d = Driver::new(
            VegasConfig::default().build(Growth::Rfc5681),
            MSS,
            30,
            30 * MSS,
            SimDuration::from_millis(100),
        );
        for _ in 0..3 {
            for _ in 0..30 {
                d.ack(MSS, None);
            }
        }
        assert!(d.w.cwnd > 32 * MSS, "{}", d.w.cwnd);
        // Losses are Reno's: half the flight.
        let before = d.w.cwnd;
        assert_eq!(d.loss(CongestionKind::DupAck), before / 2);
    }
}
