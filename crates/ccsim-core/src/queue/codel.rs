// SPDX-License-Identifier: MIT
//! CoDel, "Controlled Delay" (RFC 8289): an AQM that looks at how long packets have waited,
//! not at how many wait, and acts when the packet leaves.
//!
//! Every packet carries the time it was queued (`fifo.rs`); at dequeue its *sojourn time* is
//! `now − queued`. A queue whose every packet has waited at least `target` (5 ms) for a whole
//! `interval` (100 ms, about a worst-case RTT) holds a *standing* queue, which only delays
//! traffic: CoDel then enters its dropping state and drops (or, with `ecn`, CE-marks) one packet
//! at dequeue, and further ones at times that come closer and closer as the control law
//! (RFC 8289 §3.3) says, until a packet leaves having waited less than `target`:
//!
//! ```text
//!   sojourn >= target (and more than an MTU queued) ...... for `interval` ──> dropping
//!   drop at t1 = now                                    count = 1 (or the reused count)
//!   drop at t(k+1) = t(k) + interval / sqrt(count)      count += 1 at each drop
//!   sojourn < target, or the queue down to an MTU ──────────────────────> not dropping
//! ```
//!
//! Re-entering the dropping state soon after leaving it (within 16 intervals of the next drop
//! it had planned) starts from the drop rate that controlled the queue last time: count is set
//! to the drops made since, when that is more than one (RFC 8289 §5.5's pseudo-code, which
//! takes Linux's rule).
//!
//! [`CodelState`] is one instance of the algorithm; it reads packets through [`CodelQueue`] so
//! that FQ-CoDel (`fq_codel.rs`) runs one per flow queue over the same code. The control law
//! uses `libm::sqrt` (correctly rounded, the same on every machine); Linux's
//! Newton-step reciprocal square root differs from it by far less than a nanosecond at these
//! scales.

use super::fifo::Waiting;
use super::red::{signal, Signalled};
use super::AqmDrops;
use crate::arena::PacketArena;
use crate::time::{SimDuration, SimTime};

/// CoDel's parameters (RFC 8289 §4.2, §4.3 and §5.3).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CodelParams {
    /// Acceptable standing queue delay (§4.3: 5 ms).
    pub target: SimDuration,
    /// Sliding window over which the sojourn time must stay above target (§4.2: 100 ms).
    pub interval: SimDuration,
    /// MAXPACKET (§5.3's pseudo-code): with this many bytes or fewer queued CoDel never drops,
    /// so that a slow link whose one packet takes longer than `target` stays busy.
    pub maxpacket: u64,
    /// CE-mark ECN-capable packets instead of dropping them (RFC 8289 speaks of dropping or
    /// marking throughout; the marking rule is Linux's `ecn` option).
    pub ecn: bool,
}

/// Where CoDel takes its packets from: a FIFO, and the bytes left queued after a dequeue
/// (a CoDel queue's own; in FQ-CoDel the whole queue's, as Linux compares its backlog).
pub(crate) trait CodelQueue {
    fn pop(&mut self) -> Option<Waiting>;
    fn backlog(&self) -> u64;
}

/// The state of one CoDel instance (RFC 8289 §5.1's variables).
#[derive(Clone, Debug, Default)]
pub(crate) struct CodelState {
    /// Drops (or marks) since entering the dropping state: the control law's count.
    pub(crate) count: u32,
    /// `count` when the dropping state was last entered.
    lastcount: u32,
    /// In the dropping state.
    pub(crate) dropping: bool,
    /// When the sojourn time will have been above target for an interval; None while below.
    first_above_time: Option<SimTime>,
    /// The next drop's time while dropping.
    pub(crate) drop_next: SimTime,
}

/// RFC 8289 §3.3: the next drop comes interval/sqrt(count) after `t`.
#[inline]
pub(crate) fn control_law(t: SimTime, interval: SimDuration, count: u32) -> SimTime {
    let gap = interval.as_nanos() as f64 / libm::sqrt(count.max(1) as f64);
    t + SimDuration::from_nanos(gap as u64)
}

impl CodelState {
    /// RFC 8289 §5.6's `dodequeue`: the head packet, and whether CoDel may drop it (its sojourn
    /// time has been at or above target for at least an interval).
    #[inline]
    fn do_dequeue(
        &mut self,
        p: &CodelParams,
        now: SimTime,
        q: &mut impl CodelQueue,
    ) -> (Option<Waiting>, bool) {
        let Some(w) = q.pop() else {
            // An empty queue cannot be above target.
            self.first_above_time = None;
            return (None, false);
        };
        let sojourn = now.saturating_since(w.since);
        if sojourn < p.target || q.backlog() <= p.maxpacket {
            // Went below: stay below for at least an interval before dropping.
            self.first_above_time = None;
            return (Some(w), false);
        }
        match self.first_above_time {
            None => {
                // Just went above: if still above an interval from now, drop.
                self.first_above_time = Some(now + p.interval);
                (Some(w), false)
            }
            Some(t) => (Some(w), now >= t),
        }
    }

    /// RFC 8289 §5.5's `dequeue`: the packet to send now, after the drops (or marks) the
    /// control law asks for. Dropped packets go to `drops` (their slots freed), marks are
    /// counted there too.
    pub(crate) fn dequeue(
        &mut self,
        p: &CodelParams,
        now: SimTime,
        q: &mut impl CodelQueue,
        pkts: &mut PacketArena,
        drops: &mut AqmDrops,
    ) -> Option<Waiting> {
        let (mut w, ok_to_drop) = self.do_dequeue(p, now, q);
        let Some(head) = w else {
            self.dropping = false;
            return None;
        };
        if self.dropping {
            if !ok_to_drop {
                // Sojourn time below target: leave the dropping state.
                self.dropping = false;
            }
            // Time for the next drop; a large backlog may make the next one due at once too.
            while self.dropping && now >= self.drop_next {
                let Some(victim) = w else { break };
                self.count += 1;
                if p.ecn && drops.mark(pkts, victim.id) {
                    // A mark delivers the packet: the next signal is one control-law step on.
                    self.drop_next = control_law(self.drop_next, p.interval, self.count);
                    return Some(victim);
                }
                drops.drop(pkts, victim.id);
                let (next, ok) = self.do_dequeue(p, now, q);
                w = next;
                if ok {
                    self.drop_next = control_law(self.drop_next, p.interval, self.count);
                } else {
                    self.dropping = false;
                }
            }
            return w;
        }
        if !ok_to_drop {
            return Some(head);
        }
        // Enter the dropping state with one drop (or mark) now.
        if !(p.ecn && drops.mark(pkts, head.id)) {
            drops.drop(pkts, head.id);
            w = self.do_dequeue(p, now, q).0;
        }
        self.dropping = true;
        // RFC 8289 §5.5: if the sojourn went above target soon after it last went below, the
        // drop rate that controlled the queue last time is a good start (`drop_next` is at most
        // an interval after the last drop, so now − drop_next approximates the time since).
        let delta = self.count.wrapping_sub(self.lastcount);
        self.count = if delta > 1 && now < self.drop_next + p.interval.saturating_mul(16) {
            delta
        } else {
            1
        };
        self.drop_next = control_law(now, p.interval, self.count);
        self.lastcount = self.count;
        w
    }
}

/// What [`AqmDrops::mark`] does with the ECN field: a CE mark for ECT packets (and one
/// already CE passes as marked), a drop otherwise (RFC 3168 §5).
impl AqmDrops {
    /// Signal congestion on `id` by ECN: `true` if the packet stays (now CE), `false` if it is
    /// not ECN-capable (the caller drops it).
    #[inline]
    pub(crate) fn mark(&mut self, pkts: &mut PacketArena, id: crate::arena::PacketId) -> bool {
        match signal(pkts.get_mut(id), true) {
            Signalled::Marked => {
                self.marks += 1;
                true
            }
            Signalled::AlreadyCe => true,
            Signalled::Dropped => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arena::PacketId;
    use crate::packet::Packet;
    use crate::queue::fifo::Fifo;

    struct One<'a>(&'a mut Fifo);
    impl CodelQueue for One<'_> {
        fn pop(&mut self) -> Option<Waiting> {
            self.0.pop()
        }
        fn backlog(&self) -> u64 {
            self.0.bytes()
        }
    }

    fn ms(x: u64) -> SimTime {
        SimTime::from_millis(x)
    }

    /// CoDel's defaults on a FIFO kept far above target: a packet of 1,000 B arrives every
    /// 0.5 ms and one leaves every 1 ms, the queue started with 100 packets (100 ms of them).
    fn overload(ecn: bool, until: SimTime) -> (Vec<SimTime>, AqmDrops) {
        let p = CodelParams {
            target: SimDuration::from_millis(5),
            interval: SimDuration::from_millis(100),
            maxpacket: 1500,
            ecn,
        };
        let mut st = CodelState::default();
        let mut pkts = PacketArena::new();
        let mut fifo = Fifo::default();
        let mut drops = AqmDrops::default();
        let put = |fifo: &mut Fifo, pkts: &mut PacketArena, at: SimTime| {
            let id: PacketId = pkts.insert(Packet::test_udp(1000, 2, 0));
            fifo.push(at, id, 1000);
        };
        for _ in 0..100 {
            put(&mut fifo, &mut pkts, SimTime::ZERO);
        }
        let mut signals = Vec::new();
        let mut t = SimTime::ZERO;
        while t <= until {
            put(&mut fifo, &mut pkts, t);
            put(&mut fifo, &mut pkts, t + SimDuration::from_micros(500));
            let before = drops.uncounted + drops.marks;
            let sent = st.dequeue(&p, t, &mut One(&mut fifo), &mut pkts, &mut drops);
            assert!(sent.is_some());
            pkts.free(sent.unwrap().id);
            for _ in before..drops.uncounted + drops.marks {
                signals.push(t);
            }
            t += SimDuration::from_millis(1);
        }
        (signals, drops)
    }

    #[test]
    fn under_a_constant_overload_codel_drops_at_the_times_of_the_control_law() {
        // The first packet dequeued at 0 has waited 0 ms; from 5 ms on, every one has waited
        // at least 5 ms: first_above_time = 5 + 100 ms, the first drop at the first dequeue at
        // or after 105 ms. Then t(k+1) = t(k) + 100 ms / sqrt(k), each drop happening at the
        // first 1-ms dequeue at or after its time (the queue never comes down).
        let (signals, drops) = overload(false, ms(400));
        let mut expected = vec![ms(105)];
        let mut next = ms(105);
        let mut count = 1u32;
        loop {
            next += SimDuration::from_nanos((100e6 / libm::sqrt(count as f64)) as u64);
            count += 1;
            // Drops happen at whole milliseconds: the first dequeue at or after `next`.
            let at = SimTime::from_nanos(next.as_nanos().div_ceil(1_000_000) * 1_000_000);
            if at > ms(400) {
                break;
            }
            expected.push(at);
        }
        // By hand: 105, 205, 276 (105 + 100 + 70.71), 334 (+57.74), 384 (+50).
        assert_eq!(expected, vec![ms(105), ms(205), ms(276), ms(334), ms(384)]);
        assert_eq!(signals, expected);
        assert_eq!(drops.flows.len(), 5);
        assert_eq!(drops.marks, 0);
    }

    #[test]
    fn with_ecn_codel_marks_ect_packets_at_the_same_times_instead_of_dropping_them() {
        let (marked, drops) = overload(true, ms(400));
        assert_eq!(marked, vec![ms(105), ms(205), ms(276), ms(334), ms(384)]);
        assert_eq!((drops.marks, drops.uncounted), (5, 0));
    }

    #[test]
    fn re_entering_the_dropping_state_soon_reuses_the_count_of_the_last_episode() {
        let p = CodelParams {
            target: SimDuration::from_millis(5),
            interval: SimDuration::from_millis(100),
            maxpacket: 0,
            ecn: false,
        };
        // Left the dropping state after 5 drops (count 5, lastcount 1), 50 ms before the drop
        // it had planned: the next episode starts with count = 5 − 1 = 4.
        let mut st = CodelState {
            count: 5,
            lastcount: 1,
            dropping: false,
            first_above_time: Some(ms(1000)),
            drop_next: ms(1050),
        };
        let mut pkts = PacketArena::new();
        let mut fifo = Fifo::default();
        for _ in 0..3 {
            let id = pkts.insert(Packet::test_udp(1000, 0, 0));
            fifo.push(ms(900), id, 1000);
        }
        let mut drops = AqmDrops::default();
        let w = st.dequeue(&p, ms(1000), &mut One(&mut fifo), &mut pkts, &mut drops);
        assert!(w.is_some());
        assert_eq!(drops.uncounted, 1);
        assert!(st.dropping);
        assert_eq!(st.count, 4);
        assert_eq!(st.drop_next, ms(1050));
        // Long after (more than 16 intervals past drop_next), the count restarts at 1.
        let mut st2 = CodelState {
            dropping: false,
            first_above_time: Some(ms(5000)),
            ..st.clone()
        };
        st2.count = 9;
        st2.lastcount = 1;
        let id = pkts.insert(Packet::test_udp(1000, 0, 0));
        fifo.push(ms(4000), id, 1000);
        st2.dequeue(&p, ms(5000), &mut One(&mut fifo), &mut pkts, &mut drops);
        assert_eq!((st2.count, st2.drop_next), (1, ms(5100)));
    }
}
