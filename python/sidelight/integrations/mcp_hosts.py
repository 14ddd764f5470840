"""``sidelight install mcp --host HOST``: the ``sidelight mcp`` server in a host's MCP config, and out again.

Each host keeps its MCP servers in a JSON (or JSONC) file of its own, as one table of named servers:
:data:`HOSTS` says where (for the user, and for a project where the host reads one) and in what shape.
Install adds one server named ``sidelight`` that runs ``sidelight mcp`` by absolute path, and changes
nothing else in the file; uninstall takes exactly that server out (the file as it was before when it
is still as install left it, else only that entry; a file install created and nothing else is left in
is removed). A server named ``sidelight`` that is not sidelight's is never touched.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sidelight.install.command import sidelight_command
from sidelight.install.jsonc import loads_jsonc
from sidelight.install.ledger import InstallError, Ledger, with_folders
from sidelight.install.settings import read_json, settings_text, take_hooks_out
from sidelight.records import InstallResult

if TYPE_CHECKING:
    from collections.abc import Callable

    from sidelight.config import Settings

__all__ = ["HOSTS", "SERVER_NAME", "McpHost", "config_path", "install_mcp", "is_our_server", "uninstall_mcp"]

#: The server's name in every host's table (Claude Code calls its tools ``mcp__sidelight__<tool>``).
SERVER_NAME = "sidelight"


@dataclass(frozen=True)
class McpHost:
    """Where one host keeps its MCP servers: ``user(settings)`` and ``project(directory)`` give the file
    (``None``: the host has no such file), ``table`` the key of the servers in it, ``entry(argv)`` a
    server's entry for the command line ``argv``, ``comments``: the host reads the file as JSONC."""

    name: str
    title: str
    table: str
    user: Callable[[Settings], Path] | None
    project: Callable[[Path], Path] | None
    entry: Callable[[list[str]], dict[str, Any]]
    comments: bool = False


def _stdio(argv: list[str]) -> dict[str, Any]:
    return {"type": "stdio", "command": argv[0], "args": argv[1:]}


def _plain(argv: list[str]) -> dict[str, Any]:
    return {"command": argv[0], "args": argv[1:]}


def _copilot(argv: list[str]) -> dict[str, Any]:
    return {"type": "local", "command": argv[0], "args": argv[1:], "tools": ["*"]}


def _claude_json(settings: Settings) -> Path:
    # Claude Code keeps ~/.claude.json beside its folder, or in CLAUDE_CONFIG_DIR when that is set.
    folder = (os.environ.get("CLAUDE_CONFIG_DIR") or "").split(",")[0].strip()
    return Path(folder).expanduser() / ".claude.json" if folder else settings.home / ".claude.json"


def _zed(settings: Settings) -> Path:
    config = os.environ.get("XDG_CONFIG_HOME") or str(settings.home / ".config")
    return Path(config) / "zed" / "settings.json"


#: The hosts ``sidelight install mcp --host`` knows, by name (docs/mcp.md says where each reads).
HOSTS: dict[str, McpHost] = {
    host.name: host
    for host in (
        McpHost(
            "claude-code",
            "Claude Code",
            "mcpServers",
            _claude_json,
            lambda folder: folder / ".mcp.json",
            _stdio,
        ),
        McpHost(
            "cursor",
            "Cursor",
            "mcpServers",
            lambda s: s.home / ".cursor" / "mcp.json",
            lambda folder: folder / ".cursor" / "mcp.json",
            _plain,
        ),
        McpHost(
            "windsurf",
            "Windsurf",
            "mcpServers",
            lambda s: s.home / ".codeium" / "windsurf" / "mcp_config.json",
            None,
            _plain,
        ),
        McpHost(
            "gemini",
            "Gemini CLI",
            "mcpServers",
            lambda s: (s.gemini_dir or s.home / ".gemini") / "settings.json",
            lambda folder: folder / ".gemini" / "settings.json",
            _plain,
            comments=True,
        ),
        McpHost(
            "qwen",
            "Qwen Code",
            "mcpServers",
            lambda s: (s.qwen_dir or s.home / ".qwen") / "settings.json",
            lambda folder: folder / ".qwen" / "settings.json",
            _plain,
            comments=True,
        ),
        McpHost(
            "copilot",
            "GitHub Copilot CLI",
            "mcpServers",
            lambda s: (s.copilot_dir or s.home / ".copilot") / "mcp-config.json",
            None,
            _copilot,
        ),
        McpHost(
            "vscode",
            "VS Code",
            "servers",
            None,
            lambda folder: folder / ".vscode" / "mcp.json",
            _stdio,
        ),
        McpHost("zed", "Zed", "context_servers", _zed, None, _plain, comments=True),
    )
}


def _host(name: str) -> McpHost:
    try:
        return HOSTS[name]
    except KeyError:
        raise InstallError(f"no MCP host {name!r}; the hosts: {', '.join(sorted(HOSTS))}") from None


def config_path(host: str, scope: str, settings: Settings, directory: Path | None = None) -> Path:
    """The file ``host`` reads its MCP servers from, for the user or for the project in ``directory``
    (default: the current one)."""
    spec = _host(host)
    where = spec.project if scope == "project" else spec.user
    if where is None:
        other = "the user" if scope == "project" else "a project (--scope project)"
        raise InstallError(f"{spec.title} keeps its MCP servers for {other} only")
    if scope == "project":
        return where(directory or Path.cwd())  # type: ignore[arg-type]
    return where(settings)  # type: ignore[arg-type]


def is_our_server(entry: object) -> bool:
    """Whether a table's entry runs ``sidelight mcp`` (sidelight by any path)."""
    if not isinstance(entry, dict):
        return False
    command, args = entry.get("command"), entry.get("args")
    if not isinstance(command, str) or not isinstance(args, list) or not args or args[-1] != "mcp":
        return False
    return any("sidelight" in part for part in [command, *args] if isinstance(part, str))


def _holds(text: str, spec: McpHost) -> bool:
    try:
        data = loads_jsonc(text) if spec.comments else json.loads(text)
    except ValueError:
        return False
    table = data.get(spec.table) if isinstance(data, dict) else None
    return isinstance(table, dict) and is_our_server(table.get(SERVER_NAME))


def _table(data: dict[str, Any], spec: McpHost, path: Path) -> dict[str, Any]:
    table = data.setdefault(spec.table, {})
    if not isinstance(table, dict):
        raise InstallError(f"{path}: {spec.table!r} is not an object; nothing was changed")
    return table


def _target(host: str) -> str:
    return f"mcp-{host}"


def install_mcp(host: str, scope: str, settings: Settings, directory: Path | None = None) -> InstallResult:
    """Adds the ``sidelight`` MCP server to ``host``'s config (``scope``: ``user`` or ``project``)."""
    spec = _host(host)
    path = config_path(host, scope, settings, directory)
    data = read_json(path, f"{spec.title} MCP config", comments=spec.comments)
    table = _table(data, spec, path)
    entry = spec.entry([*sidelight_command(), "mcp"])
    found = table.get(SERVER_NAME)
    if found == entry:
        return InstallResult(_target(host), path, False, f"already installed in {path}")
    if found is not None and not is_our_server(found):
        raise InstallError(
            f"{path}: an MCP server named {SERVER_NAME!r} is not sidelight's; nothing was changed"
        )
    table[SERVER_NAME] = entry
    return Ledger(_target(host), path, settings.state_dir).save(
        path,
        settings_text(path, data, comments=spec.comments),
        f"added the {SERVER_NAME} MCP server to",
        ours=lambda text: _holds(text, spec),
        whole=False,
    )


def uninstall_mcp(host: str, scope: str, settings: Settings, directory: Path | None = None) -> InstallResult:
    """Takes the ``sidelight`` MCP server (only it) out of ``host``'s config, and what install created."""
    spec = _host(host)
    path = config_path(host, scope, settings, directory)
    data = read_json(path, f"{spec.title} MCP config", comments=spec.comments)
    table = data.get(spec.table)
    if not isinstance(table, dict) or not is_our_server(table.get(SERVER_NAME)):
        return InstallResult(_target(host), path, False, f"not installed in {path}")
    del table[SERVER_NAME]
    if not table:
        del data[spec.table]
    ledger = Ledger(_target(host), path, settings.state_dir)
    result = take_hooks_out(
        ledger, path, data, f"removed the {SERVER_NAME} MCP server from", comments=spec.comments
    )
    return with_folders(result, ledger.forget())
