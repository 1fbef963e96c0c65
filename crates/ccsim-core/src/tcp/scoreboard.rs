// SPDX-License-Identifier: MIT
//! The sender's record of segments in flight: cumulative and selective acknowledgments, loss
//! marks, retransmissions and the `pipe` estimate of RFC 6675, all without walking the window.
//!
//! ```text
//!   SND.UNA                                                            SND.MAX
//!     │ seg │ seg │ seg │ seg │ seg │ seg │ seg │ seg │ seg │ seg │ seg │
//!     │ L,R │  L  │  S  │  S  │  L  │  S  │  S  │  S  │     │  S  │     │
//!     └──────── lost_upto ──────────────┘
//!   S = SACKed, L = marked lost, R = retransmission in flight
//!   pipe = (SND.MAX − SND.UNA) − SACKed − lost + retransmitted      (Linux's in_flight, RFC 6675 SetPipe)
//! ```
//!
//! Why it is cheap (a simulator that walks its list of segments on every ACK spends most of a
//! high bandwidth-delay run doing so; ns-3's profile shows it):
//! - segments keep the boundaries of their first transmission and all but the last are one MSS,
//!   so the segment holding a sequence number is found by division, in O(1);
//! - SACKed ranges live in an interval map; an incoming block only walks the segments it newly
//!   covers, so each segment is marked SACKed at most once;
//! - loss marking (RFC 6675 `IsLost`, by bytes: more than (DupThresh − 1)·SMSS SACKed above) moves
//!   a boundary `lost_upto` that only grows, found from the top of the interval map;
//! - the next segment to retransmit is found by a cursor that only moves forward until an RTO or
//!   a new recovery resets it;
//! - the byte counters behind `pipe` are updated as flags change, never recomputed.
//!
//! An RTO (the only O(window) operation, and rare) marks everything not SACKed as lost. SACK
//! information is kept across an RTO, as Linux does, rather than expunged as RFC 6675 §5.1
//! allows: a ccsim receiver reports only data it holds (never data it dropped for lack of
//! buffer) and never discards held data, so a kept mark cannot hide a hole. Should a receiver
//! renege all the same, the sender sees it (an ACK that stops at a segment it holds as SACKed,
//! [`Scoreboard::receiver_reneged`]) and forgets every SACK mark ([`Scoreboard::forget_sacks`]),
//! so the hole is resent instead of waited for.
//!
//! Retransmission candidates follow RFC 6675 §4 NextSeg: rule (1), lost segments, comes from
//! [`Scoreboard::next_retransmission`]; rule (3), un-SACKed segments below the highest SACKed
//! byte that are not yet deemed lost, from [`Scoreboard::next_unsacked_below_highest_sack`]; rule
//! (4), the rescue retransmission of the highest un-SACKed segment, from
//! [`Scoreboard::rescue_candidate`]. Rule (2), new data, is the sender's.

use std::collections::{BTreeMap, VecDeque};

use crate::time::{SimDuration, SimTime};

const SACKED: u8 = 1;
const LOST: u8 = 2;
/// A retransmission of this segment is in flight (cleared by an RTO).
const RETX: u8 = 4;
/// The segment has been retransmitted at least once: no RTT sample from an ACK that covers it
/// (Karn's rule).
const EVER_RETX: u8 = 8;
/// Sent before an RTO: gives no RTT sample itself (its ACK may answer a later copy).
const NO_SAMPLE: u8 = 16;

#[derive(Clone, Copy, Debug)]
struct Seg {
    start: u64,
    len: u32,
    flags: u8,
    sent_at: SimTime,
}

impl Seg {
    fn end(&self) -> u64 {
        self.start + self.len as u64
    }
}

/// What a cumulative ACK did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CumAck {
    /// Bytes newly acknowledged.
    pub bytes_acked: u64,
    /// Of those, the bytes the receiver had already SACKed: delivered before this ACK.
    pub previously_sacked: u64,
    /// Send time of the last segment this ACK completed, if it is a valid RTT sample (never
    /// retransmitted, not SACKed before: Karn's rule, RFC 6298 §3).
    pub sample_sent_at: Option<SimTime>,
}

/// A segment that an ACK newly delivers, as the scoreboard tells a [`DeliveryHook`]: its
/// bounds, its last transmission's time and flags, and how it was delivered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Delivered {
    pub start: u64,
    pub end: u64,
    /// When it was last sent (its retransmission's time if it was resent).
    pub sent_at: SimTime,
    /// It was retransmitted at least once.
    pub ever_retx: bool,
    /// A SACK block delivered it; else the cumulative ACK did (a segment SACKed before is not
    /// delivered again when the cumulative ACK passes it).
    pub by_sack: bool,
}

impl Delivered {
    fn of(s: &Seg, by_sack: bool) -> Self {
        Delivered {
            start: s.start,
            end: s.end(),
            sent_at: s.sent_at,
            ever_retx: s.flags & EVER_RETX != 0,
            by_sack,
        }
    }
}

/// Who hears of each segment an ACK newly delivers, as the scoreboard's walk of the ACK meets
/// it, so that no listener walks the window again: RACK's [`Delivery`] (RFC 8985 §6.2 needs
/// each segment's send time and whether it was resent) and the delivery-rate sampler
/// (`tcp/rate.rs`: each newly SACKed segment's own record). A pair serves two listeners.
///
/// The hook is a type parameter, not a pointer: the plain calls ([`Scoreboard::on_sack_block`],
/// [`Scoreboard::on_cumulative_ack`]) pass `()`, whose empty method compiles away, and a
/// sender with one listener pays nothing for the other.
pub trait DeliveryHook {
    fn delivered(&mut self, seg: Delivered);
}

/// No listener: plain SACK and cumulative processing.
impl DeliveryHook for () {
    #[inline(always)]
    fn delivered(&mut self, _: Delivered) {}
}

impl<H: DeliveryHook + ?Sized> DeliveryHook for &mut H {
    #[inline(always)]
    fn delivered(&mut self, seg: Delivered) {
        (**self).delivered(seg);
    }
}

/// Two listeners, told in order.
impl<A: DeliveryHook, B: DeliveryHook> DeliveryHook for (A, B) {
    #[inline(always)]
    fn delivered(&mut self, seg: Delivered) {
        self.0.delivered(seg);
        self.1.delivered(seg);
    }
}

/// What RACK needs to hear of the segments one ACK newly delivers, cumulatively or selectively
/// (RFC 8985 §6.2 steps 2 and 3), gathered as the scoreboard walks them so that RACK walks
/// nothing itself. The sender fills in `retx_bound` before the ACK and reads the rest after.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Delivery {
    /// A retransmitted segment tells RACK nothing unless its last transmission was sent at or
    /// before this: `now − min_RTT` (a faster ACK answers an earlier copy) and, with
    /// timestamps, the send time the ACK's echo names (step 2's two checks).
    pub retx_bound: SimTime,
    /// The most recently sent segment delivered that passed those checks: (xmit_ts, end_seq),
    /// or `(SimTime::ZERO, 0)` for none.
    pub newest: (SimTime, u64),
    /// The lowest end of a never-retransmitted segment delivered (`u64::MAX`: none), and the
    /// highest end of any: step 3 compares the first with RACK.fack before the ACK.
    pub lowest_original_end: u64,
    pub highest_end: u64,
}

impl Delivery {
    /// Ready for the next ACK, with its bound for retransmitted segments.
    pub fn start(retx_bound: SimTime) -> Self {
        Delivery {
            retx_bound,
            newest: (SimTime::ZERO, 0),
            lowest_original_end: u64::MAX,
            highest_end: 0,
        }
    }
}

/// RACK hears of every segment newly delivered, cumulatively or selectively alike.
impl DeliveryHook for Delivery {
    #[inline]
    fn delivered(&mut self, s: Delivered) {
        let end = s.end;
        self.highest_end = self.highest_end.max(end);
        if !s.ever_retx {
            self.lowest_original_end = self.lowest_original_end.min(end);
        } else if s.sent_at > self.retx_bound {
            return;
        }
        if sent_after((s.sent_at, end), self.newest) {
            self.newest = (s.sent_at, end);
        }
    }
}

/// RFC 8985 §6.2's RACK_sent_after: `a` was sent after `b`, (xmit_ts, end_seq) each, the end
/// breaking a tie of times.
pub fn sent_after(a: (SimTime, u64), b: (SimTime, u64)) -> bool {
    a.0 > b.0 || (a.0 == b.0 && a.1 > b.1)
}

/// What one pass of RACK's loss detection found (RFC 8985 §6.2 step 5).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RackScan {
    /// Segments newly marked lost.
    pub marked: u32,
    /// The longest a segment sent before RACK.segment still has to wait before it is deemed
    /// lost: the reordering timer's delay (None: nothing waits).
    pub wait: Option<SimDuration>,
}

// Layout: `repr(C)` keeps the declared order, so that what every ACK reads and writes is the
// first two 64-byte lines (the TCP sender places the scoreboard at a line's start,
// `tcp/sender.rs` "Layout"):
//
//   line 0  snd_una snd_max segs sacked_bytes lost_bytes          every ACK and send: pipe
//   line 1  retx_bytes lost_upto rxt_next rule3_next sacked mss   every ACK: the cursors
//   line 2+ recent, scratch                                       an ACK with SACK blocks
#[repr(C)]
#[derive(Clone, Debug)]
pub struct Scoreboard {
    snd_una: u64,
    snd_max: u64,
    segs: VecDeque<Seg>,
    sacked_bytes: u64,
    /// Bytes of segments marked lost and not SACKed (partially acked front counted exactly).
    lost_bytes: u64,
    /// Bytes of retransmissions in flight (lost segments retransmitted, not SACKed).
    retx_bytes: u64,
    /// Every un-SACKed byte below this is marked lost.
    lost_upto: u64,
    /// No lost, un-retransmitted segment starts below this (the retransmission cursor).
    rxt_next: u64,
    /// NextSeg rule (3)'s cursor: no un-SACKed, un-retransmitted segment below it qualifies.
    /// Reset at the start of each recovery.
    rule3_next: u64,
    /// SACKed ranges above SND.UNA, disjoint and non-adjacent: start -> end.
    sacked: BTreeMap<u64, u64>,
    mss: u64,
    /// The SACKed ranges the last blocks ended up in, most recent last (`(0, 0)`: none). Every
    /// byte of them at or above SND.UNA is SACKed in `sacked` (the map only loses what a
    /// cumulative ACK covers, until `forget_sacks` clears both), so a block inside one of them
    /// brings nothing new and needs no walk of the map: a receiver repeats its recent blocks in
    /// every ACK (RFC 2018 §4), and a long path in recovery may hold many ranges.
    recent: [(u64, u64); RECENT_RANGES],
    /// Scratch space for `on_sack_block`, kept to avoid an allocation per ACK.
    scratch: Vec<(u64, u64)>,
}

const _: () = {
    use std::mem::offset_of;
    assert!(offset_of!(Scoreboard, lost_bytes) == 56);
    assert!(offset_of!(Scoreboard, mss) == 120);
    assert!(std::mem::size_of::<Scoreboard>() == 216);
};

/// How many of the latest ranges [`Scoreboard`] remembers: the blocks an ACK carries (RFC 2018
/// §3: at most 4 with timestamps off).
const RECENT_RANGES: usize = 4;

impl Scoreboard {
    pub fn new(mss: u32) -> Self {
        Scoreboard {
            segs: VecDeque::new(),
            mss: mss.max(1) as u64,
            snd_una: 0,
            snd_max: 0,
            sacked: BTreeMap::new(),
            sacked_bytes: 0,
            lost_bytes: 0,
            retx_bytes: 0,
            lost_upto: 0,
            rxt_next: 0,
            rule3_next: 0,
            scratch: Vec::new(),
            recent: [(0, 0); RECENT_RANGES],
        }
    }

    pub fn snd_una(&self) -> u64 {
        self.snd_una
    }
    pub fn snd_max(&self) -> u64 {
        self.snd_max
    }
    /// FlightSize of RFC 5681: SND.MAX − SND.UNA.
    pub fn flight_size(&self) -> u64 {
        self.snd_max - self.snd_una
    }
    /// RFC 6675 `pipe`: the sender's estimate of bytes in the network.
    pub fn pipe(&self) -> u64 {
        (self.flight_size() + self.retx_bytes).saturating_sub(self.sacked_bytes + self.lost_bytes)
    }
    pub fn sacked_bytes(&self) -> u64 {
        self.sacked_bytes
    }
    pub fn lost_bytes(&self) -> u64 {
        self.lost_bytes
    }
    /// True if some un-SACKed data at SND.UNA is marked lost (SACK-based loss detection).
    pub fn front_is_lost(&self) -> bool {
        self.lost_upto > self.snd_una && self.segs.front().is_some_and(|s| s.flags & LOST != 0)
    }
    pub fn segments_in_flight(&self) -> usize {
        self.segs.len()
    }

    /// Index of the segment holding byte `seq` (which must be in [SND.UNA, SND.MAX)).
    ///
    /// O(1) when the segments before it are all one MSS (a bulk sender), checked, with a binary
    /// search when they are not (an application that hands data over in pieces, such as an
    /// I-TCP relay, sends shorter segments in the middle of the window).
    fn index_of(&self, seq: u64) -> usize {
        let base = self.segs.front().map_or(seq, |s| s.start);
        let guess = ((seq.saturating_sub(base)) / self.mss) as usize;
        if let Some(s) = self.segs.get(guess) {
            if s.start <= seq && seq < s.end() {
                return guess;
            }
        }
        self.segs.partition_point(|s| s.end() <= seq)
    }

    /// Bytes of `s` not yet cumulatively acknowledged.
    fn live_len(&self, s: &Seg) -> u64 {
        s.end() - s.start.max(self.snd_una)
    }

    /// A new segment `[snd_max, snd_max + len)` was sent. `len` must be one MSS except for the
    /// last segment of a transfer.
    pub fn on_send(&mut self, len: u32, now: SimTime) {
        debug_assert!(len as u64 <= self.mss);
        self.segs.push_back(Seg {
            start: self.snd_max,
            len,
            flags: 0,
            sent_at: now,
        });
        self.snd_max += len as u64;
    }

    /// The next segment that is lost, not SACKed and not yet retransmitted: `(seq, len)` of its
    /// unacknowledged part. Moves the cursor over segments that do not qualify.
    // The test is inlined into the send loop, which asks on every ACK and almost always hears
    // "none" (nothing marked lost): the call alone cost more than the answer.
    #[inline]
    pub fn next_retransmission(&mut self) -> Option<(u64, u32)> {
        let at = self.rxt_next.max(self.snd_una);
        if at >= self.lost_upto || at >= self.snd_max {
            return None;
        }
        self.next_lost_from(at)
    }

    /// The walk of [`Scoreboard::next_retransmission`] from `at`, below `lost_upto`.
    #[inline(never)]
    fn next_lost_from(&mut self, at: u64) -> Option<(u64, u32)> {
        let mut i = self.index_of(at);
        while let Some(&s) = self.segs.get(i) {
            if s.start >= self.lost_upto {
                break;
            }
            if s.flags & (LOST | RETX | SACKED) == LOST {
                let from = s.start.max(self.snd_una);
                self.rxt_next = from;
                return Some((from, (s.end() - from) as u32));
            }
            self.rxt_next = s.end();
            i += 1;
        }
        None
    }

    /// The segment starting at (or holding) `seq` was retransmitted now.
    pub fn on_retransmit(&mut self, seq: u64, now: SimTime) {
        let i = self.index_of(seq);
        let live = self.live_len(&self.segs[i]);
        let s = &mut self.segs[i];
        if s.flags & RETX == 0 && s.flags & SACKED == 0 {
            self.retx_bytes += live;
        }
        s.flags |= RETX | EVER_RETX;
        s.sent_at = now;
        // Only a rule (1) retransmission moves rule (1)'s cursor: a segment resent by rule (3)
        // or (4) lies above data that may yet be deemed lost and must not be skipped then.
        if s.flags & LOST != 0 {
            self.rxt_next = self.rxt_next.max(s.end());
        }
    }

    /// Mark the segment at SND.UNA lost (fast retransmit, NewReno partial ACK) so that it is
    /// retransmitted next.
    /// The segment at SND.UNA is unSACKed and a retransmission of it is in flight.
    pub fn front_is_retransmitted(&self) -> bool {
        self.segs
            .front()
            .is_some_and(|s| s.flags & (RETX | SACKED) == RETX)
    }

    /// The segment at SND.UNA (its live part), if anything is outstanding.
    pub fn front_segment(&self) -> Option<(u64, u32)> {
        self.segs
            .front()
            .map(|s| (self.snd_una, self.live_len(s) as u32))
    }

    pub fn mark_front_lost(&mut self) {
        if let Some(s) = self.segs.front().copied() {
            if s.flags & (LOST | SACKED) == 0 {
                self.lost_bytes += self.live_len(&s);
                self.segs[0].flags |= LOST;
            }
            // A fresh recovery may resend a segment whose earlier retransmission was lost.
            if self.segs[0].flags & (RETX | SACKED) == RETX {
                self.retx_bytes -= self.live_len(&s);
                self.segs[0].flags &= !RETX;
            }
            self.lost_upto = self.lost_upto.max(s.end());
            self.rxt_next = self.snd_una;
        }
    }

    /// RTO: every segment not SACKed is lost and no retransmission is in flight any more.
    /// No segment sent before the timeout may give an RTT sample afterwards: its ACK may answer
    /// a later copy, and even when it does not, the sample would include the timeout (BSD clears
    /// its timed segment on an RTO; Karn's rule, RFC 6298 §3).
    pub fn mark_all_lost(&mut self) {
        let una = self.snd_una;
        let mut lost = 0;
        for s in self.segs.iter_mut() {
            s.flags &= !RETX;
            s.flags |= NO_SAMPLE;
            if s.flags & SACKED == 0 {
                s.flags |= LOST;
                lost += s.end() - s.start.max(una);
            }
        }
        self.lost_bytes = lost;
        self.retx_bytes = 0;
        self.lost_upto = self.snd_max;
        self.rxt_next = self.snd_una;
    }

    /// Process a cumulative ACK (ignored unless it advances SND.UNA within what was sent).
    ///
    /// The RTT sample is the send time of the last segment the ACK completes, taken only if no
    /// segment the ACK covers was ever retransmitted (Karn's rule, RFC 6298 §3): after a fast
    /// retransmit, the ACK that the retransmission releases also covers segments sent a whole
    /// RTT before it, and timing those would count the recovery in the RTT.
    pub fn on_cumulative_ack(&mut self, ack: u64) -> CumAck {
        self.on_cumulative_ack_with(ack, &mut ())
    }

    /// [`Scoreboard::on_cumulative_ack`], telling `hook` of every segment it newly delivers
    /// (those SACKed before were delivered then).
    pub fn on_cumulative_ack_with(&mut self, ack: u64, hook: &mut impl DeliveryHook) -> CumAck {
        let ack = ack.min(self.snd_max);
        if ack <= self.snd_una {
            return CumAck::default();
        }
        let mut out = CumAck {
            bytes_acked: ack - self.snd_una,
            previously_sacked: 0,
            sample_sent_at: None,
        };
        let sacked_before = self.sacked_bytes;
        let mut ambiguous = false;
        while let Some(s) = self.segs.front().copied() {
            let live_before = self.live_len(&s);
            ambiguous |= s.flags & EVER_RETX != 0;
            if s.end() <= ack {
                if s.flags & SACKED == 0 {
                    hook.delivered(Delivered::of(&s, false));
                }
                self.forget_flags(&s, live_before);
                out.sample_sent_at = if ambiguous || s.flags & (SACKED | NO_SAMPLE) != 0 {
                    None
                } else {
                    Some(s.sent_at)
                };
                self.segs.pop_front();
            } else {
                // Partially acknowledged (an ACK splitter, or a short retransmission).
                if s.start < ack {
                    let gone = live_before - (s.end() - ack);
                    self.forget_flags(&s, gone);
                    if ambiguous {
                        out.sample_sent_at = None;
                    }
                }
                break;
            }
        }
        self.snd_una = ack;
        // SACK ranges below the new SND.UNA are now covered by the cumulative ACK.
        while let Some((&l, &r)) = self.sacked.first_key_value() {
            if l >= ack {
                break;
            }
            self.sacked.remove(&l);
            if r > ack {
                self.sacked_bytes -= ack - l;
                self.sacked.insert(ack, r);
                break;
            }
            self.sacked_bytes -= r - l;
        }
        out.previously_sacked = sacked_before - self.sacked_bytes;
        self.lost_upto = self.lost_upto.max(ack);
        self.rxt_next = self.rxt_next.max(ack);
        self.rule3_next = self.rule3_next.max(ack);
        out
    }

    /// True if the segment at SND.UNA is held as SACKed: the receiver reported it and then sent a
    /// cumulative ACK that stops short of it, so it has discarded data it had SACKed (reneging,
    /// RFC 2018 §8). Check after the cumulative ACK and SACK blocks of an ACK are processed.
    pub fn receiver_reneged(&self) -> bool {
        self.segs.front().is_some_and(|s| s.flags & SACKED != 0)
    }

    /// Forget every SACK mark (after reneging): the data is outstanding again, lost if it was
    /// marked lost, in flight otherwise. O(window); reneging is rare.
    pub fn forget_sacks(&mut self) {
        let una = self.snd_una;
        for s in self.segs.iter_mut() {
            if s.flags & SACKED != 0 {
                s.flags &= !SACKED;
                let live = s.end() - s.start.max(una);
                if s.flags & LOST != 0 {
                    self.lost_bytes += live;
                }
                if s.flags & RETX != 0 {
                    self.retx_bytes += live;
                }
            }
        }
        self.sacked.clear();
        self.recent = [(0, 0); RECENT_RANGES];
        self.sacked_bytes = 0;
        self.rxt_next = una;
        self.rule3_next = una;
    }

    /// A new loss recovery begins: NextSeg rule (3) looks again from SND.UNA.
    pub fn start_recovery(&mut self) {
        self.rule3_next = self.snd_una;
    }

    /// The highest byte any SACK block covers, plus one (0 without SACK information).
    fn highest_sacked(&self) -> u64 {
        self.sacked.last_key_value().map_or(0, |(_, &r)| r)
    }

    /// RFC 6675 NextSeg rule (3): the first segment not SACKed, not deemed lost, not yet
    /// retransmitted and below the highest SACKed byte: `(seq, len)` of its unacknowledged
    /// part. Segments deemed lost are rule (1)'s; un-SACKed segments below `lost_upto` are all
    /// deemed lost, so the walk starts above the segments rule (1) handles. The cursor only
    /// moves forward within a recovery.
    pub fn next_unsacked_below_highest_sack(&mut self) -> Option<(u64, u32)> {
        let top = self.highest_sacked();
        let at = self.rule3_next.max(self.snd_una);
        if at >= top || at >= self.snd_max {
            return None;
        }
        let mut i = self.index_of(at);
        while let Some(&s) = self.segs.get(i) {
            if s.start >= top {
                break;
            }
            if s.flags & (SACKED | LOST | RETX) == 0 {
                let from = s.start.max(self.snd_una);
                self.rule3_next = from;
                return Some((from, (s.end() - from) as u32));
            }
            self.rule3_next = s.end();
            i += 1;
        }
        None
    }

    /// RFC 6675 NextSeg rule (4): the segment holding the highest un-SACKed byte, if it is not
    /// already being retransmitted. The caller allows one such rescue retransmission per
    /// recovery.
    pub fn rescue_candidate(&self) -> Option<(u64, u32)> {
        let s = self.segs.iter().rev().find(|s| s.flags & SACKED == 0)?;
        if s.flags & RETX != 0 {
            return None;
        }
        let from = s.start.max(self.snd_una);
        Some((from, (s.end() - from) as u32))
    }

    /// Remove `bytes` of segment `s` from the lost / retransmitted counters.
    fn forget_flags(&mut self, s: &Seg, bytes: u64) {
        if s.flags & SACKED != 0 {
            return;
        }
        if s.flags & LOST != 0 {
            self.lost_bytes -= bytes;
        }
        if s.flags & RETX != 0 {
            self.retx_bytes -= bytes;
        }
    }

    /// Process one SACK block `[left, right)` (RFC 2018). Only whole segments count; the rest of
    /// the block is ignored. Returns the bytes newly SACKed.
    pub fn on_sack_block(&mut self, left: u64, right: u64) -> u64 {
        self.on_sack_block_with(left, right, &mut ())
    }

    /// Every SACK block of one ACK in order, as [`Scoreboard::on_sack_block_with`]: the bytes
    /// newly SACKed.
    pub fn on_sack_blocks(
        &mut self,
        blocks: impl Iterator<Item = (u64, u64)>,
        hook: &mut impl DeliveryHook,
    ) -> u64 {
        let mut newly = 0;
        for (l, r) in blocks {
            newly += self.on_sack_block_with(l, r, &mut *hook);
        }
        newly
    }

    /// [`Scoreboard::on_sack_block`], telling `hook` of every segment it newly SACKs.
    pub fn on_sack_block_with(
        &mut self,
        left: u64,
        right: u64,
        hook: &mut impl DeliveryHook,
    ) -> u64 {
        let left = left.max(self.snd_una);
        let right = right.min(self.snd_max);
        if left >= right || self.segs.is_empty() {
            return 0;
        }
        // Round inwards to segment boundaries.
        let i0 = self.index_of(left);
        let left = if self.segs[i0].start.max(self.snd_una) < left {
            self.segs[i0].end()
        } else {
            self.segs[i0].start.max(self.snd_una)
        };
        let i1 = self.index_of(right - 1);
        let right = if self.segs[i1].end() > right {
            self.segs[i1].start
        } else {
            self.segs[i1].end()
        };
        if left >= right {
            return 0;
        }
        if self.recent.iter().any(|&(l, r)| l <= left && right <= r) {
            return 0; // a repeated block
        }
        // A block at the top (new data arriving above the holes, the usual first block): it
        // grows the highest range or starts a new one above it, and no other range can merge.
        // The map's last entry is reached down its right edge, without comparing keys.
        // (start of the range the block ends up in, first byte newly SACKed)
        let mut at_top = None;
        if let Some(mut top) = self.sacked.last_entry() {
            let (l, r) = (*top.key(), *top.get());
            if r < left {
                at_top = Some((left, left)); // a new range above the top one
            } else if l <= left && r < right {
                *top.get_mut() = right; // the top range grows
                at_top = Some((l, r));
            }
        }
        if let Some((l, from)) = at_top {
            if l == left && from == left {
                self.sacked.insert(left, right);
            }
            self.remember(l, right);
            let new_bytes = right - from;
            self.sacked_bytes += new_bytes;
            self.mark_sacked_range(from, right, hook);
            return new_bytes;
        }
        // Merge with existing ranges that overlap or touch [left, right); collect the gaps of
        // [left, right) they did not already cover.
        let mut lo = left;
        let mut hi = right;
        let mut covered: u64 = 0;
        // Reuse one buffer: this runs on every SACK-carrying ACK.
        let mut olds = std::mem::take(&mut self.scratch);
        olds.clear();
        for (&l, &r) in self.sacked.range(..=right).rev() {
            if r < left {
                break;
            }
            olds.push((l, r));
        }
        // The usual blocks touch one known range: a repeat of a block already held (a receiver
        // repeats its most recent blocks in every ACK, RFC 2018 §4) or the first block grown by
        // the segment just received. Then that range keeps its start (the map's key) and is
        // only widened in place; otherwise the ranges merge into one new entry. The map holds
        // the same ranges either way, with one tree walk instead of a removal and an insertion.
        if let [(l, r)] = olds[..] {
            if l <= left {
                if r >= right {
                    self.scratch = olds;
                    self.remember(l, r);
                    return 0; // every byte already SACKed
                }
                if let Some(end) = self.sacked.get_mut(&l) {
                    *end = right;
                }
                self.remember(l, right);
                let new_bytes = right - r.max(left);
                self.sacked_bytes += new_bytes;
                self.mark_sacked_range(r.max(left), right, hook);
                self.scratch = olds;
                return new_bytes;
            }
        }
        for &(l, r) in &olds {
            lo = lo.min(l);
            hi = hi.max(r);
            covered += r.min(right).saturating_sub(l.max(left));
            self.sacked.remove(&l);
        }
        self.sacked.insert(lo, hi);
        self.remember(lo, hi);
        let new_bytes = (right - left) - covered;
        self.sacked_bytes += new_bytes;
        if new_bytes > 0 {
            // Walk only the parts of [left, right) not covered before (olds is high to low).
            let mut cursor = left;
            for &(l, r) in olds.iter().rev().chain(std::iter::once(&(right, right))) {
                let gap_end = l.min(right);
                if cursor < gap_end {
                    self.mark_sacked_range(cursor, gap_end, &mut *hook);
                }
                cursor = cursor.max(r);
                if cursor >= right {
                    break;
                }
            }
        }
        self.scratch = olds;
        new_bytes
    }

    /// `[l, r)` is now one range of `sacked`: remember it as the most recent (a range it grew
    /// from stays valid: it is SACKed still).
    fn remember(&mut self, l: u64, r: u64) {
        self.recent.rotate_left(1);
        self.recent[RECENT_RANGES - 1] = (l, r);
    }

    fn mark_sacked_range(&mut self, from: u64, to: u64, hook: &mut impl DeliveryHook) {
        let mut i = self.index_of(from);
        while i < self.segs.len() && self.segs[i].start < to {
            let s = self.segs[i];
            if s.flags & SACKED == 0 {
                hook.delivered(Delivered::of(&s, true));
                let live = self.live_len(&s);
                if s.flags & LOST != 0 {
                    self.lost_bytes -= live;
                }
                if s.flags & RETX != 0 {
                    self.retx_bytes -= live;
                }
                self.segs[i].flags |= SACKED;
            }
            i += 1;
        }
    }

    /// RFC 6675 `IsLost` by bytes: un-SACKed data with more than (DupThresh − 1)·SMSS SACKed
    /// bytes above it is lost. Call after a batch of SACK blocks.
    pub fn update_lost(&mut self, dupthresh: u32) {
        let threshold = (dupthresh.saturating_sub(1)) as u64 * self.mss;
        let mut above = 0;
        let mut boundary = None;
        for (&l, &r) in self.sacked.iter().rev() {
            if r <= self.lost_upto {
                break;
            }
            above += r - l;
            if above > threshold {
                boundary = Some(l);
                break;
            }
        }
        let Some(b) = boundary else { return };
        if b <= self.lost_upto {
            return;
        }
        let mut i = self.index_of(self.lost_upto.max(self.snd_una));
        while let Some(&s) = self.segs.get(i) {
            if s.start >= b {
                break;
            }
            if s.flags & (SACKED | LOST) == 0 {
                self.lost_bytes += self.live_len(&s);
                self.segs[i].flags |= LOST;
            }
            i += 1;
        }
        self.lost_upto = b;
    }

    /// RFC 8985 §6.2 step 5, RACK_detect_loss: every segment not yet delivered that was sent
    /// before RACK.segment (`rack`: its xmit_ts and end_seq) is lost once `settle` (RACK.rtt +
    /// RACK.reo_wnd) has passed since its last transmission; the others sent before it wait, and
    /// the longest wait is the reordering timer's. A lost retransmission is found the same way
    /// (its xmit_ts is the retransmission's): it is marked lost again and leaves the pipe.
    ///
    /// The RFC's trick of setting a lost segment's xmit_ts to infinity, so that it is not
    /// marked twice, is the flag here: a segment marked lost and not yet resent is skipped. The
    /// walk stops at the first never-retransmitted segment sent after RACK.segment: every later
    /// segment was sent later still (originals go out in sequence order, a retransmission after
    /// its original), so without reordering or losses it looks at one segment.
    pub fn rack_detect_loss(
        &mut self,
        rack: (SimTime, u64),
        settle: SimDuration,
        now: SimTime,
    ) -> RackScan {
        let mut scan = RackScan::default();
        let mut i = 0;
        while let Some(&s) = self.segs.get(i) {
            i += 1;
            if s.flags & SACKED != 0 || s.flags & (LOST | RETX) == LOST {
                continue;
            }
            if !sent_after(rack, (s.sent_at, s.end())) {
                if s.flags & EVER_RETX == 0 {
                    break;
                }
                continue;
            }
            let deadline = s.sent_at + settle;
            if deadline <= now {
                self.mark_lost_at(i - 1);
                scan.marked += 1;
            } else {
                let wait = deadline.saturating_since(now);
                scan.wait = Some(scan.wait.map_or(wait, |w: SimDuration| w.max(wait)));
            }
        }
        scan
    }

    /// Mark segment `i` lost (RACK): counted lost, its retransmission (if one was in flight)
    /// no longer counted in the pipe, and the retransmission cursor back at it.
    fn mark_lost_at(&mut self, i: usize) {
        let s = self.segs[i];
        let live = self.live_len(&s);
        if s.flags & LOST == 0 {
            self.lost_bytes += live;
        }
        if s.flags & RETX != 0 {
            self.retx_bytes -= live;
        }
        self.segs[i].flags = (s.flags | LOST) & !RETX;
        self.lost_upto = self.lost_upto.max(s.end());
        self.rxt_next = self.rxt_next.min(s.start.max(self.snd_una));
    }

    /// The highest-sequence segment sent so far (its live part), for TLP's probe when no new
    /// data can go (RFC 8985 §7.3).
    pub fn last_segment(&self) -> Option<(u64, u32)> {
        let s = self.segs.back()?;
        let from = s.start.max(self.snd_una);
        Some((from, (s.end() - from) as u32))
    }

    /// Consistency check for tests: counters equal a full recount.
    #[cfg(test)]
    fn check(&self) {
        let mut lost = 0;
        let mut retx = 0;
        for s in &self.segs {
            if s.flags & SACKED == 0 {
                if s.flags & LOST != 0 {
                    lost += self.live_len(s);
                }
                if s.flags & RETX != 0 {
                    retx += self.live_len(s);
                }
            }
        }
        assert_eq!(lost, self.lost_bytes, "lost bytes");
        assert_eq!(retx, self.retx_bytes, "retx bytes");
        let sacked: u64 = self.sacked.iter().map(|(l, r)| r - l).sum();
        assert_eq!(sacked, self.sacked_bytes, "sacked bytes");
        let by_flag: u64 = self
            .segs
            .iter()
            .filter(|s| s.flags & SACKED != 0)
            .map(|s| self.live_len(s))
            .sum();
        assert_eq!(by_flag, self.sacked_bytes, "sacked flags vs ranges");
        let mut prev_end = None;
        for (&l, &r) in &self.sacked {
            assert!(self.snd_una <= l && l < r, "range {l}..{r} above SND.UNA");
            assert!(
                prev_end.is_none_or(|e| e < l),
                "ranges disjoint, not adjacent"
            );
            prev_end = Some(r);
        }
        for &(l, r) in &self.recent {
            let l = l.max(self.snd_una);
            if l < r {
                let held = self.sacked.range(..=l).next_back();
                assert!(held.is_some_and(|(_, &e)| e >= r), "recent {l}..{r} SACKed");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const MSS: u32 = 100;

    fn board(n: u32) -> Scoreboard {
        let mut b = Scoreboard::new(MSS);
        for _ in 0..n {
            b.on_send(MSS, SimTime::ZERO);
        }
        b
    }

    #[test]
    fn three_sacked_segments_above_a_hole_mark_it_lost() {
        let mut b = board(10);
        // Segment 0 lost; 1, 2 SACKed: not yet lost (2·MSS is not more than 2·MSS).
        b.on_sack_block(100, 300);
        b.update_lost(3);
        assert!(!b.front_is_lost());
        b.on_sack_block(100, 400);
        b.update_lost(3);
        assert!(b.front_is_lost());
        assert_eq!(b.lost_bytes(), 100);
        assert_eq!(b.sacked_bytes(), 300);
        // pipe = 1000 − 300 SACKed − 100 lost.
        assert_eq!(b.pipe(), 600);
        b.check();
    }

    /// A listener that writes down what it hears.
    #[derive(Default)]
    struct Heard(Vec<(u64, u64, bool)>);

    impl DeliveryHook for Heard {
        fn delivered(&mut self, d: Delivered) {
            self.0.push((d.start, d.end, d.by_sack));
        }
    }

    #[test]
    fn each_listener_of_a_pair_hears_every_newly_delivered_segment_once_and_in_order() {
        // Ten segments sent 1 ms apart; segment 4 is resent at 20 ms.
        let mut b = Scoreboard::new(MSS);
        for i in 0..10 {
            b.on_send(MSS, SimTime(i * 1_000_000));
        }
        b.on_retransmit(400, SimTime(20_000_000));
        let mut rack = Delivery::start(SimTime(15_000_000));
        let mut heard = Heard::default();
        // SACK 2..4, then 1..6 (2..4 again: only 1, 4 and 5 are new), then a repeat.
        let blocks = [(200, 400), (100, 600), (100, 600)];
        let newly = b.on_sack_blocks(blocks.into_iter(), &mut (&mut rack, &mut heard));
        assert_eq!(newly, 500);
        let sacked = [(200, 300), (300, 400), (100, 200), (400, 500), (500, 600)];
        let expect: Vec<_> = sacked.iter().map(|&(l, r)| (l, r, true)).collect();
        assert_eq!(heard.0, expect);
        // The cumulative ACK to 700 newly delivers 0 and 6 only: 1..5 were SACKed before.
        b.on_cumulative_ack_with(700, &mut (&mut rack, &mut heard));
        assert_eq!(heard.0[5..], [(0, 100, false), (600, 700, false)]);
        // RACK heard the same: segment 6 (sent at 6 ms) is the newest; segment 4's resend (20
        // ms) is past the bound and tells it nothing but the ends.
        assert_eq!(rack.newest, (SimTime(6_000_000), 700));
        assert_eq!((rack.lowest_original_end, rack.highest_end), (100, 700));
        b.check();
        // Without a listener (`()`, the plain calls) the same blocks count the same.
        let mut c = Scoreboard::new(MSS);
        for i in 0..10 {
            c.on_send(MSS, SimTime(i * 1_000_000));
        }
        assert_eq!(c.on_sack_blocks(blocks.into_iter(), &mut ()), 500);
        assert_eq!(c.on_sack_block(100, 600), 0);
        c.check();
    }

    #[test]
    fn a_retransmission_counts_in_pipe_until_acknowledged() {
        let mut b = board(10);
        b.on_sack_block(100, 400);
        b.update_lost(3);
        assert_eq!(b.next_retransmission(), Some((0, 100)));
        b.on_retransmit(0, SimTime::from_millis(1));
        assert_eq!(b.pipe(), 700);
        assert_eq!(b.next_retransmission(), None);
        let a = b.on_cumulative_ack(400);
        assert_eq!(a.bytes_acked, 400);
        assert_eq!(
            a.sample_sent_at, None,
            "Karn: SACKed segment completes the ACK"
        );
        assert_eq!(b.pipe(), 600);
        b.check();
    }

    #[test]
    fn repeated_sack_blocks_do_not_count_twice() {
        let mut b = board(10);
        assert_eq!(b.on_sack_block(200, 400), 200);
        assert_eq!(b.on_sack_block(200, 400), 0);
        assert_eq!(b.on_sack_block(200, 500), 100);
        assert_eq!(b.on_sack_block(600, 700), 100);
        assert_eq!(b.on_sack_block(300, 800), 200);
        assert_eq!(b.sacked_bytes(), 600);
        b.check();
    }

    #[test]
    fn blocks_that_grow_the_top_range_start_one_above_it_or_repeat_one_keep_the_same_ranges() {
        // The shortcuts of `on_sack_block` (a repeated block, a block at the top) against the
        // ranges one would write down by hand, after every block.
        /// (the block, the bytes it newly SACKs, the ranges held after it)
        type Step = ((u64, u64), u64, &'static [(u64, u64)]);
        let mut b = board(20);
        let steps: [Step; 9] = [
            ((300, 400), 100, &[(300, 400)]),             // the first range
            ((300, 500), 100, &[(300, 500)]),             // grows at the top
            ((500, 600), 100, &[(300, 600)]),             // touches the top: grows
            ((800, 900), 100, &[(300, 600), (800, 900)]), // a new range above
            ((300, 600), 0, &[(300, 600), (800, 900)]),   // repeated
            ((350, 450), 0, &[(300, 600), (800, 900)]),   // inside one (rounds to 400..400)
            ((100, 200), 100, &[(100, 200), (300, 600), (800, 900)]), // below them all
            ((200, 300), 100, &[(100, 600), (800, 900)]), // fills a hole: merges
            ((550, 1000), 300, &[(100, 1000)]),           // spans the rest
        ];
        for ((l, r), new, ranges) in steps {
            assert_eq!(b.on_sack_block(l, r), new, "block {l}..{r}");
            let held: Vec<(u64, u64)> = b.sacked.iter().map(|(&l, &r)| (l, r)).collect();
            assert_eq!(held, ranges, "after {l}..{r}");
            b.check();
        }
        // A cumulative ACK into the range leaves the remembered ranges true above SND.UNA.
        b.on_cumulative_ack(250);
        assert_eq!(b.on_sack_block(500, 900), 0);
        b.check();
    }

    #[test]
    fn an_rto_marks_everything_unsacked_lost_and_pipe_drops_to_zero() {
        let mut b = board(5);
        b.on_sack_block(300, 400);
        b.mark_all_lost();
        assert_eq!(b.pipe(), 0);
        let mut resent = vec![];
        while let Some((s, _)) = b.next_retransmission() {
            b.on_retransmit(s, SimTime::ZERO);
            resent.push(s);
        }
        assert_eq!(resent, vec![0, 100, 200, 400]);
        b.check();
    }

    #[test]
    fn a_partial_ack_inside_a_segment_keeps_the_counters_exact() {
        let mut b = board(3);
        b.mark_front_lost();
        b.on_cumulative_ack(40);
        assert_eq!(b.lost_bytes(), 60);
        assert_eq!(b.next_retransmission(), Some((40, 60)));
        b.on_retransmit(40, SimTime::ZERO);
        b.on_cumulative_ack(70);
        assert_eq!(b.pipe(), 230);
        b.check();
    }

    #[test]
    fn no_segment_sent_before_a_timeout_gives_an_rtt_sample_after_it() {
        // Bug pinned: an ACK after an RTO for data sent before it gave srtt ~ 6 s.
        let mut b = board(3);
        b.mark_all_lost();
        let (s, _) = b.next_retransmission().expect("lost");
        b.on_retransmit(s, SimTime::from_secs(1));
        // The receiver had segments 0 and 1; the ACK covers the never-resent segment 1.
        let a = b.on_cumulative_ack(200);
        assert_eq!(a.sample_sent_at, None);
        b.on_send(MSS, SimTime::from_secs(2));
        let a = b.on_cumulative_ack(400);
        assert_eq!(
            a.sample_sent_at,
            Some(SimTime::from_secs(2)),
            "new data samples again"
        );
    }

    #[test]
    fn the_rtt_sample_comes_from_the_last_segment_acked() {
        let mut b = Scoreboard::new(MSS);
        b.on_send(MSS, SimTime::from_millis(1));
        b.on_send(MSS, SimTime::from_millis(2));
        let a = b.on_cumulative_ack(200);
        assert_eq!(a.sample_sent_at, Some(SimTime::from_millis(2)));
    }

    #[test]
    fn no_rtt_sample_when_any_segment_the_ack_covers_was_retransmitted() {
        // Bug pinned (issue 9): after a fast retransmit of segment 0 at 50 ms, the ACK at 100 ms
        // covers segments 0..5 and the last of them was sent at 0 ms, never retransmitted: the
        // sample was 100 ms where the path's RTT is 50 ms (Karn's rule, RFC 6298 §3).
        let mut b = board(5);
        b.mark_front_lost();
        let (s, _) = b.next_retransmission().expect("front lost");
        b.on_retransmit(s, SimTime::from_millis(50));
        let a = b.on_cumulative_ack(500);
        assert_eq!(a.bytes_acked, 500);
        assert_eq!(a.sample_sent_at, None);
    }

    #[test]
    fn rule_3_resends_unsacked_data_below_the_highest_sack_before_it_is_deemed_lost() {
        // Segments 0 and 1 missing, 2 SACKed: neither is lost yet (one SACKed segment above).
        let mut b = board(6);
        b.on_sack_block(200, 300);
        b.update_lost(3);
        assert_eq!(b.next_retransmission(), None);
        b.start_recovery();
        assert_eq!(b.next_unsacked_below_highest_sack(), Some((0, 100)));
        b.on_retransmit(0, SimTime::ZERO);
        assert_eq!(b.next_unsacked_below_highest_sack(), Some((100, 100)));
        b.on_retransmit(100, SimTime::ZERO);
        assert_eq!(
            b.next_unsacked_below_highest_sack(),
            None,
            "nothing un-SACKed below byte 300 is left"
        );
        // Each counts twice in pipe (RFC 6675 SetPipe: not lost, and retransmitted).
        assert_eq!(b.pipe(), 600 - 100 + 200);
        // Later SACKs deem segment 0 lost: rule (1) does not resend it again.
        b.on_sack_block(300, 600);
        b.update_lost(3);
        assert_eq!(b.next_retransmission(), None);
        b.check();
    }

    #[test]
    fn the_rescue_candidate_is_the_highest_unsacked_segment() {
        let mut b = board(5);
        b.on_sack_block(300, 500);
        assert_eq!(b.rescue_candidate(), Some((200, 100)));
        b.on_retransmit(200, SimTime::ZERO);
        assert_eq!(b.rescue_candidate(), None, "already being resent");
        b.check();
    }

    #[test]
    fn a_receiver_that_reneges_is_noticed_and_its_sack_marks_forgotten() {
        let mut b = board(5);
        b.on_sack_block(100, 500);
        b.update_lost(3);
        assert!(b.front_is_lost());
        b.on_cumulative_ack(100);
        assert!(
            b.receiver_reneged(),
            "ACK 100 stops at a segment held as SACKed"
        );
        b.forget_sacks();
        assert_eq!(b.sacked_bytes(), 0);
        assert_eq!(b.pipe(), 400);
        b.check();
    }

    #[derive(Clone, Debug)]
    enum Op {
        Send(u32),
        Ack(u16),
        Sack(u16, u16),
        Lost,
        Rto,
        Retx,
        FrontLost,
        Rule3,
        Rescue,
        Renege,
        /// RACK's scan with RACK.segment at (now − a ms, SND.UNA + b) and a settle time.
        Rack(u8, u16, u8),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            3 => (1..=MSS).prop_map(Op::Send),
            2 => any::<u16>().prop_map(Op::Ack),
            3 => (any::<u16>(), any::<u16>()).prop_map(|(a, b)| Op::Sack(a, b)),
            1 => Just(Op::Lost),
            1 => Just(Op::Rto),
            2 => Just(Op::Retx),
            1 => Just(Op::FrontLost),
            1 => Just(Op::Rule3),
            1 => Just(Op::Rescue),
            1 => Just(Op::Renege),
            2 => (any::<u8>(), any::<u16>(), any::<u8>()).prop_map(|(a, b, c)| Op::Rack(a, b, c)),
        ]
    }

    proptest! {
        #[test]
        fn counters_always_match_a_full_recount_whatever_the_segment_sizes(ops in proptest::collection::vec(op(), 1..200)) {
            let mut b = Scoreboard::new(MSS);
            let mut now = SimTime::ZERO;
            for o in ops {
                // Each operation a millisecond after the last: sends and retransmissions get
                // distinct times, as RACK needs.
                now += SimDuration::from_millis(1);
                let span = (b.snd_max() - b.snd_una()).max(1);
                match o {
                    Op::Send(len) => b.on_send(len, now),
                    Op::Ack(x) => { b.on_cumulative_ack(b.snd_una() + x as u64 % (span + 1)); }
                    Op::Sack(x, y) => {
                        let l = b.snd_una() + x as u64 % span;
                        let r = l + y as u64 % span;
                        b.on_sack_block(l, r);
                    }
                    Op::Lost => b.update_lost(3),
                    Op::Rto => b.mark_all_lost(),
                    Op::Retx => if let Some((s, _)) = b.next_retransmission() { b.on_retransmit(s, now) },
                    Op::FrontLost => b.mark_front_lost(),
                    // Rules (3) and (4) only when rule (1) has nothing, as the sender asks.
                    Op::Rule3 => if b.next_retransmission().is_none() {
                        if let Some((s, _)) = b.next_unsacked_below_highest_sack() { b.on_retransmit(s, now) }
                    },
                    Op::Rescue => if b.next_retransmission().is_none() {
                        if let Some((s, _)) = b.rescue_candidate() { b.on_retransmit(s, now) }
                    },
                    Op::Renege => b.forget_sacks(),
                    Op::Rack(back, end, settle) => {
                        let at = SimTime(now.as_nanos().saturating_sub(back as u64 % 8 * 1_000_000));
                        let rack = (at, b.snd_una() + end as u64 % (span + 1));
                        let settle = SimDuration::from_millis(settle as u64 % 4);
                        b.rack_detect_loss(rack, settle, now);
                        // Whatever RACK marked, the retransmission cursor still finds the
                        // lowest segment lost and not yet resent.
                        let una = b.snd_una();
                        let lowest = b.segs.iter()
                            .find(|s| s.flags & (LOST | RETX | SACKED) == LOST)
                            .map(|s| s.start.max(una));
                        prop_assert_eq!(b.next_retransmission().map(|(s, _)| s), lowest);
                    }
                }
                b.check();
                prop_assert!(b.pipe() <= b.flight_size() + b.flight_size());
            }
        }
    }
}
