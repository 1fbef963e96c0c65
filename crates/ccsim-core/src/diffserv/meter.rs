// SPDX-License-Identifier: MIT
//! Meters: Cisco CAR, the single-rate three-colour marker (srTCM, RFC 2697) and the two-rate
//! three-colour marker (trTCM, RFC 2698), all on one integer token bucket.
//!
//! ```text
//!   tokens in "units": 1 byte = 8·10⁹ units, and a bucket of rate r bit/s gains r units per ns,
//!   so refilling over any span is one exact integer product: no float, no drift over a long run.
//!
//!   CAR    one bucket (rate, Bc) + Cisco's compounded debt up to Be ─> conform | exceed
//!   srTCM  C (CIR, CBS) overflowing into E (EBS)                    ─> green | yellow | red
//!   trTCM  P (PIR, PBS) and C (CIR, CBS), independent               ─> green | yellow | red
//! ```
//!
//! Every bucket starts full (RFC 2697 §3, RFC 2698 §3). A meter only measures; what happens to
//! a packet of each colour is the caller's [`Action`] (a policer hook, a class's `police`).

use crate::diffserv::dscp;
use crate::time::{Rate, SimTime};

/// Token units per byte (see the module doc).
const UNITS_PER_BYTE: u128 = 8_000_000_000;

/// A meter's result. CAR's conform is `Green`, its exceed `Red`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Colour {
    Green,
    Yellow,
    Red,
}

impl Colour {
    /// The colour a colour-aware meter reads from a packet: the AF drop precedence of its DSCP
    /// (AFx1 green, AFx2 yellow, AFx3 red: RFC 2597 §2 and the "typical marking" of RFC 2698
    /// §4); any other code point is green.
    pub fn of_dscp(d: u8) -> Colour {
        match dscp::af_drop_precedence(d) {
            Some(2) => Colour::Yellow,
            Some(3) => Colour::Red,
            _ => Colour::Green,
        }
    }
}

/// What to do with a packet of one colour (Cisco `rate-limit` / `police` actions).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    Transmit,
    Drop,
    /// Rewrite the DSCP, then transmit.
    SetDscpTransmit(u8),
    /// Go on to the next rule (CAR's `continue`).
    Continue,
    /// Rewrite the DSCP, then go on to the next rule.
    SetDscpContinue(u8),
}

/// Where an [`Action`] leaves a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Forward it (rules or statements after this one are skipped).
    Forward,
    Drop,
    /// On to the next rule or `rate-limit` statement.
    Next,
}

impl Action {
    /// The action for a packet of `colour`, given the actions for green (CAR conform), yellow
    /// and red (CAR exceed).
    #[inline]
    pub fn of_colour(colour: Colour, conform: Action, exceed: Action, violate: Action) -> Action {
        match colour {
            Colour::Green => conform,
            Colour::Yellow => exceed,
            Colour::Red => violate,
        }
    }

    /// Applies the action to `pkt` (a re-mark rewrites its DSCP) and says where it goes next.
    #[inline]
    pub fn apply(self, dscp: &mut u8) -> Step {
        match self {
            Action::Transmit => Step::Forward,
            Action::Drop => Step::Drop,
            Action::SetDscpTransmit(d) => {
                *dscp = d;
                Step::Forward
            }
            Action::Continue => Step::Next,
            Action::SetDscpContinue(d) => {
                *dscp = d;
                Step::Next
            }
        }
    }

    /// Whether the action goes on to the next rule or statement.
    pub fn continues(self) -> bool {
        matches!(self, Action::Continue | Action::SetDscpContinue(_))
    }
}

/// What CAR compares the compounded debt with (the reference descriptions differ: Cisco's
/// worked example uses the configured extended burst, the CISCO-CAR-MIB describes the extended
/// limit as traffic beyond the normal burst).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CarLimit {
    /// Compounded debt > Be is an exceed (the default, as in Cisco's example).
    ExcessBurst,
    /// Compounded debt > Be − Bc is an exceed.
    BeyondNormal,
}

/// A meter's configuration; rates in bit/s, bursts in bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum MeterSpec {
    /// Cisco committed access rate: `rate-limit bps normal-burst max-burst`.
    Car {
        rate: Rate,
        normal_burst: u64,
        excess_burst: u64,
        limit: CarLimit,
    },
    /// RFC 2697.
    SrTcm {
        cir: Rate,
        cbs: u64,
        ebs: u64,
        colour_aware: bool,
    },
    /// RFC 2698.
    TrTcm {
        cir: Rate,
        cbs: u64,
        pir: Rate,
        pbs: u64,
        colour_aware: bool,
    },
}

/// A token bucket of `rate`, depth `depth` bytes, in exact integer units; full at t = 0.
#[derive(Clone, Debug)]
pub struct TokenBucket {
    rate_bps: u128,
    depth: u128,
    /// May go below zero only for CAR's borrowing.
    tokens: i128,
    last: SimTime,
}

impl TokenBucket {
    pub fn new(rate: Rate, depth_bytes: u64) -> TokenBucket {
        let depth = depth_bytes as u128 * UNITS_PER_BYTE;
        TokenBucket {
            rate_bps: rate.bits_per_sec() as u128,
            depth,
            tokens: depth as i128,
            last: SimTime::ZERO,
        }
    }

    /// The tokens `now` would add, without applying them (units).
    #[inline]
    fn accrued(&self, now: SimTime) -> u128 {
        now.saturating_since(self.last).as_nanos() as u128 * self.rate_bps
    }

    /// Add what accrued since the last call, up to the depth; returns what overflowed (units).
    #[inline]
    fn refill(&mut self, now: SimTime) -> u128 {
        let add = self.accrued(now);
        self.last = self.last.max(now);
        let room = (self.depth as i128 - self.tokens).max(0) as u128;
        if add <= room {
            self.tokens += add as i128;
            0
        } else {
            self.tokens += room as i128;
            add - room
        }
    }

    /// Add `units` (an overflow from another bucket) up to the depth.
    #[inline]
    fn add(&mut self, units: u128) {
        let room = (self.depth as i128 - self.tokens).max(0) as u128;
        self.tokens += units.min(room) as i128;
    }

    #[inline]
    fn has(&self, bytes: u32) -> bool {
        self.tokens >= (bytes as u128 * UNITS_PER_BYTE) as i128
    }

    #[inline]
    fn take(&mut self, bytes: u32) {
        self.tokens -= (bytes as u128 * UNITS_PER_BYTE) as i128;
    }

    /// Tokens now, in whole bytes (rounded towards zero). For tests and traces.
    pub fn bytes(&self) -> i64 {
        (self.tokens / UNITS_PER_BYTE as i128) as i64
    }

    /// A plain single-rate policer: refill, then green (tokens taken) if `bytes` fit, else red.
    #[inline]
    pub fn conform(&mut self, now: SimTime, bytes: u32) -> bool {
        self.refill(now);
        if self.has(bytes) {
            self.take(bytes);
            true
        } else {
            false
        }
    }
}

/// A meter's state.
#[derive(Clone, Debug)]
pub enum Meter {
    Car {
        bucket: TokenBucket,
        /// Be − Bc or Be in units (see [`CarLimit`]); 0 means no borrowing.
        debt_limit: u128,
        borrow: bool,
        /// Compounded debt since the last exceed, units.
        compounded: u128,
    },
    SrTcm {
        c: TokenBucket,
        e: TokenBucket,
        colour_aware: bool,
    },
    TrTcm {
        p: TokenBucket,
        c: TokenBucket,
        colour_aware: bool,
    },
}

impl Meter {
    pub fn new(spec: &MeterSpec) -> Meter {
        match *spec {
            MeterSpec::Car {
                rate,
                normal_burst,
                excess_burst,
                limit,
            } => {
                let be = match limit {
                    CarLimit::ExcessBurst => excess_burst,
                    CarLimit::BeyondNormal => excess_burst.saturating_sub(normal_burst),
                };
                Meter::Car {
                    bucket: TokenBucket::new(rate, normal_burst),
                    debt_limit: be as u128 * UNITS_PER_BYTE,
                    // Cisco: with Be = Bc no packet may borrow; CAR is one token bucket.
                    borrow: excess_burst > normal_burst,
                    compounded: 0,
                }
            }
            MeterSpec::SrTcm {
                cir,
                cbs,
                ebs,
                colour_aware,
            } => {
                // E is filled only by C's overflow (RFC 2697 §3): its own rate is zero.
                Meter::SrTcm {
                    c: TokenBucket::new(cir, cbs),
                    e: TokenBucket::new(Rate::bps(0), ebs),
                    colour_aware,
                }
            }
            MeterSpec::TrTcm {
                cir,
                cbs,
                pir,
                pbs,
                colour_aware,
            } => Meter::TrTcm {
                p: TokenBucket::new(pir, pbs),
                c: TokenBucket::new(cir, cbs),
                colour_aware,
            },
        }
    }

    /// Meter one packet of `bytes` arriving at `now` whose incoming colour (for colour-aware
    /// meters) is `pre`.
    #[inline]
    pub fn meter(&mut self, now: SimTime, bytes: u32, pre: Colour) -> Colour {
        match self {
            Meter::Car {
                bucket,
                debt_limit,
                borrow,
                compounded,
            } => {
                bucket.refill(now);
                if bucket.has(bytes) {
                    bucket.take(bytes);
                    return Colour::Green;
                }
                if !*borrow {
                    return Colour::Red;
                }
                // Cisco's extended burst: the actual debt a is what the bucket would owe if this
                // packet were sent; the compounded debt D sums a over the packets that borrowed
                // since the last exceed. D > limit: exceed, D restarts at 0 and the actual debt
                // keeps its value before this packet. Otherwise the packet conforms and the
                // debt stands.
                let need = bytes as i128 * UNITS_PER_BYTE as i128;
                let actual = (need - bucket.tokens).max(0) as u128;
                let d = *compounded + actual;
                if d > *debt_limit {
                    *compounded = 0;
                    Colour::Red
                } else {
                    *compounded = d;
                    bucket.take(bytes);
                    Colour::Green
                }
            }
            Meter::SrTcm { c, e, colour_aware } => {
                // RFC 2697 §3: C fills first; what C cannot take goes to E.
                let spill = c.refill(now);
                e.last = now.max(e.last);
                e.add(spill);
                let pre = if *colour_aware { pre } else { Colour::Green };
                // RFC 2697 §4.
                if pre == Colour::Green && c.has(bytes) {
                    c.take(bytes);
                    Colour::Green
                } else if pre != Colour::Red && e.has(bytes) {
                    e.take(bytes);
                    Colour::Yellow
                } else {
                    Colour::Red
                }
            }
            Meter::TrTcm { p, c, colour_aware } => {
                p.refill(now);
                c.refill(now);
                let pre = if *colour_aware { pre } else { Colour::Green };
                // RFC 2698 §4.
                if pre == Colour::Red || !p.has(bytes) {
                    Colour::Red
                } else if pre == Colour::Yellow || !c.has(bytes) {
                    p.take(bytes);
                    Colour::Yellow
                } else {
                    p.take(bytes);
                    c.take(bytes);
                    Colour::Green
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ms: u64) -> SimTime {
        SimTime::from_millis(ms)
    }

    const BPS_1000_BYTES: Rate = Rate::bps(8_000);

    #[test]
    fn srtcm_colour_blind_gives_green_yellow_red_red_and_refills_c_before_e() {
        // RFC 2697, reference check 2: CIR 1000 B/s, CBS = EBS = 1500.
        let spec = MeterSpec::SrTcm {
            cir: BPS_1000_BYTES,
            cbs: 1500,
            ebs: 1500,
            colour_aware: false,
        };
        let mut m = Meter::new(&spec);
        let got: Vec<Colour> = (0..4)
            .map(|_| m.meter(at(0), 1000, Colour::Green))
            .collect();
        use Colour::*;
        assert_eq!(got, [Green, Yellow, Red, Red]);
        // One second later: 1000 B accrued; C (500) fills to 1500 first, nothing spills to E.
        m.meter(at(1000), 0, Green);
        let Meter::SrTcm { c, e, .. } = &m else {
            unreachable!()
        };
        assert_eq!((c.bytes(), e.bytes()), (1500, 500));
        // Another second: C is full, so all of it spills into E (capped at EBS).
        m.meter(at(2000), 0, Green);
        let Meter::SrTcm { c, e, .. } = &m else {
            unreachable!()
        };
        assert_eq!((c.bytes(), e.bytes()), (1500, 1500));
    }

    #[test]
    fn srtcm_colour_aware_never_promotes_a_packet() {
        let spec = MeterSpec::SrTcm {
            cir: BPS_1000_BYTES,
            cbs: 1500,
            ebs: 1500,
            colour_aware: true,
        };
        let mut m = Meter::new(&spec);
        use Colour::*;
        assert_eq!(m.meter(at(0), 1000, Yellow), Yellow);
        assert_eq!(m.meter(at(0), 100, Red), Red);
        assert_eq!(m.meter(at(0), 1000, Green), Green);
    }

    #[test]
    fn trtcm_colour_blind_gives_green_yellow_red() {
        // RFC 2698, reference check 3: PIR 2000, PBS 2000, CIR 1000, CBS 1000 (bytes/s, bytes).
        let spec = MeterSpec::TrTcm {
            cir: BPS_1000_BYTES,
            cbs: 1000,
            pir: Rate::bps(16_000),
            pbs: 2000,
            colour_aware: false,
        };
        let mut m = Meter::new(&spec);
        use Colour::*;
        let got: Vec<Colour> = (0..3).map(|_| m.meter(at(0), 1000, Green)).collect();
        assert_eq!(got, [Green, Yellow, Red]);
        // Colour-aware: a yellow packet stays yellow even with C full.
        let mut m = Meter::new(&MeterSpec::TrTcm {
            cir: BPS_1000_BYTES,
            cbs: 1000,
            pir: Rate::bps(16_000),
            pbs: 2000,
            colour_aware: true,
        });
        assert_eq!(m.meter(at(0), 1000, Yellow), Yellow);
        assert_eq!(m.meter(at(0), 1000, Green), Green);
        assert_eq!(m.meter(at(0), 1, Red), Red);
    }

    #[test]
    fn car_with_excess_burst_equal_to_normal_burst_is_one_token_bucket() {
        // Reference check 4: a pseudo-random arrival pattern gives the same verdicts.
        let spec = MeterSpec::Car {
            rate: Rate::mbps(1),
            normal_burst: 10_000,
            excess_burst: 10_000,
            limit: CarLimit::ExcessBurst,
        };
        let mut car = Meter::new(&spec);
        let mut tb = TokenBucket::new(Rate::mbps(1), 10_000);
        let mut t = 0u64;
        let mut x = 12345u64;
        let mut reds = 0;
        for _ in 0..20_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            t += (x >> 40) % 9_000_000; // up to 9 ms apart: about 1.2 Mbit/s of 1500 B
            let size = 40 + ((x >> 20) % 1461) as u32;
            let now = SimTime::from_nanos(t);
            let a = car.meter(now, size, Colour::Green) == Colour::Green;
            let b = tb.conform(now, size);
            assert_eq!(a, b);
            reds += (!a) as u32;
        }
        assert!(reds > 100, "the pattern must exceed sometimes: {reds}");
    }

    #[test]
    fn car_with_a_larger_excess_burst_exceeds_every_other_packet_once_the_debt_compounds() {
        // Cisco's worked example (reference §3.1): rate 1 unit per tick, Bc = 2, Be = 4, two
        // units offered per tick (one 2-unit packet), a unit = 1000 B and a tick = 1 s. Debt
        // grows by one unit per tick; the compounded debt passes Be on the third borrowing
        // packet, which exceeds and restarts the count, and every second packet after. (The
        // reference counts one more debt-free tick at the start, giving ticks 5 and 7; with
        // the bucket full at tick 1 the same rule gives 4, 6, 8.)
        let spec = MeterSpec::Car {
            rate: BPS_1000_BYTES,
            normal_burst: 2000,
            excess_burst: 4000,
            limit: CarLimit::ExcessBurst,
        };
        let mut m = Meter::new(&spec);
        let exceeds: Vec<u64> = (1..=8)
            .filter(|&tick| m.meter(at(tick * 1000), 2000, Colour::Green) == Colour::Red)
            .collect();
        assert_eq!(exceeds, [4, 6, 8]);
        // The same offered load with Be = Bc exceeds at every tick once the bucket is empty.
        let mut one = Meter::new(&MeterSpec::Car {
            rate: BPS_1000_BYTES,
            normal_burst: 2000,
            excess_burst: 2000,
            limit: CarLimit::ExcessBurst,
        });
        let exceeds: Vec<u64> = (1..=8)
            .filter(|&tick| one.meter(at(tick * 1000), 2000, Colour::Green) == Colour::Red)
            .collect();
        assert_eq!(exceeds, [2, 4, 6, 8]);
    }

    #[test]
    fn a_token_bucket_over_a_long_run_passes_exactly_rate_times_time_plus_depth() {
        // Integer tokens: 1 Mbit/s for 1000 s of 1-byte-short-of-fitting arrivals loses nothing.
        let mut tb = TokenBucket::new(Rate::bps(999_983), 1500);
        let mut passed: u64 = 0;
        let mut t = 0u64;
        while t <= 1_000_000_000_000 {
            if tb.conform(SimTime::from_nanos(t), 1000) {
                passed += 1000;
            }
            t += 1_000_003; // about 1 ms, never aligned with the rate
        }
        let expected = 999_983u64 * 1000 / 8 + 1500;
        assert!(
            passed <= expected && expected - passed < 1000,
            "{passed} vs {expected}"
        );
    }
}
