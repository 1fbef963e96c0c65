// SPDX-License-Identifier: MIT
//! SPACK, split ACKs at the base station (paper 001, Jin 2001, §IV and Figs. 5–6).
//!
//! ```text
//!   data from FH, seq < max_fwd  ──> a retransmission: Retrans_Seq_No R = seq, arm (if not armed)
//!   data from FH, otherwise      ──> max_fwd = end
//!   ACK A from MH, armed, A covers R's segment ──> N_eff ACKs R < A_1 < … < A_N = A to the FH
//!   any other ACK                ──> unchanged (an ACK below R's end keeps SPACK armed)
//! ```
//!
//! Paper rules (§IV, Fig. 6): the BS compares each FH segment with the sequence numbers already
//! forwarded; a retransmission's sequence number is stored as Retrans_Seq_No and activates
//! SPACK; the BS then turns the MH's ACK into several ACKs numbered between Retrans_Seq_No and
//! the ACK's number, and the FH, which grows its window per ACK received, recovers faster.
//!
//! Rules the paper leaves open (this model's own, derived from what the scheme is for):
//! - **Which ACK is split:** the first ACK from the MH whose number covers the whole
//!   retransmitted segment (A ≥ R + its length). Earlier ACKs pass unchanged and SPACK stays
//!   armed; duplicate and old ACKs (A ≤ the last ACK forwarded) always pass unchanged.
//! - **Numbers:** the candidates are the segment boundaries R + j·MSS strictly between
//!   B = max(R, last ACK forwarded) and A, then A itself (m candidates: the segments in (B, A]).
//!   N_eff = min(N, m) ACKs are sent; the k-th is candidate ⌊k·m / N_eff⌋, i.e.
//!   A_k = R + ⌊k·(A − R)/N⌋ rounded down to a segment boundary when B = R and m is a multiple
//!   of N, the last is A. Since N_eff ≤ m the numbers are strictly increasing, all above the
//!   last ACK forwarded (an ACK equal to it would be a duplicate ACK at the FH) and none above
//!   A: the agent never acknowledges a byte the MH has not acknowledged. MSS is the largest
//!   payload seen on the connection; boundaries are R + j·MSS because a sender's segments are
//!   MSS-sized from the retransmitted one on (only the stream's last may be shorter, and A
//!   covers it).
//! - **Fields:** each split ACK is a copy of the real ACK (window, SACK blocks, congestion
//!   header, size, flow) with only the ACK number changed; the real ACK itself carries A. The
//!   SACK blocks keep their byte positions ([`crate::packet::Acknowledgment::renumbered`]): they
//!   travel as offsets from the ACK number, and shifting them once made a SACK sender believe
//!   the MH held data it had lost.
//! - **Timing:** back to back by default (`spacing` 0: all N leave at the instant the real ACK
//!   arrives, in increasing order); with `spacing` > 0 the k-th leaves (k−1)·spacing later, and
//!   a newer ACK of the same connection first releases the ones still waiting, so ACK numbers
//!   toward the FH never go backwards.
//! - The agent never retransmits and never creates data.

use std::collections::BTreeMap;

use super::{classify, tcp, Conns, Role};
use crate::hook::{HookCounters, HookOutput, IfaceId, NodeHook};
use crate::packet::Packet;
use crate::time::{SimDuration, SimTime};

/// Parameters of the SPACK agent (scenario: `hook = { type = "spack", ... }`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SpackConfig {
    /// N: ACKs sent to the FH in place of the one that covers a retransmission (≥ 1; 1 turns
    /// the agent into plain forwarding). The paper varies it and gives no default; 4 here.
    pub split_acks: u32,
    /// Gap between consecutive split ACKs; zero sends them back to back.
    pub spacing: SimDuration,
}

impl Default for SpackConfig {
    fn default() -> Self {
        SpackConfig {
            split_acks: 4,
            spacing: SimDuration::ZERO,
        }
    }
}

/// What the agent did, summed over connections.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SpackStats {
    /// Data segments from the FH recognized as retransmissions.
    pub retransmissions_seen: u64,
    /// Times SPACK was armed (a retransmission while not armed).
    pub armed: u64,
    /// Real ACKs replaced by more than one ACK.
    pub splits: u64,
    /// ACKs created (N_eff − 1 per split).
    pub acks_created: u64,
}

#[derive(Clone, Debug, Default)]
struct Conn {
    /// Highest end sequence number forwarded toward the MH.
    max_fwd: u64,
    /// Largest payload seen: the sender's MSS.
    mss: u64,
    /// Retrans_Seq_No and the end of that segment, while SPACK is armed.
    armed: Option<(u64, u64)>,
    /// Highest ACK number sent on toward the FH.
    last_ack_fwd: Option<u64>,
    /// Split ACKs of this connection waiting for their slot (`spacing` > 0).
    pending: u32,
}

#[derive(Debug)]
struct Held {
    conn: u32,
    pkt: Packet,
    /// A created ACK (counted as injected on release) rather than the real one.
    created: bool,
}

/// The SPACK base-station agent.
#[derive(Debug)]
pub struct Spack {
    cfg: SpackConfig,
    conns: Conns<Conn>,
    /// Split ACKs waiting for their slot, by (release time, arrival order).
    held: BTreeMap<(SimTime, u64), Held>,
    held_seq: u64,
    /// Real ACKs among `held` (created ones do not exist for the network until released).
    held_real: usize,
    points: Vec<u64>,
    release: Vec<(SimTime, u64)>,
    stats: SpackStats,
}

impl Spack {
    pub fn new(cfg: SpackConfig) -> Self {
        Spack {
            cfg,
            conns: Conns::default(),
            held: BTreeMap::new(),
            held_seq: 0,
            held_real: 0,
            points: Vec::new(),
            release: Vec::new(),
            stats: SpackStats::default(),
        }
    }

    pub fn stats(&self) -> SpackStats {
        self.stats
    }

    fn on_data(&mut self, pkt: &Packet) {
        let Role::Data(key) = classify(pkt) else {
            return;
        };
        let h = tcp(pkt);
        let c = self.conns.find_or_insert(key, Conn::default);
        let conn = self.conns.get_mut(c);
        conn.mss = conn.mss.max(h.len as u64);
        // §IV / Fig. 6: a segment at or below what was already forwarded is a retransmission;
        // its sequence number becomes Retrans_Seq_No and SPACK is activated (once).
        if h.seq < conn.max_fwd {
            self.stats.retransmissions_seen += 1;
            if conn.armed.is_none() {
                conn.armed = Some((h.seq, h.end_seq()));
                self.stats.armed += 1;
            }
        }
        conn.max_fwd = conn.max_fwd.max(h.end_seq());
    }

    fn on_ack(&mut self, now: SimTime, c: u32, pkt: Packet, out: &mut HookOutput) {
        if self.conns.get(c).pending > 0 {
            // Derived: a newer ACK must not overtake split ACKs still waiting.
            self.release_conn(c, out);
        }
        let a = tcp(&pkt).ack.number();
        let conn = self.conns.get_mut(c);
        let last = conn.last_ack_fwd;
        let armed = match conn.armed {
            // §IV: the ACK for the retransmitted packet is the one split.
            Some((r, r_end)) if a >= r_end => {
                conn.armed = None;
                Some(r)
            }
            _ => None,
        };
        conn.last_ack_fwd = Some(last.map_or(a, |l| l.max(a)));
        let mss = conn.mss;
        let Some(r) = armed else {
            out.forward(pkt);
            return;
        };
        split_points(r, a, last, mss, self.cfg.split_acks, &mut self.points);
        if self.points.len() <= 1 {
            out.forward(pkt);
            return;
        }
        self.stats.splits += 1;
        self.stats.acks_created += self.points.len() as u64 - 1;
        let n = self.points.len();
        for k in 0..n - 1 {
            let mut p = pkt.clone();
            if let Some(h) = p.tcp_mut() {
                // The blocks stay where they were (split ACKs with SACK: issue 9).
                h.ack = h.ack.renumbered(self.points[k]);
            }
            self.emit(now, c, k, p, true, out);
        }
        self.emit(now, c, n - 1, pkt, false, out);
    }

    /// Sends the k-th ACK of a split (k from 0) now or holds it for its slot.
    fn emit(
        &mut self,
        now: SimTime,
        c: u32,
        k: usize,
        p: Packet,
        created: bool,
        out: &mut HookOutput,
    ) {
        if k == 0 || self.cfg.spacing == SimDuration::ZERO {
            if created {
                out.inject(p);
            } else {
                out.forward(p);
            }
            return;
        }
        let at = now + self.cfg.spacing.saturating_mul(k as u64);
        self.held_seq += 1;
        self.held.insert(
            (at, self.held_seq),
            Held {
                conn: c,
                pkt: p,
                created,
            },
        );
        self.conns.get_mut(c).pending += 1;
        if !created {
            self.held_real += 1;
        }
    }

    fn release(&mut self, key: (SimTime, u64), out: &mut HookOutput) {
        if let Some(h) = self.held.remove(&key) {
            self.conns.get_mut(h.conn).pending -= 1;
            if h.created {
                out.inject(h.pkt);
            } else {
                self.held_real -= 1;
                out.forward(h.pkt);
            }
        }
    }

    /// Sends every held ACK of connection `c` now, in order.
    fn release_conn(&mut self, c: u32, out: &mut HookOutput) {
        let mut keys = std::mem::take(&mut self.release);
        keys.clear();
        keys.extend(
            self.held
                .iter()
                .filter(|(_, h)| h.conn == c)
                .map(|(k, _)| *k),
        );
        for &k in &keys {
            self.release(k, out);
        }
        self.release = keys;
    }
}

/// The ACK numbers that replace a real ACK `a` covering the retransmission at `r`, given the
/// highest ACK already forwarded (`last_fwd`), the MSS and N (module doc, "Numbers"). Empty if
/// `a` acknowledges nothing new; otherwise strictly increasing, all above
/// max(r, last_fwd), ending at `a`.
pub fn split_points(r: u64, a: u64, last_fwd: Option<u64>, mss: u64, n: u32, out: &mut Vec<u64>) {
    out.clear();
    let base = last_fwd.map_or(r, |l| l.max(r));
    if a <= base {
        return;
    }
    if mss == 0 || n <= 1 {
        out.push(a);
        return;
    }
    // Boundaries r + j·mss with base < r + j·mss < a: j from j_lo to j_hi.
    let j_lo = (base - r) / mss + 1;
    let j_hi = (a - r - 1) / mss;
    let inner = if j_hi >= j_lo { j_hi - j_lo + 1 } else { 0 };
    let m = inner as u128 + 1;
    let n_eff = (n as u128).min(m);
    for k in 1..=n_eff {
        let i = k * m / n_eff; // 1..=m, strictly increasing in k since m >= n_eff
        out.push(if i == m {
            a
        } else {
            r + (j_lo + i as u64 - 1) * mss
        });
    }
}

impl NodeHook for Spack {
    fn on_packet(&mut self, now: SimTime, pkt: Packet, _: Option<IfaceId>, out: &mut HookOutput) {
        match classify(&pkt) {
            Role::Data(_) => {
                self.on_data(&pkt);
                out.forward(pkt);
            }
            Role::Ack(key) => {
                // An ACK can precede the first data segment the agent sees (the agent was
                // behind a route change, say): remember it, so a split stays above it.
                let c = self.conns.find_or_insert(key, Conn::default);
                self.on_ack(now, c, pkt, out);
            }
            Role::Other => out.forward(pkt),
        }
    }

    fn on_timeout(&mut self, now: SimTime, out: &mut HookOutput) {
        while let Some((&key, _)) = self.held.first_key_value() {
            if key.0 > now {
                break;
            }
            self.release(key, out);
        }
    }

    fn poll_timeout(&self) -> Option<SimTime> {
        self.held.first_key_value().map(|(k, _)| k.0)
    }

    fn held(&self) -> usize {
        self.held_real
    }

    fn counters(&self) -> Option<HookCounters> {
        let s = self.stats;
        Some(HookCounters {
            agent: "spack",
            values: vec![
                ("retransmissions_seen", s.retransmissions_seen),
                ("times_armed", s.armed),
                ("acks_split", s.splits),
                ("acks_created", s.acks_created),
            ],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::*;
    use proptest::prelude::*;

    fn acks_of(out: &mut HookOutput) -> Vec<u64> {
        out.packets
            .drain(..)
            .map(|p| p.tcp().map_or(u64::MAX, |h| h.ack.number()))
            .collect()
    }

    fn spack(n: u32) -> Spack {
        Spack::new(SpackConfig {
            split_acks: n,
            spacing: SimDuration::ZERO,
        })
    }

    /// Segments 0..10 forwarded, segment 0 retransmitted by the FH.
    fn armed_at_zero(s: &mut Spack, out: &mut HookOutput) {
        for i in 0..10 {
            s.on_packet(ms(0), data(i * MSS), None, out);
        }
        s.on_packet(ms(300), data(0), None, out);
        out.packets.clear();
    }

    #[test]
    fn the_ack_covering_a_retransmission_becomes_n_increasing_acks_ending_at_it() {
        let mut s = spack(4);
        let mut out = HookOutput::default();
        armed_at_zero(&mut s, &mut out);
        s.on_packet(ms(320), ack(10 * MSS), None, &mut out);
        assert_eq!(
            acks_of(&mut out),
            vec![2 * MSS, 5 * MSS, 7 * MSS, 10 * MSS],
            "candidates 1..=10 segments, picks floor(k*10/4)"
        );
        assert_eq!(out.injected, 3, "three created, the real ACK forwarded");
        assert_eq!(s.stats().splits, 1);
    }

    #[test]
    fn unarmed_and_duplicate_acks_pass_unchanged() {
        let mut s = spack(4);
        let mut out = HookOutput::default();
        for i in 0..10 {
            s.on_packet(ms(0), data(i * MSS), None, &mut out);
        }
        out.packets.clear();
        for a in [3 * MSS, 3 * MSS, 3 * MSS, 8 * MSS] {
            s.on_packet(ms(100), ack(a), None, &mut out);
        }
        assert_eq!(acks_of(&mut out), vec![3 * MSS, 3 * MSS, 3 * MSS, 8 * MSS]);
        assert_eq!(out.injected, 0);
        // An ACK of a connection never seen passes too.
        let mut other = ack(5);
        if let Some(h) = other.tcp_mut() {
            h.src_port = 7;
        }
        s.on_packet(ms(100), other, None, &mut out);
        assert_eq!(acks_of(&mut out), vec![5]);
    }

    #[test]
    fn an_ack_below_the_retransmitted_segment_passes_and_keeps_spack_armed() {
        let mut s = spack(4);
        let mut out = HookOutput::default();
        for i in 0..10 {
            s.on_packet(ms(0), data(i * MSS), None, &mut out);
        }
        s.on_packet(ms(0), ack(2 * MSS), None, &mut out);
        // The FH retransmits segment 4 (NewReno after a partial ACK, say).
        s.on_packet(ms(300), data(4 * MSS), None, &mut out);
        out.packets.clear();
        s.on_packet(ms(310), ack(4 * MSS), None, &mut out);
        assert_eq!(acks_of(&mut out), vec![4 * MSS], "does not cover R = 4000");
        s.on_packet(ms(320), ack(10 * MSS), None, &mut out);
        // Candidates above max(R, last) = 4000: 5000..9000 and 10000, m = 6, picks 1, 3, 4, 6.
        assert_eq!(acks_of(&mut out), vec![5 * MSS, 7 * MSS, 8 * MSS, 10 * MSS]);
        s.on_packet(ms(330), ack(10 * MSS), None, &mut out);
        assert_eq!(
            acks_of(&mut out),
            vec![10 * MSS],
            "disarmed after one split"
        );
    }

    #[test]
    fn a_stretch_ack_of_fewer_segments_than_n_is_split_once_per_segment() {
        let mut s = spack(8);
        let mut out = HookOutput::default();
        armed_at_zero(&mut s, &mut out);
        s.on_packet(ms(320), ack(3 * MSS), None, &mut out);
        assert_eq!(acks_of(&mut out), vec![MSS, 2 * MSS, 3 * MSS], "N_eff = 3");
        // A short last segment: the last split ACK is A itself, not a boundary past it.
        let mut points = vec![];
        split_points(0, 2500, None, MSS, 4, &mut points);
        assert_eq!(points, vec![1000, 2000, 2500]);
    }

    #[test]
    fn spaced_split_acks_leave_in_order_and_count_as_held_until_released() {
        let mut s = Spack::new(SpackConfig {
            split_acks: 4,
            spacing: SimDuration::from_millis(1),
        });
        let mut out = HookOutput::default();
        armed_at_zero(&mut s, &mut out);
        s.on_packet(ms(320), ack(10 * MSS), None, &mut out);
        assert_eq!(acks_of(&mut out), vec![2 * MSS], "the first leaves at once");
        assert_eq!(
            s.held(),
            1,
            "only the real ACK exists in the network while held"
        );
        assert_eq!(s.poll_timeout(), Some(ms(321)));
        s.on_timeout(ms(321), &mut out);
        assert_eq!(acks_of(&mut out), vec![5 * MSS]);
        // A newer ACK arrives before the rest: they go first.
        s.on_packet(ms(321), ack(10 * MSS), None, &mut out);
        assert_eq!(acks_of(&mut out), vec![7 * MSS, 10 * MSS, 10 * MSS]);
        assert_eq!(s.held(), 0);
        assert_eq!(s.poll_timeout(), None);
    }

    #[derive(Clone, Debug)]
    enum Ev {
        /// The FH sends (or resends) segment i.
        Data(u64),
        /// The MH acknowledges up to segment i (cumulative, may repeat or go back).
        Ack(u64),
    }

    fn ev() -> impl Strategy<Value = Ev> {
        prop_oneof![(0u64..30).prop_map(Ev::Data), (0u64..31).prop_map(Ev::Ack)]
    }

    proptest! {
        /// Random data and ACK sequences (losses, retransmissions, reordering, duplicates):
        /// no ACK toward the FH ever exceeds the highest ACK the MH has sent, every split is
        /// strictly increasing, above the last ACK forwarded, ends at the real ACK and has at
        /// most N ACKs.
        #[test]
        fn spack_never_acknowledges_data_the_mobile_host_has_not_acknowledged(
            evs in proptest::collection::vec(ev(), 1..120),
            n in 1u32..8,
        ) {
            let mut s = spack(n);
            let mut out = HookOutput::default();
            let mut highest_from_mh: Option<u64> = None;
            let mut last_to_fh: Option<u64> = None;
            for (t, e) in evs.iter().enumerate() {
                match e {
                    Ev::Data(i) => {
                        s.on_packet(ms(t as u64), data(i * MSS), None, &mut out);
                        prop_assert_eq!(out.packets.len(), 1);
                        out.packets.clear();
                    }
                    Ev::Ack(i) => {
                        let a = i * MSS;
                        highest_from_mh = Some(highest_from_mh.map_or(a, |h| h.max(a)));
                        s.on_packet(ms(t as u64), ack(a), None, &mut out);
                        let acks = acks_of(&mut out);
                        prop_assert!(!acks.is_empty() && acks.len() <= n as usize);
                        prop_assert_eq!(*acks.last().unwrap(), a, "the real ACK comes last");
                        for w in acks.windows(2) {
                            prop_assert!(w[0] < w[1], "split ACKs strictly increase: {:?}", acks);
                        }
                        if acks.len() > 1 {
                            prop_assert!(last_to_fh.is_none_or(|l| acks[0] > l),
                                "a split ACK would be a duplicate: {:?} after {:?}", acks, last_to_fh);
                        }
                        for &x in &acks {
                            prop_assert!(x <= highest_from_mh.unwrap(),
                                "ACK {} toward the FH, MH acknowledged only {:?}", x, highest_from_mh);
                        }
                        last_to_fh = Some(last_to_fh.map_or(a, |l| l.max(a)));
                    }
                }
            }
            let st = s.stats();
            prop_assert_eq!(out.injected, st.acks_created);
        }
    }
}
