// SPDX-License-Identifier: MIT
//! The per-packet trace (`[trace] packets`): one row per thing that happened to a chosen
//! packet, for sequence/time plots, loss-recovery traces and, later, pcap files.
//!
//! ```text
//!   endpoint ──sent──> node ──> link: enqueued ─> departed ─(loss?)─> arrived ──> node ──> delivered
//!                        │            │               │                            (to endpoint)
//!                        └─ dropped   └─ dropped      └─ dropped (loss)
//!                           (noroute, ttl)  (queue, mtu)
//! ```
//!
//! - **Where:** `sent`, `delivered` and a node's own drops (`noroute`, `ttl`) happen at a node;
//!   `enqueued`, `departed` (its transmission starts: from the queue, or at once on an idle
//!   link), `arrived` (it reached the far node) and a link's drops (`queue`, `mtu`, `loss`) on a
//!   link direction. A packet a hook drops is counted on its link (`drops_hook`), not traced.
//! - **Which:** the packets of the flows named (every flow if none are named: generated short
//!   transfers are traced only then), at the nodes and link directions named (all if none).
//! - **Cost:** off, one branch per hook point (`PacketTrace::on`); on, a filter test and a
//!   fixed-size row pushed on a `Vec` (names are looked up only when the table is built).
//! - **Bound:** `max_rows` rows at most (default [`DEFAULT_MAX_ROWS`]); later events are
//!   counted in `RunSummary::packets_untraced` and not kept.
//!
//! Fields are read from the packet as it is at that point: `enqueued` shows the ECN field as
//! offered, before the queue discipline may mark it; `departed` and later events show the mark.

use super::Simulator;
use crate::arena::PacketId;
use crate::network::Network;
use crate::packet::{Packet, SctpChunk, TcpHeader, Transport};
use crate::results::{Column, Table};
use crate::scenario::spec::PacketTraceSpec;
use crate::DropReason;

/// Rows kept when `[trace] packets` gives no `max_rows`: about 48 MB.
pub const DEFAULT_MAX_ROWS: u64 = 1_000_000;

/// What happened to the packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Event {
    Sent,
    Enqueued,
    Departed,
    Arrived,
    Delivered,
    Dropped(DropReason),
}

impl Event {
    fn name(self) -> &'static str {
        match self {
            Event::Sent => "sent",
            Event::Enqueued => "enqueued",
            Event::Departed => "departed",
            Event::Arrived => "arrived",
            Event::Delivered => "delivered",
            Event::Dropped(_) => "dropped",
        }
    }
    fn reason(self) -> &'static str {
        match self {
            Event::Dropped(r) => match r {
                DropReason::Queue => "queue",
                DropReason::Loss => "loss",
                DropReason::Hook => "hook",
                DropReason::Mtu => "mtu",
                DropReason::NoRoute => "noroute",
                DropReason::Ttl => "ttl",
                DropReason::LinkDown => "link_down",
            },
            _ => "",
        }
    }
}

/// The fields of a packet a row keeps (taken before `offer` moves the packet).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Stamp {
    flow: u32,
    /// 0 data (TCP payload or an SCTP DATA chunk), 1 ACK (a TCP segment with no payload, an
    /// SCTP SACK), 2 UDP, 3 control (SCTP heartbeats).
    kind: u8,
    seq: u64,
    ack: u64,
    len: u32,
    size: u32,
    retx: bool,
    ecn: u8,
    dscp: u8,
}

impl Stamp {
    pub(super) fn of(p: &Packet) -> Stamp {
        let (kind, seq, ack, retx) = match &p.transport {
            Transport::Tcp(h) => (
                u8::from(h.len == 0),
                h.seq,
                h.ack.number(),
                h.flags & TcpHeader::FLAG_RETX != 0,
            ),
            Transport::Udp(h) => (2, h.seq, 0, false),
            // SCTP: a DATA chunk's TSN, a SACK's cumulative TSN ack (the SSN ones in LS mode
            // are in the paths table); heartbeats are control.
            Transport::Sctp(h) => match &h.chunk {
                SctpChunk::Data(d) => (0, d.tsn as u64, 0, d.retransmission),
                SctpChunk::Sack(s) => (1, 0, s.cum_tsn as u64, false),
                SctpChunk::Heartbeat(_) | SctpChunk::HeartbeatAck(_) => (3, 0, 0, false),
            },
        };
        Stamp {
            flow: p.flow,
            kind,
            seq,
            ack,
            len: p.payload_len(),
            size: p.size,
            retx,
            ecn: p.ecn,
            dscp: p.dscp,
        }
    }
}

/// Where an event happened: a node or a channel (link direction), by index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Place {
    Node(u32),
    Chan(u32),
}

#[derive(Clone, Copy, Debug)]
struct Row {
    time_ns: u64,
    place: Place,
    event: Event,
    stamp: Stamp,
}

/// The recorder. `on` is false unless the scenario asks for a trace.
#[derive(Debug, Default)]
pub(super) struct PacketTrace {
    pub(super) on: bool,
    /// Flows traced, by flow id; `None`: every flow.
    flows: Option<Vec<bool>>,
    nodes: Vec<bool>,
    chans: Vec<bool>,
    max_rows: u64,
    rows: Vec<Row>,
    /// Events past `max_rows`, counted and not kept.
    pub(super) overflow: u64,
}

impl PacketTrace {
    /// Events kept so far.
    pub(super) fn rows(&self) -> usize {
        self.rows.len()
    }

    /// The recorder of `spec` for a built simulator (its flows added): names resolved to ids.
    /// The parser checked that every name exists.
    pub(super) fn new(spec: Option<&PacketTraceSpec>, sim: &Simulator) -> PacketTrace {
        let Some(spec) = spec else {
            return PacketTrace::default();
        };
        let net = &sim.net;
        let flows = spec
            .flows
            .as_ref()
            .map(|names| sim.flows.iter().map(|f| names.contains(&f.name)).collect());
        let nodes = match &spec.nodes {
            None => vec![true; net.nodes.len()],
            Some(names) => net.nodes.iter().map(|n| names.contains(&n.name)).collect(),
        };
        let chans = match &spec.links {
            None => vec![true; net.chans.len()],
            Some(dirs) => net
                .chans
                .iter()
                .map(|c| {
                    dirs.iter().any(|(link, dir)| {
                        *link == c.link && dir.as_deref().is_none_or(|d| d == c.direction)
                    })
                })
                .collect(),
        };
        PacketTrace {
            on: true,
            flows,
            nodes,
            chans,
            max_rows: spec.max_rows,
            rows: Vec::new(),
            overflow: 0,
        }
    }

    fn wants(&self, place: Place, flow: u32) -> bool {
        let here = match place {
            Place::Node(n) => self.nodes.get(n as usize),
            Place::Chan(c) => self.chans.get(c as usize),
        };
        let flow_ok = match &self.flows {
            None => true,
            Some(f) => f.get(flow as usize).copied().unwrap_or(false),
        };
        flow_ok && here.copied().unwrap_or(false)
    }

    /// Records one event if the filters take it.
    pub(super) fn record(&mut self, time_ns: u64, place: Place, event: Event, stamp: Stamp) {
        if !self.wants(place, stamp.flow) {
            return;
        }
        if self.rows.len() as u64 >= self.max_rows {
            self.overflow += 1;
            return;
        }
        self.rows.push(Row {
            time_ns,
            place,
            event,
            stamp,
        });
    }

    /// The `packets` table: names looked up once per row here, never during the run.
    pub(super) fn into_table(self, net: &Network, flow_names: &[&str]) -> Table {
        let n = self.rows.len();
        let mut time_ns = Vec::with_capacity(n);
        let mut place = Vec::with_capacity(n);
        let mut event = Vec::with_capacity(n);
        let mut reason = Vec::with_capacity(n);
        let mut flow = Vec::with_capacity(n);
        let mut kind = Vec::with_capacity(n);
        let mut u: [Vec<u64>; 7] = Default::default();
        for r in &self.rows {
            time_ns.push(r.time_ns);
            place.push(match r.place {
                Place::Node(i) => net.nodes[i as usize].name.clone(),
                Place::Chan(c) => {
                    let ch = &net.chans[c as usize];
                    format!("{}:{}", ch.link, ch.direction)
                }
            });
            event.push(r.event.name().to_string());
            reason.push(r.event.reason().to_string());
            flow.push(
                flow_names
                    .get(r.stamp.flow as usize)
                    .map_or_else(String::new, |s| s.to_string()),
            );
            kind.push(["data", "ack", "udp", "control"][r.stamp.kind as usize].to_string());
            let s = r.stamp;
            for (col, v) in u.iter_mut().zip([
                s.seq,
                s.ack,
                s.len as u64,
                s.size as u64,
                s.retx as u64,
                s.ecn as u64,
                s.dscp as u64,
            ]) {
                col.push(v);
            }
        }
        let [seq, ack, payload, size, retx, ecn, dscp] = u;
        Table {
            columns: vec![
                ("time_ns".into(), Column::U64(time_ns)),
                ("where".into(), Column::Str(place)),
                ("event".into(), Column::Str(event)),
                ("reason".into(), Column::Str(reason)),
                ("flow".into(), Column::Str(flow)),
                ("kind".into(), Column::Str(kind)),
                ("seq".into(), Column::U64(seq)),
                ("ack".into(), Column::U64(ack)),
                ("payload_bytes".into(), Column::U64(payload)),
                ("size_bytes".into(), Column::U64(size)),
                ("retransmission".into(), Column::U64(retx)),
                ("ecn".into(), Column::U64(ecn)),
                ("dscp".into(), Column::U64(dscp)),
            ],
        }
    }
}

/// The engine's trace points: each is called only when `packet_trace.on`.
impl Simulator {
    /// Switch the trace on as `[trace] packets` asks (after the flows are added: it resolves
    /// flow names to ids).
    pub(super) fn start_packet_trace(&mut self, spec: Option<&PacketTraceSpec>) {
        self.packet_trace = PacketTrace::new(spec, self);
        for (c, on) in self.packet_trace.chans.iter().enumerate() {
            self.net.chans[c].keep_lost = *on;
            self.net.chans[c].queue.keep_dropped(*on);
        }
    }

    /// The packet `id` is at node `node` (sent by an endpoint, delivered to one, or dropped
    /// there); called while its arena slot is still live.
    #[cold]
    #[inline(never)]
    pub(super) fn trace_at_node(&mut self, node: u32, id: PacketId, event: Event) {
        let t = self.now.as_nanos();
        let s = Stamp::of(self.pkts.get(id));
        self.packet_trace.record(t, Place::Node(node), event, s);
    }

    /// Something happened on channel `chan` to the packet stamped `s`.
    #[cold]
    #[inline(never)]
    pub(super) fn trace_on_chan(&mut self, chan: u32, s: Stamp, event: Event) {
        let t = self.now.as_nanos();
        self.packet_trace.record(t, Place::Chan(chan), event, s);
    }

    /// A transmission started on `chan` now: the packet is the newest in its propagation FIFO,
    /// or, if the loss model took it, the one the channel kept for the trace.
    #[cold]
    #[inline(never)]
    pub(super) fn trace_departure(&mut self, chan: u32, lost: bool) {
        let ch = &mut self.net.chans[chan as usize];
        let stamp = if lost {
            // Its slot is already freed: the channel kept a copy (`keep_lost`).
            ch.lost_for_trace.take().map(|p| Stamp::of(&p))
        } else {
            ch.propagation
                .back()
                .map(|&(_, id, _)| Stamp::of(self.pkts.get(id)))
        };
        if let Some(s) = stamp {
            self.trace_on_chan(chan, s, Event::Departed);
            if lost {
                self.trace_on_chan(chan, s, Event::Dropped(DropReason::Loss));
            }
        }
    }
}
