// SPDX-License-Identifier: MIT
//! ER-TCP (paper 000): a TCP window set from the explicit rate of the ATM ABR VC under it.
//!
//! On every ACK outside loss recovery the window is the VC's payload rate times the estimated
//! RTT, shrunk by a safety factor S:
//!
//! ```text
//!   cwnd = ER · 48/53 · 31/32 · MSS/(MSS + 56) · estimated_RTT · S
//!          │      │      │        └ TCP 20 + IP 20 + LLC/SNAP 8 + AAL5 trailer 8 bytes per segment
//!          │      │      └ one cell in Nrm = 32 is an RM cell
//!          │      └ cell payload over cell size
//!          └ the latest backward-RM ER (bits/s of cells)
//! ```
//!
//! Slow start ends after the first packet (the first ACK sets ssthresh to the window); losses
//! are Reno's (`on_congestion` halves the flight, the endpoint runs recovery), and the next ACK
//! after recovery takes the window back to the rule. Until the first ER and RTT are known the
//! window grows as Reno's congestion avoidance.
//!
//! The ER comes in the ACK's congestion header ([`CcHeader::ExplicitRate`]), written by the ATM
//! layer at the sender's host (`atm/fabric.rs`); the TCP endpoint knows nothing of it.

use super::reno::{Reno, RenoConfig};
use super::{AckEvent, CongestionControl, CongestionEvent, Growth, Window};
use crate::packet::CcHeader;
use crate::time::SimTime;

/// Per-segment overhead below TCP's payload over ATM: TCP 20 + IP 20 + LLC/SNAP 8 (RFC 1577)
/// + AAL5 trailer 8 bytes.
pub const OVERHEAD_BYTES: f64 = 56.0;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ErConfig {
    /// The safety factor S (paper 000 tries 0.2 to 0.7; 0.4 did best there).
    pub safety: f64,
}

impl Default for ErConfig {
    fn default() -> Self {
        ErConfig { safety: 0.4 }
    }
}

impl ErConfig {
    pub fn build(self, growth: Growth) -> ErTcp {
        ErTcp {
            cfg: self,
            er_cells_per_s: None,
            reno: RenoConfig { growth }.build(),
        }
    }
}

#[derive(Clone, Debug)]
pub struct ErTcp {
    cfg: ErConfig,
    /// The latest ER seen, cells/s.
    er_cells_per_s: Option<f64>,
    reno: Reno,
}

/// The paper's window in bytes for an ER in cells/s, an RTT in seconds and MSS in bytes.
pub fn er_window(er_cells_per_s: f64, rtt_s: f64, mss: f64, safety: f64) -> f64 {
    let er_bits = er_cells_per_s * 53.0 * 8.0;
    er_bits * (48.0 / 53.0) * (31.0 / 32.0) * (mss / (mss + OVERHEAD_BYTES)) * rtt_s * safety / 8.0
}

impl ErTcp {
    pub fn explicit_rate(&self) -> Option<f64> {
        self.er_cells_per_s
    }
}

impl CongestionControl for ErTcp {
    fn name(&self) -> &'static str {
        "er"
    }

    fn on_ack(&mut self, now: SimTime, ev: &AckEvent, w: &mut Window) {
        if let CcHeader::ExplicitRate { cells_per_s } = ev.echo {
            self.er_cells_per_s = Some(cells_per_s as f64);
        }
        if w.in_slow_start() {
            // Slow start ends after the first packet.
            w.ssthresh = w.cwnd;
        }
        match (self.er_cells_per_s, ev.srtt) {
            (Some(er), Some(rtt)) => {
                let bytes = er_window(er, rtt.as_secs_f64(), ev.mss as f64, self.cfg.safety);
                w.cwnd = (bytes as u64).max(ev.mss);
            }
            _ => self.reno.on_ack(now, ev, w),
        }
    }

    fn on_congestion(&mut self, now: SimTime, ev: &CongestionEvent) -> u64 {
        self.reno.on_congestion(now, ev)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::SimDuration;

    fn ack(echo: CcHeader, srtt_ms: Option<u64>) -> AckEvent {
        AckEvent {
            bytes_acked: 9140,
            snd_una: 9140,
            flight_size: 9140,
            mss: 9140,
            rtt_sample: None,
            srtt: srtt_ms.map(SimDuration::from_millis),
            min_rtt: None,
            echo,
        }
    }

    #[test]
    fn the_window_follows_the_papers_rule_for_a_given_er_and_rtt() {
        let mut c = ErConfig { safety: 0.4 }.build(Growth::Rfc5681);
        let mut w = Window {
            cwnd: 9140,
            ssthresh: u64::MAX,
        };
        // ER = 150 Mbit/s of cells, RTT 10 ms, MSS 9,140 B.
        let er = 150e6 / 424.0;
        c.on_ack(
            SimTime::ZERO,
            &ack(
                CcHeader::ExplicitRate {
                    cells_per_s: er as f32,
                },
                Some(10),
            ),
            &mut w,
        );
        let expected = 150e6 * 48.0 / 53.0 * 31.0 / 32.0 * 9140.0 / 9196.0 * 0.010 * 0.4 / 8.0;
        assert!(
            (w.cwnd as f64 - expected).abs() < 2.0,
            "{} vs {expected}",
            w.cwnd
        );
        assert_eq!(w.ssthresh, 9140, "slow start ended after the first packet");
        // A later ACK without a new ER keeps using the last one with the new RTT.
        c.on_ack(SimTime::ZERO, &ack(CcHeader::None, Some(20)), &mut w);
        assert!((w.cwnd as f64 - 2.0 * expected).abs() < 4.0);
    }

    #[test]
    fn a_loss_halves_the_flight_as_reno_does() {
        let mut c = ErConfig::default().build(Growth::Rfc5681);
        let ev = CongestionEvent {
            kind: super::super::CongestionKind::DupAck,
            flight_size: 20 * 9140,
            window: Window {
                cwnd: 20 * 9140,
                ssthresh: 9140,
            },
            mss: 9140,
        };
        assert_eq!(c.on_congestion(SimTime::ZERO, &ev), 10 * 9140);
    }

    #[test]
    fn without_an_er_the_window_grows_as_reno_congestion_avoidance() {
        let mut c = ErConfig::default().build(Growth::Rfc5681);
        let mut w = Window {
            cwnd: 2 * 9140,
            ssthresh: u64::MAX,
        };
        c.on_ack(SimTime::ZERO, &ack(CcHeader::None, Some(10)), &mut w);
        assert_eq!(w.ssthresh, 2 * 9140);
        assert_eq!(w.cwnd, 2 * 9140 + 9140 / 2);
    }
}
