// SPDX-License-Identifier: MIT
//! The network: nodes, interfaces, channels and static routes, built from a [`Spec`].
//!
//! ```text
//!   node h1 ── iface 0 (addr 0) ══ link "access1" ══ iface 1 (addr 1) ── node r1
//!                 chan 0: a_to_b ───────────────────────>
//!                 <────────────────────────── chan 1: b_to_a
//! ```
//!
//! Every link end is an interface with its own address, so a host with two links has two
//! addresses (SCTP multihoming, striping). Routes are per destination *address*: the address of
//! an interface is reached over that interface's link, as an IP subnet would be, so a multihomed
//! host's two addresses are reached over two different paths.
//!
//! Routing is static: for each address, Dijkstra from the address's link towards every node,
//! where only routers forward (hosts are sources and sinks). Costs are hop counts or propagation
//! delay (ties broken by hop count, then by declaration order, so routes are deterministic).
//! Explicit routes from the scenario override the computed ones.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::link::Channel;
use crate::loss::LossModel;
use crate::packet::Addr;
use crate::queue::Queue;
use crate::rng::RngStream;
use crate::scenario::{NodeKind, RouteMetric, Spec};

pub const NO_ROUTE: u32 = u32::MAX;

pub struct Node {
    pub name: String,
    pub kind: NodeKind,
    pub ifaces: Vec<u32>,
}

pub struct Iface {
    pub node: u32,
    /// The channel that leaves the node over this interface.
    pub out_chan: u32,
    /// The channel that arrives at the node over this interface.
    pub in_chan: u32,
}

pub struct Network {
    pub nodes: Vec<Node>,
    pub ifaces: Vec<Iface>,
    pub chans: Vec<Channel>,
    /// `routes[node][addr]`: the interface to leave by, or [`NO_ROUTE`].
    pub routes: Vec<Vec<u32>>,
}

impl Network {
    /// Build from a validated spec. Random streams: `link/<name>/<dir>/queue` and `.../loss`.
    pub fn build(spec: &Spec) -> Network {
        let mut nodes: Vec<Node> = spec
            .nodes
            .iter()
            .map(|(name, n)| Node {
                name: name.clone(),
                kind: n.kind,
                ifaces: Vec::new(),
            })
            .collect();
        let node_id = |name: &str| spec.nodes.get_index_of(name).map(|i| i as u32);
        let mut ifaces = Vec::new();
        let mut chans = Vec::new();
        for (name, l) in &spec.links {
            // The parser guarantees both names exist.
            let (Some(a), Some(b)) = (node_id(&l.a), node_id(&l.b)) else {
                continue;
            };
            let ia = ifaces.len() as u32;
            let ib = ia + 1;
            let ca = chans.len() as u32;
            let cb = ca + 1;
            ifaces.push(Iface {
                node: a,
                out_chan: ca,
                in_chan: cb,
            });
            ifaces.push(Iface {
                node: b,
                out_chan: cb,
                in_chan: ca,
            });
            nodes[a as usize].ifaces.push(ia);
            nodes[b as usize].ifaces.push(ib);
            for (dir, d, from, to, to_iface) in [
                ("a_to_b", &l.a_to_b, a, b, ib),
                ("b_to_a", &l.b_to_a, b, a, ia),
            ] {
                let id = format!("link/{name}/{dir}");
                chans.push(Channel::new(
                    name.clone(),
                    dir,
                    from,
                    to,
                    to_iface,
                    d.rate,
                    d.delay,
                    l.mtu,
                    Queue::new(
                        &d.queue,
                        RngStream::derive(spec.seed, &format!("{id}/queue")),
                        d.rate,
                    ),
                    LossModel::new(&d.loss, RngStream::derive(spec.seed, &format!("{id}/loss"))),
                ));
            }
        }
        let mut net = Network {
            nodes,
            ifaces,
            chans,
            routes: Vec::new(),
        };
        net.compute_routes(spec.routing.metric);
        for r in &spec.routing.routes {
            let (Some(at), Some(to)) = (node_id(&r.at), node_id(&r.to)) else {
                continue;
            };
            let Some(via) = net.iface_on_link(at, &r.via) else {
                continue;
            };
            let addrs = net.nodes[to as usize].ifaces.clone();
            for addr in addrs {
                net.routes[at as usize][addr as usize] = via;
            }
        }
        net
    }

    /// The interface of `node` attached to link `link`.
    pub fn iface_on_link(&self, node: u32, link: &str) -> Option<u32> {
        self.nodes[node as usize]
            .ifaces
            .iter()
            .copied()
            .find(|&i| self.chans[self.ifaces[i as usize].out_chan as usize].link == link)
    }

    /// The node's first address (its "primary" address, used by flows).
    pub fn primary_addr(&self, node: u32) -> Option<Addr> {
        self.nodes[node as usize].ifaces.first().copied()
    }

    fn compute_routes(&mut self, metric: RouteMetric) {
        let n_nodes = self.nodes.len();
        let n_addrs = self.ifaces.len();
        self.routes = vec![vec![NO_ROUTE; n_addrs]; n_nodes];
        // (cost, hops) per node, reused for each destination.
        let mut dist: Vec<(u64, u32)> = vec![(u64::MAX, u32::MAX); n_nodes];
        let mut heap = BinaryHeap::new();
        for addr in 0..n_addrs {
            let owner = self.ifaces[addr].node;
            // The neighbour across this interface's link forwards to `addr` over that link.
            let in_chan = &self.chans[self.ifaces[addr].in_chan as usize];
            let neighbour = in_chan.from_node;
            let neighbour_iface = self.peer_iface(addr as u32);
            dist.iter_mut().for_each(|d| *d = (u64::MAX, u32::MAX));
            dist[owner as usize] = (0, 0);
            let first = (link_cost(metric, in_chan), 1);
            dist[neighbour as usize] = first;
            self.routes[neighbour as usize][addr] = neighbour_iface;
            heap.clear();
            heap.push(Reverse((first.0, first.1, neighbour)));
            while let Some(Reverse((c, h, x))) = heap.pop() {
                if (c, h) > dist[x as usize] {
                    continue;
                }
                // Only routers carry transit traffic.
                if self.nodes[x as usize].kind != NodeKind::Router {
                    continue;
                }
                // Every neighbour y of x can reach addr through x.
                for &ix in &self.nodes[x as usize].ifaces {
                    let chan_to_x = &self.chans[self.ifaces[ix as usize].in_chan as usize];
                    let y = chan_to_x.from_node;
                    let cand = (c.saturating_add(link_cost(metric, chan_to_x)), h + 1);
                    if cand < dist[y as usize] {
                        dist[y as usize] = cand;
                        self.routes[y as usize][addr] = self.peer_iface(ix);
                        heap.push(Reverse((cand.0, cand.1, y)));
                    }
                }
            }
        }
    }

    /// The interface at the other end of `iface`'s link.
    fn peer_iface(&self, iface: u32) -> u32 {
        iface ^ 1
    }
}

fn link_cost(metric: RouteMetric, ch: &Channel) -> u64 {
    match metric {
        RouteMetric::Hops => 1,
        RouteMetric::Delay => ch.delay.as_nanos(),
    }
}
