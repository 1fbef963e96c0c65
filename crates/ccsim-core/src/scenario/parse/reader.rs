// SPDX-License-Identifier: MIT
//! How every section is read: a `Reader` per table and a `Field` per value, and the messages
//! they give. This file implements the rules of "Values" and "Error messages" in
//! `docs/scenario.md` (the "Any field" and "Units" tables); every section file reads its keys
//! and values through these two types, so every message has the same shape.
//!
//! ```text
//!   Field { value, path: "links.bottleneck" } ──.table()──> Reader
//!       Reader.allow(&["a", "b", "rate", ...])   an unknown key is an error listing these
//!       Reader.req("rate", what) / .get / opt()  ──> Field { path: "links.bottleneck.rate" }
//!           Field.rate() / .duration() / .size() / .choice() ...  ──> a value or an error
//!       Reader.finish()                           every allowed key present was read
//! ```
//!
//! Each error carries the field's full path, so a message reads
//! `links.bottleneck.rate: "10 Mbs" is not a rate, e.g. "10Mbps"` however deep the value was.

use indexmap::IndexMap;
use toml::{Table, Value};

use crate::scenario::spec::{LinkSpec, NodeKind, NodeSpec};
use crate::scenario::units;
use crate::scenario::ScenarioError;
use crate::time::{Rate, SimDuration, MAX_SCENARIO_DURATION};

pub(super) type Res<T> = Result<T, ScenarioError>;

// ---------------------------------------------------------------------------------------------
// Messages

const DURATION: &str = "a duration such as \"1.5s\" (units ns, us, ms, s, min)";
/// The range of every duration; `MAX_SCENARIO_DURATION` is 2^62 ns.
const DURATION_RULE: &str = "at most \"4611686018427387904ns\" (2^62 ns, about 146 years)";
pub(super) const DURATION_SHORT: &str = "a duration such as \"1.5s\"";
const RATE: &str = "a rate such as \"10Mbps\" (units bps, Kbps, Mbps, Gbps)";
pub(super) const RATE_SHORT: &str = "a rate such as \"10Mbps\"";
const SIZE: &str =
    "a size such as \"64KB\" (units B, KB, MB, GB, KiB, MiB, GiB) or an integer number of bytes";
pub(super) const SIZE_SHORT: &str = "a size such as \"64KB\"";
pub(super) const NODE_NAME: &str = "a node name";
pub(super) const LINK_NAME: &str = "a link name";
pub(super) const A_TABLE: &str = "a table";

/// How a value is shown after "found": `integer 5`, `string "x"`.
pub(super) fn describe(v: &Value) -> String {
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

pub(super) fn error(path: &str, message: impl Into<String>) -> ScenarioError {
    ScenarioError {
        path: path.to_string(),
        message: message.into(),
    }
}

/// `path.key`, quoting a key that is not a bare TOML key.
///
/// Every value read gets its path, errors or not, so this is on the reader's every step: built
/// with `push_str`, not `format!` (the formatting machinery was 12 % of reading a 10,000-host-
/// pair scenario's 2.1 G instructions, issue 33).
pub(super) fn join(path: &str, key: &str) -> String {
    let bare = !key.is_empty()
        && key
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'-');
    let mut joined = String::with_capacity(path.len() + key.len() + 3);
    joined.push_str(path);
    if !path.is_empty() {
        joined.push('.');
    }
    if bare {
        joined.push_str(key);
    } else {
        joined.push_str(&format!("{key:?}"));
    }
    joined
}

/// Names for a message: all of them, or the first 20 and how many there are.
pub(super) fn list_names<'n>(names: impl Iterator<Item = &'n String>) -> String {
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

/// A node, link, flow or CBR source name. Names are path segments three ways: of `--set` paths
/// (`links.NAME.rate`, split at `.`), of capture file names (`<node>-<link>.pcap` under the
/// output folder, where a `/` would name a folder that does not exist and a line break would
/// end up in a file name), and of random-stream identities (`link/NAME/ab`, where a `/` would
/// let two different components share an identity and so a stream). Hence no `.`, no `/`, and
/// no control character (NUL, line breaks, escapes, which also garble the terminal when an
/// error names them), and no bidirectional control (Unicode UAX #9 §2.1-2.6: LRE ... PDI,
/// LRM, RLM, ALM), which reorders what follows it on the terminal and in the report: a flow
/// named with U+202E showed `ccsim run`'s figures on its line reversed, the "Trojan Source"
/// display of CVE-2021-42574. No `:` either: names are joined with it in capture points
/// (`NODE:LINK`) and in results (`LINK:DIRECTION`). Any other character, Hangul included, is
/// allowed.
pub(super) fn check_name(parent: &str, name: &str) -> Res<()> {
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
    } else if name.contains('/') {
        Err(error(
            parent,
            format!(
                "{name:?} is not a valid name: it contains \"/\" (names appear in file names \
                 and random-stream identities)"
            ),
        ))
    } else if name.contains(':') {
        // A node named `a:b` could not be captured (`--pcap a:b` read node `a`, link `b`),
        // and `LINK:DIRECTION` in the results would be ambiguous (issue 32).
        Err(error(
            parent,
            format!(
                "{name:?} is not a valid name: it contains \":\" (names appear in NODE:LINK \
                 capture points and LINK:DIRECTION results)"
            ),
        ))
    } else if let Some(c) = name.chars().find(|c| c.is_control()) {
        Err(error(
            parent,
            format!(
                "{name:?} is not a valid name: it contains the control character {c:?} \
                 (names appear in file names and on the terminal)"
            ),
        ))
    } else if let Some(c) = name.chars().find(|c| is_bidi_control(*c)) {
        Err(error(
            parent,
            format!(
                "{name:?} is not a valid name: it contains the bidirectional control {c:?} \
                 (it reorders the text after it on the terminal)"
            ),
        ))
    } else {
        Ok(())
    }
}

/// The explicit bidirectional formatting characters of Unicode UAX #9 §2: the embeddings and
/// overrides (LRE, RLE, PDF, LRO, RLO: U+202A-U+202E), the isolates (LRI, RLI, FSI, PDI:
/// U+2066-U+2069) and the marks (LRM U+200E, RLM U+200F, ALM U+061C).
fn is_bidi_control(c: char) -> bool {
    matches!(
        c,
        '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' | '\u{061C}'
    )
}

// ---------------------------------------------------------------------------------------------
// Named entries: [nodes], [links.NAME], [flows.NAME]

/// The sections whose entries are named, what one entry is called, and the keys every entry
/// must have (a node written as a table needs `type`).
const NAMED_SECTIONS: &[(&str, &str, &[&str])] = &[
    ("nodes", "node", &["type"]),
    ("links", "link", &["a", "b"]),
    ("flows", "flow", &["type", "src", "dst"]),
];

/// `no link named "bottlenek"; links are bottleneck, access`: the entry `name` is not among
/// `existing`. Said where a name is looked up, so that a misspelled name is told apart from a
/// missing key (`links.bottlenek.a: missing` sent users looking for a key they never meant to
/// write).
pub(super) fn no_entry_named(section: &str, name: &str, existing: &Table) -> ScenarioError {
    let kind = NAMED_SECTIONS
        .iter()
        .find(|(s, _, _)| *s == section)
        .map_or("entry", |(_, kind, _)| *kind);
    let others = || existing.keys().filter(|k| k.as_str() != name);
    // The list stops at 20 names; the one meant may be further on, so the nearest is named.
    let nearest = others()
        .map(|k| (edit_distance(k, name), k))
        .filter(|(d, _)| *d <= 2)
        .min_by_key(|(d, _)| *d)
        .map_or(String::new(), |(_, k)| format!(" (did you mean {k:?}?)"));
    error(
        &join(section, name),
        format!(
            "no {kind} named {name:?}{nearest}; {kind}s are {}",
            list_names(others())
        ),
    )
}

/// Levenshtein distance in characters (insertions, deletions, substitutions), for "did you
/// mean": names are short, so the quadratic table is cheap.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = diagonal + usize::from(ca != *cb);
            diagonal = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(diagonal + 1);
        }
    }
    row[b.len()]
}

/// An entry of `section` (`nodes`, `links`, `flows`) that has none of the keys every entry
/// must have is most likely a misspelled name, written as `[links.bottlenek.loss]` or reached
/// by an override, so the error names the entries there are instead of the first missing key.
/// An entry with some of them is a new one with a key forgotten, and gets `missing`.
pub(super) fn check_entry_is_one(section: &str, all: &Table, name: &str) -> Res<()> {
    let Some((_, kind, needs)) = NAMED_SECTIONS.iter().find(|(s, _, _)| *s == section) else {
        return Ok(());
    };
    let Some(Value::Table(entry)) = all.get(name) else {
        return Ok(()); // a node written as "host", or a value that is not a table (its reader says so)
    };
    if needs.iter().any(|k| entry.contains_key(*k)) {
        return Ok(());
    }
    let mut e = no_entry_named(section, name, all);
    e.message
        .push_str(&format!(" (a new {kind} needs {})", and_list(needs)));
    Err(e)
}

/// Checks an override that replaces a whole entry of `nodes`, `links` or `flows` that exists
/// (`links.bottleneck={ rate = "5Mbps" }`) with a table holding none of the keys an entry
/// needs: read after the override, it was refused as `no link named "bottleneck"`, of a link
/// that exists (campaign 23, issue 32). Said here, before the old entry is gone: the value
/// replaces the entry, and one key of it is changed by a path to that key.
pub(super) fn check_entry_replaced(
    tree: &Table,
    keys: &[&str],
    value: &Value,
    option: &str,
    item: &str,
) -> Res<()> {
    let [section, name] = keys else {
        return Ok(());
    };
    let Some((_, kind, needs)) = NAMED_SECTIONS.iter().find(|(s, _, _)| s == section) else {
        return Ok(());
    };
    let Value::Table(new) = value else {
        return Ok(()); // a node written as "host", or a value its reader refuses by itself
    };
    let existed = matches!(tree.get(*section), Some(Value::Table(t)) if t.contains_key(*name));
    if !existed || needs.iter().any(|k| new.contains_key(*k)) {
        return Ok(());
    }
    let key = new.keys().next().map_or("KEY", String::as_str);
    Err(error(
        &join(section, name),
        format!(
            "{option} {item:?} replaces the whole {kind}, and the new one has none of {}; \
             to change one key of it, give its path: {option} '{}=...'",
            and_list(needs),
            join(&join(section, name), key)
        ),
    ))
}

/// Checks an override's path (already split into keys) before it is applied: a key inside an
/// entry of `nodes`, `links` or `flows` that does not exist is refused, since creating the
/// entry would turn a misspelled name into a new, incomplete entry; a new entry is set whole.
pub(super) fn check_override_entry(tree: &Table, keys: &[&str], option: &str) -> Res<()> {
    let [section, name, _, ..] = keys else {
        return Ok(());
    };
    let Some((_, kind, needs)) = NAMED_SECTIONS.iter().find(|(s, _, _)| s == section) else {
        return Ok(());
    };
    let empty = Table::new();
    let existing = match tree.get(*section) {
        Some(Value::Table(t)) => t,
        _ => &empty,
    };
    if existing.contains_key(*name) {
        return Ok(());
    }
    let example: Vec<String> = needs.iter().map(|k| format!("{k} = ...")).collect();
    let mut e = no_entry_named(section, name, existing);
    e.message.push_str(&format!(
        " ({option} changes a {kind} that exists; a new {kind} is set whole, e.g. \
         {option} '{}={{ {}, ... }}')",
        join(section, name),
        example.join(", ")
    ));
    Err(e)
}

/// `a`, `a and b`, `a, b and c`.
fn and_list(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => one.to_string(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

// ---------------------------------------------------------------------------------------------
// Reading tables and values

/// One table being read: rejects keys that are not allowed, remembers which keys were read.
pub(super) struct Reader<'a> {
    table: &'a Table,
    pub(super) path: String,
    allowed: Vec<&'static str>,
    used: Vec<String>,
}

impl<'a> Reader<'a> {
    pub(super) fn new(table: &'a Table, path: String) -> Self {
        Reader {
            table,
            path,
            allowed: Vec::new(),
            used: Vec::new(),
        }
    }

    /// Declares the keys allowed here; the first other key (in file order) is an error.
    pub(super) fn allow(&mut self, allowed: &[&'static str]) -> Res<()> {
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
    pub(super) fn get(&mut self, key: &str) -> Option<Field<'a>> {
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
    pub(super) fn req(&mut self, key: &str, what: &str) -> Res<Field<'a>> {
        self.get(key)
            .ok_or_else(|| error(&join(&self.path, key), format!("missing; {what}")))
    }

    /// Checks that every key was read (a key allowed but never read is a parser bug).
    pub(super) fn finish(self) -> Res<()> {
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
pub(super) struct Field<'a> {
    pub(super) value: &'a Value,
    pub(super) path: String,
}

impl<'a> Field<'a> {
    pub(super) fn error(&self, message: impl Into<String>) -> ScenarioError {
        error(&self.path, message)
    }

    /// "expected {what}, found integer 5".
    pub(super) fn expected(&self, what: &str) -> ScenarioError {
        self.error(format!("expected {what}, found {}", describe(self.value)))
    }

    /// "5 is out of range; must be {rule}".
    pub(super) fn out_of_range(&self, rule: &str) -> ScenarioError {
        self.error(format!(
            "{} is out of range; must be {rule}",
            shown(self.value)
        ))
    }

    pub(super) fn table(&self, what: &str) -> Res<Reader<'a>> {
        match self.value {
            Value::Table(t) => Ok(Reader::new(t, self.path.clone())),
            _ => Err(self.expected(what)),
        }
    }

    pub(super) fn choice(&self, options: &[&'static str]) -> Res<&'static str> {
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

    pub(super) fn boolean(&self) -> Res<bool> {
        match self.value {
            Value::Boolean(b) => Ok(*b),
            _ => Err(self.expected("true or false")),
        }
    }

    pub(super) fn int_in(&self, min: i64, max: i64) -> Res<i64> {
        match self.value {
            Value::Integer(i) if (min..=max).contains(i) => Ok(*i),
            Value::Integer(_) => Err(self.out_of_range(&range_rule(min, max))),
            _ => Err(self.expected("an integer")),
        }
    }

    pub(super) fn u32_in(&self, min: u32, max: u32) -> Res<u32> {
        Ok(self.int_in(min as i64, max as i64)? as u32)
    }

    /// An integer or a finite float, not a subnormal one: no parameter of a mechanism means
    /// anything below 2.2e-308 but 0, and arithmetic on subnormal numbers is many times slower
    /// on common processors (DCTCP's `g = 1e-320` ran 8x slower, issue 32).
    pub(super) fn number(&self) -> Res<f64> {
        match self.value {
            Value::Integer(i) => Ok(*i as f64),
            Value::Float(f) if f.is_subnormal() => Err(self.out_of_range(NORMAL_NUMBER)),
            Value::Float(f) if f.is_finite() => Ok(*f),
            Value::Float(_) => Err(self.out_of_range("a finite number")),
            _ => Err(self.expected("a number")),
        }
    }

    pub(super) fn positive_number(&self) -> Res<f64> {
        let x = self.number()?;
        if x > 0.0 {
            Ok(x)
        } else {
            Err(self.out_of_range("greater than 0"))
        }
    }

    pub(super) fn probability(&self) -> Res<f64> {
        let p = match self.value {
            Value::Integer(i) => *i as f64,
            Value::Float(f) => *f,
            _ => return Err(self.expected("a probability (a number from 0 to 1)")),
        };
        if p.is_subnormal() {
            return Err(self.out_of_range(NORMAL_NUMBER));
        }
        // NaN is not in the range either.
        if (0.0..=1.0).contains(&p) {
            Ok(p)
        } else {
            Err(self.out_of_range("from 0 to 1"))
        }
    }

    /// A duration of at most [`MAX_SCENARIO_DURATION`], so that the run's time arithmetic never
    /// saturates (see there).
    pub(super) fn duration(&self) -> Res<SimDuration> {
        let d = match self.value {
            Value::String(s) => units::parse_duration(s).map_err(|m| self.error(m))?,
            _ => return Err(self.expected(DURATION)),
        };
        if d > MAX_SCENARIO_DURATION {
            return Err(self.out_of_range(DURATION_RULE));
        }
        Ok(d)
    }

    pub(super) fn positive_duration(&self) -> Res<SimDuration> {
        let d = self.duration()?;
        if d > SimDuration::ZERO {
            Ok(d)
        } else {
            Err(self.out_of_range("greater than 0"))
        }
    }

    pub(super) fn rate(&self) -> Res<Rate> {
        match self.value {
            Value::String(s) => units::parse_rate(s).map_err(|m| self.error(m)),
            _ => Err(self.expected(RATE)),
        }
    }

    /// Bytes: an integer, or a string with a size unit.
    pub(super) fn size(&self) -> Res<u64> {
        match self.value {
            Value::Integer(i) if *i >= 0 => Ok(*i as u64),
            Value::Integer(i) => Err(self.error(format!("{i} is negative; a size must be >= 0"))),
            Value::String(s) => units::parse_size(s).map_err(|m| self.error(m)),
            _ => Err(self.expected(SIZE)),
        }
    }

    pub(super) fn positive_size(&self) -> Res<u64> {
        match self.size()? {
            0 => Err(self.out_of_range("greater than 0")),
            b => Ok(b),
        }
    }

    pub(super) fn size_u32(&self, min: u32) -> Res<u32> {
        let b = self.size()?;
        if b < min as u64 || b > u32::MAX as u64 {
            return Err(self.out_of_range(&range_rule(min as i64, u32::MAX as i64)));
        }
        Ok(b as u32)
    }

    pub(super) fn name(&self, what: &str) -> Res<&'a str> {
        match self.value {
            Value::String(s) => Ok(s),
            _ => Err(self.expected(what)),
        }
    }

    pub(super) fn node(&self, nodes: &IndexMap<String, NodeSpec>) -> Res<String> {
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

    pub(super) fn host(&self, nodes: &IndexMap<String, NodeSpec>) -> Res<String> {
        let name = self.node(nodes)?;
        match nodes[&name].kind {
            NodeKind::Host => Ok(name),
            NodeKind::Router => {
                Err(self.error(format!("{name:?} is a router; flows run between hosts")))
            }
        }
    }

    pub(super) fn link(&self, links: &IndexMap<String, LinkSpec>) -> Res<String> {
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
pub(super) fn opt<'a, T>(
    r: &mut Reader<'a>,
    key: &str,
    read: impl FnOnce(&Field<'a>) -> Res<T>,
) -> Res<Option<T>> {
    r.get(key).map(|f| read(&f)).transpose()
}

/// The rule a subnormal float breaks ([`Field::number`]).
const NORMAL_NUMBER: &str =
    "0 or at least 2.2e-308 in magnitude (a subnormal number means nothing here and slows the run)";

// Numeric rules shared by several sections (queues, controllers).

/// A number in (0, 1].
pub(super) fn read_fraction_above_zero(f: &Field) -> Res<f64> {
    let x = f.number()?;
    if x > 0.0 && x <= 1.0 {
        Ok(x)
    } else {
        Err(f.out_of_range("greater than 0 and at most 1"))
    }
}

/// A number in (0, 1).
pub(super) fn read_open_fraction(f: &Field) -> Res<f64> {
    let x = f.number()?;
    if x > 0.0 && x < 1.0 {
        Ok(x)
    } else {
        Err(f.out_of_range("greater than 0 and less than 1"))
    }
}

/// A number >= 0.
pub(super) fn read_non_negative(f: &Field) -> Res<f64> {
    let x = f.number()?;
    if x >= 0.0 {
        Ok(x)
    } else {
        Err(f.out_of_range("at least 0"))
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::*;

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
             routing, trace, events, atm, jitter"
        );
    }

    #[test]
    fn a_path_joins_bare_keys_with_a_dot_and_quotes_any_other_key() {
        assert_eq!(join("", "links"), "links");
        assert_eq!(join("links", "bottle-neck_2"), "links.bottle-neck_2");
        assert_eq!(join("flows", "f#1"), "flows.\"f#1\"");
        assert_eq!(join("nodes", "é"), "nodes.\"é\"");
        assert_eq!(join("nodes", ""), "nodes.\"\"");
        assert_eq!(join("", "a b"), "\"a b\"");
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
}
