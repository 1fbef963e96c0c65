// SPDX-License-Identifier: MIT
//! The one test driver every controller's tests use (quiche's `test_sender.rs` idea): a model
//! of the endpoint's side of the trait, without a network.
//!
//! The model sender always has data and keeps its window full of whole segments: after each ACK
//! it sends up to SND.UNA + ⌊cwnd/SMSS⌋·SMSS. It then does what `tcp::sender` does around each hook: ACK events carry
//! FlightSize = SND.MAX − SND.UNA (before refilling), the RTT sample, a smoothed RTT
//! (RFC 6298, gain 1/8) and the minimum RTT; after `on_ack` cwnd is floored at one segment; a
//! loss applies the returned ssthresh and sets cwnd as NewReno/SACK recovery leaves it
//! (cwnd = ssthresh) or, for a timeout, to one segment.

use super::{AckEvent, CongestionControl, CongestionEvent, CongestionKind, Window};
use crate::packet::CcHeader;
use crate::time::{SimDuration, SimTime};

pub(crate) struct Driver<C> {
    pub cc: C,
    pub w: Window,
    pub now: SimTime,
    pub mss: u64,
    /// The path's RTT: what `round` samples.
    pub rtt: SimDuration,
    pub snd_una: u64,
    pub snd_max: u64,
    pub min_rtt: Option<SimDuration>,
    pub srtt: Option<SimDuration>,
    /// In fast recovery: ACKs do not reach `on_ack`.
    pub in_recovery: bool,
}

impl<C: CongestionControl> Driver<C> {
    /// A sender with `cwnd_segments` outstanding and the given ssthresh (bytes).
    pub fn new(cc: C, mss: u64, cwnd_segments: u64, ssthresh: u64, rtt: SimDuration) -> Self {
        let cwnd = cwnd_segments * mss;
        Driver {
            cc,
            w: Window { cwnd, ssthresh },
            now: SimTime::ZERO,
            mss,
            rtt,
            snd_una: 0,
            snd_max: cwnd_segments * mss,
            min_rtt: None,
            srtt: None,
            in_recovery: false,
        }
    }

    /// One ACK of `bytes` new bytes at the current time.
    pub fn ack(&mut self, bytes: u64, rtt_sample: Option<SimDuration>) {
        self.ack_raw(bytes, rtt_sample);
    }

    /// As [`Self::ack`], returning the window as the controller left it, before the endpoint's
    /// one-segment floor (None if the ACK arrived during loss recovery, when the endpoint does
    /// not call `on_ack`).
    pub fn ack_raw(&mut self, bytes: u64, rtt_sample: Option<SimDuration>) -> Option<Window> {
        if let Some(r) = rtt_sample {
            self.min_rtt = Some(self.min_rtt.map_or(r, |m| m.min(r)));
            // RFC 6298 (2.3): SRTT <- 7/8 SRTT + 1/8 R'.
            self.srtt = Some(self.srtt.map_or(r, |s| {
                SimDuration::from_nanos(s.as_nanos() / 8 * 7 + r.as_nanos() / 8)
            }));
        }
        self.snd_una = self.snd_una.saturating_add(bytes);
        self.snd_max = self.snd_max.max(self.snd_una);
        if self.in_recovery {
            return None;
        }
        let ev = AckEvent {
            bytes_acked: bytes,
            snd_una: self.snd_una,
            flight_size: self.snd_max - self.snd_una,
            mss: self.mss,
            rtt_sample,
            srtt: self.srtt,
            min_rtt: self.min_rtt,
            echo: CcHeader::None,
        };
        self.cc.on_ack(self.now, &ev, &mut self.w);
        let raw = self.w;
        // tcp::sender floors cwnd at one segment after every on_ack.
        self.w.cwnd = self.w.cwnd.max(self.mss);
        self.refill();
        Some(raw)
    }

    /// Sends new whole segments while the window allows.
    fn refill(&mut self) {
        let window = self.w.cwnd / self.mss * self.mss;
        self.snd_max = self.snd_max.max(self.snd_una.saturating_add(window));
    }

    /// One RTT: an ACK for each segment outstanding now, spread evenly over `self.rtt`, each
    /// sampling it. Returns the number of ACKs.
    pub fn round(&mut self) -> u64 {
        let n = ((self.snd_max - self.snd_una) / self.mss).max(1);
        let start = self.now;
        for i in 1..=n {
            self.now = start + SimDuration::from_nanos(self.rtt.as_nanos() * i / n);
            self.ack(self.mss, Some(self.rtt));
        }
        n
    }

    /// A congestion event with FlightSize = cwnd; then cwnd as the endpoint sets it: ssthresh
    /// at the end of fast recovery (and `on_recovery_end`), one segment after a timeout.
    /// Returns the ssthresh the controller chose.
    pub fn loss(&mut self, kind: CongestionKind) -> u64 {
        let ssthresh = self
            .congestion(kind, self.w.cwnd)
            .expect("loss() is called outside recovery");
        if kind != CongestionKind::Rto {
            self.recovery_end();
        }
        ssthresh
    }

    /// What `tcp::sender` does on a congestion signal: outside recovery it asks the controller
    /// for ssthresh (returned) and applies it; a timeout also sets cwnd to one segment and ends
    /// any recovery; fast retransmit (or ECN) enters recovery with cwnd = ssthresh (RFC 6675).
    /// Inside recovery a duplicate-ACK signal is ignored, and a timeout is reported to the
    /// controller but keeps the recovery's ssthresh (RFC 5681 §3.1, as the endpoint).
    pub fn congestion(&mut self, kind: CongestionKind, flight_size: u64) -> Option<u64> {
        if self.in_recovery && kind == CongestionKind::Rto {
            let ev = CongestionEvent {
                kind,
                flight_size,
                window: self.w,
                mss: self.mss,
            };
            self.cc.on_congestion(self.now, &ev);
        }
        let asked = if self.in_recovery {
            None
        } else {
            let ev = CongestionEvent {
                kind,
                flight_size,
                window: self.w,
                mss: self.mss,
            };
            let ssthresh = self.cc.on_congestion(self.now, &ev);
            self.w.ssthresh = ssthresh;
            Some(ssthresh)
        };
        if kind == CongestionKind::Rto {
            self.w.cwnd = self.mss;
            self.in_recovery = false;
        } else if asked.is_some() {
            self.w.cwnd = self.w.ssthresh;
            self.in_recovery = true;
        }
        self.snd_max = self.snd_una;
        self.refill();
        asked
    }

    /// The recovery point was acknowledged: cwnd = ssthresh, then `on_recovery_end`.
    pub fn recovery_end(&mut self) {
        if self.in_recovery {
            self.in_recovery = false;
            self.w.cwnd = self.w.ssthresh.max(self.mss);
            self.cc.on_recovery_end(self.now, &mut self.w);
            self.w.cwnd = self.w.cwnd.max(self.mss);
        }
    }

    pub fn segments(&self) -> f64 {
        self.w.cwnd as f64 / self.mss as f64
    }
}
