"""Installing sidelight into agent hosts, and removing it again: the API a plugin's installer uses.

``sidelight install NAME`` runs the installer registered as ``NAME`` (``sidelight_installers``): each
built-in agent's is in its folder (``sidelight/agents/<agent>/install.py``), the watcher's service is
:mod:`sidelight.install.service`, and a plugin brings its own. They share this package, by job:

- :mod:`sidelight.install.ledger`: what install wrote and how to give it back (backups, the record of
  each target, writing through a dotfiles manager's links), and :func:`install_file` /
  :func:`uninstall_file` for a file that is all sidelight's;
- :mod:`sidelight.install.command`: sidelight by absolute path, a hook's command line, a shipped
  script with that command baked in;
- :mod:`sidelight.install.settings` and :mod:`sidelight.install.jsonc`: a host's hook settings file
  (JSON or JSONC, the hooks table many hosts share), edited only where sidelight's entries go;
- :mod:`sidelight.install.service`: the watcher as a systemd user unit or a launchd agent.

Import it inside an installer's functions, not at the top of a plugin's module: a prompt hook loads the
plugin too, and needs none of it.
"""

from __future__ import annotations

from sidelight.install.command import hook_command, sidelight_command
from sidelight.install.ledger import InstallError, install_file, uninstall_file
from sidelight.records import InstallResult

__all__ = [
    "InstallError",
    "InstallResult",
    "hook_command",
    "install_file",
    "sidelight_command",
    "uninstall_file",
]
