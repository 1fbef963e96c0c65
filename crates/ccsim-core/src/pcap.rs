// SPDX-License-Identifier: MIT
//! Packet captures that Wireshark and tshark read: a simulated packet written as the bytes its
//! headers would have on the wire.
//!
//! ```text
//!   pcap file (nanosecond timestamps, link type RAW: each record is an IPv4 packet)
//!   ┌──────────────┬──────────────────────┬─────────────────────────────────────┐
//!   │ file header  │ record header        │ IPv4 (20 B) │ TCP (20 B + options)  │ payload:
//!   │ magic a1b23c4d│ ts s, ts ns, caplen, │ │ or UDP (8 B)               │ zeros, cut at
//!   │ snaplen, 101 │ true length          │                                     │ the snaplen
//!   └──────────────┴──────────────────────┴─────────────────────────────────────┘
//! ```
//!
//! A `Packet` has typed headers and a payload that is only a length; this module writes what
//! those fields mean in real header bytes, so that tshark's dissectors and its TCP analysis
//! (retransmissions, duplicate ACKs, SACK) work on a simulated run as on a capture:
//!
//! - **Lengths are the simulation's.** The IPv4 total length is the packet's `size`, the bytes
//!   the links serialized. A TCP header is `size - 20 - payload` bytes: the 20 fixed bytes plus
//!   whatever option room the simulation accounted for (`tcp.header_bytes` above 40, SACK
//!   blocks on ACKs, the timestamp option). The timestamp option (RFC 7323, laid out as its
//!   Appendix A recommends: NOP, NOP, kind 8, length 10, TSval, TSecr) and SACK blocks are written
//!   when they fit that room (they always do for ccsim's own segments, whose size counts them);
//!   any room left is NOP padding. A SYN carries an MSS option when the room allows it.
//! - **Payload bytes are zeros**, and a record keeps at most `snaplen` bytes (the record header
//!   still gives the true length, as any capture cut by a snap length does).
//! - **Addresses** are interface addresses mapped into 10.0.0.0/8 (address `a` is 10.0.0.0 +
//!   a + 1); **ports** are ccsim's endpoint numbers folded into 1024-65535.
//! - **Sequence numbers**: ccsim counts payload bytes from 0 and its SYN takes none; on the
//!   wire both ends start from an initial sequence number of 0 and the SYN takes one, so data
//!   byte `k` is sequence number `k + 1` (tshark's "relative" numbers are then ccsim's own plus
//!   one, absolute ones the same), and an ACK number is ccsim's plus one. A sender's segments
//!   carry the ACK flag (except its first SYN), acknowledging the receiver's SYN-ACK, and
//!   advertise a 65,535-byte window (a one-way transfer's sender has nothing to receive).
//! - Checksums (IPv4 header, TCP and UDP over the pseudo-header, RFC 793 §3.1 and RFC 768) are
//!   computed as if the payload were there: zeros add nothing to a one's-complement sum.
//!
//! Writing costs no allocation per packet: headers are built in a fixed scratch buffer and go
//! through a `BufWriter`.

use std::io::{self, BufWriter, Write};

use crate::packet::{
    Addr, Packet, Port, SctpChunk, SctpHeader, TcpHeader, Transport, TIMESTAMP_OPTION_BYTES,
};
use crate::time::SimTime;

/// pcap's magic number for nanosecond timestamps (the libpcap file format's "modified"
/// variant that tshark and Wireshark read as nanoseconds).
const MAGIC_NANOSECONDS: u32 = 0xa1b2_3c4d;
/// LINKTYPE_RAW: every record starts with an IP header.
pub const LINKTYPE_RAW: u32 = 101;
/// Enough for every header ccsim writes (IPv4 20 + TCP 60 bytes at most).
pub const DEFAULT_SNAPLEN: u32 = 128;

const IPV4_HEADER: usize = 20;
const TCP_HEADER: usize = 20;
const UDP_HEADER: usize = 8;
const PROTO_TCP: u8 = 6;
const PROTO_UDP: u8 = 17;
const PROTO_SCTP: u8 = 132;
/// The window a sender's segments advertise: see the module doc.
const SENDER_WINDOW: u16 = 65_535;

/// Which end of a TCP connection sent a segment: ccsim's sender (data, SYN, FIN) or its
/// receiver (ACKs, SYN-ACK). The writer needs it for the ACK flag and number, which ccsim
/// carries only on the receiver's segments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TcpEnd {
    Sender,
    Receiver,
}

/// The IPv4 address written for interface address `addr`.
pub fn ipv4_of(addr: Addr) -> [u8; 4] {
    let host = (addr.wrapping_add(1)) & 0x00ff_ffff;
    [10, (host >> 16) as u8, (host >> 8) as u8, host as u8]
}

/// The 16-bit port written for ccsim endpoint `port`.
pub fn port_of(port: Port) -> u16 {
    1024 + (port % (65_536 - 1024)) as u16
}

/// A pcap file being written. Records must be written in time order (a capture point sees
/// packets in time order; several capture points need one writer each).
pub struct PcapWriter<W: Write> {
    out: BufWriter<W>,
    snaplen: u32,
    /// Headers and the captured part of the payload of the record being written.
    scratch: Vec<u8>,
    /// IPv4 identification, counted per file as a host counts its sent datagrams.
    ip_id: u16,
    written: u64,
}

impl<W: Write> PcapWriter<W> {
    /// Start a file: write its header. `snaplen` is at least the largest header (80 bytes).
    pub fn new(out: W, snaplen: u32) -> io::Result<Self> {
        let snaplen = snaplen.max((IPV4_HEADER + 60) as u32);
        let mut out = BufWriter::with_capacity(1 << 16, out);
        let mut header = [0u8; 24];
        header[0..4].copy_from_slice(&MAGIC_NANOSECONDS.to_le_bytes());
        header[4..6].copy_from_slice(&2u16.to_le_bytes()); // version 2.4
        header[6..8].copy_from_slice(&4u16.to_le_bytes());
        // thiszone and sigfigs stay 0.
        header[16..20].copy_from_slice(&snaplen.to_le_bytes());
        header[20..24].copy_from_slice(&LINKTYPE_RAW.to_le_bytes());
        out.write_all(&header)?;
        Ok(PcapWriter {
            out,
            snaplen,
            scratch: Vec::with_capacity(snaplen as usize),
            ip_id: 0,
            written: 0,
        })
    }

    /// Records written so far.
    pub fn records(&self) -> u64 {
        self.written
    }

    /// Write `pkt` as seen at time `at`. `end` says which end of its TCP connection sent it
    /// (ignored for UDP).
    pub fn write(&mut self, at: SimTime, pkt: &Packet, end: TcpEnd) -> io::Result<()> {
        self.scratch.clear();
        encode(pkt, end, self.ip_id, &mut self.scratch);
        self.ip_id = self.ip_id.wrapping_add(1);
        let captured = (pkt.size.max(self.scratch.len() as u32)).min(self.snaplen) as usize;
        // The payload beyond the headers is zeros, up to what the snap length keeps.
        self.scratch.resize(captured.max(self.scratch.len()), 0);
        self.scratch.truncate(captured);
        let ns = at.as_nanos();
        let mut rec = [0u8; 16];
        rec[0..4].copy_from_slice(&((ns / 1_000_000_000) as u32).to_le_bytes());
        rec[4..8].copy_from_slice(&((ns % 1_000_000_000) as u32).to_le_bytes());
        rec[8..12].copy_from_slice(&(captured as u32).to_le_bytes());
        rec[12..16].copy_from_slice(&pkt.size.to_le_bytes());
        self.out.write_all(&rec)?;
        self.out.write_all(&self.scratch)?;
        self.written += 1;
        Ok(())
    }

    /// Write out what is buffered and return the sink.
    pub fn finish(self) -> io::Result<W> {
        self.out.into_inner().map_err(|e| e.into_error())
    }
}

/// The IPv4 header and transport header of `pkt`, appended to `buf` (no payload).
pub fn encode(pkt: &Packet, end: TcpEnd, ip_id: u16, buf: &mut Vec<u8>) {
    let start = buf.len();
    let proto = match pkt.transport {
        Transport::Tcp(_) => PROTO_TCP,
        Transport::Udp(_) => PROTO_UDP,
        Transport::Sctp(_) => PROTO_SCTP,
    };
    let (src, dst) = (ipv4_of(pkt.src), ipv4_of(pkt.dst));
    let total = pkt.size.min(u16::MAX as u32) as u16;
    // RFC 791 §3.1: version 4, IHL 5; the TOS byte is DSCP and ECN (RFC 2474 §3, RFC 3168 §5).
    buf.extend_from_slice(&[0x45, (pkt.dscp << 2) | (pkt.ecn & 3)]);
    buf.extend_from_slice(&total.to_be_bytes());
    buf.extend_from_slice(&ip_id.to_be_bytes());
    buf.extend_from_slice(&0x4000u16.to_be_bytes()); // don't fragment, offset 0
    buf.extend_from_slice(&[pkt.ttl, proto, 0, 0]);
    buf.extend_from_slice(&src);
    buf.extend_from_slice(&dst);
    let ip_sum = checksum(0, &buf[start..start + IPV4_HEADER]);
    buf[start + 10..start + 12].copy_from_slice(&ip_sum.to_be_bytes());

    let transport_len = (pkt.size as usize).saturating_sub(IPV4_HEADER);
    let t0 = buf.len();
    match &pkt.transport {
        Transport::Tcp(h) => encode_tcp(h, end, transport_len, buf),
        Transport::Udp(u) => {
            buf.extend_from_slice(&port_of(u.src_port).to_be_bytes());
            buf.extend_from_slice(&port_of(u.dst_port).to_be_bytes());
            let len = transport_len.max(UDP_HEADER).min(u16::MAX as usize) as u16;
            buf.extend_from_slice(&len.to_be_bytes());
            buf.extend_from_slice(&[0, 0]);
        }
        Transport::Sctp(h) => {
            // SCTP has no pseudo-header: its CRC32c covers the packet alone (written here).
            encode_sctp(h, transport_len, buf);
            return;
        }
    }
    // RFC 793 §3.1, RFC 768: the checksum covers a pseudo-header, the header and the payload
    // (zeros here, which change nothing).
    let mut pseudo = [0u8; 12];
    pseudo[0..4].copy_from_slice(&src);
    pseudo[4..8].copy_from_slice(&dst);
    pseudo[9] = proto;
    pseudo[10..12].copy_from_slice(&(transport_len.min(u16::MAX as usize) as u16).to_be_bytes());
    let mut sum = checksum(0, &pseudo);
    sum = checksum(sum, &buf[t0..]);
    // RFC 768: a computed UDP checksum of zero is sent as all ones.
    let sum = if proto == PROTO_UDP && sum == 0 {
        0xffff
    } else {
        sum
    };
    let at = if proto == PROTO_TCP { t0 + 16 } else { t0 + 6 };
    buf[at..at + 2].copy_from_slice(&sum.to_be_bytes());
}

fn encode_tcp(h: &TcpHeader, end: TcpEnd, transport_len: usize, buf: &mut Vec<u8>) {
    let payload = h.len as usize;
    // The header room the simulation accounted for: 20 bytes and the options beyond them,
    // a multiple of 4 (data offset counts 32-bit words), at most 60.
    let room = transport_len.saturating_sub(payload);
    let header_len = (room.clamp(TCP_HEADER, 60) / 4) * 4;
    let syn = h.is_syn();
    // Wire numbers: initial sequence numbers 0 at both ends, the SYN takes one (module doc).
    let seq = if syn { 0 } else { h.seq.wrapping_add(1) as u32 };
    let mut flags = (h.flags & 0xff) as u8;
    let ack = match end {
        TcpEnd::Receiver => h.ack.number().wrapping_add(1) as u32,
        TcpEnd::Sender => {
            if syn {
                0
            } else {
                flags |= TcpHeader::FLAG_ACK as u8;
                // The receiver's SYN-ACK, and its FIN once ccsim's sender acknowledges it.
                if h.is_ack() {
                    2
                } else {
                    1
                }
            }
        }
    };
    let window = match end {
        TcpEnd::Sender => SENDER_WINDOW,
        // Unscaled when it fits; a larger window is shown at its 16-bit maximum (no window
        // scale option is written, so tshark takes the field as it is).
        TcpEnd::Receiver => h.rwnd.min(u16::MAX as u32) as u16,
    };
    let t0 = buf.len();
    buf.extend_from_slice(&port_of(h.src_port).to_be_bytes());
    buf.extend_from_slice(&port_of(h.dst_port).to_be_bytes());
    buf.extend_from_slice(&seq.to_be_bytes());
    buf.extend_from_slice(&ack.to_be_bytes());
    buf.extend_from_slice(&[((header_len / 4) as u8) << 4, flags]);
    buf.extend_from_slice(&window.to_be_bytes());
    buf.extend_from_slice(&[0, 0, 0, 0]); // checksum (filled by the caller), urgent pointer
    let options_end = t0 + header_len;
    // Options, RFC 9293 §3.2: the timestamps (RFC 7323 §3.2), an MSS on a SYN, SACK blocks
    // (RFC 2018 §3), each when it fits; NOP padding to the header length.
    if let Some(ts) = h.ack.timestamps() {
        if options_end - buf.len() >= TIMESTAMP_OPTION_BYTES as usize {
            buf.extend_from_slice(&[1, 1, 8, 10]);
            buf.extend_from_slice(&ts.val.to_be_bytes());
            buf.extend_from_slice(&ts.ecr.to_be_bytes());
        }
    }
    if syn && options_end - buf.len() >= 4 {
        let mss = 1460u16;
        buf.extend_from_slice(&[2, 4]);
        buf.extend_from_slice(&mss.to_be_bytes());
    }
    let blocks = h.ack.sack_len();
    if end == TcpEnd::Receiver && blocks > 0 {
        let fit = ((options_end - buf.len()).saturating_sub(4) / 8).min(blocks);
        if fit > 0 {
            buf.extend_from_slice(&[1, 1, 5, (2 + 8 * fit) as u8]);
            for (l, r) in h.ack.sack_blocks().take(fit) {
                buf.extend_from_slice(&(l.wrapping_add(1) as u32).to_be_bytes());
                buf.extend_from_slice(&(r.wrapping_add(1) as u32).to_be_bytes());
            }
        }
    }
    buf.resize(options_end, 1); // NOP
}

/// An SCTP packet: common header and its one chunk (RFC 9260 §3), the checksum a CRC32c over
/// the whole SCTP packet with the user data as zeros (§6.8, Appendix A).
///
/// - The verification tag is the receiving endpoint's: no INIT is written, so each end's tag
///   is made from its port (`0x5c70_0000 + port`, never 0).
/// - DATA (§3.3.1): flags B and E (one unfragmented message), length 16 + data bytes, the
///   SSN's low 16 bits (ccsim's SSN is 32-bit), payload protocol identifier 0.
/// - SACK (§3.3.4): cumulative TSN ack, a_rwnd, the gap blocks and duplicate TSNs carried. The
///   paper's LS-mode SACK (a per-path cumulative SSN ack) has no standard form; it is written as
///   a standard SACK of the same fields.
/// - HEARTBEAT / HEARTBEAT ACK (§3.3.5, §3.3.6): one heartbeat-info parameter of 8 bytes, the
///   path probed in the first byte and the sending time's low 56 bits of nanoseconds.
fn encode_sctp(h: &SctpHeader, transport_len: usize, buf: &mut Vec<u8>) {
    let t0 = buf.len();
    buf.extend_from_slice(&port_of(h.src_port).to_be_bytes());
    buf.extend_from_slice(&port_of(h.dst_port).to_be_bytes());
    buf.extend_from_slice(&(0x5c70_0000u32 + port_of(h.dst_port) as u32).to_be_bytes());
    buf.extend_from_slice(&[0, 0, 0, 0]); // checksum, filled below
    let payload = match &h.chunk {
        SctpChunk::Data(d) => {
            buf.extend_from_slice(&[0, 0b11]);
            buf.extend_from_slice(&((16 + d.len).min(u16::MAX as u32) as u16).to_be_bytes());
            buf.extend_from_slice(&d.tsn.to_be_bytes());
            buf.extend_from_slice(&d.sid.to_be_bytes());
            buf.extend_from_slice(&(d.ssn as u16).to_be_bytes());
            buf.extend_from_slice(&[0, 0, 0, 0]); // payload protocol identifier
            d.len as usize
        }
        SctpChunk::Sack(s) => {
            let (gaps, dups) = (s.gap_blocks(), s.dup_tsns());
            let len = 16 + 4 * gaps.len() + 4 * dups.len();
            buf.extend_from_slice(&[3, 0]);
            buf.extend_from_slice(&(len as u16).to_be_bytes());
            buf.extend_from_slice(&s.cum_tsn.to_be_bytes());
            buf.extend_from_slice(&s.a_rwnd.to_be_bytes());
            buf.extend_from_slice(&(gaps.len() as u16).to_be_bytes());
            buf.extend_from_slice(&(dups.len() as u16).to_be_bytes());
            for (start, end) in gaps {
                buf.extend_from_slice(&start.to_be_bytes());
                buf.extend_from_slice(&end.to_be_bytes());
            }
            for d in dups {
                buf.extend_from_slice(&d.to_be_bytes());
            }
            0
        }
        SctpChunk::Heartbeat(b) | SctpChunk::HeartbeatAck(b) => {
            let kind = if matches!(h.chunk, SctpChunk::Heartbeat(_)) {
                4
            } else {
                5
            };
            buf.extend_from_slice(&[kind, 0, 0, 16]);
            buf.extend_from_slice(&[0, 1, 0, 12]); // heartbeat info parameter, 8 bytes of info
            let info = ((b.path as u64) << 56) | (b.sent_at.as_nanos() & 0x00ff_ffff_ffff_ffff);
            buf.extend_from_slice(&info.to_be_bytes());
            0
        }
    };
    // The CRC covers the user data (zeros) and the padding to the size the run accounted for.
    let headers = buf.len() - t0;
    let zeros = transport_len.max(headers + payload) - headers;
    let mut crc = crc32c_update(!0, &buf[t0..]);
    for _ in 0..zeros {
        crc = CRC32C_TABLE[(crc as u8) as usize] ^ (crc >> 8);
    }
    // Appendix A: the CRC's bytes go out least significant first.
    buf[t0 + 8..t0 + 12].copy_from_slice(&(!crc).to_le_bytes());
}

/// CRC32c (Castagnoli, reflected polynomial 0x82F63B78: RFC 9260 Appendix A), one byte a
/// step through a table built at compile time.
const CRC32C_TABLE: [u32; 256] = {
    let mut table = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 {
                (c >> 1) ^ 0x82F6_3B78
            } else {
                c >> 1
            };
            k += 1;
        }
        table[i] = c;
        i += 1;
    }
    table
};

fn crc32c_update(mut crc: u32, bytes: &[u8]) -> u32 {
    for &b in bytes {
        crc = CRC32C_TABLE[((crc ^ b as u32) & 0xff) as usize] ^ (crc >> 8);
    }
    crc
}

/// RFC 1071 one's-complement sum of `bytes` (big-endian 16-bit words, an odd byte padded with
/// zero) added to the running sum whose complement is `initial`, returned complemented.
fn checksum(initial: u16, bytes: &[u8]) -> u16 {
    let mut sum: u32 = (!initial) as u32;
    let mut chunks = bytes.chunks_exact(2);
    for w in &mut chunks {
        sum += u16::from_be_bytes([w[0], w[1]]) as u32;
    }
    if let [last] = chunks.remainder() {
        sum += (*last as u32) << 8;
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{Acknowledgment, SackBlocks, Timestamps, ECN_ECT0};

    #[test]
    fn crc32c_gives_the_check_value_of_rfc_3720() {
        // RFC 3720 §B.4: 32 bytes of zeros give CRC 0x8A9136AA.
        assert_eq!(!crc32c_update(!0, &[0u8; 32]), 0x8A91_36AA);
        assert_eq!(!crc32c_update(!0, b"123456789"), 0xE306_9283);
    }

    fn data_segment(seq: u64, len: u32) -> Packet {
        Packet::tcp_segment(
            (0, 1),
            len + 40,
            ECN_ECT0,
            0,
            SimTime::ZERO,
            TcpHeader {
                src_port: 3,
                dst_port: 4,
                seq,
                len,
                ..TcpHeader::default()
            },
        )
    }

    fn sack_ack(number: u64, blocks: &[(u64, u64)]) -> Packet {
        let mut sack = SackBlocks::default();
        for &b in blocks {
            sack.push(b);
        }
        let ack = Acknowledgment::with_sack(number, &sack);
        Packet::tcp_segment(
            (1, 0),
            40 + ack.option_bytes(),
            0,
            0,
            SimTime::ZERO,
            TcpHeader {
                src_port: 4,
                dst_port: 3,
                ack,
                rwnd: 20_000,
                flags: TcpHeader::FLAG_ACK,
                ..TcpHeader::default()
            },
        )
    }

    #[test]
    fn a_data_segment_has_the_header_fields_its_packet_says() {
        let mut buf = Vec::new();
        let mut pkt = data_segment(1448, 1448);
        pkt.dscp = 46;
        pkt.ttl = 63;
        encode(&pkt, TcpEnd::Sender, 7, &mut buf);
        assert_eq!(buf.len(), 40, "IPv4 20 + TCP 20, no payload bytes");
        assert_eq!(buf[0], 0x45);
        assert_eq!(
            buf[1],
            (46 << 2) | ECN_ECT0,
            "DSCP EF and ECT(0) in the TOS byte"
        );
        assert_eq!(
            u16::from_be_bytes([buf[2], buf[3]]),
            1488,
            "total length = size"
        );
        assert_eq!(u16::from_be_bytes([buf[4], buf[5]]), 7, "identification");
        assert_eq!(buf[8], 63, "TTL");
        assert_eq!(buf[9], 6, "TCP");
        assert_eq!(&buf[12..16], &[10, 0, 0, 1]);
        assert_eq!(&buf[16..20], &[10, 0, 0, 2]);
        assert_eq!(
            checksum(0, &buf[..20]),
            0,
            "a correct IPv4 header sums to zero"
        );
        let tcp = &buf[20..];
        assert_eq!(u16::from_be_bytes([tcp[0], tcp[1]]), 1027);
        assert_eq!(u16::from_be_bytes([tcp[2], tcp[3]]), 1028);
        assert_eq!(u32::from_be_bytes(tcp[4..8].try_into().unwrap()), 1449);
        assert_eq!(u32::from_be_bytes(tcp[8..12].try_into().unwrap()), 1);
        assert_eq!(tcp[12] >> 4, 5, "data offset: 5 words");
        assert_eq!(tcp[13], TcpHeader::FLAG_ACK as u8);
    }

    #[test]
    fn the_tcp_checksum_verifies_over_the_pseudo_header_and_a_zero_payload() {
        for pkt in [
            data_segment(0, 1000),
            sack_ack(5000, &[(7000, 8000), (9000, 9500)]),
        ] {
            let mut buf = Vec::new();
            encode(&pkt, TcpEnd::Receiver, 0, &mut buf);
            let tcp_len = pkt.size as usize - 20;
            let mut whole = buf[20..].to_vec();
            whole.resize(tcp_len, 0);
            let mut pseudo = [0u8; 12];
            pseudo[0..4].copy_from_slice(&buf[12..16]);
            pseudo[4..8].copy_from_slice(&buf[16..20]);
            pseudo[9] = 6;
            pseudo[10..12].copy_from_slice(&(tcp_len as u16).to_be_bytes());
            // RFC 1071 §1, summed here word by word: a correct segment sums to all ones.
            let mut sum: u32 = pseudo
                .chunks(2)
                .chain(whole.chunks(2))
                .map(|w| u16::from_be_bytes([w[0], *w.get(1).unwrap_or(&0)]) as u32)
                .sum();
            while sum > 0xffff {
                sum = (sum & 0xffff) + (sum >> 16);
            }
            assert_eq!(
                sum, 0xffff,
                "a segment with a correct checksum sums to all ones"
            );
        }
    }

    #[test]
    fn sack_blocks_are_written_as_an_option_in_the_room_the_ack_accounted_for() {
        let pkt = sack_ack(5000, &[(7000, 8000), (9000, 9500)]);
        assert_eq!(
            pkt.size,
            40 + 20,
            "two blocks: 2 + 16 option bytes, padded to 20"
        );
        let mut buf = Vec::new();
        encode(&pkt, TcpEnd::Receiver, 0, &mut buf);
        let tcp = &buf[20..];
        assert_eq!(tcp[12] >> 4, 10, "20 + 20 bytes of header");
        assert_eq!(u32::from_be_bytes(tcp[8..12].try_into().unwrap()), 5001);
        assert_eq!(
            &tcp[20..24],
            &[1, 1, 5, 18],
            "NOP NOP SACK, length 2 + 2 x 8"
        );
        let edge = |i: usize| u32::from_be_bytes(tcp[24 + 4 * i..28 + 4 * i].try_into().unwrap());
        assert_eq!(
            [edge(0), edge(1), edge(2), edge(3)],
            [7001, 8001, 9001, 9501]
        );
        assert_eq!(
            u16::from_be_bytes([tcp[14], tcp[15]]),
            20_000,
            "the advertised window"
        );
    }

    #[test]
    fn the_timestamp_option_is_written_before_the_sack_blocks_for_tshark() {
        // RFC 7323 §3.2 and Appendix A: NOP NOP, kind 8, length 10, TSval, TSecr; then the SACK
        // option, the whole 40 option bytes with three blocks.
        let mut sack = SackBlocks::default();
        for b in [(7000, 8000), (9000, 9500), (11000, 12000)] {
            sack.push(b);
        }
        let ack = Acknowledgment::with_sack(5000, &sack).with_timestamps(Timestamps {
            val: 0x0102_0304,
            ecr: 77,
        });
        let pkt = Packet::tcp_segment(
            (1, 0),
            40 + ack.option_bytes(),
            0,
            0,
            SimTime::ZERO,
            TcpHeader {
                ack,
                flags: TcpHeader::FLAG_ACK,
                ..TcpHeader::default()
            },
        );
        assert_eq!(pkt.size, 80);
        let mut buf = Vec::new();
        encode(&pkt, TcpEnd::Receiver, 0, &mut buf);
        let tcp = &buf[20..];
        assert_eq!(tcp[12] >> 4, 15, "the largest TCP header, 60 bytes");
        assert_eq!(&tcp[20..24], &[1, 1, 8, 10]);
        assert_eq!(&tcp[24..28], &[1, 2, 3, 4], "TSval");
        assert_eq!(u32::from_be_bytes(tcp[28..32].try_into().unwrap()), 77);
        assert_eq!(&tcp[32..36], &[1, 1, 5, 26], "NOP NOP SACK, three blocks");
        assert_eq!(u32::from_be_bytes(tcp[36..40].try_into().unwrap()), 7001);
        // A data segment with timestamps: the option alone, 32 bytes of header.
        let mut data = data_segment(0, 1000);
        data.size += 12;
        if let Some(h) = data.tcp_mut() {
            h.ack = Acknowledgment::default().with_timestamps(Timestamps { val: 9, ecr: 8 });
        }
        let mut buf = Vec::new();
        encode(&data, TcpEnd::Sender, 0, &mut buf);
        assert_eq!(buf[20 + 12] >> 4, 8);
        assert_eq!(&buf[40..44], &[1, 1, 8, 10]);
        assert_eq!(&buf[44..52], &[0, 0, 0, 9, 0, 0, 0, 8]);
    }

    #[test]
    fn a_record_keeps_the_true_length_and_at_most_the_snap_length() {
        let mut w = PcapWriter::new(Vec::new(), 96).unwrap();
        w.write(
            SimTime::from_nanos(1_500_000_123),
            &data_segment(0, 1448),
            TcpEnd::Sender,
        )
        .unwrap();
        w.write(
            SimTime::from_nanos(2_000_000_000),
            &sack_ack(1448, &[]),
            TcpEnd::Receiver,
        )
        .unwrap();
        assert_eq!(w.records(), 2);
        let bytes = w.finish().unwrap();
        assert_eq!(&bytes[0..4], &MAGIC_NANOSECONDS.to_le_bytes());
        assert_eq!(
            u32::from_le_bytes(bytes[20..24].try_into().unwrap()),
            LINKTYPE_RAW
        );
        let rec = &bytes[24..];
        let field = |i: usize| u32::from_le_bytes(rec[4 * i..4 * i + 4].try_into().unwrap());
        assert_eq!(
            (field(0), field(1)),
            (1, 500_000_123),
            "seconds and nanoseconds"
        );
        assert_eq!((field(2), field(3)), (96, 1488), "captured and true length");
        let second = &rec[16 + 96..];
        let f2 = |i: usize| u32::from_le_bytes(second[4 * i..4 * i + 4].try_into().unwrap());
        assert_eq!((f2(2), f2(3)), (40, 40), "a pure ACK is captured whole");
        assert_eq!(bytes.len(), 24 + 16 + 96 + 16 + 40);
    }
}
