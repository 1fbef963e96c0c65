"""``ccsim explore --host H --port P`` as a class: H drawn from every address of this machine
and every spelling a user may give, P from every state a port can be in.

Each cell runs the command as a subprocess and holds it to one of two outcomes:

    refused ── one ``ccsim: error:`` line naming --host or --port and why, status 1,
               no URL, nothing left listening on the port
    served ─── the URL said; a GET of it as a browser sends it (Host as in the URL)
               answers 200 for /api/papers, a foreign Host 400 (unless it listens on
               every address, where any name of the machine is its own); Ctrl-C ends it
               with status 130 and one line, and the port is free again

The hosts come from the machine itself (/proc/net/if_inet6, ``ip -o addr``, its host name,
/etc/hosts), so the matrix follows the machine it runs on (issue 32, campaign 31). It found
the explorer's own URL on a link-local address ([fe80::1%25eth0]) answered 400 by its Host
check. By default a sample runs (see ``cells``).
"""

from __future__ import annotations

import contextlib
import http.client
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette", reason="ccsim explore needs the extra `explore`")
pytest.importorskip("uvicorn", reason="ccsim explore needs the extra `explore`")

ROOT = Path(__file__).resolve().parents[2]
CCSIM = Path(sys.executable).parent / "ccsim"
SETPRIV = shutil.which("setpriv") if os.geteuid() == 0 else None
#: A user without CAP_NET_BIND_SERVICE (root with it dropped, as an ordinary user is).
UNPRIVILEGED = [f"--{which}=-net_bind_service" for which in ("bounding-set", "inh-caps")]


def _v6_addresses() -> list[tuple[str, str]]:
    """(address, interface) of each IPv6 address of this machine, from /proc/net/if_inet6."""
    found = []
    with contextlib.suppress(OSError):
        for line in Path("/proc/net/if_inet6").read_text().splitlines():
            hexa, _, _, _, _, name = line.split()
            raw = bytes.fromhex(hexa)
            found.append((socket.inet_ntop(socket.AF_INET6, raw), name))
    return found


def _v4_addresses() -> list[str]:
    """Each IPv4 address of this machine, from `ip -o addr` (none without `ip`)."""
    ip = shutil.which("ip")
    if ip is None:
        return []
    out = subprocess.run([ip, "-o", "-4", "addr"], capture_output=True, text=True).stdout
    return re.findall(r"\binet (\d+\.\d+\.\d+\.\d+)/", out)


def _several() -> str | None:
    """A name of /etc/hosts that stands for several addresses, if there is one."""
    names: dict[str, set[str]] = {}
    with contextlib.suppress(OSError):
        for line in Path("/etc/hosts").read_text().splitlines():
            fields = line.split("#")[0].split()
            for name in fields[1:]:
                names.setdefault(name, set()).add(fields[0])
    return next((n for n, a in sorted(names.items()) if len(a) > 1), None)


def hosts() -> list[str]:
    found = ["127.0.0.1", "::1", "0.0.0.0", "::", "localhost", socket.gethostname(),
             "no-such-host.invalid",
             # inet_aton's spellings of 127.0.0.1 (the system reads them all)
             "127.1", "0x7f.1", "0177.0.0.1", "2130706433", "0x7f000001",
             "::ffff:127.0.0.1"]  # fmt: skip
    found += [a for a in _v4_addresses() if not a.startswith("127.")]
    for address, name in _v6_addresses():
        if address.startswith("fe80"):
            index = socket.if_nametoindex(name)
            found += [f"{address}%{name}", f"{address}%{index}", address]
        elif address != "::1":
            found.append(address)
    several = _several()
    if several is not None:
        found.append(several)
    return list(dict.fromkeys(found))


PORTS = ["free", "taken v4", "taken v6", "taken both", "under 1024 unprivileged", "1",
         "65535", "65536", "0"]  # fmt: skip


def _free() -> int:
    """A port free on both families."""
    while True:
        with socket.socket(socket.AF_INET6) as s:
            s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
            s.bind(("::", 0))
            port = int(s.getsockname()[1])
        if port not in (1, 65535):
            return port


def _hold(family: socket.AddressFamily, port: int) -> socket.socket:
    s = socket.socket(family)
    if family == socket.AF_INET6:
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
    s.bind(("::" if family == socket.AF_INET6 else "0.0.0.0", port))
    s.listen()
    return s


@contextlib.contextmanager
def port_state(kind: str) -> Iterator[tuple[int, list[str]]]:
    """The port of ``kind`` and the command's prefix (setpriv for an unprivileged user)."""
    held: list[socket.socket] = []
    prefix: list[str] = []
    if kind in ("1", "65535", "65536", "0"):
        port = int(kind)
    elif kind == "under 1024 unprivileged":
        if os.geteuid() == 0 and SETPRIV is None:
            pytest.skip("as root without setpriv, a port under 1024 is bound anyway")
        port, prefix = 1023, [SETPRIV, *UNPRIVILEGED] if SETPRIV else []
    else:
        port = _free()
        if kind in ("taken v4", "taken both"):
            held.append(_hold(socket.AF_INET, port))
        if kind in ("taken v6", "taken both"):
            held.append(_hold(socket.AF_INET6, port))
    try:
        yield port, prefix
    finally:
        for s in held:
            s.close()


def _get(url: str, host_header: str, path: str) -> int:
    """The status of a GET of ``path`` at ``url``'s address with ``host_header`` as Host, as a
    browser opening the URL connects: each address its host stands for, in turn."""
    netloc = url.removeprefix("http://").rstrip("/")
    name, _, port = netloc.rpartition(":")
    name = name.strip("[]").replace("%25", "%")
    last: OSError | None = None
    for family, kind, proto, _, address in socket.getaddrinfo(name, int(port),
                                                              type=socket.SOCK_STREAM):  # fmt: skip
        with socket.socket(family, kind, proto) as s:
            s.settimeout(10)
            try:
                s.connect(address)
            except OSError as e:
                last = e
                continue
            conn = http.client.HTTPConnection("localhost")  # its socket is given
            conn.sock = s
            conn.putrequest("GET", path, skip_host=True)
            conn.putheader("Host", host_header)
            conn.endheaders()
            status = conn.getresponse().status
            conn.close()
            return status
    raise AssertionError(f"no connection to {url}: {last}")


def _listening(port: int) -> list[str]:
    """The local addresses a TCP socket listens on at ``port`` (/proc/net/tcp, tcp6)."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError):
            for line in Path(table).read_text().splitlines()[1:]:
                fields = line.split()
                local, state = fields[1], fields[3]
                if state == "0A" and int(local.rpartition(":")[2], 16) == port:
                    found.append(f"{table}:{local}")
    return found


def cells() -> list[tuple[str, str]]:
    """Every (host, port) cell, or by default (under a minute) each host on a free port, each
    port state on 127.0.0.1 and ::, and a sample of the rest chosen by a fixed seed;
    CCSIM_HOSTS_CELLS=all runs every cell (~160 here, ~2.5 min), N a sample of N."""
    every = [(h, p) for h in hosts() for p in PORTS]
    want = os.environ.get("CCSIM_HOSTS_CELLS", "")
    if want == "all":
        return every
    if want:
        return sorted(random.Random(31).sample(every, min(int(want), len(every))))
    core = [c for c in every if c[1] == "free" or c[0] in ("127.0.0.1", "::")]
    rest = [c for c in every if c not in core]
    return core + sorted(random.Random(31).sample(rest, min(8, len(rest))))


CELLS = cells()


@pytest.mark.parametrize(("host", "kind"), CELLS)
def test_ccsim_explore_on_any_host_and_port_serves_its_url_or_says_why_not(
    host: str, kind: str, tmp_path: Path
) -> None:
    with port_state(kind) as (port, prefix):
        before = set(_listening(port))
        argv = [*prefix, str(CCSIM), "explore", "--host", host, "--port", str(port),
                "--results", str(tmp_path / "results")]  # fmt: skip
        with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              cwd=ROOT) as proc:  # fmt: skip
            _cell(proc, host, port, before)


def _cell(proc: subprocess.Popen[str], host: str, port: int, before: set[str]) -> None:
    assert proc.stdout is not None and proc.stderr is not None
    try:
        line = proc.stdout.readline()
        if not line:  # refused
            err = proc.stderr.read()
            status = proc.wait(timeout=60)
            lines = err.splitlines()
            assert status == 1, (status, err)
            assert len(lines) == 1 and lines[0].startswith("ccsim: error: "), err
            assert "--host" in lines[0] or "--port" in lines[0], err
            assert set(_listening(port)) <= before
            return
        url = re.match(r"ccsim explore: (http://\S+) \(listening on ", line)
        assert url is not None, line
        netloc = url[1].removeprefix("http://").rstrip("/")
        assert _get(url[1], netloc, "/api/papers") == 200
        # On every address (0.0.0.0, ::) every name of the machine is its own, which the
        # explorer cannot list (a DNS name, a proxy's): it warns that anyone may reach it.
        everywhere = host in ("0.0.0.0", "::")
        foreign = _get(url[1], f"attacker.example:{port}", "/api/papers")
        assert foreign == (200 if everywhere else 400), foreign
        proc.send_signal(signal.SIGINT)
        status = proc.wait(timeout=60)
        err, rest = proc.stderr.read(), proc.stdout.read()
        lines = [x for x in err.splitlines() if not x.startswith("ccsim explore: warning: ")]
        assert status == 130, (status, err)
        assert len(lines) == 1 and lines[0].startswith("ccsim: interrupted"), err
        assert rest == "", rest
        assert set(_listening(port)) <= before
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


# ---------------------------------------------------------------------------------------------
# The URL as a browser opens it. The cells above connect as the system resolves a name; a
# browser resolves "localhost" and every name under it itself (RFC 6761 §6.3, ::1 first),
# writes an address in its own canonical form (WHATWG URL: 0x7f.1 is 127.0.0.1,
# ::ffff:127.0.0.1 is [::ffff:7f00:1]) and refuses some URLs outright. `--host localhost`
# once printed http://localhost:P/ while bound to 127.0.0.1, and Chromium opened a second
# explorer on [::1]:P (campaign 35b, issue 32): no system lookup could see it. Here each
# --host's printed URL is opened in Chromium with a decoy listening on every loopback address
# of that port the explorer left free, and must show the explorer's own page, running.

#: Names a user may give that only a browser reads as the loopback (RFC 6761 §6.3), and a
#: loopback address that is not 127.0.0.1.
BROWSER_ONLY_NAMES = ["localhost.", "LOCALHOST", "app.localhost", "127.0.0.2"]


def browser_cells() -> list[str]:
    """Every host of ``hosts()`` and ``BROWSER_ONLY_NAMES``, or by default (about a minute)
    the loopback names, 0.0.0.0, :: and a sample of the rest by a fixed seed;
    CCSIM_HOSTS_CELLS=all runs every one."""
    every = list(dict.fromkeys([*hosts(), *BROWSER_ONLY_NAMES]))
    if os.environ.get("CCSIM_HOSTS_CELLS", "") == "all":
        return every
    core = ["localhost", "localhost.", "app.localhost", "::1", "127.0.0.1", "0.0.0.0", "::"]
    rest = [h for h in every if h not in core]
    return [*core, *sorted(random.Random(36).sample(rest, min(2, len(rest))))]


class Decoy:
    """A server on every loopback address of ``port`` that is free: each connection gets a
    page titled "decoy", so a browser that reaches it instead of the explorer shows so."""

    def __init__(self, port: int) -> None:
        self.sockets: list[socket.socket] = []
        for family, address in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
            s = socket.socket(family)
            try:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                s.bind((address, port))
                s.listen()
            except OSError:  # the explorer's own, or no such family here
                s.close()
                continue
            s.settimeout(0.2)
            self.sockets.append(s)
        self.stopped = False
        self.thread = threading.Thread(target=self._answer, daemon=True)
        self.thread.start()

    def _answer(self) -> None:
        body = b"<title>decoy</title>"
        while not self.stopped:
            for s in self.sockets:
                try:
                    conn, _ = s.accept()
                except OSError:
                    continue
                with conn:
                    conn.settimeout(2)
                    with contextlib.suppress(OSError):
                        conn.recv(65536)
                        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n"
                                     b"Content-Length: %d\r\nConnection: close\r\n\r\n%s"
                                     % (len(body), body))  # fmt: skip

    def close(self) -> None:
        self.stopped = True
        self.thread.join(5)
        for s in self.sockets:
            s.close()


@pytest.mark.parametrize("host", browser_cells())
def test_in_chromium_the_url_explore_prints_opens_its_own_page_whatever_else_holds_the_port(
    host: str, chromium: Any, tmp_path: Path
) -> None:
    port = _free()
    argv = [str(CCSIM), "explore", "--host", host, "--port", str(port),
            "--results", str(tmp_path / "results")]  # fmt: skip
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          cwd=ROOT) as proc:  # fmt: skip
        assert proc.stdout is not None and proc.stderr is not None
        decoy: Decoy | None = None
        try:
            line = proc.stdout.readline()
            if not line:  # refused: as the cells above require
                err = proc.stderr.read()
                assert proc.wait(timeout=60) == 1, err
                assert err.startswith("ccsim: error: --host ") and err.count("\n") == 1, err
                assert host in ("no-such-host.invalid",) or host.startswith("fe80"), err
                return
            url = re.match(r"ccsim explore: (http://\S+) \(listening on ", line)
            assert url is not None, line
            decoy = Decoy(port)
            page = chromium.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            try:
                if "%25" in url[1]:
                    # No browser opens an address with its zone (RFC 6874): the explorer
                    # says so as it starts, and Chromium indeed refuses the URL.
                    proc.send_signal(signal.SIGINT)
                    proc.wait(timeout=60)
                    err = proc.stderr.read()
                    assert "warning: browsers refuse a URL that names an interface" in err, err
                    with pytest.raises(Exception, match="invalid URL"):
                        page.goto(url[1], timeout=15_000)
                    return
                answer = page.goto(url[1], timeout=30_000)
                assert answer is not None and answer.status == 200
                assert page.title() != "decoy", f"{url[1]} opened another server"
                # The page's own requests (its script, the papers, a job) pass the Host check
                # with the Host the browser sends for that URL, and a job starts.
                page.wait_for_function("window.ccsim && window.ccsim.job", timeout=60_000)
                msg = page.locator("#msg")
                assert msg.get_attribute("class") != "error", msg.text_content()
                assert errors == [], errors
            finally:
                page.close()
        finally:
            if decoy is not None:
                decoy.close()
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
                try:
                    proc.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
