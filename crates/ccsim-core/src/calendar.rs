// SPDX-License-Identifier: MIT
//! A calendar queue (R. Brown, "Calendar queues: a fast O(1) priority queue implementation for
//! the simulation event set problem", CACM 31(10), 1988): a priority queue whose insertion and
//! removal of the earliest entry cost O(1) on average, where a binary heap costs O(log n).
//!
//! ```text
//!   time ──>   year 0                          year 1
//!              │ b0 │ b1 │ b2 │ b3 │ ... │bn-1│ b0 │ b1 │ ...
//!              └────┴────┴────┴────┘     └────┘
//!               width = 2^shift ns per bucket; an entry at t goes to bucket (t >> shift) mod n
//!
//!   bucket = a VecDeque of entries, smallest (time, seq) first: removal is a pop_front
//!   cur    = a "virtual bucket" (t >> shift, not taken mod n) at or before every entry's;
//!            the earliest entry is the first of the first bucket, scanning cur, cur + 1, ...,
//!            whose first entry lies in the virtual bucket being scanned
//!   occupied = a bit per bucket, set while it holds entries: empty buckets cost no look
//!   head   = a copy of the earliest entry, found by that scan after each removal, so that
//!            a look at the head is a load
//! ```
//!
//! Like a desk calendar, one page per day: an entry for next year is written on this year's
//! page of its day and skipped until its year comes. With about one entry per bucket and a
//! year as long as the entries' spread, the scan finds the earliest entry within a few buckets
//! and a bucket holds a few entries, whatever the number of entries. A year without any entry
//! due (all far ahead) ends in a direct search of every bucket's smallest entry, as in Brown's
//! paper.
//!
//! Resizing, as in Brown's paper: the number of buckets doubles when the entries outnumber twice the
//! buckets and halves when they fall under half of them, and then the width is chosen anew:
//! three times the mean separation of the pending entries, rounded down to a power of two so
//! that a bucket number is a shift and a mask. Brown samples the separation of the first few
//! entries dequeued; the separation of the pending entries (their earliest three quarters, so
//! that a few far ahead do not count) keeps a year about as long as their spread even when
//! the removals come much faster than the pending entries are spaced (a queue of a few
//! entries far apart and many short-lived ones), where a width from removals made years far
//! shorter than the spread and nearly every removal a direct search. Everything the queue decides depends only on the
//! keys it was given, never on addresses or hashes: the same entries in the same order give
//! the same buckets, and the removals come out in exactly `(time, seq)` order whatever the
//! buckets (a key is unique, and the bucket layout decides only where the search looks).
//!
//! Why a calendar and not a ladder queue (Tang, Goh and Thng, ACM TOMACS 15(3), 2005): the
//! ladder's advantage is skewed distributions (bursts of many entries within a tiny spread
//! under a long tail), which a calendar sized by one width handles badly. The entries it is
//! meant for here, the endpoints' deadlines (`sim/timers.rs`), are the calendar's best case:
//! one per flow, each re-armed about one retransmission timeout ahead as it fires (Brown's
//! "hold" model), spread evenly over a horizon of a few hundred milliseconds.

use std::collections::VecDeque;

/// An entry of a [`CalendarQueue`]: its key orders it, the time in nanoseconds in the upper
/// 64 bits and a sequence number (unique per entry) in the lower ones, so ties at one
/// nanosecond come out in sequence order.
pub trait Keyed: Copy {
    fn key(&self) -> u128;
}

/// The time of a key, in nanoseconds.
#[inline]
fn time_of(key: u128) -> u64 {
    (key >> 64) as u64
}

/// Fewest buckets: below this the queue does not shrink (and a tiny queue pays a direct
/// search of these few buckets at worst).
const MIN_BUCKETS: usize = 4;
/// The width until the first resize: 2^20 ns, about a millisecond.
const INITIAL_SHIFT: u32 = 20;
/// Widest bucket, 2^40 ns (18 min): a separation beyond it says nothing of the spacing.
const MAX_SHIFT: u32 = 40;
/// Brown's factor: a bucket about three mean separations wide, so that the scan finds an
/// entry within a bucket or two and a bucket holds a few.
const WIDTH_PER_SEPARATION: u64 = 3;

/// A priority queue of [`Keyed`] entries, smallest key first; see the module docs.
pub struct CalendarQueue<T> {
    /// `buckets.len()` is a power of two; each sorted by key, smallest first.
    buckets: Vec<VecDeque<T>>,
    /// One bit per bucket, set while it holds an entry: the scan skips 64 empty buckets in a
    /// word's `trailing_zeros` instead of looking into each.
    occupied: Vec<u64>,
    /// Bucket width: `1 << shift` nanoseconds.
    shift: u32,
    /// A virtual bucket number (time >> shift) at or before every entry's: the scan's start.
    cur: u64,
    len: usize,
    /// A copy of the earliest entry (which stays in its bucket too), so that a look at the
    /// head is a load: the event loop compares the heads of two queues before every event.
    head: Option<T>,
}

impl<T: Keyed> Default for CalendarQueue<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Keyed> CalendarQueue<T> {
    pub fn new() -> Self {
        Self {
            buckets: (0..MIN_BUCKETS).map(|_| VecDeque::new()).collect(),
            occupied: vec![0; MIN_BUCKETS.div_ceil(64)],
            shift: INITIAL_SHIFT,
            cur: 0,
            len: 0,
            head: None,
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The number of buckets and the width's shift, for tests.
    pub fn shape(&self) -> (usize, u32) {
        (self.buckets.len(), self.shift)
    }

    /// Add an entry (at any time, earlier than the earliest too).
    #[inline]
    pub fn push(&mut self, e: T) {
        let vb = time_of(e.key()) >> self.shift;
        // The scan must start at or before every entry: an entry earlier than the last one
        // removed (a put-back) moves the start back.
        self.cur = self.cur.min(vb);
        let n = self.buckets.len();
        let b = bucket_of(vb, n);
        insert_sorted(&mut self.buckets[b], e);
        self.occupied[b / 64] |= 1 << (b % 64);
        self.len += 1;
        if self.head.is_none_or(|h| e.key() < h.key()) {
            self.head = Some(e);
        }
        if self.len > 2 * n {
            self.resize(2 * n);
        }
    }

    /// The earliest entry, without removing it.
    #[inline]
    pub fn peek(&self) -> Option<&T> {
        self.head.as_ref()
    }

    /// Remove and return the earliest entry.
    #[inline]
    pub fn pop(&mut self) -> Option<T> {
        let e = self.head?;
        let vb = time_of(e.key()) >> self.shift;
        let n = self.buckets.len();
        let b = bucket_of(vb, n);
        let removed = self.buckets[b].pop_front();
        debug_assert!(removed.is_some_and(|r| r.key() == e.key()));
        if self.buckets[b].is_empty() {
            self.occupied[b / 64] &= !(1 << (b % 64));
        }
        self.len -= 1;
        self.cur = vb;
        if 2 * self.len < n && n > MIN_BUCKETS {
            self.resize(n / 2);
        }
        self.head = self.locate().and_then(|b| self.buckets[b].front().copied());
        Some(e)
    }

    /// The earliest entry's time.
    #[inline]
    pub fn peek_time(&self) -> Option<u64> {
        self.head.map(|h| time_of(h.key()))
    }

    /// Every entry, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.buckets.iter().flatten()
    }

    /// The bucket holding the earliest entry; moves `cur` to its virtual bucket. Called
    /// after a removal, to find the next head.
    #[inline]
    fn locate(&mut self) -> Option<usize> {
        if self.len == 0 {
            return None;
        }
        let n = self.buckets.len();
        let year_end = self.cur.saturating_add(n as u64);
        let mut vb = self.cur;
        while vb < year_end {
            // The next bucket holding anything, at or after `vb`'s (around the year's end).
            let from = bucket_of(vb, n);
            let b = self.next_occupied(from)?;
            vb += ((b + n - from) & (n - 1)) as u64;
            if vb >= year_end {
                break;
            }
            let e = self.buckets[b].front()?;
            // Every entry lies at or after `cur`, so the bucket's smallest lies in `vb` if any
            // of its entries does; and no entry lies in a virtual bucket between `cur` and
            // `vb` (the buckets skipped are empty, the others were looked into).
            if time_of(e.key()) >> self.shift == vb {
                self.cur = vb;
                return Some(b);
            }
            vb += 1;
        }
        // A whole year without an entry due: find the earliest directly (Brown's direct search).
        let (b, k) = self.earliest()?;
        self.cur = time_of(k) >> self.shift;
        Some(b)
    }

    /// The first occupied bucket at or after `from`, going round past the last; `None` only
    /// when every bucket is empty.
    #[inline]
    fn next_occupied(&self, from: usize) -> Option<usize> {
        let words = self.occupied.len();
        let mut w = from / 64;
        let mut bits = self.occupied[w] & (u64::MAX << (from % 64));
        for _ in 0..=words {
            if bits != 0 {
                return Some(w * 64 + bits.trailing_zeros() as usize);
            }
            w = (w + 1) % words;
            bits = self.occupied[w];
        }
        None
    }

    /// The bucket holding the smallest key, and that key: a search of every occupied
    /// bucket's first entry.
    #[cold]
    fn earliest(&self) -> Option<(usize, u128)> {
        let mut best: Option<(usize, u128)> = None;
        for (w, &word) in self.occupied.iter().enumerate() {
            let mut bits = word;
            while bits != 0 {
                let b = w * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                if let Some(e) = self.buckets[b].front() {
                    if best.is_none_or(|(_, k)| e.key() < k) {
                        best = Some((b, e.key()));
                    }
                }
            }
        }
        best
    }

    /// Move every entry into `n` buckets of a width chosen from the entries' separation.
    #[cold]
    #[inline(never)]
    fn resize(&mut self, n: usize) {
        let mut all: Vec<T> = Vec::with_capacity(self.len);
        for b in &mut self.buckets {
            all.extend(b.drain(..));
        }
        // Smallest key first, so that each bucket receives its entries already in its order.
        all.sort_unstable_by_key(|e| e.key());
        // The mean separation of the earliest three quarters: a few entries far ahead (an
        // hour-long timer) must not widen the buckets the near ones crowd into.
        let m = all.len() * 3 / 4;
        if m >= 2 {
            let span = time_of(all[m - 1].key()) - time_of(all[0].key());
            let width = WIDTH_PER_SEPARATION.saturating_mul(span / (m as u64 - 1));
            self.shift = width.max(1).ilog2().min(MAX_SHIFT);
        }
        self.buckets.resize_with(n, VecDeque::new);
        self.buckets.truncate(n);
        self.occupied.clear();
        self.occupied.resize(n.div_ceil(64), 0);
        self.cur = all.first().map_or(0, |e| time_of(e.key()) >> self.shift);
        for e in all {
            let b = bucket_of(time_of(e.key()) >> self.shift, n);
            self.buckets[b].push_back(e);
            self.occupied[b / 64] |= 1 << (b % 64);
        }
    }
}

/// The bucket of virtual bucket `vb` among `n` (a power of two).
#[inline]
fn bucket_of(vb: u64, n: usize) -> usize {
    (vb as usize) & (n - 1)
}

/// Insert into a bucket kept smallest key first. A new entry is most often later than those
/// waiting in its bucket (it was scheduled after them, and ahead of the clock): then it goes at
/// the back, in O(1); otherwise a binary search finds its place.
#[inline]
fn insert_sorted<T: Keyed>(v: &mut VecDeque<T>, e: T) {
    let k = e.key();
    if v.back().is_none_or(|x| x.key() < k) {
        v.push_back(e);
    } else {
        let pos = v.partition_point(|x| x.key() < k);
        v.insert(pos, e);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    struct E {
        t: u64,
        seq: u64,
    }
    impl Keyed for E {
        fn key(&self) -> u128 {
            (self.t as u128) << 64 | self.seq as u128
        }
    }

    struct Rng(u64);
    impl Rng {
        /// xorshift64: a fixed, dependency-free sequence.
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
    }

    /// Drive the queue and an ordered set side by side: `steps` rounds of a pop followed by
    /// up to `max_adds` pushes at the popped time plus `delay(r)`; every pop must agree.
    fn against_reference(seed: u64, steps: usize, max_adds: u64, delay: impl Fn(u64) -> u64) {
        let mut q = CalendarQueue::new();
        let mut one = BTreeSet::new();
        let mut rng = Rng(seed);
        let mut seq = 0;
        for _ in 0..64 {
            seq += 1;
            let e = E {
                t: delay(rng.next()),
                seq,
            };
            q.push(e);
            one.insert((e.t, e.seq));
        }
        for step in 0..steps {
            let got = q.pop().map(|e| (e.t, e.seq));
            assert_eq!(got, one.pop_first(), "step {step}");
            let Some((now, _)) = got else { break };
            assert_eq!(q.len(), one.len());
            for _ in 0..rng.next() % (max_adds + 1) {
                seq += 1;
                let e = E {
                    t: now + delay(rng.next()),
                    seq,
                };
                q.push(e);
                one.insert((e.t, e.seq));
            }
        }
        while let Some(e) = q.pop() {
            assert_eq!(Some((e.t, e.seq)), one.pop_first());
        }
        assert!(one.is_empty());
    }

    #[test]
    fn random_interleavings_come_out_in_time_then_sequence_order() {
        // Two pushes per pop on average: the queue grows to thousands and resizes up.
        against_reference(0x9e37_79b9_7f4a_7c15, 20_000, 3, |r| r % 5_000_000);
    }

    #[test]
    fn entries_at_equal_times_come_out_in_sequence_order() {
        // Four distinct delays only: most entries share their nanosecond with others.
        against_reference(0x2545_f491_4f6c_dd1d, 20_000, 2, |r| (r % 4) * 1000);
        let mut q = CalendarQueue::new();
        for seq in [5, 1, 9, 3, 7] {
            q.push(E { t: 42, seq });
        }
        let order: Vec<u64> = std::iter::from_fn(|| q.pop()).map(|e| e.seq).collect();
        assert_eq!(order, vec![1, 3, 5, 7, 9]);
    }

    #[test]
    fn far_future_entries_wait_their_year_and_a_lone_one_is_found_by_direct_search() {
        // Mostly microseconds ahead, one in 64 an hour ahead: many years beyond the scan.
        against_reference(0x1234_5678_9abc_def1, 20_000, 2, |r| {
            if r % 64 == 0 {
                3_600_000_000_000 + r % 1000
            } else {
                r % 50_000
            }
        });
        // Entries at the end of time (SimTime::MAX) among near ones, past a resize.
        let mut q = CalendarQueue::new();
        for seq in 0..40u64 {
            let t = if seq % 4 == 0 {
                u64::MAX - seq
            } else {
                seq * 10
            };
            q.push(E { t, seq });
        }
        let times: Vec<u64> = std::iter::from_fn(|| q.pop()).map(|e| e.t).collect();
        assert!(times.windows(2).all(|w| w[0] < w[1]) && times.len() == 40);
        let mut q = CalendarQueue::new();
        q.push(E { t: 1 << 50, seq: 2 });
        q.push(E { t: 7, seq: 1 });
        assert_eq!(q.pop(), Some(E { t: 7, seq: 1 }));
        assert_eq!(q.peek_time(), Some(1 << 50));
        assert_eq!(q.pop(), Some(E { t: 1 << 50, seq: 2 }));
        assert_eq!(q.pop(), None);
    }

    #[test]
    fn the_queue_grows_then_shrinks_and_keeps_its_order_throughout() {
        let mut q = CalendarQueue::new();
        let mut one = BTreeSet::new();
        let mut rng = Rng(77);
        for seq in 0..10_000u64 {
            let t = rng.next() % 1_000_000_000;
            q.push(E { t, seq });
            one.insert((t, seq));
        }
        let (grown, _) = q.shape();
        assert!((4096..=8192).contains(&grown), "{grown} buckets for 10,000");
        while q.len() > 10 {
            assert_eq!(q.pop().map(|e| (e.t, e.seq)), one.pop_first());
        }
        let (shrunk, shift) = q.shape();
        assert!(shrunk <= 32, "{shrunk} buckets for 10");
        // 10,000 entries over a second, so the last ones left are ~100 us apart: three
        // separations are ~300 us, 2^18 ns rounded down.
        assert_eq!(shift, 18);
        while let Some(e) = q.pop() {
            assert_eq!(Some((e.t, e.seq)), one.pop_first());
        }
    }

    #[test]
    fn an_entry_earlier_than_the_scan_is_found_first() {
        let mut q = CalendarQueue::new();
        q.push(E {
            t: 10_000_000,
            seq: 1,
        });
        // The scan moves up to the earliest entry, 10 ms ahead...
        assert_eq!(q.peek().map(|e| e.seq), Some(1));
        // ...and an entry scheduled before it (by a caller whose clock is earlier) is next.
        q.push(E { t: 5, seq: 2 });
        assert_eq!(q.peek_time(), Some(5));
        assert_eq!(q.pop().map(|e| e.seq), Some(2));
        // A popped entry put back is the earliest again.
        let e = q.pop().expect("one left");
        q.push(e);
        assert_eq!(q.pop(), Some(e));
        assert!(q.is_empty());
    }

    #[test]
    fn the_same_pushes_give_the_same_shape() {
        let build = || {
            let mut q = CalendarQueue::new();
            let mut rng = Rng(3);
            for seq in 0..5_000u64 {
                q.push(E {
                    t: rng.next() % 10_000_000,
                    seq,
                });
                if seq % 3 == 0 {
                    q.pop();
                }
            }
            (q.shape(), q.len())
        };
        assert_eq!(build(), build());
    }
}
