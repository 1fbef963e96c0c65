// SPDX-License-Identifier: MIT
//! Node hooks: a packet processor that sees every packet at one node, in both directions.
//!
//! Base-station agents (SPACK, Snoop, I-TCP), DiffServ edge policers and markers, and IP-layer
//! striping are all hooks. A hook sits between the node's links and its forwarding:
//!
//! ```text
//!   link ──> arrives ──┐                      ┌──> routing ──> link
//!                      ├──> hook.on_packet ───┤
//!   local endpoint ────┘    (forward, drop,   └──> local endpoint
//!                            hold, rewrite,
//!                            inject)
//! ```
//!
//! - **When it fires:** for every packet that arrives at the node over a link (`arrived_on` is
//!   the interface) and for every packet a local endpoint sends (`arrived_on` is `None`), before
//!   routing or local delivery. Pure ACKs (zero payload) are packets like any other.
//! - **What it can do:** [`HookOutput::forward`] the packet (rewritten or not) to continue
//!   normally; [`HookOutput::drop_packet`] it (counted as a `hook` drop on the link it arrived on);
//!   keep it and release it later from [`NodeHook::on_timeout`] (a delay: report held packets in
//!   [`NodeHook::held`] so packet conservation holds); [`HookOutput::inject`] new packets (an
//!   ACK generated at a base station, a local retransmission); [`HookOutput::consume`] a packet
//!   the hook itself receives (a split-connection relay), counted as delivered.
//! - **Timers:** one deadline per hook ([`NodeHook::poll_timeout`]), like endpoints; stale
//!   wake-ups must be no-ops.
//! - Packets a hook forwards or injects are routed from this node and do not pass the hook again.
//! - **Filters:** a hook that only passes, re-marks or drops each packet (a DiffServ policer or
//!   marker) may also implement [`NodeHook::filter`]: the engine then shows it the packet where
//!   it lies in the packet arena instead of moving it out and back in (two 120-byte copies and
//!   a trip through [`HookOutput`] per packet, ~1 % of paper 003's dumbbell). Same decisions,
//!   same results: `on_packet` stays the definition, `filter` a faster way to the same end.

use std::collections::VecDeque;

use crate::packet::Packet;
use crate::rng::RngStream;
use crate::time::{SimDuration, SimTime};

/// Index of an interface (equal to its address).
pub type IfaceId = u32;

/// What a hook decided, collected by the engine after each call.
#[derive(Debug, Default)]
pub struct HookOutput {
    pub(crate) packets: Vec<Packet>,
    pub(crate) injected: u64,
    pub(crate) dropped: u64,
    pub(crate) consumed: u64,
}

impl HookOutput {
    /// Let a packet that reached the hook continue (routing or local delivery).
    pub fn forward(&mut self, pkt: Packet) {
        self.packets.push(pkt);
    }
    /// Send a packet the hook created.
    pub fn inject(&mut self, pkt: Packet) {
        self.injected += 1;
        self.packets.push(pkt);
    }
    /// Destroy a packet that reached the hook.
    pub fn drop_packet(&mut self, pkt: Packet) {
        let _ = pkt;
        self.dropped += 1;
    }
    /// Take a packet out of the network because the hook itself is its receiver (I-TCP's base
    /// station terminates the fixed host's connection): not a drop; packet conservation counts
    /// it as delivered.
    pub fn consume(&mut self, pkt: Packet) {
        let _ = pkt;
        self.consumed += 1;
    }
}

/// What a filtering hook did with a packet shown to it in place ([`NodeHook::filter`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Filtered {
    /// The packet (possibly re-marked) continues to routing or local delivery.
    Pass,
    /// The packet is destroyed, counted as a `hook` drop on the link it arrived on.
    Drop,
    /// Not a filter: the engine hands the packet to [`NodeHook::on_packet`] by value.
    NotAFilter,
}

pub trait NodeHook {
    /// A packet reached the node (over interface `arrived_on`, or from a local endpoint).
    fn on_packet(
        &mut self,
        now: SimTime,
        pkt: Packet,
        arrived_on: Option<IfaceId>,
        out: &mut HookOutput,
    );
    /// For a hook that never holds, injects or consumes a packet and has no timer: decide on
    /// the packet in place, exactly as `on_packet` would (forward is [`Filtered::Pass`], drop is
    /// [`Filtered::Drop`]). The default says it is not a filter.
    fn filter(
        &mut self,
        _now: SimTime,
        _pkt: &mut Packet,
        _arrived_on: Option<IfaceId>,
    ) -> Filtered {
        Filtered::NotAFilter
    }
    /// The deadline of [`NodeHook::poll_timeout`] may have passed.
    fn on_timeout(&mut self, _now: SimTime, _out: &mut HookOutput) {}
    fn poll_timeout(&self) -> Option<SimTime> {
        None
    }
    /// Packets the hook holds (for packet conservation and the memory peak).
    fn held(&self) -> usize {
        0
    }
    /// What the hook counted, for the `agents` results table (None: it counts nothing). Read
    /// once, when the run's tables are assembled.
    fn counters(&self) -> Option<HookCounters> {
        None
    }
}

/// A hook's counters as the `agents` table shows them: its type and (name, value) pairs in a
/// fixed order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HookCounters {
    /// The hook's `type` in the scenario (`spack`, `snoop`, `itcp`).
    pub agent: &'static str,
    pub values: Vec<(&'static str, u64)>,
}

/// A fault injector and the smallest complete example of a hook: drops each packet with
/// probability `drop` and delays the others by `delay` (FIFO, so order is kept).
pub struct Impair {
    drop: f64,
    delay: SimDuration,
    rng: RngStream,
    held: VecDeque<(SimTime, Packet)>,
}

impl Impair {
    pub fn new(drop: f64, delay: SimDuration, rng: RngStream) -> Self {
        Impair {
            drop,
            delay,
            rng,
            held: VecDeque::new(),
        }
    }
}

impl NodeHook for Impair {
    fn on_packet(&mut self, now: SimTime, pkt: Packet, _: Option<IfaceId>, out: &mut HookOutput) {
        if self.rng.bernoulli(self.drop) {
            out.drop_packet(pkt);
        } else if self.delay == SimDuration::ZERO {
            out.forward(pkt);
        } else {
            self.held.push_back((now + self.delay, pkt));
        }
    }

    fn on_timeout(&mut self, now: SimTime, out: &mut HookOutput) {
        while self.held.front().is_some_and(|(t, _)| *t <= now) {
            if let Some((_, p)) = self.held.pop_front() {
                out.forward(p);
            }
        }
    }

    fn poll_timeout(&self) -> Option<SimTime> {
        self.held.front().map(|(t, _)| *t)
    }

    fn held(&self) -> usize {
        self.held.len()
    }
}
