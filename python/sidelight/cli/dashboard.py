"""Command ``sidelight dashboard``: the local web page of every session (:mod:`sidelight.dashboard`),
which needs the ``dashboard`` extra; without it, one line says how to install it."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Final

from sidelight.cli.common import EXIT_FAILED, EXPECTED_ERRORS, fail, logger, number_option

if TYPE_CHECKING:
    import argparse

__all__ = ["register"]

#: What ``sidelight dashboard`` says when the extra is not installed.
MISSING_EXTRA: Final = "the dashboard needs the extra: pip install '.[dashboard]'"


def register(commands: Any) -> None:
    """Adds ``dashboard``."""
    dashboard = commands.add_parser(
        "dashboard",
        help="serve a live web page of every session (needs the dashboard extra)",
        description="Serve a local web page of every session: grouped by project, with state, activity, "
        "a timeline, the files live sessions share, and each session's conversation, context and recap, "
        "updated live. Prints one line, 'sidelight dashboard: URL', with a random token every request "
        "needs, then serves until Ctrl-C or SIGTERM. Needs the dashboard extra (Starlette, uvicorn, "
        "Jinja2).",
    )
    dashboard.add_argument(
        "--host",
        default=os.environ.get("SIDELIGHT_DASHBOARD_HOST", "127.0.0.1"),
        help="the address to listen on; anything but loopback is reachable from other machines "
        "[env: SIDELIGHT_DASHBOARD_HOST; default: 127.0.0.1]",
    )
    dashboard.add_argument(
        "--port",
        type=number_option(minimum=0, maximum=65535, what="a port number"),
        default=os.environ.get("SIDELIGHT_DASHBOARD_PORT", "0"),
        metavar="N",
        help="the port; 0 picks a free one [env: SIDELIGHT_DASHBOARD_PORT; default: 0]",
    )
    dashboard.add_argument(
        "--no-browser",
        action="store_true",
        help="do not open the page in a browser",
    )
    dashboard.set_defaults(run=_dashboard_command, parser=dashboard)


def _dashboard_command(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    try:
        import jinja2  # noqa: F401
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError:
        logger.error("%s", MISSING_EXTRA)
        return EXIT_FAILED
    from sidelight.config import ConfigError, Settings
    from sidelight.dashboard.server import listen, serve
    from sidelight.plugins import get_plugins

    try:
        settings = Settings.load()
    except ConfigError as error:
        parser.error(str(error))
    try:
        sock = listen(args.host, args.port)
    except OSError as error:
        logger.error("cannot listen on %s port %d: %s", args.host, args.port, error.strerror or error)
        return EXIT_FAILED
    try:
        return serve(settings, get_plugins(), sock, args.host, open_browser=not args.no_browser)
    except EXPECTED_ERRORS as error:
        return fail(error)
    finally:
        sock.close()
