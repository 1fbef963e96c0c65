// SPDX-License-Identifier: MIT
//! `[links.NAME]` of `docs/scenario.md`, with its "Queues" and "Loss models": a full-duplex
//! link's rate, delay and MTU, then per direction (`a_to_b`, `b_to_a`) the queue discipline
//! (DropTail, RED, an XCP port) and the loss model (uniform, bit errors, Gilbert-Elliott).
//!
//! The link-level keys give both directions; a direction table overrides them for one. A link's
//! `loss` may name the one `direction` it applies to.

use indexmap::IndexMap;
use toml::Value;

use super::reader::{
    check_entry_is_one, check_name, join, opt, read_fraction_above_zero, Field, Res,
    DURATION_SHORT, NODE_NAME, RATE_SHORT,
};
use crate::scenario::spec::{DirSpec, LinkSpec, LossSpec, NodeSpec, QueueLimit, QueueSpec};

const LINK_KEYS: &[&str] = &[
    "a", "b", "rate", "delay", "mtu", "queue", "loss", "a_to_b", "b_to_a",
];
const DIR_KEYS: &[&str] = &["rate", "delay", "queue", "loss"];
const DEFAULT_MTU: u32 = 1500;
pub(super) const DEFAULT_QUEUE_PACKETS: u64 = 100;

/// Which directions a link-level loss model applies to.
#[derive(Clone, Copy, PartialEq)]
enum Direction {
    Both,
    AToB,
    BToA,
}

pub(super) fn read_links(
    f: &Field,
    nodes: &IndexMap<String, NodeSpec>,
) -> Res<IndexMap<String, LinkSpec>> {
    let Value::Table(table) = f.value else {
        return Err(f.expected("a table of links such as [links.bottleneck]"));
    };
    let mut links = IndexMap::new();
    for (name, value) in table {
        check_name(&f.path, name)?;
        check_entry_is_one("links", table, name)?;
        let link = Field {
            value,
            path: join(&f.path, name),
        };
        links.insert(name.clone(), read_link(&link, nodes)?);
    }
    Ok(links)
}

fn read_link(f: &Field, nodes: &IndexMap<String, NodeSpec>) -> Res<LinkSpec> {
    let mut r =
        f.table("a table such as { a = \"h1\", b = \"r1\", rate = \"10Mbps\", delay = \"10ms\" }")?;
    r.allow(LINK_KEYS)?;
    let a = r.req("a", NODE_NAME)?.node(nodes)?;
    let b = r.req("b", NODE_NAME)?.node(nodes)?;
    if a == b {
        return Err(f.error(format!(
            "a and b are both {a:?}; a link joins two different nodes"
        )));
    }
    let rate = r.req("rate", RATE_SHORT)?.rate()?;
    let delay = r.req("delay", DURATION_SHORT)?.duration()?;
    let mtu = opt(&mut r, "mtu", |f| f.size_u32(68))?.unwrap_or(DEFAULT_MTU);
    let queue = opt(&mut r, "queue", |f| read_queue(f, mtu))?.unwrap_or(QueueSpec::DropTail {
        limit: QueueLimit::Packets(DEFAULT_QUEUE_PACKETS),
    });
    let (loss, direction) =
        opt(&mut r, "loss", |f| read_loss(f, true))?.unwrap_or((LossSpec::None, Direction::Both));
    let dir = |covered: bool| DirSpec {
        rate,
        delay,
        queue: queue.clone(),
        loss: if covered {
            loss.clone()
        } else {
            LossSpec::None
        },
    };
    let mut a_to_b = dir(direction != Direction::BToA);
    let mut b_to_a = dir(direction != Direction::AToB);
    if let Some(f) = r.get("a_to_b") {
        read_direction(&f, &mut a_to_b, mtu)?;
    }
    if let Some(f) = r.get("b_to_a") {
        read_direction(&f, &mut b_to_a, mtu)?;
    }
    r.finish()?;
    super::diffserv::check_rates(&a_to_b.queue, a_to_b.rate, &format!("{}.queue", f.path))?;
    super::diffserv::check_rates(&b_to_a.queue, b_to_a.rate, &format!("{}.queue", f.path))?;
    Ok(LinkSpec {
        a,
        b,
        rate,
        delay,
        mtu,
        a_to_b,
        b_to_a,
    })
}

/// Applies a per-direction table (`[links.X.a_to_b]`) over the link-level values, on a link
/// whose MTU is `mtu`.
fn read_direction(f: &Field, dir: &mut DirSpec, mtu: u32) -> Res<()> {
    let mut r = f.table("a table of rate, delay, queue or loss")?;
    r.allow(DIR_KEYS)?;
    if let Some(rate) = opt(&mut r, "rate", |f| f.rate())? {
        dir.rate = rate;
    }
    if let Some(delay) = opt(&mut r, "delay", |f| f.duration())? {
        dir.delay = delay;
    }
    if let Some(queue) = opt(&mut r, "queue", |f| read_queue(f, mtu))? {
        dir.queue = queue;
    }
    if let Some((loss, _)) = opt(&mut r, "loss", |f| read_loss(f, false))? {
        dir.loss = loss;
    }
    r.finish()
}

// ---------------------------------------------------------------------------------------------
// Queues

const QUEUE_TYPES: &[&str] = &[
    "droptail",
    "red",
    "threshold",
    "xcp",
    "priority",
    "wfq",
    "drr",
    "cbwfq",
    "codel",
    "fq_codel",
    "pie",
    "dualpi2",
    "tbf",
];
const RED_KEYS: &[&str] = &[
    "type",
    "limit",
    "min_th",
    "max_th",
    "max_p",
    "w_q",
    "gentle",
    "ecn",
    "mean_packet_size",
];

/// A queue table on a link whose MTU is `mtu` (the AQMs' one-packet sizes default to it).
fn read_queue(f: &Field, mtu: u32) -> Res<QueueSpec> {
    let mut r = f.table("a table such as { type = \"droptail\", limit = 100 }")?;
    let kind = r
        .req(
            "type",
            "one of droptail, red, threshold, xcp, priority, wfq, drr, cbwfq, codel, fq_codel, \
             pie, dualpi2, tbf",
        )?
        .choice(QUEUE_TYPES)?;
    if super::diffserv::SCHEDULER_TYPES.contains(&kind) {
        let q = super::diffserv::read_scheduler(&mut r, kind)?;
        r.finish()?;
        return Ok(q);
    }
    if super::aqm::AQM_TYPES.contains(&kind) {
        let q = super::aqm::read_aqm(&mut r, kind, mtu, read_queue_limit)?;
        r.finish()?;
        return Ok(q);
    }
    match kind {
        "droptail" => r.allow(&["type", "limit"])?,
        "threshold" => r.allow(&["type", "limit", "k"])?,
        "xcp" => r.allow(&["type", "limit", "alpha", "beta", "gamma"])?,
        _ => r.allow(RED_KEYS)?,
    }
    let limit = opt(&mut r, "limit", read_queue_limit)?
        .unwrap_or(QueueLimit::Packets(DEFAULT_QUEUE_PACKETS));
    if kind == "droptail" {
        r.finish()?;
        return Ok(QueueSpec::DropTail { limit });
    }
    if kind == "threshold" {
        // RFC 8257 §3.1 gives no default K (it depends on the link's BDP, §4's K > C·RTT/7):
        // the key is required.
        let f = r.req(
            "k",
            "the marking threshold K (RFC 8257 §3.1), in the unit of limit",
        )?;
        let k = read_threshold(&f, limit)?;
        r.finish()?;
        let (capacity, unit) = match limit {
            QueueLimit::Packets(n) => (n, "packets"),
            QueueLimit::Bytes(n) => (n, "bytes"),
        };
        if !(k >= 1.0 && k.fract() == 0.0 && k <= capacity as f64) {
            return Err(f.error(format!(
                "k must be a whole number from 1 to limit ({capacity} {unit}); got {k}"
            )));
        }
        return Ok(QueueSpec::Threshold { limit, k: k as u64 });
    }
    if kind == "xcp" {
        // Defaults: Katabi, Handley, Rohrs, SIGCOMM 2002, §3.4 (alpha, beta) and §3.5 (gamma).
        let alpha = opt(&mut r, "alpha", read_fraction_above_zero)?.unwrap_or(0.4);
        let beta = opt(&mut r, "beta", read_fraction_above_zero)?.unwrap_or(0.226);
        let gamma = opt(&mut r, "gamma", |f| f.probability())?.unwrap_or(0.1);
        r.finish()?;
        return Ok(QueueSpec::Xcp {
            limit,
            alpha,
            beta,
            gamma,
        });
    }
    let mean_packet_size = opt(&mut r, "mean_packet_size", |f| f.size_u32(1))?.unwrap_or(1000);
    // Default thresholds are ns-2's 5 and 15 packets (of mean_packet_size for a byte limit).
    let (default_min, default_max, capacity, unit) = match limit {
        QueueLimit::Packets(n) => (5.0, 15.0, n as f64, "packets"),
        QueueLimit::Bytes(n) => (
            5.0 * mean_packet_size as f64,
            15.0 * mean_packet_size as f64,
            n as f64,
            "bytes",
        ),
    };
    let min_th = opt(&mut r, "min_th", |f| read_threshold(f, limit))?.unwrap_or(default_min);
    let max_th = opt(&mut r, "max_th", |f| read_threshold(f, limit))?.unwrap_or(default_max);
    let max_p = opt(&mut r, "max_p", read_fraction_above_zero)?.unwrap_or(0.1);
    let w_q = opt(&mut r, "w_q", read_fraction_above_zero)?.unwrap_or(0.002);
    let gentle = opt(&mut r, "gentle", |f| f.boolean())?.unwrap_or(true);
    let ecn = opt(&mut r, "ecn", |f| f.boolean())?.unwrap_or(false);
    r.finish()?;
    if !(0.0 <= min_th && min_th < max_th && max_th <= capacity) {
        return Err(f.error(format!(
            "RED needs 0 <= min_th < max_th <= limit; got min_th {min_th}, max_th {max_th}, \
             limit {capacity} ({unit})"
        )));
    }
    Ok(QueueSpec::Red {
        limit,
        min_th,
        max_th,
        max_p,
        w_q,
        gentle,
        ecn,
        mean_packet_size,
    })
}

fn read_queue_limit(f: &Field) -> Res<QueueLimit> {
    match f.value {
        Value::Integer(_) => Ok(QueueLimit::Packets(f.int_in(1, i64::MAX)? as u64)),
        Value::String(s) => {
            let t = s.trim();
            if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
                return Err(f.error(format!(
                    "{s:?} has no unit; write {t} for packets or \"{t}B\" for bytes"
                )));
            }
            Ok(QueueLimit::Bytes(f.positive_size()?))
        }
        _ => Err(f.expected("a number of packets such as 100 or a size such as \"64KB\"")),
    }
}

fn read_threshold(f: &Field, limit: QueueLimit) -> Res<f64> {
    match (limit, f.value) {
        (QueueLimit::Packets(_), Value::Integer(_) | Value::Float(_)) => f.number(),
        (QueueLimit::Packets(_), _) => {
            Err(f.expected("a number of packets (the limit is in packets)"))
        }
        (QueueLimit::Bytes(_), Value::String(_)) => Ok(f.size()? as f64),
        (QueueLimit::Bytes(_), _) => {
            Err(f.expected("a size such as \"15KB\" (the limit is in bytes)"))
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Loss models

const LOSS_TYPES: &[&str] = &["none", "uniform", "ber", "gilbert_elliott"];

fn read_loss(f: &Field, allow_direction: bool) -> Res<(LossSpec, Direction)> {
    let mut r = f.table("a table such as { type = \"uniform\", rate = 0.01 }")?;
    let kind = r
        .req("type", "one of none, uniform, ber, gilbert_elliott")?
        .choice(LOSS_TYPES)?;
    let mut allowed: Vec<&'static str> = match kind {
        "none" => vec!["type"],
        "uniform" => vec!["type", "rate"],
        "ber" => vec!["type", "ber"],
        _ => vec![
            "type",
            "p_good_to_bad",
            "p_bad_to_good",
            "loss_good",
            "loss_bad",
        ],
    };
    if allow_direction {
        allowed.push("direction");
    }
    r.allow(&allowed)?;
    const PROBABILITY: &str = "a probability (a number from 0 to 1)";
    let loss = match kind {
        "none" => LossSpec::None,
        "uniform" => LossSpec::Uniform {
            rate: r.req("rate", PROBABILITY)?.probability()?,
        },
        "ber" => LossSpec::BitError {
            ber: r.req("ber", PROBABILITY)?.probability()?,
        },
        _ => LossSpec::GilbertElliott {
            p_good_to_bad: r.req("p_good_to_bad", PROBABILITY)?.probability()?,
            p_bad_to_good: r.req("p_bad_to_good", PROBABILITY)?.probability()?,
            loss_good: opt(&mut r, "loss_good", |f| f.probability())?.unwrap_or(0.0),
            loss_bad: opt(&mut r, "loss_bad", |f| f.probability())?.unwrap_or(1.0),
        },
    };
    let direction = if allow_direction {
        match opt(&mut r, "direction", |f| {
            f.choice(&["both", "a_to_b", "b_to_a"])
        })? {
            Some("a_to_b") => Direction::AToB,
            Some("b_to_a") => Direction::BToA,
            _ => Direction::Both,
        }
    } else {
        Direction::Both
    };
    r.finish()?;
    Ok((loss, direction))
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::*;

    #[test]
    fn link_loss_applies_to_the_directions_it_names_and_direction_tables_override() {
        let s = spec(
            MINIMAL,
            &[
                "links.bottleneck.loss={type=\"ber\", ber=1e-6, direction=\"b_to_a\"}",
                "links.bottleneck.queue={type=\"droptail\", limit=50}",
                "links.bottleneck.a_to_b.queue={type=\"droptail\", limit=\"30KB\"}",
            ],
        );
        let l = &s.links["bottleneck"];
        assert_eq!(l.a_to_b.loss, LossSpec::None);
        assert_eq!(l.b_to_a.loss, LossSpec::BitError { ber: 1e-6 });
        assert_eq!(
            l.a_to_b.queue,
            QueueSpec::DropTail {
                limit: QueueLimit::Bytes(30_000)
            }
        );
        assert_eq!(
            l.b_to_a.queue,
            QueueSpec::DropTail {
                limit: QueueLimit::Packets(50)
            }
        );

        let s = spec(
            MINIMAL,
            &[
                "links.bottleneck.loss={type=\"uniform\", rate=0.2}",
                "links.bottleneck.b_to_a.loss={type=\"none\"}",
            ],
        );
        let l = &s.links["bottleneck"];
        assert_eq!(l.a_to_b.loss, LossSpec::Uniform { rate: 0.2 });
        assert_eq!(l.b_to_a.loss, LossSpec::None);
    }

    #[test]
    fn red_thresholds_default_to_ns2_values_in_the_unit_of_the_limit() {
        let s = spec(MINIMAL, &["links.bottleneck.queue={type=\"red\"}"]);
        assert_eq!(
            s.links["bottleneck"].a_to_b.queue,
            QueueSpec::Red {
                limit: QueueLimit::Packets(100),
                min_th: 5.0,
                max_th: 15.0,
                max_p: 0.1,
                w_q: 0.002,
                gentle: true,
                ecn: false,
                mean_packet_size: 1000,
            }
        );
        let s = spec(
            MINIMAL,
            &["links.bottleneck.queue={type=\"red\", limit=\"100KB\", max_th=\"30KB\"}"],
        );
        let QueueSpec::Red {
            limit,
            min_th,
            max_th,
            ..
        } = s.links["bottleneck"].a_to_b.queue
        else {
            panic!("not RED");
        };
        assert_eq!(
            (limit, min_th, max_th),
            (QueueLimit::Bytes(100_000), 5_000.0, 30_000.0)
        );
    }

    #[test]
    fn a_threshold_queue_takes_k_in_the_unit_of_its_limit_and_refuses_a_k_beyond_it() {
        let s = spec(
            MINIMAL,
            &["links.bottleneck.queue={type=\"threshold\", limit=100, k=20}"],
        );
        assert_eq!(
            s.links["bottleneck"].a_to_b.queue,
            QueueSpec::Threshold {
                limit: QueueLimit::Packets(100),
                k: 20
            }
        );
        let s = spec(
            MINIMAL,
            &["links.bottleneck.queue={type=\"threshold\", limit=\"100KB\", k=\"30KB\"}"],
        );
        assert_eq!(
            s.links["bottleneck"].a_to_b.queue,
            QueueSpec::Threshold {
                limit: QueueLimit::Bytes(100_000),
                k: 30_000
            }
        );
        assert_eq!(
            message(
                MINIMAL,
                &["links.bottleneck.queue={type=\"threshold\", limit=10, k=11}"]
            ),
            "links.bottleneck.queue.k: k must be a whole number from 1 to limit (10 packets); \
             got 11"
        );
        assert_eq!(
            message(MINIMAL, &["links.bottleneck.queue={type=\"threshold\"}"]),
            "links.bottleneck.queue.k: missing; the marking threshold K (RFC 8257 §3.1), in the \
             unit of limit"
        );
    }

    #[test]
    fn a_link_mtu_below_the_ipv4_minimum_is_rejected() {
        assert_eq!(
            message(MINIMAL, &["links.access.mtu=67"]),
            "links.access.mtu: 67 is out of range; must be from 68 to 4294967295"
        );
        assert_eq!(
            spec(MINIMAL, &["links.access.mtu=\"9KB\""]).links["access"].mtu,
            9000
        );
    }
}
