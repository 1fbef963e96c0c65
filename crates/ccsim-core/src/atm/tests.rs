// SPDX-License-Identifier: MIT
//! ATM under whole runs: scenarios from TOML, as a user writes them.

use crate::results::{RunOutput, Table};
use crate::scenario::load_scenario;
use crate::sim::Simulator;

/// Paper 000's WAN network (experiments/p000-atm-abr/scenario.toml).
pub(super) const PAPER: &str = include_str!("../../../../experiments/p000-atm-abr/scenario.toml");

pub(super) fn run(text: &str, overrides: &[&str]) -> RunOutput {
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    let loaded = load_scenario(text, &overrides, None).unwrap_or_else(|e| panic!("{e}"));
    Simulator::build(&loaded.spec)
        .and_then(Simulator::run)
        .unwrap_or_else(|e| panic!("{e}"))
}

fn total_goodput_mbps(out: &RunOutput) -> f64 {
    out.flows.f64("goodput_bps").unwrap().iter().sum::<f64>() / 1e6
}

fn vc_u64(out: &RunOutput, name: &str, col: &str) -> u64 {
    let names = out.atm_vcs.str("name").unwrap();
    let row = names.iter().position(|n| n == name).unwrap();
    out.atm_vcs.u64(col).unwrap()[row]
}

/// Column `col` of the row of `table` (links or atm_ports) for one link direction.
pub(super) fn direction_u64(table: &Table, link: &str, dir: &str, col: &str) -> u64 {
    let links = table.str("link").unwrap();
    let dirs = table.str("direction").unwrap();
    let row = (0..links.len())
        .find(|&i| links[i] == link && dirs[i] == dir)
        .unwrap();
    table.u64(col).unwrap()[row]
}

pub(super) fn port_u64(out: &RunOutput, link: &str, dir: &str, col: &str) -> u64 {
    direction_u64(&out.atm_ports, link, dir, col)
}

/// A 300-cell ABR buffer at the switches and a 100 Mbit/s on-off CBR source: each time the CBR
/// source turns on, ABR cells arrive faster than ERICA's feedback can slow them for a feedback
/// delay, and the ABR queue at s1 overflows.
const LOSSY: &[&str] = &[
    "duration=\"8s\"",
    "atm.abr_buffer=300",
    "atm.cbr.bg.count=1",
    "atm.cbr.bg.rate=\"100Mbps\"",
];

#[test]
fn tcp_delivers_its_byte_stream_intact_over_atm_when_cells_are_lost() {
    let out = run(PAPER, LOSSY);
    let lost: u64 = out.atm_ports.u64("abr_cells_lost").unwrap().iter().sum();
    assert!(lost > 0, "the scenario must lose cells");
    let frames_lost: u64 = (1..=5)
        .map(|i| vc_u64(&out, &format!("h{i}>d{i}"), "frames_lost"))
        .sum();
    assert!(frames_lost > 0);
    // Every lost frame was retransmitted; the receivers got a gap-free stream: what they
    // delivered is exactly the bytes the senders had acknowledged or have in flight.
    let delivered = out.flows.u64("bytes_delivered").unwrap();
    let retx = out.flows.u64("retransmits").unwrap();
    assert!(retx.iter().sum::<u64>() > 0);
    assert!(delivered.iter().sum::<u64>() > 0);
    // Only whole segments reach TCP: a frame missing a cell is never delivered in part.
    assert!(delivered.iter().all(|&b| b % 9140 == 0), "{delivered:?}");
    assert_eq!(out.summary.stop_reason.as_str(), "duration");
}

#[test]
fn every_cell_sent_is_delivered_lost_or_still_inside_and_every_packet_is_accounted() {
    let out = run(PAPER, LOSSY);
    let s = &out.summary;
    assert_eq!(
        s.packets_created,
        s.packets_delivered + s.packets_dropped + s.packets_alive
    );
    for i in 1..=5 {
        let vc = format!("h{i}>d{i}");
        let sent = vc_u64(&out, &vc, "cells_sent");
        let delivered = vc_u64(&out, &vc, "cells_delivered");
        let lost = vc_u64(&out, &vc, "cells_lost");
        // Data cells only count here; at most the cells of one window are still inside.
        assert!(delivered + lost <= sent, "{vc}");
        assert!(sent - delivered - lost < 20 * 192 + 1000, "{vc}");
        let frames = vc_u64(&out, &vc, "frames_in");
        let done = vc_u64(&out, &vc, "frames_delivered") + vc_u64(&out, &vc, "frames_lost");
        assert!(
            done <= frames && frames - done <= 40,
            "{vc}: {frames} in, {done} done"
        );
    }
}

#[test]
fn cbr_cells_are_never_lost_to_abr_load() {
    // Check 15's premise: strict priority keeps CBR whole whatever ABR does.
    let out = run(PAPER, LOSSY);
    assert!(port_u64(&out, "l2", "a_to_b", "cbr_cells_sent") > 0);
    let cbr_lost: u64 = out.atm_ports.u64("cbr_cells_lost").unwrap().iter().sum();
    assert_eq!(cbr_lost, 0);
    assert!(port_u64(&out, "l1_1", "a_to_b", "abr_cells_sent") > 0);
}

#[test]
fn epd_drops_whole_frames_only() {
    // Check 16: with EPD (and PPD for overflow) a frame's cells are all lost or none is.
    let mut set = LOSSY.to_vec();
    set.push("atm.epd_threshold=50");
    set.push("atm.ppd=true");
    let out = run(PAPER, &set);
    let lost: u64 = out.atm_ports.u64("abr_cells_lost").unwrap().iter().sum();
    assert!(lost > 0);
    for i in 1..=5 {
        let vc = format!("h{i}>d{i}");
        // 9,180-byte packets are 192 cells; with whole-frame discard, the cells lost are a
        // multiple of a frame, less the EOM cells PPD keeps.
        let cells = vc_u64(&out, &vc, "cells_lost");
        let frames = vc_u64(&out, &vc, "frames_lost");
        assert!(
            cells <= frames * 192,
            "{vc}: {cells} cells, {frames} frames"
        );
    }
}

#[test]
fn er_tcp_keeps_the_source_buffer_shorter_than_reno() {
    let reno = run(PAPER, &["duration=\"3s\""]);
    let er = run(
        PAPER,
        &["duration=\"3s\"", "tcp.cc={ type = \"er\", safety = 0.4 }"],
    );
    let q = |o: &RunOutput| vc_u64(o, "h1>d1", "max_source_cells");
    assert!(q(&er) < q(&reno), "{} vs {}", q(&er), q(&reno));
    let rtt = |o: &RunOutput| o.flows.f64("rtt_mean_s").unwrap()[0];
    assert!(rtt(&er) < rtt(&reno));
    // ... at no cost in throughput.
    assert!(total_goodput_mbps(&er) > 0.9 * total_goodput_mbps(&reno));
}

#[test]
fn erica_brings_the_five_vcs_to_equal_rates() {
    // Check 13 in a run: no CBR, five greedy VCs share U·C.
    let out = run(
        PAPER,
        &[
            "duration=\"2s\"",
            "atm.cbr.bg.count=1",
            "atm.cbr.bg.rate=\"1bps\"",
        ],
    );
    let acr = out.atm_vcs.f64("acr_bps").unwrap();
    let names = out.atm_vcs.str("name").unwrap();
    let fwd: Vec<f64> = (0..names.len())
        .filter(|&i| names[i].starts_with('h'))
        .map(|i| acr[i])
        .collect();
    let share = 0.9 * 150e6 / 5.0;
    for a in &fwd {
        assert!((a - share).abs() / share < 0.15, "{a} vs {share}");
    }
}

#[test]
fn the_time_series_carries_each_vcs_acr_and_er() {
    let out = run(PAPER, &["duration=\"1s\"", "trace.interval=\"100ms\""]);
    let s = &out.series;
    let (kind, name, metric) = (
        s.str("kind").unwrap(),
        s.str("name").unwrap(),
        s.str("metric").unwrap(),
    );
    let value = s.f64("value").unwrap();
    let acr: Vec<f64> = (0..kind.len())
        .filter(|&i| kind[i] == "vc" && name[i] == "h1>d1" && metric[i] == "acr_bps")
        .map(|i| value[i])
        .collect();
    assert_eq!(acr.len(), 10);
    // ACR within [MCR, PCR] (check 9) and away from ICR once feedback arrived.
    assert!(acr
        .iter()
        .all(|&a| (0.1e6 - 1.0..=150e6 + 1.0).contains(&a)));
    assert!(acr.iter().any(|&a| a > 5e6 + 1.0));
}

#[test]
fn with_cbr_on_erica_gives_abr_the_target_share_of_what_cbr_leaves() {
    // Check 15: CBR at R = 100 Mbit/s always on; ABR gets ≈ U·(C − R) on l2.
    let out = run(
        PAPER,
        &[
            "duration=\"3s\"",
            "atm.cbr.bg.count=1",
            "atm.cbr.bg.rate=\"100Mbps\"",
            "atm.cbr.bg.on=\"100s\"",
        ],
    );
    let secs = 3.0;
    let cell_bits = 424.0;
    let abr = port_u64(&out, "l2", "a_to_b", "abr_cells_sent") as f64 * cell_bits / secs;
    let cbr = port_u64(&out, "l2", "a_to_b", "cbr_cells_sent") as f64 * cell_bits / secs;
    assert!((cbr - 100e6).abs() < 1e6, "{cbr}");
    let target = 0.9 * (150e6 - 100e6);
    assert!((abr - target).abs() / target < 0.1, "ABR {abr} vs {target}");
    // Utilization ≈ U·C + (1 − U)·R.
    let util = (abr + cbr) / 150e6;
    assert!((util - (0.9 + 0.1 * 100.0 / 150.0)).abs() < 0.05, "{util}");
}

#[test]
fn partial_packet_discard_raises_tcp_goodput_under_cell_loss() {
    // Check 16's second half (Romanow and Floyd 1995): the cells of a damaged frame that a
    // switch keeps forwarding are wasted; dropping them leaves room for whole frames.
    let mut set = LOSSY.to_vec();
    let without = total_goodput_mbps(&run(PAPER, &set));
    set.push("atm.ppd=true");
    let with = total_goodput_mbps(&run(PAPER, &set));
    assert!(
        with > 1.1 * without,
        "PPD {with} Mbit/s, none {without} Mbit/s"
    );
}

#[test]
fn atm_cbr_sources_start_in_phase_without_jitter_and_each_at_its_own_offset_with_it() {
    // Paper 000's ten 10 Mbit/s sources, on for 84 ms from `start`; a 5 ms run ends inside the
    // first on period, so each source sends about (5 ms - its start) · 23,585 cells/s.
    let cbr = |out: &RunOutput| -> Vec<(f64, u64)> {
        let kind = out.atm_vcs.str("kind").unwrap();
        let start = out.atm_vcs.f64("start_s").unwrap();
        let sent = out.atm_vcs.u64("cells_sent").unwrap();
        (0..kind.len())
            .filter(|&i| kind[i] == "cbr")
            .map(|i| (start[i], sent[i]))
            .collect()
    };
    // The paper's scenario sets a start jitter (its plan's replicates): turn it off here.
    let in_phase = cbr(&run(PAPER, &["duration=\"5ms\"", "jitter.start=\"0s\""]));
    assert_eq!(in_phase.len(), 10);
    assert!(in_phase.iter().all(|&s| s == in_phase[0]), "{in_phase:?}");
    assert_eq!(in_phase[0].0, 0.0);

    let window = crate::time::SimDuration::from_millis(4);
    let jittered = cbr(&run(PAPER, &["duration=\"5ms\"", "jitter.start=\"4ms\""]));
    let rate = crate::atm::cell_rate(crate::time::Rate::mbps(10));
    for (k, &(start, sent)) in jittered.iter().enumerate() {
        // Source k's phase is the first draw of its own stream, `jitter/atm_cbr/bg/<k>`.
        let offset = crate::jitter::atm_cbr_offset(1, "bg", k as u32, window);
        assert_eq!(start, offset.as_secs_f64());
        // ... and the fabric sends from there: the cells of [offset, 5 ms], give or take one.
        let expected = (0.005 - start) * rate;
        assert!(
            (sent as f64 - expected).abs() <= 1.5,
            "{k}: {sent} vs {expected}"
        );
    }
    // The sources left their common phase, in the order of their draws.
    let mut by_start = jittered.clone();
    by_start.sort_by(|a, b| a.0.total_cmp(&b.0));
    assert!(by_start
        .windows(2)
        .all(|w| w[0].0 < w[1].0 && w[0].1 >= w[1].1));
    // A group's own start_jitter of 0 keeps it in phase whatever [jitter] says.
    let own = cbr(&run(
        PAPER,
        &[
            "duration=\"5ms\"",
            "jitter.start=\"4ms\"",
            "atm.cbr.bg.start_jitter=\"0s\"",
        ],
    ));
    assert_eq!(own, in_phase);
}

#[test]
fn an_atm_cbr_groups_window_must_leave_it_time_to_start_before_its_stop() {
    let message = |overrides: &[&str]| {
        let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
        load_scenario(PAPER, &overrides, None)
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        message(&["atm.cbr.bg.stop=\"1ms\"", "jitter.start=\"1ms\""]),
        "jitter.start: 1ms is not less than stop - start of atm.cbr.bg (1ms): its start offset \
         could reach its stop; lower jitter.start or give atm.cbr.bg its own start_jitter"
    );
    assert_eq!(
        message(&[
            "atm.cbr.bg.stop=\"1ms\"",
            "atm.cbr.bg.start_jitter=\"-1ms\""
        ]),
        "atm.cbr.bg.start_jitter: \"-1ms\" is negative; a duration must be >= 0"
    );
}
