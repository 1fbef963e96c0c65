// SPDX-License-Identifier: MIT
//! The paper's load-sharing (LS) mode (seed 004 §3): one association sends new data on every
//! path at once, each path with its own sequence space and its own error and congestion
//! control, and a lost chunk is resent on its own path *and* once more on another.
//!
//! ```text
//!   association manager: TSNs, the receiver window, distribution (Fig. 6), Rtx data buffer
//!   and Rtx-info table (Fig. 7)
//!        │ send(tsn) with SID = path, SSN = next_ssn[path]++
//!        ▼
//!   path module i: SSN space i ── cwnd_i, ssthresh_i, flight_i, RTO_i, T3_i, HTNA fast
//!                  retransmit in SSN space, its own Fast Recovery (path.rs rules)
//! ```
//!
//! The receiver answers each DATA with the paper's SACK (Fig. 4), out of the interface the
//! DATA came in by: Cumulative TSN Ack (for flow control), Cumulative SSN Ack of that path,
//! gap blocks and duplicates in that path's SSNs. A path delivers its packets in order, so
//! reordering *between* paths never opens an SSN gap: no false fast retransmits.
//!
//! Choices where the paper leaves the rule open (`docs/sctp.md` §6):
//! - the receive window: `rwnd_pkts = floor(a_rwnd / C) - outstanding`, a_rwnd in bytes, C the
//!   chunk's user data, outstanding the TSNs neither cumulatively nor SSN-acknowledged (the
//!   paper's Virtual Send buffer, RFC 4960 §6.2.1 D iv); `rwnd_outstanding =
//!   "htsn_minus_ctsn"` takes the formulas' HTSN - CTSN word for word, which counts a chunk the
//!   receiver holds twice (a_rwnd excludes it already). UA (the application's data) is
//!   unlimited, the application being backlogged;
//! - distribution: each path's share is of its *open* window (cwnd - flight, in chunks,
//!   rounded up as the single-path rule lets a window overshoot by less than a chunk); shares
//!   floored, and what flooring leaves goes one chunk at a time by largest remainder, so a
//!   small window is still used;
//! - a resend that is lost again: the path keeps resending its SSN until it is acknowledged,
//!   even when the TSN arrived by another path (its SSN hole must close);
//! - a failed path keeps cwnd = 1 MTU, gets no new data and no redundant copies, and carries
//!   its own resends; an acknowledgment of data sent on it makes it active again.
//!
//! Max.Burst (RFC 4960 §6.1 D) is per path, as in CMT: in answer to one SACK, heartbeat ACK or
//! timer a path sends at most `max_burst` packets, its fast retransmit, resends and redundant
//! copies included. The paper leaves it to the SCTP it extends. Without it a SACK that opens
//! the receive window lets a path put its whole open window on its bottleneck queue at one
//! instant. ns-2's module, the paper's tool, applies the limit only once a SACK acknowledges a
//! retransmitted chunk (its `eApplyMaxBurst`, the implementers' guide's change to RFC 2960
//! §7.2.4), until it has cut one burst short: `max_burst_rule = "ns2"`, here per path.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use crate::endpoint::{Endpoint, FlowCounters};
use crate::packet::{Packet, SctpChunk, SctpData, SctpHeader, SctpSack, Transport, DEFAULT_TTL};
use crate::time::SimTime;

use super::config::{LsOutstanding, MaxBurstRule, DATA_OVERHEAD, HEARTBEAT_BYTES};
use super::path::Path;
use super::sack::{self, State, Tx};
use super::sender::SctpSenderConfig;

/// One SSN of a path: the TSN it carries.
#[derive(Clone, Copy, Debug)]
struct Slot {
    tsn: u32,
    tx: Tx,
    retransmitted: bool,
}

impl AsMut<Tx> for Slot {
    fn as_mut(&mut self) -> &mut Tx {
        &mut self.tx
    }
}

/// A path module: the common per-path state and its SSN space.
struct PathModule {
    path: Path,
    base: u32,
    next_ssn: u32,
    slots: VecDeque<Slot>,
    marked: BTreeSet<u32>,
    fast_recovery: Option<u32>,
    /// ns-2's Max.Burst rule: armed when a SACK cumulatively acknowledges a retransmitted
    /// SSN of this path, disarmed when the limit has stopped a burst.
    burst_armed: bool,
}

/// One entry of the Rtx-info table: per path, whether the TSN was sent there and whether an
/// acknowledgment came back from there.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RtxInfo {
    pub send: u64,
    pub ack: u64,
}

pub struct LsSender {
    cfg: SctpSenderConfig,
    paths: Vec<PathModule>,
    next_tsn: u32,
    /// CTSN + 1: the receiver has every TSN below it.
    ctsn_next: u32,
    /// TSNs above the CTSN known to be acknowledged: entry k is TSN `ctsn_next + k` (a window
    /// of flags, not a tree: one push or pop per chunk on the per-packet path).
    acked_above: VecDeque<bool>,
    /// How many entries of `acked_above` are true: the TSNs the receiver holds above the CTSN,
    /// as far as the SSN SACKs have told.
    acked_above_count: u64,
    /// Scratch buffers reused by every SACK (no allocation per packet).
    scratch_tsns: Vec<u32>,
    scratch_open: Vec<u64>,
    scratch_quota: Vec<u64>,
    a_rwnd: u64,
    /// TSNs waiting for a redundant copy (the Rtx data buffer).
    rtx_buffer: BTreeSet<u32>,
    rtx_info: BTreeMap<u32, RtxInfo>,
    started: bool,
    counters: FlowCounters,
    /// SACKs whose a_rwnd was not used: not provably the newest.
    rwnd_ignored: u64,
    /// Copies sent by redundant retransmission.
    redundant: u64,
}

impl LsSender {
    pub fn new(cfg: SctpSenderConfig) -> LsSender {
        let paths = cfg
            .paths
            .iter()
            .map(|&(l, p)| PathModule {
                path: Path::new(l, p, &cfg.spec, cfg.start),
                base: 0,
                next_ssn: 0,
                slots: VecDeque::new(),
                marked: BTreeSet::new(),
                fast_recovery: None,
                burst_armed: false,
            })
            .collect();
        LsSender {
            a_rwnd: cfg.spec.rcv_buffer,
            cfg,
            paths,
            next_tsn: 0,
            ctsn_next: 0,
            acked_above: VecDeque::new(),
            acked_above_count: 0,
            scratch_tsns: Vec::new(),
            scratch_open: Vec::new(),
            scratch_quota: Vec::new(),
            rtx_buffer: BTreeSet::new(),
            rtx_info: BTreeMap::new(),
            started: false,
            counters: FlowCounters::default(),
            rwnd_ignored: 0,
            redundant: 0,
        }
    }

    pub fn counters(&self) -> &FlowCounters {
        &self.counters
    }
    pub fn path(&self, i: usize) -> &Path {
        &self.paths[i].path
    }
    pub fn path_count(&self) -> usize {
        self.paths.len()
    }
    pub fn primary(&self) -> usize {
        self.cfg.primary
    }
    pub fn cwnd_total(&self) -> u64 {
        self.paths.iter().map(|m| m.path.cwnd).sum()
    }
    pub fn a_rwnd(&self) -> u64 {
        self.a_rwnd
    }
    pub fn rtx_info(&self) -> &BTreeMap<u32, RtxInfo> {
        &self.rtx_info
    }
    pub fn redundant_copies(&self) -> u64 {
        self.redundant
    }
    pub fn rwnd_ignored(&self) -> u64 {
        self.rwnd_ignored
    }

    fn chunk_len(&self) -> u64 {
        self.cfg.spec.chunk_len() as u64
    }

    /// The packets each active path may send now (Fig. 6), with the choices of the module doc.
    pub fn distribution(&self) -> Vec<u64> {
        let (mut open, mut quota) = (Vec::new(), Vec::new());
        self.distribute(&mut open, &mut quota);
        quota
    }

    /// [`LsSender::distribution`] into `quota`, with `open` as scratch. Fig. 6 shares the
    /// receive window by the paths' open windows; then each path module sends at most what
    /// Max.Burst leaves it in this send opportunity (RFC 4960 §6.1 D, counted as ns-2 counts
    /// its per-destination burst), and the rest of its share waits for the next SACK.
    fn distribute(&self, open: &mut Vec<u64>, quota: &mut Vec<u64>) {
        let c = self.chunk_len();
        let rwnd_pkts = self.rwnd_pkts();
        open.clear();
        open.extend(self.paths.iter().map(|m| {
            let p = &m.path;
            if p.active && p.flight < p.cwnd {
                (p.cwnd - p.flight).div_ceil(c)
            } else {
                0
            }
        }));
        share_into(open, rwnd_pkts, quota);
        for (i, q) in quota.iter_mut().enumerate() {
            let room = self.burst_limit(i).saturating_sub(self.paths[i].path.burst);
            *q = (*q).min(room as u64);
        }
    }

    /// The receive-window rule's outstanding chunks (Fig. 6, §3.5): HTSN - CTSN as the paper
    /// writes it, or without the TSNs already acknowledged by an SSN SACK (`LsOutstanding`).
    pub fn outstanding(&self) -> u64 {
        let above_cum = (self.next_tsn - self.ctsn_next) as u64;
        match self.cfg.spec.ls_outstanding {
            LsOutstanding::HtsnMinusCtsn => above_cum,
            LsOutstanding::Unacked => above_cum - self.acked_above_count,
        }
    }

    /// The receive window in chunks as Fig. 6 computes it before new data goes out.
    pub fn rwnd_pkts(&self) -> u64 {
        (self.a_rwnd / self.chunk_len()).saturating_sub(self.outstanding())
    }

    /// Max.Burst: packets path `i` may send per send opportunity (no limit when 0, nor under
    /// ns-2's rule while the path is not armed).
    fn burst_limit(&self, i: usize) -> u32 {
        let spec = &self.cfg.spec;
        let applies = match spec.max_burst_rule {
            MaxBurstRule::Rfc4960 => true,
            MaxBurstRule::Ns2 => self.paths[i].burst_armed,
        };
        match spec.max_burst {
            b if b > 0 && applies => b,
            _ => u32::MAX,
        }
    }

    /// A new send opportunity (a SACK, a heartbeat ACK, a timer): every path's burst count
    /// starts again (RFC 4960 §6.1 D; ns-2 resets its per-destination `uiBurstLength` the same
    /// way).
    fn new_send_opportunity(&mut self) {
        for m in &mut self.paths {
            m.path.burst = 0;
        }
    }

    /// Path `i` may send one more packet in this send opportunity: window open and Max.Burst
    /// not reached.
    fn may_send(&self, i: usize) -> bool {
        let p = &self.paths[i].path;
        p.flight < p.cwnd && p.burst < self.burst_limit(i)
    }

    fn packet(&self, i: usize, size: u32, chunk: SctpChunk, now: SimTime) -> Packet {
        let p = &self.paths[i].path;
        Packet {
            src: p.local,
            dst: p.peer,
            size,
            dscp: 0,
            ecn: 0,
            ttl: DEFAULT_TTL,
            flow: self.cfg.flow,
            sent_at: now,
            transport: Transport::Sctp(SctpHeader {
                src_port: self.cfg.port,
                dst_port: self.cfg.dst_port,
                chunk,
            }),
        }
    }

    /// Put SSN `ssn` of path `i` on the wire (a new SSN if `ssn == next_ssn`, carrying `tsn`).
    fn send_ssn(&mut self, i: usize, ssn: u32, tsn: u32, now: SimTime, out: &mut Vec<Packet>) {
        let hb_interval = self.cfg.spec.hb_interval;
        let len = self.cfg.spec.chunk_len();
        let m = &mut self.paths[i];
        let resend = ssn < m.next_ssn;
        let copy = !resend && tsn < self.next_tsn;
        if resend {
            let s = &mut m.slots[(ssn - m.base) as usize];
            s.tx.state = State::InFlight;
            s.tx.misses = 0;
            s.retransmitted = true;
            m.marked.remove(&ssn);
            m.path.untime(ssn);
        } else {
            m.slots.push_back(Slot {
                tsn,
                tx: Tx::in_flight(len),
                retransmitted: copy,
            });
            m.next_ssn += 1;
            if !copy {
                m.path.time(ssn, now);
            }
        }
        let p = &mut m.path;
        p.flight += len as u64;
        p.burst += 1;
        p.counters.data_packets += 1;
        p.counters.data_bytes += len as u64;
        if resend || copy {
            p.counters.retransmits += 1;
            self.counters.retransmits += 1;
        }
        if p.t3.is_none() {
            p.t3 = Some(now + p.rto.rto());
        }
        p.hb_next = now + p.rto.rto() + hb_interval;
        if tsn == self.next_tsn {
            self.next_tsn += 1;
        }
        let size = DATA_OVERHEAD + len.div_ceil(4) * 4;
        self.counters.bytes_sent += len as u64;
        self.counters.wire_bytes_sent += size as u64;
        self.counters.packets_sent += 1;
        self.counters.first_send.get_or_insert(now);
        let data = SctpData {
            tsn,
            sid: i as u16,
            ssn,
            len,
            retransmission: resend || copy,
        };
        out.push(self.packet(i, size, SctpChunk::Data(data), now));
    }

    fn is_acked(&self, tsn: u32) -> bool {
        tsn < self.ctsn_next
            || self
                .acked_above
                .get((tsn - self.ctsn_next) as usize)
                .is_some_and(|&a| a)
    }

    /// Note TSN `tsn` (at or above the CTSN) as acknowledged; true if it was not before.
    fn note_acked(&mut self, tsn: u32) -> bool {
        let k = (tsn - self.ctsn_next) as usize;
        if self.acked_above.len() <= k {
            self.acked_above.resize(k + 1, false);
        }
        let newly = !std::mem::replace(&mut self.acked_above[k], true);
        self.acked_above_count += newly as u64;
        newly
    }

    fn send_what_fits(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        if !self.started {
            return;
        }
        // 1. Each path module resends its own marked SSNs (on its own path, failed or not).
        for i in 0..self.paths.len() {
            loop {
                let m = &self.paths[i];
                let Some(&ssn) = m.marked.first() else { break };
                if !self.may_send(i) {
                    break;
                }
                let tsn = m.slots[(ssn - m.base) as usize].tsn;
                self.send_ssn(i, ssn, tsn, now, out);
            }
        }
        // 2. Redundant copies of lost TSNs, each to a path it has not been sent on (Fig. 7).
        let mut waiting = std::mem::take(&mut self.scratch_tsns);
        waiting.clear();
        waiting.extend(self.rtx_buffer.iter().copied());
        for &tsn in &waiting {
            if self.is_acked(tsn) {
                self.rtx_buffer.remove(&tsn);
                continue;
            }
            let sent = self.rtx_info.get(&tsn).map_or(0, |e| e.send);
            let q = (0..self.paths.len())
                .find(|&q| sent & (1 << q) == 0 && self.paths[q].path.active && self.may_send(q));
            if let Some(q) = q {
                self.rtx_info.entry(tsn).or_default().send |= 1 << q;
                self.rtx_buffer.remove(&tsn);
                self.redundant += 1;
                let ssn = self.paths[q].next_ssn;
                self.send_ssn(q, ssn, tsn, now, out);
            }
        }
        self.scratch_tsns = waiting;
        // 3. New data, distributed by the windows (Fig. 6).
        if self.cfg.stop.is_some_and(|s| now >= s) {
            return;
        }
        let (mut open, mut quota) = (
            std::mem::take(&mut self.scratch_open),
            std::mem::take(&mut self.scratch_quota),
        );
        self.distribute(&mut open, &mut quota);
        for (i, &n) in quota.iter().enumerate() {
            for _ in 0..n {
                let (ssn, tsn) = (self.paths[i].next_ssn, self.next_tsn);
                self.send_ssn(i, ssn, tsn, now, out);
            }
        }
        self.scratch_open = open;
        self.scratch_quota = quota;
        // ns-2 disarms Max.Burst once it has cut a burst short.
        for i in 0..self.paths.len() {
            if self.paths[i].path.burst >= self.burst_limit(i) {
                self.paths[i].burst_armed = false;
            }
        }
    }

    fn on_sack(&mut self, now: SimTime, s: &SctpSack, out: &mut Vec<Packet>) {
        let i = s.sid as usize;
        if i >= self.paths.len() || !s.any {
            return;
        }
        let mtu = self.cfg.spec.mtu();
        let mut newly_acked_tsn = false;
        // Coupled increase (RFC 6356), from the windows before this SACK.
        let lia = self
            .cfg
            .spec
            .coupled
            .then(|| super::path::lia_alpha(self.paths.iter().map(|m| &m.path)));
        let m = &mut self.paths[i];
        let cum_next = s.cum_ssn.wrapping_add(1);
        if cum_next >= m.base && cum_next <= m.next_ssn {
            let flight_before = m.path.flight;
            let earliest = m
                .slots
                .iter()
                .position(|c| c.tx.state == State::InFlight)
                .map(|k| m.base + k as u32);
            let advanced = cum_next > m.base;
            let mut acked = 0u64;
            let mut htna = None;
            // The scratch vector last held the Rtx data buffer's TSNs (`send_what_fits`): empty it,
            // or those would be taken as acknowledged here.
            let mut acked_tsns = std::mem::take(&mut self.scratch_tsns);
            acked_tsns.clear();
            let (base, next) = (m.base, m.next_ssn);
            let (path, marked) = (&mut m.path, &mut m.marked);
            let gaps = s.gap_blocks();
            sack::for_each_newly_covered(&mut m.slots, base, next, s.cum_ssn, gaps, |ssn, c| {
                if !c.tx.ack(ssn, &mut path.flight, marked) {
                    return;
                }
                acked += c.tx.len as u64;
                htna = Some(ssn);
                acked_tsns.push(c.tsn);
                path.sample_if_timed(ssn, now);
            });
            let gap_acked_earliest = earliest.is_some_and(|e| {
                e < cum_next || m.slots[(e - m.base) as usize].tx.state == State::GapAcked
            });
            let passed = (cum_next - m.base) as usize;
            if m.slots.iter().take(passed).any(|c| c.retransmitted) {
                m.burst_armed = true;
            }
            sack::forget_below(&mut m.slots, &mut m.base, cum_next);
            if m.fast_recovery.is_some_and(|x| cum_next > x) {
                m.fast_recovery = None;
            }
            if acked > 0 {
                m.path.counters.bytes_acked += acked;
                m.path.confirm();
            }
            if advanced {
                let in_fr = m.fast_recovery.is_some();
                match lia {
                    Some(l) => m.path.grow_coupled(acked, flight_before, in_fr, mtu, l),
                    None => m.path.grow(acked, flight_before, in_fr, mtu),
                }
            }
            if m.path.flight == 0 {
                m.path.pba = 0;
                m.path.t3 = None;
            } else if gap_acked_earliest {
                m.path.t3 = Some(now + m.path.rto.rto());
            }
            // HTNA in this path's SSN space (§7.2.4).
            let threshold = self.cfg.spec.fast_rtx_threshold as u8;
            let mut fast = Vec::new();
            if let Some(h) = htna {
                sack::count_misses(&mut m.slots, m.base, h, threshold, &mut fast, |_, _| 1);
            }
            for &tsn in &acked_tsns {
                if !self.rtx_info.is_empty() {
                    self.rtx_info.entry(tsn).and_modify(|e| e.ack |= 1 << i);
                }
                if tsn >= self.ctsn_next && self.note_acked(tsn) {
                    newly_acked_tsn = true;
                }
            }
            acked_tsns.clear();
            self.scratch_tsns = acked_tsns;
            if !fast.is_empty() {
                self.fast_retransmit(i, &fast, now, out);
            }
        }
        // Flow control: only a provably newest SACK updates the window.
        let ctsn_next = s.cum_tsn.wrapping_add(1);
        if ctsn_next > self.ctsn_next && ctsn_next <= self.next_tsn {
            let advance = (ctsn_next - self.ctsn_next) as usize;
            let passed = self
                .acked_above
                .drain(..advance.min(self.acked_above.len()))
                .filter(|&a| a)
                .count();
            self.acked_above_count -= passed as u64;
            self.ctsn_next = ctsn_next;
            self.a_rwnd = s.a_rwnd as u64;
        } else if ctsn_next == self.ctsn_next && newly_acked_tsn {
            self.a_rwnd = s.a_rwnd as u64;
        } else {
            self.rwnd_ignored += 1;
        }
        // Rtx-info entries go once every path a TSN was sent on has acknowledged it.
        self.rtx_info.retain(|_, e| e.ack & e.send != e.send);
        self.send_what_fits(now, out);
    }

    /// Mark `ssns` of path `i` lost: the path's cut (once per its Fast Recovery), the lowest
    /// resent at once on the path, the TSNs queued for a redundant copy.
    fn fast_retransmit(&mut self, i: usize, ssns: &[u32], now: SimTime, out: &mut Vec<Packet>) {
        let mtu = self.cfg.spec.mtu();
        let redundant = self.cfg.spec.ls_redundant_rtx;
        let m = &mut self.paths[i];
        for &ssn in ssns {
            let c = &mut m.slots[(ssn - m.base) as usize];
            c.tx.state = State::Marked;
            c.tx.fast_done = true;
            m.path.flight -= c.tx.len as u64;
            m.marked.insert(ssn);
            if redundant {
                self.rtx_buffer.insert(c.tsn);
                self.rtx_info.entry(c.tsn).or_default().send |= 1 << i;
            }
        }
        if m.fast_recovery.is_none() {
            m.path.cut_on_fast_retransmit(mtu);
            m.fast_recovery = Some(m.next_ssn.saturating_sub(1));
        }
        m.path.counters.fast_retransmits += 1;
        self.counters.fast_retransmits += 1;
        let ssn = ssns[0];
        let tsn = m.slots[(ssn - m.base) as usize].tsn;
        self.send_ssn(i, ssn, tsn, now, out);
    }

    fn on_t3(&mut self, i: usize, now: SimTime, out: &mut Vec<Packet>) {
        let mtu = self.cfg.spec.mtu();
        let pmr = self.cfg.spec.path_max_retrans;
        let redundant = self.cfg.spec.ls_redundant_rtx;
        self.counters.timeouts += 1;
        let m = &mut self.paths[i];
        m.path.expire_t3(mtu, pmr);
        m.fast_recovery = None;
        for (k, c) in m.slots.iter_mut().enumerate() {
            if c.tx.state == State::InFlight {
                c.tx.state = State::Marked;
                m.path.flight -= c.tx.len as u64;
                m.marked.insert(m.base + k as u32);
                if redundant {
                    self.rtx_buffer.insert(c.tsn);
                    self.rtx_info.entry(c.tsn).or_default().send |= 1 << i;
                }
            }
        }
        self.send_what_fits(now, out);
    }

    fn on_heartbeat_timer(&mut self, i: usize, now: SimTime, out: &mut Vec<Packet>) {
        let spec = &self.cfg.spec;
        let (pmr, interval) = (spec.path_max_retrans, spec.hb_interval);
        let p = &mut self.paths[i].path;
        if let Some(hb) = p.heartbeat_timer(i, now, pmr, interval, &mut self.cfg.rng) {
            out.push(self.packet(i, HEARTBEAT_BYTES, SctpChunk::Heartbeat(hb), now));
        }
    }
}

/// Fig. 6's split of `rwnd_pkts` packets over paths whose open windows are `open` (packets):
/// all of them when the window allows, else shares in proportion, floored, the rest one by one
/// by largest remainder (ties to the lower index).
pub fn share(open: &[u64], rwnd_pkts: u64) -> Vec<u64> {
    let mut out = Vec::new();
    share_into(open, rwnd_pkts, &mut out);
    out
}

/// [`share`] into `out` (reused: no allocation when the window allows everything).
fn share_into(open: &[u64], rwnd_pkts: u64, out: &mut Vec<u64>) {
    out.clear();
    let sum: u64 = open.iter().sum();
    if rwnd_pkts >= sum {
        out.extend_from_slice(open);
        return;
    }
    out.extend(open.iter().map(|&w| w * rwnd_pkts / sum));
    let mut left = rwnd_pkts - out.iter().sum::<u64>();
    // Largest remainder first (ties to the lower index): a few paths, so a selection is cheap.
    while left > 0 {
        let best = (0..open.len())
            .filter(|&i| out[i] < open[i] && out[i] * sum <= open[i] * rwnd_pkts)
            .max_by_key(|&i| (open[i] * rwnd_pkts - out[i] * sum, std::cmp::Reverse(i)));
        let Some(i) = best else { break };
        out[i] += 1;
        left -= 1;
    }
}

impl Endpoint for LsSender {
    fn handle_packet(&mut self, now: SimTime, pkt: Packet, out: &mut Vec<Packet>) {
        let Transport::Sctp(h) = &pkt.transport else {
            return;
        };
        self.new_send_opportunity();
        match &h.chunk {
            SctpChunk::Sack(s) => self.on_sack(now, s, out),
            SctpChunk::HeartbeatAck(hb) => {
                if let Some(m) = self.paths.get_mut(hb.path as usize) {
                    let p = &mut m.path;
                    if p.hb_sent == Some(hb.sent_at) {
                        p.hb_sent = None;
                    }
                    p.counters.heartbeat_acks += 1;
                    p.rto.on_sample(now.saturating_since(hb.sent_at));
                    p.confirm();
                }
                self.send_what_fits(now, out);
            }
            _ => {}
        }
    }

    fn handle_timeout(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        if !self.started {
            if now < self.cfg.start {
                return;
            }
            self.started = true;
        }
        self.new_send_opportunity();
        for i in 0..self.paths.len() {
            if self.paths[i].path.t3.is_some_and(|t| t <= now) {
                self.on_t3(i, now, out);
            }
            if self.paths[i].path.heartbeat_deadline() <= now {
                self.on_heartbeat_timer(i, now, out);
            }
        }
        self.send_what_fits(now, out);
    }

    fn poll_timeout(&self) -> Option<SimTime> {
        if !self.started {
            return Some(self.cfg.start);
        }
        self.paths
            .iter()
            .map(|m| {
                let hb = m.path.heartbeat_deadline();
                m.path.t3.map_or(hb, |t| t.min(hb))
            })
            .min()
    }
}
