// SPDX-License-Identifier: MIT
//! The per-packet trace (`[trace] packets`): what it records, what it leaves out, its bound, and
//! that it never changes a run's results.
use crate::common::*;
use ccsim_core::RunOutput;

/// The common lossy wireless path ([`LOSSY_WIRELESS`]) and a CBR flow the other way that the
/// trace must leave out when asked to.
fn lossy() -> String {
    const NOISE: &str = r#"
[flows.noise]
type = "cbr"
src = "mh"
dst = "fh"
rate = "10kbps"
packet_size = 100
stop = "5s"
"#;
    format!("{LOSSY_WIRELESS}{NOISE}")
}

/// Rows of the packets table where `event` is `e` (and `where` is `at`, if given).
fn count(out: &RunOutput, e: &str, at: Option<&str>) -> usize {
    let t = &out.packets;
    let (ev, wh) = (t.str("event").unwrap(), t.str("where").unwrap());
    ev.iter()
        .zip(wh)
        .filter(|(x, w)| *x == e && at.is_none_or(|a| a == *w))
        .count()
}

#[test]
fn a_run_with_no_packet_trace_has_an_empty_table_and_the_same_results_with_one() {
    let off = run_toml(&lossy(), &[], None);
    assert_eq!(off.packets.rows(), 0);
    let on = run_toml(&lossy(), &["trace.packets={}"], None);
    assert!(on.packets.rows() > 0);
    assert_eq!(on.flows, off.flows);
    assert_eq!(on.links, off.links);
    // Only the count of events grows: a traced link direction keeps an event for each
    // transmission that waits (the trace writes it at its instant) where an untraced one plans
    // it at enqueue (`link.rs`).
    assert!(on.summary.events > off.summary.events);
    assert_eq!(on.summary.data_packets, off.summary.data_packets);
}

#[test]
fn the_trace_follows_every_packet_of_a_flow_from_sender_to_receiver_or_drop() {
    let out = run_toml(
        &lossy(),
        &["trace.packets={ flows = [\"transfer\"] }"],
        None,
    );
    let flows = out.packets.str("flow").unwrap();
    assert!(
        flows.iter().all(|f| f == "transfer"),
        "the CBR flow is left out"
    );
    let r = link_row(&out, "wl", "a_to_b");
    let lost = u64s(&out.links, "drops_loss")[r] as usize;
    assert!(lost > 0);
    // Every loss on the wireless hop is a `dropped` row with reason `loss`, after its
    // `departed` row.
    let reasons = out.packets.str("reason").unwrap();
    assert_eq!(reasons.iter().filter(|r| *r == "loss").count(), lost);
    // Each packet sent by an endpoint is delivered to the other or dropped (no queue drops
    // here, nothing alive at the end).
    let sent = count(&out, "sent", None);
    let delivered = count(&out, "delivered", None);
    assert_eq!(sent, delivered + lost);
    // Data segments sent by the FH, retransmissions flagged; ACKs sent by the MH.
    let kinds = out.packets.str("kind").unwrap();
    let events = out.packets.str("event").unwrap();
    let wh = out.packets.str("where").unwrap();
    let retx = u64s(&out.packets, "retransmission");
    let data_sent = (0..out.packets.rows())
        .filter(|&i| events[i] == "sent" && kinds[i] == "data")
        .inspect(|&i| assert_eq!(wh[i], "fh"))
        .count();
    let retx_sent = (0..out.packets.rows())
        .filter(|&i| events[i] == "sent" && retx[i] == 1)
        .count();
    assert_eq!(data_sent as u64, u64s(&out.flows, "packets_sent")[0]);
    assert_eq!(retx_sent as u64, u64s(&out.flows, "retransmits")[0]);
    // On each link direction: every arrival departed first, in time order.
    let t = u64s(&out.packets, "time_ns");
    assert!(t.windows(2).all(|w| w[0] <= w[1]), "rows in time order");
    for dir in ["wl:a_to_b", "wired:a_to_b", "wl:b_to_a", "wired:b_to_a"] {
        let departed = count(&out, "departed", Some(dir));
        let arrived = count(&out, "arrived", Some(dir));
        let dropped = count(&out, "dropped", Some(dir));
        assert_eq!(departed, arrived + dropped, "{dir}");
    }
}

#[test]
fn links_and_nodes_narrow_the_trace_to_where_they_name() {
    let out = run_toml(
        &lossy(),
        &["trace.packets={ links = [\"wl:a_to_b\"], nodes = [\"mh\"] }"],
        None,
    );
    let wh = out.packets.str("where").unwrap();
    assert!(wh.iter().all(|w| w == "wl:a_to_b" || w == "mh"), "{wh:?}");
    assert!(count(&out, "departed", Some("wl:a_to_b")) > 0);
    assert!(count(&out, "delivered", Some("mh")) > 0);
    assert!(count(&out, "sent", Some("mh")) > 0, "the MH's ACKs and CBR");
    // A link named without a direction traces both.
    let both = run_toml(
        &lossy(),
        &["trace.packets={ links = [\"wl\"], nodes = [] }"],
        None,
    );
    assert!(count(&both, "arrived", Some("wl:b_to_a")) > 0);
    assert_eq!(count(&both, "sent", None), 0, "no node named");
}

#[test]
fn past_max_rows_events_are_counted_not_kept() {
    let all = run_toml(&lossy(), &["trace.packets={}"], None);
    let capped = run_toml(&lossy(), &["trace.packets={ max_rows = 100 }"], None);
    assert_eq!(capped.packets.rows(), 100);
    assert_eq!(all.summary.packets_untraced, 0);
    assert_eq!(
        capped.summary.packets_untraced as usize,
        all.packets.rows() - 100
    );
    // The first 100 rows are the same rows.
    assert_eq!(
        u64s(&capped.packets, "seq"),
        &u64s(&all.packets, "seq")[..100]
    );
}
