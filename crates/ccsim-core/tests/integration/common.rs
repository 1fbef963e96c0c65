// SPDX-License-Identifier: MIT
use ccsim_core::{load_scenario, run, RunOutput, Table};

/// Parse and run a TOML scenario; panics with the scenario error if it is invalid.
pub fn run_toml(text: &str, overrides: &[&str], seed: Option<u64>) -> RunOutput {
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    let loaded = load_scenario(text, &overrides, seed).unwrap_or_else(|e| panic!("{e}"));
    run(&loaded.spec).unwrap_or_else(|e| panic!("{e}"))
}

/// A dumbbell: h1..hN -> r1 -> r2 -> d1..dN, access links 10x the bottleneck, 1 ms.
pub fn dumbbell(
    n: usize,
    rate_mbps: u64,
    delay: &str,
    queue: &str,
    duration: &str,
    tcp: &str,
) -> String {
    let mut s =
        format!("seed = 1\nduration = \"{duration}\"\n[nodes]\nr1 = \"router\"\nr2 = \"router\"\n");
    for i in 1..=n {
        s += &format!("h{i} = \"host\"\nd{i} = \"host\"\n");
    }
    s += &format!(
        "[links.bottleneck]\na = \"r1\"\nb = \"r2\"\nrate = \"{rate_mbps}Mbps\"\ndelay = \"{delay}\"\nqueue = {queue}\n"
    );
    for i in 1..=n {
        s += &format!(
            "[links.in{i}]\na = \"h{i}\"\nb = \"r1\"\nrate = \"{}Mbps\"\ndelay = \"1ms\"\nqueue = {{ type = \"droptail\", limit = 10000 }}\n",
            rate_mbps * 10
        );
        s += &format!(
            "[links.out{i}]\na = \"r2\"\nb = \"d{i}\"\nrate = \"{}Mbps\"\ndelay = \"1ms\"\nqueue = {{ type = \"droptail\", limit = 10000 }}\n",
            rate_mbps * 10
        );
    }
    s += &format!("[tcp]\n{tcp}\n");
    for i in 1..=n {
        s += &format!("[flows.f{i}]\ntype = \"tcp\"\nsrc = \"h{i}\"\ndst = \"d{i}\"\n");
    }
    s
}

pub fn f64s<'a>(t: &'a Table, col: &str) -> &'a [f64] {
    t.f64(col).unwrap_or_else(|| panic!("no f64 column {col}"))
}
pub fn u64s<'a>(t: &'a Table, col: &str) -> &'a [u64] {
    t.u64(col).unwrap_or_else(|| panic!("no u64 column {col}"))
}

/// The row of the links table for `link` in `direction`.
pub fn link_row(out: &RunOutput, link: &str, direction: &str) -> usize {
    let names = out.links.str("link").expect("link column");
    let dirs = out.links.str("direction").expect("direction column");
    (0..names.len())
        .find(|&i| names[i] == link && dirs[i] == direction)
        .unwrap_or_else(|| panic!("no link {link} {direction}"))
}

pub fn jain(xs: &[f64]) -> f64 {
    let s: f64 = xs.iter().sum();
    let s2: f64 = xs.iter().map(|x| x * x).sum();
    s * s / (xs.len() as f64 * s2)
}
