// SPDX-License-Identifier: MIT
use ccsim_core::RunOutput;
use proptest::prelude::*;

use crate::common::*;

/// created = delivered + dropped + alive, end to end; and per link direction:
/// offered = queue drops + MTU drops + transmitted + (queued + in transmission),
/// transmitted = loss drops + arrived + propagating.
pub fn assert_conserved(out: &RunOutput) {
    let s = &out.summary;
    assert_eq!(
        s.packets_created,
        s.packets_delivered + s.packets_dropped + s.packets_alive,
        "end to end: {s:?}"
    );
    let l = &out.links;
    for i in 0..l.rows() {
        let offered = u64s(l, "packets_offered")[i];
        let tx = u64s(l, "packets")[i];
        let arrived = u64s(l, "packets_arrived")[i];
        let inside = u64s(l, "packets_inside")[i];
        let dq = u64s(l, "drops_queue")[i] + u64s(l, "drops_mtu")[i];
        let dl = u64s(l, "drops_loss")[i];
        assert_eq!(offered, dq + dl + arrived + inside, "row {i}: offered");
        assert!(tx >= dl + arrived, "row {i}: transmitted < lost + arrived");
        assert!(
            offered >= dq + tx,
            "row {i}: offered < dropped + transmitted"
        );
    }
}

#[test]
fn a_lossy_dumbbell_conserves_packets() {
    let text = dumbbell(
        3,
        10,
        "20ms",
        "{ type = \"droptail\", limit = 20 }",
        "10s",
        "variant = \"sack\"",
    )
    .replace(
        "[links.in1]",
        "loss = { type = \"uniform\", rate = 0.03 }\n[links.in1]",
    );
    assert_conserved(&run_toml(&text, &[], None));
}

#[derive(Clone, Debug)]
struct RandomNet {
    routers: usize,
    hosts: usize,
    extra_links: Vec<(usize, usize)>,
    flows: Vec<(usize, usize, u8)>,
    loss: f64,
    queue: u32,
    rate_mbps: u32,
}

fn random_net() -> impl Strategy<Value = RandomNet> {
    (1usize..4, 2usize..5).prop_flat_map(|(routers, hosts)| {
        (
            Just(routers),
            Just(hosts),
            proptest::collection::vec((0..routers, 0..routers), 0..3),
            proptest::collection::vec((0..hosts, 0..hosts, 0u8..4), 1..4),
            prop_oneof![Just(0.0), 0.0..0.2f64],
            1u32..50,
            1u32..50,
        )
            .prop_map(
                |(routers, hosts, extra_links, flows, loss, queue, rate_mbps)| RandomNet {
                    routers,
                    hosts,
                    extra_links,
                    flows,
                    loss,
                    queue,
                    rate_mbps,
                },
            )
    })
}

fn to_toml(n: &RandomNet) -> String {
    let mut s = String::from("duration = \"3s\"\n[nodes]\n");
    for r in 0..n.routers {
        s += &format!("r{r} = \"router\"\n");
    }
    for h in 0..n.hosts {
        s += &format!("h{h} = \"host\"\n");
    }
    let mut k = 0;
    let mut link = |s: &mut String, a: String, b: String| {
        *s += &format!(
            "[links.l{k}]\na = \"{a}\"\nb = \"{b}\"\nrate = \"{}Mbps\"\ndelay = \"{}ms\"\nqueue = {{ type = \"droptail\", limit = {} }}\nloss = {{ type = \"uniform\", rate = {} }}\n",
            n.rate_mbps, 1 + k % 7, n.queue, n.loss
        );
        k += 1;
    };
    // A chain of routers keeps everything connected; hosts hang off routers.
    for r in 1..n.routers {
        link(&mut s, format!("r{}", r - 1), format!("r{r}"));
    }
    for h in 0..n.hosts {
        link(&mut s, format!("h{h}"), format!("r{}", h % n.routers));
    }
    for &(a, b) in &n.extra_links {
        if a != b {
            link(&mut s, format!("r{a}"), format!("r{b}"));
        }
    }
    for (i, &(a, b, kind)) in n.flows.iter().enumerate() {
        if a == b {
            continue;
        }
        s += &format!("[flows.f{i}]\nsrc = \"h{a}\"\ndst = \"h{b}\"\n");
        s += match kind {
            0 => "type = \"tcp\"\nvariant = \"newreno\"\n",
            1 => "type = \"tcp\"\nvariant = \"sack\"\nsize = \"50KB\"\n",
            2 => "type = \"cbr\"\nrate = \"2Mbps\"\n",
            _ => "type = \"short_tcp\"\narrival_rate = 5.0\nsizes = { dist = \"pareto\", mean = \"20KB\", shape = 1.5 }\n",
        };
    }
    s
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]
    #[test]
    fn random_small_networks_never_panic_and_always_conserve_packets(n in random_net(), seed in 0u64..1000) {
        let out = run_toml(&to_toml(&n), &[], Some(seed));
        assert_conserved(&out);
    }
}
