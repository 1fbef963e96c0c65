// SPDX-License-Identifier: MIT
//! `[routing]` of `docs/scenario.md`: the metric of the computed shortest paths (hops or delay)
//! and explicit routes (`at` a node, `to` a node, `via` a link attached to `at`) that override
//! them. The routes themselves are computed by [`crate::network`].

use indexmap::IndexMap;
use toml::Value;

use super::reader::{list_names, opt, Field, Res, A_TABLE, LINK_NAME, NODE_NAME};
use crate::packet::DEFAULT_TTL;
use crate::scenario::spec::{LinkSpec, NodeSpec, RouteMetric, RouteSpec, RoutingSpec};

pub(super) fn read_routing(
    f: &Field,
    nodes: &IndexMap<String, NodeSpec>,
    links: &IndexMap<String, LinkSpec>,
) -> Res<RoutingSpec> {
    let mut r = f.table(A_TABLE)?;
    r.allow(&["metric", "routes", "ttl"])?;
    let metric = match opt(&mut r, "metric", |f| f.choice(&["hops", "delay"]))? {
        Some("delay") => RouteMetric::Delay,
        _ => RouteMetric::Hops,
    };
    let mut routes: Vec<RouteSpec> = Vec::new();
    if let Some(field) = r.get("routes") {
        let Value::Array(items) = field.value else {
            return Err(field.expected(
                "an array of tables such as [{ at = \"r1\", to = \"h2\", via = \"l2\" }]",
            ));
        };
        for (i, value) in items.iter().enumerate() {
            let item = Field {
                value,
                path: format!("{}[{i}]", field.path),
            };
            let route = read_route(&item, nodes, links)?;
            if route.at == route.to {
                return Err(item.error(format!("at and to are both {:?}", route.at)));
            }
            if let Some(j) = routes
                .iter()
                .position(|o| o.at == route.at && o.to == route.to)
            {
                return Err(item.error(format!(
                    "a route at {:?} to {:?} is already given in routes[{j}]",
                    route.at, route.to
                )));
            }
            routes.push(route);
        }
    }
    let ttl = opt(&mut r, "ttl", |f| f.u32_in(1, 255))?.map_or(DEFAULT_TTL, |t| t as u8);
    r.finish()?;
    Ok(RoutingSpec {
        metric,
        routes,
        ttl,
    })
}

fn read_route(
    f: &Field,
    nodes: &IndexMap<String, NodeSpec>,
    links: &IndexMap<String, LinkSpec>,
) -> Res<RouteSpec> {
    let mut r = f.table("a table such as { at = \"r1\", to = \"h2\", via = \"l2\" }")?;
    r.allow(&["at", "to", "via"])?;
    let at = r.req("at", NODE_NAME)?.node(nodes)?;
    let to = r.req("to", NODE_NAME)?.node(nodes)?;
    let via_field = r.req("via", LINK_NAME)?;
    let via = via_field.link(links)?;
    let link = &links[&via];
    if link.a != at && link.b != at {
        let attached: Vec<&String> = links
            .iter()
            .filter(|(_, l)| l.a == at || l.b == at)
            .map(|(name, _)| name)
            .collect();
        return Err(via_field.error(format!(
            "link {via:?} is not attached to {at:?}; links attached to {at:?} are {}",
            list_names(attached.into_iter())
        )));
    }
    r.finish()?;
    Ok(RouteSpec { at, to, via })
}
