// SPDX-License-Identifier: MIT
//! `ccsim._core`: the thin bridge between the Rust core and the Python package.
//!
//! Two functions, both taking the scenario as TOML text plus `--set` overrides and an optional
//! seed: `validate` returns the resolved TOML, `run` returns the result tables column by column.
//! Numeric columns cross as numpy arrays filled in bulk (one copy into a `bytearray`, which
//! `numpy.frombuffer` then views), text columns as lists; nothing is called per packet. A panic
//! in the core becomes a `SimulationError`: no user input can crash the interpreter.
//!
//! `validate` makes every check `run` makes before its first event: it parses the scenario and
//! builds the network (`ccsim_core::check_toml`), so a flow whose packets exceed the MTU of a
//! link on its route is refused by both, with the same error.
//!
//! A run is interruptible. The simulation runs on a thread of its own with the GIL released,
//! while the calling thread waits for it and, every 50 ms, lets the interpreter run its signal
//! handlers (`PyErr_CheckSignals`, which does nothing off the main thread):
//!
//! ```text
//!   calling thread (GIL released)              run thread (never touches Python)
//!   ─────────────────────────────              ─────────────────────────────────
//!   spawn ───────────────────────────────────> load, build, run_loop
//!   every 50 ms: check_signals()                  reads the StopSignal every 65,536 events
//!     a handler raised (KeyboardInterrupt) ──> stop.request() ──> StopReason::Interrupted
//!     wait for the run thread to end  <──────  (within ~15 ms)
//!     raise the handler's exception; the partial run is dropped, never returned
//! ```

//! ## Allocator
//!
//! The module's Rust code allocates through mimalloc, not the C library's malloc. A run
//! allocates its per-flow and per-link state at the build (a TCP sender and receiver with their
//! buffers, a channel with its FIFO and queue: a dozen blocks of different sizes each), and the
//! packet path then visits them in the order packets arrive, not the order they were made.
//! mimalloc keeps blocks of one size together, so the senders of 10,000 flows or the channels
//! of a fat-tree sit in fewer pages and cache lines than glibc's interleaving leaves them in:
//! 1,000 and 10,000 flows ran 1.16x and 1.09x faster, a fat-tree of 1,344 nodes 1.00-1.10x,
//! paper 002 and P1 no slower (docs/performance.md, "The allocator"). Python's own objects
//! are not affected; nothing allocated here is freed by Python or the other way round.
//!
//! mimalloc keeps freed pages for a while before it gives them back to the system, which is
//! where its speed comes from, but a run ends by freeing the whole simulation and then copying
//! its result tables into Python's memory: pages still held then add to the process's peak
//! (1,000,000 web transfers: 1.43 GB against glibc's 1.06 GB). So once the simulation is
//! dropped, and again once its tables are copied, [`return_freed_memory`] hands every free
//! page back at once (0.99 GB). The module uses mimalloc 2, which waits 10 ms before it
//! returns a page, where 3 waits a second.

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread;
use std::time::Duration;

use ccsim_core::{Column, Error as CoreError, RunOutput, RunSummary, StopSignal, Table};
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyDict, PyList, PyString};

create_exception!(
    ccsim._core,
    Error,
    PyException,
    "Base class of every ccsim error."
);
create_exception!(
    ccsim._core,
    ScenarioError,
    Error,
    "The scenario is invalid and nothing was run.\n\n`str(e)` is \"path: reason\"; `.path` names \
     the field (\"links.bottleneck.rate\", empty for the whole file) and `.reason` says what is \
     wrong with it."
);
create_exception!(
    ccsim._core,
    SimulationError,
    Error,
    "The simulation failed (an internal error of the core included)."
);

/// Every allocation of the module's Rust code (module docs, "Allocator").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Give every page mimalloc holds free back to the system now (module docs, "Allocator"), for
/// the calling thread's heap and the pages other threads left.
fn return_freed_memory() {
    // SAFETY: `mi_collect` takes no pointer and may be called from any thread at any time
    // (mimalloc's API docs); it only returns free memory.
    unsafe { libmimalloc_sys::mi_collect(true) }
}

/// The Python exception for an error of the core.
fn to_py_err(py: Python<'_>, e: CoreError) -> PyErr {
    match e {
        CoreError::Scenario(s) => {
            let err = ScenarioError::new_err(s.to_string());
            // Attributes, so callers need not parse the message. Setting an attribute on a
            // fresh exception object cannot fail short of memory exhaustion.
            let value = err.value(py);
            let _ = value.setattr("path", s.path);
            let _ = value.setattr("reason", s.message);
            err
        }
        CoreError::Output(m) => SimulationError::new_err(m),
    }
}

/// The text of a panic payload (`panic!` with a literal or a formatted message).
fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_owned()
    }
}

fn internal_error(doing: &str, payload: &(dyn Any + Send)) -> PyErr {
    SimulationError::new_err(format!(
        "internal error while {doing} (please report it with the scenario): {}",
        panic_message(payload)
    ))
}

/// Check a scenario as `run` would, without running it (parse, validate, build the network);
/// returns the resolved TOML (overrides and seed applied). `params` are a sweep's `--param`
/// values for one run, applied after `overrides` and named `--param` in errors
/// (`ccsim_core::check_swept_toml`).
#[pyfunction]
#[pyo3(signature = (text, overrides=Vec::new(), seed=None, params=Vec::new()))]
fn validate(
    py: Python<'_>,
    text: &str,
    overrides: Vec<String>,
    seed: Option<u64>,
    params: Vec<String>,
) -> PyResult<String> {
    // Building a large network takes a while; other Python threads need not wait for it.
    let result = py.detach(|| {
        catch_unwind(AssertUnwindSafe(|| {
            ccsim_core::check_swept_toml(text, &overrides, &params, seed)
        }))
    });
    match result {
        Ok(Ok(loaded)) => Ok(loaded.resolved_toml),
        Ok(Err(e)) => Err(to_py_err(py, e)),
        Err(payload) => Err(internal_error("validating", payload.as_ref())),
    }
}

/// Raise a ScenarioError ("TOML syntax error at line L, column C: ...") unless `text` is
/// TOML; the scenario's keys are not read (`ccsim_core::check_syntax`).
#[pyfunction]
fn check_syntax(py: Python<'_>, text: &str) -> PyResult<()> {
    let result = py.detach(|| catch_unwind(AssertUnwindSafe(|| ccsim_core::check_syntax(text))));
    match result {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(to_py_err(py, e.into())),
        Err(payload) => Err(internal_error("reading the scenario", payload.as_ref())),
    }
}

/// `PATH=VALUE` cut at the first `=` outside a quoted key, as `--set` cuts it; None without
/// one; ValueError when a quote in PATH is not closed (`ccsim_core::scenario::split_override`).
#[pyfunction]
fn split_override(item: &str) -> PyResult<Option<(String, String)>> {
    ccsim_core::scenario::split_override(item)
        .map(|split| split.map(|(path, value)| (path.to_owned(), value.to_owned())))
        .map_err(PyValueError::new_err)
}

/// The keys a dotted `--set` path names, read by TOML's parser; None when it is not a path.
#[pyfunction]
fn override_keys(path: &str) -> Option<Vec<String>> {
    ccsim_core::scenario::override_keys(path)
}

/// A sweep's `V1,V2,...` cut at the commas TOML's lexer calls separators, each trimmed.
#[pyfunction]
fn param_values(text: &str) -> Vec<String> {
    ccsim_core::scenario::param_values(text)
        .into_iter()
        .map(str::to_owned)
        .collect()
}

/// An override's VALUE as the core reads it, for a sweep's table: an integer or a float as a
/// number, a string as its text (unquoted, escapes read), anything else as written (trimmed).
#[pyfunction]
fn override_value<'py>(py: Python<'py>, raw: &str) -> PyResult<Bound<'py, PyAny>> {
    use ccsim_core::scenario::ValueTag;
    Ok(match ccsim_core::scenario::value_tag(raw) {
        ValueTag::Integer(i) => i.into_pyobject(py)?.into_any(),
        ValueTag::Float(x) => x.into_pyobject(py)?.into_any(),
        ValueTag::Text(text) => text.into_pyobject(py)?.into_any(),
    })
}

/// A numpy array of `n` 8-byte items of `dtype`, filled in place by `fill` (native byte order).
fn numpy_array<'py>(
    frombuffer: &Bound<'py, PyAny>,
    n: usize,
    dtype: &str,
    fill: impl Fn(&mut [u8]),
) -> PyResult<Bound<'py, PyAny>> {
    let buf = PyByteArray::new_with(frombuffer.py(), n * 8, |bytes| {
        fill(bytes);
        Ok(())
    })?;
    // A bytearray is writable, so the array is too, like any other numpy array.
    frombuffer.call1((buf, dtype))
}

/// One column as a Python object: float64 or int64 numpy arrays, a list of str.
fn column_to_py<'py>(frombuffer: &Bound<'py, PyAny>, col: Column) -> PyResult<Bound<'py, PyAny>> {
    let py = frombuffer.py();
    match col {
        Column::F64(v) => numpy_array(frombuffer, v.len(), "=f8", |bytes| {
            for (dst, x) in bytes.chunks_exact_mut(8).zip(&v) {
                dst.copy_from_slice(&x.to_ne_bytes());
            }
        }),
        // Counters cross as int64, the dtype pandas gives Python integers, so differences of
        // counters behave; a column that would not fit (never seen) stays uint64.
        Column::U64(v) => {
            let dtype = if v.iter().all(|&x| i64::try_from(x).is_ok()) {
                "=i8"
            } else {
                "=u8"
            };
            numpy_array(frombuffer, v.len(), dtype, |bytes| {
                for (dst, x) in bytes.chunks_exact_mut(8).zip(&v) {
                    dst.copy_from_slice(&x.to_ne_bytes());
                }
            })
        }
        Column::Str(v) => str_list(py, v),
    }
}

/// A column of text as a list of str in which a value equal to the one before is the same
/// object: a short-flow storm's `kind`, `src` and `dst` repeat on every row, and a million
/// rows then cost one str each instead of a million (about 60 B and 50 ns a str). Python sees
/// equal values either way.
fn str_list(py: Python<'_>, values: Vec<String>) -> PyResult<Bound<'_, PyAny>> {
    let mut previous: Option<(String, Bound<'_, PyString>)> = None;
    let mut items = Vec::with_capacity(values.len());
    for value in values {
        let item = match &previous {
            Some((text, obj)) if *text == value => obj.clone(),
            _ => {
                let obj = PyString::new(py, &value);
                previous = Some((value, obj.clone()));
                obj
            }
        };
        items.push(item);
    }
    Ok(PyList::new(py, items)?.into_any())
}

fn table_to_dict<'py>(
    frombuffer: &Bound<'py, PyAny>,
    table: Table,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(frombuffer.py());
    for (name, col) in table.columns {
        d.set_item(name, column_to_py(frombuffer, col)?)?;
    }
    Ok(d)
}

fn summary_to_dict<'py>(py: Python<'py>, s: &RunSummary) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("stop_reason", s.stop_reason.as_str())?;
    d.set_item("sim_seconds", s.sim_seconds)?;
    d.set_item("events", s.events)?;
    d.set_item("wall_seconds", s.wall_seconds)?;
    d.set_item("data_packets", s.data_packets)?;
    d.set_item("data_packets_sent", s.data_packets_sent)?;
    d.set_item("peak_packets", s.peak_packets)?;
    d.set_item("peak_heap", s.peak_heap)?;
    d.set_item("seed", s.seed)?;
    d.set_item("packets_created", s.packets_created)?;
    d.set_item("packets_delivered", s.packets_delivered)?;
    d.set_item("packets_dropped", s.packets_dropped)?;
    d.set_item("packets_alive", s.packets_alive)?;
    d.set_item("cell_hops", s.cell_hops)?;
    d.set_item("atm_events", s.atm_events)?;
    d.set_item("packets_untraced", s.packets_untraced)?;
    Ok(d)
}

fn output_to_dict(py: Python<'_>, out: RunOutput, resolved: String) -> PyResult<Bound<'_, PyDict>> {
    let frombuffer = py.import("numpy")?.getattr("frombuffer")?;
    let d = PyDict::new(py);
    d.set_item("summary", summary_to_dict(py, &out.summary)?)?;
    d.set_item("flows", table_to_dict(&frombuffer, out.flows)?)?;
    d.set_item("links", table_to_dict(&frombuffer, out.links)?)?;
    d.set_item("series", table_to_dict(&frombuffer, out.series)?)?;
    d.set_item("atm_vcs", table_to_dict(&frombuffer, out.atm_vcs)?)?;
    d.set_item("atm_ports", table_to_dict(&frombuffer, out.atm_ports)?)?;
    d.set_item("paths", table_to_dict(&frombuffer, out.paths)?)?;
    d.set_item("agents", table_to_dict(&frombuffer, out.agents)?)?;
    d.set_item("packets", table_to_dict(&frombuffer, out.packets)?)?;
    d.set_item("classes", table_to_dict(&frombuffer, out.classes)?)?;
    d.set_item("pings", table_to_dict(&frombuffer, out.pings)?)?;
    d.set_item("resolved_toml", resolved)?;
    Ok(d)
}

/// Check and run a scenario; returns a dict: `summary` (plain values), `flows`, `links`,
/// `series`, `paths`, `agents`, `packets`, `classes` and `pings` (column name -> numpy array
/// or list of str) and `resolved_toml`.
///
/// `progress`, if given, is called from this thread about every [`PROGRESS_EVERY`] while the
/// run goes on, with the simulated seconds reached, the events so far and the run's duration
/// in seconds: a few calls a second, never one per packet. If it raises, the run is stopped
/// and its exception raised, as for Ctrl-C.
#[pyfunction]
#[pyo3(signature = (text, overrides=Vec::new(), seed=None, progress=None, pcap_dir=None))]
fn run<'py>(
    py: Python<'py>,
    text: String,
    overrides: Vec<String>,
    seed: Option<u64>,
    progress: Option<Bound<'py, PyAny>>,
    pcap_dir: Option<std::path::PathBuf>,
) -> PyResult<Bound<'py, PyDict>> {
    let stop = StopSignal::new();
    // `pcap_dir`: the folder for the scenario's `[trace] pcap` files.
    let options = ccsim_core::RunOptions {
        pcap_dir,
        stop: Some(stop.clone()),
    };
    let simulate = || {
        catch_unwind(AssertUnwindSafe(|| {
            let loaded = ccsim_core::load_scenario(&text, &overrides, seed)?;
            let out = ccsim_core::run_with_options(&loaded.spec, &options);
            // The simulation is dropped by now: its pages go back before the copy into Python.
            return_freed_memory();
            Ok::<_, CoreError>((out?, loaded.resolved_toml))
        }))
    };
    let report = progress.map(|callback| callback.unbind());
    match py.detach(|| run_watching_signals(simulate, &stop, report.as_ref())) {
        Err(raised) => Err(raised),
        Ok(Ok(Ok((out, resolved)))) => {
            let dict = output_to_dict(py, out, resolved);
            // The result columns were freed as they were copied.
            return_freed_memory();
            dict
        }
        Ok(Ok(Err(e))) => Err(to_py_err(py, e)),
        Ok(Err(payload)) => Err(internal_error("running", payload.as_ref())),
    }
}

/// How often the waiting thread lets Python run its signal handlers: a Ctrl-C is acted on
/// within this (plus the core's ~15 ms), and the waiting costs nothing measurable.
const SIGNAL_POLL: Duration = Duration::from_millis(50);

/// How often a `progress` callback is called while a run goes on.
const PROGRESS_EVERY: Duration = Duration::from_millis(500);

/// The run thread's stack: the main thread's usual 8 MiB rather than a spawned thread's 2 MiB,
/// so a scenario that builds on the main thread builds here too.
const RUN_STACK_BYTES: usize = 8 << 20;

/// Call `simulate` on a thread of its own and wait for it, running Python's signal handlers
/// every [`SIGNAL_POLL`]. When a handler raises, `stop` is requested, the run is waited for
/// (it ends at its next check) and its output dropped, and the handler's exception is returned:
/// an interrupted run never looks like a finished one. Called with the GIL released.
fn run_watching_signals<T: Send>(
    simulate: impl FnOnce() -> T + Send,
    stop: &StopSignal,
    progress: Option<&Py<PyAny>>,
) -> PyResult<T> {
    let mut last_report = std::time::Instant::now();
    let (done_tx, done_rx) = mpsc::channel();
    thread::scope(|scope| {
        let spawned = thread::Builder::new()
            .name("ccsim-run".to_owned())
            .stack_size(RUN_STACK_BYTES)
            .spawn_scoped(scope, move || {
                // The receiver outlives this thread (it is dropped after the scope joins it).
                let _ = done_tx.send(simulate());
            });
        if let Err(e) = spawned {
            return Err(SimulationError::new_err(format!(
                "could not start the simulation thread: {e}"
            )));
        }
        loop {
            match done_rx.recv_timeout(SIGNAL_POLL) {
                Ok(out) => return Ok(out),
                Err(RecvTimeoutError::Timeout) => {
                    let due = progress.filter(|_| last_report.elapsed() >= PROGRESS_EVERY);
                    let checked = Python::attach(|py| {
                        py.check_signals()?;
                        if let Some(callback) = due {
                            let p = stop.progress();
                            let args = (p.now.as_secs_f64(), p.events, p.end.as_secs_f64());
                            callback.call1(py, args)?;
                        }
                        Ok::<(), PyErr>(())
                    });
                    if due.is_some() {
                        last_report = std::time::Instant::now();
                    }
                    if let Err(raised) = checked {
                        stop.request();
                        // The partial output (StopReason::Interrupted) is dropped here.
                        let _ = done_rx.recv();
                        return Err(raised);
                    }
                }
                // `simulate` catches panics, so the sender is only dropped after sending.
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(SimulationError::new_err(
                        "internal error: the simulation thread ended without a result",
                    ))
                }
            }
        }
    })
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("Error", py.get_type::<Error>())?;
    m.add("ScenarioError", py.get_type::<ScenarioError>())?;
    m.add("SimulationError", py.get_type::<SimulationError>())?;
    m.add_function(wrap_pyfunction!(check_syntax, m)?)?;
    m.add_function(wrap_pyfunction!(split_override, m)?)?;
    m.add_function(wrap_pyfunction!(override_keys, m)?)?;
    m.add_function(wrap_pyfunction!(param_values, m)?)?;
    m.add_function(wrap_pyfunction!(override_value, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // The hash of the sources a run's result depends on (build.rs).
    m.add("ENGINE", env!("CCSIM_ENGINE_ID"))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn payload_of(f: impl FnOnce() + std::panic::UnwindSafe) -> Box<dyn Any + Send> {
        catch_unwind(f).expect_err("the closure panics")
    }

    #[test]
    fn panic_messages_are_recovered_from_literal_and_formatted_panics() {
        let literal = payload_of(|| panic!("queue underflow"));
        assert_eq!(panic_message(literal.as_ref()), "queue underflow");
        let n = 7;
        let formatted = payload_of(move || panic!("flow {n} lost its route"));
        assert_eq!(panic_message(formatted.as_ref()), "flow 7 lost its route");
        let other = payload_of(|| std::panic::panic_any(42_u8));
        assert_eq!(panic_message(other.as_ref()), "a panic without a message");
    }
}
