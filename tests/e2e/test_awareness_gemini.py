"""Cross-session awareness with the real Gemini CLI (`gemini -p`) and `sidelight install gemini`.

One project, a Gemini session and a Claude Code session: the Gemini CLI runs its shell, write, replace
and read tools against the mock; its chat is scanned and checked against the reference counter; a
Claude Code prompt gets a digest of the Gemini session's activity, and a Gemini prompt (through its
`BeforeAgent` hook, as a `<hook_context>` part of the user's message) gets one of Claude Code's new
activity. What sidelight injected never comes back as a Gemini prompt.
"""

from __future__ import annotations

import json

import pytest

from tests.e2e.conftest import AgentEnv, digest_for
from tests.e2e.mockapi import bash, edit, read, say, write
from tests.support.reference import normalize, reference_scan

pytestmark = pytest.mark.e2e


def test_gemini_and_claude_code_see_each_other(agents: AgentEnv) -> None:
    agents.install_sidelight("gemini", "claude-code")
    settings = json.loads((agents.home / ".gemini" / "settings.json").read_text())
    assert settings["security"]["auth"]["selectedType"] == "gemini-api-key"  # the user's settings stay
    assert [h["hooks"][0]["timeout"] for h in settings["hooks"]["BeforeAgent"]] == [10000]

    notes, plan = agents.project / "notes.txt", agents.project / "plan.md"
    agents.mock.set_script(
        [
            [say("claude: hello")],
            [
                bash("echo built > build.log"),
                write(str(notes), "alpha\nbeta\n"),
                edit(str(notes), "beta", "gamma"),
                read(str(notes)),
                say("gemini: notes fixed"),
            ],
            [say("claude: noted")],
            [write(str(plan), "the plan\n"), say("claude: plan written")],
            [say("gemini: seen")],
        ]
    )
    claude = agents.claude("claude: start")
    gemini = agents.gemini("gemini: please fix the notes")
    assert gemini.session_id and notes.read_text() == "alpha\ngamma\n"
    chat = gemini.transcript
    assert chat.parent.name == "chats" and chat.name.endswith(f"-{gemini.session_id[:8]}.jsonl")

    # (b) Claude Code hears what the Gemini session did.
    agents.claude("claude: what changed?", resume=claude.session_id)
    digest = digest_for(agents.mock, "claude: what changed?")
    assert digest is not None, (
        f"no digest reached Claude Code\n{agents.sidelight_log}\n{agents.mock.summary()}"
    )
    (line,) = [line for line in digest.splitlines() if line.startswith(f"- gemini {gemini.session_id[:8]} (")]
    assert '"gemini: please fix the notes"' in line, digest
    assert "notes.txt" in line and "ran echo built > build.log" in line, digest

    # (a) The Gemini session hears Claude Code's new activity, in its BeforeAgent hook's context.
    agents.claude("claude: write the plan", resume=claude.session_id)
    assert plan.read_text() == "the plan\n"
    agents.gemini("gemini: anything new?", resume=gemini.session_id)
    news = digest_for(agents.mock, "gemini: anything new?")
    assert news is not None, f"no digest reached Gemini\n{agents.sidelight_log}\n{agents.mock.summary()}"
    (line,) = [line for line in news.splitlines() if line.startswith("- claude ")]
    # Since its last look: Claude Code's two later prompts, the first of them quoted; "->" is sent as "→"
    # (Gemini would HTML-escape the ">").
    assert '"claude: what changed?" → wrote plan.md' in line, news
    assert "gemini:" not in news  # its own activity is not reported back to it

    # The chat, scanned, is what the reference counter reads; our digests are no prompts in it.
    import sidelight

    activity = sidelight.scan(chat)
    assert activity.format == sidelight.Format.GEMINI
    scanned, reference = normalize(activity.as_dict()), normalize(reference_scan(chat, "gemini"))
    assert {k: scanned[k] for k in reference} == reference
    assert activity.messages.user == 2, activity
    assert (activity.first_user_text, activity.last_user_text) == (
        "gemini: please fix the notes",
        "gemini: anything new?",
    )
    assert activity.tools == {"run_shell_command": 1, "write_file": 1, "replace": 1, "read_file": 1}
    assert activity.files_touched == (str(notes),)
    assert "[Session Activity]" in chat.read_text()  # stored in the chat, and still not counted
    assert "ERROR" not in agents.sidelight_log
