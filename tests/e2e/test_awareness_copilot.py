"""Cross-session awareness with the real GitHub Copilot CLI (`copilot -p --allow-all-tools`, BYOK against
the mock) and `sidelight install copilot`.

Copilot's hooks file `~/.copilot/hooks/sidelight.json` runs `sidelight hook copilot` for
`userPromptSubmitted` (and session start and end); the top-level `additionalContext` reaches the
chat-completions request inside `<system_reminder>` in the prompt's own user message. Copilot unpacks
~235 MB into its cache on a HOME's first run: every test shares one cache (`copilot_cache`).
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


def test_copilot_and_claude_code_see_each_other(agents: AgentEnv) -> None:
    agents.install_sidelight("claude-code", "copilot")
    hooks = json.loads((agents.home / ".copilot" / "hooks" / "sidelight.json").read_text())
    assert hooks["hooks"]["userPromptSubmitted"][0]["bash"].endswith(" hook copilot")

    plan = agents.project / "plan.txt"
    notes = agents.project / "notes.txt"
    agents.mock.set_script(
        [
            [say("copilot: hello")],
            [write(str(plan), "the plan\n"), say("cc: planned")],
            [
                bash("echo built > build.log"),
                write(str(notes), "release notes\n"),
                edit(str(notes), "release", "final"),
                read(str(notes)),
                say("copilot: all set"),
            ],
            [say("cc: noted")],
        ]
    )
    copilot = agents.copilot("copilot: start")
    cc = agents.claude("cc: write the plan")
    assert copilot.session_id and cc.session_id and plan.exists()

    # (a) Copilot's prompt gets what the Claude Code sibling did.
    build = agents.copilot("copilot: build it", resume=copilot.session_id)
    assert build.transcript == copilot.transcript and notes.read_text() == "final notes\n"
    digest = digest_for(agents.mock, "copilot: build it")
    assert digest is not None, f"no digest reached the model\n{agents.sidelight_log}\n{agents.mock.summary()}"
    (line,) = [line for line in digest.splitlines() if line.startswith("- ")]
    assert line.startswith(f"- claude {short_id(cc.session_id)} ("), digest
    assert "wrote plan.txt" in line and "cc: planned" in line, digest

    # (b) A Claude Code prompt gets what the Copilot session did.
    agents.claude("cc: what did copilot do?", resume=cc.session_id)
    back = digest_for(agents.mock, "cc: what did copilot do?")
    assert back is not None, agents.sidelight_log
    (line,) = [line for line in back.splitlines() if line.startswith("- ")]
    assert line.startswith(f"- copilot {short_id(copilot.session_id)} ("), back
    assert "notes.txt" in line and "copilot: all set" in line, back

    # The events: the core's count is the reference counter's; our context (hook.end,
    # transformedContent) is in the file but no prompt.
    text = copilot.transcript.read_text()
    assert '"hook.end"' in text and "[Session Activity]" in text
    activity = sidelight.scan(copilot.transcript)
    assert activity.format == sidelight.Format.COPILOT
    expected = normalize(reference_scan(copilot.transcript, "copilot"))
    assert {k: v for k, v in normalize(activity.as_dict()).items() if k in expected} == expected
    assert activity.messages.user == 2 and activity.last_user_text == "copilot: build it"
    assert "[Session Activity]" not in json.dumps(activity.as_dict())
    assert (activity.categories.edit, activity.categories.read, activity.categories.command) == (2, 1, 1)
    assert activity.files_touched == (str(notes),)
    listed = agents.sidelight("sessions").stdout
    assert short_id(copilot.session_id) in listed and short_id(cc.session_id) in listed, listed
    assert "ERROR" not in agents.sidelight_log and "WARNING" not in agents.sidelight_log
