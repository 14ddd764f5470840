"""Cross-session awareness with the real Qwen Code CLI (`qwen -p --yolo`) and `sidelight install qwen`.

Qwen Code speaks Claude Code's hook protocol (`UserPromptSubmit` in `~/.qwen/settings.json`); the digest
reaches the chat-completions request as a `<qwen:user-prompt-submit-context>` part of the prompt's own
user message. Qwen calls the hook again after every tool result with an empty prompt: sidelight answers
nothing then, so no context-only user message follows a tool result.
"""

from __future__ import annotations

import json

import pytest

import sidelight
from sidelight.engine.paths import short_id
from tests.e2e.conftest import AgentEnv, digest_for
from tests.e2e.mockapi import bash, edit, read, say, write
from tests.support.reference import normalize, reference_scan

pytestmark = pytest.mark.e2e

QWEN_CONTEXT = "<qwen:user-prompt-submit-context>"


def test_qwen_and_claude_code_see_each_other(agents: AgentEnv) -> None:
    agents.install_sidelight("claude-code", "qwen")
    settings = json.loads((agents.home / ".qwen" / "settings.json").read_text())
    assert settings["security"] == {"auth": {"selectedType": "openai"}}  # the user's settings are kept
    assert settings["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"].endswith(" hook qwen")

    plan = agents.project / "plan.txt"
    notes = agents.project / "notes.txt"
    agents.mock.set_script(
        [
            [say("qwen: hello")],
            [write(str(plan), "the plan\n"), say("cc: planned")],
            [
                bash("echo built > build.log"),
                write(str(notes), "release notes\n"),
                edit(str(notes), "release", "final"),
                read(str(notes)),
                say("qwen: all set"),
            ],
            [say("cc: noted")],
        ]
    )
    qwen = agents.qwen("qwen: start")
    cc = agents.claude("cc: write the plan")
    assert qwen.session_id and cc.session_id and plan.exists()

    # (a) Qwen's prompt gets what the Claude Code sibling did.
    build = agents.qwen("qwen: build it", resume=qwen.session_id)
    assert build.transcript == qwen.transcript and notes.read_text() == "final notes\n"
    digest = digest_for(agents.mock, "qwen: build it")
    assert digest is not None, f"no digest reached the model\n{agents.sidelight_log}\n{agents.mock.summary()}"
    (line,) = [line for line in digest.splitlines() if line.startswith("- ")]
    assert line.startswith(f"- claude {short_id(cc.session_id)} ("), digest
    assert "wrote plan.txt" in line and "cc: planned" in line, digest
    # The empty-prompt calls after the four tool results got nothing: no context-only user message.
    for request in agents.mock.model_requests("chat"):
        for message in request.body["messages"]:
            content = message.get("content")
            texts = [content] if isinstance(content, str) else [b.get("text", "") for b in content or []]
            if message["role"] == "user" and any(QWEN_CONTEXT in t for t in texts):
                assert any(t.strip() and QWEN_CONTEXT not in t for t in texts), message

    # (b) A Claude Code prompt gets what the Qwen session did.
    agents.claude("cc: what did qwen do?", resume=cc.session_id)
    back = digest_for(agents.mock, "cc: what did qwen do?")
    assert back is not None, agents.sidelight_log
    (line,) = [line for line in back.splitlines() if line.startswith("- ")]
    assert line.startswith(f"- qwen {short_id(qwen.session_id)} ("), back
    assert "notes.txt" in line and "qwen: all set" in line, back

    # The transcript: the core's count is the reference counter's, and our context is no prompt.
    activity = sidelight.scan(qwen.transcript)
    assert activity.format == sidelight.Format.QWEN
    expected = normalize(reference_scan(qwen.transcript, "qwen"))
    assert {k: v for k, v in normalize(activity.as_dict()).items() if k in expected} == expected
    assert activity.messages.user == 2 and activity.last_user_text == "qwen: build it"
    assert (activity.categories.edit, activity.categories.read, activity.categories.command) == (2, 1, 1)
    assert activity.files_touched == (str(notes),)
    listed = agents.sidelight("sessions").stdout
    assert short_id(qwen.session_id) in listed and short_id(cc.session_id) in listed, listed
    assert "ERROR" not in agents.sidelight_log and "WARNING" not in agents.sidelight_log
