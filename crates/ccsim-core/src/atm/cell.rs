// SPDX-License-Identifier: MIT
//! Cells and AAL5 framing: how many 53-byte cells an IP packet becomes, and the 28-byte record
//! that stands for one cell inside the simulator.
//!
//! ```text
//!   IP packet (L bytes) ─> LLC/SNAP 8 B + L + PAD (0..47) + AAL5 trailer 8 B = 48·n bytes
//!                      ─> n cells of 5 B header + 48 B payload; the n-th carries EOM
//! ```
//!
//! `n = ceil((L + 16) / 48)` (RFC 1483 §3 for the CPCS-PDU and its PAD, §4.1 for the LLC/SNAP
//! prefix; RFC 2684 keeps both). A cell does not copy its packet: the cells of one frame share
//! one frame record (the packet and how many of its cells are still inside the network), and a
//! cell is its VC, its frame, its index and a few bits.

use crate::time::Rate;

/// Bytes of one cell on the wire: a 5-byte header and 48 bytes of payload.
pub const CELL_BYTES: u32 = 53;
/// Payload bytes of one cell.
pub const CELL_PAYLOAD: u32 = 48;
/// The LLC/SNAP prefix of a routed IPv4 packet (RFC 1483 §4.1: AA-AA-03, OUI 00-00-00,
/// EtherType 08-00).
pub const LLC_SNAP_BYTES: u32 = 8;
/// The AAL5 CPCS-PDU trailer: CPCS-UU, CPI, Length, CRC-32 (RFC 1483 §3).
pub const AAL5_TRAILER_BYTES: u32 = 8;
/// Bits of one cell: 53 · 8.
pub const CELL_BITS: f64 = 424.0;

/// Cells of the AAL5 frame that carries an IP packet of `ip_bytes` bytes (IP header included).
pub fn cells_for(ip_bytes: u32) -> u32 {
    (ip_bytes + LLC_SNAP_BYTES + AAL5_TRAILER_BYTES).div_ceil(CELL_PAYLOAD)
}

/// PAD bytes the frame needs so that its trailer ends at the end of the last cell.
pub fn pad_for(ip_bytes: u32) -> u32 {
    cells_for(ip_bytes) * CELL_PAYLOAD - ip_bytes - LLC_SNAP_BYTES - AAL5_TRAILER_BYTES
}

/// Cells per second a link of this rate carries: every bit of the rate is cell bits (the rate
/// of an ATM link in a scenario is its cell payload rate, 149.76 Mbit/s for OC-3c, not the
/// SONET line rate).
pub fn cell_rate(rate: Rate) -> f64 {
    rate.bits_per_sec() as f64 / CELL_BITS
}

/// What a cell is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CellKind {
    /// An AAL5 data cell of an ABR VC (the last one of its frame has `eom`).
    Data,
    /// A forward RM cell (DIR = 0), made by the ABR source every Nrm in-rate cells.
    Frm,
    /// A backward RM cell (DIR = 1), turned around by the destination; it travels the VC's
    /// path backwards and carries feedback for the VC named in `vc`.
    Brm,
    /// A cell of a native CBR source (no frame behind it).
    Cbr,
}

/// One cell in a queue or on a wire: 28 bytes (a packet is 120).
#[derive(Clone, Copy, Debug)]
pub struct Cell {
    /// The VC (or CBR source) it belongs to.
    pub vc: u32,
    /// Data cells: the frame record shared by the frame's cells.
    pub frame: u32,
    /// Data cells: the index of the cell in its frame (0 = BOM).
    pub idx: u16,
    /// The hop of the path the cell is on (index into the VC's forward path, or backward path
    /// for a BRM).
    pub hop: u8,
    pub kind: CellKind,
    /// Data cells: PTI's end-of-message bit (AAL5's last cell).
    pub eom: bool,
    /// Data cells: explicit forward congestion indication, set by a congested queue.
    pub efci: bool,
    /// RM cells: congestion indication and no-increase bits.
    pub ci: bool,
    pub ni: bool,
    /// RM cells: BN = 1 for cells a switch or destination generated (not a turned-around FRM).
    pub bn: bool,
    /// RM cells: explicit rate and current cell rate, cells/s.
    pub er: f32,
    pub ccr: f32,
}

impl Cell {
    pub(crate) fn data(vc: u32, frame: u32, idx: u16, eom: bool) -> Cell {
        Cell {
            vc,
            frame,
            idx,
            hop: 0,
            kind: CellKind::Data,
            eom,
            efci: false,
            ci: false,
            ni: false,
            bn: false,
            er: 0.0,
            ccr: 0.0,
        }
    }

    /// A forward RM cell as TM 4.0 §5.10.3 source rule 3/10 fills it: DIR = 0, BN = 0, CI = NI =
    /// 0, ER = PCR, CCR = ACR.
    pub(crate) fn frm(vc: u32, pcr: f64, acr: f64) -> Cell {
        Cell {
            kind: CellKind::Frm,
            er: pcr as f32,
            ccr: acr as f32,
            ..Cell::data(vc, 0, 0, false)
        }
    }

    pub(crate) fn cbr(vc: u32) -> Cell {
        Cell {
            kind: CellKind::Cbr,
            ..Cell::data(vc, 0, 0, false)
        }
    }

    pub fn is_rm(&self) -> bool {
        matches!(self.kind, CellKind::Frm | CellKind::Brm)
    }

    /// The destination turns an FRM around (TM 4.0 §5.10.4 destination rules): DIR 0 → 1,
    /// BN = 0, CCR and ER kept, CI = 1 if the last data cell carried EFCI.
    pub fn turned_around(self, efci_seen: bool) -> Cell {
        Cell {
            kind: CellKind::Brm,
            hop: 0,
            bn: false,
            ci: self.ci || efci_seen,
            ..self
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aal5_frames_take_the_cells_of_rfc_1483_around_the_48_byte_boundaries() {
        // Check 1 of the reference: 40, 576, 1500, 4352 (no PAD) and 9180 bytes.
        assert_eq!(cells_for(40), 2);
        assert_eq!(cells_for(576), 13);
        assert_eq!(cells_for(1500), 32);
        assert_eq!(cells_for(4352), 91);
        assert_eq!(pad_for(4352), 0);
        assert_eq!(cells_for(9180), 192);
        assert_eq!(cells_for(1500) * CELL_BYTES, 1696);
        assert_eq!(pad_for(1500), 20);
        // One byte over a boundary costs a whole cell.
        assert_eq!(cells_for(4353), 92);
    }

    #[test]
    fn an_oc3c_payload_rate_carries_353_207_and_a_half_cells_a_second() {
        let r = cell_rate(Rate(149_760_000));
        assert!((r - 353_207.5).abs() < 0.1, "{r}");
    }

    #[test]
    fn a_cell_record_is_much_smaller_than_a_packet() {
        assert!(std::mem::size_of::<Cell>() <= 28);
    }

    #[test]
    fn a_turned_around_rm_cell_keeps_its_rates_and_reflects_efci_as_ci() {
        // Check 12.
        let f = Cell::frm(3, 1000.0, 250.0);
        let b = f.turned_around(true);
        assert_eq!(b.kind, CellKind::Brm);
        assert!(!b.bn && b.ci && !b.ni);
        assert_eq!((b.ccr, b.er, b.vc), (250.0, 1000.0, 3));
        assert!(!f.turned_around(false).ci);
    }
}
