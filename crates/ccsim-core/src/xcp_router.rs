// SPDX-License-Identifier: MIT
//! The router half of XCP (Katabi, Handley, Rohrs, "Congestion Control for High
//! Bandwidth-Delay Product Networks", SIGCOMM 2002; "KHR02" below), as the queue discipline of
//! one link direction. A link whose queue is `type = "xcp"` is an XCP router's output port; any
//! other link leaves the congestion header alone, so XCP and non-XCP routers mix freely. The
//! sender half, which only states its window and RTT and applies the feedback, is
//! [`crate::cc::xcp`].
//!
//! ```text
//!   every control interval d (the mean RTT of the traffic):
//!     efficiency controller  φ = α·d·S − β·Q        S = spare bandwidth, Q = persistent queue
//!     shuffling              h = max(0, γ·y − |φ|)  y = traffic that arrived in the interval
//!     fairness controller    ξp = (h + max(φ, 0)) / (d · Σ rtt·s/cwnd)
//!                            ξn = (h + max(−φ, 0)) / (d · Σ s)
//!   every XCP packet (size s, its sender's cwnd and rtt):
//!     feedback = min(feedback, ξp·rtt²·s/cwnd − ξn·rtt·s)
//! ```
//!
//! Positive feedback is spread so every flow gains the same throughput (additive increase);
//! negative feedback in proportion to each flow's rate (multiplicative decrease): KHR02 §3.5.
//! The sums run over the previous interval's packets and ξ applies to the next interval's. The
//! interval closes lazily, at the first packet after its end. Q is the smallest queue an
//! arriving packet saw during the interval (KHR02 §3.4: the queue that does not drain within a
//! propagation delay). All per-packet work is O(1).

use crate::packet::{CcHeader, Packet};
use crate::time::{Rate, SimDuration, SimTime};

/// XCP parameters (KHR02 §3.4: α = 0.4 and β = 0.226 make the efficiency controller stable for
/// any capacity, delay and number of flows; §3.5: shuffle 10 % of the traffic).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct XcpConfig {
    pub alpha: f64,
    pub beta: f64,
    /// γ: the fraction of the traffic re-allocated every interval to converge to fairness.
    pub gamma: f64,
    /// Control interval before any packet has carried an RTT.
    pub initial_interval: SimDuration,
}

impl Default for XcpConfig {
    fn default() -> Self {
        XcpConfig {
            alpha: 0.4,
            beta: 0.226,
            gamma: 0.1,
            initial_interval: SimDuration::from_millis(100),
        }
    }
}

#[derive(Clone, Debug)]
pub struct XcpRouter {
    cfg: XcpConfig,
    /// Link capacity, bytes per second.
    capacity: f64,
    /// Current control interval d, seconds.
    interval: f64,
    interval_start: SimTime,
    interval_end: SimTime,
    /// Accumulators of the running interval.
    input_bytes: f64,
    sum_rtt_s: f64,
    sum_s_xcp: f64,
    sum_rtt_s_over_cwnd: f64,
    min_queue: Option<u64>,
    /// Feedback coefficients computed at the end of the previous interval.
    xi_pos: f64,
    xi_neg: f64,
    /// The last interval's aggregate feedback φ, bytes (for traces and tests).
    last_phi: f64,
}

impl XcpRouter {
    pub fn new(cfg: XcpConfig, link_rate: Rate) -> Self {
        let d = cfg.initial_interval.as_secs_f64().max(1e-6);
        XcpRouter {
            cfg,
            capacity: link_rate.bits_per_sec() as f64 / 8.0,
            interval: d,
            interval_start: SimTime::ZERO,
            interval_end: SimTime::ZERO + SimDuration::from_secs_f64(d),
            input_bytes: 0.0,
            sum_rtt_s: 0.0,
            sum_s_xcp: 0.0,
            sum_rtt_s_over_cwnd: 0.0,
            min_queue: None,
            xi_pos: 0.0,
            xi_neg: 0.0,
            last_phi: 0.0,
        }
    }

    /// The aggregate feedback φ of the last closed interval, bytes.
    pub fn last_phi(&self) -> f64 {
        self.last_phi
    }

    /// The control interval d in force, seconds.
    pub fn interval(&self) -> f64 {
        self.interval
    }

    fn close_interval(&mut self, now: SimTime) {
        let elapsed = now
            .saturating_since(self.interval_start)
            .as_secs_f64()
            .max(1e-9);
        let d = self.interval;
        // Spare bandwidth S (bytes/s) and persistent queue Q (bytes), KHR02 §3.4.
        let spare = self.capacity - self.input_bytes / elapsed;
        let q = self.min_queue.unwrap_or(0) as f64;
        let phi = self.cfg.alpha * d * spare - self.cfg.beta * q;
        // Traffic of one control interval at the measured rate.
        let y = self.input_bytes / elapsed * d;
        let h = (self.cfg.gamma * y - phi.abs()).max(0.0);
        self.xi_pos = if self.sum_rtt_s_over_cwnd > 0.0 {
            (h + phi.max(0.0)) / (d * self.sum_rtt_s_over_cwnd)
        } else {
            0.0
        };
        self.xi_neg = if self.sum_s_xcp > 0.0 {
            (h + (-phi).max(0.0)) / (d * self.sum_s_xcp)
        } else {
            0.0
        };
        self.last_phi = phi;
        // The next interval lasts the mean RTT of the traffic just seen (weighted by bytes).
        if self.sum_s_xcp > 0.0 {
            self.interval = (self.sum_rtt_s / self.sum_s_xcp).max(1e-4);
        }
        self.interval_start = now;
        self.interval_end = now + SimDuration::from_secs_f64(self.interval);
        self.input_bytes = 0.0;
        self.sum_rtt_s = 0.0;
        self.sum_s_xcp = 0.0;
        self.sum_rtt_s_over_cwnd = 0.0;
        self.min_queue = None;
    }

    /// A packet arrives at the output queue, which holds `queue_bytes` before it: account it and
    /// lower its feedback if this link needs it to.
    pub fn on_arrival(&mut self, now: SimTime, pkt: &mut Packet, queue_bytes: u64) {
        if now >= self.interval_end {
            self.close_interval(now);
        }
        self.min_queue = Some(self.min_queue.map_or(queue_bytes, |m| m.min(queue_bytes)));
        let s = pkt.size as f64;
        self.input_bytes += s;
        // Only data packets ask for feedback. A pure ACK carries the feedback echoed back to its
        // sender, which no router on the reverse path may touch (KHR02 §3.2: the receiver
        // copies H_feedback into the ACK; §3.5 applies to the data direction).
        if !pkt.is_data() {
            return;
        }
        let Some(hdr) = pkt.tcp_mut().map(|h| &mut h.cc) else {
            return;
        };
        let CcHeader::Xcp {
            cwnd,
            rtt_us,
            feedback,
        } = hdr
        else {
            return;
        };
        if *rtt_us == 0 || *cwnd == 0 {
            // A sender without an RTT estimate yet: counted as traffic, given no feedback share
            // (KHR02 §3.3: the sender sets the RTT field to zero until it has one).
            return;
        }
        let rtt = *rtt_us as f64 * 1e-6;
        let w = *cwnd as f64;
        self.sum_rtt_s += rtt * s;
        self.sum_s_xcp += s;
        self.sum_rtt_s_over_cwnd += rtt * s / w;
        let pos = self.xi_pos * rtt * rtt * s / w;
        let neg = self.xi_neg * rtt * s;
        let fb = (pos - neg).clamp(i32::MIN as f64, i32::MAX as f64) as i32;
        // KHR02 §3.5: a router only ever lowers the feedback (the bottleneck decides).
        if fb < *feedback {
            *feedback = fb;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{TcpHeader, Transport};

    fn xcp_pkt(cwnd: u32, rtt_us: u32, feedback: i32) -> Packet {
        Packet {
            src: 0,
            dst: 1,
            size: 1500,
            dscp: 0,
            ecn: 0,
            ttl: crate::packet::DEFAULT_TTL,
            flow: 0,
            sent_at: SimTime::ZERO,
            transport: Transport::Tcp(TcpHeader {
                len: 1460,
                cc: CcHeader::Xcp {
                    cwnd,
                    rtt_us,
                    feedback,
                },
                ..TcpHeader::default()
            }),
        }
    }

    fn feedback(p: &Packet) -> i32 {
        match p.tcp().map(|h| h.cc) {
            Some(CcHeader::Xcp { feedback, .. }) => feedback,
            _ => panic!("not an XCP packet"),
        }
    }

    /// Feed `rate_bps` of XCP traffic for `secs`, queue `queue_bytes`; return the last packet.
    fn drive(r: &mut XcpRouter, rate_bps: f64, secs: f64, queue_bytes: u64) -> Packet {
        let gap = 1500.0 * 8.0 / rate_bps;
        let n = (secs / gap) as u64;
        let mut last = xcp_pkt(150_000, 100_000, i32::MAX);
        for i in 0..n {
            let mut p = xcp_pkt(150_000, 100_000, i32::MAX);
            r.on_arrival(
                SimTime(((i as f64) * gap * 1e9) as u64),
                &mut p,
                queue_bytes,
            );
            last = p;
        }
        last
    }

    #[test]
    fn spare_bandwidth_gives_positive_feedback_and_the_interval_becomes_the_rtt() {
        let mut r = XcpRouter::new(XcpConfig::default(), Rate::mbps(100));
        let p = drive(&mut r, 50e6, 2.0, 0);
        assert!(r.last_phi() > 0.0, "phi {}", r.last_phi());
        assert!(feedback(&p) > 0);
        assert!((r.interval() - 0.1).abs() < 1e-9, "d = mean RTT = 100 ms");
    }

    #[test]
    fn an_overloaded_link_with_a_standing_queue_gives_negative_feedback() {
        let mut r = XcpRouter::new(XcpConfig::default(), Rate::mbps(100));
        let p = drive(&mut r, 120e6, 2.0, 200_000);
        assert!(r.last_phi() < 0.0);
        assert!(feedback(&p) < 0);
    }

    #[test]
    fn a_router_never_raises_the_feedback_a_packet_already_carries() {
        let mut r = XcpRouter::new(XcpConfig::default(), Rate::mbps(100));
        drive(&mut r, 10e6, 1.0, 0);
        let mut p = xcp_pkt(150_000, 100_000, -5);
        r.on_arrival(SimTime::from_secs(2), &mut p, 0);
        assert_eq!(feedback(&p), -5);
    }

    #[test]
    fn the_feedback_echoed_in_an_ack_passes_a_congested_reverse_port_untouched() {
        // Bug pinned: reverse-path XCP ports lowered the echo in ACKs, so reverse traffic
        // throttled the forward flows (3.6 % utilization in paper 002's set-up).
        let mut r = XcpRouter::new(XcpConfig::default(), Rate::mbps(100));
        drive(&mut r, 120e6, 2.0, 200_000);
        let mut ack = xcp_pkt(150_000, 100_000, 700);
        if let Some(h) = ack.tcp_mut() {
            h.len = 0;
            h.flags = TcpHeader::FLAG_ACK;
        }
        ack.size = 40;
        r.on_arrival(SimTime::from_secs(3), &mut ack, 200_000);
        assert_eq!(feedback(&ack), 700);
    }

    #[test]
    fn the_efficiency_controller_follows_alpha_d_s_minus_beta_q() {
        // 60 Mbit/s into 100 Mbit/s for a whole interval of 100 ms, no queue:
        // φ = 0.4 · 0.1 s · (12.5e6 − 7.5e6) B/s = 200,000 B.
        let mut r = XcpRouter::new(
            XcpConfig {
                initial_interval: SimDuration::from_millis(100),
                ..XcpConfig::default()
            },
            Rate::mbps(100),
        );
        let gap = 1500.0 * 8.0 / 60e6;
        for i in 0..=(0.1 / gap) as u64 {
            let mut p = xcp_pkt(150_000, 100_000, i32::MAX);
            r.on_arrival(SimTime(((i as f64) * gap * 1e9) as u64), &mut p, 0);
        }
        let mut p = xcp_pkt(150_000, 100_000, i32::MAX);
        r.on_arrival(SimTime::from_millis(100), &mut p, 0);
        assert!(
            (r.last_phi() - 200_000.0).abs() < 3_000.0,
            "phi {}",
            r.last_phi()
        );
    }
}
