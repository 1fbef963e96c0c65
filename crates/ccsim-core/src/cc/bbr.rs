// SPDX-License-Identifier: MIT
//! BBR v1 (Cardwell, Cheng, Gunn, Hassas Yeganeh, Jacobson, "BBR: Congestion-Based Congestion
//! Control", ACM Queue 14(5), 2016; CACM 60(2), 2017), with Linux net/ipv4/tcp_bbr.c as the
//! reference for its constants and rules.
//!
//! BBR does not read loss as the congestion signal. It keeps a model of the path, the
//! bottleneck bandwidth (a windowed maximum of the delivery rate) and the round-trip
//! propagation time (a windowed minimum of the RTT), and sends at the model's rate:
//!
//! ```text
//!   every ACK ──> rate sample (tcp/rate.rs) ──> BtlBw = max(delivery rate, last 10 rounds)
//!                                               RTprop = min(RTT, last 10 s)
//!   pacing rate = pacing_gain · BtlBw · (1 − 1 %)        cwnd = cwnd_gain · BtlBw · RTprop (+3)
//!
//!   Startup ──(BtlBw grew < 25 % for 3 rounds)──> Drain ──(inflight ≤ BDP)──> ProbeBW
//!    gain 2/ln 2 both                              pacing 1/2.885             pacing gain cycle
//!                                                                             1.25 0.75 1 1 1 1 1 1
//!   any state ──(RTprop not refreshed for 10 s)──> ProbeRTT: cwnd 4 segments for
//!                                                  max(200 ms, one round), then back
//! ```
//!
//! It needs more than the window-growth hooks: the endpoint measures the delivery rate for it
//! ([`CongestionControl::samples_rate`], `tcp/rate.rs`), it sets cwnd on every ACK, in
//! recovery too ([`CongestionControl::on_rate_sample`]: the endpoint's recovery algorithm
//! leaves cwnd alone, as Linux's `cong_control` hook replaces `tcp_cwnd_reduction`), and it
//! paces ([`CongestionControl::pacing_rate`]; pacing is on by default with `cc = "bbr"`).
//!
//! Loss: in the first round of fast recovery BBR sends one segment per segment delivered
//! (packet conservation, cwnd = pipe + delivered), then may grow again by what each ACK
//! delivers; newly lost bytes come off cwnd; when recovery (or the loss state after an RTO)
//! ends, cwnd returns to at least what it was before (Linux's
//! `bbr_set_cwnd_to_recover_or_restore`). An RTO counts as the end of a round and restarts
//! full-pipe detection (`bbr_set_state`).
//!
//! Where ccsim departs from Linux's module (docs/tcp.md "BBR"): bytes instead of packets (the
//! BDP rounded up to whole segments as Linux rounds up packets); no TSO, so the quantization
//! budget is a fixed `budget_segments` (Linux adds 3 TSO goals, 3 segments at low rates); no
//! ACK-aggregation estimator (`extra_acked`), no long-term policer model (`lt_bw`), no
//! idle-restart event and no EDT correction of in-flight (`bbr_packets_in_net_at_edt`); an ACK
//! is never "delayed" for the min-RTT filter.

use super::{
    AckEvent, CaState, CongestionControl, CongestionEvent, CongestionKind, RateSample, Window,
};
use crate::rng::RngStream;
use crate::time::{SimDuration, SimTime};

/// BBR's constants; every one a scenario key (`cc = { type = "bbr", ... }`), defaults from
/// Linux tcp_bbr.c.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BbrConfig {
    /// Startup's pacing and cwnd gain, 2/ln 2 ≈ 2.885 (`bbr_high_gain`): the smallest gain that
    /// doubles the delivery rate every round, as slow start would.
    pub high_gain: f64,
    /// Drain's pacing gain, 1/2.885 (`bbr_drain_gain`): empties Startup's queue in about a
    /// round.
    pub drain_gain: f64,
    /// ProbeBW's cwnd gain, 2 (`bbr_cwnd_gain`): room for delayed and stretched ACKs.
    pub cwnd_gain: f64,
    /// The probing phase of ProbeBW's gain cycle, 1.25.
    pub probe_gain: f64,
    /// The draining phase after it, 0.75.
    pub drain_phase_gain: f64,
    /// Phases at gain 1 after those two: 6 (`CYCLE_LEN` 8 in all).
    pub cruise_phases: u32,
    /// ProbeBW starts at a phase drawn uniformly from this many (`bbr_cycle_rand` 7: every
    /// phase but the draining one), from the flow's own random stream.
    pub random_phases: u32,
    /// The bandwidth filter's window, round trips (`bbr_bw_rtts` = `CYCLE_LEN` + 2 = 10).
    pub bw_window_rounds: u64,
    /// The min-RTT filter's window, 10 s (`bbr_min_rtt_win_sec`).
    pub min_rtt_window: SimDuration,
    /// ProbeRTT's least duration, 200 ms (`bbr_probe_rtt_mode_ms`).
    pub probe_rtt_duration: SimDuration,
    /// The smallest cwnd and ProbeRTT's cwnd, 4 segments (`bbr_cwnd_min_target`).
    pub min_cwnd_segments: u32,
    /// Startup ends when the bandwidth has grown by less than this factor (1.25,
    /// `bbr_full_bw_thresh`) for `full_bw_rounds` rounds ...
    pub full_bw_threshold: f64,
    /// ... 3 (`bbr_full_bw_cnt`).
    pub full_bw_rounds: u32,
    /// Pace this fraction below the estimated bandwidth, 1 % (`bbr_pacing_margin_percent`).
    pub pacing_margin: f64,
    /// Segments added to the cwnd target for the end hosts' queues (Linux adds
    /// `3 · bbr_tso_segs_goal`, three segments where ccsim's one segment per packet stands
    /// for a TSO burst); the target is then rounded up to an even count of segments, and 2
    /// more are added in ProbeBW's probing phase (`bbr_quantization_budget`).
    pub budget_segments: u32,
    /// cwnd's cap before any RTT sample, and the delivered count below which Startup's cwnd
    /// grows whatever the target: 10 segments (`TCP_INIT_CWND`).
    pub init_cwnd_segments: u32,
    /// The RTT assumed for the first pacing rate when no sample exists yet, 1 ms
    /// (`bbr_init_pacing_rate_from_rtt`).
    pub nominal_rtt: SimDuration,
}

impl Default for BbrConfig {
    fn default() -> Self {
        BbrConfig {
            high_gain: 2.885,
            drain_gain: 1.0 / 2.885,
            cwnd_gain: 2.0,
            probe_gain: 1.25,
            drain_phase_gain: 0.75,
            cruise_phases: 6,
            random_phases: 7,
            bw_window_rounds: 10,
            min_rtt_window: SimDuration::from_secs(10),
            probe_rtt_duration: SimDuration::from_millis(200),
            min_cwnd_segments: 4,
            full_bw_threshold: 1.25,
            full_bw_rounds: 3,
            pacing_margin: 0.01,
            budget_segments: 3,
            init_cwnd_segments: 10,
            nominal_rtt: SimDuration::from_millis(1),
        }
    }
}

impl BbrConfig {
    pub fn build(self) -> Bbr {
        Bbr {
            cfg: self,
            mode: BbrMode::Startup,
            bw: MaxFilter::default(),
            min_rtt: SimDuration::MAX,
            min_rtt_stamp: SimTime::ZERO,
            probe_rtt_done: None,
            probe_rtt_round_done: false,
            rounds: 0,
            next_round_delivered: 0,
            round_start: false,
            cycle_index: 0,
            cycle_stamp: SimTime::ZERO,
            pacing_gain: self.high_gain,
            cwnd_gain: self.high_gain,
            full_bw_reached: false,
            full_bw: 0.0,
            full_bw_count: 0,
            prior_cwnd: 0,
            prev_state: CaState::Open,
            packet_conservation: false,
            pacing_rate: 0,
            has_seen_rtt: false,
            started: false,
            rng: None,
        }
    }

    /// Phases of the ProbeBW cycle.
    fn cycle_len(&self) -> u32 {
        2 + self.cruise_phases
    }
}

/// BBR's state (Linux's `bbr_mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BbrMode {
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

/// A windowed maximum over a sliding window of `win` time units, in constant space: the best,
/// second-best and third-best samples of the window's sub-intervals (K. Nichols' algorithm, as
/// Linux's lib/win_minmax.c keeps it for BBR). Time here is BBR's round count.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MaxFilter {
    s: [(u64, f64); 3],
}

impl MaxFilter {
    pub fn get(&self) -> f64 {
        self.s[0].1
    }

    fn reset(&mut self, t: u64, v: f64) -> f64 {
        self.s = [(t, v); 3];
        v
    }

    /// Take sample `v` at time `t`; returns the window's maximum.
    pub fn update(&mut self, win: u64, t: u64, v: f64) -> f64 {
        // A new maximum, or nothing left in the window: the sample is all three.
        if v >= self.s[0].1 || t.saturating_sub(self.s[2].0) > win {
            return self.reset(t, v);
        }
        if v >= self.s[1].1 {
            self.s[1] = (t, v);
            self.s[2] = (t, v);
        } else if v >= self.s[2].1 {
            self.s[2] = (t, v);
        }
        let dt = t.saturating_sub(self.s[0].0);
        if dt > win {
            // The best has aged out: the others move up and the sample is the newest third.
            self.s = [self.s[1], self.s[2], (t, v)];
            if t.saturating_sub(self.s[0].0) > win {
                self.s = [self.s[1], self.s[2], (t, v)];
            }
        } else if self.s[1].0 == self.s[0].0 && dt > win / 4 {
            // A quarter of the window without a second choice: take one from the second quarter.
            self.s[1] = (t, v);
            self.s[2] = (t, v);
        } else if self.s[2].0 == self.s[1].0 && dt > win / 2 {
            // Likewise a third choice from the second half.
            self.s[2] = (t, v);
        }
        self.s[0].1
    }
}

#[derive(Clone, Debug)]
pub struct Bbr {
    cfg: BbrConfig,
    mode: BbrMode,
    /// BtlBw: the windowed maximum of the delivery rate, bytes per second, by round.
    bw: MaxFilter,
    /// RTprop ([`SimDuration::MAX`]: no sample yet) and when it was taken.
    min_rtt: SimDuration,
    min_rtt_stamp: SimTime,
    /// When ProbeRTT may end (None: the flight has not come down to its cwnd yet).
    probe_rtt_done: Option<SimTime>,
    /// A whole round passed at ProbeRTT's cwnd.
    probe_rtt_round_done: bool,
    /// Packet-timed round trips so far.
    rounds: u64,
    /// C.delivered at which the current round ends.
    next_round_delivered: u64,
    /// This ACK started a new round.
    round_start: bool,
    cycle_index: u32,
    /// When the current ProbeBW phase started.
    cycle_stamp: SimTime,
    pacing_gain: f64,
    cwnd_gain: f64,
    full_bw_reached: bool,
    /// The bandwidth at the last round of significant growth.
    full_bw: f64,
    full_bw_count: u32,
    /// The last good cwnd before recovery or ProbeRTT cut it, restored after.
    prior_cwnd: u64,
    /// The recovery state at the previous ACK.
    prev_state: CaState,
    packet_conservation: bool,
    /// Bytes per second; 0: none yet.
    pacing_rate: u64,
    has_seen_rtt: bool,
    /// The first rate sample has been taken (the filters' clocks start there).
    started: bool,
    /// The flow's stream (`flow/<name>/cc`) for ProbeBW's first phase; None (a relay's
    /// sender): ProbeBW starts at the probing phase.
    rng: Option<RngStream>,
}

impl Bbr {
    pub fn mode(&self) -> BbrMode {
        self.mode
    }
    /// BtlBw, bytes per second.
    pub fn max_bw(&self) -> f64 {
        self.bw.get()
    }
    /// RTprop (None: no sample yet).
    pub fn min_rtt(&self) -> Option<SimDuration> {
        (self.min_rtt != SimDuration::MAX).then_some(self.min_rtt)
    }
    pub fn pacing_gain(&self) -> f64 {
        self.pacing_gain
    }
    pub fn cycle_index(&self) -> u32 {
        self.cycle_index
    }
    pub fn full_bw_reached(&self) -> bool {
        self.full_bw_reached
    }
    pub fn rounds(&self) -> u64 {
        self.rounds
    }

    /// BDP · `gain` in bytes, rounded up to whole segments (`bbr_bdp`); the initial cap without
    /// an RTT sample.
    fn bdp(&self, bw: f64, gain: f64, mss: u64) -> u64 {
        if self.min_rtt == SimDuration::MAX {
            return self.cfg.init_cwnd_segments as u64 * mss;
        }
        let bytes = bw * self.min_rtt.as_secs_f64() * gain;
        // A float cast saturates; the product must too.
        ((bytes / mss as f64).ceil() as u64).saturating_mul(mss)
    }

    /// `bbr_quantization_budget`: room for the end hosts' queues, an even number of segments,
    /// and 2 more while probing.
    fn budget(&self, cwnd: u64, mss: u64) -> u64 {
        let mut segs = cwnd
            .div_ceil(mss)
            .saturating_add(self.cfg.budget_segments as u64);
        segs = segs.saturating_add(segs % 2);
        if self.mode == BbrMode::ProbeBw && self.cycle_index == 0 {
            segs = segs.saturating_add(2);
        }
        segs.saturating_mul(mss)
    }

    /// The in-flight target at `gain` (`bbr_inflight`).
    fn inflight(&self, bw: f64, gain: f64, mss: u64) -> u64 {
        self.budget(self.bdp(bw, gain, mss), mss)
    }

    fn gain_of_phase(&self, i: u32) -> f64 {
        match i {
            0 => self.cfg.probe_gain,
            1 => self.cfg.drain_phase_gain,
            _ => 1.0,
        }
    }

    fn rate_at(&self, bw: f64, gain: f64) -> u64 {
        (bw * gain * (1.0 - self.cfg.pacing_margin)) as u64
    }

    /// `bbr_init_pacing_rate_from_rtt`: Startup's gain on the window over SRTT (or the
    /// nominal RTT).
    fn init_pacing_rate(&mut self, cwnd: u64, srtt: Option<SimDuration>) {
        let rtt = match srtt {
            Some(r) => {
                self.has_seen_rtt = true;
                r.max(SimDuration::from_nanos(1))
            }
            None => self.cfg.nominal_rtt,
        };
        let bw = cwnd as f64 / rtt.as_secs_f64();
        self.pacing_rate = self.rate_at(bw, self.cfg.high_gain);
    }

    fn save_cwnd(&mut self, cwnd: u64) {
        if self.prev_state == CaState::Open && self.mode != BbrMode::ProbeRtt {
            self.prior_cwnd = cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(cwnd);
        }
    }

    fn advance_cycle_phase(&mut self, delivered_time: SimTime) {
        self.cycle_index = (self.cycle_index + 1) % self.cfg.cycle_len();
        self.cycle_stamp = delivered_time;
    }

    /// ProbeBW from a random phase other than the draining one: index len − 1 − U[0, n), then
    /// one step on (`bbr_reset_probe_bw_mode`).
    fn enter_probe_bw(&mut self, delivered_time: SimTime) {
        self.mode = BbrMode::ProbeBw;
        let draw = match &mut self.rng {
            Some(rng) => rng.below(self.cfg.random_phases as u64) as u32,
            None => 0,
        };
        self.cycle_index = self.cfg.cycle_len() - 1 - draw;
        self.advance_cycle_phase(delivered_time);
    }

    fn reset_mode(&mut self, delivered_time: SimTime) {
        if self.full_bw_reached {
            self.enter_probe_bw(delivered_time);
        } else {
            self.mode = BbrMode::Startup;
        }
    }

    fn update_bw(&mut self, rs: &RateSample) {
        self.round_start = false;
        if rs.interval == SimDuration::ZERO {
            return;
        }
        // A round ends when a segment sent after the round began is delivered.
        if rs.prior_delivered >= self.next_round_delivered {
            self.next_round_delivered = rs.delivered_total;
            self.rounds += 1;
            self.round_start = true;
            self.packet_conservation = false;
        }
        let bw = rs.delivered as f64 / rs.interval.as_secs_f64();
        // An app-limited sample says how fast the application was, not the path, unless it
        // beats the model.
        if !rs.is_app_limited || bw >= self.bw.get() {
            self.bw.update(self.cfg.bw_window_rounds, self.rounds, bw);
        }
    }

    /// `bbr_is_next_cycle_phase`: a phase lasts at least RTprop; the probing one until the
    /// flight reaches its target (or a loss says it will not fit), the draining one no longer
    /// than until the flight is down to the BDP.
    fn is_next_cycle_phase(&self, rs: &RateSample) -> bool {
        let full_length = rs.delivered_time.saturating_since(self.cycle_stamp) > self.min_rtt;
        if self.pacing_gain == 1.0 {
            return full_length;
        }
        let bw = self.bw.get();
        let inflight = rs.prior_in_flight;
        if self.pacing_gain > 1.0 {
            return full_length
                && (rs.losses > 0 || inflight >= self.inflight(bw, self.pacing_gain, rs.mss));
        }
        full_length || inflight <= self.inflight(bw, 1.0, rs.mss)
    }

    fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.full_bw_reached || !self.round_start || rs.is_app_limited {
            return;
        }
        let max_bw = self.bw.get();
        if max_bw >= self.full_bw * self.cfg.full_bw_threshold {
            self.full_bw = max_bw;
            self.full_bw_count = 0;
            return;
        }
        self.full_bw_count += 1;
        self.full_bw_reached = self.full_bw_count >= self.cfg.full_bw_rounds;
    }

    fn check_drain(&mut self, rs: &RateSample, w: &mut Window) {
        let bdp = self.inflight(self.bw.get(), 1.0, rs.mss);
        if self.mode == BbrMode::Startup && self.full_bw_reached {
            self.mode = BbrMode::Drain;
            // Linux sets ssthresh here; it reads nothing else of it.
            w.ssthresh = bdp;
        }
        if self.mode == BbrMode::Drain && rs.in_flight <= bdp {
            self.enter_probe_bw(rs.delivered_time);
        }
    }

    fn update_min_rtt(&mut self, now: SimTime, rs: &RateSample, w: &mut Window) {
        let expired = now > self.min_rtt_stamp + self.cfg.min_rtt_window;
        if let Some(rtt) = rs.rtt {
            if rtt < self.min_rtt || expired {
                self.min_rtt = rtt;
                self.min_rtt_stamp = now;
            }
        }
        if self.cfg.probe_rtt_duration > SimDuration::ZERO
            && expired
            && self.mode != BbrMode::ProbeRtt
        {
            self.mode = BbrMode::ProbeRtt;
            self.save_cwnd(w.cwnd);
            self.probe_rtt_done = None;
        }
        if self.mode != BbrMode::ProbeRtt {
            return;
        }
        let floor = self.cfg.min_cwnd_segments as u64 * rs.mss;
        match self.probe_rtt_done {
            None if rs.in_flight <= floor => {
                self.probe_rtt_done = Some(now + self.cfg.probe_rtt_duration);
                self.probe_rtt_round_done = false;
                self.next_round_delivered = rs.delivered_total;
            }
            None => {}
            Some(done) => {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done && now > done {
                    // `bbr_check_probe_rtt_done`: RTprop is fresh; the window comes back.
                    self.min_rtt_stamp = now;
                    w.cwnd = w.cwnd.max(self.prior_cwnd);
                    self.reset_mode(rs.delivered_time);
                }
            }
        }
    }

    fn update_gains(&mut self) {
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            BbrMode::Startup => (self.cfg.high_gain, self.cfg.high_gain),
            BbrMode::Drain => (self.cfg.drain_gain, self.cfg.high_gain),
            BbrMode::ProbeBw => (self.gain_of_phase(self.cycle_index), self.cfg.cwnd_gain),
            BbrMode::ProbeRtt => (1.0, 1.0),
        };
    }

    fn set_pacing_rate(&mut self, rs: &RateSample, cwnd: u64) {
        if !self.has_seen_rtt && rs.srtt.is_some() {
            self.init_pacing_rate(cwnd, rs.srtt);
        }
        let rate = self.rate_at(self.bw.get(), self.pacing_gain);
        // Until the pipe is full the rate only goes up: a low early sample must not slow
        // Startup.
        if self.full_bw_reached || rate > self.pacing_rate {
            self.pacing_rate = rate;
        }
    }

    /// `bbr_set_cwnd_to_recover_or_restore`: returns the cwnd after losses and recovery
    /// transitions, and whether packet conservation holds it.
    fn recover_or_restore(&mut self, rs: &RateSample, cwnd: u64) -> (u64, bool) {
        let mut cwnd = cwnd;
        if rs.losses > 0 {
            cwnd = cwnd.saturating_sub(rs.losses).max(rs.mss);
        }
        let state = rs.ca_state;
        let conserve_floor = rs.in_flight + rs.acked_sacked;
        if state == CaState::Recovery && self.prev_state != CaState::Recovery {
            // The first round of recovery: one segment out per segment delivered.
            self.packet_conservation = true;
            self.next_round_delivered = rs.delivered_total;
            cwnd = conserve_floor;
        } else if self.prev_state != CaState::Open && state == CaState::Open {
            cwnd = cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_state = state;
        if self.packet_conservation {
            return (cwnd.max(conserve_floor), true);
        }
        (cwnd, false)
    }

    fn set_cwnd(&mut self, rs: &RateSample, w: &mut Window) {
        let mss = rs.mss;
        let mut cwnd = w.cwnd;
        let acked = rs.acked_sacked;
        if acked > 0 {
            let (c, conserving) = self.recover_or_restore(rs, cwnd);
            cwnd = c;
            if !conserving {
                let target = self.budget(self.bdp(self.bw.get(), self.cwnd_gain, mss), mss);
                if self.full_bw_reached {
                    cwnd = cwnd.saturating_add(acked).min(target);
                } else if cwnd < target
                    || rs.delivered_total < self.cfg.init_cwnd_segments as u64 * mss
                {
                    cwnd = cwnd.saturating_add(acked);
                }
                cwnd = cwnd.max(self.cfg.min_cwnd_segments as u64 * mss);
            }
        }
        if self.mode == BbrMode::ProbeRtt {
            cwnd = cwnd.min(self.cfg.min_cwnd_segments as u64 * mss);
        }
        w.cwnd = cwnd;
    }
}

impl CongestionControl for Bbr {
    fn name(&self) -> &'static str {
        "bbr"
    }

    /// The window is set from the rate sample of every ACK instead.
    fn on_ack(&mut self, _now: SimTime, _ev: &AckEvent, _w: &mut Window) {}

    /// `bbr_ssthresh` and `bbr_set_state`: remember the window to restore after recovery; an
    /// RTO also ends the round and restarts full-pipe detection. ssthresh stays as it is.
    fn on_congestion(&mut self, _now: SimTime, ev: &CongestionEvent) -> u64 {
        self.save_cwnd(ev.window.cwnd);
        if ev.kind == CongestionKind::Rto {
            self.prev_state = CaState::Loss;
            self.full_bw = 0.0;
            self.round_start = true;
        }
        ev.window.ssthresh.max(2 * ev.mss)
    }

    fn samples_rate(&self) -> bool {
        true
    }

    fn on_rate_sample(&mut self, now: SimTime, rs: &RateSample, w: &mut Window) {
        if !self.started {
            // Linux's `bbr_init` at the connection's start: the filters' clocks and the first
            // pacing rate.
            self.started = true;
            self.min_rtt_stamp = now;
            self.init_pacing_rate(w.cwnd, rs.srtt);
        }
        self.update_bw(rs);
        if self.mode == BbrMode::ProbeBw && self.is_next_cycle_phase(rs) {
            self.advance_cycle_phase(rs.delivered_time);
        }
        self.check_full_bw_reached(rs);
        self.check_drain(rs, w);
        self.update_min_rtt(now, rs, w);
        self.update_gains();
        self.set_pacing_rate(rs, w.cwnd);
        self.set_cwnd(rs, w);
    }

    fn pacing_rate(&self) -> Option<u64> {
        (self.pacing_rate > 0).then_some(self.pacing_rate)
    }

    fn take_stream(&mut self, rng: RngStream) {
        self.rng = Some(rng);
    }

    fn draws(&self) -> bool {
        true
    }

    fn app_limited_now(&self) -> bool {
        // `bbr_update_min_rtt`: ProbeRTT's low-rate samples must not pull the model down.
        self.mode == BbrMode::ProbeRtt
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    #[test]
    fn the_max_filter_keeps_the_best_of_the_last_window_and_ages_it_out() {
        // Window 10 rounds. 100 at round 0; smaller samples become second and third choices.
        let mut f = MaxFilter::default();
        assert_eq!(f.update(10, 0, 100.0), 100.0);
        assert_eq!(f.update(10, 3, 80.0), 100.0);
        // Round 3 > 10/4 with no second choice: 80 became second and third.
        assert_eq!(f.s, [(0, 100.0), (3, 80.0), (3, 80.0)]);
        assert_eq!(f.update(10, 6, 60.0), 100.0);
        // Round 6 > 10/2 since the best with the third equal to the second: 60 is third.
        assert_eq!(f.s, [(0, 100.0), (3, 80.0), (6, 60.0)]);
        // Round 11: 100 (round 0) is 11 > 10 rounds old: 80 is the best now.
        assert_eq!(f.update(10, 11, 50.0), 80.0);
        assert_eq!(f.s, [(3, 80.0), (6, 60.0), (11, 50.0)]);
        // Round 14: 80 aged out too, then 60 (round 6) is within the window.
        assert_eq!(f.update(10, 14, 40.0), 60.0);
        // A new maximum replaces all three.
        assert_eq!(f.update(10, 15, 90.0), 90.0);
        assert_eq!(f.s, [(15, 90.0); 3]);
        // Nothing left in the window (third choice older than 10 rounds): the sample is all.
        assert_eq!(f.update(10, 26, 10.0), 10.0);
    }

    fn sample(
        delivered_total: u64,
        prior_delivered: u64,
        interval_ms: u64,
        delivered: u64,
        in_flight: u64,
        t: SimTime,
    ) -> RateSample {
        RateSample {
            delivered,
            interval: SimDuration::from_millis(interval_ms),
            prior_delivered,
            delivered_total,
            delivered_time: t,
            is_app_limited: false,
            rtt: Some(SimDuration::from_millis(100)),
            acked_sacked: MSS,
            losses: 0,
            prior_in_flight: in_flight,
            in_flight,
            mss: MSS,
            srtt: Some(SimDuration::from_millis(100)),
            ca_state: CaState::Open,
        }
    }

    #[test]
    fn startup_ends_after_three_rounds_without_25_percent_growth_then_drain_then_probe_bw() {
        // One sample per round (each delivers a whole round's data, prior_delivered at the
        // round's start), RTT 100 ms. Rates 10, 20, 40, 45, 50, 52 segments per 100 ms.
        let mut b = BbrConfig::default().build();
        b.take_stream(RngStream::derive(1, "test/bbr"));
        let mut w = Window {
            cwnd: 10 * MSS,
            ssthresh: u64::MAX,
        };
        let rates = [10u64, 20, 40, 45, 50, 52];
        let mut total = 0;
        for (k, &r) in rates.iter().enumerate() {
            let prior = total;
            total += r * MSS;
            let t = SimTime::from_millis(100 * (k as u64 + 1));
            b.on_rate_sample(t, &sample(total, prior, 100, r * MSS, 100 * MSS, t), &mut w);
            // Rounds 1-3 grow by ≥ 25 % (full_bw 10, 20, 40 segments/RTT); round 4: 45 < 50,
            // round 5: 50 ≥ 50 resets, round 6: 52 < 62.5 ... so not yet.
            assert_eq!(b.rounds(), k as u64 + 1);
        }
        assert_eq!(b.mode(), BbrMode::Startup);
        assert!(!b.full_bw_reached());
        // Three more rounds at 52: 52 < 62.5 three times running from round 6.
        for k in 6..8 {
            let prior = total;
            total += 52 * MSS;
            let t = SimTime::from_millis(100 * (k + 1));
            b.on_rate_sample(
                t,
                &sample(total, prior, 100, 52 * MSS, 200 * MSS, t),
                &mut w,
            );
        }
        assert!(b.full_bw_reached());
        assert_eq!(
            b.mode(),
            BbrMode::Drain,
            "inflight 200 segments is above the BDP"
        );
        assert!((b.pacing_gain() - 1.0 / 2.885).abs() < 1e-12);
        // BDP = 520 kB/s · 0.1 s = 52 segments; + 3 = 55, rounded to even: 56.
        assert_eq!(w.ssthresh, 56 * MSS);
        // Inflight down to 56 segments: ProbeBW at a phase other than the draining one.
        let prior = total;
        total += 52 * MSS;
        let t = SimTime::from_millis(900);
        b.on_rate_sample(t, &sample(total, prior, 100, 52 * MSS, 56 * MSS, t), &mut w);
        assert_eq!(b.mode(), BbrMode::ProbeBw);
        assert_ne!(b.cycle_index(), 1);
        // cwnd: 2 · BDP + budget = 104 + 3 → 108 segments (+2 when in the probing phase),
        // reached by +1 segment per ACK from wherever it was, never above.
        assert!(w.cwnd <= 110 * MSS);
    }

    #[test]
    fn probe_bw_cycles_through_the_gains_phase_by_phase() {
        let mut b = BbrConfig {
            random_phases: 1,
            ..BbrConfig::default()
        }
        .build();
        b.take_stream(RngStream::derive(1, "test/bbr"));
        // Put it in ProbeBW with a model of 100 segments per 100 ms, RTprop 100 ms.
        b.started = true;
        b.min_rtt = SimDuration::from_millis(100);
        b.bw.reset(0, 1_000_000.0);
        b.full_bw_reached = true;
        b.enter_probe_bw(SimTime::ZERO);
        b.update_gains();
        // random_phases 1: the draw is 0, index 7 then one step: the probing phase.
        assert_eq!(b.cycle_index(), 0);
        assert_eq!(b.pacing_gain(), 1.25);
        let mut w = Window {
            cwnd: 200 * MSS,
            ssthresh: u64::MAX,
        };
        let mut gains = vec![];
        let mut total = 1_000_000;
        for k in 1..=9u64 {
            // One ACK per 101 ms (just over RTprop), the flight at 1.25 BDP + budget (130
            // segments) so the probing phase may end, at the BDP so the draining one may.
            let t = SimTime::from_millis(101 * k);
            let inflight = if b.cycle_index() == 0 { 130 } else { 100 } * MSS;
            total += 100 * MSS;
            let rs = sample(total, total - 100 * MSS, 100, 100 * MSS, inflight, t);
            b.on_rate_sample(t, &rs, &mut w);
            gains.push(b.pacing_gain());
        }
        assert_eq!(
            gains,
            vec![0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.25, 0.75],
            "1.25, 0.75 and six phases at 1"
        );
        // Pacing rate: 1 MB/s · 0.75 · 0.99.
        assert_eq!(b.pacing_rate(), Some(742_500));
    }

    #[test]
    fn probe_rtt_holds_four_segments_for_200_ms_and_a_round_after_10_s_without_a_lower_rtt() {
        let mut b = BbrConfig::default().build();
        b.started = true;
        b.min_rtt = SimDuration::from_millis(100);
        b.min_rtt_stamp = SimTime::ZERO;
        b.bw.reset(0, 1_000_000.0);
        b.full_bw_reached = true;
        b.enter_probe_bw(SimTime::ZERO);
        let mut w = Window {
            cwnd: 200 * MSS,
            ssthresh: u64::MAX,
        };
        let mut total = 10_000_000;
        fn ack(b: &mut Bbr, w: &mut Window, total: &mut u64, ms: u64, inflight: u64) {
            *total += MSS;
            let t = SimTime::from_millis(ms);
            let mut rs = sample(
                *total,
                *total - 100 * MSS,
                100,
                100 * MSS,
                inflight * MSS,
                t,
            );
            rs.rtt = Some(SimDuration::from_millis(120));
            b.on_rate_sample(t, &rs, w);
        }
        ack(&mut b, &mut w, &mut total, 9_999, 200);
        assert_ne!(b.mode(), BbrMode::ProbeRtt);
        // 10 s and a bit after the last lower RTT: ProbeRTT, cwnd 4 segments, the old one kept.
        ack(&mut b, &mut w, &mut total, 10_001, 200);
        assert_eq!(b.mode(), BbrMode::ProbeRtt);
        assert_eq!(w.cwnd, 4 * MSS);
        // 201: the ACK at 9.999 s grew it by one segment toward ProbeBW's target.
        assert_eq!(b.prior_cwnd, 201 * MSS);
        assert_eq!(
            b.min_rtt(),
            Some(SimDuration::from_millis(120)),
            "expired: taken"
        );
        // The flight drains to 4 segments at 10.1 s: 200 ms from there.
        ack(&mut b, &mut w, &mut total, 10_100, 4);
        assert_eq!(b.probe_rtt_done, Some(SimTime::from_millis(10_300)));
        // A round ends (a segment sent after 10.1 s delivered), but 200 ms have not passed.
        total += 200 * MSS;
        ack(&mut b, &mut w, &mut total, 10_250, 4);
        assert_eq!(b.mode(), BbrMode::ProbeRtt);
        assert_eq!(w.cwnd, 4 * MSS);
        ack(&mut b, &mut w, &mut total, 10_301, 4);
        assert_eq!(b.mode(), BbrMode::ProbeBw);
        // The window before ProbeRTT is back, and grows by this ACK's segment toward the target.
        assert_eq!(w.cwnd, 202 * MSS);
    }

    #[test]
    fn recovery_conserves_packets_in_its_first_round_and_restores_the_window_after() {
        let mut b = BbrConfig::default().build();
        b.started = true;
        b.min_rtt = SimDuration::from_millis(100);
        b.bw.reset(0, 1_000_000.0);
        b.full_bw_reached = true;
        b.enter_probe_bw(SimTime::ZERO);
        let mut w = Window {
            cwnd: 100 * MSS,
            ssthresh: u64::MAX,
        };
        // Fast retransmit: the window is saved, ssthresh left alone.
        let ev = CongestionEvent {
            kind: CongestionKind::DupAck,
            flight_size: 100 * MSS,
            window: w,
            mss: MSS,
        };
        assert_eq!(b.on_congestion(SimTime::ZERO, &ev), u64::MAX);
        // The ACK that entered recovery SACKed one segment, 3 marked lost, pipe 96: cwnd =
        // pipe + delivered = 97 segments.
        let t = SimTime::from_millis(50);
        let mut rs = sample(1_001_000, 1_000_000, 100, 100 * MSS, 96 * MSS, t);
        rs.ca_state = CaState::Recovery;
        rs.losses = 3 * MSS;
        b.on_rate_sample(t, &rs, &mut w);
        assert_eq!(w.cwnd, 97 * MSS);
        // Next ACK in the same round: cwnd = max(cwnd, pipe + delivered).
        rs.losses = 0;
        rs.in_flight = 90 * MSS;
        rs.delivered_total += MSS;
        b.on_rate_sample(t, &rs, &mut w);
        assert_eq!(w.cwnd, 97 * MSS);
        // Recovery ends: at least the saved 100 segments.
        rs.ca_state = CaState::Open;
        rs.in_flight = 50 * MSS;
        b.on_rate_sample(t, &rs, &mut w);
        assert!(w.cwnd >= 100 * MSS, "cwnd {}", w.cwnd);
    }
}
