// SPDX-License-Identifier: MIT
//! CUBIC as ns-3.48's `TcpCubic` computes it (`model = "ns3"`): the curve of RFC 9438 in whole
//! segments, turned into a count of acknowledged segments per increase, as Linux 2.6's
//! `bictcp_update`, from which ns-3's class was ported, does.
//!
//! ```text
//!   per call of IncreaseWindow(segmentsAcked) in congestion avoidance:
//!     cwnd_cnt += segmentsAcked
//!     cnt = Update():  target = origin ± ⌊C·|t − K|³⌋       (integers; t = now − epoch + min RTT)
//!                      cnt = cwnd / (target − cwnd), or 100·cwnd if target <= cwnd
//!                      TCP-friendly: tcp_cwnd += 1 per ⌊15·cwnd / 8⌋ counted segments;
//!                      if tcp_cwnd > cwnd, cnt <= cwnd / (tcp_cwnd − cwnd);   cnt >= 2
//!     if cwnd_cnt >= cnt: cwnd += 1 segment, cwnd_cnt −= cnt
//! ```
//!
//! Where it parts from the real-valued model of `cubic.rs`: windows are whole segments, so
//! right after a loss at a few segments the target is often at or below cwnd (no growth from
//! the curve); the TCP-friendly window moves a whole segment at a time and cwnd then follows it
//! one segment per `cnt` (RFC 9438 §4.3 sets cwnd = W_est at once); at most one segment per
//! call; the curve is read at t + the smallest smoothed RTT (`m_delayMin`, fed with SRTT by
//! `ProcessAck`), not t + SRTT; and a timeout keeps W_max (`CubicReset` leaves
//! `m_lastMaxCwnd`; RFC 9438 §4.8 restarts from the window at the next stage). ssthresh is
//! ⌊β·cwnd⌋ segments, at least 2 (`GetSsThresh`). HyStart is not modelled (the ns-3 driver
//! turns it off).

use super::{AckEvent, CongestionEvent, CongestionKind, Window};
use crate::time::{SimDuration, SimTime};

/// ns-3's `CubicDelta`: delay samples within this time of an epoch's start are discarded.
const CUBIC_DELTA: SimDuration = SimDuration::from_millis(10);
/// ns-3's `CntClamp`: before the first loss, at least one increase per 20 segments.
const CNT_CLAMP: u32 = 20;

/// The counters of ns-3's `TcpCubic` (its member names in the comments).
#[derive(Clone, Debug, Default)]
pub(crate) struct Ns3Counts {
    /// `m_epochStart`.
    epoch: Option<SimTime>,
    /// `m_ackCnt`: segments counted for the TCP-friendly window.
    ack_cnt: u32,
    /// `m_tcpCwnd`, segments.
    tcp_cwnd: u32,
    /// `m_cWndCnt`: segments counted towards the next increase (a loss does not clear it).
    cwnd_cnt: u32,
    /// `m_lastMaxCwnd`, segments.
    last_max: u32,
    /// `m_bicK`, seconds.
    k: f64,
    /// `m_bicOriginPoint`, segments.
    origin: u32,
    /// `m_delayMin`.
    delay_min: Option<SimDuration>,
    /// `m_bytesAckedNotProcessed` of `ProcessAck`: bytes short of a whole segment, carried.
    bytes_not_counted: u64,
}

impl Ns3Counts {
    /// `PktsAcked` with the SRTT `ProcessAck` passes: the smallest one seen, except within
    /// `CUBIC_DELTA` of an epoch's start.
    pub(crate) fn on_rtt(&mut self, now: SimTime, srtt: Option<SimDuration>) {
        let Some(r) = srtt else { return };
        if self
            .epoch
            .is_some_and(|e| now.saturating_since(e) < CUBIC_DELTA)
        {
            return;
        }
        if self.delay_min.is_none_or(|m| m > r) {
            self.delay_min = Some(r);
        }
    }

    /// `IncreaseWindow` in congestion avoidance: one segment at most.
    pub(crate) fn on_ack(
        &mut self,
        now: SimTime,
        ev: &AckEvent,
        w: &mut Window,
        c: f64,
        beta: f64,
        tcp_friendly: bool,
    ) {
        let mss = ev.mss.max(1);
        // `ProcessAck` hands over whole segments and keeps the bytes short of one.
        let bytes = ev.bytes_acked.saturating_add(self.bytes_not_counted);
        self.bytes_not_counted = bytes % mss;
        let segments = u32::try_from(bytes / mss).unwrap_or(u32::MAX);
        if segments == 0 {
            return;
        }
        let seg_cwnd = u32::try_from(w.cwnd / mss).unwrap_or(u32::MAX).max(1);
        self.cwnd_cnt = self.cwnd_cnt.saturating_add(segments);
        let cnt = self.update(now, seg_cwnd, segments, c, beta, tcp_friendly);
        if self.cwnd_cnt >= cnt {
            w.cwnd = w.cwnd.saturating_add(mss);
            self.cwnd_cnt -= cnt;
        }
    }

    /// `Update`: the number of segments to count for one segment of growth.
    fn update(
        &mut self,
        now: SimTime,
        seg_cwnd: u32,
        segments: u32,
        c: f64,
        beta: f64,
        tcp_friendly: bool,
    ) -> u32 {
        self.ack_cnt = self.ack_cnt.saturating_add(segments);
        let epoch = match self.epoch {
            Some(e) => e,
            None => {
                self.epoch = Some(now);
                self.ack_cnt = segments;
                self.tcp_cwnd = seg_cwnd;
                if self.last_max <= seg_cwnd {
                    self.k = 0.0;
                    self.origin = seg_cwnd;
                } else {
                    self.k = libm::cbrt(f64::from(self.last_max - seg_cwnd) / c);
                    self.origin = self.last_max;
                }
                now
            }
        };
        let t = now.saturating_since(epoch).as_secs_f64()
            + self.delay_min.map_or(0.0, |d| d.as_secs_f64());
        let offs = (t - self.k).abs();
        // `delta = m_c * std::pow(offs, 3)` into an unsigned integer.
        let delta = (c * offs * offs * offs) as u32;
        let target = if t < self.k {
            self.origin.saturating_sub(delta)
        } else {
            self.origin.saturating_add(delta)
        };
        let mut cnt = if target > seg_cwnd {
            seg_cwnd / (target - seg_cwnd)
        } else {
            seg_cwnd.saturating_mul(100)
        };
        if self.last_max == 0 && cnt > CNT_CLAMP {
            cnt = CNT_CLAMP;
        }
        if tcp_friendly {
            // One segment of the TCP-friendly window per cwnd/α_cubic counted segments (RFC
            // 9438 §4.3's α per window), in ns-3's integers: scale = ⌊8(1024 + 1024β) / (3(1024
            // − 1024β))⌋ (15 for β = 0.7), then (cwnd·scale) >> 3.
            let scale = (8.0 * (1024.0 + beta * 1024.0) / 3.0 / (1024.0 - beta * 1024.0)) as u32;
            let per_segment = (seg_cwnd.saturating_mul(scale) >> 3).max(1);
            while self.ack_cnt > per_segment {
                self.ack_cnt -= per_segment;
                self.tcp_cwnd += 1;
            }
            if self.tcp_cwnd > seg_cwnd {
                cnt = cnt.min(seg_cwnd / (self.tcp_cwnd - seg_cwnd));
            }
        }
        // At most one segment per two acknowledged: 1.5 times per RTT.
        cnt.max(2)
    }

    /// `GetSsThresh` (W_max, fast convergence, the end of the epoch) and, for a timeout,
    /// `CubicReset`; returns ssthresh in bytes.
    pub(crate) fn on_congestion(&mut self, ev: &CongestionEvent, beta: f64, fast: bool) -> u64 {
        let mss = ev.mss.max(1);
        let seg_cwnd = u32::try_from(ev.window.cwnd / mss).unwrap_or(u32::MAX);
        self.last_max = if seg_cwnd < self.last_max && fast {
            (f64::from(seg_cwnd) * (1.0 + beta) / 2.0) as u32
        } else {
            seg_cwnd
        };
        self.epoch = None;
        if ev.kind == CongestionKind::Rto {
            // `CongestionStateSet(CA_LOSS)`: W_max is kept.
            self.ack_cnt = 0;
            self.tcp_cwnd = 0;
            self.delay_min = None;
        }
        ((f64::from(seg_cwnd) * beta) as u64).max(2) * mss
    }
}

#[cfg(test)]
mod tests {
    use crate::cc::testkit::Driver;
    use crate::cc::{CongestionKind, Cubic, CubicConfig, CubicModel, Growth};
    use crate::time::SimDuration;

    const MSS: u64 = 1000;

    /// A CUBIC flow in congestion avoidance at `segments` (cwnd = ssthresh), no RTT sample yet.
    fn driver(model: CubicModel, segments: u64) -> Driver<Cubic> {
        let cfg = CubicConfig {
            model,
            ..CubicConfig::default()
        };
        Driver::new(
            cfg.build(Growth::ByteCounting {
                limit_segments: u32::MAX,
            }),
            MSS,
            segments,
            segments * MSS,
            SimDuration::from_millis(20),
        )
    }

    #[test]
    fn ns3s_cubic_reduces_to_whole_segments() {
        // GetSsThresh: max(⌊0.7 · 5⌋, 2) = 3 segments; RFC 9438 §4.6 in bytes: 3.5.
        let mut d = driver(CubicModel::Ns3, 5);
        assert_eq!(d.congestion(CongestionKind::DupAck, 5 * MSS), Some(3 * MSS));
        let mut d = driver(CubicModel::Rfc9438, 5);
        assert_eq!(d.congestion(CongestionKind::DupAck, 5 * MSS), Some(3500));
    }

    #[test]
    fn ns3s_cubic_adds_one_segment_per_ack_and_carries_the_rest_of_its_count() {
        // Before any loss (m_lastMaxCwnd 0) at cwnd 20 and t = 0: the curve's target is cwnd,
        // so cnt = 100·20 clamped to CntClamp 20. One ACK of 40 segments: the TCP-friendly
        // count passes (20·15) >> 3 = 37 once (tcp_cwnd 21, cnt = min(20, 20/1) = 20), and the
        // 40 counted segments give one segment, 20 carried (m_cWndCnt −= cnt).
        let mut d = driver(CubicModel::Ns3, 20);
        d.ack(40 * MSS, None);
        assert_eq!(d.w.cwnd, 21 * MSS);
        // The next ACK of one segment: 21 counted ≥ cnt 20, another segment.
        d.ack(MSS, None);
        assert_eq!(d.w.cwnd, 22 * MSS);
        // And one more: 1 counted, nothing.
        d.ack(MSS, None);
        assert_eq!(d.w.cwnd, 22 * MSS);
    }

    #[test]
    fn acks_of_half_a_segment_count_as_whole_segments_in_pairs() {
        // ProcessAck hands IncreaseWindow whole segments and carries the bytes short of one
        // (m_bytesAckedNotProcessed); a call with no whole segment changes nothing.
        let mut halves = driver(CubicModel::Ns3, 20);
        let mut wholes = driver(CubicModel::Ns3, 20);
        for _ in 0..50 {
            halves.ack(MSS / 2, None);
            halves.ack(MSS / 2, None);
            wholes.ack(MSS, None);
        }
        assert!(wholes.w.cwnd > 20 * MSS);
        assert_eq!(halves.w.cwnd, wholes.w.cwnd);
    }
}
