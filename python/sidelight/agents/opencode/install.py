"""``sidelight install opencode``: the plugin this folder ships (``plugin.ts``) copied to
``~/.config/opencode/plugin/sidelight.ts`` (``scope="user"``; ``XDG_CONFIG_HOME`` is honoured) or
``<cwd>/.opencode/plugin/sidelight.ts`` (``scope="project"``), with sidelight's command baked in; the
other files of that folder stay as they are.

Imported only when the installers are asked for (the agent's ``sidelight_installers``), never by a prompt.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from sidelight.install.command import script_source
from sidelight.install.ledger import install_file, uninstall_file
from sidelight.records import InstallerSpec

if TYPE_CHECKING:
    from sidelight.records import InstallResult

__all__ = [
    "INSTALLER",
    "OPENCODE_MARKER",
    "PLUGIN",
    "install_opencode",
    "opencode_plugin_path",
    "opencode_plugin_source",
    "uninstall_opencode",
]

#: The plugin shipped in this package.
PLUGIN = Path(__file__).resolve().parent / "plugin.ts"
#: Every file sidelight installs into opencode carries this marker, so uninstall removes only its own.
OPENCODE_MARKER = "sidelight-opencode-plugin"


def _is_ours(text: str) -> bool:
    return OPENCODE_MARKER in text


def opencode_plugin_path(scope: str = "user", *, home: Path | None = None, cwd: Path | None = None) -> Path:
    """Where the opencode plugin goes: opencode's user plugin folder (``$XDG_CONFIG_HOME/opencode``,
    else ``~/.config/opencode``), or the project's ``.opencode/plugin`` for ``scope="project"``."""
    if scope == "project":
        return (cwd or Path.cwd()) / ".opencode" / "plugin" / "sidelight.ts"
    if home is not None:
        config = home / ".config"
    else:
        xdg = os.environ.get("XDG_CONFIG_HOME", "").strip()
        config = Path(xdg) if xdg else Path(os.environ.get("HOME") or Path.home()) / ".config"
    return config / "opencode" / "plugin" / "sidelight.ts"


def opencode_plugin_source(command: list[str] | None = None) -> str:
    """The opencode plugin with ``command`` (default: :func:`sidelight.install.sidelight_command`)
    baked in."""
    return script_source(PLUGIN, "opencode plugin", command)


def install_opencode(
    scope: str = "user", *, home: Path | None = None, cwd: Path | None = None
) -> InstallResult:
    """Copies sidelight's opencode plugin into opencode's plugin folder (:func:`opencode_plugin_path`);
    the other files there stay as they are."""
    path = opencode_plugin_path(scope, home=home, cwd=cwd)
    return install_file("opencode", path, opencode_plugin_source(), "opencode plugin", _is_ours)


def uninstall_opencode(
    scope: str = "user", *, home: Path | None = None, cwd: Path | None = None
) -> InstallResult:
    """Removes sidelight's opencode plugin (only if it is sidelight's)."""
    return uninstall_file("opencode", opencode_plugin_path(scope, home=home, cwd=cwd), _is_ours)


#: ``sidelight install opencode`` (and ``uninstall``), registered by the agent's ``sidelight_installers``.
INSTALLER = InstallerSpec(
    name="opencode",
    install=lambda scope: [install_opencode(scope)],
    uninstall=lambda scope: [uninstall_opencode(scope)],
    description="the plugin ~/.config/opencode/plugin/sidelight.ts (project: ./.opencode/plugin)",
    scopes=("user", "project"),
)
