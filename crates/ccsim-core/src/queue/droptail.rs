// SPDX-License-Identifier: MIT
//! Drop tail: the hard limit of a queue, in packets or bytes. Every discipline applies it (RED
//! and WRED too: a full buffer drops whatever the average says), and a DropTail queue applies
//! nothing else.

use super::fifo::Fifo;
use super::QueueLimit;

/// Whether a packet of `size` bytes fits in `fifo` under `limit` (tail drop otherwise).
#[inline]
pub(crate) fn fits(limit: QueueLimit, fifo: &Fifo, size: u32) -> bool {
    fits_beside(limit, fifo.len(), fifo.bytes(), size)
}

/// Whether a packet of `size` bytes fits under `limit` beside `len` packets of `bytes` bytes.
#[inline]
pub(crate) fn fits_beside(limit: QueueLimit, len: usize, bytes: u64, size: u32) -> bool {
    match limit {
        QueueLimit::Packets(n) => (len as u64) < n,
        QueueLimit::Bytes(b) => bytes + size as u64 <= b,
    }
}
