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
//! # Prefetch
//!
//! A packet's slot is written when it is sent and read again when it reaches the far end of
//! its link, a propagation delay later. With a few hundred packets alive (P1) the slots stay in
//! the cache; with tens of thousands (P2's 22,000, paper 002's 67,000: 3-9 MB of slots) every
//! such read missed the cache, on up to three lines per hop, and the event loop waited for
//! memory. A channel knows which packets it hands on next: its propagation FIFO keeps arrival
//! order and its queue is first in, first out. So when a packet arrives the channel asks the
//! processor for the slot of the packet two places behind the new head, and for the FIFO's own
//! entries eight places further on; when a transmission starts, for the slot of the next
//! packet in its queue (`link.rs`, [`PacketArena::prefetch`], [`prefetch`]). With more than
//! 1,024 endpoints held, an arrival at a host also asks for the state of the endpoints the
//! next packets are for (`sim/engine.rs`, `prefetch_endpoints_ahead`).
//!
//! A prefetch reads nothing the program sees: results are the same bits with or without it.
//! Below [`PREFETCH_FROM_SLOTS`] the hints are skipped, since they would cost instructions for
//! nothing. Measured in wall time (`docs/performance.md`, "Prefetch"): P2 and paper 002's
//! case 1 run markedly faster, P1 the same.
//!
//! A handle is valid from [`PacketArena::insert`] to [`PacketArena::take`] or
//! [`PacketArena::free`]; the engine owns each live handle in exactly one place. Debug builds
//! check that no freed handle is used (a use after free would read another packet, silently).

use crate::packet::Packet;

/// Below this many slots (256 KiB of packets, half a core's second-level cache on the machines
/// of `docs/performance.md`) the packets stay in the cache and [`PacketArena::prefetch`] does
/// nothing: there the hint only costs instructions (P1, 873 slots: +3 % under callgrind).
pub const PREFETCH_FROM_SLOTS: usize = 2048;

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
    /// Set once the arena outgrows [`PREFETCH_FROM_SLOTS`]: only then does
    /// [`PacketArena::prefetch`] issue its hint.
    prefetching: bool,
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
                self.prefetching = self.slots.len() > PREFETCH_FROM_SLOTS;
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

    /// Ask the processor to bring packet `id`'s slot into the cache (a hint: no effect on
    /// results).
    #[inline]
    pub fn prefetch(&self, id: PacketId) {
        if let Some(p) = self.slots.get(id.0 as usize) {
            prefetch(p);
        }
    }

    /// Whether the arena is past [`PREFETCH_FROM_SLOTS`], where [`PacketArena::prefetch`] pays
    /// (callers ask first, so that below it they do not even look up the packet to prefetch).
    #[inline]
    pub fn prefetching(&self) -> bool {
        self.prefetching
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

/// Call `probe` with the bytes of a value of `size` bytes that [`prefetch`] asks for: one every
/// 64 from the first, and the last. Probes at most 64 bytes apart hit every line the value
/// touches, wherever it starts (a 120-byte packet at a 120-byte stride may span three lines),
/// and with the size known at compile time the loop unrolls into plain prefetches: no line
/// count to work out at run time (that arithmetic was half the instructions of an arrival's
/// prefetch: paper 002's first 10 s ran 2.6 % fewer instructions without it). A probe that
/// repeats a line costs one instruction.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
#[inline(always)]
fn for_each_probe(size: usize, mut probe: impl FnMut(usize)) {
    // A `while` loop, not an iterator chain: with `step_by` and `chain` the compiler kept the
    // loop and the arrival's prefetch took 94 instructions instead of 33.
    let mut offset = 0;
    while offset < size {
        probe(offset);
        offset += 64;
    }
    if size > 0 {
        probe(size - 1);
    }
}

/// Ask the processor to bring the cache lines of `*r` into its first-level cache: a hint that
/// reads nothing the program sees and cannot fault, so results do not depend on it. On other
/// architectures than x86-64 it does nothing.
#[inline]
pub fn prefetch<T>(r: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let first = r as *const T as *const i8;
        for_each_probe(std::mem::size_of::<T>(), |offset| {
            // SAFETY: PREFETCHT0 is in SSE, part of every x86-64 processor; a prefetch of any
            // address, valid or not, never faults and changes no memory. The one `unsafe` of
            // the crate, kept for what it measured (`arena.rs`, "Prefetch").
            unsafe { _mm_prefetch::<_MM_HINT_T0>(first.wrapping_add(offset)) };
        });
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = r;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prefetch_asks_for_every_cache_line_a_value_touches_wherever_it_starts() {
        for size in [1, 8, 16, 40, 63, 64, 65, 120, 128, 424, 912] {
            for start in 0..64usize {
                let mut asked = std::collections::BTreeSet::new();
                for_each_probe(size, |o| {
                    asked.insert((start + o) / 64);
                });
                let touched: std::collections::BTreeSet<usize> =
                    (start / 64..=(start + size - 1) / 64).collect();
                assert_eq!(asked, touched, "{size} bytes from offset {start}");
            }
        }
        let mut none = 0;
        for_each_probe(0, |_| none += 1);
        assert_eq!(none, 0, "nothing to ask for");
    }

    #[test]
    fn the_arena_prefetches_only_once_it_holds_more_packets_than_the_cache_budget() {
        let mut a = PacketArena::new();
        let mut ids = Vec::new();
        for i in 0..PREFETCH_FROM_SLOTS {
            ids.push(a.insert(Packet::test_udp(1500, 0, i as u64)));
        }
        assert!(
            !a.prefetching(),
            "{PREFETCH_FROM_SLOTS} slots still fit the cache budget"
        );
        // Recycled slots do not grow the arena.
        a.free(ids.pop().unwrap());
        ids.push(a.insert(Packet::test_udp(1500, 0, 0)));
        assert!(!a.prefetching());
        ids.push(a.insert(Packet::test_udp(1500, 0, 0)));
        assert!(a.prefetching(), "one slot more turns the hint on");
        // A hint changes nothing: every packet reads back as it was put in.
        for (i, id) in ids.iter().take(10).enumerate() {
            a.prefetch(*id);
            assert_eq!(seq(a.get(*id)), i as u64);
        }
    }

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
        assert_eq!(
            std::mem::size_of::<(crate::time::SimTime, PacketId, crate::packet::Port)>(),
            16
        );
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
