// SPDX-License-Identifier: MIT
//! Determinism: the same scenario and seed give the same bits, run after run and machine after
//! machine; another seed changes exactly the random draws.
//!
//! The pinned hashes below are the cross-machine half. Every floating-point function on a
//! simulation path goes through the pure-Rust `libm` crate (see `crates/ccsim-core/clippy.toml`),
//! so a hash computed here must come out the same on any CPU and OS. The scenarios are chosen to
//! pass through every such path: the RNG's distributions (exponential, Pareto, lognormal), RED's
//! idle aging, the bit-error loss model, Gilbert-Elliott, CUBIC's cube root, HighSpeed's
//! logarithms and powers, BIC, Scalable, Vegas, FAST and XCP's floating-point control laws.
use crate::common::*;
use ccsim_core::{Column, RunOutput, Table};

fn lossy() -> String {
    dumbbell(
        2,
        10,
        "20ms",
        "{ type = \"red\", limit = 60 }",
        "20s",
        "variant = \"sack\"",
    )
    .replace(
        "[links.in1]",
        "loss = { type = \"uniform\", rate = 0.01 }\n[links.in1]",
    ) + "[trace]\ninterval = \"100ms\"\n"
}

#[test]
fn the_same_seed_gives_identical_outputs() {
    let a = run_toml(&lossy(), &[], Some(7));
    let b = run_toml(&lossy(), &[], Some(7));
    assert_eq!(a.flows, b.flows);
    assert_eq!(a.links, b.links);
    assert_eq!(a.series, b.series);
    assert_eq!(a.summary.events, b.summary.events);
}

/// The `delivered_bytes` time series of `flow`.
fn delivered(out: &RunOutput, flow: &str) -> Vec<f64> {
    let s = &out.series;
    let (name, metric, value) = (
        s.str("name").expect("name column"),
        s.str("metric").expect("metric column"),
        f64s(s, "value"),
    );
    (0..value.len())
        .filter(|&i| name[i] == flow && metric[i] == "delivered_bytes")
        .map(|i| value[i])
        .collect()
}

/// The `start_s` of every transfer the short-flow generator `gen` started, in order.
fn short_flow_starts(out: &RunOutput, gen: &str) -> Vec<f64> {
    let names = out.flows.str("name").expect("name column");
    let starts = f64s(&out.flows, "start_s");
    let prefix = format!("{gen}#");
    (0..names.len())
        .filter(|&i| names[i].starts_with(&prefix))
        .map(|i| starts[i])
        .collect()
}

#[test]
fn another_seed_changes_the_random_draws_and_nothing_else() {
    // Random part: a 1 Mbit/s CBR stream (125 datagrams/s, the same under every seed) across a
    // link that loses 10 % of them, and a Poisson generator of short transfers. Another seed
    // must give another drop pattern (seen in the receiver's delivered bytes every 100 ms) and
    // other arrival times.
    let random = r#"
duration = "5s"
[nodes]
a = "host"
b = "host"
[links.lossy]
a = "a"
b = "b"
rate = "10Mbps"
delay = "5ms"
loss = { type = "uniform", rate = 0.1, direction = "a_to_b" }
[flows.cbr]
type = "cbr"
src = "a"
dst = "b"
rate = "1Mbps"
[flows.web]
type = "short_tcp"
src = "b"
dst = "a"
arrival_rate = 10.0
sizes = { dist = "constant", size = "10KB" }
[trace]
interval = "100ms"
"#;
    let a = run_toml(random, &[], Some(7));
    let b = run_toml(random, &[], Some(8));
    let cbr = u64s(&a.flows, "packets_sent")[0];
    assert_eq!(cbr, u64s(&b.flows, "packets_sent")[0]);
    // One datagram every 8 ms from 0 to 5 s, both ends included.
    assert_eq!(cbr, 626);
    let (da, db) = (delivered(&a, "cbr"), delivered(&b, "cbr"));
    assert_eq!(da.len(), db.len());
    let differ = da.iter().zip(&db).filter(|(x, y)| x != y).count();
    // Each 100 ms sample is the running count of 12 or 13 datagrams' fates: after the first
    // loss that one seed suffers and the other does not, the counts stay apart for a while.
    assert!(
        differ >= da.len() / 2,
        "only {differ} of {} samples of the drop pattern differ",
        da.len()
    );
    let (sa, sb) = (short_flow_starts(&a, "web"), short_flow_starts(&b, "web"));
    assert!(
        sa.len() > 20 && sb.len() > 20,
        "{} and {}",
        sa.len(),
        sb.len()
    );
    assert!(
        sa.iter().zip(&sb).all(|(x, y)| x != y),
        "arrival times coincide: {sa:?} {sb:?}"
    );

    // Deterministic part: the same network with TCP and CBR and no random component at all
    // (DropTail, no loss model, no random traffic) must not notice the seed.
    let fixed = dumbbell(
        2,
        10,
        "20ms",
        "{ type = \"droptail\", limit = 30 }",
        "5s",
        "variant = \"sack\"",
    ) + "[trace]\ninterval = \"100ms\"\n";
    let a = run_toml(&fixed, &[], Some(7));
    let b = run_toml(&fixed, &[], Some(8));
    assert!(u64s(&a.links, "drops_queue").iter().any(|&d| d > 0));
    assert_eq!(a.flows, b.flows);
    assert_eq!(a.links, b.links);
    assert_eq!(a.series, b.series);
    assert_eq!(a.summary.events, b.summary.events);
}

#[test]
fn runs_that_differ_only_in_the_size_distribution_start_their_transfers_at_the_same_times() {
    // Common random numbers across a sweep over sizes: gaps and sizes draw from separate
    // streams (traffic::ShortFlowArrivals), so the arrival process is the same at every point.
    let web = |sizes: &str| {
        format!(
            r#"
duration = "10s"
[nodes]
a = "host"
b = "host"
[links.l]
a = "a"
b = "b"
rate = "10Mbps"
delay = "10ms"
[flows.web]
type = "short_tcp"
src = "a"
dst = "b"
arrival_rate = 20.0
sizes = {sizes}
"#
        )
    };
    let runs: Vec<RunOutput> = [
        "{ dist = \"constant\", size = \"20KB\" }",
        "{ dist = \"pareto\", mean = \"20KB\", shape = 1.2 }",
        "{ dist = \"lognormal\", median = \"10KB\", sigma = 1.0 }",
    ]
    .iter()
    .map(|sizes| run_toml(&web(sizes), &[], Some(4)))
    .collect();
    let starts = short_flow_starts(&runs[0], "web");
    assert!(starts.len() > 150, "{} transfers", starts.len());
    for other in &runs[1..] {
        assert_eq!(short_flow_starts(other, "web"), starts);
    }
    // ... while the sizes themselves did change.
    let sizes = |out: &RunOutput| f64s(&out.flows, "size_bytes").to_vec();
    assert_ne!(sizes(&runs[0]), sizes(&runs[1]));
    assert_ne!(sizes(&runs[1]), sizes(&runs[2]));
}

#[test]
fn adding_a_flow_does_not_change_another_components_random_stream() {
    // The loss model on link `lossy` draws once per packet, so the same packets see the same
    // fates only if its stream is independent of everything else in the scenario.
    let base = r#"
duration = "5s"
[nodes]
a = "host"
b = "host"
c = "host"
d = "host"
[links.lossy]
a = "a"
b = "b"
rate = "10Mbps"
delay = "5ms"
loss = { type = "uniform", rate = 0.1, direction = "a_to_b" }
[links.other]
a = "c"
b = "d"
rate = "10Mbps"
delay = "5ms"
[flows.cbr]
type = "cbr"
src = "a"
dst = "b"
rate = "1Mbps"
"#;
    let extra = format!(
        "{base}[flows.extra]\ntype = \"onoff\"\nsrc = \"c\"\ndst = \"d\"\nrate = \"5Mbps\"\non = \"50ms\"\noff = \"50ms\"\ndistribution = \"exponential\"\n"
    );
    let a = run_toml(base, &[], Some(3));
    let b = run_toml(&extra, &[], Some(3));
    let r = link_row(&a, "lossy", "a_to_b");
    assert_eq!(
        u64s(&a.links, "drops_loss")[r],
        u64s(&b.links, "drops_loss")[r]
    );
    assert_eq!(
        u64s(&a.flows, "packets_received")[0],
        u64s(&b.flows, "packets_received")[0]
    );
}

// ---------------------------------------------------------------------------------------------
// Pinned hashes of whole runs.

/// The hash of each scenario's results as the code computes them today. A change that alters
/// results on purpose updates the constant on its line and says why in the commit message; any
/// other mismatch is a determinism bug (a platform math function, an unordered map, a shared
/// random stream...).
const PINNED: &[(&str, u64)] = &[
    ("controllers", 0x681e_3272_3a5c_88f1),
    ("web", 0xeeb9_4a7c_0520_b230),
    ("xcp", 0xf988_b0bb_843b_98fe),
];

/// Six controllers that use floating point, one per flow, through a RED bottleneck with random
/// loss. HighSpeed's `low_window` and FAST's `alpha` are lowered so that their own laws (not
/// their Reno fallbacks) run at these small windows.
const CONTROLLERS: &str = r#"
seed = 11
duration = "5s"
[nodes]
r1 = "router"
r2 = "router"
h1 = "host"
h2 = "host"
h3 = "host"
h4 = "host"
h5 = "host"
h6 = "host"
d = "host"
[links.bottleneck]
a = "r1"
b = "r2"
rate = "50Mbps"
delay = "10ms"
queue = { type = "red", limit = 200, min_th = 10, max_th = 40, max_p = 0.1, w_q = 0.01 }
loss = { type = "uniform", rate = 0.001, direction = "a_to_b" }
[links.exit]
a = "r2"
b = "d"
rate = "1Gbps"
delay = "1ms"
[links.in1]
a = "h1"
b = "r1"
rate = "1Gbps"
delay = "1ms"
[links.in2]
a = "h2"
b = "r1"
rate = "1Gbps"
delay = "2ms"
[links.in3]
a = "h3"
b = "r1"
rate = "1Gbps"
delay = "3ms"
[links.in4]
a = "h4"
b = "r1"
rate = "1Gbps"
delay = "4ms"
[links.in5]
a = "h5"
b = "r1"
rate = "1Gbps"
delay = "5ms"
[links.in6]
a = "h6"
b = "r1"
rate = "1Gbps"
delay = "6ms"
[tcp]
variant = "sack"
[flows.cubic]
type = "tcp"
src = "h1"
dst = "d"
cc = "cubic"
[flows.highspeed]
type = "tcp"
src = "h2"
dst = "d"
cc = { type = "highspeed", low_window = 4 }
[flows.bic]
type = "tcp"
src = "h3"
dst = "d"
cc = { type = "bic", low_window = 4 }
[flows.vegas]
type = "tcp"
src = "h4"
dst = "d"
cc = "vegas"
start = "1s"
[flows.fast]
type = "tcp"
src = "h5"
dst = "d"
cc = { type = "fast", alpha = 8 }
start = "0.5s"
[flows.scalable]
type = "tcp"
src = "h6"
dst = "d"
cc = { type = "scalable", low_window = 4 }
[trace]
interval = "100ms"
"#;

/// Poisson short transfers with Pareto and lognormal sizes (the lognormal given by its median,
/// so the scenario reader's logarithm counts too), an exponential on-off UDP source, a
/// Gilbert-Elliott bottleneck, a bit-error access link, and RED aging its average over idle
/// periods.
const WEB: &str = r#"
seed = 5
duration = "5s"
[nodes]
r1 = "router"
r2 = "router"
h1 = "host"
h2 = "host"
h3 = "host"
d = "host"
[links.bottleneck]
a = "r1"
b = "r2"
rate = "20Mbps"
delay = "10ms"
queue = { type = "red", limit = 100 }
loss = { type = "gilbert_elliott", p_good_to_bad = 0.01, p_bad_to_good = 0.3, loss_good = 0.001, loss_bad = 0.5, direction = "a_to_b" }
[links.exit]
a = "r2"
b = "d"
rate = "100Mbps"
delay = "1ms"
[links.in1]
a = "h1"
b = "r1"
rate = "100Mbps"
delay = "1ms"
loss = { type = "ber", ber = 1e-6, direction = "a_to_b" }
[links.in2]
a = "h2"
b = "r1"
rate = "100Mbps"
delay = "1ms"
[links.in3]
a = "h3"
b = "r1"
rate = "100Mbps"
delay = "1ms"
[flows.pareto]
type = "short_tcp"
src = "h1"
dst = "d"
arrival_rate = 20.0
sizes = { dist = "pareto", mean = "20KB", shape = 1.3 }
[flows.lognormal]
type = "short_tcp"
src = "h2"
dst = "d"
arrival_rate = 20.0
sizes = { dist = "lognormal", median = "10KB", sigma = 1.5 }
[flows.bursts]
type = "onoff"
src = "h3"
dst = "d"
rate = "5Mbps"
on = "100ms"
off = "200ms"
distribution = "exponential"
[trace]
interval = "100ms"
"#;

/// XCP senders and an XCP router port: the efficiency and fairness controllers' arithmetic.
fn xcp() -> String {
    dumbbell(
        2,
        20,
        "10ms",
        "{ type = \"xcp\", limit = 200 }",
        "3s",
        "variant = \"sack\"\ncc = \"xcp\"",
    ) + "[trace]\ninterval = \"100ms\"\n"
}

/// 64-bit FNV-1a, written here rather than taken from std: `DefaultHasher`'s output may change
/// between Rust releases, and a pinned constant must not.
struct Fnv1a(u64);

impl Fnv1a {
    fn new() -> Self {
        Fnv1a(0xcbf2_9ce4_8422_2325)
    }
    fn bytes(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= b as u64;
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    fn u64(&mut self, x: u64) {
        self.bytes(&x.to_le_bytes());
    }
    /// Length first, so that ("ab", "c") and ("a", "bc") hash apart.
    fn str(&mut self, s: &str) {
        self.u64(s.len() as u64);
        self.bytes(s.as_bytes());
    }
    fn table(&mut self, t: &Table) {
        self.u64(t.columns.len() as u64);
        for (name, column) in &t.columns {
            self.str(name);
            match column {
                Column::F64(v) => {
                    self.bytes(b"f");
                    self.u64(v.len() as u64);
                    // The bits, not the value: NaN payloads and -0.0 count.
                    v.iter().for_each(|x| self.u64(x.to_bits()));
                }
                Column::U64(v) => {
                    self.bytes(b"u");
                    self.u64(v.len() as u64);
                    v.iter().for_each(|&x| self.u64(x));
                }
                Column::Str(v) => {
                    self.bytes(b"s");
                    self.u64(v.len() as u64);
                    v.iter().for_each(|s| self.str(s));
                }
            }
        }
    }
}

/// `0x0123_4567_89ab_cdef`: the form of the constants in [`PINNED`].
fn hex(x: u64) -> String {
    let h = format!("{x:016x}");
    format!("0x{}_{}_{}_{}", &h[0..4], &h[4..8], &h[8..12], &h[12..16])
}

/// Guards the pinned scenarios against quietly becoming trivial (a flow that never starts, a
/// loss model that never drops), which would leave a float path out of the hash.
fn exercises_what_it_is_meant_to(name: &str, out: &RunOutput) {
    let delivered = u64s(&out.flows, "bytes_delivered");
    match name {
        "controllers" => {
            assert!(delivered.iter().all(|&b| b > 0), "{name}: {delivered:?}");
            let r = link_row(out, "bottleneck", "a_to_b");
            assert!(
                u64s(&out.links, "drops_loss")[r] > 0,
                "{name}: no random loss"
            );
            assert!(
                u64s(&out.links, "drops_queue")[r] > 0,
                "{name}: no RED drop"
            );
        }
        "web" => {
            let names = out.flows.str("name").expect("name column");
            let bursts = names
                .iter()
                .position(|n| n == "bursts")
                .expect("bursts row");
            assert!(
                delivered[bursts] > 0,
                "{name}: the on-off source sent nothing"
            );
            for gen in ["pareto#", "lognormal#"] {
                let n = names.iter().filter(|n| n.starts_with(gen)).count();
                assert!(n >= 50, "{name}: {n} transfers from {gen}");
            }
            let r = link_row(out, "bottleneck", "a_to_b");
            assert!(
                u64s(&out.links, "drops_loss")[r] > 0,
                "{name}: no Gilbert-Elliott loss"
            );
            let r = link_row(out, "in1", "a_to_b");
            assert!(
                u64s(&out.links, "drops_loss")[r] > 0,
                "{name}: no bit error"
            );
        }
        _ => {}
    }
}

/// The hash of a run's three tables and its summary, wall-clock time excepted.
fn run_hash(out: &RunOutput) -> u64 {
    let mut h = Fnv1a::new();
    h.table(&out.flows);
    h.table(&out.links);
    h.table(&out.series);
    let s = &out.summary;
    h.str(s.stop_reason.as_str());
    h.u64(s.sim_seconds.to_bits());
    for x in [
        s.events,
        s.data_packets,
        s.data_packets_sent,
        s.peak_packets,
        s.peak_heap,
        s.seed,
        s.packets_created,
        s.packets_delivered,
        s.packets_dropped,
        s.packets_alive,
    ] {
        h.u64(x);
    }
    h.0
}

#[test]
fn runs_through_every_float_path_keep_their_pinned_hashes() {
    let runs = [
        ("controllers", CONTROLLERS.to_string()),
        ("web", WEB.to_string()),
        ("xcp", xcp()),
    ];
    let mut mismatches = Vec::new();
    for (name, text) in &runs {
        let out = run_toml(text, &[], None);
        exercises_what_it_is_meant_to(name, &out);
        let got = run_hash(&out);
        let pinned = PINNED
            .iter()
            .find(|(n, _)| n == name)
            .unwrap_or_else(|| panic!("no pinned hash for {name}"))
            .1;
        if got != pinned {
            mismatches.push(format!(
                "    (\"{name}\", {}),  (pinned: {})",
                hex(got),
                hex(pinned)
            ));
        }
    }
    assert!(
        mismatches.is_empty(),
        "the results of these runs changed:\n{}\n\
         If this platform or toolchain is new, this is a determinism bug: find the non-portable \
         operation. A change that alters results on purpose updates these constants in PINNED \
         (tests/integration/determinism.rs) and says why in the commit.",
        mismatches.join("\n")
    );
}
