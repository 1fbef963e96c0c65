// SPDX-License-Identifier: MIT
use crate::common::*;

fn path_with_hook(hook: &str) -> String {
    format!(
        r#"
duration = "10s"
[nodes]
h1 = "host"
bs = {{ type = "router", hook = {hook} }}
h2 = "host"
[links.wired]
a = "h1"
b = "bs"
rate = "10Mbps"
delay = "10ms"
[links.wireless]
a = "bs"
b = "h2"
rate = "10Mbps"
delay = "10ms"
[flows.f]
type = "tcp"
src = "h1"
dst = "h2"
variant = "sack"
"#
    )
}

#[test]
fn a_delaying_hook_adds_its_delay_to_every_packet_in_both_directions() {
    let plain = run_toml(
        &path_with_hook("{ type = \"impair\", drop = 0.0, delay = \"0s\" }"),
        &[],
        None,
    );
    let slow = run_toml(
        &path_with_hook("{ type = \"impair\", drop = 0.0, delay = \"15ms\" }"),
        &[],
        None,
    );
    let (a, b) = (
        f64s(&plain.flows, "rtt_min_s")[0],
        f64s(&slow.flows, "rtt_min_s")[0],
    );
    // Data and ACK each pass the hook once: +30 ms of RTT.
    assert!(((b - a) - 0.030).abs() < 1e-6, "min RTT {a} -> {b}");
    assert_eq!(
        slow.summary.packets_created,
        slow.summary.packets_delivered + slow.summary.packets_dropped + slow.summary.packets_alive
    );
}

#[test]
fn packets_a_hook_drops_are_counted_as_hook_drops_on_the_link_they_arrived_on() {
    let out = run_toml(
        &path_with_hook("{ type = \"impair\", drop = 0.05, delay = \"0s\" }"),
        &[],
        None,
    );
    let wired = link_row(&out, "wired", "a_to_b");
    let wireless = link_row(&out, "wireless", "b_to_a");
    let hook_drops = u64s(&out.links, "drops_hook");
    assert!(hook_drops[wired] > 0, "data dropped at the hook");
    assert!(hook_drops[wireless] > 0, "ACKs dropped at the hook");
    assert_eq!(u64s(&out.links, "drops_loss").iter().sum::<u64>(), 0);
    assert!(u64s(&out.flows, "retransmits")[0] > 0);
}

#[test]
fn a_flow_whose_packets_exceed_a_links_mtu_is_rejected_before_the_run() {
    // Bug found in paper 001's MSS sweep: 1500 B of payload + 40 B of headers were all dropped
    // by 1500 B links and the transfers silently never finished.
    let text = path_with_hook("{ type = \"impair\", drop = 0.0, delay = \"0s\" }")
        .replace("variant = \"sack\"", "variant = \"sack\"\nmss = 1500");
    let loaded = ccsim_core::load_scenario(&text, &[], None).expect("parses");
    let err = ccsim_core::run(&loaded.spec).expect_err("rejected");
    assert_eq!(
        err.to_string(),
        "flows.f.mss: packets of 1540 B (mss + header_bytes) exceed the MTU (1500 B) of link \
         wired on the route; lower it or raise links.wired.mtu"
    );
}
