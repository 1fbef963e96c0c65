# SPDX-License-Identifier: MIT
"""Packages a user's Python holds besides ccsim's own, which ccsim's dependencies use when they
can import them (orjson for Plotly's JSON, bottleneck and numexpr for pandas, ...): present or
absent, every command writes the same bytes. Same scenario and seed, same bits, whatever else
is installed.

CI runs the suite in a Python that carries some 200 other packages; the README's venv carries
none. With orjson importable, Plotly wrote the site's figures with orjson instead of the
standard library's json (``1e-7`` for ``1e-07``, Hangul unescaped), and the same results made
another site (stop 54's CI; ccsim.site.figures now chooses the engine).

The axis is discovered, not listed: each command runs once in a child whose ``sitecustomize``
notes, with ``sys.addaudithook``, every top-level module an import is tried for, found or not.
Those outside the standard library and outside the closure of ccsim's requirements (each
dependency's own requirements, not its optional ones) are the environment's extras. The ones
present are then hidden, all at once, by a finder first on ``sys.meta_path`` (their import
fails as it does where they are not installed), in the command's process and in its workers,
and the command runs again: the same status, the same words, the same files with the same
bytes. A package looked for with ``importlib.util.find_spec`` alone is not seen; the extras
tried but absent are printed. The test command installs the usual ones
(requirements-test.txt), so the suite meets them wherever it runs.

``ccsim explore`` is one of the commands: its output is its HTTP answers (conftest's
``EXPLORE_COMMAND``: every route, and a small job to its end), each with the same status,
headers and bytes whatever else is installed (uvloop, when uvicorn could take it, reset
connections asyncio keeps waiting: campaign 46).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import sys
from importlib import metadata
from pathlib import Path

import pytest
from conftest import CHEAP_COMMANDS, EXPLORE_COMMAND, CommandOutcome, ccsim_in_cell

from ccsim.staging import requirement_closure

ROOT = Path(__file__).resolve().parents[2]

# The child's sitecustomize: the audit hook that notes every module an import is tried for,
# and the finder that hides the cell's extras.
BOOT = r'''
import json, os, sys

_cfg = json.loads(os.environ["CCSIM_EXTRAS"])
if _cfg.get("log"):
    _fd = os.open(_cfg["log"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    _seen = set()

    def _hook(event, args):
        # "import" is raised for a module not yet in sys.modules, before it is looked for.
        if event != "import":
            return
        top = args[0].partition(".")[0]
        if top in _seen or top in sys.stdlib_module_names:
            return
        _seen.add(top)
        os.write(_fd, (top + "\n").encode())

    sys.addaudithook(_hook)

_HIDDEN = frozenset(_cfg.get("hide", ()))


class _Hidden:
    """Not installed, as far as an import can tell."""

    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in _HIDDEN:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


if _HIDDEN:
    sys.meta_path.insert(0, _Hidden())
'''

#: The commands that write outputs (their workers too), each as cheap as it comes; with
#: ``CCSIM_EXTRAS_PAPERS=all`` every paper's quick reproduction too (a few minutes: each
#: paper's tables and figures have their own arithmetic, as paper 002's rate_cv, whose
#: standard deviation pandas hands to bottleneck, campaign 46).
COMMANDS = {**CHEAP_COMMANDS, **EXPLORE_COMMAND}
if os.environ.get("CCSIM_EXTRAS_PAPERS") == "all":
    for _paper in ("p000", "p001", "p002", "p003", "p004"):
        COMMANDS[f"reproduce-{_paper}"] = ["reproduce", _paper, "--quick", "--seeds", "2",
                                           "--out", "{out}"]  # fmt: skip


def _requirement_closure() -> set[str]:
    """The distributions ccsim needs, with what they need but not their optional extras
    (ccsim.staging's, which names a broken optional package of a dependency the same way)."""
    closure = requirement_closure()
    assert closure is not None, "packaging (matplotlib's) cannot be imported"
    return closure


def _extras(tried: set[str]) -> tuple[list[str], list[str]]:
    """Of the top-level modules an import was tried for, the environment's extras: present
    (with a distribution that ccsim's requirements do not bring) and absent."""
    closure = _requirement_closure()
    owners = metadata.packages_distributions()
    present, absent = [], []
    for top in sorted(tried):
        if top == "ccsim" or top.startswith("_sysconfigdata") or top == "sitecustomize":
            continue
        dists = owners.get(top)
        if dists is None:
            try:
                found = importlib.util.find_spec(top) is not None
            except (ImportError, ValueError):
                found = False
            if not found:
                absent.append(top)
            continue  # a module of no distribution (the working folder's): not an extra
        if not any(re.sub(r"[-_.]+", "-", d).lower() in closure for d in dists):
            present.append(top)
    return present, absent


def _launch(command: str, cell: Path, results: Path | None, **config: object) -> CommandOutcome:
    env = {"CCSIM_EXTRAS": json.dumps(config), "MPLCONFIGDIR": str(cell / "mpl")}
    return ccsim_in_cell(BOOT, COMMANDS[command], cell, results, env)


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished reproduction, for the report to draw."""
    tmp = tmp_path_factory.mktemp("made")
    made = _launch("reproduce", tmp, None)
    assert made.status == 0, made.stderr
    folder = tmp / "results"
    shutil.copytree(tmp / "out", folder / "m01-quick")
    return folder


def test_the_requirement_closure_holds_ccsims_needs_and_not_their_optional_packages() -> None:
    closure = _requirement_closure()
    assert {"ccsim", "numpy", "pandas", "pyarrow", "plotly", "matplotlib"} <= closure
    # pandas' and Plotly's optional accelerators are requirements of their extras only.
    assert not {"bottleneck", "numexpr", "orjson"} & closure


def test_a_package_ccsims_dependencies_use_when_installed_changes_no_byte_of_any_output(
    results: Path, tmp_path: Path
) -> None:
    met: dict[str, tuple[list[str], list[str]]] = {}
    failing = {}
    for command in COMMANDS:
        cell = tmp_path / command
        log = cell / "tried.txt"
        base = _launch(command, cell / "base", results, log=str(log))
        assert base.status == (143 if command == "explore" else 0), base.stderr  # (SIGTERM)
        met[command] = _extras(set(log.read_text(encoding="utf-8").split()))
        present = met[command][0]
        if not present:
            continue
        hidden = _launch(command, cell / "hidden", results, hide=present)
        said = (hidden.status, hidden.stdout, hidden.stderr)
        if said != (base.status, base.stdout, base.stderr):
            failing[command] = f"it said {said}, not {(base.status, base.stdout, base.stderr)}"
            continue
        differs = sorted(k for k in set(base.tree) | set(hidden.tree)
                         if base.tree.get(k) != hidden.tree.get(k))  # fmt: skip
        if differs:
            failing[command] = f"with {present} hidden it wrote other bytes in {differs[:8]}"
    shown = "\n".join(f"  {c}: present {p}, tried but absent {a}" for c, (p, a) in met.items())
    print(f"the environment's extras, by command:\n{shown}")
    # The test command installs orjson, bottleneck and numexpr (requirements-test.txt): with
    # none of them met, nothing was compared.
    assert any(p for p, _ in met.values()), f"no command tried an installed extra:\n{shown}"
    assert not failing, "\n".join(f"ccsim {c}: {why}" for c, why in failing.items())


class _RaisingRequirements:
    """A finder that makes ``packaging.requirements`` raise as it loads: from its own module
    code, or from a function of ccsim's (a stop signal's handler raises there)."""

    def __init__(self, error: BaseException, from_ccsim: bool) -> None:
        self.error, self.from_ccsim = error, from_ccsim

    def find_spec(self, name: str, path: object = None, target: object = None) -> object:
        if name not in ("packaging", "packaging.requirements"):
            return None
        return importlib.util.spec_from_loader(name, self, is_package=name == "packaging")

    def create_module(self, spec: object) -> None:
        return None

    def exec_module(self, module: object) -> None:
        if module.__name__ == "packaging":  # type: ignore[attr-defined]
            return
        raiser: dict[str, object] = {"__name__": "ccsim.cli" if self.from_ccsim else
                                     module.__name__, "error": self.error}  # type: ignore[attr-defined]  # fmt: skip
        exec(compile("def handler():\n    raise error\nhandler()\n", "<raiser>", "exec"), raiser)


@pytest.mark.parametrize("error", [RuntimeError("the C runtime is not here"), SystemExit("no AVX2"),
                                   KeyboardInterrupt(), OSError(2, "gone")])  # fmt: skip
def test_ccsims_requirements_are_unknown_not_an_error_when_packaging_raises_as_it_loads(
    error: BaseException, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Stop 61: matplotlib imports packaging, so the words for its failure met packaging
    # raising again here, and reproduce ended with a traceback (the extras matrix).
    monkeypatch.delitem(sys.modules, "packaging", raising=False)
    monkeypatch.delitem(sys.modules, "packaging.requirements", raising=False)
    monkeypatch.setattr(sys, "meta_path", [_RaisingRequirements(error, False), *sys.meta_path])
    assert requirement_closure() is None


def test_a_stop_signal_landing_while_packaging_loads_still_stops_the_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delitem(sys.modules, "packaging", raising=False)
    monkeypatch.delitem(sys.modules, "packaging.requirements", raising=False)
    raising = _RaisingRequirements(KeyboardInterrupt(), from_ccsim=True)
    monkeypatch.setattr(sys, "meta_path", [raising, *sys.meta_path])
    with pytest.raises(KeyboardInterrupt):
        requirement_closure()
