// SPDX-License-Identifier: MIT
//! `ccsim._core`: the thin bridge between the Rust core and the Python package.
//!
//! Two functions, both taking the scenario as TOML text plus `--set` overrides and an optional
//! seed: `validate` returns the resolved TOML, `run` returns the result tables as plain columns
//! (one list per column, crossed in bulk; never a callback per packet). The simulation runs with
//! the GIL released. A panic in the core becomes a `SimulationError`, so no user input can
//! crash the interpreter.

use std::panic::{catch_unwind, AssertUnwindSafe};

use ccsim_core::{Column, Error, RunOutput, Table};
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::PyDict;

create_exception!(
    _core,
    CcsimError,
    PyException,
    "Base class of every ccsim error."
);
create_exception!(
    _core,
    ScenarioError,
    CcsimError,
    "The scenario is invalid; nothing was run. `.path` names the field."
);
create_exception!(_core, SimulationError, CcsimError, "The simulation failed.");

fn to_py_err(py: Python<'_>, e: Error) -> PyErr {
    match e {
        Error::Scenario(s) => {
            let err = ScenarioError::new_err(s.to_string());
            // Attach the field path so callers need not parse the message.
            let _ = err.value(py).setattr("path", s.path.clone());
            let _ = err.value(py).setattr("reason", s.message.clone());
            err
        }
        Error::Simulation(s) => SimulationError::new_err(s.message),
    }
}

fn panic_message(p: Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_string()
    }
}

/// Validate a scenario; returns the resolved TOML (overrides and seed applied).
#[pyfunction]
#[pyo3(signature = (text, overrides=Vec::new(), seed=None))]
fn validate(
    py: Python<'_>,
    text: &str,
    overrides: Vec<String>,
    seed: Option<u64>,
) -> PyResult<String> {
    match catch_unwind(AssertUnwindSafe(|| {
        ccsim_core::load_scenario(text, &overrides, seed)
    })) {
        Ok(Ok(l)) => Ok(l.resolved_toml),
        Ok(Err(e)) => Err(to_py_err(py, Error::Scenario(e))),
        Err(p) => Err(SimulationError::new_err(format!(
            "internal error while validating: {}",
            panic_message(p)
        ))),
    }
}

fn table_to_dict<'py>(py: Python<'py>, t: Table) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (name, col) in t.columns {
        match col {
            Column::F64(v) => d.set_item(name, v)?,
            Column::U64(v) => d.set_item(name, v)?,
            Column::Str(v) => d.set_item(name, v)?,
        }
    }
    Ok(d)
}

fn output_to_dict<'py>(
    py: Python<'py>,
    out: RunOutput,
    resolved: String,
) -> PyResult<Bound<'py, PyDict>> {
    let s = &out.summary;
    let summary = PyDict::new(py);
    summary.set_item("stop_reason", s.stop_reason.as_str())?;
    summary.set_item("sim_seconds", s.sim_seconds)?;
    summary.set_item("events", s.events)?;
    summary.set_item("wall_seconds", s.wall_seconds)?;
    summary.set_item("data_packets", s.data_packets)?;
    summary.set_item("data_packets_sent", s.data_packets_sent)?;
    summary.set_item("peak_packets", s.peak_packets)?;
    summary.set_item("peak_heap", s.peak_heap)?;
    summary.set_item("seed", s.seed)?;
    summary.set_item("packets_created", s.packets_created)?;
    summary.set_item("packets_delivered", s.packets_delivered)?;
    summary.set_item("packets_dropped", s.packets_dropped)?;
    summary.set_item("packets_alive", s.packets_alive)?;
    let d = PyDict::new(py);
    d.set_item("summary", summary)?;
    d.set_item("flows", table_to_dict(py, out.flows)?)?;
    d.set_item("links", table_to_dict(py, out.links)?)?;
    d.set_item("series", table_to_dict(py, out.series)?)?;
    d.set_item("resolved_toml", resolved)?;
    Ok(d)
}

/// Validate and run a scenario; returns a dict with `summary`, `flows`, `links`, `series`
/// (column name -> list) and `resolved_toml`.
#[pyfunction]
#[pyo3(signature = (text, overrides=Vec::new(), seed=None))]
fn run<'py>(
    py: Python<'py>,
    text: &str,
    overrides: Vec<String>,
    seed: Option<u64>,
) -> PyResult<Bound<'py, PyDict>> {
    let text = text.to_owned();
    let result = py.allow_threads(move || {
        catch_unwind(AssertUnwindSafe(|| {
            let loaded = ccsim_core::load_scenario(&text, &overrides, seed)?;
            let out = ccsim_core::run(&loaded.spec)?;
            Ok::<_, Error>((out, loaded.resolved_toml))
        }))
    });
    match result {
        Ok(Ok((out, resolved))) => output_to_dict(py, out, resolved),
        Ok(Err(e)) => Err(to_py_err(py, e)),
        Err(p) => Err(SimulationError::new_err(format!(
            "internal error (please report it with the scenario): {}",
            panic_message(p)
        ))),
    }
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("Error", py.get_type::<CcsimError>())?;
    m.add("ScenarioError", py.get_type::<ScenarioError>())?;
    m.add("SimulationError", py.get_type::<SimulationError>())?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
