// SPDX-License-Identifier: MIT
//! XCP end to end (KHR02 §4's claims): high utilization, a near-empty queue, no drops, fair
//! shares, and quick convergence when a flow joins.
use crate::common::*;

/// Three XCP flows over a 20 Mbit/s, 2 x 20 ms bottleneck with an XCP router port; the third
/// flow starts at `third_start`.
fn xcp_dumbbell(third_start: &str) -> String {
    dumbbell(
        3,
        20,
        "20ms",
        "{ type = \"xcp\", limit = 200 }",
        "40s",
        "variant = \"sack\"\ncc = \"xcp\"",
    )
    .replace(
        "[flows.f3]\ntype = \"tcp\"\n",
        &format!("[flows.f3]\ntype = \"tcp\"\nstart = \"{third_start}\"\n"),
    ) + "[trace]\ninterval = \"500ms\"\n"
}

fn series(out: &ccsim_core::RunOutput, name: &str, metric: &str) -> Vec<(f64, f64)> {
    let s = &out.series;
    let (t, n, m, v) = (
        s.f64("time_s").expect("time"),
        s.str("name").expect("name"),
        s.str("metric").expect("metric"),
        s.f64("value").expect("value"),
    );
    (0..t.len())
        .filter(|&i| n[i] == name && m[i] == metric)
        .map(|i| (t[i], v[i]))
        .collect()
}

/// Goodput of `flow` between `from` and `to` seconds, from its delivered-bytes series.
fn goodput(out: &ccsim_core::RunOutput, flow: &str, from: f64, to: f64) -> f64 {
    let d = series(out, flow, "delivered_bytes");
    let at = |x: f64| {
        d.iter()
            .rev()
            .find(|(t, _)| *t <= x + 1e-9)
            .map_or(0.0, |p| p.1)
    };
    (at(to) - at(from)) * 8.0 / (to - from)
}

#[test]
fn xcp_fills_the_bottleneck_with_a_near_empty_queue_and_no_drops() {
    let out = run_toml(&xcp_dumbbell("0s"), &[], None);
    let tput: Vec<f64> = series(&out, "bottleneck:a_to_b", "throughput_bps")
        .into_iter()
        .filter(|(t, _)| *t > 5.0)
        .map(|(_, v)| v)
        .collect();
    let util = tput.iter().sum::<f64>() / tput.len() as f64 / 20e6;
    assert!(util >= 0.95, "utilization {util}");
    let r = link_row(&out, "bottleneck", "a_to_b");
    assert_eq!(u64s(&out.links, "drops_queue")[r], 0);
    let q = f64s(&out.links, "queue_mean_packets")[r];
    assert!(q < 10.0, "mean queue {q} packets");
}

// How even "even" is here. XCP's fairness controller evens out the flows' windows in bytes;
// a sender moves whole segments, so flows whose windows straddle a segment boundary can keep
// different numbers of segments in flight. Measured over 100 start times of the third flow
// (every 37 ms from 0 s, and from 20 s): most splits are below 1.005, but 14 of 100 (27 of
// 100 when it joins at 20 s) settle at 1.083 to 1.088 for the rest of the run: 26, 26 and 24
// segments per RTT from windows of 26.07, 26.08 and 25.86 segments (38,060, 38,082 and 37,754
// bytes, unchanged for seconds). So the bound is 1.10: it admits that 26 : 24 step of the
// model and fails anything coarser (27 : 24 is 1.125). Jain's index, the check this replaces,
// allowed 1.33 : 1 for three flows at 0.98.

/// Bound on the largest over the smallest of three XCP flows' goodputs; see above.
const XCP_SPLIT: f64 = 1.10;

#[test]
fn xcp_flows_with_equal_rtts_get_equal_shares() {
    // Started together (split 1.002), and with the third flow 137 ms or 3 s late (1.083 both
    // times: the segment step above).
    for third_start in ["0s", "137ms", "3s"] {
        let out = run_toml(&xcp_dumbbell(third_start), &[], None);
        let g: Vec<f64> = ["f1", "f2", "f3"]
            .iter()
            .map(|f| goodput(&out, f, 10.0, 40.0))
            .collect();
        let r = max_over_min(&g);
        assert!(
            r <= XCP_SPLIT,
            "third flow from {third_start}: split {r} of {g:?}"
        );
    }
}

#[test]
fn a_flow_that_joins_late_converges_to_its_share_within_seconds() {
    // Joining at 20 s: split 1.004; 74 ms later: 1.086 (the segment step above).
    for third_start in ["20s", "20.074s"] {
        let out = run_toml(&xcp_dumbbell(third_start), &[], None);
        // Ten seconds after f3 joins, the three shares are even.
        let g: Vec<f64> = ["f1", "f2", "f3"]
            .iter()
            .map(|f| goodput(&out, f, 30.0, 40.0))
            .collect();
        let r = max_over_min(&g);
        assert!(
            r <= XCP_SPLIT,
            "third flow from {third_start}: split {r} of {g:?}"
        );
        let before = goodput(&out, "f3", 10.0, 20.0);
        assert_eq!(before, 0.0);
    }
}
