// SPDX-License-Identifier: MIT
//! Strict priority: always serve the highest-priority class with a packet waiting (the first
//! class listed is the highest), FIFO inside a class, non-preemptive (a packet in transmission
//! finishes). Lower classes get nothing while higher ones keep the link busy.
//!
//! The classes with packets are the set bits of one 64-bit mask, so choosing is one
//! `trailing_zeros`: O(1) per packet whatever the number of classes (at most 64).

use super::classes::ClassScheduler;

/// The classes this selector serves and which of them have packets.
#[derive(Clone, Debug, Default)]
pub(crate) struct Priority {
    /// Bit i: class i has packets waiting.
    backlogged: u64,
}

impl ClassScheduler for Priority {
    /// Class `i` now has packets waiting.
    #[inline]
    fn backlogged(&mut self, i: usize, _head: u32) {
        self.backlogged |= 1u64 << i;
    }

    /// The class to serve next: the lowest index with packets.
    #[inline]
    fn next(&mut self, _head: impl Fn(usize) -> Option<u32>) -> Option<usize> {
        (self.backlogged != 0).then(|| self.backlogged.trailing_zeros() as usize)
    }

    /// A class with no packet left leaves the set.
    #[inline]
    fn served(&mut self, i: usize, next_head: Option<u32>) {
        if next_head.is_none() {
            self.backlogged &= !(1u64 << i);
        }
    }
}
