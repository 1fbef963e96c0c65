// SPDX-License-Identifier: MIT
use crate::common::*;

#[test]
fn one_flow_fills_a_10_mbps_20_ms_path_with_a_bdp_of_buffer() {
    // RTT ~44 ms (20 ms + 2 x 1 ms each way) -> BDP = 10 Mbit/s x 44 ms = 55 KB ~ 37 packets.
    for variant in ["reno", "newreno", "sack"] {
        let text = dumbbell(
            1,
            10,
            "20ms",
            "{ type = \"droptail\", limit = 37 }",
            "60s",
            &format!("variant = \"{variant}\"\nmss = 1460\ndelayed_ack = false"),
        );
        let out = run_toml(&text, &[], None);
        let r = link_row(&out, "bottleneck", "a_to_b");
        let util = f64s(&out.links, "utilization")[r];
        assert!(util >= 0.95, "{variant}: utilization {util}");
    }
}

#[test]
fn two_identical_flows_share_a_red_bottleneck_evenly() {
    // RED's random drops break the phase effects of a drop-tail queue (next test), so the split
    // is noise around 1:1 and seeds sample it. Measured over 500 seeds (both flows starting at
    // 0 s, 120 s runs): ln(g1/g2) has mean 0.000 and s.d. 0.076, the largest single split is
    // 1.25 (1.50 in 60 s runs, hence 120 s), and the total over 20 seeds splits at most 1.032
    // in 25 disjoint groups of 20. Bounds: 1.35 per run (|ln r| = 0.30, four s.d.) and 1.06
    // for the total (3.4 standard errors of a 20-seed mean); seeds 1 to 20 split 1.020.
    let text = dumbbell(
        2,
        10,
        "20ms",
        "{ type = \"red\", limit = 50, min_th = 10, max_th = 30, max_p = 0.1 }",
        "120s",
        "variant = \"newreno\"",
    );
    let mut total = [0.0, 0.0];
    for seed in 1..=20 {
        let out = run_toml(&text, &[], Some(seed));
        let g = f64s(&out.flows, "goodput_bps");
        assert!(max_over_min(g) <= 1.35, "seed {seed}: goodputs {g:?}");
        total[0] += g[0];
        total[1] += g[1];
    }
    let r = max_over_min(&total);
    println!("20 seeds: total goodput split {r:.4}");
    assert!(r <= 1.06, "total goodputs over 20 seeds {total:?}");
}

#[test]
fn two_identical_flows_started_together_split_a_drop_tail_bottleneck_evenly() {
    // Started at the same instant on identical paths the two flows are symmetric but for the
    // order of simultaneous events: measured split 1.024 (the second flow starting 0 to 40 ms
    // later: 1.024 to 1.025). This is not fairness in general: a drop-tail queue fed by
    // deterministic sources drops by phase (Floyd & Jacobson, "On traffic phase effects in
    // packet-switched gateways", 1992), and starting the second flow later by 140 ms, 330 ms
    // or 400 ms gives splits of 1.86, 1.95 and 2.26 for the whole run. RED (previous test) is
    // where an even split is a property. Limited Transmit (on by default since issue 28) is
    // off here: the two extra segments each flow sends into the full queue on its first
    // duplicates make the run more sensitive to that order (1.42 for all three starts, 13
    // against 18 fast retransmits), which would hide what this test watches: that nothing
    // but that order tells the two flows apart.
    for start in ["0ms", "20ms", "40ms"] {
        let text = dumbbell(
            2,
            10,
            "20ms",
            "{ type = \"droptail\", limit = 50 }",
            "60s",
            "variant = \"newreno\"\nlimited_transmit = false",
        )
        .replace(
            "[flows.f2]\ntype = \"tcp\"\n",
            &format!("[flows.f2]\ntype = \"tcp\"\nstart = \"{start}\"\n"),
        );
        let out = run_toml(&text, &[], None);
        let g = f64s(&out.flows, "goodput_bps");
        assert!(
            max_over_min(g) <= 1.1,
            "f2 starting at {start}: goodputs {g:?}"
        );
    }
}

#[test]
fn finite_transfers_under_five_percent_loss_deliver_every_byte_exactly_once() {
    for variant in ["reno", "newreno", "sack"] {
        for seed in 1..=5 {
            let text = format!(
                r#"
duration = "600s"
[nodes]
h1 = "host"
r1 = "router"
h2 = "host"
[links.access]
a = "h1"
b = "r1"
rate = "100Mbps"
delay = "5ms"
[links.wireless]
a = "r1"
b = "h2"
rate = "2Mbps"
delay = "10ms"
loss = {{ type = "uniform", rate = 0.05 }}
[flows.transfer]
type = "tcp"
src = "h1"
dst = "h2"
size = "200KB"
variant = "{variant}"
mss = 1000
"#
            );
            let out = run_toml(&text, &[], Some(seed));
            let delivered = u64s(&out.flows, "bytes_delivered")[0];
            let completed = u64s(&out.flows, "completed")[0];
            assert_eq!(completed, 1, "{variant} seed {seed} did not complete");
            // The receiver's in-order pointer only advances, so delivered == size means every
            // byte reached the application once and in order.
            assert_eq!(delivered, 200_000, "{variant} seed {seed}");
            let r = link_row(&out, "wireless", "a_to_b");
            assert!(
                u64s(&out.links, "drops_loss")[r] > 0,
                "the test must actually lose packets"
            );
        }
    }
}

#[test]
fn a_sack_sender_needs_fewer_timeouts_than_reno_under_loss() {
    let base = dumbbell(
        1,
        10,
        "20ms",
        "{ type = \"droptail\", limit = 100 }",
        "120s",
        "mss = 1460",
    );
    let lossy = base.replace(
        "[links.in1]",
        "loss = { type = \"uniform\", rate = 0.02, direction = \"a_to_b\" }\n[links.in1]",
    );
    let timeouts = |variant: &str| -> u64 {
        let out = run_toml(&lossy, &[&format!("tcp.variant={variant}")], None);
        u64s(&out.flows, "timeouts")[0]
    };
    let (reno, sack) = (timeouts("reno"), timeouts("sack"));
    assert!(sack < reno, "sack {sack} timeouts vs reno {reno}");
}

#[test]
fn with_ecn_red_marks_instead_of_dropping_and_the_sender_backs_off_without_retransmitting() {
    // RFC 3168 end to end: ECT data, CE at the RED port, ECE echoed, one reduction per window.
    let run = |ecn: bool| {
        let text = dumbbell(
            1,
            10,
            "20ms",
            "{ type = \"red\", limit = 100, min_th = 5, max_th = 15, max_p = 0.1, ecn = true }",
            "30s",
            &format!("variant = \"sack\"\nmss = 1460\necn = {ecn}"),
        );
        run_toml(&text, &[], None)
    };
    let (with, without) = (run(true), run(false));
    let r = link_row(&with, "bottleneck", "a_to_b");
    let marks = u64s(&with.links, "ecn_marks")[r];
    let drops_with = u64s(&with.links, "drops_queue")[r];
    let drops_without = u64s(&without.links, "drops_queue")[r];
    let reductions = u64s(&with.flows, "ecn_reductions")[0];
    let ce = u64s(&with.flows, "ecn_ce_received")[0];
    eprintln!(
        "ecn: marks {marks}, CE {ce}, reductions {reductions}, drops {drops_with}, \
         retransmits {}; without: drops {drops_without}, retransmits {}",
        u64s(&with.flows, "retransmits")[0],
        u64s(&without.flows, "retransmits")[0]
    );
    assert!(marks > 20, "RED marked {marks} packets");
    assert_eq!(
        ce, marks,
        "every mark reaches the receiver (no loss after the bottleneck)"
    );
    assert!(reductions > 0 && reductions <= marks);
    assert_eq!(
        u64s(&without.links, "ecn_marks")[r],
        0,
        "not-ECT packets are dropped"
    );
    assert!(
        drops_with * 5 < drops_without,
        "drops {drops_with} with ECN vs {drops_without} without"
    );
    assert!(u64s(&with.flows, "retransmits")[0] < u64s(&without.flows, "retransmits")[0]);
    let (u_with, u_without) = (
        f64s(&with.links, "utilization")[r],
        f64s(&without.links, "utilization")[r],
    );
    eprintln!(
        "utilization {u_with:.3} with ECN, {u_without:.3} without ({} fast retransmits)",
        u64s(&without.flows, "fast_retransmits")[0]
    );
}
