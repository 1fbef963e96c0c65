// SPDX-License-Identifier: MIT
//! Packets: typed headers, and the payload as a length.
//!
//! ```text
//!   Packet { src, dst, size, dscp, ecn, ttl, flow,  transport: Tcp(TcpHeader) | Udp(UdpHeader) }
//!            └── IP ───────────────────────────┘   └── transport header (payload = a length) ──┘
//! ```
//!
//! `size` is the number of bytes the packet occupies on the wire at the IP layer (headers
//! included); a link's serialization time and a byte-mode queue both use it. No payload bytes
//! exist anywhere in the simulator.
//!
//! Addresses are interface addresses (a multihomed host has several); ports are global endpoint
//! identifiers, so delivering a packet to its endpoint is one index.
//!
//! Inside the network a packet lives in the engine's [`PacketArena`](crate::arena::PacketArena)
//! and moves as a 4-byte handle; it is copied only when an endpoint or a hook hands it over and
//! when it is delivered.
//!
//! # Header space: the 128-byte bound and the transports to come
//!
//! A packet is 120 bytes (a test pins it at most that; the budget of `docs/performance.md` is
//! 128): 24 bytes of IP fields and `sent_at`, and the transport enum, whose largest variant, the
//! TCP header with four SACK blocks as 32-bit offsets, sets its size. A new transport must fit
//! beside it, not grow it:
//!
//! - **SCTP** (RFC 9260): a DATA chunk needs the TSN (64-bit, unwrapped, as TCP's `seq`), the
//!   stream id and SSN (16 bits each), the payload length and the B/E/U flags: about 24 bytes
//!   with the ports. A SACK chunk needs the cumulative TSN ack, `a_rwnd` and its gap blocks,
//!   which RFC 9260 §3.3.4 already encodes as 16-bit offsets from the cumulative TSN (4 bytes a
//!   block), and its duplicate TSNs (stored as 32-bit offsets). Carry at most 8 gap blocks and 4
//!   duplicate TSNs (48 bytes) and count the rest (`gap_blocks`, `dup_tsns` as u16), so the wire
//!   size stays exact (4 bytes per block and per TSN) while the header stays within the TCP
//!   variant's size. A packet that bundles several DATA chunks carries the first TSN and a chunk
//!   count (the chunks of one packet hold consecutive TSNs in the model).
//! - **ATM** (AAL5, RFC 2684 / ITU-T I.363.5): the cells of one AAL5 frame are not packets.
//!   The frame (the IP packet) stays in the arena while its cells cross the ATM links as small
//!   records that share it: `(frame: PacketId, cell index: u16, last: bool)`, 8 bytes each in a
//!   cell queue instead of a 120-byte packet per 53-byte cell. A lost cell marks the frame
//!   (AAL5's CRC then fails: the frame is dropped at reassembly, and partial/early packet
//!   discard can drop the rest of its cells at once); the last cell's arrival releases the frame
//!   to the next hop by its handle.

use crate::time::SimTime;

/// The address of one interface of one node (dense, assigned by the network builder).
pub type Addr = u32;
/// A transport endpoint's identity; globally unique in a run (dense, assigned by the builder).
pub type Port = u32;
/// The metrics identity of the flow a packet belongs to (dense index into the flow table).
pub type FlowId = u32;

/// ECN field values (RFC 3168 §5): not ECN-capable, ECT(1), ECT(0), Congestion Experienced.
pub const ECN_NOT_ECT: u8 = 0;
pub const ECN_ECT1: u8 = 1;
pub const ECN_ECT0: u8 = 2;
pub const ECN_CE: u8 = 3;

/// The TTL a host gives the packets it sends unless `routing.ttl` says otherwise: Linux's
/// `net.ipv4.ip_default_ttl`, as RFC 1700 recommends.
pub const DEFAULT_TTL: u8 = 64;

/// Differentiated Services code point of Expedited Forwarding (RFC 3246), used by paper 003.
pub const DSCP_EF: u8 = 46;

#[derive(Clone, Debug, PartialEq)]
pub struct Packet {
    pub src: Addr,
    pub dst: Addr,
    /// Bytes on the wire at the IP layer, headers included.
    pub size: u32,
    /// DiffServ code point (6 bits), rewritten by markers.
    pub dscp: u8,
    /// ECN field (RFC 3168): 0 not-ECT, 1/2 ECT, 3 CE.
    pub ecn: u8,
    /// Time to live (RFC 791 §3.1): the hops a packet may still take. The sending host sets it
    /// (`routing.ttl`, [`DEFAULT_TTL`] unless the scenario says otherwise); each router that
    /// forwards it takes one off, and a packet that would leave with none is dropped (RFC 1812
    /// §5.3.1), so a routing loop cannot keep a packet for ever.
    pub ttl: u8,
    /// The flow this packet is accounted to.
    pub flow: FlowId,
    /// When the packet was first handed to the network by its endpoint (for one-way delay).
    pub sent_at: SimTime,
    pub transport: Transport,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Transport {
    Tcp(TcpHeader),
    Udp(UdpHeader),
    /// One SCTP chunk in its packet (`crate::sctp`).
    Sctp(SctpHeader),
}

/// An SCTP packet with one chunk (RFC 4960 §3): the common header's ports and the chunk.
/// Bundling is not modelled: ccsim sends one chunk per packet, as the paper's ns-2 runs do.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SctpHeader {
    pub src_port: Port,
    pub dst_port: Port,
    pub chunk: SctpChunk,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SctpChunk {
    Data(SctpData),
    Sack(SctpSack),
    /// HEARTBEAT (§3.3.5); the info the sender puts in is echoed by the HEARTBEAT ACK.
    Heartbeat(SctpHeartbeat),
    HeartbeatAck(SctpHeartbeat),
}

/// A DATA chunk (§3.3.1). TSNs are 32-bit and do not wrap here (2^32 chunks are far beyond a
/// run); the SSN is 32-bit too so that the paper's per-path SSN spaces never wrap either.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct SctpData {
    pub tsn: u32,
    /// Stream identifier (always 0 in the single-stream runs; the path in the paper's LS mode).
    pub sid: u16,
    pub ssn: u32,
    /// User data bytes.
    pub len: u32,
    /// ccsim's own marker of a retransmission (traces and tests only, as TCP's `FLAG_RETX`).
    pub retransmission: bool,
}

/// A SACK chunk (§3.3.4): the cumulative TSN ack, the receiver window, and the first gap-ack
/// blocks and duplicate TSNs, as many as the packet holds (the rest is counted by the
/// receiver, never silently lost).
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct SctpSack {
    pub cum_tsn: u32,
    /// False before any DATA arrived (then `cum_tsn` means nothing).
    pub any: bool,
    pub a_rwnd: u32,
    /// Gap-ack blocks as (start, end) offsets from `cum_tsn`, both inclusive, lowest first.
    pub gaps: [(u16, u16); SctpSack::MAX_GAPS],
    pub n_gaps: u8,
    pub dups: [u32; SctpSack::MAX_DUPS],
    pub n_dups: u8,
    /// DATA packets received since the last SACK (CMT's delayed ack for CMT, DAC).
    pub packets: u8,
    /// The paper's LS mode (seed 004 §3.2): the path (SID) this SACK reports on and its
    /// Cumulative SSN Ack; the gap blocks and duplicates are then SSNs of that path.
    pub sid: u16,
    pub cum_ssn: u32,
}

impl SctpSack {
    /// Gap-ack blocks one packet carries here (each 4 bytes on the wire).
    pub const MAX_GAPS: usize = 4;
    /// Duplicate TSNs one packet carries here (each 4 bytes on the wire).
    pub const MAX_DUPS: usize = 4;
    pub fn gap_blocks(&self) -> &[(u16, u16)] {
        &self.gaps[..self.n_gaps as usize]
    }
    pub fn dup_tsns(&self) -> &[u32] {
        &self.dups[..self.n_dups as usize]
    }
}

/// What a HEARTBEAT carries and its ACK returns: the path probed and when.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SctpHeartbeat {
    pub path: u8,
    pub sent_at: SimTime,
}

/// A TCP segment. Sequence numbers are 64-bit byte offsets from the start of the stream (no
/// wrap-around: 2^64 bytes is far beyond any run), so no modular comparisons are needed.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct TcpHeader {
    pub src_port: Port,
    pub dst_port: Port,
    /// First payload byte carried (data segments).
    pub seq: u64,
    /// Cumulative acknowledgment (the next byte expected) and the option space: SACK blocks
    /// (ACK segments) and the timestamp option (every segment of a connection that uses it).
    pub ack: Acknowledgment,
    /// Payload bytes (0 for a pure ACK).
    pub len: u32,
    /// Receive window advertised, in bytes (a scaled window, RFC 7323, up to 4 GiB).
    pub rwnd: u32,
    /// TCP flags (the low byte as on the wire, RFC 9293 §3.1 and RFC 3168 §6.1), and ccsim's
    /// own [`TcpHeader::FLAG_RETX`] above them.
    pub flags: u16,
    /// Congestion-control header carried end to end and rewritten by routers (XCP).
    pub cc: CcHeader,
}

impl TcpHeader {
    /// RFC 3168 §6.1: Congestion Window Reduced, set by the sender after it reduced for ECE.
    pub const FLAG_CWR: u16 = 0x80;
    /// RFC 3168 §6.1: ECN-Echo, set by the receiver after a CE-marked segment until CWR.
    pub const FLAG_ECE: u16 = 0x40;
    pub const FLAG_ACK: u16 = 0x10;
    pub const FLAG_SYN: u16 = 0x02;
    pub const FLAG_FIN: u16 = 0x01;
    /// Set by the sender on a retransmitted segment. Not a real TCP bit: it exists so traces and
    /// base-station agents in tests can check their inference; agents must not rely on it.
    pub const FLAG_RETX: u16 = 0x100;

    pub fn is_ack(&self) -> bool {
        self.flags & Self::FLAG_ACK != 0
    }
    pub fn is_syn(&self) -> bool {
        self.flags & Self::FLAG_SYN != 0
    }
    pub fn is_fin(&self) -> bool {
        self.flags & Self::FLAG_FIN != 0
    }
    pub fn is_ece(&self) -> bool {
        self.flags & Self::FLAG_ECE != 0
    }
    pub fn is_cwr(&self) -> bool {
        self.flags & Self::FLAG_CWR != 0
    }
    pub fn end_seq(&self) -> u64 {
        self.seq + self.len as u64
    }
}

/// What an ACK acknowledges: the cumulative ACK number (the next byte expected) and the SACK
/// blocks above it (RFC 2018), most recent first; and, beside them in the option space, the
/// timestamp option (RFC 7323) that every segment of a connection using it carries, data
/// segments too (whose ACK number ccsim leaves at 0).
///
/// One value with private fields, because the blocks travel as offsets from the number (see
/// [`SackOption`]): code that changed the number alone would shift every block and SACK data the
/// receiver never got. SPACK's split ACKs once did exactly that, and a SACK sender then never
/// resent the hole. [`Acknowledgment::renumbered`] is the only way to change the number, and it
/// keeps every block where it was.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Acknowledgment {
    /// The ACK number as two 32-bit halves (low, high): with 4-byte alignment the type packs
    /// into 44 bytes instead of 48, which keeps a packet at 120 bytes, below the size at which
    /// every copy becomes a `memcpy` call (measured: 5 % of P1's instructions).
    number: [u32; 2],
    sack: SackOption,
}

/// The TCP timestamp option's two fields (RFC 7323 §3.2): the sender's timestamp clock when the
/// segment left (TSval) and the TS.Recent it echoes (TSecr), in ticks of the sender's and the
/// peer's timestamp clocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Timestamps {
    pub val: u32,
    pub ecr: u32,
}

/// Option bytes of the timestamp option as sent: two NOPs, then kind 8, length 10, TSval and
/// TSecr (RFC 7323 Appendix A's recommended layout, which keeps the fields 32-bit aligned).
pub const TIMESTAMP_OPTION_BYTES: u32 = 12;

fn halves(x: u64) -> [u32; 2] {
    [x as u32, (x >> 32) as u32]
}

impl Acknowledgment {
    /// A cumulative ACK of everything below `number`, with no SACK blocks.
    pub fn cumulative(number: u64) -> Self {
        Acknowledgment {
            number: halves(number),
            sack: SackOption::default(),
        }
    }

    /// A cumulative ACK with SACK blocks. A block that cannot be reported (below `number`, or
    /// more than 2^32 bytes above it) is left out, except a first block wholly at or below
    /// `number`: a DSACK block reporting a duplicate of data already acknowledged (RFC 2883
    /// §4), which the wire carries in the same 32-bit sequence space.
    pub fn with_sack(number: u64, blocks: &SackBlocks) -> Self {
        Acknowledgment {
            number: halves(number),
            sack: SackOption::encode(number, blocks),
        }
    }

    /// The cumulative ACK number: every byte below it has been received.
    #[inline]
    pub fn number(&self) -> u64 {
        self.number[0] as u64 | (self.number[1] as u64) << 32
    }

    /// The SACK blocks as absolute `[left, right)` byte ranges, most recent first.
    pub fn sack_blocks(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.sack.iter(self.number())
    }

    /// The first SACK block, if it is a DSACK block by RFC 2883 §4's reading: it lies below
    /// the cumulative ACK, or inside the second block (a duplicate of data held above the
    /// ACK). A receiver that sends no DSACK never sends a block of either kind: its first
    /// block is above the ACK and its blocks are disjoint (RFC 2018 §4).
    pub fn dsack(&self) -> Option<(u64, u64)> {
        let mut blocks = self.sack_blocks();
        let first = blocks.next()?;
        if first.0 < self.number() {
            return Some(first);
        }
        let second = blocks.next()?;
        (second.0 <= first.0 && first.1 <= second.1).then_some(first)
    }

    /// Number of SACK blocks carried.
    pub fn sack_len(&self) -> usize {
        self.sack.len()
    }

    /// Option bytes on the wire: the SACK option (0 without blocks) and the timestamp option
    /// ([`TIMESTAMP_OPTION_BYTES`], if carried).
    pub fn option_bytes(&self) -> u32 {
        self.sack.option_bytes()
    }

    /// The same acknowledgment carrying the timestamp option. Beside it at most three SACK
    /// blocks fit (RFC 2018 §3): a fourth, the oldest reported, is left out.
    pub fn with_timestamps(mut self, ts: Timestamps) -> Self {
        self.sack.set_timestamps(ts);
        self
    }

    /// The timestamp option, if the segment carries one.
    pub fn timestamps(&self) -> Option<Timestamps> {
        self.sack.timestamps()
    }

    /// The same acknowledgment with another cumulative number: the SACK blocks keep their
    /// absolute positions (re-encoded against the new number); a block that the new number
    /// covers, or that can no longer be expressed, is left out. The timestamp option stays.
    pub fn renumbered(&self, number: u64) -> Self {
        let mut blocks = SackBlocks::default();
        for (l, r) in self.sack_blocks() {
            if l >= number {
                blocks.push((l, r));
            }
        }
        let renumbered = Acknowledgment::with_sack(number, &blocks);
        match self.timestamps() {
            Some(ts) => renumbered.with_timestamps(ts),
            None => renumbered,
        }
    }
}

/// Up to four SACK blocks `[left, right)` (RFC 2018 §3: at most 4 fit in 40 option bytes,
/// 3 with timestamps).
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct SackBlocks {
    pub n: u8,
    pub blocks: [(u64, u64); 4],
}

impl SackBlocks {
    pub fn as_slice(&self) -> &[(u64, u64)] {
        &self.blocks[..self.n as usize]
    }
    pub fn push(&mut self, b: (u64, u64)) -> bool {
        if (self.n as usize) < self.blocks.len() {
            self.blocks[self.n as usize] = b;
            self.n += 1;
            true
        } else {
            false
        }
    }
}

/// The option space as carried in a packet: up to four SACK blocks stored as 32-bit offsets
/// from the ACK's cumulative acknowledgment, so that a packet stays small (every block lies
/// above it: RFC 2018 §4 reports only data above the cumulative ACK, and the out-of-order data a
/// receiver holds fits in its window, at most 2^32 bytes with window scaling, RFC 7323 §2.3),
/// and the timestamp option. The absolute view is [`SackBlocks`]. Only [`Acknowledgment`] holds
/// one, together with the number its offsets are taken from.
///
/// The timestamps live in the fourth block's slot. The wire has the same constraint: 40 option
/// bytes hold four SACK blocks, or three beside the timestamp option (RFC 2018 §3), so a
/// segment never needs both, and the packet keeps its size (the 120 bytes of the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Default)]
struct SackOption {
    n: u8,
    /// The fourth slot holds (TSval, TSecr) instead of a block; `n` is then at most 3.
    ts: bool,
    /// The first block lies at or below the ACK (a DSACK block, RFC 2883 §4): its offsets
    /// count down from the ACK instead of up. (Fits in the padding: the option keeps its size.)
    first_below: bool,
    blocks: [(u32, u32); 4],
}

impl SackOption {
    /// The blocks of `sack` relative to `ack`. A block that does not lie within 2^32 bytes
    /// above `ack` cannot be reported and is left out.
    fn encode(ack: u64, sack: &SackBlocks) -> SackOption {
        let mut opt = SackOption::default();
        for (i, &(l, r)) in sack.as_slice().iter().enumerate() {
            if i == 0 && l < r && r <= ack {
                if let (Some(dl), Some(dr)) = (offset(l, ack), offset(r, ack)) {
                    opt.blocks[0] = (dl, dr);
                    opt.n = 1;
                    opt.first_below = true;
                }
                continue;
            }
            if let (Some(dl), Some(dr)) = (offset(ack, l), offset(ack, r)) {
                opt.blocks[opt.n as usize] = (dl, dr);
                opt.n += 1;
            }
        }
        opt
    }

    /// Number of blocks.
    fn len(&self) -> usize {
        self.n as usize
    }

    /// The blocks as absolute `[left, right)` byte ranges, given the header's `ack`.
    fn iter(&self, ack: u64) -> impl Iterator<Item = (u64, u64)> + '_ {
        let below = self.first_below;
        self.blocks[..self.n as usize]
            .iter()
            .enumerate()
            .map(move |(i, &(l, r))| {
                if below && i == 0 {
                    (ack - l as u64, ack - r as u64)
                } else {
                    (ack + l as u64, ack + r as u64)
                }
            })
    }

    /// Option bytes on the wire: kind, length and 8 bytes per block (RFC 2018 §3), padded to 4
    /// (two NOPs in front, as senders lay it out), and the timestamp option.
    fn option_bytes(&self) -> u32 {
        let sack = if self.n == 0 {
            0
        } else {
            (2 + 8 * self.n as u32).div_ceil(4) * 4
        };
        sack + if self.ts { TIMESTAMP_OPTION_BYTES } else { 0 }
    }

    /// Put the timestamp option in the fourth slot, dropping a fourth block if there was one
    /// (the last: the oldest reported, RFC 2018 §4).
    fn set_timestamps(&mut self, ts: Timestamps) {
        self.ts = true;
        self.n = self.n.min(3);
        self.blocks[3] = (ts.val, ts.ecr);
    }

    fn timestamps(&self) -> Option<Timestamps> {
        self.ts.then(|| Timestamps {
            val: self.blocks[3].0,
            ecr: self.blocks[3].1,
        })
    }
}

fn offset(ack: u64, seq: u64) -> Option<u32> {
    seq.checked_sub(ack).and_then(|d| u32::try_from(d).ok())
}

/// Per-packet congestion header that routers read and rewrite. `None` for ordinary TCP; `Xcp`
/// for XCP (Katabi et al., SIGCOMM 2002): the sender writes its cwnd and RTT, routers lower the
/// feedback, the receiver echoes it in the ACK.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub enum CcHeader {
    #[default]
    None,
    Xcp {
        /// Sender's cwnd in bytes.
        cwnd: u32,
        /// Sender's smoothed RTT in microseconds (0 = not yet known).
        rtt_us: u32,
        /// Requested window change in bytes (may be negative); routers only lower it.
        feedback: i32,
    },
    /// The latest explicit rate of the ATM ABR VC leaving the receiving host, in cells/s,
    /// written by the ATM layer on a packet it delivers (paper 000's ER-TCP; `atm/`).
    ExplicitRate { cells_per_s: f32 },
}

/// A datagram of a UDP source (CBR, on-off); `seq` counts datagrams for loss accounting.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct UdpHeader {
    pub src_port: Port,
    pub dst_port: Port,
    pub seq: u64,
    pub len: u32,
}

impl Packet {
    /// A TCP segment of `size` bytes on the wire from `src` to `dst`, with DSCP 0 and the given
    /// ECN field.
    pub fn tcp_segment(
        (src, dst): (Addr, Addr),
        size: u32,
        ecn: u8,
        flow: FlowId,
        sent_at: SimTime,
        header: TcpHeader,
    ) -> Packet {
        Packet {
            src,
            dst,
            size,
            dscp: 0,
            ecn,
            // The engine sets the TTL when the sending host hands the packet to the network.
            ttl: DEFAULT_TTL,
            flow,
            sent_at,
            transport: Transport::Tcp(header),
        }
    }

    pub fn src_port(&self) -> Port {
        match &self.transport {
            Transport::Tcp(h) => h.src_port,
            Transport::Udp(h) => h.src_port,
            Transport::Sctp(h) => h.src_port,
        }
    }
    pub fn dst_port(&self) -> Port {
        match &self.transport {
            Transport::Tcp(h) => h.dst_port,
            Transport::Udp(h) => h.dst_port,
            Transport::Sctp(h) => h.dst_port,
        }
    }
    pub fn tcp(&self) -> Option<&TcpHeader> {
        match &self.transport {
            Transport::Tcp(h) => Some(h),
            _ => None,
        }
    }
    pub fn tcp_mut(&mut self) -> Option<&mut TcpHeader> {
        match &mut self.transport {
            Transport::Tcp(h) => Some(h),
            _ => None,
        }
    }
    /// Transport payload bytes (what goodput counts).
    pub fn payload_len(&self) -> u32 {
        match &self.transport {
            Transport::Tcp(h) => h.len,
            Transport::Udp(h) => h.len,
            Transport::Sctp(h) => match &h.chunk {
                SctpChunk::Data(d) => d.len,
                _ => 0,
            },
        }
    }
    /// True for packets that carry application data (not pure ACKs).
    pub fn is_data(&self) -> bool {
        self.payload_len() > 0
    }
}

/// Test fixtures shared by the unit tests of the modules that move packets.
#[cfg(test)]
impl Packet {
    /// A UDP datagram of `size` bytes on the wire (28 of them headers), tagged by `seq`.
    pub(crate) fn test_udp(size: u32, ecn: u8, seq: u64) -> Packet {
        Packet {
            src: 0,
            dst: 1,
            size,
            dscp: 0,
            ecn,
            ttl: crate::packet::DEFAULT_TTL,
            flow: 0,
            sent_at: SimTime::ZERO,
            transport: Transport::Udp(UdpHeader {
                src_port: 0,
                dst_port: 1,
                seq,
                len: size.saturating_sub(28),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_packet_stays_within_the_per_packet_memory_budget() {
        // docs/performance.md: <= 256 B per packet in flight, its place in a queue and a
        // propagation FIFO included (goal 128). Every hop copies the packet through a queue and
        // a FIFO: going from 160 to 128 B (SACK blocks as offsets) took 13 % off P1 and P2, and
        // at 128 B rustc copies with a `memcpy` call where at 120 B it moves registers (5 % of
        // P1's instructions, measured with callgrind when ECN's flags grew the header).
        assert!(
            std::mem::size_of::<Packet>() <= 120,
            "{}",
            std::mem::size_of::<Packet>()
        );
    }

    #[test]
    fn the_transport_headers_share_88_bytes_which_sctp_and_atm_must_fit_in() {
        // The header-space plan of the module docs: a new transport variant must not make the
        // enum larger than the TCP header already does.
        assert!(
            std::mem::size_of::<Transport>() <= 88,
            "{}",
            std::mem::size_of::<Transport>()
        );
    }

    #[test]
    fn sack_option_length_is_two_plus_eight_per_block_padded() {
        let mut s = SackBlocks::default();
        assert_eq!(SackOption::encode(0, &s).option_bytes(), 0);
        s.push((1, 2));
        assert_eq!(SackOption::encode(0, &s).option_bytes(), 12);
        s.push((3, 4));
        s.push((5, 6));
        assert_eq!(SackOption::encode(0, &s).option_bytes(), 28);
        assert!(s.push((7, 8)));
        assert!(!s.push((9, 10)));
    }

    #[test]
    fn the_timestamp_option_takes_the_fourth_sack_blocks_room_and_12_bytes() {
        // RFC 2018 §3: three SACK blocks fit beside the timestamp option; RFC 7323 Appendix A:
        // NOP, NOP, kind 8, length 10, TSval, TSecr.
        let mut s = SackBlocks::default();
        for i in 0..4 {
            s.push((1000 * (2 * i + 1), 1000 * (2 * i + 2)));
        }
        let ts = Timestamps { val: 7, ecr: 5 };
        let plain = Acknowledgment::with_sack(0, &s);
        assert_eq!(plain.option_bytes(), 36);
        assert_eq!(plain.timestamps(), None);
        let with = plain.with_timestamps(ts);
        assert_eq!(with.timestamps(), Some(ts));
        assert_eq!(
            with.sack_blocks().collect::<Vec<_>>(),
            s.as_slice()[..3].to_vec(),
            "the oldest block gives way"
        );
        assert_eq!(
            with.option_bytes(),
            28 + 12,
            "the whole 40-byte option space"
        );
        assert_eq!(
            Acknowledgment::default().with_timestamps(ts).option_bytes(),
            12
        );
        // A renumbered ACK (SPACK's split ACKs) keeps the echo.
        assert_eq!(with.renumbered(0).timestamps(), Some(ts));
    }

    #[test]
    fn a_renumbered_acknowledgment_keeps_its_sack_blocks_where_they_were() {
        let mut s = SackBlocks::default();
        s.push((5000, 6000));
        s.push((3000, 4000));
        let real = Acknowledgment::with_sack(2000, &s);
        let split = real.renumbered(1000);
        assert_eq!(split.number(), 1000);
        assert_eq!(
            split.sack_blocks().collect::<Vec<_>>(),
            vec![(5000, 6000), (3000, 4000)]
        );
        // A block the new number covers is no longer reported.
        let beyond = real.renumbered(4000);
        assert_eq!(beyond.sack_blocks().collect::<Vec<_>>(), vec![(5000, 6000)]);
    }

    #[test]
    fn sack_blocks_travel_as_offsets_from_the_ack_and_come_back_unchanged() {
        let ack = 5_000_000_000; // beyond 2^32: the offsets, not the numbers, must fit
        let mut s = SackBlocks::default();
        s.push((ack + 2920, ack + 4380));
        s.push((ack + 1460, ack + 2000));
        let opt = SackOption::encode(ack, &s);
        assert_eq!(opt.len(), 2);
        assert_eq!(opt.iter(ack).collect::<Vec<_>>(), s.as_slice());
        // A block that cannot be expressed (below the ACK after the first, or 2^32 bytes above
        // it) is left out.
        let mut bad = SackBlocks::default();
        bad.push((ack + 1, ack + (1 << 32)));
        bad.push((ack - 10, ack));
        bad.push((ack + 10, ack + 20));
        let opt = SackOption::encode(ack, &bad);
        assert_eq!(
            opt.iter(ack).collect::<Vec<_>>(),
            vec![(ack + 10, ack + 20)]
        );
    }

    #[test]
    fn a_dsack_block_below_the_ack_travels_first_and_is_read_as_dsack() {
        // RFC 2883 §4.1.1's example: segment 3000-3499 arrives twice after 4000 was ACKed.
        let mut s = SackBlocks::default();
        s.push((3000, 3500));
        s.push((5000, 5500));
        let a = Acknowledgment::with_sack(4000, &s);
        assert_eq!(
            a.sack_blocks().collect::<Vec<_>>(),
            vec![(3000, 3500), (5000, 5500)]
        );
        assert_eq!(a.dsack(), Some((3000, 3500)));
        assert_eq!(a.option_bytes(), 20);
        // §4.1.2: a duplicate above the ACK, inside the second block, is a DSACK too.
        let mut s = SackBlocks::default();
        s.push((5000, 5500));
        s.push((4500, 6000));
        assert_eq!(
            Acknowledgment::with_sack(4000, &s).dsack(),
            Some((5000, 5500))
        );
        // Ordinary RFC 2018 blocks are not.
        let mut s = SackBlocks::default();
        s.push((6000, 6500));
        s.push((4500, 5500));
        assert_eq!(Acknowledgment::with_sack(4000, &s).dsack(), None);
    }
}
