// SPDX-License-Identifier: MIT
//! A ping probe: echo requests at a fixed interval, answered by an echo responder, as the
//! paper 003 authors measured R and p with `ping` before feeding a TCP model.
//!
//! ```text
//!   PingSource ── request seq k every `interval` (size B, the flow's DSCP) ──> EchoResponder
//!              <── reply seq k (same size, same DSCP, as an ICMP echo reply) ──┘
//!   sample k = (sent at, RTT or lost)      loss ratio = unanswered / sent
//! ```
//!
//! The probe's packets are UDP datagrams in ccsim (a packet has a TCP or a UDP header; the
//! ICMP echo semantics are the endpoints'); a classifier knows the probe's flows and sees
//! `protocol = "icmp"`, no ports, and not `udp`. A request
//! is counted lost if no reply came back by the end of the run; the report leaves out requests
//! sent within `timeout` of the end, whose replies could still be on their way.

use crate::endpoint::{Endpoint, FlowCounters};
use crate::packet::{Addr, FlowId, Packet, Port, Transport, UdpHeader};
use crate::time::{SimDuration, SimTime};
use crate::traffic::UDP_IP_HEADER_BYTES;

/// What a ping probe sends, from where to where, and when.
#[derive(Clone, Debug, PartialEq)]
pub struct PingConfig {
    pub addr: Addr,
    pub dst_addr: Addr,
    pub port: Port,
    pub dst_port: Port,
    pub flow: FlowId,
    pub start: SimTime,
    pub stop: Option<SimTime>,
    pub interval: SimDuration,
    /// IP bytes per request and reply.
    pub packet_size: u32,
    /// The DSCP requests carry (replies copy it).
    pub dscp: u8,
}

fn datagram(src: Addr, dst: Addr, sp: Port, dp: Port, seq: u64, size: u32, now: SimTime) -> Packet {
    Packet {
        src,
        dst,
        size,
        dscp: 0,
        ecn: 0,
        ttl: crate::packet::DEFAULT_TTL,
        flow: 0,
        sent_at: now,
        transport: Transport::Udp(UdpHeader {
            src_port: sp,
            dst_port: dp,
            seq,
            len: size.saturating_sub(UDP_IP_HEADER_BYTES),
        }),
    }
}

/// Sends echo requests and records each one's round-trip time.
#[derive(Clone, Debug)]
pub struct PingSource {
    cfg: PingConfig,
    next: SimTime,
    /// Send time of request k, and its RTT once answered.
    samples: Vec<(SimTime, Option<SimDuration>)>,
    counters: FlowCounters,
}

impl PingSource {
    pub fn new(cfg: PingConfig) -> PingSource {
        PingSource {
            next: cfg.start,
            cfg,
            samples: Vec::new(),
            counters: FlowCounters::default(),
        }
    }

    pub fn counters(&self) -> &FlowCounters {
        &self.counters
    }

    /// Every request sent: its send time and its RTT (None: no reply yet).
    pub fn samples(&self) -> &[(SimTime, Option<SimDuration>)] {
        &self.samples
    }

    fn before_stop(&self, t: SimTime) -> bool {
        self.cfg.stop.is_none_or(|s| t < s)
    }
}

impl Endpoint for PingSource {
    fn handle_packet(&mut self, now: SimTime, pkt: Packet, _out: &mut Vec<Packet>) {
        let Transport::Udp(h) = &pkt.transport else {
            return;
        };
        let Some((sent, rtt)) = self.samples.get_mut(h.seq as usize) else {
            return;
        };
        if rtt.is_some() {
            return; // a duplicate
        }
        let d = now.saturating_since(*sent);
        *rtt = Some(d);
        let c = &mut self.counters;
        c.packets_received += 1;
        c.rtt_sum_ns += d.as_nanos() as u128;
        c.rtt_samples += 1;
        c.rtt_min_ns = Some(c.rtt_min_ns.map_or(d.as_nanos(), |m| m.min(d.as_nanos())));
    }

    fn handle_timeout(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        while self.next <= now && self.before_stop(self.next) {
            let seq = self.samples.len() as u64;
            let c = &self.cfg;
            let mut p = datagram(
                c.addr,
                c.dst_addr,
                c.port,
                c.dst_port,
                seq,
                c.packet_size,
                now,
            );
            p.flow = c.flow;
            p.dscp = c.dscp;
            self.samples.push((now, None));
            let k = &mut self.counters;
            k.packets_sent += 1;
            k.wire_bytes_sent += p.size as u64;
            k.bytes_sent += p.payload_len() as u64;
            k.first_send.get_or_insert(now);
            out.push(p);
            self.next += self.cfg.interval;
        }
    }

    fn poll_timeout(&self) -> Option<SimTime> {
        self.before_stop(self.next).then_some(self.next)
    }
}

/// Answers each echo request with a reply of the same size and DSCP (RFC 792: the echo reply
/// returns the request's data; Linux copies the request's TOS into the reply).
#[derive(Clone, Debug, Default)]
pub struct EchoResponder {
    counters: FlowCounters,
}

impl EchoResponder {
    pub fn counters(&self) -> &FlowCounters {
        &self.counters
    }
}

impl Endpoint for EchoResponder {
    fn handle_packet(&mut self, now: SimTime, pkt: Packet, out: &mut Vec<Packet>) {
        let Transport::Udp(h) = &pkt.transport else {
            return;
        };
        self.counters.packets_received += 1;
        self.counters.bytes_delivered += h.len as u64;
        let mut reply = datagram(
            pkt.dst, pkt.src, h.dst_port, h.src_port, h.seq, pkt.size, now,
        );
        reply.flow = pkt.flow;
        reply.dscp = pkt.dscp;
        out.push(reply);
    }

    fn handle_timeout(&mut self, _now: SimTime, _out: &mut Vec<Packet>) {}

    fn poll_timeout(&self) -> Option<SimTime> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_gives_the_rtt_of_its_request_and_unanswered_requests_stay_lost() {
        let cfg = PingConfig {
            addr: 0,
            dst_addr: 1,
            port: 4,
            dst_port: 5,
            flow: 2,
            start: SimTime::from_millis(10),
            stop: None,
            interval: SimDuration::from_millis(100),
            packet_size: 84,
            dscp: 46,
        };
        let mut src = PingSource::new(cfg);
        let mut echo = EchoResponder::default();
        let mut out = Vec::new();
        for ms in [10, 110, 210] {
            src.handle_timeout(SimTime::from_millis(ms), &mut out);
        }
        assert_eq!(out.len(), 3, "requests at 10, 110 and 210 ms");
        assert_eq!(src.poll_timeout(), Some(SimTime::from_millis(310)));
        let mut replies = Vec::new();
        for p in out.drain(..).take(2) {
            assert_eq!((p.dscp, p.size, p.flow), (46, 84, 2));
            echo.handle_packet(SimTime::from_millis(220), p, &mut replies);
        }
        for r in replies {
            assert_eq!(r.dst, 0);
            src.handle_packet(SimTime::from_millis(240), r, &mut out);
        }
        let rtts: Vec<Option<u64>> = src
            .samples()
            .iter()
            .map(|(_, r)| r.map(|d| d.as_nanos() / 1_000_000))
            .collect();
        assert_eq!(rtts, [Some(230), Some(130), None]);
        assert_eq!(src.counters().rtt_min_ns, Some(130_000_000));
    }
}
