# SPDX-License-Identifier: MIT
"""Run results as pandas DataFrames, with Parquet round trips.

Six tables (column names carry their unit):

- ``flows``: one row per flow (a short-flow generator adds one row per transfer);
- ``links``: one row per link direction;
- ``series``: the time series in long form, ``time_s, kind, name, metric, value``;
- ``paths``: one row per path of each multipath flow (SCTP); empty without one;
- ``agents``: one row per node hook that counts (SPACK, Snoop, I-TCP): ``node, agent`` and
  its counters (NaN where a row's agent keeps no such counter);
- ``packets``: the per-packet trace of ``[trace] packets`` (``time_ns, where, event, reason,
  flow, kind, seq, ack, payload_bytes, size_bytes, retransmission, ecn, dscp``), empty unless
  the scenario asks for it.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

if TYPE_CHECKING:
    import pandas as pd

# pandas and pyarrow are imported by the methods that use them, not here: ``import ccsim`` (and
# with it ``ccsim validate`` and ``ccsim --help``) would otherwise spend most of its start-up,
# about 0.3 s, loading them (issue 11).

PathLike = Union[str, "os.PathLike[str]"]

TABLES = ("flows", "links", "series", "paths", "agents", "packets", "atm_vcs", "atm_ports")
# Tables written only when they have rows (a run without SCTP flows, agents or a packet trace
# has none), and that a directory written before they existed lacks: read back as empty frames.
_OPTIONAL_TABLES = ("paths", "agents", "packets", "atm_vcs", "atm_ports")

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


class Result:
    """The tables of one run.

    Attributes
    ----------
    flows, links, series, paths, agents, packets, atm_vcs, atm_ports
        pandas DataFrames (``paths``, ``agents``, ``packets`` and the ATM tables may have no
        rows).
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
        atm_vcs: pd.DataFrame | None = None,
        atm_ports: pd.DataFrame | None = None,
    ) -> None:
        import pandas as pd

        self.flows = flows
        self.links = links
        self.series = series
        self.paths = paths if paths is not None else pd.DataFrame()
        self.agents = agents if agents is not None else pd.DataFrame()
        self.packets = packets if packets is not None else pd.DataFrame()
        self.atm_vcs = atm_vcs if atm_vcs is not None else pd.DataFrame()
        self.atm_ports = atm_ports if atm_ports is not None else pd.DataFrame()
        self.summary = summary
        self.resolved_toml = resolved_toml

    @classmethod
    def _from_raw(cls, raw: dict[str, Any]) -> Result:
        import pandas as pd

        frames = {name: pd.DataFrame(raw[name]) for name in TABLES}
        return cls(
            frames["flows"],
            frames["links"],
            frames["series"],
            Summary(**raw["summary"]),
            raw["resolved_toml"],
            paths=frames["paths"],
            agents=frames["agents"],
            packets=frames["packets"],
            atm_vcs=frames["atm_vcs"],
            atm_ports=frames["atm_ports"],
        )

    def to_parquet(self, directory: PathLike) -> Path:
        """Write ``flows.parquet``, ``links.parquet``, ``series.parquet``, the ``paths``,
        ``agents`` and ``packets`` tables when they have rows, and the resolved
        ``scenario.toml`` into ``directory`` (created if needed); returns the directory.

        The summary travels in the schema metadata of ``flows.parquet``, so
        ``Result.from_parquet`` gets it back.
        """
        import pyarrow as pa
        import pyarrow.parquet as pq

        d = Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        for name in TABLES:
            if name in _OPTIONAL_TABLES and getattr(self, name).empty:
                continue
            table = pa.Table.from_pandas(getattr(self, name), preserve_index=False)
            if name == "flows" and self.summary is not None:
                meta = dict(table.schema.metadata or {})
                meta[SUMMARY_KEY] = json.dumps(dataclasses.asdict(self.summary)).encode()
                table = table.replace_schema_metadata(meta)
            pq.write_table(table, d / f"{name}.parquet")
        (d / "scenario.toml").write_text(self.resolved_toml, encoding="utf-8")
        return d

    @classmethod
    def from_parquet(cls, directory: PathLike) -> Result:
        """Read back what ``to_parquet`` wrote.

        ``summary`` is ``None`` when ``flows.parquet`` does not carry one (written by other
        means); ``resolved_toml`` is empty when there is no ``scenario.toml``.
        """
        import pandas as pd
        import pyarrow.parquet as pq

        d = Path(directory)
        frames = {
            name: pd.read_parquet(d / f"{name}.parquet")
            if name not in _OPTIONAL_TABLES or (d / f"{name}.parquet").exists()
            else pd.DataFrame()
            for name in TABLES
        }
        meta = pq.read_schema(d / "flows.parquet").metadata or {}
        summary = None
        if SUMMARY_KEY in meta:
            known = {f.name for f in dataclasses.fields(Summary)}
            fields = json.loads(meta[SUMMARY_KEY])
            summary = Summary(**{k: v for k, v in fields.items() if k in known})
        toml_path = d / "scenario.toml"
        resolved = toml_path.read_text(encoding="utf-8") if toml_path.exists() else ""
        return cls(
            frames["flows"],
            frames["links"],
            frames["series"],
            summary,
            resolved,
            paths=frames["paths"],
            agents=frames["agents"],
            packets=frames["packets"],
            atm_vcs=frames["atm_vcs"],
            atm_ports=frames["atm_ports"],
        )

    def series_of(self, name: str, metric: str) -> pd.Series:
        """One time series, indexed by time in seconds.

        >>> # res.series_of("f1", "cwnd_bytes").plot()
        """
        import pandas as pd

        s = self.series
        sel = s[(s["name"] == name) & (s["metric"] == metric)]
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
        kinds = ", ".join(sorted(set(series["metric"]))) if len(series) else "none"
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


def _shown(v: Any) -> str:
    return f"{v:.6g}" if isinstance(v, float) else str(v)
