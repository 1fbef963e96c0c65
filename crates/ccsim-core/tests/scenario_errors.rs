// SPDX-License-Identifier: MIT
//! Every scenario error names the field and what would be accepted; these are the messages
//! documented in docs/scenario.md, checked word for word.

use ccsim_core::scenario::{FlowKind, LossSpec, QueueLimit, QueueSpec, TcpSpec};
use ccsim_core::{load_scenario, load_swept_scenario, Loaded, ScenarioError};

/// Hosts h1 and h2 joined through router r1 by links `access` and `bottleneck`, one TCP flow.
const BASE: &str = r#"
duration = "10s"

[nodes]
h1 = "host"
h2 = "host"
r1 = "router"

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
"#;

fn load(text: &str, overrides: &[&str]) -> Result<Loaded, ScenarioError> {
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    load_scenario(text, &overrides, None)
}

/// The error of BASE with `overrides`, as displayed ("path: message").
fn error_with(overrides: &[&str]) -> String {
    error_of(BASE, overrides)
}

fn error_of(text: &str, overrides: &[&str]) -> String {
    match load(text, overrides) {
        Ok(_) => panic!("expected an error with {overrides:?}"),
        Err(e) => e.to_string(),
    }
}

/// BASE with the line `line` removed.
fn without(line: &str) -> String {
    assert!(BASE.contains(line), "BASE has no line {line:?}");
    BASE.replacen(&format!("{line}\n"), "", 1)
}

#[test]
fn the_base_scenario_is_valid() {
    let loaded = load(BASE, &[]).unwrap();
    assert_eq!(loaded.spec.flows.len(), 1);
    assert_eq!(loaded.spec.links.len(), 2);
}

#[test]
fn the_complete_example_in_the_documentation_loads() {
    let doc = include_str!("../../../docs/scenario.md");
    let start = doc
        .find("```toml\n")
        .expect("docs/scenario.md has a toml example")
        + 8;
    let end = start + doc[start..].find("```").unwrap();
    let loaded = load(&doc[start..end], &[]).unwrap_or_else(|e| panic!("{e}"));
    assert!(loaded.spec.flows.len() >= 4);
    assert!(loaded.spec.routing.routes.len() == 1);
}

// ---- the messages docs/scenario.md documents --------------------------------------------

#[test]
fn a_rate_without_a_valid_unit_names_the_field_and_an_example() {
    assert_eq!(
        error_with(&["links.bottleneck.rate=10 Mbs"]),
        r#"links.bottleneck.rate: "10 Mbs" is not a rate, e.g. "10Mbps""#
    );
}

#[test]
fn a_missing_rate_says_what_kind_of_value_is_needed() {
    let text = BASE.replacen("rate = \"10Mbps\"\n", "", 1);
    assert_eq!(
        error_of(&text, &[]),
        r#"links.bottleneck.rate: missing; a rate such as "10Mbps""#
    );
}

#[test]
fn a_duration_given_as_a_bare_number_shows_the_units_and_what_was_found() {
    assert_eq!(
        error_with(&["flows.f1.start=5"]),
        r#"flows.f1.start: expected a duration such as "1.5s" (units ns, us, ms, s, min), found integer 5"#
    );
}

#[test]
fn a_duration_string_without_a_unit_asks_for_one() {
    assert_eq!(
        error_with(&["flows.f1.start=\"5\""]),
        r#"flows.f1.start: "5" has no unit; add one, e.g. "5s" (units ns, us, ms, s, min)"#
    );
}

#[test]
fn an_unknown_tcp_variant_lists_the_variants() {
    assert_eq!(
        error_with(&["flows.f1.variant=vegas"]),
        r#"flows.f1.variant: "vegas" is not one of reno, newreno, sack, prr"#
    );
}

#[test]
fn a_flow_to_an_unknown_node_lists_the_nodes() {
    assert_eq!(
        error_with(&["flows.f1.dst=h9"]),
        r#"flows.f1.dst: no node named "h9"; nodes are h1, h2, r1"#
    );
}

#[test]
fn hosts_joined_only_through_another_host_are_not_connected() {
    let text = BASE.replace("r1 = \"router\"", "r1 = \"router\"\nh3 = \"host\"")
        + "[links.tail]\na = \"h2\"\nb = \"h3\"\nrate = \"1Mbps\"\ndelay = \"1ms\"\n";
    assert_eq!(
        error_of(&text, &["flows.f1.dst=h3"]),
        "flows.f1: h1 and h3 are not connected (hosts do not forward; only routers do)"
    );
}

#[test]
fn a_host_without_links_is_not_connected() {
    let text = BASE.replace("r1 = \"router\"", "r1 = \"router\"\nh3 = \"host\"");
    assert_eq!(
        error_of(&text, &["flows.f1.src=h3"]),
        "flows.f1: h3 and h2 are not connected (hosts do not forward; only routers do)"
    );
}

// ---- unknown keys at each level ------------------------------------------------------------

#[test]
fn an_unknown_top_level_key_lists_the_sections() {
    assert_eq!(
        error_with(&["durration=\"5s\""]),
        "durration: unknown key; allowed: seed, duration, limits, nodes, links, tcp, flows, \
         routing, trace, events, atm, jitter"
    );
}

#[test]
fn an_unknown_link_key_lists_the_link_keys() {
    assert_eq!(
        error_with(&["links.bottleneck.rat=\"10Mbps\""]),
        "links.bottleneck.rat: unknown key; allowed: a, b, rate, delay, mtu, queue, loss, \
         a_to_b, b_to_a"
    );
}

#[test]
fn unknown_keys_in_limits_trace_and_routing_are_rejected() {
    assert_eq!(
        error_with(&["limits.max_time=\"1s\""]),
        "limits.max_time: unknown key; allowed: max_events, max_wall, max_memory"
    );
    assert_eq!(
        error_with(&["trace.every=\"1s\""]),
        "trace.every: unknown key; allowed: interval, packets, pcap, pcap_snaplen"
    );
    assert_eq!(
        error_with(&["routing.metrics=\"hops\""]),
        "routing.metrics: unknown key; allowed: metric, routes, ttl"
    );
    assert_eq!(
        error_with(&["routing.routes=[{at=\"r1\", to=\"h2\", through=\"bottleneck\"}]"]),
        "routing.routes[0].through: unknown key; allowed: at, to, via"
    );
}

#[test]
fn unknown_keys_in_nodes_and_hooks_are_rejected() {
    assert_eq!(
        error_with(&["nodes.r1={type=\"router\", kind=\"x\"}"]),
        "nodes.r1.kind: unknown key; allowed: type, hook"
    );
    assert_eq!(
        error_with(&["nodes.r1={type=\"router\", hook={type=\"impair\", loss=0.1}}"]),
        "nodes.r1.hook.loss: unknown key; allowed: type, drop, delay"
    );
}

#[test]
fn unknown_keys_in_queues_depend_on_the_queue_type() {
    assert_eq!(
        error_with(&["links.bottleneck.queue={type=\"droptail\", min_th=5}"]),
        "links.bottleneck.queue.min_th: unknown key; allowed: type, limit"
    );
    assert_eq!(
        error_with(&["links.bottleneck.queue={type=\"red\", maxp=0.1}"]),
        "links.bottleneck.queue.maxp: unknown key; allowed: type, limit, min_th, max_th, \
         max_p, w_q, gentle, ecn, mean_packet_size"
    );
}

#[test]
fn aqm_queue_keys_are_checked_with_the_field_named() {
    let q = |v: &str| error_with(&[&format!("links.bottleneck.queue={v}")]);
    assert_eq!(
        q("{type=\"codel\", quantum=1514}"),
        "links.bottleneck.queue.quantum: unknown key; allowed: type, limit, target, interval, \
         maxpacket, ecn"
    );
    assert_eq!(
        q("{type=\"codel\", target=\"0ms\"}"),
        "links.bottleneck.queue.target: \"0ms\" is out of range; must be greater than 0"
    );
    assert_eq!(
        q("{type=\"fq_codel\", flows=0}"),
        "links.bottleneck.queue.flows: 0 is out of range; must be from 1 to 65536"
    );
    assert_eq!(
        q("{type=\"fq_codel\", limit=\"10KB\"}"),
        "links.bottleneck.queue.limit: expected an integer, found string \"10KB\""
    );
    assert_eq!(
        q("{type=\"pie\", mark_ecnth=1.5}"),
        "links.bottleneck.queue.mark_ecnth: 1.5 is out of range; must be from 0 to 1"
    );
    assert_eq!(
        q("{type=\"pie\", alpha=-1}"),
        "links.bottleneck.queue.alpha: -1 is out of range; must be greater than 0"
    );
    assert_eq!(
        q("{type=\"dualpi2\", p_cmax=0.25}"),
        "links.bottleneck.queue.p_cmax: unknown key; allowed: type, limit, target, t_update, \
         alpha, beta, k, min_th, range, th_len, tshift"
    );
    assert_eq!(
        q("{type=\"dualpi2\", k=-2}"),
        "links.bottleneck.queue.k: -2 is out of range; must be 0 or more"
    );
    assert_eq!(
        q("{type=\"dualpi2\", t_update=\"0s\"}"),
        "links.bottleneck.queue.t_update: \"0s\" is out of range; must be greater than 0"
    );
    assert_eq!(
        q("{type=\"dualpi2\", min_th=800}"),
        "links.bottleneck.queue.min_th: expected a duration such as \"1.5s\" (units ns, us, ms, s, \
         min), found integer 800"
    );
    assert_eq!(
        q("{type=\"dualpi2\", th_len=-1}"),
        "links.bottleneck.queue.th_len: -1 is out of range; must be from 0 to 4294967296"
    );
    assert_eq!(
        q("{type=\"dualpi2\", beta=0}"),
        "links.bottleneck.queue.beta: 0 is out of range; must be greater than 0"
    );
    assert_eq!(
        q("{type=\"tbf\", rate=\"1Mbps\"}"),
        "links.bottleneck.queue.burst: missing; a size such as \"64KB\""
    );
    assert_eq!(
        q("{type=\"tbf\", rate=\"1Mbps\", burst=\"1KB\"}"),
        "links.bottleneck.queue.burst: 1000 B is less than the link's MTU (1500 B); the bucket \
         must hold the largest packet, or that packet could never leave"
    );
    assert_eq!(
        q("{type=\"tbf\", rate=\"0bps\", burst=\"2KB\"}"),
        "links.bottleneck.queue.rate: \"0bps\" is out of range; must be greater than 0"
    );
}

#[test]
fn unknown_keys_in_loss_depend_on_the_loss_type() {
    assert_eq!(
        error_with(&["links.bottleneck.loss={type=\"uniform\", p=0.1}"]),
        "links.bottleneck.loss.p: unknown key; allowed: type, rate, direction"
    );
    assert_eq!(
        error_with(&["links.bottleneck.loss={type=\"gilbert_elliott\", p_gb=0.1}"]),
        "links.bottleneck.loss.p_gb: unknown key; allowed: type, p_good_to_bad, \
         p_bad_to_good, loss_good, loss_bad, direction"
    );
}

#[test]
fn a_direction_table_takes_no_direction_key_and_only_four_keys() {
    assert_eq!(
        error_with(&[
            "links.bottleneck.a_to_b.loss={type=\"uniform\", rate=0.1, direction=\"both\"}"
        ]),
        "links.bottleneck.a_to_b.loss.direction: unknown key; allowed: type, rate"
    );
    assert_eq!(
        error_with(&["links.bottleneck.a_to_b.mtu=1000"]),
        "links.bottleneck.a_to_b.mtu: unknown key; allowed: rate, delay, queue, loss"
    );
}

#[test]
fn unknown_keys_in_flows_depend_on_the_flow_type() {
    assert_eq!(
        error_with(&["flows.f2={type=\"cbr\", src=\"h1\", dst=\"h2\", rate=\"1Mbps\", size=5}"]),
        "flows.f2.size: unknown key; allowed: type, src, dst, start, stop, start_jitter, count, \
         rate, packet_size"
    );
    assert_eq!(
        error_with(&["flows.f2={type=\"onoff\", src=\"h1\", dst=\"h2\", mss=5}"]),
        "flows.f2.mss: unknown key; allowed: type, src, dst, start, stop, start_jitter, count, \
         rate, packet_size, on, off, distribution"
    );
    assert_eq!(
        error_with(&["flows.f1.windw=\"inf\""]),
        "flows.f1.windw: unknown key; allowed: type, src, dst, start, stop, start_jitter, count, \
         size, preset, variant, prr_bound, cc, mss, header_bytes, initial_window, initial_ssthresh, \
         max_window, rcv_buffer, growth, abc_limit, dupthresh, limited_transmit, delayed_ack, \
         delack_timeout, delack_count, max_sack_blocks, rto_initial, rto_min, rto_max, \
         clock_granularity, recover_guard, rtt_sampling, restart_after_idle, handshake, ecn, \
         ect_all, timestamps, timestamp_clock, rto_backoff_reset, ack_credit, whole_segment_ssthresh, \
         ssthresh_flight, partial_ack_send, recovery_exit_credit, pacing, pacing_ss_ratio, \
         pacing_ca_ratio, pacing_quantum, pacing_initial_quantum, dsack, loss_detection, \
         rack_min_rtt_divisor, rack_reo_wnd_persist, tlp, tlp_srtt_multiple, tlp_max_ack_delay, \
         tlp_initial_pto"
    );
}

#[test]
fn the_tcp_table_takes_only_tcp_keys() {
    assert_eq!(
        error_with(&["tcp.size=\"10KB\""]),
        "tcp.size: unknown key; allowed: preset, variant, prr_bound, cc, mss, header_bytes, \
         initial_window, initial_ssthresh, max_window, rcv_buffer, growth, abc_limit, \
         dupthresh, limited_transmit, delayed_ack, delack_timeout, delack_count, \
         max_sack_blocks, rto_initial, rto_min, rto_max, clock_granularity, recover_guard, \
         rtt_sampling, restart_after_idle, handshake, ecn, ect_all, timestamps, timestamp_clock, \
         rto_backoff_reset, ack_credit, whole_segment_ssthresh, ssthresh_flight, \
         partial_ack_send, recovery_exit_credit, pacing, pacing_ss_ratio, pacing_ca_ratio, \
         pacing_quantum, pacing_initial_quantum, dsack, loss_detection, rack_min_rtt_divisor, \
         rack_reo_wnd_persist, tlp, tlp_srtt_multiple, tlp_max_ack_delay, tlp_initial_pto"
    );
}

#[test]
fn a_pacing_key_without_pacing_is_refused_naming_where_it_was_set() {
    assert_eq!(
        error_with(&["tcp.pacing_quantum=4"]),
        "flows.f1: pacing_quantum (set at tcp.pacing_quantum) only applies with pacing = true, \
         but this flow's pacing is off"
    );
    assert_eq!(
        error_with(&[
            "tcp.pacing=true",
            "flows.f1.pacing=false",
            "tcp.pacing_ca_ratio=1.5"
        ]),
        "flows.f1: pacing_ca_ratio (set at tcp.pacing_ca_ratio) only applies with pacing = \
         true, but this flow's pacing is off"
    );
    assert_eq!(
        error_with(&["tcp.pacing=true", "tcp.pacing_quantum=0"]),
        "tcp.pacing_quantum: 0 is out of range; must be from 1 to 4294967295"
    );
    assert_eq!(
        error_with(&["tcp.pacing=true", "tcp.pacing_ss_ratio=-2"]),
        "tcp.pacing_ss_ratio: -2 is out of range; must be greater than 0"
    );
    let ok = load(BASE, &["tcp.pacing=true", "flows.f1.pacing_quantum=3"]).unwrap();
    let FlowKind::Tcp { tcp, .. } = &ok.spec.flows["f1"].kind else {
        panic!("not TCP")
    };
    let p = tcp.pacing.expect("paced");
    assert_eq!(
        (p.quantum, p.initial_quantum, p.ss_ratio, p.ca_ratio),
        (3, 10, 2.0, 1.2)
    );
}

#[test]
fn bbr_paces_by_default_and_refuses_pacing_off_and_the_window_pacing_ratios() {
    let ok = load(BASE, &["tcp.cc=\"bbr\""]).unwrap();
    let FlowKind::Tcp { tcp, .. } = &ok.spec.flows["f1"].kind else {
        panic!("not TCP")
    };
    assert!(tcp.pacing.is_some(), "BBR is paced without being asked");
    assert_eq!(
        error_with(&["tcp.cc=\"bbr\"", "flows.f1.pacing=false"]),
        "flows.f1: cc = \"bbr\" sends at its model's rate and needs pacing, but pacing = false \
         is set at flows.f1.pacing"
    );
    assert_eq!(
        error_with(&["tcp.cc=\"bbr\"", "tcp.pacing_ss_ratio=3"]),
        "flows.f1: pacing_ss_ratio (set at tcp.pacing_ss_ratio) sets the pacing rate of a \
         window-based controller; with cc = \"bbr\" the rate is BBR's"
    );
}

#[test]
fn bbr_constants_are_checked_naming_the_field() {
    assert_eq!(
        error_with(&["tcp.cc={ type = \"bbr\", high_gain = 1 }"]),
        "tcp.cc.high_gain: 1 is out of range; must be greater than 1 (Startup must grow the rate)"
    );
    assert_eq!(
        error_with(&["tcp.cc={ type = \"bbr\", probe_gain = 0.9 }"]),
        "tcp.cc.probe_gain: 0.9 is out of range; must be at least 1"
    );
    assert_eq!(
        error_with(&["tcp.cc={ type = \"bbr\", pacing_margin = 1 }"]),
        "tcp.cc.pacing_margin: 1 is out of range; must be at least 0 and less than 1"
    );
    assert_eq!(
        error_with(&["tcp.cc={ type = \"bbr\", cruise_phases = 2, random_phases = 4 }"]),
        "tcp.cc: random_phases (4) must be at most cruise_phases + 1 (3): the first phase of \
         ProbeBW is drawn among the cycle's phases but the draining one"
    );
    assert_eq!(
        error_with(&["tcp.cc={ type = \"bbr\", gain = 2 }"]),
        "tcp.cc.gain: unknown key; allowed: type, high_gain, drain_gain, cwnd_gain, probe_gain, \
         drain_phase_gain, cruise_phases, random_phases, bw_window_rounds, min_rtt_window, \
         probe_rtt_duration, min_cwnd_segments, full_bw_threshold, full_bw_rounds, \
         pacing_margin, budget_segments, init_cwnd_segments, nominal_rtt"
    );
}

#[test]
fn unknown_keys_in_size_distributions_depend_on_the_distribution() {
    let flow = "flows.f2={type=\"short_tcp\", src=\"h1\", dst=\"h2\", arrival_rate=1, sizes=";
    assert_eq!(
        error_with(&[&format!(
            "{flow}{{dist=\"pareto\", mean=\"1KB\", shape=2, sigma=1}}}}"
        )]),
        "flows.f2.sizes.sigma: unknown key; allowed: dist, mean, scale, shape"
    );
    assert_eq!(
        error_with(&[&format!("{flow}{{dist=\"constant\", mean=\"1KB\"}}}}")]),
        "flows.f2.sizes.mean: unknown key; allowed: dist, size"
    );
}

// ---- types, units and ranges ---------------------------------------------------------------

#[test]
fn a_missing_duration_says_what_kind_of_value_is_needed() {
    assert_eq!(
        error_of(&without("duration = \"10s\""), &[]),
        r#"duration: missing; a duration such as "1.5s""#
    );
}

#[test]
fn a_zero_run_duration_is_out_of_range() {
    assert_eq!(
        error_with(&["duration=0s"]),
        r#"duration: "0s" is out of range; must be greater than 0"#
    );
}

#[test]
fn a_negative_duration_is_rejected() {
    assert_eq!(
        error_with(&["links.access.delay=-1ms"]),
        r#"links.access.delay: "-1ms" is negative; a duration must be >= 0"#
    );
}

#[test]
fn a_jitter_window_must_be_a_duration_of_at_least_zero() {
    assert_eq!(
        error_with(&["jitter.start=-2ms"]),
        r#"jitter.start: "-2ms" is negative; a duration must be >= 0"#
    );
    assert_eq!(
        error_with(&["jitter.start=0.002"]),
        r#"jitter.start: expected a duration such as "1.5s" (units ns, us, ms, s, min), found float 0.002"#
    );
    assert_eq!(
        error_with(&["flows.f1.start_jitter=2"]),
        r#"flows.f1.start_jitter: expected a duration such as "1.5s" (units ns, us, ms, s, min), found integer 2"#
    );
    assert_eq!(
        error_with(&["jitter.stop=1ms"]),
        "jitter.stop: unknown key; allowed: start"
    );
    assert_eq!(
        error_with(&["jitter=\"2ms\""]),
        r#"jitter: expected a table such as { start = "2ms" }, found string "2ms""#
    );
}

#[test]
fn a_jitter_window_that_could_start_a_flow_at_its_stop_names_the_key_it_came_from() {
    assert_eq!(
        error_with(&["flows.f1.stop=2ms", "jitter.start=2ms"]),
        "jitter.start: 2ms is not less than stop - start of flows.f1 (2ms): its start offset \
         could reach its stop; lower jitter.start or give flows.f1 its own start_jitter"
    );
    assert_eq!(
        error_with(&["flows.f1.stop=2ms", "flows.f1.start_jitter=1s"]),
        "flows.f1.start_jitter: 1s is not less than stop - start (2ms): a start offset drawn \
         from [0, 1s) could reach stop; lower it"
    );
}

#[test]
fn a_rate_given_as_a_number_shows_the_units() {
    assert_eq!(
        error_with(&["links.access.rate=10000000"]),
        r#"links.access.rate: expected a rate such as "10Mbps" (units bps, Kbps, Mbps, Gbps), found integer 10000000"#
    );
}

#[test]
fn a_zero_rate_is_out_of_range() {
    assert_eq!(
        error_with(&["links.access.rate=0Mbps"]),
        r#"links.access.rate: "0Mbps" is out of range; must be greater than 0"#
    );
}

#[test]
fn a_size_with_an_unknown_unit_lists_the_size_units() {
    assert_eq!(
        error_with(&["flows.f1.size=\"100 KBytes\""]),
        r#"flows.f1.size: "100 KBytes" is not a size, e.g. "64KB" (units B, KB, MB, GB, KiB, MiB, GiB)"#
    );
}

#[test]
fn segment_counts_are_only_accepted_in_tcp_window_fields() {
    assert_eq!(
        error_with(&["flows.f1.size=20pkt"]),
        r#"flows.f1.size: "20pkt" is not a size, e.g. "64KB" (units B, KB, MB, GB, KiB, MiB, GiB)"#
    );
    assert_eq!(
        error_with(&["flows.f1.max_window=\"20 packets\""]),
        r#"flows.f1.max_window: "20 packets" is not a size, e.g. "64KB" or "20pkt" (units B, KB, MB, GB, KiB, MiB, GiB, pkt, seg)"#
    );
}

#[test]
fn a_window_of_the_wrong_type_lists_the_three_forms() {
    assert_eq!(
        error_with(&["flows.f1.initial_ssthresh=true"]),
        r#"flows.f1.initial_ssthresh: expected "inf", a size such as "64KB" or a segment count such as "20pkt", found boolean true"#
    );
    assert_eq!(
        error_with(&["flows.f1.rcv_buffer=\"inf\""]),
        r#"flows.f1.rcv_buffer: "inf" is not a size, e.g. "64KB" or "20pkt" (units B, KB, MB, GB, KiB, MiB, GiB, pkt, seg)"#
    );
}

#[test]
fn a_size_of_the_wrong_type_shows_both_forms() {
    assert_eq!(
        error_with(&["links.access.mtu=1.5"]),
        r#"links.access.mtu: expected a size such as "64KB" (units B, KB, MB, GB, KiB, MiB, GiB) or an integer number of bytes, found float 1.5"#
    );
}

#[test]
fn integer_fields_reject_floats_and_out_of_range_values() {
    assert_eq!(
        error_with(&["flows.f1.dupthresh=2.5"]),
        "flows.f1.dupthresh: expected an integer, found float 2.5"
    );
    assert_eq!(
        error_with(&["flows.f1.max_sack_blocks=5"]),
        "flows.f1.max_sack_blocks: 5 is out of range; must be from 1 to 4"
    );
    assert_eq!(
        error_with(&["limits.max_events=0"]),
        "limits.max_events: 0 is out of range; must be at least 1"
    );
    assert_eq!(
        error_with(&["flows.f1.mss=0"]),
        "flows.f1.mss: 0 is out of range; must be from 1 to 4294967295"
    );
}

#[test]
fn a_cbr_packet_must_hold_the_udp_and_ip_headers() {
    assert_eq!(
        error_with(&[
            "flows.f2={type=\"cbr\", src=\"h1\", dst=\"h2\", rate=\"1Mbps\", packet_size=28}"
        ]),
        "flows.f2.packet_size: 28 is out of range; must be from 29 to 4294967295"
    );
}

#[test]
fn the_seed_must_be_a_non_negative_integer() {
    assert_eq!(
        error_with(&["seed=-1"]),
        "seed: -1 is out of range; must be at least 0"
    );
    assert_eq!(
        error_with(&["seed=\"one\""]),
        r#"seed: expected an integer, found string "one""#
    );
    let e = load_scenario(BASE, &[], Some(u64::MAX)).unwrap_err();
    assert_eq!(
        e.to_string(),
        "seed: 18446744073709551615 is out of range; must be from 0 to 9223372036854775807"
    );
}

#[test]
fn probabilities_must_lie_between_zero_and_one() {
    assert_eq!(
        error_with(&["links.bottleneck.loss={type=\"uniform\", rate=1.5}"]),
        "links.bottleneck.loss.rate: 1.5 is out of range; must be from 0 to 1"
    );
    assert_eq!(
        error_with(&["links.bottleneck.loss={type=\"uniform\", rate=\"1%\"}"]),
        r#"links.bottleneck.loss.rate: expected a probability (a number from 0 to 1), found string "1%""#
    );
    assert_eq!(
        error_with(&["links.bottleneck.loss={type=\"ber\"}"]),
        "links.bottleneck.loss.ber: missing; a probability (a number from 0 to 1)"
    );
}

#[test]
fn booleans_must_be_true_or_false() {
    assert_eq!(
        error_with(&["flows.f1.delayed_ack=yes"]),
        r#"flows.f1.delayed_ack: expected true or false, found string "yes""#
    );
}

#[test]
fn a_choice_of_the_wrong_type_lists_the_choices() {
    assert_eq!(
        error_with(&["flows.f1.type=1"]),
        "flows.f1.type: expected one of tcp, cbr, onoff, short_tcp, sctp, ping, found integer 1"
    );
    assert_eq!(
        error_of(&without("type = \"tcp\""), &[]),
        "flows.f1.type: missing; one of tcp, cbr, onoff, short_tcp, sctp, ping"
    );
    assert_eq!(
        error_with(&["flows.f1.initial_window=\"rfc9999\""]),
        r#"flows.f1.initial_window: "rfc9999" is not one of rfc5681, rfc3390, rfc6928"#
    );
    assert_eq!(
        error_with(&["flows.f1.initial_window=0"]),
        "flows.f1.initial_window: 0 is out of range; must be from 1 to 4294967295"
    );
}

#[test]
fn a_section_that_is_not_a_table_says_so() {
    assert_eq!(
        error_with(&["trace=5"]),
        "trace: expected a table, found integer 5"
    );
    assert_eq!(
        error_with(&["links.bottleneck.loss=0.1"]),
        r#"links.bottleneck.loss: expected a table such as { type = "uniform", rate = 0.01 }, found float 0.1"#
    );
    assert_eq!(
        error_with(&["links.bottleneck.queue=100"]),
        r#"links.bottleneck.queue: expected a table such as { type = "droptail", limit = 100 }, found integer 100"#
    );
}

// ---- nodes, links and names ----------------------------------------------------------------

#[test]
fn a_node_kind_must_be_host_or_router() {
    assert_eq!(
        error_with(&["nodes.r1=\"switch\""]),
        r#"nodes.r1: "switch" is not one of host, router"#
    );
    assert_eq!(
        error_with(&["nodes.r1=3"]),
        r#"nodes.r1: expected "host", "router" or a table such as { type = "router" }, found integer 3"#
    );
}

#[test]
fn a_scenario_needs_at_least_two_nodes() {
    let text = "duration = \"1s\"\n[nodes]\nh1 = \"host\"\n";
    assert_eq!(
        error_of(text, &[]),
        "nodes: at least two nodes are needed, found 1"
    );
    assert_eq!(
        error_of("duration = \"1s\"\n", &[]),
        r#"nodes: missing; a table of nodes such as h1 = "host""#
    );
}

#[test]
fn names_may_not_be_empty_or_contain_dots() {
    let dotted = BASE.replace("r1 = \"router\"", "r1 = \"router\"\n\"r.2\" = \"router\"");
    assert_eq!(
        error_of(&dotted, &[]),
        r#"nodes: "r.2" is not a valid name: it contains "." (names appear in --set paths)"#
    );
    let empty = BASE.replace("[flows.f1]", "[flows.\"\"]");
    assert_eq!(
        error_of(&empty, &[]),
        r#"flows: "" is not a valid name: names may not be empty"#
    );
}

#[test]
fn a_diffserv_class_name_follows_the_rules_of_every_other_name() {
    // Campaign 12 (issue 32): a class named "", "a:b" or with U+202E was taken, a row of
    // the classes table and part of its random stream's identity.
    let queue = |name: &str| {
        format!(
            "links.bottleneck.queue={{ type = \"drr\", classes = [{{ name = \"{name}\", \
             match = {{ dscp = [0] }} }}, {{ name = \"default\" }}] }}"
        )
    };
    assert_eq!(
        error_with(&[&queue("")]),
        r#"links.bottleneck.queue.classes[0].name: "" is not a valid name: names may not be empty"#
    );
    assert_eq!(
        error_with(&[&queue("a:b")]),
        r#"links.bottleneck.queue.classes[0].name: "a:b" is not a valid name: it contains ":" (names appear in NODE:LINK capture points and LINK:DIRECTION results)"#
    );
    assert!(error_with(&[&queue("e\\u202Ef")]).starts_with(
        "links.bottleneck.queue.classes[0].name: \"e\\u{202e}f\" is not a valid name"
    ));
    assert!(load(BASE, &[&queue("ef")]).is_ok());
}

#[test]
fn names_that_would_reach_file_names_as_paths_or_line_breaks_are_refused() {
    // A `/` in a node name made `[trace] pcap = ["a/b"]` fail at the end of the run writing
    // OUT/pcap/a/b-l.pcap; a line break wrote a file name holding one.
    let slashed = BASE.replace("r1 = \"router\"", "r1 = \"router\"\n\"a/b\" = \"router\"");
    assert_eq!(
        error_of(&slashed, &[]),
        r#"nodes: "a/b" is not a valid name: it contains "/" (names appear in file names and random-stream identities)"#
    );
    // Issue 32: a node named `a:b` could not be captured (`--pcap a:b` reads node `a`, link
    // `b`), and a link named so made `LINK:DIRECTION` ambiguous.
    let colon = BASE.replace("r1 = \"router\"", "r1 = \"router\"\n\"a:b\" = \"router\"");
    assert_eq!(
        error_of(&colon, &[]),
        r#"nodes: "a:b" is not a valid name: it contains ":" (names appear in NODE:LINK capture points and LINK:DIRECTION results)"#
    );
    let broken = BASE.replace("[flows.f1]", "[flows.\"f\\n1\"]");
    assert_eq!(
        error_of(&broken, &[]),
        r#"flows: "f\n1" is not a valid name: it contains the control character '\n' (names appear in file names and on the terminal)"#
    );
    let nul = BASE.replace("[flows.f1]", "[flows.\"f\\u00001\"]");
    assert_eq!(
        error_of(&nul, &[]),
        r#"flows: "f\01" is not a valid name: it contains the control character '\0' (names appear in file names and on the terminal)"#
    );
    // Campaign 10: a bidirectional override (U+202E) in a flow's name reversed the rest of its
    // line in `ccsim run`'s table, its goodput and RTT shown backwards.
    let reversed = BASE.replace("[flows.f1]", "[flows.\"f\\u202E1\"]");
    assert_eq!(
        error_of(&reversed, &[]),
        r#"flows: "f\u{202e}1" is not a valid name: it contains the bidirectional control '\u{202e}' (it reorders the text after it on the terminal)"#
    );
    let isolate = BASE.replace(
        "r1 = \"router\"",
        "r1 = \"router\"\n\"a\\u2066\" = \"router\"",
    );
    assert!(error_of(&isolate, &[]).contains("the bidirectional control '\\u{2066}'"));
    // Any other character is a name, Hangul included, and a zero-width joiner or non-joiner
    // (U+200D, U+200C: emoji sequences, Persian words) is not a bidirectional control.
    let hangul = BASE.replace("[flows.f1]", "[flows.\"흐름1\"]");
    assert!(load(&hangul, &[]).is_ok());
    let joined = BASE.replace("[flows.f1]", "[flows.\"می\\u200Cخواهم\"]");
    assert!(load(&joined, &[]).is_ok());
}

#[test]
fn a_link_must_join_two_different_nodes() {
    assert_eq!(
        error_with(&["links.access.b=h1"]),
        r#"links.access: a and b are both "h1"; a link joins two different nodes"#
    );
    assert_eq!(
        error_with(&["links.access.b=r9"]),
        r#"links.access.b: no node named "r9"; nodes are h1, h2, r1"#
    );
    assert_eq!(
        error_of(&without("a = \"h1\""), &[]),
        "links.access.a: missing; a node name"
    );
}

#[test]
fn red_thresholds_must_be_ordered_within_the_limit() {
    assert_eq!(
        error_with(&["links.bottleneck.queue={type=\"red\", limit=10}"]),
        "links.bottleneck.queue: RED needs 0 <= min_th < max_th <= limit; got min_th 5, \
         max_th 15, limit 10 (packets)"
    );
    assert_eq!(
        error_with(&["links.bottleneck.queue={type=\"red\", min_th=20, max_th=10}"]),
        "links.bottleneck.queue: RED needs 0 <= min_th < max_th <= limit; got min_th 20, \
         max_th 10, limit 100 (packets)"
    );
    assert_eq!(
        error_with(&["links.bottleneck.queue={type=\"red\", w_q=0}"]),
        "links.bottleneck.queue.w_q: 0 is out of range; must be greater than 0 and at most 1"
    );
}

#[test]
fn red_thresholds_are_in_the_unit_of_the_limit() {
    assert_eq!(
        error_with(&["links.bottleneck.queue={type=\"red\", limit=\"100KB\", min_th=5}"]),
        r#"links.bottleneck.queue.min_th: expected a size such as "15KB" (the limit is in bytes), found integer 5"#
    );
    assert_eq!(
        error_with(&["links.bottleneck.queue={type=\"red\", min_th=\"5KB\"}"]),
        r#"links.bottleneck.queue.min_th: expected a number of packets (the limit is in packets), found string "5KB""#
    );
}

#[test]
fn a_queue_limit_string_needs_a_unit() {
    assert_eq!(
        error_with(&["links.bottleneck.queue={type=\"droptail\", limit=\"100\"}"]),
        r#"links.bottleneck.queue.limit: "100" has no unit; write 100 for packets or "100B" for bytes"#
    );
}

#[test]
fn direction_tables_resolve_over_the_link_values() {
    let loaded = load(
        BASE,
        &[
            "links.bottleneck.loss={type=\"uniform\", rate=0.1, direction=\"a_to_b\"}",
            "links.bottleneck.b_to_a.queue={type=\"droptail\", limit=\"64KiB\"}",
        ],
    )
    .unwrap();
    let l = &loaded.spec.links["bottleneck"];
    assert_eq!(l.a_to_b.loss, LossSpec::Uniform { rate: 0.1 });
    assert_eq!(l.b_to_a.loss, LossSpec::None);
    assert_eq!(
        l.b_to_a.queue,
        QueueSpec::DropTail {
            limit: QueueLimit::Bytes(65_536)
        }
    );
    assert_eq!(
        l.a_to_b.queue,
        QueueSpec::DropTail {
            limit: QueueLimit::Packets(100)
        }
    );
}

// ---- flows ---------------------------------------------------------------------------------

#[test]
fn a_flow_needs_two_different_hosts() {
    assert_eq!(
        error_with(&["flows.f1.dst=h1"]),
        r#"flows.f1: src and dst are both "h1""#
    );
    assert_eq!(
        error_with(&["flows.f1.src=r1"]),
        r#"flows.f1.src: "r1" is a router; flows run between hosts"#
    );
    assert_eq!(
        error_of(&without("src = \"h1\""), &[]),
        "flows.f1.src: missing; a host name"
    );
}

#[test]
fn a_flow_must_stop_after_it_starts() {
    assert_eq!(
        error_with(&["flows.f1.start=2s", "flows.f1.stop=1.5s"]),
        "flows.f1.stop: 1.5s is not after start (2s)"
    );
}

#[test]
fn an_event_after_the_runs_end_is_refused_even_when_an_override_shortens_the_run() {
    // The run stops at `duration` and leaves later events pending: an event past it never
    // happened, without a word (issue 32). A `--set duration=...` that shortens a scenario
    // whose events were inside it is refused the same way, naming the event.
    let events = r#"events=[{at="2s", link="bottleneck", state="down"}, {at="8s", link="bottleneck", state="up"}]"#;
    assert!(load(BASE, &[events]).is_ok());
    assert_eq!(
        error_with(&[events, "duration=5s"]),
        "events[1].at: 8s is after the run's end (duration = 5s): the event would never happen"
    );
}

#[test]
fn the_rto_bounds_must_be_ordered() {
    assert_eq!(
        error_with(&["flows.f1.rto_min=2s", "flows.f1.rto_max=1500ms"]),
        "flows.f1: rto_min (2s) is greater than rto_max (1.5s)"
    );
}

#[test]
fn a_window_smaller_than_one_segment_is_rejected() {
    assert_eq!(
        error_with(&["flows.f1.rcv_buffer=1000"]),
        "flows.f1: rcv_buffer (1000 bytes) is smaller than one segment (mss 1460)"
    );
    assert_eq!(
        error_with(&["flows.f1.max_window=\"1KB\""]),
        "flows.f1: max_window (1000 bytes) is smaller than one segment (mss 1460)"
    );
    assert_eq!(
        error_with(&["flows.f1.initial_ssthresh=0pkt"]),
        r#"flows.f1.initial_ssthresh: "0pkt" is out of range; must be greater than 0"#
    );
}

#[test]
fn rack_needs_sack_and_tlp_needs_rack_and_their_constants_need_them() {
    assert_eq!(
        error_with(&["tcp.loss_detection=\"rack\""]),
        r#"flows.f1: loss_detection = "rack" (set at tcp.loss_detection) reads the SACK scoreboard and needs variant = "sack" or "prr", but this flow's variant is "newreno""#
    );
    assert_eq!(
        error_with(&["flows.f1.variant=\"sack\"", "flows.f1.tlp=true"]),
        r#"flows.f1: tlp = true (set at flows.f1.tlp) is RACK-TLP's tail loss probe and needs loss_detection = "rack""#
    );
    assert_eq!(
        error_with(&["flows.f1.variant=\"sack\"", "tcp.rack_reo_wnd_persist=8"]),
        r#"flows.f1: rack_reo_wnd_persist (set at tcp.rack_reo_wnd_persist) only applies with loss_detection = "rack""#
    );
    assert_eq!(
        error_with(&[
            "flows.f1.variant=\"sack\"",
            "flows.f1.loss_detection=\"rack\"",
            "flows.f1.tlp_max_ack_delay=\"40ms\""
        ]),
        r#"flows.f1: tlp_max_ack_delay (set at flows.f1.tlp_max_ack_delay) only applies with tlp = true"#
    );
    assert_eq!(
        error_with(&["flows.f1.dsack=true"]),
        r#"flows.f1: dsack (set at flows.f1.dsack) only applies with SACK recovery (variant = "sack" or "prr"), but this flow's variant is "newreno""#
    );
    assert_eq!(
        error_with(&["flows.f1.loss_detection=\"time\""]),
        r#"flows.f1.loss_detection: "time" is not one of dupack, rack"#
    );
    assert_eq!(
        error_with(&["flows.f1.rack_min_rtt_divisor=0"]),
        "flows.f1.rack_min_rtt_divisor: 0 is out of range; must be from 1 to 1000000"
    );
    // Every constant reaches the spec.
    let ok = load(
        BASE,
        &[
            "tcp.variant=\"prr\"",
            "tcp.dsack=true",
            "tcp.loss_detection=\"rack\"",
            "tcp.tlp=true",
            "tcp.rack_min_rtt_divisor=8",
            "tcp.rack_reo_wnd_persist=4",
            "tcp.tlp_srtt_multiple=3",
            "tcp.tlp_max_ack_delay=\"40ms\"",
            "tcp.tlp_initial_pto=\"2s\"",
        ],
    )
    .unwrap();
    match &ok.spec.flows["f1"].kind {
        FlowKind::Tcp { tcp, .. } => {
            assert!(tcp.dsack);
            let rack = tcp.rack().expect("rack");
            assert_eq!((rack.min_rtt_divisor, rack.reo_wnd_persist), (8, 4));
            let tlp = rack.tlp.expect("tlp");
            assert_eq!(tlp.srtt_multiple, 3);
            assert_eq!(tlp.max_ack_delay.as_nanos(), 40_000_000);
            assert_eq!(tlp.initial_pto.as_nanos(), 2_000_000_000);
        }
        other => panic!("{other:?}"),
    }
    // A flow may turn them off again over [tcp]'s.
    let off = load(
        BASE,
        &[
            "tcp.variant=\"sack\"",
            "tcp.loss_detection=\"rack\"",
            "tcp.tlp=true",
            "flows.f1.loss_detection=\"dupack\"",
            "flows.f1.tlp=false",
        ],
    )
    .unwrap();
    match &off.spec.flows["f1"].kind {
        FlowKind::Tcp { tcp, .. } => assert!(tcp.rack().is_none()),
        other => panic!("{other:?}"),
    }
}

#[test]
fn abc_limit_without_byte_counting_is_rejected_where_it_was_set() {
    assert_eq!(
        error_with(&["tcp.abc_limit=3", "flows.f1.growth=rfc5681"]),
        r#"flows.f1: abc_limit (set at tcp.abc_limit) only applies with growth = "abc", but this flow's growth is "rfc5681""#
    );
    // The rfc preset's growth is "abc" (with L = 1): a limit alone changes L.
    let ok = load(BASE, &["tcp.abc_limit=3"]).unwrap();
    match &ok.spec.flows["f1"].kind {
        FlowKind::Tcp { tcp, .. } => assert_eq!(
            tcp.growth,
            ccsim_core::scenario::Growth::ByteCounting { limit_segments: 3 }
        ),
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_tcp_table_fills_in_what_the_flow_does_not_say() {
    let loaded = load(
        BASE,
        &[
            "tcp.preset=\"ns2-2001\"",
            "tcp.delayed_ack=true",
            "flows.f1.mss=500",
        ],
    )
    .unwrap();
    match &loaded.spec.flows["f1"].kind {
        FlowKind::Tcp { tcp, size } => {
            assert_eq!(*size, None);
            assert_eq!(
                **tcp,
                TcpSpec {
                    delayed_ack: true,
                    mss: 500,
                    initial_ssthresh: Some(20 * 500),
                    max_window: Some(20 * 500),
                    ..TcpSpec::ns2_2001()
                }
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn pareto_sizes_need_exactly_one_of_mean_and_scale() {
    let flow = "flows.f2={type=\"short_tcp\", src=\"h1\", dst=\"h2\", arrival_rate=1, sizes=";
    assert_eq!(
        error_with(&[&format!("{flow}{{dist=\"pareto\", shape=1.2}}}}")]),
        r#"flows.f2.sizes: missing mean or scale; pareto needs one of them, e.g. { dist = "pareto", mean = "30KB", shape = 1.2 }"#
    );
    assert_eq!(
        error_with(&[&format!(
            "{flow}{{dist=\"pareto\", mean=\"1KB\", scale=\"1KB\", shape=1.2}}}}"
        )]),
        "flows.f2.sizes: give either mean or scale, not both"
    );
    assert_eq!(
        error_with(&[&format!(
            "{flow}{{dist=\"pareto\", mean=\"1KB\", shape=1}}}}"
        )]),
        "flows.f2.sizes.shape: 1 is out of range; must be greater than 1 when mean is given \
         (the mean is infinite otherwise)"
    );
    assert_eq!(
        error_with(&[&format!("{flow}{{dist=\"lognormal\", sigma=1}}}}")]),
        r#"flows.f2.sizes: missing median or mu; lognormal needs one of them, e.g. { dist = "lognormal", median = "10KB", sigma = 1.0 }"#
    );
    assert_eq!(
        error_with(&[&format!("{flow}{{dist=\"zipf\"}}}}")]),
        r#"flows.f2.sizes.dist: "zipf" is not one of pareto, lognormal, constant"#
    );
}

#[test]
fn short_tcp_needs_a_positive_arrival_rate() {
    assert_eq!(
        error_with(&["flows.f2={type=\"short_tcp\", src=\"h1\", dst=\"h2\", arrival_rate=0, sizes={dist=\"constant\", size=1000}}"]),
        "flows.f2.arrival_rate: 0 is out of range; must be greater than 0"
    );
}

#[test]
fn onoff_needs_its_on_and_off_periods() {
    assert_eq!(
        error_with(&[
            "flows.f2={type=\"onoff\", src=\"h1\", dst=\"h2\", rate=\"1Mbps\", on=\"1s\"}"
        ]),
        r#"flows.f2.off: missing; a duration such as "1.5s""#
    );
}

// ---- routing -------------------------------------------------------------------------------

#[test]
fn a_route_must_leave_over_a_link_attached_to_its_node() {
    assert_eq!(
        error_with(&["routing.routes=[{at=\"h1\", to=\"h2\", via=\"bottleneck\"}]"]),
        r#"routing.routes[0].via: link "bottleneck" is not attached to "h1"; links attached to "h1" are access"#
    );
    assert_eq!(
        error_with(&["routing.routes=[{at=\"r1\", to=\"h2\", via=\"backup\"}]"]),
        r#"routing.routes[0].via: no link named "backup"; links are access, bottleneck"#
    );
}

#[test]
fn a_route_is_given_once_per_node_and_destination() {
    assert_eq!(
        error_with(&["routing.routes=[{at=\"r1\", to=\"h2\", via=\"bottleneck\"}, {at=\"r1\", to=\"h2\", via=\"access\"}]"]),
        r#"routing.routes[1]: a route at "r1" to "h2" is already given in routes[0]"#
    );
    assert_eq!(
        error_with(&["routing.routes=[{at=\"r1\", to=\"r1\", via=\"access\"}]"]),
        r#"routing.routes[0]: at and to are both "r1""#
    );
    assert_eq!(
        error_with(&["routing.routes={at=\"r1\"}"]),
        r#"routing.routes: expected an array of tables such as [{ at = "r1", to = "h2", via = "l2" }], found a table"#
    );
}

// ---- --set and TOML syntax -------------------------------------------------------------------

#[test]
fn an_override_without_an_equals_sign_is_rejected_with_an_empty_path() {
    let e = load(BASE, &["links.bottleneck.rate"]).unwrap_err();
    assert_eq!(e.path, "");
    assert_eq!(
        e.to_string(),
        r#"--set "links.bottleneck.rate": expected PATH=VALUE"#
    );
    assert_eq!(
        error_with(&["links..rate=1"]),
        r#"--set "links..rate=1": "links..rate" is not a key path: expected keys joined by dots, each bare (letters, digits, _ and -) or quoted ("x/y", 'a.b')"#
    );
}

#[test]
fn a_quoted_key_in_an_override_is_read_as_toml_reads_it_without_its_quotes() {
    // Campaign 8: `--set 'nodes."x/y".hook=...'` looked up the key `"x/y"`, quotes and all, so a
    // node whose name needs quoting in the file (라우터: TOML's bare keys are ASCII) could not
    // be reached from the command line.
    let text = BASE
        .replace("r1 =", "\"라우터\" =")
        .replace("\"r1\"", "\"라우터\"");
    let slow = |overrides: &[&str]| {
        load(&text, overrides).unwrap().spec.links["bottleneck"]
            .a_to_b
            .rate
    };
    let bare = load(BASE, &["links.bottleneck.rate=5Mbps"]).unwrap();
    assert_eq!(
        slow(&[r#""links"."bottleneck".rate=5Mbps"#]),
        bare.spec.links["bottleneck"].a_to_b.rate
    );
    assert_eq!(
        slow(&["links.'bottleneck' . rate = 5Mbps"]),
        bare.spec.links["bottleneck"].a_to_b.rate
    );
    // The node named 라우터 in the file: its hook set through the quoted key, found, not refused.
    assert!(error_of(&text, &[r#"nodes."라우터".hook.type=nope"#])
        .starts_with(r#"nodes."라우터": not a table (found string "router")"#));
    // A dot inside quotes is part of the key: a flow named "f.1", not a table f holding 1.
    assert!(error_with(&[r#"flows."f.1".cc=reno"#])
        .starts_with(r#"flows."f.1": no flow named "f.1" (did you mean "f1"?)"#));
    // An `=` inside quotes is part of the key too; the value starts after the first one outside.
    assert!(error_with(&[r#"flows."f=1".cc=reno"#])
        .starts_with(r#"flows."f=1": no flow named "f=1" (did you mean "f1"?)"#));
}

#[test]
fn an_override_path_with_an_unclosed_quote_or_an_empty_key_names_set_and_the_text() {
    assert_eq!(
        error_with(&[r#"nodes."r1.hook.type=impair"#]),
        r#"--set "nodes.\"r1.hook.type=impair": a quoted key opened with " is not closed"#
    );
    assert_eq!(
        error_with(&["nodes.'r1.hook=1"]),
        r#"--set "nodes.'r1.hook=1": a quoted key opened with ' is not closed"#
    );
    for path in [
        "nodes.",
        ".nodes",
        "nodes. .r1",
        "nodes.r 1",
        "nodes.\"r1\"x",
    ] {
        let item = format!("{path}=1");
        assert_eq!(
            error_with(&[&item]),
            format!(
                "--set {item:?}: {:?} is not a key path: expected keys joined by dots, each bare \
                 (letters, digits, _ and -) or quoted (\"x/y\", 'a.b')",
                path.trim()
            )
        );
    }
}

#[test]
fn a_swept_override_is_named_as_the_param_it_came_from_and_a_set_one_as_set() {
    // A sweep's `--param duration.x=1,2` was refused naming `--set "duration.x=1"`, an option
    // the user never gave (campaign 21, issue 32). Each override names its own option, in the
    // same load.
    let swept = |set: &[&str], params: &[&str]| {
        let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
        let params: Vec<String> = params.iter().map(|s| s.to_string()).collect();
        match load_swept_scenario(BASE, &set, &params, None) {
            Ok(_) => panic!("expected an error with {set:?} and {params:?}"),
            Err(e) => e.to_string(),
        }
    };
    assert_eq!(
        swept(&["duration=5s"], &["duration.seconds=5"]),
        r#"duration: not a table (found string "5s"), so --param "duration.seconds=5" cannot set a key inside it"#
    );
    assert_eq!(
        swept(&["duration.seconds=5"], &["duration=5s"]),
        r#"duration: not a table (found string "10s"), so --set "duration.seconds=5" cannot set a key inside it"#
    );
    assert_eq!(
        swept(&[], &["links..rate=1"]),
        r#"--param "links..rate=1": "links..rate" is not a key path: expected keys joined by dots, each bare (letters, digits, _ and -) or quoted ("x/y", 'a.b')"#
    );
    assert_eq!(
        swept(&[], &["links.nosuch"]),
        r#"--param "links.nosuch": expected PATH=VALUE"#
    );
    let missing = swept(&[], &["flows.f9.mss=1000"]);
    assert!(
        missing.ends_with(
            "(--param changes a flow that exists; a new flow is set whole, e.g. --param \
             'flows.f9={ type = ..., src = ..., dst = ..., ... }')"
        ),
        "{missing}"
    );
}

#[test]
fn an_override_replacing_a_whole_entry_with_none_of_its_needed_keys_says_it_replaced_it() {
    // It was `no link named "bottleneck"` (campaign 23, issue 32): the link exists, and the
    // override had replaced it with a table holding only a rate.
    assert_eq!(
        error_with(&[r#"links.bottleneck={ rate = "5Mbps" }"#]),
        r#"links.bottleneck: --set "links.bottleneck={ rate = \"5Mbps\" }" replaces the whole link, and the new one has none of a and b; to change one key of it, give its path: --set 'links.bottleneck.rate=...'"#
    );
    assert_eq!(
        error_with(&["flows.f1={}"]),
        r#"flows.f1: --set "flows.f1={}" replaces the whole flow, and the new one has none of type, src and dst; to change one key of it, give its path: --set 'flows.f1.KEY=...'"#
    );
    // A whole new entry, and a replacement holding what an entry needs, are read as before.
    assert!(error_with(&["links.extra={ rate = \"5Mbps\" }"]).contains("no link named \"extra\""));
    assert!(load(BASE, &[r#"nodes.h1={ type = "host" }"#]).is_ok());
}

#[test]
fn an_override_inside_a_value_that_is_not_a_table_names_that_value() {
    assert_eq!(
        error_with(&["duration.seconds=5"]),
        r#"duration: not a table (found string "10s"), so --set "duration.seconds=5" cannot set a key inside it"#
    );
    assert_eq!(
        error_with(&["nodes.h1.type=router"]),
        r#"nodes.h1: not a table (found string "host"), so --set "nodes.h1.type=router" cannot set a key inside it"#
    );
}

#[test]
fn a_toml_syntax_error_reports_the_line_and_column() {
    let e = load("duration = \"10s\"\nnodes = { h1 = \"host\", \n", &[]).unwrap_err();
    assert_eq!(e.path, "");
    assert!(
        e.message
            .starts_with("TOML syntax error at line 2, column "),
        "{}",
        e.message
    );
}

#[test]
fn the_tcp_keys_of_issue_9_are_read_and_their_bad_values_named() {
    let loaded = load(
        BASE,
        &[
            "flows.f1.recover_guard=\"at_recovery_point\"",
            "flows.f1.rtt_sampling=\"ns2\"",
            "flows.f1.restart_after_idle=false",
            "flows.f1.handshake=false",
            "flows.f1.ecn=true",
        ],
    )
    .unwrap();
    match &loaded.spec.flows["f1"].kind {
        FlowKind::Tcp { tcp, .. } => {
            assert_eq!(
                tcp.recover_guard,
                Some(ccsim_core::tcp::RecoverGuard::AtRecoveryPoint)
            );
            assert_eq!(tcp.rtt_sampling, ccsim_core::tcp::RttSampling::Ns2);
            assert!(!tcp.restart_after_idle && !tcp.handshake && tcp.ecn);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        error_with(&["flows.f1.recover_guard=\"never\""]),
        r#"flows.f1.recover_guard: "never" is not one of auto, at_recovery_point, past_recovery_point"#
    );
    assert_eq!(
        error_with(&["tcp.ecn=1"]),
        "tcp.ecn: expected true, false, \"dctcp\" or \"l4s\", found integer 1"
    );
}

// ---- ATM ([atm], docs/atm.md) -----------------------------------------------------------

/// The error `Simulator::build` gives for BASE with `overrides` (errors that need routes).
fn build_error_with(overrides: &[&str]) -> String {
    let loaded = load(BASE, overrides).unwrap_or_else(|e| panic!("{e}"));
    match ccsim_core::sim::Simulator::build(&loaded.spec) {
        Ok(_) => panic!("expected a build error with {overrides:?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn er_tcp_on_a_flow_without_an_abr_vc_is_refused_naming_the_flow() {
    assert_eq!(
        build_error_with(&["flows.f1.cc=\"er\""]),
        "flows.f1.cc: type \"er\" needs an ABR VC, but the route of flow f1 crosses no link \
         listed in [atm] links"
    );
}

#[test]
fn er_tcp_over_an_atm_link_builds() {
    let loaded = load(BASE, &["flows.f1.cc=\"er\"", "atm.links=[\"bottleneck\"]"]).unwrap();
    assert!(ccsim_core::sim::Simulator::build(&loaded.spec).is_ok());
}

#[test]
fn atm_fields_are_checked_naming_the_field() {
    assert_eq!(
        error_with(&["atm.links=[\"nope\"]"]),
        "atm.links[0]: no link named \"nope\"; links are access, bottleneck"
    );
    assert_eq!(
        error_with(&["atm.links=[]"]),
        "atm.links: empty; name at least one link that carries cells"
    );
    assert_eq!(
        error_with(&["atm.links=[\"access\"]", "atm.nrm=1"]),
        "atm.nrm: 1 is out of range; must be from 2 to 256"
    );
    assert_eq!(
        error_with(&["atm.links=[\"access\"]", "atm.epd_threshold=2000"]),
        "atm.epd_threshold: 2000 is not below abr_buffer (1000); EPD's threshold is under the \
         buffer size"
    );
    assert_eq!(
        error_with(&[
            "atm.links=[\"access\"]",
            "atm.pcr=\"1Mbps\"",
            "atm.mcr=\"2Mbps\""
        ]),
        "atm.mcr: 2000000 bit/s is above pcr (1000000 bit/s)"
    );
    assert_eq!(
        error_with(&["atm.links=[\"access\"]", "atm.feedback=\"efci\""]),
        "atm.feedback: efci needs a threshold: { type = \"efci\", threshold = 500 }"
    );
    assert_eq!(
        error_with(&["atm.links=[\"access\"]", "atm.cbr.bg={ from = \"h1\", to = \"h1\", rate = \"1Mbps\", on = \"1s\", off = \"1s\" }"]),
        "atm.cbr.bg: from and to are both \"h1\""
    );
}

#[test]
fn erica_plus_keys_are_checked_and_erica_keys_it_would_ignore_are_refused() {
    let atm = "atm.links=[\"access\"]";
    assert!(load(BASE, &[atm, "atm.feedback=\"erica_plus\""]).is_ok());
    assert!(load(
        BASE,
        &[
            atm,
            "atm.feedback={ type = \"erica_plus\", target_delay = \"2ms\", a = 1.2 }"
        ]
    )
    .is_ok());
    assert_eq!(
        error_with(&[atm, "atm.feedback={ type = \"erica_plus\", a = 1.0 }"]),
        "atm.feedback.a: 1.0 is out of range; must be greater than 1, such as 1.15"
    );
    let msg = error_with(&[
        atm,
        "atm.feedback={ type = \"erica_plus\", target_utilization = 0.9 }",
    ]);
    assert!(
        msg.starts_with("atm.feedback.target_utilization: unknown key"),
        "{msg}"
    );
    assert_eq!(
        error_with(&[atm, "atm.out_of_rate_brm=1"]),
        "atm.out_of_rate_brm: expected true or false, found integer 1"
    );
}

#[test]
fn an_atm_link_refuses_a_loss_model_and_a_packet_trace_point_it_would_ignore() {
    assert_eq!(
        error_with(&[
            "atm.links=[\"access\"]",
            "links.access.loss={ type = \"uniform\", rate = 0.01 }"
        ]),
        "links.access.loss: link \"access\" is listed in atm.links, and ATM links apply no \
         loss model (cells are lost only at full buffers and links going down); remove loss or \
         take the link out of atm.links"
    );
    assert_eq!(
        build_error_with(&[
            "atm.links=[\"access\"]",
            "trace.packets={ links = [\"bottleneck\", \"access:a_to_b\"] }"
        ]),
        "trace.packets.links[1]: \"access\" is listed in atm.links: the packet trace does not \
         follow cells (atm_ports and the vc series count them); leave it out"
    );
}

#[test]
fn an_atm_link_refuses_a_queue_its_ports_would_ignore() {
    // ATM ports queue cells in their own class buffers; a queue on the link once did nothing.
    let msg = |k: &str| error_with(&["atm.links=[\"access\"]", k]);
    assert_eq!(
        msg("links.access.queue={ type = \"droptail\", limit = 10 }"),
        "links.access.queue: link \"access\" is listed in atm.links, whose ports queue cells \
         in atm.cbr_buffer and atm.abr_buffer, not in the link's queue; remove queue or take \
         the link out of atm.links"
    );
    assert!(
        msg("links.access.b_to_a={ queue = { type = \"droptail\", limit = 10 } }")
            .starts_with("links.access.b_to_a.queue: link \"access\" is listed in atm.links")
    );
    assert!(
        load(
            BASE,
            &[
                "atm.links=[\"bottleneck\"]",
                "links.access.queue={ type = \"droptail\", limit = 10 }"
            ]
        )
        .is_ok(),
        "a queue on a link that is not ATM stays allowed"
    );
}

#[test]
fn a_cbr_source_whose_route_leaves_atm_is_refused() {
    assert_eq!(
        build_error_with(&[
            "atm.links=[\"access\"]",
            "atm.cbr.bg={ from = \"h1\", to = \"h2\", rate = \"1Mbps\", on = \"1s\", off = \"1s\" }"
        ]),
        "atm.cbr.bg: the route from h1 to h2 must cross only links listed in [atm] links: CBR \
         cells have no IP packet to route"
    );
}

#[test]
fn a_packet_trace_names_flows_links_and_nodes_that_exist() {
    let msg = |o: &str| load(BASE, &[o]).map(|_| ()).unwrap_err().to_string();
    assert!(load(BASE, &["trace.packets={ flows = [\"f1\"] }"]).is_ok());
    assert_eq!(
        msg("trace.packets={ flows = [\"nope\"] }"),
        format!(
            "trace.packets.flows[0]: \"nope\" is not a flow; flows: {}",
            load(BASE, &[])
                .unwrap()
                .spec
                .flows
                .keys()
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        )
    );
    assert!(msg("trace.packets={ links = [\"nope:a_to_b\"] }")
        .starts_with("trace.packets.links[0]: \"nope\" is not a link; links: "));
    let link = load(BASE, &[])
        .unwrap()
        .spec
        .links
        .keys()
        .next()
        .unwrap()
        .clone();
    assert_eq!(
        msg(&format!("trace.packets={{ links = [\"{link}:up\"] }}")),
        "trace.packets.links[0]: \"up\" is not a direction; use LINK, LINK:a_to_b or LINK:b_to_a"
    );
    assert!(msg("trace.packets={ nodes = [\"nope\"] }")
        .starts_with("trace.packets.nodes[0]: \"nope\" is not a node; nodes: "));
    assert_eq!(
        msg("trace.packets={ max_rows = 0 }"),
        "trace.packets.max_rows: 0 is out of range; must be at least 1"
    );
    assert_eq!(
        msg("trace.packets={ flows = [1] }"),
        "trace.packets.flows[0]: expected a name, found integer 1"
    );
    assert!(msg("trace.packets={ every = true }")
        .starts_with("trace.packets.every: unknown key; allowed: flows, links, nodes, max_rows"));
}

// DiffServ (docs/scenario.md, "DiffServ")

/// BASE with the bottleneck's queue set to `queue` (inline TOML).
fn with_queue(queue: &str) -> String {
    error_with(&[&format!("links.bottleneck.queue={queue}")])
}

#[test]
fn the_cbwfq_example_of_the_documentation_loads() {
    let q = "{type=\"cbwfq\", classes=[{name=\"premium\", match={dscp=46}, \
             priority=\"5000kbps\"}, {name=\"default\", bandwidth_percent=25, \
             drop={type=\"wred\"}}]}";
    let loaded = load(BASE, &[&format!("links.bottleneck.queue={q}")]).unwrap();
    assert!(matches!(
        loaded.spec.links["bottleneck"].a_to_b.queue,
        QueueSpec::Scheduler(_)
    ));
}

#[test]
fn an_llq_rate_above_the_link_rate_is_rejected() {
    assert_eq!(
        with_queue(
            "{type=\"cbwfq\", classes=[{name=\"ef\", match={dscp=46}, priority=\"20Mbps\"}, \
             {name=\"default\"}]}"
        ),
        "links.bottleneck.queue.classes[0].priority: 20000000 bit/s is above the link rate \
         (10000000 bit/s); an LLQ rate must fit in the link"
    );
}

#[test]
fn reservations_that_do_not_fit_the_link_are_rejected() {
    assert_eq!(
        with_queue(
            "{type=\"cbwfq\", classes=[{name=\"ef\", match={dscp=46}, priority=\"5Mbps\"}, \
             {name=\"default\", bandwidth_percent=75}]}"
        ),
        "links.bottleneck.queue.classes: priority and bandwidth reserve 12500000 bit/s, more \
         than the link rate (10000000 bit/s)"
    );
    assert_eq!(
        with_queue(
            "{type=\"cbwfq\", classes=[{name=\"a\", match={dscp=10}, bandwidth_percent=60}, \
             {name=\"default\", bandwidth_percent=50}]}"
        ),
        "links.bottleneck.queue.classes: bandwidth_percent of the classes sums to 110; at most \
         100 is possible"
    );
    assert_eq!(
        with_queue(
            "{type=\"wfq\", classes=[{name=\"a\", match={dscp=10}, weight=0}, {name=\"b\"}]}"
        ),
        "links.bottleneck.queue.classes[0].weight: 0 is out of range; must be from 1 to 4294967295"
    );
}

#[test]
fn a_match_on_an_unknown_field_lists_the_fields() {
    assert_eq!(
        with_queue("{type=\"priority\", classes=[{name=\"a\", match={port=80}}, {name=\"b\"}]}"),
        "links.bottleneck.queue.classes[0].match.port: unknown key; allowed: src, dst, \
         protocol, src_port, dst_port, flow, dscp"
    );
}

/// The error of BASE with a priority queue whose first class matches `m` (inline TOML).
fn with_match(m: &str) -> String {
    with_queue(&format!(
        "{{type=\"priority\", classes=[{{name=\"a\", match={m}}}, {{name=\"b\"}}]}}"
    ))
}

#[test]
fn addresses_and_prefixes_in_a_match_are_checked() {
    let at = "links.bottleneck.queue.classes[0].match";
    assert_eq!(
        with_match("{src=\"10.0.0.300\"}"),
        format!(
            "{at}.src: \"10.0.0.300\" is not an IPv4 address or prefix; expected four numbers \
             0-255 and an optional /0-32, such as \"10.0.1.0/24\""
        )
    );
    assert_eq!(
        with_match("{dst=[\"h2\", \"10.0.0.0/33\"]}"),
        format!(
            "{at}.dst[1]: \"10.0.0.0/33\" is not an IPv4 address or prefix; expected four \
             numbers 0-255 and an optional /0-32, such as \"10.0.1.0/24\""
        )
    );
    assert_eq!(
        with_match("{src=\"10.0.1.7/24\"}"),
        format!("{at}.src: \"10.0.1.7/24\" has host bits set; the network is \"10.0.1.0/24\"")
    );
    // BASE has two links: addresses 10.0.0.1 to 10.0.0.4.
    assert_eq!(
        with_match("{src=\"10.0.1.0/24\"}"),
        format!(
            "{at}.src: 10.0.1.0/24 holds no interface address; this network's are 10.0.0.1 to \
             10.0.0.4 (two per link, in the order of [links])"
        )
    );
    assert_eq!(
        with_match("{src=[]}"),
        format!(
            "{at}.src: an empty list matches nothing; expected a node name, an address or \
             prefix such as \"10.0.1.0/24\", or a list of these"
        )
    );
    assert!(load(
        BASE,
        &[
            "links.bottleneck.queue={type=\"priority\", classes=[{name=\"a\", \
           match={src=[\"10.0.0.0/30\", \"h1\"], dst=\"10.0.0.4\"}}, {name=\"b\"}]}"
        ]
    )
    .is_ok());
}

#[test]
fn ports_and_protocols_in_a_match_are_checked() {
    let at = "links.bottleneck.queue.classes[0].match";
    assert_eq!(
        with_match("{dst_port=80}"),
        format!(
            "{at}.dst_port: 80 is out of range; must be from 1024 to 65535 (ccsim's ports are \
             1024 + the endpoint's number, as a capture shows them)"
        )
    );
    assert_eq!(
        with_match("{src_port=[1024, \"1030-1025\"]}"),
        format!("{at}.src_port[1]: 1030-1025 is empty; write the lower port first")
    );
    assert!(with_match("{src_port=\"http\"}").starts_with(&format!(
        "{at}.src_port: expected a port from 1024 to 65535 (1024 + the endpoint's number), a \
         range such as \"1024-1031\", or a list of these"
    )));
    assert_eq!(
        with_match("{protocol=\"icmp\", dst_port=1025}"),
        format!(
            "{at}.dst_port: ICMP carries no ports; leave the port out or match tcp, udp or sctp"
        )
    );
    assert!(with_match("{protocol=\"gre\"}").starts_with(&format!("{at}.protocol: ")));
    assert!(with_match("{protocol=\"gre\"}").contains("icmp"));
}

#[test]
fn a_class_policer_may_continue_only_to_a_next_statement() {
    let car = "type=\"car\", rate=\"1Mbps\", normal_burst=2000";
    assert_eq!(
        with_queue(&format!(
            "{{type=\"priority\", classes=[{{name=\"a\", police={{{car}, exceed=\"continue\"}}}}]}}"
        )),
        "links.bottleneck.queue.classes[0].police.exceed: continue on the last statement has no \
         next one; use transmit, drop or { set_dscp = N }, or add a statement after it"
    );
    assert_eq!(
        with_queue(&format!(
            "{{type=\"priority\", classes=[{{name=\"a\", police=[{{{car}, exceed=\"continue\"}}, \
             {{{car}, conform={{set_dscp=10, then=\"continue\"}}}}]}}]}}"
        )),
        "links.bottleneck.queue.classes[0].police[1].conform: continue on the last statement has \
         no next one; use transmit, drop or { set_dscp = N }, or add a statement after it"
    );
    assert_eq!(
        with_queue("{type=\"priority\", classes=[{name=\"a\", police=[]}]}"),
        "links.bottleneck.queue.classes[0].police: no statement; give one or leave police out"
    );
    assert!(load(
        BASE,
        &[&format!(
            "links.bottleneck.queue={{type=\"priority\", classes=[{{name=\"a\", \
             police=[{{{car}, exceed=\"continue\"}}, {{{car}}}]}}]}}"
        )]
    )
    .is_ok());
}

#[test]
fn two_classes_with_one_name_are_rejected() {
    assert_eq!(
        with_queue(
            "{type=\"drr\", classes=[{name=\"a\", match={dscp=10}}, {name=\"a\", \
             match={dscp=12}}, {name=\"b\"}]}"
        ),
        "links.bottleneck.queue.classes[1].name: \"a\" names two classes; class names must \
         differ"
    );
}

#[test]
fn a_dscp_outside_0_to_63_is_rejected() {
    assert_eq!(
        with_queue("{type=\"priority\", classes=[{name=\"a\", match={dscp=64}}, {name=\"b\"}]}"),
        "links.bottleneck.queue.classes[0].match.dscp: 64 is out of range; must be from 0 to 63 \
         (a DSCP has six bits)"
    );
    assert_eq!(
        with_queue(
            "{type=\"priority\", classes=[{name=\"a\", match={dscp=[10, -1]}}, {name=\"b\"}]}"
        ),
        "links.bottleneck.queue.classes[0].match.dscp[1]: -1 is out of range; must be from 0 \
         to 63 (a DSCP has six bits)"
    );
}

#[test]
fn the_class_default_must_be_last_and_present() {
    assert_eq!(
        with_queue("{type=\"priority\", classes=[{name=\"a\"}, {name=\"b\", match={dscp=1}}]}"),
        "links.bottleneck.queue.classes[0]: a class without match is the class-default and \
         takes every packet: it must be the last class"
    );
    assert_eq!(
        with_queue("{type=\"priority\", classes=[{name=\"a\", match={dscp=1}}]}"),
        "links.bottleneck.queue.classes: the last class must have no match (the \
         class-default, for packets no other class matches)"
    );
}

#[test]
fn a_match_naming_an_unknown_node_or_flow_lists_the_names() {
    assert_eq!(
        with_queue("{type=\"priority\", classes=[{name=\"a\", match={src=\"h9\"}}, {name=\"b\"}]}"),
        "links.bottleneck.queue.classes[0].match.src: no node named \"h9\"; nodes are h1, h2, r1"
    );
    assert_eq!(
        error_with(&[
            "nodes.r1={type=\"router\", hook={type=\"policer\", rules=[{match={flow=\"f2\"}, \
             set_dscp=46}]}}"
        ]),
        "nodes.r1.hook.rules[0].match.flow: no flow named \"f2\"; flows are f1"
    );
}

#[test]
fn meters_reject_inconsistent_rates_and_bursts() {
    let hook = |meter: &str| {
        error_with(&[&format!(
            "nodes.r1={{type=\"router\", hook={{type=\"policer\", rules=[{{meter={meter}}}]}}}}"
        )])
    };
    assert_eq!(
        hook("{type=\"trtcm\", cir=\"2Mbps\", cbs=1500, pir=\"1Mbps\", pbs=1500}"),
        "nodes.r1.hook.rules[0].meter.pir: 1000000 bit/s is below cir (2000000 bit/s); RFC \
         2698 §2 needs pir >= cir"
    );
    assert_eq!(
        hook("{type=\"srtcm\", cir=\"2Mbps\", cbs=0, ebs=0}"),
        "nodes.r1.hook.rules[0].meter.cbs: cbs and ebs are both 0; RFC 2697 §2 needs one \
         above 0"
    );
    assert_eq!(
        hook("{type=\"car\", rate=\"10Mbps\", normal_burst=10000, excess_burst=5000}"),
        "nodes.r1.hook.rules[0].meter.excess_burst: 5000 is below normal_burst (10000); the \
         excess burst is at least the normal burst"
    );
}

#[test]
fn a_set_inside_a_misspelled_link_names_the_links_there_are() {
    assert_eq!(
        error_with(&["links.bottlenek.rate=20Mbps"]),
        "links.bottlenek: no link named \"bottlenek\" (did you mean \"bottleneck\"?); links are \
         access, bottleneck (--set \
         changes a link that exists; a new link is set whole, e.g. --set \
         'links.bottlenek={ a = ..., b = ..., ... }')"
    );
    assert_eq!(
        error_with(&["flows.f9.start=1s"]),
        "flows.f9: no flow named \"f9\" (did you mean \"f1\"?); flows are f1 (--set changes a flow that exists; a new \
         flow is set whole, e.g. --set 'flows.f9={ type = ..., src = ..., dst = ..., ... }')"
    );
    assert_eq!(
        error_with(&["nodes.h3.type=host"]),
        "nodes.h3: no node named \"h3\" (did you mean \"h1\"?); nodes are h1, h2, r1 (--set \
         changes a node that exists; a new node is set whole, e.g. --set 'nodes.h3={ type = ..., ... }')"
    );
}

#[test]
fn a_set_may_still_add_an_entry_whole_and_change_it_afterwards() {
    let loaded = load(
        BASE,
        &[
            "links.spare={ a = \"h1\", b = \"h2\", rate = \"1Mbps\", delay = \"1ms\" }",
            "links.spare.rate=2Mbps",
            "trace.interval=1s",
        ],
    )
    .unwrap();
    assert_eq!(loaded.spec.links.len(), 3);
}

#[test]
fn a_table_under_a_misspelled_link_or_flow_in_the_file_names_those_there_are() {
    let text = format!("{BASE}\n[links.bottlenek.loss]\ntype = \"uniform\"\nrate = 0.01\n");
    assert_eq!(
        error_of(&text, &[]),
        "links.bottlenek: no link named \"bottlenek\" (did you mean \"bottleneck\"?); links are \
         access, bottleneck (a new link needs a and b)"
    );
    let text = format!("{BASE}\n[flows.f2.cc]\ntype = \"cubic\"\n");
    assert_eq!(
        error_of(&text, &[]),
        "flows.f2: no flow named \"f2\" (did you mean \"f1\"?); flows are f1 (a new flow needs \
         type, src and dst)"
    );
    // A new entry with some of its keys is one with a key forgotten.
    assert_eq!(
        error_with(&["links.extra={ a = \"h1\", rate = \"1Mbps\", delay = \"1ms\" }"]),
        "links.extra.b: missing; a node name"
    );
}

#[test]
fn a_subnormal_number_is_refused_where_any_number_is_read() {
    // Issue 32: DCTCP's g = 1e-320 was accepted and made the run 8x slower.
    let dctcp = ["tcp.ecn=\"dctcp\"", "tcp.cc={type=\"dctcp\",g=1e-320}"];
    assert_eq!(
        error_with(&dctcp),
        "tcp.cc.g: 1e-320 is out of range; must be 0 or at least 2.2e-308 in magnitude (a \
         subnormal number means nothing here and slows the run)"
    );
    let loss = ["links.bottleneck.loss={type=\"uniform\",rate=4e-310}"];
    assert!(error_with(&loss).starts_with("links.bottleneck.loss.rate: 4e-310 is out"));
    // The smallest normal number is accepted as any other.
    assert!(load(
        BASE,
        &["tcp.ecn=\"dctcp\"", "tcp.cc={type=\"dctcp\",g=2.3e-308}"]
    )
    .is_ok());
}
