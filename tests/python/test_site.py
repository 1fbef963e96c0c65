# SPDX-License-Identifier: MIT
"""``ccsim report``: the offline HTML site, checked as files and in a real headless Chromium."""

from __future__ import annotations

import errno
import io
import os
import re
import shutil
import socket
import subprocess
import sys
import warnings
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from conftest import STDOUT_ERRORS, browser_page, main_without_stdout, system_chromium

from ccsim.cli import main
from ccsim.experiment import find_experiment, load_plan, reproduce
from ccsim.site import SiteWarning, build_site, read_report, series_figure
from ccsim.site.reports import load_stored_plan

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Paper 001's quick reproduction with 2 seeds (every figure, a CI at every point)."""
    base = tmp_path_factory.mktemp("results")
    folder = find_experiment("p001", ROOT)
    reproduce(folder, base / "p001-quick", quick=True, workers=1, seeds=2, progress=False)
    return base


def copies(results: Path, tree: Path, names: Iterable[str]) -> Path:
    """``tree`` holding a copy of p001's quick reproduction (without its runs and site) under
    each of ``names``: a results folder of several reproductions."""
    for name in names:
        shutil.copytree(results / "p001-quick", tree / name,
                        ignore=shutil.ignore_patterns("runs", "site"))  # fmt: skip
    return tree


@pytest.fixture(scope="module")
def site(results: Path) -> Path:
    return build_site(results, root=ROOT)


@pytest.fixture
def page(chromium_browser: Any) -> Iterator[tuple[Any, list[str]]]:
    yield from browser_page(chromium_browser)


def keep_screenshot(page: Any, path: Path, docs_name: str | None = None) -> None:
    """Save a screenshot as a test artifact (its path printed); with CCSIM_SCREENSHOTS=1 also
    as docs/img/<docs_name>, the README's picture."""
    page.screenshot(path=str(path))
    print(f"screenshot: {path}")
    if docs_name and os.environ.get("CCSIM_SCREENSHOTS") == "1":
        shutil.copyfile(path, ROOT / "docs" / "img" / docs_name)


def korean_font() -> str | None:
    """The reason to skip a Hangul test, or None when fontconfig knows a Korean font."""
    if shutil.which("fc-list") is None:
        return "no fc-list (fontconfig) to ask for a Korean font"
    out = subprocess.run(["fc-list", ":lang=ko"], capture_output=True, text=True).stdout
    if not out.strip():
        return "no Korean font (Debian's fonts-noto-cjk; scripts/test installs it as root)"
    return None


#: The CJK fonts every page names (ccsim.fonts): Debian/Ubuntu's, Google's, macOS's, Windows'.
CJK_FONTS = ('"Noto Sans CJK KR"', '"Noto Sans KR"', '"Apple SD Gothic Neo"', '"Malgun Gothic"')

#: Draws ``word`` and as many unassigned code points (U+0378: no font has a glyph for it, so
#: Chromium draws its missing-glyph box) in the font of the element ``selector`` on a canvas:
#: widths and pixels.
GLYPHS = """([word, selector]) => {
  const c = document.createElement("canvas"); c.width = 600; c.height = 60;
  const g = c.getContext("2d");
  g.font = "32px " + getComputedStyle(document.querySelector(selector)).fontFamily;
  const draw = (text) => {
    g.clearRect(0, 0, c.width, c.height); g.fillText(text, 0, 44);
    const alpha = g.getImageData(0, 0, c.width, c.height).data.filter((_, i) => i % 4 === 3);
    return {width: g.measureText(text).width, ink: alpha.reduce((n, a) => n + (a > 0), 0),
            pixels: alpha.join(",")};
  };
  return {word: draw(word), tofu: draw("\\u0378".repeat([...word].length))};
}"""


def assert_hangul_renders(pg: Any, selector: str) -> None:
    """The element ``selector`` names the pages' CJK fonts, and the longest Hangul word of its
    text draws in its font as glyphs, not as missing-glyph boxes."""
    family = pg.evaluate(f"getComputedStyle(document.querySelector('{selector}')).fontFamily")
    assert all(f in family for f in CJK_FONTS), family
    text = pg.locator(selector).first.text_content() or ""
    words = re.findall("[\uac00-\ud7a3]+", text)  # Hangul syllables
    assert words, text
    word = max(words, key=len)
    m = pg.evaluate(GLYPHS, [word, selector])
    assert m["word"]["width"] > 0 and m["word"]["ink"] > 0
    # With the font each syllable is its own glyph; without it every one is the same box.
    assert m["word"]["pixels"] != m["tofu"]["pixels"], f"{word!r} draws as missing glyphs"


def test_the_site_has_an_index_a_page_per_reproduction_and_plotly_beside_them(site: Path) -> None:
    out = site.parent
    assert sorted(p.name for p in out.glob("*.html")) == ["index.html", "p001-quick.html"]
    js = (out / "plotly.min.js").read_text(encoding="utf-8")
    assert "plotly" in js[:2000].lower() and len(js) > 1_000_000
    page = (out / "p001-quick.html").read_text(encoding="utf-8")
    # Offline: every script is the local plotly.min.js or inline; nothing names a host.
    assert re.findall(r"<script[^>]*src=\"([^\"]+)\"", page) == ["plotly.min.js"]
    assert "cdn." not in page
    index = site.read_text(encoding="utf-8")
    assert 'href="p001-quick.html"' in index and "quick (not for conclusions)" in index
    # The index counts each verdict of report.md's claims table.
    from ccsim.experiment.verdicts import VERDICTS, verdict_of

    claims = read_report(site.parent.parent / "p001-quick").claims
    counts = {v: sum(1 for _, _, ours in claims if verdict_of(ours) == v) for v in VERDICTS}
    assert sum(counts.values()) == len(claims)
    assert len(claims) == len(load_plan(find_experiment("p001", ROOT)).claims)
    assert f'<span class="verdict-holds">{counts["holds"]} hold</span>' in index
    assert f'<span class="verdict-partly-holds">{counts["partly holds"]} partly</span>' in index
    assert f'<span class="verdict-does-not-hold">{counts["does not hold"]} do not hold' in index
    assert f'<span class="verdict-contradicted">{counts["contradicted"]} contradicted' in index
    # Each paper's main result, as report.md opens with it.
    page = read_report(site.parent.parent / "p001-quick")
    assert len(page.headlines) == 1 and page.headlines[0] in (
        "reproduced",
        "partly reproduced",
        "not reproduced",
        "contradicted",
        "not judged",
    )
    assert f"<td>{page.headlines[0]}</td>" in index


def test_a_page_shows_every_claim_of_report_md_with_its_verdict(site: Path, results: Path) -> None:
    report = read_report(results / "p001-quick")
    assert len(report.claims) == len(load_plan(find_experiment("p001", ROOT)).claims)
    page = (site.parent / "p001-quick.html").read_text(encoding="utf-8")

    def escaped(text: str) -> str:  # as the Markdown renderer escapes text
        return (
            text.replace("&", "&amp;")
            .replace("<", "&lt;")
            .replace(">", "&gt;")
            .replace('"', "&quot;")
        )

    for _, says, ours in report.claims:
        verdict, _, why = ours.partition(": ")
        assert f'<span class="verdict-{verdict.replace(" ", "-")}">{verdict}</span>' in page
        assert f"<td>{escaped(says)}</td>" in page and f": {escaped(why)}</td>" in page
    for heading in ("<h2>Assumptions</h2>", "<h2>Setup</h2>", "<h2>The paper's findings and"):
        assert heading in page
    assert "ccsim reproduce p001 --quick --seeds 2" in page


class _Terminal:
    """A terminal for stderr (isatty), holding what was written."""

    def __init__(self) -> None:
        self.written = ""

    def isatty(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self.written += text
        return len(text)

    def flush(self) -> None:
        pass


def test_ccsim_report_says_on_a_terminal_which_reproduction_it_builds_and_warns_on_lines_of_its_own(
    results: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Campaign 61b (issue 32): a site of 201 reproductions took 100 s and the command said
    # nothing until its last line. Past its first second (the clock here steps 1.5 s at each
    # look), a line says which one is built; a warning is written over it, on its own line.
    from ccsim import cli

    tree = copies(results, tmp_path / "res", ["a", "b"])
    (tree / "b" / "report.md").write_text("", encoding="utf-8")  # left out, with a warning
    clock = [0.0]

    def stepping() -> float:
        clock[0] += 1.5
        return clock[0]

    term = _Terminal()
    monkeypatch.setattr(cli.time, "monotonic", stepping)
    monkeypatch.setattr(sys, "stderr", term)
    assert main(["report", "--results", str(tree), "--out", str(tmp_path / "s")]) == 0
    shown = term.written
    assert "\rbuilding the site: 1 of 2 reproductions (a)" in shown
    assert "\rbuilding the site: 2 of 2 reproductions (b)" in shown
    assert re.search(r"\r *\rccsim: warning: b left out of the site: ", shown), shown
    assert shown.endswith("\n")
    monkeypatch.setattr(sys, "stderr", io.StringIO())  # not a terminal: no line
    assert main(["report", "--results", str(tree), "--out", str(tmp_path / "s2")]) == 0
    assert "building" not in sys.stderr.getvalue()


def test_ccsim_report_writes_the_site_and_prints_its_path(
    results: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    monkeypatch.chdir(ROOT)
    assert main(["report", "--results", str(results), "--out", str(tmp_path / "s")]) == 0
    assert capsys.readouterr().out.strip() == f"site: {tmp_path / 's' / 'index.html'}"
    assert (tmp_path / "s" / "p001-quick.html").exists()
    # Campaign 7: a new site folder was drwx------ (made by mkdtemp, renamed into place): a
    # web server running as another user could not serve it. Now as any folder made under
    # the umask (pytest's own: 022 unless the machine says otherwise).
    (tmp_path / "plain").mkdir()
    assert (tmp_path / "s").stat().st_mode & 0o777 == (tmp_path / "plain").stat().st_mode & 0o777


def test_ccsim_reproduce_ends_by_writing_its_own_site_inside_its_folder_and_printing_its_path(
    results: Path, capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    monkeypatch.chdir(ROOT)
    out = results / "p001-quick"
    argv = ["reproduce", "p001", "--quick", "--seeds", "2", "--out", str(out), "--workers", "1"]
    assert main(argv) == 0
    printed = capsys.readouterr().out.splitlines()
    assert re.fullmatch(r"0 runs executed, \d+ reused from the store", printed[0]), printed
    assert f"site: {out / 'site' / 'index.html'}" in printed
    assert (out / "site" / "p001-quick.html").exists()


@pytest.mark.parametrize("stdout", ["closed", "full"])
def test_ccsim_reproduce_that_cannot_write_its_output_names_stdout_in_one_line(
    stdout: str, results: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    # Campaign 3: `ccsim reproduce p001 > /dev/full` ended with a bare "[Errno 28] No space
    # left on device" (its "runs executed" and "site:" lines were print()ed).
    monkeypatch.chdir(ROOT)
    out = results / "p001-quick"
    argv = ["reproduce", "p001", "--quick", "--seeds", "2", "--out", str(out), "--workers", "1"]
    said = main_without_stdout(stdout, argv, monkeypatch, capsys)
    assert said == (1, STDOUT_ERRORS[stdout])


@pytest.mark.parametrize("stdout", ["closed", "full"])
def test_ccsim_reproduce_writes_its_site_when_stdout_cannot_take_its_lines(
    stdout: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    # Campaign 16 (issue 32): the "runs executed" line was said before the site was built, so
    # `ccsim reproduce m01 >&-` (or > /dev/full) stopped there: every run done and no site
    # (nor, with --record, the record of a full run).
    monkeypatch.chdir(ROOT)
    out = tmp_path / "m01"
    argv = ["reproduce", "m01", "--quick", "--seeds", "1", "--out", str(out), "--workers", "1"]
    assert main_without_stdout(stdout, argv, monkeypatch, capsys) == (1, STDOUT_ERRORS[stdout])
    assert (out / "report.md").is_file()
    assert (out / "site" / "index.html").is_file()
    assert (out / "site" / "m01.html").is_file()


def _listing(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*"))


def _links(page: str) -> list[str]:
    """Every href and src of an HTML page."""
    from html.parser import HTMLParser

    found: list[str] = []

    class Links(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            found.extend(v for k, v in attrs if k in ("href", "src") and v is not None)

    Links().feed(page)
    return found


def test_reproduce_writes_only_inside_out_and_report_from_elsewhere_builds_a_site_that_stands_alone(
    tmp_path: Path, monkeypatch: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    parent, elsewhere = tmp_path / "parent", tmp_path / "elsewhere"
    parent.mkdir()
    elsewhere.mkdir()
    (parent / "someone-else.txt").write_text("not ours")
    before = _listing(parent)
    out = parent / "p001"
    # From a folder that is not the repository: the experiment is given by its path.
    monkeypatch.chdir(elsewhere)
    experiment = find_experiment("p001", ROOT)
    argv = ["reproduce", str(experiment), "--quick", "--seeds", "1", "--workers", "1",
            "--out", str(out)]  # fmt: skip
    assert main(argv) == 0
    assert f"site: {out / 'site' / 'index.html'}" in capsys.readouterr().out.splitlines()
    assert [p for p in _listing(parent) if not p.startswith("p001")] == before
    assert _listing(elsewhere) == []
    # The results carry the plan they ran.
    assert (out / "plan" / "plan.toml").read_bytes() == (experiment / "plan.toml").read_bytes()
    assert (out / "plan" / "scenario.toml").read_bytes() == (
        experiment / "scenario.toml"
    ).read_bytes()

    # `ccsim report` away from the repository finds every interactive figure from the results.
    assert main(["report", "--results", str(parent), "--out", str(tmp_path / "built")]) == 0
    assert capsys.readouterr().err == ""
    assert _listing(elsewhere) == []
    # The site stands alone: moved away from the results, every link still resolves inside it.
    site = (tmp_path / "built").rename(tmp_path / "moved")
    plan = load_plan(experiment)
    page = (site / "p001.html").read_text(encoding="utf-8")
    assert page.count('data-kind="points"') == len(plan.figures)
    assert len(plan.series_figures) > 0
    for sf in plan.series_figures:
        assert f'data-figure="{sf.id}" data-kind="{sf.kind}"' in page, sf.id
    pages = sorted(site.glob("*.html"))
    assert [p.name for p in pages] == ["index.html", "p001.html"]
    images = 0
    for html_file in pages:
        for link in _links(html_file.read_text(encoding="utf-8")):
            target = (site / link).resolve()
            assert target.is_relative_to(site.resolve()) and target.is_file(), (html_file, link)
            images += link.endswith((".png", ".svg"))
    assert images > 0


@pytest.mark.parametrize(
    ("command", "inside"),
    [("report", ""), ("sweep", ""), ("run", ""), ("sweep", "runs"), ("run", "plan")],
)
def test_an_out_that_is_a_reproductions_folder_is_refused_naming_it_and_nothing_is_written(
    results: Path, command: str, inside: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # Issue 32's noticed list: `ccsim report --out results/p001` left p001 out of its own site
    # (a site of the others, or of nothing, status 0) and mixed the site's files with the
    # reproduction's; `ccsim sweep --out results/p001` (and `run`) wrote their tables among
    # the reproduction's files, a sweep its runs into the reproduction's store. Campaign 18:
    # `ccsim run --out results/p001/plan` wrote over the stored plan's scenario.toml.
    repro = results / "p001-quick"
    out = repro / inside if inside else repro
    before = {p: p.stat().st_mtime_ns for p in results.rglob("*")}
    scenario = str(ROOT / "examples" / "random-loss.toml")
    argv = {
        "report": ["report", "--results", str(results), "--out", str(out)],
        "sweep": ["sweep", scenario, "--set", "duration=0.1s", "--out", str(out)],
        "run": ["run", scenario, "--set", "duration=0.1s", "--out", str(out)],
    }[command]
    assert main(argv) == 1
    err = capsys.readouterr().err
    if command == "report":
        assert "this is the reproduction p001-quick's folder (it holds report.md)" in err, err
    elif inside:
        assert f"--out {out}: it is inside {repro}, the reproduction of p001 (its report.md " \
            "and run.json)" in err, err  # fmt: skip
    else:
        assert f"--out {out}: this is the reproduction of p001 (its report.md and run.json)" \
            in err, err  # fmt: skip
    assert len(err.splitlines()) == 1
    assert {p: p.stat().st_mtime_ns for p in results.rglob("*")} == before


def test_a_folder_with_a_report_md_of_the_users_own_is_not_taken_for_a_reproduction(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # report.md is a common name: a reproduction is one beside a run.json naming its paper.
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "report.md").write_text("# my notes\n", encoding="utf-8")
    scenario = str(ROOT / "examples" / "random-loss.toml")
    assert main(["run", scenario, "--set", "duration=0.1s", "--out", str(notes)]) == 0
    assert (notes / "flows.parquet").is_file()
    assert (notes / "report.md").read_text(encoding="utf-8") == "# my notes\n"
    capsys.readouterr()


def test_a_site_written_into_the_results_folder_itself_loses_none_of_the_reproductions_files(
    results: Path, tmp_path: Path
) -> None:
    # The results folder as --out stays allowed (the pages beside the reproductions' folders,
    # their figures linked in place): a rebuild after a reproduction is removed deletes that
    # page only, and never a file of a reproduction.
    root = tmp_path / "results"
    shutil.copytree(results / "p001-quick", root / "p001-quick")
    shutil.copytree(results / "p001-quick", root / "other")
    kept = {p: p.read_bytes() for p in (root / "p001-quick").rglob("*") if p.is_file()}
    assert main(["report", "--results", str(root), "--out", str(root)]) == 0
    assert {"index.html", "p001-quick.html", "other.html"} <= {p.name for p in root.iterdir()}
    shutil.rmtree(root / "other")
    assert main(["report", "--results", str(root), "--out", str(root)]) == 0
    assert not (root / "other.html").exists() and (root / "p001-quick.html").is_file()
    assert {p: p.read_bytes() for p in (root / "p001-quick").rglob("*") if p.is_file()} == kept


def test_ccsim_report_refuses_a_results_folder_that_does_not_exist(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", "--results", str(tmp_path / "nope")]) == 1
    assert "is not a folder" in capsys.readouterr().err


def test_ccsim_report_refuses_a_folder_without_a_reproduction_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # It wrote a site saying "No reproduction yet" and exited 0 (issue 32).
    (tmp_path / "notes").mkdir()
    assert main(["report", "--results", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert f"--results: {tmp_path} holds no reproduction" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes"]


@pytest.mark.parametrize("kind", ["fifo", "folder"])
def test_ccsim_report_of_a_folder_whose_report_md_is_no_file_says_what_it_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    # Campaign 64b (issue 32): a reproduction's report.md that was a FIFO (or a folder) was
    # said as "holds no reproduction (no report.md in it or in a folder of it)", of a folder
    # whose listing shows a report.md, where its other files are named as what they are.
    report = tmp_path / "report.md"
    os.mkfifo(report) if kind == "fifo" else report.mkdir()
    assert main(["report", "--results", str(tmp_path), "--out", str(tmp_path / "s")]) == 1
    what = "is a FIFO (named pipe), not a regular file" if kind == "fifo" else "is a directory"
    assert capsys.readouterr().err == (
        f"ccsim: error: --results: {report} {what}, where a reproduction keeps its report: "
        "move it away and run `ccsim reproduce` again into that folder, or give --results "
        "another\n"
    )
    assert not (tmp_path / "s").exists()


@pytest.mark.parametrize(("name", "kind"), [("index.html", "a folder"), ("a", "a file")])
def test_ccsim_report_into_an_out_with_a_site_file_s_place_taken_writes_nothing(
    name: str, kind: str, results: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Campaign 22 (issue 32): with OUT/index.html a folder, every other page was moved into
    # OUT before index.html's rename failed, and the error said the site was not written.
    tree = copies(results, tmp_path / "res", ["a"])
    out = tmp_path / "out"
    out.mkdir()
    (out / name).mkdir() if kind == "a folder" else (out / name).write_text("mine")
    assert main(["report", "--results", str(tree), "--out", str(out)]) == 1
    assert capsys.readouterr().err == (
        f"ccsim: error: {out / name} is {kind}, where the site's {name} goes: move it away or "
        "name another folder; the site was not written\n"
    )
    assert [p.name for p in out.iterdir()] == [name]


def test_ccsim_report_over_only_damaged_reproductions_fails_and_writes_no_site(
    results: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Campaign 12: every reproduction left out gave the site of nothing ("No reproduction
    # yet: run ccsim reproduce p001", untrue) with status 0, the site the refusal above
    # exists to prevent.
    tree = tmp_path / "results"
    shutil.copytree(results / "p001-quick", tree / "p001-bad",
                    ignore=shutil.ignore_patterns("runs", "site"))  # fmt: skip
    report = tree / "p001-bad" / "report.md"
    report.write_bytes(report.read_bytes() + b"\ncaf\xe9\n")
    assert main(["report", "--results", str(tree)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith(f"ccsim: warning: p001-bad left out of the site: {report}: not UTF-8")
    assert err[1:] == [
        f"ccsim: error: {tree}: every reproduction in it was left out (named above), so no "
        "site was written; run `ccsim reproduce` again for them"
    ]
    assert sorted(p.name for p in tree.iterdir()) == ["p001-bad"]


def test_the_page_of_a_reproduction_removed_from_results_is_removed_from_the_rebuilt_site(
    results: Path, tmp_path: Path
) -> None:
    # Campaign 13: after `rm -r results/p001-old` (or renaming its folder), `ccsim report`
    # left p001-old.html in the site beside the new pages: unlinked, reachable, its results
    # gone. A file of the user's in the site folder is not ccsim's to remove.
    tree = copies(results, tmp_path / "results", ("p001-old", "p001-new"))
    site = tree / "site"
    build_site(tree, root=ROOT)
    (site / "notes.html").write_text("mine", encoding="utf-8")
    assert {"p001-old.html", "p001-new.html"} <= {p.name for p in site.glob("*.html")}
    shutil.rmtree(tree / "p001-old")
    build_site(tree, root=ROOT)
    assert sorted(p.name for p in site.glob("*.html")) == [
        "index.html",
        "notes.html",
        "p001-new.html",
    ]
    assert "p001-old" not in (site / "pages.json").read_text(encoding="utf-8")


def test_a_site_into_a_folder_on_another_file_system_is_moved_in_whole_and_leaves_nothing_hidden(
    results: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Campaign 26: `ccsim report --out <a mount point>` (a USB disk, a tmpfs) staged the site
    # beside it, on the parent's file system, and no rename crosses file systems: "...
    # invalid cross-device link", an empty m01/ left in the site. Here ``disk`` is the mount
    # point: a rename into it from outside it fails as the system's does.
    tree = copies(results, tmp_path / "results", ("p001-a",))
    disk = tmp_path / "disk"
    disk.mkdir()
    real = os.replace

    def replace(src: Any, dest: Any) -> None:
        inside = Path(dest).absolute().is_relative_to(disk)
        if inside and not Path(src).absolute().is_relative_to(disk):
            raise OSError(errno.EXDEV, os.strerror(errno.EXDEV), str(src), None, str(dest))
        real(src, dest)

    monkeypatch.setattr(os, "replace", replace)
    assert build_site(tree, disk, root=ROOT) == disk / "index.html"
    assert (disk / "p001-a.html").is_file() and (disk / "p001-a").is_dir()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["disk", "results"]
    assert not [p for p in disk.iterdir() if p.name.startswith(".")]


def test_a_damaged_file_leaves_its_reproduction_out_with_a_warning_naming_it_and_builds_the_rest(
    results: Path, tmp_path: Path
) -> None:
    tree = copies(results, tmp_path / "results", ("p001-cut", "p001-good", "p001-not-utf8"))
    not_utf8 = tree / "p001-not-utf8" / "report.md"
    not_utf8.write_bytes(not_utf8.read_bytes() + b"\nFig. 8 caf\xe9\n")
    cut = tree / "p001-cut" / "summary.parquet"
    cut.write_bytes(cut.read_bytes()[:200])  # a copy or a disk that stopped short
    proc = subprocess.run([sys.executable, "-m", "ccsim.cli", "report", "--results", str(tree)],
                          capture_output=True, text=True, check=False, cwd=tmp_path)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    warned = proc.stderr.splitlines()
    assert len(warned) == 2, warned
    assert warned[0].startswith(f"ccsim: warning: p001-cut left out of the site: {cut}: ")
    assert warned[1].startswith(f"ccsim: warning: p001-not-utf8 left out of the site: {not_utf8}:")
    assert "not UTF-8" in warned[1]
    site = tree / "site"
    assert sorted(p.name for p in site.glob("*.html")) == ["index.html", "p001-good.html"]
    index = (site / "index.html").read_text(encoding="utf-8")
    assert 'href="p001-good.html"' in index and "p001-cut" not in index


def test_in_chromium_every_figure_draws_a_marker_per_point_and_hover_shows_its_value(
    site: Path, results: Path, page: tuple[Any, list[str]], tmp_path: Path
) -> None:
    pg, errors = page
    pg.goto((site.parent / "p001-quick.html").as_uri())
    # The point figures (a packet trace is drawn too, as a series figure).
    figures = pg.locator('div.figure[data-kind="points"]')
    summary = pd.read_parquet(results / "p001-quick" / "summary.parquet")
    n_figures = len(load_plan(find_experiment("p001", ROOT)).figures)
    assert figures.count() == summary["figure"].nunique() == n_figures
    for i in range(figures.count()):
        fig = figures.nth(i)
        fid = fig.get_attribute("data-figure")
        expected = len(summary[summary["figure"] == fid])
        assert int(fig.get_attribute("data-count") or 0) == expected
        fig.locator(".scatterlayer .point").first.wait_for()
        assert fig.locator(".scatterlayer .point").count() == expected, fid
    # Hover the first marker of the first figure: the text shows that point's mean and CI.
    first = figures.nth(0)
    first.scroll_into_view_if_needed()
    traces = pg.evaluate(f"document.getElementById('{first.get_attribute('data-figure')}').data")
    box = first.locator(".scatterlayer .trace").first.locator(".point").first.bounding_box()
    assert box is not None
    pg.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    hover = pg.locator(".hoverlayer .hovertext").first
    hover.wait_for()
    text = hover.text_content() or ""
    # Lines can overlap at the smallest x: the hover names whichever line is nearest; its
    # value and CI there must be in the text.
    shown = [t for t in traces if text.startswith(t["name"])]
    assert len(shown) == 1, text
    t = shown[0]
    # d3-format's .4g keeps trailing zeros, like Python's #.4g.
    assert f"{t['y'][0]:#.4g} ± {t['error_y']['array'][0]:#.3g} (95 % CI, n = 2)" in text, text
    # Stop 61: Plotly.js 4's "Share chart..." button, on every figure by default, sends the
    # figure's data to cloud.plotly.com; the site links nothing outside itself.
    buttons = first.locator(".modebar-btn")
    assert buttons.count() > 3
    assert "Share chart..." not in buttons.evaluate_all("bs => bs.map(b => b.dataset.title)")
    keep_screenshot(pg, tmp_path / "report-page.png", "report.png")
    assert errors == []


def test_in_chromium_the_index_links_each_page(
    site: Path, page: tuple[Any, list[str]], tmp_path: Path
) -> None:
    pg, errors = page
    pg.goto(site.as_uri())
    pg.click("text=p001-quick")
    pg.wait_for_url("**/p001-quick.html")
    assert pg.locator("h1").first.text_content().startswith("p001: ")  # type: ignore[union-attr]
    keep_screenshot(pg, tmp_path / "index.png")
    assert errors == []


@pytest.mark.parametrize("name", ["p001 #2", "p001?quick", "p001 100%", "p001%23"])
def test_the_index_links_a_reproduction_whose_folder_name_a_url_reads_otherwise(
    name: str, results: Path, tmp_path: Path
) -> None:
    # Campaign 16 (issue 32): the index wrote the folder's name into its link as it is, so a
    # reproduction in "p001 #2" was linked as the page "p001 " with the fragment "2.html", and
    # "p001?quick" as "p001" with a query; the page's own links to its figures were quoted.
    from urllib.parse import unquote, urljoin, urlsplit

    shutil.copytree(results / "p001-quick", tmp_path / name)
    index = build_site(tmp_path, root=ROOT)
    links = [h for h in _links(index.read_text(encoding="utf-8")) if h.endswith(".html")]
    assert len(links) == 1, links
    target = urlsplit(urljoin(index.as_uri(), links[0]))
    assert (target.query, target.fragment) == ("", "")
    assert Path(unquote(target.path)) == index.parent / f"{name}.html"
    assert (index.parent / f"{name}.html").is_file()


def test_in_chromium_time_series_figures_draw_a_line_per_flow_and_line_from_the_store(
    tmp_path: Path, page: tuple[Any, list[str]]
) -> None:
    from test_experiment import PLAN, SCENARIO
    from test_experiment_machinery import PACKET_TRACE

    folder = tmp_path / "experiments" / "t-test"
    folder.mkdir(parents=True)
    (folder / "scenario.toml").write_text(SCENARIO)
    # A packet trace of seed 2: the site draws the run the PNG was drawn from, not seed 1's.
    (folder / "plan.toml").write_text(PLAN + PACKET_TRACE)
    results = tmp_path / "results"
    reproduce(folder, results / "t-quick", quick=True, workers=1, progress=False)
    site = build_site(results, root=tmp_path)
    pg, errors = page
    pg.goto((site.parent / "t-quick.html").as_uri())
    kinds = {}
    for fig in pg.locator("div.figure").all():
        fid = fig.get_attribute("data-figure")
        kinds[fid] = fig.get_attribute("data-kind")
        fig.locator(".scatterlayer .trace").first.wait_for()
        drawn = fig.locator(".scatterlayer .trace").count()
        assert drawn == int(fig.get_attribute("data-count") or 0), fid
    # Each time series as what it is.
    assert kinds == {"loss": "points", "shares": "flow_series", "util": "link_series",
                     "trace": "packet_trace"}  # fmt: skip
    # 2 lines x 2 flows in the flow series, a line each in the link series, 2 lines x (ACKs,
    # sent, resent, dropped) in the trace, whose markers are drawn.
    ids = "['shares', 'util', 'trace']"
    counts = pg.evaluate(f"{ids}.map(id => document.getElementById(id).data.length)")
    assert counts == [4, 2, 8]
    assert pg.locator('div.figure[data-figure="trace"] .scatterlayer .point').count() > 100
    assert errors == []


def _panels(fig: Any) -> dict[str, dict[str, Any]]:
    """A Plotly figure of panels: by panel title, its traces by name and its y axis title."""
    titles = [a.text for a in fig.layout.annotations]
    out: dict[str, dict[str, Any]] = {}
    for trace in fig.data:
        k = int(trace.yaxis[1:] or 1)
        panel = out.setdefault(titles[k - 1], {"traces": {}})
        panel["traces"][trace.name] = trace
        panel["y"] = fig.layout[f"yaxis{k if k > 1 else ''}"].title.text
    return out


def test_the_sites_p001_packet_trace_draws_every_scheme_of_the_paper_incl_i_tcp(
    results: Path,
) -> None:
    folder = results / "p001-quick"
    plan = load_plan(folder / "plan")
    sf = next(s for s in plan.series_figures if s.id == "fig5_trace")
    schemes = next(f for f in plan.figures if f.id == "fig8").lines
    assert schemes == ["reno", "spack", "snoop", "itcp"] and sf.lines == schemes
    drawn = series_figure(sf, plan, folder, quick=True)
    assert drawn is not None
    panels = _panels(drawn[0])
    assert list(panels) == [plan.lines[lid].label for lid in schemes]
    for label, panel in panels.items():
        traces = panel["traces"]
        # A 100 KB transfer of 1,000-byte segments: about 100 sent, some lost at 5 %, ACKs.
        sent = traces["data sent on the wireless hop (BS to MH)"]
        assert 90 <= len(sent.y) and max(sent.y) < 100_000, label
        assert len(traces["data dropped"].y) > 0, label
        assert max(traces["ACK number the sender receives"].y) >= 99_000, label
        assert panel["y"] == "sequence number (bytes)"
    assert drawn[1] == 4 * len(schemes)


def test_the_sites_p004_fig11_is_a_packet_trace_with_each_transports_sequence_numbers(
    tmp_path: Path,
) -> None:
    from ccsim.experiment.runs import plan_runs
    from ccsim.sweep import Store, _execute_one

    # Only fig11's two runs (5 s each), stored as ccsim reproduce stores them.
    plan = load_plan(find_experiment("p004", ROOT))
    sf = next(s for s in plan.series_figures if s.id == "fig11")
    assert sf.kind == "packet_trace"
    store = Store(tmp_path / "runs")
    for r in plan_runs(plan, True, 1):
        if dict(r.tags)["figure"] == "fig11":
            store.save(r.key(), _execute_one(r.text, r.overrides, r.seed))
    drawn = series_figure(sf, plan, tmp_path, quick=True)
    assert drawn is not None
    panels = _panels(drawn[0])
    ip, ls = (panels[plan.lines[lid].label] for lid in ("ip", "ls"))
    # TCP's sequence numbers count bytes, SCTP's TSNs chunks; neither is a utilization.
    assert ip["y"] == "sequence number (bytes)" and ls["y"] == "TSN (one per DATA chunk)"
    for panel in (ip, ls):
        assert set(panel["traces"]) == {"ACK number the sender receives", "data sent on path1",
                                        "retransmission on path1", "data dropped"}  # fmt: skip
        sent = panel["traces"]["data sent on path1"]
        assert len(sent.x) > 100 and max(sent.x) <= 5.0  # the first 5 s, --quick too
    # A byte number runs about a segment's size ahead of a chunk number.
    top = [max(p["traces"]["data sent on path1"].y) for p in (ip, ls)]
    assert top[0] > 100 * top[1]


def test_a_time_series_figure_of_a_kind_no_drawer_knows_is_an_error_not_another_figure(
    results: Path, tmp_path: Path
) -> None:
    import dataclasses

    from ccsim.experiment import draw_series_figure

    folder = results / "p001-quick"
    plan = load_plan(folder / "plan")
    sf = dataclasses.replace(plan.series_figures[0], kind="heatmap")
    said = 'figure fig5_trace: kind "heatmap" is not one of flow_series, link_series, packet_'
    with pytest.raises(ValueError, match=said + "trace, atm_window"):
        series_figure(sf, plan, folder, quick=True)
    with pytest.raises(ValueError, match=said):
        draw_series_figure(sf, plan, {}, tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_in_chromium_a_papers_korean_citation_renders_as_hangul_with_the_pages_cjk_fonts(
    site: Path, page: tuple[Any, list[str]], tmp_path: Path
) -> None:
    reason = korean_font()
    if reason:
        pytest.skip(reason)
    pg, errors = page
    pg.goto((site.parent / "p001-quick.html").as_uri())
    pg.locator("p:has-text('Paper:')").first.wait_for()
    pg.evaluate("document.querySelector('p strong').parentElement.id = 'citation'")
    assert "진교홍" in (pg.locator("#citation").text_content() or "")
    assert_hangul_renders(pg, "#citation")
    keep_screenshot(pg, tmp_path / "report-korean.png")
    assert errors == []


def test_a_papers_korean_title_is_marked_korean_for_a_screen_readers_voice(site: Path) -> None:
    # Campaign 61a (issue 32): the page is lang="en", and its citation's Hangul was not marked
    # otherwise: a screen reader read 무선환경에서 with its English voice, which spells Hangul
    # out or skips it. Each run of Hangul is a <span lang="ko">; the English between stays.
    text = (site.parent / "p001-quick.html").read_text(encoding="utf-8")
    assert '(<span lang="ko">진교홍</span>)' in text
    assert '(<span lang="ko">무선환경에서 짧은</span> TCP <span lang="ko">트래픽의' in text


def phone_context(chromium: Any) -> Any:
    """A browser context as a phone gives a page: 360 x 640 CSS pixels at 3 device pixels
    each, a touch screen, and a page laid out by its viewport meta tag."""
    return chromium.new_context(viewport={"width": 360, "height": 640}, is_mobile=True,
                                has_touch=True, device_scale_factor=3)  # fmt: skip


def test_in_chromium_on_a_phone_the_index_and_a_page_are_laid_out_at_the_phones_width(
    site: Path, chromium: Any
) -> None:
    # Campaign 61a (issue 32): without a viewport meta tag a phone lays a page out at a
    # desktop's 980 px and shrinks it to its screen, every word a third of its size. (~2.3 s:
    # two pages, one of 12 figures, in a phone's context.)
    context = phone_context(chromium)
    try:
        pg = context.new_page()
        for name in ["index.html", "p001-quick.html"]:
            pg.goto((site.parent / name).as_uri())
            assert pg.evaluate("window.innerWidth") == 360, name
    finally:
        context.close()


def swipe_down(pg: Any, x: float, y: float) -> int:
    """How far the page scrolled back up for a finger's swipe 250 px down from (x, y) on a touch
    screen (the page's context made with ``has_touch``)."""
    cdp = pg.context.new_cdp_session(pg)
    before = pg.evaluate("window.scrollY")
    cdp.send("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [{"x": x, "y": y}]})
    for step in range(1, 11):
        cdp.send("Input.dispatchTouchEvent",
                 {"type": "touchMove", "touchPoints": [{"x": x, "y": y + 25 * step}]})  # fmt: skip
    cdp.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
    pg.wait_for_timeout(300)
    return int(before - pg.evaluate("window.scrollY"))


def test_in_chromium_on_a_touch_screen_a_swipe_over_a_figure_scrolls_the_page(
    site: Path, chromium: Any
) -> None:
    # Campaign 61a (issue 32): a swipe over a figure drew Plotly's zoom box and the page stayed
    # where it was; a phone's figures are as wide as its screen, so the page scrolled only from
    # the text between them. (~3 s: the page and its 12 figures drawn in a phone's context.)
    context = chromium.new_context(viewport={"width": 360, "height": 640}, is_mobile=True,
                                   has_touch=True)  # fmt: skip
    try:
        pg = context.new_page()
        pg.goto((site.parent / "p001-quick.html").as_uri())
        figure = pg.locator("div.figure").first
        figure.locator(".scatterlayer .point").first.wait_for()
        figure.scroll_into_view_if_needed()
        box = figure.bounding_box()
        assert box is not None
        assert swipe_down(pg, box["x"] + box["width"] / 2, box["y"] + 100) > 100
    finally:
        context.close()


def test_in_chromium_a_printed_page_keeps_each_figure_whole_on_one_sheet(
    site: Path, page: tuple[Any, list[str]]
) -> None:
    # Campaign 61a (issue 32): printed, p001's fig8 was cut by a page break, its title and
    # lines at the foot of one sheet and its x axis at the top of the next. (~2.4 s: the page
    # of 12 figures drawn.)
    pg, errors = page
    pg.goto((site.parent / "p001-quick.html").as_uri())
    pg.emulate_media(media="print")
    kept = pg.evaluate("[...document.querySelectorAll('div.figure')]"
                       ".map(f => getComputedStyle(f).breakInside)")  # fmt: skip
    assert kept and set(kept) == {"avoid"}, kept
    assert errors == []


#: What Python and its tools leave beside the code they run (bytecode, caches of pytest,
#: Hypothesis and ruff): not files ccsim writes.
_TOOL_CACHES = ("__pycache__", ".pytest_cache", ".hypothesis", ".ruff_cache")


def _files(folder: Path, skip: tuple[str, ...] = ()) -> set[str]:
    """Every path under ``folder`` (relative), but those under ``skip`` or a tool's cache."""
    out = set()
    for p in folder.rglob("*"):
        rel = p.relative_to(folder)
        if rel.parts[0] in skip or any(part in _TOOL_CACHES for part in rel.parts):
            continue
        out.add(rel.as_posix())
    return out


def _ccsim(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The ``ccsim`` command, as a user types it, in ``cwd``."""
    env = {k: v for k, v in os.environ.items() if k != "CCSIM_RESULTS"}
    proc = subprocess.run([*_CCSIM, *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=600, check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return proc


#: The installed ``ccsim`` script beside this Python, else the module.
_CCSIM = (
    [str(Path(sys.executable).with_name("ccsim"))]
    if Path(sys.executable).with_name("ccsim").exists()
    else [sys.executable, "-m", "ccsim.cli"]
)


def test_a_new_user_reproduces_in_the_repository_then_reports_and_explores_elsewhere(
    tmp_path: Path, page: tuple[Any, list[str]]
) -> None:
    """issue 32's "Done when": the README's paper, quick, from the repository; `ccsim report`
    and `ccsim explore` on its results from another folder; in Chromium the site's figures and
    the explorer's draw their points and Hangul renders; no file appears outside the output
    folder (the repository, the other folder and the temporary folder listed before and
    after)."""
    import signal
    import socket

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = tmp_path / "a"
    before = (_files(tmp_path), _files(ROOT, skip=("target", ".git")))

    done = _ccsim("reproduce", "p001", "--quick", "--out", str(out), "--workers", "1", cwd=ROOT)
    assert f"report: {out / 'report.md'}" in done.stdout.splitlines()
    built = _ccsim("report", "--results", str(out), cwd=elsewhere)
    assert built.stdout.strip() == f"site: {out / 'site' / 'index.html'}" and built.stderr == ""

    pg, errors = page
    pg.goto((out / "site" / "index.html").as_uri())
    pg.click(f'a[href="{out.name}.html"]')
    pg.wait_for_url(f"**/{out.name}.html")
    figures = pg.locator("div.figure")
    plan = load_plan(out / "plan")
    assert figures.count() == len(plan.figures) + len(plan.series_figures)
    for i in range(figures.count()):
        fig = figures.nth(i)
        # Drawn: markers in the plot, not an empty axis (a packet trace's too).
        fig.locator(".scatterlayer .point").first.wait_for()
        assert fig.locator(".scatterlayer .point").count() > 0, fig.get_attribute("data-figure")
    pg.evaluate("document.querySelector('p strong').parentElement.id = 'citation'")
    no_korean = korean_font()
    if no_korean is None:
        assert_hangul_renders(pg, "#citation")

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if k != "CCSIM_RESULTS"}
    command = [*_CCSIM, "explore", "--results", str(out), "--port", str(port)]
    with subprocess.Popen(command, cwd=elsewhere, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True) as server:  # fmt: skip
        try:
            assert server.stdout is not None
            said = server.stdout.readline()
            assert said.startswith(f"ccsim explore: http://127.0.0.1:{port}/"), said
            pg.goto(f"http://127.0.0.1:{port}/")
            # The plans stored with the results: p001's figures, the first drawn from the store
            # the reproduction filled.
            last = pg.wait_for_function(
                "window.ccsim && window.ccsim.last && window.ccsim.last.type === 'done'"
                " && window.ccsim.last",
                timeout=60_000,
            ).json_value()
            assert last["cached"] > 0, last
            assert pg.locator("#plot .scatterlayer .point").count() > 0
            if no_korean is None:
                assert_hangul_renders(pg, "#citation")
        finally:
            server.send_signal(signal.SIGINT)  # Ctrl-C, as the user stops it
            try:
                server.wait(20)
            except subprocess.TimeoutExpired:
                server.kill()
    assert errors == []

    after = (_files(tmp_path), _files(ROOT, skip=("target", ".git")))
    new = after[0] - before[0]
    assert new and [p for p in new if p != "a" and not p.startswith("a/")] == []
    assert after[1] == before[1], sorted(after[1] ^ before[1])
    assert _files(elsewhere) == set()
    keep_screenshot(pg, tmp_path / "new-user-explore.png")  # after the listing: ours
    if no_korean is not None:
        pytest.skip(f"all checked but Hangul: {no_korean}")


def spoiled_beside_a_good_copy(
    results: Path, tree: Path, spoil: dict[str, Callable[[Path], None]]
) -> tuple[list[str], list[str]]:
    """Paper 001's quick reproduction copied to ``tree/p001-good`` and once per ``spoil``
    entry to ``tree/p001-<key>``, that copy's folder passed to the entry's function; then the
    site built over them: its warnings, and the pages it has."""
    shutil.copytree(results / "p001-quick", tree / "p001-good",
                    ignore=shutil.ignore_patterns("runs", "site"))  # fmt: skip
    (tree / "p001-good" / "table-t1.csv").write_text("line,x,y\nreno,1,2\n")
    for key, damage in spoil.items():
        shutil.copytree(tree / "p001-good", tree / f"p001-{key}")
        damage(tree / f"p001-{key}")
    warned: list[str] = []
    build_site(tree, warn=warned.append)
    return warned, sorted(p.name for p in (tree / "site").glob("*.html"))


def cut(name: str, spoil: Callable[[bytes], bytes]) -> Callable[[Path], None]:
    """Replace ``name`` in a folder by ``spoil`` of its bytes."""

    def damage(folder: Path) -> None:
        (folder / name).write_bytes(spoil((folder / name).read_bytes()))

    return damage


def replaced(name: str, by: Callable[[Path], None]) -> Callable[[Path], None]:
    """Remove ``name`` from a folder and make ``by`` of its path there instead."""

    def damage(folder: Path) -> None:
        (folder / name).unlink()
        by(folder / name)

    return damage


def test_a_damaged_table_or_record_of_a_reproduction_leaves_it_out_naming_the_file(
    results: Path, tmp_path: Path
) -> None:
    # Campaign 2, Part A: the site read only report.md and summary.parquet, so a reproduction
    # whose paired comparisons, run record or claims were damaged got a page as if whole.
    damage = {
        "paired.parquet": lambda b: b[: len(b) // 2],  # cut short
        "run.json": lambda b: b[:40],  # cut short
        "claims.csv": lambda b: b + b"\nfig8,caf\xe9\n",  # not UTF-8
        "points.parquet": lambda b: b"PAR1 but not parquet",
        "table-t1.csv": lambda b: b + b"a,b\n",  # a row short of the header's columns
    }
    tree = tmp_path / "results"
    spoil = {name: cut(name, how) for name, how in damage.items()}
    warned, pages = spoiled_beside_a_good_copy(results, tree, spoil)
    assert len(warned) == len(damage), warned
    for line, name in zip(warned, sorted(damage)):
        path = tree / f"p001-{name}" / name
        assert line.startswith(f"p001-{name} left out of the site: {path}: "), line
    assert pages == ["index.html", "p001-good.html"]


def test_a_reproduction_without_its_summary_is_left_out_naming_it_not_drawn_without_figures(
    results: Path, tmp_path: Path
) -> None:
    # Campaign 43a (issue 32): summary.parquet gone (a copy of the results interrupted, a file
    # removed by hand) was read as a reproduction without points: its page was built with
    # status 0 and no warning, every figure a static image where the others' are drawn.
    tree = tmp_path / "results"
    spoil = {"no-summary": lambda folder: (folder / "summary.parquet").unlink()}
    warned, pages = spoiled_beside_a_good_copy(results, tree, spoil)
    path = tree / "p001-no-summary" / "summary.parquet"
    assert warned == [f"p001-no-summary left out of the site: {path}: missing (ccsim reproduce "
                      "writes it beside report.md: a copy cut short?)"]  # fmt: skip
    assert pages == ["index.html", "p001-good.html"]


def test_a_results_file_that_is_a_folder_or_endless_leaves_its_reproduction_out_not_the_site(
    results: Path, tmp_path: Path
) -> None:
    # Campaign 2: report.md a folder stopped the whole site (an error naming it, status 1);
    # claims.csv a link to /dev/zero was read until the kernel killed the process (read now
    # up to ccsim.scenario.MAX_TEXT_BYTES, as every text file). Named, that reproduction is
    # left out.
    tree = tmp_path / "results"
    warned, pages = spoiled_beside_a_good_copy(results, tree, {
        "dir-claims": replaced("claims.csv", lambda p: p.symlink_to(tmp_path)),
        "dir-report": replaced("report.md", Path.mkdir),
        "endless-claims": replaced("claims.csv", lambda p: p.symlink_to("/dev/zero")),
    })  # fmt: skip
    claims, report = tree / "p001-dir-claims" / "claims.csv", tree / "p001-dir-report" / "report.md"
    endless = tree / "p001-endless-claims" / "claims.csv"
    assert warned == [
        f"p001-dir-claims left out of the site: {claims}: is a directory",
        f"p001-dir-report left out of the site: {report}: is a directory",
        f"p001-endless-claims left out of the site: {endless}: is a character device, not a "
        "regular file",
    ]
    assert pages == ["index.html", "p001-good.html"]


def site_over_spoiled_records(
    results: Path, tmp_path: Path, spoil: Callable[[int, Path], None]
) -> list[str]:
    """Paper 001's quick reproduction copied to ``tmp_path/results``, ``spoil(n, record)``
    applied to each of its run records in turn, the site built over it: the
    CorruptRecordWarnings it gave."""
    from ccsim.sweep import CorruptRecordWarning

    tree = tmp_path / "results"
    shutil.copytree(
        results / "p001-quick", tree / "p001-quick", ignore=shutil.ignore_patterns("site")
    )
    for n, record in enumerate(sorted((tree / "p001-quick" / "runs").glob("*/*.json"))):
        spoil(n, record)
    with pytest.warns(CorruptRecordWarning) as caught:
        build_site(tree, warn=lambda _: None)
    return [str(w.message) for w in caught]


def test_a_damaged_run_record_the_site_reads_is_named_without_promising_a_rerun(
    results: Path, tmp_path: Path
) -> None:
    # Campaign 2: `ccsim report` repeated the sweep's "damaged run record (...); running it
    # again", but a report runs nothing: the time series is drawn without that run.
    said = site_over_spoiled_records(results, tmp_path, lambda _, r: r.write_text('{"version": 4}'))
    assert said and not [s for s in said if "running it again" in s], said[:2]
    assert all("its figure is drawn without this run" in s for s in said), said[:2]


def test_a_report_emptied_or_cut_short_leaves_its_reproduction_out_not_a_page_as_if_whole(
    results: Path, tmp_path: Path
) -> None:
    # Campaign 2: a report.md emptied (a disk full while it was written, a copy cut short) got
    # a page titled after the folder, with no claims, as if the paper had none. Campaign 61b
    # (issue 32): only the empty one was told from a whole one; cut after its heading, it
    # gave a page with no claims, or with the first few, as if whole, and cut before its
    # "Mode: quick" line, a quick reproduction read as a full one.
    tree = tmp_path / "results"
    spoil = {
        "empty": cut("report.md", lambda _: b"\n"),
        "heading": cut("report.md", lambda b: b[:100]),
        "claims": cut("report.md", lambda b: b[: b.index(b"\n| fig9 ")]),
    }
    warned, pages = spoiled_beside_a_good_copy(results, tree, spoil)
    claims = len((results / "p001-quick" / "claims.csv").read_text().splitlines()) - 1
    whole = "so not a whole report (cut short?)"
    assert warned == [
        f"p001-claims left out of the site: {tree}/p001-claims/report.md: 1 of the {claims} "
        f"claims claims.csv lists, {whole}",
        f"p001-empty left out of the site: {tree}/p001-empty/report.md: no heading '# <paper>: "
        "<title>' on its first line, so not a whole report (cut short?)",
        f"p001-heading left out of the site: {tree}/p001-heading/report.md: no 'Mode: ...' "
        f"line, {whole}",
    ]
    assert pages == ["index.html", "p001-good.html"]


def test_a_figure_referenced_twice_in_report_md_is_drawn_once_and_shown_static_again(
    results: Path, tmp_path: Path
) -> None:
    # Campaign 24: a figure's reference repeated (report.md edited by hand to show it at the
    # top too) gave two divs of one id; Plotly drew into the first, the second stayed empty.
    tree = copies(results, tmp_path / "results", ["p001"])
    report = tree / "p001" / "report.md"
    text = report.read_text(encoding="utf-8")
    ref = re.findall(r"^!\[([^\]]+)\]\(([^)]+)\.png\)$", text, re.M)[0]
    report.write_text(text.replace("\n## ", f"\n![{ref[0]}]({ref[1]}.png)\n\n## ", 1),
                      encoding="utf-8")  # fmt: skip
    build_site(tree, tmp_path / "site", root=ROOT)
    page = (tmp_path / "site" / "p001.html").read_text(encoding="utf-8")
    assert page.count(f'id="{ref[0]}"') == 1
    assert f'<img src="p001/{ref[1]}.png"' in page


def test_a_figure_reference_edited_into_another_folder_links_and_copies_nothing_outside_the_site(
    results: Path, tmp_path: Path
) -> None:
    # Campaign 24: report.md's figure references name files of the reproduction's folder, and
    # each was copied to the same place under <site>/<name>/. Edited by hand to
    # "../../x.png", it wrote x.png beside the site (outside --out) and the page linked out
    # of the site; to "sub/x.png", it stopped the whole site ("<site>/p001/sub/x.png: no
    # such file"); an absolute path was linked as "p001//abs/x.png".
    tree = copies(results, tmp_path / "results", ["p001"])
    folder = tree / "p001"
    first = next(p for p in sorted(folder.glob("*.png")))
    (folder / "sub").mkdir()
    shutil.copyfile(first, folder / "sub" / first.name)
    shutil.copyfile(first, tmp_path / "beside.png")
    text = (folder / "report.md").read_text(encoding="utf-8")
    refs = re.findall(r"^!\[[^\]]+\]\([^)]+\.png\)$", text, re.M)
    assert len(refs) >= 3, refs
    edited = ["../../beside.png", f"sub/{first.name}", str(tmp_path / "beside.png")]
    for ref, target in zip(refs, edited):
        text = text.replace(ref, ref[: ref.index("](") + 2] + target + ")", 1)
    (folder / "report.md").write_text(text, encoding="utf-8")
    before = sorted(tmp_path.rglob("*"))
    out = tree / "site"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        build_site(tree, out, root=ROOT)
    assert [p for p in sorted(tmp_path.rglob("*")) if p not in before and out not in p.parents
            and p != out] == []  # fmt: skip
    page = (out / "p001.html").read_text(encoding="utf-8")
    links = re.findall(r'(?:href|src)="([^"]+)"', page)
    assert [ln for ln in links if ".." in ln or "//" in ln or "sub/" in ln] == []
    assert all((out / ln).exists() for ln in links if not ln.startswith("#")), links


@pytest.mark.parametrize("package", ["markdown_it", "pyarrow"])
def test_a_report_that_fails_midway_leaves_no_new_site_and_an_old_one_as_it_was(
    package: str, results: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    # Campaign 2: with markdown_it or pyarrow missing the error was right, but the site folder
    # was left holding plotly.min.js alone, a folder that looks like a site begun. The site is
    # now written beside its place and moved in only when whole.
    monkeypatch.chdir(ROOT)
    new, old = tmp_path / "new" / "site", tmp_path / "old"
    assert main(["report", "--results", str(results), "--out", str(old)]) == 0
    before = {p: p.read_bytes() for p in old.rglob("*") if p.is_file()}
    (old / "index.html").write_text("the old index")
    before[old / "index.html"] = b"the old index"
    # Without its manifest the old site's pages are all drawn again (a page kept as it was
    # needs no markdown_it), so the rebuild reaches the package that is missing.
    (old / "pages.json").unlink()
    del before[old / "pages.json"]
    capsys.readouterr()
    monkeypatch.setitem(sys.modules, package, None)
    monkeypatch.setitem(sys.modules, f"{package}.parquet", None)
    for out in (new, old):
        assert main(["report", "--results", str(results), "--out", str(out)]) == 1
        assert f"needs {package}, which is not installed" in capsys.readouterr().err
    # Refused before the site's folder or its parent is made (pyarrow), or with the parent
    # made and left empty (markdown_it, found missing while the pages are written).
    assert not new.parent.exists() or os.listdir(new.parent) == []
    assert {p: p.read_bytes() for p in old.rglob("*") if p.is_file()} == before
    assert set(os.listdir(tmp_path)) <= {"new", "old"}, "no half-written site beside them"


def test_a_results_file_that_is_a_fifo_or_no_csv_or_json_leaves_its_reproduction_out(
    results: Path, tmp_path: Path
) -> None:
    # Campaign 3: a FIFO in place of claims.csv hung `ccsim report` until Ctrl-C, and in
    # place of a Parquet file past Ctrl-C and SIGTERM (inside pyarrow); a CSV field past csv's
    # limit was "internal error (Error)"; run.json nested 100,000 deep stopped the whole site;
    # a whole Parquet file of another table as summary.parquet, "internal error (KeyError)".
    tree = tmp_path / "results"
    warned, pages = spoiled_beside_a_good_copy(results, tree, {
        "fifo-claims": replaced("claims.csv", os.mkfifo),
        "fifo-paired": replaced("paired.parquet", os.mkfifo),
        "quote-claims": cut("claims.csv", lambda b: b + b'x,"' + b"a" * 200_000 + b"\n"),
        "deep-run": cut("run.json", lambda _: b"[" * 100_000),
        "other-summary": replaced("summary.parquet", pd.DataFrame({"a": [1]}).to_parquet),
    })  # fmt: skip
    said = {line.split(" ", 1)[0]: line for line in warned}
    assert sorted(said) == ["p001-deep-run", "p001-fifo-claims", "p001-fifo-paired",
                            "p001-other-summary", "p001-quote-claims"]  # fmt: skip
    other = (
        "summary.parquet: not a reproduction's summary: no column figure, line, x, mean, ci95, n"
    )
    assert said["p001-other-summary"].endswith(other)
    assert said["p001-fifo-claims"].endswith(
        "claims.csv: is a FIFO (named pipe), not a regular file"
    )
    assert said["p001-fifo-paired"].endswith("paired.parquet: is a FIFO (named pipe), not a "
                                             "regular file")  # fmt: skip
    assert "claims.csv: not a CSV table (field larger than field limit" in said["p001-quote-claims"]
    assert "run.json: not valid JSON (maximum recursion depth" in said["p001-deep-run"]
    assert pages == ["index.html", "p001-good.html"]


def test_a_summary_whose_columns_hold_other_types_leaves_its_reproduction_out_naming_it(
    results: Path, tmp_path: Path
) -> None:
    # Campaign 22 (issue 32): summary.parquet written back with its means as text (valid
    # Parquet, the right columns) stopped ccsim report with "could not convert string to
    # float: 'abc'", naming no file, and no site was built for the other reproductions.
    def retyped(column: str, value: Any) -> Callable[[Path], None]:
        def damage(folder: Path) -> None:
            summary = pd.read_parquet(folder / "summary.parquet")
            summary[column] = value
            summary.to_parquet(folder / "summary.parquet")

        return damage

    warned, pages = spoiled_beside_a_good_copy(results, tmp_path / "results", {
        "text-mean": retyped("mean", "abc"),
        "bool-n": retyped("n", True),
        "number-line": retyped("line", 7),
    })  # fmt: skip
    said = {line.split(" ", 1)[0]: line for line in warned}
    assert sorted(said) == ["p001-bool-n", "p001-number-line", "p001-text-mean"]
    why = "summary.parquet: not a reproduction's summary: column"
    assert said["p001-text-mean"].endswith(f"{why} mean holds str, not numbers")
    assert said["p001-bool-n"].endswith(f"{why} n holds bool, not numbers")
    assert said["p001-number-line"].endswith(f"{why} line holds int64, not text")
    assert pages == ["index.html", "p001-good.html"]


def test_run_records_that_are_fifos_devices_or_folders_are_named_and_the_site_is_built(
    results: Path, tmp_path: Path
) -> None:
    # Campaign 3: a time series' run record that was a FIFO hung `ccsim report`, a link to
    # /dev/zero ran out of memory, a folder stopped the whole site. The site may read only
    # one record, so each kind spoils every record of its own copy.
    makers: dict[str, Callable[[Path], None]] = {
        "is a FIFO": os.mkfifo,
        "is a character device": lambda p: p.symlink_to("/dev/zero"),
        "is a directory": Path.mkdir,
    }
    for n, (kind, make) in enumerate(makers.items()):

        def spoil(_: int, record: Path, make: Callable[[Path], None] = make) -> None:
            record.unlink()
            make(record)

        copy = tmp_path / str(n)
        said = " ".join(site_over_spoiled_records(results, copy, spoil))
        assert f"damaged run record ({kind}" in said, said[:300]
        assert (copy / "results" / "site" / "p001-quick.html").is_file()


def test_a_site_on_a_full_disk_names_its_folder_and_leaves_nothing(
    results: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    # Campaign 3: `ccsim report --out` on a full disk said a bare "[Errno 28] No space left on
    # device" (a failed write names no file).
    def full(*_: Any, **__: Any) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(shutil, "copyfile", full)
    out = tmp_path / "site"
    assert main(["report", "--results", str(results), "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert err == f"ccsim: error: {out}: no space left on device; the site was not written\n"
    assert os.listdir(tmp_path) == []


def test_a_site_rebuilt_over_an_earlier_one_failing_a_rename_midway_says_it_holds_part_of_each(
    results: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    # Campaign 51 (issue 32): rebuilt over an earlier site, the pages are moved in one by one;
    # a disk gone read-only after the first renames failed the next, and the line said "<out>/
    # ...: read-only file system; the site was not written", of a site by then part new, part
    # the earlier one's.
    monkeypatch.chdir(ROOT)
    out = tmp_path / "site"
    assert main(["report", "--results", str(results), "--out", str(out)]) == 0
    capsys.readouterr()
    replace, renamed, failed = os.replace, [], []

    def read_only_after_two(src: Any, dst: Any) -> None:
        if Path(dst).is_relative_to(out) and len(renamed) >= 2:
            failed.append(dst)
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(src), None, str(dst))
        renamed.append(dst)
        replace(src, dst)

    monkeypatch.setattr(os, "replace", read_only_after_two)
    assert main(["report", "--results", str(results), "--out", str(out)]) == 1
    assert capsys.readouterr().err == (
        f"ccsim: error: {failed[0]}: read-only file system; {out} holds part of this site, the "
        "rest the earlier one's: the same command writes it whole\n"
    )


def test_a_site_rebuilt_on_a_full_disk_names_the_file_in_its_place_never_the_hidden_folder(
    results: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    # Campaign 25 (issue 32): rebuilt over an earlier site, the kept plotly.min.js is copied
    # into the hidden folder, and a full disk failed the copy as shutil does, naming both
    # files: "ccsim: error: OUT/plotly.min.js -> .../.site.partial-XXXX/plotly.min.js: no
    # space left on device", naming the hidden folder (removed by then) and not that the site
    # was not written.
    monkeypatch.chdir(ROOT)
    out = tmp_path / "site"
    assert main(["report", "--results", str(results), "--out", str(out)]) == 0
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    capsys.readouterr()

    def full(src: Any, dst: Any, *_: Any, **__: Any) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", str(src), None, str(dst))

    monkeypatch.setattr(shutil, "copyfile", full)
    assert main(["report", "--results", str(results), "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert err == (
        f"ccsim: error: {out}/plotly.min.js: no space left on device; the site was not written\n"
    )
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert os.listdir(tmp_path) == ["site"]


def test_a_stored_plan_that_is_a_fifo_device_or_folder_is_named_as_damaged_never_read(
    results: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Campaign 3's leftover: plan/plan.toml a FIFO (or a device, or a folder) read as "no
    # plan stored", and the plan of the working folder's experiments/ was drawn instead; its
    # scenario a FIFO stopped `ccsim explore` from starting at all. Named through the same
    # check as the run records and results files, that reproduction is left out.
    from ccsim.explore.catalog import reproductions

    monkeypatch.chdir(ROOT)  # where experiments/p001* would be found
    tree = tmp_path / "results"
    warned, pages = spoiled_beside_a_good_copy(results, tree, {
        "fifo-plan": replaced("plan/plan.toml", os.mkfifo),
        "device-plan": replaced("plan/plan.toml", lambda p: p.symlink_to("/dev/zero")),
        "dir-plan": replaced("plan/plan.toml", Path.mkdir),
        "fifo-scenario": replaced("plan/scenario.toml", os.mkfifo),
        "file-folder": lambda f: (shutil.rmtree(f / "plan"), (f / "plan").write_text("")),
    })  # fmt: skip
    kinds = {
        "fifo-plan": "plan/plan.toml: is a FIFO (named pipe), not a regular file",
        "device-plan": "plan/plan.toml: is a character device, not a regular file",
        "dir-plan": "plan/plan.toml: is a directory",
        "fifo-scenario": "plan/scenario.toml: is a FIFO (named pipe), not a regular file",
        "file-folder": "plan: is a file, not a folder",
    }
    assert sorted(warned) == sorted(
        f"p001-{key} left out of the site: {tree / f'p001-{key}'}/{kind}"
        for key, kind in kinds.items()
    )
    assert pages == ["index.html", "p001-good.html"]
    assert [r.folder.name for r in reproductions(tree)] == ["p001-good"]


def test_a_reproduction_folder_named_in_bytes_not_utf8_is_left_out_of_site_and_explorer(
    results: Path, tmp_path: Path
) -> None:
    # Campaign 24: a reproduction's folder named with a byte 0xff (a copy from an old Latin-1
    # disk) stopped `ccsim explore` from starting, "internal error (TypeError): folder:
    # expected a path ..., not PosixPath", and `ccsim report` left it out as
    # "paired.parquet: not a readable Parquet file". Both now name the folder's name.
    from ccsim.explore.catalog import reproductions

    tree = copies(results, tmp_path / "results", ["p001-good", "p001-\udcff"])
    said = "p001-\udcff left out of the {}: {}: the folder's name is not UTF-8 (byte 0xff)"
    warned: list[str] = []
    build_site(tree, tmp_path / "site", root=ROOT, warn=warned.append)
    assert [w.split(";")[0] for w in warned] == [said.format("site", tree / "p001-\udcff")]
    assert sorted(p.name for p in (tmp_path / "site").glob("*.html")) == [
        "index.html", "p001-good.html"
    ]  # fmt: skip
    warned.clear()
    found = reproductions(tree, warned.append)
    assert [r.folder.name for r in found] == ["p001-good"]
    assert [w.split(";")[0] for w in warned] == [said.format("explorer", tree / "p001-\udcff")]


def test_a_reproduction_folder_named_in_utf8_read_in_an_ascii_locale_is_said_to_be_so() -> None:
    # Campaign 60b: `LC_ALL=C PYTHONUTF8=0 ccsim report` left a reproduction named in Hangul
    # out as "the folder's name is not UTF-8 (byte 0xed); rename it": its name is UTF-8, read
    # in ASCII, and the command-line arguments' cure (campaign 24) was not given.
    from ccsim.site.reports import DamagedResults, check_folder_name

    hangul = "p001-\ud55c".encode().decode("ascii", "surrogateescape")  # as ASCII reads it
    with pytest.raises(DamagedResults, match=r"p001-.*: it is UTF-8, read in this locale's "
                       r"encoding \(.*\): run ccsim in a UTF-8 locale \(LC_ALL=C\.UTF-8\) or "
                       r"with PYTHONUTF8=1$"):  # fmt: skip
        check_folder_name(Path(hangul))


def test_a_report_saved_with_a_byte_order_mark_keeps_its_page(
    results: Path, tmp_path: Path
) -> None:
    # Campaign 60b: report.md opened and saved in Windows' Notepad (a note added by hand)
    # starts with a byte order mark, and the reproduction was left out of the site as "no
    # heading '# <paper>: <title>' on its first line, so not a whole report (cut short?)".
    tree = copies(results, tmp_path / "results", ["p001-quick"])
    report = tree / "p001-quick" / "report.md"
    report.write_bytes(b"\xef\xbb\xbf" + report.read_bytes())
    warned: list[str] = []
    build_site(tree, tmp_path / "site", root=ROOT, warn=warned.append)
    assert warned == []
    page = (tmp_path / "site" / "p001-quick.html").read_text(encoding="utf-8")
    assert "<title>p001: Split ACKs (SPACK)" in page and "\ufeff" not in page


@pytest.mark.parametrize("inside", ["plan", "runs", "site", "standalone site"])
def test_ccsim_explore_refuses_results_inside_a_reproduction_or_a_site_as_run_refuses_its_out(
    inside: str, results: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    # Campaign 24: each job's runs go to <--results>/<plan>/runs, and `ccsim explore
    # --results results/m01/plan` was accepted: a job wrote p001/runs/ into m01's stored plan
    # (run's and sweep's --out there are refused since campaign 18). The reproduction's own
    # folder stays allowed, as ccsim report takes it.
    import uvicorn

    tree = copies(results, tmp_path / "results", ["p001"])
    (tree / "p001" / "runs").mkdir(exist_ok=True)
    build_site(tree / "p001", tree / "p001" / "site", root=ROOT)
    build_site(tree, tree / "site", root=ROOT)
    target = tree / "site" if inside == "standalone site" else tree / "p001" / inside
    monkeypatch.setattr(uvicorn.Server, "run", lambda *_, **__: None)  # start, then stop
    monkeypatch.chdir(ROOT)  # every plan offered: a job may write any plan's store
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    before = sorted(tree.rglob("*"))
    assert main(["explore", "--results", str(target), "--port", str(port)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith(f"ccsim: error: --results {target}: "), err
    assert "the explorer's run stores would be mixed with its" in err[0]
    assert sorted(tree.rglob("*")) == before
    # The reproduction's own folder: its stored plan alone is offered, from the repository's
    # root too, so no job writes another plan's store inside it (tree/p001/p002/runs).
    offered: list[Any] = []
    monkeypatch.setattr("ccsim.explore.serve", lambda *a, **_: offered.append(a[1]))
    assert main(["explore", "--results", str(tree / "p001"), "--port", str(port)]) == 0
    assert offered == [None]


def test_ccsim_explore_names_each_damaged_reproduction_at_start_as_ccsim_report_does(
    results: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    # Campaign 4's leftover: `ccsim explore` passed over a reproduction whose report.md was not
    # UTF-8 without a word, and a stored plan.toml cut short stopped it from starting at all.
    import uvicorn

    tree = tmp_path / "results"
    warned, _ = spoiled_beside_a_good_copy(results, tree, {
        "report": cut("report.md", lambda b: b + b"\nFig. 8 caf\xe9\n"),
        "plan": cut("plan/plan.toml", lambda b: b[:300]),
    })  # fmt: skip
    monkeypatch.setattr(uvicorn.Server, "run", lambda *_, **__: None)  # start, then stop
    monkeypatch.chdir(tmp_path)  # no experiments/ here: the stored plans are offered
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    assert main(["explore", "--results", str(tree), "--port", str(port)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err == [
        "ccsim: warning: " + w.replace("left out of the site", "left out of the explorer")
        for w in sorted(warned)
    ]
    assert err[0].startswith(
        f"ccsim: warning: p001-plan left out of the explorer: {tree}/"
        "p001-plan/plan/plan.toml: the plan stored with the results cannot"
    )
    assert err[1].startswith(f"ccsim: warning: p001-report left out of the explorer: {tree}/"
                             "p001-report/report.md: not UTF-8 text")  # fmt: skip


def test_a_stored_scenario_cut_short_is_named_not_the_plan_that_names_it(
    results: Path, tmp_path: Path
) -> None:
    # Campaign 4's leftover: plan/scenario.toml cut short read as TOML, and the plan's first
    # figure failed on it: "plan/plan.toml: the plan stored with the results cannot be read
    # (figures[0].title: flows.transfer: no flow named ...)", the wrong file blamed.
    scenario = (results / "p001-quick" / "plan" / "scenario.toml").read_bytes()
    flows = scenario.index(b"[flows.transfer]")
    tree = tmp_path / "results"
    warned, pages = spoiled_beside_a_good_copy(results, tree, {
        "cut": cut("plan/scenario.toml", lambda b: b[:200]),  # mid-comment
        "flows": cut("plan/scenario.toml", lambda b: b[: flows + 40]),  # mid-flow, valid TOML
        "line": cut("plan/scenario.toml", lambda b: b[:flows]),  # at a line's end: no flows
    })  # fmt: skip
    said = dict(w.split(" left out of the site: ", 1) for w in warned)
    scenario_of = f"{tree}/p001-{{}}/plan/scenario.toml: the scenario stored with the results"
    assert said["p001-cut"].startswith(scenario_of.format("cut") + " cannot be read (duration: ")
    assert said["p001-flows"].startswith(scenario_of.format("flows") + " cannot be read "
                                         "(flows.transfer.dst: missing")  # fmt: skip
    # Each file reads alone and ends with its line: which one is damaged cannot be told, and
    # the message says the two do not fit rather than blaming one.
    assert said["p001-line"].startswith(
        f"{tree}/p001-line/plan/plan.toml: the plan stored with the results does not fit the "
        "scenario stored beside it, scenario.toml (figures[0].title: flows.transfer: no flow"
    )
    assert pages == ["index.html", "p001-good.html"]


def test_a_stored_plan_cut_inside_a_comment_is_named_not_shown_with_fewer_figures(
    results: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    # Campaign 6, Part A item 4: a plan.toml cut inside a comment reads as TOML. Cut before
    # its first figure it loaded with none: ccsim explore served an empty list of papers
    # without a word, and the site a page without figures; cut after them, without claims.
    import uvicorn

    plan = (results / "p001-quick" / "plan" / "plan.toml").read_bytes()
    figures = plan.index(b"[[figures]]")
    before, after = plan.rindex(b"\n# ", 0, figures) + 6, plan.index(b"\n# ", figures) + 6
    tree = tmp_path / "results"
    warned, pages = spoiled_beside_a_good_copy(results, tree, {
        "before": cut("plan/plan.toml", lambda b: b[:before]),
        "after": cut("plan/plan.toml", lambda b: b[:after]),
    })  # fmt: skip
    said = sorted(w.split(" left out of the site: ", 1)[1] for w in warned)
    assert said == [
        f"{tree}/p001-{key}/plan/plan.toml: cut short (its last line has no line break); "
        "ccsim reproduce stores whole files"
        for key in ("after", "before")
    ]
    assert pages == ["index.html", "p001-good.html"]
    monkeypatch.setattr(uvicorn.Server, "run", lambda *_, **__: None)  # start, then stop
    monkeypatch.chdir(tmp_path)  # no experiments/ here: the stored plans are offered
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    shutil.rmtree(tree / "p001-good")
    assert main(["explore", "--results", str(tree), "--port", str(port)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert [line.split(" left out of the explorer: ")[0] for line in err[:2]] == [
        "ccsim: warning: p001-after",
        "ccsim: warning: p001-before",
    ]
    assert err[2].startswith("ccsim: error: no experiments/*/plan.toml here and no reproduction")


def test_a_stored_plan_whose_scenario_lies_outside_its_folder_is_named_never_read(
    results: Path, tmp_path: Path
) -> None:
    # Campaign 7: a stored plan.toml naming its scenario by a path (`../../../x.toml`,
    # `/etc/passwd`) was read from there: a file that fits built the site from a scenario that
    # is no part of the results, without a word. ccsim reproduce stores it beside the plan.
    outside = tmp_path / "outside.toml"
    outside.write_bytes((results / "p001-quick" / "plan" / "scenario.toml").read_bytes())

    def naming(where: str) -> Callable[[Path], None]:
        def damage(folder: Path) -> None:
            plan = folder / "plan" / "plan.toml"
            text = plan.read_text(encoding="utf-8")
            plan.write_text(re.sub(r"(?m)^scenario\s*=.*$", f"scenario = {where!r}", text,
                                   count=1), encoding="utf-8")  # fmt: skip

        return damage

    tree = tmp_path / "results"
    warned, pages = spoiled_beside_a_good_copy(results, tree, {
        "up": naming("../../../outside.toml"),
        "abs": naming(str(outside)),
    })  # fmt: skip
    said = sorted(w.split(" left out of the site: ", 1)[1] for w in warned)
    assert said == [
        f"{tree}/p001-{key}/plan/plan.toml: names its scenario {where!r}, which is not "
        "beside it; ccsim reproduce stores the scenario in the same folder"
        for key, where in (("abs", str(outside)), ("up", "../../../outside.toml"))
    ]
    assert pages == ["index.html", "p001-good.html"]


def test_a_stored_plan_ends_with_a_line_break_when_its_source_has_none(tmp_path: Path) -> None:
    # The check above reads a stored file without a final line break as cut short: a plan
    # written without one is stored with one, so its reproduction is not taken for damaged.
    from ccsim.experiment.reproduction import store_plan

    source = tmp_path / "paper"
    shutil.copytree(find_experiment("p001", ROOT), source)
    for name in ("plan.toml", "scenario.toml"):
        (source / name).write_bytes((source / name).read_bytes().rstrip(b"\n"))
    stored = store_plan(source, tmp_path / "out")
    for name in ("plan.toml", "scenario.toml"):
        assert (stored / name).read_bytes() == (source / name).read_bytes() + b"\n"
    assert load_stored_plan(tmp_path / "out").id == "p001"


def test_a_re_run_that_cannot_store_its_plan_names_the_file_and_keeps_the_stored_plan_whole(
    tmp_path: Path,
) -> None:
    # Campaign 23: `ccsim reproduce m01 --quick --out DIR` under a file-size limit (ulimit -f
    # 8, or a full disk) said a bare "[Errno 27] File too large", and the plan stored by the
    # finished reproduction in DIR was cut to 8,192 bytes: `ccsim report` then left that
    # reproduction out as damaged. m01's plan.toml is ~11.7 kB, so the limit fails its write.
    from ccsim.experiment.reproduction import store_plan

    out = tmp_path / "m01-quick"
    stored = store_plan(find_experiment("m01", ROOT), out)
    before = {p.name: p.read_bytes() for p in stored.iterdir()}
    assert len(before["plan.toml"]) > 8192
    code = (
        "import resource, sys\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (8192, 8192))\n"
        "from ccsim.cli import main\n"
        f"sys.exit(main(['reproduce', 'm01', '--quick', '--out', {str(out)!r}]))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, check=False)  # fmt: skip
    # Campaign 33: and the limit named, with the value to raise.
    assert (proc.returncode, proc.stderr) == (
        1,
        f"ccsim: error: {stored / 'plan.toml'}: file too large: the limit of file size is "
        "8192 bytes (ulimit -f 8); raise it\n",
    )
    assert {p.name: p.read_bytes() for p in stored.iterdir()} == before


def test_a_plan_stored_on_a_disk_out_of_inodes_names_the_file_not_the_hidden_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Campaign 27: on a disk with bytes free but no inode left (a tmpfs with nr_inodes=),
    # creating the temporary file fails naming it, and `ccsim reproduce m01 --quick` said
    # "OUT/plan/.tmp-23647-plan.toml: no space left on device", a file the user never made.
    from ccsim.experiment.reproduction import store_plan

    written = Path.write_bytes

    def no_inode_left(path: Path, data: bytes) -> int:
        if path.name.startswith(".tmp-"):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        return written(path, data)

    monkeypatch.setattr(Path, "write_bytes", no_inode_left)
    with pytest.raises(OSError) as e:
        store_plan(find_experiment("m01", ROOT), tmp_path / "m01-quick")
    assert (e.value.filename, e.value.errno) == (
        str(tmp_path / "m01-quick" / "plan" / "plan.toml"),
        errno.ENOSPC,
    )


@pytest.mark.parametrize("earlier", [False, True])
def test_a_plan_that_cannot_store_its_scenario_leaves_no_stored_plan_of_its_own(
    earlier: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    # Campaign 50b: `ccsim reproduce m01 --quick` on a disk out of inodes at the scenario
    # (a tmpfs with nr_inodes=4) renamed plan/plan.toml into place first, so the folder it
    # had made was left holding plan/plan.toml, or an earlier reproduction's stored plan was
    # a new plan.toml beside the old scenario; the line named scenario.toml alone.
    out = tmp_path / "m01-quick"
    if earlier:
        (out / "plan").mkdir(parents=True)
        (out / "plan" / "plan.toml").write_text("# the earlier plan\n")
    written = Path.write_bytes

    def no_inode_at_the_scenario(path: Path, data: bytes) -> int:
        if path.name.startswith(".tmp-") and path.name.endswith("scenario.toml"):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        return written(path, data)

    monkeypatch.setattr(Path, "write_bytes", no_inode_at_the_scenario)
    monkeypatch.chdir(ROOT)
    assert main(["reproduce", "m01", "--quick", "--seeds", "1", "--out", str(out)]) == 1
    assert capsys.readouterr().err == (
        f"ccsim: error: {out / 'plan' / 'scenario.toml'}: no space left on device\n"
    )
    if earlier:
        assert [p.name for p in (out / "plan").iterdir()] == ["plan.toml"]
        assert (out / "plan" / "plan.toml").read_text() == "# the earlier plan\n"
    else:
        assert not out.exists()


def test_a_reproduction_on_a_full_disk_names_its_table_and_leaves_the_earlier_outputs_whole(
    results: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    # Campaign 4: `ccsim reproduce` on a full disk said a bare "[Errno 28] Error writing
    # bytes to file", its folder holding the figures and tables written so far beside an
    # earlier reproduction's report.md (or none). The table is named, as run names its own;
    # it was the folder (campaign 53, issue 32).
    out = tmp_path / "p001-quick"
    shutil.copytree(results / "p001-quick", out, ignore=shutil.ignore_patterns("site"))
    before = {p: p.read_bytes() for p in out.iterdir() if p.is_file()}
    (out / "report.md").write_text("# p001: the earlier report\n")
    before[out / "report.md"] = (out / "report.md").read_bytes()
    written = pd.DataFrame.to_parquet

    def full_at_paired(table: pd.DataFrame, path: Path, **kwargs: Any) -> None:
        if Path(path).name == "paired.parquet":
            raise OSError(
                errno.ENOSPC, "Error writing bytes to file. Detail: [errno 28] No space left"
            )
        written(table, path, **kwargs)

    monkeypatch.setattr(pd.DataFrame, "to_parquet", full_at_paired)
    monkeypatch.chdir(ROOT)
    argv = ["reproduce", "p001", "--quick", "--seeds", "2", "--workers", "1", "--out", str(out)]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err == (
        f"ccsim: error: {out / 'paired.parquet'}: no space left on device; the figures, tables "
        f"and report were not written (those of an earlier reproduction in {out} were left as "
        f"they were); the finished runs are kept in {out}/runs, and the same command resumes "
        "from them\n"
    )
    assert {p: p.read_bytes() for p in out.iterdir() if p.is_file()} == before
    assert not [p for p in out.iterdir() if p.name.startswith(".")], "no hidden folder left"


def test_a_first_reproduction_failing_on_a_full_disk_speaks_of_no_earlier_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Campaign 47 (issue 32): a reproduction into a new folder, failing as it wrote its
    # tables, said "(those of an earlier reproduction in OUT were left as they were)" of
    # outputs that never were.
    out = tmp_path / "m01-quick"
    written = pd.DataFrame.to_parquet

    def full_at_summary(table: pd.DataFrame, path: Path, **kwargs: Any) -> None:
        if Path(path).name == "summary.parquet":
            raise OSError(errno.ENOSPC, "No space left on device")
        written(table, path, **kwargs)

    monkeypatch.setattr(pd.DataFrame, "to_parquet", full_at_summary)
    monkeypatch.chdir(ROOT)
    assert main(["reproduce", "m01", "--quick", "--workers", "1", "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("ccsim: error: ") and "no space left on device" in err, err
    assert err.endswith(
        "; the figures, tables and report were not written; the finished runs are kept in "
        f"{out}/runs, and the same command resumes from them\n"
    ), err
    assert not (out / "report.md").exists()


@pytest.mark.parametrize("make", [lambda p: p.write_text(""), os.mkfifo], ids=["file", "fifo"])
def test_a_run_store_that_is_no_folder_is_named_not_taken_for_results_without_runs(
    make: Callable[[Path], None], results: Path, tmp_path: Path
) -> None:
    # Campaign 4: runs/ a file or a FIFO read as "no runs stored": the time series went
    # static without a word, while a damaged record in it is named.
    from ccsim.sweep import CorruptRecordWarning

    tree = tmp_path / "results"
    shutil.copytree(results / "p001-quick", tree / "p001-quick",
                    ignore=shutil.ignore_patterns("site", "runs"))  # fmt: skip
    make(tree / "p001-quick" / "runs")
    with pytest.warns(CorruptRecordWarning) as caught:
        build_site(tree, warn=lambda _: None)
    said = {str(w.message) for w in caught}
    kind = "is a file" if make is not os.mkfifo else "is a FIFO (named pipe)"
    assert said == {f"{tree}/p001-quick/runs: {kind}, not a folder of run records; the figures "
                    "drawn from runs stay static images"}  # fmt: skip
    assert (tree / "site" / "p001-quick.html").is_file()


def test_a_rebuilt_site_draws_again_only_pages_whose_inputs_or_bytes_changed(
    results: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ccsim.site import build

    drawn: list[str] = []
    draw = build.paper_page

    def counted(page: Any, plan: Any) -> tuple[str, int, list[str]]:
        drawn.append(page.name)
        return draw(page, plan)

    monkeypatch.setattr(build, "paper_page", counted)
    out = tmp_path / "site"
    build_site(results, out, root=ROOT)
    assert drawn == ["p001-quick"]
    files = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    drawn.clear()
    build_site(results, out, root=ROOT)
    assert drawn == []  # kept: the same bytes, its figures copied again
    assert files == {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    page = out / "p001-quick.html"
    page.write_bytes(page.read_bytes()[:1000])  # cut short: never taken as up to date
    (out / "plotly.min.js").unlink()
    build_site(results, out, root=ROOT)
    assert drawn == ["p001-quick"]
    assert files == {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}


def test_a_site_into_a_folder_of_the_users_own_files_is_refused_naming_one_leaving_them_all(
    results: Path, tmp_path: Path
) -> None:
    # `report --out notes` wrote its index.html over the user's own, with status 0 (noticed in
    # campaign 21, issue 32). A site's own folder (its site.json) is rebuilt in place.
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "index.html").write_text("mine")
    (notes / "plotly.min.js").write_text("mine too")
    (notes / "todo.txt").write_text("kept")
    with pytest.raises(ValueError, match=r"notes: index\.html there is not a file of a site ccsim "
                       r"report wrote \(no site\.json there\).* and 1 more: give the site a "
                       r"folder of its own"):  # fmt: skip
        build_site(results, notes, root=ROOT)
    assert sorted(p.name for p in notes.iterdir()) == ["index.html", "plotly.min.js", "todo.txt"]
    assert (notes / "index.html").read_text() == "mine"
    assert (notes / "plotly.min.js").read_text() == "mine too"
    (notes / "index.html").unlink()
    (notes / "plotly.min.js").unlink()
    build_site(results, notes, root=ROOT)  # nothing of the user's in the way: the site beside
    assert (notes / "todo.txt").read_text() == "kept" and (notes / "site.json").is_file()
    (notes / "index.html").unlink()  # still the site's folder by its site.json
    build_site(results, notes, root=ROOT)
    assert (notes / "index.html").is_file()


def test_a_reproduction_folder_named_index_is_left_out_naming_it_not_overwritten_by_the_index(
    results: Path, tmp_path: Path
) -> None:
    # Its page, index.html, was overwritten by the site's index, which then linked to itself:
    # that reproduction's page was lost without a word (noticed16, issue 32).
    tree = copies(results, tmp_path / "results", ("index", "p001-good"))
    with pytest.warns(SiteWarning, match=r"^index left out of the site: its page would be the "
                                         r"site's own index.html; rename the folder"):  # fmt: skip
        build_site(tree, root=ROOT)
    site = tree / "site"
    assert sorted(p.name for p in site.glob("*.html")) == ["index.html", "p001-good.html"]
    index = (site / "index.html").read_text(encoding="utf-8")
    assert 'href="p001-good.html"' in index and 'href="index.html"' not in index
    shutil.rmtree(tree / "p001-good")
    with pytest.raises(ValueError, match="every reproduction in it was left out"), \
            pytest.warns(SiteWarning):  # fmt: skip
        build_site(tree, root=ROOT)


@pytest.mark.parametrize("name", ["plotly.min.js", "pages.json", "site.json", "index.html"])
def test_a_reproduction_folder_named_as_a_file_of_the_site_is_left_out_naming_it(
    name: str, results: Path, tmp_path: Path
) -> None:
    # Campaign 18: its figures' folder would be one of the site's own files, and no site was
    # written for any reproduction ("site/plotly.min.js: file exists; the site was not
    # written", naming neither the reproduction nor the cure), where one named index is left
    # out with a warning and the others are built (noticed16, issue 32).
    tree = copies(results, tmp_path / "results", (name, "p001-good"))
    with pytest.warns(SiteWarning, match=rf"^{re.escape(name)} left out of the site: its "
                                         rf"figures' folder would be the site's own "
                                         rf"{re.escape(name)}; rename the folder"):  # fmt: skip
        build_site(tree, root=ROOT)
    site = tree / "site"
    assert sorted(p.name for p in site.glob("*.html")) == ["index.html", "p001-good.html"]
    assert (site / "plotly.min.js").is_file() and (site / "site.json").is_file()
    assert (site / "pages.json").is_file() and (site / "p001-good").is_dir()


def test_a_reproduction_folder_named_as_another_ones_page_is_left_out_naming_both(
    results: Path, tmp_path: Path
) -> None:
    # Campaign 20: reproductions in a and a.html under --results: a.html's figures' folder
    # (site/a.html/) was a's page, and no site was written for either ("site/a.html: file
    # exists; the site was not written", naming neither reproduction nor the cure).
    tree = copies(results, tmp_path / "results", ("a", "a.html"))
    with pytest.warns(SiteWarning, match=r"^a\.html left out of the site: its figures' folder "
                                         r"would be the page of a; rename the folder"):  # fmt: skip
        build_site(tree, root=ROOT)
    site = tree / "site"
    assert sorted(p.name for p in site.glob("*.html")) == ["a.html", "index.html"]
    assert (site / "a").is_dir()


def test_report_on_results_in_a_folder_named_tilde_reads_them_there_not_in_home(
    results: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Campaign 19 (issue 32): pandas and pyarrow expand a leading ~ in the paths they read, so
    # `ccsim report --results '~'` (a folder named ~ in the working directory) looked for the
    # reproductions' tables in $HOME and left every one out of the site.
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    shutil.copytree(results, work / "~")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(work)
    assert main(["report", "--results", "~", "--out", "site"]) == 0
    assert (work / "site" / "p001-quick.html").is_file()


def test_an_out_reaching_into_a_reproduction_through_a_link_is_refused_and_dotdot_out_of_it_is_not(
    results: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Campaign 20: the folders around --out were those of the path as written, so a link to
    # results/p001-quick/runs was taken (the run's tables went into the reproduction's run
    # store), while results/p001-quick/plan/../../beside, a new folder beside the
    # reproduction, was refused as inside it.
    repro = results / "p001-quick"
    link = tmp_path / "store"
    link.symlink_to(repro / "runs")
    scenario = str(ROOT / "examples" / "random-loss.toml")
    before = {p: p.stat().st_mtime_ns for p in results.rglob("*") if p.is_file()}
    assert main(["run", scenario, "--set", "duration=0.1s", "--out", str(link)]) == 1
    err = capsys.readouterr().err
    assert f"--out {link}: it is inside {repro.resolve()}, the reproduction of p001" in err, err
    assert {p: p.stat().st_mtime_ns for p in results.rglob("*") if p.is_file()} == before
    beside = repro / "plan" / ".." / ".." / "beside"
    assert main(["run", scenario, "--set", "duration=0.1s", "--out", str(beside)]) == 0
    assert (results / "beside" / "flows.parquet").is_file()


def test_a_figures_html_is_the_same_whether_or_not_orjson_is_installed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Bug (CI, stop 54): Plotly writes JSON with orjson when it can import it, and orjson's
    # bytes differ from json's (1e-7 for 1e-07, Hangul unescaped), so the same results made a
    # different site on CI's Python, which has orjson, than in the README's venv, which has not.
    # A stand-in orjson (the real one need not be installed) writes as orjson does.
    import json
    import types

    import _plotly_utils.optional_imports as optional_imports
    import plotly.graph_objects as go
    from plotly.io import json as plotly_json

    from ccsim.site.figures import figure_html

    def dumps(obj: Any, option: int = 0) -> bytes:
        text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        return text.replace("e-07", "e-7").encode()

    fig = go.Figure(go.Scatter(x=[0.1, 1e-7, 3.0], y=[1 / 3, 2.5e20, 7], name="지연"))
    without = figure_html(fig, "f", 3, "points")
    stand_in = types.ModuleType("orjson")
    stand_in.dumps = dumps  # type: ignore[attr-defined]
    stand_in.OPT_NON_STR_KEYS = 1  # type: ignore[attr-defined]
    stand_in.OPT_SERIALIZE_NUMPY = 2  # type: ignore[attr-defined]
    stand_in.OPT_INDENT_2 = 4  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "orjson", stand_in)
    monkeypatch.setattr(optional_imports, "_not_importable", set())
    assert "1e-7" in plotly_json.to_json_plotly([1e-7]), "the stand-in is Plotly's engine"
    assert figure_html(fig, "f", 3, "points") == without
    assert "1e-07" in without and "\\uc9c0" in without
    assert plotly_json.config.default_engine == "auto", "the caller's setting is put back"


def test_a_browser_test_without_playwright_is_skipped_saying_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Campaign 62b (issue 32): without Playwright (an environment with ccsim but not
    # requirements-test.txt) each browser test ended in an error, "ModuleNotFoundError: No
    # module named 'playwright'", where the Dask tests without Dask skip and say why.
    monkeypatch.setitem(sys.modules, "playwright", None)  # as if not installed
    monkeypatch.setitem(sys.modules, "playwright.sync_api", None)
    with pytest.raises(pytest.skip.Exception) as skipped:
        next(system_chromium())
    assert "Chromium" in str(skipped.value) or "requirements-test.txt" in str(skipped.value)
