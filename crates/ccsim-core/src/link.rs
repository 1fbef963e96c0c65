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

use std::collections::VecDeque;

use crate::arena::{PacketArena, PacketId};
use crate::loss::LossModel;
use crate::packet::{Packet, Port};
use crate::queue::Queue;
use crate::time::{Rate, Serializer, SimDuration, SimTime};
use crate::DropReason;

/// Counters of one channel.
// `repr(C)` keeps the declared order: the counters every packet updates come first, in two
// cache lines, and the drop counters, touched only on a drop, after them. With Rust's own
// layout the 128-bit integrals went first and a packet's counters spread over three lines; on
// a link whose packets interleave with others' (a class-based queue serving eight classes) each
// line was a cache miss of its own (`docs/diffserv.md`, "Speed").
#[repr(C)]
#[derive(Clone, Debug, Default)]
pub struct ChannelStats {
    /// Time integrals of the queue length (packets·ns, bytes·ns) for the time-weighted mean.
    pub queue_pkt_ns: u128,
    pub queue_byte_ns: u128,
    last_change: SimTime,
    /// Packets handed to this channel (before any drop).
    pub offered: u64,
    /// Packets and bytes put on the wire, counted when their transmission starts (including
    /// those the loss model destroyed).
    pub packets: u64,
    pub bytes: u64,
    pub data_packets: u64,
    /// Packets that reached the far node.
    pub arrived: u64,
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

// `repr(C)` keeps the declared order: what `offer`, `transmit` and `on_tx_done` read for
// every packet comes first (the transmitter's state, the per-packet counters, the FIFO), then
// the queue and the loss model, then what results and traces read (names, the lost packet
// kept for the trace). See `ChannelStats` for why.
#[repr(C)]
pub struct Channel {
    /// The transmitter is free from this time on (the end of the last transmission started).
    /// A `TxDone` event is scheduled at this time exactly when the queue is not empty.
    busy_until: SimTime,
    pub rate: Rate,
    pub stats: ChannelStats,
    /// The propagation FIFO: packets on the wire (in transmission or propagating), each with
    /// its arrival time at the far node. The delay is constant, so arrival times never decrease
    /// and only the head needs an `Arrive` event. (Not TCP's `pipe`, RFC 6675 §2: that is the
    /// sender's estimate of its own data in flight.)
    pub propagation: VecDeque<(SimTime, PacketId, Port)>,
    pub delay: SimDuration,
    /// Packets at the front of the propagation FIFO that were on the wire when the link went
    /// down: each is lost when its arrival comes (so no event has to be cancelled).
    doomed: usize,
    pub to_node: u32,
    /// The interface packets arrive on at `to_node`.
    pub to_iface: u32,
    pub mtu: u32,
    /// Down (`[[events]]`): offered packets are dropped as `link_down`.
    pub down: bool,
    /// Set while the packet trace watches this channel: the loss model's last victim is kept
    /// in `lost_for_trace` (the trace's `departed` and `dropped` rows need its headers), a
    /// copy taken before its arena slot is freed.
    pub keep_lost: bool,
    ser: Serializer,
    pub queue: Queue,
    pub loss: LossModel,
    /// Link name and direction, for results (`bottleneck`, `a_to_b`).
    pub link: String,
    pub direction: &'static str,
    pub from_node: u32,
    pub lost_for_trace: Option<Packet>,
}

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
    /// The packet was refused (its arena slot is already freed).
    Dropped(DropReason),
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
        Channel {
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

    /// The link goes down at `now`: what waits in the queue and what is on the wire is lost.
    /// Returns the packets lost now (the queue, whose arena slots are freed); those on the wire
    /// are lost as they "arrive" (the engine frees them then).
    pub fn go_down(&mut self, now: SimTime, pkts: &mut PacketArena) -> u64 {
        self.down = true;
        self.doomed = self.propagation.len();
        // The transmission under way is cut. A `TxDone` scheduled for its end is now stale;
        // `on_tx_done` ignores any that comes before the transmitter is free.
        self.busy_until = self.busy_until.min(now);
        self.touch_queue(now);
        let mut lost = 0;
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
        let pkt = pkts.get_mut(id);
        let size = pkt.size;
        if size > self.mtu {
            pkts.free(id);
            return Offer::Dropped(DropReason::Mtu);
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
            // Idle transmitter and nothing waits: the packet would be dequeued at once, so it
            // skips the buffer.
            self.queue.sent_at_once(size);
            let (head_arrives, lost) = self.transmit(now, pkts, id, true);
            return Offer::Sent { head_arrives, lost };
        }
        self.queue.push(id, size);
        self.note_queue_max();
        Offer::Queued {
            tx_done: first_to_wait.then_some(self.busy_until),
        }
    }

    /// Bits put on the wire by `now`: those of every transmission started, less the part of the
    /// one in progress not yet serialized (a run may end in the middle of a packet, and on a
    /// slow link that packet can outweigh everything else sent).
    pub fn bits_sent_by(&self, now: SimTime) -> u128 {
        let started = self.stats.bytes as u128 * 8;
        let left_ns = self.busy_until.as_nanos().saturating_sub(now.as_nanos()) as u128;
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
        self.stats.packets += 1;
        self.stats.bytes += p.size as u64;
        if p.is_data() {
            self.stats.data_packets += 1;
        }
        if !self.loss.is_none() && self.loss.is_lost(p.size) {
            self.stats.drops_loss += 1;
            if self.keep_lost {
                // The trace reads the victim after its slot is recycled: keep a copy (only
                // while the trace watches this channel, so the untraced path never copies).
                self.lost_for_trace = Some(p.clone());
            }
            pkts.free(id);
            return (None, true);
        }
        let at = done + self.delay;
        let head = self.propagation.is_empty().then_some(at);
        // With many packets alive the entry also carries the destination port, so that the engine
        // can ask for the state of the endpoint it is for without reading the slot early
        // (`sim/engine.rs`, `prefetch_endpoints_ahead`); below that nobody reads it.
        let port = if pkts.prefetching() { p.dst_port() } else { 0 };
        self.propagation.push_back((at, id, port));
        (head, false)
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
        let (head_arrives, lost, empty) = match self.queue.dequeue(now) {
            Some(id) => {
                // The next packet to leave has waited in the queue since it arrived: ask for
                // its slot one transmission ahead (`arena.rs`, "Prefetch").
                if pkts.prefetching() {
                    if let Some(n) = self.queue.next_hint() {
                        pkts.prefetch(n);
                    }
                }
                let empty = self.queue.is_empty();
                let (head, lost) = self.transmit(now, pkts, id, empty);
                (head, lost, empty)
            }
            None => (None, false, true), // not scheduled with an empty queue; harmless if it were
        };
        TxDone {
            head_arrives,
            next_tx_done: (!empty).then_some(self.busy_until),
            lost,
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

    /// Packets inside this channel: queued, in transmission and propagating.
    pub fn packets_inside(&self) -> u64 {
        self.queue.len_packets() as u64 + self.propagation.len() as u64
    }

    /// Close the queue-length integral at the end of the run.
    pub fn finish(&mut self, now: SimTime) {
        self.touch_queue(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{Packet, Transport};
    use crate::rng::RngStream;
    use crate::scenario::spec::{LossSpec, QueueLimit, QueueSpec};

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
        let rate = Rate::mbps(10);
        let ch = Channel::new(
            "l".into(),
            "a_to_b",
            0,
            1,
            1,
            rate,
            SimDuration::from_millis(5),
            1500,
            Queue::new(&queue, RngStream::derive(1, "test/queue"), rate),
            LossModel::new(&LossSpec::None, RngStream::derive(1, "test/loss")),
        );
        Ch {
            ch,
            pkts: PacketArena::new(),
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
        // mean_packet_size 1,250 B at 10 Mbit/s: one "small packet" per 1 ms of idle time.
        let w_q = 0.01;
        let mut ch = channel(QueueSpec::Red {
            limit: QueueLimit::Packets(100),
            min_th: 5.0,
            max_th: 15.0,
            max_p: 0.1,
            w_q,
            gentle: true,
            ecn: false,
            mean_packet_size: 1250,
        });
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
        let mut ch = droptail();
        for i in 0..4 {
            let _ = ch.offer(SimTime::ZERO, udp(i));
        }
        // One packet on the wire, three waiting.
        assert_eq!((ch.propagation.len(), ch.queue.len_packets()), (1, 3));
        assert_eq!(ch.ch.go_down(ms(0.5), &mut ch.pkts), 3);
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
