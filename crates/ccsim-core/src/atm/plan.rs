// SPDX-License-Identifier: MIT
//! From a scenario to a fabric: the ports of the `[atm]` links, one ABR VC per (entry channel,
//! destination address) that some flow's route needs, in each direction, and the CBR sources.
//!
//! ```text
//!   flow h1 -> d1, route h1 -l1-> s1 -l2-> s2 -l3-> d1 (all [atm] links)
//!     VC "h1>d1": path = [l1 a_to_b, l2 a_to_b, l3 a_to_b], back = [l3 b_to_a, l2 b_to_a, l1 b_to_a]
//!     VC "d1>h1": the ACKs' way, and the reverse of "h1>d1"
//! ```
//!
//! A route may enter ATM once: its ATM channels must follow each other. VCs are numbered in the
//! order flows are listed (forward, then reverse), so ids do not depend on hashing.

use super::fabric::{AtmFabric, CbrPlan, PortPlan, VcPlan};
use super::AtmSpec;
use crate::network::{Network, NO_ROUTE};
use crate::packet::Addr;
use crate::rng::RngStream;
use crate::scenario::{CcAlgorithm, FlowKind, NodeKind, Spec};
use crate::time::SimDuration;
use crate::ScenarioError;

fn err(path: String, message: String) -> ScenarioError {
    ScenarioError { path, message }
}

/// The channels of the route from `src` to `dst_addr`, in order.
fn route(net: &Network, src: u32, dst_addr: Addr) -> Vec<u32> {
    let mut chans = Vec::new();
    let mut node = src;
    for _ in 0..net.nodes.len() {
        if net.ifaces[dst_addr as usize].node == node {
            break;
        }
        let iface = net.route(node, dst_addr);
        if iface == NO_ROUTE {
            break;
        }
        let c = net.ifaces[iface as usize].out_chan;
        chans.push(c);
        node = net.chans[c as usize].to_node;
    }
    chans
}

/// The ATM part of a route: its channels, which must be consecutive. `Err` names the problem.
fn atm_run(route: &[u32], is_atm: &[bool]) -> Result<Vec<u32>, String> {
    let first = route.iter().position(|&c| is_atm[c as usize]);
    let Some(first) = first else {
        return Ok(Vec::new());
    };
    let len = route[first..]
        .iter()
        .take_while(|&&c| is_atm[c as usize])
        .count();
    if route[first + len..].iter().any(|&c| is_atm[c as usize]) {
        return Err("its route leaves ATM and enters it again; one VC per route".into());
    }
    Ok(route[first..first + len].to_vec())
}

/// The other direction of channel `c`'s link.
fn reverse_chan(net: &Network, c: u32) -> u32 {
    let ch = &net.chans[c as usize];
    net.chans
        .iter()
        .position(|o| o.link == ch.link && o.direction != ch.direction)
        .map_or(c, |i| i as u32)
}

/// Build the fabric of `spec`'s `[atm]` section, or `None` without one. The errors are those the
/// parser cannot see, as they need routes: `cc = "er"` on a flow with no ABR VC, a route that
/// enters ATM twice, a CBR source whose route leaves ATM.
pub fn build(spec: &Spec, net: &Network) -> Result<Option<AtmFabric>, ScenarioError> {
    let Some(atm) = &spec.atm else {
        for (name, f) in &spec.flows {
            if uses_er(&f.kind) {
                return Err(no_vc(name));
            }
        }
        return Ok(None);
    };
    // The packet trace follows packets through channels' queues; an ATM link's cells are in
    // the atm_ports table and the vc/atm_port series instead.
    if let Some(links) = spec.trace.packets.as_ref().and_then(|p| p.links.as_ref()) {
        for (i, (l, _)) in links.iter().enumerate() {
            if atm.links.contains(l) {
                return Err(err(
                    format!("trace.packets.links[{i}]"),
                    format!(
                        "{l:?} is listed in atm.links: the packet trace does not follow cells \
                         (atm_ports and the vc series count them); leave it out"
                    ),
                ));
            }
        }
    }
    let mut is_atm = vec![false; net.chans.len()];
    let mut port_plans = Vec::new();
    let mut port_of = vec![u32::MAX; net.chans.len()];
    for (i, ch) in net.chans.iter().enumerate() {
        if atm.links.contains(&ch.link) {
            is_atm[i] = true;
            port_of[i] = port_plans.len() as u32;
            port_plans.push(PortPlan {
                chan: i as u32,
                from_node: ch.from_node,
                to_node: ch.to_node,
                to_iface: ch.to_iface,
                rate: ch.rate,
                delay: ch.delay,
                switch: net.nodes[ch.from_node as usize].kind == NodeKind::Router,
            });
        }
    }
    let ports = |chans: &[u32]| {
        chans
            .iter()
            .map(|&c| port_of[c as usize])
            .collect::<Vec<_>>()
    };
    let mut vcs: Vec<VcPlan> = Vec::new();
    // (entry channel, destination address) -> VC id.
    let mut keys: Vec<(u32, Addr)> = Vec::new();
    for (name, f) in &spec.flows {
        let (Some(src), Some(dst)) = (
            spec.nodes.get_index_of(&f.src).map(|i| i as u32),
            spec.nodes.get_index_of(&f.dst).map(|i| i as u32),
        ) else {
            continue;
        };
        let (Some(src_addr), Some(dst_addr)) = (net.primary_addr(src), net.primary_addr(dst))
        else {
            continue;
        };
        let mut ids = [None, None];
        for (k, (from, to_addr)) in [(src, dst_addr), (dst, src_addr)].into_iter().enumerate() {
            let run = atm_run(&route(net, from, to_addr), &is_atm)
                .map_err(|m| err(format!("flows.{name}"), m))?;
            let Some(&entry) = run.first() else {
                continue;
            };
            if let Some(i) = keys.iter().position(|&key| key == (entry, to_addr)) {
                ids[k] = Some(i as u32);
                continue;
            }
            let back: Vec<u32> = run.iter().rev().map(|&c| reverse_chan(net, c)).collect();
            let frtt = run
                .iter()
                .chain(back.iter())
                .map(|&c| net.chans[c as usize].delay)
                .fold(SimDuration::ZERO, |a, b| a + b);
            let entry_ch = &net.chans[entry as usize];
            let exit_ch = &net.chans[*run.last().expect("non-empty") as usize];
            vcs.push(VcPlan {
                name: format!(
                    "{}>{}",
                    net.nodes[entry_ch.from_node as usize].name,
                    net.nodes[exit_ch.to_node as usize].name
                ),
                dst_addr: to_addr,
                path: ports(&run),
                back: ports(&back),
                reverse: None,
                abr: atm.abr_params(entry_ch.rate),
                frtt,
            });
            keys.push((entry, to_addr));
            ids[k] = Some((vcs.len() - 1) as u32);
        }
        if let [Some(a), Some(b)] = ids {
            vcs[a as usize].reverse = Some(b);
            vcs[b as usize].reverse = Some(a);
        }
        if uses_er(&f.kind) && ids[0].is_none() {
            return Err(no_vc(name));
        }
    }
    let cbr = cbr_plans(spec, atm, net, &is_atm, &port_of)?;
    Ok(Some(AtmFabric::new(
        net.chans.len(),
        port_plans,
        atm.port,
        vcs,
        cbr,
    )))
}

fn uses_er(kind: &FlowKind) -> bool {
    match kind {
        FlowKind::Tcp { tcp, .. } | FlowKind::ShortTcp { tcp, .. } => {
            matches!(tcp.cc, CcAlgorithm::Er(_))
        }
        _ => false,
    }
}

fn no_vc(name: &str) -> ScenarioError {
    err(
        format!("flows.{name}.cc"),
        format!(
            "type \"er\" needs an ABR VC, but the route of flow {name} crosses no link listed \
             in [atm] links"
        ),
    )
}

fn cbr_plans(
    spec: &Spec,
    atm: &AtmSpec,
    net: &Network,
    is_atm: &[bool],
    port_of: &[u32],
) -> Result<Vec<CbrPlan>, ScenarioError> {
    let mut out = Vec::new();
    for c in &atm.cbr {
        let path = format!("atm.cbr.{}", c.name);
        let node = |n: &str| spec.nodes.get_index_of(n).map(|i| i as u32);
        let (Some(from), Some(to)) = (node(&c.from), node(&c.to)) else {
            continue;
        };
        let Some(to_addr) = net.primary_addr(to) else {
            return Err(err(path, format!("node {:?} has no link", c.to)));
        };
        let r = route(net, from, to_addr);
        if r.is_empty() || r.iter().any(|&ch| !is_atm[ch as usize]) {
            return Err(err(
                path,
                format!(
                    "the route from {} to {} must cross only links listed in [atm] links: CBR \
                     cells have no IP packet to route",
                    c.from, c.to
                ),
            ));
        }
        let ports: Vec<u32> = r.iter().map(|&ch| port_of[ch as usize]).collect();
        for k in 0..c.count {
            let name = if c.count == 1 {
                c.name.clone()
            } else {
                format!("{}.{k}", c.name)
            };
            // Each source's own offset shifts its whole on/off pattern: the sources of a group
            // leave the common phase they would share at `start` (`crate::jitter`).
            let start =
                c.start + crate::jitter::atm_cbr_offset(spec.seed, &c.name, k, c.start_jitter);
            out.push(CbrPlan {
                rng: RngStream::derive(spec.seed, &format!("atm/cbr/{name}")),
                name,
                path: ports.clone(),
                rate: super::cell_rate(c.rate),
                on: c.on,
                off: c.off,
                exponential: c.exponential,
                start,
                stop: c.stop,
            });
        }
    }
    Ok(out)
}
