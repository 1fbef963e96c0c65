// SPDX-License-Identifier: MIT
//! An ATM output port: two cell queues served with strict priority, a transmitter sending one
//! cell per cell time, the propagation FIFO, optional frame discard, and the port's feedback
//! (ERICA or EFCI marking).
//!
//! ```text
//!   CBR cells ──> [CBR queue, own buffer] ──┐ strict priority
//!   ABR cells ──> [ABR queue, own buffer] ──┴─> transmitter (53 B at the link rate)
//!                  EPD/PPD here (optional)        ──> propagation FIFO ──> far end
//!   ERICA counts every cell offered here (ABR and not) per averaging interval, and writes
//!   ER into the BRMs of the VCs that leave by this port as they pass the switch backwards.
//! ```
//!
//! A host's ATM interface is a port too (its queues hold what its sources paced out); only
//! ports of switch nodes give feedback.

use std::collections::VecDeque;

use super::cell::{Cell, CellKind};
use crate::time::{Rate, Serializer, SimDuration, SimTime};

/// Queue classes, in service order.
pub const CBR: usize = 0;
pub const ABR: usize = 1;

/// ERICA's parameters (Jain et al., ATM Forum/96-1172).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EricaParams {
    /// Target utilization U of the link (0.9 to 0.95 in ERICA96).
    pub target_utilization: f64,
    /// The averaging interval over which input rates are measured.
    pub interval: SimDuration,
    /// ERICA+ instead of ERICA (`feedback = { type = "erica_plus" }`); `None`: ERICA.
    pub plus: Option<EricaPlusParams>,
}

/// ERICA+'s queue control (Vandalore et al., ATM Forum/98-0408, "Overview of ERICA+", eqs
/// 1-12; the queue control functions of arXiv cs/9809041): the ABR capacity is the link less
/// the measured non-ABR load, times a fraction that falls as the ABR queue's delay grows past
/// the target T0 and rises above 1 below it, so the queue settles at T0 and the link at 100 %.
///
/// ```text
///   Tq = ABR queue / (link − non-ABR)                  queue delay, seconds
///   f(Tq) = b·T0 / ((b − 1)·Tq + T0)   for Tq ≤ T0     (b at an empty queue, 1 at T0)
///   f(Tq) = a·T0 / ((a − 1)·Tq + T0)   for Tq > T0     (falls towards 0)
///   fraction = max(f(Tq), QDLF)
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EricaPlusParams {
    /// T0: the queue delay ERICA+ steers the ABR queue to.
    pub target_delay: SimDuration,
    /// The hyperbola's parameters above and below T0.
    pub a: f64,
    pub b: f64,
    /// The fraction's floor (queue drain limit factor).
    pub qdlf: f64,
    /// z above 1 + delta counts as overload: no MaxAllocPrevious term then.
    pub delta: f64,
}

impl EricaPlusParams {
    /// QDLF = 0.5 as ERICA+98; a = 1.15, b = 1.05 and delta = 0.1 are from the reference's
    /// memory of ERICA+98, not re-read; T0 = 1 ms is our choice (354 cells at 150 Mbit/s).
    pub const DEFAULT: EricaPlusParams = EricaPlusParams {
        target_delay: SimDuration::from_millis(1),
        a: 1.15,
        b: 1.05,
        qdlf: 0.5,
        delta: 0.1,
    };

    /// The fraction of the ABR capacity offered at a queue delay of `tq` seconds.
    pub fn fraction(&self, tq: f64) -> f64 {
        let t0 = self.target_delay.as_secs_f64();
        let k = if tq <= t0 { self.b } else { self.a };
        let f = k * t0 / ((k - 1.0) * tq + t0);
        f.max(self.qdlf)
    }
}

/// How a switch port tells ABR sources about congestion.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Feedback {
    /// Explicit rate by ERICA.
    Erica(EricaParams),
    /// Binary: set EFCI in data cells that find at least `threshold` cells in the ABR queue
    /// (TM 4.0 §5.10.6; the destination reflects it as CI).
    Efci {
        threshold: u32,
    },
    None,
}

/// The buffers and options of every ATM port.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PortParams {
    /// Buffer of the CBR queue and of the ABR queue, cells.
    pub cbr_buffer: u32,
    pub abr_buffer: u32,
    pub feedback: Feedback,
    /// Early packet discard (Romanow and Floyd 1995): a frame whose first cell finds at least
    /// this many cells in the ABR queue is dropped whole. None: off.
    pub epd_threshold: Option<u32>,
    /// Partial packet discard: after a cell of a frame is lost, drop the rest of the frame
    /// except its EOM cell.
    pub ppd: bool,
}

/// ERICA's measurements at one port and the rates derived from the last full interval.
#[derive(Clone, Debug)]
pub struct Erica {
    p: EricaParams,
    /// Cells per second of the link.
    link: f64,
    interval_end: SimTime,
    interval_no: u64,
    abr_cells: u64,
    other_cells: u64,
    /// Per VC: the interval in which it last sent a cell here (+1; 0 = never).
    seen_in: Vec<u64>,
    active: u32,
    /// Per VC: CCR of the last FRM seen.
    ccr: Vec<f64>,
    /// From the last full interval.
    pub abr_capacity: f64,
    pub overload: f64,
    pub fair_share: f64,
    /// ERICA+: the largest ER given in the last full interval and in this one (eq 11).
    max_alloc_previous: f64,
    max_alloc_current: f64,
}

/// ERICA96's overload factor when CBR leaves no ABR capacity (YATS's ZOL).
const Z_NO_CAPACITY: f64 = 1000.0;

impl Erica {
    pub fn new(p: EricaParams, link_cells_per_s: f64, vcs: usize, start: SimTime) -> Erica {
        let cap = p.target_utilization * link_cells_per_s;
        Erica {
            p,
            link: link_cells_per_s,
            interval_end: start + p.interval,
            interval_no: 1,
            abr_cells: 0,
            other_cells: 0,
            seen_in: vec![0; vcs],
            active: 0,
            ccr: vec![0.0; vcs],
            abr_capacity: cap,
            overload: 0.0,
            fair_share: cap,
            max_alloc_previous: 0.0,
            max_alloc_current: 0.0,
        }
    }

    /// The ABR capacity given the non-ABR load (cells/s) and the ABR queue (cells): ERICA's
    /// U·(C − non-ABR), or ERICA+'s fraction(Tq)·(C − non-ABR).
    fn capacity(&self, other: f64, queue: usize) -> f64 {
        let total = self.link - other;
        match self.p.plus {
            None => self.p.target_utilization * total,
            Some(plus) if total > 0.0 => plus.fraction(queue as f64 / total) * total,
            Some(_) => total,
        }
    }

    /// Close the intervals that ended by `now` (an interval with no cells measures zero);
    /// `queue` is the port's ABR queue now (cells), which ERICA+ reads.
    #[inline]
    fn roll(&mut self, now: SimTime, queue: usize) {
        if now < self.interval_end {
            return;
        }
        let t = self.p.interval.as_secs_f64();
        let other = self.other_cells as f64 / t;
        let abr = self.abr_cells as f64 / t;
        self.abr_capacity = self.capacity(other, queue);
        self.max_alloc_previous = std::mem::take(&mut self.max_alloc_current);
        let n = self.active.max(1) as f64;
        if self.abr_capacity <= 0.0 {
            self.abr_capacity = 0.0;
            self.overload = Z_NO_CAPACITY;
            self.fair_share = 0.0;
        } else {
            self.overload = abr / self.abr_capacity;
            self.fair_share = self.abr_capacity / n;
        }
        self.abr_cells = 0;
        self.other_cells = 0;
        self.active = 0;
        // Skip the empty intervals in between at once.
        let missed = (now.as_nanos() - self.interval_end.as_nanos()) / self.p.interval.as_nanos();
        self.interval_no += 1 + missed;
        self.interval_end += self.p.interval.saturating_mul(1 + missed);
        if missed > 0 {
            // The intervals after the one just closed saw nothing.
            self.overload = 0.0;
            self.abr_capacity = self.capacity(0.0, queue);
            self.fair_share = self.abr_capacity;
            self.max_alloc_previous = 0.0;
        }
    }

    /// A cell is offered to the port (counted whether it is then queued or dropped: ERICA
    /// measures the input rate).
    #[inline]
    pub fn on_cell(&mut self, now: SimTime, c: &Cell, queue: usize) {
        self.roll(now, queue);
        if c.kind == CellKind::Cbr {
            self.other_cells += 1;
            return;
        }
        self.abr_cells += 1;
        let vc = c.vc as usize;
        if c.kind != CellKind::Brm && vc < self.seen_in.len() {
            if self.seen_in[vc] != self.interval_no {
                self.seen_in[vc] = self.interval_no;
                self.active += 1;
            }
            if c.kind == CellKind::Frm {
                self.ccr[vc] = c.ccr as f64;
            }
        }
    }

    /// The ER this port allows VC `vc` (ERICA96 §2): max(FairShare, CCR/z), at most the ABR
    /// capacity, at least the VC's MCR. ERICA+ (ERICA+98 eqs 10-12) adds, when not overloaded
    /// (z ≤ 1 + δ), the largest ER of the last interval, keeps a VC below the fair share from
    /// jumping above it in one step, and remembers the largest ER it gave.
    pub fn explicit_rate(&mut self, now: SimTime, vc: u32, mcr: f64, queue: usize) -> f64 {
        self.roll(now, queue);
        let ccr = self.ccr.get(vc as usize).copied().unwrap_or(0.0);
        let vc_share = if self.overload > 0.0 {
            ccr / self.overload
        } else {
            f64::INFINITY
        };
        let mut er = self.fair_share.max(vc_share);
        if let Some(plus) = self.p.plus {
            if self.overload <= 1.0 + plus.delta {
                er = er.max(self.max_alloc_previous);
            }
            if er > self.fair_share && ccr < self.fair_share {
                er = self.fair_share;
            }
        }
        let er = er.min(self.abr_capacity).max(mcr);
        if self.p.plus.is_some() {
            self.max_alloc_current = self.max_alloc_current.max(er);
        }
        er
    }
}

/// Counters of one port.
#[derive(Clone, Debug, Default)]
pub struct PortStats {
    /// Cells put on the wire and cells lost on overflow (or by EPD/PPD), per class.
    pub sent: [u64; 2],
    pub lost: [u64; 2],
    pub rm_sent: u64,
    pub max_queue: [u64; 2],
    /// Cells lost because the link was down (`[[events]]`): queued or on the wire when it
    /// went down, or offered while it was.
    pub lost_link_down: u64,
    /// BRMs whose ER this port lowered, and the sum of the ERs it computed for them.
    pub er_lowered: u64,
    pub er_written: u64,
    pub er_sum: f64,
    pub efci_marked: u64,
}

/// What `offer` did with a cell.
pub enum CellOffer {
    /// On the wire at once; schedule the FIFO head's arrival if set.
    Sent(Option<SimTime>),
    /// Waiting; schedule the transmitter's end at this time if set.
    Queued(Option<SimTime>),
    Dropped(Cell),
}

pub struct Port {
    /// The channel (link direction) this port sends on.
    pub chan: u32,
    pub from_node: u32,
    pub to_node: u32,
    pub to_iface: u32,
    rate: Rate,
    delay: SimDuration,
    ser: Serializer,
    pub params: PortParams,
    queues: [VecDeque<Cell>; 2],
    busy_until: SimTime,
    pub propagation: VecDeque<(SimTime, Cell)>,
    pub erica: Option<Erica>,
    /// EPD/PPD: per VC, the frame being discarded (+1; 0 none) and whether its EOM is kept.
    discard: Vec<(u32, bool)>,
    /// The link is down (`[[events]]`): every cell offered is lost.
    pub down: bool,
    pub stats: PortStats,
}

impl Port {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        chan: u32,
        from_node: u32,
        to_node: u32,
        to_iface: u32,
        rate: Rate,
        delay: SimDuration,
        params: PortParams,
        erica: Option<Erica>,
        vcs: usize,
    ) -> Port {
        Port {
            chan,
            from_node,
            to_node,
            to_iface,
            rate,
            delay,
            ser: Serializer::default(),
            params,
            queues: [VecDeque::new(), VecDeque::new()],
            busy_until: SimTime::ZERO,
            propagation: VecDeque::new(),
            erica,
            discard: vec![(0, false); vcs],
            down: false,
            stats: PortStats::default(),
        }
    }

    pub fn delay(&self) -> SimDuration {
        self.delay
    }

    pub fn queue_len(&self, class: usize) -> usize {
        self.queues[class].len()
    }

    /// Cells inside the port: queued and on the wire.
    pub fn cells_inside(&self) -> u64 {
        (self.queues[0].len() + self.queues[1].len() + self.propagation.len()) as u64
    }

    /// Frame discard for an ABR data cell: whether to drop it before it reaches the buffer.
    fn discards(&mut self, c: &Cell) -> bool {
        let vc = c.vc as usize;
        if vc >= self.discard.len() {
            return false;
        }
        let (frame, keep_eom) = self.discard[vc];
        if frame == c.frame + 1 {
            if c.eom {
                self.discard[vc] = (0, false);
                return !keep_eom;
            }
            return true;
        }
        if c.idx == 0 {
            if let Some(th) = self.params.epd_threshold {
                if self.queues[ABR].len() >= th as usize {
                    if !c.eom {
                        self.discard[vc] = (c.frame + 1, false);
                    }
                    return true;
                }
            }
        }
        false
    }

    /// The link goes down: the transmission in progress stops and every cell queued or on the
    /// wire is lost; they are handed back for the frames' accounting. Events already scheduled
    /// for them find nothing (`on_tx_done` and `on_arrive` check the time).
    pub fn go_down(&mut self, now: SimTime, lost: &mut Vec<Cell>) {
        self.down = true;
        self.busy_until = self.busy_until.min(now);
        let before = lost.len();
        for q in &mut self.queues {
            lost.extend(q.drain(..));
        }
        lost.extend(self.propagation.drain(..).map(|(_, c)| c));
        self.stats.lost_link_down += (lost.len() - before) as u64;
    }

    /// A cell arrives at the port to be sent.
    #[inline]
    pub fn offer(&mut self, now: SimTime, mut c: Cell) -> CellOffer {
        if self.down {
            self.stats.lost_link_down += 1;
            return CellOffer::Dropped(c);
        }
        if let Some(e) = self.erica.as_mut() {
            e.on_cell(now, &c, self.queues[ABR].len());
        }
        let class = if c.kind == CellKind::Cbr { CBR } else { ABR };
        if c.kind == CellKind::Data {
            if self.discards(&c) {
                self.stats.lost[ABR] += 1;
                return CellOffer::Dropped(c);
            }
            if let Feedback::Efci { threshold } = self.params.feedback {
                if self.queues[ABR].len() >= threshold as usize {
                    c.efci = true;
                    self.stats.efci_marked += 1;
                }
            }
        }
        let limit = if class == CBR {
            self.params.cbr_buffer
        } else {
            self.params.abr_buffer
        };
        if self.queues[class].len() >= limit as usize {
            self.stats.lost[class] += 1;
            if c.kind == CellKind::Data && self.params.ppd && !c.eom {
                if let Some(d) = self.discard.get_mut(c.vc as usize) {
                    *d = (c.frame + 1, true);
                }
            }
            return CellOffer::Dropped(c);
        }
        let first_to_wait = self.queues[0].is_empty() && self.queues[1].is_empty();
        if first_to_wait && self.busy_until <= now {
            return CellOffer::Sent(self.transmit(now, c));
        }
        self.queues[class].push_back(c);
        let q = self.queues[class].len() as u64;
        if q > self.stats.max_queue[class] {
            self.stats.max_queue[class] = q;
        }
        CellOffer::Queued(first_to_wait.then_some(self.busy_until))
    }

    #[inline]
    fn transmit(&mut self, now: SimTime, c: Cell) -> Option<SimTime> {
        let done = now + self.ser.next(self.rate, super::cell::CELL_BYTES as u64);
        self.busy_until = done;
        let class = if c.kind == CellKind::Cbr { CBR } else { ABR };
        self.stats.sent[class] += 1;
        if c.is_rm() {
            self.stats.rm_sent += 1;
        }
        let at = done + self.delay;
        let head = self.propagation.is_empty().then_some(at);
        self.propagation.push_back((at, c));
        head
    }

    /// The transmitter is free with cells waiting: start the next, CBR first. Returns the FIFO
    /// head's arrival if it is new and the next end of transmission if cells still wait.
    #[inline]
    pub fn on_tx_done(&mut self, now: SimTime) -> (Option<SimTime>, Option<SimTime>) {
        if self.busy_until > now {
            // Scheduled before the link went down and came back: the live entry is later.
            return (None, None);
        }
        let c = match self.queues[CBR].pop_front() {
            Some(c) => c,
            None => match self.queues[ABR].pop_front() {
                Some(c) => c,
                None => return (None, None),
            },
        };
        let head = self.transmit(now, c);
        let waiting = !(self.queues[0].is_empty() && self.queues[1].is_empty());
        (head, waiting.then_some(self.busy_until))
    }

    /// The head of the propagation FIFO arrives at `now`; returns it and the next head's time
    /// (nothing if the head is not due: the entry was for a cell lost when the link went down).
    #[inline]
    pub fn on_arrive(&mut self, now: SimTime) -> Option<(Cell, Option<SimTime>)> {
        if self.propagation.front().is_none_or(|&(t, _)| t != now) {
            return None;
        }
        let (_, c) = self.propagation.pop_front()?;
        Some((c, self.propagation.front().map(|(t, _)| *t)))
    }

    /// ERICA at this port lowers the ER of a BRM of `vc` passing backwards (never raises it).
    pub fn write_er(&mut self, now: SimTime, c: &mut Cell, mcr: f64) {
        let Some(e) = self.erica.as_mut() else {
            return;
        };
        let er = e.explicit_rate(now, c.vc, mcr, self.queues[ABR].len());
        self.stats.er_written += 1;
        self.stats.er_sum += er;
        if (er as f32) < c.er {
            c.er = er as f32;
            self.stats.er_lowered += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn erica() -> Erica {
        Erica::new(
            EricaParams {
                target_utilization: 0.9,
                interval: SimDuration::from_millis(1),
                plus: None,
            },
            10_000.0,
            4,
            SimTime::ZERO,
        )
    }

    fn ms(x: u64) -> SimTime {
        SimTime::from_millis(x)
    }

    #[test]
    fn erica_never_raises_the_er_in_the_cell_nor_exceeds_the_abr_capacity() {
        // Check 14.
        let params = PortParams {
            cbr_buffer: 10,
            abr_buffer: 10,
            feedback: Feedback::Erica(EricaParams {
                target_utilization: 0.9,
                interval: SimDuration::from_millis(1),
                plus: None,
            }),
            epd_threshold: None,
            ppd: false,
        };
        let mut p = Port::new(
            0,
            0,
            1,
            1,
            Rate(4_240_000),
            SimDuration::ZERO,
            params,
            Some(erica()),
            4,
        );
        let mut low = Cell::frm(0, 10_000.0, 100.0).turned_around(false);
        low.er = 50.0;
        p.write_er(ms(2), &mut low, 0.0);
        assert_eq!(low.er, 50.0, "an ER below ERICA's is kept");
        let mut high = Cell::frm(0, 1e9, 100.0).turned_around(false);
        p.write_er(ms(2), &mut high, 0.0);
        assert!(high.er as f64 <= 9000.0 + 1e-3, "{}", high.er);
    }

    #[test]
    fn erica_gives_n_greedy_vcs_the_fair_share_and_an_overload_of_one() {
        // Check 13 at the fixed point: 3 VCs sending 3000 cells/s each at U·C = 9000.
        let mut e = erica();
        let mut t = SimTime::ZERO;
        for i in 0..9 * 3 {
            // 27 cells in 3 ms over 3 VCs, one FRM per VC per ms carrying CCR = 3000.
            let vc = (i % 3) as u32;
            let c = if i < 3 {
                Cell::frm(vc, 1e9, 3000.0)
            } else {
                Cell::data(vc, 0, 0, false)
            };
            e.on_cell(t, &c, 0);
            t += SimDuration::from_nanos(111_112);
        }
        e.roll(ms(3), 0);
        for vc in 0..3 {
            let er = e.explicit_rate(ms(3), vc, 0.0, 0);
            assert!((er - 3000.0).abs() < 1.0, "vc {vc}: {er}");
        }
        assert!((e.overload - 1.0).abs() < 0.05, "{}", e.overload);
    }

    #[test]
    fn erica_lowers_the_share_of_a_vc_sending_above_it_when_overloaded() {
        let mut e = erica();
        // One VC alone at 18,000 cells/s offered: z = 2, VC share = CCR/2.
        e.on_cell(SimTime::ZERO, &Cell::frm(0, 1e9, 18_000.0), 0);
        for _ in 1..18 {
            e.on_cell(SimTime::ZERO, &Cell::data(0, 0, 0, false), 0);
        }
        e.roll(ms(1), 0);
        assert!((e.overload - 2.0).abs() < 1e-9);
        let er = e.explicit_rate(ms(1), 0, 0.0, 0);
        assert!(
            (er - 9000.0).abs() < 1e-6,
            "min(max(9000, 9000), 9000): {er}"
        );
    }

    #[test]
    fn erica_gives_abr_what_cbr_leaves_of_the_target() {
        let mut e = erica();
        for _ in 0..4 {
            e.on_cell(SimTime::ZERO, &Cell::cbr(0), 0);
        }
        e.roll(ms(1), 0);
        // CBR 4000 cells/s: ABR capacity 0.9 · 6000.
        assert!((e.abr_capacity - 5400.0).abs() < 1e-6);
    }

    /// A fluid loop around one port: four greedy VCs send, each interval, the ER the port gave
    /// them at the end of the last; the ABR queue grows by what they send beyond the link.
    /// Returns the queue (cells) after `secs`.
    fn queue_after(p: EricaParams, queue: f64, secs: u64) -> f64 {
        let link = 100_000.0;
        let mut e = Erica::new(p, link, 4, SimTime::ZERO);
        let mut rates = [link / 4.0; 4];
        let mut carry = [0.0; 4];
        let mut q = queue;
        let t_int = p.interval.as_secs_f64();
        let n = secs * 1_000_000_000 / p.interval.as_nanos();
        for k in 0..n {
            let start = SimTime::ZERO + p.interval.saturating_mul(k);
            let mut sent = 0.0;
            for vc in 0..4 {
                carry[vc] += rates[vc] * t_int;
                let cells = carry[vc].floor();
                carry[vc] -= cells;
                for i in 0..cells as u64 {
                    let c = if i == 0 {
                        Cell::frm(vc as u32, 1e9, rates[vc])
                    } else {
                        Cell::data(vc as u32, 0, 0, false)
                    };
                    e.on_cell(start, &c, q as usize);
                }
                sent += cells;
            }
            q = (q + sent - link * t_int).max(0.0);
            let end = start + p.interval;
            for (vc, r) in rates.iter_mut().enumerate() {
                *r = e.explicit_rate(end, vc as u32, 0.0, q as usize);
            }
        }
        q
    }

    #[test]
    fn erica_plus_drains_a_standing_queue_to_its_target_delay_where_erica_keeps_it() {
        let erica = EricaParams {
            target_utilization: 1.0,
            interval: SimDuration::from_millis(1),
            plus: None,
        };
        // ERICA has no queue term: at U = 1 the four VCs fill the link and 2,000 cells stay.
        let kept = queue_after(erica, 2000.0, 3);
        assert!((kept - 2000.0).abs() < 100.0, "ERICA: {kept} cells");
        // ERICA+ with T0 = 5 ms (500 cells at 100,000 cells/s) drains it to about T0.
        let plus = EricaParams {
            plus: Some(EricaPlusParams {
                target_delay: SimDuration::from_millis(5),
                ..EricaPlusParams::DEFAULT
            }),
            ..erica
        };
        let drained = queue_after(plus, 2000.0, 3);
        assert!((drained - 500.0).abs() < 100.0, "ERICA+: {drained} cells");
    }

    #[test]
    fn erica_plus_offers_b_times_the_capacity_at_an_empty_queue_and_qdlf_at_a_long_one() {
        let p = EricaPlusParams::DEFAULT;
        assert!((p.fraction(0.0) - 1.05).abs() < 1e-12);
        assert!((p.fraction(0.001) - 1.0).abs() < 1e-12, "1 at T0");
        assert!(p.fraction(0.002) < 1.0 && p.fraction(0.002) > 0.5);
        assert_eq!(p.fraction(1.0), 0.5);
    }
}
