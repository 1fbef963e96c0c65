// SPDX-License-Identifier: MIT
//! SACK-based loss recovery (RFC 6675 §5): cwnd = ssthresh for the whole recovery, no
//! inflation; the sender sends while pipe (its estimate of the bytes in the network, from the
//! scoreboard) is below cwnd, choosing segments by NextSeg (tcp/scoreboard.rs). A duplicate ACK
//! is one that SACKs new data (RFC 6675 §2), so its count can run ahead of the cumulative ACK.

use super::{AckView, PartialAck, RecoveryOps};
use crate::cc::Window;
use crate::tcp::config::RecoverGuard;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sack;

impl RecoveryOps for Sack {
    fn uses_sack(&self) -> bool {
        true
    }
    fn is_duplicate(&self, ack: &AckView) -> bool {
        ack.newly_sacked > 0
    }
    fn cwnd_on_entry(&self, ssthresh: u64, _: u32, _: u64) -> u64 {
        // RFC 6675 §5 step (4.2).
        ssthresh
    }
    fn on_dupack_in_recovery(&self, _: &mut Window, _: u64) {}
    fn on_partial_ack(&self, _: &mut Window, _: u64, _: u64) -> PartialAck {
        // RFC 6675 §5 step (C): pipe and NextSeg decide what goes next.
        PartialAck::KeepSending
    }
    fn cwnd_on_exit(&self, w: &Window, _: u64, _: u64) -> u64 {
        w.ssthresh
    }
    fn default_guard(&self) -> RecoverGuard {
        // RFC 6675 §5.1: HighACK ≥ RecoveryPoint. The go-back-N duplicates after an RTO carry
        // no new SACK information, so they are not duplicate ACKs here.
        RecoverGuard::AtRecoveryPoint
    }
}
