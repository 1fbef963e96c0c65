// SPDX-License-Identifier: MIT
//! TCP sender: one-way bulk or finite transfer, with Reno (RFC 5681), NewReno (RFC 6582) or
//! SACK-based (RFC 6675) loss recovery, the RFC 6298 retransmission timer, and a pluggable
//! congestion-control algorithm ([`crate::cc`]).
//!
//! The connection is modelled from the first data segment (no handshake): the papers measure
//! transfers, not connection set-up, and a SYN exchange would only shift every curve by one RTT.
//!
//! ```text
//!   ACK ──> scoreboard (cumulative ACK, SACK blocks, loss marks)
//!       ├─ new data acked:  outside recovery → cc.on_ack grows cwnd
//!       │                   in recovery      → full ACK ends it / partial ACK (NewReno) resends
//!       ├─ duplicate ACK:   DupThresh (or SACK loss) → cc.on_congestion → fast retransmit
//!       └─ transmit(): lost segments first, then new data, while pipe + len ≤ window
//!   RTO ──> cc.on_congestion (first expiry only), cwnd = 1 SMSS, everything unSACKed lost
//! ```
//!
//! One sending rule serves every variant: send while `pipe + len ≤ min(cwnd, max_window)`, where
//! `pipe` is RFC 6675's estimate (for Reno and NewReno, which have no SACK information, it equals
//! SND.MAX − SND.UNA during fast recovery, so the inflated cwnd of RFC 5681 §3.2 step 4 works as
//! the RFC describes).

use crate::cc::{
    AckEvent, AnyCc, CongestionControl, CongestionEvent, CongestionKind, SendEvent, Window,
};
use crate::endpoint::{Endpoint, FlowCounters};
use crate::packet::{Addr, CcHeader, FlowId, Packet, Port, SackOption, TcpHeader, Transport};
use crate::tcp::config::{Recovery, TcpSpec};
use crate::tcp::rto::{RtoConfig, RtoEstimator};
use crate::tcp::scoreboard::Scoreboard;
use crate::time::{SimDuration, SimTime};

/// Where a sender sits and what it sends.
#[derive(Clone, Debug)]
pub struct TcpSenderConfig {
    pub addr: Addr,
    pub dst_addr: Addr,
    pub port: Port,
    pub dst_port: Port,
    pub flow: FlowId,
    pub start: SimTime,
    /// No new data after this time (retransmissions go on).
    pub stop: Option<SimTime>,
    /// Bytes to transfer (None: unlimited).
    pub size: Option<u64>,
    pub tcp: TcpSpec,
}

#[derive(Clone, Copy, Debug)]
struct RecoveryState {
    /// RFC 6582 `recover` / RFC 6675 RecoveryPoint: SND.MAX when recovery began.
    point: u64,
    /// NewReno restarts the timer on the first partial ACK only (RFC 6582 §3.2 step 5).
    partial_seen: bool,
}

#[derive(Clone, Debug)]
pub struct TcpSender {
    cfg: TcpSenderConfig,
    mss: u64,
    board: Scoreboard,
    cc: AnyCc,
    w: Window,
    rto: RtoEstimator,
    rto_deadline: Option<SimTime>,
    started: bool,
    dupacks: u32,
    recovery: Option<RecoveryState>,
    /// Highest SND.MAX at the last fast retransmit or RTO: no new fast recovery until SND.UNA
    /// passes it (RFC 6582 §3.2 step 2; also ns-2 Reno's `bug_fix_`).
    recover: Option<u64>,
    /// Send the next retransmission even if the window is full (fast retransmit, RTO).
    force_retransmit: bool,
    peer_rwnd: u64,
    app_limit: u64,
    min_rtt: Option<SimDuration>,
    counters: FlowCounters,
}

impl TcpSender {
    pub fn new(cfg: TcpSenderConfig) -> Self {
        let t = &cfg.tcp;
        let mss = t.mss as u64;
        let cc = AnyCc::new(&t.cc, t.growth);
        let w = Window {
            cwnd: t.initial_cwnd().min(t.max_window.unwrap_or(u64::MAX)),
            ssthresh: t.initial_ssthresh.unwrap_or(u64::MAX),
        };
        let rto = RtoEstimator::new(RtoConfig {
            initial: t.rto_initial,
            min: t.rto_min,
            max: t.rto_max,
            granularity: t.clock_granularity,
        });
        TcpSender {
            mss,
            board: Scoreboard::new(t.mss),
            cc,
            w,
            rto,
            rto_deadline: None,
            started: false,
            dupacks: 0,
            recovery: None,
            recover: None,
            force_retransmit: false,
            peer_rwnd: t.rcv_buffer,
            app_limit: cfg.size.unwrap_or(u64::MAX),
            min_rtt: None,
            counters: FlowCounters::default(),
            cfg,
        }
    }

    pub fn counters(&self) -> &FlowCounters {
        &self.counters
    }
    pub fn cwnd(&self) -> u64 {
        self.w.cwnd
    }
    pub fn ssthresh(&self) -> u64 {
        self.w.ssthresh
    }
    pub fn srtt(&self) -> Option<SimDuration> {
        self.rto.srtt()
    }
    pub fn rto(&self) -> SimDuration {
        self.rto.rto()
    }
    pub fn snd_una(&self) -> u64 {
        self.board.snd_una()
    }
    pub fn snd_max(&self) -> u64 {
        self.board.snd_max()
    }
    pub fn in_recovery(&self) -> bool {
        self.recovery.is_some()
    }
    pub fn pipe(&self) -> u64 {
        self.board.pipe()
    }
    /// True once a finite transfer is fully acknowledged.
    pub fn is_complete(&self) -> bool {
        self.counters.completed_at.is_some()
    }

    /// Hands `bytes` more application data to the sender and sends what the windows allow. For
    /// a sender whose transfer size is not known up front (a relay, such as I-TCP's base
    /// station): build it with `size: Some(0)` and offer bytes as they arrive. The transfer is
    /// complete again only once the new bytes are acknowledged.
    pub fn offer(&mut self, now: SimTime, bytes: u64, out: &mut Vec<Packet>) {
        if bytes == 0 {
            return;
        }
        self.app_limit = self.app_limit.saturating_add(bytes);
        self.counters.completed_at = None;
        self.transmit(now, out);
    }

    fn uses_sack(&self) -> bool {
        self.cfg.tcp.recovery == Recovery::Sack
    }

    fn max_window(&self) -> u64 {
        self.cfg.tcp.max_window.unwrap_or(u64::MAX)
    }

    fn restart_timer(&mut self, now: SimTime) {
        self.rto_deadline = if self.board.flight_size() > 0 {
            Some(now + self.rto.rto())
        } else {
            None
        };
    }

    fn on_ack(&mut self, now: SimTime, h: &TcpHeader, out: &mut Vec<Packet>) {
        self.peer_rwnd = h.rwnd as u64;
        let snd_una = self.board.snd_una();
        let ack = h.ack.min(self.board.snd_max());
        let cum = self.board.on_cumulative_ack(ack);
        if self.uses_sack() && !h.sack.is_empty() {
            for (l, r) in h.sack.iter(h.ack) {
                self.board.on_sack_block(l, r);
            }
            self.board.update_lost(self.cfg.tcp.dupthresh);
        }
        if cum.bytes_acked > 0 {
            if let Some(sent_at) = cum.sample_sent_at {
                let r = now.saturating_since(sent_at);
                self.rto.on_sample(r);
                let c = &mut self.counters;
                c.rtt_sum_ns += r.as_nanos() as u128;
                c.rtt_samples += 1;
                c.rtt_min_ns = Some(c.rtt_min_ns.map_or(r.as_nanos(), |m| m.min(r.as_nanos())));
                self.min_rtt = Some(self.min_rtt.map_or(r, |m| m.min(r)));
            }
            self.on_new_ack(
                now,
                cum.bytes_acked,
                h.cc,
                cum.sample_sent_at.map(|s| now.saturating_since(s)),
            );
        } else if ack == snd_una && h.len == 0 && self.board.flight_size() > 0 {
            self.on_dupack(now);
        }
        self.transmit(now, out);
    }

    fn on_new_ack(
        &mut self,
        now: SimTime,
        bytes_acked: u64,
        echo: CcHeader,
        rtt_sample: Option<SimDuration>,
    ) {
        self.dupacks = 0;
        let una = self.board.snd_una();
        let mut restart = true;
        match self.recovery {
            Some(rec) if una >= rec.point => {
                // Full ACK: leave recovery.
                self.recovery = None;
                if self.cfg.tcp.recovery == Recovery::NewReno {
                    // RFC 6582 §3.2 step 3, option (1): avoid a burst after recovery.
                    let flight = self.board.flight_size();
                    self.w.cwnd = self.w.ssthresh.min(flight.max(self.mss) + self.mss);
                } else {
                    self.w.cwnd = self.w.ssthresh;
                }
                self.cc.on_recovery_end(now, &mut self.w);
            }
            Some(mut rec) => match self.cfg.tcp.recovery {
                Recovery::Reno => {
                    // RFC 5681 §3.2 step 6: the first ACK of new data deflates and ends it.
                    self.recovery = None;
                    self.w.cwnd = self.w.ssthresh;
                    self.cc.on_recovery_end(now, &mut self.w);
                }
                Recovery::NewReno => {
                    // RFC 6582 §3.2 step 5: partial ACK. Resend the first unacknowledged segment,
                    // deflate by the amount acked, add back one SMSS if that was at least one.
                    self.board.mark_front_lost();
                    self.force_retransmit = true;
                    self.w.cwnd = self.w.cwnd.saturating_sub(bytes_acked);
                    if bytes_acked >= self.mss {
                        self.w.cwnd += self.mss;
                    }
                    self.w.cwnd = self.w.cwnd.max(self.mss);
                    restart = !rec.partial_seen;
                    rec.partial_seen = true;
                    self.recovery = Some(rec);
                }
                Recovery::Sack => {
                    // RFC 6675 §5 step (C): keep sending by pipe; the scoreboard knows what to
                    // resend. A hole at SND.UNA not yet marked lost is resent now, as in NewReno,
                    // so that recovery does not stall waiting for DupThresh more SACKs.
                    if !self.board.front_is_lost() {
                        self.board.mark_front_lost();
                    }
                }
            },
            None => {
                let ev = AckEvent {
                    bytes_acked,
                    snd_una: una,
                    flight_size: self.board.flight_size(),
                    mss: self.mss,
                    rtt_sample,
                    srtt: self.rto.srtt(),
                    min_rtt: self.min_rtt,
                    echo,
                };
                self.cc.on_ack(now, &ev, &mut self.w);
                self.w.cwnd = self.w.cwnd.min(self.max_window()).max(self.mss);
            }
        }
        if una >= self.app_limit && self.counters.completed_at.is_none() {
            self.counters.completed_at = Some(now);
        }
        if restart || self.board.flight_size() == 0 {
            // RFC 6298 (5.2), (5.3).
            self.restart_timer(now);
        }
    }

    fn on_dupack(&mut self, now: SimTime) {
        self.dupacks += 1;
        if self.recovery.is_some() {
            if !self.uses_sack() {
                // RFC 5681 §3.2 step 4: each further dupack means a segment left the network.
                self.w.cwnd += self.mss;
            }
            return;
        }
        let sack_loss = self.uses_sack() && self.board.front_is_lost();
        if self.dupacks < self.cfg.tcp.dupthresh && !sack_loss {
            return;
        }
        let una = self.board.snd_una();
        if self.recover.is_some_and(|r| una <= r) {
            // RFC 6582 §3.2 step 2: these dupacks belong to a window already reduced for.
            return;
        }
        self.enter_recovery(now);
    }

    fn enter_recovery(&mut self, now: SimTime) {
        let flight = self.board.flight_size();
        let ssthresh = self.cc.on_congestion(
            now,
            &CongestionEvent {
                kind: CongestionKind::DupAck,
                flight_size: flight,
                window: self.w,
                mss: self.mss,
            },
        );
        self.w.ssthresh = ssthresh;
        let point = self.board.snd_max();
        self.recover = Some(point);
        self.recovery = Some(RecoveryState {
            point,
            partial_seen: false,
        });
        self.w.cwnd = if self.uses_sack() {
            // RFC 6675 §5 step (4.2): cwnd = ssthresh, no inflation (pipe does the work).
            ssthresh
        } else {
            // RFC 5681 §3.2 step 3: inflate by the segments that left the network.
            ssthresh + self.cfg.tcp.dupthresh as u64 * self.mss
        };
        self.board.mark_front_lost();
        self.force_retransmit = true;
        self.counters.fast_retransmits += 1;
    }

    fn on_rto(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        self.counters.timeouts += 1;
        // RFC 5681 §3.1 eq. (4): reduce ssthresh on the first expiry only, not on back-offs.
        // Nor when the timer fires during fast recovery: this window was already reduced for,
        // and FlightSize now counts everything sent while cwnd was inflated, so halving it
        // would *raise* ssthresh (Linux `tcp_enter_loss` keeps ssthresh in that state too).
        if self.rto.backoff() == 0 && self.recovery.is_none() {
            self.w.ssthresh = self.cc.on_congestion(
                now,
                &CongestionEvent {
                    kind: CongestionKind::Rto,
                    flight_size: self.board.flight_size(),
                    window: self.w,
                    mss: self.mss,
                },
            );
        }
        // RFC 5681 §3.1: loss window of one full-sized segment.
        self.w.cwnd = self.mss;
        self.recover = Some(self.board.snd_max());
        self.recovery = None;
        self.dupacks = 0;
        self.rto.on_expiry();
        self.board.mark_all_lost();
        self.force_retransmit = true;
        self.rto_deadline = Some(now + self.rto.rto());
        self.transmit(now, out);
    }

    /// What the window is compared with. During loss recovery, and after an RTO while data is
    /// marked lost, it is RFC 6675's `pipe`; otherwise RFC 5681's FlightSize (SND.MAX −
    /// SND.UNA), so SACKed duplicate ACKs before DupThresh do not release new data (that is
    /// RFC 3042 Limited Transmit's job, a separate option).
    fn in_flight(&self) -> u64 {
        if self.recovery.is_some() || self.board.lost_bytes() > 0 {
            self.board.pipe()
        } else {
            self.board.flight_size()
        }
    }

    /// Send what the window allows: retransmissions first (RFC 6675 NextSeg rule 1), then new
    /// data (rule 2).
    fn transmit(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        if !self.started {
            return;
        }
        let mut window = self.w.cwnd.min(self.max_window());
        if self.cfg.tcp.limited_transmit && self.recovery.is_none() && self.dupacks > 0 {
            // RFC 3042 §2: one new segment for each of the first two dupacks.
            window += self.dupacks.min(2) as u64 * self.mss;
        }
        let data_stops = self.cfg.stop.is_some_and(|t| now >= t);
        loop {
            let in_flight = self.in_flight();
            if let Some((seq, len)) = self.board.next_retransmission() {
                if self.force_retransmit || in_flight + len as u64 <= window {
                    self.force_retransmit = false;
                    self.board.on_retransmit(seq, now);
                    self.counters.retransmits += 1;
                    self.emit(now, seq, len, true, out);
                    continue;
                }
                break;
            }
            self.force_retransmit = false;
            let snd_max = self.board.snd_max();
            if data_stops || snd_max >= self.app_limit {
                break;
            }
            let len = self.mss.min(self.app_limit - snd_max);
            let rwnd_edge = self.board.snd_una().saturating_add(self.peer_rwnd);
            if snd_max + len > rwnd_edge || in_flight + len > window {
                break;
            }
            self.board.on_send(len as u32, now);
            self.emit(now, snd_max, len as u32, false, out);
        }
        if self.rto_deadline.is_none() && self.board.flight_size() > 0 {
            // RFC 6298 (5.1).
            self.rto_deadline = Some(now + self.rto.rto());
        }
    }

    fn emit(&mut self, now: SimTime, seq: u64, len: u32, retx: bool, out: &mut Vec<Packet>) {
        let mut cc_hdr = CcHeader::None;
        self.cc.on_send(
            now,
            &SendEvent {
                seq,
                len,
                is_retransmission: retx,
                window: self.w,
                srtt: self.rto.srtt(),
            },
            &mut cc_hdr,
        );
        let size = len + self.cfg.tcp.header_bytes;
        let c = &mut self.counters;
        c.bytes_sent += len as u64;
        c.wire_bytes_sent += size as u64;
        c.packets_sent += 1;
        c.first_send.get_or_insert(now);
        out.push(Packet {
            src: self.cfg.addr,
            dst: self.cfg.dst_addr,
            size,
            dscp: 0,
            ecn: 0,
            flow: self.cfg.flow,
            sent_at: now,
            transport: Transport::Tcp(TcpHeader {
                src_port: self.cfg.port,
                dst_port: self.cfg.dst_port,
                seq,
                ack: 0,
                len,
                rwnd: 0,
                flags: if retx { TcpHeader::FLAG_RETX } else { 0 },
                sack: SackOption::default(),
                cc: cc_hdr,
            }),
        });
    }
}

impl Endpoint for TcpSender {
    fn handle_packet(&mut self, now: SimTime, pkt: Packet, out: &mut Vec<Packet>) {
        if let Transport::Tcp(h) = &pkt.transport {
            if h.is_ack() {
                self.on_ack(now, h, out);
            }
        }
    }

    fn handle_timeout(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        if !self.started {
            if now < self.cfg.start {
                return;
            }
            self.started = true;
            self.transmit(now, out);
            return;
        }
        if self.rto_deadline.is_some_and(|t| t <= now) {
            self.on_rto(now, out);
        }
    }

    fn poll_timeout(&self) -> Option<SimTime> {
        if !self.started {
            Some(self.cfg.start)
        } else {
            self.rto_deadline
        }
    }
}

#[cfg(test)]
mod tests {
    //! Hand-computed traces (tcp-core.md "Checks" 4, 5, 7, 9): a 20-segment window, MSS 1000,
    //! the receiver's ACKs crafted by hand.
    use super::*;
    use crate::packet::SackBlocks;
    use crate::tcp::config::InitialWindow;

    const MSS: u64 = 1000;

    fn sender(recovery: Recovery) -> TcpSender {
        let tcp = TcpSpec {
            recovery,
            mss: MSS as u32,
            initial_window: InitialWindow::Segments(20),
            delayed_ack: false,
            ..TcpSpec::default()
        };
        TcpSender::new(TcpSenderConfig {
            addr: 0,
            dst_addr: 1,
            port: 0,
            dst_port: 1,
            flow: 0,
            start: SimTime::ZERO,
            stop: None,
            size: None,
            tcp,
        })
    }

    fn ack_pkt(ack: u64, sack: &[(u64, u64)]) -> Packet {
        let mut blocks = SackBlocks::default();
        for &b in sack {
            blocks.push(b);
        }
        Packet {
            src: 1,
            dst: 0,
            size: 40,
            dscp: 0,
            ecn: 0,
            flow: 0,
            sent_at: SimTime::ZERO,
            transport: Transport::Tcp(TcpHeader {
                src_port: 1,
                dst_port: 0,
                ack,
                rwnd: u32::MAX,
                flags: TcpHeader::FLAG_ACK,
                sack: SackOption::encode(ack, &blocks),
                ..TcpHeader::default()
            }),
        }
    }

    fn seqs(out: &[Packet]) -> Vec<u64> {
        out.iter().map(|p| p.tcp().map_or(0, |h| h.seq)).collect()
    }

    fn t(ms: u64) -> SimTime {
        SimTime::from_millis(ms)
    }

    fn start(s: &mut TcpSender) -> Vec<Packet> {
        let mut out = vec![];
        s.handle_timeout(SimTime::ZERO, &mut out);
        out
    }

    #[test]
    fn reno_halves_the_flight_inflates_by_three_and_deflates_on_the_new_ack() {
        let mut s = sender(Recovery::Reno);
        assert_eq!(start(&mut s).len(), 20);
        let mut out = vec![];
        for _ in 0..2 {
            s.handle_packet(t(50), ack_pkt(0, &[]), &mut out);
        }
        assert!(out.is_empty(), "no retransmission before the third dupack");
        s.handle_packet(t(50), ack_pkt(0, &[]), &mut out);
        assert_eq!(s.ssthresh(), 10 * MSS);
        assert_eq!(s.cwnd(), 13 * MSS);
        assert_eq!(seqs(&out), vec![0], "fast retransmit of the first segment");
        out.clear();
        for _ in 3..19 {
            s.handle_packet(t(51), ack_pkt(0, &[]), &mut out);
        }
        assert_eq!(s.cwnd(), 29 * MSS, "+1 MSS per further dupack");
        // Inflation lets 9 new segments out: pipe 20 + n + 1 <= 29.
        assert_eq!(seqs(&out), (20..29).map(|i| i * MSS).collect::<Vec<_>>());
        out.clear();
        s.handle_packet(t(100), ack_pkt(20 * MSS, &[]), &mut out);
        assert_eq!(s.cwnd(), 10 * MSS, "deflated to ssthresh");
        assert!(!s.in_recovery());
        assert_eq!(s.counters().fast_retransmits, 1);
    }

    #[test]
    fn newreno_recovers_three_losses_in_one_window_with_one_reduction() {
        let mut s = sender(Recovery::NewReno);
        start(&mut s);
        let mut out = vec![];
        // Segments 0, 5 and 10 are lost; the other 17 produce 17 dupacks.
        for _ in 0..17 {
            s.handle_packet(t(50), ack_pkt(0, &[]), &mut out);
        }
        assert_eq!(s.cwnd(), 27 * MSS);
        let sent: Vec<u64> = seqs(&out);
        assert_eq!(sent[0], 0);
        // Inflation lets pipe reach cwnd: 20 + n <= 27, seven new segments.
        assert_eq!(sent.len(), 1 + 7, "retransmission and seven new segments");
        out.clear();
        // The retransmission of 0 arrives: partial ACK up to the next hole.
        s.handle_packet(t(100), ack_pkt(5 * MSS, &[]), &mut out);
        assert_eq!(
            seqs(&out)[0],
            5 * MSS,
            "partial ACK resends the next hole at once"
        );
        assert_eq!(s.cwnd(), 27 * MSS - 5 * MSS + MSS);
        assert!(s.in_recovery());
        out.clear();
        s.handle_packet(t(150), ack_pkt(10 * MSS, &[]), &mut out);
        assert_eq!(seqs(&out)[0], 10 * MSS);
        out.clear();
        s.handle_packet(t(200), ack_pkt(26 * MSS, &[]), &mut out);
        assert!(!s.in_recovery(), "ACK beyond recover ends recovery");
        assert_eq!(s.ssthresh(), 10 * MSS, "one reduction for the whole window");
        let c = s.counters();
        assert_eq!((c.fast_retransmits, c.retransmits, c.timeouts), (1, 3, 0));
    }

    #[test]
    fn sack_recovery_sends_by_pipe_without_inflating_cwnd() {
        let mut s = sender(Recovery::Sack);
        start(&mut s);
        let mut out = vec![];
        // Segment 0 lost; each dupack SACKs one more segment.
        for k in 1..=19 {
            s.handle_packet(t(50), ack_pkt(0, &[(MSS, (k + 1) * MSS)]), &mut out);
            if k == 3 {
                assert_eq!(
                    seqs(&out),
                    vec![0],
                    "three SACKed segments mark the hole lost"
                );
                assert_eq!(s.cwnd(), 10 * MSS);
                assert_eq!(s.ssthresh(), 10 * MSS);
            }
        }
        assert_eq!(s.cwnd(), 10 * MSS, "no inflation under RFC 6675");
        // pipe = the retransmission + new data; new data flows once pipe < cwnd: 9 segments.
        assert_eq!(out.len(), 1 + 9);
        assert_eq!(s.pipe(), 10 * MSS);
        out.clear();
        s.handle_packet(t(100), ack_pkt(20 * MSS, &[]), &mut out);
        assert!(!s.in_recovery());
    }

    #[test]
    fn consecutive_timeouts_back_off_and_cut_ssthresh_once() {
        let mut s = sender(Recovery::NewReno);
        start(&mut s);
        let mut out = vec![];
        // RFC 6298 (2.1): initial RTO 1 s.
        assert_eq!(s.poll_timeout(), Some(t(1000)));
        s.handle_timeout(t(1000), &mut out);
        assert_eq!(seqs(&out), vec![0]);
        assert_eq!(s.cwnd(), MSS, "loss window of one segment");
        assert_eq!(s.ssthresh(), 10 * MSS, "half of the 20-segment flight");
        assert_eq!(s.poll_timeout(), Some(t(3000)), "RTO doubled to 2 s");
        out.clear();
        s.handle_timeout(t(3000), &mut out);
        assert_eq!(seqs(&out), vec![0]);
        assert_eq!(s.ssthresh(), 10 * MSS, "no second cut on a back-off");
        assert_eq!(s.poll_timeout(), Some(t(7000)), "then 4 s");
        assert_eq!(s.counters().timeouts, 2);
        // A stale wake-up does nothing.
        out.clear();
        s.handle_timeout(t(5000), &mut out);
        assert!(out.is_empty());
    }

    #[test]
    fn a_timeout_during_fast_recovery_keeps_the_recovery_ssthresh() {
        // Bug pinned: a long NewReno recovery inflates FlightSize, and halving it at the RTO
        // raised ssthresh above the first reduction, so slow start overshot again every cycle
        // (one flow on a clean 10 Mbit/s path got 50 % utilization).
        let mut s = sender(Recovery::NewReno);
        start(&mut s);
        let mut out = vec![];
        for _ in 0..19 {
            s.handle_packet(t(50), ack_pkt(0, &[]), &mut out);
        }
        assert_eq!(s.ssthresh(), 10 * MSS);
        assert!(s.snd_max() > 20 * MSS, "inflation sent new data");
        let deadline = s.poll_timeout().expect("timer running");
        s.handle_timeout(deadline, &mut out);
        assert_eq!(s.counters().timeouts, 1);
        assert_eq!(s.ssthresh(), 10 * MSS);
        assert_eq!(s.cwnd(), MSS);
    }

    #[test]
    fn dupacks_after_a_timeout_do_not_trigger_a_fast_retransmit() {
        // RFC 6582 §3.2 step 2 (the `recover` guard).
        let mut s = sender(Recovery::NewReno);
        start(&mut s);
        let mut out = vec![];
        s.handle_timeout(t(1000), &mut out);
        out.clear();
        for _ in 0..5 {
            s.handle_packet(t(1050), ack_pkt(0, &[]), &mut out);
        }
        assert_eq!(s.counters().fast_retransmits, 0);
        assert!(out.is_empty());
    }

    #[test]
    fn a_finite_transfer_completes_when_its_last_byte_is_acknowledged() {
        let mut s = sender(Recovery::NewReno);
        s.cfg.size = Some(2500);
        s.app_limit = 2500;
        let out = start(&mut s);
        assert_eq!(
            out.iter().map(|p| p.payload_len()).collect::<Vec<_>>(),
            vec![1000, 1000, 500]
        );
        let mut more = vec![];
        s.handle_packet(t(40), ack_pkt(2500, &[]), &mut more);
        assert!(more.is_empty());
        assert_eq!(s.counters().completed_at, Some(t(40)));
        assert_eq!(
            s.poll_timeout(),
            None,
            "timer stopped with nothing in flight"
        );
    }
}
