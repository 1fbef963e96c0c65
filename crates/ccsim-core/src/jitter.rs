// SPDX-License-Identifier: MIT
//! Start jitter (`[jitter]`, `start_jitter`): a seed-driven offset added to each flow's start and
//! to each ATM CBR source's first on period, so that a scenario with no random component still
//! gives independent replicates, one per seed.
//!
//! A testbed never starts two sources at exactly the times a script says, and a deterministic
//! simulation that does can sit on a knife edge (paper 004's Fig. 12 at 1:5: moving the cross
//! traffic's start by under 2 ms swings LS mode's goodput by ±15 %). With a window W > 0 each
//! source starts at `start + U`, U uniform in [0, W) in whole nanoseconds:
//!
//! ```text
//!   identity                             shifts
//!   "jitter/flow/<flow>"                 the flow's start: a TCP or SCTP sender's first packet,
//!                                        a CBR or on-off source's first datagram (so an on-off
//!                                        source's whole on/off pattern), a ping's first request,
//!                                        a short_tcp generator's arrival process
//!   "jitter/atm_cbr/<group>/<index>"     CBR cell source <index> of [atm.cbr.<group>]: its first
//!                                        on period, hence its on/off phase
//! ```
//!
//! Each offset is the first draw of a stream of its own (`RngStream::derive`), used for nothing
//! else: the offsets of the other sources, a link's loss draws, a generator's gaps and sizes and
//! an on-off source's periods are the same with the jitter on or off, and adding a flow changes
//! no other offset. A window of 0 draws nothing, so a scenario without `[jitter]` runs bit for
//! bit as it did before jitter existed.

use crate::rng::RngStream;
use crate::time::SimDuration;

/// The start offset of flow `flow` in a run with seed `seed`: uniform in [0, `window`), zero
/// without a draw when `window` is zero.
pub fn flow_offset(seed: u64, flow: &str, window: SimDuration) -> SimDuration {
    offset(seed, window, || format!("jitter/flow/{flow}"))
}

/// The start offset of source `index` (0-based, as in its name `<group>.<index>`) of the ATM CBR
/// group `group`: uniform in [0, `window`), zero without a draw when `window` is zero.
pub fn atm_cbr_offset(seed: u64, group: &str, index: u32, window: SimDuration) -> SimDuration {
    offset(seed, window, || format!("jitter/atm_cbr/{group}/{index}"))
}

/// The identity is formatted only when there is something to draw: a run of 100,000 flows
/// without jitter builds no string for it.
fn offset(seed: u64, window: SimDuration, identity: impl FnOnce() -> String) -> SimDuration {
    if window == SimDuration::ZERO {
        return SimDuration::ZERO;
    }
    let mut rng = RngStream::derive(seed, &identity());
    SimDuration::from_nanos(rng.below(window.as_nanos()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_zero_window_gives_a_zero_offset() {
        assert_eq!(flow_offset(7, "f1", SimDuration::ZERO), SimDuration::ZERO);
        assert_eq!(
            atm_cbr_offset(7, "bg", 3, SimDuration::ZERO),
            SimDuration::ZERO
        );
    }

    #[test]
    fn offsets_stay_within_the_window_down_to_one_nanosecond() {
        for w in [1, 2, 999, 2_000_000] {
            let window = SimDuration::from_nanos(w);
            for seed in 0..200 {
                assert!(flow_offset(seed, "f1", window) < window);
                assert!(atm_cbr_offset(seed, "bg", seed as u32, window) < window);
            }
        }
    }

    #[test]
    fn an_offset_is_the_first_draw_of_the_stream_named_after_its_source() {
        let window = SimDuration::from_millis(2);
        let mut flow = RngStream::derive(5, "jitter/flow/cross");
        assert_eq!(
            flow_offset(5, "cross", window).as_nanos(),
            flow.below(2_000_000)
        );
        let mut cbr = RngStream::derive(5, "jitter/atm_cbr/bg/4");
        assert_eq!(
            atm_cbr_offset(5, "bg", 4, window).as_nanos(),
            cbr.below(2_000_000)
        );
    }

    #[test]
    fn the_offsets_docs_scenario_md_quotes_are_the_ones_drawn() {
        // docs/scenario.md, "[jitter]": flows f1 and f2, a 2 ms window, seeds 1 and 2.
        let w = SimDuration::from_millis(2);
        let ns = |seed, flow| flow_offset(seed, flow, w).as_nanos();
        assert_eq!((ns(1, "f1"), ns(1, "f2")), (1_998_932, 808_458));
        assert_eq!((ns(2, "f1"), ns(2, "f2")), (1_183_747, 1_678_157));
        let doc = include_str!("../../../docs/scenario.md");
        assert!(doc.contains("seed 1 starts them at 1.998932 ms and 0.808458 ms, seed 2 at\n1.183747 ms and 1.678157 ms"));
    }

    #[test]
    fn seeds_spread_the_offsets_over_the_whole_window() {
        // 1,000 seeds over a 10 ms window: every millisecond gets some, none gets most.
        let window = SimDuration::from_millis(10);
        let mut per_ms = [0u32; 10];
        for seed in 0..1_000 {
            per_ms[(flow_offset(seed, "f1", window).as_nanos() / 1_000_000) as usize] += 1;
        }
        assert!(
            per_ms.iter().all(|&n| (50..=150).contains(&n)),
            "{per_ms:?}"
        );
    }
}
