// SPDX-License-Identifier: MIT
//! `[tcp] and TCP keys` of `docs/scenario.md`, with "Congestion control": the keys that build a
//! [`TcpSpec`] (owned by [`crate::tcp`]) and the `cc` key that picks a [`CcAlgorithm`] (owned by
//! [`crate::cc`]).
//!
//! TCP keys come in layers, each over the one before:
//!
//! ```text
//!   preset ("rfc": TcpSpec::default, "ns2-2.35", "ns2-2001", "ns3")  the flow's own, else [tcp]'s
//!     <- [tcp] keys                                          defaults for every flow
//!       <- the flow's keys                                   (or an itcp hook's, over its preset)
//! ```
//!
//! Windows given in segments (`"20pkt"`) stay in segments until the last layer has fixed the
//! MSS; the checks that involve several keys run once, on the result.

use toml::{Table, Value};

use super::reader::{
    error, opt, read_fraction_above_zero, read_non_negative, read_open_fraction, Field, Reader,
    Res, A_TABLE,
};
use crate::cc::{CcAlgorithm, Growth};
use crate::scenario::units::{self, WindowSize};
use crate::tcp::{
    AckCredit, EcnFeedback, InitialWindow, LossDetection, PacingSpec, PrrBound, RackSpec,
    RecoverGuard, Recovery, RecoveryExitCredit, RtoBackoffReset, RttSampling, SsthreshFlight,
    TcpSpec, TlpSpec,
};
use crate::time::SimDuration;

pub(super) const TCP_KEYS: &[&str] = &[
    "preset",
    "variant",
    "prr_bound",
    "cc",
    "mss",
    "header_bytes",
    "initial_window",
    "initial_ssthresh",
    "max_window",
    "rcv_buffer",
    "growth",
    "abc_limit",
    "dupthresh",
    "limited_transmit",
    "delayed_ack",
    "delack_timeout",
    "delack_count",
    "max_sack_blocks",
    "rto_initial",
    "rto_min",
    "rto_max",
    "clock_granularity",
    "recover_guard",
    "rtt_sampling",
    "restart_after_idle",
    "handshake",
    "ecn",
    "ect_all",
    "timestamps",
    "timestamp_clock",
    "rto_backoff_reset",
    "ack_credit",
    "whole_segment_ssthresh",
    "ssthresh_flight",
    "partial_ack_send",
    "recovery_exit_credit",
    "pacing",
    "pacing_ss_ratio",
    "pacing_ca_ratio",
    "pacing_quantum",
    "pacing_initial_quantum",
    "dsack",
    "loss_detection",
    "rack_min_rtt_divisor",
    "rack_reo_wnd_persist",
    "tlp",
    "tlp_srtt_multiple",
    "tlp_max_ack_delay",
    "tlp_initial_pto",
];

/// RACK's constants (they need `loss_detection = "rack"`).
const RACK_KEYS: &[&str] = &["rack_min_rtt_divisor", "rack_reo_wnd_persist"];
/// TLP's constants (they need `tlp = true`).
const TLP_KEYS: &[&str] = &["tlp_srtt_multiple", "tlp_max_ack_delay", "tlp_initial_pto"];

#[derive(Clone, Copy, Debug, PartialEq)]
enum Preset {
    Rfc,
    /// ns-2.35 (2011): [`TcpSpec::ns2_235`].
    Ns2v235,
    /// The ns-2 of early 2001 (ns-2.1b7a, ns-2.1b8): [`TcpSpec::ns2_2001`].
    Ns2v2001,
    /// ns-3.48: [`TcpSpec::ns3`].
    Ns3,
}

const PRESETS: &[&str] = &["rfc", "ns2-2.35", "ns2-2001", "ns3"];

/// `preset`: one of [`PRESETS`]. The old `"ns2"` mixed two releases (ns-2.35's timers with the
/// initial window and one-way start of 2001's), so it is refused with the names that replaced
/// it rather than quietly read as one of them.
fn read_preset(f: &Field) -> Res<Preset> {
    if matches!(f.value, Value::String(s) if s == "ns2") {
        return Err(f.error(
            "\"ns2\" names no ns-2 release; use \"ns2-2.35\" (ns-2.35's defaults) or \
             \"ns2-2001\" (the ns-2 of early 2001, ns-2.1b7a/ns-2.1b8)",
        ));
    }
    Ok(match f.choice(PRESETS)? {
        "ns2-2.35" => Preset::Ns2v235,
        "ns2-2001" => Preset::Ns2v2001,
        "ns3" => Preset::Ns3,
        _ => Preset::Rfc,
    })
}

/// A window-like TCP value before the flow's MSS is known.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Window {
    Inf,
    Finite(WindowSize),
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum GrowthKind {
    PerAck,
    Rfc5681,
    Abc,
}

impl GrowthKind {
    fn name(self) -> &'static str {
        match self {
            GrowthKind::PerAck => "per_ack",
            GrowthKind::Rfc5681 => "rfc5681",
            GrowthKind::Abc => "abc",
        }
    }
}

/// TCP keys given in one table (`[tcp]` or a flow); None = not given there.
#[derive(Clone, Debug, Default)]
pub(super) struct TcpLayer {
    preset: Option<Preset>,
    recovery: Option<Recovery>,
    /// The value and the path it was given at (it needs PRR).
    prr_bound: Option<(PrrBound, String)>,
    cc: Option<CcAlgorithm>,
    mss: Option<u32>,
    header_bytes: Option<u32>,
    initial_window: Option<InitialWindow>,
    initial_ssthresh: Option<Window>,
    max_window: Option<Window>,
    rcv_buffer: Option<Window>,
    growth: Option<GrowthKind>,
    /// The value and the path it was given at.
    abc_limit: Option<(u32, String)>,
    dupthresh: Option<u32>,
    limited_transmit: Option<bool>,
    delayed_ack: Option<bool>,
    delack_timeout: Option<SimDuration>,
    delack_count: Option<u32>,
    max_sack_blocks: Option<u32>,
    rto_initial: Option<SimDuration>,
    rto_min: Option<SimDuration>,
    rto_max: Option<SimDuration>,
    clock_granularity: Option<SimDuration>,
    recover_guard: Option<Option<RecoverGuard>>,
    rtt_sampling: Option<RttSampling>,
    restart_after_idle: Option<bool>,
    handshake: Option<bool>,
    /// `ecn`: on or off, the receiver's echo, and whether the sender is L4S (ECT(1)).
    ecn: Option<(bool, EcnFeedback, bool)>,
    ect_all: Option<bool>,
    timestamps: Option<bool>,
    timestamp_clock: Option<SimDuration>,
    rto_backoff_reset: Option<RtoBackoffReset>,
    ack_credit: Option<AckCredit>,
    whole_segment_ssthresh: Option<bool>,
    /// The value and the path it was given at (it needs SACK recovery).
    ssthresh_flight: Option<(SsthreshFlight, String)>,
    /// The value and the path it was given at (it needs SACK recovery).
    partial_ack_send: Option<(bool, String)>,
    recovery_exit_credit: Option<RecoveryExitCredit>,
    /// `pacing` and where it was given.
    pacing: Option<(bool, String)>,
    /// The pacing keys given here, each with where (they need pacing on).
    pacing_keys: Vec<(PacingKey, String)>,
    /// The value and the path it was given at (it needs SACK recovery).
    dsack: Option<(bool, String)>,
    /// `loss_detection` (true: `"rack"`) and the path it was given at.
    loss_detection: Option<(bool, String)>,
    /// `tlp` and the path it was given at.
    tlp: Option<(bool, String)>,
    /// RACK's and TLP's constants: (key, value, path), values in nanoseconds for durations.
    rack_constants: Vec<(&'static str, u64, String)>,
}

/// One of the keys that tune pacing (`pacing_*`), with its value.
#[derive(Clone, Copy, Debug, PartialEq)]
enum PacingKey {
    SsRatio(f64),
    CaRatio(f64),
    Quantum(u32),
    InitialQuantum(u32),
}

impl PacingKey {
    fn name(self) -> &'static str {
        match self {
            PacingKey::SsRatio(_) => "pacing_ss_ratio",
            PacingKey::CaRatio(_) => "pacing_ca_ratio",
            PacingKey::Quantum(_) => "pacing_quantum",
            PacingKey::InitialQuantum(_) => "pacing_initial_quantum",
        }
    }

    fn apply(self, p: &mut PacingSpec) {
        match self {
            PacingKey::SsRatio(x) => p.ss_ratio = x,
            PacingKey::CaRatio(x) => p.ca_ratio = x,
            PacingKey::Quantum(n) => p.quantum = n,
            PacingKey::InitialQuantum(n) => p.initial_quantum = n,
        }
    }
}

/// The `pacing_*` keys of `r`, in a fixed order.
fn read_pacing_keys(r: &mut Reader) -> Res<Vec<(PacingKey, String)>> {
    let mut keys = Vec::new();
    for key in [
        "pacing_ss_ratio",
        "pacing_ca_ratio",
        "pacing_quantum",
        "pacing_initial_quantum",
    ] {
        let Some(f) = r.get(key) else { continue };
        let k = match key {
            "pacing_ss_ratio" => PacingKey::SsRatio(f.positive_number()?),
            "pacing_ca_ratio" => PacingKey::CaRatio(f.positive_number()?),
            "pacing_quantum" => PacingKey::Quantum(f.u32_in(1, u32::MAX)?),
            _ => PacingKey::InitialQuantum(f.u32_in(0, u32::MAX)?),
        };
        keys.push((k, f.path));
    }
    Ok(keys)
}

/// The `[tcp]` table: TCP keys that every flow starts from.
pub(super) fn read_tcp_table(f: &Field) -> Res<TcpLayer> {
    let mut r = f.table(A_TABLE)?;
    r.allow(TCP_KEYS)?;
    let layer = read_tcp_layer(&mut r)?;
    r.finish()?;
    Ok(layer)
}

/// Reads the TCP keys of `r` (the caller has allowed them).
pub(super) fn read_tcp_layer(r: &mut Reader) -> Res<TcpLayer> {
    read_layer(r, false).map(|(layer, _)| layer)
}

/// The TCP keys of an I-TCP relay, whose `mss` may also be `"follow"` (the default): the relay
/// then takes the FH's segment size. Returns the layer and whether the MSS follows.
pub(super) fn read_relay_tcp_layer(r: &mut Reader) -> Res<(TcpLayer, bool)> {
    read_layer(r, true)
}

fn read_layer(r: &mut Reader, relay: bool) -> Res<(TcpLayer, bool)> {
    let follow = |f: &Field| matches!(f.value, Value::String(s) if s.trim() == "follow");
    let (mss, follow_mss) = match r.get("mss") {
        None => (None, relay),
        Some(f) if relay && follow(&f) => (None, true),
        Some(f) if relay => match f.value {
            Value::Integer(_) => (Some(f.size_u32(1)?), false),
            _ => return Err(f.expected("\"follow\" or a size in bytes such as 1000")),
        },
        Some(f) => (Some(f.size_u32(1)?), false),
    };
    let layer = TcpLayer {
        preset: opt(r, "preset", read_preset)?,
        recovery: opt(r, "variant", |f| {
            f.choice(&["reno", "newreno", "sack", "prr"])
        })?
        .map(|v| match v {
            "reno" => Recovery::Reno,
            "newreno" => Recovery::NewReno,
            // The bound is `prr_bound`'s, put in by `finish`.
            "prr" => Recovery::Prr(PrrBound::SlowStart),
            _ => Recovery::Sack,
        }),
        prr_bound: r
            .get("prr_bound")
            .map(|f| {
                let bound = match f.choice(&["ssrb", "crb"])? {
                    "crb" => PrrBound::Conservative,
                    _ => PrrBound::SlowStart,
                };
                Ok((bound, f.path))
            })
            .transpose()?,
        cc: opt(r, "cc", read_cc)?,
        mss,
        header_bytes: opt(r, "header_bytes", |f| f.size_u32(0))?,
        initial_window: opt(r, "initial_window", read_initial_window)?,
        initial_ssthresh: opt(r, "initial_ssthresh", |f| read_window(f, true))?,
        max_window: opt(r, "max_window", |f| read_window(f, true))?,
        rcv_buffer: opt(r, "rcv_buffer", |f| read_window(f, false))?,
        growth: opt(r, "growth", |f| f.choice(&["per_ack", "rfc5681", "abc"]))?.map(|g| match g {
            "per_ack" => GrowthKind::PerAck,
            "abc" => GrowthKind::Abc,
            _ => GrowthKind::Rfc5681,
        }),
        abc_limit: r
            .get("abc_limit")
            .map(|f| Ok((f.u32_in(1, u32::MAX)?, f.path)))
            .transpose()?,
        dupthresh: opt(r, "dupthresh", |f| f.u32_in(1, u32::MAX))?,
        limited_transmit: opt(r, "limited_transmit", |f| f.boolean())?,
        delayed_ack: opt(r, "delayed_ack", |f| f.boolean())?,
        delack_timeout: opt(r, "delack_timeout", |f| f.duration())?,
        delack_count: opt(r, "delack_count", |f| f.u32_in(1, u32::MAX))?,
        max_sack_blocks: opt(r, "max_sack_blocks", |f| f.u32_in(1, 4))?,
        rto_initial: opt(r, "rto_initial", |f| f.positive_duration())?,
        rto_min: opt(r, "rto_min", |f| f.duration())?,
        rto_max: opt(r, "rto_max", |f| f.positive_duration())?,
        clock_granularity: opt(r, "clock_granularity", |f| f.duration())?,
        recover_guard: opt(r, "recover_guard", |f| {
            f.choice(&["auto", "at_recovery_point", "past_recovery_point"])
        })?
        .map(|g| match g {
            "at_recovery_point" => Some(RecoverGuard::AtRecoveryPoint),
            "past_recovery_point" => Some(RecoverGuard::PastRecoveryPoint),
            _ => None,
        }),
        rtt_sampling: opt(r, "rtt_sampling", |f| f.choice(&["every_ack", "ns2"]))?.map(
            |m| match m {
                "ns2" => RttSampling::Ns2,
                _ => RttSampling::EveryAck,
            },
        ),
        restart_after_idle: opt(r, "restart_after_idle", |f| f.boolean())?,
        handshake: opt(r, "handshake", |f| f.boolean())?,
        ecn: opt(r, "ecn", read_ecn)?,
        ect_all: opt(r, "ect_all", |f| f.boolean())?,
        timestamps: opt(r, "timestamps", |f| f.boolean())?,
        timestamp_clock: opt(r, "timestamp_clock", read_timestamp_clock)?,
        rto_backoff_reset: opt(r, "rto_backoff_reset", |f| {
            f.choice(&["valid_sample", "new_ack"])
        })?
        .map(|c| match c {
            "new_ack" => RtoBackoffReset::NewAck,
            _ => RtoBackoffReset::ValidSample,
        }),
        ack_credit: opt(r, "ack_credit", |f| f.choice(&["cumulative", "delivered"]))?.map(|c| {
            match c {
                "delivered" => AckCredit::Delivered,
                _ => AckCredit::Cumulative,
            }
        }),
        whole_segment_ssthresh: opt(r, "whole_segment_ssthresh", |f| f.boolean())?,
        ssthresh_flight: r
            .get("ssthresh_flight")
            .map(|f| {
                let basis = match f.choice(&["flight_size", "pipe"])? {
                    "pipe" => SsthreshFlight::Pipe,
                    _ => SsthreshFlight::FlightSize,
                };
                Ok((basis, f.path))
            })
            .transpose()?,
        partial_ack_send: r
            .get("partial_ack_send")
            .map(|f| Ok((f.boolean()?, f.path)))
            .transpose()?,
        recovery_exit_credit: opt(r, "recovery_exit_credit", |f| f.choice(&["none", "acked"]))?
            .map(|c| match c {
                "acked" => RecoveryExitCredit::Acked,
                _ => RecoveryExitCredit::None,
            }),
        pacing: r
            .get("pacing")
            .map(|f| Ok((f.boolean()?, f.path)))
            .transpose()?,
        pacing_keys: read_pacing_keys(r)?,
        dsack: r
            .get("dsack")
            .map(|f| Ok((f.boolean()?, f.path)))
            .transpose()?,
        loss_detection: r
            .get("loss_detection")
            .map(|f| Ok((f.choice(&["dupack", "rack"])? == "rack", f.path)))
            .transpose()?,
        tlp: r
            .get("tlp")
            .map(|f| Ok((f.boolean()?, f.path)))
            .transpose()?,
        rack_constants: read_rack_constants(r)?,
    };
    Ok((layer, follow_mss))
}

/// RACK's and TLP's constants given in `r`.
fn read_rack_constants(r: &mut Reader) -> Res<Vec<(&'static str, u64, String)>> {
    let mut out = Vec::new();
    for &key in RACK_KEYS.iter().chain(TLP_KEYS) {
        let Some(f) = r.get(key) else { continue };
        let value = match key {
            // A divisor of min_RTT (RFC 8985: 4); a count of recoveries (16); a multiple of
            // SRTT (2).
            "rack_min_rtt_divisor" | "tlp_srtt_multiple" => f.u32_in(1, 1_000_000)? as u64,
            "rack_reo_wnd_persist" => f.u32_in(1, u32::MAX)? as u64,
            "tlp_initial_pto" => f.positive_duration()?.as_nanos(),
            _ => f.duration()?.as_nanos(),
        };
        out.push((key, value, f.path));
    }
    Ok(out)
}

/// A TCP window field: a size, a segment count (`"20pkt"`) or, if `allow_inf`, `"inf"`.
fn read_window(f: &Field, allow_inf: bool) -> Res<Window> {
    let size = match f.value {
        Value::String(s) if allow_inf && s.trim() == "inf" => return Ok(Window::Inf),
        // `--set tcp.max_window=inf` arrives as the TOML float inf.
        Value::Float(x) if allow_inf && *x == f64::INFINITY => return Ok(Window::Inf),
        Value::String(s) => units::parse_window_size(s).map_err(|m| f.error(m))?,
        Value::Integer(i) if *i >= 0 => WindowSize::Bytes(*i as u64),
        Value::Integer(i) => return Err(f.error(format!("{i} is negative; a size must be >= 0"))),
        _ if allow_inf => {
            return Err(
                f.expected("\"inf\", a size such as \"64KB\" or a segment count such as \"20pkt\"")
            )
        }
        _ => return Err(f.expected("a size such as \"64KB\" or a segment count such as \"20pkt\"")),
    };
    match size {
        WindowSize::Bytes(0) | WindowSize::Segments(0) => Err(f.out_of_range("greater than 0")),
        _ => Ok(Window::Finite(size)),
    }
}

/// `timestamp_clock`: one tick of the RFC 7323 clock. At least a microsecond, so that the 32-bit
/// clock wraps no sooner than every 71 minutes (an RTT longer than half that would read wrong);
/// at most the second RFC 7323 §5.4 allows.
fn read_timestamp_clock(f: &Field) -> Res<SimDuration> {
    let d = f.duration()?;
    if (SimDuration::from_micros(1)..=SimDuration::from_secs(1)).contains(&d) {
        Ok(d)
    } else {
        Err(f.out_of_range("from 1us to 1s"))
    }
}

fn read_initial_window(f: &Field) -> Res<InitialWindow> {
    match f.value {
        Value::Integer(_) => Ok(InitialWindow::Segments(f.u32_in(1, u32::MAX)?)),
        Value::String(_) => Ok(match f.choice(&["rfc5681", "rfc3390", "rfc6928"])? {
            "rfc5681" => InitialWindow::Rfc5681,
            "rfc3390" => InitialWindow::Rfc3390,
            _ => InitialWindow::Rfc6928,
        }),
        _ => Err(f.expected("an integer number of segments or one of rfc5681, rfc3390, rfc6928")),
    }
}

/// `ecn = true` (RFC 3168), `false`, `"dctcp"` (ECN with RFC 8257 §3.2's per-segment echo), or
/// `"l4s"` (the same echo, and new data sent ECT(1), RFC 9331 §4.1).
fn read_ecn(f: &Field) -> Res<(bool, EcnFeedback, bool)> {
    match f.value {
        Value::Boolean(on) => Ok((*on, EcnFeedback::Rfc3168, false)),
        Value::String(s) if s == "dctcp" => Ok((true, EcnFeedback::Dctcp, false)),
        Value::String(s) if s == "l4s" => Ok((true, EcnFeedback::Dctcp, true)),
        // Every value is named, the booleans too: "is not one of dctcp" told a user who wrote
        // ecn = "true" that dctcp was the only choice (campaign 10, issue 32).
        Value::String(s) => {
            let quoted = matches!(s.as_str(), "true" | "false");
            Err(f.error(format!(
                "{s:?} is not one of true, false, \"dctcp\" or \"l4s\"{}",
                if quoted {
                    " (true and false are written without quotes)"
                } else {
                    ""
                }
            )))
        }
        _ => Err(f.expected("true, false, \"dctcp\" or \"l4s\"")),
    }
}

// ---------------------------------------------------------------------------------------------
// Congestion control: `cc`

const CC_TYPES: &[&str] = &[
    "reno",
    "highspeed",
    "scalable",
    "bic",
    "cubic",
    "vegas",
    "fast",
    "xcp",
    "er",
    "dctcp",
    "htcp",
    "ledbat",
    "bbr",
];
const CC_ONE_OF: &str =
    "one of reno, highspeed, scalable, bic, cubic, vegas, fast, xcp, er, dctcp, htcp, ledbat, bbr";
const CC_EXPECTED: &str =
    "one of reno, highspeed, scalable, bic, cubic, vegas, fast, xcp, er, dctcp, htcp, ledbat, \
                           bbr, or a table such as { type = \"cubic\", beta = 0.7 }";

/// `cc = "cubic"` (that algorithm with its defaults) or `cc = { type = "cubic", beta = 0.8 }`.
/// Every default is the algorithm's `Config::default()` in `crate::cc`; windows are segments.
fn read_cc(f: &Field) -> Res<CcAlgorithm> {
    let empty = Table::new();
    let (kind, mut r) = match f.value {
        Value::String(_) => (f.choice(CC_TYPES)?, Reader::new(&empty, f.path.clone())),
        Value::Table(_) => {
            let mut r = f.table(CC_EXPECTED)?;
            // The type decides which keys are allowed, so it is read first.
            let kind = r.req("type", CC_ONE_OF)?.choice(CC_TYPES)?;
            (kind, r)
        }
        _ => return Err(f.expected(CC_EXPECTED)),
    };
    let cc = match kind {
        "highspeed" => read_highspeed(&mut r)?,
        "scalable" => read_scalable(&mut r)?,
        "htcp" => read_htcp(&mut r)?,
        "ledbat" => read_ledbat(&mut r)?,
        "bbr" => read_bbr(&mut r)?,
        "bic" => read_bic(&mut r)?,
        "cubic" => read_cubic(&mut r)?,
        "vegas" => read_vegas(&mut r)?,
        "fast" => read_fast(&mut r)?,
        "xcp" => {
            r.allow(&["type", "request_segments"])?;
            let mut c = crate::cc::XcpSenderConfig::default();
            if let Some(x) = opt(&mut r, "request_segments", |f| f.positive_number())? {
                c.request_segments = x;
            }
            CcAlgorithm::Xcp(c)
        }
        "er" => {
            // ER-TCP over ATM ABR (paper 000); the build refuses it on a flow with no ABR VC.
            r.allow(&["type", "safety"])?;
            let mut c = crate::cc::ErConfig::default();
            if let Some(x) = opt(&mut r, "safety", |f| f.positive_number())? {
                c.safety = x;
            }
            CcAlgorithm::Er(c)
        }
        "dctcp" => {
            // RFC 8257 §3.3, §4: g = 1/16, initial alpha 1 (Linux, ns-3).
            r.allow(&["type", "g", "initial_alpha"])?;
            let d = crate::cc::DctcpConfig::default();
            CcAlgorithm::Dctcp(crate::cc::DctcpConfig {
                g: opt(&mut r, "g", read_fraction_above_zero)?.unwrap_or(d.g),
                initial_alpha: opt(&mut r, "initial_alpha", |f| f.probability())?
                    .unwrap_or(d.initial_alpha),
            })
        }
        _ => {
            r.allow(&["type"])?;
            CcAlgorithm::Reno
        }
    };
    r.finish()?;
    Ok(cc)
}

/// `{a} must be less than {b}` at the `cc` table, for two keys read from it.
fn cc_order(r: &Reader, low: (&str, f64), high: (&str, f64), strict: bool) -> Res<()> {
    let ok = if strict {
        low.1 < high.1
    } else {
        low.1 <= high.1
    };
    if ok {
        return Ok(());
    }
    let rel = if strict { "less than" } else { "at most" };
    Err(error(
        &r.path,
        format!(
            "{} ({}) must be {rel} {} ({})",
            low.0, low.1, high.0, high.1
        ),
    ))
}

/// HighSpeed TCP (RFC 3649); defaults in [`crate::cc::HighSpeedConfig::default`].
fn read_highspeed(r: &mut Reader) -> Res<CcAlgorithm> {
    r.allow(&[
        "type",
        "low_window",
        "high_window",
        "high_p",
        "low_p",
        "high_decrease",
        "decrease_from",
        "count_after_loss",
    ])?;
    let d = crate::cc::HighSpeedConfig::default();
    let c = crate::cc::HighSpeedConfig {
        low_window: opt(r, "low_window", |f| f.positive_number())?.unwrap_or(d.low_window),
        high_window: opt(r, "high_window", |f| f.positive_number())?.unwrap_or(d.high_window),
        high_p: opt(r, "high_p", read_open_fraction)?.unwrap_or(d.high_p),
        low_p: opt(r, "low_p", read_open_fraction)?.unwrap_or(d.low_p),
        high_decrease: opt(r, "high_decrease", read_open_fraction)?.unwrap_or(d.high_decrease),
        decrease_from_flight: opt(r, "decrease_from", |f| f.choice(&["cwnd", "flight"]))?
            .map_or(d.decrease_from_flight, |c| c == "flight"),
        keep_count_on_loss: opt(r, "count_after_loss", |f| f.choice(&["reset", "keep"]))?
            .map_or(d.keep_count_on_loss, |c| c == "keep"),
    };
    cc_order(
        r,
        ("low_window", c.low_window),
        ("high_window", c.high_window),
        true,
    )?;
    cc_order(r, ("high_p", c.high_p), ("low_p", c.low_p), true)?;
    Ok(CcAlgorithm::HighSpeed(c))
}

/// Scalable TCP (Kelly 2003); defaults in [`crate::cc::ScalableConfig::default`].
fn read_scalable(r: &mut Reader) -> Res<CcAlgorithm> {
    r.allow(&[
        "type",
        "a",
        "b",
        "low_window",
        "legacy_decrease",
        "decrease_from",
    ])?;
    let d = crate::cc::ScalableConfig::default();
    Ok(CcAlgorithm::Scalable(crate::cc::ScalableConfig {
        a: opt(r, "a", |f| f.positive_number())?.unwrap_or(d.a),
        b: opt(r, "b", read_open_fraction)?.unwrap_or(d.b),
        low_window: opt(r, "low_window", read_non_negative)?.unwrap_or(d.low_window),
        legacy_decrease: opt(r, "legacy_decrease", |f| f.boolean())?.unwrap_or(d.legacy_decrease),
        decrease_from_flight: opt(r, "decrease_from", |f| f.choice(&["cwnd", "flight"]))?
            .map_or(d.decrease_from_flight, |c| c == "flight"),
    }))
}

/// H-TCP (Leith, Shorten 2004); defaults in [`crate::cc::HtcpConfig::default`].
fn read_htcp(r: &mut Reader) -> Res<CcAlgorithm> {
    r.allow(&[
        "type",
        "delta_l",
        "beta_min",
        "beta_max",
        "adaptive_backoff",
        "throughput_change",
        "rtt_scaling",
        "rtt_reference",
        "model",
    ])?;
    let d = crate::cc::HtcpConfig::default();
    let c = crate::cc::HtcpConfig {
        delta_l: opt(r, "delta_l", |f| f.duration())?.unwrap_or(d.delta_l),
        beta_min: opt(r, "beta_min", read_fraction_above_zero)?.unwrap_or(d.beta_min),
        beta_max: opt(r, "beta_max", read_fraction_above_zero)?.unwrap_or(d.beta_max),
        adaptive_backoff: opt(r, "adaptive_backoff", |f| f.boolean())?
            .unwrap_or(d.adaptive_backoff),
        throughput_change: opt(r, "throughput_change", read_non_negative)?
            .unwrap_or(d.throughput_change),
        rtt_scaling: opt(r, "rtt_scaling", |f| f.boolean())?.unwrap_or(d.rtt_scaling),
        rtt_reference: opt(r, "rtt_reference", |f| f.positive_duration())?
            .unwrap_or(d.rtt_reference),
        model: opt(r, "model", |f| f.choice(&["draft", "ns3"]))?.map_or(d.model, |m| {
            if m == "ns3" {
                crate::cc::HtcpModel::Ns3
            } else {
                crate::cc::HtcpModel::Draft
            }
        }),
    };
    cc_order(r, ("beta_min", c.beta_min), ("beta_max", c.beta_max), false)?;
    Ok(CcAlgorithm::Htcp(c))
}

/// LEDBAT (RFC 6817); defaults in [`crate::cc::LedbatConfig::default`]. RFC 6817 bounds
/// TARGET at 100 ms and GAIN at 1; larger values are accepted for experiments (docs/tcp.md).
fn read_ledbat(r: &mut Reader) -> Res<CcAlgorithm> {
    r.allow(&[
        "type",
        "target",
        "gain",
        "base_history",
        "base_interval",
        "current_filter",
        "allowed_increase",
        "min_cwnd",
        "slow_start",
    ])?;
    let d = crate::cc::LedbatConfig::default();
    Ok(CcAlgorithm::Ledbat(crate::cc::LedbatConfig {
        target: opt(r, "target", |f| f.positive_duration())?.unwrap_or(d.target),
        gain: opt(r, "gain", |f| f.positive_number())?.unwrap_or(d.gain),
        base_history: opt(r, "base_history", |f| f.u32_in(1, 10_000))?.unwrap_or(d.base_history),
        base_interval: opt(r, "base_interval", |f| f.positive_duration())?
            .unwrap_or(d.base_interval),
        current_filter: opt(r, "current_filter", |f| f.u32_in(1, 10_000))?
            .unwrap_or(d.current_filter),
        allowed_increase: opt(r, "allowed_increase", |f| f.positive_number())?
            .unwrap_or(d.allowed_increase),
        min_cwnd: opt(r, "min_cwnd", |f| f.u32_in(1, 1_000_000))?.unwrap_or(d.min_cwnd),
        slow_start: opt(r, "slow_start", |f| f.boolean())?.unwrap_or(d.slow_start),
    }))
}

/// BBR v1; defaults (Linux tcp_bbr.c) in [`crate::cc::BbrConfig::default`].
fn read_bbr(r: &mut Reader) -> Res<CcAlgorithm> {
    r.allow(&[
        "type",
        "high_gain",
        "drain_gain",
        "cwnd_gain",
        "probe_gain",
        "drain_phase_gain",
        "cruise_phases",
        "random_phases",
        "bw_window_rounds",
        "min_rtt_window",
        "probe_rtt_duration",
        "min_cwnd_segments",
        "full_bw_threshold",
        "full_bw_rounds",
        "pacing_margin",
        "budget_segments",
        "init_cwnd_segments",
        "nominal_rtt",
    ])?;
    let d = crate::cc::BbrConfig::default();
    let gain = |f: &Field| f.positive_number();
    let at_least_one = |f: &Field| {
        let x = f.number()?;
        if x >= 1.0 {
            Ok(x)
        } else {
            Err(f.out_of_range("at least 1"))
        }
    };
    let c = crate::cc::BbrConfig {
        high_gain: opt(r, "high_gain", |f| {
            let x = f.number()?;
            if x > 1.0 {
                Ok(x)
            } else {
                Err(f.out_of_range("greater than 1 (Startup must grow the rate)"))
            }
        })?
        .unwrap_or(d.high_gain),
        drain_gain: opt(r, "drain_gain", read_fraction_above_zero)?.unwrap_or(d.drain_gain),
        cwnd_gain: opt(r, "cwnd_gain", gain)?.unwrap_or(d.cwnd_gain),
        probe_gain: opt(r, "probe_gain", at_least_one)?.unwrap_or(d.probe_gain),
        drain_phase_gain: opt(r, "drain_phase_gain", read_fraction_above_zero)?
            .unwrap_or(d.drain_phase_gain),
        cruise_phases: opt(r, "cruise_phases", |f| f.u32_in(0, 1000))?.unwrap_or(d.cruise_phases),
        random_phases: opt(r, "random_phases", |f| f.u32_in(1, 1001))?.unwrap_or(d.random_phases),
        bw_window_rounds: opt(r, "bw_window_rounds", |f| f.u32_in(1, u32::MAX))?
            .map_or(d.bw_window_rounds, u64::from),
        min_rtt_window: opt(r, "min_rtt_window", |f| f.positive_duration())?
            .unwrap_or(d.min_rtt_window),
        probe_rtt_duration: opt(r, "probe_rtt_duration", |f| f.duration())?
            .unwrap_or(d.probe_rtt_duration),
        min_cwnd_segments: opt(r, "min_cwnd_segments", |f| f.u32_in(1, u32::MAX))?
            .unwrap_or(d.min_cwnd_segments),
        full_bw_threshold: opt(r, "full_bw_threshold", at_least_one)?
            .unwrap_or(d.full_bw_threshold),
        full_bw_rounds: opt(r, "full_bw_rounds", |f| f.u32_in(1, u32::MAX))?
            .unwrap_or(d.full_bw_rounds),
        pacing_margin: opt(r, "pacing_margin", |f| {
            let x = f.number()?;
            if (0.0..1.0).contains(&x) {
                Ok(x)
            } else {
                Err(f.out_of_range("at least 0 and less than 1"))
            }
        })?
        .unwrap_or(d.pacing_margin),
        budget_segments: opt(r, "budget_segments", |f| f.u32_in(0, u32::MAX))?
            .unwrap_or(d.budget_segments),
        init_cwnd_segments: opt(r, "init_cwnd_segments", |f| f.u32_in(1, u32::MAX))?
            .unwrap_or(d.init_cwnd_segments),
        nominal_rtt: opt(r, "nominal_rtt", |f| f.positive_duration())?.unwrap_or(d.nominal_rtt),
    };
    // The first ProbeBW phase is drawn among all but the draining one (index 1): at most
    // cycle length − 1 = cruise_phases + 1 of them.
    if c.random_phases > c.cruise_phases + 1 {
        return Err(error(
            &r.path,
            format!(
                "random_phases ({}) must be at most cruise_phases + 1 ({}): the first phase of \
                 ProbeBW is drawn among the cycle's phases but the draining one",
                c.random_phases,
                c.cruise_phases + 1
            ),
        ));
    }
    Ok(CcAlgorithm::Bbr(c))
}

/// BIC-TCP (Xu, Harfoush, Rhee 2004); defaults in [`crate::cc::BicConfig::default`].
fn read_bic(r: &mut Reader) -> Res<CcAlgorithm> {
    r.allow(&[
        "type",
        "s_max",
        "s_min",
        "beta",
        "low_window",
        "fast_convergence",
        "search_divisor",
        "plateau_after_timeout",
        "low_window_growth",
    ])?;
    let d = crate::cc::BicConfig::default();
    let divisor = |f: &Field| {
        let x = f.number()?;
        if x > 1.0 {
            Ok(x)
        } else {
            Err(f.out_of_range("greater than 1"))
        }
    };
    let c = crate::cc::BicConfig {
        s_max: opt(r, "s_max", |f| f.positive_number())?.unwrap_or(d.s_max),
        s_min: opt(r, "s_min", |f| f.positive_number())?.unwrap_or(d.s_min),
        beta: opt(r, "beta", read_open_fraction)?.unwrap_or(d.beta),
        low_window: opt(r, "low_window", read_non_negative)?.unwrap_or(d.low_window),
        fast_convergence: opt(r, "fast_convergence", |f| f.boolean())?
            .unwrap_or(d.fast_convergence),
        search_divisor: opt(r, "search_divisor", divisor)?.unwrap_or(d.search_divisor),
        plateau_after_timeout: opt(r, "plateau_after_timeout", |f| f.boolean())?
            .unwrap_or(d.plateau_after_timeout),
        low_window_growth: opt(r, "low_window_growth", |f| {
            f.choice(&["reno", "count_reset"])
        })?
        .map_or(d.low_window_growth, |c| match c {
            "count_reset" => crate::cc::LowWindowGrowth::CountReset,
            _ => crate::cc::LowWindowGrowth::Reno,
        }),
    };
    cc_order(r, ("s_min", c.s_min), ("s_max", c.s_max), false)?;
    Ok(CcAlgorithm::Bic(c))
}

/// CUBIC (RFC 9438); defaults in [`crate::cc::CubicConfig::default`].
fn read_cubic(r: &mut Reader) -> Res<CcAlgorithm> {
    r.allow(&[
        "type",
        "c",
        "beta",
        "fast_convergence",
        "reno_friendly",
        "model",
    ])?;
    let d = crate::cc::CubicConfig::default();
    Ok(CcAlgorithm::Cubic(crate::cc::CubicConfig {
        c: opt(r, "c", |f| f.positive_number())?.unwrap_or(d.c),
        beta: opt(r, "beta", read_open_fraction)?.unwrap_or(d.beta),
        fast_convergence: opt(r, "fast_convergence", |f| f.boolean())?
            .unwrap_or(d.fast_convergence),
        reno_friendly: opt(r, "reno_friendly", |f| f.boolean())?.unwrap_or(d.reno_friendly),
        model: opt(r, "model", |f| f.choice(&["rfc9438", "ns3"]))?.map_or(d.model, |m| match m {
            "ns3" => crate::cc::CubicModel::Ns3,
            _ => crate::cc::CubicModel::Rfc9438,
        }),
    }))
}

/// TCP Vegas (Brakmo, Peterson 1995); defaults in [`crate::cc::VegasConfig::default`].
fn read_vegas(r: &mut Reader) -> Res<CcAlgorithm> {
    r.allow(&[
        "type",
        "alpha",
        "beta",
        "gamma",
        "min_rtt_samples",
        "slow_start_every_other_rtt",
    ])?;
    let d = crate::cc::VegasConfig::default();
    let c = crate::cc::VegasConfig {
        alpha: opt(r, "alpha", read_non_negative)?.unwrap_or(d.alpha),
        beta: opt(r, "beta", read_non_negative)?.unwrap_or(d.beta),
        gamma: opt(r, "gamma", read_non_negative)?.unwrap_or(d.gamma),
        min_rtt_samples: opt(r, "min_rtt_samples", |f| f.u32_in(1, u32::MAX))?
            .unwrap_or(d.min_rtt_samples),
        slow_start_every_other_rtt: opt(r, "slow_start_every_other_rtt", |f| f.boolean())?
            .unwrap_or(d.slow_start_every_other_rtt),
    };
    cc_order(r, ("alpha", c.alpha), ("beta", c.beta), false)?;
    Ok(CcAlgorithm::Vegas(c))
}

/// FAST TCP (Jin, Wei, Low 2004); defaults in [`crate::cc::FastConfig::default`].
fn read_fast(r: &mut Reader) -> Res<CcAlgorithm> {
    r.allow(&[
        "type",
        "alpha",
        "gamma",
        "update_interval",
        "eta_scale",
        "eta_max",
    ])?;
    let d = crate::cc::FastConfig::default();
    Ok(CcAlgorithm::Fast(crate::cc::FastConfig {
        alpha: opt(r, "alpha", |f| f.positive_number())?.unwrap_or(d.alpha),
        gamma: opt(r, "gamma", read_fraction_above_zero)?.unwrap_or(d.gamma),
        update_interval: opt(r, "update_interval", |f| f.u32_in(1, u32::MAX))?
            .unwrap_or(d.update_interval),
        eta_scale: opt(r, "eta_scale", |f| f.positive_number())?.unwrap_or(d.eta_scale),
        eta_max: opt(r, "eta_max", read_fraction_above_zero)?.unwrap_or(d.eta_max),
    }))
}

// ---------------------------------------------------------------------------------------------
// Resolving the layers

/// A TCP configuration being resolved: windows stay in segments until the MSS is final.
struct TcpDraft {
    spec: TcpSpec,
    initial_ssthresh: Window,
    max_window: Window,
    rcv_buffer: Window,
    growth: GrowthKind,
    abc_limit: u32,
    abc_limit_at: Option<String>,
    /// Where a SACK-only key was given, if it was: `(key, path)`.
    sack_only_at: Vec<(&'static str, String)>,
    /// `prr_bound` and where it was given, if it was.
    prr_bound: Option<(PrrBound, String)>,
    /// `pacing` and where it was given, if it was (not given: on with BBR only).
    pacing: Option<(bool, String)>,
    /// The pacing parameters, with the `pacing_*` keys given (and where) applied.
    pacing_spec: PacingSpec,
    pacing_keys_at: Vec<(&'static str, String)>,
    /// `loss_detection = "rack"` and where it was given, if it was.
    rack_at: Option<String>,
    /// `tlp = true` and where it was given, if it was.
    tlp_at: Option<String>,
    /// RACK's and TLP's constants as given: the last layer's value of each key wins.
    rack_constants: Vec<(&'static str, u64, String)>,
}

impl TcpDraft {
    fn from_preset(preset: Preset) -> Self {
        let bytes = |b: Option<u64>| match b {
            Some(b) => Window::Finite(WindowSize::Bytes(b)),
            None => Window::Inf,
        };
        let spec = match preset {
            Preset::Rfc => TcpSpec::default(),
            Preset::Ns2v235 => TcpSpec::ns2_235(),
            Preset::Ns2v2001 => TcpSpec::ns2_2001(),
            Preset::Ns3 => TcpSpec::ns3(),
        };
        let (growth, abc_limit) = match spec.growth {
            Growth::PerAck => (GrowthKind::PerAck, 2),
            Growth::Rfc5681 => (GrowthKind::Rfc5681, 2),
            Growth::ByteCounting { limit_segments } => (GrowthKind::Abc, limit_segments),
        };
        let mut draft = TcpDraft {
            initial_ssthresh: bytes(spec.initial_ssthresh),
            max_window: bytes(spec.max_window),
            rcv_buffer: bytes(Some(spec.rcv_buffer)),
            growth,
            abc_limit,
            abc_limit_at: None,
            sack_only_at: Vec::new(),
            prr_bound: None,
            pacing: spec.pacing.map(|_| (true, "the preset".to_string())),
            pacing_spec: spec.pacing.unwrap_or_default(),
            pacing_keys_at: Vec::new(),
            rack_at: None,
            tlp_at: None,
            rack_constants: Vec::new(),
            spec,
        };
        if matches!(preset, Preset::Ns2v235 | Preset::Ns2v2001) {
            // ns-2's window_ and ssthresh_ are 20 packets, whatever the packet size.
            draft.initial_ssthresh = Window::Finite(WindowSize::Segments(20));
            draft.max_window = Window::Finite(WindowSize::Segments(20));
        }
        draft
    }

    fn apply(&mut self, layer: &TcpLayer) {
        let s = &mut self.spec;
        fn set<T: Clone>(to: &mut T, from: &Option<T>) {
            if let Some(v) = from {
                *to = v.clone();
            }
        }
        set(&mut s.recovery, &layer.recovery);
        set(&mut s.cc, &layer.cc);
        set(&mut s.mss, &layer.mss);
        set(&mut s.header_bytes, &layer.header_bytes);
        set(&mut s.initial_window, &layer.initial_window);
        set(&mut s.dupthresh, &layer.dupthresh);
        set(&mut s.limited_transmit, &layer.limited_transmit);
        set(&mut s.delayed_ack, &layer.delayed_ack);
        set(&mut s.delack_timeout, &layer.delack_timeout);
        set(&mut s.delack_count, &layer.delack_count);
        set(&mut s.max_sack_blocks, &layer.max_sack_blocks);
        set(&mut s.rto_initial, &layer.rto_initial);
        set(&mut s.rto_min, &layer.rto_min);
        set(&mut s.rto_max, &layer.rto_max);
        set(&mut s.clock_granularity, &layer.clock_granularity);
        set(&mut s.recover_guard, &layer.recover_guard);
        set(&mut s.rtt_sampling, &layer.rtt_sampling);
        set(&mut s.restart_after_idle, &layer.restart_after_idle);
        set(&mut s.handshake, &layer.handshake);
        if let Some((on, feedback, l4s)) = layer.ecn {
            s.ecn = on;
            s.ecn_feedback = feedback;
            s.l4s = l4s;
        }
        set(&mut s.ect_all, &layer.ect_all);
        set(&mut s.timestamps, &layer.timestamps);
        set(&mut s.timestamp_clock, &layer.timestamp_clock);
        set(&mut s.rto_backoff_reset, &layer.rto_backoff_reset);
        set(&mut s.ack_credit, &layer.ack_credit);
        set(&mut s.whole_segment_ssthresh, &layer.whole_segment_ssthresh);
        set(&mut s.recovery_exit_credit, &layer.recovery_exit_credit);
        set(&mut self.initial_ssthresh, &layer.initial_ssthresh);
        set(&mut self.max_window, &layer.max_window);
        set(&mut self.rcv_buffer, &layer.rcv_buffer);
        set(&mut self.growth, &layer.growth);
        if let Some((basis, at)) = &layer.ssthresh_flight {
            s.ssthresh_flight = *basis;
            self.sack_only_at.retain(|(k, _)| *k != "ssthresh_flight");
            self.sack_only_at.push(("ssthresh_flight", at.clone()));
        }
        if let Some((on, at)) = &layer.partial_ack_send {
            s.partial_ack_send = *on;
            self.sack_only_at.retain(|(k, _)| *k != "partial_ack_send");
            self.sack_only_at.push(("partial_ack_send", at.clone()));
        }
        if layer.prr_bound.is_some() {
            self.prr_bound.clone_from(&layer.prr_bound);
        }
        if let Some((on, at)) = &layer.dsack {
            s.dsack = *on;
            self.sack_only_at.retain(|(k, _)| *k != "dsack");
            if *on {
                self.sack_only_at.push(("dsack", at.clone()));
            }
        }
        if let Some((rack, at)) = &layer.loss_detection {
            self.rack_at = rack.then(|| at.clone());
        }
        if let Some((tlp, at)) = &layer.tlp {
            self.tlp_at = tlp.then(|| at.clone());
        }
        for c in &layer.rack_constants {
            self.rack_constants.retain(|(k, _, _)| *k != c.0);
            self.rack_constants.push(c.clone());
        }
        if let Some((limit, at)) = &layer.abc_limit {
            self.abc_limit = *limit;
            self.abc_limit_at = Some(at.clone());
        }
        if layer.pacing.is_some() {
            self.pacing.clone_from(&layer.pacing);
        }
        for (key, at) in &layer.pacing_keys {
            key.apply(&mut self.pacing_spec);
            self.pacing_keys_at.retain(|(k, _)| *k != key.name());
            self.pacing_keys_at.push((key.name(), at.clone()));
        }
    }

    /// The final TCP parameters of the flow at `path`, with the checks that involve several
    /// keys.
    fn finish(self, path: &str) -> Res<TcpSpec> {
        let mut spec = self.spec.clone();
        let mss = spec.mss;
        let bytes = |w: Window, key: &str| -> Res<Option<u64>> {
            match w {
                Window::Inf => Ok(None),
                Window::Finite(size) => size.to_bytes(mss).map(Some).ok_or_else(|| {
                    error(
                        path,
                        format!("{key} is too large for mss {mss} (more than 2^64 bytes)"),
                    )
                }),
            }
        };
        spec.initial_ssthresh = bytes(self.initial_ssthresh, "initial_ssthresh")?;
        spec.max_window = bytes(self.max_window, "max_window")?;
        spec.rcv_buffer = bytes(self.rcv_buffer, "rcv_buffer")?.expect("rcv_buffer is never inf");
        spec.growth = match self.growth {
            GrowthKind::PerAck => Growth::PerAck,
            GrowthKind::Rfc5681 => Growth::Rfc5681,
            GrowthKind::Abc => Growth::ByteCounting {
                limit_segments: self.abc_limit,
            },
        };
        if let (Some(at), false) = (&self.abc_limit_at, self.growth == GrowthKind::Abc) {
            return Err(error(
                path,
                format!(
                    "abc_limit (set at {at}) only applies with growth = \"abc\", but this \
                     flow's growth is {:?}",
                    self.growth.name()
                ),
            ));
        }
        let variant = match spec.recovery {
            Recovery::Reno => "reno",
            Recovery::NewReno => "newreno",
            Recovery::Sack => "sack",
            Recovery::Prr(_) => "prr",
        };
        // Both rules read the SACK scoreboard (PRR runs on it too); a preset's value is simply
        // not used without it.
        if !matches!(spec.recovery, Recovery::Sack | Recovery::Prr(_)) {
            if let Some((key, at)) = self.sack_only_at.first() {
                return Err(error(
                    path,
                    format!(
                        "{key} (set at {at}) only applies with SACK recovery (variant = \"sack\" \
                         or \"prr\"), but this flow's variant is {variant:?}"
                    ),
                ));
            }
        }
        spec.loss_detection = self.loss_detection(path, variant)?;
        match (&self.prr_bound, &mut spec.recovery) {
            (Some((bound, _)), Recovery::Prr(b)) => *b = *bound,
            (Some((_, at)), _) => {
                return Err(error(
                    path,
                    format!(
                        "prr_bound (set at {at}) only applies with variant = \"prr\", but this \
                         flow's variant is {variant:?}"
                    ),
                ))
            }
            _ => {}
        }
        // DCTCP's estimate needs the per-segment echo, and that echo means nothing to an
        // RFC 3168 sender, which would reduce once per window whatever the fraction marked.
        let dctcp = matches!(spec.cc, CcAlgorithm::Dctcp(_));
        let dctcp_echo = spec.ecn && spec.ecn_feedback == EcnFeedback::Dctcp;
        if dctcp && !dctcp_echo {
            return Err(error(
                path,
                format!(
                    "cc = \"dctcp\" needs ecn = \"dctcp\" (RFC 8257 §3.2's per-segment echo), \
                     but this flow's ecn is {}",
                    if spec.ecn { "true (RFC 3168)" } else { "false" }
                ),
            ));
        }
        if spec.ect_all && !spec.ecn {
            return Err(error(
                path,
                "ect_all = true makes every segment ECN-capable and needs ecn = true, \
                 \"dctcp\" or \"l4s\"; this flow's ecn is false",
            ));
        }
        if spec.l4s && !dctcp {
            return Err(error(
                path,
                "ecn = \"l4s\" sends ECT(1) and needs a scalable congestion response (RFC 9331 \
                 §4.3): cc = \"dctcp\"",
            ));
        }
        if dctcp_echo && !dctcp {
            return Err(error(
                path,
                "ecn = \"dctcp\" is DCTCP's receiver echo (RFC 8257 §3.2) and needs cc = \
                 \"dctcp\"; for RFC 3168 ECN with another algorithm write ecn = true",
            ));
        }
        // Pacing: on if asked for, and by default with BBR, whose model is a rate (Linux paces
        // a BBR flow whatever the qdisc: `sk_pacing_status`).
        let bbr = matches!(spec.cc, CcAlgorithm::Bbr(_));
        let pacing = match &self.pacing {
            Some((false, at)) if bbr => {
                return Err(error(
                    path,
                    format!(
                        "cc = \"bbr\" sends at its model's rate and needs pacing, but pacing = \
                         false is set at {at}"
                    ),
                ))
            }
            Some((on, _)) => *on,
            None => bbr,
        };
        if let Some((key, at)) = self.pacing_keys_at.first().filter(|_| !pacing) {
            return Err(error(
                path,
                format!(
                    "{key} (set at {at}) only applies with pacing = true, but this flow's \
                     pacing is off"
                ),
            ));
        }
        if let Some((key, at)) = self
            .pacing_keys_at
            .iter()
            .find(|(k, _)| bbr && k.ends_with("_ratio"))
        {
            return Err(error(
                path,
                format!(
                    "{key} (set at {at}) sets the pacing rate of a window-based controller; \
                     with cc = \"bbr\" the rate is BBR's"
                ),
            ));
        }
        spec.pacing = pacing.then_some(self.pacing_spec);
        if spec.rto_min > spec.rto_max {
            return Err(error(
                path,
                format!(
                    "rto_min ({}) is greater than rto_max ({})",
                    units::format_duration(spec.rto_min),
                    units::format_duration(spec.rto_max)
                ),
            ));
        }
        if spec.rcv_buffer < mss as u64 {
            return Err(error(
                path,
                format!(
                    "rcv_buffer ({} bytes) is smaller than one segment (mss {mss})",
                    spec.rcv_buffer
                ),
            ));
        }
        if let Some(w) = spec.max_window.filter(|w| *w < mss as u64) {
            return Err(error(
                path,
                format!("max_window ({w} bytes) is smaller than one segment (mss {mss})"),
            ));
        }
        Ok(spec)
    }
}

impl TcpDraft {
    /// `loss_detection`, `tlp` and their constants, checked: RACK reads the SACK scoreboard,
    /// TLP is RACK's, and a constant of a mechanism that is off is refused.
    fn loss_detection(&self, path: &str, variant: &str) -> Res<LossDetection> {
        let sack = matches!(self.spec.recovery, Recovery::Sack | Recovery::Prr(_));
        if let (Some(at), false) = (&self.rack_at, sack) {
            return Err(error(
                path,
                format!(
                    "loss_detection = \"rack\" (set at {at}) reads the SACK scoreboard and needs \
                     variant = \"sack\" or \"prr\", but this flow's variant is {variant:?}"
                ),
            ));
        }
        if let (Some(at), None) = (&self.tlp_at, &self.rack_at) {
            return Err(error(
                path,
                format!(
                    "tlp = true (set at {at}) is RACK-TLP's tail loss probe and needs \
                     loss_detection = \"rack\""
                ),
            ));
        }
        for (key, _, at) in &self.rack_constants {
            let (needs, on) = if RACK_KEYS.contains(key) {
                ("loss_detection = \"rack\"", self.rack_at.is_some())
            } else {
                ("tlp = true", self.tlp_at.is_some())
            };
            if !on {
                return Err(error(
                    path,
                    format!("{key} (set at {at}) only applies with {needs}"),
                ));
            }
        }
        if self.rack_at.is_none() {
            return Ok(LossDetection::DupAck);
        }
        let mut rack = RackSpec::default();
        let mut tlp = TlpSpec::default();
        for &(key, v, _) in &self.rack_constants {
            match key {
                "rack_min_rtt_divisor" => rack.min_rtt_divisor = v as u32,
                "rack_reo_wnd_persist" => rack.reo_wnd_persist = v as u32,
                "tlp_srtt_multiple" => tlp.srtt_multiple = v as u32,
                "tlp_max_ack_delay" => tlp.max_ack_delay = SimDuration(v),
                _ => tlp.initial_pto = SimDuration(v),
            }
        }
        rack.tlp = self.tlp_at.is_some().then_some(tlp);
        Ok(LossDetection::Rack(Box::new(rack)))
    }
}

pub(super) fn resolve_tcp(path: &str, defaults: &TcpLayer, own: &TcpLayer) -> Res<TcpSpec> {
    let preset = own.preset.or(defaults.preset).unwrap_or(Preset::Rfc);
    let mut draft = TcpDraft::from_preset(preset);
    draft.apply(defaults);
    draft.apply(own);
    draft.finish(path)
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::*;

    #[test]
    fn an_override_of_inf_is_accepted_for_a_window() {
        let s = spec(
            MINIMAL,
            &["flows.f1.max_window=inf", "flows.f1.initial_ssthresh=inf"],
        );
        assert_eq!(f1_tcp(&s).max_window, None);
        assert_eq!(f1_tcp(&s).initial_ssthresh, None);
    }

    #[test]
    fn the_flow_preset_comes_first_then_the_tcp_table_then_the_flow_keys() {
        // [tcp] says ns2 and mss 1200; the flow says rfc: the flow's preset wins, but [tcp]'s
        // mss is still applied over it, and the flow's own rto_min over both.
        let s = spec(
            MINIMAL,
            &[
                "tcp.preset=ns2-2.35",
                "tcp.mss=1200",
                "tcp.rto_min=500ms",
                "flows.f1.preset=rfc",
                "flows.f1.rto_min=100ms",
            ],
        );
        assert_eq!(
            *f1_tcp(&s),
            TcpSpec {
                mss: 1200,
                rto_min: ms(100),
                ..TcpSpec::default()
            }
        );
        // With no flow preset, [tcp]'s preset is the base.
        let s = spec(MINIMAL, &["tcp.preset=ns2-2001", "tcp.rto_min=500ms"]);
        assert_eq!(
            *f1_tcp(&s),
            TcpSpec {
                rto_min: ms(500),
                ..TcpSpec::ns2_2001()
            }
        );
    }

    #[test]
    fn each_ns2_preset_alone_is_exactly_its_release() {
        let s = spec(MINIMAL, &["flows.f1.preset=\"ns2-2.35\""]);
        assert_eq!(*f1_tcp(&s), TcpSpec::ns2_235());
        let s = spec(MINIMAL, &["flows.f1.preset=\"ns2-2001\""]);
        assert_eq!(*f1_tcp(&s), TcpSpec::ns2_2001());
    }

    #[test]
    fn the_two_ns2_releases_differ_in_start_timers_and_limited_transmit_only() {
        let (new, old) = (TcpSpec::ns2_235(), TcpSpec::ns2_2001());
        // ns-2.35: windowInit_ 2, syn_ true, singledup_ 1, tcpTick_ 10 ms, rtxcur_init_ 3 s,
        // maxrto_ 60; early 2001: 1, false, 0, 100 ms, 6 s, 100000.
        assert_eq!((new.initial_cwnd(), old.initial_cwnd()), (2000, 1000));
        assert_eq!((new.handshake, old.handshake), (true, false));
        assert_eq!((new.limited_transmit, old.limited_transmit), (true, false));
        assert_eq!(
            (new.clock_granularity, old.clock_granularity),
            (ms(10), ms(100))
        );
        assert_eq!((new.rto_initial, old.rto_initial), (ms(3000), ms(6000)));
        assert_eq!((new.rto_min, old.rto_min), (ms(200), ms(200)));
        let rest = TcpSpec {
            initial_window: new.initial_window,
            handshake: true,
            limited_transmit: true,
            clock_granularity: ms(10),
            rto_initial: ms(3000),
            rto_max: new.rto_max,
            ..old
        };
        assert_eq!(rest, new);
    }

    #[test]
    fn the_ns3_preset_is_ns_3_48s_defaults_and_its_keys_can_be_changed_over_it() {
        let s = spec(MINIMAL, &["flows.f1.preset=ns3"]);
        let t = f1_tcp(&s);
        assert_eq!(*t, TcpSpec::ns3());
        // SegmentSize 536, InitialCwnd 10, RcvBufSize and SndBufSize 131072, timestamps on a
        // millisecond clock, the RTO recomputed on every new ACK.
        assert_eq!((t.mss, t.initial_cwnd()), (536, 5360));
        assert_eq!((t.rcv_buffer, t.max_window), (131_072, Some(131_072)));
        assert!(t.timestamps && t.limited_transmit && t.delayed_ack);
        assert_eq!(t.rto_backoff_reset, RtoBackoffReset::NewAck);
        assert_eq!(t.ack_credit, AckCredit::Delivered);
        assert_eq!(t.sack_blocks_per_ack(), 3);
        let s = spec(
            MINIMAL,
            &[
                "flows.f1.preset=ns3",
                "flows.f1.timestamps=false",
                "flows.f1.rto_backoff_reset=\"valid_sample\"",
                "flows.f1.timestamp_clock=\"10ms\"",
                "flows.f1.ack_credit=\"cumulative\"",
                "flows.f1.whole_segment_ssthresh=true",
                "flows.f1.ssthresh_flight=\"flight_size\"",
                "flows.f1.partial_ack_send=false",
                "flows.f1.recovery_exit_credit=\"none\"",
            ],
        );
        assert_eq!(
            *f1_tcp(&s),
            TcpSpec {
                timestamps: false,
                rto_backoff_reset: RtoBackoffReset::ValidSample,
                timestamp_clock: ms(10),
                ack_credit: AckCredit::Cumulative,
                whole_segment_ssthresh: true,
                ssthresh_flight: SsthreshFlight::FlightSize,
                partial_ack_send: false,
                recovery_exit_credit: RecoveryExitCredit::None,
                ..TcpSpec::ns3()
            }
        );
    }

    #[test]
    fn ns3_sack_rules_are_refused_when_set_for_a_flow_without_sack() {
        let t = spec(MINIMAL, &["flows.f1.preset=ns3"]);
        assert_eq!(f1_tcp(&t).ssthresh_flight, SsthreshFlight::Pipe);
        assert!(f1_tcp(&t).partial_ack_send);
        // The preset's values stay with a NewReno flow (the sender uses them with SACK only);
        // given by hand for one, they are an error that says why.
        let t = spec(
            MINIMAL,
            &["flows.f1.preset=ns3", "flows.f1.variant=\"newreno\""],
        );
        assert_eq!(f1_tcp(&t).recovery, Recovery::NewReno);
        assert_eq!(
            message(
                MINIMAL,
                &["flows.f1.variant=\"reno\"", "tcp.ssthresh_flight=\"pipe\""]
            ),
            "flows.f1: ssthresh_flight (set at tcp.ssthresh_flight) only applies with SACK \
             recovery (variant = \"sack\" or \"prr\"), but this flow's variant is \"reno\""
        );
        assert_eq!(
            message(MINIMAL, &["flows.f1.partial_ack_send=true"]),
            "flows.f1: partial_ack_send (set at flows.f1.partial_ack_send) only applies with \
             SACK recovery (variant = \"sack\" or \"prr\"), but this flow's variant is \"newreno\""
        );
        assert_eq!(
            message(MINIMAL, &["flows.f1.ssthresh_flight=\"half\""]),
            "flows.f1.ssthresh_flight: \"half\" is not one of flight_size, pipe"
        );
    }

    #[test]
    fn prr_is_a_variant_with_ssrb_by_default_and_its_bound_needs_it() {
        let t = spec(MINIMAL, &["flows.f1.variant=\"prr\""]);
        assert_eq!(f1_tcp(&t).recovery, Recovery::Prr(PrrBound::SlowStart));
        let t = spec(
            MINIMAL,
            &["tcp.variant=\"prr\"", "flows.f1.prr_bound=\"crb\""],
        );
        assert_eq!(f1_tcp(&t).recovery, Recovery::Prr(PrrBound::Conservative));
        // The SACK rules of the ns3 preset apply to PRR, which runs on the SACK scoreboard.
        let t = spec(
            MINIMAL,
            &["flows.f1.variant=\"prr\"", "flows.f1.partial_ack_send=true"],
        );
        assert!(f1_tcp(&t).partial_ack_send);
        assert_eq!(
            message(
                MINIMAL,
                &["flows.f1.variant=\"sack\"", "tcp.prr_bound=\"crb\""]
            ),
            "flows.f1: prr_bound (set at tcp.prr_bound) only applies with variant = \"prr\", \
             but this flow's variant is \"sack\""
        );
        assert_eq!(
            message(MINIMAL, &["flows.f1.prr_bound=\"fast\""]),
            "flows.f1.prr_bound: \"fast\" is not one of ssrb, crb"
        );
    }

    #[test]
    fn recovery_exit_credit_is_ns3s_in_the_ns3_preset_and_the_rfcs_otherwise() {
        let t = spec(MINIMAL, &["flows.f1.preset=ns3"]);
        assert_eq!(f1_tcp(&t).recovery_exit_credit, RecoveryExitCredit::Acked);
        let t = spec(MINIMAL, &["flows.f1.preset=rfc"]);
        assert_eq!(f1_tcp(&t).recovery_exit_credit, RecoveryExitCredit::None);
        // It needs no scoreboard, so any variant takes it.
        let t = spec(
            MINIMAL,
            &[
                "flows.f1.variant=\"reno\"",
                "tcp.recovery_exit_credit=\"acked\"",
            ],
        );
        assert_eq!(f1_tcp(&t).recovery_exit_credit, RecoveryExitCredit::Acked);
        assert_eq!(
            message(MINIMAL, &["flows.f1.recovery_exit_credit=\"all\""]),
            "flows.f1.recovery_exit_credit: \"all\" is not one of none, acked"
        );
    }

    #[test]
    fn timestamp_keys_are_checked_naming_the_field() {
        assert_eq!(
            message(MINIMAL, &["flows.f1.timestamp_clock=\"100ns\""]),
            "flows.f1.timestamp_clock: \"100ns\" is out of range; must be from 1us to 1s"
        );
        assert_eq!(
            message(MINIMAL, &["tcp.rto_backoff_reset=\"never\""]),
            "tcp.rto_backoff_reset: \"never\" is not one of valid_sample, new_ack"
        );
        assert_eq!(
            message(MINIMAL, &["tcp.ack_credit=\"sacked\""]),
            "tcp.ack_credit: \"sacked\" is not one of cumulative, delivered"
        );
    }

    #[test]
    fn the_old_ns2_preset_is_refused_naming_the_releases_that_replace_it() {
        assert_eq!(
            message(MINIMAL, &["flows.f1.preset=ns2"]),
            "flows.f1.preset: \"ns2\" names no ns-2 release; use \"ns2-2.35\" (ns-2.35's \
             defaults) or \"ns2-2001\" (the ns-2 of early 2001, ns-2.1b7a/ns-2.1b8)"
        );
    }

    #[test]
    fn ledbat_takes_its_constants_and_refuses_a_zero_target_naming_the_field() {
        let s = spec(
            MINIMAL,
            &[
                r#"tcp.cc={ type = "ledbat", target = "25ms", current_filter = 8, slow_start = false }"#,
            ],
        );
        let CcAlgorithm::Ledbat(c) = f1_tcp(&s).cc else {
            panic!("not ledbat")
        };
        assert_eq!(c.target, SimDuration::from_millis(25));
        assert_eq!((c.current_filter, c.slow_start), (8, false));
        assert_eq!(c.base_history, 10, "the RFC's default where unset");
        assert!(
            message(MINIMAL, &[r#"tcp.cc={ type = "ledbat", target = "0s" }"#])
                .starts_with("tcp.cc.target: ")
        );
        assert!(
            message(MINIMAL, &[r#"tcp.cc={ type = "ledbat", beta = 0.5 }"#])
                .starts_with("tcp.cc.beta")
        );
    }

    #[test]
    fn htcp_takes_its_constants_and_refuses_beta_bounds_out_of_order() {
        let s = spec(
            MINIMAL,
            &[r#"tcp.cc={ type = "htcp", delta_l = "500ms", beta_max = 0.7, rtt_scaling = true }"#],
        );
        let CcAlgorithm::Htcp(c) = f1_tcp(&s).cc else {
            panic!("not H-TCP: {:?}", f1_tcp(&s).cc)
        };
        assert_eq!(c.delta_l, SimDuration::from_millis(500));
        assert_eq!((c.beta_min, c.beta_max, c.rtt_scaling), (0.5, 0.7, true));
        assert_eq!(
            message(MINIMAL, &[r#"tcp.cc={ type = "htcp", beta_min = 0.9 }"#]),
            "tcp.cc: beta_min (0.9) must be at most beta_max (0.8)"
        );
        assert!(message(MINIMAL, &[r#"tcp.cc={ type = "htcp", g = 0.1 }"#]).starts_with("tcp.cc.g"));
    }

    #[test]
    fn ect_all_is_read_from_tcp_and_refused_without_ecn() {
        let s = spec(MINIMAL, &["tcp.ecn=true", "tcp.ect_all=true"]);
        assert!(f1_tcp(&s).ect_all);
        assert!(!f1_tcp(&spec(MINIMAL, &["tcp.ecn=true"])).ect_all);
        assert_eq!(
            message(MINIMAL, &["flows.f1.ect_all=true"]),
            "flows.f1: ect_all = true makes every segment ECN-capable and needs ecn = true, \
             \"dctcp\" or \"l4s\"; this flow's ecn is false"
        );
    }

    #[test]
    fn dctcp_takes_g_and_initial_alpha_and_needs_its_own_ecn_echo_both_ways() {
        let s = spec(
            MINIMAL,
            &[
                r#"tcp.cc={ type = "dctcp", g = 0.125 }"#,
                r#"tcp.ecn="dctcp""#,
            ],
        );
        let tcp = f1_tcp(&s);
        assert_eq!(
            tcp.cc,
            CcAlgorithm::Dctcp(crate::cc::DctcpConfig {
                g: 0.125,
                initial_alpha: 1.0
            })
        );
        assert!(tcp.ecn);
        assert_eq!(tcp.ecn_feedback, EcnFeedback::Dctcp);
        // A flow's ecn = true is RFC 3168's echo again.
        let s = spec(MINIMAL, &["flows.f1.ecn=true"]);
        assert_eq!(f1_tcp(&s).ecn_feedback, EcnFeedback::Rfc3168);
        assert_eq!(
            message(MINIMAL, &["tcp.cc=\"dctcp\"", "tcp.ecn=true"]),
            "flows.f1: cc = \"dctcp\" needs ecn = \"dctcp\" (RFC 8257 §3.2's per-segment \
             echo), but this flow's ecn is true (RFC 3168)"
        );
        assert_eq!(
            message(MINIMAL, &["flows.f1.ecn=\"dctcp\""]),
            "flows.f1: ecn = \"dctcp\" is DCTCP's receiver echo (RFC 8257 §3.2) and needs cc = \
             \"dctcp\"; for RFC 3168 ECN with another algorithm write ecn = true"
        );
        assert_eq!(
            message(MINIMAL, &["flows.f1.ecn=\"prague\""]),
            "flows.f1.ecn: \"prague\" is not one of true, false, \"dctcp\" or \"l4s\""
        );
        assert_eq!(
            message(MINIMAL, &["tcp.ecn=\"true\""]),
            "tcp.ecn: \"true\" is not one of true, false, \"dctcp\" or \"l4s\" (true and false \
             are written without quotes)"
        );
        assert_eq!(
            message(MINIMAL, &[r#"tcp.cc={ type = "dctcp", g = 0 }"#]),
            "tcp.cc.g: 0 is out of range; must be greater than 0 and at most 1"
        );
    }

    #[test]
    fn an_l4s_sender_is_dctcp_with_its_echo_and_ect1_and_needs_dctcp() {
        let s = spec(MINIMAL, &["flows.f1.cc=\"dctcp\"", "flows.f1.ecn=\"l4s\""]);
        let tcp = f1_tcp(&s);
        assert!(tcp.ecn && tcp.l4s);
        assert_eq!(tcp.ecn_feedback, EcnFeedback::Dctcp);
        // "dctcp" and true keep ECT(0): what existing scenarios send.
        let s = spec(
            MINIMAL,
            &["flows.f1.cc=\"dctcp\"", "flows.f1.ecn=\"dctcp\""],
        );
        assert!(!f1_tcp(&s).l4s);
        assert!(!f1_tcp(&spec(MINIMAL, &["flows.f1.ecn=true"])).l4s);
        assert_eq!(
            message(MINIMAL, &["flows.f1.cc=\"cubic\"", "flows.f1.ecn=\"l4s\""]),
            "flows.f1: ecn = \"l4s\" sends ECT(1) and needs a scalable congestion response \
             (RFC 9331 §4.3): cc = \"dctcp\""
        );
    }

    #[test]
    fn cc_takes_a_name_with_its_defaults_or_a_table_of_parameters() {
        use crate::cc::{CongestionControl, CubicConfig, FastConfig, VegasConfig};
        let s = spec(MINIMAL, &["tcp.cc=cubic"]);
        assert_eq!(f1_tcp(&s).cc, CcAlgorithm::Cubic(CubicConfig::default()));
        let s = spec(
            MINIMAL,
            &[r#"flows.f1.cc={ type = "cubic", c = 0.3, beta = 0.8 }"#],
        );
        let expected = CubicConfig {
            c: 0.3,
            beta: 0.8,
            ..CubicConfig::default()
        };
        let ns3 = spec(
            MINIMAL,
            &[r#"flows.f1.cc={ type = "cubic", model = "ns3" }"#],
        );
        assert_eq!(
            f1_tcp(&ns3).cc,
            CcAlgorithm::Cubic(CubicConfig {
                model: crate::cc::CubicModel::Ns3,
                ..CubicConfig::default()
            })
        );
        assert_eq!(f1_tcp(&s).cc, CcAlgorithm::Cubic(expected));
        // A flow's cc replaces [tcp]'s whole, parameters included.
        let s = spec(
            MINIMAL,
            &[
                r#"tcp.cc={ type = "vegas", alpha = 2, beta = 4 }"#,
                r#"flows.f1.cc={ type = "fast", alpha = 50 }"#,
            ],
        );
        let fast = FastConfig {
            alpha: 50.0,
            ..FastConfig::default()
        };
        assert_eq!(f1_tcp(&s).cc, CcAlgorithm::Fast(fast));
        let s = spec(
            MINIMAL,
            &[r#"tcp.cc={ type = "vegas", alpha = 2, beta = 4 }"#],
        );
        let vegas = VegasConfig {
            alpha: 2.0,
            beta: 4.0,
            ..VegasConfig::default()
        };
        assert_eq!(f1_tcp(&s).cc, CcAlgorithm::Vegas(vegas));
        for name in ["reno", "highspeed", "scalable", "bic", "vegas", "fast"] {
            let s = spec(MINIMAL, &[&format!("tcp.cc={name}")]);
            let t = f1_tcp(&s);
            assert_eq!(crate::cc::AnyCc::new(&t.cc, t.growth).name(), name);
        }
        assert_eq!(
            spec(MINIMAL, &["tcp.cc={type=\"reno\"}"]),
            spec(MINIMAL, &[])
        );
        // The table survives the resolved scenario.
        let first = load(
            MINIMAL,
            &[r#"flows.f1.cc={ type = "bic", s_max = 16 }"#],
            None,
        )
        .unwrap();
        let again = load(&first.resolved_toml, &[], None).unwrap();
        assert_eq!(again.spec, first.spec);
        let s = spec(
            MINIMAL,
            &[r#"flows.f1.cc={ type = "bic", low_window_growth = "count_reset" }"#],
        );
        let s2 = spec(
            MINIMAL,
            &[r#"flows.f1.cc={ type = "highspeed", decrease_from = "flight" }"#],
        );
        let CcAlgorithm::HighSpeed(hs) = f1_tcp(&s2).cc else {
            panic!("not HighSpeed")
        };
        assert!(hs.decrease_from_flight);
        let CcAlgorithm::Bic(bic) = f1_tcp(&s).cc else {
            panic!("not BIC")
        };
        assert_eq!(
            bic.low_window_growth,
            crate::cc::LowWindowGrowth::CountReset
        );
    }

    #[test]
    fn an_unknown_cc_algorithm_or_parameter_is_rejected_naming_the_field() {
        assert_eq!(
            message(MINIMAL, &["flows.f1.cc=westwood"]),
            "flows.f1.cc: \"westwood\" is not one of reno, highspeed, scalable, bic, cubic, \
             vegas, fast, xcp, er, dctcp, htcp, ledbat, bbr"
        );
        assert_eq!(
            message(MINIMAL, &[r#"flows.f1.cc={ type = "cubic", alpha = 0.5 }"#]),
            "flows.f1.cc.alpha: unknown key; allowed: type, c, beta, fast_convergence, \
             reno_friendly, model"
        );
        assert_eq!(
            message(
                MINIMAL,
                &[r#"flows.f1.cc={ type = "bic", low_window_growth = "carry" }"#]
            ),
            "flows.f1.cc.low_window_growth: \"carry\" is not one of reno, count_reset"
        );
        assert_eq!(
            message(MINIMAL, &[r#"tcp.cc={ type = "reno", beta = 0.5 }"#]),
            "tcp.cc.beta: unknown key; allowed: type"
        );
        assert_eq!(
            message(MINIMAL, &[r#"tcp.cc={ beta = 0.5 }"#]),
            "tcp.cc.type: missing; one of reno, highspeed, scalable, bic, cubic, vegas, fast, xcp, \
             er, dctcp, htcp, ledbat, bbr"
        );
        assert_eq!(
            message(MINIMAL, &["tcp.cc=3"]),
            "tcp.cc: expected one of reno, highspeed, scalable, bic, cubic, vegas, fast, xcp, er, \
             dctcp, htcp, ledbat, bbr, or a table such as { type = \"cubic\", beta = 0.7 }, found \
             integer 3"
        );
        assert_eq!(
            message(MINIMAL, &[r#"tcp.cc={ type = "cubic", beta = 1.0 }"#]),
            "tcp.cc.beta: 1.0 is out of range; must be greater than 0 and less than 1"
        );
        assert_eq!(
            message(
                MINIMAL,
                &[r#"tcp.cc={ type = "vegas", alpha = 4, beta = 2 }"#]
            ),
            "tcp.cc: alpha (4) must be at most beta (2)"
        );
        assert_eq!(
            message(
                MINIMAL,
                &[r#"tcp.cc={ type = "highspeed", high_p = 0.01 }"#]
            ),
            "tcp.cc: high_p (0.01) must be less than low_p (0.001)"
        );
    }

    #[test]
    fn pkt_and_seg_sizes_are_multiples_of_the_flows_final_mss() {
        let s = spec(
            MINIMAL,
            &[
                "tcp.initial_ssthresh=20pkt",
                "tcp.rcv_buffer=100seg",
                "flows.f1.mss=1000",
                "flows.f1.max_window=\"30 pkt\"",
            ],
        );
        let tcp = f1_tcp(&s);
        assert_eq!(tcp.initial_ssthresh, Some(20_000));
        assert_eq!(tcp.rcv_buffer, 100_000);
        assert_eq!(tcp.max_window, Some(30_000));
    }

    /// Paper 003's scenario and plan (experiments/p003-diffserv/): the words a reader trusts.
    const P003_SCENARIO: &str =
        include_str!("../../../../../experiments/p003-diffserv/scenario.toml");
    const P003_PLAN: &str = include_str!("../../../../../experiments/p003-diffserv/plan.toml");

    #[test]
    fn paper_003s_transfer_runs_the_tcp_its_plan_and_scenario_describe() {
        use crate::scenario::spec::FlowKind;
        // Every line of the plan keeps the scenario's [tcp] (no line sets a TCP key), so the
        // resolved FTP flow is the TCP of every run.
        assert!(
            !P003_PLAN.contains("\"tcp."),
            "a plan line now sets a TCP key: check it too"
        );
        let s = spec(P003_SCENARIO, &[]);
        let tcp = match &s.flows["ftp"].kind {
            FlowKind::Tcp { tcp, .. } => tcp,
            other => panic!("ftp is not a TCP flow: {other:?}"),
        };
        let comment = P003_SCENARIO.split("[tcp]").nth(1).unwrap();
        for words in [P003_PLAN, comment] {
            // "NewReno (RFC 6582) loss recovery without SACK" / "NewReno (RFC 6582: loss
            // recovery without SACK)": the recovery, and no SACK blocks on the ACKs.
            assert!(words.contains("NewReno (RFC 6582") && words.contains("without SACK"));
            assert!(!words.replace("without SACK", "").contains("with SACK"));
            // Delayed ACKs, one per two segments: the model's 0.866 assumes b = 2.
            assert!(words.contains("delayed ACKs") && words.contains("two segments"));
            assert!(words.contains("an RTO of at least 1 s (RFC 6298 §2.4)"));
            assert!(words.contains("B = 1,000 B"));
        }
        assert_eq!(tcp.recovery, Recovery::NewReno);
        assert!(tcp.delayed_ack);
        assert_eq!(tcp.delack_count, 2);
        assert_eq!(tcp.rto_min, SimDuration::from_secs(1));
        assert_eq!(tcp.mss, 1000);
    }
}
