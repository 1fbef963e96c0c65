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
//! Every address has a route from every node, but the table is stored one *column* (one
//! destination, a route per node) at a time, and a column is computed only when it is needed
//! ([`Routes`]):
//!
//! ```text
//!   column[addr] ──> table[col * nodes .. (col + 1) * nodes]    the interface each node leaves by
//!
//!   at the build:  hosts' addresses (every flow runs between hosts) and the addresses of the
//!                  `to` node of each explicit route (so overrides and the loop check see them)
//!   on demand:     any other address (a router interface) the first time a packet is routed to
//!                  it: one Dijkstra then, the same column the build would have computed
//! ```
//!
//! **Hosts' addresses share columns.** A host forwards nothing, so every packet for a host's
//! address enters that address's link at the neighbour across it, its *anchor* (the access
//! router). The shortest-path tree towards the address is then the tree towards the anchor,
//! every cost and hop count shifted by the same first link, which leaves Dijkstra's order and
//! its ties as they were. So the hosts behind one router share one column, the anchor's tree:
//!
//! ```text
//!   s0 ─┐                     column of r1's tree: at r2 -> the bottleneck, at s1 -> s1's link,
//!   s1 ─┼─ r1 ══════ r2 ...   at r1 itself nothing (the root): the answer there is the
//!   s2 ─┘                     address's own link, kept with the address
//! ```
//!
//! Only two entries differ from the address's own column, and neither is read from the table:
//! at the anchor (the root, which leaves by the address's link: kept beside the address's
//! column index, so the router that delivers to a host reads no column at all) and at the
//! owner (which gets its own packets before routing and asks for no route). A dumbbell with
//! 10,000 host pairs computes two Dijkstras instead of 20,000 and keeps 2 x 20,002 entries
//! instead of 20,000 x 20,002 (1.6 GB). An address an explicit route overrides keeps a column
//! of its own, since the override is written into it.
//!
//! A fat-tree of k = 16 has 1,024 host addresses among 6,144, behind 128 edge switches: the
//! build computes 128 columns, and no packet is routed differently.
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

/// `Routes::column` of an address whose routes are not computed yet (and `Routes::tree` of a
/// node whose tree is not).
const NOT_COMPUTED: u32 = u32::MAX;

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
    /// The interface each node leaves by towards each address ([`Network::next_hop`]).
    routes: Routes,
}

/// The static routes: per destination address a column of one interface (or [`NO_ROUTE`]) per
/// node, computed at the build or on first use (module docs).
///
/// Stored by column because they are computed by column (one Dijkstra per address): each
/// column is written contiguously, and the columns of addresses nobody sends to are never
/// computed or stored.
struct Routes {
    n_nodes: usize,
    /// Per address: its column, and its anchor with the anchor's answer.
    by_addr: Vec<AddrRoutes>,
    /// `tree[node]`: the index in `table` of the column towards `node` as an anchor, or
    /// [`NOT_COMPUTED`].
    tree: Vec<u32>,
    /// The computed columns, `n_nodes` entries each: `table[col * n_nodes + node]`.
    table: Vec<u32>,
    graph: RouteGraph,
    /// Dijkstra's scratch, reused for each column: (cost, hops) per node, and the heap.
    dist: Vec<(u64, u32)>,
    heap: BinaryHeap<Reverse<(u64, u32, u32)>>,
}

/// What the forwarding lookup reads first for a destination address, in one place (12 bytes).
#[derive(Clone, Copy)]
struct AddrRoutes {
    /// The index of the address's column in `table`, or [`NOT_COMPUTED`]; for a host's
    /// address, its anchor's tree (module docs, "Hosts' addresses share columns").
    column: u32,
    /// For an address that reads its anchor's tree (a host's, unless an explicit route
    /// overrides it): the anchor, the node across the address's link; else [`NO_NODE`].
    anchor: u32,
    /// The interface the anchor leaves by towards the address (its end of the link).
    via: u32,
}

// Read on every forwarding decision: kept to 12 bytes so that five share a cache line.
const _: () = assert!(std::mem::size_of::<AddrRoutes>() == 12);

/// `AddrRoutes::anchor` of an address with a column of its own.
const NO_NODE: u32 = u32::MAX;

/// The graph as Dijkstra reads it, in flat arrays: a node's edges are
/// `edges[edge_start[x]..edge_start[x + 1]]`, in the order of its interfaces (the order decides
/// ties), each the neighbour y, the cost of y's channel to x, and the interface y leaves by.
/// Reading these instead of `Channel`s keeps the inner loop in a few cache lines.
struct RouteGraph {
    edge_start: Vec<usize>,
    edges: Vec<(u32, u64, u32)>,
    forwards: Vec<bool>,
    /// Per address: its node, the neighbour across its link, the cost of that neighbour's
    /// channel to it and the interface the neighbour leaves by.
    first_hop: Vec<FirstHop>,
}

#[derive(Clone, Copy)]
struct FirstHop {
    owner: u32,
    neighbour: u32,
    cost: u64,
    via: u32,
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
        let routes = Routes::new(&nodes, &ifaces, &chans, spec.routing.metric);
        let mut net = Network {
            nodes,
            ifaces,
            chans,
            routes,
        };
        // An explicit route's `to` node: its addresses get columns of their own, since the
        // overrides are written into them below (a shared tree would carry them to every host
        // behind the same anchor).
        for r in &spec.routing.routes {
            if let Some(to) = node_id(&r.to) {
                for &addr in &net.nodes[to as usize].ifaces {
                    net.routes.by_addr[addr as usize].anchor = NO_NODE;
                }
            }
        }
        // The columns computed now: every host's addresses, and every address of an explicit
        // route's `to` node.
        let mut eager: Vec<bool> = net.nodes.iter().map(|n| n.kind == NodeKind::Host).collect();
        for r in &spec.routing.routes {
            if let Some(to) = node_id(&r.to) {
                eager[to as usize] = true;
            }
        }
        let addrs: Vec<u32> = (0..net.ifaces.len() as u32)
            .filter(|&a| eager[net.ifaces[a as usize].node as usize])
            .collect();
        for (done, &addr) in addrs.iter().enumerate() {
            // One clock read per destination: a Dijkstra over the whole network costs far more.
            if deadline.is_some_and(|d| Instant::now() >= d) {
                return Err(OutOfTime {
                    done,
                    total: addrs.len(),
                });
            }
            net.routes.compute(addr);
        }
        for r in &spec.routing.routes {
            let (Some(at), Some(to)) = (node_id(&r.at), node_id(&r.to)) else {
                continue;
            };
            let Some(via) = net.iface_on_link(at, &r.via) else {
                continue;
            };
            let addrs = net.nodes[to as usize].ifaces.clone();
            for addr in addrs {
                let col = net.routes.compute(addr);
                net.routes.table[col + at as usize] = via;
            }
        }
        Ok(net)
    }

    /// The interface `node` leaves by towards address `addr`, or [`NO_ROUTE`]; the address's
    /// routes are computed now if nothing asked for them before (the forwarding lookup).
    ///
    /// `node` is not `addr`'s owner: a node takes its own packets before it routes (the engine's
    /// `route`), and in a shared tree the owner's entry is its way to the other hosts behind
    /// the same anchor, not "no route" ([`Routes`]).
    #[inline]
    pub fn next_hop(&mut self, node: u32, addr: u32) -> u32 {
        debug_assert_ne!(
            self.ifaces[addr as usize].node, node,
            "the owner asks no route"
        );
        let r = self.routes.by_addr[addr as usize];
        if node == r.anchor {
            return r.via; // the access router delivers to its host: no column to read
        }
        if r.column == NOT_COMPUTED {
            return self.next_hop_first(node, addr);
        }
        self.routes.table[r.column as usize * self.routes.n_nodes + node as usize]
    }

    /// [`Network::next_hop`] for an address no packet was routed to yet.
    #[cold]
    #[inline(never)]
    fn next_hop_first(&mut self, node: u32, addr: u32) -> u32 {
        let at = self.routes.compute(addr);
        self.routes.table[at + node as usize]
    }

    /// [`Network::next_hop`] without storing anything, for any node (the owner of `addr` has
    /// no route to it): a column not computed yet is computed for this one answer (the build's
    /// checks read only columns it computed).
    pub fn route(&self, node: u32, addr: u32) -> u32 {
        let routes = &self.routes;
        let r = routes.by_addr[addr as usize];
        if node == self.ifaces[addr as usize].node {
            return NO_ROUTE;
        }
        if node == r.anchor {
            return r.via;
        }
        if r.column != NOT_COMPUTED {
            return routes.table[r.column as usize * routes.n_nodes + node as usize];
        }
        let mut out = vec![NO_ROUTE; routes.n_nodes];
        let mut dist = vec![(u64::MAX, u32::MAX); routes.n_nodes];
        let mut heap = BinaryHeap::new();
        if r.anchor != NO_NODE {
            routes.graph.tree(r.anchor, &mut out, &mut dist, &mut heap);
        } else {
            routes.graph.column(addr, &mut out, &mut dist, &mut heap);
        }
        out[node as usize]
    }

    /// Columns of routes computed and stored so far (a column per address a packet or the
    /// build asked for, shared by the hosts' addresses behind one anchor).
    pub fn route_columns(&self) -> usize {
        self.routes.table.len() / self.routes.n_nodes.max(1)
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

    /// The first routing loop, walking from the `at` node of each explicit route in order
    /// towards each address of its `to` node; `None` if packets between every pair of nodes
    /// reach their destination or are dropped.
    ///
    /// A walk follows [`Network::route`] and ends at the address's owner, at a host other
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
                    let iface = self.route(node, addr);
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
}

impl Routes {
    /// No column yet; the graph read from the built nodes, interfaces and channels.
    fn new(nodes: &[Node], ifaces: &[Iface], chans: &[Channel], metric: RouteMetric) -> Routes {
        let n_nodes = nodes.len();
        let mut edge_start: Vec<usize> = Vec::with_capacity(n_nodes + 1);
        let mut edges: Vec<(u32, u64, u32)> = Vec::with_capacity(ifaces.len());
        for node in nodes {
            edge_start.push(edges.len());
            for &ix in &node.ifaces {
                let chan_to_x = &chans[ifaces[ix as usize].in_chan as usize];
                edges.push((
                    chan_to_x.from_node,
                    link_cost(metric, chan_to_x),
                    peer_iface(ix),
                ));
            }
        }
        edge_start.push(edges.len());
        let first_hop: Vec<FirstHop> = (0..ifaces.len() as u32)
            .map(|addr| {
                // The neighbour across this interface's link forwards to `addr` over that link.
                let in_chan = &chans[ifaces[addr as usize].in_chan as usize];
                FirstHop {
                    owner: ifaces[addr as usize].node,
                    neighbour: in_chan.from_node,
                    cost: link_cost(metric, in_chan),
                    via: peer_iface(addr),
                }
            })
            .collect();
        let forwards: Vec<bool> = nodes.iter().map(|n| n.kind == NodeKind::Router).collect();
        Routes {
            n_nodes,
            by_addr: first_hop
                .iter()
                .map(|hop| AddrRoutes {
                    column: NOT_COMPUTED,
                    anchor: if forwards[hop.owner as usize] {
                        NO_NODE
                    } else {
                        hop.neighbour
                    },
                    via: hop.via,
                })
                .collect(),
            tree: vec![NOT_COMPUTED; n_nodes],
            table: Vec::new(),
            graph: RouteGraph {
                edge_start,
                edges,
                forwards,
                first_hop,
            },
            dist: vec![(u64::MAX, u32::MAX); n_nodes],
            heap: BinaryHeap::new(),
        }
    }

    /// The column of `addr`, computed and stored if it is not yet: where it starts in `table`.
    /// A host's address reads its anchor's tree, computed the first time one of the hosts
    /// behind that anchor needs it.
    fn compute(&mut self, addr: u32) -> usize {
        let r = self.by_addr[addr as usize];
        if r.column != NOT_COMPUTED {
            return r.column as usize * self.n_nodes;
        }
        let at = if r.anchor != NO_NODE {
            let anchor = r.anchor as usize;
            if self.tree[anchor] == NOT_COMPUTED {
                let at = self.new_column();
                self.tree[anchor] = (at / self.n_nodes) as u32;
                let out = &mut self.table[at..];
                self.graph
                    .tree(anchor as u32, out, &mut self.dist, &mut self.heap);
            }
            self.tree[anchor] as usize * self.n_nodes
        } else {
            let at = self.new_column();
            let out = &mut self.table[at..];
            self.graph.column(addr, out, &mut self.dist, &mut self.heap);
            at
        };
        self.by_addr[addr as usize].column = (at / self.n_nodes) as u32;
        at
    }

    /// A column of [`NO_ROUTE`] at the end of `table`: where it starts.
    fn new_column(&mut self) -> usize {
        let at = self.table.len();
        self.table.resize(at + self.n_nodes, NO_ROUTE);
        at
    }
}

impl RouteGraph {
    /// One shortest-path tree towards address `addr`: `out[node]` is the interface `node`
    /// leaves by (left [`NO_ROUTE`] where there is none; `out` comes filled with it).
    ///
    /// Dijkstra from the address's owner, whose one way in is the address's own link; only
    /// routers carry transit traffic. O((nodes + links) log nodes) per address, and the scratch
    /// `dist` is reset, O(nodes).
    fn column(
        &self,
        addr: u32,
        out: &mut [u32],
        dist: &mut [(u64, u32)],
        heap: &mut BinaryHeap<Reverse<(u64, u32, u32)>>,
    ) {
        let hop = self.first_hop[addr as usize];
        dist.iter_mut().for_each(|d| *d = (u64::MAX, u32::MAX));
        dist[hop.owner as usize] = (0, 0);
        let first = (hop.cost, 1);
        dist[hop.neighbour as usize] = first;
        out[hop.neighbour as usize] = hop.via;
        heap.clear();
        heap.push(Reverse((first.0, first.1, hop.neighbour)));
        self.grow(out, dist, heap);
    }

    /// The shortest-path tree towards node `root` (left [`NO_ROUTE`] at the root): what the
    /// column of a host's address behind `root` holds everywhere but at the root and the host
    /// (module docs). The same Dijkstra as [`RouteGraph::column`], every cost less the first
    /// link's, so it visits the nodes in the same order and breaks the same ties.
    fn tree(
        &self,
        root: u32,
        out: &mut [u32],
        dist: &mut [(u64, u32)],
        heap: &mut BinaryHeap<Reverse<(u64, u32, u32)>>,
    ) {
        dist.iter_mut().for_each(|d| *d = (u64::MAX, u32::MAX));
        dist[root as usize] = (0, 0);
        heap.clear();
        heap.push(Reverse((0, 0, root)));
        self.grow(out, dist, heap);
    }

    /// Dijkstra from what `heap` holds: `out[y]` becomes the interface y leaves by on its
    /// shortest path, cost then hop count, ties to the edge met first.
    fn grow(
        &self,
        out: &mut [u32],
        dist: &mut [(u64, u32)],
        heap: &mut BinaryHeap<Reverse<(u64, u32, u32)>>,
    ) {
        while let Some(Reverse((c, h, x))) = heap.pop() {
            if (c, h) > dist[x as usize] {
                continue;
            }
            // Only routers carry transit traffic.
            if !self.forwards[x as usize] {
                continue;
            }
            // Every neighbour y of x can reach addr through x.
            let x_edges = &self.edges[self.edge_start[x as usize]..self.edge_start[x as usize + 1]];
            for &(y, cost, via) in x_edges {
                let cand = (c.saturating_add(cost), h + 1);
                if cand < dist[y as usize] {
                    dist[y as usize] = cand;
                    out[y as usize] = via;
                    heap.push(Reverse((cand.0, cand.1, y)));
                }
            }
        }
    }
}

/// The interface at the other end of `iface`'s link.
fn peer_iface(iface: u32) -> u32 {
    iface ^ 1
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
    /// owner does not forward to itself), and so does the owner. The routers' 80 addresses are
    /// computed on first use, in an order unlike the build's; a column stored at the wrong
    /// place or filled from the wrong address breaks the pattern.
    #[test]
    fn a_chain_routes_each_address_over_its_own_link() {
        let mut net = chain(40);
        let n_addrs = net.ifaces.len();
        assert_eq!(n_addrs, 82);
        // Node p's interfaces are on links p - 1 (left) and p (right); link i joins nodes i and
        // i + 1 and owns interfaces 2i (a end, left node) and 2i + 1 (b end, right node).
        for addr in (0..n_addrs).rev() {
            for p in 0..net.nodes.len() {
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
                    net.route(p as u32, addr as u32),
                    expected,
                    "node {p} to {addr}"
                );
                if p != owner {
                    assert_eq!(
                        net.next_hop(p as u32, addr as u32),
                        expected,
                        "node {p} to address {addr} (on node {owner})"
                    );
                }
            }
        }
        // 80 routers' addresses, and the two hosts' trees (rooted at r0 and r39).
        assert_eq!(net.route_columns(), n_addrs);
    }

    /// The build computes the routes to the hosts' addresses only (the two ends of the chain:
    /// 2 of 82 columns); a router's address gets its column when a packet is first routed to
    /// it, and only then.
    #[test]
    fn the_build_stores_routes_to_host_addresses_and_computes_the_rest_on_first_use() {
        let mut net = chain(40);
        assert_eq!(net.route_columns(), 2);
        // Address 3 is r1's end of link 1 (r0 - r1): reached from ha (node 0) over link 0's a
        // end and from r0 (node 1) over link 1's.
        assert_eq!(net.route(0, 3), 0);
        assert_eq!(net.route_columns(), 2, "a read-only lookup stores nothing");
        assert_eq!(net.next_hop(0, 3), 0);
        assert_eq!(net.route_columns(), 3);
        assert_eq!(net.next_hop(1, 3), 2);
        assert_eq!(net.route_columns(), 3, "the column is computed once");
    }

    fn load(text: &str) -> Network {
        let loaded = load_scenario(text, &[], None).unwrap_or_else(|e| panic!("{e}"));
        Network::build(&loaded.spec)
    }

    /// Address `addr`'s own column, as the build computed it before hosts shared trees: the
    /// reference the shared answers must equal.
    fn own_column(net: &Network, addr: u32) -> Vec<u32> {
        let n = net.nodes.len();
        let mut out = vec![NO_ROUTE; n];
        let mut dist = vec![(u64::MAX, u32::MAX); n];
        let mut heap = BinaryHeap::new();
        net.routes
            .graph
            .column(addr, &mut out, &mut dist, &mut heap);
        out
    }

    /// A mesh of 12 routers joined at pseudo-random (a fixed LCG), with 30 hosts, every third
    /// of them on two routers (multihomed), delays drawn from four values so that the delay
    /// metric meets ties; `metric` is "hops" or "delay".
    fn mesh(metric: &str) -> String {
        let mut state: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = |m: u64| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 33) % m
        };
        let mut text = format!("duration = \"1s\"\n[routing]\nmetric = \"{metric}\"\n[nodes]\n");
        for i in 0..12 {
            text += &format!("r{i} = \"router\"\n");
        }
        for i in 0..30 {
            text += &format!("h{i} = \"host\"\n");
        }
        let mut link = 0;
        let mut add = |text: &mut String, a: &str, b: &str, delay_ms: u64| {
            *text += &format!(
                "[links.l{link}]\na = \"{a}\"\nb = \"{b}\"\nrate = \"1Mbps\"\ndelay = \"{delay_ms}ms\"\n"
            );
            link += 1;
        };
        // A ring keeps the mesh connected; 14 chords add alternative paths, some parallel.
        for i in 0..12 {
            add(
                &mut text,
                &format!("r{i}"),
                &format!("r{}", (i + 1) % 12),
                1 + next(4),
            );
        }
        for _ in 0..14 {
            let (a, b) = (next(12), next(12));
            if a != b {
                add(&mut text, &format!("r{a}"), &format!("r{b}"), 1 + next(4));
            }
        }
        for h in 0..30u64 {
            add(
                &mut text,
                &format!("h{h}"),
                &format!("r{}", next(12)),
                1 + next(4),
            );
            if h % 3 == 0 {
                add(
                    &mut text,
                    &format!("h{h}"),
                    &format!("r{}", next(12)),
                    1 + next(4),
                );
            }
        }
        text += "[flows.f]\ntype = \"cbr\"\nsrc = \"h0\"\ndst = \"h1\"\nrate = \"1Mbps\"\n";
        text
    }

    /// Hosts' addresses read their anchor's tree (module docs); every node but the owner must
    /// get the answer the address's own Dijkstra gives, in hop and delay metrics, multihomed
    /// hosts and parallel links included, through `next_hop` and `route` alike. A tree rooted
    /// wrongly, a tie broken otherwise or a wrong answer at the anchor shows here.
    #[test]
    fn a_hosts_address_is_routed_as_its_own_dijkstra_would_route_it() {
        for metric in ["hops", "delay"] {
            let mut net = load(&mesh(metric));
            let host_addrs: Vec<u32> = (0..net.ifaces.len() as u32)
                .filter(|&a| net.nodes[net.ifaces[a as usize].node as usize].kind == NodeKind::Host)
                .collect();
            assert_eq!(host_addrs.len(), 40);
            let mut reached = 0;
            for &addr in &host_addrs {
                let reference = own_column(&net, addr);
                let owner = net.ifaces[addr as usize].node;
                for node in 0..net.nodes.len() as u32 {
                    let want = reference[node as usize];
                    assert_eq!(
                        net.route(node, addr),
                        want,
                        "{metric}: node {node} to {addr}"
                    );
                    if node != owner {
                        assert_eq!(net.next_hop(node, addr), want, "{metric}: {node} to {addr}");
                        reached += usize::from(want != NO_ROUTE);
                    }
                }
            }
            // Every router and every host reaches every other host's address.
            assert!(reached > 40 * 40, "{metric}: only {reached} routes");
            // One tree per router with hosts behind it, at most 12 columns for 40 addresses.
            assert!(net.route_columns() <= 12, "{}", net.route_columns());
        }
    }

    /// The hosts behind one router share its tree: a dumbbell with 500 host pairs stores two
    /// columns (one per router), not 1,000 (the 10,000-host build of issue 33 kept 20,000
    /// columns of 20,002 entries).
    #[test]
    fn hosts_behind_one_router_share_one_column() {
        let mut text =
            String::from("duration = \"1s\"\n[nodes]\nr1 = \"router\"\nr2 = \"router\"\n");
        for i in 0..500 {
            text += &format!("s{i} = \"host\"\nd{i} = \"host\"\n");
        }
        text += "[links.bn]\na = \"r1\"\nb = \"r2\"\nrate = \"1Gbps\"\ndelay = \"10ms\"\n";
        for i in 0..500 {
            text += &format!(
                "[links.s{i}]\na = \"s{i}\"\nb = \"r1\"\nrate = \"1Gbps\"\ndelay = \"1ms\"\n\
                 [links.d{i}]\na = \"d{i}\"\nb = \"r2\"\nrate = \"1Gbps\"\ndelay = \"1ms\"\n"
            );
        }
        text += "[flows.f]\ntype = \"cbr\"\nsrc = \"s0\"\ndst = \"d0\"\nrate = \"1Mbps\"\n";
        let mut net = load(&text);
        assert_eq!(net.route_columns(), 2);
        // d7's address is the b end of link d7 (interface 2 + 2 * (2 * 7 + 1) + 1): r2 leaves
        // by d7's link, r1 by the bottleneck, s3 by its own link.
        let d7 = net.nodes[net.nodes.iter().position(|n| n.name == "d7").unwrap()].ifaces[0];
        let r1 = 0;
        let r2 = 1;
        assert_eq!(net.next_hop(r2, d7), d7 ^ 1);
        assert_eq!(net.next_hop(r1, d7), 0, "r1's end of the bottleneck");
        assert_eq!(net.route_columns(), 2);
    }

    /// An explicit route to a host writes into a column of the host's own: the host beside it
    /// behind the same router keeps the computed route.
    #[test]
    fn an_explicit_route_to_a_host_moves_that_host_only() {
        let text = "duration = \"1s\"\n\
            [nodes]\nr1 = \"router\"\nr2 = \"router\"\nr3 = \"router\"\n\
            s = \"host\"\nd0 = \"host\"\nd1 = \"host\"\n\
            [links.direct]\na = \"r1\"\nb = \"r2\"\nrate = \"1Mbps\"\ndelay = \"1ms\"\n\
            [links.via_r3]\na = \"r1\"\nb = \"r3\"\nrate = \"1Mbps\"\ndelay = \"1ms\"\n\
            [links.r3_r2]\na = \"r3\"\nb = \"r2\"\nrate = \"1Mbps\"\ndelay = \"1ms\"\n\
            [links.s]\na = \"s\"\nb = \"r1\"\nrate = \"1Mbps\"\ndelay = \"1ms\"\n\
            [links.d0]\na = \"d0\"\nb = \"r2\"\nrate = \"1Mbps\"\ndelay = \"1ms\"\n\
            [links.d1]\na = \"d1\"\nb = \"r2\"\nrate = \"1Mbps\"\ndelay = \"1ms\"\n\
            [routing]\nroutes = [{ at = \"r1\", to = \"d0\", via = \"via_r3\" }]\n\
            [flows.f]\ntype = \"cbr\"\nsrc = \"s\"\ndst = \"d0\"\nrate = \"1Mbps\"\n";
        let mut net = load(text);
        let id = |name: &str| net.nodes.iter().position(|n| n.name == name).unwrap() as u32;
        let (r1, d0, d1) = (id("r1"), id("d0"), id("d1"));
        let d0_addr = net.nodes[d0 as usize].ifaces[0];
        let d1_addr = net.nodes[d1 as usize].ifaces[0];
        let via_r3 = net.iface_on_link(r1, "via_r3").unwrap();
        let direct = net.iface_on_link(r1, "direct").unwrap();
        assert_eq!(net.next_hop(r1, d0_addr), via_r3);
        assert_eq!(net.next_hop(r1, d1_addr), direct);
        assert_eq!(net.route(r1, d1_addr), direct);
    }
}
