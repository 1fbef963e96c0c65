// SPDX-License-Identifier: MIT
//! Whole-network tests, built as one binary (nexosim's layout). Scenarios are TOML, run through
//! the same public API the CLI uses.

mod agents;
mod aqm;
mod bbr;
mod cc;
mod common;
mod conservation;
mod dctcp;
mod determinism;
mod diffserv;
mod dualpi2;
mod faults;
mod hooks;
mod jitter;
mod link_events;
mod pcap;
mod rack;
mod sctp;
mod tcp_behaviour;
mod trace;
mod xcp;
