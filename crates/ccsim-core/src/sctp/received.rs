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
    /// Numbers taken above a gap since the last SACK, newest last: their blocks go first into
    /// the next SACK when not every block fits.
    recent: [u32; RECENT],
    n_recent: usize,
    /// Where the next SACK's rotation over the other blocks starts.
    rotate: usize,
}

/// Numbers remembered for the next SACK (one more than a SACK has blocks).
const RECENT: usize = 5;

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
        if self.n_recent == RECENT {
            self.recent.copy_within(1.., 0);
            self.n_recent -= 1;
        }
        self.recent[self.n_recent] = n;
        self.n_recent += 1;
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
    /// first number): up to `out.len()` of them into `out`, lowest first; returns how many were
    /// left out. A real SACK carries every block (hundreds fit in an MTU, RFC 4960 §3.3.4); a
    /// ccsim packet holds a few (`SctpSack::MAX_GAPS`). When they do not all fit, the choice
    /// keeps the sender informed: the lowest block (the first hole, where loss recovery
    /// starts), then the blocks of the numbers that arrived since the last SACK (the sender
    /// learns of every arrival at once, as it would from the whole SACK), then the others in
    /// turn over successive SACKs (what a lost or stale SACK reported is repeated). Only the
    /// lowest blocks would hide every arrival above the fourth hole until the holes fill: with
    /// CMT's interleaved paths the sender could not free the flight of the short path.
    ///
    /// `lowest_only` keeps the lowest blocks that fit instead (LS mode's per-path SSNs: each path
    /// delivers in order, so holes come from losses alone and the paper's results were made so).
    pub fn gap_blocks(&mut self, out: &mut [(u16, u16)], n_out: &mut u8, lowest_only: bool) -> u64 {
        let cum = self.next.wrapping_sub(1);
        if lowest_only {
            return self.lowest_gap_blocks(out, n_out);
        }
        let total = self.ranges.len();
        let room = out.len().min(u8::MAX as usize);
        let mut chosen = [0usize; 8];
        let room = room.min(chosen.len());
        let mut n = 0;
        if total <= room {
            for (k, c) in chosen.iter_mut().enumerate().take(total) {
                *c = k;
            }
            n = total;
        } else {
            let mut add = |k: usize, n: &mut usize| {
                if *n < room && !chosen[..*n].contains(&k) {
                    chosen[*n] = k;
                    *n += 1;
                }
            };
            add(0, &mut n);
            for i in (0..self.n_recent).rev() {
                let x = self.recent[i];
                let at = self.ranges.partition_point(|r| r.last < x);
                if self.ranges.get(at).is_some_and(|r| r.first <= x) {
                    add(at, &mut n);
                }
            }
            // The others in turn, from where the last SACK's rotation stopped.
            let mut k = self.rotate % total;
            for _ in 0..total {
                if n == room {
                    break;
                }
                if k != 0 {
                    add(k, &mut n);
                }
                k = (k + 1) % total;
            }
            self.rotate = k;
            chosen[..n].sort_unstable();
        }
        self.n_recent = 0;
        let mut left_out = (total - n) as u64;
        *n_out = 0;
        for &k in &chosen[..n] {
            let r = &self.ranges[k];
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

    fn lowest_gap_blocks(&mut self, out: &mut [(u16, u16)], n_out: &mut u8) -> u64 {
        let cum = self.next.wrapping_sub(1);
        let mut left_out = 0;
        *n_out = 0;
        self.n_recent = 0;
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

    #[test]
    fn a_sack_too_small_for_every_block_carries_the_lowest_the_newest_and_the_rest_in_turn() {
        // Numbers 2, 4, ..., 20 above a hole at 0: ten blocks, room for four.
        let mut r = Received::default();
        for n in (2..=20).step_by(2) {
            r.take(n, 1);
        }
        let mut out = [(0u16, 0u16); 4];
        let mut n = 0;
        // Cum ack = u32::MAX (nothing in order): offsets are number + 1.
        assert_eq!(r.gap_blocks(&mut out, &mut n, false), 6);
        // The lowest, then the newest arrivals (20, 18, 16) fill the room.
        assert_eq!(&out[..n as usize], [(3, 3), (17, 17), (19, 19), (21, 21)]);
        // Nothing new: the lowest and the others in turn, so every block comes round.
        r.gap_blocks(&mut out, &mut n, false);
        assert_eq!(&out[..n as usize], [(3, 3), (5, 5), (7, 7), (9, 9)]);
        // 9 joins 8 and 10: its block, then the rotation goes on where it stopped.
        r.take(9, 1);
        assert_eq!(r.gap_blocks(&mut out, &mut n, false), 5);
        assert_eq!(&out[..n as usize], [(3, 3), (9, 11), (13, 13), (15, 15)]);
        // Four blocks or fewer: all of them, lowest first, as before.
        let mut few = Received::default();
        for x in [5, 3, 9] {
            few.take(x, 1);
        }
        assert_eq!(few.gap_blocks(&mut out, &mut n, false), 0);
        assert_eq!(&out[..n as usize], [(4, 4), (6, 6), (10, 10)]);
    }
}
