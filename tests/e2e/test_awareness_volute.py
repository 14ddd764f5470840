"""A volute mind with named agent-sdk sessions (`main`, `discord`, `email`) run by the real Claude Code.

Each session runs in `<mind>/home` and is named by `.volute/sessions/NAME.json` (`{"sessionId": ...}`);
the digest shown to `main` names its siblings `discord` and `email`, and the cursors live in the mind's
`.volute/session-cursors.json`.
"""

from __future__ import annotations

import json

import pytest

from tests.e2e.conftest import AgentEnv, digest_for
from tests.e2e.mockapi import bash, say

pytestmark = pytest.mark.e2e


def test_volute_sessions_are_named(agents: AgentEnv) -> None:
    mind = agents.home / ".volute" / "minds" / "mind"  # where volute keeps its minds (so it is trusted)
    agents.project = mind / "home"  # volute runs its sessions in <mind>/home
    agents.project.mkdir(parents=True)
    sessions_dir = mind / ".volute" / "sessions"
    sessions_dir.mkdir(parents=True)
    agents.install_sidelight("claude-code")
    agents.mock.set_script(
        [
            [say("main: hi")],
            [say("discord: hi")],
            [say("email: hi")],
            [say("main: looked")],
            [bash("echo deployed > deploy.log"), say("discord: deployed")],
            [say("email: here is the summary")],
            [say("main: noted")],
        ]
    )
    ids = {}
    for name in ("main", "discord", "email"):
        ids[name] = agents.claude(f"{name}: hello").session_id
        (sessions_dir / f"{name}.json").write_text(json.dumps({"sessionId": ids[name]}))
    (sessions_dir / "new-pending.json").write_text(json.dumps({"sessionId": "not-a-real-session"}))

    agents.claude("main: first look", resume=ids["main"])
    agents.claude("discord: how do I deploy this?", resume=ids["discord"])
    agents.claude("email: summarize the inbox", resume=ids["email"])
    agents.claude("main: any news?", resume=ids["main"])

    digest = digest_for(agents.mock, "main: any news?")
    assert digest is not None, f"{agents.sidelight_log}\n{agents.mock.summary()}"
    lines = [line for line in digest.splitlines() if line.startswith("- ")]
    assert [line.split(" ")[1:3] for line in lines] == [["claude", "email"], ["claude", "discord"]], digest
    discord = lines[1]
    assert '"discord: how do I deploy this?" -> ran echo deployed > deploy.log' in discord, digest
    assert "email: summarize the inbox" in lines[0], digest
    assert "new-pending" not in digest and "main" not in [line.split(" ")[2] for line in lines]

    cursors = json.loads((mind / ".volute" / "session-cursors.json").read_text())
    assert any(key.endswith(":main") for key in cursors), cursors
