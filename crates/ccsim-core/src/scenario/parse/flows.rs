// SPDX-License-Identifier: MIT
//! `[flows.NAME]` of `docs/scenario.md`: what each flow sends, from which host to which, and
//! when: bulk or finite TCP, constant-rate and on-off UDP, and Poisson arrivals of short TCP
//! transfers with their size distribution. A TCP flow's own TCP keys are read by `tcp.rs`, over
//! `[tcp]`.
//!
//! `start` and `stop` are times since the beginning of the run, as in an ns-2 script's
//! `$ns at`; `stop` must be later than `start`. `start_jitter` (or `[jitter] start`, `jitter.rs`)
//! is the window of the flow's seed-driven start offset.
//!
//! `count = N` makes N identical flows of one table, named `NAME#1` to `NAME#N` (the N
//! long-lived flows of a dumbbell study, or N on-off sources): each copy is a flow of its own,
//! with its own row in the flows table and its own random streams (they are keyed by the
//! copy's name, so a copy's start offset does not depend on how many copies there are).

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;

use indexmap::IndexMap;
use toml::Value;

use super::jitter::{read_start_jitter, START_JITTER};
use super::reader::{
    check_entry_is_one, check_name, error, join, opt, Field, Res, DURATION_SHORT, RATE_SHORT,
    SIZE_SHORT,
};
use super::sctp::{read_sctp_flow, SCTP_KEYS};
use super::tcp::{read_tcp_layer, resolve_tcp, TcpLayer, TCP_KEYS};
use crate::scenario::spec::{FlowKind, FlowSpec, Limits, LinkSpec, NodeKind, NodeSpec, SizeDist};
use crate::scenario::units;
use crate::sim::CONFIGURED_FLOW_BYTES;
use crate::time::{SimDuration, SimTime};

const FLOW_TYPES: &[&str] = &["tcp", "cbr", "onoff", "short_tcp", "sctp", "ping"];
const FLOW_COMMON_KEYS: &[&str] = &["type", "src", "dst", "start", "stop", START_JITTER, "count"];
/// The most copies one flow table may make: the scale the benchmarks reach (F100000) ten times.
const MAX_COUNT: u32 = 1_000_000;
const DEFAULT_PACKET_SIZE: u32 = 1000;
/// 20 B IPv4 header, 8 B UDP header, 1 B of payload.
const MIN_PACKET_SIZE: u32 = 29;

pub(super) fn read_flows(
    f: &Field,
    nodes: &IndexMap<String, NodeSpec>,
    links: &IndexMap<String, LinkSpec>,
    tcp_defaults: &TcpLayer,
    start_jitter: SimDuration,
    limits: &Limits,
) -> Res<IndexMap<String, FlowSpec>> {
    let room = FlowRoom::of(limits);
    let Value::Table(table) = f.value else {
        return Err(f.expected("a table of flows such as [flows.bulk]"));
    };
    let graph = Graph::new(nodes, links);
    let mut flows = IndexMap::new();
    for (name, value) in table {
        check_name(&f.path, name)?;
        check_entry_is_one("flows", table, name)?;
        let flow = Field {
            value,
            path: join(&f.path, name),
        };
        let (spec, count) = read_flow(&flow, nodes, links, &graph, tcp_defaults, start_jitter)?;
        let Some(count) = count else {
            if flows.contains_key(name.as_str()) {
                return Err(flow.error(format!(
                    "a flow named {name:?} was already made by a count of copies"
                )));
            }
            flows.insert(name.clone(), spec);
            continue;
        };
        room.check(
            flows.len() as u64 + u64::from(count),
            &join(&flow.path, "count"),
        )?;
        for i in 1..=count {
            let copy = format!("{name}#{i}");
            if flows.contains_key(&copy) || table.contains_key(&copy) {
                return Err(error(
                    &join(&flow.path, "count"),
                    format!("its copy {copy:?} would have the name of another flow"),
                ));
            }
            flows.insert(copy, spec.clone());
        }
    }
    room.check(flows.len() as u64, &f.path)?;
    Ok(flows)
}

/// How many configured flows the process can hold: `limits.max_memory`, or the process's
/// address-space limit (`ulimit -v`) where that is lower, over what one flow takes at least
/// (`CONFIGURED_FLOW_BYTES`). Checked before `count` copies are made: a million copies under
/// a 1 GB address-space limit ended in Rust's allocation failure, an abort with no line naming
/// the scenario (campaign 11, issue 32). The refusal by `max_memory` depends only on the
/// scenario; the one by the address space depends on the machine, as running out would.
struct FlowRoom {
    bytes: u64,
    what: String,
}

impl FlowRoom {
    fn of(limits: &Limits) -> FlowRoom {
        match address_space_limit() {
            Some(limit) if limit < limits.max_memory => FlowRoom {
                bytes: limit,
                what: format!(
                    "the process's address-space limit ({} MiB, ulimit -v)",
                    limit >> 20
                ),
            },
            _ => FlowRoom {
                bytes: limits.max_memory,
                what: format!(
                    "limits.max_memory ({})",
                    units::format_mib(limits.max_memory)
                ),
            },
        }
    }

    fn check(&self, flows: u64, path: &str) -> Res<()> {
        let need = flows.saturating_mul(CONFIGURED_FLOW_BYTES);
        if need <= self.bytes {
            return Ok(());
        }
        Err(error(
            path,
            format!(
                "{flows} {} at least {} ({CONFIGURED_FLOW_BYTES} B each: the spec, \
                 the endpoints and a row of the flows table), more than {}; use fewer flows \
                 or raise the limit",
                if flows == 1 {
                    "flow takes"
                } else {
                    "flows take"
                },
                units::format_mib(need),
                self.what
            ),
        ))
    }
}

/// The soft address-space limit (`RLIMIT_AS`) from Linux's `/proc/self/limits`; `None` when
/// it is unlimited or cannot be read (another system). The whole limit, not what is left
/// under it: the allocator (mimalloc) reserves address space ahead of use, so the mapped
/// size overstates what is taken.
fn address_space_limit() -> Option<u64> {
    std::fs::read_to_string("/proc/self/limits")
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("Max address space"))?
        .split_whitespace()
        .next()?
        .parse()
        .ok() // "unlimited" does not parse
}

fn read_flow(
    f: &Field,
    nodes: &IndexMap<String, NodeSpec>,
    links: &IndexMap<String, LinkSpec>,
    graph: &Graph,
    tcp_defaults: &TcpLayer,
    start_jitter: SimDuration,
) -> Res<(FlowSpec, Option<u32>)> {
    let mut r = f.table("a table such as { type = \"tcp\", src = \"h1\", dst = \"h2\" }")?;
    let kind = r
        .req("type", "one of tcp, cbr, onoff, short_tcp, sctp, ping")?
        .choice(FLOW_TYPES)?;
    let mut allowed = FLOW_COMMON_KEYS.to_vec();
    match kind {
        "tcp" => {
            allowed.push("size");
            allowed.extend(TCP_KEYS);
        }
        "cbr" => allowed.extend(["rate", "packet_size"]),
        "onoff" => allowed.extend(["rate", "packet_size", "on", "off", "distribution"]),
        "ping" => allowed.extend(super::ping::PING_KEYS),
        "sctp" => allowed.extend(SCTP_KEYS),
        _ => {
            allowed.extend(["arrival_rate", "sizes"]);
            allowed.extend(TCP_KEYS);
        }
    }
    r.allow(&allowed)?;
    let src = r.req("src", "a host name")?.host(nodes)?;
    let dst = r.req("dst", "a host name")?.host(nodes)?;
    if src == dst {
        return Err(f.error(format!("src and dst are both {src:?}")));
    }
    let start = opt(&mut r, "start", |f| f.duration())?.unwrap_or(SimDuration::ZERO);
    let start = SimTime::ZERO + start;
    let stop = match r.get("stop") {
        Some(field) => {
            let stop = SimTime::ZERO + field.duration()?;
            if stop <= start {
                return Err(field.error(format!(
                    "{} is not after start ({})",
                    units::format_duration(stop - SimTime::ZERO),
                    units::format_duration(start - SimTime::ZERO)
                )));
            }
            Some(stop)
        }
        None => None,
    };
    let start_jitter = read_start_jitter(&mut r, start_jitter, start, stop)?;
    let count = match r.get("count") {
        Some(field) if kind == "short_tcp" => {
            return Err(field.error(
                "a short_tcp generator makes many transfers already; give it a higher \
                 arrival_rate instead",
            ))
        }
        Some(field) => Some(field.u32_in(1, MAX_COUNT)?),
        None => None,
    };
    let flow_kind = match kind {
        "tcp" => {
            let size = opt(&mut r, "size", |f| f.positive_size())?;
            let own = read_tcp_layer(&mut r)?;
            FlowKind::Tcp {
                size,
                tcp: Arc::new(resolve_tcp(&f.path, tcp_defaults, &own)?),
            }
        }
        "cbr" => FlowKind::Cbr {
            rate: r.req("rate", RATE_SHORT)?.rate()?,
            packet_size: opt(&mut r, "packet_size", |f| f.size_u32(MIN_PACKET_SIZE))?
                .unwrap_or(DEFAULT_PACKET_SIZE),
        },
        "ping" => super::ping::read_ping(&mut r)?,
        "onoff" => FlowKind::OnOff {
            rate: r.req("rate", RATE_SHORT)?.rate()?,
            packet_size: opt(&mut r, "packet_size", |f| f.size_u32(MIN_PACKET_SIZE))?
                .unwrap_or(DEFAULT_PACKET_SIZE),
            on: r.req("on", DURATION_SHORT)?.positive_duration()?,
            off: r.req("off", DURATION_SHORT)?.duration()?,
            exponential: opt(&mut r, "distribution", |f| {
                f.choice(&["deterministic", "exponential"])
            })? == Some("exponential"),
        },
        "sctp" => read_sctp_flow(&mut r, &src, &dst, links)?,
        _ => {
            let arrival_rate = r
                .req("arrival_rate", "a number of flows per second such as 10.0")?
                .positive_number()?;
            let sizes = read_sizes(&r.req(
                "sizes",
                "a table such as { dist = \"pareto\", mean = \"30KB\", shape = 1.2 }",
            )?)?;
            let own = read_tcp_layer(&mut r)?;
            FlowKind::ShortTcp {
                arrival_rate,
                sizes,
                tcp: Arc::new(resolve_tcp(&f.path, tcp_defaults, &own)?),
            }
        }
    };
    r.finish()?;
    if !graph.connected(&src, &dst) {
        return Err(f.error(format!(
            "{src} and {dst} are not connected (hosts do not forward; only routers do)"
        )));
    }
    Ok((
        FlowSpec {
            src,
            dst,
            start,
            stop,
            start_jitter,
            kind: flow_kind,
        },
        count,
    ))
}

fn read_sizes(f: &Field) -> Res<SizeDist> {
    let mut r = f.table("a table such as { dist = \"pareto\", mean = \"30KB\", shape = 1.2 }")?;
    let dist = r
        .req("dist", "one of pareto, lognormal, constant")?
        .choice(&["pareto", "lognormal", "constant"])?;
    let sizes = match dist {
        "pareto" => {
            r.allow(&["dist", "mean", "scale", "shape"])?;
            let shape_field = r.req("shape", "a number greater than 1")?;
            let shape = shape_field.positive_number()?;
            match (r.get("mean"), r.get("scale")) {
                (Some(mean), None) => {
                    if shape <= 1.0 {
                        return Err(shape_field.out_of_range(
                            "greater than 1 when mean is given (the mean is infinite otherwise)",
                        ));
                    }
                    let mean = mean.positive_size()? as f64;
                    SizeDist::Pareto {
                        scale: mean * (shape - 1.0) / shape,
                        shape,
                    }
                }
                (None, Some(scale)) => SizeDist::Pareto {
                    scale: scale.positive_size()? as f64,
                    shape,
                },
                (Some(_), Some(_)) => return Err(f.error("give either mean or scale, not both")),
                (None, None) => {
                    return Err(f.error(
                        "missing mean or scale; pareto needs one of them, e.g. \
                         { dist = \"pareto\", mean = \"30KB\", shape = 1.2 }",
                    ))
                }
            }
        }
        "lognormal" => {
            r.allow(&["dist", "median", "mu", "sigma"])?;
            let sigma_field = r.req("sigma", "a number >= 0 such as 1.0")?;
            let sigma = sigma_field.number()?;
            if sigma < 0.0 {
                return Err(sigma_field.out_of_range("at least 0"));
            }
            let mu = match (r.get("median"), r.get("mu")) {
                (Some(median), None) => libm::log(median.positive_size()? as f64),
                (None, Some(mu)) => mu.number()?,
                (Some(_), Some(_)) => return Err(f.error("give either median or mu, not both")),
                (None, None) => {
                    return Err(f.error(
                        "missing median or mu; lognormal needs one of them, e.g. \
                         { dist = \"lognormal\", median = \"10KB\", sigma = 1.0 }",
                    ))
                }
            };
            SizeDist::Lognormal { mu, sigma }
        }
        _ => {
            r.allow(&["dist", "size"])?;
            SizeDist::Constant {
                bytes: r.req("size", SIZE_SHORT)?.positive_size()?,
            }
        }
    };
    r.finish()?;
    Ok(sizes)
}

/// Who is linked to whom, to check that flows have a path through routers.
///
/// Built once per scenario: the routers are labelled with their connected component over
/// router-to-router links (one breadth-first pass, O(nodes + links)). A path from `src` to
/// `dst` whose intermediate nodes are all routers exists exactly when the two are linked
/// directly or a router next to `src` and a router next to `dst` share a component, so each
/// flow costs the degrees of its two hosts, not a search of the network (a search per flow
/// was flows × nodes: 100,000 flows over a 1,000-node network took minutes, issue 11).
struct Graph<'n> {
    neighbours: IndexMap<&'n str, Vec<&'n str>>,
    /// The component of each router, by name.
    component: HashMap<&'n str, u32>,
}

impl<'n> Graph<'n> {
    fn new(nodes: &'n IndexMap<String, NodeSpec>, links: &'n IndexMap<String, LinkSpec>) -> Self {
        let mut neighbours: IndexMap<&str, Vec<&str>> = IndexMap::new();
        for link in links.values() {
            neighbours.entry(&link.a).or_default().push(&link.b);
            neighbours.entry(&link.b).or_default().push(&link.a);
        }
        let is_router = |n: &str| nodes.get(n).is_some_and(|s| s.kind == NodeKind::Router);
        let mut component: HashMap<&str, u32> = HashMap::new();
        let mut queue: VecDeque<&str> = VecDeque::new();
        let mut next_id = 0u32;
        for (name, spec) in nodes {
            if spec.kind != NodeKind::Router || component.contains_key(name.as_str()) {
                continue;
            }
            component.insert(name, next_id);
            queue.push_back(name);
            while let Some(at) = queue.pop_front() {
                for &next in neighbours.get(at).into_iter().flatten() {
                    if is_router(next) && !component.contains_key(next) {
                        component.insert(next, next_id);
                        queue.push_back(next);
                    }
                }
            }
            next_id += 1;
        }
        Graph {
            neighbours,
            component,
        }
    }

    /// Whether a path leads from `src` to `dst` through routers only.
    fn connected(&self, src: &str, dst: &str) -> bool {
        let around = |n: &str| self.neighbours.get(n).map_or(&[][..], |v| v.as_slice());
        if around(src).contains(&dst) {
            return true;
        }
        let near_src: HashSet<u32> = around(src)
            .iter()
            .filter_map(|r| self.component.get(r).copied())
            .collect();
        around(dst)
            .iter()
            .filter_map(|r| self.component.get(r))
            .any(|c| near_src.contains(c))
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::*;

    /// `stop` is a time since the run began, as in an ns-2 script, and as the engine uses it
    /// (it hands `FlowSpec::stop` to `TcpSenderConfig::stop` unchanged). docs/scenario.md once
    /// called it a duration after `start`, which would make this flow stop at 30 s.
    #[test]
    fn a_flow_that_starts_at_10s_and_stops_at_20s_stops_at_20s_not_30s() {
        let s = spec(MINIMAL, &["flows.f1.start=10s", "flows.f1.stop=20s"]);
        let f1 = &s.flows["f1"];
        assert_eq!(f1.start, SimTime::from_secs(10));
        assert_eq!(f1.stop, Some(SimTime::from_secs(20)));
        // Read as a duration after start, 5 s would be a valid stop at 15 s; it is a time
        // before the start, so an error.
        assert_eq!(
            message(MINIMAL, &["flows.f1.start=10s", "flows.f1.stop=5s"]),
            "flows.f1.stop: 5s is not after start (10s)"
        );
    }

    #[test]
    fn a_count_of_three_makes_three_flows_named_by_their_number_in_file_order() {
        let text = format!(
            "{MINIMAL}[flows.udp]\ntype = \"cbr\"\nsrc = \"h1\"\ndst = \"h2\"\nrate = \"1Mbps\"\n"
        );
        let s = spec(&text, &["flows.f1.count=3", "flows.f1.start=2s"]);
        let names: Vec<&str> = s.flows.keys().map(String::as_str).collect();
        assert_eq!(names, ["f1#1", "f1#2", "f1#3", "udp"]);
        for copy in ["f1#1", "f1#2", "f1#3"] {
            assert_eq!(s.flows[copy].start, SimTime::from_secs(2));
            assert_eq!(s.flows[copy].dst, "h2");
        }
    }

    #[test]
    fn copies_past_the_memory_limit_are_refused_before_they_are_made_naming_the_count() {
        // Campaign 11, issue 32: a million copies under a tight limit ended in an abort.
        use crate::sim::CONFIGURED_FLOW_BYTES;
        let per = CONFIGURED_FLOW_BYTES;
        // 400 copies fit in 1 MiB only if a flow takes under 2,621 B; it takes more.
        assert!(per > (1 << 20) / 400 && per < (1 << 20) / 300, "{per}");
        let m = message(MINIMAL, &["flows.f1.count=400", "limits.max_memory=1MiB"]);
        assert_eq!(
            m,
            format!(
                "flows.f1.count: 400 flows take at least 1 MiB ({per} B each: the spec, the \
                 endpoints and a row of the flows table), more than limits.max_memory (1 MiB); \
                 use fewer flows or raise the limit"
            )
        );
        assert_eq!(
            spec(MINIMAL, &["flows.f1.count=300", "limits.max_memory=1MiB"])
                .flows
                .len(),
            300
        );
        // Below a MiB the sizes are in bytes, not "0 MiB" (campaign 13).
        assert_eq!(
            message(MINIMAL, &["limits.max_memory=1KB"]),
            format!(
                "flows: 1 flow takes at least {per} B ({per} B each: the spec, the endpoints and \
                 a row of the flows table), more than limits.max_memory (1000 B); use fewer \
                 flows or raise the limit"
            )
        );
        // The machine's address-space limit, where lower, in the same words.
        let room = FlowRoom {
            bytes: 1 << 20,
            what: "the process's address-space limit (1 MiB, ulimit -v)".into(),
        };
        let e = room.check(1_000_000, "flows.f.count").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("flows.f.count: 1000000 flows take at least"),
            "{e}"
        );
        assert!(
            e.to_string()
                .contains("address-space limit (1 MiB, ulimit -v)"),
            "{e}"
        );
        assert!(room.check(300, "flows.f.count").is_ok());
    }

    #[test]
    fn a_count_is_refused_on_a_short_tcp_generator_at_zero_and_where_a_copy_takes_a_name() {
        assert_eq!(
            message(MINIMAL, &["flows.f1.count=0"]),
            "flows.f1.count: 0 is out of range; must be from 1 to 1000000"
        );
        let short = format!(
            "{MINIMAL}[flows.web]\ntype = \"short_tcp\"\nsrc = \"h1\"\ndst = \"h2\"\n\
             arrival_rate = 1.0\nsizes = {{ dist = \"constant\", size = \"1KB\" }}\ncount = 2\n"
        );
        assert!(message(&short, &[]).starts_with("flows.web.count: a short_tcp generator"));
        // A later flow whose name a copy took, and a copy whose name a later flow has.
        let clash =
            format!("{MINIMAL}[flows.\"f1#2\"]\ntype = \"tcp\"\nsrc = \"h1\"\ndst = \"h2\"\n");
        assert_eq!(
            message(&clash, &["flows.f1.count=2"]),
            "flows.f1.count: its copy \"f1#2\" would have the name of another flow"
        );
    }

    #[test]
    fn short_tcp_size_distributions_convert_to_their_parameters() {
        let base = "flows.f1={type=\"short_tcp\", src=\"h1\", dst=\"h2\", arrival_rate=5, sizes=";
        let sizes = |dist: &str| {
            let s = spec(MINIMAL, &[&format!("{base}{dist}}}")]);
            match &s.flows["f1"].kind {
                FlowKind::ShortTcp {
                    sizes,
                    arrival_rate,
                    ..
                } => {
                    assert_eq!(*arrival_rate, 5.0);
                    sizes.clone()
                }
                other => panic!("{other:?}"),
            }
        };
        assert_eq!(
            sizes("{dist=\"pareto\", scale=\"10KB\", shape=1.5}"),
            SizeDist::Pareto {
                scale: 10_000.0,
                shape: 1.5
            }
        );
        assert_eq!(
            sizes("{dist=\"lognormal\", median=\"10KB\", sigma=1.0}"),
            SizeDist::Lognormal {
                mu: libm::log(10_000.0),
                sigma: 1.0
            }
        );
        assert_eq!(
            sizes("{dist=\"lognormal\", mu=9.2, sigma=0.5}"),
            SizeDist::Lognormal {
                mu: 9.2,
                sigma: 0.5
            }
        );
        assert_eq!(
            sizes("{dist=\"constant\", size=\"100KB\"}"),
            SizeDist::Constant { bytes: 100_000 }
        );
    }

    #[test]
    fn flows_connect_through_routers_but_not_through_hosts() {
        let mut g = String::from(MINIMAL);
        g.push_str("[links.back]\na = \"h2\"\nb = \"h3\"\nrate = \"1Mbps\"\ndelay = \"1ms\"\n");
        let text = g.replace("r1 = \"router\"", "r1 = \"router\"\nh3 = \"host\"");
        assert!(load(&text, &[], None).is_ok());
        assert_eq!(
            message(&text, &["flows.f1.dst=h3"]),
            "flows.f1: h1 and h3 are not connected (hosts do not forward; only routers do)"
        );
        // Turning h2 into a router opens the path.
        let s = spec(&text, &["nodes.h2=router", "flows.f1.dst=h3"]);
        assert_eq!(s.flows["f1"].dst, "h3");
    }

    #[test]
    fn hosts_behind_two_separate_router_chains_are_not_connected_until_a_link_joins_them() {
        // h1 - r1 - r2 - h2 and h3 - r3 - r4 - h4: two islands of routers.
        let link = |name: &str, a: &str, b: &str| {
            format!("[links.{name}]\na = \"{a}\"\nb = \"{b}\"\nrate = \"1Mbps\"\ndelay = \"1ms\"\n")
        };
        let mut text = String::from(
            "duration = \"1s\"\n[nodes]\nh1 = \"host\"\nh2 = \"host\"\nh3 = \"host\"\n\
             h4 = \"host\"\nr1 = \"router\"\nr2 = \"router\"\nr3 = \"router\"\nr4 = \"router\"\n",
        );
        for (name, a, b) in [
            ("a", "h1", "r1"),
            ("b", "r1", "r2"),
            ("c", "r2", "h2"),
            ("d", "h3", "r3"),
            ("e", "r3", "r4"),
            ("f", "r4", "h4"),
        ] {
            text.push_str(&link(name, a, b));
        }
        text.push_str("[flows.f1]\ntype = \"tcp\"\nsrc = \"h1\"\ndst = \"h4\"\n");
        assert_eq!(
            message(&text, &[]),
            "flows.f1: h1 and h4 are not connected (hosts do not forward; only routers do)"
        );
        // A router-to-router link joins the islands; a direct host-to-host link is a path too.
        let joined = format!("{text}{}", link("g", "r2", "r3"));
        assert_eq!(spec(&joined, &[]).flows["f1"].dst, "h4");
        let direct = format!("{text}{}", link("g", "h1", "h4"));
        assert_eq!(spec(&direct, &[]).flows["f1"].dst, "h4");
        // Hosts between the islands still forward nothing.
        let via_host = format!("{text}{}{}", link("g", "r2", "h3"), link("h", "r2", "h2"));
        assert!(message(&via_host, &[]).contains("are not connected"));
    }
}
