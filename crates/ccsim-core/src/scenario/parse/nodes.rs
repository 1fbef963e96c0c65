// SPDX-License-Identifier: MIT
//! `[nodes]` of `docs/scenario.md`: each node's kind (host or router) and its optional hook
//! (`impair`, and the base-station agents of paper 001: `spack`, `snoop`, `itcp`). The agents'
//! defaults are their `Config::default()` in [`crate::agents`]; an `itcp` hook's relay runs two
//! TCP endpoints whose keys are read as in `tcp.rs`, from the hook's own preset.

use indexmap::IndexMap;
use toml::Value;

use super::reader::{
    check_entry_is_one, check_name, error, join, opt, Field, Reader, Res, A_TABLE,
};
use super::tcp::{read_relay_tcp_layer, resolve_tcp, TcpLayer, TCP_KEYS};
use crate::scenario::spec::{HookSpec, NodeKind, NodeSpec};
use crate::time::SimDuration;

pub(super) fn read_nodes(f: &Field) -> Res<IndexMap<String, NodeSpec>> {
    let Value::Table(table) = f.value else {
        return Err(f.expected("a table of nodes such as h1 = \"host\""));
    };
    let mut nodes = IndexMap::new();
    for (name, value) in table {
        check_name(&f.path, name)?;
        check_entry_is_one("nodes", table, name)?;
        let node = Field {
            value,
            path: join(&f.path, name),
        };
        nodes.insert(name.clone(), read_node(&node)?);
    }
    if nodes.len() < 2 {
        return Err(f.error(format!(
            "at least two nodes are needed, found {}",
            nodes.len()
        )));
    }
    Ok(nodes)
}

const NODE_KINDS: &[&str] = &["host", "router"];

fn node_kind(kind: &str) -> NodeKind {
    match kind {
        "host" => NodeKind::Host,
        _ => NodeKind::Router,
    }
}

fn read_node(f: &Field) -> Res<NodeSpec> {
    match f.value {
        Value::String(_) => Ok(NodeSpec {
            kind: node_kind(f.choice(NODE_KINDS)?),
            hook: None,
        }),
        Value::Table(_) => {
            let mut r = f.table(A_TABLE)?;
            r.allow(&["type", "hook"])?;
            let kind = node_kind(r.req("type", "one of host, router")?.choice(NODE_KINDS)?);
            let hook = opt(&mut r, "hook", read_hook)?;
            r.finish()?;
            Ok(NodeSpec { kind, hook })
        }
        _ => Err(f.expected("\"host\", \"router\" or a table such as { type = \"router\" }")),
    }
}

const HOOK_TYPES: &[&str] = &[
    "impair",
    "spack",
    "snoop",
    "itcp",
    "stripe",
    "policer",
    "classifier",
];

fn read_hook(f: &Field) -> Res<HookSpec> {
    let mut r = f.table("a table such as { type = \"impair\", drop = 0.01, delay = \"1ms\" }")?;
    // The type decides which keys are allowed, so it is read first.
    let kind = r
        .req(
            "type",
            "one of impair, spack, snoop, itcp, stripe, policer, classifier",
        )?
        .choice(HOOK_TYPES)?;
    let hook = match kind {
        "policer" | "classifier" => super::diffserv::read_edge_hook(&mut r, kind)?,
        "spack" => read_spack(&mut r)?,
        "snoop" => read_snoop(&mut r)?,
        "itcp" => read_itcp(&mut r)?,
        "stripe" => super::striping::read_stripe(&mut r)?,
        _ => {
            r.allow(&["type", "drop", "delay"])?;
            let drop = opt(&mut r, "drop", |f| f.probability())?.unwrap_or(0.0);
            let delay = opt(&mut r, "delay", |f| f.duration())?.unwrap_or(SimDuration::ZERO);
            HookSpec::Impair { drop, delay }
        }
    };
    r.finish()?;
    Ok(hook)
}

/// SPACK (paper 001 §IV); defaults in [`crate::agents::SpackConfig::default`].
fn read_spack(r: &mut Reader) -> Res<HookSpec> {
    r.allow(&["type", "split_acks", "spacing"])?;
    let d = crate::agents::SpackConfig::default();
    Ok(HookSpec::Spack(crate::agents::SpackConfig {
        split_acks: opt(r, "split_acks", |f| f.u32_in(1, u32::MAX))?.unwrap_or(d.split_acks),
        spacing: opt(r, "spacing", |f| f.duration())?.unwrap_or(d.spacing),
    }))
}

/// Snoop; defaults (ns-2 and the Snoop paper) in [`crate::agents::SnoopConfig::default`].
fn read_snoop(r: &mut Reader) -> Res<HookSpec> {
    r.allow(&[
        "type",
        "cache_size",
        "min_timeout",
        "max_local_rtx",
        "rtx_thresh",
        "initial_srtt",
        "initial_rttvar",
    ])?;
    let d = crate::agents::SnoopConfig::default();
    Ok(HookSpec::Snoop(crate::agents::SnoopConfig {
        cache_size: opt(r, "cache_size", |f| f.u32_in(1, u32::MAX))?.unwrap_or(d.cache_size),
        min_timeout: opt(r, "min_timeout", |f| f.positive_duration())?.unwrap_or(d.min_timeout),
        max_local_rtx: opt(r, "max_local_rtx", |f| f.u32_in(0, u32::MAX))?
            .unwrap_or(d.max_local_rtx),
        rtx_thresh: opt(r, "rtx_thresh", |f| f.u32_in(1, u32::MAX))?.unwrap_or(d.rtx_thresh),
        initial_srtt: opt(r, "initial_srtt", |f| f.duration())?.unwrap_or(d.initial_srtt),
        initial_rttvar: opt(r, "initial_rttvar", |f| f.duration())?.unwrap_or(d.initial_rttvar),
    }))
}

/// I-TCP: the relay buffer and the TCP keys of its two embedded endpoints, resolved from their
/// own `preset` (not from `[tcp]`, which belongs to flows). `mss` is `"follow"` (the default:
/// the relay sends segments of the FH's size) or a fixed size.
fn read_itcp(r: &mut Reader) -> Res<HookSpec> {
    let keys: Vec<&'static str> = ["type", "relay_buffer"]
        .iter()
        .chain(TCP_KEYS)
        .copied()
        .collect();
    r.allow(&keys)?;
    let relay = r
        .get("relay_buffer")
        .map(|f| Ok((f.positive_size()?, f.path)))
        .transpose()?;
    let (layer, follow_mss) = read_relay_tcp_layer(r)?;
    let tcp = resolve_tcp(&r.path, &TcpLayer::default(), &layer)?;
    let relay_buffer = match relay {
        Some((b, at)) if b < tcp.mss as u64 => {
            return Err(error(
                &at,
                format!("{b} bytes is smaller than one segment (mss {})", tcp.mss),
            ))
        }
        Some((b, _)) => b,
        None => crate::agents::ItcpConfig::default()
            .relay_buffer
            .max(tcp.mss as u64),
    };
    Ok(HookSpec::Itcp(Box::new(crate::agents::ItcpConfig {
        relay_buffer,
        tcp,
        follow_mss,
    })))
}
