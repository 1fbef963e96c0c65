// SPDX-License-Identifier: MIT
//! Reno AIMD (RFC 5681 §3.1): slow start below ssthresh, one segment per RTT above it, half the
//! flight on loss. Reno, NewReno and SACK senders share this algorithm; they differ in loss
//! recovery, which the endpoint runs.
//!
//! Three window-growth rules, because papers disagree and the difference matters (a base station
//! that splits ACKs, paper 001, gains only under per-ACK growth):
//!
//! | rule | slow start, per ACK | congestion avoidance |
//! |---|---|---|
//! | `PerAck` (ns-2, Jacobson 1988) | + SMSS | + SMSS²/cwnd per ACK |
//! | `Rfc5681` | + min(N, SMSS) | + SMSS²/cwnd per ACK (eq. 3) |
//! | `ByteCounting` (RFC 3465) | + min(N, L·SMSS) | + SMSS once cwnd bytes are acked |
//!
//! N is the number of bytes the ACK newly acknowledges.

use super::Growth;
use super::{AckEvent, CcMetrics, CongestionControl, CongestionEvent, Window};
use crate::time::SimTime;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RenoConfig {
    pub growth: Growth,
}

impl Default for RenoConfig {
    fn default() -> Self {
        RenoConfig {
            growth: Growth::Rfc5681,
        }
    }
}

impl RenoConfig {
    pub fn build(self) -> Reno {
        Reno {
            growth: self.growth,
            ca_fraction: 0.0,
            bytes_acked: 0,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Reno {
    growth: Growth,
    /// Fractional bytes of congestion-avoidance growth not yet added to cwnd (per-ACK rules):
    /// SMSS²/cwnd is often below one byte at large windows, and dropping it would stall growth.
    ca_fraction: f64,
    /// RFC 3465 §2.1 bytes_acked accumulator (byte counting only).
    bytes_acked: u64,
}

impl Reno {
    /// Puts back a byte-counting accumulator a reduction cleared (HighSpeed's
    /// `count_after_loss = "keep"`).
    pub(crate) fn restore_bytes_acked(&mut self, bytes: u64) {
        self.bytes_acked = bytes;
    }
}

impl CongestionControl for Reno {
    fn name(&self) -> &'static str {
        "reno"
    }

    fn on_ack(&mut self, _now: SimTime, ev: &AckEvent, w: &mut Window) {
        let smss = ev.mss;
        if w.in_slow_start() {
            let inc = match self.growth {
                Growth::PerAck => smss,
                // RFC 5681 §3.1: cwnd += min(N, SMSS).
                Growth::Rfc5681 => ev.bytes_acked.min(smss),
                // RFC 3465 §2.2: cwnd += min(N, L*SMSS).
                Growth::ByteCounting { limit_segments } => {
                    ev.bytes_acked.min(limit_segments as u64 * smss)
                }
            };
            w.cwnd = w.cwnd.saturating_add(inc);
            return;
        }
        match self.growth {
            Growth::PerAck | Growth::Rfc5681 => {
                // RFC 5681 eq. (3): cwnd += SMSS*SMSS/cwnd on every ACK.
                self.ca_fraction += (smss * smss) as f64 / w.cwnd.max(1) as f64;
                let whole = self.ca_fraction.floor();
                self.ca_fraction -= whole;
                w.cwnd = w.cwnd.saturating_add(whole as u64);
            }
            Growth::ByteCounting { .. } => {
                // RFC 3465 §2.1: add SMSS when bytes_acked reaches cwnd.
                self.bytes_acked += ev.bytes_acked;
                if self.bytes_acked >= w.cwnd {
                    self.bytes_acked -= w.cwnd;
                    w.cwnd = w.cwnd.saturating_add(smss);
                }
            }
        }
    }

    fn on_congestion(&mut self, _now: SimTime, ev: &CongestionEvent) -> u64 {
        // RFC 3465 §2.1 counts the bytes acknowledged towards the next increase of this
        // window; a reduction starts the count again.
        self.bytes_acked = 0;
        self.ca_fraction = 0.0;
        // RFC 5681 eq. (4): ssthresh = max(FlightSize / 2, 2*SMSS).
        (ev.flight_size / 2).max(2 * ev.mss)
    }

    fn metrics(&self) -> CcMetrics {
        CcMetrics {
            bytes_acked_accumulator: self.bytes_acked,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::CongestionKind;
    use crate::packet::CcHeader;

    const MSS: u64 = 1000;

    fn ack(bytes: u64, cwnd: u64) -> AckEvent {
        AckEvent {
            bytes_acked: bytes,
            snd_una: 0,
            flight_size: cwnd,
            mss: MSS,
            rtt_sample: None,
            srtt: None,
            min_rtt: None,
            echo: CcHeader::None,
        }
    }

    fn one_rtt(cc: &mut Reno, w: &mut Window, acks: u64, bytes_per_ack: u64) {
        for _ in 0..acks {
            let e = ack(bytes_per_ack, w.cwnd);
            cc.on_ack(SimTime::ZERO, &e, w);
        }
    }

    #[test]
    fn slow_start_doubles_the_window_each_rtt_with_an_ack_per_segment() {
        let mut cc = RenoConfig::default().build();
        let mut w = Window {
            cwnd: MSS,
            ssthresh: u64::MAX,
        };
        for k in 1..=5 {
            let segs = w.cwnd / MSS;
            one_rtt(&mut cc, &mut w, segs, MSS);
            assert_eq!(w.cwnd, MSS << k);
        }
    }

    #[test]
    fn congestion_avoidance_adds_about_one_segment_per_rtt() {
        for growth in [
            Growth::PerAck,
            Growth::Rfc5681,
            Growth::ByteCounting { limit_segments: 2 },
        ] {
            let mut cc = RenoConfig { growth }.build();
            let mut w = Window {
                cwnd: 10 * MSS,
                ssthresh: 10 * MSS,
            };
            one_rtt(&mut cc, &mut w, 10, MSS);
            assert!(
                (10 * MSS + 900..=11 * MSS).contains(&w.cwnd),
                "{growth:?}: {}",
                w.cwnd
            );
        }
    }

    #[test]
    fn split_acks_grow_per_ack_windows_but_not_byte_counting_ones() {
        // Paper 001's point: ten ACKs of 100 bytes each for one segment.
        let start = Window {
            cwnd: 2 * MSS,
            ssthresh: u64::MAX,
        };
        let mut per_ack = RenoConfig {
            growth: Growth::PerAck,
        }
        .build();
        let mut w1 = start;
        one_rtt(&mut per_ack, &mut w1, 10, 100);
        assert_eq!(w1.cwnd, 12 * MSS);
        let mut abc = RenoConfig {
            growth: Growth::ByteCounting { limit_segments: 2 },
        }
        .build();
        let mut w2 = start;
        one_rtt(&mut abc, &mut w2, 10, 100);
        assert_eq!(w2.cwnd, 3 * MSS);
        let mut rfc = RenoConfig::default().build();
        let mut w3 = start;
        one_rtt(&mut rfc, &mut w3, 10, 100);
        assert_eq!(w3.cwnd, 3 * MSS);
    }

    #[test]
    fn ssthresh_is_half_the_flight_with_a_two_segment_floor() {
        let mut cc = RenoConfig::default().build();
        let ev = |flight| CongestionEvent {
            kind: CongestionKind::DupAck,
            flight_size: flight,
            window: Window {
                cwnd: flight,
                ssthresh: u64::MAX,
            },
            mss: MSS,
        };
        assert_eq!(cc.on_congestion(SimTime::ZERO, &ev(20 * MSS)), 10 * MSS);
        assert_eq!(cc.on_congestion(SimTime::ZERO, &ev(3 * MSS)), 2 * MSS);
    }
}
