"""The local web page of ``sciflow verify``: a Starlette app served by uvicorn.

Routes (all JSON except the page, its static files and the figures)::

    GET  /                               the page (static/index.html)
    GET  /static/<file>                  files under sciflow/verify/static only
    GET  /api/items                      items, their status, progress
    GET  /api/items/<item>[?open=1]      one item: figure, nodes, edges, counts, time (open=1 logs an 'open')
    GET  /api/items/<item>/figure        the figure file of a known item
    POST /api/items/<item>/edit          one edit (JSON, see sciflow.verify.store); 400 with a message if invalid
    POST /api/items/<item>/save          write the verified graph
    POST /api/items/<item>/heartbeat     counts annotation time while the page is in front

Safety: :func:`serve` binds to 127.0.0.1 unless told otherwise. Every request must carry a Host
header naming this server (a loopback name, the bound host or one of ``allowed_hosts``) at its port,
which defeats DNS rebinding. Writes (POST) must be same-origin: an ``Origin`` header, when sent,
must equal ``http(s)://<Host>``, ``Sec-Fetch-Site`` (when sent) must be ``same-origin`` or ``none``,
and the body must be ``application/json`` (which a cross-site form cannot send without a CORS
preflight this server never grants). Only files under the package's static folder and the figures
of known items are served; anything else, path traversal included, is a 404.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from sciflow.verify.store import EditError, ItemError, VerifyStore

log = logging.getLogger(__name__)

STATIC_DIR = (Path(__file__).parent / "static").resolve()
LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})
MAX_BODY_BYTES = 64 * 1024
UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'none'"
)


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status, headers={"Cache-Control": "no-store"})


def _split_host(value: str) -> tuple[str, int | None]:
    """``'127.0.0.1:8765'`` -> ``('127.0.0.1', 8765)``; ``'[::1]:80'`` -> ``('::1', 80)``."""
    value = value.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        name, rest = value[1:end], value[end + 1 :]
        port = rest[1:] if rest.startswith(":") else ""
    elif value.count(":") == 1:
        name, port = value.split(":")
    else:
        name, port = value, ""
    try:
        return name, (int(port) if port else None)
    except ValueError:
        return name, -1


class GuardMiddleware:
    """Host check on every request, same-origin check on writes, security headers on every answer."""

    def __init__(self, app: ASGIApp, hosts: Iterable[str] | None):
        self.app = app
        self.hosts = None if hosts is None else frozenset(h.lower().strip("[]") for h in hosts)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        problem = self._check(scope, headers)
        if problem is not None:
            status, message = problem
            log.warning("refused %s %s: %s", scope.get("method"), scope.get("path"), message)
            await self._secure(_error(status, message))(scope, receive, send)
            return
        await self.app(scope, receive, self._with_headers(scope, send))

    def _check(self, scope: Scope, headers: dict[str, str]) -> tuple[int, str] | None:
        host = headers.get("host")
        if not host:
            return 400, "missing Host header"
        name, port = _split_host(host)
        server = scope.get("server")
        if self.hosts is not None and name not in self.hosts:
            return 403, f"host {host!r} is not served here (allowed: {', '.join(sorted(self.hosts))})"
        if server and server[1] and port is not None and port != server[1]:
            return 403, f"host {host!r} names another port than this server's ({server[1]})"
        if port == -1:
            return 400, f"malformed Host header {host!r}"
        site = headers.get("sec-fetch-site")
        if scope.get("method") not in UNSAFE_METHODS:
            # reads with side effects (opening an item logs it, may run the parser): same-origin too
            if scope.get("path", "").startswith("/api/") and site not in (None, "same-origin", "none"):
                return 403, f"cross-origin request refused (Sec-Fetch-Site: {site})"
            return None
        if site is not None and site not in ("same-origin", "none"):
            return 403, f"cross-origin write refused (Sec-Fetch-Site: {site})"
        origin = headers.get("origin")
        if origin is not None:
            parts = urlsplit(origin)
            if parts.scheme not in ("http", "https") or parts.netloc.lower() != host.strip().lower():
                return 403, f"cross-origin write refused: Origin {origin!r} is not this page ({host})"
        ctype = headers.get("content-type", "").split(";")[0].strip().lower()
        if ctype != "application/json":
            return 415, "writes must be sent as application/json"
        try:
            if int(headers.get("content-length", "0")) > MAX_BODY_BYTES:
                return 413, "request body too large"
        except ValueError:
            return 400, "malformed Content-Length"
        return None

    @staticmethod
    def _secure(response: Response) -> Response:
        response.headers["Content-Security-Policy"] = CSP
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["X-Frame-Options"] = "DENY"
        response.headers["Referrer-Policy"] = "no-referrer"
        return response

    @staticmethod
    def _with_headers(scope: Scope, send: Send) -> Send:
        is_api = scope.get("path", "").startswith("/api/")

        async def wrapped(message: Message) -> None:
            if message["type"] == "http.response.start":
                extra = [
                    (b"content-security-policy", CSP.encode()),
                    (b"x-content-type-options", b"nosniff"),
                    (b"x-frame-options", b"DENY"),
                    (b"referrer-policy", b"no-referrer"),
                ]
                if is_api:
                    extra.append((b"cache-control", b"no-store"))
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        return wrapped


def create_app(
    figures_dir: str | Path,
    out_dir: str | Path,
    annotator: str | None = None,
    *,
    config: Any = None,
    allowed_hosts: Iterable[str] | None = None,
    store: VerifyStore | None = None,
) -> Starlette:
    """The verification app for the figures in ``figures_dir``, writing to ``out_dir``.

    ``annotator`` names the person in the audit log (default: the login name); ``config`` is the
    :class:`sciflow.config.Config` for the parser (used only for figures without a parse beside
    them). ``allowed_hosts``: the host names the Host header may carry (default: loopback names);
    ``None`` after :func:`serve` widened it means any. The store is at ``app.state.store``.
    """
    store = store or VerifyStore(figures_dir, out_dir, annotator=annotator, config=config)
    hosts = set(LOOPBACK_NAMES) if allowed_hosts is None else set(allowed_hosts)

    def item_or_404(request: Request) -> str | None:
        item = request.path_params["item"]
        return item if item in store.figures else None

    async def index(request: Request) -> Response:
        return FileResponse(STATIC_DIR / "index.html", media_type="text/html; charset=utf-8")

    async def static(request: Request) -> Response:
        rel = request.path_params["path"]
        if "\x00" in rel or "\\" in rel:
            return _error(404, "not found")
        target = (STATIC_DIR / rel).resolve()
        if not target.is_relative_to(STATIC_DIR) or not target.is_file():
            return _error(404, "not found")
        return FileResponse(target)

    async def items(request: Request) -> Response:
        return JSONResponse(await run_in_threadpool(store.listing))

    async def item_view(request: Request) -> Response:
        item = item_or_404(request)
        if item is None:
            return _error(404, "unknown item")
        opening = request.query_params.get("open") == "1"

        def work() -> dict[str, Any]:
            return store.view(item, store.session(item, open_=opening))

        try:
            return JSONResponse(await run_in_threadpool(work))
        except ItemError as exc:
            return _error(422, str(exc))

    async def figure(request: Request) -> Response:
        item = item_or_404(request)
        if item is None:
            return _error(404, "unknown item")
        path = store.figures[item].resolve()
        if not path.is_relative_to(store.figures_dir) or not path.is_file():
            return _error(404, "not found")
        return FileResponse(path)

    async def read_json(request: Request) -> Any:
        body = await request.body()
        if len(body) > MAX_BODY_BYTES:
            raise EditError("request body too large")
        if not body:
            return {}
        try:
            return json.loads(body)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise EditError(f"the request is not valid JSON: {exc}") from exc

    async def edit(request: Request) -> Response:
        item = item_or_404(request)
        if item is None:
            return _error(404, "unknown item")
        try:
            payload = await read_json(request)

            def work() -> dict[str, Any]:
                s, entry = store.edit(item, payload)
                return {"entry": entry, "view": store.view(item, s)}

            return JSONResponse(await run_in_threadpool(work))
        except EditError as exc:
            return _error(400, str(exc))
        except ItemError as exc:
            return _error(422, str(exc))

    async def save(request: Request) -> Response:
        item = item_or_404(request)
        if item is None:
            return _error(404, "unknown item")
        try:
            await read_json(request)

            def work() -> dict[str, Any]:
                s = store.save(item)
                return {"saved": str(store.graph_path(item).name), "view": store.view(item, s)}

            return JSONResponse(await run_in_threadpool(work))
        except EditError as exc:
            return _error(400, str(exc))
        except (ItemError, OSError) as exc:
            return _error(500, f"could not save: {exc}")

    async def heartbeat(request: Request) -> Response:
        item = item_or_404(request)
        if item is None:
            return _error(404, "unknown item")
        try:
            s = await run_in_threadpool(store.heartbeat, item)
        except ItemError as exc:
            return _error(422, str(exc))
        return JSONResponse({"time_spent_s": round(s.time_spent_s, 1)})

    async def not_found(request: Request) -> Response:
        return _error(404, "not found")

    routes = [
        Route("/", index),
        Route("/static/{path:path}", static),
        Route("/api/items", items),
        Route("/api/items/{item}", item_view),
        Route("/api/items/{item}/figure", figure),
        Route("/api/items/{item}/edit", edit, methods=["POST"]),
        Route("/api/items/{item}/save", save, methods=["POST"]),
        Route("/api/items/{item}/heartbeat", heartbeat, methods=["POST"]),
        Route("/{rest:path}", not_found),
    ]
    app = Starlette(routes=routes, middleware=[Middleware(GuardMiddleware, hosts=hosts)])
    app.state.store = store
    return app


def _is_loopback(host: str) -> bool:
    return host.strip("[]").lower() in LOOPBACK_NAMES or host.startswith("127.")


def serve(
    figures_dir: str | Path,
    out_dir: str | Path,
    host: str = "127.0.0.1",
    port: int = 8765,
    annotator: str | None = None,
    *,
    config: Any = None,
    allowed_hosts: Iterable[str] | None = None,
    log_level: str = "warning",
) -> None:
    """Serve the verification page until interrupted (blocking). Binds to 127.0.0.1 unless ``host``
    says otherwise; a non-loopback host also accepts that name in the Host header."""
    import uvicorn

    hosts = set(allowed_hosts) if allowed_hosts is not None else set(LOOPBACK_NAMES)
    if not _is_loopback(host):
        log.warning("serving on %s: anyone who can reach this address can edit the graphs", host)
        if host not in ("0.0.0.0", "::"):
            hosts.add(host)
        elif allowed_hosts is None:
            hosts = None  # type: ignore[assignment]  # all interfaces: any name, writes still same-origin
    app = create_app(figures_dir, out_dir, annotator, config=config, allowed_hosts=hosts)
    store: VerifyStore = app.state.store
    shown = f"[{host}]" if ":" in host else host
    print(f"sciflow verify: {len(store.items)} figures from {store.figures_dir}")
    print(f"  writing to {store.out_dir} as annotator {store.annotator!r}")
    print(f"  open http://{shown}:{port}/  (Ctrl+C to stop)")
    uvicorn.run(app, host=host, port=port, log_level=log_level)


class BackgroundServer:
    """Run an app with uvicorn in a thread (tests, notebooks)::

    with BackgroundServer(create_app(figs, out)) as srv:
        urllib.request.urlopen(srv.url + "api/items")
    """

    def __init__(self, app: ASGIApp, host: str = "127.0.0.1", port: int = 0):
        import socket

        import uvicorn

        if port == 0:
            with socket.socket() as s:
                s.bind((host, 0))
                port = s.getsockname()[1]
        self.host, self.port = host, port
        self.url = f"http://{host}:{port}/"
        self.server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="off"))
        self.thread = threading.Thread(target=self.server.run, name="sciflow-verify", daemon=True)

    def __enter__(self) -> BackgroundServer:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"the verification server did not start on {self.url}")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
