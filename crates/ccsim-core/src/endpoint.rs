// SPDX-License-Identifier: MIT
//! Sans-IO transport endpoints.
//!
//! An endpoint never touches the event loop. The engine calls it and collects what it wants to
//! send:
//!
//! ```text
//!   engine ── handle_packet(now, pkt, out) ──> endpoint ──> out: Vec<Packet> ──> node (hook, routing)
//!   engine ── handle_timeout(now, out) ──────> endpoint
//!   engine <─ poll_timeout() ── the one deadline the endpoint wants (None: none)
//! ```
//!
//! Each endpoint exposes a single deadline; the engine keeps at most one live heap entry for it
//! and discards stale ones lazily when they pop. `poll_timeout` must be re-read after every
//! `handle_*` call, since any of them can move the deadline. `handle_timeout` may be called when
//! no deadline has passed yet (a stale wake-up); endpoints must treat that as a no-op.

use crate::packet::Packet;
use crate::time::SimTime;

pub trait Endpoint {
    /// A packet addressed to this endpoint arrived.
    fn handle_packet(&mut self, now: SimTime, pkt: Packet, out: &mut Vec<Packet>);
    /// The deadline returned by `poll_timeout` may have passed.
    fn handle_timeout(&mut self, now: SimTime, out: &mut Vec<Packet>);
    /// The earliest time this endpoint needs `handle_timeout`.
    fn poll_timeout(&self) -> Option<SimTime>;
}

/// Counters every endpoint keeps, in the same units, so the flows table is uniform.
// `repr(C)` keeps the declared order, 64-byte lines (the TCP sender places the counters at a
// line's start, `tcp/sender.rs` "Layout"): what a TCP sender writes per ACK and per segment
// first (line 0), what a receiver writes per segment next (line 1), what only a loss, a
// timeout or the first and last packet touch last. Rust's own order put the 128-bit sum
// first and spread a sender's per-ACK counters over two lines and its per-send ones over two.
#[repr(C)]
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FlowCounters {
    /// Sum and count of RTT samples (ns), for the mean; and the minimum.
    pub rtt_sum_ns: u128,
    /// Payload bytes handed to the network, retransmissions included.
    pub bytes_sent: u64,
    /// Bytes on the wire (headers included) handed to the network.
    pub wire_bytes_sent: u64,
    /// Data packets handed to the network, retransmissions included.
    pub packets_sent: u64,
    pub rtt_samples: u64,
    pub rtt_min_ns: Option<u64>,
    /// Data packets that reached the receiving endpoint (duplicates included).
    pub packets_received: u64,
    /// Unique payload bytes delivered in order to the receiving application.
    pub bytes_delivered: u64,
    /// Last in-order delivery at the receiver.
    pub last_delivery: Option<SimTime>,
    /// Of those, segments that brought no byte the receiver did not already have (delivered or
    /// held out of order): what needless retransmissions cost the receiving side.
    pub duplicate_segments: u64,
    /// Data segments that arrived marked Congestion Experienced (receiver, RFC 3168).
    pub ecn_ce_received: u64,
    /// Retransmitted data segments.
    pub retransmits: u64,
    pub timeouts: u64,
    pub fast_retransmits: u64,
    /// Out-of-order segments the receiver dropped because its buffer was full.
    pub receiver_drops: u64,
    /// Window reductions in answer to ECN-Echo (sender, RFC 3168 §6.1.2).
    pub ecn_reductions: u64,
    /// First data packet sent.
    pub first_send: Option<SimTime>,
    /// When a finite transfer's last byte was acknowledged (TCP) or delivered (UDP).
    pub completed_at: Option<SimTime>,
}

const _: () = {
    use std::mem::{offset_of, size_of};
    // The sender's per-ACK and per-send counters in line 0, the receiver's in line 1.
    assert!(offset_of!(FlowCounters, rtt_min_ns) + size_of::<Option<u64>>() == 64);
    assert!(offset_of!(FlowCounters, packets_received) == 64);
    assert!(offset_of!(FlowCounters, ecn_ce_received) < 128);
    assert!(size_of::<FlowCounters>() == 192);
};
