"""The dashboard's web app (Starlette): the pages, the JSON API, the live event stream, and the guard
every request passes first.

The guard (:class:`Guard`, plain ASGI, so that it covers the event stream too) refuses with a 403 that
says how to open the dashboard (the address its command printed, :data:`FORBIDDEN`):

- a request without the token: ``?token=`` or the cookie the first page load set (HttpOnly,
  SameSite=Strict, named after the port, since cookies do not tell ports apart);
- a ``Host`` that is not the address the server is bound to (a DNS rebinding page names its own host);
- an ``Origin`` that is not the page's own (another site's script), or a cross-site ``Sec-Fetch-Site``;
- an action (``POST``) without the ``Origin`` or without the token in ``X-Sidelight-Token`` (CSRF).

Within it, :class:`Limits` gives each request but the event stream
:data:`~sidelight.dashboard.data.REQUEST_SECONDS` to be answered (else a 503), and a 503 when the
process can open no file for lack of descriptors (said once in the log, :class:`~.data.Alarm`). A
session is only ever one of the rows (:meth:`Board.session <sidelight.dashboard.data.Board.session>`):
anything else is the same 404.

The pages are Jinja2 templates with autoescape; the script sets text with ``textContent`` only. Every
asset, the chart library included (uPlot, MIT, in ``static/vendor``), is served from the package.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
from http.cookies import SimpleCookie
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import parse_qs, quote, urlencode

import anyio.to_thread
from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.applications import Starlette
from starlette.responses import (
    HTMLResponse,
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    StreamingResponse,
)
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from sidelight.dashboard.data import (
    CATEGORIES_SHOWN,
    COLLISION_SESSIONS_SHOWN,
    COLLISIONS_SHOWN,
    REQUEST_SECONDS,
    Alarm,
    Board,
    check_descriptors,
    out_of_descriptors,
)

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable, Iterable

    from starlette.requests import Request
    from starlette.types import ASGIApp, Receive, Scope, Send

    from sidelight.config import Settings
    from sidelight.plugins import Plugins

__all__ = ["LOOPBACK_NAMES", "TOKEN_HEADER", "Guard", "Limits", "allowed_hosts", "create_app"]

logger = logging.getLogger("sidelight")

HERE: Final = Path(__file__).resolve().parent
#: The header an action carries the token in (a form or a link from another site cannot set it).
TOKEN_HEADER: Final = "X-Sidelight-Token"
#: The names of the loopback interface a browser may use for a server bound to it.
LOOPBACK_NAMES: Final = ("127.0.0.1", "localhost", "[::1]")
#: How often the event stream looks for changes: a look is one native stat of the files the rows come
#: from (:meth:`Board.refresh_soon`), cheap enough at a thousand sessions to keep the latency low.
POLL_SECONDS: Final = 0.25
#: A comment line this often keeps proxies and the browser from closing a quiet stream.
KEEPALIVE_SECONDS: Final = 15.0
#: The collisions are looked at again at most this often while sessions change.
COLLISIONS_SECONDS: Final = 5.0

SECURITY_HEADERS: Final = {
    "content-security-policy": "default-src 'none'; script-src 'self'; style-src 'self'; "
    "img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
    "cache-control": "no-store",
}


#: The overview's sortable columns (``?sort=KEY``, the most or newest first), and how each sorts.
SORT_COLUMNS: Final = {"last": "last activity", "messages": "messages", "tools": "tools"}
#: What each sorts by (descending; equal rows keep ``sidelight status``'s order). ISO times sort as text.
SORT_KEYS: Final[dict[str, Callable[[dict[str, Any]], Any]]] = {
    "last": lambda row: row["last_activity"] or "",
    "messages": lambda row: row["messages"],
    "tools": lambda row: sum(row["tools"].values()),
}


def _matches(row: dict[str, Any], chosen: dict[str, str]) -> bool:
    """Whether the overview's filters (agent, state, project, and the search over name and project) keep
    ``row``, as the page's script judges them."""
    for name in ("agent", "state", "project"):
        if chosen[name] and row[name] != chosen[name]:
            return False
    query = chosen["q"].strip().casefold()
    return not query or query in row["name"].casefold() or query in row["project"].casefold()


def allowed_hosts(host: str, port: int) -> frozenset[str]:
    """The ``Host`` headers a server bound to ``host``:``port`` answers: ``host:port``, and every loopback
    name with the port when ``host`` is a loopback address."""
    shown = f"[{host}]" if ":" in host and not host.startswith("[") else host
    names = {shown}
    if shown in LOOPBACK_NAMES or host in ("::1", "localhost") or host.startswith("127."):
        names.update(LOOPBACK_NAMES)
    return frozenset(f"{name}:{port}" for name in names)


#: What a refused request reads: how to open the dashboard, with its token.
FORBIDDEN: Final = (
    "forbidden: this dashboard answers only with its token. Open the address 'sidelight dashboard' "
    "printed when it started (http://HOST:PORT/?token=...); a dashboard started again has a new token.\n"
)


class Guard:
    """Refuses, with a 403 that says how to open the dashboard, what is not the dashboard's own page
    asking with the token (see the module's docstring)."""

    def __init__(self, app: ASGIApp, token: str, hosts: Iterable[str], cookie: str) -> None:
        self.app = app
        self.token = token.encode()
        self.hosts = frozenset(h.lower() for h in hosts)
        self.cookie = cookie

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http" or not self._allowed(scope):
            await PlainTextResponse(FORBIDDEN, status_code=403)(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def _allowed(self, scope: Scope) -> bool:
        headers: dict[bytes, bytes] = {}
        for name, value in scope["headers"]:
            if name in headers:  # two Host or Origin headers: a request no browser sends
                return False
            headers[name] = value
        host = headers.get(b"host", b"").decode("latin-1").lower()
        if host not in self.hosts:
            return False
        origin = headers.get(b"origin")
        if origin is not None and origin.decode("latin-1").lower() != f"{scope['scheme']}://{host}":
            return False
        if headers.get(b"sec-fetch-site", b"same-origin") not in (b"same-origin", b"none"):
            return False
        if scope["method"] not in ("GET", "HEAD"):
            sent = headers.get(TOKEN_HEADER.lower().encode(), b"")
            if origin is None or not hmac.compare_digest(sent, self.token):
                return False
        return self._has_token(scope, headers)

    def _has_token(self, scope: Scope, headers: dict[bytes, bytes]) -> bool:
        given = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("token", [])
        if given and hmac.compare_digest(given[-1].encode(), self.token):
            return True
        cookies = SimpleCookie()
        try:
            cookies.load(headers.get(b"cookie", b"").decode("latin-1"))
        except Exception:
            return False
        morsel = cookies.get(self.cookie)
        return morsel is not None and hmac.compare_digest(morsel.value.encode(), self.token)


def create_app(
    state_dir: Path,
    token: str,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    settings: Settings | None = None,
    plugins: Plugins | None = None,
    board: Board | None = None,
) -> Starlette:
    """The dashboard of the sessions sidelight sees with its state in ``state_dir``, answering only
    requests with ``token`` on ``host``:``port`` (a test client's ``base_url`` names them)."""
    from dataclasses import replace as replace_settings

    from sidelight.config import Settings as SettingsType
    from sidelight.plugins import get_plugins

    if not token:
        raise ValueError("the dashboard needs a token")
    if settings is None:
        settings = SettingsType.load()
    if settings.state_dir != state_dir:
        settings = replace_settings(settings, state_dir=state_dir)
    plugins = get_plugins() if plugins is None else plugins
    board = Board(settings, plugins) if board is None else board
    cookie = f"sidelight_dashboard_{port}"
    templates = Environment(
        loader=FileSystemLoader(HERE / "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        auto_reload=False,
    )
    templates.globals["categories"] = CATEGORIES_SHOWN
    templates.filters["url"] = lambda value: quote(str(value), safe="")

    async def run(function: Any, *args: Any) -> Any:
        # Past its deadline the request answers 503 at once; the thread ends on its own.
        return await anyio.to_thread.run_sync(lambda: function(*args), abandon_on_cancel=True)

    def page(name: str, request: Request, **context: Any) -> HTMLResponse:
        html = templates.get_template(name).render(token=token, **context)
        response = HTMLResponse(html)
        if "token" in request.query_params:
            response.set_cookie(cookie, token, httponly=True, samesite="strict", path="/")
        return response

    def strip_token(request: Request) -> RedirectResponse | None:
        """A first load with ``?token=``: set the cookie and load the page again without it, so that the
        token stays out of the address bar, the history and any referrer."""
        if "token" not in request.query_params:
            return None
        rest = [(k, v) for k, v in request.query_params.multi_items() if k != "token"]
        target = request.url.path + (f"?{urlencode(rest)}" if rest else "")
        response = RedirectResponse(target, status_code=303)
        response.set_cookie(cookie, token, httponly=True, samesite="strict", path="/")
        return response

    async def overview(request: Request) -> Any:
        redirect = strip_token(request)
        if redirect is not None:
            return redirect
        rows, version = await run(board.rows_version)
        chosen = {
            name: request.query_params.get(name, "") for name in ("q", "agent", "state", "project", "sort")
        }
        if chosen["sort"] not in SORT_COLUMNS:
            chosen["sort"] = ""
        projects: dict[str, list[dict[str, Any]]] = {}
        ordered = sorted(rows, key=SORT_KEYS[chosen["sort"]], reverse=True) if chosen["sort"] else rows
        for row in ordered:
            projects.setdefault(row["project"], []).append(row)
        visible = {row["id"] for row in rows if _matches(row, chosen)}
        rest = {k: v for k, v in chosen.items() if v and k != "sort"}
        sort_links = {key: "/?" + urlencode({**rest, "sort": key}) for key in SORT_COLUMNS}
        collisions = await run(board.collisions)
        fleet = await run(board.fleet)
        return page(
            "overview.html",
            request,
            projects=projects,
            rows=rows,
            chosen=chosen,
            visible=visible,
            shown=len(visible),
            sort_columns=SORT_COLUMNS,
            sort_links=sort_links,
            agents=sorted({r["agent"] for r in rows}),
            collisions=collisions[:COLLISIONS_SHOWN],
            collisions_total=len(collisions),
            session_limit=COLLISION_SESSIONS_SHOWN,
            fleet=fleet,
            version=version,
            source=board.source,
            watcher_pid=board.watcher_pid,
        )

    async def collisions_page(request: Request) -> Any:
        redirect = strip_token(request)
        if redirect is not None:
            return redirect
        return page("collisions.html", request, collisions=await run(board.collisions), version=board.version)

    async def session_page(request: Request) -> Any:
        redirect = strip_token(request)
        if redirect is not None:
            return redirect
        key = request.path_params["id"]
        try:
            detail = await run(board.detail, key)
        except LookupError as error:
            return PlainTextResponse(f"{error}\n", status_code=404)
        return page("session.html", request, detail=detail, version=board.version)

    async def api_sessions(request: Request) -> Any:
        return JSONResponse(await run(board.rows))

    async def api_session(request: Request) -> Any:
        try:
            return JSONResponse(await run(board.detail, request.path_params["id"]))
        except LookupError as error:
            return JSONResponse({"error": str(error)}, status_code=404)

    async def api_collisions(request: Request) -> Any:
        return JSONResponse(await run(board.collisions))

    async def api_timeline(request: Request) -> Any:
        return JSONResponse(await run(board.timeline))

    async def api_fleet(request: Request) -> Any:
        return JSONResponse(await run(board.fleet))

    async def action(request: Request) -> Any:
        key, what = request.path_params["id"], request.path_params["action"]
        try:
            if what == "recap":
                path = await run(board.recap_to_file, key)
                return JSONResponse({"id": key, "action": "recap", "written": str(path)})
            if what in ("suspend", "resume"):
                done = await run(board.request, key, what)
                await run(board.refresh)
                return JSONResponse(done)
        except LookupError as error:
            return JSONResponse({"error": str(error)}, status_code=404)
        except (OSError, ValueError) as error:
            from sidelight.errors import describe

            if out_of_descriptors(error):
                raise  # Limits: a 503

            return JSONResponse({"error": describe(error)}, status_code=500)
        return JSONResponse({"error": f"no action {what!r}"}, status_code=404)

    async def events(request: Request) -> Any:
        since = _version(request.headers.get("last-event-id")) or _version(request.query_params.get("since"))
        return StreamingResponse(
            _stream(board, since, request, alarm),
            media_type="text/event-stream",
            headers={"cache-control": "no-store", "x-accel-buffering": "no"},
        )

    routes = [
        Route("/", overview),
        Route("/timeline", overview),
        Route("/collisions", collisions_page),
        Route("/session/{id:path}", session_page),
        Route("/api/sessions", api_sessions),
        Route("/api/collisions", api_collisions),
        Route("/api/timeline", api_timeline),
        Route("/api/fleet", api_fleet),
        Route("/api/sessions/{id:path}/{action:str}", action, methods=["POST"]),
        Route("/api/sessions/{id:path}", api_session),
        Route("/events", events),
        Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
    ]
    alarm = Alarm()
    app = Starlette(routes=routes)
    app.state.board = board
    app.state.alarm = alarm
    app.add_middleware(Limits, alarm=alarm, streams=("/events",))
    app.add_middleware(_Headers)
    app.add_middleware(Guard, token=token, hosts=allowed_hosts(host, port), cookie=cookie)
    return app


class Limits:
    """Each request but the ``streams`` (long-lived by design) has ``seconds`` to be answered, else a
    503. A request gets a 503 too when the process can open no file for lack of descriptors, before it
    starts (what it would read would be wrong: an empty list, a missing session) or when its work
    raised so; the ``alarm`` says so once in the log, and no traceback is written."""

    def __init__(
        self, app: ASGIApp, alarm: Alarm, streams: Iterable[str] = (), seconds: float = REQUEST_SECONDS
    ) -> None:
        self.app = app
        self.alarm = alarm
        self.streams = frozenset(streams)
        self.seconds = seconds

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def sending(message: Any) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            check_descriptors()
            self.alarm.clear()
            if scope["path"] in self.streams:
                await self.app(scope, receive, sending)
                return
            with anyio.fail_after(self.seconds):
                await self.app(scope, receive, sending)
        except TimeoutError:
            logger.info("%s %s: no answer after %.0f s (503)", scope["method"], scope["path"], self.seconds)
            if not started:
                await _unavailable("the dashboard took too long to answer; try again")(scope, receive, send)
        except OSError as error:
            if not out_of_descriptors(error) or started:
                raise
            self.alarm.raise_(error)
            await _unavailable("the dashboard is out of file descriptors; try again shortly")(
                scope, receive, send
            )


def _unavailable(reason: str) -> PlainTextResponse:
    return PlainTextResponse(f"{reason}\n", status_code=503, headers={"retry-after": "5"})


class _Headers:
    """Adds :data:`SECURITY_HEADERS` to every response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def sending(message: Any) -> None:
            if message["type"] == "http.response.start":
                names = {name.lower() for name, _ in message.get("headers", [])}
                extra = [
                    (k.encode(), v.encode()) for k, v in SECURITY_HEADERS.items() if k.encode() not in names
                ]
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        await self.app(scope, receive, sending)


def _version(text: str | None) -> int:
    try:
        return max(0, int(text or 0))
    except ValueError:
        return 0


async def _stream(board: Board, since: int, request: Request, alarm: Alarm) -> AsyncIterator[str]:
    """Server-sent events: ``sessions`` with the rows changed since the version the page had (and the ids
    gone), then again whenever a refresh finds changes; ``collisions`` when those change (the newest
    :data:`~sidelight.dashboard.data.COLLISIONS_SHOWN` and how many there are). A look that runs out of
    file descriptors raises the ``alarm`` and is tried again a second later (the stream stays)."""
    version = since
    collisions: list[dict[str, Any]] | None = None
    last_collisions = 0.0
    quiet = 0.0
    loop = asyncio.get_running_loop()
    yield "retry: 1000\n\n"
    while True:
        pause = POLL_SECONDS
        try:
            await anyio.to_thread.run_sync(board.refresh_soon)
            version, rows, removed = await anyio.to_thread.run_sync(board.changes_since, version)
            found = None
            if (rows or removed) and loop.time() - last_collisions >= COLLISIONS_SECONDS:
                last_collisions = loop.time()
                found = await anyio.to_thread.run_sync(board.collisions)
        except OSError as error:
            if not out_of_descriptors(error):
                raise
            alarm.raise_(error)
            rows, removed, found, pause = [], [], None, 1.0
        if rows or removed:
            payload = json.dumps({"version": version, "rows": rows, "removed": removed}, ensure_ascii=False)
            yield f"id: {version}\nevent: sessions\ndata: {payload}\n\n"
            quiet = 0.0
            if found is not None and found != collisions:
                if collisions is not None:
                    shown = {"collisions": found[:COLLISIONS_SHOWN], "total": len(found)}
                    yield f"event: collisions\ndata: {json.dumps(shown, ensure_ascii=False)}\n\n"
                collisions = found
        elif quiet >= KEEPALIVE_SECONDS:
            yield ": keepalive\n\n"
            quiet = 0.0
        if await request.is_disconnected():
            return
        await asyncio.sleep(pause)
        quiet += pause
