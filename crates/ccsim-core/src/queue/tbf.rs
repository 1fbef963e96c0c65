// SPDX-License-Identifier: MIT
//! A token-bucket shaper (TBF, as Linux's `tbf` qdisc): packets leave no faster than `rate` on
//! average, with bursts of up to `burst` bytes at the link's own speed.
//!
//! ```text
//!   tokens += rate · elapsed, at most burst        (the bucket starts full)
//!   head of the FIFO leaves when tokens >= its size, and takes them
//!   otherwise it waits, the transmitter idle, until  t = now + (size − tokens) / rate
//! ```
//!
//! Unlike every other discipline a shaper may hold packets while its transmitter is idle, so
//! the channel asks it when the head can leave ([`Tbf::ready_at`]) and schedules its `TxDone`
//! for then (`link.rs`, "Shapers"). Tokens are kept in integer bit·ns/s units (a byte is 8·10⁹,
//! one nanosecond at `rate` adds `rate` of them), so a shaper's departure times are exact and
//! deterministic. Linux's optional second bucket (`peakrate`, `mtu`) is not modelled.

use crate::time::{Rate, SimDuration, SimTime};

const UNITS_PER_BYTE: u128 = 8_000_000_000;

#[derive(Clone, Debug)]
pub(crate) struct Tbf {
    /// Token rate, bit/s (> 0, checked by the parser).
    rate: u128,
    /// Bucket size in token units.
    full: u128,
    tokens: u128,
    /// When `tokens` was last brought up to date.
    last: SimTime,
}

impl Tbf {
    pub(crate) fn new(rate: Rate, burst: u64) -> Tbf {
        let full = burst as u128 * UNITS_PER_BYTE;
        Tbf {
            rate: rate.bits_per_sec().max(1) as u128,
            full,
            tokens: full,
            last: SimTime::ZERO,
        }
    }

    /// The tokens at `now` (not before the last update).
    fn tokens_at(&self, now: SimTime) -> u128 {
        let dt = now.as_nanos().saturating_sub(self.last.as_nanos()) as u128;
        (self.tokens + dt * self.rate).min(self.full)
    }

    /// What a packet of `size` bytes needs (a packet larger than the bucket, which the parser
    /// rules out with burst >= MTU, would leave with a full bucket rather than never).
    fn need(&self, size: u32) -> u128 {
        (size as u128 * UNITS_PER_BYTE).min(self.full)
    }

    /// Take the tokens for a packet of `size` bytes at `now`, if the bucket holds them.
    #[inline]
    pub(crate) fn take(&mut self, now: SimTime, size: u32) -> bool {
        let have = self.tokens_at(now);
        let need = self.need(size);
        if have < need {
            return false;
        }
        self.tokens = have - need;
        self.last = self.last.max(now);
        true
    }

    /// The first time at or after `t` when the bucket holds `size` bytes of tokens.
    pub(crate) fn ready_at(&self, t: SimTime, size: u32) -> SimTime {
        let have = self.tokens_at(t);
        let need = self.need(size);
        if have >= need {
            return t;
        }
        let wait = (need - have).div_ceil(self.rate);
        t.max(self.last) + SimDuration::from_nanos(wait as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_leaves_at_once_up_to_the_bucket_then_at_the_token_rate() {
        // 8 Mbit/s: 1,000 B of tokens per ms; a bucket of 3,000 B; ten packets of 1,000 B at 0.
        let mut tbf = Tbf::new(Rate::mbps(8), 3000);
        let mut t = SimTime::ZERO;
        let mut departures = Vec::new();
        for _ in 0..10 {
            t = tbf.ready_at(t, 1000);
            assert!(tbf.take(t, 1000));
            departures.push(t.as_nanos() / 1000);
        }
        // Three at 0 from the full bucket, then one per millisecond.
        assert_eq!(
            departures,
            vec![0, 0, 0, 1000, 2000, 3000, 4000, 5000, 6000, 7000]
        );
        // A pause fills the bucket again, but never beyond 3,000 B.
        let later = SimTime::from_millis(100);
        for _ in 0..3 {
            assert!(tbf.take(later, 1000));
        }
        assert!(!tbf.take(later, 1000));
        assert_eq!(
            tbf.ready_at(later, 1000),
            later + SimDuration::from_millis(1)
        );
        // A 500-B packet needs only half a millisecond of tokens.
        assert_eq!(
            tbf.ready_at(later, 500),
            later + SimDuration::from_micros(500)
        );
    }
}
