// SPDX-License-Identifier: MIT
//! `[atm]` of `docs/scenario.md`: which links carry cells, the ABR parameters of the VCs (TM 4.0
//! §5.10.2), the ports' buffers, feedback and frame discard, and `[atm.cbr.NAME]` on-off CBR
//! cell sources. Every default is TM 4.0's or stated in `AtmSpec::tm4_defaults`.

use indexmap::IndexMap;
use toml::Value;

use super::jitter::{read_start_jitter, START_JITTER};
use super::reader::{
    check_name, error, join, opt, read_fraction_above_zero, Field, Res, NODE_NAME, RATE_SHORT,
};
use crate::atm::{AtmSpec, CbrSpec, EricaParams, EricaPlusParams, Feedback};
use crate::scenario::spec::{LinkSpec, LossSpec, NodeSpec};
use crate::time::{Rate, SimDuration, SimTime};

const ATM_KEYS: &[&str] = &[
    "links",
    "pcr",
    "mcr",
    "icr",
    "tcr",
    "nrm",
    "mrm",
    "trm",
    "rif",
    "rdf",
    "cdf",
    "adtf",
    "tbe",
    "source_buffer",
    "out_of_rate_brm",
    "cbr_buffer",
    "abr_buffer",
    "feedback",
    "epd_threshold",
    "ppd",
    "cbr",
];
const CBR_KEYS: &[&str] = &[
    "from",
    "to",
    "rate",
    "count",
    "on",
    "off",
    "exponential",
    "start",
    "stop",
    START_JITTER,
];
const FEEDBACK_TYPES: &[&str] = &["erica", "erica_plus", "efci", "none"];

/// Where the raw `[links.NAME]` table (or one of its direction tables) sets `queue`, if it does:
/// the parsed link cannot tell an explicit DropTail from the default one.
fn queue_key_of(raw_links: Option<&Value>, name: &str) -> Option<String> {
    let link = raw_links?.get(name)?.as_table()?;
    if link.contains_key("queue") {
        return Some(format!("links.{name}.queue"));
    }
    ["a_to_b", "b_to_a"].into_iter().find_map(|d| {
        let dir = link.get(d)?.as_table()?;
        dir.contains_key("queue")
            .then(|| format!("links.{name}.{d}.queue"))
    })
}

pub(super) fn read_atm(
    f: &Field,
    nodes: &IndexMap<String, NodeSpec>,
    links: &IndexMap<String, LinkSpec>,
    raw_links: Option<&Value>,
    start_jitter: SimDuration,
) -> Res<AtmSpec> {
    let mut r = f.table("a table such as { links = [\"l1\", \"l2\"] }")?;
    r.allow(ATM_KEYS)?;
    let lf = r.req("links", "an array of link names such as [\"l1\", \"l2\"]")?;
    let Value::Array(items) = lf.value else {
        return Err(lf.expected("an array of link names such as [\"l1\", \"l2\"]"));
    };
    if items.is_empty() {
        return Err(lf.error("empty; name at least one link that carries cells"));
    }
    let mut names: Vec<String> = Vec::new();
    for (i, v) in items.iter().enumerate() {
        let item = Field {
            value: v,
            path: format!("{}[{i}]", lf.path),
        };
        let name = item.link(links)?;
        if names.contains(&name) {
            return Err(item.error(format!("link {name:?} is listed twice")));
        }
        // Cells cross an ATM link without its loss model (docs/atm.md): a key that would do
        // nothing is refused.
        let l = &links[&name];
        if l.a_to_b.loss != LossSpec::None || l.b_to_a.loss != LossSpec::None {
            return Err(error(
                &format!("links.{name}.loss"),
                format!(
                    "link {name:?} is listed in atm.links, and ATM links apply no loss model \
                     (cells are lost only at full buffers and links going down); remove loss \
                     or take the link out of atm.links"
                ),
            ));
        }
        // An ATM port queues cells by class in its own buffers (`cbr_buffer`, `abr_buffer`),
        // never in the link's IP queue: a `queue` there would do nothing.
        if let Some(path) = queue_key_of(raw_links, &name) {
            return Err(error(
                &path,
                format!(
                    "link {name:?} is listed in atm.links, whose ports queue cells in \
                     atm.cbr_buffer and atm.abr_buffer, not in the link's queue; remove queue \
                     or take the link out of atm.links"
                ),
            ));
        }
        names.push(name);
    }
    let mut a = AtmSpec::tm4_defaults(names);
    a.pcr = opt(&mut r, "pcr", positive_rate)?;
    if let Some(x) = opt(&mut r, "mcr", |f| f.rate())? {
        a.mcr = x;
    }
    a.icr = opt(&mut r, "icr", positive_rate)?;
    if let Some(x) = opt(&mut r, "tcr", positive_rate)? {
        a.tcr = x;
    }
    if let Some(x) = opt(&mut r, "nrm", |f| f.u32_in(2, 256))? {
        a.nrm = x;
    }
    if let Some(x) = opt(&mut r, "mrm", |f| f.u32_in(1, 256))? {
        a.mrm = x;
    }
    if let Some(x) = opt(&mut r, "trm", |f| f.positive_duration())? {
        a.trm = x;
    }
    if let Some(x) = opt(&mut r, "rif", read_fraction_above_zero)? {
        a.rif = x;
    }
    if let Some(x) = opt(&mut r, "rdf", read_fraction_above_zero)? {
        a.rdf = x;
    }
    if let Some(x) = opt(&mut r, "cdf", |f| f.probability())? {
        a.cdf = x;
    }
    if let Some(x) = opt(&mut r, "adtf", |f| f.positive_duration())? {
        a.adtf = x;
    }
    if let Some(x) = opt(&mut r, "tbe", |f| f.int_in(1, 16_777_215))? {
        a.tbe = x as u64;
    }
    if let Some(x) = opt(&mut r, "source_buffer", |f| f.int_in(1, i64::MAX))? {
        a.source_buffer = x as u64;
    }
    if let Some(x) = opt(&mut r, "out_of_rate_brm", |f| f.boolean())? {
        a.out_of_rate_brm = x;
    }
    if let Some(x) = opt(&mut r, "cbr_buffer", |f| f.u32_in(1, u32::MAX))? {
        a.port.cbr_buffer = x;
    }
    if let Some(x) = opt(&mut r, "abr_buffer", |f| f.u32_in(1, u32::MAX))? {
        a.port.abr_buffer = x;
    }
    if let Some(x) = opt(&mut r, "feedback", read_feedback)? {
        a.port.feedback = x;
    }
    if let Some(f) = r.get("epd_threshold") {
        let th = f.u32_in(1, u32::MAX)?;
        if th >= a.port.abr_buffer {
            return Err(f.error(format!(
                "{th} is not below abr_buffer ({}); EPD's threshold is under the buffer size",
                a.port.abr_buffer
            )));
        }
        a.port.epd_threshold = Some(th);
    }
    if let Some(x) = opt(&mut r, "ppd", |f| f.boolean())? {
        a.port.ppd = x;
    }
    if let (Some(pcr), mcr) = (a.pcr, a.mcr) {
        if mcr > pcr {
            return Err(error(
                &join(&f.path, "mcr"),
                format!(
                    "{} bit/s is above pcr ({} bit/s)",
                    mcr.bits_per_sec(),
                    pcr.bits_per_sec()
                ),
            ));
        }
    }
    if let Some(cf) = r.get("cbr") {
        let Value::Table(t) = cf.value else {
            return Err(cf.expected("a table of CBR sources such as [atm.cbr.bg]"));
        };
        for (name, v) in t {
            check_name(&cf.path, name)?;
            let one = Field {
                value: v,
                path: join(&cf.path, name),
            };
            a.cbr.push(read_cbr(&one, name, nodes, start_jitter)?);
        }
    }
    r.finish()?;
    Ok(a)
}

fn positive_rate(f: &Field) -> Res<Rate> {
    let x = f.rate()?;
    if x.bits_per_sec() == 0 {
        return Err(f.out_of_range("greater than 0"));
    }
    Ok(x)
}

fn read_feedback(f: &Field) -> Res<Feedback> {
    if let Value::String(_) = f.value {
        return match f.choice(FEEDBACK_TYPES)? {
            "erica" => Ok(Feedback::Erica(EricaParams {
                target_utilization: 0.9,
                interval: SimDuration::from_millis(1),
                plus: None,
            })),
            "erica_plus" => Ok(Feedback::Erica(EricaParams {
                target_utilization: 1.0,
                interval: SimDuration::from_millis(1),
                plus: Some(EricaPlusParams::DEFAULT),
            })),
            "none" => Ok(Feedback::None),
            _ => Err(f.error("efci needs a threshold: { type = \"efci\", threshold = 500 }")),
        };
    }
    let mut r = f.table("a table such as { type = \"erica\", target_utilization = 0.9 }")?;
    let kind = r
        .req("type", "one of erica, efci, none")?
        .choice(FEEDBACK_TYPES)?;
    let fb = match kind {
        "erica" => {
            r.allow(&["type", "target_utilization", "interval"])?;
            let target_utilization =
                opt(&mut r, "target_utilization", read_fraction_above_zero)?.unwrap_or(0.9);
            let interval = opt(&mut r, "interval", |f| f.positive_duration())?
                .unwrap_or(SimDuration::from_millis(1));
            Feedback::Erica(EricaParams {
                target_utilization,
                interval,
                plus: None,
            })
        }
        "erica_plus" => {
            // ERICA+ steers by the queue's delay instead of a target utilization: the key
            // would do nothing here, so it is refused with the rest.
            r.allow(&[
                "type",
                "interval",
                "target_delay",
                "a",
                "b",
                "qdlf",
                "delta",
            ])?;
            let d = EricaPlusParams::DEFAULT;
            let interval = opt(&mut r, "interval", |f| f.positive_duration())?
                .unwrap_or(SimDuration::from_millis(1));
            let above_one = |f: &Field| -> Res<f64> {
                let x = f.number()?;
                if !(x > 1.0 && x.is_finite()) {
                    return Err(f.out_of_range("greater than 1, such as 1.15"));
                }
                Ok(x)
            };
            let plus = EricaPlusParams {
                target_delay: opt(&mut r, "target_delay", |f| f.positive_duration())?
                    .unwrap_or(d.target_delay),
                a: opt(&mut r, "a", above_one)?.unwrap_or(d.a),
                b: opt(&mut r, "b", above_one)?.unwrap_or(d.b),
                qdlf: opt(&mut r, "qdlf", read_fraction_above_zero)?.unwrap_or(d.qdlf),
                delta: opt(&mut r, "delta", |f| f.probability())?.unwrap_or(d.delta),
            };
            Feedback::Erica(EricaParams {
                target_utilization: 1.0,
                interval,
                plus: Some(plus),
            })
        }
        "efci" => {
            r.allow(&["type", "threshold"])?;
            let threshold = r
                .req("threshold", "cells in the ABR queue from which EFCI is set")?
                .u32_in(1, u32::MAX)?;
            Feedback::Efci { threshold }
        }
        _ => {
            r.allow(&["type"])?;
            Feedback::None
        }
    };
    r.finish()?;
    Ok(fb)
}

fn read_cbr(
    f: &Field,
    name: &str,
    nodes: &IndexMap<String, NodeSpec>,
    start_jitter: SimDuration,
) -> Res<CbrSpec> {
    let mut r = f.table("a table such as { from = \"c1\", to = \"d1\", rate = \"10Mbps\" }")?;
    r.allow(CBR_KEYS)?;
    let from = r.req("from", NODE_NAME)?.node(nodes)?;
    let to = r.req("to", NODE_NAME)?.node(nodes)?;
    if from == to {
        return Err(f.error(format!("from and to are both {from:?}")));
    }
    let rate = positive_rate(&r.req("rate", RATE_SHORT)?)?;
    let count = opt(&mut r, "count", |f| f.u32_in(1, 10_000))?.unwrap_or(1);
    // Paper 000's 84 ms on / 84 ms off are its values, not a standard's; a scenario says them.
    let on = r
        .req("on", "a duration such as \"84ms\"")?
        .positive_duration()?;
    let off = r
        .req("off", "a duration such as \"84ms\"")?
        .positive_duration()?;
    let exponential = opt(&mut r, "exponential", |f| f.boolean())?.unwrap_or(false);
    let start = SimTime::ZERO + opt(&mut r, "start", |f| f.duration())?.unwrap_or_default();
    let stop = opt(&mut r, "stop", |f| f.duration())?.map(|d| SimTime::ZERO + d);
    if let Some(s) = stop {
        if s <= start {
            return Err(error(
                &join(&f.path, "stop"),
                "must be after start".to_string(),
            ));
        }
    }
    let start_jitter = read_start_jitter(&mut r, start_jitter, start, stop)?;
    r.finish()?;
    Ok(CbrSpec {
        name: name.to_string(),
        from,
        to,
        rate,
        count,
        on,
        off,
        exponential,
        start,
        stop,
        start_jitter,
    })
}
