# SPDX-License-Identifier: MIT
"""The example notebooks run from top to bottom in a fresh kernel, so they never rot."""

from __future__ import annotations

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


def test_the_sweep_notebook_runs_and_shows_a_result_table_and_a_figure(tmp_path: Path) -> None:
    path = EXAMPLES / "sweep-beside-a-model.ipynb"
    nb = nbformat.read(path, as_version=4)
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
