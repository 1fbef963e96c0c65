// SPDX-License-Identifier: MIT
//! Queue disciplines of one link direction: DropTail, RED, and the XCP router port
//! (`xcp_router.rs`).
//!
//! ```text
//!   enqueue(now, pkt) ──> [ hard limit (packets | bytes) ]──> Fifo ──> dequeue(now)
//!                          [ RED: EWMA average, early drop / ECN mark ]
//! ```
//!
//! One file per discipline: `droptail.rs` (the hard limit every discipline applies), `red.rs`
//! (RED's average and drop profile); `fifo.rs` is the one store of waiting packets they share.
//!
//! The queue holds handles into the [`PacketArena`] (`arena.rs`) with each packet's size, not
//! the packets: the discipline reads and rewrites a packet in place when it arrives
//! ([`Queue::admit`]: RED's ECN mark, a DiffServ class's classification, policing and WRED)
//! and never touches it again, so a packet waiting in a queue is never copied.
//!
//! The queue holds the packets *waiting* for the transmitter; the packet being serialized is
//! owned by the channel (`link.rs`), which calls [`Queue::dequeue`] when its transmitter is
//! free. When that leaves the queue empty the channel calls [`Queue::idle_from`] with the end
//! of the transmission: that is where RED starts its idle period (see `RedAverage::on_idle` in
//! `red.rs`).
//!
//! Everything is O(1) per packet: one FIFO push or pop, a few floating-point operations and at
//! most one random draw for RED.
//!
//! # Active queue management of today's routers
//!
//! `codel.rs` (RFC 8289), `fq_codel.rs` (RFC 8290), `pie.rs` (RFC 8033) and `tbf.rs` (a token
//! bucket shaper) differ from the disciplines above in three ways the channel has to know of
//! ([`Queue::decides_at_dequeue`]):
//!
//! - they decide when a packet *leaves* (CoDel drops at dequeue; PIE measures the delay there;
//!   a shaper holds the head until it has the tokens), so a packet never skips the buffer:
//!   offered to an idle link it is queued and dequeued at once;
//! - they may drop packets they had accepted (CoDel at dequeue, FQ-CoDel from the fattest flow
//!   when over its limit): [`AqmDrops`] frees their slots and keeps their flows (and, while the
//!   packet trace watches, a copy) for the channel's `drops_queue` and the engine's accounts;
//! - a shaper may hold packets with its transmitter idle: [`Queue::ready_at`] says when the
//!   head may leave, and the channel schedules its next `TxDone` then.
//!
//! Every packet's time of arrival is kept beside it in the FIFO (`fifo.rs`): its sojourn time
//! when it leaves is CoDel's and PIE's measure, and the links table's queue delay percentiles
//! for every discipline (`sojourn.rs`).

mod cbwfq;
mod classes;
mod codel;
mod droptail;
mod drr;
mod dualpi2;
mod fifo;
mod fq_codel;
mod pie;
mod priority;
mod red;
mod sojourn;
mod spec;
mod tbf;
mod wfq;
mod wred;

pub use classes::{
    ClassCounters, ClassPolice, ClassQueue, ClassSpec, DropSpec, SchedulerKind, SchedulerSpec,
    Share,
};
pub use codel::CodelParams;
pub use dualpi2::DualPi2Params;
pub use fq_codel::{FqCodelParams, MaxpacketScope};
pub use pie::PieParams;
pub use sojourn::SojournHistogram;
pub use spec::{QueueLimit, QueueSpec};
pub use wred::WredProfileSpec;

pub(crate) use fifo::{Fifo, Waiting};
pub(crate) use red::{signal, RedAverage, RedProfile, Signalled, Verdict};

use crate::arena::{PacketArena, PacketId};
use crate::packet::{FlowId, Packet};
use crate::rng::RngStream;

use crate::time::{Rate, SimTime};
use crate::xcp_router::{XcpConfig, XcpRouter};
use codel::{CodelQueue, CodelState};
use dualpi2::DualPi2;
use fq_codel::FqCodel;
use pie::{Pie, PieVerdict};
use red::Red;
use tbf::Tbf;

/// Initial capacity of the packet buffer: enough for typical buffers without a reallocation,
/// small enough not to matter for thousands of idle links.
const INITIAL_CAPACITY: u64 = 64;

/// A queue discipline for one link direction (closed set of disciplines, no trait object).
// `repr(C)`, in this order: the channel keeps the queue at the head of its third cache line
// (`link.rs`, "Layout"), and a planned channel's offer reads only `limit`; a DropTail offer reads
// `disc`'s tag beside it before the buffer.
#[repr(C)]
#[derive(Clone, Debug)]
pub struct Queue {
    /// Hard limit: a packet that does not fit is dropped whatever the discipline says.
    limit: QueueLimit,
    disc: Discipline,
    /// ECN CE marks made so far.
    marks: u64,
    buf: Fifo,
}

/// Every variant with state is boxed so the enum is a tag and a pointer: `Queue` then fits in
/// the channel's first cache lines, and the per-packet test "which discipline?" reads a tag
/// beside `buf` instead of a niche inside an inline `Red` (PDS's L1 misses, docs/diffserv.md
/// "Speed").
#[derive(Clone, Debug)]
enum Discipline {
    DropTail,
    Red(Box<Red>),
    /// Step marking at K (packets or bytes, the limit's unit) on `buf`: no state but K, which
    /// fits where a box's pointer would.
    Threshold(u64),
    /// A DropTail FIFO at an XCP router port, which rewrites XCP congestion headers.
    Xcp(Box<XcpRouter>),
    /// DiffServ: per-class FIFOs and a scheduler (`classes.rs`); `buf` stays empty.
    Classes(Box<ClassQueue>),
    /// CoDel (RFC 8289) on `buf`.
    Codel(Box<Codel>),
    /// FQ-CoDel (RFC 8290): its own flow queues; `buf` stays empty.
    FqCodel(Box<FqCodelQueue>),
    /// PIE (RFC 8033) on `buf`.
    Pie(Box<Pie>),
    /// A token-bucket shaper on `buf`.
    Tbf(Box<Tbf>),
    /// DualPI2 (RFC 9332): its own L4S and Classic queues; `buf` stays empty.
    DualPi2(Box<DualPi2>),
}

/// A congestion signal at arrival (RED, PIE, the threshold queue): [`signal`] applied to `pkt`,
/// a mark counted in `marks`; `true` if the packet is kept (marked, or CE already).
#[inline]
fn signal_counted(marks: &mut u64, pkt: &mut Packet, ecn: bool) -> bool {
    match signal(pkt, ecn) {
        Signalled::Marked => {
            *marks += 1;
            true
        }
        Signalled::AlreadyCe => true,
        Signalled::Dropped => false,
    }
}

/// Packets a discipline dropped after accepting them (CoDel at dequeue, FQ-CoDel's overflow
/// from the fattest flow), and the CE marks it made at dequeue. Their arena slots are freed at
/// once; their flows (and a copy of each while the packet trace watches, `keep`) wait here for
/// the engine (the run's conservation count, flow retirement, trace rows), and `uncounted` for
/// the channel's `drops_queue`.
#[derive(Clone, Debug, Default)]
pub struct AqmDrops {
    pub(crate) flows: Vec<FlowId>,
    pub(crate) copies: Vec<Packet>,
    pub(crate) keep: bool,
    pub(crate) uncounted: u64,
    pub(crate) marks: u64,
}

impl AqmDrops {
    /// Drop packet `id`, which the discipline had accepted.
    #[inline]
    pub(crate) fn drop(&mut self, pkts: &mut PacketArena, id: PacketId) {
        let p = pkts.get(id);
        self.flows.push(p.flow);
        if self.keep {
            self.copies.push(p.clone());
        }
        pkts.free(id);
        self.uncounted += 1;
    }

    /// The flows of the packets dropped since the engine last asked, and their copies (the
    /// vectors are handed back with [`AqmDrops::give_back`] to keep their buffers).
    pub fn take(&mut self) -> (Vec<FlowId>, Vec<Packet>) {
        (
            std::mem::take(&mut self.flows),
            std::mem::take(&mut self.copies),
        )
    }

    /// The vectors of [`AqmDrops::take`], emptied, for reuse.
    pub fn give_back(&mut self, mut flows: Vec<FlowId>, mut copies: Vec<Packet>) {
        flows.clear();
        copies.clear();
        self.flows = flows;
        self.copies = copies;
    }
}

/// A CoDel queue: the parameters, the state and its drops.
#[derive(Clone, Debug)]
struct Codel {
    p: CodelParams,
    state: CodelState,
    drops: AqmDrops,
}

/// FQ-CoDel and its drops.
#[derive(Clone, Debug)]
struct FqCodelQueue {
    fq: FqCodel,
    drops: AqmDrops,
}

impl CodelQueue for Fifo {
    fn pop(&mut self) -> Option<Waiting> {
        Fifo::pop(self)
    }
    fn backlog(&self) -> u64 {
        self.bytes()
    }
}

impl Queue {
    /// A queue with the given discipline. `rng` drives RED's random drops; `link_rate` is the
    /// rate of the transmitter this queue feeds, which RED needs to age its average over idle
    /// periods (FJ93 §4). DropTail uses neither.
    pub fn new(spec: &QueueSpec, rng: RngStream, link_rate: Rate) -> Queue {
        let (limit, disc) = match *spec {
            QueueSpec::DropTail { limit } => (limit, Discipline::DropTail),
            QueueSpec::Red {
                limit,
                min_th,
                max_th,
                max_p,
                w_q,
                gentle,
                ecn,
                mean_packet_size,
            } => {
                let red = Red {
                    average: RedAverage::new(w_q, mean_packet_size, link_rate),
                    profile: RedProfile::new(min_th, max_th, max_p, gentle),
                    ecn,
                    byte_mode: matches!(limit, QueueLimit::Bytes(_)),
                    rng,
                };
                (limit, Discipline::Red(Box::new(red)))
            }
            QueueSpec::Threshold { limit, k } => (limit, Discipline::Threshold(k)),
            QueueSpec::Xcp {
                limit,
                alpha,
                beta,
                gamma,
            } => {
                let cfg = XcpConfig {
                    alpha,
                    beta,
                    gamma,
                    ..XcpConfig::default()
                };
                (
                    limit,
                    Discipline::Xcp(Box::new(XcpRouter::new(cfg, link_rate))),
                )
            }
            QueueSpec::Scheduler(ref sched) => (
                QueueLimit::Packets(0),
                Discipline::Classes(Box::new(ClassQueue::new(sched, &rng, link_rate))),
            ),
            QueueSpec::Codel { limit, params } => (
                limit,
                Discipline::Codel(Box::new(Codel {
                    p: params,
                    state: CodelState::default(),
                    drops: AqmDrops::default(),
                })),
            ),
            QueueSpec::FqCodel(params) => (
                QueueLimit::Packets(params.limit),
                Discipline::FqCodel(Box::new(FqCodelQueue {
                    fq: FqCodel::new(params, &rng),
                    drops: AqmDrops::default(),
                })),
            ),
            QueueSpec::Pie { limit, params } => {
                (limit, Discipline::Pie(Box::new(Pie::new(params, rng))))
            }
            QueueSpec::Tbf { limit, rate, burst } => {
                (limit, Discipline::Tbf(Box::new(Tbf::new(rate, burst))))
            }
            QueueSpec::DualPi2(params) => {
                let d = DualPi2::new(params, rng, link_rate);
                (d.limit, Discipline::DualPi2(Box::new(d)))
            }
        };
        let cap = match limit {
            QueueLimit::Packets(n) => n.min(INITIAL_CAPACITY),
            QueueLimit::Bytes(_) => INITIAL_CAPACITY,
        };
        Queue {
            buf: Fifo::with_capacity(cap as usize),
            limit,
            marks: 0,
            disc,
        }
    }

    /// Queue a packet of `size` bytes that [`Queue::admit`] accepted, arrived at `now`.
    /// FQ-CoDel may then drop from its fattest flow (`pkts` frees those).
    #[inline]
    pub fn push(&mut self, now: SimTime, id: PacketId, size: u32, pkts: &mut PacketArena) {
        match &mut self.disc {
            Discipline::Classes(c) => c.push(now, id, size),
            Discipline::FqCodel(f) => f.fq.push(now, id, size, pkts, &mut f.drops),
            Discipline::DualPi2(d) => d.push(now, id, size),
            _ => self.buf.push(now, id, size),
        }
    }

    /// The packet [`Queue::admit`] accepted last went straight to an idle transmitter (the
    /// channel's fast path): per-class counters count it as sent.
    #[inline]
    pub fn sent_at_once(&mut self, size: u32) {
        if let Discipline::Classes(c) = &mut self.disc {
            c.sent_at_once(size);
        }
    }

    /// [`Queue::admit`] the packet `id` and queue it: `true` if accepted (possibly ECN-marked),
    /// `false` if refused. A refused packet stays in the arena: the caller counts and frees it.
    #[inline]
    pub fn enqueue(&mut self, now: SimTime, pkts: &mut PacketArena, id: PacketId) -> bool {
        let pkt = pkts.get_mut(id);
        let size = pkt.size;
        if !self.admit(now, pkt) {
            return false;
        }
        self.push(now, id, size, pkts);
        true
    }

    /// The discipline's decision on an arriving packet, without queueing it: `true` if it is
    /// accepted (possibly ECN-marked: `pkt.ecn` set to 3 when RED has `ecn` and the packet is
    /// ECT(0) or ECT(1); an XCP port may lower its feedback), `false` if it must be dropped.
    /// An accepted packet must then be [`Queue::push`]ed, or, when the queue is empty and the
    /// transmitter idle, sent at once (the channel's fast path: it would be dequeued at once).
    #[inline]
    pub fn admit(&mut self, now: SimTime, pkt: &mut Packet) -> bool {
        // Class queues apply each class's own limit; the others this queue's (asked only
        // where it decides: a class queue's arrival never reads this queue's buffer).
        // DropTail first, by a plain test: most links of most scenarios are DropTail, and a
        // jump table over the four kinds mispredicted where DropTail and class queues alternate.
        if let Discipline::DropTail = self.disc {
            return droptail::fits(self.limit, &self.buf, pkt.size);
        }
        let red = match &mut self.disc {
            Discipline::Classes(c) => {
                let (accepted, marked) = c.admit(now, pkt);
                self.marks += marked as u64;
                return accepted;
            }
            Discipline::DropTail => return droptail::fits(self.limit, &self.buf, pkt.size),
            &mut Discipline::Threshold(k) => {
                if !droptail::fits(self.limit, &self.buf, pkt.size) {
                    return false;
                }
                // RFC 8257 §3.1: mark when the instantaneous queue, the one the arriving packet
                // finds (the packet in transmission is not in it), is at K or beyond.
                let q = match self.limit {
                    QueueLimit::Packets(_) => self.buf.len() as u64,
                    QueueLimit::Bytes(_) => self.buf.bytes(),
                };
                if q < k {
                    return true;
                }
                return signal_counted(&mut self.marks, pkt, true);
            }
            Discipline::Xcp(router) => {
                // Every arrival counts as offered traffic, dropped or not (KHR02 §3.4's y).
                router.on_arrival(now, pkt, self.buf.bytes());
                return droptail::fits(self.limit, &self.buf, pkt.size);
            }
            // CoDel decides at dequeue; a shaper only delays.
            Discipline::Codel(_) | Discipline::Tbf(_) => {
                return droptail::fits(self.limit, &self.buf, pkt.size)
            }
            // FQ-CoDel accepts every packet and drops from the fattest flow once it is queued.
            Discipline::FqCodel(f) => {
                f.fq.classify(pkt);
                return true;
            }
            // DualPI2 applies its shared limit and classifies; it marks and drops at dequeue.
            Discipline::DualPi2(d) => return d.admit(now, pkt),
            Discipline::Pie(pie) => {
                pie.catch_up(now, self.buf.bytes());
                if !droptail::fits(self.limit, &self.buf, pkt.size) {
                    return false;
                }
                return match pie.on_arrival(self.buf.bytes()) {
                    PieVerdict::Enqueue => true,
                    // RFC 8033 §5.1: mark rather than drop while the probability is low.
                    PieVerdict::Signal { may_mark } => {
                        signal_counted(&mut self.marks, pkt, may_mark)
                    }
                };
            }
            Discipline::Red(red) => red,
        };
        let fits = droptail::fits(self.limit, &self.buf, pkt.size);
        let q = if red.byte_mode {
            self.buf.bytes() as f64
        } else {
            self.buf.len() as f64
        };
        let verdict = red.on_arrival(now, q);
        if !fits {
            // The hard limit always applies, to ECN-capable packets too (RFC 3168 §5: "When
            // severe congestion has occurred and the router's queue is full, then the router has
            // no choice but to drop some packet"). The drop restarts the uniformisation count
            // (count ← 0), as in ns-2 red.cc.
            red.profile.count = 0;
            return false;
        }
        match verdict {
            Verdict::Pass => true,
            Verdict::Force => false,
            Verdict::Signal => signal_counted(&mut self.marks, pkt, red.ecn),
        }
    }

    /// The packet the next [`Queue::dequeue`] will give, where it is known without a
    /// scheduler's decision (every discipline but the class-based one). The channel uses it
    /// only to prefetch that packet's arena slot (`arena.rs`, "Prefetch").
    #[inline]
    pub fn next_hint(&self) -> Option<PacketId> {
        match &self.disc {
            Discipline::Classes(_) | Discipline::FqCodel(_) | Discipline::DualPi2(_) => None,
            _ => self.buf.head(),
        }
    }

    /// The packet to send now, if any, with the time it was queued. Called by the channel
    /// whenever its transmitter becomes free; `None` starts RED's idle period. CoDel and
    /// FQ-CoDel may drop (or mark) packets on the way ([`Queue::aqm_drops`]); a shaper gives
    /// `None` while the head waits for tokens ([`Queue::ready_at`]).
    #[inline]
    pub(crate) fn dequeue(&mut self, now: SimTime, pkts: &mut PacketArena) -> Option<Waiting> {
        match &mut self.disc {
            Discipline::Classes(c) => c.dequeue(now),
            Discipline::Codel(c) => c
                .state
                .dequeue(&c.p, now, &mut self.buf, pkts, &mut c.drops),
            Discipline::FqCodel(f) => f.fq.dequeue(now, pkts, &mut f.drops),
            Discipline::DualPi2(d) => d.dequeue(now, pkts),
            Discipline::Pie(pie) => {
                pie.catch_up(now, self.buf.bytes());
                let w = self.buf.pop()?;
                pie.on_departure(now, &w, self.buf.bytes());
                Some(w)
            }
            Discipline::Tbf(tbf) => {
                let size = self.buf.head_size()?;
                if !tbf.take(now, size) {
                    return None;
                }
                self.buf.pop()
            }
            _ => self.dequeue_fifo(now),
        }
    }

    /// DropTail, RED and the XCP port: the head of `buf`.
    #[inline]
    fn dequeue_fifo(&mut self, now: SimTime) -> Option<Waiting> {
        match self.buf.pop() {
            Some(w) => {
                if let Discipline::Red(red) = &mut self.disc {
                    red.average.on_dequeue();
                }
                Some(w)
            }
            None => {
                if let Discipline::Red(red) = &mut self.disc {
                    red.average.on_idle(now);
                }
                None
            }
        }
    }

    /// The packet at the head, taken out because the link went down: as [`Queue::dequeue`],
    /// but a class-based queue counts it as a link-down drop of its class, not as sent, and
    /// no AQM or shaper has a say.
    pub fn dequeue_lost(&mut self, now: SimTime) -> Option<PacketId> {
        match &mut self.disc {
            Discipline::Classes(c) => c.dequeue_lost(now),
            Discipline::FqCodel(f) => {
                let id = f.fq.take_any();
                f.fq.forget_lists();
                id
            }
            Discipline::DualPi2(d) => d.dequeue_lost(),
            Discipline::Codel(_) | Discipline::Pie(_) | Discipline::Tbf(_) => {
                self.buf.pop().map(|w| w.id)
            }
            _ => self.dequeue_fifo(now).map(|w| w.id),
        }
    }

    /// Whether this discipline decides when a packet leaves (CoDel, FQ-CoDel, PIE, a
    /// shaper; module docs): a packet offered to an idle link must go through its queue.
    #[inline]
    pub fn decides_at_dequeue(&self) -> bool {
        matches!(
            self.disc,
            Discipline::Codel(_)
                | Discipline::FqCodel(_)
                | Discipline::Pie(_)
                | Discipline::Tbf(_)
                | Discipline::DualPi2(_)
        )
    }

    /// Whether a channel may defer this discipline's dequeues (`link.rs`, "Deferred
    /// dequeues"): the AQMs that decide at dequeue, not a shaper (which can hold its head
    /// while the transmitter is idle, with nothing on the wire to wake the channel).
    pub fn may_defer_dequeues(&self) -> bool {
        matches!(
            self.disc,
            Discipline::Codel(_)
                | Discipline::FqCodel(_)
                | Discipline::Pie(_)
                | Discipline::DualPi2(_)
        )
    }

    /// The first time at or after `t` when the head may leave: `t`, but for a shaper whose
    /// bucket lacks the tokens (then the time it will hold them).
    #[inline]
    pub fn ready_at(&self, t: SimTime) -> SimTime {
        match &self.disc {
            Discipline::Tbf(tbf) => self.buf.head_size().map_or(t, |s| tbf.ready_at(t, s)),
            _ => t,
        }
    }

    /// The packets this discipline dropped after accepting them, for CoDel and FQ-CoDel.
    #[inline]
    pub fn aqm_drops(&mut self) -> Option<&mut AqmDrops> {
        match &mut self.disc {
            Discipline::Codel(c) => Some(&mut c.drops),
            Discipline::FqCodel(f) => Some(&mut f.drops),
            Discipline::DualPi2(d) => Some(&mut d.drops),
            _ => None,
        }
    }

    /// Whether packets dropped after their admission wait for the engine.
    #[inline]
    pub fn has_aqm_drops(&self) -> bool {
        match &self.disc {
            Discipline::Codel(c) => !c.drops.flows.is_empty(),
            Discipline::FqCodel(f) => !f.drops.flows.is_empty(),
            Discipline::DualPi2(d) => !d.drops.flows.is_empty(),
            _ => false,
        }
    }

    /// Keep a copy of each packet dropped after its admission (the packet trace reads them).
    pub fn keep_dropped(&mut self, on: bool) {
        if let Some(d) = self.aqm_drops() {
            d.keep = on;
        }
    }

    /// Nothing waits and the transmitter goes idle at `at` (the end of the transmission just
    /// started, possibly in the future): RED's idle period starts then. An arrival before `at`
    /// ages the average by nothing (the idle span it sees is zero) and ends the idle period.
    #[inline]
    pub fn idle_from(&mut self, at: SimTime) {
        match &mut self.disc {
            Discipline::Red(red) => red.average.on_idle(at),
            Discipline::Classes(c) => c.idle_from(at),
            _ => {}
        }
    }

    pub fn len_packets(&self) -> usize {
        match &self.disc {
            Discipline::Classes(c) => c.len(),
            Discipline::FqCodel(f) => f.fq.len(),
            Discipline::DualPi2(d) => d.len(),
            _ => self.buf.len(),
        }
    }

    pub fn len_bytes(&self) -> u64 {
        match &self.disc {
            Discipline::Classes(c) => c.bytes(),
            Discipline::FqCodel(f) => f.fq.bytes(),
            Discipline::DualPi2(d) => d.bytes(),
            _ => self.buf.bytes(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len_packets() == 0
    }

    /// A plain DropTail queue: it decides at arrival only and serves in arrival order, so a
    /// packet's turn is known when it is queued (`link.rs`, "Departures planned at enqueue").
    pub fn is_drop_tail(&self) -> bool {
        matches!(self.disc, Discipline::DropTail)
    }

    /// DropTail's decision on a packet of `size` bytes arriving beside `len` waiting packets of
    /// `bytes` bytes that the channel keeps itself (a planned channel, `link.rs`): the hard
    /// limit, which is all a DropTail queue applies.
    #[inline]
    pub fn fits_beside(&self, len: usize, bytes: u64, size: u32) -> bool {
        droptail::fits_beside(self.limit, len, bytes, size)
    }

    /// The DiffServ classes of this queue, if it has any (for the `classes` result table).
    pub fn classes(&self) -> Option<&ClassQueue> {
        match &self.disc {
            Discipline::Classes(c) => Some(c),
            _ => None,
        }
    }

    /// The rows this queue gives the `classes` table: a DiffServ queue's classes, or DualPI2's
    /// L4S and Classic queues; each with its counters, packets waiting and sojourn times.
    pub fn class_rows(&self) -> Vec<(&str, &ClassCounters, usize, &SojournHistogram)> {
        match &self.disc {
            Discipline::Classes(c) => c.classes().collect(),
            Discipline::DualPi2(d) => d
                .rows()
                .into_iter()
                .map(|(name, q)| (name, &q.counters, q.fifo.len(), &q.sojourn))
                .collect(),
            _ => Vec::new(),
        }
    }

    /// ECN marks made so far (RED, PIE, CoDel and FQ-CoDel with ecn; class queues).
    pub fn marks(&self) -> u64 {
        match &self.disc {
            Discipline::Codel(c) => self.marks + c.drops.marks,
            Discipline::FqCodel(f) => self.marks + f.drops.marks,
            Discipline::DualPi2(d) => self.marks + d.drops.marks,
            _ => self.marks,
        }
    }

    /// RED's average queue size (packets, or bytes in byte mode) as of the last arrival; `None`
    /// for DropTail. For traces and tests.
    pub fn average(&self) -> Option<f64> {
        match &self.disc {
            Discipline::Red(red) => Some(red.average.avg),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::red::uniformised;
    use super::*;
    use crate::packet::{Transport, ECN_CE};

    fn pkt(size: u32, ecn: u8, tag: u64) -> Packet {
        Packet::test_udp(size, ecn, tag)
    }

    fn seq_of(p: &Packet) -> u64 {
        match &p.transport {
            Transport::Udp(h) => h.seq,
            _ => unreachable!(),
        }
    }

    /// A queue with its own arena, and the by-value view the tests (here and in `classes.rs`)
    /// were written with: `enqueue` hands a refused packet back, `dequeue` returns the packet,
    /// `push` queues an admitted packet.
    pub(super) struct Q {
        q: Queue,
        pkts: PacketArena,
    }

    impl Q {
        pub(super) fn enqueue(&mut self, now: SimTime, p: Packet) -> Result<(), Packet> {
            let id = self.pkts.insert(p);
            if self.q.enqueue(now, &mut self.pkts, id) {
                Ok(())
            } else {
                Err(self.pkts.take(id))
            }
        }
        pub(super) fn dequeue(&mut self, now: SimTime) -> Option<Packet> {
            self.q
                .dequeue(now, &mut self.pkts)
                .map(|w| self.pkts.take(w.id))
        }
        pub(super) fn push(&mut self, p: Packet) {
            let size = p.size;
            let id = self.pkts.insert(p);
            self.q.push(SimTime::ZERO, id, size, &mut self.pkts);
        }
    }

    impl std::ops::Deref for Q {
        type Target = Queue;
        fn deref(&self) -> &Queue {
            &self.q
        }
    }

    impl std::ops::DerefMut for Q {
        fn deref_mut(&mut self) -> &mut Queue {
            &mut self.q
        }
    }

    pub(super) fn with_arena(q: Queue) -> Q {
        Q {
            q,
            pkts: PacketArena::new(),
        }
    }

    fn droptail(limit: QueueLimit) -> Q {
        with_arena(Queue::new(
            &QueueSpec::DropTail { limit },
            RngStream::derive(1, "test/queue"),
            Rate::mbps(10),
        ))
    }

    fn red(
        limit: QueueLimit,
        min_th: f64,
        max_th: f64,
        max_p: f64,
        w_q: f64,
        gentle: bool,
        ecn: bool,
    ) -> Q {
        with_arena(Queue::new(
            &QueueSpec::Red {
                limit,
                min_th,
                max_th,
                max_p,
                w_q,
                gentle,
                ecn,
                mean_packet_size: 1250,
            },
            RngStream::derive(7, "test/red"),
            Rate::mbps(10),
        ))
    }

    /// Keeps the queue at exactly `target` packets at every arrival: offer one packet, then
    /// serve until `target` remain. Returns how many of `n` arrivals were refused.
    fn hold(q: &mut Q, target: usize, n: u64, ecn: u8) -> u64 {
        let mut drops = 0;
        for i in 0..n {
            if q.enqueue(SimTime::ZERO, pkt(1000, ecn, i)).is_err() {
                drops += 1;
            }
            while q.len_packets() > target {
                q.dequeue(SimTime::ZERO).unwrap();
            }
        }
        drops
    }

    /// Fills the queue to `target` packets while the average is still near zero.
    fn fill(q: &mut Q, target: usize) {
        for i in 0..target as u64 {
            q.enqueue(SimTime::ZERO, pkt(1000, 0, i)).unwrap();
        }
    }

    #[test]
    fn red_probabilities_match_floyd_and_jacobson_at_the_reference_points() {
        // diffserv reference check 5: min 5, max 15, max_p 0.1.
        let p = RedProfile::new(5.0, 15.0, 0.1, true);
        assert_eq!(p.p_b(4.9), None);
        let pb = p.p_b(10.0).unwrap();
        assert!((pb - 0.05).abs() < 1e-12, "p_b {pb}");
        // count 5: p_a = 0.05 / (1 − 0.25) = 0.0667; count 19: 1 − 0.95 > 0 → 0.05/0.05 = 1.
        assert!((uniformised(pb, 5) - 0.05 / 0.75).abs() < 1e-12);
        assert!((uniformised(pb, 19) - 1.0).abs() < 1e-9);
        assert_eq!(uniformised(pb, 20), 1.0);
        // Gentle: 0.1 + 0.9 · 5/15 = 0.4 at avg 20; 1 from 2·max_th.
        assert!((p.p_b(20.0).unwrap() - 0.4).abs() < 1e-12);
        assert_eq!(p.p_b(30.0), Some(1.0));
        let hard = RedProfile::new(5.0, 15.0, 0.1, false);
        assert_eq!(hard.p_b(15.0), Some(1.0));
    }

    #[test]
    fn droptail_in_packets_accepts_exactly_limit_packets_then_drops() {
        let mut q = droptail(QueueLimit::Packets(5));
        for i in 0..5 {
            assert!(
                q.enqueue(SimTime::ZERO, pkt(1500, 0, i)).is_ok(),
                "packet {i}"
            );
        }
        let refused = q.enqueue(SimTime::ZERO, pkt(1500, 0, 5)).unwrap_err();
        assert_eq!(seq_of(&refused), 5);
        assert_eq!(q.len_packets(), 5);
        assert_eq!(q.len_bytes(), 7500);
        q.dequeue(SimTime::ZERO).unwrap();
        assert!(q.enqueue(SimTime::ZERO, pkt(1500, 0, 6)).is_ok());
    }

    #[test]
    fn droptail_in_bytes_accepts_a_packet_that_fills_the_limit_exactly_and_drops_one_byte_more() {
        let mut q = droptail(QueueLimit::Bytes(3000));
        assert!(q.enqueue(SimTime::ZERO, pkt(1500, 0, 0)).is_ok());
        assert!(q.enqueue(SimTime::ZERO, pkt(1000, 0, 1)).is_ok());
        // 2500 + 501 > 3000: refused, though a smaller packet still fits.
        assert!(q.enqueue(SimTime::ZERO, pkt(501, 0, 2)).is_err());
        assert!(q.enqueue(SimTime::ZERO, pkt(500, 0, 3)).is_ok());
        assert_eq!(q.len_bytes(), 3000);
        assert!(q.enqueue(SimTime::ZERO, pkt(40, 0, 4)).is_err());
        assert_eq!(q.len_packets(), 3);
    }

    #[test]
    fn packets_leave_in_fifo_order_and_byte_count_returns_to_zero() {
        let mut q = droptail(QueueLimit::Packets(100));
        for i in 0..50 {
            q.enqueue(SimTime::ZERO, pkt(40 + i as u32, 0, i)).unwrap();
        }
        for i in 0..50 {
            assert_eq!(seq_of(&q.dequeue(SimTime::ZERO).unwrap()), i);
        }
        assert!(q.dequeue(SimTime::ZERO).is_none());
        assert!(q.is_empty());
        assert_eq!(q.len_bytes(), 0);
    }

    #[test]
    fn red_never_drops_while_a_steady_queue_stays_below_min_th() {
        let mut q = red(QueueLimit::Packets(100), 5.0, 15.0, 0.1, 0.01, true, false);
        fill(&mut q, 3);
        assert_eq!(hold(&mut q, 3, 20_000, 0), 0);
        let avg = q.average().unwrap();
        assert!((avg - 3.0).abs() < 1e-6, "avg {avg}");
    }

    #[test]
    fn red_between_thresholds_drops_twice_pb_of_arrivals_with_uniformised_gaps() {
        // Queue held at 10 packets: avg → 10, p_b = 0.1 · (10 − 5)/(15 − 5) = 0.05. With
        // FJ93 §7's p_a = p_b/(1 − count·p_b), the gap between drops is uniform on
        // {1, …, 1/p_b − 1}, of mean 1/(2 p_b): the long-run drop fraction is 2 p_b = 0.1.
        let mut q = red(QueueLimit::Packets(100), 5.0, 15.0, 0.1, 0.01, false, false);
        fill(&mut q, 10);
        hold(&mut q, 10, 3_000, 0); // warm-up: avg within 10·e^-30 of 10
        let avg = q.average().unwrap();
        assert!((avg - 10.0).abs() < 1e-6, "avg {avg}");
        let n = 100_000;
        let frac = hold(&mut q, 10, n, 0) as f64 / n as f64;
        assert!((0.095..0.105).contains(&frac), "drop fraction {frac}");
    }

    #[test]
    fn red_gaps_between_drops_never_exceed_one_over_pb() {
        // Uniformisation bounds the gap: at count = 1/p_b − 1 the probability p_a reaches 1.
        let mut q = red(QueueLimit::Packets(100), 5.0, 15.0, 0.1, 0.01, false, false);
        fill(&mut q, 10);
        hold(&mut q, 10, 3_000, 0);
        let mut gap = 0u64;
        let mut max_gap = 0u64;
        for i in 0..50_000 {
            gap += 1;
            if q.enqueue(SimTime::ZERO, pkt(1000, 0, i)).is_err() {
                max_gap = max_gap.max(gap);
                gap = 0;
            }
            while q.len_packets() > 10 {
                q.dequeue(SimTime::ZERO);
            }
        }
        assert!(max_gap <= 20, "max gap {max_gap}");
        assert!(max_gap >= 15, "max gap {max_gap}");
    }

    #[test]
    fn red_without_gentle_drops_every_arrival_once_the_average_passes_max_th() {
        let mut q = red(QueueLimit::Packets(100), 5.0, 15.0, 0.1, 0.01, false, false);
        fill(&mut q, 20);
        hold(&mut q, 20, 3_000, 0);
        assert!(q.average().unwrap() > 19.99);
        assert_eq!(hold(&mut q, 20, 1_000, 0), 1_000);
    }

    #[test]
    fn gentle_red_above_max_th_drops_only_a_fraction_rising_towards_one_at_twice_max_th() {
        // avg = 20, max_th = 15: p_b = 0.1 + 0.9 · (20 − 15)/15 = 0.4. With the uniformisation,
        // after a drop the next packet goes with p_a = 0.4/0.6 and the one after surely: gaps
        // of 1 (2/3) or 2 (1/3), mean 4/3, a drop fraction of 0.75.
        let mut q = red(QueueLimit::Packets(100), 5.0, 15.0, 0.1, 0.01, true, false);
        fill(&mut q, 20);
        hold(&mut q, 20, 3_000, 0);
        let n = 20_000;
        let frac = hold(&mut q, 20, n, 0) as f64 / n as f64;
        assert!((0.73..0.77).contains(&frac), "gentle drop fraction {frac}");

        // At and beyond 2·max_th gentle RED drops everything too.
        let mut q = red(QueueLimit::Packets(100), 5.0, 15.0, 0.1, 0.01, true, false);
        fill(&mut q, 31);
        hold(&mut q, 31, 3_000, 0);
        assert!(q.average().unwrap() > 30.0);
        assert_eq!(hold(&mut q, 31, 1_000, 0), 1_000);
    }

    fn threshold(limit: QueueLimit, k: u64) -> Q {
        with_arena(Queue::new(
            &QueueSpec::Threshold { limit, k },
            RngStream::derive(7, "test/threshold"),
            Rate::mbps(10),
        ))
    }

    #[test]
    fn a_threshold_queue_marks_every_arrival_that_finds_k_or_more_waiting_and_no_other() {
        // RFC 8257 §3.1 with K = 5 packets: fill to 8, drain to 0, fill again; each ECT(0)
        // arrival is marked exactly when it finds 5 or more packets queued.
        let mut q = threshold(QueueLimit::Packets(10), 5);
        let mut expected = vec![];
        let mut tag = 0;
        for (fill_to, drain_to) in [(8, 0), (7, 3), (9, 9)] {
            while q.len_packets() < fill_to {
                expected.push((tag, q.len_packets() >= 5));
                q.enqueue(SimTime::ZERO, pkt(1000, 2, tag))
                    .expect("under the limit, ECT packets are never dropped");
                tag += 1;
            }
            while q.len_packets() > drain_to {
                let p = q.dequeue(SimTime::ZERO).expect("a packet waits");
                let want = expected.iter().find(|e| e.0 == seq_of(&p)).unwrap().1;
                assert_eq!(p.ecn == ECN_CE, want, "packet {}", seq_of(&p));
            }
        }
        let marked = expected.iter().filter(|e| e.1).count() as u64;
        assert_eq!(marked, 3 + 2 + 4);
        assert_eq!(q.marks(), marked);
        // At K a not-ECT packet is dropped (RFC 3168 §5), a CE one passes unchanged, and below
        // K both pass.
        assert!(q.enqueue(SimTime::ZERO, pkt(1000, 0, 100)).is_err());
        assert!(q.enqueue(SimTime::ZERO, pkt(1000, 3, 101)).is_ok());
        assert_eq!(q.marks(), marked);
        while q.len_packets() > 4 {
            q.dequeue(SimTime::ZERO);
        }
        assert!(q.enqueue(SimTime::ZERO, pkt(1000, 0, 102)).is_ok());

        // In bytes, K = 3000 B: an arrival finding 2 × 1400 B passes, one finding 3 × 1400 B
        // is marked.
        let mut q = threshold(QueueLimit::Bytes(100_000), 3000);
        for i in 0..4 {
            q.enqueue(SimTime::ZERO, pkt(1400, 2, i)).unwrap();
        }
        let ce: Vec<bool> = (0..4)
            .map(|_| q.dequeue(SimTime::ZERO).unwrap().ecn == ECN_CE)
            .collect();
        assert_eq!(ce, vec![false, false, false, true]);
    }

    #[test]
    fn red_with_ecn_marks_ect_packets_instead_of_dropping_them() {
        let mut q = red(QueueLimit::Packets(100), 5.0, 15.0, 0.1, 0.01, false, true);
        fill(&mut q, 10);
        hold(&mut q, 10, 3_000, 2);
        let marks_before = q.marks();
        let mut ce = 0u64;
        let n = 50_000;
        for i in 0..n {
            q.enqueue(SimTime::ZERO, pkt(1000, 2, i))
                .expect("ECT packets are not early-dropped");
            while q.len_packets() > 10 {
                if q.dequeue(SimTime::ZERO).unwrap().ecn == 3 {
                    ce += 1;
                }
            }
        }
        let marks = q.marks() - marks_before;
        let frac = marks as f64 / n as f64;
        assert!((0.09..0.11).contains(&frac), "mark fraction {frac}");
        // Every mark made during the run shows up as CE on a dequeued packet (give or take the
        // 10 packets still queued at either end).
        assert!(ce.abs_diff(marks) <= 10, "ce {ce} marks {marks}");

        // The same queue drops not-ECT packets at the same rate and marks none of them.
        let marks_before = q.marks();
        let drops = hold(&mut q, 10, n, 0);
        assert_eq!(q.marks(), marks_before);
        let frac = drops as f64 / n as f64;
        assert!((0.09..0.11).contains(&frac), "drop fraction {frac}");
    }

    #[test]
    fn red_with_ecn_leaves_ce_packets_unchanged_and_unmarked() {
        let mut q = red(QueueLimit::Packets(100), 5.0, 15.0, 0.1, 0.01, false, true);
        fill(&mut q, 10);
        hold(&mut q, 10, 3_000, 3);
        let before = q.marks();
        assert_eq!(hold(&mut q, 10, 10_000, 3), 0);
        assert_eq!(q.marks(), before);
    }

    #[test]
    fn red_with_ecn_still_drops_ect_packets_above_max_th_and_at_the_hard_limit() {
        // Above max_th without gentle: forced drops, not marks (RFC 3168 §7).
        let mut q = red(QueueLimit::Packets(100), 5.0, 15.0, 0.1, 0.01, false, true);
        fill(&mut q, 20);
        hold(&mut q, 20, 3_000, 1);
        let before = q.marks();
        assert_eq!(hold(&mut q, 20, 1_000, 1), 1_000);
        assert_eq!(q.marks(), before);

        // Gentle: marks between max_th and 2·max_th, drops from 2·max_th.
        let mut q = red(QueueLimit::Packets(100), 5.0, 15.0, 0.1, 0.01, true, true);
        fill(&mut q, 20);
        assert_eq!(hold(&mut q, 20, 3_000, 1), 0);
        assert!(q.marks() > 1_000);
        let mut q = red(QueueLimit::Packets(100), 5.0, 15.0, 0.1, 0.01, true, true);
        fill(&mut q, 31);
        hold(&mut q, 31, 3_000, 1);
        assert_eq!(hold(&mut q, 31, 1_000, 1), 1_000);

        // A full buffer drops ECT packets even with a small average.
        let mut q = red(QueueLimit::Packets(4), 2.0, 3.0, 0.1, 0.0001, true, true);
        for i in 0..4 {
            q.enqueue(SimTime::ZERO, pkt(1000, 1, i)).unwrap();
        }
        assert!(q.average().unwrap() < 0.01);
        let refused = q.enqueue(SimTime::ZERO, pkt(1000, 1, 4)).unwrap_err();
        assert_eq!(refused.ecn, 1);
        assert_eq!(q.marks(), 0);
    }

    #[test]
    fn red_in_byte_mode_measures_the_queue_and_thresholds_in_bytes() {
        // 10 packets of 1000 B held: avg → 10,000 B, between 5,000 and 15,000 B: the same
        // 2·p_b = 0.1 drop fraction as in packet mode.
        let mut q = red(
            QueueLimit::Bytes(100_000),
            5_000.0,
            15_000.0,
            0.1,
            0.01,
            false,
            false,
        );
        fill(&mut q, 10);
        hold(&mut q, 10, 3_000, 0);
        let avg = q.average().unwrap();
        assert!((avg - 10_000.0).abs() < 1e-3, "avg {avg}");
        let n = 50_000;
        let frac = hold(&mut q, 10, n, 0) as f64 / n as f64;
        assert!((0.09..0.11).contains(&frac), "drop fraction {frac}");
    }

    #[test]
    fn red_average_ages_over_an_idle_link_as_if_small_packets_had_arrived() {
        // 10 Mbit/s and mean_packet_size 1250 B: one "small packet" per 1 ms of idle time.
        let w = 0.01;
        let mut q = red(QueueLimit::Packets(100), 5.0, 15.0, 0.1, w, true, false);
        fill(&mut q, 4);
        hold(&mut q, 4, 3_000, 0);
        let before = q.average().unwrap();
        let t0 = SimTime::from_millis(5);
        while q.dequeue(t0).is_some() {}
        // Further empty dequeues do not restart the idle period.
        assert!(q.dequeue(SimTime::from_millis(30)).is_none());
        q.enqueue(SimTime::from_millis(105), pkt(1000, 0, 0))
            .unwrap();
        // 100 ms idle → m = 100, then the ordinary update with q = 0.
        let expected = before * libm::pow(1.0 - w, 100.0) * (1.0 - w);
        let avg = q.average().unwrap();
        assert!(
            (avg - expected).abs() < 1e-12 * before,
            "avg {avg} expected {expected}"
        );
        assert!(avg < before * 0.37, "(0.99)^101 ≈ 0.362");
    }

    #[test]
    fn red_average_does_not_age_while_the_link_is_still_transmitting() {
        let w = 0.01;
        let mut q = red(QueueLimit::Packets(100), 5.0, 15.0, 0.1, w, true, false);
        fill(&mut q, 4);
        hold(&mut q, 4, 3_000, 0);
        let before = q.average().unwrap();
        // The last waiting packet enters the transmitter: the queue is empty but the link busy.
        while q.len_packets() > 0 {
            q.dequeue(SimTime::from_millis(1));
        }
        q.enqueue(SimTime::from_millis(50), pkt(1000, 0, 0))
            .unwrap();
        let avg = q.average().unwrap();
        assert!((avg - before * (1.0 - w)).abs() < 1e-12, "avg {avg}");
    }
}
