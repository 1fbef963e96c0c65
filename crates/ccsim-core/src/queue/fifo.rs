// SPDX-License-Identifier: MIT
//! The packets of one queue or one class, first in first out: the only place that stores
//! waiting packets, so that every discipline and scheduler (DropTail, RED, the XCP port and
//! each class of a DiffServ scheduler) changes together if what a queue stores changes.
//!
//! One `VecDeque` push or pop per packet; the buffer grows to the largest occupancy seen and
//! is then reused, so there is no allocation per packet in steady state.

use std::collections::VecDeque;

use crate::packet::Packet;

/// Waiting packets and their total size.
#[derive(Clone, Debug, Default)]
pub(crate) struct Fifo {
    buf: VecDeque<Packet>,
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

    #[inline]
    pub(crate) fn push(&mut self, pkt: Packet) {
        self.bytes += pkt.size as u64;
        self.buf.push_back(pkt);
    }

    #[inline]
    pub(crate) fn pop(&mut self) -> Option<Packet> {
        let p = self.buf.pop_front()?;
        self.bytes -= p.size as u64;
        Some(p)
    }

    /// Size in bytes of the packet at the head.
    #[allow(dead_code)] // used by the schedulers in the next commit
    #[inline]
    pub(crate) fn head_size(&self) -> Option<u32> {
        self.buf.front().map(|p| p.size)
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
