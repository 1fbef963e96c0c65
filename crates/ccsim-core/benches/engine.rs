// SPDX-License-Identifier: MIT
//! Criterion benchmarks of the core, in three tiers (SimPy's layout): frequent calls (the
//! scoreboard on every ACK, the event queue), and whole scenarios (P0 of `docs/performance.md`), reported as
//! elements per second so they read against the bare-heap ceiling given there.
//!
//! `cargo bench -p ccsim-core` (the `bench` profile keeps debug info for flamegraphs).

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use ccsim_core::arena::PacketArena;
use ccsim_core::calendar::{CalendarQueue, Keyed};
use ccsim_core::link::{Channel, Offer};
use ccsim_core::loss::LossModel;
use ccsim_core::packet::{Acknowledgment, Packet, TcpHeader, ECN_NOT_ECT};
use ccsim_core::queue::Queue;
use ccsim_core::rng::RngStream;
use ccsim_core::scenario::{LossSpec, QueueLimit, QueueSpec};
use ccsim_core::tcp::scoreboard::Scoreboard;
use ccsim_core::time::{Rate, SimDuration, SimTime};

// The Python module's allocator (crates/ccsim-py/src/lib.rs, "Allocator").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Steady state of a sender with `window` segments in flight: one send and one cumulative ACK
/// per step. Its cost must not grow with the window (`docs/performance.md`, "work per ACK").
fn scoreboard_send_ack(c: &mut Criterion) {
    let mut g = c.benchmark_group("scoreboard_send_ack");
    for window in [100u64, 10_000, 100_000] {
        g.throughput(Throughput::Elements(1));
        g.bench_with_input(BenchmarkId::from_parameter(window), &window, |b, &w| {
            let mss = 1448u32;
            let mut sb = Scoreboard::new(mss);
            for _ in 0..w {
                sb.on_send(mss, SimTime::ZERO);
            }
            let mut t = 0u64;
            b.iter(|| {
                t += 1;
                sb.on_send(mss, SimTime(t));
                let a = sb.on_cumulative_ack(sb.snd_una() + mss as u64);
                black_box(a);
            });
        });
    }
    g.finish();
}

/// A SACK-heavy recovery step: one hole at the front, each ACK SACKs one more segment.
fn scoreboard_sack(c: &mut Criterion) {
    let mut g = c.benchmark_group("scoreboard_sack_block");
    for window in [100u64, 10_000] {
        g.throughput(Throughput::Elements(window - 1));
        g.bench_with_input(BenchmarkId::from_parameter(window), &window, |b, &w| {
            let mss = 1448u64;
            b.iter(|| {
                let mut sb = Scoreboard::new(mss as u32);
                for _ in 0..w {
                    sb.on_send(mss as u32, SimTime::ZERO);
                }
                for k in 1..w {
                    sb.on_sack_block(mss, (k + 1) * mss);
                    sb.update_lost(3);
                }
                black_box(sb.pipe());
            });
        });
    }
    g.finish();
}

/// One hop of one data packet, the step every packet repeats at each link (`docs/performance.md`,
/// "The packet arena"): into the arena, offered to an idle 1 Gbit/s channel (queue discipline,
/// transmitter, propagation FIFO), out at the far end and out of the arena. `waiting` packets
/// stay on the wire ahead of it, so the FIFO is as deep as on a long path.
fn packet_hop(c: &mut Criterion) {
    let mut g = c.benchmark_group("packet_hop");
    for waiting in [0usize, 1_000] {
        g.throughput(Throughput::Elements(1));
        g.bench_with_input(BenchmarkId::from_parameter(waiting), &waiting, |b, &w| {
            let rate = Rate::gbps(1);
            let mut ch = Channel::new(
                "l".into(),
                "a_to_b",
                0,
                1,
                1,
                rate,
                SimDuration::from_millis(10),
                1500,
                Queue::new(
                    &QueueSpec::DropTail {
                        limit: QueueLimit::Packets(100),
                    },
                    RngStream::derive(1, "bench/queue"),
                    rate,
                ),
                LossModel::new(&LossSpec::None, RngStream::derive(1, "bench/loss")),
            );
            let mut pkts = PacketArena::new();
            let header = TcpHeader {
                seq: 1448,
                ack: Acknowledgment::cumulative(1),
                len: 1448,
                ..TcpHeader::default()
            };
            let segment = Packet::tcp_segment((0, 1), 1500, ECN_NOT_ECT, 0, SimTime::ZERO, header);
            // 12 us per packet at 1 Gbit/s: offered every 12 us, each finds the transmitter idle.
            let mut t = 0u64;
            for _ in 0..w {
                t += 12_000;
                let id = pkts.insert(segment.clone());
                black_box(ch.offer(SimTime(t), &mut pkts, id));
            }
            b.iter(|| {
                t += 12_000;
                let id = pkts.insert(segment.clone());
                let sent = ch.offer(SimTime(t), &mut pkts, id);
                assert!(matches!(sent, Offer::Sent { lost: false, .. }));
                let (head, _) = ch.on_arrive(&pkts).expect("a packet on the wire");
                black_box(pkts.take(head));
            });
        });
    }
    g.finish();
}

/// An event queue's entry as the engine keeps one: `(time, seq)` and a 4-byte payload.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Pending {
    key: u128,
    id: u32,
}
impl Keyed for Pending {
    fn key(&self) -> u128 {
        self.key
    }
}

/// The hold model (Brown 1988; Jones, CACM 29(4), 1986): `size` entries pending, each step
/// removes the earliest and inserts one at its time plus a delay drawn uniformly from 0 to
/// 400 ms (an endpoint's deadline re-armed one retransmission timeout ahead), so the queue
/// keeps its size. The calendar queue (`calendar.rs`) against `std`'s binary heap, the same
/// keys in the same order, the heap with the engine's overwrite of its root; at 1 k, 17 k (F10000's deadlines) and 130 k (F100000's) entries.
fn event_queue_hold(c: &mut Criterion) {
    let mut g = c.benchmark_group("event_queue_hold");
    g.throughput(Throughput::Elements(1));
    // xorshift64: the same delays for both queues, no dependency.
    fn delay(x: &mut u64) -> u64 {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        *x % 400_000_000
    }
    let key = |t: u64, seq: u64| (t as u128) << 64 | seq as u128;
    for size in [1_000u64, 17_000, 130_000] {
        g.bench_with_input(BenchmarkId::new("calendar", size), &size, |b, &n| {
            let mut q = CalendarQueue::new();
            let (mut x, mut seq) = (0x9e37_79b9_7f4a_7c15u64, 0);
            for _ in 0..n {
                seq += 1;
                q.push(Pending {
                    key: key(delay(&mut x), seq),
                    id: seq as u32,
                });
            }
            b.iter(|| {
                let e = q.pop().expect("the queue keeps its size");
                seq += 1;
                let t = (e.key >> 64) as u64 + delay(&mut x);
                q.push(Pending {
                    key: key(t, seq),
                    id: e.id,
                });
            });
        });
        g.bench_with_input(BenchmarkId::new("binary_heap", size), &size, |b, &n| {
            let mut q = BinaryHeap::new();
            let (mut x, mut seq) = (0x9e37_79b9_7f4a_7c15u64, 0);
            for _ in 0..n {
                seq += 1;
                q.push(Reverse(Pending {
                    key: key(delay(&mut x), seq),
                    id: seq as u32,
                }));
            }
            // As the engine does (`EventHeap`, "taken root"): the new entry overwrites the
            // root and sifts down once, instead of a removal and an insertion.
            b.iter(|| {
                let mut root = q.peek_mut().expect("the queue keeps its size");
                let Reverse(e) = *root;
                seq += 1;
                let t = (e.key >> 64) as u64 + delay(&mut x);
                *root = Reverse(Pending {
                    key: key(t, seq),
                    id: e.id,
                });
            });
        });
    }
    g.finish();
}

const P0: &str = r#"
duration = "10s"
[nodes]
h1 = "host"
r1 = "router"
r2 = "router"
d1 = "host"
[links.in]
a = "h1"
b = "r1"
rate = "100Mbps"
delay = "1ms"
queue = { type = "droptail", limit = 1000 }
[links.bottleneck]
a = "r1"
b = "r2"
rate = "10Mbps"
delay = "20ms"
queue = { type = "droptail", limit = 100 }
[links.out]
a = "r2"
b = "d1"
rate = "100Mbps"
delay = "1ms"
queue = { type = "droptail", limit = 1000 }
[flows.f1]
type = "tcp"
src = "h1"
dst = "d1"
variant = "sack"
mss = 1448
"#;

fn whole_scenario(c: &mut Criterion) {
    let spec = ccsim_core::load_scenario(P0, &[], None)
        .expect("P0 scenario")
        .spec;
    let events = ccsim_core::run(&spec).expect("run").summary.events;
    let mut g = c.benchmark_group("scenario");
    g.sample_size(10);
    g.throughput(Throughput::Elements(events));
    g.bench_function("p0_10s_events", |b| {
        b.iter(|| black_box(ccsim_core::run(&spec).expect("run")))
    });
    g.finish();
}

criterion_group!(
    benches,
    scoreboard_send_ack,
    scoreboard_sack,
    packet_hop,
    event_queue_hold,
    whole_scenario
);
criterion_main!(benches);
