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
