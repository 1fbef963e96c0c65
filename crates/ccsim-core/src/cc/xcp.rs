// SPDX-License-Identifier: MIT
//! The XCP sender (Katabi, Handley, Rohrs, SIGCOMM 2002, §3.1; "KHR02"). The routers do the
//! control (see [`crate::xcp_router`]); the sender only states its window and RTT and applies
//! what comes back:
//!
//! ```text
//!   on_send:  header = { cwnd, rtt, feedback = request }     routers lower `feedback`
//!   on_ack:   cwnd = max(cwnd + echoed feedback, MSS)        the receiver echoes it
//!   on loss:  as TCP (KHR02 §3.1: "XCP ... reacts to losses as TCP does")
//! ```
//!
//! The request: KHR02 has the sender ask for (desired rate · RTT − cwnd) spread over a window's
//! packets. A bulk sender's desired rate is unbounded; we ask for one segment per packet, i.e. at
//! most a doubling per RTT (slow start's pace), so a path without any XCP router still behaves
//! like a slow-starting TCP rather than jumping to an unbounded window.

use super::{AckEvent, CcMetrics, CongestionControl, CongestionEvent, SendEvent, Window};
use crate::packet::CcHeader;
use crate::time::SimTime;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct XcpSenderConfig {
    /// Feedback requested per packet, in segments (1: at most doubling per RTT).
    pub request_segments: f64,
}

impl Default for XcpSenderConfig {
    fn default() -> Self {
        XcpSenderConfig {
            request_segments: 1.0,
        }
    }
}

impl XcpSenderConfig {
    pub fn build(self) -> XcpSender {
        XcpSender {
            cfg: self,
            feedback_applied: 0,
        }
    }
}

#[derive(Clone, Debug)]
pub struct XcpSender {
    cfg: XcpSenderConfig,
    /// Net feedback applied so far, bytes (for traces and tests).
    feedback_applied: i64,
}

impl XcpSender {
    pub fn feedback_applied(&self) -> i64 {
        self.feedback_applied
    }
}

impl CongestionControl for XcpSender {
    fn name(&self) -> &'static str {
        "xcp"
    }

    fn on_send(&mut self, _now: SimTime, ev: &SendEvent, hdr: &mut CcHeader) {
        let rtt_us = ev.srtt.map_or(0, |d| {
            (d.as_nanos() / 1000).clamp(1, u32::MAX as u64) as u32
        });
        // One segment's worth per segment: the packet's own payload length.
        let request = (self.cfg.request_segments * ev.len as f64)
            .clamp(i32::MIN as f64, i32::MAX as f64) as i32;
        *hdr = CcHeader::Xcp {
            cwnd: ev.window.cwnd.min(u32::MAX as u64) as u32,
            rtt_us,
            feedback: request,
        };
    }

    fn on_ack(&mut self, _now: SimTime, ev: &AckEvent, w: &mut Window) {
        // KHR02 §3.1: cwnd = max(cwnd + H_feedback, s).
        if let CcHeader::Xcp { feedback, .. } = ev.echo {
            self.feedback_applied += feedback as i64;
            let next = w.cwnd as i64 + feedback as i64;
            w.cwnd = next.max(ev.mss as i64) as u64;
        }
    }

    fn on_congestion(&mut self, _now: SimTime, ev: &CongestionEvent) -> u64 {
        // Losses are rare under XCP (its queue stays near empty); respond as Reno does
        // (RFC 5681 eq. (4)).
        (ev.flight_size / 2).max(2 * ev.mss)
    }

    fn metrics(&self) -> CcMetrics {
        CcMetrics::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::SimDuration;

    fn ack(echo: CcHeader) -> AckEvent {
        AckEvent {
            bytes_acked: 1000,
            snd_una: 0,
            flight_size: 10_000,
            mss: 1000,
            rtt_sample: None,
            srtt: None,
            min_rtt: None,
            echo,
        }
    }

    #[test]
    fn the_sender_states_its_window_and_rtt_and_asks_for_one_segment() {
        let mut x = XcpSenderConfig::default().build();
        let mut hdr = CcHeader::None;
        let ev = SendEvent {
            seq: 0,
            len: 1000,
            is_retransmission: false,
            window: Window {
                cwnd: 25_000,
                ssthresh: u64::MAX,
            },
            srtt: Some(SimDuration::from_millis(80)),
        };
        x.on_send(SimTime::ZERO, &ev, &mut hdr);
        assert_eq!(
            hdr,
            CcHeader::Xcp {
                cwnd: 25_000,
                rtt_us: 80_000,
                feedback: 1000
            }
        );
    }

    #[test]
    fn echoed_feedback_moves_the_window_but_never_below_one_segment() {
        let mut x = XcpSenderConfig::default().build();
        let mut w = Window {
            cwnd: 10_000,
            ssthresh: u64::MAX,
        };
        let fb = |f| CcHeader::Xcp {
            cwnd: 10_000,
            rtt_us: 1,
            feedback: f,
        };
        x.on_ack(SimTime::ZERO, &ack(fb(700)), &mut w);
        assert_eq!(w.cwnd, 10_700);
        x.on_ack(SimTime::ZERO, &ack(fb(-3_000)), &mut w);
        assert_eq!(w.cwnd, 7_700);
        x.on_ack(SimTime::ZERO, &ack(fb(-50_000)), &mut w);
        assert_eq!(w.cwnd, 1000);
        assert_eq!(x.feedback_applied(), 700 - 3_000 - 50_000);
    }
}
