// SPDX-License-Identifier: MIT
//! An association driven without the simulator: two paths of fixed one-way delay, each
//! direction losing packets at random or cut off for a while. The checks of RFC 4960's rules
//! that need both ends.

use std::collections::BTreeMap;

use super::*;
use crate::endpoint::Endpoint;
use crate::packet::{Packet, SctpChunk, SctpSack, Transport};
use crate::rng::RngStream;
use crate::sctp::config::{LsOutstanding, MaxBurstRule, RtxPolicy, SctpMode};
use crate::time::{SimDuration, SimTime};

/// Sender addresses 10 + i, receiver addresses 20 + i: path i.
fn path_of(p: &Packet) -> usize {
    if p.dst >= 20 {
        (p.dst - 20) as usize
    } else {
        (p.dst - 10) as usize
    }
}

struct Harness<T: Endpoint = SctpSender> {
    tx: T,
    rx: SctpReceiver,
    now: SimTime,
    /// (arrival time, sequence) -> (to the receiver?, packet)
    wire: BTreeMap<(SimTime, u64), (bool, Packet)>,
    seq: u64,
    delay: Vec<SimDuration>,
    loss: f64,
    rng: RngStream,
    /// Path i loses everything between these times.
    down: Vec<Option<(SimTime, SimTime)>>,
    out: Vec<Packet>,
    /// Every DATA the receiver got, in arrival order (retransmissions included): TSN, path,
    /// retransmission flag, SID, SSN.
    data_seen: Vec<(u32, usize, bool, u16, u32)>,
    /// Per path, the most DATA packets the sender put on it in answer to one packet or timer.
    largest_burst: Vec<usize>,
}

fn config(spec: &SctpSpec, n: usize) -> SctpSenderConfig {
    SctpSenderConfig {
        flow: 0,
        port: 0,
        dst_port: 1,
        paths: (0..n as u32).map(|i| (10 + i, 20 + i)).collect(),
        primary: 0,
        start: SimTime::ZERO,
        stop: None,
        spec: spec.clone(),
        rng: RngStream::derive(1, "test/sctp/hb"),
    }
}

impl Harness<SctpSender> {
    fn new(spec: SctpSpec, delays_ms: &[u64], loss: f64) -> Self {
        let tx = SctpSender::new(config(&spec, delays_ms.len()));
        Harness::with(tx, spec, delays_ms, loss)
    }
}

impl Harness<LsSender> {
    fn ls(spec: SctpSpec, delays_ms: &[u64], loss: f64) -> Self {
        let spec = SctpSpec {
            mode: SctpMode::Ls,
            ..spec
        };
        let tx = LsSender::new(config(&spec, delays_ms.len()));
        Harness::with(tx, spec, delays_ms, loss)
    }
}

impl<T: Endpoint> Harness<T> {
    fn with(tx: T, spec: SctpSpec, delays_ms: &[u64], loss: f64) -> Self {
        let rx = SctpReceiver::new(SctpReceiverConfig {
            flow: 0,
            port: 1,
            peer_port: 0,
            spec,
        });
        Harness {
            tx,
            rx,
            now: SimTime::ZERO,
            wire: BTreeMap::new(),
            seq: 0,
            delay: delays_ms
                .iter()
                .map(|&d| SimDuration::from_millis(d))
                .collect(),
            loss,
            rng: RngStream::derive(1, "test/sctp/loss"),
            down: vec![None; delays_ms.len()],
            out: Vec::new(),
            data_seen: Vec::new(),
            largest_burst: vec![0; delays_ms.len()],
        }
    }

    /// Note the sender's output of one call (a packet or a timer) in `largest_burst`.
    fn note_burst(&mut self) {
        let mut sent = vec![0; self.largest_burst.len()];
        for p in &self.out {
            if let Transport::Sctp(h) = &p.transport {
                if let SctpChunk::Data(_) = &h.chunk {
                    sent[path_of(p)] += 1;
                }
            }
        }
        for (most, n) in self.largest_burst.iter_mut().zip(sent) {
            *most = (*most).max(n);
        }
    }

    fn put_on_wire(&mut self, to_rx: bool) {
        for p in std::mem::take(&mut self.out) {
            let path = path_of(&p);
            let cut = self.down[path].is_some_and(|(a, b)| a <= self.now && self.now < b);
            if cut || (self.loss > 0.0 && self.rng.bernoulli(self.loss)) {
                continue;
            }
            self.seq += 1;
            self.wire
                .insert((self.now + self.delay[path], self.seq), (to_rx, p));
        }
    }

    /// Run until `end`.
    fn run(&mut self, end: SimTime) {
        loop {
            let wire = self.wire.keys().next().map(|k| k.0);
            let next = [wire, self.tx.poll_timeout(), self.rx.poll_timeout()]
                .into_iter()
                .flatten()
                .min();
            let Some(t) = next.filter(|&t| t <= end) else {
                self.now = end;
                return;
            };
            self.now = t;
            if wire == Some(t) {
                let (_, (to_rx, p)) = self.wire.pop_first().unwrap();
                let path = path_of(&p);
                let cut = self.down[path].is_some_and(|(a, b)| a <= t && t < b);
                if cut {
                    continue; // on the wire when the path went down
                }
                if to_rx {
                    if let Transport::Sctp(h) = &p.transport {
                        if let SctpChunk::Data(d) = &h.chunk {
                            self.data_seen
                                .push((d.tsn, path, d.retransmission, d.sid, d.ssn));
                        }
                    }
                    self.rx.handle_packet(t, p, &mut self.out);
                    self.put_on_wire(false);
                } else {
                    self.tx.handle_packet(t, p, &mut self.out);
                    self.note_burst();
                    self.put_on_wire(true);
                }
            } else if self.tx.poll_timeout() == Some(t) {
                self.tx.handle_timeout(t, &mut self.out);
                self.note_burst();
                self.put_on_wire(true);
            } else {
                self.rx.handle_timeout(t, &mut self.out);
                self.put_on_wire(false);
            }
        }
    }
}

fn secs(s: u64) -> SimTime {
    SimTime::from_secs(s)
}

#[test]
fn the_tsn_stream_is_delivered_once_and_in_order_under_random_loss_on_both_paths() {
    // 3 % loss each way on both paths; timeout retransmissions go to the other path.
    let mut h = Harness::new(SctpSpec::default(), &[10, 30], 0.03);
    h.run(secs(120));
    let chunk = SctpSpec::default().chunk_len() as u64;
    let delivered = h.rx.counters().bytes_delivered;
    // In order: the receiver hands over only the prefix below its next expected TSN, each
    // chunk once, so the bytes delivered are exactly that prefix.
    assert_eq!(delivered, h.rx.next_tsn() as u64 * chunk);
    assert!(h.rx.next_tsn() > 1000, "{} chunks", h.rx.next_tsn());
    // Losses were repaired: by fast retransmit and by timeouts, some on the alternate path.
    let c = h.tx.counters();
    assert!(c.fast_retransmits > 0 && c.timeouts > 0, "{c:?}");
    assert!(h.tx.paths()[1].counters.retransmits > 0);
    assert!(h.tx.cum_ack_point() <= h.rx.next_tsn());
}

#[test]
fn new_data_fails_over_within_the_rto_budget_and_returns_to_the_primary() {
    // Path 0 (the primary) is cut from 5 s to 200 s.
    let mut h = Harness::new(SctpSpec::default(), &[10, 10], 0.0);
    h.down[0] = Some((secs(5), secs(200)));
    h.run(secs(5));
    assert_eq!(h.tx.data_path(), 0);
    let rto = h.tx.paths()[0].rto.rto();
    assert_eq!(rto, SimDuration::from_secs(1), "RTO.Min on a 20 ms path");
    // The first T3 expiry comes at most one RTO after the cut. Its retransmission (on path 1)
    // makes the receiver acknowledge the chunks that crossed path 0 before the cut but whose
    // SACKs were lost with it, and an ack of data last sent to path 0 clears its error counter
    // (§8.2). From there Path.Max.Retrans = 5 means six consecutive expiries, the RTO doubling
    // from 2 s up to RTO.Max = 60 s: 2 + 4 + 8 + 16 + 32 + 60 s.
    let budget: u64 = 1 + (1..=6).map(|k| (1u64 << k).min(60)).sum::<u64>();
    let mut failed_at = None;
    for ms in (5000..(5 + budget + 2) * 1000).step_by(100) {
        h.run(SimTime::from_millis(ms));
        if h.tx.data_path() == 1 {
            failed_at = Some(ms);
            break;
        }
    }
    let failed_at = failed_at.expect("no failover within the RTO budget");
    assert!(
        failed_at <= (5 + budget + 1) * 1000,
        "failover at {failed_at} ms"
    );
    assert!(!h.tx.paths()[0].active);
    assert_eq!(h.tx.paths()[0].counters.failures, 1);
    // Data flows on path 1 after the failover.
    let before = h.rx.counters().bytes_delivered;
    h.run(secs(190));
    assert!(h.rx.counters().bytes_delivered > before + 10_000_000);
    // Heartbeats probe the failed primary; after the cut ends one is answered and new data
    // goes back to it (§8.3, §6.4.1).
    let sent_on_0 = h.tx.paths()[0].counters.data_packets;
    h.run(secs(300));
    assert!(h.tx.paths()[0].active);
    assert_eq!(h.tx.data_path(), 0);
    assert!(h.tx.paths()[0].counters.heartbeat_acks > 0);
    assert!(h.tx.paths()[0].counters.data_packets > sent_on_0 + 1000);
    let chunk = SctpSpec::default().chunk_len() as u64;
    assert_eq!(
        h.rx.counters().bytes_delivered,
        h.rx.next_tsn() as u64 * chunk
    );
}

/// A sender on one path whose first `n` chunks are out, and its packets.
fn sender_with_window(n: u64) -> (SctpSender, Vec<Packet>) {
    let spec = SctpSpec {
        initial_cwnd: Some(n * 1452),
        max_burst: 0,
        ..SctpSpec::default()
    };
    let mut tx = SctpSender::new(SctpSenderConfig {
        flow: 0,
        port: 0,
        dst_port: 1,
        paths: vec![(10, 20)],
        primary: 0,
        start: SimTime::ZERO,
        stop: None,
        spec,
        rng: RngStream::derive(1, "test"),
    });
    let mut out = Vec::new();
    tx.handle_timeout(SimTime::ZERO, &mut out);
    (tx, out)
}

fn sack(cum: u32, gaps: &[(u16, u16)], a_rwnd: u32) -> Packet {
    let mut s = SctpSack {
        cum_tsn: cum,
        any: true,
        a_rwnd,
        ..SctpSack::default()
    };
    for &g in gaps {
        s.gaps[s.n_gaps as usize] = g;
        s.n_gaps += 1;
    }
    let mut p = Packet::test_udp(48, 0, 0);
    p.src = 20;
    p.dst = 10;
    p.transport = Transport::Sctp(crate::packet::SctpHeader {
        src_port: 1,
        dst_port: 0,
        chunk: SctpChunk::Sack(s),
    });
    p
}

fn retransmitted(out: &[Packet]) -> Vec<u32> {
    out.iter()
        .filter_map(|p| match &p.transport {
            Transport::Sctp(h) => match &h.chunk {
                SctpChunk::Data(d) if d.retransmission => Some(d.tsn),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

#[test]
fn fast_retransmit_fires_on_the_third_miss_indication_not_the_second_and_cuts_once() {
    let (mut tx, out) = sender_with_window(20);
    assert_eq!(out.len(), 20);
    let t = SimTime::from_millis(50);
    let mut out = Vec::new();
    // TSN 1 is lost; SACKs report 2, then 2-3, then 2-4 (offsets from cum TSN 0).
    tx.handle_packet(t, sack(0, &[(2, 2)], 65_536), &mut out);
    tx.handle_packet(t, sack(0, &[(2, 3)], 65_536), &mut out);
    assert!(retransmitted(&out).is_empty(), "two miss indications only");
    let cwnd = tx.paths()[0].cwnd;
    tx.handle_packet(t, sack(0, &[(2, 4)], 65_536), &mut out);
    assert_eq!(retransmitted(&out), [1], "the third fires");
    assert_eq!(tx.counters().fast_retransmits, 1);
    let cut = tx.paths()[0].cwnd;
    assert_eq!(cut, (cwnd / 2).max(6000));
    // TSN 5 lost as well, in the same Fast Recovery: resent, but no second cut.
    out.clear();
    for e in 6..=9 {
        tx.handle_packet(t, sack(0, &[(2, 4), (6, e)], 65_536), &mut out);
    }
    assert_eq!(retransmitted(&out), [5]);
    assert_eq!(tx.paths()[0].cwnd, cut);
}

#[test]
fn only_tsns_below_the_highest_newly_acked_get_a_miss_indication() {
    let (mut tx, _) = sender_with_window(20);
    let t = SimTime::from_millis(50);
    let mut out = Vec::new();
    // 1 and 3 missing, 2 and 4 acked.
    tx.handle_packet(t, sack(0, &[(2, 2), (4, 4)], 65_536), &mut out);
    // The same SACK again newly acks nothing: no miss indications (HTNA), however often.
    for _ in 0..5 {
        tx.handle_packet(t, sack(0, &[(2, 2), (4, 4)], 65_536), &mut out);
    }
    assert!(retransmitted(&out).is_empty());
}

#[test]
fn the_peer_window_is_a_rwnd_less_what_is_outstanding_and_an_old_sack_changes_nothing() {
    let (mut tx, _) = sender_with_window(10);
    let t = SimTime::from_millis(50);
    let mut out = Vec::new();
    tx.handle_packet(t, sack(4, &[], 50_000), &mut out);
    // 5 acked, 5 out, and the SACK opened room for more sends: recompute from what is out now.
    let outstanding: u64 = tx.paths()[0].flight;
    let sent_after = out.len() as u64 * 1452;
    assert_eq!(
        tx.peer_rwnd(),
        50_000 - (outstanding - sent_after) - sent_after
    );
    let before = tx.peer_rwnd();
    tx.handle_packet(t, sack(2, &[], 65_536), &mut out);
    assert_eq!(
        tx.peer_rwnd(),
        before,
        "a SACK below the ack point is dropped"
    );
    assert_eq!(tx.stale_sacks(), 1);
}

fn data(tsn: u32) -> Packet {
    let mut p = Packet::test_udp(1500, 0, 0);
    p.src = 10;
    p.dst = 20;
    p.transport = Transport::Sctp(crate::packet::SctpHeader {
        src_port: 0,
        dst_port: 1,
        chunk: SctpChunk::Data(crate::packet::SctpData {
            tsn,
            len: 1452,
            ..Default::default()
        }),
    });
    p
}

fn sacks(out: &[Packet]) -> Vec<(SctpSack, u32)> {
    out.iter()
        .filter_map(|p| match &p.transport {
            Transport::Sctp(h) => match &h.chunk {
                SctpChunk::Sack(s) => Some((*s, p.size)),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

fn receiver() -> SctpReceiver {
    receiver_with(SctpSpec::default())
}

fn receiver_with(spec: SctpSpec) -> SctpReceiver {
    SctpReceiver::new(SctpReceiverConfig {
        flow: 0,
        port: 1,
        peer_port: 0,
        spec,
    })
}

fn ls_receiver() -> SctpReceiver {
    receiver_with(SctpSpec {
        mode: SctpMode::Ls,
        ..SctpSpec::default()
    })
}

#[test]
fn in_order_data_is_acked_every_second_packet_and_every_packet_while_a_gap_exists() {
    let mut rx = receiver();
    let mut out = Vec::new();
    let t = SimTime::ZERO;
    for tsn in 0..10 {
        rx.handle_packet(t, data(tsn), &mut out);
    }
    assert_eq!(sacks(&out).len(), 5);
    out.clear();
    // 10 lost: 11, 12, 13 each answered at once, and 10 (closing the gap) too.
    for tsn in [11, 12, 13, 10] {
        rx.handle_packet(t, data(tsn), &mut out);
    }
    assert_eq!(sacks(&out).len(), 4);
    // A lone packet waits for the delayed-SACK timer (200 ms).
    out.clear();
    rx.handle_packet(t, data(14), &mut out);
    assert!(out.is_empty());
    assert_eq!(rx.poll_timeout(), Some(SimTime::from_millis(200)));
}

#[test]
fn a_sack_is_16_bytes_plus_4_per_gap_block_and_duplicate_with_offsets_from_the_cum_tsn() {
    let mut rx = receiver();
    let mut out = Vec::new();
    let t = SimTime::ZERO;
    for tsn in [0, 2, 3, 5, 0] {
        rx.handle_packet(t, data(tsn), &mut out);
    }
    let (s, size) = *sacks(&out).last().unwrap();
    assert_eq!(s.cum_tsn, 0);
    assert_eq!(s.gap_blocks(), [(2, 3), (5, 5)]);
    assert_eq!(s.dup_tsns(), [0]);
    assert_eq!(size, 20 + 12 + 16 + 4 * 2 + 4);
    assert_eq!(
        rx.counters().duplicate_segments,
        1,
        "the flows table counts it too"
    );
    // The window: buffer less the out-of-order data held (3 chunks).
    assert_eq!(s.a_rwnd as u64, 65_536 - 3 * 1452);
}

#[test]
fn gap_blocks_beyond_what_a_packet_holds_are_counted_not_lost_silently() {
    let mut rx = receiver();
    let mut out = Vec::new();
    for tsn in [2, 4, 6, 8, 10, 12] {
        rx.handle_packet(SimTime::ZERO, data(tsn), &mut out);
    }
    let (s, _) = *sacks(&out).last().unwrap();
    assert_eq!(s.gap_blocks().len(), crate::packet::SctpSack::MAX_GAPS);
    assert!(rx.left_out().0 > 0);
}

// ---------------------------------------------------------------------------------------------
// The paper's LS mode

#[test]
fn ls_distribution_follows_the_cwnd_ratio_under_the_receive_window() {
    use super::ls::share;
    assert_eq!(share(&[10, 30], 20), [5, 15]);
    assert_eq!(share(&[10, 30], 40), [10, 30]);
    assert_eq!(share(&[10, 30], 100), [10, 30]);
    // A window too small for the floors still goes out, by largest remainder.
    assert_eq!(share(&[3, 3], 1), [1, 0]);
    assert_eq!(share(&[2, 5], 3), [1, 2]);
    assert_eq!(share(&[0, 0], 5), [0, 0]);
}

#[test]
fn ls_tags_every_data_with_its_path_and_numbers_each_path_without_holes_or_retransmissions() {
    // Unequal delays, no loss: reordering between paths opens no SSN gap.
    let spec = SctpSpec {
        rcv_buffer: 1 << 20,
        ..SctpSpec::default()
    };
    let mut h = Harness::ls(spec, &[5, 40], 0.0);
    h.run(secs(20));
    let mut next = [0u32; 2];
    for &(_, path, rtx, sid, ssn) in &h.data_seen {
        assert_eq!(sid as usize, path);
        assert_eq!(ssn, next[path], "path {path}");
        assert!(!rtx);
        next[path] += 1;
    }
    assert!(next[0] > 1000 && next[1] > 1000, "{next:?}");
    let c = h.tx.counters();
    assert_eq!((c.fast_retransmits, c.timeouts, c.retransmits), (0, 0, 0));
    let chunk = SctpSpec::default().chunk_len() as u64;
    assert_eq!(
        h.rx.counters().bytes_delivered,
        h.rx.next_tsn() as u64 * chunk
    );
}

#[test]
fn ls_delivers_the_tsn_stream_once_in_order_and_never_sends_one_tsn_twice_as_copies_on_a_path() {
    let mut h = Harness::ls(SctpSpec::default(), &[10, 30], 0.03);
    h.run(secs(120));
    let chunk = SctpSpec::default().chunk_len() as u64;
    assert_eq!(
        h.rx.counters().bytes_delivered,
        h.rx.next_tsn() as u64 * chunk
    );
    assert!(h.rx.next_tsn() > 1000);
    assert!(h.tx.redundant_copies() > 0);
    // One TSN has at most one SSN on each path: the path's own resends reuse it, and a
    // redundant copy goes only to a path it was never sent on (Fig. 7's send bits).
    let mut ssn_of: BTreeMap<(u32, usize), u32> = BTreeMap::new();
    for &(tsn, path, _, _, ssn) in &h.data_seen {
        let first = *ssn_of.entry((tsn, path)).or_insert(ssn);
        assert_eq!(first, ssn, "TSN {tsn} sent as two SSNs on path {path}");
    }
    // The Rtx-info table keeps only entries still waiting for an ack from some path.
    for e in h.tx.rtx_info().values() {
        assert_ne!(e.ack & e.send, e.send);
    }
}

#[test]
fn ls_1rtx_resends_only_on_the_original_path() {
    let spec = SctpSpec {
        ls_redundant_rtx: false,
        ..SctpSpec::default()
    };
    let mut h = Harness::ls(spec, &[10, 30], 0.03);
    h.run(secs(60));
    assert_eq!(h.tx.redundant_copies(), 0);
    let mut path_of_tsn: BTreeMap<u32, usize> = BTreeMap::new();
    for &(tsn, path, ..) in &h.data_seen {
        assert_eq!(*path_of_tsn.entry(tsn).or_insert(path), path);
    }
    assert!(h.tx.counters().retransmits > 0);
}

#[test]
fn ls_a_failed_path_keeps_one_mtu_and_carries_no_new_data() {
    let spec = SctpSpec {
        path_max_retrans: 1,
        ..SctpSpec::default()
    };
    let mut h = Harness::ls(spec, &[10, 10], 0.0);
    h.down[1] = Some((secs(2), secs(1000)));
    h.run(secs(30));
    let p = h.tx.path(1);
    assert!(!p.active);
    assert_eq!(p.cwnd, 1500);
    // Everything path 1 sent after it failed was a resend of its own SSNs.
    let failed_sends_before = p.counters.data_packets;
    h.run(secs(60));
    let p = h.tx.path(1);
    assert!(p.counters.data_packets - failed_sends_before <= p.counters.timeouts);
    assert!(h.tx.path(0).counters.data_packets > 10_000);
}

#[test]
fn ls_no_path_sends_more_than_max_burst_packets_in_answer_to_one_sack_or_timer() {
    // Unequal paths and a 64 KiB window: the fast path's chunks wait in the receiver for the
    // slow path's, and the SACK that delivers them reopens the whole window at once. RFC 4960
    // §6.1 D: at most Max.Burst packets per send opportunity, here per path (as in CMT).
    let run = |max_burst: u32, loss: f64| {
        let spec = SctpSpec {
            max_burst,
            ..SctpSpec::default()
        };
        let mut h = Harness::ls(spec, &[5, 40], loss);
        h.run(secs(30));
        assert!(h.rx.next_tsn() > 5000, "{}", h.rx.next_tsn());
        h.largest_burst
    };
    for loss in [0.0, 0.01] {
        assert_eq!(run(4, loss).into_iter().max(), Some(4), "loss {loss}");
        assert!(run(2, loss).into_iter().all(|b| b <= 2), "loss {loss}");
        // Without the limit the same runs send bursts of many packets on a path.
        let unlimited = run(0, loss);
        assert!(unlimited.iter().any(|&b| b > 8), "{unlimited:?}");
    }
}

#[test]
fn ls_under_ns2s_max_burst_rule_a_path_bursts_freely_until_a_retransmission_is_acked() {
    // ns-2's SCTP module applies Max.Burst only once a SACK cumulatively acknowledges a chunk
    // that was retransmitted, until the limit has cut one burst short; RFC 4960 §6.1 D at every
    // send opportunity. Path 0 loses its SSN 0, fast-retransmits it on the third SACK, and the
    // SACK that acknowledges everything (the resend included) opens its whole window.
    let path0_sends = |rule: MaxBurstRule| {
        let spec = SctpSpec {
            mode: SctpMode::Ls,
            rcv_buffer: 1 << 20,
            initial_cwnd: Some(20 * 1500),
            max_burst_rule: rule,
            ..SctpSpec::default()
        };
        let mut tx = LsSender::new(config(&spec, 2));
        let mut out = Vec::new();
        tx.handle_timeout(SimTime::ZERO, &mut out);
        let mut sent = vec![data_of(&out).iter().filter(|d| d.0 == 0).count()];
        let none = u32::MAX;
        let sacks = [
            ls_sack_gaps(0, none, &[(2, 2)], none, 1 << 20),
            ls_sack_gaps(0, none, &[(2, 3)], none, 1 << 20),
            ls_sack_gaps(0, none, &[(2, 4)], none, 1 << 20), // the third miss: SSN 0 again
            ls_sack(0, 20, 20, 1 << 20),                     // SSNs 0-20, the resend among them
            ls_sack(0, 24, 20, 1 << 20),                     // SSNs 21-24, 2 in flight
        ];
        for (k, sack) in sacks.into_iter().enumerate() {
            out.clear();
            tx.handle_packet(SimTime::from_millis(10 + k as u64), sack, &mut out);
            sent.push(data_of(&out).iter().filter(|d| d.0 == 0).count());
        }
        assert_eq!(tx.path(0).counters.fast_retransmits, 1);
        sent
    };
    // ns-2: 21 chunks fill the first window at once, each gap-acked chunk frees one (the third
    // SACK's one is the resend); after the resend is acknowledged, 4 of the 9 the halved
    // window allows; then the rule is disarmed and 9 go at once again.
    assert_eq!(path0_sends(MaxBurstRule::Ns2), [21, 1, 1, 1, 4, 9]);
    // RFC 4960: never more than 4 in answer to one SACK or timer.
    let rfc = path0_sends(MaxBurstRule::Rfc4960);
    assert_eq!(rfc[0], 4);
    assert!(rfc.iter().all(|&n| n <= 4), "{rfc:?}");
}

#[test]
fn ls_fast_retransmits_on_the_third_miss_indication_or_on_the_fourth_with_rfc_2960s_threshold() {
    // RFC 4960 §7.2.4: fast retransmit on the third miss indication; RFC 2960 §7.2.4, which
    // paper 004 cites, waits for "3 further miss indications" after the first, the fourth.
    // Path 0 loses its SSN 0; each SACK gap-acknowledges one more SSN above it, one miss each.
    // Returns, after each SACK, path 0's fast retransmits and whether SSN 0 went out again.
    let resends = |threshold: u32| {
        let spec = SctpSpec {
            mode: SctpMode::Ls,
            rcv_buffer: 1 << 20,
            initial_cwnd: Some(20 * 1500),
            fast_rtx_threshold: threshold,
            ..SctpSpec::default()
        };
        let mut tx = LsSender::new(config(&spec, 2));
        let mut out = Vec::new();
        tx.handle_timeout(SimTime::ZERO, &mut out);
        let none = u32::MAX;
        let mut seen = Vec::new();
        for (k, last) in [2u16, 3, 4, 5].into_iter().enumerate() {
            out.clear();
            let sack = ls_sack_gaps(0, none, &[(2, last)], none, 1 << 20);
            tx.handle_packet(SimTime::from_millis(10 + k as u64), sack, &mut out);
            let resent = data_of(&out).iter().any(|d| d.0 == 0 && d.1 == 0);
            seen.push((tx.path(0).counters.fast_retransmits, resent));
        }
        seen
    };
    let third = [(0, false), (0, false), (1, true), (1, false)];
    assert_eq!(resends(3), third);
    let fourth = [(0, false), (0, false), (0, false), (1, true)];
    assert_eq!(resends(4), fourth);
}

#[test]
fn ls_tsns_still_waiting_for_a_redundant_copy_get_it_at_the_next_sack_and_are_not_taken_as_acked() {
    // Path 0 dies with 8 chunks in flight. Its T3 queues the 8 TSNs for copies; Max.Burst lets
    // path 1 carry 4 at that instant, the other 4 at its next SACK. (They were once taken for
    // acknowledged at that SACK, never copied, and the association waited for path 0.)
    let spec = SctpSpec {
        mode: SctpMode::Ls,
        rcv_buffer: 1 << 20,
        initial_cwnd: Some(10 * 1500),
        rto_initial: SimDuration::from_secs(1),
        ..SctpSpec::default()
    };
    let mut tx = LsSender::new(config(&spec, 2));
    let mut out = Vec::new();
    tx.handle_timeout(SimTime::ZERO, &mut out);
    // Max.Burst: 4 per path. Path 0: TSNs 0-3 (SSNs 0-3); path 1: TSNs 4-7.
    let tsns_on = |out: &[Packet], sid: u16| -> Vec<u32> {
        data_of(out)
            .iter()
            .filter(|d| d.0 == sid)
            .map(|d| d.2)
            .collect()
    };
    assert_eq!(
        (tsns_on(&out, 0), tsns_on(&out, 1)),
        (vec![0, 1, 2, 3], vec![4, 5, 6, 7])
    );
    // Path 1's SACK: 4 more on each path (path 0: TSNs 8-11, path 1: TSNs 12-15).
    out.clear();
    tx.handle_packet(
        SimTime::from_millis(20),
        ls_sack(1, 3, u32::MAX, 1 << 20),
        &mut out,
    );
    assert_eq!(tsns_on(&out, 0), [8, 9, 10, 11]);
    assert_eq!(tsns_on(&out, 1), [12, 13, 14, 15]);
    // Path 0's T3 (1 s after its first send; path 1's, restarted at 20 ms, is later): its 8
    // chunks are lost; 4 copies go on path 1 at once.
    out.clear();
    tx.handle_timeout(SimTime::from_secs(1), &mut out);
    let first: Vec<(u16, u32, u32)> = data_of(&out).into_iter().filter(|d| d.0 == 1).collect();
    assert_eq!(first.iter().map(|d| d.2).collect::<Vec<_>>(), [0, 1, 2, 3]);
    assert_eq!(tx.redundant_copies(), 4);
    // Path 1's next SACK (TSNs 12-15 and the first two copies): the other 4 copies go out.
    out.clear();
    let t = SimTime::from_millis(1010);
    tx.handle_packet(t, ls_sack(1, 9, u32::MAX, 1 << 20), &mut out);
    assert_eq!(tsns_on(&out, 1)[..4], [8, 9, 10, 11]);
    assert_eq!(tx.redundant_copies(), 8);
}

fn ls_sack(sid: u16, cum_ssn: u32, cum_tsn: u32, a_rwnd: u32) -> Packet {
    ls_sack_gaps(sid, cum_ssn, &[], cum_tsn, a_rwnd)
}

/// An LS SACK whose gap blocks are in the path's SSNs, as offsets from `cum_ssn`.
fn ls_sack_gaps(sid: u16, cum_ssn: u32, gaps: &[(u16, u16)], cum_tsn: u32, a_rwnd: u32) -> Packet {
    let mut p = sack(cum_tsn, gaps, a_rwnd);
    p.src = 20 + sid as u32;
    p.dst = 10 + sid as u32;
    if let Transport::Sctp(h) = &mut p.transport {
        if let SctpChunk::Sack(s) = &mut h.chunk {
            s.sid = sid;
            s.cum_ssn = cum_ssn;
        }
    }
    p
}

#[test]
fn ls_only_a_provably_newest_sack_changes_the_receive_window() {
    let spec = SctpSpec {
        mode: SctpMode::Ls,
        ..SctpSpec::default()
    };
    let mut tx = LsSender::new(config(&spec, 2));
    let mut out = Vec::new();
    tx.handle_timeout(SimTime::ZERO, &mut out);
    let t = SimTime::from_millis(30);
    // Path 0 carried TSNs 0, 1, ... as its SSNs 0, 1, ...: cum TSN 1 advances the CTSN.
    tx.handle_packet(t, ls_sack(0, 1, 1, 40_000), &mut out);
    assert_eq!(tx.a_rwnd(), 40_000);
    // An older SACK (cum TSN 0) from the other path: its window is not used.
    tx.handle_packet(t, ls_sack(1, u32::MAX, 0, 10_000), &mut out);
    assert_eq!(tx.a_rwnd(), 40_000);
    // The same cum TSN, nothing newly acked: not used either.
    tx.handle_packet(t, ls_sack(0, 1, 1, 20_000), &mut out);
    assert_eq!(tx.a_rwnd(), 40_000);
    assert_eq!(tx.rwnd_ignored(), 2);
}

/// The new TSNs an LS sender sends in answer to each of a hand-written sequence of SACKs, with
/// windows so large that only the receive-window rule (seed 004 Fig. 6, §3.5) limits them.
fn ls_new_tsns_per_sack(outstanding: LsOutstanding) -> (Vec<u32>, LsSender) {
    let c = SctpSpec::default().chunk_len();
    let spec = SctpSpec {
        mode: SctpMode::Ls,
        rcv_buffer: 20 * c as u64,
        initial_cwnd: Some(100 * 1500),
        max_burst: 0,
        ls_outstanding: outstanding,
        ..SctpSpec::default()
    };
    let mut tx = LsSender::new(config(&spec, 2));
    let mut out = Vec::new();
    tx.handle_timeout(SimTime::ZERO, &mut out);
    // The buffer's 20 chunks go out at once, split by the equal windows: path 0 carries TSNs
    // 0-9 as its SSNs 0-9, path 1 TSNs 10-19 as its SSNs 0-9.
    let first: Vec<(u16, u32, u32)> = data_of(&out);
    assert_eq!(first.len(), 20);
    assert!(first[..10]
        .iter()
        .all(|&(sid, ssn, tsn)| sid == 0 && tsn == ssn));
    assert!(first[10..]
        .iter()
        .all(|&(sid, ssn, tsn)| sid == 1 && tsn == ssn + 10));
    let none = u32::MAX; // a cum TSN before TSN 0: nothing in order yet
    let sacks = [
        // 1. Path 1 is faster: TSNs 10-14 arrive first and wait above the hole at TSN 0.
        //    a_rwnd = 20 - 5 held; same cum TSN, newly acks TSNs: provably the newest.
        ls_sack(1, 4, none, 15 * c),
        // 2. Path 0's TSNs 0-5 arrive: delivered; TSNs 10-14 still held. Cum TSN 5.
        //    The receiver's free room: 20 - 5 held - 9 in flight (6-9, 15-19) = 6 chunks.
        ls_sack(0, 5, 5, 15 * c),
        // 3. A path-1 SACK from before SACK 1 (TSNs 10-12) arrives late: its cum TSN is
        //    older, so its window is ignored.
        ls_sack(1, 2, none, 17 * c),
        // 4. TSNs 15-16 arrive on path 1: 7 held, cum TSN still 5, newly acked: the newest.
        ls_sack(1, 6, 5, 13 * c),
        // 5. TSNs 6-9 arrive on path 0: 0-16 delivered, nothing held.
        ls_sack(0, 9, 16, 20 * c),
    ];
    let mut next_tsn = 20;
    let mut sent = Vec::new();
    for (k, sack) in sacks.into_iter().enumerate() {
        out.clear();
        tx.handle_packet(SimTime::from_millis(10 + k as u64), sack, &mut out);
        let new: Vec<u32> = data_of(&out).iter().map(|d| d.2).collect();
        assert!(
            new.iter().all(|&t| t >= next_tsn),
            "resend after SACK {}",
            k + 1
        );
        next_tsn += new.len() as u32;
        sent.push(new.len() as u32);
    }
    (sent, tx)
}

fn data_of(out: &[Packet]) -> Vec<(u16, u32, u32)> {
    out.iter()
        .filter_map(|p| match &p.transport {
            Transport::Sctp(h) => match &h.chunk {
                SctpChunk::Data(d) => Some((d.sid, d.ssn, d.tsn)),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

#[test]
fn ls_receive_window_counts_a_held_chunk_once_where_the_papers_words_count_it_twice() {
    // Fig. 6 and §3.5 as written: rwnd = floor(a_rwnd / C) - (HTSN - CTSN). After SACK 2:
    // 15 - (19 - 5) = 1, though 6 chunks fit: TSNs 10-14 are out of a_rwnd already (held)
    // and counted again in HTSN - CTSN. After SACK 4: 13 - (20 - 5) < 0, nothing. After
    // SACK 5: 20 - (20 - 16) = 16.
    let (paper, tx) = ls_new_tsns_per_sack(LsOutstanding::HtsnMinusCtsn);
    assert_eq!(paper, [0, 1, 0, 0, 16]);
    assert_eq!(tx.rwnd_ignored(), 1, "SACK 3 only");
    assert_eq!(tx.a_rwnd(), 20 * 1452);
    // Outstanding as the TSNs neither cumulatively nor SSN-acknowledged (RFC 4960 §6.2.1 D iv,
    // the paper's Virtual Send buffer): after SACK 2, 15 - (14 - 5 acked) = 6, the receiver's
    // real room; after SACK 4, 13 - (20 - 7) = 0; after SACK 5, 20 - (25 - 16) = 11.
    let (unacked, tx) = ls_new_tsns_per_sack(LsOutstanding::Unacked);
    assert_eq!(unacked, [0, 6, 0, 0, 11]);
    assert_eq!(tx.rwnd_ignored(), 1);
}

#[test]
fn an_ls_sack_is_20_bytes_plus_4_per_ssn_gap_block_and_duplicate_ssn() {
    let mut rx = ls_receiver();
    let mut out = Vec::new();
    // Path 1 carries SSNs 0, 2, 3, 5 (TSNs 10, 12, 13, 15), then SSN 0 again.
    for (ssn, tsn) in [(0, 10), (2, 12), (3, 13), (5, 15), (0, 10)] {
        let mut p = data(tsn);
        p.dst = 21;
        p.src = 11;
        if let Transport::Sctp(h) = &mut p.transport {
            if let SctpChunk::Data(d) = &mut h.chunk {
                d.sid = 1;
                d.ssn = ssn;
            }
        }
        rx.handle_packet(SimTime::ZERO, p, &mut out);
    }
    let (s, size) = *sacks(&out).last().unwrap();
    assert_eq!((s.sid, s.cum_ssn), (1, 0));
    assert_eq!(
        s.cum_tsn,
        u32::MAX,
        "TSNs 0-9 never came: nothing in order yet"
    );
    assert_eq!(s.gap_blocks(), [(2, 3), (5, 5)]);
    assert_eq!(s.dup_tsns(), [0], "duplicate SSNs");
    assert_eq!(rx.counters().duplicate_segments, 1, "TSN 10 twice");
    assert_eq!(size - 20 - 12, 20 + 4 * 2 + 4);
    // Sent back to where the DATA came from, out of the address it arrived at.
    assert_eq!((out[0].src, out[0].dst), (21, 11));
}

#[test]
fn an_ls_copy_of_a_tsn_the_receiver_has_counts_as_a_duplicate_chunk_though_its_ssn_is_new() {
    let mut rx = ls_receiver();
    let mut out = Vec::new();
    // TSN 0 as path 0's SSN 0 and, as a redundant copy, as path 1's SSN 0.
    for sid in [0, 1] {
        let mut p = data(0);
        if let Transport::Sctp(h) = &mut p.transport {
            if let SctpChunk::Data(d) = &mut h.chunk {
                d.sid = sid;
            }
        }
        rx.handle_packet(SimTime::ZERO, p, &mut out);
    }
    assert_eq!(rx.counters().packets_received, 2);
    assert_eq!(rx.counters().bytes_delivered, 1452);
    let dups = rx.counters().duplicate_segments;
    assert_eq!(dups, 1, "the copy brought nothing new");
    // Path 1's SSN 0 is new to it: no duplicate there, the SACK waits for its timer.
    rx.handle_timeout(SimTime::from_millis(200), &mut out);
    let (s, _) = *sacks(&out).last().unwrap();
    assert_eq!((s.sid, s.cum_ssn), (1, 0));
    assert!(s.dup_tsns().is_empty());
}

// ---------------------------------------------------------------------------------------------
// CMT

fn cmt(f: impl FnOnce(&mut SctpSpec)) -> SctpSpec {
    let mut spec = SctpSpec {
        mode: SctpMode::Cmt,
        rcv_buffer: 1 << 20,
        ..SctpSpec::default()
    };
    f(&mut spec);
    spec
}

#[test]
fn cmt_split_fast_retransmit_removes_the_fast_retransmits_reordering_causes() {
    // Two loss-free paths of unequal delay: chunks on the short path overtake those on the
    // long one. SFR: no fast retransmit at all; without it, many needless ones.
    let mut on = Harness::new(cmt(|_| {}), &[5, 40], 0.0);
    on.run(secs(20));
    assert_eq!(on.tx.counters().fast_retransmits, 0);
    let mut off = Harness::new(cmt(|s| s.cmt_sfr = false), &[5, 40], 0.0);
    off.run(secs(20));
    assert!(
        off.tx.counters().fast_retransmits > 10,
        "{:?}",
        off.tx.counters()
    );
    // Both paths carry new data.
    assert!(on.tx.paths()[0].counters.data_packets > 1000);
    assert!(on.tx.paths()[1].counters.data_packets > 1000);
    let chunk = SctpSpec::default().chunk_len() as u64;
    assert_eq!(
        on.rx.counters().bytes_delivered,
        on.rx.next_tsn() as u64 * chunk
    );
}

#[test]
fn cmt_cwnd_update_lets_each_path_grow_while_the_cum_ack_stalls() {
    // Over the first second the windows are still opening: with CUC each path grows on its
    // own acknowledgments; without it growth waits for the cum ack, which the long path holds.
    let mut on = Harness::new(cmt(|_| {}), &[5, 40], 0.0);
    on.run(SimTime::from_millis(1000));
    let mut off = Harness::new(cmt(|s| s.cmt_cuc = false), &[5, 40], 0.0);
    off.run(SimTime::from_millis(1000));
    let (c_on, c_off) = (on.tx.paths()[0].cwnd, off.tx.paths()[0].cwnd);
    assert!(
        c_on > c_off,
        "short path cwnd with CUC {c_on}, without {c_off}"
    );
}

#[test]
fn cmt_delayed_ack_keeps_one_sack_per_two_packets_despite_reordering() {
    let mut on = Harness::new(cmt(|_| {}), &[5, 40], 0.0);
    on.run(secs(10));
    let ratio = |h: &Harness| h.rx.sacks_sent() as f64 / h.rx.counters().packets_received as f64;
    assert!(
        ratio(&on) < 0.55,
        "SACKs per packet with DAC {}",
        ratio(&on)
    );
    let mut off = Harness::new(cmt(|s| s.cmt_dac = false), &[5, 40], 0.0);
    off.run(secs(10));
    assert!(
        ratio(&off) > ratio(&on) + 0.1,
        "without DAC {}",
        ratio(&off)
    );
}

#[test]
fn cmt_delivers_the_tsn_stream_once_and_in_order_under_loss() {
    let mut h = Harness::new(cmt(|s| s.rcv_buffer = 65_536), &[10, 30], 0.03);
    h.run(secs(120));
    let chunk = SctpSpec::default().chunk_len() as u64;
    assert_eq!(
        h.rx.counters().bytes_delivered,
        h.rx.next_tsn() as u64 * chunk
    );
    assert!(h.rx.next_tsn() > 1000);
}

#[test]
fn rtx_cwnd_and_rtx_ssthresh_pick_the_active_path_with_the_largest_value() {
    let mut tx = SctpSender::new(config(&cmt(|_| {}), 3));
    let p = tx.paths_mut();
    (p[0].cwnd, p[1].cwnd, p[2].cwnd) = (5000, 9000, 7000);
    (p[0].ssthresh, p[1].ssthresh, p[2].ssthresh) = (30_000, 10_000, 20_000);
    assert_eq!(tx.rtx_destination_of(0), 1);
    tx.paths_mut()[1].active = false;
    assert_eq!(tx.rtx_destination_of(0), 2, "inactive paths are skipped");
    let mut tx = SctpSender::new(config(&cmt(|s| s.rtx_policy = RtxPolicy::Ssthresh), 3));
    let p = tx.paths_mut();
    (p[0].ssthresh, p[1].ssthresh, p[2].ssthresh) = (30_000, 10_000, 20_000);
    assert_eq!(tx.rtx_destination_of(2), 0);
}

#[test]
fn coupled_increase_makes_two_paths_grow_slower_together_than_uncoupled() {
    // The same loss-free start with and without LIA: coupled windows stay smaller.
    let run = |coupled: bool| {
        let spec = cmt(|s| {
            s.coupled = coupled;
            s.initial_ssthresh = Some(10_000);
        });
        let mut h = Harness::new(spec, &[20, 20], 0.0);
        h.run(secs(5));
        h.tx.cwnd_total()
    };
    let (alone, coupled) = (run(false), run(true));
    assert!(coupled < alone, "coupled {coupled}, uncoupled {alone}");
}

#[test]
fn cmt_keeps_sending_on_the_other_path_while_one_is_down_and_takes_it_back_after() {
    // Path 0 is cut from 5 s to 60 s. Path.Max.Retrans = 2: three consecutive T3 expiries
    // fail the path (§8.2), the plan's failover setting.
    let spec = cmt(|s| {
        s.rcv_buffer = 65_536;
        s.path_max_retrans = 2;
    });
    let mut h = Harness::new(spec, &[10, 10], 0.0);
    h.down[0] = Some((secs(5), secs(60)));
    h.run(secs(5));
    let p = h.tx.paths();
    assert!(p[0].counters.data_packets > 1000 && p[1].counters.data_packets > 1000);
    // The RTO budget: the first expiry at most one RTO (1 s, RTO.Min) after the cut; an ack of
    // a chunk that crossed path 0 before the cut may clear its counter once (see the single-
    // path test); then the expiries with the RTO doubling: 2, 4 (and 8) s. This run fails
    // path 0 7.1 s after the cut.
    assert_eq!(p[0].rto.rto(), SimDuration::from_secs(1));
    let budget_ms = (1 + 2 + 4 + 8) * 1000;
    let mut failed_at = None;
    for ms in (5000..5000 + budget_ms).step_by(100) {
        h.run(SimTime::from_millis(ms));
        if !h.tx.paths()[0].active {
            failed_at = Some(ms);
            break;
        }
    }
    let failed_at = failed_at.expect("path 0 never failed within the RTO budget");
    // From the failure on, new data crosses path 1 alone and keeps flowing.
    let (delivered, sent_on_0) = (
        h.rx.counters().bytes_delivered,
        h.tx.paths()[0].counters.data_packets,
    );
    h.run(secs(55));
    let chunk = SctpSpec::default().chunk_len() as u64;
    assert!(
        h.rx.counters().bytes_delivered > delivered + 10_000 * chunk,
        "failed at {failed_at} ms; {} bytes delivered after",
        h.rx.counters().bytes_delivered - delivered
    );
    // Path 0 carried nothing new while failed (its T3 resends and heartbeats at most).
    let p0 = &h.tx.paths()[0];
    assert!(
        p0.counters.data_packets - sent_on_0 <= p0.counters.timeouts,
        "{:?}",
        p0.counters
    );
    // After the cut a heartbeat is answered (within RTO + hb_interval, doubled RTOs aside)
    // and path 0 carries new data again beside path 1.
    h.run(secs(200));
    let p = h.tx.paths();
    assert!(p[0].active, "path 0 did not come back");
    assert!(p[0].counters.heartbeat_acks > 0);
    assert!(
        p[0].counters.data_packets > sent_on_0 + 1000,
        "{:?}",
        p[0].counters
    );
    assert_eq!(
        h.rx.counters().bytes_delivered,
        h.rx.next_tsn() as u64 * chunk
    );
}

#[test]
fn cmt_max_burst_is_per_path_so_both_windows_fill_and_grow_when_half_the_sacks_are_stale() {
    // Path 1 is 14 ms longer: SACKs go back the way the last DATA came (§6.4), so those on
    // path 1 arrive behind newer ones and are dropped (§6.2.1 D i). With Max.Burst counted on
    // the association, two paths shared four packets per remaining SACK, sent only what the
    // SACKs acknowledged, never filled a window and stayed at the initial cwnd: 998 packets in
    // 5 s. Per path (RFC 4960 §6.1 D's cwnd form), both windows fill and grow.
    let mut h = Harness::new(cmt(|s| s.rcv_buffer = 65_536), &[10, 24], 0.0);
    h.run(secs(5));
    assert!(h.tx.stale_sacks() > 100, "{}", h.tx.stale_sacks());
    let p = h.tx.paths();
    let mtu = 1500;
    assert!(
        p[0].cwnd > 10 * mtu && p[1].cwnd > 10 * mtu,
        "{} {}",
        p[0].cwnd,
        p[1].cwnd
    );
    assert!(
        h.rx.counters().packets_received > 4000,
        "{}",
        h.rx.counters().packets_received
    );
}
