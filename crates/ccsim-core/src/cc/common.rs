// SPDX-License-Identifier: MIT
//! Pieces the window-based algorithms share: how much one ACK counts, fractional byte growth,
//! round (one-RTT) boundaries found from sequence numbers, and the byte/segment bridge.
//!
//! The published rules are written in segments and "per ACK" with one ACK per segment in mind
//! (RFC 3649 §7, Kelly 2003, RFC 9438 §4.2). The algorithms here keep their state in segments
//! (`f64`), as the papers do, and turn every change into whole bytes through a [`Fraction`], so
//! that growth far below one byte per ACK (SMSS²/cwnd at large windows) is not lost.

use super::AckEvent;
use super::Growth;

/// Congestion-avoidance credit of one ACK, in segments.
///
/// We keep the flow's growth rule rather than pick one per algorithm, so that `growth` means the
/// same for every controller: one unit per ACK for `per_ack` and `rfc5681` (RFC 5681 eq. (3)
/// counts ACKs), and the segments it acknowledges for `abc` (RFC 3465 §2.1 counts bytes; Linux
/// passes the acked segment count to every algorithm, `tcp_cong_avoid_ai(tp, w, acked)`).
pub(crate) fn ack_credit(growth: Growth, ev: &AckEvent) -> f64 {
    match growth {
        Growth::PerAck | Growth::Rfc5681 => 1.0,
        Growth::ByteCounting { .. } => ev.bytes_acked as f64 / ev.mss.max(1) as f64,
    }
}

/// A window in segments.
pub(crate) fn segments(bytes: u64, mss: u64) -> f64 {
    bytes as f64 / mss.max(1) as f64
}

/// A window in segments back to bytes: rounded down, saturating, NaN and negatives to 0 (Rust's
/// float-to-integer `as` saturates).
pub(crate) fn bytes(segments: f64, mss: u64) -> u64 {
    (segments * mss as f64) as u64
}

/// RFC 5681 eq. (4)'s floor: ssthresh is never below two segments (keeps the ACK clock alive).
pub(crate) fn floor_ssthresh(ssthresh: u64, mss: u64) -> u64 {
    ssthresh.max(2 * mss)
}

/// Fractional bytes of growth not yet added to cwnd.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Fraction {
    carry: f64,
}

impl Fraction {
    /// Adds `bytes` of growth (may be fractional) and returns the whole bytes to add now.
    /// Non-finite or non-positive amounts add nothing, so a degenerate input cannot poison cwnd.
    pub(crate) fn take(&mut self, bytes: f64) -> u64 {
        if !(bytes.is_finite() && bytes > 0.0) {
            return 0;
        }
        self.carry += bytes;
        let whole = self.carry.floor();
        self.carry -= whole;
        whole as u64
    }

    pub(crate) fn clear(&mut self) {
        self.carry = 0.0;
    }
}

/// Round boundaries: a round ends when SND.UNA reaches the SND.MAX recorded when it began, i.e.
/// when everything outstanding at its start is acknowledged (Linux `tcp_vegas.c`, `beg_snd_nxt`;
/// Brakmo & Peterson 1995 §III-B time their once-per-RTT decision the same way). No clock is
/// read, so a round is one RTT whatever the RTT is.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Rounds {
    /// SND.MAX when the current round began (None: no round yet, or reset by a loss).
    end: Option<u64>,
}

impl Rounds {
    /// True if this ACK begins a new round: the first ACK after construction or [`Self::reset`],
    /// or the ACK that acknowledges all that was outstanding when the current round began.
    pub(crate) fn starts_round(&mut self, ev: &AckEvent) -> bool {
        match self.end {
            Some(end) if ev.snd_una < end => false,
            _ => {
                // SND.MAX = SND.UNA + FlightSize (AckEvent::flight_size).
                self.end = Some(ev.snd_una.saturating_add(ev.flight_size));
                true
            }
        }
    }

    pub(crate) fn reset(&mut self) {
        self.end = None;
    }
}
