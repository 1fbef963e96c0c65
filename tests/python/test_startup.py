# SPDX-License-Identifier: MIT
"""What ``import ccsim`` and the light commands load: not pandas, numpy, pyarrow or the rest.

Loading them is most of a short command's time (issue 11: ``ccsim --help`` went from 0.38 s to
0.05 s without them). Timing is not tested; which modules a fresh interpreter holds afterwards
is, so an import added at the top of a module fails here instead of slowing every command.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("pandas", "numpy", "pyarrow", "matplotlib", "tqdm", "scipy")

# Runs `code` in a fresh interpreter, then prints which of HEAVY it loaded, as JSON.
REPORT = "import json, sys\nprint(json.dumps(sorted(m for m in {heavy!r} if m in sys.modules)))"


def heavy_modules_after(code: str) -> list[str]:
    """The heavy modules a fresh interpreter holds after running ``code``."""
    script = code + "\n" + REPORT.format(heavy=HEAVY)
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    loaded: list[str] = json.loads(done.stdout.strip().splitlines()[-1])
    return loaded


def test_importing_ccsim_and_its_cli_loads_none_of_the_heavy_libraries() -> None:
    assert heavy_modules_after("import ccsim, ccsim.cli") == []


def test_validate_loads_none_of_the_heavy_libraries(examples: Path) -> None:
    code = (
        "import ccsim.cli\n"
        f"assert ccsim.cli.main(['validate', {str(examples / 'random-loss.toml')!r}]) == 0"
    )
    assert heavy_modules_after(code) == []


def test_help_loads_none_of_the_heavy_libraries() -> None:
    code = (
        "import ccsim.cli\n"
        "try:\n"
        "    ccsim.cli.main(['--help'])\n"
        "except SystemExit as e:\n"
        "    assert e.code == 0, e.code\n"
        "else:\n"
        "    raise AssertionError('--help did not exit')\n"
    )
    assert heavy_modules_after(code) == []


def test_run_writes_its_tables_and_summary_without_pandas(examples: Path, tmp_path: Path) -> None:
    # pyarrow writes the Parquet files from the core's numpy columns; pandas alone used to be
    # ~0.3 s of a 0.55 s `ccsim run` of P1 (issue 11).
    out = tmp_path / "out"
    code = (
        "import ccsim.cli\n"
        f"assert ccsim.cli.main(['run', {str(examples / 'random-loss.toml')!r}, '--out', "
        f"{str(out)!r}, '--set', 'duration=2s']) == 0"
    )
    loaded = heavy_modules_after(code)
    assert (out / "flows.parquet").exists()
    assert "pyarrow" in loaded
    assert "pandas" not in loaded


def test_the_check_itself_sees_a_heavy_library_once_something_imports_it() -> None:
    # Without this, a broken check (a wrong module name, an empty report) would pass the above.
    assert {"numpy", "pandas"} <= set(heavy_modules_after("import ccsim; import pandas"))


@pytest.mark.parametrize("name", ["Result", "Summary", "Scenario", "ScenarioError", "run"])
def test_every_public_name_is_there_without_importing_the_heavy_libraries(name: str) -> None:
    code = f"import ccsim\nassert ccsim.{name} is not None\nfrom ccsim import {name}"
    assert heavy_modules_after(code) == []


def test_ccsim_models_is_still_reachable_as_an_attribute_and_brings_numpy() -> None:
    code = "import ccsim\nassert callable(ccsim.models.mathis)"
    assert "numpy" in heavy_modules_after(code)


def test_the_command_entry_point_sets_its_signal_handling_before_importing_ccsim_itself() -> None:
    # The `ccsim` script imports ccsim.__main__, whose handlers must be set before the core
    # and the CLI load (a Ctrl-C during that import printed a traceback: campaign 10, issue 32).
    code = (
        "import sys, ccsim.__main__\n"
        "print(sorted(m for m in ('ccsim._core', 'ccsim.cli', 'ccsim.result', 'argparse') "
        "if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize("core", ["none", "another version"])
def test_a_ccsim_source_folder_without_its_built_core_ahead_on_the_path_is_named_in_one_line(
    core: str, tmp_path: Path, examples: Path
) -> None:
    # Campaign 39 (issue 32): a clone's python/ folder, never built, on PYTHONPATH ahead of the
    # installed ccsim (or `python -m ccsim` run from inside it): every command ended in a
    # traceback, "ModuleNotFoundError: No module named 'ccsim._core'".
    import shutil

    import ccsim

    source = Path(ccsim.__file__).parent
    copy = tmp_path / "python" / "ccsim"
    shutil.copytree(source, copy, ignore=shutil.ignore_patterns("_core*.so", "__pycache__"))
    if core == "another version":
        (copy / "_core.py").write_text("__version__ = '0.0.1'\n")  # none of the names needed
    done = subprocess.run(
        [sys.executable, "-m", "ccsim", "validate", str(examples / "random-loss.toml")],
        capture_output=True, text=True, timeout=60, cwd=copy.parent,
    )  # fmt: skip
    assert done.returncode == 1 and done.stdout == "", done.stderr
    what = {
        "none": "has no built core (ccsim._core)",
        "another version": "has a core of another version (cannot import name",
    }[core]
    assert done.stderr.startswith(f"ccsim: error: the ccsim package in {copy} {what}"), done.stderr
    assert done.stderr.count("\n") == 1 and "take it off the path" in done.stderr
