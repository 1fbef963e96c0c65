#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""How long a point takes to come back to the explorer's page, measured in headless Chromium.

    python3 scripts/explore-latency.py [--repeat N]

Starts ``ccsim explore`` (on a free port, with an empty results folder in /tmp), shows paper
001's fig8 with one line (Reno) at one loss rate (5 %) and 10 seeds, then moves the MSS slider
to each value the plan offers, twice: the first pass simulates the point's 10 runs, the second
finds them in the store. For each move it prints the time from the slider's input event to the
point drawn on the page (this includes the page's 120 ms debounce), and the server's own time;
then the medians. Finally it times one run of paper 002's quick case-1 scenario (fig2, Reno,
quick mode) the same way. Run from the repository root.
"""

from __future__ import annotations

import argparse
import socket
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import uvicorn
from playwright.sync_api import sync_playwright

from ccsim.explore import create_app
from ccsim.site.browser import CHROMIUM_ARGS, find_chromium

MOVE = """([path, index]) => {
  const el = document.querySelector(`input[data-path='${path}']`);
  const before = window.ccsim.job;
  window.__t0 = performance.now();
  el.value = String(index);
  el.dispatchEvent(new Event('input'));
  return before;
}"""

DONE = """(before) => window.ccsim.job && window.ccsim.job !== before && window.ccsim.last
  && window.ccsim.last.type === 'done'
  && {page_s: (performance.now() - window.__t0) / 1000, server_s: window.ccsim.last.elapsed_s,
      simulated: window.ccsim.last.simulated}"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=2, help="passes over the MSS values")
    args = ap.parse_args()
    chromium = find_chromium()
    if chromium is None:
        print("no Chromium found (CCSIM_CHROMIUM, chromium on PATH)", file=sys.stderr)
        return 1
    results = Path(tempfile.mkdtemp(prefix="ccsim-explore-"))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    app = create_app(results, Path("experiments"))
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.02)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        pg = browser.new_page(viewport={"width": 1200, "height": 900})
        pg.goto(f"http://127.0.0.1:{port}/")
        pg.wait_for_function(DONE, arg=None, timeout=120_000)
        # One point: Reno at 5 % loss, 10 seeds.
        for el in pg.locator("input.line").all():
            if el.get_attribute("value") != "reno" and el.is_checked():
                el.uncheck()
        for el in pg.locator("input.x").all():
            if el.get_attribute("value") != "0.05" and el.is_checked():
                el.uncheck()
        job = pg.evaluate("window.ccsim.job")
        pg.wait_for_function(DONE, arg=job, timeout=120_000)
        mss = app.state.catalog.papers["p001"].figures["fig8"].params["flows.transfer.mss"]
        rows: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
        for rep in range(args.repeat):
            for i in range(len(mss)):
                before = pg.evaluate(MOVE, ["flows.transfer.mss", i])
                r = pg.wait_for_function(DONE, arg=before, timeout=120_000).json_value()
                cached = r["simulated"] == 0
                rows[cached].append((r["page_s"], r["server_s"]))
                what = "from the store" if cached else f"{r['simulated']} runs simulated"
                print(f"pass {rep + 1}, MSS {mss[i]:>5}: page {r['page_s']:.3f} s, "
                      f"server {r['server_s']:.3f} s ({what})")  # fmt: skip
        for cached, label in ((False, "simulated"), (True, "from the store")):
            if rows[cached]:
                page = statistics.median(p for p, _ in rows[cached])
                srv = statistics.median(s for _, s in rows[cached])
                print(f"p001 point, 10 seeds, {label}: median page {page:.3f} s, server "
                      f"{srv:.3f} s over {len(rows[cached])} moves")  # fmt: skip
        # Paper 002, quick case 1 (fig2, Reno): one run of 60 simulated seconds at 250 Mbit/s.
        pg.select_option("#paper", "p002")
        pg.select_option("#figure", "fig2")
        for el in pg.locator("input.line").all():
            if el.get_attribute("value") != "reno" and el.is_checked():
                el.uncheck()
        job = pg.evaluate("window.__t0 = performance.now(); window.ccsim.job")
        r = pg.wait_for_function(DONE, arg=job, timeout=600_000).json_value()
        print(f"p002 quick fig2 (Reno, 1 seed, simulated): page {r['page_s']:.2f} s, server "
              f"{r['server_s']:.2f} s")  # fmt: skip
        browser.close()
    server.should_exit = True
    return 0


if __name__ == "__main__":
    sys.exit(main())
