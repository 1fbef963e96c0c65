# SPDX-License-Identifier: MIT
"""The README's paper sections say only what the stored full runs hold (one source of truth)."""

from __future__ import annotations

import json
from pathlib import Path

from ccsim.experiment.record import paper_sections, readme_problems

ROOT = Path(__file__).resolve().parents[2]


def test_every_number_and_verdict_in_the_readmes_paper_sections_is_in_its_full_run() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert set(paper_sections(readme)) == {"p000", "p001", "p002", "p003", "p004", "m01"}
    assert readme_problems(readme, ROOT) == []


def _paper(root: Path, verdicts: list[tuple[str, bool]]) -> None:
    folder = root / "experiments" / "p009-test"
    (folder / "full-run").mkdir(parents=True)
    (folder / "plan.toml").write_text('id = "p009"\nseeds = 10\n')
    (folder / "full-run" / "run.json").write_text(json.dumps({"seeds": 10, "runs": 240}))
    rows = ["item,headline,claim,verdict,evidence"]
    rows += [f'fig1,{h},"a claim",{v},"a is lower at 7 of 8 points (+3.5 %)"' for v, h in verdicts]
    (folder / "full-run" / "claims.csv").write_text("\n".join(rows) + "\n")
    (folder / "full-run" / "summary.csv").write_text(
        "figure,line,x,mean,ci95,n\nfig1,a,0.01,11.4123,0.0521,10\nfig2,a,0.01,0.873,0.01,10\n"
    )


README = """# x

## Paper 009, reproduced

Ten seeds, 240 runs: the transfer takes 11.41 s ± 0.05 (Fig. 8, RFC 3465, Table 2, 2001),
lower at 7 of 8 points, by 3.5 %; **does not hold**. The main result: **not reproduced**.
"""


def test_the_readme_check_accepts_numbers_and_verdicts_of_the_record(tmp_path: Path) -> None:
    _paper(tmp_path, [("does not hold", True), ("holds", False)])
    assert readme_problems(README, tmp_path) == []


def test_a_planted_wrong_number_is_caught(tmp_path: Path) -> None:
    _paper(tmp_path, [("does not hold", True)])
    problems = readme_problems(README.replace("11.41 s", "11.52 s"), tmp_path)
    assert len(problems) == 1 and problems[0].startswith("p009: 11.52 is in no table")
    # A share of a table quoted as a percentage is the same number; 87.4 is not.
    assert readme_problems(README + "A share of 87.3 %.\n", tmp_path) == []
    assert len(readme_problems(README + "A share of 87.4 %.\n", tmp_path)) == 1


def test_a_verdict_the_run_did_not_give_is_caught(tmp_path: Path) -> None:
    _paper(tmp_path, [("holds", True)])
    problems = readme_problems(README, tmp_path)
    assert any("**does not hold** but no claim" in p for p in problems)
    assert any("**not reproduced** but its full run's main result is reproduced" in p
               for p in problems)  # fmt: skip


def test_a_contradicted_claim_may_be_reported_beside_a_main_result_that_is_not(
    tmp_path: Path,
) -> None:
    # Bug (paper 002): "contradicted" is a headline word too, and a contradicted case finding
    # was taken for a claim about the main result, which partly held.
    _paper(tmp_path, [("partly holds", True), ("contradicted", False)])
    text = README.replace("**does not hold**", "**contradicted**").replace(
        "**not reproduced**", "**partly reproduced**"
    )
    assert readme_problems(text, tmp_path) == []
    # Without a contradicted claim it is still caught, as a verdict and as a main result.
    _paper(tmp_path / "b", [("partly holds", True)])
    problems = readme_problems(text, tmp_path / "b")
    assert any("**contradicted** but no claim" in p for p in problems)
    assert any("**contradicted** but its full run's main result" in p for p in problems)


def test_a_paper_section_without_a_stored_full_run_is_a_problem(tmp_path: Path) -> None:
    problems = readme_problems(README, tmp_path)
    assert problems == ["p009: no experiments/p009-*/ folder"]


def test_a_section_without_a_stored_full_run_may_name_settings_but_no_result(
    tmp_path: Path,
) -> None:
    _paper(tmp_path, [("holds", True)])
    (tmp_path / "experiments" / "p009-test" / "full-run" / "run.json").unlink()
    pending = "\n## Paper 009, pending\n\nTen seeds of `ccsim reproduce p009`; seeds = 10.\n"
    assert readme_problems(pending, tmp_path) == []
    problems = readme_problems(README, tmp_path)
    assert problems[0].startswith("p009: no stored full run")
    assert any("11.41 is in no table" in p for p in problems)
    assert any("**does not hold** but no claim" in p for p in problems)
