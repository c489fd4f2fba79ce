"""The verification server's safety: only its own files, same-origin writes, validated edits, offline page."""

from __future__ import annotations

import hashlib
import http.client
import inspect
import json
import re
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from sciflow.verify import server as server_mod
from sciflow.verify.sample import write_sample_items
from sciflow.verify.server import STATIC_DIR, BackgroundServer, create_app, serve
from sciflow.verify.store import read_log

ITEM = "encoder_decoder"


@pytest.fixture(scope="module")
def srv(tmp_path_factory) -> Iterator[BackgroundServer]:
    root = tmp_path_factory.mktemp("verify-http")
    write_sample_items(root / "figs")
    (root / "secret.txt").write_text("TOP SECRET")
    with BackgroundServer(create_app(root / "figs", root / "verified", annotator="tester")) as s:
        s.root = root  # type: ignore[attr-defined]
        yield s


def request(
    srv: BackgroundServer, method: str, path: str, body: object = None, headers: dict | None = None
) -> tuple[int, dict, bytes]:
    """A raw request: http.client sends the path exactly as given (no '..' clean-up)."""
    conn = http.client.HTTPConnection(srv.host, srv.port, timeout=10)
    h = {"Host": f"{srv.host}:{srv.port}"}
    data = None
    if body is not None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        h["Content-Type"] = "application/json"
    h.update(headers or {})
    conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
    for k, v in h.items():
        conn.putheader(k, v)
    if data is not None:
        conn.putheader("Content-Length", str(len(data)))
    conn.endheaders(data)
    r = conn.getresponse()
    out = r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    conn.close()
    return out


def log_actions(srv: BackgroundServer) -> list[str]:
    path = srv.root / "verified" / f"{ITEM}.log.jsonl"  # type: ignore[attr-defined]
    return [e["action"] for e in read_log(path)] if path.exists() else []


def test_serves_the_page_its_static_files_and_known_figures(srv: BackgroundServer) -> None:
    status, headers, body = request(srv, "GET", "/")
    assert status == 200 and b"sciflow verify" in body
    assert "default-src 'self'" in headers["content-security-policy"]
    assert headers["x-frame-options"] == "DENY"
    assert request(srv, "GET", "/static/app.js")[0] == 200
    status, _, body = request(srv, "GET", "/static/vendor/cytoscape.min.js")
    assert status == 200 and len(body) > 100_000
    status, headers, body = request(srv, "GET", f"/api/items/{ITEM}/figure")
    assert status == 200 and headers["content-type"] == "image/png" and body[:4] == b"\x89PNG"
    status, headers, body = request(srv, "GET", "/api/items")
    assert status == 200 and headers["cache-control"] == "no-store"
    assert json.loads(body)["total"] == 2


@pytest.mark.parametrize(
    "path",
    [
        "/static/../server.py",
        "/static/../../../pyproject.toml",
        "/static/%2e%2e/%2e%2e/graph.py",
        "/static/..%2f..%2fgraph.py",
        "/static/vendor/../../store.py",
        "/static/vendor/%2e%2e/%2e%2e/%2e%2e/%2e%2e/secret.txt",
        "/static//etc/passwd",
        "/static/%2fetc%2fpasswd",
        "/static/..%5c..%5cstore.py",
        "/static/app.js%00.png",
        "/api/items/..%2f..%2fsecret.txt/figure",
        "/api/items/../secret.txt",
        "/api/items/%2e%2e/figure",
        "/api/items/secret/figure",
        "/../../etc/passwd",
        "/secret.txt",
        "/figs/encoder_decoder.json",
    ],
)
def test_path_traversal_gets_404(srv: BackgroundServer, path: str) -> None:
    status, _, body = request(srv, "GET", path)
    assert status == 404, (path, status, body[:200])
    assert b"TOP SECRET" not in body and b"root:" not in body and b"import" not in body


def test_wrong_host_header_is_refused(srv: BackgroundServer) -> None:
    # DNS rebinding: a page on evil.example resolving to 127.0.0.1 sends Host: evil.example
    status, _, body = request(srv, "GET", "/api/items", headers={"Host": f"evil.example:{srv.port}"})
    assert status == 403 and b"not served here" in body
    status, _, _ = request(srv, "GET", "/api/items", headers={"Host": f"127.0.0.1:{srv.port + 1}"})
    assert status == 403
    assert request(srv, "GET", "/api/items", headers={"Host": f"localhost:{srv.port}"})[0] == 200


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "http://evil.example"},
        {"Origin": "null"},
        {"Origin": "http://127.0.0.1:1"},
        {"Sec-Fetch-Site": "cross-site"},
        {"Sec-Fetch-Site": "same-site"},
        {"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"},
    ],
)
def test_cross_origin_writes_are_refused(srv: BackgroundServer, headers: dict) -> None:
    request(srv, "GET", f"/api/items/{ITEM}")  # make sure the item exists
    before = log_actions(srv)
    for path, body in (
        (f"/api/items/{ITEM}/edit", {"action": "exclude_node", "id": "x"}),
        (f"/api/items/{ITEM}/save", {}),
    ):
        status, _, answer = request(srv, "POST", path, body, headers)
        assert status == 403 and b"cross-origin" in answer
    assert log_actions(srv) == before
    assert not (srv.root / "verified" / f"{ITEM}.json").exists()  # type: ignore[attr-defined]


def test_cross_site_reads_of_the_api_are_refused(srv: BackgroundServer) -> None:
    status, _, _ = request(srv, "GET", f"/api/items/{ITEM}?open=1", headers={"Sec-Fetch-Site": "cross-site"})
    assert status == 403
    status, _, _ = request(srv, "GET", f"/api/items/{ITEM}/figure", headers={"Sec-Fetch-Site": "cross-site"})
    assert status == 403
    assert request(srv, "GET", "/api/items", headers={"Sec-Fetch-Site": "same-origin"})[0] == 200


def test_a_cross_site_form_post_is_refused(srv: BackgroundServer) -> None:
    form = b"action=exclude_node&id=x"
    status, _, body = request(
        srv,
        "POST",
        f"/api/items/{ITEM}/edit",
        form,
        {"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert status == 415 and b"application/json" in body
    assert request(srv, "POST", f"/api/items/{ITEM}/edit", b"x" * 70_000)[0] == 413


def test_invalid_edits_get_400_with_the_reason(srv: BackgroundServer) -> None:
    origin = {"Origin": f"http://{srv.host}:{srv.port}", "Sec-Fetch-Site": "same-origin"}
    cases = [
        ({"action": "exclude_node", "id": "nope"}, "unknown node 'nope'"),
        ({"action": "add_edge", "source": "b", "target": "b"}, "self-link"),
        ({"action": "add_edge", "source": "a", "target": "b"}, "already exists (duplicate edge)"),
        ({"action": "add_edge", "source": "a", "target": "ghost"}, "unknown node 'ghost'"),
        ({"action": "relabel", "id": "a"}, "unknown action 'relabel'"),
    ]
    before = log_actions(srv)
    for edit, message in cases:
        status, _, body = request(srv, "POST", f"/api/items/{ITEM}/edit", edit, origin)
        assert status == 400, body
        assert message in json.loads(body)["error"]
    status, _, body = request(srv, "POST", f"/api/items/{ITEM}/edit", b"{not json", origin)
    assert status == 400 and b"not valid JSON" in body
    assert log_actions(srv) == before
    assert request(srv, "POST", "/api/items/ghost/edit", {"action": "exclude_node", "id": "a"}, origin)[0] == 404
    # a valid same-origin edit goes through and is logged
    status, _, body = request(srv, "POST", f"/api/items/{ITEM}/edit", {"action": "exclude_edge", "id": "c->d"}, origin)
    assert status == 200 and json.loads(body)["entry"]["element"] == "c->d"
    assert log_actions(srv)[-1] == "exclude_edge"
    request(srv, "POST", f"/api/items/{ITEM}/edit", {"action": "restore_edge", "id": "c->d"}, origin)


def test_the_page_works_offline_with_the_vendored_graph_library() -> None:
    html = (STATIC_DIR / "index.html").read_text()
    refs = re.findall(r'(?:src|href)="([^"]*)"', html)
    assert refs and all(r.startswith("/static/") or r.startswith("data:") for r in refs), refs
    js = (STATIC_DIR / "app.js").read_text().replace("http://www.w3.org/2000/svg", "")  # a namespace name
    assert "http://" not in js and "https://" not in js
    vendor = STATIC_DIR / "vendor"
    versions = (vendor / "VERSIONS.txt").read_text()
    assert "cytoscape 3.35.0" in versions
    digest = hashlib.sha256((vendor / "cytoscape.min.js").read_bytes()).hexdigest()
    assert f"sha256 of cytoscape.min.js: {digest}" in versions
    assert (
        "MIT" in (vendor / "cytoscape.LICENSE").read_text()
        or "Permission is hereby granted" in (vendor / "cytoscape.LICENSE").read_text()
    )


def test_serve_binds_to_loopback_by_default(tmp_path: Path, monkeypatch) -> None:
    assert inspect.signature(serve).parameters["host"].default == "127.0.0.1"
    write_sample_items(tmp_path / "figs", ["retrieval"])
    seen: dict = {}
    import uvicorn

    def run(self, sockets) -> None:  # the socket serve() bound, handed to uvicorn
        seen.update(host=self.config.host, port=self.config.port, bound=sockets[0].getsockname()[:2])

    monkeypatch.setattr(uvicorn.Server, "run", run)
    port = inspect.signature(serve).parameters["port"].default
    assert port == 8765
    with socket.socket() as s:  # a free port: 8765 may be taken on the test machine
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    serve(tmp_path / "figs", tmp_path / "out", annotator="a", port=port)
    assert seen == {"host": "127.0.0.1", "port": port, "bound": ("127.0.0.1", port)}
    assert server_mod._split_host("[::1]:8765") == ("::1", 8765)
