// SPDX-License-Identifier: MIT
//! The active queue management kinds of a link's `queue` (`docs/scenario.md`, "Queues"):
//! `codel` (RFC 8289), `fq_codel` (RFC 8290), `pie` (RFC 8033), `dualpi2` (RFC 9332) and `tbf`
//! (a token-bucket shaper). Every constant of each mechanism is a key, defaulting to its RFC's value (or, where
//! the RFC leaves it open, Linux's); sizes that stand for "one packet" (CoDel's MAXPACKET,
//! PIE's MEAN_PKTSIZE) default to the link's MTU, and a shaper's bucket must hold one.

use super::reader::{opt, Reader, Res, RATE_SHORT, SIZE_SHORT};
use crate::queue::{CodelParams, DualPi2Params, FqCodelParams, MaxpacketScope, PieParams};
use crate::scenario::spec::{QueueLimit, QueueSpec};
use crate::time::SimDuration;

pub(super) const AQM_TYPES: &[&str] = &["codel", "fq_codel", "pie", "dualpi2", "tbf"];

const CODEL_KEYS: &[&str] = &["type", "limit", "target", "interval", "maxpacket", "ecn"];
const FQ_CODEL_KEYS: &[&str] = &[
    "type",
    "limit",
    "memory_limit",
    "flows",
    "quantum",
    "target",
    "interval",
    "maxpacket",
    "ecn",
    "drop_batch",
    "maxpacket_scope",
];
const PIE_KEYS: &[&str] = &[
    "type",
    "limit",
    "target",
    "t_update",
    "max_burst",
    "alpha",
    "beta",
    "mean_packet_size",
    "dq_rate_estimator",
    "dq_threshold",
    "derandomize",
    "ecn",
    "mark_ecnth",
];
const DUALPI2_KEYS: &[&str] = &[
    "type", "limit", "target", "t_update", "alpha", "beta", "k", "min_th", "range", "th_len",
    "tshift",
];
const TBF_KEYS: &[&str] = &["type", "limit", "rate", "burst"];

/// Linux's default hard limit of `codel` and `pie` (RFC 8289 and RFC 8033 leave it open).
const AQM_LIMIT_PACKETS: u64 = 1000;

fn millis(x: u64) -> SimDuration {
    SimDuration::from_millis(x)
}

/// Reads the keys of an AQM queue of kind `kind` on a link whose MTU is `mtu`; `read_limit`
/// reads a DropTail-style `limit`.
pub(super) fn read_aqm(
    r: &mut Reader,
    kind: &str,
    mtu: u32,
    read_limit: fn(&super::reader::Field) -> Res<QueueLimit>,
) -> Res<QueueSpec> {
    match kind {
        "codel" => {
            r.allow(CODEL_KEYS)?;
            let limit =
                opt(r, "limit", read_limit)?.unwrap_or(QueueLimit::Packets(AQM_LIMIT_PACKETS));
            let params = read_codel(r, mtu, false)?;
            Ok(QueueSpec::Codel { limit, params })
        }
        "fq_codel" => {
            r.allow(FQ_CODEL_KEYS)?;
            // RFC 8290 §5.1: flows 1024, quantum 1514 B (an Ethernet frame), limit 10,240
            // packets; memory_limit 32 MiB as Linux.
            let limit = opt(r, "limit", |f| f.int_in(1, i64::MAX))?.unwrap_or(10_240) as u64;
            let memory_limit = opt(r, "memory_limit", |f| f.positive_size())?.unwrap_or(32 << 20);
            let flows = opt(r, "flows", |f| f.u32_in(1, 65_536))?.unwrap_or(1024);
            let quantum = opt(r, "quantum", |f| f.size_u32(1))?.unwrap_or(1514);
            // RFC 8290 §5.1: ECN on by default (as Linux's fq_codel).
            let codel = read_codel(r, mtu, true)?;
            let drop_batch = opt(r, "drop_batch", |f| f.u32_in(1, 65_536))?.unwrap_or(1);
            // Linux's whole-queue backlog by default; "flow" is ns-3's (queue/fq_codel.rs).
            let maxpacket_scope = match opt(r, "maxpacket_scope", |f| f.choice(&["queue", "flow"]))?
            {
                Some("flow") => MaxpacketScope::Flow,
                _ => MaxpacketScope::Queue,
            };
            Ok(QueueSpec::FqCodel(FqCodelParams {
                codel,
                flows,
                quantum,
                limit,
                memory_limit,
                drop_batch,
                maxpacket_scope,
            }))
        }
        "pie" => {
            r.allow(PIE_KEYS)?;
            let limit =
                opt(r, "limit", read_limit)?.unwrap_or(QueueLimit::Packets(AQM_LIMIT_PACKETS));
            // RFC 8033 §4 and §5: QDELAY_REF 15 ms, T_UPDATE 15 ms, MAX_BURST 150 ms,
            // alpha 0.125 Hz, beta 1.25 Hz, DQ_THRESHOLD 16 KB (2^14 B), mark_ecnth 10 %.
            let params = PieParams {
                target: opt(r, "target", |f| f.positive_duration())?.unwrap_or(millis(15)),
                t_update: opt(r, "t_update", |f| f.positive_duration())?.unwrap_or(millis(15)),
                max_burst: opt(r, "max_burst", |f| f.duration())?.unwrap_or(millis(150)),
                alpha: opt(r, "alpha", |f| f.positive_number())?.unwrap_or(0.125),
                beta: opt(r, "beta", |f| f.positive_number())?.unwrap_or(1.25),
                mean_packet_size: opt(r, "mean_packet_size", |f| f.size_u32(1))?.unwrap_or(mtu)
                    as u64,
                dq_rate_estimator: opt(r, "dq_rate_estimator", |f| f.boolean())?.unwrap_or(false),
                dq_threshold: opt(r, "dq_threshold", |f| f.positive_size())?.unwrap_or(16_384),
                derandomize: opt(r, "derandomize", |f| f.boolean())?.unwrap_or(false),
                ecn: opt(r, "ecn", |f| f.boolean())?.unwrap_or(false),
                mark_ecnth: opt(r, "mark_ecnth", |f| f.probability())?.unwrap_or(0.1),
            };
            Ok(QueueSpec::Pie { limit, params })
        }
        "dualpi2" => {
            r.allow(DUALPI2_KEYS)?;
            Ok(QueueSpec::DualPi2(read_dualpi2(r, read_limit)?))
        }
        _ => {
            r.allow(TBF_KEYS)?;
            let limit = opt(r, "limit", read_limit)?
                .unwrap_or(QueueLimit::Packets(super::links::DEFAULT_QUEUE_PACKETS));
            let rate_field = r.req("rate", RATE_SHORT)?;
            let rate = rate_field.rate()?;
            if rate.bits_per_sec() == 0 {
                return Err(rate_field.out_of_range("greater than 0"));
            }
            let burst_field = r.req("burst", SIZE_SHORT)?;
            let burst = burst_field.size()?;
            if burst < mtu as u64 {
                return Err(burst_field.error(format!(
                    "{burst} B is less than the link's MTU ({mtu} B); the bucket must hold \
                     the largest packet, or that packet could never leave"
                )));
            }
            Ok(QueueSpec::Tbf { limit, rate, burst })
        }
    }
}

/// DualPI2's keys, defaulting to RFC 9332 Appendix A.1's parameters (`DualPi2Params::default`;
/// the limit, 250 ms of the link's rate, is set when the queue is built).
fn read_dualpi2(
    r: &mut Reader,
    read_limit: fn(&super::reader::Field) -> Res<QueueLimit>,
) -> Res<DualPi2Params> {
    let d = DualPi2Params::default();
    Ok(DualPi2Params {
        limit: opt(r, "limit", read_limit)?,
        target: opt(r, "target", |f| f.positive_duration())?.unwrap_or(d.target),
        t_update: opt(r, "t_update", |f| f.positive_duration())?.unwrap_or(d.t_update),
        alpha: opt(r, "alpha", |f| f.positive_number())?.unwrap_or(d.alpha),
        beta: opt(r, "beta", |f| f.positive_number())?.unwrap_or(d.beta),
        k: opt(r, "k", |f| {
            let k = f.number()?;
            if k >= 0.0 {
                Ok(k)
            } else {
                Err(f.out_of_range("0 or more"))
            }
        })?
        .unwrap_or(d.k),
        min_th: opt(r, "min_th", |f| f.duration())?.unwrap_or(d.min_th),
        range: opt(r, "range", |f| f.duration())?.unwrap_or(d.range),
        th_len: opt(r, "th_len", |f| f.int_in(0, 1 << 32))?.map_or(d.th_len, |n| n as u64),
        tshift: opt(r, "tshift", |f| f.duration())?.unwrap_or(d.tshift),
    })
}

/// CoDel's keys, shared by `codel` and `fq_codel` (whose ECN default differs): RFC 8289 §4.3
/// (target 5 ms) and §4.2 (interval 100 ms); MAXPACKET the link MTU.
fn read_codel(r: &mut Reader, mtu: u32, ecn_default: bool) -> Res<CodelParams> {
    Ok(CodelParams {
        target: opt(r, "target", |f| f.positive_duration())?.unwrap_or(millis(5)),
        interval: opt(r, "interval", |f| f.positive_duration())?.unwrap_or(millis(100)),
        maxpacket: opt(r, "maxpacket", |f| f.size_u32(0))?.unwrap_or(mtu) as u64,
        ecn: opt(r, "ecn", |f| f.boolean())?.unwrap_or(ecn_default),
    })
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::*;

    #[test]
    fn aqm_queues_default_to_their_rfcs_values_and_one_packet_sizes_to_the_link_mtu() {
        let s = spec(
            MINIMAL,
            &[
                "links.bottleneck.mtu=1400",
                "links.bottleneck.queue={type=\"codel\"}",
                "links.bottleneck.b_to_a.queue={type=\"pie\"}",
            ],
        );
        let l = &s.links["bottleneck"];
        let codel = CodelParams {
            target: millis(5),
            interval: millis(100),
            maxpacket: 1400,
            ecn: false,
        };
        assert_eq!(
            l.a_to_b.queue,
            QueueSpec::Codel {
                limit: QueueLimit::Packets(1000),
                params: codel,
            }
        );
        assert_eq!(
            l.b_to_a.queue,
            QueueSpec::Pie {
                limit: QueueLimit::Packets(1000),
                params: PieParams {
                    target: millis(15),
                    t_update: millis(15),
                    max_burst: millis(150),
                    alpha: 0.125,
                    beta: 1.25,
                    mean_packet_size: 1400,
                    dq_rate_estimator: false,
                    dq_threshold: 16_384,
                    derandomize: false,
                    ecn: false,
                    mark_ecnth: 0.1,
                },
            }
        );
        let s = spec(MINIMAL, &["links.bottleneck.queue={type=\"dualpi2\"}"]);
        let d = DualPi2Params::default();
        assert_eq!(s.links["bottleneck"].a_to_b.queue, QueueSpec::DualPi2(d));
        // RFC 9332 A.1's values, as written there (its Linux t_update, alpha and beta).
        assert_eq!(
            (d.limit, d.target, d.t_update, d.alpha, d.beta, d.k),
            (None, millis(15), millis(16), 0.16, 3.2, 2.0)
        );
        assert_eq!(
            (d.min_th, d.range, d.th_len, d.tshift),
            (
                SimDuration::from_micros(800),
                SimDuration::from_micros(400),
                1,
                millis(50)
            )
        );
        let s = spec(
            MINIMAL,
            &["links.bottleneck.queue={type=\"dualpi2\", k=0, range=\"0s\", limit=\"1MB\"}"],
        );
        assert_eq!(
            s.links["bottleneck"].a_to_b.queue,
            QueueSpec::DualPi2(DualPi2Params {
                limit: Some(QueueLimit::Bytes(1_000_000)),
                k: 0.0,
                range: SimDuration::ZERO,
                ..d
            })
        );
        let s = spec(MINIMAL, &["links.bottleneck.queue={type=\"fq_codel\"}"]);
        assert_eq!(
            s.links["bottleneck"].a_to_b.queue,
            QueueSpec::FqCodel(FqCodelParams {
                codel: CodelParams {
                    maxpacket: 1500,
                    ecn: true,
                    ..codel
                },
                flows: 1024,
                quantum: 1514,
                limit: 10_240,
                memory_limit: 32 << 20,
                drop_batch: 1,
                maxpacket_scope: MaxpacketScope::Queue,
            })
        );
    }
}
