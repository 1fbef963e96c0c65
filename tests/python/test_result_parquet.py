# SPDX-License-Identifier: MIT
"""``Result.to_parquet`` writes the core's columns without pandas (issue 11: the pandas import
was most of a short ``ccsim run``). The files must stay what ``pyarrow.Table.from_pandas`` wrote
before, byte for byte, so readers and the sweep's stored runs see no difference."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import ccsim
from ccsim.cli import summary_text
from ccsim.result import TABLES, Result

ROOT = Path(__file__).resolve().parents[2]

# P1 has no time series (an empty table, whose text columns pandas makes float64); the examples
# have series, short flows (dumbbell) and hooks.
SCENARIOS = [
    ROOT / "python" / "ccsim" / "benchmarks" / "p1.toml",
    ROOT / "examples" / "random-loss.toml",
    ROOT / "examples" / "dumbbell.toml",
]


def through_pandas(res: Result) -> Result:
    """The same result with every table a DataFrame: the path ``to_parquet`` took before."""
    return Result(
        res.flows,
        res.links,
        res.series,
        res.summary,
        res.resolved_toml,
        paths=res.paths,
        agents=res.agents,
        packets=res.packets,
        classes=res.classes,
        pings=res.pings,
        atm_vcs=res.atm_vcs,
        atm_ports=res.atm_ports,
    )


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_parquet_files_written_without_pandas_are_the_bytes_pandas_wrote(
    path: Path, tmp_path: Path
) -> None:
    sc = ccsim.Scenario.from_toml(path).set("duration", "3s")
    res = ccsim.run(sc, seed=3)
    res.to_parquet(tmp_path / "raw")
    assert not any(name in res._frames for name in TABLES), "a table became a DataFrame"
    through_pandas(res).to_parquet(tmp_path / "pandas")
    written = sorted(f.name for f in (tmp_path / "raw").iterdir())
    assert written == sorted(f.name for f in (tmp_path / "pandas").iterdir())
    for name in (n for n in TABLES if f"{n}.parquet" in written):
        raw = (tmp_path / "raw" / f"{name}.parquet").read_bytes()
        via_pandas = (tmp_path / "pandas" / f"{name}.parquet").read_bytes()
        assert raw == via_pandas, name


def test_the_printed_summary_is_the_same_from_columns_and_from_dataframes() -> None:
    sc = ccsim.Scenario.from_toml(ROOT / "examples" / "dumbbell.toml").set("duration", "3s")
    res = ccsim.run(sc, seed=1)
    text = summary_text(res)
    assert "goodput Mb/s" in text and "util" in text
    assert summary_text(through_pandas(res)) == text


def test_tables_written_without_pandas_read_back_as_the_same_dataframes(tmp_path: Path) -> None:
    res = ccsim.run(SCENARIOS[1], seed=2)
    res.to_parquet(tmp_path)
    back = Result.from_parquet(tmp_path)
    for name in TABLES:
        if (tmp_path / f"{name}.parquet").exists():
            pd.testing.assert_frame_equal(getattr(back, name), getattr(res, name))
        else:  # an optional table the run left empty
            assert getattr(back, name).empty and getattr(res, name).empty, name
    assert back.summary == res.summary


@pytest.mark.parametrize("spoil", ["fifo", "cut", "folder", "not-utf8-scenario", "fifo-scenario"])
def test_reading_back_a_damaged_results_folder_names_the_file_and_never_blocks(
    spoil: str, tmp_path: Path
) -> None:
    # Campaign 13: a FIFO as links.parquet was "FileNotFoundError" of a file that is there
    # (pyarrow's), a table cut short pyarrow's ArrowInvalid, a scenario.toml not UTF-8 a bare
    # UnicodeDecodeError naming no file, and a FIFO as scenario.toml waited for ever.
    import os

    out = ccsim.run(ROOT / "examples" / "random-loss.toml", overrides=['duration="1s"'])
    d = out.to_parquet(tmp_path / "res")
    table, scenario = d / "links.parquet", d / "scenario.toml"
    if spoil == "fifo":
        table.unlink()
        os.mkfifo(table)
    elif spoil == "cut":
        table.write_bytes(table.read_bytes()[:100])
    elif spoil == "folder":
        table.unlink()
        table.mkdir()
    elif spoil == "not-utf8-scenario":
        scenario.write_bytes(b'duration = "1s" # caf\xe9\n')
    else:
        scenario.unlink()
        os.mkfifo(scenario)
    named = scenario if spoil.endswith("scenario") else table
    with pytest.raises((ValueError, ccsim.Error), match=f"^{named}: "):
        Result.from_parquet(d)


@pytest.mark.parametrize(
    ("summary", "said"),
    [
        (b"[1", " is not JSON (Expecting ',' delimiter: line 1 column 3 (char 2))"),
        (b"[1]", " is a JSON list, not an object"),
        (b'{"a": 1}', " lacks stop_reason"),
        (None, ": sim_seconds is 'x', not a number"),
    ],
    ids=["not json", "a list", "other fields", "a field of another type"],
)
def test_a_run_summary_in_the_tables_metadata_that_is_not_one_is_refused_naming_the_file(
    summary: bytes | None, said: str, tmp_path: Path
) -> None:
    # Campaign 22 (issue 32): flows.parquet's summary metadata edited or written by another
    # program was a bare JSONDecodeError or "Summary.__init__() missing 13 required positional
    # arguments", naming no file, and a field of another type was taken ("x" seconds).
    import json

    import pyarrow.parquet as pq

    from ccsim.result import SUMMARY_KEY

    out = ccsim.run(ROOT / "examples" / "random-loss.toml", overrides=['duration="1s"'])
    d = out.to_parquet(tmp_path / "res")
    flows = pq.read_table(d / "flows.parquet")
    meta = dict(flows.schema.metadata)
    if summary is None:
        summary = json.dumps({**json.loads(meta[SUMMARY_KEY]), "sim_seconds": "x"}).encode()
    meta[SUMMARY_KEY] = summary
    pq.write_table(flows.replace_schema_metadata(meta), d / "flows.parquet")
    with pytest.raises(ValueError) as refused:
        Result.from_parquet(d)
    assert (
        str(refused.value)
        == f"{d / 'flows.parquet'}: its run summary (metadata ccsim.summary){said}"
    )


def test_a_result_written_over_another_keeps_none_of_the_other_results_tables(
    tmp_path: Path,
) -> None:
    # A packet trace written by an earlier result stayed beside a later result's tables, and
    # from_parquet read it back as the later run's: 2,811 packets of a run that traced none
    # (campaign 16's note, issue 32). The folder is now staged as `ccsim run --out` stages it.
    sc = ccsim.Scenario.from_toml(ROOT / "examples" / "dumbbell.toml").set("duration", "200ms")
    traced = ccsim.run(sc.set("trace.packets", {}))
    plain = ccsim.run(sc)
    assert len(traced.packets) > 0 and len(plain.packets) == 0
    out = tmp_path / "run"
    traced.to_parquet(out)
    assert plain.to_parquet(out) == out
    back = Result.from_parquet(out)
    assert len(back.packets) == 0
    assert sorted(p.name for p in out.iterdir()) == [
        "flows.parquet", "links.parquet", "scenario.toml", "series.parquet"
    ]  # fmt: skip


def test_a_result_written_to_a_file_path_is_refused_naming_it_and_leaves_nothing(
    tmp_path: Path,
) -> None:
    in_the_way = tmp_path / "run"
    in_the_way.write_text("x")
    res = ccsim.run(ccsim.Scenario.from_toml(SCENARIOS[0]).set("duration", "10ms"))
    with pytest.raises(ValueError, match="run"):
        res.to_parquet(in_the_way)
    assert in_the_way.read_text() == "x"
    assert [p.name for p in tmp_path.iterdir()] == ["run"]  # no hidden folder left behind


def test_reading_tables_from_a_file_or_from_nothing_says_which(tmp_path: Path) -> None:
    # A file was "no such folder of tables", as if nothing were there (noticed in campaign 22,
    # issue 32).
    a_file = tmp_path / "flows.parquet"
    a_file.write_bytes(b"PAR1")
    with pytest.raises(NotADirectoryError, match=r"a file, not a folder of tables") as e:
        Result.from_parquet(a_file)
    assert e.value.filename == str(a_file)
    with pytest.raises(FileNotFoundError, match=r"no such folder of tables"):
        Result.from_parquet(tmp_path / "nothing")


def test_a_result_with_a_long_series_is_shown_in_a_notebook_without_walking_its_rows_in_python(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Bug: the HTML a notebook shows for a Result named the series' metrics by a set() of the
    # column, a Python loop over every row: 5.7 s for a long run's 3.3 million rows, each time
    # the Result was shown (campaign 61c, issue 32). Counted, not timed: the rows the column
    # hands to Python while the HTML is made.
    sc = ccsim.Scenario.from_toml(ROOT / "examples" / "dumbbell.toml")
    res = ccsim.run(sc.with_overrides(["duration=2s", 'trace.interval="1ms"']), seed=1)
    metric = res.series["metric"]
    assert len(metric) > 100_000
    walked = 0
    array_type = type(metric.array)
    walk = array_type.__iter__

    def counted(self: object) -> object:
        nonlocal walked
        for value in walk(self):
            walked += 1
            yield value

    monkeypatch.setattr(array_type, "__iter__", counted)
    html = res._repr_html_()
    assert "metrics: cwnd_bytes, delivered_bytes" in html
    assert walked < 1_000, walked
