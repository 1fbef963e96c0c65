# SPDX-License-Identifier: MIT
"""Run results as pandas DataFrames, with Parquet round trips.

Tables (column names carry their unit):

- ``flows``: one row per flow (a short-flow generator adds one row per transfer);
- ``links``: one row per link direction;
- ``series``: the time series in long form, ``time_s, kind, name, metric, value``;
- ``paths``: one row per path of each multipath flow (SCTP); empty without one;
- ``agents``: one row per node hook that counts (SPACK, Snoop, I-TCP): ``node, agent`` and
  its counters (NaN where a row's agent keeps no such counter);
- ``packets``: the per-packet trace of ``[trace] packets`` (``time_ns, where, event, reason,
  flow, kind, seq, ack, payload_bytes, size_bytes, retransmission, ecn, dscp``), empty unless
  the scenario asks for it;
- ``classes``: one row per DiffServ class of a link direction with class-based queueing
  (offered, accepted, sent, drops by reason: tail, early, police; ECN marks); empty without;
- ``pings``: one row per echo request of a ping probe (``rtt_s`` NaN when unanswered;
  ``counted`` 1 when it counts for the loss ratio); empty without.

Each table is a property that turns the core's columns into a DataFrame on first use.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

from ccsim.staging import staged_output, stops_deferred

if TYPE_CHECKING:
    import pandas as pd

# pandas and pyarrow are imported by the methods that use them, not here: ``import ccsim`` (and
# with it ``ccsim validate`` and ``ccsim --help``) would otherwise spend most of its start-up,
# about 0.3 s, loading them (issue 11).

PathLike = Union[str, "os.PathLike[str]"]


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def path_argument(name: str, x: Any) -> Path:
    """``x``, a file or folder given as str or ``os.PathLike``, as a Path, or an error naming
    ``name``: an int was "expected str, bytes or os.PathLike object, not int" naming no
    parameter, and "" became the working directory (the API contract test, issue 32)."""
    if isinstance(x, (bytes, bool)) or not isinstance(x, (str, os.PathLike)):
        raise TypeError(f"{name}: expected a path (str or os.PathLike), not {type(x).__name__} "
                        f"{x!r}")  # fmt: skip
    text = os.fspath(x)
    if not isinstance(text, str):
        raise TypeError(f"{name}: expected a path (str or os.PathLike), not one of bytes")
    if text == "":
        raise ValueError(f"{name}: an empty path; name a file or folder ('.' for this one)")
    if not _encodable(text):
        raise ValueError(f"{name}: {text!r} has a lone surrogate, not a character")
    return Path(text)


def reloaded(name: str, x: Any, cls: type) -> str | None:
    """The error for ``x``, an instance of ``cls`` as it was before its module was reloaded
    (``importlib.reload`` in a notebook), or None when it is not one. Its class has the same
    name and module as ``cls`` but is another object, so ``isinstance`` fails, and the error
    said "scenario: expected a path (str or os.PathLike), not Scenario", as if a Scenario
    were not taken (campaign 61c, issue 32)."""
    t = type(x)
    if t is cls or t.__name__ != cls.__name__ or t.__module__ != cls.__module__:
        return None
    return (f"{name}: this {cls.__name__} was made before {cls.__module__} was reloaded "
            f"(importlib.reload), and is of the class the reload replaced; make it again, "
            "or restart the kernel")  # fmt: skip


TABLES = (
    "flows",
    "links",
    "series",
    "paths",
    "agents",
    "packets",
    "classes",
    "pings",
    "atm_vcs",
    "atm_ports",
)
# Tables written only when they have rows (a run without SCTP flows, agents, a packet trace,
# class-based queues, ping probes or ATM has none), and that a directory written before they
# existed lacks: read back as empty frames.
_OPTIONAL_TABLES = TABLES[3:]

# Key of the run summary (JSON) in the schema metadata of flows.parquet.
SUMMARY_KEY = b"ccsim.summary"


@dataclasses.dataclass(frozen=True)
class Summary:
    """Whole-run figures.

    ``wall_seconds`` covers building the network and the event loop (not Python).
    ``packets_created == packets_delivered + packets_dropped + packets_alive`` always holds.
    """

    stop_reason: str
    sim_seconds: float
    events: int
    wall_seconds: float
    data_packets: int
    data_packets_sent: int
    peak_packets: int
    peak_heap: int
    seed: int
    packets_created: int
    packets_delivered: int
    packets_dropped: int
    packets_alive: int
    #: Packet-trace events past ``[trace] packets.max_rows``: counted, not kept.
    packets_untraced: int = 0
    #: ATM (paper 000): cells that crossed a link, one per cell per hop, and the cell network's
    #: own events (not in ``events``); 0 without an ``[atm]`` section.
    cell_hops: int = 0
    atm_events: int = 0


def _table(name: str, doc: str) -> Any:
    """A ``Result`` property: table ``name`` as a DataFrame, made on first use."""
    return property(
        lambda self: self._frame(name), lambda self, df: self._set_frame(name, df), doc=doc
    )


class Result:
    """The tables of one run.

    Attributes
    ----------
    flows, links, series, paths, agents, packets, classes, pings, atm_vcs, atm_ports
        pandas DataFrames, made from the core's columns on first use (all but the first three
        may have no rows).
    summary
        A ``Summary``; ``None`` only for tables read from files that do not carry one.
    resolved_toml
        The scenario as run (overrides and seed applied).
    """

    def __init__(
        self,
        flows: pd.DataFrame,
        links: pd.DataFrame,
        series: pd.DataFrame,
        summary: Summary | None,
        resolved_toml: str,
        paths: pd.DataFrame | None = None,
        agents: pd.DataFrame | None = None,
        packets: pd.DataFrame | None = None,
        classes: pd.DataFrame | None = None,
        pings: pd.DataFrame | None = None,
        atm_vcs: pd.DataFrame | None = None,
        atm_ports: pd.DataFrame | None = None,
    ) -> None:
        self._frames: dict[str, pd.DataFrame] = {"flows": flows, "links": links, "series": series}
        optional = (
            ("paths", paths),
            ("agents", agents),
            ("packets", packets),
            ("classes", classes),
            ("pings", pings),
            ("atm_vcs", atm_vcs),
            ("atm_ports", atm_ports),
        )
        for name, df in optional:
            if df is not None:
                self._frames[name] = df
        # The core's columns (name -> numpy array or list of str) of the tables not yet turned
        # into DataFrames: `ccsim run` writes them and prints its summary without pandas. An
        # optional table given neither way is empty.
        self._raw: dict[str, dict[str, Any]] = {
            name: {} for name in _OPTIONAL_TABLES if name not in self._frames
        }
        self.summary = summary
        self.resolved_toml = resolved_toml

    @classmethod
    def _from_raw(cls, raw: dict[str, Any]) -> Result:
        res = cls.__new__(cls)
        res._frames = {}
        res._raw = {name: raw.get(name, {}) for name in TABLES}
        res.summary = Summary(**raw["summary"])
        res.resolved_toml = raw["resolved_toml"]
        return res

    def _frame(self, name: str) -> pd.DataFrame:
        if name not in self._frames:
            import pandas as pd

            self._frames[name] = pd.DataFrame(self._raw.pop(name))
        return self._frames[name]

    def _set_frame(self, name: str, df: pd.DataFrame) -> None:
        self._raw.pop(name, None)
        self._frames[name] = df

    def _rows(self, name: str) -> int:
        if name in self._raw:
            return len(next(iter(self._raw[name].values()), ()))
        return len(self._frames[name])

    flows = _table("flows", "One row per flow (a short-flow generator adds one row per transfer).")
    links = _table("links", "One row per link direction.")
    series = _table(
        "series", "The time series in long form: ``time_s, kind, name, metric, value``."
    )
    paths = _table("paths", "One row per path of each multipath (SCTP) flow.")
    agents = _table(
        "agents", "One row per node hook that counts: ``node, agent`` and its counters."
    )
    packets = _table("packets", "The per-packet trace of ``[trace] packets``.")
    atm_vcs = _table("atm_vcs", "ATM: one row per ABR VC and per CBR cell source (``[atm]``).")
    atm_ports = _table("atm_ports", "ATM: one row per ATM link direction (``[atm]``).")
    classes = _table(
        "classes", "One row per DiffServ class of a link direction with class-based queueing."
    )
    pings = _table(
        "pings", "One row per echo request of a ping probe (``rtt_s`` NaN when unanswered)."
    )

    def _columns(self, name: str) -> dict[str, Any]:
        """Table ``name`` as columns (numpy arrays or lists), without pandas when the table
        has not been turned into a DataFrame yet."""
        if name in self._raw:
            return self._raw[name]
        df = self._frames[name]
        return {str(c): df[c].to_numpy() for c in df.columns}

    def to_parquet(self, directory: PathLike) -> Path:
        """Write ``flows.parquet``, ``links.parquet``, ``series.parquet``, the ``paths``,
        ``agents``, ``packets``, ``classes`` and ``pings`` tables when they have rows, and the
        resolved ``scenario.toml`` into ``directory`` (created if needed); returns the directory.

        The summary travels in the schema metadata of ``flows.parquet``, so
        ``Result.from_parquet`` gets it back. A table still held as the core's columns is
        written without pandas, to the same bytes ``pyarrow.Table.from_pandas`` gives
        (``_arrow_table``).

        The directory is written in full or not at all, as ``ccsim run --out`` writes it
        (:func:`ccsim.staging.staged_output`): into a hidden folder renamed into place, so a
        full disk leaves it as it was (a ValueError names the file), a reader never sees half
        of it, and a table an earlier result wrote there and this one lacks (a packet trace)
        is removed, where it was read back as this result's. SIGTERM or SIGHUP arriving
        meanwhile (with their default action) end the process once the directory is in place.
        """
        d = path_argument("directory", directory)
        tables = [f"{t}.parquet" for t in TABLES] + ["scenario.toml"]
        with stops_deferred(), staged_output(d, tables) as stage:
            self._write_tables(stage)
        return d

    def _write_tables(self, d: Path) -> None:
        """The files of :meth:`to_parquet`, written straight into the existing folder ``d``
        (``ccsim run`` writes into its own staged folder)."""
        import pyarrow.parquet as pq

        for name in TABLES:
            if name in _OPTIONAL_TABLES and self._rows(name) == 0:
                continue
            if name in self._raw:
                table = _arrow_table(self._raw[name])
            else:
                import pyarrow as pa

                table = pa.Table.from_pandas(self._frames[name], preserve_index=False)
            if name == "flows" and self.summary is not None:
                meta = dict(table.schema.metadata or {})
                meta[SUMMARY_KEY] = json.dumps(dataclasses.asdict(self.summary)).encode()
                table = table.replace_schema_metadata(meta)
            with naming_the_file(d / f"{name}.parquet"):
                pq.write_table(table, d / f"{name}.parquet")
        with naming_the_file(d / "scenario.toml"):
            (d / "scenario.toml").write_text(self.resolved_toml, encoding="utf-8")

    @classmethod
    def from_parquet(cls, directory: PathLike) -> Result:
        """Read back what ``to_parquet`` wrote.

        ``summary`` is ``None`` when ``flows.parquet`` does not carry one (written by other
        means); ``resolved_toml`` is empty when there is no ``scenario.toml``.
        """
        import pandas as pd
        import pyarrow.parquet as pq

        d = path_argument("directory", directory)
        if d.exists() and not d.is_dir():
            # A file said "no such folder of tables", as if nothing were there (noticed in
            # campaign 22, issue 32).
            raise NotADirectoryError(
                errno.ENOTDIR,
                "directory: a file, not a folder of tables (flows.parquet, ...)",
                str(d),
            )
        if not d.is_dir():
            # A missing folder was "No such file or directory: 'flows.parquet'", naming no
            # folder (the API contract test, issue 32).
            raise FileNotFoundError(errno.ENOENT, "directory: no such folder of tables", str(d))
        frames = {
            name: _read_table_file(d / f"{name}.parquet")
            if name not in _OPTIONAL_TABLES or (d / f"{name}.parquet").exists()
            else pd.DataFrame()
            for name in TABLES
        }
        meta = pq.read_schema((d / "flows.parquet").absolute()).metadata or {}
        summary = None
        if SUMMARY_KEY in meta:
            summary = _summary_of(meta[SUMMARY_KEY], d / "flows.parquet")
        toml_path = d / "scenario.toml"
        resolved = ""
        if toml_path.exists():
            from ccsim.scenario import check_regular, read_text

            try:
                check_regular(toml_path)  # a FIFO waited for a writer for ever
            except ValueError as e:
                raise ValueError(f"{toml_path}: {e}") from None
            resolved = read_text(toml_path)  # not UTF-8: named, not a bare UnicodeDecodeError
        return cls(
            frames["flows"],
            frames["links"],
            frames["series"],
            summary,
            resolved,
            paths=frames["paths"],
            agents=frames["agents"],
            packets=frames["packets"],
            classes=frames["classes"],
            pings=frames["pings"],
            atm_vcs=frames["atm_vcs"],
            atm_ports=frames["atm_ports"],
        )

    def series_of(self, name: str, metric: str) -> pd.Series:
        """One time series, indexed by time in seconds: of a flow (``"f1"``) or a link
        direction (``"bottleneck:a_to_b"``).

        >>> # res.series_of("f1", "cwnd_bytes").plot()

        Raises
        ------
        ValueError
            No series of that name, or none of that metric, naming those there are: a
            misspelled one gave an empty series, a figure with nothing drawn (campaign 10,
            issue 32).
        """
        import pandas as pd

        for arg, value in (("name", name), ("metric", metric)):
            if not isinstance(value, str):  # a dict was pandas' NotImplementedError
                raise TypeError(f"{arg}: expected a string, not {type(value).__name__} "
                                f"{value!r}")  # fmt: skip
            if not value.isascii() and not _encodable(value):  # compared as UTF-8 by arrow
                raise ValueError(f"{arg}: {value!r} has a lone surrogate, not a character")
        s = self.series
        of_name = s[s["name"] == name]
        sel = of_name[of_name["metric"] == metric]
        if sel.empty:
            if s.empty:
                raise ValueError(
                    f"series_of({name!r}, {metric!r}): this run has no series (its scenario "
                    "traces none: [trace] interval)"
                )
            if of_name.empty:
                known = ", ".join(sorted(set(s["name"])))
                raise ValueError(f"series_of: name: no series of {name!r}; series are of {known}")
            known = ", ".join(sorted(set(of_name["metric"])))
            raise ValueError(
                f"series_of: metric: {name!r} has no series {metric!r}; it has {known}"
            )
        return pd.Series(sel["value"].to_numpy(), index=sel["time_s"].to_numpy(), name=metric)

    def _repr_html_(self) -> str:
        """How Jupyter shows a result: the run summary, then the flows and links tables (the
        first 20 rows of each) and the size of the series table."""
        import html

        parts = ["<div><strong>ccsim Result</strong>"]
        if self.summary is not None:
            cells = "".join(
                f"<tr><th style='text-align:left'>{html.escape(k)}</th>"
                f"<td style='text-align:right'>{html.escape(_shown(v))}</td></tr>"
                for k, v in dataclasses.asdict(self.summary).items()
            )
            parts.append(
                f"<details open><summary>summary</summary><table>{cells}</table></details>"
            )
        for name in ("flows", "links"):
            df = getattr(self, name)
            more = f", the first 20 of {len(df)}" if len(df) > 20 else ""
            parts.append(
                f"<details open><summary>{name} ({len(df)} rows{more})</summary>"
                f"{df.head(20).to_html(index=False, float_format=lambda x: f'{x:.6g}')}</details>"
            )
        series = self.series
        # unique(), not set(): a set walks the column in Python, one string at a time, and a
        # long run's series of 3.3 million rows took 5.7 s each time the notebook showed the
        # Result (campaign 61c, issue 32); unique() does it in Arrow's C++ in 0.05 s.
        kinds = ", ".join(sorted(map(str, series["metric"].unique()))) if len(series) else "none"
        parts.append(
            f"<p>series: {len(series)} rows (metrics: {html.escape(kinds)}); "
            "<code>series_of(name, metric)</code> gives one as a pandas Series</p></div>"
        )
        return "".join(parts)

    def __repr__(self) -> str:
        return (
            f"Result(flows={len(self.flows)} rows, links={len(self.links)} rows, "
            f"series={len(self.series)} rows, paths={len(self.paths)} rows, "
            f"agents={len(self.agents)} rows, packets={len(self.packets)} rows)"
        )


def _summary_of(raw: bytes, path: Path) -> Summary:
    """The run summary ``to_parquet`` keeps in ``path``'s metadata, or ValueError naming the
    file: metadata that was not JSON, or JSON of other fields, raised a bare JSONDecodeError or
    "Summary.__init__() missing 13 required positional arguments", naming no file, and a field
    of another type (sim_seconds "x") was taken as it was (campaign 22, issue 32). Fields
    added since (with a default) may be missing; fields unknown to this version are left."""
    where = f"{path}: its run summary (metadata {SUMMARY_KEY.decode()})"
    try:
        fields = json.loads(raw)
    except (ValueError, RecursionError) as e:  # JSONDecodeError, UnicodeDecodeError
        raise ValueError(f"{where} is not JSON ({e})") from None
    if not isinstance(fields, dict):
        raise ValueError(f"{where} is a JSON {type(fields).__name__}, not an object")
    given = {}
    for f in dataclasses.fields(Summary):
        if f.name not in fields:
            if f.default is dataclasses.MISSING:
                raise ValueError(f"{where} lacks {f.name}")
            continue
        v = fields[f.name]
        text = f.name == "stop_reason"
        number = isinstance(v, (int, float)) and not isinstance(v, bool)
        if not (isinstance(v, str) if text else number):
            raise ValueError(f"{where}: {f.name} is {v!r}, not {'text' if text else 'a number'}")
        given[f.name] = v
    return Summary(**given)


def _read_table_file(path: Path) -> pd.DataFrame:
    """A table of a folder ``Result.to_parquet`` wrote, or an error naming its file: a FIFO
    in its place was "FileNotFoundError" of a file that is there (pyarrow's), a file cut short
    pyarrow's ArrowInvalid (campaign 13, issue 32). A missing table is FileNotFoundError."""
    import pandas as pd

    from ccsim.scenario import check_regular

    try:
        check_regular(path)
        return pd.read_parquet(Path(path).absolute())  # pandas expands a leading ~
    except FileNotFoundError:
        raise
    except (OSError, ValueError) as e:  # NotAFile, pyarrow's ArrowInvalid and ArrowIOError
        raise ValueError(f"{path}: not a table ccsim wrote ({e})") from None


@contextlib.contextmanager
def naming_the_file(path: Path) -> Iterator[None]:
    """Give an OSError raised while ``path`` is written that file's name: pyarrow's write
    errors (a full disk: ``[Errno 28] Error writing bytes to file``) and a failed ``write()``
    carry none, so the user saw a bare ``[Errno 28]``. The reason is the system's words for
    the errno (``No space left on device``)."""
    try:
        yield
    except OSError as e:
        if e.filename is not None:
            raise
        reason = os.strerror(e.errno) if e.errno else (e.strerror or str(e))
        raise OSError(e.errno, reason, str(path)) from e


def _shown(v: Any) -> str:
    return f"{v:.6g}" if isinstance(v, float) else str(v)


def _arrow_table(columns: dict[str, Any]) -> Any:
    """The Arrow table ``pyarrow.Table.from_pandas(pandas.DataFrame(columns),
    preserve_index=False)`` gives, built without importing pandas (about 0.3 s of a short
    ``ccsim run``, issue 11).

    The columns are the core's: float64 or int64 (uint64 when a counter does not fit) numpy
    arrays, or lists of str. pandas keeps the numeric dtypes, stores text as its ``str`` dtype
    (Arrow ``large_string``), makes an empty list a float64 column and writes NaN as null; the
    ``pandas`` schema metadata describes each column as ``from_pandas`` does, so
    ``pandas.read_parquet`` gives the same DataFrame back (``tests/python/test_result_parquet.py``
    pins the bytes against pandas's).
    """
    import numpy as np
    import pyarrow as pa

    arrays = []
    described = []
    for name, col in columns.items():
        if isinstance(col, list):
            if col:
                arr = _large_strings(col)
                pandas_type, numpy_type = "object", "str"
            else:
                arr = _numbers(np.empty(0, dtype=np.float64))
                pandas_type = numpy_type = "float64"
        else:
            arr = _numbers(col)
            pandas_type = numpy_type = str(col.dtype)
        arrays.append(arr)
        described.append(
            {
                "name": name,
                "field_name": name,
                "pandas_type": pandas_type,
                "numpy_type": numpy_type,
                "metadata": None,
            }
        )
    pandas_meta = {
        "index_columns": [],
        "column_indexes": [],
        "columns": described,
        "attributes": {},
        "creator": {"library": "pyarrow", "version": pa.__version__},
        "pandas_version": _pandas_version(),
    }
    table = pa.table(arrays, names=list(columns))
    return table.replace_schema_metadata({b"pandas": json.dumps(pandas_meta).encode("utf8")})


def _pandas_version() -> str:
    """pandas' version, from its metadata (pandas is not imported: a run's tables are written
    with pyarrow alone), else from pandas itself: copied onto PYTHONPATH without its dist-info
    folder, pandas imports and sweep and reproduce work with it, and a run went to its end
    before "ccsim needs pandas, which is not installed" (campaign 36, issue 32). Metadata
    that is there but damaged (a byte not UTF-8, its Version line gone) is passed over the
    same way: it failed the run's end with "'utf-8' codec can't decode byte...", naming no
    file, or recorded a null version (campaign 37, issue 32)."""
    from importlib import metadata

    try:
        version = metadata.version("pandas")
    except Exception:
        # Not found, a UnicodeDecodeError, and for a Version line gone: KeyError where the
        # importlib_metadata backport has been imported (it puts its finder first on
        # sys.meta_path, and its distributions raise for a missing field; found by the full
        # suite), or DeprecationWarning under -W error from the standard library's.
        version = None
    if isinstance(version, str) and version:
        return version
    import pandas

    return str(pandas.__version__)


def _numbers(col: Any) -> Any:
    """A numpy float64, int64 or uint64 array as an Arrow array of the same type, NaN as null
    (what ``pyarrow.array(col, from_pandas=True)`` gives)."""
    import numpy as np
    import pyarrow as pa

    arrow_type = {"float64": pa.float64(), "int64": pa.int64(), "uint64": pa.uint64()}[
        str(col.dtype)
    ]
    data = np.ascontiguousarray(col)
    validity = None
    nulls = 0
    if data.dtype.kind == "f":
        valid = ~np.isnan(data)
        nulls = int(len(data) - np.count_nonzero(valid))
        if nulls:
            validity = pa.py_buffer(np.packbits(valid, bitorder="little"))
    return pa.Array.from_buffers(
        arrow_type, len(data), [validity, pa.py_buffer(data)], null_count=nulls
    )


def _large_strings(values: list[str]) -> Any:
    """A list of str as an Arrow ``large_string`` array (64-bit offsets, no nulls)."""
    import numpy as np
    import pyarrow as pa

    encoded = [v.encode("utf-8") for v in values]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(e) for e in encoded], out=offsets[1:])
    return pa.Array.from_buffers(
        pa.large_string(),
        len(encoded),
        [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(encoded))],
    )
