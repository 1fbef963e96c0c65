# SPDX-License-Identifier: MIT
"""The settings other packages read from the environment, as a matrix: every variable a
command's dependencies (and the standard library under them) look up, set to a value its
package cannot parse and to an empty string, under each command that looked it up.

Campaign 46 of issue 32 found, by hand, that the variables our dependencies read change what
ccsim does: MPLBACKEND=Qt4Agg failed every reproduction, TQDM_FILE=x was an internal error,
TQDM_MININTERVAL=abc and DASK_DISTRIBUTED__COMM__OFFLOAD=abc said "install ccsim again". This
test finds the class instead of its members.

The axis is discovered, not listed: each cheap command runs once in a child whose
``sitecustomize`` gives ``os.environ`` a class that notes every variable looked up in it
(``os.getenv``, ``os.environ.get``, ``[]``, ``in``; not a walk over all of them, as ``items()``
or ``dict(os.environ)`` do) and the module that asked, in the command's process and in its
workers. A package that reads its settings by walking the environment for a prefix (tqdm's
``TQDM_*``, dask's ``DASK_*``) asks for no name and is not seen: those are test_cli.py's cases,
and the modules that walked the environment are printed beside each command's axis.

Settings read by C code (Arrow's ARROW_*, its jemalloc's JE_ARROW_MALLOC_CONF, the Fortran
runtime of numpy's OpenBLAS, GFORTRAN_*) never pass through ``os.environ``: a small library
compiled here with the system's C compiler and loaded first (``LD_PRELOAD``) notes each
``getenv`` call and the library that made it, the interpreter's own aside. Their cells are
drawn by default, under run only (there are some thirty names), and all run with
``CCSIM_SETTINGS_CELLS=all``; without a C compiler they are not seen, and the test says so.
They found (campaign 47) jemalloc's complaint on stderr, naming no variable, above a status-0
output, and GFORTRAN_STDOUT_UNIT=5 ending every command with status 3 as numpy loaded; ccsim
now checks those first (cli._native_setting_failure). The axis is what was asked, less:

- ccsim's own settings: CCSIM_*, those a module of ccsim sets (OPENBLAS_NUM_THREADS, the
  thread counts and allocator it chooses), and those only ccsim asks for (XDG_*_HOME, ...):
  its own tests say how each is read. One a dependency asks for too stays on the axis
  (MPLBACKEND, which ccsim mends to Agg; NUMEXPR_MAX_THREADS, which it checks);
- the axes of other matrices (test_cli_states.py and docs/environments.md): HOME and
  TMPDIR/TMP/TEMP (missing, read-only, another user's), LANG, LANGUAGE and LC_* (the locale),
  TERM, COLUMNS, LINES and NO_COLOR (the terminal), and PYTHON* and _PYTHON* (the
  interpreter's own: PYTHONWARNINGS and PYTHONIOENCODING are axes there, the rest are the
  interpreter's start and build, not a dependency's setting);
- PATH, the system's search for programs, not a package's setting: without git on it a
  reproduction's report says "git commit unknown", as report.git_commit says it does; and
  git's own settings (GIT_*), seen by the C noting in the git a reproduction runs for its
  commit: one git cannot read (GIT_TEST_PRELOAD_INDEX=abc) makes it fail, and the report
  says "git commit unknown" as without git (those that name another repository, GIT_DIR and
  the others of git's local list, are not passed to it);
- CCSIM_SETTINGS and MPLCONFIGDIR, which this test sets for its children.

A cell passes if the command writes the same output as without the variable (status, words and
digests), or ends with status 1 and one ``ccsim: error:`` line naming the variable, as
cli._setting_failed_on does (saying what was kept of the output folder, if any). One more is
taken as passing, a decision of campaign 47: the same status, stdout and files, with the
dependency's own warning about the setting it ignores added to stderr, naming the variable, as
``ccsim: warning:`` lines when it is a Python warning (Pillow's "PILLOW_BLOCK_SIZE is not int",
numpy's "NPY_PROMOTION_STATE ... is ignored after NumPy 2.2") or in its own words when its C
code writes it (Arrow's "Invalid value for ARROW_IO_THREADS: 'abc'"): the user's setting is
named and nothing else changes. Anything else (a traceback, an internal error, "install ccsim
again", a hang, another output) is a defect.

``ccsim explore`` is one of the commands, its output its HTTP answers (conftest's
``EXPLORE_COMMAND``): uvicorn read WEB_CONCURRENCY with int(), and WEB_CONCURRENCY=abc stopped
the explorer naming nothing (found by hand, then by this matrix before the fix; campaign 47).

By default every cell of run runs (sweep's were every one until the suite neared its time
budget; its pinned cells still run), and of the others a fixed draw
(``CCSIM_SETTINGS_SEED`` draws others); ``CCSIM_SETTINGS_CELLS=all`` runs every cell.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
from pathlib import Path

import pytest
from conftest import CHEAP_COMMANDS, EXPLORE_COMMAND, CommandOutcome, ccsim_in_cell

ROOT = Path(__file__).resolve().parents[2]
ALL = os.environ.get("CCSIM_SETTINGS_CELLS") == "all"
#: The commands whose every cell runs by default; of the others, this many cells are drawn.
EVERY = ("run",)
DRAWN = {"sweep": 4, "reproduce": 2, "report": 2, "explore": 2}
#: The commands: the cheap ones, and the explorer, whose output is its answers (conftest).
COMMANDS = {**CHEAP_COMMANDS, **EXPLORE_COMMAND}
#: Cells run whatever is drawn: each failed once (campaign 47), and only there.
PINNED = {
    "reproduce": [("SOURCE_DATE_EPOCH", "abc")],
    "run": [("GFORTRAN_STDIN_UNIT", ""), ("JE_ARROW_MALLOC_CONF", "abc")],
    "sweep": [("NUMEXPR_NUM_THREADS", "abc"), ("OMP_NUM_THREADS", "abc")],
}  # fmt: skip
#: Of the names only C code asked for, how many cells each command draws by default (the
#: same libraries read them under every command: run's draw stands for the others').
DRAWN_NATIVE = {"run": 2}
#: What a cell sets its variable to: a value no package parses, and an empty string.
VALUES = ("abc", "")

# The child's sitecustomize (first on PYTHONPATH, so run by the command's process and by its
# workers, which inherit the class by fork or run it again): os.environ's class noting each
# variable looked up and the module that asked.
BOOT = r"""
import dis, json, os, sys

_cfg = json.loads(os.environ.get("CCSIM_SETTINGS") or "{}")
if _cfg.get("log"):
    _fd = os.open(_cfg["log"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    _seen = set()
    _offsets = {}
    _SUBSCR = dis.opmap["BINARY_SUBSCR"]
    _PLUMBING = ("os", "_collections_abc", "collections.abc")

    def _asker():
        f = sys._getframe(2)
        # A view's iteration (items(), values()) reads every variable: not a look-up of one.
        if f.f_globals.get("__name__") in _PLUMBING and f.f_code.co_name == "__iter__":
            _note("*", _module(f), "walk")  # who walked it, shown as the axis's blind spot
            return None
        # The instruction being run (f_lasti may point into its inline caches): dict(environ),
        # environ.copy(), from C code, is a call, not a subscription.
        offsets = _offsets.get(f.f_code)
        if offsets is None:
            offsets = [(i.offset, i.opcode) for i in dis.get_instructions(f.f_code)]
            _offsets[f.f_code] = offsets
        if max((o for o in offsets if o[0] <= f.f_lasti), default=(0, 0))[1] != _SUBSCR:
            return None
        return _module(f)

    def _module(f):
        while f is not None and f.f_globals.get("__name__") in _PLUMBING:
            f = f.f_back
        return str(f.f_globals.get("__name__", "?")) if f is not None else "?"

    def _note(key, who, kind):
        if who is not None and isinstance(key, str) and (key, who, kind) not in _seen:
            _seen.add((key, who, kind))
            os.write(_fd, f"{key}\t{who}\t{kind}\n".encode())

    class _Noted(type(os.environ)):
        def __getitem__(self, key):
            _note(key, _asker(), "get")
            return super().__getitem__(key)

        def __setitem__(self, key, value):
            _note(key, _module(sys._getframe(1)), "set")
            super().__setitem__(key, value)

    os.environ.__class__ = _Noted
"""

# The library loaded first in the children (LD_PRELOAD) when C code's look-ups are noted: each
# getenv or secure_getenv call's name and the file of the library that made it, appended to
# $CCSIM_GETENV_LOG.
# glibc's own calls do not pass through it; the interpreter's are set aside by their library.
GETENV_NOTING = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

static char *(*next_getenv)(const char *);
static char *(*next_secure_getenv)(const char *);

static void note(const char *name, void *caller) {
    const char *log = next_getenv("CCSIM_GETENV_LOG");
    Dl_info info;
    char line[1024];
    if (log == NULL || name == NULL) return;
    int fd = open(log, O_WRONLY | O_APPEND | O_CREAT, 0600);
    if (fd < 0) return;
    const char *who = dladdr(caller, &info) && info.dli_fname ? info.dli_fname : "?";
    int n = snprintf(line, sizeof line, "%s\t%s\n", name, who);
    if (n > 0 && n < (int)sizeof line) (void)!write(fd, line, n);
    close(fd);
}

char *getenv(const char *name) {
    if (next_getenv == NULL) next_getenv = (char *(*)(const char *))dlsym(RTLD_NEXT, "getenv");
    note(name, __builtin_return_address(0));
    return next_getenv(name);
}

/* jemalloc and OpenSSL read theirs this way (JE_ARROW_MALLOC_CONF, OPENSSL_CONF). */
char *secure_getenv(const char *name) {
    if (next_getenv == NULL) next_getenv = (char *(*)(const char *))dlsym(RTLD_NEXT, "getenv");
    if (next_secure_getenv == NULL)
        next_secure_getenv = (char *(*)(const char *))dlsym(RTLD_NEXT, "secure_getenv");
    note(name, __builtin_return_address(0));
    return next_secure_getenv(name);
}
"""


def _getenv_noting(folder: Path) -> Path | None:
    """GETENV_NOTING built into ``folder``, or None without a C compiler that builds it."""
    import subprocess

    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        return None
    (folder / "getenv_noting.c").write_text(GETENV_NOTING, encoding="utf-8")
    built = folder / "getenv_noting.so"
    made = subprocess.run([cc, "-shared", "-fPIC", "-O1", "-o", str(built),
                           str(folder / "getenv_noting.c"), "-ldl"],
                          capture_output=True, text=True, check=False)  # fmt: skip
    return built if made.returncode == 0 else None


def _asked_in_c(log: Path) -> dict[str, set[str]]:
    """The names C code asked for (name: the libraries that asked), the interpreter's own and
    the noting library's aside."""
    asked: dict[str, set[str]] = {}
    if not log.exists():
        return asked
    for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
        name, _, library = line.partition("\t")
        library = Path(library).name
        if name == "CCSIM_GETENV_LOG" or re.match(r"(lib)?python3", library):
            continue
        asked.setdefault(name, set()).add(library)
    return asked


#: A command's outcome without any of its axis set, its axis (each variable and the modules
#: or libraries that asked for it), and the names on it only C code asked for.
Axis = tuple[CommandOutcome, dict[str, set[str]], set[str]]

#: The variables other matrices put in their states, the interpreter's own, and the two this
#: test sets for its children: not this axis.
EXCLUDED = re.compile(
    r"HOME|TMPDIR|TMP|TEMP|LANG|LANGUAGE|LC_\w+|TERM|COLUMNS|LINES|NO_COLOR|_?PYTHON\w*"
    r"|PATH|GIT_\w+|CCSIM_SETTINGS|MPLCONFIGDIR"
)


def _ccsim_own(noted: dict[str, dict[str, set[str]]]) -> set[str]:
    """ccsim's own settings, of the names noted (name: kind: modules): CCSIM_*, those ccsim
    sets (the thread counts and allocator it chooses), and those only ccsim asked for. One
    that a dependency asks for too is on the axis: ccsim reading it on the dependency's
    behalf (MPLBACKEND, mended to Agg; NUMEXPR_MAX_THREADS, checked) does not make it
    ccsim's."""
    own = set()
    for name, kinds in noted.items():
        ccsim = {k for k, who in kinds.items() if any(w.split(".")[0] == "ccsim" for w in who)}
        others = {w for who in kinds.values() for w in who if w.split(".")[0] != "ccsim"}
        if name.startswith("CCSIM_") or "set" in ccsim or (ccsim and not others):
            own.add(name)
    return own


def _launch(command: str, cell: Path, results: Path | None, env: dict[str, str],
            **config: object) -> CommandOutcome:  # fmt: skip
    added = {**env, "CCSIM_SETTINGS": json.dumps(config), "MPLCONFIGDIR": str(cell.parent / "mpl")}
    return ccsim_in_cell(BOOT, COMMANDS[command], cell, results, added)


def judge(name: str, got: CommandOutcome, base: CommandOutcome) -> str | None:
    """What is wrong with a cell's outcome, or None."""
    if (got.status, got.stdout, got.stderr, got.tree) == (
        base.status, base.stdout, base.stderr, base.tree
    ):  # fmt: skip
        return None
    named = re.compile(rf"(?<![\w]){re.escape(name)}(?!\w)")
    lines = got.stderr.strip().splitlines()
    bad = re.compile(r"Traceback|internal error|install ccsim again", re.IGNORECASE)
    if got.status == 1 and not bad.search(got.stderr):
        if len(lines) == 1 and lines[0].startswith("ccsim: error: ") and named.search(lines[0]):
            # An output folder left behind (a reproduction's finished runs) is said.
            if not got.tree or re.search(r"kept|left as it was|holds the rest", lines[0]):
                return None
    added = got.stderr.replace(base.stderr, "", 1).strip().splitlines() if got.stderr else []
    if (
        (got.status, got.stdout, got.tree) == (base.status, base.stdout, base.tree)
        and base.stderr in got.stderr
        and added
        and not bad.search(got.stderr)
        and all(named.search(a) for a in added)
    ):
        # The dependency's own warning about its setting, naming it: in ccsim's words when it
        # is a Python warning, in its own when its C code writes it (Arrow's "Invalid value
        # for ARROW_IO_THREADS: 'abc'").
        return None
    differs = sorted(k for k in set(got.tree) | set(base.tree)
                     if got.tree.get(k) != base.tree.get(k))  # fmt: skip
    return (f"status {got.status} (not {base.status}), stderr {got.stderr[-600:]!r}, stdout "
            f"{got.stdout[-200:]!r}, files differing {differs[:6]}")  # fmt: skip


@pytest.fixture(scope="module")
def axes(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Axis]]:
    """Each command run once, noting what it asked for: its outcome and its axis (each
    variable outside ccsim's own and the excluded ones, with the modules that asked); and
    the finished reproduction that report reads."""
    tmp = tmp_path_factory.mktemp("axes")
    noted: dict[str, dict[str, dict[str, set[str]]]] = {}  # command: name: kind: modules
    in_c: dict[str, dict[str, set[str]]] = {}  # command: name: libraries
    made: dict[str, CommandOutcome] = {}
    results = tmp / "results"
    noting = _getenv_noting(tmp)
    if noting is None:
        print("no C compiler: the settings C code reads (getenv) are not on the axes")
    for command in COMMANDS:  # reproduce before report: report reads what it made
        cell = tmp / command
        log = cell / "asked.tsv"
        c_log = tmp / f"{command}-getenv.tsv"
        preload = {} if noting is None else {
            "LD_PRELOAD": str(noting), "CCSIM_GETENV_LOG": str(c_log)}  # fmt: skip
        made[command] = _launch(command, cell, results, preload, log=str(log))
        in_c[command] = _asked_in_c(c_log)
        stopped = 143 if command == "explore" else 0  # (the explorer ends by SIGTERM)
        assert made[command].status == stopped, made[command].stderr
        if command == "reproduce":
            shutil.copytree(cell / "out", results / "m01-quick")
        for line in log.read_text(encoding="utf-8").splitlines():
            name, who, kind = line.split("\t")
            noted.setdefault(command, {}).setdefault(name, {}).setdefault(kind, set()).add(who)
    merged: dict[str, dict[str, set[str]]] = {}
    for asked in noted.values():
        for name, kinds in asked.items():
            for kind, who in kinds.items():
                merged.setdefault(name, {}).setdefault(kind, set()).update(who)
    own = _ccsim_own(merged)
    for command, asked in noted.items():
        walkers = sorted(asked.get("*", {}).get("walk", ()))
        print(f"{command}: walked the whole environment (a prefix they read is not seen): "
              f"{', '.join(walkers) or 'none'}")  # fmt: skip
    axes: dict[str, Axis] = {}
    for command in COMMANDS:
        asked = noted.get(command, {})
        axis = {n: set(kinds["get"]) for n, kinds in asked.items() if "get" in kinds}
        for name, libraries in in_c[command].items():
            axis.setdefault(name, set()).update(libraries)
        axis = {n: who for n, who in sorted(axis.items())
                if n not in own and not EXCLUDED.fullmatch(n)}  # fmt: skip
        native = {n for n in axis if "get" not in asked.get(n, {})}
        axes[command] = (made[command], axis, native)
    return results, axes


def test_the_noting_sees_each_kind_of_look_up_and_tells_a_walk_over_the_environment_apart(
    tmp_path: Path,
) -> None:
    import subprocess
    import sys

    (tmp_path / "sitecustomize.py").write_text(BOOT, encoding="utf-8")
    log = tmp_path / "asked.tsv"
    code = ("import os\nos.getenv('A1'); os.environ.get('A2'); 'A3' in os.environ\n"
            "try:\n    os.environ['A4']\nexcept KeyError:\n    pass\n"
            "dict(os.environ); os.environ.copy(); list(os.environ.items())\n")  # fmt: skip
    env = {
        **os.environ,
        "PYTHONPATH": str(tmp_path),
        "CCSIM_SETTINGS": json.dumps({"log": str(log)}),
    }
    subprocess.run([sys.executable, "-c", code], env=env, check=True, timeout=60)
    asked = [line.split("\t") for line in log.read_text(encoding="utf-8").splitlines()]
    assert [n for n, who, kind in asked if (who, kind) == ("__main__", "get")] == [
        "A1",
        "A2",
        "A3",
        "A4",
    ]
    assert ["*", "__main__", "walk"] in asked  # a walk over all is not a look-up, but noted
    assert "PATH" not in {n for n, _, _ in asked}, asked


def test_the_c_noting_sees_a_getenv_of_a_loaded_library_and_sets_the_interpreters_aside(
    tmp_path: Path,
) -> None:
    import subprocess
    import sys

    noting = _getenv_noting(tmp_path)
    if noting is None:
        pytest.skip("no C compiler (cc) builds the getenv noting: C code's settings unseen")
    log = tmp_path / "getenv.tsv"
    code = "import ctypes\nc = ctypes.CDLL(None)\nc.getenv(b'A5')\nc.secure_getenv(b'A6')\n"
    env = {**os.environ, "LD_PRELOAD": str(noting), "CCSIM_GETENV_LOG": str(log)}
    subprocess.run([sys.executable, "-c", code], env=env, check=True, timeout=60)
    asked = _asked_in_c(log)
    assert {"A5", "A6"} <= asked.keys(), asked  # asked through libffi, like any library
    assert not [n for n in asked if n.startswith("PYTHON")], asked  # the interpreter's own


@pytest.mark.timeout(3600 if ALL else 300)  # every cell: some 150 of reproduce's
@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_dependencys_setting_it_cannot_parse_changes_nothing_or_is_named_in_one_line(
    command: str, axes: tuple[Path, dict[str, Axis]], tmp_path: Path
) -> None:
    results, by_command = axes
    base, axis, native = by_command[command]
    found = [(name, value) for name in axis for value in VALUES]
    chosen = found
    shown = "\n".join(f"  {n} ({', '.join(sorted(who))})" for n, who in axis.items())
    if not ALL:
        # A fixed draw by default, as the other matrices': the suite's run is the same cells
        # every time (a cell failing must fail again); other seeds draw others. Every cell of
        # the EVERY commands' Python look-ups runs; of C code's, DRAWN_NATIVE (run's).
        seed = int(os.environ.get("CCSIM_SETTINGS_SEED") or 47)
        draw = random.Random(seed)
        python = [c for c in found if c[0] not in native]
        in_c = [c for c in found if c[0] in native]
        chosen = (python if command in EVERY else
                  draw.sample(python, min(DRAWN[command], len(python))))  # fmt: skip
        chosen += draw.sample(in_c, min(DRAWN_NATIVE.get(command, 0), len(in_c)))
        chosen = sorted({*chosen, *(c for c in PINNED.get(command, []) if c in found)})
        print(f"{command}: cells {chosen} drawn with CCSIM_SETTINGS_SEED={seed}")
    failing = {}
    for name, value in chosen:
        cell = tmp_path / f"{name}-{value or 'empty'}"
        got = _launch(command, cell, results, {name: value})
        wrong = judge(name, got, base)
        if wrong is not None:
            failing[f"{name}={value!r}"] = wrong
    print(f"{command}: {len(chosen)} of {len(found)} cells run, {len(failing)} failing; "
          f"the axis (who asked):\n{shown}")  # fmt: skip
    assert found, f"ccsim {command} looked up no setting of another package"
    assert not failing, f"ccsim {command}:\n" + "\n".join(
        f"  {cell}: {wrong}" for cell, wrong in failing.items()
    )
