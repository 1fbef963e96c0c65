// SPDX-License-Identifier: MIT
//! Fuzzing at scale (issue 10): random valid scenarios through the reader and the engine, and
//! mutated scenario files through the reader.
//!
//! - `generated_scenarios_parse_run_conserve_and_repeat` runs a fixed-seed slice of the
//!   generator (`generator.rs`) in every `cargo test`: `CCSIM_FUZZ_CASES` cases (default
//!   [`DEFAULT_CASES`]) from `CCSIM_FUZZ_SEED` (default 0).
//! - `ten_thousand_generated_scenarios` is the full run, `#[ignore]`d:
//!   `cargo test --release -p ccsim-core --test fuzz -- --ignored --nocapture` (it prints the
//!   number of cases that used each feature).
//! - `mutated_scenario_files_give_clean_errors_or_run` mutates the shipped scenario files and
//!   generated ones with proptest and checks that the reader never panics and that every error
//!   names a field or a TOML position; the mutants it accepts run under a small event limit.
//!
//! Every failure found becomes a named regression test: reader errors in
//! `tests/scenario_errors.rs`, run panics at the end of this file.

#[path = "fuzz/generator.rs"]
mod generator;

use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};

use ccsim_core::{load_scenario, run, RunOutput, ScenarioError, Table};
use generator::{generate, Case, FULL};
use proptest::prelude::*;

/// Cases in the default slice: 4 s in release on this two-core machine (10,000 take 40 s).
const DEFAULT_CASES: u64 = 1000;

fn env_u64(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(v) => v
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v:?} is not an unsigned integer")),
        Err(_) => default,
    }
}

fn u64s<'a>(t: &'a Table, col: &str) -> &'a [u64] {
    t.u64(col).unwrap_or_else(|| panic!("no u64 column {col}"))
}
fn f64s<'a>(t: &'a Table, col: &str) -> &'a [f64] {
    t.f64(col).unwrap_or_else(|| panic!("no f64 column {col}"))
}

/// Packets are conserved end to end (created = delivered + dropped + alive) and per link
/// direction (offered = queue and MTU drops + loss drops + link-down drops + arrived + still
/// inside, and what was transmitted covers what was lost and what arrived).
fn check_conserved(out: &RunOutput) -> Result<(), String> {
    let s = &out.summary;
    if s.packets_created != s.packets_delivered + s.packets_dropped + s.packets_alive {
        return Err(format!(
            "end to end: created != delivered + dropped + alive: {s:?}"
        ));
    }
    let l = &out.links;
    let names = l.str("link").expect("link column");
    let dirs = l.str("direction").expect("direction column");
    for i in 0..l.rows() {
        let offered = u64s(l, "packets_offered")[i];
        let tx = u64s(l, "packets")[i];
        let arrived = u64s(l, "packets_arrived")[i];
        let inside = u64s(l, "packets_inside")[i];
        let dq = u64s(l, "drops_queue")[i] + u64s(l, "drops_mtu")[i];
        let dl = u64s(l, "drops_loss")[i];
        // Offered while the link was down, waiting when it went down, or on the wire then.
        let dd = u64s(l, "drops_link_down")[i];
        let at = format!("link {} {}", names[i], dirs[i]);
        if offered != dq + dl + dd + arrived + inside {
            return Err(format!(
                "{at}: offered {offered} != queue/mtu drops {dq} + loss drops {dl} + link-down drops {dd} + arrived {arrived} + inside {inside}"
            ));
        }
        if tx < dl + arrived {
            return Err(format!(
                "{at}: transmitted {tx} < loss drops {dl} + arrived {arrived}"
            ));
        }
    }
    Ok(())
}

/// Every finite transfer delivers at most its size (each byte once), and exactly its size,
/// in order, when it completed. With an I-TCP relay on the path a transfer completes when the
/// relay has the last byte, so there only a transfer whose last byte reached the receiver
/// (`delivery_time_s` set) must have all of it.
fn check_transfers(out: &RunOutput, relayed: bool) -> Result<(), String> {
    let f = &out.flows;
    let names = f.str("name").expect("name column");
    let size = f64s(f, "size_bytes");
    let delivered = u64s(f, "bytes_delivered");
    let completed = u64s(f, "completed");
    let delivery = f64s(f, "delivery_time_s");
    for i in 0..f.rows() {
        if size[i].is_nan() {
            continue;
        }
        let size = size[i] as u64;
        if delivered[i] > size {
            return Err(format!(
                "flow {}: delivered {} bytes of a {size}-byte transfer",
                names[i], delivered[i]
            ));
        }
        let must_be_whole = if relayed {
            !delivery[i].is_nan()
        } else {
            completed[i] == 1
        };
        if must_be_whole && delivered[i] != size {
            return Err(format!(
                "flow {}: completed but delivered {} bytes of {size}",
                names[i], delivered[i]
            ));
        }
    }
    Ok(())
}

/// Where two outputs differ (the first differing column of each table, or the summary), with
/// the wall-clock time, the one figure that may differ, set aside; `None` when they are the
/// same bits.
fn difference(a: &RunOutput, b: &RunOutput) -> Option<String> {
    let mut sb = b.summary.clone();
    sb.wall_seconds = a.summary.wall_seconds;
    if a.summary != sb {
        return Some(format!("summary: {:?} vs {:?}", a.summary, b.summary));
    }
    for (name, ta, tb) in [
        ("flows", &a.flows, &b.flows),
        ("links", &a.links, &b.links),
        ("series", &a.series, &b.series),
    ] {
        if ta.rows() != tb.rows() {
            return Some(format!("{name}: {} rows vs {}", ta.rows(), tb.rows()));
        }
        for ((ca, va), (_, vb)) in ta.columns.iter().zip(&tb.columns) {
            if va != vb {
                return Some(format!("{name}.{ca}: {va:?} vs {vb:?}"));
            }
        }
    }
    None
}

/// Why a generated case failed; the caller prints the seed and the TOML with it.
fn check_case(case: &Case) -> Result<(), String> {
    let loaded = load_scenario(&case.toml, &[], None)
        .map_err(|e| format!("generator or reader bug: a generated scenario is refused: {e}"))?;
    let out = catch_unwind(AssertUnwindSafe(|| run(&loaded.spec)))
        .map_err(|p| format!("run panicked: {}", panic_text(&p)))?
        .map_err(|e| format!("run refused a parsed scenario: {e}"))?;
    check_conserved(&out)?;
    check_transfers(&out, case.has_itcp)?;
    // Re-run from the resolved scenario: it must load to the same spec and give the same bits.
    let again = load_scenario(&loaded.resolved_toml, &[], None)
        .map_err(|e| format!("the resolved scenario does not load: {e}"))?;
    // Debug shows the maps in their order, which `==` on them ignores and which fixes ids.
    if format!("{:?}", again.spec) != format!("{:?}", loaded.spec) {
        return Err("the resolved scenario loads to another spec (or order)".into());
    }
    let out2 = catch_unwind(AssertUnwindSafe(|| run(&again.spec)))
        .map_err(|p| format!("re-run panicked: {}", panic_text(&p)))?
        .map_err(|e| format!("re-run refused: {e}"))?;
    if let Some(d) = difference(&out, &out2) {
        return Err(format!(
            "the same scenario and seed gave different tables: {d}"
        ));
    }
    Ok(())
}

fn panic_text(p: &Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "(not a string)".into()
    }
}

/// Runs `cases` generated scenarios from seed `first`; panics with every failure's seed, reason
/// and TOML. Returns how many cases used each feature.
fn fuzz_generated(first: u64, cases: u64) -> BTreeMap<String, u64> {
    let mut counts: BTreeMap<String, u64> = BTreeMap::new();
    let mut failures = Vec::new();
    for seed in first..first + cases {
        let case = generate(seed, FULL);
        for f in &case.features {
            *counts.entry(f.clone()).or_default() += 1;
        }
        if let Err(why) = check_case(&case) {
            failures.push(format!("--- seed {seed}: {why}\n{}", case.toml));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {cases} generated scenarios failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    counts
}

fn print_counts(cases: u64, counts: &BTreeMap<String, u64>) {
    println!("{cases} cases; cases using each feature:");
    for (f, n) in counts {
        println!("  {f:40} {n}");
    }
}

#[test]
fn generated_scenarios_parse_run_conserve_and_repeat() {
    let cases = env_u64("CCSIM_FUZZ_CASES", DEFAULT_CASES);
    let first = env_u64("CCSIM_FUZZ_SEED", 0);
    let counts = fuzz_generated(first, cases);
    print_counts(cases, &counts);
}

#[test]
#[ignore = "the full fuzz run: cargo test --release -p ccsim-core --test fuzz -- --ignored"]
fn ten_thousand_generated_scenarios() {
    let started = std::time::Instant::now();
    let counts = fuzz_generated(0, 10_000);
    print_counts(10_000, &counts);
    println!("{:.1} s", started.elapsed().as_secs_f64());
}

#[test]
fn the_generator_covers_every_feature_in_the_default_slice() {
    let mut seen = std::collections::BTreeSet::new();
    for seed in 0..DEFAULT_CASES {
        seen.extend(generate(seed, FULL).features);
    }
    let wanted = [
        "queue:droptail_packets",
        "queue:droptail_bytes",
        "queue:red",
        "queue:red_ecn",
        "queue:red_bytes",
        "queue:xcp",
        "queue:codel",
        "queue:fq_codel",
        "queue:pie",
        "queue:tbf",
        "queue:threshold",
        "loss:uniform",
        "loss:ber",
        "loss:gilbert_elliott",
        "loss_direction:a_to_b",
        "loss_direction:b_to_a",
        "hook:impair",
        "hook:spack",
        "hook:snoop",
        "hook:itcp",
        "flow:tcp_bulk",
        "flow:tcp_finite",
        "flow:short_tcp",
        "flow:cbr",
        "flow:onoff_deterministic",
        "flow:onoff_exponential",
        "sizes:pareto_mean",
        "sizes:pareto_scale",
        "sizes:lognormal_median",
        "sizes:lognormal_mu",
        "sizes:constant",
        "cc:reno",
        "cc:highspeed",
        "cc:scalable",
        "cc:bic",
        "cc:cubic",
        "cc:vegas",
        "cc:fast",
        "cc:xcp",
        "cc:dctcp",
        "tcp:ecn=true",
        "tcp:handshake=true",
        "tcp:growth=abc",
        "tcp:timestamps=true",
        "tcp:preset=ns3",
        "tcp:rto_backoff_reset=new_ack",
        "tcp:ack_credit=delivered",
        "topology:multihomed_host",
        "link:direction_table",
        "limits:max_events",
        "trace",
        "size:21-28_nodes",
        "flow:sctp_single",
        "flow:sctp_ls",
        "flow:sctp_cmt",
        "sctp:cc=lia",
        "sctp:redundant_rtx=false",
        "sctp:rwnd_outstanding=htsn_minus_ctsn",
        "sctp:max_burst_rule=ns2",
        "sctp:rtx_policy=ssthresh",
        "events:link",
        "events:interface",
    ];
    let missing: Vec<_> = wanted.iter().filter(|f| !seen.contains(**f)).collect();
    assert!(missing.is_empty(), "never generated: {missing:?}");
}

// ---------------------------------------------------------------------------------------------
// The mutation fuzzer of the reader.

/// The scenario files shipped with the repository, and a few generated ones.
fn seed_texts() -> Vec<String> {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let mut texts = Vec::new();
    for dir in [
        "examples",
        "experiments/p001-spack",
        "experiments/p002-highspeed",
    ] {
        let path = format!("{root}/{dir}");
        let mut files: Vec<_> = std::fs::read_dir(&path)
            .unwrap_or_else(|e| panic!("{path}: {e}"))
            .map(|e| e.expect("directory entry").path())
            .filter(|p| {
                let name = p.file_name().unwrap().to_string_lossy().to_string();
                name.ends_with(".toml") && name != "plan.toml"
            })
            .collect();
        files.sort();
        for f in files {
            texts.push(std::fs::read_to_string(&f).expect("scenario file"));
        }
    }
    assert!(texts.len() >= 4, "scenario files not found under {root}");
    texts.extend((0..8).map(|s| generate(1_000_000 + s, FULL).toml));
    texts
}

/// One edit of a scenario's text.
#[derive(Clone, Debug)]
enum Mutation {
    DeleteLine(usize),
    DuplicateLine(usize),
    SwapLines(usize, usize),
    /// Replace the value after the `=` of a line (or the whole line) with this text.
    ReplaceValue(usize, String),
    ReplaceLine(usize, String),
    InsertBytes(usize, Vec<u8>),
    Truncate(usize),
}

/// Values a careless or hostile user might write.
fn nasty_value() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("nan".to_string()),
        Just("inf".to_string()),
        Just("-inf".to_string()),
        Just("-1".to_string()),
        Just("0".to_string()),
        Just("-0.0".to_string()),
        Just("1e308".to_string()),
        Just("9223372036854775807".to_string()),
        Just("-9223372036854775808".to_string()),
        Just("\"18446744073709551615ns\"".to_string()),
        Just("\"99999999999999999999Gbps\"".to_string()),
        Just("\"1e400s\"".to_string()),
        Just("\"0s\"".to_string()),
        Just("\"0Mbps\"".to_string()),
        Just("\"0B\"".to_string()),
        Just("\"-1KB\"".to_string()),
        Just("\"inf\"".to_string()),
        Just("\"\"".to_string()),
        Just("true".to_string()),
        Just("[]".to_string()),
        Just("{}".to_string()),
        Just("[1, \"a\", {}]".to_string()),
        Just("{ type = \"xcp\" }".to_string()),
        Just("1979-05-27T07:32:00Z".to_string()),
        any::<i64>().prop_map(|x| x.to_string()),
        any::<f64>().prop_map(|x| format!("{x:?}")),
        (
            0u64..u64::MAX,
            prop_oneof![
                Just("ns"),
                Just("ms"),
                Just("s"),
                Just("min"),
                Just("Mbps"),
                Just("KB"),
                Just("pkt"),
                Just("")
            ]
        )
            .prop_map(|(x, u)| format!("\"{x}{u}\"")),
        "[a-z_\\.\"=\\[\\]{}, 0-9-]{0,12}",
    ]
}

fn mutation(lines: usize) -> impl Strategy<Value = Mutation> {
    let n = lines.max(1);
    prop_oneof![
        1 => (0..n).prop_map(Mutation::DeleteLine),
        1 => (0..n).prop_map(Mutation::DuplicateLine),
        1 => (0..n, 0..n).prop_map(|(a, b)| Mutation::SwapLines(a, b)),
        8 => (0..n, nasty_value()).prop_map(|(i, v)| Mutation::ReplaceValue(i, v)),
        1 => (0..n, "[ -~]{0,30}").prop_map(|(i, s)| Mutation::ReplaceLine(i, s)),
        1 => (0..n * 40, proptest::collection::vec(any::<u8>(), 1..4))
            .prop_map(|(i, b)| Mutation::InsertBytes(i, b)),
        1 => (0..n * 40).prop_map(Mutation::Truncate),
    ]
}

fn apply(text: &str, m: &Mutation) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let n = lines.len();
    if n == 0 {
        return text.to_string();
    }
    match m {
        Mutation::DeleteLine(i) => {
            lines.remove(i % n);
        }
        Mutation::DuplicateLine(i) => {
            let l = lines[i % n].clone();
            lines.insert(i % n, l);
        }
        Mutation::SwapLines(a, b) => lines.swap(a % n, b % n),
        Mutation::ReplaceValue(i, v) => {
            let l = &mut lines[i % n];
            *l = match l.find('=') {
                Some(eq) => format!("{}= {v}", &l[..eq]),
                None => v.clone(),
            };
        }
        Mutation::ReplaceLine(i, s) => lines[i % n] = s.clone(),
        Mutation::InsertBytes(at, bytes) => {
            // Random bytes: a scenario is text, so invalid UTF-8 is replaced as a reader of a
            // file would have to (the CLI reports non-UTF-8 files itself).
            let mut b = lines.join("\n").into_bytes();
            let at = at % (b.len() + 1);
            b.splice(at..at, bytes.iter().copied());
            return String::from_utf8_lossy(&b).into_owned();
        }
        Mutation::Truncate(at) => {
            let t = lines.join("\n");
            let mut at = at % (t.len() + 1);
            while !t.is_char_boundary(at) {
                at -= 1;
            }
            return t[..at].to_string();
        }
    }
    lines.join("\n")
}

/// An error a user can act on: it names a field (its path), or it is about the whole file
/// and says where in the TOML the problem is.
fn check_error(e: &ScenarioError) -> Result<(), String> {
    let shown = e.to_string();
    if shown.trim().is_empty() || e.message.trim().is_empty() {
        return Err(format!("empty error message: {e:?}"));
    }
    if e.path.is_empty() && !e.message.starts_with("TOML syntax error at line ") {
        return Err(format!(
            "error names no field and no TOML position: {shown}"
        ));
    }
    Ok(())
}

/// What the reader and the engine made of a mutant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Outcome {
    SyntaxError,
    FieldError,
    Ran,
}

/// Loads `text` (never panicking) and, if it is valid, runs it under a small event limit
/// (never panicking either).
fn check_mutant(text: &str) -> Result<Outcome, String> {
    let loaded = catch_unwind(|| load_scenario(text, &[], None))
        .map_err(|p| format!("load_scenario panicked: {}", panic_text(&p)))?;
    if let Err(e) = loaded {
        check_error(&e)?;
        return Ok(if e.path.is_empty() {
            Outcome::SyntaxError
        } else {
            Outcome::FieldError
        });
    }
    // Bound the run: a mutant may ask for hours of simulated time. The override path is the
    // one the CLI's --set takes.
    let limited = load_scenario(text, &["limits.max_events=3000".to_string()], None);
    let limited = match limited {
        Ok(l) => l,
        // A mutant whose `limits` is not a table cannot take the override: the error must
        // still be a clean one, and the run is skipped.
        Err(e) => {
            check_error(&e)?;
            return Ok(Outcome::FieldError);
        }
    };
    catch_unwind(AssertUnwindSafe(|| run(&limited.spec)))
        .map_err(|p| format!("run panicked: {}", panic_text(&p)))?
        .map_err(|e| format!("run refused a loaded scenario: {e}"))?;
    Ok(Outcome::Ran)
}

fn mutant() -> impl Strategy<Value = String> {
    let texts = seed_texts();
    (0..texts.len()).prop_flat_map(move |i| {
        let text = texts[i].clone();
        let lines = text.lines().count();
        proptest::collection::vec(mutation(lines), 1..4)
            .prop_map(move |ms| ms.iter().fold(text.clone(), |t, m| apply(&t, m)))
    })
}

#[test]
fn mutated_scenario_files_give_clean_errors_or_run() {
    use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
    use std::cell::RefCell;
    let cases = env_u64("CCSIM_FUZZ_MUTANTS", 1000);
    let config = Config {
        cases: u32::try_from(cases).expect("CCSIM_FUZZ_MUTANTS fits in u32"),
        failure_persistence: None,
        ..Config::default()
    };
    // A fixed RNG: the same mutants in every run, like the generated slice.
    let rng = TestRng::deterministic_rng(RngAlgorithm::ChaCha);
    let mut runner = TestRunner::new_with_rng(config, rng);
    let outcomes: RefCell<BTreeMap<Outcome, u64>> = RefCell::default();
    let result = runner.run(&mutant(), |text| {
        match check_mutant(&text) {
            Ok(o) => *outcomes.borrow_mut().entry(o).or_default() += 1,
            Err(why) => prop_assert!(false, "{why}\n--- mutated scenario:\n{text}"),
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    println!("{cases} mutants: {:?}", outcomes.borrow());
}

// ---------------------------------------------------------------------------------------------
// Regressions: each failure the fuzzers found, as the smallest scenario that shows it.
