// SPDX-License-Identifier: MIT
//! Base-station agents: node hooks that improve TCP over a lossy last hop.
//!
//! ```text
//!   FH (sender) ──wired── BS [agent] ──wireless (lossy)── MH (receiver)
//!
//!   spack  paper 001 §IV: after the FH retransmits, split the MH's next (stretch) ACK into N
//!          ACKs, so a sender that grows cwnd per ACK regrows N times faster
//!   snoop  Balakrishnan et al. 1995: cache data, retransmit locally on dupacks or a local
//!          timer, hide the dupacks that the local retransmission answers
//!   itcp   Bakre & Badrinath 1995: terminate the FH's connection, relay over a second
//!          connection to the MH through a bounded buffer
//! ```
//!
//! Every agent is one [`NodeHook`](crate::hook::NodeHook) at the base station and keeps state
//! per TCP connection, keyed by the data direction's (source address, source port, destination
//! address, destination port) ([`ConnKey`]). Packets are classified without any knowledge of
//! the topology: a TCP segment with payload is data of its own connection (and travels toward
//! the receiver, the MH); a pure ACK (no payload) belongs to the reverse key (and travels toward
//! the sender, the FH). Non-TCP packets, and ACKs of connections never seen, pass unchanged.
//!
//! Connection state is looked up through an ordered map (no hashing on the per-packet path) and
//! per-connection deadlines are folded into the hook's one deadline through an ordered set
//! (`Deadlines`), never by walking the connections. Connection state is kept for the whole
//! run (a hook does not see connections end; TCP here has no FIN).

pub mod itcp;
pub mod snoop;
pub mod spack;

use std::collections::{BTreeMap, BTreeSet};

use crate::packet::{Addr, Packet, Port, TcpHeader};
use crate::time::SimTime;

pub use itcp::{Itcp, ItcpConfig, ItcpStats};
pub use snoop::{Snoop, SnoopConfig, SnoopStats};
pub use spack::{Spack, SpackConfig, SpackStats};

/// One TCP connection as a base station sees it: its data direction's addresses and ports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ConnKey {
    pub src: Addr,
    pub src_port: Port,
    pub dst: Addr,
    pub dst_port: Port,
}

/// What a packet is to an agent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Role {
    /// A TCP segment with payload, of connection `ConnKey` (its own direction).
    Data(ConnKey),
    /// A pure TCP ACK acknowledging connection `ConnKey` (the reverse of its own direction).
    Ack(ConnKey),
    /// Anything else (UDP, a TCP segment that is neither).
    Other,
}

pub(crate) fn classify(p: &Packet) -> Role {
    let Some(h) = p.tcp() else {
        return Role::Other;
    };
    if h.is_syn() {
        // The handshake is end to end: no agent touches it.
        return Role::Other;
    }
    if h.len > 0 {
        Role::Data(ConnKey {
            src: p.src,
            src_port: h.src_port,
            dst: p.dst,
            dst_port: h.dst_port,
        })
    } else if h.is_ack() {
        Role::Ack(ConnKey {
            src: p.dst,
            src_port: h.dst_port,
            dst: p.src,
            dst_port: h.src_port,
        })
    } else {
        Role::Other
    }
}

/// The TCP header of a packet [`classify`] accepted.
pub(crate) fn tcp(p: &Packet) -> &TcpHeader {
    p.tcp().expect("classified as TCP")
}

/// Connections by key, stored densely; an index is stable for the whole run.
#[derive(Debug)]
pub(crate) struct Conns<T> {
    index: BTreeMap<ConnKey, u32>,
    items: Vec<T>,
}

impl<T> Default for Conns<T> {
    fn default() -> Self {
        Conns {
            index: BTreeMap::new(),
            items: Vec::new(),
        }
    }
}

impl<T> Conns<T> {
    pub(crate) fn find(&self, key: &ConnKey) -> Option<u32> {
        self.index.get(key).copied()
    }

    /// The index of `key`'s connection, created with `make` if new.
    pub(crate) fn find_or_insert(&mut self, key: ConnKey, make: impl FnOnce() -> T) -> u32 {
        if let Some(&i) = self.index.get(&key) {
            return i;
        }
        let i = self.items.len() as u32;
        self.items.push(make());
        self.index.insert(key, i);
        i
    }

    pub(crate) fn get(&self, i: u32) -> &T {
        &self.items[i as usize]
    }

    pub(crate) fn get_mut(&mut self, i: u32) -> &mut T {
        &mut self.items[i as usize]
    }

    pub(crate) fn len(&self) -> usize {
        self.items.len()
    }
}

/// One deadline per connection, folded into the hook's single deadline.
#[derive(Debug, Default)]
pub(crate) struct Deadlines {
    at: Vec<Option<SimTime>>,
    set: BTreeSet<(SimTime, u32)>,
}

impl Deadlines {
    /// Sets (or clears) connection `conn`'s deadline.
    pub(crate) fn set(&mut self, conn: u32, t: Option<SimTime>) {
        let i = conn as usize;
        if i >= self.at.len() {
            self.at.resize(i + 1, None);
        }
        if self.at[i] == t {
            return;
        }
        if let Some(old) = self.at[i] {
            self.set.remove(&(old, conn));
        }
        if let Some(new) = t {
            self.set.insert((new, conn));
        }
        self.at[i] = t;
    }

    /// Connection `conn`'s deadline.
    pub(crate) fn get(&self, conn: u32) -> Option<SimTime> {
        self.at.get(conn as usize).copied().flatten()
    }

    /// The earliest deadline of any connection.
    pub(crate) fn first(&self) -> Option<SimTime> {
        self.set.first().map(|&(t, _)| t)
    }

    /// Moves the connections whose deadline is at or before `now` into `due` (earliest first)
    /// and clears their deadlines: the caller handles each once and sets its next deadline.
    pub(crate) fn take_due(&mut self, now: SimTime, due: &mut Vec<u32>) {
        while let Some(&(t, c)) = self.set.first() {
            if t > now {
                break;
            }
            self.set.pop_first();
            self.at[c as usize] = None;
            due.push(c);
        }
    }
}

#[cfg(test)]
pub(crate) mod testutil {
    //! Hand-made packets for the agents' unit tests: FH = address 0 port 0, MH = address 1
    //! port 1, MSS 1000.
    use crate::packet::{Acknowledgment, Packet, TcpHeader, Transport};
    use crate::time::SimTime;

    pub const MSS: u64 = 1000;

    pub fn data(seq: u64) -> Packet {
        Packet {
            src: 0,
            dst: 1,
            size: MSS as u32 + 40,
            dscp: 0,
            ecn: 0,
            ttl: crate::packet::DEFAULT_TTL,
            flow: 0,
            sent_at: SimTime::ZERO,
            transport: Transport::Tcp(TcpHeader {
                src_port: 0,
                dst_port: 1,
                seq,
                len: MSS as u32,
                ..TcpHeader::default()
            }),
        }
    }

    pub fn ack(ack: u64) -> Packet {
        Packet {
            src: 1,
            dst: 0,
            size: 40,
            dscp: 0,
            ecn: 0,
            ttl: crate::packet::DEFAULT_TTL,
            flow: 0,
            sent_at: SimTime::ZERO,
            transport: Transport::Tcp(TcpHeader {
                src_port: 1,
                dst_port: 0,
                ack: Acknowledgment::cumulative(ack),
                rwnd: 65_535,
                flags: TcpHeader::FLAG_ACK,
                ..TcpHeader::default()
            }),
        }
    }

    pub fn ms(ms: u64) -> SimTime {
        SimTime::from_millis(ms)
    }
}

#[cfg(test)]
mod tests {
    use super::testutil::*;
    use super::*;

    #[test]
    fn a_data_segment_and_its_ack_map_to_the_same_connection() {
        let (Role::Data(d), Role::Ack(a)) = (classify(&data(0)), classify(&ack(1000))) else {
            panic!("misclassified");
        };
        assert_eq!(d, a);
    }

    #[test]
    fn deadlines_hand_out_each_due_connection_once_earliest_first() {
        let mut d = Deadlines::default();
        d.set(2, Some(ms(30)));
        d.set(0, Some(ms(10)));
        d.set(1, Some(ms(50)));
        d.set(0, Some(ms(20))); // moved: the old entry must go
        assert_eq!(d.first(), Some(ms(20)));
        let mut due = vec![];
        d.take_due(ms(40), &mut due);
        assert_eq!(due, vec![0, 2]);
        assert_eq!(d.first(), Some(ms(50)));
        d.set(1, None);
        assert_eq!(d.first(), None);
    }
}
