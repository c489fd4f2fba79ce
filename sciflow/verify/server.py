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

Safety: :func:`serve` binds to a loopback address only (127.0.0.1 by default; any other host is
refused with :class:`ServeError`: the page is for local use, reach it from elsewhere through an SSH
tunnel). Every request must carry a Host header naming this server (a loopback name or one of
``allowed_hosts``) at its port, which defeats DNS rebinding. Writes (POST) must be same-origin:
an ``Origin`` header, when sent, must equal ``http(s)://<Host>``, ``Sec-Fetch-Site`` (when sent)
must be ``same-origin`` or ``none``, and the body must be ``application/json`` (which a cross-site
form cannot send without a CORS preflight this server never grants). A write's body is read into
memory up to ``MAX_BODY_BYTES`` (64 KiB) whatever its framing (``Content-Length`` or chunked):
one byte more is a 413 and the connection is closed. Only files under the package's static folder
and the figures of known items are served; anything else, path traversal included, is a 404.
"""

from __future__ import annotations

import errno
import json
import logging
import socket
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

from sciflow.verify.files import JSONRefused, parse_json_text
from sciflow.verify.store import IMAGE_SUFFIXES, EditError, ItemError, VerifyStore

log = logging.getLogger(__name__)

STATIC_DIR = (Path(__file__).parent / "static").resolve()
LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})
MAX_BODY_BYTES = 64 * 1024
UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'none'"
)


class ServeError(RuntimeError):
    """The page cannot be served as asked (a non-loopback host, a busy port, no figures); the
    message is one line for the person who ran ``sciflow verify``."""


class BodyTooLarge(EditError):
    """A request body over :data:`MAX_BODY_BYTES` (answered 413)."""


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    headers = {"Cache-Control": "no-store", **(headers or {})}
    return JSONResponse({"error": message}, status_code=status, headers=headers)


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
        if problem is None and scope.get("method") in UNSAFE_METHODS:
            body = await self._read_body(receive)
            if body is None:  # the client went away mid-body
                return
            if len(body) > MAX_BODY_BYTES:
                problem = 413, "request body too large"
            else:
                receive = self._replay(body, receive)
        if problem is not None:
            status, message = problem
            log.warning("refused %s %s: %s", scope.get("method"), scope.get("path"), message)
            close = {"Connection": "close"} if status == 413 else None  # the rest of the body stays unread
            await self._secure(_error(status, message, close))(scope, receive, send)
            return
        await self.app(scope, receive, self._with_headers(scope, send))

    @staticmethod
    async def _read_body(receive: Receive) -> bytes | None:
        """The request body, read chunk by chunk and never more than ``MAX_BODY_BYTES + 1``
        bytes of it (a chunked body has no Content-Length to check up front). None when the
        client disconnects first."""
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            if message["type"] != "http.request":
                continue
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > MAX_BODY_BYTES:
                return b"".join(chunks) + chunk[: MAX_BODY_BYTES + 1 - (size - len(chunk))]
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)

    @staticmethod
    def _replay(body: bytes, receive: Receive) -> Receive:
        """A ``receive`` that hands the app the body already read, then waits on the real one."""
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        return replay

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
    them). ``allowed_hosts``: the host names the Host header may carry (default: the loopback
    names). The store is at ``app.state.store``.
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
        body = bytearray()
        async for chunk in request.stream():  # bounded here too, not only by the middleware
            body += chunk
            if len(body) > MAX_BODY_BYTES:
                raise BodyTooLarge("request body too large")
        if not body:
            return {}
        try:
            return parse_json_text(bytes(body), "<request body>")
        except JSONRefused as exc:
            raise EditError(f"the request is refused: {exc}") from exc
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise EditError(f"the request is not valid JSON: {exc}") from exc
        except RecursionError as exc:
            raise EditError("the request is refused: nested too deeply") from exc

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
        except BodyTooLarge as exc:
            return _error(413, str(exc), {"Connection": "close"})
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
        except BodyTooLarge as exc:
            return _error(413, str(exc), {"Connection": "close"})
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


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and the loopback addresses (``127.0.0.0/8``, ``::1``)."""
    import ipaddress

    name = host.strip().strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def check_host(host: str, port: int = 8765) -> None:
    """:class:`ServeError` unless ``host`` is a loopback address (the page is for local use:
    anyone who reached it could edit the graphs under the annotator's name)."""
    if not is_loopback(host):
        raise ServeError(
            f"--host {host} is not a loopback address: the verification page is for local use only "
            f"(127.0.0.1, localhost or ::1); to open it from another machine, forward the port: "
            f"ssh -L {port}:127.0.0.1:{port} <this machine>"
        )


def _bind(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port`` (not yet listening), or :class:`ServeError` saying why not
    (a busy port first of all), before anything is printed or written."""
    name = host.strip().strip("[]")
    family = socket.AF_INET6 if ":" in name else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn does: a quick restart works
        sock.bind((name, port))
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise ServeError(
                f"port {port} on {host} is already in use (another sciflow verify?); choose another with --port"
            ) from exc
        raise ServeError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from exc
    return sock


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
    """Serve the verification page until interrupted (blocking), on a loopback address only.

    Raises :class:`ServeError` (one line, before anything is printed) for a host that is not a
    loopback address (``0.0.0.0`` included: the page is for local use; reach it from another
    machine through an SSH tunnel), a port already in use, or a figures folder without figures;
    ``FileNotFoundError`` for a figures folder that does not exist. ``allowed_hosts``: more names
    the Host header may carry besides the loopback names (aliases of 127.0.0.1)."""
    import uvicorn

    check_host(host, port)
    hosts = set(LOOPBACK_NAMES) | {host.strip().strip("[]").lower()} | set(allowed_hosts or ())
    sock = _bind(host, port)
    port = sock.getsockname()[1]  # the one the system chose for port 0
    try:
        app = create_app(figures_dir, out_dir, annotator, config=config, allowed_hosts=hosts)
        store: VerifyStore = app.state.store
        if not store.items:
            raise ServeError(f"no figures in {store.figures_dir} (expected {', '.join(IMAGE_SUFFIXES)} files)")
        shown = f"[{host.strip('[]')}]" if ":" in host else host
        print(f"sciflow verify: {len(store.items)} figures from {store.figures_dir}")
        print(f"  writing to {store.out_dir} as annotator {store.annotator!r}")
        print(f"  open http://{shown}:{port}/  (Ctrl+C to stop)", flush=True)
        server = uvicorn.Server(uvicorn.Config(app, host=host.strip("[]"), port=port, log_level=log_level))
        server.run(sockets=[sock])
    finally:
        sock.close()


class BackgroundServer:
    """Run an app with uvicorn in a thread (tests, notebooks)::

    with BackgroundServer(create_app(figs, out)) as srv:
        urllib.request.urlopen(srv.url + "api/items")
    """

    def __init__(self, app: ASGIApp, host: str = "127.0.0.1", port: int = 0):
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
