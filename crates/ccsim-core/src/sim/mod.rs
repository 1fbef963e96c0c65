// SPDX-License-Identifier: MIT
//! The simulator: a network, the endpoints and hooks on its nodes, and the event loop that moves
//! packets between them.
//!
//! ```text
//!   Spec ──build──> Simulator ──run_loop──> StopReason ──finish──> RunOutput
//!          build.rs     │        engine.rs                report.rs   (flows, links, series)
//!                       │
//!                       ├── heap: pending (time, seq, event), one per busy object, never one per
//!                       │         packet; endpoint deadlines in a calendar apart (timers.rs)
//!                       ├── net: nodes, interfaces, channels, routes (network.rs, link.rs)
//!                       ├── hooks[node], eps[port]: what runs on the nodes
//!                       ├── flows, gens: one record per flow, one generator per short_tcp flow
//!                       └── counters: events, conservation, peaks, time series
//! ```
//!
//! - [`build`](Simulator::build) (`build.rs`) turns a validated [`Spec`](crate::scenario::Spec)
//!   into a ready simulator: the network, one hook per node that has one, two endpoints per
//!   flow, a generator per `short_tcp` flow, and the first events. It rejects a flow whose
//!   packets exceed the MTU of a link on its route, the one scenario error the parser cannot
//!   see.
//! - [`run_loop`](Simulator::run_loop) (`engine.rs`) pops events in `(time, seq)` order and hands
//!   packets from channel to node to hook to endpoint until the end time, an idle network or a
//!   limit.
//! - Each `Spawn` of a short flow also retires finished transfers (`retire.rs`): once nothing
//!   can change a transfer's row, its two endpoints give way to its counters, so a run of a
//!   million short flows holds the state of those in progress, not of all ever started.
//! - [`finish`](Simulator::finish) (`report.rs`) assembles the result tables, and
//!   [`conservation`](Simulator::conservation) checks that no packet was lost track of.
//!
//! [`Simulator::run`] does all three. A caller may also stop a run early from another thread
//! through a [`StopSignal`] (`interrupt.rs`), given with [`Simulator::stop_on`]. Nothing here
//! validates: the engine trusts a `Spec` the
//! parser accepted and must not panic on one.

mod atm;
mod build;
mod capture;
mod engine;
mod interrupt;
mod link_events;
mod report;
pub(crate) use report::CONFIGURED_FLOW_BYTES;
mod retire;
#[cfg(test)]
mod tests;
mod timers;
mod trace;

use std::collections::VecDeque;
use std::time::Instant;

use crate::arena::{PacketArena, PacketId};
use crate::endpoint::{Endpoint, FlowCounters};
use crate::hook::{HookOutput, NodeHook};
use crate::network::Network;
use crate::packet::{Packet, Port};
use crate::results::RunOutput;
use crate::sctp::{LsSender, Path, SctpReceiver, SctpSender};
use crate::tcp::{TcpReceiver, TcpSender, TcpSpec};
use crate::time::{SimDuration, SimTime};
use crate::traffic::{CbrSource, OnOffSource, ShortFlowArrivals, UdpSink};
use crate::Error;

use build::FlowEnds;
use engine::EventHeap;
use report::SeriesBuilder;
use retire::{FlowLife, Retired, NO_COUNTERS};
use trace::PacketTrace;

pub use interrupt::{Progress, StopSignal};
pub use report::Conservation;
/// Rows the packet trace keeps unless `[trace] packets.max_rows` says otherwise.
pub use trace::DEFAULT_MAX_ROWS as DEFAULT_TRACE_ROWS;

/// A network ready to run, and everything it has done so far.
pub struct Simulator {
    /// The simulated clock: the time of the event being handled (the end time once stopped).
    now: SimTime,
    heap: EventHeap,
    net: Network,
    /// Endpoints, indexed by port (a packet's destination port is its endpoint's index).
    eps: Vec<EndpointSlot>,
    /// The hook of each node, if it has one, and the time of its live heap entry.
    hooks: Vec<Option<Box<dyn NodeHook>>>,
    hook_timer_at: Vec<Option<SimTime>>,
    flows: Vec<FlowRecord>,
    gens: Vec<Generator>,
    /// Link state changes (`[[events]]`) and what each channel has down: its link, the
    /// interface it leaves by, the one it arrives on (`link_events.rs`).
    link_events: link_events::LinkStates,
    /// Packets alive per flow, and the finished transfers whose endpoints can go (`retire.rs`).
    life: FlowLife,
    /// Scratch buffers, reused so the hot path does not allocate.
    out: Vec<Packet>,
    hook_out: HookOutput,
    /// Packets for an endpoint on the node they are at, delivered after the current event
    /// (a FIFO instead of a call, so an endpoint's reply never recurses into its peer).
    local: VecDeque<(Port, PacketId)>,
    /// Every packet inside the network (queues, transmitters, propagation FIFOs, `local`);
    /// those places hold handles (`arena.rs`).
    pkts: PacketArena,
    /// The limits: `duration`, `limits.max_events`, `limits.max_wall_seconds`.
    end: SimTime,
    max_events: u64,
    /// The engine's own events allowed: `max_events` less the events of inner loops so far
    /// (the ATM fabric's, which count towards the limit too: `engine.rs`, `inner_events`).
    max_engine_events: u64,
    /// Why an inner loop stopped the run (it set `max_engine_events` to zero), if one did.
    inner_stop: Option<crate::StopReason>,
    max_wall: Option<f64>,
    /// `limits.max_memory` less what the time series will hold: the bytes for what grows while
    /// the run goes on, the generated transfers and the packets alive.
    memory_left: u64,
    /// What `memory_left` leaves for packets once the generated transfers have their share
    /// (`report.rs`, `FLOW_ROW_BYTES`), divided by [`report::PACKET_BYTES`]. More packets alive
    /// stop the run ([`StopReason::MemoryLimit`]).
    ///
    /// [`StopReason::MemoryLimit`]: crate::StopReason::MemoryLimit
    max_alive: u64,
    /// `routing.ttl`: the time to live the sending host's IP layer gives every packet.
    ttl: u8,
    /// A request from outside to stop, read with the wall-clock limit; `None` when nobody can
    /// ask.
    stop: Option<StopSignal>,
    /// What the run summary reports.
    events: u64,
    peak_heap: u64,
    /// The last distinct TCP specs given to endpoints, to share (`build.rs`, `shared_tcp_spec`).
    tcp_specs: Vec<std::sync::Arc<TcpSpec>>,
    cons: Conservation,
    peak_alive: u64,
    data_packets_sent: u64,
    /// The time-series sampling period; `None` when the scenario asks for no series.
    trace_interval: Option<SimDuration>,
    series: SeriesBuilder,
    /// `[trace] packets`: off unless asked for (`trace.rs`).
    packet_trace: PacketTrace,
    /// `[trace] pcap`: off unless asked for and given a folder (`capture.rs`).
    capture: capture::Capture,
    seed: u64,
    /// Wall-clock start, for `limits.max_wall_seconds` and the summary's `wall_seconds`.
    build_started: Instant,
    /// ATM: the cell network under the `[atm]` links, the time of its live `Atm` event, and
    /// the packets it reassembled (`atm.rs`).
    atm: Option<Box<crate::atm::AtmFabric>>,
    atm_at: Option<SimTime>,
    atm_out: Vec<(u32, u32, Packet)>,
}

impl Simulator {
    /// Run to the end; consumes the simulator.
    pub fn run(mut self) -> Result<RunOutput, Error> {
        self.check_capture()?;
        let reason = self.run_loop();
        self.capture.finish()?;
        Ok(self.finish(reason))
    }

    /// Stop the run with [`StopReason::Interrupted`](crate::StopReason::Interrupted) once
    /// `signal` is requested (checked every 65,536 events, and before the first). Replaces any
    /// earlier signal.
    pub fn stop_on(&mut self, signal: StopSignal) {
        signal.set_end(self.end);
        self.stop = Some(signal);
    }

    /// The simulated time: of the event being handled, or where the run stopped.
    pub fn now(&self) -> SimTime {
        self.now
    }
}

impl AnyEndpoint {
    /// Ask for the endpoint's state (a cache hint; `arena.rs`, "Prefetch"): the TCP endpoints,
    /// the only ones a run has by the thousand.
    #[inline]
    fn prefetch(&self) {
        match self {
            AnyEndpoint::TcpSender(b) => crate::arena::prefetch(&**b),
            AnyEndpoint::TcpReceiver(b) => crate::arena::prefetch(&**b),
            _ => {}
        }
    }
}

/// The built-in endpoints, dispatched without a vtable.
enum AnyEndpoint {
    TcpSender(Box<TcpSender>),
    TcpReceiver(Box<TcpReceiver>),
    // Boxed like the TCP endpoints, so that a slot is small (40 B): a run of many short flows
    // keeps a slot per endpoint ever started (`retire.rs`).
    Cbr(Box<CbrSource>),
    OnOff(Box<OnOffSource>),
    UdpSink(Box<UdpSink>),
    Ping(Box<crate::ping::PingSource>),
    Echo(Box<crate::ping::EchoResponder>),
    SctpSender(Box<SctpSender>),
    SctpLsSender(Box<LsSender>),
    SctpReceiver(Box<SctpReceiver>),
    /// A finished transfer's endpoint; its counters are kept by its flow (`retire.rs`).
    Retired(Retired),
}

impl AnyEndpoint {
    fn as_endpoint(&mut self) -> &mut dyn Endpoint {
        match self {
            AnyEndpoint::TcpSender(e) => e.as_mut(),
            AnyEndpoint::TcpReceiver(e) => e.as_mut(),
            AnyEndpoint::Cbr(e) => e.as_mut(),
            AnyEndpoint::OnOff(e) => e.as_mut(),
            AnyEndpoint::UdpSink(e) => e.as_mut(),
            AnyEndpoint::Ping(e) => e.as_mut(),
            AnyEndpoint::Echo(e) => e.as_mut(),
            AnyEndpoint::SctpSender(e) => e.as_mut(),
            AnyEndpoint::SctpLsSender(e) => e.as_mut(),
            AnyEndpoint::SctpReceiver(e) => e.as_mut(),
            AnyEndpoint::Retired(e) => e,
        }
    }
    fn poll_timeout(&self) -> Option<SimTime> {
        match self {
            AnyEndpoint::TcpSender(e) => e.poll_timeout(),
            AnyEndpoint::TcpReceiver(e) => e.poll_timeout(),
            AnyEndpoint::Cbr(e) => e.poll_timeout(),
            AnyEndpoint::OnOff(e) => e.poll_timeout(),
            AnyEndpoint::UdpSink(e) => e.poll_timeout(),
            AnyEndpoint::Ping(e) => e.poll_timeout(),
            AnyEndpoint::Echo(e) => e.poll_timeout(),
            AnyEndpoint::SctpSender(e) => e.poll_timeout(),
            AnyEndpoint::SctpLsSender(e) => e.poll_timeout(),
            AnyEndpoint::SctpReceiver(e) => e.poll_timeout(),
            AnyEndpoint::Retired(e) => e.poll_timeout(),
        }
    }
    fn counters(&self) -> &FlowCounters {
        match self {
            AnyEndpoint::TcpSender(e) => e.counters(),
            AnyEndpoint::TcpReceiver(e) => e.counters(),
            AnyEndpoint::Cbr(e) => e.counters(),
            AnyEndpoint::OnOff(e) => e.counters(),
            AnyEndpoint::UdpSink(e) => e.counters(),
            AnyEndpoint::Ping(e) => e.counters(),
            AnyEndpoint::Echo(e) => e.counters(),
            AnyEndpoint::SctpSender(e) => e.counters(),
            AnyEndpoint::SctpLsSender(e) => e.counters(),
            AnyEndpoint::SctpReceiver(e) => e.counters(),
            AnyEndpoint::Retired(_) => &NO_COUNTERS,
        }
    }
}

impl AnyEndpoint {
    /// An SCTP sender's paths and its primary's index.
    fn sctp_paths(&self) -> Option<(Vec<&Path>, usize)> {
        match self {
            AnyEndpoint::SctpSender(s) => Some((s.paths().iter().collect(), s.primary())),
            AnyEndpoint::SctpLsSender(s) => Some((
                (0..s.path_count()).map(|i| s.path(i)).collect(),
                s.primary(),
            )),
            _ => None,
        }
    }
}

/// An endpoint and where it lives.
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
    ends: FlowEnds,
    stop: Option<SimTime>,
    arrivals: ShortFlowArrivals,
    tcp: TcpSpec,
    spawned: u64,
}
