// SPDX-License-Identifier: MIT
//! Link and interface state changes (`[[events]]`): at its time each event takes the channels
//! it names down or brings them back up.
//!
//! ```text
//!   link p0 down         both channels of p0
//!   h1's interface on p0 the channel h1 sends on and the one it receives on (on a
//!                        point-to-point link the same two: the whole link is cut)
//! ```
//!
//! A channel that goes down loses what waits in its queue at once and what is on the wire as it
//! would have arrived (`Channel::go_down`); while down it drops whatever is offered. All of it
//! is counted as `drops_link_down` on that channel. Routes are static and stay as they are:
//! noticing the failure is the transports' job.

use super::engine::Ev;
use super::Simulator;
use crate::network::Network;
use crate::scenario::{EventTarget, Spec};
use crate::time::SimTime;

/// One scheduled change: the channels it switches and their new state.
pub(super) struct LinkEvent {
    chans: Vec<u32>,
    up: bool,
}

impl LinkEvent {
    /// The channels this event switches.
    pub(super) fn chans(&self) -> impl Iterator<Item = u32> + '_ {
        self.chans.iter().copied()
    }
}

/// The events of `spec`, resolved to channels (the parser checked every name).
pub(super) fn link_events(spec: &Spec, net: &Network) -> Vec<(SimTime, LinkEvent)> {
    spec.events
        .iter()
        .map(|e| {
            let chans = match &e.target {
                EventTarget::Link { link } => (0..net.chans.len() as u32)
                    .filter(|&c| net.chans[c as usize].link == *link)
                    .collect(),
                EventTarget::Interface { node, link } => {
                    let n = spec.nodes.get_index_of(node).unwrap_or(0) as u32;
                    net.iface_on_link(n, link)
                        .map(|i| {
                            let iface = &net.ifaces[i as usize];
                            vec![iface.out_chan, iface.in_chan]
                        })
                        .unwrap_or_default()
                }
            };
            (e.at, LinkEvent { chans, up: e.up })
        })
        .collect()
}

impl Simulator {
    /// Schedule the events of the scenario that fall within the run.
    pub(super) fn schedule_link_events(&mut self, events: Vec<(SimTime, LinkEvent)>) {
        for (at, e) in events {
            if at <= self.end {
                self.heap
                    .schedule(at, Ev::LinkState(self.link_events.len() as u32));
                self.link_events.push(e);
            }
        }
    }

    /// Event `i` happens now.
    pub(super) fn on_link_state(&mut self, i: u32) {
        if self.atm.is_some() {
            // ATM channels: the cells at their ports (sim/atm.rs).
            let e = &self.link_events[i as usize];
            let (chans, up) = (e.chans.clone(), e.up);
            for c in chans {
                self.atm_link_state(c, up);
            }
        }
        let e = &self.link_events[i as usize];
        for &c in &e.chans {
            if self.atm.as_ref().is_some_and(|a| a.carries(c)) {
                continue;
            }
            let ch = &mut self.net.chans[c as usize];
            if e.up {
                ch.down = false;
            } else if !ch.down {
                let lost = ch.go_down(self.now, &mut self.pkts);
                if lost > 0 {
                    self.cons.dropped += lost;
                    // The queue's packets go without saying whose they were (retire.rs).
                    self.life.lose_track();
                }
            }
        }
    }
}
