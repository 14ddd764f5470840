"""The hook mechanisms sidelight will use, exercised with a trivial hook (not sidelight's).

They pin down what NOTES.md describes: how each CLI passes a prompt hook its input, where the injected
text reaches the model, and which transcript lines record it. The test that sidelight's own digest gets
through belongs to the hook feature. These tests only show that the pipes work.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.e2e.mockapi import bash, say

if TYPE_CHECKING:
    from tests.e2e.conftest import AgentEnv

pytestmark = pytest.mark.e2e

MARKER = "SIDELIGHT-HOOK-PLUMBING"

HOOK = """\
import json, sys
data = json.load(sys.stdin)
with open(sys.argv[1], "a") as log:
    log.write(json.dumps(data) + "\\n")
event = data["hook_event_name"]
context = "{marker} " + event + " " + str(data.get("prompt"))
print(json.dumps({{"hookSpecificOutput": {{"hookEventName": event, "additionalContext": context}}}}))
"""

PI_EXTENSION = """\
import { appendFileSync } from "node:fs";
export default function (pi: any) {
  pi.on("before_agent_start", async (event: any, ctx: any) => {
    appendFileSync(%(log)s, JSON.stringify({prompt: event.prompt, cwd: ctx.cwd,
      session_file: ctx.sessionManager.getSessionFile()}) + "\\n");
    const content = "%(marker)s before_agent_start " + event.prompt;
    return { message: { customType: "session-update", content, display: true } };
  });
}
"""


def hook_command(agents: AgentEnv) -> tuple[str, Path]:
    script = agents.root / "hook.py"
    script.write_text(HOOK.format(marker=MARKER))
    log = agents.root / "hook-log.jsonl"
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(script))} {shlex.quote(str(log))}", log


def logged(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def lines_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_claude_code_user_prompt_submit_context(agents: AgentEnv) -> None:
    command, log = hook_command(agents)
    agents.add_claude_hook("UserPromptSubmit", command)
    agents.mock.set_script([[bash("true"), say("one")], [say("two")]])
    first = agents.claude("first prompt")
    second = agents.claude("second prompt", resume=first.session_id)

    inputs = logged(log)
    assert [i["prompt"] for i in inputs] == ["first prompt", "second prompt"]
    assert {i["transcript_path"] for i in inputs} == {str(first.transcript)}
    assert all(i["session_id"] == first.session_id and i["cwd"] == str(agents.project) for i in inputs)

    requests = agents.mock.model_requests()
    assert len(requests) == 3  # two responses for the first prompt, one for the second
    first_ctx = f"UserPromptSubmit hook additional context: {MARKER} UserPromptSubmit first prompt"
    second_ctx = f"UserPromptSubmit hook additional context: {MARKER} UserPromptSubmit second prompt"
    assert all(first_ctx in r.text() for r in requests)  # and it stays in the history
    assert second_ctx in requests[2].text() and second_ctx not in requests[1].text()
    # A later turn's context is a `system` message right after the prompt.
    last = requests[2].body["messages"]
    assert last[-2]["role"] == "user" and "second prompt" in json.dumps(last[-2])
    assert last[-1]["role"] == "system" and second_ctx in json.dumps(last[-1])

    assert second.transcript == first.transcript
    attachments = [
        e["attachment"]
        for e in lines_of(first.transcript)
        if e.get("type") == "attachment" and e["attachment"].get("type") == "hook_additional_context"
    ]
    assert [a["content"] for a in attachments] == [
        [f"{MARKER} UserPromptSubmit first prompt"],
        [f"{MARKER} UserPromptSubmit second prompt"],
    ]
    for entry in lines_of(first.transcript):
        if entry.get("type") in ("user", "assistant"):
            assert MARKER not in json.dumps(entry), "hook text leaked into a conversation line"


def test_pi_before_agent_start_message(agents: AgentEnv) -> None:
    log = agents.root / "pi-hook-log.jsonl"
    agents.add_pi_extension("plumbing", PI_EXTENSION % {"log": json.dumps(str(log)), "marker": MARKER})
    agents.mock.set_script([[say("one")], [say("two")]])
    first = agents.pi("first prompt")
    agents.pi("second prompt", session=first.transcript)

    inputs = logged(log)
    assert [i["prompt"] for i in inputs] == ["first prompt", "second prompt"]
    assert {i["session_file"] for i in inputs} == {str(first.transcript)}

    requests = agents.mock.model_requests()
    assert len(requests) == 2
    messages = requests[1].body["messages"]
    texts = [(m["role"], json.dumps(m["content"])) for m in messages]
    assert texts[-2][0] == "user" and "second prompt" in texts[-2][1]
    assert texts[-1][0] == "user" and f"{MARKER} before_agent_start second prompt" in texts[-1][1]

    custom = [e for e in lines_of(first.transcript) if e.get("type") == "custom_message"]
    assert [(c["customType"], c["content"]) for c in custom] == [
        ("session-update", f"{MARKER} before_agent_start first prompt"),
        ("session-update", f"{MARKER} before_agent_start second prompt"),
    ]


def test_codex_user_prompt_submit_context(agents: AgentEnv) -> None:
    command, log = hook_command(agents)
    agents.add_codex_hook("UserPromptSubmit", command)
    agents.mock.set_script([[say("one")], [say("two")]])
    first = agents.codex("first prompt")
    agents.codex("second prompt", resume=first.session_id)

    inputs = logged(log)
    assert [i["prompt"] for i in inputs] == ["first prompt", "second prompt"]
    assert {i["transcript_path"] for i in inputs} == {str(first.transcript)}

    requests = agents.mock.model_requests("openai")
    assert len(requests) == 2
    items = requests[1].body["input"]
    context = f"{MARKER} UserPromptSubmit second prompt"
    assert items[-2]["role"] == "user" and "second prompt" in json.dumps(items[-2])
    assert items[-1]["role"] == "developer" and items[-1]["content"] == [
        {"type": "input_text", "text": context}
    ]

    developer = [
        e["payload"]
        for e in lines_of(first.transcript)
        if e.get("type") == "response_item" and e["payload"].get("role") == "developer"
    ]
    assert [d["content"][0]["text"] for d in developer if MARKER in json.dumps(d)] == [
        f"{MARKER} UserPromptSubmit first prompt",
        context,
    ]
