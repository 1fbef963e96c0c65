// SPDX-License-Identifier: MIT
//! Link and interface state changes (`[[events]]`): at its time each event takes one of the
//! states a channel depends on down or brings it back up.
//!
//! A channel (one direction of a link) carries packets only while three things are up: the
//! link, the interface it leaves by and the interface it arrives on. Each event switches one of
//! them; the channel's state is their conjunction, kept as a mask of what is down:
//!
//! ```text
//!   link p0 down            LINK on both channels of p0
//!   h1's interface on p0    SENDER on the channel h1 sends on, RECEIVER on the one it
//!                           receives on (on a point-to-point link both channels: the whole
//!                           link is cut)
//!
//!   h1 ──[h1's iface]══ p0 ══[r1's iface]── r1
//!         h1 down, r1 down, r1 up:   h1 -> r1 still has SENDER, r1 -> h1 RECEIVER: both down
//! ```
//!
//! An interface brought back up therefore never revives a link whose other end (or the link
//! itself) is still down. A channel that goes down loses what waits in its queue at once and
//! what is on the wire as it would have arrived (`Channel::go_down`); while down it drops
//! whatever is offered. All of it is counted as `drops_link_down` on that channel. Routes are
//! static and stay as they are: noticing the failure is the transports' job.

use super::engine::Ev;
use super::Simulator;
use crate::network::Network;
use crate::scenario::{EventTarget, Spec};
use crate::time::SimTime;

/// The link itself is down (a `[[events]]` entry without `node`).
const LINK: u8 = 1;
/// The interface the channel leaves by is down.
const SENDER: u8 = 2;
/// The interface the channel arrives on is down.
const RECEIVER: u8 = 4;

/// One scheduled change: the channels it switches, each with the state it switches for that
/// channel ([`LINK`], [`SENDER`] or [`RECEIVER`]), and whether that state comes up.
pub(super) struct LinkEvent {
    chans: Vec<(u32, u8)>,
    up: bool,
}

/// The run's link events and, per channel, which of its three states are down.
#[derive(Default)]
pub(super) struct LinkStates {
    /// Indexed by their `LinkState` event.
    events: Vec<LinkEvent>,
    /// Per channel: a mask of [`LINK`], [`SENDER`], [`RECEIVER`]; the channel is up at 0.
    /// Empty when the run has no events.
    down: Vec<u8>,
}

impl LinkStates {
    /// The channels some event switches.
    pub(super) fn chans(&self) -> impl Iterator<Item = u32> + '_ {
        self.events
            .iter()
            .flat_map(|e| e.chans.iter().map(|&(c, _)| c))
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
                    .map(|c| (c, LINK))
                    .collect(),
                EventTarget::Interface { node, link } => {
                    let n = spec.nodes.get_index_of(node).unwrap_or(0) as u32;
                    net.iface_on_link(n, link)
                        .map(|i| {
                            let iface = &net.ifaces[i as usize];
                            vec![(iface.out_chan, SENDER), (iface.in_chan, RECEIVER)]
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
        let states = &mut self.link_events;
        for (at, e) in events {
            if at <= self.end {
                self.heap
                    .schedule(at, Ev::LinkState(states.events.len() as u32));
                states.events.push(e);
            }
        }
        if !states.events.is_empty() {
            states.down = vec![0; self.net.chans.len()];
        }
    }

    /// Event `i` happens now: each channel it names changes state only if the conjunction of
    /// its link and its two interfaces does.
    pub(super) fn on_link_state(&mut self, i: u32) {
        let up = self.link_events.events[i as usize].up;
        // Taken out and put back so the loop may borrow the simulator (events are few).
        let chans = std::mem::take(&mut self.link_events.events[i as usize].chans);
        for &(c, part) in &chans {
            let was = self.link_events.down[c as usize];
            let now_down = if up { was & !part } else { was | part };
            self.link_events.down[c as usize] = now_down;
            if (was == 0) != (now_down == 0) {
                self.set_chan_up(c, now_down == 0);
            }
        }
        self.link_events.events[i as usize].chans = chans;
    }

    /// Channel `c` comes up or goes down.
    fn set_chan_up(&mut self, c: u32, up: bool) {
        if self.atm.as_ref().is_some_and(|a| a.carries(c)) {
            // ATM channels: the cells at their ports (sim/atm.rs).
            self.atm_link_state(c, up);
            return;
        }
        let ch = &mut self.net.chans[c as usize];
        if up {
            ch.down = false;
        } else {
            let lost = ch.go_down(self.now, &mut self.pkts);
            if lost > 0 {
                self.cons.dropped += lost;
                // The queue's packets go without saying whose they were (retire.rs).
                self.life.lose_track();
            }
        }
    }
}
