// SPDX-License-Identifier: MIT
//! Class-based WFQ with a low-latency queue (Cisco MQC `bandwidth` and `priority`).
//!
//! ```text
//!   priority classes (LLQ) ──strict priority, in order──┐
//!      each policed by its own token bucket             ├──> link
//!      (rate = `priority`, depth = `burst`)             │
//!   bandwidth classes + class-default ──WFQ, φ = bandwidth┘ (only when no LLQ packet waits)
//! ```
//!
//! - `bandwidth` (or `bandwidth_percent`) is a guaranteed minimum under congestion, made a WFQ
//!   weight; what a class leaves unused is shared by the others in proportion to theirs. A
//!   class-default without a bandwidth gets what the others leave of the link (at least 1 %).
//! - `priority RATE` (LLQ): served ahead of every bandwidth class, and policed to RATE *only
//!   while the link is congested*; with no congestion it may use more (Cisco tech note 10100,
//!   "Comparing the bandwidth and priority commands"). Cisco's trigger is a full transmit ring
//!   (the interface's own small FIFO below the software queues); here the link is congested
//!   while at least `tx_ring` packets wait in this queue (default 4, a chosen value: a short
//!   wait behind one packet of another class is not congestion, a standing queue is). Tokens are taken by every packet that fits, congested
//!   or not, so the policer always measures the class's real rate. The default burst is 200 ms
//!   at the configured rate (the IOS default).

use super::classes::ClassScheduler;
use super::priority::Priority;
use super::wfq::Wfq;
use crate::diffserv::TokenBucket;
use crate::time::SimTime;

/// The two stages of CBWFQ.
#[derive(Clone, Debug)]
pub(crate) struct Cbwfq {
    /// Bit i: class i is an LLQ (`priority`) class, served by `llq`; the others by `wfq`.
    pub(crate) llq_mask: u64,
    pub(crate) llq: Priority,
    pub(crate) wfq: Wfq,
}

impl Cbwfq {
    #[inline]
    fn is_llq(&self, i: usize) -> bool {
        self.llq_mask & (1u64 << i) != 0
    }
}

impl ClassScheduler for Cbwfq {
    #[inline]
    fn backlogged(&mut self, i: usize, head: u32) {
        if self.is_llq(i) {
            self.llq.backlogged(i, head)
        } else {
            self.wfq.backlogged(i, head)
        }
    }

    /// The class to serve next: an LLQ class first, else the WFQ choice.
    #[inline]
    fn next(&mut self, head: impl Fn(usize) -> Option<u32>) -> Option<usize> {
        ClassScheduler::next(&mut self.llq, &head)
            .or_else(|| ClassScheduler::next(&mut self.wfq, &head))
    }

    #[inline]
    fn served(&mut self, i: usize, next_head: Option<u32>) {
        if self.is_llq(i) {
            self.llq.served(i, next_head)
        } else {
            self.wfq.served(i, next_head)
        }
    }
}

/// LLQ's conditional policer: `true` if a packet of `size` may enter, given whether the link
/// is congested.
#[inline]
pub(crate) fn llq_admits(
    bucket: &mut TokenBucket,
    now: SimTime,
    size: u32,
    congested: bool,
) -> bool {
    // The bucket always counts; only congestion turns a miss into a drop.
    bucket.conform(now, size) || !congested
}
