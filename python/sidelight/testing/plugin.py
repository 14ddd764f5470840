"""The pytest plugin of ``sidelight.testing`` (entry point ``pytest11``: ``sidelight``).

It only defines fixtures; nothing of sidelight is imported until a test asks for one, so projects that
have sidelight installed but do not use these fixtures pay nothing.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pathlib import Path

    from sidelight.config import Settings
    from sidelight.plugins import Plugins

#: Environment variables beside the agents' own that point sidelight at the real home's files.
_ISOLATED = ("XDG_STATE_HOME", "XDG_CONFIG_HOME")


def _isolated_variables() -> frozenset[str]:
    """The variables :func:`sidelight_home` removes besides ``SIDELIGHT_*``: :data:`_ISOLATED` and
    every built-in agent's folder variables (:attr:`sidelight.records.AgentSpec.variables`)."""
    from sidelight.plugins import Plugins

    agents = Plugins(entry_points=False).agents().values()
    return frozenset({*_ISOLATED, *(name for agent in agents for name in agent.variables)})


@pytest.fixture
def sidelight_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A throwaway HOME (``tmp_path / "home"``) with sidelight's state directory inside it.

    Every ``SIDELIGHT_*`` variable and the agents' own folder variables are removed for the test, so
    neither sidelight nor a resolver can reach the real home's transcripts or state.
    """
    home = tmp_path / "home"
    home.mkdir()
    isolated = _isolated_variables()
    for name in list(os.environ):
        if name.startswith("SIDELIGHT_") or name in isolated:
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("SIDELIGHT_STATE_DIR", str(home / "state"))
    return home


@pytest.fixture
def sidelight_settings(sidelight_home: Path) -> Settings:
    """Settings for the throwaway HOME (what a hook would load there)."""
    from sidelight.config import Settings

    return Settings.load(env=dict(os.environ), home=sidelight_home)


@pytest.fixture
def sidelight_plugins() -> Plugins:
    """A fresh plugin manager with the built-in templates and no installed plugin: register yours
    with ``sidelight_plugins.register(module)``. The process-wide manager is never touched."""
    from sidelight.plugins import Plugins

    return Plugins(entry_points=False)
