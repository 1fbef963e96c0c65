// SPDX-License-Identifier: MIT
//! The event loop.
//!
//! ```text
//!   heap of (time, seq, event), seq strictly increasing: equal times run in scheduling order,
//!   so a run is a pure function of the scenario and the seed.
//!
//!   TxDone(chan)   a transmitter freed up with packets waiting: start the next (only then; a
//!                  packet offered to an idle channel goes straight onto the wire, link.rs)
//!   Arrive(chan)   the head of a propagation FIFO reached the far node: hook, route or deliver
//!   Timer(ep)      an endpoint's deadline (lazily cancelled: stale entries are skipped)
//!   HookTimer(n)   a node hook's deadline (same rule)
//!   Spawn(g)       a short-flow generator starts a new TCP transfer
//!   Sample         the time-series sampler
//! ```
//!
//! Everything that happens at one instant without delay (a hook, routing, delivery to an
//! endpoint, the endpoint's reply) is a direct call, not an event. Packets an endpoint delivers
//! to another endpoint on the same node go through a local FIFO, so there is no recursion.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};
use std::time::Instant;

use crate::endpoint::{Endpoint, FlowCounters};
use crate::hook::{HookOutput, Impair, NodeHook};
use crate::link::Offer;
use crate::network::{Network, NO_ROUTE};
use crate::packet::{Addr, Packet, Port};
use crate::results::{Column, RunOutput, RunSummary, StopReason, Table};
use crate::rng::RngStream;
use crate::scenario::{FlowKind, FlowSpec, HookSpec, NodeKind, Spec, TcpSpec};
use crate::tcp::{TcpReceiver, TcpReceiverConfig, TcpSender, TcpSenderConfig};
use crate::time::{Rate, SimDuration, SimTime};
use crate::traffic::{CbrSource, OnOffSource, ShortFlowArrivals, UdpConfig, UdpSink};
use crate::{DropReason, Error};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ev {
    TxDone(u32),
    Arrive(u32),
    Timer(u32),
    HookTimer(u32),
    Spawn(u32),
    Sample,
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    time: SimTime,
    seq: u64,
    ev: Ev,
}

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        self.time == o.time && self.seq == o.seq
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Entry {
    /// Reversed: `BinaryHeap` is a max-heap and we want the earliest (time, seq).
    fn cmp(&self, o: &Self) -> Ordering {
        (o.time, o.seq).cmp(&(self.time, self.seq))
    }
}

/// The built-in endpoints, dispatched without a vtable.
enum AnyEndpoint {
    TcpSender(Box<TcpSender>),
    TcpReceiver(Box<TcpReceiver>),
    Cbr(CbrSource),
    OnOff(OnOffSource),
    UdpSink(UdpSink),
}

impl AnyEndpoint {
    fn as_endpoint(&mut self) -> &mut dyn Endpoint {
        match self {
            AnyEndpoint::TcpSender(e) => e.as_mut(),
            AnyEndpoint::TcpReceiver(e) => e.as_mut(),
            AnyEndpoint::Cbr(e) => e,
            AnyEndpoint::OnOff(e) => e,
            AnyEndpoint::UdpSink(e) => e,
        }
    }
    fn poll_timeout(&self) -> Option<SimTime> {
        match self {
            AnyEndpoint::TcpSender(e) => e.poll_timeout(),
            AnyEndpoint::TcpReceiver(e) => e.poll_timeout(),
            AnyEndpoint::Cbr(e) => e.poll_timeout(),
            AnyEndpoint::OnOff(e) => e.poll_timeout(),
            AnyEndpoint::UdpSink(e) => e.poll_timeout(),
        }
    }
    fn counters(&self) -> &FlowCounters {
        match self {
            AnyEndpoint::TcpSender(e) => e.counters(),
            AnyEndpoint::TcpReceiver(e) => e.counters(),
            AnyEndpoint::Cbr(e) => e.counters(),
            AnyEndpoint::OnOff(e) => e.counters(),
            AnyEndpoint::UdpSink(e) => e.counters(),
        }
    }
}

struct EndpointSlot {
    node: u32,
    ep: AnyEndpoint,
    /// Time of the live heap entry for this endpoint, if any.
    timer_at: Option<SimTime>,
}

/// One row of the flows table.
struct FlowRecord {
    name: String,
    kind: &'static str,
    src: u32,
    dst: u32,
    start: SimTime,
    size: Option<u64>,
    sender: Port,
    receiver: Port,
    /// Traced in the time series (configured flows; not generated short flows).
    traced: bool,
}

/// A Poisson generator of short TCP transfers.
struct Generator {
    name: String,
    src: u32,
    dst: u32,
    stop: Option<SimTime>,
    arrivals: ShortFlowArrivals,
    tcp: TcpSpec,
    spawned: u64,
}

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

pub struct Simulator {
    now: SimTime,
    seq: u64,
    heap: BinaryHeap<Entry>,
    net: Network,
    eps: Vec<EndpointSlot>,
    hooks: Vec<Option<Box<dyn NodeHook>>>,
    hook_timer_at: Vec<Option<SimTime>>,
    flows: Vec<FlowRecord>,
    gens: Vec<Generator>,
    /// Scratch buffers, reused so the hot path does not allocate.
    out: Vec<Packet>,
    hook_out: HookOutput,
    local: VecDeque<(u32, Packet)>,
    end: SimTime,
    max_events: u64,
    max_wall: Option<f64>,
    events: u64,
    peak_heap: u64,
    cons: Conservation,
    peak_alive: u64,
    data_packets_sent: u64,
    trace_interval: Option<SimDuration>,
    series: SeriesBuilder,
    seed: u64,
    build_started: Instant,
}

impl Simulator {
    /// Build the network, endpoints, hooks and generators of a validated scenario.
    pub fn build(spec: &Spec) -> Result<Simulator, Error> {
        let build_started = Instant::now();
        let net = Network::build(spec);
        let hooks = spec
            .nodes
            .iter()
            .map(|(name, n)| {
                n.hook.as_ref().map(|h| -> Box<dyn NodeHook> {
                    match h {
                        HookSpec::Impair { drop, delay } => Box::new(Impair::new(
                            *drop,
                            *delay,
                            RngStream::derive(spec.seed, &format!("node/{name}/hook")),
                        )),
                        HookSpec::Spack(cfg) => Box::new(crate::agents::Spack::new(*cfg)),
                        HookSpec::Snoop(cfg) => Box::new(crate::agents::Snoop::new(*cfg)),
                        HookSpec::Itcp(cfg) => Box::new(crate::agents::Itcp::new(cfg.clone())),
                    }
                })
            })
            .collect::<Vec<_>>();
        let n_nodes = net.nodes.len();
        let mut sim = Simulator {
            now: SimTime::ZERO,
            seq: 0,
            heap: BinaryHeap::new(),
            net,
            eps: Vec::new(),
            hooks,
            hook_timer_at: vec![None; n_nodes],
            flows: Vec::new(),
            gens: Vec::new(),
            out: Vec::new(),
            hook_out: HookOutput::default(),
            local: VecDeque::new(),
            end: SimTime::ZERO + spec.duration,
            max_events: spec.limits.max_events.unwrap_or(u64::MAX),
            max_wall: spec.limits.max_wall_seconds,
            events: 0,
            peak_heap: 0,
            cons: Conservation::default(),
            peak_alive: 0,
            data_packets_sent: 0,
            trace_interval: spec.trace.interval.filter(|d| d.as_nanos() > 0),
            series: SeriesBuilder::default(),
            seed: spec.seed,
            build_started,
        };
        for (name, f) in &spec.flows {
            let (Some(src), Some(dst)) = (
                spec.nodes.get_index_of(&f.src).map(|i| i as u32),
                spec.nodes.get_index_of(&f.dst).map(|i| i as u32),
            ) else {
                continue;
            };
            let (Some(src_addr), Some(dst_addr)) =
                (sim.net.primary_addr(src), sim.net.primary_addr(dst))
            else {
                continue;
            };
            check_path_mtu(&sim.net, name, f, src, dst_addr)?;
            match &f.kind {
                FlowKind::Tcp { size, tcp } => {
                    sim.add_tcp_flow(
                        name.clone(),
                        (src, src_addr),
                        (dst, dst_addr),
                        f.start,
                        f.stop,
                        *size,
                        tcp,
                        true,
                    );
                }
                FlowKind::Cbr { rate, packet_size } => {
                    let cfg = sim.udp_config(src_addr, dst_addr, f, *rate, *packet_size);
                    let source = AnyEndpoint::Cbr(CbrSource::new(cfg));
                    sim.add_udp_flow(name, "cbr", src, dst, f.start, source);
                }
                FlowKind::OnOff {
                    rate,
                    packet_size,
                    on,
                    off,
                    exponential,
                } => {
                    let cfg = sim.udp_config(src_addr, dst_addr, f, *rate, *packet_size);
                    let rng = RngStream::derive(spec.seed, &format!("flow/{name}/onoff"));
                    let source =
                        AnyEndpoint::OnOff(OnOffSource::new(cfg, *on, *off, *exponential, rng));
                    sim.add_udp_flow(name, "onoff", src, dst, f.start, source);
                }
                FlowKind::ShortTcp {
                    arrival_rate,
                    sizes,
                    tcp,
                } => {
                    let mut arrivals =
                        ShortFlowArrivals::new(*arrival_rate, sizes.clone(), spec.seed, name);
                    let first = f.start + arrivals.next_gap();
                    let g = sim.gens.len() as u32;
                    sim.gens.push(Generator {
                        name: name.clone(),
                        src,
                        dst,
                        stop: f.stop,
                        arrivals,
                        tcp: tcp.clone(),
                        spawned: 0,
                    });
                    if first <= sim.end && f.stop.is_none_or(|s| first < s) {
                        sim.schedule(first, Ev::Spawn(g));
                    }
                }
            }
        }
        for port in 0..sim.eps.len() as u32 {
            sim.reschedule_endpoint(port);
        }
        if let Some(iv) = sim.trace_interval {
            sim.schedule(SimTime::ZERO + iv, Ev::Sample);
        }
        Ok(sim)
    }

    /// The configuration of a UDP source for flow `f`, on the ports `add_udp_flow` will use.
    fn udp_config(
        &self,
        addr: Addr,
        dst_addr: Addr,
        f: &FlowSpec,
        rate: Rate,
        packet_size: u32,
    ) -> UdpConfig {
        let (port, dst_port) = self.reserve_ports();
        UdpConfig {
            addr,
            dst_addr,
            port,
            dst_port,
            flow: self.flows.len() as u32,
            start: f.start,
            stop: f.stop,
            rate,
            packet_size,
        }
    }

    fn reserve_ports(&self) -> (Port, Port) {
        let p = self.eps.len() as Port;
        (p, p + 1)
    }

    fn add_udp_flow(
        &mut self,
        name: &str,
        kind: &'static str,
        src: u32,
        dst: u32,
        start: SimTime,
        source: AnyEndpoint,
    ) {
        let flow = self.flows.len() as u32;
        let tx = self.eps.len() as Port;
        self.eps.push(EndpointSlot {
            node: src,
            ep: source,
            timer_at: None,
        });
        self.eps.push(EndpointSlot {
            node: dst,
            ep: AnyEndpoint::UdpSink(UdpSink::new(flow)),
            timer_at: None,
        });
        self.flows.push(FlowRecord {
            name: name.to_string(),
            kind,
            src,
            dst,
            start,
            size: None,
            sender: tx,
            receiver: tx + 1,
            traced: false,
        });
    }

    #[allow(clippy::too_many_arguments)]
    fn add_tcp_flow(
        &mut self,
        name: String,
        (src, src_addr): (u32, Addr),
        (dst, dst_addr): (u32, Addr),
        start: SimTime,
        stop: Option<SimTime>,
        size: Option<u64>,
        tcp: &TcpSpec,
        traced: bool,
    ) -> Port {
        let flow = self.flows.len() as u32;
        let (tx, rx) = self.reserve_ports();
        let sender = TcpSender::new(TcpSenderConfig {
            addr: src_addr,
            dst_addr,
            port: tx,
            dst_port: rx,
            flow,
            start,
            stop,
            size,
            tcp: tcp.clone(),
        });
        let receiver = TcpReceiver::new(TcpReceiverConfig {
            addr: dst_addr,
            peer_addr: src_addr,
            port: rx,
            peer_port: tx,
            flow,
            tcp: tcp.clone(),
        });
        self.eps.push(EndpointSlot {
            node: src,
            ep: AnyEndpoint::TcpSender(Box::new(sender)),
            timer_at: None,
        });
        self.eps.push(EndpointSlot {
            node: dst,
            ep: AnyEndpoint::TcpReceiver(Box::new(receiver)),
            timer_at: None,
        });
        self.flows.push(FlowRecord {
            name,
            kind: if size.is_some() {
                "tcp_transfer"
            } else {
                "tcp_bulk"
            },
            src,
            dst,
            start,
            size,
            sender: tx,
            receiver: rx,
            traced,
        });
        tx
    }

    #[inline]
    fn schedule(&mut self, time: SimTime, ev: Ev) {
        self.seq += 1;
        self.heap.push(Entry {
            time,
            seq: self.seq,
            ev,
        });
    }

    fn reschedule_endpoint(&mut self, port: Port) {
        let slot = &mut self.eps[port as usize];
        if let Some(t) = slot.ep.poll_timeout() {
            let t = t.max(self.now);
            if slot.timer_at.is_none_or(|cur| t < cur) {
                slot.timer_at = Some(t);
                self.schedule(t, Ev::Timer(port));
            }
        }
    }

    fn reschedule_hook(&mut self, node: u32) {
        let Some(h) = &self.hooks[node as usize] else {
            return;
        };
        if let Some(t) = h.poll_timeout() {
            let t = t.max(self.now);
            if self.hook_timer_at[node as usize].is_none_or(|cur| t < cur) {
                self.hook_timer_at[node as usize] = Some(t);
                self.schedule(t, Ev::HookTimer(node));
            }
        }
    }

    /// Call an endpoint (with a packet, or for its timer) and send what it emits.
    fn call_endpoint(&mut self, port: Port, pkt: Option<Packet>) {
        let now = self.now;
        let mut out = std::mem::take(&mut self.out);
        let slot = &mut self.eps[port as usize];
        match pkt {
            Some(p) => slot.ep.as_endpoint().handle_packet(now, p, &mut out),
            None => slot.ep.as_endpoint().handle_timeout(now, &mut out),
        }
        let node = slot.node;
        self.reschedule_endpoint(port);
        for p in out.drain(..) {
            self.cons.created += 1;
            if p.is_data() {
                self.data_packets_sent += 1;
            }
            self.at_node(node, p, None);
        }
        self.out = out;
    }

    /// A packet is at `node`: through the hook if any, then routing or local delivery.
    fn at_node(&mut self, node: u32, pkt: Packet, arrived_on: Option<u32>) {
        if self.hooks[node as usize].is_none() {
            self.route(node, pkt, arrived_on);
            return;
        }
        let mut hook_out = std::mem::take(&mut self.hook_out);
        if let Some(h) = self.hooks[node as usize].as_mut() {
            h.on_packet(self.now, pkt, arrived_on, &mut hook_out);
        }
        self.after_hook(node, arrived_on, &mut hook_out);
        self.hook_out = hook_out;
    }

    fn after_hook(&mut self, node: u32, arrived_on: Option<u32>, hook_out: &mut HookOutput) {
        self.cons.created += hook_out.injected;
        self.cons.dropped += hook_out.dropped;
        // Packets a hook received itself (a split-connection relay) end their life delivered.
        self.cons.delivered += hook_out.consumed;
        hook_out.consumed = 0;
        if hook_out.dropped > 0 {
            if let Some(i) = arrived_on {
                let c = self.net.ifaces[i as usize].in_chan;
                self.net.chans[c as usize].stats.drops_hook += hook_out.dropped;
            }
        }
        hook_out.injected = 0;
        hook_out.dropped = 0;
        let mut pkts = std::mem::take(&mut hook_out.packets);
        for p in pkts.drain(..) {
            self.route(node, p, arrived_on);
        }
        hook_out.packets = pkts;
        self.reschedule_hook(node);
    }

    fn drop_packet(&mut self, arrived_on: Option<u32>, reason: DropReason) {
        self.cons.dropped += 1;
        if let Some(i) = arrived_on {
            let c = self.net.ifaces[i as usize].in_chan;
            self.net.chans[c as usize].stats.count_drop(reason);
        }
    }

    fn route(&mut self, node: u32, pkt: Packet, arrived_on: Option<u32>) {
        let dst = pkt.dst as usize;
        if dst < self.net.ifaces.len() && self.net.ifaces[dst].node == node {
            let port = pkt.dst_port();
            if (port as usize) < self.eps.len() && self.eps[port as usize].node == node {
                self.local.push_back((port, pkt));
            } else {
                self.drop_packet(arrived_on, DropReason::NoRoute);
            }
            return;
        }
        let forwards =
            arrived_on.is_none() || self.net.nodes[node as usize].kind == NodeKind::Router;
        let iface = if forwards && dst < self.net.ifaces.len() {
            self.net.routes[node as usize][dst]
        } else {
            NO_ROUTE
        };
        if iface == NO_ROUTE {
            self.drop_packet(arrived_on, DropReason::NoRoute);
            return;
        }
        let chan = self.net.ifaces[iface as usize].out_chan;
        match self.net.chans[chan as usize].offer(self.now, pkt) {
            Offer::Sent { head_arrives, lost } => {
                if lost {
                    self.cons.dropped += 1;
                }
                if let Some(t) = head_arrives {
                    self.schedule(t, Ev::Arrive(chan));
                }
            }
            Offer::Queued { tx_done } => {
                if let Some(t) = tx_done {
                    self.schedule(t, Ev::TxDone(chan));
                }
            }
            Offer::Dropped(_, reason) => {
                self.cons.dropped += 1;
                self.net.chans[chan as usize].stats.count_drop(reason);
            }
        }
    }

    /// Deliver packets queued for local endpoints (and whatever they send in reply).
    fn pump_local(&mut self) {
        while let Some((port, pkt)) = self.local.pop_front() {
            self.cons.delivered += 1;
            self.call_endpoint(port, Some(pkt));
        }
    }

    fn alive(&self) -> u64 {
        let in_chans: u64 = self.net.chans.iter().map(|c| c.packets_inside()).sum();
        let in_hooks: u64 = self.hooks.iter().flatten().map(|h| h.held() as u64).sum();
        in_chans + in_hooks
    }

    fn spawn_short_flow(&mut self, g: u32) {
        let now = self.now;
        let (name, src, dst, size, tcp, gap, stop) = {
            let gen = &mut self.gens[g as usize];
            let size = gen.arrivals.next_size();
            let gap = gen.arrivals.next_gap();
            gen.spawned += 1;
            (
                format!("{}#{}", gen.name, gen.spawned),
                gen.src,
                gen.dst,
                size,
                gen.tcp.clone(),
                gap,
                gen.stop,
            )
        };
        if let (Some(sa), Some(da)) = (self.net.primary_addr(src), self.net.primary_addr(dst)) {
            let port = self.add_tcp_flow(
                name,
                (src, sa),
                (dst, da),
                now,
                None,
                Some(size),
                &tcp,
                false,
            );
            self.call_endpoint(port, None);
        }
        let next = now + gap;
        if next <= self.end && stop.is_none_or(|s| next < s) {
            self.schedule(next, Ev::Spawn(g));
        }
    }

    fn sample(&mut self) {
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
            let name = format!("{}:{}", c.link, c.direction);
            self.series.push(
                t,
                "link",
                &name,
                "queue_packets",
                c.queue.len_packets() as f64,
            );
            self.series
                .push(t, "link", &name, "queue_bytes", c.queue.len_bytes() as f64);
            let bps = c.stats.bytes_since_sample as f64 * 8.0 / iv.as_secs_f64();
            c.stats.bytes_since_sample = 0;
            self.series.push(t, "link", &name, "throughput_bps", bps);
        }
    }

    /// Run to the end; consumes the simulator.
    pub fn run(mut self) -> Result<RunOutput, Error> {
        let reason = self.run_loop();
        Ok(self.finish(reason))
    }

    /// Run the event loop until the end time, an idle network or a limit.
    pub fn run_loop(&mut self) -> StopReason {
        let wall_start = self.build_started;
        loop {
            if self.events >= self.max_events {
                return StopReason::EventLimit;
            }
            if self.events & 0xffff == 0 {
                if let Some(limit) = self.max_wall {
                    if wall_start.elapsed().as_secs_f64() >= limit {
                        return StopReason::WallLimit;
                    }
                }
            }
            self.peak_heap = self.peak_heap.max(self.heap.len() as u64);
            let Some(e) = self.heap.pop() else {
                return StopReason::Idle;
            };
            if e.time > self.end {
                self.heap.push(e);
                self.now = self.end;
                return StopReason::Duration;
            }
            self.now = e.time;
            self.events += 1;
            match e.ev {
                Ev::TxDone(c) => {
                    let done = self.net.chans[c as usize].on_tx_done(self.now);
                    if done.lost {
                        self.cons.dropped += 1;
                    }
                    if let Some(t) = done.head_arrives {
                        self.schedule(t, Ev::Arrive(c));
                    }
                    if let Some(t) = done.next_tx_done {
                        self.schedule(t, Ev::TxDone(c));
                    }
                }
                Ev::Arrive(c) => {
                    let ch = &mut self.net.chans[c as usize];
                    let (to_node, to_iface) = (ch.to_node, ch.to_iface);
                    if let Some((p, next)) = ch.on_arrive() {
                        if let Some(t) = next {
                            self.schedule(t, Ev::Arrive(c));
                        }
                        self.at_node(to_node, p, Some(to_iface));
                    }
                }
                Ev::Timer(port) => {
                    let slot = &mut self.eps[port as usize];
                    if slot.timer_at != Some(e.time) {
                        continue; // superseded by an earlier entry
                    }
                    slot.timer_at = None;
                    if slot.ep.poll_timeout().is_some_and(|t| t <= self.now) {
                        self.call_endpoint(port, None);
                    } else {
                        self.reschedule_endpoint(port);
                    }
                }
                Ev::HookTimer(node) => {
                    if self.hook_timer_at[node as usize] != Some(e.time) {
                        continue;
                    }
                    self.hook_timer_at[node as usize] = None;
                    let mut hook_out = std::mem::take(&mut self.hook_out);
                    if let Some(h) = self.hooks[node as usize].as_mut() {
                        h.on_timeout(self.now, &mut hook_out);
                    }
                    self.after_hook(node, None, &mut hook_out);
                    self.hook_out = hook_out;
                }
                Ev::Spawn(g) => self.spawn_short_flow(g),
                Ev::Sample => {
                    self.sample();
                    if self.heap.is_empty() {
                        // Nothing else can ever happen: stop rather than sample an idle network.
                        self.pump_local();
                        return StopReason::Idle;
                    }
                    if let Some(iv) = self.trace_interval {
                        self.schedule(self.now + iv, Ev::Sample);
                    }
                }
            }
            self.pump_local();
            // By conservation, packets alive = created - delivered - dropped (checked against a
            // structural count by the tests); O(1) per event.
            let alive = (self.cons.created).saturating_sub(self.cons.delivered + self.cons.dropped);
            self.peak_alive = self.peak_alive.max(alive);
        }
    }

    /// Packet bookkeeping at this point of the run.
    pub fn conservation(&self) -> Conservation {
        Conservation {
            alive: self.alive(),
            ..self.cons
        }
    }

    pub fn now(&self) -> SimTime {
        self.now
    }

    /// Assemble the result tables.
    pub fn finish(mut self, reason: StopReason) -> RunOutput {
        let now = self.now;
        for c in &mut self.net.chans {
            c.finish(now);
        }
        let alive = self.alive();
        self.peak_alive = self.peak_alive.max(alive);
        let wall = self.build_started.elapsed().as_secs_f64();
        let flows = self.flows_table();
        let links = self.links_table();
        let data_packets = self.net.chans.iter().map(|c| c.stats.data_packets).sum();
        let cons = self.conservation();
        RunOutput {
            summary: RunSummary {
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
            },
            flows,
            links,
            series: std::mem::take(&mut self.series).into_table(),
        }
    }

    fn flows_table(&self) -> Table {
        let n = self.flows.len();
        let mut name = Vec::with_capacity(n);
        let mut kind = Vec::with_capacity(n);
        let mut src = Vec::with_capacity(n);
        let mut dst = Vec::with_capacity(n);
        let mut cols_f: [Vec<f64>; 10] = Default::default();
        let mut cols_u: [Vec<u64>; 9] = Default::default();
        let end = self.now;
        for f in &self.flows {
            let tx = self.eps[f.sender as usize].ep.counters();
            let rx = self.eps[f.receiver as usize].ep.counters();
            name.push(f.name.clone());
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
                match &self.eps[f.sender as usize].ep {
                    AnyEndpoint::TcpSender(s) => s.cwnd() as f64,
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
                done.is_some() as u64,
            ];
            for (c, v) in cols_f.iter_mut().zip(f_vals) {
                c.push(v);
            }
            for (c, v) in cols_u.iter_mut().zip(u_vals) {
                c.push(v);
            }
        }
        let [start_s, size_bytes, goodput_bps, throughput_bps, retransmit_ratio, completion_time_s, rtt_mean_s, rtt_min_s, delivery_time_s, final_cwnd_bytes] =
            cols_f;
        let [bytes_sent, wire_bytes_sent, packets_sent, retransmits, timeouts, fast_retransmits, bytes_delivered, packets_received, completed] =
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
                ("goodput_bps".into(), Column::F64(goodput_bps)),
                ("throughput_bps".into(), Column::F64(throughput_bps)),
                ("completed".into(), Column::U64(completed)),
                ("completion_time_s".into(), Column::F64(completion_time_s)),
                ("delivery_time_s".into(), Column::F64(delivery_time_s)),
                ("rtt_mean_s".into(), Column::F64(rtt_mean_s)),
                ("rtt_min_s".into(), Column::F64(rtt_min_s)),
                ("final_cwnd_bytes".into(), Column::F64(final_cwnd_bytes)),
            ],
        }
    }

    fn links_table(&self) -> Table {
        let mut link = Vec::new();
        let mut direction = Vec::new();
        let mut from = Vec::new();
        let mut to = Vec::new();
        let mut f: [Vec<f64>; 7] = Default::default();
        let mut u: [Vec<u64>; 13] = Default::default();
        let secs = self.now.as_secs_f64();
        for c in &self.net.chans {
            let s = &c.stats;
            link.push(c.link.clone());
            direction.push(c.direction.to_string());
            from.push(self.net.nodes[c.from_node as usize].name.clone());
            to.push(self.net.nodes[c.to_node as usize].name.clone());
            let rate = c.rate.bits_per_sec() as f64;
            let ns = self.now.as_nanos().max(1) as f64;
            for (col, v) in f.iter_mut().zip([
                rate,
                c.delay.as_secs_f64(),
                if secs > 0.0 {
                    s.bytes as f64 * 8.0 / (rate * secs)
                } else {
                    0.0
                },
                if secs > 0.0 {
                    s.bytes as f64 * 8.0 / secs
                } else {
                    0.0
                },
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
                s.queue_max_packets,
                s.queue_max_bytes,
                s.offered,
                s.arrived,
                c.packets_inside(),
            ]) {
                col.push(v);
            }
        }
        let [rate_bps, delay_s, utilization, throughput_bps, queue_mean_packets, queue_mean_bytes, _] =
            f;
        let [packets, bytes, data_packets, drops_queue, drops_loss, drops_hook, drops_mtu, drops_noroute, queue_max_packets, queue_max_bytes, offered, arrived, inside] =
            u;
        let marks = self.net.chans.iter().map(|c| c.queue.marks()).collect();
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
                ("ecn_marks".into(), Column::U64(marks)),
                ("queue_mean_packets".into(), Column::F64(queue_mean_packets)),
                ("queue_max_packets".into(), Column::U64(queue_max_packets)),
                ("queue_mean_bytes".into(), Column::F64(queue_mean_bytes)),
                ("queue_max_bytes".into(), Column::U64(queue_max_bytes)),
                ("packets_offered".into(), Column::U64(offered)),
                ("packets_arrived".into(), Column::U64(arrived)),
                ("packets_inside".into(), Column::U64(inside)),
            ],
        }
    }
}

/// Reject, before the run, a flow whose largest packet exceeds the MTU of a link on its route:
/// every such packet would be dropped and the flow would never finish.
fn check_path_mtu(
    net: &Network,
    name: &str,
    f: &FlowSpec,
    src: u32,
    dst_addr: Addr,
) -> Result<(), Error> {
    let (size, field) = match &f.kind {
        FlowKind::Tcp { tcp, .. } | FlowKind::ShortTcp { tcp, .. } => {
            (tcp.mss + tcp.header_bytes, "mss")
        }
        FlowKind::Cbr { packet_size, .. } | FlowKind::OnOff { packet_size, .. } => {
            (*packet_size, "packet_size")
        }
    };
    let mut node = src;
    for _ in 0..net.nodes.len() {
        if net.ifaces[dst_addr as usize].node == node {
            return Ok(());
        }
        let iface = net.routes[node as usize][dst_addr as usize];
        if iface == NO_ROUTE {
            return Ok(()); // the parser already rejects unconnected flows
        }
        let ch = &net.chans[net.ifaces[iface as usize].out_chan as usize];
        if size > ch.mtu {
            let what = if field == "mss" {
                format!("packets of {size} B (mss + header_bytes)")
            } else {
                format!("packets of {size} B")
            };
            return Err(Error::Scenario(crate::ScenarioError {
                path: format!("flows.{name}.{field}"),
                message: format!(
                    "{what} exceed the MTU ({} B) of link {} on the route; lower it or raise \
                     links.{}.mtu",
                    ch.mtu, ch.link, ch.link
                ),
            }));
        }
        node = ch.to_node;
    }
    Ok(())
}

/// The long-form time series: one row per (time, object, metric).
#[derive(Default)]
struct SeriesBuilder {
    time: Vec<f64>,
    kind: Vec<String>,
    name: Vec<String>,
    metric: Vec<String>,
    value: Vec<f64>,
}

impl SeriesBuilder {
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
