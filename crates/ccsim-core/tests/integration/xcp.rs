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

#[test]
fn xcp_flows_with_equal_rtts_get_equal_shares() {
    let out = run_toml(&xcp_dumbbell("0s"), &[], None);
    let g: Vec<f64> = ["f1", "f2", "f3"]
        .iter()
        .map(|f| goodput(&out, f, 10.0, 40.0))
        .collect();
    let j = jain(&g);
    assert!(j >= 0.98, "Jain {j} for {g:?}");
}

#[test]
fn a_flow_that_joins_late_converges_to_its_share_within_seconds() {
    let out = run_toml(&xcp_dumbbell("20s"), &[], None);
    // Ten seconds after f3 joins, the three shares are even.
    let g: Vec<f64> = ["f1", "f2", "f3"]
        .iter()
        .map(|f| goodput(&out, f, 30.0, 40.0))
        .collect();
    let j = jain(&g);
    assert!(j >= 0.95, "Jain {j} for {g:?}");
    let before = goodput(&out, "f3", 10.0, 20.0);
    assert_eq!(before, 0.0);
}
