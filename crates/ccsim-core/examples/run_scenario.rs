// SPDX-License-Identifier: MIT
//! Run a scenario file from Rust alone and print the run summary: for profiling the core
//! (`perf`, `valgrind --tool=callgrind`) without the Python layer.
//!
//! `cargo run --release -p ccsim-core --example run_scenario -- FILE [PATH=VALUE ...]`

// The Python module's allocator, so a profile here is the profile of a user's run.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: run_scenario FILE [PATH=VALUE ...]");
        std::process::exit(2);
    };
    let overrides: Vec<String> = args.collect();
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("run_scenario: {path}: {e}");
            std::process::exit(1);
        }
    };
    match ccsim_core::run_toml(&text, &overrides, None) {
        Ok(out) => {
            let s = &out.summary;
            println!(
                "stop={} sim_s={:.3} wall_s={:.4} events={} ev/s={:.0} data_pkts_sent={} pkts/s={:.0} ev/pkt={:.2} peak_pkts={} peak_heap={}",
                s.stop_reason.as_str(),
                s.sim_seconds,
                s.wall_seconds,
                s.events,
                s.events as f64 / s.wall_seconds,
                s.data_packets_sent,
                s.data_packets_sent as f64 / s.wall_seconds,
                s.events as f64 / s.data_packets_sent.max(1) as f64,
                s.peak_packets,
                s.peak_heap
            );
        }
        Err(e) => {
            eprintln!("run_scenario: {e}");
            std::process::exit(1);
        }
    }
}
