"""Only a person's prompt gets a digest: the prompt events a host fires for a turn no person typed get
nothing, and move no cursor (the news waits for the next typed prompt).

What the hosts send, seen offline with the real CLIs: Qwen Code calls its prompt hook again after each
tool batch with ``"prompt": ""``; Claude Code 2.1.330 calls it when a background command ends, with the
prompt ``<task-notification>\\n<task-id>...``, and when a ``/loop`` wakes up, with the loop's prompt and
nothing else (the ``ScheduleWakeup`` call that set it is in the transcript). Its input schema documents
a ``source`` field (``user``, ``sdk``, ``system``, ``loop_wakeup``, ``schedule_wakeup``, ``poll_event``)
that this version does not send yet.
"""

from __future__ import annotations

import json
import os
import time
from typing import TYPE_CHECKING, Any

import pytest

from sidelight.agents.claude_code import claude_sanitize
from sidelight.features.hook import handle_hook
from sidelight.plugins import Plugins
from tests.conftest import ROOT
from tests.test_recap_handoff import workspace as workspace  # the project folder fixture

if TYPE_CHECKING:
    from pathlib import Path

SAMPLE = ROOT / "tests" / "data" / "claude-code" / "four-tools-resume.jsonl"
SIBLING = "11111111-1111-4111-8111-111111111111"
CURRENT = "22222222-2222-4222-8222-222222222222"
HEADER = "[Session Activity]"

TASK_NOTIFICATION = (
    "<task-notification>\n<task-id>b16hgc6u4</task-id>\n"
    "<tool-use-id>toolu_mock_b60be5b0f810000000000001</tool-use-id>\n"
    "<output-file>/tmp/claude-0/tasks/b16hgc6u4.output</output-file>\n<status>completed</status>\n"
    '<summary>Background command "bg" completed (exit code 0)</summary>\n</task-notification>'
)


def project(home: Path, workspace: Path) -> Path:
    folder = home / ".claude" / "projects" / claude_sanitize(str(workspace))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def sibling(home: Path, workspace: Path) -> Path:
    """A Claude Code sibling with news (the real sample, as if it had run in ``workspace`` just now)."""
    text = SAMPLE.read_text(encoding="utf-8").replace(
        "/tmp/sidelight-samples/claude-code/project", str(workspace)
    )
    path = project(home, workspace) / f"{SIBLING}.jsonl"
    path.write_text(text.replace("efe363b5-b821-4830-99c4-b4c7fff4e274", SIBLING), encoding="utf-8")
    return path


def current(home: Path, workspace: Path, *lines: dict[str, Any]) -> Path:
    path = project(home, workspace) / f"{CURRENT}.jsonl"
    path.write_text(
        "".join(json.dumps(line, separators=(",", ":"), ensure_ascii=False) + "\n" for line in lines),
        encoding="utf-8",
    )
    return path


def schedule_wakeup(prompt: str) -> dict[str, Any]:
    """The assistant line of a ``ScheduleWakeup`` call, as Claude Code 2.1.330 writes it."""
    return {
        "type": "assistant",
        "sessionId": CURRENT,
        "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime()),
        "message": {
            "role": "assistant",
            "content": [
                {
                    "type": "tool_use",
                    "id": "toolu_1",
                    "name": "ScheduleWakeup",
                    "input": {"delaySeconds": 60, "reason": "wait", "prompt": prompt, "noop": False},
                }
            ],
        },
    }


def prompt(home: Path, workspace: Path, text: str, host: str = "claude-code", **extra: Any) -> str | None:
    payload = {
        "session_id": CURRENT,
        "transcript_path": str(project(home, workspace) / f"{CURRENT}.jsonl"),
        "cwd": str(workspace),
        "hook_event_name": "UserPromptSubmit",
        "prompt": text,
        **extra,
    }
    return handle_hook(host, json.dumps(payload), plugins=Plugins(entry_points=False))


def cursors(home: Path) -> list[Path]:
    folder = home / "state" / "cursors"
    return sorted(folder.iterdir()) if folder.is_dir() else []


def test_a_background_task_s_notification_gets_nothing_and_the_news_waits(
    home: Path, workspace: Path
) -> None:
    sibling(home, workspace)
    current(home, workspace)
    assert prompt(home, workspace, TASK_NOTIFICATION) is None
    assert cursors(home) == []  # nothing read, nothing moved
    said = prompt(home, workspace, "what did the others do?")
    assert said is not None and HEADER in said  # the person's next prompt hears it


@pytest.mark.parametrize(
    "text",
    [
        '<cross-session-message from="other">done with the parser</cross-session-message>',
        '<teammate-message teammate_id="a">ready</teammate-message>',
        "<agent-message>hello</agent-message>",
        "<tick>",
        "  \n<task-notification>\n<status>failed</status>\n</task-notification>",
    ],
)
def test_claude_code_s_own_envelopes_get_nothing(home: Path, workspace: Path, text: str) -> None:
    sibling(home, workspace)
    current(home, workspace)
    assert prompt(home, workspace, text) is None


def test_an_envelope_quoted_inside_a_typed_prompt_is_a_person_s(home: Path, workspace: Path) -> None:
    sibling(home, workspace)
    current(home, workspace)
    said = prompt(home, workspace, f"why did this come?\n{TASK_NOTIFICATION}")
    assert said is not None and HEADER in said


@pytest.mark.parametrize("source", ["system", "loop_wakeup", "schedule_wakeup", "poll_event", "later"])
def test_a_source_that_is_not_a_person_gets_nothing(home: Path, workspace: Path, source: str) -> None:
    sibling(home, workspace)
    current(home, workspace)
    assert prompt(home, workspace, "check the build", source=source) is None
    assert cursors(home) == []


@pytest.mark.parametrize("source", ["user", "sdk"])
def test_a_person_s_source_gets_the_digest(home: Path, workspace: Path, source: str) -> None:
    sibling(home, workspace)
    current(home, workspace, schedule_wakeup("check the build"))
    # The source says who wrote it: the scheduler call in the transcript does not matter then.
    said = prompt(home, workspace, "check the build", source=source)
    assert said is not None and HEADER in said


def test_a_loop_s_wakeup_gets_nothing(home: Path, workspace: Path) -> None:
    sibling(home, workspace)
    current(
        home, workspace, {"type": "user", "message": {"role": "user", "content": "/loop check the build"}}
    )
    # The person's "/loop" prompt gets the digest; the model schedules the wakeup.
    said = prompt(home, workspace, "/loop check the build")
    assert said is not None and HEADER in said
    sibling(home, workspace).write_text(
        sibling(home, workspace).read_text(encoding="utf-8") * 2, encoding="utf-8"
    )  # more news
    current(home, workspace, schedule_wakeup('check the "build" — ünïcode'))
    assert prompt(home, workspace, 'check the "build" — ünïcode') is None  # the wakeup
    said = prompt(home, workspace, "and what else?")  # typed: not the scheduled prompt
    assert said is not None and HEADER in said


def test_the_agent_sdk_callback_is_judged_the_same(home: Path, workspace: Path) -> None:
    sibling(home, workspace)
    current(home, workspace)
    assert prompt(home, workspace, TASK_NOTIFICATION, host="agent-sdk") is None
    said = prompt(home, workspace, "hello", host="agent-sdk")
    assert said is not None and HEADER in said


@pytest.mark.parametrize("kind", ["missing", "folder", "fifo", "unreadable"])
def test_a_transcript_that_cannot_be_read_is_a_person_s_prompt(
    home: Path, workspace: Path, kind: str
) -> None:
    sibling(home, workspace)
    path = project(home, workspace) / f"{CURRENT}.jsonl"
    if kind == "folder":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)  # never waited on
    elif kind == "unreadable":
        current(home, workspace, schedule_wakeup("check the build"))
        path.chmod(0)
        if os.access(path, os.R_OK):
            pytest.skip("root reads every file")
    said = prompt(home, workspace, "check the build")
    assert said is not None and HEADER in said


def test_qwen_s_empty_prompt_after_a_tool_batch_gets_nothing(home: Path, workspace: Path) -> None:
    sibling(home, workspace)
    qwen = home / ".qwen" / "projects" / "proj" / "chats"
    qwen.mkdir(parents=True)
    payload = {
        "session_id": "q1",
        "transcript_path": str(qwen / "q1.jsonl"),
        "cwd": str(workspace),
        "hook_event_name": "UserPromptSubmit",
        "prompt": "",
        "prompt_id": "p1",
    }
    assert handle_hook("qwen", json.dumps(payload), plugins=Plugins(entry_points=False)) is None
    assert cursors(home) == []
