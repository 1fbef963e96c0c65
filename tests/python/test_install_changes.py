# SPDX-License-Identifier: MIT
"""A package removed while a command runs, as a matrix: every command, every package it meets
after its start, removed for real at an exact point of ccsim's code.

Campaigns 40 and 41 of issue 32 found, one by one, commands failing badly when a package (or
ccsim itself) was removed or upgraded while they ran: plotly's script read only when a page was
served, pandas' and anyio's lazily imported modules, pyarrow.pandas_compat met only as the
tables were written, matplotlib's fonts. This test finds the class instead of its members.

The axis is discovered, not listed: each command runs once in a child interpreter whose
``sitecustomize`` notes, with ``sys.addaudithook``, every module of a package outside the
standard library first imported and every file of a package (or of ccsim's own folder) first
opened, with the phase the command was in. The phases are hooks on ccsim's functions, set as
its modules are imported: ``runs`` as the first run starts (the core's run for ``ccsim run``,
the pool's first submit, bench's first case), ``outputs`` once the last run has ended and
before the outputs are written (the result's tables, the sweep's return, the site),
``serving`` once the explorer serves (as it says its address), and ``jobs`` as its first job's
first run starts. Each package met after the
start is then removed, for real, at each phase it is met at or after: the child runs on a
hard-linked (or symbolically linked) copy of the virtual environment's site-packages (and of
ccsim's folder), in place
of the originals on its path (so in its workers and children too), and the copy's folders of
that distribution are deleted by the hook. The command must then write its whole output, the
same bytes as without the removal, or end with status 1 and one ``ccsim: error:`` line naming
the package and what was kept; with the copy restored, the same command writes the whole
output. The explorer's page, script and a job are asked for once it serves: each answers
whole, or the job says what to do, and the server goes on serving.

``CCSIM_INSTALL_CELLS=all`` runs every cell; by default a few cells per command are drawn
by a fixed seed (``CCSIM_INSTALL_SEED`` draws others), and only the cheap commands run.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from conftest import CHEAP_COMMANDS, CommandOutcome, ccsim_outcome

ROOT = Path(__file__).resolve().parents[2]
FILE = str(ROOT / "examples" / "random-loss.toml")
SITE = Path(os.path.realpath(sysconfig.get_paths()["purelib"]))
SOURCE = (ROOT / "python").resolve()
ALL = os.environ.get("CCSIM_INSTALL_CELLS") == "all"

# The child's sitecustomize (first on PYTHONPATH, so imported by every ccsim process, its pool's
# workers and bench's cases): the copies in place of the originals on sys.path, the audit hook
# that notes what is met when, and the hooks on ccsim's functions that mark the phases and
# remove the package at the cell's phase.
BOOT = r'''
import json, os, sys

_cfg = json.loads(os.environ["CCSIM_CELL"])
_ORIGIN = os.getpid()
os.environ.setdefault("CCSIM_CELL_MAIN", str(_ORIGIN))
_MAIN = os.environ["CCSIM_CELL_MAIN"] == str(_ORIGIN)


def _swap(p):
    real = os.path.realpath(p) if p else p
    return {_cfg["site"]: _cfg["copy"], _cfg["src"]: _cfg["src_copy"]}.get(real, p)


sys.path[:] = [_swap(p) for p in sys.path]
if _cfg.get("method"):  # the pool's start method, as an interpreter's default would be
    import multiprocessing

    multiprocessing.set_start_method(_cfg["method"])
PHASE = ["start"]
_RANK = {"start": 0, "runs": 1, "outputs": 2, "serving": 3, "jobs": 4}


def _who():
    if os.getpid() == int(os.environ["CCSIM_CELL_MAIN"]):
        return PHASE[0]
    return "worker" if os.getpid() != _ORIGIN else "child"


if _cfg.get("log"):
    _fd = os.open(_cfg["log"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    _seen = set()
    _roots = tuple(os.path.join(_cfg[k], "") for k in ("copy", "src_copy"))

    def _note(kind, what):
        line = json.dumps({"kind": kind, "what": what, "phase": _who()}) + "\n"
        os.write(_fd, line.encode())

    def _hook(event, args):
        if event == "import":
            name = args[0]
            if name.partition(".")[0] in sys.stdlib_module_names or name in _seen:
                return
            _seen.add(name)
            _note("import", name)
        elif event == "open":
            path = args[0]
            if isinstance(path, bytes):
                path = os.fsdecode(path)
            if not isinstance(path, str) or path in _seen or not path.startswith(_roots):
                return
            if path.endswith((".py", ".pyc", ".so")) or "__pycache__" in path:
                return  # the import system's own reads: noted as imports
            _seen.add(path)
            _note("open", path)

    sys.addaudithook(_hook)


def mark(phase):
    """The command has reached ``phase``: the package goes now if this is the cell's."""
    if os.getpid() != int(os.environ["CCSIM_CELL_MAIN"]) or _RANK[phase] <= _RANK[PHASE[0]]:
        return  # a forked worker, or a phase reached already
    PHASE[0] = phase
    if _cfg.get("phase") == phase:
        import shutil

        for p in _cfg["remove"]:
            if os.path.isdir(p) and not os.path.islink(p):
                shutil.rmtree(p)
            elif os.path.lexists(p):
                os.unlink(p)
        with open(_cfg["removed"], "w") as f:
            f.write(phase)


def _before(f, phase):
    def hooked(*a, **k):
        mark(phase)
        return f(*a, **k)

    return hooked


def _after(f, phase):
    def hooked(*a, **k):
        out = f(*a, **k)
        mark(phase)
        return out

    return hooked


def _cli(m):
    m.run = _before(m.run, "runs")  # `ccsim run`'s call of the core
    say = m._say

    def _say(text, *a, **k):
        if isinstance(text, str) and text.startswith("ccsim explore: "):
            mark("serving")  # the explorer serves, and says where
        return say(text, *a, **k)

    m._say = _say


def _result(m):
    m.Result._write_tables = _before(m.Result._write_tables, "outputs")


def _sweep(m):
    m._submit = _before(m._submit, "runs")
    m.execute = _after(m.execute, "outputs")


def _bench(m):
    m._child_run = _before(m._child_run, "runs")
    m._summarize = _before(m._summarize, "outputs")


def _site(m):
    m.build_site = _before(m.build_site, "outputs")


def _core(m):
    m.run = _before(m.run, "jobs")  # after "serving": an explorer's job's first run


def _jobs(m):
    from ccsim import _core as core  # the explorer's jobs call the core's run by name

    if not getattr(core.run, "hooked", False):
        _core(core)
        core.run.hooked = True


_PATCHES = {"ccsim.cli": _cli, "ccsim.result": _result, "ccsim.sweep": _sweep,
            "ccsim.bench": _bench, "ccsim.site": _site}
if _cfg["command"] == "explore":  # the other commands load the explorer's modules unused
    _PATCHES["ccsim.explore.jobs"] = _jobs


class _Patcher:
    """Patches ccsim's modules as they are imported (the command's own order is kept)."""

    def find_spec(self, name, path=None, target=None):
        if name not in _PATCHES:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        else:
            return None
        run = spec.loader.exec_module

        def exec_module(module, run=run, patch=_PATCHES[name]):
            run(module)
            patch(module)

        spec.loader.exec_module = exec_module
        return spec


if _MAIN:
    sys.meta_path.insert(0, _Patcher())
'''

#: The commands, each as cheap as it comes: {out} and {results} are filled in per cell.
COMMANDS: dict[str, list[str]] = {
    **CHEAP_COMMANDS,
    "bench": ["bench", "--only", "P0", "--repeat", "1"],
    # The cheapest generated case (written by a child) and the plot drawn after the runs.
    "bench-plot": ["bench", "--only", "F10", "--repeat", "1", "--plot", "{out}/scale.png"],
    "explore": ["explore", "--results", "{results}", "--port", "{port}", "--workers", "1"],
}  # fmt: skip
# The pool's workers under the other start methods (Python 3.14's default is forkserver):
# each imports ccsim and numpy anew, after the first run started.
for _method in ("forkserver", "spawn"):
    for _command in ("sweep", "reproduce"):
        COMMANDS[f"{_command}@{_method}"] = COMMANDS[_command]
#: The phases of the command's own process (the others: "worker", a pool's; "child", a
#: process started anew).
PHASE_RANK = {"runs": 1, "outputs": 2, "serving": 3, "jobs": 4}
#: Where each command's phases are (the hooks in BOOT).
PHASES = {"run": ["runs", "outputs"], "sweep": ["runs", "outputs"],
          "reproduce": ["runs", "outputs"], "report": ["outputs"], "bench": ["runs", "outputs"],
          "explore": ["serving", "jobs"]}  # fmt: skip
PHASES.update({c: PHASES[re.split("[@-]", c)[0]] for c in COMMANDS})
#: Run by default, within a minute (the rest with CCSIM_INSTALL_CELLS=all): every cell of
#: the cheap commands (a second or two each), and of the others this many, drawn.
EVERY = {"run", "sweep", "report", "bench", "explore"}
DRAWN = {"reproduce": 1, "sweep@spawn": 2, "bench-plot": 1}
#: Cells that failed once, run by default while the axis holds them (campaign 43): PIL's
#: `from PIL import features` as a reproduction's figures are written; a spawned worker's
#: pandas; the child that writes bench's generated case.
PINNED = {"reproduce": [("outputs", "pillow")], "sweep@spawn": [("runs", "pandas")],
          "bench-plot": [("runs", "tomli_w")]}  # fmt: skip
#: The explorer's job: one run of paper 001's quick figure.
JOB = {"paper": "p001", "figure": "fig8", "x": ["0.05"], "lines": ["spack"], "seeds": 1}


@dataclass
class Install:
    root: Path
    copy: Path
    src_copy: Path
    #: distribution -> the top-level entries of site-packages it installed (its dist-info too)
    dists: dict[str, list[str]] = field(default_factory=dict)
    #: top-level module -> distribution
    modules: dict[str, str] = field(default_factory=dict)
    results: Path | None = None
    #: cp's option: hard links (-al), or links to the files (-as) across file systems
    link: str = "-al"

    def entries(self, dist: str) -> list[Path]:
        if dist == "ccsim":
            return [self.src_copy / "ccsim"]
        return [self.copy / e for e in self.dists[dist]]

    def restore(self, dist: str) -> None:
        for entry in self.entries(dist):
            if os.path.lexists(entry):
                continue
            source = SOURCE / "ccsim" if dist == "ccsim" else SITE / entry.name
            subprocess.run(["cp", self.link, str(source), str(entry)], check=True)

    def dist_of(self, what: str, kind: str) -> str | None:
        if kind == "import":
            top = what.partition(".")[0]
            return "ccsim" if top == "ccsim" else self.modules.get(top)
        path = Path(what)
        if path.is_relative_to(self.src_copy):
            return "ccsim"
        if path.is_relative_to(self.copy):
            top = path.relative_to(self.copy).parts[0]
            return self.modules.get(top.partition(".")[0]) or self.modules.get(top)
        return None

    def env(self, **cell: Any) -> dict[str, str]:
        config = {"site": str(SITE), "copy": str(self.copy), "src": str(SOURCE),
                  "src_copy": str(self.src_copy), **cell}  # fmt: skip
        path = os.pathsep.join([str(self.root / "boot"), os.environ.get("PYTHONPATH", "")])
        return {**os.environ, "CCSIM_CELL": json.dumps(config), "PYTHONPATH": path.rstrip(":"),
                "MPLCONFIGDIR": str(self.root / "mpl")}  # fmt: skip


@pytest.fixture(scope="module")
def install(tmp_path_factory: pytest.TempPathFactory) -> Install:
    """The copy of site-packages and ccsim's folder: its folders made anew, its files hard
    links (no space taken), or symbolic links where the temporary folder is on another file
    system than the virtual environment (a tmpfs /tmp): removing a folder of the copy removes
    the package for the child as a removal from site-packages would."""
    root = tmp_path_factory.mktemp("install")
    (root / "boot").mkdir()
    (root / "boot" / "sitecustomize.py").write_text(BOOT, encoding="utf-8")
    inst = Install(root, root / "site", root / "src")
    if (
        os.stat(root).st_dev != os.stat(SITE).st_dev
        or os.stat(root).st_dev != os.stat(SOURCE).st_dev
    ):
        inst.link = "-as"
    subprocess.run(["cp", inst.link, str(SITE), str(inst.copy)], check=True)
    inst.src_copy.mkdir()
    subprocess.run(["cp", inst.link, str(SOURCE / "ccsim"), str(inst.src_copy / "ccsim")],
                   check=True)  # fmt: skip
    for info in sorted(SITE.glob("*.dist-info")):
        record = info / "RECORD"
        if not record.is_file():
            continue
        dist = info.name.split("-")[0]
        tops = {info.name}
        for line in record.read_text(encoding="utf-8").splitlines():
            top = line.split(",")[0].split("/")[0]
            if top and top != ".." and top != "__pycache__" and (SITE / top).exists():
                tops.add(top)
        inst.dists[dist] = sorted(tops)
        for top in tops:
            if not top.endswith(".dist-info"):
                inst.modules.setdefault(top.partition(".")[0], dist)
    return inst


@dataclass
class Outcome(CommandOutcome):
    removed: bool = False
    http: dict[str, Any] = field(default_factory=dict)


def _argv(command: str, out: Path, results: Path | None, port: int = 0) -> list[str]:
    fill = {"{out}": str(out), "{results}": str(results), "{port}": str(port)}
    return [fill.get(a, a.replace("{out}", str(out))) for a in COMMANDS[command]]


def _launch(inst: Install, command: str, cell: Path, **config: Any) -> Outcome:
    """``command`` in a child on the copy, its output in ``cell/out``."""
    out = cell / "out"
    removed = cell / "removed"
    command, _, method = command.partition("@")
    env = inst.env(removed=str(removed), method=method, command=command, **config)
    if command == "explore":
        return _explore(inst, cell, env, removed)
    got = ccsim_outcome(_argv(command, out, inst.results), out, env)
    if command.startswith("bench"):  # its timings vary: the table's first column and its shape only
        got.stdout = "\n".join(line.split(" ")[0] for line in got.stdout.splitlines())
    return Outcome(got.status, got.stdout, got.stderr, got.tree, removed.exists())


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _get(url: str, body: Any = None) -> tuple[int, bytes]:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def _explore(inst: Install, cell: Path, env: dict[str, str], removed: Path) -> Outcome:
    """The explorer served, its page, script and one job asked for, then stopped by Ctrl-C."""
    port = _free_port()
    argv = _argv("explore", cell / "out", cell / "results", port)
    (cell / "results").mkdir(exist_ok=True)
    proc = subprocess.Popen([sys.executable, "-m", "ccsim", *argv], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env)  # fmt: skip
    http: dict[str, Any] = {}
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()  # the address, said once it serves
        url = f"http://127.0.0.1:{port}"
        if line.startswith("ccsim explore: "):
            status, page = _get(url + "/")
            http["page"] = (status, hashlib.sha256(page).hexdigest())
            script = re.search(rb'src="(plotly\.min\.js[^"]*)"', page)
            status, js = _get(f"{url}/{script[1].decode() if script else 'plotly.min.js'}")
            http["script"] = (status, len(js), hashlib.sha256(js).hexdigest())
            status, answer = _get(url + "/api/run", JOB)
            http["run"] = status
            if status == 200:
                job = json.loads(answer)["job"]
                status, text = _get(f"{url}/api/jobs/{job}/events")
                events = [json.loads(ln[6:]) for ln in text.decode().splitlines()
                          if ln.startswith("data: ")]  # fmt: skip
                last = events[-1] if events else {}
                points = [e.get("seeds") for e in events if e.get("type") == "point"]
                http["job"] = (last.get("type"), points, last.get("error") or last.get("message"))
            else:
                http["job"] = ("refused", [], answer.decode(errors="replace"))
            http["again"] = _get(url + "/api/papers")[0]  # still serving
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    said = (line + stdout).replace(str(port), "{port}").replace(str(cell), "{cell}")
    return Outcome(proc.returncode, said, stderr.replace(str(cell), "{cell}"), {},
                   removed.exists(), http)  # fmt: skip


@dataclass
class Axis:
    """What a command meets after its start, per phase: distribution -> what of it."""

    baseline: Outcome
    met: dict[str, dict[str, list[str]]]  # phase -> dist -> modules and files

    def shown(self) -> str:
        lines = []
        for phase, dists in self.met.items():
            for dist, what in sorted(dists.items()):
                lines.append(f"  {phase:8} {dist}: {', '.join(what[:6])}"
                             f"{' ...' if len(what) > 6 else ''} ({len(what)})")  # fmt: skip
        return "\n".join(lines) or "  (nothing after the start)"


_axes: dict[str, Axis] = {}


def discover(inst: Install, command: str, tmp: Path) -> Axis:
    """The command run once without a removal, noting what it meets after its start."""
    if command in _axes:
        return _axes[command]
    if command == "report" and inst.results is None:
        # A finished reproduction to report on.
        made = _launch(inst, "reproduce", tmp / "made")
        assert made.status == 0, made.stderr
        inst.results = tmp / "results"
        inst.results.mkdir()
        shutil.copytree(tmp / "made" / "out", inst.results / "m01-quick")
    cell = tmp / f"axis-{command.replace('@', '-')}"
    cell.mkdir()
    log = cell / "met.jsonl"
    baseline = _launch(inst, command, cell, log=str(log))
    # The explorer ends by the test's Ctrl-C.
    assert baseline.status == (130 if command == "explore" else 0), baseline.stderr
    met: dict[str, dict[str, list[str]]] = {}
    for line in log.read_text(encoding="utf-8").splitlines():
        e = json.loads(line)
        dist = inst.dist_of(e["what"], e["kind"])
        if e["phase"] == "start" or dist is None:
            continue
        what = e["what"] if e["kind"] == "import" else Path(e["what"]).name
        met.setdefault(e["phase"], {}).setdefault(dist, [])
        if what not in met[e["phase"]][dist]:
            met[e["phase"]][dist].append(what)
    _axes[command] = Axis(baseline, met)
    return _axes[command]


def cells(axis: Axis, command: str) -> list[tuple[str, str]]:
    """(phase, distribution): each package met at or after each of the command's phases."""
    after = {"runs": {"runs", "worker", "child", "outputs"}, "outputs": {"outputs"},
             "serving": {"serving", "jobs"}, "jobs": {"jobs"}}  # fmt: skip
    found = []
    for phase in PHASES[command]:
        dists = {d for p, ds in axis.met.items() if p in after[phase] for d in ds}
        found += [(phase, d) for d in sorted(dists)]
    return found


def _expected_failure(outcome: Outcome, dist: str, inst: Install, method: str) -> str | None:
    """What is wrong with a failed cell's stderr, or None: one ``ccsim: error:`` line naming
    the package (one of its modules' names, or ccsim) and what became of the output."""
    lines = outcome.stderr.strip().splitlines()
    if dist == "ccsim" and method and "spawn.py" in outcome.stderr:
        # ccsim itself gone under spawn or forkserver: the interpreter's multiprocessing loads
        # ccsim in a new worker before any of ccsim's code runs there, and prints the import's
        # traceback. The command's own line, last, is judged.
        lines = lines[-1:]
    if outcome.status != 1:
        return f"status {outcome.status}"
    if len(lines) != 1 or not lines[0].startswith("ccsim: error: "):
        return "not one ccsim: error: line"
    line = lines[0]
    if "Traceback" in line or "internal error" in line:
        return "an internal error"
    names = {dist} | {m for m, d in inst.modules.items() if d == dist}
    subject = re.match(r"ccsim: error: (?:ccsim needs )?([\w.]+)", line)
    if subject is None or subject[1].partition(".")[0] not in names:
        return "does not name the package first"
    kept = outcome.tree and not re.search(r"kept|stored|left as it was|holds the rest", line)
    if kept:  # the line may keep quiet about an output that was never made
        return "does not say what was kept"
    return None


def _judge(inst: Install, command: str, phase: str, dist: str, tmp: Path) -> str | None:
    """Run one cell; what is wrong with it, or None."""
    axis = _axes[command]
    cell = tmp / f"{command.replace('@', '-')}-{phase}-{dist}"
    cell.mkdir()
    remove = [str(p) for p in inst.entries(dist)]
    try:
        got = _launch(inst, command, cell, phase=phase, remove=remove)
    finally:
        inst.restore(dist)
    if not got.removed:
        return "the phase was never reached: nothing was removed"
    base = axis.baseline
    if command == "explore":
        return _judge_explore(got, base, dist, inst)
    if got.status == 0:
        if (got.stdout, got.stderr, got.tree) != (base.stdout, base.stderr, base.tree):
            differs = sorted(k for k in set(got.tree) | set(base.tree)
                             if got.tree.get(k) != base.tree.get(k))  # fmt: skip
            return (f"status 0 with another output: stdout {got.stdout[-300:]!r}, stderr "
                    f"{got.stderr[-300:]!r}, files differing {differs[:8]}")  # fmt: skip
        return None
    wrong = _expected_failure(got, dist, inst, command.partition("@")[2])
    if wrong is not None:
        return f"{wrong}: status {got.status}, stderr {got.stderr[-1500:]!r}"
    again = _launch(inst, command, cell)  # its stdout counts the runs it reused
    if (again.status, again.tree) != (0, base.tree):
        differs = sorted(k for k in set(again.tree) | set(base.tree)
                         if again.tree.get(k) != base.tree.get(k))  # fmt: skip
        return (f"failed as it should ({got.stderr.strip()[:200]!r}...), but the same command "
                f"after the restore: status {again.status}, stderr {again.stderr[-500:]!r}, "
                f"files differing {differs[:8]}")  # fmt: skip
    return None


def _judge_explore(got: Outcome, base: Outcome, dist: str, inst: Install) -> str | None:
    h, b = got.http, base.http
    if not h:
        return f"it did not serve: status {got.status}, stderr {got.stderr[-1500:]!r}"
    wrong = []
    if h["page"] != b["page"]:
        wrong.append(f"the page: {h['page']}")
    if h["script"] != b["script"]:
        wrong.append(f"the script: {h['script'][:2]}")
    if h["job"] != b["job"]:
        kind, _, said = h["job"]
        names = {dist} | {m for m, d in inst.modules.items() if d == dist}
        if (
            kind != "error"
            or not said
            or not any(n in said for n in names)
            or ("install ccsim again" not in said.lower())
        ):
            wrong.append(f"the job: {h['job']}")
    if h["again"] != 200:
        wrong.append(f"serving after: {h['again']}")
    if "Traceback" in got.stderr or got.status != 130:
        wrong.append(f"its end: status {got.status}, stderr {got.stderr[-1500:]!r}")
    return "; ".join(wrong) or None


@pytest.mark.parametrize("command", [c for c in COMMANDS if ALL or c in EVERY or c in DRAWN])
def test_a_package_removed_while_a_command_runs_changes_nothing_or_is_named_with_what_was_kept(
    command: str, install: Install, tmp_path: Path
) -> None:
    axis = discover(install, command, tmp_path)
    found = cells(axis, command)
    chosen = found
    if not ALL and command in DRAWN:
        # A fixed draw by default, as the other matrices': the suite's run is the same cells
        # every time (a cell failing must fail again); other seeds draw others.
        seed = int(os.environ.get("CCSIM_INSTALL_SEED") or 43)
        chosen = random.Random(seed).sample(found, min(DRAWN[command], len(found)))
        chosen = sorted({*chosen, *(c for c in PINNED.get(command, []) if c in found)})
        print(f"{command}: cells {chosen} drawn with CCSIM_INSTALL_SEED={seed}")
    # ccsim's own modules are loaded at the start, in the command's own process: one loaded
    # later, from an upgraded ccsim (`git pull` in an editable install's clone), would be
    # asked by the old, loaded ones for what they lack, or the reverse (campaign 41's
    # reproduce; `ccsim report`'s site code in campaign 43).
    late = {p: d["ccsim"] for p, d in axis.met.items() if p in PHASE_RANK and "ccsim" in d}
    assert not late, f"ccsim {command} loads its own code after its start: {late}"
    failing = {}
    for phase, dist in chosen:
        wrong = _judge(install, command, phase, dist, tmp_path)
        if wrong is not None:
            failing[(phase, dist)] = wrong
    print(
        f"{command}: {len(chosen)} of {len(found)} cells run, {len(failing)} failing\n"
        f"{axis.shown()}"
    )
    assert found, f"ccsim {command} meets no package after its start:\n{axis.shown()}"
    assert not failing, (
        f"ccsim {command}, what it meets after its start:\n{axis.shown()}\nfailing cells:\n"
        + "\n".join(f"  {phase} {dist}: {wrong}" for (phase, dist), wrong in failing.items())
    )


def test_a_package_whose_shared_library_is_gone_is_named_not_its_extension_module(
    tmp_path: Path,
) -> None:
    """CPython names an extension module that failed to load by its last name alone: pyarrow's
    libarrow_substrait gone (pyarrow removed as `ccsim run` loaded it, a cell of the matrix
    above) was "ccsim needs lib, which is installed but cannot be imported
    (libarrow_substrait.so...: cannot open shared object file)" (campaign 43, issue 32).
    Run from the folder above the site, which ``python -m`` puts first on sys.path, it was
    "ccsim needs site": the package was read against the first folder of sys.path holding
    the file, not the innermost (from a home folder holding the venv, "ccsim needs venv":
    campaign 50, issue 32)."""
    pyarrow = Path(__import__("pyarrow").__file__).parent
    libraries = sorted(pyarrow.glob("libarrow_substrait.so*"))
    if not libraries:
        pytest.skip("this pyarrow has no libarrow_substrait beside its modules")
    site = tmp_path / "site"
    site.mkdir()
    same = os.stat(tmp_path).st_dev == os.stat(pyarrow).st_dev
    subprocess.run(["cp", "-al" if same else "-as", str(pyarrow), str(site / "pyarrow")],
                   check=True)  # fmt: skip
    for library in libraries:
        (site / "pyarrow" / library.name).unlink()
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(site)}
    proc = subprocess.run(
        [sys.executable, "-m", "ccsim", "run", FILE, "--set", "duration=100ms", "--out", str(out)],
        capture_output=True, text=True, cwd=tmp_path, env=env, timeout=600, check=False,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("ccsim: error: ccsim needs pyarrow, which is installed but cannot "
                               f"be imported ({libraries[0].name}: cannot open"), lines  # fmt: skip
    assert not out.exists()


def test_a_package_imported_from_a_zip_is_not_taken_for_one_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A package imported from a zip on PYTHONPATH has a ``__file__`` inside the zip, which no
    path names: it is not one removed since the start (a worker's death, a name it lacks),
    while one whose folder is gone is (campaign 43, issue 32)."""
    import zipfile

    from ccsim.staging import package_changed, packages_gone

    archive = tmp_path / "zipped.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("zipped_pkg/__init__.py", "x = 1\n")
    folder = tmp_path / "folder"
    (folder / "gone_pkg").mkdir(parents=True)
    (folder / "gone_pkg" / "__init__.py").write_text("x = 1\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.syspath_prepend(str(archive))
    for name in ("zipped_pkg", "gone_pkg"):
        # Set first, so that the module leaves sys.modules with the test: left there, a gone
        # package made every later test's worker death "gone_pkg cannot be loaded any more".
        monkeypatch.setitem(sys.modules, name, None)
        monkeypatch.delitem(sys.modules, name)
        __import__(name)
    shutil.rmtree(folder / "gone_pkg")
    gone = packages_gone()  # (other tests' modules may be gone too: not these two's business)
    assert "gone_pkg" in gone and "zipped_pkg" not in gone, gone
    for name, changed in (("zipped_pkg", False), ("gone_pkg", True)):
        e = ImportError(f"cannot import name 'y' from '{name}'", name=name)
        said = package_changed(e, [tmp_path / "out"], "nothing was written")
        assert (said is not None) == changed, said
