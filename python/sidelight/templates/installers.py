"""Built-in installer: ``sidelight install service``, the watcher as a systemd user unit or a launchd
agent (:mod:`sidelight.install.service`), registered through ``sidelight_installers`` as a plugin's
installer is.

Each built-in agent registers its own installer from its folder (``sidelight/agents/<agent>/install.py``).
``sidelight install skill`` is not here: it takes a folder (``--dir``), and the reader owns it.
"""

from __future__ import annotations

from sidelight._fast._hookimpl import hookimpl

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

    from sidelight.records import InstallerSpec


@hookimpl
def sidelight_installers() -> Iterator[InstallerSpec]:
    from sidelight.install.service import INSTALLER  # the work, only when the installers are asked for

    yield INSTALLER
