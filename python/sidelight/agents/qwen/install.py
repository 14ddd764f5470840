"""``sidelight install qwen``: ``UserPromptSubmit``, ``SessionStart`` and ``SessionEnd`` command hooks, and
a ``PreToolUse`` hook matched to the write tools (the stale-write guard) and a ``PostToolUse`` hook for
every tool (the news within the turn), in
``~/.qwen/settings.json`` (``QWEN_HOME``; Claude Code's shape, timeout in milliseconds). Qwen Code reads
its settings as JSONC: a file with comments keeps them. Qwen runs user-level hooks without a trust step.

Imported only when the installers are asked for (the agent's ``sidelight_installers``), never by a prompt.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sidelight.install.command import HOOK_TIMEOUT
from sidelight.install.settings import install_hooks, uninstall_hooks
from sidelight.records import InstallerSpec

if TYPE_CHECKING:
    from pathlib import Path

    from sidelight.records import InstallResult

__all__ = ["INSTALLER", "QWEN_EVENTS", "install_qwen", "uninstall_qwen"]

#: The Qwen Code hook events sidelight listens to (Claude Code's names).
QWEN_EVENTS = ("UserPromptSubmit", "SessionStart", "SessionEnd", "PreToolUse", "PostToolUse")
#: The tools each event's hook runs for (the others: every one): the agent's ``WRITE_TOOLS``, spelled
#: here too since the agent's module imports this one (tests/test_edit_guard.py checks they agree).
QWEN_MATCHERS = {"PreToolUse": "write_file|edit"}


def _settings_path(home: Path | None) -> Path:
    if home is not None:
        return home / ".qwen" / "settings.json"
    from sidelight.config import Settings

    qwen = Settings.load().qwen_dir
    assert qwen is not None
    return qwen / "settings.json"


def install_qwen(*, home: Path | None = None) -> InstallResult:
    """Adds sidelight's hooks to Qwen Code's user settings (``~/.qwen/settings.json``)."""
    path = _settings_path(home)
    return install_hooks(
        "qwen", path, QWEN_EVENTS, "Qwen Code", HOOK_TIMEOUT * 1000, comments=True, matchers=QWEN_MATCHERS
    )


def uninstall_qwen(*, home: Path | None = None) -> InstallResult:
    """Removes sidelight's hooks (only those) from Qwen Code's user settings."""
    return uninstall_hooks("qwen", _settings_path(home), "Qwen Code", comments=True)


#: ``sidelight install qwen`` (and ``uninstall``), registered by the agent's ``sidelight_installers``.
INSTALLER = InstallerSpec(
    name="qwen",
    install=lambda scope: [install_qwen()],
    uninstall=lambda scope: [uninstall_qwen()],
    description="hooks in ~/.qwen/settings.json",
    scopes=("user",),
)
