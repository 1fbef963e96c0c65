# SPDX-License-Identifier: MIT
"""Paper 003's Fig. 1 and the model beside Fig. 3, as a table (the plan machinery has no figure
kind that draws a function of other points yet).

For each background level, with and without QoS: the ping probe's mean RTT R and loss ratio p
(p = 1e-6 where nothing was lost, as the paper did), the paper's bound 0.866 B/(R sqrt p) with
B = 1,000 B (and 1.22 without delayed ACKs), PFTK (b = 2, T0 = 1 s), and the FTP goodput the same
run measured. Run from the repository root: ``python experiments/p003-diffserv/fig1_model.py``.
"""

from __future__ import annotations

from pathlib import Path

import ccsim
from ccsim import models

HERE = Path(__file__).parent
NO_QOS = ['nodes.r1="router"', 'links.bottleneck.queue={type="droptail", limit=64}']


def main() -> None:
    sc = ccsim.Scenario.from_toml(HERE / "scenario.toml")
    print("bg Mbit/s  config  R ms   p        bound b=2  bound b=1  PFTK b=2  FTP goodput (Mbit/s)")
    for bg in (5, 10, 15, 20, 25):
        for name, ov in (("no QoS", NO_QOS), ("QoS", [])):
            r = ccsim.run(sc, overrides=[*ov, f'flows.mgen.rate="{bg}Mbps"'])
            ftp = r.flows.set_index("name").loc["ftp"]
            pings = r.pings
            rtt = float(pings["rtt_s"].mean())
            p = 1.0 - pings["rtt_s"].notna().sum() / pings["counted"].sum()
            p_model = p if p > 0 else models.P_WHEN_NO_LOSS
            mbps = 8 / 1e6
            print(
                f"{bg:9d}  {name:6s} {rtt * 1e3:5.1f} {p:8.4f} "
                f"{models.sqrt_bound(1000, rtt, p) * mbps:10.2f} "
                f"{models.sqrt_bound(1000, rtt, p, delayed_acks=False) * mbps:10.2f} "
                f"{models.padhye(1000, rtt, p_model, 1.0, b=2) * mbps:9.2f} "
                f"{ftp['goodput_bps'] / 1e6:10.2f}"
            )


if __name__ == "__main__":
    main()
