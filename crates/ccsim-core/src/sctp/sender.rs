// SPDX-License-Identifier: MIT
//! The data sender of an association: one TSN space over several paths.
//!
//! ```text
//!   outstanding: TSN cum+1 ............................................ next_tsn-1
//!                [InFlight | GapAcked | Marked(for rtx) ...]   one entry per TSN, in order
//!   marked:      the TSNs waiting for retransmission (sent before any new data, §6.1)
//!   paths[i]:    cwnd, ssthresh, pba, flight, RTO, T3, error count, heartbeats (path.rs)
//! ```
//!
//! A SACK (§6.2.1, §7.2) moves the cumulative ack point, marks gap-acked chunks, frees flight
//! on the paths the chunks were last sent to, grows those paths' windows, counts miss
//! indications (HTNA, §7.2.4) and fast-retransmits on the third; then new data goes out while
//! the destination path has cwnd room and the peer's window allows.

use std::collections::{BTreeSet, VecDeque};

use crate::endpoint::{Endpoint, FlowCounters};
use crate::packet::{
    Addr, FlowId, Packet, Port, SctpChunk, SctpData, SctpHeader, SctpHeartbeat, SctpSack,
    Transport, DEFAULT_TTL,
};
use crate::rng::RngStream;
use crate::time::SimTime;

use super::config::{RtxPolicy, SctpMode, SctpSpec, DATA_OVERHEAD, HEARTBEAT_BYTES};
use super::path::{lia_alpha, Path};
use super::sack::{self, State, Tx};

pub struct SctpSenderConfig {
    pub flow: FlowId,
    pub port: Port,
    pub dst_port: Port,
    /// (local address, peer address) of each path, in the scenario's order.
    pub paths: Vec<(Addr, Addr)>,
    /// Index of the primary path.
    pub primary: usize,
    pub start: SimTime,
    pub stop: Option<SimTime>,
    pub spec: SctpSpec,
    /// The heartbeat jitter's stream (`flow/<name>/sctp`).
    pub rng: RngStream,
}

#[derive(Clone, Copy, Debug)]
struct Chunk {
    tx: Tx,
    /// The path it was last sent on.
    path: u8,
    /// Where a marked chunk is to be resent.
    rtx_path: u8,
    sent_count: u8,
}

impl AsMut<Tx> for Chunk {
    fn as_mut(&mut self) -> &mut Tx {
        &mut self.tx
    }
}

pub struct SctpSender {
    cfg: SctpSenderConfig,
    paths: Vec<Path>,
    /// The cumulative ack point: every TSN below `base` is acknowledged.
    base: u32,
    next_tsn: u32,
    outstanding: VecDeque<Chunk>,
    marked: BTreeSet<u32>,
    peer_rwnd: u64,
    /// Fast Recovery (§7.2.4): exit when the cum ack reaches this TSN.
    fast_recovery: Option<u32>,
    assoc_errors: u32,
    /// Association.Max.Retrans exceeded: the association is closed (§8.1) and sends nothing.
    closed: bool,
    started: bool,
    counters: FlowCounters,
    /// SACKs whose cum TSN was below the ack point (dropped, §6.2.1).
    stale_sacks: u64,
    /// CMT: the path the next new chunk tries first (round robin over paths with room).
    next_path: usize,
    /// Per path, a TSN below which no chunk is in flight there: where the search for the
    /// path's earliest outstanding chunk starts, each SACK (not at the cum ack point, which
    /// stalls for a round trip behind a loss while hundreds of acked chunks pile up above it).
    inflight_from: Vec<u32>,
}

impl SctpSender {
    pub fn new(cfg: SctpSenderConfig) -> SctpSender {
        let cfg_paths = cfg.paths.len();
        let paths = cfg
            .paths
            .iter()
            .map(|&(l, p)| Path::new(l, p, &cfg.spec, cfg.start))
            .collect();
        SctpSender {
            peer_rwnd: cfg.spec.rcv_buffer,
            cfg,
            paths,
            base: 0,
            next_tsn: 0,
            outstanding: VecDeque::new(),
            marked: BTreeSet::new(),
            fast_recovery: None,
            assoc_errors: 0,
            closed: false,
            started: false,
            counters: FlowCounters::default(),
            stale_sacks: 0,
            next_path: 0,
            inflight_from: vec![0; cfg_paths],
        }
    }

    pub fn counters(&self) -> &FlowCounters {
        &self.counters
    }
    pub fn paths(&self) -> &[Path] {
        &self.paths
    }
    /// The path new data goes to now: the primary while it is active, else the first active
    /// path after it (§6.4.1 failover), else the primary anyway.
    pub fn data_path(&self) -> usize {
        let n = self.paths.len();
        (0..n)
            .map(|k| (self.cfg.primary + k) % n)
            .find(|&i| self.paths[i].active)
            .unwrap_or(self.cfg.primary)
    }
    #[cfg(test)]
    pub(crate) fn paths_mut(&mut self) -> &mut [Path] {
        &mut self.paths
    }
    #[cfg(test)]
    pub(crate) fn rtx_destination_of(&self, path: usize) -> usize {
        self.rtx_destination(path)
    }

    /// The primary path's index.
    pub fn primary(&self) -> usize {
        self.cfg.primary
    }
    pub fn is_closed(&self) -> bool {
        self.closed
    }
    pub fn cwnd_total(&self) -> u64 {
        self.paths.iter().map(|p| p.cwnd).sum()
    }
    /// The peer's receive window as the sender sees it (§6.2.1).
    pub fn peer_rwnd(&self) -> u64 {
        self.peer_rwnd
    }
    /// The cumulative ack point: every TSN below it is acknowledged.
    pub fn cum_ack_point(&self) -> u32 {
        self.base
    }
    pub fn stale_sacks(&self) -> u64 {
        self.stale_sacks
    }

    fn cmt(&self) -> bool {
        self.cfg.spec.mode == SctpMode::Cmt
    }

    /// CMT: where a chunk last sent on `path` is resent, by the retransmission policy.
    fn rtx_destination(&self, path: usize) -> usize {
        let best = |key: fn(&Path) -> u64| {
            (0..self.paths.len())
                .filter(|&i| self.paths[i].active)
                .max_by_key(|&i| (key(&self.paths[i]), std::cmp::Reverse(i)))
                .unwrap_or(path)
        };
        match self.cfg.spec.rtx_policy {
            RtxPolicy::Same if self.paths[path].active => path,
            RtxPolicy::Same => self.alternate(path),
            RtxPolicy::Cwnd => best(|p| p.cwnd),
            RtxPolicy::Ssthresh => best(|p| p.ssthresh),
        }
    }

    /// CMT: the first active path from the round-robin point with cwnd room.
    fn cmt_data_path(&self, burst: u32) -> Option<usize> {
        let n = self.paths.len();
        (0..n).map(|k| (self.next_path + k) % n).find(|&i| {
            let p = &self.paths[i];
            p.active && p.flight < p.cwnd && p.burst < burst
        })
    }

    fn mtu(&self) -> u64 {
        self.cfg.spec.mtu()
    }

    fn chunk(&self, tsn: u32) -> &Chunk {
        &self.outstanding[(tsn - self.base) as usize]
    }

    fn total_flight(&self) -> u64 {
        self.paths.iter().map(|p| p.flight).sum()
    }

    /// An active path other than `not`, for a timeout retransmission (§6.4): the first after
    /// `not` in the scenario's order; `not` itself if there is none.
    fn alternate(&self, not: usize) -> usize {
        let n = self.paths.len();
        (1..n)
            .map(|k| (not + k) % n)
            .find(|&i| self.paths[i].active)
            .unwrap_or(not)
    }

    fn packet(&self, path: usize, size: u32, chunk: SctpChunk, now: SimTime) -> Packet {
        let p = &self.paths[path];
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

    /// Put DATA chunk `tsn` on `path` now (a new one if `tsn == next_tsn`).
    fn send_chunk(&mut self, tsn: u32, path: usize, now: SimTime, out: &mut Vec<Packet>) {
        let rtx = tsn < self.next_tsn;
        let len = if rtx {
            self.chunk(tsn).tx.len
        } else {
            self.cfg.spec.chunk_len()
        };
        if rtx {
            let i = (tsn - self.base) as usize;
            let c = &mut self.outstanding[i];
            c.tx.state = State::InFlight;
            c.path = path as u8;
            c.sent_count = c.sent_count.saturating_add(1);
            c.tx.misses = 0;
            self.marked.remove(&tsn);
            self.counters.retransmits += 1;
            self.paths[path].counters.retransmits += 1;
            // Karn: a retransmitted chunk gives no sample (§6.3.1 C5).
            for p in &mut self.paths {
                p.untime(tsn);
            }
        } else {
            self.outstanding.push_back(Chunk {
                tx: Tx::in_flight(len),
                path: path as u8,
                rtx_path: path as u8,
                sent_count: 1,
            });
            self.next_tsn += 1;
            self.paths[path].time(tsn, now);
        }
        let from = &mut self.inflight_from[path];
        *from = (*from).min(tsn);
        let hb_interval = self.cfg.spec.hb_interval;
        let p = &mut self.paths[path];
        p.flight += len as u64;
        p.counters.data_packets += 1;
        p.counters.data_bytes += len as u64;
        if p.t3.is_none() {
            p.t3 = Some(now + p.rto.rto());
        }
        // Data probes the path: no heartbeat while it carries data (§8.3 "idle").
        p.hb_next = now + p.rto.rto() + hb_interval;
        self.peer_rwnd = self.peer_rwnd.saturating_sub(len as u64);
        let size = DATA_OVERHEAD + len.div_ceil(4) * 4;
        self.counters.bytes_sent += len as u64;
        self.counters.wire_bytes_sent += size as u64;
        self.counters.packets_sent += 1;
        self.counters.first_send.get_or_insert(now);
        let data = SctpData {
            tsn,
            sid: 0,
            ssn: tsn,
            len,
            retransmission: rtx,
        };
        out.push(self.packet(path, size, SctpChunk::Data(data), now));
    }

    /// Send marked chunks, then new data, while windows allow (§6.1), at most Max.Burst packets.
    fn send_what_fits(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        if self.closed || !self.started {
            return;
        }
        let burst = match self.cfg.spec.max_burst {
            0 => u32::MAX,
            b => b,
        };
        // Max.Burst (§6.1 D) bounds what one send opportunity emits. RFC 4960's own form of
        // the rule caps each destination's cwnd at its flight + Max.Burst·MTU, so in CMT, where
        // every path takes new data, the limit is per path; with a limit on the association,
        // two paths sharing four packets per SACK send no more than the SACKs acknowledge, and
        // neither window ever fills enough to grow (§7.2.1 needs a full one). One data path:
        // the limit on the association.
        let cmt = self.cmt();
        let total = if cmt { u32::MAX } else { burst };
        for p in &mut self.paths {
            p.burst = 0;
        }
        let mut sent = 0;
        while sent < total {
            if let Some(&tsn) = self.marked.first() {
                let path = self.chunk(tsn).rtx_path as usize;
                let p = &self.paths[path];
                if p.flight >= p.cwnd || (cmt && p.burst >= burst) {
                    break;
                }
                self.send_chunk(tsn, path, now, out);
                self.paths[path].burst += 1;
                sent += 1;
                continue;
            }
            if self.cfg.stop.is_some_and(|s| now >= s) {
                break;
            }
            let path = if cmt {
                match self.cmt_data_path(burst) {
                    Some(p) => p,
                    None => break,
                }
            } else {
                self.data_path()
            };
            let p = &self.paths[path];
            let len = self.cfg.spec.chunk_len() as u64;
            // A zero window still lets one chunk probe it when nothing is in flight (§6.1 A).
            let window_ok = self.peer_rwnd >= len || self.total_flight() == 0;
            if p.flight >= p.cwnd || !window_ok {
                break;
            }
            self.send_chunk(self.next_tsn, path, now, out);
            self.paths[path].burst += 1;
            self.next_path = (path + 1) % self.paths.len();
            sent += 1;
        }
    }

    fn on_sack(&mut self, now: SimTime, sack: &SctpSack, out: &mut Vec<Packet>) {
        if !sack.any {
            return;
        }
        // The first TSN not cumulatively acked (the cum TSN of a SACK before any in-order data
        // is the initial TSN - 1, so this wraps to 0).
        let cum_next = sack.cum_tsn.wrapping_add(1);
        if cum_next < self.base || cum_next > self.next_tsn {
            self.stale_sacks += 1; // §6.2.1 D i): older than the ack point
            return;
        }
        let mtu = self.mtu();
        let n = self.paths.len();
        for p in &mut self.paths {
            p.sack_flight_before = p.flight;
            p.sack_acked = 0;
            p.sack_earliest = None;
            p.sack_lowest = None;
            p.sack_highest = None;
        }
        // Each path's earliest outstanding TSN, to know whether its T3 restarts (§6.3.2 R3).
        for i in 0..n {
            let from = self.inflight_from[i].max(self.base);
            let earliest = self
                .outstanding
                .range((from - self.base) as usize..)
                .position(|c| c.path as usize == i && c.tx.state == State::InFlight)
                .map(|k| from + k as u32);
            self.paths[i].sack_earliest = earliest;
            self.inflight_from[i] = earliest.unwrap_or(self.next_tsn);
        }
        let mut htna: Option<u32> = None;
        let advanced = cum_next > self.base;
        // Cumulatively and gap-acked chunks: each frees its bytes on the path it was last sent
        // to, clears that path's error counter and the association's (§8.1, §8.2), and may
        // give the path an RTT sample.
        let (base, next) = (self.base, self.next_tsn);
        let (paths, marked) = (&mut self.paths, &mut self.marked);
        let (counters, assoc_errors) = (&mut self.counters, &mut self.assoc_errors);
        let gaps = sack.gap_blocks();
        sack::for_each_newly_covered(
            &mut self.outstanding,
            base,
            next,
            sack.cum_tsn,
            gaps,
            |tsn, c| {
                let p = &mut paths[c.path as usize];
                if !c.tx.ack(tsn, &mut p.flight, marked) {
                    return;
                }
                let len = c.tx.len as u64;
                p.sack_acked += len;
                p.sack_lowest = Some(p.sack_lowest.map_or(tsn, |l| l.min(tsn)));
                p.sack_highest = Some(p.sack_highest.map_or(tsn, |h| h.max(tsn)));
                htna = Some(htna.map_or(tsn, |h| h.max(tsn)));
                p.counters.bytes_acked += len;
                p.confirm();
                *assoc_errors = 0;
                if let Some(r) = p.sample_if_timed(tsn, now) {
                    counters.rtt_sum_ns += r.as_nanos() as u128;
                    counters.rtt_samples += 1;
                    let m = counters.rtt_min_ns.get_or_insert(r.as_nanos());
                    *m = (*m).min(r.as_nanos());
                }
            },
        );
        // Forget the chunks below the new cum ack point.
        sack::forget_below(&mut self.outstanding, &mut self.base, cum_next);
        if self.fast_recovery.is_some_and(|exit| cum_next > exit) {
            self.fast_recovery = None;
        }
        for p in &mut self.paths {
            if p.fr_exit.is_some_and(|exit| cum_next > exit) {
                p.fr_exit = None;
            }
        }
        // Growth before any cut of the same SACK (§7.2.4). CMT's CUC: a path grows when its
        // own earliest outstanding chunk (its pseudo-cumack) is acknowledged, though the cum
        // ack may stall behind another path's chunks.
        if self.cmt() {
            let cuc = self.cfg.spec.cmt_cuc;
            let lia = self.cfg.spec.coupled.then(|| lia_alpha(self.paths.iter()));
            for i in 0..n {
                let grows = if cuc {
                    self.paths[i]
                        .sack_earliest
                        .is_some_and(|t| t < cum_next || self.acked_by_gap(t))
                } else {
                    advanced
                };
                let p = &mut self.paths[i];
                if grows {
                    let in_fr = p.fr_exit.is_some();
                    let (acked, before) = (p.sack_acked, p.sack_flight_before);
                    match lia {
                        Some(l) => p.grow_coupled(acked, before, in_fr, mtu, l),
                        None => p.grow(acked, before, in_fr, mtu),
                    }
                }
            }
        } else if advanced {
            let in_fr = self.fast_recovery.is_some();
            for p in &mut self.paths {
                p.grow(p.sack_acked, p.sack_flight_before, in_fr, mtu);
            }
        }
        for i in 0..n {
            let restart = self.paths[i]
                .sack_earliest
                .is_some_and(|t| t < cum_next || self.acked_by_gap(t));
            let p = &mut self.paths[i];
            if p.flight == 0 {
                p.pba = 0;
                p.t3 = None;
            } else if restart {
                p.t3 = Some(now + p.rto.rto());
            }
        }
        // Miss indications, HTNA (§7.2.4): below the highest TSN newly acked, and only where
        // the SACK shows a hole (see `surely_missing_below`).
        let sure = surely_missing_below(sack.cum_tsn, sack.gap_blocks());
        let fast = if self.cmt() {
            self.count_misses_cmt(htna.map(|h| h.min(sure)), sack.packets)
        } else {
            self.count_misses(htna, advanced, sure)
        };
        // a_rwnd less what is still outstanding (§6.2.1 D iv).
        self.peer_rwnd = (sack.a_rwnd as u64).saturating_sub(self.total_flight());
        if !fast.is_empty() {
            self.fast_retransmit(&fast, now, out);
        }
        self.send_what_fits(now, out);
    }

    fn acked_by_gap(&self, tsn: u32) -> bool {
        tsn >= self.base
            && self
                .outstanding
                .get((tsn - self.base) as usize)
                .is_some_and(|c| c.tx.state == State::GapAcked)
    }

    /// Add a miss indication to each chunk still in flight below the highest TSN newly acked
    /// (or, in Fast Recovery with the cum ack advancing, below the highest TSN acked at all);
    /// returns the TSNs that reached the threshold.
    fn count_misses(&mut self, htna: Option<u32>, advanced: bool, sure: u32) -> Vec<u32> {
        let mut fast = Vec::new();
        let limit = if self.fast_recovery.is_some() && advanced {
            self.outstanding
                .iter()
                .rposition(|c| c.tx.state == State::GapAcked)
                .map(|i| self.base + i as u32)
        } else {
            htna
        };
        let Some(limit) = limit.map(|l| l.min(sure)) else {
            return fast;
        };
        let threshold = self.cfg.spec.fast_rtx_threshold as u8;
        sack::count_misses(
            &mut self.outstanding,
            self.base,
            limit,
            threshold,
            &mut fast,
            |_, _| 1,
        );
        fast
    }

    /// CMT's miss indications. SFR: a chunk sent to path d gets one only if this SACK newly
    /// acked a chunk sent to d, and one above it. DAC: +1 when the SACK newly acks chunks of
    /// several paths or one of d's below the missing chunk; otherwise the number of DATA
    /// packets the SACK reports (the receiver delayed it over that many).
    fn count_misses_cmt(&mut self, htna: Option<u32>, packets: u8) -> Vec<u32> {
        let mut fast = Vec::new();
        let Some(limit) = htna else {
            return fast;
        };
        let spec = &self.cfg.spec;
        let (sfr, dac) = (spec.cmt_sfr, spec.cmt_dac);
        let threshold = spec.fast_rtx_threshold as u8;
        let dests = self.paths.iter().filter(|p| p.sack_acked > 0).count();
        let paths = &self.paths;
        let base = self.base;
        sack::count_misses(
            &mut self.outstanding,
            base,
            limit,
            threshold,
            &mut fast,
            |tsn, c| {
                let d = &paths[c.path as usize];
                if sfr && d.sack_highest.is_none_or(|h| tsn >= h) {
                    0
                } else if !dac || dests > 1 || d.sack_lowest.is_some_and(|l| l < tsn) {
                    1
                } else {
                    packets.max(1)
                }
            },
        );
        fast
    }

    /// §7.2.4: mark `tsns`, cut the windows of the paths they were sent on (once per Fast
    /// Recovery), and resend the lowest at once on its original path, ignoring cwnd.
    fn fast_retransmit(&mut self, tsns: &[u32], now: SimTime, out: &mut Vec<Packet>) {
        let mtu = self.mtu();
        let mut cut = vec![false; self.paths.len()];
        for &tsn in tsns {
            let i = (tsn - self.base) as usize;
            let path = self.outstanding[i].path as usize;
            let rtx_path = if self.cmt() {
                self.rtx_destination(path)
            } else if self.paths[path].active {
                path
            } else {
                self.alternate(path)
            };
            let c = &mut self.outstanding[i];
            c.tx.state = State::Marked;
            c.tx.fast_done = true;
            c.rtx_path = rtx_path as u8;
            let len = c.tx.len as u64;
            self.paths[path].flight -= len;
            self.peer_rwnd += len;
            self.marked.insert(tsn);
            cut[path] = true;
        }
        let exit = self.next_tsn.saturating_sub(1);
        if self.cmt() {
            // Each path has its own Fast Recovery: one cut per path per window.
            for (i, p) in self.paths.iter_mut().enumerate() {
                if cut[i] && p.fr_exit.is_none() {
                    p.cut_on_fast_retransmit(mtu);
                    p.fr_exit = Some(exit);
                }
            }
        } else if self.fast_recovery.is_none() {
            for (i, p) in self.paths.iter_mut().enumerate() {
                if cut[i] {
                    p.cut_on_fast_retransmit(mtu);
                }
            }
            self.fast_recovery = Some(exit);
        }
        let first = tsns[0];
        let path = self.chunk(first).rtx_path as usize;
        self.counters.fast_retransmits += 1;
        self.paths[path].counters.fast_retransmits += 1;
        let restart = self.paths[path].flight == 0;
        self.send_chunk(first, path, now, out);
        if restart {
            let p = &mut self.paths[path];
            p.t3 = Some(now + p.rto.rto());
        }
    }

    /// Path `path`'s T3-rtx timer expired (§6.3.3).
    fn on_t3(&mut self, path: usize, now: SimTime, out: &mut Vec<Packet>) {
        let mtu = self.mtu();
        let spec = &self.cfg.spec;
        let (pmr, amr) = (spec.path_max_retrans, spec.assoc_max_retrans);
        self.counters.timeouts += 1;
        self.paths[path].expire_t3(mtu, pmr);
        self.assoc_errors += 1;
        if self.assoc_errors > amr {
            self.closed = true;
            return;
        }
        // ns-2 leaves Fast Recovery on a timeout.
        self.fast_recovery = None;
        self.paths[path].fr_exit = None;
        let dest = if self.cmt() {
            self.rtx_destination(path)
        } else if self.cfg.spec.rtx_to_alt {
            self.alternate(path)
        } else {
            path
        };
        let mut first = None;
        for (i, c) in self.outstanding.iter_mut().enumerate() {
            if c.tx.state == State::InFlight && c.path as usize == path {
                c.tx.state = State::Marked;
                c.rtx_path = dest as u8;
                self.paths[path].flight -= c.tx.len as u64;
                self.peer_rwnd += c.tx.len as u64;
                let tsn = self.base + i as u32;
                self.marked.insert(tsn);
                first.get_or_insert(tsn);
            }
        }
        // E3: the earliest marked chunk goes at once, to the path chosen; its timer starts.
        if let Some(&tsn) = self.marked.first() {
            let dest = self.chunk(tsn).rtx_path as usize;
            self.send_chunk(tsn, dest, now, out);
            let p = &mut self.paths[dest];
            p.t3 = Some(now + p.rto.rto());
        }
        let _ = first;
    }

    /// Heartbeats of path `i` (§8.3), by [`Path::heartbeat_timer`].
    fn on_heartbeat_timer(&mut self, i: usize, now: SimTime, out: &mut Vec<Packet>) {
        let spec = &self.cfg.spec;
        let (pmr, interval) = (spec.path_max_retrans, spec.hb_interval);
        if let Some(hb) = self.paths[i].heartbeat_timer(i, now, pmr, interval, &mut self.cfg.rng) {
            out.push(self.packet(i, HEARTBEAT_BYTES, SctpChunk::Heartbeat(hb), now));
        }
    }

    fn on_heartbeat_ack(&mut self, now: SimTime, hb: &SctpHeartbeat) {
        let Some(p) = self.paths.get_mut(hb.path as usize) else {
            return;
        };
        if p.hb_sent == Some(hb.sent_at) {
            p.hb_sent = None;
        }
        p.counters.heartbeat_acks += 1;
        p.rto.on_sample(now.saturating_since(hb.sent_at));
        p.confirm();
    }
}

/// Below which number a SACK shows every unreported number as missing. A ccsim SACK holds
/// `SctpSack::MAX_GAPS` blocks; when it has that many, the receiver may have left others out
/// (`received.rs` sends the lowest, the newest and the rest in turn), so a hole between two
/// reported blocks may hold unreported ones and only the first hole, below the lowest block,
/// is surely missing. With fewer blocks every hole is real (RFC 4960 §6.2.1's reading of a
/// complete SACK).
fn surely_missing_below(cum: u32, gaps: &[(u16, u16)]) -> u32 {
    match gaps.first() {
        Some(&(start, _)) if gaps.len() == SctpSack::MAX_GAPS => cum.wrapping_add(start as u32),
        _ => u32::MAX,
    }
}

impl Endpoint for SctpSender {
    fn handle_packet(&mut self, now: SimTime, pkt: Packet, out: &mut Vec<Packet>) {
        let Transport::Sctp(h) = &pkt.transport else {
            return;
        };
        match &h.chunk {
            SctpChunk::Sack(s) => self.on_sack(now, s, out),
            SctpChunk::HeartbeatAck(hb) => {
                self.on_heartbeat_ack(now, hb);
                self.send_what_fits(now, out);
            }
            _ => {}
        }
    }

    fn handle_timeout(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        if self.closed {
            return;
        }
        if !self.started {
            if now < self.cfg.start {
                return;
            }
            self.started = true;
        }
        for i in 0..self.paths.len() {
            if self.paths[i].t3.is_some_and(|t| t <= now) {
                self.on_t3(i, now, out);
                if self.closed {
                    return;
                }
            }
            if self.paths[i].heartbeat_deadline() <= now {
                self.on_heartbeat_timer(i, now, out);
            }
        }
        self.send_what_fits(now, out);
    }

    fn poll_timeout(&self) -> Option<SimTime> {
        if self.closed {
            return None;
        }
        if !self.started {
            return Some(self.cfg.start);
        }
        self.paths
            .iter()
            .map(|p| {
                let hb = p.heartbeat_deadline();
                p.t3.map_or(hb, |t| t.min(hb))
            })
            .min()
    }
}
