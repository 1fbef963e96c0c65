// SPDX-License-Identifier: MIT
//! Reporting a run: the result tables [`Simulator::finish`] assembles, the time series the
//! `Sample` event feeds, and the packet conservation check.
//!
//! ```text
//!   flows    one row per flow (and per transfer a short-flow generator started): counters of
//!            its sender and receiver, goodput, completion time, RTT
//!   links    one row per link direction: rate, utilization, drops by reason (queue, loss,
//!            hook, mtu, noroute, ttl,
//!            link_down), queue length
//!   paths    one row per path of each SCTP association: packets, retransmissions, timeouts
//!            and bytes acknowledged per path, its share, cwnd, RTO, failures
//!   classes  one row per DiffServ class (or DualPI2 queue) of a link direction: offered,
//!            accepted, sent, drops by reason (tail, early, police), ECN marks, queued at the
//!            end, sent rate, queue delay percentiles
//!   pings    one row per echo request of a ping probe: send time, RTT (NaN: no reply), and
//!            whether it counts for the loss ratio (sent early enough for a reply by the end)
//!   series   long form (time_s, kind, name, metric, value), one sample every trace.interval:
//!            cwnd, ssthresh, srtt and delivered bytes of configured TCP flows; queue length
//!            and throughput of every link direction
//!   agents   one row per node hook that counts (SPACK, Snoop, I-TCP): node, agent, counters
//!   packets  the per-packet trace of `[trace] packets` (trace.rs)
//! ```
//!
//! Conservation: every packet an endpoint sends or a hook injects is, at any moment, delivered,
//! dropped or alive (in a queue, a propagation FIFO or a hook). The engine keeps the first three
//! counts; [`Simulator::conservation`] counts the alive ones structurally, so a test can check
//! that no packet was lost track of.

use std::mem::size_of;

use super::retire::RetiredFlow;
use super::{AnyEndpoint, EndpointSlot, FlowRecord, Simulator};
use crate::packet::Packet;
use crate::results::{Column, RunOutput, RunSummary, StopReason, Table};
use crate::tcp::{TcpReceiver, TcpSender};
use crate::time::SimDuration;

/// Memory one packet alive takes, for `limits.max_memory`: the packet in a queue or a
/// propagation FIFO, twice over because a growing `VecDeque` may hold twice the capacity it uses
/// (docs/performance.md budgets 256 B per packet in flight).
pub(super) const PACKET_BYTES: u64 = 2 * std::mem::size_of::<Packet>() as u64 + 16;

/// Memory one row of the time series takes while the run builds it: two floats, three
/// `String`s (24 B each) and their heap buffers (a short string takes a 32-byte allocation).
pub(super) const SERIES_ROW_BYTES: u64 = 2 * 8 + 3 * 24 + 3 * 32;

/// The flows table's columns: numbers (f64, u64) and strings (name, kind, src, dst).
const FLOW_F64_COLUMNS: usize = 10;
const FLOW_U64_COLUMNS: usize = 13;
const FLOW_STR_COLUMNS: usize = 4;

/// Memory one generated transfer takes from its start to the end of the process that reads its
/// row, for `limits.max_memory`: its record (and name, a short string's 32-byte allocation),
/// its packet count, its two endpoint slots and, once retired, the counters its row is made of
/// (`retire.rs`), all held to the end of the run; then its row of the flows table, built while
/// those are still held. 1,020 B on x86-64; a short-flow storm measured 990 B per transfer
/// (RSS at the table's end over transfers, docs/performance.md, issue 32).
pub(super) const FLOW_ROW_BYTES: u64 = (size_of::<FlowRecord>()
    + 32
    + size_of::<u32>()
    + size_of::<Option<Box<RetiredFlow>>>()
    + size_of::<RetiredFlow>()
    + 2 * size_of::<EndpointSlot>()
    + (FLOW_F64_COLUMNS + FLOW_U64_COLUMNS) * 8
    + FLOW_STR_COLUMNS * (size_of::<String>() + 32)) as u64;

/// Memory a generated transfer's endpoints take until it is retired: the boxed TCP sender and
/// receiver. What grows with the window inside them (the scoreboard, the reassembly map) grows
/// with the packets in flight, which [`PACKET_BYTES`] counts.
pub(super) const TRANSFER_BYTES: u64 = (size_of::<TcpSender>() + size_of::<TcpReceiver>()) as u64;

/// Memory one configured flow takes at least from the scenario's reading to the end of its
/// run, for the check before `count` copies are made (`scenario/parse/flows.rs`): its spec and
/// name, its endpoints and its row. 2,780 B on x86-64; `ccsim validate` of a million copies
/// peaked at 2.0 GB resident and 3.2 GB mapped (mimalloc reserves address space ahead).
pub(crate) const CONFIGURED_FLOW_BYTES: u64 = FLOW_ROW_BYTES
    + TRANSFER_BYTES
    + (size_of::<crate::scenario::FlowSpec>() + size_of::<String>() + 32) as u64;

/// Packet bookkeeping for the conservation check: created = delivered + dropped + alive.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Conservation {
    /// Packets sent by endpoints or injected by hooks.
    pub created: u64,
    /// Packets handed to an endpoint.
    pub delivered: u64,
    /// Packets dropped for any reason.
    pub dropped: u64,
    /// Packets still in queues, transmitters, propagation FIFOs and hooks.
    pub alive: u64,
}

impl Simulator {
    /// Packet bookkeeping at this point of the run.
    pub fn conservation(&self) -> Conservation {
        Conservation {
            alive: self.alive(),
            ..self.cons
        }
    }

    /// Assemble the result tables at `now` (where [`Simulator::run_loop`] stopped): the flows,
    /// the link directions, the time series and the run summary.
    pub fn finish(mut self, reason: StopReason) -> RunOutput {
        let now = self.now;
        self.settle_all_deferred();
        for c in &mut self.net.chans {
            c.finish(now);
        }
        let alive = self.alive();
        // Every arena slot in use is a packet in a queue or on a wire (hooks hold theirs by
        // value): a leaked slot, a packet dropped without being freed, fails here in debug.
        debug_assert_eq!(
            self.pkts.len() as u64,
            self.net
                .chans
                .iter()
                .map(|c| c.packets_inside())
                .sum::<u64>(),
            "packet arena slots in use against packets in the channels"
        );
        self.peak_alive = self.peak_alive.max(alive);
        let wall = self.build_started.elapsed().as_secs_f64();
        let links = self.links_table();
        let classes = self.classes_table();
        let pings = self.pings_table();
        let data_packets = self.net.chans.iter().map(|c| c.stats.data_packets).sum();
        let cons = self.conservation();
        // The summary first: the tables below take what they are made of.
        let summary = RunSummary {
            stop_reason: reason,
            sim_seconds: now.as_secs_f64(),
            events: self.events,
            wall_seconds: wall,
            data_packets,
            data_packets_sent: self.data_packets_sent,
            peak_packets: self.peak_alive,
            peak_heap: self.peak_heap,
            seed: self.seed,
            packets_created: cons.created,
            packets_delivered: cons.delivered,
            packets_dropped: cons.dropped,
            packets_alive: cons.alive,
            cell_hops: self.atm.as_ref().map_or(0, |a| a.cell_hops),
            atm_events: self.atm.as_ref().map_or(0, |a| a.events),
            packets_untraced: self.packet_trace.overflow,
        };
        let series = std::mem::take(&mut self.series).into_table();
        let atm_vcs = self.atm.as_ref().map(|a| a.vcs_table()).unwrap_or_default();
        let atm_ports = self
            .atm
            .as_ref()
            .map(|a| a.ports_table(&self.net))
            .unwrap_or_default();
        let paths = self.paths_table();
        let agents = self.agents_table();
        let packets = {
            let names: Vec<&str> = self.flows.iter().map(|f| f.name.as_str()).collect();
            std::mem::take(&mut self.packet_trace).into_table(&self.net, &names)
        };
        // Last: it takes the flows' names and retired counters instead of copying them.
        let flows = self.take_flows_table();
        RunOutput {
            summary,
            flows,
            links,
            series,
            atm_vcs,
            atm_ports,
            paths,
            agents,
            packets,
            classes,
            pings,
        }
    }

    /// One row per node whose hook counts something, in node order. Columns: `node`, `agent`,
    /// then every counter name in order of first appearance; a row whose agent does not keep a
    /// counter has NaN there (counts are exact in an f64 up to 2^53).
    fn agents_table(&self) -> Table {
        let mut node = Vec::new();
        let mut agent = Vec::new();
        let mut names: Vec<&'static str> = Vec::new();
        let mut rows = Vec::new();
        for (n, h) in self.hooks.iter().enumerate() {
            let Some(c) = h.as_ref().and_then(|h| h.counters()) else {
                continue;
            };
            node.push(self.net.nodes[n].name.clone());
            agent.push(c.agent.to_string());
            for (k, _) in &c.values {
                if !names.contains(k) {
                    names.push(k);
                }
            }
            rows.push(c.values);
        }
        let mut columns = vec![
            ("node".to_string(), Column::Str(node)),
            ("agent".to_string(), Column::Str(agent)),
        ];
        for k in names {
            let col = rows
                .iter()
                .map(|r| {
                    r.iter()
                        .find(|(n, _)| *n == k)
                        .map_or(f64::NAN, |(_, v)| *v as f64)
                })
                .collect();
            columns.push((k.to_string(), Column::F64(col)));
        }
        Table { columns }
    }

    /// One row per flow, in the order flows were added (configured flows, then transfers as
    /// generators started them). Rates divide by the time a flow was active: until it completed,
    /// or until `now`.
    ///
    /// Called last by [`Simulator::finish`]: it moves each flow's name into the table and
    /// frees each retired flow's counters once its row is written, so a run of a million
    /// transfers does not hold their names and counters twice while the table is built.
    fn take_flows_table(&mut self) -> Table {
        let flows = std::mem::take(&mut self.flows);
        let n = flows.len();
        let mut name = Vec::with_capacity(n);
        let mut kind = Vec::with_capacity(n);
        let mut src = Vec::with_capacity(n);
        let mut dst = Vec::with_capacity(n);
        let mut cols_f: [Vec<f64>; FLOW_F64_COLUMNS] = Default::default();
        let mut cols_u: [Vec<u64>; FLOW_U64_COLUMNS] = Default::default();
        for c in cols_f.iter_mut() {
            c.reserve_exact(n);
        }
        for c in cols_u.iter_mut() {
            c.reserve_exact(n);
        }
        let end = self.now;
        for (i, f) in flows.into_iter().enumerate() {
            // A retired flow's counters are kept by the flow, not its endpoints (retire.rs).
            let retired = self.life.take_row(i);
            let (tx, rx) = match &retired {
                Some(r) => (&r.tx, &r.rx),
                None => (
                    self.eps[f.sender as usize].ep.counters(),
                    self.eps[f.receiver as usize].ep.counters(),
                ),
            };
            kind.push(f.kind.to_string());
            src.push(self.net.nodes[f.src as usize].name.clone());
            dst.push(self.net.nodes[f.dst as usize].name.clone());
            let done = tx.completed_at;
            let active_end = done.unwrap_or(end);
            let active = active_end.saturating_since(f.start).as_secs_f64();
            let per_s = |x: u64| {
                if active > 0.0 {
                    x as f64 * 8.0 / active
                } else {
                    f64::NAN
                }
            };
            let rtt_mean = if tx.rtt_samples > 0 {
                tx.rtt_sum_ns as f64 / tx.rtt_samples as f64 * 1e-9
            } else {
                f64::NAN
            };
            let f_vals = [
                f.start.as_secs_f64(),
                f.size.map_or(f64::NAN, |s| s as f64),
                per_s(rx.bytes_delivered),
                per_s(tx.wire_bytes_sent),
                if tx.packets_sent > 0 {
                    tx.retransmits as f64 / tx.packets_sent as f64
                } else {
                    0.0
                },
                done.map_or(f64::NAN, |t| t.saturating_since(f.start).as_secs_f64()),
                rtt_mean,
                tx.rtt_min_ns.map_or(f64::NAN, |r| r as f64 * 1e-9),
                // The receiver's view of a finite transfer: when its last byte reached the
                // application (differs from completion_time_s when a relay acknowledges early).
                match (f.size, rx.last_delivery) {
                    (Some(size), Some(t)) if rx.bytes_delivered >= size => {
                        t.saturating_since(f.start).as_secs_f64()
                    }
                    _ => f64::NAN,
                },
                match (&retired, &self.eps[f.sender as usize].ep) {
                    // A retired sender's slot holds nothing: its window is in the row.
                    (Some(r), _) => r.cwnd as f64,
                    (None, AnyEndpoint::TcpSender(s)) => s.cwnd() as f64,
                    // The sum over the association's paths.
                    (None, AnyEndpoint::SctpSender(s)) => s.cwnd_total() as f64,
                    (None, AnyEndpoint::SctpLsSender(s)) => s.cwnd_total() as f64,
                    _ => f64::NAN,
                },
            ];
            let u_vals = [
                tx.bytes_sent,
                tx.wire_bytes_sent,
                tx.packets_sent,
                tx.retransmits,
                tx.timeouts,
                tx.fast_retransmits,
                rx.bytes_delivered,
                rx.packets_received,
                rx.duplicate_segments,
                done.is_some() as u64,
                rx.receiver_drops,
                rx.ecn_ce_received,
                tx.ecn_reductions,
            ];
            for (c, v) in cols_f.iter_mut().zip(f_vals) {
                c.push(v);
            }
            for (c, v) in cols_u.iter_mut().zip(u_vals) {
                c.push(v);
            }
            name.push(f.name);
        }
        let [start_s, size_bytes, goodput_bps, throughput_bps, retransmit_ratio, completion_time_s, rtt_mean_s, rtt_min_s, delivery_time_s, final_cwnd_bytes] =
            cols_f;
        let [bytes_sent, wire_bytes_sent, packets_sent, retransmits, timeouts, fast_retransmits, bytes_delivered, packets_received, duplicate_segments_received, completed, receiver_drops, ecn_ce_received, ecn_reductions] =
            cols_u;
        Table {
            columns: vec![
                ("name".into(), Column::Str(name)),
                ("kind".into(), Column::Str(kind)),
                ("src".into(), Column::Str(src)),
                ("dst".into(), Column::Str(dst)),
                ("start_s".into(), Column::F64(start_s)),
                ("size_bytes".into(), Column::F64(size_bytes)),
                ("bytes_sent".into(), Column::U64(bytes_sent)),
                ("wire_bytes_sent".into(), Column::U64(wire_bytes_sent)),
                ("packets_sent".into(), Column::U64(packets_sent)),
                ("retransmits".into(), Column::U64(retransmits)),
                ("retransmit_ratio".into(), Column::F64(retransmit_ratio)),
                ("timeouts".into(), Column::U64(timeouts)),
                ("fast_retransmits".into(), Column::U64(fast_retransmits)),
                ("bytes_delivered".into(), Column::U64(bytes_delivered)),
                ("packets_received".into(), Column::U64(packets_received)),
                (
                    "duplicate_segments_received".into(),
                    Column::U64(duplicate_segments_received),
                ),
                ("goodput_bps".into(), Column::F64(goodput_bps)),
                ("throughput_bps".into(), Column::F64(throughput_bps)),
                ("completed".into(), Column::U64(completed)),
                ("completion_time_s".into(), Column::F64(completion_time_s)),
                ("delivery_time_s".into(), Column::F64(delivery_time_s)),
                ("rtt_mean_s".into(), Column::F64(rtt_mean_s)),
                ("rtt_min_s".into(), Column::F64(rtt_min_s)),
                ("final_cwnd_bytes".into(), Column::F64(final_cwnd_bytes)),
                ("receiver_drops".into(), Column::U64(receiver_drops)),
                ("ecn_ce_received".into(), Column::U64(ecn_ce_received)),
                ("ecn_reductions".into(), Column::U64(ecn_reductions)),
            ],
        }
    }

    /// One row per path of each SCTP association, in flow then path order. Rates divide by the
    /// time since the flow started.
    fn paths_table(&self) -> Table {
        let mut flow = Vec::new();
        let mut local = Vec::new();
        let mut peer = Vec::new();
        let mut f: [Vec<f64>; 6] = Default::default();
        let mut u: [Vec<u64>; 12] = Default::default();
        let addr_name = |a: u32| {
            let iface = &self.net.ifaces[a as usize];
            let link = &self.net.chans[iface.out_chan as usize].link;
            format!("{}:{link}", self.net.nodes[iface.node as usize].name)
        };
        for fr in &self.flows {
            let Some((paths, primary_path)) = self.eps[fr.sender as usize].ep.sctp_paths() else {
                continue;
            };
            let secs = self.now.saturating_since(fr.start).as_secs_f64();
            let acked_total: u64 = paths.iter().map(|p| p.counters.bytes_acked).sum();
            for (i, p) in paths.iter().enumerate() {
                let c = &p.counters;
                flow.push(fr.name.clone());
                local.push(addr_name(p.local));
                peer.push(addr_name(p.peer));
                for (col, v) in f.iter_mut().zip([
                    p.cwnd as f64,
                    p.ssthresh as f64,
                    p.srtt().map_or(f64::NAN, |d| d.as_secs_f64()),
                    p.rto.rto().as_secs_f64(),
                    if secs > 0.0 {
                        c.bytes_acked as f64 * 8.0 / secs
                    } else {
                        f64::NAN
                    },
                    if acked_total > 0 {
                        c.bytes_acked as f64 / acked_total as f64
                    } else {
                        f64::NAN
                    },
                ]) {
                    col.push(v);
                }
                for (col, v) in u.iter_mut().zip([
                    i as u64,
                    (i == primary_path) as u64,
                    c.data_packets,
                    c.data_bytes,
                    c.retransmits,
                    c.fast_retransmits,
                    c.timeouts,
                    c.bytes_acked,
                    c.heartbeats,
                    c.heartbeat_acks,
                    c.failures,
                    p.active as u64,
                ]) {
                    col.push(v);
                }
            }
        }
        let [cwnd_bytes, ssthresh_bytes, srtt_s, rto_s, acked_bps, acked_share] = f;
        let [path, primary, data_packets, data_bytes, retransmits, fast_retransmits, timeouts, bytes_acked, heartbeats, heartbeat_acks, failures, active] =
            u;
        Table {
            columns: vec![
                ("flow".into(), Column::Str(flow)),
                ("path".into(), Column::U64(path)),
                ("local".into(), Column::Str(local)),
                ("peer".into(), Column::Str(peer)),
                ("primary".into(), Column::U64(primary)),
                ("active".into(), Column::U64(active)),
                ("data_packets".into(), Column::U64(data_packets)),
                ("data_bytes".into(), Column::U64(data_bytes)),
                ("retransmits".into(), Column::U64(retransmits)),
                ("fast_retransmits".into(), Column::U64(fast_retransmits)),
                ("timeouts".into(), Column::U64(timeouts)),
                ("bytes_acked".into(), Column::U64(bytes_acked)),
                ("acked_bps".into(), Column::F64(acked_bps)),
                ("acked_share".into(), Column::F64(acked_share)),
                ("heartbeats".into(), Column::U64(heartbeats)),
                ("heartbeat_acks".into(), Column::U64(heartbeat_acks)),
                ("failures".into(), Column::U64(failures)),
                ("cwnd_bytes".into(), Column::F64(cwnd_bytes)),
                ("ssthresh_bytes".into(), Column::F64(ssthresh_bytes)),
                ("srtt_s".into(), Column::F64(srtt_s)),
                ("rto_s".into(), Column::F64(rto_s)),
            ],
        }
    }

    /// One row per link direction, in declaration order (`a_to_b` before `b_to_a`).
    fn links_table(&self) -> Table {
        let mut link = Vec::new();
        let mut direction = Vec::new();
        let mut from = Vec::new();
        let mut to = Vec::new();
        let mut f: [Vec<f64>; 7] = Default::default();
        let mut u: [Vec<u64>; 15] = Default::default();
        // Queue delay (sojourn time) percentiles and maximum, seconds; NaN where no packet left:
        // an idle direction has no delay to report, and 0 would read as packets that never
        // waited (campaign 11).
        let mut delay: [Vec<f64>; 6] = Default::default();
        let secs = self.now.as_secs_f64();
        for c in &self.net.chans {
            let s = &c.stats;
            let h = &s.sojourn;
            for (col, q) in delay.iter_mut().zip([0.01, 0.05, 0.5, 0.95, 0.99, 1.0]) {
                col.push(h.quantile_ns(q).map_or(f64::NAN, |ns| ns * 1e-9));
            }
            link.push(c.link.clone());
            direction.push(c.direction.to_string());
            from.push(self.net.nodes[c.from_node as usize].name.clone());
            to.push(self.net.nodes[c.to_node as usize].name.clone());
            let rate = c.rate.bits_per_sec() as f64;
            let ns = self.now.as_nanos().max(1) as f64;
            let bits = c.bits_sent_by(self.now) as f64;
            for (col, v) in f.iter_mut().zip([
                rate,
                c.delay.as_secs_f64(),
                if secs > 0.0 {
                    bits / (rate * secs)
                } else {
                    0.0
                },
                if secs > 0.0 { bits / secs } else { 0.0 },
                s.queue_pkt_ns as f64 / ns,
                s.queue_byte_ns as f64 / ns,
                0.0,
            ]) {
                col.push(v);
            }
            for (col, v) in u.iter_mut().zip([
                s.packets,
                s.bytes,
                s.data_packets,
                s.drops_queue,
                s.drops_loss,
                s.drops_hook,
                s.drops_mtu,
                s.drops_noroute,
                s.drops_ttl,
                s.queue_max_packets,
                s.queue_max_bytes,
                s.offered,
                s.arrived,
                c.packets_inside(),
                s.drops_link_down,
            ]) {
                col.push(v);
            }
        }
        let [rate_bps, delay_s, utilization, throughput_bps, queue_mean_packets, queue_mean_bytes, _] =
            f;
        let [packets, bytes, data_packets, drops_queue, drops_loss, drops_hook, drops_mtu, drops_noroute, drops_ttl, queue_max_packets, queue_max_bytes, offered, arrived, inside, drops_link_down] =
            u;
        let marks = self.net.chans.iter().map(|c| c.queue.marks()).collect();
        let [delay_p01, delay_p05, delay_p50, delay_p95, delay_p99, delay_max] = delay;
        Table {
            columns: vec![
                ("link".into(), Column::Str(link)),
                ("direction".into(), Column::Str(direction)),
                ("from".into(), Column::Str(from)),
                ("to".into(), Column::Str(to)),
                ("rate_bps".into(), Column::F64(rate_bps)),
                ("delay_s".into(), Column::F64(delay_s)),
                ("utilization".into(), Column::F64(utilization)),
                ("throughput_bps".into(), Column::F64(throughput_bps)),
                ("packets".into(), Column::U64(packets)),
                ("bytes".into(), Column::U64(bytes)),
                ("data_packets".into(), Column::U64(data_packets)),
                ("drops_queue".into(), Column::U64(drops_queue)),
                ("drops_loss".into(), Column::U64(drops_loss)),
                ("drops_hook".into(), Column::U64(drops_hook)),
                ("drops_mtu".into(), Column::U64(drops_mtu)),
                ("drops_noroute".into(), Column::U64(drops_noroute)),
                ("drops_ttl".into(), Column::U64(drops_ttl)),
                ("drops_link_down".into(), Column::U64(drops_link_down)),
                ("ecn_marks".into(), Column::U64(marks)),
                ("queue_mean_packets".into(), Column::F64(queue_mean_packets)),
                ("queue_max_packets".into(), Column::U64(queue_max_packets)),
                ("queue_mean_bytes".into(), Column::F64(queue_mean_bytes)),
                ("queue_max_bytes".into(), Column::U64(queue_max_bytes)),
                ("queue_delay_p01_s".into(), Column::F64(delay_p01)),
                ("queue_delay_p05_s".into(), Column::F64(delay_p05)),
                ("queue_delay_p50_s".into(), Column::F64(delay_p50)),
                ("queue_delay_p95_s".into(), Column::F64(delay_p95)),
                ("queue_delay_p99_s".into(), Column::F64(delay_p99)),
                ("queue_delay_max_s".into(), Column::F64(delay_max)),
                ("packets_offered".into(), Column::U64(offered)),
                ("packets_arrived".into(), Column::U64(arrived)),
                ("packets_inside".into(), Column::U64(inside)),
            ],
        }
    }

    /// One row per class of every link direction whose queue is class-based, and one per queue
    /// (`l4s`, `classic`) of a DualPI2 link direction.
    fn classes_table(&self) -> Table {
        let mut link = Vec::new();
        let mut direction = Vec::new();
        let mut class = Vec::new();
        let mut u: [Vec<u64>; 13] = Default::default();
        let mut sent_bps = Vec::new();
        // Queue delay percentiles and maximum of the class's packets sent, seconds (NaN: none).
        let mut delay: [Vec<f64>; 4] = Default::default();
        let secs = self.now.as_secs_f64();
        for c in &self.net.chans {
            for (name, k, queued, h) in c.queue.class_rows() {
                for (col, q) in delay.iter_mut().zip([0.5, 0.95, 0.99, 1.0]) {
                    col.push(h.quantile_ns(q).map_or(f64::NAN, |ns| ns * 1e-9));
                }
                link.push(c.link.clone());
                direction.push(c.direction.to_string());
                class.push(name.to_string());
                for (col, v) in u.iter_mut().zip([
                    k.offered_packets,
                    k.offered_bytes,
                    k.accepted_packets,
                    k.accepted_bytes,
                    k.sent_packets,
                    k.sent_bytes,
                    k.drops_tail,
                    k.drops_early,
                    k.drops_police,
                    k.drops_tail + k.drops_early + k.drops_police,
                    k.ecn_marks,
                    queued as u64,
                    k.drops_link_down,
                ]) {
                    col.push(v);
                }
                sent_bps.push(if secs > 0.0 {
                    k.sent_bytes as f64 * 8.0 / secs
                } else {
                    0.0
                });
            }
        }
        let names = [
            "offered_packets",
            "offered_bytes",
            "accepted_packets",
            "accepted_bytes",
            "sent_packets",
            "sent_bytes",
            "drops_tail",
            "drops_early",
            "drops_police",
            "drops",
            "ecn_marks",
            "queued_packets",
            "drops_link_down",
        ];
        let mut columns = vec![
            ("link".into(), Column::Str(link)),
            ("direction".into(), Column::Str(direction)),
            ("class".into(), Column::Str(class)),
        ];
        columns.extend(
            names
                .iter()
                .zip(u)
                .map(|(n, v)| (n.to_string(), Column::U64(v))),
        );
        columns.push(("sent_bps".into(), Column::F64(sent_bps)));
        let [p50, p95, p99, max] = delay;
        for (name, col) in [
            ("queue_delay_p50_s", p50),
            ("queue_delay_p95_s", p95),
            ("queue_delay_p99_s", p99),
            ("queue_delay_max_s", max),
        ] {
            columns.push((name.into(), Column::F64(col)));
        }
        Table { columns }
    }

    /// One row per echo request of every ping probe. A request counts for the loss ratio
    /// (`counted` = 1) when it was answered or sent at least twice the largest RTT seen (1 s if
    /// none) before the end, so that a reply still on its way is not taken for a loss.
    fn pings_table(&self) -> Table {
        let mut flow = Vec::new();
        let mut seq = Vec::new();
        let mut sent_s = Vec::new();
        let mut rtt_s = Vec::new();
        let mut counted = Vec::new();
        for f in &self.flows {
            let AnyEndpoint::Ping(p) = &self.eps[f.sender as usize].ep else {
                continue;
            };
            let max_rtt = p
                .samples()
                .iter()
                .filter_map(|(_, r)| *r)
                .max()
                .unwrap_or(SimDuration::from_secs(1));
            let horizon = self.now.as_nanos().saturating_sub(2 * max_rtt.as_nanos());
            for (k, (t, r)) in p.samples().iter().enumerate() {
                flow.push(f.name.clone());
                seq.push(k as u64);
                sent_s.push(t.as_secs_f64());
                rtt_s.push(r.map_or(f64::NAN, |d| d.as_secs_f64()));
                counted.push((r.is_some() || t.as_nanos() <= horizon) as u64);
            }
        }
        Table {
            columns: vec![
                ("flow".into(), Column::Str(flow)),
                ("seq".into(), Column::U64(seq)),
                ("sent_s".into(), Column::F64(sent_s)),
                ("rtt_s".into(), Column::F64(rtt_s)),
                ("counted".into(), Column::U64(counted)),
            ],
        }
    }

    /// Packets in channels and hooks, counted one place at a time.
    fn alive(&self) -> u64 {
        let in_chans: u64 = self.net.chans.iter().map(|c| c.packets_inside()).sum();
        let in_hooks: u64 = self.hooks.iter().flatten().map(|h| h.held() as u64).sum();
        in_chans + in_hooks + self.atm_packets_inside()
    }

    /// The rows [`Simulator::sample`] adds each time: four per traced TCP flow, one per other
    /// traced flow, three per link direction. Kept beside `sample` so that the two agree.
    pub(super) fn series_rows_per_sample(&self) -> u64 {
        let flows: u64 = self
            .flows
            .iter()
            .filter(|f| f.traced)
            .map(|f| match self.eps[f.sender as usize].ep {
                AnyEndpoint::TcpSender(_) => 4,
                _ => 1,
            })
            .sum();
        let atm = self
            .atm
            .as_ref()
            .map_or(0, |a| 3 * a.vcs.len() as u64 + 2 * a.ports.len() as u64);
        flows + 3 * self.net.chans.len() as u64 + atm
    }

    /// One row per metric of each traced flow and each link direction, at `now`.
    pub(super) fn sample(&mut self) {
        // Deferred dequeues due by now leave the queue before it is read (`link.rs`).
        self.settle_all_deferred();
        let t = self.now.as_secs_f64();
        let iv = self.trace_interval.unwrap_or(SimDuration::from_secs(1));
        for f in &self.flows {
            if !f.traced {
                continue;
            }
            if let AnyEndpoint::TcpSender(s) = &self.eps[f.sender as usize].ep {
                let s = s.as_ref();
                self.series
                    .push(t, "flow", &f.name, "cwnd_bytes", s.cwnd() as f64);
                let ssth = if s.ssthresh() == u64::MAX {
                    f64::NAN
                } else {
                    s.ssthresh() as f64
                };
                self.series.push(t, "flow", &f.name, "ssthresh_bytes", ssth);
                let srtt = s.srtt().map_or(f64::NAN, |d| d.as_secs_f64());
                self.series.push(t, "flow", &f.name, "srtt_s", srtt);
            }
            let delivered = self.eps[f.receiver as usize].ep.counters().bytes_delivered;
            self.series
                .push(t, "flow", &f.name, "delivered_bytes", delivered as f64);
        }
        for c in &mut self.net.chans {
            // Planned departures due by now leave the queue before it is read (`link.rs`).
            c.settle(self.now);
            let name = format!("{}:{}", c.link, c.direction);
            self.series
                .push(t, "link", &name, "queue_packets", c.queue_packets() as f64);
            self.series
                .push(t, "link", &name, "queue_bytes", c.queue_bytes() as f64);
            // Bits serialized in the interval, not bits of transmissions started in it: a
            // packet that straddles a sample counts on both sides as it is sent.
            // (Rounding of the serialization time to whole nanoseconds may make the count dip
            // by a bit as a transmission starts: never count backwards.)
            let bits = c.bits_sent_by(self.now).max(c.stats.bits_at_last_sample);
            let bps = (bits - c.stats.bits_at_last_sample) as f64 / iv.as_secs_f64();
            c.stats.bits_at_last_sample = bits;
            self.series.push(t, "link", &name, "throughput_bps", bps);
        }
        // ATM: each VC's ACR, latest ER and source buffer; each port's class queues.
        if let Some(a) = &self.atm {
            let bits = crate::atm::cell::CELL_BITS;
            for v in &a.vcs {
                self.series
                    .push(t, "vc", &v.name, "acr_bps", v.acr.acr * bits);
                self.series
                    .push(t, "vc", &v.name, "er_bps", v.last_er * bits);
                let cells = v.source_cells() as f64;
                self.series.push(t, "vc", &v.name, "source_cells", cells);
            }
            for p in &a.ports {
                let c = &self.net.chans[p.chan as usize];
                let name = format!("{}:{}", c.link, c.direction);
                let (abr, cbr) = (p.queue_len(1) as f64, p.queue_len(0) as f64);
                self.series
                    .push(t, "atm_port", &name, "abr_queue_cells", abr);
                self.series
                    .push(t, "atm_port", &name, "cbr_queue_cells", cbr);
            }
        }
    }
}

/// The long-form time series: one row per (time, object, metric).
#[derive(Default)]
pub(super) struct SeriesBuilder {
    time: Vec<f64>,
    kind: Vec<String>,
    name: Vec<String>,
    metric: Vec<String>,
    value: Vec<f64>,
}

impl SeriesBuilder {
    /// Rows sampled so far.
    pub(super) fn rows(&self) -> usize {
        self.time.len()
    }

    fn push(&mut self, t: f64, kind: &str, name: &str, metric: &str, value: f64) {
        self.time.push(t);
        self.kind.push(kind.to_string());
        self.name.push(name.to_string());
        self.metric.push(metric.to_string());
        self.value.push(value);
    }

    fn into_table(self) -> Table {
        Table {
            columns: vec![
                ("time_s".into(), Column::F64(self.time)),
                ("kind".into(), Column::Str(self.kind)),
                ("name".into(), Column::Str(self.name)),
                ("metric".into(), Column::Str(self.metric)),
                ("value".into(), Column::F64(self.value)),
            ],
        }
    }
}
