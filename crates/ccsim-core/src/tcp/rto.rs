// SPDX-License-Identifier: MIT
//! Retransmission timeout estimation, RFC 6298.
//!
//! ```text
//!   first sample R:   SRTT = R,  RTTVAR = R/2                                  (2.2)
//!   later sample R':  RTTVAR = 3/4 RTTVAR + 1/4 |SRTT - R'|,  SRTT = 7/8 SRTT + 1/8 R'   (2.3)
//!   RTO = SRTT + max(G, 4 RTTVAR), at least rto_min (2.4), at most rto_max (2.5)
//!   each expiry doubles it (5.5), up to rto_max
//! ```
//!
//! Integer nanoseconds throughout. With a clock granularity G > 0 (ns-2's `tcpTick_`, paper 000's
//! 50 ms), the RTO is also rounded up to a whole number of ticks, as a tick-driven timer fires
//! only on tick boundaries.

use crate::time::SimDuration;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RtoConfig {
    pub initial: SimDuration,
    pub min: SimDuration,
    pub max: SimDuration,
    pub granularity: SimDuration,
}

impl Default for RtoConfig {
    /// RFC 6298: 1 s initial (2.1), 1 s minimum (2.4), 60 s cap (2.5).
    fn default() -> Self {
        RtoConfig {
            initial: SimDuration::from_secs(1),
            min: SimDuration::from_secs(1),
            max: SimDuration::from_secs(60),
            granularity: SimDuration::ZERO,
        }
    }
}

/// [`RtoEstimator`]'s SRTT before the first sample: no RTT reaches 2^64 − 1 ns (a run ends by
/// 2^62 ns).
const NO_SRTT: u64 = u64::MAX;

// `repr(C)`, 64 bytes: one cache line of the TCP sender (`tcp/sender.rs`, "Layout"), the
// estimate first and the configuration it is bounded by after it. SRTT is a plain `u64` with
// [`NO_SRTT`] for "no sample yet" (an `Option<u64>` took 16 bytes and made the estimator 72).
#[repr(C)]
#[derive(Clone, Debug)]
pub struct RtoEstimator {
    srtt: u64,
    rttvar: u64,
    /// RTO before back-off, ns.
    base_rto: u64,
    /// Number of consecutive expiries (RFC 6298 (5.5) doubles per expiry).
    backoff: u32,
    cfg: RtoConfig,
}

const _: () = assert!(std::mem::size_of::<RtoEstimator>() == 64);

impl RtoEstimator {
    pub fn new(cfg: RtoConfig) -> Self {
        RtoEstimator {
            srtt: NO_SRTT,
            rttvar: 0,
            base_rto: cfg.initial.as_nanos(),
            backoff: 0,
            cfg,
        }
    }

    /// Take a valid RTT sample (never from retransmitted data: Karn's rule, §3).
    pub fn on_sample(&mut self, r: SimDuration) {
        let r = r.as_nanos();
        match self.srtt() {
            None => {
                self.srtt = r;
                self.rttvar = r / 2;
            }
            Some(srtt) => {
                let srtt = srtt.as_nanos();
                // (2.3): RTTVAR first, with the old SRTT.
                self.rttvar = (3 * self.rttvar + srtt.abs_diff(r)) / 4;
                self.srtt = (7 * srtt + r) / 8;
            }
        }
        let srtt = self.srtt;
        let g = self.cfg.granularity.as_nanos();
        let mut rto = srtt + g.max(4 * self.rttvar);
        rto = rto.max(self.cfg.min.as_nanos());
        if g > 0 {
            rto = rto.div_ceil(g) * g;
        }
        self.base_rto = rto.min(self.cfg.max.as_nanos());
        // A valid sample ends the back-off: RFC 6298 §5, the note after (5.7), says the new RTO
        // computed from it may "collapse" the backed-off one (BSD and Linux do so too).
        self.backoff = 0;
    }

    /// Ends the back-off without a sample: the RTO is the last one computed from SRTT and
    /// RTTVAR again (ns-3's choice on every ACK of new data, [`RtoBackoffReset::NewAck`]).
    ///
    /// [`RtoBackoffReset::NewAck`]: crate::tcp::RtoBackoffReset::NewAck
    pub fn end_backoff(&mut self) {
        self.backoff = 0;
    }

    /// The handshake is over and the SYN had to be retransmitted: with no RTT sample yet, the
    /// RTO for data is at least 3 s (RFC 6298 (5.7)), and the SYN's back-off ends.
    pub fn after_syn_timeout(&mut self) {
        self.backoff = 0;
        if self.srtt().is_none() {
            self.base_rto = self
                .base_rto
                .max(SimDuration::from_secs(3).as_nanos())
                .min(self.cfg.max.as_nanos());
        }
    }

    /// The timer expired: double the RTO (5.5).
    pub fn on_expiry(&mut self) {
        self.backoff = self.backoff.saturating_add(1);
    }

    /// The current RTO, back-off included, capped at `rto_max`.
    pub fn rto(&self) -> SimDuration {
        let shifted = if self.backoff >= 63 {
            u64::MAX
        } else {
            self.base_rto.saturating_mul(1u64 << self.backoff)
        };
        SimDuration(shifted.min(self.cfg.max.as_nanos()))
    }

    pub fn srtt(&self) -> Option<SimDuration> {
        (self.srtt != NO_SRTT).then_some(SimDuration(self.srtt))
    }
    pub fn rttvar(&self) -> SimDuration {
        SimDuration(self.rttvar)
    }
    pub fn backoff(&self) -> u32 {
        self.backoff
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> SimDuration {
        SimDuration::from_millis(x)
    }

    #[test]
    fn first_and_second_samples_follow_rfc_6298_arithmetic() {
        // RFC 6298 §2.2 and §2.3 by hand: R = 100 ms then 200 ms, G = 0, no floor.
        let mut e = RtoEstimator::new(RtoConfig {
            min: SimDuration::ZERO,
            ..RtoConfig::default()
        });
        e.on_sample(ms(100));
        assert_eq!(e.srtt(), Some(ms(100)));
        assert_eq!(e.rttvar(), ms(50));
        assert_eq!(e.rto(), ms(300));
        e.on_sample(ms(200));
        assert_eq!(e.rttvar(), SimDuration::from_micros(62_500));
        assert_eq!(e.srtt(), Some(SimDuration::from_micros(112_500)));
        assert_eq!(e.rto(), SimDuration::from_micros(362_500));
    }

    #[test]
    fn the_rfc_floor_and_a_200_ms_floor_are_applied() {
        let mut e = RtoEstimator::new(RtoConfig::default());
        e.on_sample(ms(100));
        assert_eq!(e.rto(), ms(1000));
        let mut e = RtoEstimator::new(RtoConfig {
            min: ms(200),
            ..RtoConfig::default()
        });
        e.on_sample(ms(100));
        e.on_sample(ms(200));
        assert_eq!(e.rto(), SimDuration::from_micros(362_500));
    }

    #[test]
    fn consecutive_expiries_double_the_rto_up_to_the_cap() {
        let mut e = RtoEstimator::new(RtoConfig::default());
        assert_eq!(e.rto(), ms(1000));
        let mut expected = 1000;
        for _ in 0..8 {
            e.on_expiry();
            expected = (expected * 2).min(60_000);
            assert_eq!(e.rto(), ms(expected));
        }
        assert_eq!(e.rto(), ms(60_000));
    }

    #[test]
    fn a_coarse_clock_rounds_the_rto_up_to_whole_ticks() {
        // Paper 000's 50 ms timer granularity: SRTT 12 ms, RTTVAR 6 ms -> 12 + max(50, 24) = 62
        // -> 100 ms.
        let mut e = RtoEstimator::new(RtoConfig {
            min: SimDuration::ZERO,
            granularity: ms(50),
            ..RtoConfig::default()
        });
        e.on_sample(ms(12));
        assert_eq!(e.rto(), ms(100));
    }
}
