// SPDX-License-Identifier: MIT
//! The engine's side of ATM: packets routed onto an `[atm]` channel go to the fabric, one `Atm`
//! event stands for the fabric's earliest cell event (lazily cancelled, like an endpoint's
//! timer), and what the fabric reassembles arrives at its node as if off a channel.

use super::engine::Ev;
use super::Simulator;
use crate::packet::Packet;
use crate::time::SimTime;
use crate::DropReason;

impl Simulator {
    /// A packet leaves by ATM channel `chan`: it becomes an AAL5 frame in its VC's source
    /// buffer, or is dropped (counted on the channel) when no VC or no room takes it.
    /// A packet over the channel's MTU is dropped (reason `mtu`), as is one offered while the
    /// link is down (`link_down`): the checks a channel makes (`link.rs`), here in front of the
    /// AAL5 layer. An accepted packet is what a capture point on the interface writes
    /// (`[trace] pcap`): the IP packet as it enters the VC, not its cells.
    pub(super) fn send_over_atm(&mut self, chan: u32, pkt: Packet) {
        let Some(atm) = self.atm.as_mut() else {
            return;
        };
        let ch = &mut self.net.chans[chan as usize];
        ch.stats.offered += 1;
        let refused = if ch.down {
            Some(DropReason::LinkDown)
        } else if pkt.size > ch.mtu {
            Some(DropReason::Mtu)
        } else {
            None
        };
        if let Some(reason) = refused {
            self.cons.dropped += 1;
            ch.stats.count_drop(reason);
            return;
        }
        let copy = self.capture.on.then(|| pkt.clone());
        if atm.send(self.now, chan, pkt) {
            ch.stats.packets += 1;
            if let Some(p) = copy {
                self.capture_departing_packet(chan, &p);
            }
        } else {
            self.cons.dropped += 1;
            ch.stats.count_drop(DropReason::Queue);
        }
        self.reschedule_atm();
    }

    /// `[[events]]` on an ATM channel: its port goes down (its cells lost) or comes back up.
    pub(super) fn atm_link_state(&mut self, chan: u32, up: bool) {
        let Some(atm) = self.atm.as_mut().filter(|a| a.carries(chan)) else {
            return;
        };
        self.net.chans[chan as usize].down = !up;
        atm.set_link_state(self.now, chan, up);
        self.cons.dropped += atm.take_lost();
        self.reschedule_atm();
    }

    /// The fabric's events due now; then the packets it reassembled, each at its node.
    pub(super) fn on_atm(&mut self, at: SimTime) {
        if self.atm_at != Some(at) {
            return; // superseded by an earlier entry
        }
        self.atm_at = None;
        let mut out = std::mem::take(&mut self.atm_out);
        // Cells move alone until the engine's next event (or the end of the run): one engine
        // event per run of cell events, not one per cell.
        let limit = self.heap.peek_time().map_or(self.end, |t| t.min(self.end));
        if let Some(atm) = self.atm.as_mut() {
            let last = atm.advance(self.now, limit, &mut out);
            self.now = self.now.max(last);
            self.cons.dropped += atm.take_lost();
        }
        for (node, iface, pkt) in out.drain(..) {
            let c = self.net.ifaces[iface as usize].in_chan;
            self.net.chans[c as usize].stats.arrived += 1;
            let id = self.pkts.insert(pkt);
            if self.capture.on {
                self.capture_arrival(c, id);
            }
            self.at_node(node, id, Some(iface));
        }
        self.atm_out = out;
        self.reschedule_atm();
    }

    /// Keep one `Atm` entry at the fabric's earliest event.
    fn reschedule_atm(&mut self) {
        let Some(t) = self.atm.as_ref().and_then(|a| a.next_time()) else {
            return;
        };
        let t = t.max(self.now);
        if self.atm_at.is_none_or(|cur| t < cur) {
            self.atm_at = Some(t);
            self.heap.schedule(t, Ev::Atm);
        }
    }

    /// After the build: the CBR sources' first cells.
    pub(super) fn schedule_atm(&mut self) {
        self.reschedule_atm();
    }

    /// IP packets inside the cell network.
    pub(super) fn atm_packets_inside(&self) -> u64 {
        self.atm.as_ref().map_or(0, |a| a.packets_inside())
    }
}
