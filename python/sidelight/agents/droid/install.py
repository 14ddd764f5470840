"""``sidelight install droid``: ``UserPromptSubmit``, ``SessionStart`` and ``SessionEnd`` command hooks, a
``PreToolUse`` hook matched to the write tools (the stale-write guard) and a ``PostToolUse`` hook for
every tool (the news within the turn), in ``~/.factory/hooks.json``, whose top-level keys are the events
(Claude Code's groups under them; timeout in seconds). A file wrapped in ``{"hooks": ...}`` is ignored
by Droid, so none is written; what else the file holds is kept, and uninstall takes out exactly
sidelight's entries.

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

__all__ = ["DROID_EVENTS", "DROID_MATCHERS", "INSTALLER", "install_droid", "uninstall_droid"]

#: The Droid hook events sidelight listens to (Claude Code's names).
DROID_EVENTS = ("UserPromptSubmit", "SessionStart", "SessionEnd", "PreToolUse", "PostToolUse")
#: The tools each event's hook runs for (the others: every one): the agent's ``WRITE_TOOLS``, spelled
#: here too since the agent's module imports this one (tests/test_droid.py checks they agree).
DROID_MATCHERS = {"PreToolUse": "Create|Edit|MultiEdit|ApplyPatch"}


def _hooks_path(home: Path | None) -> Path:
    if home is None:
        from sidelight.config import Settings

        home = Settings.load().home
    return home / ".factory" / "hooks.json"


def install_droid(*, home: Path | None = None) -> InstallResult:
    """Adds sidelight's hooks to Droid's user hooks file (``~/.factory/hooks.json``)."""
    return install_hooks(
        "droid",
        _hooks_path(home),
        DROID_EVENTS,
        "Factory Droid",
        HOOK_TIMEOUT,
        matchers=DROID_MATCHERS,
        top=True,
    )


def uninstall_droid(*, home: Path | None = None) -> InstallResult:
    """Removes sidelight's hooks (only those) from Droid's user hooks file."""
    return uninstall_hooks("droid", _hooks_path(home), "Factory Droid", top=True)


#: ``sidelight install droid`` (and ``uninstall``), registered by the agent's ``sidelight_installers``.
INSTALLER = InstallerSpec(
    name="droid",
    install=lambda scope: [install_droid()],
    uninstall=lambda scope: [uninstall_droid()],
    description="hooks in ~/.factory/hooks.json",
    scopes=("user",),
)
