// SPDX-License-Identifier: MIT
//! The model-based property test every controller shares (s2n's congestion-controller fuzz
//! target idea): random sequences of operations, applied through the one test driver
//! (`testkit::Driver`, the endpoint's side of the trait) to every algorithm, under every growth
//! rule, with invariants checked after each operation.
//!
//! Operations: ACKs of random size (a byte up to four segments) with or without an RTT sample
//! (Karn's rule), congestion signals (duplicate ACKs, timeout, ECN) with a random FlightSize,
//! the end of recovery, and time passing (up to a minute at once).
//!
//! Invariants:
//! - nothing panics;
//! - `on_ack` never takes cwnd below min(cwnd before, 2 segments): the endpoint's one-segment
//!   floor is a safety net, not something an algorithm may rely on;
//! - cwnd stays within 2^40 bytes (no overflow, no runaway from a float going infinite);
//! - if `on_ack` moves ssthresh (Vegas and FAST leave slow start that way), it only lowers it,
//!   to no less than 2 segments;
//! - a returned ssthresh is at least 2 segments (RFC 5681 eq. (4)) and no more than
//!   max(cwnd, FlightSize, 2 segments): a loss never grows the window.

use proptest::prelude::*;

use super::testkit::Driver;
use super::{AnyCc, CongestionControl, CongestionKind};
use super::{BicConfig, CubicConfig, FastConfig, HighSpeedConfig, ScalableConfig, VegasConfig};
use super::{CcAlgorithm, Growth};
use crate::time::SimDuration;

const CAP: u64 = 1 << 40;

#[derive(Clone, Debug)]
enum Op {
    Ack {
        bytes: u64,
        rtt_us: Option<u64>,
    },
    Congestion {
        kind: CongestionKind,
        flight_permille: u64,
    },
    RecoveryEnd,
    Pass {
        ms: u64,
    },
}

fn op() -> impl Strategy<Value = Op> {
    let kind = prop_oneof![
        Just(CongestionKind::DupAck),
        Just(CongestionKind::Rto),
        Just(CongestionKind::Ecn)
    ];
    prop_oneof![
        12 => (1u64..=4_000, proptest::option::of(0u64..=2_000_000))
            .prop_map(|(permille, rtt_us)| Op::Ack { bytes: permille, rtt_us }),
        1 => (kind, 0u64..=2_000)
            .prop_map(|(kind, flight_permille)| Op::Congestion { kind, flight_permille }),
        1 => Just(Op::RecoveryEnd),
        2 => (0u64..=60_000).prop_map(|ms| Op::Pass { ms }),
    ]
}

/// Every algorithm: the defaults and the non-default constant sets the code offers.
fn algorithms() -> Vec<CcAlgorithm> {
    vec![
        CcAlgorithm::Reno,
        CcAlgorithm::HighSpeed(HighSpeedConfig::default()),
        CcAlgorithm::HighSpeed(HighSpeedConfig {
            low_p: 1.5 / (38.0 * 38.0),
            ..HighSpeedConfig::default()
        }),
        CcAlgorithm::Scalable(ScalableConfig::default()),
        CcAlgorithm::Scalable(ScalableConfig {
            low_window: 0.0,
            ..ScalableConfig::default()
        }),
        CcAlgorithm::Scalable(ScalableConfig {
            low_window: 50.0,
            legacy_decrease: false,
            ..ScalableConfig::default()
        }),
        CcAlgorithm::Bic(BicConfig::default()),
        CcAlgorithm::Bic(BicConfig::linux()),
        CcAlgorithm::Cubic(CubicConfig::default()),
        CcAlgorithm::Cubic(CubicConfig {
            fast_convergence: false,
            reno_friendly: false,
            ..CubicConfig::default()
        }),
        CcAlgorithm::Cubic(CubicConfig {
            model: crate::cc::CubicModel::Ns3,
            ..CubicConfig::default()
        }),
        CcAlgorithm::Vegas(VegasConfig::default()),
        CcAlgorithm::Vegas(VegasConfig::linux()),
        CcAlgorithm::Xcp(crate::cc::XcpSenderConfig::default()),
        CcAlgorithm::Fast(FastConfig::default()),
        CcAlgorithm::Fast(FastConfig {
            alpha: 2.0,
            gamma: 1.0,
            update_interval: 2,
            ..FastConfig::default()
        }),
        CcAlgorithm::Htcp(crate::cc::HtcpConfig::default()),
        CcAlgorithm::Htcp(crate::cc::HtcpConfig {
            model: crate::cc::HtcpModel::Ns3,
            ..crate::cc::HtcpConfig::default()
        }),
        CcAlgorithm::Htcp(crate::cc::HtcpConfig {
            rtt_scaling: true,
            throughput_change: 0.0,
            ..crate::cc::HtcpConfig::default()
        }),
    ]
}

const GROWTHS: [Growth; 3] = [
    Growth::PerAck,
    Growth::Rfc5681,
    Growth::ByteCounting { limit_segments: 2 },
];

/// Applies `ops` to one controller through the driver, checking the invariants; returns a
/// description of the first violation.
fn check<C: CongestionControl>(
    cc: C,
    mss: u64,
    cwnd_segments: u64,
    ssthresh: Option<u64>,
    ops: &[Op],
) -> Result<(), String> {
    let name = cc.name();
    let ssthresh = ssthresh.map_or(u64::MAX, |s| s.max(2) * mss);
    let mut d = Driver::new(
        cc,
        mss,
        cwnd_segments,
        ssthresh,
        SimDuration::from_millis(100),
    );
    for (i, op) in ops.iter().enumerate() {
        let before = d.w;
        let fail = |what: String| Err(format!("{name}, op {i} {op:?}: {what}"));
        match *op {
            Op::Ack { bytes, rtt_us } => {
                // `bytes` is in thousandths of a segment, so every MSS gets 0.001 to 4 segments.
                let bytes = (bytes * mss / 1000).max(1);
                let sample = rtt_us.map(SimDuration::from_micros);
                if let Some(raw) = d.ack_raw(bytes, sample) {
                    if raw.cwnd < before.cwnd.min(2 * mss) {
                        return fail(format!("on_ack took cwnd {} -> {}", before.cwnd, raw.cwnd));
                    }
                    if raw.ssthresh != before.ssthresh
                        && (raw.ssthresh > before.ssthresh || raw.ssthresh < 2 * mss)
                    {
                        return fail(format!(
                            "on_ack moved ssthresh {} -> {}",
                            before.ssthresh, raw.ssthresh
                        ));
                    }
                }
            }
            Op::Congestion {
                kind,
                flight_permille,
            } => {
                let flight = before.cwnd / 1000 * flight_permille;
                if let Some(s) = d.congestion(kind, flight) {
                    let most = before.cwnd.max(flight).max(2 * mss);
                    if s < 2 * mss || s > most {
                        return fail(format!(
                            "ssthresh {s} outside [{}, {most}] (cwnd {}, flight {flight})",
                            2 * mss,
                            before.cwnd
                        ));
                    }
                }
            }
            Op::RecoveryEnd => d.recovery_end(),
            Op::Pass { ms } => d.now += SimDuration::from_millis(ms),
        }
        if d.w.cwnd < mss || d.w.cwnd > CAP {
            return Err(format!("{name}, op {i} {op:?}: cwnd {}", d.w.cwnd));
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn every_controller_keeps_its_window_sane_under_any_sequence_of_events(
        mss in prop::sample::select(vec![1u64, 536, 1000, 1460, 9000]),
        cwnd_segments in 1u64..=200_000,
        ssthresh in proptest::option::of(0u64..=200_000),
        ops in prop::collection::vec(op(), 1..300),
    ) {
        for alg in algorithms() {
            for growth in GROWTHS {
                let cc = AnyCc::new(&alg, growth);
                if let Err(e) = check(cc, mss, cwnd_segments, ssthresh, &ops) {
                    prop_assert!(false, "{:?} / {:?}: {}", alg, growth, e);
                }
            }
        }
    }
}

#[test]
fn the_invariants_catch_a_controller_that_grows_on_a_loss_or_collapses_the_window() {
    // The property must be able to fail: these two broken controllers are reported.
    use super::{AckEvent, CongestionEvent, Window};
    use crate::time::SimTime;
    struct GrowsOnLoss;
    impl CongestionControl for GrowsOnLoss {
        fn name(&self) -> &'static str {
            "grows_on_loss"
        }
        fn on_ack(&mut self, _: SimTime, _: &AckEvent, _: &mut Window) {}
        fn on_congestion(&mut self, _: SimTime, ev: &CongestionEvent) -> u64 {
            2 * ev.window.cwnd
        }
    }
    struct Collapses;
    impl CongestionControl for Collapses {
        fn name(&self) -> &'static str {
            "collapses"
        }
        fn on_ack(&mut self, _: SimTime, _: &AckEvent, w: &mut Window) {
            w.cwnd = 0;
        }
        fn on_congestion(&mut self, _: SimTime, ev: &CongestionEvent) -> u64 {
            2 * ev.mss
        }
    }
    let loss = [Op::Congestion {
        kind: CongestionKind::DupAck,
        flight_permille: 1000,
    }];
    let ack = [Op::Ack {
        bytes: 1000,
        rtt_us: None,
    }];
    assert!(check(GrowsOnLoss, 1000, 10, None, &loss).is_err());
    assert!(check(Collapses, 1000, 10, None, &ack).is_err());
    for alg in algorithms() {
        let cc = AnyCc::new(&alg, Growth::Rfc5681);
        assert_eq!(check(cc, 1000, 10, None, &loss), Ok(()));
    }
}
