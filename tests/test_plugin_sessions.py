"""A plugin agent's folder variable (``ResolverSpec.variables``): a running watcher answers a hook only
when the hook was told the same folder, whatever the variable is called."""

from __future__ import annotations

import os
import types
from pathlib import Path

import pytest

from sidelight import hookimpl, warm
from sidelight.config import Settings
from sidelight.plugins import Plugins
from sidelight.records import ResolverSpec
from sidelight.watch.serve import HookServer


def _agent(variables: tuple[str, ...]) -> types.ModuleType:
    module = types.ModuleType("agentx_plugin")

    @hookimpl
    def sidelight_resolvers() -> list[ResolverSpec]:
        return [ResolverSpec("agentx", lambda s: [], lambda e, s: None, variables=variables)]

    module.sidelight_resolvers = sidelight_resolvers  # type: ignore[attr-defined]
    return module


def test_a_watcher_declines_a_hook_told_another_plugin_agent_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    for name in list(os.environ):
        if warm.told_to_watcher(name):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("SIDELIGHT_STATE_DIR", str(home / "state"))
    plugins = Plugins(entry_points=False)
    plugins.register(_agent(("AGENTX_HOME",)))
    watcher_env = {**os.environ, "AGENTX_HOME": "/agents/x", "JAVA_HOME": "/opt/java"}
    server = HookServer(Settings.load(), plugins, environ=watcher_env)
    server.start()
    try:
        hook_env = {**os.environ, "SIDELIGHT_WARM_TIMEOUT": "5s"}
        # The same folder (a variable no resolver declares may differ): the watcher answers ("": nothing
        # to say for this payload; None would be a decline).
        assert warm.ask_watcher("claude-code", b"{}", env={**hook_env, "AGENTX_HOME": "/agents/x"}) == ""
        assert server.answered == 1
        for other in ({"AGENTX_HOME": "/elsewhere"}, {}):
            assert warm.ask_watcher("claude-code", b"{}", env={**hook_env, **other}) is None
        assert (server.answered, server.declined) == (1, 2)
    finally:
        server.stop()


def test_a_variable_a_hook_does_not_tell_is_refused() -> None:
    with pytest.raises(ValueError, match="'AGENTX_PATH' does not start with SIDELIGHT_ nor end with _HOME"):
        ResolverSpec("agentx", lambda s: [], lambda e, s: None, variables=("AGENTX_PATH",))
    assert ResolverSpec("agentx", lambda s: [], lambda e, s: None, variables=("SIDELIGHT_X", "X_DIR"))
