# SPDX-License-Identifier: MIT
"""Paper 003's Fig. 1 (the model's throughput vs background, from R and p measured by ping) and
the model's curve beside Fig. 3 (FTP throughput vs background), drawn from runs of this folder's
scenario. The plan machinery draws points of runs, not functions of them, so this script runs
the same points as the plan's ``fig3`` / ``fig1_rtt`` (lines ``noqos`` and ``qos5000``) and
draws the models with ``ccsim.models``.

For each background level, with and without QoS: the ping probe's mean RTT R (answered
requests) and loss ratio p (requests without a reply, of those counted), p = 1e-6 where nothing
was lost, as the paper did; then

- the paper's bound 0.866 B/(R sqrt p) with B = 1,000 B (delayed ACKs, b = 2; it is Mathis et
  al.'s square-root law with b = 2), and 1.22 B/(R sqrt p) (b = 1);
- PFTK (Padhye et al. 1998, b = 2, T0 = 1 s, no window limit);
- the FTP goodput the same run measured.

Writes ``fig1_model.{png,svg}``, ``fig3_model.{png,svg}`` and ``fig1_model.csv`` into ``--out``
(default ``results/p003``) and prints the table. Run from the repository root:
``python experiments/p003-diffserv/fig1_model.py [--out DIR]``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

import ccsim
from ccsim import models

HERE = Path(__file__).parent
BACKGROUND_MBPS = (5, 10, 15, 20, 25)
#: The plan's lines ``noqos`` and ``qos5000`` as overrides.
CONFIGS = {
    "without QoS": ['nodes.r1="router"', 'links.bottleneck.queue={type="droptail", limit=64}'],
    "with QoS (CAR + LLQ 5000)": [],
}
SEGMENT_BYTES = 1000
PFTK_T0_S = 1.0
#: The scenario's bottleneck rate (an assumption of the plan).
BOTTLENECK_MBPS = 22


def measure() -> pd.DataFrame:
    """One run per configuration and background level: R, p, the models and the goodput."""
    sc = ccsim.Scenario.from_toml(HERE / "scenario.toml")
    rows = []
    for config, overrides in CONFIGS.items():
        for bg in BACKGROUND_MBPS:
            r = ccsim.run(sc, overrides=[*overrides, f'flows.mgen.rate="{bg}Mbps"'])
            ftp = r.flows.set_index("name").loc["ftp"]
            pings = r.pings
            counted = pings[pings["counted"] == 1]
            rtt = float(counted["rtt_s"].mean())
            p = 1.0 - counted["rtt_s"].notna().sum() / len(counted)
            p_model = p if p > 0 else models.P_WHEN_NO_LOSS
            rows.append(
                {
                    "config": config,
                    "background_mbps": bg,
                    "rtt_s": rtt,
                    "p": p,
                    "p_model": p_model,
                    "bound_b2_mbps": models.sqrt_bound(SEGMENT_BYTES, rtt, p) * 8 / 1e6,
                    "bound_b1_mbps": models.sqrt_bound(SEGMENT_BYTES, rtt, p, delayed_acks=False)
                    * 8
                    / 1e6,
                    "pftk_b2_mbps": models.padhye(SEGMENT_BYTES, rtt, p_model, PFTK_T0_S, b=2)
                    * 8
                    / 1e6,
                    "goodput_mbps": float(ftp["goodput_bps"]) / 1e6,
                    "completion_time_s": float(ftp["completion_time_s"]),
                }
            )
    return pd.DataFrame(rows)


def _pyplot():  # type: ignore[no-untyped-def]
    """Headless pyplot with a fixed SVG salt, so the same figure gives the same bytes (as
    ``ccsim.experiment.figures`` does)."""
    import matplotlib

    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "ccsim"
    import matplotlib.pyplot as plt

    return plt


def _save(plt, f, out: Path, name: str) -> None:  # type: ignore[no-untyped-def]
    for suffix in (".png", ".svg"):
        f.savefig(out / f"{name}{suffix}", metadata={"Date": None} if suffix == ".svg" else None)
    plt.close(f)


def draw(t: pd.DataFrame, out: Path) -> None:
    plt = _pyplot()
    configs = list(CONFIGS)
    # Fig. 1: the models from ping's R and p, one panel per configuration, log scale (with
    # p = 1e-6 the bound is far above the link).
    f, axes = plt.subplots(1, 2, figsize=(10, 4), dpi=120, sharey=True)
    for ax, config in zip(axes, configs):
        d = t[t["config"] == config]
        x = d["background_mbps"]
        ax.plot(x, d["bound_b2_mbps"], "o-", label="paper: 0.866 B/(R√p) (Mathis, b = 2)")
        ax.plot(x, d["bound_b1_mbps"], "s--", label="1.22 B/(R√p) (Mathis, b = 1)")
        ax.plot(x, d["pftk_b2_mbps"], "^-.", label="PFTK (b = 2, T0 = 1 s)")
        ax.plot(x, d["goodput_mbps"], "kD-", label="FTP goodput (run)")
        ax.axhline(BOTTLENECK_MBPS, color="grey", lw=0.8, ls=":", label="bottleneck rate")
        ax.set_yscale("log")
        ax.set_title(config)
        ax.set_xlabel("UDP background (Mbit/s)")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("throughput (Mbit/s)")
    axes[1].legend(fontsize=7, loc="lower left")
    f.suptitle(
        "Fig. 1: TCP throughput models from the ping probe's R and p (p = 1e-6 without loss)",
        fontsize=10,
    )
    f.tight_layout()
    _save(plt, f, out, "fig1_model")
    # Fig. 3 with the model beside the runs: goodput measured and the paper's bound.
    f, ax = plt.subplots(figsize=(7, 4.5), dpi=120)
    for config, colour in zip(configs, ("tab:red", "tab:blue")):
        d = t[t["config"] == config]
        x = d["background_mbps"]
        ax.plot(x, d["goodput_mbps"], "o-", color=colour, label=f"{config}: FTP goodput (run)")
        ax.plot(x, d["bound_b2_mbps"], "--", color=colour, label=f"{config}: 0.866 B/(R√p)")
    ax.axhline(BOTTLENECK_MBPS, color="grey", lw=0.8, ls=":", label="bottleneck rate")
    ax.set_yscale("log")
    ax.set_xlabel("UDP background (Mbit/s)")
    ax.set_ylabel("throughput (Mbit/s)")
    ax.set_title("Fig. 3: FTP throughput vs background, runs and the paper's model", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    f.tight_layout()
    _save(plt, f, out, "fig3_model")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("results/p003"))
    args = ap.parse_args()
    t = measure()
    args.out.mkdir(parents=True, exist_ok=True)
    t.to_csv(args.out / "fig1_model.csv", index=False)
    draw(t, args.out)
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(t.round(4).to_string(index=False))


if __name__ == "__main__":
    main()
