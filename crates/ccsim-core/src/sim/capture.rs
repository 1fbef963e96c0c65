// SPDX-License-Identifier: MIT
//! Capture points (`[trace] pcap`): pcap files of what crossed chosen interfaces, written
//! with `crate::pcap`.
//!
//! ```text
//!            interface of node N on link L          file <dir>/N-L.pcap
//!   N ──out_chan──> departs (transmission starts)  ─┐
//!   N <──in_chan─── arrives (reaches N)            ─┴─> records in time order
//! ```
//!
//! - **What:** a packet leaving over the interface when its transmission starts, even when the
//!   loss model then destroys it (it was on the wire), and a packet arriving over it. Drops
//!   before the wire (queue, MTU, link down) are not on the wire and are not written.
//! - **Which end of TCP:** the endpoint kind of the packet's source port (a hook's packet, such
//!   as a Snoop or I-TCP ACK, takes the kind of the endpoint its source port names).
//! - **Cost:** off, one branch at each point (`Capture::on`); on, a table look-up by channel and
//!   a buffered write with no allocation.
//! - **Errors:** the first I/O error stops the writing and is the run's error, naming the file;
//!   the run stops at its next check (`Capture::failed`), not at its end.
//!
//! Events of one simulated instant are written in the order the engine handles them, so each
//! file is in time order.

use std::fs::File;
use std::path::{Path, PathBuf};

use super::{AnyEndpoint, EndpointSlot, Simulator};
use crate::arena::PacketId;
use crate::packet::{Packet, Transport};
use crate::pcap::{PcapWriter, TcpEnd};
use crate::scenario::spec::TraceSpec;
use crate::{Error, ScenarioError};

const NONE: u32 = u32::MAX;

struct Point {
    path: PathBuf,
    writer: PcapWriter<File>,
}

/// The capture points of a run. `on` is false unless the scenario asks for a capture and the
/// run was given a folder.
#[derive(Default)]
pub(super) struct Capture {
    pub(super) on: bool,
    /// Interfaces asked for, as (file name stem, out channel, in channel).
    wanted: Vec<(String, u32, u32)>,
    snaplen: u32,
    /// By channel: the point that writes what departs on it / arrives over it (`NONE`: none).
    departing: Vec<u32>,
    arriving: Vec<u32>,
    points: Vec<Point>,
    error: Option<String>,
}

impl Capture {
    /// The interfaces `spec` asks for, resolved (the parser checked the names).
    pub(super) fn new(spec: &TraceSpec, sim: &Simulator) -> Capture {
        let net = &sim.net;
        let mut wanted = Vec::new();
        for (node, link) in &spec.pcap {
            let Some(n) = net.nodes.iter().position(|x| &x.name == node) else {
                continue;
            };
            for &i in &net.nodes[n].ifaces {
                let iface = &net.ifaces[i as usize];
                let on = &net.chans[iface.out_chan as usize].link;
                if link.as_ref().is_none_or(|l| l == on)
                    && !wanted.iter().any(|(_, o, _)| *o == iface.out_chan)
                {
                    wanted.push((format!("{node}-{on}"), iface.out_chan, iface.in_chan));
                }
            }
        }
        Capture {
            wanted,
            snaplen: spec.pcap_snaplen,
            ..Capture::default()
        }
    }

    /// True when the scenario asks for capture points.
    pub(super) fn wanted(&self) -> bool {
        !self.wanted.is_empty()
    }

    /// The channels whose departures a capture point asks for (known at the build, before
    /// the files are opened).
    pub(super) fn departing_chans(&self) -> impl Iterator<Item = u32> + '_ {
        self.wanted.iter().map(|&(_, out_chan, _)| out_chan)
    }

    /// Open one file per interface asked for under `dir` (created if missing).
    fn open(&mut self, dir: &Path, chans: usize) -> Result<(), Error> {
        // The folder's error says so: it was "writing the capture file <out>/pcap", a file
        // of a folder's name (campaigns 52 and 53, issue 32).
        std::fs::create_dir_all(dir)
            .map_err(|e| Error::Output(format!("making the folder {}: {e}", dir.display())))?;
        self.departing = vec![NONE; chans];
        self.arriving = vec![NONE; chans];
        self.points.clear();
        for (stem, out_chan, in_chan) in &self.wanted {
            let path = dir.join(format!("{stem}.pcap"));
            let writer = File::create(&path)
                .and_then(|f| PcapWriter::new(f, self.snaplen))
                .map_err(|e| io_error(&path, &e))?;
            let k = self.points.len() as u32;
            self.departing[*out_chan as usize] = k;
            self.arriving[*in_chan as usize] = k;
            self.points.push(Point { path, writer });
        }
        self.on = !self.points.is_empty();
        Ok(())
    }

    fn write(&mut self, point: u32, now: crate::time::SimTime, p: &Packet, end: TcpEnd) {
        let pt = &mut self.points[point as usize];
        if let Err(e) = pt.writer.write(now, p, end) {
            self.error = Some(io_error(&pt.path, &e).to_string());
            self.on = false;
        }
    }

    /// Whether a write has failed: the run then stops at its next check of a stop request,
    /// since its error is all it can return. It went on to its end, an hour of run after a
    /// full disk failed the capture at its first minute (campaign 52, issue 32).
    pub(super) fn failed(&self) -> bool {
        self.error.is_some()
    }

    /// Write out every file; the run's first I/O error, if any.
    pub(super) fn finish(&mut self) -> Result<(), Error> {
        self.on = false;
        for pt in self.points.drain(..) {
            if let Err(e) = pt.writer.finish() {
                self.error
                    .get_or_insert_with(|| io_error(&pt.path, &e).to_string());
            }
        }
        match self.error.take() {
            Some(m) => Err(Error::Output(m)),
            None => Ok(()),
        }
    }
}

/// Which end of a TCP connection sent `p`: the kind of the endpoint its source port names.
fn tcp_end(eps: &[EndpointSlot], p: &Packet) -> TcpEnd {
    let port = match &p.transport {
        Transport::Tcp(h) => h.src_port,
        _ => return TcpEnd::Sender,
    };
    match eps.get(port as usize).map(|s| &s.ep) {
        Some(AnyEndpoint::TcpReceiver(_)) => TcpEnd::Receiver,
        _ => TcpEnd::Sender,
    }
}

fn io_error(path: &Path, e: &std::io::Error) -> Error {
    Error::Output(format!("writing the capture file {}: {e}", path.display()))
}

/// The engine's capture points: each is called only when `capture.on`.
impl Simulator {
    /// Write the pcap files the scenario asks for (`[trace] pcap`) under `dir`, one per
    /// interface, `<node>-<link>.pcap`. Without this, a scenario asking for captures does not
    /// run. Does nothing when the scenario asks for none.
    pub fn capture_to(&mut self, dir: &Path) -> Result<(), Error> {
        if !self.capture.wanted() {
            return Ok(());
        }
        self.capture.open(dir, self.net.chans.len())?;
        for (c, &k) in self.capture.departing.iter().enumerate() {
            if k != NONE {
                // The loss model's victims were on the wire: the capture writes them.
                self.net.chans[c].keep_lost = true;
            }
        }
        Ok(())
    }

    /// The error of a run that asks for captures and was given no folder.
    pub(super) fn check_capture(&self) -> Result<(), Error> {
        if self.capture.wanted() && !self.capture.on {
            return Err(ScenarioError {
                path: "trace.pcap".into(),
                message: "the capture files need a folder: give one (ccsim run --out DIR, \
                          ccsim.run(..., pcap_dir=DIR), or Simulator::capture_to) or remove \
                          trace.pcap"
                    .into(),
            }
            .into());
        }
        Ok(())
    }

    /// A transmission started on `chan` now (the packet is the newest on the wire, or the one
    /// the loss model took and the channel kept).
    #[cold]
    #[inline(never)]
    pub(super) fn capture_departure(&mut self, chan: u32, lost: bool) {
        let k = self.capture.departing[chan as usize];
        if k == NONE {
            return;
        }
        let ch = &self.net.chans[chan as usize];
        let p = if lost {
            ch.lost_for_trace.as_ref()
        } else {
            ch.propagation.back().map(|&(_, id, _)| self.pkts.get(id))
        };
        if let Some(p) = p {
            self.capture.write(k, self.now, p, tcp_end(&self.eps, p));
        }
    }

    /// A packet not in the arena departs over `chan` now: an IP packet an ATM channel takes
    /// into its AAL5 layer (`sim/atm.rs`).
    pub(super) fn capture_departing_packet(&mut self, chan: u32, p: &Packet) {
        let k = self.capture.departing[chan as usize];
        if k != NONE {
            self.capture.write(k, self.now, p, tcp_end(&self.eps, p));
        }
    }

    /// The packet `id` (in the arena) arrived over `chan` at its far node now.
    #[cold]
    #[inline(never)]
    pub(super) fn capture_arrival(&mut self, chan: u32, id: PacketId) {
        let k = self.capture.arriving[chan as usize];
        if k != NONE {
            let p = self.pkts.get(id);
            self.capture.write(k, self.now, p, tcp_end(&self.eps, p));
        }
    }
}
