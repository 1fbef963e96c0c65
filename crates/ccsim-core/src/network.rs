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
//!
//! Shortest-path trees have no loops, but an explicit route can point back the way a packet
//! came:
//!
//! ```text
//!   r1 ──computed──> r2 ──routes[0]──> r1 ──computed──> r2 ...   (packets for d1, behind r2)
//! ```
//!
//! [`Network::routing_loop`] finds such a cycle before the run (every cycle passes through the
//! `at` node of some explicit route, so walking from each of those finds them all), and the
//! IP TTL (RFC 791 §3.2) bounds the hops of any packet that would still circle.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Instant;

use crate::link::Channel;
use crate::loss::LossModel;
use crate::packet::Addr;
use crate::queue::Queue;
use crate::rng::RngStream;
use crate::scenario::{NodeKind, RouteMetric, Spec};

pub const NO_ROUTE: u32 = u32::MAX;

/// Destinations whose routes are computed together before they are copied into the table's
/// rows (see [`Network::compute_routes`]): 16 routes of 4 bytes are one 64-byte cache line per
/// node, so the block of a 20,000-node network (1.3 MB) stays in cache while Dijkstra writes
/// it. (64 per block measured 1.7x slower on a 10,000-router chain: its 2.6 MB block did not.)
const ROUTE_BLOCK: usize = 16;

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

/// A cycle of routes found by [`Network::routing_loop`]: packets for `to` (a node index) that
/// reach `nodes[0]` go round `nodes[0] -> nodes[1] -> ... -> nodes[0]` for ever.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RoutingLoop {
    /// The destination node whose packets loop.
    pub to: u32,
    /// The nodes of the cycle in forwarding order, each once.
    pub nodes: Vec<u32>,
}

/// The build stopped at its deadline (`limits.max_wall`) while computing routes: `done` of
/// `total` destination addresses had their routes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutOfTime {
    pub done: usize,
    pub total: usize,
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
        match Network::build_until(spec, None) {
            Ok(net) => net,
            Err(_) => unreachable!("a build without a deadline cannot run out of time"),
        }
    }

    /// [`Network::build`], giving up at `deadline` (checked once per destination address while
    /// routes are computed, the part of the build that grows with the square of the network).
    pub fn build_until(spec: &Spec, deadline: Option<Instant>) -> Result<Network, OutOfTime> {
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
        net.compute_routes(spec.routing.metric, deadline)?;
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
        Ok(net)
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

    /// One shortest-path tree per destination address, written into `routes`.
    ///
    /// The table is `routes[node][addr]` (the forwarding lookup reads one row per hop), but it
    /// is computed one destination at a time, i.e. one *column* at a time. Writing a column
    /// straight into the rows touches a different cache line (and soon a different page) for
    /// every node, which made the build of a 5,000-router chain take seconds in cache and TLB
    /// misses alone. So the columns of [`ROUTE_BLOCK`] destinations are gathered in a small
    /// node-major block, and each node's row receives them as one contiguous run.
    ///
    /// The cost that remains is inherent to a full static table: `nodes × addresses` entries
    /// of 4 bytes (a 20,000-router chain has 40,002 addresses: 3.2 GB), and one Dijkstra per
    /// address, each resetting `nodes` distances.
    fn compute_routes(
        &mut self,
        metric: RouteMetric,
        deadline: Option<Instant>,
    ) -> Result<(), OutOfTime> {
        let n_nodes = self.nodes.len();
        let n_addrs = self.ifaces.len();
        // Each row is filled once, block by block, in address order.
        let mut routes: Vec<Vec<u32>> = (0..n_nodes).map(|_| Vec::with_capacity(n_addrs)).collect();
        // The graph as Dijkstra reads it, in flat arrays: a node's edges are
        // `edges[edge_start[x]..edge_start[x + 1]]`, in the order of its interfaces (the order
        // decides ties), each the neighbour y, the cost of y's channel to x, and the interface y
        // leaves by. Reading these instead of `Channel`s keeps the inner loop in a few cache
        // lines.
        let mut edge_start: Vec<usize> = Vec::with_capacity(n_nodes + 1);
        let mut edges: Vec<(u32, u64, u32)> = Vec::with_capacity(n_addrs);
        for node in &self.nodes {
            edge_start.push(edges.len());
            for &ix in &node.ifaces {
                let chan_to_x = &self.chans[self.ifaces[ix as usize].in_chan as usize];
                edges.push((
                    chan_to_x.from_node,
                    link_cost(metric, chan_to_x),
                    self.peer_iface(ix),
                ));
            }
        }
        edge_start.push(edges.len());
        let forwards: Vec<bool> = self
            .nodes
            .iter()
            .map(|n| n.kind == NodeKind::Router)
            .collect();
        // `block[node * ROUTE_BLOCK + k]`: the route of `node` to address `first + k`.
        let mut block = vec![NO_ROUTE; n_nodes * ROUTE_BLOCK];
        // (cost, hops) per node, reused for each destination.
        let mut dist: Vec<(u64, u32)> = vec![(u64::MAX, u32::MAX); n_nodes];
        let mut heap = BinaryHeap::new();
        for first in (0..n_addrs).step_by(ROUTE_BLOCK) {
            let width = ROUTE_BLOCK.min(n_addrs - first);
            block.fill(NO_ROUTE);
            for k in 0..width {
                let addr = first + k;
                // One clock read per destination: a Dijkstra over the whole network costs far
                // more.
                if deadline.is_some_and(|d| Instant::now() >= d) {
                    return Err(OutOfTime {
                        done: addr,
                        total: n_addrs,
                    });
                }
                let route = |node: u32| node as usize * ROUTE_BLOCK + k;
                let owner = self.ifaces[addr].node;
                // The neighbour across this interface's link forwards to `addr` over that link.
                let in_chan = &self.chans[self.ifaces[addr].in_chan as usize];
                let neighbour = in_chan.from_node;
                let neighbour_iface = self.peer_iface(addr as u32);
                dist.iter_mut().for_each(|d| *d = (u64::MAX, u32::MAX));
                dist[owner as usize] = (0, 0);
                let first_hop = (link_cost(metric, in_chan), 1);
                dist[neighbour as usize] = first_hop;
                block[route(neighbour)] = neighbour_iface;
                heap.clear();
                heap.push(Reverse((first_hop.0, first_hop.1, neighbour)));
                while let Some(Reverse((c, h, x))) = heap.pop() {
                    if (c, h) > dist[x as usize] {
                        continue;
                    }
                    // Only routers carry transit traffic.
                    if !forwards[x as usize] {
                        continue;
                    }
                    // Every neighbour y of x can reach addr through x.
                    let x_edges = &edges[edge_start[x as usize]..edge_start[x as usize + 1]];
                    for &(y, cost, via) in x_edges {
                        let cand = (c.saturating_add(cost), h + 1);
                        if cand < dist[y as usize] {
                            dist[y as usize] = cand;
                            block[route(y)] = via;
                            heap.push(Reverse((cand.0, cand.1, y)));
                        }
                    }
                }
            }
            for (node, row) in routes.iter_mut().enumerate() {
                let at = node * ROUTE_BLOCK;
                row.extend_from_slice(&block[at..at + width]);
            }
        }
        self.routes = routes;
        Ok(())
    }

    /// The first routing loop, walking from the `at` node of each explicit route in order
    /// towards each address of its `to` node; `None` if packets between every pair of nodes
    /// reach their destination or are dropped.
    ///
    /// A walk follows `routes[node][addr]` and ends at the address's owner, at a host other
    /// than where it started (hosts do not forward: the packet is dropped there), or at a node
    /// without a route. Reaching a node twice is a loop.
    pub fn routing_loop(&self, spec: &Spec) -> Option<RoutingLoop> {
        // When each node was last seen, as (walk number, position on the walk): no clearing
        // between walks.
        let mut seen: Vec<(u32, u32)> = vec![(0, 0); self.nodes.len()];
        let mut walk = 0u32;
        let mut path: Vec<u32> = Vec::new();
        for r in &spec.routing.routes {
            let (Some(at), Some(to)) = (
                spec.nodes.get_index_of(&r.at).map(|i| i as u32),
                spec.nodes.get_index_of(&r.to).map(|i| i as u32),
            ) else {
                continue;
            };
            for &addr in &self.nodes[to as usize].ifaces {
                walk += 1;
                path.clear();
                let mut node = at;
                loop {
                    seen[node as usize] = (walk, path.len() as u32);
                    path.push(node);
                    let iface = self.routes[node as usize][addr as usize];
                    if iface == NO_ROUTE {
                        break;
                    }
                    let next = self.chans[self.ifaces[iface as usize].out_chan as usize].to_node;
                    if next == to || self.nodes[next as usize].kind != NodeKind::Router {
                        break; // delivered, or dropped by a host that does not forward
                    }
                    let (w, pos) = seen[next as usize];
                    if w == walk {
                        return Some(RoutingLoop {
                            to,
                            nodes: path[pos as usize..].to_vec(),
                        });
                    }
                    node = next;
                }
            }
        }
        None
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::load_scenario;

    /// `ha - r0 - r1 - ... - r{n-1} - hb`, declared in line order.
    fn chain(n: usize) -> Network {
        let mut text = String::from("duration = \"1s\"\n[nodes]\nha = \"host\"\n");
        for i in 0..n {
            text += &format!("r{i} = \"router\"\n");
        }
        text += "hb = \"host\"\n";
        let names: Vec<String> = std::iter::once("ha".to_string())
            .chain((0..n).map(|i| format!("r{i}")))
            .chain(std::iter::once("hb".to_string()))
            .collect();
        for (i, pair) in names.windows(2).enumerate() {
            text += &format!(
                "[links.l{i}]\na = \"{}\"\nb = \"{}\"\nrate = \"1Mbps\"\ndelay = \"1ms\"\n",
                pair[0], pair[1]
            );
        }
        text += "[flows.f]\ntype = \"cbr\"\nsrc = \"ha\"\ndst = \"hb\"\nrate = \"1Mbps\"\n";
        let loaded = load_scenario(&text, &[], None).unwrap_or_else(|e| panic!("{e}"));
        Network::build(&loaded.spec)
    }

    /// In a chain an address is reached over its own link (module docs): a node on the far
    /// side of that link sends towards the owner, a node behind the owner has no route (the
    /// owner does not forward to itself), and so does the owner. 40 routers have 82 addresses,
    /// so the routes come from several blocks of [`ROUTE_BLOCK`] columns, the last one
    /// partial; a column copied into the wrong block or row breaks the pattern.
    #[test]
    fn a_chain_routes_each_address_over_its_own_link_across_route_blocks() {
        let net = chain(40);
        let n_addrs = net.ifaces.len();
        assert_eq!(n_addrs, 82);
        assert!(n_addrs > 2 * ROUTE_BLOCK && !n_addrs.is_multiple_of(ROUTE_BLOCK));
        // Node p's interfaces are on links p - 1 (left) and p (right); link i joins nodes i and
        // i + 1 and owns interfaces 2i (a end, left node) and 2i + 1 (b end, right node).
        for (p, row) in net.routes.iter().enumerate() {
            assert_eq!(row.len(), n_addrs);
            for (addr, &via) in row.iter().enumerate() {
                let owner = net.ifaces[addr].node as usize;
                // Even addresses are a ends (the owner's link to its right), odd are b ends.
                let link_to_the_right = addr.is_multiple_of(2);
                let expected = if link_to_the_right && p > owner {
                    2 * (p as u32 - 1) + 1 // the b end of link p - 1: leftwards
                } else if !link_to_the_right && p < owner {
                    2 * p as u32 // the a end of link p: rightwards
                } else {
                    NO_ROUTE
                };
                assert_eq!(
                    via, expected,
                    "node {p} to address {addr} (on node {owner})"
                );
            }
        }
    }
}
