// SPDX-License-Identifier: MIT
//! The keys of a `type = "sctp"` flow (`docs/scenario.md`, `docs/sctp.md`): its paths, its
//! primary, its mode and every parameter of RFC 4960 with the RFC's default.
//!
//! ```toml
//! [flows.assoc]
//! type = "sctp"
//! src = "h1"
//! dst = "h2"
//! paths = [{ src_link = "a0", dst_link = "b0" }, { src_link = "a1", dst_link = "b1" }]
//! primary = 0
//! ```
//!
//! Without `paths`, the i-th link of `src` is paired with the i-th link of `dst` (in the order of
//! `[links]`), as many paths as the host with fewer links has.

use indexmap::IndexMap;
use toml::Value;

use super::reader::{opt, Field, Reader, Res, LINK_NAME};
use crate::scenario::spec::{FlowKind, LinkSpec, SctpPathSpec};
use crate::sctp::{LsOutstanding, MaxBurstRule, RtxPolicy, SctpMode, SctpSpec};

pub(super) const SCTP_KEYS: &[&str] = &[
    "paths",
    "primary",
    "mode",
    "packet_size",
    "rcv_buffer",
    "initial_cwnd",
    "initial_ssthresh",
    "rto_initial",
    "rto_min",
    "rto_max",
    "path_max_retrans",
    "assoc_max_retrans",
    "hb_interval",
    "max_burst",
    "max_burst_rule",
    "fast_rtx_threshold",
    "rtx_to_alt",
    "sack_frequency",
    "sack_delay",
    "redundant_rtx",
    "rwnd_outstanding",
    "sfr",
    "cuc",
    "dac",
    "rtx_policy",
    "cc",
];

/// The smallest packet_size: the 48 bytes of headers and 4 bytes of data.
const MIN_PACKET_SIZE: u32 = 52;

pub(super) fn read_sctp_flow(
    r: &mut Reader,
    src: &str,
    dst: &str,
    links: &IndexMap<String, LinkSpec>,
) -> Res<FlowKind> {
    let paths = match r.get("paths") {
        Some(f) => read_paths(&f, src, dst, links)?,
        None => default_paths(src, dst, links),
    };
    let primary = match r.get("primary") {
        Some(f) => f.int_in(0, paths.len() as i64 - 1)? as usize,
        None => 0,
    };
    let d = SctpSpec::default();
    let mode = match opt(r, "mode", |f| f.choice(&["single", "ls", "cmt"]))? {
        Some("ls") => SctpMode::Ls,
        Some("cmt") => SctpMode::Cmt,
        _ => SctpMode::Single,
    };
    // CMT's options exist in CMT mode only.
    let mut cmt_flag = |key: &str, default: bool| -> Res<bool> {
        match r.get(key) {
            Some(f) if mode != SctpMode::Cmt => Err(f.error("applies to mode = \"cmt\" only")),
            Some(f) => f.boolean(),
            None => Ok(default),
        }
    };
    let (cmt_sfr, cmt_cuc, cmt_dac) = (
        cmt_flag("sfr", d.cmt_sfr)?,
        cmt_flag("cuc", d.cmt_cuc)?,
        cmt_flag("dac", d.cmt_dac)?,
    );
    let rtx_policy = match r.get("rtx_policy") {
        Some(f) if mode != SctpMode::Cmt => {
            return Err(f.error("applies to mode = \"cmt\" only"));
        }
        Some(f) => match f.choice(&["same", "cwnd", "ssthresh"])? {
            "same" => RtxPolicy::Same,
            "ssthresh" => RtxPolicy::Ssthresh,
            _ => RtxPolicy::Cwnd,
        },
        None => d.rtx_policy,
    };
    // Coupling needs several paths carrying new data: CMT or LS.
    let coupled = match r.get("cc") {
        Some(f) if mode == SctpMode::Single => {
            return Err(f.error("applies to mode = \"cmt\" or \"ls\" only"));
        }
        Some(f) => f.choice(&["uncoupled", "lia"])? == "lia",
        None => d.coupled,
    };
    // Redundant retransmission exists in LS mode only (an option that does nothing is refused).
    let ls_redundant_rtx = match r.get("redundant_rtx") {
        Some(f) if mode != SctpMode::Ls => {
            return Err(f.error("applies to mode = \"ls\" only"));
        }
        Some(f) => f.boolean()?,
        None => d.ls_redundant_rtx,
    };
    // The receive-window rule's reading (seed 004 Fig. 6, §3.5), LS mode only.
    let ls_outstanding = match r.get("rwnd_outstanding") {
        Some(f) if mode != SctpMode::Ls => {
            return Err(f.error("applies to mode = \"ls\" only"));
        }
        Some(f) => match f.choice(&["htsn_minus_ctsn", "unacked"])? {
            "unacked" => LsOutstanding::Unacked,
            _ => LsOutstanding::HtsnMinusCtsn,
        },
        None => d.ls_outstanding,
    };
    if mode == SctpMode::Ls && paths.len() > 64 {
        return Err(super::reader::error(
            &r.path,
            format!("mode = \"ls\" takes at most 64 paths, not {}", paths.len()),
        ));
    }
    let packet_size =
        opt(r, "packet_size", |f| f.size_u32(MIN_PACKET_SIZE))?.unwrap_or(d.packet_size);
    let chunk = (packet_size - crate::sctp::config::DATA_OVERHEAD) as u64;
    let rcv_buffer = match r.get("rcv_buffer") {
        Some(f) => {
            let b = f.positive_size()?;
            if b < chunk {
                return Err(f.out_of_range(&format!(
                    "at least one chunk of user data ({chunk} B at packet_size {packet_size})"
                )));
            }
            b
        }
        None => d.rcv_buffer,
    };
    let initial_cwnd = opt(r, "initial_cwnd", |f| f.positive_size())?;
    let initial_ssthresh = opt(r, "initial_ssthresh", |f| f.positive_size())?;
    let rto_initial = opt(r, "rto_initial", |f| f.positive_duration())?.unwrap_or(d.rto_initial);
    let rto_min = opt(r, "rto_min", |f| f.positive_duration())?.unwrap_or(d.rto_min);
    let rto_max = match r.get("rto_max") {
        Some(f) => {
            let m = f.positive_duration()?;
            if m < rto_min {
                return Err(f.out_of_range("at least rto_min"));
            }
            m
        }
        None if rto_min > d.rto_max => rto_min,
        None => d.rto_max,
    };
    // Max.Burst (§6.1 D): on the association in single mode, per path in CMT and LS modes.
    let max_burst = opt(r, "max_burst", |f| f.u32_in(0, 1_000_000))?.unwrap_or(d.max_burst);
    // When it applies: RFC 4960's rule or ns-2's, LS mode only.
    let max_burst_rule = match r.get("max_burst_rule") {
        Some(f) if mode != SctpMode::Ls => {
            return Err(f.error("applies to mode = \"ls\" only"));
        }
        Some(f) => match f.choice(&["rfc4960", "ns2"])? {
            "ns2" => MaxBurstRule::Ns2,
            _ => MaxBurstRule::Rfc4960,
        },
        None => d.max_burst_rule,
    };
    let spec = SctpSpec {
        mode,
        packet_size,
        rcv_buffer,
        initial_cwnd,
        initial_ssthresh,
        rto_initial,
        rto_min,
        rto_max,
        path_max_retrans: opt(r, "path_max_retrans", |f| f.u32_in(0, 1000))?
            .unwrap_or(d.path_max_retrans),
        assoc_max_retrans: opt(r, "assoc_max_retrans", |f| f.u32_in(0, 1000))?
            .unwrap_or(d.assoc_max_retrans),
        hb_interval: opt(r, "hb_interval", |f| f.positive_duration())?.unwrap_or(d.hb_interval),
        max_burst,
        max_burst_rule,
        fast_rtx_threshold: opt(r, "fast_rtx_threshold", |f| f.u32_in(1, 255))?
            .unwrap_or(d.fast_rtx_threshold),
        rtx_to_alt: opt(r, "rtx_to_alt", |f| f.boolean())?.unwrap_or(d.rtx_to_alt),
        sack_frequency: opt(r, "sack_frequency", |f| f.u32_in(1, 255))?.unwrap_or(d.sack_frequency),
        sack_delay: opt(r, "sack_delay", |f| f.positive_duration())?.unwrap_or(d.sack_delay),
        ls_redundant_rtx,
        ls_outstanding,
        cmt_sfr,
        cmt_cuc,
        cmt_dac,
        rtx_policy,
        coupled,
    };
    Ok(FlowKind::Sctp {
        paths,
        primary,
        sctp: spec,
    })
}

fn read_paths(
    f: &Field,
    src: &str,
    dst: &str,
    links: &IndexMap<String, LinkSpec>,
) -> Res<Vec<SctpPathSpec>> {
    const SHAPE: &str = "an array of tables such as [{ src_link = \"a0\", dst_link = \"b0\" }]";
    let Value::Array(items) = f.value else {
        return Err(f.expected(SHAPE));
    };
    if items.is_empty() || items.len() > 255 {
        return Err(f.error("give 1 to 255 paths"));
    }
    let mut paths: Vec<SctpPathSpec> = Vec::new();
    for (i, value) in items.iter().enumerate() {
        let item = Field {
            value,
            path: format!("{}[{i}]", f.path),
        };
        let mut t = item.table(SHAPE)?;
        t.allow(&["src_link", "dst_link"])?;
        let end_of = |field: Field, host: &str| -> Res<String> {
            let link = field.link(links)?;
            let l = &links[&link];
            if l.a != host && l.b != host {
                return Err(field.error(format!(
                    "link {link:?} does not touch {host:?} (its ends are {:?} and {:?})",
                    l.a, l.b
                )));
            }
            Ok(link)
        };
        let src_link = end_of(t.req("src_link", LINK_NAME)?, src)?;
        let dst_field = t.req("dst_link", LINK_NAME)?;
        let dst_path = dst_field.path.clone();
        let dst_link = end_of(dst_field, dst)?;
        t.finish()?;
        // A path is a destination address (RFC 4960 §6.4): one per receiver interface.
        if let Some(j) = paths.iter().position(|p| p.dst_link == dst_link) {
            return Err(super::reader::error(
                &dst_path,
                format!("paths[{j}] already goes to {dst:?}'s address on {dst_link:?}"),
            ));
        }
        paths.push(SctpPathSpec { src_link, dst_link });
    }
    Ok(paths)
}

/// The i-th link of `src` with the i-th link of `dst`.
fn default_paths(src: &str, dst: &str, links: &IndexMap<String, LinkSpec>) -> Vec<SctpPathSpec> {
    let of = |host: &str| -> Vec<String> {
        links
            .iter()
            .filter(|(_, l)| l.a == host || l.b == host)
            .map(|(n, _)| n.clone())
            .collect()
    };
    of(src)
        .into_iter()
        .zip(of(dst))
        .map(|(src_link, dst_link)| SctpPathSpec { src_link, dst_link })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::*;

    /// h1 and h2 each on two links, through r1 and r2.
    const TWO_PATHS: &str = r#"
duration = "10s"
[nodes]
h1 = "host"
h2 = "host"
r1 = "router"
r2 = "router"
[links.a0]
a = "h1"
b = "r1"
rate = "10Mbps"
delay = "1ms"
[links.b0]
a = "r1"
b = "h2"
rate = "10Mbps"
delay = "1ms"
[links.a1]
a = "h1"
b = "r2"
rate = "10Mbps"
delay = "1ms"
[links.b1]
a = "r2"
b = "h2"
rate = "10Mbps"
delay = "1ms"
[flows.f1]
type = "sctp"
src = "h1"
dst = "h2"
"#;

    fn sctp_of(s: &crate::scenario::Spec) -> (Vec<SctpPathSpec>, usize, SctpSpec) {
        match &s.flows["f1"].kind {
            FlowKind::Sctp {
                paths,
                primary,
                sctp,
            } => (paths.clone(), *primary, sctp.clone()),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn without_paths_the_hosts_links_pair_up_in_order_with_rfc_defaults() {
        let (paths, primary, sctp) = sctp_of(&spec(TWO_PATHS, &[]));
        let names: Vec<(&str, &str)> = paths
            .iter()
            .map(|p| (p.src_link.as_str(), p.dst_link.as_str()))
            .collect();
        assert_eq!(names, [("a0", "b0"), ("a1", "b1")]);
        assert_eq!(primary, 0);
        assert_eq!(sctp, SctpSpec::default());
    }

    #[test]
    fn explicit_paths_and_parameters_are_read() {
        let s = spec(
            TWO_PATHS,
            &[
                r#"flows.f1.paths=[{src_link="a1", dst_link="b1"}, {src_link="a0", dst_link="b0"}]"#,
                "flows.f1.primary=1",
                "flows.f1.rcv_buffer=\"128KiB\"",
                "flows.f1.path_max_retrans=2",
                "flows.f1.rtx_to_alt=false",
            ],
        );
        let (paths, primary, sctp) = sctp_of(&s);
        assert_eq!(paths[0].src_link, "a1");
        assert_eq!(primary, 1);
        assert_eq!(sctp.rcv_buffer, 131_072);
        assert_eq!(sctp.path_max_retrans, 2);
        assert!(!sctp.rtx_to_alt);
    }

    #[test]
    fn redundant_retransmission_is_an_ls_mode_option_only() {
        let (_, _, sctp) = sctp_of(&spec(
            TWO_PATHS,
            &["flows.f1.mode=\"ls\"", "flows.f1.redundant_rtx=false"],
        ));
        assert_eq!(sctp.mode, SctpMode::Ls);
        assert!(!sctp.ls_redundant_rtx);
        assert_eq!(
            message(TWO_PATHS, &["flows.f1.redundant_rtx=false"]),
            "flows.f1.redundant_rtx: applies to mode = \"ls\" only"
        );
    }

    #[test]
    fn the_ls_receive_window_reading_is_an_ls_mode_option_counting_unacked_tsns_by_default() {
        let ls = "flows.f1.mode=\"ls\"";
        let (_, _, sctp) = sctp_of(&spec(TWO_PATHS, &[ls]));
        assert_eq!(sctp.ls_outstanding, LsOutstanding::Unacked);
        let (_, _, sctp) = sctp_of(&spec(
            TWO_PATHS,
            &[ls, "flows.f1.rwnd_outstanding=\"htsn_minus_ctsn\""],
        ));
        assert_eq!(sctp.ls_outstanding, LsOutstanding::HtsnMinusCtsn);
        assert_eq!(
            message(TWO_PATHS, &["flows.f1.rwnd_outstanding=\"unacked\""]),
            "flows.f1.rwnd_outstanding: applies to mode = \"ls\" only"
        );
    }

    #[test]
    fn max_burst_is_read_in_every_mode_and_defaults_to_four() {
        for mode in ["single", "cmt", "ls"] {
            let m = format!("flows.f1.mode=\"{mode}\"");
            let (_, _, sctp) = sctp_of(&spec(TWO_PATHS, &[m.as_str(), "flows.f1.max_burst=2"]));
            assert_eq!(sctp.max_burst, 2, "{mode}");
            let (_, _, sctp) = sctp_of(&spec(TWO_PATHS, &[m.as_str()]));
            assert_eq!(sctp.max_burst, 4, "{mode}");
            assert_eq!(sctp.max_burst_rule, MaxBurstRule::Rfc4960, "{mode}");
        }
        let ls = ["flows.f1.mode=\"ls\"", "flows.f1.max_burst_rule=\"ns2\""];
        assert_eq!(
            sctp_of(&spec(TWO_PATHS, &ls)).2.max_burst_rule,
            MaxBurstRule::Ns2
        );
        assert_eq!(
            message(TWO_PATHS, &["flows.f1.max_burst_rule=\"ns2\""]),
            "flows.f1.max_burst_rule: applies to mode = \"ls\" only"
        );
    }

    #[test]
    fn cmt_options_are_read_in_cmt_mode_and_refused_elsewhere() {
        let (_, _, sctp) = sctp_of(&spec(
            TWO_PATHS,
            &[
                "flows.f1.mode=\"cmt\"",
                "flows.f1.sfr=false",
                "flows.f1.rtx_policy=\"ssthresh\"",
            ],
        ));
        assert_eq!(sctp.mode, SctpMode::Cmt);
        assert!(!sctp.cmt_sfr && sctp.cmt_cuc && sctp.cmt_dac);
        assert_eq!(sctp.rtx_policy, RtxPolicy::Ssthresh);
        let (_, _, ls) = sctp_of(&spec(
            TWO_PATHS,
            &["flows.f1.mode=\"ls\"", "flows.f1.cc=\"lia\""],
        ));
        assert!(ls.coupled);
        assert_eq!(
            message(TWO_PATHS, &["flows.f1.cc=\"lia\""]),
            "flows.f1.cc: applies to mode = \"cmt\" or \"ls\" only"
        );
        assert_eq!(
            message(TWO_PATHS, &["flows.f1.dac=false"]),
            "flows.f1.dac: applies to mode = \"cmt\" only"
        );
    }

    #[test]
    fn bad_paths_are_refused_naming_the_field() {
        assert_eq!(
            message(
                TWO_PATHS,
                &[r#"flows.f1.paths=[{src_link="b0", dst_link="b1"}]"#]
            ),
            "flows.f1.paths[0].src_link: link \"b0\" does not touch \"h1\" (its ends are \"r1\" and \"h2\")"
        );
        assert_eq!(
            message(
                TWO_PATHS,
                &[
                    r#"flows.f1.paths=[{src_link="a0", dst_link="b0"}, {src_link="a1", dst_link="b0"}]"#
                ]
            ),
            "flows.f1.paths[1].dst_link: paths[0] already goes to \"h2\"'s address on \"b0\""
        );
        assert_eq!(
            message(TWO_PATHS, &["flows.f1.primary=2"]),
            "flows.f1.primary: 2 is out of range; must be from 0 to 1"
        );
        assert_eq!(
            message(TWO_PATHS, &["flows.f1.mode=\"fast\""]),
            "flows.f1.mode: \"fast\" is not one of single, ls, cmt"
        );
        assert_eq!(
            message(TWO_PATHS, &["flows.f1.size=1000"]),
            "flows.f1.size: unknown key; allowed: type, src, dst, start, stop, start_jitter, \
             count, paths, primary, mode, packet_size, rcv_buffer, initial_cwnd, initial_ssthresh, \
             rto_initial, rto_min, rto_max, path_max_retrans, assoc_max_retrans, hb_interval, max_burst, \
             max_burst_rule, fast_rtx_threshold, rtx_to_alt, sack_frequency, sack_delay, redundant_rtx, \
             rwnd_outstanding, sfr, cuc, dac, rtx_policy, cc"
        );
    }
}
