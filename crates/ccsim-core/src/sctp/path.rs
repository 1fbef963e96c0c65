// SPDX-License-Identifier: MIT
//! One destination of an association (a "path", RFC 4960 §6.4): its congestion window, slow
//! start threshold, partial bytes acked, flight size, RTO, T3-rtx timer, error counter and
//! heartbeat state, and the congestion-control rules of §7.2 that act on them.
//!
//! ```text
//!   SACK that advances the cum ack, window was full before it, not in Fast Recovery:
//!     cwnd <= ssthresh   cwnd += min(bytes newly acked here, MTU)          §7.2.1
//!     cwnd >  ssthresh   pba += acked; pba >= cwnd: cwnd += MTU, pba -= cwnd  §7.2.2
//!   loss seen by SACK    ssthresh = max(cwnd/2, 4·MTU), cwnd = ssthresh      §7.2.3
//!   T3-rtx expiry        ssthresh = max(cwnd/2, 4·MTU), cwnd = 1·MTU, RTO doubles  §6.3.3
//! ```

use crate::packet::{Addr, SctpHeartbeat};
use crate::rng::RngStream;
use crate::tcp::rto::{RtoConfig, RtoEstimator};
use crate::time::{SimDuration, SimTime};

use super::config::SctpSpec;

/// What one path did, for the per-path results.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PathCounters {
    /// DATA packets sent on this path, retransmissions included, and their user data bytes.
    pub data_packets: u64,
    pub data_bytes: u64,
    pub retransmits: u64,
    pub fast_retransmits: u64,
    /// T3-rtx expiries of this path.
    pub timeouts: u64,
    /// User data bytes first acknowledged by a SACK for chunks last sent on this path.
    pub bytes_acked: u64,
    pub heartbeats: u64,
    pub heartbeat_acks: u64,
    /// Times the path went from active to inactive (§8.2).
    pub failures: u64,
}

pub struct Path {
    pub local: Addr,
    pub peer: Addr,
    pub cwnd: u64,
    pub ssthresh: u64,
    /// partial_bytes_acked (§7.2.2).
    pub pba: u64,
    /// Bytes of DATA sent here and neither acknowledged nor marked for retransmission.
    pub flight: u64,
    pub rto: RtoEstimator,
    /// The T3-rtx deadline (§6.3.2), when data is outstanding.
    pub t3: Option<SimTime>,
    /// Consecutive T3 expiries or unanswered heartbeats (§8.2).
    pub error_count: u32,
    pub active: bool,
    /// The chunk timed for an RTT sample (one per round trip, never a retransmission: §6.3.1).
    pub rtt_probe: Option<(u32, SimTime)>,
    /// When to send the next HEARTBEAT if no data goes here before then (§8.3).
    pub hb_next: SimTime,
    /// A HEARTBEAT not yet answered: when it was sent.
    pub hb_sent: Option<SimTime>,
    pub counters: PathCounters,
    /// Per-SACK scratch of the sender (kept here so that a SACK allocates nothing): the flight
    /// before the SACK, the bytes it newly acked here, the earliest TSN outstanding here.
    pub(crate) sack_flight_before: u64,
    pub(crate) sack_acked: u64,
    pub(crate) sack_earliest: Option<u32>,
    /// The lowest and highest TSN the SACK newly acked here (CMT's SFR and DAC).
    pub(crate) sack_lowest: Option<u32>,
    pub(crate) sack_highest: Option<u32>,
    /// CMT: this path's own Fast Recovery, until the cum ack passes this TSN.
    pub(crate) fr_exit: Option<u32>,
    /// CMT and LS: packets sent here in the current send opportunity (Max.Burst per
    /// destination, §6.1 D).
    pub(crate) burst: u32,
    /// Coupled increase: the fraction of a byte of cwnd earned and not yet added.
    lia_credit: f64,
}

impl Path {
    pub fn new(local: Addr, peer: Addr, spec: &SctpSpec, start: SimTime) -> Path {
        let rto = RtoEstimator::new(RtoConfig {
            initial: spec.rto_initial,
            min: spec.rto_min,
            max: spec.rto_max,
            granularity: SimDuration::ZERO,
        });
        Path {
            local,
            peer,
            cwnd: spec.initial_cwnd(),
            ssthresh: spec.initial_ssthresh.unwrap_or(spec.rcv_buffer),
            pba: 0,
            flight: 0,
            hb_next: start + rto.rto() + spec.hb_interval,
            rto,
            t3: None,
            error_count: 0,
            active: true,
            rtt_probe: None,
            hb_sent: None,
            counters: PathCounters::default(),
            sack_flight_before: 0,
            sack_acked: 0,
            sack_earliest: None,
            sack_lowest: None,
            sack_highest: None,
            fr_exit: None,
            burst: 0,
            lia_credit: 0.0,
        }
    }

    /// Growth on a SACK that advanced the cumulative ack point and newly acked `acked` bytes sent
    /// on this path; `flight_before` is this path's flight size before the SACK (§7.2.1,
    /// §7.2.2). No growth in Fast Recovery or when the window was not full.
    pub fn grow(&mut self, acked: u64, flight_before: u64, in_fast_recovery: bool, mtu: u64) {
        if acked == 0 {
            return;
        }
        if self.cwnd <= self.ssthresh {
            if flight_before >= self.cwnd && !in_fast_recovery {
                self.cwnd += acked.min(mtu);
            }
        } else {
            self.pba += acked;
            if self.pba >= self.cwnd && flight_before >= self.cwnd {
                // ns-2 (the paper's tool) subtracts the cwnd before the increase: exactly one MTU
                // per cwnd bytes acked.
                self.pba -= self.cwnd;
                self.cwnd += mtu;
            }
        }
    }

    /// [`Path::grow`] with RFC 6356's coupled increase (LIA) in congestion avoidance: the
    /// window rises by min(α·acked·MTU / cwnd_total, acked·MTU / cwnd) bytes, so that all
    /// paths together take no more than one flow would on the best of them; `alpha` and
    /// `cwnd_total` come from [`lia_alpha`]. Slow start is unchanged.
    pub fn grow_coupled(
        &mut self,
        acked: u64,
        flight_before: u64,
        in_fast_recovery: bool,
        mtu: u64,
        (alpha, cwnd_total): (f64, f64),
    ) {
        if acked == 0 || self.cwnd <= self.ssthresh {
            self.grow(acked, flight_before, in_fast_recovery, mtu);
            return;
        }
        if flight_before < self.cwnd || in_fast_recovery {
            return;
        }
        let (a, m) = (acked as f64, mtu as f64);
        let coupled = alpha * a * m / cwnd_total.max(1.0);
        let alone = a * m / self.cwnd as f64;
        self.lia_credit += coupled.min(alone);
        let whole = self.lia_credit as u64;
        self.cwnd += whole;
        self.lia_credit -= whole as f64;
    }

    /// A loss seen through SACKs (§7.2.3).
    pub fn cut_on_fast_retransmit(&mut self, mtu: u64) {
        self.ssthresh = (self.cwnd / 2).max(4 * mtu);
        self.cwnd = self.ssthresh;
        self.pba = 0;
    }

    /// The T3-rtx timer expired (§6.3.3 E1, E2; §7.2.3).
    pub fn cut_on_timeout(&mut self, mtu: u64) {
        self.ssthresh = (self.cwnd / 2).max(4 * mtu);
        self.cwnd = mtu;
        self.pba = 0;
        self.rto.on_expiry();
    }

    /// One more consecutive failure (T3 expiry or unanswered HEARTBEAT); past
    /// Path.Max.Retrans the path becomes inactive (§8.2). Returns true if it just did.
    pub fn count_error(&mut self, path_max_retrans: u32) -> bool {
        self.error_count += 1;
        if self.active && self.error_count > path_max_retrans {
            self.active = false;
            self.counters.failures += 1;
            return true;
        }
        false
    }

    /// Data sent here was acknowledged, or a HEARTBEAT ACK came back: the path works (§8.2).
    pub fn confirm(&mut self) {
        self.error_count = 0;
        self.active = true;
    }

    pub fn srtt(&self) -> Option<SimDuration> {
        self.rto.srtt()
    }

    /// Start timing `number` (a TSN, or an SSN in LS mode) if nothing is timed here: one
    /// sample per round trip (§6.3.1 C4).
    pub fn time(&mut self, number: u32, now: SimTime) {
        if self.rtt_probe.is_none() {
            self.rtt_probe = Some((number, now));
        }
    }

    /// `number` is sent again: Karn's rule, a retransmitted chunk gives no sample (§6.3.1 C5).
    pub fn untime(&mut self, number: u32) {
        if self.rtt_probe.is_some_and(|(t, _)| t == number) {
            self.rtt_probe = None;
        }
    }

    /// `number` is acknowledged: if it was the one timed, its round trip is an RTT sample for
    /// the RTO (§6.3.1), returned.
    pub fn sample_if_timed(&mut self, number: u32, now: SimTime) -> Option<SimDuration> {
        let (probe, at) = self.rtt_probe?;
        if probe != number {
            return None;
        }
        let r = now.saturating_since(at);
        self.rto.on_sample(r);
        self.rtt_probe = None;
        Some(r)
    }

    /// This path's T3-rtx timer expired (§6.3.3 E1, E2; §8.2): cut the window, back off the
    /// RTO, forget the chunk timed and count a failure. The caller marks its chunks.
    pub fn expire_t3(&mut self, mtu: u64, path_max_retrans: u32) {
        self.t3 = None;
        self.counters.timeouts += 1;
        self.cut_on_timeout(mtu);
        self.rtt_probe = None;
        self.count_error(path_max_retrans);
    }

    /// When this path's heartbeat state next needs the sender: the unanswered HEARTBEAT's RTO,
    /// or the next one's time.
    pub fn heartbeat_deadline(&self) -> SimTime {
        match self.hb_sent {
            Some(sent) => sent + self.rto.rto(),
            None => self.hb_next,
        }
    }

    /// Heartbeats (§8.3): a HEARTBEAT unanswered for an RTO is a failure and backs off the
    /// RTO; an idle path gets one every RTO + `hb_interval`, jittered by ±50 % of the RTO from
    /// `rng`. Returns the HEARTBEAT to send on path `index`, if one is due.
    pub fn heartbeat_timer(
        &mut self,
        index: usize,
        now: SimTime,
        path_max_retrans: u32,
        hb_interval: SimDuration,
        rng: &mut RngStream,
    ) -> Option<SctpHeartbeat> {
        if let Some(sent) = self.hb_sent {
            if now >= sent + self.rto.rto() {
                self.hb_sent = None;
                self.rto.on_expiry();
                self.count_error(path_max_retrans);
            }
        }
        if now < self.hb_next || self.hb_sent.is_some() {
            return None;
        }
        let rto = self.rto.rto().as_nanos() as f64;
        let jitter = SimDuration::from_nanos((rto * (0.5 + rng.uniform())) as u64);
        self.hb_sent = Some(now);
        self.hb_next = now + jitter + hb_interval;
        self.counters.heartbeats += 1;
        Some(SctpHeartbeat {
            path: index as u8,
            sent_at: now,
        })
    }
}

/// RFC 6356 §3: α = cwnd_total · max_i(cwnd_i / rtt_i²) / (Σ_i cwnd_i / rtt_i)², over the
/// active paths (an RTT not yet measured counts as the path's RTO); returns (α, cwnd_total).
pub fn lia_alpha<'p>(paths: impl Iterator<Item = &'p Path> + Clone) -> (f64, f64) {
    let rtt = |p: &Path| p.srtt().unwrap_or(p.rto.rto()).as_nanos().max(1) as f64 * 1e-9;
    let active = paths.filter(|p| p.active);
    let total: f64 = active.clone().map(|p| p.cwnd as f64).sum();
    let best = active
        .clone()
        .map(|p| p.cwnd as f64 / (rtt(p) * rtt(p)))
        .fold(0.0, f64::max);
    let sum: f64 = active.map(|p| p.cwnd as f64 / rtt(p)).sum();
    if sum <= 0.0 {
        return (1.0, total);
    }
    (total * best / (sum * sum), total)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path() -> Path {
        Path::new(0, 1, &SctpSpec::default(), SimTime::ZERO)
    }
    const MTU: u64 = 1500;

    #[test]
    fn the_initial_cwnd_at_mtu_1500_is_4380_bytes() {
        assert_eq!(path().cwnd, 4380);
        let jumbo = SctpSpec {
            packet_size: 9000,
            ..SctpSpec::default()
        };
        assert_eq!(jumbo.initial_cwnd(), 18_000, "2·MTU above 4380");
    }

    #[test]
    fn a_t3_expiry_leaves_one_mtu_and_doubles_the_rto_up_to_60_s() {
        let mut p = path();
        p.cwnd = 20_000;
        p.cut_on_timeout(MTU);
        assert_eq!((p.cwnd, p.ssthresh), (1500, 10_000));
        assert_eq!(p.rto.rto(), SimDuration::from_secs(6));
        for _ in 0..10 {
            p.cut_on_timeout(MTU);
        }
        assert_eq!(p.rto.rto(), SimDuration::from_secs(60));
        assert_eq!(p.ssthresh, 6000, "4·MTU floor");
    }

    #[test]
    fn slow_start_adds_at_most_one_mtu_and_nothing_when_the_window_was_not_full_or_in_recovery() {
        let mut p = path();
        p.grow(2 * 1452, 4380, false, MTU);
        assert_eq!(p.cwnd, 4380 + 1500);
        p.grow(1452, p.cwnd, false, MTU);
        assert_eq!(p.cwnd, 4380 + 1500 + 1452, "min(acked, MTU)");
        let before = p.cwnd;
        p.grow(2904, before - 1, false, MTU);
        assert_eq!(p.cwnd, before, "flight was below cwnd");
        p.grow(2904, before, true, MTU);
        assert_eq!(p.cwnd, before, "in Fast Recovery");
    }

    #[test]
    fn congestion_avoidance_adds_exactly_one_mtu_per_cwnd_bytes_acked_while_window_limited() {
        let mut p = path();
        p.cwnd = 15_000;
        p.ssthresh = 10_000;
        // 10 SACKs of 1500 bytes each: 15000 bytes = one cwnd.
        for i in 0..10 {
            p.grow(1500, 15_000, false, MTU);
            let expect = if i < 9 { 15_000 } else { 16_500 };
            assert_eq!(p.cwnd, expect, "after SACK {i}");
        }
        assert_eq!(p.pba, 0);
        // Not window-limited: pba grows, cwnd does not.
        for _ in 0..20 {
            p.grow(1500, 1000, false, MTU);
        }
        assert_eq!(p.cwnd, 16_500);
    }

    #[test]
    fn a_sack_detected_loss_halves_cwnd_with_a_floor_of_four_mtus() {
        let mut p = path();
        p.cwnd = 20_000;
        p.cut_on_fast_retransmit(MTU);
        assert_eq!((p.ssthresh, p.cwnd), (10_000, 10_000));
        p.cwnd = 8000;
        p.cut_on_fast_retransmit(MTU);
        assert_eq!((p.ssthresh, p.cwnd), (6000, 6000));
    }

    #[test]
    fn the_sixth_consecutive_failure_makes_a_path_inactive_with_path_max_retrans_5() {
        let mut p = path();
        for _ in 0..5 {
            assert!(!p.count_error(5));
        }
        assert!(p.active);
        assert!(p.count_error(5));
        assert!(!p.active);
        p.confirm();
        assert!(p.active);
        assert_eq!(p.error_count, 0);
    }

    #[test]
    fn coupled_increase_on_two_equal_paths_gives_each_half_of_what_it_would_get_alone() {
        // Two paths of equal cwnd and RTT: α = 2c · (c/r²) / (2c/r)² = 1/2, and each path's
        // increase is α·acked·MTU / (2c) = a quarter of acked·MTU / c; together they grow
        // by half of what one uncoupled path would.
        let mut a = path();
        let mut b = path();
        for p in [&mut a, &mut b] {
            p.cwnd = 30_000;
            p.ssthresh = 10_000;
            p.rto.on_sample(SimDuration::from_millis(100));
        }
        let (alpha, total) = lia_alpha([&a, &b].into_iter());
        assert!((alpha - 0.5).abs() < 1e-12, "{alpha}");
        assert_eq!(total, 60_000.0);
        // One window of acked bytes: uncoupled +1500, coupled +1500/4.
        for _ in 0..20 {
            let window_full = a.cwnd;
            a.grow_coupled(1500, window_full, false, MTU, (alpha, total));
        }
        // (Within one byte: α and the RTTs are floating point, the window whole bytes.)
        assert!((30_374..=30_375).contains(&a.cwnd), "{}", a.cwnd);
    }

    #[test]
    fn a_first_rtt_sample_of_200_ms_gives_an_rto_clamped_to_one_second() {
        let mut p = path();
        assert_eq!(p.rto.rto(), SimDuration::from_secs(3), "RTO.Initial");
        p.rto.on_sample(SimDuration::from_millis(200));
        assert_eq!(p.srtt(), Some(SimDuration::from_millis(200)));
        // SRTT + 4·RTTVAR = 0.2 + 4·0.1 = 0.6 s, below RTO.Min.
        assert_eq!(p.rto.rto(), SimDuration::from_secs(1));
    }
}
