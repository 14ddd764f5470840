"""``sidelight install copilot``: ``userPromptSubmitted``, ``sessionStart`` and ``sessionEnd`` hooks, a
``preToolUse`` hook of the write tools (the stale-write guard, docs/guard.md) and a ``postToolUse`` hook
of every tool (the news within the turn, docs/digest.md), in a file of sidelight's own,
``~/.copilot/hooks/sidelight.json`` (``COPILOT_HOME``). Copilot runs user-level hooks without a trust
step (a repository's ``.github/hooks`` would need its folder in ``trusted_folders``; sidelight does not
use them).

Imported only when the installers are asked for (the agent's ``sidelight_installers``), never by a prompt.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from sidelight.install.command import HOOK_TIMEOUT, hook_command, is_hook_command
from sidelight.install.ledger import InstallError, Ledger, uninstall_file
from sidelight.install.settings import dump_json, read_json
from sidelight.records import InstallerSpec, InstallResult

if TYPE_CHECKING:
    from pathlib import Path

__all__ = [
    "COPILOT_EVENTS",
    "COPILOT_MATCHERS",
    "INSTALLER",
    "copilot_hooks",
    "install_copilot",
    "uninstall_copilot",
]

#: The GitHub Copilot CLI hook events sidelight listens to.
COPILOT_EVENTS = ("userPromptSubmitted", "sessionStart", "sessionEnd", "preToolUse", "postToolUse")
#: The tools each event's hook runs for (the others: every one): the agent's ``WRITE_TOOLS``, spelled
#: here too since the agent's module imports this one (tests/test_guard_hosts.py checks they agree).
COPILOT_MATCHERS = {"preToolUse": "create|edit"}


def _hooks_path(home: Path | None) -> Path:
    if home is not None:
        return home / ".copilot" / "hooks" / "sidelight.json"
    from sidelight.config import Settings

    copilot = Settings.load().copilot_dir
    assert copilot is not None
    return copilot / "hooks" / "sidelight.json"


def copilot_hooks(command: str) -> dict[str, Any]:
    """The contents of ``~/.copilot/hooks/sidelight.json``: one command hook for each event (matched to
    :data:`COPILOT_MATCHERS` where it names the tools)."""
    hook = {"type": "command", "bash": command, "timeoutSec": HOOK_TIMEOUT}
    return {
        "version": 1,
        "hooks": {
            event: [{**hook, "matcher": COPILOT_MATCHERS[event]} if event in COPILOT_MATCHERS else dict(hook)]
            for event in COPILOT_EVENTS
        },
    }


def _holds_ours(data: dict[str, Any]) -> bool:
    hooks = data.get("hooks")
    return isinstance(hooks, dict) and any(
        isinstance(h, dict) and is_hook_command(h.get("bash"), "copilot")
        for groups in hooks.values()
        if isinstance(groups, list)
        for h in groups
    )


def install_copilot(*, home: Path | None = None) -> InstallResult:
    """Writes sidelight's hooks file for GitHub Copilot CLI, ``~/.copilot/hooks/sidelight.json``."""
    path = _hooks_path(home)
    data = read_json(path, "Copilot hooks file")
    if data and not _holds_ours(data):
        raise InstallError(f"{path} was not written by sidelight; not replacing it")
    wanted = copilot_hooks(hook_command("copilot"))
    if data == wanted:
        return InstallResult("copilot", path, False, f"already installed in {path}")
    verb = "installed the Copilot CLI hooks in"
    return Ledger("copilot", path).save(path, dump_json(wanted), verb, ours=_is_ours, whole=True)


def _is_ours(text: str) -> bool:
    try:
        data = json.loads(text)
    except ValueError:
        return False
    return isinstance(data, dict) and _holds_ours(data)


def uninstall_copilot(*, home: Path | None = None) -> InstallResult:
    """Removes sidelight's Copilot hooks file (only if it is sidelight's)."""
    path = _hooks_path(home)
    read_json(path, "Copilot hooks file")  # a broken file is refused before anything is done
    return uninstall_file("copilot", path, _is_ours)


#: ``sidelight install copilot`` (and ``uninstall``), registered by the agent's ``sidelight_installers``.
INSTALLER = InstallerSpec(
    name="copilot",
    install=lambda scope: [install_copilot()],
    uninstall=lambda scope: [uninstall_copilot()],
    description="~/.copilot/hooks/sidelight.json",
    scopes=("user",),
)
