// SPDX-License-Identifier: MIT
//! Capture points (`[trace] pcap`): which files a run writes, what they hold, the errors of a
//! scenario asking for them, and that capturing never changes a run's results. tshark's reading of the
//! files is tested from Python (tests/python/test_pcap.py).
use std::path::{Path, PathBuf};

use crate::common::*;
use ccsim_core::{load_scenario, run_with_options, Error, RunOptions, RunOutput};

fn scratch_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ccsim-pcap-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn run_capturing(text: &str, overrides: &[&str], dir: &Path) -> Result<RunOutput, Error> {
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    let loaded = load_scenario(text, &overrides, None)?;
    run_with_options(
        &loaded.spec,
        &RunOptions {
            pcap_dir: Some(dir.to_path_buf()),
            ..RunOptions::default()
        },
    )
}

/// The records of a nanosecond pcap file: (time ns, captured bytes, true length).
fn records(path: &Path) -> Vec<(u64, Vec<u8>, u32)> {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(
        &bytes[0..4],
        &0xa1b2_3c4du32.to_le_bytes(),
        "nanosecond magic"
    );
    let mut out = Vec::new();
    let mut at = 24;
    let word = |i: usize| u32::from_le_bytes(bytes[i..i + 4].try_into().unwrap());
    while at < bytes.len() {
        let ns = word(at) as u64 * 1_000_000_000 + word(at + 4) as u64;
        let (cap, len) = (word(at + 8) as usize, word(at + 12));
        out.push((ns, bytes[at + 16..at + 16 + cap].to_vec(), len));
        at += 16 + cap;
    }
    out
}

#[test]
fn a_scenario_asking_for_captures_without_a_folder_is_refused_naming_trace_pcap() {
    let loaded = load_scenario(LOSSY_WIRELESS, &["trace.pcap=[\"mh\"]".into()], None).unwrap();
    let Err(Error::Scenario(e)) = ccsim_core::run(&loaded.spec) else {
        panic!("ran without a capture folder");
    };
    assert_eq!(e.path, "trace.pcap");
    assert!(e.message.contains("folder"), "{}", e.message);
}

#[test]
fn capture_points_naming_an_unknown_node_or_a_link_the_node_is_not_on_are_refused() {
    let err = |o: &str| load_scenario(LOSSY_WIRELESS, &[o.into()], None).unwrap_err();
    let e = err("trace.pcap=[\"mh\", \"nope\"]");
    assert_eq!(e.path, "trace.pcap[1]");
    assert!(e.message.contains("not a node"), "{}", e.message);
    let e = err("trace.pcap=[\"fh:wl\"]");
    assert_eq!(e.path, "trace.pcap[0]");
    assert!(e.message.contains("not on link"), "{}", e.message);
    let e = err("trace.pcap_snaplen=10");
    assert_eq!(e.path, "trace.pcap_snaplen");
}

#[test]
fn a_node_gets_one_file_per_interface_holding_what_crossed_it_in_time_order() {
    let dir = scratch_dir("files");
    let out = run_capturing(LOSSY_WIRELESS, &["trace.pcap=[\"bs\", \"mh:wl\"]"], &dir).unwrap();
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["bs-wired.pcap", "bs-wl.pcap", "mh-wl.pcap"]);
    // mh's interface: what left over wl b_to_a (ACKs) and what arrived over wl a_to_b (all
    // that was sent but what the loss model took; the transfer ends with nothing in flight).
    let packets = u64s(&out.links, "packets");
    let lost = u64s(&out.links, "drops_loss");
    let (down, up) = (
        link_row(&out, "wl", "a_to_b"),
        link_row(&out, "wl", "b_to_a"),
    );
    let at_mh = records(&dir.join("mh-wl.pcap"));
    assert_eq!(at_mh.len() as u64, packets[up] + packets[down] - lost[down]);
    // bs's wl interface writes the lost ones too: they were on the wire.
    let at_bs = records(&dir.join("bs-wl.pcap"));
    assert_eq!(at_bs.len() as u64, packets[up] + packets[down]);
    assert!(lost[down] > 0, "the run must lose something");
    for recs in [&at_mh, &at_bs] {
        assert!(recs.windows(2).all(|w| w[0].0 <= w[1].0), "time order");
        // Every record is an IPv4 packet whose total length is its true length.
        for (_, bytes, len) in recs.iter() {
            assert_eq!(bytes[0], 0x45);
            assert_eq!(u16::from_be_bytes([bytes[2], bytes[3]]) as u32, *len);
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn capturing_changes_nothing_in_the_run() {
    let dir = scratch_dir("same");
    let off = run_toml(LOSSY_WIRELESS, &[], None);
    let on = run_capturing(
        LOSSY_WIRELESS,
        &["trace.pcap=[\"fh\", \"bs\", \"mh\"]"],
        &dir,
    )
    .unwrap();
    assert_eq!(on.flows, off.flows);
    assert_eq!(on.links, off.links);
    // Only the count of events grows: a captured interface keeps an event for each
    // transmission that waits (written at its instant) where others plan it (`link.rs`).
    assert!(on.summary.events > off.summary.events);
    assert_eq!(on.summary.data_packets, off.summary.data_packets);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_folder_that_cannot_be_made_is_a_run_error_naming_it() {
    let dir = scratch_dir("blocked");
    std::fs::write(&dir, b"a file, not a folder").unwrap();
    let Err(Error::Output(m)) = run_capturing(LOSSY_WIRELESS, &["trace.pcap=[\"mh\"]"], &dir)
    else {
        panic!("expected an output error");
    };
    assert!(m.contains(&dir.display().to_string()), "{m}");
    std::fs::remove_file(&dir).unwrap();
}

#[test]
fn an_sctp_association_is_captured_as_sctp_with_a_valid_crc32c() {
    let dir = scratch_dir("sctp");
    let text = crate::sctp::two_paths("2s", "[trace]\npcap = [\"h2:b0\"]\n");
    run_capturing(&text, &[], &dir).unwrap();
    let recs = records(&dir.join("h2-b0.pcap"));
    assert!(recs.len() > 100);
    let (_, bytes, len) = recs.iter().find(|r| r.1[9] == 132 && r.1[32] == 0).unwrap();
    // A DATA chunk: B|E flags, chunk length 16 + the user data the packet's size leaves.
    assert_eq!(bytes[33], 0b11);
    let chunk_len = u16::from_be_bytes([bytes[34], bytes[35]]) as u32;
    assert_eq!(chunk_len, len - 20 - 12);
    assert!(recs.iter().any(|r| r.1[9] == 132 && r.1[32] == 3), "a SACK");
    // RFC 9260 Appendix A: CRC32c over the SCTP packet (checksum field zero, the user data
    // zeros), stored least significant byte first; bit by bit here, the table in the writer.
    let mut sctp = bytes[20..].to_vec();
    sctp.resize(*len as usize - 20, 0);
    sctp[8..12].fill(0);
    let mut crc = !0u32;
    for b in sctp {
        crc ^= b as u32;
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0x82F6_3B78
            } else {
                crc >> 1
            };
        }
    }
    assert_eq!(bytes[28..32], (!crc).to_le_bytes());
    std::fs::remove_dir_all(&dir).unwrap();
}
