// SPDX-License-Identifier: MIT
//! Weighted fair queueing, in Golestani's self-clocked form (SCFQ, INFOCOM 1994): GPS's virtual
//! time (Parekh and Gallager 1993; Demers, Keshav, Shenker 1989) is approximated by the finish
//! tag of the packet last chosen, so no fluid reference has to be simulated.
//!
//! ```text
//!   packet k of class i, length L, reaching the head of its class:
//!       S = max(F_i^(k−1), V)      F = S + L / φ_i       V ← F of the packet chosen
//!   send the head with the smallest F (a binary heap of the backlogged classes' heads)
//! ```
//!
//! Tags are given when a packet reaches the head of its class rather than on arrival: a class
//! that stays backlogged has S = F of its previous packet either way (that packet's F is ≥ V),
//! and a class that was empty gets S = V, as on arrival. So only the heads carry tags and the
//! class FIFOs stay plain. Tags are integers: a byte of class i advances its tag by
//! ⌊2⁴⁸/φ_i⌋ (precomputed, so a packet costs a multiplication, not a 128-bit division), which
//! keeps the shares exact to about φ/2⁴⁸ and the runs free of floating-point drift; ties go to the
//! lower class index. O(log classes) per packet.
//!
//! Long-run shares of backlogged classes are in proportion to φ; an idle class's share goes to
//! the others in proportion to theirs (check 8 of the reference notes).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::classes::ClassScheduler;

/// Scale of a tag: a byte of weight φ is worth SCALE/φ (weights are bit rates up to ~2³⁷ in
/// CBWFQ, so at least 2¹¹ units per byte).
const SCALE: u128 = 1 << 48;

#[derive(Clone, Debug)]
pub(crate) struct Wfq {
    /// ⌊SCALE/φ_i⌋: the tag units one byte of class i is worth.
    per_byte: Vec<u128>,
    /// F of the last packet of each class that reached the head.
    last_finish: Vec<u128>,
    /// (F of the head, class) of every backlogged class.
    heads: BinaryHeap<Reverse<(u128, usize)>>,
    /// The system virtual time: F of the packet chosen last.
    virtual_time: u128,
}

impl Wfq {
    pub(crate) fn new(weight: Vec<u64>) -> Wfq {
        let n = weight.len();
        Wfq {
            per_byte: weight.iter().map(|&w| SCALE / w.max(1) as u128).collect(),
            last_finish: vec![0; n],
            heads: BinaryHeap::with_capacity(n),
            virtual_time: 0,
        }
    }

    /// A packet of `size` bytes became the head of class `i`.
    #[inline]
    pub(crate) fn head(&mut self, i: usize, size: u32) {
        let start = self.last_finish[i].max(self.virtual_time);
        let finish = start + size as u128 * self.per_byte[i];
        self.last_finish[i] = finish;
        self.heads.push(Reverse((finish, i)));
    }
}

impl ClassScheduler for Wfq {
    #[inline]
    fn backlogged(&mut self, i: usize, head: u32) {
        self.head(i, head)
    }

    /// The class whose head has the smallest finish tag; its tag becomes the virtual time.
    #[inline]
    fn next(&mut self, _head: impl Fn(usize) -> Option<u32>) -> Option<usize> {
        let Reverse((finish, i)) = self.heads.pop()?;
        self.virtual_time = finish;
        Some(i)
    }

    /// The next packet of a class that stays backlogged is its new head.
    #[inline]
    fn served(&mut self, i: usize, next_head: Option<u32>) {
        if let Some(size) = next_head {
            self.head(i, size)
        }
    }
}
