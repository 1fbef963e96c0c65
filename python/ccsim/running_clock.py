# SPDX-License-Identifier: MIT
"""The time this process ran, as opposed to the time that passed: the monotonic clock less
the time the process was stopped (Ctrl-Z, ``kill -STOP``, a batch scheduler suspending the
job, a laptop's lid closed).

The monotonic clock goes on while a process is stopped, and nothing tells the process that it
was: SIGCONT's default action continues it without running any handler of its own. So a
thread looks at the clock every :attr:`RunningClock.EVERY_S`; a gap of more than
:attr:`RunningClock.GAP_S` between two looks is a stop (a thread asleep for 0.1 s wakes far
sooner than that on a loaded machine)::

    looks   |  |  |  |  |<-- stopped: 8 s, no look -->|  |  |
    gap      0.1 s each                 8 s                0.1 s
    stopped  += 8 s - 0.1 s (the look that was due)

Two users, which campaign 60b of issue 32 found timed by the monotonic clock alone:

- a sweep's progress bar (``ccsim.sweep``): 8 s of Ctrl-Z in a sweep of 12 one-second runs
  read "3/12 [00:10<00:38, 4.31s/run]" with 6 s of runs left;
- the deadlines of reaching a Dask scheduler (``ccsim.cluster``): stopped while connecting,
  the command said no scheduler answered, of one that answered as soon as it ran again; a step
  that failed so is tried again.

Where no thread can start (``ulimit -u`` reached) the clock is the monotonic one alone, and no
stop is seen, as before the watch: a watch that could not start must not fail the command.
"""

from __future__ import annotations

import threading
import time


class RunningClock:
    """The monotonic clock less the time the process was stopped while the clock was watched
    (between :meth:`start` and :meth:`stop`, or in a ``with`` block). Calling it gives the
    running time, in seconds, on the monotonic clock's scale."""

    EVERY_S = 0.1
    GAP_S = 2.0

    def __init__(self) -> None:
        self._stopped_s = 0.0
        self._last = time.monotonic()
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._thread: threading.Thread | None = None
        self._watching = False

    def start(self) -> bool:
        """Start the watch; False where no thread can start: the clock is then the monotonic
        one alone, and no stop is seen."""
        thread = threading.Thread(target=self._watch, name="ccsim-stop-watch", daemon=True)
        with self._lock:
            self._last = time.monotonic()
        try:
            thread.start()
        except RuntimeError:
            return False
        self._thread, self._watching = thread, True
        return True

    def stop(self) -> None:
        """End the watch, counting a stop since its last look (the watched step's own deadline
        may have ended it first, as the process ran again)."""
        with self._lock:
            if self._watching:
                self._look(time.monotonic())
            self._watching = False
        self._done.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def __enter__(self) -> RunningClock:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stopped_s(self) -> float:
        """How long the process was stopped while watched, seconds; with a stop that ended
        since the watch's last look (it may not have run yet)."""
        with self._lock:
            return self._stopped_s + self._pending(time.monotonic())

    @property
    def stopped(self) -> bool:
        """Whether the process was stopped at some moment while watched."""
        return self.stopped_s() > 0.0

    def __call__(self) -> float:
        with self._lock:
            now = time.monotonic()
            return now - self._stopped_s - self._pending(now)

    def _pending(self, now: float) -> float:
        return self._gap(now - self._last) if self._watching else 0.0

    def _gap(self, since: float) -> float:
        return since - self.EVERY_S if since > self.GAP_S else 0.0

    def _look(self, now: float) -> None:
        self._stopped_s += self._gap(now - self._last)
        self._last = now

    def _watch(self) -> None:
        while not self._done.wait(self.EVERY_S):
            with self._lock:
                if self._watching:
                    self._look(time.monotonic())
