// SPDX-License-Identifier: MIT
//! [`SctpSpec`]: every parameter of an association, with RFC 4960's defaults (§15) and, where
//! RFC 4960 leaves a value open, the Delaware ns-2 module's.

use crate::time::SimDuration;

/// Bytes of headers in front of a DATA chunk's user data: IPv4 20, SCTP common header 12
/// (§3.1), DATA chunk header 16 (§3.3.1).
pub const DATA_OVERHEAD: u32 = 20 + 12 + 16;
/// A SACK without gap blocks or duplicates: IPv4 20, common header 12, SACK chunk 16 (§3.3.4).
pub const SACK_BASE: u32 = 20 + 12 + 16;
/// The paper's LS SACK adds a 4-byte Cumulative SSN Ack (seed 004 §3.2, Fig. 4): its chunk
/// is 20 + 4N + 4X bytes.
pub const LS_SACK_BASE: u32 = SACK_BASE + 4;
/// A HEARTBEAT or HEARTBEAT ACK: IPv4 20, common header 12, chunk header 4, the Heartbeat Info
/// parameter's header 4 and 8 bytes of sender-specific info (the send time) (§3.3.5).
pub const HEARTBEAT_BYTES: u32 = 20 + 12 + 4 + 4 + 8;

/// How an association uses its paths.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SctpMode {
    /// RFC 4960: new data to the primary path only; the others carry retransmissions and
    /// heartbeats, and new data after a failover.
    Single,
    /// The paper's load-sharing mode (seed 004 §3): new data on every path in proportion to
    /// its cwnd, per-path SSNs and per-path error control, redundant retransmission
    /// (`sctp/ls.rs`).
    Ls,
    /// Concurrent Multipath Transfer (Iyengar, Amer, Stewart 2006): new data on every path at
    /// once in one TSN space, with the split fast retransmit (SFR), the cwnd update (CUC) and
    /// the delayed ack (DAC) for CMT, and a retransmission policy.
    Cmt,
}

/// LS mode: what the receive-window rule subtracts from the SACK's window (seed 004 Fig. 6 and
/// §3.5: `rwnd = floor(a_rwnd / chunk size) - outstanding`). `docs/sctp.md` §6 reads the
/// paper's text term by term and says why `Unacked` is the default.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LsOutstanding {
    /// The paper's words: HTSN - CTSN, every TSN sent above the cumulative TSN, those the
    /// receiver already holds (acknowledged by their path's SSN SACK) included, though a_rwnd
    /// has already taken them out of the buffer.
    HtsnMinusCtsn,
    /// RFC 4960 §6.2.1 D iv's "still outstanding": the TSNs neither cumulatively nor
    /// SSN-acknowledged (the paper's Virtual Send buffer, §3.5), so a held chunk counts once.
    Unacked,
}

/// LS mode: when Max.Burst limits a path's sending.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MaxBurstRule {
    /// RFC 4960 §6.1 D: at every send opportunity (a SACK, a heartbeat ACK, a timer).
    Rfc4960,
    /// ns-2's SCTP module (`useMaxBurst_`, its reading of the implementers' guide's change to
    /// RFC 2960 §7.2.4): only once a SACK cumulatively acknowledges a chunk that was
    /// retransmitted, and until the limit has stopped a burst once.
    Ns2,
}

/// Where a CMT sender resends a chunk (Iyengar et al., ICON 2004).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RtxPolicy {
    /// The path it was sent on (unless inactive).
    Same,
    /// The active path with the largest cwnd (ns-2's default, `eCmtRtxPolicy_ 4`).
    Cwnd,
    /// The active path with the largest ssthresh.
    Ssthresh,
}

#[derive(Clone, Debug, PartialEq)]
pub struct SctpSpec {
    pub mode: SctpMode,
    /// Bytes on the wire of a full DATA packet (IP header included); the user data per chunk
    /// is `packet_size - 48` (1452 B at 1500, ns-2's `dataChunkSize_ 1468` with its header).
    /// Also the MTU of the congestion-control rules (§7.2).
    pub packet_size: u32,
    /// The receiver's buffer, and the a_rwnd it advertises when empty (ns-2 `initialRwnd_`
    /// 65536).
    pub rcv_buffer: u64,
    /// Initial cwnd, bytes; `None`: min(4·MTU, max(2·MTU, 4380 B)) (§7.2.1).
    pub initial_cwnd: Option<u64>,
    /// Initial ssthresh, bytes; `None`: the peer's a_rwnd (§7.2.1 allows "arbitrarily high").
    pub initial_ssthresh: Option<u64>,
    /// RTO.Initial, RTO.Min, RTO.Max (§15: 3 s, 1 s, 60 s).
    pub rto_initial: SimDuration,
    pub rto_min: SimDuration,
    pub rto_max: SimDuration,
    /// Path.Max.Retrans (5) and Association.Max.Retrans (10) (§8.1, §8.2, §15).
    pub path_max_retrans: u32,
    pub assoc_max_retrans: u32,
    /// HB.interval (30 s, §8.3, §15).
    pub hb_interval: SimDuration,
    /// Max.Burst (4, §6.1, §15): packets per send opportunity; 0 = no limit.
    pub max_burst: u32,
    /// LS mode: when Max.Burst applies (RFC 4960's rule or ns-2's).
    pub max_burst_rule: MaxBurstRule,
    /// Miss indications that trigger a fast retransmit (3, §7.2.4; RFC 2960 had 4).
    pub fast_rtx_threshold: u32,
    /// Timeout retransmissions go to an alternate active path (§6.4 SHOULD; ns-2 `rtxToAlt_`).
    pub rtx_to_alt: bool,
    /// The receiver acknowledges every `sack_frequency`-th DATA packet (2, §6.2) ...
    pub sack_frequency: u32,
    /// ... or this long after the first unacknowledged one (200 ms, §6.2; at most 500 ms).
    pub sack_delay: SimDuration,
    /// LS mode: a chunk judged lost is also resent once on another path with cwnd room (the
    /// paper's redundant retransmission); false is the paper's "LS 1Rtx".
    pub ls_redundant_rtx: bool,
    /// LS mode: what the receive-window rule counts as outstanding: the TSNs not yet
    /// acknowledged (default), or HTSN - CTSN as the paper's formulas write it.
    pub ls_outstanding: LsOutstanding,
    /// CMT's split fast retransmit, cwnd update and delayed ack (all on, as ns-2's defaults).
    pub cmt_sfr: bool,
    pub cmt_cuc: bool,
    pub cmt_dac: bool,
    /// CMT's retransmission destination.
    pub rtx_policy: RtxPolicy,
    /// CMT and LS: couple the paths' congestion avoidance by RFC 6356's linked increase (LIA)
    /// instead of growing each on its own.
    pub coupled: bool,
}

impl Default for SctpSpec {
    fn default() -> Self {
        SctpSpec {
            mode: SctpMode::Single,
            packet_size: 1500,
            rcv_buffer: 65_536,
            initial_cwnd: None,
            initial_ssthresh: None,
            rto_initial: SimDuration::from_secs(3),
            rto_min: SimDuration::from_secs(1),
            rto_max: SimDuration::from_secs(60),
            path_max_retrans: 5,
            assoc_max_retrans: 10,
            hb_interval: SimDuration::from_secs(30),
            max_burst: 4,
            max_burst_rule: MaxBurstRule::Rfc4960,
            fast_rtx_threshold: 3,
            rtx_to_alt: true,
            sack_frequency: 2,
            sack_delay: SimDuration::from_millis(200),
            ls_redundant_rtx: true,
            ls_outstanding: LsOutstanding::Unacked,
            cmt_sfr: true,
            cmt_cuc: true,
            cmt_dac: true,
            rtx_policy: RtxPolicy::Cwnd,
            coupled: false,
        }
    }
}

impl SctpSpec {
    /// User data bytes of one chunk.
    pub fn chunk_len(&self) -> u32 {
        self.packet_size - DATA_OVERHEAD
    }
    /// The MTU of the congestion-control rules.
    pub fn mtu(&self) -> u64 {
        self.packet_size as u64
    }
    /// §7.2.1: min(4·MTU, max(2·MTU, 4380 bytes)), unless the scenario sets it.
    pub fn initial_cwnd(&self) -> u64 {
        let mtu = self.mtu();
        self.initial_cwnd
            .unwrap_or_else(|| (4 * mtu).min((2 * mtu).max(4380)))
    }
}
