# SPDX-License-Identifier: MIT
"""Every package a command needs is found before its first run, not after its last.

Campaigns 13, 15 and 18 of issue 32 each found a command that imported a package only once its
runs were over (``bench --plot``'s matplotlib; ``reproduce``'s matplotlib and plotly; then its
markdown-it-py): missing, "ccsim needs ..." came after every run, hours of them for a full
reproduction. Found one by one, the class did not end; this test closes it for the commands
that run a plan of simulations in this process or its pool: run, sweep and reproduce
(``bench`` runs each case as a child process and checks its ``--plot`` before them, pinned
in test_bad_input.py; ``explore`` runs on request, not from a plan, and is not covered here).
Each command runs in a child interpreter with an import finder that notes, for every
top-level package outside the standard library that ccsim's own code imports or looks up
(``importlib.util.find_spec`` passes through it too), whether the first run had started. A
package first met after that is a failure naming it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# The child: a finder first in sys.meta_path that records and finds nothing, and the first
# run's start marked where every run begins (a process pool's submit, or the core's run).
CHILD = r"""
import json, sys

met, phase = {}, ["before"]

def importer():
    f = sys._getframe(2)
    while f is not None and f.f_globals.get("__name__", "").startswith(
            ("importlib", "_frozen_importlib")):
        f = f.f_back
    return "" if f is None else f.f_globals.get("__name__", "")

class Noter:
    def find_spec(self, fullname, path=None, target=None):
        top = fullname.partition(".")[0]
        if top in sys.stdlib_module_names or top in ("ccsim", "_core") or top in met:
            return None
        who = importer()
        if who == "ccsim" or who.startswith("ccsim."):
            met[top] = phase[0]
        return None

sys.meta_path.insert(0, Noter())

import ccsim
from ccsim import _core, sweep

def started(f):
    def first_run(*a, **k):
        phase[0] = "after"
        return f(*a, **k)
    return first_run

_core.run = started(_core.run)
sweep._submit = started(sweep._submit)

from ccsim.cli import main
try:
    status = main(sys.argv[2:])
finally:
    with open(sys.argv[1], "w") as out:
        json.dump({"met": met, "ran": phase[0] == "after"}, out)
sys.exit(status)
"""

FILE = str(ROOT / "examples" / "random-loss.toml")


@pytest.mark.parametrize(
    "argv",
    [
        ["run", FILE, "--set", "duration=100ms", "--out", "{out}"],
        ["sweep", FILE, "--set", "duration=100ms", "--param",
         "links.bottleneck.loss.rate=0.01,0.02", "--workers", "1", "--out", "{out}"],
        ["reproduce", "m01", "--quick", "--seeds", "1", "--workers", "1", "--out", "{out}"],
    ],
    ids=["run", "sweep", "reproduce"],
)  # fmt: skip
def test_a_command_finds_every_package_it_needs_before_its_first_run(
    argv: list[str], tmp_path: Path
) -> None:
    record = tmp_path / "met.json"
    args = [a.replace("{out}", str(tmp_path / "out")) for a in argv]
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(record), *args],
        capture_output=True, text=True, cwd=ROOT, timeout=600, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    seen = json.loads(record.read_text(encoding="utf-8"))
    assert seen["ran"], "no run started: the test would pass without looking"
    late = sorted(name for name, phase in seen["met"].items() if phase == "after")
    assert not late, (
        f"ccsim {argv[0]} first looks for {', '.join(late)} after its first run started: "
        "missing, the command fails only after its runs"
    )
    # The test sees ccsim's own imports: the tables' libraries among them.
    assert "pyarrow" in seen["met"], seen["met"]


@pytest.mark.parametrize("command", ["sweep", "report"])
def test_a_numpy_module_of_the_users_under_pandas_or_pyarrow_is_named_as_the_cause(
    command: str, tmp_path: Path
) -> None:
    """sweep and report said "ccsim needs pyarrow, which is installed but cannot be imported
    (module 'numpy' has no attribute '__version__'): install ccsim again": a reinstall
    changes nothing while a numpy.py of the user's comes first (campaign 33, issue 32)."""
    shadow = tmp_path / "mine"
    shadow.mkdir()
    (shadow / "numpy.py").write_text("x = 1\n", encoding="utf-8")
    out = tmp_path / "out"
    argv = {
        "sweep": ["sweep", FILE, "--set", "duration=100ms", "--param",
                  "links.bottleneck.loss.rate=0.01,0.02", "--workers", "1", "--out", str(out)],
        "report": ["report", "--results", str(tmp_path), "--out", str(out)],
    }[command]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(shadow)}
    proc = subprocess.run([sys.executable, "-m", "ccsim", *argv], capture_output=True,
                          text=True, cwd=ROOT, env=env, timeout=600, check=False)  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and f"shadowed by {shadow / 'numpy.py'}" in lines[0], lines
    assert "install ccsim again" not in lines[0] and not out.exists()


@pytest.mark.parametrize("module", ["bottleneck", "pytz"])
def test_a_module_of_the_users_named_like_an_optional_package_of_pandas_is_named_as_the_cause(
    module: str, tmp_path: Path
) -> None:
    """pandas takes bottleneck (and pytz) when it can import them and asks their versions as
    it loads; a ``bottleneck.py`` of the user's first on PYTHONPATH made a sweep say "ccsim
    needs pandas, which is installed but cannot be imported (Can't determine version for
    bottleneck): install ccsim again", which changes nothing (campaign 48, issue 32). Not
    one of ccsim's packages, so the extras matrix never shadows it: its file is named."""
    shadow = tmp_path / "mine"
    shadow.mkdir()
    (shadow / f"{module}.py").write_text("x = 1\n", encoding="utf-8")
    out = tmp_path / "out"
    argv = ["sweep", FILE, "--set", "duration=100ms", "--param",
            "links.bottleneck.loss.rate=0.01,0.02", "--workers", "1",
            "--out", str(out)]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(shadow)}
    proc = subprocess.run([sys.executable, "-m", "ccsim", *argv], capture_output=True,
                          text=True, cwd=ROOT, env=env, timeout=600, check=False)  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr == (
        f"ccsim: error: ccsim needs pandas, which loads {module}, which is shadowed by "
        f"{shadow / module}.py (a module of that name found first where Python looks for it): "
        "rename or move it, or take its folder off PYTHONPATH\n"
    )
    assert not out.exists()


@pytest.mark.parametrize("kind", ["module", "folder"])
def test_a_module_or_folder_of_the_users_named_like_an_optional_package_of_tqdm_is_named(
    kind: str, tmp_path: Path
) -> None:
    """tqdm takes envwrap when it can import it. A folder envwrap/ without __init__.py on
    PYTHONPATH (or in the working folder, under ``python -m ccsim``), which Python imports as
    an empty package, made a sweep say "ccsim needs envwrap, which is installed but cannot be
    imported (cannot import name 'envwrap' from 'envwrap' (unknown location)): install ccsim
    again"; an envwrap.py there, run from the folder above it, "ccsim needs mine, which loads
    envwrap": the file's ImportError was read as an extension module's, and its folder named
    as the package (campaign 50, issue 32)."""
    mine = tmp_path / "mine"
    mine.mkdir()
    if kind == "module":
        shadow = mine / "envwrap.py"
        shadow.write_text("x = 1\n", encoding="utf-8")
        what = "a module of that name found first where Python looks for it"
    else:
        shadow = mine / "envwrap"
        shadow.mkdir()
        what = "a folder of that name without __init__.py, which Python imports as an empty package"
    out = tmp_path / "out"
    argv = ["sweep", FILE, "--set", "duration=100ms", "--param",
            "links.bottleneck.loss.rate=0.01,0.02", "--workers", "1",
            "--out", str(out)]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(mine)}
    proc = subprocess.run([sys.executable, "-m", "ccsim", *argv], capture_output=True,
                          text=True, cwd=tmp_path, env=env, timeout=600, check=False)  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr == (
        f"ccsim: error: ccsim needs tqdm, which loads envwrap, which is shadowed by {shadow} "
        f"({what}): rename or move it, or take its folder off PYTHONPATH\n"
    )
    assert not out.exists()


def _python_with_site(tmp_path: Path, sniffio: bool) -> str:
    """A Python whose site holds this one's packages (links to them) but sniffio, with a
    sniffio distribution of its own when ``sniffio``: whether sniffio is installed is the
    test's to choose, not the Python's running it (CI's has sniffio, a venv made from
    requirements-test.txt has not). A venv made in this process (~0.05 s), no install."""
    import site
    import venv

    home = tmp_path / "python"
    venv.EnvBuilder(symlinks=True).create(home)
    lib = home / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
    sites = list(site.getsitepackages())
    if site.ENABLE_USER_SITE:
        sites.append(site.getusersitepackages())
    for folder in map(Path, sites):
        for entry in folder.iterdir() if folder.is_dir() else []:
            if not entry.name.lower().startswith("sniffio") and not os.path.lexists(
                lib / entry.name
            ):
                (lib / entry.name).symlink_to(entry)
    if sniffio:
        (lib / "sniffio").mkdir()
        (lib / "sniffio" / "__init__.py").write_text("", encoding="utf-8")
        info = lib / "sniffio-1.3.1.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(
            "Metadata-Version: 2.1\nName: sniffio\nVersion: 1.3.1\n", encoding="utf-8"
        )
        (info / "RECORD").write_text(
            "sniffio/__init__.py,,\nsniffio-1.3.1.dist-info/METADATA,,\n", encoding="utf-8"
        )
    return str(home / "bin" / "python")


@pytest.mark.parametrize(
    ("form", "sniffio"), [("module", False), ("folder", False), ("module", True)]
)
def test_a_module_or_folder_of_the_users_named_like_an_optional_package_of_anyio_stops_the_explorer(
    tmp_path: Path, form: str, sniffio: bool
) -> None:
    """anyio (the explorer's server loop) takes sniffio when it can import it. A sniffio.py, or
    a folder sniffio/ without __init__.py, on PYTHONPATH made ``ccsim explore`` say "ccsim
    needs sniffio, which is shadowed by ...": ccsim does not use sniffio; anyio does, and is
    named first (campaign 50, issue 32); and a sniffio.py over an installed sniffio, as in
    CI's Python, still read "ccsim needs sniffio" (campaign 51). Each case runs in a Python
    whose site has sniffio or not as the case says (a folder without __init__.py shadows
    nothing where sniffio is installed: Python takes the installed package over it)."""
    import socket

    if form == "module":
        shadow = tmp_path / "mine" / "sniffio.py"
        shadow.parent.mkdir()
        shadow.write_text("")
        what = "a module of that name found first where Python looks for it"
    else:
        shadow = tmp_path / "mine" / "sniffio"
        shadow.mkdir(parents=True)
        what = "a folder of that name without __init__.py, which Python imports as an empty package"
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    argv = ["explore", "--results", str(tmp_path / "results"), "--port", str(port)]
    env = {**os.environ, "PYTHONPATH": str(shadow.parent)}
    python = _python_with_site(tmp_path, sniffio)
    proc = subprocess.run([python, "-m", "ccsim", *argv], capture_output=True,
                          text=True, cwd=ROOT, env=env, timeout=60, check=False)  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr == (
        f"ccsim: error: ccsim needs anyio, which loads sniffio, which is shadowed by {shadow} "
        f"({what}): rename or move it, or take its folder off PYTHONPATH\n"
    )


@pytest.mark.parametrize("put_first_by", ["a .pth file", "the working folder"])
def test_a_users_module_put_first_by_other_than_pythonpath_is_named_with_the_cure_that_moves_it(
    tmp_path: Path, put_first_by: str
) -> None:
    """A numpy.py whose folder a .pth file of the site puts first on sys.path (``import sys;
    sys.path.insert(0, ...)``, as some installers write), or that lies in the working folder
    under ``python -m ccsim``, was named with "or take its folder off PYTHONPATH", which holds
    no such folder (campaign 51, issue 32)."""
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "numpy.py").write_text("x = 1\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    argv = ["-m", "ccsim", "run", FILE, "--set", "duration=100ms", "--out", str(tmp_path / "out")]
    if put_first_by == "a .pth file":
        python = _python_with_site(tmp_path, sniffio=False)
        pth = next((tmp_path / "python" / "lib").glob("python*/site-packages")) / "mine.pth"
        pth.write_text(f"import sys; sys.path.insert(0, {str(mine)!r})\n", encoding="utf-8")
        cwd, cure = ROOT, f"take out the line of {pth} that puts its folder on sys.path"
    else:
        python, cwd, cure = sys.executable, mine, "run the command from another folder"
    proc = subprocess.run([python, *argv], capture_output=True, text=True, cwd=cwd, env=env,
                          timeout=60, check=False)  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr == (
        f"ccsim: error: ccsim needs numpy, which is shadowed by {mine / 'numpy.py'} (a module "
        f"of that name found first where Python looks for it): rename or move it, or {cure}\n"
    )
    assert not (tmp_path / "out").exists()


def test_a_broken_package_a_dependency_takes_when_installed_is_named_with_its_own_cure(
    tmp_path: Path, m01_quick: Path
) -> None:
    """markdown_it takes linkify_it when it is installed; one installed but broken (its own
    ImportError, its files its distribution's, so no shadow) made a report say "ccsim needs
    markdown_it, which is installed but cannot be imported (...): install ccsim again", which
    leaves linkify_it as it is (campaign 48b, issue 32). A distribution none of ccsim's
    requirements needs is named, with the cures that touch it."""
    site = tmp_path / "site-packages"
    (site / "linkify_it").mkdir(parents=True)
    (site / "linkify_it" / "__init__.py").write_text('raise ImportError("a broken build")\n')
    info = site / "linkify_it_py-2.0.3.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: linkify-it-py\nVersion: 2.0.3\n")
    (info / "RECORD").write_text(
        "linkify_it/__init__.py,,\nlinkify_it_py-2.0.3.dist-info/METADATA,,\n"
    )
    (info / "top_level.txt").write_text("linkify_it\n")
    results = tmp_path / "results"
    shutil.copytree(m01_quick, results / "m01-quick")
    argv = ["report", "--results", str(results), "--out", str(tmp_path / "site")]
    env = {**os.environ, "PYTHONPATH": str(site)}
    proc = subprocess.run([sys.executable, "-m", "ccsim", *argv], capture_output=True,
                          text=True, cwd=ROOT, env=env, timeout=600, check=False)  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr == (
        "ccsim: error: ccsim needs markdown_it, which loads linkify_it (linkify-it-py, installed "
        "beside it and not needed by ccsim), which cannot be imported (a broken build): "
        "reinstall it (pip install --force-reinstall linkify-it-py) or uninstall it\n"
    )
    assert not (tmp_path / "site").exists()


def test_a_numpy_module_of_the_users_shadowing_numpy_stops_a_run_at_its_start(
    tmp_path: Path,
) -> None:
    """A ``numpy.py`` of the user's on PYTHONPATH (or in the working folder, under ``python -m
    ccsim``) imports, so no check for a missing or broken numpy saw it: the run went to its end
    (an hour of it or more), then "internal error (AttributeError): module 'numpy' has no
    attribute 'frombuffer'" named neither the file nor the cure (campaign 33, issue 32)."""
    shadow = tmp_path / "mine"
    shadow.mkdir()
    (shadow / "numpy.py").write_text("x = 1\n", encoding="utf-8")
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(shadow)}
    # Short runs, which end before the first progress report checks the imports, and one
    # that reports (the run of test_extras_matrix.py).
    long = str(ROOT / "python" / "ccsim" / "benchmarks" / "p2.toml")
    for file, duration in ((FILE, "100ms"), (long, "30s")):
        proc = subprocess.run(
            [sys.executable, "-m", "ccsim", "run", file, "--set", f"duration={duration}",
             "--out", str(out)],
            capture_output=True, text=True, cwd=ROOT, env=env, timeout=600, check=False,
        )  # fmt: skip
        _one_line_naming_the_shadow(proc, shadow / "numpy.py", out)


def _one_line_naming_the_shadow(
    proc: subprocess.CompletedProcess[str], shadow: Path, out: Path
) -> None:
    assert proc.returncode == 1, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ccsim: error: ccsim needs numpy"), lines
    assert str(shadow) in lines[0], lines  # the file that shadows it is named
    assert not out.exists()


@pytest.mark.parametrize("command", ["run", "sweep"])
def test_a_package_refusing_the_numpy_it_finds_is_named_not_an_internal_error(
    command: str, tmp_path: Path
) -> None:
    """pyarrow 26 under a numpy 1.26 from the user's site (``pip install --user numpy==1.26``,
    which pyproject.toml's numpy>=1.24 allows) raises an ImportError that names no module:
    "internal error (ImportError): pyarrow requires NumPy 2.0 or newer, found 1.26.4"
    (campaign 33, issue 32). The package whose import raised it is named, with its words."""
    fake = tmp_path / "site" / "pyarrow"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text(
        'raise ImportError("pyarrow requires NumPy 2.0 or newer, found 1.26.4")\n',
        encoding="utf-8",
    )
    out = tmp_path / "out"
    argv = {
        "run": ["run", FILE, "--set", "duration=100ms", "--out", str(out)],
        "sweep": ["sweep", FILE, "--set", "duration=100ms", "--param",
                  "links.bottleneck.loss.rate=0.01,0.02", "--workers", "1", "--out", str(out)],
    }[command]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(fake.parent)}
    proc = subprocess.run([sys.executable, "-m", "ccsim", *argv], capture_output=True,
                          text=True, cwd=ROOT, env=env, timeout=600, check=False)  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("ccsim: error: ccsim needs pyarrow, which is installed but"), lines
    assert "pyarrow requires NumPy 2.0 or newer, found 1.26.4" in lines[0], lines
    assert not out.exists()


@pytest.mark.parametrize("package", ["matplotlib", "markdown_it"])
def test_a_users_module_shadowing_a_package_is_named_before_the_runs(
    package: str, tmp_path: Path
) -> None:
    """A ``matplotlib.py`` of the user's on PYTHONPATH made reproduce say "ccsim needs
    matplotlib, which is not installed" (it is: reinstalling changes nothing); a
    ``markdown_it.py`` imported, and the error came after every run of the plan, with the
    report written and no site (campaign 33, issue 32). The file that shadows the package is
    named, before the first run."""
    shadow = tmp_path / "mine"
    shadow.mkdir()
    (shadow / f"{package}.py").write_text("x = 1\n", encoding="utf-8")
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(shadow)}
    proc = subprocess.run(
        [sys.executable, "-m", "ccsim", "reproduce", "m01", "--quick", "--seeds", "1",
         "--workers", "1", "--out", str(out)],
        capture_output=True, text=True, cwd=ROOT, env=env, timeout=600, check=False,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"ccsim: error: ccsim needs {package}"), lines
    assert f"shadowed by {shadow / package}.py" in lines[0], lines
    assert not out.exists(), sorted(p.name for p in out.iterdir())


def _one_line_naming_the_change(err: str, package: str, kept: str) -> None:
    lines = err.strip().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"ccsim: error: {package} cannot be loaded any more ("), lines
    assert "removed or upgraded while this command ran" in lines[0], lines
    assert kept in lines[0], lines


def test_a_package_removed_during_a_sweep_is_named_with_the_runs_it_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """pyarrow removed (or upgraded) while a sweep ran: pandas imports pyarrow.pandas_compat
    only as the tables are written, after every run, and the sweep said "ccsim needs pyarrow,
    which is not installed: install ccsim again", not that its 12 runs were kept and the same
    command resumes from them (campaign 41, issue 32)."""
    import pandas as pd

    from ccsim.cli import main

    def pyarrow_gone(*args: object, **kwargs: object) -> None:
        raise ModuleNotFoundError("No module named 'pyarrow.pandas_compat'",
                                  name="pyarrow.pandas_compat")  # fmt: skip

    monkeypatch.setattr(pd.DataFrame, "to_parquet", pyarrow_gone)
    out = tmp_path / "out"
    argv = ["sweep", FILE, "--set", "duration=100ms", "--param",
            "links.bottleneck.loss.rate=0.01,0.02", "--workers", "1",
            "--out", str(out)]  # fmt: skip
    assert main(argv) == 1
    _one_line_naming_the_change(capsys.readouterr().err, "pyarrow",
                                f"2 finished runs are kept in {out / 'runs'}")  # fmt: skip
    assert sorted(p.name for p in out.iterdir()) == ["runs"]


def test_a_package_changed_during_a_reproduction_is_named_not_a_file_inside_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """matplotlib upgraded while a reproduction ran (3.11's fonts gone under 3.10's files)
    failed it after every run as ".../matplotlib/mpl-data/fonts/ttf/LastResortHE-Regular.ttf:
    no such file"; plotly removed, as ".../plotly/package_data/plotly.min.js: no such file"
    once the report was written: a file inside the package, not the package, and not why
    (campaign 41, issue 32)."""
    import matplotlib
    import plotly

    import ccsim.site
    from ccsim.cli import main
    from ccsim.experiment import figures

    font = Path(matplotlib.__file__).parent / "mpl-data" / "fonts" / "ttf" / "Gone.ttf"
    script = Path(plotly.__file__).parent / "package_data" / "plotly.min.js.gone"

    def font_gone(*args: object, **kwargs: object) -> None:
        raise FileNotFoundError(2, "No such file or directory", str(font))

    def script_gone(*args: object, **kwargs: object) -> None:
        raise FileNotFoundError(2, "No such file or directory", str(script))

    monkeypatch.setattr(figures, "_save", font_gone)
    out = tmp_path / "out"
    argv = ["reproduce", "m01", "--quick", "--seeds", "1", "--workers", "1", "--out", str(out)]
    monkeypatch.chdir(ROOT)
    assert main(argv) == 1
    _one_line_naming_the_change(capsys.readouterr().err, "matplotlib",
                                f"the finished runs are kept in {out / 'runs'}")  # fmt: skip
    monkeypatch.undo()
    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(ccsim.site, "build_site", script_gone)
    assert main(argv) == 1
    _one_line_naming_the_change(capsys.readouterr().err, "plotly",
                                f"{out} holds the rest of this reproduction")  # fmt: skip
    assert (out / "report.md").is_file() and not (out / "site").exists()


def test_a_reproduction_loads_its_site_code_before_its_first_run(tmp_path: Path) -> None:
    """ccsim's own site modules were imported only after every run, to write the site: ccsim
    upgraded while a reproduction ran (`git pull` in an editable install's clone) failed it
    with "internal error (ImportError): cannot import name ... from 'ccsim.staging'", the new
    site code asking the old, loaded ccsim for a name it did not have (campaign 41, issue 32).
    The ccsim modules loaded at the first run are the ones the whole reproduction uses."""
    child = (
        "import sys\n"
        "from ccsim import sweep\n"
        "from ccsim.cli import main\n"
        "def first_run(*a, **k):\n"
        "    print(' '.join(sorted(m for m in sys.modules if m.startswith('ccsim.site'))))\n"
        "    raise SystemExit(0)\n"
        "sweep.execute = first_run\n"
        f"main(['reproduce', 'm01', '--quick', '--out', {str(tmp_path / 'out')!r}])\n"
    )
    proc = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True,
                          cwd=ROOT, timeout=600, check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    loaded = set(proc.stdout.split())
    assert {"ccsim.site.build", "ccsim.site.figures", "ccsim.site.pages",
            "ccsim.site.reports"} <= loaded, proc.stdout  # fmt: skip
