# SPDX-License-Identifier: MIT
"""Every package ccsim uses, missing or broken, under every command: a matrix.

Campaigns 3 to 27 of issue 32 found a package missing or broken one at a time (numpy under
pandas, pyarrow after a sweep's runs, tomli_w stopping ``--help``, h11 found after the URL was
said, matplotlib after bench's runs, dask under ``sweep.execute(cluster=)``...), each pinned by
a test of its own. This test takes the class: the packages are DISCOVERED, not listed (every
top-level package ccsim's sources import or look up, pyproject.toml's dependencies and extras,
and what those need in turn, as installed here), so a new import is covered without an edit.

Each cell runs one command in a child interpreter whose ``sitecustomize`` (first on
PYTHONPATH, so the children a command starts, bench's cases and a process pool's workers,
get it too) makes one package

- missing: no finder finds it or its submodules, and its distribution's metadata is gone, as
  after ``pip uninstall``;
- broken: its ``__init__`` raises ImportError naming an inner module, or AttributeError, as a
  half-upgraded install does; or it imports and a module of it loaded later fails (a shared
  library gone: pyarrow.parquet's libparquet);
- no-init: its folder left without its ``__init__.py`` (an uninstall cut short, files removed
  by hand), the rest and its metadata still there: it imports as a namespace package, its
  submodules found in the folder but nothing of its own (campaign 36: pyarrow so made
  ``ccsim run`` fail after its run; a single-module package such as six has no folder to
  lose, and its cells run with it whole);
- no-metadata: it imports whole, but its distribution's metadata (``*.dist-info``) is gone,
  so ``importlib.metadata.version`` of it fails (campaign 36: pandas so stopped ``ccsim run``
  after its run);
- bad-metadata: it imports whole, but its METADATA cannot be read (a byte that is not UTF-8),
  so asking its version raises UnicodeDecodeError (campaign 37: pandas' and matplotlib's so
  failed a run and a reproduction after their runs);
- raises-*: its ``__init__`` raises what is no ImportError: an OSError, a SyntaxError (a module
  of it cut short), a RuntimeError, SystemExit (``sys.exit()`` at a check of the CPU) or
  KeyboardInterrupt with no signal sent (campaign 50: SystemExit printed its bare words, and
  ``ccsim run`` met it after its run);
- shadowed: a module of the user's named like it (``numpy.py``, or a folder ``numpy/`` with
  an empty ``__init__.py``) first on PYTHONPATH, as a script in the working folder is under
  ``python -m ccsim``: it imports, so no look for a missing package sees it (campaign 33).

What each cell must do: its work without the package (status 0, its output whole), or status 1
with ONE ``ccsim: error:`` line naming the package (or the package that imports it, for a
broken one: decided in campaign 25) and the cure, no traceback, no "internal error", and
nothing written to --out, and no run gone to its end before the error; shadowed, the line
names the user's file (or folder) instead of a reinstall, which changes nothing. The Python
API raises an ImportError whose message names it (a package's own AttributeError or raises-*
exception, and what Python raises for a shadowed one, pass through).

The matrix (packages x states x commands) is ~10,500 cells here (50 packages); by default a
sample chosen by a fixed seed runs (CCSIM_EXTRAS_CELLS=N sets its size, ``all`` runs every
cell); ``python tests/python/test_extras_matrix.py [NAME...]`` runs them all, or those of the
packages, states or commands named, and prints the failing ones.
"""

from __future__ import annotations

import ast
import builtins
import json
import os
import random
import re
import signal
import subprocess
import sys
import textwrap
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ROOT / "python" / "ccsim"
FILE = str(ROOT / "examples" / "random-loss.toml")
# A run of ~1.5 s: longer than the ~0.5 s in which `ccsim run` stops a run whose table
# libraries failed to import (it imports them while the run goes on).
LONG = str(SOURCES / "benchmarks" / "p2.toml")

# The child's sitecustomize: CCSIM_TEST_HIDE is {"top": "numpy", "dists": [...], "state": ...}.
SITECUSTOMIZE = r'''
import json, os, sys

_spec = json.loads(os.environ["CCSIM_TEST_HIDE"])
_top, _state, _dists = _spec["top"], _spec["state"], set(_spec["dists"])


def _ours(fullname):
    return fullname.partition(".")[0] == _top


class _BrokenLoader:
    """The package's __init__ as a half-upgraded install runs it: its code raises."""

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        if _state == "broken-sub":
            name = module.__name__
            code = (f"raise ImportError(\"{name}: libfoo.so.3: cannot open shared object "
                    f"file\", name='{name}')")
        elif _state == "broken-import":
            code = (f"raise ImportError(\"cannot import name '_impl' from '{_top}._inner'\", "
                    f"name='{_top}._inner')")
        elif _state == "raises-oserror":
            # A file of its own it reads as it loads gone, or a library ctypes loads.
            code = (f"raise OSError(2, 'No such file or directory', "
                    f"'/site-packages/{_top}/_data/table.json')")
        elif _state == "raises-syntax":
            # A module of it half written (an upgrade cut short): its __init__'s import of
            # it fails to compile.
            code = (f"raise SyntaxError('invalid syntax', ('/site-packages/{_top}/_inner.py', "
                    "3, 5, 'def (\\n'))")
        elif _state == "raises-runtime":
            code = f"raise RuntimeError('{_top}: the C runtime it was built for is not here')"
        elif _state == "raises-exit":
            code = f"raise SystemExit('{_top}: cannot start: CPU lacks AVX2')"
        elif _state == "raises-interrupt":
            code = "raise KeyboardInterrupt"
        else:
            code = f"raise AttributeError(\"module '{_top}._inner' has no attribute '_impl'\")"
        exec(compile(code, f"/site-packages/{_top}/__init__.py", "exec"), module.__dict__)


class _Marking:
    """Loads the core and marks, in the file $CCSIM_TEST_RAN, each run that went to its end,
    whether it returned or raised, and was not stopped by its progress callback (in any
    process: a pool's workers and bench's cases load this file too)."""

    def __init__(self, inner):
        self.inner = inner

    def create_module(self, spec):
        return self.inner.create_module(spec)

    def exec_module(self, module):
        self.inner.exec_module(module)
        run = module.run

        def marked(text, overrides=(), seed=None, progress=None, pcap_dir=None):
            stopped = []

            def reported(*args):
                try:
                    return progress(*args)
                except BaseException:
                    stopped.append(True)
                    raise

            try:
                return run(text, overrides, seed, reported if progress else None, pcap_dir)
            finally:
                if not stopped:  # ran to its end, returned or not
                    with open(os.environ["CCSIM_TEST_RAN"], "a") as f:
                        f.write("run\n")

        module.run = marked


def _named(dist):
    return (dist.metadata["Name"] or "").lower().replace("_", "-")


import importlib.metadata as _metadata


class _Damaged(_metadata.Distribution):
    """A distribution whose METADATA has a byte that is not UTF-8 (a disk error, an editor's
    save in another encoding): reading it raises, as importlib.metadata does for such a file."""

    def __init__(self, inner):
        self.inner = inner
        self._path = getattr(inner, "_path", None)  # its *.dist-info, as a PathDistribution's

    def read_text(self, filename):
        if filename in ("METADATA", "PKG-INFO"):
            raise UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte")
        return self.inner.read_text(filename)

    def locate_file(self, path):
        return self.inner.locate_file(path)


class _Hiding:
    """Wraps a finder: the hidden package is not found (missing) or found broken."""

    def __init__(self, inner):
        self.inner = inner

    def find_spec(self, fullname, path=None, target=None):
        if fullname == "ccsim._core":
            spec = self.inner.find_spec(fullname, path, target)
            if spec is not None:
                spec.loader = _Marking(spec.loader)
            return spec
        if _ours(fullname) and _state == "no-init" and "." not in fullname:
            # Its folder as it is, but no __init__ runs: Python makes it a namespace package
            # whose submodules are still found in the folder.
            find = getattr(self.inner, "find_spec", None)
            real = None if find is None else find(fullname, path, target)
            if real is None or not real.submodule_search_locations:
                return real
            import importlib.machinery
            spec = importlib.machinery.ModuleSpec(fullname, None, is_package=True)
            spec.submodule_search_locations = list(real.submodule_search_locations)
            return spec
        whole = ("no-metadata", "bad-metadata", "shadowed", "shadowed-folder")
        if _ours(fullname) and _state not in whole:
            if _state == "broken-sub":
                top = sys.modules.get(_top)
                loaded = top is not None and not getattr(top.__spec__, "_initializing", False)
                if not loaded or "." not in fullname:
                    find = getattr(self.inner, "find_spec", None)
                    return None if find is None else find(fullname, path, target)
            elif _state == "missing" or "." in fullname:
                return None
            import importlib.machinery
            return importlib.machinery.ModuleSpec(fullname, _BrokenLoader(), is_package=True)
        find = getattr(self.inner, "find_spec", None)
        return None if find is None else find(fullname, path, target)

    def find_distributions(self, *args, **kwargs):
        find = getattr(self.inner, "find_distributions", None)
        if find is None:
            return iter(())
        if _state == "bad-metadata":
            return (_Damaged(d) if _named(d) in _dists else d for d in find(*args, **kwargs))
        if _state not in ("missing", "no-metadata"):
            return find(*args, **kwargs)
        return (d for d in find(*args, **kwargs) if _named(d) not in _dists)

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def invalidate_caches(self):
        f = getattr(self.inner, "invalidate_caches", None)
        if f is not None:
            f()


for _name in [n for n in sys.modules if _ours(n)]:
    del sys.modules[_name]
sys.meta_path[:] = [_Hiding(f) for f in sys.meta_path]
'''

STDLIB = set(sys.stdlib_module_names) | {"ccsim", "_core"}
LOOKUPS = {"import_module", "find_spec", "__import__", "version"}


def _tops_in_sources() -> set[str]:
    """Top-level names ccsim's sources import (``import x``, ``from x import``) or look up by
    name (a string given to import_module/find_spec/__import__/metadata.version, or iterated
    by a loop that does)."""
    found: set[str] = set()
    for path in SOURCES.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found |= {a.name.partition(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.partition(".")[0])
            elif isinstance(node, (ast.Call, ast.For)):
                calls = [node] if isinstance(node, ast.Call) else list(ast.walk(node))
                if not any(_callee(c) in LOOKUPS for c in calls if isinstance(c, ast.Call)):
                    continue
                where = node.args if isinstance(node, ast.Call) else [node.iter]
                for arg in where:
                    for c in ast.walk(arg):
                        if isinstance(c, ast.Constant) and isinstance(c.value, str):
                            if re.fullmatch(r"[A-Za-z_][\w.]*", c.value):
                                found.add(c.value.partition(".")[0])
    return found - STDLIB


def _callee(call: ast.Call) -> str:
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""


def _norm(dist: str) -> str:
    return re.sub(r"[-_.]+", "-", dist).lower()


def _requirements(dist: str | None) -> list[tuple[str, set[str]]]:
    """(name, extras) of what ``dist`` requires here (its markers evaluated); for ccsim, read
    from pyproject.toml with every extra."""
    from packaging.requirements import Requirement

    if dist is None:
        from ccsim._tomllib import tomllib

        project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
        lines = list(project["dependencies"])
        for extra in project.get("optional-dependencies", {}).values():
            lines += extra
        extras_on: set[str] = set()
    else:
        try:
            lines = metadata.requires(dist) or []
        except metadata.PackageNotFoundError:
            return []
        extras_on = _EXTRAS.get(_norm(dist), set())
    out = []
    for line in lines:
        req = Requirement(line)
        env_ok = req.marker is None or any(
            req.marker.evaluate({"extra": e}) for e in (extras_on or {""})
        )
        if env_ok:
            out.append((_norm(req.name), set(req.extras)))
    return out


_EXTRAS: dict[str, set[str]] = {}


@lru_cache(maxsize=1)
def packages() -> dict[str, list[str]]:
    """Every top-level module a user can lose, with the distributions that hold it: ccsim's
    own imports and dependencies and, transitively, what those require."""
    owners: dict[str, list[str]] = {}
    for top, dists in metadata.packages_distributions().items():
        owners[top] = sorted({_norm(d) for d in dists})
    tops_of: dict[str, set[str]] = {}
    for top, dists in owners.items():
        for d in dists:
            tops_of.setdefault(d, set()).add(top)
    wanted = {t for t in _tops_in_sources() if t in owners}
    seen: set[str] = set()
    queue = [(d, e) for d, e in _requirements(None)]
    queue += [(d, set()) for t in wanted for d in owners[t]]
    while queue:
        dist, extras = queue.pop()
        if extras - _EXTRAS.get(dist, set()):
            _EXTRAS.setdefault(dist, set()).update(extras)
            seen.discard(dist)
        if dist in seen or dist not in tops_of:
            continue
        seen.add(dist)
        queue += _requirements(dist)
    result = {}
    for dist in seen:
        for top in tops_of[dist]:
            if top.startswith("_") or top in STDLIB or not top.isidentifier():
                continue
            result[top] = owners[top]
    return dict(sorted(result.items()))


# raises-*: its __init__'s code raises what is no ImportError (campaign 50): an OSError (a
# file of its own gone, a library it loads with ctypes), a SyntaxError (a module of it cut
# short, or written for a newer Python), a RuntimeError (a CPU or runtime check), SystemExit
# (sys.exit() at such a check) or KeyboardInterrupt with no signal sent. The Python API lets
# each through as the package raised it, its traceback naming the package's file.
RAISING = {"raises-oserror": "OSError", "raises-syntax": "SyntaxError",
           "raises-runtime": "RuntimeError", "raises-exit": "SystemExit",
           "raises-interrupt": "KeyboardInterrupt"}  # fmt: skip

# broken-sub: the package imports, and a module of it loaded later fails (pyarrow.parquet
# with its libparquet gone, a conda pyarrow-core without it).
# shadowed: a module of the user's named like the package (``numpy.py``, or a folder
# ``numpy/`` holding an empty ``__init__.py``) in a folder first on PYTHONPATH, as a script of
# that name in the working folder is under ``python -m ccsim`` (campaign 33, issue 32).
STATES = ["missing", "broken-import", "broken-attr", "broken-sub", "shadowed",
          "shadowed-folder", "no-init", "no-metadata", "bad-metadata", *RAISING]  # fmt: skip

# Each command: argv (or "api:" code), and the files a success must leave in {out}.
COMMANDS: dict[str, tuple[list[str], list[str]]] = {
    "import": (["api:import ccsim"], []),
    "help": (["--help"], []),
    "version": (["--version"], []),
    "validate": (["validate", FILE], []),
    "run": (["run", LONG, "--set", "duration=30s", "--out", "{out}"],
            ["flows.parquet", "links.parquet", "series.parquet", "scenario.toml"]),
    "run-pcap": (["run", LONG, "--set", "duration=30s", "--pcap", "h1", "--out", "{out}"],
                 ["flows.parquet", "scenario.toml", "pcap"]),
    "sweep": (["sweep", FILE, "--set", "duration=100ms", "--param",
               "links.bottleneck.loss.rate=0.01,0.02", "--workers", "1", "--out", "{out}"],
              ["flows.parquet", "links.parquet", "runs"]),
    "reproduce": (["reproduce", "m01", "--quick", "--seeds", "1", "--workers", "1",
                   "--out", "{out}"], ["report.md", "site"]),
    "report": (["report", "--results", "{repro}", "--out", "{out}"], ["index.html"]),
    "bench": (["bench", "--only", "F10", "--repeat", "1", "--plot", "{out}/scale.png"],
              ["scale.png"]),
    "explore": (["explore", "--results", "{out}", "--port", "{port}"], []),
    "api-run": (["api:from ccsim import Scenario, run\n"
                 "r = run(Scenario.from_toml({file!r}), overrides=['duration=100ms'])\n"
                 "assert len(r.flows)"], []),
    "api-parquet": (["api:from ccsim import Result\n"
                     "assert len(Result.from_parquet({run!r}).flows)"], []),
    # The command line's Dask executor (campaign 50), given an address without a port: the
    # cell's baseline is the line refusing it, which Dask's own parsing gives once its
    # packages have loaded (a refused port is tried for 4 s; this takes none of that).
    "sweep-dask": (["sweep", FILE, "--set", "duration=100ms", "--param",
                    "links.bottleneck.loss.rate=0.01,0.02", "--executor", "dask",
                    "--scheduler", "tcp://127.0.0.1", "--out", "{out}"], []),
    "api-cluster": (["api:from ccsim import sweep\nfrom ccsim.scenario import Scenario\n"
                     "runs = sweep.plan_grid(Scenario.from_toml({file!r}).to_toml(), "
                     "['duration=100ms'], [], [1])\n"
                     "sweep.execute(runs, sweep.Store({out!r}), cluster='tcp://127.0.0.1:9')"],
                    []),
}  # fmt: skip


# The folder these commands are given exists before them (bench's --plot goes into one, the
# explorer's --results is one): a failure must leave it empty.
MADE_BEFORE = {"bench", "explore"}


def cells() -> list[tuple[str, str, str]]:
    return [(p, s, c) for p in packages() for s in STATES for c in COMMANDS]


def _sample() -> list[tuple[str, str, str]]:
    every = cells()
    want = os.environ.get("CCSIM_EXTRAS_CELLS", "20")
    if want == "all":
        return every
    return sorted(random.Random(32).sample(every, min(int(want), len(every))))


@pytest.fixture(scope="module")
def fixtures(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return make_fixtures(tmp_path_factory.mktemp("fixtures"))


def make_fixtures(base: Path) -> dict[str, str]:
    """A run's folder and a reproduction, made once with every package there."""
    env = dict(os.environ, CCSIM_RESULTS=str(base / "results"))
    run = base / "run"
    repro = base / "repro"
    for argv in (["run", FILE, "--set", "duration=100ms", "--out", str(run)],
                 ["reproduce", "m01", "--quick", "--seeds", "1", "--out", str(repro)]):  # fmt: skip
        subprocess.run([sys.executable, "-m", "ccsim", *argv], cwd=ROOT, env=env, check=True,
                       capture_output=True, timeout=600)  # fmt: skip
    return {"run": str(run), "repro": str(repro)}


def run_cell(package: str, state: str, command: str, fixtures: dict[str, str], tmp: Path,
             port: int = 0) -> list[str]:  # fmt: skip
    """Run one cell; the invariants it breaks, in words (empty: it passed)."""
    hider = tmp / "hider"
    hider.mkdir()
    (hider / "sitecustomize.py").write_text(SITECUSTOMIZE, encoding="utf-8")
    out = tmp / "out"
    spec = {"top": package, "state": state, "dists": packages()[package]}
    first = [str(hider)]
    if state.startswith("shadowed"):
        mine = tmp / "mine"
        shadow = (
            mine / package / "__init__.py" if state == "shadowed-folder" else mine / f"{package}.py"
        )
        shadow.parent.mkdir(parents=True)
        shadow.write_text("x = 1\n", encoding="utf-8")
        spec["shadow"] = str(shadow.parent if state == "shadowed-folder" else shadow)
        first.insert(0, str(mine))
    path = os.pathsep.join([*first, os.environ.get("PYTHONPATH", "")])
    ran = tmp / "ran"
    env = dict(os.environ, CCSIM_TEST_HIDE=json.dumps(spec), CCSIM_RESULTS=str(tmp / "res"),
               PYTHONPATH=path, CCSIM_TEST_RAN=str(ran))  # fmt: skip
    env.pop("CCSIM_TRACEBACK", None)
    argv, outputs = COMMANDS[command]
    port = port or _free_port()
    fill = {"out": str(out), "file": FILE, "port": str(port), **fixtures}
    if command in MADE_BEFORE:
        out.mkdir()
    if argv[0].startswith("api:"):
        code = argv[0][4:].format(**{k: v for k, v in fill.items()})
        probe = textwrap.dedent(f"""
            import sys
            try:
                exec({code!r})
            except BaseException as e:
                print("RAISED", type(e).__name__, isinstance(e, ImportError),
                      repr(str(e)), file=sys.stderr)
                sys.exit(3)
        """)
        cmd = [sys.executable, "-c", probe]
    else:
        args = [a.format(**fill) for a in argv]
        cmd = [sys.executable, "-m", "ccsim", *args]
    if command == "explore":
        return _explore_cell(cmd, env, package, spec, out)
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
                          check=False)  # fmt: skip
    problems = _judge(command, proc.returncode, proc.stdout, proc.stderr, package, spec, out,
                      outputs)  # fmt: skip
    if proc.returncode != 0 and ran.exists() and not argv[0].startswith("api:"):
        # Found after a run finished: the user waited for the runs (hours of a reproduction)
        # to be told what a look before them would have said.
        problems.append("the error came after a run finished")
    return problems


def _explore_cell(cmd: list[str], env: dict[str, str], package: str, spec: dict[str, Any],
                  out: Path) -> list[str]:  # fmt: skip
    # SIGINT's default restored: a shell runs a background job with it ignored, and the
    # explorer keeps it so (decided in campaign 25), which would be a harness's hang.
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            preexec_fn=_sigint_default)  # fmt: skip
    lines = []
    assert proc.stdout is not None and proc.stderr is not None
    for line in proc.stdout:  # the URL line, or the end of the output (an error)
        lines.append(line)
        if "http://" in line:
            break
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
    try:
        rest, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        rest, err = proc.communicate()
        return ["did not stop within 60 s of SIGINT"]
    stdout = "".join(lines) + rest
    started = any("http://" in line for line in lines)
    status = 0 if started and proc.returncode in (0, 130) else proc.returncode
    problems = _judge("explore", status, stdout, err if not started else "", package, spec, out,
                      [])  # fmt: skip
    if started and ("Traceback" in err or "internal error" in err):
        problems.append(f"started, then: {err.strip()[-300:]}")
    return problems


def _free_port() -> int:
    """A port no one listens on now (the explorer refuses --port 0)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _sigint_default() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _names(message: str, package: str, spec: dict[str, Any], state: str) -> bool:
    """Whether ``message`` names the package (its import or distribution name)."""
    said = message.lower()
    names = {package.lower(), *spec["dists"]}
    return any(n.lower() in said for n in names)


def _judge(command: str, status: int, stdout: str, stderr: str, package: str,
           spec: dict[str, Any], out: Path, outputs: list[str]) -> list[str]:  # fmt: skip
    problems = []
    if command.startswith("api") or command == "import":
        if status == 0:
            return []
        raised = re.match(r"RAISED (\w+) (True|False) (.*)", stderr.strip().splitlines()[-1])
        if raised is None:
            return [f"status {status}: {stderr.strip()[-400:]}"]
        kind, is_import, message = raised.groups()
        if command == "api-cluster" and kind == "ClusterError" and "cannot reach" in message:
            return []  # the cell's baseline: no scheduler at that address
        if _raised_as(kind, RAISING.get(spec["state"])):
            return []  # the package's own exception, let through
        # A package whose own code raises AttributeError raises it through the API as it
        # would through any import of it: its traceback names the package's file.
        # A module of the user's shadowing the package, or the package's folder left without
        # its modules, raises what Python raises for it (AttributeError: "module 'numpy' has
        # no attribute ..."), naming the package.
        if is_import != "True" and spec["state"] not in (
            "broken-attr",
            "shadowed",
            "shadowed-folder",
            "no-init",
        ):
            problems.append(f"raised {kind}, not an ImportError: {message[:300]}")
        if not _names(message, package, spec, spec["state"]):
            problems.append(f"{kind} does not name {package}: {message[:300]}")
        elif spec["state"] == "bad-metadata" and "rm -r" not in message:
            problems.append(f"{kind} gives a cure pip cannot carry out: {message[:300]}")
        return problems
    if status == 0:
        missing = [o for o in outputs if not (out / o).exists()]
        if missing:
            problems.append(f"status 0 without {missing}")
        if "Traceback" in stderr or "internal error" in stderr:
            problems.append(f"status 0 with: {stderr.strip()[-300:]}")
        return problems
    lines = stderr.strip().splitlines()
    baseline = len(lines) == 1 and "not a Dask scheduler's address" in lines[0]
    if command == "sweep-dask" and baseline and not out.exists():
        return problems  # the address refused, once Dask's packages have loaded
    if "Traceback" in stderr:
        problems.append("traceback: " + " | ".join(lines[-3:])[:400])
    elif len(lines) != 1 or not lines[0].startswith("ccsim: error: "):
        problems.append(f"status {status}, stderr not one error line: {stderr.strip()[:400]}")
    elif "internal error" in stderr:
        problems.append(f"internal error: {lines[0][:300]}")
    else:
        if not _names(lines[0], package, spec, spec["state"]):
            problems.append(f"error does not name {package}: {lines[0][:300]}")
        if "shadow" in spec:
            if spec["shadow"] not in lines[0]:
                problems.append(f"error does not name {spec['shadow']}: {lines[0][:300]}")
            if "install ccsim again" in lines[0] or "not installed" in lines[0]:
                # Installing again changes nothing while the user's module comes first.
                problems.append(f"error sends the user to reinstall: {lines[0][:300]}")
        elif "pip install" not in lines[0]:
            problems.append(f"error gives no cure: {lines[0][:300]}")
        elif spec["state"] == "bad-metadata" and "rm -r" not in lines[0]:
            # pip reads the installed metadata before it replaces it, and fails on it as
            # the package did: only with its folder removed first can it install (stop 61).
            problems.append(f"error gives a cure pip cannot carry out: {lines[0][:300]}")
    left = sorted(p.name for p in out.iterdir()) if out.is_dir() else []
    if left or (out.exists() and command not in MADE_BEFORE):
        problems.append(f"failed, leaving {out.name}/ with {left}")
    hidden = [p.name for p in out.parent.iterdir() if p.name.startswith(".")]
    if hidden:
        problems.append(f"failed, leaving {hidden}")
    return problems


def _raised_as(kind: str, state_raises: str | None) -> bool:
    """Whether an exception of the built-in class named ``kind`` is one ``state_raises`` names:
    ``OSError(2, ...)``, as a package raises it for a file of its own gone, is built as its
    subclass FileNotFoundError (cloudpickle's, imported by pyarrow as ccsim's API reads a
    table, came through by that name in campaign 60's full run)."""
    raised, wanted = getattr(builtins, kind, None), getattr(builtins, state_raises or "", None)
    return isinstance(raised, type) and isinstance(wanted, type) and issubclass(raised, wanted)


def named_by_importer(problem: str, package: str) -> bool:
    """A broken package named by the package that imports it ("ccsim needs pandas, which is
    installed but cannot be imported (... numpy._inner ...)"): decided, not a defect, when the
    package is in the message's reason."""
    return f"{package}._inner" in problem


@pytest.mark.parametrize(("package", "state", "command"), _sample())
def test_a_package_missing_or_broken_is_named_with_its_cure_or_not_needed(
    package: str, state: str, command: str, fixtures: dict[str, str], tmp_path: Path
) -> None:
    problems = run_cell(package, state, command, fixtures, tmp_path)
    assert not problems, f"{package} {state}, {command}: " + "; ".join(problems)


# The cells that failed when the matrix was first run (campaign 30, issue 32), always run:
# `ccsim run` met a broken pyarrow or numpy, and numpy or pandas missing, only after its run;
# sweep a broken part of pandas' Parquet writing after its runs ("internal error: Unable to
# find a usable engine"), and reproduce a broken matplotlib.pyplot; click (uvicorn's and
# distributed's) missing was said of the package that needs it, "not installed".
FOUND = [("pyarrow", "broken-sub", "run"), ("pyarrow", "broken-attr", "run"),
         ("numpy", "broken-import", "run"), ("numpy", "missing", "run"),
         ("pandas", "missing", "run"), ("pandas", "broken-sub", "sweep"),
         ("pandas", "broken-sub", "report"), ("matplotlib", "broken-sub", "reproduce"),
         ("click", "missing", "explore"), ("click", "missing", "api-cluster"),
         ("distributed", "missing", "api-cluster"),
         # A module of the user's shadowing a package (campaign 34): explore met a plotly.py
         # at plotly.__version__ ("internal error (AttributeError)"); bench --only F10 a
         # tomli_w.py in the case's child, after the other cases had run; and a folder numpy/
         # with an __init__.py was "installed but cannot be imported: install ccsim again".
         ("plotly", "shadowed", "explore"), ("tomli_w", "shadowed", "bench"),
         ("numpy", "shadowed-folder", "run"),
         # Campaign 37b by hand, then the state bad-metadata: pandas' METADATA unreadable
         # failed `ccsim run` after its run, matplotlib's a reproduction after its runs; any
         # package's failed `sweep.execute(cluster=)` with a bare UnicodeDecodeError (distributed
         # reads every distribution's entry points as it loads), tqdm's `from ccsim import
         # sweep` (tqdm reads its own version as it loads).
         ("pandas", "bad-metadata", "run"), ("matplotlib", "bad-metadata", "reproduce"),
         ("plotly", "bad-metadata", "api-cluster"),
         ("tqdm", "bad-metadata", "api-cluster"),
         # Campaign 50, the raises-* states: a package's sys.exit() as it loaded printed its
         # bare words and ended 1 (`ccsim run` after its run: the table libraries' thread
         # dropped it), KeyboardInterrupt said "ccsim: interrupted" of no signal, and a
         # SyntaxError in dateutil read "pandas ... (invalid syntax (_inner.py, line 3))".
         ("numpy", "raises-exit", "run"), ("PIL", "raises-exit", "report"),
         ("numpy", "raises-interrupt", "run"), ("dateutil", "raises-syntax", "sweep"),
         # ... and under --executor dask a distributed.py of the user's, or distributed's
         # folder without its __init__.py, was "--scheduler tcp://127.0.0.1:9: the address
         # answered, but not as a Dask scheduler", of a port where nothing listens: the
         # probe's import had failed.
         ("distributed", "shadowed", "sweep-dask"),
         ("distributed", "no-init", "sweep-dask"),
         # Stop 61: packaging (which matplotlib and dask load) raising as it loaded ended
         # reproduce, bench and a Dask sweep with its traceback: the words for the failure
         # imported it again to read ccsim's requirements, and met it raising again.
         ("packaging", "raises-runtime", "reproduce"),
         ("packaging", "raises-exit", "sweep-dask"),
         # ... and plotly's METADATA unreadable (it reads its version as it loads) ended report
         # with a traceback: the words for it read every distribution's metadata again.
         ("plotly", "bad-metadata", "report"),
         # ... and zipp, which importlib_metadata loads as it first looks into a
         # distribution, raising as it loaded ended a Dask sweep with its traceback.
         ("zipp", "raises-interrupt", "sweep-dask")]  # fmt: skip


@pytest.mark.parametrize(("package", "state", "command"), FOUND)
def test_a_cell_the_matrix_found_failing_passes(
    package: str, state: str, command: str, fixtures: dict[str, str], tmp_path: Path
) -> None:
    problems = run_cell(package, state, command, fixtures, tmp_path)
    assert not problems, f"{package} {state}, {command}: " + "; ".join(problems)


def _ccsim_with_a_package_shadowed(
    tmp_path: Path, package: str, init_source: str, args: list[str]
) -> subprocess.CompletedProcess[str]:
    """``python -m ccsim ARGS`` with ``package`` replaced by one whose ``__init__`` is
    ``init_source`` (put first on PYTHONPATH)."""
    (tmp_path / package).mkdir()
    (tmp_path / package / "__init__.py").write_text(init_source)
    return subprocess.run(
        [sys.executable, "-m", "ccsim", *args], capture_output=True, text=True, timeout=60,
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
    )  # fmt: skip


def test_a_package_raising_an_error_without_words_as_it_loads_is_said_by_the_errors_name(
    tmp_path: Path,
) -> None:
    # Campaign 64b (issue 32): a package whose __init__ raised an exception with no message
    # (an `assert` failing, a bare RecursionError) was said "ccsim needs markdown_it, which is
    # installed but cannot be imported (): install ccsim again", its reason an empty pair of
    # parentheses.
    out = tmp_path / "site"
    done = _ccsim_with_a_package_shadowed(
        tmp_path, "markdown_it", "assert False\n",
        ["report", "--results", str(tmp_path), "--out", str(out)],
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert "cannot be imported (markdown_it raised AssertionError, with no words of its own, as " \
        "it loaded): install ccsim again" in done.stderr, done.stderr  # fmt: skip
    assert not out.exists()


def test_a_package_the_explorer_imports_itself_raising_an_os_error_as_it_loads_is_named(
    tmp_path: Path,
) -> None:
    # Campaign 64b (issue 32): h11 or anyio whose __init__ raised an OSError (a file of its own
    # unreadable, a disk failing) stopped `ccsim explore` with "ccsim: error: [Errno 5] I/O
    # error", naming neither the package nor the cure: imported by an `import` statement (not
    # importlib.import_module), its traceback had no frame of the import system, which
    # CPython removes, and the error was taken for one of the explorer's own.
    from conftest import free_port

    package = "h11"
    (tmp_path / "results").mkdir()
    done = _ccsim_with_a_package_shadowed(
        tmp_path, package, "raise OSError(5, 'I/O error')\n",
        ["explore", "--results", str(tmp_path / "results"), "--port", str(free_port())],
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (1, ""), done.stderr
    assert done.stderr.startswith(
        f"ccsim: error: ccsim needs {package}, which is installed but cannot be imported "
        "([Errno 5] I/O error): install ccsim again"
    ), done.stderr


def test_numpy_raising_an_os_error_as_a_run_loads_it_is_named_not_the_out_folder(
    tmp_path: Path,
) -> None:
    # Campaign 64b (issue 32): numpy whose __init__ raised an OSError (a file of its own on a
    # failing disk) ended `ccsim run` with "ccsim: error: <out>: input/output error; nothing
    # was written to <out>", a disk fault of --out, which was never written to: imported by
    # an `import` statement, its traceback had no frame of the import system, and the run's
    # staging took it for a failed write.
    out = tmp_path / "out"
    done = _ccsim_with_a_package_shadowed(
        tmp_path, "numpy", "raise OSError(5, 'I/O error')\n",
        ["run", FILE, "--set", "duration=100ms", "--out", str(out)],
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (1, ""), done.stderr
    assert done.stderr.startswith(
        "ccsim: error: ccsim needs numpy, which is installed but cannot be imported ([Errno 5] "
        "I/O error): install ccsim again"
    ), done.stderr
    assert not out.exists()


def test_the_matrix_discovers_ccsims_packages_and_what_they_need() -> None:
    # The discovery is the test's reach: pinned so that it cannot shrink to nothing unseen.
    found = packages()
    for top in (
        "numpy",
        "pandas",
        "pyarrow",
        "scipy",
        "matplotlib",
        "plotly",
        "markdown_it",
        "tqdm",
        "tomli_w",
        "starlette",
        "uvicorn",
        "h11",
        "dask",
        "distributed",
    ):
        assert top in found, sorted(found)


if __name__ == "__main__":  # a full run by hand: python tests/python/test_extras_matrix.py
    import tempfile

    only = sys.argv[1:]
    with tempfile.TemporaryDirectory() as base:
        fx = make_fixtures(Path(base))
        n = bad = 0
        for i, (p, s, c) in enumerate(cells()):
            if only and not any(o in (p, s, c) for o in only):
                continue
            tmp = Path(base) / f"cell{i}"
            tmp.mkdir()
            problems = run_cell(p, s, c, fx, tmp)
            n += 1
            if problems:
                bad += 1
                print(f"FAIL {p} {s} {c}: {'; '.join(problems)}", flush=True)
        print(f"{n} cells, {bad} failing")
