// SPDX-License-Identifier: MIT
//! Simulated time, durations and bit rates.
//!
//! Time is an integer count of nanoseconds (`u64`: 584 years of simulated time), never a float,
//! so that the same scenario gives the same bits on every machine. Serialization delay is
//! computed from bytes and bit rate in `u128` and the remainder is carried from packet to packet
//! by [`Serializer`], so a link that sends a million packets back to back finishes at exactly
//! `total_bits / rate`, with no per-packet rounding that accumulates.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// The longest duration a scenario may give anywhere (`duration`, a flow's `start`, a timer):
/// 2^62 ns, about 146 years.
///
/// Time arithmetic saturates at [`SimTime::MAX`] rather than wrap. Saturation must never happen
/// inside a run: an event rescheduled at `now + d` that saturates lands at the same instant for
/// ever, and a run whose end is `SimTime::MAX` would handle it for ever (issue 10, defect 6: a
/// duration and an RTO near 2^64 ns hung). With every scenario value at most 2^62 ns, an instant
/// of the run plus any such duration stays below 2^63; and because the end of a run is at most
/// 2^62 ns, a time that does saturate (the serialization of a 4 GB packet at 1 bit/s) is after the
/// end, where the run stops.
pub const MAX_SCENARIO_DURATION: SimDuration = SimDuration(1 << 62);

/// An instant of simulated time, in nanoseconds since the start of the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SimTime(pub u64);

/// A span of simulated time, in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SimDuration(pub u64);

impl SimTime {
    pub const ZERO: SimTime = SimTime(0);
    pub const MAX: SimTime = SimTime(u64::MAX);

    pub const fn from_nanos(ns: u64) -> Self {
        SimTime(ns)
    }
    pub const fn from_millis(ms: u64) -> Self {
        SimTime(ms * 1_000_000)
    }
    pub const fn from_secs(s: u64) -> Self {
        SimTime(s * 1_000_000_000)
    }
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    /// Seconds as a float, for reports only (never fed back into the simulation).
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 * 1e-9
    }
    /// The span since `earlier`, or zero if `earlier` is later.
    pub fn saturating_since(self, earlier: SimTime) -> SimDuration {
        SimDuration(self.0.saturating_sub(earlier.0))
    }
}

impl SimDuration {
    pub const ZERO: SimDuration = SimDuration(0);
    pub const MAX: SimDuration = SimDuration(u64::MAX);

    pub const fn from_nanos(ns: u64) -> Self {
        SimDuration(ns)
    }
    pub const fn from_micros(us: u64) -> Self {
        SimDuration(us * 1_000)
    }
    pub const fn from_millis(ms: u64) -> Self {
        SimDuration(ms * 1_000_000)
    }
    pub const fn from_secs(s: u64) -> Self {
        SimDuration(s * 1_000_000_000)
    }
    /// From float seconds, rounded to the nearest nanosecond; for random draws and
    /// user input only.
    pub fn from_secs_f64(s: f64) -> Self {
        if s.is_nan() || s <= 0.0 {
            SimDuration(0)
        } else if s >= u64::MAX as f64 * 1e-9 {
            SimDuration(u64::MAX)
        } else {
            SimDuration((s * 1e9).round() as u64)
        }
    }
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 * 1e-9
    }
    pub fn saturating_mul(self, k: u64) -> SimDuration {
        SimDuration(self.0.saturating_mul(k))
    }
}

impl Add<SimDuration> for SimTime {
    type Output = SimTime;
    fn add(self, d: SimDuration) -> SimTime {
        SimTime(self.0.saturating_add(d.0))
    }
}
impl AddAssign<SimDuration> for SimTime {
    fn add_assign(&mut self, d: SimDuration) {
        self.0 = self.0.saturating_add(d.0);
    }
}
impl Sub<SimTime> for SimTime {
    type Output = SimDuration;
    /// Panics in debug builds if `rhs` is later: use [`SimTime::saturating_since`] when that
    /// can happen.
    fn sub(self, rhs: SimTime) -> SimDuration {
        debug_assert!(self.0 >= rhs.0, "time went backwards");
        SimDuration(self.0.wrapping_sub(rhs.0))
    }
}
impl Add for SimDuration {
    type Output = SimDuration;
    fn add(self, d: SimDuration) -> SimDuration {
        SimDuration(self.0.saturating_add(d.0))
    }
}

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.9}s", self.as_secs_f64())
    }
}
impl fmt::Display for SimDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.9}s", self.as_secs_f64())
    }
}

/// A bit rate in bits per second. Always positive once validated by the scenario layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Rate(pub u64);

impl Rate {
    pub const fn bps(b: u64) -> Self {
        Rate(b)
    }
    pub const fn mbps(m: u64) -> Self {
        Rate(m * 1_000_000)
    }
    pub const fn gbps(g: u64) -> Self {
        Rate(g * 1_000_000_000)
    }
    pub const fn bits_per_sec(self) -> u64 {
        self.0
    }
    /// Time to put `bytes` on the wire, rounded up to a whole nanosecond. Use a
    /// [`Serializer`] for back-to-back packets so the rounding does not accumulate.
    pub fn tx_time(self, bytes: u64) -> SimDuration {
        let num = bytes as u128 * 8 * 1_000_000_000;
        let r = self.0.max(1) as u128;
        SimDuration(num.div_ceil(r).min(u64::MAX as u128) as u64)
    }
    /// Bytes sent in `d` at this rate (rounded down).
    pub fn bytes_in(self, d: SimDuration) -> u64 {
        (self.0 as u128 * d.0 as u128 / 8_000_000_000) as u64
    }
}

/// Exact serialization clock for one transmitter: carries the sub-nanosecond remainder from one
/// packet to the next, so that `n` back-to-back packets of `b` bytes take exactly
/// `ceil(n * 8b / rate)` ns in total, not `n * ceil(8b / rate)`.
///
/// 40 bytes, in the channel's second cache line (`link.rs`, "Layout"): every quantity below is
/// under the rate or a transmission time, so 64 bits hold it, and the arithmetic is done in
/// 128 bits only where a sum of two of them needs it.
#[derive(Clone, Copy, Debug)]
pub struct Serializer {
    /// Remainder in units of 1/rate nanoseconds, always `< rate` (of the rate it was made at).
    carry: u64,
    /// The last `(rate, bytes)` and the quotient and remainder of `8e9 · bytes / rate`. A
    /// transmitter sends mostly packets of one size (full segments one way, ACKs the other),
    /// and a 128-bit division costs more than the rest of a packet's transmission.
    /// `memo_bytes == NO_MEMO` until the first packet (a packet's size is a `u32`). The
    /// quotient is kept saturated at `u64::MAX`, the longest [`SimDuration`] there is.
    memo_rate: u64,
    memo_bytes: u64,
    memo_quotient: u64,
    memo_remainder: u64,
}

/// [`Serializer::memo_bytes`] before any packet.
const NO_MEMO: u64 = u64::MAX;

impl Default for Serializer {
    fn default() -> Self {
        Serializer {
            carry: 0,
            memo_rate: 0,
            memo_bytes: NO_MEMO,
            memo_quotient: 0,
            memo_remainder: 0,
        }
    }
}

impl Serializer {
    /// The transmission time of the next packet of `bytes` at `rate`.
    #[inline]
    pub fn next(&mut self, rate: Rate, bytes: u64) -> SimDuration {
        let r = rate.0.max(1) as u128;
        if self.memo_rate != rate.0 || self.memo_bytes != bytes {
            let num = bytes as u128 * 8 * 1_000_000_000;
            self.memo_rate = rate.0;
            self.memo_bytes = bytes;
            self.memo_quotient = (num / r).min(u64::MAX as u128) as u64;
            self.memo_remainder = (num % r) as u64;
        }
        let q = self.memo_quotient as u128;
        // (8e9·bytes + carry) / rate with 8e9·bytes = q·rate + rem: rem and carry are both
        // below rate (unless the rate just fell), so their sum adds at most one nanosecond.
        let sum = self.memo_remainder as u128 + self.carry as u128;
        let (whole, carry) = if sum < r {
            (q, sum)
        } else if sum - r < r {
            (q + 1, sum - r)
        } else {
            (q + sum / r, sum % r)
        };
        // Below r, which is a u64.
        self.carry = carry as u64;
        SimDuration(whole.min(u64::MAX as u128) as u64)
    }
    /// Forget the remainder, when the transmitter goes idle (the next packet starts on a
    /// nanosecond boundary).
    pub fn reset(&mut self) {
        self.carry = 0;
    }
}

const _: () = assert!(std::mem::size_of::<Serializer>() == 40);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_1500_byte_packet_at_10_mbps_takes_1_2_ms() {
        assert_eq!(Rate::mbps(10).tx_time(1500), SimDuration::from_micros(1200));
    }

    #[test]
    fn back_to_back_serialization_does_not_accumulate_rounding() {
        // 1 byte at 3 bit/s is 8/3 s: rounding each up would drift by 1/3 ns per packet.
        let rate = Rate::bps(3);
        let mut s = Serializer::default();
        let total: u64 = (0..3000).map(|_| s.next(rate, 1).0).sum();
        assert_eq!(total, 8_000_000_000_000);
    }

    #[test]
    fn the_remembered_quotient_gives_the_same_times_as_dividing_afresh() {
        // Sizes and rates alternate and repeat, so the memo is both hit and replaced.
        let mut s = Serializer::default();
        let mut carry = 0u128;
        for i in 0..10_000u64 {
            let bytes = [1500, 1500, 52, 1500, 40, 40][(i % 6) as usize];
            let rate = Rate::bps([3, 7_000_001, 1_000_000_007][(i / 7 % 3) as usize]);
            let num = bytes as u128 * 8_000_000_000 + carry;
            carry = num % rate.0 as u128;
            assert_eq!(
                s.next(rate, bytes).0 as u128,
                num / rate.0 as u128,
                "packet {i}"
            );
        }
    }

    #[test]
    fn bytes_in_inverts_tx_time_for_whole_packets() {
        let r = Rate::gbps(1);
        assert_eq!(r.bytes_in(r.tx_time(1500)), 1500);
    }
}
