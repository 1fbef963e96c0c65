// SPDX-License-Identifier: MIT
//! The cell network: every ATM port, VC and CBR cell source of a run, with its own event queue.
//!
//! The engine hands the fabric each IP packet routed onto an ATM channel ([`AtmFabric::send`])
//! and calls [`AtmFabric::advance`] when the fabric's earliest event is due; the fabric hands
//! back the packets it reassembled at the far ends of their VCs. Between the two, only cells
//! move, and only the fabric sees them:
//!
//! ```text
//!   send(pkt) ─> VC source buffer ─Slot (1/ACR)─> port ─Tx─> FIFO ─Arrive─> next port ... ─┐
//!                                                                                          v
//!   delivered (node, iface, pkt) <── reassembly at the VC's exit ( FRM: turned around ──> BRM
//!                                    travels the reverse ports, ERICA at each switch lowers ER,
//!                                    the source's ACR follows, rules 8-9 )
//! ```
//!
//! Events: `Slot(vc)` a source's next in-rate cell, `Tx(port)` a transmitter freed with cells
//! waiting, `Arrive(port)` the head of a port's propagation FIFO reached the far end, `Cbr(i)`
//! a CBR source's next cell or on/off switch. Equal times run in scheduling order (a sequence
//! number), so a run is deterministic.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};

use super::abr::{AbrParams, AcrState, Feedback as RmFeedback, SlotChoice};
use super::cell::{cell_rate, cells_for, Cell, CellKind};
use super::switch::{CellOffer, Erica, Feedback, Port, PortParams};
use crate::packet::{Addr, CcHeader, Packet, Transport};
use crate::rng::RngStream;
use crate::time::{SimDuration, SimTime};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum FEv {
    Arrive(u32),
    Tx(u32),
    Slot(u32),
    Cbr(u32),
}

/// A heap entry: the time and the scheduling sequence number as one 128-bit key (time in the
/// high half), so that an entry compares in one step; the sequence numbers are unique, so the
/// order is that of (time, seq) and the event never decides it.
#[derive(Clone, Copy)]
struct Entry {
    key: u128,
    ev: FEv,
}

impl Entry {
    fn time(&self) -> SimTime {
        SimTime::from_nanos((self.key >> 64) as u64)
    }
}

impl PartialEq for Entry {
    fn eq(&self, o: &Entry) -> bool {
        self.key == o.key
    }
}

impl Eq for Entry {}

impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Entry) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

impl Ord for Entry {
    /// Reversed: `BinaryHeap` is a max-heap and the earliest entry must come out first.
    fn cmp(&self, o: &Entry) -> Ordering {
        o.key.cmp(&self.key)
    }
}

/// A frame in the network: the packet and how many of its cells are still inside.
struct Frame {
    pkt: Option<Packet>,
    cells_out: u32,
}

/// Reassembly state at a VC's exit (AAL5 CPCS, RFC 1483 §3: a frame with any cell missing fails
/// its length/CRC check; a lost EOM merges the frame with the next).
#[derive(Default)]
struct Reassembly {
    collecting: Option<u32>,
    expect: u16,
    damaged: bool,
    /// EFCI of the last data cell (TM 4.0 destination rule 1).
    efci: bool,
}

impl Reassembly {
    /// A data cell arrives; true when it completes its frame intact (deliver the packet).
    fn accept(&mut self, c: &Cell) -> bool {
        self.efci = c.efci;
        if self.collecting != Some(c.frame) {
            // A frame still being collected lost its EOM: it merges with this one and both
            // fail the check (RFC 1483 §3 length/CRC).
            self.damaged = self.collecting.is_some();
            self.collecting = Some(c.frame);
            self.expect = 0;
        }
        if c.idx != self.expect {
            self.damaged = true;
        }
        self.expect = c.idx.wrapping_add(1);
        if !c.eom {
            return false;
        }
        let intact = !self.damaged;
        self.collecting = None;
        self.damaged = false;
        intact
    }
}

/// Counters of one VC.
#[derive(Clone, Debug, Default)]
pub struct VcStats {
    pub frames_in: u64,
    pub frames_refused: u64,
    pub frames_delivered: u64,
    pub frames_lost: u64,
    pub data_cells_sent: u64,
    pub frm_sent: u64,
    pub brm_sent_in_rate: u64,
    /// Turned-around RM cells of the reverse VC this VC's destination sent out of rate.
    pub brm_sent_out_of_rate: u64,
    pub brm_received: u64,
    /// BRMs that came back with CI set (EFCI seen by the destination, or a switch's mark).
    pub brm_ci_received: u64,
    /// Data cells lost, and RM cells (FRM or BRM) of this VC lost.
    pub cells_lost: u64,
    pub rm_lost: u64,
    pub cells_delivered: u64,
    pub max_source_cells: u64,
}

/// One ABR VC: a source at its entry, a destination at its exit.
pub struct Vc {
    /// `from>to` node names, for results.
    pub name: String,
    pub dst_addr: Addr,
    /// Ports of the forward path, and of the backward path its BRMs take.
    pub path: Vec<u32>,
    pub back: Vec<u32>,
    /// The VC in the other direction between the same two nodes, if any: its source sends this
    /// VC's turned-around BRMs in rate (rule 3b), and this VC's latest ER is stamped on the
    /// packets it delivers (ER-TCP's feedback).
    pub reverse: Option<u32>,
    pub acr: AcrState,
    /// The latest ER a BRM brought back, cells/s.
    pub last_er: f64,
    frames: VecDeque<(u32, u16)>,
    /// Cells of the head frame already sent.
    cursor: u16,
    source_cells: u64,
    /// A turned-around BRM of the reverse VC waiting for an in-rate slot.
    brm_waiting: Option<Cell>,
    /// When the last in-rate cell left, and the live slot event.
    last_sent: Option<SimTime>,
    /// When this VC's source may next send an out-of-rate BRM (one per 1/TCR).
    next_out_of_rate: SimTime,
    slot_at: Option<SimTime>,
    reasm: Reassembly,
    pub stats: VcStats,
}

impl Vc {
    /// Cells waiting in the source buffer.
    pub fn source_cells(&self) -> u64 {
        self.source_cells
    }
}

/// A native on-off CBR cell source (paper 000's background), at CBR priority.
pub struct CbrSource {
    pub name: String,
    pub path: Vec<u32>,
    /// Cells per second while on.
    pub rate: f64,
    /// When its first on period begins: the group's `start` plus this source's jitter offset.
    pub start: SimTime,
    on: SimDuration,
    off: SimDuration,
    exponential: bool,
    rng: RngStream,
    stop: Option<SimTime>,
    is_on: bool,
    phase_start: SimTime,
    phase_end: SimTime,
    cells_in_phase: u64,
    pub sent: u64,
    pub delivered: u64,
    pub lost: u64,
}

/// What a CBR source looks like before the run.
#[derive(Clone, Debug)]
pub struct CbrPlan {
    pub name: String,
    pub path: Vec<u32>,
    pub rate: f64,
    pub on: SimDuration,
    pub off: SimDuration,
    pub exponential: bool,
    pub start: SimTime,
    pub stop: Option<SimTime>,
    pub rng: RngStream,
}

/// What a VC looks like before the run.
#[derive(Clone, Debug)]
pub struct VcPlan {
    pub name: String,
    pub dst_addr: Addr,
    pub path: Vec<u32>,
    pub back: Vec<u32>,
    pub reverse: Option<u32>,
    pub abr: AbrParams,
    /// Fixed round-trip time (propagation of the path and back), for ICR ≤ TBE/FRTT.
    pub frtt: SimDuration,
}

/// What a port looks like before the run.
#[derive(Clone, Debug)]
pub struct PortPlan {
    pub chan: u32,
    pub from_node: u32,
    pub to_node: u32,
    pub to_iface: u32,
    pub rate: crate::time::Rate,
    pub delay: SimDuration,
    /// A switch port gives feedback; a host's interface does not.
    pub switch: bool,
}

pub struct AtmFabric {
    heap: BinaryHeap<Entry>,
    seq: u64,
    /// The root of the heap is the event being handled: the next `schedule` overwrites it
    /// (one sift instead of a pop and a push; most events schedule exactly one successor).
    root_spent: bool,
    pub ports: Vec<Port>,
    /// Per channel: its port, or `u32::MAX`.
    port_of_chan: Vec<u32>,
    /// Per port: the VCs entering there, by destination address.
    entries: Vec<Vec<(Addr, u32)>>,
    pub vcs: Vec<Vc>,
    pub cbr: Vec<CbrSource>,
    frames: Vec<Frame>,
    free_frames: Vec<u32>,
    /// Packets inside (in source buffers or as cells), and lost since the engine last looked.
    packets_inside: u64,
    packets_lost: u64,
    /// Events handled.
    pub events: u64,
    pub cell_hops: u64,
}

const NONE: u32 = u32::MAX;

/// What [`AtmFabric::advance`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Advanced {
    /// The time of the last event run (the `now` given if none).
    pub last: SimTime,
    /// The budget ran out with events still due by `limit`.
    pub cut_short: bool,
}

impl AtmFabric {
    pub fn new(
        n_chans: usize,
        ports: Vec<PortPlan>,
        params: PortParams,
        vcs: Vec<VcPlan>,
        cbr: Vec<CbrPlan>,
    ) -> AtmFabric {
        let n_ids = vcs.len().max(cbr.len());
        let mut port_of_chan = vec![NONE; n_chans];
        let mut built = Vec::with_capacity(ports.len());
        for (i, p) in ports.iter().enumerate() {
            port_of_chan[p.chan as usize] = i as u32;
            let erica = match params.feedback {
                Feedback::Erica(e) if p.switch => {
                    Some(Erica::new(e, cell_rate(p.rate), n_ids, SimTime::ZERO))
                }
                _ => None,
            };
            let mut pp = params;
            if !p.switch {
                // A host marks nothing: EFCI is a switch's signal.
                pp.feedback = Feedback::None;
            }
            built.push(Port::new(
                p.chan,
                p.from_node,
                p.to_node,
                p.to_iface,
                p.rate,
                p.delay,
                pp,
                erica,
                n_ids,
            ));
        }
        let mut entries = vec![Vec::new(); built.len()];
        let vcs: Vec<Vc> = vcs
            .into_iter()
            .enumerate()
            .map(|(i, v)| {
                if let Some(&first) = v.path.first() {
                    entries[first as usize].push((v.dst_addr, i as u32));
                }
                let icr = v.abr.icr_for(v.frtt);
                Vc {
                    name: v.name,
                    dst_addr: v.dst_addr,
                    path: v.path,
                    back: v.back,
                    reverse: v.reverse,
                    acr: AcrState::new(v.abr, icr),
                    last_er: v.abr.pcr,
                    frames: VecDeque::new(),
                    cursor: 0,
                    source_cells: 0,
                    brm_waiting: None,
                    last_sent: None,
                    next_out_of_rate: SimTime::ZERO,
                    slot_at: None,
                    reasm: Reassembly::default(),
                    stats: VcStats::default(),
                }
            })
            .collect();
        let mut fabric = AtmFabric {
            heap: BinaryHeap::new(),
            seq: 0,
            root_spent: false,
            ports: built,
            port_of_chan,
            entries,
            vcs,
            cbr: Vec::new(),
            frames: Vec::new(),
            free_frames: Vec::new(),
            packets_inside: 0,
            packets_lost: 0,
            events: 0,
            cell_hops: 0,
        };
        for (i, c) in cbr.into_iter().enumerate() {
            let start = c.start;
            let mut s = CbrSource {
                name: c.name,
                path: c.path,
                rate: c.rate,
                start,
                on: c.on,
                off: c.off,
                exponential: c.exponential,
                rng: c.rng,
                stop: c.stop,
                is_on: true,
                phase_start: start,
                phase_end: start,
                cells_in_phase: 0,
                sent: 0,
                delivered: 0,
                lost: 0,
            };
            let d = s.period(true);
            s.phase_end = start + d;
            fabric.cbr.push(s);
            fabric.schedule(start, FEv::Cbr(i as u32));
        }
        fabric
    }

    #[inline]
    fn schedule(&mut self, t: SimTime, ev: FEv) {
        self.seq += 1;
        let e = Entry {
            key: ((t.as_nanos() as u128) << 64) | self.seq as u128,
            ev,
        };
        if std::mem::take(&mut self.root_spent) {
            if let Some(mut root) = self.heap.peek_mut() {
                *root = e; // sifted down as `root` drops
                return;
            }
        }
        self.heap.push(e);
    }

    /// Whether packets routed onto channel `chan` become cells.
    #[inline]
    pub fn carries(&self, chan: u32) -> bool {
        self.port_of_chan
            .get(chan as usize)
            .is_some_and(|&p| p != NONE)
    }

    /// The time of the earliest pending event.
    pub fn next_time(&self) -> Option<SimTime> {
        self.heap.peek().map(Entry::time)
    }

    /// Packets inside the fabric (source buffers and cells on their way).
    pub fn packets_inside(&self) -> u64 {
        self.packets_inside
    }

    /// Packets lost (a frame with a lost cell, or refused by a full source buffer) since the
    /// last call.
    pub fn take_lost(&mut self) -> u64 {
        std::mem::take(&mut self.packets_lost)
    }

    /// Cells queued or on the wire anywhere.
    pub fn cells_inside(&self) -> u64 {
        self.ports.iter().map(|p| p.cells_inside()).sum()
    }

    /// An IP packet is routed onto ATM channel `chan`: it joins the source buffer of its VC as
    /// an AAL5 frame. Returns false (the packet lost) when no VC leads to its destination from
    /// here or the source buffer is full.
    pub fn send(&mut self, now: SimTime, chan: u32, pkt: Packet) -> bool {
        let port = self.port_of_chan[chan as usize] as usize;
        let Some(&(_, v)) = self.entries[port].iter().find(|(a, _)| *a == pkt.dst) else {
            return false;
        };
        let n = cells_for(pkt.size);
        let vc = &mut self.vcs[v as usize];
        vc.stats.frames_in += 1;
        if vc.source_cells + n as u64 > vc.acr.p.source_buffer {
            vc.stats.frames_refused += 1;
            return false;
        }
        let frame = match self.free_frames.pop() {
            Some(f) => {
                self.frames[f as usize] = Frame {
                    pkt: Some(pkt),
                    cells_out: n,
                };
                f
            }
            None => {
                self.frames.push(Frame {
                    pkt: Some(pkt),
                    cells_out: n,
                });
                (self.frames.len() - 1) as u32
            }
        };
        self.packets_inside += 1;
        let vc = &mut self.vcs[v as usize];
        vc.frames.push_back((frame, n as u16));
        vc.source_cells += n as u64;
        vc.stats.max_source_cells = vc.stats.max_source_cells.max(vc.source_cells);
        self.wake(now, v);
        true
    }

    /// Make sure VC `v`'s source has a slot scheduled if it has anything to send.
    fn wake(&mut self, now: SimTime, v: u32) {
        let vc = &mut self.vcs[v as usize];
        if vc.slot_at.is_some() {
            return;
        }
        let t = match vc.last_sent {
            Some(last) => (last + vc.acr.gap()).max(now),
            None => now,
        };
        vc.slot_at = Some(t);
        self.schedule(t, FEv::Slot(v));
    }

    /// Run events from `now` on, up to `limit` (the engine's next event: nothing outside can
    /// change the fabric before it), but only to the end of the first instant at which a packet
    /// is reassembled, so that the engine hands it on at that time; packets reassembled at a
    /// VC's exit are pushed on `out` with the node and interface they arrive on.
    ///
    /// At most `budget` events run. Between two engine events the cells of thousands of CBR
    /// sources can make billions of events, so the engine gives a budget and checks its limits
    /// (`[limits]`, a stop request) each time one is spent (`sim/atm.rs`). A call cut short
    /// says so; calling again from its `last` with the same `limit` and `out` goes on exactly
    /// as one call would have, so a budget never changes a result.
    pub fn advance(
        &mut self,
        now: SimTime,
        limit: SimTime,
        out: &mut Vec<(u32, u32, Packet)>,
        budget: u64,
    ) -> Advanced {
        let mut last = now;
        let mut left = budget;
        while let Some(&e) = self.heap.peek() {
            let (t, ev) = (e.time(), e.ev);
            if t > limit || (!out.is_empty() && t > last) {
                break;
            }
            if left == 0 {
                return Advanced {
                    last,
                    cut_short: true,
                };
            }
            left -= 1;
            last = t;
            self.root_spent = true;
            self.events += 1;
            match ev {
                FEv::Arrive(p) => self.on_arrive(t, p, out),
                FEv::Tx(p) => {
                    let (head, next) = self.ports[p as usize].on_tx_done(t);
                    if let Some(h) = head {
                        self.schedule(h, FEv::Arrive(p));
                    }
                    if let Some(n) = next {
                        self.schedule(n, FEv::Tx(p));
                    }
                }
                FEv::Slot(v) => self.on_slot(t, v),
                FEv::Cbr(i) => self.on_cbr(t, i),
            }
            if std::mem::take(&mut self.root_spent) {
                self.heap.pop();
            }
        }
        Advanced {
            last,
            cut_short: false,
        }
    }

    /// The port on channel `chan`, if the channel is ATM.
    pub fn port_of(&self, chan: u32) -> Option<&Port> {
        match self.port_of_chan.get(chan as usize) {
            Some(&p) if p != NONE => Some(&self.ports[p as usize]),
            _ => None,
        }
    }

    /// Channel `chan`'s link goes down or comes back up (`[[events]]`). Down, the cells queued
    /// at its port and on its wire are lost (their frames with them) and every cell offered is
    /// lost until it is up again; the VCs' sources go on pacing, and with no BRMs coming back
    /// their ACR falls by rule 6. Returns the cells lost now.
    pub fn set_link_state(&mut self, now: SimTime, chan: u32, up: bool) -> u64 {
        let Some(&p) = self.port_of_chan.get(chan as usize) else {
            return 0;
        };
        if p == NONE {
            return 0;
        }
        let port = &mut self.ports[p as usize];
        if up {
            port.down = false;
            return 0;
        }
        if port.down {
            return 0;
        }
        let mut lost = Vec::new();
        port.go_down(now, &mut lost);
        for c in &lost {
            self.cell_lost(c);
        }
        lost.len() as u64
    }

    /// Offer a cell to a port and schedule what that needs; a dropped cell is accounted.
    #[inline]
    fn offer_cell(&mut self, now: SimTime, port: u32, c: Cell) {
        match self.ports[port as usize].offer(now, c) {
            CellOffer::Sent(Some(h)) => self.schedule(h, FEv::Arrive(port)),
            CellOffer::Queued(Some(t)) => self.schedule(t, FEv::Tx(port)),
            CellOffer::Sent(None) | CellOffer::Queued(None) => {}
            CellOffer::Dropped(c) => self.cell_lost(&c),
        }
    }

    fn cell_lost(&mut self, c: &Cell) {
        match c.kind {
            CellKind::Cbr => self.cbr[c.vc as usize].lost += 1,
            CellKind::Data => {
                let before = self.packets_lost;
                self.cell_done(c.frame);
                let s = &mut self.vcs[c.vc as usize].stats;
                s.cells_lost += 1;
                // The frame's last cell still inside was lost: the frame is.
                s.frames_lost += self.packets_lost - before;
            }
            CellKind::Frm | CellKind::Brm => self.vcs[c.vc as usize].stats.rm_lost += 1,
        }
    }

    /// One cell of `frame` left the network (delivered or lost): the last one frees the frame,
    /// and a frame nobody delivered is a lost packet.
    fn cell_done(&mut self, frame: u32) {
        let f = &mut self.frames[frame as usize];
        f.cells_out -= 1;
        if f.cells_out == 0 {
            if f.pkt.take().is_some() {
                self.packets_inside -= 1;
                self.packets_lost += 1;
            }
            self.free_frames.push(frame);
        }
    }

    fn on_slot(&mut self, now: SimTime, v: u32) {
        let vc = &mut self.vcs[v as usize];
        if vc.slot_at != Some(now) {
            return; // superseded
        }
        vc.slot_at = None;
        let data_waiting = !vc.frames.is_empty();
        let brm_waiting = vc.brm_waiting.is_some();
        let choice = if vc.acr.out_of_rate() {
            // Rule 11: only out-of-rate FRMs, at TCR.
            if data_waiting || brm_waiting {
                SlotChoice::Frm
            } else {
                SlotChoice::Nothing
            }
        } else {
            vc.acr.choose(now, brm_waiting, data_waiting)
        };
        let (cell, port) = match choice {
            SlotChoice::Nothing => return,
            SlotChoice::Frm => {
                let ccr = vc.acr.on_send_frm(now);
                vc.stats.frm_sent += 1;
                (Cell::frm(v, vc.acr.p.pcr, ccr), vc.path[0])
            }
            SlotChoice::Brm => {
                let Some(b) = vc.brm_waiting.take() else {
                    return;
                };
                vc.acr.on_send_other(true);
                vc.stats.brm_sent_in_rate += 1;
                let back0 = self.vcs[b.vc as usize].back[0];
                (b, back0)
            }
            SlotChoice::Data => {
                let (frame, n) = vc.frames[0];
                let idx = vc.cursor;
                let eom = idx + 1 == n;
                if eom {
                    vc.frames.pop_front();
                    vc.cursor = 0;
                } else {
                    vc.cursor += 1;
                }
                vc.source_cells -= 1;
                vc.acr.on_send_other(false);
                vc.stats.data_cells_sent += 1;
                (Cell::data(v, frame, idx, eom), vc.path[0])
            }
        };
        let vc = &mut self.vcs[v as usize];
        vc.last_sent = Some(now);
        let more = !vc.frames.is_empty() || vc.brm_waiting.is_some();
        if more {
            let t = now + vc.acr.gap();
            vc.slot_at = Some(t);
            self.schedule(t, FEv::Slot(v));
        }
        self.offer_cell(now, port, cell);
    }

    fn on_arrive(&mut self, now: SimTime, p: u32, out: &mut Vec<(u32, u32, Packet)>) {
        let Some((mut c, next)) = self.ports[p as usize].on_arrive(now) else {
            return;
        };
        self.cell_hops += 1;
        if let Some(t) = next {
            self.schedule(t, FEv::Arrive(p));
        }
        let hop = c.hop as usize + 1;
        match c.kind {
            CellKind::Cbr => {
                let path = &self.cbr[c.vc as usize].path;
                if hop < path.len() {
                    let next_port = path[hop];
                    c.hop = hop as u8;
                    self.offer_cell(now, next_port, c);
                } else {
                    self.cbr[c.vc as usize].delivered += 1;
                }
            }
            CellKind::Data | CellKind::Frm => {
                let vc = &self.vcs[c.vc as usize];
                if hop < vc.path.len() {
                    let next_port = vc.path[hop];
                    c.hop = hop as u8;
                    self.offer_cell(now, next_port, c);
                } else if c.kind == CellKind::Frm {
                    self.turn_around(now, c);
                } else {
                    self.reassemble(c, out);
                }
            }
            CellKind::Brm => {
                let v = c.vc as usize;
                let n = self.vcs[v].back.len();
                if hop < n {
                    // At the switch whose forward port for this VC is path[n - hop].
                    let fwd = self.vcs[v].path[n - hop];
                    let mcr = self.vcs[v].acr.p.mcr;
                    self.ports[fwd as usize].write_er(now, &mut c, mcr);
                    let next_port = self.vcs[v].back[hop];
                    c.hop = hop as u8;
                    self.offer_cell(now, next_port, c);
                } else {
                    self.at_source(now, c);
                }
            }
        }
    }

    /// An FRM reached its VC's exit: turn it around (TM 4.0 destination rules). The reverse VC's
    /// source sends it in rate (rule 3b); without one it leaves at once.
    fn turn_around(&mut self, now: SimTime, c: Cell) {
        let v = c.vc as usize;
        let b = c.turned_around(self.vcs[v].reasm.efci);
        match self.vcs[v].reverse {
            Some(r) if self.vcs[r as usize].path.first() == self.vcs[v].back.first() => {
                let rv = &mut self.vcs[r as usize];
                // Destination rule 3c (TM 4.0 §5.10.5): rather than wait for the reverse
                // source's next in-rate slot, the cell may leave out of rate (CLP = 1), at
                // most one per 1/TCR. It replaces one still waiting in rate.
                let next_in_rate = rv.slot_at.unwrap_or_else(|| {
                    rv.last_sent
                        .map_or(now, |last| (last + rv.acr.gap()).max(now))
                });
                let would_wait = next_in_rate > now;
                if rv.acr.p.out_of_rate_brm && would_wait && now >= rv.next_out_of_rate {
                    rv.brm_waiting = None;
                    rv.next_out_of_rate = now + tcr_period(rv.acr.p.tcr);
                    rv.stats.brm_sent_out_of_rate += 1;
                    let port = self.vcs[v].back[0];
                    self.offer_cell(now, port, b);
                    return;
                }
                // A newer FRM replaces one not yet turned around (§5.10.4 rule 3).
                rv.brm_waiting = Some(b);
                self.wake(now, r);
            }
            _ => {
                let port = self.vcs[v].back[0];
                self.offer_cell(now, port, b);
            }
        }
    }

    /// A BRM is back at its source: rules 8 and 9.
    fn at_source(&mut self, now: SimTime, c: Cell) {
        let vc = &mut self.vcs[c.vc as usize];
        vc.stats.brm_received += 1;
        vc.stats.brm_ci_received += c.ci as u64;
        vc.last_er = c.er as f64;
        let before = vc.acr.gap();
        vc.acr.on_brm(RmFeedback {
            ci: c.ci,
            ni: c.ni,
            er: c.er as f64,
            bn: c.bn,
        });
        // A higher rate brings the next slot forward (the slot was planned at the old rate).
        if vc.acr.gap() < before {
            if let (Some(at), Some(last)) = (vc.slot_at, vc.last_sent) {
                let sooner = (last + vc.acr.gap()).max(now);
                if sooner < at {
                    vc.slot_at = Some(sooner);
                    let v = c.vc;
                    self.schedule(sooner, FEv::Slot(v));
                }
            }
        }
    }

    /// A data cell reached its VC's exit.
    fn reassemble(&mut self, c: Cell, out: &mut Vec<(u32, u32, Packet)>) {
        let v = c.vc as usize;
        let exit = *self.vcs[v].path.last().expect("a VC has a path") as usize;
        let mut delivered = None;
        if self.vcs[v].reasm.accept(&c) {
            delivered = self.frames[c.frame as usize].pkt.take();
        }
        self.vcs[v].stats.cells_delivered += 1;
        if let Some(mut pkt) = delivered {
            self.packets_inside -= 1;
            self.vcs[v].stats.frames_delivered += 1;
            // ER-TCP's feedback: the latest ER of the VC going the other way (whose source is
            // this exit's node) rides up on the packet, where the transport hands it to its
            // controller as it would an echoed congestion header.
            if let Some(rev) = self.vcs[v].reverse {
                if let (Transport::Tcp(h), er) =
                    (&mut pkt.transport, self.vcs[rev as usize].last_er)
                {
                    // A receiver may echo the header of the data it acknowledges; the ATM
                    // layer owns this variant and always writes its own, fresh value.
                    if matches!(h.cc, CcHeader::None | CcHeader::ExplicitRate { .. }) {
                        h.cc = CcHeader::ExplicitRate {
                            cells_per_s: er as f32,
                        };
                    }
                }
            }
            let port = &self.ports[exit];
            out.push((port.to_node, port.to_iface, pkt));
        }
        let lost_before = self.packets_lost;
        self.cell_done(c.frame);
        if self.packets_lost > lost_before {
            self.vcs[v].stats.frames_lost += self.packets_lost - lost_before;
        }
    }

    fn on_cbr(&mut self, now: SimTime, i: u32) {
        let s = &mut self.cbr[i as usize];
        if s.stop.is_some_and(|t| now >= t) {
            return;
        }
        while now >= s.phase_end {
            s.is_on = !s.is_on;
            s.phase_start = s.phase_end;
            s.cells_in_phase = 0;
            let d = s.period(s.is_on);
            s.phase_end = s.phase_start + d;
        }
        if !s.is_on {
            let t = s.phase_end;
            self.schedule(t, FEv::Cbr(i));
            return;
        }
        // Cell k of an on period leaves at phase_start + k/rate (exact, no drift).
        let due = s.phase_start
            + SimDuration::from_nanos((s.cells_in_phase as f64 * 1e9 / s.rate).ceil() as u64);
        if due <= now {
            s.cells_in_phase += 1;
            s.sent += 1;
            let port = s.path[0];
            let next = s.phase_start
                + SimDuration::from_nanos((s.cells_in_phase as f64 * 1e9 / s.rate).ceil() as u64);
            let t = next.min(s.phase_end);
            self.schedule(t, FEv::Cbr(i));
            self.offer_cell(now, port, Cell::cbr(i));
        } else {
            let t = due.min(s.phase_end);
            self.schedule(t, FEv::Cbr(i));
        }
    }
}

/// One period of TCR, the out-of-rate cell rate (cells/s).
fn tcr_period(tcr: f64) -> SimDuration {
    SimDuration::from_nanos((1e9 / tcr.max(1e-3)).ceil() as u64)
}

impl CbrSource {
    fn period(&mut self, on: bool) -> SimDuration {
        let mean = if on { self.on } else { self.off };
        if self.exponential {
            SimDuration::from_secs_f64(self.rng.exponential(mean.as_secs_f64()))
        } else {
            mean
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Frames 0, 1, 2 of 3 cells each, less the cells in `lost` (frame, index); returns the
    /// frames delivered.
    fn delivered(lost: &[(u32, u16)]) -> Vec<u32> {
        let mut r = Reassembly::default();
        let mut out = Vec::new();
        for f in 0..3 {
            for i in 0..3u16 {
                if lost.contains(&(f, i)) {
                    continue;
                }
                if r.accept(&Cell::data(0, f, i, i == 2)) {
                    out.push(f);
                }
            }
        }
        out
    }

    #[test]
    fn a_lost_cell_loses_exactly_its_frame_and_a_lost_eom_also_the_next() {
        // Check 3.
        assert_eq!(delivered(&[]), vec![0, 1, 2]);
        assert_eq!(delivered(&[(1, 0)]), vec![0, 2], "BOM lost");
        assert_eq!(delivered(&[(1, 1)]), vec![0, 2], "a middle cell lost");
        assert_eq!(
            delivered(&[(0, 2)]),
            vec![2],
            "EOM lost: frames 0 and 1 merge"
        );
        assert_eq!(
            delivered(&[(0, 2), (1, 2)]),
            vec![],
            "two EOMs: all three merge"
        );
    }
}
