"""notebooks/inspect.ipynb runs top to bottom (on the demo data) and shows its graphs inline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")  # the kernel: jupyter_client runs "python3" as this very interpreter

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "inspect.ipynb"


def execute(env_results: Path | None, monkeypatch) -> dict:
    monkeypatch.delenv("SCIFLOW_ITEM", raising=False)
    if env_results is None:
        monkeypatch.delenv("SCIFLOW_RESULTS", raising=False)
    else:
        monkeypatch.setenv("SCIFLOW_RESULTS", str(env_results))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    client = nbclient.NotebookClient(
        nb, kernel_name="python3", timeout=300, resources={"metadata": {"path": str(NOTEBOOK.parent)}}
    )
    client.execute()
    return nb


def outputs(nb) -> list[dict]:
    return [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]


def test_notebook_runs_on_the_demo(monkeypatch):
    nb = execute(None, monkeypatch)
    outs = outputs(nb)
    assert not [o for o in outs if o.get("output_type") == "error"]
    svgs = [o for o in outs if "image/svg+xml" in o.get("data", {})]
    assert len(svgs) >= 3  # the diff, the reference and the prediction
    text = "\n".join(o.get("text", "") for o in outs if o.get("output_type") == "stream")
    assert "fallbacks: ['embedder']" in text and "graph score" in text
    # the diagnostics table shows (a DataFrame or sciflow's HTML table)
    assert any("text/html" in o.get("data", {}) and "reversed edge" in o["data"]["text/html"] for o in outs)


def test_notebook_reads_a_given_results_folder_with_an_image(monkeypatch, tmp_path):
    from test_report import make_image_run, string_config

    run = make_image_run(tmp_path / "image-gen", string_config())
    nb = execute(run, monkeypatch)
    outs = outputs(nb)
    assert not [o for o in outs if o.get("output_type") == "error"]
    pngs = [o for o in outs if "image/png" in o.get("data", {})]
    assert len(pngs) == 2  # the generated image and the parse overlay
    assert json.dumps(outs).count("image/svg+xml") >= 3


def test_notebook_on_an_image_run_without_source_figures(monkeypatch, tmp_path):
    """An image run whose references have no source figure: the perceptual term is None (the
    notebook used to crash on round(None))."""
    from sciflow.config import load_config
    from sciflow.runs.scoring import run_scoring

    root = NOTEBOOK.parents[1] / "examples"
    out = tmp_path / "graphviz-render"
    run_scoring(root / "predictions" / "graphviz-render", root / "references", out,
                load_config(overrides={"matching": {"embedder": "none"}}))
    rows = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert any(r["scores"].get("perceptual_similarity", 0) is None for r in rows)
    nb = _execute_item(out, rows[0]["id"], monkeypatch)
    outs = outputs(nb)
    assert not [o for o in outs if o.get("output_type") == "error"]
    assert "'perceptual_similarity': None" in "\n".join(o.get("text", "") for o in outs)
    assert len([o for o in outs if "image/png" in o.get("data", {})]) == 2  # the image and the parse overlay


def _execute_item(results: Path, item: str, monkeypatch) -> dict:
    monkeypatch.setenv("SCIFLOW_RESULTS", str(results))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("SCIFLOW_ITEM", item)
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbclient.NotebookClient(nb, kernel_name="python3", timeout=300,
                            resources={"metadata": {"path": str(NOTEBOOK.parent)}}).execute()
    return nb
