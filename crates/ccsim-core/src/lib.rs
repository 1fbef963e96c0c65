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
//! Modules, one per layer: [`time`], [`rng`], [`packet`], [`queue`], [`loss`], [`link`],
//! [`network`], [`hook`], [`agents`], [`endpoint`], [`tcp`], [`cc`], [`traffic`], [`sim`],
//! [`scenario`], [`results`], and [`xcp_router`] (the router half of XCP, a queue discipline;
//! the sender half is [`cc::xcp`]).

pub mod agents;
pub mod cc;
pub mod endpoint;
pub mod hook;
pub mod link;
pub mod loss;
pub mod network;
pub mod packet;
pub mod queue;
pub mod results;
pub mod rng;
pub mod scenario;
pub mod sim;
pub mod tcp;
pub mod time;
pub mod traffic;
pub mod xcp_router;

use std::fmt;

pub use results::{Column, RunOutput, RunSummary, StopReason, Table};
pub use scenario::{load_scenario, Loaded, ScenarioError};

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
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Scenario(e) => e.fmt(f),
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
