// SPDX-License-Identifier: MIT
//! One direction of a point-to-point link: a *channel*.
//!
//! ```text
//!   offer ──> queue discipline ──> transmitter ──> loss model ──> propagation FIFO ──> far node
//!             (DropTail, RED)      (one packet,    (uniform,      (constant delay: packets
//!                                   rate, exact     BER, G-E)      leave in order, so only
//!                                   serialization)                 the head is in the heap)
//! ```
//!
//! A channel has at most two live events: the end of a transmission that packets are waiting
//! for (`TxDone`) and the arrival of the head of its propagation FIFO (`Arrive`). Packets in
//! flight never sit in the event heap (`docs/performance.md`: a 2.5 Gbit/s × 225 ms path holds
//! ~47,000 packets).
//!
//! When a packet starts transmission its whole future on this channel is known: it ends at
//! `start + size/rate` and reaches the far node `delay` later. So it goes into the propagation
//! FIFO at once, stamped with its arrival time, and the transmitter just remembers when it is
//! free again (`busy_until`). A `TxDone` event is needed only when a packet is left *waiting*:
//! it fires when the transmitter frees up, to start the next one. On a link that is mostly idle
//! (access links, the ACK path) a packet costs one event per hop instead of two.
//!
//! ```text
//!   t0 offer, idle      t0 + ser           t0 + ser + delay
//!   ├── transmitting ───┤── propagating ───┤ Arrive: far node
//!   (into the FIFO at t0; counted as sent and put through the loss model at t0)
//! ```
//!
//! # Departures planned at enqueue
//!
//! On most channels nothing can change a waiting packet's future once it is queued: a DropTail
//! queue never reorders or pushes out what it accepted, no loss model draws for it, and no link
//! event cuts the wire. Its transmission starts when the one ahead of it ends, which is
//! already known (`busy_until`). Such a channel is *planned* ([`Channel::plan_departures`]): a
//! packet that has to wait goes into the propagation FIFO at once, with its arrival time, and
//! no `TxDone` event is scheduled for it. The queue it waits in is then only a ring of start
//! times (`starts`, with each packet's size and kind) and their byte count; the queue
//! discipline's own buffer stays empty, and only its DropTail limit is asked
//! ([`Queue::fits_beside`]):
//!
//! ```text
//!   offer at t, busy until b > t          settle(now), before what reads the queue
//!   limit: starts.len(), waiting_bytes    for each start <= now, in order:
//!   starts += (b, size, data?)              starts -= it, waiting_bytes -= size,
//!   waiting_bytes += size                   packets, bytes, data_packets += 1, size, data?
//!   queue integrals += (b - t), size·(b - t)
//!   FIFO   += (b + ser + delay, packet)
//!   busy_until = b + ser
//! ```
//!
//! A packet's share of the queue-length integrals is its time in the queue, known at once
//! (the area under the queue length is the sum of every packet's wait, to the nanosecond), so
//! it is added when the packet is planned and the part after the end of the run taken back
//! then. The ring is settled lazily ([`Channel::settle`]): before the next offer (the limit
//! decides an admission), before a time-series sample, and at the end of the run. The `Arrive` events
//! stay where they were: with a propagation delay the packet ahead is still on the wire when
//! a packet is planned, so a planned packet is never the head of the FIFO until the one
//! ahead arrives, exactly when the event path would have scheduled its `Arrive` too. The
//! serializer runs over the same packets in the same order, so every time is the same.
//!
//! Planning fixes one order at ties: an offer at the very nanosecond a waiting packet starts
//! finds it gone (a packet whose transmission starts at t has left the buffer at t, and an
//! arrival at t sees the room it left; `docs/scenario.md`, "Simultaneous events"). Channels that
//! could be planned but are watched (the packet trace or a pcap capture writes each departure
//! at its instant) or named by a link event keep their `TxDone` events, and the engine runs
//! those first at their nanosecond, so the same ties fall the same way and tracing changes
//! nothing but the count of events ([`Channel::departures_first`]). The AQMs defer their
//! dequeues instead ("Deferred dequeues" below), with the same order at ties. Every other
//! channel (RED, XCP, a shaper and the class-based queues, a loss model, no delay) keeps its
//! `TxDone` events in the order they were scheduled.
//!
//! # Disciplines that decide at dequeue, and shapers
//!
//! CoDel, FQ-CoDel, PIE and the token-bucket shaper decide when a packet leaves
//! ([`Queue::decides_at_dequeue`]): a packet offered to an idle transmitter is queued and
//! dequeued at once (the discipline sees it leave; its sojourn is zero), and a packet they drop
//! after accepting it (CoDel at dequeue, FQ-CoDel's overflow from its fattest flow) is counted
//! in `drops_queue` here and handed to the engine through [`crate::queue::AqmDrops`].
//!
//! A shaper may hold packets while its transmitter is idle: the head waits for tokens. The
//! channel then asks the queue when the head may leave ([`Queue::ready_at`]) and schedules its
//! `TxDone` for that time instead of the end of a transmission:
//!
//! ```text
//!   offer, idle, bucket short   ─> Queued { tx_done: ready_at(now) }
//!   TxDone, head sent           ─> next TxDone at ready_at(end of this transmission)
//!   TxDone, head still short    ─> next TxDone at ready_at(now)   (never happens with exact
//!                                                                  token arithmetic, harmless)
//! ```
//!
//! So a queue that is not empty always has exactly one `TxDone` pending, as before, and its
//! time is the earliest a packet can start: the link's and the shaper's limits together.
//!
//! # Deferred dequeues
//!
//! CoDel, FQ-CoDel, PIE and DualPI2 choose the packet that leaves, and whether to drop or mark
//! it, only when the transmitter frees up, from what waits then: a departure cannot be planned
//! at enqueue. But nothing outside the channel can see a departure before the packet reaches
//! the far node, a propagation delay later, or change the queue before the next offer. So on
//! such a channel, when nothing watches it and no loss model or link event touches it (the
//! conditions of planning), the dequeues are *deferred* ([`Channel::defers_dequeues`]): no
//! `TxDone` event; the channel keeps the time the next waiting packet may start
//! (`next_start`), and runs every dequeue due by `now`, each at its own time, before anything
//! reads or changes the queue:
//!
//! ```text
//!   settle_deferred(now):  while next_start <= now:
//!                            serve(next_start)          dequeue, CoDel's drop or mark,
//!                                                       transmit: into the FIFO
//!                            next_start = end of that transmission, if more wait
//!   called by: an offer (before the discipline sees the arrival), the arrival of the FIFO's
//!   head (before it is popped), a time-series sample, the end of the run
//! ```
//!
//! The arrival of the head is always due in time: a packet waits only behind one in
//! transmission, which is in the FIFO already and arrives `delay` after its transmission
//! ends, that is after the waiting packet starts. So the dequeues run at the same times, on
//! the same queue states, in the same order as `TxDone` events would run them, and the results
//! are the same; what changes is one event per packet fewer on the bottleneck (PAQM,
//! `docs/performance.md`). At ties a dequeue comes before an offer at its nanosecond, as on a
//! planned channel, and the channels that could defer but are watched run their `TxDone`
//! events first at their nanosecond to match ([`Channel::departures_first`]). The engine
//! takes the packets a deferred dequeue dropped after each settling (`sim/engine.rs`).
//!
//! # Sojourn times
//!
//! Every packet that starts transmission is counted in the channel's [`SojournHistogram`] with
//! the time it waited in the queue (zero when it found the transmitter idle): from the FIFO's
//! arrival stamp on the event path, from its planned start on a planned channel (counted when
//! the ring is settled, so that a packet still waiting at the end counts on neither path).
//!
//! The loss model is drawn when a packet starts transmission (in transmission order, the same
//! sequence of draws as at its end): a packet corrupted on the wire still occupies the channel
//! for its full serialization time.
//!
//! The queue and the propagation FIFO hold [`PacketId`]s, handles into the engine's
//! [`PacketArena`] (`arena.rs`): a packet is read in place (its size, the discipline's
//! decision) and never copied on its way through a channel. The channel frees the slot of a
//! packet it destroys (MTU, queue, loss, link down: offered or waiting); one that arrives is
//! handed on by its handle, also when the link went down while it was on the wire (the engine
//! frees that one, `next_arrival_lost`).
//!
//! # Layout
//!
//! A packet crossing a channel reads and writes a handful of its fields: the transmitter's
//! clock, the serializer, the propagation FIFO, the queue's limit or buffer, and a few counters.
//! Where a run has many channels and each sees a packet only now and then (a fat-tree's
//! thousands of links, the access links of many hosts), every cache line of a channel that a
//! packet touches is a miss of its own. So [`Channel`] is laid out by hand (`repr(C)`, aligned
//! to a line): what every packet touches in its first five lines, then what only a waiting or
//! a dropped packet touches, then names and trace state. The serializer is kept in 64-bit
//! words (40 bytes instead of 80) for the same reason. `docs/performance.md` ("A channel's
//! lines") has the cache profile before and after.

use std::collections::VecDeque;

use crate::arena::{PacketArena, PacketId};
use crate::loss::LossModel;
use crate::packet::{Packet, Port};
use crate::queue::{Queue, SojournHistogram};
use crate::time::{Rate, Serializer, SimDuration, SimTime};
use crate::DropReason;

/// A planned departure: a packet waiting in the queue of a planned channel starts its
/// transmission at `at`, when the one ahead of it ends; its size and kind are kept for the
/// counters, since its arena slot may be gone (delivered) by the time the ring is settled.
#[derive(Clone, Copy, Debug)]
struct Start {
    at: SimTime,
    /// When it was offered (its sojourn is `at − queued`).
    queued: SimTime,
    size: u32,
    data: bool,
}

/// Counters of one channel.
// `repr(C)` keeps the declared order: the counters every packet updates come first (`offered`
// to `sojourn`, in the channel's lines 3 and 4), then the integrals and maxima that a waiting
// packet adds to, and the drop counters, touched only on a drop, last. With Rust's own
// layout the 128-bit integrals went first and a packet's counters spread over three lines; on
// a link whose packets interleave with others' (a class-based queue serving eight classes) each
// line was a cache miss of its own (`docs/diffserv.md`, "Speed").
#[repr(C)]
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ChannelStats {
    /// Packets handed to this channel (before any drop).
    pub offered: u64,
    /// Packets and bytes put on the wire, counted when their transmission starts (including
    /// those the loss model destroyed).
    pub packets: u64,
    pub bytes: u64,
    pub data_packets: u64,
    /// Packets that reached the far node.
    pub arrived: u64,
    last_change: SimTime,
    /// Sojourn times of the packets put on the wire (module docs, "Sojourn times"); beside the
    /// per-packet counters, as a packet sent at once adds one to it.
    pub sojourn: SojournHistogram,
    /// Time integrals of the queue length (packets·ns, bytes·ns) for the time-weighted mean.
    pub queue_pkt_ns: u128,
    pub queue_byte_ns: u128,
    pub queue_max_packets: u64,
    pub queue_max_bytes: u64,
    pub drops_queue: u64,
    pub drops_loss: u64,
    pub drops_hook: u64,
    pub drops_mtu: u64,
    pub drops_noroute: u64,
    pub drops_ttl: u64,
    pub drops_link_down: u64,
    /// Bits serialized by the last time-series sample ([`Channel::bits_sent_by`]).
    pub bits_at_last_sample: u128,
}

impl ChannelStats {
    pub fn count_drop(&mut self, reason: DropReason) {
        match reason {
            DropReason::Queue => self.drops_queue += 1,
            DropReason::Loss => self.drops_loss += 1,
            DropReason::Hook => self.drops_hook += 1,
            DropReason::Mtu => self.drops_mtu += 1,
            DropReason::NoRoute => self.drops_noroute += 1,
            DropReason::Ttl => self.drops_ttl += 1,
            DropReason::LinkDown => self.drops_link_down += 1,
        }
    }
    pub fn drops(&self) -> u64 {
        self.drops_queue
            + self.drops_loss
            + self.drops_hook
            + self.drops_mtu
            + self.drops_noroute
            + self.drops_ttl
            + self.drops_link_down
    }
}

// Layout: `repr(C)` keeps the declared order, chosen so that a packet crossing a channel
// touches its first five cache lines and no other (module docs, "Layout"):
//
//   line 0  busy_until rate delay propagation mtu to_node     every packet: offer and arrival
//   line 1  ser waiting_bytes to_iface doomed flags           every packet
//   line 2  queue: limit, discipline, marks, buffer ...       an offer (a planned one: the limit)
//   line 3  ... buffer, starts, stats: offered packets        every offer
//   line 4  stats: bytes data_packets arrived last_change     every packet
//           sojourn (its zero count)
//   line 5+ stats: the queue integrals and maxima             a packet that waits
//           the drop counters, the loss model, names          a drop, results, traces
//
// It used to spread over lines 0, 1, 2, 4, 5, 6, 7 and 8 of 12: where channels are many and each
// is visited once per packet (a fat-tree, thousands of access links) every line is a miss of its
// own. The offsets that matter are asserted at compile time below; `align(64)` makes the
// lines of the comment the cache's lines wherever the channel is stored.
#[repr(C, align(64))]
pub struct Channel {
    /// The transmitter is free from this time on (the end of the last transmission started,
    /// or planned). A `TxDone` event is scheduled at this time exactly when the queue is not
    /// empty and the channel is not planned.
    busy_until: SimTime,
    pub rate: Rate,
    pub delay: SimDuration,
    /// The propagation FIFO: packets on the wire (in transmission or propagating), each with
    /// its arrival time at the far node. The delay is constant, so arrival times never decrease
    /// and only the head needs an `Arrive` event. (Not TCP's `pipe`, RFC 6675 §2: that is the
    /// sender's estimate of its own data in flight.)
    pub propagation: VecDeque<(SimTime, PacketId, Port)>,
    pub mtu: u32,
    pub to_node: u32,
    ser: Serializer,
    /// Planned channels: the bytes of the packets in `starts`.
    waiting_bytes: u64,
    /// The interface packets arrive on at `to_node`.
    pub to_iface: u32,
    /// Packets at the front of the propagation FIFO that were on the wire when the link went
    /// down: each is lost when its arrival comes (so no event has to be cancelled).
    doomed: u32,
    /// Departures are planned at enqueue (module docs): no `TxDone` events, `starts` instead.
    planned: bool,
    /// Dequeues are deferred (module docs, "Deferred dequeues"): no `TxDone` events,
    /// `next_start` instead.
    deferred: bool,
    /// A transmission that starts at t comes before anything else at t: true on the channels
    /// that could be planned or defer their dequeues (a DropTail queue or an AQM, no loss
    /// model, a propagation delay), whether or not they do. The engine schedules their
    /// `TxDone` events to run first at their nanosecond, which gives the order planning and
    /// deferral give (module docs).
    departures_first: bool,
    /// Down (`[[events]]`): offered packets are dropped as `link_down`.
    pub down: bool,
    /// Set while the packet trace watches this channel: the loss model's last victim is kept
    /// in `lost_for_trace` (the trace's `departed` and `dropped` rows need its headers), a
    /// copy taken before its arena slot is freed.
    pub keep_lost: bool,
    /// The loss model can destroy packets (read here so that a lossless transmission does not
    /// touch the model's line).
    lossy: bool,
    pub queue: Queue,
    /// Planned channels: the packets waiting for the transmitter, by start time (each is also
    /// in the propagation FIFO); those that started by the last [`Channel::settle`] are gone.
    /// This is the queue of a planned channel.
    starts: VecDeque<Start>,
    pub stats: ChannelStats,
    pub loss: LossModel,
    /// Link name and direction, for results (`bottleneck`, `a_to_b`).
    pub link: String,
    pub direction: &'static str,
    pub from_node: u32,
    pub lost_for_trace: Option<Packet>,
    /// Deferred channels: when the next waiting packet may start ([`NO_START`]: none waits).
    /// In the last line: only the few channels that defer read it (a bottleneck's AQM), and
    /// the lines before it are every packet's.
    next_start: SimTime,
}

/// The fields of a packet's path in the first five lines of a channel (see above), and the
/// stats' per-packet counters at the head of [`ChannelStats`].
const _: () = {
    use std::mem::offset_of;
    assert!(offset_of!(Channel, to_node) + 4 <= 64);
    assert!(offset_of!(Channel, lossy) < 128);
    assert!(offset_of!(Channel, stats) + offset_of!(ChannelStats, sojourn) + 8 <= 320);
    assert!(offset_of!(Channel, stats) + offset_of!(ChannelStats, last_change) + 8 <= 320);
    // 704 bytes before deferred dequeues; `next_start` opened a twelfth line.
    assert!(std::mem::size_of::<Channel>() == 768);
};

/// `next_start` of a deferred channel with nothing waiting.
const NO_START: SimTime = SimTime::MAX;

/// How many packets behind the head of a propagation FIFO an arrival asks for (`arena.rs`,
/// "Prefetch").
pub const PREFETCH_AHEAD: usize = 2;

/// What `offer` did with a packet.
pub enum Offer {
    /// The transmitter was idle: the packet is on the wire. `head_arrives` is set when it is
    /// the new head of the propagation FIFO (schedule `Arrive`); `lost` when the loss model
    /// took it.
    Sent {
        head_arrives: Option<SimTime>,
        lost: bool,
    },
    /// The packet waits in the queue; schedule `TxDone` at `tx_done` if set.
    Queued { tx_done: Option<SimTime> },
    /// A planned channel: the packet waits in the queue and is already in the propagation
    /// FIFO, planned to start when the one ahead ends; no `TxDone`. `head_arrives` as for
    /// `Sent` (with a propagation delay it is never set: the packet ahead is still on the wire).
    Planned { head_arrives: Option<SimTime> },
    /// The packet was refused (its arena slot is already freed).
    Dropped(DropReason),
}

/// What [`Channel::serve`] did.
struct Served {
    /// A packet started transmission.
    started: bool,
    head_arrives: Option<SimTime>,
    lost: bool,
    next_tx_done: Option<SimTime>,
}

/// What the end of a transmission that packets were waiting for did.
pub struct TxDone {
    /// Schedule `Arrive` at this time (the packet started is the new head of the FIFO).
    pub head_arrives: Option<SimTime>,
    /// Schedule the next `TxDone` at this time (more packets wait).
    pub next_tx_done: Option<SimTime>,
    /// The loss model took the packet started.
    pub lost: bool,
}

impl Channel {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        link: String,
        direction: &'static str,
        from_node: u32,
        to_node: u32,
        to_iface: u32,
        rate: Rate,
        delay: SimDuration,
        mtu: u32,
        queue: Queue,
        loss: LossModel,
    ) -> Self {
        // The conditions under which a waiting packet's future cannot change once it is queued
        // (module docs); watching and link events are the engine's to add
        // ([`Channel::plan_departures`]).
        let departures_first = (queue.is_drop_tail() || queue.may_defer_dequeues())
            && loss.is_none()
            && delay > SimDuration::ZERO;
        Channel {
            lossy: !loss.is_none(),
            departures_first,
            planned: false,
            deferred: false,
            next_start: NO_START,
            starts: VecDeque::new(),
            waiting_bytes: 0,
            link,
            direction,
            from_node,
            to_node,
            to_iface,
            rate,
            delay,
            mtu,
            queue,
            loss,
            busy_until: SimTime::ZERO,
            ser: Serializer::default(),
            propagation: VecDeque::new(),
            stats: ChannelStats::default(),
            down: false,
            doomed: 0,
            keep_lost: false,
            lost_for_trace: None,
        }
    }

    /// Plan this channel's departures from now on (module docs), if it can be: the engine
    /// asks at the build, for a channel no link event names and nothing watches. Nothing may
    /// wait yet.
    pub fn plan_departures(&mut self) {
        let can = self.departures_first && self.queue.is_empty();
        self.planned = can && self.queue.is_drop_tail();
        self.deferred = can && self.queue.may_defer_dequeues();
    }

    /// Whether this channel's dequeues are deferred (module docs, "Deferred dequeues"): the
    /// engine settles it before the head of its FIFO arrives and before a sample.
    #[inline]
    pub fn defers_dequeues(&self) -> bool {
        self.deferred
    }

    /// Run every dequeue of a deferred channel due by `now`, each at its own time (module
    /// docs): what the transmitter would have started by then is on the wire, and what the
    /// discipline dropped on the way waits in its `AqmDrops` for the engine. Nothing to do on
    /// a channel that does not defer, or with nothing due.
    #[inline]
    pub fn settle_deferred(&mut self, now: SimTime, pkts: &mut PacketArena) {
        while self.next_start <= now {
            let t = self.next_start;
            self.touch_queue(t);
            let done = self.serve(t, pkts);
            // The packet ahead is still on the wire (module docs), so a packet started here is
            // never the head of the FIFO, and no loss model runs on a deferred channel.
            debug_assert!(done.head_arrives.is_none() && !done.lost);
            self.next_start = done.next_tx_done.unwrap_or(NO_START);
        }
    }

    /// Whether a transmission that starts at t comes before anything else at t on this
    /// channel: its `TxDone` events run first at their nanosecond (`sim/engine.rs`).
    #[inline]
    pub fn departures_first(&self) -> bool {
        self.departures_first
    }

    /// Whether departures are planned at enqueue on this channel.
    pub fn planned(&self) -> bool {
        self.planned
    }

    /// Settle the planned departures due by `now` (module docs): each waiting packet whose
    /// transmission started at or before `now` leaves the queue and is counted as put on the
    /// wire. Called before anything reads the queue or the counters: an offer, a time-series
    /// sample, the results. Nothing to do on a channel that is not planned.
    // Always inlined: it runs at every offer of a planned channel (P1's path).
    #[inline(always)]
    pub fn settle(&mut self, now: SimTime) {
        while let Some(&s) = self.starts.front() {
            if s.at > now {
                break;
            }
            self.starts.pop_front();
            self.waiting_bytes -= s.size as u64;
            self.stats
                .sojourn
                .record(s.at.saturating_since(s.queued).as_nanos());
            self.count_sent(s.size, s.data);
        }
    }

    /// Packets waiting in the queue (on a planned channel, after [`Channel::settle`]).
    pub fn queue_packets(&self) -> usize {
        self.queue.len_packets() + self.starts.len()
    }

    /// Bytes waiting in the queue (on a planned channel, after [`Channel::settle`]).
    pub fn queue_bytes(&self) -> u64 {
        self.queue.len_bytes() + self.waiting_bytes
    }

    /// The packets still waiting on a planned channel were counted in the queue integrals up
    /// to their start when they were planned: take back the part after `now` (the end of the
    /// run). After [`Channel::settle`], so every one starts after `now`.
    fn integrals_end_at(&mut self, now: SimTime) {
        for s in &self.starts {
            let after = s.at.saturating_since(now).as_nanos() as u128;
            self.stats.queue_pkt_ns -= after;
            self.stats.queue_byte_ns -= s.size as u128 * after;
        }
    }

    /// The link goes down at `now`: what waits in the queue and what is on the wire is lost.
    /// Returns the packets lost now (the queue, whose arena slots are freed); those on the wire
    /// are lost as they "arrive" (the engine frees them then).
    pub fn go_down(&mut self, now: SimTime, pkts: &mut PacketArena) -> u64 {
        let mut lost = 0;
        if self.deferred {
            // As for planning: the engine defers no channel a link event names. Should one go
            // down all the same, what was due leaves first, and the rest is lost below.
            self.settle_deferred(now, pkts);
            self.deferred = false;
            self.next_start = NO_START;
        }
        if self.planned {
            // The engine plans no channel a link event names; should one go down all the same,
            // the packets still waiting (at the back of the FIFO) are lost now, as a queue's,
            // and the channel keeps `TxDone` events from then on.
            self.settle(now);
            if let Some(s) = self.starts.front() {
                self.busy_until = s.at; // the end of the transmission under way
            }
            self.integrals_end_at(now);
            for _ in self.starts.drain(..) {
                if let Some((_, id, _)) = self.propagation.pop_back() {
                    pkts.free(id);
                    lost += 1;
                }
            }
            self.waiting_bytes = 0;
            self.planned = false;
        }
        self.down = true;
        // More packets on one wire than a u32 counts would need terabytes of slots.
        self.doomed = u32::try_from(self.propagation.len()).unwrap_or(u32::MAX);
        // The transmission under way is cut. A `TxDone` scheduled for its end is now stale;
        // `on_tx_done` ignores any that comes before the transmitter is free.
        self.busy_until = self.busy_until.min(now);
        self.touch_queue(now);
        while let Some(id) = self.queue.dequeue_lost(now) {
            pkts.free(id);
            lost += 1;
        }
        self.stats.drops_link_down += lost;
        lost
    }

    /// Whether the next arrival is a packet that was on the wire when the link went down.
    pub fn next_arrival_lost(&self) -> bool {
        self.doomed > 0
    }

    /// Account the queue length up to `now` before it changes.
    #[inline]
    fn touch_queue(&mut self, now: SimTime) {
        let empty = self.queue.is_empty();
        self.touch_queue_known(now, empty);
    }

    /// [`Channel::touch_queue`] when the caller already knows whether the queue is empty.
    #[inline]
    fn touch_queue_known(&mut self, now: SimTime, empty: bool) {
        // An empty queue adds nothing (most offers on an idle link).
        if !empty {
            let dt = now.saturating_since(self.stats.last_change).as_nanos() as u128;
            self.stats.queue_pkt_ns += self.queue.len_packets() as u128 * dt;
            self.stats.queue_byte_ns += self.queue.len_bytes() as u128 * dt;
        }
        self.stats.last_change = now;
    }

    fn note_queue_max(&mut self) {
        let s = &mut self.stats;
        s.queue_max_packets = s.queue_max_packets.max(self.queue.len_packets() as u64);
        s.queue_max_bytes = s.queue_max_bytes.max(self.queue.len_bytes());
    }

    /// The packet `id` wants to leave over this channel.
    pub fn offer(&mut self, now: SimTime, pkts: &mut PacketArena, id: PacketId) -> Offer {
        self.stats.offered += 1;
        if self.down {
            pkts.free(id);
            return Offer::Dropped(DropReason::LinkDown);
        }
        if self.deferred {
            // What left by now (at this very nanosecond too) is gone before the arrival.
            self.settle_deferred(now, pkts);
        }
        let pkt = pkts.get_mut(id);
        let size = pkt.size;
        if size > self.mtu {
            pkts.free(id);
            return Offer::Dropped(DropReason::Mtu);
        }
        if self.planned {
            return self.offer_planned(now, pkts, id, size);
        }
        // Asked once: `admit` decides without queueing, so the answer holds until the push.
        let empty = self.queue.is_empty();
        self.touch_queue_known(now, empty);
        // Every arrival goes through the discipline, even on an idle link, so that RED's
        // average sees it.
        if !self.queue.admit(now, pkt) {
            pkts.free(id);
            return Offer::Dropped(DropReason::Queue);
        }
        // Packets waiting means a TxDone is already scheduled; the first one to wait asks for it.
        let first_to_wait = empty;
        if first_to_wait && self.busy_until <= now {
            if self.queue.decides_at_dequeue() {
                return self.offer_through_queue(now, pkts, id, size);
            }
            // Idle transmitter and nothing waits: the packet would be dequeued at once, so it
            // skips the buffer.
            self.queue.sent_at_once(size);
            self.stats.sojourn.record_zero();
            let (head_arrives, lost) = self.transmit(now, pkts, id, true);
            return Offer::Sent { head_arrives, lost };
        }
        self.queue.push(now, id, size, pkts);
        self.count_aqm_drops();
        self.note_queue_max();
        let tx_done = first_to_wait.then(|| self.queue.ready_at(self.busy_until));
        if self.deferred {
            if let Some(t) = tx_done {
                self.next_start = t;
            }
            return Offer::Queued { tx_done: None };
        }
        Offer::Queued { tx_done }
    }

    /// [`Channel::offer`] of a packet the discipline accepted, to an idle transmitter with
    /// nothing waiting, when the discipline decides at dequeue (module docs): queued, then
    /// dequeued at once, unless a shaper holds it.
    #[cold]
    fn offer_through_queue(
        &mut self,
        now: SimTime,
        pkts: &mut PacketArena,
        id: PacketId,
        size: u32,
    ) -> Offer {
        self.queue.push(now, id, size, pkts);
        let done = self.serve(now, pkts);
        if done.started {
            return Offer::Sent {
                head_arrives: done.head_arrives,
                lost: done.lost,
            };
        }
        self.note_queue_max();
        // Only a shaper holds its head with the transmitter idle, and no shaper defers.
        debug_assert!(!self.deferred);
        Offer::Queued {
            tx_done: done.next_tx_done,
        }
    }

    /// Move the count of the packets the discipline dropped after admitting them into
    /// `drops_queue` (the engine takes their flows, [`Queue::aqm_drops`]).
    #[inline]
    fn count_aqm_drops(&mut self) {
        if let Some(d) = self.queue.aqm_drops() {
            self.stats.drops_queue += std::mem::take(&mut d.uncounted);
        }
    }

    /// [`Channel::offer`] on a planned channel (module docs), for a packet of `size` bytes that
    /// fits the MTU of a link that is up.
    fn offer_planned(
        &mut self,
        now: SimTime,
        pkts: &mut PacketArena,
        id: PacketId,
        size: u32,
    ) -> Offer {
        // What started by now has left the buffer, at the very nanosecond too.
        self.settle(now);
        if !self
            .queue
            .fits_beside(self.starts.len(), self.waiting_bytes, size)
        {
            pkts.free(id);
            return Offer::Dropped(DropReason::Queue);
        }
        let start = self.busy_until;
        if start <= now {
            // Idle (and so nothing waits: every start is before the transmitter frees up).
            self.stats.sojourn.record_zero();
            let (head_arrives, lost) = self.transmit(now, pkts, id, true);
            return Offer::Sent { head_arrives, lost };
        }
        // It waits from now to `start`: its share of the queue-length integrals.
        let wait = start.saturating_since(now).as_nanos() as u128;
        self.stats.queue_pkt_ns += wait;
        self.stats.queue_byte_ns += size as u128 * wait;
        self.waiting_bytes += size as u64;
        let data = pkts.get(id).is_data();
        self.starts.push_back(Start {
            at: start,
            queued: now,
            size,
            data,
        });
        let s = &mut self.stats;
        s.queue_max_packets = s.queue_max_packets.max(self.starts.len() as u64);
        s.queue_max_bytes = s.queue_max_bytes.max(self.waiting_bytes);
        let done = start + self.ser.next(self.rate, size as u64);
        self.busy_until = done;
        let head_arrives = self.propagate(done, pkts, id);
        Offer::Planned { head_arrives }
    }

    /// The end of the transmission under way, or of the last one if the transmitter is idle
    /// (on a planned channel, after [`Channel::settle`]: the next planned start).
    fn transmission_ends(&self) -> SimTime {
        self.starts.front().map_or(self.busy_until, |s| s.at)
    }

    /// Bits put on the wire by `now`: those of every transmission started, less the part of the
    /// one in progress not yet serialized (a run may end in the middle of a packet, and on a
    /// slow link that packet can outweigh everything else sent). On a planned channel, call
    /// [`Channel::settle`] first.
    pub fn bits_sent_by(&self, now: SimTime) -> u128 {
        let started = self.stats.bytes as u128 * 8;
        let left_ns = self
            .transmission_ends()
            .as_nanos()
            .saturating_sub(now.as_nanos()) as u128;
        let left_bits = (left_ns * self.rate.bits_per_sec() as u128).div_ceil(1_000_000_000);
        started.saturating_sub(left_bits)
    }

    /// Start transmitting packet `id` at `now` (the transmitter is free): it goes through the
    /// loss model and into the propagation FIFO. Returns (the arrival time if it is the new head
    /// of the FIFO, whether it was lost; a lost packet's slot is freed). `queue_empty`: nothing
    /// waits behind it (the callers know it already).
    // Always inlined into its two callers: the call itself was 3 % of P1's instructions.
    #[inline(always)]
    fn transmit(
        &mut self,
        now: SimTime,
        pkts: &mut PacketArena,
        id: PacketId,
        queue_empty: bool,
    ) -> (Option<SimTime>, bool) {
        let p = pkts.get(id);
        let done = now + self.ser.next(self.rate, p.size as u64);
        self.busy_until = done;
        if queue_empty {
            // Nothing waits: the transmitter goes idle when this packet is out (RED's idle
            // period starts then, as when ns-2's deque finds the queue empty).
            self.queue.idle_from(done);
        }
        self.count_sent(p.size, p.is_data());
        if self.lossy && self.loss.is_lost(p.size) {
            self.stats.drops_loss += 1;
            if self.keep_lost {
                // The trace reads the victim after its slot is recycled: keep a copy (only
                // while the trace watches this channel, so the untraced path never copies).
                self.lost_for_trace = Some(p.clone());
            }
            pkts.free(id);
            return (None, true);
        }
        (self.propagate(done, pkts, id), false)
    }

    /// A transmission started: count its packet as put on the wire.
    #[inline(always)]
    fn count_sent(&mut self, size: u32, data: bool) {
        self.stats.packets += 1;
        self.stats.bytes += size as u64;
        if data {
            self.stats.data_packets += 1;
        }
    }

    /// The packet `id`, whose transmission ends at `done`, joins the propagation FIFO; returns
    /// its arrival time if it is the new head.
    #[inline(always)]
    fn propagate(&mut self, done: SimTime, pkts: &PacketArena, id: PacketId) -> Option<SimTime> {
        let at = done + self.delay;
        let head = self.propagation.is_empty().then_some(at);
        // With many packets alive the entry also carries the destination port, so that the engine
        // can ask for the state of the endpoint it is for without reading the slot early
        // (`sim/engine.rs`, `prefetch_endpoints_ahead`); below that nobody reads it.
        let port = if pkts.prefetching() {
            pkts.get(id).dst_port()
        } else {
            0
        };
        self.propagation.push_back((at, id, port));
        head
    }

    /// The transmitter freed up at `now` with packets waiting: start the next one.
    pub fn on_tx_done(&mut self, now: SimTime, pkts: &mut PacketArena) -> TxDone {
        if self.busy_until > now {
            // Stale: scheduled before the link went down and came back up (`go_down`).
            return TxDone {
                head_arrives: None,
                next_tx_done: None,
                lost: false,
            };
        }
        self.touch_queue(now);
        let done = self.serve(now, pkts);
        TxDone {
            head_arrives: done.head_arrives,
            next_tx_done: done.next_tx_done,
            lost: done.lost,
        }
    }

    /// The transmitter is free at `now`: start the packet the queue gives, if any, and say when
    /// the next `TxDone` is due (packets still wait: the end of this transmission, or when a
    /// shaper's head may leave).
    #[inline]
    fn serve(&mut self, now: SimTime, pkts: &mut PacketArena) -> Served {
        let next = self.queue.dequeue(now, pkts);
        self.count_aqm_drops();
        let Some(w) = next else {
            // Nothing may leave: the queue is empty (not scheduled so, harmless if it were;
            // CoDel may have dropped all it held) or a shaper's head waits for tokens.
            let next_tx_done = (!self.queue.is_empty()).then(|| self.queue.ready_at(now));
            return Served {
                started: false,
                head_arrives: None,
                lost: false,
                next_tx_done,
            };
        };
        // The next packet to leave has waited in the queue since it arrived: ask for its slot
        // one transmission ahead (`arena.rs`, "Prefetch").
        if pkts.prefetching() {
            if let Some(n) = self.queue.next_hint() {
                pkts.prefetch(n);
            }
        }
        self.stats
            .sojourn
            .record(now.saturating_since(w.since).as_nanos());
        let empty = self.queue.is_empty();
        let (head_arrives, lost) = self.transmit(now, pkts, w.id, empty);
        Served {
            started: true,
            head_arrives,
            lost,
            next_tx_done: (!empty).then(|| self.queue.ready_at(self.busy_until)),
        }
    }

    /// The head of the propagation FIFO arrives now; returns it and the arrival time of the
    /// next head.
    #[inline(always)]
    pub fn on_arrive(&mut self, pkts: &PacketArena) -> Option<(PacketId, Option<SimTime>)> {
        let (_, p, _) = self.propagation.pop_front()?;
        if pkts.prefetching() {
            self.prefetch_arrivals(pkts);
        }
        if self.doomed > 0 {
            self.doomed -= 1;
            self.stats.drops_link_down += 1;
        } else {
            self.stats.arrived += 1;
        }
        let next = self.propagation.front().map(|(t, _, _)| *t);
        Some((p, next))
    }

    /// Ask for what the next arrivals will read (`arena.rs`, "Prefetch"): the slot of the
    /// packet [`PREFETCH_AHEAD`] places behind the head (its slot was last touched when it was
    /// sent, a propagation delay ago; the packets before it were asked for at the previous
    /// arrivals), and the FIFO's own entries eight places further on, written as long ago.
    #[inline(never)]
    fn prefetch_arrivals(&self, pkts: &PacketArena) {
        if let Some(&(_, n, _)) = self.propagation.get(PREFETCH_AHEAD) {
            pkts.prefetch(n);
        }
        if let Some(e) = self.propagation.get(PREFETCH_AHEAD + 8) {
            crate::arena::prefetch(e);
        }
    }

    /// Packets inside this channel: queued, in transmission and propagating (a planned packet
    /// waits in the FIFO already).
    pub fn packets_inside(&self) -> u64 {
        self.queue.len_packets() as u64 + self.propagation.len() as u64
    }

    /// Close the queue-length integrals at the end of the run: settle the departures due by
    /// then, and take back the waiting after it that planned packets were counted for.
    pub fn finish(&mut self, now: SimTime) {
        self.settle(now);
        self.integrals_end_at(now);
        self.touch_queue(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{Packet, Transport};
    use crate::queue::{QueueLimit, QueueSpec};
    use crate::rng::RngStream;
    use crate::scenario::spec::LossSpec;

    fn udp(seq: u64) -> Packet {
        Packet::test_udp(1500, 0, seq)
    }

    /// A channel with its own arena, driven with packets by value as the engine would.
    struct Ch {
        ch: Channel,
        pkts: PacketArena,
    }

    impl Ch {
        fn offer(&mut self, now: SimTime, p: Packet) -> Offer {
            let id = self.pkts.insert(p);
            self.ch.offer(now, &mut self.pkts, id)
        }
        fn on_tx_done(&mut self, now: SimTime) -> TxDone {
            self.ch.on_tx_done(now, &mut self.pkts)
        }
        fn on_arrive(&mut self) -> Option<(Packet, Option<SimTime>)> {
            let (id, next) = self.ch.on_arrive(&self.pkts)?;
            Some((self.pkts.take(id), next))
        }
    }

    impl std::ops::Deref for Ch {
        type Target = Channel;
        fn deref(&self) -> &Channel {
            &self.ch
        }
    }

    /// 10 Mbit/s (a 1,500 B packet takes 1.2 ms) and 5 ms of propagation delay.
    fn channel(queue: QueueSpec) -> Ch {
        channel_with(
            queue,
            LossSpec::None,
            SimDuration::from_millis(5),
            Rate::mbps(10),
        )
    }

    fn channel_with(queue: QueueSpec, loss: LossSpec, delay: SimDuration, rate: Rate) -> Ch {
        let ch = Channel::new(
            "l".into(),
            "a_to_b",
            0,
            1,
            1,
            rate,
            delay,
            1500,
            Queue::new(&queue, RngStream::derive(1, "test/queue"), rate),
            LossModel::new(&loss, RngStream::derive(1, "test/loss")),
        );
        Ch {
            ch,
            pkts: PacketArena::new(),
        }
    }

    /// RED with a limit of 100 packets, thresholds 5 and 15, and weight `w_q`; mean_packet_size
    /// 1,250 B at 10 Mbit/s: one "small packet" per 1 ms of idle time.
    fn red(w_q: f64) -> QueueSpec {
        QueueSpec::Red {
            limit: QueueLimit::Packets(100),
            min_th: 5.0,
            max_th: 15.0,
            max_p: 0.1,
            w_q,
            gentle: true,
            ecn: false,
            mean_packet_size: 1250,
        }
    }

    fn droptail() -> Ch {
        channel(QueueSpec::DropTail {
            limit: QueueLimit::Packets(10),
        })
    }

    fn ms(x: f64) -> SimTime {
        SimTime::from_nanos((x * 1e6).round() as u64)
    }

    fn seq(p: &Packet) -> u64 {
        match &p.transport {
            Transport::Udp(h) => h.seq,
            _ => unreachable!(),
        }
    }

    /// What a user can see of a channel fed offers: every arrival (time and tag), a sample of
    /// the queue and the bits sent at given times, and the counters and integrals at the end.
    #[derive(Debug, PartialEq)]
    struct Seen {
        arrivals: Vec<(SimTime, u64)>,
        samples: Vec<(usize, u64, u128)>,
        stats: ChannelStats,
        inside: u64,
        tx_done_events: usize,
        /// Offers at the very nanosecond of a `TxDone` (handled after it).
        ties: usize,
    }

    /// Drive one channel alone as the engine would: the offers at their times, its `TxDone`
    /// and `Arrive` events, samples (settled first, as `sim/report.rs` does) and the end of
    /// the run. At one nanosecond a transmission's end comes first (departures first), then an
    /// arrival, an offer, a sample.
    fn drive(mut ch: Ch, offers: &[(SimTime, Packet)], samples: &[SimTime], end: SimTime) -> Seen {
        let (mut tx_done, mut arrive) = (None::<SimTime>, None::<SimTime>);
        let (mut i, mut j) = (0, 0);
        let mut seen = Seen {
            arrivals: Vec::new(),
            samples: Vec::new(),
            stats: ChannelStats::default(),
            inside: 0,
            tx_done_events: 0,
            ties: 0,
        };
        let mut last_tx_done = None;
        loop {
            let next = [
                tx_done,
                arrive,
                offers.get(i).map(|o| o.0),
                samples.get(j).copied(),
            ];
            let Some((k, t)) = next
                .iter()
                .enumerate()
                .filter_map(|(k, t)| t.map(|t| (k, t)))
                .min_by_key(|&(k, t)| (t, k))
            else {
                break;
            };
            if t > end {
                break;
            }
            match k {
                0 => {
                    seen.tx_done_events += 1;
                    last_tx_done = Some(t);
                    let d = ch.on_tx_done(t);
                    tx_done = d.next_tx_done;
                    arrive = arrive.or(d.head_arrives);
                }
                1 => {
                    let (p, next) = ch.on_arrive().unwrap();
                    seen.arrivals.push((t, seq(&p)));
                    arrive = next;
                }
                2 => {
                    seen.ties += (last_tx_done == Some(t)) as usize;
                    match ch.offer(t, offers[i].1.clone()) {
                        Offer::Sent { head_arrives, .. } | Offer::Planned { head_arrives } => {
                            arrive = arrive.or(head_arrives)
                        }
                        Offer::Queued { tx_done: d } => tx_done = tx_done.or(d),
                        // Counted by the engine, as here.
                        Offer::Dropped(reason) => ch.ch.stats.count_drop(reason),
                    }
                    i += 1;
                }
                _ => {
                    ch.ch.settle(t);
                    let bits = ch.bits_sent_by(t);
                    seen.samples
                        .push((ch.queue_packets(), ch.queue_bytes(), bits));
                    j += 1;
                }
            }
        }
        ch.ch.finish(end);
        seen.stats = ch.stats.clone();
        seen.inside = ch.packets_inside();
        seen
    }

    /// 2.24 Mbit/s: a datagram of 28 B (headers only, no payload) takes 100 us.
    const GRID_RATE: Rate = Rate::bps(2_240_000);

    /// Bursts of offers on a 100 us grid, of sizes in multiples of 28 B (100 us at
    /// [`GRID_RATE`]), one in eight with no payload: many offers fall on the very nanosecond a
    /// waiting packet starts, and the buffer overflows.
    fn bursts() -> Vec<(SimTime, Packet)> {
        let mut x: u64 = 12345;
        let mut draw = move |n: u64| {
            // A 64-bit LCG (Knuth's MMIX constants): a fixed, portable sequence.
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) % n
        };
        let mut t = 0;
        (0..2000)
            .map(|i| {
                // Mostly back-to-back bursts, now and then a pause that drains the queue.
                t += match draw(10) {
                    0..=6 => 0,
                    7..=8 => 100 * (1 + draw(5)),
                    _ => 100 * (10 + draw(40)),
                };
                let size = if draw(8) == 0 {
                    28
                } else {
                    28 * (2 + draw(14) as u32)
                };
                let at = SimTime::from_nanos(t * 1000);
                (at, Packet::test_udp(size, 0, i))
            })
            .collect()
    }

    fn planned(mut ch: Ch) -> Ch {
        ch.ch.plan_departures();
        assert!(ch.planned());
        ch
    }

    #[test]
    fn a_planned_channel_gives_the_arrivals_counters_and_queue_integrals_of_the_event_path() {
        let offers = bursts();
        let end = offers.last().unwrap().0 + SimDuration::from_millis(50);
        // Samples on a 1 ms grid: on whole 100 us, so some fall on a start too.
        let samples: Vec<SimTime> = (0..end.as_nanos() / 1_000_000)
            .map(|k| SimTime::from_nanos(k * 1_000_000))
            .collect();
        for limit in [QueueLimit::Packets(10), QueueLimit::Bytes(3000)] {
            let queue = QueueSpec::DropTail { limit };
            let grid = |q: QueueSpec| {
                channel_with(q, LossSpec::None, SimDuration::from_millis(5), GRID_RATE)
            };
            let events = drive(grid(queue.clone()), &offers, &samples, end);
            let plan = drive(planned(grid(queue)), &offers, &samples, end);
            let s = &events.stats;
            // Packets waited, many offers fell on a start, the buffer overflowed, and some
            // packets were not data.
            let seen = (events.tx_done_events, events.ties, s.drops_queue);
            assert!(seen.0 > 500 && seen.1 > 50 && seen.2 > 100, "{seen:?}");
            assert!(s.data_packets < s.packets);
            assert_eq!(plan.tx_done_events, 0, "a planned channel needs none");
            assert_eq!(
                events.arrivals.len() as u64 + events.stats.drops_queue,
                offers.len() as u64
            );
            assert_eq!(
                plan,
                Seen {
                    tx_done_events: 0,
                    ties: 0,
                    ..events
                }
            );
        }
    }

    #[test]
    fn a_planned_channel_settles_in_the_middle_of_a_transmission_as_the_event_path_counts_it() {
        // A sample in the middle of the second packet's transmission, and the run ending in the
        // middle of the third: counted as started, less the bits not yet serialized.
        let offers: Vec<_> = (0..3).map(|i| (SimTime::ZERO, udp(i))).collect();
        let (samples, end) = ([ms(1.8)], ms(3.0));
        let events = drive(droptail(), &offers, &samples, end);
        let plan = drive(planned(droptail()), &offers, &samples, end);
        assert_eq!(
            events.samples,
            vec![(1, 1500, 18_000)],
            "1.8 ms at 10 Mbit/s"
        );
        assert_eq!(events.stats.packets, 3);
        assert_eq!(events.stats.queue_pkt_ns, 2 * 1_200_000 + 1_200_000);
        assert_eq!(plan.samples, events.samples);
        assert_eq!(plan.stats, events.stats);
        assert_eq!(plan.inside, 3);
    }

    #[test]
    fn at_the_nanosecond_a_waiting_packet_starts_an_offer_finds_the_room_it_left() {
        // One packet on the wire until 1.2 ms, one waiting for it in a buffer of one. An offer
        // at exactly 1.2 ms finds that packet gone: admitted, where the event path refused it
        // when the offer's event came before the `TxDone` of the same nanosecond.
        let one = || {
            channel(QueueSpec::DropTail {
                limit: QueueLimit::Packets(1),
            })
        };
        let mut plan = planned(one());
        let mut events = one();
        for ch in [&mut plan, &mut events] {
            assert!(matches!(
                ch.offer(SimTime::ZERO, udp(0)),
                Offer::Sent { .. }
            ));
            let waits = ch.offer(ms(0.1), udp(1));
            assert!(matches!(
                waits,
                Offer::Planned { head_arrives: None } | Offer::Queued { tx_done: Some(_) }
            ));
        }
        assert!(matches!(
            plan.offer(ms(1.2), udp(2)),
            Offer::Planned { head_arrives: None }
        ));
        assert_eq!((plan.stats.packets, plan.stats.drops_queue), (2, 0));
        assert!(matches!(
            events.offer(ms(1.2), udp(2)),
            Offer::Dropped(DropReason::Queue)
        ));
        // Packet 2 leaves when packet 1 is out: 1.2 + 1.2 + 1.2 ms, then 5 ms on the wire.
        let mut arrivals = Vec::new();
        while let Some((p, _)) = plan.on_arrive() {
            arrivals.push(seq(&p));
        }
        assert_eq!(arrivals, vec![0, 1, 2]);
        assert_eq!(plan.busy_until, ms(3.6));
    }

    #[test]
    fn only_a_droptail_channel_with_no_loss_model_and_a_delay_can_be_planned() {
        let tail = QueueSpec::DropTail {
            limit: QueueLimit::Packets(10),
        };
        let (delay, rate) = (SimDuration::from_millis(5), Rate::mbps(10));
        let mut with_red = channel(red(0.002));
        let mut lossy = channel_with(tail.clone(), LossSpec::Uniform { rate: 1e-9 }, delay, rate);
        let mut no_delay = channel_with(tail, LossSpec::None, SimDuration::ZERO, rate);
        for ch in [&mut with_red, &mut lossy, &mut no_delay] {
            ch.ch.plan_departures();
            assert!(!ch.planned() && !ch.departures_first());
            // The event path: a waiting packet asks for a `TxDone`.
            let _ = ch.offer(SimTime::ZERO, udp(0));
            assert!(matches!(
                ch.offer(ms(0.1), udp(1)),
                Offer::Queued { tx_done: Some(_) }
            ));
        }
    }

    #[test]
    fn a_packet_offered_to_an_idle_channel_is_on_the_wire_at_once_with_no_tx_done_event() {
        let mut ch = droptail();
        match ch.offer(SimTime::ZERO, udp(0)) {
            Offer::Sent { head_arrives, lost } => {
                assert_eq!(head_arrives, Some(ms(6.2)), "1.2 ms serialization + 5 ms");
                assert!(!lost);
            }
            _ => panic!("an idle channel must send at once"),
        }
        assert_eq!(ch.packets_inside(), 1);
        assert_eq!(ch.queue.len_packets(), 0);
        assert_eq!(ch.stats.packets, 1);
        // Once it is out, the transmitter is free again: the next one goes at once too.
        assert!(matches!(
            ch.offer(ms(1.2), udp(1)),
            Offer::Sent {
                head_arrives: None,
                lost: false
            }
        ));
    }

    #[test]
    fn packets_offered_to_a_busy_transmitter_wait_behind_one_tx_done_and_leave_back_to_back() {
        let mut ch = droptail();
        assert!(matches!(
            ch.offer(SimTime::ZERO, udp(0)),
            Offer::Sent { .. }
        ));
        // The first waiting packet asks for the end of the transmission; the second finds it
        // already asked for.
        assert!(matches!(
            ch.offer(ms(0.1), udp(1)),
            Offer::Queued {
                tx_done: Some(t)
            } if t == ms(1.2)
        ));
        assert!(matches!(
            ch.offer(ms(0.2), udp(2)),
            Offer::Queued { tx_done: None }
        ));
        assert_eq!(ch.stats.queue_max_packets, 2);

        let first = ch.on_tx_done(ms(1.2));
        assert_eq!(
            first.head_arrives, None,
            "packet 0 is still the head of the FIFO"
        );
        assert_eq!(first.next_tx_done, Some(ms(2.4)));
        let second = ch.on_tx_done(ms(2.4));
        assert_eq!(second.next_tx_done, None, "nothing waits any more");
        // While packet 2 is on the wire a new packet waits for it.
        assert!(matches!(
            ch.offer(ms(3.0), udp(3)),
            Offer::Queued {
                tx_done: Some(t)
            } if t == ms(3.6)
        ));

        let mut arrivals = Vec::new();
        while let Some((p, next)) = ch.on_arrive() {
            arrivals.push((seq(&p), next));
        }
        assert_eq!(
            arrivals,
            vec![
                (0, Some(ms(7.4))),
                (1, Some(ms(8.6))),
                (2, None), // packet 3 has not started yet
            ]
        );
    }

    #[test]
    fn red_idle_period_starts_when_the_last_transmission_ends_not_when_it_starts() {
        let w_q = 0.01;
        let mut ch = channel(red(w_q));
        // A burst builds an average; the last packet's transmission ends at 10 × 1.2 = 12 ms.
        for i in 0..10 {
            let _ = ch.offer(SimTime::ZERO, udp(i));
        }
        let mut t = ms(1.2);
        while let Some(next) = ch.on_tx_done(t).next_tx_done {
            t = next;
        }
        assert_eq!(ch.queue.len_packets(), 0);
        let before = ch.queue.average().unwrap();
        assert!(before > 0.0);
        // The link is idle from 12 ms; an arrival at 112 ms sees 100 ms of idleness (m = 100),
        // not 100 + 1.2 (from the start of the last transmission).
        let _ = ch.offer(ms(112.0), udp(99));
        let expected = before * libm::pow(1.0 - w_q, 100.0) * (1.0 - w_q);
        let avg = ch.queue.average().unwrap();
        assert!(
            (avg - expected).abs() < 1e-12 * before,
            "avg {avg} expected {expected}"
        );
    }

    #[test]
    fn a_link_going_down_frees_the_slots_of_what_waits_and_of_what_it_refuses_after() {
        // The same on a planned channel (the engine plans none that a link event names, but
        // one that goes down keeps its accounts straight all the same).
        let mut stats = Vec::new();
        for mut ch in [droptail(), planned(droptail())] {
            for i in 0..4 {
                let _ = ch.offer(SimTime::ZERO, udp(i));
            }
            // One packet on the wire, three waiting (planned: in the FIFO already).
            assert_eq!(ch.queue_packets(), 3);
            assert_eq!(ch.ch.go_down(ms(0.5), &mut ch.pkts), 3);
            assert_eq!((ch.propagation.len(), ch.queue_packets()), (1, 0));
            assert_down_and_freed(&mut ch);
            ch.ch.finish(ms(2.0));
            stats.push(ch.stats.clone());
        }
        assert_eq!(stats[0], stats[1]);
        assert_eq!(stats[0].queue_pkt_ns, 3 * 500_000, "three waited 0.5 ms");
    }

    fn assert_down_and_freed(ch: &mut Ch) {
        // The queue's slots are free; the packet on the wire keeps its slot until its arrival,
        // where the engine frees it (`next_arrival_lost`).
        assert_eq!(ch.pkts.len(), 1);
        assert!(ch.next_arrival_lost());
        assert!(matches!(
            ch.offer(ms(1.0), udp(9)),
            Offer::Dropped(DropReason::LinkDown)
        ));
        assert_eq!(
            ch.pkts.len(),
            1,
            "a packet refused while down is freed at once"
        );
        assert_eq!(ch.stats.drops_link_down, 3);
    }
}
