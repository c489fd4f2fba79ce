"""The Python API (sciflow.score, score_one, parse, compare, Results): its docstring examples run,
and each input kind gives the rows the CLI gives for the same files (issue 20)."""

from __future__ import annotations

import doctest
import json
from pathlib import Path

import pytest
from conftest import make_graph

import sciflow
from sciflow import api
from sciflow.cli import main
from sciflow.config import load_config
from sciflow.format.benchmarks import resolve_refs
from sciflow.metrics.graph_level import graph_level
from sciflow.metrics.image_level import image_level
from sciflow.metrics.text_level import text_level

FAST = {"matching": {"embedder": "none"}}
EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_docstring_examples():
    result = doctest.testmod(api)
    assert result.attempted >= 10 and result.failed == 0


def test_lazy_exports():
    for name in ("score", "score_one", "compare", "parse", "Results", "ItemScore", "load_results"):
        assert name in sciflow.__all__ and getattr(sciflow, name) is getattr(api, name)


def test_folder_matches_the_cli(tmp_path: Path):
    pred, refs = EXAMPLES / "predictions" / "careful-gen", EXAMPLES / "references"
    config = tmp_path / "fast.toml"
    config.write_text('[matching]\nembedder = "none"\n')
    assert main(["score", str(pred), "--refs", str(refs), "--out", str(tmp_path / "cli"), "--config", str(config),
                 "--no-cache"]) == 0
    cli_rows = [json.loads(line) for line in (tmp_path / "cli" / "results.jsonl").read_text().splitlines()]
    r = sciflow.score(pred, refs, config=FAST)
    assert [row["scores"] for row in r.rows] == [row["scores"] for row in cli_rows]
    saved = r.save(tmp_path / "api")
    again = sciflow.load_results(saved)
    assert again.summary["means"] == r.summary["means"] and len(again) == 5
    # a list of files and a list of graphs give the same scores as the folder
    files = sorted(pred.glob("*.json"))
    by_files = sciflow.score(files, refs, config=FAST)
    by_graphs = sciflow.score([sciflow.load_graph(f) for f in files], refs, config=FAST)
    assert [x["scores"] for x in by_files.rows] == [x["scores"] for x in by_graphs.rows] == \
        [x["scores"] for x in r.rows]


def test_results_views():
    ref = make_graph("abc", [("a", "b"), ("b", "c")], gid="chain")
    bad = make_graph("abc", [("b", "a"), ("b", "c")], gid="chain")
    one = sciflow.score_one(bad, ref, config=FAST)
    assert one.status == "ok" and one["node_f1"] == 1.0 and one["edge_f1"] == 0.5
    r = sciflow.score({"chain": bad}, refs=EXAMPLES / "references", config=FAST)
    assert r.summary["n_missing"] == 5  # no reference 'chain' there: nothing matched, all 5 missing
    assert "Results(" in repr(r)
    frame = r.to_pandas()
    assert list(frame.index) == sorted(p.stem for p in (EXAMPLES / "references").glob("*.json"))
    assert set(frame["status"]) == {"missing_prediction"}


def test_images_need_ids_and_bad_kinds_are_one_line():
    from PIL import Image

    with pytest.raises(api.APIError, match="mapping"):
        sciflow.score([Image.new("RGB", (8, 8))], config=FAST)
    with pytest.raises(api.APIError, match="not int"):
        sciflow.score({"cv_vit": 3}, config=FAST)


def test_image_prediction_is_parsed(tmp_path: Path):
    image = EXAMPLES / "predictions" / "graphviz-render" / "vit.png"
    ref = EXAMPLES / "references" / "vit.json"
    from PIL import Image

    with Image.open(image) as im:
        s = sciflow.score_one(im.copy(), ref, config=FAST)
    assert s.status == "ok" and s.image is not None and s.overall is not None
    parsed = sciflow.parse([image, image], config=FAST)
    assert len(parsed) == 2 and parsed[0].graph.to_dict() == parsed[1].graph.to_dict()
    assert sciflow.parse(image, config=FAST).graph.to_dict() == parsed[0].graph.to_dict()


def test_compare_results_and_folders(tmp_path: Path):
    refs = EXAMPLES / "references"
    a = sciflow.score(EXAMPLES / "predictions" / "careful-gen", refs, config=FAST, out=tmp_path / "a")
    b = sciflow.score(EXAMPLES / "predictions" / "sloppy-gen", refs, config=FAST, out=tmp_path / "b")
    in_memory = sciflow.compare(a, b)
    on_disk = sciflow.compare(tmp_path / "a", tmp_path / "b")
    assert in_memory["levels"] == on_disk["levels"] and in_memory["n_common"] == 5


def test_level_functions_accept_the_whole_config():
    cfg = load_config(overrides={"matching": {"embedder": "none"}, "graph": {"edge_weight": 1.0, "node_weight": 0.0}})
    ref = make_graph("abc", [("a", "b"), ("b", "c")])
    pred = make_graph("abc", [("a", "b")])
    g = graph_level(pred, ref, cfg)
    assert g.score == g.edge_f1  # the config's graph weights were used
    assert text_level(pred, ref, cfg).to_dict() == text_level(pred, ref, cfg.text, cfg.matching).to_dict()
    ref_file = resolve_refs("sciflow-bench-60@1/cv_vit.json")
    img = EXAMPLES / "predictions" / "graphviz-render" / "vit.png"
    whole = image_level(img, "a prompt", sciflow.load_graph(ref_file), None, load_config())
    table = image_level(img, "a prompt", sciflow.load_graph(ref_file), None, load_config().image)
    assert whole.to_dict() == table.to_dict()
