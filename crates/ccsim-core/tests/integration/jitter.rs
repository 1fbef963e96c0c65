// SPDX-License-Identifier: MIT
//! Start jitter (`[jitter]`, `start_jitter`): a deterministic scenario gets one independent
//! replicate per seed, and the offsets move start times and phases and nothing else.
use crate::common::*;
use ccsim_core::jitter::flow_offset;
use ccsim_core::time::SimDuration;
use ccsim_core::RunOutput;

/// Two TCP flows through a DropTail bottleneck: no random component at all.
fn fixed() -> String {
    dumbbell(
        2,
        10,
        "20ms",
        "{ type = \"droptail\", limit = 30 }",
        "3s",
        "variant = \"sack\"",
    ) + "[trace]\ninterval = \"100ms\"\n"
}

/// Hosts `a` and `b` joined by link `l` (`link`: its rate, delay and other keys), for `duration`;
/// the flows follow.
fn two_hosts(duration: &str, link: &str) -> String {
    format!(
        "duration = \"{duration}\"\n[nodes]\na = \"host\"\nb = \"host\"\n\
         [links.l]\na = \"a\"\nb = \"b\"\n{link}\n"
    )
}

/// A time in seconds as the flows table gives it, back in nanoseconds.
fn ns(seconds: f64) -> u64 {
    (seconds * 1e9).round() as u64
}

/// `start_s` of flow `name`, in nanoseconds.
fn start_ns(out: &RunOutput, name: &str) -> u64 {
    let names = out.flows.str("name").expect("name column");
    let row = names
        .iter()
        .position(|n| n == name)
        .unwrap_or_else(|| panic!("no flow {name}"));
    ns(f64s(&out.flows, "start_s")[row])
}

/// `later` is `earlier` with every time (the second of each pair) `offset` ns later, except that
/// up to `missing` of the last items may be gone from `later` (moved past a stop or the end).
fn assert_moved_by(earlier: &[(u64, u64)], later: &[(u64, u64)], offset: u64, missing: usize) {
    assert!(
        later.len() <= earlier.len() && later.len() + missing >= earlier.len(),
        "{} items, then {}",
        earlier.len(),
        later.len()
    );
    for (&(key, t), &moved) in earlier.iter().zip(later) {
        assert_eq!((key, t + offset), moved);
    }
}

fn same_run(a: &RunOutput, b: &RunOutput) -> bool {
    a.flows == b.flows
        && a.links == b.links
        && a.series == b.series
        && a.packets == b.packets
        && a.summary.events == b.summary.events
}

/// The rows of the packets table for `flow` and `event`: (seq, time in ns), in order.
fn traced(out: &RunOutput, flow: &str, event: &str, reason: Option<&str>) -> Vec<(u64, u64)> {
    let t = &out.packets;
    let (flows, events, reasons) = (
        t.str("flow").expect("flow column"),
        t.str("event").expect("event column"),
        t.str("reason").expect("reason column"),
    );
    let (seq, time) = (u64s(t, "seq"), u64s(t, "time_ns"));
    (0..t.rows())
        .filter(|&i| flows[i] == flow && events[i] == event)
        .filter(|&i| reason.is_none_or(|r| reasons[i] == r))
        .map(|i| (seq[i], time[i]))
        .collect()
}

#[test]
fn with_jitter_on_the_same_seed_gives_the_same_bits() {
    let a = run_toml(&fixed(), &["jitter.start=5ms"], Some(7));
    let b = run_toml(&fixed(), &["jitter.start=5ms"], Some(7));
    assert!(same_run(&a, &b));
    assert!(u64s(&a.flows, "bytes_delivered").iter().all(|&d| d > 0));
}

#[test]
fn a_deterministic_scenario_gives_a_different_run_for_each_seed_with_jitter_on() {
    let runs: Vec<RunOutput> = (1..=4)
        .map(|seed| run_toml(&fixed(), &["jitter.start=5ms"], Some(seed)))
        .collect();
    for (i, a) in runs.iter().enumerate() {
        for b in &runs[i + 1..] {
            assert_ne!(a.flows, b.flows);
        }
    }
    // Without the jitter every seed gives the same run, as before.
    let a = run_toml(&fixed(), &[], Some(1));
    let b = run_toml(&fixed(), &[], Some(2));
    assert!(same_run(&a, &b));
}

#[test]
fn each_flow_starts_at_its_offset_drawn_within_the_window_and_seeds_spread_them() {
    let window = SimDuration::from_millis(2);
    let mut starts = Vec::new();
    for seed in 1..=20 {
        let out = run_toml(&fixed(), &["jitter.start=2ms", "duration=1ms"], Some(seed));
        for f in ["f1", "f2"] {
            let s = start_ns(&out, f);
            // The first draw of the flow's own stream, `jitter/flow/<name>`, in [0, 2 ms).
            assert_eq!(s, flow_offset(seed, f, window).as_nanos());
            assert!(s < 2_000_000, "{f} starts at {s} ns");
            starts.push(s);
        }
    }
    starts.sort_unstable();
    starts.dedup();
    assert_eq!(starts.len(), 40, "40 offsets should all differ");
}

#[test]
fn a_zero_window_runs_bit_for_bit_as_a_scenario_without_jitter() {
    let none = run_toml(&fixed(), &[], Some(3));
    for zero in [
        &["jitter.start=0s"][..],
        &["jitter={}"],
        &["flows.f1.start_jitter=0s", "flows.f2.start_jitter=0ns"],
        &[
            "jitter.start=10ms",
            "flows.f1.start_jitter=0s",
            "flows.f2.start_jitter=0s",
        ],
    ] {
        assert!(
            same_run(&none, &run_toml(&fixed(), zero, Some(3))),
            "{zero:?}"
        );
    }
}

#[test]
fn a_flows_own_window_overrides_the_section_and_zero_turns_it_off() {
    let out = run_toml(
        &fixed(),
        &[
            "jitter.start=5ms",
            "flows.f1.start_jitter=0s",
            "flows.f2.start=1s",
        ],
        Some(9),
    );
    assert_eq!(start_ns(&out, "f1"), 0);
    let f2 = flow_offset(9, "f2", SimDuration::from_millis(5)).as_nanos();
    assert!(f2 > 0);
    assert_eq!(start_ns(&out, "f2"), 1_000_000_000 + f2);
}

#[test]
fn adding_a_flow_does_not_change_an_existing_flows_offset() {
    let two = run_toml(&fixed(), &["jitter.start=5ms", "duration=1s"], Some(4));
    let three = run_toml(
        &fixed(),
        &[
            "jitter.start=5ms",
            "duration=1s",
            "flows.extra={type=\"cbr\", src=\"h1\", dst=\"d2\", rate=\"1Mbps\"}",
        ],
        Some(4),
    );
    for f in ["f1", "f2"] {
        assert_eq!(start_ns(&two, f), start_ns(&three, f));
    }
    assert!(start_ns(&three, "extra") < 5_000_000);
}

/// One 1 Mbit/s CBR stream over a link that loses 10 % of what crosses it, and every event of
/// its packets traced.
fn lossy_cbr() -> String {
    two_hosts(
        "2s",
        "rate = \"10Mbps\"\ndelay = \"5ms\"\n\
         loss = { type = \"uniform\", rate = 0.1, direction = \"a_to_b\" }",
    ) + r#"
[flows.cbr]
type = "cbr"
src = "a"
dst = "b"
rate = "1Mbps"
start = "100ms"
stop = "1.5s"
[trace]
packets = {}
"#
}

#[test]
fn the_jitter_moves_a_cbr_stream_in_time_and_the_loss_model_drops_the_same_datagrams() {
    let plain = run_toml(&lossy_cbr(), &[], Some(5));
    let jittered = run_toml(&lossy_cbr(), &["jitter.start=3ms"], Some(5));
    let offset = flow_offset(5, "cbr", SimDuration::from_millis(3)).as_nanos();
    assert!(offset > 0);
    assert_eq!(start_ns(&jittered, "cbr"), 100_000_000 + offset);
    // Every datagram leaves `offset` later; the last ones may fall after `stop`.
    let (sent, sent_j) = (
        traced(&plain, "cbr", "sent", None),
        traced(&jittered, "cbr", "sent", None),
    );
    assert!(sent.len() > 150);
    assert_moved_by(&sent, &sent_j, offset, 1);
    // The loss model's k-th draw decides the k-th datagram's fate in both runs: the same
    // datagrams are lost, only later.
    let lost = |out: &RunOutput| -> Vec<(u64, u64)> {
        traced(out, "cbr", "dropped", Some("loss"))
            .into_iter()
            .filter(|&(seq, _)| seq < sent_j.len() as u64)
            .collect()
    };
    let (lost, lost_j) = (lost(&plain), lost(&jittered));
    assert!(lost.len() > 5, "{} lost", lost.len());
    assert_moved_by(&lost, &lost_j, offset, 0);
}

#[test]
fn an_onoff_source_keeps_its_periods_and_shifts_its_phase() {
    let onoff = lossy_cbr()
        .replace("type = \"cbr\"", "type = \"onoff\"")
        .replace(
            "rate = \"1Mbps\"",
            "rate = \"2Mbps\"\non = \"50ms\"\noff = \"120ms\"\ndistribution = \"exponential\"",
        );
    let plain = run_toml(&onoff, &[], Some(6));
    let jittered = run_toml(&onoff, &["flows.cbr.start_jitter=20ms"], Some(6));
    let offset = flow_offset(6, "cbr", SimDuration::from_millis(20)).as_nanos();
    assert!(offset > 0);
    let (sent, sent_j) = (
        traced(&plain, "cbr", "sent", None),
        traced(&jittered, "cbr", "sent", None),
    );
    // The same exponential on and off periods (the source's own stream), each `offset` later:
    // the gaps between datagrams are the same, whole silences included.
    assert!(sent.len() > 50);
    assert_moved_by(&sent, &sent_j, offset, 40);
}

#[test]
fn a_short_tcp_generator_starts_its_arrival_process_at_its_offset() {
    let web = two_hosts("3s", "rate = \"10Mbps\"\ndelay = \"10ms\"")
        + r#"
[flows.web]
type = "short_tcp"
src = "a"
dst = "b"
arrival_rate = 20.0
sizes = { dist = "pareto", mean = "20KB", shape = 1.2 }
"#;
    // (size in bytes, start in ns) of each transfer, in order.
    let transfers = |out: &RunOutput| -> Vec<(u64, u64)> {
        let sizes = f64s(&out.flows, "size_bytes");
        (0..out.flows.rows())
            .map(|i| (sizes[i] as u64, ns(f64s(&out.flows, "start_s")[i])))
            .collect()
    };
    let plain = transfers(&run_toml(&web, &[], Some(2)));
    let jittered = transfers(&run_toml(&web, &["jitter.start=50ms"], Some(2)));
    let offset = flow_offset(2, "web", SimDuration::from_millis(50)).as_nanos();
    assert!(plain.len() > 30);
    // The same gaps and sizes (the generator's own streams), every arrival `offset` later.
    assert_moved_by(&plain, &jittered, offset, 2);
}

#[test]
fn every_kind_of_flow_sends_its_first_packet_at_its_jittered_start() {
    let text = two_hosts("1s", "rate = \"100Mbps\"\ndelay = \"1ms\"")
        + r#"
[flows.tcp]
type = "tcp"
src = "a"
dst = "b"
size = "20KB"
[flows.cbr]
type = "cbr"
src = "a"
dst = "b"
rate = "1Mbps"
start = "10ms"
[flows.onoff]
type = "onoff"
src = "b"
dst = "a"
rate = "1Mbps"
on = "10ms"
off = "10ms"
[flows.ping]
type = "ping"
src = "a"
dst = "b"
interval = "100ms"
[flows.sctp]
type = "sctp"
src = "b"
dst = "a"
start = "20ms"
[trace]
packets = {}
"#;
    let window = SimDuration::from_millis(7);
    let out = run_toml(&text, &["jitter.start=7ms"], Some(12));
    let spec = ccsim_core::load_scenario(&text, &[], None).unwrap().spec;
    for (name, f) in &spec.flows {
        let expected = f.start.as_nanos() + flow_offset(12, name, window).as_nanos();
        assert_eq!(start_ns(&out, name), expected, "{name}");
        let first = traced(&out, name, "sent", None)
            .first()
            .map(|&(_, t)| t)
            .unwrap_or_else(|| panic!("{name} sent nothing"));
        assert_eq!(first, expected, "{name}");
    }
}

#[test]
fn a_flow_jittered_past_the_end_of_the_run_never_starts() {
    // f1 is declared 1 ms before the end of a 3 s run, with a 5 ms window: the first seed whose
    // offset is over 1 ms moves its start past the end, and it sends nothing.
    let window = SimDuration::from_millis(5);
    let seed = (1..)
        .find(|&s| flow_offset(s, "f1", window) > SimDuration::from_millis(1))
        .expect("some seed draws more than 1 ms of 5");
    let out = run_toml(
        &fixed(),
        &["flows.f1.start=2.999s", "flows.f1.start_jitter=5ms"],
        Some(seed),
    );
    let start = start_ns(&out, "f1");
    assert_eq!(
        start,
        2_999_000_000 + flow_offset(seed, "f1", window).as_nanos()
    );
    assert!(start > 3_000_000_000);
    assert_eq!(u64s(&out.flows, "packets_sent")[0], 0);
    assert_eq!(u64s(&out.flows, "bytes_delivered")[0], 0);
    assert!(u64s(&out.flows, "bytes_delivered")[1] > 0);
}
