// SPDX-License-Identifier: MIT
//! Reno fast recovery (RFC 5681 §3.2).
//!
//! ```text
//!   3rd dupack:    cwnd = ssthresh + 3·SMSS   (the three segments that left the network)
//!   each dupack:   cwnd += SMSS               (one more left; new data may follow it)
//!   first new ACK: cwnd = ssthresh, recovery ends, even if it left holes (step 6)
//! ```

use super::{is_rfc5681_duplicate, AckView, PartialAck, RecoveryOps};
use crate::cc::Window;
use crate::tcp::config::RecoverGuard;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reno;

impl RecoveryOps for Reno {
    fn uses_sack(&self) -> bool {
        false
    }
    fn is_duplicate(&self, ack: &AckView) -> bool {
        is_rfc5681_duplicate(ack)
    }
    fn cwnd_on_entry(&self, ssthresh: u64, dupthresh: u32, mss: u64) -> u64 {
        // RFC 5681 §3.2 step 3.
        ssthresh + dupthresh as u64 * mss
    }
    fn on_dupack_in_recovery(&self, w: &mut Window, mss: u64) {
        // RFC 5681 §3.2 step 4.
        w.cwnd += mss;
    }
    fn on_partial_ack(&self, _: &mut Window, _: u64, _: u64) -> PartialAck {
        // RFC 5681 §3.2 step 6: the first ACK of new data deflates and ends recovery.
        PartialAck::Ends
    }
    fn cwnd_on_exit(&self, w: &Window, _: u64, _: u64) -> u64 {
        w.ssthresh
    }
    fn default_guard(&self) -> RecoverGuard {
        RecoverGuard::PastRecoveryPoint
    }
}
