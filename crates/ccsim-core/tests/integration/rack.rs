// SPDX-License-Identifier: MIT
//! RACK-TLP (RFC 8985) end to end: a tail loss on a dumbbell, repaired by the probe instead of
//! the retransmission timer.
use crate::common::*;

/// One 10-segment transfer (handshake, no delayed ACKs) over a 10 Mbit/s, 20 ms dumbbell. Its
/// rounds are 3, 6 and 1 segments; the last segment (with FIN) reaches d1 at 158.47 ms and is
/// the only packet on `out1` between 150 and 160 ms, when d1's interface is down: it is lost,
/// and nothing after it can reveal the loss.
fn tail_loss(tcp: &str) -> ccsim_core::RunOutput {
    let text = dumbbell(
        1,
        10,
        "20ms",
        "{ type = \"droptail\", limit = 100 }",
        "5s",
        &format!("variant = \"sack\"\ndelayed_ack = false\n{tcp}"),
    ) + "size = \"14600B\"\n\
         [[events]]\nat = \"150ms\"\nlink = \"out1\"\nnode = \"d1\"\nstate = \"down\"\n\
         [[events]]\nat = \"160ms\"\nlink = \"out1\"\nnode = \"d1\"\nstate = \"up\"\n";
    run_toml(&text, &[], None)
}

#[test]
fn a_tail_loss_probe_repairs_a_dropped_last_segment_without_a_timeout() {
    let column = |out: &ccsim_core::RunOutput, c: &str| u64s(&out.flows, c)[0];
    let done = |out: &ccsim_core::RunOutput| f64s(&out.flows, "completion_time_s")[0];
    for tcp in ["", "loss_detection = \"rack\""] {
        let out = tail_loss(tcp);
        assert_eq!(u64s(&out.links, "drops_link_down").iter().sum::<u64>(), 1);
        assert_eq!(
            column(&out, "timeouts"),
            1,
            "{tcp:?}: only the RTO finds it"
        );
        assert!(done(&out) > 1.0, "{tcp:?}: {}", done(&out));
    }
    let tlp = tail_loss("loss_detection = \"rack\"\ntlp = true");
    assert_eq!(column(&tlp, "timeouts"), 0);
    assert_eq!(column(&tlp, "retransmits"), 1);
    assert_eq!(column(&tlp, "completed"), 1);
    // The last ACK before the loss (of segment 9) reaches h1 at about 142 ms and leaves one
    // segment in flight: the probe goes 2·SRTT (about 2·45 ms) + WCDelAckT (200 ms) later,
    // at about 432 ms, and its ACK returns one RTT after that; without it the RTO (1 s).
    let t = done(&tlp);
    assert!((0.45..0.50).contains(&t), "completed at {t} s");
}

/// Three flows over a 10 Mbit/s, 20 ms dumbbell with a 20-packet buffer and 2 % random loss on
/// the bottleneck, 10 s: losses enough for many recoveries, probes and rate samples.
fn lossy(tcp: &str) -> ccsim_core::RunOutput {
    let text = dumbbell(
        3,
        10,
        "20ms",
        "{ type = \"droptail\", limit = 20 }",
        "10s",
        &format!("variant = \"sack\"\nmss = 1448\n{tcp}"),
    )
    .replace(
        "[links.in1]",
        "loss = { type = \"uniform\", rate = 0.02 }\n[links.in1]",
    );
    run_toml(&text, &[], None)
}

#[test]
fn rack_tlp_runs_with_bbr_and_with_paced_reno_on_a_lossy_dumbbell_and_conserves_packets() {
    // The scoreboard's one walk feeds RACK and BBR's rate sampler together, and the deadline
    // serves pacing, RACK's two timers and the RTO: with each sender option on one flow the run
    // must neither lose nor invent a packet, and RACK must change what happens.
    const RACK: &str = "loss_detection = \"rack\"\ntlp = true\ndsack = true";
    let sent = |out: &ccsim_core::RunOutput, c: &str| u64s(&out.flows, c).iter().sum::<u64>();
    for cc in ["cc = \"bbr\"", "pacing = true"] {
        let dupack = lossy(cc);
        let rack = lossy(&format!("{cc}\n{RACK}"));
        crate::conservation::assert_conserved(&rack);
        assert!(u64s(&rack.links, "drops_loss").iter().sum::<u64>() > 50);
        assert!(sent(&rack, "retransmits") > 50, "{cc}: losses are repaired");
        // Most of the 10 s · 10 Mbit/s got through (the random losses cost a few percent).
        let goodput: f64 = f64s(&rack.flows, "goodput_bps").iter().sum();
        assert!(goodput > 5e6, "{cc}: {goodput} bit/s");
        assert_ne!(
            sent(&rack, "bytes_sent"),
            sent(&dupack, "bytes_sent"),
            "{cc}: RACK-TLP took no decision of its own"
        );
        // The same bits again.
        let again = lossy(&format!("{cc}\n{RACK}"));
        assert_eq!(
            u64s(&again.flows, "bytes_sent"),
            u64s(&rack.flows, "bytes_sent")
        );
    }
}
