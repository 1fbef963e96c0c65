// SPDX-License-Identifier: MIT
//! The packets of one queue or one class, first in first out: the only place that stores
//! waiting packets, so that every discipline and scheduler (DropTail, RED, the XCP port and
//! each class of a DiffServ scheduler) changes together if what a queue stores changes.
//!
//! It holds handles into the [`crate::arena::PacketArena`] with each packet's size (the byte
//! count needs it when the packet leaves) and the time it was queued (its sojourn time when it
//! leaves: the links table's queue delay percentiles, CoDel's and PIE's measure), not the
//! packets: a discipline reads and rewrites a packet in the arena when it arrives and never
//! touches it again while it waits (CoDel's ECN mark at dequeue is the one exception).
//!
//! One `VecDeque` push or pop per packet; the buffer grows to the largest occupancy seen and
//! is then reused, so there is no allocation per packet in steady state.

use std::collections::VecDeque;

use crate::arena::PacketId;
use crate::time::SimTime;

/// One waiting packet: its handle, its size in bytes and when it was queued.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Waiting {
    pub(crate) id: PacketId,
    pub(crate) size: u32,
    pub(crate) since: SimTime,
}

/// Waiting packets and their total size.
#[derive(Clone, Debug, Default)]
pub(crate) struct Fifo {
    buf: VecDeque<Waiting>,
    /// Sum of `size` of the packets in `buf`.
    bytes: u64,
}

impl Fifo {
    pub(crate) fn with_capacity(cap: usize) -> Fifo {
        Fifo {
            buf: VecDeque::with_capacity(cap),
            bytes: 0,
        }
    }

    /// Queue packet `id` of `size` bytes, arrived at `now`.
    #[inline]
    pub(crate) fn push(&mut self, now: SimTime, id: PacketId, size: u32) {
        self.bytes += size as u64;
        self.buf.push_back(Waiting {
            id,
            size,
            since: now,
        });
    }

    /// The packet at the head.
    #[inline]
    pub(crate) fn pop(&mut self) -> Option<Waiting> {
        let w = self.buf.pop_front()?;
        self.bytes -= w.size as u64;
        Some(w)
    }

    /// The packet at the head, left in place.
    #[inline]
    pub(crate) fn head(&self) -> Option<PacketId> {
        self.buf.front().map(|w| w.id)
    }

    /// When the packet at the head was queued (DualPI2's scheduler and its Classic delay).
    #[inline]
    pub(crate) fn head_since(&self) -> Option<SimTime> {
        self.buf.front().map(|w| w.since)
    }

    /// Size in bytes of the packet at the head (the class schedulers' next finish time).
    #[inline]
    pub(crate) fn head_size(&self) -> Option<u32> {
        self.buf.front().map(|w| w.size)
    }

    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.buf.len()
    }

    #[inline]
    pub(crate) fn bytes(&self) -> u64 {
        self.bytes
    }

    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }
}
