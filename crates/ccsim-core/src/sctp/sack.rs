// SPDX-License-Identifier: MIT
//! A SACK's walk over one sequence space, the part both data senders share: the association's
//! TSNs in `sender.rs` (RFC 4960 §6.2.1, §7.2.4) and one path's SSNs in LS mode's `ls.rs`
//! (seed 004 §3.2: the paper's SACK carries a cumulative SSN and SSN gap blocks, read by the
//! same rules).
//!
//! ```text
//!   entries:  number base ............................................ next - 1
//!             [Tx | Tx | ...]   one per number sent and not yet cumulatively acknowledged
//!   a SACK:   base..=cum, then each gap block clamped to cum+1..=next-1  -> ack
//!             numbers below the highest newly acked, still in flight   -> a miss indication
//! ```

use std::collections::{BTreeSet, VecDeque};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum State {
    InFlight,
    GapAcked,
    Marked,
}

/// What loss recovery keeps of one chunk sent and not yet cumulatively acknowledged.
#[derive(Clone, Copy, Debug)]
pub(super) struct Tx {
    /// User data bytes.
    pub len: u32,
    pub state: State,
    /// Miss indications (§7.2.4).
    pub misses: u8,
    /// Already fast-retransmitted once: not again by a fast retransmit (§7.2.4 (5)).
    pub fast_done: bool,
    /// Once acked: a number above this one up to which every number is acked too, or 0 (read
    /// as this one + 1). Acked is final until the cum ack point passes, so the walk of a gap
    /// block jumps over the runs earlier SACKs acked (`next_not_acked`).
    skip: u32,
}

impl Tx {
    pub fn in_flight(len: u32) -> Tx {
        Tx {
            len,
            state: State::InFlight,
            misses: 0,
            fast_done: false,
            skip: 0,
        }
    }

    /// The SACK being processed acknowledges this chunk, number `n`: its bytes leave `flight`
    /// (the flight of the path it was last sent on) if it was in flight, or `n` leaves
    /// `marked` if it waited for a retransmission. False when an earlier SACK had acked it.
    pub fn ack(&mut self, n: u32, flight: &mut u64, marked: &mut BTreeSet<u32>) -> bool {
        match self.state {
            State::GapAcked => return false,
            State::InFlight => *flight -= self.len as u64,
            State::Marked => {
                marked.remove(&n);
            }
        }
        self.state = State::GapAcked;
        self.skip = n + 1;
        true
    }
}

/// The first number at or above `n` whose entry is not acked (`base + entries.len()` if none):
/// follows the acked entries' `skip` jumps, then points each entry passed at the answer (path
/// compression, as in a disjoint-set forest), so walking a run again costs one jump.
fn next_not_acked<T: AsMut<Tx>>(entries: &mut VecDeque<T>, base: u32, n: u32) -> u32 {
    let mut m = n;
    while let Some(e) = entries.get_mut((m - base) as usize) {
        let t = e.as_mut();
        if t.state != State::GapAcked {
            break;
        }
        m = t.skip.max(m + 1);
    }
    let mut k = n;
    while k < m {
        let t = entries[(k - base) as usize].as_mut();
        let next = t.skip.max(k + 1);
        t.skip = m;
        k = next;
    }
    m
}

/// A bare `Tx` is an entry of its own (the senders' entries hold one beside their own fields).
impl AsMut<Tx> for Tx {
    fn as_mut(&mut self) -> &mut Tx {
        self
    }
}

/// Calls `ack` with every number a SACK covers in a space whose outstanding numbers are
/// `base..next` (entry k is number base + k), and its entry, unless an earlier SACK, or an
/// earlier block of this one, acknowledged it: those up to the cumulative point `cum` first,
/// then each gap block's (offsets from `cum`, §3.3.4), clamped to the numbers outstanding above
/// it. A gap block reports again every SACK what earlier ones did, and with a large window it
/// spans hundreds of chunks: the runs already acked are jumped over (`next_not_acked`), not
/// walked. `cum` must be at least `base - 1` (a SACK below the ack point is the caller's to
/// drop).
pub(super) fn for_each_newly_covered<T: AsMut<Tx>>(
    entries: &mut VecDeque<T>,
    base: u32,
    next: u32,
    cum: u32,
    gaps: &[(u16, u16)],
    mut ack: impl FnMut(u32, &mut T),
) {
    let cum_next = cum.wrapping_add(1);
    let mut walk = |lo: u32, hi: u32| {
        let mut n = lo;
        while n <= hi {
            n = next_not_acked(entries, base, n);
            if n > hi {
                break;
            }
            ack(n, &mut entries[(n - base) as usize]);
            n += 1;
        }
    };
    if cum_next > base {
        walk(base, cum_next - 1);
    }
    for &(start, end) in gaps {
        let lo = cum.wrapping_add(start as u32).max(cum_next);
        let hi = cum.wrapping_add(end as u32).min(next.saturating_sub(1));
        walk(lo, hi);
    }
}

/// Forgets the entries below `cum_next`, the new cumulative point + 1.
pub(super) fn forget_below<T>(entries: &mut VecDeque<T>, base: &mut u32, cum_next: u32) {
    while *base < cum_next {
        entries.pop_front();
        *base += 1;
    }
}

/// HTNA (§7.2.4): each chunk in `base..limit` still in flight and not fast-retransmitted yet
/// gets `add(n, entry)` miss indications (0: none from this SACK); the numbers that reach
/// `threshold` go to `fast`, in order.
pub(super) fn count_misses<T: AsMut<Tx>>(
    entries: &mut VecDeque<T>,
    base: u32,
    limit: u32,
    threshold: u8,
    fast: &mut Vec<u32>,
    mut add: impl FnMut(u32, &T) -> u8,
) {
    let end = limit.saturating_sub(base) as usize;
    for (n, e) in (base..).zip(entries.range_mut(..end)) {
        let c = *e.as_mut();
        if c.state != State::InFlight || c.fast_done {
            continue;
        }
        let k = add(n, e);
        if k == 0 {
            continue;
        }
        let c = e.as_mut();
        c.misses = c.misses.saturating_add(k);
        if c.misses >= threshold {
            fast.push(n);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outstanding(base: u32, next: u32) -> VecDeque<Tx> {
        (base..next).map(|_| Tx::in_flight(100)).collect()
    }

    /// Walks a SACK like the senders: each number passed is acked at once.
    fn covered(e: &mut VecDeque<Tx>, base: u32, cum: u32, gaps: &[(u16, u16)]) -> Vec<u32> {
        let next = base + e.len() as u32;
        let mut seen = Vec::new();
        for_each_newly_covered(e, base, next, cum, gaps, |n, t| {
            t.state = State::GapAcked;
            seen.push(n);
        });
        seen
    }

    #[test]
    fn a_sack_covers_the_cumulative_range_then_each_gap_block_clamped_to_what_is_outstanding() {
        // Outstanding 3..12; cum 5; blocks 7..=8 and 10..=20 (the second beyond next - 1 = 11).
        let mut e = outstanding(3, 12);
        assert_eq!(
            covered(&mut e, 3, 5, &[(2, 3), (5, 15)]),
            [3, 4, 5, 7, 8, 10, 11]
        );
    }

    #[test]
    fn a_sack_below_the_first_outstanding_number_covers_only_its_gap_blocks() {
        // cum = base - 1 (wraps from u32::MAX when base is 0): nothing cumulative.
        let mut e = outstanding(0, 6);
        assert_eq!(covered(&mut e, 0, u32::MAX, &[(2, 3)]), [1, 2]);
        let mut e = outstanding(4, 9);
        assert_eq!(covered(&mut e, 4, 3, &[(2, 2)]), [5]);
    }

    #[test]
    fn numbers_already_acked_by_an_earlier_sack_or_block_are_passed_over() {
        let mut e = outstanding(0, 10);
        e[6].state = State::GapAcked;
        // Blocks 4..=7 and 6..=8 overlap: 6 was acked before, 7 by the first block.
        assert_eq!(covered(&mut e, 0, 1, &[(3, 6), (5, 7)]), [0, 1, 4, 5, 7, 8]);
        assert_eq!(
            covered(&mut e, 0, 1, &[(3, 6)]),
            [] as [u32; 0],
            "the same SACK again"
        );
    }

    #[test]
    fn an_acked_chunk_frees_its_flight_or_leaves_the_marked_set_once() {
        let (mut flight, mut marked) = (3000, BTreeSet::from([9]));
        let mut a = Tx::in_flight(1000);
        assert!(a.ack(8, &mut flight, &mut marked));
        assert!(
            !a.ack(8, &mut flight, &mut marked),
            "a second block on it: no change"
        );
        assert_eq!(flight, 2000);
        let mut b = Tx {
            state: State::Marked,
            ..Tx::in_flight(1000)
        };
        assert!(b.ack(9, &mut flight, &mut marked));
        assert_eq!((flight, marked.len()), (2000, 0));
    }

    #[test]
    fn a_run_acked_before_is_jumped_over_and_its_entries_then_point_past_it() {
        let mut e = outstanding(10, 20);
        assert_eq!(covered(&mut e, 10, 9, &[(2, 6)]), [11, 12, 13, 14, 15]);
        // One hole below the block: the same block again finds nothing; 16 is next.
        assert_eq!(next_not_acked(&mut e, 10, 11), 16);
        assert!(
            e.range(1..6).all(|t| t.skip == 16),
            "each entry of the run points past it"
        );
        assert_eq!(covered(&mut e, 10, 9, &[(2, 8)]), [16, 17]);
        assert_eq!(next_not_acked(&mut e, 10, 10), 10, "the hole itself");
        assert_eq!(covered(&mut e, 10, 19, &[]), [10, 18, 19]);
        assert_eq!(next_not_acked(&mut e, 10, 12), 20, "all acked: the end");
    }

    #[test]
    fn miss_indications_skip_acked_marked_and_fast_retransmitted_chunks() {
        let mut e: VecDeque<Tx> = (0..5).map(|_| Tx::in_flight(100)).collect();
        e[1].state = State::GapAcked;
        e[2].state = State::Marked;
        e[3].fast_done = true;
        e[4].misses = 2;
        let mut fast = Vec::new();
        count_misses(&mut e, 10, 15, 3, &mut fast, |_, _| 1);
        assert_eq!(
            fast,
            [14],
            "only the fourth indication of number 14 reaches 3"
        );
        assert_eq!(
            e.iter().map(|t| t.misses).collect::<Vec<_>>(),
            [1, 0, 0, 0, 3]
        );
        count_misses(&mut e, 10, 15, 3, &mut fast, |n, _| u8::from(n == 10) * 2);
        assert_eq!(fast, [14, 10], "a count of 0 gives none; 2 at once reach 3");
    }
}
