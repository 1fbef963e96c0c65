// SPDX-License-Identifier: MIT
//! Proportional Rate Reduction (RFC 6937 §3) on top of SACK recovery (RFC 6675).
//!
//! RFC 6675 sets cwnd = ssthresh at the fast retransmit: with half a window in flight above the
//! new window, the sender then sends nothing for half a round trip and the rest of the recovery
//! in a burst. PRR spreads the reduction over the round trip instead. On every ACK of the
//! recovery it counts what the ACK reports delivered and lets out a proportional share:
//!
//! ```text
//!   at the fast retransmit:  prr_delivered = 0, prr_out = 0, RecoverFS = SND.MAX − SND.UNA
//!   on each ACK:             DeliveredData = Δ SND.UNA + Δ SACKed bytes
//!                            prr_delivered += DeliveredData
//!     pipe > ssthresh:  sndcnt = ⌈prr_delivered · ssthresh / RecoverFS⌉ − prr_out
//!     otherwise:        limit  = prr_delivered − prr_out                       (PRR-CRB)
//!                              | max(prr_delivered − prr_out, DeliveredData) + SMSS  (PRR-SSRB)
//!                       sndcnt = min(ssthresh − pipe, limit)
//!   cwnd = pipe + sndcnt      (the sender then sends by pipe, in NextSeg order, as RFC 6675)
//!   on each send:            prr_out += bytes sent
//!   at the recovery point:   cwnd = ssthresh
//! ```
//!
//! While the pipe is above ssthresh, one segment goes out for every ssthresh/RecoverFS
//! delivered (for a halving, every other ACK), so the pipe reaches ssthresh when the recovery
//! ends. Below it, the bound decides how fast the pipe is rebuilt ([`PrrBound`]).
//!
//! DeliveredData needs SACK (RFC 6937 §3). Without it, Linux counts each duplicate ACK as one
//! segment delivered (`tcp_add_reno_sack`) and ns-3.48's `TcpTxBuffer` does the same for its
//! emulated SACK; ccsim's `prr` always runs with SACK (its receiver sends SACK blocks, as for
//! `sack`), so that estimate is not modelled.
//!
//! The sender owns the per-recovery counters (`RecoveryEpisode` in `tcp/sender.rs`: prr_out is
//! read off its bytes-sent counter, so the send path does nothing for PRR); this file computes
//! sndcnt from them.

use super::{AckView, PartialAck, RecoveryOps, Sack};
use crate::cc::Window;
use crate::tcp::config::{PrrBound, RecoverGuard};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Prr {
    pub bound: PrrBound,
}

/// What one ACK of the recovery brings to PRR, in bytes.
#[derive(Clone, Copy, Debug)]
pub struct PrrAck {
    /// prr_delivered, this ACK's DeliveredData included.
    pub prr_delivered: u64,
    /// prr_out: bytes sent (new and retransmitted) since the recovery began.
    pub prr_out: u64,
    /// This ACK's DeliveredData.
    pub delivered: u64,
    /// RecoverFS: FlightSize at the fast retransmit.
    pub recover_fs: u64,
    /// RFC 6675 pipe after the ACK was processed.
    pub pipe: u64,
    pub ssthresh: u64,
    pub mss: u64,
}

impl Prr {
    /// RFC 6937 §3: how many bytes this ACK lets out.
    pub fn sndcnt(&self, a: &PrrAck) -> u64 {
        if a.pipe > a.ssthresh {
            // Proportional part: ⌈prr_delivered · ssthresh / RecoverFS⌉ in u128, as a window of
            // 2^40 bytes times another would overflow u64.
            let fs = a.recover_fs.max(1) as u128;
            let share = (a.prr_delivered as u128 * a.ssthresh as u128).div_ceil(fs);
            (share.min(u64::MAX as u128) as u64).saturating_sub(a.prr_out)
        } else {
            let owed = a.prr_delivered.saturating_sub(a.prr_out);
            let limit = match self.bound {
                PrrBound::Conservative => owed,
                PrrBound::SlowStart => owed.max(a.delivered) + a.mss,
            };
            (a.ssthresh - a.pipe).min(limit)
        }
    }
}

/// Everything but the per-ACK window is SACK recovery's: PRR changes how much is sent, not
/// what (RFC 6937 §3 runs beside RFC 6675's NextSeg).
impl RecoveryOps for Prr {
    fn uses_sack(&self) -> bool {
        Sack.uses_sack()
    }
    fn is_duplicate(&self, ack: &AckView) -> bool {
        Sack.is_duplicate(ack)
    }
    fn cwnd_on_entry(&self, ssthresh: u64, dupthresh: u32, mss: u64) -> u64 {
        // Replaced on the same ACK by pipe + sndcnt ([`RecoveryOps::prr`]).
        Sack.cwnd_on_entry(ssthresh, dupthresh, mss)
    }
    fn on_dupack_in_recovery(&self, w: &mut Window, mss: u64) {
        Sack.on_dupack_in_recovery(w, mss)
    }
    fn on_partial_ack(&self, w: &mut Window, bytes_acked: u64, mss: u64) -> PartialAck {
        Sack.on_partial_ack(w, bytes_acked, mss)
    }
    fn cwnd_on_exit(&self, w: &Window, flight: u64, mss: u64) -> u64 {
        // Linux's `tcp_end_cwnd_reduction` and ns-3.48's `ProcessAck` both leave recovery
        // with cwnd = ssthresh; PRR has brought the pipe there already (RFC 6937 §3).
        Sack.cwnd_on_exit(w, flight, mss)
    }
    fn default_guard(&self) -> RecoverGuard {
        Sack.default_guard()
    }
    fn prr(&self) -> Option<Prr> {
        Some(*self)
    }
}

#[cfg(test)]
mod tests {
    //! RFC 6937 §4's two examples, by hand, in segments of 1000 bytes: a window of 20 segments
    //! (cwnd = FlightSize = 20), ssthresh 10, no Limited Transmit, every ACK SACKs one segment.
    use super::*;

    const MSS: u64 = 1000;

    /// Runs `acks` ACKs through PRR from the fast retransmit on, each delivering one segment,
    /// the pipe at the first being `pipe0` segments and falling by one per ACK; the sender
    /// sends whole segments while pipe + 1 ≤ pipe + sndcnt (the first, the fast retransmit,
    /// whatever sndcnt says). Returns the segments sent on each ACK.
    fn sends(bound: PrrBound, pipe0: u64, acks: usize) -> Vec<u64> {
        let prr = Prr { bound };
        let (mut delivered, mut out, mut pipe) = (0, 0, pipe0 * MSS);
        let mut sent = Vec::new();
        for k in 0..acks {
            if k > 0 {
                pipe -= MSS;
            }
            delivered += MSS;
            let sndcnt = prr.sndcnt(&PrrAck {
                prr_delivered: delivered,
                prr_out: out,
                delivered: MSS,
                recover_fs: 20 * MSS,
                pipe,
                ssthresh: 10 * MSS,
                mss: MSS,
            });
            let mut n = sndcnt / MSS;
            if k == 0 {
                n = n.max(1);
            }
            out += n * MSS;
            pipe += n * MSS;
            sent.push(n);
        }
        sent
    }

    #[test]
    fn after_one_loss_prr_sends_on_every_other_ack_until_the_pipe_reaches_ssthresh() {
        // The third duplicate ACK starts recovery: 3 segments SACKed, 1 lost, pipe 16; then
        // the 16 other duplicate ACKs. While pipe > ssthresh, sndcnt = ⌈k · 500⌉ − prr_out
        // bytes on the k-th ACK (prr_delivered · ssthresh / RecoverFS = k · 1000 · 10/20): the
        // fast retransmission goes out on the first whatever sndcnt says (RFC 6675 (4.3)), and
        // then a new segment whenever k · 500 reaches the next 1000, on every even k. By hand,
        // pipe when the ACK has been processed (before its sends) and segments sent:
        //   ACK k:  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15 16 17
        //   pipe:  16 16 15 14 14 13 13 12 12 11 11 10  9  9  9  9  9
        //   sent:   1  0  0  1  0  1  0  1  0  1  0  0  1  1  1  1  1
        // On the 12th ACK the pipe is at ssthresh (sndcnt = min(ssthresh − pipe, limit) = 0);
        // from the 13th it is one below after each ACK, and both bounds let one segment out
        // (prr_delivered − prr_out, 6 or more, is not what limits). The recovery sends 10
        // segments for 17 delivered: ssthresh.
        let expect = [1, 0, 0, 1, 0, 1, 0, 1, 0, 1, 0, 0, 1, 1, 1, 1, 1];
        assert_eq!(sends(PrrBound::SlowStart, 16, 17), expect);
        assert_eq!(sends(PrrBound::Conservative, 16, 17), expect);
    }

    #[test]
    fn after_a_burst_loss_the_conservative_bound_keeps_the_pipe_and_ssrb_grows_it() {
        // RFC 6937 §4's second example: 15 of the 20 segments lost; the 5 that arrive are
        // SACKed, and on the third duplicate ACK all 15 are lost by RFC 6675's IsLost: pipe =
        // 20 − 3 SACKed − 15 lost = 2, far below ssthresh. CRB sends one per segment delivered
        // (prr_delivered − prr_out, the retransmission on the first ACK taking the first
        // segment's credit); SSRB one more per ACK, as slow start.
        //   ACK:  1  2  3
        //   CRB:  1  1  1     (limit = k − (k − 1) = 1)
        //   SSRB: 2  2  2     (limit = max(k − out, 1) + 1 = 2, ssthresh − pipe ≥ 2)
        assert_eq!(sends(PrrBound::Conservative, 2, 3), [1, 1, 1]);
        assert_eq!(sends(PrrBound::SlowStart, 2, 3), [2, 2, 2]);
    }

    #[test]
    fn the_proportional_share_never_goes_negative_and_rounds_up() {
        let prr = Prr {
            bound: PrrBound::SlowStart,
        };
        let a = PrrAck {
            prr_delivered: 1,
            prr_out: 0,
            delivered: 1,
            recover_fs: 20_000,
            pipe: 15_000,
            ssthresh: 10_000,
            mss: MSS,
        };
        // ⌈1 · 10000 / 20000⌉ = 1 byte.
        assert_eq!(prr.sndcnt(&a), 1);
        assert_eq!(prr.sndcnt(&PrrAck { prr_out: 5000, ..a }), 0);
    }
}
