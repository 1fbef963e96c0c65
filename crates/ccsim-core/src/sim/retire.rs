// SPDX-License-Identifier: MIT
//! Retiring finished short flows: once nothing can change a generated transfer's row of the
//! flows table, its two endpoints (a boxed `TcpSender` and `TcpReceiver`, ~6.6 KB with their
//! scoreboard, reassembly map and controller) give way to the counters the row is made of.
//!
//! ```text
//!   spawn ──> TcpSender + TcpReceiver ── ... ── completed, no deadline, no packet alive
//!                                                   │  (checked at a later spawn)
//!                                                   v
//!                     FlowLife::rows[flow] = both counters + cwnd   (~370 B)
//!                     eps[sender], eps[receiver] = Retired           (no state)
//! ```
//!
//! A flow's row is final when no event can reach its endpoints again:
//! - the sender has every byte acknowledged (`completed_at`);
//! - neither endpoint has a deadline (the sender stops its retransmission timer when nothing
//!   is outstanding, RFC 6298 (5.2); the receiver has no delayed ACK pending);
//! - no packet of the flow is alive: `alive[flow]` counts its packets from the moment an
//!   endpoint sends one until it is delivered or dropped. A late retransmission still in a
//!   queue would make the receiver answer with an ACK, which would change the links' counts.
//!
//! The engine reports births, deliveries and drops by flow ([`FlowLife::created`],
//! [`FlowLife::ended`]). Where it cannot say whose packet ended (a hook consumes, injects or drops
//! packets; the loss model takes a packet that waited in a queue) it calls
//! [`FlowLife::lose_track`] and retiring stops for the rest of the run: the results never
//! depend on it, only the memory does. A scenario with node hooks never retires flows.
//!
//! A retired endpoint keeps its port (a port is its endpoint's index, and stale timer entries
//! of the heap name it): it answers no packet and has no deadline; the flows table reads the
//! flow's counters from [`FlowLife`] instead. Each `Spawn` event looks at two unretired transfers in turn, so a finished transfer
//! is retired within about half as many spawns as there are transfers in progress, and the
//! endpoints held stay proportional to the transfers alive at once, not to those ever started.

use super::{AnyEndpoint, Simulator};
use crate::endpoint::{Endpoint, FlowCounters};
use crate::packet::{FlowId, Packet};
use crate::time::SimTime;

/// Transfers checked per `Spawn` event: more than the one each spawn adds, so the list of
/// transfers not yet retired shrinks back to those still in progress.
const CHECKS_PER_SPAWN: usize = 2;

/// Per-flow packet counts and the transfers that may be retired.
#[derive(Debug)]
pub(super) struct FlowLife {
    /// Packets of each flow sent and not yet delivered or dropped, indexed by flow.
    alive: Vec<u32>,
    /// Whether `alive` is kept and exact: false from the start when nothing will be retired,
    /// and once a packet ended without the engine knowing whose.
    exact: bool,
    /// Generated transfers not retired yet, and where the next check starts.
    pending: Vec<FlowId>,
    cursor: usize,
    retired: u64,
    /// Transfers the generators started.
    generated: u64,
    /// What the rows of retired flows are made of, indexed by flow (`None`: not retired).
    rows: Vec<Option<Box<RetiredFlow>>>,
}

impl FlowLife {
    /// `exact` is false for a scenario that has nothing to retire (no short flows) or whose
    /// node hooks would make the counts unknowable.
    pub(super) fn new(exact: bool) -> FlowLife {
        FlowLife {
            alive: Vec::new(),
            exact,
            pending: Vec::new(),
            cursor: 0,
            retired: 0,
            generated: 0,
            rows: Vec::new(),
        }
    }

    /// A flow was added (its id is the next index).
    pub(super) fn add_flow(&mut self) {
        self.alive.push(0);
        self.rows.push(None);
    }

    /// An endpoint sent a packet of `flow`. (Nothing to count in a run that retires nothing:
    /// one predictable branch on the packet path instead of two counter updates, P1's case.)
    #[inline]
    pub(super) fn created(&mut self, flow: FlowId) {
        if !self.exact {
            return;
        }
        if let Some(n) = self.alive.get_mut(flow as usize) {
            *n += 1;
        }
    }

    /// A packet of `flow` was delivered to an endpoint or dropped.
    #[inline]
    pub(super) fn ended(&mut self, flow: FlowId) {
        if !self.exact {
            return;
        }
        if let Some(n) = self.alive.get_mut(flow as usize) {
            *n = n.saturating_sub(1);
        }
    }

    /// A packet ended and the engine cannot say whose: stop retiring for the rest of the run.
    #[inline]
    pub(super) fn lose_track(&mut self) {
        self.exact = false;
    }

    /// Flows retired so far.
    pub(super) fn retired(&self) -> u64 {
        self.retired
    }

    /// Transfers the generators started so far.
    pub(super) fn generated(&self) -> u64 {
        self.generated
    }

    /// Generated transfers whose endpoints are held: in progress, or finished and not retired
    /// yet (all of them once retiring has stopped).
    pub(super) fn held(&self) -> u64 {
        self.pending.len() as u64
    }

    /// The counters of `flow` if it was retired, taken out: the flows table is built once, at
    /// the end (`report.rs`), and frees them row by row.
    pub(super) fn take_row(&mut self, flow: usize) -> Option<Box<RetiredFlow>> {
        self.rows.get_mut(flow).and_then(Option::take)
    }
}

/// What the row of a retired flow is made of: its endpoints' counters as they were retired.
#[derive(Debug)]
pub(super) struct RetiredFlow {
    pub(super) tx: FlowCounters,
    pub(super) rx: FlowCounters,
    /// The sender's final congestion window (`final_cwnd_bytes`).
    pub(super) cwnd: u64,
}

/// A retired endpoint: no state, no deadline, and nothing to answer (its flow has no packet
/// alive).
#[derive(Debug)]
pub(super) struct Retired;

/// The counters a retired endpoint reports: none (its flow's are in [`FlowLife`]).
pub(super) static NO_COUNTERS: std::sync::LazyLock<FlowCounters> =
    std::sync::LazyLock::new(FlowCounters::default);

impl Endpoint for Retired {
    /// Never called: a flow is retired only when none of its packets is alive.
    fn handle_packet(&mut self, _now: SimTime, _pkt: Packet, _out: &mut Vec<Packet>) {}
    fn handle_timeout(&mut self, _now: SimTime, _out: &mut Vec<Packet>) {}
    fn poll_timeout(&self) -> Option<SimTime> {
        None
    }
}

impl Simulator {
    /// Note a transfer a generator just started, and retire up to [`CHECKS_PER_SPAWN`] earlier
    /// ones whose rows are final.
    pub(super) fn retire_finished(&mut self, started: FlowId) {
        self.life.pending.push(started);
        self.life.generated += 1;
        if !self.life.exact {
            return;
        }
        for _ in 0..CHECKS_PER_SPAWN {
            if self.life.pending.is_empty() {
                return;
            }
            if self.life.cursor >= self.life.pending.len() {
                self.life.cursor = 0;
            }
            let flow = self.life.pending[self.life.cursor];
            if self.retire_if_final(flow) {
                self.life.pending.swap_remove(self.life.cursor);
                self.life.retired += 1;
            } else {
                self.life.cursor += 1;
            }
        }
    }

    /// Replace both endpoints of `flow` by their counters if nothing can change them again.
    fn retire_if_final(&mut self, flow: FlowId) -> bool {
        if self.life.alive[flow as usize] != 0 {
            return false;
        }
        let f = &self.flows[flow as usize];
        let (tx, rx) = (f.sender as usize, f.receiver as usize);
        let row = match (&self.eps[tx].ep, &self.eps[rx].ep) {
            (AnyEndpoint::TcpSender(s), AnyEndpoint::TcpReceiver(r))
                if s.is_complete() && s.poll_timeout().is_none() && r.poll_timeout().is_none() =>
            {
                RetiredFlow {
                    tx: s.counters().clone(),
                    rx: r.counters().clone(),
                    cwnd: s.cwnd(),
                }
            }
            _ => return false,
        };
        self.life.rows[flow as usize] = Some(Box::new(row));
        self.eps[tx].ep = AnyEndpoint::Retired(Retired);
        self.eps[rx].ep = AnyEndpoint::Retired(Retired);
        true
    }

    /// Endpoints that still hold their full state (not retired): two per flow in progress,
    /// and two per finished flow not retired yet.
    pub fn endpoints_held(&self) -> usize {
        self.eps
            .iter()
            .filter(|s| !matches!(s.ep, AnyEndpoint::Retired(_)))
            .count()
    }

    /// Transfers retired so far ([`Simulator::endpoints_held`] has two fewer endpoints each).
    pub fn flows_retired(&self) -> u64 {
        self.life.retired()
    }

    /// Keep every flow's endpoints to the end of the run, as before retiring existed: for
    /// tests that compare the two.
    #[cfg(test)]
    pub(super) fn keep_finished_flows(&mut self) {
        self.life.lose_track();
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::build;
    use crate::results::{Column, RunOutput};

    /// A 10 Mbit/s, 10 ms path with a `limit`-packet queue, carrying 40 Poisson arrivals per
    /// second of 20 KB mean Pareto transfers (64 % load, so the queue overflows now and then) for
    /// `secs` seconds, with `tcp` keys for the transfers.
    fn web(secs: u32, limit: u32, tcp: &str) -> String {
        format!(
            r#"
seed = 7
duration = "{secs}s"
[nodes]
h1 = "host"
r = "router"
h2 = "host"
[links.access]
a = "h1"
b = "r"
rate = "100Mbps"
delay = "1ms"
[links.exit]
a = "r"
b = "h2"
rate = "10Mbps"
delay = "10ms"
queue = {{ type = "droptail", limit = {limit} }}
[flows.web]
type = "short_tcp"
src = "h1"
dst = "h2"
arrival_rate = 40.0
sizes = {{ dist = "pareto", mean = "20KB", shape = 1.6 }}
{tcp}
"#
        )
    }

    fn run(text: &str, keep: bool) -> (RunOutput, usize, u64) {
        let mut sim = build(text, &[]).unwrap();
        if keep {
            sim.keep_finished_flows();
        }
        let reason = sim.run_loop();
        let held = sim.endpoints_held();
        let retired = sim.flows_retired();
        (sim.finish(reason), held, retired)
    }

    #[test]
    fn an_endpoint_slot_is_40_bytes_so_a_retired_transfer_keeps_little_besides_its_row() {
        // Every endpoint ever started keeps its slot (its port is its index): with the UDP
        // endpoints inline a slot took ~360 B, as much again as a retired flow's counters.
        assert_eq!(std::mem::size_of::<super::super::EndpointSlot>(), 40);
    }

    #[test]
    fn finished_transfers_give_up_their_endpoints_so_the_endpoints_held_stay_bounded() {
        let (out, held, retired) = run(&web(100, 20, ""), false);
        let flows = out.flows.columns[0].1.len();
        assert!(flows > 3_500, "{flows} transfers");
        let drops: u64 = match &out
            .links
            .columns
            .iter()
            .find(|c| c.0 == "drops_queue")
            .unwrap()
            .1
        {
            Column::U64(v) => v.iter().sum(),
            _ => unreachable!(),
        };
        assert!(
            drops > 0,
            "the queue never overflowed: no late retransmission was exercised"
        );
        // Everything finished before the last few seconds is retired: what is held is the
        // transfers in progress at the end (a handful at 64 % load) and those not yet looked at.
        assert!(held < 200, "{held} endpoints held after {flows} transfers");
        assert!(
            retired as usize * 2 + held == 2 * flows,
            "{retired} retired, {held} held"
        );
    }

    #[test]
    fn the_rows_of_retired_transfers_are_those_of_a_run_that_keeps_every_endpoint() {
        // A retransmission timer capped below the round-trip time: spurious timeouts leave
        // retransmissions in the queue after their transfer completed, which the receiver must
        // still answer. (Retiring a transfer with packets alive fails this.)
        let text = web(
            10,
            100,
            r#"rto_min = "1ms"
rto_initial = "10ms"
rto_max = "10ms""#,
        );
        let (freed, _, retired) = run(&text, false);
        let (kept, held, none) = run(&text, true);
        assert!(retired > 100, "{retired} retired");
        assert_eq!(none, 0);
        assert_eq!(held, 2 * kept.flows.columns[0].1.len());
        assert_eq!(freed.flows, kept.flows);
        assert_eq!(freed.links, kept.links);
        assert_eq!(freed.summary.events, kept.summary.events);
    }
}
