// SPDX-License-Identifier: MIT
//! Building a simulator from a validated scenario: the network and its hooks, the flows, and
//! the first events. Short flows a generator starts during the run come from the same flow
//! factory.
//!
//! ```text
//!   Spec ─┬─> Network::build_until  nodes, interfaces, channels, routes (within max_wall)
//!         ├─> check_routing_loops   no explicit route may send packets round a cycle
//!         ├─> build_hooks           one hook per node that declares one
//!         ├─> add_flow, per flow    path MTU check, then
//!         │     tcp                 TcpSender on src ──────────────> TcpReceiver on dst
//!         │     cbr, onoff          CbrSource / OnOffSource on src ─> UdpSink on dst
//!         │     short_tcp           a Generator; each Spawn event adds a finite tcp flow
//!         └─> schedule_first_events each endpoint's first deadline, the first sample
//! ```
//!
//! A flow starts at its declared `start` plus its jitter offset (`crate::jitter`; zero, with no
//! draw, unless `[jitter]` or the flow's `start_jitter` gives a window).
//!
//! Every flow takes the next two ports, sender then receiver, and a port is its endpoint's index,
//! so routing finds a packet's endpoint without a map. Random streams are derived from the seed
//! and a name (`node/<name>/hook`, `flow/<name>/onoff`; a generator's gaps and sizes, see
//! `ShortFlowArrivals`), so adding a flow changes no other component's draws.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::engine::{Ev, EventHeap};
use super::report::{
    Conservation, SeriesBuilder, FLOW_ROW_BYTES, PACKET_BYTES, SERIES_ROW_BYTES, TRANSFER_BYTES,
};
use super::{AnyEndpoint, EndpointSlot, FlowLife, FlowRecord, Generator, Simulator};
use crate::hook::{HookOutput, Impair, NodeHook};
use crate::network::{Network, OutOfTime, NO_ROUTE};
use crate::packet::{Addr, Port};
use crate::rng::RngStream;
use crate::scenario::units::{format_duration, format_mib};
use crate::scenario::{FlowKind, FlowSpec, HookSpec, SctpPathSpec, SizeDist, Spec};
use crate::sctp::{
    LsSender, SctpMode, SctpReceiver, SctpReceiverConfig, SctpSender, SctpSenderConfig,
};
use crate::tcp::{TcpReceiver, TcpReceiverConfig, TcpSender, TcpSenderConfig, TcpSpec};
use crate::time::{Rate, SimDuration, SimTime, MAX_SCENARIO_DURATION};
use crate::traffic::{CbrSource, OnOffSource, ShortFlowArrivals, UdpConfig, UdpSink};
use crate::Error;

/// How many distinct TCP specs [`Simulator::shared_tcp_spec`] looks back over: a scenario's flows
/// come in a few groups declared alike; one whose every flow differs gets a copy per flow.
const SHARED_TCP_SPECS: usize = 8;

/// The two hosts of a flow and the addresses its packets carry (each host's first address).
#[derive(Clone, Copy, Debug)]
pub(super) struct FlowEnds {
    src: u32,
    src_addr: Addr,
    dst: u32,
    dst_addr: Addr,
}

impl FlowEnds {
    fn of(spec: &Spec, net: &Network, f: &FlowSpec) -> Option<FlowEnds> {
        let src = spec.nodes.get_index_of(&f.src)? as u32;
        let dst = spec.nodes.get_index_of(&f.dst)? as u32;
        Some(FlowEnds {
            src,
            src_addr: net.primary_addr(src)?,
            dst,
            dst_addr: net.primary_addr(dst)?,
        })
    }
}

impl Simulator {
    /// Build the network, endpoints, hooks and generators of a validated scenario.
    ///
    /// The errors are what the parser cannot see because it does not compute routes: a
    /// routing loop (`check_routing_loops`) and a flow whose packets exceed the MTU of a link
    /// on its route (`check_path_mtu`); and a build that takes longer than `limits.max_wall`
    /// (the wall-clock limit covers the build as well as the run).
    pub fn build(spec: &Spec) -> Result<Simulator, Error> {
        let mut sim = Simulator::without_flows(spec, Instant::now())?;
        check_routing_loops(spec, &sim.net)?;
        for (name, f) in &spec.flows {
            // The parser guarantees both hosts exist and have a link.
            let Some(ends) = FlowEnds::of(spec, &sim.net, f) else {
                continue;
            };
            check_path_mtu(&sim.net, name, f, ends)?;
            // The declared start plus the flow's jitter offset (`crate::jitter`): from here on
            // this is the flow's start, for its endpoints and in the results (`start_s`).
            let start = f.start + crate::jitter::flow_offset(spec.seed, name, f.start_jitter);
            sim.add_flow(name, f, start, ends);
        }
        // ATM: the cell network of the [atm] links (atm/plan.rs).
        sim.atm = crate::atm::plan::build(spec, &sim.net)?.map(Box::new);
        sim.memory_left = memory_for_the_run(spec, &sim)?;
        sim.max_alive = sim.memory_left / PACKET_BYTES;
        sim.start_packet_trace(spec.trace.packets.as_ref());
        sim.capture = super::capture::Capture::new(&spec.trace, &sim);
        sim.schedule_first_events();
        let events = super::link_events::link_events(spec, &sim.net);
        sim.schedule_link_events(events);
        // Last: it looks at the trace, the capture points and the link events.
        sim.plan_departures();
        Ok(sim)
    }

    /// The scenario's network and hooks, with no endpoint and nothing scheduled.
    fn without_flows(spec: &Spec, build_started: Instant) -> Result<Simulator, Error> {
        let deadline = spec
            .limits
            .max_wall_seconds
            .and_then(|s| build_started.checked_add(Duration::try_from_secs_f64(s).ok()?));
        let net = Network::build_until(spec, deadline)
            .map_err(|e| build_out_of_time(spec.limits.max_wall_seconds.unwrap_or(0.0), e))?;
        let hooks = build_hooks(spec, &net);
        let n_nodes = net.nodes.len();
        Ok(Simulator {
            now: SimTime::ZERO,
            heap: EventHeap::default(),
            net,
            eps: Vec::new(),
            hooks,
            hook_timer_at: vec![None; n_nodes],
            flows: Vec::new(),
            gens: Vec::new(),
            link_events: Default::default(),
            // Only generated short flows are retired. Hooks consume, inject and drop packets
            // without saying whose: with any hook, the packets alive per flow are unknown and no
            // flow is retired (`retire.rs`).
            life: FlowLife::new(
                spec.nodes.values().all(|n| n.hook.is_none())
                    && spec
                        .flows
                        .values()
                        .any(|f| matches!(f.kind, FlowKind::ShortTcp { .. })),
            ),
            out: Vec::new(),
            hook_out: HookOutput::default(),
            local: VecDeque::new(),
            pkts: crate::arena::PacketArena::new(),
            // The parser bounds durations; clamped again so that the end is before SimTime::MAX
            // for any Spec, and an event whose time saturated can never run (time.rs).
            end: SimTime::ZERO + spec.duration.min(MAX_SCENARIO_DURATION),
            max_events: spec.limits.max_events.unwrap_or(u64::MAX),
            max_engine_events: spec.limits.max_events.unwrap_or(u64::MAX),
            inner_stop: None,
            max_wall: spec.limits.max_wall_seconds,
            memory_left: u64::MAX,
            max_alive: u64::MAX,
            ttl: spec.routing.ttl,
            stop: None,
            events: 0,
            peak_heap: 0,
            tcp_specs: Vec::new(),
            cons: Conservation::default(),
            peak_alive: 0,
            data_packets_sent: 0,
            trace_interval: spec.trace.interval.filter(|d| d.as_nanos() > 0),
            series: SeriesBuilder::default(),
            packet_trace: Default::default(),
            capture: Default::default(),
            seed: spec.seed,
            build_started,
            atm: None,
            atm_at: None,
            atm_out: Vec::new(),
        })
    }

    /// The endpoints of one configured flow, or its generator, starting at `start` (the
    /// declared `f.start` plus its jitter offset).
    fn add_flow(&mut self, name: &str, f: &FlowSpec, start: SimTime, ends: FlowEnds) {
        match &f.kind {
            FlowKind::Tcp { size, tcp } => {
                self.add_tcp_flow(name.to_string(), ends, start, f.stop, *size, tcp, true);
            }
            FlowKind::Cbr { rate, packet_size } => {
                let cfg = self.udp_config(ends, start, f.stop, *rate, *packet_size);
                let source = AnyEndpoint::Cbr(Box::new(CbrSource::new(cfg)));
                self.add_udp_flow(name, "cbr", ends, start, source);
            }
            FlowKind::OnOff {
                rate,
                packet_size,
                on,
                off,
                exponential,
            } => {
                // The on/off pattern starts with the first on period at `start`: the jitter
                // shifts its phase and leaves its periods (this stream's draws) as they are.
                let cfg = self.udp_config(ends, start, f.stop, *rate, *packet_size);
                let rng = RngStream::derive(self.seed, &format!("flow/{name}/onoff"));
                let source = AnyEndpoint::OnOff(Box::new(OnOffSource::new(
                    cfg,
                    *on,
                    *off,
                    *exponential,
                    rng,
                )));
                self.add_udp_flow(name, "onoff", ends, start, source);
            }
            FlowKind::ShortTcp {
                arrival_rate,
                sizes,
                tcp,
            } => self.add_generator(name, ends, start, f.stop, *arrival_rate, sizes, tcp),
            FlowKind::Ping {
                interval,
                packet_size,
                dscp,
            } => {
                let (port, dst_port) = self.reserve_ports();
                let probe = crate::ping::PingSource::new(crate::ping::PingConfig {
                    addr: ends.src_addr,
                    dst_addr: ends.dst_addr,
                    port,
                    dst_port,
                    flow: self.flows.len() as u32,
                    start,
                    stop: f.stop,
                    interval: *interval,
                    packet_size: *packet_size,
                    dscp: *dscp,
                });
                self.add_udp_flow(
                    name,
                    "ping",
                    ends,
                    start,
                    AnyEndpoint::Ping(Box::new(probe)),
                );
                if let Some(slot) = self.eps.last_mut() {
                    slot.ep = AnyEndpoint::Echo(Box::default());
                }
            }
            FlowKind::Sctp {
                paths,
                primary,
                sctp,
            } => {
                let paths = sctp_addrs(&self.net, ends, paths);
                self.add_sctp_flow(name, ends, start, f.stop, paths, *primary, sctp);
            }
        }
    }

    /// The events that start the run: each endpoint's first deadline, in port order, then the
    /// first sample. (Generators scheduled their first arrival as they were added.)
    fn schedule_first_events(&mut self) {
        for port in 0..self.eps.len() as u32 {
            self.reschedule_endpoint(port);
        }
        if let Some(iv) = self.trace_interval {
            self.heap.schedule(SimTime::ZERO + iv, Ev::Sample);
        }
        self.schedule_atm();
    }

    /// The configuration of a UDP source sending from `start` until `stop`, on the ports
    /// `add_udp_flow` will use.
    fn udp_config(
        &self,
        ends: FlowEnds,
        start: SimTime,
        stop: Option<SimTime>,
        rate: Rate,
        packet_size: u32,
    ) -> UdpConfig {
        let (port, dst_port) = self.reserve_ports();
        UdpConfig {
            addr: ends.src_addr,
            dst_addr: ends.dst_addr,
            port,
            dst_port,
            flow: self.flows.len() as u32,
            start,
            stop,
            rate,
            packet_size,
        }
    }

    /// The ports the next flow's sender and receiver get.
    fn reserve_ports(&self) -> (Port, Port) {
        let p = self.eps.len() as Port;
        (p, p + 1)
    }

    fn add_udp_flow(
        &mut self,
        name: &str,
        kind: &'static str,
        ends: FlowEnds,
        start: SimTime,
        source: AnyEndpoint,
    ) {
        let flow = self.flows.len() as u32;
        let (tx, rx) = self.reserve_ports();
        self.eps.push(EndpointSlot {
            node: ends.src,
            ep: source,
            timer_at: None,
        });
        self.eps.push(EndpointSlot {
            node: ends.dst,
            ep: AnyEndpoint::UdpSink(Box::new(UdpSink::new(flow))),
            timer_at: None,
        });
        self.life.add_flow();
        self.flows.push(FlowRecord {
            name: name.to_string(),
            kind,
            src: ends.src,
            dst: ends.dst,
            start,
            size: None,
            sender: tx,
            receiver: rx,
            traced: false,
        });
    }

    /// The spec as the endpoints hold it: the `Arc` of an equal spec met among the last
    /// [`SHARED_TCP_SPECS`] distinct ones, or a new one. Flows declared alike (and every transfer
    /// of a generator) share one copy, which stays in the cache whichever flow a packet is for.
    fn shared_tcp_spec(&mut self, tcp: &TcpSpec) -> Arc<TcpSpec> {
        if let Some(s) = self.tcp_specs.iter().rev().find(|s| ***s == *tcp) {
            return Arc::clone(s);
        }
        let s = Arc::new(tcp.clone());
        if self.tcp_specs.len() == SHARED_TCP_SPECS {
            self.tcp_specs.remove(0);
        }
        self.tcp_specs.push(Arc::clone(&s));
        s
    }

    /// A TCP sender on `ends.src` and its receiver on `ends.dst`; returns the sender's port.
    /// `size` is `None` for a bulk transfer; `traced` puts the flow in the time series.
    #[allow(clippy::too_many_arguments)]
    fn add_tcp_flow(
        &mut self,
        name: String,
        ends: FlowEnds,
        start: SimTime,
        stop: Option<SimTime>,
        size: Option<u64>,
        tcp: &TcpSpec,
        traced: bool,
    ) -> Port {
        let flow = self.flows.len() as u32;
        let (tx, rx) = self.reserve_ports();
        let tcp = self.shared_tcp_spec(tcp);
        let mut sender = TcpSender::new(TcpSenderConfig {
            addr: ends.src_addr,
            dst_addr: ends.dst_addr,
            port: tx,
            dst_port: rx,
            flow,
            start,
            stop,
            size,
            tcp: Arc::clone(&tcp),
        });
        if sender.cc_draws() {
            // A stream of the flow's own (BBR's first ProbeBW phase), derived only for a
            // controller that draws: no other component's stream moves.
            sender.give_cc_stream(RngStream::derive(self.seed, &format!("flow/{name}/cc")));
        }
        let receiver = TcpReceiver::new(TcpReceiverConfig {
            addr: ends.dst_addr,
            peer_addr: ends.src_addr,
            port: rx,
            peer_port: tx,
            flow,
            tcp,
        });
        self.eps.push(EndpointSlot {
            node: ends.src,
            ep: AnyEndpoint::TcpSender(Box::new(sender)),
            timer_at: None,
        });
        self.eps.push(EndpointSlot {
            node: ends.dst,
            ep: AnyEndpoint::TcpReceiver(Box::new(receiver)),
            timer_at: None,
        });
        self.life.add_flow();
        self.flows.push(FlowRecord {
            name,
            kind: if size.is_some() {
                "tcp_transfer"
            } else {
                "tcp_bulk"
            },
            src: ends.src,
            dst: ends.dst,
            start,
            size,
            sender: tx,
            receiver: rx,
            traced,
        });
        tx
    }

    /// An SCTP association: its sender on `ends.src`, its receiver on `ends.dst`, over the paths
    /// given as (sender address, receiver address), from `start` until `stop`.
    #[allow(clippy::too_many_arguments)]
    fn add_sctp_flow(
        &mut self,
        name: &str,
        ends: FlowEnds,
        start: SimTime,
        stop: Option<SimTime>,
        paths: Vec<(Addr, Addr)>,
        primary: usize,
        sctp: &crate::sctp::SctpSpec,
    ) {
        let flow = self.flows.len() as u32;
        let (tx, rx) = self.reserve_ports();
        let cfg = SctpSenderConfig {
            flow,
            port: tx,
            dst_port: rx,
            paths,
            primary,
            start,
            stop,
            spec: sctp.clone(),
            rng: RngStream::derive(self.seed, &format!("flow/{name}/sctp")),
        };
        let sender = match sctp.mode {
            SctpMode::Single | SctpMode::Cmt => {
                AnyEndpoint::SctpSender(Box::new(SctpSender::new(cfg)))
            }
            SctpMode::Ls => AnyEndpoint::SctpLsSender(Box::new(LsSender::new(cfg))),
        };
        let receiver = SctpReceiver::new(SctpReceiverConfig {
            flow,
            port: rx,
            peer_port: tx,
            spec: sctp.clone(),
        });
        self.eps.push(EndpointSlot {
            node: ends.src,
            ep: sender,
            timer_at: None,
        });
        self.eps.push(EndpointSlot {
            node: ends.dst,
            ep: AnyEndpoint::SctpReceiver(Box::new(receiver)),
            timer_at: None,
        });
        // Every flow has its slot in `life`, indexed by flow id: without it, the transfers of a
        // later short_tcp generator would index past the end (`retire.rs`).
        self.life.add_flow();
        self.flows.push(FlowRecord {
            name: name.to_string(),
            kind: "sctp",
            src: ends.src,
            dst: ends.dst,
            start,
            size: None,
            sender: tx,
            receiver: rx,
            traced: true,
        });
    }

    /// A generator of Poisson arrivals of finite TCP transfers from `start` until `stop`, and
    /// its first arrival. Its transfers are named `<name>#1`, `<name>#2`, ... and are not
    /// traced. A jittered `start` shifts every arrival by the offset; the gaps and sizes are the
    /// generator's own draws, unchanged.
    #[allow(clippy::too_many_arguments)]
    fn add_generator(
        &mut self,
        name: &str,
        ends: FlowEnds,
        start: SimTime,
        stop: Option<SimTime>,
        arrival_rate: f64,
        sizes: &SizeDist,
        tcp: &TcpSpec,
    ) {
        let mut arrivals = ShortFlowArrivals::new(arrival_rate, sizes.clone(), self.seed, name);
        let first = start + arrivals.next_gap();
        let g = self.gens.len() as u32;
        self.gens.push(Generator {
            name: name.to_string(),
            ends,
            stop,
            arrivals,
            tcp: tcp.clone(),
            spawned: 0,
        });
        self.schedule_spawn(g, first, stop);
    }

    /// A `Spawn` event: generator `g` starts a transfer now and schedules its next arrival.
    pub(super) fn spawn_short_flow(&mut self, g: u32) {
        let now = self.now;
        let generator = &mut self.gens[g as usize];
        let size = generator.arrivals.next_size();
        let gap = generator.arrivals.next_gap();
        generator.spawned += 1;
        let name = format!("{}#{}", generator.name, generator.spawned);
        let (ends, stop, tcp) = (generator.ends, generator.stop, generator.tcp.clone());
        let flow = self.flows.len() as u32;
        let port = self.add_tcp_flow(name, ends, now, None, Some(size), &tcp, false);
        self.call_endpoint(port, None);
        self.schedule_spawn(g, now + gap, stop);
        self.retire_finished(flow);
        self.share_memory_with_transfers();
    }

    /// Give the generated transfers their share of `limits.max_memory` and leave the rest to
    /// the packets alive: each transfer's row (`FLOW_ROW_BYTES`, held to the end of the run)
    /// and, until it is retired, its endpoints (`TRANSFER_BYTES`). A short-flow storm grows
    /// by these, not by packets: counted, it stops at `memory_limit` before the process holds
    /// more than the limit, the result table included. Called where the counts change (a
    /// spawn starts one transfer and retires up to two), so the loop keeps its one comparison
    /// per event; the counts are the run's own, so where it stops does not depend on the
    /// machine.
    pub(super) fn share_memory_with_transfers(&mut self) {
        let transfers = self.life.generated() * FLOW_ROW_BYTES + self.life.held() * TRANSFER_BYTES;
        self.max_alive = self.memory_left.saturating_sub(transfers) / PACKET_BYTES;
    }

    /// Schedule generator `g`'s arrival at `at` if it falls within the run and before the
    /// generator's `stop`.
    fn schedule_spawn(&mut self, g: u32, at: SimTime, stop: Option<SimTime>) {
        if at <= self.end && stop.is_none_or(|s| at < s) {
            self.heap.schedule(at, Ev::Spawn(g));
        }
    }
}

/// The (sender, receiver) addresses of an association's paths: each host's interface on the
/// link the path names (the parser checked that the links touch the hosts).
fn sctp_addrs(net: &Network, ends: FlowEnds, paths: &[SctpPathSpec]) -> Vec<(Addr, Addr)> {
    paths
        .iter()
        .map(|p| {
            (
                net.iface_on_link(ends.src, &p.src_link)
                    .unwrap_or(ends.src_addr),
                net.iface_on_link(ends.dst, &p.dst_link)
                    .unwrap_or(ends.dst_addr),
            )
        })
        .collect()
}

/// One hook per node that declares one, indexed by node.
fn build_hooks(spec: &Spec, net: &Network) -> Vec<Option<Box<dyn NodeHook>>> {
    spec.nodes
        .iter()
        .map(|(name, n)| n.hook.as_ref().map(|h| build_hook(spec, net, name, h)))
        .collect()
}

fn build_hook(spec: &Spec, net: &Network, node: &str, h: &HookSpec) -> Box<dyn NodeHook> {
    let seed = spec.seed;
    match h {
        HookSpec::Stripe { dst, links } => {
            Box::new(crate::striping::Stripe::build(spec, net, dst, links))
        }
        HookSpec::Impair { drop, delay } => Box::new(Impair::new(
            *drop,
            *delay,
            RngStream::derive(seed, &format!("node/{node}/hook")),
        )),
        HookSpec::Spack(cfg) => Box::new(crate::agents::Spack::new(*cfg)),
        HookSpec::Snoop(cfg) => Box::new(crate::agents::Snoop::new(*cfg)),
        HookSpec::Itcp(cfg) => Box::new(crate::agents::Itcp::new((**cfg).clone())),
        HookSpec::Policer(spec) => Box::new(crate::diffserv::Policer::new(spec)),
    }
}

/// Split `limits.max_memory` between the time series and what grows during the run: the rows
/// the series will hold are known before the run (samples × rows per sample, fewer samples if
/// `max_events` ends the run sooner), and a series that would not fit is refused, naming
/// `trace.interval`. What is left, in bytes, bounds the generated transfers and the packets
/// alive (`Simulator::share_memory_with_transfers`).
fn memory_for_the_run(spec: &Spec, sim: &Simulator) -> Result<u64, Error> {
    let budget = spec.limits.max_memory;
    let Some(iv) = sim.trace_interval else {
        return Ok(budget);
    };
    let run_ns = sim.end.as_nanos();
    // A sample at each multiple of the interval up to the end (`on_sample`); each is an event.
    let samples = (run_ns / iv.as_nanos()).min(spec.limits.max_events.unwrap_or(u64::MAX));
    let rows = samples as u128 * sim.series_rows_per_sample() as u128;
    let bytes = rows * SERIES_ROW_BYTES as u128;
    if bytes <= budget as u128 {
        return Ok(budget - bytes as u64);
    }
    // The shortest interval whose series fits: duration × row bytes per sample / budget.
    let per_sample = sim.series_rows_per_sample() as u128 * SERIES_ROW_BYTES as u128;
    let shortest = (run_ns as u128 * per_sample).div_ceil(budget as u128);
    let shortest = SimDuration::from_nanos(shortest.min(u64::MAX as u128) as u64);
    Err(Error::Scenario(crate::ScenarioError {
        path: "trace.interval".into(),
        message: format!(
            "a sample every {} for {} is {samples} samples of {} rows, about {}, more than \
             limits.max_memory ({}); sample every {} or less often, or raise \
             limits.max_memory",
            format_duration(iv),
            format_duration(spec.duration),
            sim.series_rows_per_sample(),
            format_mib(bytes.min(u64::MAX as u128) as u64),
            format_mib(budget),
            format_duration(shortest),
        ),
    }))
}

/// The error of a build that reached `limits.max_wall` while computing routes.
fn build_out_of_time(max_wall_seconds: f64, e: OutOfTime) -> Error {
    Error::Scenario(crate::ScenarioError {
        path: "limits.max_wall".into(),
        message: format!(
            "the network build took longer than the limit ({max_wall_seconds} s) before the \
             first event, with routes to {} of {} addresses computed; raise the limit or use a \
             smaller network",
            e.done, e.total
        ),
    })
}

/// Reject a scenario whose routes (explicit ones over the computed shortest paths) send
/// packets round a cycle: without this they would circle until their TTL runs out, and a
/// flow could never finish. The error names the explicit routes on the cycle.
fn check_routing_loops(spec: &Spec, net: &Network) -> Result<(), Error> {
    let Some(found) = net.routing_loop(spec) else {
        return Ok(());
    };
    let name = |n: u32| net.nodes[n as usize].name.as_str();
    let to = name(found.to);
    // Which explicit route, if any, gives each hop of the cycle.
    let by_route = |at: u32| {
        spec.routing
            .routes
            .iter()
            .position(|r| r.at == name(at) && r.to == to)
    };
    let n = found.nodes.len();
    let hops: Vec<String> = (0..n)
        .map(|i| {
            let (a, b) = (found.nodes[i], found.nodes[(i + 1) % n]);
            match by_route(a) {
                Some(j) => format!("{} -> {} by routes[{j}]", name(a), name(b)),
                None => format!("{} -> {} by the shortest path", name(a), name(b)),
            }
        })
        .collect();
    let mut routes: Vec<usize> = found.nodes.iter().filter_map(|&a| by_route(a)).collect();
    routes.sort_unstable();
    let first = routes.first().copied().unwrap_or(0);
    let listed: Vec<String> = routes.iter().map(|j| format!("routes[{j}]")).collect();
    Err(Error::Scenario(crate::ScenarioError {
        path: format!("routing.routes[{first}]"),
        message: format!(
            "packets to {to:?} would loop for ever: {}; change {} so that packets reach {to:?}",
            hops.join(", "),
            listed.join(" or ")
        ),
    }))
}

/// Reject, before the run, a flow whose largest packet exceeds the MTU of a link on its route:
/// every such packet would be dropped and the flow would never finish.
fn check_path_mtu(net: &Network, name: &str, f: &FlowSpec, ends: FlowEnds) -> Result<(), Error> {
    let (size, field, sum) = match &f.kind {
        FlowKind::Tcp { tcp, .. } | FlowKind::ShortTcp { tcp, .. } => (
            tcp.mss + tcp.segment_header_bytes(),
            "mss",
            Some(if tcp.timestamps {
                "mss + header_bytes + 12 for the timestamp option"
            } else {
                "mss + header_bytes"
            }),
        ),
        FlowKind::Cbr { packet_size, .. }
        | FlowKind::OnOff { packet_size, .. }
        | FlowKind::Ping { packet_size, .. } => (*packet_size, "packet_size", None),
        FlowKind::Sctp { paths, sctp, .. } => {
            // Every path, not only the first addresses'.
            for (src_addr, dst_addr) in sctp_addrs(net, ends, paths) {
                let path = FlowEnds {
                    src_addr,
                    dst_addr,
                    ..ends
                };
                check_route_mtu(net, name, sctp.packet_size, ("packet_size", None), path)?;
            }
            return Ok(());
        }
    };
    check_route_mtu(net, name, size, (field, sum), ends)
}

/// The MTU check of one route: `size`-byte packets from `ends.src` to `ends.dst_addr`; `field`
/// is the key an error names, `sum` what the size is made of, if more than that key.
fn check_route_mtu(
    net: &Network,
    name: &str,
    size: u32,
    (field, sum): (&str, Option<&str>),
    ends: FlowEnds,
) -> Result<(), Error> {
    let mut node = ends.src;
    for _ in 0..net.nodes.len() {
        if net.ifaces[ends.dst_addr as usize].node == node {
            return Ok(());
        }
        let iface = net.route(node, ends.dst_addr);
        if iface == NO_ROUTE {
            return Ok(()); // the parser already rejects unconnected flows
        }
        let ch = &net.chans[net.ifaces[iface as usize].out_chan as usize];
        if size > ch.mtu {
            let what = match sum {
                Some(sum) => format!("packets of {size} B ({sum})"),
                None => format!("packets of {size} B"),
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
