// SPDX-License-Identifier: MIT
//! Scalable TCP (T. Kelly, "Scalable TCP: improving performance in highspeed wide area
//! networks", ACM CCR 33(2), 2003): multiplicative increase, multiplicative decrease.
//!
//! ```text
//!   per ACK in congestion avoidance:  cwnd += a            (a = 0.01 segment)
//!   on loss:                          cwnd -= b · cwnd     (b = 0.125)
//! ```
//!
//! With an ACK per segment the window grows by the factor (1 + a) per RTT, so the time to regain
//! the window after a loss is ln(1/(1 − b)) / ln(1 + a) ≈ 13.4 RTTs whatever the window or the
//! rate: the "scalable" property. Kelly keeps legacy (Reno) behaviour at and below the legacy
//! window `lwnd`, so small-window flows stay TCP-friendly; there the ACK is handed to an
//! embedded [`Reno`], and so is slow start.
//!
//! Linux `tcp_scalable.c` implements the same law differently: +1 segment per
//! min(cwnd, 100) acked segments (so Reno's increase below 100 segments), and ssthresh =
//! max(cwnd − cwnd/8, 2) at every window: no legacy region for the decrease. ns-3.48's
//! TcpScalable copies it with 50 (`AIFactor`). `legacy_decrease = false` takes that rule: Reno's
//! increase at or below `low_window`, b·cwnd on every loss.

use super::common::{ack_credit, floor_ssthresh, segments, Fraction};
use super::Growth;
use super::{AckEvent, CcMetrics, CongestionControl, CongestionEvent, Window};
use super::{Reno, RenoConfig};
use crate::time::SimTime;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScalableConfig {
    /// Segments added per ACK in congestion avoidance (Kelly 2003: a = 0.01).
    pub a: f64,
    /// Fraction of cwnd given up on a loss (Kelly 2003: b = 0.125).
    pub b: f64,
    /// Legacy window `lwnd`, segments: at or below it the flow is Reno. 16 is the lwnd usually
    /// quoted for Kelly 2003, not checked against the paper's text here (Linux `tcp_scalable.c`
    /// has no legacy region, i.e. 0).
    pub low_window: f64,
    /// Whether a loss at or below `low_window` halves the window as Reno's does (Kelly 2003's
    /// legacy region), or gives up b·cwnd as above it (Linux `tcp_scalable_ssthresh`, ns-3.48
    /// `TcpScalable::GetSsThresh`).
    pub legacy_decrease: bool,
    /// What b is taken of: cwnd (Kelly 2003, Linux `tcp_scalable_ssthresh`), or the data in
    /// flight the sender reports (FlightSize or RFC 6675's pipe, `ssthresh_flight`), as ns-3.48's
    /// `TcpScalable::GetSsThresh` takes its `bytesInFlight` argument.
    pub decrease_from_flight: bool,
}

impl Default for ScalableConfig {
    fn default() -> Self {
        ScalableConfig {
            a: 0.01,
            b: 0.125,
            low_window: 16.0,
            legacy_decrease: true,
            decrease_from_flight: false,
        }
    }
}

impl ScalableConfig {
    /// `growth` is the flow's ACK-counting rule, shared with Reno (see `common::ack_credit`).
    pub fn build(self, growth: Growth) -> Scalable {
        Scalable {
            cfg: self,
            growth,
            reno: RenoConfig { growth }.build(),
            fraction: Fraction::default(),
        }
    }
}

#[derive(Clone, Debug)]
pub struct Scalable {
    cfg: ScalableConfig,
    growth: Growth,
    /// Slow start, and the legacy region at or below `low_window`.
    reno: Reno,
    fraction: Fraction,
}

impl CongestionControl for Scalable {
    fn name(&self) -> &'static str {
        "scalable"
    }

    fn on_ack(&mut self, now: SimTime, ev: &AckEvent, w: &mut Window) {
        if w.in_slow_start() || segments(w.cwnd, ev.mss) <= self.cfg.low_window {
            // Kelly 2003: legacy (Reno) congestion control while cwnd <= lwnd.
            self.reno.on_ack(now, ev, w);
            return;
        }
        // Kelly 2003: cwnd += a per ACK (bytes: a·SMSS).
        let inc = self.cfg.a * ev.mss as f64 * ack_credit(self.growth, ev);
        w.cwnd = w.cwnd.saturating_add(self.fraction.take(inc));
    }

    fn on_congestion(&mut self, now: SimTime, ev: &CongestionEvent) -> u64 {
        self.fraction.clear();
        let reno = self.reno.on_congestion(now, ev);
        let cwnd = if self.cfg.decrease_from_flight {
            ev.flight_size
        } else {
            ev.window.cwnd
        };
        if self.cfg.legacy_decrease && segments(cwnd, ev.mss) <= self.cfg.low_window {
            // Kelly 2003: legacy region, Reno's decrease (RFC 5681 eq. (4)).
            return reno;
        }
        // Kelly 2003: cwnd ← cwnd − b·cwnd, for every kind of congestion signal (as Linux's
        // `tcp_scalable_ssthresh`, which also serves timeouts).
        let ssthresh = (cwnd as f64 * (1.0 - self.cfg.b)) as u64;
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
    use crate::cc::CongestionKind;
    use crate::time::SimDuration;

    const MSS: u64 = 1000;

    fn ms(n: u64) -> SimDuration {
        SimDuration::from_millis(n)
    }

    fn stcp() -> Scalable {
        ScalableConfig::default().build(Growth::Rfc5681)
    }

    /// RTTs from a loss at `w` segments until the window is back to `w`.
    fn recovery_rtts(w: u64) -> u64 {
        let mut d = Driver::new(stcp(), MSS, w, w * MSS, SimDuration::from_millis(100));
        let ssthresh = d.loss(CongestionKind::DupAck);
        assert_eq!(ssthresh, w * MSS * 7 / 8, "875 of every 1000 segments stay");
        let mut rtts = 0;
        while d.w.cwnd < w * MSS {
            d.round();
            rtts += 1;
            assert!(rtts < 1000, "no recovery from a loss at {w}");
        }
        rtts
    }

    #[test]
    fn the_time_to_recover_from_a_loss_does_not_depend_on_the_window() {
        // Pins the MIMD law: ln(1/0.875)/ln(1.01) = 13.4 RTTs at any window. An additive law
        // (Reno) would need w/8 RTTs: 125 at 1 000 segments and 1 250 at 10 000.
        let small = recovery_rtts(1_000);
        let large = recovery_rtts(10_000);
        eprintln!("recovery: {small} RTTs at 1 000 segments, {large} RTTs at 10 000");
        assert!((small as f64 / large as f64 - 1.0).abs() <= 0.05);
        assert!((13..=15).contains(&small), "{small} RTTs");
    }

    #[test]
    fn each_ack_adds_a_hundredth_of_a_segment_above_the_legacy_window() {
        // Pins a = 0.01 per ACK: 100 ACKs add one segment (at 200 segments, Reno adds 0.5).
        let mut d = Driver::new(stcp(), MSS, 200, 200 * MSS, SimDuration::from_millis(100));
        for _ in 0..100 {
            d.ack(MSS, None);
        }
        assert_eq!(d.w.cwnd, 201 * MSS);
    }

    #[test]
    fn at_or_below_the_legacy_window_it_is_reno() {
        // Pins lwnd: at 10 segments one RTT adds one segment and a loss halves.
        let mut d = Driver::new(stcp(), MSS, 10, 10 * MSS, SimDuration::from_millis(100));
        d.round();
        assert!(
            (10 * MSS + 900..=11 * MSS).contains(&d.w.cwnd),
            "{}",
            d.w.cwnd
        );
        let mut d = Driver::new(stcp(), MSS, 16, 16 * MSS, SimDuration::from_millis(100));
        assert_eq!(d.loss(CongestionKind::DupAck), 8 * MSS);
    }

    #[test]
    fn with_decrease_from_flight_b_is_taken_of_the_data_in_flight_not_cwnd() {
        // ns-3.48's TcpScalable::GetSsThresh: 7/8 of the bytesInFlight it is handed (here a
        // pipe of 24 segments under a cwnd of 40), where Kelly and Linux take 7/8 of cwnd.
        let cfg = ScalableConfig {
            legacy_decrease: false,
            decrease_from_flight: true,
            ..ScalableConfig::default()
        };
        let mut d = Driver::new(cfg.build(Growth::Rfc5681), MSS, 40, 40 * MSS, ms(100));
        assert_eq!(
            d.congestion(CongestionKind::DupAck, 24 * MSS),
            Some(21 * MSS)
        );
        let mut d = Driver::new(
            ScalableConfig {
                decrease_from_flight: false,
                ..cfg
            }
            .build(Growth::Rfc5681),
            MSS,
            40,
            40 * MSS,
            ms(100),
        );
        assert_eq!(
            d.congestion(CongestionKind::DupAck, 24 * MSS),
            Some(35 * MSS)
        );
    }

    #[test]
    fn without_the_legacy_decrease_a_loss_at_a_small_window_keeps_seven_eighths() {
        // Linux `tcp_scalable_ssthresh` and ns-3's TcpScalable: max(cwnd − cwnd/8, 2) at every
        // window, while the increase below the legacy window stays Reno's.
        let cfg = ScalableConfig {
            legacy_decrease: false,
            ..ScalableConfig::default()
        };
        let mut d = Driver::new(
            cfg.build(Growth::Rfc5681),
            MSS,
            16,
            16 * MSS,
            SimDuration::from_millis(100),
        );
        assert_eq!(d.loss(CongestionKind::DupAck), 14 * MSS);
        let mut d = Driver::new(
            cfg.build(Growth::Rfc5681),
            MSS,
            10,
            10 * MSS,
            SimDuration::from_millis(100),
        );
        d.round();
        assert!(
            (10 * MSS + 900..=11 * MSS).contains(&d.w.cwnd),
            "{}",
            d.w.cwnd
        );
        // The floor of two segments still holds.
        let mut d = Driver::new(
            cfg.build(Growth::Rfc5681),
            MSS,
            2,
            2 * MSS,
            SimDuration::from_millis(100),
        );
        assert_eq!(d.loss(CongestionKind::DupAck), 2 * MSS);
    }
}
