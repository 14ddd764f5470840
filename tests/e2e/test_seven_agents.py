"""Issue 20's "done when": the sessions of all seven agents, each written by its real CLI in one project,
are listed by `sidelight sessions` as siblings of one group, and each is a sibling the others' digests
can name."""

from __future__ import annotations

import json

import pytest

from tests.e2e.conftest import AgentEnv
from tests.e2e.mockapi import say

pytestmark = pytest.mark.e2e

SEVEN = ("claude-code", "codex", "pi", "gemini", "qwen", "copilot", "opencode")


def test_sessions_lists_all_seven_agents_in_one_project(agents: AgentEnv) -> None:
    agents.mock.set_script([[say(f"{agent} here")] for agent in SEVEN])
    agents.claude("claude: hello")
    agents.codex("codex: hello")
    agents.pi("pi: hello")
    agents.gemini("gemini: hello")
    agents.qwen("qwen: hello")
    agents.copilot("copilot: hello")
    agents.opencode("opencode: hello")

    listed = [json.loads(line) for line in agents.sidelight("sessions", "--json").stdout.splitlines()]
    formats = {row["format"] for row in listed}
    assert set(SEVEN) <= formats, listed
    groups = {row["group"] for row in listed if row["format"] in SEVEN}
    assert len(groups) == 1, listed  # one project: every one a sibling of every other
