// SPDX-License-Identifier: MIT
//! The feedback loop of one VC through a fabric built by hand (no scenario): a host, a switch
//! whose port towards the destination is the bottleneck, and the destination.
//!
//! ```text
//!   h (node 0) ─port 0─> s (node 1) ─port 1 (50 Mbit/s)─> d (node 2)
//!              <─port 3─            <─port 2─
//! ```

use super::abr::AbrParams;
use super::cell::cell_rate;
use super::fabric::{AtmFabric, PortPlan, VcPlan};
use super::switch::{Feedback, PortParams};
use crate::packet::Packet;
use crate::time::{Rate, SimDuration, SimTime};

fn port(chan: u32, from: u32, to: u32, mbps: u64, switch: bool) -> PortPlan {
    PortPlan {
        chan,
        from_node: from,
        to_node: to,
        to_iface: chan,
        rate: Rate(mbps * 1_000_000),
        delay: SimDuration::from_micros(5),
        switch,
    }
}

fn abr() -> AbrParams {
    let pcr = cell_rate(Rate(150_000_000));
    AbrParams {
        pcr,
        mcr: 1000.0,
        icr: pcr,
        tcr: 1000.0,
        ..super::abr::tests::tm4()
    }
}

/// The network above with `feedback` at the switch; VC 0 from h to d (address 1), and, with
/// `reverse`, VC 1 from d back to h with its own ABR parameters.
fn fabric(feedback: Feedback, reverse: Option<AbrParams>, fwd: AbrParams) -> AtmFabric {
    let ports = vec![
        port(0, 0, 1, 150, false),
        port(1, 1, 2, 50, true),
        port(2, 2, 1, 150, false),
        port(3, 1, 0, 150, true),
    ];
    let params = PortParams {
        cbr_buffer: 100,
        abr_buffer: 1_000_000,
        feedback,
        epd_threshold: None,
        ppd: false,
    };
    let frtt = SimDuration::from_micros(20);
    let mut vcs = vec![VcPlan {
        name: "h>d".into(),
        dst_addr: 1,
        path: vec![0, 1],
        back: vec![2, 3],
        reverse: reverse.map(|_| 1),
        abr: fwd,
        frtt,
    }];
    if let Some(r) = reverse {
        vcs.push(VcPlan {
            name: "d>h".into(),
            dst_addr: 0,
            path: vec![2, 3],
            back: vec![0, 1],
            reverse: Some(0),
            abr: r,
            frtt,
        });
    }
    AtmFabric::new(4, ports, params, vcs, Vec::new())
}

/// Hand VC 0 `frames` frames of 9,180 bytes (192 cells each) at time zero.
fn load(f: &mut AtmFabric, frames: u64) {
    for i in 0..frames {
        assert!(f.send(SimTime::ZERO, 0, Packet::test_udp(9180, 0, i)));
    }
}

#[test]
fn efci_marks_at_a_congested_switch_come_back_as_ci_and_cut_the_sources_acr_by_rdf() {
    // The source starts at PCR = 150 Mbit/s into a 50 Mbit/s port: the queue there passes the
    // EFCI threshold, data cells get EFCI, the destination turns FRMs around with CI set
    // (TM 4.0 destination rule 2), and each such BRM cuts ACR by ACR·RDF (source rule 8).
    let p = abr();
    let mut f = fabric(Feedback::Efci { threshold: 10 }, None, p);
    load(&mut f, 200);
    let mut out = Vec::new();
    let (mut t, step) = (SimTime::ZERO, SimDuration::from_micros(1));
    let (mut cut, mut raised) = (0, 0);
    let mut acr = f.vcs[0].acr.acr;
    let (mut got, mut got_ci) = (0, 0);
    while t < SimTime::from_millis(30) {
        t += step;
        f.advance(t, t, &mut out, u64::MAX);
        out.clear();
        let s = &f.vcs[0].stats;
        let (n, n_ci) = (s.brm_received - got, s.brm_ci_received - got_ci);
        let now = f.vcs[0].acr.acr;
        if n == 1 && n_ci == 1 {
            assert_eq!(
                now,
                (acr - acr * p.rdf).max(p.mcr),
                "a BRM with CI at {t:?}"
            );
            cut += 1;
        } else if n == 1 {
            assert_eq!(
                now,
                (acr + p.rif * p.pcr).min(p.pcr),
                "a BRM without CI at {t:?}"
            );
            raised += 1;
        }
        (got, got_ci, acr) = (s.brm_received, s.brm_ci_received, now);
    }
    assert!(
        f.ports[1].stats.efci_marked > 0,
        "the switch marked nothing"
    );
    assert!(cut > 5, "{cut} BRMs with CI");
    assert!(raised > 0, "{raised} BRMs without CI");
    // A host's port never marks: EFCI is the switch's signal.
    assert_eq!(f.ports[0].stats.efci_marked, 0);
}

/// BRMs back at VC 0's source within 50 ms, and VC 1's out-of-rate count, when VC 1 (which
/// carries VC 0's turned-around cells in rate) is held at 100 cells/s.
fn brms_with_a_slow_reverse_vc(out_of_rate: bool) -> (u64, u64) {
    let slow = AbrParams {
        pcr: 100.0,
        icr: 100.0,
        mcr: 100.0,
        ..abr()
    };
    let fwd = AbrParams {
        out_of_rate_brm: out_of_rate,
        ..abr()
    };
    let rev = AbrParams {
        out_of_rate_brm: out_of_rate,
        ..slow
    };
    let mut f = fabric(Feedback::None, Some(rev), fwd);
    load(&mut f, 50);
    let mut out = Vec::new();
    let mut t = SimTime::ZERO;
    while t < SimTime::from_millis(50) {
        t += SimDuration::from_micros(10);
        f.advance(t, t, &mut out, u64::MAX);
        out.clear();
    }
    (
        f.vcs[0].stats.brm_received,
        f.vcs[1].stats.brm_sent_out_of_rate,
    )
}

#[test]
fn out_of_rate_brms_bring_feedback_back_past_a_slow_reverse_vc_at_most_at_tcr() {
    let (in_rate_only, none) = brms_with_a_slow_reverse_vc(false);
    assert_eq!(none, 0);
    let (with, sent) = brms_with_a_slow_reverse_vc(true);
    // In rate, the reverse VC's 100 cells/s limit what comes back: at most 5 in 50 ms.
    assert!(in_rate_only <= 6, "{in_rate_only}");
    // Out of rate at TCR = 1,000 cells/s: about 50 in 50 ms, never more than TCR allows.
    assert!(sent > 25 && sent <= 51, "{sent} out-of-rate BRMs");
    assert!(with >= sent, "{with} back, {sent} sent out of rate");
}

/// Run the fabric to 20 ms as the engine does, each `advance` given `budget` events at most and
/// called again until it is not cut short: the counters and what it handed back, when.
fn run_in_budgets(budget: u64) -> (u64, u64, String) {
    let mut f = fabric(Feedback::Efci { threshold: 10 }, Some(abr()), abr());
    load(&mut f, 100);
    let (mut now, end) = (SimTime::ZERO, SimTime::from_millis(20));
    let mut out = Vec::new();
    let mut handed = String::new();
    while let Some(t) = f.next_time().filter(|&t| t <= end) {
        let mut from = t.max(now);
        loop {
            let done = f.advance(from, end, &mut out, budget);
            from = done.last;
            if !done.cut_short {
                break;
            }
        }
        now = now.max(from);
        for (node, iface, pkt) in out.drain(..) {
            handed += &format!("{now:?} {node} {iface} {pkt:?}\n");
        }
    }
    let counters = format!(
        "{handed}{:?} {:?}",
        f.vcs.iter().map(|v| &v.stats).collect::<Vec<_>>(),
        f.ports.iter().map(|p| &p.stats).collect::<Vec<_>>()
    );
    (f.events, f.cell_hops, counters)
}

#[test]
fn an_advance_cut_into_budgets_does_exactly_what_one_call_does() {
    // The engine checks its limits between budgets (sim/atm.rs); that must change nothing.
    let whole = run_in_budgets(u64::MAX);
    assert!(whole.0 > 5_000, "{} events: too few to cut", whole.0);
    assert!(whole.2.contains("Packet"), "packets were reassembled");
    for budget in [1, 7, 4096] {
        assert_eq!(run_in_budgets(budget), whole, "budget {budget}");
    }
}
