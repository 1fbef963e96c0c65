// SPDX-License-Identifier: MIT
//! The data receiver of an association: cumulative TSN, out-of-order TSN ranges, duplicate
//! TSNs, delayed SACKs (§6.2) and the advertised window.
//!
//! ```text
//!   cum_tsn ─┐  received ranges above it (gap-ack blocks)
//!   ... ▓▓▓▓▓▓│░░░░▓▓▓▓░░▓▓▓▓▓▓
//!            next  └gap┘
//! ```
//!
//! In-order data is handed to the application at once, so the window the receiver advertises
//! is its buffer less the out-of-order bytes it holds. A SACK goes back to the address the
//! DATA came from, out of the address it arrived at (§6.4).

use crate::endpoint::{Endpoint, FlowCounters};
use crate::packet::{
    Addr, FlowId, Packet, Port, SctpChunk, SctpData, SctpHeader, SctpSack, Transport, DEFAULT_TTL,
};
use crate::time::SimTime;

use super::config::{SctpSpec, HEARTBEAT_BYTES, SACK_BASE};

pub struct SctpReceiverConfig {
    pub flow: FlowId,
    pub port: Port,
    pub peer_port: Port,
    pub spec: SctpSpec,
}

/// Received TSNs `first..=last` above the cumulative ack, holding `bytes` of user data.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Range {
    first: u32,
    last: u32,
    bytes: u64,
}

pub struct SctpReceiver {
    cfg: SctpReceiverConfig,
    /// The next TSN expected in order (cum TSN ack + 1).
    next: u32,
    any: bool,
    ranges: Vec<Range>,
    held: u64,
    dups: Vec<u32>,
    /// DATA packets since the last SACK.
    unacked: u32,
    sack_at: Option<SimTime>,
    /// Where the last DATA came from and arrived at: the SACK's destination and source.
    reply: (Addr, Addr),
    counters: FlowCounters,
    sacks_sent: u64,
    /// Gap blocks and duplicate TSNs that did not fit in a SACK (counted, not sent).
    gaps_left_out: u64,
    dups_left_out: u64,
}

impl SctpReceiver {
    pub fn new(cfg: SctpReceiverConfig) -> SctpReceiver {
        SctpReceiver {
            cfg,
            next: 0,
            any: false,
            ranges: Vec::new(),
            held: 0,
            dups: Vec::new(),
            unacked: 0,
            sack_at: None,
            reply: (0, 0),
            counters: FlowCounters::default(),
            sacks_sent: 0,
            gaps_left_out: 0,
            dups_left_out: 0,
        }
    }

    pub fn counters(&self) -> &FlowCounters {
        &self.counters
    }
    pub fn sacks_sent(&self) -> u64 {
        self.sacks_sent
    }
    pub fn left_out(&self) -> (u64, u64) {
        (self.gaps_left_out, self.dups_left_out)
    }
    /// The next TSN expected in order.
    pub fn next_tsn(&self) -> u32 {
        self.next
    }

    fn a_rwnd(&self) -> u32 {
        self.cfg
            .spec
            .rcv_buffer
            .saturating_sub(self.held)
            .min(u32::MAX as u64) as u32
    }

    fn deliver(&mut self, now: SimTime, bytes: u64) {
        self.counters.bytes_delivered += bytes;
        self.counters.last_delivery = Some(now);
    }

    /// Take DATA chunk `d`; returns whether it was a duplicate.
    fn on_data(&mut self, now: SimTime, d: &SctpData) -> bool {
        self.any = true;
        let tsn = d.tsn;
        if tsn < self.next || self.ranges.iter().any(|r| r.first <= tsn && tsn <= r.last) {
            self.dups.push(tsn);
            return true;
        }
        if tsn == self.next {
            self.next += 1;
            self.deliver(now, d.len as u64);
            while let Some(r) = self.ranges.first().copied() {
                if r.first != self.next {
                    break;
                }
                self.ranges.remove(0);
                self.next = r.last + 1;
                self.held -= r.bytes;
                self.deliver(now, r.bytes);
            }
            return false;
        }
        if self.held + d.len as u64 > self.cfg.spec.rcv_buffer {
            // No room for out-of-order data: dropped, not acknowledged.
            self.counters.receiver_drops += 1;
            return false;
        }
        self.held += d.len as u64;
        let len = d.len as u64;
        let at = self.ranges.partition_point(|r| r.last < tsn);
        let joins_left = at > 0 && self.ranges[at - 1].last + 1 == tsn;
        let joins_right = at < self.ranges.len() && self.ranges[at].first == tsn + 1;
        match (joins_left, joins_right) {
            (true, true) => {
                let right = self.ranges.remove(at);
                let left = &mut self.ranges[at - 1];
                left.last = right.last;
                left.bytes += right.bytes + len;
            }
            (true, false) => {
                let left = &mut self.ranges[at - 1];
                left.last = tsn;
                left.bytes += len;
            }
            (false, true) => {
                let right = &mut self.ranges[at];
                right.first = tsn;
                right.bytes += len;
            }
            (false, false) => self.ranges.insert(
                at,
                Range {
                    first: tsn,
                    last: tsn,
                    bytes: len,
                },
            ),
        }
        false
    }

    fn sack(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        let cum = self.next.wrapping_sub(1);
        let mut s = SctpSack {
            cum_tsn: cum,
            any: self.any,
            a_rwnd: self.a_rwnd(),
            packets: self.unacked.min(u8::MAX as u32) as u8,
            ..SctpSack::default()
        };
        for r in &self.ranges {
            let (a, b) = (r.first.wrapping_sub(cum), r.last.wrapping_sub(cum));
            if (s.n_gaps as usize) < SctpSack::MAX_GAPS && b <= u16::MAX as u32 {
                s.gaps[s.n_gaps as usize] = (a as u16, b as u16);
                s.n_gaps += 1;
            } else {
                self.gaps_left_out += 1;
            }
        }
        for &d in &self.dups {
            if (s.n_dups as usize) < SctpSack::MAX_DUPS {
                s.dups[s.n_dups as usize] = d;
                s.n_dups += 1;
            } else {
                self.dups_left_out += 1;
            }
        }
        self.dups.clear();
        self.unacked = 0;
        self.sack_at = None;
        self.sacks_sent += 1;
        let size = SACK_BASE + 4 * (s.n_gaps as u32 + s.n_dups as u32);
        let (dst, src) = self.reply;
        out.push(Packet {
            src,
            dst,
            size,
            dscp: 0,
            ecn: 0,
            ttl: DEFAULT_TTL,
            flow: self.cfg.flow,
            sent_at: now,
            transport: Transport::Sctp(SctpHeader {
                src_port: self.cfg.port,
                dst_port: self.cfg.peer_port,
                chunk: SctpChunk::Sack(s),
            }),
        });
    }
}

impl Endpoint for SctpReceiver {
    fn handle_packet(&mut self, now: SimTime, pkt: Packet, out: &mut Vec<Packet>) {
        let Transport::Sctp(h) = &pkt.transport else {
            return;
        };
        match &h.chunk {
            SctpChunk::Data(d) => {
                self.counters.packets_received += 1;
                self.reply = (pkt.src, pkt.dst);
                let had_gap = !self.ranges.is_empty();
                let dup = self.on_data(now, d);
                self.unacked += 1;
                // §6.2: every second packet or within sack_delay; §6.7: at once while a gap
                // exists (or one just closed), and on a duplicate.
                let gap = had_gap || !self.ranges.is_empty();
                if dup || gap || self.unacked >= self.cfg.spec.sack_frequency {
                    self.sack(now, out);
                } else if self.sack_at.is_none() {
                    self.sack_at = Some(now + self.cfg.spec.sack_delay);
                }
            }
            SctpChunk::Heartbeat(hb) => {
                let mut ack = pkt.clone();
                ack.src = pkt.dst;
                ack.dst = pkt.src;
                ack.size = HEARTBEAT_BYTES;
                ack.sent_at = now;
                ack.transport = Transport::Sctp(SctpHeader {
                    src_port: self.cfg.port,
                    dst_port: self.cfg.peer_port,
                    chunk: SctpChunk::HeartbeatAck(*hb),
                });
                out.push(ack);
            }
            _ => {}
        }
    }

    fn handle_timeout(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        if self.sack_at.is_some_and(|t| t <= now) {
            self.sack(now, out);
        }
    }

    fn poll_timeout(&self) -> Option<SimTime> {
        self.sack_at
    }
}
