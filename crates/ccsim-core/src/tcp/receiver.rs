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
//! window). The window's right edge (RCV.NXT + RCV.WND) is where the buffer ends: the first
//! byte the application has not read plus the buffer size. The application reads in-order data
//! at once; a relay that reads later (I-TCP) says how far it has read with
//! [`TcpReceiver::set_app_read`]. Held out-of-order data lies inside the window and does not
//! shrink it, so the right edge never moves left (RFC 9293 §3.8.6, SHLD-14; RFC 7323 §2.4), and a
//! duplicate ACK carries the same window as the ACK before it (RFC 5681 §2's definition of a
//! duplicate ACK needs that).
//!
//! A segment that does not fit in the buffer is dropped, and no SACK block ever reports it
//! (RFC 2018 §4 reports received data; reporting dropped data would make a SACK sender wait for
//! ever for an ACK of data it believes delivered).

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::endpoint::{Endpoint, FlowCounters};
use crate::packet::{
    Acknowledgment, Addr, CcHeader, FlowId, Packet, Port, SackBlocks, TcpHeader, Timestamps,
    Transport, ECN_CE, ECN_NOT_ECT, TIMESTAMP_OPTION_BYTES,
};
use crate::tcp::config::{EcnFeedback, TcpSpec};
use crate::tcp::recovery::{AnyRecovery, RecoveryOps};
use crate::tcp::sender::ts_not_older;
use crate::tcp::{point_opt, time_opt, NO_POINT, NO_TIME};
use crate::time::{SimDuration, SimTime};

// `repr(C)`: 32 bytes, the second half of the receiver's line 1 ("Layout" in `TcpReceiver`).
#[repr(C)]
#[derive(Clone, Debug)]
pub struct TcpReceiverConfig {
    /// Shared by every endpoint built from the same spec (`Arc`): one copy, which stays in the
    /// cache, instead of 176 bytes in each of 10,000 receivers (docs/performance.md, "Shared
    /// TCP specs").
    pub tcp: Arc<TcpSpec>,
    pub addr: Addr,
    pub peer_addr: Addr,
    pub port: Port,
    pub peer_port: Port,
    pub flow: FlowId,
}

// Layout: `repr(C)` keeps the declared order, chosen so that a data segment and the ACK it
// sends touch lines 0, 1 and 3 of the receiver's seven (and line 5 with SACK), as the sender
// does (`sender.rs`, "Layout"):
//
//   line 0   rcv_nxt right_edge last_ack_sent delack_deadline fin_at app_read echo   every segment
//   line 1   ooo unacked_segments sack ece, cfg                                     every segment
//   line 2   counters: the sender's (an endpoint's counters are one type)
//   line 3   counters: packets_received bytes_delivered last_delivery ...           every segment
//   line 4   counters: the rest                                                     rare
//   line 5   recent (the SACK blocks to report), ooo_bytes, ts_recent               SACK, loss
//
// The times and points that were `Option`s are plain words with a sentinel (`NO_TIME`,
// `NO_POINT`). The offsets that matter are asserted below.
#[repr(C, align(64))]
#[derive(Clone, Debug)]
pub struct TcpReceiver {
    // Line 0.
    rcv_nxt: u64,
    /// The highest right edge of the window advertised so far.
    right_edge: u64,
    /// RFC 7323 §4.3 Last.ACK.sent: the ACK number of the last ACK sent (RCV.NXT unless an ACK
    /// is being delayed).
    last_ack_sent: u64,
    /// When the delayed ACK is due ([`NO_TIME`]: none is waiting).
    delack_deadline: SimTime,
    /// End of the stream, once a segment carrying FIN has arrived: with everything below it
    /// received, every ACK carries FIN too (the receiver closes its side, RFC 9293 §3.6).
    /// [`NO_POINT`]: no FIN yet.
    fin_at: u64,
    /// Where the application has read up to, if it does not read in-order data at once (a
    /// relay): the bytes between it and `rcv_nxt` stay in the buffer. [`NO_POINT`]: it reads
    /// at once.
    app_read: u64,
    /// Congestion header of the last data segment, echoed in the ACK (XCP).
    echo: CcHeader,

    // Line 1.
    /// Out-of-order data held: start -> end, disjoint and non-adjacent.
    ooo: BTreeMap<u64, u64>,
    /// In-order segments received since the last ACK.
    unacked_segments: u32,
    sack: bool,
    /// RFC 3168 §6.1.3: a CE-marked segment arrived and no CWR since: every ACK carries ECE.
    /// With DCTCP's feedback (RFC 8257 §3.2), DCTCP.CE: the last segment carried CE.
    ece: bool,
    cfg: TcpReceiverConfig,

    // Lines 2 to 4.
    counters: FlowCounters,

    // Line 5.
    /// SACK blocks in the order to report them: most recent first (RFC 2018 §4).
    recent: SackBlocks,
    ooo_bytes: u64,
    /// RFC 7323 §4.3 TS.Recent: the TSval every ACK echoes (None before the first segment with
    /// timestamps).
    ts_recent: Option<u32>,
    /// With `dsack`: the duplicate the next ACK reports in its first block (RFC 2883 §4), once
    /// (`(0, 0)`: none).
    dsack: (u64, u64),
}

const _: () = {
    use std::mem::{offset_of, size_of};
    const LINE: usize = 64;
    assert!(offset_of!(TcpReceiver, echo) + size_of::<CcHeader>() == LINE);
    assert!(offset_of!(TcpReceiver, ooo) == LINE);
    assert!(size_of::<TcpReceiverConfig>() == 32);
    assert!(offset_of!(TcpReceiver, cfg) + 32 == 2 * LINE);
    assert!(offset_of!(TcpReceiver, counters) == 2 * LINE);
    assert!(offset_of!(TcpReceiver, recent) == 5 * LINE);
    assert!(size_of::<TcpReceiver>() == 7 * LINE);
};

impl TcpReceiver {
    pub fn new(cfg: TcpReceiverConfig) -> Self {
        TcpReceiver {
            rcv_nxt: 0,
            right_edge: 0,
            last_ack_sent: 0,
            delack_deadline: NO_TIME,
            fin_at: NO_POINT,
            app_read: NO_POINT,
            echo: CcHeader::None,
            ooo: BTreeMap::new(),
            unacked_segments: 0,
            sack: AnyRecovery::new(cfg.tcp.recovery).uses_sack(),
            ece: false,
            counters: FlowCounters::default(),
            recent: SackBlocks::default(),
            ooo_bytes: 0,
            ts_recent: None,
            dsack: (0, 0),
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
        self.app_read = read_upto;
    }

    /// The right edge of the receive buffer: the first byte not yet read by the application
    /// plus the buffer size.
    fn buffer_edge(&self) -> u64 {
        point_opt(self.app_read)
            .unwrap_or(self.rcv_nxt)
            .min(self.rcv_nxt)
            .saturating_add(self.cfg.tcp.rcv_buffer)
    }

    /// The receive window an ACK sent now would advertise: from RCV.NXT to the right edge, which
    /// never moves left.
    ///
    /// An in-order segment is taken whole even if it ends past the window (a sender that
    /// overran it: an I-TCP relay whose application, the MH-side sender, has not read yet); the
    /// window is then zero, not negative (the fuzz test found the underflow).
    pub fn advertised_window(&self) -> u64 {
        self.buffer_edge()
            .max(self.right_edge)
            .saturating_sub(self.rcv_nxt)
    }

    /// Sends an ACK now, to announce a window that opened (RFC 9293 §3.8.6.2.2, the receiver's
    /// window-update algorithm). The caller decides when: ccsim's sender has no persist timer,
    /// so a sender stopped by a closed window waits for this ACK.
    pub fn send_window_update(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        self.send_ack(now, out);
    }

    fn on_data(&mut self, now: SimTime, h: &TcpHeader, ecn: u8, out: &mut Vec<Packet>) {
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
        if self.cfg.tcp.ecn {
            self.note_ecn(now, h, ecn, out);
        }
        self.note_timestamp(h);
        let (seq, end) = (h.seq, h.end_seq());
        if h.is_fin() {
            self.fin_at = end;
        }
        if end <= self.rcv_nxt {
            // An old duplicate: tell the sender where we are at once.
            if end > seq {
                self.counters.duplicate_segments += 1;
                self.note_dsack(seq, end);
            }
            self.send_ack(now, out);
            return;
        }
        if seq < self.rcv_nxt && self.dsack_on() {
            // Its front was received already: that part is the duplicate (RFC 2883 §4.1.4's
            // case), reported at once.
            self.note_dsack(seq, self.rcv_nxt);
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
            if had_gap || self.closing() || self.dsack.1 > 0 {
                // RFC 5681 §4.2: a segment that fills a gap is acknowledged immediately; so is
                // the end of the stream (RFC 9293 §3.6: FIN is not delayed).
                self.send_ack(now, out);
            } else if self.cfg.tcp.delayed_ack {
                self.unacked_segments += 1;
                if self.unacked_segments >= self.cfg.tcp.delack_count {
                    self.send_ack(now, out);
                } else if self.delack_deadline == NO_TIME {
                    self.delack_deadline = now + self.cfg.tcp.delack_timeout;
                }
            } else {
                self.send_ack(now, out);
            }
            return;
        }
        // Out of order: hold it if the buffer has room, and send a duplicate ACK either way.
        if self.dsack_on() && self.held(seq, end) {
            // All of it is held already: the duplicate goes first, the block holding it
            // second (RFC 2883 §4).
            self.note_dsack(seq, end);
        }
        if let Some((l, r)) = self.insert_ooo(seq, end) {
            if self.sack {
                self.note_recent(l, r);
            }
        } else {
            self.counters.receiver_drops += 1;
        }
        self.send_ack(now, out);
    }

    /// The ECN codepoint of an arriving data segment, with ECN on: the echo state, and with
    /// DCTCP's echo the ACK a change of state sends at once. Out of line: most flows run
    /// without ECN, and their per-segment path stays as short as it was.
    #[inline(never)]
    fn note_ecn(&mut self, now: SimTime, h: &TcpHeader, ecn: u8, out: &mut Vec<Packet>) {
        if self.cfg.tcp.ecn_feedback == EcnFeedback::Dctcp {
            // RFC 8257 §3.2: ECE says whether the segments an ACK covers carried CE. When the
            // CE state changes with segments waiting for a delayed ACK, they are acknowledged
            // at once with the old state, so no ACK covers segments of both. CWR is ignored.
            let ce = ecn == ECN_CE;
            if ce {
                self.counters.ecn_ce_received += 1;
            }
            if ce != self.ece && self.unacked_segments > 0 {
                self.send_ack(now, out);
            }
            self.ece = ce;
        } else {
            // RFC 3168 §6.1.3: CWR ends the echo; CE (even on the CWR segment) starts it.
            if h.is_cwr() {
                self.ece = false;
            }
            if ecn == ECN_CE {
                self.ece = true;
                self.counters.ecn_ce_received += 1;
            }
        }
    }

    /// RFC 7323 §4.3 rule (2): a segment's TSval becomes TS.Recent if it is not older and the
    /// segment starts at or below Last.ACK.sent. So with delayed ACKs the echo is the TSval of
    /// the first segment the ACK covers (the later ones start above Last.ACK.sent); a segment
    /// beyond a hole changes nothing, and the duplicate ACKs echo the last segment that advanced
    /// RCV.NXT; the segment that fills the hole (a retransmission) sets it, so the sender
    /// measures the RTT of the retransmission (§4.3 cases A and B).
    fn note_timestamp(&mut self, h: &TcpHeader) {
        if !self.cfg.tcp.timestamps {
            return;
        }
        let Some(ts) = h.ack.timestamps() else {
            return;
        };
        if h.seq <= self.last_ack_sent
            && self
                .ts_recent
                .is_none_or(|recent| ts_not_older(ts.val, recent))
        {
            self.ts_recent = Some(ts.val);
        }
    }

    /// The timestamp option of the next segment sent: TSval now and TS.Recent echoed (RFC 7323
    /// §4.3 rule (3)).
    fn timestamps(&self, now: SimTime) -> Timestamps {
        Timestamps {
            val: self.cfg.tcp.ts_value(now),
            ecr: self.ts_recent.unwrap_or(0),
        }
    }

    /// Insert [seq, end) into the held data if the buffer has room; returns the held block
    /// that contains it, or None if it was dropped for lack of room.
    fn insert_ooo(&mut self, seq: u64, end: u64) -> Option<(u64, u64)> {
        // A segment that ends beyond the window does not fit in the buffer: the bytes from
        // RCV.NXT up to it must stay free for the hole (RFC 9293 §3.10.7.4 acceptability).
        if end > self.buffer_edge().max(self.right_edge) {
            return None;
        }
        // The common case after a loss: the segment continues the highest held block. Nothing
        // above it to merge, nothing below it touching (blocks are kept apart): widen the top
        // block in place instead of the search, cut and insert below (same result).
        if let Some(mut top) = self.ooo.last_entry() {
            if *top.get() == seq && end > seq {
                *top.get_mut() = end;
                self.ooo_bytes += end - seq;
                return Some((*top.key(), end));
            }
        }
        let mut covered = 0;
        for (&l, &r) in self.ooo.range(..end).rev() {
            if r <= seq {
                break;
            }
            covered += r.min(end) - l.max(seq);
        }
        let new = (end - seq) - covered;
        if new == 0 {
            self.counters.duplicate_segments += 1;
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
        Some((lo, hi))
    }

    /// RFC 2883 DSACK is on (it rides on SACK).
    fn dsack_on(&self) -> bool {
        self.sack && self.cfg.tcp.dsack
    }

    /// Report `[l, r)` as a duplicate in the next ACK, if DSACK is on.
    fn note_dsack(&mut self, l: u64, r: u64) {
        if self.dsack_on() {
            self.dsack = (l, r);
        }
    }

    /// `[seq, end)` lies wholly in one block of held out-of-order data.
    fn held(&self, seq: u64, end: u64) -> bool {
        self.block_containing(seq).is_some_and(|(_, r)| r >= end)
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
        let max = self.cfg.tcp.sack_blocks_per_ack();
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

    /// Everything up to the sender's FIN has arrived.
    fn closing(&self) -> bool {
        point_opt(self.fin_at).is_some_and(|f| self.rcv_nxt >= f)
    }

    /// The handshake (RFC 9293 §3.5): a SYN is answered with SYN-ACK, at once and each time
    /// (a resent SYN means the SYN-ACK was lost).
    fn on_syn(&mut self, now: SimTime, h: &TcpHeader, out: &mut Vec<Packet>) {
        // The SYN's TSval is the first TS.Recent (it starts at Last.ACK.sent, RFC 7323 §4.3).
        self.note_timestamp(h);
        let ack = if self.cfg.tcp.timestamps {
            Acknowledgment::default().with_timestamps(self.timestamps(now))
        } else {
            Acknowledgment::default()
        };
        out.push(Packet::tcp_segment(
            (self.cfg.addr, self.cfg.peer_addr),
            self.cfg.tcp.header_bytes + ack.option_bytes(),
            self.control_ecn(),
            self.cfg.flow,
            now,
            TcpHeader {
                src_port: self.cfg.port,
                dst_port: self.cfg.peer_port,
                ack,
                rwnd: self.advertised_window().min(u32::MAX as u64) as u32,
                flags: TcpHeader::FLAG_SYN | TcpHeader::FLAG_ACK,
                ..TcpHeader::default()
            },
        ));
    }

    /// The codepoint of a segment without data (SYN-ACK, pure ACK): not ECT (RFC 3168 §6.1.1,
    /// §6.1.4), or the flow's ECT with `ect_all`, as Linux's DCTCP sends them.
    fn control_ecn(&self) -> u8 {
        if self.cfg.tcp.ect_all {
            self.cfg.tcp.ect()
        } else {
            ECN_NOT_ECT
        }
    }

    fn send_ack(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        self.unacked_segments = 0;
        self.delack_deadline = NO_TIME;
        let ack = if self.dsack.1 > 0 {
            Acknowledgment::with_sack(self.rcv_nxt, &self.with_dsack())
        } else if self.sack {
            Acknowledgment::with_sack(self.rcv_nxt, &self.recent)
        } else {
            Acknowledgment::cumulative(self.rcv_nxt)
        };
        let rwnd = self.advertised_window();
        self.right_edge = self.rcv_nxt + rwnd;
        let ts = self.cfg.tcp.timestamps;
        let size = self.cfg.tcp.header_bytes
            + ack.option_bytes()
            + if ts { TIMESTAMP_OPTION_BYTES } else { 0 };
        out.push(Packet::tcp_segment(
            (self.cfg.addr, self.cfg.peer_addr),
            size,
            self.control_ecn(),
            self.cfg.flow,
            now,
            TcpHeader {
                src_port: self.cfg.port,
                dst_port: self.cfg.peer_port,
                seq: 0,
                ack,
                len: 0,
                rwnd: rwnd.min(u32::MAX as u64) as u32,
                flags: TcpHeader::FLAG_ACK
                    | if self.closing() {
                        TcpHeader::FLAG_FIN
                    } else {
                        0
                    }
                    | if self.ece { TcpHeader::FLAG_ECE } else { 0 },
                cc: self.echo,
            },
        ));
        if ts {
            // Written in place, as the sender does: without timestamps the ACK takes no copy.
            // (With them the SACK blocks are at most three, `sack_blocks_per_ack`, so the size
            // above is the option space's.)
            self.last_ack_sent = self.rcv_nxt;
            let stamp = self.timestamps(now);
            if let Some(h) = out.last_mut().and_then(Packet::tcp_mut) {
                h.ack = h.ack.with_timestamps(stamp);
            }
        }
    }

    /// The blocks of an ACK reporting a duplicate: the DSACK block first, then the recent
    /// blocks in the room left (RFC 2883 §4); the duplicate is reported once.
    fn with_dsack(&mut self) -> SackBlocks {
        let mut blocks = SackBlocks::default();
        blocks.push(std::mem::take(&mut self.dsack));
        let max = self.cfg.tcp.sack_blocks_per_ack();
        for &b in self.recent.as_slice() {
            if blocks.n as usize >= max {
                break;
            }
            blocks.push(b);
        }
        blocks
    }

    pub fn delack_timeout(&self) -> SimDuration {
        self.cfg.tcp.delack_timeout
    }
}

impl Endpoint for TcpReceiver {
    fn handle_packet(&mut self, now: SimTime, pkt: Packet, out: &mut Vec<Packet>) {
        if let Transport::Tcp(h) = &pkt.transport {
            if h.is_syn() {
                self.on_syn(now, h, out);
            } else if h.len > 0 {
                self.on_data(now, h, pkt.ecn, out);
            }
        }
    }

    fn handle_timeout(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        if time_opt(self.delack_deadline).is_some_and(|t| t <= now) {
            self.send_ack(now, out);
        }
    }

    fn poll_timeout(&self) -> Option<SimTime> {
        time_opt(self.delack_deadline)
    }
}

/// A receiver at address 1, port 1, talking to a sender at address 0, port 0, flow 0: the
/// fixture of the TCP unit tests.
#[cfg(test)]
impl TcpReceiver {
    pub(crate) fn for_test(tcp: TcpSpec) -> TcpReceiver {
        TcpReceiver::new(TcpReceiverConfig {
            addr: 1,
            peer_addr: 0,
            port: 1,
            peer_port: 0,
            flow: 0,
            tcp: tcp.into(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::config::Recovery;

    fn data(seq: u64, feedback: i32) -> Packet {
        Packet {
            src: 0,
            dst: 1,
            size: 1040,
            dscp: 0,
            ecn: 0,
            ttl: crate::packet::DEFAULT_TTL,
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

    fn receiver(tcp: TcpSpec) -> TcpReceiver {
        TcpReceiver::for_test(tcp)
    }

    fn sack_receiver(rcv_buffer: u64, delayed_ack: bool) -> TcpReceiver {
        receiver(TcpSpec {
            recovery: Recovery::Sack,
            rcv_buffer,
            delayed_ack,
            ..TcpSpec::default()
        })
    }

    fn seg(seq: u64) -> Packet {
        let mut p = data(seq, 0);
        if let Some(h) = p.tcp_mut() {
            h.cc = CcHeader::None;
        }
        p
    }

    /// (ACK number, window, SACK blocks) of one ACK.
    type AckView = (u64, u32, Vec<(u64, u64)>);

    /// Each ACK in `out`.
    fn acks(out: &[Packet]) -> Vec<AckView> {
        out.iter()
            .filter_map(|p| p.tcp())
            .map(|h| (h.ack.number(), h.rwnd, h.ack.sack_blocks().collect()))
            .collect()
    }

    #[test]
    fn an_in_order_segment_past_the_window_closes_it_instead_of_underflowing() {
        // Buffer of 1.5 segments, nothing read by the application: the second segment ends
        // 500 B past the edge, is taken in order, and the window is zero.
        let mut r = receiver(TcpSpec {
            rcv_buffer: 1500,
            delayed_ack: false,
            ..TcpSpec::default()
        });
        r.set_app_read(0);
        let mut out = vec![];
        r.handle_packet(SimTime::ZERO, seg(0), &mut out);
        r.handle_packet(SimTime::ZERO, seg(1000), &mut out);
        assert_eq!(acks(&out).last().map(|a| (a.0, a.1)), Some((2000, 0)));
        assert_eq!(r.counters().duplicate_segments, 0);
        // The same segment again is a duplicate: counted, no new byte.
        r.handle_packet(SimTime::ZERO, seg(1000), &mut out);
        assert_eq!(r.counters().duplicate_segments, 1);
        assert_eq!(r.counters().bytes_delivered, 2000);
    }

    fn dsack_receiver(dsack: bool) -> TcpReceiver {
        receiver(TcpSpec {
            recovery: Recovery::Sack,
            delayed_ack: true,
            dsack,
            ..TcpSpec::default()
        })
    }

    #[test]
    fn a_duplicate_below_the_ack_is_reported_once_in_a_first_block_below_it() {
        // RFC 2883 §4.1.1: segments 0..3 arrive, then 1 again (a spurious retransmission):
        // the ACK of 4000 carries the DSACK block 1000-2000, the next ACK none.
        let mut r = dsack_receiver(true);
        let mut out = vec![];
        for seq in [0, 1000, 2000, 3000] {
            r.handle_packet(SimTime::ZERO, seg(seq), &mut out);
        }
        out.clear();
        r.handle_packet(SimTime::ZERO, seg(1000), &mut out);
        assert_eq!(
            acks(&out),
            vec![(4000, acks_window(&r), vec![(1000, 2000)])]
        );
        assert_eq!(out[0].tcp().unwrap().ack.dsack(), Some((1000, 2000)));
        out.clear();
        r.handle_packet(SimTime::ZERO, seg(5000), &mut out);
        assert_eq!(acks(&out)[0].2, vec![(5000, 6000)], "reported once");
        // Without `dsack` the duplicate gets a plain duplicate ACK.
        let mut plain = dsack_receiver(false);
        let mut out = vec![];
        for seq in [0, 1000, 1000] {
            plain.handle_packet(SimTime::ZERO, seg(seq), &mut out);
        }
        assert!(out.iter().all(|p| p.tcp().unwrap().ack.sack_len() == 0));
    }

    fn acks_window(r: &TcpReceiver) -> u32 {
        r.advertised_window() as u32
    }

    #[test]
    fn a_duplicate_of_held_data_goes_first_and_the_block_holding_it_second() {
        // RFC 2883 §4.1.2's layout: 0 is lost, 1000..4000 held; 2000 arrives again. The first
        // block is the duplicate, the second the held block that contains it, then the rest.
        let mut r = dsack_receiver(true);
        let mut out = vec![];
        for seq in [1000, 2000, 3000, 5000] {
            r.handle_packet(SimTime::ZERO, seg(seq), &mut out);
        }
        out.clear();
        r.handle_packet(SimTime::ZERO, seg(2000), &mut out);
        let blocks = &acks(&out)[0].2;
        assert_eq!(blocks, &vec![(2000, 3000), (1000, 4000), (5000, 6000)]);
        assert_eq!(out[0].tcp().unwrap().ack.dsack(), Some((2000, 3000)));
        assert_eq!(r.counters().duplicate_segments, 1);
    }

    #[test]
    fn a_segment_whose_front_was_received_reports_that_front_at_once() {
        // Delayed ACKs on: 0..1000 received; a 1000-byte segment at 500 repeats 500..1000 and
        // brings 1000..1500. The duplicate front is reported at once, not after the delay.
        let mut r = dsack_receiver(true);
        let mut out = vec![];
        r.handle_packet(SimTime::ZERO, seg(0), &mut out);
        out.clear();
        r.handle_packet(SimTime::ZERO, seg(500), &mut out);
        assert_eq!(acks(&out), vec![(1500, acks_window(&r), vec![(500, 1000)])]);
    }

    #[test]
    fn a_segment_that_does_not_fit_is_dropped_and_never_sacked() {
        // Bug pinned (issue 9): the receiver reported a SACK block for data it had dropped, and
        // the SACK sender never resent it. Buffer of 3 segments; 0 is lost, 1..=3 arrive.
        let mut r = sack_receiver(3000, false);
        let mut out = vec![];
        for seq in [1000, 2000] {
            r.handle_packet(SimTime::ZERO, seg(seq), &mut out);
        }
        out.clear();
        // Segment 3 lies beyond the window (0 + 3000): it does not fit.
        r.handle_packet(SimTime::ZERO, seg(3000), &mut out);
        assert_eq!(acks(&out), vec![(0, 3000, vec![(1000, 3000)])]);
        assert_eq!(r.counters().receiver_drops, 1);
        assert_eq!(r.out_of_order_bytes(), 2000);
    }

    #[test]
    fn held_out_of_order_data_never_moves_the_right_edge_left() {
        // Bug pinned (issue 9): the window fell 3000 -> 0 as out-of-order data arrived, so the
        // right edge (ACK + window) moved left, which RFC 9293 §3.8.6 (SHLD-14) forbids.
        let mut r = sack_receiver(3000, false);
        let mut out = vec![];
        r.handle_packet(SimTime::ZERO, seg(1000), &mut out);
        r.handle_packet(SimTime::ZERO, seg(2000), &mut out);
        let edges: Vec<u64> = acks(&out).iter().map(|a| a.0 + a.1 as u64).collect();
        assert_eq!(edges, vec![3000, 3000]);
        out.clear();
        // The hole is filled: everything is delivered, the edge moves right.
        r.handle_packet(SimTime::ZERO, seg(0), &mut out);
        assert_eq!(acks(&out), vec![(3000, 3000, vec![])]);
    }

    #[test]
    fn sack_blocks_report_the_newest_block_first_then_the_ones_reported_before() {
        // RFC 2018 §4. Holes at 0, 2000 and 4000 while 1000, 3000 and 5000 arrive.
        let mut r = sack_receiver(1 << 20, false);
        let mut out = vec![];
        for seq in [1000, 3000, 5000] {
            r.handle_packet(SimTime::ZERO, seg(seq), &mut out);
        }
        let blocks: Vec<_> = acks(&out).into_iter().map(|a| a.2).collect();
        assert_eq!(
            blocks,
            vec![
                vec![(1000, 2000)],
                vec![(3000, 4000), (1000, 2000)],
                vec![(5000, 6000), (3000, 4000), (1000, 2000)],
            ]
        );
        out.clear();
        // Segment 4000 joins 3000 and 5000 into one block, reported first; 0 then fills the
        // first hole and the block below the ACK is no longer reported.
        r.handle_packet(SimTime::ZERO, seg(4000), &mut out);
        r.handle_packet(SimTime::ZERO, seg(0), &mut out);
        let blocks: Vec<_> = acks(&out).into_iter().map(|a| (a.0, a.2)).collect();
        assert_eq!(
            blocks,
            vec![
                (0, vec![(3000, 6000), (1000, 2000)]),
                (2000, vec![(3000, 6000)]),
            ]
        );
    }

    #[test]
    fn segments_continuing_the_top_block_widen_it_and_a_repeat_or_a_gap_fill_stays_exact() {
        // The top-block shortcut of insert_ooo (issue 11): 0 lost, 1000..5000 arrive in order
        // above it, then a repeat inside the block, a segment beyond a new hole, the hole.
        let mut r = sack_receiver(1 << 20, false);
        let mut out = vec![];
        for seq in [1000, 2000, 3000, 4000] {
            r.handle_packet(SimTime::ZERO, seg(seq), &mut out);
        }
        assert_eq!(r.out_of_order_bytes(), 4000);
        r.handle_packet(SimTime::ZERO, seg(2000), &mut out); // a repeat: nothing new
        assert_eq!(r.out_of_order_bytes(), 4000);
        r.handle_packet(SimTime::ZERO, seg(6000), &mut out); // beyond a hole at 5000
        r.handle_packet(SimTime::ZERO, seg(7000), &mut out); // continues the new top block
        r.handle_packet(SimTime::ZERO, seg(5000), &mut out); // joins the two blocks
        assert_eq!(r.out_of_order_bytes(), 7000);
        let views: Vec<_> = acks(&out).into_iter().map(|a| (a.0, a.2)).collect();
        assert_eq!(
            views,
            vec![
                (0, vec![(1000, 2000)]),
                (0, vec![(1000, 3000)]),
                (0, vec![(1000, 4000)]),
                (0, vec![(1000, 5000)]),
                (0, vec![(1000, 5000)]),
                (0, vec![(6000, 7000), (1000, 5000)]),
                (0, vec![(6000, 8000), (1000, 5000)]),
                (0, vec![(1000, 8000)]),
            ]
        );
        assert_eq!(r.counters.duplicate_segments, 1);
        out.clear();
        r.handle_packet(SimTime::ZERO, seg(0), &mut out);
        assert_eq!(
            acks(&out)[0].0,
            8000,
            "the hole filled: everything delivered"
        );
        assert_eq!(r.out_of_order_bytes(), 0);
    }

    #[test]
    fn a_lone_segment_is_acknowledged_when_the_delayed_ack_timer_fires() {
        let mut r = sack_receiver(1 << 20, true);
        let mut out = vec![];
        r.handle_packet(SimTime::from_millis(10), seg(0), &mut out);
        assert!(out.is_empty());
        assert_eq!(r.poll_timeout(), Some(SimTime::from_millis(210)));
        r.handle_timeout(SimTime::from_millis(210), &mut out);
        assert_eq!(acks(&out), vec![(1000, 1 << 20, vec![])]);
        assert_eq!(r.poll_timeout(), None);
    }

    #[test]
    fn a_segment_that_fills_a_gap_is_acknowledged_at_once_even_with_delayed_acks() {
        // RFC 5681 §4.2: out-of-order data and gap fills are ACKed immediately.
        let mut r = sack_receiver(1 << 20, true);
        let mut out = vec![];
        r.handle_packet(SimTime::ZERO, seg(1000), &mut out);
        assert_eq!(out.len(), 1, "out of order: immediate duplicate ACK");
        r.handle_packet(SimTime::ZERO, seg(0), &mut out);
        assert_eq!(out.len(), 2, "gap fill: immediate ACK");
        assert_eq!(acks(&out)[1].0, 2000);
    }

    #[test]
    fn a_delayed_ack_echoes_the_sum_of_the_xcp_feedback_it_covers() {
        let mut r = TcpReceiver::for_test(TcpSpec::default());
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

    /// A data segment at `seq` with TSval `val`.
    fn ts_seg(seq: u64, val: u32) -> Packet {
        let mut p = seg(seq);
        if let Some(h) = p.tcp_mut() {
            h.ack = Acknowledgment::default().with_timestamps(Timestamps { val, ecr: 0 });
        }
        p
    }

    fn echoes(out: &[Packet]) -> Vec<(u64, u32)> {
        out.iter()
            .filter_map(|p| p.tcp())
            .filter_map(|h| h.ack.timestamps().map(|t| (h.ack.number(), t.ecr)))
            .collect()
    }

    fn ts_receiver(recovery: Recovery, delayed_ack: bool) -> TcpReceiver {
        receiver(TcpSpec {
            recovery,
            delayed_ack,
            timestamps: true,
            ..TcpSpec::default()
        })
    }

    #[test]
    fn with_delayed_acks_the_echo_is_the_tsval_of_the_first_segment_acknowledged() {
        // RFC 7323 §4.3 case (A): the second segment starts above Last.ACK.sent, so TS.Recent
        // keeps the first's TSval, and the RTT measured covers the ACK's delay.
        let mut r = ts_receiver(Recovery::NewReno, true);
        let mut out = vec![];
        r.handle_packet(SimTime::from_millis(10), ts_seg(0, 10), &mut out);
        r.handle_packet(SimTime::from_millis(11), ts_seg(1000, 11), &mut out);
        assert_eq!(echoes(&out), vec![(2000, 10)]);
        assert_eq!(out[0].size, 40 + 12, "the option on the ACK too");
        // The next pair: the first of it starts at Last.ACK.sent and sets TS.Recent.
        r.handle_packet(SimTime::from_millis(12), ts_seg(2000, 12), &mut out);
        r.handle_packet(SimTime::from_millis(13), ts_seg(3000, 13), &mut out);
        assert_eq!(echoes(&out), vec![(2000, 10), (4000, 12)]);
    }

    #[test]
    fn duplicate_acks_echo_the_last_in_order_segment_and_the_hole_filler_sets_the_echo() {
        // RFC 7323 §4.3 case (B), its own example: A (TSval 1) arrives, B is lost, C (3) and
        // D (4) arrive out of order, B's retransmission (5) fills the hole. The duplicates echo
        // A's TSval; the ACK of everything echoes the retransmission's, whose RTT the sender
        // then measures. An old TSval at or below Last.ACK.sent never goes back.
        let mut r = ts_receiver(Recovery::Sack, false);
        let mut out = vec![];
        let at = SimTime::from_millis(50);
        for (seq, val) in [(0, 1), (2000, 3), (3000, 4), (1000, 5)] {
            r.handle_packet(at, ts_seg(seq, val), &mut out);
        }
        assert_eq!(
            echoes(&out),
            vec![(1000, 1), (1000, 1), (1000, 1), (4000, 5)]
        );
        r.handle_packet(at, ts_seg(4000, 2), &mut out);
        assert_eq!(echoes(&out)[4], (5000, 5), "an older TSval is ignored");
        // With the timestamp option an ACK carries at most three SACK blocks (RFC 2018 §3).
        let mut r = ts_receiver(Recovery::Sack, false);
        out.clear();
        for (k, seq) in [1000, 3000, 5000, 7000].into_iter().enumerate() {
            r.handle_packet(at, ts_seg(seq, k as u32), &mut out);
        }
        let last = out.last().and_then(|p| p.tcp()).expect("an ACK");
        assert_eq!(last.ack.sack_len(), 3);
        assert_eq!(out.last().map(|p| p.size), Some(40 + 12 + 28));
    }

    #[test]
    fn a_ce_mark_is_echoed_in_every_ack_until_the_sender_says_cwr() {
        // RFC 3168 §6.1.3.
        let mut r = receiver(TcpSpec {
            ecn: true,
            delayed_ack: false,
            ..TcpSpec::default()
        });
        let ece = |out: &[Packet]| -> Vec<bool> {
            out.iter()
                .filter_map(|p| p.tcp())
                .map(|h| h.is_ece())
                .collect()
        };
        let mut out = vec![];
        r.handle_packet(SimTime::ZERO, seg(0), &mut out);
        let mut marked = seg(1000);
        marked.ecn = ECN_CE;
        r.handle_packet(SimTime::ZERO, marked, &mut out);
        r.handle_packet(SimTime::ZERO, seg(2000), &mut out);
        let mut cwr = seg(3000);
        if let Some(h) = cwr.tcp_mut() {
            h.flags |= TcpHeader::FLAG_CWR;
        }
        r.handle_packet(SimTime::ZERO, cwr, &mut out);
        assert_eq!(ece(&out), vec![false, true, true, false]);
        assert_eq!(r.counters().ecn_ce_received, 1);
    }

    #[test]
    fn a_dctcp_receiver_echoes_each_segments_ce_and_acks_at_once_when_the_ce_state_changes() {
        // RFC 8257 §3.2 with delayed ACKs every second segment. Segments (1000 B) and their
        // marks: 0 -, 1 CE, 2 CE, 3 CE, 4 -, 5 -, 6 CE (then the timer), 7 - with CWR.
        let mut r = receiver(TcpSpec {
            ecn: true,
            ecn_feedback: EcnFeedback::Dctcp,
            ect_all: false,
            delayed_ack: true,
            delack_count: 2,
            ..TcpSpec::default()
        });
        let sent = |out: &[Packet]| -> Vec<(u64, bool)> {
            out.iter()
                .filter_map(|p| p.tcp())
                .map(|h| (h.ack.number(), h.is_ece()))
                .collect()
        };
        let t = SimTime::from_millis(1);
        let mut out = vec![];
        let arrive = |r: &mut TcpReceiver, i: u64, ce: bool, out: &mut Vec<Packet>| {
            let mut p = seg(i * 1000);
            if ce {
                p.ecn = ECN_CE;
            }
            r.handle_packet(t, p, out);
        };
        arrive(&mut r, 0, false, &mut out);
        assert!(out.is_empty(), "segment 0 waits for a second one");
        // 1 changes the state with segment 0 waiting: 0 is acknowledged at once, without ECE.
        arrive(&mut r, 1, true, &mut out);
        assert_eq!(sent(&out), vec![(1000, false)]);
        // 2 is the second of the pair 1-2, both CE.
        arrive(&mut r, 2, true, &mut out);
        assert_eq!(sent(&out)[1..], [(3000, true)]);
        // 3 (CE) waits; 4 (not CE) changes the state: 3 is acknowledged at once with ECE.
        arrive(&mut r, 3, true, &mut out);
        arrive(&mut r, 4, false, &mut out);
        assert_eq!(sent(&out)[2..], [(4000, true)]);
        // 5 completes the pair 4-5, neither marked.
        arrive(&mut r, 5, false, &mut out);
        assert_eq!(sent(&out)[3..], [(6000, false)]);
        // 6 (CE) changes the state with nothing waiting: no ACK until the timer, which says ECE.
        arrive(&mut r, 6, true, &mut out);
        assert_eq!(out.len(), 4);
        let timer = r.poll_timeout().expect("the delayed-ACK timer runs");
        r.handle_timeout(timer, &mut out);
        assert_eq!(sent(&out)[4..], [(7000, true)]);
        // CWR does not end the echo (it is RFC 3168's): 7 is unmarked, so its ACK has no ECE;
        // 8 (CE) with 7 waiting makes 7's ACK at once.
        let mut cwr = seg(7000);
        if let Some(h) = cwr.tcp_mut() {
            h.flags |= TcpHeader::FLAG_CWR;
        }
        r.handle_packet(t, cwr, &mut out);
        arrive(&mut r, 8, true, &mut out);
        assert_eq!(sent(&out)[5..], [(8000, false)]);
        assert_eq!(r.counters().ecn_ce_received, 5);
    }
}
