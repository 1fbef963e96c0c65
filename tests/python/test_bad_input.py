# SPDX-License-Identifier: MIT
"""Bad input through the command line and the Python API (issue 10): every one is a clean,
one-line error that names the option or field, and no input file is ever written over."""

from __future__ import annotations

import argparse
import errno
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import ccsim
from ccsim import cli, sweep
from ccsim.bench import SCALE_DEFAULT
from ccsim.cli import main


def ccsim_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ccsim.cli", *args], capture_output=True, text=True, check=False
    )


def one_error_line(capsys: Any) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith("ccsim: error: "), err
    return str(err[0])


@pytest.mark.parametrize("seed", ["-1", str(2**64), str(2**63)])
def test_an_out_of_range_seed_names_the_option_and_the_range(
    seed: str, examples: Path, tmp_path: Path, capsys: Any
) -> None:
    # Issue 10, defect 4: -1 and 2^64 gave "internal error (OverflowError)".
    args = ["run", str(examples / "random-loss.toml"), "--out", str(tmp_path), "--seed", seed]
    assert main(args) == 1
    line = one_error_line(capsys)
    assert "--seed" in line and "from 0 to 2^63 - 1" in line and "internal" not in line


@pytest.mark.parametrize("seed", [-1, 2**64, True])
def test_the_python_api_refuses_a_bad_seed_as_a_scenario_error_on_seed(
    seed: Any, examples: Path
) -> None:
    sc = ccsim.Scenario.from_toml(examples / "random-loss.toml")
    with pytest.raises(ccsim.ScenarioError, match=r"^seed: ") as e:
        ccsim.run(sc, seed=seed)
    assert e.value.path == "seed"
    with pytest.raises(ccsim.ScenarioError, match=r"^seed: "):
        sc.validate(seed=seed)


def test_a_boolean_seed_in_the_scenario_is_refused(examples: Path, capsys: Any) -> None:
    assert main(["validate", str(examples / "random-loss.toml"), "--set", "seed=true"]) == 1
    assert "seed: expected an integer" in one_error_line(capsys)


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["sweep", "FILE", "--out", "OUT", "--seeds", "0"], "--seeds"),
        (["sweep", "FILE", "--out", "OUT", "--seeds", "-3"], "--seeds"),
        (["sweep", "FILE", "--out", "OUT", "--workers", "-1"], "--workers"),
        (["sweep", "FILE", "--out", "OUT", "--workers", "0"], "--workers"),
        (["reproduce", "p001", "--seeds", "0"], "--seeds"),
        (["reproduce", "p001", "--workers", "-1"], "--workers"),
        (["bench", "--repeat", "-1"], "--repeat"),
    ],
)
def test_counts_below_one_are_refused_naming_the_option(
    args: list[str], option: str, examples: Path, tmp_path: Path, capsys: Any
) -> None:
    args = [
        str(examples / "random-loss.toml") if a == "FILE" else str(tmp_path) if a == "OUT" else a
        for a in args
    ]
    assert main(args) == 1
    line = one_error_line(capsys)
    assert f"argument {option}:" in line and "at least 1" in line
    assert not (tmp_path / "runs").exists(), "nothing ran"


def test_a_usage_error_is_one_line_with_status_1_as_the_readme_says() -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    assert "Every error is one line" in readme and "exit status 1" in readme
    proc = ccsim_cli("run", "--seed", "x")
    assert proc.returncode == 1
    assert proc.stderr.splitlines() == [
        'ccsim: error: argument --seed: "x" is not an integer (see ccsim run --help)'
    ]
    proc = ccsim_cli("frobnicate")
    assert proc.returncode == 1 and len(proc.stderr.splitlines()) == 1


@pytest.mark.parametrize(
    ("option", "args"),
    # Each command line fails at once after its options are read (a paper, a benchmark or a
    # file that is not there), so that read as a number the digits start nothing long.
    [("--seed", ["validate", "FILE", "--seed"]), ("--seeds", ["sweep", "NOFILE", "--out",
     "OUT", "--seeds"]), ("--workers", ["reproduce", "nopaper", "--workers"]), ("--repeat",
     ["bench", "--only", "NOPE", "--repeat"]), ("--port", ["explore", "--results", "FILE",
     "--port"])],
)  # fmt: skip
def test_an_options_integer_in_digits_other_than_ascii_is_refused_not_read(
    option: str, args: list[str], tmp_path: Path, examples: Path, capsys: Any
) -> None:
    # Campaign 13: Python's int() reads any script's digits: `--seed ١٢` (Arabic-Indic) ran
    # seed 12, `--port` in full-width digits listened on 8765.
    names = {"FILE": str(examples / "random-loss.toml"), "NOFILE": str(tmp_path / "no.toml"),
             "OUT": str(tmp_path / "out")}  # fmt: skip
    for digits in ("\u0661\u0662", "\uff18\uff17\uff16\uff15"):
        assert main([*(names.get(a, a) for a in args), digits]) == 1
        assert one_error_line(capsys) == (
            f'ccsim: error: argument {option}: "{digits}" is not an integer (see ccsim '
            f"{args[0]} --help)"
        )


@pytest.mark.parametrize(
    ("text", "read"),
    [("18_653", 18653), ("1_000", 1000), ("+5", 5), ("1__0", None), ("_1", None), ("1_", None),
     ("0x10", None), ("1e3", None), ("", None)],
)  # fmt: skip
def test_an_options_integer_is_decimal_with_underscores_between_digits_as_toml_writes_them(
    text: str, read: int | None
) -> None:
    # Campaign 52 asked whether `--port 18_653` listening on 18653 was a slip; campaign 53
    # decided it is the rule (a scenario's integers and --set read `1_000` so), and pins it:
    # a change of Python's int() or of ccsim's parser must not move it without a word.
    if read is None:
        with pytest.raises(argparse.ArgumentTypeError, match="is not an integer"):
            cli._integer(text)
    else:
        assert cli._integer(text) == read


def test_help_still_exits_0() -> None:
    proc = ccsim_cli("run", "--help")
    assert proc.returncode == 0 and "--out" in proc.stdout


def test_a_scenario_file_that_is_not_utf8_is_named_in_the_error(
    tmp_path: Path, capsys: Any
) -> None:
    bad = tmp_path / "latin1.toml"
    bad.write_bytes('duration = "1s"\n# caf\xe9\n'.encode("latin-1"))
    for command in (["validate", str(bad)], ["sweep", str(bad), "--out", str(tmp_path / "o")]):
        assert main(command) == 1
        line = one_error_line(capsys)
        assert f"{bad}: not UTF-8 text (byte 0xe9" in line
    with pytest.raises(ccsim.ScenarioError, match=r"latin1\.toml: not UTF-8"):
        ccsim.Scenario.from_toml(bad)


@pytest.mark.parametrize(
    ("content", "error"),
    [(b'{"duration": "1s"}\n', "TOML syntax error at line 1, column 1"),
     (b"\x00\x01\x02PK\x03\x04", "TOML syntax error at line 1, column "),
     (b"\x89PNG\r\n\x1a\n", "not UTF-8 text (byte 0x89 at line 1, offset 0)"),
     (None, "is a directory")],
)  # fmt: skip
def test_a_scenario_file_that_is_not_toml_is_named_in_the_error(
    content: bytes | None, error: str, tmp_path: Path, capsys: Any, monkeypatch: Any
) -> None:
    # Campaign 5's leftover: `ccsim validate x.json` (or a binary file whose bytes are UTF-8)
    # said "TOML syntax error at line 1, column 1: invalid key", naming no file.
    ran = []
    monkeypatch.setattr(cli, "run", lambda *a, **k: ran.append(a))
    bad = tmp_path / "not-a-scenario"
    if content is None:
        bad.mkdir()
    else:
        bad.write_bytes(content)
    for command in (["validate", str(bad)], ["run", str(bad), "--out", str(tmp_path / "o")],
                    ["sweep", str(bad), "--out", str(tmp_path / "o")]):  # fmt: skip
        assert main(command) == 1
        assert one_error_line(capsys).startswith(f"ccsim: error: {bad}: {error}")
    assert ran == [] and not (tmp_path / "o").exists()
    if content is not None:
        with pytest.raises(ccsim.ScenarioError, match=f"not-a-scenario: {re.escape(error)}"):
            ccsim.Scenario.from_toml(bad)


def test_run_refuses_an_output_folder_where_it_would_overwrite_the_input(
    tmp_path: Path, examples: Path, capsys: Any, monkeypatch: Any
) -> None:
    # Issue 10, defect 8: `ccsim run /d/scenario.toml --out /d` replaced the user's file
    # (comments and values) with the resolved scenario.
    original = (examples / "random-loss.toml").read_text()
    scenario = tmp_path / "scenario.toml"
    scenario.write_text(original)
    ran = []
    monkeypatch.setattr(cli, "run", lambda *a, **k: ran.append(a))
    assert main(["run", str(scenario), "--out", str(tmp_path)]) == 1
    line = one_error_line(capsys)
    assert "--out" in line and f"over the input {scenario}" in line
    assert scenario.read_text() == original
    # The same file under another path (a hard link) is the same input.
    linked = tmp_path / "elsewhere"
    linked.mkdir()
    os.link(scenario, linked / "scenario.toml")
    assert main(["run", str(scenario), "--out", str(linked)]) == 1
    one_error_line(capsys)
    assert ran == [], "refused before the simulation"


@pytest.mark.parametrize(
    ("command", "where"),
    [("run", "a-file/out"), ("run", "a-file/out/deeper"), ("run", "a-file"),
     ("sweep", "a-file/out"), ("report", "a-file/site")],
)  # fmt: skip
def test_an_output_folder_under_a_file_is_refused_before_the_run_naming_the_file(
    command: str, where: str, tmp_path: Path, examples: Path, capsys: Any, monkeypatch: Any
) -> None:
    # Campaign 5's leftover: `--out afile/sub` said "--out afile/sub: cannot write there (File
    # exists)", `--out afile/sub/deeper` "(Not a directory)": neither said that afile is a
    # file; `report --out afile/site` said "afile: file exists".
    ran = []
    monkeypatch.setattr(cli, "run", lambda *a, **k: ran.append(a))
    a_file = tmp_path / "a-file"
    a_file.write_text("")
    scenario = str(examples / "random-loss.toml")
    # A folder with a reproduction's report.md: one without is refused before --out is looked
    # at (issue 32, `ccsim report` on a folder without a reproduction).
    results = tmp_path / "results" / "p001"
    results.mkdir(parents=True)
    (results / "report.md").write_text("# p001: a reproduction\n")
    argv = {"run": ["run", scenario],
            "sweep": ["sweep", scenario, "--param", "duration=1s"],
            "report": ["report", "--results", str(results.parent)]}[command]  # fmt: skip
    assert main([*argv, "--out", str(tmp_path / where)]) == 1
    assert one_error_line(capsys) == (
        f"ccsim: error: --out {tmp_path / where}: {a_file} is a file, not a folder; move it "
        "away or name another folder"
    )
    assert ran == []
    assert a_file.read_text() == ""


def test_ccsim_report_refuses_a_file_where_its_default_site_folder_would_be(
    tmp_path: Path, capsys: Any
) -> None:
    # Campaign 6: <results>/site a file said "<results>/site: file exists".
    (tmp_path / "site").write_text("")
    (tmp_path / "p001").mkdir()  # a reproduction: a folder without one is refused first
    (tmp_path / "p001" / "report.md").write_text("# p001: a reproduction\n")
    assert main(["report", "--results", str(tmp_path)]) == 1
    assert one_error_line(capsys) == (
        f"ccsim: error: the site's folder {tmp_path}/site: {tmp_path}/site is a file, not a "
        "folder; move it away or name another folder"
    )


def _disk_full_after_the_first_table(monkeypatch: Any) -> list[str]:
    """Parquet writes fail as on a full disk once one table is written (pyarrow's own error
    names no file); returns the paths that were written."""
    import pyarrow.parquet as pq

    real, written = pq.write_table, []

    def write_table(table: Any, where: Any, *args: Any, **kwargs: Any) -> None:
        if written:
            raise OSError(errno.ENOSPC, "Error writing bytes to file")
        real(table, where, *args, **kwargs)
        written.append(str(where))

    monkeypatch.setattr(pq, "write_table", write_table)
    return written


def test_a_full_disk_names_the_file_and_leaves_no_output_folder(
    tmp_path: Path, examples: Path, capsys: Any, monkeypatch: Any
) -> None:
    written = _disk_full_after_the_first_table(monkeypatch)
    out = tmp_path / "loss"
    args = ["run", str(examples / "random-loss.toml"), "--out", str(out), "--set", 'duration="1s"']
    assert main(args) == 1
    assert one_error_line(capsys) == (
        f"ccsim: error: {out / 'links.parquet'}: no space left on device; "
        f"nothing was written to {out}"
    )
    assert len(written) == 1  # flows.parquet was written, then removed with its folder
    assert os.listdir(tmp_path) == []  # no output folder, no partial one beside it


def test_a_full_disk_leaves_an_earlier_runs_folder_as_it_was(
    tmp_path: Path, examples: Path, capsys: Any, monkeypatch: Any
) -> None:
    out = tmp_path / "loss"
    args = ["run", str(examples / "random-loss.toml"), "--out", str(out), "--set", 'duration="1s"']
    assert main([*args, "--seed", "1"]) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    capsys.readouterr()
    _disk_full_after_the_first_table(monkeypatch)
    assert main([*args, "--seed", "2"]) == 1
    assert one_error_line(capsys).endswith(
        f"{out / 'links.parquet'}: no space left on device; {out} was left as it was"
    )
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_a_run_over_an_earlier_runs_folder_leaves_none_of_its_tables_behind(
    tmp_path: Path, examples: Path
) -> None:
    out = tmp_path / "loss"
    args = ["run", str(examples / "random-loss.toml"), "--out", str(out), "--set", 'duration="1s"']
    assert main([*args, "--set", "trace.packets={}"]) == 0
    assert (out / "packets.parquet").exists()
    (out / "notes.txt").write_text("mine")
    assert main(args) == 0
    # The packet trace was the earlier run's: a folder mixing two runs would misreport this one.
    assert not (out / "packets.parquet").exists()
    assert (out / "notes.txt").read_text() == "mine"
    assert sorted(p.name for p in out.iterdir() if p.name.startswith(".")) == []
    res = ccsim.Result.from_parquet(out)
    assert res.summary is not None and len(res.packets) == 0


def test_run_into_the_inputs_folder_under_another_name_still_works(
    tmp_path: Path, examples: Path
) -> None:
    scenario = tmp_path / "my-scenario.toml"
    scenario.write_text((examples / "random-loss.toml").read_text())
    args = ["run", str(scenario), "--out", str(tmp_path), "--set", 'duration="1s"']
    assert main(args) == 0
    assert scenario.read_text() == (examples / "random-loss.toml").read_text()
    assert (tmp_path / "scenario.toml").exists()


def test_seed_is_refused_as_a_sweep_parameter_pointing_to_seeds(
    tmp_path: Path, two_hosts: str, capsys: Any
) -> None:
    # Issue 10, defect 5: `--param seed=1,2,3` wrote three identical rows, all seed 1.
    f = tmp_path / "s.toml"
    f.write_text(two_hosts)
    out = tmp_path / "out"
    assert main(["sweep", str(f), "--param", "seed=1,2,3", "--out", str(out)]) == 1
    line = one_error_line(capsys)
    assert "--param seed" in line and "--seeds" in line
    assert main(["sweep", str(f), "--set", "seed=4", "--out", str(out)]) == 1
    assert "--seeds" in one_error_line(capsys)
    assert not (out / "flows.parquet").exists()


@pytest.mark.parametrize(
    "extra",
    [["--set", "nodes.bogus=1"], ["--param", "links.bottleneck.rate=2Mbps,fast"], ["--set", "x"]],
    ids=["misspelled key", "bad swept value", "not PATH=VALUE"],
)
def test_a_sweep_refused_for_its_input_writes_no_folder(
    extra: list[str], tmp_path: Path, two_hosts: str, capsys: Any
) -> None:
    # Campaign 2, Part A: a bad scenario left an empty OUT/runs behind, as if a sweep had
    # started there.
    f = tmp_path / "s.toml"
    f.write_text(two_hosts)
    out = tmp_path / "out"
    assert main(["sweep", str(f), *extra, "--out", str(out), "--workers", "1"]) == 1
    one_error_line(capsys)
    assert not out.exists()


def _sweep_of_four(tmp_path: Path, two_hosts: str) -> tuple[list[sweep.RunSpec], sweep.Store]:
    runs = sweep.plan_grid(
        two_hosts, ['duration="1s"'], [("links.bottleneck.rate", ["2Mbps", "5Mbps"])], [1, 2]
    )
    return runs, sweep.Store(tmp_path / "runs")


@pytest.mark.parametrize(
    "damage",
    [b"", b'{"version": 2, "seed": 1, "flo', b"[]", b'{"version": 2}', b"\xff\xfe"],
    ids=["empty", "truncated", "a list", "no tables", "not utf-8"],
)
def test_a_damaged_run_record_is_named_and_run_again(
    damage: bytes, tmp_path: Path, two_hosts: str
) -> None:
    # Issue 10, defect 10: an empty or truncated record gave "internal error (KeyError):
    # 'flows'" and the sweep could not recover.
    runs, store = _sweep_of_four(tmp_path, two_hosts)
    first = sweep.execute(runs, store, workers=1, progress=False)
    victim = store.path(runs[2].key())
    victim.write_bytes(damage)
    with pytest.warns(sweep.CorruptRecordWarning, match=str(victim)):
        again = sweep.execute(runs, store, workers=1, progress=False)
    assert (again.executed, again.cached) == (1, 3)
    assert sweep.record_problem(json.loads(victim.read_text())) is None, "replaced"
    pd.testing.assert_frame_equal(sweep.gather(again.records), sweep.gather(first.records))


@pytest.mark.parametrize(
    ("edit", "named"),
    [
        (lambda r: r["summary"].update(sim_seconds="0.2"), "summary.sim_seconds is text"),
        (lambda r: r["summary"].update(stop_reason=None), "summary.stop_reason is null"),
        (
            lambda r: r["links"]["rate_bps"].__setitem__(0, "12"),
            'column "rate_bps" of "links" holds a number and text',
        ),
        (
            lambda r: r["links"]["utilization"].__setitem__(0, None),
            'column "utilization" of "links" holds a number and null',
        ),
        (
            lambda r: r["links"]["link"].__setitem__(0, True),
            'column "link" of "links" holds a boolean and text',
        ),
    ],
    ids=["summary text", "summary null", "column text", "column null", "column boolean"],
)
def test_a_run_record_of_valid_json_holding_a_value_of_another_type_is_named_and_run_again(
    edit: Any, named: str, tmp_path: Path, two_hosts: str
) -> None:
    # Campaign 22 (issue 32): a record edited by hand into valid JSON of the wrong types was
    # taken, and ccsim reproduce ended with "could not convert string to float: 'x'", naming no
    # file (the explorer's job, with the same words).
    runs, store = _sweep_of_four(tmp_path, two_hosts)
    first = sweep.execute(runs, store, workers=1, progress=False)
    victim = store.path(runs[2].key())
    record = json.loads(victim.read_text())
    edit(record)
    victim.write_text(json.dumps(record))
    with pytest.warns(sweep.CorruptRecordWarning, match=re.escape(f"{victim}: damaged run "
                      f"record ({named}); running it again")):  # fmt: skip
        again = sweep.execute(runs, store, workers=1, progress=False)
    assert (again.executed, again.cached) == (1, 3)
    pd.testing.assert_frame_equal(sweep.gather(again.records), sweep.gather(first.records))


@pytest.mark.parametrize(
    ("make", "problem"),
    [(os.mkfifo, "is a FIFO"), (lambda p: p.symlink_to("/dev/zero"), "is a character device"),
     (lambda p: p.write_text("[" * 100_000), "maximum recursion depth")],
    ids=["fifo", "endless", "nested too deep"],
)  # fmt: skip
def test_a_run_record_that_is_no_file_or_nests_too_deep_is_named_and_run_again(
    make: Any, problem: str, tmp_path: Path, two_hosts: str
) -> None:
    # Campaign 3: a record that was a FIFO waited for a writer for ever, a link to /dev/zero
    # was read until memory ran out, and JSON nested 100,000 deep was a RecursionError.
    runs, store = _sweep_of_four(tmp_path, two_hosts)
    sweep.execute(runs, store, workers=1, progress=False)
    victim = store.path(runs[2].key())
    victim.unlink()
    make(victim)
    with pytest.warns(sweep.CorruptRecordWarning, match=problem):
        again = sweep.execute(runs, store, workers=1, progress=False)
    assert (again.executed, again.cached) == (1, 3)
    assert victim.is_file() and not victim.is_symlink(), "replaced by the record"


def test_a_run_record_on_a_full_disk_is_named(
    tmp_path: Path, two_hosts: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Campaign 3: a sweep's store on a full disk said a bare "[Errno 28] No space left on
    # device": the write of a record names no file.
    runs, store = _sweep_of_four(tmp_path, two_hosts)

    def full(*_: Any, **__: Any) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(sweep.json, "dump", full)
    with pytest.raises(OSError) as caught:
        store.save(runs[0].key(), {"version": 0})
    assert (caught.value.filename, caught.value.errno) == (str(store.path(runs[0].key())), 28)
    assert list(store.path(runs[0].key()).parent.iterdir()) == [], "no temporary file left"


def test_a_sweep_stopped_by_a_full_disk_at_a_record_says_how_many_runs_are_kept_and_resumes(
    tmp_path: Path, two_hosts: str, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    # Campaign 4's leftover: the error named the record ("<record>: no space left on device")
    # but not that the runs finished before it are kept, nor that the same command resumes,
    # as the Ctrl-C message says.
    argv, out = two_seed_sweep(tmp_path, two_hosts)
    saves = []
    dump = sweep.json.dump

    def full_at_the_second(*args: Any, **kwargs: Any) -> None:
        saves.append(1)
        if len(saves) == 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        dump(*args, **kwargs)

    monkeypatch.setattr(sweep.json, "dump", full_at_the_second)
    assert main(argv) == 1
    line = one_error_line(capsys)
    record = line.removeprefix("ccsim: error: ").split(":")[0]
    assert Path(record).parent.parent == out / "runs" and not Path(record).exists()
    assert line == (
        f"ccsim: error: {record}: no space left on device; 1 finished run is kept in "
        f"{out}/runs, and the same command resumes from it"
    )
    monkeypatch.setattr(sweep.json, "dump", dump)
    assert main(argv) == 0
    assert "2 runs: 1 executed, 1 reused from the store" in capsys.readouterr().out


def test_a_sweep_whose_first_record_cannot_be_saved_says_no_run_is_kept_not_zero_resumable(
    tmp_path: Path, two_hosts: str, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    # Campaign 23: a disk gone read-only before the first record said "mid/s: read-only file
    # system; 0 finished runs are kept in mid/s/runs, and the same command resumes from
    # them", of a folder it never made (campaign 2's wording, in the record's error).
    argv, out = two_seed_sweep(tmp_path, two_hosts)

    def read_only(*args: Any, **kwargs: Any) -> None:
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(sweep.json, "dump", read_only)
    assert main(argv) == 1
    line = one_error_line(capsys)
    record = line.removeprefix("ccsim: error: ").split(":")[0]
    assert Path(record).parent.parent == out / "runs"
    assert line == f"ccsim: error: {record}: read-only file system; no finished run is kept"


def test_a_sweeps_tables_on_a_disk_gone_read_only_name_out_and_say_the_runs_are_kept(
    tmp_path: Path, two_hosts: str, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    # Campaign 13: a disk remounted read-only after the runs: the hidden folder the tables are
    # written in could not be made, and the error named it (".ccsim-partial-XXXX", never
    # made) without saying that the finished runs are kept and the command resumes.
    from ccsim import staging

    argv, out = two_seed_sweep(tmp_path, two_hosts)
    mkdtemp = staging.tempfile.mkdtemp

    def read_only(*args: Any, prefix: str = "", dir: Any = None, **kwargs: Any) -> str:
        if prefix == ".ccsim-partial-":
            raise OSError(errno.EROFS, "Read-only file system", f"{dir}/{prefix}abcd1234")
        return mkdtemp(*args, prefix=prefix, dir=dir, **kwargs)

    monkeypatch.setattr(staging.tempfile, "mkdtemp", read_only)
    assert main(argv) == 1
    assert one_error_line(capsys) == (
        f"ccsim: error: {out}: read-only file system; the tables were not written; 2 "
        f"finished runs are kept in {out}/runs, and the same command resumes from them"
    )
    monkeypatch.setattr(staging.tempfile, "mkdtemp", mkdtemp)
    assert main(argv) == 0
    assert "2 runs: 0 executed, 2 reused from the store" in capsys.readouterr().out


def test_an_output_named_as_long_as_the_system_allows_is_written(
    tmp_path: Path, two_hosts: str, capsys: Any
) -> None:
    # Campaign 5: `ccsim run --out <250 characters>` (a name the system takes) ran, then
    # failed with "<hidden folder>: file name too long": the folder it is written in first,
    # .<name>.partial-XXXXXXXX, was over the 255 bytes a name may have. So were the site's
    # and bench --plot's.
    from ccsim.staging import NAME_MAX, hidden_name

    f, _ = scenario_and_out(tmp_path, two_hosts)
    out = tmp_path / ("o" * 250)
    assert main(["run", str(f), "--set", 'duration="1s"', "--out", str(out)]) == 0
    assert sorted(os.listdir(out)) == [
        "flows.parquet",
        "links.parquet",
        "scenario.toml",
        "series.parquet",
    ]
    assert os.listdir(tmp_path) == [out.name, "s.toml"], "no hidden folder left"
    korean = hidden_name("그림" * 100)  # 600 bytes of UTF-8: cut at a whole character
    assert korean.startswith(".그림") and korean.endswith(".partial-")
    assert len(os.fsencode(korean)) + 8 <= NAME_MAX


def test_an_output_or_store_that_is_a_link_to_nowhere_is_refused_before_any_run(
    tmp_path: Path, two_hosts: str, capsys: Any
) -> None:
    # Campaign 5: `ccsim run --out <dangling link>` ran, then said "<hidden folder> ->
    # <link>: not a directory" and left the hidden folder beside it; a sweep whose runs/
    # was such a link ran every run, then failed saving the first.
    f, out = scenario_and_out(tmp_path, two_hosts)
    out.symlink_to(tmp_path / "nowhere")
    assert main(["run", str(f), "--out", str(out)]) == 1
    assert one_error_line(capsys) == (
        f"ccsim: error: --out {out}: is a link to {tmp_path}/nowhere, which does not exist; "
        "remove the link or name another folder"
    )
    assert sorted(os.listdir(tmp_path)) == ["out", "s.toml"], "no hidden folder left"
    # Campaign 7: under such a link it said "cannot write there (File exists)".
    assert main(["run", str(f), "--out", str(out / "sub")]) == 1
    assert one_error_line(capsys) == (
        f"ccsim: error: --out {out}/sub: {out} is a link to {tmp_path}/nowhere, which does not "
        "exist; remove the link or name another folder"
    )
    out.unlink()
    out.mkdir()
    (out / "runs").symlink_to("nowhere")
    assert refused_sweep(f, out, capsys) == (
        f"ccsim: error: {out}/runs is a link to nowhere, which does not exist, where the run "
        "records are stored: remove the link or write elsewhere"
    )


def test_a_new_output_folder_has_the_permissions_of_any_folder_made_under_the_umask(
    tmp_path: Path, two_hosts: str
) -> None:
    # Campaign 7: `ccsim run --out new` made new drwx------ (the hidden folder it is written
    # in first, made by mkdtemp, renamed into place), whatever the umask: a results folder
    # the group, or a web server serving a site, could not read.
    f, out = scenario_and_out(tmp_path, two_hosts)
    old = os.umask(0o022)
    try:
        assert main(["run", str(f), "--out", str(out)]) == 0
        (tmp_path / "plain").mkdir()
    finally:
        os.umask(old)
    assert oct(out.stat().st_mode & 0o777) == oct((tmp_path / "plain").stat().st_mode & 0o777)
    assert out.stat().st_mode & 0o777 == 0o755


def test_an_output_or_store_that_is_a_loop_of_links_is_refused_naming_the_option_and_the_loop(
    tmp_path: Path, two_hosts: str, capsys: Any
) -> None:
    # Campaign 6: `ccsim run --out loop1` (loop1 -> loop2 -> loop1) said only "Symlink loop
    # from '<out>/flows.parquet'", naming neither --out nor what was wrong with it.
    f, out = scenario_and_out(tmp_path, two_hosts)
    other = tmp_path / "other"
    out.symlink_to(other)
    other.symlink_to(out)
    assert main(["run", str(f), "--out", str(out)]) == 1
    assert one_error_line(capsys) == (
        f"ccsim: error: --out {out}: {out} is a loop of symbolic links, not a folder; move it "
        "away or name another folder"
    )
    assert main(["run", str(f), "--out", str(out / "sub")]) == 1
    assert one_error_line(capsys) == (
        f"ccsim: error: --out {out / 'sub'}: {out} is a loop of symbolic links, not a folder; "
        "move it away or name another folder"
    )
    store = tmp_path / "store"
    store.mkdir()
    (store / "runs").symlink_to("runs")
    assert refused_sweep(f, store, capsys) == (
        f"ccsim: error: {store}/runs is a loop of symbolic links, not a folder, where the run "
        "records are stored: move it away or write elsewhere"
    )
    assert sorted(os.listdir(tmp_path)) == ["other", "out", "s.toml", "store"], "nothing left"


def test_the_sweep_command_warns_on_one_line_and_recovers(tmp_path: Path, two_hosts: str) -> None:
    f = tmp_path / "s.toml"
    f.write_text(two_hosts)
    out = tmp_path / "out"
    args = ["sweep", str(f), "--param", "links.bottleneck.rate=2Mbps,5Mbps", "--seeds", "2",
            "--set", 'duration="1s"', "--out", str(out), "--workers", "1"]  # fmt: skip
    assert ccsim_cli(*args).returncode == 0
    victim = sorted((out / "runs").glob("*/*.json"))[0]
    victim.write_text("")
    proc = ccsim_cli(*args)
    assert proc.returncode == 0, proc.stderr
    warnings = [ln for ln in proc.stderr.splitlines() if ln.startswith("ccsim: warning:")]
    assert warnings == [
        f"ccsim: warning: {victim}: damaged run record (not valid JSON (Expecting value: line 1 "
        "column 1 (char 0))); running it again"
    ]
    assert "4 runs: 1 executed, 3 reused" in proc.stdout
    assert len(pd.read_parquet(out / "flows.parquet")) == 4


def benchmarks_must_not_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make ``ccsim bench`` fail the test if it starts a benchmark: a refusal must come first."""
    from ccsim import bench

    def ran(*_: Any, **__: Any) -> None:
        raise AssertionError("the benchmarks ran")

    monkeypatch.setattr(bench, "run_benchmarks", ran)


@pytest.mark.parametrize("only", ["", " ", ",", " , "])
def test_bench_with_an_empty_only_is_refused_not_taken_for_every_case(
    only: str, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    # Campaign 2: `ccsim bench --only "$CASES"` with CASES unset ran every case (minutes).
    benchmarks_must_not_run(monkeypatch)
    assert main(["bench", "--only", only]) == 1
    line = one_error_line(capsys)
    assert "argument --only: empty" in line


@pytest.mark.parametrize(
    ("argv", "cases"),
    [(["--only", "p0,P0, p1"], ["P0", "P1"]),
     (["--only", "F10,P0", "--scale"], ["F10", "P0", *[c for c in SCALE_DEFAULT if c != "F10"]])],
)  # fmt: skip
def test_bench_runs_a_case_named_twice_once(
    argv: list[str], cases: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Campaign 3: `--only P0,P0` (or a scale case in --only beside --scale) ran the case twice
    # each round and printed its row twice, each a median of both rows' runs.
    from ccsim import bench

    asked: list[list[str]] = []
    monkeypatch.setattr(bench, "run_benchmarks", lambda **kw: asked.append(kw["only"]) or [])
    monkeypatch.setattr(bench, "format_table", lambda rows: "")
    assert main(["bench", *argv]) == 0
    assert asked == [cases]


def test_a_sweep_stopped_before_its_first_run_finished_names_no_folder_it_did_not_make(
    tmp_path: Path, two_hosts: str, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    # Campaign 2: "0 finished runs are kept in OUT/runs, and the same command resumes from
    # them", about a store folder that its first save would have made.
    def stopped(*_: Any, **__: Any) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(sweep, "execute", stopped)
    f = tmp_path / "s.toml"
    f.write_text(two_hosts)
    out = tmp_path / "out"
    assert main(["sweep", str(f), "--out", str(out), "--workers", "1"]) == 130
    assert (
        capsys.readouterr().err == "ccsim: interrupted; no run had finished: nothing was written\n"
    )
    assert not out.exists()


@pytest.mark.parametrize("stored", [0, 2])
def test_a_reproduction_stopped_says_how_many_finished_runs_it_keeps_and_none_when_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any, stored: int
) -> None:
    # Campaign 23: `ccsim reproduce m01 --quick --out DIR` stopped at 0.6 s, while its plan
    # was read, said "finished runs are kept, and the same command resumes from them", with
    # no run finished and DIR never made. Now counted as sweep's message is.
    from ccsim import experiment

    def stopped(*_: Any, **__: Any) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(experiment, "run_cli", stopped)
    monkeypatch.chdir(Path(__file__).resolve().parents[2])  # the plans are ./experiments
    out = tmp_path / "m01"
    for i in range(stored):
        (out / "runs" / "ab").mkdir(parents=True, exist_ok=True)
        (out / "runs" / "ab" / f"ab{i}.json").write_text("{}")
    assert main(["reproduce", "m01", "--quick", "--out", str(out)]) == 130
    kept = (
        f"{stored} finished runs are kept in {out / 'runs'}, and the same command resumes from them"
        if stored
        else "no run had finished, so none is kept"
    )
    assert capsys.readouterr().err == f"ccsim: interrupted; {kept}\n"
    assert out.exists() == bool(stored)


def cli_under_address_space_limit(args: list[str], limit: int) -> subprocess.CompletedProcess[str]:
    """``ccsim ARGS`` in a Python of its own whose address space is at most ``limit`` bytes
    (``ulimit -v``), with its output captured."""
    code = (
        "import resource, sys\n"
        f"resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))\n"
        "from ccsim.cli import main\n"
        f"sys.exit(main({args!r}))\n"
    )
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=False)  # fmt: skip


@pytest.mark.parametrize(
    "command", [["validate", "/dev/zero"], ["run", "/dev/zero", "--out", "OUT"]]
)
def test_a_scenario_that_never_ends_is_refused_at_a_stated_size_not_read_until_memory_runs_out(
    command: list[str], tmp_path: Path
) -> None:
    # Campaign 2: `ccsim validate /dev/zero` read until the kernel killed it (under a memory
    # limit: "internal error (MemoryError)"). Run here under a 3 GB address-space limit.
    args = [str(tmp_path / "out") if a == "OUT" else a for a in command]
    proc = cli_under_address_space_limit(args, 3 << 30)
    assert proc.returncode == 1
    assert proc.stderr == (
        "ccsim: error: /dev/zero: larger than 64 MiB, so not a scenario (scenarios are small "
        "UTF-8 TOML files)\n"
    )
    assert not (tmp_path / "out").exists()


def test_a_million_flow_copies_under_an_address_space_limit_are_one_error_naming_the_count(
    tmp_path: Path, two_hosts: str
) -> None:
    # Campaign 11: `count = 1000000` under `ulimit -v` ended in Rust's allocation failure
    # ("memory allocation of 247464096 bytes failed", status 134, a backtrace). The copies are
    # counted before they are made, against the address-space limit where it is below
    # limits.max_memory. Here 1 GiB, with a million copies needing about 2.6 GiB.
    f = tmp_path / "s.toml"
    f.write_text(two_hosts)
    proc = cli_under_address_space_limit(
        ["validate", str(f), "--set", "flows.f1.count=1000000"], 1 << 30
    )
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert proc.stderr.startswith("ccsim: error: flows.f1.count: 1000000 flows take at least ")
    assert "address-space limit (1024 MiB, ulimit -v)" in proc.stderr
    assert proc.stderr.count("\n") == 1


def test_reading_a_small_scenario_needs_no_more_memory_than_the_file(examples: Path) -> None:
    # Campaign 3: the 64 MiB cap read with read(64 MiB + 1), which allocates that buffer up
    # front: under a memory limit (ulimit -v) `ccsim reproduce` died with MemoryError reading
    # a scenario of a few kilobytes. Here the limit leaves 32 MiB free.
    code = (
        "import resource, sys\n"
        "from ccsim.scenario import read_text\n"
        "vm = next(int(ln.split()[1]) for ln in open('/proc/self/status') "
        "if ln.startswith('VmSize')) * 1024\n"
        "resource.setrlimit(resource.RLIMIT_AS, (vm + 32 * 2**20, resource.RLIM_INFINITY))\n"
        "print(len(read_text(sys.argv[1])))\n"
    )
    path = examples / "random-loss.toml"
    argv = [sys.executable, "-c", code, str(path)]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert (proc.returncode, proc.stderr) == (0, "")
    assert int(proc.stdout) == len(path.read_text(encoding="utf-8"))


def scenario_and_out(tmp_path: Path, two_hosts: str) -> tuple[Path, Path]:
    """``two_hosts`` written to ``tmp_path/s.toml``, and an output folder not made yet."""
    f = tmp_path / "s.toml"
    f.write_text(two_hosts)
    return f, tmp_path / "out"


def refused_sweep(f: Path, out: Path, capsys: Any) -> str:
    """The one error line of a two-run sweep of ``f`` into ``out``, which must refuse it."""
    argv = ["sweep", str(f), "--param", "links.bottleneck.rate=2Mbps,5Mbps", "--out", str(out)]
    assert main(argv) == 1
    return one_error_line(capsys)


def two_seed_sweep(tmp_path: Path, two_hosts: str) -> tuple[list[str], Path]:
    """The command line of a sweep of ``two_hosts`` over seeds 1 and 2 (1 s each, one worker;
    ``--seeds`` is its sixth word), and its output folder."""
    f, out = scenario_and_out(tmp_path, two_hosts)
    argv = ["sweep", str(f), "--set", 'duration="1s"', "--seeds", "2", "--out", str(out),
            "--workers", "1"]  # fmt: skip
    return argv, out


@pytest.mark.parametrize(
    ("command", "spoil"),
    [("sweep", "runs"), ("sweep", "shard"), ("sweep", "fifo"), ("reproduce", "runs")],
)
def test_an_output_folder_whose_runs_is_no_folder_is_refused_before_any_run(
    command: str, spoil: str, tmp_path: Path, two_hosts: str, monkeypatch: pytest.MonkeyPatch,
    capsys: Any,
) -> None:  # fmt: skip
    # Campaign 3's leftover: with OUT/runs a regular file, `ccsim sweep --out OUT` started its
    # runs and failed only at the first save ("OUT/runs/0c: not a directory").
    f, out = scenario_and_out(tmp_path, two_hosts)
    runs, _ = _sweep_of_four(tmp_path, two_hosts)
    place = {"runs": out / "runs", "fifo": out / "runs",
             "shard": out / "runs" / runs[0].key()[:2]}[spoil]  # fmt: skip
    place.parent.mkdir(parents=True)
    if spoil == "fifo":
        os.mkfifo(place)
    else:
        place.write_text("not a folder")

    def no_run(*_: Any, **__: Any) -> None:
        raise AssertionError("a run started")

    monkeypatch.setattr(sweep, "_execute_local", no_run)
    argv = {
        "sweep": ["sweep", str(f), "--set", 'duration="1s"', "--param",
                  "links.bottleneck.rate=2Mbps,5Mbps", "--seeds", "2", "--out", str(out)],
        "reproduce": ["reproduce", "p001", "--quick", "--seeds", "1", "--out", str(out)],
    }[command]  # fmt: skip
    assert main(argv) == 1
    kind = "is a FIFO (named pipe)" if spoil == "fifo" else "is a file"
    assert one_error_line(capsys) == (
        f"ccsim: error: {place} {kind}, not a folder, where the run records are stored: move it "
        "away or write elsewhere"
    )
    assert sorted(p.name for p in out.rglob("*")) == sorted(
        p.name for p in [place, *place.parents] if out in p.parents
    ), "nothing written"


def test_a_capture_file_on_a_full_disk_is_named_where_it_would_be_not_in_the_hidden_folder(
    tmp_path: Path, two_hosts: str, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    # Campaign 4: `ccsim run --pcap` on a full disk said "writing the capture file
    # OUT/../.out.partial-yyrs7nej/pcap/h1-access.pcap: No space left on device": a hidden
    # folder removed by then, and nothing said what became of --out.
    f, out = scenario_and_out(tmp_path, two_hosts)

    def full(*_: Any, pcap_dir: Path, **__: Any) -> None:
        raise ccsim.SimulationError(f"writing the capture file {pcap_dir / 'h1-access.pcap'}: "
                                    "No space left on device (os error 28)")  # fmt: skip

    monkeypatch.setattr(cli, "run", full)
    assert main(["run", str(f), "--out", str(out), "--pcap", "h1"]) == 1
    assert one_error_line(capsys) == (
        f"ccsim: error: writing the capture file {out}/pcap/h1-access.pcap: No space left on "
        f"device (os error 28); nothing was written to {out}"
    )
    assert sorted(os.listdir(tmp_path)) == ["s.toml"]


def test_a_sweep_whose_tables_meet_a_full_disk_leaves_the_earlier_tables_whole(
    tmp_path: Path, two_hosts: str, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    # Campaign 4: the tables were written in place, so a full disk left flows.parquet cut
    # short, or a new flows.parquet beside a links.parquet cut short or from an earlier sweep.
    argv, out = two_seed_sweep(tmp_path, two_hosts)
    assert main([*argv[:5], "1", *argv[6:]]) == 0  # an earlier sweep, of one seed
    before = {n: (out / n).read_bytes() for n in ("flows.parquet", "links.parquet")}
    capsys.readouterr()
    written = pd.DataFrame.to_parquet

    def full_at_links(table: pd.DataFrame, path: Path, **kwargs: Any) -> None:
        written(table, path, **kwargs)
        if Path(path).name == "links.parquet":
            Path(path).write_bytes(Path(path).read_bytes()[:100])  # cut short, then:
            raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(pd.DataFrame, "to_parquet", full_at_links)
    assert main(argv) == 1
    assert one_error_line(capsys) == (
        f"ccsim: error: {out}/links.parquet: no space left on device; the tables were not "
        f"written; 2 finished runs are kept in {out}/runs, and the same command resumes "
        "from them"
    )
    assert {n: (out / n).read_bytes() for n in before} == before
    assert sorted(os.listdir(out)) == ["flows.parquet", "links.parquet", "runs"]


@pytest.mark.parametrize(
    ("argv", "error"),
    [(["--only", "P0"], "the plot draws the generated scale cases, and none runs; add --scale"),
     ([], "the plot draws the generated scale cases, and none runs; add --scale"),
     (["--scale", "--plot-into-a-folder"], "is a directory; name a PNG file"),
     (["--only", "F10", "--plot-under-a-file"], "a-file is a file, not a folder"),
     (["--scale", "--plot-into-a-fifo"], "is a FIFO (named pipe), not a regular file; name a "
                                         "PNG file"),
     (["--scale", "--plot-into-a-device"], "is a character device, not a regular file; name "
                                           "a PNG file")],
)  # fmt: skip
def test_a_bench_plot_it_could_not_draw_or_write_is_refused_before_the_benchmarks_run(
    argv: list[str], error: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    # Campaign 4: `bench --only P0 --plot x.png` wrote an empty figure (with two matplotlib
    # warnings) and said "plot: x.png"; a plot path that could not be written failed after
    # the benchmarks, minutes of them with --scale.
    benchmarks_must_not_run(monkeypatch)
    (tmp_path / "a-file").write_text("")
    (tmp_path / "folder.png").mkdir()
    # Campaign 5: the PNG was renamed over whatever had its name: as root, `--plot /dev/null`
    # replaced the device by the figure. (A link to /dev/null stands for it here.)
    os.mkfifo(tmp_path / "fifo.png")
    (tmp_path / "null.png").symlink_to(os.devnull)
    plot = {"--plot-into-a-folder": tmp_path / "folder.png",
            "--plot-under-a-file": tmp_path / "a-file" / "x.png",
            "--plot-into-a-fifo": tmp_path / "fifo.png",
            "--plot-into-a-device": tmp_path / "null.png"}  # fmt: skip
    asked = [a for a in argv if a not in plot]
    where = next((plot[a] for a in argv if a in plot), tmp_path / "x.png")
    assert main(["bench", *asked, "--plot", str(where)]) == 1
    line = one_error_line(capsys)
    assert line.startswith(f"ccsim: error: --plot {where}")
    assert error in line, line


def test_a_bench_plot_folder_that_cannot_be_written_is_named_as_the_user_wrote_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    # Stop 58 (issue 32): `--plot a-file/x.png` was refused as "--plot /home/u/.../a-file: ...",
    # the folder by its absolute path, which the user never wrote.
    benchmarks_must_not_run(monkeypatch)
    (tmp_path / "a-file").write_text("")
    monkeypatch.chdir(tmp_path)
    assert main(["bench", "--scale", "--plot", "a-file/x.png"]) == 1
    assert one_error_line(capsys) == (
        "ccsim: error: --plot a-file/x.png: its folder a-file: a-file is a file, not a folder; "
        "move it away or name another folder"
    )


def test_a_bench_plot_without_matplotlib_is_refused_before_the_benchmarks_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    # Campaign 13: "ccsim needs matplotlib" came after the benchmarks (minutes of them with
    # --scale), their table already printed.
    import sys

    benchmarks_must_not_run(monkeypatch)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # an import of it fails, as if absent
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    assert main(["bench", "--only", "F10", "--plot", str(tmp_path / "x.png")]) == 1
    assert one_error_line(capsys) == (
        "ccsim: error: ccsim needs matplotlib, which is not installed: install ccsim again with "
        "its dependencies (pip install -c constraints.txt . from the repository root)"
    )


@pytest.mark.parametrize(
    ("module", "cases"),
    [("numpy", "P0"),  # what each case's child needs to run the core
     ("tomli_w", "F10")],  # what writes a generated scale case (--only F10, --scale)
)  # fmt: skip
def test_bench_without_a_package_its_cases_need_is_refused_naming_it_before_a_case_runs(
    module: str, cases: str, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    # Campaign 22 (issue 32): without numpy each case's child died with a ModuleNotFoundError
    # traceback, then "ccsim: error: benchmark trivial.toml failed with status 1", naming
    # neither numpy nor the cure. Campaign 25: without tomli_w, "internal error
    # (CalledProcessError): Command [...] returned non-zero exit status 1".
    import sys

    benchmarks_must_not_run(monkeypatch)
    monkeypatch.setitem(sys.modules, module, None)  # an import of it fails, as if absent
    assert main(["bench", "--only", cases, "--repeat", "1"]) == 1
    assert one_error_line(capsys) == (
        f"ccsim: error: ccsim needs {module}, which is not installed: install ccsim again with "
        "its dependencies (pip install -c constraints.txt . from the repository root)"
    )


def test_a_generated_bench_case_that_cannot_be_written_names_the_case_and_the_childs_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # Campaign 25 (issue 32): the child writing a generated case failed as "internal error
    # (CalledProcessError): Command ['.../python3', '-c', '\\nimport json, sys...'] returned
    # non-zero exit status 1", its own error (on stderr, captured) dropped.
    from ccsim import bench

    monkeypatch.setattr(bench, "_WRITE_CASE", "import sys; sys.exit('F10.toml: disk full')")
    with pytest.raises(RuntimeError) as e:
        bench._write_scale_case("F10", tmp_path)
    assert str(e.value) == "benchmark F10: its scenario could not be generated: F10.toml: disk full"


def test_a_bench_whose_trivial_case_cannot_be_written_names_the_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: Any
) -> None:
    # Campaign 52 (issue 32): the temporary folder filling up (or its disk failing) between
    # trivial.toml's creation and its write, a write() that names no file: "ccsim: error:
    # [Errno 28] No space left on device", naming neither the file nor its folder.
    import tempfile

    from ccsim import bench

    written = Path.write_text

    def full(path: Path, *args: Any, **kwargs: Any) -> int:
        if path.name == "trivial.toml":
            raise OSError(errno.ENOSPC, "No space left on device")
        return written(path, *args, **kwargs)

    def ran(*_: Any, **__: Any) -> None:
        raise AssertionError("a case ran")

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(Path, "write_text", full)
    monkeypatch.setattr(bench, "_child_run", ran)
    assert main(["bench", "--only", "F10", "--repeat", "1"]) == 1
    line = one_error_line(capsys)
    folder = re.escape(str(tmp_path))
    assert re.fullmatch(rf"ccsim: error: {folder}/ccsim-bench-\w+/trivial\.toml: no space left "
                        "on device", line), line  # fmt: skip
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize(
    ("plot", "error"),
    [("", "empty; name a PNG file"),
     ("x.svg", "x.svg: the plot is drawn as PNG; name a .png file"),
     ("x", "x: the plot is drawn as PNG; name a .png file")],
)  # fmt: skip
def test_a_bench_plot_with_no_name_or_not_a_png_name_is_refused(
    plot: str, error: str, capsys: Any
) -> None:
    # Campaign 5: `--plot ""` was refused as "--plot .: is a directory", and `--plot x.svg`
    # wrote PNG bytes into a file named .svg and said "plot: x.svg".
    assert main(["bench", "--scale", "--plot", plot]) == 1
    assert one_error_line(capsys) == (
        f"ccsim: error: argument --plot: {error} (see ccsim bench --help)"
    )


def test_a_bench_plot_on_a_full_disk_names_the_file_and_leaves_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Campaign 4: savefig on a full disk said a bare "[Errno 28] No space left on device".
    import matplotlib.figure

    from ccsim import bench

    def full(*_: Any, **__: Any) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", full)
    row = bench.BenchRow(**{**{f: 1 for f in bench.BenchRow.__dataclass_fields__}, "name": "F10"})
    with pytest.raises(OSError) as caught:
        bench.plot_scale([row], tmp_path / "x.png")
    assert (caught.value.filename, caught.value.errno) == (str(tmp_path / "x.png"), errno.ENOSPC)
    assert os.listdir(tmp_path) == []


def test_a_manifest_that_is_a_fifo_is_an_empty_one_not_a_wait_for_ever(tmp_path: Path) -> None:
    # Campaign 9: derived.json or figures.json replaced by a FIFO: `ccsim reproduce` waited
    # for a writer for ever before its first run; every output is derived and drawn again.
    from ccsim.experiment.drawn import Manifest

    os.mkfifo(tmp_path / "derived.json")
    (tmp_path / "figures.json").symlink_to(tmp_path / "derived.json")
    for name in ("derived.json", "figures.json"):
        manifest = Manifest(tmp_path, name)
        assert manifest.old == {} and not manifest.up_to_date("runs", "anything")


def test_a_file_a_manifest_names_is_hashed_without_reading_it_whole(tmp_path: Path) -> None:
    # Campaign 9: a file named in a manifest (derived-values.json, a figure) replaced by a link
    # to a huge file was read into memory whole to hash it: 3 GB under a 2 GB limit stopped
    # the reproduction with an internal error (MemoryError). Here 1 GiB under 768 MiB.
    huge = tmp_path / "huge.bin"
    with open(huge, "wb") as fh:
        fh.truncate(2**30)
    (tmp_path / "derived-values.json").symlink_to(huge)
    code = (
        "import resource, sys; from pathlib import Path\n"
        "from ccsim.experiment.drawn import file_digest\n"
        "resource.setrlimit(resource.RLIMIT_AS, (768 * 2**20, resource.RLIM_INFINITY))\n"
        "print(file_digest(Path(sys.argv[1])))\n"
    )
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path / "derived-values.json")],
                          capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 0, done.stderr
    import hashlib

    zeros = hashlib.sha256()
    for _ in range(1024):
        zeros.update(bytes(2**20))
    assert done.stdout.strip() == zeros.hexdigest()


def test_a_manifest_entry_with_a_null_digest_does_not_stand_for_a_missing_file(
    tmp_path: Path,
) -> None:
    # Campaign 9: a file's digest edited to null in figures.json matched the file missing
    # (no digest), so a deleted figure counted as drawn and the folder looked complete.
    from ccsim.experiment.drawn import Manifest

    entry = {"inputs": "x", "files": {"fig1.png": None}}
    (tmp_path / "figures.json").write_text(json.dumps({"version": 1, "outputs": {"fig1": entry}}))
    assert not Manifest(tmp_path, "figures.json").up_to_date("fig1", "x")


@pytest.mark.parametrize("missing", ["matplotlib", "plotly", "markdown_it"])
def test_a_reproduction_without_what_draws_its_figures_is_refused_before_its_runs(
    missing: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    # Campaign 15: without matplotlib, `ccsim reproduce` made every run of the plan (hours for
    # a full one) and only then said "ccsim needs matplotlib", as bench --plot did before
    # campaign 13. Campaign 18: without markdown-it-py (what writes the site's pages from
    # report.md) it was the same, every run and report.md, then "ccsim needs markdown_it".
    import sys

    for module in [m for m in list(sys.modules) if m.split(".")[0] == missing] + [missing]:
        monkeypatch.setitem(sys.modules, module, None)  # an import of it fails, as if absent
    out = tmp_path / "r"
    assert main(["reproduce", "m01", "--quick", "--workers", "1", "--out", str(out)]) == 1
    assert one_error_line(capsys).startswith(f"ccsim: error: ccsim needs {missing}, ")
    assert not out.exists()


def test_a_reproduction_whose_plotly_cannot_make_a_figure_is_refused_before_its_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    # Campaign 36 (issue 32): plotly imported from a zip on PYTHONPATH (or with its data files
    # stripped) reads its validators' JSON by a path that is no file only when a figure is
    # first made: `ccsim reproduce` made every run of the plan, then "the site was not
    # written ... validator JSON file not found: .../plotly.zip/plotly/validators/...".
    from plotly.validator_cache import ValidatorCache

    def missing(*_: Any) -> None:
        raise FileNotFoundError("Validator JSON file not found: /x/plotly.zip/plotly/"
                                "validators/_validators.json")  # fmt: skip

    monkeypatch.setattr(ValidatorCache, "get_validator", staticmethod(missing))
    out = tmp_path / "r"
    assert main(["reproduce", "m01", "--quick", "--workers", "1", "--out", str(out)]) == 1
    assert one_error_line(capsys) == (
        "ccsim: error: ccsim needs plotly, which is installed but cannot be imported (it "
        "cannot make a figure: Validator JSON file not found: /x/plotly.zip/plotly/validators/"
        "_validators.json): install ccsim again with its dependencies (pip install -c "
        "constraints.txt . from the repository root)"
    )
    assert not out.exists()


def package_folder_without_its_init(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                    *names: str) -> None:  # fmt: skip
    """Import ``names`` (a package and its subpackages) as Python does a package's folder
    left without its __init__.py (its .py files removed by hand, an uninstall cut short, the
    compiled files left): a namespace package that imports and holds nothing."""
    import importlib.machinery
    import importlib.util
    import sys

    for name in names:
        folder = tmp_path / "site" / name.replace(".", "/")
        folder.mkdir(parents=True)
        (folder / "_left.cpython-311-x86_64-linux-gnu.so").write_bytes(b"")
    for name in names:
        parent = tmp_path / "site" / "/".join(name.split(".")[:-1])
        spec = importlib.machinery.PathFinder.find_spec(name, [str(parent)])
        assert spec is not None and spec.origin is None  # a namespace package
        monkeypatch.setitem(sys.modules, name, importlib.util.module_from_spec(spec))


def test_a_run_with_pyarrows_folder_left_without_its_init_names_pyarrow_and_writes_nothing(
    tmp_path: Path, examples: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    # Campaign 36 (issue 32): pyarrow's folder without its __init__.py (the .py files removed,
    # its libraries left) imports, as a namespace package: `ccsim run` ran to its end, then
    # said "internal error (AttributeError): module 'pyarrow' has no attribute 'Array'".
    package_folder_without_its_init(tmp_path, monkeypatch, "pyarrow", "pyarrow.parquet")
    out = tmp_path / "out"
    assert main(["run", str(examples / "random-loss.toml"), "--out", str(out)]) == 1
    line = one_error_line(capsys)
    assert line.startswith(
        "ccsim: error: ccsim needs pyarrow, which is installed but cannot be "
        f"imported ({tmp_path / 'site' / 'pyarrow'} has no __init__.py"
    ), line
    assert line.endswith(
        "install ccsim again with its dependencies (pip install -c "
        "constraints.txt . from the repository root)"
    ), line
    assert not out.exists()


def test_the_explorer_with_plotlys_folder_left_without_its_init_names_plotly_at_its_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    # Campaign 36 (issue 32): plotly's folder without its __init__.py imports as a namespace
    # package: `ccsim explore` said "internal error (AttributeError): module 'plotly' has no
    # attribute '__version__'".
    package_folder_without_its_init(tmp_path, monkeypatch, "plotly")
    assert main(["explore", "--results", str(tmp_path / "results"), "--port", "1"]) == 1
    assert one_error_line(capsys).startswith(
        "ccsim: error: ccsim explore needs plotly, which is installed but cannot be imported "
        f"({tmp_path / 'site' / 'plotly'} has no __init__.py"
    )


def test_a_run_with_pandas_importable_but_without_its_metadata_writes_its_tables(
    tmp_path: Path, examples: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    # Campaign 36 (issue 32): pandas copied onto PYTHONPATH without its dist-info folder (a
    # shared folder of packages, a bundle) imports, and sweep and reproduce work with it;
    # `ccsim run` ran to its end, then said "ccsim needs pandas, which is not installed" when
    # its tables recorded pandas' version, read from the metadata alone.
    import importlib.metadata

    import pandas
    import pyarrow.parquet as pq

    found = importlib.metadata.version

    def version(name: str) -> str:
        if name == "pandas":
            raise importlib.metadata.PackageNotFoundError(name)
        return found(name)

    monkeypatch.setattr(importlib.metadata, "version", version)
    out = tmp_path / "out"
    assert main(["run", str(examples / "random-loss.toml"), "--out", str(out)]) == 0, (
        capsys.readouterr().err
    )
    meta = json.loads(pq.read_schema(out / "flows.parquet").metadata[b"pandas"])
    assert meta["pandas_version"] == pandas.__version__


@pytest.mark.parametrize(
    "metadata",
    [b"Metadata-Version: 2.1\nName: pandas\nVersion: 2.0\nSummary: caf\xe9\n", b"Name: pandas\n"],
    ids=["not-utf-8", "no-version"],
)
@pytest.mark.parametrize("backport", [False, True], ids=["stdlib", "backport-imported"])
def test_a_run_with_pandas_metadata_damaged_writes_its_tables_with_pandas_own_version(
    tmp_path: Path,
    examples: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: Any,
    metadata: bytes,
    backport: bool,
) -> None:
    # Campaign 37 (issue 32): pandas imports whole, but its METADATA is damaged (a byte not
    # UTF-8 from a hand edit or a disk error, or its Version line gone). `ccsim run` ran to its
    # end, then failed writing its tables with "ccsim: error: 'utf-8' codec can't decode byte
    # 0xe9 in position 61", naming no file, its output lost; without a Version the tables
    # recorded "pandas_version": null.
    # Once the importlib_metadata backport is imported (by another package, or an earlier
    # test: the full suite failed so), its finder answers the standard library's lookups, and
    # its distributions raise KeyError for a missing Version where the standard library's
    # give None: the run failed as "internal error (KeyError)".
    if backport:
        pytest.importorskip("importlib_metadata", reason="the backport is not installed here")
    import pandas
    import pyarrow.parquet as pq

    dist = tmp_path / "site" / "pandas-2.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_bytes(metadata)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    out = tmp_path / "out"
    assert main(["run", str(examples / "random-loss.toml"), "--out", str(out)]) == 0, (
        capsys.readouterr().err
    )
    meta = json.loads(pq.read_schema(out / "flows.parquet").metadata[b"pandas"])
    assert meta["pandas_version"] == pandas.__version__


@pytest.mark.parametrize("letter", ["r", "한"])
def test_a_capture_point_whose_file_name_the_disk_cannot_hold_is_refused_by_validate_and_run(
    letter: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Campaigns 52 and 53 (issue 32): a node of a long name (240 letters, or 80 in Hangul,
    # three bytes each) passed `ccsim validate` and failed `ccsim run --pcap` once the run had
    # started, "writing the capture file <out>/pcap/<node>-bottleneck.pcap: File name too long
    # (os error 36)". The capture file's name, <node>-<link>.pcap, may be 255 bytes.
    node = letter * (240 if letter == "r" else 80)
    scenario = tmp_path / "long.toml"
    text = (Path(__file__).parents[2] / "examples" / "random-loss.toml").read_text("utf-8")
    scenario.write_text(text.replace('"r1"', f'"{node}"').replace("\nr1 =", f'\n"{node}" ='),
                        encoding="utf-8")  # fmt: skip
    said = (f'node "{node}" on link "bottleneck" is captured to the file <node>-<link>.pcap, '
            f"{len(node.encode()) + 16} bytes long, and file names may be at most 255 bytes: "
            "give the node or the link a shorter name")  # fmt: skip
    assert main(["validate", str(scenario), "--set", f'trace.pcap=["{node}"]']) == 1
    assert capsys.readouterr().err == f"ccsim: error: trace.pcap[0]: {said}\n"
    out = tmp_path / "out"
    line = ["run", str(scenario), "--set", "duration=100ms", "--out", str(out)]
    assert main([*line, "--pcap", node]) == 1
    assert capsys.readouterr().err == f"ccsim: error: --pcap {node!r}: {said}\n"
    assert not out.exists()
    assert main(line) == 0  # capturing nothing, the name is written nowhere
