// SPDX-License-Identifier: MIT
//! ATM as a link layer under IP: AAL5 frames cut into cells, ABR virtual circuits whose sources
//! pace cells at the allowed cell rate (ACR), switches with per-class cell queues and the ERICA
//! explicit-rate algorithm, and on-off CBR cell sources (paper 000; `docs/atm.md`).
//!
//! ```text
//!   IP host h1 ─┐                                                     ┌─ IP host d1
//!   (TCP)       │ ATM link l1     ATM switch s1   ATM link l2    s2   │ (TCP)
//!   route says  └─> [VC source] ─cells─> [CBR|ABR queues] ─cells─> ... ─> [reassembly] ─> IP
//!   "leave by an        ACR pacing,        strict priority,                 a lost cell
//!    ATM channel"       FRM every Nrm      ERICA writes ER                  loses its frame
//!                     <──────── BRM: the FRM turned around, ER lowered at each switch ────
//!
//!   CBR sources ─cells at PCR, 84 ms on / 84 ms off─> the same ports, served first
//! ```
//!
//! How it sits under the simulator: a link listed in `[atm] links` keeps its channels in the
//! network (routing is unchanged), but the engine hands a packet routed onto such a channel to
//! the [`AtmFabric`] instead of the channel's queue. The fabric builds one ABR VC per
//! (entry channel, destination address) along the IP route, so the ATM switches are the route's
//! routers and the VC's path is fixed for the run. Inside the fabric only cells move, with their
//! own event queue; the engine keeps one `Atm` event at the fabric's next time (lazily, like an
//! endpoint's timer) and routes on the packets the fabric reassembles at a VC's exit.
//!
//! A cell is 28 bytes ([`cell::Cell`]): its VC, its frame (an index into the fabric's frame
//! records, which hold the one copy of the packet), its index in the frame, its hop and the RM
//! fields. Per cell and hop the work is a queue push and pop, a FIFO push and pop and one or two
//! heap entries.
//!
//! ER-TCP (paper 000's window rule, `cc/er.rs`) gets the ER without any special case in TCP: the
//! fabric writes the latest backward-RM ER of the VC leaving a host into the congestion header
//! of each TCP packet it delivers to that host (`CcHeader::ExplicitRate`), and the TCP sender
//! hands an ACK's header to its controller as it hands XCP's echoed feedback.
//!
//! Files: `cell.rs` AAL5 arithmetic and the cell record; `abr.rs` the TM 4.0 source rules;
//! `switch.rs` an output port, EPD/PPD and ERICA; `fabric.rs` the ports, VCs and CBR sources
//! of a run and its events.

pub mod abr;
pub mod cell;
pub mod fabric;
pub mod plan;
mod report;
pub mod switch;

pub use abr::AbrParams;
pub use cell::{cell_rate, cells_for, Cell, CellKind};
pub use fabric::{AtmFabric, CbrPlan, PortPlan, VcPlan};
pub use switch::{EricaParams, EricaPlusParams, Feedback, PortParams};

use crate::time::{Rate, SimDuration, SimTime};

/// The `[atm]` section of a scenario.
#[derive(Clone, Debug, PartialEq)]
pub struct AtmSpec {
    /// Links whose two directions carry cells.
    pub links: Vec<String>,
    /// ABR parameters of every VC, rates in bits/s of cells (`None`: PCR is the cell rate of
    /// the VC's first link).
    pub pcr: Option<Rate>,
    pub mcr: Rate,
    pub icr: Option<Rate>,
    pub tcr: Rate,
    pub nrm: u32,
    pub mrm: u32,
    pub trm: SimDuration,
    pub rif: f64,
    pub rdf: f64,
    pub cdf: f64,
    pub adtf: SimDuration,
    pub tbe: u64,
    pub source_buffer: u64,
    /// Turned-around RM cells may leave out of rate at TCR (TM 4.0 destination rule 3c).
    pub out_of_rate_brm: bool,
    /// Buffers and feedback of every port.
    pub port: PortParams,
    pub cbr: Vec<CbrSpec>,
}

/// `[atm.cbr.NAME]`: `count` on-off CBR cell sources from one node to another.
#[derive(Clone, Debug, PartialEq)]
pub struct CbrSpec {
    pub name: String,
    pub from: String,
    pub to: String,
    pub rate: Rate,
    pub count: u32,
    pub on: SimDuration,
    pub off: SimDuration,
    pub exponential: bool,
    /// The first on period of every source of the group, as declared.
    pub start: SimTime,
    pub stop: Option<SimTime>,
    /// The window of each source's start offset (`crate::jitter`): source k starts its first on
    /// period at `start + U_k`, U_k uniform in [0, start_jitter), so the sources leave phase.
    /// The group's `start_jitter`, else `[jitter] start`, else 0 (all in phase, no draw).
    pub start_jitter: SimDuration,
}

impl AtmSpec {
    /// TM 4.0's defaults (§5.10.2), DropTail buffers of 1,000 cells per class and ERICA at
    /// U = 0.9 over 1 ms intervals (an assumption: ERICA96 leaves the interval to the switch).
    pub fn tm4_defaults(links: Vec<String>) -> AtmSpec {
        AtmSpec {
            links,
            pcr: None,
            mcr: Rate(0),
            icr: None,
            tcr: Rate(4240),
            nrm: 32,
            mrm: 2,
            trm: SimDuration::from_millis(100),
            rif: 1.0 / 16.0,
            rdf: 1.0 / 16.0,
            cdf: 1.0 / 16.0,
            adtf: SimDuration::from_millis(500),
            tbe: 16_777_215,
            source_buffer: 1_000_000,
            out_of_rate_brm: false,
            port: PortParams {
                cbr_buffer: 1000,
                abr_buffer: 1000,
                feedback: Feedback::Erica(EricaParams {
                    target_utilization: 0.9,
                    interval: SimDuration::from_millis(1),
                    plus: None,
                }),
                epd_threshold: None,
                ppd: false,
            },
            cbr: Vec::new(),
        }
    }

    /// The ABR parameters of a VC whose first link runs at `entry`.
    pub fn abr_params(&self, entry: Rate) -> AbrParams {
        let pcr = cell_rate(self.pcr.unwrap_or(entry));
        AbrParams {
            pcr,
            mcr: cell_rate(self.mcr).min(pcr),
            icr: self.icr.map_or(pcr, cell_rate).min(pcr),
            tcr: cell_rate(self.tcr),
            nrm: self.nrm,
            mrm: self.mrm,
            trm: self.trm,
            rif: self.rif,
            rdf: self.rdf,
            cdf: self.cdf,
            adtf: self.adtf,
            tbe: self.tbe,
            source_buffer: self.source_buffer,
            out_of_rate_brm: self.out_of_rate_brm,
        }
    }
}

#[cfg(test)]
mod feedback_tests;
#[cfg(test)]
mod link_tests;
#[cfg(test)]
mod tests;
