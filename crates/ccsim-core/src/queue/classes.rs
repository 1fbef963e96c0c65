// SPDX-License-Identifier: MIT
//! The class-based queue discipline of a DiffServ link direction: a classifier, one FIFO per
//! class with its own limit and drop policy (tail, RED, WRED; optional policer), and a
//! scheduler (strict priority, WFQ, DRR, CBWFQ with LLQ) that picks the class to serve.
//!
//! ```text
//!   admit(pkt) ─> class = first match (classifier.rs), else class-default
//!               ─> class policer (meter + actions) ─> LLQ policer (congested only)
//!               ─> hard limit (droptail.rs) and RED / WRED verdict ─> accept, mark or drop
//!   push(pkt)  ─> the class FIFO (fifo.rs); the scheduler learns of a new head
//!   dequeue()  ─> scheduler: priority.rs | wfq.rs | drr.rs | cbwfq.rs ─> the class's head
//! ```
//!
//! Counters per class (offered, accepted and sent packets and bytes, drops by reason, ECN
//! marks) feed the `classes` result table. Per class, offered = accepted + drops (tail, early,
//! police) and accepted = sent + lost to a link going down + queued: packets are conserved
//! class by class.

use super::cbwfq::{llq_admits, Cbwfq};
use super::droptail;
use super::drr::Drr;
use super::fifo::{Fifo, Waiting};
use super::priority::Priority;
use super::red::{signal, Red, RedAverage, RedProfile, Signalled, Verdict};
use super::wfq::Wfq;
use super::wred::{Wred, WredProfileSpec};
use super::{QueueLimit, SojournHistogram};
use crate::arena::PacketId;
use crate::diffserv::{classify, Action, Colour, MatchSpec, Meter, MeterSpec, Step, TokenBucket};
use crate::packet::Packet;
use crate::rng::RngStream;
use crate::time::{Rate, SimTime};

/// Which scheduler serves the classes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SchedulerKind {
    Priority,
    Wfq,
    Drr,
    Cbwfq,
}

/// A class's claim on the link, by scheduler.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Share {
    /// Strict priority: the order of the classes is the priority.
    Order,
    /// WFQ weight φ.
    Weight(u64),
    /// DRR quantum, bytes.
    Quantum(u64),
    /// CBWFQ `bandwidth`.
    Bandwidth(Rate),
    /// CBWFQ `bandwidth percent`, of the link rate.
    BandwidthPercent(u32),
    /// CBWFQ class-default without a bandwidth: what the others leave.
    Remaining,
    /// CBWFQ `priority` (LLQ): rate and burst in bytes.
    Priority { rate: Rate, burst: u64 },
}

/// A class's drop policy.
#[derive(Clone, Debug, PartialEq)]
pub enum DropSpec {
    Tail,
    Red {
        min_th: f64,
        max_th: f64,
        max_p: f64,
        w_q: f64,
        gentle: bool,
        ecn: bool,
        mean_packet_size: u32,
    },
    Wred {
        w_q: f64,
        ecn: bool,
        mean_packet_size: u32,
        /// The profile of each DSCP.
        profiles: Box<[WredProfileSpec; 64]>,
    },
}

/// One policing statement of a class (Cisco `police` inside a class, or one of several
/// `rate-limit` statements): a meter and an action per colour. A `continue` action sends the
/// packet on to the class's next statement (CAR's "continue": evaluate the next rate-limit
/// statement); the last statement never continues.
#[derive(Clone, Debug, PartialEq)]
pub struct ClassPolice {
    pub meter: MeterSpec,
    pub conform: Action,
    pub exceed: Action,
    pub violate: Action,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ClassSpec {
    pub name: String,
    /// None: the class-default (matches everything; the last class).
    pub matches: Option<MatchSpec>,
    pub limit: QueueLimit,
    pub drop: DropSpec,
    pub share: Share,
    /// Policing statements, tried in order (empty: no policing).
    pub police: Vec<ClassPolice>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct SchedulerSpec {
    pub kind: SchedulerKind,
    pub classes: Vec<ClassSpec>,
    /// CBWFQ: the link counts as congested (and LLQ classes are policed) while at least this
    /// many packets wait in the queue, the model of a router's full transmit ring.
    pub tx_ring: u32,
}

/// Counters of one class.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClassCounters {
    pub offered_packets: u64,
    pub offered_bytes: u64,
    pub accepted_packets: u64,
    pub accepted_bytes: u64,
    /// Left the queue for the transmitter (including packets that found the link idle).
    pub sent_packets: u64,
    pub sent_bytes: u64,
    /// The class limit was reached.
    pub drops_tail: u64,
    /// RED or WRED dropped it early.
    pub drops_early: u64,
    /// The class policer or the LLQ policer dropped it.
    pub drops_police: u64,
    /// Accepted, then lost in the queue when the link went down (`[[events]]` link_down).
    pub drops_link_down: u64,
    pub ecn_marks: u64,
}

#[derive(Clone, Debug)]
enum ClassDrop {
    Tail,
    Red(Red),
    Wred(Wred),
}

#[derive(Clone, Debug)]
struct Class {
    fifo: Fifo,
    limit: QueueLimit,
    drop: ClassDrop,
    police: Vec<(Meter, ClassPolice)>,
    llq: Option<TokenBucket>,
    counters: ClassCounters,
    /// Sojourn times of the class's packets sent (the `classes` table's queue delay columns).
    sojourn: SojournHistogram,
}

/// What [`ClassQueue`] asks of a scheduler, the same for every one (`priority.rs`, `wfq.rs`,
/// `drr.rs`, `cbwfq.rs`): the class queues themselves, their counters and drop policies stay
/// here, and a scheduler only keeps what it needs to choose.
pub(crate) trait ClassScheduler {
    /// Class `i` had no packet and now has one, of `head` bytes.
    fn backlogged(&mut self, i: usize, head: u32);
    /// The class whose head goes next, given the head sizes (`head(i)`, None when empty). The
    /// caller pops that head and then calls [`ClassScheduler::served`].
    fn next(&mut self, head: impl Fn(usize) -> Option<u32>) -> Option<usize>;
    /// Class `i`'s head left; `next_head` is the size of its new head, None if it is empty.
    fn served(&mut self, i: usize, next_head: Option<u32>);
}

#[derive(Clone, Debug)]
enum Sched {
    Priority(Priority),
    Wfq(Wfq),
    Drr(Drr),
    Cbwfq(Cbwfq),
}

impl ClassScheduler for Sched {
    #[inline]
    fn backlogged(&mut self, i: usize, head: u32) {
        match self {
            Sched::Priority(s) => s.backlogged(i, head),
            Sched::Wfq(s) => s.backlogged(i, head),
            Sched::Drr(s) => s.backlogged(i, head),
            Sched::Cbwfq(s) => s.backlogged(i, head),
        }
    }

    #[inline]
    fn next(&mut self, head: impl Fn(usize) -> Option<u32>) -> Option<usize> {
        match self {
            Sched::Priority(s) => ClassScheduler::next(s, head),
            Sched::Wfq(s) => ClassScheduler::next(s, head),
            Sched::Drr(s) => ClassScheduler::next(s, head),
            Sched::Cbwfq(s) => ClassScheduler::next(s, head),
        }
    }

    #[inline]
    fn served(&mut self, i: usize, next_head: Option<u32>) {
        match self {
            Sched::Priority(s) => s.served(i, next_head),
            Sched::Wfq(s) => s.served(i, next_head),
            Sched::Drr(s) => s.served(i, next_head),
            Sched::Cbwfq(s) => s.served(i, next_head),
        }
    }
}

/// The discipline's state.
#[derive(Clone, Debug)]
pub struct ClassQueue {
    names: Vec<String>,
    rules: Vec<MatchSpec>,
    /// Class of rule k (the classes with a match, in order).
    rule_class: Vec<usize>,
    /// When every rule matches on the DSCP alone (a behaviour-aggregate classifier, RFC 2475
    /// §2.3.1, the usual case in a core router), the class of each DSCP: one lookup instead of
    /// a walk over the rules.
    by_dscp: Option<[u8; 64]>,
    default: usize,
    classes: Vec<Class>,
    sched: Sched,
    /// The class of the packet [`ClassQueue::admit`] accepted last, for `push`.
    pending: usize,
    /// See [`SchedulerSpec::tx_ring`].
    tx_ring: usize,
    len: usize,
    bytes: u64,
}

/// The WFQ weights of CBWFQ: the bandwidth of each class in bit/s; LLQ classes get none.
fn cbwfq_weights(spec: &SchedulerSpec, link: Rate) -> Vec<u64> {
    let bps = |s: &Share| match *s {
        Share::Bandwidth(r) => r.bits_per_sec(),
        Share::BandwidthPercent(p) => link.bits_per_sec() / 100 * p as u64,
        Share::Priority { rate, .. } => rate.bits_per_sec(),
        _ => 0,
    };
    let reserved: u64 = spec.classes.iter().map(|c| bps(&c.share)).sum();
    let rest = link
        .bits_per_sec()
        .saturating_sub(reserved)
        .max(link.bits_per_sec() / 100)
        .max(1);
    spec.classes
        .iter()
        .map(|c| match c.share {
            Share::Priority { .. } => 0,
            Share::Remaining => rest,
            ref s => bps(s).max(1),
        })
        .collect()
}

impl ClassQueue {
    pub fn new(spec: &SchedulerSpec, rng: &RngStream, link_rate: Rate) -> ClassQueue {
        // Each class's random stream comes from the queue's stream (derived from the link's
        // identity) and the class name, so adding a class changes no other class's draws.
        let class_seed = rng.clone().next_u64();
        let mut rules = Vec::new();
        let mut rule_class = Vec::new();
        let mut default = spec.classes.len().saturating_sub(1);
        for (i, c) in spec.classes.iter().enumerate() {
            match &c.matches {
                Some(m) => {
                    rules.push(m.clone());
                    rule_class.push(i);
                }
                None => {
                    default = i;
                    break;
                }
            }
        }
        let classes = spec
            .classes
            .iter()
            .map(|c| {
                let rng = RngStream::derive(class_seed, &format!("class/{}", c.name));
                let byte_mode = matches!(c.limit, QueueLimit::Bytes(_));
                let drop = match &c.drop {
                    DropSpec::Tail => ClassDrop::Tail,
                    DropSpec::Red {
                        min_th,
                        max_th,
                        max_p,
                        w_q,
                        gentle,
                        ecn,
                        mean_packet_size,
                    } => ClassDrop::Red(Red {
                        average: RedAverage::new(*w_q, *mean_packet_size, link_rate),
                        profile: RedProfile::new(*min_th, *max_th, *max_p, *gentle),
                        ecn: *ecn,
                        byte_mode,
                        rng,
                    }),
                    DropSpec::Wred {
                        w_q,
                        ecn,
                        mean_packet_size,
                        profiles,
                    } => ClassDrop::Wred(Wred::new(
                        RedAverage::new(*w_q, *mean_packet_size, link_rate),
                        profiles,
                        *ecn,
                        rng,
                    )),
                };
                let llq = match c.share {
                    Share::Priority { rate, burst } if spec.kind == SchedulerKind::Cbwfq => {
                        Some(TokenBucket::new(rate, burst))
                    }
                    _ => None,
                };
                Class {
                    fifo: Fifo::default(),
                    limit: c.limit,
                    drop,
                    police: c
                        .police
                        .iter()
                        .map(|p| (Meter::new(&p.meter), p.clone()))
                        .collect(),
                    llq,
                    counters: ClassCounters::default(),
                    sojourn: SojournHistogram::default(),
                }
            })
            .collect();
        let sched = match spec.kind {
            SchedulerKind::Priority => Sched::Priority(Priority::default()),
            SchedulerKind::Wfq => Sched::Wfq(Wfq::new(
                spec.classes
                    .iter()
                    .map(|c| match c.share {
                        Share::Weight(w) => w,
                        _ => 1,
                    })
                    .collect(),
            )),
            SchedulerKind::Drr => Sched::Drr(Drr::new(
                spec.classes
                    .iter()
                    .map(|c| match c.share {
                        Share::Quantum(q) => q,
                        _ => 1500,
                    })
                    .collect(),
            )),
            SchedulerKind::Cbwfq => Sched::Cbwfq(Cbwfq {
                llq_mask: spec
                    .classes
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| matches!(c.share, Share::Priority { .. }))
                    .fold(0u64, |m, (i, _)| m | 1u64 << i),
                llq: Priority::default(),
                wfq: Wfq::new(cbwfq_weights(spec, link_rate)),
            }),
        };
        let dscp_only = rules.iter().all(|m| m.dscp_mask != 0 && m.is_dscp_only());
        let by_dscp = dscp_only.then(|| {
            std::array::from_fn(|d| {
                let k = rules.iter().position(|m| m.dscp_mask & (1u64 << d) != 0);
                k.map_or(default, |k| rule_class[k]) as u8
            })
        });
        ClassQueue {
            names: spec.classes.iter().map(|c| c.name.clone()).collect(),
            rules,
            rule_class,
            by_dscp,
            default,
            classes,
            sched,
            pending: 0,
            tx_ring: spec.tx_ring.max(1) as usize,
            len: 0,
            bytes: 0,
        }
    }

    /// The class of `pkt`: the first rule that matches, else the class-default.
    #[inline]
    fn class_of(&self, pkt: &Packet) -> usize {
        if let Some(table) = &self.by_dscp {
            return table[(pkt.dscp & 63) as usize] as usize;
        }
        match classify(&self.rules, pkt, usize::MAX) {
            usize::MAX => self.default,
            k => self.rule_class[k],
        }
    }

    /// The decision on an arriving packet (see [`super::Queue::admit`]); returns whether it is
    /// accepted and whether it was ECN-marked.
    #[inline]
    pub(crate) fn admit(&mut self, now: SimTime, pkt: &mut Packet) -> (bool, bool) {
        let i = self.class_of(pkt);
        let congested = self.len >= self.tx_ring;
        let c = &mut self.classes[i];
        c.counters.offered_packets += 1;
        c.counters.offered_bytes += pkt.size as u64;
        for (meter, p) in &mut c.police {
            let colour = meter.meter(now, pkt.size, Colour::of_dscp(pkt.dscp));
            match Action::of_colour(colour, p.conform, p.exceed, p.violate).apply(&mut pkt.dscp) {
                Step::Forward => break,
                Step::Drop => {
                    c.counters.drops_police += 1;
                    return (false, false);
                }
                Step::Next => {}
            }
        }
        if let Some(bucket) = &mut c.llq {
            if !llq_admits(bucket, now, pkt.size, congested) {
                c.counters.drops_police += 1;
                return (false, false);
            }
        }
        let fits = droptail::fits(c.limit, &c.fifo, pkt.size);
        let q = if matches!(c.limit, QueueLimit::Bytes(_)) {
            c.fifo.bytes() as f64
        } else {
            c.fifo.len() as f64
        };
        let (verdict, ecn) = match &mut c.drop {
            ClassDrop::Tail => (Verdict::Pass, false),
            ClassDrop::Red(red) => {
                let v = red.on_arrival(now, q);
                if !fits {
                    red.profile.count = 0;
                }
                (v, red.ecn)
            }
            ClassDrop::Wred(w) => {
                let v = w.on_arrival(now, q, pkt.dscp);
                if !fits {
                    w.on_tail_drop(pkt.dscp);
                }
                (v, w.ecn)
            }
        };
        if !fits {
            c.counters.drops_tail += 1;
            return (false, false);
        }
        let mut marked = false;
        match verdict {
            Verdict::Pass => {}
            Verdict::Force => {
                c.counters.drops_early += 1;
                return (false, false);
            }
            Verdict::Signal => match signal(pkt, ecn) {
                Signalled::Marked => {
                    c.counters.ecn_marks += 1;
                    marked = true;
                }
                Signalled::AlreadyCe => {}
                Signalled::Dropped => {
                    c.counters.drops_early += 1;
                    return (false, false);
                }
            },
        }
        c.counters.accepted_packets += 1;
        c.counters.accepted_bytes += pkt.size as u64;
        self.pending = i;
        (true, marked)
    }

    /// The packet that [`ClassQueue::admit`] accepted last: sent at once (the link was idle and
    /// nothing waited), so it never enters a FIFO.
    #[inline]
    pub(crate) fn sent_at_once(&mut self, size: u32) {
        let class = &mut self.classes[self.pending];
        class.sojourn.record_zero();
        let c = &mut class.counters;
        c.sent_packets += 1;
        c.sent_bytes += size as u64;
    }

    /// Queue the packet [`ClassQueue::admit`] accepted last.
    #[inline]
    pub(crate) fn push(&mut self, now: SimTime, id: PacketId, size: u32) {
        let i = self.pending;
        let c = &mut self.classes[i];
        let was_empty = c.fifo.is_empty();
        c.fifo.push(now, id, size);
        self.len += 1;
        self.bytes += size as u64;
        if was_empty {
            self.sched.backlogged(i, size);
        }
    }

    /// The next packet the scheduler picks, if any, counted as sent.
    #[inline]
    pub(crate) fn dequeue(&mut self, now: SimTime) -> Option<Waiting> {
        let (i, w) = self.take(now)?;
        let class = &mut self.classes[i];
        class
            .sojourn
            .record(now.saturating_since(w.since).as_nanos());
        let c = &mut class.counters;
        c.sent_packets += 1;
        c.sent_bytes += w.size as u64;
        Some(w)
    }

    /// The next packet in the scheduler's order, counted as lost because the link went down
    /// (the channel drains the queue this way, so that `sent` stays what left for the wire).
    pub(crate) fn dequeue_lost(&mut self, now: SimTime) -> Option<PacketId> {
        let (i, w) = self.take(now)?;
        self.classes[i].counters.drops_link_down += 1;
        Some(w.id)
    }

    /// Takes the head the scheduler picks out of its class, keeping the scheduler's and the
    /// drop policy's state: the class and the packet.
    #[inline]
    fn take(&mut self, now: SimTime) -> Option<(usize, Waiting)> {
        let classes = &mut self.classes;
        let i = self.sched.next(|i| classes[i].fifo.head_size())?;
        let c = &mut classes[i];
        let w = c.fifo.pop()?;
        self.len -= 1;
        self.bytes -= w.size as u64;
        let next_head = c.fifo.head_size();
        match &mut c.drop {
            ClassDrop::Red(r) if next_head.is_none() => r.average.on_idle(now),
            ClassDrop::Wred(w) if next_head.is_none() => w.average.on_idle(now),
            ClassDrop::Red(r) => r.average.on_dequeue(),
            ClassDrop::Wred(w) => w.average.on_dequeue(),
            ClassDrop::Tail => {}
        }
        self.sched.served(i, next_head);
        Some((i, w))
    }

    /// The link goes idle at `at`: every class's RED average starts its idle period.
    pub(crate) fn idle_from(&mut self, at: SimTime) {
        for c in &mut self.classes {
            match &mut c.drop {
                ClassDrop::Red(r) => r.average.on_idle(at),
                ClassDrop::Wred(w) => w.average.on_idle(at),
                ClassDrop::Tail => {}
            }
        }
    }

    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    #[inline]
    pub(crate) fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Class names and counters, in configuration order, with each class's packets queued now.
    pub fn classes(
        &self,
    ) -> impl Iterator<Item = (&str, &ClassCounters, usize, &SojournHistogram)> {
        self.names
            .iter()
            .zip(&self.classes)
            .map(|(n, c)| (n.as_str(), &c.counters, c.fifo.len(), &c.sojourn))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::tests::{with_arena, Q};
    use crate::queue::{Queue, QueueSpec};

    /// A class matching one DSCP (None: the class-default).
    fn class(name: &str, dscp: Option<u8>, share: Share) -> ClassSpec {
        ClassSpec {
            name: name.into(),
            matches: dscp.map(|d| MatchSpec {
                dscp_mask: 1 << d,
                ..MatchSpec::default()
            }),
            limit: QueueLimit::Packets(1000),
            drop: DropSpec::Tail,
            share,
            police: Vec::new(),
        }
    }

    fn queue(kind: SchedulerKind, classes: Vec<ClassSpec>, rate: Rate) -> Q {
        with_arena(Queue::new(
            &QueueSpec::Scheduler(SchedulerSpec {
                kind,
                classes,
                tx_ring: 4,
            }),
            RngStream::derive(3, "test/classes"),
            rate,
        ))
    }

    fn pkt(size: u32, dscp: u8, flow: u32) -> Packet {
        let mut p = Packet::test_udp(size, 0, 0);
        p.dscp = dscp;
        p.flow = flow;
        p
    }

    /// Backlogs each (dscp, size) class with `n` packets, then serves `take` packets; returns
    /// the packets served per class (by flow = index).
    fn backlogged_shares(q: &mut Q, classes: &[(u8, u32)], n: usize, take: usize) -> Vec<u64> {
        for k in 0..n {
            for (i, &(d, size)) in classes.iter().enumerate() {
                let _ = k;
                q.enqueue(SimTime::ZERO, pkt(size, d, i as u32)).unwrap();
            }
        }
        let mut served = vec![0u64; classes.len()];
        for _ in 0..take {
            let p = q.dequeue(SimTime::ZERO).unwrap();
            served[p.flow as usize] += 1;
        }
        served
    }

    /// A constant-rate source of one DSCP.
    struct Src {
        dscp: u8,
        size: u32,
        gap_ns: u64,
        next: u64,
    }

    /// Drives `q` as a link of `rate` for `until_ns`: sources offer packets, the transmitter
    /// takes the head whenever it is free (an idle link sends an arrival at once, as
    /// `link.rs`). Returns the bytes sent per source.
    fn run_link(q: &mut Q, srcs: &mut [Src], rate: Rate, until_ns: u64) -> Vec<u64> {
        let mut sent = vec![0u64; srcs.len()];
        let mut busy_until = 0u64;
        loop {
            let (k, t) = srcs
                .iter()
                .enumerate()
                .map(|(k, s)| (k, s.next))
                .min_by_key(|&(k, t)| (t, k))
                .unwrap();
            // Start transmissions due before the next arrival.
            while busy_until <= t && !q.is_empty() {
                let p = q.dequeue(SimTime::from_nanos(busy_until)).unwrap();
                sent[p.flow as usize] += p.size as u64;
                busy_until += rate.tx_time(p.size as u64).as_nanos();
            }
            if t >= until_ns {
                break;
            }
            let now = SimTime::from_nanos(t);
            let s = &mut srcs[k];
            let mut p = pkt(s.size, s.dscp, k as u32);
            s.next += s.gap_ns;
            if q.admit(now, &mut p) {
                if q.is_empty() && busy_until <= t {
                    q.sent_at_once(p.size);
                    sent[k] += p.size as u64;
                    busy_until = t + rate.tx_time(p.size as u64).as_nanos();
                } else {
                    q.push(p);
                }
            }
        }
        sent
    }

    fn gap(rate_bps: u64, size: u32) -> u64 {
        size as u64 * 8 * 1_000_000_000 / rate_bps
    }

    #[test]
    fn a_continue_in_a_class_policer_goes_on_to_the_next_statement() {
        // Two CAR statements, as two `rate-limit` lines: the first passes 1 Mbit/s and sends
        // its excess on ("continue"); the second re-marks up to 1 Mbit/s more to AF13 and drops
        // the rest. 1000-B packets offered at 4 Mbit/s for 10 s (5,000 packets).
        let car = |conform, exceed| ClassPolice {
            meter: MeterSpec::Car {
                rate: Rate::mbps(1),
                normal_burst: 2000,
                excess_burst: 2000,
                limit: crate::diffserv::CarLimit::ExcessBurst,
            },
            conform,
            exceed,
            violate: exceed,
        };
        let mut c = class("all", None, Share::Order);
        c.limit = QueueLimit::Packets(100_000);
        c.police = vec![
            car(Action::Transmit, Action::Continue),
            car(Action::SetDscpTransmit(14), Action::Drop),
        ];
        let mut q = queue(SchedulerKind::Priority, vec![c], Rate::gbps(1));
        let (mut kept, mut remarked) = (0u64, 0u64);
        for k in 0..5000u64 {
            let now = SimTime::from_nanos(k * 2_000_000);
            if q.enqueue(now, pkt(1000, 0, 0)).is_ok() {
                let p = q.dequeue(now).unwrap();
                kept += 1;
                remarked += (p.dscp == 14) as u64;
            }
        }
        // 1250 packets per statement over 10 s, plus each bucket's initial 2 packets.
        assert!((2495..=2505).contains(&kept), "kept {kept}");
        assert!((1245..=1255).contains(&remarked), "re-marked {remarked}");
        let k = q.classes().unwrap().classes().next().unwrap().1.clone();
        assert_eq!(k.drops_police, 5000 - kept);
    }

    #[test]
    fn drr_with_quanta_500_and_1000_serves_500_byte_packets_one_to_two() {
        // Reference check 7.
        let mut q = queue(
            SchedulerKind::Drr,
            vec![
                class("a", Some(10), Share::Quantum(500)),
                class("b", None, Share::Quantum(1000)),
            ],
            Rate::mbps(10),
        );
        let served = backlogged_shares(&mut q, &[(10, 500), (0, 500)], 400, 600);
        assert_eq!(served, [200, 400]);
    }

    #[test]
    fn drr_with_a_quantum_of_a_third_of_the_packet_sends_one_every_three_rounds() {
        let mut q = queue(
            SchedulerKind::Drr,
            vec![
                class("small", Some(10), Share::Quantum(500)),
                class("full", None, Share::Quantum(1500)),
            ],
            Rate::mbps(10),
        );
        let served = backlogged_shares(&mut q, &[(10, 1500), (0, 1500)], 400, 400);
        assert_eq!(served, [100, 300]);
    }

    #[test]
    fn wfq_gives_saturated_classes_of_weights_one_and_three_a_quarter_and_three_quarters() {
        // Reference check 8, with an idle third class of weight 4 whose share is redistributed.
        let mut q = queue(
            SchedulerKind::Wfq,
            vec![
                class("one", Some(10), Share::Weight(1)),
                class("idle", Some(12), Share::Weight(4)),
                class("three", None, Share::Weight(3)),
            ],
            Rate::mbps(10),
        );
        let served = backlogged_shares(&mut q, &[(10, 1000), (0, 1000)], 1000, 1000);
        assert_eq!(served, [250, 750]);
        // Unequal sizes: the shares are of bytes, not packets.
        let mut q = queue(
            SchedulerKind::Wfq,
            vec![
                class("one", Some(10), Share::Weight(1)),
                class("three", None, Share::Weight(3)),
            ],
            Rate::mbps(10),
        );
        let served = backlogged_shares(&mut q, &[(10, 400), (0, 1200)], 1000, 800);
        let (a, b) = (served[0] * 400, served[1] * 1200);
        let share = a as f64 / (a + b) as f64;
        assert!((share - 0.25).abs() < 0.01, "share {share}");
    }

    #[test]
    fn wfq_on_a_link_shares_by_weight_and_gives_an_idle_share_to_the_others() {
        let rate = Rate::mbps(10);
        let mut q = queue(
            SchedulerKind::Wfq,
            vec![
                class("one", Some(10), Share::Weight(1)),
                class("three", Some(12), Share::Weight(3)),
                class("rest", None, Share::Weight(4)),
            ],
            rate,
        );
        // "one" and "three" offer 10 Mbit/s each; "rest" offers 1 Mbit/s, less than its half:
        // it gets all it offers and the other two share the remaining 9 in 1 : 3.
        let mut srcs = [
            Src {
                dscp: 10,
                size: 1000,
                gap_ns: gap(10_000_000, 1000),
                next: 0,
            },
            Src {
                dscp: 12,
                size: 1000,
                gap_ns: gap(10_000_000, 1000),
                next: 1,
            },
            Src {
                dscp: 0,
                size: 1000,
                gap_ns: gap(1_000_000, 1000),
                next: 2,
            },
        ];
        let sent = run_link(&mut q, &mut srcs, rate, 10_000_000_000);
        let mbps: Vec<f64> = sent.iter().map(|b| *b as f64 * 8.0 / 10.0 / 1e6).collect();
        assert!((mbps[2] - 1.0).abs() < 0.02, "{mbps:?}");
        assert!((mbps[0] - 2.25).abs() < 0.05, "{mbps:?}");
        assert!((mbps[1] - 6.75).abs() < 0.05, "{mbps:?}");
    }

    #[test]
    fn strict_priority_leaves_nothing_to_lower_classes_when_the_high_class_fills_the_link() {
        // Reference check 9.
        let rate = Rate::mbps(2);
        let mut q = queue(
            SchedulerKind::Priority,
            vec![
                class("high", Some(46), Share::Order),
                class("low", None, Share::Order),
            ],
            rate,
        );
        let mut srcs = [
            Src {
                dscp: 46,
                size: 1000,
                gap_ns: gap(2_000_000, 1000),
                next: 0,
            },
            Src {
                dscp: 0,
                size: 1000,
                gap_ns: gap(1_000_000, 1000),
                next: 0,
            },
        ];
        let sent = run_link(&mut q, &mut srcs, rate, 10_000_000_000);
        // The low class got the very first packet, sent while the link was idle, and nothing
        // after.
        assert!(sent[1] <= 1000, "low class sent {} B", sent[1]);
        assert!(sent[0] >= 2_500_000 - 2000, "high class sent {} B", sent[0]);
    }

    fn llq(rate: Rate) -> Q {
        queue(
            SchedulerKind::Cbwfq,
            vec![
                class(
                    "ef",
                    Some(46),
                    Share::Priority {
                        rate: Rate::bps(1_000_000),
                        burst: 25_000,
                    },
                ),
                class("default", None, Share::Remaining),
            ],
            rate,
        )
    }

    #[test]
    fn llq_is_policed_to_its_rate_under_congestion_and_not_without_it() {
        // Reference check 10: priority 1000 kbit/s on a 2 Mbit/s link, EF offered 1.5 Mbit/s.
        let rate = Rate::mbps(2);
        let secs = 20;
        let mut q = llq(rate);
        let mut srcs = [
            Src {
                dscp: 46,
                size: 500,
                gap_ns: gap(1_500_000, 500),
                next: 0,
            },
            Src {
                dscp: 0,
                size: 1000,
                gap_ns: gap(3_000_000, 1000),
                next: 0,
            },
        ];
        let sent = run_link(&mut q, &mut srcs, rate, secs * 1_000_000_000);
        let ef = sent[0] as f64 * 8.0 / secs as f64 / 1e6;
        let be = sent[1] as f64 * 8.0 / secs as f64 / 1e6;
        assert!((ef - 1.0).abs() < 0.02, "EF {ef} Mbit/s");
        assert!((be - 1.0).abs() < 0.03, "BE {be} Mbit/s");
        let counters: Vec<ClassCounters> = match &q.disc {
            super::super::Discipline::Classes(c) => {
                c.classes().map(|(_, k, _, _)| k.clone()).collect()
            }
            _ => unreachable!(),
        };
        assert!(counters[0].drops_police > 0);
        // Alone, EF is never congested: all 1.5 Mbit/s go through.
        let mut q = llq(rate);
        let mut srcs = [
            Src {
                dscp: 46,
                size: 500,
                gap_ns: gap(1_500_000, 500),
                next: 0,
            },
            Src {
                dscp: 0,
                size: 1000,
                gap_ns: u64::MAX / 2,
                next: u64::MAX / 2,
            },
        ];
        let sent = run_link(&mut q, &mut srcs, rate, secs * 1_000_000_000);
        let ef = sent[0] as f64 * 8.0 / secs as f64 / 1e6;
        assert!((ef - 1.5).abs() < 0.01, "EF alone {ef} Mbit/s");
    }

    #[test]
    fn every_class_conserves_its_packets() {
        let rate = Rate::mbps(2);
        let mut q = llq(rate);
        let mut srcs = [
            Src {
                dscp: 46,
                size: 500,
                gap_ns: gap(1_500_000, 500),
                next: 0,
            },
            Src {
                dscp: 0,
                size: 1000,
                gap_ns: gap(3_000_000, 1000),
                next: 0,
            },
        ];
        run_link(&mut q, &mut srcs, rate, 12_000_000_000);
        let c = q.classes().unwrap();
        for (name, k, queued, _) in c.classes() {
            let drops = k.drops_tail + k.drops_early + k.drops_police;
            assert_eq!(k.offered_packets, k.accepted_packets + drops, "{name}");
            assert_eq!(k.accepted_packets, k.sent_packets + queued as u64, "{name}");
        }
        assert!(c.classes().any(|(_, k, _, _)| k.drops_tail > 0));
    }

    #[test]
    fn wred_drops_high_drop_precedence_first_and_reaches_max_p_at_max_th() {
        // Reference check 6: D = 10 → 0.1 at max_th, weight 1/512.
        let mut table = [WredProfileSpec {
            min_th: 20.0,
            max_th: 40.0,
            max_p: 0.1,
        }; 64];
        table[10] = WredProfileSpec {
            min_th: 33.0,
            max_th: 40.0,
            max_p: 0.1,
        };
        table[14] = WredProfileSpec {
            min_th: 24.0,
            max_th: 40.0,
            max_p: 0.1,
        };
        let mut w = Wred::new(
            RedAverage::new(1.0 / 512.0, 1000, Rate::mbps(10)),
            &table,
            false,
            RngStream::derive(1, "test/wred"),
        );
        assert!((w.profile(10).p_b(39.999_999).unwrap() - 0.1).abs() < 1e-6);
        assert_eq!(w.profile(10).p_b(40.0), Some(1.0));
        // Hold the queue at 30: AF11 (min 33) is never dropped, AF13 (min 24) is.
        let (mut d11, mut d13) = (0, 0);
        for k in 0..20_000 {
            let dscp = if k % 2 == 0 { 10 } else { 14 };
            let v = w.on_arrival(SimTime::ZERO, 30.0, dscp);
            if v != Verdict::Pass {
                if dscp == 10 {
                    d11 += 1
                } else {
                    d13 += 1
                }
            }
        }
        assert!((w.average.avg - 30.0).abs() < 1e-3);
        assert_eq!(d11, 0);
        assert!(d13 > 500, "AF13 drops {d13}");
    }

    #[test]
    fn wred_with_ecn_marks_ect_packets_and_drops_not_ect_ones_early() {
        let mut table = [WredProfileSpec {
            min_th: 20.0,
            max_th: 40.0,
            max_p: 0.1,
        }; 64];
        table[14] = WredProfileSpec {
            min_th: 24.0,
            max_th: 40.0,
            max_p: 0.1,
        };
        let mut c = class("af1", None, Share::Order);
        c.drop = DropSpec::Wred {
            w_q: 1.0 / 512.0,
            ecn: true,
            mean_packet_size: 1000,
            profiles: Box::new(table),
        };
        let mut q = queue(SchedulerKind::Priority, vec![c], Rate::mbps(10));
        // Hold the class at 30 packets (between AF13's thresholds) with ECT(0) packets.
        for k in 0..30u32 {
            let mut p = pkt(1000, 14, k);
            p.ecn = 2;
            q.enqueue(SimTime::ZERO, p).unwrap();
        }
        let mut ce = 0;
        for k in 0..20_000u32 {
            let mut p = pkt(1000, 14, k);
            p.ecn = if k % 2 == 0 { 2 } else { 0 };
            let _ = q.enqueue(SimTime::ZERO, p);
            while q.len_packets() > 30 {
                ce += (q.dequeue(SimTime::ZERO).unwrap().ecn == 3) as u64;
            }
        }
        let k = q.classes().unwrap().classes().next().unwrap().1.clone();
        assert!(k.ecn_marks > 100, "marks {}", k.ecn_marks);
        assert!(k.drops_early > 100, "early drops {}", k.drops_early);
        assert_eq!(k.drops_tail, 0);
        assert!(
            ce.abs_diff(k.ecn_marks) <= 30,
            "CE seen {ce}, marks {}",
            k.ecn_marks
        );
        // The queue-level mark count includes the class's.
        assert_eq!(q.marks(), k.ecn_marks);
    }

    #[test]
    fn the_dscp_table_of_a_behaviour_aggregate_classifier_agrees_with_the_rule_walk() {
        let classes = || {
            let mut a = class("a", Some(10), Share::Order);
            a.matches.as_mut().unwrap().dscp_mask |= 1 << 12;
            let mut b = class("b", Some(12), Share::Order);
            b.matches.as_mut().unwrap().dscp_mask |= 1 << 46;
            vec![a, b, class("rest", None, Share::Order)]
        };
        let ba = ClassQueue::new(
            &SchedulerSpec {
                kind: SchedulerKind::Priority,
                classes: classes(),
                tx_ring: 4,
            },
            &RngStream::derive(1, "t"),
            Rate::mbps(1),
        );
        assert!(ba.by_dscp.is_some());
        // The same rules with a protocol field make it a multi-field classifier.
        let mut mf_classes = classes();
        mf_classes[0].matches.as_mut().unwrap().protocol = Some(crate::diffserv::Protocol::Udp);
        let mf = ClassQueue::new(
            &SchedulerSpec {
                kind: SchedulerKind::Priority,
                classes: mf_classes,
                tx_ring: 4,
            },
            &RngStream::derive(1, "t"),
            Rate::mbps(1),
        );
        assert!(mf.by_dscp.is_none());
        for d in 0..64u8 {
            let p = pkt(100, d, 0);
            assert_eq!(ba.class_of(&p), mf.class_of(&p), "dscp {d}");
        }
        assert_eq!(ba.class_of(&pkt(100, 12, 0)), 0, "first match wins");
        assert_eq!(ba.class_of(&pkt(100, 46, 0)), 1);
        assert_eq!(ba.class_of(&pkt(100, 0, 0)), 2);
    }
}
