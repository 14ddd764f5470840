"""Kimi CLI 1.50.0 (`kimi --print -p`, PyPI, in a venv of its own: `make clients`) with sidelight.

Kimi's hooks send its model nothing but a `PreToolUse` refusal (docs/hosts-next.md), so it is told only
through the stale-write guard; it is seen by every other session: (a) a Claude Code session's digest
names what a Kimi session wrote and ran; (b) Kimi's stale edit is refused once, its model gets the
reason as the tool's result (`<system>ERROR: ...</system>`), and the retry goes through.
Skipped, with the reason, where the Kimi venv is missing (no Python 3.12 or 3.13 to build it with).
"""

from __future__ import annotations

import json
import tomllib

import pytest

import sidelight
from sidelight.engine.paths import short_id
from tests.e2e.conftest import KIMI_BIN, KIMI_VERSION, AgentEnv, digest_for
from tests.e2e.mockapi import bash, edit, read, say, write
from tests.e2e.test_guard import WAIT_FOR_B, _a_then_b, _refusal

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        not KIMI_BIN.exists(),
        reason=f"Kimi CLI {KIMI_VERSION} is not installed ({KIMI_BIN}): `make clients` builds it when a "
        "python3.13 or python3.12 is found",
    ),
]


def test_a_kimi_session_is_in_a_claude_code_digest(agents: AgentEnv) -> None:
    agents.install_sidelight("claude-code", "kimi")
    config = tomllib.loads((agents.home / ".kimi" / "config.toml").read_text())
    assert config["default_model"] == "mock"  # the user's settings are kept
    assert config["hooks"][0]["command"].endswith(" hook kimi")
    notes = agents.project / "notes.txt"
    agents.mock.set_script(
        [
            [
                write(str(notes), "release notes\n"),
                edit(str(notes), "release", "final"),
                bash("echo built > build.log"),
                say("kimi: notes done"),
            ],
            [say("cc: noted")],
        ]
    )
    run = agents.kimi("kimi: write the notes")
    assert run.session_id and notes.read_text() == "final notes\n"
    agents.claude("cc: what happened?")
    digest = digest_for(agents.mock, "cc: what happened?")
    assert digest is not None, agents.sidelight_log
    (line,) = [line for line in digest.splitlines() if line.startswith("- kimi ")]
    assert line.startswith(f"- kimi {short_id(run.session_id)} ("), digest
    assert "notes.txt" in line and "echo built" in line and "kimi: notes done" in line, digest
    # Nothing reached Kimi's own model from a prompt hook.
    assert "[Session Activity]" not in agents.mock.requests_containing("kimi: write the notes")[0].text()
    activity = sidelight.scan(run.transcript)
    assert activity.format == sidelight.Format.KIMI and activity.last_user_text == "kimi: write the notes"
    assert activity.files_touched == (str(notes),)
    listed = agents.sidelight("sessions").stdout
    assert short_id(run.session_id) in listed, listed
    assert "ERROR" not in agents.sidelight_log and "WARNING" not in agents.sidelight_log


def test_kimi_stale_edit_refused_once_then_retried(agents: AgentEnv) -> None:
    agents.install_sidelight("kimi")
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
        lambda: agents.kimi("a: rename the app"),
        lambda: agents.claude("b: bump the version"),
        "b: bump the version",
        "VERSION = 'b'\nNAME = 'app'\n",
        agents,
    )
    line = _refusal(agents)
    assert f"app.py was edited by claude session {short_id(b.stem)}" in line, line
    # Kimi's model got it as the edit's result, in Kimi's own error wrapper.
    results = {
        json.dumps(m["content"])
        for r in agents.mock.model_requests("chat")
        for m in r.body["messages"]
        if m.get("role") == "tool" and line in json.dumps(m["content"])
    }
    assert results, agents.mock.summary()
    print(sorted(results)[0])  # the report quotes it
    assert all("<system>ERROR: " in text for text in results), results
    assert app.read_text() == "VERSION = 'b'\nNAME = 'a'\n"  # A's retry went through, B's change kept
    assert "ERROR" not in agents.sidelight_log
