// SPDX-License-Identifier: MIT
//! Scenarios: TOML with units in, a validated [`Spec`] out.

mod parse;
pub mod spec;
pub mod units;

pub use parse::{
    load_scenario, load_swept_scenario, override_keys, param_values, parse_override_value,
    parse_toml, split_override, value_tag, ValueTag,
};
pub use spec::*;

use std::fmt;

/// A scenario error: the field path (`links.bottleneck.rate`) and what is wrong with it.
#[derive(Clone, Debug, PartialEq)]
pub struct ScenarioError {
    pub path: String,
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}
impl std::error::Error for ScenarioError {}

/// A parsed, validated scenario and its resolved TOML (overrides and seed applied).
#[derive(Clone, Debug, PartialEq)]
pub struct Loaded {
    pub spec: Spec,
    pub resolved_toml: String,
}
