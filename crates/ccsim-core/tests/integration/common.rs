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

/// The largest of several goodputs over the smallest: the direct measure of an uneven split.
/// Jain's fairness index hides it: for two flows split r : 1 it is (1 + r)² / (2 (1 + r²)), so
/// Jain ≥ 0.95 still allows r = 1.56.
pub fn max_over_min(xs: &[f64]) -> f64 {
    let max = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let min = xs.iter().copied().fold(f64::INFINITY, f64::min);
    max / min
}

/// The 0.975 quantile of Student's t distribution with `df` degrees of freedom: the factor of
/// a two-sided 95 % confidence interval. Cornish-Fisher expansion around the normal quantile,
/// Abramowitz & Stegun, *Handbook of Mathematical Functions* (1964), 26.7.5, with its first
/// four correction terms: off by 1e-5 at df = 10 and by less than 1e-6 from df = 30 on (see
/// `the_t_quantile_matches_the_printed_tables`). Below 10 degrees of freedom the expansion
/// drifts (3e-4 at 5, 1.4 at 1), so it refuses them.
pub fn t_975(df: usize) -> f64 {
    assert!(
        df >= 10,
        "t_975 is accurate from 10 degrees of freedom on, not {df}"
    );
    // Upper 2.5 % point of the standard normal distribution (A&S table 26.1).
    let x = 1.959_963_984_540_054_f64;
    let n = df as f64;
    let x2 = x * x;
    let (x3, x5, x7, x9) = (x2 * x, x2 * x2 * x, x2 * x2 * x2 * x, x2 * x2 * x2 * x2 * x);
    let g1 = (x3 + x) / 4.0;
    let g2 = (5.0 * x5 + 16.0 * x3 + 3.0 * x) / 96.0;
    let g3 = (3.0 * x7 + 19.0 * x5 + 17.0 * x3 - 15.0 * x) / 384.0;
    let g4 = (79.0 * x9 + 776.0 * x7 + 1482.0 * x5 - 1920.0 * x3 - 945.0 * x) / 92160.0;
    x + g1 / n + g2 / (n * n) + g3 / (n * n * n) + g4 / (n * n * n * n)
}

/// The mean of the paired differences `a[i] − b[i]` and its two-sided 95 % confidence
/// interval (Student's t with n − 1 degrees of freedom).
#[derive(Debug, Clone, Copy)]
pub struct PairedDifference {
    pub n: usize,
    pub mean: f64,
    /// Sample standard deviation of the differences.
    pub sd: f64,
    /// Half the width of the 95 % confidence interval of the mean.
    pub half_width: f64,
}

impl PairedDifference {
    pub fn new(a: &[f64], b: &[f64]) -> PairedDifference {
        assert_eq!(a.len(), b.len(), "paired samples");
        let n = a.len();
        let d: Vec<f64> = a.iter().zip(b).map(|(x, y)| x - y).collect();
        let mean = d.iter().sum::<f64>() / n as f64;
        let var = d.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1) as f64;
        let sd = libm::sqrt(var);
        PairedDifference {
            n,
            mean,
            sd,
            half_width: t_975(n - 1) * sd / libm::sqrt(n as f64),
        }
    }
    pub fn low(&self) -> f64 {
        self.mean - self.half_width
    }
    pub fn high(&self) -> f64 {
        self.mean + self.half_width
    }
}

impl std::fmt::Display for PairedDifference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:.3} s (95 % CI {:.3} to {:.3}; n {}, s.d. {:.3})",
            self.mean,
            self.low(),
            self.high(),
            self.n,
            self.sd
        )
    }
}

#[test]
fn the_t_quantile_matches_the_printed_tables() {
    // Upper 2.5 % critical values of t, to three decimals as printed in the NIST/SEMATECH
    // e-Handbook of Statistical Methods, §1.3.6.7.2.
    for (df, printed) in [
        (10, 2.228),
        (20, 2.086),
        (30, 2.042),
        (40, 2.021),
        (50, 2.009),
        (60, 2.000),
        (100, 1.984),
    ] {
        let t = t_975(df);
        assert!((t - printed).abs() < 5e-4, "df {df}: {t} vs {printed}");
    }
    // And the normal quantile, 1.959964, in the limit (t is above it by 2.4e-6 at a million).
    assert!((t_975(1_000_000) - 1.959_964).abs() < 5e-6);
}

/// FH ── 100 Mbit/s, 100 ms ── BS ── 2 Mbit/s, 10 ms, 5 % loss on data ── MH; one 50 KB
/// Reno transfer (the trace and pcap tests).
pub const LOSSY_WIRELESS: &str = r#"
seed = 4
duration = "60s"
[nodes]
fh = "host"
bs = "router"
mh = "host"
[links.wired]
a = "fh"
b = "bs"
rate = "100Mbps"
delay = "100ms"
[links.wl]
a = "bs"
b = "mh"
rate = "2Mbps"
delay = "10ms"
loss = { type = "uniform", rate = 0.05, direction = "a_to_b" }
[flows.transfer]
type = "tcp"
src = "fh"
dst = "mh"
size = "50KB"
preset = "ns2-2001"
"#;

/// A column of the links table at the bottleneck's a_to_b direction, as f64 (u64 columns
/// converted).
pub fn bottleneck(out: &RunOutput, col: &str) -> f64 {
    let r = link_row(out, "bottleneck", "a_to_b");
    match out.links.f64(col) {
        Some(v) => v[r],
        None => u64s(&out.links, col)[r] as f64,
    }
}

/// The bottleneck's a_to_b queue (packets) at each time-series sample from `from_s` seconds on.
pub fn bottleneck_queue_samples(out: &RunOutput, from_s: f64) -> Vec<f64> {
    let s = &out.series;
    let (t, name, metric, value) = (
        f64s(s, "time_s"),
        s.str("name").expect("name column"),
        s.str("metric").expect("metric column"),
        f64s(s, "value"),
    );
    (0..t.len())
        .filter(|&i| {
            t[i] >= from_s && name[i] == "bottleneck:a_to_b" && metric[i] == "queue_packets"
        })
        .map(|i| value[i])
        .collect()
}

/// The samples `(time_s, value)` of one time series.
pub fn samples(out: &RunOutput, name: &str, metric: &str) -> Vec<(f64, f64)> {
    let s = &out.series;
    let (t, n, m, v) = (
        f64s(s, "time_s"),
        s.str("name").expect("name column"),
        s.str("metric").expect("metric column"),
        f64s(s, "value"),
    );
    (0..t.len())
        .filter(|&i| n[i] == name && m[i] == metric)
        .map(|i| (t[i], v[i]))
        .collect()
}
