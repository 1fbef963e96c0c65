// SPDX-License-Identifier: MIT
//! UDP traffic sources and sink, and the arrival process of short TCP flows.
//!
//! ```text
//!   CbrSource    ──datagram every size·8/rate s────────────────────────────> UdpSink
//!   OnOffSource  ──[on: as CBR]──[off: silent]──[on]── ...  ───────────────> UdpSink
//!   ShortFlowArrivals: Poisson arrivals (exponential gaps) × size distribution -> TCP transfers
//! ```
//!
//! Send times are exact integers: the k-th datagram of a CBR stream (or of an on period) leaves
//! at `start + floor(k · size·8·1e9 / rate)` ns. The gap between datagrams comes from a
//! [`Serializer`], which carries the sub-nanosecond remainder, so rounding never accumulates.
//!
//! The sources are sans-IO [`Endpoint`]s: `poll_timeout` is the next send time, and
//! `handle_timeout(now)` sends every datagram whose time is `<= now` (none on a stale wake-up,
//! several on a late one). Datagrams carry `sent_at = now`, the time they were handed to the
//! network.

use crate::endpoint::{Endpoint, FlowCounters};
use crate::packet::{Addr, FlowId, Packet, Port, Transport, UdpHeader};
use crate::rng::RngStream;
use crate::scenario::spec::SizeDist;
use crate::time::{Rate, Serializer, SimDuration, SimTime};

/// IPv4 header (20 B, RFC 791) + UDP header (8 B, RFC 768): the payload of a datagram of IP
/// size `s` is `s − 28`.
pub const UDP_IP_HEADER_BYTES: u32 = 28;

/// What a UDP source sends, from where to where, and when.
#[derive(Clone, Debug, PartialEq)]
pub struct UdpConfig {
    pub addr: Addr,
    pub dst_addr: Addr,
    pub port: Port,
    pub dst_port: Port,
    pub flow: FlowId,
    /// First datagram.
    pub start: SimTime,
    /// No datagram at or after this time (None: never stops).
    pub stop: Option<SimTime>,
    pub rate: Rate,
    /// IP bytes per datagram, headers included.
    pub packet_size: u32,
}

impl UdpConfig {
    /// Whether a datagram may still be sent at `t` (`stop` is exclusive).
    #[inline]
    fn before_stop(&self, t: SimTime) -> bool {
        t != SimTime::MAX && self.stop.is_none_or(|s| t < s)
    }

    #[inline]
    fn datagram(&self, seq: u64, now: SimTime) -> Packet {
        Packet {
            src: self.addr,
            dst: self.dst_addr,
            size: self.packet_size,
            dscp: 0,
            ecn: 0,
            ttl: crate::packet::DEFAULT_TTL,
            flow: self.flow,
            sent_at: now,
            transport: Transport::Udp(UdpHeader {
                src_port: self.port,
                dst_port: self.dst_port,
                seq,
                len: self.packet_size.saturating_sub(UDP_IP_HEADER_BYTES),
            }),
        }
    }
}

/// Sends one datagram and accounts it in the source counters.
#[inline]
fn emit(
    cfg: &UdpConfig,
    seq: &mut u64,
    counters: &mut FlowCounters,
    now: SimTime,
    out: &mut Vec<Packet>,
) {
    let p = cfg.datagram(*seq, now);
    *seq += 1;
    counters.bytes_sent += p.payload_len() as u64;
    counters.wire_bytes_sent += p.size as u64;
    counters.packets_sent += 1;
    if counters.first_send.is_none() {
        counters.first_send = Some(now);
    }
    out.push(p);
}

/// Constant bit rate: one datagram every `packet_size·8/rate` seconds from `start` until `stop`
/// (exclusive).
#[derive(Clone, Debug)]
pub struct CbrSource {
    cfg: UdpConfig,
    /// Scheduled time of the next datagram.
    next: SimTime,
    ser: Serializer,
    seq: u64,
    counters: FlowCounters,
}

impl CbrSource {
    pub fn new(cfg: UdpConfig) -> CbrSource {
        CbrSource {
            next: cfg.start,
            cfg,
            ser: Serializer::default(),
            seq: 0,
            counters: FlowCounters::default(),
        }
    }

    pub fn counters(&self) -> &FlowCounters {
        &self.counters
    }
}

impl Endpoint for CbrSource {
    /// A source receives nothing it needs; anything addressed to it is ignored.
    fn handle_packet(&mut self, _now: SimTime, _pkt: Packet, _out: &mut Vec<Packet>) {}

    fn handle_timeout(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        while self.next <= now && self.cfg.before_stop(self.next) {
            emit(&self.cfg, &mut self.seq, &mut self.counters, now, out);
            self.next += self.ser.next(self.cfg.rate, self.cfg.packet_size as u64);
        }
    }

    fn poll_timeout(&self) -> Option<SimTime> {
        self.cfg.before_stop(self.next).then_some(self.next)
    }
}

/// On-off source: sends as a CBR source at `rate` during on periods and is silent during off
/// periods, starting with an on period at `start`.
///
/// Each on period restarts the CBR clock: its datagrams leave at `on_start + floor(k·T)` for
/// every k with `k·T < on_length` (T = packet_size·8/rate), so with deterministic periods every
/// on period sends exactly `ceil(on/T)` datagrams (84 ms at 10 Mbit/s with 1000 B: 105), and the
/// long-run rate is `rate·on/(on+off)` when T divides `on`. With exponential periods the mean
/// rate is `rate·on/(on+off)` plus on average about half a datagram per on period (the first
/// datagram of a period leaves at its very start).
///
/// With `exponential`, each on and off length is drawn from an exponential distribution with
/// mean `on` or `off` (rounded to the nanosecond), in the order on₁, off₁, on₂, off₂, … — one
/// draw per period, made when the previous period's sending is over (the draw sequence, hence
/// the run, does not depend on when the engine calls the source).
#[derive(Clone, Debug)]
pub struct OnOffSource {
    cfg: UdpConfig,
    on: SimDuration,
    off: SimDuration,
    exponential: bool,
    rng: RngStream,
    /// End (exclusive) of the current on period.
    on_end: SimTime,
    /// Scheduled time of the next datagram: always inside the current on period, or
    /// `SimTime::MAX` when the source will send nothing more.
    next: SimTime,
    ser: Serializer,
    seq: u64,
    counters: FlowCounters,
}

impl OnOffSource {
    pub fn new(
        cfg: UdpConfig,
        on: SimDuration,
        off: SimDuration,
        exponential: bool,
        rng: RngStream,
    ) -> OnOffSource {
        let mut s = OnOffSource {
            next: cfg.start,
            on_end: cfg.start,
            cfg,
            on,
            off,
            exponential,
            rng,
            ser: Serializer::default(),
            seq: 0,
            counters: FlowCounters::default(),
        };
        if on == SimDuration::ZERO {
            // Never on: a silent source (the scenario layer requires on > 0).
            s.next = SimTime::MAX;
        } else {
            s.on_end = s.cfg.start + s.draw(s.on);
            s.settle();
        }
        s
    }

    pub fn counters(&self) -> &FlowCounters {
        &self.counters
    }

    /// The length of the next period of mean (or fixed length) `mean`.
    fn draw(&mut self, mean: SimDuration) -> SimDuration {
        if self.exponential {
            SimDuration::from_secs_f64(self.rng.exponential(mean.as_secs_f64()))
        } else {
            mean
        }
    }

    /// Moves `next` into an on period: while it falls at or after the end of the current one,
    /// skip an off period and start the next on period (CBR clock reset). Sets `next` to
    /// `SimTime::MAX` once no datagram can be sent before `stop`.
    fn settle(&mut self) {
        while self.next >= self.on_end {
            if !self.cfg.before_stop(self.on_end) {
                // The next on period would start at or after stop (or beyond the end of time).
                self.next = SimTime::MAX;
                return;
            }
            let on_start = self.on_end + self.draw(self.off);
            self.on_end = on_start + self.draw(self.on);
            self.ser.reset();
            self.next = on_start;
        }
        if !self.cfg.before_stop(self.next) {
            self.next = SimTime::MAX;
        }
    }
}

impl Endpoint for OnOffSource {
    /// A source receives nothing it needs; anything addressed to it is ignored.
    fn handle_packet(&mut self, _now: SimTime, _pkt: Packet, _out: &mut Vec<Packet>) {}

    fn handle_timeout(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        // `next` is always inside an on period and before stop, or MAX.
        while self.next <= now && self.next != SimTime::MAX {
            emit(&self.cfg, &mut self.seq, &mut self.counters, now, out);
            self.next += self.ser.next(self.cfg.rate, self.cfg.packet_size as u64);
            self.settle();
        }
    }

    fn poll_timeout(&self) -> Option<SimTime> {
        (self.next != SimTime::MAX).then_some(self.next)
    }
}

/// Receiving end of a UDP flow: counts datagrams and their payload.
#[derive(Clone, Debug)]
pub struct UdpSink {
    flow: FlowId,
    counters: FlowCounters,
}

impl UdpSink {
    pub fn new(flow: FlowId) -> UdpSink {
        UdpSink {
            flow,
            counters: FlowCounters::default(),
        }
    }

    pub fn flow(&self) -> FlowId {
        self.flow
    }

    pub fn counters(&self) -> &FlowCounters {
        &self.counters
    }
}

impl Endpoint for UdpSink {
    fn handle_packet(&mut self, now: SimTime, pkt: Packet, _out: &mut Vec<Packet>) {
        let c = &mut self.counters;
        c.packets_received += 1;
        c.bytes_delivered += pkt.payload_len() as u64;
        c.last_delivery = Some(now);
    }

    fn handle_timeout(&mut self, _now: SimTime, _out: &mut Vec<Packet>) {}

    fn poll_timeout(&self) -> Option<SimTime> {
        None
    }
}

/// Poisson arrivals of short transfers with random sizes (web-like traffic).
///
/// Gaps are exponential with mean `1/arrival_rate` s (a Poisson process); sizes follow
/// [`SizeDist`], rounded to whole bytes and at least 1 byte.
///
/// Gaps and sizes draw from two streams of their own, `flow/NAME/arrivals` and
/// `flow/NAME/sizes` (see [`crate::rng`]), so the arrival times do not depend on the size
/// distribution: a sweep over sizes compares runs with the same arrivals (common random
/// numbers), and the variance of a difference between two points is not inflated by
/// arrivals that moved. One stream would not do: a Pareto size takes one uniform, a lognormal
/// two and a constant none, so changing the distribution would shift every later gap.
#[derive(Clone, Debug)]
pub struct ShortFlowArrivals {
    /// Mean gap in seconds (infinite for a non-positive rate: no arrivals).
    mean_gap: f64,
    sizes: SizeDist,
    /// Draws the gaps: one uniform per gap.
    gap_rng: RngStream,
    /// Draws the sizes: a Pareto size takes 1 uniform, a lognormal 2, a constant none.
    size_rng: RngStream,
}

impl ShortFlowArrivals {
    /// The generator of flow `flow` in a run with master seed `seed`.
    pub fn new(arrival_rate: f64, sizes: SizeDist, seed: u64, flow: &str) -> ShortFlowArrivals {
        let mean_gap = if arrival_rate > 0.0 {
            1.0 / arrival_rate
        } else {
            f64::INFINITY
        };
        ShortFlowArrivals {
            mean_gap,
            sizes,
            gap_rng: RngStream::derive(seed, &format!("flow/{flow}/arrivals")),
            size_rng: RngStream::derive(seed, &format!("flow/{flow}/sizes")),
        }
    }

    /// Time to the next arrival (saturates at `SimDuration::MAX`, "never").
    pub fn next_gap(&mut self) -> SimDuration {
        SimDuration::from_secs_f64(self.gap_rng.exponential(self.mean_gap))
    }

    /// Size of the next transfer in bytes, >= 1.
    pub fn next_size(&mut self) -> u64 {
        let x = match self.sizes {
            // Pareto: P(X > x) = (scale/x)^shape for x >= scale; mean shape·scale/(shape − 1)
            // for shape > 1 (heavy-tailed web object sizes: Crovella and Bestavros 1997).
            SizeDist::Pareto { scale, shape } => self.size_rng.pareto(scale, shape),
            // Lognormal: ln X ~ N(mu, sigma²); median e^mu, mean e^(mu + sigma²/2).
            SizeDist::Lognormal { mu, sigma } => self.size_rng.lognormal(mu, sigma),
            SizeDist::Constant { bytes } => return bytes.max(1),
        };
        // `as` saturates: +∞ → u64::MAX, NaN → 0 (then 1).
        (x.round() as u64).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(rate: Rate, packet_size: u32, start: SimTime, stop: Option<SimTime>) -> UdpConfig {
        UdpConfig {
            addr: 1,
            dst_addr: 2,
            port: 3,
            dst_port: 4,
            flow: 5,
            start,
            stop,
            rate,
            packet_size,
        }
    }

    /// Drives an endpoint from deadline to deadline, as the engine does, until `until`
    /// (exclusive) or no deadline; returns the send times and the number of packets.
    fn run(ep: &mut dyn Endpoint, until: SimTime, mut on_packet: impl FnMut(&Packet)) {
        let mut out = Vec::new();
        while let Some(t) = ep.poll_timeout() {
            if t >= until {
                break;
            }
            ep.handle_timeout(t, &mut out);
            assert!(!out.is_empty(), "a deadline that sends nothing at {t}");
            for p in out.drain(..) {
                assert_eq!(p.sent_at, t);
                on_packet(&p);
            }
        }
    }

    fn udp(p: &Packet) -> UdpHeader {
        match p.transport {
            Transport::Udp(h) => h,
            _ => panic!("not a datagram"),
        }
    }

    #[test]
    fn cbr_at_10_mbps_with_1250_byte_packets_sends_1000_packets_exactly_1_ms_apart_in_1_s() {
        let mut s = CbrSource::new(cfg(
            Rate::mbps(10),
            1250,
            SimTime::ZERO,
            Some(SimTime::from_secs(1)),
        ));
        let mut times = Vec::new();
        run(&mut s, SimTime::MAX, |p| {
            assert_eq!(p.size, 1250);
            assert_eq!(udp(p).len, 1222);
            assert_eq!(udp(p).seq, times.len() as u64);
            assert_eq!((p.src, p.dst, p.flow), (1, 2, 5));
            assert_eq!((udp(p).src_port, udp(p).dst_port), (3, 4));
            times.push(p.sent_at);
        });
        assert_eq!(times.len(), 1000);
        for (k, t) in times.iter().enumerate() {
            assert_eq!(*t, SimTime::from_millis(k as u64));
        }
        assert_eq!(s.poll_timeout(), None);
        let c = s.counters();
        assert_eq!(c.packets_sent, 1000);
        assert_eq!(c.wire_bytes_sent, 1_250_000);
        assert_eq!(c.bytes_sent, 1_222_000);
        assert_eq!(c.first_send, Some(SimTime::ZERO));
    }

    #[test]
    fn cbr_with_a_fractional_nanosecond_interval_sends_exactly_rate_times_t_over_size_packets() {
        // 1000 B at 7 Mbit/s: 8e6/7 = 1,142,857.142857… ns per packet. Over 70 s that is
        // exactly 61,250 packets; the k-th leaves at floor(k · 8e6 / 7) ns after start.
        let start = SimTime::from_millis(3);
        let stop = start + SimDuration::from_secs(70);
        let mut s = CbrSource::new(cfg(Rate::mbps(7), 1000, start, Some(stop)));
        let mut k = 0u64;
        run(&mut s, SimTime::MAX, |p| {
            assert_eq!(
                p.sent_at,
                start + SimDuration::from_nanos(k * 8_000_000 / 7),
                "packet {k}"
            );
            k += 1;
        });
        assert_eq!(k, 61_250);
        assert_eq!(s.counters().packets_sent, 61_250);
    }

    #[test]
    fn cbr_stop_is_exclusive_and_nothing_is_sent_before_start() {
        let start = SimTime::from_millis(2);
        let mut s = CbrSource::new(cfg(
            Rate::mbps(10),
            1250,
            start,
            Some(SimTime::from_millis(12)),
        ));
        assert_eq!(s.poll_timeout(), Some(start));
        let mut out = Vec::new();
        s.handle_timeout(SimTime::from_millis(1), &mut out);
        assert!(out.is_empty());
        let mut n = 0;
        run(&mut s, SimTime::MAX, |_| n += 1);
        // 2, 3, …, 11 ms: the packet due at 12 ms is not sent.
        assert_eq!(n, 10);
        assert_eq!(s.poll_timeout(), None);

        let mut never = CbrSource::new(cfg(Rate::mbps(10), 1250, start, Some(start)));
        assert_eq!(never.poll_timeout(), None);
        never.handle_timeout(SimTime::from_secs(5), &mut out);
        assert!(out.is_empty());
    }

    #[test]
    fn a_stale_wake_up_sends_nothing_and_keeps_the_deadline() {
        let mut s = CbrSource::new(cfg(Rate::mbps(10), 1250, SimTime::ZERO, None));
        let mut out = Vec::new();
        s.handle_timeout(SimTime::ZERO, &mut out);
        assert_eq!(out.len(), 1);
        let due = s.poll_timeout().unwrap();
        assert_eq!(due, SimTime::from_millis(1));
        out.clear();
        s.handle_timeout(SimTime::from_nanos(999_999), &mut out);
        assert!(out.is_empty());
        assert_eq!(s.poll_timeout(), Some(due));

        let mut o = OnOffSource::new(
            cfg(Rate::mbps(10), 1000, SimTime::from_millis(1), None),
            SimDuration::from_millis(84),
            SimDuration::from_millis(116),
            false,
            RngStream::derive(3, "test/onoff"),
        );
        o.handle_timeout(SimTime::ZERO, &mut out);
        assert!(out.is_empty());
        assert_eq!(o.poll_timeout(), Some(SimTime::from_millis(1)));
        assert_eq!(o.counters().packets_sent, 0);
    }

    #[test]
    fn a_late_wake_up_sends_every_packet_that_was_due_stamped_now() {
        let mut s = CbrSource::new(cfg(Rate::mbps(10), 1250, SimTime::ZERO, None));
        let mut out = Vec::new();
        let now = SimTime::from_nanos(5_500_000);
        s.handle_timeout(now, &mut out);
        // Due at 0, 1, 2, 3, 4 and 5 ms.
        assert_eq!(out.len(), 6);
        assert!(out
            .iter()
            .enumerate()
            .all(|(k, p)| udp(p).seq == k as u64 && p.sent_at == now));
        assert_eq!(s.poll_timeout(), Some(SimTime::from_millis(6)));
        assert_eq!(s.counters().first_send, Some(now));
    }

    #[test]
    fn deterministic_on_off_sends_the_same_105_packets_every_period_and_the_exact_mean_rate() {
        // 84 ms on at 10 Mbit/s with 1000 B packets (0.8 ms each) = 105 packets, then 116 ms
        // off: a 200 ms cycle, mean rate 10 Mbit/s · 84/200 = 4.2 Mbit/s.
        let mut s = OnOffSource::new(
            cfg(Rate::mbps(10), 1000, SimTime::ZERO, None),
            SimDuration::from_millis(84),
            SimDuration::from_millis(116),
            false,
            RngStream::derive(3, "test/onoff"),
        );
        let horizon = SimTime::from_secs(10);
        let mut per_period = [0u32; 50];
        run(&mut s, horizon, |p| {
            let t = p.sent_at.as_nanos();
            let period = (t / 200_000_000) as usize;
            let phase = t % 200_000_000;
            assert!(phase < 84_000_000, "sent during an off period at {t}");
            assert_eq!(phase % 800_000, 0);
            per_period[period] += 1;
        });
        assert!(per_period.iter().all(|&n| n == 105), "{per_period:?}");
        let bits = s.counters().wire_bytes_sent * 8;
        assert_eq!(bits, 4_200_000 * 10);
    }

    #[test]
    fn deterministic_on_off_periods_that_are_not_a_multiple_of_the_packet_time_still_send_equal_counts(
    ) {
        // 1500 B at 7 Mbit/s: 1.714285… ms per packet; 10 ms on → ceil(5.83) = 6 per period.
        let mut s = OnOffSource::new(
            cfg(Rate::mbps(7), 1500, SimTime::from_millis(1), None),
            SimDuration::from_millis(10),
            SimDuration::from_micros(3_333),
            false,
            RngStream::derive(3, "test/onoff"),
        );
        let cycle = 13_333_000u64;
        let mut per_period = vec![0u32; 100];
        run(
            &mut s,
            SimTime::from_millis(1) + SimDuration::from_nanos(100 * cycle),
            |p| {
                per_period[((p.sent_at.as_nanos() - 1_000_000) / cycle) as usize] += 1;
            },
        );
        assert!(per_period.iter().all(|&n| n == 6), "{per_period:?}");
    }

    #[test]
    fn on_off_respects_stop() {
        let mut s = OnOffSource::new(
            cfg(
                Rate::mbps(10),
                1000,
                SimTime::ZERO,
                Some(SimTime::from_millis(250)),
            ),
            SimDuration::from_millis(84),
            SimDuration::from_millis(116),
            false,
            RngStream::derive(3, "test/onoff"),
        );
        let mut n = 0;
        run(&mut s, SimTime::MAX, |p| {
            assert!(p.sent_at < SimTime::from_millis(250));
            n += 1;
        });
        // Period 1 complete (105), period 2 from 200 ms to 250 ms: 0, 0.8, …, 49.6 ms = 63.
        assert_eq!(n, 105 + 63);
        assert_eq!(s.poll_timeout(), None);
    }

    #[test]
    fn exponential_on_off_long_run_mean_rate_is_rate_times_on_over_on_plus_off() {
        // 200 ms on, 300 ms off on average: 4 Mbit/s of a 10 Mbit/s stream. About 4000 cycles
        // in 2000 s: the on fraction has a relative standard deviation of ≈ 1.3 %.
        let mut s = OnOffSource::new(
            cfg(Rate::mbps(10), 1000, SimTime::ZERO, None),
            SimDuration::from_millis(200),
            SimDuration::from_millis(300),
            true,
            RngStream::derive(5, "test/expoo"),
        );
        let horizon = SimTime::from_secs(2000);
        let mut out = Vec::new();
        let mut lengths_differ = false;
        let mut last_count = None;
        let mut count = 0u32;
        let mut prev_t = SimTime::ZERO;
        while let Some(t) = s.poll_timeout() {
            if t >= horizon {
                break;
            }
            // A gap longer than one packet time ends an on period.
            if t.saturating_since(prev_t) > SimDuration::from_micros(800) {
                if let Some(c) = last_count {
                    lengths_differ |= c != count;
                }
                last_count = Some(count);
                count = 0;
            }
            prev_t = t;
            s.handle_timeout(t, &mut out);
            count += out.len() as u32;
            out.clear();
        }
        assert!(
            lengths_differ,
            "exponential on periods all had the same length"
        );
        let mbps = s.counters().wire_bytes_sent as f64 * 8.0 / 2000.0 / 1e6;
        assert!((mbps - 4.0).abs() < 0.16, "mean rate {mbps} Mbit/s");
    }

    #[test]
    fn the_sink_counts_datagrams_payload_bytes_and_the_last_delivery() {
        let c = cfg(Rate::mbps(1), 1028, SimTime::ZERO, None);
        let mut sink = UdpSink::new(5);
        let mut out = Vec::new();
        for k in 0..10u64 {
            sink.handle_packet(
                SimTime::from_millis(10 + k),
                c.datagram(k, SimTime::from_millis(k)),
                &mut out,
            );
        }
        assert!(out.is_empty());
        assert_eq!(sink.poll_timeout(), None);
        let ctr = sink.counters();
        assert_eq!(ctr.packets_received, 10);
        assert_eq!(ctr.bytes_delivered, 10_000);
        assert_eq!(ctr.last_delivery, Some(SimTime::from_millis(19)));
        assert_eq!(sink.flow(), 5);
    }

    #[test]
    fn arrival_gaps_are_exponential_with_mean_one_over_the_arrival_rate() {
        let mut a = ShortFlowArrivals::new(10.0, SizeDist::Constant { bytes: 1 }, 9, "test/arr");
        let n = 200_000;
        let gaps: Vec<f64> = (0..n).map(|_| a.next_gap().as_secs_f64()).collect();
        let mean = gaps.iter().sum::<f64>() / n as f64;
        assert!((mean - 0.1).abs() < 0.002, "mean gap {mean}");
        // Memoryless: P(gap > mean) = e^-1.
        let above = gaps.iter().filter(|&&g| g > 0.1).count() as f64 / n as f64;
        assert!(
            (above - libm::exp(-1.0)).abs() < 0.005,
            "P(gap > mean) {above}"
        );
    }

    #[test]
    fn pareto_sizes_with_shape_2_5_have_the_configured_mean_and_minimum() {
        // mean = shape · scale / (shape − 1) = 2.5 · 6000 / 1.5 = 10,000 B; the standard
        // deviation of one draw is ≈ 1.49 · scale, of the mean of 400k draws ≈ 0.14 %.
        let mut a = ShortFlowArrivals::new(
            1.0,
            SizeDist::Pareto {
                scale: 6000.0,
                shape: 2.5,
            },
            9,
            "test/pareto",
        );
        let n = 400_000;
        let sizes: Vec<u64> = (0..n).map(|_| a.next_size()).collect();
        let mean = sizes.iter().sum::<u64>() as f64 / n as f64;
        assert!((mean - 10_000.0).abs() < 200.0, "mean {mean}");
        assert!(sizes.iter().all(|&s| s >= 6000));
    }

    #[test]
    fn lognormal_sizes_have_median_e_to_the_mu() {
        let mu = libm::log(20_000.0);
        let mut a =
            ShortFlowArrivals::new(1.0, SizeDist::Lognormal { mu, sigma: 1.0 }, 9, "test/ln");
        let mut sizes: Vec<u64> = (0..100_001).map(|_| a.next_size()).collect();
        sizes.sort_unstable();
        let median = sizes[50_000] as f64;
        // The sample median's relative standard deviation is ≈ 1.25 · sigma / sqrt(n) = 0.4 %.
        assert!((median / 20_000.0 - 1.0).abs() < 0.02, "median {median}");
    }

    #[test]
    fn sizes_are_whole_bytes_and_never_zero() {
        let mut c = ShortFlowArrivals::new(1.0, SizeDist::Constant { bytes: 0 }, 9, "c");
        assert_eq!(c.next_size(), 1);
        let mut c = ShortFlowArrivals::new(1.0, SizeDist::Constant { bytes: 1460 }, 9, "c");
        assert_eq!(c.next_size(), 1460);
        let mut tiny = ShortFlowArrivals::new(
            1.0,
            SizeDist::Lognormal {
                mu: -10.0,
                sigma: 0.1,
            },
            9,
            "t",
        );
        assert!((0..1000).all(|_| tiny.next_size() == 1));
    }

    #[test]
    fn the_size_distribution_does_not_move_the_arrival_times() {
        // Common random numbers: the engine draws a size, then the next gap, for each
        // arrival. With one shared stream, a Pareto (one uniform per size), a lognormal (two)
        // and a constant (none) would each shift the gaps differently.
        let dists = [
            SizeDist::Constant { bytes: 1000 },
            SizeDist::Pareto {
                scale: 1000.0,
                shape: 1.2,
            },
            SizeDist::Lognormal {
                mu: 9.0,
                sigma: 1.0,
            },
        ];
        let gaps: Vec<Vec<SimDuration>> = dists
            .iter()
            .map(|d| {
                let mut a = ShortFlowArrivals::new(5.0, d.clone(), 4, "web");
                (0..1000)
                    .map(|_| {
                        a.next_size();
                        a.next_gap()
                    })
                    .collect()
            })
            .collect();
        assert_eq!(gaps[0], gaps[1]);
        assert_eq!(gaps[0], gaps[2]);
        // The gaps keep the stream they always had, so runs with constant sizes are unchanged.
        let mut old = RngStream::derive(4, "flow/web/arrivals");
        for g in &gaps[0] {
            assert_eq!(*g, SimDuration::from_secs_f64(old.exponential(0.2)));
        }
    }

    #[test]
    fn the_same_seed_gives_the_same_arrivals_and_sizes() {
        let sizes = SizeDist::Pareto {
            scale: 1000.0,
            shape: 1.2,
        };
        let mut a = ShortFlowArrivals::new(5.0, sizes.clone(), 4, "same");
        let mut b = ShortFlowArrivals::new(5.0, sizes, 4, "same");
        for _ in 0..1000 {
            assert_eq!(a.next_gap(), b.next_gap());
            assert_eq!(a.next_size(), b.next_size());
        }
    }
}
