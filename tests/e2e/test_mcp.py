"""`sidelight mcp` with the real Claude Code CLI as its client (docs/mcp.md).

Session one writes a file and runs a command. Session two, with no sidelight hook at all, only the MCP
server configured (`--mcp-config`, its digest tool allowed), has the model call `mcp__sidelight__digest`;
the request after it carries the tool's result: session one's digest line. Claude Code started the
server, and its registry (`~/.claude/sessions/<pid>.json`) names session two: the digest is session
two's, from its own cursors (the prompt hook's), and a second call has nothing new.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from sidelight.engine.paths import short_id
from sidelight.integrations.mcp_server import NO_NEWS
from sidelight.statelayout import CURSORS_DIR, MCP_DIR, session_path
from tests.e2e.conftest import DIGEST_HEADER, AgentEnv, sidelight_command
from tests.e2e.mockapi import bash, call, say, write

pytestmark = pytest.mark.e2e

TOOL = "mcp__sidelight__digest"


def tool_results(agents: AgentEnv) -> list[str]:
    """The text of every tool result the model was sent, oldest first (each once)."""
    seen: dict[str, str] = {}
    for request in agents.mock.model_requests("anthropic"):
        body: Any = request.body
        for message in body.get("messages") or [] if isinstance(body, dict) else []:
            content = message.get("content") if isinstance(message, dict) else None
            for block in content if isinstance(content, list) else []:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    inner = block.get("content")
                    text = (
                        inner
                        if isinstance(inner, str)
                        else "".join(b.get("text", "") for b in inner or [] if isinstance(b, dict))
                    )
                    seen.setdefault(str(block.get("tool_use_id")), text)
    return list(seen.values())


def test_claude_code_calls_the_digest_tool_and_the_model_gets_the_siblings_news(agents: AgentEnv) -> None:
    notes = agents.project / "notes.txt"
    agents.mock.set_script(
        [
            [bash("echo built > build.log"), write(str(notes), "release notes\n"), say("one: done")],
            [call(TOOL, {}), say("two: heard it")],
            [call(TOOL, {}), say("two: nothing new")],
        ]
    )
    one = agents.claude("one: build and write the notes")
    assert notes.read_text() == "release notes\n"

    config = agents.root / "mcp.json"
    server = {"type": "stdio", "command": sidelight_command()[0], "args": [*sidelight_command()[1:], "mcp"]}
    config.write_text(json.dumps({"mcpServers": {"sidelight": server}}))
    mcp = ["--mcp-config", str(config), "--strict-mcp-config", "--allowedTools", TOOL]
    two = agents.claude("two: what did the others do?", extra_args=mcp)
    assert one.session_id and two.session_id

    results = tool_results(agents)
    digests = [text for text in results if DIGEST_HEADER in text]
    assert digests, f"no digest in a tool result\n{results}\n{agents.mock.summary()}\n{two.stderr[-2000:]}"
    (line,) = [line for line in digests[0].splitlines() if line.startswith("- ")]
    assert line.startswith(f"- claude {short_id(one.session_id)} ("), digests[0]
    assert "wrote notes.txt" in line and "ran echo built > build.log" in line, line
    assert short_id(two.session_id) not in digests[0]  # the caller is session two: never reported

    # The caller was found in Claude Code's registry: session two's own cursors, not a connection's.
    state = agents.home / ".local" / "state" / "sidelight"
    assert session_path(state, CURSORS_DIR, f"claude-code:{two.session_id}", ".json").exists()
    assert not (state / MCP_DIR).exists()

    agents.claude("two: and now?", resume=two.session_id, extra_args=mcp)
    assert NO_NEWS in tool_results(agents)[-1]  # nothing is told twice
