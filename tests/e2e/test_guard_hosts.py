"""The stale-write guard with the real GitHub Copilot CLI, Pi and opencode (docs/guard.md), as
tests/e2e/test_guard.py does for the other hosts: session A reads `app.py` and runs a long command;
meanwhile session B edits `app.py`; A's edit is refused once (Copilot's `preToolUse` deny, Pi's
`{block: true, reason}` from sidelight's extension, the Error opencode's plugin throws), with a line
naming B, and the retry goes through."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sidelight.engine.paths import short_id
from sidelight.statelayout import export_dir
from tests.e2e.conftest import AgentEnv
from tests.e2e.mockapi import bash, edit, read, say
from tests.e2e.test_guard import WAIT_FOR_B, _a_then_b, _refusal

pytestmark = pytest.mark.e2e


def host_runner(agents: AgentEnv, host: str) -> Callable[[str], Any]:
    """Sets ``host`` up (Copilot, Pi or opencode) with sidelight installed; its runner, whose result's
    ``transcripts`` are sidelight's export for opencode (which keeps no transcript of its own)."""
    if host == "opencode":
        agents.opencode_setup()
    agents.install_sidelight(host)
    runners: dict[str, Callable[[str], Any]] = {
        "copilot": agents.copilot,
        "pi": agents.pi,
        "opencode": agents.opencode,
    }

    def run(prompt: str) -> Any:
        result = runners[host](prompt)
        if host == "opencode":
            exports = export_dir(agents.home / ".local" / "state" / "sidelight", host)
            result.transcripts = sorted(Path(exports).glob("*.jsonl"))
        return result

    return run


@pytest.mark.parametrize("host", ["copilot", "pi", "opencode"])
def test_stale_edit_refused_once_then_retried(agents: AgentEnv, host: str) -> None:
    run = host_runner(agents, host)
    app = agents.project / "app.py"
    app.write_text("VERSION = 0\nNAME = 'app'\n")
    rename = edit(str(app), "NAME = 'app'", "NAME = 'a'")
    agents.mock.set_script(
        [
            [read(str(app)), bash(WAIT_FOR_B), rename, rename, say("a: done")],
            [read(str(app)), edit(str(app), "VERSION = 0", "VERSION = 'b'"), say("b: bumped it")],
        ]
    )

    b = _a_then_b(
        lambda: run("a: rename the app"),
        lambda: run("b: bump the version"),
        "b: bump the version",
        "VERSION = 'b'\nNAME = 'app'\n",
        agents,
    )

    line = _refusal(agents)
    print(line)  # the report quotes it
    b_name = {"copilot": short_id(b.parent.name), "pi": b.stem[-8:], "opencode": ""}[host]
    assert f"app.py was edited by {host} session {b_name}" in line, line
    if host == "copilot":
        assert "Denied by preToolUse hook: sidelight stopped this write once" in agents.mock.all_text()
    assert app.read_text() == "VERSION = 'b'\nNAME = 'a'\n"  # A's retry went through, B's change kept
    assert "ERROR" not in agents.sidelight_log
