// SPDX-License-Identifier: MIT
//! Endpoint deadlines, kept in a queue of their own beside the packet events.
//!
//! ```text
//!   EventHeap (engine.rs)                       one seq counter for both
//!   ├── packet events: TxDone, Arrive, Spawn, Sample, HookTimer, Atm, LinkState
//!   │     ~2 entries per busy channel, whatever the number of flows
//!   └── EndpointTimers (here): Timer(port)
//!         ~1 entry per endpoint with a deadline (a bulk TCP flow's RTO, ...)
//!
//!   next event = the smaller (time, seq) of the two heads
//! ```
//!
//! Every bulk flow keeps one deadline pending for its whole life (its retransmission timer), so
//! with 10,000 flows a single heap holds ~10,000 entries and every packet event pays log₂ of
//! that, with cache misses, to leave it. Apart, a packet event pays for the few entries of the
//! channels, and only an endpoint's own deadline (one per RTO, not per packet: a restart that
//! moves the deadline later schedules nothing, see `reschedule_endpoint`) pays for the flows.
//!
//! Both queues take their sequence numbers from one counter and the loop takes the smaller
//! `(time, seq)` of their heads, so events come out in exactly the order one heap gave: the
//! same entries (stale ones included: cancellation stays lazy, and a stale entry still counts
//! as an event when it is skipped), the same keys, the same run.
//!
//! The deadlines wait in a calendar queue (`calendar.rs`), not a binary heap: with 100,000
//! flows the heap held ~130,000 deadlines and a removal sifted through 17 levels, a cache miss
//! at most of them; the calendar removes and inserts in O(1) on average. Deadlines are its
//! best case (Brown's "hold" model): each fires and is re-armed about one retransmission
//! timeout ahead, evenly spread. Measured against the heap in docs/performance.md ("The event
//! queue at scale").

use crate::calendar::{CalendarQueue, Keyed};
use crate::packet::Port;
use crate::time::SimTime;

/// One pending deadline: the endpoint on `port` is due at `time`; `seq` orders equal times.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Deadline {
    pub(super) time: SimTime,
    pub(super) seq: u64,
    pub(super) port: Port,
}

impl Keyed for Deadline {
    /// `(time, seq)` as one number, the key the packet heap uses too (engine.rs).
    #[inline]
    fn key(&self) -> u128 {
        (self.time.as_nanos() as u128) << 64 | self.seq as u128
    }
}

/// The endpoints' pending deadlines, earliest `(time, seq)` first, lazily cancelled.
#[derive(Default)]
pub(super) struct EndpointTimers {
    queue: CalendarQueue<Deadline>,
}

impl EndpointTimers {
    /// Add a deadline (its `seq` given by the caller's counter).
    #[inline]
    pub(super) fn schedule(&mut self, d: Deadline) {
        self.queue.push(d);
    }

    /// The earliest pending deadline.
    #[inline]
    pub(super) fn head(&self) -> Option<Deadline> {
        self.queue.peek().copied()
    }

    /// Remove the head; call after [`EndpointTimers::head`] returned it.
    #[inline]
    pub(super) fn take(&mut self) {
        let taken = self.queue.pop();
        debug_assert!(taken.is_some());
    }

    /// Undo the last `take`, with nothing scheduled since: the deadline, its `seq` kept,
    /// is the earliest again.
    pub(super) fn put_back(&mut self, d: Deadline) {
        self.queue.push(d);
    }

    /// The time of the earliest pending deadline.
    pub(super) fn peek_time(&self) -> Option<SimTime> {
        self.queue.peek_time().map(SimTime::from_nanos)
    }

    /// Pending deadlines, stale ones included (the run summary's `peak_heap` counts them, as
    /// it did when they shared the packet heap).
    pub(super) fn len(&self) -> usize {
        self.queue.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::SimDuration;

    fn at(ms: u64, seq: u64, port: Port) -> Deadline {
        Deadline {
            time: SimTime::ZERO + SimDuration::from_millis(ms),
            seq,
            port,
        }
    }

    /// Drain in order: read the head, take it.
    fn drain(t: &mut EndpointTimers) -> Vec<(u64, Port)> {
        let mut out = Vec::new();
        loop {
            let Some(d) = t.head() else {
                return out;
            };
            t.take();
            out.push((d.seq, d.port));
        }
    }

    #[test]
    fn deadlines_at_one_time_come_out_in_sequence_order_whatever_their_ports() {
        let mut t = EndpointTimers::default();
        for (seq, port) in [(4, 0), (2, 9), (7, 3), (3, 1)] {
            t.schedule(at(5, seq, port));
        }
        t.schedule(at(1, 8, 5));
        assert_eq!(drain(&mut t), vec![(8, 5), (2, 9), (3, 1), (4, 0), (7, 3)]);
    }

    #[test]
    fn a_deadline_scheduled_after_a_take_keeps_the_order() {
        let mut t = EndpointTimers::default();
        for (ms, seq) in [(1, 1), (3, 2), (6, 3)] {
            t.schedule(at(ms, seq, seq as Port));
        }
        assert_eq!(t.head().map(|d| d.seq), Some(1));
        t.take();
        assert_eq!(t.len(), 2);
        assert_eq!(t.peek_time(), Some(at(3, 0, 0).time));
        // The taken deadline's endpoint moved its deadline later: rescheduled at once.
        t.schedule(at(4, 4, 1));
        assert_eq!(t.len(), 3);
        assert_eq!(drain(&mut t), vec![(2, 2), (4, 1), (3, 3)]);
    }

    /// The merge of the two queues against one ordered set of all events: an event loop that
    /// pops, then schedules up to three events (packet events or deadlines, some at the same
    /// instant) at or after the popped time, and now and then puts an event back, must see
    /// exactly the `(time, seq)` order of a single queue.
    #[test]
    fn the_two_queues_give_the_order_of_one_queue_of_all_events() {
        use crate::sim::engine::{Ev, EventHeap};
        use std::collections::BTreeSet;
        let mut heap = EventHeap::default();
        // The reference: (time ns, seq, is a deadline, id); seq counted as the heap counts.
        let mut one: BTreeSet<(u64, u64, bool, u32)> = BTreeSet::new();
        let mut seq = 0u64;
        let mut x = 0x2545_f491_4f6c_dd1du64; // xorshift: a fixed, dependency-free sequence
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut add = |heap: &mut EventHeap, one: &mut BTreeSet<_>, now: u64, r: u64| {
            seq += 1;
            let t = now + (r >> 8) % 4; // few distinct times: many ties
            let id = (r >> 16) as u32 % 1000;
            if r & 1 == 0 {
                heap.schedule_timer(SimTime::ZERO + SimDuration::from_nanos(t), id);
            } else {
                heap.schedule(SimTime::ZERO + SimDuration::from_nanos(t), Ev::Spawn(id));
            }
            one.insert((t, seq, r & 1 == 0, id));
        };
        for _ in 0..50 {
            let r = next();
            add(&mut heap, &mut one, 0, r);
        }
        let mut popped = 0;
        while let Some(e) = heap.pop() {
            let want = one.pop_first().expect("the reference is empty first");
            let got = match e.ev {
                Ev::Timer(p) => (e.time.as_nanos(), true, p),
                Ev::Spawn(g) => (e.time.as_nanos(), false, g),
                other => panic!("never scheduled: {other:?}"),
            };
            assert_eq!(got, (want.0, want.2, want.3), "event {popped}");
            popped += 1;
            let r = next();
            if r % 7 == 0 {
                heap.put_back(e);
                one.insert(want);
                let again = heap.pop().map(|a| (a.time, a.ev));
                assert_eq!(
                    again,
                    Some((e.time, e.ev)),
                    "a put-back event comes out again"
                );
                one.remove(&want);
            }
            if popped < 5_000 {
                for k in 0..(r >> 40) % 4 {
                    add(&mut heap, &mut one, e.time.as_nanos(), next() ^ k);
                }
            }
        }
        assert!(one.is_empty() && popped > 5_000, "{popped} events");
    }

    #[test]
    fn a_put_back_deadline_is_the_head_again() {
        let mut t = EndpointTimers::default();
        t.schedule(at(2, 1, 7));
        t.schedule(at(9, 2, 8));
        let d = t.head().expect("two deadlines");
        t.take();
        t.put_back(d);
        assert_eq!(t.len(), 2);
        assert_eq!(t.head().map(|d| d.port), Some(7));
    }
}
