// SPDX-License-Identifier: MIT
//! The sojourn time of every packet that crossed a queue (the time from its arrival to the
//! start of its transmission), kept as a compact histogram so that the links table can give
//! its percentiles for every queue kind: what AQM studies plot (RFC 8289 §3 calls it the
//! packet's "sojourn time"; RFC 7928 §2.2 asks AQM evaluations for the queue delay's
//! distribution).
//!
//! Log-linear buckets, as an HDR histogram: below 2^[`SUB_BITS`] ns each value has its own
//! bucket; above, each power of two is cut into 2^[`SUB_BITS`] equal buckets, so a bucket is at
//! most 1/32 of its lower bound wide and a percentile read at the bucket's middle is within
//! 1/64 (1.6 %) of the true sample. No random draw (a reservoir would need one, and a stream of
//! its own), one increment per packet, and memory bounded: the bucket vector grows to the
//! largest delay seen, at most 1,920 buckets (15 KB) for a delay of 2^63 ns; a queue that never
//! held a packet costs nothing beyond the empty vector. The maximum is kept exactly.
//!
//! ```text
//!   value (ns)       0..32     32..64     64..128    128..256   ...  2^k..2^(k+1)
//!   bucket width        1          1          2          4      ...    2^(k-5)
//!   buckets            32         32         32         32      ...      32
//! ```
//!
//! A packet sent at once to an idle transmitter counts as a sojourn of zero: it is a packet
//! that crossed the queue without waiting, and leaving it out would make an idle link's delay
//! that of its rare waiting packets. Such packets are most of most links' packets, so they are
//! a plain count beside the buckets (one add). Packets dropped in the queue, and packets still
//! waiting at the end of the run, count in no percentile.

/// Bits of sub-bucket per power of two (32 buckets per octave).
const SUB_BITS: u32 = 5;
const SUB: u64 = 1 << SUB_BITS;

/// The histogram of one channel's sojourn times (ns).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SojournHistogram {
    /// Packets that did not wait (most packets of most links: one add, no bucket lookup).
    zeros: u64,
    /// Packets that waited, counted in `buckets`.
    waited: u64,
    /// The largest sojourn time seen, ns (exact).
    max_ns: u64,
    /// Count per bucket of the packets that waited; grown on demand to the highest bucket.
    buckets: Vec<u64>,
}

/// The bucket of a value: itself below [`SUB`], else 32 buckets per power of two.
#[inline]
fn bucket_of(v: u64) -> usize {
    if v < SUB {
        return v as usize;
    }
    let octave = 63 - v.leading_zeros(); // >= SUB_BITS
    let shift = octave - SUB_BITS;
    let sub = (v >> shift) - SUB; // 0..SUB
    (SUB + (shift as u64) * SUB + sub) as usize
}

/// The lowest value of bucket `b` and its width.
fn bucket_range(b: usize) -> (u64, u64) {
    let b = b as u64;
    if b < SUB {
        return (b, 1);
    }
    let shift = (b - SUB) / SUB;
    let sub = (b - SUB) % SUB;
    ((SUB + sub) << shift, 1 << shift)
}

impl SojournHistogram {
    /// Count one packet that did not wait (it found the transmitter idle).
    #[inline]
    pub fn record_zero(&mut self) {
        self.zeros += 1;
    }

    /// Count one packet that waited `ns` nanoseconds.
    #[inline(always)]
    pub fn record(&mut self, ns: u64) {
        if ns == 0 {
            self.zeros += 1;
            return;
        }
        self.waited += 1;
        if ns > self.max_ns {
            self.max_ns = ns;
        }
        let b = bucket_of(ns);
        if b >= self.buckets.len() {
            self.grow(b);
        }
        self.buckets[b] += 1;
    }

    #[cold]
    fn grow(&mut self, b: usize) {
        self.buckets.resize(b + 1, 0);
    }

    /// The `q`-quantile (0 < q <= 1) in nanoseconds by the nearest-rank rule: the smallest
    /// sample with at least ⌈q·count⌉ samples at or below it, read at the middle of its bucket
    /// (exact below 32 ns) and never above the exact maximum. `None` with no sample.
    pub fn quantile_ns(&self, q: f64) -> Option<f64> {
        let count = self.count();
        if count == 0 {
            return None;
        }
        let rank = ((q * count as f64).ceil() as u64).clamp(1, count);
        if rank <= self.zeros {
            return Some(0.0);
        }
        let mut seen = self.zeros;
        for (b, &n) in self.buckets.iter().enumerate() {
            seen += n;
            if seen >= rank {
                let (lo, width) = bucket_range(b);
                let mid = lo as f64 + (width - 1) as f64 / 2.0;
                return Some(mid.min(self.max_ns as f64));
            }
        }
        Some(self.max_ns as f64)
    }

    /// Packets counted.
    pub fn count(&self) -> u64 {
        self.zeros + self.waited
    }

    /// The largest sojourn time seen, ns (exact).
    pub fn max_ns(&self) -> u64 {
        self.max_ns
    }

    /// Buckets held (for the memory bound's test).
    #[cfg(test)]
    fn buckets_held(&self) -> usize {
        self.buckets.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_value_falls_in_a_bucket_that_contains_it_and_is_at_most_a_32nd_of_it_wide() {
        for v in (0..5000u64).chain([u64::MAX, 1 << 40, (1 << 40) - 1, 123_456_789]) {
            let (lo, width) = bucket_range(bucket_of(v));
            assert!(lo <= v && v - lo < width, "{v}: [{lo}, +{width})");
            assert!(v < SUB || width * SUB <= lo, "{v}: width {width} for {lo}");
        }
        // Buckets are in value order with no gap.
        for b in 0..1000 {
            let (lo, w) = bucket_range(b);
            assert_eq!(bucket_range(b + 1).0, lo + w, "bucket {b}");
        }
    }

    #[test]
    fn percentiles_of_a_known_sample_are_within_a_64th_and_the_maximum_is_exact() {
        let mut h = SojournHistogram::default();
        assert_eq!(h.quantile_ns(0.5), None);
        // 1..=1000 us: p50 is 500 us, p99 990 us, the maximum 1 ms.
        for k in 1..=1000u64 {
            h.record(k * 1000);
        }
        for (q, exact) in [(0.5, 500_000.0), (0.95, 950_000.0), (0.99, 990_000.0)] {
            let got = h.quantile_ns(q).unwrap();
            assert!(
                (got - exact).abs() <= exact / 64.0,
                "q {q}: {got} vs {exact}"
            );
        }
        assert_eq!(h.quantile_ns(1.0), Some(1_000_000.0));
        assert_eq!(h.max_ns(), 1_000_000);
        assert_eq!(h.count(), 1000);
    }

    #[test]
    fn zero_sojourns_are_exact_and_the_memory_grows_only_to_the_largest_delay() {
        let mut h = SojournHistogram::default();
        for _ in 0..98 {
            h.record(0);
        }
        h.record_zero();
        assert_eq!(
            h.buckets_held(),
            0,
            "no bucket for packets that did not wait"
        );
        h.record(10_000_000);
        assert_eq!(h.quantile_ns(0.5), Some(0.0));
        assert_eq!(h.quantile_ns(0.99), Some(0.0));
        assert_eq!(h.quantile_ns(1.0), Some(10_000_000.0));
        // 10 ms is in octave 23: 32 + 18·32 + sub < 640 buckets.
        assert!(h.buckets_held() < 640, "{}", h.buckets_held());
        h.record(u64::MAX);
        assert_eq!(
            h.buckets_held(),
            (SUB + (63 - SUB_BITS as u64 + 1) * SUB) as usize
        );
    }
}
