"""A built-in installer run in a test, as ``sidelight install NAME`` runs it, but with a HOME (``home``)
or a project folder (``cwd``) of the test's own: each agent's installer is its folder's ``install.py``
(``install_<agent>`` / ``uninstall_<agent>``); ``service`` is :mod:`sidelight.install.service`."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

    from sidelight.records import InstallResult

#: The installers that take a scope (``--scope project``); the others are the user's.
SCOPED = ("claude-code", "opencode")


def _run(
    target: str, *, install: bool, scope: str, home: Path | None, cwd: Path | None
) -> list[InstallResult]:
    verb = "install" if install else "uninstall"
    if target == "service":
        service = import_module("sidelight.install.service")
        done: Any = getattr(service, f"{verb}_service")(home=home)
    else:
        folder = target.replace("-", "_")
        function = getattr(import_module(f"sidelight.agents.{folder}.install"), f"{verb}_{folder}")
        done = function(scope, home=home, cwd=cwd) if target in SCOPED else function(home=home)
    return list(done) if isinstance(done, list) else [done]


def install(
    target: str, *, scope: str = "user", home: Path | None = None, cwd: Path | None = None
) -> list[InstallResult]:
    """What ``sidelight install TARGET`` does, in ``home`` (default: the test's ``HOME``)."""
    return _run(target, install=True, scope=scope, home=home, cwd=cwd)


def uninstall(
    target: str, *, scope: str = "user", home: Path | None = None, cwd: Path | None = None
) -> list[InstallResult]:
    """What ``sidelight uninstall TARGET`` does, in ``home`` (default: the test's ``HOME``)."""
    return _run(target, install=False, scope=scope, home=home, cwd=cwd)
