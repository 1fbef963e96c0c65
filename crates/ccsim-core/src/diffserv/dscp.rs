// SPDX-License-Identifier: MIT
//! Differentiated Services code points (RFC 2474 §3): the upper six bits of the IPv4 TOS byte
//! (the IPv6 Traffic Class); the lower two are ECN (RFC 3168 §5). A packet's `dscp` field holds
//! the six bits, 0 to 63.
//!
//! ```text
//!   TOS byte:  | D5 D4 D3 D2 D1 D0 | ECN ECN |      EF = 46 = 101110 → TOS 0xB8 (184)
//! ```

/// Default (best effort), RFC 2474 §4.1.
pub const DEFAULT: u8 = 0;
/// Expedited Forwarding, RFC 3246 §2.
pub const EF: u8 = 46;

/// Class Selector n (RFC 2474 §4.2.2): 8·n, compatible with IP precedence n.
pub const fn cs(n: u8) -> u8 {
    8 * n
}

/// Assured Forwarding class `x` (1..=4), drop precedence `y` (1 low ..= 3 high): 8x + 2y
/// (RFC 2597 §6).
pub const fn af(x: u8, y: u8) -> u8 {
    8 * x + 2 * y
}

/// The TOS byte carrying `dscp` with ECN bits `ecn` (RFC 2474 §3, RFC 3168 §5).
pub const fn tos(dscp: u8, ecn: u8) -> u8 {
    (dscp << 2) | (ecn & 3)
}

/// The AF drop precedence of a code point (1, 2 or 3), or `None` if it is not an AF code point.
pub fn af_drop_precedence(dscp: u8) -> Option<u8> {
    let x = dscp / 8;
    let y = (dscp % 8) / 2;
    if dscp.is_multiple_of(2) && (1..=4).contains(&x) && (1..=3).contains(&y) {
        Some(y)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_points_and_tos_bytes_are_those_of_rfc_2474_2597_and_3246() {
        assert_eq!(tos(EF, 0), 0xB8);
        assert_eq!(tos(EF, 0), 184);
        assert_eq!(af(1, 1), 10);
        assert_eq!(af(2, 3), 22);
        assert_eq!(af(3, 2), 28);
        assert_eq!(af(4, 1), 34);
        assert_eq!(af(4, 3), 38);
        assert_eq!(cs(5), 40);
        assert_eq!(af_drop_precedence(af(3, 2)), Some(2));
        assert_eq!(af_drop_precedence(EF), None);
        assert_eq!(af_drop_precedence(cs(1)), None);
    }
}
