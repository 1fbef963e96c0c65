# SPDX-License-Identifier: MIT
"""Sweeps and reproductions on a Dask cluster: each run a task, every result stored locally.

::

    this process                         Dask scheduler              workers (any machines)
    ────────────                         ──────────────              ──────────────────────
    runs ─> keys ─> store has it? ─ no ─> submit(runs) ─────────────> _core.run(...) -> records
                          │                                                   │
       store.save(key) <──┴──────── as_completed: records (columns) <─────────┘

The cluster only computes. The process that started the sweep keeps the run store: it submits
the runs the store lacks, receives each record as it finishes and saves it at once, exactly as
the local executor does. So a sweep can start on a laptop, move to a cluster and finish on the
laptop without repeating a point, and an interrupted sweep keeps every finished run.

Records come back through the scheduler to this process as their tasks finish, fetched in the
background, and are released on the cluster as soon as they are saved. Short runs travel in
batches sized to take about ``TASK_TARGET_S`` on a worker (Dask's cost per task is a few
milliseconds, more than a short run), and a few tasks per worker thread are in flight
(``IN_FLIGHT_PER_THREAD``), so no worker waits on the scheduler and neither the scheduler nor
the workers ever hold a whole sweep's results. Beyond a few hundred runs per second the limit
is this process (computing each run's key, receiving, JSON-encoding and writing each record); a
store on a shared file system written by the workers would lift it, at the price of workers
that can write there.

Failures:

- A worker that dies mid-run (killed, out of memory, its machine gone) loses only its task, one
  run (or a batch of short ones, about ``TASK_TARGET_S`` of work): the scheduler gives the task
  to another worker. After ``distributed.scheduler.allowed-failures`` deaths on one task (Dask's
  default is 3) its runs are reported as failed, with their parameters.
- A run the core rejects (a scenario error) fails once and is reported once with its parameters;
  it is not retried (``retries=0``): it would fail the same way everywhere.
- Workers must run the same ccsim version as this process (the store's keys say nothing about
  the simulator's version): that is checked before the first run is submitted.
- The address is tried before anything else, with one deadline, ``CONNECT_TIMEOUT_S``, for
  the connection and Dask's handshake together (:func:`check_scheduler`): an address that is
  not one (``garbage``), a port where nothing listens, a host that does not answer, and a
  server that is not a Dask scheduler (an HTTP server, which never completes the handshake)
  are each one error within that time. Dask's own client waits 30 s for a refused port and
  for ever on a server that is not a scheduler, and a client that failed to start blocks the
  interpreter's exit for twice its timeout; no client is made before the probe succeeds.
- A scheduler lost mid-sweep (killed, its machine gone) raises :class:`SchedulerLost` once the
  client has given up reconnecting (``CONNECT_TIMEOUT_S``); every run that finished before is
  already stored, so the same sweep resumes from them. Dask's own log lines about the lost
  connection are silenced meanwhile: the error says what happened.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import math
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ccsim.running_clock import RunningClock

if TYPE_CHECKING:
    from distributed import Client

#: Tasks kept in flight per worker thread: enough that no worker waits on the scheduler
#: between tasks, few enough that a huge sweep's results never pile up on the cluster.
IN_FLIGHT_PER_THREAD = 4

#: Short runs are sent in batches that take about this long on a worker, so the scheduler's
#: per-task cost (milliseconds) does not dominate runs that take one; the size follows the mean
#: wall time of the runs finished so far, and a run longer than this goes alone.
TASK_TARGET_S = 0.2
MAX_BATCH = 64

#: How long to wait for the first worker to connect before giving up, seconds.
WORKER_WAIT_S = 30.0

#: The deadline for reaching a scheduler, seconds: the TCP connection and Dask's handshake
#: together, and, once connected, how long the client tries to reconnect to a lost scheduler.
#: A scheduler on a LAN or a tunnel answers in milliseconds; a few seconds covers a slow
#: link without leaving the user at 0 % for long.
CONNECT_TIMEOUT_S = 5.0

#: How many times a step that timed out while the process was stopped is tried again
#: (stopped while it reached the scheduler, its deadline ran on: ccsim.running_clock).
_TRIES_AFTER_STOPS = 3


class ClusterError(RuntimeError):
    """The Dask cluster cannot be used: no scheduler at the address, no workers, or workers
    running another ccsim version."""


class ClusterNotInstalled(ClusterError, ImportError):
    """Dask's distributed scheduler is not installed (or fails to load). An ImportError too,
    named ``distributed``: a caller that falls back when an optional package is missing
    (``except ImportError``) caught every missing package but this one, which was a
    RuntimeError alone (the extras matrix, campaign 30, issue 32)."""

    def __init__(self, message: str, name: str) -> None:
        ImportError.__init__(self, message, name=name)  # RuntimeError's takes no name


class SchedulerLost(ClusterError):
    """The scheduler went away during a sweep; the runs that finished before are stored."""

    def __init__(self, address: str) -> None:
        super().__init__(f"the Dask scheduler at {address} was lost")
        self.address = address


class _TlsRefused(Exception):
    """The server at a tls:// address reached did not take up TLS (a tcp:// scheduler)."""


class _Unreachable(Exception):
    """No connection to the address within the time given; the message is the system's last
    reason (``Connection refused``, ``Name or service not known``) or ``no answer``."""


def _check_host_and_port(loc: str) -> None:
    """Refuse, in words of its own, a TCP address's ``HOST:PORT`` part that names no machine
    or no port. Dask's parser quoted Python ("invalid literal for int() with base 10:
    '8786/path'") for a path, a query or an empty port; it took full-width digits (U+FF10 to
    U+FF19, which ``int()`` reads) as port 8786, where ``ccsim explore --port`` refuses them; and an
    empty host or a ``user@`` part was looked up as a name for 4 s, then "name or service not
    known" (campaign 62, issue 32). ValueError: not an address."""
    if loc.startswith("["):  # an IPv6 literal, "[::1]:8786": its colons are not the port's
        host, _, rest = loc[1:].partition("]")
        port_text = rest[1:] if rest.startswith(":") else None
    else:
        host, colon, port_text_or_host = loc.rpartition(":")
        host, port_text = (host, port_text_or_host) if colon else (loc, None)
    if port_text is None:
        return  # Dask's words name the missing port
    if not host:
        raise ValueError("no machine before the port: tcp://HOST:PORT names the scheduler's")
    if not port_text:
        raise ValueError("no port after the ':' (a TCP port is 1 to 65535)")
    if "@" in host:
        raise ValueError(f"a user name ({host.rpartition('@')[0]}@) is no part of a Dask "
                         "address: tcp://HOST:PORT")  # fmt: skip
    if not (port_text.isascii() and port_text.lstrip("-").isdigit()):
        raise ValueError(f"port {port_text!r} is not a number (a TCP port is 1 to 65535; an "
                         "address has no path nor query)")  # fmt: skip


async def _reach(address: str, seconds: float) -> None:
    """For a TCP address (``tcp://``, ``tls://``): open a plain connection to it, retrying
    until ``seconds`` have passed (a scheduler may be starting), else raise
    :class:`_Unreachable` with the system's reason. Dask's own connect retries too, but keeps
    only its last attempt's error, often a timeout cut short by its deadline, so a refused
    port would be told as a timeout one time in three. ValueError: not an address."""
    from distributed.comm.addressing import parse_address, parse_host_port

    scheme, loc = parse_address(address)
    if scheme == "inproc":
        # Said as "the server there did not take up TLS (a tcp:// scheduler does not)", of an
        # address that is no server's (campaign 53, issue 32).
        raise ValueError("inproc:// is Dask's transport inside one process (a LocalCluster's "
                         "of that process), and a command's scheduler is another process: "
                         "name its tcp:// address")  # fmt: skip
    if scheme not in ("tcp", "tls", "ws", "wss"):
        _check_transport(scheme)
        return  # another transport: Dask's connect tells
    _check_host_and_port(loc)
    host, port = parse_host_port(loc)
    if not 1 <= port <= 65535:
        # Not an address: asyncio's OverflowError was taken for bytes from a server, "the
        # address answered, but not as a Dask scheduler" (campaign 13, issue 32).
        raise ValueError(f"port {port} is not a TCP port (1 to 65535)")
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    why = "no answer"
    while loop.time() < deadline:
        try:
            opened = asyncio.open_connection(host, port)
            _, writer = await asyncio.wait_for(opened, deadline - loop.time())
        except (OSError, asyncio.TimeoutError) as e:
            if isinstance(e, OSError) and isinstance(e.errno, int) and e.errno > 0:
                why = os.strerror(e.errno)  # asyncio's text: "Connect call failed (...)"
            elif isinstance(e, OSError) and e.strerror:
                why = e.strerror  # a resolver error: "Name or service not known"
            await asyncio.sleep(min(0.2, max(0.0, deadline - loop.time())))
            continue
        writer.close()
        return
    raise _Unreachable(why)


def _check_transport(scheme: str) -> None:
    """ValueError unless Dask can open connections of ``scheme`` here: its ``ucx`` transport
    without UCX-Py installed failed inside Dask's connect with a TypeError, which read as a
    server that "answered, but not as a Dask scheduler" (campaign 13, issue 32)."""
    from distributed.comm.registry import get_backend

    backend = get_backend(scheme)  # ValueError: an unknown scheme, named with the known ones
    try:
        backend.get_connector()
    except Exception:
        raise ValueError(
            f"Dask's {scheme}:// transport is not available in this installation; a Dask "
            "scheduler's address is usually tcp://HOST:8786"
        ) from None


async def _identity(address: str, connection_args: dict[str, Any]) -> Any:
    """Connect to ``address`` with ``connection_args`` (:func:`_client_security`), do Dask's
    handshake, and ask the server who it is."""
    from distributed.comm import connect

    # Reaching the port gets most of CONNECT_TIMEOUT_S; Dask's connection, handshake and the
    # request get the rest, so a refused port is told apart from a server that is not Dask's.
    # The handshake's share is its own: under one deadline for both steps, a _reach that
    # ended late (a loaded machine) ran into it, and a refused port was told as "connected,
    # but no Dask scheduler answered" (campaign 23, issue 32). A TimeoutError here is the
    # handshake's alone.
    loop = asyncio.get_running_loop()
    deadline = loop.time() + CONNECT_TIMEOUT_S
    await _reach(address, 0.8 * CONNECT_TIMEOUT_S)

    async def handshake() -> Any:
        # With the client's security settings from Dask's configuration, as the client's own
        # connections have them: without, a tls:// scheduler (its certificates set in
        # ~/.config/dask, as a cluster with TLS asks of its users) was refused as one that
        # "answered, but not as a Dask scheduler" (stop 58, issue 32).
        comm = await connect(address, timeout=0.2 * CONNECT_TIMEOUT_S, **connection_args)
        try:
            await comm.write({"op": "identity", "reply": True})
            return await comm.read()
        finally:
            comm.abort()

    left = max(deadline - loop.time(), 0.2 * CONNECT_TIMEOUT_S)
    try:
        return await asyncio.wait_for(handshake(), left)
    except ValueError as e:
        # Tornado's, not an address's: a tls:// client met a server that does not speak TLS
        # ("IOStream is not idle; cannot convert to SSL"), told as "not a Dask scheduler's
        # address" of a scheduler's own address (stop 58, issue 32).
        if address.startswith(("tls://", "wss://")):
            raise _TlsRefused(address) from e
        raise


def _client_security(address: str) -> dict[str, Any]:
    """The connection arguments of a Dask client to ``address`` under Dask's security
    configuration (``distributed.comm.require-encryption``, ``distributed.comm.tls.*``), or
    :class:`ClusterError` where they cannot serve it, said before any connection."""
    from distributed.comm.addressing import parse_address
    from distributed.security import Security

    where = f"--scheduler {address}"
    mend = "the DASK_* variables, the files in ~/.config/dask"
    try:
        scheme = parse_address(address)[0]
    except ValueError:
        return {}  # not an address: the probe says so, in Dask's words
    import dask

    files: dict[str, str] = {}
    for key in ("ca-file", "client.cert", "client.key"):
        # Named, file and key: ssl's own words are "[Errno 2] No such file or directory".
        value = dask.config.get(f"distributed.comm.tls.{key}", None)
        if value is not None and not isinstance(value, str):
            # DASK_..._CA_FILE=5 was "cannot be loaded (argument of type 'int' is not
            # iterable)", a list "is not set" (campaign 53, issue 32).
            raise ClusterError(
                f"{where}: Dask's TLS settings: distributed.comm.tls.{key} is {value!r}, not "
                f"a file's path (or the PEM text itself): mend it ({mend})"
            )
        if isinstance(value, str) and value and "\n" not in value:  # "\n": the PEM itself
            try:
                Path(value).open("rb").close()
            except OSError as e:
                raise ClusterError(
                    f"{where}: Dask's TLS settings: distributed.comm.tls.{key} is {value!r}, "
                    f"which cannot be read ({e.strerror or e}): mend it ({mend})"
                ) from e
            files[key] = value
    _check_tls_files(files, where, mend)
    _check_tls_choices(where, mend)
    try:
        security = _loaded_security(address, where, mend) or Security()
        args: dict[str, Any] = security.get_connection_args("client")
    except (OSError, ValueError, TypeError) as e:  # a certificate file missing or unreadable
        raise ClusterError(
            f"{where}: Dask's TLS settings cannot be loaded ({e}): mend them "
            f"(distributed.comm.tls.*: {mend})"
        ) from e
    if security.require_encryption and scheme != "tls":
        # Dask refused the client's first connection in its own words, and a client left
        # half made printed a traceback 10 s later, as Python ended (stop 58, issue 32).
        raise ClusterError(
            f"{where}: Dask's configuration requires encrypted connections "
            f"(distributed.comm.require-encryption is {security.require_encryption!r}), and "
            f"{scheme}:// is not encrypted: name the scheduler's tls:// address, or mend it "
            f"({mend})"
        )
    if scheme == "tls" and args.get("ssl_context") is None:
        # Dask makes a client's TLS context only from both (security.py, _get_tls_context).
        unset = [f"distributed.comm.tls.{key}" for key in ("ca-file", "client.cert")
                 if not dask.config.get(f"distributed.comm.tls.{key}", None)]  # fmt: skip
        raise ClusterError(
            f"{where}: a tls:// scheduler needs Dask's TLS settings for its clients, and "
            f"{' and '.join(unset) or 'they'} {'is' if len(unset) == 1 else 'are'} not set: "
            "set distributed.comm.tls.ca-file (the authority that signed the scheduler's "
            "certificate), distributed.comm.tls.client.cert and .key (this client's) "
            f"({mend})"
        )
    return args


def _check_tls_choices(where: str, mend: str) -> None:
    """Refuse the TLS choices of Dask's configuration that leave a client no way to connect,
    named: ``distributed.comm.tls.ciphers`` naming no cipher ssl knows was "cannot be loaded
    (('No cipher can be selected.',))", naming nothing; a min-version above the max-version
    passed every check and left no version to speak (campaign 53, issue 32). Dask itself
    names a version it does not support."""
    import ssl

    import dask

    ciphers = dask.config.get("distributed.comm.tls.ciphers", None)
    if ciphers is not None:
        try:
            ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT).set_ciphers(ciphers)
        except (ssl.SSLError, TypeError) as e:
            raise ClusterError(
                f"{where}: Dask's TLS settings: distributed.comm.tls.ciphers is {ciphers!r}, "
                "which names no cipher ssl can use (an OpenSSL cipher list, e.g. "
                f"'ECDHE+AESGCM'): mend it ({mend})"
            ) from e
    low = dask.config.get("distributed.comm.tls.min-version", None)
    high = dask.config.get("distributed.comm.tls.max-version", None)
    numbers = (int, float)
    if isinstance(low, numbers) and isinstance(high, numbers) and low > high:
        raise ClusterError(
            f"{where}: Dask's TLS settings: distributed.comm.tls.min-version is {low!r}, above "
            f"distributed.comm.tls.max-version {high!r}: no TLS version is left; mend them "
            f"({mend})"
        )


class _PassPhraseAsked(Exception):
    """A key that asks for a pass phrase (:func:`_check_tls_files`)."""


def _asked_for_a_pass_phrase() -> bytes:
    raise _PassPhraseAsked


def _check_tls_files(files: dict[str, str], where: str, mend: str) -> None:
    """Load the client's TLS files (``files``: setting under ``distributed.comm.tls`` -> path)
    as Dask will, one at a time, so that a file ssl cannot use is named with its setting.

    Loaded by Dask at once, ssl's words named none: "[SSL] PEM lib" (a certificate or a key
    that is not PEM: which?), "[X509: KEY_VALUES_MISMATCH] key values mismatch" (the key of
    another certificate), "no certificate or crl found" (a CA file without one). A key
    encrypted with a pass phrase, which Dask has no setting for, made OpenSSL ask for it on
    the terminal, twice (ccsim's probe, then Dask's client), a sweep waiting on the prompt;
    without a terminal it was "[Errno 22] Invalid argument" (campaign 53, issue 32)."""
    import ssl

    def refused(key: str, what: str, e: BaseException | None = None,
                cure: str = "mend it") -> ClusterError:  # fmt: skip
        said = f" ({e})" if e is not None else ""
        return ClusterError(f"{where}: Dask's TLS settings: distributed.comm.tls.{key} is "
                            f"{files[key]!r}, {what}{said}: {cure} ({mend})")  # fmt: skip

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    for key in ("ca-file", "client.cert"):
        if key not in files:
            continue
        try:
            # A certificate file holds certificates: read as a CA file, it says whether ssl
            # finds one (the client's own file is read again below, with its key).
            ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT).load_verify_locations(cafile=files[key])
        except ssl.SSLError as e:
            raise refused(key, "which holds no certificate ssl can read (PEM)", e) from e
    if "client.cert" not in files:
        return
    try:
        context.load_cert_chain(files["client.cert"], files.get("client.key"),
                                password=_asked_for_a_pass_phrase)  # fmt: skip
    except _PassPhraseAsked:
        key = "client.key" if "client.key" in files else "client.cert"
        raise refused(key, "a key encrypted with a pass phrase, which Dask cannot be given",
                      cure="name a copy without one there, kept where only you can read it "
                      "(`openssl pkey -in KEY -out PLAIN.key` makes it)") from None  # fmt: skip
    except ssl.SSLError as e:
        if "client.key" not in files:
            raise refused("client.cert", "which holds no private key ssl can read beside its "
                          "certificate, and distributed.comm.tls.client.key is not set",
                          e) from e  # fmt: skip
        if "KEY_VALUES_MISMATCH" in str(e):
            raise refused("client.key", "which is not the key of the certificate "
                          f"distributed.comm.tls.client.cert ({files['client.cert']!r})",
                          ) from e  # fmt: skip
        raise refused("client.key", "which holds no private key ssl can read (PEM)", e) from e


def _loaded_security(address: str, where: str, mend: str) -> Any:
    """The client's security settings from Dask's ``distributed.client.security-loader``, a
    function the user names (a cluster manager's, as Dask Gateway's), as Dask's client calls
    it; None where none is named. A name that cannot be imported was "internal error
    (ImportError): Failed to import `-1` configured at ..." (stop 58, issue 32)."""
    import dask
    from distributed.security import Security
    from distributed.utils import import_term

    term = dask.config.get("distributed.client.security-loader", None)
    if not term:
        return None
    said = f"{where}: Dask's configuration: distributed.client.security-loader is {term!r}"
    if not isinstance(term, str):  # a DASK_* variable's text is read as YAML: -1, a number
        raise ClusterError(f"{said}, not a function's name (module.function): mend it ({mend})")
    try:
        loader = import_term(term)
    except Exception as e:
        raise ClusterError(f"{said}, which cannot be imported ({e}): mend it ({mend})") from e
    if not callable(loader):
        raise ClusterError(f"{said}, which is not a function: mend it ({mend})")
    try:
        security = loader({"address": address})
    except Exception as e:
        raise ClusterError(
            f"{said}, which failed ({type(e).__name__}: {e}): mend the setting or the "
            f"function ({mend})"
        ) from e
    if security is not None and not isinstance(security, Security):
        raise ClusterError(
            f"{said}, which returned a {type(security).__name__}, where Dask takes a "
            f"distributed.Security or None: mend the setting or the function ({mend})"
        )
    return security


def _tls_failure(got: Any, address: str) -> str | None:
    """What went wrong with TLS in the probe's outcome ``got``, in a user's words, or None.
    Dask's own words were "cannot reach a Dask scheduler: tLS certificate does not match.
    Check your security settings. More info at ...", or the closed connection's repr, with
    the cause (an untrusted certificate, a client certificate the scheduler refused, a
    scheduler that speaks TLS to a tcp:// client) nowhere (stop 58, issue 32)."""
    import ssl

    where = "(the DASK_* variables, the files in ~/.config/dask)"
    not_tls = ("the server there did not take up TLS (a tcp:// scheduler does not): name its "
               "tcp:// address")  # fmt: skip
    chain = []
    cause = got if isinstance(got, BaseException) else None
    while cause is not None and len(chain) < 10:
        chain.append(cause)
        cause = cause.__cause__ or cause.__context__
    for e in chain:
        if isinstance(e, _TlsRefused):
            return not_tls
        if isinstance(e, ssl.SSLCertVerificationError):
            return (f"the scheduler's TLS certificate is not trusted ({e.verify_message}): "
                    "distributed.comm.tls.ca-file must name the authority that signed it "
                    f"{where}")  # fmt: skip
        if isinstance(e, ssl.SSLError) and e.reason == "WRONG_VERSION_NUMBER":
            return not_tls  # what came back is not TLS
    if address.startswith("tls://") and any(isinstance(e, OSError) for e in chain):
        # Reached (_reach) and then closed in the handshake: an alert, an EOF. Dask keeps the
        # SSL error's text in its own message (the error itself only sometimes as a cause).
        said = str(got).split(">: ", 1)[-1]
        return (f"the scheduler ended the TLS handshake ({said}): it may not accept this "
                "client's certificate (distributed.comm.tls.client.cert and .key) "
                f"{where}")  # fmt: skip
    if address.startswith("tcp://") and any(isinstance(e, ConnectionResetError) for e in chain):
        return ("the server there reset the connection in Dask's handshake (a tls:// "
                "scheduler does so to a tcp:// client: then name its tls:// address)")  # fmt: skip
    return None


def _probe(address: str, connection_args: dict[str, Any]) -> list[Any]:
    """The scheduler's answer to an ``identity`` request at ``address``, or the exception
    that ended the probe, in a list; empty when neither came within its deadline."""
    outcome: list[Any] = []

    def probe() -> None:
        try:
            reply = asyncio.run(_identity(address, connection_args))
            outcome.append(reply)
        except BaseException as e:  # handed to the caller's thread
            outcome.append(e)

    with _quiet_dask_logs():
        t = threading.Thread(target=probe, name="ccsim-dask-probe", daemon=True)
        t.start()
        t.join(CONNECT_TIMEOUT_S + 2.0)
    return outcome


def check_scheduler(address: str) -> None:
    """Raise :class:`ClusterError` unless a Dask scheduler answers at ``address`` within
    ``CONNECT_TIMEOUT_S`` (connection, handshake and an ``identity`` request together).

    Runs on a thread of its own with its own event loop, so it works whether or not the
    caller has one running (a notebook)."""
    connection_args = _client_security(address)
    for _ in range(_TRIES_AFTER_STOPS):
        with RunningClock() as watch:
            outcome = _probe(address, connection_args)
        if not watch.stopped or (outcome and not isinstance(outcome[0], BaseException)):
            break
    where = f"--scheduler {address}"
    if not outcome or isinstance(outcome[0], (asyncio.TimeoutError, TimeoutError)):
        raise ClusterError(
            f"{where}: connected, but no Dask scheduler answered within {CONNECT_TIMEOUT_S:g} "
            "s: the server there is not one (a Dask scheduler's address is the one `dask "
            "scheduler` prints, tcp://HOST:8786 by default; ws://HOST:PORT for one started "
            "with --protocol ws, which a tcp:// client meets so)"
        )
    got = outcome[0]
    tls_failure = _tls_failure(got, address)
    if tls_failure is not None:
        raise ClusterError(f"{where}: {tls_failure}")
    if isinstance(got, ValueError):  # not an address: no port, an unknown scheme
        raise ClusterError(f"{where}: not a Dask scheduler's address ({got})")
    if address.startswith(("ws://", "wss://")) and isinstance(got, OSError):
        # Reached (_reach), and no WebSocket answer: "cannot reach a Dask scheduler: timed
        # out trying to connect to ws://... after 1 s (tried for 4 s)" of a port that
        # answered, a tcp:// scheduler's (campaign 53, issue 32).
        scheme = address.split("://", 1)[0]
        raise ClusterError(
            f"{where}: connected, but no Dask scheduler answered over {scheme}:// (a "
            "scheduler speaks it only when started with --protocol ws: a tcp:// scheduler "
            "does not; name its tcp:// address)"
        )
    if isinstance(got, (_Unreachable, OSError)):  # refused, unreachable, no such host
        why = str(got)
        raise ClusterError(
            f"{where}: cannot reach a Dask scheduler: {why[:1].lower() + why[1:]} (tried for "
            f"{0.8 * CONNECT_TIMEOUT_S:g} s)"
        )
    if isinstance(got, BaseException):  # the handshake got bytes Dask cannot read
        # The probe's own exception is not quoted: a server that speaks first (SSH's banner)
        # has its bytes read as a frame's length, and Dask's "MemoryError: Unable to allocate
        # 3.07 EiB" would read as if ccsim had run out of memory.
        raise ClusterError(
            f"{where}: the address answered, but not as a Dask scheduler (what it sent is not "
            "Dask's protocol; a Dask scheduler's address is the one `dask scheduler` prints, "
            "tcp://HOST:8786 by default)"
        )
    if not isinstance(got, dict) or got.get("type") != "Scheduler":
        kind = got.get("type") if isinstance(got, dict) else type(got).__name__
        raise ClusterError(f"{where}: the server there is not a Dask scheduler (it is a {kind})")


#: Dask's loggers that report a lost or failed connection with tracebacks of their own.
_DASK_LOGGERS = ("distributed", "tornado")


@contextlib.contextmanager
def _quiet_dask_logs() -> Iterator[None]:
    """Silence Dask's log lines about connections while the block runs: ccsim reports a
    failure itself, in one line."""
    # Dask's configuration gives some of its loggers levels of their own ("distributed.client"
    # among them), so each is raised, not only the parents.
    names = [n for n in list(logging.root.manager.loggerDict)
             if n.split(".")[0] in _DASK_LOGGERS]  # fmt: skip
    loggers = [logging.getLogger(name) for name in {*_DASK_LOGGERS, *names}]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        for lg, level in zip(loggers, levels):
            lg.setLevel(level)


def _this_version() -> str:
    """The ccsim version and engine this process runs."""
    from ccsim import _core

    return f"{_core.__version__} (engine {_core.ENGINE})"


def _worker_version() -> str:
    """On a worker: the ccsim version and engine it would run (or why it cannot). Two builds of
    one version from different sources give different results, and a sweep stores a worker's
    run under this process's engine."""
    try:
        return _this_version()
    except Exception as e:  # reported to the user as the worker's state
        return f"no usable ccsim ({type(e).__name__}: {e})"


def _missing(e: BaseException) -> str:
    """The top-level package a ModuleNotFoundError names, or ""."""
    if isinstance(e, ModuleNotFoundError):
        return (e.name or "").partition(".")[0]
    return ""


def why_not_importable(e: BaseException, own: tuple[str, ...], cure: str) -> str:
    """Why a package whose top-level modules are ``own`` failed to import with ``e``, and
    ``cure`` (the install that brings it), as words after its name. A package it needs missing
    is named: click (distributed's and uvicorn's) missing was "needs Dask's distributed
    scheduler, which is not installed", of a distributed installed (the extras matrix,
    campaign 30, issue 32). Another package's metadata that cannot be read is named with its
    own cure, as no install of this one helps."""
    damaged = None if isinstance(e, ImportError) else damaged_metadata()
    if damaged is not None:
        return f"which cannot be imported: {damaged}"
    mine = users_file_in(e)
    if mine is not None:
        # Dask reads ~/.config/dask/*.yaml (and DASK_CONFIG's folder) as it loads: one that
        # is not YAML was "installed but cannot be imported (A dask config file at '...' is
        # malformed ...): pip install '.[dask]'", an install that changes nothing (campaign
        # 47, issue 32). The file is the user's to mend.
        first = str(e).strip().splitlines()[0].rstrip(":, ")
        return f"which cannot be imported while {mine} is as it is ({first}): mend or remove it"
    if "dask" in own:
        blamed = dask_configuration_in_the_way(e)
        if blamed is not None:
            return f"which cannot be imported with {blamed} ({e}): mend it"
    from ccsim.staging import (
        distribution_left,
        failure_text,
        file_not_as_installed,
        plugin_failing,
        reinstall_cure,
        shadow_cure,
        shadow_words,
    )

    plugin = plugin_failing(e)
    if plugin is not None:
        return plugin
    shadowed = _users_module_in(e)
    if shadowed is not None:
        # A module of the user's named like a package Dask takes when it can import it (lz4,
        # snappy, zstandard, cityhash), a file or a folder without __init__.py: it imports,
        # and Dask failed on it, "installed but cannot be imported (module 'lz4' has no
        # attribute '__version__'): pip install '.[dask]'", an install that changes nothing
        # (campaign 50, issue 32).
        name, shadow = shadowed
        through = "" if name in own else f"loads {name}, which "
        return (f"which {through}is shadowed by {shadow} ({shadow_words(shadow)}): "
                f"{shadow_cure(shadow)}")  # fmt: skip
    missing = _missing(e)

    named = getattr(e, "name", None) or ""  # an ImportError's; a RuntimeError has none
    gone = missing if missing and missing not in own else named.partition(".")[0]
    left = distribution_left(gone) if isinstance(e, ModuleNotFoundError) and gone else None
    if left is not None:
        # Its metadata left, pip takes it as installed: '.[dask]' answered "Requirement
        # already satisfied" and the same line came back (campaign 49, issue 32).
        return (f"which needs {gone}, whose files are gone though its metadata is left, so pip "
                f"takes {left} as installed: pip install --force-reinstall -c constraints.txt "
                f"{left} (from the repository root)")  # fmt: skip
    if missing and missing not in own:
        return f"which needs {missing}, which is not installed: {cure}"
    if isinstance(e, ModuleNotFoundError):
        return f"which is not installed: {cure}"
    damaged_file = file_not_as_installed(e)
    if damaged_file is not None:
        # A file of it (or of a package it loads) cut short or emptied: pip takes its
        # distribution as installed, and '.[dask]' left the file as it was (campaign 51).
        file, dist = damaged_file
        return (f"which is installed but cannot be imported ({failure_text(e)}): "
                f"{reinstall_cure(file, dist)}")  # fmt: skip
    return f"which is installed but cannot be imported ({failure_text(e)}): {cure}"


def _users_module_in(e: BaseException) -> tuple[str, str] | None:
    """The top-level module named by ``e`` (its module name, or quoted in its words as
    Python names a module lacking a name) that is a file or folder of the user's, and that
    file or folder; or None."""
    import re

    from ccsim.staging import shadowing_file

    said = str(e)
    names = [str(getattr(e, "name", None) or ""), *re.findall(r"(?:module|from) '([\w.]+)'", said)]
    for name in dict.fromkeys(n.partition(".")[0] for n in names if n):
        shadow = shadowing_file(name)
        if shadow is not None:
            return name, shadow
    return None


def dask_configuration_in_the_way(e: BaseException) -> str | None:
    """The user's Dask configuration (its DASK_* variables and configuration files, in words)
    when distributed fails to import with it and imports without it (tried in a child with
    none of it); or None. distributed sets up its logging from the configuration as it loads:
    a level it does not know (``logging: {distributed: abc}`` in ~/.config/dask/*.yaml, or
    DASK_LOGGING__DISTRIBUTED=abc) or a log format that is no string was "installed but
    cannot be imported ('ABC'): pip install '.[dask]'", naming nothing, for a cure that
    changes nothing (campaign 47, issue 32)."""
    import subprocess
    import sys
    import tempfile

    if isinstance(e, ImportError):
        return None
    variables = sorted(n for n in os.environ if n.startswith("DASK_"))
    try:
        import dask.config

        folders = [*dask.config.paths, dask.config.PATH]
    except Exception:  # dask itself fails to load: no files of its to look at
        folders = []
    files = sorted({str(f) for d in folders if os.path.isdir(d) for f in Path(d).iterdir()
                    if f.suffix in (".yaml", ".yml", ".json")})  # fmt: skip
    if not variables and not files:
        return None
    with tempfile.TemporaryDirectory() as empty:
        env = {k: v for k, v in os.environ.items() if not k.startswith("DASK_")}
        # Dask's own files are found under HOME and DASK_ROOT_CONFIG, and the installed
        # packages' own (sys.prefix/etc/dask) are not the user's: kept.
        env.update(HOME=empty, DASK_CONFIG=empty, DASK_ROOT_CONFIG=empty)
        try:
            child = subprocess.run([sys.executable, "-c", "import distributed"], env=env,
                                   stdin=subprocess.DEVNULL, capture_output=True,
                                   timeout=120, check=False)  # fmt: skip
        except (OSError, subprocess.SubprocessError):
            return None
    if child.returncode != 0:
        return None  # it fails without the user's configuration too: not the configuration
    user = [f for f in files if not f.startswith(sys.prefix)]
    said = [*(f"{n}={os.environ[n]!r}" for n in variables), *user]
    return f"the Dask configuration of {', '.join(said) or 'this environment'}"


def users_file_in(e: BaseException) -> str | None:
    """A file of the user's (outside every installed distribution and the standard library)
    that exists and that ``e``'s message names in quotes, as configuration a package read as
    it loaded; or None."""
    import re
    import sysconfig

    installed = {Path(sysconfig.get_path(k)).resolve() for k in ("purelib", "platlib", "stdlib")}
    for quoted in re.findall(r"'(/[^'\n]+)'", str(e)):
        path = Path(quoted)
        try:
            if not path.is_file():
                continue
            resolved = path.resolve()
        except OSError:
            continue
        if not any(resolved.is_relative_to(folder) for folder in installed):
            return quoted
    return None


def damaged_metadata() -> str | None:
    """The installed distribution whose metadata cannot be read, in words with its cure, or
    None. Importing distributed reads every installed distribution's name and entry points
    (its plugins are looked up so): one METADATA with a byte that is not UTF-8, or an
    entry_points.txt that does not parse, in any package of the environment (plotly, partd)
    made ``sweep.execute(cluster=)`` raise a bare UnicodeDecodeError naming no file, and
    ``--executor dask`` advise installing Dask again (the extras matrix's state bad-metadata
    and campaign 37, issue 32).

    The cure removes the metadata folder first: pip reads an installed distribution's
    metadata before it replaces it, and ``pip install --force-reinstall NAME``, the cure said
    until stop 61, ended in the same UnicodeDecodeError. The folder's name gives the name and
    version to install again (``six-1.17.0.dist-info``)."""
    import shlex
    from importlib import metadata

    for dist in metadata.distributions():
        try:
            dist.metadata["Name"]
            dist.entry_points  # noqa: B018 (read to see that it parses)
        except Exception as e:
            folder = getattr(dist, "_path", None)  # a PathDistribution's *.dist-info
            if folder is None:
                return (f"the metadata of an installed package cannot be read ({e}): install "
                        "that package again")  # fmt: skip
            name, _, version = Path(str(folder)).name.removesuffix(".dist-info").partition("-")
            wanted = f"{name}=={version}" if version else name
            return (f"the metadata of an installed package cannot be read ({folder}: {e}): "
                    f"remove it and install the package again (rm -r {shlex.quote(str(folder))} "
                    f"&& pip install {shlex.quote(wanted)})")  # fmt: skip
    return None


def check_configuration() -> None:
    """Raise :class:`ClusterError` for a value in Dask's configuration of its client
    (``distributed.comm``, ``distributed.client``, and ``distributed.admin`` and
    ``distributed.diagnostics``, which a client reads too: the user's DASK_* variables and
    ~/.config/dask/*.yaml) that Dask cannot read as the kind its default is: a whole number, a
    duration or a size. Dask reads some of them only once the runs are sent: with
    DASK_DISTRIBUTED__COMM__RETRY__COUNT=abc the sweep waited forever for results that never
    came, printing nothing (campaign 46, issue 32); with
    DASK_DISTRIBUTED__DIAGNOSTICS__COMPUTATIONS__NFRAMES=abc it ended as "internal error
    (TypeError): '<=' not supported between instances of 'str' and 'int'", and with
    DASK_DISTRIBUTED__ADMIN__LOW_LEVEL_LOG_LENGTH=abc its client did not start, naming no
    setting (stop 58's walk over every leaf of Dask's configuration)."""
    import dask
    from dask.utils import parse_bytes, parse_timedelta

    defaults = dask.config.merge(*dask.config.defaults)
    kinds = (("a duration", parse_timedelta), ("a size", parse_bytes))
    for section in ("comm", "client", "admin", "diagnostics"):
        stack = [(f"distributed.{section}", defaults.get("distributed", {}).get(section, {}))]
        while stack:
            where, default = stack.pop()
            if isinstance(default, dict):
                stack.extend((f"{where}.{k}", v) for k, v in default.items())
                continue
            value = dask.config.get(where, default)
            if value == default and type(value) is type(default):
                # Of its type too: 0.0 for retry.count's 0 (DASK_...=1e-400) equals it, and
                # the sweep waited forever on Dask's range(0.0) (campaign 53, issue 32).
                continue
            what = None
            if value is None:
                # null (a YAML file's, DASK_...=None): Dask takes it for "none" where a
                # duration is read (no timeout) and for a log's length (a deque without
                # maxlen), not for a size ("internal error (AttributeError): 'NoneType' object
                # has no attribute 'replace'") or another count: with retry.count the sweep
                # waited forever, with nframes "internal error (TypeError): '<=' not
                # supported between instances of 'NoneType' and 'int'" (campaign 53).
                if isinstance(default, bool) or not isinstance(default, (int, str)):
                    continue
                if where.endswith(("log-length", "max-history")):
                    continue
                what = _kind_of(default, kinds)
                if what in ("a duration", "a text"):
                    continue
            elif isinstance(value, (list, dict)) and isinstance(default, (bool, int, float, str)):
                # A list or a mapping for one value (DASK_...=[], or a YAML file's list):
                # Dask's reading of it failed as "internal error (AttributeError): 'list'
                # object has no attribute 'replace'" or "(TypeError): unhashable type:
                # 'list'" (campaign 53, issue 32).
                what = _kind_of(default, kinds)
            elif isinstance(default, bool):
                continue  # Dask takes any value's truth
            elif isinstance(default, int):
                what = None if isinstance(value, int) and not isinstance(value, bool) else (
                    "a whole number")  # fmt: skip
            elif isinstance(default, str):
                name = _kind_of(default, kinds)
                parse = dict(kinds).get(name)
                try:
                    parsed = parse(value) if parse is not None else None
                except (ValueError, KeyError, TypeError, IndexError, OverflowError):
                    # IndexError: Dask's parse of an empty text ("" for a duration was
                    # "internal error (IndexError): string index out of range", stop 58);
                    # OverflowError: a size of 1e400 (campaign 53).
                    what = name
                else:
                    # A duration past any clock ("1e400s", or 1e400 read as a float's
                    # infinity) is read, and Dask's making it whole was "internal error
                    # (OverflowError): cannot convert float infinity to integer" (campaign
                    # 53, issue 32).
                    if isinstance(parsed, float) and not math.isfinite(parsed):
                        what = name
            if what is not None:
                raise ClusterError(
                    f"Dask's configuration: {where} is {value!r}, not {what} (its default is "
                    f"{default!r}): mend it (the DASK_* variables, the files in ~/.config/dask)"
                )
    # The client's event loop is chosen in a thread of Dask's as the client starts: a value it
    # does not know (DASK_DISTRIBUTED__ADMIN__EVENT_LOOP=nope; uvloop without its module) left
    # a coroutine unawaited in that thread, and "ccsim: warning: coroutine 'LoopRunner.
    # _start_unlocked.<locals>.amain' was never awaited" came above the error (stop 58, issue
    # 32). Asked here, in this thread, before any client: no coroutine is made.
    from distributed.config import get_loop_factory

    try:
        get_loop_factory()
    except (ValueError, RuntimeError) as e:  # RuntimeError: uvloop named, not installed
        where = "distributed.admin.event-loop"
        loop = dask.config.get(where)
        default = defaults.get("distributed", {}).get("admin", {}).get("event-loop")
        said = ("but uvloop is not installed" if loop == "uvloop" else
                "not one of asyncio, tornado, uvloop")  # fmt: skip
        raise ClusterError(
            f"Dask's configuration: {where} is {loop!r}, {said} (its default is {default!r}): "
            "mend it (the DASK_* variables, the files in ~/.config/dask)"
        ) from e


def _kind_of(default: bool | int | float | str, kinds: tuple[tuple[str, Any], ...]) -> str:
    """The kind of value a leaf of Dask's configuration takes, in words, from its default."""
    if isinstance(default, bool):
        return "true or false"
    if isinstance(default, int):
        return "a whole number"
    if isinstance(default, float):
        return "a number"
    for name, parse in kinds:
        try:
            parse(default)
        except (ValueError, KeyError, TypeError):
            continue
        return name
    return "a text"


def connect(target: str | Client) -> tuple[Client, bool]:
    """A client for ``target`` (a scheduler address such as ``tcp://host:8786``, or a client
    the caller made), and whether this module owns it (and must close it)."""
    try:
        from distributed import Client
    except Exception as e:  # an ImportError, or another package's metadata unreadable
        # Reached from the Python API alone (`ccsim sweep --executor dask` checks first), so
        # named by the argument the caller gave (`sweep.execute(..., cluster=)`).
        why = why_not_importable(e, ("distributed",), "pip install 'dask[distributed]'")
        raise ClusterNotInstalled(
            f"cluster={target!r} needs Dask's distributed scheduler, {why}",
            name=_missing(e) or "distributed",
        ) from e
    if isinstance(target, Client):
        return target, False
    check_configuration()
    check_scheduler(target)
    error: OSError | TimeoutError | None = None
    for _ in range(_TRIES_AFTER_STOPS):
        with RunningClock() as watch:
            try:
                return Client(target, set_as_default=False, timeout=CONNECT_TIMEOUT_S), True
            except (OSError, TimeoutError) as e:
                error = e
            except (KeyError, ValueError, TypeError) as e:
                raise _configuration_refused(target, e) from e
        if not watch.stopped:
            break
    # A TimeoutError of its own carries no words: "cannot reach a Dask scheduler ()".
    said = str(error) or f"no answer within {CONNECT_TIMEOUT_S:g} s"
    raise ClusterError(f"--scheduler {target}: cannot reach a Dask scheduler ({said})") from error


def _configuration_refused(target: str, e: Exception) -> ClusterError:
    """The error for Dask's client that could not start with Dask's configuration: a value it
    cannot parse in the user's DASK_* variables or ~/.config/dask/*.yaml
    (DASK_DISTRIBUTED__CLIENT__HEARTBEAT=abc, "5 secs") was "internal error (KeyError):
    'Invalid time unit: abc ...'" (campaign 46, issue 32)."""
    said = e.args[0] if isinstance(e, KeyError) and e.args else e
    _let_go_of_half_made_client(e)
    changed = _changed_settings()
    where = f", where it differs from Dask's defaults: {changed}" if changed else ""
    return ClusterError(
        f"--scheduler {target}: Dask's client cannot start with Dask's configuration "
        f"({said}){where}: mend it (the DASK_* variables, the files in ~/.config/dask)"
    )


def _let_go_of_half_made_client(e: BaseException) -> None:
    """Stop the client whose constructor raised ``e``: left to the garbage collector, its
    ``__del__`` waited 10 s for a loop that had failed, then printed "Exception ignored in:
    <function Client.__del__ ...>" and a traceback as Python ended (stop 58, issue 32)."""
    from distributed import Client

    tb = e.__traceback__
    while tb is not None:
        made = tb.tb_frame.f_locals.get("self")
        if isinstance(made, Client):
            made.status = "closed"  # its close() and __del__ then do nothing
            with contextlib.suppress(Exception):
                made._loop_runner.stop()
            return
        tb = tb.tb_next


def _changed_settings() -> str:
    """The leaves of Dask's ``distributed`` configuration whose values differ from Dask's
    defaults, as ``key=value`` (at most five): where Dask's own error quotes none of them
    ("an integer is required"), what the user set is the place to look."""
    import dask

    defaults = dask.config.merge(*dask.config.defaults).get("distributed", {})
    found: list[str] = []
    stack: list[tuple[str, Any, Any]] = [("distributed", dask.config.get("distributed", {}),
                                          defaults)]  # fmt: skip
    while stack:
        where, value, default = stack.pop()
        if isinstance(value, dict):
            base = default if isinstance(default, dict) else {}
            # A DASK_* variable's key comes with "_" where Dask's own file has "-".
            for k, v in value.items():
                key = k.replace("_", "-") if k.replace("_", "-") in base else k
                stack.append((f"{where}.{key}", v, base.get(key)))
        elif value != default:
            found.append(f"{where}={value!r}")
    found.sort()
    return ", ".join(found[:5]) + (f" and {len(found) - 5} more" if len(found) > 5 else "")


def check_workers(client: Client) -> int:
    """Wait for at least one worker; check that every worker runs this ccsim version, built
    from the same sources. Returns the number of threads the cluster offers."""
    error: TimeoutError | None = None
    for tried in range(1, _TRIES_AFTER_STOPS + 1):
        with RunningClock() as watch:
            try:
                client.wait_for_workers(1, timeout=WORKER_WAIT_S)
                break
            except TimeoutError as e:
                error = e
        if not watch.stopped or tried == _TRIES_AFTER_STOPS:
            raise ClusterError(
                f"no Dask worker connected to {client.scheduler.address} within "
                f"{WORKER_WAIT_S:.0f} s: start some with `dask worker {client.scheduler.address}`"
            ) from error
    versions = client.run(_worker_version)
    ours = _this_version()
    wrong = {w: v for w, v in versions.items() if v != ours}
    if wrong:
        listed = ", ".join(f"{w}: {v}" for w, v in sorted(wrong.items()))
        raise ClusterError(
            f"workers must run ccsim {ours}, as this process does; {len(wrong)} do not ({listed})"
        )
    threads = client.nthreads()
    return max(1, sum(threads.values()))


def _run_batch(
    execute_one: Callable[..., dict[str, Any]],
    runs: list[tuple[str, list[str], int]],
    is_run_error: Callable[[BaseException], bool],
) -> list[tuple[bool, Any]]:
    """On a worker: several runs in a row, each ``(True, record)`` or, for a run the core
    refused, ``(False, error)``: one bad run does not take its batch-mates with it."""
    out: list[tuple[bool, Any]] = []
    for text, overrides, seed in runs:
        try:
            out.append((True, execute_one(text, overrides, seed)))
        except Exception as e:
            if not is_run_error(e):
                raise
            out.append((False, e))
    return out


def batch_size(mean_run_s: float | None) -> int:
    """Runs per task: one while nothing is known, then as many as fill ``TASK_TARGET_S``
    (at most ``MAX_BATCH``)."""
    if mean_run_s is None:
        return 1
    return max(1, min(MAX_BATCH, int(TASK_TARGET_S / max(mean_run_s, 1e-6))))


@_quiet_dask_logs()  # a context manager made with contextlib is also a decorator
def run_on_cluster(
    todo: dict[str, Any],
    target: str | Client,
    execute_one: Callable[..., dict[str, Any]],
    on_record: Callable[[str, dict[str, Any]], None],
    on_failure: Callable[[str, BaseException], None],
    is_run_error: Callable[[BaseException], bool],
) -> None:
    """Run every ``RunSpec`` of ``todo`` (key -> run) on the cluster at ``target``.

    ``on_record(key, record)`` is called in this process as each run finishes (the caller saves
    it); ``on_failure(key, error)`` once for a run that failed with an error ``is_run_error``
    accepts (a scenario error, or a run whose workers kept dying). A lost scheduler raises
    :class:`SchedulerLost`. Any other error, and ``KeyboardInterrupt``, cancels what is still
    pending and propagates. Dask's log lines are silenced meanwhile.
    """
    # Connected first: without the extra `dask`, the imports below raised a bare
    # "No module named 'distributed'" before connect() could say what to install (campaign 27,
    # issue 32).
    client, owned = connect(target)
    from distributed import as_completed
    from distributed.client import FutureCancelledError
    from distributed.comm.core import CommClosedError
    from distributed.scheduler import KilledWorker

    address = str(getattr(client.scheduler, "address", target))
    futures: dict[Any, list[str]] = {}
    try:
        in_flight = IN_FLIGHT_PER_THREAD * check_workers(client)
        queue = iter(todo.items())
        # Mean wall time of the runs finished so far, which sets the batch size.
        run_seconds = 0.0
        runs_done = 0

        def submit_next() -> Any | None:
            mean = run_seconds / runs_done if runs_done else None
            batch = list(itertools.islice(queue, batch_size(mean)))
            if not batch:
                return None
            fut = client.submit(
                _run_batch,
                execute_one,
                [(r.text, list(r.overrides), r.seed) for _, r in batch],
                is_run_error,
                # Unique per submission: a key reused from an earlier, failed sweep would hand
                # back that failure instead of running again.
                pure=False,
                retries=0,
            )
            futures[fut] = [k for k, _ in batch]
            return fut

        # Results are fetched in the background as tasks finish (with_results), not by one
        # blocking round trip per task from this thread.
        first = [f for f in (submit_next() for _ in range(in_flight)) if f is not None]
        ac = as_completed(first, loop=client.loop, with_results=True, raise_errors=False)
        for fut, outcome in ac:
            keys = futures.pop(fut)
            if fut.status == "finished":
                for key, (ok, value) in zip(keys, outcome):
                    if ok:
                        run_seconds += float(value["summary"].get("wall_seconds", 0.0))
                        runs_done += 1
                        on_record(key, value)
                    else:
                        on_failure(key, value)
            elif isinstance(outcome, KilledWorker):
                # Its workers kept dying (allowed-failures times): every run of the batch.
                for key in keys:
                    on_failure(key, outcome)
            elif fut.status == "cancelled" or isinstance(
                outcome, (FutureCancelledError, asyncio.CancelledError)
            ):
                # Nothing here cancels a task: the client did, having lost the scheduler and
                # given up reconnecting (its timeout, CONNECT_TIMEOUT_S).
                raise SchedulerLost(address)
            else:
                raise outcome
            fut.release()
            nxt = submit_next()
            if nxt is not None:
                ac.add(nxt)
    except CommClosedError as e:  # a request to the scheduler met a closed connection
        raise SchedulerLost(address) from e
    finally:
        with contextlib.suppress(Exception):  # a lost scheduler cannot be told anything
            if futures and client.status == "running":
                client.cancel(list(futures))
        if owned:
            with contextlib.suppress(Exception):
                client.close(timeout=CONNECT_TIMEOUT_S)
