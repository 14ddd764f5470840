"""Completes ``package-lock.json`` with entries for the optional platform packages the registry here
does not serve (opencode's and Qwen Code's clipboard's builds for other systems), so that ``npm ci``
accepts the lock: ``npm install`` leaves out an optional package it cannot fetch, and ``npm ci`` then
refuses a lock that does not hold every dependency. npm skips these entries on install by their
``os``/``cpu``/``libc``, as it would skip complete ones.

    python -m tests.e2e.clients.complete_lock tests/e2e/clients/package-lock.json

Run it after ``npm install`` of a new CLI version, then check with ``npm ci`` in a clean folder.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def platform(name: str) -> tuple[str, str, str | None]:
    """``(os, cpu, libc)`` of a platform package, read from its name (``opencode-linux-arm64-musl``)."""
    short = name.rsplit("/", 1)[-1]
    windows = "win32" in short or "windows" in short
    system = "darwin" if "darwin" in short else "win32" if windows else "linux"
    cpu = "arm64" if "arm64" in short else "x64"
    libc = "musl" if "musl" in short else "glibc" if "gnu" in short else None
    return system, cpu, libc


def resolves(packages: dict[str, Any], at: str, name: str) -> bool:
    """Whether ``name`` required by the package at ``at`` has an entry where Node would look for it."""
    base = at
    while True:
        if (f"{base}/node_modules/{name}" if base else f"node_modules/{name}") in packages:
            return True
        if not base:
            return False
        cut = base.rfind("/node_modules/")
        base = base[:cut] if cut >= 0 else ""


def complete(lock: dict[str, Any]) -> list[str]:
    """Adds the missing optional packages to ``lock`` (in place); returns their names."""
    packages: dict[str, Any] = lock["packages"]
    added = []
    for at, entry in list(packages.items()):
        for name, version in (entry.get("optionalDependencies") or {}).items():
            if resolves(packages, at, name):
                continue
            system, cpu, libc = platform(name)
            made: dict[str, Any] = {"version": version, "cpu": [cpu], "optional": True, "os": [system]}
            if libc is not None:
                made["libc"] = [libc]
            packages[f"node_modules/{name}"] = made
            added.append(name)
    lock["packages"] = dict(sorted(packages.items(), key=lambda item: (item[0] != "", item[0])))
    return sorted(set(added))


def main(argv: list[str]) -> int:
    path = Path(argv[0]) if argv else Path(__file__).with_name("package-lock.json")
    lock = json.loads(path.read_text())
    added = complete(lock)
    path.write_text(json.dumps(lock, indent=2) + "\n")
    print(f"{len(added)} entries added: {', '.join(added) or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
