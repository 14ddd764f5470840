"""The handoff with the real Claude Code CLI: a session ends, and the next new session of the same
workspace gets its recap at its start (`SessionStart` additionalContext), once; a resumed one does not,
and the project gets no `_handoff.md`."""

from __future__ import annotations

import pytest

from sidelight.engine.paths import short_id
from tests.e2e.conftest import DIGEST_HEADER, AgentEnv, digest_for
from tests.e2e.mockapi import bash, say, write

pytestmark = pytest.mark.e2e

#: A recap names its session by agent and id; "the previous session" is the handoff frame's word.
RECAP_TITLE = "# Recap of session claude "


def first_request_with(agents: AgentEnv, prompt: str) -> str:
    requests = [r for r in agents.mock.model_requests() if prompt in r.text()]
    assert requests, agents.mock.summary()
    return requests[0].text()


def test_the_next_claude_code_session_gets_the_handoff_once(agents: AgentEnv) -> None:
    agents.install_sidelight("claude-code")
    app = agents.project / "app.py"
    agents.mock.set_script(
        [
            [
                write(str(app), "def parse(text):\n    return text.split()\n"),
                bash("echo 3 passed"),
                say("The parser is fixed; the docs still need the new syntax."),
            ],
            [say("You were fixing the parser.")],
            [say("Yes.")],
            [say("Nothing to pick up.")],
        ]
    )
    first = agents.claude("fix the parser in app.py, then update the docs")
    assert first.session_id and app.exists()

    second = agents.claude("what was I doing?")
    assert second.session_id != first.session_id
    text = first_request_with(agents, "what was I doing?")
    assert text.count("[Handoff] sidelight's recap of the previous session") == 1, agents.sidelight_log
    assert f"{RECAP_TITLE}{short_id(first.session_id)}" in text, text[-3000:]
    assert "fix the parser in app.py, then update the docs" in text  # the last request
    assert "app.py" in text and "the docs still need the new syntax" in text  # files, where it stopped
    # The handoff file is kept in the state directory (0600), not in the project.
    assert not (agents.project / "_handoff.md").exists()
    (handoff,) = (agents.home / ".local" / "state" / "sidelight" / "handoffs").glob("*/_handoff.md")
    assert RECAP_TITLE in handoff.read_text(encoding="utf-8") and handoff.stat().st_mode & 0o777 == 0o600
    # Resumed, the second session gets no handoff again.
    agents.claude("still there?", resume=second.session_id)
    assert RECAP_TITLE not in first_request_with(agents, "still there?").split("still there?", 1)[1]

    # The third session gets the second one's recap: the first one's is not given twice, and the
    # recap injected into the second session is not echoed from its transcript. What was handed to the
    # second session is the second session's: the third still hears of the first in its digest.
    agents.claude("anything left?")
    third = first_request_with(agents, "anything left?")
    start = third.index(RECAP_TITLE)
    ends = [third.find(mark, start) for mark in (DIGEST_HEADER, "anything left?")]
    recap = third[start : min(end for end in ends if end > 0)]
    assert "fix the parser in app.py, then update the docs" not in recap, third[-3000:]
    digest = digest_for(agents.mock, "anything left?")
    assert digest is not None and f"- claude {short_id(first.session_id)} (" in digest, digest
    assert "ERROR" not in agents.sidelight_log
