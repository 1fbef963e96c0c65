// SPDX-License-Identifier: MIT
//! The scenario parser: TOML text and `--set` overrides in, a validated [`Spec`] out.
//!
//! The TOML tree is walked by hand. Every table is read through a `Reader` that knows the keys
//! allowed there (an unknown key is an error that lists them) and which keys were read, and every
//! value through a `Field` that knows its full path (`links.bottleneck.rate`), so that each
//! error names the field and what would have been accepted. The format and every message are
//! documented in `docs/scenario.md`.

use std::collections::{HashSet, VecDeque};

use indexmap::IndexMap;
use toml::{Table, Value};

use super::spec::*;
use super::units::{self, WindowSize};
use super::{Loaded, ScenarioError};
use crate::time::{Rate, SimDuration, SimTime};

type Res<T> = Result<T, ScenarioError>;

/// Seed used when neither the scenario nor the caller gives one.
pub const DEFAULT_SEED: u64 = 1;

/// Parses a scenario, applies `--set` overrides (`"links.bottleneck.loss.rate=0.01"`) and the
/// seed (which replaces the scenario's), and validates it.
///
/// `resolved_toml` is the tree after overrides and seed (always with a `seed` key): loading it
/// again with no overrides gives the same [`Spec`].
pub fn load_scenario(
    text: &str,
    overrides: &[String],
    seed: Option<u64>,
) -> Result<Loaded, ScenarioError> {
    let mut tree = parse_toml(text)?;
    for item in overrides {
        apply_override(&mut tree, item)?;
    }
    set_seed(&mut tree, seed)?;
    let spec = spec_from_table(&tree)?;
    let resolved_toml = toml::to_string(&tree)
        .map_err(|e| error("", format!("cannot write the resolved scenario: {e}")))?;
    Ok(Loaded {
        spec,
        resolved_toml,
    })
}

/// Parses TOML text into a table; a syntax error gives its line and column.
pub fn parse_toml(text: &str) -> Res<Table> {
    text.parse::<Table>().map_err(|e| {
        let message = e.message().trim().replace('\n', "; ");
        match e.span() {
            Some(span) => {
                let (line, column) = line_and_column(text, span.start);
                error(
                    "",
                    format!("TOML syntax error at line {line}, column {column}: {message}"),
                )
            }
            None => error("", format!("TOML syntax error: {message}")),
        }
    })
}

/// 1-based line and column (in characters) of byte offset `at`.
fn line_and_column(text: &str, at: usize) -> (usize, usize) {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[line_start..].chars().count() + 1)
}

/// Applies one `PATH=VALUE` override. PATH is dotted keys; missing tables on the way are
/// created. VALUE is read as a TOML value (`0.01`, `true`, `"x"`, `[1, 2]`,
/// `{ type = "uniform", rate = 0.1 }`), or else taken as a bare string (`20Mbps`).
pub fn apply_override(tree: &mut Table, item: &str) -> Res<()> {
    let expected = || error("", format!("--set {item:?}: expected PATH=VALUE"));
    let (path, raw) = item.split_once('=').ok_or_else(expected)?;
    let keys: Vec<&str> = path.split('.').map(str::trim).collect();
    if keys.iter().any(|k| k.is_empty()) {
        return Err(expected());
    }
    let value = parse_override_value(raw.trim());
    let (last, parents) = keys.split_last().expect("split gives at least one key");
    let mut table = tree;
    for (i, key) in parents.iter().enumerate() {
        let entry = table
            .entry(key.to_string())
            .or_insert_with(|| Value::Table(Table::new()));
        match entry {
            Value::Table(t) => table = t,
            other => {
                let at = keys[..=i]
                    .iter()
                    .fold(String::new(), |path, key| join(&path, key));
                return Err(error(
                    &at,
                    format!(
                        "not a table (found {}), so --set {item:?} cannot set a key inside it",
                        describe(other)
                    ),
                ));
            }
        }
    }
    table.insert(last.to_string(), value);
    Ok(())
}

fn parse_override_value(raw: &str) -> Value {
    let doc = format!("v = {raw}");
    match doc.parse::<Table>() {
        Ok(mut t) if t.len() == 1 => t.remove("v").unwrap_or_else(|| Value::String(raw.into())),
        _ => Value::String(raw.to_string()),
    }
}

/// Sets the top-level `seed` to `seed`, or to the default if the tree has none, so that the
/// resolved TOML always records the seed used.
fn set_seed(tree: &mut Table, seed: Option<u64>) -> Res<()> {
    let value = match seed {
        Some(s) => Value::Integer(i64::try_from(s).map_err(|_| {
            error(
                "seed",
                format!("{s} is out of range; must be from 0 to {}", i64::MAX),
            )
        })?),
        None if tree.contains_key("seed") => return Ok(()),
        None => Value::Integer(DEFAULT_SEED as i64),
    };
    if tree.contains_key("seed") {
        tree.insert("seed".into(), value);
    } else {
        let mut with_seed = Table::new();
        with_seed.insert("seed".into(), value);
        with_seed.extend(std::mem::take(tree));
        *tree = with_seed;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Messages

const DURATION: &str = "a duration such as \"1.5s\" (units ns, us, ms, s, min)";
const DURATION_SHORT: &str = "a duration such as \"1.5s\"";
const RATE: &str = "a rate such as \"10Mbps\" (units bps, Kbps, Mbps, Gbps)";
const RATE_SHORT: &str = "a rate such as \"10Mbps\"";
const SIZE: &str =
    "a size such as \"64KB\" (units B, KB, MB, GB, KiB, MiB, GiB) or an integer number of bytes";
const SIZE_SHORT: &str = "a size such as \"64KB\"";
const NODE_NAME: &str = "a node name";
const LINK_NAME: &str = "a link name";
const A_TABLE: &str = "a table";

/// How a value is shown after "found": `integer 5`, `string "x"`.
fn describe(v: &Value) -> String {
    match v {
        Value::String(s) => format!("string {s:?}"),
        Value::Integer(i) => format!("integer {i}"),
        Value::Float(f) => format!("float {f:?}"),
        Value::Boolean(b) => format!("boolean {b}"),
        Value::Datetime(d) => format!("datetime {d}"),
        Value::Array(_) => "an array".into(),
        Value::Table(_) => "a table".into(),
    }
}

/// How a value is quoted in a message: `5`, `"0s"`.
fn shown(v: &Value) -> String {
    match v {
        Value::String(s) => format!("{s:?}"),
        Value::Integer(i) => i.to_string(),
        Value::Float(f) => format!("{f:?}"),
        Value::Boolean(b) => b.to_string(),
        other => describe(other),
    }
}

fn error(path: &str, message: impl Into<String>) -> ScenarioError {
    ScenarioError {
        path: path.to_string(),
        message: message.into(),
    }
}

/// `path.key`, quoting a key that is not a bare TOML key.
fn join(path: &str, key: &str) -> String {
    let bare = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    let key = if bare {
        key.to_string()
    } else {
        format!("{key:?}")
    };
    if path.is_empty() {
        key
    } else {
        format!("{path}.{key}")
    }
}

/// Names for a message: all of them, or the first 20 and how many there are.
fn list_names<'n>(names: impl Iterator<Item = &'n String>) -> String {
    const SHOWN: usize = 20;
    let all: Vec<&String> = names.collect();
    if all.is_empty() {
        return "none".into();
    }
    let mut text = all
        .iter()
        .take(SHOWN)
        .map(|s| s.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    if all.len() > SHOWN {
        text.push_str(&format!(", ... ({} in all)", all.len()));
    }
    text
}

/// "at least 1", "from 1 to 4".
fn range_rule(min: i64, max: i64) -> String {
    if max == i64::MAX {
        format!("at least {min}")
    } else {
        format!("from {min} to {max}")
    }
}

fn check_name(parent: &str, name: &str) -> Res<()> {
    if name.is_empty() {
        Err(error(
            parent,
            "\"\" is not a valid name: names may not be empty",
        ))
    } else if name.contains('.') {
        Err(error(
            parent,
            format!(
                "{name:?} is not a valid name: it contains \".\" (names appear in --set paths)"
            ),
        ))
    } else {
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// Reading tables and values

/// One table being read: rejects keys that are not allowed, remembers which keys were read.
struct Reader<'a> {
    table: &'a Table,
    path: String,
    allowed: Vec<&'static str>,
    used: Vec<String>,
}

impl<'a> Reader<'a> {
    fn new(table: &'a Table, path: String) -> Self {
        Reader {
            table,
            path,
            allowed: Vec::new(),
            used: Vec::new(),
        }
    }

    /// Declares the keys allowed here; the first other key (in file order) is an error.
    fn allow(&mut self, allowed: &[&'static str]) -> Res<()> {
        self.allowed = allowed.to_vec();
        match self.table.keys().find(|k| !allowed.contains(&k.as_str())) {
            Some(key) => Err(self.unknown(key)),
            None => Ok(()),
        }
    }

    fn unknown(&self, key: &str) -> ScenarioError {
        error(
            &join(&self.path, key),
            format!("unknown key; allowed: {}", self.allowed.join(", ")),
        )
    }

    /// The value of `key`, if present.
    fn get(&mut self, key: &str) -> Option<Field<'a>> {
        debug_assert!(
            self.allowed.is_empty() || self.allowed.contains(&key),
            "{key} is read at {} but not allowed there",
            self.path
        );
        let value = self.table.get(key)?;
        if !self.used.iter().any(|k| k == key) {
            self.used.push(key.to_string());
        }
        Some(Field {
            value,
            path: join(&self.path, key),
        })
    }

    /// The value of `key`; if absent, an error "missing; {what}".
    fn req(&mut self, key: &str, what: &str) -> Res<Field<'a>> {
        self.get(key)
            .ok_or_else(|| error(&join(&self.path, key), format!("missing; {what}")))
    }

    /// Checks that every key was read (a key allowed but never read is a parser bug).
    fn finish(self) -> Res<()> {
        for key in self.table.keys() {
            if !self.used.iter().any(|k| k == key) {
                debug_assert!(false, "{key} at {} was allowed but not read", self.path);
                return Err(self.unknown(key));
            }
        }
        Ok(())
    }
}

/// One value and its full path.
struct Field<'a> {
    value: &'a Value,
    path: String,
}

impl<'a> Field<'a> {
    fn error(&self, message: impl Into<String>) -> ScenarioError {
        error(&self.path, message)
    }

    /// "expected {what}, found integer 5".
    fn expected(&self, what: &str) -> ScenarioError {
        self.error(format!("expected {what}, found {}", describe(self.value)))
    }

    /// "5 is out of range; must be {rule}".
    fn out_of_range(&self, rule: &str) -> ScenarioError {
        self.error(format!(
            "{} is out of range; must be {rule}",
            shown(self.value)
        ))
    }

    fn table(&self, what: &str) -> Res<Reader<'a>> {
        match self.value {
            Value::Table(t) => Ok(Reader::new(t, self.path.clone())),
            _ => Err(self.expected(what)),
        }
    }

    fn choice(&self, options: &[&'static str]) -> Res<&'static str> {
        let list = options.join(", ");
        match self.value {
            Value::String(s) => options
                .iter()
                .find(|o| **o == s.as_str())
                .copied()
                .ok_or_else(|| self.error(format!("{s:?} is not one of {list}"))),
            _ => Err(self.expected(&format!("one of {list}"))),
        }
    }

    fn boolean(&self) -> Res<bool> {
        match self.value {
            Value::Boolean(b) => Ok(*b),
            _ => Err(self.expected("true or false")),
        }
    }

    fn int_in(&self, min: i64, max: i64) -> Res<i64> {
        match self.value {
            Value::Integer(i) if (min..=max).contains(i) => Ok(*i),
            Value::Integer(_) => Err(self.out_of_range(&range_rule(min, max))),
            _ => Err(self.expected("an integer")),
        }
    }

    fn u32_in(&self, min: u32, max: u32) -> Res<u32> {
        Ok(self.int_in(min as i64, max as i64)? as u32)
    }

    /// An integer or a finite float.
    fn number(&self) -> Res<f64> {
        match self.value {
            Value::Integer(i) => Ok(*i as f64),
            Value::Float(f) if f.is_finite() => Ok(*f),
            Value::Float(_) => Err(self.out_of_range("a finite number")),
            _ => Err(self.expected("a number")),
        }
    }

    fn positive_number(&self) -> Res<f64> {
        let x = self.number()?;
        if x > 0.0 {
            Ok(x)
        } else {
            Err(self.out_of_range("greater than 0"))
        }
    }

    fn probability(&self) -> Res<f64> {
        let p = match self.value {
            Value::Integer(i) => *i as f64,
            Value::Float(f) => *f,
            _ => return Err(self.expected("a probability (a number from 0 to 1)")),
        };
        // NaN is not in the range either.
        if (0.0..=1.0).contains(&p) {
            Ok(p)
        } else {
            Err(self.out_of_range("from 0 to 1"))
        }
    }

    fn duration(&self) -> Res<SimDuration> {
        match self.value {
            Value::String(s) => units::parse_duration(s).map_err(|m| self.error(m)),
            _ => Err(self.expected(DURATION)),
        }
    }

    fn positive_duration(&self) -> Res<SimDuration> {
        let d = self.duration()?;
        if d > SimDuration::ZERO {
            Ok(d)
        } else {
            Err(self.out_of_range("greater than 0"))
        }
    }

    fn rate(&self) -> Res<Rate> {
        match self.value {
            Value::String(s) => units::parse_rate(s).map_err(|m| self.error(m)),
            _ => Err(self.expected(RATE)),
        }
    }

    /// Bytes: an integer, or a string with a size unit.
    fn size(&self) -> Res<u64> {
        match self.value {
            Value::Integer(i) if *i >= 0 => Ok(*i as u64),
            Value::Integer(i) => Err(self.error(format!("{i} is negative; a size must be >= 0"))),
            Value::String(s) => units::parse_size(s).map_err(|m| self.error(m)),
            _ => Err(self.expected(SIZE)),
        }
    }

    fn positive_size(&self) -> Res<u64> {
        match self.size()? {
            0 => Err(self.out_of_range("greater than 0")),
            b => Ok(b),
        }
    }

    fn size_u32(&self, min: u32) -> Res<u32> {
        let b = self.size()?;
        if b < min as u64 || b > u32::MAX as u64 {
            return Err(self.out_of_range(&range_rule(min as i64, u32::MAX as i64)));
        }
        Ok(b as u32)
    }

    /// A TCP window field: a size, a segment count (`"20pkt"`) or, if `allow_inf`, `"inf"`.
    fn window(&self, allow_inf: bool) -> Res<Window> {
        let size = match self.value {
            Value::String(s) if allow_inf && s.trim() == "inf" => return Ok(Window::Inf),
            // `--set tcp.max_window=inf` arrives as the TOML float inf.
            Value::Float(f) if allow_inf && *f == f64::INFINITY => return Ok(Window::Inf),
            Value::String(s) => units::parse_window_size(s).map_err(|m| self.error(m))?,
            Value::Integer(i) if *i >= 0 => WindowSize::Bytes(*i as u64),
            Value::Integer(i) => {
                return Err(self.error(format!("{i} is negative; a size must be >= 0")))
            }
            _ if allow_inf => {
                return Err(self.expected(
                    "\"inf\", a size such as \"64KB\" or a segment count such as \"20pkt\"",
                ))
            }
            _ => {
                return Err(
                    self.expected("a size such as \"64KB\" or a segment count such as \"20pkt\"")
                )
            }
        };
        match size {
            WindowSize::Bytes(0) | WindowSize::Segments(0) => {
                Err(self.out_of_range("greater than 0"))
            }
            _ => Ok(Window::Finite(size)),
        }
    }

    fn name(&self, what: &str) -> Res<&'a str> {
        match self.value {
            Value::String(s) => Ok(s),
            _ => Err(self.expected(what)),
        }
    }

    fn node(&self, nodes: &IndexMap<String, NodeSpec>) -> Res<String> {
        let name = self.name(NODE_NAME)?;
        if nodes.contains_key(name) {
            Ok(name.to_string())
        } else {
            Err(self.error(format!(
                "no node named {name:?}; nodes are {}",
                list_names(nodes.keys())
            )))
        }
    }

    fn host(&self, nodes: &IndexMap<String, NodeSpec>) -> Res<String> {
        let name = self.node(nodes)?;
        match nodes[&name].kind {
            NodeKind::Host => Ok(name),
            NodeKind::Router => {
                Err(self.error(format!("{name:?} is a router; flows run between hosts")))
            }
        }
    }

    fn link(&self, links: &IndexMap<String, LinkSpec>) -> Res<String> {
        let name = self.name(LINK_NAME)?;
        if links.contains_key(name) {
            Ok(name.to_string())
        } else {
            Err(self.error(format!(
                "no link named {name:?}; links are {}",
                list_names(links.keys())
            )))
        }
    }
}

/// Optional field: `r.get(key)` mapped through `read`.
fn opt<'a, T>(
    r: &mut Reader<'a>,
    key: &str,
    read: impl FnOnce(&Field<'a>) -> Res<T>,
) -> Res<Option<T>> {
    r.get(key).map(|f| read(&f)).transpose()
}

// ---------------------------------------------------------------------------------------------
// The scenario

const TOP_KEYS: &[&str] = &[
    "seed", "duration", "limits", "nodes", "links", "tcp", "flows", "routing", "trace",
];

/// Validates a scenario tree (TOML already parsed, overrides applied) into a [`Spec`].
pub fn spec_from_table(tree: &Table) -> Res<Spec> {
    let mut top = Reader::new(tree, String::new());
    top.allow(TOP_KEYS)?;
    let seed = opt(&mut top, "seed", |f| f.int_in(0, i64::MAX))?.map_or(DEFAULT_SEED, |s| s as u64);
    let duration = top.req("duration", DURATION_SHORT)?.positive_duration()?;
    let limits = opt(&mut top, "limits", read_limits)?.unwrap_or_default();
    let nodes = read_nodes(&top.req("nodes", "a table of nodes such as h1 = \"host\"")?)?;
    let links = opt(&mut top, "links", |f| read_links(f, &nodes))?.unwrap_or_default();
    let tcp_defaults = match top.get("tcp") {
        Some(f) => {
            let mut r = f.table(A_TABLE)?;
            r.allow(TCP_KEYS)?;
            let layer = read_tcp_layer(&mut r)?;
            r.finish()?;
            layer
        }
        None => TcpLayer::default(),
    };
    let flows = opt(&mut top, "flows", |f| {
        read_flows(f, &nodes, &links, &tcp_defaults)
    })?
    .unwrap_or_default();
    let routing =
        opt(&mut top, "routing", |f| read_routing(f, &nodes, &links))?.unwrap_or(RoutingSpec {
            metric: RouteMetric::Hops,
            routes: Vec::new(),
        });
    let trace = opt(&mut top, "trace", read_trace)?.unwrap_or(TraceSpec { interval: None });
    top.finish()?;
    Ok(Spec {
        seed,
        duration,
        limits,
        nodes,
        links,
        flows,
        routing,
        trace,
    })
}

fn read_limits(f: &Field) -> Res<Limits> {
    let mut r = f.table(A_TABLE)?;
    r.allow(&["max_events", "max_wall"])?;
    let limits = Limits {
        max_events: opt(&mut r, "max_events", |f| f.int_in(1, i64::MAX))?.map(|n| n as u64),
        // Divided rather than multiplied by 1e-9, so that "1.5s" gives exactly 1.5.
        max_wall_seconds: opt(&mut r, "max_wall", |f| f.positive_duration())?
            .map(|d| d.as_nanos() as f64 / 1e9),
    };
    r.finish()?;
    Ok(limits)
}

fn read_trace(f: &Field) -> Res<TraceSpec> {
    let mut r = f.table(A_TABLE)?;
    r.allow(&["interval"])?;
    let interval = opt(&mut r, "interval", |f| f.positive_duration())?;
    r.finish()?;
    Ok(TraceSpec { interval })
}

// ---------------------------------------------------------------------------------------------
// Nodes

fn read_nodes(f: &Field) -> Res<IndexMap<String, NodeSpec>> {
    let Value::Table(table) = f.value else {
        return Err(f.expected("a table of nodes such as h1 = \"host\""));
    };
    let mut nodes = IndexMap::new();
    for (name, value) in table {
        check_name(&f.path, name)?;
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

const HOOK_TYPES: &[&str] = &["impair", "spack", "snoop", "itcp"];

fn read_hook(f: &Field) -> Res<HookSpec> {
    let mut r = f.table("a table such as { type = \"impair\", drop = 0.01, delay = \"1ms\" }")?;
    // The type decides which keys are allowed, so it is read first.
    let kind = r
        .req("type", "one of impair, spack, snoop, itcp")?
        .choice(HOOK_TYPES)?;
    let hook = match kind {
        "spack" => read_spack(&mut r)?,
        "snoop" => read_snoop(&mut r)?,
        "itcp" => read_itcp(&mut r)?,
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
/// own `preset` (not from `[tcp]`, which belongs to flows).
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
    let layer = read_tcp_layer(r)?;
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
    Ok(HookSpec::Itcp(crate::agents::ItcpConfig {
        relay_buffer,
        tcp,
    }))
}

// ---------------------------------------------------------------------------------------------
// Links

const LINK_KEYS: &[&str] = &[
    "a", "b", "rate", "delay", "mtu", "queue", "loss", "a_to_b", "b_to_a",
];
const DIR_KEYS: &[&str] = &["rate", "delay", "queue", "loss"];
const DEFAULT_MTU: u32 = 1500;
const DEFAULT_QUEUE_PACKETS: u64 = 100;

/// Which directions a link-level loss model applies to.
#[derive(Clone, Copy, PartialEq)]
enum Direction {
    Both,
    AToB,
    BToA,
}

fn read_links(f: &Field, nodes: &IndexMap<String, NodeSpec>) -> Res<IndexMap<String, LinkSpec>> {
    let Value::Table(table) = f.value else {
        return Err(f.expected("a table of links such as [links.bottleneck]"));
    };
    let mut links = IndexMap::new();
    for (name, value) in table {
        check_name(&f.path, name)?;
        let link = Field {
            value,
            path: join(&f.path, name),
        };
        links.insert(name.clone(), read_link(&link, nodes)?);
    }
    Ok(links)
}

fn read_link(f: &Field, nodes: &IndexMap<String, NodeSpec>) -> Res<LinkSpec> {
    let mut r =
        f.table("a table such as { a = \"h1\", b = \"r1\", rate = \"10Mbps\", delay = \"10ms\" }")?;
    r.allow(LINK_KEYS)?;
    let a = r.req("a", NODE_NAME)?.node(nodes)?;
    let b = r.req("b", NODE_NAME)?.node(nodes)?;
    if a == b {
        return Err(f.error(format!(
            "a and b are both {a:?}; a link joins two different nodes"
        )));
    }
    let rate = r.req("rate", RATE_SHORT)?.rate()?;
    let delay = r.req("delay", DURATION_SHORT)?.duration()?;
    let mtu = opt(&mut r, "mtu", |f| f.size_u32(68))?.unwrap_or(DEFAULT_MTU);
    let queue = opt(&mut r, "queue", read_queue)?.unwrap_or(QueueSpec::DropTail {
        limit: QueueLimit::Packets(DEFAULT_QUEUE_PACKETS),
    });
    let (loss, direction) =
        opt(&mut r, "loss", |f| read_loss(f, true))?.unwrap_or((LossSpec::None, Direction::Both));
    let dir = |covered: bool| DirSpec {
        rate,
        delay,
        queue: queue.clone(),
        loss: if covered {
            loss.clone()
        } else {
            LossSpec::None
        },
    };
    let mut a_to_b = dir(direction != Direction::BToA);
    let mut b_to_a = dir(direction != Direction::AToB);
    if let Some(f) = r.get("a_to_b") {
        read_direction(&f, &mut a_to_b)?;
    }
    if let Some(f) = r.get("b_to_a") {
        read_direction(&f, &mut b_to_a)?;
    }
    r.finish()?;
    Ok(LinkSpec {
        a,
        b,
        rate,
        delay,
        mtu,
        a_to_b,
        b_to_a,
    })
}

/// Applies a per-direction table (`[links.X.a_to_b]`) over the link-level values.
fn read_direction(f: &Field, dir: &mut DirSpec) -> Res<()> {
    let mut r = f.table("a table of rate, delay, queue or loss")?;
    r.allow(DIR_KEYS)?;
    if let Some(rate) = opt(&mut r, "rate", |f| f.rate())? {
        dir.rate = rate;
    }
    if let Some(delay) = opt(&mut r, "delay", |f| f.duration())? {
        dir.delay = delay;
    }
    if let Some(queue) = opt(&mut r, "queue", read_queue)? {
        dir.queue = queue;
    }
    if let Some((loss, _)) = opt(&mut r, "loss", |f| read_loss(f, false))? {
        dir.loss = loss;
    }
    r.finish()
}

const QUEUE_TYPES: &[&str] = &["droptail", "red", "xcp"];
const RED_KEYS: &[&str] = &[
    "type",
    "limit",
    "min_th",
    "max_th",
    "max_p",
    "w_q",
    "gentle",
    "ecn",
    "mean_packet_size",
];

fn read_queue(f: &Field) -> Res<QueueSpec> {
    let mut r = f.table("a table such as { type = \"droptail\", limit = 100 }")?;
    let kind = r
        .req("type", "one of droptail, red, xcp")?
        .choice(QUEUE_TYPES)?;
    match kind {
        "droptail" => r.allow(&["type", "limit"])?,
        "xcp" => r.allow(&["type", "limit", "alpha", "beta", "gamma"])?,
        _ => r.allow(RED_KEYS)?,
    }
    let limit = opt(&mut r, "limit", read_queue_limit)?
        .unwrap_or(QueueLimit::Packets(DEFAULT_QUEUE_PACKETS));
    if kind == "droptail" {
        r.finish()?;
        return Ok(QueueSpec::DropTail { limit });
    }
    if kind == "xcp" {
        // Defaults: Katabi, Handley, Rohrs, SIGCOMM 2002, §3.4 (alpha, beta) and §3.5 (gamma).
        let alpha = opt(&mut r, "alpha", read_fraction_above_zero)?.unwrap_or(0.4);
        let beta = opt(&mut r, "beta", read_fraction_above_zero)?.unwrap_or(0.226);
        let gamma = opt(&mut r, "gamma", |f| f.probability())?.unwrap_or(0.1);
        r.finish()?;
        return Ok(QueueSpec::Xcp {
            limit,
            alpha,
            beta,
            gamma,
        });
    }
    let mean_packet_size = opt(&mut r, "mean_packet_size", |f| f.size_u32(1))?.unwrap_or(1000);
    // Default thresholds are ns-2's 5 and 15 packets (of mean_packet_size for a byte limit).
    let (default_min, default_max, capacity, unit) = match limit {
        QueueLimit::Packets(n) => (5.0, 15.0, n as f64, "packets"),
        QueueLimit::Bytes(n) => (
            5.0 * mean_packet_size as f64,
            15.0 * mean_packet_size as f64,
            n as f64,
            "bytes",
        ),
    };
    let min_th = opt(&mut r, "min_th", |f| read_threshold(f, limit))?.unwrap_or(default_min);
    let max_th = opt(&mut r, "max_th", |f| read_threshold(f, limit))?.unwrap_or(default_max);
    let max_p = opt(&mut r, "max_p", read_fraction_above_zero)?.unwrap_or(0.1);
    let w_q = opt(&mut r, "w_q", read_fraction_above_zero)?.unwrap_or(0.002);
    let gentle = opt(&mut r, "gentle", |f| f.boolean())?.unwrap_or(true);
    let ecn = opt(&mut r, "ecn", |f| f.boolean())?.unwrap_or(false);
    r.finish()?;
    if !(0.0 <= min_th && min_th < max_th && max_th <= capacity) {
        return Err(f.error(format!(
            "RED needs 0 <= min_th < max_th <= limit; got min_th {min_th}, max_th {max_th}, \
             limit {capacity} ({unit})"
        )));
    }
    Ok(QueueSpec::Red {
        limit,
        min_th,
        max_th,
        max_p,
        w_q,
        gentle,
        ecn,
        mean_packet_size,
    })
}

fn read_queue_limit(f: &Field) -> Res<QueueLimit> {
    match f.value {
        Value::Integer(_) => Ok(QueueLimit::Packets(f.int_in(1, i64::MAX)? as u64)),
        Value::String(s) => {
            let t = s.trim();
            if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
                return Err(f.error(format!(
                    "{s:?} has no unit; write {t} for packets or \"{t}B\" for bytes"
                )));
            }
            Ok(QueueLimit::Bytes(f.positive_size()?))
        }
        _ => Err(f.expected("a number of packets such as 100 or a size such as \"64KB\"")),
    }
}

fn read_threshold(f: &Field, limit: QueueLimit) -> Res<f64> {
    match (limit, f.value) {
        (QueueLimit::Packets(_), Value::Integer(_) | Value::Float(_)) => f.number(),
        (QueueLimit::Packets(_), _) => {
            Err(f.expected("a number of packets (the limit is in packets)"))
        }
        (QueueLimit::Bytes(_), Value::String(_)) => Ok(f.size()? as f64),
        (QueueLimit::Bytes(_), _) => {
            Err(f.expected("a size such as \"15KB\" (the limit is in bytes)"))
        }
    }
}

/// A number in (0, 1].
fn read_fraction_above_zero(f: &Field) -> Res<f64> {
    let x = f.number()?;
    if x > 0.0 && x <= 1.0 {
        Ok(x)
    } else {
        Err(f.out_of_range("greater than 0 and at most 1"))
    }
}

const LOSS_TYPES: &[&str] = &["none", "uniform", "ber", "gilbert_elliott"];

fn read_loss(f: &Field, allow_direction: bool) -> Res<(LossSpec, Direction)> {
    let mut r = f.table("a table such as { type = \"uniform\", rate = 0.01 }")?;
    let kind = r
        .req("type", "one of none, uniform, ber, gilbert_elliott")?
        .choice(LOSS_TYPES)?;
    let mut allowed: Vec<&'static str> = match kind {
        "none" => vec!["type"],
        "uniform" => vec!["type", "rate"],
        "ber" => vec!["type", "ber"],
        _ => vec![
            "type",
            "p_good_to_bad",
            "p_bad_to_good",
            "loss_good",
            "loss_bad",
        ],
    };
    if allow_direction {
        allowed.push("direction");
    }
    r.allow(&allowed)?;
    const PROBABILITY: &str = "a probability (a number from 0 to 1)";
    let loss = match kind {
        "none" => LossSpec::None,
        "uniform" => LossSpec::Uniform {
            rate: r.req("rate", PROBABILITY)?.probability()?,
        },
        "ber" => LossSpec::BitError {
            ber: r.req("ber", PROBABILITY)?.probability()?,
        },
        _ => LossSpec::GilbertElliott {
            p_good_to_bad: r.req("p_good_to_bad", PROBABILITY)?.probability()?,
            p_bad_to_good: r.req("p_bad_to_good", PROBABILITY)?.probability()?,
            loss_good: opt(&mut r, "loss_good", |f| f.probability())?.unwrap_or(0.0),
            loss_bad: opt(&mut r, "loss_bad", |f| f.probability())?.unwrap_or(1.0),
        },
    };
    let direction = if allow_direction {
        match opt(&mut r, "direction", |f| {
            f.choice(&["both", "a_to_b", "b_to_a"])
        })? {
            Some("a_to_b") => Direction::AToB,
            Some("b_to_a") => Direction::BToA,
            _ => Direction::Both,
        }
    } else {
        Direction::Both
    };
    r.finish()?;
    Ok((loss, direction))
}

// ---------------------------------------------------------------------------------------------
// TCP parameters, in layers: preset, then [tcp], then the flow's own keys

const TCP_KEYS: &[&str] = &[
    "preset",
    "variant",
    "cc",
    "mss",
    "header_bytes",
    "initial_window",
    "initial_ssthresh",
    "max_window",
    "rcv_buffer",
    "growth",
    "abc_limit",
    "dupthresh",
    "limited_transmit",
    "delayed_ack",
    "delack_timeout",
    "delack_count",
    "max_sack_blocks",
    "rto_initial",
    "rto_min",
    "rto_max",
    "clock_granularity",
];

#[derive(Clone, Copy, Debug, PartialEq)]
enum Preset {
    Rfc,
    Ns2,
}

/// A window-like TCP value before the flow's MSS is known.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Window {
    Inf,
    Finite(WindowSize),
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum GrowthKind {
    PerAck,
    Rfc5681,
    Abc,
}

impl GrowthKind {
    fn name(self) -> &'static str {
        match self {
            GrowthKind::PerAck => "per_ack",
            GrowthKind::Rfc5681 => "rfc5681",
            GrowthKind::Abc => "abc",
        }
    }
}

/// TCP keys given in one table (`[tcp]` or a flow); None = not given there.
#[derive(Clone, Debug, Default)]
struct TcpLayer {
    preset: Option<Preset>,
    recovery: Option<Recovery>,
    cc: Option<CcAlgorithm>,
    mss: Option<u32>,
    header_bytes: Option<u32>,
    initial_window: Option<InitialWindow>,
    initial_ssthresh: Option<Window>,
    max_window: Option<Window>,
    rcv_buffer: Option<Window>,
    growth: Option<GrowthKind>,
    /// The value and the path it was given at.
    abc_limit: Option<(u32, String)>,
    dupthresh: Option<u32>,
    limited_transmit: Option<bool>,
    delayed_ack: Option<bool>,
    delack_timeout: Option<SimDuration>,
    delack_count: Option<u32>,
    max_sack_blocks: Option<u32>,
    rto_initial: Option<SimDuration>,
    rto_min: Option<SimDuration>,
    rto_max: Option<SimDuration>,
    clock_granularity: Option<SimDuration>,
}

/// Reads the TCP keys of `r` (the caller has allowed them).
fn read_tcp_layer(r: &mut Reader) -> Res<TcpLayer> {
    Ok(TcpLayer {
        preset: opt(r, "preset", |f| f.choice(&["rfc", "ns2"]))?.map(|p| match p {
            "ns2" => Preset::Ns2,
            _ => Preset::Rfc,
        }),
        recovery: opt(r, "variant", |f| f.choice(&["reno", "newreno", "sack"]))?.map(|v| match v {
            "reno" => Recovery::Reno,
            "newreno" => Recovery::NewReno,
            _ => Recovery::Sack,
        }),
        cc: opt(r, "cc", read_cc)?,
        mss: opt(r, "mss", |f| f.size_u32(1))?,
        header_bytes: opt(r, "header_bytes", |f| f.size_u32(0))?,
        initial_window: opt(r, "initial_window", read_initial_window)?,
        initial_ssthresh: opt(r, "initial_ssthresh", |f| f.window(true))?,
        max_window: opt(r, "max_window", |f| f.window(true))?,
        rcv_buffer: opt(r, "rcv_buffer", |f| f.window(false))?,
        growth: opt(r, "growth", |f| f.choice(&["per_ack", "rfc5681", "abc"]))?.map(|g| match g {
            "per_ack" => GrowthKind::PerAck,
            "abc" => GrowthKind::Abc,
            _ => GrowthKind::Rfc5681,
        }),
        abc_limit: r
            .get("abc_limit")
            .map(|f| Ok((f.u32_in(1, u32::MAX)?, f.path)))
            .transpose()?,
        dupthresh: opt(r, "dupthresh", |f| f.u32_in(1, u32::MAX))?,
        limited_transmit: opt(r, "limited_transmit", |f| f.boolean())?,
        delayed_ack: opt(r, "delayed_ack", |f| f.boolean())?,
        delack_timeout: opt(r, "delack_timeout", |f| f.duration())?,
        delack_count: opt(r, "delack_count", |f| f.u32_in(1, u32::MAX))?,
        max_sack_blocks: opt(r, "max_sack_blocks", |f| f.u32_in(1, 4))?,
        rto_initial: opt(r, "rto_initial", |f| f.positive_duration())?,
        rto_min: opt(r, "rto_min", |f| f.duration())?,
        rto_max: opt(r, "rto_max", |f| f.positive_duration())?,
        clock_granularity: opt(r, "clock_granularity", |f| f.duration())?,
    })
}

const CC_TYPES: &[&str] = &[
    "reno",
    "highspeed",
    "scalable",
    "bic",
    "cubic",
    "vegas",
    "fast",
    "xcp",
];
const CC_ONE_OF: &str = "one of reno, highspeed, scalable, bic, cubic, vegas, fast, xcp";
const CC_EXPECTED: &str =
    "one of reno, highspeed, scalable, bic, cubic, vegas, fast, xcp, or a table \
                           such as { type = \"cubic\", beta = 0.7 }";

/// `cc = "cubic"` (that algorithm with its defaults) or `cc = { type = "cubic", beta = 0.8 }`.
/// Every default is the algorithm's `Config::default()` in `crate::cc`; windows are segments.
fn read_cc(f: &Field) -> Res<CcAlgorithm> {
    let empty = Table::new();
    let (kind, mut r) = match f.value {
        Value::String(_) => (f.choice(CC_TYPES)?, Reader::new(&empty, f.path.clone())),
        Value::Table(_) => {
            let mut r = f.table(CC_EXPECTED)?;
            // The type decides which keys are allowed, so it is read first.
            let kind = r.req("type", CC_ONE_OF)?.choice(CC_TYPES)?;
            (kind, r)
        }
        _ => return Err(f.expected(CC_EXPECTED)),
    };
    let cc = match kind {
        "highspeed" => read_highspeed(&mut r)?,
        "scalable" => read_scalable(&mut r)?,
        "bic" => read_bic(&mut r)?,
        "cubic" => read_cubic(&mut r)?,
        "vegas" => read_vegas(&mut r)?,
        "fast" => read_fast(&mut r)?,
        "xcp" => {
            r.allow(&["type", "request_segments"])?;
            let mut c = crate::cc::XcpSenderConfig::default();
            if let Some(x) = opt(&mut r, "request_segments", |f| f.positive_number())? {
                c.request_segments = x;
            }
            CcAlgorithm::Xcp(c)
        }
        _ => {
            r.allow(&["type"])?;
            CcAlgorithm::Reno
        }
    };
    r.finish()?;
    Ok(cc)
}

/// A number in (0, 1).
fn read_open_fraction(f: &Field) -> Res<f64> {
    let x = f.number()?;
    if x > 0.0 && x < 1.0 {
        Ok(x)
    } else {
        Err(f.out_of_range("greater than 0 and less than 1"))
    }
}

fn read_non_negative(f: &Field) -> Res<f64> {
    let x = f.number()?;
    if x >= 0.0 {
        Ok(x)
    } else {
        Err(f.out_of_range("at least 0"))
    }
}

/// `{a} must be less than {b}` at the `cc` table, for two keys read from it.
fn cc_order(r: &Reader, low: (&str, f64), high: (&str, f64), strict: bool) -> Res<()> {
    let ok = if strict {
        low.1 < high.1
    } else {
        low.1 <= high.1
    };
    if ok {
        return Ok(());
    }
    let rel = if strict { "less than" } else { "at most" };
    Err(error(
        &r.path,
        format!(
            "{} ({}) must be {rel} {} ({})",
            low.0, low.1, high.0, high.1
        ),
    ))
}

/// HighSpeed TCP (RFC 3649); defaults in [`crate::cc::HighSpeedConfig::default`].
fn read_highspeed(r: &mut Reader) -> Res<CcAlgorithm> {
    r.allow(&[
        "type",
        "low_window",
        "high_window",
        "high_p",
        "low_p",
        "high_decrease",
    ])?;
    let d = crate::cc::HighSpeedConfig::default();
    let c = crate::cc::HighSpeedConfig {
        low_window: opt(r, "low_window", |f| f.positive_number())?.unwrap_or(d.low_window),
        high_window: opt(r, "high_window", |f| f.positive_number())?.unwrap_or(d.high_window),
        high_p: opt(r, "high_p", read_open_fraction)?.unwrap_or(d.high_p),
        low_p: opt(r, "low_p", read_open_fraction)?.unwrap_or(d.low_p),
        high_decrease: opt(r, "high_decrease", read_open_fraction)?.unwrap_or(d.high_decrease),
    };
    cc_order(
        r,
        ("low_window", c.low_window),
        ("high_window", c.high_window),
        true,
    )?;
    cc_order(r, ("high_p", c.high_p), ("low_p", c.low_p), true)?;
    Ok(CcAlgorithm::HighSpeed(c))
}

/// Scalable TCP (Kelly 2003); defaults in [`crate::cc::ScalableConfig::default`].
fn read_scalable(r: &mut Reader) -> Res<CcAlgorithm> {
    r.allow(&["type", "a", "b", "low_window"])?;
    let d = crate::cc::ScalableConfig::default();
    Ok(CcAlgorithm::Scalable(crate::cc::ScalableConfig {
        a: opt(r, "a", |f| f.positive_number())?.unwrap_or(d.a),
        b: opt(r, "b", read_open_fraction)?.unwrap_or(d.b),
        low_window: opt(r, "low_window", read_non_negative)?.unwrap_or(d.low_window),
    }))
}

/// BIC-TCP (Xu, Harfoush, Rhee 2004); defaults in [`crate::cc::BicConfig::default`].
fn read_bic(r: &mut Reader) -> Res<CcAlgorithm> {
    r.allow(&[
        "type",
        "s_max",
        "s_min",
        "beta",
        "low_window",
        "fast_convergence",
        "search_divisor",
    ])?;
    let d = crate::cc::BicConfig::default();
    let divisor = |f: &Field| {
        let x = f.number()?;
        if x > 1.0 {
            Ok(x)
        } else {
            Err(f.out_of_range("greater than 1"))
        }
    };
    let c = crate::cc::BicConfig {
        s_max: opt(r, "s_max", |f| f.positive_number())?.unwrap_or(d.s_max),
        s_min: opt(r, "s_min", |f| f.positive_number())?.unwrap_or(d.s_min),
        beta: opt(r, "beta", read_open_fraction)?.unwrap_or(d.beta),
        low_window: opt(r, "low_window", read_non_negative)?.unwrap_or(d.low_window),
        fast_convergence: opt(r, "fast_convergence", |f| f.boolean())?
            .unwrap_or(d.fast_convergence),
        search_divisor: opt(r, "search_divisor", divisor)?.unwrap_or(d.search_divisor),
    };
    cc_order(r, ("s_min", c.s_min), ("s_max", c.s_max), false)?;
    Ok(CcAlgorithm::Bic(c))
}

/// CUBIC (RFC 9438); defaults in [`crate::cc::CubicConfig::default`].
fn read_cubic(r: &mut Reader) -> Res<CcAlgorithm> {
    r.allow(&["type", "c", "beta", "fast_convergence", "reno_friendly"])?;
    let d = crate::cc::CubicConfig::default();
    Ok(CcAlgorithm::Cubic(crate::cc::CubicConfig {
        c: opt(r, "c", |f| f.positive_number())?.unwrap_or(d.c),
        beta: opt(r, "beta", read_open_fraction)?.unwrap_or(d.beta),
        fast_convergence: opt(r, "fast_convergence", |f| f.boolean())?
            .unwrap_or(d.fast_convergence),
        reno_friendly: opt(r, "reno_friendly", |f| f.boolean())?.unwrap_or(d.reno_friendly),
    }))
}

/// TCP Vegas (Brakmo, Peterson 1995); defaults in [`crate::cc::VegasConfig::default`].
fn read_vegas(r: &mut Reader) -> Res<CcAlgorithm> {
    r.allow(&[
        "type",
        "alpha",
        "beta",
        "gamma",
        "min_rtt_samples",
        "slow_start_every_other_rtt",
    ])?;
    let d = crate::cc::VegasConfig::default();
    let c = crate::cc::VegasConfig {
        alpha: opt(r, "alpha", read_non_negative)?.unwrap_or(d.alpha),
        beta: opt(r, "beta", read_non_negative)?.unwrap_or(d.beta),
        gamma: opt(r, "gamma", read_non_negative)?.unwrap_or(d.gamma),
        min_rtt_samples: opt(r, "min_rtt_samples", |f| f.u32_in(1, u32::MAX))?
            .unwrap_or(d.min_rtt_samples),
        slow_start_every_other_rtt: opt(r, "slow_start_every_other_rtt", |f| f.boolean())?
            .unwrap_or(d.slow_start_every_other_rtt),
    };
    cc_order(r, ("alpha", c.alpha), ("beta", c.beta), false)?;
    Ok(CcAlgorithm::Vegas(c))
}

/// FAST TCP (Jin, Wei, Low 2004); defaults in [`crate::cc::FastConfig::default`].
fn read_fast(r: &mut Reader) -> Res<CcAlgorithm> {
    r.allow(&[
        "type",
        "alpha",
        "gamma",
        "update_interval",
        "eta_scale",
        "eta_max",
    ])?;
    let d = crate::cc::FastConfig::default();
    Ok(CcAlgorithm::Fast(crate::cc::FastConfig {
        alpha: opt(r, "alpha", |f| f.positive_number())?.unwrap_or(d.alpha),
        gamma: opt(r, "gamma", read_fraction_above_zero)?.unwrap_or(d.gamma),
        update_interval: opt(r, "update_interval", |f| f.u32_in(1, u32::MAX))?
            .unwrap_or(d.update_interval),
        eta_scale: opt(r, "eta_scale", |f| f.positive_number())?.unwrap_or(d.eta_scale),
        eta_max: opt(r, "eta_max", read_fraction_above_zero)?.unwrap_or(d.eta_max),
    }))
}

fn read_initial_window(f: &Field) -> Res<InitialWindow> {
    match f.value {
        Value::Integer(_) => Ok(InitialWindow::Segments(f.u32_in(1, u32::MAX)?)),
        Value::String(_) => Ok(match f.choice(&["rfc5681", "rfc3390", "rfc6928"])? {
            "rfc5681" => InitialWindow::Rfc5681,
            "rfc3390" => InitialWindow::Rfc3390,
            _ => InitialWindow::Rfc6928,
        }),
        _ => Err(f.expected("an integer number of segments or one of rfc5681, rfc3390, rfc6928")),
    }
}

/// A TCP configuration being resolved: windows stay in segments until the MSS is final.
struct TcpDraft {
    spec: TcpSpec,
    initial_ssthresh: Window,
    max_window: Window,
    rcv_buffer: Window,
    growth: GrowthKind,
    abc_limit: u32,
    abc_limit_at: Option<String>,
}

impl TcpDraft {
    fn from_preset(preset: Preset) -> Self {
        let bytes = |b: Option<u64>| match b {
            Some(b) => Window::Finite(WindowSize::Bytes(b)),
            None => Window::Inf,
        };
        let spec = match preset {
            Preset::Rfc => TcpSpec::default(),
            Preset::Ns2 => TcpSpec::ns2(),
        };
        let (growth, abc_limit) = match spec.growth {
            Growth::PerAck => (GrowthKind::PerAck, 2),
            Growth::Rfc5681 => (GrowthKind::Rfc5681, 2),
            Growth::ByteCounting { limit_segments } => (GrowthKind::Abc, limit_segments),
        };
        let mut draft = TcpDraft {
            initial_ssthresh: bytes(spec.initial_ssthresh),
            max_window: bytes(spec.max_window),
            rcv_buffer: bytes(Some(spec.rcv_buffer)),
            growth,
            abc_limit,
            abc_limit_at: None,
            spec,
        };
        if preset == Preset::Ns2 {
            // ns-2's window_ and ssthresh_ are 20 packets, whatever the packet size.
            draft.initial_ssthresh = Window::Finite(WindowSize::Segments(20));
            draft.max_window = Window::Finite(WindowSize::Segments(20));
        }
        draft
    }

    fn apply(&mut self, layer: &TcpLayer) {
        let s = &mut self.spec;
        fn set<T: Clone>(to: &mut T, from: &Option<T>) {
            if let Some(v) = from {
                *to = v.clone();
            }
        }
        set(&mut s.recovery, &layer.recovery);
        set(&mut s.cc, &layer.cc);
        set(&mut s.mss, &layer.mss);
        set(&mut s.header_bytes, &layer.header_bytes);
        set(&mut s.initial_window, &layer.initial_window);
        set(&mut s.dupthresh, &layer.dupthresh);
        set(&mut s.limited_transmit, &layer.limited_transmit);
        set(&mut s.delayed_ack, &layer.delayed_ack);
        set(&mut s.delack_timeout, &layer.delack_timeout);
        set(&mut s.delack_count, &layer.delack_count);
        set(&mut s.max_sack_blocks, &layer.max_sack_blocks);
        set(&mut s.rto_initial, &layer.rto_initial);
        set(&mut s.rto_min, &layer.rto_min);
        set(&mut s.rto_max, &layer.rto_max);
        set(&mut s.clock_granularity, &layer.clock_granularity);
        set(&mut self.initial_ssthresh, &layer.initial_ssthresh);
        set(&mut self.max_window, &layer.max_window);
        set(&mut self.rcv_buffer, &layer.rcv_buffer);
        set(&mut self.growth, &layer.growth);
        if let Some((limit, at)) = &layer.abc_limit {
            self.abc_limit = *limit;
            self.abc_limit_at = Some(at.clone());
        }
    }

    /// The final TCP parameters of the flow at `path`, with the checks that involve several
    /// keys.
    fn finish(self, path: &str) -> Res<TcpSpec> {
        let mut spec = self.spec;
        let mss = spec.mss;
        let bytes = |w: Window, key: &str| -> Res<Option<u64>> {
            match w {
                Window::Inf => Ok(None),
                Window::Finite(size) => size.to_bytes(mss).map(Some).ok_or_else(|| {
                    error(
                        path,
                        format!("{key} is too large for mss {mss} (more than 2^64 bytes)"),
                    )
                }),
            }
        };
        spec.initial_ssthresh = bytes(self.initial_ssthresh, "initial_ssthresh")?;
        spec.max_window = bytes(self.max_window, "max_window")?;
        spec.rcv_buffer = bytes(self.rcv_buffer, "rcv_buffer")?.expect("rcv_buffer is never inf");
        spec.growth = match self.growth {
            GrowthKind::PerAck => Growth::PerAck,
            GrowthKind::Rfc5681 => Growth::Rfc5681,
            GrowthKind::Abc => Growth::ByteCounting {
                limit_segments: self.abc_limit,
            },
        };
        if let (Some(at), false) = (&self.abc_limit_at, self.growth == GrowthKind::Abc) {
            return Err(error(
                path,
                format!(
                    "abc_limit (set at {at}) only applies with growth = \"abc\", but this \
                     flow's growth is {:?}",
                    self.growth.name()
                ),
            ));
        }
        if spec.rto_min > spec.rto_max {
            return Err(error(
                path,
                format!(
                    "rto_min ({}) is greater than rto_max ({})",
                    units::format_duration(spec.rto_min),
                    units::format_duration(spec.rto_max)
                ),
            ));
        }
        if spec.rcv_buffer < mss as u64 {
            return Err(error(
                path,
                format!(
                    "rcv_buffer ({} bytes) is smaller than one segment (mss {mss})",
                    spec.rcv_buffer
                ),
            ));
        }
        if let Some(w) = spec.max_window.filter(|w| *w < mss as u64) {
            return Err(error(
                path,
                format!("max_window ({w} bytes) is smaller than one segment (mss {mss})"),
            ));
        }
        Ok(spec)
    }
}

fn resolve_tcp(path: &str, defaults: &TcpLayer, own: &TcpLayer) -> Res<TcpSpec> {
    let preset = own.preset.or(defaults.preset).unwrap_or(Preset::Rfc);
    let mut draft = TcpDraft::from_preset(preset);
    draft.apply(defaults);
    draft.apply(own);
    draft.finish(path)
}

// ---------------------------------------------------------------------------------------------
// Flows

const FLOW_TYPES: &[&str] = &["tcp", "cbr", "onoff", "short_tcp"];
const FLOW_COMMON_KEYS: &[&str] = &["type", "src", "dst", "start", "stop"];
const DEFAULT_PACKET_SIZE: u32 = 1000;
/// 20 B IPv4 header, 8 B UDP header, 1 B of payload.
const MIN_PACKET_SIZE: u32 = 29;

fn read_flows(
    f: &Field,
    nodes: &IndexMap<String, NodeSpec>,
    links: &IndexMap<String, LinkSpec>,
    tcp_defaults: &TcpLayer,
) -> Res<IndexMap<String, FlowSpec>> {
    let Value::Table(table) = f.value else {
        return Err(f.expected("a table of flows such as [flows.bulk]"));
    };
    let graph = Graph::new(nodes, links);
    let mut flows = IndexMap::new();
    for (name, value) in table {
        check_name(&f.path, name)?;
        let flow = Field {
            value,
            path: join(&f.path, name),
        };
        flows.insert(name.clone(), read_flow(&flow, nodes, &graph, tcp_defaults)?);
    }
    Ok(flows)
}

fn read_flow(
    f: &Field,
    nodes: &IndexMap<String, NodeSpec>,
    graph: &Graph,
    tcp_defaults: &TcpLayer,
) -> Res<FlowSpec> {
    let mut r = f.table("a table such as { type = \"tcp\", src = \"h1\", dst = \"h2\" }")?;
    let kind = r
        .req("type", "one of tcp, cbr, onoff, short_tcp")?
        .choice(FLOW_TYPES)?;
    let mut allowed = FLOW_COMMON_KEYS.to_vec();
    match kind {
        "tcp" => {
            allowed.push("size");
            allowed.extend(TCP_KEYS);
        }
        "cbr" => allowed.extend(["rate", "packet_size"]),
        "onoff" => allowed.extend(["rate", "packet_size", "on", "off", "distribution"]),
        _ => {
            allowed.extend(["arrival_rate", "sizes"]);
            allowed.extend(TCP_KEYS);
        }
    }
    r.allow(&allowed)?;
    let src = r.req("src", "a host name")?.host(nodes)?;
    let dst = r.req("dst", "a host name")?.host(nodes)?;
    if src == dst {
        return Err(f.error(format!("src and dst are both {src:?}")));
    }
    let start = opt(&mut r, "start", |f| f.duration())?.unwrap_or(SimDuration::ZERO);
    let start = SimTime::ZERO + start;
    let stop = match r.get("stop") {
        Some(field) => {
            let stop = SimTime::ZERO + field.duration()?;
            if stop <= start {
                return Err(field.error(format!(
                    "{} is not after start ({})",
                    units::format_duration(stop - SimTime::ZERO),
                    units::format_duration(start - SimTime::ZERO)
                )));
            }
            Some(stop)
        }
        None => None,
    };
    let flow_kind = match kind {
        "tcp" => {
            let size = opt(&mut r, "size", |f| f.positive_size())?;
            let own = read_tcp_layer(&mut r)?;
            FlowKind::Tcp {
                size,
                tcp: resolve_tcp(&f.path, tcp_defaults, &own)?,
            }
        }
        "cbr" => FlowKind::Cbr {
            rate: r.req("rate", RATE_SHORT)?.rate()?,
            packet_size: opt(&mut r, "packet_size", |f| f.size_u32(MIN_PACKET_SIZE))?
                .unwrap_or(DEFAULT_PACKET_SIZE),
        },
        "onoff" => FlowKind::OnOff {
            rate: r.req("rate", RATE_SHORT)?.rate()?,
            packet_size: opt(&mut r, "packet_size", |f| f.size_u32(MIN_PACKET_SIZE))?
                .unwrap_or(DEFAULT_PACKET_SIZE),
            on: r.req("on", DURATION_SHORT)?.positive_duration()?,
            off: r.req("off", DURATION_SHORT)?.duration()?,
            exponential: opt(&mut r, "distribution", |f| {
                f.choice(&["deterministic", "exponential"])
            })? == Some("exponential"),
        },
        _ => {
            let arrival_rate = r
                .req("arrival_rate", "a number of flows per second such as 10.0")?
                .positive_number()?;
            let sizes = read_sizes(&r.req(
                "sizes",
                "a table such as { dist = \"pareto\", mean = \"30KB\", shape = 1.2 }",
            )?)?;
            let own = read_tcp_layer(&mut r)?;
            FlowKind::ShortTcp {
                arrival_rate,
                sizes,
                tcp: resolve_tcp(&f.path, tcp_defaults, &own)?,
            }
        }
    };
    r.finish()?;
    if !graph.connected(&src, &dst) {
        return Err(f.error(format!(
            "{src} and {dst} are not connected (hosts do not forward; only routers do)"
        )));
    }
    Ok(FlowSpec {
        src,
        dst,
        start,
        stop,
        kind: flow_kind,
    })
}

fn read_sizes(f: &Field) -> Res<SizeDist> {
    let mut r = f.table("a table such as { dist = \"pareto\", mean = \"30KB\", shape = 1.2 }")?;
    let dist = r
        .req("dist", "one of pareto, lognormal, constant")?
        .choice(&["pareto", "lognormal", "constant"])?;
    let sizes = match dist {
        "pareto" => {
            r.allow(&["dist", "mean", "scale", "shape"])?;
            let shape_field = r.req("shape", "a number greater than 1")?;
            let shape = shape_field.positive_number()?;
            match (r.get("mean"), r.get("scale")) {
                (Some(mean), None) => {
                    if shape <= 1.0 {
                        return Err(shape_field.out_of_range(
                            "greater than 1 when mean is given (the mean is infinite otherwise)",
                        ));
                    }
                    let mean = mean.positive_size()? as f64;
                    SizeDist::Pareto {
                        scale: mean * (shape - 1.0) / shape,
                        shape,
                    }
                }
                (None, Some(scale)) => SizeDist::Pareto {
                    scale: scale.positive_size()? as f64,
                    shape,
                },
                (Some(_), Some(_)) => return Err(f.error("give either mean or scale, not both")),
                (None, None) => {
                    return Err(f.error(
                        "missing mean or scale; pareto needs one of them, e.g. \
                         { dist = \"pareto\", mean = \"30KB\", shape = 1.2 }",
                    ))
                }
            }
        }
        "lognormal" => {
            r.allow(&["dist", "median", "mu", "sigma"])?;
            let sigma_field = r.req("sigma", "a number >= 0 such as 1.0")?;
            let sigma = sigma_field.number()?;
            if sigma < 0.0 {
                return Err(sigma_field.out_of_range("at least 0"));
            }
            let mu = match (r.get("median"), r.get("mu")) {
                (Some(median), None) => (median.positive_size()? as f64).ln(),
                (None, Some(mu)) => mu.number()?,
                (Some(_), Some(_)) => return Err(f.error("give either median or mu, not both")),
                (None, None) => {
                    return Err(f.error(
                        "missing median or mu; lognormal needs one of them, e.g. \
                         { dist = \"lognormal\", median = \"10KB\", sigma = 1.0 }",
                    ))
                }
            };
            SizeDist::Lognormal { mu, sigma }
        }
        _ => {
            r.allow(&["dist", "size"])?;
            SizeDist::Constant {
                bytes: r.req("size", SIZE_SHORT)?.positive_size()?,
            }
        }
    };
    r.finish()?;
    Ok(sizes)
}

/// Who is linked to whom, to check that flows have a path through routers.
struct Graph<'n> {
    nodes: &'n IndexMap<String, NodeSpec>,
    neighbours: IndexMap<&'n str, Vec<&'n str>>,
}

impl<'n> Graph<'n> {
    fn new(nodes: &'n IndexMap<String, NodeSpec>, links: &'n IndexMap<String, LinkSpec>) -> Self {
        let mut neighbours: IndexMap<&str, Vec<&str>> = IndexMap::new();
        for link in links.values() {
            neighbours.entry(&link.a).or_default().push(&link.b);
            neighbours.entry(&link.b).or_default().push(&link.a);
        }
        Graph { nodes, neighbours }
    }

    /// Whether a path leads from `src` to `dst` through routers only (breadth-first).
    fn connected(&self, src: &str, dst: &str) -> bool {
        let mut seen: HashSet<&str> = HashSet::from([src]);
        let mut queue: VecDeque<&str> = VecDeque::from([src]);
        while let Some(at) = queue.pop_front() {
            for &next in self.neighbours.get(at).into_iter().flatten() {
                if next == dst {
                    return true;
                }
                if self.nodes[next].kind == NodeKind::Router && seen.insert(next) {
                    queue.push_back(next);
                }
            }
        }
        false
    }
}

// ---------------------------------------------------------------------------------------------
// Routing

fn read_routing(
    f: &Field,
    nodes: &IndexMap<String, NodeSpec>,
    links: &IndexMap<String, LinkSpec>,
) -> Res<RoutingSpec> {
    let mut r = f.table(A_TABLE)?;
    r.allow(&["metric", "routes"])?;
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
    r.finish()?;
    Ok(RoutingSpec { metric, routes })
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Every section and most keys, with values different from the defaults.
    const FULL: &str = r#"
seed = 7
duration = "60s"

[limits]
max_events = 1000000
max_wall = "10min"

[nodes]
h1 = "host"
h2 = "host"
r1 = { type = "router" }
r2 = { type = "router", hook = { type = "impair", drop = 0.01, delay = "1ms" } }

[links.access]
a = "h1"
b = "r1"
rate = "100Mbps"
delay = "1ms"

[links.bottleneck]
a = "r1"
b = "r2"
rate = "10Mbps"
delay = "20ms"
mtu = 1400
queue = { type = "red", limit = 100, min_th = 10, max_th = 30, max_p = 0.2, w_q = 0.004, gentle = false, ecn = true, mean_packet_size = 1500 }
loss = { type = "uniform", rate = 0.01, direction = "a_to_b" }

[links.bottleneck.b_to_a]
rate = "1Mbps"
queue = { type = "droptail", limit = "64KB" }

[links.exit]
a = "r2"
b = "h2"
rate = "100Mbps"
delay = "1ms"
loss = { type = "gilbert_elliott", p_good_to_bad = 0.01, p_bad_to_good = 0.1 }

[tcp]
preset = "ns2"
variant = "sack"

[flows.bulk]
type = "tcp"
src = "h1"
dst = "h2"
start = "1.5s"
stop = "50s"
size = "100KB"
mss = 1460
initial_window = "rfc3390"
rcv_buffer = "64KiB"
growth = "abc"
abc_limit = 3
dupthresh = 4
limited_transmit = true
delayed_ack = true
delack_timeout = "40ms"
delack_count = 3
max_sack_blocks = 2
rto_initial = "2s"
rto_min = "300ms"
rto_max = "30s"
clock_granularity = "1ms"
header_bytes = 52
cc = "reno"

[flows.web]
type = "short_tcp"
src = "h1"
dst = "h2"
arrival_rate = 10.0
sizes = { dist = "pareto", mean = "30KB", shape = 1.2 }
preset = "rfc"

[flows.voice]
type = "cbr"
src = "h2"
dst = "h1"
rate = "64Kbps"
packet_size = 200

[flows.burst]
type = "onoff"
src = "h1"
dst = "h2"
rate = "1Mbps"
on = "500ms"
off = "1.5s"
distribution = "exponential"

[routing]
metric = "delay"
routes = [{ at = "r1", to = "h2", via = "bottleneck" }]

[trace]
interval = "100ms"
"#;

    fn load(text: &str, overrides: &[&str], seed: Option<u64>) -> Result<Loaded, ScenarioError> {
        let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
        load_scenario(text, &overrides, seed)
    }

    fn spec(text: &str, overrides: &[&str]) -> Spec {
        load(text, overrides, None).unwrap().spec
    }

    fn ms(n: u64) -> SimDuration {
        SimDuration::from_millis(n)
    }

    fn full_spec() -> Spec {
        let host = NodeSpec {
            kind: NodeKind::Host,
            hook: None,
        };
        let router = NodeSpec {
            kind: NodeKind::Router,
            hook: None,
        };
        let droptail100 = QueueSpec::DropTail {
            limit: QueueLimit::Packets(100),
        };
        let plain = |a: &str, b: &str, loss: LossSpec| {
            let dir = DirSpec {
                rate: Rate::mbps(100),
                delay: ms(1),
                queue: droptail100.clone(),
                loss,
            };
            LinkSpec {
                a: a.into(),
                b: b.into(),
                rate: Rate::mbps(100),
                delay: ms(1),
                mtu: 1500,
                a_to_b: dir.clone(),
                b_to_a: dir,
            }
        };
        let ge = LossSpec::GilbertElliott {
            p_good_to_bad: 0.01,
            p_bad_to_good: 0.1,
            loss_good: 0.0,
            loss_bad: 1.0,
        };
        let red = QueueSpec::Red {
            limit: QueueLimit::Packets(100),
            min_th: 10.0,
            max_th: 30.0,
            max_p: 0.2,
            w_q: 0.004,
            gentle: false,
            ecn: true,
            mean_packet_size: 1500,
        };
        let bulk_tcp = TcpSpec {
            recovery: Recovery::Sack,
            cc: CcAlgorithm::Reno,
            mss: 1460,
            header_bytes: 52,
            initial_window: InitialWindow::Rfc3390,
            // ns2 preset: 20 packets of this flow's MSS.
            initial_ssthresh: Some(20 * 1460),
            max_window: Some(20 * 1460),
            rcv_buffer: 65_536,
            growth: Growth::ByteCounting { limit_segments: 3 },
            dupthresh: 4,
            limited_transmit: true,
            delayed_ack: true,
            delack_timeout: ms(40),
            delack_count: 3,
            max_sack_blocks: 2,
            rto_initial: SimDuration::from_secs(2),
            rto_min: ms(300),
            rto_max: SimDuration::from_secs(30),
            clock_granularity: ms(1),
            ..TcpSpec::ns2()
        };
        let web_tcp = TcpSpec {
            recovery: Recovery::Sack,
            ..TcpSpec::default()
        };
        Spec {
            seed: 7,
            duration: SimDuration::from_secs(60),
            limits: Limits {
                max_events: Some(1_000_000),
                max_wall_seconds: Some(600.0),
            },
            nodes: IndexMap::from([
                ("h1".to_string(), host.clone()),
                ("h2".to_string(), host),
                ("r1".to_string(), router),
                (
                    "r2".to_string(),
                    NodeSpec {
                        kind: NodeKind::Router,
                        hook: Some(HookSpec::Impair {
                            drop: 0.01,
                            delay: ms(1),
                        }),
                    },
                ),
            ]),
            links: IndexMap::from([
                ("access".to_string(), plain("h1", "r1", LossSpec::None)),
                (
                    "bottleneck".to_string(),
                    LinkSpec {
                        a: "r1".into(),
                        b: "r2".into(),
                        rate: Rate::mbps(10),
                        delay: ms(20),
                        mtu: 1400,
                        a_to_b: DirSpec {
                            rate: Rate::mbps(10),
                            delay: ms(20),
                            queue: red,
                            loss: LossSpec::Uniform { rate: 0.01 },
                        },
                        b_to_a: DirSpec {
                            rate: Rate::mbps(1),
                            delay: ms(20),
                            queue: QueueSpec::DropTail {
                                limit: QueueLimit::Bytes(64_000),
                            },
                            loss: LossSpec::None,
                        },
                    },
                ),
                ("exit".to_string(), plain("r2", "h2", ge)),
            ]),
            flows: IndexMap::from([
                (
                    "bulk".to_string(),
                    FlowSpec {
                        src: "h1".into(),
                        dst: "h2".into(),
                        start: SimTime::from_millis(1500),
                        stop: Some(SimTime::from_secs(50)),
                        kind: FlowKind::Tcp {
                            size: Some(100_000),
                            tcp: bulk_tcp,
                        },
                    },
                ),
                (
                    "web".to_string(),
                    FlowSpec {
                        src: "h1".into(),
                        dst: "h2".into(),
                        start: SimTime::ZERO,
                        stop: None,
                        kind: FlowKind::ShortTcp {
                            arrival_rate: 10.0,
                            sizes: SizeDist::Pareto {
                                scale: 30_000.0 * (1.2 - 1.0) / 1.2,
                                shape: 1.2,
                            },
                            tcp: web_tcp,
                        },
                    },
                ),
                (
                    "voice".to_string(),
                    FlowSpec {
                        src: "h2".into(),
                        dst: "h1".into(),
                        start: SimTime::ZERO,
                        stop: None,
                        kind: FlowKind::Cbr {
                            rate: Rate::bps(64_000),
                            packet_size: 200,
                        },
                    },
                ),
                (
                    "burst".to_string(),
                    FlowSpec {
                        src: "h1".into(),
                        dst: "h2".into(),
                        start: SimTime::ZERO,
                        stop: None,
                        kind: FlowKind::OnOff {
                            rate: Rate::mbps(1),
                            packet_size: 1000,
                            on: ms(500),
                            off: ms(1500),
                            exponential: true,
                        },
                    },
                ),
            ]),
            routing: RoutingSpec {
                metric: RouteMetric::Delay,
                routes: vec![RouteSpec {
                    at: "r1".into(),
                    to: "h2".into(),
                    via: "bottleneck".into(),
                }],
            },
            trace: TraceSpec {
                interval: Some(ms(100)),
            },
        }
    }

    const MINIMAL: &str = r#"
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

    fn f1_tcp(spec: &Spec) -> &TcpSpec {
        match &spec.flows["f1"].kind {
            FlowKind::Tcp { tcp, .. } => tcp,
            other => panic!("f1 is not a TCP flow: {other:?}"),
        }
    }

    fn message(text: &str, overrides: &[&str]) -> String {
        load(text, overrides, None).unwrap_err().to_string()
    }

    #[test]
    fn a_full_scenario_parses_into_the_exact_spec_expected() {
        assert_eq!(spec(FULL, &[]), full_spec());
    }

    #[test]
    fn a_minimal_scenario_gets_every_default() {
        let s = spec(MINIMAL, &[]);
        assert_eq!(s.seed, 1);
        assert_eq!(s.limits, Limits::default());
        assert_eq!(s.routing.metric, RouteMetric::Hops);
        assert!(s.routing.routes.is_empty());
        assert_eq!(s.trace.interval, None);
        let l = &s.links["bottleneck"];
        assert_eq!(l.mtu, 1500);
        for dir in [&l.a_to_b, &l.b_to_a] {
            assert_eq!(dir.rate, Rate::mbps(10));
            assert_eq!(dir.delay, ms(20));
            assert_eq!(
                dir.queue,
                QueueSpec::DropTail {
                    limit: QueueLimit::Packets(100)
                }
            );
            assert_eq!(dir.loss, LossSpec::None);
        }
        let f = &s.flows["f1"];
        assert_eq!((f.start, f.stop), (SimTime::ZERO, None));
        assert_eq!(
            f.kind,
            FlowKind::Tcp {
                size: None,
                tcp: TcpSpec::default()
            }
        );
    }

    #[test]
    fn a_numeric_override_replaces_a_value() {
        let s = spec(FULL, &["links.bottleneck.loss.rate=0.05"]);
        assert_eq!(
            s.links["bottleneck"].a_to_b.loss,
            LossSpec::Uniform { rate: 0.05 }
        );
    }

    #[test]
    fn a_bare_string_override_is_taken_as_a_string() {
        let s = spec(
            MINIMAL,
            &["links.bottleneck.rate=20Mbps", "flows.f1.variant=reno"],
        );
        assert_eq!(s.links["bottleneck"].rate, Rate::mbps(20));
        assert_eq!(s.links["bottleneck"].b_to_a.rate, Rate::mbps(20));
        assert_eq!(f1_tcp(&s).recovery, Recovery::Reno);
    }

    #[test]
    fn an_override_of_a_new_key_creates_the_tables_on_its_path() {
        let s = spec(
            MINIMAL,
            &["links.bottleneck.a_to_b.delay=5ms", "trace.interval=1s"],
        );
        assert_eq!(s.links["bottleneck"].a_to_b.delay, ms(5));
        assert_eq!(s.links["bottleneck"].b_to_a.delay, ms(20));
        assert_eq!(s.trace.interval, Some(SimDuration::from_secs(1)));
    }

    #[test]
    fn an_override_can_give_an_inline_table_or_a_quoted_string() {
        let s = spec(
            MINIMAL,
            &[
                "links.bottleneck.loss={type=\"uniform\", rate=0.1}",
                "duration=\"2min\"",
            ],
        );
        assert_eq!(
            s.links["bottleneck"].b_to_a.loss,
            LossSpec::Uniform { rate: 0.1 }
        );
        assert_eq!(s.duration, SimDuration::from_secs(120));
    }

    #[test]
    fn an_override_of_inf_is_accepted_for_a_window() {
        let s = spec(
            MINIMAL,
            &["flows.f1.max_window=inf", "flows.f1.initial_ssthresh=inf"],
        );
        assert_eq!(f1_tcp(&s).max_window, None);
        assert_eq!(f1_tcp(&s).initial_ssthresh, None);
    }

    #[test]
    fn an_override_without_an_equals_sign_is_rejected() {
        let e = load(MINIMAL, &["links.bottleneck.rate"], None).unwrap_err();
        assert_eq!(e.path, "");
        assert_eq!(
            e.message,
            "--set \"links.bottleneck.rate\": expected PATH=VALUE"
        );
    }

    #[test]
    fn an_override_through_a_value_that_is_not_a_table_names_that_value() {
        let e = load(MINIMAL, &["nodes.h1.hook.type=impair"], None).unwrap_err();
        assert_eq!(e.path, "nodes.h1");
        assert_eq!(
            e.message,
            "not a table (found string \"host\"), so --set \"nodes.h1.hook.type=impair\" \
             cannot set a key inside it"
        );
    }

    #[test]
    fn the_seed_argument_replaces_the_scenario_seed_and_is_recorded() {
        let loaded = load(FULL, &[], Some(42)).unwrap();
        assert_eq!(loaded.spec.seed, 42);
        let tree: Table = loaded.resolved_toml.parse().unwrap();
        assert_eq!(tree["seed"], Value::Integer(42));
        // The seed keeps its place in the file.
        assert_eq!(tree.keys().next().map(String::as_str), Some("seed"));
    }

    #[test]
    fn the_default_seed_is_written_into_the_resolved_toml() {
        let loaded = load(MINIMAL, &[], None).unwrap();
        assert_eq!(loaded.spec.seed, 1);
        assert!(loaded.resolved_toml.starts_with("seed = 1\n"));
    }

    #[test]
    fn a_seed_override_through_set_also_works() {
        assert_eq!(spec(MINIMAL, &["seed=9"]).seed, 9);
    }

    #[test]
    fn the_resolved_toml_loads_again_into_the_same_spec() {
        let overrides = [
            "links.bottleneck.loss.rate=0.05",
            "links.exit.rate=20Mbps",
            "flows.bulk.variant=newreno",
            "flows.extra={type=\"cbr\", src=\"h1\", dst=\"h2\", rate=\"1Mbps\"}",
        ];
        let first = load(FULL, &overrides, Some(3)).unwrap();
        let again = load(&first.resolved_toml, &[], None).unwrap();
        assert_eq!(again.spec, first.spec);
        assert_eq!(again.spec.seed, 3);
        assert_eq!(again.spec.flows.len(), 5);
        assert_eq!(again.resolved_toml, first.resolved_toml);
    }

    #[test]
    fn link_loss_applies_to_the_directions_it_names_and_direction_tables_override() {
        let s = spec(
            MINIMAL,
            &[
                "links.bottleneck.loss={type=\"ber\", ber=1e-6, direction=\"b_to_a\"}",
                "links.bottleneck.queue={type=\"droptail\", limit=50}",
                "links.bottleneck.a_to_b.queue={type=\"droptail\", limit=\"30KB\"}",
            ],
        );
        let l = &s.links["bottleneck"];
        assert_eq!(l.a_to_b.loss, LossSpec::None);
        assert_eq!(l.b_to_a.loss, LossSpec::BitError { ber: 1e-6 });
        assert_eq!(
            l.a_to_b.queue,
            QueueSpec::DropTail {
                limit: QueueLimit::Bytes(30_000)
            }
        );
        assert_eq!(
            l.b_to_a.queue,
            QueueSpec::DropTail {
                limit: QueueLimit::Packets(50)
            }
        );

        let s = spec(
            MINIMAL,
            &[
                "links.bottleneck.loss={type=\"uniform\", rate=0.2}",
                "links.bottleneck.b_to_a.loss={type=\"none\"}",
            ],
        );
        let l = &s.links["bottleneck"];
        assert_eq!(l.a_to_b.loss, LossSpec::Uniform { rate: 0.2 });
        assert_eq!(l.b_to_a.loss, LossSpec::None);
    }

    #[test]
    fn red_thresholds_default_to_ns2_values_in_the_unit_of_the_limit() {
        let s = spec(MINIMAL, &["links.bottleneck.queue={type=\"red\"}"]);
        assert_eq!(
            s.links["bottleneck"].a_to_b.queue,
            QueueSpec::Red {
                limit: QueueLimit::Packets(100),
                min_th: 5.0,
                max_th: 15.0,
                max_p: 0.1,
                w_q: 0.002,
                gentle: true,
                ecn: false,
                mean_packet_size: 1000,
            }
        );
        let s = spec(
            MINIMAL,
            &["links.bottleneck.queue={type=\"red\", limit=\"100KB\", max_th=\"30KB\"}"],
        );
        let QueueSpec::Red {
            limit,
            min_th,
            max_th,
            ..
        } = s.links["bottleneck"].a_to_b.queue
        else {
            panic!("not RED");
        };
        assert_eq!(
            (limit, min_th, max_th),
            (QueueLimit::Bytes(100_000), 5_000.0, 30_000.0)
        );
    }

    #[test]
    fn the_flow_preset_comes_first_then_the_tcp_table_then_the_flow_keys() {
        // [tcp] says ns2 and mss 1200; the flow says rfc: the flow's preset wins, but [tcp]'s
        // mss is still applied over it, and the flow's own rto_min over both.
        let s = spec(
            MINIMAL,
            &[
                "tcp.preset=ns2",
                "tcp.mss=1200",
                "tcp.rto_min=500ms",
                "flows.f1.preset=rfc",
                "flows.f1.rto_min=100ms",
            ],
        );
        assert_eq!(
            *f1_tcp(&s),
            TcpSpec {
                mss: 1200,
                rto_min: ms(100),
                ..TcpSpec::default()
            }
        );
        // With no flow preset, [tcp]'s preset is the base.
        let s = spec(MINIMAL, &["tcp.preset=ns2", "tcp.rto_min=500ms"]);
        assert_eq!(
            *f1_tcp(&s),
            TcpSpec {
                rto_min: ms(500),
                ..TcpSpec::ns2()
            }
        );
    }

    #[test]
    fn the_ns2_preset_alone_is_exactly_tcpspec_ns2() {
        let s = spec(MINIMAL, &["flows.f1.preset=ns2"]);
        assert_eq!(*f1_tcp(&s), TcpSpec::ns2());
    }

    #[test]
    fn cc_takes_a_name_with_its_defaults_or_a_table_of_parameters() {
        use crate::cc::{CongestionControl, CubicConfig, FastConfig, VegasConfig};
        let s = spec(MINIMAL, &["tcp.cc=cubic"]);
        assert_eq!(f1_tcp(&s).cc, CcAlgorithm::Cubic(CubicConfig::default()));
        let s = spec(
            MINIMAL,
            &[r#"flows.f1.cc={ type = "cubic", c = 0.3, beta = 0.8 }"#],
        );
        let expected = CubicConfig {
            c: 0.3,
            beta: 0.8,
            ..CubicConfig::default()
        };
        assert_eq!(f1_tcp(&s).cc, CcAlgorithm::Cubic(expected));
        // A flow's cc replaces [tcp]'s whole, parameters included.
        let s = spec(
            MINIMAL,
            &[
                r#"tcp.cc={ type = "vegas", alpha = 2, beta = 4 }"#,
                r#"flows.f1.cc={ type = "fast", alpha = 50 }"#,
            ],
        );
        let fast = FastConfig {
            alpha: 50.0,
            ..FastConfig::default()
        };
        assert_eq!(f1_tcp(&s).cc, CcAlgorithm::Fast(fast));
        let s = spec(
            MINIMAL,
            &[r#"tcp.cc={ type = "vegas", alpha = 2, beta = 4 }"#],
        );
        let vegas = VegasConfig {
            alpha: 2.0,
            beta: 4.0,
            ..VegasConfig::default()
        };
        assert_eq!(f1_tcp(&s).cc, CcAlgorithm::Vegas(vegas));
        for name in ["reno", "highspeed", "scalable", "bic", "vegas", "fast"] {
            let s = spec(MINIMAL, &[&format!("tcp.cc={name}")]);
            let t = f1_tcp(&s);
            assert_eq!(crate::cc::AnyCc::new(&t.cc, t.growth).name(), name);
        }
        assert_eq!(
            spec(MINIMAL, &["tcp.cc={type=\"reno\"}"]),
            spec(MINIMAL, &[])
        );
        // The table survives the resolved scenario.
        let first = load(
            MINIMAL,
            &[r#"flows.f1.cc={ type = "bic", s_max = 16 }"#],
            None,
        )
        .unwrap();
        let again = load(&first.resolved_toml, &[], None).unwrap();
        assert_eq!(again.spec, first.spec);
    }

    #[test]
    fn an_unknown_cc_algorithm_or_parameter_is_rejected_naming_the_field() {
        assert_eq!(
            message(MINIMAL, &["flows.f1.cc=westwood"]),
            "flows.f1.cc: \"westwood\" is not one of reno, highspeed, scalable, bic, cubic, \
             vegas, fast, xcp"
        );
        assert_eq!(
            message(MINIMAL, &[r#"flows.f1.cc={ type = "cubic", alpha = 0.5 }"#]),
            "flows.f1.cc.alpha: unknown key; allowed: type, c, beta, fast_convergence, \
             reno_friendly"
        );
        assert_eq!(
            message(MINIMAL, &[r#"tcp.cc={ type = "reno", beta = 0.5 }"#]),
            "tcp.cc.beta: unknown key; allowed: type"
        );
        assert_eq!(
            message(MINIMAL, &[r#"tcp.cc={ beta = 0.5 }"#]),
            "tcp.cc.type: missing; one of reno, highspeed, scalable, bic, cubic, vegas, fast, xcp"
        );
        assert_eq!(
            message(MINIMAL, &["tcp.cc=3"]),
            "tcp.cc: expected one of reno, highspeed, scalable, bic, cubic, vegas, fast, xcp, or \
             a table such as { type = \"cubic\", beta = 0.7 }, found integer 3"
        );
        assert_eq!(
            message(MINIMAL, &[r#"tcp.cc={ type = "cubic", beta = 1.0 }"#]),
            "tcp.cc.beta: 1.0 is out of range; must be greater than 0 and less than 1"
        );
        assert_eq!(
            message(
                MINIMAL,
                &[r#"tcp.cc={ type = "vegas", alpha = 4, beta = 2 }"#]
            ),
            "tcp.cc: alpha (4) must be at most beta (2)"
        );
        assert_eq!(
            message(
                MINIMAL,
                &[r#"tcp.cc={ type = "highspeed", high_p = 0.01 }"#]
            ),
            "tcp.cc: high_p (0.01) must be less than low_p (0.001)"
        );
    }

    #[test]
    fn pkt_and_seg_sizes_are_multiples_of_the_flows_final_mss() {
        let s = spec(
            MINIMAL,
            &[
                "tcp.initial_ssthresh=20pkt",
                "tcp.rcv_buffer=100seg",
                "flows.f1.mss=1000",
                "flows.f1.max_window=\"30 pkt\"",
            ],
        );
        let tcp = f1_tcp(&s);
        assert_eq!(tcp.initial_ssthresh, Some(20_000));
        assert_eq!(tcp.rcv_buffer, 100_000);
        assert_eq!(tcp.max_window, Some(30_000));
    }

    #[test]
    fn short_tcp_size_distributions_convert_to_their_parameters() {
        let base = "flows.f1={type=\"short_tcp\", src=\"h1\", dst=\"h2\", arrival_rate=5, sizes=";
        let sizes = |dist: &str| {
            let s = spec(MINIMAL, &[&format!("{base}{dist}}}")]);
            match &s.flows["f1"].kind {
                FlowKind::ShortTcp {
                    sizes,
                    arrival_rate,
                    ..
                } => {
                    assert_eq!(*arrival_rate, 5.0);
                    sizes.clone()
                }
                other => panic!("{other:?}"),
            }
        };
        assert_eq!(
            sizes("{dist=\"pareto\", scale=\"10KB\", shape=1.5}"),
            SizeDist::Pareto {
                scale: 10_000.0,
                shape: 1.5
            }
        );
        assert_eq!(
            sizes("{dist=\"lognormal\", median=\"10KB\", sigma=1.0}"),
            SizeDist::Lognormal {
                mu: 10_000f64.ln(),
                sigma: 1.0
            }
        );
        assert_eq!(
            sizes("{dist=\"lognormal\", mu=9.2, sigma=0.5}"),
            SizeDist::Lognormal {
                mu: 9.2,
                sigma: 0.5
            }
        );
        assert_eq!(
            sizes("{dist=\"constant\", size=\"100KB\"}"),
            SizeDist::Constant { bytes: 100_000 }
        );
    }

    #[test]
    fn a_toml_syntax_error_gives_line_and_column() {
        let e = load("duration = \"10s\"\nnodes = [\n", &[], None).unwrap_err();
        assert_eq!(e.path, "");
        assert!(
            e.message
                .starts_with("TOML syntax error at line 3, column 1: "),
            "{}",
            e.message
        );
    }

    #[test]
    fn flows_connect_through_routers_but_not_through_hosts() {
        let mut g = String::from(MINIMAL);
        g.push_str("[links.back]\na = \"h2\"\nb = \"h3\"\nrate = \"1Mbps\"\ndelay = \"1ms\"\n");
        let text = g.replace("r1 = \"router\"", "r1 = \"router\"\nh3 = \"host\"");
        assert!(load(&text, &[], None).is_ok());
        assert_eq!(
            message(&text, &["flows.f1.dst=h3"]),
            "flows.f1: h1 and h3 are not connected (hosts do not forward; only routers do)"
        );
        // Turning h2 into a router opens the path.
        let s = spec(&text, &["nodes.h2=router", "flows.f1.dst=h3"]);
        assert_eq!(s.flows["f1"].dst, "h3");
    }

    #[test]
    fn unknown_keys_list_what_is_allowed_at_that_level() {
        assert_eq!(
            message(MINIMAL, &["links.bottleneck.rat=1"]),
            "links.bottleneck.rat: unknown key; allowed: a, b, rate, delay, mtu, queue, loss, \
             a_to_b, b_to_a"
        );
        assert_eq!(
            message(MINIMAL, &["durations=1"]),
            "durations: unknown key; allowed: seed, duration, limits, nodes, links, tcp, flows, \
             routing, trace"
        );
    }

    #[test]
    fn long_name_lists_are_cut_after_twenty() {
        let names: Vec<String> = (0..25).map(|i| format!("n{i}")).collect();
        assert_eq!(
            list_names(names.iter()),
            "n0, n1, n2, n3, n4, n5, n6, n7, n8, n9, n10, n11, n12, n13, n14, n15, n16, n17, \
             n18, n19, ... (25 in all)"
        );
    }

    #[test]
    fn syntax_error_positions_agree_with_what_toml_itself_reports() {
        for text in [
            "duration = \"10s\"\nnodes = { a = 1, \n",
            "a = 1\nb = \"x\ny = 2\n",
            "é = 1\n[t]\nk = = 2\n",
            "a = 1\na = 2\n",
        ] {
            let toml_says = text.parse::<Table>().unwrap_err().to_string();
            let ours = parse_toml(text).unwrap_err();
            let position = ours
                .message
                .strip_prefix("TOML syntax error at ")
                .and_then(|m| m.split(':').next())
                .unwrap();
            assert!(
                toml_says.contains(position),
                "{position:?} not in {toml_says:?}"
            );
        }
    }

    #[test]
    fn a_link_mtu_below_the_ipv4_minimum_is_rejected() {
        assert_eq!(
            message(MINIMAL, &["links.access.mtu=67"]),
            "links.access.mtu: 67 is out of range; must be from 68 to 4294967295"
        );
        assert_eq!(
            spec(MINIMAL, &["links.access.mtu=\"9KB\""]).links["access"].mtu,
            9000
        );
    }

    #[test]
    fn the_wall_clock_limit_is_converted_to_exact_seconds() {
        let s = spec(MINIMAL, &["limits.max_wall=1.1s"]);
        assert_eq!(s.limits.max_wall_seconds, Some(1.1));
        assert_eq!(s.limits.max_events, None);
    }

    #[test]
    fn syntax_error_positions_count_characters_not_bytes() {
        assert_eq!(line_and_column("ab\ncé d", 7), (2, 4));
        assert_eq!(line_and_column("x", 0), (1, 1));
    }
}
