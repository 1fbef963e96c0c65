# SPDX-License-Identifier: MIT
"""Run results as pandas DataFrames, with Parquet round trips.

Three tables (column names carry their unit):

- ``flows``: one row per flow (a short-flow generator adds one row per transfer);
- ``links``: one row per link direction;
- ``series``: the time series in long form, ``time_s, kind, name, metric, value``.
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

TABLES = ("flows", "links", "series")

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
    # ATM (paper 000): cells that crossed a link, one per cell per hop, and the cell network's
    # own events (not in ``events``); 0 without an ``[atm]`` section.
    cell_hops: int = 0
    atm_events: int = 0


def pd_empty() -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame()


class Result:
    """The tables of one run.

    Attributes
    ----------
    flows, links, series
        pandas DataFrames.
    atm_vcs, atm_ports
        pandas DataFrames of the ATM layer (one row per ABR VC or CBR source, one per ATM
        link direction); empty without an ``[atm]`` section. Not written by ``to_parquet``.
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
    ) -> None:
        self.flows = flows
        self.links = links
        self.series = series
        self.summary = summary
        self.resolved_toml = resolved_toml
        self.atm_vcs = pd_empty()
        self.atm_ports = pd_empty()

    @classmethod
    def _from_raw(cls, raw: dict[str, Any]) -> Result:
        import pandas as pd

        frames = {name: pd.DataFrame(raw[name]) for name in TABLES}
        res = cls(
            frames["flows"],
            frames["links"],
            frames["series"],
            Summary(**raw["summary"]),
            raw["resolved_toml"],
        )
        res.atm_vcs = pd.DataFrame(raw.get("atm_vcs", {}))
        res.atm_ports = pd.DataFrame(raw.get("atm_ports", {}))
        return res

    def to_parquet(self, directory: PathLike) -> Path:
        """Write ``flows.parquet``, ``links.parquet``, ``series.parquet`` and the resolved
        ``scenario.toml`` into ``directory`` (created if needed); returns the directory.

        The summary travels in the schema metadata of ``flows.parquet``, so
        ``Result.from_parquet`` gets it back.
        """
        import pyarrow as pa
        import pyarrow.parquet as pq

        d = Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        for name in TABLES:
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
        frames = {name: pd.read_parquet(d / f"{name}.parquet") for name in TABLES}
        meta = pq.read_schema(d / "flows.parquet").metadata or {}
        summary = None
        if SUMMARY_KEY in meta:
            known = {f.name for f in dataclasses.fields(Summary)}
            fields = json.loads(meta[SUMMARY_KEY])
            summary = Summary(**{k: v for k, v in fields.items() if k in known})
        toml_path = d / "scenario.toml"
        resolved = toml_path.read_text(encoding="utf-8") if toml_path.exists() else ""
        return cls(frames["flows"], frames["links"], frames["series"], summary, resolved)

    def series_of(self, name: str, metric: str) -> pd.Series:
        """One time series, indexed by time in seconds.

        >>> # res.series_of("f1", "cwnd_bytes").plot()
        """
        import pandas as pd

        s = self.series
        sel = s[(s["name"] == name) & (s["metric"] == metric)]
        return pd.Series(sel["value"].to_numpy(), index=sel["time_s"].to_numpy(), name=metric)

    def __repr__(self) -> str:
        return (
            f"Result(flows={len(self.flows)} rows, links={len(self.links)} rows, "
            f"series={len(self.series)} rows)"
        )
