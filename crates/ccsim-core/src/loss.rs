// SPDX-License-Identifier: MIT
//! Per-packet loss models of one link direction: none, uniform, bit errors, Gilbert-Elliott.
//!
//! The channel asks [`LossModel::is_lost`] once per packet put on the wire (when its transmission
//! starts). Each model draws a fixed number of uniforms per call whatever the outcome and whatever
//! the packet size (none: 0, uniform and bit error: 1, Gilbert-Elliott: 2), so a run's random
//! stream stays aligned packet for packet when, say, a parameter or a packet size changes: two runs
//! that differ only in the loss rate see the same uniforms in the same order (common random
//! numbers).

use crate::rng::RngStream;
use crate::scenario::spec::LossSpec;

/// A loss model with its own random stream.
#[derive(Clone, Debug)]
pub struct LossModel {
    kind: Kind,
    rng: RngStream,
}

#[derive(Clone, Debug)]
enum Kind {
    None,
    Uniform {
        rate: f64,
    },
    BitError {
        /// ln(1 − ber), precomputed (−∞ for ber = 1).
        ln_keep_bit: f64,
        /// One-entry cache of the last size's loss probability (most packets on a link
        /// direction have the same size, so the exp is usually skipped).
        cached_size: u32,
        cached_p: f64,
    },
    GilbertElliott {
        p_good_to_bad: f64,
        p_bad_to_good: f64,
        loss_good: f64,
        loss_bad: f64,
        bad: bool,
    },
}

/// Probability that a packet of `size_bytes` has at least one bit error when bits are corrupted
/// independently with probability `ber`: p = 1 − (1 − ber)^(8·size), computed as
/// −expm1(8·size·ln1p(−ber)) so that tiny ber (1e-9) and small packets keep full precision
/// (the direct form would cancel catastrophically in 1 − (1 − ber)^n).
fn bit_error_loss_probability(ln_keep_bit: f64, size_bytes: u32) -> f64 {
    if size_bytes == 0 {
        return 0.0;
    }
    -libm::expm1(8.0 * size_bytes as f64 * ln_keep_bit)
}

impl LossModel {
    pub fn new(spec: &LossSpec, rng: RngStream) -> LossModel {
        let kind = match *spec {
            LossSpec::None => Kind::None,
            LossSpec::Uniform { rate } => Kind::Uniform { rate },
            LossSpec::BitError { ber } => {
                let ln_keep_bit = libm::log1p(-ber);
                Kind::BitError {
                    ln_keep_bit,
                    cached_size: 0,
                    cached_p: 0.0,
                }
            }
            LossSpec::GilbertElliott {
                p_good_to_bad,
                p_bad_to_good,
                loss_good,
                loss_bad,
            } => Kind::GilbertElliott {
                p_good_to_bad,
                p_bad_to_good,
                loss_good,
                loss_bad,
                // Start in the good state.
                bad: false,
            },
        };
        LossModel { kind, rng }
    }

    /// Decide the fate of one packet of `size_bytes` (IP bytes); true = lost. Draws a fixed
    /// number of uniforms per call for a given model (`None` draws nothing).
    ///
    /// The comparisons are `u < p` with u uniform in [0, 1) drawn unconditionally (not
    /// `RngStream::bernoulli`, which skips the draw for p ≤ 0 or p ≥ 1).
    #[inline]
    pub fn is_lost(&mut self, size_bytes: u32) -> bool {
        match &mut self.kind {
            Kind::None => false,
            // Independent (Bernoulli) losses.
            Kind::Uniform { rate } => self.rng.uniform() < *rate,
            Kind::BitError {
                ln_keep_bit,
                cached_size,
                cached_p,
            } => {
                if *cached_size != size_bytes {
                    *cached_size = size_bytes;
                    *cached_p = bit_error_loss_probability(*ln_keep_bit, size_bytes);
                }
                self.rng.uniform() < *cached_p
            }
            // Gilbert (1960) / Elliott (1963) two-state Markov channel, stepped once per packet:
            // first the state transition, then a loss draw with the new state's probability.
            // Stationary distribution: π_bad = p_gb / (p_gb + p_bg), π_good = 1 − π_bad, so the
            // long-run loss rate is π_good·loss_good + π_bad·loss_bad. The bad state's sojourn is
            // geometric with mean 1/p_bg packets, which is the mean loss-burst length when
            // loss_bad = 1 and loss_good = 0. (If p_gb + p_bg = 0 the chain stays good.)
            Kind::GilbertElliott {
                p_good_to_bad,
                p_bad_to_good,
                loss_good,
                loss_bad,
                bad,
            } => {
                let u_transition = self.rng.uniform();
                let u_loss = self.rng.uniform();
                if *bad {
                    if u_transition < *p_bad_to_good {
                        *bad = false;
                    }
                } else if u_transition < *p_good_to_bad {
                    *bad = true;
                }
                let p = if *bad { *loss_bad } else { *loss_good };
                u_loss < p
            }
        }
    }

    /// True for `LossSpec::None`: the channel may skip the call entirely.
    pub fn is_none(&self) -> bool {
        matches!(self.kind, Kind::None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(spec: LossSpec) -> LossModel {
        LossModel::new(&spec, RngStream::derive(11, "test/loss"))
    }

    fn ge(p_gb: f64, p_bg: f64, loss_good: f64, loss_bad: f64) -> LossModel {
        model(LossSpec::GilbertElliott {
            p_good_to_bad: p_gb,
            p_bad_to_good: p_bg,
            loss_good,
            loss_bad,
        })
    }

    #[test]
    fn no_loss_model_never_loses_and_draws_nothing() {
        let mut m = model(LossSpec::None);
        assert!(m.is_none());
        assert!((0..1000).all(|_| !m.is_lost(1500)));
        let mut fresh = RngStream::derive(11, "test/loss");
        assert_eq!(m.rng.next_u64(), fresh.next_u64());
    }

    #[test]
    fn uniform_loss_rate_is_within_three_standard_deviations_over_100k_packets() {
        let mut m = model(LossSpec::Uniform { rate: 0.01 });
        assert!(!m.is_none());
        let n = 100_000;
        let lost = (0..n).filter(|_| m.is_lost(1500)).count();
        // σ = sqrt(0.01 · 0.99 / 1e5) ≈ 3.1e-4.
        let rate = lost as f64 / n as f64;
        assert!((rate - 0.01).abs() < 0.001, "rate {rate}");
    }

    #[test]
    fn uniform_rates_zero_and_one_lose_nothing_and_everything() {
        let mut zero = model(LossSpec::Uniform { rate: 0.0 });
        let mut one = model(LossSpec::Uniform { rate: 1.0 });
        assert!((0..10_000).all(|_| !zero.is_lost(100)));
        assert!((0..10_000).all(|_| one.is_lost(100)));
    }

    #[test]
    fn bit_error_probability_of_a_1500_byte_packet_at_ber_1e_minus_5_is_0_1131() {
        // 1 − (1 − 1e-5)^12000 = 1 − e^(−0.12000060) = 0.1130801…
        let p = bit_error_loss_probability(libm::log1p(-1e-5), 1500);
        assert!((p - 0.113_080_1).abs() < 1e-7, "p {p}");
        let mut m = model(LossSpec::BitError { ber: 1e-5 });
        let n = 100_000;
        let rate = (0..n).filter(|_| m.is_lost(1500)).count() as f64 / n as f64;
        // σ ≈ 1e-3.
        assert!((rate - 0.1131).abs() < 0.004, "rate {rate}");
    }

    #[test]
    fn bit_error_probability_keeps_precision_at_tiny_ber_and_scales_with_size() {
        // For n·ber ≪ 1, p ≈ n·ber − (n·ber)²/2: 320 bits at 1e-12 → 3.2e-10 to 1e-19.
        let p = bit_error_loss_probability(libm::log1p(-1e-12), 40);
        assert!((p - 3.2e-10).abs() < 1e-18, "p {p}");
        let small = bit_error_loss_probability(libm::log1p(-1e-6), 40);
        let big = bit_error_loss_probability(libm::log1p(-1e-6), 1500);
        assert!(big > 30.0 * small && big < 1500.0 / 40.0 * small);
        assert_eq!(bit_error_loss_probability(libm::log1p(-1e-6), 0), 0.0);
        assert_eq!(bit_error_loss_probability(libm::log1p(-1.0), 1), 1.0);
        assert_eq!(bit_error_loss_probability(libm::log1p(0.0), 1500), 0.0);
    }

    #[test]
    fn every_model_draws_the_same_number_of_uniforms_per_packet_whatever_the_outcome() {
        let cases = [
            (LossSpec::Uniform { rate: 0.0 }, 1),
            (LossSpec::Uniform { rate: 0.5 }, 1),
            (LossSpec::Uniform { rate: 1.0 }, 1),
            (LossSpec::BitError { ber: 1e-4 }, 1),
            (LossSpec::BitError { ber: 1.0 }, 1),
            (
                LossSpec::GilbertElliott {
                    p_good_to_bad: 0.3,
                    p_bad_to_good: 0.3,
                    loss_good: 0.0,
                    loss_bad: 1.0,
                },
                2,
            ),
        ];
        for (spec, per_call) in cases {
            let mut m = model(spec.clone());
            let sizes = [40u32, 1500, 0, 576, 9000];
            for i in 0..1000 {
                m.is_lost(sizes[i % sizes.len()]);
            }
            let mut fresh = RngStream::derive(11, "test/loss");
            for _ in 0..1000 * per_call {
                fresh.next_u64();
            }
            assert_eq!(m.rng.next_u64(), fresh.next_u64(), "{spec:?}");
        }
    }

    #[test]
    fn gilbert_elliott_long_run_loss_matches_the_stationary_formula() {
        // π_bad = 0.01/(0.01 + 0.1) = 1/11; loss = (10/11)·0.001 + (1/11)·0.5 = 0.046363…
        let (p_gb, p_bg, lg, lb) = (0.01, 0.1, 0.001, 0.5);
        let mut m = ge(p_gb, p_bg, lg, lb);
        let pi_bad = p_gb / (p_gb + p_bg);
        let expected = (1.0 - pi_bad) * lg + pi_bad * lb;
        let n = 1_000_000;
        let rate = (0..n).filter(|_| m.is_lost(1500)).count() as f64 / n as f64;
        assert!(
            (rate - expected).abs() < 0.05 * expected,
            "rate {rate} expected {expected}"
        );
    }

    #[test]
    fn gilbert_elliott_losses_come_in_bursts_of_mean_length_one_over_p_bad_to_good() {
        // loss_bad = 1, loss_good = 0: losses are exactly the bad-state packets; bursts are
        // geometric with mean 1/p_bg = 10, the loss rate is π_bad = 0.02/0.12 = 1/6.
        let (p_gb, p_bg) = (0.02, 0.1);
        let mut m = ge(p_gb, p_bg, 0.0, 1.0);
        let n = 1_000_000;
        let (mut lost, mut bursts, mut prev) = (0u64, 0u64, false);
        for _ in 0..n {
            let l = m.is_lost(1500);
            if l {
                lost += 1;
                if !prev {
                    bursts += 1;
                }
            }
            prev = l;
        }
        let mean_burst = lost as f64 / bursts as f64;
        assert!((mean_burst - 10.0).abs() < 0.4, "mean burst {mean_burst}");
        let rate = lost as f64 / n as f64;
        assert!((rate - 1.0 / 6.0).abs() < 0.01, "rate {rate}");
        // Independent losses at the same rate would have bursts of mean 1/(1 − 1/6) = 1.2.
    }

    #[test]
    fn gilbert_elliott_starts_in_the_good_state() {
        // Good state loses nothing, bad loses everything, and the chain never leaves its state.
        let mut m = ge(0.0, 0.0, 0.0, 1.0);
        assert!((0..1000).all(|_| !m.is_lost(1500)));
        // Certain transition on the first packet: the first packet is already in the bad state.
        let mut m = ge(1.0, 0.0, 0.0, 1.0);
        assert!(m.is_lost(1500));
    }
}
