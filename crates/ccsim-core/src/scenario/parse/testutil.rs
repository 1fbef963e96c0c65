// SPDX-License-Identifier: MIT
//! What the parser's unit tests share: a minimal valid scenario and short ways to load it.

use super::load_scenario;
use crate::scenario::spec::{FlowKind, Spec, TcpSpec};
use crate::scenario::{Loaded, ScenarioError};
use crate::time::SimDuration;

pub(super) fn load(
    text: &str,
    overrides: &[&str],
    seed: Option<u64>,
) -> Result<Loaded, ScenarioError> {
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    load_scenario(text, &overrides, seed)
}

pub(super) fn spec(text: &str, overrides: &[&str]) -> Spec {
    load(text, overrides, None).unwrap().spec
}

pub(super) fn ms(n: u64) -> SimDuration {
    SimDuration::from_millis(n)
}

pub(super) const MINIMAL: &str = r#"
duration = "10s"
[nodes]
h1 = "host"
h2 = "host"
r1 = "router"
[links.access]
a = "h1"
b = "r1"
rate = "100Mbps"
delay = "1ms"
[links.bottleneck]
a = "r1"
b = "h2"
rate = "10Mbps"
delay = "20ms"
[flows.f1]
type = "tcp"
src = "h1"
dst = "h2"
"#;

pub(super) fn f1_tcp(spec: &Spec) -> &TcpSpec {
    match &spec.flows["f1"].kind {
        FlowKind::Tcp { tcp, .. } => tcp,
        other => panic!("f1 is not a TCP flow: {other:?}"),
    }
}

pub(super) fn message(text: &str, overrides: &[&str]) -> String {
    load(text, overrides, None).unwrap_err().to_string()
}
