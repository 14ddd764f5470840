"""The real Cline CLI (`cline --json PROMPT`, 3.0.65, `openai-compatible` against the mock) beside Claude
Code, with `sidelight install cline` (hook executables in `~/.cline/hooks/`).

Cline session A reads `app.py` and runs a long command; meanwhile Claude Code session B edits `app.py`;
A's `PostToolUse` hook tells A's model (a `<hook_context source="PostToolUse">` user message after the
command's result). A then runs a command and creates a file, and B's next prompt hears both in its
digest. Cline sends no per-prompt text, so the news and the guard's note are all it is told.
"""

from __future__ import annotations

import json

import pytest

from sidelight.features.news import NEWS_HEADER
from tests.e2e.conftest import AgentEnv, digest_for
from tests.e2e.mockapi import call, edit, read, say
from tests.e2e.test_guard import WAIT_FOR_B, _a_then_b

pytestmark = pytest.mark.e2e


def test_cline_hears_a_sibling_within_the_turn_and_is_heard_by_claude_code(agents: AgentEnv) -> None:
    agents.install_sidelight("claude-code", "cline")
    assert (agents.home / ".cline" / "hooks" / "PostToolUse").read_text().rstrip().endswith(" hook cline")
    app = agents.project / "app.py"
    app.write_text("VERSION = 0\n")
    notes = agents.project / "notes.txt"
    agents.mock.set_script(
        [
            [
                call("read_files", {"files": [{"path": str(app)}]}),
                call("run_commands", {"commands": [WAIT_FOR_B]}),
                call("run_commands", {"commands": ["echo built > build.log"]}),
                call("editor", {"path": str(notes), "new_text": "release notes\n"}),
                say("a: done"),
            ],
            [read(str(app)), edit(str(app), "VERSION = 0", "VERSION = 'b'"), say("b: bumped it")],
            [say("b: noted")],
        ]
    )
    b = _a_then_b(
        lambda: agents.cline("a: check the app"),
        lambda: agents.claude("b: bump the version"),
        "b: bump the version",
        "VERSION = 'b'\n",
        agents,
    )
    (a,) = [r for r in agents.runs if r.client == "cline"]
    assert a.session_id and notes.read_text() == "release notes\n"

    # A's model got the news in the request after its long command, once, as Cline's hook context.
    requests = [r for r in agents.mock.requests if r.turn == 0]
    text = agents.mock.all_text()
    assert NEWS_HEADER in text, f"{agents.sidelight_log}\n{agents.mock.summary()}"
    start = text.index(NEWS_HEADER)
    print(text[start : text.index("after you read or wrote it", start) + 26])  # the report quotes it
    assert f"- app.py was edited by claude session {b.stem[:8]}" in text
    assert requests[-1].text().count(NEWS_HEADER) == 1
    messages = json.loads(a.transcript.read_text())["messages"]
    told = [m for m in messages if (m.get("metadata") or {}).get("displayRole") == "system"]
    assert told and NEWS_HEADER in json.dumps(told)

    # B's next prompt hears what A did: the file it created and its command.
    agents.claude("b: what did cline do?", resume=b.stem)
    digest = digest_for(agents.mock, "b: what did cline do?")
    assert digest is not None, agents.sidelight_log
    (line,) = [line for line in digest.splitlines() if line.startswith("- cline ")]
    name = a.session_id.rsplit("_", 1)[-1]
    assert line.startswith(f"- cline {name} ("), digest
    assert "notes.txt" in line and "echo built > build.log" in line, digest
    print(line)
    assert NEWS_HEADER not in line  # sidelight's own text is never reported back

    # sidelight sessions, read, recap and status list and read it.
    assert name in agents.sidelight("sessions").stdout
    assert "a: check the app" in agents.sidelight("read", name).stdout
    assert "notes.txt" in agents.sidelight("recap", name).stdout
    assert name in agents.sidelight("status").stdout
    assert "ERROR" not in agents.sidelight_log and "WARNING" not in agents.sidelight_log
