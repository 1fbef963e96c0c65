// SPDX-License-Identifier: MIT
//! DualPI2, the DualQ Coupled AQM of RFC 9332 with its PI2 example (RFC 9332 Appendix A): two
//! queues behind one link, one for L4S traffic (ECT(1) and CE) and one for Classic traffic
//! (Not-ECT and ECT(0)), and one base probability p' that serves both.
//!
//! ```text
//!  arrival ─ shared limit ─┬─ ECN = ECT(1) or CE ──> L queue ──┐  time-shifted FIFO:
//!  (RFC 9332 §2.3)         └─ Not-ECT or ECT(0) ──> C queue ──┤  L's head first unless C's
//!                                                             │  has waited tshift longer
//!  every t_update:  p' += alpha·(qC − target) + beta·(qC − qC_old)   (qC: the C head's delay)
//!                   p_C  = p'²          (Classic drop or mark: a square, for Reno/CUBIC's 1/√p)
//!                   p_CL = k·p'         (coupled L4S mark: linear, for a scalable sender's 1/p)
//!  dequeue from L:  mark CE with p_L = max(p_CL, ramp(L sojourn))   (native AQM, A.1 laqm())
//!  dequeue from C:  with p_C, drop (Not-ECT) or mark CE (ECT(0))
//!  overload (p_C > p_Cmax = min(1/k², 1), §4.2.3): L packets dropped with p_C, the rest
//!                   marked; Classic ECT(0) dropped too
//! ```
//!
//! Why the square and the k: a Classic flow's rate goes as 1/√p_C and a scalable (DCTCP-like)
//! flow's as 1/p_L (RFC 9332 §2.1), so with p_C = (p_L/k)² the two rates are equal when
//! k·√p_C = p_L: one controller, two signals, roughly equal shares (k = 2, §2.4).
//!
//! Where the RFC's pseudo-code acts, this does: the shared limit and the classifier at enqueue
//! (A.1, `dualpi2_enqueue`), every drop and mark at dequeue (A.1, `dualpi2_dequeue`, A.2 for
//! the overload), the base update on a periodic timer (A.1, `dualpi2_update`). Decisions are
//! random draws from the queue's own stream (A.1's `rand()`); a draw is made only for a
//! probability strictly between 0 and 1. The update runs lazily, as PIE's (`pie.rs`): before
//! the first arrival or departure at or after its time, once per period passed, with the C head
//! it would have seen (nothing changes between packets); at rest it skips ahead in one step.
//!
//! Each queue keeps its own counters (the `classes` table's rows `l4s` and `classic`) and its
//! own sojourn histogram; the channel's links-table columns cover both together.

use super::fifo::{Fifo, Waiting};
use super::{AqmDrops, ClassCounters, QueueLimit, SojournHistogram};
use crate::arena::{PacketArena, PacketId};
use crate::packet::{Packet, ECN_CE, ECN_ECT0, ECN_NOT_ECT};
use crate::rng::RngStream;
use crate::time::{Rate, SimDuration, SimTime};

/// DualPI2's parameters (RFC 9332 Appendix A.1; [`Default`] gives A.1's values, the scenario's
/// defaults).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DualPi2Params {
    /// The shared limit over both queues; `None`: 250 ms at the link's rate, in bytes (A.1's
    /// `limit = MAX_LINK_RATE * 250 ms`).
    pub limit: Option<QueueLimit>,
    /// The Classic queue delay target (A.1: 15 ms).
    pub target: SimDuration,
    /// The PI update interval Tupdate (16 ms, the Linux value A.1 gives beside its 15 ms).
    pub t_update: SimDuration,
    /// Integral and proportional gains, Hz (0.16 and 3.2, Linux's values A.1 gives).
    pub alpha: f64,
    pub beta: f64,
    /// The coupling factor k (A.1: 2).
    pub k: f64,
    /// The native L4S ramp: no mark below `min_th` of L sojourn, certain at `min_th + range`,
    /// linear between (A.1: 800 µs and 400 µs; `range` 0 is a step at `min_th`).
    pub min_th: SimDuration,
    pub range: SimDuration,
    /// Th_len (A.1: 1 packet): the native ramp marks only while at least this many L4S packets
    /// wait behind the one leaving, so that a lone packet held by a slow link is not marked.
    pub th_len: u64,
    /// The time-shifted FIFO's shift (RFC 9332 §4.2.2): the C head goes first only when it has
    /// waited `tshift` longer than the L head.
    pub tshift: SimDuration,
}

impl Default for DualPi2Params {
    /// RFC 9332 Appendix A.1: the limit 250 ms of the link's rate, target 15 ms, k = 2, the ramp
    /// from 800 µs over 400 µs with Th_len 1 packet; t_update 16 ms, alpha 0.16 Hz and beta
    /// 3.2 Hz, the Linux values A.1 gives beside its formulas' 15 ms, 0.15 Hz and 3 Hz (for
    /// RTT_max = 100 ms); tshift 50 ms, which §4.2.2 leaves open.
    fn default() -> DualPi2Params {
        DualPi2Params {
            limit: None,
            target: SimDuration::from_millis(15),
            t_update: SimDuration::from_millis(16),
            alpha: 0.16,
            beta: 3.2,
            k: 2.0,
            min_th: SimDuration::from_micros(800),
            range: SimDuration::from_micros(400),
            th_len: 1,
            tshift: SimDuration::from_millis(50),
        }
    }
}

/// The two queues of DualPI2.
const L: usize = 0;
const C: usize = 1;

/// One of the two queues: its packets, counters and sojourn times.
#[derive(Clone, Debug, Default)]
pub(crate) struct SubQueue {
    pub(crate) fifo: Fifo,
    pub(crate) counters: ClassCounters,
    pub(crate) sojourn: SojournHistogram,
}

#[derive(Clone, Debug)]
pub(crate) struct DualPi2 {
    p: DualPi2Params,
    pub(crate) limit: QueueLimit,
    /// p_Cmax = min(1/k², 1) (A.1).
    p_cmax: f64,
    /// p', the base probability (A.1), kept in [0, 1].
    pub(crate) base: f64,
    /// The C head's queuing time at the last update (A.1's `prevq`), ns.
    pub(crate) prev_q: u64,
    next_update: SimTime,
    pub(crate) q: [SubQueue; 2],
    /// The queue of the packet [`DualPi2::admit`] accepted last (its push follows).
    pending: usize,
    pub(crate) drops: AqmDrops,
    rng: RngStream,
}

/// Which queue a codepoint goes to (RFC 9332 §2.3, A.1 `dualpi2_enqueue`: `ecn modulo 2 == 1`
/// is ECT(1) or CE).
#[inline]
pub(crate) fn is_l4s(ecn: u8) -> bool {
    ecn & 1 == 1
}

impl DualPi2 {
    pub(crate) fn new(p: DualPi2Params, rng: RngStream, link_rate: Rate) -> DualPi2 {
        let limit = p.limit.unwrap_or_else(|| {
            // 250 ms of the link's rate, at least one full-size packet.
            let bytes = link_rate.bits_per_sec() as u128 / 8 / 4;
            QueueLimit::Bytes((bytes as u64).max(1500))
        });
        DualPi2 {
            p,
            limit,
            p_cmax: if p.k > 1.0 { 1.0 / (p.k * p.k) } else { 1.0 },
            base: 0.0,
            prev_q: 0,
            next_update: SimTime::ZERO + p.t_update,
            q: Default::default(),
            pending: C,
            drops: AqmDrops::default(),
            rng,
        }
    }

    /// p_C = p'² (A.1 `dualpi2_update`).
    pub(crate) fn p_c(&self) -> f64 {
        self.base * self.base
    }

    /// p_CL = k·p' (A.1 `dualpi2_update`).
    pub(crate) fn p_cl(&self) -> f64 {
        self.p.k * self.base
    }

    /// §4.2.3: past p_Cmax the queue is overloaded and drops instead of marking.
    fn overloaded(&self) -> bool {
        self.p_c() > self.p_cmax
    }

    pub(crate) fn len(&self) -> usize {
        self.q[L].fifo.len() + self.q[C].fifo.len()
    }

    pub(crate) fn bytes(&self) -> u64 {
        self.q[L].fifo.bytes() + self.q[C].fifo.bytes()
    }

    /// Run the updates due by `now` (module docs).
    #[inline]
    pub(crate) fn catch_up(&mut self, now: SimTime) {
        while self.next_update <= now {
            if self.base == 0.0 && self.prev_q == 0 && self.q[C].fifo.is_empty() {
                // At rest: the update would leave p' at 0 (qC = 0 is below target) and qC_old
                // at 0, however many periods pass.
                let period = self.p.t_update.as_nanos().max(1);
                let behind = (now.as_nanos() - self.next_update.as_nanos()) / period;
                self.next_update += SimDuration::from_nanos((behind + 1) * period);
                return;
            }
            let at = self.next_update;
            let q_c = self.q[C]
                .fifo
                .head_since()
                .map_or(0, |since| at.saturating_since(since).as_nanos());
            self.update(q_c);
            self.next_update += self.p.t_update;
        }
    }

    /// RFC 9332 A.1 `dualpi2_update` with the C queue's queuing time `q_c` (ns): the PI step
    /// on p', bounded to [0, 1].
    pub(crate) fn update(&mut self, q_c: u64) {
        let secs = |ns: i128| ns as f64 * 1e-9;
        let target = self.p.target.as_nanos() as i128;
        let delta = self.p.alpha * secs(q_c as i128 - target)
            + self.p.beta * secs(q_c as i128 - self.prev_q as i128);
        self.base = (self.base + delta).clamp(0.0, 1.0);
        self.prev_q = q_c;
    }

    /// The enqueue half of A.1's `dualpi2_enqueue`: the shared limit and the classifier;
    /// `false` if the packet must be dropped. Counted on its queue.
    #[inline]
    pub(crate) fn admit(&mut self, now: SimTime, pkt: &Packet) -> bool {
        self.catch_up(now);
        let i = if is_l4s(pkt.ecn) { L } else { C };
        let fits = super::droptail::fits_beside(self.limit, self.len(), self.bytes(), pkt.size);
        let k = &mut self.q[i].counters;
        k.offered_packets += 1;
        k.offered_bytes += pkt.size as u64;
        if !fits {
            k.drops_tail += 1;
            return false;
        }
        k.accepted_packets += 1;
        k.accepted_bytes += pkt.size as u64;
        self.pending = i;
        true
    }

    /// Queue the packet [`DualPi2::admit`] accepted last.
    #[inline]
    pub(crate) fn push(&mut self, now: SimTime, id: PacketId, size: u32) {
        self.q[self.pending].fifo.push(now, id, size);
    }

    /// The time-shifted FIFO (RFC 9332 §4.2.2): the L head unless the C head arrived more than
    /// `tshift` before it; `None` if both are empty.
    fn pick(&self) -> Option<usize> {
        match (self.q[L].fifo.head_since(), self.q[C].fifo.head_since()) {
            (None, None) => None,
            (Some(_), None) => Some(L),
            (None, Some(_)) => Some(C),
            (Some(l), Some(c)) => {
                // C goes first when c + tshift < l, i.e. it has waited tshift longer.
                if c + self.p.tshift < l {
                    Some(C)
                } else {
                    Some(L)
                }
            }
        }
    }

    /// The native L4S AQM (A.1 `laqm`): the ramp's probability for a sojourn of `ns`.
    pub(crate) fn ramp(&self, ns: u64) -> f64 {
        let min = self.p.min_th.as_nanos();
        let range = self.p.range.as_nanos();
        if ns >= min + range {
            1.0
        } else if ns > min {
            (ns - min) as f64 / range as f64
        } else {
            0.0
        }
    }

    /// RFC 9332 A.1 `dualpi2_dequeue` (and A.2's overload): the packet to send now, after the
    /// drops the probabilities ask for (to `drops`, their slots freed); marks are made in the
    /// arena and counted.
    pub(crate) fn dequeue(&mut self, now: SimTime, pkts: &mut PacketArena) -> Option<Waiting> {
        self.catch_up(now);
        loop {
            let i = self.pick()?;
            let w = self.q[i].fifo.pop()?;
            let sojourn = now.saturating_since(w.since).as_nanos();
            let overload = self.overloaded();
            let ecn = pkts.get(w.id).ecn;
            // What A.1 does to this packet: nothing, a CE mark, or a drop.
            let (signal, may_mark) = if i == L {
                if overload {
                    // A.2: L4S falls back to Classic drop at p_C; what survives is marked (p_CL
                    // is 1 or more here when k >= 1).
                    if self.rng.bernoulli(self.p_c()) {
                        (true, false)
                    } else {
                        (self.p_cl() >= 1.0 || self.rng.bernoulli(self.p_cl()), true)
                    }
                } else {
                    let native = if self.q[L].fifo.len() as u64 >= self.p.th_len {
                        self.ramp(sojourn)
                    } else {
                        0.0
                    };
                    (self.rng.bernoulli(native.max(self.p_cl())), true)
                }
            } else {
                // Classic: p_C = p'²; marks only for ECT(0) and only below overload.
                (self.rng.bernoulli(self.p_c()), ecn == ECN_ECT0 && !overload)
            };
            let q = &mut self.q[i];
            if signal {
                if may_mark && ecn != ECN_NOT_ECT {
                    if ecn != ECN_CE {
                        pkts.get_mut(w.id).ecn = ECN_CE;
                        q.counters.ecn_marks += 1;
                        self.drops.marks += 1;
                    }
                } else {
                    q.counters.drops_early += 1;
                    self.drops.drop(pkts, w.id);
                    continue;
                }
            }
            q.counters.sent_packets += 1;
            q.counters.sent_bytes += w.size as u64;
            q.sojourn.record(sojourn);
            return Some(w);
        }
    }

    /// The next packet in the scheduler's order, lost because the link went down.
    pub(crate) fn dequeue_lost(&mut self) -> Option<PacketId> {
        let i = self.pick()?;
        let w = self.q[i].fifo.pop()?;
        self.q[i].counters.drops_link_down += 1;
        Some(w.id)
    }

    /// The rows of the `classes` table: name, counters, packets queued, sojourn times.
    pub(crate) fn rows(&self) -> [(&'static str, &SubQueue); 2] {
        [("l4s", &self.q[L]), ("classic", &self.q[C])]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::ECN_ECT1;

    /// A.1's parameters with a limit of 100 packets.
    fn params() -> DualPi2Params {
        DualPi2Params {
            limit: Some(QueueLimit::Packets(100)),
            ..DualPi2Params::default()
        }
    }

    fn dualpi2(p: DualPi2Params) -> DualPi2 {
        DualPi2::new(p, RngStream::derive(3, "test/dualpi2"), Rate::mbps(100))
    }

    /// Offer a packet with codepoint `ecn` at `now`; its id if queued.
    fn offer(q: &mut DualPi2, pkts: &mut PacketArena, now: SimTime, ecn: u8) -> Option<PacketId> {
        let p = Packet::test_udp(1500, ecn, 0);
        if !q.admit(now, &p) {
            return None;
        }
        let id = pkts.insert(p);
        q.push(now, id, 1500);
        Some(id)
    }

    #[test]
    fn the_base_probability_follows_rfc_9332s_pi_update_for_a_given_delay_sequence() {
        let mut q = dualpi2(params());
        // By hand from A.1's dualpi2_update (seconds, alpha 0.16 Hz, beta 3.2 Hz, target 15 ms):
        // 1. qC 25 ms, old 0:  p' = 0 + 0.16·0.010 + 3.2·0.025 = 0.0016 + 0.08 = 0.0816
        // 2. qC 25 ms, old 25: p' = 0.0816 + 0.16·0.010 + 0 = 0.0832
        // 3. qC 40 ms, old 25: p' = 0.0832 + 0.16·0.025 + 3.2·0.015 = 0.0832 + 0.004 + 0.048
        //    = 0.1352
        // 4. qC 5 ms, old 40:  p' = 0.1352 − 0.16·0.010 − 3.2·0.035 = 0.1352 − 0.0016 − 0.112
        //    = 0.0216
        // 5. qC 0, old 5:      p' = 0.0216 − 0.0024 − 0.016 = 0.0032
        // 6. qC 0, old 0:      p' = 0.0032 − 0.0024 = 0.0008
        // 7. qC 0, old 0:      p' = 0.0008 − 0.0024 < 0 → 0
        let steps = [
            (25, 0.0816),
            (25, 0.0832),
            (40, 0.1352),
            (5, 0.0216),
            (0, 0.0032),
            (0, 0.0008),
            (0, 0.0),
        ];
        for (n, (ms, expected)) in steps.into_iter().enumerate() {
            q.update(ms * 1_000_000);
            assert!(
                (q.base - expected).abs() < 1e-12,
                "step {}: p' {} vs {expected}",
                n + 1,
                q.base
            );
        }
        // Bounded above by 1: a second of delay pushes it there and no further.
        q.update(1_000_000_000);
        assert_eq!(q.base, 1.0);
    }

    #[test]
    fn the_classic_probability_is_the_square_of_the_base_and_the_l4s_one_k_times_it() {
        let mut q = dualpi2(params());
        q.base = 0.1352;
        // RFC 9332 A.1: p_C = p'^2, p_CL = k·p' with k = 2.
        assert!((q.p_c() - 0.01827904).abs() < 1e-15, "{}", q.p_c());
        assert!((q.p_cl() - 0.2704).abs() < 1e-15, "{}", q.p_cl());
        // And the rates over many dequeues: with p' = 0.1, Classic ECT(0) packets are marked
        // 1 % of the time, L4S packets 20 % (their sojourn is 0, the ramp says nothing).
        let mut pkts = PacketArena::new();
        q.base = 0.1;
        q.next_update = SimTime::from_secs(1_000_000);
        let (mut c_marks, mut l_marks) = (0, 0);
        let n = 100_000;
        for _ in 0..n {
            offer(&mut q, &mut pkts, SimTime::ZERO, ECN_ECT0).unwrap();
            offer(&mut q, &mut pkts, SimTime::ZERO, ECN_ECT1).unwrap();
            // Both arrived together: the L4S packet leaves first (time-shifted FIFO).
            for marks in [&mut l_marks, &mut c_marks] {
                let w = q.dequeue(SimTime::ZERO, &mut pkts).unwrap();
                if pkts.take(w.id).ecn == ECN_CE {
                    *marks += 1;
                }
            }
        }
        let (c, l) = (c_marks as f64 / n as f64, l_marks as f64 / n as f64);
        assert!((0.009..0.011).contains(&c), "classic mark rate {c}");
        assert!((0.195..0.205).contains(&l), "l4s mark rate {l}");
        assert_eq!(q.q[C].counters.ecn_marks, c_marks);
        assert_eq!(q.q[L].counters.ecn_marks, l_marks);
    }

    #[test]
    fn ect1_and_ce_go_to_the_l4s_queue_and_not_ect_and_ect0_to_the_classic_one() {
        let mut q = dualpi2(params());
        let mut pkts = PacketArena::new();
        for ecn in [ECN_NOT_ECT, ECN_ECT1, ECN_ECT0, ECN_CE] {
            offer(&mut q, &mut pkts, SimTime::ZERO, ecn).unwrap();
        }
        assert_eq!(q.q[L].fifo.len(), 2);
        assert_eq!(q.q[C].fifo.len(), 2);
        assert_eq!(q.q[L].counters.offered_packets, 2);
        // With both heads queued at the same time, the L4S ones leave first, unchanged (p' is 0
        // and their sojourn 0): ECT(1) then CE, then Not-ECT and ECT(0).
        let order: Vec<u8> = (0..4)
            .map(|_| {
                let w = q.dequeue(SimTime::ZERO, &mut pkts).unwrap();
                pkts.get(w.id).ecn
            })
            .collect();
        assert_eq!(order, vec![ECN_ECT1, ECN_CE, ECN_NOT_ECT, ECN_ECT0]);
    }

    #[test]
    fn the_time_shifted_fifo_serves_the_classic_head_once_it_has_waited_tshift_longer() {
        let mut q = dualpi2(params());
        let mut pkts = PacketArena::new();
        let ms = SimTime::from_millis;
        offer(&mut q, &mut pkts, ms(0), ECN_NOT_ECT).unwrap();
        offer(&mut q, &mut pkts, ms(50), ECN_ECT1).unwrap();
        offer(&mut q, &mut pkts, ms(51), ECN_ECT1).unwrap();
        // C arrived 50 ms before the first L head: not more than tshift, L goes first; then
        // C's head has waited 51 ms longer than the next L head and goes.
        let w = q.dequeue(ms(60), &mut pkts).unwrap();
        assert_eq!(pkts.get(w.id).ecn & 1, 1);
        let w = q.dequeue(ms(60), &mut pkts).unwrap();
        assert_eq!(pkts.get(w.id).ecn, ECN_NOT_ECT);
    }

    #[test]
    fn the_native_ramp_marks_from_min_th_to_min_th_plus_range_with_a_packet_behind() {
        let q = dualpi2(params());
        assert_eq!(q.ramp(800_000), 0.0);
        assert!((q.ramp(1_000_000) - 0.5).abs() < 1e-12);
        assert_eq!(q.ramp(1_200_000), 1.0);
        // Two L4S packets waiting 1.3 ms: the first (one behind it) is marked by the ramp, the
        // last (none behind, Th_len = 1) is not.
        let mut q = dualpi2(params());
        let mut pkts = PacketArena::new();
        for _ in 0..2 {
            offer(&mut q, &mut pkts, SimTime::ZERO, ECN_ECT1).unwrap();
        }
        let at = SimTime::from_nanos(1_300_000);
        let ecn: Vec<u8> = (0..2)
            .map(|_| {
                let id = q.dequeue(at, &mut pkts).unwrap().id;
                pkts.get(id).ecn
            })
            .collect();
        assert_eq!(ecn, vec![ECN_CE, ECN_ECT1]);
        // A step: range 0 marks at min_th and beyond.
        let step = dualpi2(DualPi2Params {
            range: SimDuration::ZERO,
            min_th: SimDuration::from_millis(1),
            ..params()
        });
        assert_eq!(step.ramp(999_999), 0.0);
        assert_eq!(step.ramp(1_000_000), 1.0);
    }

    #[test]
    fn in_overload_l4s_packets_fall_back_to_drop_at_the_classic_probability() {
        // p' = 0.7: p_C = 0.49 > p_Cmax = 1/4, p_CL = 1.4. L4S packets are dropped with p_C and
        // the rest CE-marked; Classic ECT(0) packets are dropped, not marked.
        let mut q = dualpi2(DualPi2Params {
            limit: Some(QueueLimit::Packets(10)),
            ..params()
        });
        let mut pkts = PacketArena::new();
        q.base = 0.7;
        q.next_update = SimTime::from_secs(1_000_000);
        let n = 20_000;
        let mut l_sent = 0;
        let mut c_sent = 0;
        for _ in 0..n {
            offer(&mut q, &mut pkts, SimTime::ZERO, ECN_ECT1).unwrap();
            offer(&mut q, &mut pkts, SimTime::ZERO, ECN_ECT0).unwrap();
            while let Some(w) = q.dequeue(SimTime::ZERO, &mut pkts) {
                let p = pkts.take(w.id);
                match p.ecn {
                    ECN_CE => l_sent += 1,
                    ECN_ECT0 => c_sent += 1,
                    other => panic!("codepoint {other} left the queue"),
                }
            }
        }
        let l_drop = q.q[L].counters.drops_early as f64 / n as f64;
        let c_drop = q.q[C].counters.drops_early as f64 / n as f64;
        assert!((0.48..0.50).contains(&l_drop), "l4s drop rate {l_drop}");
        assert!((0.48..0.50).contains(&c_drop), "classic drop rate {c_drop}");
        assert_eq!(q.q[C].counters.ecn_marks, 0);
        assert_eq!(q.q[L].counters.ecn_marks, l_sent);
        assert_eq!(l_sent + q.q[L].counters.drops_early, n);
        assert_eq!(c_sent + q.q[C].counters.drops_early, n);
        assert_eq!(
            q.drops.uncounted,
            q.q[L].counters.drops_early + q.q[C].counters.drops_early
        );
        // At the edge (p' = 0.5, p_C = p_Cmax, not above it) ECT packets are marked again and
        // never dropped: every L4S packet (p_CL = 1), a quarter of the Classic ones.
        q.base = 0.5;
        let drops = q.drops.uncounted;
        for _ in 0..1000 {
            offer(&mut q, &mut pkts, SimTime::ZERO, ECN_ECT0).unwrap();
            offer(&mut q, &mut pkts, SimTime::ZERO, ECN_ECT1).unwrap();
            while let Some(w) = q.dequeue(SimTime::ZERO, &mut pkts) {
                pkts.take(w.id);
            }
        }
        assert_eq!(q.drops.uncounted, drops);
        assert_eq!(q.q[L].counters.ecn_marks, l_sent + 1000);
    }

    #[test]
    fn the_shared_limit_counts_both_queues_and_a_calm_controller_skips_idle_periods() {
        let mut q = dualpi2(DualPi2Params {
            limit: Some(QueueLimit::Packets(3)),
            ..params()
        });
        let mut pkts = PacketArena::new();
        assert!(offer(&mut q, &mut pkts, SimTime::ZERO, ECN_ECT1).is_some());
        assert!(offer(&mut q, &mut pkts, SimTime::ZERO, ECN_NOT_ECT).is_some());
        assert!(offer(&mut q, &mut pkts, SimTime::ZERO, ECN_ECT1).is_some());
        assert!(offer(&mut q, &mut pkts, SimTime::ZERO, ECN_NOT_ECT).is_none());
        assert_eq!(q.q[C].counters.drops_tail, 1);
        // A link's default limit is 250 ms of its rate (A.1): 100 Mbit/s → 3,125,000 B.
        let d = DualPi2::new(
            DualPi2Params {
                limit: None,
                ..params()
            },
            RngStream::derive(1, "x"),
            Rate::mbps(100),
        );
        assert_eq!(d.limit, QueueLimit::Bytes(3_125_000));
        // At rest, an hour of idleness costs one step of the lazy timer.
        let mut calm = dualpi2(params());
        calm.catch_up(SimTime::from_secs(3600));
        assert_eq!(
            calm.next_update,
            SimTime::from_nanos(3_600_000_000_000 + 16_000_000)
        );
        // With a Classic packet waiting since 0, the updates at 16, 32, 48 ms see 16, 32, 48 ms.
        let mut q = dualpi2(params());
        offer(&mut q, &mut pkts, SimTime::ZERO, ECN_NOT_ECT).unwrap();
        let mut by_hand = q.clone();
        for ms in [16, 32, 48] {
            by_hand.update(ms * 1_000_000);
        }
        q.catch_up(SimTime::from_millis(50));
        assert_eq!(q.base, by_hand.base);
        assert!(q.base > 0.0);
    }
}
