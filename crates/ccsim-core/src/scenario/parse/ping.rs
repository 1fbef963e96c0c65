// SPDX-License-Identifier: MIT
//! The keys of a `ping` flow (`docs/scenario.md`, "Ping probes"): `interval`, `packet_size`,
//! `dscp`; `flows.rs` reads the keys every flow has and dispatches here by `type`.

use super::reader::{opt, Reader, Res};
use crate::scenario::spec::FlowKind;
use crate::time::SimDuration;

pub(super) const PING_KEYS: [&str; 3] = ["interval", "packet_size", "dscp"];

/// `ping`'s defaults: one request per second of 84 B (a 56-byte payload, as the `ping`
/// utility; with ccsim's 28-byte UDP/IP header), DSCP 0.
pub(super) fn read_ping(r: &mut Reader) -> Res<FlowKind> {
    Ok(FlowKind::Ping {
        interval: opt(r, "interval", |f| f.positive_duration())?
            .unwrap_or(SimDuration::from_secs(1)),
        packet_size: opt(r, "packet_size", |f| f.size_u32(29))?.unwrap_or(84),
        dscp: opt(r, "dscp", |f| f.int_in(0, 63))?.unwrap_or(0) as u8,
    })
}
