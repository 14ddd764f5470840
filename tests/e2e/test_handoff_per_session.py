"""What a session was handed is per session, with the real Claude Code and Codex CLIs: a Claude Code
session ends after a command; a new Codex session gets its recap at its start; a second new Codex
session gets no recap, and its digest tells it of the Claude Code session's work."""

from __future__ import annotations

import pytest

from sidelight.engine.paths import short_id
from tests.e2e.conftest import DIGEST_HEADER, AgentEnv, digest_for
from tests.e2e.mockapi import bash, say
from tests.e2e.test_handoff_claude_code import RECAP_TITLE
from tests.e2e.test_handoff_claude_code import first_request_with as request_text

pytestmark = pytest.mark.e2e


def test_a_second_new_codex_session_hears_of_the_claude_code_session(agents: AgentEnv) -> None:
    agents.install_sidelight("claude-code", "codex")
    agents.mock.set_script(
        [
            [bash("echo migrated > migrate.log"), say("The migration ran.")],
            [say("codex one: picking up")],
            [say("codex two: looking")],
        ]
    )
    claude = agents.claude("run the database migration")
    assert claude.session_id and (agents.project / "migrate.log").exists()

    agents.codex("codex one: what was going on?")
    assert RECAP_TITLE in request_text(agents, "codex one: what was going on?"), agents.sidelight_log
    assert digest_for(agents.mock, "codex one: what was going on?") is None  # handed: not told again

    agents.codex("codex two: anything to know?")
    second = request_text(agents, "codex two: anything to know?")
    assert RECAP_TITLE not in second  # the handoff went once
    digest = digest_for(agents.mock, "codex two: anything to know?")
    assert digest is not None and digest.startswith(DIGEST_HEADER), agents.sidelight_log
    (line,) = [line for line in digest.splitlines() if short_id(claude.session_id) in line]
    assert line.startswith("- claude ") and "ran echo migrated > migrate.log" in line, digest
    assert "ERROR" not in agents.sidelight_log
