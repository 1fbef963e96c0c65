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
    ///
    /// Cells move alone until the engine's next event (or the end of the run): one engine
    /// event per run of cell events, not one per cell. Such a run can be billions of cells
    /// (thousands of CBR sources at line rate), so the fabric runs it in budgets of
    /// [`CHECK_EVERY`](super::engine::CHECK_EVERY) events and the limits are checked after
    /// each: `max_events` (the fabric's events count), `max_wall` and a stop request end the
    /// run there, once the packets already reassembled are handed on (the event loop stops
    /// before its next event). The budgets never change what the fabric does
    /// (`AtmFabric::advance`).
    // Never inlined into the event loop (`engine.rs`, `dispatch`): there its loop cost every
    // run without ATM instructions per event (callgrind, P1: 0.8 %).
    #[inline(never)]
    pub(super) fn on_atm(&mut self, at: SimTime) {
        if self.atm_at != Some(at) {
            return; // superseded by an earlier entry
        }
        self.atm_at = None;
        // Out of `self` while it runs, so the limits can be checked in between.
        let Some(mut atm) = self.atm.take() else {
            return;
        };
        let mut out = std::mem::take(&mut self.atm_out);
        let limit = self.heap.peek_time().map_or(self.end, |t| t.min(self.end));
        let mut from = self.now;
        loop {
            let budget = self.inner_budget(atm.events);
            let done = atm.advance(from, limit, &mut out, budget);
            from = done.last;
            self.now = self.now.max(from);
            if !done.cut_short {
                self.count_inner_events(atm.events);
                break;
            }
            if self.inner_limit_reached(atm.events) {
                break;
            }
        }
        self.cons.dropped += atm.take_lost();
        self.atm = Some(atm);
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

#[cfg(test)]
mod tests {
    use super::super::engine::CHECK_EVERY;
    use super::super::tests::{assert_conserved, build};
    use super::super::{Simulator, StopSignal};
    use crate::results::StopReason;

    /// Paper 000's network under a cell storm: 1,000 CBR sources at line rate, 354 cells per
    /// simulated microsecond, so the fabric makes millions of events between two of the
    /// engine's.
    const PAPER: &str = include_str!("../../../../experiments/p000-atm-abr/scenario.toml");
    const STORM: &[&str] = &["atm.cbr.bg.count=1000", "atm.cbr.bg.rate=\"150Mbps\""];

    fn storm(extra: &[&str]) -> Simulator {
        let set: Vec<&str> = STORM.iter().chain(extra).copied().collect();
        build(PAPER, &set).unwrap_or_else(|e| panic!("{e}"))
    }

    fn atm_events(sim: &Simulator) -> u64 {
        sim.atm.as_ref().map_or(0, |a| a.events)
    }

    #[test]
    fn a_cell_storm_stops_at_max_events_counting_the_cells_events() {
        // Bug: the fabric ran every cell event up to the engine's next event before any limit
        // was looked at, millions of them; max_events counted only the engine's.
        let mut sim = storm(&["limits.max_events=300000"]);
        let reason = sim.run_loop();
        assert_eq!(reason, StopReason::EventLimit);
        let out = sim.finish(reason);
        let s = &out.summary;
        assert!(s.atm_events > 0);
        assert_eq!(
            s.events + s.atm_events,
            300_000,
            "stopped at the limit exactly"
        );
        assert_conserved(&out);
    }

    #[test]
    fn a_stop_request_or_the_wall_limit_ends_a_cell_storm_within_one_check_of_cells() {
        // Bug: SIGINT and SIGTERM went unseen inside the fabric's loop (a 10,000-source storm
        // ran 136 s past its 20 s max_wall). Each limit is set while the run is under way (the
        // run first stops at max_events), so the test needs no clock: what runs after it is
        // set is bounded by the checks, not by time.
        type SetLimit = fn(&mut Simulator);
        let limits: [(StopReason, SetLimit); 2] = [
            (StopReason::Interrupted, |sim| {
                let stop = StopSignal::new();
                stop.request();
                sim.stop_on(stop);
            }),
            // Any wall time at all is past this.
            (StopReason::WallLimit, |sim| sim.max_wall = Some(1e-9)),
        ];
        for (expected, set_limit) in limits {
            let mut sim = storm(&["limits.max_events=300000"]);
            assert_eq!(sim.run_loop(), StopReason::EventLimit);
            let (events, cells) = (sim.events, atm_events(&sim));
            set_limit(&mut sim);
            (sim.max_events, sim.max_engine_events) = (u64::MAX, u64::MAX);
            sim.inner_stop = None;
            let reason = sim.run_loop();
            assert_eq!(reason, expected);
            let after = (sim.events - events, atm_events(&sim) - cells);
            assert!(
                after.0 <= CHECK_EVERY && after.1 <= CHECK_EVERY,
                "{expected:?}: {after:?} events (engine, fabric) after the limit"
            );
            assert_conserved(&sim.finish(reason));
        }
    }
}
