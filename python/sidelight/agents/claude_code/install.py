"""``sidelight install claude-code``: ``UserPromptSubmit``, ``SessionStart`` and ``SessionEnd`` command
hooks, a ``PreToolUse`` hook matched to the write tools (the stale-write guard) and a ``PostToolUse``
hook for every tool (the news within the turn), in
``~/.claude/settings.json`` (``scope="user"``; ``CLAUDE_CONFIG_DIR`` is honoured) or
``<cwd>/.claude/settings.json`` (``scope="project"``); and the Claude Code plugin this folder ships
(``plugin/``, for ``claude --plugin-dir``).

Imported only when the installers are asked for (the agent's ``sidelight_installers``), never by a prompt.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from sidelight.install.ledger import InstallError
from sidelight.install.settings import install_hooks, uninstall_hooks
from sidelight.records import InstallerSpec

if TYPE_CHECKING:
    from sidelight.records import InstallResult

__all__ = ["CLAUDE_EVENTS", "INSTALLER", "claude_plugin_dir", "install_claude_code", "uninstall_claude_code"]

#: The Claude Code hook events sidelight listens to.
CLAUDE_EVENTS = ("UserPromptSubmit", "SessionStart", "SessionEnd", "PreToolUse", "PostToolUse")
#: The tools each event's hook runs for (the others: every one): ``PreToolUse`` only for the agent's
#: ``WRITE_TOOLS`` (spelled again here: this module is its agent's, and may not import it back; a test
#: checks the two agree).
CLAUDE_MATCHERS = {"PreToolUse": "Write|Edit|MultiEdit|NotebookEdit", "PostToolUse": "*"}


def _settings_path(scope: str, home: Path | None, cwd: Path | None) -> Path:
    if scope == "project":
        return (cwd or Path.cwd()) / ".claude" / "settings.json"
    if scope != "user":
        raise InstallError(f"unknown scope {scope!r}: use user or project")
    if home is not None:
        return home / ".claude" / "settings.json"
    from sidelight.config import Settings

    return Settings.load().claude_dirs[0] / "settings.json"


def install_claude_code(
    scope: str = "user", *, home: Path | None = None, cwd: Path | None = None
) -> InstallResult:
    """Adds sidelight's hooks to Claude Code's ``settings.json``."""
    path = _settings_path(scope, home, cwd)
    return install_hooks("claude-code", path, CLAUDE_EVENTS, "Claude Code", matchers=CLAUDE_MATCHERS)


def uninstall_claude_code(
    scope: str = "user", *, home: Path | None = None, cwd: Path | None = None
) -> InstallResult:
    """Removes sidelight's hooks (only those) from Claude Code's ``settings.json``."""
    return uninstall_hooks("claude-code", _settings_path(scope, home, cwd), "Claude Code")


def claude_plugin_dir() -> Path:
    """The Claude Code plugin shipped in this package (``claude --plugin-dir PATH``)."""
    return Path(__file__).resolve().parent / "plugin"


#: ``sidelight install claude-code`` (and ``uninstall``), registered by the agent's ``sidelight_installers``.
INSTALLER = InstallerSpec(
    name="claude-code",
    install=lambda scope: [install_claude_code(scope)],
    uninstall=lambda scope: [uninstall_claude_code(scope)],
    description="hooks in settings.json (user: ~/.claude, project: ./.claude)",
    scopes=("user", "project"),
)
