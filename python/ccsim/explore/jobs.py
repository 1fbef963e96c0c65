# SPDX-License-Identifier: MIT
"""The explorer's jobs: a checked request's runs, in threads through the run store that
``ccsim reproduce`` uses, each point or table row sent to the page as an event the moment its
seeds are done (``Engine``, ``Job``)."""

from __future__ import annotations

import contextlib
import itertools
import math
import secrets
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import CancelledError, Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout  # not TimeoutError on Python 3.9
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ccsim import limits

from .catalog import Request, _shown


def _said(e: Exception) -> str:
    """A job's error as the page shows it: a limit met (``ulimit -u``: "can't start new
    thread", the core's "(os error 11)", campaign 33, issue 32) named as that limit; the run
    store's folder gone, read-only or full; else a scenario the core refused, in its words."""
    met = limits.exhausted(e)
    if met is not None:
        return met
    if isinstance(e, OSError):
        where = f"{e.filename}: " if e.filename else ""
        return f"the run store: {where}{e.strerror or e}"
    if isinstance(e, ImportError):
        # A module the job imports on its first use (a figure kind's tables, pandas' own
        # submodules) gone since the explorer started: a package removed or upgraded during a
        # lab read "ModuleNotFoundError: No module named 'pandas.core.reshape.reshape'" on
        # the page, naming neither the package nor the cure (campaign 40, issue 32).
        package = (e.name or "a package").partition(".")[0]
        return (f"{package} cannot be imported ({e}): was it removed or changed since the "
                "explorer started? Install ccsim again with its dependencies (pip install -c "
                "constraints.txt . from the repository root) and restart the explorer")  # fmt: skip
    return f"{type(e).__name__}: {e}"


class Cancelled(Exception):
    """Raised from a run's progress callback to stop it when its job is cancelled."""


#: The most jobs running or waiting at once, and the most ended ones kept for late readers.
#: The page has one at a time (it cancels the last before each new one); a script may queue
#: up to this many. Past it the 65th job cancelled and forgot the oldest, running or not: its
#: client held a job whose events answered "no such job" (issue 32). A queued job costs
#: little (1,000 queued p002 jobs: 128 MB -> 161-199 MB of RSS), so the limit is about the
#: silent loss, not memory.
MAX_JOBS = 64
#: How long a job may wait for its first reader, seconds. The page opens a job's event stream
#: as soon as ``POST /api/run`` answers; a client that left before reading that answer (a tab
#: closed at the click, a script killed) left a job whose id nobody knew, and it ran to its end
#: (3 CPU-seconds for a paper-002 quick job; every run of a long figure's): nobody could read
#: or cancel it (campaign 25, issue 32). A job is read by its event stream, as the last reader
#: leaving before its end cancels it; one never read within this time is cancelled as well. Its
#: finished runs stay in the store, so the same request posted later reuses them.
UNREAD_LIMIT_S = 30.0
#: How often a job waiting for its next run looks at whether it was read, seconds.
READER_WAIT_S = 0.5

#: Finished runs whose records the store refused (a full disk, a folder gone read-only), over
#: the process's life: each job said so on its page, but an explorer stopped afterwards said
#: "every finished run is in the store" (campaign 53b's notice, issue 32). One explorer per
#: process, so a count of the module's.
_unsaved = [0]


def unsaved_runs() -> int:
    """How many finished runs this process could not store."""
    return _unsaved[0]


class Busy(Exception):
    """``Engine.submit`` when :data:`MAX_JOBS` jobs are running or waiting (the API's 429)."""


@dataclass
class Job:
    id: str
    request: Request
    events: list[dict[str, Any]] = field(default_factory=list)
    cancelled: bool = False
    finished: bool = False
    started: float = field(default_factory=time.perf_counter)
    #: The event streams reading this job now (the server's, on its event loop's thread): a
    #: job is cancelled when the last one leaves before it ends, not when any one does.
    readers: int = 0
    #: A mark of the last reader's leaving, while the job waits for a reader to come back
    #: (``server.READER_RETURN_S``): a later leaving replaces it.
    left: object | None = None
    #: Whether an event stream has opened on this job (see :data:`UNREAD_LIMIT_S`).
    read: bool = False
    #: Why the job was cancelled, when not by a client (its "cancelled" event says it).
    reason: str | None = None
    #: The job's runs in the pool, not yet taken by its thread (see ``Engine._run_job``).
    queued: deque[Future[Any]] = field(default_factory=deque)
    #: Called (from the thread that emits) after each event and at the job's end: each event
    #: stream's way to wake, where each polled ``events`` every 10 ms, and 200 readers of one
    #: job took the explorer from 1.98 to 1.01 cores of simulation (campaign 25, issue 32).
    wakers: set[Callable[[], None]] = field(default_factory=set)
    #: Whether one of the job's runs has started in the pool, and whether the job said first
    #: that it waits for other jobs' runs ("waiting"; "running" follows as its first run
    #: starts): the workers are shared, and a job queued behind another tab's long runs read
    #: "running…" for minutes (campaign 49a, issue 32). Both under ``lock``.
    runs_started: bool = False
    said_waiting: bool = False
    #: How many other jobs the last "waiting" event said the job waits for: said again as
    #: that number changes, the page read "waiting for 3 other jobs" while one was left
    #: (stop 60's notice, issue 32). Under ``lock``.
    waiting_for: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def cancel(self) -> None:
        """Mark the job cancelled and drop its runs not started: its thread, waiting for the
        first of them, ends at once with "cancelled" instead of when a worker reaches them
        (after every run queued ahead, another job's long ones included)."""
        self.cancelled = True
        for f in tuple(self.queued):  # a copy: the job's thread takes from it meanwhile
            f.cancel()

    def awaited(self, now: float) -> bool:
        """Whether the job ended before any event stream read it, within
        :data:`UNREAD_LIMIT_S` of its start: its client, just given its id, is on its way. Such
        jobs count against :data:`MAX_JOBS` and are not forgotten. Forgotten as any ended job
        (past 64 newer ones ended), a job whose points were all in the store ended at once, and
        150 clients at once got 404 "no such job" for the id they had just been given, 50 in
        300 (campaign 43a, issue 32)."""
        return (self.finished and not self.read and not self.cancelled
                and now - self.started < UNREAD_LIMIT_S)  # fmt: skip

    def stopped(self, closed: bool) -> bool:
        """Whether the job's runs must stop: cancelled, the engine ``closed``, or never read
        within :data:`UNREAD_LIMIT_S` (which cancels it here, with its reason)."""
        if not (self.read or self.cancelled) and (
            time.perf_counter() - self.started > UNREAD_LIMIT_S
        ):
            self.reason = f"no reader opened its events within {UNREAD_LIMIT_S:g} s"
            self.cancel()
        return self.cancelled or closed

    def emit(self, kind: str, **data: Any) -> None:
        data["type"] = kind
        data["elapsed_s"] = round(time.perf_counter() - self.started, 4)
        self.events.append(data)  # list.append is atomic; readers only read up to len()
        self._wake()

    def end(self) -> None:
        """Mark the job ended (after its last event) and wake its readers to see it."""
        self.finished = True
        self._wake()

    def _wake(self) -> None:
        for wake in tuple(self.wakers):  # a copy: readers come and go on the server's thread
            wake()


class Engine:
    """Runs jobs' points in threads through a run store per plan and mode."""

    def __init__(
        self, results: Path, workers: int = 2, stores: dict[tuple[str, bool], Path] | None = None
    ) -> None:
        self.results = Path(results)
        #: The run store of a plan and mode that a reproduction under ``results`` already has
        #: (``ccsim reproduce --out DIR`` writes ``DIR/runs``), by (plan id, quick).
        self.stores = dict(stores or {})
        self.workers = max(1, workers)
        self.pool = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="ccsim-run")
        self.jobs: dict[str, Job] = {}
        self._ids = itertools.count(1)
        #: Set apart this explorer's job ids from those of an explorer before a restart: a tab
        #: open across it reconnects its event stream by itself, and numbered alike (j1, j2,
        #: ...), it read the new explorer's job of the same number, another tab's, as its own
        #: (campaign 25, issue 32). Random, not a clock: two starts within a tick stay apart.
        self._run = secrets.token_hex(4)
        self._lock = threading.Lock()
        #: A lock per run being made or read (``_holding``), with how many threads hold or
        #: wait for it: dropped when the last lets go.
        self._key_locks: dict[str, tuple[threading.Lock, list[int]]] = {}
        #: Set by close(): every run stops, a job's own mark or not (see close).
        self.closed = False

    def store(self, plan_id: str, quick: bool) -> Any:
        """The store of a plan's runs in a mode: a reproduction's of that mode, else of the
        other (a store's key is the resolved scenario, so a quick and a full run of the same
        point are one run), else ``results/<plan>[-quick]/runs``."""
        from ccsim.sweep import Store

        folder = self.stores.get((plan_id, quick)) or self.stores.get((plan_id, not quick))
        if folder is None:
            folder = self.results / (plan_id + ("-quick" if quick else "")) / "runs"
        return Store(folder)

    def close(self) -> None:
        """Cancel every job and drop the runs not started yet.

        The runs look at ``closed`` as well as their job's mark: a job submitted while this
        ran (a request in flight at Ctrl-C) was missed by the loop below, its run went on for
        minutes in a pool thread, and the interpreter's exit waited for it (the explorer
        seen hanging after Ctrl-C under load: campaigns 9 and 10, issue 32)."""
        with self._lock:
            self.closed = True
            for job in self.jobs.values():
                job.cancel()
        self.pool.shutdown(wait=False, cancel_futures=True)

    @contextlib.contextmanager
    def _holding(self, key: str) -> Iterator[None]:
        """Hold the lock of the run ``key`` (two jobs asking for one run make it once, the
        second reading it from the store). Kept for every run ever asked for, the locks
        grew with the runs an explorer made, about 240 bytes each and never given back: 294
        after 300 jobs of free values, 24 MB per 100,000 runs (campaign 61b, issue 32). Each
        is dropped now when no thread holds it or waits for it."""
        with self._lock:
            lock, users = self._key_locks.setdefault(key, (threading.Lock(), [0]))
            users[0] += 1
        try:
            with lock:
                yield
        finally:
            with self._lock:
                users[0] -= 1
                if not users[0]:
                    del self._key_locks[key]

    def submit(self, request: Request) -> Job:
        """A new job for ``request``, started; :class:`Busy` when :data:`MAX_JOBS` jobs are
        running or waiting (none is cancelled to make room)."""
        with self._lock:
            now = time.perf_counter()
            live = sum(not (j.finished or j.cancelled) or j.awaited(now)
                       for j in self.jobs.values())  # fmt: skip
            if live >= MAX_JOBS and not self.closed:
                raise Busy(f"{live} jobs are running or waiting, the explorer's limit "
                           f"({MAX_JOBS}): wait for one to end, or cancel one (POST "
                           "/api/jobs/<job>/cancel)")  # fmt: skip
            job = Job(f"j{next(self._ids)}-{self._run}", request)
            job.cancelled = self.closed  # after close(): ends at once, running nothing
            self.jobs[job.id] = job
            # The oldest ended (or cancelled) jobs beyond MAX_JOBS are forgotten; one running
            # or waiting never is, nor one ended before its client read it (``Job.awaited``).
            ended = [k for k, j in self.jobs.items()
                     if (j.finished or j.cancelled) and not j.awaited(now)]  # fmt: skip
            for old in ended[: max(0, len(ended) - MAX_JOBS)]:
                del self.jobs[old]
        threading.Thread(target=self._run_job, args=(job,), daemon=True).start()
        return job

    def cancel(self, job_id: str) -> bool | None:
        """Stop a job: True when it was running (it stops within a run), False when it had
        already ended (nothing to stop: answered true, a finished job read as cancelled),
        None when there is no such job."""
        job = self.jobs.get(job_id)
        if job is None:
            return None
        if job.finished:
            # Its client has let it go: one that ended before its events were read no longer
            # waits for that reader among MAX_JOBS (``Job.awaited``). It did, and with 64 such
            # jobs the 429's own cure, "cancel one", freed no place: the next request was 429
            # again until 30 s had passed (campaign 61b, issue 32).
            job.read = True
            return False
        job.cancel()
        return True

    def _one(self, job: Job, spec: Any, store: Any) -> tuple[dict[str, Any], bool]:
        """One run's record, from the store or simulated now (then saved); True if cached."""
        from ccsim import _core
        from ccsim.sweep import record_of

        with job.lock:
            first, job.runs_started = not job.runs_started, True
            waited = first and job.said_waiting
        if waited:
            job.emit("running")
        key = spec.key()
        with self._holding(key):
            rec = store.load_valid(key)
            if rec is not None:
                return rec, True
            if job.stopped(self.closed):
                raise Cancelled
            last = [0.0]

            def progress(sim_s: float, events: int, duration_s: float) -> None:
                if job.stopped(self.closed):
                    raise Cancelled
                now = time.perf_counter()
                if now - last[0] > 0.25:
                    last[0] = now
                    job.emit("progress", seed=spec.seed, tags=dict(spec.tags), sim_s=sim_s,
                             duration_s=duration_s, events=events)  # fmt: skip

            raw = _core.run(spec.text, list(spec.overrides), spec.seed, progress)
            # The record sweep.execute stores for the same run.
            rec = record_of(raw, spec.overrides, spec.seed)
            try:
                store.save(key, rec)
            except OSError:
                with self._lock:
                    _unsaved[0] += 1
                raise
            return rec, False

    def _run_job(self, job: Job) -> None:
        from ccsim import _core
        from ccsim.sweep import RunSpec

        r = job.request
        plan = r.plan
        done = cached = total = 0
        # Everything inside the try: a job whose thread died (a results folder that cannot be
        # written) would leave the page waiting for ever; an error event ends it on the page.
        try:
            if job.cancelled:
                raise Cancelled
            store = self.store(plan.id, r.quick)
            groups: list[tuple[str, str | None, list[Any]]] = []
            xs: list[str | None] = list(r.xs) if r.figure.kind == "points" else [None]
            # A table's rows come in the plan's line order, each once its seeds are done.
            for x in xs:
                for line in r.lines:
                    ov = r.overrides(line, x)
                    tags = (("figure", r.figure.id), ("line", line), ("x", x))
                    specs = [RunSpec(plan.scenario_text, ov, s, tags)
                             for s in range(1, r.seeds + 1)]  # fmt: skip
                    groups.append((line, x, specs))
            total = sum(len(g[2]) for g in groups)
            job.emit("start", total=total, points=len(groups))
            # Where the records go, checked as a sweep checks it, before any run: a file in
            # place of the store or of one of its shards ended the job with the system's
            # words for the first save, ".../runs/14: File exists" (campaign 22, issue 32).
            # Only for runs to make: a job of stored runs alone is shown from a store that
            # has since become read-only.
            try:
                keys = [s.key() for _, _, specs in groups for s in specs]
                missing = [k for k in keys if not store.has(k)]
                if missing:
                    store.check(missing)
            except _core.ScenarioError:
                pass  # the run that has it ends the job with the core's words, below
            except ValueError as e:
                job.cancelled = True
                job.emit("error", message=f"the run store: {e}")
                return
            # The runs go to the pool a few at a time, each job keeping up to four per worker
            # there (so a slow run at the head leaves no worker idle). Queued all at once, a
            # cancelled job's runs stayed in the pool behind the runs ahead of them (another
            # job's, minutes long), and its thread with them, while the job no longer counted
            # against MAX_JOBS: 300 jobs posted and cancelled took the explorer to 308
            # threads and 1.12 GB (campaign 23, issue 32).
            todo = iter([s for _, _, specs in groups for s in specs])
            for line, x, specs in groups:
                recs = []
                for _ in specs:
                    self._queue(job, todo, store)
                    if not job.queued:  # cancelled before its next run was queued
                        raise Cancelled
                    rec, hit = self._result(job, job.queued[0])
                    job.queued.popleft()
                    recs.append(rec)
                    done += 1
                    cached += hit
                job.emit("runs", done=done, total=total, cached=cached)
                if r.figure.kind == "table":
                    row = table_rows(r.figure.item, {line: recs})[0]
                    job.emit("row", line=line, label=plan.lines[line].label,
                             values={k: v if k == "shares" else _num(v)
                                     for k, v in row.items() if k != "line"})  # fmt: skip
                else:
                    self._emit_point(job, line, x, recs)
        except (Cancelled, CancelledError):  # CancelledError: a run close() dropped unstarted
            why = {"reason": job.reason} if job.reason else {}
            if self.closed and not job.reason:
                # Stopped with the explorer (Ctrl-C, SIGTERM: a teacher restarting it during
                # a lab), not from the page: said so, the page read "cancelled after 0 of 21
                # runs", a cancel its user never asked for (campaign 40, issue 32).
                why = {"stopped": True}
            job.emit("cancelled", done=done, total=total, **why)
        except Exception as e:
            job.cancelled = True
            job.emit("error", message=_said(e))
        else:
            job.emit("done", done=done, total=total, cached=cached, simulated=done - cached)
        finally:
            job.end()

    def _result(self, job: Job, run: Future[Any]) -> Any:
        """``run``'s result, once it is done; meanwhile the job is looked at each
        ``READER_WAIT_S``, so that one never read is cancelled within :data:`UNREAD_LIMIT_S`
        while its runs wait in the pool (which then drops them: ``Job.cancel``). Its runs
        look at it only as they start: queued behind a job a page reads for an hour, a job
        whose answer was lost (a tab closed at the click) held its thread, and a place among
        :data:`MAX_JOBS`, for that hour (campaign 29, issue 32)."""
        while True:
            try:
                return run.result(timeout=READER_WAIT_S)
            except FutureTimeout:
                job.stopped(self.closed)
                self._say_waiting(job)

    def _say_waiting(self, job: Job) -> None:
        """Say that ``job`` waits for other jobs' runs, when none of its own has started and
        other jobs have runs going (not a slow start of its own: nothing to say then); said
        again when the number of those jobs changes (looked at every ``READER_WAIT_S``)."""
        with job.lock:
            if job.runs_started or job.cancelled:
                return
            others = sum(j is not job and j.runs_started and not (j.finished or j.cancelled)
                         for j in tuple(self.jobs.values()))  # fmt: skip
            if not others or others == job.waiting_for:
                return
            job.said_waiting = True
            job.waiting_for = others
        job.emit("waiting", jobs=others)

    def _queue(self, job: Job, todo: Any, store: Any) -> None:
        """Queue ``job``'s next runs from ``todo`` until it has four per worker in the pool
        (none once it is cancelled or the engine closed)."""
        while len(job.queued) < 4 * self.workers and not job.stopped(self.closed):
            spec = next(todo, None)
            if spec is None:
                return
            try:
                job.queued.append(self.pool.submit(self._one, job, spec, store))
            except RuntimeError:  # the pool shut down by close() since the check above
                if not self.closed:
                    raise
                return
            if job.cancelled:  # cancelled as the run was queued: cancel() may have missed it
                job.cancel()

    def _emit_point(self, job: Job, line: str, x: str | None, recs: list[dict[str, Any]]) -> None:
        from ccsim.experiment.stats import mean_ci

        r = job.request
        fig = r.figure.item
        if r.figure.kind == "points":
            from ccsim.experiment.plan import line_metric
            from ccsim.experiment.runs import point_values

            tagged = [{**rec, "tags": {"figure": fig.id, "line": line, "x": x}} for rec in recs]
            metric = line_metric(r.plan, fig, line)
            values = [float(v) for v in point_values(tagged, metric)["value"]]
            mean, half, n = mean_ci(values)
            job.emit("point", line=line, x=x, x_shown=_shown(x or "0", fig.x_scale),
                     mean=_num(mean), ci95=_num(half), n=n,
                     seeds=[_num(v) for v in values])  # fmt: skip
            return
        from ccsim.experiment.tables import flow_series_values, link_capacity, link_rate

        rec = recs[0]  # seed 1, as the report's time-series figures
        traces = []
        if r.figure.kind == "flow_series":
            values, _ = flow_series_values(rec, fig.flows, fig.link)
            for flow in fig.flows:
                traces.append({"name": flow, "t": [float(t) for t in values.index],
                               "y": [_num(v) for v in values[flow]]})  # fmt: skip
        else:
            u = link_rate(rec, fig.link) / link_capacity(rec, fig.link)
            traces.append({"name": "utilization", "t": [float(t) for t in u.index],
                           "y": [_num(v) for v in u]})  # fmt: skip
        job.emit("series", line=line, traces=traces)


def table_rows(table: Any, records: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """A summary table as ``ccsim reproduce`` reports it: per line (in ``records``' order),
    :func:`~ccsim.experiment.tables.line_summary` of its runs (seeds): each numeric column's
    mean and 95 % half-width, ``n``, ``converged`` and the mean ``shares``."""
    from ccsim.experiment.tables import line_summary, table_row

    return [
        {"line": line, **line_summary([table_row(rec, table) for rec in recs], table.flows)}
        for line, recs in records.items()
    ]


def _num(v: Any) -> float | None:
    """A JSON-safe number (NaN, as for an unfinished transfer, becomes null)."""
    f = float(v)
    return None if math.isnan(f) or math.isinf(f) else f
