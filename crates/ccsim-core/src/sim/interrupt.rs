// SPDX-License-Identifier: MIT
//! Stopping a run from outside: a flag another thread sets, which the event loop reads now and
//! then.
//!
//! ```text
//!   caller (a signal watcher, a UI)            event loop (run_loop)
//!   ───────────────────────────────            ─────────────────────
//!   let stop = StopSignal::new();
//!   sim.stop_on(stop.clone());  ──────────>    every 65,536 events: stop.is_requested()?
//!   ... Ctrl-C ...                                  yes: return StopReason::Interrupted
//!   stop.request();             ──────────>    (the clock stays where the last event left it)
//! ```
//!
//! The core has no notion of signals: it only reads the flag. Who sets it is the caller's
//! business (the Python binding sets it when the interpreter's signal handler raises).
//!
//! The flag is read at the same point as the wall-clock limit, once every 65,536 events
//! (`engine.rs`, `CHECK_EVERY`): one relaxed atomic load there costs nothing measurable, and at
//! the engine's 5 to 20 million events a second a request is seen within about 15 ms. Loops
//! that handle many events inside one of the engine's (the ATM fabric's cells, `atm.rs`) check
//! as often, counting their own events, so no single engine event can hide a long run from
//! the flag. A run stopped this way is not a
//! finished run: its tables describe the network at whatever instant the request was seen,
//! which depends on the wall clock, so the same scenario and seed do not give the same bits.
//! Callers must not present it (or store it) as a result.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use crate::time::SimTime;

/// A request to stop a run, shared between the thread that runs it and any thread that may
/// want it stopped. Cloning gives another handle to the same flag.
///
/// The run also leaves its progress here at each check (simulated time reached, events so
/// far), so a watcher can show how far a long run has got ([`StopSignal::progress`]) without
/// the run calling anything: the same relaxed stores at the same point, no callback.
#[derive(Clone, Debug, Default)]
pub struct StopSignal(Arc<Shared>);

/// A run's progress as last reported ([`StopSignal::progress`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    /// The simulated time reached.
    pub now: SimTime,
    /// Events handled so far.
    pub events: u64,
    /// Where the run ends at the latest: its `duration` (zero before it starts watching).
    pub end: SimTime,
}

#[derive(Debug, Default)]
struct Shared {
    stop: AtomicBool,
    now_ns: AtomicU64,
    events: AtomicU64,
    end_ns: AtomicU64,
}

impl StopSignal {
    /// A signal nobody has requested yet.
    pub fn new() -> StopSignal {
        StopSignal::default()
    }

    /// Ask every run watching this signal to stop at its next check. Idempotent; it cannot be
    /// withdrawn.
    pub fn request(&self) {
        // Relaxed: the flag carries no data with it; the run only needs to see it eventually.
        self.0.stop.store(true, Ordering::Relaxed);
    }

    /// Whether [`StopSignal::request`] has been called on any handle.
    pub fn is_requested(&self) -> bool {
        self.0.stop.load(Ordering::Relaxed)
    }

    /// Called by the run at each check: how far it has got.
    pub(crate) fn report(&self, now: SimTime, events: u64) {
        // Relaxed: a watcher only needs recent values, not values consistent with each other
        // to the event.
        self.0.now_ns.store(now.as_nanos(), Ordering::Relaxed);
        self.0.events.store(events, Ordering::Relaxed);
    }

    /// Called by the run when it starts watching: where it will end (its `duration`).
    pub(crate) fn set_end(&self, end: SimTime) {
        self.0.end_ns.store(end.as_nanos(), Ordering::Relaxed);
    }

    /// How far the run watching this signal had got at its last check (every 65,536 events;
    /// zeros before the first).
    pub fn progress(&self) -> Progress {
        Progress {
            now: SimTime::from_nanos(self.0.now_ns.load(Ordering::Relaxed)),
            events: self.0.events.load(Ordering::Relaxed),
            end: SimTime::from_nanos(self.0.end_ns.load(Ordering::Relaxed)),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::thread;
    use std::time::{Duration, Instant};

    use super::StopSignal;
    use crate::results::StopReason;
    use crate::sim::tests::{assert_conserved, build, line};
    use crate::sim::Simulator;
    use crate::time::SimTime;

    /// One bulk TCP transfer over the engine tests' `h1 ── r ── h2` line for `duration`,
    /// traced every 100 s (a finer trace of a million-second run is over `max_memory`).
    fn bulk(duration: &str) -> Simulator {
        let rest = "[flows.bulk]\ntype = \"tcp\"\nsrc = \"h1\"\ndst = \"h2\"\n\
                    [trace]\ninterval = \"100s\"\n";
        let duration = format!("duration=\"{duration}\"");
        build(&line(rest), &[&duration, "seed=3"]).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn a_stop_requested_before_the_run_ends_it_before_the_first_event() {
        let mut sim = bulk("10s");
        let stop = StopSignal::new();
        stop.request();
        sim.stop_on(stop);
        let out = sim.run().unwrap();
        assert_eq!(out.summary.stop_reason, StopReason::Interrupted);
        assert_eq!(out.summary.events, 0);
        assert_eq!(out.summary.sim_seconds, 0.0);
        assert_conserved(&out);
    }

    #[test]
    fn a_stop_requested_from_another_thread_ends_a_run_of_a_million_seconds_at_once() {
        // Bug: Ctrl-C during `ccsim run` waited for the whole run (45 s and more). This run
        // would take hours; it must end within a moment of the request.
        let mut sim = bulk("1000000s");
        let stop = StopSignal::new();
        sim.stop_on(stop.clone());
        let requester = thread::spawn(move || {
            thread::sleep(Duration::from_millis(50));
            stop.request();
            Instant::now()
        });
        let out = sim.run().unwrap();
        let stopped = Instant::now();
        let requested = requester.join().unwrap();
        assert_eq!(out.summary.stop_reason, StopReason::Interrupted);
        assert!(out.summary.events > 0, "it ran until the request");
        assert!(out.summary.sim_seconds < 1_000_000.0);
        // 65,536 events take about 10 ms in a debug build; allow for a loaded machine.
        let late = stopped.saturating_duration_since(requested);
        assert!(
            late < Duration::from_secs(2),
            "stopped {late:?} after the request"
        );
        assert_conserved(&out);
    }

    #[test]
    fn a_signal_that_is_never_requested_changes_no_bit_of_the_run() {
        let plain = bulk("5s").run().unwrap();
        let mut watched = bulk("5s");
        watched.stop_on(StopSignal::new());
        let mut watched = watched.run().unwrap();
        assert_eq!(watched.summary.stop_reason, StopReason::Duration);
        // Wall time is the one figure that differs between two runs of the same scenario.
        watched.summary.wall_seconds = plain.summary.wall_seconds;
        assert_eq!(watched, plain);
    }

    #[test]
    fn a_watcher_sees_the_progress_of_a_long_run_while_it_runs() {
        let mut sim = bulk("1000000s");
        let stop = StopSignal::new();
        sim.stop_on(stop.clone());
        let watcher = thread::spawn(move || {
            // Wait until the run has reported twice, then stop it.
            let deadline = Instant::now() + Duration::from_secs(60);
            let mut seen = Vec::new();
            while seen.len() < 2 && Instant::now() < deadline {
                let p = stop.progress();
                assert_eq!(p.end, SimTime::from_secs(1_000_000), "the run's duration");
                if p.events > 0 && seen.last().is_none_or(|&(_, e)| e < p.events) {
                    seen.push((p.now, p.events));
                }
                thread::sleep(Duration::from_millis(1));
            }
            stop.request();
            seen
        });
        let out = sim.run().unwrap();
        let seen = watcher.join().unwrap();
        assert_eq!(seen.len(), 2, "two reports seen: {seen:?}");
        assert!(seen[0].0 < seen[1].0, "simulated time advances: {seen:?}");
        assert!(seen[1].1 <= out.summary.events);
        assert_eq!(seen[0].1 % 65_536, 0, "reported at the checks");
    }

    #[test]
    fn clones_share_one_flag() {
        let a = StopSignal::new();
        let b = a.clone();
        assert!(!b.is_requested());
        a.request();
        assert!(b.is_requested());
        assert!(
            !StopSignal::new().is_requested(),
            "a new signal is a new flag"
        );
    }
}
