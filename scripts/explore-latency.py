#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""How long a point takes to come back to the explorer's page, measured in headless Chromium.

    python3 scripts/explore-latency.py [--repeat N]

Starts ``ccsim explore`` (on a free port, with an empty results folder in /tmp), shows paper
001's fig8 with one line (Reno) at one loss rate (5 %) and 10 seeds, then moves the MSS slider
to each value the plan offers, twice: the first pass simulates the point's 10 runs, the second
finds them in the store. For each move it prints the time from the slider's input event to the
point drawn on the page (this includes the page's 120 ms debounce), and the server's own time;
then the medians. Then paper 002's quick case-1 summary table (7 lines, one run of 60
simulated seconds at 250 Mbit/s each): from choosing the table to its first row and to its
last, simulated, then (passes 2 and on) from the store; then one run of paper 002's quick
case 2 (fig4, Reno) the same way. Run from the repository root.
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


FIRST_ROW = """(before) => window.ccsim.job && window.ccsim.job !== before
  && Object.keys(window.ccsim.rows).length > 0
  && {page_s: (performance.now() - window.__t0) / 1000,
      server_s: Object.values(window.ccsim.rows)[0].elapsed_s}"""


#: Show a paper's figure or table (with one line, or all) in one turn of the page's script, so
#: that only its job starts (choosing the paper alone would start its first figure's).
SHOW = """([paper, figure, line]) => {
  const before = window.ccsim.job;
  window.__t0 = performance.now();
  document.getElementById('paper').value = paper; fillFigures();
  document.getElementById('figure').value = figure; buildControls();
  if (line) for (const el of document.querySelectorAll('input.line'))
    el.checked = el.value === line;
  return before;
}"""


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
        # The page opens the catalog's first paper (p000): switch to p001's fig8.
        job = pg.evaluate("window.ccsim.job")
        pg.select_option("#paper", "p001")
        pg.wait_for_function(DONE, arg=job, timeout=120_000)
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
        # Paper 002's quick case-1 table: every line, one seed each; simulated, then again
        # from the store.
        for _ in range(args.repeat):
            job = pg.evaluate(SHOW, ["p002", "case1", None])
            first = pg.wait_for_function(FIRST_ROW, arg=job, timeout=600_000).json_value()
            r = pg.wait_for_function(DONE, arg=job, timeout=600_000).json_value()
            what = "from the store" if r["simulated"] == 0 else f"{r['simulated']} runs simulated"
            print(f"p002 quick table case1 ({what}): first row page {first['page_s']:.2f} s "
                  f"(server {first['server_s']:.2f} s), full table page {r['page_s']:.2f} s "
                  f"(server {r['server_s']:.2f} s)")  # fmt: skip
        # Paper 002, quick case 2 (fig4, Reno): one run of 60 simulated seconds at 250 Mbit/s (case
        # 2: none of the table's runs above).
        job = pg.evaluate(SHOW, ["p002", "fig4", "reno"])
        r = pg.wait_for_function(DONE, arg=job, timeout=600_000).json_value()
        print(f"p002 quick fig4 (Reno, 1 seed, simulated): page {r['page_s']:.2f} s, server "
              f"{r['server_s']:.2f} s")  # fmt: skip
        browser.close()
    server.should_exit = True
    return 0


if __name__ == "__main__":
    sys.exit(main())
