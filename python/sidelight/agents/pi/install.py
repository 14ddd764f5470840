"""``sidelight install pi``: the extension this folder ships (``extension.ts``) copied to
``~/.pi/agent/extensions/sidelight.ts`` (``PI_CODING_AGENT_DIR``), with sidelight's command baked in.

Imported only when the installers are asked for (the agent's ``sidelight_installers``), never by a prompt.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from sidelight.install.command import script_source
from sidelight.install.ledger import install_file, uninstall_file
from sidelight.records import InstallerSpec

if TYPE_CHECKING:
    from sidelight.records import InstallResult

__all__ = ["EXTENSION", "INSTALLER", "PI_MARKER", "install_pi", "pi_extension_source", "uninstall_pi"]

#: The extension shipped in this package.
EXTENSION = Path(__file__).resolve().parent / "extension.ts"
#: Every file sidelight installs into Pi carries this marker, so uninstall removes only its own.
PI_MARKER = "sidelight-pi-extension"


def _is_ours(text: str) -> bool:
    return PI_MARKER in text


def _extension_path(home: Path | None) -> Path:
    if home is not None:
        return home / ".pi" / "agent" / "extensions" / "sidelight.ts"
    from sidelight.config import Settings

    pi = Settings.load().pi_dir
    assert pi is not None
    return pi / "extensions" / "sidelight.ts"


def pi_extension_source(command: list[str] | None = None) -> str:
    """The Pi extension with ``command`` (default: :func:`sidelight.install.sidelight_command`) baked in."""
    return script_source(EXTENSION, "Pi extension", command)


def install_pi(*, home: Path | None = None) -> InstallResult:
    """Copies sidelight's Pi extension to ``~/.pi/agent/extensions/sidelight.ts``."""
    return install_file("pi", _extension_path(home), pi_extension_source(), "Pi extension", _is_ours)


def uninstall_pi(*, home: Path | None = None) -> InstallResult:
    """Removes sidelight's Pi extension (only if it is sidelight's)."""
    return uninstall_file("pi", _extension_path(home), _is_ours)


#: ``sidelight install pi`` (and ``uninstall``), registered by the agent's ``sidelight_installers``.
INSTALLER = InstallerSpec(
    name="pi",
    install=lambda scope: [install_pi()],
    uninstall=lambda scope: [uninstall_pi()],
    description="the extension ~/.pi/agent/extensions/sidelight.ts",
    scopes=("user",),
)
