"""Liveness from Claude Code's own registry (issue 31, item 6), with the real CLI: while a session runs,
Claude Code keeps `~/.claude/sessions/<pid>.json`; a process killed mid-turn leaves it behind, naming a
pid that is gone. `sidelight status` then says the session has ended, though its transcript was written
a moment ago (by file times alone it would be active)."""

from __future__ import annotations

import json
import os
import signal
import time

import pytest

from tests.e2e.conftest import AgentEnv
from tests.e2e.mockapi import bash, say

pytestmark = pytest.mark.e2e


def states(agents: AgentEnv) -> dict[str, str]:
    lines = agents.sidelight("status", "--json").stdout.splitlines()  # one JSON object per session
    return {row["key"]: row["state"] for row in map(json.loads, lines)}


def test_a_killed_claude_code_session_is_not_running(agents: AgentEnv) -> None:
    agents.mock.set_script([[bash("python3 -c 'import time; time.sleep(60)'"), say("done")]])
    argv, env = agents.claude_command("wait for the build")
    registry = agents.home / ".claude" / "sessions"
    proc = agents.spawn(argv, env)  # its output is little: the pipes are read once it is killed
    try:
        record_file = registry / f"{proc.pid}.json"
        deadline = time.monotonic() + 60
        # Running: its record is there and its command is under way (the transcript holds the call).
        while time.monotonic() < deadline and not (
            record_file.exists()
            and any("time.sleep(60)" in p.read_text() for p in agents.claude_projects.rglob("*.jsonl"))
        ):
            assert proc.poll() is None, "claude exited early"
            time.sleep(0.2)
        record = json.loads(record_file.read_text())
        key = f"claude-code:{record['sessionId']}"
        assert record["pid"] == proc.pid and record["procStart"].isdigit()
        assert states(agents) == {key: "active"}
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
    # Killed: no SessionEnd, and the record stays, naming a dead process.
    assert record_file.exists()
    assert states(agents) == {key: "ended"}
