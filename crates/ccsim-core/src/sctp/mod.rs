// SPDX-License-Identifier: MIT
//! SCTP (RFC 4960): one association between two multihomed hosts, carrying one stream of an
//! always-backlogged application, as two sans-IO endpoints beside TCP's.
//!
//! ```text
//!   host A (addresses a0, a1)                              host B (addresses b0, b1)
//!   SctpSender ── path 0: a0 -> b0 (primary) ───────────> SctpReceiver
//!              ── path 1: a1 -> b1 (alternate) ─────────>
//!              <── SACK / HEARTBEAT ACK, to the address the DATA or HEARTBEAT came from
//! ```
//!
//! A *path* is a destination address (§6.4): the sender keeps per path a congestion window,
//! slow-start threshold, flight size, RTO, T3-rtx timer and error counter (`path.rs`); one TSN
//! space numbers all DATA chunks of the association (`sender.rs`). New data goes to the
//! primary path; timeout retransmissions to an alternate (§6.4); heartbeats probe the idle
//! paths (§8.3). A path whose error counter exceeds Path.Max.Retrans is inactive and new data
//! moves to the next active path (failover); an acknowledgment or a HEARTBEAT ACK makes it
//! active again, and data returns to the primary. The receiver (`receiver.rs`) acknowledges
//! with SACK chunks: cumulative TSN, gap-ack blocks and duplicate TSNs, every second packet or
//! within 200 ms, at once while a gap exists.
//!
//! Three modes (`SctpSpec::mode`): `Single`, RFC 4960 as above; `Cmt`, Concurrent Multipath
//! Transfer in the same sender (new data on every path, with SFR, CUC and DAC); `Ls`, paper
//! 004's load-sharing mode in its own sender (`ls.rs`: per-path SSN spaces, the paper's SACK,
//! redundant retransmission). CMT and LS paths may couple their growth by RFC 6356's LIA
//! (`path.rs`). Both senders read a SACK over their sequence space (TSNs, or one path's SSNs)
//! with the same code (`sack.rs`): the numbers it covers, the chunks it frees, the miss
//! indications it gives.
//!
//! How it plugs into the simulator: both ends implement [`crate::endpoint::Endpoint`], exactly
//! like TCP's, and the engine dispatches them through two more `AnyEndpoint` variants. Each
//! knows the addresses of its paths and sets a packet's source and destination address
//! itself; the network's static routes carry a packet to a destination address over the path
//! that reaches it (the paper's topology has two disjoint ones), so no engine change was
//! needed. The association starts established (no INIT handshake), as the Delaware ns-2
//! module's runs do.
//!
//! Modelled: one chunk per packet (no bundling), 32-bit TSNs without wrap-around, real header
//! sizes on the wire (common header 12 B, DATA 16 B, SACK 16 B + 4 B per gap block and per
//! duplicate TSN; at most [`SctpSack::MAX_GAPS`](crate::packet::SctpSack::MAX_GAPS) blocks and
//! [`SctpSack::MAX_DUPS`](crate::packet::SctpSack::MAX_DUPS) duplicates per SACK, the rest
//! counted by the receiver). Not modelled: the handshake and shutdown, bundling, multiple
//! streams, the idle-path cwnd decay of §7.2.1, the receiver's heartbeats. The model in words:
//! `docs/sctp.md`.

pub mod config;
pub mod ls;
pub mod path;
pub mod received;
pub mod receiver;
mod sack;
pub mod sender;

pub use config::{LsOutstanding, MaxBurstRule, RtxPolicy, SctpMode, SctpSpec};
pub use ls::LsSender;
pub use path::{Path, PathCounters};
pub use receiver::{SctpReceiver, SctpReceiverConfig};
pub use sender::{SctpSender, SctpSenderConfig};

#[cfg(test)]
mod tests;
