"""Cross-session awareness with the real Pi CLI and the extension `sidelight install pi` puts in place.

The same story as with Claude Code: session 1 runs a command and writes a file, session 2's next prompt
carries a digest naming session 1 (as a `session-update` message right after the prompt), a prompt with
nothing new carries none, and session 1's later activity shows up, only the new part.
"""

from __future__ import annotations

import json

import pytest

from sidelight.engine.paths import short_id
from tests.e2e.conftest import DIGEST_HEADER, AgentEnv, digest_for
from tests.e2e.mockapi import bash, say, write

pytestmark = pytest.mark.e2e


def session_updates(run_transcript: object) -> list[str]:
    from pathlib import Path

    lines = Path(str(run_transcript)).read_text().splitlines()
    return [
        e["content"]
        for e in map(json.loads, lines)
        if e.get("type") == "custom_message" and e.get("customType") == "session-update"
    ]


def test_two_pi_sessions_see_each_other(agents: AgentEnv) -> None:
    agents.install_sidelight("pi")
    extension = agents.home / ".pi" / "agent" / "extensions" / "sidelight.ts"
    assert extension.is_file()

    notes = agents.project / "notes.txt"
    agents.mock.set_script(
        [
            [say("hello from one")],
            [say("hello from two")],
            [bash("echo built > build.log"), write(str(notes), "release notes\n"), say("one: all set")],
            [say("two: noted")],
            [say("two: still here")],
            [bash("ls -la"), say("one: listed")],
            [say("two: noted again")],
        ]
    )
    one = agents.pi("one: start")
    two = agents.pi("two: start")
    assert one.session_id and two.session_id and one.transcript != two.transcript
    agents.pi("one: please run the build and write notes", session=one.transcript)
    assert notes.read_text() == "release notes\n"

    agents.pi("two: what changed?", session=two.transcript)
    digest = digest_for(agents.mock, "two: what changed?")
    assert digest is not None, f"no digest reached the model\n{agents.sidelight_log}\n{agents.mock.summary()}"
    (line,) = [line for line in digest.splitlines() if line.startswith("- ")]
    assert short_id(one.session_id) in line, digest
    assert line.startswith(f"- pi {short_id(one.session_id)} ("), digest
    assert "-> wrote notes.txt; ran echo built > build.log" in line, digest
    assert "one: please run the build" in line, digest

    agents.pi("two: anything else?", session=two.transcript)
    assert digest_for(agents.mock, "two: anything else?") is None, agents.sidelight_log

    agents.pi("one: list the files", session=one.transcript)
    agents.pi("two: and now?", session=two.transcript)
    later = digest_for(agents.mock, "two: and now?")
    assert later is not None, agents.sidelight_log
    (line,) = [line for line in later.splitlines() if line.startswith("- ")]
    assert short_id(one.session_id) in line and "ran ls -la" in line, later
    assert "wrote" not in line and "please run the build" not in line, later

    # Pi stores each injection as a `session-update` custom message: session 2 got one on its first
    # prompt (session 1's handoff, as session 1 had ended: without a digest line about the same
    # activity, which the handoff moved session 2's cursor past) and the two above.
    stored = session_updates(two.transcript)
    assert len(stored) == 3 and all(DIGEST_HEADER in s for s in stored[1:]), stored
    assert stored[0].startswith("[Handoff]") and "one: start" in stored[0], stored[0]
    assert DIGEST_HEADER not in stored[0], stored[0]
    assert stored[1:] == [digest, later]
    assert "ERROR" not in agents.sidelight_log


def test_pi_session_events_are_recorded(agents: AgentEnv) -> None:
    agents.install_sidelight("pi")
    agents.mock.set_script([[say("one")]])
    agents.pi("only prompt")
    events_file = agents.home / ".local" / "state" / "sidelight" / "events.jsonl"
    assert events_file.exists(), agents.sidelight_log
    kinds = [json.loads(line)["event"] for line in events_file.read_text().splitlines()]
    assert "SessionStart" in kinds, kinds
