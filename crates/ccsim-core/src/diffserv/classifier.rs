// SPDX-License-Identifier: MIT
//! The multi-field classifier (RFC 2475 §2.3.1): an ordered list of match rules over the IP
//! and transport headers; the first rule that matches wins, and a packet no rule matches falls
//! to the default (Cisco MQC's `class-default`). A behaviour-aggregate classifier is the same
//! thing with rules on `dscp` alone.
//!
//! ```text
//!   packet ─> rule 0: src ∈ {addrs}? dst? protocol? flow? dscp ∈ set?  ─ all given fields hold ─> 0
//!          └> rule 1: ...                                                                     ─> 1
//!          └> none:                                                                       default
//! ```
//!
//! Addresses in ccsim are interface addresses assigned by the network builder, and ports are
//! endpoint identities, so a rule names *nodes* (all their addresses: the host prefix of an
//! ACL) and *flows* (the ports of a flow) rather than numbers; the parser resolves the names.
//! Each field costs one comparison or a scan of a few addresses; the DSCP set is a 64-bit mask.

use crate::packet::{Addr, FlowId, Packet, Transport};

/// The transport protocol of a packet, as an ACL's `protocol` sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    Tcp,
    Udp,
    /// SCTP (IP protocol 132, RFC 4960): every chunk type, DATA, SACK and HEARTBEAT alike.
    Sctp,
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
    pub dst_nodes: Vec<String>,
    pub dst: Vec<Addr>,
    pub protocol: Option<Protocol>,
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
        if let Some(p) = self.protocol {
            let is = match pkt.transport {
                Transport::Tcp(_) => Protocol::Tcp,
                Transport::Udp(_) => Protocol::Udp,
                Transport::Sctp(_) => Protocol::Sctp,
            };
            if is != p {
                return false;
            }
        }
        (self.src_nodes.is_empty() || self.src.contains(&pkt.src))
            && (self.dst_nodes.is_empty() || self.dst.contains(&pkt.dst))
            && (self.flow_names.is_empty() || self.flows.contains(&pkt.flow))
    }

    /// True when the rule names no field (it matches every packet).
    pub fn is_empty(&self) -> bool {
        self.src_nodes.is_empty()
            && self.dst_nodes.is_empty()
            && self.protocol.is_none()
            && self.flow_names.is_empty()
            && self.dscp_mask == 0
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
}
