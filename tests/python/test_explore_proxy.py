"""The explorer behind a reverse proxy, as a class: every request its page makes, through a
proxy that serves it under a path prefix, failing as a proxy makes requests fail.

A user on a shared server or a lab's gateway reaches ``ccsim explore`` through nginx or
Apache (``location /ccsim/ { proxy_pass http://127.0.0.1:8765/; }``)::

    Chromium ──► proxy (127.0.0.1:Q) ──► explorer (127.0.0.1:P)
                 /ccsim/...  ──strip──►  /...
                 Host: 127.0.0.1:Q       Host: 127.0.0.1:P (nginx's default, $proxy_host)

The proxy here does what such a proxy does: strips the prefix, sends the upstream's Host,
adds X-Forwarded-*, redirects the prefix without its slash (nginx's 301), streams answers as
they come (the explorer's event streams say ``X-Accel-Buffering: no``). Each cell makes one of
the page's requests fail (the proxy answers 502, or cuts or resets the connection after the
answer's first bytes), once or every time, and holds the page to what it must then do: run on
to "done" where it can (a cut event stream is reconnected; a failed cancel of a job the page
no longer wants does not stop the next one), or say why it cannot in #msg, never waiting
"running…" or "loading…" for ever and never throwing an error of its own.

Campaign 35b (issue 32) found the page asking for ``/plotly.min.js`` and ``/api/...`` at the
proxy's root; this matrix (issue 32) found a failed cancel stopping the next job. By default a
sample runs; CCSIM_PROXY_CELLS=all runs every cell.
"""

from __future__ import annotations

import contextlib
import os
import random
import re
import socket
import struct
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette", reason="ccsim explore needs the extra `explore`")
pytest.importorskip("uvicorn", reason="ccsim explore needs the extra `explore`")

from conftest import browser_page
from test_explore import ONLY_LINE, Server, wait_done

#: The page's requests, by the upstream path they are sent to.
ROUTES = {
    "plotly": re.compile(r"^/plotly\.min\.js"),
    "papers": re.compile(r"^/api/papers"),
    "run": re.compile(r"^/api/run"),
    "events": re.compile(r"^/api/jobs/[^/]+/events"),
    "cancel": re.compile(r"^/api/jobs/[^/]+/cancel"),
}

#: What a proxy does to a request it cannot serve: answers 502 (its upstream is down), cuts or
#: resets the connection after the answer's first bytes, or resets it before any answer
#: ("drop": a middlebox, Wi-Fi gone).
FAULTS = ["502", "cut", "reset", "drop"]

_NGINX_502 = b"<html><body>502 Bad Gateway (nginx)</body></html>"
BAD_GATEWAY = (b"HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/html\r\n"
               b"Content-Length: %d\r\nConnection: close\r\n\r\n%s"
               % (len(_NGINX_502), _NGINX_502))  # fmt: skip

HOP_BY_HOP = {"connection", "keep-alive", "proxy-connection", "te", "trailer", "upgrade",
              "host", "transfer-encoding"}  # fmt: skip


class Proxy:
    """A reverse proxy on 127.0.0.1 serving the upstream explorer under ``prefix``; ``fault``
    (route, kind, once) makes that route's requests fail: every one, or the first only."""

    def __init__(self, upstream: int, prefix: str, fault: tuple[str, str, bool] | None) -> None:
        self.upstream, self.prefix, self.fault = upstream, prefix, fault
        self.fired = 0
        self.seen: list[str] = []
        self.outside: list[str] = []
        self.lock = threading.Lock()
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}{prefix}"
        self.stopped = False
        self.threads: list[threading.Thread] = []
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.stopped = True
        self.thread.join(5)
        self.sock.close()

    def _accept(self) -> None:
        while not self.stopped:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            t = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            t.start()
            self.threads.append(t)

    def _should_fail(self, route: str | None) -> str | None:
        if self.fault is None or route != self.fault[0]:
            return None
        with self.lock:
            if self.fault[2] and self.fired:
                return None
            self.fired += 1
        return self.fault[1]

    def _serve(self, conn: socket.socket) -> None:
        with conn, contextlib.suppress(OSError):
            conn.settimeout(120)
            head = b""
            while b"\r\n\r\n" not in head:
                data = conn.recv(65536)
                if not data:
                    return
                head += data
            head, _, body = head.partition(b"\r\n\r\n")
            first, *lines = head.decode("latin-1").split("\r\n")
            method, target, _ = first.split(" ", 2)
            if target == self.prefix.rstrip("/"):  # nginx: the prefix without its slash
                conn.sendall(f"HTTP/1.1 301 Moved Permanently\r\nLocation: {self.prefix}\r\n"
                             "Content-Length: 0\r\nConnection: close\r\n\r\n".encode())  # fmt: skip
                return
            if not target.startswith(self.prefix):
                with self.lock:
                    self.outside.append(f"{method} {target}")
                conn.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n"
                             b"Connection: close\r\n\r\n")  # fmt: skip
                return
            path = "/" + target[len(self.prefix) :]
            route = next((name for name, rx in ROUTES.items() if rx.match(path)), None)
            with self.lock:
                self.seen.append(f"{method} {path}")
            headers = [ln for ln in lines if ln.split(":", 1)[0].strip().lower() not in HOP_BY_HOP]
            length = next((int(ln.split(":", 1)[1]) for ln in headers
                           if ln.lower().startswith("content-length:")), 0)  # fmt: skip
            while len(body) < length:
                data = conn.recv(65536)
                if not data:
                    return
                body += data
            fault = self._should_fail(route)
            if fault == "502":
                conn.sendall(BAD_GATEWAY)
                return
            if fault == "drop":
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                return
            out = [f"{method} {path} HTTP/1.1", f"Host: 127.0.0.1:{self.upstream}",
                   *headers, "Connection: close", "X-Forwarded-For: 127.0.0.1",
                   "X-Forwarded-Proto: http", f"X-Forwarded-Prefix: {self.prefix}"]  # fmt: skip
            with socket.create_connection(("127.0.0.1", self.upstream), timeout=120) as up:
                up.sendall(("\r\n".join(out) + "\r\n\r\n").encode("latin-1") + body)
                answer = b""
                while True:
                    data = up.recv(65536)
                    if not data:
                        return
                    if fault is None:
                        conn.sendall(data)
                        continue
                    answer += data
                    if b"\r\n\r\n" in answer and len(answer.partition(b"\r\n\r\n")[2]) >= 1:
                        # The head and the first bytes of the body, then the connection is
                        # closed (nginx's upstream timing out) or reset (a middlebox).
                        head_end = answer.index(b"\r\n\r\n") + 4
                        conn.sendall(answer[: head_end + 16])
                        if fault == "reset":
                            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                            struct.pack("ii", 1, 0))  # fmt: skip
                        return


#: (route, fault, once) -> what the page must come to: "done", or the words #msg starts with
#: (said as an error).
UNREACHABLE = "cannot reach the explorer ("
EXPECTED: dict[tuple[str, str, bool], str] = {}
for _fault in FAULTS:
    EXPECTED[("plotly", _fault, False)] = "the plotting library (plotly.min.js) did not load"
    EXPECTED[("papers", _fault, False)] = UNREACHABLE
    EXPECTED[("run", _fault, False)] = UNREACHABLE
    # A cancel that fails is of a job the page no longer wants: the next job runs.
    EXPECTED[("cancel", _fault, False)] = "done"
    EXPECTED[("cancel", _fault, True)] = "done"
# A cut event stream is reconnected by the browser: once, the job runs on to its end; every
# time, the page says it is retrying.
for _fault in ("cut", "reset", "drop"):
    EXPECTED[("events", _fault, True)] = "done"
    EXPECTED[("events", _fault, False)] = "the connection to the explorer was lost; retrying"
# A proxy's 502 for the stream ends it (EventSource gives up on any answer but 200).
EXPECTED[("events", "502", False)] = "the explorer no longer has this job"
EXPECTED[("events", "502", True)] = "the explorer no longer has this job"

PREFIXES = ["/ccsim/", "/lab/tools/ccsim/"]


def cells() -> list[tuple[str, tuple[str, str, bool] | None]]:
    """Every (prefix, fault) cell (CCSIM_PROXY_CELLS=all, 56), or by default the clean page
    under each prefix and a sample of 5 faults by a fixed seed."""
    every: list[tuple[str, tuple[str, str, bool] | None]] = [
        (p, f) for p in PREFIXES for f in [None, *EXPECTED]
    ]
    if os.environ.get("CCSIM_PROXY_CELLS", "") == "all":
        return every
    clean = [c for c in every if c[1] is None]
    rest = [c for c in every if c[1] is not None]
    return [*clean, *random.Random(36).sample(rest, 5)]


def cell_id(cell: Any) -> str:
    if cell is None or isinstance(cell, str):
        return str(cell)
    route, kind, once = cell
    return f"{route}-{kind}-{'once' if once else 'always'}"


@pytest.fixture
def page(chromium_browser: Any) -> Iterator[tuple[Any, list[str]]]:
    yield from browser_page(chromium_browser)


@pytest.mark.parametrize(("prefix", "fault"), cells(), ids=cell_id)
def test_in_chromium_behind_a_proxy_each_failing_request_ends_in_done_or_said_on_the_page(
    prefix: str, fault: tuple[str, str, bool] | None, page: tuple[Any, list[str]], tmp_path: Path
) -> None:
    pg, errors = page
    server = Server(tmp_path / "results")
    proxy = Proxy(server.port, prefix, fault)
    try:
        # Opened as a user types it, without the prefix's last slash (nginx redirects).
        pg.goto(proxy.url.rstrip("/"))
        assert pg.url == proxy.url
        expected = "done" if fault is None else EXPECTED[fault]
        if fault is not None and fault[0] == "cancel":
            # The page cancels its job when a change starts the next: p001, then a line.
            pg.wait_for_function("window.ccsim && window.ccsim.job", timeout=60_000)
            first = pg.evaluate("window.ccsim.job")
            pg.select_option("#paper", "p001")
            wait_done(pg, first)
            before = pg.evaluate(ONLY_LINE, "reno")
            done = wait_done(pg, before)
            assert any(s.endswith("/cancel") for s in proxy.seen), proxy.seen
        elif expected == "done":
            pg.wait_for_function("window.ccsim && window.ccsim.job", timeout=60_000)
            done = wait_done(pg, None)
        else:
            pg.wait_for_function(
                "(said) => document.getElementById('msg').textContent.startsWith(said)",
                arg=expected,
                timeout=60_000,
            )
            assert pg.locator("#msg").get_attribute("class") == "error"
            done = None
        if done is not None:
            assert done["type"] == "done" and done["total"] >= 1, done
            assert pg.locator("#msg").get_attribute("class") != "error"
            assert pg.evaluate("document.getElementById('plot').data.length") >= 1
        # Every request of the page went under the prefix: none to the proxy's root (but the
        # browser's own favicon.ico).
        assert proxy.seen and [s for s in proxy.outside if "favicon" not in s] == []
        # What the browser logs for a failed request or a script cut short is all.
        own = [e for e in errors if "Failed to load resource" not in e
               and "Unexpected end of input" not in e and "Invalid or unexpected token" not in e
               and "net::ERR_" not in e]  # fmt: skip
        assert own == [], errors
    finally:
        proxy.close()
        server.stop()
