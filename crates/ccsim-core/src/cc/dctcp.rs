// SPDX-License-Identifier: MIT
//! DCTCP (RFC 8257): a window reduction in proportion to the extent of congestion, measured as
//! the fraction of bytes whose ACKs carried ECN-Echo.
//!
//! ```text
//!   every ACK ──> on_ecn_ack: bytes_acked += N; if ECE: bytes_marked += N         (§3.3)
//!                  SND.UNA > window_end?  F = bytes_marked / bytes_acked
//!                                         alpha = (1 − g)·alpha + g·F
//!                                         counters ← 0, window_end = SND.NXT
//!   ECE, once per window ──> on_congestion(Ecn): ssthresh = cwnd·(1 − alpha/2)   (§3.4)
//!   loss (3 dupacks, RTO) ──> on_congestion: Reno's max(FlightSize/2, 2·SMSS)   (§3.5)
//!   window growth ──> Reno's rule (RFC 5681 §3.1)
//! ```
//!
//! The sender does the "at most once per window" of §3.4 (`ecn_point` in `tcp/sender.rs`, the
//! same guard as RFC 3168's) and sets cwnd = ssthresh; this controller only says how far. It
//! needs every ACK's acknowledged bytes and ECE flag, which reach it through
//! [`CongestionControl::on_ecn_ack`]; the receiver must echo CE per segment (RFC 8257 §3.2,
//! `ecn = "dctcp"`), not RFC 3168's ECE-until-CWR, or F would count the echo's tail as marks.

use super::reno::{Reno, RenoConfig};
use super::{
    AckEvent, CcMetrics, CongestionControl, CongestionEvent, CongestionKind, EcnAck, Growth, Window,
};
use crate::time::SimTime;

/// DCTCP's two constants (RFC 8257 §3.3, §4).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DctcpConfig {
    /// Estimation gain g, 0 < g ≤ 1: the weight of the newest window's marked fraction.
    /// RFC 8257 §4 recommends 1/16 (Linux's `dctcp_shift_g` = 4; ns-3's `DctcpShiftG` 0.0625).
    pub g: f64,
    /// Alpha before the first window's estimate, 0 ≤ alpha ≤ 1. RFC 8257 §3.3 leaves it to the
    /// implementation ("may be initialized to 1"); 1 as Linux's `dctcp_alpha_on_init` (1024 of
    /// 1024) and ns-3's `DctcpAlphaOnInit`: a first ECE halves the window, as RFC 3168 would.
    pub initial_alpha: f64,
}

impl Default for DctcpConfig {
    fn default() -> Self {
        DctcpConfig {
            g: 1.0 / 16.0,
            initial_alpha: 1.0,
        }
    }
}

impl DctcpConfig {
    pub fn build(self, growth: Growth) -> Dctcp {
        Dctcp {
            reno: RenoConfig { growth }.build(),
            g: self.g,
            alpha: self.initial_alpha,
            bytes_acked: 0,
            bytes_marked: 0,
            window_end: 0,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Dctcp {
    /// Growth and loss response (RFC 8257 §3.5: loss is handled as by a conventional TCP).
    reno: Reno,
    g: f64,
    /// DCTCP.Alpha: the estimated fraction of marked bytes (§3.3).
    alpha: f64,
    /// DCTCP.BytesAcked of the current observation window.
    bytes_acked: u64,
    /// DCTCP.BytesMarked of the current observation window.
    bytes_marked: u64,
    /// DCTCP.WindowEnd: the observation window ends once SND.UNA passes it. 0 at the start
    /// (SND.NXT of a connection that has sent nothing), so the first ACK ends the first window.
    window_end: u64,
}

impl Dctcp {
    /// DCTCP.Alpha now.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }
}

impl CongestionControl for Dctcp {
    fn name(&self) -> &'static str {
        "dctcp"
    }

    fn on_ack(&mut self, now: SimTime, ev: &AckEvent, w: &mut Window) {
        self.reno.on_ack(now, ev, w);
    }

    fn on_congestion(&mut self, now: SimTime, ev: &CongestionEvent) -> u64 {
        // Reno's answer also restarts its growth accumulators, which every reduction must do.
        let halved = self.reno.on_congestion(now, ev);
        if ev.kind != CongestionKind::Ecn {
            return halved;
        }
        // RFC 8257 §3.4: cwnd = cwnd × (1 − DCTCP.Alpha / 2), from the window, not FlightSize;
        // ssthresh likewise. The floor of RFC 5681 eq. (4) keeps the ACK clock alive.
        let cwnd = ev.window.cwnd as f64;
        ((cwnd * (1.0 - self.alpha / 2.0)) as u64).max(2 * ev.mss)
    }

    fn counts_ecn_acks(&self) -> bool {
        true
    }

    fn on_ecn_ack(&mut self, ev: &EcnAck) {
        // RFC 8257 §3.3 steps 1-2: count the bytes this ACK acknowledges, and the same bytes as
        // marked if it carries ECE.
        self.bytes_acked += ev.bytes_acked;
        if ev.ece {
            self.bytes_marked += ev.bytes_acked;
        }
        // Step 3: the window goes on until SND.UNA passes its end.
        if ev.snd_una <= self.window_end {
            return;
        }
        // Steps 4-5. A window whose ACKs acknowledged nothing (only possible if its end was
        // passed by the first ACK that counted nothing) leaves alpha unchanged.
        if self.bytes_acked > 0 {
            let f = self.bytes_marked as f64 / self.bytes_acked as f64;
            self.alpha = (1.0 - self.g) * self.alpha + self.g * f;
        }
        // Step 6: a new window, to SND.NXT.
        self.bytes_acked = 0;
        self.bytes_marked = 0;
        self.window_end = ev.snd_nxt;
    }

    fn metrics(&self) -> CcMetrics {
        self.reno.metrics()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn ack(dctcp: &mut Dctcp, bytes: u64, ece: bool, snd_una: u64, snd_nxt: u64) {
        dctcp.on_ecn_ack(&EcnAck {
            bytes_acked: bytes,
            ece,
            snd_una,
            snd_nxt,
        });
    }

    fn ecn_reduction(dctcp: &mut Dctcp, cwnd: u64) -> u64 {
        dctcp.on_congestion(
            SimTime::ZERO,
            &CongestionEvent {
                kind: CongestionKind::Ecn,
                flight_size: cwnd,
                window: Window {
                    cwnd,
                    ssthresh: u64::MAX,
                },
                mss: MSS,
            },
        )
    }

    #[test]
    fn alpha_follows_the_marked_fraction_of_each_window_by_the_rfc_8257_update() {
        // g = 1/4 to make the arithmetic exact by hand. Window 0 ends at the first ACK
        // (window_end 0): 1 of 1 segment marked, alpha = 0.75·1 + 0.25·1 = 1, next end 10,000.
        let mut d = DctcpConfig {
            g: 0.25,
            initial_alpha: 1.0,
        }
        .build(Growth::Rfc5681);
        ack(&mut d, MSS, true, 1000, 10_000);
        assert_eq!(d.alpha(), 1.0);
        // Window 1: ten segments, two marked (bytes 3000-5000); ends when SND.UNA passes 10,000,
        // i.e. on the ACK of 11,000. F = 2/10: alpha = 0.75 + 0.05 = 0.8.
        for i in 2..=11u64 {
            let marked = i == 4 || i == 5;
            ack(&mut d, MSS, marked, i * MSS, 20_000);
            if i < 11 {
                assert_eq!(d.alpha(), 1.0, "the window has not ended at {}", i * MSS);
            }
        }
        assert!((d.alpha() - 0.8).abs() < 1e-12, "alpha {}", d.alpha());
        // Window 2 (to 20,000): delayed ACKs of two segments each, none marked. SND.UNA
        // 21,000 ends it: F = 0, alpha = 0.75·0.8 = 0.6.
        for i in 1..=4u64 {
            ack(&mut d, 2 * MSS, false, 11_000 + 2 * i * MSS, 30_000);
        }
        assert!((d.alpha() - 0.8).abs() < 1e-12, "alpha {}", d.alpha());
        ack(&mut d, 2 * MSS, false, 21_000, 30_000);
        assert!((d.alpha() - 0.6).abs() < 1e-12, "alpha {}", d.alpha());
        // A duplicate ACK with ECE acknowledges nothing and marks nothing.
        ack(&mut d, 0, true, 21_000, 30_000);
        for i in 22..=31u64 {
            ack(&mut d, MSS, true, i * MSS, 40_000);
        }
        // Window 3 (to 30,000): 10 segments, all marked: alpha = 0.75·0.6 + 0.25 = 0.7.
        assert!((d.alpha() - 0.7).abs() < 1e-12, "alpha {}", d.alpha());
    }

    #[test]
    fn an_ecn_echo_cuts_the_window_by_half_of_alpha_and_a_loss_halves_the_flight() {
        let mut d = DctcpConfig {
            g: 0.5,
            initial_alpha: 1.0,
        }
        .build(Growth::Rfc5681);
        // alpha = 1: RFC 3168's halving.
        assert_eq!(ecn_reduction(&mut d, 100 * MSS), 50 * MSS);
        // One unmarked window: alpha = 0.5, cut by a quarter.
        ack(&mut d, MSS, false, MSS, 2 * MSS);
        assert_eq!(d.alpha(), 0.5);
        assert_eq!(ecn_reduction(&mut d, 100 * MSS), 75 * MSS);
        // Never below two segments.
        assert_eq!(ecn_reduction(&mut d, 2 * MSS), 2 * MSS);
        // RFC 8257 §3.5: a loss is Reno's: half the flight whatever alpha.
        let loss = CongestionEvent {
            kind: CongestionKind::DupAck,
            flight_size: 80 * MSS,
            window: Window {
                cwnd: 100 * MSS,
                ssthresh: u64::MAX,
            },
            mss: MSS,
        };
        assert_eq!(d.on_congestion(SimTime::ZERO, &loss), 40 * MSS);
    }
}
