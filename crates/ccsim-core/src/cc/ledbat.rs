// SPDX-License-Identifier: MIT
//! LEDBAT, Low Extra Delay Background Transport (RFC 6817): a "scavenger" that fills an idle
//! bottleneck but keeps the queue it adds near a fixed target, and so yields to loss-based TCP,
//! which keeps filling the queue.
//!
//! ```text
//!   every RTT sample d:   current ← last `current_filter` samples;  base ← per-interval minima
//!   queuing_delay = min(current) − min(base)
//!   off_target    = (target − queuing_delay) / target          ∈ (−∞, 1]
//!   per ACK:      cwnd += gain · off_target · bytes_acked · MSS / cwnd       (RFC 6817 §2.4.2)
//!                 cwnd  = min(cwnd, flight_size_before_ack + allowed_increase · MSS)
//!                 cwnd  = max(cwnd, min_cwnd · MSS)
//!   on loss:      cwnd ← max(cwnd / 2, min_cwnd · MSS)   (as ssthresh; the sender applies it)
//! ```
//!
//! With the queue below the target the window grows by up to one MSS per RTT, as Reno's; above
//! it, it shrinks in proportion to the excess, so a lone LEDBAT flow settles with `target` of
//! queueing and a loss-based flow beside it pushes the queue past the target and LEDBAT down.
//!
//! **Delay measure, a departure.** RFC 6817 measures one-way delay (the receiver's clock minus
//! the sender's timestamp), so that congestion on the reverse path does not slow the sender;
//! ns-3's `TcpLedbat` takes it from the TCP timestamp option (the receiver's TSval minus the
//! echoed TSecr, in milliseconds). ccsim's LEDBAT takes the round-trip samples every controller
//! gets ([`AckEvent::rtt_sample`], Karn's rule applied): queueing on the reverse path counts as
//! well. Both the RTT and ns-3's one-way measure include the receiver's delayed-ACK wait, and
//! base and current delay are minima, so on a dumbbell whose ACK path never queues the two
//! measures give the same queueing delay.
//!
//! The base delay is the minimum of `base_history` intervals' minima (RFC 6817: ten one-minute
//! minima), rolled over when an interval has passed since the last rollover, as ns-3 does
//! (RFC 6817 rolls at wall-clock minute boundaries, which a simulation has no reason to mimic).
//! Before the first sample the window grows as Reno's (ns-3 does the same without timestamps).
//! Slow start (`slow_start`, default true as ns-3's `SSParam`) runs until the first reduction or
//! the first time LEDBAT leaves it, and again only after the window fell to one segment (an RTO),
//! as ns-3's `LEDBAT_CAN_SS`.

use std::collections::VecDeque;

use super::common::floor_ssthresh;
use super::{
    AckEvent, CcMetrics, CongestionControl, CongestionEvent, Growth, Reno, RenoConfig, Window,
};
use crate::time::{SimDuration, SimTime};

/// LEDBAT's parameters (RFC 6817 §2.5; defaults RFC 6817's and ns-3's `TcpLedbat`'s).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LedbatConfig {
    /// TARGET: the queueing delay LEDBAT aims to add (100 ms, the RFC's upper bound and ns-3's
    /// `TargetDelay`).
    pub target: SimDuration,
    /// GAIN: how fast the window moves towards the target (1; the RFC requires 1 or less, so
    /// that LEDBAT never ramps up faster than standard TCP).
    pub gain: f64,
    /// BASE_HISTORY: intervals whose minima make the base delay (10, RFC 6817 and ns-3).
    pub base_history: u32,
    /// The length of one base-history interval (one minute in RFC 6817 and ns-3).
    pub base_interval: SimDuration,
    /// CURRENT_FILTER: the most recent samples whose minimum is the current delay (4, ns-3's
    /// `NoiseFilterLen`; RFC 6817 §3.4.2 leaves the filter open and suggests a minimum).
    pub current_filter: u32,
    /// ALLOWED_INCREASE, segments: cwnd may exceed the flight size before the ACK by this much
    /// (1; the RFC requires more than 0).
    pub allowed_increase: f64,
    /// MIN_CWND, segments (2, RFC 6817 and ns-3).
    pub min_cwnd: u32,
    /// Use slow start before the first delay decision (ns-3's `SSParam` "yes"; RFC 6817 leaves
    /// it to the implementation).
    pub slow_start: bool,
}

impl Default for LedbatConfig {
    fn default() -> Self {
        LedbatConfig {
            target: SimDuration::from_millis(100),
            gain: 1.0,
            base_history: 10,
            base_interval: SimDuration::from_secs(60),
            current_filter: 4,
            allowed_increase: 1.0,
            min_cwnd: 2,
            slow_start: true,
        }
    }
}

impl LedbatConfig {
    /// `growth` is the flow's ACK-counting rule for Reno's parts (slow start, before the first
    /// delay sample).
    pub fn build(self, growth: Growth) -> Ledbat {
        Ledbat {
            cfg: self,
            reno: RenoConfig { growth }.build(),
            current: VecDeque::with_capacity(self.current_filter as usize),
            base: VecDeque::with_capacity(self.base_history as usize),
            last_rollover: SimTime::ZERO,
            may_slow_start: self.slow_start,
            carry: 0.0,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Ledbat {
    cfg: LedbatConfig,
    /// Slow start and the window's growth before the first delay sample.
    reno: Reno,
    /// The last `current_filter` RTT samples.
    current: VecDeque<SimDuration>,
    /// The minimum of each of the last `base_history` intervals, the current one last.
    base: VecDeque<SimDuration>,
    /// When the current base-history interval began.
    last_rollover: SimTime,
    /// ns-3's `LEDBAT_CAN_SS`: slow start is allowed (until LEDBAT first leaves it).
    may_slow_start: bool,
    /// Fractional bytes of window change not yet applied (either sign).
    carry: f64,
}

impl Ledbat {
    /// RFC 6817 §2.4.2 `update_current_delay` and `update_base_delay` for one sample.
    fn add_sample(&mut self, now: SimTime, d: SimDuration) {
        if self.current.len() == self.cfg.current_filter as usize {
            self.current.pop_front();
        }
        self.current.push_back(d);
        let rolled = now.saturating_since(self.last_rollover) >= self.cfg.base_interval;
        match self.base.back_mut() {
            Some(last) if !rolled => *last = (*last).min(d),
            _ => {
                if self.base.len() == self.cfg.base_history as usize {
                    self.base.pop_front();
                }
                self.base.push_back(d);
                self.last_rollover = now;
            }
        }
    }

    /// The queueing delay: the current delay (the filter's minimum) less the base delay.
    pub fn queuing_delay(&self) -> Option<SimDuration> {
        let current = self.current.iter().min()?;
        let base = self.base.iter().min()?;
        Some(SimDuration::from_nanos(
            current.as_nanos().saturating_sub(base.as_nanos()),
        ))
    }
}

impl CongestionControl for Ledbat {
    fn name(&self) -> &'static str {
        "ledbat"
    }

    fn on_ack(&mut self, now: SimTime, ev: &AckEvent, w: &mut Window) {
        if let Some(d) = ev.rtt_sample {
            self.add_sample(now, d);
        }
        if w.cwnd <= ev.mss {
            // After an RTO (ns-3: a window of one segment allows slow start again).
            self.may_slow_start = self.cfg.slow_start;
        }
        let Some(queuing) = self.queuing_delay() else {
            self.reno.on_ack(now, ev, w);
            return;
        };
        if self.may_slow_start && w.in_slow_start() {
            self.reno.on_ack(now, ev, w);
            return;
        }
        self.may_slow_start = false;
        let target = self.cfg.target.as_nanos() as f64;
        let off_target = (target - queuing.as_nanos() as f64) / target;
        let mss = ev.mss as f64;
        self.carry +=
            self.cfg.gain * off_target * ev.bytes_acked as f64 * mss / w.cwnd.max(1) as f64;
        let whole = self.carry.trunc();
        self.carry -= whole;
        let mut cwnd = (w.cwnd as f64 + whole).max(0.0) as u64;
        let flight_before = ev.flight_size + ev.bytes_acked;
        let max_allowed = flight_before + (self.cfg.allowed_increase * mss) as u64;
        cwnd = cwnd.min(max_allowed).max(self.cfg.min_cwnd as u64 * ev.mss);
        w.cwnd = cwnd;
        // Out of slow start for good (ns-3: ssthresh just below cwnd).
        w.ssthresh = w.ssthresh.min(w.cwnd);
    }

    fn on_congestion(&mut self, now: SimTime, ev: &CongestionEvent) -> u64 {
        // RFC 6817 §2.4.2: cwnd = max(cwnd / 2, MIN_CWND · MSS) on a loss, at most once per
        // RTT (the sender's recovery gives that). Reno's bookkeeping is reset with it.
        self.reno.on_congestion(now, ev);
        self.may_slow_start = false;
        self.carry = 0.0;
        let half = ev.window.cwnd / 2;
        floor_ssthresh(half.max(self.cfg.min_cwnd as u64 * ev.mss), ev.mss)
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
    const MS: fn(u64) -> SimDuration = SimDuration::from_millis;

    fn ledbat(cfg: LedbatConfig, segments: u64, ssthresh: u64) -> Driver<Ledbat> {
        Driver::new(cfg.build(Growth::Rfc5681), MSS, segments, ssthresh, MS(50))
    }

    #[test]
    fn below_target_the_window_grows_by_off_target_segments_per_window() {
        // Base 50 ms, RTT 75 ms: queueing 25 ms of a 100 ms target, off_target 0.75. One
        // window of ACKs (20 ACKs of 1 MSS at cwnd 20) adds 0.75 MSS: RFC 6817 §2.4.2's
        // GAIN · off_target · bytes_acked · MSS / cwnd summed over the window.
        // (The first four samples at 75 ms fill the current filter, whose minimum would
        // otherwise still be the 50 ms one.)
        let mut d = ledbat(LedbatConfig::default(), 20, 20 * MSS);
        d.ack(MSS, Some(MS(50)));
        for _ in 0..4 {
            d.ack(MSS, Some(MS(75)));
        }
        let start = d.w.cwnd;
        for _ in 0..20 {
            d.ack(MSS, Some(MS(75)));
        }
        // 20 · 0.75 · 1000 · 1000 / cwnd, cwnd from 20,2xx to 20,9xx bytes: ~730.
        let grown = d.w.cwnd - start;
        assert!((715..=745).contains(&grown), "{grown} bytes");
    }

    #[test]
    fn above_target_the_window_shrinks_in_proportion_to_the_excess_down_to_min_cwnd() {
        // Queueing 150 ms against a 100 ms target: off_target −0.5, −0.5 MSS per window.
        let mut d = ledbat(LedbatConfig::default(), 20, 20 * MSS);
        d.ack(MSS, Some(MS(50)));
        for _ in 0..4 {
            d.ack(MSS, Some(MS(200)));
        }
        let start = d.w.cwnd;
        for _ in 0..20 {
            d.ack(MSS, Some(MS(200)));
        }
        // 20 · 0.5 · 1000 · 1000 / cwnd, cwnd from ~19,950 down to ~19,450: ~505.
        let shrunk = start - d.w.cwnd;
        assert!((495..=520).contains(&shrunk), "{shrunk} bytes");
        // Far above it, the window stops at MIN_CWND.
        for _ in 0..2000 {
            d.ack(MSS, Some(SimDuration::from_secs(5)));
        }
        assert_eq!(d.w.cwnd, 2 * MSS);
    }

    #[test]
    fn the_window_never_exceeds_the_flight_before_the_ack_plus_allowed_increase() {
        // An application-limited sender with 5 segments in flight: growth stops at 5 + 1.
        let mut d = ledbat(LedbatConfig::default(), 5, 5 * MSS);
        d.ack(MSS, Some(MS(50)));
        for _ in 0..200 {
            d.snd_max = d.snd_una + 5 * MSS; // 5 in flight before the ACK
            d.ack(MSS, Some(MS(50)));
        }
        assert_eq!(d.w.cwnd, 6 * MSS);
    }

    #[test]
    fn the_current_delay_is_the_minimum_of_the_last_samples_and_the_base_rolls_each_interval() {
        let cfg = LedbatConfig {
            base_interval: SimDuration::from_secs(1),
            base_history: 2,
            ..LedbatConfig::default()
        };
        let mut l = cfg.build(Growth::Rfc5681);
        let t = |ms: u64| SimTime::ZERO + MS(ms);
        for (at, rtt) in [(0, 60), (100, 80), (200, 90), (300, 70), (400, 95)] {
            l.add_sample(t(at), MS(rtt));
        }
        // Last four: 80, 90, 70, 95 → 70; base 60 → 10 ms.
        assert_eq!(l.queuing_delay(), Some(MS(10)));
        // Two intervals later the 60 ms minimum has rolled out; the base is 65.
        l.add_sample(t(1_100), MS(65));
        l.add_sample(t(2_200), MS(66));
        assert_eq!(
            l.base.iter().copied().collect::<Vec<_>>(),
            vec![MS(65), MS(66)]
        );
        assert_eq!(l.queuing_delay(), Some(MS(0))); // current min 65 (65 and 66 recent)
    }

    #[test]
    fn a_loss_halves_the_window_as_ssthresh_but_not_below_min_cwnd() {
        let mut d = ledbat(LedbatConfig::default(), 30, 30 * MSS);
        let ev = |cwnd| CongestionEvent {
            kind: CongestionKind::DupAck,
            flight_size: cwnd,
            window: Window {
                cwnd,
                ssthresh: cwnd,
            },
            mss: MSS,
        };
        assert_eq!(d.cc.on_congestion(SimTime::ZERO, &ev(30 * MSS)), 15 * MSS);
        let big_min = LedbatConfig {
            min_cwnd: 8,
            ..LedbatConfig::default()
        };
        d = ledbat(big_min, 10, 10 * MSS);
        assert_eq!(d.cc.on_congestion(SimTime::ZERO, &ev(10 * MSS)), 8 * MSS);
    }

    #[test]
    fn slow_start_runs_until_ledbat_first_decides_and_again_only_after_an_rto() {
        let mut d = ledbat(LedbatConfig::default(), 2, u64::MAX);
        d.ack(MSS, Some(MS(50)));
        assert_eq!(d.w.cwnd, 3 * MSS, "slow start: one MSS per ACK");
        // Without slow start the same ACK is LEDBAT's own increase (below one MSS).
        let no_ss = LedbatConfig {
            slow_start: false,
            ..LedbatConfig::default()
        };
        let mut e = ledbat(no_ss, 2, u64::MAX);
        e.ack(MSS, Some(MS(50)));
        assert!(e.w.cwnd < 3 * MSS && e.w.cwnd > 2 * MSS, "{}", e.w.cwnd);
        assert!(!e.w.in_slow_start());
    }
}
