"""``sidelight install cline``: the executables Cline runs for its tool events, ``PreToolUse`` and
``PostToolUse``, written in ``~/.cline/hooks/`` (``$CLINE_DIR/hooks``); each one runs ``sidelight hook
cline`` with Cline's stdin. The other files of that folder stay as they are; a file of either name that
is not sidelight's is refused (nothing is changed), as Cline runs one executable per event.
``uninstall cline`` removes exactly sidelight's two.

Imported only when the installers are asked for (the agent's ``sidelight_installers``), never by a prompt.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from sidelight.install.command import hook_command
from sidelight.install.ledger import InstallError, install_file, read_text, uninstall_file
from sidelight.records import InstallerSpec

if TYPE_CHECKING:
    from sidelight.records import InstallResult

__all__ = ["CLINE_MARKER", "HOOK_EVENTS", "INSTALLER", "cline_hooks_dir", "install_cline", "uninstall_cline"]

#: The events whose executables sidelight writes (Cline's file names for them).
HOOK_EVENTS = ("PreToolUse", "PostToolUse")
#: Every hook file sidelight writes into Cline carries this marker, so uninstall removes only its own.
CLINE_MARKER = "sidelight-cline-hook"


def _is_ours(text: str) -> bool:
    return CLINE_MARKER in text


def cline_hooks_dir(home: Path | None = None) -> Path:
    """Cline's hooks folder: ``$CLINE_DIR/hooks``, else ``~/.cline/hooks``."""
    top = os.environ.get("CLINE_DIR", "").strip()
    if top and home is None:
        return Path(top) / "hooks"
    return (home or Path(os.environ.get("HOME") or Path.home())) / ".cline" / "hooks"


def hook_source(event: str) -> str:
    """The executable for ``event``: Cline's stdin handed to ``sidelight hook cline``; its answer (or
    nothing) is what Cline reads. It never fails Cline: sidelight's hook exits 0."""
    said = f"# {CLINE_MARKER}: Cline's {event} hook, written by `sidelight install cline`"
    return f"#!/bin/sh\n{said}\nexec {hook_command('cline')}\n"


def install_cline(scope: str = "user", *, home: Path | None = None) -> list[InstallResult]:
    """Writes sidelight's hook executables into Cline's hooks folder (:func:`cline_hooks_dir`)."""
    folder = cline_hooks_dir(home)
    for event in HOOK_EVENTS:  # all or nothing: refused before anything is written
        current = read_text(folder / event)
        if current is not None and not _is_ours(current):
            raise InstallError(
                f"{folder / event} exists and is not sidelight's (Cline runs one {event} executable); "
                "nothing was changed: move it away, then install again"
            )
    results = []
    for event in HOOK_EVENTS:
        path = folder / event
        results.append(install_file("cline", path, hook_source(event), f"Cline {event} hook", _is_ours))
        path.chmod(path.stat().st_mode | 0o111)
    return results


def uninstall_cline(scope: str = "user", *, home: Path | None = None) -> list[InstallResult]:
    """Removes sidelight's hook executables from Cline's hooks folder (only sidelight's)."""
    folder = cline_hooks_dir(home)
    return [uninstall_file("cline", folder / event, _is_ours) for event in HOOK_EVENTS]


#: ``sidelight install cline`` (and ``uninstall``), registered by the agent's ``sidelight_installers``.
INSTALLER = InstallerSpec(
    name="cline",
    install=install_cline,
    uninstall=uninstall_cline,
    description="the hook executables ~/.cline/hooks/PreToolUse and PostToolUse",
)
