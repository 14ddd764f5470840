"""Runs the dashboard: binds the socket first (so that ``--port 0`` knows its port before the app is
made for it), prints the one URL line, opens the browser when asked, and serves with uvicorn until
SIGINT or SIGTERM.

uvicorn serves with its HTTP/1.1 protocol held to the dashboard's limits (:func:`guarded_protocol`): a
request head has :data:`~sidelight.dashboard.data.HEAD_SECONDS`, connections are capped, and running
out of file descriptors is one warning line, not a traceback for each connection the system could not
accept.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import secrets
import signal
import socket
import sys
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from collections.abc import Callable
    from types import FrameType

    from sidelight.config import Settings
    from sidelight.dashboard.data import Alarm
    from sidelight.plugins import Plugins

__all__ = ["guarded_protocol", "is_loopback", "listen", "serve", "url_line"]

logger = logging.getLogger("sidelight")

#: What the command prints first, alone on stdout (tests and scripts read the URL from it).
URL_PREFIX: Final = "sidelight dashboard: "


def is_loopback(host: str) -> bool:
    """Whether ``host`` names the loopback interface only (``127.0.0.1``, ``::1``, ``localhost``)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def url_line(host: str, port: int, token: str) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"{URL_PREFIX}http://{shown}:{port}/?token={token}"


def listen(host: str, port: int) -> socket.socket:
    """A socket bound to ``host``:``port`` (0: any free port) and listening; raises ``OSError`` (a
    ``socket.gaierror`` for a name that does not resolve) when it cannot be."""
    address = host.strip("[]")
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((address, port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    return sock


def serve(settings: Settings, plugins: Plugins, sock: socket.socket, host: str, *, open_browser: bool) -> int:
    """Serves the dashboard on the listening ``sock`` (bound to ``host``) until a signal; the exit code."""
    import uvicorn

    from sidelight.dashboard.app import create_app
    from sidelight.dashboard.data import HEAD_SECONDS, max_connections

    host = host.strip("[]")
    bound = sock.getsockname()[1]
    if not is_loopback(host):
        logger.warning(
            "listening on %s: other machines can reach the dashboard (the token still guards it)", host
        )
    token = secrets.token_urlsafe(24)
    app = create_app(settings.state_dir, token, host=host, port=bound, settings=settings, plugins=plugins)
    alarm = app.state.alarm
    config = uvicorn.Config(
        app,
        http=guarded_protocol(max_connections(), HEAD_SECONDS, alarm),
        log_level="warning",
        access_log=False,
        lifespan="off",
        timeout_graceful_shutdown=2,
    )
    server = uvicorn.Server(config)
    line = url_line(host, bound, token)
    sys.stdout.write(line + "\n")
    sys.stdout.flush()
    if open_browser:
        import webbrowser

        try:
            webbrowser.open(line.removeprefix(URL_PREFIX))
        except Exception:  # no browser here: the URL is printed
            logger.info("could not open a browser; open the URL above")
    # uvicorn handles SIGINT and SIGTERM itself (it stops accepting, ends the event streams) and then
    # raises the signal again for the handler it found: this one, so that a stop asked for is exit 0,
    # not death by the signal (-15) or a KeyboardInterrupt.
    previous = {sig: signal.signal(sig, _stopped) for sig in (signal.SIGINT, signal.SIGTERM)}

    async def run() -> None:
        asyncio.get_running_loop().set_exception_handler(_loop_errors(alarm))
        await server.serve(sockets=[sock])

    # The event loop uvicorn itself would run (uvloop when installed, as `uvicorn.run` picks it);
    # uvicorn before 0.36 set its loop policy up instead.
    get_loop_factory = getattr(config, "get_loop_factory", None)
    loop_factory = get_loop_factory() if get_loop_factory is not None else None
    if loop_factory is None and get_loop_factory is None:
        config.setup_event_loop()
    try:
        with asyncio.Runner(loop_factory=loop_factory) as runner:
            runner.run(run())
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return 0


def _stopped(signum: int, frame: FrameType | None) -> None:
    """The signal uvicorn raises again once it stopped: nothing left to do."""


def _loop_errors(alarm: Alarm) -> Callable[[asyncio.AbstractEventLoop, dict[str, Any]], None]:
    """The event loop's handler of errors nothing else handles: a connection the system could not
    accept for lack of file descriptors raises the alarm (one line, once). After such an error asyncio
    retries accepting a second later; when the server stopped in that second its socket is closed and
    the retry fails on descriptor -1: nothing is lost, so it is logged quietly. The rest as asyncio says."""
    from sidelight.dashboard.data import out_of_descriptors

    def handle(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        error = context.get("exception")
        if error is not None and out_of_descriptors(error):
            alarm.raise_(error)
            return
        callback = getattr(context.get("handle"), "_callback", None)
        if isinstance(error, ValueError) and getattr(callback, "__name__", "") == "_start_serving":
            logger.debug("the accept retry found the server closed: %s", error)
            return
        loop.default_exception_handler(context)

    return handle


#: What a connection over the cap gets before it is closed.
_BUSY: Final = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"content-length: 5\r\nconnection: close\r\n\r\nbusy\n"
)
#: What a connection whose request head came too late gets before it is closed.
_LATE: Final = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"content-length: 5\r\nconnection: close\r\n\r\nlate\n"
)


def guarded_protocol(cap: int, head_seconds: float, alarm: Alarm) -> type[asyncio.Protocol]:
    """uvicorn's HTTP/1.1 protocol (h11) held to these rules, for one server:

    - a connection has ``head_seconds`` to send its whole request head, from when it opened or its
      last response ended (kept alive); then it is closed, with a 408 when it sent part of one. What
      comes after the head (the app's answer, an event stream that lasts as long as its page) has no
      such limit;
    - at most ``cap`` connections at once, event streams included: one more closes the connection
      that has waited longest for its head (a client that sends half a request holds nothing), or,
      when none waits, gets a 503 and is closed itself.
    """
    from uvicorn.protocols.http.h11_impl import H11Protocol

    # The connections waiting for a request head, the longest waiting first.
    waiting: dict[Guarded, None] = {}

    class Guarded(H11Protocol):
        _head_timer: asyncio.TimerHandle | None = None
        _cycle_seen: object = None
        _partial = False  # part of a request head came while it waited

        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            super().connection_made(transport)  # type: ignore[arg-type]
            alarm.clear()
            if len(self.connections) > cap:
                oldest = next(iter(waiting), None)
                if oldest is None:
                    self.transport.write(_BUSY)
                    self.transport.close()
                    return
                oldest._head_late()
            self._await_head()

        def _await_head(self) -> None:
            self._head_done()
            self._partial = False
            waiting[self] = None
            self._head_timer = self.loop.call_later(head_seconds, self._head_late)

        def _head_done(self) -> None:
            waiting.pop(self, None)
            if self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None

        def _head_late(self) -> None:
            self._head_done()
            if not self.transport.is_closing():
                if self._partial:
                    self.transport.write(_LATE)
                self.transport.close()

        def data_received(self, data: bytes) -> None:
            self._partial = self._partial or self in waiting
            super().data_received(data)

        def handle_events(self) -> None:
            super().handle_events()
            if self.cycle is not self._cycle_seen:  # a request head was read: its cycle began
                self._cycle_seen = self.cycle
                self._head_done()

        def on_response_complete(self) -> None:
            if not self.transport.is_closing():
                self._await_head()  # kept alive: the next head has its own time
            super().on_response_complete()

        def connection_lost(self, exc: Exception | None) -> None:
            self._head_done()
            super().connection_lost(exc)

    return Guarded
