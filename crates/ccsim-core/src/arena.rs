// SPDX-License-Identifier: MIT
//! The packet arena: every packet inside the network lives in one slot of one `Vec`, and the
//! queues, transmitters, propagation FIFOs and the engine's delivery FIFO pass a 4-byte
//! [`PacketId`] instead of the 120-byte [`Packet`].
//!
//! ```text
//!   endpoint ─ out: Vec<Packet> ─> insert ──> PacketId ──> queue ──> FIFO ──> … ──> take ──> endpoint
//!                                   (one copy in)          (4-byte handles only)   (one copy out,
//!                                                                                   slot recycled)
//!   slots: [ p0 | p1 | p2 | p3 | … ]   free: [2, 0]   (a LIFO: the slot freed last, still in the
//!                                                       cache, is the next one filled)
//! ```
//!
//! Why: before the arena a packet was copied by value at every step of every hop (into a queue,
//! out of it, into the propagation FIFO, out of it, into the delivery FIFO, into the endpoint),
//! about a dozen 120-byte moves per data packet on the dumbbells of `docs/performance.md`,
//! ~17 % of P1's instructions under callgrind (see "The packet arena" there for the
//! measurements). Now a packet is written once when its endpoint or a hook hands it to the node,
//! read in place by routing, the queue discipline and the transmitter, and copied out once when it
//! is delivered. A dropped or lost packet's slot is freed where it dies.
//!
//! The arena grows to the peak number of packets alive and is then reused: no allocation per
//! packet. Node hooks and endpoints keep their by-value interfaces (`Packet` in, `Vec<Packet>`
//! out): the engine takes a packet out of the arena before a hook sees it and puts what the
//! hook forwards back in.
//!
//! A handle is valid from [`PacketArena::insert`] to [`PacketArena::take`] or
//! [`PacketArena::free`]; the engine owns each live handle in exactly one place. Debug builds
//! check that no freed handle is used (a use after free would read another packet, silently).

use crate::packet::Packet;

/// The handle of a packet in the [`PacketArena`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PacketId(u32);

impl PacketId {
    /// The slot index (for tests and traces).
    pub fn index(self) -> u32 {
        self.0
    }
}

/// Packets alive in the network, by handle; freed slots are reused last-in, first-out.
#[derive(Debug, Default)]
pub struct PacketArena {
    slots: Vec<Packet>,
    free: Vec<u32>,
    /// Debug builds only: which slots hold a live packet.
    #[cfg(debug_assertions)]
    live: Vec<bool>,
}

impl PacketArena {
    pub fn new() -> Self {
        Self::default()
    }

    /// Put a packet in the arena and return its handle.
    #[inline]
    pub fn insert(&mut self, pkt: Packet) -> PacketId {
        let i = match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = pkt;
                i
            }
            None => {
                // More than 2^32 packets alive at once cannot fit in memory anyway.
                let i = u32::try_from(self.slots.len()).expect("packet arena full");
                self.slots.push(pkt);
                i
            }
        };
        #[cfg(debug_assertions)]
        {
            if self.live.len() <= i as usize {
                self.live.resize(i as usize + 1, false);
            }
            debug_assert!(!self.live[i as usize], "packet slot {i} filled twice");
            self.live[i as usize] = true;
        }
        PacketId(i)
    }

    #[inline]
    pub fn get(&self, id: PacketId) -> &Packet {
        self.check(id);
        &self.slots[id.0 as usize]
    }

    #[inline]
    pub fn get_mut(&mut self, id: PacketId) -> &mut Packet {
        self.check(id);
        &mut self.slots[id.0 as usize]
    }

    /// Take the packet out (it leaves the network: delivered, or handed to a hook) and recycle
    /// its slot.
    #[inline]
    pub fn take(&mut self, id: PacketId) -> Packet {
        let p = self.get(id).clone();
        self.free(id);
        p
    }

    /// Destroy the packet (dropped or lost) and recycle its slot.
    #[inline]
    pub fn free(&mut self, id: PacketId) {
        self.check(id);
        #[cfg(debug_assertions)]
        {
            self.live[id.0 as usize] = false;
        }
        self.free.push(id.0);
    }

    /// Packets alive (inserted and not yet taken or freed).
    pub fn len(&self) -> usize {
        self.slots.len() - self.free.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Slots ever used: the peak of packets alive at once.
    pub fn capacity_used(&self) -> usize {
        self.slots.len()
    }

    #[inline]
    fn check(&self, id: PacketId) {
        #[cfg(debug_assertions)]
        debug_assert!(
            self.live.get(id.0 as usize).copied().unwrap_or(false),
            "packet {} used after it was freed",
            id.0
        );
        let _ = id;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seq(p: &Packet) -> u64 {
        match &p.transport {
            crate::packet::Transport::Udp(h) => h.seq,
            crate::packet::Transport::Tcp(h) => h.seq,
            _ => unreachable!("the tests use UDP and TCP packets"),
        }
    }

    #[test]
    fn a_freed_slot_is_the_next_one_filled_so_the_arena_grows_only_to_the_peak_alive() {
        let mut a = PacketArena::new();
        let p0 = a.insert(Packet::test_udp(100, 0, 0));
        let p1 = a.insert(Packet::test_udp(100, 0, 1));
        assert_eq!(a.len(), 2);
        assert_eq!(seq(&a.take(p0)), 0);
        let p2 = a.insert(Packet::test_udp(100, 0, 2));
        assert_eq!(p2, p0, "the slot freed last is reused first");
        a.free(p1);
        let p3 = a.insert(Packet::test_udp(100, 0, 3));
        assert_eq!(p3, p1);
        assert_eq!(a.capacity_used(), 2);
        assert_eq!((seq(a.get(p2)), seq(a.get(p3))), (2, 3));
        a.get_mut(p3).ecn = 3;
        assert_eq!(a.take(p3).ecn, 3);
        assert_eq!(a.len(), 1);
    }

    #[test]
    fn a_handle_is_4_bytes_and_a_propagation_fifo_entry_16() {
        assert_eq!(std::mem::size_of::<PacketId>(), 4);
        assert_eq!(std::mem::size_of::<(crate::time::SimTime, PacketId)>(), 16);
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "used after it was freed")]
    fn a_debug_build_refuses_a_handle_used_after_its_packet_was_freed() {
        let mut a = PacketArena::new();
        let p = a.insert(Packet::test_udp(100, 0, 0));
        a.free(p);
        let _ = a.get(p);
    }
}
