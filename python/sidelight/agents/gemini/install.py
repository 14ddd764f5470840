"""``sidelight install gemini``: ``BeforeAgent`` (each prompt), ``SessionStart`` and ``SessionEnd``
command hooks, ``BeforeTool`` of a write (the stale-write guard) and ``AfterTool`` (the news within
the turn) in ``~/.gemini/settings.json`` (``GEMINI_CLI_HOME``), timeouts in milliseconds as Gemini
reads them. The Gemini CLI reads its settings as JSONC: a file with comments keeps them. Gemini runs
hooks only in a folder it trusts; install says so (:data:`GEMINI_TRUST_NOTE`) and grants no trust.

Imported only when the installers are asked for (the agent's ``sidelight_installers``), never by a prompt.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sidelight.install.command import HOOK_TIMEOUT
from sidelight.install.settings import install_hooks, uninstall_hooks
from sidelight.records import InstallerSpec, InstallResult

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["GEMINI_EVENTS", "GEMINI_TRUST_NOTE", "INSTALLER", "install_gemini", "uninstall_gemini"]

#: The Gemini CLI hook events sidelight listens to (``BeforeAgent``: each prompt).
GEMINI_EVENTS = ("BeforeAgent", "SessionStart", "SessionEnd", "BeforeTool", "AfterTool")
#: The tools each event's hook runs for (the others: every one): the agent's ``WRITE_TOOLS``, spelled
#: here too since the agent's module imports this one (tests/test_edit_guard.py checks they agree).
GEMINI_MATCHERS = {"BeforeTool": "write_file|replace"}

#: What ``install gemini`` says about trust: Gemini runs hooks only in a workspace it trusts, and
#: sidelight does not grant that trust itself.
GEMINI_TRUST_NOTE = (
    "the Gemini CLI runs hooks only in a trusted folder: trust it when Gemini asks "
    "(kept in ~/.gemini/trustedFolders.json), or set GEMINI_CLI_TRUST_WORKSPACE=true "
    "(or pass --skip-trust) in automation"
)


def _settings_path(home: Path | None) -> Path:
    if home is not None:
        return home / ".gemini" / "settings.json"
    from sidelight.config import Settings

    gemini = Settings.load().gemini_dir
    assert gemini is not None
    return gemini / "settings.json"


def install_gemini(*, home: Path | None = None) -> InstallResult:
    """Adds sidelight's hooks to the Gemini CLI's user ``settings.json`` (its other settings stay)."""
    path = _settings_path(home)
    timeout = HOOK_TIMEOUT * 1000
    result = install_hooks(
        "gemini", path, GEMINI_EVENTS, "Gemini CLI", timeout, comments=True, matchers=GEMINI_MATCHERS
    )
    return InstallResult(
        result.target, path, result.changed, result.message, result.backup, (GEMINI_TRUST_NOTE,)
    )


def uninstall_gemini(*, home: Path | None = None) -> InstallResult:
    """Removes sidelight's hooks (only those) from the Gemini CLI's ``settings.json``."""
    return uninstall_hooks("gemini", _settings_path(home), "Gemini CLI", comments=True)


#: ``sidelight install gemini`` (and ``uninstall``), registered by the agent's ``sidelight_installers``.
INSTALLER = InstallerSpec(
    name="gemini",
    install=lambda scope: [install_gemini()],
    uninstall=lambda scope: [uninstall_gemini()],
    description="hooks in ~/.gemini/settings.json (run only in a folder Gemini trusts)",
    scopes=("user",),
)
