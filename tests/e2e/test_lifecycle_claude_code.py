"""A Claude Code session runs, goes idle, and comes back: the real CLI's resume hooks get the resume
context (`Welcome back. Session X was idle for …`) from `sidelight hook claude-code`."""

from __future__ import annotations

import time

import pytest

from tests.e2e.conftest import AgentEnv
from tests.e2e.mockapi import bash, say, write

pytestmark = pytest.mark.e2e

IDLE = {"SIDELIGHT_IDLE_TIMEOUT": "1s"}


def test_a_resumed_claude_code_session_is_welcomed_back(agents: AgentEnv) -> None:
    agents.install_sidelight("claude-code")
    notes = agents.project / "notes.txt"
    agents.mock.set_script(
        [
            [bash("echo ok"), write(str(notes), "alpha\nbeta\n"), say("notes written")],
            [say("you were writing notes")],
        ]
    )
    first = agents.claude("write the release notes", env=IDLE)
    assert first.session_id and notes.exists()
    time.sleep(1.5)  # longer than the idle timeout: the real CLI runs on the real clock

    agents.claude("where was I?", resume=first.session_id, env=IDLE)
    log = agents.sidelight_log
    # SessionStart (source: resume) got the resume context...
    assert "resume context for" in log and "at its start: Welcome back. Session" in log, log
    # ... and so did the first prompt after the idle spell, which reached the model with it.
    requests = [r for r in agents.mock.model_requests() if "where was I?" in r.text()]
    assert requests, agents.mock.summary()
    text = requests[0].text()
    assert "Welcome back. Session" in text and "was idle for" in text, text[-2000:]
    assert "write the release notes" in text  # the current task it was on
    assert "Created" in text and "notes.txt" in text  # its hot memory
    assert "ERROR" not in log
