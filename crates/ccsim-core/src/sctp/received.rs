// SPDX-License-Identifier: MIT
//! What a receiver has of one sequence space (TSNs of an association, or the SSNs of one path
//! in the paper's LS mode): the next number expected in order and the ranges received above
//! it, the gap-ack blocks of a SACK.
//!
//! ```text
//!   next ─┐   ranges (first..=last, bytes), ascending, never touching
//!   ▓▓▓▓▓▓│░░░░▓▓▓▓░░▓▓▓▓▓▓
//! ```

use std::collections::VecDeque;

/// Numbers `first..=last` received above the cumulative point, holding `bytes`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Range {
    pub first: u32,
    pub last: u32,
    pub bytes: u64,
}

#[derive(Clone, Debug, Default)]
pub struct Received {
    /// The next number expected in order (the cumulative ack + 1).
    pub next: u32,
    /// Sorted and disjoint; after a burst of losses there are hundreds, so they are searched
    /// by bisection and popped from the front, never scanned per packet.
    pub ranges: VecDeque<Range>,
    /// Bytes held above `next`.
    pub held: u64,
}

/// What taking one number did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Taken {
    /// Already had it.
    Duplicate,
    /// In order: these bytes (its own and any range it joined) are now below `next`.
    InOrder(u64),
    /// Above a gap: held.
    OutOfOrder,
}

impl Received {
    pub fn has(&self, n: u32) -> bool {
        if n < self.next {
            return true;
        }
        let at = self.ranges.partition_point(|r| r.last < n);
        self.ranges.get(at).is_some_and(|r| r.first <= n)
    }

    /// Take number `n` carrying `len` bytes.
    pub fn take(&mut self, n: u32, len: u64) -> Taken {
        if self.has(n) {
            return Taken::Duplicate;
        }
        if n == self.next {
            self.next += 1;
            let mut bytes = len;
            while let Some(r) = self.ranges.front().copied() {
                if r.first != self.next {
                    break;
                }
                self.ranges.pop_front();
                self.next = r.last + 1;
                self.held -= r.bytes;
                bytes += r.bytes;
            }
            return Taken::InOrder(bytes);
        }
        self.held += len;
        let at = self.ranges.partition_point(|r| r.last < n);
        let joins_left = at > 0 && self.ranges[at - 1].last + 1 == n;
        let joins_right = at < self.ranges.len() && self.ranges[at].first == n + 1;
        match (joins_left, joins_right) {
            (true, true) => {
                let right = self.ranges.remove(at).unwrap_or(Range {
                    first: n,
                    last: n,
                    bytes: 0,
                });
                let left = &mut self.ranges[at - 1];
                left.last = right.last;
                left.bytes += right.bytes + len;
            }
            (true, false) => {
                let left = &mut self.ranges[at - 1];
                left.last = n;
                left.bytes += len;
            }
            (false, true) => {
                let right = &mut self.ranges[at];
                right.first = n;
                right.bytes += len;
            }
            (false, false) => self.ranges.insert(
                at,
                Range {
                    first: n,
                    last: n,
                    bytes: len,
                },
            ),
        }
        Taken::OutOfOrder
    }

    /// The gap-ack blocks as offsets from the cumulative ack (`next - 1`, wrapping before the
    /// first number): up to `max` of them into `out`; returns how many did not fit.
    pub fn gap_blocks(&self, out: &mut [(u16, u16)], n_out: &mut u8) -> u64 {
        let cum = self.next.wrapping_sub(1);
        let mut left_out = 0;
        *n_out = 0;
        for (k, r) in self.ranges.iter().enumerate() {
            if *n_out as usize == out.len() {
                // The packet is full: the rest are counted, not looked at.
                return left_out + (self.ranges.len() - k) as u64;
            }
            let (a, b) = (r.first.wrapping_sub(cum), r.last.wrapping_sub(cum));
            if b <= u16::MAX as u32 {
                out[*n_out as usize] = (a as u16, b as u16);
                *n_out += 1;
            } else {
                left_out += 1;
            }
        }
        left_out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_taken_out_of_order_close_their_gap_and_release_their_bytes_in_order() {
        let mut r = Received::default();
        assert_eq!(r.take(1, 10), Taken::OutOfOrder);
        assert_eq!(r.take(3, 10), Taken::OutOfOrder);
        assert_eq!(r.take(2, 10), Taken::OutOfOrder);
        assert_eq!(r.ranges.len(), 1);
        assert_eq!(r.held, 30);
        assert_eq!(r.take(2, 10), Taken::Duplicate);
        assert_eq!(r.take(0, 10), Taken::InOrder(40));
        assert_eq!((r.next, r.held), (4, 0));
        assert_eq!(r.take(0, 10), Taken::Duplicate);
    }
}
