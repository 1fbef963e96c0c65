// SPDX-License-Identifier: MIT
//! The DiffServ edge as a node hook: an ordered list of rules, each a classifier match with an
//! optional meter and the actions for each colour (Cisco's `rate-limit input access-group`
//! lines and `set ip dscp`, RFC 2475 §2.3.3's meter → marker/dropper).
//!
//! ```text
//!   packet ─> rule 0: match? ─ no ─────────────────────────────> rule 1 ...
//!                      └ yes ─> meter (none: green) ─> action of the colour
//!                                transmit ........ forward now (later rules are skipped)
//!                                set-dscp-transmit rewrite DSCP, forward
//!                                continue ........ next rule (set-dscp-continue: rewrite first)
//!                                drop ............ a `hook` drop on the arrival link
//!   no rule decided: forward unchanged
//! ```
//!
//! A rule without a meter is a marker (every matching packet is green). Counters per rule and
//! colour are kept for tests and reports.

use super::classifier::MatchSpec;
use super::meter::{Action, Colour, Meter, MeterSpec, Step};
use crate::hook::{Filtered, HookOutput, IfaceId, NodeHook};
use crate::packet::{Addr, Packet};
use crate::time::SimTime;

/// One rule of a policer hook.
#[derive(Clone, Debug, PartialEq)]
pub struct PolicerRule {
    pub matches: MatchSpec,
    pub meter: Option<MeterSpec>,
    /// Actions for green (CAR conform), yellow and red (CAR exceed).
    pub conform: Action,
    pub exceed: Action,
    pub violate: Action,
}

/// A policer/marker hook's configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct PolicerSpec {
    pub rules: Vec<PolicerRule>,
}

/// The hook.
pub struct Policer {
    rules: Vec<(PolicerRule, Option<Meter>)>,
    /// Packets per rule and colour (green, yellow, red).
    pub counts: Vec<[u64; 3]>,
    /// Where the walk over the rules may start for the packets of a flow from a source: the
    /// first rule whose fields other than the DSCP hold for them (those fields are the same for
    /// every such packet; the DSCP is checked packet by packet). Indexed by flow, two sources
    /// (the two directions) per flow; `(address, first rule)`. Without it each packet would
    /// walk every rule before its own: O(rules) per packet at an edge with many rules.
    first_rule: Vec<[Option<(Addr, u16)>; 2]>,
}

impl Policer {
    pub fn new(spec: &PolicerSpec) -> Policer {
        Policer {
            rules: spec
                .rules
                .iter()
                .map(|r| (r.clone(), r.meter.as_ref().map(Meter::new)))
                .collect(),
            counts: vec![[0; 3]; spec.rules.len()],
            first_rule: Vec::new(),
        }
    }

    /// The first rule whose non-DSCP fields hold for `pkt`'s flow and source (see
    /// `first_rule`); `rules.len()` if none.
    #[inline]
    fn first_candidate(&mut self, pkt: &Packet) -> usize {
        let f = pkt.flow as usize;
        if f >= self.first_rule.len() {
            self.first_rule.resize(f + 1, [None; 2]);
        }
        let slots = &mut self.first_rule[f];
        for (addr, k) in slots.iter().flatten() {
            if *addr == pkt.src {
                return *k as usize;
            }
        }
        let k = self
            .rules
            .iter()
            .position(|(r, _)| r.matches.matches_addresses(pkt))
            .unwrap_or(self.rules.len());
        // A third source for one flow (not made by ccsim's endpoints) is simply not remembered.
        if let Some(free) = slots.iter_mut().find(|s| s.is_none()) {
            *free = Some((pkt.src, k as u16));
        }
        k
    }

    /// The fate of one packet: `Ok(pkt)` (possibly re-marked) to forward, `Err(pkt)` to drop.
    #[allow(clippy::result_large_err)]
    pub fn police(&mut self, now: SimTime, mut pkt: Packet) -> Result<Packet, Packet> {
        if self.admits(now, &mut pkt) {
            Ok(pkt)
        } else {
            Err(pkt)
        }
    }

    /// Whether `pkt` is forwarded (possibly re-marked in place) rather than dropped; the packet
    /// is not moved, so the hook's path copies its 120 bytes once less each way.
    #[inline]
    pub fn admits(&mut self, now: SimTime, pkt: &mut Packet) -> bool {
        let first = self.first_candidate(pkt);
        for (i, (rule, meter)) in self.rules.iter_mut().enumerate().skip(first) {
            // The first candidate's other fields are known to hold (`first_rule`): only its
            // DSCP is checked, without reading the rule's address and flow lists again.
            let holds = if i == first {
                rule.matches.matches_dscp(pkt.dscp)
            } else {
                rule.matches.matches(pkt)
            };
            if !holds {
                continue;
            }
            let colour = match meter {
                Some(m) => m.meter(now, pkt.size, Colour::of_dscp(pkt.dscp)),
                None => Colour::Green,
            };
            self.counts[i][colour as usize] += 1;
            match Action::of_colour(colour, rule.conform, rule.exceed, rule.violate)
                .apply(&mut pkt.dscp)
            {
                Step::Forward => return true,
                Step::Drop => return false,
                Step::Next => {}
            }
        }
        true
    }
}

impl NodeHook for Policer {
    fn on_packet(
        &mut self,
        now: SimTime,
        mut pkt: Packet,
        _: Option<IfaceId>,
        out: &mut HookOutput,
    ) {
        if self.admits(now, &mut pkt) {
            out.forward(pkt)
        } else {
            out.drop_packet(pkt)
        }
    }

    // A policer only passes, re-marks or drops: the engine may show it the packet in place.
    fn filter(&mut self, now: SimTime, pkt: &mut Packet, _: Option<IfaceId>) -> Filtered {
        if self.admits(now, pkt) {
            Filtered::Pass
        } else {
            Filtered::Drop
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diffserv::dscp::EF;
    use crate::diffserv::meter::CarLimit;
    use crate::time::Rate;

    /// Paper 003's edge: CAR at 10 Mbit/s, Bc = Be = 10,000 B, conform → DSCP 46, else drop.
    fn papers_car_line() -> PolicerSpec {
        PolicerSpec {
            rules: vec![PolicerRule {
                matches: MatchSpec::default(),
                meter: Some(MeterSpec::Car {
                    rate: Rate::mbps(10),
                    normal_burst: 10_000,
                    excess_burst: 10_000,
                    limit: CarLimit::ExcessBurst,
                }),
                conform: Action::SetDscpTransmit(EF),
                exceed: Action::Drop,
                violate: Action::Drop,
            }],
        }
    }

    #[test]
    fn the_papers_car_line_marks_conforming_packets_ef_and_drops_the_excess() {
        // Paper 003: rate-limit input 10 Mbit/s, Bc = Be = 10,000 B, conform → set DSCP 46,
        // exceed → drop. 1000-B packets offered at 20 Mbit/s for 1 s: about half pass.
        let spec = papers_car_line();
        let mut p = Policer::new(&spec);
        let mut passed = 0u64;
        for k in 0..2500u64 {
            let now = SimTime::from_nanos(k * 400_000);
            if let Ok(out) = p.police(now, Packet::test_udp(1000, 0, k)) {
                assert_eq!(out.dscp, EF);
                passed += 1;
            }
        }
        // 10 Mbit/s for 1 s is 1250 packets, plus the 10 packets of the initial burst.
        assert!((1255..=1261).contains(&passed), "passed {passed}");
        assert_eq!(p.counts[0][0], passed);
    }

    #[test]
    fn continue_goes_on_to_the_next_rule_and_an_unmatched_packet_passes_unchanged() {
        let mark = |d| PolicerRule {
            matches: MatchSpec::default(),
            meter: None,
            conform: Action::SetDscpContinue(d),
            exceed: Action::Drop,
            violate: Action::Drop,
        };
        let mut only_ef = mark(10);
        only_ef.matches.dscp_mask = 1 << 12;
        only_ef.conform = Action::SetDscpTransmit(EF);
        let mut p = Policer::new(&PolicerSpec {
            rules: vec![mark(12), only_ef, mark(0)],
        });
        let out = p
            .police(SimTime::ZERO, Packet::test_udp(100, 0, 0))
            .unwrap();
        assert_eq!(out.dscp, EF);
        let mut none = Policer::new(&PolicerSpec { rules: vec![] });
        let mut pkt = Packet::test_udp(100, 0, 0);
        pkt.dscp = 8;
        assert_eq!(none.police(SimTime::ZERO, pkt).unwrap().dscp, 8);
    }

    #[test]
    fn remembering_the_first_candidate_rule_per_flow_keeps_first_match_semantics() {
        // Rule 0 needs DSCP 10 and src address 1; rule 1 takes src 1 whatever its DSCP; rule 2
        // takes everything. Packets of one flow from two sources and with changing DSCPs must
        // get the rule a full walk would give.
        let rule = |src: Option<Addr>, dscp_mask: u64, mark: u8| PolicerRule {
            matches: MatchSpec {
                src_nodes: src.map(|_| vec!["n".into()]).unwrap_or_default(),
                src: src.into_iter().collect(),
                dscp_mask,
                ..MatchSpec::default()
            },
            meter: None,
            conform: Action::SetDscpTransmit(mark),
            exceed: Action::Drop,
            violate: Action::Drop,
        };
        let spec = PolicerSpec {
            rules: vec![
                rule(Some(1), 1 << 10, 40),
                rule(Some(1), 0, 41),
                rule(None, 0, 42),
            ],
        };
        let mut p = Policer::new(&spec);
        let mut walk = Policer::new(&spec);
        for k in 0..40u64 {
            let mut pkt = Packet::test_udp(100, 0, k);
            pkt.flow = (k % 3) as u32;
            pkt.src = if k % 2 == 0 { 1 } else { 7 };
            pkt.dscp = if k % 5 == 0 { 10 } else { 0 };
            let got = p.police(SimTime::ZERO, pkt.clone()).unwrap().dscp;
            // The reference: a fresh policer per packet walks every rule.
            walk.first_rule.clear();
            let want = walk.police(SimTime::ZERO, pkt.clone()).unwrap().dscp;
            assert_eq!(got, want, "packet {k}");
            let expected = match (pkt.src, pkt.dscp) {
                (1, 10) => 40,
                (1, _) => 41,
                _ => 42,
            };
            assert_eq!(got, expected, "packet {k}");
        }
    }
    #[test]
    fn the_in_place_filter_decides_and_re_marks_exactly_as_the_hook_does_by_value() {
        // The engine shows a policer its packets in place (`NodeHook::filter`); two policers
        // from one spec, one called each way, must agree packet by packet.
        let spec = papers_car_line();
        let (mut by_value, mut in_place) = (Policer::new(&spec), Policer::new(&spec));
        let (mut passed, mut dropped) = (0, 0);
        for k in 0..2000u64 {
            let now = SimTime::from_nanos(k * 400_000);
            let mut out = HookOutput::default();
            by_value.on_packet(now, Packet::test_udp(1000, 0, k), None, &mut out);
            let mut pkt = Packet::test_udp(1000, 0, k);
            match in_place.filter(now, &mut pkt, None) {
                Filtered::Pass => {
                    assert_eq!(out.packets.pop(), Some(pkt), "packet {k}");
                    passed += 1;
                }
                Filtered::Drop => {
                    assert_eq!((out.packets.len(), out.dropped), (0, 1), "packet {k}");
                    dropped += 1;
                }
                Filtered::NotAFilter => panic!("a policer is a filter"),
            }
        }
        assert!(
            passed > 0 && dropped > 0,
            "both decisions seen: {passed} / {dropped}"
        );
        assert_eq!(by_value.counts, in_place.counts);
    }
}
