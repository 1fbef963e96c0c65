# SPDX-License-Identifier: MIT
"""``ccsim explore``: a local web app where a paper's figure re-runs as its parameters move.

::

    browser ── GET /api/papers ───────────> the catalog: each plan's figures and summary
       │                                     tables, their lines, x values and the keys they
       │                                     hold fixed, each with the values the page may
       │                                     choose (listed in the plan, or a declared range)
       ├──── POST /api/run {figure, params} ─> checked against the catalog (an unknown key or
       │                                     value is refused) ─> a job
       ├──── GET /api/jobs/ID/events ───────> server-sent events: each point (mean, 95 % CI,
       │                                     its seeds' values) or table row (each column's
       │                                     mean over the seeds) the moment its seeds are
       │                                     done, progress of long runs ("waiting"
       │                                     while other jobs' runs hold the workers),
       │                                     then "done"
       └──── POST /api/jobs/ID/cancel ──────> stops the job within one progress report

At most 64 jobs run or wait at once (``jobs.MAX_JOBS``; the page has one): past that a run
request is answered 429 naming the limit.

Runs go through the same store as ``ccsim reproduce`` (``results/<plan>/runs``, or
``results/<plan>-quick/runs`` in quick mode), keyed by the resolved scenario: a point computed by
either is never simulated again, and two browser tabs share it. The core releases the GIL, so
runs execute in threads of this process (no process start-up per request); a per-key lock makes
two jobs that want the same run wait for one simulation.

Safety: the app binds to 127.0.0.1 unless ``--host`` says otherwise, answers only requests whose
Host header is that address (no DNS rebinding), and a request can only pick values the plan
lists, or a value inside a range the plan declares for that key (``explore``: ranges.py); no
scenario text, path or code comes from the page, and nothing is written outside the results
folder.

Modules: ``catalog`` (what the page may ask for, and the check of a request), ``jobs`` (the runs
of a request, in threads, as events), ``server`` (the HTTP app and its guards, and ``serve``),
``ranges`` (a plan's free ranges), ``page`` (the HTML page).
"""

from __future__ import annotations

from .catalog import Catalog, Request, RequestError
from .jobs import Engine, Job, table_rows
from .server import create_app, serve

__all__ = [
    "Catalog",
    "Engine",
    "Job",
    "Request",
    "RequestError",
    "create_app",
    "serve",
    "table_rows",
]
