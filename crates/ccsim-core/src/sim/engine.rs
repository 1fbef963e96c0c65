// SPDX-License-Identifier: MIT
//! The engine: the event heap, the loop that drains it, and the path of a packet through a node.
//!
//! ```text
//!   heap of (time, seq, event), seq strictly increasing: equal times run in scheduling order,
//!   so a run is a pure function of the scenario and the seed; but a TxDone of a channel whose
//!   departures come first runs before every other event of its nanosecond (below).
//!
//!   TxDone(chan)   a transmitter freed up with packets waiting: start the next (only then; a
//!                  packet offered to an idle channel goes straight onto the wire, and on a
//!                  planned channel a packet that waits is put on the wire at once, link.rs)
//!   Arrive(chan)   the head of a propagation FIFO reached the far node: hook, route or deliver
//!   Timer(ep)      an endpoint's deadline (lazily cancelled: stale entries are skipped), kept
//!                  in a heap of its own (timers.rs) and merged by the same (time, seq)
//!   HookTimer(n)   a node hook's deadline (same rule)
//!   Spawn(g)       a short-flow generator starts a new TCP transfer
//!   Sample         the time-series sampler
//! ```
//!
//! Everything that happens at one instant without delay (a hook, routing, delivery to an
//! endpoint, the endpoint's reply) is a direct call, not an event. Packets an endpoint delivers
//! to another endpoint on the same node go through a local FIFO, so there is no recursion:
//!
//! ```text
//!   channel ──Arrive──> at_node ──> hook? ──> route ──┬──> local FIFO ──> endpoint ──┐
//!                          ^                          └──> channel.offer (next hop)  │
//!                          └──────────── call_endpoint: what the endpoint sends <────┘
//! ```
//!
//! Along this path a packet is a [`PacketId`] into the simulator's arena (`arena.rs`): it is put
//! there when `call_endpoint` (or a hook) hands it over, and taken out when it is delivered or
//! given to a hook; whoever drops it frees its slot.
//!
//! Simultaneous events (`docs/scenario.md`): a packet whose transmission starts at t has left
//! the buffer at t, and an arrival at t sees the room it left. Planned channels get that by
//! settling their departures up to the offer's instant (`link.rs`); the channels that could be
//! planned but keep their `TxDone` events (traced, captured, named by a link event) get it
//! from the heap, which runs their `TxDone` first at its nanosecond
//! ([`EventHeap::schedule_first`]). So a trace or a capture on a link changes no result.
//!
//! A packet whose destination is neither this node nor reachable from it (a host does not
//! forward; a router may have no route) is dropped as [`DropReason::NoRoute`], counted on the
//! link it arrived on. A router drops a packet whose time to live runs out as
//! [`DropReason::Ttl`] (a routing loop the build did not refuse could otherwise keep it for ever).

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::ops::ControlFlow;

use super::timers::{Deadline, EndpointTimers};
use super::trace::{Event, Stamp};
use super::Simulator;
use crate::arena::PacketId;
use crate::calendar::Keyed;
use crate::hook::{Filtered, HookOutput};
use crate::link::{Offer, PREFETCH_AHEAD};
use crate::network::NO_ROUTE;
use crate::packet::Port;
use crate::results::StopReason;
use crate::scenario::NodeKind;
use crate::time::SimTime;
use crate::DropReason;

/// From this many endpoints held (not retired) on, and once the arena prefetches, an arrival at
/// a host asks for the state of the endpoints the next packets are for. Below it the endpoints
/// stay in the cache and the hints would cost instructions for nothing.
const PREFETCH_ENDPOINTS_FROM: usize = 1024;

/// How many events run between two checks of the wall clock and of a stop request
/// (`interrupt.rs`), in the event loop and in every inner loop that handles many events within
/// one of the engine's (the ATM fabric's cells, `atm.rs`). At 5 to 20 million events a second
/// that is a check every 3 to 15 ms; a power of two, so the event loop's test is a mask.
pub(super) const CHECK_EVERY: u64 = 65_536;
const _: () = assert!(CHECK_EVERY.is_power_of_two());

/// What happens at a scheduled time, and to which object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Ev {
    /// Channel `c`'s transmitter is free and packets wait in its queue.
    TxDone(u32),
    /// The head of channel `c`'s propagation FIFO reaches the far node.
    Arrive(u32),
    /// The deadline of the endpoint on port `p`.
    Timer(u32),
    /// The deadline of node `n`'s hook.
    HookTimer(u32),
    /// Generator `g` starts a short flow.
    Spawn(u32),
    /// Take a time-series sample.
    Sample,
    /// ATM: the cell network's earliest event is due (`sim/atm.rs`).
    Atm,
    /// Scenario event `i` takes links down or up (`link_events.rs`).
    LinkState(u32),
}

#[derive(Clone, Copy, Debug)]
pub(super) struct Entry {
    pub(super) time: SimTime,
    seq: u64,
    pub(super) ev: Ev,
}

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        self.time == o.time && self.seq == o.seq
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Entry {
    /// `(time, seq)` as one number: one 128-bit comparison instead of a branch per field.
    #[inline]
    fn key(&self) -> u128 {
        (self.time.as_nanos() as u128) << 64 | self.seq as u128
    }
}
impl Ord for Entry {
    /// Reversed: `BinaryHeap` is a max-heap and we want the earliest (time, seq).
    #[inline]
    fn cmp(&self, o: &Self) -> Ordering {
        o.key().cmp(&self.key())
    }
}

/// The top bit of an entry's `seq`: set on every event but those scheduled with
/// [`EventHeap::schedule_first`], which therefore come out before every other event of their
/// nanosecond (and among themselves in scheduling order). The counter stays far below it.
const AFTER_FIRSTS: u64 = 1 << 63;

/// The pending events, earliest `(time, seq)` first. A binary heap alone does not keep equal
/// keys in insertion order; the sequence number, one more for every event scheduled, does.
///
/// Most events schedule one new event while they are handled (an arrival the next one of its
/// FIFO, a transmission's end the next end). So [`EventHeap::pop`] leaves the entry it returns
/// at the root, marked taken, and the next [`EventHeap::schedule`] writes over it and sifts it
/// down once, instead of a removal (a sift to the bottom and back up) plus an insertion. Only
/// `(time, seq)` decides the order in which entries come out, never the heap's shape, so the
/// events run in exactly the same order.
///
/// Endpoint deadlines wait apart, in [`EndpointTimers`] (`timers.rs`, a calendar queue), so
/// that this heap holds the packet events of the busy channels only, whatever the number of
/// flows. Both take their `seq` from the one counter here, and `pop` returns the smaller
/// `(time, seq)` of the two heads: the same order as one heap of all of them. (The packet
/// events stay in a binary heap: in a calendar queue they cost P1 12 to 28 % more
/// instructions and F10000 5 % more; docs/performance.md, "The event queue at scale".)
///
/// One exception to scheduling order: [`EventHeap::schedule_first`] puts an event ahead of
/// everything else due at its nanosecond (module docs, "Simultaneous events").
#[derive(Default)]
pub(super) struct EventHeap {
    seq: u64,
    heap: BinaryHeap<Entry>,
    /// The root is the entry the last `pop` returned, still to be removed or overwritten.
    root_taken: bool,
    timers: EndpointTimers,
}

impl EventHeap {
    #[inline]
    pub(super) fn schedule(&mut self, time: SimTime, ev: Ev) {
        self.seq += 1;
        self.insert(time, self.seq | AFTER_FIRSTS, ev);
    }

    /// Schedule `ev` to run before every event scheduled with [`EventHeap::schedule`] (or as
    /// a deadline) for the same nanosecond, whenever those were scheduled: the end of a
    /// transmission on a channel whose departures come first (`link.rs`).
    #[inline]
    pub(super) fn schedule_first(&mut self, time: SimTime, ev: Ev) {
        self.seq += 1;
        self.insert(time, self.seq, ev);
    }

    #[inline]
    fn insert(&mut self, time: SimTime, seq: u64, ev: Ev) {
        let e = Entry { time, seq, ev };
        if self.root_taken {
            self.root_taken = false;
            if let Some(mut root) = self.heap.peek_mut() {
                *root = e; // sifted down when `root` is dropped
                return;
            }
        }
        self.heap.push(e);
    }

    /// Schedule the deadline of the endpoint on `port`: into the timer queue, with the next
    /// sequence number, so it runs exactly where one heap would have run it.
    #[inline]
    pub(super) fn schedule_timer(&mut self, time: SimTime, port: Port) {
        self.seq += 1;
        self.timers.schedule(Deadline {
            time,
            seq: self.seq | AFTER_FIRSTS,
            port,
        });
    }

    /// The earliest pending event of either queue. A packet event stays in its heap, marked
    /// taken, until the next `schedule` overwrites it or the next `pop` removes it; a deadline
    /// leaves its queue at once (a calendar's removal costs no sift).
    #[inline]
    pub(super) fn pop(&mut self) -> Option<Entry> {
        if self.root_taken {
            self.root_taken = false;
            self.heap.pop();
        }
        let packet = self.heap.peek().copied();
        let timer = self.timers.head();
        match (packet, timer) {
            (Some(e), Some(d)) if e.key() < d.key() => {
                self.root_taken = true;
                Some(e)
            }
            (Some(e), None) => {
                self.root_taken = true;
                Some(e)
            }
            (_, Some(d)) => {
                self.timers.take();
                Some(Entry {
                    time: d.time,
                    seq: d.seq,
                    ev: Ev::Timer(d.port),
                })
            }
            (None, None) => None,
        }
    }

    /// Return the entry [`EventHeap::pop`] gave last, with nothing scheduled since, to its old
    /// place (its `seq` is kept).
    pub(super) fn put_back(&mut self, e: Entry) {
        if self.root_taken {
            debug_assert!(self.heap.peek().is_some_and(|r| r.seq == e.seq));
            self.root_taken = false;
        } else {
            let Ev::Timer(port) = e.ev else {
                unreachable!("only a deadline leaves no root taken: {e:?}")
            };
            self.timers.put_back(Deadline {
                time: e.time,
                seq: e.seq,
                port,
            });
        }
    }

    /// The time of the earliest pending event (ATM: how far the cell network may run alone).
    pub(super) fn peek_time(&self) -> Option<SimTime> {
        let packet = if !self.root_taken {
            self.heap.peek().map(|e| e.time)
        } else {
            // The root is the event being handled, no longer pending: the earliest pending one
            // is the greater (in the reversed order, the earlier) of its two children.
            let slice = self.heap.as_slice();
            slice
                .get(1..)
                .and_then(|c| c.iter().take(2).max())
                .map(|e| e.time)
        };
        match (packet, self.timers.peek_time()) {
            (Some(p), Some(t)) => Some(p.min(t)),
            (p, t) => p.or(t),
        }
    }

    /// Pending events of both queues (stale endpoint deadlines included).
    pub(super) fn len(&self) -> usize {
        self.heap.len() - self.root_taken as usize + self.timers.len()
    }

    pub(super) fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Simulator {
    /// Run the event loop until the end time, an idle network or a limit.
    ///
    /// Stopping at `duration` leaves later events pending and sets the clock to `duration`
    /// exactly, so the rates of [`Simulator::finish`] divide by the scenario's duration.
    pub fn run_loop(&mut self) -> StopReason {
        loop {
            if let Some(limit) = self.limit_reached() {
                return limit;
            }
            self.peak_heap = self.peak_heap.max(self.heap.len() as u64);
            let Some(e) = self.heap.pop() else {
                return StopReason::Idle;
            };
            if e.time > self.end {
                self.heap.put_back(e);
                self.now = self.end;
                return StopReason::Duration;
            }
            self.now = e.time;
            self.events += 1;
            if let ControlFlow::Break(reason) = self.dispatch(e.ev, e.time) {
                return reason;
            }
            self.pump_local();
            self.note_peak_alive();
            // One comparison per event bounds the packets alive: the peak only grows, and
            // `max_alive` changes only when a transfer starts (`share_memory_with_transfers`).
            if self.peak_alive > self.max_alive {
                return StopReason::MemoryLimit;
            }
        }
    }

    /// `limits.max_events`, checked before every event; a stop request and
    /// `limits.max_wall_seconds`, checked every [`CHECK_EVERY`] events (reading the clock costs
    /// more than an event; the request, an atomic load, is read there too so the hot path keeps
    /// one branch). The wall-clock limit leaves time for the result tables
    /// ([`wall_limit_reached`]).
    fn limit_reached(&self) -> Option<StopReason> {
        if self.events >= self.max_engine_events {
            // An inner loop that reached a limit set this one to zero (`inner_limit_reached`).
            return Some(self.inner_stop.unwrap_or(StopReason::EventLimit));
        }
        if self.events & (CHECK_EVERY - 1) == 0 {
            return self.stop_or_wall_limit(self.now);
        }
        None
    }

    /// A capture that failed, a stop request, then `limits.max_wall_seconds`; reports the
    /// progress (`now`) to a watcher. The costly checks, made every [`CHECK_EVERY`] events by
    /// the event loop and by every inner loop.
    fn stop_or_wall_limit(&self, now: SimTime) -> Option<StopReason> {
        if self.capture.failed() {
            // `Simulator::run` returns the capture's error, whatever the reason given here.
            return Some(StopReason::Interrupted);
        }
        if let Some(stop) = &self.stop {
            if stop.is_requested() {
                return Some(StopReason::Interrupted);
            }
            stop.report(now, self.events);
        }
        if let Some(limit) = self.max_wall {
            let elapsed = self.build_started.elapsed().as_secs_f64();
            if wall_limit_reached(elapsed, self.table_rows(), limit) {
                return Some(StopReason::WallLimit);
            }
        }
        None
    }

    /// How many events an inner loop may handle before its next check, when it has handled
    /// `inner` so far in the run: up to its next multiple of [`CHECK_EVERY`] (so the checks
    /// fall as often as the event loop's, however its work is split between engine events),
    /// and no further than `limits.max_events` leaves.
    pub(super) fn inner_budget(&self, inner: u64) -> u64 {
        let to_check = CHECK_EVERY - inner % CHECK_EVERY;
        let to_limit = self
            .max_events
            .saturating_sub(self.events.saturating_add(inner));
        to_check.min(to_limit)
    }

    /// An inner loop has handled `inner` events in the run so far: they count towards
    /// `limits.max_events` with the engine's.
    pub(super) fn count_inner_events(&mut self, inner: u64) {
        // The event loop's own check stays one comparison: its limit is lowered instead.
        self.max_engine_events = self.max_events.saturating_sub(inner);
    }

    /// An inner loop spent its [`Simulator::inner_budget`] with `inner` events handled in the
    /// run so far: whether the run must stop (every limit the event loop checks but the
    /// packets alive, which no inner loop adds to). If so, the inner loop ends its event as
    /// soon as it can, and the event loop stops before its next event with this reason.
    pub(super) fn inner_limit_reached(&mut self, inner: u64) -> bool {
        self.count_inner_events(inner);
        let reason = if self.events.saturating_add(inner) >= self.max_events {
            Some(StopReason::EventLimit)
        } else {
            self.stop_or_wall_limit(self.now)
        };
        if reason.is_some() {
            // No branch of the event loop's own: its one comparison per event sees this.
            self.inner_stop = reason;
            self.max_engine_events = 0;
        }
        reason.is_some()
    }

    /// Rows the result tables will have if the run stops now: flows (a short-flow storm adds
    /// one per transfer), time-series samples and packet-trace events.
    pub(super) fn table_rows(&self) -> u64 {
        (self.flows.len() + self.series.rows() + self.packet_trace.rows()) as u64
    }

    /// Handle one event that was due at `at` (now).
    #[inline]
    fn dispatch(&mut self, ev: Ev, at: SimTime) -> ControlFlow<StopReason> {
        match ev {
            Ev::TxDone(c) => self.on_tx_done(c),
            Ev::Arrive(c) => self.on_arrive(c),
            Ev::Timer(port) => self.on_endpoint_timer(port, at),
            Ev::HookTimer(node) => self.on_hook_timer(node, at),
            Ev::Spawn(g) => self.spawn_short_flow(g),
            Ev::Sample => return self.on_sample(),
            Ev::Atm => self.on_atm(at), // ATM
            Ev::LinkState(i) => self.on_link_state(i),
        }
        ControlFlow::Continue(())
    }

    fn on_tx_done(&mut self, c: u32) {
        let done = self.net.chans[c as usize].on_tx_done(self.now, &mut self.pkts);
        if self.net.chans[c as usize].queue.has_aqm_drops() {
            self.settle_aqm_drops(c);
        }
        if self.capture.on {
            self.capture_departure(c, done.lost);
        }
        if self.packet_trace.on {
            self.trace_departure(c, done.lost);
        }
        if done.lost {
            self.cons.dropped += 1;
            // The channel does not say whose packet the loss model took (retire.rs).
            self.life.lose_track();
        }
        if let Some(t) = done.head_arrives {
            self.heap.schedule(t, Ev::Arrive(c));
        }
        if let Some(t) = done.next_tx_done {
            self.schedule_tx_done(c, t);
        }
    }

    /// The queue of channel `c` dropped packets it had accepted (CoDel at dequeue, FQ-CoDel's
    /// overflow; `queue/mod.rs`, `AqmDrops`): the channel counted them in `drops_queue` and
    /// freed their slots; here they end for the conservation count and their flows, and the
    /// packet trace writes their `dropped` rows.
    #[cold]
    #[inline(never)]
    fn settle_aqm_drops(&mut self, c: u32) {
        let Some(d) = self.net.chans[c as usize].queue.aqm_drops() else {
            return;
        };
        let (flows, copies) = d.take();
        self.cons.dropped += flows.len() as u64;
        for &flow in &flows {
            self.life.ended(flow);
        }
        if self.packet_trace.on {
            for p in &copies {
                self.trace_on_chan(c, Stamp::of(p), Event::Dropped(DropReason::Queue));
            }
        }
        if let Some(d) = self.net.chans[c as usize].queue.aqm_drops() {
            d.give_back(flows, copies);
        }
    }

    /// Run the deferred dequeues of channel `c` due by now (`link.rs`, "Deferred dequeues"),
    /// and end the packets they dropped.
    #[inline(never)]
    pub(super) fn settle_deferred(&mut self, c: u32) {
        let ch = &mut self.net.chans[c as usize];
        ch.settle_deferred(self.now, &mut self.pkts);
        if ch.queue.has_aqm_drops() {
            self.settle_aqm_drops(c);
        }
    }

    /// [`Simulator::settle_deferred`] for every channel that defers, before the queues are
    /// read (a time-series sample, the results).
    pub(super) fn settle_all_deferred(&mut self) {
        for c in 0..self.net.chans.len() {
            if self.net.chans[c].defers_dequeues() {
                self.settle_deferred(c as u32);
            }
        }
    }

    /// Schedule the end of channel `c`'s transmission at `t`, packets waiting: first at its
    /// nanosecond where the channel's departures come first (module docs), else in order.
    #[inline]
    fn schedule_tx_done(&mut self, c: u32, t: SimTime) {
        if self.net.chans[c as usize].departures_first() {
            self.heap.schedule_first(t, Ev::TxDone(c));
        } else {
            self.heap.schedule(t, Ev::TxDone(c));
        }
    }

    /// Plan the departures of every channel that can be (`link.rs`, "Departures planned at
    /// enqueue") and that nothing watches: not the packet trace, not a capture point (each
    /// writes a departure at its instant), not a link event (`go_down` cuts what waits), not
    /// the cell network of an `[atm]` link (which takes its packets before the channel). Called
    /// once, at the end of the build.
    pub(super) fn plan_departures(&mut self) {
        let mut watched = vec![false; self.net.chans.len()];
        for c in self.capture.departing_chans() {
            watched[c as usize] = true;
        }
        for c in self.link_events.chans() {
            watched[c as usize] = true;
        }
        for (c, ch) in self.net.chans.iter_mut().enumerate() {
            let atm = self.atm.as_ref().is_some_and(|a| a.carries(c as u32));
            // `keep_lost`: the packet trace watches this channel (`trace.rs`).
            if !watched[c] && !atm && !ch.keep_lost {
                ch.plan_departures();
            }
        }
    }

    fn on_arrive(&mut self, c: u32) {
        if self.net.chans[c as usize].defers_dequeues() {
            // The dequeues due by now put their packets behind this one first (`link.rs`,
            // "Deferred dequeues").
            self.settle_deferred(c);
        }
        let ch = &mut self.net.chans[c as usize];
        let (to_node, to_iface) = (ch.to_node, ch.to_iface);
        let lost = ch.next_arrival_lost();
        if let Some((id, next)) = ch.on_arrive(&self.pkts) {
            if let Some(t) = next {
                self.heap.schedule(t, Ev::Arrive(c));
                if self.pkts.prefetching()
                    && self
                        .eps
                        .len()
                        .saturating_sub(2 * self.life.retired() as usize)
                        >= PREFETCH_ENDPOINTS_FROM
                    && self.net.nodes[to_node as usize].kind != NodeKind::Router
                {
                    self.prefetch_endpoints_ahead(c);
                }
            }
            if lost {
                // On the wire when the link went down: it dies here, so its slot is freed here
                // (after the trace has read it).
                if self.packet_trace.on {
                    let s = Stamp::of(self.pkts.get(id));
                    self.trace_on_chan(c, s, Event::Dropped(DropReason::LinkDown));
                }
                self.cons.dropped += 1;
                self.life.ended(self.pkts.get(id).flow);
                self.pkts.free(id);
                return;
            }
            if self.packet_trace.on {
                let s = Stamp::of(self.pkts.get(id));
                self.trace_on_chan(c, s, Event::Arrived);
            }
            if self.capture.on {
                self.capture_arrival(c, id);
            }
            self.at_node(to_node, id, Some(to_iface));
        }
    }

    /// Many flows: ask for the state of the endpoints the next packets on channel `c` are for
    /// (`arena.rs`, "Prefetch"), in two steps, since the endpoint's state is behind its slot:
    /// the slot (40 B in `eps`) of the packet [`PREFETCH_AHEAD`] places behind the head (the
    /// one whose packet slot the channel asks for), and the boxed sender or receiver of the
    /// packet one place nearer, whose endpoint slot was asked for at the previous arrival. The
    /// ports come from the FIFO's entries, not the packets' slots.
    #[inline(never)]
    fn prefetch_endpoints_ahead(&self, c: u32) {
        let fifo = &self.net.chans[c as usize].propagation;
        if let Some(&(_, _, port)) = fifo.get(PREFETCH_AHEAD) {
            if let Some(slot) = self.eps.get(port as usize) {
                crate::arena::prefetch(slot);
            }
        }
        if let Some(&(_, _, port)) = fifo.get(PREFETCH_AHEAD - 1) {
            if let Some(slot) = self.eps.get(port as usize) {
                slot.ep.prefetch();
            }
        }
    }

    /// An endpoint's deadline. Rescheduling never removes the old entry (lazy cancellation):
    /// only the entry at `timer_at` is live, and the endpoint may have moved its deadline
    /// later since, in which case it is only rescheduled.
    fn on_endpoint_timer(&mut self, port: Port, at: SimTime) {
        let slot = &mut self.eps[port as usize];
        if slot.timer_at != Some(at) {
            return; // superseded by an earlier entry
        }
        slot.timer_at = None;
        if slot.ep.poll_timeout().is_some_and(|t| t <= self.now) {
            self.call_endpoint(port, None);
        } else {
            self.reschedule_endpoint(port);
        }
    }

    /// A hook's deadline, with the same lazy cancellation as an endpoint's.
    fn on_hook_timer(&mut self, node: u32, at: SimTime) {
        if self.hook_timer_at[node as usize] != Some(at) {
            return;
        }
        self.hook_timer_at[node as usize] = None;
        let mut hook_out = std::mem::take(&mut self.hook_out);
        if let Some(h) = self.hooks[node as usize].as_mut() {
            h.on_timeout(self.now, &mut hook_out);
        }
        self.after_hook(node, None, &mut hook_out);
        self.hook_out = hook_out;
    }

    /// Take a sample and schedule the next, unless the sampler is all that is left: then
    /// nothing else can ever happen, and the run stops rather than sample an idle network
    /// until `duration`.
    fn on_sample(&mut self) -> ControlFlow<StopReason> {
        self.sample();
        if self.heap.is_empty() {
            return ControlFlow::Break(StopReason::Idle);
        }
        if let Some(iv) = self.trace_interval {
            self.heap.schedule(self.now + iv, Ev::Sample);
        }
        ControlFlow::Continue(())
    }

    /// The peak of packets alive. By conservation, alive = created - delivered - dropped
    /// (checked against a structural count by the tests): O(1) per event.
    #[inline]
    fn note_peak_alive(&mut self) {
        let alive = (self.cons.created).saturating_sub(self.cons.delivered + self.cons.dropped);
        self.peak_alive = self.peak_alive.max(alive);
    }

    /// Keep one heap entry at the endpoint's deadline: a new one only if the deadline moved
    /// earlier; a later deadline is found when the old entry fires.
    pub(super) fn reschedule_endpoint(&mut self, port: Port) {
        let slot = &mut self.eps[port as usize];
        if let Some(t) = slot.ep.poll_timeout() {
            let t = t.max(self.now);
            if slot.timer_at.is_none_or(|cur| t < cur) {
                slot.timer_at = Some(t);
                self.heap.schedule_timer(t, port);
            }
        }
    }

    /// The same for the hook of `node`.
    fn reschedule_hook(&mut self, node: u32) {
        let Some(h) = &self.hooks[node as usize] else {
            return;
        };
        if let Some(t) = h.poll_timeout() {
            let t = t.max(self.now);
            if self.hook_timer_at[node as usize].is_none_or(|cur| t < cur) {
                self.hook_timer_at[node as usize] = Some(t);
                self.heap.schedule(t, Ev::HookTimer(node));
            }
        }
    }

    /// Call an endpoint (with a packet, which leaves the arena, or for its timer) and send what
    /// it emits.
    pub(super) fn call_endpoint(&mut self, port: Port, pkt: Option<PacketId>) {
        let now = self.now;
        let mut out = std::mem::take(&mut self.out);
        let slot = &mut self.eps[port as usize];
        match pkt {
            Some(id) => {
                let p = self.pkts.take(id);
                slot.ep.as_endpoint().handle_packet(now, p, &mut out)
            }
            None => slot.ep.as_endpoint().handle_timeout(now, &mut out),
        }
        let node = slot.node;
        self.reschedule_endpoint(port);
        for mut p in out.drain(..) {
            // The host's IP layer, not the transport, sets the TTL (RFC 791 §3.2).
            p.ttl = self.ttl;
            self.cons.created += 1;
            self.life.created(p.flow);
            if p.is_data() {
                self.data_packets_sent += 1;
            }
            let id = self.pkts.insert(p);
            if self.packet_trace.on {
                self.trace_at_node(node, id, Event::Sent);
            }
            self.at_node(node, id, None);
        }
        self.out = out;
    }

    /// A packet is at `node`: through the hook if any, then routing or local delivery. A hook
    /// takes packets by value, so the packet leaves the arena for it, and what the hook
    /// forwards or injects comes back in ([`Simulator::after_hook`]).
    pub(super) fn at_node(&mut self, node: u32, id: PacketId, arrived_on: Option<u32>) {
        let Some(h) = self.hooks[node as usize].as_mut() else {
            self.route(node, id, arrived_on);
            return;
        };
        // A filter decides on the packet in its arena slot (`hook.rs`, "Filters").
        match h.filter(self.now, self.pkts.get_mut(id), arrived_on) {
            Filtered::Pass => return self.route(node, id, arrived_on),
            Filtered::Drop => return self.drop_at_hook(id, arrived_on),
            Filtered::NotAFilter => {}
        }
        let mut hook_out = std::mem::take(&mut self.hook_out);
        let pkt = self.pkts.take(id);
        if let Some(h) = self.hooks[node as usize].as_mut() {
            h.on_packet(self.now, pkt, arrived_on, &mut hook_out);
        }
        self.after_hook(node, arrived_on, &mut hook_out);
        self.hook_out = hook_out;
    }

    /// Account for what a hook did and route the packets it forwarded or injected.
    fn after_hook(&mut self, node: u32, arrived_on: Option<u32>, hook_out: &mut HookOutput) {
        self.cons.created += hook_out.injected;
        self.cons.dropped += hook_out.dropped;
        // Packets a hook received itself (a split-connection relay) end their life delivered.
        self.cons.delivered += hook_out.consumed;
        hook_out.consumed = 0;
        if hook_out.dropped > 0 {
            if let Some(i) = arrived_on {
                let c = self.net.ifaces[i as usize].in_chan;
                self.net.chans[c as usize].stats.drops_hook += hook_out.dropped;
            }
        }
        hook_out.injected = 0;
        hook_out.dropped = 0;
        let mut pkts = std::mem::take(&mut hook_out.packets);
        for p in pkts.drain(..) {
            let id = self.pkts.insert(p);
            self.route(node, id, arrived_on);
        }
        hook_out.packets = pkts;
        self.reschedule_hook(node);
    }

    /// A filter dropped the packet: counted as `after_hook` counts a hook's drops (and, as
    /// there, not in the packet trace).
    fn drop_at_hook(&mut self, id: PacketId, arrived_on: Option<u32>) {
        self.discard(id, arrived_on, DropReason::Hook);
    }

    /// Drop a packet at a node, counted on the channel it arrived on (if it came over one).
    fn drop_packet(
        &mut self,
        node: u32,
        id: PacketId,
        arrived_on: Option<u32>,
        reason: DropReason,
    ) {
        if self.packet_trace.on {
            self.trace_at_node(node, id, Event::Dropped(reason));
        }
        self.discard(id, arrived_on, reason);
    }

    /// Free a dropped packet's slot and count it: in conservation, in its flow's life and on
    /// the channel it arrived on.
    fn discard(&mut self, id: PacketId, arrived_on: Option<u32>, reason: DropReason) {
        let flow = self.pkts.get(id).flow;
        self.pkts.free(id);
        self.cons.dropped += 1;
        self.life.ended(flow);
        if let Some(i) = arrived_on {
            let c = self.net.ifaces[i as usize].in_chan;
            self.net.chans[c as usize].stats.count_drop(reason);
        }
    }

    /// Deliver a packet addressed to this node to its endpoint, or offer it to the channel its
    /// route leaves by. Hosts send their own packets but forward no one else's.
    ///
    /// A router that forwards a packet takes one off its TTL and drops it, as
    /// [`DropReason::Ttl`], if none would be left (RFC 1812 §5.3.1); a packet for this node is
    /// delivered whatever its TTL.
    // Always inlined (into `at_node` and `after_hook`): 3 % of P1's instructions.
    #[inline(always)]
    fn route(&mut self, node: u32, id: PacketId, arrived_on: Option<u32>) {
        let pkt = self.pkts.get(id);
        let dst = pkt.dst as usize;
        if dst < self.net.ifaces.len() && self.net.ifaces[dst].node == node {
            let port = pkt.dst_port();
            if (port as usize) < self.eps.len() && self.eps[port as usize].node == node {
                self.local.push_back((port, id));
            } else {
                self.drop_packet(node, id, arrived_on, DropReason::NoRoute);
            }
            return;
        }
        let forwards =
            arrived_on.is_none() || self.net.nodes[node as usize].kind == NodeKind::Router;
        let iface = if forwards && dst < self.net.ifaces.len() {
            self.net.next_hop(node, dst as u32)
        } else {
            NO_ROUTE
        };
        if iface == NO_ROUTE {
            self.drop_packet(node, id, arrived_on, DropReason::NoRoute);
            return;
        }
        if arrived_on.is_some() {
            let pkt = self.pkts.get_mut(id);
            if pkt.ttl <= 1 {
                self.drop_packet(node, id, arrived_on, DropReason::Ttl);
                return;
            }
            pkt.ttl -= 1;
        }
        let chan = self.net.ifaces[iface as usize].out_chan;
        // ATM: a channel of an [atm] link hands the packet to the cell network, which holds
        // its frames by value: the packet leaves the arena (`sim/atm.rs`).
        if self.atm.as_ref().is_some_and(|a| a.carries(chan)) {
            let pkt = self.pkts.take(id);
            return self.send_over_atm(chan, pkt);
        }
        let pkt = self.pkts.get(id);
        let stamp = self.packet_trace.on.then(|| Stamp::of(pkt));
        let flow = pkt.flow;
        let offer = self.net.chans[chan as usize].offer(self.now, &mut self.pkts, id);
        if self.net.chans[chan as usize].queue.has_aqm_drops() {
            self.settle_aqm_drops(chan);
        }
        match offer {
            Offer::Sent { head_arrives, lost } => {
                if self.capture.on {
                    self.capture_departure(chan, lost);
                }
                if let Some(s) = stamp {
                    self.trace_on_chan(chan, s, Event::Enqueued);
                    self.trace_departure(chan, lost);
                }
                if lost {
                    self.cons.dropped += 1;
                    self.life.ended(flow);
                }
                if let Some(t) = head_arrives {
                    self.heap.schedule(t, Ev::Arrive(chan));
                }
            }
            Offer::Queued { tx_done } => {
                if let Some(s) = stamp {
                    self.trace_on_chan(chan, s, Event::Enqueued);
                }
                if let Some(t) = tx_done {
                    self.schedule_tx_done(chan, t);
                }
            }
            // Nothing traces a planned channel (`plan_departures`).
            Offer::Planned { head_arrives } => {
                if let Some(t) = head_arrives {
                    self.heap.schedule(t, Ev::Arrive(chan));
                }
            }
            Offer::Dropped(reason) => {
                // The channel freed the slot: the stamp is the one taken before the offer (a
                // discipline changes no stamped field of a packet it refuses: RED marks only
                // what it accepts, XCP writes only the congestion header).
                if let Some(s) = stamp {
                    self.trace_on_chan(chan, s, Event::Dropped(reason));
                }
                self.cons.dropped += 1;
                self.life.ended(flow);
                self.net.chans[chan as usize].stats.count_drop(reason);
            }
        }
    }

    /// Deliver packets queued for local endpoints (and whatever they send in reply).
    fn pump_local(&mut self) {
        while let Some((port, id)) = self.local.pop_front() {
            self.cons.delivered += 1;
            if self.packet_trace.on {
                let node = self.eps[port as usize].node;
                self.trace_at_node(node, id, Event::Delivered);
            }
            self.life.ended(self.pkts.get(id).flow);
            self.call_endpoint(port, Some(id));
        }
    }
}

/// Wall-clock time the end of a run takes per row of its result tables, for `limits.max_wall`:
/// building the tables, dropping the simulation, handing them to Python and writing them as
/// Parquet files (`ccsim run`). A short-flow storm of 455,000 transfers took 2.6 to 3.4 s for
/// all of that on the shared 2-core machine (issue 32, docs/performance.md): 6 to 7.5 µs a row.
pub(super) const END_SECONDS_PER_ROW: f64 = 6e-6;

/// Whether a run that has taken `elapsed_s` of wall-clock time and would end with `rows` rows
/// of result tables must stop now to end within `limit_s`: the time its tables take counts
/// against the limit, so that the limit bounds the process and not only the loop (a storm
/// stopped at 10 s once took 16.4 s to exit).
pub(super) fn wall_limit_reached(elapsed_s: f64, rows: u64, limit_s: f64) -> bool {
    elapsed_s + rows as f64 * END_SECONDS_PER_ROW >= limit_s
}
