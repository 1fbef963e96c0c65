# SPDX-License-Identifier: MIT
"""The command line a new user meets (issue 32): every command and argument explained in its
help, the papers listed, a missing file named in one line, the pcap folder on the results line,
and what a missing package says, with the README's install bringing the explorer."""

from __future__ import annotations

import argparse
import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from test_experiment import PLAN, SCENARIO
from test_pcap import LOSSY

from ccsim import bench
from ccsim.cli import _folder_text, _SeedIsRuns, build_parser, main

ROOT = Path(__file__).resolve().parents[2]


def subcommands() -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def test_every_command_has_a_description_and_every_argument_its_help() -> None:
    for name, parser in subcommands().items():
        assert parser.description, f"ccsim {name} --help has no description line"
        for action in parser._actions:
            # Help, and --seed given to sweep or reproduce, which only says to use --seeds
            # (campaign 24): no argument the command takes, so hidden from its help.
            if isinstance(action, (argparse._HelpAction, _SeedIsRuns)):
                continue
            where = f"ccsim {name} {'/'.join(action.option_strings) or action.dest}"
            assert action.help and action.help != argparse.SUPPRESS, f"{where} has no help"


def test_reproduce_help_states_the_out_folder_with_and_without_quick() -> None:
    from ccsim.experiment.reproduction import default_out

    help_text = " ".join(subcommands()["reproduce"].format_help().split())
    for quick in (False, True):
        shown = str(default_out("<id>", quick))  # the folder run_cli writes to
        assert shown in help_text, (quick, shown)
    assert "results/<id>-quick with --quick" in help_text


def test_bench_help_names_every_case_it_runs() -> None:
    help_text = " ".join(subcommands()["bench"].format_help().split())
    for case in [*bench.SCENARIOS, *bench.ON_REQUEST, *bench.SCALE]:
        assert re.search(rf"\b{case}\b", help_text), case
    listing = " ".join(build_parser().format_help().split())
    assert ", ".join(bench.SCENARIOS) in listing, "the command list names every default case"


def test_reproduce_list_shows_every_papers_id_folder_and_title(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import tomllib

    monkeypatch.chdir(ROOT)
    assert main(["reproduce", "--list"]) == 0
    out = capsys.readouterr().out.splitlines()
    # The brief's papers first, then the modern studies (experiment_folders' order).
    plans = sorted(
        (ROOT / "experiments").glob("*/plan.toml"),
        key=lambda p: (not p.parent.name.startswith("p"), p.parent.name),
    )
    assert len(out) == len(plans)
    for line, plan in zip(out, plans):
        tree = tomllib.loads(plan.read_text(encoding="utf-8"))
        assert line.split()[:2] == [tree["id"], plan.parent.name]
        assert line.endswith(tree["title"])
    assert main(["reproduce"]) == 1
    assert "ccsim reproduce --list shows them" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("extra", "named"),
    [(["p003"], "p003"), (["--quick"], "--quick"), (["--out", "o"], "--out"),
     (["--seeds", "2"], "--seeds"), (["--record"], "--record")],
)  # fmt: skip
def test_reproduce_list_refuses_a_paper_or_option_it_would_ignore_in_one_line_naming_it(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    extra: list[str],
    named: str,
) -> None:
    # Bug: `ccsim reproduce --list p003` listed every paper and exited 0, the p003 unread.
    monkeypatch.chdir(ROOT)
    assert main(["reproduce", "--list", *extra]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("ccsim: error: reproduce --list takes no ")
    assert named in err


@pytest.mark.parametrize("command", ["run", "validate", "sweep"])
def test_a_missing_file_is_one_line_naming_it_not_a_raw_errno(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nope.toml"
    extra = {"run": ["--out", str(tmp_path / "o")], "validate": [],
             "sweep": ["--out", str(tmp_path / "o"), "--param", "duration=1s"]}  # fmt: skip
    assert main([command, str(missing), *extra[command]]) == 1
    assert capsys.readouterr().err == f"ccsim: error: {missing}: no such file\n"


@pytest.mark.parametrize("command", ["run", "validate", "sweep"])
def test_a_set_inside_a_misspelled_link_names_the_links_there_are(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dumbbell = ROOT / "examples" / "dumbbell.toml"
    extra = {"run": ["--out", str(tmp_path / "o")], "validate": [],
             "sweep": ["--out", str(tmp_path / "o"), "--param", "duration=1s"]}  # fmt: skip
    args = [command, str(dumbbell), "--set", "links.bottlenek.rate=10Mbps", *extra[command]]
    assert main(args) == 1
    err = capsys.readouterr().err
    assert err.startswith(
        'ccsim: error: links.bottlenek: no link named "bottlenek" (did you mean "bottleneck"?); '
        "links are bottleneck, in1, out1, "
    ), err
    assert "a new link is set whole" in err and len(err.splitlines()) == 1
    if command == "run":
        assert not (tmp_path / "o").exists()


def test_a_flow_table_under_a_misspelled_name_in_the_file_names_the_flows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = tmp_path / "s.toml"
    text = (ROOT / "examples" / "dumbbell.toml").read_text()
    scenario.write_text(text + '\n[flows.f11.cc]\ntype = "cubic"\n')
    assert main(["validate", str(scenario)]) == 1
    assert capsys.readouterr().err == (
        'ccsim: error: flows.f11: no flow named "f11" (did you mean "f1"?); flows are f1, f2, '
        "f3, f4, f5, f6, f7, f8, f9, f10 (a new flow needs type, src and dst)\n"
    )


def test_a_path_given_as_the_paper_is_one_line_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["reproduce", str(tmp_path / "nope"), "--quick"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"ccsim: error: {tmp_path / 'nope'}: no plan.toml there")


def test_a_paper_id_away_from_the_repository_says_there_are_no_experiments_here(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # ccsim installed by pipx, uv tool or a wheel, run in another folder than the root.
    monkeypatch.chdir(tmp_path)
    assert main(["reproduce", "m01", "--quick", "--out", str(tmp_path / "o")]) == 1
    assert capsys.readouterr().err == (
        f'ccsim: error: no experiment "m01": no experiments/*/plan.toml in {tmp_path}; run '
        "ccsim reproduce from the repository's root, or give the paper's folder (its "
        "experiments/<id>-<name>, or a reproduction's plan/)\n"
    )
    # A reproduction's folder given: its stored plan, which reproduce takes, is named.
    (tmp_path / "r" / "plan").mkdir(parents=True)
    (tmp_path / "r" / "plan" / "plan.toml").write_text("")
    assert main(["reproduce", str(tmp_path / "r"), "--quick"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"ccsim: error: {tmp_path / 'r'}: no plan.toml there; its stored plan "
                          f"is {tmp_path / 'r' / 'plan'}; ")  # fmt: skip
    assert not (tmp_path / "o").exists()


def test_run_with_pcap_names_the_pcap_folder_on_its_results_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = tmp_path / "s.toml"
    scenario.write_text(LOSSY)
    out = tmp_path / "out"
    args = ["run", str(scenario), "--out", str(out), "--pcap", "bs:wl", "--set", 'duration="2s"']
    assert main(args) == 0
    results = capsys.readouterr().out.splitlines()[-1]
    assert results.startswith(f"results: {out}/ (flows.parquet")
    assert results.endswith("; pcap/: 3 captures)"), results
    assert len(list((out / "pcap").glob("*.pcap"))) == 3


@pytest.mark.parametrize(
    "argv",
    [["run", "s.toml", "extra", "--out", "o"], ["validate", "s.toml", "--bogus"],
     ["sweep", "s.toml", "--out", "o", "x", "y"], ["reproduce", "m01", "extra"],
     ["report", "extra"], ["bench", "--bogus"], ["explore", "extra"]],
)  # fmt: skip
def test_an_argument_left_over_after_a_command_names_that_commands_help(
    argv: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # It said "(see ccsim --help)", the top level's help, which lists no option of the
    # command (noticed in campaign 22, issue 32).
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith("ccsim: error: unrecognized arguments: "), err
    assert err.endswith(f"(see ccsim {argv[0]} --help)\n"), err
    assert list(tmp_path.iterdir()) == []


def test_the_results_line_ends_a_folder_with_one_slash_the_root_included() -> None:
    # `ccsim run --out /` said `results: //` (noticed in campaign 20, issue 32).
    from ccsim.cli import _folder_text

    assert _folder_text(Path("/")) == "/"
    assert _folder_text("/tmp/out") == "/tmp/out/"
    assert _folder_text(Path("out")) == "out/"


def test_a_folder_named_with_a_newline_is_one_results_line_that_bash_reads_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Campaign 47 (issue 32): `ccsim run ... --out $'r\n1'` printed "results: r" and "1/ (...)"
    # on two lines, which a script reading the output line by line takes for two. A name with a
    # character that is not printable is shown as bash's $'...' string; bash reads it back as
    # the folder's own name.
    scenario = tmp_path / "s.toml"
    scenario.write_text(SCENARIO)
    monkeypatch.chdir(tmp_path)
    assert main(["run", str(scenario), "--out", "r\n1", "--set", 'duration="0.1s"']) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[-1].startswith("results: $'r\\n1/' (flows.parquet"), lines
    for name in ["r\n1", "tab\there", "it's \\ a \x1b[31m", "bell\x07 한\u0085", "b\udcffyte"]:
        shown = _folder_text(name)
        assert "\n" not in shown and shown.isprintable(), shown
        argv = ["bash", "-c", f"printf %s {shown}"]
        utf8 = {**os.environ, "LC_ALL": "C.UTF-8"}  # bash writes \\u... in the locale's coding
        back = subprocess.run(argv, capture_output=True, check=True, env=utf8).stdout
        assert back == os.fsencode(name + "/"), (name, shown, back)
    assert _folder_text("plain 한 글") == "plain 한 글/"


def _experiment_t(root: Path, plan: str) -> None:
    """Experiment ``t`` (``experiments/t-test``) under ``root``: SCENARIO with ``plan``."""
    folder = root / "experiments" / "t-test"
    folder.mkdir(parents=True)
    (folder / "scenario.toml").write_text(SCENARIO)
    (folder / "plan.toml").write_text(plan)


def test_a_reproduction_into_a_folder_named_with_a_newline_says_its_site_on_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Campaign 63b (issue 32): reproduce's "site:" line printed its --out raw, across two
    # lines (a newline) or in the terminal's red (an escape sequence), under a "report:" line
    # in bash's $'...'. The lines alone are checked: the reproduction and its site are
    # stubbed (a real one takes seconds; the bytes they write are other tests' business).
    import ccsim.site
    from ccsim.experiment import reproduction

    _experiment_t(tmp_path, PLAN)
    out = tmp_path / "r\n\x1b[31m1"

    def reproduced(_folder: Path, target: Path, *_: object, **__: object) -> object:
        (target / "site").mkdir(parents=True)
        return reproduction.Reproduction(target / "report.md", target, 2, 0)

    monkeypatch.setattr(reproduction, "reproduce", reproduced)
    monkeypatch.setattr(ccsim.site, "build_site", lambda f, **_: f / "site" / "index.html")
    monkeypatch.chdir(tmp_path)
    said: list[str] = []
    reproduction.run_cli("t", out, True, 1, None, say=said.append)
    shown = "$'" + str(tmp_path) + "/r\\n\\x1b[31m1/site/index.html'"
    assert said == ["2 runs executed, 0 reused from the store", f"site: {shown}"], said


def test_a_figure_with_no_x_values_is_one_line_naming_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = PLAN.replace("values = [0.0, 0.02], quick = [0.02]", "values = []")
    assert empty != PLAN
    _experiment_t(tmp_path, empty)
    monkeypatch.chdir(tmp_path)
    assert main(["reproduce", "t", "--quick", "--out", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert "internal error" not in err and len(err.splitlines()) == 1
    assert "figures[0].x.values: empty" in err


def _dependencies() -> set[str]:
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return {re.split(r"[<>=!~;\[ ]", d, maxsplit=1)[0].lower() for d in project["dependencies"]}


def test_the_explorers_packages_are_main_dependencies_so_the_readmes_install_has_them() -> None:
    import importlib.metadata

    imported: set[str] = set()
    for source in (ROOT / "python" / "ccsim" / "explore").glob("*.py"):
        for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                imported |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                imported.add(node.module.split(".")[0])
    third_party = {m for m in imported if m not in sys.stdlib_module_names and m != "ccsim"}
    assert {"starlette", "uvicorn"} <= third_party
    owners = importlib.metadata.packages_distributions()
    needed = {d.lower() for m in third_party for d in owners.get(m, [m])}
    assert needed <= _dependencies(), f"only in an extra, or nowhere: {needed - _dependencies()}"
    pinned = {
        ln.split("==")[0].strip().lower()
        for ln in (ROOT / "constraints.txt").read_text().splitlines()
        if "==" in ln and not ln.startswith("#")
    }
    # constraints.txt pins Python 3.11's closure: tomli (Python < 3.11) is not in it.
    installed = {d.lower() for m in third_party for d in owners.get(m, [])}
    assert installed <= pinned, f"not pinned in constraints.txt: {installed - pinned}"


@pytest.mark.parametrize("module", ["distributed", "dask"])
def test_a_dask_sweep_without_dask_installed_says_how_to_install_it(
    module: str, tmp_path: Path, examples: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    # Campaign 8: with distributed imported already, dask itself hidden was not noticed.
    pytest.importorskip("distributed")
    monkeypatch.setitem(sys.modules, module, None)  # as if it were not installed
    args = ["sweep", str(examples / "random-loss.toml"), "--param", "duration=1s", "--out",
            str(tmp_path), "--executor", "dask", "--scheduler", "tcp://127.0.0.1:1"]  # fmt: skip
    assert main(args) == 1
    err = capsys.readouterr().err
    assert "internal error" not in err and len(err.splitlines()) == 1
    assert "pip install -c constraints.txt '.[dask]'" in err
    assert err.startswith("ccsim: error: --executor dask needs")


@pytest.mark.parametrize("module", ["distributed", "dask"])
def test_a_dask_sweep_in_a_python_without_dask_says_how_to_install_it(
    module: str, tmp_path: Path, examples: Path
) -> None:
    # The import itself failing, in a fresh interpreter where nothing imported Dask before.
    hide = f"import sys; sys.modules[{module!r}] = None; from ccsim.cli import main; "
    args = ["sweep", str(examples / "random-loss.toml"), "--param", "duration=1s", "--out",
            str(tmp_path / "out"), "--executor", "dask",
            "--scheduler", "tcp://127.0.0.1:1"]  # fmt: skip
    proc = subprocess.run([sys.executable, "-c", hide + f"sys.exit(main({args!r}))"],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.startswith("ccsim: error: --executor dask needs"), proc.stderr
    assert "pip install -c constraints.txt '.[dask]'" in proc.stderr
    assert len(proc.stderr.splitlines()) == 1 and not (tmp_path / "out").exists()


@pytest.mark.parametrize("module", ["distributed", "dask"])
def test_a_dask_sweep_with_dask_installed_but_failing_to_load_says_so_and_how_to_install_it(
    module: str, tmp_path: Path, examples: Path
) -> None:
    # Campaign 25 (issue 32): a Dask that raises as it loads (a library it was built against
    # gone) was "ccsim needs dask, which is installed but cannot be imported (...): install
    # ccsim again with its dependencies (pip install -c constraints.txt .)", an install that
    # leaves the extra as it is.
    broken = (
        "import sys, importlib.machinery\n"
        "class Broken:\n"
        "    def create_module(self, spec): return None\n"
        "    def exec_module(self, m): exec(compile('raise RuntimeError(\"libfoo.so gone\")',"
        " '<x>', 'exec'), m.__dict__)\n"
        "class Finder:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        f"        if name == {module!r}: return importlib.machinery.ModuleSpec(name, Broken())\n"
        "sys.meta_path.insert(0, Finder())\n"
        "from ccsim.cli import main\n"
    )
    args = ["sweep", str(examples / "random-loss.toml"), "--param", "duration=1s", "--out",
            str(tmp_path / "out"), "--executor", "dask",
            "--scheduler", "tcp://127.0.0.1:1"]  # fmt: skip
    proc = subprocess.run([sys.executable, "-c", broken + f"sys.exit(main({args!r}))"],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr == (
        "ccsim: error: --executor dask needs Dask's distributed scheduler, which is installed "
        "but cannot be imported (libfoo.so gone): pip install -c constraints.txt '.[dask]' "
        "from the repository root (the extra `dask`)\n"
    )
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("command", [["reproduce", "--list"], ["validate", "random-loss.toml"]])
def test_output_to_a_pipe_whose_reader_has_gone_stops_quietly_with_sigpipes_status(
    command: list[str], examples: Path
) -> None:
    import os
    import subprocess

    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before ccsim writes a byte: `| head -0`
    args = [examples / a if a.endswith(".toml") else a for a in command]
    try:
        proc = subprocess.run([sys.executable, "-m", "ccsim.cli", *map(str, args)], cwd=ROOT,
                              stdout=write_end, stderr=subprocess.PIPE, text=True,
                              check=False)  # fmt: skip
    finally:
        os.close(write_end)
    assert proc.stderr == "", "no '[Errno 32] Broken pipe', no 'Exception ignored'"
    assert proc.returncode == 128 + 13


def _loud_package_sweep(package: str, examples: Path, tmp_path: Path) -> tuple[Path, list[str]]:
    """A folder whose sitecustomize makes ``package`` print a line to stdout as it loads (a
    banner, a notice), and a sweep's arguments that load it (Dask's through ``--executor
    dask``)."""
    boot = tmp_path / "boot"
    boot.mkdir()
    (boot / "sitecustomize.py").write_text(
        "import sys\n"
        "class Loud:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        f"        if name != {package!r}:\n"
        "            return None\n"
        "        sys.meta_path.remove(self)\n"
        "        print('a notice as it loads', flush=True)\n"
        "sys.meta_path.insert(0, Loud())\n"
    )
    argv = ["sweep", str(examples / "random-loss.toml"), "--set", "duration=100ms", "--param",
            "links.bottleneck.loss.rate=0.01,0.02", "--out", str(tmp_path / "out")]  # fmt: skip
    if package == "distributed":
        argv += ["--executor", "dask", "--scheduler", "tcp://127.0.0.1"]
    return boot, argv


@pytest.mark.parametrize("package", ["tqdm", "distributed"])
def test_a_package_printing_as_it_loads_to_a_pipe_whose_reader_has_gone_is_sigpipes_status(
    package: str, examples: Path, tmp_path: Path
) -> None:
    # Campaign 51 (issue 32): a package that prints a line as it loads (a banner, a notice),
    # its stdout a pipe whose reader had gone, failed its import with BrokenPipeError, and
    # that was said as the package failing: "ccsim needs tqdm, which is installed but cannot
    # be imported ([Errno 32] Broken pipe): install ccsim again" (sweep, reproduce, report,
    # reproduce --list), and "--executor dask needs Dask's distributed scheduler, ...:
    # pip install '.[dask]'". The reader gone is the command's 141, as for any other write.
    import os
    import subprocess

    boot, argv = _loud_package_sweep(package, examples, tmp_path)
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before ccsim writes a byte: `| head -0`
    env = {**os.environ, "PYTHONPATH": str(boot)}
    try:
        proc = subprocess.run([sys.executable, "-m", "ccsim", *argv], cwd=ROOT, env=env,
                              stdout=write_end, stderr=subprocess.PIPE, text=True,
                              timeout=120, check=False)  # fmt: skip
    finally:
        os.close(write_end)
    assert (proc.returncode, proc.stderr) == (128 + 13, "")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("package", "stdout"),
    [("tqdm", "/dev/full"), ("tqdm", "a terminal that hung up"), ("distributed", "/dev/full")],
)
def test_a_package_printing_as_it_loads_to_a_stdout_that_fails_is_said_as_stdout_failing(
    package: str, stdout: str, examples: Path, tmp_path: Path
) -> None:
    # Campaign 51 (issue 32): the same print to /dev/full, or to a terminal that hung up (SIGHUP
    # ignored), failed the import with ENOSPC or EIO, said as "ccsim needs tqdm, which is
    # installed but cannot be imported ([Errno 28] No space left on device): install ccsim
    # again" (a bare "[Errno 5] Input/output error" from pandas, "pip install '.[dask]'" from
    # Dask's packages): stdout is what failed, as the command says of its own writes.
    import os
    import pty
    import subprocess

    boot, argv = _loud_package_sweep(package, examples, tmp_path)
    if stdout == "/dev/full":
        out = os.open("/dev/full", os.O_WRONLY)
        said = "no space left on device"
    else:
        terminal, out = pty.openpty()
        os.close(terminal)  # hung up before ccsim writes a byte
        said = "input/output error"
    env = {**os.environ, "PYTHONPATH": str(boot)}
    try:
        proc = subprocess.run([sys.executable, "-m", "ccsim", *argv], cwd=ROOT, env=env,
                              stdout=out, stderr=subprocess.PIPE, text=True, timeout=120,
                              check=False, start_new_session=True)  # fmt: skip
    finally:
        os.close(out)
    assert (proc.returncode, proc.stderr) == (1, f"ccsim: error: stdout: {said}\n")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("command", [["reproduce", "--list"], ["reproduce", "m01", "--quick"]])
def test_numpy_missing_under_pandas_is_named_with_the_cure_not_an_internal_error(
    command: list[str],
) -> None:
    # Campaign 19 (issue 32): pandas, imported first by the experiments' package, turns numpy's
    # ModuleNotFoundError into "Unable to import required dependency numpy" (an ImportError
    # naming no module): `ccsim reproduce --list` said "internal error (ImportError)".
    hide = "import sys; sys.modules['numpy'] = None; from ccsim.cli import main; "
    proc = subprocess.run([sys.executable, "-c", hide + f"sys.exit(main({command!r}))"],
                          capture_output=True, text=True, timeout=120,
                          cwd=Path(__file__).resolve().parents[2])  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.startswith("ccsim: error: ccsim needs numpy, "), proc.stderr
    assert len(proc.stderr.splitlines()) == 1


def test_the_readmes_test_command_reads_its_constraints_from_a_clone_whose_path_has_a_space(
    tmp_path: Path,
) -> None:
    # Stop 61: scripts/test gave pip its constraints as PIP_CONSTRAINT=$PWD/constraints.txt,
    # which pip splits at white space: from "~/My Projects/ccsim" its first pip ended with
    # "Could not open requirements file: ... '/.../My'". The script's lines up to its first
    # install are run there, then a pip that must read the constraints (offline, installing
    # nothing: about 0.5 s).
    clone = tmp_path / "My Projects" / "ccsim 실험"
    (clone / "scripts").mkdir(parents=True)
    (clone / "constraints.txt").write_bytes((ROOT / "constraints.txt").read_bytes())
    script = (ROOT / "scripts" / "test").read_text(encoding="utf-8")
    head = script[: script.index("python3 -m pip install")]
    assert "PIP_CONSTRAINT" in head
    (clone / "scripts" / "test").write_text(
        head + "python3 -m pip install --dry-run --no-index -q pip\n", encoding="utf-8"
    )
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    env = dict(os.environ, PATH=path)
    done = subprocess.run(["bash", str(clone / "scripts" / "test")], capture_output=True,
                          text=True, timeout=60, env=env, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr


@pytest.mark.skipif(
    not (ROOT / ".git").exists(), reason="not a git clone (a download of the sources)"
)
def test_a_clone_made_with_autocrlf_checks_out_the_scripts_and_plans_with_lf_line_ends(
    tmp_path: Path,
) -> None:
    # Stop 61: `git clone` with core.autocrlf=true wrote scripts/test with CRLF line ends, and
    # the README's test command ended at once: "/usr/bin/env: 'bash\r': No such file or
    # directory". .gitattributes asks for LF. The clone is of the last commit (~1 s).
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "-c", "core.autocrlf=true", str(ROOT), str(clone)],
                   check=True, capture_output=True, timeout=60)  # fmt: skip
    checked = [clone / "scripts" / "test", clone / ".ci" / "run",
               *sorted(clone.glob("experiments/*/plan.toml"))]  # fmt: skip
    assert len(checked) > 3
    crlf = [str(p.relative_to(clone)) for p in checked if b"\r\n" in p.read_bytes()]
    assert not crlf, f"checked out with CRLF line ends: {crlf}"
