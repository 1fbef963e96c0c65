# SPDX-License-Identifier: MIT
"""The explorer's HTTP side: the Starlette app (the page, the catalog, run requests, job events),
the guards in front of its API, and ``serve``, which runs it under uvicorn.

The explorer listens on this machine, so the requests to fear come from pages on other sites open
in the user's browser. A browser sends a "simple" cross-site POST (a form's or ``text/plain``
body: the CORS-safelisted types of the Fetch standard) without asking the server first, so a
page cannot read the answer but can still start simulations. ``refusal`` stops that before the
app sees the request:

- a request to ``/api/`` whose ``Origin`` (RFC 6454 §7; sent by browsers on every cross-origin
  request and on same-origin POSTs) is not ``http://`` + its own ``Host``: 403. A request with no
  Origin comes from a program (curl, a script), not from a page, and passes. Behind a reverse
  proxy the browser's origin is the proxy's while the ``Host`` is the one the proxy sends
  (nginx's default is the upstream's, 127.0.0.1:8765): an Origin the browser itself vouches for
  as the page's own (``Sec-Fetch-Site: same-origin``, a header no script can set) or naming the
  proxy's ``X-Forwarded-Host`` passes.
- ``Sec-Fetch-Site`` (W3C Fetch Metadata) other than ``same-origin`` or ``none`` (typed in the
  address bar): 403. Another port of 127.0.0.1 is "same-site", not same-origin, and is refused.
- a POST with a body whose ``Content-Type`` is not ``application/json``, or that has a content
  coding (``Content-Encoding: gzip``): 415 (RFC 9110 §15.5.16). A page on another site can
  send JSON only after a CORS preflight, which this app never grants.
- a POST announcing a body over ``MAX_BODY`` bytes (``Content-Length``): 413 (RFC 9110
  §15.5.14) before a byte of it is read; a body sent in chunks is cut off at the same limit.

At any path, a request line saying another HTTP version than 1.1 or 1.0 is answered 505 (RFC
9110 §15.6.6), a head past h11's 16 KiB buffer 431 (RFC 6585 §5), and a request giving its
body's length twice (a ``Content-Length`` and a ``Transfer-Encoding``) is answered 400 and its
connection closed (RFC 9112 §6.1), as a proxy in front could read its end elsewhere than the
explorer does; so is an HTTP/1.0 request with a ``Transfer-Encoding``, and one giving a field the
guards read (``Origin``, ``Sec-Fetch-Site``, ``Content-Type``) twice.
``OPTIONS *`` is answered 200 with the methods the explorer serves (RFC 9110 §9.3.7).

A page on another site could still show the explorer's own page in a hidden frame and have the
user click its controls; the page is served with ``frame-ancestors 'none'``, so browsers show it
in no frame.

``read_json`` then parses at most ``MAX_BODY`` bytes, refusing JSON nested deeper than
``MAX_DEPTH`` levels (Python's parser recurses, and 1,000 levels exhaust its stack) with 400.
The ``Host`` header itself is checked by :class:`HostCheck` (DNS rebinding).

A request must come in whole in bounded time: its head within ``HEAD_TIMEOUT_S`` of the
connection's opening or last answer (``head_deadline_protocol``), its body within
``BODY_TIMEOUT_S`` (``read_json``); else 408, and the connection closes.

The explorer has no WebSocket endpoint (a job's events are a ``text/event-stream``): a request
asking to upgrade to WebSocket (RFC 6455 §4.1) is answered 400 by ``Guard``, at any path, and
uvicorn runs with WebSockets off and without its log advice to install a WebSocket library
(``uvicorn_config``), advice that would send the user after a package the explorer never uses.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import ipaddress
import json
import logging
import re
import socket
import warnings
from collections.abc import AsyncIterator, Callable, Mapping
from http import HTTPStatus
from pathlib import Path
from typing import Any

from .catalog import Catalog, RequestError, reproductions
from .jobs import Busy, Engine
from .ranges import brief

#: The largest request body the API reads, bytes. A run request is a few hundred bytes; every x
#: and every key of the largest figure, a few kilobytes.
MAX_BODY = 64 * 1024
#: How long a stop (Ctrl-C, SIGTERM) waits for the answers being sent, seconds: a client that
#: stopped reading (a frozen tab, a script that hung) held its answer, and the explorer after
#: a stop, for ever; SIGTERM alone never ended it (campaign 25, issue 32). The jobs are
#: cancelled at the stop, so their event streams end at once; this bounds the others.
STOP_GRACE_S = 3.0
#: The piece of plotly.min.js (4.8 MB) written to a client at a time, bytes.
PLOTLY_CHUNK = 64 * 1024
#: How long a connection may take to send a request's head (its line and headers) from its
#: opening or its last answer, and then its body, seconds. A connection opened and left
#: silent, or sending its head a byte at a time, was held for ever (uvicorn closes an idle
#: one only after an answer, and any byte restarts that wait): a few hundred such clients used
#: up the explorer's file descriptors (campaign 25, issue 32). Apache's and nginx's defaults
#: are 20-60 s.
HEAD_TIMEOUT_S = 20.0
BODY_TIMEOUT_S = 20.0
#: How long, and for how many bytes, a connection closed by the explorer reads and throws away
#: what its client still sends, so that the answer reaches the client (``LingeringClose``).
LINGER_S = 2.0
LINGER_BYTES = 1024 * 1024
#: How long a job's event stream sleeps without an event before it looks at its client,
#: seconds (Starlette's own watch for a disconnect ends it sooner).
READER_IDLE_S = 1.0
#: After how many seconds without an event a job's stream sends a comment line (``:``), which
#: the page's EventSource ignores. A job queued behind another's long runs sent nothing for as
#: long as it waited, and a proxy in between closes an answer that long silent (nginx's
#: ``proxy_read_timeout`` is 60 s): the page then reconnected to a job still waiting, and at
#: worst found it gone (campaign 47, issue 32). WHATWG HTML §9.2.7 advises one every 15 s or so.
READER_HEARTBEAT_S = 15.0
#: How long a job whose last event-stream reader left waits for a reader to come back before
#: it is cancelled, seconds. A browser reconnects an ``EventSource`` cut before its end by
#: itself (WHATWG HTML §9.2.3), after the ``retry:`` time the stream sets (``READER_RETRY_MS``):
#: cancelled at once, a job whose stream was cut once (an SSH tunnel or a proxy between the
#: browser and the explorer restarted) read "cancelled after 0 of 60 runs" on its return,
#: which the user never asked for (campaign 27, issue 32). A closed tab's job runs this much
#: longer; the page's own changes cancel their last job at once (``POST .../cancel``).
READER_RETURN_S = 5.0
#: How soon a browser is to reconnect a job's cut event stream, milliseconds: the ``retry:``
#: field sent first (browsers' own defaults are 3-5 s, too close to ``READER_RETURN_S``).
READER_RETRY_MS = 1000
#: How deeply a request's JSON may nest: ``{"line_params": {line: {key: value}}}`` is 3 levels.
MAX_DEPTH = 8


class Refused(Exception):
    """A request the guards answer with ``status`` and ``message`` instead of the app."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        #: Headers the answer carries besides the connection's close.
        self.headers = headers or {}


def refusal(method: str, headers: Mapping[str, str]) -> Refused | None:
    """Why a request to the API must not reach the app, or None (see the module's doc).
    ``headers`` are looked up by lower-case name."""
    upgrades = (
        headers.getlist("upgrade") if hasattr(headers, "getlist") else [headers.get("upgrade", "")]
    )
    if _asks_websocket(upgrades):
        return Refused(400, "the explorer has no WebSocket endpoint: a job's events are a "
                            "text/event-stream at /api/jobs/<job>/events")  # fmt: skip
    host = headers.get("host", "")
    origin = headers.get("origin")
    site = headers.get("sec-fetch-site")
    if origin is not None and not _same_origin(origin, host) and not _proxied_own(origin, headers):
        return Refused(403, f"a request from the page {brief(_as_sent(origin))} is refused: only "
                            f"the explorer's own page (http://{host}) may use its API (behind a "
                            "proxy: have it send X-Forwarded-Host)")  # fmt: skip
    if site is not None and site not in ("same-origin", "none"):
        return Refused(403, f"a {brief(_as_sent(site))} request is refused (Sec-Fetch-Site): "
                            "only the explorer's own page may use its API")  # fmt: skip
    length = headers.get("content-length", "")
    if length and not (length.isascii() and length.isdigit()):  # "²" is a digit to Python
        return Refused(
            400, f"the request's Content-Length {brief(_as_sent(length))} is not a number of bytes"
        )
    has_body = (length.isdigit() and int(length) > 0) or "transfer-encoding" in headers
    if method == "POST" and has_body:  # a body-less POST (cancel) has no type to check
        ctype = _as_sent(headers.get("content-type", "")).split(";")[0].strip().lower()
        if ctype != "application/json":
            # Without one, the words were "the request's Content-Type is 'missing'", as if
            # that were its value (campaign 53, issue 32).
            said = (f"the request's Content-Type is {brief(ctype)}" if ctype else
                    "the request has no Content-Type")  # fmt: skip
            return Refused(415, f"{said}; the API takes application/json")
        coding = _as_sent(headers.get("content-encoding", "")).strip().lower()
        if coding not in ("", "identity"):
            # A compressed body was read as JSON and said to be "not JSON" (campaign 46, issue
            # 32): 415 names the coding, and Accept-Encoding says the one the API reads (RFC
            # 9110 §8.4 and §15.5.16).
            return Refused(415, f"the request's body has the content coding {brief(coding)} "
                                "(Content-Encoding); the API reads JSON sent as it is",
                           headers={"Accept-Encoding": "identity"})  # fmt: skip
        if length.isdigit() and int(length) > MAX_BODY:
            return Refused(413, f"the request body ({int(length)} bytes) is too large: the "
                                f"limit is {MAX_BODY} bytes")  # fmt: skip
    return None


def _same_origin(origin: str, host: str) -> bool:
    """Whether ``origin`` is ``http://`` + ``host``, its scheme and host compared without case
    (RFC 3986 §6.2.2.1; RFC 9110 §4.2.3): `Host: LOCALHOST:8765` with the Origin a browser
    writes, in lower case (RFC 6454 §6.2), was refused 403 as another page's (campaign 52a,
    issue 32). Nothing else in an origin has case."""
    return origin.lower() == f"http://{host}".lower()


def _as_sent(value: str) -> str:
    """A header's value as its client wrote it. Starlette reads a field's bytes as latin-1
    (RFC 9110 §5.5: obs-text), and a script's Origin in UTF-8 (`http://é.example`; browsers
    send an IDN as punycode) was echoed as latin-1 mojibake, 'http://Ã©.example' (campaign
    51a, issue 32). Bytes that are not UTF-8 stay as latin-1 reads them."""
    try:
        return value.encode("latin-1").decode("utf-8")
    except UnicodeError:
        return value


def _proxied_own(origin: str, headers: Mapping[str, str]) -> bool:
    """Whether a request whose Origin is not ``http://`` + its Host is still the explorer's own
    page, served through a reverse proxy that sent the upstream's Host. Behind nginx's
    ``proxy_pass http://127.0.0.1:8765/`` (Host: 127.0.0.1:8765) every run request of the page
    at the proxy's address was refused 403, so nothing could run (found by the proxy matrix,
    issue 32). The browser says the page and the API share an origin (``Sec-Fetch-Site:
    same-origin``, W3C Fetch Metadata §2.1: set by the browser, never by a page's script), or
    the proxy names the host the browser asked for (``X-Forwarded-Host``, which a page on
    another site cannot add without a CORS preflight this app never grants)."""
    if headers.get("sec-fetch-site") == "same-origin":
        return True
    forwarded = headers.get("x-forwarded-host", "").split(",")[0].strip().lower()
    return bool(forwarded) and origin.lower() in (f"http://{forwarded}", f"https://{forwarded}")


#: A Host header (RFC 9110 §7.2): a name or IPv4 address, or an IPv6 address in brackets
#: (RFC 3986 §3.2.2) with its zone if it has one (RFC 6874 §2: "%25" then the zone, which the
#: explorer's own URL writes; "%" alone, as --host writes it), then an optional port, which
#: may be empty (RFC 3986 §3.2.3, ``port = *DIGIT``; RFC 9110 §4.2.3: the scheme's default):
#: "localhost:" was answered 400 "Invalid host header" (campaign 50a, issue 32).
#: Nothing that could change the URL's path.
_HOST = re.compile(r"(?P<host>[a-z0-9._~%!$&'()*+,;=-]+"
                   r"|\[(?P<ipv6>[a-f0-9:.]+)(?:%[a-z0-9._~%-]+)?\])"
                   r"(?::(?P<port>[0-9]*))?", re.IGNORECASE)  # fmt: skip


def host_of(header: str | None) -> str | None:
    """The host a Host header names, lower case, an IPv6 address in its brackets in its short
    form (RFC 5952: ``[::1]``, its zone as written); None for a header that is missing or not a
    host."""
    match = _HOST.fullmatch(header or "")
    if match is None:
        return None
    if match["ipv6"] is not None:
        try:
            short = ipaddress.IPv6Address(match["ipv6"]).compressed
        except ValueError:
            return None
        # One address, many spellings (RFC 4291 §2.2): a script's URL keeps the one it was
        # given, and http://[0:0:0:0:0:0:0:1]:8765/ was refused 400 as another host than
        # [::1] (campaign 48a, issue 32). Browsers send the short form.
        zone = match["host"][len(match["ipv6"]) + 1 : -1]
        return f"[{short}{zone.lower()}]"
    # A name written fully qualified ends in a dot (RFC 1034 §3.1: "localhost." is the name
    # "localhost", as http://localhost.:8765/ sends it); answered 400 before (campaign 34,
    # issue 32). One dot only: "localhost.." names nothing.
    name = match["host"].lower()
    return name[:-1] if len(name) > 1 and name.endswith(".") else name


def _no_port(header: bytes) -> bool:
    """Whether a Host header (or a request-target's authority) names a port no connection
    can have come in on: 0, reserved (RFC 6335 §6), or one past 65535 (TCP's ports are 16
    bits, RFC 9293 §3.1). Such a Host went into the trailing slash's redirect as it came:
    `Host: 127.0.0.1:0` was sent on to http://127.0.0.1:0/api/papers (campaign 52a, issue
    32)."""
    match = _HOST.fullmatch(header.decode("latin-1"))
    if match is None or not match["port"]:  # no port, or an empty one: the scheme's (80)
        return False
    digits = match["port"].lstrip("0")  # (int() reads at most 4,300 digits)
    return not digits or len(digits) > 5 or int(digits) > 65535


#: A Content-Length header line as h11 reads it (its name, then its value, without the spaces
#: around it), and the leading zeros of each number in that value.
_CONTENT_LENGTH_LINE = re.compile(rb"(?P<name>content-length[ \t]*:[ \t]*)(?P<value>.*?)[ \t]*",
                                  re.IGNORECASE | re.DOTALL)  # fmt: skip
_LEADING_ZEROS = re.compile(rb"(?<![0-9])0+(?=[0-9])")
#: A chunk's size (RFC 9112 §7.1): its leading zeros, and its hex digits.
_LEADING_ZEROS_HEX = re.compile(rb"^0+(?=[0-9a-fA-F])")
_HEX_DIGITS = re.compile(rb"[0-9a-fA-F]*")
#: The whitespace between a chunk's size and its first extension (RFC 9112 §7.1.1: BWS).
_BWS_BEFORE_EXTENSION = re.compile(rb"^([0-9a-fA-F]+)[ \t]+(?=;)")

#: A CR not followed by LF (RFC 9112 §2.2), with the byte after it come.
_BARE_CR = re.compile(rb"\r[^\n]")
#: A line ended by LF without CR before it.
_LF_ALONE = re.compile(rb"[^\n]*(?<!\r)\n")
#: The start of a continuation line (RFC 9112 §5.2's obs-fold), as h11 reads one.
_OBS_FOLD = re.compile(rb"[ \t]+")
#: A Transfer-Encoding field line, and the words that refuse one naming chunked twice.
_TRANSFER_ENCODING_LINE = re.compile(rb"(?i)transfer-encoding[ \t]*:")
_CHUNKED_TWICE = "The request's Transfer-Encoding names chunked"
#: A field line that frames a message (RFC 9112 §6): none of a trailer's.
_FRAMING_FIELD = re.compile(rb"(?i)(content-length|transfer-encoding):")

#: A request-target in absolute form (RFC 9112 §3.2.2): its authority, and the path after it.
#: A fragment right after the authority (`http://host:port#x`) is kept with the path, for the
#: fragment's refusal: read as no URL, it was said to be "not a path" (campaign 53a's notice).
_ABSOLUTE_FORM = re.compile(rb"(?i)https?://(?P<authority>[^/?#]*)(?P<path>[/#].*)?", re.DOTALL)


class HostCheck:
    """ASGI middleware: a request whose Host is not one of ``allowed`` (the explorer's own
    names) is answered 400, as a page of another site reaching it through DNS rebinding is.

    Starlette's TrustedHostMiddleware read the host as what comes before the Host's first
    ``:`` before Starlette 1.7: an IPv6 address's ``[`` never matched, and ``ccsim explore
    --host ::1`` answered 400 to its own page with the Starlette 0.40 to 1.6 that
    pyproject.toml allows (campaign 27, issue 32). Starlette 1.7 needs Python 3.10, and ccsim
    runs on 3.9, so the check is ccsim's own."""

    def __init__(self, app: Any, allowed: list[str]) -> None:
        self.app = app
        # Each as a Host header names it (an IPv6 address in its short form), and as given.
        self.allowed = {h.lower() for h in allowed} | {n for n in map(host_of, allowed) if n}

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] not in ("http", "websocket") or scope.get("http_version") not in (
            "1.0",
            "1.1",
        ):
            # A version the explorer does not speak is answered 505 saying so (``Guard``), its
            # Host unchecked: HTTP/2's preface (`PRI * HTTP/2.0`, which h11 reads as a request
            # line without a Host) was answered 400 "Invalid host header" (campaign 53a,
            # issue 32).
            await self.app(scope, receive, send)
            return
        header = next((v for k, v in scope["headers"] if k == b"host"), None)
        # A request-target in absolute form (`GET http://host:port/api/papers`, as a client
        # configured with the explorer as its proxy sends it) names the host itself, and a
        # server must accept it and take that host in place of the Host header (RFC 9112
        # §3.2.2). Routed as a path, it was answered 404 (campaign 30, issue 32).
        absolute = _ABSOLUTE_FORM.fullmatch(scope.get("raw_path") or b"")
        if absolute is not None:
            from urllib.parse import unquote

            header = absolute["authority"]
            # An empty path is "/" (RFC 3986 §6.2.3), but for OPTIONS without a query it asks
            # about the server itself, as `OPTIONS *` does (RFC 9112 §3.2.4): `OPTIONS
            # http://127.0.0.1:8765` was answered 405 as a request for the page (campaign
            # 52a, issue 32).
            bare = scope["method"] == "OPTIONS" and not scope.get("query_string")
            raw_path = absolute["path"] or (b"*" if bare else b"/")
            # The target's authority is the request's host for everything after this check
            # too: "the server MUST ignore the received Host header field" (RFC 9112 §3.2.2).
            # Left in place, the Origin check compared the Origin with the Host sent beside
            # the target (`POST http://127.0.0.1:8765/api/run` with `Host: evil.example` and
            # `Origin: http://evil.example` passed), and a redirect (`/api/papers/`) was built
            # from it, to http://evil.example/api/papers (campaign 51a, issue 32).
            headers = [(k, v) for k, v in scope["headers"] if k != b"host"]
            scope = {**scope, "raw_path": raw_path, "path": unquote(raw_path.decode("latin-1")),
                     "headers": [(b"host", header), *headers]}  # fmt: skip
        # An HTTP/1.0 request need not name its host (RFC 9112 §3.2 asks it of HTTP/1.1;
        # RFC 1945 has no Host), and no browser sends one without it, so it cannot be a page
        # of another site rebinding a name: `printf 'GET / HTTP/1.0\r\n\r\n' | nc` was
        # answered 400 "Invalid host header", of a header it did not send (campaign 50a,
        # issue 32). (h11 answers an HTTP/1.1 request without one 400 itself.)
        nameless = header is None and scope.get("http_version") == "1.0"
        if nameless and scope.get("server"):
            # Its host is then the address it came in on, the server's own authority (RFC 9112
            # §3.3), for the checks after this one: compared with "" a foreign Origin was
            # refused 403 naming "the explorer's own page (http://)", no address, and the
            # explorer's own Origin was refused as well (campaign 62c, issue 32).
            header = _authority(*scope["server"][:2]).encode("ascii")
            scope = {**scope, "headers": [(b"host", header), *scope["headers"]]}
        no_port = header is not None and _no_port(header)  # refused on every address too
        if no_port or not nameless:
            host = host_of(header.decode("latin-1") if header is not None else None)
            # On every address ("*") any host passes, but a Host that names none (`[::1`,
            # `::1`, `[::1]]`, empty) is still refused: RFC 9112 §3.2 asks 400 of a Host with
            # an invalid value, and `--host ::` answered such a request 200 where the
            # explorer on ::1 answered it 400 (campaign 63a, issue 32).
            if no_port or host is None or ("*" not in self.allowed and host not in self.allowed):
                from starlette.responses import PlainTextResponse

                # The host refused is the target's when it names one: "Invalid host header"
                # answered a request whose Host header was the explorer's own (`curl -x
                # http://127.0.0.1:8765 http://example.com/`, a user@ in the target), naming
                # the one field that was right (campaign 52a, issue 32).
                said = ("Invalid host in the request-target (absolute form)"
                        if absolute is not None else "Invalid host header")  # fmt: skip
                await PlainTextResponse(said, 400)(scope, receive, send)
                return
        await self.app(scope, receive, send)


def _authority(address: str, port: int) -> str:
    """``address:port`` as a URL names it: an IPv6 address in brackets, and an IPv4 address
    mapped into IPv6 (a dual-stack socket's peer) as the IPv4 address a client connected to."""
    ip = ipaddress.ip_address(address.split("%")[0])
    return f"{url_host(str(getattr(ip, 'ipv4_mapped', None) or ip))}:{port}"


class Framing:
    """ASGI middleware, before every other check: a request whose body's framing is faulty or
    ambiguous (RFC 9112 §6.1) or that gives a guarded field twice is answered 400 and its
    connection closed. Checked after the Host and the request-target, such a request refused
    there (`Host: evil.test`, `GET api/papers`: 400 without a close; `OPTIONS *`: 200) kept
    its connection, and the request after its chunks, where a proxy reading the
    Content-Length sees other bytes, was answered too (campaign 53a, issue 32), as campaign
    34's close is to prevent."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        problem = _framing_problem(scope) if scope["type"] == "http" else None
        if problem is not None:
            from starlette.responses import JSONResponse

            answer = JSONResponse({"error": problem}, status_code=400,
                                  headers={"Connection": "close"})  # fmt: skip
            await answer(scope, receive, send)
            return
        await self.app(scope, receive, send)


def _framing_problem(scope: Any) -> str | None:
    """What is faulty or ambiguous in an HTTP request's framing or guarded fields, in the
    words of its 400 (see :class:`Framing`), or None."""
    headers = scope["headers"]
    if _framed_twice(headers):
        # Both lengths: h11 reads the body by its chunks, a proxy in front may read it by its
        # Content-Length, and the bytes between the two ends would be a second request to one
        # and part of a body to the other (request smuggling). A server may refuse such a
        # request and must close the connection after answering it (RFC 9112 §6.1); kept
        # open, the rest was read as the next request (campaign 34, issue 32).
        return "the request has both a Content-Length and a Transfer-Encoding: send one of them"
    if scope.get("http_version") == "1.0" and any(
        k.lower() == b"transfer-encoding" for k, _ in headers
    ):
        # HTTP/1.0 has no transfer codings: a server "MUST treat the message as if the framing
        # is faulty" and close the connection (RFC 9112 §6.1), since a proxy in front that
        # speaks 1.0 reads the body's end elsewhere. h11 read the chunks, and such a request
        # started a job (campaign 51a, issue 32).
        return ("the request is HTTP/1.0 and has a Transfer-Encoding, which HTTP/1.0 does not "
                "have: send its body with a Content-Length")  # fmt: skip
    # A field that is one value, given twice: the guards read the first, a proxy in front may
    # read the last, and `Origin: <own>` then `Origin: <another site>` passed the Origin check
    # (campaign 51a, issue 32). A sender MUST NOT send such a field twice (RFC 9110 §5.3; RFC
    # 6454 §7.3 for Origin).
    twice = _said_twice(headers)
    return None if twice is None else f"the request has {twice} twice: send it once"


class Guard:
    """ASGI middleware: ``refusal`` for every request under ``/api/``."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope.get("http_version") not in ("1.0", "1.1"):
            from starlette.responses import JSONResponse

            # h11 reads any one-digit version in a request line ("HTTP/2.0", "HTTP/1.2",
            # "HTTP/0.9") and answered it as HTTP/1.1, framing and all (campaign 47, issue
            # 32). A major version it does not speak is one a server may refuse with 505,
            # saying what it does speak (RFC 9110 §6.2 and §15.6.6).
            # (h11 reads a version as one digit, a dot and one digit: nothing to escape.)
            version = f"HTTP/{scope.get('http_version')}"
            if scope["method"] == "PRI" and scope.get("raw_path") == b"*":
                # HTTP/2's preface, read by h11 as a request line (RFC 9113 §3.4): said on the
                # terminal as when h11 refused its next bytes, which the 505's close now drops.
                _NOT_HTTP_SAID.say(HTTP2_SAID)
            answer = JSONResponse({"error": f"the request line says {version}: the explorer "
                                            "speaks HTTP/1.1 (and 1.0)"},
                                  status_code=505, headers={"Connection": "close"})  # fmt: skip
            await answer(scope, receive, send)
            return
        if scope["type"] == "http" and scope.get("raw_path") == b"*":
            from starlette.responses import JSONResponse, Response

            # The asterisk-form names the server, not a resource (RFC 9112 §3.2.4), and only
            # OPTIONS may use it: `OPTIONS *` asks what the server supports, and was answered
            # 404 Not Found, as a path (campaign 50a, issue 32). A successful answer names the
            # methods (Allow) and, with no content, says Content-Length: 0 (RFC 9110 §9.3.7).
            if scope["method"] == "OPTIONS":
                await Response(status_code=200, headers={"Allow": "GET, HEAD, POST"})(
                    scope, receive, send
                )
            else:
                answer = JSONResponse({"error": f"the request-target * is for OPTIONS only, not "
                                                f"{brief(scope['method'])}: name a path, such "
                                                "as /"}, status_code=400)  # fmt: skip
                await answer(scope, receive, send)
            return
        raw_path = scope.get("raw_path") or b"/"
        # A URL without a path and with a fragment (`GET http://host:port#x`) is the
        # fragment's case below: it was said to be "not a path" (campaign 53a's notice).
        if scope["type"] == "http" and not raw_path.startswith((b"/", b"#")):
            from starlette.responses import JSONResponse

            # Neither a path (origin-form, from "/") nor a URL (absolute-form, ``HostCheck``):
            # `CONNECT 127.0.0.1:8765` (authority-form, a proxy's) and `GET api/papers` were
            # answered 404 Not Found, as a path no route has; a request-target that is none of
            # the forms the explorer serves is a bad request (RFC 9112 §3.2 and §3). The target
            # is in the answer cut short, as every value the explorer repeats is.
            target = raw_path.decode("latin-1")
            answer = JSONResponse({"error": f"the request-target {brief(target)} is not a path: "
                                            "name one from /, such as /"},
                                  status_code=400)  # fmt: skip
            await answer(scope, receive, send)
            return
        query = scope.get("query_string") or b""
        if scope["type"] == "http" and (b"#" in raw_path or b"#" in query):
            from starlette.responses import JSONResponse

            # A URL's fragment is the client's own: no request-target has one (RFC 9112 §3.2:
            # "#" is in neither a path nor a query). `GET /api/papers#x` was answered 404 Not
            # Found, of a path the explorer serves, and `/api/papers?#x` 200 (campaign 53a,
            # issue 32). The target comes from the scope without its query: put back whole.
            target = (raw_path + (b"?" + query if query else b"")).decode("latin-1")
            answer = JSONResponse({"error": f"the request-target {brief(target)} has a "
                                            "fragment (#...): leave it out, as browsers do"},
                                  status_code=400)  # fmt: skip
            await answer(scope, receive, send)
            return
        if scope["type"] == "http" and (
            scope["path"].startswith("/api/") or _websocket_upgrade(scope["headers"])
        ):
            from starlette.datastructures import Headers
            from starlette.responses import JSONResponse

            refused = refusal(scope["method"], Headers(scope=scope))
            if refused is not None:
                # The connection closes with the answer: kept open, the body refused unread
                # was read after it to its announced end (1 GB) and thrown away (campaign 25,
                # issue 32).
                headers = {**refused.headers, "Connection": "close"}
                answer = JSONResponse({"error": str(refused)}, status_code=refused.status,
                                      headers=headers)  # fmt: skip
                await answer(scope, receive, send)
                return
        await self.app(scope, receive, send)


class NoSniff:
    """ASGI middleware, outermost: ``X-Content-Type-Options: nosniff`` (WHATWG Fetch §3.5) on
    every answer, the other middlewares' refusals included. A browser then takes each answer as
    the type it is sent as: JSON as JSON, never as HTML or a script, whatever text an error
    repeats from its request (noticed in campaign 27, issue 32)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def sending(message: Any) -> None:
            if message["type"] == "http.response.start":
                headers = [*message.get("headers", []), (b"x-content-type-options", b"nosniff")]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, sending)


def _framed_twice(headers: list[tuple[bytes, bytes]]) -> bool:
    """Whether a request's head gives its body's length twice: a Content-Length and a
    Transfer-Encoding (RFC 9112 §6.1)."""
    names = {k.lower() for k, _ in headers}
    return b"content-length" in names and b"transfer-encoding" in names


#: The fields the guards read that hold one value (no comma-separated list): each at most once.
_SINGLE_FIELDS = {b"origin": "Origin", b"sec-fetch-site": "Sec-Fetch-Site",
                  b"content-type": "Content-Type"}  # fmt: skip


def _said_twice(headers: list[tuple[bytes, bytes]]) -> str | None:
    """The name of a field of ``_SINGLE_FIELDS`` that a request's head gives more than once, or
    None."""
    names = [k.lower() for k, _ in headers if k.lower() in _SINGLE_FIELDS]
    return next((_SINGLE_FIELDS[n] for n in names if names.count(n) > 1), None)


def _websocket_upgrade(headers: list[tuple[bytes, bytes]]) -> bool:
    """Whether an ASGI scope's raw headers ask to upgrade to WebSocket (RFC 6455 §4.1)."""
    return _asks_websocket([v.decode("latin-1") for k, v in headers if k.lower() == b"upgrade"])


def _asks_websocket(upgrades: list[str]) -> bool:
    """Whether the values of a request's ``Upgrade`` fields name WebSocket among the protocols
    they list (RFC 9110 §7.8: ``Upgrade = #protocol``, each ``name[/version]``, the name
    without case, the fields one list). Compared whole with "websocket", `Upgrade: websocket,
    h2c`, `websocket/13` or a second Upgrade field naming it was passed on and answered 200
    with the page, where docs/site.md says a request to upgrade to WebSocket is answered 400
    (campaign 64a, issue 32)."""
    names = (p.strip().partition("/")[0].lower() for v in upgrades for p in v.split(","))
    return "websocket" in names


class _NoWebSocketAdvice(logging.Filter):
    """Drops uvicorn's warnings on an upgrade request: "Unsupported upgrade request." and
    "No supported WebSocket library detected. Please use pip install 'uvicorn[standard]'...".
    The explorer answers such a request itself (``Guard``); it needs no WebSocket library."""

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
        return not (text.startswith("Unsupported upgrade request")
                    or text.startswith("No supported WebSocket library"))  # fmt: skip


_NO_WEBSOCKET_ADVICE = _NoWebSocketAdvice()


class _NoGraceNotice(logging.Filter):
    """Drops uvicorn's "Cancel N running task(s), timeout graceful shutdown exceeded" at a stop
    held by a client that stopped reading (``STOP_GRACE_S``), and its report of each task it
    then cancelled: ERROR lines above the CLI's own, about requests nobody would finish."""

    def filter(self, record: logging.LogRecord) -> bool:
        # uvicorn cancels a request's task only there, and logs each it cancelled as
        # "Exception in ASGI application" with an 80-line CancelledError traceback: a request
        # whose client stopped sending its body half-way, or an answer sent in pieces to one
        # that stopped reading (campaign 26, issue 32).
        cancelled = record.exc_info is not None and isinstance(
            record.exc_info[1], asyncio.CancelledError
        )
        return not cancelled and "timeout graceful shutdown exceeded" not in record.getMessage()


_NO_GRACE_NOTICE = _NoGraceNotice()


class _NotHttpSaid(logging.Filter):
    """Turns uvicorn's "Invalid HTTP request received." (logged for bytes h11 cannot read as
    HTTP/1.1) into a ``ccsim explore: warning:`` that says the likely cause, at most once per
    ``OUT_OF_FILES_WARN_S`` seconds for each cause: opening https://127.0.0.1:8765/ sends a
    TLS handshake, and the terminal said only "WARNING:  Invalid HTTP request received.", once
    per attempt (campaign 26, issue 32).

    The cause is told by the first bytes of the connection (``opening``, set by the protocol
    just before h11 reads what came, in the same call as the log): every such request was said
    to be "an https:// address?", HTTP/2's preface (`curl --http2-prior-knowledge`) and a
    malformed HTTP/1.1 request included (campaign 43a, issue 32)."""

    def __init__(self) -> None:
        super().__init__()
        self.last: dict[str, float] = {}
        self.opening = b""
        #: The status h11 hinted at for the bytes refused (``HintedConnection``).
        self.status = 400
        #: Whether those bytes were a request's body (its chunks), its head read whole.
        self.in_body = False
        #: Whether they were a line of a chunked body past h11's buffer (``HintedConnection``).
        self.line_too_long = False
        #: Whether those were a chunked body's trailer fields, past h11's buffer together.
        self.trailer_too_long = False
        #: Whether a 400 can still answer them: not once the request's answer has begun.
        self.answered = True

    def filter(self, record: logging.LogRecord) -> bool:
        if record.getMessage() != "Invalid HTTP request received.":
            return True
        if self.opening[:1] == b"\x16":  # a TLS record: a handshake (RFC 8446 §5.1)
            said = ("a request that is not HTTP/1.1 was refused (an https:// address? the "
                    "explorer serves http:// only)")  # fmt: skip
        elif self.status == 413:  # a Content-Length past 20 digits: said as the app's 413 is
            return False
        elif self.status == 431:
            said = ("a request whose head was too large was answered 431 Request Header Fields "
                    "Too Large (grown cookies?)")  # fmt: skip
        elif self.status == 501:
            said = ("a request with a transfer coding other than chunked was answered 501 Not "
                    "Implemented (Transfer-Encoding)")  # fmt: skip
        elif self.in_body and not self.answered:
            # The bytes came after its answer had begun (a GET's chunks sent slowly): no 400
            # can follow it, and the connection closes (``send_400_response``). The terminal
            # said "was answered 400 Bad Request" of a client that read 200 and a close
            # (campaign 52a, issue 32).
            said = ("a request whose chunked body was broken after its answer had begun had "
                    "its connection closed (Transfer-Encoding: chunked)")  # fmt: skip
        elif self.trailer_too_long:
            said = ("a request whose chunked body had trailer fields too long together was "
                    "answered 400 Bad Request")  # fmt: skip
        elif self.line_too_long:
            said = ("a request whose chunked body had a line too long (a chunk's size with its "
                    "extensions, or a trailer field) was answered 400 Bad Request")  # fmt: skip
        elif self.in_body:
            # Its line and headers were read: the terminal said "a malformed request line or
            # header" of a broken chunk in a body (campaign 51a, issue 32).
            said = ("a request whose body was not valid chunked encoding was answered 400 Bad "
                    "Request (Transfer-Encoding: chunked)")  # fmt: skip
        elif self.opening.startswith(b"PRI * HTTP/2"):  # RFC 9113 §3.4: the preface
            said = HTTP2_SAID
        else:
            said = ("a request that is not valid HTTP/1.1 was answered 400 Bad Request (a "
                    "malformed request line or header)")  # fmt: skip
        self.say(said)
        return False

    def say(self, said: str) -> None:
        """Warn ``said``, unless it was said less than ``OUT_OF_FILES_WARN_S`` seconds ago."""
        import time

        now = time.monotonic()
        if said not in self.last or now - self.last[said] >= OUT_OF_FILES_WARN_S:
            self.last[said] = now
            _warn(said)


_NOT_HTTP_SAID = _NotHttpSaid()
#: What the terminal says of HTTP/2's preface (RFC 9113 §3.4).
HTTP2_SAID = ("a request in HTTP/2 was refused (curl --http2-prior-knowledge?): the explorer "
              "serves HTTP/1.1 only")  # fmt: skip


def head_deadline_protocol() -> type:
    """uvicorn's HTTP/1.1 protocol (h11) with a deadline on each request's head: a connection
    with no request in progress is closed ``HEAD_TIMEOUT_S`` after it opened or its last answer
    ended, unless a request's head has come in whole by then; when part of one had come, it is
    answered 408 Request Timeout first (RFC 9110 §15.5.9).

    uvicorn closes an idle connection only after an answer (``timeout_keep_alive``), and every
    byte received restarts that wait; nothing bounded a connection that never sent anything,
    or sent its head a byte at a time (campaign 25, issue 32)."""
    import h11
    from uvicorn.protocols.http.h11_impl import DEFAULT_MAX_INCOMPLETE_EVENT_SIZE, H11Protocol

    class HintedConnection(h11.Connection):  # type: ignore[misc]
        """h11's server side, keeping the status h11 hints at when it cannot read the
        client's bytes (``error_status_hint``: 431 for a head past its buffer, else 400), which
        uvicorn drops; read by ``send_400_response`` and by ``_NotHttpSaid``'s warning."""

        refused_status = 400
        #: What h11 said of the bytes it refused (our own words for a 413 and a long line).
        refused_said = ""
        #: Whether ``refused_said`` is the explorer's own words, to answer with.
        refused_in_own_words = False

        def __init__(self, head_limit: int) -> None:
            super().__init__(h11.SERVER, head_limit)
            self.head_limit = head_limit

        def next_event(self) -> Any:
            reading = self.their_state
            try:
                return super().next_event()
            except h11.RemoteProtocolError as exc:
                status, said = exc.error_status_hint, str(exc)
                long_line = reading is h11.SEND_BODY and status == 431
                if long_line:
                    # h11's buffer outgrown in a body sent in chunks: a line of it (a chunk's
                    # size with its extensions, or a trailer field) with no end yet, never the
                    # head, read whole before. It was answered 431 "The request's head is over
                    # 16384 bytes." and the terminal said "grown cookies?" (campaign 52a, issue
                    # 32). RFC 9112 §7.1.1: a 4xx when chunk extensions pass a server's limit.
                    status = 400
                    said = (
                        "A line of the request's chunked body (a chunk's size with its "
                        f"extensions, or a trailer field) is over {self.head_limit} bytes."
                    )
                trailers = long_line and b"\n" in bytes(self._receive_buffer)
                if trailers:
                    # A whole line waits in the buffer: its trailer section (fields read
                    # together, to the empty line) outgrew it. 1,700 fields of 11 bytes
                    # were said to be "a line ... over 16384 bytes" (campaign 62c, issue
                    # 32).
                    said = (
                        "The request's trailer fields (after its last chunk) are over "
                        f"{self.head_limit} bytes together."
                    )
                self.refused_status = _NOT_HTTP_SAID.status = status
                self.refused_said = said
                self.refused_in_own_words = (long_line or status == 413
                                             or said.startswith(_CHUNKED_TWICE))  # fmt: skip
                _NOT_HTTP_SAID.in_body = reading is h11.SEND_BODY
                _NOT_HTTP_SAID.line_too_long = long_line
                _NOT_HTTP_SAID.trailer_too_long = trailers
                _NOT_HTTP_SAID.answered = self.our_state in (h11.IDLE, h11.SEND_RESPONSE)
                raise

        def send(self, event: Any) -> Any:
            if type(event) is h11.InformationalResponse:
                # uvicorn writes `100 Continue` (to an `Expect: 100-continue`) straight to h11,
                # past every middleware: it was the one answer without the nosniff every
                # other carries (``NoSniff``; noticed in campaign 51a, issue 32).
                nosniff = (b"x-content-type-options", b"nosniff")
                event = h11.InformationalResponse(status_code=event.status_code,
                                                  reason=event.reason,
                                                  headers=[*event.headers, nosniff])  # fmt: skip
            return super().send(event)

        def _get_io_object(self, role: Any, event: Any, io_dict: Any) -> Any:
            io = super()._get_io_object(role, event, io_dict)
            if role is h11.CLIENT and self.their_state is h11.IDLE and io is not None:
                reader = io  # of the client's next request's head
                return lambda buffer: reader(_LengthsUnpadded(buffer))
            if role is h11.CLIENT and type(io).__name__ == "ChunkedReader":
                return _ChunkSizesUnpadded(io)
            return io

    class _ChunkSizesUnpadded:
        """h11's reader of a body sent in chunks, each chunk's size read without leading zeros:
        RFC 9112 §7.1 allows them (``1*HEXDIG``) as RFC 9110 does a Content-Length's, and h11
        refused a size of more than 20 digits with 400, said on the terminal to be "a malformed
        request line or header" (campaign 51a, issue 32). A size still longer (2^80 bytes and
        more) is answered 413, as a Content-Length of more than 20 digits is."""

        def __init__(self, reader: Any) -> None:
            self._reader = reader

        def __call__(self, buffer: Any) -> Any:
            return self._reader(_ChunkLines(buffer))

        def read_eof(self) -> Any:  # h11 asks it of a body reader when the client's input ends
            return self._reader.read_eof()

    class _BufferView:
        """h11's receive buffer, as it is, but for what a subclass reads otherwise."""

        def __init__(self, buffer: Any) -> None:
            self._buffer = buffer

        def __getattr__(self, name: str) -> Any:
            return getattr(self._buffer, name)

    class _ChunkLines(_BufferView):
        """A body's buffer whose next line, a chunk's size (what h11's ChunkedReader reads
        lines for), comes without its leading zeros, and whose trailer comes without fields
        that frame a message."""

        def maybe_extract_lines(self) -> Any:
            lines = self._buffer.maybe_extract_lines()
            if not lines:
                return lines
            # The trailer (RFC 9112 §7.1.2): h11 checks a Content-Length or Transfer-Encoding
            # there as it does in a head, and `Content-Length: 0000000000000000000002` was
            # answered 400 where the same in the head is read as 2, `Transfer-Encoding: gzip`
            # 501 (each said on the terminal as a broken body or an unread coding) (campaign
            # 52a, issue 32). Neither can frame a message from a trailer (RFC 9110 §6.5.1),
            # the explorer reads no trailer field, and a recipient may discard them (RFC 9112
            # §7.1.2).
            return [ln for ln in _unfolded(lines) if not _FRAMING_FIELD.match(ln)]

        def maybe_extract_next_line(self) -> Any:
            line = self._buffer.maybe_extract_next_line()
            if line is None:
                if _LF_ALONE.match(bytes(self._buffer)):
                    # A chunk's size line ends in CRLF (RFC 9112 §7.1); h11 finds none in one
                    # ended by LF alone and waited for the rest: 408 after 20 s, asking about
                    # a Content-Length the request did not have (campaign 53a, issue 32).
                    raise h11.LocalProtocolError(
                        "A line of the request's chunked body ends in LF alone, not CRLF."
                    )
                return None
            line = _LEADING_ZEROS_HEX.sub(b"", line)
            # "5 ;name=value": RFC 9112 §7.1.1 writes BWS before each extension's ";", which
            # a recipient MUST accept and remove (RFC 9110 §5.6.3); h11 reads none there, and
            # such a body was answered 400 and said on the terminal not to be valid chunked
            # encoding (campaign 52a, issue 32). (h11 reads anything after the ";".)
            line = _BWS_BEFORE_EXTENSION.sub(rb"\1", line)
            digits = _HEX_DIGITS.match(line)[0]
            if len(digits) > 20:
                raise h11.LocalProtocolError(
                    "A chunk of the request's body is over 2^80 bytes: the explorer reads a "
                    f"body of at most {MAX_BODY} bytes.", error_status_hint=413)  # fmt: skip
            if digits and int(digits, 16) > MAX_BODY:
                # A chunk announcing more than the whole body may hold is refused as a
                # Content-Length over it is, before any of it is read. Waited for, a chunk
                # larger than the bytes sent with it (`ff` then 5 bytes and the last chunk)
                # swallowed the last chunk as its data and was answered 408 after 20 s, asking
                # about a last chunk the client had sent (campaign 62a, issue 32).
                raise h11.LocalProtocolError(
                    f"A chunk of the request's body is {int(digits, 16)} bytes: the explorer "
                    f"reads a body of at most {MAX_BODY} bytes.",
                    error_status_hint=413,
                )
            return line

    # What a head with a bare CR is told, found before or after h11 split its lines.
    _BARE_CR_SAID = "A bare CR (without LF) in the request's head."

    class _LengthsUnpadded(_BufferView):
        """h11's buffer of a request's head, its Content-Length values read without leading
        zeros. RFC 9110 §8.6 allows them (``1*DIGIT``) and asks a recipient to expect long
        numerals; h11 refuses more than 20 digits, and `Content-Length:
        000000000000000000005` was answered 400 and said on the terminal to be "a malformed
        request line or header" (campaign 50a, issue 32). A length still longer, a body of
        10^20 bytes or more, is answered 413 Content Too Large, as a run request's body over
        ``MAX_BODY`` is."""

        def maybe_extract_lines(self) -> Any:
            lines = self._buffer.maybe_extract_lines()
            if lines is None and _BARE_CR.search(bytes(self._buffer)):
                # A head whose lines end in CR alone has no line h11 can find, and waited for
                # the rest until its deadline: 408 Request Timeout after 20 s, of a request
                # sent whole (campaign 53a, issue 32). A bare CR is invalid (RFC 9112 §2.2).
                raise h11.LocalProtocolError(_BARE_CR_SAID)
            if not lines:
                return lines
            if any(b"\r" in ln for ln in lines):
                # h11 splits a head at LF and takes one CR off each line's end: a CR left is
                # bare. A head of lines ended by CR alone with the next request in the same
                # read (pipelined) has that request's CRLF to end it, and was answered
                # "illegal request line: b'GET / HTTP/1.1\rHost: ...'" where the same head
                # read alone is said to have a bare CR (campaign 64a, issue 32).
                raise h11.LocalProtocolError(_BARE_CR_SAID)
            # Each field whole, as h11 reads it (its continuation lines joined by a space, RFC
            # 9112 §5.2): `Content-Length:` then ` 0000000000000000000002` on the next line
            # was answered 400 where the same on one line is read as 2 (campaign 51a, issue
            # 32).
            fields = _transfer_coding_read(_unfolded(lines[1:]))
            return [lines[0], *map(_unpadded_length, fields)]

    def _unfolded(lines: list[Any]) -> list[Any]:
        """Header lines with each obsolete line folding (a line starting with a space or tab,
        RFC 9112 §5.2) joined to the line before it by one space, as h11 joins them; one
        before any field is left for h11 to refuse."""
        joined: list[Any] = []
        for line in lines:
            fold = _OBS_FOLD.match(line)
            if fold and joined:
                joined[-1] = bytes(joined[-1]) + b" " + bytes(line[fold.end() :])
            else:
                joined.append(line)
        return joined

    def _transfer_coding_read(fields: list[Any]) -> list[Any]:
        """A head's field lines with its Transfer-Encoding read as a list (RFC 9110 §5.6.1):
        its empty elements dropped (`chunked,`, which a recipient MUST accept; h11 compares
        the whole value with "chunked" and answered 501, "send the body ... as chunked alone",
        of a body sent as chunked alone), and chunked named more than once refused (400): a
        sender MUST NOT chunk a body twice (RFC 9112 §6.1), so its framing is faulty (§6.3:
        400, then close). `chunked, chunked`, or the field given twice, was answered that 501
        too, the terminal saying "a transfer coding other than chunked" (campaign 62a, issue
        32). Any other coding is left for h11 to refuse (501)."""
        at = [i for i, f in enumerate(fields) if _TRANSFER_ENCODING_LINE.match(f)]
        if not at:
            return fields
        values = [bytes(fields[i]).partition(b":")[2] for i in at]
        codings = [c.strip().lower() for v in values for c in v.split(b",") if c.strip()]
        if len(codings) > 1 and set(codings) == {b"chunked"}:
            raise h11.LocalProtocolError(
                f"{_CHUNKED_TWICE} {len(codings)} times: a body is chunked once; send "
                "Transfer-Encoding: chunked once."
            )
        if codings != [b"chunked"]:
            return fields
        kept = [f for i, f in enumerate(fields) if i not in at]
        return [*kept[: at[0]], b"Transfer-Encoding: chunked", *kept[at[0] :]]

    def _unpadded_length(line: Any) -> Any:
        match = _CONTENT_LENGTH_LINE.fullmatch(line)
        if match is None:
            return line
        value = _LEADING_ZEROS.sub(b"", match["value"])
        # Digits only: `0` then 100 x's (no number) was answered 413 "over 10^20 bytes"; it
        # is h11's 400, "bad Content-Length" (campaign 63a, issue 32).
        if any(len(n.strip()) > 20 and n.strip().isdigit() for n in value.split(b",")):
            raise h11.LocalProtocolError(
                "The request's Content-Length is over 10^20 bytes: the explorer reads a body "
                f"of at most {MAX_BODY} bytes.", error_status_hint=413)  # fmt: skip
        return match["name"] + value

    def _connection(config: Any) -> HintedConnection:
        limit = config.h11_max_incomplete_event_size
        return HintedConnection(DEFAULT_MAX_INCOMPLETE_EVENT_SIZE if limit is None else limit)

    class HeadDeadline(H11Protocol):  # type: ignore[misc]
        _deadline: asyncio.TimerHandle | None = None
        _head_started = False
        #: Whether the client shut its sending side after a whole request (``eof_received``).
        _half_closed = False
        #: The connection's first bytes, by which ``_NotHttpSaid`` tells a refusal's cause.
        _opening = b""
        transport: Any

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.conn = _connection(self.config)

        def connection_made(self, transport: Any) -> None:
            super().connection_made(LingeringClose(transport, self.loop))
            self._arm()

        def data_received(self, data: bytes) -> None:
            if self.transport.discard(data):  # the rest of a request answered and closed
                return
            if self.conn.their_state is h11.MUST_CLOSE:
                # The request just read closes the connection (HTTP/1.0, "Connection:
                # close"): what the client sends after it is no request (RFC 9112 §9.6), and
                # its answer may still be going out. Given to h11, one byte there was a
                # protocol error mid-answer, uvicorn's 400 for it could not be sent, and
                # asyncio logged "Fatal error: protocol.data_received() call failed." with a
                # traceback and cut the answer (campaign 29, issue 32).
                return
            between = self.cycle is None or self.cycle.response_complete
            # The body of a request answered before it was read (a 400 for its target, a 405,
            # a 404) may still be coming: its bytes begin no head. Counted as one, a client
            # that sent its body a moment after its head got, 20 s after its answer, a 408 to
            # no request, which a keep-alive client reads as the answer to its next request
            # (found by the fuzz's oracle of pipelined answers, seeds 6401 and 6403; campaign
            # 64a, issue 32).
            in_body = self.conn.their_state is h11.SEND_BODY
            if data and between and not in_body:
                self._head_started = True
            if len(self._opening) < 16:
                # Gathered across packets: a client that sends its first byte alone (a
                # preface written in pieces) had its HTTP/2 preface taken for a malformed
                # HTTP/1.1 request, told by b"P" (campaign 45a, issue 32).
                self._opening += data[: 16 - len(self._opening)]
            super().data_received(data)
            if data and between and in_body and self.cycle is not None:
                # The body ended within these bytes and the next head began after it.
                next_head = self.conn.their_state is h11.IDLE and self.conn.trailing_data[0]
                self._head_started = self._head_started or bool(next_head)

        def send_400_response(self, msg: str) -> None:
            # Bytes h11 cannot read (a broken chunk of a request's body) after that request's
            # head: its app already runs, and its answer (or the rest of it) must go nowhere,
            # as at a connection lost. It went to h11 after the 400, which raised "can't handle
            # event type Response when role=SERVER and state=MUST_CLOSE" ("Exception in ASGI
            # application" and a traceback; campaign 29, issue 32).
            if self.cycle is not None and not self.cycle.response_complete:
                self.cycle.disconnected = True
                self.cycle.message_event.set()
            if self.conn.our_state not in (h11.IDLE, h11.SEND_RESPONSE):
                # The answer is going out (an event stream): no 400 can come in its middle,
                # and uvicorn's attempt raised out of data_received (asyncio's "Fatal error:
                # protocol.data_received() call failed." and a traceback). The connection
                # closes, the answer cut.
                self.transport.close()
                return
            # Statuses h11 hints at and uvicorn answered 400 "Invalid HTTP request received.",
            # as if the request were malformed: a head past h11's buffer without its end,
            # sent over several packets (RFC 6585 §5), and a transfer coding other than
            # chunked (`Transfer-Encoding: gzip, chunked`; RFC 9112 §6.1: 501) (campaigns 47
            # and 48a, issue 32). Every one is written here, with the nosniff every other
            # answer has (``NoSniff``): uvicorn's 400 had none, and this 431 and 501 neither
            # (campaign 50a, issue 32).
            status = self.conn.refused_status
            said = (f"The request's head is over {self.conn.head_limit} bytes."
                    if status == 431 else
                    self.conn.refused_said
                    if self.conn.refused_in_own_words else
                    "The request's Transfer-Encoding is not one the explorer reads: "
                    "send the body with a Content-Length, or as chunked alone."
                    if status == 501 else
                    _not_http_said(self.conn.refused_said) or msg)  # fmt: skip
            for event in (
                h11.Response(status_code=status, reason=HTTPStatus(status).phrase.encode(),
                             headers=[(b"content-type", b"text/plain; charset=utf-8"),
                                      (b"x-content-type-options", b"nosniff"),
                                      (b"connection", b"close")]),
                h11.Data(data=said.encode()),
                h11.EndOfMessage(),
            ):  # fmt: skip
                self.transport.write(self.conn.send(event))
            self.transport.close()

        def eof_received(self) -> bool | None:
            # The client's sending side ended after a whole request (`printf 'GET ...' |
            # nc -N`, a proxy passing its client's half-close on): it still reads (TCP's
            # half-close, RFC 9293 §3.6), so the answer goes out and the connection closes
            # after it (``on_response_complete``). uvicorn closed at once and told the app its
            # client had left: the streamed answers (plotly.min.js, GET and HEAD) were never
            # written, 0 bytes where every other page was answered whole (campaign 43a,
            # issue 32). A job's event stream is the exception: a tab closed sends the same
            # FIN, and a reader leaving must be seen at once (``READER_RETURN_S``). Anything
            # else (no request in progress, a body cut short) closes as before.
            # A stream with a request pipelined behind it is no tab closed (browsers do not
            # pipeline): that client still reads, and its FIN is the end of its requests, as
            # for any other answer: cut there, the stream's answer ended unterminated and the
            # request behind it went unanswered (campaign 50a, issue 32). A client that did
            # leave is seen when the stream's writes fail (it writes every READER_HEARTBEAT_S
            # at the least).
            cycle = self.cycle
            pipelined = bool(self.conn.trailing_data[0].strip(b"\r\n"))
            # MUST_CLOSE is a whole request too, from a client that keeps no connection alive
            # (HTTP/1.0, `Connection: close`): `printf 'GET /plotly.min.js HTTP/1.0\r\n\r\n' |
            # nc -N` read 0 bytes again (campaign 45a, issue 32).
            if (cycle is None or cycle.response_complete
                    or self.conn.their_state not in (h11.DONE, h11.MUST_CLOSE)
                    or (_reads_a_running_job(cycle.scope) and not pipelined)):  # fmt: skip
                return None
            # h11 is not told: its end of input at the next cycle is an event uvicorn's loop
            # does not handle, and reads again for ever.
            self._half_closed = True
            return True

        def shutdown(self) -> None:
            self.transport.stop()  # the explorer stops: close at once, lingering or not
            cycle = self.cycle
            if (cycle is not None and not cycle.response_started
                    and self.conn.their_state is h11.SEND_BODY):  # fmt: skip
                # A request whose body is still coming in (sent slowly, or a client waiting
                # for its `100 Continue`) has no answer to finish: uvicorn waited for it as for
                # an answer going out, and a stop took STOP_GRACE_S longer (4 s for "a second
                # or two", campaign 62a, issue 32). Its connection closes now, which tells its
                # request it was left (a job stopped with the explorer could not run anyway).
                self.transport.close()
                return
            super().shutdown()

        def _arm(self) -> None:
            self._disarm()
            self._head_started = False
            self._deadline = self.loop.call_later(HEAD_TIMEOUT_S, self._head_late)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _head_late(self) -> None:
            self._deadline = None
            if self.transport.is_closing() or not (
                self.cycle is None or self.cycle.response_complete
            ):
                return
            if self._head_started:
                self.transport.write(b"HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n"
                                     b"X-Content-Type-Options: nosniff\r\n"
                                     b"Content-Length: 0\r\n\r\n")  # fmt: skip
            self.transport.close()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def handle_events(self) -> None:
            # Empty lines before a request line are ignored (RFC 9112 §2.2: a server SHOULD
            # ignore at least one; some clients send a CRLF after a POST's body). h11 reads
            # one as "no request line received", and uvicorn answered 400 and closed: a
            # keep-alive client then read that 400 as the answer to its next request. Between
            # two cycles h11's state is the same as a new connection's, so the bytes after
            # those lines go to a new one (h11 has no way to drop bytes it holds).
            if self.conn.their_state is h11.IDLE and self.conn.our_state is h11.IDLE:
                pending, closed = self.conn.trailing_data
                if pending.startswith((b"\r", b"\n")):
                    self.conn = _connection(self.config)
                    if rest := pending.lstrip(b"\r\n"):
                        self.conn.receive_data(rest)  # (b"" would tell h11 the input ended)
                    if closed:
                        self.conn.receive_data(b"")
            cycle = self.cycle
            _NOT_HTTP_SAID.opening = self._opening  # read by uvicorn's log of a refusal, if any
            _NOT_HTTP_SAID.status, _NOT_HTTP_SAID.in_body = 400, False
            _NOT_HTTP_SAID.line_too_long, _NOT_HTTP_SAID.answered = False, True
            _NOT_HTTP_SAID.trailer_too_long = False
            super().handle_events()
            if self.cycle is not cycle:  # a request's head came in whole
                self._disarm()

        def on_response_complete(self) -> None:
            self._arm()  # first: the next pipelined request, if any, disarms it again
            super().on_response_complete()
            if self._half_closed and self.cycle is not None and self.cycle.response_complete:
                # The client sent its last request: none pipelined before its end is left.
                self.transport.close()
                return
            if self._deadline is not None and self.conn.trailing_data[0]:
                # Part of the next head came with the request just answered (pipelining):
                # begun, it is answered 408 at the deadline. Uncounted, the connection was
                # closed at uvicorn's keep-alive wait (5 s) as an idle one, without a word
                # (campaign 28, issue 32); that wait is for a connection with nothing to read.
                self._head_started = True
                self._unset_keepalive_if_required()

    return HeadDeadline


#: How much of h11's reason for a 400 its answer repeats: the reason may quote the client's
#: bytes (a header's value of 9,000 bytes), and no answer echoes a request back whole.
_REASON_CHARS = 160
_BYTEARRAY = re.compile(r"""bytearray\((b(?:'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"))\)""")


def _not_http_said(reason: str) -> str:
    """The words of a 400 for a request h11 could not read as HTTP/1.1: the reason h11 (or
    one of the explorer's readers of its buffer) gave, which names what the client sent. Each
    such 400 said uvicorn's "Invalid HTTP request received.", the same for a missing or second
    Host, a Content-Length of +3 or two of them, a request line with two spaces or a byte
    not ASCII in its target, a NUL in a field's value, a chunk's size of "zz", a bare CR:
    nothing a client could correct from (campaign 63a, issue 32). "" for no reason known."""
    # h11 quotes its buffer's bytes as `bytearray(b'...')`: the bytes' repr is what was sent.
    reason = _BYTEARRAY.sub(r"\1", reason.strip().rstrip("."))
    if not reason:
        return ""
    if len(reason) > _REASON_CHARS:
        reason = reason[:_REASON_CHARS] + "..."
    return f"The request is not valid HTTP/1.1: {reason[0].lower()}{reason[1:]}."


def _reads_a_running_job(scope: Any) -> bool:
    """Whether a request is a job's event stream whose job has not ended: the one request whose
    client's FIN counts as its reader leaving (``eof_received``). A finished job's stream only
    sends what is done, and an unknown job's answer is a 404: `printf 'GET
    /api/jobs/<job>/events ...' | nc -N` read 0 bytes of a finished job's events, its result
    whole in the explorer (campaign 51a, issue 32). The job is looked up in the app that
    serves the request (Starlette puts it in the scope as it starts); without one, as before."""
    path = scope["path"]
    if not path.endswith("/events"):
        return False
    engine = getattr(getattr(scope.get("app"), "state", None), "engine", None)
    if engine is None:
        return True
    job = engine.jobs.get(path.split("/")[-2])
    return job is not None and not job.finished


class LingeringClose:
    """A connection's transport whose ``close`` is the staged close of RFC 9112 §9.6: the
    answer goes out, then the write side is shut (FIN), and what the client still sends is read
    and thrown away, for at most ``LINGER_S`` seconds or ``LINGER_BYTES`` bytes, before the
    connection closes.

    Closed at once with a request's body still coming in (a refusal that answers before
    reading it: 413, 415, 403, 408), the system answered the client's next bytes with a reset,
    and a reset throws away what the client had not yet read, the answer included: a script
    sending 72 KiB in chunks got "connection reset by peer" in place of 413, now and then
    (a test failing under load, campaigns 26 and 27, issue 32)."""

    def __init__(self, transport: Any, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._lingering = False
        self._discarded = 0
        #: False once the explorer stops: its connections then close at once.
        self.lingering_allowed = True

    def __getattr__(self, name: str) -> Any:  # write, get_extra_info, pause_reading, ...
        return getattr(self._transport, name)

    def is_closing(self) -> bool:
        return self._lingering or self._transport.is_closing()

    def write(self, data: bytes) -> None:
        """Write ``data``, unless the connection is closing: what an answer still writes after
        its connection's close goes nowhere, as on a closed transport. Written after the
        lingering close's FIN, it raised "Cannot call write() after write_eof()" in the app
        (a traceback on the log: campaign 29, issue 32)."""
        if not self._lingering:
            self._transport.write(data)

    def close(self) -> None:
        t = self._transport
        if t.is_closing() or self._lingering:  # closed, or closing when the lingering ends
            return
        if not self.lingering_allowed or not t.can_write_eof():
            t.close()
            return
        try:
            t.write_eof()  # after what is buffered: the answer is sent whole
        except OSError:  # the client already gone (ENOTCONN): nothing to linger for
            t.close()
            return
        self._lingering = True
        t.resume_reading()
        self._loop.call_later(LINGER_S, t.close)

    def stop(self) -> None:
        """The explorer stops: the connection closes at once from now on, and at once now if it
        is already lingering. Only the first was done, and a connection lingering when Ctrl-C
        came held the stop for the rest of its ``LINGER_S`` (3.2 s to stop, where 1.4 s without
        it; campaign 28, issue 32): its answer had gone out, and the client's bytes left to
        read and drop matter to nobody once the explorer ends."""
        self.lingering_allowed = False
        if self._lingering:
            self._transport.close()

    def discard(self, data: bytes) -> bool:
        """Whether ``data`` came after the close (thrown away); past ``LINGER_BYTES``, the
        connection closes."""
        if not self._lingering:
            return False
        self._discarded += len(data)
        if self._discarded > LINGER_BYTES:
            self._transport.close()
        return True


def uvicorn_config(
    app: Any, host: str, port: int, log_level: str = "warning", http: type | None = None
) -> Any:
    """uvicorn's configuration for the explorer: WebSockets off (``ws="none"``), and its
    advice to install a WebSocket library kept out of the log; no ASGI lifespan, as the app
    has nothing to start and ``serve`` stops its runs itself. Ctrl-C twice in quick succession
    makes uvicorn skip the lifespan's shutdown, and the exit then cancelled its task: 37 lines
    of "ERROR: Traceback ... CancelledError" above ccsim's own line. ``http`` is the HTTP
    protocol, :func:`head_deadline_protocol`'s by default.

    asyncio's event loop whatever else is installed (``loop="asyncio"``): uvicorn's "auto"
    takes uvloop when it can import it (``pip install uvicorn[standard]`` brings it), and
    uvloop closes a connection it cannot accept for want of file descriptors, so past ``ulimit
    -n`` browsers' requests were reset without a word where asyncio's keep them waiting and
    :func:`quiet_when_out_of_files` says so (campaign 46, issue 32).

    One worker, said (``workers=1``): the explorer is one process (``serve`` runs the server
    itself), and uvicorn, told nothing, reads ``WEB_CONCURRENCY`` (a platform's setting for
    web servers) with ``int()``: ``WEB_CONCURRENCY=abc`` stopped the explorer with "ccsim:
    error: invalid literal for int() with base 10: 'abc'", naming nothing (campaign 47,
    issue 32)."""
    import uvicorn

    config = uvicorn.Config(app, host=host, port=port, log_level=log_level, ws="none",
                            lifespan="off", timeout_graceful_shutdown=STOP_GRACE_S,
                            http=http or head_deadline_protocol(), loop="asyncio",
                            workers=1)  # fmt: skip
    # After Config, which (re)configures uvicorn's loggers; a filter added twice is kept once.
    logging.getLogger("uvicorn.error").addFilter(_NO_WEBSOCKET_ADVICE)
    logging.getLogger("uvicorn.error").addFilter(_NO_GRACE_NOTICE)
    logging.getLogger("uvicorn.error").addFilter(_NOT_HTTP_SAID)
    return config


def _depth(value: Any) -> int:
    """How deeply ``value`` nests (a scalar 0, ``[]`` 1), counted without recursion and only
    up to one level past ``MAX_DEPTH``."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, (dict, list)):
            deepest = max(deepest, d)
            if d > MAX_DEPTH:
                break
            stack.extend((c, d + 1) for c in (v.values() if isinstance(v, dict) else v))
    return deepest


def _whole_number(text: str) -> int | float:
    """A JSON integer's value: ``int``, or ``inf`` past the digits Python reads as one."""
    import sys

    limit = sys.get_int_max_str_digits()
    return float(text) if limit and len(text.lstrip("-")) > limit else int(text)


def _once_each(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object's members as a dict, or Refused (400) naming a key it gives twice. Read as
    the last of them, `{"paper": "p002", "paper": "p001"}` started a job of p001, where another
    reader (a proxy's, a log's) takes the first (RFC 8259 §4: names SHOULD be unique; the
    page's JSON.stringify never repeats one; campaign 53a, issue 32)."""
    members: dict[str, Any] = {}
    for key, value in pairs:
        if key in members:
            raise Refused(400, f"the request gives {brief(key)} twice: send it once")
        members[key] = value
    return members


def parse_json(data: bytes) -> Any:
    """A request body's JSON, or Refused (400) for text that is not JSON or nests too deep."""
    deep = Refused(400, f"the request is nested deeper than {MAX_DEPTH} levels")
    # JSON is sent in UTF-8 (RFC 8259 §8.1; application/json has no charset, §11). Python's
    # reader also takes UTF-16 and UTF-32, told by the NULs of the first bytes, and UTF-8 with
    # surrogates: such a body started a job where docs/site.md says it is refused, and where a
    # reader of UTF-8 (a proxy's, a log's) read other text (campaign 62c, issue 32). A UTF-8
    # byte order mark is skipped, as RFC 8259 §8.1 lets a reader do.
    encoding = json.detect_encoding(data)
    if encoding not in ("utf-8", "utf-8-sig"):
        raise Refused(400, f"the request is not JSON in UTF-8 (it reads as "
                           f"{encoding.upper()}): send it in UTF-8")  # fmt: skip
    try:
        text = data.decode("utf-8-sig")
        # An integer longer than Python reads from text (4,300 digits) is read as the float it
        # overflows to, inf, so the request's own check refuses it naming its field; it was
        # "the request is not JSON" (campaign 8).
        body = json.loads(text, parse_int=_whole_number, object_pairs_hook=_once_each)
    except RecursionError:
        raise deep from None
    except UnicodeDecodeError as e:
        # A body in latin-1, `charset=latin-1` or not, was "not JSON", of JSON text (campaign
        # 53a, issue 32). Its offset counts the bytes of the body as sent, a BOM included.
        at = e.start + (3 if encoding == "utf-8-sig" else 0)
        raise Refused(400, f"the request is not JSON in UTF-8 (byte 0x{data[at]:02x} at "
                           f"offset {at}): send it in UTF-8") from None  # fmt: skip
    except ValueError:  # JSONDecodeError
        raise Refused(400, "the request is not JSON") from None
    if _depth(body) > MAX_DEPTH:
        raise deep
    return body


async def read_json(request: Any) -> Any:
    """The request's JSON body, read up to ``MAX_BODY`` bytes (a body sent in chunks announces
    no length: it is cut off there with 413) and within ``BODY_TIMEOUT_S`` (408)."""
    from starlette.requests import ClientDisconnect

    chunks: list[bytes] = []

    async def read() -> None:
        size = 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > MAX_BODY:
                raise Refused(413, f"the request body is too large: the limit is {MAX_BODY} "
                                   "bytes")  # fmt: skip
            chunks.append(chunk)

    try:
        await asyncio.wait_for(read(), BODY_TIMEOUT_S)
    except ClientDisconnect:  # gone before its body was complete: nobody reads the answer
        raise Refused(400, "the client closed the connection before its body ended") from None
    except asyncio.TimeoutError:  # RFC 9110 §15.5.9
        # Each framing's own likely cause: a body sent in chunks has no Content-Length, and
        # one that stopped short was asked about one (campaign 53a, issue 32).
        # A chunk shorter than its size line says takes the bytes after it (the last chunk
        # too) as its own, and waits for the rest as a body without its last chunk does: the
        # words asked only after that last chunk, of a client that had sent it (campaign 62a,
        # issue 32).
        # And a last chunk without the empty line that ends the body after it (and after its
        # trailer fields) is waited for the same way: `0\r\n` sent alone was asked after a
        # last chunk it had just sent (campaign 62c, issue 32).
        why = ("a chunk shorter than its size line says, or a chunked body without its last "
               "chunk, of size 0, or without the empty line after that chunk and its trailer "
               "fields?"
               if "transfer-encoding" in request.headers else
               "a Content-Length longer than the body sent?")  # fmt: skip
        raise Refused(408, f"the request body did not arrive within {BODY_TIMEOUT_S:g} s "
                           f"({why})") from None  # fmt: skip
    if not any(chunks) and not ({"content-length", "transfer-encoding"} & set(request.headers)):
        # A body without either has length 0 (RFC 9112 §6.3; HTTP/1.0 needs Content-Length
        # for one, RFC 1945 §7.2.2), and JSON sent so was answered "the request is not JSON"
        # (campaign 28, issue 32): 411 Length Required (RFC 9110 §15.5.12) says what is
        # missing. The connection closes: what was sent after the head is no request.
        raise Refused(411, "the request has no body: a run request's JSON needs its "
                           "Content-Length (or Transfer-Encoding: chunked)")  # fmt: skip
    if not any(chunks):
        # `Content-Length: 0`, or only the last chunk: "the request is not JSON" (campaign
        # 53a, issue 32) said nothing of a body that was not there.
        raise Refused(400, "the request's body is empty: a run request is a JSON object")
    return parse_json(b"".join(chunks))


def create_app(
    results: Path,
    experiments: Path | None,
    host: str = "127.0.0.1",
    workers: int = 2,
    warn: Callable[[str], None] | None = None,
) -> Any:
    """The ASGI app (Starlette) over the plans in ``experiments`` (None: the plans stored with
    the reproductions under ``results``), writing runs under ``results``: into a
    reproduction's own store where ``results`` holds one of that plan. A reproduction left out
    as damaged is named to ``warn`` (:func:`reproductions`)."""
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.requests import Request as HttpRequest
    from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
    from starlette.routing import Route

    from .page import PAGE

    found = reproductions(results, warn)
    catalog = Catalog([r.plan_folder for r in found] if experiments is None else experiments)
    stores: dict[tuple[str, bool], Path] = {}
    for r in found:
        stores.setdefault((r.plan_id, r.quick), r.folder / "runs")
    engine = Engine(results, workers, stores)
    # Load what the first point needs (SciPy for the CI: ~2 s) now, not on the first request.
    from ccsim.experiment.stats import mean_ci

    mean_ci([1.0, 2.0])
    # anyio, under each of Starlette's streamed answers (plotly.min.js, a job's events),
    # imports its modules at their first use: removed or upgraded after the start (a
    # teacher's `pip install -U` before the lab's first page), the first page and every
    # event stream failed with a traceback until a restart (campaign 40, issue 32). Each of
    # its names is looked up now (a deprecated alias's warning is not the user's), and a task
    # group, as each streamed answer makes, is run once on its asyncio backend (its module is
    # imported by the first).
    import anyio

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        for name in dir(anyio):
            getattr(anyio, name, None)

    async def streamed_once() -> None:
        async with anyio.create_task_group() as tasks:
            tasks.cancel_scope.cancel()

    # Only where no loop runs (the command's case): an app made inside a running loop (a
    # user's own server) cannot start another, and its backend loads at its first answer.
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        anyio.run(streamed_once, backend="asyncio")

    # The page asks for plotly.min.js by plotly's version: the script is kept by the browser
    # for a year, and another plotly (an upgrade) is another address. Kept a day under one
    # address, a tab used the old script for a day after an upgrade (noticed in campaign 27).
    import plotly
    import plotly.offline

    page = PAGE.replace('src="plotly.min.js"', f'src="plotly.min.js?v={plotly.__version__}"')
    # The script itself is read now (4.8 MB, ~10 ms), with the version it is addressed by. Read
    # at the first page, a plotly removed or upgraded after the start (a teacher's `pip install
    # -U` during a lab) answered every page with 500 and a traceback in the log, until a
    # restart; upgraded, the new script went out under the old version's address
    # (campaign 40, issue 32).
    plotly_js = plotly.offline.get_plotlyjs().encode()

    async def index(_: HttpRequest) -> Response:
        # Never shown inside another site's frame (CSP frame-ancestors, W3C CSP Level 2 §7.7;
        # X-Frame-Options, RFC 7034, for browsers before it): framed invisibly under a page's
        # own buttons, the explorer's controls took the user's clicks, and its requests, sent
        # from its own origin, passed every guard above (campaign 26, issue 32).
        return HTMLResponse(page, headers={"Content-Security-Policy": "frame-ancestors 'none'",
                                           "X-Frame-Options": "DENY"})  # fmt: skip

    async def plotly(_: HttpRequest) -> Response:
        script = plotly_js

        async def chunks() -> AsyncIterator[bytes]:
            # Sent PLOTLY_CHUNK bytes at a time, each once the client has taken the last
            # (uvicorn waits for its write buffer to drain between writes). Sent whole, each
            # answer copied all 4.8 MB into its connection's buffer: 150 then 300 clients that
            # stopped reading took the explorer from 145 MB to 1.33 GB, kept after they left;
            # in pieces, 131 to 184 MB (campaign 26, issue 32).
            # Between pieces the loop runs once more: a client that reset its connection (a
            # tab reloaded while the script loads) is seen then, and the pieces left are not
            # written. Written back to back, each went into the dead socket, and asyncio
            # printed "socket.send() raised exception." 68 times (campaign 27, issue 32).
            for i in range(0, len(script), PLOTLY_CHUNK):
                yield script[i : i + PLOTLY_CHUNK]
                await asyncio.sleep(0)

        return StreamingResponse(chunks(), media_type="application/javascript",
                                 headers={"Cache-Control": "max-age=31536000",
                                          "Content-Length": str(len(script))})  # fmt: skip

    async def papers(_: HttpRequest) -> Response:
        return JSONResponse(catalog.describe())

    async def run(request: HttpRequest) -> Response:
        try:
            req = catalog.request(await read_json(request))
        except Refused as e:  # a body cut off at the limit: the rest is not read either
            close = {"Connection": "close"} if e.status in (408, 411, 413) else None
            return JSONResponse({"error": str(e)}, status_code=e.status, headers=close)
        except RequestError as e:
            where = {} if e.index is None else {"x_index": e.index}
            return JSONResponse({"error": str(e), **where}, status_code=400)
        try:
            job = engine.submit(req)
        except Busy as e:  # RFC 6585 §4: too many requests; nothing was started or dropped
            return JSONResponse({"error": str(e)}, status_code=429)
        # The title and the moved settings of the runs this job shows: the page draws them
        # over its points, not those of the controls as they are now.
        return JSONResponse({"job": job.id, "title": req.title(), "changed": req.changed()})

    async def cancel(request: HttpRequest) -> Response:
        ok = engine.cancel(request.path_params["job"])
        if ok is None:
            return JSONResponse({"cancelled": False, "error": "no such job"}, status_code=404)
        # A job that had already ended is not cancelled, and the answer says so; 200 all the
        # same, as the page cancels the last job before each new one, ended or not.
        return JSONResponse({"cancelled": True} if ok else {"cancelled": False, "ended": True})

    async def events(request: HttpRequest) -> Response:
        job = engine.jobs.get(request.path_params["job"])
        if job is None:
            return JSONResponse({"error": "no such job"}, status_code=404)
        if request.method == "HEAD":
            # The headers alone (a link checker, `curl -I`): HEAD is safe (RFC 9110 §9.3.2),
            # but its stream, never read, counted as a reader leaving early and cancelled the
            # job the page was about to read (campaign 20, issue 32).
            head = Response(media_type="text/event-stream",
                            headers={"Cache-Control": "no-cache"})  # fmt: skip
            # Without the "content-length: 0" Starlette gives an empty body: a length sent in
            # answer to HEAD must be the one GET's answer would have (RFC 9110 §8.6), and the
            # stream has none (campaign 33, issue 32).
            del head.headers["content-length"]
            return head
        # Each event carries its id (its place in the job's events, from 1), and an EventSource
        # reconnecting sends the last it read (Last-Event-ID): the stream resumes after it. An
        # event stream ends with its job, and a standard client then reconnects by itself:
        # answered with the whole job again, a finished job's "done" came once a second for as
        # long as the client was open, and a stream cut mid-job began again from its first
        # event (campaign 48a, issue 32). A reconnection after a finished job's last event is
        # answered 204 No Content, the answer that stops the client (WHATWG HTML §9.2.3).
        last = request.headers.get("last-event-id", "").strip()
        start = int(last) if last.isascii() and last.isdigit() and len(last) < 10 else 0
        if start > len(job.events):  # no id of this job's events: from its first
            start = 0
        if job.finished and start and start >= len(job.events):
            return Response(status_code=204)

        async def stream() -> AsyncIterator[str]:
            # The events that arrived since the last write go out as one chunk, and the loop
            # yields to the event loop between chunks, so a client that has left (its tab
            # closed) is seen before the next write. Written event by event, a backlog went into
            # the dead socket in one go, and asyncio logs "socket.send() raised exception." for
            # every write past the fifth to a lost connection.
            # The stream sleeps until the job's thread wakes it (``Job.wakers``), or for
            # READER_IDLE_S to look at its client: it polled every 10 ms, and 200 readers of
            # one job halved the simulation's CPU (campaign 25, issue 32).
            loop = asyncio.get_running_loop()
            changed = asyncio.Event()

            def wake() -> None:  # on the job's thread
                with contextlib.suppress(RuntimeError):  # the loop closed at the explorer's stop
                    loop.call_soon_threadsafe(changed.set)

            i, ended = start, False
            job.readers += 1
            job.read = True
            job.wakers.add(wake)
            try:
                yield f"retry: {READER_RETRY_MS}\n\n"
                written = loop.time()
                while not await request.is_disconnected():
                    changed.clear()  # before reading: an event from here on wakes the wait
                    n = len(job.events)
                    if i < n:
                        yield "".join(
                            f"data: {json.dumps(e)}\nid: {k}\n\n"
                            for k, e in enumerate(job.events[i:n], i + 1)
                        )
                        i, written = n, loop.time()
                    if job.finished and i >= len(job.events):
                        ended = True
                        return
                    if loop.time() - written >= READER_HEARTBEAT_S:
                        yield ":\n\n"  # a comment (WHATWG HTML §9.2.6): no event to the page
                        written = loop.time()
                    with contextlib.suppress(asyncio.TimeoutError):
                        await asyncio.wait_for(changed.wait(),
                                               min(READER_IDLE_S, READER_HEARTBEAT_S))  # fmt: skip
            finally:
                job.wakers.discard(wake)
                # Left early (seen above, or this generator cancelled by Starlette's watch for
                # the client's disconnect): when it was the last reader, nobody reads this
                # job's points any more. Another reader (a second tab on the same job) still
                # does: cancelled at the first to leave, that tab got "cancelled" instead of
                # its points (issue 32). Nor at once: the browser reconnects a cut stream by
                # itself, and the job waits READER_RETURN_S for it.
                job.readers -= 1
                if not ended and job.readers == 0:
                    left = job.left = object()

                    def unless_back() -> None:
                        # Another reader came and left since: its own leaving counts.
                        if job.readers == 0 and job.left is left and not job.finished:
                            # Said in its "cancelled" event: the page that comes back after a
                            # longer cut (a laptop's lid, a tunnel that took 10 s to come
                            # back) runs it again, where it read "cancelled after 0 of 21
                            # runs", a cancel nobody asked for (campaign 34, issue 32).
                            job.reason = (f"no page read its events for {READER_RETURN_S:g} s: "
                                          "the connection to it was lost")  # fmt: skip
                            job.cancel()

                    with contextlib.suppress(RuntimeError):  # the loop closed at the stop
                        loop.call_later(READER_RETURN_S, unless_back)

        # X-Accel-Buffering: behind nginx (a reverse proxy to reach the explorer on a server),
        # whose default buffers an answer before passing it on, the page would see a job's
        # events only at its end; this header asks nginx not to.
        return StreamingResponse(stream(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache",
                                          "X-Accel-Buffering": "no"})  # fmt: skip

    # --host as given passes too, beside its shortest form (the URL printed, which browsers
    # send): `--host ::ffff:127.0.0.1` then `curl http://[::ffff:127.0.0.1]:8765/` got 400
    # "Invalid host header" for the address the user gave (campaign 25, issue 32).
    # The loopback's names pass whatever --host is: an SSH tunnel (`ssh -L 9000:node:8765`,
    # the way to reach an explorer a batch job started on a compute node) or a proxy on the
    # user's machine sends the Host its own side was opened with. ssh listens on 127.0.0.1
    # and ::1 alike, and http://[::1]:9000/ was answered 400 "Invalid host header" where
    # http://localhost:9000/ passed (campaign 42, issue 32). An address literal is never
    # looked up, so it cannot be rebound to another site (the check's purpose).
    given = f"[{host}]" if ":" in host else host
    loopback = ["localhost", "127.0.0.1", "[::1]"]
    hosts = ["*"] if every_address(host) else [url_host(host), given, *loopback]
    if "%" in host:  # curl sends a link-local address's Host without its zone
        hosts.append(url_host(host.partition("%")[0]))
    app = Starlette(
        routes=[
            Route("/", index),
            Route("/plotly.min.js", plotly),
            Route("/api/papers", papers),
            Route("/api/run", run, methods=["POST"]),
            Route("/api/jobs/{job}/events", events),
            Route("/api/jobs/{job}/cancel", cancel, methods=["POST"]),
        ],
        middleware=[
            Middleware(NoSniff),
            Middleware(Framing),
            Middleware(HostCheck, allowed=hosts),
            Middleware(Guard),
        ],
    )
    app.state.engine = engine
    app.state.catalog = catalog
    return app


def every_address(host: str) -> bool:
    """Whether ``host`` is the address of every interface: 0.0.0.0 and ::, and as the system
    reads them, 0, 0.0, :: written out (``--host 0`` listened everywhere, then refused every
    Host but "0", so the machine's own name and addresses got 400)."""
    import ipaddress

    try:
        found = socket.getaddrinfo(host, None, flags=socket.AI_NUMERICHOST)
    except (socket.gaierror, UnicodeError):  # a name, not an address
        return False
    return any(_unspecified(ipaddress.ip_address(str(a[4][0]).split("%")[0])) for a in found)


def _unspecified(address: Any) -> bool:
    """Whether ``address`` stands for every address of its family: 0.0.0.0 and ::, and
    ::ffff:0.0.0.0, 0.0.0.0 mapped into IPv6 (RFC 4291 §2.5.5.2), which Linux binds as every
    IPv4 address: `--host ::ffff:0.0.0.0` listened there and warned so, then refused every Host
    but its own spelling, so the page opened by the machine's address got 400 (campaign 26,
    issue 32)."""
    mapped = getattr(address, "ipv4_mapped", None)
    return bool(address.is_unspecified or (mapped is not None and mapped.is_unspecified))


def listen(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port`` and listening, or ValueError in one line saying why not
    (a port in use, an address this machine does not have). ``serve`` binds it before it says
    where it serves, so a port in use is never announced as served."""
    if not host.strip():
        # The system's words for "" ("Name or service not known") left "--host :" to be
        # read as the error.
        raise ValueError(f"--host {host!r} is empty: give an address to listen on, such as "
                         "127.0.0.1 (this machine only, the default)")  # fmt: skip
    # Every name under "localhost." is this machine's loopback (RFC 6761 §6.3), as browsers
    # resolve it; the system's resolver knows only "localhost" itself (/etc/hosts), so
    # `--host localhost.` and `--host app.localhost` were "not an address" (found by the hosts
    # matrix in Chromium, issue 32).
    lookup = "localhost" if _localhost(host) else host
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            lookup, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
    except socket.gaierror as e:
        advice = _from_url(host)
        if advice is not None:
            raise ValueError(f"--host {host}: {advice}") from None
        raise ValueError(f"--host {host}: not an address to listen on ({e.strerror})") from None
    except UnicodeError as e:  # a label over 63 characters, which the IDNA codec refuses
        raise ValueError(f"--host {brief(host)}: not an address to listen on ({e})") from None
    group = _group_address(str(address[0]))
    if group is not None:
        raise ValueError(f"--host {host}: {group}, which no connection can reach; give an "
                         "address of this machine, such as 127.0.0.1 (this machine only, the "
                         "default)")  # fmt: skip
    sock = socket.socket(family, kind, proto)
    try:
        # As uvicorn does: a restart may bind while the last run's connections are in
        # TIME_WAIT; Linux still refuses a port another socket listens on (EADDRINUSE).
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError as e:
        sock.close()
        if e.errno == errno.EADDRINUSE:
            # An IPv6 address in brackets: "::1:8765" reads as one address, ":::8765" as none.
            where = f"[{host}]" if ":" in host else host
            raise ValueError(f"--port {port}: {where}:{port} is in use (another ccsim explore?); "
                             "choose another port with --port") from None  # fmt: skip
        if family == socket.AF_INET6 and address[3] == 0 and str(address[0]).startswith("fe80"):
            # A link-local address is the same on every interface (RFC 4291 §2.5.6): the
            # system's bare "Invalid argument" said nothing of the interface it needs.
            raise ValueError(f"--host {host}: a link-local address needs its interface, as "
                             f"--host {host}%eth0 (`ip -6 addr` names them)") from None  # fmt: skip
        # A port under 1024 is privileged (Linux: root or CAP_NET_BIND_SERVICE): "Permission
        # denied" alone left the user to guess which permission (noticed in campaign 26).
        why = (": ports under 1024 need root or the CAP_NET_BIND_SERVICE capability; choose "
               "a port from 1024, such as the default 8765"
               if e.errno == errno.EACCES and port < 1024 else "")  # fmt: skip
        raise ValueError(f"--host {host} --port {port}: cannot listen there "
                         f"({e.strerror or e}){why}") from None  # fmt: skip
    unreachable = None if every_address(host) else _no_connection_reaches(sock)
    if unreachable is not None:
        sock.close()
        if _loopback_down():
            # A connection to any of this machine's own addresses goes through lo: with lo
            # down (a fresh network namespace, `unshare -n`) 127.0.0.1 was refused as "a
            # network's broadcast address?", then offered as the address to give instead
            # (campaign 35b, issue 32).
            raise ValueError(f"--host {host}: no connection reaches this address "
                             f"({unreachable}): this machine's loopback interface (lo) is "
                             "down; `ip link set lo up` brings it up")  # fmt: skip
        raise ValueError(f"--host {host}: no connection reaches this address ({unreachable}; a "
                         "network's broadcast address?); give an address of this machine, such "
                         "as 127.0.0.1 (this machine only, the default)")  # fmt: skip
    return sock


def _loopback_down() -> bool:
    """Whether a connection to 127.0.0.1 fails as one to an address no interface has (lo
    down), rather than being refused or taken by whatever listens on its port. (Linux's
    /sys/class/net/lo/flags is no witness: under `unshare -n` it is the outer namespace's.)"""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.settimeout(2.0)
        try:
            probe.connect(("127.0.0.1", 9))  # the discard port: closed on most machines
        except OSError as e:
            return e.errno in (errno.ENETUNREACH, errno.EHOSTUNREACH, errno.EADDRNOTAVAIL)
    return False


def _no_connection_reaches(sock: socket.socket) -> str | None:
    """Why a connection to the listening ``sock``'s own address fails, or None when one gets
    through. Linux binds and listens on a network's broadcast address (127.255.255.255,
    192.0.2.255 on a /24) as on any other, and refuses every connection to it
    (ENETUNREACH): the explorer printed its URL as served. A connection tried at start tells
    such an address from the machine's own without knowing each network's mask (campaign 26,
    issue 32). Only the system's refusals count: a probe that times out says nothing."""
    with socket.socket(sock.family, socket.SOCK_STREAM) as probe:
        probe.settimeout(2.0)
        try:
            probe.connect(sock.getsockname())
        except OSError as e:
            if e.errno in (errno.ENETUNREACH, errno.EHOSTUNREACH, errno.EADDRNOTAVAIL):
                return e.strerror or str(e)
    return None


def _group_address(address: str) -> str | None:
    """What ``address`` is in words when it names a group of hosts rather than one (a
    multicast address, RFC 1112 §4 and RFC 4291 §2.7, or the limited broadcast 255.255.255.255,
    RFC 919 §7), else None. Linux lets a TCP socket bind and listen there, but refuses every
    connection to it (ENETUNREACH: TCP connects one host to one host), so `--host 224.0.0.1`
    printed a URL as served that no browser could open (campaign 26, issue 32)."""
    import ipaddress

    try:
        ip = ipaddress.ip_address(address.split("%")[0])
    except ValueError:
        return None
    ip = getattr(ip, "ipv4_mapped", None) or ip  # ::ffff:224.0.0.1 is bound as 224.0.0.1
    if ip.is_multicast:
        return "a multicast address"
    if ip == ipaddress.IPv4Address("255.255.255.255"):
        return "the broadcast address"
    return None


def _from_url(host: str) -> str | None:
    """What to give instead of a ``--host`` copied from a URL (``[::1]``, ``[::1]:8000``,
    ``http://127.0.0.1:8000/``, ``127.0.0.1:8000``) or with spaces around it, or None when it
    is no such thing. The brackets around an IPv6
    address belong to a URL (RFC 3986 §3.2.2), where they set it apart from the port; the
    system reads the address without them."""
    from urllib.parse import urlsplit

    text = host.strip()
    if "://" in text:
        what = "a URL, not an address"
    elif text.startswith("["):
        what = "the brackets belong in a URL"
        text = "//" + text
    elif re.fullmatch(r"[^:\s]+:[0-9]+", text):
        # "127.0.0.1:8765", copied from the line the explorer prints or from `ss -tln`, was
        # said to be "not an address (Name or service not known)" (campaign 31, issue 32).
        what = "an address and its port"
        text = "//" + text
    elif text and text != host:
        # "127.0.0.1 " (a space copied with it) was said not to be an address, the space unseen
        # in the error line (campaign 31, issue 32).
        return f"spaces around the address; give --host {text}"
    else:
        return None
    try:
        parts = urlsplit(text)
        address, port = parts.hostname, parts.port
    except ValueError:  # an unclosed bracket, a port that is no number
        return None
    if not address:
        return None
    return f"{what}; give --host {address}" + (f" --port {port}" if port else "")


def serve(results: Path, experiments: Path | None, host: str = "127.0.0.1", port: int = 8765,
          workers: int = 2, say: Any = None,
          warn: Callable[[str], None] | None = None) -> None:  # fmt: skip
    """Serve the explorer until interrupted: listen first, then load the plans, then say where
    (and, on an address other machines can reach, warn: only once it listens there). ``say``
    writes that line (default: print, flushed); the command's own names stdout when it cannot
    be written, where uvicorn would fail with "Unable to configure formatter 'default'".
    ``warn`` is told of each reproduction left out as damaged, before that line."""
    import sys

    try:
        asyncio.get_running_loop()
    except RuntimeError:  # none: the server runs its own
        pass
    else:
        # Called from a notebook's cell (its kernel runs a loop in the main thread) or an
        # async function, uvicorn failed after the port was taken with "RuntimeError: Cannot
        # run the event loop while another loop is running" (campaign 61c, issue 32).
        raise RuntimeError(
            "serve: this thread runs an event loop (a notebook's kernel, or an async "
            "function), and the explorer runs its own: start it in a terminal, `ccsim explore "
            f"{results}`, or in a notebook's cell as `!ccsim explore {results}` (the kernel's "
            "interrupt stops it)"
        )
    sock = listen(host, port)
    with sock:
        url, listening, loopback = where_served(host, sock)
        if not loopback and sys.stderr is not None:
            print(f"ccsim explore: warning: listening on {listening}: anyone who can reach "
                  "it can start simulations (only of the plans' figures, with the plans' "
                  "values)", file=sys.stderr)  # fmt: skip
        if "%25" in url and sys.stderr is not None:
            # Chromium and Firefox refuse a URL whose IPv6 address names its interface (RFC
            # 6874's zone, "%25eth0": "invalid URL"), so the URL said for a link-local address
            # opens in curl but in no browser (found by the hosts matrix in Chromium, issue 32).
            print(f"ccsim explore: warning: browsers refuse a URL that names an interface "
                  f"({url}); curl opens it. For a browser, listen on an address without one "
                  "(127.0.0.1 or ::1 on this machine, or a global address)",
                  file=sys.stderr)  # fmt: skip
        app = create_app(results, experiments, host, workers, warn)
        try:
            # uvicorn imports its HTTP protocol only as its server starts, after the URL was
            # said: with h11 missing or failing to load, the explorer said where it served,
            # then failed, as a port in use once did (campaign 26, issue 32). The explorer's
            # protocol (h11's, with a deadline on each request's head) is made here, so what it
            # needs is found before the URL is said. (uvicorn.Config configures its log on
            # stdout: the CLI names a closed stdout before this.)
            protocol = head_deadline_protocol()
            config = uvicorn_config(app, host, port, http=protocol)
            from ccsim.staging import shown_path

            line = (f"ccsim explore: {url} (listening on {listening}; runs stored under "
                    f"{shown_path(f'{results}/')}; Ctrl-C stops)")  # fmt: skip
            said = say or (lambda text: print(text, flush=True))
            server = stopping_server(config, app.state.engine, lambda: said(line))
            server.run(sockets=[sock])
            if server.unsaid is not None:  # stdout could not take the URL: the server stopped
                raise server.unsaid
        finally:
            # Stopped (Ctrl-C, SIGTERM, SIGHUP): every run stops within one progress report, so the
            # server's threads do not hold the process for the rest of a long run.
            app.state.engine.close()


#: At most one warning about the limit of open files per this many seconds.
OUT_OF_FILES_WARN_S = 10.0


def quiet_when_out_of_files(
    warn: Callable[[str], None], clock: Callable[[], float] | None = None
) -> Callable[[Any, dict[str, Any]], None]:
    """An event-loop exception handler that turns asyncio's report of a connection it could not
    accept for want of file descriptors (EMFILE, ENFILE) into one warning per
    ``OUT_OF_FILES_WARN_S`` seconds, given to ``warn``; every other report goes to the loop's
    default handler.

    Past the limit of open files, Python 3.11's asyncio logs a traceback for each connection
    waiting in the listen queue, and tries again a second later: 300 clients under `ulimit -n
    200` wrote 55,158 tracebacks (22 MB of log) in about 2 s, though the explorer went on
    serving (campaign 24, issue 32). The connections wait in the queue until descriptors are
    free, so a warning saying so is all there is to tell."""
    import time

    now = clock or time.monotonic
    last: list[float] = []

    def handler(loop: Any, context: dict[str, Any]) -> None:
        e = context.get("exception")
        if isinstance(e, OSError) and e.errno in (errno.EMFILE, errno.ENFILE):
            if not last or now() - last[0] >= OUT_OF_FILES_WARN_S:
                last[:] = [now()]
                warn("out of file descriptors (the system's limit of open files): new "
                     "connections wait until some close; `ulimit -n` raises the limit")  # fmt: skip
            return
        if isinstance(e, ValueError) and _retried_accept_on_a_closed_socket(context):
            return
        loop.default_exception_handler(context)

    return handler


def _retried_accept_on_a_closed_socket(context: dict[str, Any]) -> bool:
    """Whether an event loop's report is its retry of accepting (``_start_serving``, which
    asyncio schedules a second after an accept failed for want of descriptors) on a listening
    socket a stop has closed since: asyncio's ``Server.close`` does not cancel that retry,
    which then fails on descriptor -1. A SIGTERM to an explorer out of descriptors printed
    that traceback, once per connection waiting, under its warning (found under load by
    test_explore.py's out-of-descriptors test, stop 63). The server is closing; nothing is
    lost."""
    handle = context.get("handle")
    callback = getattr(handle, "_callback", None)
    args = getattr(handle, "_args", None) or ()
    if getattr(callback, "__name__", None) != "_start_serving" or len(args) < 2:
        return False
    fileno = getattr(args[1], "fileno", None)
    return callable(fileno) and fileno() == -1


def _warn(text: str) -> None:
    """One ``ccsim explore: warning:`` line on stderr (none when stderr is closed)."""
    import sys

    if sys.stderr is not None:
        with contextlib.suppress(OSError):  # a full or closed stderr: nothing else to tell
            print(f"ccsim explore: warning: {text}", file=sys.stderr, flush=True)


def stopping_server(config: Any, engine: Engine, started: Callable[[], None] | None = None) -> Any:
    """A uvicorn server that stops on SIGHUP as on SIGINT and SIGTERM, and that cancels the
    explorer's jobs as soon as it is told to stop; ``started`` is called (to say the URL) once
    it serves, with its signal handlers in place.

    Said before ``run`` made its event loop, the URL invited a Ctrl-C that came while the loop
    was being made: "coroutine ... was never awaited" (1 start in 12 stopped at once), or under
    load an asyncio traceback from a loop half made (campaign 30, issue 32). When ``started``
    raises (stdout cannot take the line), the server stops and the error is kept in
    ``unsaid`` for the caller to raise.

    SIGHUP (the terminal closed, ``kill -HUP``) is one of the CLI's stop signals
    (``cli.STOP_SIGNALS``), but uvicorn handles only SIGINT and SIGTERM: the CLI's handler
    raised KeyboardInterrupt wherever the event loop was, and a job's open event stream printed
    a 30-line traceback above ccsim's line (campaign 8, issue 32). Captured here, it shuts the
    server down as the other two do; uvicorn raises it again once it has stopped, and the CLI
    ends with its line and status 129. Of several signals, the first is raised again.

    uvicorn's shutdown waits for every open response to end, and a job's event stream ends
    only with its job: SIGINT or SIGTERM with a page watching a minutes-long run kept the
    explorer up until the run was done (campaign 8). The jobs are cancelled at the signal, so
    every run stops within one progress report and each stream ends with its "cancelled"
    event. Cancelled from a thread: the signal handler runs on the main thread, which may be
    holding the engine's lock at that moment.
    """
    import signal
    import threading
    from contextlib import contextmanager

    import uvicorn

    class Stopping(uvicorn.Server):  # type: ignore[misc]
        unsaid: BaseException | None = None

        def run(self, sockets: Any = None) -> None:
            # uvicorn makes serve's coroutine, then asyncio's event loop to run it: a stop
            # signal while that loop is made (seconds into a start on a loaded machine, before
            # the URL is said) raised before the coroutine ever ran, and Python printed
            # "ccsim: warning: coroutine 'stopping_server.<locals>.Stopping.serve' was never
            # awaited" above ccsim's "interrupted" line (campaign 63a, issue 32). Each one
            # made is closed once run ends (a coroutine that ran is closed already).
            made: list[Any] = []
            serve = self.serve

            def serving(*args: Any, **kwargs: Any) -> Any:
                made.append(serve(*args, **kwargs))
                return made[-1]

            self.serve = serving  # type: ignore[method-assign]
            try:
                super().run(sockets=sockets)
            finally:
                del self.serve
                for coroutine in made:
                    coroutine.close()

        async def serve(self, sockets: Any = None) -> None:
            asyncio.get_running_loop().set_exception_handler(quiet_when_out_of_files(_warn))
            await super().serve(sockets)

        async def startup(self, sockets: Any = None) -> None:
            await super().startup(sockets)
            if started is not None and self.started and not self.should_exit:
                try:
                    started()
                except Exception as e:  # raised again by the caller, once stopped
                    self.unsaid = e
                    self.should_exit = True

        async def shutdown(self, sockets: Any = None) -> None:
            await super().shutdown(sockets)
            # Past the grace, uvicorn cancels the requests still running, and a cancelled
            # request whose answer had not begun sends a 500 in its place: behind an answer
            # its client does not read (requests pipelined by a script that then hung), that
            # 500 waits for the buffers to drain, and asyncio's exit waited for it for ever,
            # SIGTERM or not (campaign 48a, issue 32). Their connections are cut now: a
            # connection lost ends every wait for its buffers.
            for connection in list(self.server_state.connections):
                with contextlib.suppress(Exception):
                    connection.transport.abort()

        def handle_exit(self, sig: int, frame: Any) -> None:
            super().handle_exit(sig, frame)
            # uvicorn raises each signal it caught again once it has stopped, the last
            # first: SIGTERM then SIGHUP was reported as "interrupted by SIGHUP", status
            # 129 (campaign 9, issue 32). The CLI reports the first it sees, so only the
            # first received is raised again.
            captured = getattr(self, "_captured_signals", None)
            if isinstance(captured, list):
                del captured[1:]
            threading.Thread(target=engine.close, daemon=True).start()

        @contextmanager
        def capture_signals(self) -> Any:
            # uvicorn's own (SIGINT, SIGTERM) restores their handlers on leaving, then raises
            # each signal it caught again: SIGHUP's handler must be back by then, so it is set
            # inside uvicorn's and restored before it ends.
            # A signal ignored when the explorer started stays ignored (`nohup ccsim explore`:
            # SIGHUP; see ccsim.__main__): uvicorn sets its handlers regardless, so they are
            # put back to SIG_IGN inside its block (campaign 12, issue 32).
            main_thread = threading.current_thread() is threading.main_thread()
            stops = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
            ignored = [s for s in stops if main_thread and signal.getsignal(s) is signal.SIG_IGN]
            with super().capture_signals():
                if not main_thread:
                    yield
                    return
                for s in ignored:
                    signal.signal(s, signal.SIG_IGN)
                if signal.SIGHUP in ignored:
                    yield
                    return
                previous = signal.signal(signal.SIGHUP, self.handle_exit)
                try:
                    yield
                finally:
                    signal.signal(signal.SIGHUP, previous)

    return Stopping(config)


def where_served(host: str, sock: socket.socket) -> tuple[str, str, bool]:
    """For the explorer listening on ``sock`` (bound for ``--host host``): the URL a browser
    on this machine opens, the addresses it listens on in words, and whether they are all
    loopback ones. Bound to every address (0.0.0.0, ::), the URL names the loopback address of
    that family: ``http://[::]:8765/`` and ``http://0.0.0.0:8765/`` are no address a browser
    can connect to (Firefox refuses both, Chrome blocks 0.0.0.0)."""
    import ipaddress

    bound, port = str(sock.getsockname()[0]), sock.getsockname()[1]
    address = ipaddress.ip_address(bound.split("%")[0])
    if _unspecified(address):
        if address.version == 4 or not address.is_unspecified:  # 0.0.0.0, or it mapped
            return f"http://127.0.0.1:{port}/", f"every IPv4 address ({bound})", False
        v6only = sock.getsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY)
        also = "" if v6only else " and every IPv4 address"
        return f"http://[::1]:{port}/", f"every IPv6 address (::){also}", False
    # "localhost" is resolved by the browser itself, not as the system resolves it here
    # (RFC 6761 §6.3; Chromium and Firefox try ::1 first): `--host localhost` bound to
    # 127.0.0.1 printed http://localhost:PORT/, which opened whatever else listened on
    # [::1]:PORT, such as a second explorer (campaign 35b, issue 32). The URL names the
    # address listened on.
    named = url_host(bound) if _localhost(host) else url_host(host)
    # An address is said once (as bound); a name, with the address it stands for.
    where = bound if _numeric(host) is not None else f"{bound} ({host})"
    mapped = getattr(address, "ipv4_mapped", None)  # ::ffff:127.0.0.1 is loopback too
    return (
        f"http://{named}:{port}/",
        where,
        address.is_loopback or bool(mapped and mapped.is_loopback),
    )


def _localhost(host: str) -> bool:
    """Whether ``host`` is a name of this machine's loopback that browsers resolve on their
    own (RFC 6761 §6.3: "localhost" and names under ".localhost")."""
    name = host.lower().removesuffix(".")
    return name == "localhost" or name.endswith(".localhost")


def url_host(host: str) -> str:
    """``--host`` as a browser writes it in a URL and sends it back in the Host header: an
    address in its shortest form, an IPv6 one in brackets (RFC 3986 §3.2.2: "[::1]:8765"),
    its zone as ``%25eth0`` (RFC 6874 §2); a name as given."""
    address = _numeric(host)
    if address is None:
        return host
    if address.version == 4:
        return str(address)
    return "[" + str(address).replace("%", "%25") + "]"


def _numeric(host: str) -> Any:
    """The address ``host`` writes (``ipaddress``'s, as the system reads it: "127.1" is
    127.0.0.1), or None for a name (or no address at all: ``listen`` refuses it)."""
    import ipaddress

    try:
        found = str(socket.getaddrinfo(host, None, flags=socket.AI_NUMERICHOST)[0][4][0])
        # The system gives a link-local address's zone apart (its interface's number); kept,
        # the URL names it (RFC 6874): without it, http://[fe80::1]:8765/ after
        # `--host fe80::1%eth0` reached nothing ("Invalid argument", campaign 27, issue 32).
        zone = host.partition("%")[2]
        return ipaddress.ip_address(f"{found}%{zone}" if zone and ":" in found else found)
    except (socket.gaierror, UnicodeError, ValueError):
        return None
