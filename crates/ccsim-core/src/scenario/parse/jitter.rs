// SPDX-License-Identifier: MIT
//! `[jitter]` of `docs/scenario.md`, and the `start_jitter` key of a flow and of an ATM CBR
//! group: the window of the seed-driven start offset each source gets (`crate::jitter`).
//!
//! ```text
//!   [jitter] start = W          the default window of every flow and ATM CBR group (0: none)
//!   [flows.f1] start_jitter = w    f1's own window (0 turns the jitter off for f1)
//!   [atm.cbr.bg] start_jitter = w  the window of each source of group bg
//! ```
//!
//! The window resolved here is the one the `Spec` holds; the offset itself is drawn at the build.
//! A source starts at `start + U`, U in [0, W), so a window of at least `stop - start` could
//! start it at or after its stop: refused, naming the key the window came from.

use super::reader::{error, opt, Field, Reader, Res};
use crate::scenario::units::format_duration;
use crate::time::{SimDuration, SimTime};

/// The key of a flow's or an ATM CBR group's own window.
pub(super) const START_JITTER: &str = "start_jitter";

/// `[jitter]`: the default start-jitter window (0 when the key or the section is absent).
pub(super) fn read_jitter(f: &Field) -> Res<SimDuration> {
    let mut r = f.table("a table such as { start = \"2ms\" }")?;
    r.allow(&["start"])?;
    let start = opt(&mut r, "start", |f| f.duration())?.unwrap_or(SimDuration::ZERO);
    r.finish()?;
    Ok(start)
}

/// The window of the source read by `r` (a flow or an ATM CBR group that starts at `start` and
/// stops at `stop`): its own `start_jitter`, else `default` (`[jitter] start`). It must be less
/// than `stop - start`.
pub(super) fn read_start_jitter(
    r: &mut Reader,
    default: SimDuration,
    start: SimTime,
    stop: Option<SimTime>,
) -> Res<SimDuration> {
    let own = r.get(START_JITTER);
    let window = match &own {
        Some(f) => f.duration()?,
        None => default,
    };
    let Some(stop) = stop else {
        return Ok(window);
    };
    let room = stop - start;
    if window < room {
        return Ok(window);
    }
    let (w, room) = (format_duration(window), format_duration(room));
    Err(match own {
        Some(f) => f.error(format!(
            "{w} is not less than stop - start ({room}): a start offset drawn from [0, {w}) \
             could reach stop; lower it"
        )),
        None => error(
            "jitter.start",
            format!(
                "{w} is not less than stop - start of {} ({room}): its start offset could reach \
                 its stop; lower jitter.start or give {} its own start_jitter",
                r.path, r.path
            ),
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use crate::time::SimDuration;

    fn us(n: u64) -> SimDuration {
        SimDuration::from_micros(n)
    }

    #[test]
    fn every_flow_gets_the_jitter_section_window_unless_it_gives_its_own() {
        let s = spec(MINIMAL, &["jitter.start=2ms"]);
        assert_eq!(s.flows["f1"].start_jitter, ms(2));
        let s = spec(
            MINIMAL,
            &["jitter.start=2ms", "flows.f1.start_jitter=500us"],
        );
        assert_eq!(s.flows["f1"].start_jitter, us(500));
        let s = spec(MINIMAL, &["jitter.start=2ms", "flows.f1.start_jitter=0s"]);
        assert_eq!(s.flows["f1"].start_jitter, SimDuration::ZERO);
        let s = spec(MINIMAL, &["flows.f1.start_jitter=1ms"]);
        assert_eq!(s.flows["f1"].start_jitter, ms(1));
    }

    #[test]
    fn without_a_jitter_section_or_with_a_zero_window_the_spec_is_the_same() {
        let none = spec(MINIMAL, &[]);
        assert_eq!(none.flows["f1"].start_jitter, SimDuration::ZERO);
        assert_eq!(spec(MINIMAL, &["jitter.start=0s"]), none);
        assert_eq!(spec(MINIMAL, &["jitter={}"]), none);
    }

    #[test]
    fn a_window_must_be_less_than_the_time_between_start_and_stop() {
        // The messages are in tests/scenario_errors.rs; here, where the line is drawn.
        let timed = ["flows.f1.start=1s", "flows.f1.stop=1.003s"];
        let with = |extra: &[&'static str]| [&timed[..], extra].concat();
        let refused = |extra: &[&'static str]| load(MINIMAL, &with(extra), None).is_err();
        assert!(refused(&["jitter.start=3ms"]));
        assert!(refused(&["flows.f1.start_jitter=3ms"]));
        // Just under is allowed: the latest start is stop - 1 ns.
        assert!(!refused(&["jitter.start=2999999ns"]));
        // The flow's own window replaces a section window that would not fit.
        let s = spec(
            MINIMAL,
            &with(&["jitter.start=1s", "flows.f1.start_jitter=1ms"]),
        );
        assert_eq!(s.flows["f1"].start_jitter, ms(1));
        // A later stop makes room for a longer window.
        assert!(!refused(&["flows.f1.stop=1000s", "jitter.start=998s"]));
    }
}
