// SPDX-License-Identifier: MIT
//! Drop tail: the hard limit of a queue, in packets or bytes. Every discipline applies it (RED
//! and WRED too: a full buffer drops whatever the average says), and a DropTail queue applies
//! nothing else.

use super::fifo::Fifo;
use crate::scenario::spec::QueueLimit;

/// Whether a packet of `size` bytes fits in `fifo` under `limit` (tail drop otherwise).
#[inline]
pub(crate) fn fits(limit: QueueLimit, fifo: &Fifo, size: u32) -> bool {
    match limit {
        QueueLimit::Packets(n) => (fifo.len() as u64) < n,
        QueueLimit::Bytes(b) => fifo.bytes() + size as u64 <= b,
    }
}
