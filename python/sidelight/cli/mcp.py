"""Command ``sidelight mcp``: the MCP server over stdio (:mod:`sidelight.integrations.mcp_server`), which
needs the ``mcp`` extra; without it, one line says how to install it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from sidelight.cli.common import EXIT_FAILED, EXIT_OK, logger

if TYPE_CHECKING:
    import argparse

__all__ = ["register"]

#: What ``sidelight mcp`` says when the extra is not installed.
MISSING_EXTRA: Final = "the MCP server needs the extra: pip install '.[mcp]'"


def register(commands: Any) -> None:
    """Adds ``mcp``."""
    mcp = commands.add_parser(
        "mcp",
        help="serve sidelight's tools to an agent over MCP (stdio; needs the mcp extra)",
        description="Run an MCP server on stdin and stdout, for an agent host to start: tools that list "
        "this project's sessions, read one, recap one, and give the caller the digest of what its "
        "siblings did since it last asked. 'sidelight install mcp --host HOST' writes the host's MCP "
        "config. Logs go to stderr. See docs/mcp.md.",
    )
    mcp.set_defaults(run=_mcp_command, parser=mcp)


def _mcp_command(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    try:
        from sidelight.integrations.mcp_server import serve
    except ImportError as error:
        if (error.name or "").split(".")[0] != "mcp":
            raise
        logger.error("%s", MISSING_EXTRA)
        return EXIT_FAILED
    serve()
    return EXIT_OK
