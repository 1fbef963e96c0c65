# SPDX-License-Identifier: MIT
"""The example notebooks run from top to bottom in a fresh kernel, so they never rot."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat", reason="the notebook tests need nbformat")
nbclient = pytest.importorskip("nbclient", reason="the notebook tests need nbclient")
pytest.importorskip("ipykernel", reason="the notebook tests need ipykernel")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def outputs(nb: object, mime: str) -> list[str]:
    found = []
    for cell in nb.cells:  # type: ignore[attr-defined]
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if mime in data:
                found.append(data[mime])
    return found


#: Run after the notebook's own cells, in its kernel: what the figure and the model were given.
INSPECT = """
import json
lo, hi = ax.get_ylim()
shown = [t.get_text() for t in ax.get_yticklabels()
         if t.get_text() and lo <= t.get_position()[1] <= hi]
print(json.dumps({"y_labels": shown, "t0_s": list(map(float, t0_s)), "ratio": list(ratio),
                  "resolved": sc.validate()}))
"""


def test_the_sweep_notebook_runs_and_shows_a_result_table_and_a_figure(tmp_path: Path) -> None:
    path = EXAMPLES / "sweep-beside-a-model.ipynb"
    nb = nbformat.read(path, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell(INSPECT))
    client = nbclient.NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()  # raises CellExecutionError, naming the cell, if any cell fails
    html = outputs(nb, "text/html")
    # The Result's own HTML (summary and tables), and the sweep's DataFrame.
    assert any("ccsim Result" in h and "goodput_bps" in h for h in html)
    assert len(outputs(nb, "image/png")) == 1
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert errors == []
    seen = json.loads(nb.cells[-1].outputs[0]["text"])
    # PFTK's T0 is the scenario's own RTO: its minimum of 1 s (RFC 6298), not 200 ms + RTT.
    assert 'rto_min = "1s"' in seen["resolved"]
    assert seen["t0_s"] == [1.0] * 5
    # The notebook's own check (within a factor of 1.35 of PFTK), met with room to spare.
    assert all(1 / 1.25 < r < 1.25 for r in seen["ratio"]), seen["ratio"]
    # The log-scaled goodput axis labels several values, not one.
    assert len(seen["y_labels"]) >= 3, seen["y_labels"]
