// SPDX-License-Identifier: MIT
//! `[[events]]`: links and interfaces that go down and come back. Routing stays as it is, so a
//! transport sees a black hole and must recover by itself.

use ccsim_core::RunOutput;

use crate::common::*;
use crate::conservation::assert_conserved;

/// h1 -> r1 -> h2, one bulk TCP flow, its bottleneck down from 3 s to 5 s.
fn outage(events: &str) -> String {
    format!(
        r#"
duration = "12s"
[nodes]
h1 = "host"
r1 = "router"
h2 = "host"
[links.access]
a = "h1"
b = "r1"
rate = "100Mbps"
delay = "1ms"
[links.bottleneck]
a = "r1"
b = "h2"
rate = "10Mbps"
delay = "20ms"
[flows.f1]
type = "tcp"
src = "h1"
dst = "h2"
[trace]
interval = "100ms"
{events}
"#
    )
}

const DOWN_3_TO_5: &str = r#"
[[events]]
at = "3s"
link = "bottleneck"
state = "down"
[[events]]
at = "5s"
link = "bottleneck"
state = "up"
"#;

/// Delivered bytes of f1 sampled at `t` seconds.
fn delivered_at(out: &RunOutput, t: f64) -> f64 {
    let s = &out.series;
    let (name, metric, time, value) = (
        s.str("name").unwrap(),
        s.str("metric").unwrap(),
        f64s(s, "time_s"),
        f64s(s, "value"),
    );
    (0..value.len())
        .find(|&i| name[i] == "f1" && metric[i] == "delivered_bytes" && (time[i] - t).abs() < 1e-9)
        .map(|i| value[i])
        .unwrap_or_else(|| panic!("no sample at {t}"))
}

#[test]
fn a_tcp_flow_over_a_link_down_for_two_seconds_recovers_by_rto_after_it_comes_back() {
    let out = run_toml(&outage(DOWN_3_TO_5), &[], None);
    // Nothing gets through while the link is down (the last packets on the wire at 3 s are lost
    // with it, so the count at 3.1 s already holds).
    let at_down = delivered_at(&out, 3.1);
    assert_eq!(delivered_at(&out, 5.0), at_down, "data crossed a down link");
    // The sender's retransmission timer fires into the outage and backs off; a retransmission
    // after 5 s gets through and the transfer goes on.
    let timeouts = u64s(&out.flows, "timeouts")[0];
    assert!(
        timeouts >= 2,
        "timeouts {timeouts}: expected a backed-off RTO"
    );
    assert!(
        delivered_at(&out, 9.0) > at_down + 1e6,
        "no recovery after the link came up"
    );
    // Every packet lost to the outage is counted on the link, in both directions (the data on
    // r1 -> h2, the ACKs on h2 -> r1).
    let down = u64s(&out.links, "drops_link_down");
    let data = down[link_row(&out, "bottleneck", "a_to_b")];
    let acks = down[link_row(&out, "bottleneck", "b_to_a")];
    assert!(data >= timeouts, "data lost {data}");
    assert!(acks > 0, "ACKs on the wire at 3 s were lost too");
    assert_eq!(down[link_row(&out, "access", "a_to_b")], 0);
    assert_conserved(&out);
}

#[test]
fn without_events_nothing_is_lost_to_a_link_down() {
    let out = run_toml(&outage(""), &[], None);
    assert!(u64s(&out.links, "drops_link_down").iter().all(|&d| d == 0));
    assert!(delivered_at(&out, 5.0) > delivered_at(&out, 3.1));
}

#[test]
fn an_interface_down_cuts_its_link_and_a_repeated_down_changes_nothing() {
    // h2's interface down at 3 s and up at 5 s (the link's own state never changes).
    let iface = DOWN_3_TO_5.replace("link = ", "node = \"h2\"\nlink = ");
    let by_iface = run_toml(&outage(&iface), &[], None);
    let by_link = run_toml(&outage(DOWN_3_TO_5), &[], None);
    // On a point-to-point link the interface carries both channels: the same run.
    assert_eq!(by_iface.flows, by_link.flows);
    assert_eq!(by_iface.links, by_link.links);
    // A second "down" while down loses nothing more.
    let twice = format!(
        "{DOWN_3_TO_5}\n[[events]]\nat = \"4s\"\nlink = \"bottleneck\"\nstate = \"down\"\n"
    );
    assert_eq!(run_toml(&outage(&twice), &[], None).links, by_link.links);
    assert_conserved(&by_iface);
}

#[test]
fn a_link_that_goes_down_and_up_at_once_loses_only_what_was_on_it() {
    // Down and up at the same instant: the queue and the wire are emptied, and new packets pass
    // at once (the stale end-of-transmission and arrival events are harmless).
    let blip = r#"
[[events]]
at = "3s"
link = "bottleneck"
state = "down"
[[events]]
at = "3s"
link = "bottleneck"
state = "up"
"#;
    let out = run_toml(&outage(blip), &[], None);
    let lost = u64s(&out.links, "drops_link_down")[link_row(&out, "bottleneck", "a_to_b")];
    assert!(lost > 0);
    assert!(delivered_at(&out, 3.5) > delivered_at(&out, 3.1));
    assert_conserved(&out);
}

/// `[[events]]` entries, one per (time, `node` or "" for the whole link, state) on the
/// bottleneck.
fn bottleneck_events(list: &[(&str, &str, &str)]) -> String {
    list.iter()
        .map(|(at, node, state)| {
            let node = if node.is_empty() {
                String::new()
            } else {
                format!("node = \"{node}\"\n")
            };
            format!("[[events]]\nat = \"{at}\"\n{node}link = \"bottleneck\"\nstate = \"{state}\"\n")
        })
        .collect()
}

#[test]
fn an_interface_brought_up_while_the_other_end_is_down_carries_nothing() {
    // Both ends' interfaces go down at 3 s; r1's comes back at 4 s, h2's at 5 s. The link is
    // up only while the link and both interfaces are: down from 3 s to 5 s, exactly as the
    // link taken down from 3 s to 5 s.
    let events = bottleneck_events(&[
        ("3s", "h2", "down"),
        ("3s", "r1", "down"),
        ("4s", "r1", "up"),
        ("5s", "h2", "up"),
    ]);
    let out = run_toml(&outage(&events), &[], None);
    let at_down = delivered_at(&out, 3.1);
    assert_eq!(
        delivered_at(&out, 5.0),
        at_down,
        "data crossed h2's down interface after r1's came back"
    );
    assert!(
        delivered_at(&out, 9.0) > at_down + 1e6,
        "no traffic after both interfaces came up"
    );
    let by_link = run_toml(&outage(DOWN_3_TO_5), &[], None);
    assert_eq!(out.flows, by_link.flows);
    // What was offered in between was dropped as link down, in both directions.
    assert_eq!(out.links, by_link.links);
    let down = u64s(&out.links, "drops_link_down");
    assert!(down[link_row(&out, "bottleneck", "a_to_b")] > 0);
    assert!(down[link_row(&out, "bottleneck", "b_to_a")] > 0);
    assert_conserved(&out);
}

#[test]
fn a_link_down_stays_down_through_an_interface_up_and_an_interface_down_through_a_link_up() {
    let by_link = run_toml(&outage(DOWN_3_TO_5), &[], None);
    // Link down, an interface "up" (it was never down), link up: the link alone decides.
    let link_first = bottleneck_events(&[("3s", "", "down"), ("4s", "h2", "up"), ("5s", "", "up")]);
    // Link down, an interface down, link up, interface up: down until the last of them.
    let both = bottleneck_events(&[
        ("3s", "", "down"),
        ("3.5s", "h2", "down"),
        ("4s", "", "up"),
        ("5s", "h2", "up"),
    ]);
    for events in [link_first, both] {
        let out = run_toml(&outage(&events), &[], None);
        assert_eq!(delivered_at(&out, 5.0), delivered_at(&out, 3.1), "{events}");
        assert_eq!(out.flows, by_link.flows, "{events}");
        assert_eq!(out.links, by_link.links, "{events}");
        assert_conserved(&out);
    }
}
