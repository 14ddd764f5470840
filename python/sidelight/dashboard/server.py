"""Runs the dashboard: binds the socket first (so that ``--port 0`` knows its port before the app is
made for it), prints the one URL line, opens the browser when asked, and serves with uvicorn until
SIGINT or SIGTERM."""

from __future__ import annotations

import ipaddress
import logging
import secrets
import signal
import socket
import sys
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from types import FrameType

    from sidelight.config import Settings
    from sidelight.plugins import Plugins

__all__ = ["is_loopback", "listen", "serve", "url_line"]

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

    host = host.strip("[]")
    bound = sock.getsockname()[1]
    if not is_loopback(host):
        logger.warning(
            "listening on %s: other machines can reach the dashboard (the token still guards it)", host
        )
    token = secrets.token_urlsafe(24)
    app = create_app(settings.state_dir, token, host=host, port=bound, settings=settings, plugins=plugins)
    config = uvicorn.Config(
        app, log_level="warning", access_log=False, lifespan="off", timeout_graceful_shutdown=2
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
    try:
        server.run(sockets=[sock])
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return 0


def _stopped(signum: int, frame: FrameType | None) -> None:
    """The signal uvicorn raises again once it stopped: nothing left to do."""
