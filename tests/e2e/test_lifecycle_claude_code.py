"""A Claude Code session is resumed: the real CLI's hooks get a welcome back (`Welcome back. Session X
was idle for …`) from `sidelight hook claude-code` only after a real absence (the idle timeout), once,
with the session's last events at their own times, in order."""

from __future__ import annotations

import time

import pytest

from tests.e2e.conftest import AgentEnv
from tests.e2e.mockapi import bash, say, write

pytestmark = pytest.mark.e2e

WELCOME = "Welcome back. Session"


def request_with(agents: AgentEnv, prompt: str) -> str:
    requests = [r for r in agents.mock.model_requests() if prompt in r.text()]
    assert requests, agents.mock.summary()
    return requests[0].text()


def test_a_claude_code_session_is_welcomed_back_only_after_an_absence(agents: AgentEnv) -> None:
    agents.install_sidelight("claude-code")
    notes = agents.project / "notes.txt"
    agents.mock.set_script(
        [
            [bash("echo ok"), write(str(notes), "alpha\nbeta\n"), say("notes written")],
            [say("still here")],
            [say("still here again")],
            [say("you were writing notes")],
        ]
    )
    minute = {"SIDELIGHT_IDLE_TIMEOUT": "1m"}
    first = agents.claude("write the release notes", env=minute)
    assert first.session_id and notes.exists()
    # Resumed twice within a minute: no welcome back, at the start or with the prompt.
    agents.claude("quick check one", resume=first.session_id, env=minute)
    agents.claude("quick check two", resume=first.session_id, env=minute)
    for prompt in ("quick check one", "quick check two"):
        assert WELCOME not in request_with(agents, prompt), agents.sidelight_log

    # Quiet for longer than the idle timeout (short here: the CLI runs on the real clock).
    time.sleep(2.5)
    agents.claude("where was I?", resume=first.session_id, env={"SIDELIGHT_IDLE_TIMEOUT": "2s"})
    text = request_with(agents, "where was I?")
    assert text.count(WELCOME) == 1, text[-3000:]  # once: not from the start and again from the prompt
    block = text[text.index(WELCOME) :]
    assert "was idle for" in block and "Current task: quick check two" in block, block[:700]
    # Its last events, each at its own time, in the order they happened.
    order = [
        "Ran: echo ok",
        "notes.txt",
        "reply: notes written",
        "prompt: quick check one",
        "reply: still here",
        "prompt: quick check two",
        "reply: still here again",
    ]
    found = [block.find(f" {item}") for item in order[-4:]]
    assert all(i > 0 for i in found) and found == sorted(found), block[:700]
    assert "where was I?" not in block.split("Last events", 1)[1][:600]  # the prompt it comes with
    log = agents.sidelight_log
    assert log.count("resume context for") == 2, log  # kept at the start, given with the prompt
    assert "ERROR" not in log
