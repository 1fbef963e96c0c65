// SPDX-License-Identifier: MIT
use ccsim_core::RunOutput;

use crate::common::*;

/// created = delivered + dropped + alive, end to end; and per link direction:
/// offered = queue drops + MTU drops + link-down drops + loss drops + arrived + inside
/// (queued, in transmission, propagating); transmitted >= loss drops + arrived.
pub fn assert_conserved(out: &RunOutput) {
    let s = &out.summary;
    assert_eq!(
        s.packets_created,
        s.packets_delivered + s.packets_dropped + s.packets_alive,
        "end to end: {s:?}"
    );
    let l = &out.links;
    for i in 0..l.rows() {
        let offered = u64s(l, "packets_offered")[i];
        let tx = u64s(l, "packets")[i];
        let arrived = u64s(l, "packets_arrived")[i];
        let inside = u64s(l, "packets_inside")[i];
        let dq = u64s(l, "drops_queue")[i] + u64s(l, "drops_mtu")[i];
        let dl = u64s(l, "drops_loss")[i];
        // Offered while down, waiting when it went down, or on the wire then.
        let dd = u64s(l, "drops_link_down")[i];
        assert_eq!(offered, dq + dl + dd + arrived + inside, "row {i}: offered");
        assert!(tx >= dl + arrived, "row {i}: transmitted < lost + arrived");
        assert!(
            offered >= dq + tx,
            "row {i}: offered < dropped + transmitted"
        );
    }
}

#[test]
fn a_lossy_dumbbell_conserves_packets() {
    let text = dumbbell(
        3,
        10,
        "20ms",
        "{ type = \"droptail\", limit = 20 }",
        "10s",
        "variant = \"sack\"",
    )
    .replace(
        "[links.in1]",
        "loss = { type = \"uniform\", rate = 0.03 }\n[links.in1]",
    );
    assert_conserved(&run_toml(&text, &[], None));
}

#[test]
fn prr_recovery_on_a_lossy_dumbbell_conserves_packets_with_either_bound() {
    // RFC 6937's cwnd = pipe + sndcnt must neither lose nor invent a packet, whichever bound
    // rebuilds the pipe; each run sees losses enough for many recoveries.
    for bound in ["ssrb", "crb"] {
        let text = dumbbell(
            3,
            10,
            "20ms",
            "{ type = \"droptail\", limit = 20 }",
            "10s",
            &format!("variant = \"prr\"\nprr_bound = \"{bound}\""),
        )
        .replace(
            "[links.in1]",
            "loss = { type = \"uniform\", rate = 0.03 }\n[links.in1]",
        );
        let out = run_toml(&text, &[], None);
        assert_conserved(&out);
        let recoveries: u64 = u64s(&out.flows, "fast_retransmits").iter().sum();
        assert!(recoveries > 10, "{bound}: {recoveries} recoveries");
    }
}

// Random networks are the fuzz test's (tests/fuzz.rs): it replaced the small random-network
// proptest that lived here, with every queue, loss model, hook, flow type and controller, and
// checks this same conservation on each generated scenario.
