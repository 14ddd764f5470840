"""The command a host runs: sidelight by absolute path, a hook's command line, and a shipped script
(a host's extension or plugin) with that command baked in.

Every hook calls sidelight by absolute path (:func:`sidelight_command`), so it works when sidelight's
virtual environment is not on ``PATH``.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

from sidelight.install.ledger import InstallError

__all__ = [
    "HOOK_TIMEOUT",
    "hook_command",
    "is_hook_command",
    "script_source",
    "shell_line",
    "sidelight_command",
]

#: Seconds the host waits for the hook (sidelight's own budget, ``time_budget``, is shorter).
HOOK_TIMEOUT = 10

#: The line of a shipped script that holds the command; :func:`script_source` rewrites it.
_INSTALLED_COMMAND_LINE = re.compile(r"^const INSTALLED_COMMAND: string\[\] = .*$", re.MULTILINE)


def sidelight_command() -> list[str]:
    """The command that runs this sidelight, by absolute path.

    In order: ``SIDELIGHT_BIN``; the ``sidelight`` script beside the running interpreter (a virtual
    environment's ``bin``); the script this process was started as; ``sidelight`` on ``PATH``; else this
    interpreter with ``-m sidelight``.
    """
    override = os.environ.get("SIDELIGHT_BIN", "").strip()
    if override:
        return shlex.split(override)
    names = ("sidelight.exe", "sidelight") if os.name == "nt" else ("sidelight",)
    candidates: list[Path] = []
    for name in names:
        candidates.append(Path(sys.executable).parent / name)
    argv0 = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if argv0 is not None and argv0.name in names:
        candidates.append(argv0)
    found = shutil.which("sidelight")
    if found:
        candidates.append(Path(found))
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return [str(candidate.absolute())]
    return [str(Path(sys.executable).absolute()), "-m", "sidelight"]


def shell_line(args: list[str]) -> str:
    """``args`` as one shell command line, each word quoted where it needs it."""
    return " ".join(shlex.quote(part) for part in args)


def hook_command(host: str) -> str:
    """The shell command a host's hook runs: ``sidelight hook HOST``, sidelight by absolute path
    (:func:`sidelight_command`), quoted for a shell."""
    return shell_line([*sidelight_command(), "hook", host])


def is_hook_command(command: Any, host: str) -> bool:
    """A hook command sidelight installed: ``... sidelight ... hook HOST``."""
    if not isinstance(command, str) or "sidelight" not in command:
        return False
    return re.search(rf"(^|\s)hook\s+{re.escape(host)}\s*$", command) is not None


def script_source(shipped: Path, what: str, command: list[str] | None = None) -> str:
    """A shipped TypeScript file (a host's extension or plugin) with ``command`` (default:
    :func:`sidelight_command`) baked into its ``INSTALLED_COMMAND`` line."""
    source = shipped.read_text(encoding="utf-8")
    argv = sidelight_command() if command is None else command
    line = f"const INSTALLED_COMMAND: string[] = {json.dumps(argv)};"
    new, n = _INSTALLED_COMMAND_LINE.subn(lambda _: line, source, count=1)
    if n != 1:  # pragma: no cover - the shipped file lost its marker line
        raise InstallError(f"the shipped {what} has no INSTALLED_COMMAND line")
    return new
