"""``sciflow verify`` under bad input and faults (issue 19): deeply nested JSON in an edit body or
an audit log, a chunked body over the limit, node ids containing ``->``, temp files left by a
killed process, and file modes under the umask."""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from sciflow.cli import main
from sciflow.format.graph import DiagramGraph
from sciflow.verify.agreement import agreement
from sciflow.verify.edits import edge_id, replay
from sciflow.verify.files import TEMP_PATTERN, atomic_write_text, read_log, remove_stale_temp_files
from sciflow.verify.sample import write_sample_items
from sciflow.verify.server import MAX_BODY_BYTES, BackgroundServer, create_app
from sciflow.verify.store import ItemError, VerifyStore

ITEM = "encoder_decoder"
DEEP = "[" * 30_000 + "]" * 30_000  # 60 KB: under the body limit, far over any parser's depth


@pytest.fixture(scope="module")
def srv(tmp_path_factory) -> Iterator[BackgroundServer]:
    root = tmp_path_factory.mktemp("verify-faults")
    write_sample_items(root / "figs")
    with BackgroundServer(create_app(root / "figs", root / "verified", annotator="tester")) as s:
        s.root = root  # type: ignore[attr-defined]
        yield s


def raw_post(srv: BackgroundServer, path: str, body: bytes) -> tuple[int, dict]:
    """One POST with a Content-Length body; (status, JSON answer)."""
    with socket.create_connection((srv.host, srv.port), timeout=10) as s:
        s.sendall(
            f"POST {path} HTTP/1.1\r\nHost: {srv.host}:{srv.port}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode() + body
        )
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    head, _, payload = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(payload)


def log_actions(srv: BackgroundServer) -> list[str]:
    path = srv.root / "verified" / f"{ITEM}.log.jsonl"  # type: ignore[attr-defined]
    return [e["action"] for e in read_log(path)] if path.exists() else []


# ------------------------------------------------------------------- deeply nested JSON
@pytest.mark.parametrize(
    "body",
    [
        DEEP.encode(),
        json.dumps({"action": "add_node", "label": "x", "bbox": "@"}).replace('"@"', DEEP[20_000:-20_000]).encode(),
        ('{"action": ' * 5_000 + '"exclude_node"' + "}" * 5_000).encode(),
    ],
    ids=["lists", "inside-an-edit", "objects"],
)
def test_a_deeply_nested_edit_body_is_a_400_not_a_500(srv: BackgroundServer, body: bytes) -> None:
    assert len(body) <= MAX_BODY_BYTES
    raw_post(srv, f"/api/items/{ITEM}/edit", b'{"action": "open_item_first"}')  # load the item
    before = log_actions(srv)
    status, answer = raw_post(srv, f"/api/items/{ITEM}/edit", body)
    assert status == 400, answer
    assert answer["error"] == "the request is refused: nested deeper than 64 levels"
    assert raw_post(srv, f"/api/items/{ITEM}/save", body)[0] == 400
    assert log_actions(srv) == before  # nothing logged, the server still answers
    assert raw_post(srv, f"/api/items/{ITEM}/edit", b'{"action": "exclude_node", "id": "nope"}')[0] == 400


def _deep_log(path: Path) -> None:
    """An audit log whose first line is valid but whose second nests 100,000 lists."""
    first = {"action": "load", "item": path.name, "after": {"graph": {"id": "x", "nodes": [], "edges": []}}}
    path.write_text(json.dumps(first) + "\n" + "[" * 100_000 + "]" * 100_000 + "\n", encoding="utf-8")


def test_a_deeply_nested_audit_log_is_one_line_in_agreement_and_422_in_verify(tmp_path: Path, capsys) -> None:
    write_sample_items(tmp_path / "figs")
    out = tmp_path / "verified"
    st = VerifyStore(tmp_path / "figs", out, annotator="a")
    st.edit("retrieval", {"action": "exclude_node", "id": "q"})
    st.save("retrieval")
    out.joinpath(f"{ITEM}.log.jsonl").parent.mkdir(exist_ok=True)
    _deep_log(out / f"{ITEM}.log.jsonl")
    with pytest.raises(ItemError, match=r"encoder_decoder\.log\.jsonl: line 2: nested deeper than 64 levels"):
        read_log(out / f"{ITEM}.log.jsonl")
    rep = agreement(out)
    assert [i.item for i in rep.items] == ["retrieval"]  # the good item is still counted
    assert rep.errors == ((ITEM, f"{out / ITEM}.log.jsonl: line 2: nested deeper than 64 levels"),)
    assert main(["agreement", str(out)]) == 1
    text = capsys.readouterr()
    assert f"error: {ITEM}: {out / ITEM}.log.jsonl: line 2: nested deeper than 64 levels" in text.out.splitlines()
    assert "Traceback" not in text.err
    with BackgroundServer(create_app(tmp_path / "figs", out, annotator="a")) as s:
        conn = socket.create_connection((s.host, s.port), timeout=10)
        conn.sendall(f"GET /api/items/{ITEM} HTTP/1.1\r\nHost: {s.host}:{s.port}\r\nConnection: close\r\n\r\n".encode())
        answer = b""
        while chunk := conn.recv(65536):
            answer += chunk
        conn.close()
    assert answer.split()[1] == b"422" and b"nested deeper than 64 levels" in answer


def test_a_log_entry_with_values_of_the_wrong_kind_is_an_error_not_a_crash(tmp_path: Path) -> None:
    out = tmp_path / "v"
    out.mkdir()
    load = {"action": "load", "item": "x", "after": {"graph": {"id": "x", "nodes": [{"id": "a", "label": "A"}],
                                                               "edges": []}}}
    bad = {"action": "add_node", "element": "h1", "after": "not an object"}
    save = {"action": "save", "item_time_s": "soon"}
    (out / "x.log.jsonl").write_text("".join(json.dumps(e) + "\n" for e in (load, bad, save)))
    (out / "y.log.jsonl").write_text("".join(json.dumps(e) + "\n" for e in (load, save)))
    rep = agreement(out)
    assert [item for item, _ in rep.errors] == ["x", "y"]
    assert "malformed log entry 2 ('add_node')" in rep.errors[0][1]
    assert "unusable log: ValueError" in rep.errors[1][1] and str(out / "y.log.jsonl") in rep.errors[1][1]


# ------------------------------------------------------------------ body limit, chunked
def _chunked_post(srv: BackgroundServer, path: str, total: int, chunk: int = 4096) -> tuple[bytes, int, bool]:
    """Send ``total`` bytes as a chunked body, a chunk at a time, watching for an early answer.
    Returns (the answer, bytes sent when it came, whether the server then closed the connection)."""
    s = socket.create_connection((srv.host, srv.port), timeout=10)
    s.sendall(
        f"POST {path} HTTP/1.1\r\nHost: {srv.host}:{srv.port}\r\nContent-Type: application/json\r\n"
        "Transfer-Encoding: chunked\r\n\r\n".encode()
    )
    sent, answer = 0, b""
    s.settimeout(0.05)
    try:
        while sent < total:
            piece = b" " * min(chunk, total - sent)
            try:
                s.sendall(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
            except OSError:  # the server closed the connection: the answer is waiting
                break
            sent += len(piece)
            try:
                if data := s.recv(65536):
                    answer += data
                    break
            except (TimeoutError, BlockingIOError):
                pass
        else:
            s.sendall(b"0\r\n\r\n")
        s.settimeout(10)
        closed = False
        try:
            while True:
                data = s.recv(65536)
                if not data:
                    closed = True
                    break
                answer += data
        except OSError:
            closed = True
    finally:
        s.close()
    return answer, sent, closed


@pytest.mark.parametrize("route", ["edit", "save", "heartbeat"])
def test_a_chunked_body_over_the_limit_is_a_413_before_it_is_all_read(srv: BackgroundServer, route: str) -> None:
    before = log_actions(srv)
    answer, sent, closed = _chunked_post(srv, f"/api/items/{ITEM}/{route}", 200 * 1024)
    assert answer.split()[1] == b"413", answer[:200]
    assert b"request body too large" in answer and b"connection: close" in answer.lower()
    assert sent < 200 * 1024  # answered while most of the body was still unsent
    assert sent <= MAX_BODY_BYTES + 64 * 1024  # (within the socket buffers of the limit)
    assert closed
    assert log_actions(srv) == before


def test_a_chunked_body_under_the_limit_still_works(srv: BackgroundServer) -> None:
    body = json.dumps({"action": "exclude_node", "id": "x"}).encode() + b" " * 20_000
    s = socket.create_connection((srv.host, srv.port), timeout=10)
    chunks = b"".join(f"{len(body[i:i + 5000]):x}\r\n".encode() + body[i:i + 5000] + b"\r\n"
                      for i in range(0, len(body), 5000))
    s.sendall(
        f"POST /api/items/{ITEM}/edit HTTP/1.1\r\nHost: {srv.host}:{srv.port}\r\nContent-Type: application/json\r\n"
        "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n".encode() + chunks + b"0\r\n\r\n"
    )
    answer = b""
    while data := s.recv(65536):
        answer += data
    s.close()
    assert answer.split()[1] == b"200", answer[:300]
    assert log_actions(srv)[-1] == "exclude_node"
    raw_post(srv, f"/api/items/{ITEM}/edit", json.dumps({"action": "restore_node", "id": "x"}).encode())


# ------------------------------------------------------------------ node ids with "->"
ARROW_GRAPH = {
    "id": "arrows",
    "nodes": [
        {"id": "a->b", "label": "A to B", "bbox": [10, 10, 60, 40]},
        {"id": "c", "label": "C", "bbox": [100, 10, 150, 40]},
        {"id": "a", "label": "A", "bbox": [10, 100, 60, 140]},
        {"id": "b->c", "label": "B to C", "bbox": [100, 100, 150, 140]},
        {"id": "[x]", "label": "X", "bbox": [200, 100, 250, 140]},
    ],
    # "a->b" -> "c" and "a" -> "b->c" were both "a->b->c" before
    "edges": [{"source": "a->b", "target": "c"}, {"source": "a", "target": "b->c"}, {"source": "[x]", "target": "c"}],
}


def test_edge_ids_never_collide() -> None:
    pairs = [("a->b", "c"), ("a", "b->c"), ("a", "b"), ("a-", ">b"), ("a-", "b"), ("[x]", "c"), ('["a', 'b"]'),
             ("-", ">"), ("", "->"), ("->", "")]
    ids = [edge_id(s, t) for s, t in pairs]
    assert len(set(ids)) == len(ids), ids
    assert edge_id("a", "b") == "a->b"  # the readable form where it is unambiguous
    assert json.loads(edge_id("a->b", "c")) == ["a->b", "c"]


@pytest.fixture
def arrows(tmp_path: Path) -> VerifyStore:
    write_sample_items(tmp_path / "figs", ["retrieval"])
    (tmp_path / "figs" / "retrieval.png").rename(tmp_path / "figs" / "arrows.png")
    (tmp_path / "figs" / "retrieval.json").unlink()
    (tmp_path / "figs" / "arrows.json").write_text(json.dumps(ARROW_GRAPH))
    return VerifyStore(tmp_path / "figs", tmp_path / "verified", annotator="ann")


def test_ids_with_arrows_keep_both_edges_on_the_page_and_in_the_saved_graph(arrows: VerifyStore) -> None:
    view = arrows.view("arrows")
    edges = {(e["source"], e["target"]): e["id"] for e in view["edges"]}
    assert set(edges) == {("a->b", "c"), ("a", "b->c"), ("[x]", "c")}
    assert len(set(edges.values())) == 3
    arrows.edit("arrows", {"action": "exclude_edge", "id": edges[("a->b", "c")]})
    _, entry = arrows.edit("arrows", {"action": "add_edge", "source": "a->b", "target": "b->c"})
    assert entry["element"] == edge_id("a->b", "b->c")
    arrows.edit("arrows", {"action": "exclude_edge", "source": "[x]", "target": "c"})
    arrows.edit("arrows", {"action": "restore_edge", "id": edges[("[x]", "c")]})
    arrows.save("arrows")
    saved = DiagramGraph.load(arrows.graph_path("arrows"))
    assert {(e.source, e.target) for e in saved.edges} == {("a", "b->c"), ("[x]", "c"), ("a->b", "b->c")}
    ver = saved.meta["verification"]
    assert ver["excluded_edges"] == [edges[("a->b", "c")]]
    assert ver["counts"]["edges"] == {"tp": 2, "fp": 1, "fn": 1}
    # the log replays to the same state, and agreement counts every edge
    st = replay(read_log(arrows.log_path("arrows")), "arrows")
    assert st.counts() == ver["counts"]
    rep = agreement(arrows.out_dir)
    assert (rep.edges.tp, rep.edges.fp, rep.edges.fn) == (2, 1, 1)


def test_ids_with_arrows_over_http(arrows: VerifyStore) -> None:
    app = create_app(arrows.figures_dir, arrows.out_dir, store=arrows)
    with BackgroundServer(app) as s:
        status, view = _get(s, "/api/items/arrows")
        assert status == 200 and len({e["id"] for e in view["edges"]}) == 3
        eid = next(e["id"] for e in view["edges"] if e["source"] == "a")
        edit = json.dumps({"action": "exclude_edge", "id": eid}).encode()
        status, answer = raw_post(s, "/api/items/arrows/edit", edit)
        assert status == 200
        included = {(e["source"], e["target"]): e["included"] for e in answer["view"]["edges"]}
        assert included == {("a->b", "c"): True, ("a", "b->c"): False, ("[x]", "c"): True}


def _get(srv: BackgroundServer, path: str) -> tuple[int, dict]:
    with socket.create_connection((srv.host, srv.port), timeout=10) as s:
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: {srv.host}:{srv.port}\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    head, _, payload = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(payload)


def test_a_log_written_with_the_old_colliding_ids_still_replays(arrows: VerifyStore) -> None:
    """Before, both edges were ``"a->b->c"`` and the server kept the later one: an old log's
    ``exclude_edge "a->b->c"`` meant ``a -> b->c``; ``c->h1``-style ids of added edges were
    always rebuilt from their endpoints."""
    arrows.session("arrows")
    log = read_log(arrows.log_path("arrows"))
    log.append({"action": "exclude_edge", "element": "a->b->c", "before": {"included": True},
                "after": {"included": False}})
    log.append({"action": "add_edge", "element": "a->b->b->c", "before": None,
                "after": {"source": "a->b", "target": "b->c"}})
    log.append({"action": "save", "element": None})
    st = replay(log, "arrows")
    assert st.excluded_edges == {edge_id("a", "b->c")}
    assert set(st.added_edges) == {edge_id("a->b", "b->c")}
    assert st.counts()["edges"] == {"tp": 2, "fp": 1, "fn": 1}


# --------------------------------------------------------------- temp files and modes
def test_stale_temp_files_of_its_own_pattern_are_removed_at_start(tmp_path: Path) -> None:
    write_sample_items(tmp_path / "figs", ["retrieval"])
    out = tmp_path / "verified"
    out.mkdir()
    stale = [".retrieval.json.ab3_9xyz.tmp", ".retrieval.log.jsonl.q1w2e3r4.tmp", ".my fig.json.aaaaaaaa.tmp"]
    kept = ["retrieval.json.tmp", ".notes.tmp", "keep.tmp", ".retrieval.json.short.tmp", ".x.txt.abcdefgh.tmp",
            "retrieval.json"]
    for name in stale + kept:
        (out / name).write_text("{}")
    assert all(TEMP_PATTERN.match(n) for n in stale) and not any(TEMP_PATTERN.match(n) for n in kept)
    VerifyStore(tmp_path / "figs", out, annotator="a")
    assert sorted(p.name for p in out.iterdir()) == sorted(kept)
    assert remove_stale_temp_files(out) == []


def test_a_killed_writer_leaves_a_temp_file_the_next_start_removes(tmp_path: Path) -> None:
    write_sample_items(tmp_path / "figs", ["retrieval"])
    out = tmp_path / "verified"
    out.mkdir()
    # a process that dies (SIGKILL) between writing the temp file and renaming it
    child = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import os, time
        from sciflow.verify import files
        def hang(fd):
            print("writing", flush=True)
            time.sleep(60)
        files.os.fsync = hang
        files.atomic_write_text({str(out / 'retrieval.json')!r}, "{{}}")
    """)], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "writing"
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=10)
    finally:
        if child.poll() is None:
            child.kill()
    left = [p.name for p in out.iterdir()]
    assert len(left) == 1 and TEMP_PATTERN.match(left[0]), left
    VerifyStore(tmp_path / "figs", out, annotator="a")
    assert list(out.iterdir()) == []


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664), (0o027, 0o640)])
def test_files_are_written_with_the_umask_mode(tmp_path: Path, umask: int, mode: int) -> None:
    write_sample_items(tmp_path / "figs", ["retrieval"])
    old = os.umask(umask)
    try:
        atomic_write_text(tmp_path / "plain.json", "{}\n")
        st = VerifyStore(tmp_path / "figs", tmp_path / "verified", annotator="a")
        st.edit("retrieval", {"action": "exclude_node", "id": "q"})
        st.save("retrieval")
        atomic_write_text(tmp_path / "plain.json", "{}\n")  # replacing a file: the same rule
    finally:
        os.umask(old)
    for path in (tmp_path / "plain.json", st.graph_path("retrieval"), st.log_path("retrieval")):
        assert stat.S_IMODE(path.stat().st_mode) == mode, (path, oct(path.stat().st_mode))


def test_an_interrupted_write_leaves_no_temp_file(tmp_path: Path, monkeypatch) -> None:
    from sciflow.verify import files

    def interrupted(fd: int) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(files.os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        atomic_write_text(tmp_path / "g.json", "{}")
    assert list(tmp_path.iterdir()) == []


def test_serving_starts_without_stale_files_and_stops_cleanly(tmp_path: Path) -> None:
    """A real ``sciflow verify`` after a kill: the stale temp file is gone once it serves."""
    write_sample_items(tmp_path / "figs", ["retrieval"])
    out = tmp_path / "verified"
    out.mkdir()
    (out / ".retrieval.log.jsonl.zzzzzzzz.tmp").write_text("half")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "sciflow.cli", "verify", str(tmp_path / "figs"), "--out", str(out),
                             "--port", str(port)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                assert proc.poll() is None, proc.communicate()
                time.sleep(0.1)
        assert list(out.iterdir()) == []
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert f"open http://127.0.0.1:{port}/" in stdout
    assert "Traceback" not in stderr


CHROMIUM = "/usr/bin/chromium"


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} not found (apt-get install chromium)")
def test_ids_with_arrows_on_the_page(arrows: VerifyStore) -> None:
    """In a real browser: both edges shown (graph and list), the one asked for excluded, saved."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    app = create_app(arrows.figures_dir, arrows.out_dir, store=arrows)
    json_id = edge_id("a", "b->c")
    with BackgroundServer(app) as srv, sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                                     args=["--no-sandbox", "--disable-gpu", "--no-first-run"])
        page = browser.new_page(viewport={"width": 1400, "height": 850})
        page.set_default_timeout(15_000)
        problems: list[str] = []
        page.on("pageerror", lambda e: problems.append(str(e)))
        page.goto(srv.url)
        page.wait_for_selector('body[data-loaded="arrows"]')
        assert page.evaluate("window.sciflowVerify.cy.edges().length") == 3
        assert page.locator('#edge-list tr[data-kind="edge"]').count() == 3
        assert page.evaluate("id => window.sciflowVerify.cy.getElementById(id).length", "e:" + json_id) == 1
        row = f"tr[data-kind=\"edge\"][data-id='{json_id}']"
        page.click(f"{row} button")
        page.wait_for_selector(f"{row}.excluded")
        assert "excluded" not in (page.get_attribute('tr[data-kind="edge"][data-id=\'["a->b", "c"]\']', "class") or "")
        page.click("#save")
        page.wait_for_selector("#save-state.saved-flag")
        browser.close()
    saved = DiagramGraph.load(arrows.graph_path("arrows"))
    assert {(e.source, e.target) for e in saved.edges} == {("a->b", "c"), ("[x]", "c")}
    assert [e["element"] for e in read_log(arrows.log_path("arrows")) if e["action"] == "exclude_edge"] == [json_id]
    assert problems == []
