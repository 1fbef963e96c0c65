// SPDX-License-Identifier: MIT
//! The multi-field classifier (RFC 2475 §2.3.1): an ordered list of match rules over the IP
//! and transport headers; the first rule that matches wins, and a packet no rule matches falls
//! to the default (Cisco MQC's `class-default`). A behaviour-aggregate classifier is the same
//! thing with rules on `dscp` alone.
//!
//! ```text
//!   packet ─> rule 0: src? dst? protocol? ports? flow? dscp ∈ set? ─ all given fields hold ─> 0
//!          └> rule 1: ...                                                                  ─> 1
//!          └> none:                                                                    default
//! ```
//!
//! Addresses and ports are those a capture of the run shows (`pcap.rs`): interface address `a`
//! is the IPv4 address 10.0.0.0 + a + 1, and endpoint `e` the port 1024 + e (mod 64,512).
//! Interface addresses are dealt two per link in the order of `[links]` (end `a` then end
//! `b`: link 0 gives 10.0.0.1 and 10.0.0.2), and ports two per flow in the order of `[flows]`
//! (sender then receiver: the first flow's sender is port 1024, its receiver 1025). So an ACL
//! may be written as a router's (`src = "10.0.0.0/24"`, `dst_port = "1024-2047"`), or by name:
//! `src = "h1"` stands for every address of node h1 (the host prefix of an ACL) and `flow`
//! for the ports of a flow; the parser resolves the names.
//!
//! A ping probe's packets are ICMP echoes (`protocol = "icmp"`): ccsim carries them in a UDP
//! header, so the parser tells the classifier which flows are pings; they carry no ports and
//! are not `udp`.
//!
//! Each field costs one comparison or a scan of a few addresses or prefixes; the DSCP set is a
//! 64-bit mask.

use crate::packet::{Addr, FlowId, Packet, Transport};
use crate::pcap::{ipv4_of, port_of};

/// The transport protocol of a packet, as an ACL's `protocol` sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    Tcp,
    Udp,
    /// SCTP (IP protocol 132, RFC 4960): every chunk type, DATA, SACK and HEARTBEAT alike.
    Sctp,
    /// ICMP (IP protocol 1, RFC 792): the echo requests and replies of ping probes.
    Icmp,
}

/// An IPv4 prefix such as 10.0.1.0/24 (a single address is a /32).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ipv4Prefix {
    /// The network, host bits zero, as a big-endian number.
    pub net: u32,
    pub len: u8,
}

impl Ipv4Prefix {
    /// The mask of the prefix's `len` leading bits.
    #[inline]
    pub fn mask(&self) -> u32 {
        u32::MAX.checked_shl(32 - self.len as u32).unwrap_or(0)
    }

    /// Whether interface address `addr` (written as a capture writes it) is in the prefix.
    #[inline]
    pub fn contains(&self, addr: Addr) -> bool {
        u32::from_be_bytes(ipv4_of(addr)) & self.mask() == self.net
    }
}

/// A range of ports as a capture shows them, both ends included (a single port is lo = hi).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortRange {
    pub lo: u16,
    pub hi: u16,
}

impl PortRange {
    #[inline]
    pub fn contains(&self, port: u16) -> bool {
        (self.lo..=self.hi).contains(&port)
    }
}

/// One match rule: every field that is set must hold (Cisco `match-all`; an empty rule matches
/// everything).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MatchSpec {
    /// Where the rule was written (`links.b.queue.classes[0].match`), for the errors of name
    /// resolution.
    pub at: String,
    /// Source nodes by name (for messages) and their addresses (resolved by the parser).
    pub src_nodes: Vec<String>,
    pub src: Vec<Addr>,
    /// Source prefixes; the source field holds if the address is one of `src` or in one of
    /// these.
    pub src_prefixes: Vec<Ipv4Prefix>,
    pub dst_nodes: Vec<String>,
    pub dst: Vec<Addr>,
    pub dst_prefixes: Vec<Ipv4Prefix>,
    pub protocol: Option<Protocol>,
    /// Port ranges, any of which may hold; empty: any port. A packet without ports (ICMP)
    /// fails a rule that names them.
    pub src_ports: Vec<PortRange>,
    pub dst_ports: Vec<PortRange>,
    /// The flows that are ping probes (resolved by the parser): their UDP-carried packets are
    /// ICMP to the classifier.
    pub ping_flows: Vec<FlowId>,
    /// Flows by name and their ids (resolved by the parser): the packets of these flows, both
    /// directions.
    pub flow_names: Vec<String>,
    pub flows: Vec<FlowId>,
    /// Code points as a bit mask (bit d set: DSCP d matches); 0 means any.
    pub dscp_mask: u64,
}

impl MatchSpec {
    /// Whether `pkt` satisfies every field of the rule.
    #[inline]
    pub fn matches(&self, pkt: &Packet) -> bool {
        self.matches_dscp(pkt.dscp) && self.matches_addresses(pkt)
    }

    /// Whether the DSCP field of the rule (if any) holds for code point `dscp`.
    #[inline]
    pub fn matches_dscp(&self, dscp: u8) -> bool {
        self.dscp_mask == 0 || self.dscp_mask & (1u64 << (dscp & 63)) != 0
    }

    /// Whether `pkt` satisfies every field of the rule other than the DSCP. These fields are the
    /// same for every packet of one flow from one source, so their answer can be remembered.
    #[inline]
    pub fn matches_addresses(&self, pkt: &Packet) -> bool {
        let needs_protocol =
            self.protocol.is_some() || !self.src_ports.is_empty() || !self.dst_ports.is_empty();
        if needs_protocol {
            let ports = match &pkt.transport {
                Transport::Tcp(h) => Some((Protocol::Tcp, h.src_port, h.dst_port)),
                Transport::Udp(_) if self.ping_flows.contains(&pkt.flow) => None,
                Transport::Udp(h) => Some((Protocol::Udp, h.src_port, h.dst_port)),
                Transport::Sctp(h) => Some((Protocol::Sctp, h.src_port, h.dst_port)),
            };
            let is = ports.map_or(Protocol::Icmp, |(p, _, _)| p);
            if self.protocol.is_some_and(|p| p != is) {
                return false;
            }
            if !self.src_ports.is_empty() || !self.dst_ports.is_empty() {
                let Some((_, sp, dp)) = ports else {
                    return false;
                };
                let any = |ranges: &[PortRange], port| {
                    ranges.is_empty() || ranges.iter().any(|r| r.contains(port_of(port)))
                };
                if !any(&self.src_ports, sp) || !any(&self.dst_ports, dp) {
                    return false;
                }
            }
        }
        let holds = |names: &[String], addrs: &[Addr], prefixes: &[Ipv4Prefix], a: Addr| {
            (names.is_empty() && prefixes.is_empty())
                || addrs.contains(&a)
                || prefixes.iter().any(|p| p.contains(a))
        };
        holds(&self.src_nodes, &self.src, &self.src_prefixes, pkt.src)
            && holds(&self.dst_nodes, &self.dst, &self.dst_prefixes, pkt.dst)
            && (self.flow_names.is_empty() || self.flows.contains(&pkt.flow))
    }

    /// True when the rule names no field (it matches every packet).
    pub fn is_empty(&self) -> bool {
        self.dscp_mask == 0 && self.is_dscp_only()
    }

    /// True when the rule names no field other than the DSCP (a behaviour-aggregate rule, RFC
    /// 2475 §2.3.1).
    pub fn is_dscp_only(&self) -> bool {
        self.src_nodes.is_empty()
            && self.src_prefixes.is_empty()
            && self.dst_nodes.is_empty()
            && self.dst_prefixes.is_empty()
            && self.protocol.is_none()
            && self.src_ports.is_empty()
            && self.dst_ports.is_empty()
            && self.flow_names.is_empty()
    }
}

/// First match wins: the index of the first rule `pkt` matches, or `default`.
#[inline]
pub fn classify(rules: &[MatchSpec], pkt: &Packet, default: usize) -> usize {
    rules.iter().position(|r| r.matches(pkt)).unwrap_or(default)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn udp(src: Addr, dscp: u8) -> Packet {
        let mut p = Packet::test_udp(1000, 0, 0);
        p.src = src;
        p.dscp = dscp;
        p
    }

    #[test]
    fn the_first_matching_rule_wins_and_unmatched_packets_fall_to_the_default() {
        let ef = MatchSpec {
            dscp_mask: 1 << 46,
            ..MatchSpec::default()
        };
        let from_h1 = MatchSpec {
            src_nodes: vec!["h1".into()],
            src: vec![4],
            protocol: Some(Protocol::Udp),
            ..MatchSpec::default()
        };
        let rules = [ef, from_h1];
        assert_eq!(classify(&rules, &udp(4, 46), 9), 0);
        assert_eq!(classify(&rules, &udp(4, 0), 9), 1);
        assert_eq!(classify(&rules, &udp(5, 0), 9), 9);
        let mut tcp_like = rules[1].clone();
        tcp_like.protocol = Some(Protocol::Tcp);
        assert!(!tcp_like.matches(&udp(4, 0)));
        assert!(MatchSpec::default().matches(&udp(7, 13)));
    }

    #[test]
    fn a_protocol_match_tells_sctp_from_udp_and_tcp() {
        use crate::packet::{SctpChunk, SctpData, SctpHeader};
        let mut sctp = udp(4, 0);
        sctp.transport = Transport::Sctp(SctpHeader {
            src_port: 0,
            dst_port: 1,
            chunk: SctpChunk::Data(SctpData::default()),
        });
        let rule = |protocol| MatchSpec {
            protocol: Some(protocol),
            ..MatchSpec::default()
        };
        assert!(rule(Protocol::Sctp).matches(&sctp));
        assert!(!rule(Protocol::Udp).matches(&sctp));
        assert!(!rule(Protocol::Tcp).matches(&sctp));
        assert!(!rule(Protocol::Sctp).matches(&udp(4, 0)));
    }

    fn tcp(src: Addr, dst: Addr, sp: u32, dp: u32) -> Packet {
        let header = crate::packet::TcpHeader {
            src_port: sp,
            dst_port: dp,
            ..Default::default()
        };
        Packet::tcp_segment((src, dst), 1040, 0, 0, crate::time::SimTime::ZERO, header)
    }

    fn prefix(a: [u8; 4], len: u8) -> Ipv4Prefix {
        Ipv4Prefix {
            net: u32::from_be_bytes(a),
            len,
        }
    }

    #[test]
    fn a_prefix_matches_the_addresses_a_capture_writes_inside_it() {
        // Address a is 10.0.0.0 + a + 1: 254 is 10.0.0.255, 255 is 10.0.1.0.
        let rule = MatchSpec {
            src_prefixes: vec![prefix([10, 0, 1, 0], 24)],
            ..MatchSpec::default()
        };
        assert!(!rule.matches(&udp(254, 0)));
        assert!(rule.matches(&udp(255, 0)));
        assert!(rule.matches(&udp(510, 0)));
        assert!(!rule.matches(&udp(511, 0)));
        // One address is a /32; the list holds if any entry does, node addresses included.
        let rule = MatchSpec {
            dst_nodes: vec!["h".into()],
            dst: vec![7],
            dst_prefixes: vec![prefix([10, 0, 0, 4], 32)],
            ..MatchSpec::default()
        };
        assert!(rule.matches(&tcp(0, 3, 0, 1)));
        assert!(rule.matches(&tcp(0, 7, 0, 1)));
        assert!(!rule.matches(&tcp(0, 4, 0, 1)));
        assert!(prefix([0, 0, 0, 0], 0).contains(12345));
    }

    #[test]
    fn port_ranges_match_the_ports_a_capture_writes_and_a_ping_has_none() {
        // Endpoint e is port 1024 + e.
        let rule = MatchSpec {
            dst_ports: vec![
                PortRange { lo: 1025, hi: 1030 },
                PortRange { lo: 2000, hi: 2000 },
            ],
            ..MatchSpec::default()
        };
        assert!(!rule.matches(&tcp(0, 1, 5, 0)));
        assert!(rule.matches(&tcp(0, 1, 5, 1)));
        assert!(rule.matches(&tcp(0, 1, 5, 6)));
        assert!(!rule.matches(&tcp(0, 1, 5, 7)));
        assert!(rule.matches(&tcp(0, 1, 5, 976)));
        let mut u = udp(0, 0);
        u.transport = Transport::Udp(crate::packet::UdpHeader {
            src_port: 0,
            dst_port: 3,
            seq: 0,
            len: 0,
        });
        assert!(rule.matches(&u));
        let mut ping = rule.clone();
        ping.ping_flows = vec![u.flow];
        assert!(!ping.matches(&u), "an ICMP echo has no ports");
        let src_only = MatchSpec {
            src_ports: vec![PortRange { lo: 1029, hi: 1029 }],
            ..MatchSpec::default()
        };
        assert!(src_only.matches(&tcp(0, 1, 5, 0)));
        assert!(!src_only.matches(&tcp(0, 1, 4, 5)));
    }

    #[test]
    fn a_ping_flow_is_icmp_and_not_udp() {
        let mut ping = udp(4, 0);
        ping.flow = 3;
        let rule = |protocol| MatchSpec {
            protocol: Some(protocol),
            ping_flows: vec![3],
            ..MatchSpec::default()
        };
        assert!(rule(Protocol::Icmp).matches(&ping));
        assert!(!rule(Protocol::Udp).matches(&ping));
        let mut other = ping.clone();
        other.flow = 2;
        assert!(rule(Protocol::Udp).matches(&other));
        assert!(!rule(Protocol::Icmp).matches(&other));
        assert!(!rule(Protocol::Icmp).matches(&tcp(0, 1, 0, 1)));
    }

    #[test]
    fn first_match_holds_across_every_kind_of_field() {
        // Each rule names one kind of field; a packet that satisfies several takes the first.
        let rules = [
            MatchSpec {
                dst_ports: vec![PortRange { lo: 1030, hi: 1030 }],
                ..MatchSpec::default()
            },
            MatchSpec {
                protocol: Some(Protocol::Tcp),
                ..MatchSpec::default()
            },
            MatchSpec {
                src_prefixes: vec![prefix([10, 0, 0, 0], 24)],
                ..MatchSpec::default()
            },
            MatchSpec {
                dscp_mask: 1 << 46,
                ..MatchSpec::default()
            },
        ];
        assert_eq!(classify(&rules, &tcp(0, 1, 0, 6), 9), 0);
        assert_eq!(classify(&rules, &tcp(0, 1, 0, 2), 9), 1);
        assert_eq!(classify(&rules, &udp(0, 46), 9), 2);
        assert_eq!(classify(&rules, &udp(300, 46), 9), 3);
        assert_eq!(classify(&rules, &udp(300, 0), 9), 9);
        assert!(!rules[0].is_dscp_only() && rules[3].is_dscp_only());
    }
}
