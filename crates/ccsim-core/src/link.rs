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
//! A channel has at most two live events: the end of the current transmission and the arrival of
//! the head of its propagation FIFO. Packets in flight never sit in the event heap
//! (PERFORMANCE.md: a 2.5 Gbit/s × 225 ms path holds ~47,000 packets).
//!
//! The loss model is applied when a packet finishes transmission: a packet corrupted on the wire
//! has still occupied the channel for its full serialization time.

use std::collections::VecDeque;

use crate::loss::LossModel;
use crate::packet::Packet;
use crate::queue::Queue;
use crate::time::{Rate, Serializer, SimDuration, SimTime};
use crate::DropReason;

/// Counters of one channel.
#[derive(Clone, Debug, Default)]
pub struct ChannelStats {
    /// Packets handed to this channel (before any drop).
    pub offered: u64,
    /// Packets that reached the far node.
    pub arrived: u64,
    /// Packets and bytes that completed transmission (including those the loss model destroyed).
    pub packets: u64,
    pub bytes: u64,
    pub data_packets: u64,
    pub drops_queue: u64,
    pub drops_loss: u64,
    pub drops_hook: u64,
    pub drops_mtu: u64,
    pub drops_noroute: u64,
    /// Time integrals of the queue length (packets·ns, bytes·ns) for the time-weighted mean.
    pub queue_pkt_ns: u128,
    pub queue_byte_ns: u128,
    pub queue_max_packets: u64,
    pub queue_max_bytes: u64,
    last_change: SimTime,
    /// Bytes transmitted since the last time-series sample.
    pub bytes_since_sample: u64,
}

impl ChannelStats {
    pub fn count_drop(&mut self, reason: DropReason) {
        match reason {
            DropReason::Queue => self.drops_queue += 1,
            DropReason::Loss => self.drops_loss += 1,
            DropReason::Hook => self.drops_hook += 1,
            DropReason::Mtu => self.drops_mtu += 1,
            DropReason::NoRoute => self.drops_noroute += 1,
        }
    }
    pub fn drops(&self) -> u64 {
        self.drops_queue + self.drops_loss + self.drops_hook + self.drops_mtu + self.drops_noroute
    }
}

pub struct Channel {
    /// Link name and direction, for results (`bottleneck`, `a_to_b`).
    pub link: String,
    pub direction: &'static str,
    pub from_node: u32,
    pub to_node: u32,
    /// The interface packets arrive on at `to_node`.
    pub to_iface: u32,
    pub rate: Rate,
    pub delay: SimDuration,
    pub mtu: u32,
    pub queue: Queue,
    pub loss: LossModel,
    /// The packet being transmitted.
    pub tx: Option<Packet>,
    ser: Serializer,
    /// Packets propagating, with their arrival times (non-decreasing).
    pub pipe: VecDeque<(SimTime, Packet)>,
    pub stats: ChannelStats,
}

/// What `offer` did with a packet.
pub enum Offer {
    /// The transmitter was idle: transmission ends at this time (schedule `TxDone`).
    Started(SimTime),
    Queued,
    Dropped(Packet, DropReason),
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
            tx: None,
            ser: Serializer::default(),
            pipe: VecDeque::new(),
            stats: ChannelStats::default(),
        }
    }

    /// Account the queue length up to `now` before it changes.
    fn touch_queue(&mut self, now: SimTime) {
        let dt = now.saturating_since(self.stats.last_change).as_nanos() as u128;
        self.stats.queue_pkt_ns += self.queue.len_packets() as u128 * dt;
        self.stats.queue_byte_ns += self.queue.len_bytes() as u128 * dt;
        self.stats.last_change = now;
    }

    fn note_queue_max(&mut self) {
        let s = &mut self.stats;
        s.queue_max_packets = s.queue_max_packets.max(self.queue.len_packets() as u64);
        s.queue_max_bytes = s.queue_max_bytes.max(self.queue.len_bytes());
    }

    /// A packet wants to leave over this channel.
    pub fn offer(&mut self, now: SimTime, pkt: Packet) -> Offer {
        self.stats.offered += 1;
        if pkt.size > self.mtu {
            return Offer::Dropped(pkt, DropReason::Mtu);
        }
        self.touch_queue(now);
        // Every arrival goes through the discipline, even on an idle link, so that RED's
        // average sees it.
        if let Err(p) = self.queue.enqueue(now, pkt) {
            return Offer::Dropped(p, DropReason::Queue);
        }
        if self.tx.is_none() {
            if let Some(done) = self.start_next(now) {
                return Offer::Started(done);
            }
        }
        self.note_queue_max();
        Offer::Queued
    }

    /// Take the next packet from the queue into the transmitter; returns when it finishes.
    fn start_next(&mut self, now: SimTime) -> Option<SimTime> {
        let p = self.queue.dequeue(now)?;
        let d = self.ser.next(self.rate, p.size as u64);
        self.tx = Some(p);
        Some(now + d)
    }

    /// The current transmission ended at `now`. Returns (the time the head of the pipe arrives
    /// if the pipe was empty before — schedule `Arrive` —, the end of the next transmission if
    /// one started — schedule `TxDone` —).
    pub fn on_tx_done(&mut self, now: SimTime) -> (Option<SimTime>, Option<SimTime>, bool) {
        let mut arrive = None;
        let mut lost = false;
        if let Some(p) = self.tx.take() {
            self.stats.packets += 1;
            self.stats.bytes += p.size as u64;
            self.stats.bytes_since_sample += p.size as u64;
            if p.is_data() {
                self.stats.data_packets += 1;
            }
            if !self.loss.is_none() && self.loss.is_lost(p.size) {
                self.stats.drops_loss += 1;
                lost = true;
            } else {
                let at = now + self.delay;
                if self.pipe.is_empty() {
                    arrive = Some(at);
                }
                self.pipe.push_back((at, p));
            }
        }
        self.touch_queue(now);
        let next = self.start_next(now);
        (arrive, next, lost)
    }

    /// The head of the pipe arrives now; returns it and the arrival time of the next head.
    pub fn on_arrive(&mut self) -> Option<(Packet, Option<SimTime>)> {
        let (_, p) = self.pipe.pop_front()?;
        self.stats.arrived += 1;
        let next = self.pipe.front().map(|(t, _)| *t);
        Some((p, next))
    }

    /// Packets inside this channel: queued, in transmission and propagating.
    pub fn packets_inside(&self) -> u64 {
        self.queue.len_packets() as u64 + self.tx.is_some() as u64 + self.pipe.len() as u64
    }

    /// Close the queue-length integral at the end of the run.
    pub fn finish(&mut self, now: SimTime) {
        self.touch_queue(now);
    }
}
