"""Agreement of the automatic parse with the verified graphs, from hand-made edit logs (exact values)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sciflow.verify.agreement import Counts, agreement, item_agreement


def _entry(item: str, action: str, element=None, before=None, after=None, **extra) -> dict:
    return {
        "time": "2025-06-01T10:00:00.000Z",
        "annotator": "ann",
        "item": item,
        "action": action,
        "element": element,
        "before": before,
        "after": after,
        "item_time_s": extra.pop("t", 0.0),
        **extra,
    }


def _load(item: str, nodes: str, edges: list[str]) -> dict:
    graph = {
        "id": item,
        "nodes": [{"id": n, "label": n.upper()} for n in nodes],
        "edges": [{"source": e[0], "target": e[1]} for e in edges],
    }
    return _entry(item, "load", after={"graph": graph, "source": "figures_dir", "image_size": [100, 100]})


def _write(folder: Path, item: str, entries: list[dict]) -> None:
    (folder / f"{item}.log.jsonl").write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")


@pytest.fixture
def logs(tmp_path: Path) -> Path:
    # item one: 5 auto nodes a..e, 5 auto edges. Exclude node e (takes d->e), exclude edge a->c,
    # add node h1 and the links c->h1 and a->d. Node TP 4 FP 1 FN 1; edge TP 3 FP 2 FN 2.
    one = [
        _load("one", "abcde", ["ab", "bc", "cd", "de", "ac"]),
        _entry("one", "open"),
        _entry("one", "exclude_node", "e", {"included": True}, {"included": False}, cascade=["d->e"]),
        _entry("one", "exclude_edge", "a->c", {"included": True}, {"included": False}),
        _entry("one", "add_node", "h1", None, {"label": "Loss", "bbox": [1, 1, 9, 9]}),
        _entry("one", "add_edge", "c->h1", None, {"source": "c", "target": "h1"}),
        _entry("one", "add_edge", "a->d", None, {"source": "a", "target": "d"}, t=40.5),
        _entry("one", "save", after={"nodes": 5, "edges": 5}, t=41.0),
        # edits after the last save do not count
        _entry("one", "exclude_node", "a", {"included": True}, {"included": False}, t=44.0),
    ]
    # item two: everything right, but an exclusion that was restored, and an added node deleted again.
    two = [
        _load("two", "xyz", ["xy", "yz"]),
        _entry("two", "exclude_node", "y", {"included": True}, {"included": False}, cascade=["x->y", "y->z"]),
        _entry("two", "restore_node", "y", {"included": False}, {"included": True}, cascade=["x->y", "y->z"]),
        _entry("two", "add_node", "h1", None, {"label": "Oops", "bbox": [1, 1, 9, 9]}),
        _entry("two", "add_edge", "x->h1", None, {"source": "x", "target": "h1"}),
        _entry("two", "delete_node", "h1", {"id": "h1", "label": "Oops"}, None, cascade=["x->h1"]),
        _entry("two", "save", t=9.0),
    ]
    # item three: a reversed arrow (exclude y->x, add x->y): node TP 2, edge TP 0 FP 1 FN 1.
    three = [
        _load("three", "xy", ["yx"]),
        _entry("three", "exclude_edge", "y->x", {"included": True}, {"included": False}),
        _entry("three", "add_edge", "x->y", None, {"source": "x", "target": "y"}),
        _entry("three", "save", t=5.0),
    ]
    unsaved = [_load("four", "ab", ["ab"]), _entry("four", "exclude_node", "a")]
    _write(tmp_path, "one", one)
    _write(tmp_path, "two", two)
    _write(tmp_path, "three", three)
    _write(tmp_path, "four", unsaved)
    (tmp_path / "broken.log.jsonl").write_text('{"action": "save"}\n', encoding="utf-8")
    (tmp_path / "one.json").write_text("{}")  # verified graphs are not read: the logs alone count
    return tmp_path


def test_per_item_counts_and_scores_are_exact(logs: Path) -> None:
    rep = agreement(logs)
    by = {i.item: i for i in rep.items}
    assert list(by) == ["one", "three", "two"]

    one = by["one"]
    assert one.nodes == Counts(tp=4, fp=1, fn=1)
    assert one.edges == Counts(tp=3, fp=2, fn=2)
    assert one.nodes.precision == pytest.approx(4 / 5) and one.nodes.recall == pytest.approx(4 / 5)
    assert one.nodes.f1 == pytest.approx(0.8)
    assert one.edges.precision == pytest.approx(3 / 5) and one.edges.recall == pytest.approx(3 / 5)
    assert one.edits == 5 and one.time_spent_s == 41.0 and one.annotators == ("ann",)

    assert by["two"].nodes == Counts(tp=3, fp=0, fn=0) and by["two"].edges == Counts(tp=2, fp=0, fn=0)
    assert by["two"].nodes.f1 == 1.0 and by["two"].edges.f1 == 1.0

    three = by["three"]
    assert three.nodes == Counts(tp=2) and three.edges == Counts(tp=0, fp=1, fn=1)
    assert three.edges.precision == 0.0 and three.edges.recall == 0.0 and three.edges.f1 == 0.0


def test_overall_is_the_micro_average(logs: Path) -> None:
    rep = agreement(logs)
    assert rep.nodes == Counts(tp=9, fp=1, fn=1)
    assert rep.edges == Counts(tp=5, fp=3, fn=3)
    assert rep.nodes.precision == pytest.approx(0.9) and rep.nodes.recall == pytest.approx(0.9)
    assert rep.nodes.f1 == pytest.approx(0.9)
    assert rep.edges.precision == pytest.approx(5 / 8) and rep.edges.recall == pytest.approx(5 / 8)
    assert rep.edges.f1 == pytest.approx(0.625)
    # macro, alongside: mean of per-item F1
    assert rep.macro == {
        "node_f1": pytest.approx((0.8 + 1 + 1) / 3, abs=1e-6),
        "edge_f1": pytest.approx((0.6 + 0 + 1) / 3, abs=1e-6),
    }
    assert rep.unsaved == ("four",)
    assert [i for i, _ in rep.errors] == ["broken"]

    d = rep.to_dict()
    assert d["overall"]["items"] == 3
    assert d["overall"]["edges"] == {"tp": 5, "fp": 3, "fn": 3, "precision": 0.625, "recall": 0.625, "f1": 0.625}
    json.dumps(d)
    text = rep.format()
    assert "overall (micro, 3 items)" in text and "0.900" in text and "0.625" in text
    assert "not saved, left out: four" in text and "error: broken" in text


def test_empty_sides_follow_the_graph_metric_convention() -> None:
    assert (Counts().precision, Counts().recall, Counts().f1) == (1.0, 1.0, 1.0)
    assert (Counts(fn=2).precision, Counts(fn=2).recall, Counts(fn=2).f1) == (0.0, 0.0, 0.0)
    assert (Counts(fp=2).precision, Counts(fp=2).recall, Counts(fp=2).f1) == (0.0, 0.0, 0.0)


def test_an_item_never_saved_has_no_agreement() -> None:
    assert item_agreement([_load("z", "ab", [])], "z") is None


def test_a_missing_folder_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        agreement(tmp_path / "nope")
