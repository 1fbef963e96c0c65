// SPDX-License-Identifier: MIT
use crate::common::*;

fn lossy() -> String {
    dumbbell(
        2,
        10,
        "20ms",
        "{ type = \"red\", limit = 60 }",
        "20s",
        "variant = \"sack\"",
    )
    .replace(
        "[links.in1]",
        "loss = { type = \"uniform\", rate = 0.01 }\n[links.in1]",
    ) + "[trace]\ninterval = \"100ms\"\n"
}

#[test]
fn the_same_seed_gives_identical_outputs() {
    let a = run_toml(&lossy(), &[], Some(7));
    let b = run_toml(&lossy(), &[], Some(7));
    assert_eq!(a.flows, b.flows);
    assert_eq!(a.links, b.links);
    assert_eq!(a.series, b.series);
    assert_eq!(a.summary.events, b.summary.events);
}

#[test]
fn another_seed_gives_different_outputs() {
    let a = run_toml(&lossy(), &[], Some(7));
    let b = run_toml(&lossy(), &[], Some(8));
    assert_ne!(a.flows, b.flows);
}

#[test]
fn adding_a_flow_does_not_change_another_components_random_stream() {
    // The loss model on link `lossy` draws once per packet, so the same packets see the same
    // fates only if its stream is independent of everything else in the scenario.
    let base = r#"
duration = "5s"
[nodes]
a = "host"
b = "host"
c = "host"
d = "host"
[links.lossy]
a = "a"
b = "b"
rate = "10Mbps"
delay = "5ms"
loss = { type = "uniform", rate = 0.1, direction = "a_to_b" }
[links.other]
a = "c"
b = "d"
rate = "10Mbps"
delay = "5ms"
[flows.cbr]
type = "cbr"
src = "a"
dst = "b"
rate = "1Mbps"
"#;
    let extra = format!(
        "{base}[flows.extra]\ntype = \"onoff\"\nsrc = \"c\"\ndst = \"d\"\nrate = \"5Mbps\"\non = \"50ms\"\noff = \"50ms\"\ndistribution = \"exponential\"\n"
    );
    let a = run_toml(base, &[], Some(3));
    let b = run_toml(&extra, &[], Some(3));
    let r = link_row(&a, "lossy", "a_to_b");
    assert_eq!(
        u64s(&a.links, "drops_loss")[r],
        u64s(&b.links, "drops_loss")[r]
    );
    assert_eq!(
        u64s(&a.flows, "packets_received")[0],
        u64s(&b.flows, "packets_received")[0]
    );
}

#[test]
fn an_event_limit_ends_the_run_cleanly_with_its_reason_and_conserved_packets() {
    let text = dumbbell(
        2,
        10,
        "20ms",
        "{ type = \"droptail\", limit = 50 }",
        "60s",
        "variant = \"sack\"",
    );
    let out = run_toml(&text, &["limits.max_events=5000"], None);
    assert_eq!(out.summary.stop_reason, ccsim_core::StopReason::EventLimit);
    assert_eq!(out.summary.events, 5000);
    assert!(out.summary.sim_seconds < 60.0);
    crate::conservation::assert_conserved(&out);
}

#[test]
fn a_network_with_nothing_left_to_do_stops_as_idle_before_its_duration() {
    let text = dumbbell(
        1,
        10,
        "20ms",
        "{ type = \"droptail\", limit = 50 }",
        "600s",
        "variant = \"sack\"",
    )
    .replace(
        "[flows.f1]\ntype = \"tcp\"\n",
        "[flows.f1]\ntype = \"tcp\"\nsize = \"100KB\"\n",
    );
    let out = run_toml(&text, &[], None);
    assert_eq!(out.summary.stop_reason, ccsim_core::StopReason::Idle);
    assert!(out.summary.sim_seconds < 5.0, "{}", out.summary.sim_seconds);
    assert_eq!(u64s(&out.flows, "bytes_delivered")[0], 100_000);
}
