// SPDX-License-Identifier: MIT
//! IP-layer round-robin striping (paper 004's "IP" baseline; RFC 2991 §2): a node hook that
//! spreads the data packets bound for one multihomed host over its addresses in turn, so
//! packet k takes path k mod N, unseen by the transport.
//!
//! ```text
//!   sender ─> [hook: dst <- address k mod N of host] ─> routing ─> path 0 ─┐
//!                                                                ─> path 1 ─┴─> host
//! ```
//!
//! Routes in ccsim go by destination address, and each address of the receiving host is reached
//! over its own path; rewriting the destination address is how the hook picks the path. The
//! receiving TCP accepts data on any of its host's addresses and answers from its own, so its
//! ACKs all return one way. Pure ACKs and packets for other hosts pass unchanged.
//!
//! With unequal path delays the segments arrive out of order, three later segments give three
//! duplicate ACKs, and TCP retransmits a segment that was not lost and halves its window: a
//! false fast retransmit. Such a retransmission reaches the receiver as a duplicate, so the
//! flows table counts them: `packets_received` less the segments delivered
//! (`bytes_delivered / mss`), less what is held out of order at the end.

use crate::hook::{HookOutput, IfaceId, NodeHook};
use crate::network::Network;
use crate::packet::{Addr, Packet};
use crate::scenario::Spec;
use crate::time::SimTime;

pub struct Stripe {
    /// Every address of the receiving host (which packets to stripe).
    host_addrs: Vec<Addr>,
    /// The addresses to rotate over, one per striped link.
    rotation: Vec<Addr>,
    next: usize,
    /// Data packets striped, per address of `rotation`.
    pub striped: Vec<u64>,
}

impl Stripe {
    pub fn new(host_addrs: Vec<Addr>, rotation: Vec<Addr>) -> Stripe {
        let n = rotation.len();
        Stripe {
            host_addrs,
            rotation,
            next: 0,
            striped: vec![0; n],
        }
    }

    /// The hook of a validated scenario: host `dst`'s addresses on `links`.
    pub fn build(spec: &Spec, net: &Network, dst: &str, links: &[String]) -> Stripe {
        let node = spec.nodes.get_index_of(dst).unwrap_or(0) as u32;
        let host_addrs = net.nodes[node as usize].ifaces.clone();
        let rotation = links
            .iter()
            .filter_map(|l| net.iface_on_link(node, l))
            .collect();
        Stripe::new(host_addrs, rotation)
    }
}

impl NodeHook for Stripe {
    fn on_packet(&mut self, _: SimTime, mut pkt: Packet, _: Option<IfaceId>, out: &mut HookOutput) {
        if pkt.is_data() && !self.rotation.is_empty() && self.host_addrs.contains(&pkt.dst) {
            pkt.dst = self.rotation[self.next];
            self.striped[self.next] += 1;
            self.next = (self.next + 1) % self.rotation.len();
        }
        out.forward(pkt);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_packets_for_the_host_take_its_addresses_in_turn_and_others_pass_unchanged() {
        let mut h = Stripe::new(vec![5, 7, 9], vec![7, 9]);
        let mut out = HookOutput::default();
        let data = |dst| {
            let mut p = Packet::test_udp(1000, 0, 0);
            p.dst = dst;
            p
        };
        for _ in 0..4 {
            h.on_packet(SimTime::ZERO, data(5), None, &mut out);
        }
        h.on_packet(SimTime::ZERO, data(3), None, &mut out);
        let mut ack = data(5);
        ack.transport = crate::packet::Transport::Tcp(Default::default());
        h.on_packet(SimTime::ZERO, ack, None, &mut out);
        let dsts: Vec<Addr> = out.packets.iter().map(|p| p.dst).collect();
        assert_eq!(dsts, [7, 9, 7, 9, 3, 5]);
        assert_eq!(h.striped, [2, 2]);
    }
}
