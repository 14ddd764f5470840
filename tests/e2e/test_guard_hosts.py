"""The stale-write guard with the real GitHub Copilot CLI (docs/guard.md), as tests/e2e/test_guard.py
does for the other hosts: session A views `app.py` and runs a long command; meanwhile session B edits
`app.py`; A's edit is refused once by its `preToolUse` hook, with a line naming B, and the retry goes
through."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sidelight.engine.paths import short_id
from sidelight.statelayout import export_dir
from tests.e2e.conftest import AgentEnv
from tests.e2e.mockapi import bash, edit, read, say
from tests.e2e.test_guard import WAIT_FOR_B, _a_then_b, _refusal

pytestmark = pytest.mark.e2e


def test_copilot_stale_edit_refused_once_then_retried(agents: AgentEnv) -> None:
    agents.install_sidelight("copilot")
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
        lambda: agents.copilot("a: rename the app"),
        lambda: agents.copilot("b: bump the version"),
        "b: bump the version",
        "VERSION = 'b'\nNAME = 'app'\n",
        agents,
    )

    line = _refusal(agents)
    print(line)  # the report quotes it
    assert f"app.py was edited by copilot session {short_id(b.parent.name)}" in line, line
    assert "Denied by preToolUse hook: sidelight stopped this write once" in agents.mock.all_text()
    assert app.read_text() == "VERSION = 'b'\nNAME = 'a'\n"  # A's retry went through, B's change kept
    assert "ERROR" not in agents.sidelight_log


def test_pi_stale_edit_blocked_once_then_retried(agents: AgentEnv) -> None:
    """sidelight's Pi extension asks before `edit`; its `{block: true, reason}` reaches the model as the
    tool's error result."""
    agents.install_sidelight("pi")
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
        lambda: agents.pi("a: rename the app"),
        lambda: agents.pi("b: bump the version"),
        "b: bump the version",
        "VERSION = 'b'\nNAME = 'app'\n",
        agents,
    )

    line = _refusal(agents)
    print(line)  # the report quotes it
    assert f"app.py was edited by pi session {b.stem[-8:]}" in line, line
    assert app.read_text() == "VERSION = 'b'\nNAME = 'a'\n"  # A's retry went through, B's change kept
    assert "ERROR" not in agents.sidelight_log


def test_opencode_stale_edit_refused_once_then_retried(agents: AgentEnv) -> None:
    """sidelight's opencode plugin asks before `edit` and throws the reason, which the model gets as
    the tool's result."""
    agents.opencode_setup()
    agents.install_sidelight("opencode")
    app = agents.project / "app.py"
    app.write_text("VERSION = 0\nNAME = 'app'\n")
    rename = edit(str(app), "NAME = 'app'", "NAME = 'a'")
    agents.mock.set_script(
        [
            [read(str(app)), bash(WAIT_FOR_B), rename, rename, say("a: done")],
            [read(str(app)), edit(str(app), "VERSION = 0", "VERSION = 'b'"), say("b: bumped it")],
        ]
    )
    exports = export_dir(agents.home / ".local" / "state" / "sidelight", "opencode")

    def run_b() -> Any:
        b = agents.opencode("b: bump the version")
        b.transcripts = sorted(Path(exports).glob("*.jsonl"))  # opencode's sessions: sidelight's export
        return b

    _a_then_b(
        lambda: agents.opencode("a: rename the app"),
        run_b,
        "b: bump the version",
        "VERSION = 'b'\nNAME = 'app'\n",
        agents,
    )

    line = _refusal(agents)
    print(line)  # the report quotes it
    assert "app.py was edited by opencode session" in line, line
    assert app.read_text() == "VERSION = 'b'\nNAME = 'a'\n"  # A's retry went through, B's change kept
    assert "ERROR" not in agents.sidelight_log
