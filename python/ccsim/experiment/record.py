# SPDX-License-Identifier: MIT
"""The README's paper sections checked against the stored full runs (one source of truth).

``ccsim reproduce pXXX --record`` keeps a full reproduction's tables in
``experiments/<paper>/full-run/`` (``run.json``, ``claims.csv``, ``summary.csv``,
``table-<id>.csv``). A paper's section of the README (``## Paper 001 ...`` up to the next
``## ``) may quote only what those tables hold:

- every number in its prose (code spans, links and the numbers that name things, "Fig. 8",
  "Table 1", "§3.2", "RFC 3465", "paper 002", years, are not results) must be a value of the
  tables, a number in a claim's evidence, a value of ``run.json``, or a setting or paper value
  written in the plan or scenario, at the precision the README shows (a share may be quoted
  as a percentage);
- every verdict it writes in bold (**holds**, **contradicted**, **not reproduced**, ...) must be
  a verdict of one of that run's claims (headline words for headline claims).

A paper whose full run is not (yet) stored may have a section that names its settings and how to
run it, but it may quote no result and no verdict.

:func:`readme_problems` lists what does not hold; the test suite runs it on the README.
"""

from __future__ import annotations

import csv
import json
import math
import re
from pathlib import Path

from .verdicts import HEADLINE_WORDS, VERDICTS

_SECTION = re.compile(r"^## (?:Paper (\d{3})|Study (m\d{2}))\b.*$", re.M)
_NUMBER = re.compile(r"(?<![\w.])[-+\u2212]?\d[\d,]*(?:\.\d+)?(?![\w])")
#: Words after which a number names a thing instead of stating a result.
_NAMING = re.compile(
    r"(?:Figs?\.|Tables?|§|RFC|[Pp]aper|[Pp]apers|case|cases|seeds?|[Ii]ssues?|p00|Section|TM|"
    r"version|ns-|CUBIC|ECN)\s*(?:\d[\d.,]*\s*(?:,|and|or|to|-|\u2013)\s*)*$"
)
_CODE = re.compile(r"`[^`]*`|\]\([^)]*\)|\[[^\]]*\]\([^)]*\)")
_BOLD = re.compile(r"\*\*([^*]+)\*\*")


def paper_sections(readme: str) -> dict[str, str]:
    """Each ``## Paper NNN`` section of the README, keyed "p001", and each ``## Study mNN``
    section (a modern study, issue 34), keyed "m01", without its heading."""
    out = {}
    heads = list(_SECTION.finditer(readme))
    for m in heads:
        end = readme.find("\n## ", m.end())
        key = f"p{m.group(1)}" if m.group(1) else m.group(2)
        out[key] = readme[m.end() : end if end >= 0 else len(readme)]
    return out


def _numbers(text: str) -> list[float]:
    out = []
    for m in _NUMBER.finditer(text):
        try:
            out.append(float(m.group(0).replace(",", "").replace("\u2212", "-")))
        except ValueError:
            continue
    return out


def record_pool(full_run: Path, extra_texts: list[str]) -> list[float]:
    """Every number a README may quote for a paper: its full run's tables and evidence, its
    ``run.json``, and the numbers written in ``extra_texts`` (the plan and scenario)."""
    pool: list[float] = []
    for path in sorted(full_run.glob("*.csv")):
        with path.open(encoding="utf-8") as f:
            for row in csv.reader(f):
                for cell in row:
                    pool += _numbers(cell)
    run = full_run / "run.json"
    if run.exists():
        for v in json.loads(run.read_text(encoding="utf-8")).values():
            pool += _numbers(str(v))
    for text in extra_texts:
        pool += _numbers(text)
    return [v for v in pool if not math.isnan(v)]


def _decimals(token: str) -> int:
    return len(token.split(".")[1]) if "." in token else 0


def quoted(value: float, decimals: int, pool: list[float]) -> bool:
    """Whether a number the README shows with ``decimals`` decimals is a pool value (or a
    pool share quoted as a percentage, or a percentage quoted as a share) at that precision."""
    tol = 0.5 * 10**-decimals + 1e-9
    for v in pool:
        for scaled in (v, 100 * v, v / 100, abs(v), 100 * abs(v)):
            if abs(scaled - value) <= tol:
                return True
    return False


def readme_problems(readme: str, root: Path) -> list[str]:
    """What the README's paper sections say that their stored full runs do not (see the
    module's documentation); an empty list when every number and verdict is found."""
    problems = []
    for paper, text in paper_sections(readme).items():
        folders = sorted(root.glob(f"experiments/{paper}-*/"))
        if not folders:
            problems.append(f"{paper}: no experiments/{paper}-*/ folder")
            continue
        folder = folders[0]
        full = folder / "full-run"
        recorded = (full / "run.json").exists()
        extra = [p.read_text(encoding="utf-8") for p in sorted(folder.glob("*.toml"))]
        # Without a stored full run a section may still name the plan's settings (seeds, rates,
        # durations), but no result and no verdict: every other number is a problem.
        pool = record_pool(full, extra) if recorded else [v for t in extra for v in _numbers(t)]
        before_count = len(problems)
        prose = _CODE.sub(" ", text)
        for m in _NUMBER.finditer(prose):
            token = m.group(0)
            before = prose[max(0, m.start() - 40) : m.start()]
            if _NAMING.search(before):
                continue
            value = float(token.replace(",", "").replace("\u2212", "-"))
            if 1900 <= value <= 2100 and "." not in token:
                continue
            if not quoted(value, _decimals(token), pool):
                where = prose[max(0, m.start() - 30) : m.end() + 10].replace("\n", " ")
                problems.append(f"{paper}: {token} is in no table of its full run: ...{where}...")
        claims = []
        if recorded:
            with (full / "claims.csv").open(encoding="utf-8") as f:
                claims = list(csv.DictReader(f))
        verdicts = {c["verdict"] for c in claims}
        headline = {HEADLINE_WORDS[c["verdict"]] for c in claims if c["headline"] == "True"}
        for m in _BOLD.finditer(text):
            word = m.group(1).strip().rstrip(".:").lower()
            if word in VERDICTS and word not in verdicts:
                problems.append(f"{paper}: **{m.group(1)}** but no claim of its full run "
                                f"{word} (verdicts: {', '.join(sorted(verdicts))})")  # fmt: skip
            # "contradicted" is a claim's verdict and a headline word alike: a claim that
            # was contradicted may be reported so whatever the main result.
            if word in HEADLINE_WORDS.values() and word not in headline and word not in verdicts:
                problems.append(f"{paper}: **{m.group(1)}** but its full run's main result is "
                                f"{', '.join(sorted(headline)) or 'not stated'}")  # fmt: skip
        if not recorded and len(problems) > before_count:
            problems.insert(before_count, f"{paper}: no stored full run ({full}/run.json) for "
                            f"the results its section quotes; record one with "
                            f"`ccsim reproduce {paper} --record`")  # fmt: skip
    return problems
