// SPDX-License-Identifier: MIT
//! The engine's identity: a hash of every source file that decides a run's result (the core's
//! sources and manifest, this crate's, and the workspace's Cargo.lock, which pins the random
//! number generators among others), exposed as `ccsim._core.ENGINE`. A sweep store keys runs by
//! it (python/ccsim/sweep.py), so a run made by other code is never taken for this code's.
//!
//! FNV-1a over (relative path, contents) in path order: no dependency, and the same files give
//! the same value on every machine and toolchain.

use std::fs;
use std::path::{Path, PathBuf};

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            files(&p, out);
        } else if p
            .extension()
            .is_some_and(|x| x == "rs" || x == "toml" || x == "lock")
        {
            out.push(p);
        }
    }
}

fn fnv1a(hash: &mut u64, bytes: &[u8]) {
    for &b in bytes {
        *hash ^= b as u64;
        *hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
}

fn main() {
    let here = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let root = here.join("../..");
    // Every input named from `root`, so that `rel` strips it from each: this crate's own
    // files were named from `here` and hashed with their absolute paths, so two checkouts of
    // the same commit had different engines and a store did not serve a copy of itself.
    let inputs = [
        root.join("crates/ccsim-core/src"),
        root.join("crates/ccsim-core/Cargo.toml"),
        root.join("crates/ccsim-py/src"),
        root.join("crates/ccsim-py/Cargo.toml"),
        root.join("Cargo.lock"),
    ];
    let mut list = vec![];
    for p in &inputs {
        println!("cargo:rerun-if-changed={}", p.display());
        if p.is_dir() {
            files(p, &mut list);
        } else if p.exists() {
            list.push(p.clone());
        }
    }
    let rel = |p: &Path| -> String {
        p.strip_prefix(&root)
            .expect("every input is named from the root")
            .to_string_lossy()
            .replace('\\', "/")
    };
    list.sort_by_key(|p| rel(p));
    let mut hash = 0xcbf2_9ce4_8422_2325_u64;
    for p in &list {
        fnv1a(&mut hash, rel(p).as_bytes());
        fnv1a(&mut hash, &[0]);
        fnv1a(&mut hash, &fs::read(p).unwrap_or_default());
        fnv1a(&mut hash, &[0]);
    }
    println!("cargo:rustc-env=CCSIM_ENGINE_ID={hash:016x}");
}
