# SPDX-License-Identifier: MIT
"""Run results as pandas DataFrames, with Parquet round trips.

Tables (column names carry their unit):

- ``flows``: one row per flow (a short-flow generator adds one row per transfer);
- ``links``: one row per link direction;
- ``series``: the time series in long form, ``time_s, kind, name, metric, value``;
- ``classes``: one row per DiffServ class of a link direction with class-based queueing
  (offered, accepted, sent, drops by reason: tail, early, police; ECN marks);
- ``pings``: one row per echo request of a ping probe (``rtt_s`` NaN when unanswered;
  ``counted`` 1 when it counts for the loss ratio).
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
# Tables a run may leave empty; files written before they existed lack them.
OPTIONAL_TABLES = ("classes", "pings")

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


class Result:
    """The tables of one run.

    Attributes
    ----------
    flows, links, series, classes, pings
        pandas DataFrames (``classes`` and ``pings`` empty when the run has no class-based
        queue or ping probe).
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
        classes: pd.DataFrame | None = None,
        pings: pd.DataFrame | None = None,
    ) -> None:
        import pandas as pd

        self.flows = flows
        self.links = links
        self.series = series
        self.classes = classes if classes is not None else pd.DataFrame()
        self.pings = pings if pings is not None else pd.DataFrame()
        self.summary = summary
        self.resolved_toml = resolved_toml

    @classmethod
    def _from_raw(cls, raw: dict[str, Any]) -> Result:
        import pandas as pd

        names = [*TABLES, *(n for n in OPTIONAL_TABLES if n in raw)]
        frames = {name: pd.DataFrame(raw[name]) for name in names}
        return cls(
            frames["flows"],
            frames["links"],
            frames["series"],
            Summary(**raw["summary"]),
            raw["resolved_toml"],
            classes=frames.get("classes"),
            pings=frames.get("pings"),
        )

    def to_parquet(self, directory: PathLike) -> Path:
        """Write ``flows.parquet``, ``links.parquet``, ``series.parquet`` (and ``classes.parquet``,
        ``pings.parquet`` when the run has them) and the resolved ``scenario.toml`` into
        ``directory`` (created if needed); returns the directory.

        The summary travels in the schema metadata of ``flows.parquet``, so
        ``Result.from_parquet`` gets it back.
        """
        import pyarrow as pa
        import pyarrow.parquet as pq

        d = Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        # ``classes`` and ``pings`` only when the run has them, so a run without DiffServ or
        # ping writes the same files as before.
        names = [*TABLES, *(n for n in OPTIONAL_TABLES if len(getattr(self, n)))]
        for name in names:
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
        for name in OPTIONAL_TABLES:
            if (d / f"{name}.parquet").exists():
                frames[name] = pd.read_parquet(d / f"{name}.parquet")
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
            classes=frames.get("classes"),
            pings=frames.get("pings"),
        )

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
