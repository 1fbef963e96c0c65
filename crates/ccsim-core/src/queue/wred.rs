// SPDX-License-Identifier: MIT
//! Weighted RED (Cisco `random-detect dscp-based`): one RED average per queue, and a drop
//! profile (min_th, max_th, max_p = 1/mark-probability-denominator) per DSCP, each with its own
//! `count`. Higher AF drop precedence gets lower thresholds, so under congestion AFx3 goes
//! first, then AFx2, then AFx1 (RFC 2597 §2). Above a profile's max_th every packet of that
//! profile is dropped (Cisco WRED has no gentle region).
//!
//! ```text
//!   arrival (dscp d) ──> average of the whole class queue ──> profile[d] ──> Verdict (red.rs)
//! ```
//!
//! Defaults (`docs/diffserv.md`): exponential weighting constant 9 (w_q = 2⁻⁹) and denominator
//! 10 (max_p = 0.1), as IOS.

use super::red::{RedAverage, RedProfile, Verdict};
use crate::rng::RngStream;
use crate::time::SimTime;

/// One WRED profile as configured: queue thresholds in packets (or bytes with a byte limit).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WredProfileSpec {
    pub min_th: f64,
    pub max_th: f64,
    pub max_p: f64,
}

#[derive(Clone, Debug)]
pub(crate) struct Wred {
    pub(crate) average: RedAverage,
    /// Index into `profiles` of each DSCP.
    by_dscp: [u8; 64],
    profiles: Vec<RedProfile>,
    pub(crate) ecn: bool,
    pub(crate) rng: RngStream,
}

impl Wred {
    /// `table[d]` is the profile of DSCP d; equal profiles share one `count`.
    pub(crate) fn new(
        average: RedAverage,
        table: &[WredProfileSpec; 64],
        ecn: bool,
        rng: RngStream,
    ) -> Wred {
        let mut distinct: Vec<WredProfileSpec> = Vec::new();
        let mut by_dscp = [0u8; 64];
        for (d, p) in table.iter().enumerate() {
            let k = match distinct.iter().position(|q| q == p) {
                Some(k) => k,
                None => {
                    distinct.push(*p);
                    distinct.len() - 1
                }
            };
            by_dscp[d] = k as u8;
        }
        Wred {
            average,
            by_dscp,
            profiles: distinct
                .iter()
                .map(|p| RedProfile::new(p.min_th, p.max_th, p.max_p, false))
                .collect(),
            ecn,
            rng,
        }
    }

    /// The average and the verdict for a packet of code point `dscp` arriving to a queue of `q`.
    #[inline]
    pub(crate) fn on_arrival(&mut self, now: SimTime, q: f64, dscp: u8) -> Verdict {
        self.average.update(now, q);
        let k = self.by_dscp[(dscp & 63) as usize] as usize;
        self.profiles[k].early_detection(self.average.avg, &mut self.rng)
    }

    /// The hard limit dropped a packet of `dscp`: its profile's count restarts.
    #[inline]
    pub(crate) fn on_tail_drop(&mut self, dscp: u8) {
        let k = self.by_dscp[(dscp & 63) as usize] as usize;
        self.profiles[k].count = 0;
    }

    /// The profile of `dscp`, for tests.
    #[cfg(test)]
    pub(crate) fn profile(&self, dscp: u8) -> &RedProfile {
        &self.profiles[self.by_dscp[(dscp & 63) as usize] as usize]
    }
}
