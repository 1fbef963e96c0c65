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

use super::config::{SctpMode, SctpSpec, HEARTBEAT_BYTES, LS_SACK_BASE, SACK_BASE};
use super::received::{Received, Taken};

pub struct SctpReceiverConfig {
    pub flow: FlowId,
    pub port: Port,
    pub peer_port: Port,
    pub spec: SctpSpec,
}

/// LS mode: the acknowledgment state of one path (its SSN space and its own delayed SACKs).
#[derive(Default)]
struct PathAcks {
    ssns: Received,
    dups: Vec<u32>,
    unacked: u32,
    sack_at: Option<SimTime>,
    reply: (Addr, Addr),
}

pub struct SctpReceiver {
    cfg: SctpReceiverConfig,
    /// The TSNs received: what the application got in order and what is held above a gap.
    tsns: Received,
    any: bool,
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
    /// LS mode only: per path (SID).
    ls: Vec<PathAcks>,
}

impl SctpReceiver {
    pub fn new(cfg: SctpReceiverConfig) -> SctpReceiver {
        SctpReceiver {
            cfg,
            tsns: Received::default(),
            any: false,
            dups: Vec::new(),
            unacked: 0,
            sack_at: None,
            reply: (0, 0),
            counters: FlowCounters::default(),
            sacks_sent: 0,
            gaps_left_out: 0,
            dups_left_out: 0,
            ls: Vec::new(),
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
        self.tsns.next
    }

    fn a_rwnd(&self) -> u32 {
        self.cfg
            .spec
            .rcv_buffer
            .saturating_sub(self.tsns.held)
            .min(u32::MAX as u64) as u32
    }

    fn deliver(&mut self, now: SimTime, bytes: u64) {
        self.counters.bytes_delivered += bytes;
        self.counters.last_delivery = Some(now);
    }

    /// Take DATA chunk `d`; returns whether it was a duplicate.
    fn on_data(&mut self, now: SimTime, d: &SctpData) -> bool {
        self.any = true;
        let len = d.len as u64;
        let above_gap = d.tsn != self.tsns.next && !self.tsns.has(d.tsn);
        if above_gap && self.tsns.held + len > self.cfg.spec.rcv_buffer {
            // No room for out-of-order data: dropped, not acknowledged.
            self.counters.receiver_drops += 1;
            return false;
        }
        match self.tsns.take(d.tsn, len) {
            Taken::Duplicate => {
                self.dups.push(d.tsn);
                self.counters.duplicate_segments += 1;
                true
            }
            Taken::InOrder(bytes) => {
                self.deliver(now, bytes);
                false
            }
            Taken::OutOfOrder => false,
        }
    }

    /// LS mode: a DATA chunk on path `d.sid`; SACKs by that path's own rules.
    fn on_ls_data(&mut self, now: SimTime, pkt: &Packet, d: &SctpData, out: &mut Vec<Packet>) {
        let i = d.sid as usize;
        if self.ls.len() <= i {
            self.ls.resize_with(i + 1, PathAcks::default);
        }
        let len = d.len as u64;
        let above_gap = d.tsn != self.tsns.next && !self.tsns.has(d.tsn);
        if above_gap && self.tsns.held + len > self.cfg.spec.rcv_buffer {
            self.counters.receiver_drops += 1;
            return;
        }
        self.any = true;
        // A TSN the receiver already has is a needless copy whichever path brought it (a
        // redundant retransmission that its original resend beat, seed 004 §3.6): counted as
        // TCP's receiver counts a duplicate segment. The SSN below may still be new to its path.
        match self.tsns.take(d.tsn, len) {
            Taken::InOrder(bytes) => self.deliver(now, bytes),
            Taken::Duplicate => self.counters.duplicate_segments += 1,
            Taken::OutOfOrder => {}
        }
        let p = &mut self.ls[i];
        p.reply = (pkt.src, pkt.dst);
        let had_gap = !p.ssns.ranges.is_empty();
        let dup = p.ssns.take(d.ssn, 0) == Taken::Duplicate;
        if dup {
            p.dups.push(d.ssn);
        }
        p.unacked += 1;
        let gap = had_gap || !p.ssns.ranges.is_empty();
        if dup || gap || p.unacked >= self.cfg.spec.sack_frequency {
            self.ls_sack(i, now, out);
        } else if p.sack_at.is_none() {
            p.sack_at = Some(now + self.cfg.spec.sack_delay);
        }
    }

    /// The paper's SACK (seed 004 Fig. 4) for path `i`: Cumulative TSN Ack, Cumulative SSN Ack,
    /// a_rwnd, gap blocks and duplicates in the path's SSNs; 20 + 4N + 4X bytes of chunk.
    fn ls_sack(&mut self, i: usize, now: SimTime, out: &mut Vec<Packet>) {
        let a_rwnd = self.a_rwnd();
        let cum_tsn = self.tsns.next.wrapping_sub(1);
        let p = &mut self.ls[i];
        let mut s = SctpSack {
            cum_tsn,
            any: true,
            a_rwnd,
            packets: p.unacked.min(u8::MAX as u32) as u8,
            sid: i as u16,
            cum_ssn: p.ssns.next.wrapping_sub(1),
            ..SctpSack::default()
        };
        self.gaps_left_out += p.ssns.gap_blocks(&mut s.gaps, &mut s.n_gaps, true);
        for &d in &p.dups {
            if (s.n_dups as usize) < SctpSack::MAX_DUPS {
                s.dups[s.n_dups as usize] = d;
                s.n_dups += 1;
            } else {
                self.dups_left_out += 1;
            }
        }
        p.dups.clear();
        p.unacked = 0;
        p.sack_at = None;
        self.sacks_sent += 1;
        let size = LS_SACK_BASE + 4 * (s.n_gaps as u32 + s.n_dups as u32);
        let (dst, src) = p.reply;
        out.push(self.sack_packet(src, dst, size, s, now));
    }

    fn sack_packet(&self, src: Addr, dst: Addr, size: u32, s: SctpSack, now: SimTime) -> Packet {
        Packet {
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
        }
    }

    fn sack(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        let cum = self.tsns.next.wrapping_sub(1);
        let mut s = SctpSack {
            cum_tsn: cum,
            any: self.any,
            a_rwnd: self.a_rwnd(),
            packets: self.unacked.min(u8::MAX as u32) as u8,
            ..SctpSack::default()
        };
        self.gaps_left_out += self.tsns.gap_blocks(&mut s.gaps, &mut s.n_gaps, false);
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
        out.push(self.sack_packet(src, dst, size, s, now));
    }
}

impl Endpoint for SctpReceiver {
    fn handle_packet(&mut self, now: SimTime, pkt: Packet, out: &mut Vec<Packet>) {
        let Transport::Sctp(h) = &pkt.transport else {
            return;
        };
        match &h.chunk {
            SctpChunk::Data(d) if self.cfg.spec.mode == SctpMode::Ls => {
                self.counters.packets_received += 1;
                self.on_ls_data(now, &pkt, d, out);
            }
            SctpChunk::Data(d) => {
                self.counters.packets_received += 1;
                self.reply = (pkt.src, pkt.dst);
                let had_gap = !self.tsns.ranges.is_empty();
                let dup = self.on_data(now, d);
                self.unacked += 1;
                // §6.2: every second packet or within sack_delay; §6.7: at once while a gap
                // exists (or one just closed), and on a duplicate.
                // CMT's DAC: keep delaying despite gaps (the sender counts the packets).
                let dac = self.cfg.spec.mode == SctpMode::Cmt && self.cfg.spec.cmt_dac;
                let gap = !dac && (had_gap || !self.tsns.ranges.is_empty());
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
        for i in 0..self.ls.len() {
            if self.ls[i].sack_at.is_some_and(|t| t <= now) {
                self.ls_sack(i, now, out);
            }
        }
    }

    fn poll_timeout(&self) -> Option<SimTime> {
        self.ls
            .iter()
            .filter_map(|p| p.sack_at)
            .chain(self.sack_at)
            .min()
    }
}
