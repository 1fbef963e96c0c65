// SPDX-License-Identifier: MIT
//! Deficit round robin (Shreedhar and Varghese, SIGCOMM 1995, Fig. 3).
//!
//! ```text
//!   ActiveList: the classes with packets, in round order
//!   serve the head class i: DC_i += Q_i once per turn; send its head packets while they fit in
//!   DC_i (DC_i −= size); then, if i is empty: DC_i = 0 and leave the list, else go to its tail
//! ```
//!
//! O(1) per packet when every quantum is at least the largest packet; long-run byte shares of
//! backlogged classes are in proportion to their quanta. A class joins the tail of the list
//! with DC = 0 when a packet arrives to it empty.

use std::collections::VecDeque;

use super::classes::ClassScheduler;

#[derive(Clone, Debug)]
pub(crate) struct Drr {
    quantum: Vec<u64>,
    deficit: Vec<u64>,
    active: VecDeque<usize>,
    /// The head of `active` has had its quantum for this turn.
    turn_started: bool,
}

impl Drr {
    pub(crate) fn new(quantum: Vec<u64>) -> Drr {
        let n = quantum.len();
        Drr {
            quantum,
            deficit: vec![0; n],
            active: VecDeque::with_capacity(n),
            turn_started: false,
        }
    }
}

impl ClassScheduler for Drr {
    /// Class `i` had no packet and now has one: it joins the tail of the list with DC = 0.
    #[inline]
    fn backlogged(&mut self, i: usize, _head: u32) {
        self.deficit[i] = 0;
        self.active.push_back(i);
    }

    #[inline]
    fn next(&mut self, head: impl Fn(usize) -> Option<u32>) -> Option<usize> {
        loop {
            let &i = self.active.front()?;
            if !self.turn_started {
                self.deficit[i] += self.quantum[i];
                self.turn_started = true;
            }
            match head(i) {
                Some(size) if size as u64 <= self.deficit[i] => {
                    self.deficit[i] -= size as u64;
                    return Some(i);
                }
                Some(_) => {
                    // The head does not fit: the turn ends, the deficit carries over.
                    self.active.rotate_left(1);
                    self.turn_started = false;
                }
                None => {
                    self.deficit[i] = 0;
                    self.active.pop_front();
                    self.turn_started = false;
                }
            }
        }
    }

    /// A class that is now empty leaves the list, its deficit reset.
    #[inline]
    fn served(&mut self, i: usize, next_head: Option<u32>) {
        if next_head.is_none() && self.active.front() == Some(&i) {
            self.deficit[i] = 0;
            self.active.pop_front();
            self.turn_started = false;
        }
    }
}
