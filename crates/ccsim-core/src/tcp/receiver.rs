// SPDX-License-Identifier: MIT
//! TCP receiver: cumulative ACKs, SACK blocks (RFC 2018), delayed ACKs (RFC 1122 §4.2.3.2,
//! RFC 5681 §4.2) and a finite receive buffer.
//!
//! ```text
//!   segment in order, no gap left ──> delayed: ACK every delack_count-th segment or at the timer
//!   segment fills (part of) a gap ──> immediate ACK            (RFC 5681 §4.2)
//!   segment out of order / old   ──> immediate duplicate ACK  (RFC 5681 §4.2)
//! ```
//!
//! Out-of-order data is held in an interval map (O(log n) per segment, never a walk over the
//! window). The application reads in-order data at once, so the advertised window is the buffer
//! minus the out-of-order bytes held; a relay that reads later (I-TCP) says how far it has read
//! with [`TcpReceiver::set_app_read`], and unread bytes count against the window too.
//! Duplicate-ACK detection at the sender ignores window changes (RFC 5681 §2 counts an ACK as
//! duplicate only if the window is unchanged; a receiver whose window shrinks with held data
//! would then defeat fast retransmit, which real receivers avoid by advertising buffer slack).

use std::collections::BTreeMap;

use crate::endpoint::{Endpoint, FlowCounters};
use crate::packet::{
    Acknowledgment, Addr, CcHeader, FlowId, Packet, Port, SackBlocks, TcpHeader, Transport,
};
use crate::tcp::config::{Recovery, TcpSpec};
use crate::time::{SimDuration, SimTime};

#[derive(Clone, Debug)]
pub struct TcpReceiverConfig {
    pub addr: Addr,
    pub peer_addr: Addr,
    pub port: Port,
    pub peer_port: Port,
    pub flow: FlowId,
    pub tcp: TcpSpec,
}

#[derive(Clone, Debug)]
pub struct TcpReceiver {
    cfg: TcpReceiverConfig,
    sack: bool,
    rcv_nxt: u64,
    /// Out-of-order data held: start -> end, disjoint and non-adjacent.
    ooo: BTreeMap<u64, u64>,
    ooo_bytes: u64,
    /// SACK blocks in the order to report them: most recent first (RFC 2018 §4).
    recent: SackBlocks,
    /// In-order segments received since the last ACK.
    unacked_segments: u32,
    delack_deadline: Option<SimTime>,
    /// Congestion header of the last data segment, echoed in the ACK (XCP).
    echo: CcHeader,
    /// Where the application has read up to, if it does not read in-order data at once (a
    /// relay): the bytes between it and `rcv_nxt` stay in the buffer.
    app_read: Option<u64>,
    counters: FlowCounters,
}

impl TcpReceiver {
    pub fn new(cfg: TcpReceiverConfig) -> Self {
        TcpReceiver {
            sack: cfg.tcp.recovery == Recovery::Sack,
            rcv_nxt: 0,
            ooo: BTreeMap::new(),
            ooo_bytes: 0,
            recent: SackBlocks::default(),
            unacked_segments: 0,
            delack_deadline: None,
            echo: CcHeader::None,
            app_read: None,
            counters: FlowCounters::default(),
            cfg,
        }
    }

    pub fn counters(&self) -> &FlowCounters {
        &self.counters
    }
    /// Next byte expected: everything below has been delivered in order exactly once.
    pub fn rcv_nxt(&self) -> u64 {
        self.rcv_nxt
    }
    pub fn out_of_order_bytes(&self) -> u64 {
        self.ooo_bytes
    }

    /// Tells the receiver that its application has consumed the stream below `read_upto`.
    /// From the first call on, in-order bytes not yet read count against the buffer: the
    /// advertised window is `rcv_buffer` minus unread and out-of-order bytes (I-TCP's relay
    /// buffer, whose bytes leave when the mobile host acknowledges them). Without this call
    /// the application reads in-order data at once.
    pub fn set_app_read(&mut self, read_upto: u64) {
        self.app_read = Some(read_upto);
    }

    /// In-order bytes received and not yet read by the application.
    fn unread_bytes(&self) -> u64 {
        self.app_read.map_or(0, |r| self.rcv_nxt.saturating_sub(r))
    }

    /// The receive window an ACK sent now would advertise.
    pub fn advertised_window(&self) -> u64 {
        self.cfg
            .tcp
            .rcv_buffer
            .saturating_sub(self.ooo_bytes + self.unread_bytes())
    }

    /// Sends an ACK now, to announce a window that opened (RFC 9293 §3.8.6.2.2, the receiver's
    /// window-update algorithm). The caller decides when: ccsim's sender has no persist timer,
    /// so a sender stopped by a closed window waits for this ACK.
    pub fn send_window_update(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        self.send_ack(now, out);
    }

    fn on_data(&mut self, now: SimTime, h: &TcpHeader, out: &mut Vec<Packet>) {
        self.counters.packets_received += 1;
        // XCP (KHR02 §3.2): the ACK returns the feedback of the data it acknowledges. A delayed
        // ACK covers several segments, so it carries the sum of their feedback.
        self.echo = match (self.echo, h.cc) {
            (
                CcHeader::Xcp { feedback: acc, .. },
                CcHeader::Xcp {
                    cwnd,
                    rtt_us,
                    feedback,
                },
            ) if self.unacked_segments > 0 => CcHeader::Xcp {
                cwnd,
                rtt_us,
                feedback: acc.saturating_add(feedback),
            },
            (_, hdr) => hdr,
        };
        let (seq, end) = (h.seq, h.end_seq());
        if end <= self.rcv_nxt {
            // An old duplicate: tell the sender where we are at once.
            self.send_ack(now, out);
            return;
        }
        if seq <= self.rcv_nxt {
            let had_gap = !self.ooo.is_empty();
            let before = self.rcv_nxt;
            self.rcv_nxt = end;
            // Pull in held data that is now contiguous.
            while let Some((&l, &r)) = self.ooo.first_key_value() {
                if l > self.rcv_nxt {
                    break;
                }
                self.ooo.remove(&l);
                self.ooo_bytes -= r - l;
                self.rcv_nxt = self.rcv_nxt.max(r);
            }
            self.counters.bytes_delivered += self.rcv_nxt - before;
            self.counters.last_delivery = Some(now);
            self.prune_recent();
            if had_gap {
                // RFC 5681 §4.2: a segment that fills a gap is acknowledged immediately.
                self.send_ack(now, out);
            } else if self.cfg.tcp.delayed_ack {
                self.unacked_segments += 1;
                if self.unacked_segments >= self.cfg.tcp.delack_count {
                    self.send_ack(now, out);
                } else if self.delack_deadline.is_none() {
                    self.delack_deadline = Some(now + self.cfg.tcp.delack_timeout);
                }
            } else {
                self.send_ack(now, out);
            }
            return;
        }
        // Out of order: hold it if the buffer has room, and send a duplicate ACK either way.
        let (l, r) = self.insert_ooo(seq, end);
        if self.sack {
            self.note_recent(l, r);
        }
        self.send_ack(now, out);
    }

    /// Insert [seq, end) into the held data if the buffer has room; returns the held block
    /// that contains it (or the segment itself if it was dropped for lack of room).
    fn insert_ooo(&mut self, seq: u64, end: u64) -> (u64, u64) {
        // First count the bytes not held yet, so that a full buffer changes nothing.
        let mut covered = 0;
        for (&l, &r) in self.ooo.range(..end).rev() {
            if r <= seq {
                break;
            }
            covered += r.min(end) - l.max(seq);
        }
        let new = (end - seq) - covered;
        if self.ooo_bytes + self.unread_bytes() + new > self.cfg.tcp.rcv_buffer {
            return self.block_containing(seq).unwrap_or((seq, end));
        }
        // Merge with blocks that overlap or touch [seq, end).
        let mut lo = seq;
        let mut hi = end;
        while let Some((&l, &r)) = self.ooo.range(..=hi).next_back() {
            if r < lo {
                break;
            }
            lo = lo.min(l);
            hi = hi.max(r);
            self.ooo.remove(&l);
        }
        self.ooo_bytes += new;
        self.ooo.insert(lo, hi);
        (lo, hi)
    }

    fn block_containing(&self, seq: u64) -> Option<(u64, u64)> {
        self.ooo
            .range(..=seq)
            .next_back()
            .filter(|&(_, &r)| r > seq)
            .map(|(&l, &r)| (l, r))
    }

    /// RFC 2018 §4: the first block reports the most recently received segment's block; the
    /// others repeat the most recently reported blocks.
    fn note_recent(&mut self, l: u64, r: u64) {
        let mut next = SackBlocks::default();
        next.push((l, r));
        let max = self.cfg.tcp.max_sack_blocks.clamp(1, 4) as usize;
        for &(bl, _) in self.recent.as_slice() {
            if next.n as usize >= max {
                break;
            }
            // A reported block may since have merged into a larger one: report that.
            if let Some(b) = self.block_containing(bl) {
                if !next.as_slice().contains(&b) {
                    next.push(b);
                }
            }
        }
        self.recent = next;
    }

    fn prune_recent(&mut self) {
        let mut kept = SackBlocks::default();
        for &(l, r) in self.recent.as_slice() {
            if l > self.rcv_nxt {
                kept.push((l, r));
            }
        }
        self.recent = kept;
    }

    fn send_ack(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        self.unacked_segments = 0;
        self.delack_deadline = None;
        let ack = if self.sack {
            Acknowledgment::with_sack(self.rcv_nxt, &self.recent)
        } else {
            Acknowledgment::cumulative(self.rcv_nxt)
        };
        let rwnd = self.advertised_window();
        let size = self.cfg.tcp.header_bytes + ack.option_bytes();
        out.push(Packet {
            src: self.cfg.addr,
            dst: self.cfg.peer_addr,
            size,
            dscp: 0,
            ecn: 0,
            flow: self.cfg.flow,
            sent_at: now,
            transport: Transport::Tcp(TcpHeader {
                src_port: self.cfg.port,
                dst_port: self.cfg.peer_port,
                seq: 0,
                ack,
                len: 0,
                rwnd: rwnd.min(u32::MAX as u64) as u32,
                flags: TcpHeader::FLAG_ACK,
                cc: self.echo,
            }),
        });
    }

    pub fn delack_timeout(&self) -> SimDuration {
        self.cfg.tcp.delack_timeout
    }
}

impl Endpoint for TcpReceiver {
    fn handle_packet(&mut self, now: SimTime, pkt: Packet, out: &mut Vec<Packet>) {
        if let Transport::Tcp(h) = &pkt.transport {
            if h.len > 0 {
                self.on_data(now, h, out);
            }
        }
    }

    fn handle_timeout(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        if self.delack_deadline.is_some_and(|t| t <= now) {
            self.send_ack(now, out);
        }
    }

    fn poll_timeout(&self) -> Option<SimTime> {
        self.delack_deadline
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(seq: u64, feedback: i32) -> Packet {
        Packet {
            src: 0,
            dst: 1,
            size: 1040,
            dscp: 0,
            ecn: 0,
            flow: 0,
            sent_at: SimTime::ZERO,
            transport: Transport::Tcp(TcpHeader {
                seq,
                len: 1000,
                cc: CcHeader::Xcp {
                    cwnd: 10_000,
                    rtt_us: 50_000,
                    feedback,
                },
                ..TcpHeader::default()
            }),
        }
    }

    #[test]
    fn a_delayed_ack_echoes_the_sum_of_the_xcp_feedback_it_covers() {
        let mut r = TcpReceiver::new(TcpReceiverConfig {
            addr: 1,
            peer_addr: 0,
            port: 1,
            peer_port: 0,
            flow: 0,
            tcp: TcpSpec::default(),
        });
        let mut out = vec![];
        r.handle_packet(SimTime::ZERO, data(0, 300), &mut out);
        assert!(out.is_empty(), "first segment waits for a second");
        r.handle_packet(SimTime::ZERO, data(1000, -100), &mut out);
        let echo = out[0].tcp().map(|h| h.cc);
        assert!(
            matches!(echo, Some(CcHeader::Xcp { feedback: 200, .. })),
            "{echo:?}"
        );
        out.clear();
        r.handle_packet(SimTime::ZERO, data(2000, 50), &mut out);
        r.handle_packet(SimTime::ZERO, data(3000, 50), &mut out);
        let echo = out[0].tcp().map(|h| h.cc);
        assert!(
            matches!(echo, Some(CcHeader::Xcp { feedback: 100, .. })),
            "{echo:?}"
        );
    }
}
