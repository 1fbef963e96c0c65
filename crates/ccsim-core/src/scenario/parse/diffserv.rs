// SPDX-License-Identifier: MIT
//! The DiffServ keys of `docs/scenario.md` ("DiffServ"): the class-based queues (`priority`,
//! `wfq`, `drr`, `cbwfq`) a link direction's `queue` may be, and the edge hooks (`policer`,
//! `classifier`) a node's `hook` may be. `links.rs` and `nodes.rs` dispatch here by `type`.
//!
//! ```text
//!   queue = { type = "cbwfq", classes = [ class, ... ] }
//!     class = { name, match = { src, dst, protocol, flow, dscp }, limit, drop = { type = tail |
//!               red | wred, ... }, police = meter + actions (or an array: statements),
//!               weight (wfq) | quantum (drr) | bandwidth, bandwidth_percent, priority, burst (cbwfq) }
//!   hook = { type = "policer", rules = [ { match, meter = { type = car | srtcm | trtcm, ... },
//!            conform, exceed, violate, set_dscp }, ... ] }
//! ```
//!
//! Matches name nodes and flows; [`resolve_names`] turns them into addresses and flow ids once
//! every section is read (link i gives addresses 2i and 2i+1, as `network.rs` builds them).

use indexmap::IndexMap;
use toml::Value;

use super::reader::{
    check_name, error, opt, read_fraction_above_zero, Field, Reader, Res, RATE_SHORT,
};
use crate::diffserv::{
    Action, CarLimit, Ipv4Prefix, MatchSpec, MeterSpec, PolicerRule, PolicerSpec, PortRange,
    Protocol,
};
use crate::queue::{
    ClassPolice, ClassSpec, DropSpec, SchedulerKind, SchedulerSpec, Share, WredProfileSpec,
};
use crate::scenario::spec::{
    FlowKind, FlowSpec, HookSpec, LinkSpec, NodeSpec, QueueLimit, QueueSpec,
};
use crate::time::Rate;

/// The queue types read here.
pub(super) const SCHEDULER_TYPES: &[&str] = &["priority", "wfq", "drr", "cbwfq"];

/// Rules of one policer or classifier hook (the policer remembers rule indices in 16 bits).
const MAX_RULES: usize = 4096;
/// Cisco's default `queue-limit` of a class: 64 packets.
const DEFAULT_CLASS_LIMIT: u64 = 64;
/// Packets waiting from which CBWFQ counts the link as congested (a chosen value; see
/// `queue/cbwfq.rs`).
const DEFAULT_TX_RING: u32 = 4;
/// IOS's default LLQ burst: 200 ms at the configured rate.
const LLQ_DEFAULT_BURST_MS: u64 = 200;

// ---------------------------------------------------------------------------------------------
// Queues

/// `queue = { type = "priority" | "wfq" | "drr" | "cbwfq", classes = [...] }`; `r` has read
/// `type` already.
pub(super) fn read_scheduler(r: &mut Reader, kind: &str) -> Res<QueueSpec> {
    if kind == "cbwfq" {
        r.allow(&["type", "classes", "tx_ring"])?;
    } else {
        r.allow(&["type", "classes"])?;
    }
    let kind = match kind {
        "priority" => SchedulerKind::Priority,
        "wfq" => SchedulerKind::Wfq,
        "drr" => SchedulerKind::Drr,
        _ => SchedulerKind::Cbwfq,
    };
    let f = r.req(
        "classes",
        "an array of classes such as [{ name = \"ef\", match = { dscp = 46 } }]",
    )?;
    let Value::Array(items) = f.value else {
        return Err(f.expected("an array of class tables"));
    };
    if items.is_empty() || items.len() > 64 {
        return Err(f.error(format!("{} classes; from 1 to 64 are allowed", items.len())));
    }
    let mut classes: Vec<ClassSpec> = Vec::new();
    for (i, v) in items.iter().enumerate() {
        let cf = Field {
            value: v,
            path: format!("{}[{i}]", f.path),
        };
        let c = read_class(&cf, kind)?;
        if classes.iter().any(|o| o.name == c.name) {
            return Err(error(
                &format!("{}.name", cf.path),
                format!("{:?} names two classes; class names must differ", c.name),
            ));
        }
        if c.matches.is_none() && i + 1 != items.len() {
            return Err(cf.error(
                "a class without match is the class-default and takes every packet: it must be \
                 the last class",
            ));
        }
        classes.push(c);
    }
    if classes.last().is_some_and(|c| c.matches.is_some()) {
        return Err(f.error(
            "the last class must have no match (the class-default, for packets no other class \
             matches)",
        ));
    }
    if kind == SchedulerKind::Cbwfq {
        let percent: u64 = classes
            .iter()
            .map(|c| match c.share {
                Share::BandwidthPercent(p) => p as u64,
                _ => 0,
            })
            .sum();
        if percent > 100 {
            return Err(f.error(format!(
                "bandwidth_percent of the classes sums to {percent}; at most 100 is possible"
            )));
        }
    }
    let tx_ring = if kind == SchedulerKind::Cbwfq {
        opt(r, "tx_ring", |f| f.u32_in(1, u32::MAX))?.unwrap_or(DEFAULT_TX_RING)
    } else {
        DEFAULT_TX_RING
    };
    Ok(QueueSpec::Scheduler(SchedulerSpec {
        kind,
        classes,
        tx_ring,
    }))
}

fn read_class(f: &Field, kind: SchedulerKind) -> Res<ClassSpec> {
    let mut r = f.table("a class table such as { name = \"ef\", match = { dscp = 46 } }")?;
    let mut keys = vec!["name", "match", "limit", "drop", "police"];
    keys.extend_from_slice(match kind {
        SchedulerKind::Priority => &[],
        SchedulerKind::Wfq => &["weight"],
        SchedulerKind::Drr => &["quantum"],
        SchedulerKind::Cbwfq => &["bandwidth", "bandwidth_percent", "priority", "burst"],
    });
    r.allow(&keys)?;
    let name_field = r.req("name", "a class name such as \"premium\"")?;
    let name = name_field
        .name("a class name such as \"premium\"")?
        .to_string();
    // The rules of every other name: a class is a row of the classes table, a plan's
    // `where = { class = ... }` and part of its random stream's identity, and "" or a
    // bidirectional control in it was taken (campaign 12, issue 32).
    check_name(&name_field.path, &name)?;
    let matches = opt(&mut r, "match", read_match)?;
    let limit =
        opt(&mut r, "limit", read_class_limit)?.unwrap_or(QueueLimit::Packets(DEFAULT_CLASS_LIMIT));
    let drop = opt(&mut r, "drop", |f| read_drop(f, limit))?.unwrap_or(DropSpec::Tail);
    let police = opt(&mut r, "police", read_class_police)?.unwrap_or_default();
    let share = match kind {
        SchedulerKind::Priority => Share::Order,
        SchedulerKind::Wfq => Share::Weight(
            opt(&mut r, "weight", |f| f.int_in(1, u32::MAX as i64))?.unwrap_or(1) as u64,
        ),
        SchedulerKind::Drr => {
            Share::Quantum(opt(&mut r, "quantum", |f| f.positive_size())?.unwrap_or(1500))
        }
        SchedulerKind::Cbwfq => read_cbwfq_share(&mut r, f, matches.is_none())?,
    };
    r.finish()?;
    Ok(ClassSpec {
        name,
        matches,
        limit,
        drop,
        share,
        police,
    })
}

fn read_cbwfq_share(r: &mut Reader, f: &Field, is_default: bool) -> Res<Share> {
    let bandwidth = opt(r, "bandwidth", |f| f.rate())?;
    let percent = opt(r, "bandwidth_percent", |f| f.int_in(1, 100))?;
    let priority = opt(r, "priority", |f| f.rate())?;
    let burst = r.get("burst");
    let given = bandwidth.is_some() as u8 + percent.is_some() as u8 + priority.is_some() as u8;
    if given > 1 {
        return Err(f.error("give one of bandwidth, bandwidth_percent or priority"));
    }
    if let (Some(b), None) = (&burst, priority) {
        return Err(b.error("burst applies to a priority class only"));
    }
    Ok(match (bandwidth, percent, priority) {
        (Some(b), _, _) => Share::Bandwidth(b),
        (_, Some(p), _) => Share::BandwidthPercent(p as u32),
        (_, _, Some(rate)) => {
            let burst = match burst {
                Some(b) => b.positive_size()?,
                None => (rate
                    .bytes_in(crate::time::SimDuration::from_millis(LLQ_DEFAULT_BURST_MS)))
                .max(1500),
            };
            Share::Priority { rate, burst }
        }
        _ if is_default => Share::Remaining,
        _ => {
            return Err(f.error(
                "a cbwfq class needs bandwidth, bandwidth_percent or priority (only the \
                 class-default may have none)",
            ))
        }
    })
}

fn read_class_limit(f: &Field) -> Res<QueueLimit> {
    match f.value {
        Value::Integer(_) => Ok(QueueLimit::Packets(f.int_in(1, i64::MAX)? as u64)),
        _ => Ok(QueueLimit::Bytes(f.positive_size()?)),
    }
}

const MATCH_KEYS: &[&str] = &[
    "src", "dst", "protocol", "src_port", "dst_port", "flow", "dscp",
];

/// `match = { src = "h1", dst = ["10.0.0.0/24", "h3"], protocol = "udp", dst_port = "1024-1100",
/// flow = "ftp", dscp = [10, 12] }`.
fn read_match(f: &Field) -> Res<MatchSpec> {
    let mut r = f.table("a table such as { dscp = 46 } or { src = \"h1\", protocol = \"tcp\" }")?;
    r.allow(MATCH_KEYS)?;
    let mut m = MatchSpec {
        at: f.path.clone(),
        ..MatchSpec::default()
    };
    if let Some(v) = r.get("src") {
        (m.src_nodes, m.src_prefixes) = read_hosts(&v)?;
    }
    if let Some(v) = r.get("dst") {
        (m.dst_nodes, m.dst_prefixes) = read_hosts(&v)?;
    }
    if let Some(v) = r.get("protocol") {
        m.protocol = Some(match v.choice(&["tcp", "udp", "sctp", "icmp", "ping"])? {
            "tcp" => Protocol::Tcp,
            "udp" => Protocol::Udp,
            "sctp" => Protocol::Sctp,
            _ => Protocol::Icmp,
        });
    }
    for (key, out) in [
        ("src_port", &mut m.src_ports),
        ("dst_port", &mut m.dst_ports),
    ] {
        if let Some(v) = r.get(key) {
            if m.protocol == Some(Protocol::Icmp) {
                return Err(
                    v.error("ICMP carries no ports; leave the port out or match tcp, udp or sctp")
                );
            }
            *out = list_of(&v, PORTS, read_port_range)?;
        }
    }
    if let Some(v) = r.get("flow") {
        m.flow_names = names(&v, "a flow name or a list of flow names")?;
    }
    if let Some(v) = r.get("dscp") {
        let list = match v.value {
            Value::Array(a) => a.iter().collect::<Vec<_>>(),
            one => vec![one],
        };
        if list.is_empty() {
            return Err(v.error("an empty list matches nothing; give at least one DSCP"));
        }
        for (k, d) in list.into_iter().enumerate() {
            let df = Field {
                value: d,
                path: if matches!(v.value, Value::Array(_)) {
                    format!("{}[{k}]", v.path)
                } else {
                    v.path.clone()
                },
            };
            m.dscp_mask |= 1u64 << read_dscp(&df)?;
        }
    }
    r.finish()?;
    if m.is_empty() {
        return Err(f.error(format!(
            "an empty match matches every packet; name a field ({}) or leave match out",
            MATCH_KEYS.join(", ")
        )));
    }
    Ok(m)
}

/// A DSCP: an integer from 0 to 63 (RFC 2474 §3: six bits).
fn read_dscp(f: &Field) -> Res<u8> {
    match f.value {
        Value::Integer(d) if (0..=63).contains(d) => Ok(*d as u8),
        Value::Integer(_) => Err(f.out_of_range("from 0 to 63 (a DSCP has six bits)")),
        _ => Err(f.expected("a DSCP, an integer from 0 to 63")),
    }
}

/// The items of a value that may be one item or an array of them, each read by `one` with its
/// own path (`...dst_port[1]`); an empty array is refused (it would match nothing).
fn list_of<T>(f: &Field, what: &str, one: impl Fn(&Field) -> Res<T>) -> Res<Vec<T>> {
    match f.value {
        Value::Array(a) if a.is_empty() => {
            Err(f.error(format!("an empty list matches nothing; expected {what}")))
        }
        Value::Array(a) => a
            .iter()
            .enumerate()
            .map(|(k, v)| {
                one(&Field {
                    value: v,
                    path: format!("{}[{k}]", f.path),
                })
            })
            .collect(),
        _ => Ok(vec![one(f)?]),
    }
}

const HOSTS: &str = "a node name, an address or prefix such as \"10.0.1.0/24\", or a list of \
                     these";

/// `src` / `dst`: node names and IPv4 addresses or prefixes (as a capture writes them: see
/// `diffserv/classifier.rs`), one or a list.
fn read_hosts(f: &Field) -> Res<(Vec<String>, Vec<Ipv4Prefix>)> {
    let mut nodes = Vec::new();
    let mut prefixes = Vec::new();
    for item in list_of(f, HOSTS, |v| match v.value {
        Value::String(s) => Ok((v.path.clone(), s.clone())),
        _ => Err(v.expected(HOSTS)),
    })? {
        let (path, s) = item;
        if s.starts_with(|c: char| c.is_ascii_digit()) {
            prefixes.push(parse_prefix(&s).map_err(|why| error(&path, why))?);
        } else {
            nodes.push(s);
        }
    }
    Ok((nodes, prefixes))
}

/// "a.b.c.d" (a /32) or "a.b.c.d/len" with no host bits set.
fn parse_prefix(s: &str) -> Result<Ipv4Prefix, String> {
    let bad = || {
        format!(
            "{s:?} is not an IPv4 address or prefix; expected four numbers 0-255 and an \
             optional /0-32, such as \"10.0.1.0/24\""
        )
    };
    let (addr, len) = match s.split_once('/') {
        Some((a, l)) => (
            a,
            l.parse::<u8>().ok().filter(|l| *l <= 32).ok_or_else(bad)?,
        ),
        None => (s, 32),
    };
    let octets: Vec<u8> = addr
        .split('.')
        .map(|o| o.parse::<u8>().map_err(|_| bad()))
        .collect::<Result<_, _>>()?;
    let [a, b, c, d] = octets[..] else {
        return Err(bad());
    };
    let p = Ipv4Prefix {
        net: u32::from_be_bytes([a, b, c, d]),
        len,
    };
    if p.net & !p.mask() != 0 {
        let net = std::net::Ipv4Addr::from(p.net & p.mask());
        return Err(format!(
            "{s:?} has host bits set; the network is \"{net}/{len}\""
        ));
    }
    Ok(p)
}

const PORTS: &str = "a port from 1024 to 65535 (1024 + the endpoint's number), a range such as \
                     \"1024-1031\", or a list of these";

/// A port or an inclusive range "lo-hi", as a capture shows ports (1024 and up).
fn read_port_range(f: &Field) -> Res<PortRange> {
    let (lo, hi) = match f.value {
        Value::Integer(p) => (*p, *p),
        Value::String(s) => {
            let parsed = s.split_once('-').and_then(|(a, b)| {
                Some((a.trim().parse::<i64>().ok()?, b.trim().parse::<i64>().ok()?))
            });
            match parsed {
                Some(r) => r,
                None => return Err(f.expected(PORTS)),
            }
        }
        _ => return Err(f.expected(PORTS)),
    };
    if !(1024..=65_535).contains(&lo) || !(1024..=65_535).contains(&hi) {
        return Err(f.out_of_range(
            "from 1024 to 65535 (ccsim's ports are 1024 + the endpoint's number, as a capture \
             shows them)",
        ));
    }
    if lo > hi {
        return Err(f.error(format!("{lo}-{hi} is empty; write the lower port first")));
    }
    Ok(PortRange {
        lo: lo as u16,
        hi: hi as u16,
    })
}

fn names(f: &Field, what: &str) -> Res<Vec<String>> {
    let list: Vec<&Value> = match f.value {
        Value::Array(a) => a.iter().collect(),
        one => vec![one],
    };
    if list.is_empty() {
        return Err(f.error(format!("an empty list matches nothing; expected {what}")));
    }
    list.into_iter()
        .map(|v| match v {
            Value::String(s) => Ok(s.clone()),
            _ => Err(f.expected(what)),
        })
        .collect()
}

// Drop policies

/// WRED's defaults: IOS's exponential weighting constant 9 and mark-probability denominator 10.
const WRED_W_Q: f64 = 1.0 / 512.0;
const WRED_MAX_P: f64 = 0.1;

/// The default WRED profile of a DSCP, thresholds in packets: max_th 40 for all; min_th lower
/// for higher AF drop precedence (AFx1 33, AFx2 28, AFx3 24), 37 for EF, 20 for the rest, the
/// shape of IOS's `random-detect dscp-based` defaults (values to be checked against a router:
/// they are parameters).
fn default_wred_profile(d: u8, scale: f64) -> WredProfileSpec {
    let min = match crate::diffserv::dscp::af_drop_precedence(d) {
        Some(1) => 33.0,
        Some(2) => 28.0,
        Some(3) => 24.0,
        _ if d == crate::diffserv::dscp::EF => 37.0,
        _ => 20.0,
    };
    WredProfileSpec {
        min_th: min * scale,
        max_th: 40.0 * scale,
        max_p: WRED_MAX_P,
    }
}

fn read_drop(f: &Field, limit: QueueLimit) -> Res<DropSpec> {
    let mut r = f.table("a table such as { type = \"wred\" }")?;
    let kind = r
        .req("type", "one of tail, red, wred")?
        .choice(&["tail", "red", "wred"])?;
    let (capacity, unit) = match limit {
        QueueLimit::Packets(n) => (n as f64, "packets"),
        QueueLimit::Bytes(b) => (b as f64, "bytes"),
    };
    let spec = match kind {
        "tail" => {
            r.allow(&["type"])?;
            DropSpec::Tail
        }
        "red" => {
            r.allow(&[
                "type",
                "min_th",
                "max_th",
                "max_p",
                "w_q",
                "gentle",
                "ecn",
                "mean_packet_size",
            ])?;
            let mean_packet_size =
                opt(&mut r, "mean_packet_size", |f| f.size_u32(1))?.unwrap_or(1000);
            let scale = match limit {
                QueueLimit::Packets(_) => 1.0,
                QueueLimit::Bytes(_) => mean_packet_size as f64,
            };
            let min_th = opt(&mut r, "min_th", |f| f.number())?.unwrap_or(5.0 * scale);
            let max_th = opt(&mut r, "max_th", |f| f.number())?.unwrap_or(15.0 * scale);
            if !(0.0 <= min_th && min_th < max_th && max_th <= capacity) {
                return Err(f.error(format!(
                    "RED needs 0 <= min_th < max_th <= limit; got min_th {min_th}, max_th \
                     {max_th}, limit {capacity} ({unit})"
                )));
            }
            DropSpec::Red {
                min_th,
                max_th,
                max_p: opt(&mut r, "max_p", read_fraction_above_zero)?.unwrap_or(0.1),
                w_q: opt(&mut r, "w_q", read_fraction_above_zero)?.unwrap_or(0.002),
                gentle: opt(&mut r, "gentle", |f| f.boolean())?.unwrap_or(true),
                ecn: opt(&mut r, "ecn", |f| f.boolean())?.unwrap_or(false),
                mean_packet_size,
            }
        }
        _ => {
            r.allow(&["type", "w_q", "ecn", "mean_packet_size", "profiles"])?;
            let mean_packet_size =
                opt(&mut r, "mean_packet_size", |f| f.size_u32(1))?.unwrap_or(1000);
            let scale = match limit {
                QueueLimit::Packets(_) => 1.0,
                QueueLimit::Bytes(_) => mean_packet_size as f64,
            };
            let mut table: Box<[WredProfileSpec; 64]> = Box::new(std::array::from_fn(|d| {
                default_wred_profile(d as u8, scale)
            }));
            if let Some(pf) = r.get("profiles") {
                let Value::Array(items) = pf.value else {
                    return Err(pf.expected(
                        "an array such as [{ dscp = [10], min_th = 30, max_th = 40, max_p = 0.1 }]",
                    ));
                };
                for (i, v) in items.iter().enumerate() {
                    let p = Field {
                        value: v,
                        path: format!("{}[{i}]", pf.path),
                    };
                    read_wred_profile(&p, &mut table)?;
                }
            }
            for p in table.iter() {
                if p.max_th > capacity {
                    return Err(f.error(format!(
                        "a WRED max_th of {} is above the class limit {capacity} ({unit}); lower \
                         it in profiles or raise limit",
                        p.max_th
                    )));
                }
            }
            DropSpec::Wred {
                w_q: opt(&mut r, "w_q", read_fraction_above_zero)?.unwrap_or(WRED_W_Q),
                ecn: opt(&mut r, "ecn", |f| f.boolean())?.unwrap_or(false),
                mean_packet_size,
                profiles: table,
            }
        }
    };
    r.finish()?;
    Ok(spec)
}

fn read_wred_profile(f: &Field, table: &mut [WredProfileSpec; 64]) -> Res<()> {
    let mut r =
        f.table("a table such as { dscp = [10], min_th = 30, max_th = 40, max_p = 0.1 }")?;
    r.allow(&["dscp", "min_th", "max_th", "max_p"])?;
    let df = r.req("dscp", "a DSCP or a list of them")?;
    let list: Vec<&Value> = match df.value {
        Value::Array(a) => a.iter().collect(),
        one => vec![one],
    };
    let mut dscps = Vec::new();
    for (k, v) in list.into_iter().enumerate() {
        dscps.push(read_dscp(&Field {
            value: v,
            path: format!("{}[{k}]", df.path),
        })?);
    }
    let min_th = r.req("min_th", "a number of packets")?.number()?;
    let max_th = r.req("max_th", "a number of packets")?.number()?;
    let max_p = opt(&mut r, "max_p", read_fraction_above_zero)?.unwrap_or(WRED_MAX_P);
    r.finish()?;
    if !(0.0 <= min_th && min_th < max_th) {
        return Err(f.error(format!(
            "WRED needs 0 <= min_th < max_th; got min_th {min_th}, max_th {max_th}"
        )));
    }
    for d in dscps {
        table[d as usize] = WredProfileSpec {
            min_th,
            max_th,
            max_p,
        };
    }
    Ok(())
}

// Meters and actions

const POLICE: &str = "a table such as { type = \"car\", rate = \"1Mbps\", normal_burst = 10000 } \
                      or an array of them (rate-limit statements, tried in order)";

/// `police = { meter keys, conform, exceed, violate }`, or an array of such statements: a
/// `continue` action goes on to the next statement (CAR's continue); the last has no next.
fn read_class_police(f: &Field) -> Res<Vec<ClassPolice>> {
    let statements = match f.value {
        Value::Array(a) if a.is_empty() => {
            return Err(f.error("no statement; give one or leave police out"))
        }
        Value::Array(_) => list_of(f, POLICE, read_police_statement)?,
        Value::Table(_) => vec![read_police_statement(f)?],
        _ => return Err(f.expected(POLICE)),
    };
    let last = statements.len() - 1;
    let s = &statements[last];
    for (a, key) in [
        (s.conform, "conform"),
        (s.exceed, "exceed"),
        (s.violate, "violate"),
    ] {
        if a.continues() {
            let at = match f.value {
                Value::Array(_) => format!("{}[{last}].{key}", f.path),
                _ => format!("{}.{key}", f.path),
            };
            return Err(error(
                &at,
                "continue on the last statement has no next one; use transmit, drop or \
                 { set_dscp = N }, or add a statement after it",
            ));
        }
    }
    Ok(statements)
}

fn read_police_statement(f: &Field) -> Res<ClassPolice> {
    let mut r = f.table(POLICE)?;
    let meter = read_meter_in(&mut r, &["conform", "exceed", "violate"])?;
    let (conform, exceed, violate) = read_actions(&mut r, None)?;
    r.finish()?;
    Ok(ClassPolice {
        meter,
        conform,
        exceed,
        violate,
    })
}

const CAR_KEYS: &[&str] = &["type", "rate", "normal_burst", "excess_burst", "debt_limit"];
const SRTCM_KEYS: &[&str] = &["type", "cir", "cbs", "ebs", "colour_aware"];
const TRTCM_KEYS: &[&str] = &["type", "cir", "cbs", "pir", "pbs", "colour_aware"];

/// A meter's keys read from `r` (which may hold `extra` keys too, read by the caller).
fn read_meter_in(r: &mut Reader, extra: &[&'static str]) -> Res<MeterSpec> {
    let kind = r
        .req("type", "one of car, srtcm, trtcm")?
        .choice(&["car", "srtcm", "trtcm"])?;
    let mut allowed: Vec<&'static str> = match kind {
        "car" => CAR_KEYS.to_vec(),
        "srtcm" => SRTCM_KEYS.to_vec(),
        _ => TRTCM_KEYS.to_vec(),
    };
    allowed.extend_from_slice(extra);
    r.allow(&allowed)?;
    let path = r.path.clone();
    Ok(match kind {
        "car" => {
            let rate = r.req("rate", RATE_SHORT)?.rate()?;
            let normal_burst = r
                .req("normal_burst", "a size in bytes such as 10000")?
                .positive_size()?;
            let excess = r.get("excess_burst");
            let excess_burst = match &excess {
                Some(e) => e.positive_size()?,
                None => normal_burst,
            };
            if excess_burst < normal_burst {
                return Err(error(
                    &format!("{path}.excess_burst"),
                    format!(
                        "{excess_burst} is below normal_burst ({normal_burst}); the excess burst \
                         is at least the normal burst"
                    ),
                ));
            }
            let limit = match opt(r, "debt_limit", |f| {
                f.choice(&["excess_burst", "beyond_normal"])
            })? {
                Some("beyond_normal") => CarLimit::BeyondNormal,
                _ => CarLimit::ExcessBurst,
            };
            MeterSpec::Car {
                rate,
                normal_burst,
                excess_burst,
                limit,
            }
        }
        "srtcm" => {
            let cir = r.req("cir", RATE_SHORT)?.rate()?;
            let cbs = r.req("cbs", "a size in bytes")?.size()?;
            let ebs = r.req("ebs", "a size in bytes")?.size()?;
            if cbs == 0 && ebs == 0 {
                return Err(error(
                    &format!("{path}.cbs"),
                    "cbs and ebs are both 0; RFC 2697 §2 needs one above 0",
                ));
            }
            MeterSpec::SrTcm {
                cir,
                cbs,
                ebs,
                colour_aware: opt(r, "colour_aware", |f| f.boolean())?.unwrap_or(false),
            }
        }
        _ => {
            let cir = r.req("cir", RATE_SHORT)?.rate()?;
            let cbs = r.req("cbs", "a size in bytes")?.positive_size()?;
            let pir_f = r.req("pir", RATE_SHORT)?;
            let pir = pir_f.rate()?;
            if pir < cir {
                return Err(pir_f.error(format!(
                    "{} bit/s is below cir ({} bit/s); RFC 2698 §2 needs pir >= cir",
                    pir.bits_per_sec(),
                    cir.bits_per_sec()
                )));
            }
            let pbs = r.req("pbs", "a size in bytes")?.positive_size()?;
            MeterSpec::TrTcm {
                cir,
                cbs,
                pir,
                pbs,
                colour_aware: opt(r, "colour_aware", |f| f.boolean())?.unwrap_or(false),
            }
        }
    })
}

const ACTION: &str =
    "\"transmit\", \"drop\", \"continue\", or a table such as { set_dscp = 46 } or \
     { set_dscp = 46, then = \"continue\" }";

fn read_action(f: &Field) -> Res<Action> {
    match f.value {
        Value::String(_) => Ok(match f.choice(&["transmit", "drop", "continue"])? {
            "transmit" => Action::Transmit,
            "drop" => Action::Drop,
            _ => Action::Continue,
        }),
        Value::Table(_) => {
            let mut r = f.table(ACTION)?;
            r.allow(&["set_dscp", "then"])?;
            let d = read_dscp(&r.req("set_dscp", "a DSCP from 0 to 63")?)?;
            let then = opt(&mut r, "then", |f| f.choice(&["transmit", "continue"]))?;
            r.finish()?;
            Ok(match then {
                Some("continue") => Action::SetDscpContinue(d),
                _ => Action::SetDscpTransmit(d),
            })
        }
        _ => Err(f.expected(ACTION)),
    }
}

/// `conform` (default transmit), `exceed` (default drop), `violate` (default: as exceed).
fn read_actions(r: &mut Reader, conform_default: Option<Action>) -> Res<(Action, Action, Action)> {
    let conform = opt(r, "conform", read_action)?
        .or(conform_default)
        .unwrap_or(Action::Transmit);
    let exceed = opt(r, "exceed", read_action)?.unwrap_or(Action::Drop);
    let violate = opt(r, "violate", read_action)?.unwrap_or(exceed);
    Ok((conform, exceed, violate))
}

// ---------------------------------------------------------------------------------------------
// Hooks

/// `hook = { type = "policer" | "classifier", rules = [...] }`; `r` has read `type`.
pub(super) fn read_edge_hook(r: &mut Reader, kind: &str) -> Res<HookSpec> {
    r.allow(&["type", "rules"])?;
    let f = r.req(
        "rules",
        "an array of rules such as [{ match = { src = \"h1\" }, set_dscp = 46 }]",
    )?;
    let Value::Array(items) = f.value else {
        return Err(f.expected("an array of rule tables"));
    };
    if items.is_empty() {
        return Err(f.error("no rules; a hook with no rule would do nothing"));
    }
    if items.len() > MAX_RULES {
        return Err(f.error(format!(
            "{} rules; at most {MAX_RULES} are allowed",
            items.len()
        )));
    }
    let mut rules = Vec::new();
    for (i, v) in items.iter().enumerate() {
        let rf = Field {
            value: v,
            path: format!("{}[{i}]", f.path),
        };
        rules.push(read_rule(&rf, kind == "classifier")?);
    }
    Ok(HookSpec::Policer(PolicerSpec { rules }))
}

fn read_rule(f: &Field, marker_only: bool) -> Res<PolicerRule> {
    let mut r = f.table("a rule table such as { match = { src = \"h1\" }, set_dscp = 46 }")?;
    let keys: &[&'static str] = if marker_only {
        &["match", "set_dscp"]
    } else {
        &["match", "meter", "set_dscp", "conform", "exceed", "violate"]
    };
    r.allow(keys)?;
    let matches = opt(&mut r, "match", read_match)?.unwrap_or_else(|| MatchSpec {
        at: format!("{}.match", f.path),
        ..MatchSpec::default()
    });
    let mark = opt(&mut r, "set_dscp", read_dscp)?;
    if marker_only {
        let Some(d) = mark else {
            return Err(error(
                &format!("{}.set_dscp", f.path),
                "missing; a classifier rule marks the packets it matches, e.g. set_dscp = 46",
            ));
        };
        r.finish()?;
        return Ok(PolicerRule {
            matches,
            meter: None,
            conform: Action::SetDscpTransmit(d),
            exceed: Action::Drop,
            violate: Action::Drop,
        });
    }
    let meter = match r.get("meter") {
        Some(m) => {
            let mut mr = m.table(
                "a table such as { type = \"car\", rate = \"10Mbps\", normal_burst = 10000 }",
            )?;
            let spec = read_meter_in(&mut mr, &[])?;
            mr.finish()?;
            Some(spec)
        }
        None => None,
    };
    let (conform, exceed, violate) = read_actions(&mut r, mark.map(Action::SetDscpTransmit))?;
    if mark.is_some() && r.get("conform").is_some() {
        return Err(f.error("give set_dscp or conform, not both"));
    }
    if meter.is_none() && (r.get("exceed").is_some() || r.get("violate").is_some()) {
        return Err(f.error("exceed and violate need a meter; without one every packet conforms"));
    }
    r.finish()?;
    Ok(PolicerRule {
        matches,
        meter,
        conform,
        exceed,
        violate,
    })
}

// ---------------------------------------------------------------------------------------------
// After every section: names to addresses and flow ids, rates against links

/// Checks a link direction's class rates against its rate: LLQ and bandwidth reservations
/// cannot exceed the link.
pub(super) fn check_rates(queue: &QueueSpec, rate: Rate, path: &str) -> Res<()> {
    let QueueSpec::Scheduler(s) = queue else {
        return Ok(());
    };
    let mut reserved: u64 = 0;
    for (i, c) in s.classes.iter().enumerate() {
        let at = format!("{path}.classes[{i}]");
        let bps = match c.share {
            Share::Priority { rate: p, .. } => {
                if p > rate {
                    return Err(error(
                        &format!("{at}.priority"),
                        format!(
                            "{} bit/s is above the link rate ({} bit/s); an LLQ rate must fit \
                             in the link",
                            p.bits_per_sec(),
                            rate.bits_per_sec()
                        ),
                    ));
                }
                p.bits_per_sec()
            }
            Share::Bandwidth(b) => b.bits_per_sec(),
            Share::BandwidthPercent(p) => rate.bits_per_sec() / 100 * p as u64,
            _ => 0,
        };
        reserved += bps;
    }
    if reserved > rate.bits_per_sec() {
        return Err(error(
            &format!("{path}.classes"),
            format!(
                "priority and bandwidth reserve {reserved} bit/s, more than the link rate ({} \
                 bit/s)",
                rate.bits_per_sec()
            ),
        ));
    }
    Ok(())
}

/// Resolves the node and flow names of every match (in hooks and queues).
pub(super) fn resolve_names(
    nodes: &mut IndexMap<String, NodeSpec>,
    links: &mut IndexMap<String, LinkSpec>,
    flows: &IndexMap<String, FlowSpec>,
) -> Res<()> {
    // Addresses: link i gives 2i to its end a and 2i + 1 to its end b (network.rs).
    let mut addrs: IndexMap<&str, Vec<u32>> = IndexMap::new();
    for (i, l) in links.values().enumerate() {
        addrs.entry(l.a.as_str()).or_default().push(2 * i as u32);
        addrs
            .entry(l.b.as_str())
            .or_default()
            .push(2 * i as u32 + 1);
    }
    let addrs: IndexMap<String, Vec<u32>> =
        addrs.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
    // Flow ids: one per configured flow, in order; short_tcp generators take theirs later.
    let mut flow_ids: IndexMap<&str, Option<u32>> = IndexMap::new();
    let mut next = 0u32;
    for (name, f) in flows {
        if matches!(f.kind, FlowKind::ShortTcp { .. }) {
            flow_ids.insert(name, None);
        } else {
            flow_ids.insert(name, Some(next));
            next += 1;
        }
    }
    let node_names: Vec<String> = nodes.keys().cloned().collect();
    let ping_flows: Vec<u32> = flows
        .iter()
        .filter(|(_, f)| matches!(f.kind, FlowKind::Ping { .. }))
        .filter_map(|(name, _)| flow_ids.get(name.as_str()).copied().flatten())
        .collect();
    let n_addrs = 2 * links.len() as u32;
    let resolve = |m: &mut MatchSpec| -> Res<()> {
        // A prefix that holds no interface address of the run would match nothing.
        for (prefixes, key) in [(&m.src_prefixes, "src"), (&m.dst_prefixes, "dst")] {
            for p in prefixes {
                if !(0..n_addrs).any(|a| p.contains(a)) {
                    let first = std::net::Ipv4Addr::from(crate::pcap::ipv4_of(0));
                    let last = std::net::Ipv4Addr::from(crate::pcap::ipv4_of(n_addrs.max(1) - 1));
                    return Err(error(
                        &format!("{}.{key}", m.at),
                        format!(
                            "{}/{} holds no interface address; this network's are {first} to \
                             {last} (two per link, in the order of [links])",
                            std::net::Ipv4Addr::from(p.net),
                            p.len
                        ),
                    ));
                }
            }
        }
        m.ping_flows = ping_flows.clone();
        for (list, out, key) in [
            (&m.src_nodes, &mut m.src, "src"),
            (&m.dst_nodes, &mut m.dst, "dst"),
        ] {
            out.clear();
            for n in list {
                if !node_names.contains(n) {
                    return Err(error(
                        &format!("{}.{key}", m.at),
                        format!(
                            "no node named {n:?}; nodes are {}",
                            super::reader::list_names(node_names.iter())
                        ),
                    ));
                }
                out.extend(addrs.get(n).into_iter().flatten());
            }
        }
        m.flows.clear();
        for n in &m.flow_names {
            match flow_ids.get(n.as_str()) {
                Some(Some(id)) => m.flows.push(*id),
                Some(None) => {
                    return Err(error(
                        &format!("{}.flow", m.at),
                        format!(
                            "{n:?} is a short_tcp generator; match its hosts (src, dst) instead"
                        ),
                    ))
                }
                None => {
                    return Err(error(
                        &format!("{}.flow", m.at),
                        format!(
                            "no flow named {n:?}; flows are {}",
                            super::reader::list_names(flows.keys())
                        ),
                    ))
                }
            }
        }
        Ok(())
    };
    for n in nodes.values_mut() {
        if let Some(HookSpec::Policer(p)) = &mut n.hook {
            for rule in &mut p.rules {
                resolve(&mut rule.matches)?;
            }
        }
    }
    for l in links.values_mut() {
        for d in [&mut l.a_to_b, &mut l.b_to_a] {
            if let QueueSpec::Scheduler(s) = &mut d.queue {
                for c in &mut s.classes {
                    if let Some(m) = &mut c.matches {
                        resolve(m)?;
                    }
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::*;

    fn bottleneck_queue(queue: &str) -> SchedulerSpec {
        let s = spec(MINIMAL, &[&format!("links.bottleneck.queue={queue}")]);
        match &s.links["bottleneck"].a_to_b.queue {
            QueueSpec::Scheduler(q) => q.clone(),
            other => panic!("not a scheduler: {other:?}"),
        }
    }

    #[test]
    fn the_issues_cbwfq_example_gets_ios_defaults() {
        let q = bottleneck_queue(
            "{type=\"cbwfq\", classes=[{name=\"premium\", match={dscp=46}, \
             priority=\"5000kbps\"}, {name=\"default\", bandwidth_percent=25, \
             drop={type=\"wred\"}}]}",
        );
        assert_eq!(q.kind, SchedulerKind::Cbwfq);
        assert_eq!(q.tx_ring, 4);
        let [premium, default] = &q.classes[..] else {
            panic!("two classes expected")
        };
        // 200 ms at 5 Mbit/s = 125,000 B of burst; IOS's 64-packet queue-limit.
        assert_eq!(
            premium.share,
            Share::Priority {
                rate: Rate::bps(5_000_000),
                burst: 125_000
            }
        );
        assert_eq!(premium.limit, QueueLimit::Packets(64));
        assert_eq!(premium.matches.as_ref().unwrap().dscp_mask, 1 << 46);
        assert_eq!(default.share, Share::BandwidthPercent(25));
        assert!(default.matches.is_none());
        let DropSpec::Wred {
            w_q, ecn, profiles, ..
        } = &default.drop
        else {
            panic!("WRED expected")
        };
        // Reference check 6: exponential weighting constant 9, denominator 10.
        assert_eq!(*w_q, 1.0 / 512.0);
        assert!(!ecn);
        assert_eq!(profiles[10].min_th, 33.0);
        assert_eq!(profiles[14].min_th, 24.0);
        assert_eq!(profiles[0].max_th, 40.0);
        assert!(profiles.iter().all(|p| p.max_p == 0.1));
    }

    #[test]
    fn wred_profiles_override_the_defaults_of_the_dscps_they_name() {
        let q = bottleneck_queue(
            "{type=\"priority\", classes=[{name=\"all\", limit=100, drop={type=\"wred\", \
             ecn=true, profiles=[{dscp=[10, 12], min_th=50, max_th=90, max_p=0.02}]}}]}",
        );
        let DropSpec::Wred { ecn, profiles, .. } = &q.classes[0].drop else {
            panic!("WRED expected")
        };
        assert!(ecn);
        assert_eq!(
            (profiles[12].min_th, profiles[12].max_th, profiles[12].max_p),
            (50.0, 90.0, 0.02)
        );
        assert_eq!(profiles[14].min_th, 24.0);
    }

    #[test]
    fn a_policer_rule_resolves_its_nodes_to_their_addresses() {
        let s = spec(
            MINIMAL,
            &[
                "nodes.r1={type=\"router\", hook={type=\"policer\", rules=[{match={src=\"h1\", \
               protocol=\"tcp\"}, meter={type=\"car\", rate=\"10Mbps\", normal_burst=10000}, \
               set_dscp=46}]}}",
            ],
        );
        let Some(HookSpec::Policer(p)) = &s.nodes["r1"].hook else {
            panic!("policer expected")
        };
        let rule = &p.rules[0];
        // h1 has one interface: end a of the first link, address 0.
        assert_eq!(rule.matches.src, vec![0]);
        assert_eq!(rule.conform, Action::SetDscpTransmit(46));
        assert_eq!((rule.exceed, rule.violate), (Action::Drop, Action::Drop));
        assert_eq!(
            rule.meter,
            Some(MeterSpec::Car {
                rate: Rate::bps(10_000_000),
                normal_burst: 10_000,
                excess_burst: 10_000,
                limit: CarLimit::ExcessBurst,
            })
        );
    }
}
