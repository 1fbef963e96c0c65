// SPDX-License-Identifier: MIT
//! ATM links under the keys every link has: `[[events]]` (down and up), the MTU, and the
//! link's own counters, in whole runs of paper 000's network.

use super::tests::{direction_u64, port_u64, run, PAPER};
use crate::results::RunOutput;

fn link_u64(out: &RunOutput, link: &str, dir: &str, col: &str) -> u64 {
    direction_u64(&out.links, link, dir, col)
}

/// f1's delivered bytes at each 100 ms sample.
fn delivered(out: &RunOutput) -> Vec<(f64, f64)> {
    let s = &out.series;
    let (t, name, metric, v) = (
        s.f64("time_s").unwrap(),
        s.str("name").unwrap(),
        s.str("metric").unwrap(),
        s.f64("value").unwrap(),
    );
    (0..t.len())
        .filter(|&i| name[i] == "f1" && metric[i] == "delivered_bytes")
        .map(|i| (t[i], v[i]))
        .collect()
}

fn with_events(events: &str) -> String {
    format!("{PAPER}\n{events}")
}

const L2_DOWN_1S_UP_2S: &str = r#"
[[events]]
at = "1s"
link = "l2"
state = "down"

[[events]]
at = "2s"
link = "l2"
state = "up"
"#;

#[test]
fn an_atm_link_going_down_loses_its_cells_and_traffic_resumes_when_it_comes_back() {
    let set = ["duration=\"4s\"", "trace.interval=\"100ms\""];
    let out = run(&with_events(L2_DOWN_1S_UP_2S), &set);
    let lost = port_u64(&out, "l2", "a_to_b", "link_down_cells_lost");
    assert!(lost > 0, "no cell lost to the link going down");
    // Nothing crosses l2 while it is down: f1 delivers nothing from 1.1 s to 2 s ...
    let d = delivered(&out);
    let at = |x: f64| d.iter().find(|(t, _)| (t - x).abs() < 1e-6).unwrap().1;
    assert_eq!(at(1.1), at(2.0), "{d:?}");
    assert!(at(1.0) > 0.0);
    // ... and delivers again after it is back up (TCP's timer fires and the VCs' sources,
    // their ACR cut by rule 6 without BRMs, get ER again).
    assert!(at(4.0) > at(2.0), "{d:?}");
    // Every packet is still accounted (frames of lost cells are dropped packets).
    let s = &out.summary;
    assert_eq!(
        s.packets_created,
        s.packets_delivered + s.packets_dropped + s.packets_alive
    );
    // The same run without the events loses no cell that way.
    let calm = run(PAPER, &set);
    assert_eq!(port_u64(&calm, "l2", "a_to_b", "link_down_cells_lost"), 0);
}

#[test]
fn a_host_whose_atm_link_is_down_drops_the_packets_it_offers_as_link_down() {
    let events = r#"
[[events]]
at = "1s"
link = "l1_1"
state = "down"
"#;
    let out = run(&with_events(events), &["duration=\"2s\""]);
    assert!(link_u64(&out, "l1_1", "a_to_b", "drops_link_down") > 0);
    assert_eq!(link_u64(&out, "l1_2", "a_to_b", "drops_link_down"), 0);
}

#[test]
fn an_atm_links_mtu_holds_a_tcp_flows_segments_as_any_links_does() {
    // The build's route check covers ATM links: 9,180-byte segments do not fit l1_1.
    let overrides = vec!["links.l1_1.mtu=1500".to_string()];
    let loaded = crate::scenario::load_scenario(PAPER, &overrides, None).unwrap();
    let err = crate::sim::Simulator::build(&loaded.spec)
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("flows.f1.mss: packets of 9180 B (mss + header_bytes) exceed the MTU (1500 B) of link l1_1"),
        "{err}"
    );
}
