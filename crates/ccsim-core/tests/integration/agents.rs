// SPDX-License-Identifier: MIT
//! Base-station agents (SPACK, Snoop, I-TCP) on paper 001's topology (§V, Fig. 7):
//! FH ──100 Mbit/s, 100 ms── BS ──2 Mbit/s, 10 ms── MH, loss only on the wireless hop.
use crate::common::*;
use ccsim_core::agents::{ItcpConfig, SnoopConfig, SpackConfig};
use ccsim_core::scenario::{HookSpec, TcpSpec};
use ccsim_core::{load_scenario, RunOutput};

/// Paper 001 §V: FH–BS 100 Mbit/s 100 ms, BS–MH 2 Mbit/s 10 ms, uniform loss on the BS→MH
/// direction only (the data direction), one transfer of `size` from FH to MH with MSS 1000.
fn paper001(hook: &str, loss: f64, size: &str, tcp: &str) -> String {
    let bs = if hook.is_empty() {
        "\"router\"".to_string()
    } else {
        format!("{{ type = \"router\", hook = {hook} }}")
    };
    format!(
        r#"
seed = 1
duration = "120s"
[nodes]
fh = "host"
bs = {bs}
mh = "host"
[links.wired]
a = "fh"
b = "bs"
rate = "100Mbps"
delay = "100ms"
[links.wireless]
a = "bs"
b = "mh"
rate = "2Mbps"
delay = "10ms"
loss = {{ type = "uniform", rate = {loss}, direction = "a_to_b" }}
[flows.f]
type = "tcp"
src = "fh"
dst = "mh"
size = "{size}"
mss = 1000
{tcp}
"#
    )
}

const NS2: &str = "preset = \"ns2-2001\"";
const SPACK4: &str = "{ type = \"spack\", split_acks = 4 }";
const SNOOP: &str = "{ type = \"snoop\" }";
const ITCP: &str = "{ type = \"itcp\", preset = \"ns2-2001\" }";

/// Totals over a set of seeds.
#[derive(Debug, Default)]
struct Runs {
    completion: Vec<f64>,
    delivery: Vec<f64>,
    fh_retransmits: u64,
    fh_fast_retransmits: u64,
    fh_timeouts: u64,
    /// Data packets sent on the wireless hop minus those that came over the wired hop: the
    /// agent's own retransmissions.
    agent_retransmits: i64,
    wireless_data_losses: u64,
    /// ACKs the agent suppressed (hook drops on the MH→BS direction).
    acks_suppressed: u64,
    /// ACKs toward the FH minus ACKs from the MH that reached the BS.
    acks_created: i64,
}

impl Runs {
    fn mean_completion(&self) -> f64 {
        self.completion.iter().sum::<f64>() / self.completion.len() as f64
    }
    fn mean_delivery(&self) -> f64 {
        self.delivery.iter().sum::<f64>() / self.delivery.len() as f64
    }
}

/// Runs the transfer once per seed and checks, for every run, that it completed, that the MH
/// received every byte exactly once (in order, no byte missing or duplicated in the stream)
/// and that packets were conserved.
fn runs(
    hook: &str,
    loss: f64,
    size: &str,
    tcp: &str,
    seeds: std::ops::RangeInclusive<u64>,
) -> Runs {
    let text = paper001(hook, loss, size, tcp);
    let mut r = Runs::default();
    for seed in seeds {
        let out = run_toml(&text, &[], Some(seed));
        check_run(&out, hook, seed);
        let f = &out.flows;
        r.completion.push(f64s(f, "completion_time_s")[0]);
        r.delivery.push(f64s(f, "delivery_time_s")[0]);
        r.fh_retransmits += u64s(f, "retransmits")[0];
        r.fh_fast_retransmits += u64s(f, "fast_retransmits")[0];
        r.fh_timeouts += u64s(f, "timeouts")[0];
        let l = &out.links;
        let (wired_in, wl_out) = (
            link_row(&out, "wired", "a_to_b"),
            link_row(&out, "wireless", "a_to_b"),
        );
        let (wl_in, wired_out) = (
            link_row(&out, "wireless", "b_to_a"),
            link_row(&out, "wired", "b_to_a"),
        );
        r.agent_retransmits +=
            u64s(l, "data_packets")[wl_out] as i64 - u64s(l, "data_packets")[wired_in] as i64;
        r.wireless_data_losses += u64s(l, "drops_loss")[wl_out];
        r.acks_suppressed += u64s(l, "drops_hook")[wl_in];
        r.acks_created +=
            u64s(l, "packets_offered")[wired_out] as i64 - u64s(l, "packets_arrived")[wl_in] as i64;
    }
    r
}

fn check_run(out: &RunOutput, hook: &str, seed: u64) {
    let f = &out.flows;
    assert_eq!(
        u64s(f, "completed")[0],
        1,
        "{hook} seed {seed}: not completed"
    );
    assert_eq!(
        u64s(f, "bytes_delivered")[0],
        f64s(f, "size_bytes")[0] as u64,
        "{hook} seed {seed}: bytes delivered in order to the MH"
    );
    let s = &out.summary;
    assert_eq!(
        s.packets_created,
        s.packets_delivered + s.packets_dropped + s.packets_alive,
        "{hook} seed {seed}: packet conservation {s:?}"
    );
}

fn report(label: &str, r: &Runs) {
    println!(
        "{label:34} completion {:.3} s  delivery {:.3} s  FH rtx {} (fast {}, RTO {})  \
         agent rtx {}  acks suppressed {}  acks created {}",
        r.mean_completion(),
        r.mean_delivery(),
        r.fh_retransmits,
        r.fh_fast_retransmits,
        r.fh_timeouts,
        r.agent_retransmits,
        r.acks_suppressed,
        r.acks_created
    );
}

// ---------------------------------------------------------------------------------------------
// SPACK

#[test]
fn spack_shortens_transfers_only_for_senders_that_grow_per_ack() {
    // A paired comparison: each seed runs once without and once with SPACK. The wireless
    // hop's loss stream belongs to the link direction and draws one number per packet in
    // transmission order, so the k-th packet on the hop meets the same draw in both runs: they
    // are identical until SPACK first splits an ACK, and stay close after (correlation of the
    // transfer times 0.89 to 0.96). The paired differences' spread (s.d. 0.67 to 0.86 s) is
    // about a third of that of the times themselves (1.8 to 2.3 s), so the confidence interval
    // of the mean gain is about four times narrower than when two means are compared (as this
    // test once did: its gains lay inside their intervals).
    //
    // Measured (100 KB, 5 % loss; gain = time without SPACK − time with it, 95 % CI):
    //   seeds   per-ACK growth         ABC, L = 2 SMSS        uncapped byte counting
    //   200     0.435 (0.342, 0.528)   0.420 (0.323, 0.517)   −0.349 (−0.464, −0.234)
    //   400     0.430 (0.355, 0.505)   0.412 (0.344, 0.479)   −0.322 (−0.399, −0.246)
    //   1,000   0.459 (0.406, 0.512)   0.419 (0.373, 0.465)   −0.320 (−0.372, −0.267)
    // At 400 seeds each mean gain lies more than eight standard errors (0.034 to 0.039 s) from
    // zero, and the 2,400 runs take well under a second.
    let seeds = 1..=400;
    let gain = |tcp: &str, label: &str| {
        let plain = runs("", 0.05, "100KB", tcp, seeds.clone());
        let spack = runs(SPACK4, 0.05, "100KB", tcp, seeds.clone());
        report(&format!("{label} plain"), &plain);
        report(&format!("{label} spack N=4"), &spack);
        assert!(spack.acks_created > 0, "{label}: SPACK never split an ACK");
        assert_eq!(plain.acks_created, 0);
        let g = PairedDifference::new(&plain.completion, &spack.completion);
        println!("{label}: SPACK's paired gain {g}");
        g
    };
    // Why growth decides (this model's reasoning, not the paper's): after a loss
    // is repaired, the MH answers with one stretch ACK covering m segments. A sender that
    // caps growth per ACK (ns-2's per-ACK counting: one segment in slow start; RFC 3465 ABC
    // with L = 2 SMSS: at most two) gets one ACK's worth from it, and N split ACKs give it N.
    // Both should gain, significantly.
    let per_ack = gain(NS2, "ns2 per-ACK");
    assert!(
        per_ack.low() > 0.0,
        "per-ACK: SPACK's gain {per_ack} is not significant"
    );
    let abc2 = gain(&format!("{NS2}\ngrowth = \"abc\""), "ns2 ABC L=2");
    assert!(
        abc2.low() > 0.0,
        "ABC L=2: SPACK's gain {abc2} is not significant"
    );
    // A sender that credits every acknowledged byte (ABC with no limit) already gets all m
    // from the stretch ACK: splitting adds nothing and only its cost is left (the split ACKs
    // make a sender that went back to N after an RTO resend data the MH has), significantly.
    let bytes = gain(
        &format!("{NS2}\ngrowth = \"abc\"\nabc_limit = 1000"),
        "ns2 uncapped byte counting",
    );
    assert!(
        bytes.high() < 0.0,
        "uncapped byte counting: SPACK's cost {bytes} is not significant"
    );
}

#[test]
fn spack_in_front_of_a_sack_sender_never_stalls_a_transfer() {
    // Bug pinned (issue 9): each split ACK copied the real ACK's SACK blocks, which travel as
    // offsets from the ACK number, and only lowered the number: the blocks slid down over the
    // hole, the sender marked data the MH never got as SACKed and never resent it. 9 of 50
    // seeds never finished at 2 % loss, 33 of 50 at 5 %. Every run must now complete with every
    // byte delivered (checked per seed by `runs`).
    for loss in [0.02, 0.05] {
        let r = runs(SPACK4, loss, "500KB", "variant = \"sack\"", 1..=50);
        report(&format!("sack + spack N=4, loss {loss}"), &r);
        assert!(r.acks_created > 0, "SPACK never split an ACK");
    }
}

#[test]
fn spack_with_one_ack_per_split_is_plain_forwarding() {
    let plain = runs("", 0.05, "100KB", NS2, 1..=20);
    let one = runs(
        "{ type = \"spack\", split_acks = 1 }",
        0.05,
        "100KB",
        NS2,
        1..=20,
    );
    assert_eq!(plain.completion, one.completion);
    assert_eq!(one.acks_created, 0);
}

#[test]
fn spack_with_spaced_acks_conserves_packets_and_delivers_every_byte() {
    let r = runs(
        "{ type = \"spack\", split_acks = 8, spacing = \"2ms\" }",
        0.05,
        "100KB",
        NS2,
        1..=20,
    );
    assert!(r.acks_created > 0);
}

// ---------------------------------------------------------------------------------------------
// Snoop

#[test]
fn snoop_repairs_wireless_losses_locally_and_hides_them_from_the_fixed_host() {
    let plain = runs("", 0.05, "100KB", NS2, 1..=20);
    let snoop = runs(SNOOP, 0.05, "100KB", NS2, 1..=20);
    report("ns2 plain", &plain);
    report("ns2 snoop", &snoop);
    let episodes = |r: &Runs| r.fh_fast_retransmits + r.fh_timeouts;
    assert!(
        episodes(&snoop) * 10 < episodes(&plain),
        "FH loss episodes: {} with Snoop, {} without",
        episodes(&snoop),
        episodes(&plain)
    );
    assert!(snoop.acks_suppressed > 0, "no duplicate ACK was suppressed");
    assert!(snoop.agent_retransmits > 0, "no local retransmission");
    // Every data segment lost on the wireless hop was resent by someone.
    assert!(
        snoop.agent_retransmits as u64 + snoop.fh_retransmits >= snoop.wireless_data_losses,
        "{snoop:?}"
    );
    assert!(snoop.mean_completion() < plain.mean_completion());
}

// ---------------------------------------------------------------------------------------------
// I-TCP

#[test]
fn itcp_delivers_the_stream_intact_and_the_fixed_host_never_sees_a_wireless_loss() {
    let r = runs(ITCP, 0.05, "100KB", NS2, 1..=20);
    report("ns2 itcp", &r);
    assert!(r.wireless_data_losses > 0);
    assert_eq!(
        (r.fh_retransmits, r.fh_fast_retransmits, r.fh_timeouts),
        (0, 0, 0),
        "the FH retransmitted"
    );
    assert!(r.agent_retransmits > 0, "the relay repaired the losses");
}

#[test]
fn with_itcp_the_fixed_hosts_acks_come_from_the_base_station() {
    // Wired round trip: 2 x 100 ms + 83 us (1040 B at 100 Mbit/s) + 3 us (the ACK); end to end
    // adds 2 x 10 ms and 4.16 + 0.16 ms of serialization at 2 Mbit/s.
    let rtt_min = |hook: &str| {
        let out = run_toml(&paper001(hook, 0.0, "100KB", NS2), &[], None);
        check_run(&out, hook, 1);
        f64s(&out.flows, "rtt_min_s")[0]
    };
    let (split, e2e) = (rtt_min(ITCP), rtt_min(""));
    assert!((split - 0.200086).abs() < 1e-5, "FH RTT with I-TCP {split}");
    assert!((e2e - 0.224406).abs() < 1e-5, "FH RTT end to end {e2e}");
}

#[test]
fn itcp_with_a_relay_buffer_of_a_few_segments_back_pressures_the_fixed_host() {
    let small = runs(
        "{ type = \"itcp\", preset = \"ns2-2001\", relay_buffer = \"3KB\" }",
        0.05,
        "100KB",
        NS2,
        1..=10,
    );
    let large = runs(ITCP, 0.05, "100KB", NS2, 1..=10);
    report("ns2 itcp 3KB", &small);
    report("ns2 itcp 64KB", &large);
    // The FH can run at most 3 KB ahead of the MH's acknowledgments, so it finishes late,
    // close to when the MH has everything.
    assert!(small.mean_completion() > large.mean_completion());
    for (c, d) in small.completion.iter().zip(&small.delivery) {
        assert!(d - c < 0.2, "FH done at {c} s, MH at {d} s");
    }
}

// ---------------------------------------------------------------------------------------------
// All four side by side (the numbers the report quotes)

#[test]
fn transfer_times_of_the_four_schemes_at_five_percent_wireless_loss() {
    for growth in ["per_ack", "abc"] {
        let tcp = format!("{NS2}\ngrowth = \"{growth}\"");
        let mut means = vec![];
        for (name, hook) in [
            ("reno", ""),
            ("spack", SPACK4),
            ("snoop", SNOOP),
            ("itcp", ITCP),
        ] {
            let r = runs(hook, 0.05, "100KB", &tcp, 1..=20);
            report(&format!("{growth} {name}"), &r);
            means.push(r.mean_completion());
        }
        // Local repair beats end-to-end recovery by far on this path.
        assert!(
            means[2] < means[0] / 2.0 && means[3] < means[0] / 2.0,
            "{means:?}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Parser

fn bs_hook(hook: &str) -> Result<Option<HookSpec>, String> {
    load_scenario(&paper001(hook, 0.0, "10KB", ""), &[], None)
        .map(|l| l.spec.nodes["bs"].hook.clone())
        .map_err(|e| e.to_string())
}

#[test]
fn each_agent_parses_with_its_defaults() {
    assert_eq!(
        bs_hook("{ type = \"spack\" }"),
        Ok(Some(HookSpec::Spack(SpackConfig::default())))
    );
    assert_eq!(
        SpackConfig::default(),
        SpackConfig {
            split_acks: 4,
            spacing: ccsim_core::time::SimDuration::ZERO
        }
    );
    assert_eq!(
        bs_hook("{ type = \"snoop\" }"),
        Ok(Some(HookSpec::Snoop(SnoopConfig::default())))
    );
    let d = SnoopConfig::default();
    assert_eq!(
        (
            d.cache_size,
            d.min_timeout.as_nanos(),
            d.max_local_rtx,
            d.rtx_thresh
        ),
        (100, 100_000_000, 10, 1)
    );
    assert_eq!(
        bs_hook("{ type = \"itcp\" }"),
        Ok(Some(HookSpec::Itcp(Box::new(ItcpConfig {
            relay_buffer: 64_000,
            tcp: TcpSpec::default(),
            follow_mss: true,
        }))))
    );
}

#[test]
fn agent_keys_are_read_into_their_configs() {
    let Ok(Some(HookSpec::Spack(s))) =
        bs_hook("{ type = \"spack\", split_acks = 8, spacing = \"1ms\" }")
    else {
        panic!()
    };
    assert_eq!((s.split_acks, s.spacing.as_nanos()), (8, 1_000_000));
    let Ok(Some(HookSpec::Snoop(s))) = bs_hook(
        "{ type = \"snoop\", cache_size = 50, min_timeout = \"50ms\", max_local_rtx = 3, \
         rtx_thresh = 2, initial_srtt = \"20ms\", initial_rttvar = \"10ms\" }",
    ) else {
        panic!()
    };
    assert_eq!(
        (
            s.cache_size,
            s.max_local_rtx,
            s.rtx_thresh,
            s.initial_srtt.as_nanos()
        ),
        (50, 3, 2, 20_000_000)
    );
    let Ok(Some(HookSpec::Itcp(i))) =
        bs_hook("{ type = \"itcp\", relay_buffer = \"32KB\", preset = \"ns2-2001\", mss = 500 }")
    else {
        panic!()
    };
    assert_eq!(i.relay_buffer, 32_000);
    // The ns2-2001 preset's windows are 20 segments of the hook's own MSS.
    assert_eq!(
        i.tcp,
        TcpSpec {
            mss: 500,
            initial_ssthresh: Some(10_000),
            max_window: Some(10_000),
            ..TcpSpec::ns2_2001()
        }
    );
}

#[test]
fn unknown_or_invalid_agent_keys_are_rejected_naming_the_field() {
    assert_eq!(
        bs_hook("{ type = \"spack\", split = 4 }"),
        Err("nodes.bs.hook.split: unknown key; allowed: type, split_acks, spacing".into())
    );
    assert_eq!(
        bs_hook("{ type = \"snoop\", drop = 0.1 }"),
        Err(
            "nodes.bs.hook.drop: unknown key; allowed: type, cache_size, min_timeout, \
             max_local_rtx, rtx_thresh, initial_srtt, initial_rttvar"
                .into()
        )
    );
    let e = bs_hook("{ type = \"itcp\", buffer = \"1KB\" }").unwrap_err();
    assert!(
        e.starts_with("nodes.bs.hook.buffer: unknown key; allowed: type, relay_buffer, preset,"),
        "{e}"
    );
    assert_eq!(
        bs_hook("{ type = \"spack\", split_acks = 0 }"),
        Err("nodes.bs.hook.split_acks: 0 is out of range; must be from 1 to 4294967295".into())
    );
    assert_eq!(
        bs_hook("{ type = \"itcp\", relay_buffer = 500, mss = 1000 }"),
        Err("nodes.bs.hook.relay_buffer: 500 bytes is smaller than one segment (mss 1000)".into())
    );
    assert_eq!(
        bs_hook("{ type = \"split\" }"),
        Err(
            "nodes.bs.hook.type: \"split\" is not one of impair, spack, snoop, itcp, stripe, \
             policer, classifier"
                .into()
        )
    );
}

#[test]
fn an_itcp_relay_with_a_larger_mss_than_the_fixed_host_delivers_the_stream() {
    // Bug pinned: the FH's 250-byte segments reach the relay's sender (MSS 1000) in pieces, so
    // segments shorter than one MSS sit in the middle of its window; the scoreboard assumed
    // they could not, and a lookup loop stopped advancing (the run never ended).
    let fixed = "{ type = \"itcp\", preset = \"ns2-2001\", mss = 1000 }";
    for seed in 1..=5 {
        let text = paper001(fixed, 0.10, "200KB", NS2);
        let out = run_toml(&text, &["flows.f.mss=250"], Some(seed));
        check_run(&out, "itcp, FH MSS 250", seed);
    }
}

/// (agent, counter) of the one row of the agents table.
fn agent_counter(out: &RunOutput, counter: &str) -> f64 {
    assert_eq!(out.agents.rows(), 1, "one agent at the BS");
    f64s(&out.agents, counter)[0]
}

#[test]
fn the_agents_table_reports_what_each_agent_did() {
    let text = paper001(SPACK4, 0.10, "100KB", NS2);
    let out = run_toml(&text, &[], Some(3));
    assert_eq!(out.agents.str("node").unwrap(), ["bs"]);
    assert_eq!(out.agents.str("agent").unwrap(), ["spack"]);
    // Each split replaces one ACK by at most four: three created ACKs per split at most.
    let (splits, created) = (
        agent_counter(&out, "acks_split"),
        agent_counter(&out, "acks_created"),
    );
    assert!(splits > 0.0 && created > 0.0 && created <= 3.0 * splits);
    assert!(agent_counter(&out, "retransmissions_seen") >= agent_counter(&out, "times_armed"));

    let out = run_toml(&paper001(SNOOP, 0.10, "100KB", NS2), &[], Some(3));
    assert_eq!(out.agents.str("agent").unwrap(), ["snoop"]);
    // The agent resends locally what the wireless hop lost; the FH resends little.
    let local = agent_counter(&out, "local_retransmits");
    assert!(local > 0.0);
    assert!(agent_counter(&out, "dupacks_suppressed") > 0.0);

    let out = run_toml(&paper001(ITCP, 0.10, "100KB", NS2), &[], Some(3));
    assert_eq!(out.agents.str("agent").unwrap(), ["itcp"]);
    assert_eq!(agent_counter(&out, "bytes_relayed"), 100_000.0);
    assert!(agent_counter(&out, "relay_retransmits") > 0.0);

    // No hook, no row.
    let out = run_toml(&paper001("", 0.10, "100KB", NS2), &[], Some(3));
    assert_eq!(out.agents.rows(), 0);
}

#[test]
fn the_receiver_counts_segments_that_brought_nothing_new() {
    // Go-back-N after a timeout resends segments the MH already holds; without loss nothing
    // arrives twice.
    let clean = run_toml(&paper001("", 0.0, "100KB", NS2), &[], Some(1));
    assert_eq!(u64s(&clean.flows, "duplicate_segments_received"), [0]);
    let dups: u64 = (1..=5)
        .map(|seed| {
            let out = run_toml(&paper001("", 0.10, "100KB", NS2), &[], Some(seed));
            let d = u64s(&out.flows, "duplicate_segments_received")[0];
            assert!(d <= u64s(&out.flows, "retransmits")[0], "seed {seed}");
            d
        })
        .sum();
    assert!(
        dups > 0,
        "10 % loss over 5 seeds resends something the MH had"
    );
}

#[test]
fn the_itcp_relay_sends_segments_of_the_fixed_hosts_size_unless_its_mss_is_fixed() {
    // The packet trace of the wireless hop shows the relay's largest segment; the FH sends
    // 1,000 B segments.
    let largest = |hook: &str| -> u64 {
        let text = paper001(hook, 0.0, "50KB", NS2);
        let out = run_toml(
            &text,
            &["trace.packets={ links = [\"wireless:a_to_b\"] }"],
            Some(1),
        );
        let kinds = out.packets.str("kind").unwrap();
        let events = out.packets.str("event").unwrap();
        u64s(&out.packets, "payload_bytes")
            .iter()
            .zip(kinds.iter().zip(events))
            .filter(|(_, (k, e))| *k == "data" && *e == "departed")
            .map(|(b, _)| *b)
            .max()
            .unwrap_or(0)
    };
    assert_eq!(largest(ITCP), 1000, "follow: the FH's 1,000 B");
    assert_eq!(
        largest("{ type = \"itcp\", preset = \"ns2-2001\", mss = 500 }"),
        500,
        "fixed: 500 B whatever the FH sends"
    );
    assert_eq!(
        bs_hook("{ type = \"itcp\", mss = \"auto\" }"),
        Err(
            "nodes.bs.hook.mss: expected \"follow\" or a size in bytes such as 1000, found \
             string \"auto\""
                .to_string()
        )
    );
}
