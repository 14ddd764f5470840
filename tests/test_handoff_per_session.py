"""What a session was handed is per session: a delivered handoff covers the ended session's work for
the session that received it only; every other session still hears of it in its digest.

The scenario of issue 31: a Claude Code session ended after a command; a new Codex session started and
got its recap (the handoff); a second new Codex session started, and before this rule it was told
nothing of the Claude Code session's work (its first look began where the delivered handoff ended).
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING

from sidelight.features.hook import handle_hook
from sidelight.features.recap import handoff
from sidelight.plugins import Plugins
from tests.test_person_prompts import CURRENT, prompt
from tests.test_recap_handoff import claude_transcript, context
from tests.test_recap_handoff import workspace as workspace  # the project folder fixture

if TYPE_CHECKING:
    from pathlib import Path

ENDED = "11111111-1111-4111-8111-111111111111"
CODEX_ONE = "01a1fffb-0000-7000-8000-000000000001"
CODEX_TWO = "01a1fffb-0000-7000-8000-000000000002"
HEADER = "[Session Activity]"


def ended_claude_session(home: Path, workspace: Path) -> Path:
    """A Claude Code session of ``workspace`` that ended an hour ago after a command (the real sample)."""
    return claude_transcript(home, workspace, ENDED)


def codex(home: Path, workspace: Path, session_id: str, event: str, **extra: str) -> str | None:
    """A Codex hook's answer (its text) for ``event`` of the new session ``session_id``."""
    rollout = (
        home
        / ".codex"
        / "sessions"
        / "2026"
        / "11"
        / "29"
        / f"rollout-2026-11-29T10-00-00-{session_id}.jsonl"
    )
    payload = {
        "session_id": session_id,
        "transcript_path": str(rollout),
        "cwd": str(workspace),
        "hook_event_name": event,
        **extra,
    }
    return context(handle_hook("codex", json.dumps(payload), plugins=Plugins(entry_points=False)))


def test_a_second_new_session_hears_of_the_work_handed_to_the_first(home: Path, workspace: Path) -> None:
    ended_claude_session(home, workspace)
    handed = codex(home, workspace, CODEX_ONE, "SessionStart", source="startup")
    assert handed is not None and handed.startswith(handoff.FRAME)  # the first new session got the recap
    assert codex(home, workspace, CODEX_TWO, "SessionStart", source="startup") is None  # once

    # The session that received it is not told it again...
    first = codex(home, workspace, CODEX_ONE, "UserPromptSubmit", prompt="go on")
    assert first is None or ENDED[:8] not in first, first
    # ...every other session is: the second new one hears of the Claude Code session's work.
    second = codex(home, workspace, CODEX_TWO, "UserPromptSubmit", prompt="what happened here?")
    assert second is not None and second.startswith(HEADER), second
    (line,) = [line for line in second.splitlines() if ENDED[:8] in line]
    assert line.startswith(f"- claude {ENDED[:8]} (") and "notes.txt" in line, second


def test_a_new_claude_code_session_too_and_only_once(home: Path, workspace: Path) -> None:
    ended_claude_session(home, workspace)
    assert codex(home, workspace, CODEX_ONE, "SessionStart", source="startup") is not None
    said = context(prompt(home, workspace, "what happened?"))  # a new Claude Code session, CURRENT
    assert said is not None and f"- claude {ENDED[:8]} (" in said, said
    assert prompt(home, workspace, "and now?") is None  # its own cursors keep it from hearing it twice
    assert CURRENT[:8] not in said


def test_what_the_ended_session_does_after_its_handoff_is_news_to_the_receiver(
    home: Path, workspace: Path
) -> None:
    ended = ended_claude_session(home, workspace)
    assert codex(home, workspace, CODEX_ONE, "SessionStart", source="startup") is not None
    line = json.loads(ended.read_text(encoding="utf-8").splitlines()[-1])
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())
    later = {**line, "uuid": "later", "timestamp": stamp, "type": "user"}
    later["message"] = {"role": "user", "content": "deploy it please"}
    with ended.open("a", encoding="utf-8") as file:
        file.write(json.dumps(later) + "\n")
    said = codex(home, workspace, CODEX_ONE, "UserPromptSubmit", prompt="go on")
    assert said is not None and "deploy it please" in said, said
    assert "What does notes.txt say now?" not in said  # only what the handoff did not cover


def test_no_covered_note_is_kept_for_everyone(home: Path, workspace: Path) -> None:
    # The handoff's cover is the receiver's digest cursor; nothing in the state directory applies it
    # to other sessions.
    ended_claude_session(home, workspace)
    assert codex(home, workspace, CODEX_ONE, "SessionStart", source="startup") is not None
    assert not (home / "state" / "handoffs" / "delivered" / "covered").exists()
