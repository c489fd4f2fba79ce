"""The verification store: identity-consistent edits, validation, the audit log, resuming, atomic saving."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from sciflow.format.graph import DiagramGraph
from sciflow.verify import files as files_mod
from sciflow.verify import store as store_mod
from sciflow.verify.sample import write_sample_items
from sciflow.verify.store import EditError, ItemError, VerifyStore, atomic_write_text, read_log, replay

ITEM = "encoder_decoder"


class FakeClock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def figs(tmp_path: Path) -> Path:
    write_sample_items(tmp_path / "figs")
    return tmp_path / "figs"


@pytest.fixture
def store(figs: Path, tmp_path: Path) -> VerifyStore:
    return VerifyStore(figs, tmp_path / "verified", annotator="ann", clock=FakeClock())


def test_items_start_fully_included_with_their_ids(store: VerifyStore) -> None:
    assert store.items == ["encoder_decoder", "retrieval"]
    v = store.view(ITEM)
    assert [(n["id"], n["origin"], n["included"]) for n in v["nodes"]] == [
        ("a", "auto", True),
        ("b", "auto", True),
        ("c", "auto", True),
        ("d", "auto", True),
        ("x", "auto", True),
    ]
    assert [e["id"] for e in v["edges"]] == ["a->b", "b->c", "c->d", "x->c"]
    assert all(e["included"] for e in v["edges"])
    assert v["figure"]["width"] == 720 and v["figure"]["height"] == 320
    assert v["source"] == "figures_dir:encoder_decoder.json"
    log = read_log(store.log_path(ITEM))
    assert [e["action"] for e in log] == ["load"]
    assert log[0]["after"]["graph"]["nodes"][0] == {"id": "a", "label": "Image", "bbox": [30.0, 120.0, 130.0, 170.0]}


def test_excluding_a_node_excludes_its_edges_and_restoring_brings_them_back(store: VerifyStore) -> None:
    store.edit(ITEM, {"action": "exclude_edge", "id": "b->c"})
    _, entry = store.edit(ITEM, {"action": "exclude_node", "id": "c"})
    assert entry["cascade"] == ["c->d", "x->c"]  # b->c was already excluded on its own
    v = store.view(ITEM)
    assert {e["id"]: e["included"] for e in v["edges"]} == {"a->b": True, "b->c": False, "c->d": False, "x->c": False}
    _, entry = store.edit(ITEM, {"action": "restore_node", "id": "c"})
    assert entry["cascade"] == ["c->d", "x->c"]
    v = store.view(ITEM)
    assert {e["id"]: e["included"] for e in v["edges"]} == {"a->b": True, "b->c": False, "c->d": True, "x->c": True}


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        ({"action": "exclude_node", "id": "zz"}, "unknown node 'zz'"),
        ({"action": "exclude_edge", "id": "a->zz"}, "unknown edge 'a->zz'"),
        ({"action": "add_edge", "source": "a", "target": "zz"}, "unknown node 'zz'"),
        ({"action": "add_edge", "source": "a", "target": "a"}, "self-link"),
        ({"action": "add_edge", "source": "a", "target": "b"}, "already exists (duplicate edge)"),
        ({"action": "restore_node", "id": "a"}, "node 'a' is not excluded"),
        ({"action": "delete_node", "id": "a"}, "comes from the automatic parse: exclude it"),
        ({"action": "delete_edge", "id": "a->b"}, "comes from the automatic parse: exclude it"),
        ({"action": "rename_node", "id": "a", "label": "Img"}, "unknown action 'rename_node'"),
        ({"action": "add_node", "label": "  ", "bbox": [1, 1, 50, 50]}, "needs a label"),
        ({"action": "add_node", "label": "Loss", "bbox": [1, 1, 50]}, "needs 'bbox'"),
        ({"action": "add_node", "label": "Loss", "bbox": [50, 50, 10, 10]}, "too small"),
        ({"action": "add_node", "label": "Loss", "bbox": [10, 10, 900, 50]}, "outside the figure"),
        ({"action": "add_node", "label": "Loss", "bbox": [10, 10, float("nan"), 50]}, "needs 'bbox'"),
        ("not an object", "JSON object"),
    ],
)
def test_invalid_edits_are_rejected_with_a_clear_message(store: VerifyStore, edit: object, message: str) -> None:
    with pytest.raises(EditError, match=message.replace("(", r"\(").replace(")", r"\)")):
        store.edit(ITEM, edit)  # type: ignore[arg-type]
    assert [e["action"] for e in read_log(store.log_path(ITEM))] == ["load"]  # nothing logged


def test_edits_that_conflict_with_exclusions_are_rejected(store: VerifyStore) -> None:
    store.edit(ITEM, {"action": "exclude_edge", "id": "a->b"})
    with pytest.raises(EditError, match=r"already exists \(excluded\): restore it instead"):
        store.edit(ITEM, {"action": "add_edge", "source": "a", "target": "b"})
    with pytest.raises(EditError, match="already excluded"):
        store.edit(ITEM, {"action": "exclude_edge", "source": "a", "target": "b"})
    store.edit(ITEM, {"action": "exclude_node", "id": "x"})
    with pytest.raises(EditError, match="restore that node first"):
        store.edit(ITEM, {"action": "restore_edge", "id": "x->c"})
    with pytest.raises(EditError, match="node 'x' is excluded: restore it before linking"):
        store.edit(ITEM, {"action": "add_edge", "source": "x", "target": "d"})
    _, e = store.edit(ITEM, {"action": "add_node", "label": "Loss", "bbox": [380, 240, 510, 290]})
    with pytest.raises(EditError, match="added by hand: delete it"):
        store.edit(ITEM, {"action": "exclude_node", "id": e["element"]})
    store.edit(ITEM, {"action": "add_edge", "source": "c", "target": e["element"]})
    with pytest.raises(EditError, match="was already added"):
        store.edit(ITEM, {"action": "add_edge", "source": "c", "target": e["element"]})


def test_added_nodes_get_fresh_ids_and_deleting_one_takes_its_links(store: VerifyStore) -> None:
    _, e1 = store.edit(ITEM, {"action": "add_node", "label": "Loss\n term", "bbox": [380, 240, 510, 290]})
    assert e1["element"] == "h1" and e1["after"] == {"label": "Loss term", "bbox": [380.0, 240.0, 510.0, 290.0]}
    store.edit(ITEM, {"action": "add_edge", "source": "c", "target": "h1"})
    _, d = store.edit(ITEM, {"action": "delete_node", "id": "h1"})
    assert d["cascade"] == ["c->h1"]
    assert [n["id"] for n in store.view(ITEM)["nodes"]] == ["a", "b", "c", "d", "x"]
    _, e2 = store.edit(ITEM, {"action": "add_node", "label": "Loss", "bbox": [380, 240, 510, 290]})
    assert e2["element"] == "h2"  # ids of deleted additions are never reused


def test_save_writes_the_verified_graph_with_ids_preserved_and_reopening_resumes(figs: Path, tmp_path: Path) -> None:
    clock = FakeClock()
    st = VerifyStore(figs, tmp_path / "verified", annotator="ann", clock=clock)
    st.session(ITEM, open_=True)
    clock.t += 12
    st.edit(ITEM, {"action": "exclude_node", "id": "x"})
    clock.t += 500  # a coffee break counts at most IDLE_CAP_S
    _, e = st.edit(ITEM, {"action": "add_node", "label": "Loss", "bbox": [380, 240, 510, 290]})
    clock.t += 3
    st.edit(ITEM, {"action": "add_edge", "source": "c", "target": e["element"]})
    st.save(ITEM)

    saved = DiagramGraph.load(tmp_path / "verified" / f"{ITEM}.json")
    assert [n.id for n in saved.nodes] == ["a", "b", "c", "d", "h1"]
    assert [(x.source, x.target) for x in saved.edges] == [("a", "b"), ("b", "c"), ("c", "d"), ("c", "h1")]
    assert saved.node("h1").bbox == (380.0, 240.0, 510.0, 290.0)
    ver = saved.meta["verification"]
    assert ver["annotator"] == "ann" and ver["excluded_nodes"] == ["x"] and ver["excluded_edges"] == ["x->c"]
    assert ver["time_spent_s"] == pytest.approx(12 + store_mod.IDLE_CAP_S + 3)
    assert saved.meta["origin"] == "sciflow.verify.sample"

    log = read_log(tmp_path / "verified" / f"{ITEM}.log.jsonl")
    assert [x["action"] for x in log] == ["load", "exclude_node", "add_node", "add_edge", "save"]
    for x in log:
        assert set(x) >= {"time", "annotator", "item", "action", "element", "before", "after", "item_time_s"}
        assert x["annotator"] == "ann" and x["item"] == ITEM and x["time"].endswith("Z")
    assert (
        log[1]["element"] == "x" and log[1]["before"] == {"included": True} and log[1]["after"] == {"included": False}
    )
    assert log[1]["cascade"] == ["x->c"]

    # a new process resumes where the last one stopped, time included
    st2 = VerifyStore(figs, tmp_path / "verified", annotator="other", clock=FakeClock())
    v = st2.view(ITEM, st2.session(ITEM, open_=True))
    assert {n["id"]: (n["origin"], n["included"]) for n in v["nodes"]} == {
        "a": ("auto", True),
        "b": ("auto", True),
        "c": ("auto", True),
        "d": ("auto", True),
        "x": ("auto", False),
        "h1": ("added", True),
    }
    assert v["saved"] and not v["dirty"] and v["time_spent_s"] == pytest.approx(75.0)
    assert st2.listing()["saved"] == 1
    _, e = st2.edit(ITEM, {"action": "add_node", "label": "Extra", "bbox": [1, 1, 20, 20]})
    assert e["element"] == "h2" and e["annotator"] == "other"
    assert st2.view(ITEM)["dirty"] and st2.status(ITEM) == "edited"


def test_an_already_saved_item_without_a_log_starts_from_the_saved_graph(figs: Path, tmp_path: Path) -> None:
    out = tmp_path / "verified"
    out.mkdir()
    g = json.loads((figs / "retrieval.json").read_text())
    g["edges"] = g["edges"][:1]
    (out / "retrieval.json").write_text(json.dumps(g))
    st = VerifyStore(figs, out, annotator="ann")
    v = st.view("retrieval")
    assert v["source"] == "verified_dir:retrieval.json" and [e["id"] for e in v["edges"]] == ["q->r"]


def test_figures_without_a_parse_go_through_the_parser_once(figs: Path, tmp_path: Path) -> None:
    (figs / "retrieval.json").unlink()
    calls: list[Path] = []

    class FakeResult:
        graph = DiagramGraph.from_dict({"id": "retrieval", "nodes": [{"id": "n1", "label": "Query"}], "edges": []})

    def factory():
        def parse(path: Path) -> FakeResult:
            calls.append(path)
            return FakeResult()

        return parse

    st = VerifyStore(figs, tmp_path / "verified", annotator="ann", parser_factory=factory)
    assert st.view("retrieval")["source"] == "parser"
    st2 = VerifyStore(figs, tmp_path / "verified", annotator="ann", parser_factory=factory)
    assert [n["id"] for n in st2.view("retrieval")["nodes"]] == ["n1"]  # resumed from the log
    assert len(calls) == 1


def test_a_parser_failure_is_an_item_error_not_a_crash(figs: Path, tmp_path: Path) -> None:
    (figs / "retrieval.json").unlink()

    def factory():
        def parse(path: Path):
            raise RuntimeError("no OCR model")

        return parse

    st = VerifyStore(figs, tmp_path / "verified", annotator="ann", parser_factory=factory)
    with pytest.raises(ItemError, match="the parser failed: RuntimeError: no OCR model"):
        st.session("retrieval")
    assert st.view(ITEM)["item"] == ITEM  # the other items still work


def test_atomic_write_leaves_the_old_file_when_the_write_fails(tmp_path: Path, monkeypatch) -> None:
    target = tmp_path / "g.json"
    atomic_write_text(target, "old\n")

    def boom(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(files_mod.os, "replace", boom)
    with pytest.raises(OSError, match="disk full"):
        atomic_write_text(target, "new\n")
    assert target.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.json"]  # no temp file left behind


def test_a_crash_while_saving_never_leaves_a_half_written_graph(store: VerifyStore, monkeypatch) -> None:
    store.edit(ITEM, {"action": "exclude_node", "id": "x"})
    store.save(ITEM)
    path = store.graph_path(ITEM)
    before = path.read_bytes()
    store.edit(ITEM, {"action": "exclude_node", "id": "d"})

    real_fdopen = os.fdopen

    class HalfWriter:
        """Writes half of the text, then the process 'dies'."""

        def __init__(self, fh):
            self.fh = fh

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.fh.close()
            return False

        def write(self, text):
            self.fh.write(text[: len(text) // 2])
            raise KeyboardInterrupt("killed mid-write")

    monkeypatch.setattr(files_mod.os, "fdopen", lambda fd, *a, **k: HalfWriter(real_fdopen(fd, *a, **k)))
    with pytest.raises(KeyboardInterrupt):
        store.save(ITEM)
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert DiagramGraph.load(path).node("d").label == "Output"
    assert not [p for p in path.parent.iterdir() if p.name.endswith(".tmp")]
    # the log on disk is whole too, and ends with the last edit (the failed save was not logged)
    assert [e["action"] for e in read_log(store.log_path(ITEM))][-1] == "exclude_node"


def test_a_log_with_a_truncated_last_line_still_replays(store: VerifyStore) -> None:
    store.edit(ITEM, {"action": "exclude_node", "id": "x"})
    path = store.log_path(ITEM)
    path.write_text(path.read_text() + '{"time": "2025-01-01T00:00:00Z", "action": "exclu', encoding="utf-8")
    st = replay(read_log(path), ITEM)
    assert st.excluded_nodes == {"x"}
    path.write_text('{"action": "exclude_node"}\n', encoding="utf-8")
    with pytest.raises(ItemError, match="does not start with a 'load' entry"):
        replay(read_log(path), ITEM)


def test_only_figures_inside_the_folder_are_items(figs: Path, tmp_path: Path) -> None:
    outside = tmp_path / "secret.png"
    outside.write_bytes((figs / "retrieval.png").read_bytes())
    (figs / "linked.png").symlink_to(outside)
    (figs / "notes.txt").write_text("not a figure")
    st = VerifyStore(figs, tmp_path / "verified")
    assert st.items == ["encoder_decoder", "retrieval"]
    with pytest.raises(KeyError):
        st.session("../secret")


def test_time_counts_for_the_item_in_front_only(figs: Path, tmp_path: Path) -> None:
    clock = FakeClock()
    st = VerifyStore(figs, tmp_path / "verified", annotator="ann", clock=clock)
    st.session(ITEM, open_=True)
    clock.t += 30
    st.heartbeat(ITEM)
    st.session("retrieval", open_=True)  # ten minutes on the other item ...
    clock.t += 600
    st.heartbeat("retrieval")
    clock.t += 5
    assert st.session(ITEM, open_=True).time_spent_s == 30  # ... do not count for this one
    assert st.session("retrieval").time_spent_s == store_mod.IDLE_CAP_S


def test_a_malformed_parse_beside_the_figure_is_an_item_error(figs: Path, tmp_path: Path) -> None:
    (figs / "retrieval.json").write_text('{"id": "retrieval", "nodes": [{"id": "a"}], "edges": []}')
    st = VerifyStore(figs, tmp_path / "verified")
    with pytest.raises(ItemError, match=r"retrieval.json: \$.nodes\[0\]: 'label' is required"):
        st.session("retrieval")


def test_item_names_are_quoted_in_urls(figs: Path, tmp_path: Path) -> None:
    (figs / "retrieval.png").rename(figs / "my fig #1.png")
    (figs / "retrieval.json").rename(figs / "my fig #1.json")
    st = VerifyStore(figs, tmp_path / "verified")
    assert st.view("my fig #1")["figure"]["url"] == "/api/items/my%20fig%20%231/figure"
