// SPDX-License-Identifier: MIT
//! Loss recovery: what the sender does from a fast retransmit until the ACK of the recovery
//! point. One type per algorithm behind one trait, as ns-3 splits `TcpRecoveryOps` from the
//! congestion controller:
//!
//! ```text
//!                         ┌─ reno.rs     RFC 5681 §3.2: inflate per dupack, the first new ACK ends it
//!   TcpSender ── Recovery ┼─ newreno.rs  RFC 6582: partial ACKs resend the next hole, recovery
//!   (sender.rs)  (this)   │              lasts until the recovery point is acknowledged
//!                         ├─ sack.rs     RFC 6675: SACK scoreboard and pipe, no inflation
//!                         └─ prr.rs      RFC 6937: SACK recovery, but each ACK lets out a share
//!                                        of what it reports delivered (cwnd = pipe + sndcnt)
//! ```
//!
//! The sender owns the state (scoreboard, cwnd, timers, the recovery point) and asks the
//! algorithm the questions on which the RFCs differ: is this ACK a duplicate, where does cwnd
//! start and end, what does a dupack or a partial ACK do, and (PRR only, [`RecoveryOps::prr`])
//! how much each ACK of the recovery lets out. The sender asks that last question only of an
//! algorithm that answers it, so the other three pay one predictable branch per ACK. Loss
//! detection outside recovery, the retransmission timer, ECN and the controller's part
//! (ssthresh) are the same for all four and stay in the sender.

mod newreno;
mod prr;
mod reno;
mod sack;

pub use newreno::NewReno;
pub use prr::{Prr, PrrAck};
pub use reno::Reno;
pub use sack::Sack;

use crate::cc::Window;
use crate::tcp::config::{RecoverGuard, Recovery};

/// What the sender saw in one ACK, for the duplicate-ACK rules.
#[derive(Clone, Copy, Debug)]
pub struct AckView {
    /// Bytes the cumulative ACK newly acknowledged.
    pub bytes_acked: u64,
    /// The ACK number equals SND.UNA as it was before this ACK.
    pub ack_unchanged: bool,
    /// The segment carried data, SYN or FIN.
    pub carries_data_or_control: bool,
    /// The advertised window differs from the last ACK's.
    pub window_changed: bool,
    /// Data was outstanding after the ACK (SND.MAX > SND.UNA).
    pub data_outstanding: bool,
    /// Bytes the ACK's SACK blocks newly SACKed.
    pub newly_sacked: u64,
}

/// What a partial ACK (one that advances SND.UNA but not to the recovery point) does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PartialAck {
    /// Recovery ends, as on a full ACK (RFC 5681's Reno).
    Ends,
    /// Resend the segment now at SND.UNA at once; restart the retransmission timer only on
    /// the first partial ACK of the recovery (RFC 6582 §3.2 step 3).
    ResendFront,
    /// Nothing beyond sending by pipe (RFC 6675: the scoreboard knows what to resend).
    KeepSending,
}

/// The questions on which the recovery algorithms differ.
pub trait RecoveryOps {
    /// The algorithm reads SACK blocks (and its receiver sends them).
    fn uses_sack(&self) -> bool;

    /// Whether an ACK is a duplicate ACK.
    fn is_duplicate(&self, ack: &AckView) -> bool;

    /// cwnd at the fast retransmit, given the controller's ssthresh.
    fn cwnd_on_entry(&self, ssthresh: u64, dupthresh: u32, mss: u64) -> u64;

    /// A duplicate ACK during recovery.
    fn on_dupack_in_recovery(&self, w: &mut Window, mss: u64);

    /// A partial ACK of `bytes_acked` bytes: adjust cwnd and say what follows.
    fn on_partial_ack(&self, w: &mut Window, bytes_acked: u64, mss: u64) -> PartialAck;

    /// cwnd when the recovery point is acknowledged; `flight` is FlightSize then.
    fn cwnd_on_exit(&self, w: &Window, flight: u64, mss: u64) -> u64;

    /// The recover guard when the scenario leaves it to the algorithm (`recover_guard =
    /// "auto"`).
    fn default_guard(&self) -> RecoverGuard;

    /// PRR (RFC 6937): the algorithm sets cwnd = pipe + sndcnt on every ACK of the recovery,
    /// from the per-recovery counters the sender keeps. None for the others, which leave cwnd
    /// to the calls above.
    fn prr(&self) -> Option<Prr> {
        None
    }
}

/// RFC 5681 §2's duplicate ACK, shared by the algorithms without SACK: data outstanding, no
/// data, SYN or FIN carried, the ACK number unchanged and the advertised window unchanged.
fn is_rfc5681_duplicate(ack: &AckView) -> bool {
    ack.bytes_acked == 0
        && ack.ack_unchanged
        && !ack.carries_data_or_control
        && !ack.window_changed
        && ack.data_outstanding
}

/// One of the built-in recovery algorithms, dispatched without a virtual call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AnyRecovery {
    Reno(Reno),
    NewReno(NewReno),
    Sack(Sack),
    Prr(Prr),
}

impl AnyRecovery {
    pub fn new(which: Recovery) -> Self {
        match which {
            Recovery::Reno => AnyRecovery::Reno(Reno),
            Recovery::NewReno => AnyRecovery::NewReno(NewReno),
            Recovery::Sack => AnyRecovery::Sack(Sack),
            Recovery::Prr(bound) => AnyRecovery::Prr(Prr { bound }),
        }
    }
}

/// Calls a method of the algorithm inside through a `match` the compiler can inline (the sender
/// asks on every ACK).
macro_rules! dispatch {
    ($self:ident, $r:ident => $call:expr) => {
        match $self {
            AnyRecovery::Reno($r) => $call,
            AnyRecovery::NewReno($r) => $call,
            AnyRecovery::Sack($r) => $call,
            AnyRecovery::Prr($r) => $call,
        }
    };
}

impl RecoveryOps for AnyRecovery {
    #[inline]
    fn uses_sack(&self) -> bool {
        dispatch!(self, r => r.uses_sack())
    }
    #[inline]
    fn is_duplicate(&self, ack: &AckView) -> bool {
        dispatch!(self, r => r.is_duplicate(ack))
    }
    fn cwnd_on_entry(&self, ssthresh: u64, dupthresh: u32, mss: u64) -> u64 {
        dispatch!(self, r => r.cwnd_on_entry(ssthresh, dupthresh, mss))
    }
    fn on_dupack_in_recovery(&self, w: &mut Window, mss: u64) {
        dispatch!(self, r => r.on_dupack_in_recovery(w, mss))
    }
    fn on_partial_ack(&self, w: &mut Window, bytes_acked: u64, mss: u64) -> PartialAck {
        dispatch!(self, r => r.on_partial_ack(w, bytes_acked, mss))
    }
    fn cwnd_on_exit(&self, w: &Window, flight: u64, mss: u64) -> u64 {
        dispatch!(self, r => r.cwnd_on_exit(w, flight, mss))
    }
    fn default_guard(&self) -> RecoverGuard {
        dispatch!(self, r => r.default_guard())
    }
    #[inline]
    fn prr(&self) -> Option<Prr> {
        match self {
            AnyRecovery::Prr(p) => Some(*p),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view() -> AckView {
        AckView {
            bytes_acked: 0,
            ack_unchanged: true,
            carries_data_or_control: false,
            window_changed: false,
            data_outstanding: true,
            newly_sacked: 0,
        }
    }

    #[test]
    fn without_sack_a_window_change_or_a_fin_makes_an_ack_no_duplicate() {
        // RFC 5681 §2.
        let r = AnyRecovery::new(Recovery::NewReno);
        assert!(r.is_duplicate(&view()));
        for v in [
            AckView {
                window_changed: true,
                ..view()
            },
            AckView {
                carries_data_or_control: true,
                ..view()
            },
            AckView {
                data_outstanding: false,
                ..view()
            },
            AckView {
                bytes_acked: 1,
                ack_unchanged: false,
                ..view()
            },
        ] {
            assert!(!r.is_duplicate(&v), "{v:?}");
        }
    }

    #[test]
    fn with_sack_only_new_sack_information_makes_a_duplicate() {
        // RFC 6675 §2: even an ACK that moves SND.UNA or changes the window counts if it SACKs
        // new data; one that SACKs nothing new does not, whatever else holds.
        let r = AnyRecovery::new(Recovery::Sack);
        assert!(!r.is_duplicate(&view()));
        assert!(r.is_duplicate(&AckView {
            newly_sacked: 1000,
            bytes_acked: 500,
            ack_unchanged: false,
            window_changed: true,
            ..view()
        }));
    }
}
