// SPDX-License-Identifier: MIT
//! NewReno fast recovery (RFC 6582 §3.2): Reno's inflation, but recovery lasts until the
//! recovery point (SND.MAX at the fast retransmit) is acknowledged, and each partial ACK resends
//! the next hole at once.
//!
//! ```text
//!   partial ACK of N bytes: resend SND.UNA's segment; cwnd −= N; if N ≥ SMSS, cwnd += SMSS
//!   full ACK:               cwnd = min(ssthresh, max(FlightSize, SMSS) + SMSS)   (step 3, option 1)
//! ```

use super::{AckView, PartialAck, RecoveryOps, Reno};
use crate::cc::Window;
use crate::tcp::config::RecoverGuard;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NewReno;

/// Everything but the partial and full ACKs is Reno's.
impl RecoveryOps for NewReno {
    fn uses_sack(&self) -> bool {
        Reno.uses_sack()
    }
    fn is_duplicate(&self, ack: &AckView) -> bool {
        Reno.is_duplicate(ack)
    }
    fn cwnd_on_entry(&self, ssthresh: u64, dupthresh: u32, mss: u64) -> u64 {
        Reno.cwnd_on_entry(ssthresh, dupthresh, mss)
    }
    fn on_dupack_in_recovery(&self, w: &mut Window, mss: u64) {
        Reno.on_dupack_in_recovery(w, mss)
    }
    fn on_partial_ack(&self, w: &mut Window, bytes_acked: u64, mss: u64) -> PartialAck {
        // RFC 6582 §3.2 step 3, partial ACK: deflate by the amount acknowledged, add back one
        // SMSS if that was at least one.
        w.cwnd = w.cwnd.saturating_sub(bytes_acked);
        if bytes_acked >= mss {
            w.cwnd += mss;
        }
        w.cwnd = w.cwnd.max(mss);
        PartialAck::ResendFront
    }
    fn cwnd_on_exit(&self, w: &Window, flight: u64, mss: u64) -> u64 {
        // RFC 6582 §3.2 step 3, option (1): no burst after recovery.
        w.ssthresh.min(flight.max(mss) + mss)
    }
    fn default_guard(&self) -> RecoverGuard {
        Reno.default_guard()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_partial_ack_of_less_than_one_segment_deflates_without_adding_one_back() {
        let mut w = Window {
            cwnd: 10_000,
            ssthresh: 5_000,
        };
        assert_eq!(
            NewReno.on_partial_ack(&mut w, 500, 1000),
            PartialAck::ResendFront
        );
        assert_eq!(w.cwnd, 9_500);
        NewReno.on_partial_ack(&mut w, 3000, 1000);
        assert_eq!(w.cwnd, 7_500);
    }
}
