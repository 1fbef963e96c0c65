// SPDX-License-Identifier: MIT
//! The simulator as a unit: the engine's ordering and stopping rules, a drop for want of a
//! route, and the build-time MTU check. Each test builds a small scenario from TOML text, as a
//! user would, and looks at what a user relies on.

use super::engine::{Ev, EventHeap};
use super::Simulator;
use crate::results::{RunOutput, StopReason};
use crate::scenario::load_scenario;
use crate::time::{SimDuration, SimTime};
use crate::Error;

/// `h1 ── access (100 Mbit/s, 1 ms) ── r ── exit (10 Mbit/s, 10 ms) ── h2`, one second long,
/// followed by `rest` (flows, routing).
pub(super) fn line(rest: &str) -> String {
    format!(
        r#"
seed = 1
duration = "1s"

[nodes]
h1 = "host"
r = "router"
h2 = "host"

[links.access]
a = "h1"
b = "r"
rate = "100Mbps"
delay = "1ms"

[links.exit]
a = "r"
b = "h2"
rate = "10Mbps"
delay = "10ms"

{rest}
"#
    )
}

/// A constant-rate UDP flow `name` from h1 to h2: 1,000 B packets every 8 ms from t = 0.
fn cbr(name: &str) -> String {
    format!(
        "[flows.{name}]\ntype = \"cbr\"\nsrc = \"h1\"\ndst = \"h2\"\nrate = \"1Mbps\"\n\
         packet_size = 1000\n"
    )
}

pub(super) fn build(text: &str, overrides: &[&str]) -> Result<Simulator, Error> {
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    let loaded = load_scenario(text, &overrides, None).unwrap_or_else(|e| panic!("{e}"));
    Simulator::build(&loaded.spec)
}

/// Every packet created is delivered, dropped or still alive, also in a run stopped early.
pub(super) fn assert_conserved(out: &RunOutput) {
    let s = &out.summary;
    assert_eq!(
        s.packets_created,
        s.packets_delivered + s.packets_dropped + s.packets_alive,
        "every packet is accounted for at the stop"
    );
}

fn run(text: &str, overrides: &[&str]) -> RunOutput {
    build(text, overrides)
        .and_then(Simulator::run)
        .unwrap_or_else(|e| panic!("{e}"))
}

/// The value of u64 column `col` in the links-table row of `link` in `direction`.
fn link_u64(out: &RunOutput, link: &str, direction: &str, col: &str) -> u64 {
    let links = out.links.str("link").unwrap();
    let dirs = out.links.str("direction").unwrap();
    let row = (0..links.len())
        .find(|&i| links[i] == link && dirs[i] == direction)
        .unwrap_or_else(|| panic!("no link {link} {direction}"));
    out.links.u64(col).unwrap()[row]
}

#[test]
fn events_at_equal_times_leave_the_heap_in_the_order_they_were_scheduled() {
    // A binary heap alone returns equal keys in an order that depends on its history; the
    // sequence number makes a run a pure function of the scenario. Pins the (time, seq) key.
    let ms = |n: u64| SimTime::ZERO + SimDuration::from_millis(n);
    let mut heap = EventHeap::default();
    heap.schedule(ms(5), Ev::Spawn(0));
    heap.schedule(ms(3), Ev::Timer(0));
    for g in 1..10 {
        heap.schedule(ms(5), Ev::Spawn(g));
    }
    heap.schedule(ms(3), Ev::Timer(1));
    let mut popped = Vec::new();
    while let Some(e) = heap.pop() {
        popped.push((e.time, e.ev));
        if e.ev == Ev::Spawn(4) {
            // Put back as a run stopped before it would: it keeps its place.
            heap.put_back(e);
            assert_eq!(heap.pop().map(|e| e.ev), Some(Ev::Spawn(4)));
        }
    }
    let mut expected = vec![(ms(3), Ev::Timer(0)), (ms(3), Ev::Timer(1))];
    expected.extend((0..10).map(|g| (ms(5), Ev::Spawn(g))));
    assert_eq!(popped, expected);
}

#[test]
fn a_transmission_end_scheduled_first_runs_before_every_other_event_of_its_nanosecond() {
    // A channel whose departures come first (`link.rs`) has its `TxDone` run ahead of what was
    // scheduled earlier for the same nanosecond, deadlines included; among themselves such
    // ends keep their scheduling order, and the nanosecond before still comes first.
    let us = |n: u64| SimTime::ZERO + SimDuration::from_micros(n);
    let mut heap = EventHeap::default();
    heap.schedule(us(5), Ev::Spawn(0));
    heap.schedule_timer(us(5), 7);
    heap.schedule(us(4), Ev::Spawn(1));
    heap.schedule_first(us(5), Ev::TxDone(2));
    heap.schedule(us(5), Ev::Arrive(3));
    heap.schedule_first(us(5), Ev::TxDone(1));
    let mut popped = Vec::new();
    while let Some(e) = heap.pop() {
        popped.push((e.time, e.ev));
    }
    assert_eq!(
        popped,
        vec![
            (us(4), Ev::Spawn(1)),
            (us(5), Ev::TxDone(2)),
            (us(5), Ev::TxDone(1)),
            (us(5), Ev::Spawn(0)),
            (us(5), Ev::Timer(7)),
            (us(5), Ev::Arrive(3)),
        ]
    );
}

#[test]
fn the_next_event_time_skips_the_event_being_handled() {
    // `pop` leaves the event it returns at the root until the next `schedule`; ATM's
    // `peek_time` must see the earliest event still pending, not that one.
    let ms = |n: u64| SimTime::ZERO + SimDuration::from_millis(n);
    let mut heap = EventHeap::default();
    for (t, g) in [(1, 0), (7, 1), (4, 2), (9, 3)] {
        heap.schedule(ms(t), Ev::Spawn(g));
    }
    assert_eq!(heap.peek_time(), Some(ms(1)));
    assert_eq!(heap.pop().map(|e| e.time), Some(ms(1)));
    assert_eq!(heap.peek_time(), Some(ms(4)));
    heap.schedule(ms(2), Ev::Atm);
    assert_eq!(heap.peek_time(), Some(ms(2)));
    while heap.pop().is_some() {}
    assert_eq!(heap.peek_time(), None);
}

#[test]
fn sources_due_at_the_same_instant_transmit_in_the_order_they_were_declared() {
    // Six CBR sources on h1 are all due at t = 0. Their deadlines are scheduled in port order,
    // which is declaration order, so they take the transmitter in that order, 80 us each: the
    // sixth starts at 400 us. The run stops at 480 us, before the first arrival (1.08 ms).
    for names in [
        ["a", "b", "c", "d", "e", "f"],
        ["f", "e", "d", "c", "b", "a"],
    ] {
        let text = line(&names.map(cbr).concat());
        let mut sim = build(&text, &["duration=480us"]).unwrap();
        assert_eq!(sim.run_loop(), StopReason::Duration);
        let access = sim
            .net
            .chans
            .iter()
            .find(|c| c.link == "access" && c.direction == "a_to_b")
            .unwrap();
        let on_the_wire: Vec<&str> = access
            .propagation
            .iter()
            .map(|&(_, id, _)| sim.flows[sim.pkts.get(id).flow as usize].name.as_str())
            .collect();
        assert_eq!(on_the_wire, names);
    }
}

#[test]
fn a_run_stops_at_its_duration_with_the_clock_there_and_later_events_left_undone() {
    let text = line(&format!(
        "{}[flows.late]\ntype = \"tcp\"\nsrc = \"h1\"\ndst = \"h2\"\nstart = \"2s\"\n",
        cbr("early")
    ));
    let mut sim = build(&text, &[]).unwrap();
    assert_eq!(sim.run_loop(), StopReason::Duration);
    assert_eq!(sim.now(), SimTime::ZERO + SimDuration::from_secs(1));
    assert!(
        !sim.heap.is_empty(),
        "the CBR source's next packet is still pending"
    );
    let out = sim.finish(StopReason::Duration);
    assert_eq!(out.summary.stop_reason, StopReason::Duration);
    assert_eq!(out.summary.sim_seconds, 1.0);
    let names = out.flows.str("name").unwrap();
    let sent = out.flows.u64("packets_sent").unwrap();
    let sent_by = |flow: &str| sent[names.iter().position(|n| n == flow).unwrap()];
    // An event due exactly at the end still runs: the run covers [0, 1 s], both ends included.
    assert_eq!(
        sent_by("early"),
        126,
        "one packet every 8 ms, at 0, 8, ..., 1,000 ms"
    );
    assert_eq!(
        sent_by("late"),
        0,
        "a flow that starts after the end never starts"
    );
}

#[test]
fn the_event_limit_ends_a_run_cleanly_after_exactly_that_many_events() {
    let text = line("[flows.bulk]\ntype = \"tcp\"\nsrc = \"h1\"\ndst = \"h2\"\n");
    let out = run(&text, &["duration=10s", "limits.max_events=500"]);
    let s = &out.summary;
    assert_eq!(s.stop_reason, StopReason::EventLimit);
    assert_eq!(s.events, 500);
    assert!(
        s.sim_seconds > 0.0 && s.sim_seconds < 10.0,
        "{}",
        s.sim_seconds
    );
    assert!(s.packets_alive > 0, "stopped with packets in flight");
    assert_conserved(&out);
    assert_eq!(out.flows.rows(), 1);
    assert!(out.flows.u64("bytes_delivered").unwrap()[0] > 0);
}

#[test]
fn a_run_whose_flows_have_finished_ends_idle_even_while_sampling_a_time_series() {
    // The sampler alone must not keep an idle network running to the end (paper 001's runs
    // have a 600 s bound and end when the transfer does).
    let text = line(
        "[flows.transfer]\ntype = \"tcp\"\nsrc = \"h1\"\ndst = \"h2\"\nsize = \"20KB\"\n\n\
         [trace]\ninterval = \"100ms\"\n",
    );
    let out = run(&text, &["duration=60s"]);
    assert_eq!(out.summary.stop_reason, StopReason::Idle);
    assert!(out.summary.sim_seconds < 2.0, "{}", out.summary.sim_seconds);
    assert_eq!(out.flows.u64("completed").unwrap(), [1]);
    let last_sample = out.series.f64("time_s").unwrap().last().copied();
    assert_eq!(last_sample, Some(out.summary.sim_seconds));
}

#[test]
fn a_packet_sent_to_a_host_that_is_not_its_destination_is_dropped_as_no_route() {
    // The explicit route sends h2's traffic from r back to h1; hosts do not forward, so each
    // packet dies at h1, counted on the link direction it arrived by.
    let route_back = r#"
[routing]
routes = [{ at = "r", to = "h2", via = "access" }]
"#;
    let text = line(&format!("{}stop = \"100ms\"\n{route_back}", cbr("lost")));
    let out = run(&text, &[]);
    let sent = out.flows.u64("packets_sent").unwrap()[0];
    assert!(sent > 0);
    assert_eq!(
        out.summary.packets_alive, 0,
        "all sent by 100 ms, all gone by 1 s"
    );
    assert_eq!(link_u64(&out, "access", "b_to_a", "drops_noroute"), sent);
    assert_eq!(link_u64(&out, "exit", "a_to_b", "packets"), 0);
    assert_eq!(out.flows.u64("packets_received").unwrap(), [0]);
    assert_eq!(out.summary.packets_dropped, sent);
}

#[test]
fn a_flow_whose_packets_exceed_the_mtu_of_a_link_on_its_route_is_rejected_at_build() {
    // The parser does not compute routes, so build checks the path: such a flow would lose
    // every packet and never finish.
    let tcp = line("[flows.f]\ntype = \"tcp\"\nsrc = \"h1\"\ndst = \"h2\"\nmss = 1460\n");
    let Err(Error::Scenario(e)) = build(&tcp, &["links.exit.mtu=1000"]) else {
        panic!("1,500 B segments over a 1,000 B MTU must be rejected");
    };
    assert_eq!(e.path, "flows.f.mss");
    assert!(
        e.message.contains("1500 B") && e.message.contains("link exit"),
        "{}",
        e.message
    );
    assert!(build(&tcp, &["links.exit.mtu=1000", "flows.f.mss=960"]).is_ok());

    let udp = line(&cbr("v"));
    let Err(Error::Scenario(e)) = build(&udp, &["links.access.mtu=999"]) else {
        panic!("1,000 B datagrams over a 999 B MTU must be rejected");
    };
    assert_eq!(e.path, "flows.v.packet_size");
    assert!(build(&udp, &["links.access.mtu=1000"]).is_ok());
}

#[test]
fn utilization_counts_only_the_bits_serialized_before_the_run_ends() {
    // Bug pinned (issue 10, defect 1): a packet still being serialized at the end was counted
    // in full, and a 64 kbit/s link over 100 ms reported utilization 1.875. The CBR source
    // offers 1 Mbit/s, so the exit link is busy from the first packet's arrival (at 1.08 ms)
    // to the end: utilization (100 − 1.08) / 100.
    let out = run(
        &line(&cbr("f")),
        &["links.exit.rate=64Kbps", "duration=100ms"],
    );
    let links = out.links.str("link").unwrap();
    let dirs = out.links.str("direction").unwrap();
    let row = (0..links.len())
        .find(|&i| links[i] == "exit" && dirs[i] == "a_to_b")
        .unwrap();
    let u = out.links.f64("utilization").unwrap()[row];
    assert!((u - 0.9892).abs() < 1e-3, "utilization {u}");
}

#[test]
fn the_rows_counted_for_the_memory_limit_are_the_rows_a_sample_adds() {
    // limits.max_memory refuses a time series by counting its rows before the run: the count
    // must follow `sample` (a TCP flow's four metrics, a CBR flow's none, three per link
    // direction).
    let text = line(&format!(
        "{}[flows.t]\ntype = \"tcp\"\nsrc = \"h1\"\ndst = \"h2\"\n[trace]\ninterval = \"100ms\"\n",
        cbr("c")
    ));
    let mut sim = build(&text, &[]).unwrap();
    assert_eq!(sim.series_rows_per_sample(), 4 + 3 * 4);
    sim.sample();
    let out = sim.finish(StopReason::Duration);
    assert_eq!(out.series.rows(), 4 + 3 * 4);
}

#[test]
fn flows_declared_alike_share_one_tcp_spec_and_a_different_flow_gets_its_own() {
    // Every TCP endpoint holds its spec through an `Arc`: with 10,000 flows one copy stays in
    // the cache instead of 176 bytes in each endpoint (docs/performance.md, "Shared TCP specs").
    let flow = |name: &str, extra: &str| {
        format!("[flows.{name}]\ntype = \"tcp\"\nsrc = \"h1\"\ndst = \"h2\"\n{extra}\n")
    };
    let text = line(&[flow("f1", ""), flow("f2", ""), flow("f3", "cc = \"cubic\"")].concat());
    let sim = build(&text, &[]).unwrap();
    assert_eq!(sim.tcp_specs.len(), 2, "two distinct specs");
    let counts: Vec<usize> = sim
        .tcp_specs
        .iter()
        .map(std::sync::Arc::strong_count)
        .collect();
    // The builder's own reference, plus a sender and a receiver per flow that uses it.
    assert_eq!(counts, vec![1 + 4, 1 + 2]);
    assert_ne!(sim.tcp_specs[0], sim.tcp_specs[1]);
}

/// Two UDP sources on h1, `a` declared first, each at the access link's full rate (1,000 B every
/// 80 us from t = 0 to 5 ms) into a buffer of one packet; the exit link as fast, so that only
/// the access link queues.
fn two_at_full_rate() -> (String, [&'static str; 4]) {
    let src = |name: &str| {
        format!(
            "[flows.{name}]\ntype = \"cbr\"\nsrc = \"h1\"\ndst = \"h2\"\nrate = \"100Mbps\"\n\
             packet_size = 1000\nstop = \"5ms\"\n"
        )
    };
    (
        line(&[src("a"), src("b")].concat()),
        [
            "duration=50ms",
            "links.exit.rate=100Mbps",
            "links.access.queue={type=\"droptail\",limit=1}",
            "links.access.b_to_a={queue={type=\"droptail\",limit=1}}",
        ],
    )
}

#[test]
fn an_arrival_at_the_instant_a_waiting_packet_starts_sees_the_room_it_left() {
    // At t = 0 a's datagram goes on the wire until 80 us and b's waits for it. From then on,
    // every 80 us, a's next datagram, b's next and the start of the one waiting fall on one
    // nanosecond. The waiting one has left the buffer at that instant (docs/scenario.md,
    // "Simultaneous events"): a's datagram, offered first, finds the room and waits, and b's
    // finds the buffer full. Before that convention the offers came before the start (their
    // events were scheduled earlier) and a and b each lost every other datagram.
    let (text, overrides) = two_at_full_rate();
    let out = run(&text, &overrides);
    let names = out.flows.str("name").unwrap();
    let sent = out.flows.u64("packets_sent").unwrap();
    let received = out.flows.u64("packets_received").unwrap();
    let (a, b) = (
        names.iter().position(|n| n == "a").unwrap(),
        names.iter().position(|n| n == "b").unwrap(),
    );
    assert_eq!(sent[a], 63, "one every 80 us from 0 to 5 ms");
    assert_eq!(received[a], sent[a], "a loses nothing");
    assert_eq!(
        received[b], 1,
        "b's first waits; every later one finds a's waiting"
    );
    assert_eq!(
        link_u64(&out, "access", "a_to_b", "drops_queue"),
        sent[b] - 1
    );
}

#[test]
fn a_trace_on_every_link_changes_no_result_at_simultaneous_events() {
    // A traced link keeps an event for every transmission that waits (the trace writes each
    // departure at its instant); that event runs first at its nanosecond, so the ties of
    // `two_at_full_rate` fall as they do on the planned links of the untraced run.
    let (text, overrides) = two_at_full_rate();
    let plain = run(&text, &overrides);
    let mut traced_overrides = overrides.to_vec();
    traced_overrides.push("trace.packets={}");
    let traced = run(&text, &traced_overrides);
    assert!(traced.packets.rows() > 0);
    assert_eq!(traced.flows, plain.flows);
    assert_eq!(traced.links, plain.links);
    // The 63 transmissions that waited on the access link (b's first, a's 62 later ones) are
    // events of their own.
    assert_eq!(traced.summary.events, plain.summary.events + 63);
}

#[test]
fn packets_waiting_on_a_plain_droptail_link_start_without_an_event_of_their_own() {
    // Six sources due at t = 0: one datagram goes on the wire, five wait, and all six are in
    // the propagation FIFO at once with their arrival times (`link.rs`, "Departures planned
    // at enqueue"). By 480 us the six deadlines are the only events handled; with the link
    // traced, the five starts are events too.
    let text = line(&["a", "b", "c", "d", "e", "f"].map(cbr).concat());
    for (trace, events) in [(None, 6), (Some("trace.packets={}"), 11)] {
        let mut overrides = vec!["duration=480us"];
        overrides.extend(trace);
        let mut sim = build(&text, &overrides).unwrap();
        assert_eq!(sim.run_loop(), StopReason::Duration);
        assert_eq!(sim.events, events);
        let access = sim.net.chans.iter().find(|c| c.link == "access").unwrap();
        let arrivals: Vec<u64> = access
            .propagation
            .iter()
            .map(|&(t, _, _)| t.as_nanos())
            .collect();
        // Back to back from 80 us, then 1 ms on the wire.
        assert_eq!(
            arrivals,
            (1..=6).map(|k| 1_000_000 + k * 80_000).collect::<Vec<_>>()
        );
        let out = sim.finish(StopReason::Duration);
        assert_eq!(link_u64(&out, "access", "a_to_b", "packets"), 6);
    }
}

#[test]
fn a_link_with_a_loss_model_red_no_delay_a_trace_a_capture_or_an_event_keeps_tx_done_events() {
    // Which channels plan their departures (`plan_departures`): only the DropTail ones with no
    // loss model and a delay that nothing watches and no link event names. The others keep
    // their `TxDone` events; of those, the ones that could be planned run them first at their
    // nanosecond.
    let text = line(&cbr("c"));
    // (override, planned and first for the exit link's two directions a_to_b, b_to_a)
    let cases: [(&str, [(bool, bool); 2]); 8] = [
        ("seed=1", [(true, true); 2]),
        (
            "links.exit.loss={type=\"uniform\",rate=0.01}",
            [(false, false); 2],
        ),
        ("links.exit.queue={type=\"red\"}", [(false, false); 2]),
        ("links.exit.delay=0s", [(false, false); 2]),
        ("trace.packets={links=[\"exit\"]}", [(false, true); 2]),
        (
            "trace.packets={links=[\"exit:b_to_a\"]}",
            [(true, true), (false, true)],
        ),
        ("trace.pcap=[\"r:exit\"]", [(false, true), (true, true)]),
        (
            "events=[{at=\"1s\",link=\"exit\",state=\"down\"}]",
            [(false, true); 2],
        ),
    ];
    for (set, expected) in cases {
        let sim = build(&text, &[set]).unwrap();
        let state = |link: &str, dir: &str| {
            let c = sim
                .net
                .chans
                .iter()
                .find(|c| c.link == link && c.direction == dir)
                .unwrap();
            (c.planned(), c.departures_first())
        };
        assert_eq!(
            [state("exit", "a_to_b"), state("exit", "b_to_a")],
            expected,
            "{set}"
        );
        assert_eq!(state("access", "a_to_b"), (true, true), "{set}");
    }
}

/// A short-flow storm on [`line`]: Poisson transfers of 10 KB from h1 to h2, 2,000 a second
/// (more than the 10 Mbit/s exit carries, so transfers pile up as well as finish).
fn storm(duration: &str) -> String {
    line(
        "[flows.web]\ntype = \"short_tcp\"\nsrc = \"h1\"\ndst = \"h2\"\narrival_rate = 2000.0\n\
         sizes = { dist = \"constant\", size = \"10KB\" }\n",
    )
    .replace("duration = \"1s\"", &format!("duration = \"{duration}\""))
}

#[test]
fn a_short_flow_storm_stops_at_its_memory_limit_with_its_rows_inside_the_limit() {
    // Issue 32: a storm grows by its transfers (each one's row, and the endpoints of those in
    // progress), not by packets; max_memory counted only packets and the series, so a storm
    // went on to GBs. Counted, the run stops at memory_limit before its transfers' share
    // passes the limit, and where it stops depends only on the run's own counts.
    use super::report::{FLOW_ROW_BYTES, TRANSFER_BYTES};
    let limit = 4u64 << 20;
    let out = run(&storm("100s"), &["limits.max_memory=4MiB"]);
    let s = &out.summary;
    assert_eq!(s.stop_reason, StopReason::MemoryLimit);
    let rows = out.flows.rows() as u64;
    let in_progress = out
        .flows
        .u64("completed")
        .unwrap()
        .iter()
        .filter(|&&c| c == 0)
        .count() as u64;
    let held = rows * FLOW_ROW_BYTES + in_progress * TRANSFER_BYTES;
    assert!(
        held <= limit,
        "{rows} rows, {in_progress} in progress: {held} B"
    );
    // It was the transfers that stopped it: they hold most of the limit, and the run had
    // simulated a few seconds, far short of its 100.
    assert!(
        held > limit / 2,
        "{rows} rows, {in_progress} in progress: {held} B"
    );
    assert!(s.sim_seconds < 10.0, "{}", s.sim_seconds);
    let again = run(&storm("100s"), &["limits.max_memory=4MiB"]);
    assert_eq!(
        again.flows, out.flows,
        "the stop does not depend on the machine"
    );
}

#[test]
fn a_storm_within_its_memory_limit_runs_to_its_end_as_before() {
    // The transfers' share comes out of the same limit as the packets: with room for both,
    // nothing stops early and nothing changes.
    let out = run(&storm("2s"), &[]);
    assert_eq!(out.summary.stop_reason, StopReason::Duration);
    assert!(out.flows.rows() > 3_000, "{}", out.flows.rows());
}

#[test]
fn the_wall_limit_leaves_time_for_the_result_tables() {
    // Issue 32: a storm stopped at max_wall 10 s took 16.4 s to exit, building and writing a
    // million rows. The time the rows will take counts against the limit.
    use super::engine::{wall_limit_reached, END_SECONDS_PER_ROW};
    assert!(!wall_limit_reached(4.0, 0, 5.0));
    assert!(wall_limit_reached(5.0, 0, 5.0));
    let rows_for_a_second = (1.0 / END_SECONDS_PER_ROW) as u64;
    assert!(!wall_limit_reached(3.9, rows_for_a_second, 5.0));
    assert!(wall_limit_reached(4.1, rows_for_a_second, 5.0));
    // A million rows stop a 5 s run before it starts.
    assert!(wall_limit_reached(0.0, 1_000_000, 5.0));
}

#[test]
fn the_rows_held_against_the_wall_limit_count_flows_samples_and_traced_packets() {
    let text = storm("1s")
        + "[trace]\ninterval = \"100ms\"\npackets = { nodes = [\"r\"], max_rows = 50 }\n";
    let mut sim = build(&text, &[]).unwrap();
    sim.run_loop();
    let rows = sim.table_rows();
    let out = sim.finish(StopReason::Duration);
    assert_eq!(
        rows,
        (out.flows.rows() + out.series.rows() + out.packets.rows()) as u64
    );
    assert!(out.packets.rows() > 0 && out.series.rows() > 0);
}

/// Three bulk TCP flows from h1 to h2 over [`line`]'s 10 Mbit/s exit for 3 s: the exit's
/// queue fills, so an AQM there drops (or marks) and reorders.
fn three_bulk_flows() -> String {
    let flow = |name: &str| format!("[flows.{name}]\ntype = \"tcp\"\nsrc = \"h1\"\ndst = \"h2\"\n");
    line(&[flow("f1"), flow("f2"), flow("f3")].concat())
}

#[test]
fn an_aqm_link_defers_its_dequeues_and_a_trace_on_it_changes_no_result() {
    // CoDel, FQ-CoDel, PIE and DualPI2 choose what leaves when the transmitter frees up; an
    // unwatched link runs those dequeues lazily, each at its own time, without a `TxDone`
    // event (`link.rs`, "Deferred dequeues"). A traced link keeps the events, run first at
    // their nanosecond: the results must be the same bits, with one event more for every
    // packet that waited. DualPI2 draws at dequeue (the same draws in the same order) and
    // CoDel and FQ-CoDel drop at dequeue (the engine ends those packets after settling).
    let text = three_bulk_flows();
    for queue in [
        "{type=\"codel\",limit=100}",
        "{type=\"fq_codel\",limit=100}",
        "{type=\"pie\",limit=100}",
        "{type=\"dualpi2\"}",
    ] {
        let set = format!("links.exit.a_to_b.queue={queue}");
        let plain = run(&text, &["duration=3s", &set]);
        let traced = run(
            &text,
            &["duration=3s", &set, "trace.packets={links=[\"exit\"]}"],
        );
        assert!(
            link_u64(&plain, "exit", "a_to_b", "drops_queue") > 0,
            "{queue}: the AQM acted"
        );
        assert_eq!(traced.flows, plain.flows, "{queue}");
        assert_eq!(traced.links, plain.links, "{queue}");
        assert!(traced.summary.events > plain.summary.events, "{queue}");
        assert_conserved(&plain);
    }
}

#[test]
fn only_an_unwatched_lossless_aqm_link_with_a_delay_defers_its_dequeues() {
    let text = line(&cbr("c"));
    // (override, the exit's a_to_b direction: deferred, departures first)
    let cases: [(&str, (bool, bool)); 7] = [
        ("links.exit.queue={type=\"codel\"}", (true, true)),
        ("links.exit.queue={type=\"fq_codel\"}", (true, true)),
        ("links.exit.queue={type=\"dualpi2\"}", (true, true)),
        // A shaper may hold its head with nothing on the wire to wake the channel.
        (
            "links.exit.queue={type=\"tbf\",rate=\"5Mbps\",burst=3000}",
            (false, false),
        ),
        ("links.exit.queue={type=\"red\"}", (false, false)),
        ("trace.pcap=[\"r:exit\"]", (false, true)),
        ("links.exit.delay=0s", (false, false)),
    ];
    for (set, expected) in cases {
        let mut overrides = vec![set];
        if set.starts_with("trace") {
            overrides.push("links.exit.queue={type=\"pie\"}");
        }
        if set.contains("delay") {
            overrides.push("links.exit.queue={type=\"codel\"}");
        }
        let sim = build(&text, &overrides).unwrap();
        let exit = sim
            .net
            .chans
            .iter()
            .find(|c| c.link == "exit" && c.direction == "a_to_b")
            .unwrap();
        assert_eq!(
            (exit.defers_dequeues(), exit.departures_first()),
            expected,
            "{set}"
        );
        assert!(!exit.planned(), "{set}");
    }
}
