# SPDX-License-Identifier: MIT
"""Reading one reproduction's results for the site: its report.md (title, mode, main result,
claims and their verdicts), its summary.parquet, and the plan stored with it; a file that
cannot be read is :class:`DamagedResults`, naming it."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ccsim.experiment.verdicts import VERDICTS

#: A paragraph of report.md's "The paper's main result": its verdict in bold first.
_HEADLINE = re.compile(
    r"^\*\*(Reproduced|Partly reproduced|Not reproduced|Contradicted|Not judged)\.\*\* "
)


class DamagedResults(ValueError):
    """A file of one reproduction's results that cannot be read (bytes that are not UTF-8, a
    Parquet file cut short by a full disk or an interrupted copy); the message names it."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path


class SiteWarning(UserWarning):
    """What ``ccsim report`` could not put in the site: a reproduction left out (a damaged
    file, named), or one whose plan is not found (its figures stay static images). The other
    reproductions' pages are built."""


def check_folder_name(folder: Path) -> None:
    """:class:`DamagedResults` naming a reproduction's folder whose name is not UTF-8 (a byte
    such as 0xff reaches Python as a lone surrogate): pyarrow and the plan reader take UTF-8
    names only. ``ccsim explore`` stopped with "internal error (TypeError): folder: expected a
    path ..., not PosixPath", serving none of the other reproductions; ``ccsim report`` left
    it out as "paired.parquet: not a readable Parquet file" (campaign 24, issue 32). A name in
    UTF-8 read in an ASCII locale (LC_ALL=C with PYTHONUTF8=0) is said to be so, with that
    cure: "not UTF-8 (byte 0xed); rename it" was said of a folder named in Hangul (campaign
    60b, issue 32)."""
    from ccsim.scenario import not_utf8

    bad = not_utf8(folder.name)
    if bad is not None:
        _, byte, cure = bad
        said = f"the folder's name is not UTF-8 (byte 0x{byte:02x}); rename it to read its results"
        raise DamagedResults(folder, cure or said)


def read_markdown(path: Path) -> str:
    """report.md's (or another text file's) text; :class:`DamagedResults` naming it when it
    cannot be read (a folder, a dangling link), is longer than any file ccsim writes (a link
    to /dev/zero was read until memory ran out) or is not UTF-8."""
    from ccsim.scenario import NotAFile, TooLarge, read_limited

    try:
        data = read_limited(path, regular=True)  # a FIFO there would wait for ever
    except (TooLarge, NotAFile) as e:
        raise DamagedResults(path, str(e)) from None
    except OSError as e:
        reason = e.strerror or str(e)
        raise DamagedResults(path, reason[:1].lower() + reason[1:]) from None
    try:
        # Without a byte order mark first: report.md opened and saved in Windows' Notepad (a
        # note added by hand) was left out of the site as "no heading ... on its first line,
        # so not a whole report (cut short?)", its heading there after the mark (campaign 60b,
        # issue 32).
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as e:
        raise DamagedResults(
            path, f"not UTF-8 text (byte 0x{data[e.start]:02x} at offset {e.start})"
        ) from None


def read_summary(path: Path) -> Any:
    """summary.parquet as a DataFrame (empty when the reproduction has none);
    :class:`DamagedResults` naming it when it is not a whole Parquet file."""
    import pandas as pd
    import pyarrow as pa

    if not path.exists():
        return pd.DataFrame()
    try:
        summary = pd.read_parquet(path.absolute())  # pandas expands a leading ~
    except (pa.ArrowException, ValueError) as e:
        raise DamagedResults(path, f"not a readable Parquet file ({e})") from None
    # Whole Parquet but another table (a file copied over it): its figures would be drawn
    # from columns it lacks ("internal error (KeyError): 'figure'").
    lacking = [c for c in SUMMARY_READ if c not in summary.columns]
    if lacking:
        raise DamagedResults(path, f"not a reproduction's summary: no column {', '.join(lacking)}")
    # Its columns, but of other types (a table edited and written back): a mean held as text
    # stopped ccsim report with "could not convert string to float: 'abc'", naming no file,
    # and no site was built for the other reproductions either (campaign 22, issue 32).
    # x is a number or, where the plan's values carry a unit (p004's "10Mbps"), text. A plan
    # of tables alone writes a summary without rows, whose columns have no type to check.
    checked = (("figure", False), ("line", False), ("mean", True), ("ci95", True), ("n", True))
    for column, numeric in [] if summary.empty else checked:
        dtype = summary[column].dtype
        ok = (pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype)
              if numeric else pd.api.types.is_string_dtype(summary[column]))  # fmt: skip
        if not ok:
            want = "numbers" if numeric else "text"
            raise DamagedResults(path, f"not a reproduction's summary: column {column} holds "
                                       f"{dtype}, not {want}")  # fmt: skip
    return summary


#: The columns of summary.parquet (``ccsim.experiment.stats.SUMMARY_COLUMNS``) the site draws
#: its figures from.
SUMMARY_READ = ["figure", "line", "x", "mean", "ci95", "n"]


def check_tables(folder: Path) -> None:
    """Every table and record ``ccsim reproduce`` wrote beside report.md (``*.parquet``,
    ``*.csv``, ``*.json``) reads as what it claims to be, or :class:`DamagedResults` names the
    first that does not. The pages are drawn from report.md and summary.parquet only, so a
    reproduction whose other files were cut short (a full disk, a copy interrupted) would
    otherwise get a page as if it were whole. Each check is cheap: a Parquet file's footer
    (where a cut-short file fails), a CSV's rows against its header, a JSON document."""
    import csv
    import json

    import pyarrow as pa
    import pyarrow.parquet as pq

    from ccsim.scenario import NotAFile, check_regular

    check_folder_name(folder)
    # Every reproduction writes summary.parquet beside report.md, and the page's figures are
    # drawn from it. Gone (a copy of the results interrupted, a file removed by hand), it was
    # read as a reproduction without points: the page was built with status 0 and no warning,
    # every figure a static image (campaign 43a, issue 32).
    summary = folder / "summary.parquet"
    if not summary.exists() and not summary.is_symlink():  # a dangling link: read below
        raise DamagedResults(summary, "missing (ccsim reproduce writes it beside report.md: a "
                                      "copy cut short?)")  # fmt: skip
    for path in sorted(folder.glob("*.parquet")):
        try:
            check_regular(path)  # pyarrow waits on a FIFO past Ctrl-C and SIGTERM
            pq.read_metadata(path.absolute())  # pyarrow expands a leading ~
        except NotAFile as e:
            raise DamagedResults(path, str(e)) from None
        except (pa.ArrowException, OSError, ValueError) as e:
            raise DamagedResults(path, f"not a readable Parquet file ({e})") from None
    for path in sorted(folder.glob("*.csv")):
        try:
            rows = list(csv.reader(read_markdown(path).splitlines()))
        except csv.Error as e:  # a field past csv's limit (an opening quote never closed)
            raise DamagedResults(path, f"not a CSV table ({e})") from None
        for n, row in enumerate(rows[1:], start=2):
            if len(row) != len(rows[0]):
                raise DamagedResults(path, f"line {n} has {len(row)} fields, the header "
                                           f"{len(rows[0])} (cut short?)")  # fmt: skip
    for path in sorted(folder.glob("*.json")):
        try:
            json.loads(read_markdown(path))
        except (ValueError, RecursionError) as e:  # RecursionError: nested past the stack
            raise DamagedResults(path, f"not valid JSON ({e})") from None


@dataclass
class PaperPage:
    """What the index needs of one reproduction, read from its report.md."""

    folder: Path
    name: str  # the results folder's name: p001, p002-quick
    plan_id: str
    title: str
    quick: bool
    claims: list[tuple[str, str, str]] = field(default_factory=list)  # figure, paper, ours
    #: The verdict of each of the paper's main results, as report.md opens with them
    #: ("reproduced", "not reproduced", ...).
    headlines: list[str] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        out = dict.fromkeys(VERDICTS, 0)
        out["other"] = 0
        for _, _, ours in self.claims:
            out[verdict_of(ours)] += 1
        return out


def verdict_of(text: str) -> str:
    """The verdict a claim's text in report.md starts with ("holds", "does not hold", ...)."""
    for v in VERDICTS:
        if text.startswith(v):
            return v
    return "other"


def _cells(row: str) -> list[str]:
    """The cells of a Markdown table row, with report.md's escaped pipes put back."""
    parts = re.split(r"(?<!\\)\|", row.strip())[1:-1]
    return [p.strip().replace("\\|", "|") for p in parts]


def read_report(folder: Path) -> PaperPage:
    """The title, mode and claims of ``folder/report.md``."""
    check_folder_name(folder)
    text = read_markdown(folder / "report.md")
    lines = text.splitlines()
    if not lines or not lines[0].startswith("# "):  # write_report's first line, always
        raise DamagedResults(folder / "report.md", "no heading '# <paper>: <title>' on its "
                             "first line, so not a whole report (cut short?)")  # fmt: skip
    head = lines[0].lstrip("# ").strip()
    plan_id, _, title = head.partition(": ")
    page = PaperPage(folder, folder.name, plan_id, title or head, "Mode: quick" in text)
    in_claims = in_main = False
    for ln in lines:
        if ln.startswith("## "):
            in_claims = ln.startswith("## The paper's findings")
            in_main = ln.startswith("## The paper's main result")
            continue
        head = _HEADLINE.match(ln) if in_main else None
        if head is not None:
            page.headlines.append(head.group(1).lower())
        if in_claims and ln.startswith("|") and not ln.startswith("|---"):
            cells = _cells(ln)
            if len(cells) == 3 and cells[:2] != ["figure", "the paper says"]:
                page.claims.append((cells[0], cells[1], cells[2]))
    _check_whole(folder, lines, page)
    return page


def _check_whole(folder: Path, lines: list[str], page: PaperPage) -> None:
    """:class:`DamagedResults` when ``folder``'s report.md was cut short past its heading:
    it lacks its "Mode:" line or has fewer claims than the claims.csv ``ccsim reproduce``
    writes beside it (one row per claim, as report.md's table). Only the heading was checked:
    cut after it (a copy interrupted), report.md gave a page with no claims, or some, as if
    whole, and a quick reproduction read as a full one, its run store then taken by the
    explorer for full runs (campaign 61b, issue 32). A folder without claims.csv (a
    reproduction's report.md alone, a hand-made one) is not checked."""
    import csv

    listed = folder / "claims.csv"
    if not listed.is_file():
        return
    try:
        rows = list(csv.reader(read_markdown(listed).splitlines()))
    except (DamagedResults, csv.Error):
        return  # named by check_tables, where the site reads the tables
    claims = max(0, len(rows) - 1)
    if not any(ln.startswith("Mode: ") for ln in lines):
        why = "no 'Mode: ...' line"
    elif len(page.claims) < claims:
        why = f"{len(page.claims)} of the {claims} claims claims.csv lists"
    else:
        return
    raise DamagedResults(folder / "report.md", f"{why}, so not a whole report (cut short?)")


def find_reports(results: Path) -> list[Path]:
    """Every reproduction under ``results`` (a folder holding a report.md), sorted by name;
    ``results`` itself when it is one reproduction's folder."""
    if (Path(results) / "report.md").is_file():
        return [Path(results)]
    return sorted(p.parent for p in Path(results).glob("*/report.md"))


def plan_for(page: PaperPage, root: Path | None = None) -> tuple[Any, str | None]:
    """The plan a reproduction ran (for labels and the run store's keys) and, when there is
    none, why: its figures are then shown as their PNGs.

    Read from the copy ``ccsim reproduce`` stores with the results (``<reproduction>/plan/``),
    so the site does not depend on the working directory; a damaged copy is
    :class:`DamagedResults`. Results written before the plan was stored fall back to
    ``root/experiments`` (default: the working directory's)."""
    from ccsim.errors import Error
    from ccsim.experiment.plan import PlanError, find_experiment, load_plan

    plan = load_stored_plan(page.folder)
    if plan is not None:
        return plan, None
    try:
        return load_plan(find_experiment(page.plan_id, root)), None
    except (PlanError, Error, OSError):
        return None, (
            f"{page.name}: no plan stored with the results ({page.folder / 'plan' / 'plan.toml'})"
            f" nor an experiments/{page.plan_id}* folder here, so its figures are static "
            f"images; `ccsim reproduce {page.plan_id}` again stores the plan"
        )


def load_stored_plan(folder: Path) -> Any:
    """The plan stored with the reproduction in ``folder``, or None when none is stored;
    :class:`DamagedResults` naming the stored file that cannot be read. ``ccsim report`` and
    ``ccsim explore`` both read a reproduction's plan through this, so a damaged one is named
    alike by both."""
    from ccsim.errors import Error
    from ccsim.experiment.plan import PlanError, load_plan

    stored = stored_plan(folder)
    if stored is None:
        return None
    # store_plan writes the scenario beside the plan and names it by its file name. Named by
    # a path (`../../x.toml`, `/etc/passwd`), it was read from there: a site or an explorer
    # built from a file that is no part of the results, without a word (campaign 7).
    name = plan_scenario_name(stored / "plan.toml")
    if name is not None and (Path(name).name != name or name in (".", "..")):
        raise DamagedResults(stored / "plan.toml", f"names its scenario {name!r}, which is not "
                             "beside it; ccsim reproduce stores the scenario in the same "
                             "folder")  # fmt: skip
    try:
        plan = load_plan(stored)
    except (PlanError, Error, OSError) as e:
        raise _damaged_plan(stored, e) from None
    # Cut inside a comment (or a string the plan does not need whole), a file still reads: a
    # plan.toml cut before its first figure loaded with none, and the explorer served an
    # empty page without a word (campaign 6).
    cut = _cut_short(stored, name)
    if cut:
        raise DamagedResults(cut[0], "cut short (its last line has no line break); ccsim "
                                     "reproduce stores whole files")  # fmt: skip
    return plan


def plan_scenario_name(plan: Path) -> str | None:
    """The ``scenario`` a stored plan.toml names, or None when it does not read or names none."""

    from ccsim._tomllib import tomllib
    from ccsim.errors import Error
    from ccsim.scenario import read_text

    try:
        name = tomllib.loads(read_text(plan, "plan")).get("scenario")
    except (tomllib.TOMLDecodeError, Error, OSError):
        return None
    return name if isinstance(name, str) and name else None


def _cut_short(stored: Path, scenario: str | None) -> list[Path]:
    """The stored plan's files (its plan.toml, the scenario named ``scenario``) whose last line
    has no line break: ccsim reproduce stores each ending in one (store_plan), so such a file
    was cut short."""
    files = [stored / "plan.toml", *([stored / scenario] if scenario else [])]
    return [p for p in files if p.is_file() and not p.read_bytes().endswith(b"\n")]


def _damaged_plan(stored: Path, error: Exception) -> DamagedResults:
    """The stored plan that ``load_plan`` refused with ``error``, named by the file that is
    damaged. The plan's error names where the plan failed, not which file is wrong: a scenario
    cut short reads as TOML and failed as "figures[0].title: flows.transfer: no flow named
    ...", blamed on plan.toml. So each file is read alone: plan.toml as TOML, the scenario as
    a scenario; when both read, the one whose last line has no line break (ccsim reproduce
    copies whole files, each ending in one) was cut short; else the two do not fit."""
    from ccsim import _core
    from ccsim.errors import Error

    plan = stored / "plan.toml"
    cannot = f"the plan stored with the results cannot be read ({error})"
    name = plan_scenario_name(plan)
    if name is None:
        return DamagedResults(plan, cannot)
    scenario = stored / name
    try:
        _core.validate(scenario.read_text(encoding="utf-8"), [], 1)
    except (Error, ValueError, OSError) as e:  # ValueError: not UTF-8
        return DamagedResults(scenario, f"the scenario stored with the results cannot be read "
                                        f"({e})")  # fmt: skip
    cut = _cut_short(stored, name)
    if len(cut) == 1:
        return DamagedResults(cut[0], f"cut short (its last line has no line break): {cannot}")
    return DamagedResults(plan, f"the plan stored with the results does not fit the scenario "
                                f"stored beside it, {name} ({error})")  # fmt: skip


def stored_plan(folder: Path) -> Path | None:
    """The folder of the plan stored with the reproduction in ``folder`` (its plan.toml and
    the scenario that names), or None when none is stored. :class:`DamagedResults` names the
    first of them that is there but is no regular file, through the check run records and
    results files pass (``check_regular``): a FIFO for plan.toml read as "no plan stored",
    and the plan of the working directory's experiments/ was drawn instead; a FIFO for its
    scenario stopped ``ccsim explore`` from starting, for every reproduction."""
    import os

    from ccsim._tomllib import tomllib
    from ccsim.experiment.reproduction import PLAN_FOLDER
    from ccsim.scenario import NotAFile, TooLarge, check_regular, file_kind, read_limited

    stored = folder / PLAN_FOLDER
    plan = stored / "plan.toml"
    if not os.path.lexists(stored) or (stored.is_dir() and not os.path.lexists(plan)):
        return None
    path = stored if not stored.is_dir() else plan
    try:
        if path == stored:
            raise NotAFile(f"{file_kind(os.stat(stored).st_mode)}, not a folder")
        raw = tomllib.loads(read_limited(plan, regular=True).decode("utf-8"))
        scenario = raw.get("scenario")
        if isinstance(scenario, str) and scenario:  # else load_plan names what is wrong
            path = stored / scenario
            check_regular(path)
    except (tomllib.TOMLDecodeError, UnicodeDecodeError):
        return stored  # load_plan names what is wrong
    except (NotAFile, TooLarge) as e:
        raise DamagedResults(path, str(e)) from None
    except OSError as e:
        raise DamagedResults(path, e.strerror or str(e)) from None
    return stored
