// SPDX-License-Identifier: MIT
//! Random *valid* scenarios, as TOML text, deterministic from one `u64` seed.
//!
//! The generator knows the rules of `docs/scenario.md` and only writes what they accept, so a
//! parse error of a generated scenario is a bug in this generator or in the reader (the fuzz
//! test says which it suspects by printing both the TOML and the error). It covers every part
//! of the format that exists: hosts and routers (some hosts multihomed, with two links), every
//! queue (DropTail in packets and in bytes, RED with and without ECN, XCP), every loss model
//! in every direction, per-direction overrides, every hook, every flow type and short-flow size
//! distribution, every controller and the TCP keys, `[limits]`, `[routing]` and `[trace]`.
//!
//! Everything is kept small (a few simulated seconds at most, a few Mbit/s) so that one run
//! takes milliseconds and thousands of cases fit in a test.
//!
//! Explicit routes are not generated: a route may legally form a loop (issue 10, defect 3),
//! which is another task's work.

use std::collections::BTreeSet;
use std::fmt::Write;

/// A small xorshift64* generator (Vigna, "An experimental exploration of Marsaglia's xorshift
/// generators, scrambled", 2016), seeded through SplitMix64 so that neighbouring seeds give
/// unrelated streams. Its own, so that a seed means the same scenario whatever version of
/// proptest is in Cargo.lock.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        // SplitMix64's finalizer (Steele, Lea, Flood 2014); never yields the all-zero state
        // from which xorshift cannot leave, except for one input, which `| 1` avoids.
        let mut z = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        Rng((z ^ (z >> 31)) | 1)
    }
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next_u64() % (hi - lo + 1)
    }
    pub fn index(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }
    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Uniform in [lo, hi), rounded to 4 decimals so the TOML stays readable.
    pub fn real(&mut self, lo: f64, hi: f64) -> f64 {
        let x = lo + (hi - lo) * self.unit();
        (x * 1e4).round() / 1e4
    }
    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.index(xs.len())]
    }
}

/// One generated scenario: its text and the features it uses (for the counts in the report).
pub struct Case {
    pub toml: String,
    pub features: BTreeSet<String>,
    /// Routers that carry an `itcp` hook: their transfers complete when the relay has the
    /// last byte, possibly before the receiver has it.
    pub has_itcp: bool,
}

/// How large the generated networks may be.
#[derive(Clone, Copy)]
pub struct Size {
    pub max_routers: u64,
    pub max_hosts: u64,
    pub max_flows: u64,
}

/// Up to tens of nodes: the default for the fuzz test.
pub const FULL: Size = Size {
    max_routers: 12,
    max_hosts: 16,
    max_flows: 6,
};

struct Gen {
    rng: Rng,
    out: String,
    features: BTreeSet<String>,
}

impl Gen {
    fn feature(&mut self, f: impl Into<String>) {
        self.features.insert(f.into());
    }

    /// With probability `p`: note `feature` and add the key(s) `key` writes from the
    /// generator, one `key = value` per line (drawn after the chance).
    fn maybe(
        &mut self,
        keys: &mut Vec<String>,
        p: f64,
        feature: &str,
        key: impl FnOnce(&mut Rng) -> String,
    ) {
        if self.rng.chance(p) {
            self.feature(feature);
            keys.extend(key(&mut self.rng).lines().map(str::to_string));
        }
    }

    /// With probability `p`: `key` set to one of `choices` (a string), noted as
    /// `{prefix}:{key}={choice}`.
    fn maybe_choice(
        &mut self,
        keys: &mut Vec<String>,
        p: f64,
        prefix: &str,
        key: &str,
        choices: &[&str],
    ) {
        if self.rng.chance(p) {
            let v = *self.rng.pick(choices);
            self.feature(format!("{prefix}:{key}={v}"));
            keys.push(format!("{key} = \"{v}\""));
        }
    }

    /// With probability `p`: boolean `key`, true or false, noted as `{prefix}:{key}={value}`.
    fn maybe_flag(&mut self, keys: &mut Vec<String>, p: f64, prefix: &str, key: &str) {
        if self.rng.chance(p) {
            let v = self.rng.chance(0.5);
            self.feature(format!("{prefix}:{key}={v}"));
            keys.push(format!("{key} = {v}"));
        }
    }

    fn queue(&mut self, any_xcp: &mut bool) -> String {
        match self.rng.range(0, 10) {
            0 => {
                self.feature("queue:droptail_packets");
                format!(
                    "{{ type = \"droptail\", limit = {} }}",
                    self.rng.range(1, 200)
                )
            }
            1 => {
                self.feature("queue:droptail_bytes");
                format!(
                    "{{ type = \"droptail\", limit = \"{}KB\" }}",
                    self.rng.range(2, 300)
                )
            }
            2 | 3 => {
                let ecn = self.rng.chance(0.5);
                self.feature(if ecn { "queue:red_ecn" } else { "queue:red" });
                let gentle = self.rng.chance(0.5);
                let max_p = self.rng.real(0.01, 1.0).max(0.01);
                let w_q = self.rng.real(0.001, 0.5).max(0.001);
                if self.rng.chance(0.5) {
                    self.feature("queue:red_bytes");
                    let limit = self.rng.range(10, 300);
                    let min = self.rng.range(0, limit - 2);
                    let max = self.rng.range(min + 1, limit);
                    format!(
                        "{{ type = \"red\", limit = \"{limit}KB\", min_th = \"{min}KB\", max_th = \"{max}KB\", max_p = {max_p}, w_q = {w_q}, gentle = {gentle}, ecn = {ecn}, mean_packet_size = {} }}",
                        self.rng.range(100, 1500)
                    )
                } else {
                    let limit = self.rng.range(2, 200);
                    let min = self.rng.real(0.0, limit as f64 / 2.0);
                    let max = self.rng.range(min as u64 + 1, limit);
                    format!(
                        "{{ type = \"red\", limit = {limit}, min_th = {min}, max_th = {max}, max_p = {max_p}, w_q = {w_q}, gentle = {gentle}, ecn = {ecn} }}"
                    )
                }
            }
            5 => {
                self.feature("queue:codel");
                format!(
                    "{{ type = \"codel\", limit = {}, target = \"{}us\", interval = \"{}ms\", ecn = {} }}",
                    self.rng.range(1, 300),
                    self.rng.range(100, 20_000),
                    self.rng.range(1, 200),
                    self.rng.chance(0.5)
                )
            }
            6 => {
                self.feature("queue:fq_codel");
                format!(
                    "{{ type = \"fq_codel\", limit = {}, memory_limit = \"{}KB\", flows = {}, quantum = {}, target = \"{}us\", ecn = {}, drop_batch = {} }}",
                    self.rng.range(1, 300),
                    self.rng.range(2, 500),
                    self.rng.range(1, 64),
                    self.rng.range(60, 3000),
                    self.rng.range(100, 20_000),
                    self.rng.chance(0.5),
                    self.rng.range(1, 64)
                )
            }
            7 => {
                self.feature("queue:pie");
                format!(
                    "{{ type = \"pie\", limit = {}, target = \"{}ms\", t_update = \"{}ms\", max_burst = \"{}ms\", derandomize = {}, dq_rate_estimator = {}, ecn = {} }}",
                    self.rng.range(1, 300),
                    self.rng.range(1, 50),
                    self.rng.range(1, 50),
                    self.rng.range(0, 300),
                    self.rng.chance(0.5),
                    self.rng.chance(0.5),
                    self.rng.chance(0.5)
                )
            }
            4 => {
                // RFC 8257 §3.1's step marking: every arrival finding k or more waiting is
                // marked (dropped if not ECN-capable).
                self.feature("queue:threshold");
                let limit = self.rng.range(1, 300);
                format!(
                    "{{ type = \"threshold\", limit = {limit}, k = {} }}",
                    self.rng.range(1, limit)
                )
            }
            8 => {
                self.feature("queue:tbf");
                // The bucket holds the largest MTU the generator gives a link (9000 B).
                format!(
                    "{{ type = \"tbf\", rate = \"{}kbps\", burst = \"{}KB\", limit = {} }}",
                    self.rng.range(100, 50_000),
                    self.rng.range(9, 200),
                    self.rng.range(1, 300)
                )
            }
            9 => {
                // RFC 9332's coupled queues; the limit left out half the time (250 ms of the
                // link's rate, Appendix A.1).
                self.feature("queue:dualpi2");
                let limit = if self.rng.chance(0.5) {
                    format!("limit = {}, ", self.rng.range(1, 300))
                } else {
                    String::new()
                };
                format!(
                    "{{ type = \"dualpi2\", {limit}target = \"{}ms\", t_update = \"{}ms\", alpha = {}, beta = {}, k = {}, min_th = \"{}us\", range = \"{}us\", th_len = {}, tshift = \"{}ms\" }}",
                    self.rng.range(1, 50),
                    self.rng.range(1, 50),
                    self.rng.real(0.01, 1.0).max(0.01),
                    self.rng.real(0.1, 10.0).max(0.1),
                    self.rng.range(0, 4),
                    self.rng.range(0, 5000),
                    self.rng.range(0, 2000),
                    self.rng.range(0, 4),
                    self.rng.range(0, 100)
                )
            }
            _ => {
                self.feature("queue:xcp");
                *any_xcp = true;
                format!(
                    "{{ type = \"xcp\", limit = {}, alpha = {}, beta = {}, gamma = {} }}",
                    self.rng.range(5, 200),
                    self.rng.real(0.01, 1.0).max(0.01),
                    self.rng.real(0.01, 1.0).max(0.01),
                    self.rng.real(0.0, 1.0)
                )
            }
        }
    }

    /// A loss table; `direction` adds the link-level `direction` key.
    fn loss(&mut self, with_direction: bool) -> String {
        let dir = if with_direction {
            let d = *self.rng.pick(&["both", "a_to_b", "b_to_a"]);
            self.feature(format!("loss_direction:{d}"));
            format!(", direction = \"{d}\"")
        } else {
            String::new()
        };
        match self.rng.range(0, 3) {
            0 => {
                self.feature("loss:none");
                format!("{{ type = \"none\"{dir} }}")
            }
            1 => {
                self.feature("loss:uniform");
                format!(
                    "{{ type = \"uniform\", rate = {}{dir} }}",
                    self.rng.real(0.0, 0.05)
                )
            }
            2 => {
                self.feature("loss:ber");
                let ber = *self.rng.pick(&["1e-7", "1e-6", "5e-6", "0"]);
                format!("{{ type = \"ber\", ber = {ber}{dir} }}")
            }
            _ => {
                self.feature("loss:gilbert_elliott");
                format!(
                    "{{ type = \"gilbert_elliott\", p_good_to_bad = {}, p_bad_to_good = {}, loss_good = {}, loss_bad = {}{dir} }}",
                    self.rng.real(0.0, 0.05),
                    self.rng.real(0.05, 1.0),
                    self.rng.real(0.0, 0.01),
                    self.rng.real(0.0, 1.0)
                )
            }
        }
    }

    fn rate(&mut self) -> String {
        match self.rng.range(0, 3) {
            0 => format!("{}Kbps", self.rng.range(200, 999)),
            1 => format!("{}.{}Mbps", self.rng.range(1, 9), self.rng.range(0, 9)),
            _ => format!("{}Mbps", self.rng.range(1, 20)),
        }
    }

    fn hook(&mut self) -> String {
        match self.rng.range(0, 3) {
            0 => {
                self.feature("hook:impair");
                format!(
                    "{{ type = \"impair\", drop = {}, delay = \"{}ms\" }}",
                    self.rng.real(0.0, 0.05),
                    self.rng.range(0, 20)
                )
            }
            1 => {
                self.feature("hook:spack");
                format!(
                    "{{ type = \"spack\", split_acks = {}, spacing = \"{}ms\" }}",
                    self.rng.range(1, 8),
                    self.rng.range(0, 5)
                )
            }
            2 => {
                self.feature("hook:snoop");
                format!(
                    "{{ type = \"snoop\", cache_size = {}, min_timeout = \"{}ms\", max_local_rtx = {}, rtx_thresh = {}, initial_srtt = \"{}ms\", initial_rttvar = \"{}ms\" }}",
                    self.rng.range(1, 200),
                    self.rng.range(1, 300),
                    self.rng.range(0, 12),
                    self.rng.range(1, 4),
                    self.rng.range(0, 300),
                    self.rng.range(0, 500)
                )
            }
            _ => {
                self.feature("hook:itcp");
                let mut keys = String::new();
                self.tcp_keys(&mut keys, false, false, ", ");
                format!(
                    "{{ type = \"itcp\", relay_buffer = \"{}KB\"{keys} }}",
                    self.rng.range(2, 128)
                )
            }
        }
    }

    /// A congestion controller, as a name or a table with valid parameters.
    fn cc(&mut self, xcp_allowed: bool) -> String {
        let names: &[&str] = if xcp_allowed {
            &[
                "reno",
                "highspeed",
                "scalable",
                "bic",
                "cubic",
                "vegas",
                "fast",
                "xcp",
            ]
        } else {
            &[
                "reno",
                "highspeed",
                "scalable",
                "bic",
                "cubic",
                "vegas",
                "fast",
            ]
        };
        let name = *self.rng.pick(names);
        self.feature(format!("cc:{name}"));
        if self.rng.chance(0.5) {
            return format!("\"{name}\"");
        }
        let r = &mut self.rng;
        let params = match name {
            "highspeed" => {
                let low = r.range(1, 100);
                let low_p = r.real(0.001, 0.1).max(0.001);
                format!(
                    "low_window = {low}, high_window = {}, high_p = {}, low_p = {low_p}, high_decrease = {}",
                    low + r.range(1, 100_000),
                    low_p / 1000.0,
                    r.real(0.01, 0.9).max(0.01)
                )
            }
            "scalable" => format!(
                "a = {}, b = {}, low_window = {}",
                r.real(0.001, 1.0).max(0.001),
                r.real(0.01, 0.9).max(0.01),
                r.range(0, 40)
            ),
            "bic" => {
                let s_min = r.real(0.01, 1.0).max(0.01);
                format!(
                    "s_max = {}, s_min = {s_min}, beta = {}, low_window = {}, fast_convergence = {}, search_divisor = {}, plateau_after_timeout = {}",
                    s_min + r.real(0.0, 64.0),
                    r.real(0.01, 0.9).max(0.01),
                    r.range(0, 40),
                    r.chance(0.5),
                    r.real(1.1, 8.0),
                    r.chance(0.5)
                )
            }
            "cubic" => format!(
                "c = {}, beta = {}, fast_convergence = {}, reno_friendly = {}",
                r.real(0.01, 4.0).max(0.01),
                r.real(0.1, 0.95).max(0.1),
                r.chance(0.5),
                r.chance(0.5)
            ),
            "vegas" => {
                let alpha = r.real(0.0, 4.0);
                format!(
                    "alpha = {alpha}, beta = {}, gamma = {}, min_rtt_samples = {}, slow_start_every_other_rtt = {}",
                    alpha + r.real(0.0, 4.0),
                    r.real(0.0, 4.0),
                    r.range(1, 5),
                    r.chance(0.5)
                )
            }
            "fast" => format!(
                "alpha = {}, gamma = {}, update_interval = {}, eta_scale = {}, eta_max = {}",
                r.real(1.0, 300.0),
                r.real(0.01, 1.0).max(0.01),
                r.range(1, 3),
                r.real(0.1, 5.0),
                r.real(0.01, 1.0).max(0.01)
            ),
            "xcp" => format!("request_segments = {}", r.real(0.1, 4.0)),
            _ => String::new(),
        };
        if params.is_empty() {
            format!("{{ type = \"{name}\" }}")
        } else {
            format!("{{ type = \"{name}\", {params} }}")
        }
    }

    /// Some TCP keys, each with probability about 1/4, written as `key = value` joined by
    /// `sep` (a newline in a table, ", " inline). `own_table` says whether `abc_limit` may go
    /// with `growth = "abc"` here (a flow's own keys win; `[tcp]`'s could be overridden, so
    /// it never sets `abc_limit`).
    fn tcp_keys(&mut self, out: &mut String, own_table: bool, xcp_allowed: bool, sep: &str) {
        let mut keys: Vec<String> = Vec::new();
        let p = 0.25;
        let presets = ["rfc", "ns2-2.35", "ns2-2001", "ns3"];
        self.maybe_choice(&mut keys, p, "tcp", "preset", &presets);
        let variants = ["reno", "newreno", "sack", "prr"];
        self.maybe_choice(&mut keys, p * 2.0, "tcp", "variant", &variants);
        if self.rng.chance(p * 2.0) {
            let cc = self.cc(xcp_allowed);
            keys.push(format!("cc = {cc}"));
        }
        // At most 1448: 40 header bytes and 12 of timestamps fit a 1500-byte MTU.
        self.maybe(&mut keys, p, "tcp:mss", |r| {
            format!("mss = {}", r.range(100, 1448))
        });
        if self.rng.chance(p) {
            let v = match self.rng.range(0, 3) {
                0 => "\"rfc5681\"".to_string(),
                1 => "\"rfc3390\"".to_string(),
                2 => "\"rfc6928\"".to_string(),
                _ => self.rng.range(1, 20).to_string(),
            };
            self.feature("tcp:initial_window");
            keys.push(format!("initial_window = {v}"));
        }
        if self.rng.chance(p) {
            self.feature("tcp:initial_ssthresh");
            let v = if self.rng.chance(0.3) {
                "\"inf\"".to_string()
            } else {
                format!("\"{}pkt\"", self.rng.range(2, 100))
            };
            keys.push(format!("initial_ssthresh = {v}"));
        }
        if self.rng.chance(p) {
            self.feature("tcp:max_window");
            let v = if self.rng.chance(0.3) {
                "\"inf\"".to_string()
            } else {
                format!("\"{}pkt\"", self.rng.range(1, 200))
            };
            keys.push(format!("max_window = {v}"));
        }
        self.maybe(&mut keys, p, "tcp:rcv_buffer", |r| {
            format!("rcv_buffer = \"{}pkt\"", r.range(1, 200))
        });
        if own_table && self.rng.chance(p) {
            let v = *self.rng.pick(&["per_ack", "rfc5681", "abc"]);
            self.feature(format!("tcp:growth={v}"));
            keys.push(format!("growth = \"{v}\""));
            if v == "abc" && self.rng.chance(0.5) {
                keys.push(format!("abc_limit = {}", self.rng.range(1, 4)));
            }
        }
        self.maybe(&mut keys, p, "tcp:dupthresh", |r| {
            format!("dupthresh = {}", r.range(1, 6))
        });
        for key in [
            "limited_transmit",
            "delayed_ack",
            "restart_after_idle",
            "ecn",
            "handshake",
        ] {
            self.maybe_flag(&mut keys, p, "tcp", key);
        }
        self.maybe(&mut keys, p, "tcp:delack", |r| {
            let timeout = r.range(0, 300);
            format!(
                "delack_timeout = \"{timeout}ms\"\ndelack_count = {}",
                r.range(1, 4)
            )
        });
        self.maybe(&mut keys, p, "tcp:max_sack_blocks", |r| {
            format!("max_sack_blocks = {}", r.range(1, 4))
        });
        // rto_min <= 1 s <= 2 s <= rto_max whatever the preset or the other table says.
        self.maybe(&mut keys, p, "tcp:rto", |r| {
            let initial = r.range(1, 3000);
            let min = r.range(0, 1000);
            let max = r.range(2, 60);
            format!("rto_initial = \"{initial}ms\"\nrto_min = \"{min}ms\"\nrto_max = \"{max}s\"")
        });
        self.maybe(&mut keys, p, "tcp:clock_granularity", |r| {
            format!("clock_granularity = \"{}ms\"", r.range(0, 500))
        });
        // DCTCP (RFC 8257) needs its receiver's echo and nothing else, both in the flow's own
        // table: a flow's cc replaces [tcp]'s and its ecn overrides, so whatever [tcp] says the
        // pair stays together (one without the other is refused).
        if own_table && self.rng.chance(p / 2.0) {
            self.feature("cc:dctcp");
            keys.retain(|k| !k.starts_with("cc =") && !k.starts_with("ecn ="));
            let cc = if self.rng.chance(0.5) {
                "\"dctcp\"".to_string()
            } else {
                format!(
                    "{{ type = \"dctcp\", g = {}, initial_alpha = {} }}",
                    self.rng.real(0.001, 1.0).max(0.001),
                    self.rng.real(0.0, 1.0)
                )
            };
            keys.push(format!("cc = {cc}"));
            if self.rng.chance(0.3) {
                // An L4S sender (RFC 9331): DCTCP's echo, new data ECT(1).
                self.feature("tcp:ecn=l4s");
                keys.push("ecn = \"l4s\"".to_string());
            } else {
                keys.push("ecn = \"dctcp\"".to_string());
            }
            if self.rng.chance(0.5) {
                self.feature("tcp:ect_all");
                keys.retain(|k| !k.starts_with("ect_all"));
                keys.push("ect_all = true".to_string());
            }
        }
        // Pacing (docs/tcp.md "Pacing") and BBR, in the flow's own table only: a flow's pacing
        // keys need its own pacing on ([tcp] then cannot turn it off under them), and BBR
        // replaces the flow's controller and ECN (DCTCP's echo needs DCTCP) and refuses the
        // window controllers' pacing ratios.
        if own_table && self.rng.chance(p / 2.0) {
            self.feature("tcp:pacing");
            keys.retain(|k| !k.starts_with("pacing"));
            keys.push("pacing = true".to_string());
            if self.rng.chance(0.5) {
                keys.push(format!("pacing_quantum = {}", self.rng.range(1, 10)));
            }
            if self.rng.chance(0.5) {
                keys.push(format!(
                    "pacing_initial_quantum = {}",
                    self.rng.range(0, 20)
                ));
            }
            if self.rng.chance(0.5) {
                keys.push(format!(
                    "pacing_ss_ratio = {}",
                    self.rng.real(0.5, 4.0).max(0.01)
                ));
                keys.push(format!(
                    "pacing_ca_ratio = {}",
                    self.rng.real(0.5, 3.0).max(0.01)
                ));
            }
        }
        if own_table && self.rng.chance(p / 2.0) {
            self.feature("cc:bbr");
            keys.retain(|k| {
                !k.starts_with("cc =")
                    && !k.starts_with("ecn =")
                    && !k.starts_with("ect_all")
                    && !k.starts_with("pacing_ss_ratio")
                    && !k.starts_with("pacing_ca_ratio")
                    && !k.starts_with("pacing =")
            });
            let cc = if self.rng.chance(0.5) {
                "\"bbr\"".to_string()
            } else {
                let cruise = self.rng.range(0, 8);
                format!(
                    "{{ type = \"bbr\", cwnd_gain = {}, probe_gain = {}, cruise_phases = {cruise}, \
                     random_phases = {}, probe_rtt_duration = \"{}ms\", min_rtt_window = \"{}ms\", \
                     min_cwnd_segments = {}, full_bw_rounds = {}, bw_window_rounds = {} }}",
                    self.rng.real(0.5, 4.0).max(0.1),
                    1.0 + self.rng.real(0.0, 1.0),
                    self.rng.range(1, cruise + 1),
                    self.rng.range(0, 300),
                    self.rng.range(1, 20_000),
                    self.rng.range(1, 8),
                    self.rng.range(1, 5),
                    self.rng.range(1, 20)
                )
            };
            keys.push(format!("cc = {cc}"));
        }
        // RACK-TLP (RFC 8985) and DSACK (RFC 2883) read the SACK scoreboard: with them the
        // flow's own table names a SACK variant too (a flow's keys win over [tcp]'s, and
        // [tcp] never sets these).
        if own_table && self.rng.chance(p / 2.0) {
            self.feature("tcp:loss_detection=rack");
            keys.retain(|k| !k.starts_with("variant ="));
            let variant = *self.rng.pick(&["sack", "prr"]);
            keys.push(format!("variant = \"{variant}\""));
            keys.push("loss_detection = \"rack\"".to_string());
            if self.rng.chance(0.5) {
                self.feature("tcp:rack_constants");
                keys.push(format!("rack_min_rtt_divisor = {}", self.rng.range(1, 8)));
                keys.push(format!("rack_reo_wnd_persist = {}", self.rng.range(1, 32)));
            }
            if self.rng.chance(0.6) {
                self.feature("tcp:tlp");
                keys.push("tlp = true".to_string());
                if self.rng.chance(0.5) {
                    self.feature("tcp:tlp_constants");
                    keys.push(format!("tlp_srtt_multiple = {}", self.rng.range(1, 4)));
                    keys.push(format!(
                        "tlp_max_ack_delay = \"{}ms\"",
                        self.rng.range(0, 300)
                    ));
                    keys.push(format!(
                        "tlp_initial_pto = \"{}ms\"",
                        self.rng.range(1, 3000)
                    ));
                }
            }
            if self.rng.chance(0.5) {
                self.feature("tcp:dsack");
                keys.push("dsack = true".to_string());
            }
        }
        let guards = ["auto", "at_recovery_point", "past_recovery_point"];
        self.maybe_choice(&mut keys, p, "tcp", "recover_guard", &guards);
        let sampling = ["every_ack", "ns2"];
        self.maybe_choice(&mut keys, p, "tcp", "rtt_sampling", &sampling);
        self.maybe_flag(&mut keys, p, "tcp", "timestamps");
        if keys.iter().any(|k| k == "timestamps = true")
            && !keys.iter().any(|k| k.starts_with("mss"))
        {
            // The presets' 1460-byte segments and the 12 bytes of the option exceed a 1500-byte
            // MTU, which the build refuses (RFC 6691 §2: the sender makes room for its options).
            keys.push(format!("mss = {}", self.rng.range(100, 1448)));
        }
        self.maybe(&mut keys, p, "tcp:timestamp_clock", |r| {
            format!("timestamp_clock = \"{}us\"", r.range(1, 1_000_000))
        });
        let resets = ["valid_sample", "new_ack"];
        self.maybe_choice(&mut keys, p, "tcp", "rto_backoff_reset", &resets);
        let credits = ["cumulative", "delivered"];
        self.maybe_choice(&mut keys, p, "tcp", "ack_credit", &credits);
        for k in keys {
            out.push_str(sep);
            out.push_str(&k);
        }
        if sep == "\n" && !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
    }

    /// An SCTP association from `h{src}` to `h{dst}` over their default paths (the i-th link of
    /// one with the i-th of the other), in one of the three modes, with some of its keys.
    fn sctp_flow(&mut self, src: u64, dst: u64, duration_ms: u64) {
        let mode = *self.rng.pick(&["single", "ls", "cmt"]);
        self.feature(format!("flow:sctp_{mode}"));
        writeln!(
            self.out,
            "[flows.assoc]\ntype = \"sctp\"\nsrc = \"h{src}\"\ndst = \"h{dst}\"\nmode = \"{mode}\""
        )
        .unwrap();
        let mut keys: Vec<String> = Vec::new();
        let p = 0.25;
        let k = &mut keys;
        self.maybe(k, p, "sctp:start", |r| {
            format!("start = \"{}ms\"", r.range(0, duration_ms))
        });
        self.maybe(k, p, "sctp:rcv_buffer", |r| {
            format!("rcv_buffer = \"{}KiB\"", r.range(2, 200))
        });
        self.maybe(k, p, "sctp:path_max_retrans", |r| {
            format!("path_max_retrans = {}", r.range(0, 6))
        });
        self.maybe(k, p, "sctp:assoc_max_retrans", |r| {
            format!("assoc_max_retrans = {}", r.range(0, 12))
        });
        self.maybe(k, p, "sctp:rto", |r| {
            format!(
                "rto_initial = \"{}ms\"\nrto_min = \"100ms\"",
                r.range(1, 3000)
            )
        });
        self.maybe(k, p, "sctp:sack_frequency", |r| {
            format!("sack_frequency = {}", r.range(1, 4))
        });
        self.maybe(k, p, "sctp:sack_delay", |r| {
            format!("sack_delay = \"{}ms\"", r.range(1, 500))
        });
        self.maybe(k, p, "sctp:max_burst", |r| {
            format!("max_burst = {}", r.range(0, 8))
        });
        self.maybe(k, p, "sctp:fast_rtx_threshold", |r| {
            format!("fast_rtx_threshold = {}", r.range(1, 5))
        });
        self.maybe_flag(k, p, "sctp", "rtx_to_alt");
        self.maybe(k, p, "sctp:hb_interval", |r| {
            format!("hb_interval = \"{}ms\"", r.range(10, 2000))
        });
        self.maybe(k, p, "sctp:packet_size", |r| {
            format!("packet_size = {}", r.range(100, 1500))
        });
        if mode != "single" {
            self.maybe_choice(k, p, "sctp", "cc", &["uncoupled", "lia"]);
        }
        if mode == "ls" {
            self.maybe_flag(k, p, "sctp", "redundant_rtx");
            let readings = ["htsn_minus_ctsn", "unacked"];
            self.maybe_choice(k, p, "sctp", "rwnd_outstanding", &readings);
            self.maybe_choice(k, p, "sctp", "max_burst_rule", &["rfc4960", "ns2"]);
        }
        if mode == "cmt" {
            for key in ["sfr", "cuc", "dac"] {
                self.maybe_flag(k, p, "sctp", key);
            }
            self.maybe_choice(k, p, "sctp", "rtx_policy", &["same", "cwnd", "ssthresh"]);
        }
        for k in keys {
            writeln!(self.out, "{k}").unwrap();
        }
    }

    /// One to four `[[events]]`: a link, or one end's interface on it, down or up at a time
    /// inside the run.
    fn events(&mut self, pairs: &[(String, String)], duration_ms: u64) {
        for _ in 0..self.rng.range(1, 4) {
            let i = self.rng.index(pairs.len());
            let state = *self.rng.pick(&["down", "up"]);
            let at = self.rng.range(0, duration_ms);
            writeln!(
                self.out,
                "[[events]]\nat = \"{at}ms\"\nlink = \"l{i}\"\nstate = \"{state}\""
            )
            .unwrap();
            if self.rng.chance(0.3) {
                self.feature("events:interface");
                let (a, b) = &pairs[i];
                let node = if self.rng.chance(0.5) { a } else { b };
                writeln!(self.out, "node = \"{node}\"").unwrap();
            } else {
                self.feature("events:link");
            }
        }
    }

    fn sizes(&mut self) -> String {
        match self.rng.range(0, 4) {
            0 => {
                self.feature("sizes:pareto_mean");
                format!(
                    "{{ dist = \"pareto\", mean = \"{}KB\", shape = {} }}",
                    self.rng.range(2, 40),
                    self.rng.real(1.05, 3.0)
                )
            }
            1 => {
                self.feature("sizes:pareto_scale");
                format!(
                    "{{ dist = \"pareto\", scale = \"{}KB\", shape = {} }}",
                    self.rng.range(1, 20),
                    self.rng.real(0.5, 3.0)
                )
            }
            2 => {
                self.feature("sizes:lognormal_median");
                format!(
                    "{{ dist = \"lognormal\", median = \"{}KB\", sigma = {} }}",
                    self.rng.range(1, 30),
                    self.rng.real(0.0, 2.0)
                )
            }
            3 => {
                self.feature("sizes:lognormal_mu");
                format!(
                    "{{ dist = \"lognormal\", mu = {}, sigma = {} }}",
                    self.rng.real(6.0, 10.0),
                    self.rng.real(0.0, 1.5)
                )
            }
            _ => {
                self.feature("sizes:constant");
                format!(
                    "{{ dist = \"constant\", size = \"{}KB\" }}",
                    self.rng.range(1, 50)
                )
            }
        }
    }
}

/// The scenario of `seed`, with networks up to `size`.
pub fn generate(seed: u64, size: Size) -> Case {
    let mut g = Gen {
        rng: Rng::new(seed),
        out: String::new(),
        features: BTreeSet::new(),
    };
    let routers = g.rng.range(1, size.max_routers);
    let hosts = g.rng.range(2, size.max_hosts);
    let duration_ms = g.rng.range(100, 3000);
    writeln!(g.out, "seed = {}", g.rng.range(0, 1 << 40)).unwrap();
    writeln!(g.out, "duration = \"{duration_ms}ms\"").unwrap();
    if g.rng.chance(0.2) {
        g.feature("limits:max_events");
        writeln!(g.out, "[limits]\nmax_events = {}", g.rng.range(1, 200_000)).unwrap();
    }

    // Nodes: hooks go on routers (a base station is a router); an impair hook sometimes on a
    // host too.
    g.out.push_str("[nodes]\n");
    let mut has_itcp = false;
    for r in 0..routers {
        if g.rng.chance(0.3) {
            let hook = g.hook();
            has_itcp |= hook.contains("\"itcp\"");
            writeln!(g.out, "r{r} = {{ type = \"router\", hook = {hook} }}").unwrap();
        } else {
            writeln!(g.out, "r{r} = \"router\"").unwrap();
        }
    }
    for h in 0..hosts {
        if g.rng.chance(0.05) {
            g.feature("hook:impair_on_host");
            writeln!(
                g.out,
                "h{h} = {{ type = \"host\", hook = {{ type = \"impair\", drop = {} }} }}",
                g.rng.real(0.0, 0.05)
            )
            .unwrap();
        } else {
            writeln!(g.out, "h{h} = \"host\"").unwrap();
        }
    }

    // Links: a random tree over the routers keeps them connected; extra router links make
    // cycles (and parallel links); every host hangs off one router, some off two.
    let mut pairs: Vec<(String, String)> = Vec::new();
    for r in 1..routers {
        let parent = g.rng.range(0, r - 1);
        pairs.push((format!("r{parent}"), format!("r{r}")));
    }
    if routers > 1 {
        for _ in 0..g.rng.range(0, routers / 2 + 1) {
            let a = g.rng.range(0, routers - 1);
            let b = g.rng.range(0, routers - 1);
            if a != b {
                g.feature("topology:cycle_or_parallel");
                pairs.push((format!("r{a}"), format!("r{b}")));
            }
        }
    }
    for h in 0..hosts {
        let r = g.rng.range(0, routers - 1);
        pairs.push((format!("h{h}"), format!("r{r}")));
        if g.rng.chance(0.15) {
            g.feature("topology:multihomed_host");
            let r2 = g.rng.range(0, routers - 1);
            pairs.push((format!("r{r2}"), format!("h{h}")));
        }
    }
    if g.rng.chance(0.1) {
        g.feature("topology:host_to_host_link");
        let a = g.rng.range(0, hosts - 1);
        let b = (a + 1) % hosts;
        pairs.push((format!("h{a}"), format!("h{b}")));
    }
    let mut any_xcp = false;
    for (i, (a, b)) in pairs.iter().enumerate() {
        writeln!(g.out, "[links.l{i}]\na = \"{a}\"\nb = \"{b}\"").unwrap();
        let rate = g.rate();
        writeln!(g.out, "rate = \"{rate}\"").unwrap();
        writeln!(g.out, "delay = \"{}ms\"", g.rng.range(0, 40)).unwrap();
        if g.rng.chance(0.2) {
            g.feature("link:mtu");
            writeln!(g.out, "mtu = {}", g.rng.range(1500, 9000)).unwrap();
        }
        if g.rng.chance(0.7) {
            let q = g.queue(&mut any_xcp);
            writeln!(g.out, "queue = {q}").unwrap();
        }
        if g.rng.chance(0.5) {
            let with_direction = g.rng.chance(0.5);
            let l = g.loss(with_direction);
            writeln!(g.out, "loss = {l}").unwrap();
        }
        for dir in ["a_to_b", "b_to_a"] {
            if g.rng.chance(0.1) {
                g.feature("link:direction_table");
                writeln!(g.out, "[links.l{i}.{dir}]").unwrap();
                if g.rng.chance(0.5) {
                    let rate = g.rate();
                    writeln!(g.out, "rate = \"{rate}\"").unwrap();
                }
                if g.rng.chance(0.5) {
                    writeln!(g.out, "delay = \"{}ms\"", g.rng.range(0, 40)).unwrap();
                }
                if g.rng.chance(0.5) {
                    let q = g.queue(&mut any_xcp);
                    writeln!(g.out, "queue = {q}").unwrap();
                }
                if g.rng.chance(0.5) {
                    let l = g.loss(false);
                    writeln!(g.out, "loss = {l}").unwrap();
                }
            }
        }
    }

    if g.rng.chance(0.5) {
        g.feature("tcp_table");
        let mut keys = String::new();
        g.tcp_keys(&mut keys, false, any_xcp, "\n");
        g.out.push_str("[tcp]");
        g.out.push_str(&keys);
        g.out.push('\n');
    }

    // Flows between distinct hosts; every host pair is connected through the routers.
    let flows = g.rng.range(1, size.max_flows);
    for i in 0..flows {
        let src = g.rng.range(0, hosts - 1);
        let dst = (src + g.rng.range(1, hosts - 1)) % hosts;
        writeln!(g.out, "[flows.f{i}]\nsrc = \"h{src}\"\ndst = \"h{dst}\"").unwrap();
        if g.rng.chance(0.3) {
            writeln!(g.out, "start = \"{}ms\"", g.rng.range(0, duration_ms)).unwrap();
        }
        if g.rng.chance(0.15) {
            g.feature("flow:stop");
            // Later than any start above.
            writeln!(g.out, "stop = \"{}ms\"", duration_ms + g.rng.range(1, 1000)).unwrap();
        }
        let kind = g.rng.range(0, 5);
        match kind {
            0 | 1 => {
                g.out.push_str("type = \"tcp\"\n");
                if kind == 1 {
                    g.feature("flow:tcp_finite");
                    writeln!(g.out, "size = \"{}KB\"", g.rng.range(1, 300)).unwrap();
                } else {
                    g.feature("flow:tcp_bulk");
                }
                if g.rng.chance(0.1) {
                    g.feature("flow:count");
                    writeln!(g.out, "count = {}", g.rng.range(2, 4)).unwrap();
                }
                let mut keys = String::new();
                g.tcp_keys(&mut keys, true, any_xcp, "\n");
                g.out.push_str(keys.trim_start_matches('\n'));
            }
            2 => {
                g.feature("flow:short_tcp");
                g.out.push_str("type = \"short_tcp\"\n");
                writeln!(g.out, "arrival_rate = {}", g.rng.real(0.5, 20.0).max(0.5)).unwrap();
                let s = g.sizes();
                writeln!(g.out, "sizes = {s}").unwrap();
                let mut keys = String::new();
                g.tcp_keys(&mut keys, true, any_xcp, "\n");
                g.out.push_str(keys.trim_start_matches('\n'));
            }
            3 => {
                g.feature("flow:cbr");
                let rate = g.rate();
                writeln!(
                    g.out,
                    "type = \"cbr\"\nrate = \"{rate}\"\npacket_size = {}",
                    g.rng.range(29, 1500)
                )
                .unwrap();
            }
            _ => {
                let dist = *g.rng.pick(&["deterministic", "exponential"]);
                g.feature(format!("flow:onoff_{dist}"));
                let rate = g.rate();
                writeln!(
                    g.out,
                    "type = \"onoff\"\nrate = \"{rate}\"\npacket_size = {}\non = \"{}ms\"\noff = \"{}ms\"\ndistribution = \"{dist}\"",
                    g.rng.range(29, 1500),
                    g.rng.range(1, 500),
                    g.rng.range(0, 500)
                )
                .unwrap();
            }
        }
    }

    if g.rng.chance(0.3) {
        let m = *g.rng.pick(&["hops", "delay"]);
        g.feature(format!("routing:{m}"));
        writeln!(g.out, "[routing]\nmetric = \"{m}\"").unwrap();
    }
    if g.rng.chance(0.3) {
        g.feature("trace");
        writeln!(g.out, "[trace]\ninterval = \"{}ms\"", g.rng.range(10, 500)).unwrap();
    }
    // Drawn last, so the text above is the same for a seed as before they existed.
    if g.rng.chance(0.3) {
        let src = g.rng.range(0, hosts - 1);
        let dst = (src + g.rng.range(1, hosts - 1)) % hosts;
        g.sctp_flow(src, dst, duration_ms);
    }
    if g.rng.chance(0.25) {
        g.events(&pairs, duration_ms);
    }
    // Start jitter, under 1 ms: a flow's stop above is at least 1 ms after its start.
    if g.rng.chance(0.2) {
        g.feature("jitter");
        writeln!(g.out, "[jitter]\nstart = \"{}us\"", g.rng.range(0, 999)).unwrap();
    }
    g.features
        .insert(format!("size:{}_nodes", bucket(routers + hosts)));
    Case {
        toml: g.out,
        features: g.features,
        has_itcp,
    }
}

fn bucket(n: u64) -> &'static str {
    match n {
        0..=5 => "03-05",
        6..=10 => "06-10",
        11..=20 => "11-20",
        _ => "21-28",
    }
}
