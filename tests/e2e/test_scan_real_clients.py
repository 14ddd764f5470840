"""Scan transcripts written by the real Claude Code, Pi and Codex CLIs, driven by the scripted mock API.

Each test makes the model call a shell, write, edit and read tool, scans what the CLI wrote with
`sidelight.scan` and checks the counts against the script and against
`tests.support.reference.reference_scan`.
A second prompt (`--resume` / `--session` / `codex exec resume`) checks that a cursor reads only the new
part of the same file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.e2e import mockapi
from tests.e2e.mockapi import Rule, bash, call, edit, read, say, write

if TYPE_CHECKING:
    from sidelight import Activity, Cursor
    from tests.e2e.conftest import AgentEnv

pytestmark = pytest.mark.e2e

FINAL_1 = "All four tools ran. SIDELIGHT-FINAL-ONE"
FINAL_2 = "The file says gamma. SIDELIGHT-FINAL-TWO"
CATEGORY_KEYS = ("edit", "read", "command", "other")


# --------------------------------------------------------------------------------------------- helpers


def scan(path: Path, fmt: str, cursor: Cursor | None = None) -> Activity:
    import sidelight  # lazily: the native core may not be built when this module is collected

    return sidelight.scan(path, format=fmt, cursor=cursor)


def detect(path: Path) -> str | None:
    import sidelight

    found = sidelight.detect_format(path)
    return None if found is None else str(getattr(found, "value", found))


def _normalized(result: dict[str, Any]) -> dict[str, Any]:
    from tests.support.reference import normalize

    return normalize(result)


def assert_matches_reference(activity: Activity, path: Path, fmt: str, tmp_path: Path) -> None:
    """Every key of the reference reader's result equals the native scan's (from the scan's start offset)."""
    from tests.support.reference import reference_scan  # lazily: written concurrently by another helper

    source = path
    if activity.start_offset:
        source = tmp_path / f"tail-{activity.start_offset}-{path.name}"
        with path.open("rb") as f:
            f.seek(activity.start_offset)
            source.write_bytes(f.read())
    expected = _normalized(reference_scan(source, fmt))
    got = _normalized(activity.as_dict())
    mismatched = {k: (got.get(k), v) for k, v in expected.items() if got.get(k) != v}
    assert not mismatched, (
        f"native scan != reference for {path} ({fmt}): {{key: (native, reference)}} = "
        + (json.dumps(mismatched, indent=1, default=str)[:6000])
    )


def lines_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def assert_common(activity: Activity, *, prompt: str, final: str) -> None:
    assert activity.messages.user == 1
    assert activity.first_user_text == prompt
    assert activity.last_assistant_text == final
    assert activity.first_timestamp, "first_timestamp missing"
    assert activity.last_timestamp, "last_timestamp missing"
    assert activity.first_timestamp <= activity.last_timestamp
    assert activity.skipped.malformed_json == activity.skipped.invalid_utf8 == activity.skipped.too_long == 0
    assert activity.pending_bytes == 0
    assert activity.reset is None


def categories(activity: Activity) -> dict[str, int]:
    return {k: getattr(activity.categories, k) for k in CATEGORY_KEYS}


def four_tools_script(target: Path) -> list[mockapi.Reply]:
    """The model runs a command, writes `target`, edits it, reads it back and answers with FINAL_1."""
    return [
        bash("echo sidelight-e2e"),
        write(str(target), "alpha\nbeta\n"),
        edit(str(target), "beta", "gamma"),
        read(str(target)),
        say(FINAL_1),
    ]


# --------------------------------------------------------------------------------------------- Claude Code


def test_claude_code_tools_and_resume(agents: AgentEnv, tmp_path: Path) -> None:
    target = agents.project / "notes.txt"
    prompt_1 = "Create notes.txt, then change beta to gamma."
    prompt_2 = "What does notes.txt say now?"
    agents.mock.set_script([four_tools_script(target), [bash(f"cat {target}"), say(FINAL_2)]])

    first = agents.claude(prompt_1)
    assert first.session_id, first.describe()
    path = first.transcript
    assert path.parent.parent == agents.claude_projects
    assert path.name == f"{first.session_id}.jsonl"
    assert target.read_text() == "alpha\ngamma\n", "the CLI did not run the scripted tools"
    assert first.output is not None and first.output.get("result") == FINAL_1
    assert agents.mock.turns_used == 1

    assert detect(path) == "claude-code"
    a1 = scan(path, "claude-code")
    assert_common(a1, prompt=prompt_1, final=FINAL_1)
    assert dict(a1.tools) == {"Bash": 1, "Write": 1, "Edit": 1, "Read": 1}
    assert categories(a1) == {"edit": 2, "read": 1, "command": 1, "other": 0}
    assert list(a1.files_touched) == [str(target)]
    assert [(u.name, u.primary_arg) for u in a1.tool_uses] == [
        ("Bash", "echo sidelight-e2e"),
        ("Write", str(target)),
        ("Edit", str(target)),
        ("Read", str(target)),
    ]
    assert a1.messages.assistant == 5  # one per model response (message.id), tool calls included
    assert a1.session_id == first.session_id
    assert a1.cwd == str(agents.project)
    assert a1.entry_types.get("attachment", 0) > 0  # the CLI's context lines are counted, not conversation
    assert_matches_reference(a1, path, "claude-code", tmp_path)

    second = agents.claude(prompt_2, resume=first.session_id)
    assert second.transcript == path, "--resume appends to the same transcript file"
    a2 = scan(path, "claude-code", cursor=a1.cursor)
    assert a2.start_offset == a1.offset
    assert_common(a2, prompt=prompt_2, final=FINAL_2)
    assert dict(a2.tools) == {"Bash": 1}
    assert categories(a2) == {"edit": 0, "read": 0, "command": 1, "other": 0}
    assert list(a2.files_touched) == []
    assert a2.messages.assistant == 2
    assert_matches_reference(a2, path, "claude-code", tmp_path)

    everything = scan(path, "claude-code")
    assert everything.messages.user == 2
    assert dict(everything.tools) == {"Bash": 2, "Write": 1, "Edit": 1, "Read": 1}
    assert everything.first_user_text == prompt_1
    assert everything.last_assistant_text == FINAL_2
    assert everything.offset == a2.offset
    assert_matches_reference(everything, path, "claude-code", tmp_path)


def test_claude_code_subagent_transcript(agents: AgentEnv, tmp_path: Path) -> None:
    marker = "SIDELIGHT-SUBAGENT-TASK"
    agents.mock.set_script(
        [
            [
                call(
                    "Agent",
                    {
                        "description": "Count the files",
                        "prompt": f"{marker}: count the files in the project",
                        "subagent_type": "general-purpose",
                        "run_in_background": False,
                    },
                ),
                say("The subagent counted them. MAIN-FINAL"),
            ]
        ],
        rules=[Rule(marker, (bash("ls | wc -l"), say("There are 0 files. SUB-FINAL")))],
    )
    run = agents.claude("Delegate counting the files to a subagent.")
    assert [r.decision for r in agents.mock.model_requests()] == ["turn", "rule", "rule", "turn"]
    main = run.transcript
    subs = run.subagent_transcripts
    assert len(subs) == 1, run.transcripts
    sub = subs[0]
    assert sub.parent == main.parent / main.stem / "subagents"
    assert sub.name.startswith("agent-")
    assert all(e.get("isSidechain") for e in lines_of(sub) if e.get("type") in ("user", "assistant"))

    a_main = scan(main, "claude-code")
    assert dict(a_main.tools) == {"Agent": 1}
    assert a_main.messages.user == 1
    assert a_main.last_assistant_text == "The subagent counted them. MAIN-FINAL"
    assert_matches_reference(a_main, main, "claude-code", tmp_path)

    assert detect(sub) == "claude-code"
    a_sub = scan(sub, "claude-code")
    assert a_sub.messages.user == 0  # the subagent's prompt is written by the parent agent
    assert dict(a_sub.tools) == {"Bash": 1}
    assert a_sub.last_assistant_text == "There are 0 files. SUB-FINAL"
    assert a_sub.session_id == run.session_id  # subagent lines carry the parent's sessionId
    assert_matches_reference(a_sub, sub, "claude-code", tmp_path)


# --------------------------------------------------------------------------------------------- Pi


def test_pi_tools_and_continue(agents: AgentEnv, tmp_path: Path) -> None:
    target = agents.project / "notes.txt"
    prompt_1 = "Create notes.txt, then change beta to gamma."
    prompt_2 = "What does notes.txt say now?"
    agents.mock.set_script([four_tools_script(target), [bash(f"cat {target}"), say(FINAL_2)]])

    first = agents.pi(prompt_1)
    assert first.stdout.strip() == FINAL_1, first.describe()
    path = first.transcript
    assert path.parent.parent == agents.pi_sessions
    assert target.read_text() == "alpha\ngamma\n", "the CLI did not run the scripted tools"

    assert detect(path) == "pi"
    a1 = scan(path, "pi")
    assert_common(a1, prompt=prompt_1, final=FINAL_1)
    assert dict(a1.tools) == {"bash": 1, "write": 1, "edit": 1, "read": 1}
    assert categories(a1) == {"edit": 2, "read": 1, "command": 1, "other": 0}
    assert list(a1.files_touched) == [str(target)]
    assert a1.messages.assistant == 5
    assert a1.session_id == first.session_id
    assert a1.cwd == str(agents.project)
    assert_matches_reference(a1, path, "pi", tmp_path)

    second = agents.pi(prompt_2, session=path)
    assert second.transcript == path, "--session appends to the same file"
    a2 = scan(path, "pi", cursor=a1.cursor)
    assert a2.start_offset == a1.offset
    assert_common(a2, prompt=prompt_2, final=FINAL_2)
    assert dict(a2.tools) == {"bash": 1}
    assert a2.messages.assistant == 2
    assert_matches_reference(a2, path, "pi", tmp_path)

    everything = scan(path, "pi")
    assert everything.messages.user == 2
    assert dict(everything.tools) == {"bash": 2, "write": 1, "edit": 1, "read": 1}
    assert_matches_reference(everything, path, "pi", tmp_path)


# --------------------------------------------------------------------------------------------- Codex


def test_codex_tools_and_resume(agents: AgentEnv, tmp_path: Path) -> None:
    target = agents.project / "notes.txt"
    prompt_1 = "Create notes.txt, then change beta to gamma."
    prompt_2 = "What does notes.txt say now?"
    agents.mock.set_script([four_tools_script(target), [bash(f"cat {target}"), say(FINAL_2)]])

    first = agents.codex(prompt_1)
    path = first.transcript
    assert agents.codex_sessions in path.parents
    assert path.name.startswith("rollout-")
    assert target.read_text() == "alpha\ngamma\n", (
        "the CLI did not run the scripted tools\n" + first.describe()
    )
    offered = agents.mock.model_requests("openai")[0].body["tools"]
    assert any(t.get("name") == "apply_patch" and t.get("type") == "custom" for t in offered)
    items = [e["payload"] for e in lines_of(path) if e.get("type") == "response_item"]
    assert [i["type"] for i in items if i["type"].endswith("_call")] == [
        "function_call",
        "custom_tool_call",
        "custom_tool_call",
        "function_call",
    ]

    assert detect(path) == "codex"
    a1 = scan(path, "codex")
    assert_common(a1, prompt=prompt_1, final=FINAL_1)
    # The read is a shell `cat`, so Codex shows two commands and two patches.
    assert dict(a1.tools) == {"exec_command": 2, "apply_patch": 2}
    assert categories(a1) == {"edit": 2, "read": 0, "command": 2, "other": 0}
    assert list(a1.files_touched) == [str(target)]
    assert [(u.name, u.primary_arg) for u in a1.tool_uses] == [
        ("exec_command", "echo sidelight-e2e"),
        ("apply_patch", str(target)),
        ("apply_patch", str(target)),
        ("exec_command", f"cat {target}"),
    ]
    assert a1.messages.assistant == 1  # tool calls are separate items, not assistant messages
    assert a1.session_id == first.session_id
    assert a1.cwd == str(agents.project)
    assert_matches_reference(a1, path, "codex", tmp_path)

    second = agents.codex(prompt_2, resume=first.session_id)
    assert second.transcript == path, "`codex exec resume` appends to the same rollout"
    a2 = scan(path, "codex", cursor=a1.cursor)
    assert a2.start_offset == a1.offset
    assert_common(a2, prompt=prompt_2, final=FINAL_2)
    assert dict(a2.tools) == {"exec_command": 1}
    assert_matches_reference(a2, path, "codex", tmp_path)

    everything = scan(path, "codex")
    assert everything.messages.user == 2
    assert dict(everything.tools) == {"exec_command": 3, "apply_patch": 2}
    assert_matches_reference(everything, path, "codex", tmp_path)
