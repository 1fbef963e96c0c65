// SPDX-License-Identifier: MIT
//! Values with units in scenario files: durations (`"1.5s"`), rates (`"10Mbps"`) and sizes
//! (`"64KB"`, `"20pkt"`).
//!
//! Numbers are read as decimal digits, not through `f64`, so `"0.1s"` is exactly 100 000 000 ns
//! and `"1.5Mbps"` exactly 1 500 000 bit/s. A value that is not a whole number of the base unit
//! (`"0.5ns"`, `"1.5bps"`, `"0.5B"`) is rejected rather than rounded.
//!
//! Every function returns the error message without the field path; the parser adds the path.

use crate::time::{Rate, SimDuration};

/// Duration units, for messages.
pub const DURATION_UNITS: &str = "ns, us, ms, s, min";
/// Rate units, for messages.
pub const RATE_UNITS: &str = "bps, Kbps, Mbps, Gbps";
/// Size units, for messages.
pub const SIZE_UNITS: &str = "B, KB, MB, GB, KiB, MiB, GiB";

const NS_PER_S: u64 = 1_000_000_000;

/// Parses a duration: a non-negative decimal number and a unit among ns, us, ms, s and min
/// (`"100ms"`, `"1.5s"`, `"0s"`, `"2min"`, `"10 ms"`).
pub fn parse_duration(text: &str) -> Result<SimDuration, String> {
    let q = Quantity::split(text);
    let not_a_duration =
        || format!("{text:?} is not a duration, e.g. \"1.5s\" (units {DURATION_UNITS})");
    if !q.number_is_valid() {
        return Err(not_a_duration());
    }
    if q.unit.is_empty() {
        return Err(format!(
            "{text:?} has no unit; add one, e.g. \"{}s\" (units {DURATION_UNITS})",
            q.number
        ));
    }
    let factor = match q.unit {
        "ns" => 1,
        "us" => 1_000,
        "ms" => 1_000_000,
        "s" => NS_PER_S,
        "min" => 60 * NS_PER_S,
        _ => return Err(not_a_duration()),
    };
    if q.negative {
        return Err(format!("{text:?} is negative; a duration must be >= 0"));
    }
    match scale_decimal(q.number, factor) {
        Ok(ns) => Ok(SimDuration::from_nanos(ns)),
        Err(Inexact::NotWhole) => Err(format!("{text:?} is not a whole number of nanoseconds")),
        Err(Inexact::TooPrecise) => Err(format!("{text:?} has too many decimal places")),
        Err(Inexact::TooLarge) => Err(format!("{text:?} is too large")),
    }
}

/// Parses a bit rate: a positive decimal number and a unit among bps, Kbps (or kbps), Mbps and
/// Gbps, all decimal (1 Kbps = 1000 bit/s). A space may separate number and unit.
pub fn parse_rate(text: &str) -> Result<Rate, String> {
    let q = Quantity::split(text);
    let not_a_rate = || format!("{text:?} is not a rate, e.g. \"10Mbps\"");
    if !q.number_is_valid() {
        return Err(not_a_rate());
    }
    if q.unit.is_empty() {
        return Err(format!(
            "{text:?} has no unit; add one, e.g. \"{}Mbps\" (units {RATE_UNITS})",
            q.number
        ));
    }
    let factor = match q.unit {
        "bps" => 1,
        "Kbps" | "kbps" => 1_000,
        "Mbps" => 1_000_000,
        "Gbps" => 1_000_000_000,
        _ => return Err(not_a_rate()),
    };
    if q.negative {
        return Err(format!(
            "{text:?} is negative; a rate must be greater than 0"
        ));
    }
    match scale_decimal(q.number, factor) {
        Ok(0) => Err(format!("{text:?} is out of range; must be greater than 0")),
        Ok(bps) => Ok(Rate::bps(bps)),
        Err(Inexact::NotWhole) => Err(format!("{text:?} is not a whole number of bits per second")),
        Err(Inexact::TooPrecise) => Err(format!("{text:?} has too many decimal places")),
        Err(Inexact::TooLarge) => Err(format!("{text:?} is too large")),
    }
}

/// Parses a size in bytes: a non-negative decimal number and a unit among B, KB (or kB), MB,
/// GB (powers of 1000) and KiB, MiB, GiB (powers of 1024). A number without a unit is bytes.
pub fn parse_size(text: &str) -> Result<u64, String> {
    match parse_size_or_segments(text, false)? {
        WindowSize::Bytes(b) => Ok(b),
        WindowSize::Segments(_) => unreachable!("segments are only parsed when allowed"),
    }
}

/// A TCP window-like size: bytes, or a number of segments to multiply by the flow's MSS.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WindowSize {
    Bytes(u64),
    Segments(u64),
}

impl WindowSize {
    /// The size in bytes for segments of `mss` bytes (None if it overflows `u64`).
    pub fn to_bytes(self, mss: u32) -> Option<u64> {
        match self {
            WindowSize::Bytes(b) => Some(b),
            WindowSize::Segments(n) => n.checked_mul(mss as u64),
        }
    }
}

/// Parses a size as [`parse_size`] does, or a whole number of segments: `"20pkt"` or
/// `"20seg"` (TCP window fields only).
pub fn parse_window_size(text: &str) -> Result<WindowSize, String> {
    parse_size_or_segments(text, true)
}

fn parse_size_or_segments(text: &str, segments: bool) -> Result<WindowSize, String> {
    let q = Quantity::split(text);
    let not_a_size = || {
        if segments {
            format!(
                "{text:?} is not a size, e.g. \"64KB\" or \"20pkt\" (units {SIZE_UNITS}, pkt, seg)"
            )
        } else {
            format!("{text:?} is not a size, e.g. \"64KB\" (units {SIZE_UNITS})")
        }
    };
    if !q.number_is_valid() {
        return Err(not_a_size());
    }
    let (factor, in_segments) = match q.unit {
        "" | "B" => (1, false),
        "KB" | "kB" => (1_000, false),
        "MB" => (1_000_000, false),
        "GB" => (1_000_000_000, false),
        "KiB" => (1 << 10, false),
        "MiB" => (1 << 20, false),
        "GiB" => (1 << 30, false),
        "pkt" | "seg" if segments => (1, true),
        _ => return Err(not_a_size()),
    };
    if q.negative {
        return Err(format!("{text:?} is negative; a size must be >= 0"));
    }
    match scale_decimal(q.number, factor) {
        Ok(n) if in_segments => Ok(WindowSize::Segments(n)),
        Ok(n) => Ok(WindowSize::Bytes(n)),
        Err(Inexact::NotWhole) if in_segments => {
            Err(format!("{text:?} is not a whole number of segments"))
        }
        Err(Inexact::NotWhole) => Err(format!("{text:?} is not a whole number of bytes")),
        Err(Inexact::TooPrecise) => Err(format!("{text:?} has too many decimal places")),
        Err(Inexact::TooLarge) => Err(format!("{text:?} is too large")),
    }
}

/// Writes a duration so that [`parse_duration`] reads it back exactly, in the largest of s, ms,
/// us and ns that it reaches: `"1.5s"`, `"200ms"`, `"0s"`.
pub fn format_duration(d: SimDuration) -> String {
    let ns = d.as_nanos();
    let (unit, per) = if ns == 0 || ns >= NS_PER_S {
        ("s", NS_PER_S)
    } else if ns >= 1_000_000 {
        ("ms", 1_000_000)
    } else if ns >= 1_000 {
        ("us", 1_000)
    } else {
        ("ns", 1)
    };
    let whole = ns / per;
    let rest = ns % per;
    if rest == 0 {
        format!("{whole}{unit}")
    } else {
        let width = per.ilog10() as usize;
        let digits = format!("{rest:0width$}");
        format!("{whole}.{}{unit}", digits.trim_end_matches('0'))
    }
}

/// A byte count for a message: whole MiB from 1 MiB up (`"8192 MiB"`), bytes below
/// (`"1024 B"`), so that a limit of a few kilobytes does not read "0 MiB" (campaign 13).
pub fn format_mib(bytes: u64) -> String {
    if bytes >= 1 << 20 {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{bytes} B")
    }
}

/// A string split into sign, number and unit: `"-1.5 Mbps"` is (true, "1.5", "Mbps").
struct Quantity<'a> {
    negative: bool,
    number: &'a str,
    unit: &'a str,
}

impl<'a> Quantity<'a> {
    fn split(text: &'a str) -> Self {
        let t = text.trim();
        let (negative, rest) = match t.strip_prefix('-') {
            Some(r) => (true, r),
            None => (false, t),
        };
        let end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        Quantity {
            negative,
            number: &rest[..end],
            unit: rest[end..].trim_start(),
        }
    }

    /// Digits, optionally followed by a point and more digits (`"10"`, `"1.5"`; not `".5"`).
    fn number_is_valid(&self) -> bool {
        let (int, frac) = match self.number.split_once('.') {
            Some((i, f)) => (i, Some(f)),
            None => (self.number, None),
        };
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        match frac {
            Some(f) => digits(int) && digits(f),
            None => digits(int),
        }
    }
}

#[derive(Debug, PartialEq)]
enum Inexact {
    /// The product has a fractional part.
    NotWhole,
    /// More than 24 significant decimal places.
    TooPrecise,
    /// Does not fit in `u64`.
    TooLarge,
}

/// `number × factor` exactly, for a valid decimal `number` (see [`Quantity::number_is_valid`]).
fn scale_decimal(number: &str, factor: u64) -> Result<u64, Inexact> {
    let (int, frac) = number.split_once('.').unwrap_or((number, ""));
    let int = int.trim_start_matches('0');
    let frac = frac.trim_end_matches('0');
    if int.len() > 30 {
        return Err(Inexact::TooLarge);
    }
    if frac.len() > 24 {
        return Err(Inexact::TooPrecise);
    }
    // At most 30 digits (< 2^100) times a factor below 2^36: fits in u128.
    let int_value: u128 = if int.is_empty() {
        0
    } else {
        int.parse().map_err(|_| Inexact::TooLarge)?
    };
    let mut total = int_value * factor as u128;
    if !frac.is_empty() {
        // At most 24 digits (< 2^80) times a factor below 2^36: fits in u128.
        let numerator: u128 = frac.parse().map_err(|_| Inexact::TooPrecise)?;
        let denominator = 10u128.pow(frac.len() as u32);
        let scaled = numerator * factor as u128;
        let (whole, remainder) = (scaled / denominator, scaled % denominator);
        if remainder != 0 {
            return Err(Inexact::NotWhole);
        }
        total += whole;
    }
    u64::try_from(total).map_err(|_| Inexact::TooLarge)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ns(text: &str) -> u64 {
        parse_duration(text).unwrap().as_nanos()
    }

    #[test]
    fn a_byte_count_reads_in_mib_from_one_mib_and_in_bytes_below() {
        assert_eq!(format_mib(1 << 20), "1 MiB");
        assert_eq!(format_mib((3 << 20) + 5), "3 MiB");
        assert_eq!(format_mib(8 << 30), "8192 MiB");
        assert_eq!(format_mib(1000), "1000 B");
        assert_eq!(format_mib(0), "0 B");
    }

    #[test]
    fn durations_accept_every_unit() {
        assert_eq!(ns("7ns"), 7);
        assert_eq!(ns("3us"), 3_000);
        assert_eq!(ns("100ms"), 100_000_000);
        assert_eq!(ns("1.5s"), 1_500_000_000);
        assert_eq!(ns("2min"), 120_000_000_000);
        assert_eq!(ns("0s"), 0);
    }

    #[test]
    fn decimal_durations_are_converted_exactly_not_through_floats() {
        assert_eq!(ns("0.1s"), 100_000_000);
        assert_eq!(ns("0.3s"), 300_000_000);
        assert_eq!(ns("1.000000001s"), 1_000_000_001);
        assert_eq!(ns("0.0000000010s"), 1);
        assert_eq!(ns("0.25min"), 15_000_000_000);
    }

    #[test]
    fn a_space_between_number_and_unit_is_accepted() {
        assert_eq!(ns("10 ms"), 10_000_000);
        assert_eq!(ns("  10ms "), 10_000_000);
    }

    #[test]
    fn a_duration_without_a_unit_asks_for_one() {
        assert_eq!(
            parse_duration("5").unwrap_err(),
            "\"5\" has no unit; add one, e.g. \"5s\" (units ns, us, ms, s, min)"
        );
    }

    #[test]
    fn negative_and_malformed_durations_are_rejected() {
        assert_eq!(
            parse_duration("-1s").unwrap_err(),
            "\"-1s\" is negative; a duration must be >= 0"
        );
        for bad in [
            "1.5sec", "abc", "", "s", ".5s", "1.s", "1..5s", "1e3ms", "+1s", "1 s s",
        ] {
            assert_eq!(
                parse_duration(bad).unwrap_err(),
                format!("{bad:?} is not a duration, e.g. \"1.5s\" (units ns, us, ms, s, min)")
            );
        }
    }

    #[test]
    fn sub_nanosecond_and_oversized_durations_are_rejected() {
        assert_eq!(
            parse_duration("0.5ns").unwrap_err(),
            "\"0.5ns\" is not a whole number of nanoseconds"
        );
        assert_eq!(
            parse_duration("1000000000000min").unwrap_err(),
            "\"1000000000000min\" is too large"
        );
        assert_eq!(
            parse_duration("0.0000000000000000000000001s").unwrap_err(),
            "\"0.0000000000000000000000001s\" has too many decimal places"
        );
        assert_eq!(ns("18446744073709551615ns"), u64::MAX);
        assert!(parse_duration("18446744073709551616ns").is_err());
    }

    #[test]
    fn rates_are_decimal_and_exact() {
        assert_eq!(parse_rate("10Mbps"), Ok(Rate::mbps(10)));
        assert_eq!(parse_rate("10 Mbps"), Ok(Rate::mbps(10)));
        assert_eq!(parse_rate("1.5Mbps"), Ok(Rate::bps(1_500_000)));
        assert_eq!(parse_rate("64Kbps"), Ok(Rate::bps(64_000)));
        assert_eq!(parse_rate("64kbps"), Ok(Rate::bps(64_000)));
        assert_eq!(parse_rate("2.5Gbps"), Ok(Rate::bps(2_500_000_000)));
        assert_eq!(parse_rate("9600bps"), Ok(Rate::bps(9600)));
    }

    #[test]
    fn a_misspelled_rate_unit_gives_an_example() {
        assert_eq!(
            parse_rate("10 Mbs").unwrap_err(),
            "\"10 Mbs\" is not a rate, e.g. \"10Mbps\""
        );
        assert_eq!(
            parse_rate("10MBps").unwrap_err(),
            "\"10MBps\" is not a rate, e.g. \"10Mbps\""
        );
    }

    #[test]
    fn zero_negative_unitless_and_fractional_bit_rates_are_rejected() {
        assert_eq!(
            parse_rate("0Mbps").unwrap_err(),
            "\"0Mbps\" is out of range; must be greater than 0"
        );
        assert_eq!(
            parse_rate("-1Mbps").unwrap_err(),
            "\"-1Mbps\" is negative; a rate must be greater than 0"
        );
        assert_eq!(
            parse_rate("10").unwrap_err(),
            "\"10\" has no unit; add one, e.g. \"10Mbps\" (units bps, Kbps, Mbps, Gbps)"
        );
        assert_eq!(
            parse_rate("1.5bps").unwrap_err(),
            "\"1.5bps\" is not a whole number of bits per second"
        );
    }

    #[test]
    fn sizes_use_1000_for_si_prefixes_and_1024_for_binary_ones() {
        assert_eq!(parse_size("1500"), Ok(1500));
        assert_eq!(parse_size("1500B"), Ok(1500));
        assert_eq!(parse_size("64KB"), Ok(64_000));
        assert_eq!(parse_size("64kB"), Ok(64_000));
        assert_eq!(parse_size("1.5MB"), Ok(1_500_000));
        assert_eq!(parse_size("2GB"), Ok(2_000_000_000));
        assert_eq!(parse_size("64KiB"), Ok(65_536));
        assert_eq!(parse_size("64MiB"), Ok(64 << 20));
        assert_eq!(parse_size("1GiB"), Ok(1 << 30));
        assert_eq!(parse_size("0.5KiB"), Ok(512));
    }

    #[test]
    fn bad_sizes_are_rejected_with_the_unit_list() {
        assert_eq!(
            parse_size("64 KBs").unwrap_err(),
            "\"64 KBs\" is not a size, e.g. \"64KB\" (units B, KB, MB, GB, KiB, MiB, GiB)"
        );
        assert_eq!(
            parse_size("20pkt").unwrap_err(),
            "\"20pkt\" is not a size, e.g. \"64KB\" (units B, KB, MB, GB, KiB, MiB, GiB)"
        );
        assert_eq!(
            parse_size("0.5B").unwrap_err(),
            "\"0.5B\" is not a whole number of bytes"
        );
        assert_eq!(
            parse_size("-1KB").unwrap_err(),
            "\"-1KB\" is negative; a size must be >= 0"
        );
    }

    #[test]
    fn window_sizes_also_take_segment_counts() {
        assert_eq!(parse_window_size("20pkt"), Ok(WindowSize::Segments(20)));
        assert_eq!(parse_window_size("20 seg"), Ok(WindowSize::Segments(20)));
        assert_eq!(parse_window_size("64KiB"), Ok(WindowSize::Bytes(65_536)));
        assert_eq!(WindowSize::Segments(20).to_bytes(1460), Some(29_200));
        assert_eq!(WindowSize::Bytes(5).to_bytes(1460), Some(5));
        assert_eq!(WindowSize::Segments(u64::MAX).to_bytes(2), None);
        assert_eq!(
            parse_window_size("2.5pkt").unwrap_err(),
            "\"2.5pkt\" is not a whole number of segments"
        );
        assert_eq!(
            parse_window_size("20 packets").unwrap_err(),
            "\"20 packets\" is not a size, e.g. \"64KB\" or \"20pkt\" (units B, KB, MB, GB, KiB, MiB, GiB, pkt, seg)"
        );
    }

    #[test]
    fn formatted_durations_read_back_exactly() {
        let cases = [
            (0, "0s"),
            (7, "7ns"),
            (1_500, "1.5us"),
            (200_000_000, "200ms"),
            (1_500_000_000, "1.5s"),
            (1_000_000_001, "1.000000001s"),
            (120_000_000_000, "120s"),
        ];
        for (n, text) in cases {
            assert_eq!(format_duration(SimDuration::from_nanos(n)), text);
            assert_eq!(ns(text), n);
        }
    }
}
