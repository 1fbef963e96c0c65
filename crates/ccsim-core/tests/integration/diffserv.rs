// SPDX-License-Identifier: MIT
//! DiffServ end to end: an edge policer marks one host's traffic EF, the core link's CBWFQ
//! gives EF a low-latency queue; the LLQ's long-run rate, per-class conservation and the ping
//! probe are checked on whole runs.
use crate::common::*;
use ccsim_core::RunOutput;

/// h1 (EF after the edge) and h2 (best effort) into r1, a 10 Mbit/s core link r1 → r2, d1, d2.
fn edge_and_core(duration: &str, ef_rate: &str, be_rate: &str, llq: &str) -> String {
    format!(
        r#"
seed = 3
duration = "{duration}"
[nodes]
h1 = "host"
h2 = "host"
d1 = "host"
d2 = "host"
r2 = "router"
[nodes.r1]
type = "router"
hook = {{ type = "policer", rules = [{{ match = {{ src = "h1" }}, set_dscp = 46 }}] }}
[links.core]
a = "r1"
b = "r2"
rate = "10Mbps"
delay = "10ms"
queue = {{ type = "cbwfq", classes = [
  {{ name = "premium", match = {{ dscp = 46 }}, priority = "{llq}" }},
  {{ name = "default", bandwidth_percent = 50, drop = {{ type = "wred" }} }},
] }}
[links.a1]
a = "h1"
b = "r1"
rate = "100Mbps"
delay = "1ms"
[links.a2]
a = "h2"
b = "r1"
rate = "100Mbps"
delay = "1ms"
[links.b1]
a = "r2"
b = "d1"
rate = "100Mbps"
delay = "1ms"
[links.b2]
a = "r2"
b = "d2"
rate = "100Mbps"
delay = "1ms"
[flows.ef]
type = "cbr"
src = "h1"
dst = "d1"
rate = "{ef_rate}"
packet_size = 500
[flows.be]
type = "cbr"
src = "h2"
dst = "d2"
rate = "{be_rate}"
[flows.probe]
type = "ping"
src = "h1"
dst = "d1"
interval = "100ms"
"#
    )
}

fn class_row(out: &RunOutput, class: &str) -> usize {
    let t = &out.classes;
    let names = t.str("class").unwrap();
    let dirs = t.str("direction").unwrap();
    (0..t.rows())
        .find(|&i| names[i] == class && dirs[i] == "a_to_b")
        .unwrap_or_else(|| panic!("no class {class}"))
}

#[test]
fn the_llq_class_gets_its_configured_rate_within_two_percent_over_a_long_congested_run() {
    let out = run_toml(
        &edge_and_core("60s", "8Mbps", "20Mbps", "5000kbps"),
        &[],
        None,
    );
    let i = class_row(&out, "premium");
    let rate = out.classes.f64("sent_bps").unwrap()[i];
    assert!((rate / 5e6 - 1.0).abs() < 0.02, "premium sent {rate} bit/s");
    assert!(out.classes.u64("drops_police").unwrap()[i] > 0);
    // Best effort takes the rest of the link.
    let j = class_row(&out, "default");
    let be = out.classes.f64("sent_bps").unwrap()[j];
    assert!((be + rate) / 10e6 > 0.99, "link not full: {be} + {rate}");
}

#[test]
fn without_congestion_the_llq_class_may_exceed_its_rate() {
    let out = run_toml(
        &edge_and_core("20s", "8Mbps", "1Mbps", "5000kbps"),
        &[],
        None,
    );
    let i = class_row(&out, "premium");
    let rate = out.classes.f64("sent_bps").unwrap()[i];
    assert!(rate > 7.9e6, "premium sent {rate} bit/s");
}

#[test]
fn packets_are_conserved_class_by_class_and_the_ping_probe_sees_the_priority_path() {
    let out = run_toml(
        &edge_and_core("20s", "4Mbps", "20Mbps", "5000kbps"),
        &[],
        None,
    );
    let t = &out.classes;
    let col = |n: &str| t.u64(n).unwrap();
    for i in 0..t.rows() {
        assert_eq!(
            col("offered_packets")[i],
            col("accepted_packets")[i] + col("drops")[i]
        );
        assert_eq!(
            col("accepted_packets")[i],
            col("sent_packets")[i] + col("queued_packets")[i]
        );
        assert_eq!(
            col("drops")[i],
            col("drops_tail")[i] + col("drops_early")[i] + col("drops_police")[i]
        );
    }
    // The core link's a_to_b queue drops only what the classes report.
    let links = &out.links;
    let k = (0..links.rows())
        .find(|&k| {
            links.str("link").unwrap()[k] == "core"
                && links.str("direction").unwrap()[k] == "a_to_b"
        })
        .unwrap();
    let class_drops: u64 = (0..t.rows())
        .filter(|&i| t.str("direction").unwrap()[i] == "a_to_b")
        .map(|i| col("drops")[i])
        .sum();
    assert_eq!(links.u64("drops_queue").unwrap()[k], class_drops);
    assert!(
        col("drops_early")[class_row(&out, "default")] > 0,
        "WRED never dropped"
    );
    // The probe's requests ride EF (marked at r1), so its RTT stays near the 26 ms of
    // propagation while best effort queues behind the WRED class.
    let p = &out.pings;
    let rtts = p.f64("rtt_s").unwrap();
    let counted = p.u64("counted").unwrap();
    assert_eq!(p.rows(), 201, "requests at 0, 0.1, ..., 20 s");
    assert_eq!(
        counted.iter().sum::<u64>(),
        200,
        "the last one may still be on its way"
    );
    let answered: Vec<f64> = rtts.iter().copied().filter(|r| !r.is_nan()).collect();
    assert_eq!(answered.len(), 200, "EF pings are not lost");
    let mean = answered.iter().sum::<f64>() / answered.len() as f64;
    assert!(mean < 0.030, "mean RTT {mean}");
    let s = &out.summary;
    assert_eq!(
        s.packets_created,
        s.packets_delivered + s.packets_dropped + s.packets_alive
    );
}

#[test]
fn match_addresses_resolved_by_the_parser_are_those_the_network_builds() {
    // The parser gives link i's ends the addresses 2i and 2i + 1 (network.rs); the edge rule
    // on src = "h1" must catch all of h1's packets and none of h2's.
    let out = run_toml(
        &edge_and_core("10s", "8Mbps", "20Mbps", "5000kbps"),
        &[],
        None,
    );
    let offered = out.classes.u64("offered_packets").unwrap();
    let ef = offered[class_row(&out, "premium")];
    let be = offered[class_row(&out, "default")];
    // h1: 8 Mbit/s of 500 B for 10 s = 20,000 datagrams and 101 pings, less the few still on
    // the access and core links at the end; h2: 20 Mbit/s of 1000 B = 25,000.
    assert!((20_090..=20_101).contains(&ef), "premium offered {ef}");
    assert!((24_990..=25_000).contains(&be), "default offered {be}");
}

#[test]
fn a_core_classifier_on_protocol_ports_and_prefixes_sorts_each_flow_to_its_class() {
    // Links in order core, a1, a2, b1, b2: h2 is end a of a2, address 4, written 10.0.0.5, in
    // 10.0.0.4/30. Flows in order ef, be, probe: ef's receiver is endpoint 1, port 1025.
    let queue = "links.core.queue={type=\"priority\", classes=[\
                 {name=\"icmp\", match={protocol=\"icmp\"}}, \
                 {name=\"to_ef\", match={protocol=\"udp\", dst_port=\"1025-1025\"}}, \
                 {name=\"from_h2\", match={src=\"10.0.0.4/30\"}}, \
                 {name=\"rest\"}]}";
    let out = run_toml(
        &edge_and_core("10s", "2Mbps", "2Mbps", "5000kbps"),
        &[queue],
        None,
    );
    let offered = out.classes.u64("offered_packets").unwrap();
    let of = |c: &str| offered[class_row(&out, c)];
    // 101 echo requests (0, 0.1, ..., 10 s); the probe's UDP-carried packets are not `udp`.
    assert!((100..=101).contains(&of("icmp")), "icmp {}", of("icmp"));
    // ef: 2 Mbit/s of 500 B for 10 s = 5,000; be: 2 Mbit/s of 1000 B = 2,500.
    assert!(
        (4_995..=5_000).contains(&of("to_ef")),
        "to_ef {}",
        of("to_ef")
    );
    assert!(
        (2_495..=2_500).contains(&of("from_h2")),
        "from_h2 {}",
        of("from_h2")
    );
    assert_eq!(of("rest"), 0);
}

#[test]
fn a_link_going_down_counts_its_queued_class_packets_as_link_down_drops_not_as_sent() {
    // The core link is congested (best effort alone offers twice its rate), so its classes
    // hold packets when it goes down at 5 s; those are lost, not sent.
    let text = edge_and_core("10s", "4Mbps", "20Mbps", "5000kbps")
        + "[[events]]\nat = \"5s\"\nlink = \"core\"\nstate = \"down\"\n\
           [[events]]\nat = \"6s\"\nlink = \"core\"\nstate = \"up\"\n";
    let out = run_toml(&text, &[], None);
    let t = &out.classes;
    let col = |n: &str| t.u64(n).unwrap();
    let a_to_b: Vec<usize> = (0..t.rows())
        .filter(|&i| t.str("direction").unwrap()[i] == "a_to_b")
        .collect();
    for &i in &a_to_b {
        assert_eq!(
            col("accepted_packets")[i],
            col("sent_packets")[i] + col("drops_link_down")[i] + col("queued_packets")[i]
        );
    }
    let lost_in_classes: u64 = a_to_b.iter().map(|&i| col("drops_link_down")[i]).sum();
    assert!(
        col("drops_link_down")[class_row(&out, "default")] > 0,
        "the default class held packets"
    );
    // The link's own count adds what was on the wire and what was offered while down; the
    // classes' share is what waited in them.
    let links = &out.links;
    let k = (0..links.rows())
        .find(|&k| {
            links.str("link").unwrap()[k] == "core"
                && links.str("direction").unwrap()[k] == "a_to_b"
        })
        .unwrap();
    let link_lost = links.u64("drops_link_down").unwrap()[k];
    assert!(
        link_lost > lost_in_classes,
        "{link_lost} vs {lost_in_classes}"
    );
    // What the classes say they sent is what the link carried.
    let sent: u64 = a_to_b.iter().map(|&i| col("sent_packets")[i]).sum();
    assert_eq!(sent, links.u64("packets").unwrap()[k]);
}

#[test]
fn an_edge_policer_dropping_the_excess_counts_hook_drops_on_the_link_it_arrived_on() {
    // The engine shows a policer its packets in place (hook.rs, "Filters"): its drops must
    // still be counted where a hook's drops are, and every packet accounted for.
    let text = edge_and_core("10s", "4Mbps", "1Mbps", "5000kbps").replace(
        r#"hook = { type = "policer", rules = [{ match = { src = "h1" }, set_dscp = 46 }] }"#,
        r#"hook = { type = "policer", rules = [{ match = { flow = "ef" }, meter = { type = "car", rate = "2Mbps", normal_burst = 5000, excess_burst = 5000 }, conform = { set_dscp = 46 }, exceed = "drop" }] }"#,
    );
    assert!(text.contains("car"), "the policer line was replaced");
    let out = run_toml(&text, &[], None);
    let a1 = link_row(&out, "a1", "a_to_b");
    let hook_drops = u64s(&out.links, "drops_hook")[a1];
    let arrived = u64s(&out.links, "packets")[a1];
    // 4 Mbit/s offered, 2 Mbit/s conforming: about half of h1's CBR packets are dropped.
    let share = hook_drops as f64 / arrived as f64;
    assert!(
        (0.45..0.55).contains(&share),
        "dropped {hook_drops} of {arrived}"
    );
    assert_eq!(
        u64s(&out.links, "drops_hook").iter().sum::<u64>(),
        hook_drops
    );
    let s = &out.summary;
    assert_eq!(
        s.packets_created,
        s.packets_delivered + s.packets_dropped + s.packets_alive
    );
    assert!(s.packets_dropped >= hook_drops);
}
