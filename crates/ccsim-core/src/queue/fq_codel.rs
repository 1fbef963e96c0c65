// SPDX-License-Identifier: MIT
//! FQ-CoDel (RFC 8290): flow queueing with a CoDel instance per flow queue.
//!
//! ```text
//!   arrival ─ hash(5-tuple, perturbation) mod flows ─> flow queue k (its own CoDel state)
//!                                                        │ idle flow: tail of new_flows,
//!                                                        │            deficit = quantum
//!   dequeue: head of new_flows, else head of old_flows
//!     deficit <= 0 ─────────> deficit += quantum, to the tail of old_flows, next one
//!     CoDel gives nothing ──> from new_flows with old_flows waiting: to the tail of old_flows
//!                             otherwise: out of the lists (idle)
//!     a packet ─────────────> deficit -= its size; send it
//! ```
//!
//! A flow that has just started (a sparse flow: a ping, a DNS query, a TCP handshake) sits in
//! `new_flows`, which is served first: its packets overtake the queue built by bulk flows, which
//! live in `old_flows` and share the rest by deficit round robin with a `quantum` of bytes each
//! (RFC 8290 §4.2). CoDel runs on each flow queue on its own (§4.2), so a bulk flow's
//! standing queue is dropped down to `target` without touching the others.
//!
//! Above the packet `limit` or the `memory_limit` (bytes here; Linux counts the kernel's buffer
//! sizes), the queue drops from the head of the *fattest* flow, the one with the most bytes
//! (§4.1; Linux scans every flow for it, as here, only on an overflow): the flow that caused
//! the overflow pays for it, not the arriving packet of a sparse flow. Linux drops up to
//! `drop_batch` packets at once (64), at most half of that flow's bytes; the default here drops
//! one.
//!
//! The hash is a 64-bit mix (SplitMix64's finalizer) of source and destination address,
//! protocol and ports, keyed by a perturbation drawn once from this link direction's own random
//! stream (`link/NAME/DIR/queue`): the same scenario and seed map flows to the same queues, and
//! adding a flow or a link elsewhere changes nothing here (RFC 8290 §4.1 hashes with a
//! perturbation so that collisions are not predictable; §5.1 sets `flows` = 1024).

use std::collections::VecDeque;

use super::codel::{CodelParams, CodelQueue, CodelState};
use super::fifo::{Fifo, Waiting};
use super::AqmDrops;
use crate::arena::{PacketArena, PacketId};
use crate::packet::{Packet, Transport};
use crate::rng::RngStream;
use crate::time::SimTime;

/// Which list a flow queue is on (RFC 8290 §4.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum List {
    Idle,
    New,
    Old,
}

#[derive(Clone, Debug)]
pub(crate) struct Flow {
    fifo: Fifo,
    /// Bytes this flow may still send in its turn (DRR's deficit, RFC 8290 §4.2).
    pub(crate) deficit: i64,
    codel: CodelState,
    pub(crate) list: List,
}

/// FQ-CoDel's parameters (RFC 8290 §5.1, with Linux's defaults where it leaves them open).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FqCodelParams {
    pub codel: CodelParams,
    pub flows: u32,
    pub quantum: u32,
    pub limit: u64,
    pub memory_limit: u64,
    pub drop_batch: u32,
    pub maxpacket_scope: MaxpacketScope,
}

/// Whose bytes CoDel's `maxpacket` test (RFC 8289 §5.3: no drop while a packet's worth or
/// less is queued) reads in FQ-CoDel, where RFC 8290 leaves it open.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MaxpacketScope {
    /// The whole FQ-CoDel queue's backlog, as Linux's `fq_codel_dequeue` hands `codel_dequeue`
    /// the qdisc's backlog (the default).
    Queue,
    /// The flow queue's own bytes, as ns-3's `FqCodelQueueDisc`, whose flow queues are CoDel
    /// queue discs of their own: a flow with at most a packet's worth waiting is never dropped
    /// from, however long the other flows' queues (docs/validation.md, "CoDel, FQ-CoDel and PIE").
    Flow,
}

#[derive(Clone, Debug)]
pub(crate) struct FqCodel {
    p: FqCodelParams,
    pub(crate) flows: Vec<Flow>,
    pub(crate) new_flows: VecDeque<u32>,
    pub(crate) old_flows: VecDeque<u32>,
    perturbation: u64,
    len: usize,
    bytes: u64,
    /// The flow of the packet `admit` classified last (the next `push` goes there).
    pending: u32,
}

/// SplitMix64's finalizer (Steele, Lea and Flood, OOPSLA 2014): a bijective 64-bit mix.
#[inline]
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The IP protocol number of a packet's transport (RFC 790: TCP 6, UDP 17; RFC 4960: SCTP 132).
fn protocol(pkt: &Packet) -> u64 {
    match pkt.transport {
        Transport::Tcp(_) => 6,
        Transport::Udp(_) => 17,
        Transport::Sctp(_) => 132,
    }
}

/// The flow queue of a packet: its 5-tuple hashed with the perturbation, scaled to `flows`.
#[inline]
pub(crate) fn flow_of(pkt: &Packet, perturbation: u64, flows: u32) -> u32 {
    let addrs = ((pkt.src as u64) << 32) | pkt.dst as u64;
    let ports = ((pkt.src_port() as u64) << 32) | pkt.dst_port() as u64;
    let h = mix(mix(mix(perturbation ^ addrs) ^ ports) ^ protocol(pkt));
    // Multiply-shift onto 0..flows (Linux's reciprocal_scale), with the hash's high half.
    (((h >> 32) * flows as u64) >> 32) as u32
}

/// One flow's FIFO seen by its CoDel instance, with the whole queue's counts kept in step.
struct FlowView<'a> {
    fifo: &'a mut Fifo,
    len: &'a mut usize,
    bytes: &'a mut u64,
    scope: MaxpacketScope,
}

impl CodelQueue for FlowView<'_> {
    fn pop(&mut self) -> Option<Waiting> {
        let w = self.fifo.pop()?;
        *self.len -= 1;
        *self.bytes -= w.size as u64;
        Some(w)
    }
    fn backlog(&self) -> u64 {
        match self.scope {
            MaxpacketScope::Queue => *self.bytes,
            MaxpacketScope::Flow => self.fifo.bytes(),
        }
    }
}

impl FqCodel {
    pub(crate) fn new(p: FqCodelParams, rng: &RngStream) -> FqCodel {
        let flow = Flow {
            fifo: Fifo::default(),
            deficit: 0,
            codel: CodelState::default(),
            list: List::Idle,
        };
        FqCodel {
            p,
            flows: vec![flow; p.flows as usize],
            new_flows: VecDeque::new(),
            old_flows: VecDeque::new(),
            // A copy of the stream: this queue's one draw, made at the build.
            perturbation: rng.clone().next_u64(),
            len: 0,
            bytes: 0,
            pending: 0,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Classify an arriving packet (every packet is accepted; an overflow drops from the
    /// fattest flow once it is queued, `push`).
    #[inline]
    pub(crate) fn classify(&mut self, pkt: &Packet) {
        self.pending = flow_of(pkt, self.perturbation, self.p.flows);
    }

    /// RFC 8290 §4.1: queue the packet classified last, activate its flow, and drop from the
    /// fattest flow when over a limit.
    pub(crate) fn push(
        &mut self,
        now: SimTime,
        id: PacketId,
        size: u32,
        pkts: &mut PacketArena,
        drops: &mut AqmDrops,
    ) {
        let k = self.pending;
        let f = &mut self.flows[k as usize];
        f.fifo.push(now, id, size);
        self.len += 1;
        self.bytes += size as u64;
        if f.list == List::Idle {
            f.list = List::New;
            f.deficit = self.p.quantum as i64;
            self.new_flows.push_back(k);
        }
        if self.len as u64 > self.p.limit || self.bytes > self.p.memory_limit {
            self.drop_from_fattest(pkts, drops);
        }
    }

    /// Linux's `fq_codel_drop`: from the head of the flow with the most bytes, up to
    /// `drop_batch` packets and at most half of its bytes (at least one packet).
    #[cold]
    fn drop_from_fattest(&mut self, pkts: &mut PacketArena, drops: &mut AqmDrops) {
        let mut fat = 0;
        for (k, f) in self.flows.iter().enumerate() {
            if f.fifo.bytes() > self.flows[fat].fifo.bytes() {
                fat = k;
            }
        }
        let f = &mut self.flows[fat];
        let threshold = f.fifo.bytes() / 2;
        let mut dropped = 0u64;
        for _ in 0..self.p.drop_batch.max(1) {
            let Some(w) = f.fifo.pop() else { break };
            self.len -= 1;
            self.bytes -= w.size as u64;
            dropped += w.size as u64;
            drops.drop(pkts, w.id);
            if dropped >= threshold {
                break;
            }
        }
    }

    /// RFC 8290 §4.2: the next packet by the new/old flow lists and DRR, each flow's CoDel
    /// dropping on the way.
    pub(crate) fn dequeue(
        &mut self,
        now: SimTime,
        pkts: &mut PacketArena,
        drops: &mut AqmDrops,
    ) -> Option<Waiting> {
        loop {
            let (k, from_new) = match self.new_flows.front() {
                Some(&k) => (k, true),
                None => (*self.old_flows.front()?, false),
            };
            let f = &mut self.flows[k as usize];
            if f.deficit <= 0 {
                // Its turn is used up: a new quantum, and to the back of the old flows.
                f.deficit += self.p.quantum as i64;
                f.list = List::Old;
                self.pop_front(from_new);
                self.old_flows.push_back(k);
                continue;
            }
            let mut view = FlowView {
                fifo: &mut f.fifo,
                len: &mut self.len,
                bytes: &mut self.bytes,
                scope: self.p.maxpacket_scope,
            };
            if let Some(w) = f.codel.dequeue(&self.p.codel, now, &mut view, pkts, drops) {
                f.deficit -= w.size as i64;
                return Some(w);
            }
            self.pop_front(from_new);
            let f = &mut self.flows[k as usize];
            if from_new && !self.old_flows.is_empty() {
                // §4.2: an emptied new flow goes through the old list once, so that a flow
                // cannot stay new for ever by sending a packet at a time.
                f.list = List::Old;
                self.old_flows.push_back(k);
            } else {
                f.list = List::Idle;
            }
        }
    }

    fn pop_front(&mut self, from_new: bool) {
        if from_new {
            self.new_flows.pop_front();
        } else {
            self.old_flows.pop_front();
        }
    }

    /// Any waiting packet, for a link going down (no CoDel, no scheduling order needed).
    pub(crate) fn take_any(&mut self) -> Option<PacketId> {
        for f in &mut self.flows {
            if let Some(w) = f.fifo.pop() {
                self.len -= 1;
                self.bytes -= w.size as u64;
                if f.fifo.is_empty() {
                    f.list = List::Idle;
                }
                return Some(w.id);
            }
        }
        None
    }

    /// After a link went down and every packet was taken: the lists are empty too.
    pub(crate) fn forget_lists(&mut self) {
        if self.len == 0 {
            self.new_flows.clear();
            self.old_flows.clear();
            for f in &mut self.flows {
                f.list = List::Idle;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::SimDuration;

    fn params(quantum: u32) -> FqCodelParams {
        FqCodelParams {
            codel: CodelParams {
                target: SimDuration::from_millis(5),
                interval: SimDuration::from_millis(100),
                maxpacket: 1500,
                ecn: false,
            },
            flows: 1024,
            quantum,
            limit: 10240,
            memory_limit: 32 << 20,
            drop_batch: 1,
            maxpacket_scope: MaxpacketScope::Queue,
        }
    }

    /// A UDP packet of `size` bytes from port `sport`: one flow per port.
    fn from_port(sport: u32, size: u32) -> Packet {
        let mut p = Packet::test_udp(size, 0, sport as u64);
        if let Transport::Udp(h) = &mut p.transport {
            h.src_port = sport;
        }
        p
    }

    struct Fq {
        q: FqCodel,
        pkts: PacketArena,
        drops: AqmDrops,
    }

    impl Fq {
        fn new(p: FqCodelParams) -> Fq {
            Fq {
                q: FqCodel::new(p, &RngStream::derive(1, "test/fq")),
                pkts: PacketArena::new(),
                drops: AqmDrops::default(),
            }
        }
        fn put(&mut self, now: SimTime, sport: u32, size: u32) -> u32 {
            let p = from_port(sport, size);
            self.q.classify(&p);
            let k = self.q.pending;
            let id = self.pkts.insert(p);
            self.q.push(now, id, size, &mut self.pkts, &mut self.drops);
            k
        }
        /// The source port of the packet dequeued at `now`.
        fn get(&mut self, now: SimTime) -> Option<u32> {
            let w = self.q.dequeue(now, &mut self.pkts, &mut self.drops)?;
            let p = self.pkts.take(w.id);
            Some(match p.transport {
                Transport::Udp(h) => h.src_port,
                _ => unreachable!(),
            })
        }
    }

    #[test]
    fn flows_holding_a_packet_or_two_are_dropped_from_by_the_queues_backlog_but_not_their_own() {
        // Eight flows each keep two 1,000 B packets queued; one packet leaves each ms, so each
        // head waits ~8 ms, above CoDel's 5 ms target, for the whole run. Linux compares
        // maxpacket (1,500 B) with the whole queue's backlog (~16 KB): CoDel drops. ns-3's
        // flow queues compare their own bytes (one packet left behind the head): never.
        let run = |scope| {
            let mut fq = Fq::new(FqCodelParams {
                maxpacket_scope: scope,
                ..params(1500)
            });
            let ms = |n: u64| SimTime::ZERO + SimDuration::from_millis(n);
            let queues: Vec<usize> = (1..=8)
                .map(|port| flow_of(&from_port(port, 1000), fq.q.perturbation, 1024) as usize)
                .collect();
            for step in 0..500u64 {
                for (port, &k) in (1..=8).zip(&queues) {
                    while fq.q.flows[k].fifo.len() < 2 {
                        fq.put(ms(step), port, 1000);
                    }
                }
                fq.get(ms(step));
            }
            fq.drops.uncounted
        };
        let (queue, flow) = (run(MaxpacketScope::Queue), run(MaxpacketScope::Flow));
        assert!(queue > 0, "Linux's scope drops: {queue}");
        assert_eq!(
            flow, 0,
            "ns-3's scope never drops from a flow holding two packets"
        );
    }

    #[test]
    fn the_hash_spreads_flows_over_the_queues_and_the_perturbation_moves_them() {
        let seen = |perturbation| {
            (0..64u32)
                .map(|s| flow_of(&from_port(1000 + s, 100), perturbation, 1024))
                .collect::<Vec<_>>()
        };
        let a = seen(1);
        let mut distinct = a.clone();
        distinct.sort();
        distinct.dedup();
        assert!(distinct.len() >= 58, "{} distinct of 64", distinct.len());
        assert!(a.iter().all(|&k| k < 1024));
        assert_ne!(a, seen(2));
        assert_eq!(a, seen(1), "deterministic");
    }

    #[test]
    fn a_new_flow_is_served_before_the_old_ones_and_moves_to_the_old_list_after_its_quantum() {
        // Quantum 1,500 B: flow A has 4 packets of 1,000 B queued and has been served once; a
        // sparse flow B arrives with one packet.
        let mut fq = Fq::new(params(1500));
        let t = SimTime::ZERO;
        let a = fq.put(t, 1, 1000);
        for _ in 0..3 {
            fq.put(t, 1, 1000);
        }
        assert_eq!(fq.q.flows[a as usize].list, List::New);
        assert_eq!(fq.q.flows[a as usize].deficit, 1500);
        assert_eq!(fq.get(t), Some(1)); // deficit 500
        assert_eq!(fq.q.flows[a as usize].deficit, 500);
        let b = fq.put(t, 2, 200);
        assert_ne!(a, b);
        // A is still at the head of new_flows with deficit 500 > 0: it sends a second packet
        // (deficit −500); then its deficit is used up: +1500 = 1000 and it moves to old_flows,
        // and B (new) goes next.
        assert_eq!(fq.get(t), Some(1));
        assert_eq!(fq.q.flows[a as usize].deficit, -500);
        assert_eq!(fq.get(t), Some(2));
        assert_eq!(fq.q.flows[a as usize].list, List::Old);
        assert_eq!(fq.q.flows[a as usize].deficit, 1000);
        assert_eq!(fq.q.old_flows, VecDeque::from([a]));
        // B emptied while in new_flows with old_flows waiting: it goes to the old list's tail
        // (not idle) on the next dequeue, and A sends.
        assert_eq!(fq.get(t), Some(1));
        assert_eq!(fq.q.flows[b as usize].list, List::Old);
        assert_eq!(fq.q.old_flows, VecDeque::from([a, b]));
        assert_eq!(fq.q.flows[a as usize].deficit, 0);
        // A's deficit is 0: to the tail with +1500; B is empty at the head of old: idle.
        assert_eq!(fq.get(t), Some(1));
        assert_eq!(fq.q.flows[b as usize].list, List::Idle);
        assert_eq!(fq.q.old_flows, VecDeque::from([a]));
        assert_eq!(fq.q.flows[a as usize].deficit, 500);
        assert_eq!(fq.get(t), None);
        assert_eq!(fq.q.flows[a as usize].list, List::Idle);
        assert!(fq.q.old_flows.is_empty() && fq.q.new_flows.is_empty());
    }

    #[test]
    fn deficit_round_robin_shares_bytes_by_quantum_not_by_packets() {
        // Flow A sends 1,500-B packets, flow B 500-B packets, both backlogged: per round each
        // gets about one quantum (1,500 B) of bytes, so B sends three packets per A's one.
        let mut fq = Fq::new(params(1500));
        let t = SimTime::ZERO;
        for _ in 0..30 {
            fq.put(t, 1, 1500);
        }
        for _ in 0..90 {
            fq.put(t, 2, 500);
        }
        let mut bytes = [0u64; 3];
        for _ in 0..40 {
            let s = fq.get(t).unwrap();
            bytes[s as usize] += if s == 1 { 1500 } else { 500 };
        }
        assert_eq!(bytes[1], bytes[2], "{bytes:?}");
    }

    #[test]
    fn an_overflow_drops_from_the_head_of_the_fattest_flow_not_the_arriving_one() {
        let mut p = params(1514);
        p.limit = 10;
        let mut fq = Fq::new(p);
        let t = SimTime::ZERO;
        for _ in 0..9 {
            fq.put(t, 1, 1000);
        }
        let sparse = fq.put(t, 2, 100);
        assert_eq!(fq.drops.flows.len(), 0);
        // The 11th packet (sparse flow again) overflows: the bulk flow loses its head.
        fq.put(t, 2, 100);
        assert_eq!(fq.drops.uncounted, 1);
        assert_eq!(fq.q.len(), 10);
        assert_eq!(fq.q.flows[sparse as usize].fifo.len(), 2);
        // With Linux's batch of 64, the next overflow drops from the fat flow's head until half
        // of its 8,000 B is gone: 4 packets.
        fq.q.p.drop_batch = 64;
        fq.put(t, 3, 100);
        assert_eq!(fq.drops.uncounted, 1 + 4);
    }
}
