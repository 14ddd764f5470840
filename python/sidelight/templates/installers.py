"""Built-in installer: ``sidelight install service``, the watcher as a systemd user unit or a launchd
agent (:mod:`sidelight.install.service` does the work), registered through ``sidelight_installers`` as a
plugin's installer is.

Each built-in agent registers its own installer from its folder (``sidelight/agents/<agent>/``).
``sidelight install skill`` is not here: it takes a folder (``--dir``), and the reader owns it.
"""

from __future__ import annotations

from sidelight._fast._hookimpl import hookimpl
from sidelight.records import InstallerSpec

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

    from sidelight.records import InstallResult


def _install(scope: str) -> list[InstallResult]:
    from sidelight.install.service import install_service  # the work, only when it is asked for

    return install_service()


def _uninstall(scope: str) -> list[InstallResult]:
    from sidelight.install.service import uninstall_service

    return uninstall_service()


@hookimpl
def sidelight_installers() -> Iterator[InstallerSpec]:
    yield InstallerSpec(
        name="service",
        install=_install,
        uninstall=_uninstall,
        description="a systemd user unit (Linux) or launchd agent (macOS) running 'sidelight watch'",
        scopes=("user",),
    )
