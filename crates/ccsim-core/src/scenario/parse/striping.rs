// SPDX-License-Identifier: MIT
//! The `stripe` hook's keys (`docs/scenario.md`, `[nodes]`): IP-layer round-robin striping of
//! one host's incoming data over several of its addresses.
//!
//! ```toml
//! r0 = { type = "router", hook = { type = "stripe", dst = "h2", links = ["b0", "b1"] } }
//! ```
//!
//! `dst` and `links` name nodes and links, which are read after the nodes, so they are checked
//! by [`check_stripes`] once the links are known.

use indexmap::IndexMap;
use toml::Value;

use super::reader::{error, Reader, Res, LINK_NAME, NODE_NAME};
use crate::scenario::spec::{HookSpec, LinkSpec, NodeSpec};

pub(super) fn read_stripe(r: &mut Reader) -> Res<HookSpec> {
    r.allow(&["type", "dst", "links"])?;
    let dst = r.req("dst", NODE_NAME)?.name(NODE_NAME)?.to_string();
    let field = r.req(
        "links",
        "an array of two or more link names such as [\"b0\", \"b1\"]",
    )?;
    let Value::Array(items) = field.value else {
        return Err(field.expected("an array of link names such as [\"b0\", \"b1\"]"));
    };
    let mut links = Vec::new();
    for (i, v) in items.iter().enumerate() {
        let Value::String(s) = v else {
            return Err(error(
                &format!("{}[{i}]", field.path),
                format!("expected {LINK_NAME}"),
            ));
        };
        links.push(s.clone());
    }
    if links.len() < 2 {
        return Err(field.error("give at least two links to stripe over"));
    }
    Ok(HookSpec::Stripe { dst, links })
}

/// Every `stripe` hook names an existing host `dst` and links that touch it, each once.
pub(super) fn check_stripes(
    nodes: &IndexMap<String, NodeSpec>,
    links: &IndexMap<String, LinkSpec>,
) -> Res<()> {
    for (name, n) in nodes {
        let Some(HookSpec::Stripe { dst, links: via }) = &n.hook else {
            continue;
        };
        let at = format!("nodes.{name}.hook");
        if !nodes.contains_key(dst) {
            return Err(error(
                &format!("{at}.dst"),
                format!("no node named {dst:?}"),
            ));
        }
        for (i, l) in via.iter().enumerate() {
            let path = format!("{at}.links[{i}]");
            let Some(spec) = links.get(l) else {
                return Err(error(&path, format!("no link named {l:?}")));
            };
            if spec.a != *dst && spec.b != *dst {
                return Err(error(&path, format!("link {l:?} does not touch {dst:?}")));
            }
            if via[..i].contains(l) {
                return Err(error(&path, format!("link {l:?} is given twice")));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use crate::scenario::spec::HookSpec;

    const HOOK: &str = "nodes.r1={type=\"router\", hook={type=\"stripe\", dst=\"h2\", links=";

    #[test]
    fn a_stripe_hook_names_the_host_and_the_links_that_reach_it() {
        let s = spec(
            MINIMAL,
            &[
                &format!("{HOOK}[\"bottleneck\", \"bottleneck2\"]}}}}"),
                "links.bottleneck2={a=\"r1\", b=\"h2\", rate=\"1Mbps\", delay=\"1ms\"}",
            ],
        );
        assert_eq!(
            s.nodes["r1"].hook,
            Some(HookSpec::Stripe {
                dst: "h2".into(),
                links: vec!["bottleneck".into(), "bottleneck2".into()]
            })
        );
        assert_eq!(
            message(
                MINIMAL,
                &[&format!("{HOOK}[\"bottleneck\", \"access\"]}}}}")]
            ),
            "nodes.r1.hook.links[1]: link \"access\" does not touch \"h2\""
        );
        assert_eq!(
            message(MINIMAL, &[&format!("{HOOK}[\"bottleneck\"]}}}}")]),
            "nodes.r1.hook.links: give at least two links to stripe over"
        );
    }
}
