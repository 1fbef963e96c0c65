// SPDX-License-Identifier: MIT
//! # ccsim-core
//!
//! A deterministic packet-level network simulator for transport-protocol research. Pure Rust, no
//! I/O, no Python: the `ccsim-py` crate wraps it.
//!
//! ```text
//!   scenario (TOML) ──parse/validate──> Spec ──build──> Simulator ──run──> RunOutput (columns)
//!
//!   Simulator
//!   ├── event heap (time, seq): one entry per transmitter with packets waiting in its queue,
//!   │   per non-empty propagation FIFO, per endpoint deadline, per hook deadline, per
//!   │   generator; never one per packet (a packet that finds its transmitter idle costs no
//!   │   event until it arrives)
//!   ├── nodes ── interfaces (one address each) ── channels (one per link direction)
//!   │             channel = queue discipline ─> transmitter ─> loss model ─> propagation FIFO
//!   ├── node hooks: see every packet at a node, may drop, delay, rewrite, inject
//!   └── endpoints (sans-IO): TCP sender/receiver, UDP sources/sinks
//! ```
//!
//! Modules, one per layer: [`time`], [`rng`], [`packet`], [`arena`] (where packets live while
//! they are inside the network; everything else passes handles), [`calendar`] (the calendar
//! queue the endpoints' deadlines wait in), [`queue`], [`loss`], [`link`],
//! [`network`], [`hook`], [`agents`], [`diffserv`] (the DiffServ edge: classifier, meters,
//! markers; its per-hop behaviours are queues), [`endpoint`], [`tcp`], [`cc`], [`traffic`],
//! [`ping`], [`jitter`] (seed-driven start offsets), [`sim`],
//! [`scenario`], [`results`], and [`xcp_router`] (the router half of XCP, a queue discipline;
//! the sender half is [`cc::xcp`]).

pub mod agents;
pub mod arena;
pub mod atm;
pub mod calendar;
pub mod cc;
pub mod diffserv;
pub mod endpoint;
pub mod hook;
pub mod jitter;
pub mod link;
pub mod loss;
pub mod network;
pub mod packet;
pub mod pcap;
pub mod ping;
pub mod queue;
pub mod results;
pub mod rng;
pub mod scenario;
pub mod sctp;
pub mod sim;
pub mod striping;
pub mod tcp;
pub mod time;
pub mod traffic;
pub mod xcp_router;

use std::fmt;

pub use results::{Column, RunOutput, RunSummary, StopReason, Table};
pub use scenario::{load_scenario, load_swept_scenario, Loaded, ScenarioError};
pub use sim::StopSignal;

/// Why a packet left the network without reaching its endpoint. Counted per link direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DropReason {
    /// The queue discipline refused or dropped it (full buffer, RED).
    Queue,
    /// The link's loss model destroyed it on the wire.
    Loss,
    /// A node hook dropped it.
    Hook,
    /// It was larger than the link's MTU.
    Mtu,
    /// No route to its destination.
    NoRoute,
    /// Its time to live ran out at a router (RFC 791 §3.2, RFC 1812 §5.3.1).
    Ttl,
    /// The link (or the interface) was down: offered while down, or on the wire when it went
    /// down (`[[events]]`).
    LinkDown,
}

/// Any error of the public API.
///
/// A run itself does not fail: it ends with a [`StopReason`], and the limits of `[limits]` end it
/// cleanly with their own reason. A broken invariant of the engine is a panic, not an `Error`.
#[derive(Clone, Debug, PartialEq)]
pub enum Error {
    /// The scenario is invalid; nothing was run. Fatal for this scenario: fix the field the
    /// error names and run again.
    Scenario(ScenarioError),
    /// The run could not write an output it was asked for (a capture file); the message names
    /// the file and the system's reason.
    Output(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Scenario(e) => e.fmt(f),
            Error::Output(m) => f.write_str(m),
        }
    }
}
impl std::error::Error for Error {}

impl From<ScenarioError> for Error {
    fn from(e: ScenarioError) -> Self {
        Error::Scenario(e)
    }
}

/// Parse, validate and run a scenario given as TOML text, with `--set` style overrides
/// (`"links.bottleneck.loss.rate=0.01"`) and an optional seed that replaces the scenario's.
pub fn run_toml(text: &str, overrides: &[String], seed: Option<u64>) -> Result<RunOutput, Error> {
    let loaded = load_scenario(text, overrides, seed)?;
    run(&loaded.spec)
}

/// Run a validated scenario.
pub fn run(spec: &scenario::Spec) -> Result<RunOutput, Error> {
    sim::Simulator::build(spec)?.run()
}

/// Run a validated scenario that stops early, with [`StopReason::Interrupted`], once `stop` is
/// requested from another thread (see [`sim::StopSignal`] for how soon).
pub fn run_with_stop(spec: &scenario::Spec, stop: &StopSignal) -> Result<RunOutput, Error> {
    let mut sim = sim::Simulator::build(spec)?;
    sim.stop_on(stop.clone());
    sim.run()
}

/// How a run is carried out, beyond its scenario: where its files go and who may stop it.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// The folder for the pcap files the scenario's `[trace] pcap` asks for (created if
    /// missing). A scenario asking for captures does not run without one.
    pub pcap_dir: Option<std::path::PathBuf>,
    /// Stop early, as [`run_with_stop`] does.
    pub stop: Option<StopSignal>,
}

/// Run a validated scenario with [`RunOptions`].
pub fn run_with_options(spec: &scenario::Spec, options: &RunOptions) -> Result<RunOutput, Error> {
    let mut sim = sim::Simulator::build(spec)?;
    if let Some(stop) = &options.stop {
        sim.stop_on(stop.clone());
    }
    if let Some(dir) = &options.pcap_dir {
        sim.capture_to(dir)?;
    }
    sim.run()
}

/// Every check [`run`] makes before its first event, without running: the scenario is built
/// (network, routes, endpoints) and dropped. Building finds what parsing cannot, such as a flow
/// whose packets exceed the MTU of a link on its route, so a scenario that passes here is one
/// that `run` accepts.
pub fn check(spec: &scenario::Spec) -> Result<(), Error> {
    sim::Simulator::build(spec).map(drop)
}

/// Whether `text` is TOML, and nothing more: the scenario's keys are not read, so a text that
/// lacks what overrides will set passes. A file's syntax is checked when it is read, to name
/// the file (`Scenario.from_toml`); the whole check ([`check_toml`]) built the network as
/// well, 1.6 s of a 10,000-host-pair scenario's 13.5 s run spent twice (issue 33).
pub fn check_syntax(text: &str) -> Result<(), ScenarioError> {
    scenario::parse_toml(text).map(drop)
}

/// [`load_scenario`] followed by [`check`]: the whole of what `ccsim validate` reports.
pub fn check_toml(text: &str, overrides: &[String], seed: Option<u64>) -> Result<Loaded, Error> {
    check_swept_toml(text, overrides, &[], seed)
}

/// [`check_toml`] for one run of a sweep, its `--param` values (`params`) applied after the
/// `--set` ones and named as `--param` in errors ([`load_swept_scenario`]).
pub fn check_swept_toml(
    text: &str,
    overrides: &[String],
    params: &[String],
    seed: Option<u64>,
) -> Result<Loaded, Error> {
    let loaded = load_swept_scenario(text, overrides, params, seed)?;
    check(&loaded.spec)?;
    Ok(loaded)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `h1 ── r ── h2`, one Reno flow with 1,460 B segments (1,500 B packets).
    const LINE: &str = r#"
duration = "1s"
[nodes]
h1 = "host"
r = "router"
h2 = "host"
[links.access]
a = "h1"
b = "r"
rate = "100Mbps"
delay = "1ms"
[links.bottleneck]
a = "r"
b = "h2"
rate = "10Mbps"
delay = "20ms"
[flows.reno]
type = "tcp"
src = "h1"
dst = "h2"
mss = 1460
"#;

    fn set(overrides: &[&str]) -> Vec<String> {
        overrides.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn check_refuses_a_segment_over_the_mtu_that_parsing_alone_accepts() {
        // Defect 2 of issue 10: `ccsim validate` said ok where `ccsim run` refused.
        let small_mtu = set(&["links.bottleneck.mtu=576"]);
        assert!(
            load_scenario(LINE, &small_mtu, None).is_ok(),
            "the parser cannot see routes, so it cannot see this"
        );
        let Err(Error::Scenario(e)) = check_toml(LINE, &small_mtu, None) else {
            panic!("1,500 B packets over a 576 B MTU must be refused");
        };
        assert_eq!(e.path, "flows.reno.mss");
        let Err(refused) = run_toml(LINE, &small_mtu, None) else {
            panic!("run refuses it too");
        };
        assert_eq!(
            refused,
            Error::Scenario(e),
            "validate and run refuse with the same error"
        );
    }

    #[test]
    fn check_accepts_what_run_runs_and_returns_the_resolved_scenario() {
        let loaded = check_toml(LINE, &set(&["duration=2s"]), Some(9)).unwrap();
        assert_eq!(
            loaded,
            load_scenario(LINE, &set(&["duration=2s"]), Some(9)).unwrap()
        );
        assert!(run(&loaded.spec).is_ok());
    }
}
