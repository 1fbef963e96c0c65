# SPDX-License-Identifier: MIT
"""Whole-run validations against analytic models and invariants."""

from __future__ import annotations

from pathlib import Path

import pytest

import ccsim
from ccsim import models


@pytest.mark.parametrize("p", [0.001, 0.005, 0.01, 0.02, 0.05])
def test_reno_under_uniform_loss_lands_within_20_percent_of_padhye(
    examples: Path, p: float
) -> None:
    # One Reno flow, no delayed ACKs (b = 1), loss on the data direction only. The bottleneck
    # is raised to 100 Mbit/s so the window, not the link, limits the flow, as the model
    # assumes. T0 is the RFC 6298 floor of 1 s (the RTT is ~45 ms). RTT is the run's own mean.
    res = ccsim.run(
        examples / "random-loss.toml",
        seed=1,
        overrides=[
            f"links.bottleneck.loss.rate={p}",
            'links.bottleneck.rate="100Mbps"',
            'duration="400s"',
        ],
    )
    f = res.flows.iloc[0]
    measured = f["goodput_bps"] / 8 / 1460
    predicted = models.padhye_packets(f["rtt_mean_s"], p, 1.0, b=1)
    assert measured == pytest.approx(predicted, rel=0.20), (measured, predicted)


def test_every_run_conserves_packets(examples: Path) -> None:
    for f in sorted(examples.glob("*.toml")):
        s = ccsim.run(f, overrides=['duration="5s"']).summary
        assert s is not None
        assert s.packets_created == s.packets_delivered + s.packets_dropped + s.packets_alive


def test_the_same_seed_gives_the_same_tables_and_another_seed_does_not(examples: Path) -> None:
    a = ccsim.run(examples / "random-loss.toml", seed=9, overrides=['duration="20s"'])
    b = ccsim.run(examples / "random-loss.toml", seed=9, overrides=['duration="20s"'])
    c = ccsim.run(examples / "random-loss.toml", seed=10, overrides=['duration="20s"'])
    assert a.flows.equals(b.flows) and a.series.equals(b.series)
    assert not a.flows.equals(c.flows)
