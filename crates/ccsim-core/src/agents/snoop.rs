// SPDX-License-Identifier: MIT
//! Snoop (Balakrishnan, Seshan, Amir, Katz, MobiCom 1995): a TCP-aware agent at the base station
//! that caches data toward the MH, retransmits lost segments locally and hides the duplicate
//! ACKs that the local retransmission answers, so the FH does not mistake wireless loss for
//! congestion. End-to-end semantics are kept: the agent never acknowledges data itself.
//! Reference: the paper and ns-2.35's implementation, `tcp/snoop.cc` and `tcp/snoop.h`
//! (defaults in `tcl/lan/ns-ll.tcl`); paper 001 §3.3 summarises it.
//!
//! ```text
//!   data from FH: end ≤ last ACK         → forward, not cached
//!                 new (seq ≥ highest end) → cache a copy, forward
//!                 older (seq < highest)   → a sender retransmission or reordering: cache or
//!                                           re-mark it "sender-retransmitted", restart timer
//!   ACK from MH:  older than last ACK     → forward (ns-2; the paper drops it)
//!                 new                     → free the cache up to it, RTT sample, forward
//!                 duplicate               → local retransmission / suppression (below)
//!   local timer: max(srtt + 4·rttvar, min_timeout); resends the head if it is the next byte
//!                the MH expects
//! ```
//!
//! Duplicate ACK for the byte at the head of the cache (the cache does not hold the missing
//! segment → forward):
//! 1. while `exp_dupacks` > 0 → suppress it (one fewer expected);
//! 2. else count it; below `rtx_thresh` → forward; the head is a sender retransmission or has
//!    been resent `max_local_rtx` times → forward (the FH recovers);
//! 3. else resend the head locally (a copy, injected), suppress this dupack and expect one
//!    dupack per cached segment after the head not yet heard from: those segments were
//!    forwarded before the local retransmission, so each draws a dupack before it arrives.
//!    Segments forwarded later queue behind the retransmission and draw a new ACK.
//!
//! Rules that differ from ns-2, and why:
//! - `rtx_thresh` (the dupack that triggers the local retransmission) is 1 by default, as in
//!   the paper (§3: "the first duplicate ACK"); ns-2's `RTX_THRESH 1` forwards the first and
//!   acts on the second, i.e. `rtx_thresh = 2` here.
//! - A dupack after the expected ones (the local retransmission was lost) counts toward a new
//!   local retransmission (ns-2 forwards it unless its count is inconsistent).
//! - srtt/rttvar follow RFC 6298 (2.3) gains (1/8, 1/4); ns-2 weights the new sample 0.875 in
//!   srtt (`srtt = g·srtt + (1−g)·rtt` with g = 0.125). No sample is taken from a segment that
//!   was resent, locally or by the FH (Karn's rule); ns-2 samples those too.
//! - The local timer does not back off (as ns-2); `max_local_rtx` bounds the resends.
//! - ns-2 caches only while the interface queue is shorter than its limit − 1; a hook cannot
//!   see the queue, so this agent caches whenever the cache has room.
//! - The reverse direction (MH as sender, explicit loss notification) is not modelled: every
//!   data direction is treated alike.
//!
//! Cached segments are copies; the original is forwarded, so the cache holds nothing that
//! packet conservation counts ([`NodeHook::held`] is 0). Local retransmissions are injected
//! packets; suppressed dupacks are hook drops on the link they arrived on.

use std::collections::BTreeMap;

use super::{classify, tcp, Conns, Deadlines, Role};
use crate::hook::{HookCounters, HookOutput, IfaceId, NodeHook};
use crate::packet::{Packet, TcpHeader, Transport};
use crate::time::{SimDuration, SimTime};

/// Parameters of the Snoop agent (scenario: `hook = { type = "snoop", ... }`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SnoopConfig {
    /// Segments cached per connection (ns-2 `SNOOP_MAXWIND` 100).
    pub cache_size: u32,
    /// Lower bound of the local retransmission timeout (ns-2 `snoopTick_` 0.1 s).
    pub min_timeout: SimDuration,
    /// Local retransmissions per segment at most (ns-2 `SNOOP_MAX_RXMIT` 10).
    pub max_local_rtx: u32,
    /// The duplicate ACK that triggers a local retransmission (paper: the first, 1).
    pub rtx_thresh: u32,
    /// Initial smoothed RTT of the wireless hop (ns-2 `srtt_` 0.1 s).
    pub initial_srtt: SimDuration,
    /// Initial RTT variation (ns-2 `rttvar_` 0.25 s).
    pub initial_rttvar: SimDuration,
}

impl Default for SnoopConfig {
    fn default() -> Self {
        SnoopConfig {
            cache_size: 100,
            min_timeout: SimDuration::from_millis(100),
            max_local_rtx: 10,
            rtx_thresh: 1,
            initial_srtt: SimDuration::from_millis(100),
            initial_rttvar: SimDuration::from_millis(250),
        }
    }
}

/// What the agent did, summed over connections.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SnoopStats {
    /// Segments resent by the agent (dupack- or timer-triggered).
    pub local_retransmits: u64,
    /// Of which triggered by the local timer.
    pub local_timeouts: u64,
    /// Duplicate ACKs not sent on to the FH.
    pub dupacks_suppressed: u64,
    /// Duplicate ACKs sent on to the FH.
    pub dupacks_forwarded: u64,
    /// Data segments not cached because the cache was full.
    pub cache_full: u64,
}

#[derive(Clone, Debug)]
struct Cached {
    pkt: Packet,
    end: u64,
    /// Last time this segment left the BS (forwarded or resent).
    sent: SimTime,
    local_rtx: u32,
    /// The FH resent it: its dupacks are the FH's business.
    sender_rtx: bool,
}

#[derive(Clone, Debug)]
struct Conn {
    /// Cached segments by first sequence number.
    cache: BTreeMap<u64, Cached>,
    /// Highest end sequence number seen from the FH (ns-2 `lastSeen_`).
    max_end: u64,
    /// Highest ACK seen from the MH (ns-2 `lastAck_`).
    last_ack: Option<u64>,
    /// Duplicate ACKs counted toward `rtx_thresh` since the last new ACK or local resend.
    dupacks: u32,
    /// Duplicate ACKs still expected for the last local retransmission (ns-2 `expDupacks_`).
    exp_dupacks: u64,
    /// RTT of the wireless hop, ns.
    srtt: u64,
    rttvar: u64,
}

/// The Snoop base-station agent.
#[derive(Debug)]
pub struct Snoop {
    cfg: SnoopConfig,
    conns: Conns<Conn>,
    timers: Deadlines,
    due: Vec<u32>,
    stats: SnoopStats,
}

impl Snoop {
    pub fn new(cfg: SnoopConfig) -> Self {
        Snoop {
            cfg,
            conns: Conns::default(),
            timers: Deadlines::default(),
            due: Vec::new(),
            stats: SnoopStats::default(),
        }
    }

    pub fn stats(&self) -> SnoopStats {
        self.stats
    }

    /// Segments cached over all connections.
    pub fn cached(&self) -> usize {
        (0..self.conns.len() as u32)
            .map(|c| self.conns.get(c).cache.len())
            .sum()
    }

    fn timeout(&self, c: &Conn) -> SimDuration {
        // ns-2 `Snoop::timeout()`: max(srtt + 4·rttvar, snoopTick).
        SimDuration::from_nanos(c.srtt.saturating_add(c.rttvar.saturating_mul(4)))
            .max(self.cfg.min_timeout)
    }

    fn restart_timer(&mut self, now: SimTime, c: u32) {
        let conn = self.conns.get(c);
        let t = if conn.cache.is_empty() {
            None
        } else {
            Some(now + self.timeout(conn))
        };
        self.timers.set(c, t);
    }

    fn on_data(&mut self, now: SimTime, pkt: Packet, out: &mut HookOutput) {
        let Role::Data(key) = classify(&pkt) else {
            return;
        };
        let (srtt, rttvar) = (
            self.cfg.initial_srtt.as_nanos(),
            self.cfg.initial_rttvar.as_nanos(),
        );
        let c = self.conns.find_or_insert(key, || Conn {
            cache: BTreeMap::new(),
            max_end: 0,
            last_ack: None,
            dupacks: 0,
            exp_dupacks: 0,
            srtt,
            rttvar,
        });
        let h = tcp(&pkt);
        let (seq, end) = (h.seq, h.end_seq());
        let cache_size = self.cfg.cache_size as usize;
        let conn = self.conns.get_mut(c);
        // Data the MH has already acknowledged is forwarded, not cached (ns-2 `snoop_insert`).
        if conn.last_ack.is_some_and(|a| end <= a) {
            out.forward(pkt);
            return;
        }
        let in_order = seq >= conn.max_end;
        conn.max_end = conn.max_end.max(end);
        let mut restart = false;
        if let Some(e) = conn.cache.get_mut(&seq) {
            // Cached before: the FH resent it (ns-2 "cached before" → sender retransmission).
            e.sender_rtx = true;
            e.local_rtx = 0;
            e.sent = now;
            restart = true;
        } else if conn.cache.len() < cache_size {
            // New or older data (the table above): cache it; out of order means a sender
            // retransmission or reordering, whose dupacks are let through (ns-2 `snoop_data`).
            conn.cache.insert(
                seq,
                Cached {
                    pkt: pkt.clone(),
                    end,
                    sent: now,
                    local_rtx: 0,
                    sender_rtx: !in_order,
                },
            );
            restart = !in_order;
        } else {
            self.stats.cache_full += 1;
        }
        out.forward(pkt);
        let conn = self.conns.get(c);
        if restart || (!self.timers_pending(c) && !conn.cache.is_empty()) {
            self.restart_timer(now, c);
        }
    }

    fn timers_pending(&self, c: u32) -> bool {
        self.timers.get(c).is_some()
    }

    fn on_ack(&mut self, now: SimTime, c: u32, pkt: Packet, out: &mut HookOutput) {
        let a = tcp(&pkt).ack.number();
        let conn = self.conns.get_mut(c);
        match conn.last_ack {
            // An older ACK (reordered): ns-2 forwards it (the paper drops it).
            Some(l) if a < l => out.forward(pkt),
            Some(l) if a == l => self.on_dupack(now, c, pkt, out),
            _ => {
                // A new ACK (ns-2 `snoop_ack`): free what it covers, sample the RTT, reset the
                // dupack state.
                let mut sample = None;
                while let Some(e) = conn.cache.first_entry() {
                    if e.get().end > a {
                        break;
                    }
                    let e = e.remove();
                    // Karn's rule: a resent segment's ACK is ambiguous.
                    sample = if e.local_rtx == 0 && !e.sender_rtx {
                        Some(now.saturating_since(e.sent).as_nanos())
                    } else {
                        None
                    };
                }
                if let Some(r) = sample {
                    // RFC 6298 (2.3) with the gains 1/4 and 1/8.
                    let delta = conn.srtt.abs_diff(r);
                    conn.rttvar = (3 * conn.rttvar + delta) / 4;
                    conn.srtt = (7 * conn.srtt + r) / 8;
                }
                conn.last_ack = Some(a);
                conn.dupacks = 0;
                conn.exp_dupacks = 0;
                self.restart_timer(now, c);
                out.forward(pkt);
            }
        }
    }

    fn on_dupack(&mut self, now: SimTime, c: u32, pkt: Packet, out: &mut HookOutput) {
        let (thresh, max_rtx) = (self.cfg.rtx_thresh, self.cfg.max_local_rtx);
        let conn = self.conns.get_mut(c);
        let a = conn.last_ack.unwrap_or(0);
        let Some(mut head) = conn.cache.first_entry() else {
            // Nothing cached: the FH must recover.
            self.stats.dupacks_forwarded += 1;
            out.forward(pkt);
            return;
        };
        if *head.key() > a {
            // The missing segment never reached the cache (lost upstream): let it through.
            self.stats.dupacks_forwarded += 1;
            out.forward(pkt);
            return;
        }
        if conn.exp_dupacks > 0 {
            // Answered by the local retransmission already sent: hide it.
            conn.exp_dupacks -= 1;
            self.stats.dupacks_suppressed += 1;
            out.drop_packet(pkt);
            return;
        }
        conn.dupacks += 1;
        let e = head.get_mut();
        if conn.dupacks < thresh || e.sender_rtx || e.local_rtx >= max_rtx {
            self.stats.dupacks_forwarded += 1;
            out.forward(pkt);
            return;
        }
        e.local_rtx += 1;
        e.sent = now;
        let copy = local_retransmission(&e.pkt);
        let after = conn.cache.len() as u64 - 1;
        conn.exp_dupacks = after.saturating_sub(conn.dupacks as u64);
        conn.dupacks = 0;
        self.stats.local_retransmits += 1;
        self.stats.dupacks_suppressed += 1;
        out.inject(copy);
        out.drop_packet(pkt);
        self.restart_timer(now, c);
    }

    /// The local timer of connection `c` expired (ns-2 `SnoopRxmitHandler::handle`).
    fn on_local_timeout(&mut self, now: SimTime, c: u32, out: &mut HookOutput) {
        let max_rtx = self.cfg.max_local_rtx;
        let conn = self.conns.get_mut(c);
        let next_expected = conn.last_ack;
        let Some(mut head) = conn.cache.first_entry() else {
            return;
        };
        // Resend only the segment the MH is waiting for.
        if next_expected.is_some_and(|a| *head.key() != a) {
            return;
        }
        let e = head.get_mut();
        if e.local_rtx >= max_rtx {
            return;
        }
        e.local_rtx += 1;
        e.sent = now;
        let copy = local_retransmission(&e.pkt);
        conn.dupacks = 0;
        self.stats.local_retransmits += 1;
        self.stats.local_timeouts += 1;
        out.inject(copy);
        self.restart_timer(now, c);
    }
}

/// The copy of a cached segment that a local retransmission sends, marked as a retransmission
/// so that the packet trace and the tests see it as one (ccsim's own `FLAG_RETX`; it never
/// reaches a pcap file or changes what the MH does with the segment).
fn local_retransmission(cached: &Packet) -> Packet {
    let mut copy = cached.clone();
    if let Transport::Tcp(h) = &mut copy.transport {
        h.flags |= TcpHeader::FLAG_RETX;
    }
    copy
}

impl NodeHook for Snoop {
    fn on_packet(&mut self, now: SimTime, pkt: Packet, _: Option<IfaceId>, out: &mut HookOutput) {
        match classify(&pkt) {
            Role::Data(_) => self.on_data(now, pkt, out),
            Role::Ack(key) => match self.conns.find(&key) {
                Some(c) => self.on_ack(now, c, pkt, out),
                None => out.forward(pkt),
            },
            Role::Other => out.forward(pkt),
        }
    }

    fn on_timeout(&mut self, now: SimTime, out: &mut HookOutput) {
        let mut due = std::mem::take(&mut self.due);
        due.clear();
        self.timers.take_due(now, &mut due);
        for &c in &due {
            self.on_local_timeout(now, c, out);
        }
        self.due = due;
    }

    fn poll_timeout(&self) -> Option<SimTime> {
        self.timers.first()
    }

    fn counters(&self) -> Option<HookCounters> {
        let s = self.stats;
        Some(HookCounters {
            agent: "snoop",
            values: vec![
                ("local_retransmits", s.local_retransmits),
                ("local_timeouts", s.local_timeouts),
                ("dupacks_suppressed", s.dupacks_suppressed),
                ("dupacks_forwarded", s.dupacks_forwarded),
                ("cache_full", s.cache_full),
            ],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::*;

    fn seqs(out: &mut HookOutput) -> Vec<(bool, u64)> {
        out.packets
            .drain(..)
            .map(|p| {
                let h = p.tcp().expect("tcp");
                if h.len > 0 {
                    (true, h.seq)
                } else {
                    (false, h.ack.number())
                }
            })
            .collect()
    }

    /// Segments 0..n forwarded and cached at time 0.
    fn sent(s: &mut Snoop, n: u64, out: &mut HookOutput) {
        for i in 0..n {
            s.on_packet(ms(0), data(i * MSS), None, out);
        }
        out.packets.clear();
    }

    #[test]
    fn the_first_duplicate_ack_triggers_one_local_retransmission_and_the_expected_rest_are_hidden()
    {
        let mut s = Snoop::new(SnoopConfig::default());
        let mut out = HookOutput::default();
        sent(&mut s, 6, &mut out);
        assert_eq!(s.cached(), 6, "copies cached, originals forwarded");
        assert_eq!(s.held(), 0);
        s.on_packet(ms(20), ack(MSS), None, &mut out);
        assert_eq!(seqs(&mut out), vec![(false, MSS)], "new ACK forwarded");
        assert_eq!(s.cached(), 5);
        // Segment 1 lost: segments 2..5 each draw a dupack.
        s.on_packet(ms(25), ack(MSS), None, &mut out);
        assert_eq!(
            seqs(&mut out),
            vec![(true, MSS)],
            "local resend, dupack hidden"
        );
        assert_eq!(out.injected, 1);
        for _ in 0..3 {
            s.on_packet(ms(26), ack(MSS), None, &mut out);
        }
        assert!(
            out.packets.is_empty(),
            "the three expected dupacks are hidden"
        );
        assert_eq!(out.dropped, 4);
        // A fourth, unexpected one: the resend was lost too, resend again.
        s.on_packet(ms(27), ack(MSS), None, &mut out);
        assert_eq!(seqs(&mut out), vec![(true, MSS)]);
        s.on_packet(ms(40), ack(6 * MSS), None, &mut out);
        assert_eq!(seqs(&mut out), vec![(false, 6 * MSS)]);
        assert_eq!(s.cached(), 0, "the cache is freed");
        assert_eq!(s.poll_timeout(), None, "no timer with an empty cache");
        let st = s.stats();
        assert_eq!((st.local_retransmits, st.dupacks_suppressed), (2, 5));
    }

    #[test]
    fn local_retransmissions_are_marked_as_retransmissions_and_forwarded_segments_are_not() {
        // The packet trace's `retransmission` column once showed Snoop's local resends as
        // first transmissions.
        let retx = |p: &Packet| p.tcp().expect("tcp").flags & TcpHeader::FLAG_RETX != 0;
        let mut s = Snoop::new(SnoopConfig::default());
        let mut out = HookOutput::default();
        s.on_packet(ms(0), data(0), None, &mut out);
        s.on_packet(ms(0), data(MSS), None, &mut out);
        assert!(out.packets.iter().all(|p| !retx(p)), "forwarded originals");
        out.packets.clear();
        s.on_packet(ms(20), ack(0), None, &mut out);
        out.packets.clear();
        s.on_packet(ms(21), ack(0), None, &mut out);
        assert_eq!(
            out.packets.len(),
            1,
            "one local retransmission after the dupack"
        );
        assert!(
            retx(&out.packets[0]),
            "the dupack-triggered resend is marked"
        );
        out.packets.clear();
        s.on_timeout(s.poll_timeout().expect("local timer armed"), &mut out);
        assert_eq!(out.packets.len(), 1, "the local timer resends the head");
        assert!(
            retx(&out.packets[0]),
            "the timer-triggered resend is marked"
        );
    }

    #[test]
    fn with_rtx_thresh_two_the_first_dupack_is_forwarded_as_in_ns2() {
        let mut s = Snoop::new(SnoopConfig {
            rtx_thresh: 2,
            ..SnoopConfig::default()
        });
        let mut out = HookOutput::default();
        sent(&mut s, 4, &mut out);
        s.on_packet(ms(20), ack(0), None, &mut out);
        out.packets.clear();
        s.on_packet(ms(21), ack(0), None, &mut out);
        assert_eq!(seqs(&mut out), vec![(false, 0)]);
        s.on_packet(ms(22), ack(0), None, &mut out);
        assert_eq!(seqs(&mut out), vec![(true, 0)]);
    }

    #[test]
    fn dupacks_for_a_sender_retransmission_or_an_uncached_segment_reach_the_fixed_host() {
        let mut s = Snoop::new(SnoopConfig::default());
        let mut out = HookOutput::default();
        sent(&mut s, 4, &mut out);
        s.on_packet(ms(20), ack(0), None, &mut out);
        // The FH resends segment 0 itself.
        s.on_packet(ms(30), data(0), None, &mut out);
        out.packets.clear();
        s.on_packet(ms(31), ack(0), None, &mut out);
        assert_eq!(seqs(&mut out), vec![(false, 0)]);
        // A connection whose first segment never reached the BS.
        let mut s = Snoop::new(SnoopConfig::default());
        s.on_packet(ms(0), data(MSS), None, &mut out);
        s.on_packet(ms(20), ack(0), None, &mut out);
        out.packets.clear();
        s.on_packet(ms(21), ack(0), None, &mut out);
        assert_eq!(seqs(&mut out), vec![(false, 0)]);
        assert_eq!(s.stats().local_retransmits, 0);
    }

    #[test]
    fn the_local_timer_resends_the_awaited_segment_and_rtt_samples_shorten_it() {
        let mut s = Snoop::new(SnoopConfig::default());
        let mut out = HookOutput::default();
        sent(&mut s, 3, &mut out);
        // Initial timeout max(100 ms + 4·250 ms, 100 ms) = 1.1 s.
        assert_eq!(s.poll_timeout(), Some(ms(1100)));
        // A 20 ms sample: rttvar = (3·250 + 80)/4 = 207.5, srtt = (7·100 + 20)/8 = 90 ms.
        s.on_packet(ms(20), ack(MSS), None, &mut out);
        assert_eq!(
            s.poll_timeout(),
            Some(ms(20) + SimDuration::from_micros(90_000 + 4 * 207_500))
        );
        out.packets.clear();
        let t = s.poll_timeout().unwrap();
        s.on_timeout(t, &mut out);
        assert_eq!(
            seqs(&mut out),
            vec![(true, MSS)],
            "the segment the MH awaits"
        );
        assert_eq!(s.stats().local_timeouts, 1);
        // Bounded by max_local_rtx; then the timer stops.
        while let Some(t) = s.poll_timeout() {
            s.on_timeout(t, &mut out);
        }
        assert_eq!(s.stats().local_retransmits, 10);
    }

    #[test]
    fn data_already_acknowledged_is_forwarded_without_caching_and_a_full_cache_stops_caching() {
        let mut s = Snoop::new(SnoopConfig {
            cache_size: 2,
            ..SnoopConfig::default()
        });
        let mut out = HookOutput::default();
        sent(&mut s, 3, &mut out);
        assert_eq!((s.cached(), s.stats().cache_full), (2, 1));
        s.on_packet(ms(20), ack(3 * MSS), None, &mut out);
        s.on_packet(ms(21), data(MSS), None, &mut out);
        assert_eq!(s.cached(), 0);
        assert_eq!(out.packets.len(), 2, "forwarded all the same");
    }
}
