// SPDX-License-Identifier: MIT
//! `[[events]]` of `docs/scenario.md`: links and interfaces that go down and come back up
//! during the run.
//!
//! ```toml
//! [[events]]
//! at = "10s"
//! link = "p0"            # both directions of link p0
//! state = "down"
//!
//! [[events]]
//! at = "12s"
//! node = "h1"            # only h1's interface on p0 (what h1 sends and receives over it)
//! link = "p0"
//! state = "up"
//! ```
//!
//! Routing does not react: packets routed over a down link are lost there and counted as
//! `link_down` (a multihomed transport has to notice and move, as SCTP's failover does). Events
//! run in time order; two at the same time run in the order of the file.
//!
//! An event must fall within the run (`at` at most `duration`): the loop stops at `duration`
//! and leaves later events pending, so one after it would never happen, and a typo such as
//! `at = "100s"` in a 10 s run was taken without a word (issue 32). One at `duration` exactly
//! still runs, as every event of that time does (`Simulator::run_loop`).

use indexmap::IndexMap;
use toml::Value;

use super::reader::{opt, Field, Res, DURATION_SHORT, LINK_NAME};
use crate::scenario::spec::{EventSpec, EventTarget, LinkSpec, NodeSpec};
use crate::scenario::units::format_duration;
use crate::time::{SimDuration, SimTime};

const EVENT_SHAPE: &str = "a table such as { at = \"10s\", link = \"p0\", state = \"down\" }";

pub(super) fn read_events(
    f: &Field,
    nodes: &IndexMap<String, NodeSpec>,
    links: &IndexMap<String, LinkSpec>,
    duration: SimDuration,
) -> Res<Vec<EventSpec>> {
    let Value::Array(items) = f.value else {
        return Err(f.expected("an array of tables such as [[events]]"));
    };
    let mut events = Vec::with_capacity(items.len());
    for (i, value) in items.iter().enumerate() {
        let item = Field {
            value,
            path: format!("{}[{i}]", f.path),
        };
        events.push(read_event(&item, nodes, links, duration)?);
    }
    // Stable: events at the same time keep the file's order.
    events.sort_by_key(|e| e.at);
    Ok(events)
}

fn read_event(
    f: &Field,
    nodes: &IndexMap<String, NodeSpec>,
    links: &IndexMap<String, LinkSpec>,
    duration: SimDuration,
) -> Res<EventSpec> {
    let mut r = f.table(EVENT_SHAPE)?;
    r.allow(&["at", "link", "node", "state"])?;
    let at_field = r.req("at", DURATION_SHORT)?;
    let after = at_field.duration()?;
    if after > duration {
        return Err(at_field.error(format!(
            "{} is after the run's end (duration = {}): the event would never happen",
            format_duration(after),
            format_duration(duration)
        )));
    }
    let at = SimTime::ZERO + after;
    let link = r.req("link", LINK_NAME)?.link(links)?;
    let node = opt(&mut r, "node", |f| {
        let node = f.node(nodes)?;
        let l = &links[&link];
        if l.a != node && l.b != node {
            return Err(f.error(format!(
                "{node:?} is not an end of link {link:?} (its ends are {:?} and {:?})",
                l.a, l.b
            )));
        }
        Ok(node)
    })?;
    let up = r
        .req("state", "\"up\" or \"down\"")?
        .choice(&["up", "down"])?
        == "up";
    r.finish()?;
    let target = match node {
        Some(node) => EventTarget::Interface { node, link },
        None => EventTarget::Link { link },
    };
    Ok(EventSpec { at, target, up })
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use crate::scenario::spec::{EventSpec, EventTarget};
    use crate::time::SimTime;

    #[test]
    fn events_are_read_in_time_order_keeping_the_file_order_at_equal_times() {
        let s = spec(
            MINIMAL,
            &[
                r#"events=[{at="5s", link="bottleneck", state="up"}, {at="2s", node="r1", link="bottleneck", state="down"}, {at="5s", link="access", state="down"}]"#,
            ],
        );
        assert_eq!(
            s.events,
            vec![
                EventSpec {
                    at: SimTime::from_secs(2),
                    target: EventTarget::Interface {
                        node: "r1".into(),
                        link: "bottleneck".into()
                    },
                    up: false
                },
                EventSpec {
                    at: SimTime::from_secs(5),
                    target: EventTarget::Link {
                        link: "bottleneck".into()
                    },
                    up: true
                },
                EventSpec {
                    at: SimTime::from_secs(5),
                    target: EventTarget::Link {
                        link: "access".into()
                    },
                    up: false
                },
            ]
        );
    }

    #[test]
    fn an_event_naming_a_node_that_is_not_on_the_link_is_refused() {
        assert_eq!(
            message(
                MINIMAL,
                &[r#"events=[{at="1s", node="h1", link="bottleneck", state="down"}]"#]
            ),
            "events[0].node: \"h1\" is not an end of link \"bottleneck\" (its ends are \"r1\" and \"h2\")"
        );
        assert_eq!(
            message(
                MINIMAL,
                &[r#"events=[{at="1s", link="bottleneck", state="off"}]"#]
            ),
            "events[0].state: \"off\" is not one of up, down"
        );
    }

    #[test]
    fn an_event_after_the_runs_duration_is_refused_naming_its_at_and_the_duration() {
        // MINIMAL runs 10 s: the loop stops there, so an event at 11 s would never happen.
        assert_eq!(
            message(
                MINIMAL,
                &[r#"events=[{at="1s", link="bottleneck", state="down"}, {at="11s", link="bottleneck", state="up"}]"#]
            ),
            "events[1].at: 11s is after the run's end (duration = 10s): the event would never happen"
        );
        // At the end exactly it still runs (the loop runs every event of the end's time).
        let s = spec(
            MINIMAL,
            &[r#"events=[{at="10s", link="bottleneck", state="down"}]"#],
        );
        assert_eq!(s.events[0].at, SimTime::from_secs(10));
    }
}
