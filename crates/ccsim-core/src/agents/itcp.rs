// SPDX-License-Identifier: MIT
//! I-TCP, indirect TCP (Bakre & Badrinath, ICDCS 1995): the base station splits the connection
//! in two and relays bytes between them (paper 001 §3.2 and its Fig. 2 describe it).
//!
//! ```text
//!   FH sender ──data──> BS: fh_side (TcpReceiver, answers as the MH) ──ACK (rwnd = free relay)──> FH
//!                           │ in-order bytes
//!                           ▼ relay buffer (bounded)
//!                       BS: mh_side (TcpSender, sends as the FH) ──data──> MH receiver
//!                                                               <──ACK──  (consumed)
//! ```
//!
//! - Per connection, created on its first data segment: a [`TcpReceiver`] with the MH's
//!   address and port, so the FH's sender takes its ACKs for the MH's, and a [`TcpSender`] with
//!   the FH's address and port, so the MH's receiver takes its data for the FH's. Data from the
//!   FH and ACKs from the MH are consumed by the hook ([`HookOutput::consume`]: delivered, not
//!   dropped); everything the two endpoints send is injected.
//! - The relay buffer (paper 001 §3.2: I-TCP needs much buffer at the base station; its bound
//!   and the back-pressure below are this model's) holds the bytes received from the FH and
//!   not yet acknowledged by the MH, plus the FH's out-of-order bytes; the FH-side receiver
//!   advertises what is left as its receive window ([`TcpReceiver::set_app_read`]), so the FH
//!   is back-pressured once the wireless side falls behind.
//! - Window updates (derived): when the MH's ACKs free buffer space, the FH-side receiver sends
//!   an ACK announcing it if (1) the window the FH last saw (that ACK's right edge − RCV.NXT) is
//!   at most half the buffer and the window now is at least twice it (Linux
//!   `tcp_cleanup_rbuf`: "send ACK now if this read freed lots of space"), (2) the right edge
//!   moves by at least min(buffer/2, MSS) (RFC 1122 §4.2.3.3, receiver SWS avoidance), and
//!   (3) either the FH has sent everything the last window allowed (RCV.NXT + MSS > that edge:
//!   it is idle and would otherwise wait forever, ccsim's sender having no persist timer) or
//!   no update has been sent yet for this ACK number. A window update repeats the ACK number, and ccsim's
//!   sender counts it as a duplicate ACK when it has data in flight (it ignores window changes
//!   in that test), so at most one goes out per ACK number unless the FH is idle (nothing in
//!   flight, so not a duplicate).
//! - In-order bytes are offered to the MH-side sender as they arrive
//!   ([`TcpSender::offer`]); it is an ordinary sender (its own cwnd, RTO and loss recovery on
//!   the wireless hop).
//! - Both endpoints use the hook's TCP parameters ([`ItcpConfig::tcp`]; the hook cannot see
//!   the flows' specs): the FH-side receiver's delayed-ACK and SACK settings, and the MH-side
//!   sender's everything. The FH-side receiver's buffer is the relay buffer.
//! - End-to-end semantics are broken (paper 001 §3.2): the FH's transfer completes when the
//!   relay has acknowledged its last byte, not when the MH has it. The flows table shows both:
//!   `completion_time_s` (the FH's sender: relay acknowledged) and `delivery_time_s` (the MH's
//!   receiver: last byte delivered).

use super::{classify, tcp, ConnKey, Conns, Deadlines, Role};
use crate::endpoint::Endpoint;
use crate::hook::{HookCounters, HookOutput, IfaceId, NodeHook};
use crate::packet::{FlowId, Packet};
use crate::tcp::{TcpReceiver, TcpReceiverConfig, TcpSender, TcpSenderConfig, TcpSpec};
use crate::time::SimTime;

/// Parameters of the I-TCP agent (scenario: `hook = { type = "itcp", ... }`).
#[derive(Clone, Debug, PartialEq)]
pub struct ItcpConfig {
    /// Relay buffer per connection, bytes (at least one segment).
    pub relay_buffer: u64,
    /// TCP parameters of the FH-side receiver and the MH-side sender.
    pub tcp: TcpSpec,
    /// The MH-side sender's MSS takes the FH's (`mss = "follow"`, the default): a relay keeps
    /// the segment size of the connection it splits, so a figure that varies the FH's MSS
    /// varies the wireless hop's too. False: `tcp.mss` whatever the FH sends (`mss = N`).
    pub follow_mss: bool,
}

impl Default for ItcpConfig {
    fn default() -> Self {
        ItcpConfig {
            relay_buffer: 64_000,
            tcp: TcpSpec::default(),
            follow_mss: true,
        }
    }
}

/// What the agent did, summed over connections.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ItcpStats {
    pub connections: u64,
    /// Data segments from the FH taken by the relay.
    pub fh_segments: u64,
    /// ACKs from the MH taken by the relay.
    pub mh_acks: u64,
    /// Window updates sent to the FH when the relay buffer drained.
    pub window_updates: u64,
    /// Most bytes a connection's relay buffer held.
    pub peak_buffered: u64,
    /// In-order bytes handed from the FH side to the MH side.
    pub bytes_relayed: u64,
}

#[derive(Clone, Debug)]
struct Conn {
    /// Answers the FH as if it were the MH.
    fh_side: TcpReceiver,
    /// Relays to the MH as if it were the FH.
    mh_side: TcpSender,
    /// Bytes offered to `mh_side` (the FH-side RCV.NXT when last relayed).
    relayed: u64,
    /// Right edge (ACK + window) advertised in the last ACK to the FH.
    last_edge: u64,
    /// ACK number of the last window update sent.
    update_ack: Option<u64>,
    /// Largest segment seen from the FH.
    fh_mss: u64,
}

/// The I-TCP base-station agent.
#[derive(Debug)]
pub struct Itcp {
    cfg: ItcpConfig,
    conns: Conns<Conn>,
    timers: Deadlines,
    due: Vec<u32>,
    scratch: Vec<Packet>,
    stats: ItcpStats,
}

impl Itcp {
    pub fn new(cfg: ItcpConfig) -> Self {
        Itcp {
            cfg,
            conns: Conns::default(),
            timers: Deadlines::default(),
            due: Vec::new(),
            scratch: Vec::new(),
            stats: ItcpStats::default(),
        }
    }

    pub fn stats(&self) -> ItcpStats {
        self.stats
    }

    /// Opens (or finds) the connection of a data segment; `fh_len` is that segment's payload,
    /// the FH's MSS when `follow_mss` (the first segment of a transfer is full-sized unless the
    /// whole transfer is shorter, and then there is nothing more to relay).
    fn open(&mut self, now: SimTime, key: ConnKey, flow: FlowId, fh_len: u32) -> u32 {
        let cfg = &self.cfg;
        let scratch = &mut self.scratch;
        let stats = &mut self.stats;
        self.conns.find_or_insert(key, || {
            // The relay's two halves start established with the first data segment: the FH's
            // handshake, if it makes one, passes through the base station end to end (SYNs are
            // not the agent's), and the relayed stream has no end of its own to FIN.
            let mut relay_tcp = TcpSpec {
                handshake: false,
                ..cfg.tcp.clone()
            };
            if cfg.follow_mss && fh_len > 0 {
                relay_tcp.mss = fh_len;
            }
            let mut rx_tcp = relay_tcp.clone();
            rx_tcp.rcv_buffer = cfg.relay_buffer;
            let fh_side = TcpReceiver::new(TcpReceiverConfig {
                addr: key.dst,
                peer_addr: key.src,
                port: key.dst_port,
                peer_port: key.src_port,
                flow,
                tcp: rx_tcp.into(),
            });
            let mut mh_side = TcpSender::new(TcpSenderConfig {
                addr: key.src,
                dst_addr: key.dst,
                port: key.src_port,
                dst_port: key.dst_port,
                flow,
                start: now,
                stop: None,
                // Nothing to send until bytes arrive from the FH (`offer`).
                size: Some(0),
                tcp: relay_tcp.into(),
            });
            mh_side.handle_timeout(now, scratch);
            stats.connections += 1;
            Conn {
                fh_side,
                mh_side,
                relayed: 0,
                last_edge: cfg.relay_buffer,
                update_ack: None,
                fh_mss: 0,
            }
        })
    }

    fn on_data(&mut self, now: SimTime, key: ConnKey, pkt: Packet, out: &mut HookOutput) {
        let c = self.open(now, key, pkt.flow, tcp(&pkt).len);
        self.stats.fh_segments += 1;
        let conn = self.conns.get_mut(c);
        conn.fh_mss = conn.fh_mss.max(tcp(&pkt).len as u64);
        // The relay buffer: bytes the MH has not acknowledged count against the FH's window.
        conn.fh_side.set_app_read(conn.mh_side.snd_una());
        conn.fh_side
            .handle_packet(now, pkt.clone(), &mut self.scratch);
        out.consume(pkt);
        let nxt = conn.fh_side.rcv_nxt();
        if nxt > conn.relayed {
            conn.mh_side
                .offer(now, nxt - conn.relayed, &mut self.scratch);
            self.stats.bytes_relayed += nxt - conn.relayed;
            conn.relayed = nxt;
        }
        let buffered = nxt - conn.mh_side.snd_una().min(nxt) + conn.fh_side.out_of_order_bytes();
        self.stats.peak_buffered = self.stats.peak_buffered.max(buffered);
        self.flush(c, out);
    }

    fn on_ack(&mut self, now: SimTime, c: u32, pkt: Packet, out: &mut HookOutput) {
        self.stats.mh_acks += 1;
        let half = self.cfg.relay_buffer / 2;
        let conn = self.conns.get_mut(c);
        conn.mh_side
            .handle_packet(now, pkt.clone(), &mut self.scratch);
        out.consume(pkt);
        conn.fh_side.set_app_read(conn.mh_side.snd_una());
        let nxt = conn.fh_side.rcv_nxt();
        let (now_w, new_w) = (
            conn.last_edge.saturating_sub(nxt),
            conn.fh_side.advertised_window(),
        );
        let mss = conn.fh_mss.max(1);
        let idle = nxt + mss > conn.last_edge;
        let freed_lots = now_w <= half && new_w >= 2 * now_w;
        let no_sws = new_w >= now_w + mss.min(half).max(1);
        if freed_lots && no_sws && (idle || conn.update_ack != Some(nxt)) {
            conn.update_ack = Some(nxt);
            conn.fh_side.send_window_update(now, &mut self.scratch);
            self.stats.window_updates += 1;
        }
        self.flush(c, out);
    }

    /// Injects what connection `c`'s endpoints sent and re-arms its deadline.
    fn flush(&mut self, c: u32, out: &mut HookOutput) {
        let conn = self.conns.get_mut(c);
        for p in self.scratch.drain(..) {
            if let Some(h) = p.tcp() {
                if h.len == 0 {
                    conn.last_edge = h.ack.number() + h.rwnd as u64;
                }
            }
            out.inject(p);
        }
        let t = match (conn.fh_side.poll_timeout(), conn.mh_side.poll_timeout()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.timers.set(c, t);
    }
}

impl NodeHook for Itcp {
    fn on_packet(&mut self, now: SimTime, pkt: Packet, _: Option<IfaceId>, out: &mut HookOutput) {
        match classify(&pkt) {
            Role::Data(key) => self.on_data(now, key, pkt, out),
            Role::Ack(key) => match self.conns.find(&key) {
                Some(c) => self.on_ack(now, c, pkt, out),
                None => out.forward(pkt),
            },
            Role::Other => out.forward(pkt),
        }
    }

    fn on_timeout(&mut self, now: SimTime, out: &mut HookOutput) {
        let mut due = std::mem::take(&mut self.due);
        due.clear();
        self.timers.take_due(now, &mut due);
        for &c in &due {
            let conn = self.conns.get_mut(c);
            // Stale wake-ups are no-ops for both endpoints.
            conn.fh_side.handle_timeout(now, &mut self.scratch);
            conn.mh_side.handle_timeout(now, &mut self.scratch);
            self.flush(c, out);
        }
        self.due = due;
    }

    fn poll_timeout(&self) -> Option<SimTime> {
        self.timers.first()
    }

    fn counters(&self) -> Option<HookCounters> {
        let s = self.stats;
        // The MH-side senders' own loss recovery on the wireless hop.
        let (mut rtx, mut timeouts) = (0, 0);
        for c in 0..self.conns.len() as u32 {
            let k = self.conns.get(c).mh_side.counters();
            rtx += k.retransmits;
            timeouts += k.timeouts;
        }
        Some(HookCounters {
            agent: "itcp",
            values: vec![
                ("connections", s.connections),
                ("fh_segments", s.fh_segments),
                ("mh_acks", s.mh_acks),
                ("window_updates", s.window_updates),
                ("peak_buffered_bytes", s.peak_buffered),
                ("bytes_relayed", s.bytes_relayed),
                ("relay_retransmits", rtx),
                ("relay_timeouts", timeouts),
            ],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::*;
    use crate::tcp::InitialWindow;

    fn itcp(buffer: u64) -> Itcp {
        Itcp::new(ItcpConfig {
            relay_buffer: buffer,
            tcp: TcpSpec {
                mss: MSS as u32,
                initial_window: InitialWindow::Segments(2),
                delayed_ack: false,
                ..TcpSpec::default()
            },
            follow_mss: false,
        })
    }

    /// (is data, seq or ack, rwnd, src, dst) of what the hook sent.
    fn sent(out: &mut HookOutput) -> Vec<(bool, u64, u32, u32, u32)> {
        out.packets
            .drain(..)
            .map(|p| {
                let h = p.tcp().expect("tcp");
                if h.len > 0 {
                    (true, h.seq, 0, p.src, p.dst)
                } else {
                    (false, h.ack.number(), h.rwnd, p.src, p.dst)
                }
            })
            .collect()
    }

    #[test]
    fn data_from_the_fixed_host_is_acknowledged_by_the_relay_and_resent_to_the_mobile_host() {
        let mut h = itcp(64_000);
        let mut out = HookOutput::default();
        h.on_packet(ms(0), data(0), None, &mut out);
        assert_eq!(out.consumed, 1, "the FH's segment is taken, not forwarded");
        let s = sent(&mut out);
        // The relay's ACK looks like the MH's (src 1 -> dst 0) and its data like the FH's.
        assert!(s.contains(&(false, MSS, 63_000, 1, 0)), "{s:?}");
        assert!(s.contains(&(true, 0, 0, 0, 1)), "{s:?}");
        assert_eq!(out.injected, 2);
        // The MH acknowledges: consumed, and the buffer space comes back.
        h.on_packet(ms(30), ack(MSS), None, &mut out);
        assert_eq!(out.consumed, 2);
        assert!(
            sent(&mut out).is_empty(),
            "no window update while the FH could send"
        );
        h.on_packet(ms(31), data(MSS), None, &mut out);
        assert!(sent(&mut out).contains(&(false, 2 * MSS, 63_000, 1, 0)));
        assert_eq!(h.held(), 0);
    }

    #[test]
    fn a_full_relay_buffer_closes_the_window_and_the_mobile_hosts_acks_reopen_it() {
        let mut h = itcp(3 * MSS);
        let mut out = HookOutput::default();
        for i in 0..3 {
            h.on_packet(ms(i), data(i * MSS), None, &mut out);
        }
        let acks: Vec<_> = sent(&mut out).into_iter().filter(|p| !p.0).collect();
        assert_eq!(
            acks.iter().map(|p| (p.1, p.2)).collect::<Vec<_>>(),
            vec![(MSS, 2000), (2 * MSS, 1000), (3 * MSS, 0)],
            "window = buffer - bytes the MH has not acknowledged"
        );
        // The MH's ACK of two segments frees 2000 bytes: a window update, once.
        h.on_packet(ms(40), ack(2 * MSS), None, &mut out);
        let s = sent(&mut out);
        assert!(s.contains(&(false, 3 * MSS, 2000, 1, 0)), "{s:?}");
        h.on_packet(ms(41), ack(3 * MSS), None, &mut out);
        assert!(sent(&mut out).iter().all(|p| p.0), "no second update");
        assert_eq!(h.stats().window_updates, 1);
        assert_eq!(h.stats().peak_buffered, 3 * MSS);
    }

    #[test]
    fn the_relay_retransmits_a_segment_lost_on_the_wireless_hop_itself() {
        let mut h = itcp(64_000);
        let mut out = HookOutput::default();
        for i in 0..2 {
            h.on_packet(ms(0), data(i * MSS), None, &mut out);
        }
        out.packets.clear();
        // Segment 0 lost toward the MH; nothing comes back; the relay's RTO fires (1 s).
        let t = h.poll_timeout().expect("relay timer");
        assert_eq!(t, ms(1000));
        h.on_timeout(t, &mut out);
        assert_eq!(sent(&mut out), vec![(true, 0, 0, 0, 1)]);
    }
}
