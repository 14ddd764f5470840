"""Factory Droid as a built-in agent (issue 32): its format on the sample the real CLI wrote, its resolver,
its injector's reading and answers, and ``sidelight install droid`` (docs/hosts-next.md)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

import sidelight
from sidelight.agents import droid
from sidelight.agents.droid import install as droid_install
from sidelight.config import Settings
from sidelight.plugins import Plugins
from sidelight.records import HostEvent
from tests.support.reference import normalize, reference_scan

SAMPLE = Path(__file__).parent / "data" / "droid" / "four-tools-resume.jsonl"
SAMPLE_ID = "e9399b42-0e12-466c-9529-4d3b84cf3d5b"
SAMPLE_CWD = "/tmp/sidelight-samples/droid/project"
PROMPT_1 = "Create notes.txt with two lines, then change beta to gamma and show me the file."


def place(home: Path, folder: str = "-tmp-sidelight-samples-droid-project") -> Path:
    target = home / ".factory" / "sessions" / folder / f"{SAMPLE_ID}.jsonl"
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(SAMPLE, target)
    return target


# --- the format -----------------------------------------------------------------------------------


def test_the_sample_counts_typed_prompts_only() -> None:
    """The real CLI's transcript holds sidelight's digest (a hook's record), system reminders and hook
    records of every tool: only the two prompts typed are the person's."""
    assert "[Session Activity]" in SAMPLE.read_text()
    activity = sidelight.scan(SAMPLE)
    assert activity.format == sidelight.Format.DROID
    assert (activity.messages.user, activity.messages.assistant) == (2, 7)
    assert activity.first_user_text == PROMPT_1
    assert activity.last_user_text == "What does notes.txt say now?"
    assert activity.last_assistant_text == "It says alpha and gamma."
    assert (activity.categories.edit, activity.categories.read, activity.categories.command) == (2, 1, 2)
    assert activity.files_touched == (f"{SAMPLE_CWD}/notes.txt",)
    assert (activity.session_id, activity.cwd) == (SAMPLE_ID, SAMPLE_CWD)
    expected = normalize(reference_scan(SAMPLE, "droid"))
    assert {k: v for k, v in normalize(activity.as_dict()).items() if k in expected} == expected


def test_a_droid_line_is_guessed_as_droids() -> None:
    assert sidelight.scan(SAMPLE, format="auto").format == sidelight.Format.DROID


def test_the_hooks_records_are_where_sidelights_text_is_found() -> None:
    lines = [json.loads(line) for line in SAMPLE.read_text().splitlines()]
    found = [v for line in lines for v in droid.injected_values(line)]
    texts = [v["hookSpecificOutput"]["additionalContext"] for v in found if isinstance(v, dict)]
    assert texts and all(t.startswith("[Session Activity]") for t in texts)
    assert not list(droid.injected_values({"type": "message", "message": {"hookResults": "odd"}}))
    assert list(
        droid.injected_values({"type": "message", "message": {"hookResults": [{"stdout": "x{"}]}})
    ) == ["x{"]


# --- the resolver ---------------------------------------------------------------------------------


def test_sessions_are_listed_grouped_by_working_directory_and_titled(home: Path) -> None:
    path = place(home)
    (path.parent / f"{SAMPLE_ID}.settings.json").write_text("{}")  # beside it: no session
    settings = Settings.load()
    (session,) = droid.list_sessions(settings)
    assert (session.key, session.id, session.path, session.format) == (
        f"droid:{SAMPLE_ID}",
        SAMPLE_ID,
        path,
        "droid",
    )
    assert session.group == SAMPLE_CWD
    assert session.name == PROMPT_1  # the session_start line's title
    assert droid.roots(settings) == [home / ".factory" / "sessions"]


def test_no_factory_folder_costs_nothing(home: Path) -> None:
    from sidelight.agents import agent_of

    settings = Settings.load()
    index = agent_of("sidelight.agents.droid")
    assert index is not None and index.sessions_here is not None
    assert (
        not index.sessions_here(settings)
        and droid.roots(settings) == []
        and not list(droid.list_sessions(settings))
    )
    place(home)
    assert index.sessions_here(settings) and droid.roots(settings)


def test_the_current_session_is_the_hooks_transcript(home: Path) -> None:
    path = place(home)
    settings = Settings.load()
    event = HostEvent(host="droid", event="UserPromptSubmit", session_id=SAMPLE_ID, transcript_path=path)
    current = droid.current(event, settings)
    assert current is not None and current.key == f"droid:{SAMPLE_ID}"
    # Without a transcript path: the session id in the folder Droid names after the working directory.
    event = HostEvent(host="droid", event="SessionStart", session_id="new-one", cwd=Path(SAMPLE_CWD))
    current = droid.current(event, settings)
    assert current is not None and current.id == "new-one" and current.group == SAMPLE_CWD
    assert current.path.parent.name == "-tmp-sidelight-samples-droid-project"
    # Another agent's transcript is not Droid's.
    other = HostEvent(host="claude-code", event="UserPromptSubmit", transcript_path=home / "x.jsonl")
    assert droid.current(other, settings) is None


def test_the_commands_list_read_and_recap_a_droid_session(home: Path, run_cli: Any) -> None:
    place(home)
    env = {"HOME": str(home), "SIDELIGHT_STATE_DIR": str(home / "state")}
    listed = [json.loads(line) for line in run_cli("sessions", "--json", env=env).stdout.splitlines()]
    (record,) = [r for r in listed if r["format"] == "droid"]
    assert record["key"] == f"droid:{SAMPLE_ID}" and record["user_messages"] == 2
    read = run_cli("read", SAMPLE_ID[:8], "--lines", "50", env=env)
    assert read.returncode == 0, read.stderr
    assert PROMPT_1 in read.stdout and "It says alpha and gamma." in read.stdout
    assert "[Session Activity]" not in read.stdout and "system-reminder" not in read.stdout
    recap = run_cli("recap", SAMPLE_ID[:8], env=env)
    assert recap.returncode == 0 and "notes.txt" in recap.stdout, recap.stderr
    status = run_cli("status", env=env)
    (row,) = [line for line in status.stdout.splitlines() if "  droid  " in line]
    assert status.returncode == 0 and row.startswith("Create notes.txt"), status.stdout + status.stderr


def test_the_dashboard_lists_and_reads_a_droid_session(home: Path) -> None:
    pytest.importorskip("starlette")
    from sidelight.dashboard.data import Board

    place(home)
    board = Board(Settings.load(), Plugins(entry_points=False))
    (row,) = [r for r in board.rows() if r["agent"] == "droid"]
    assert row["id"] == f"droid:{SAMPLE_ID}" and row["name"] == PROMPT_1
    detail = board.detail(row["id"])
    texts = [entry["text"] for entry in detail["conversation"] if entry["text"]]
    assert texts[0] == PROMPT_1 and texts[-1] == "It says alpha and gamma."
    assert [entry["tool"] for entry in detail["conversation"] if entry["tool"]] == [
        "Execute",
        "Create",
        "Edit",
        "Read",
        "Execute",
    ]
    assert detail["last_injected"] is not None and detail["last_injected"].startswith("(Session Activity)")
    assert detail["last_injected_where"] == "Droid's user_only hook records (hookResults[].stdout)"
    assert detail["recap"] and "notes.txt" in detail["recap"]


# --- the injector ---------------------------------------------------------------------------------


def _payload(event: str, **fields: Any) -> dict[str, Any]:
    return {
        "session_id": SAMPLE_ID,
        "transcript_path": f"/home/u/.factory/sessions/-p/{SAMPLE_ID}.jsonl",
        "cwd": "/p",
        "permission_mode": "auto-high",
        "hook_event_name": event,
        **fields,
    }


def test_droids_hook_input_is_read_as_claude_codes_protocol() -> None:
    injector = Plugins(entry_points=False).injectors()["droid"]
    prompt = injector.read_event(_payload("UserPromptSubmit", message_id="m", prompt="hi", has_images=False))
    assert prompt is not None and (prompt.host, prompt.event, prompt.prompt) == (
        "droid",
        "UserPromptSubmit",
        "hi",
    )
    answer = json.loads(injector.render(prompt, "[Session Activity] x") or "")
    assert answer == {
        "hookSpecificOutput": {
            "hookEventName": "UserPromptSubmit",
            "additionalContext": "[Session Activity] x",
        }
    }
    # Before a write tool: the guard's; before any other tool: nothing to do.
    write = injector.read_event(
        _payload("PreToolUse", tool_name="Create", tool_input={"file_path": "/p/a", "content": "x"})
    )
    assert write is not None and injector.refuse is not None
    refusal = json.loads(injector.refuse(write, "stale") or "")["hookSpecificOutput"]
    assert (refusal["permissionDecision"], refusal["permissionDecisionReason"]) == ("deny", "stale")
    assert (
        injector.read_event(_payload("PreToolUse", tool_name="Execute", tool_input={"command": "ls"})) is None
    )
    after = injector.read_event(
        _payload("PostToolUse", tool_name="Execute", tool_input={}, tool_response="ok")
    )
    assert after is not None and after.event == "PostToolUse"
    assert injector.read_event(_payload("Stop")) is None


def test_the_agent_says_what_each_droid_hook_can_do() -> None:
    agent = Plugins(entry_points=False).agent("droid")
    assert agent is not None and agent.title == "Factory Droid" and agent.timeout_unit == "s"
    assert agent.can("prompt", "inject") and agent.can("after_tool", "inject")
    assert agent.can("before_tool", "refuse") and not agent.can("before_tool", "inject")
    assert {"PreToolUse": "|".join(droid.WRITE_TOOLS)} == droid_install.DROID_MATCHERS
    assert {h.event for h in agent.hooks} == set(droid_install.DROID_EVENTS)


# --- the installer --------------------------------------------------------------------------------

THEIRS = {"type": "command", "command": "echo theirs", "timeout": 5}


def test_install_writes_top_level_event_keys_beside_the_users_and_uninstall_takes_exactly_its_own(
    home: Path, run_cli: Any
) -> None:
    path = home / ".factory" / "hooks.json"
    path.parent.mkdir(parents=True)
    mine = {"UserPromptSubmit": [{"hooks": [THEIRS]}], "Stop": [{"hooks": [THEIRS]}]}
    path.write_text(json.dumps(mine))
    env = {"HOME": str(home), "SIDELIGHT_STATE_DIR": str(home / "state")}
    done = run_cli("install", "droid", env=env)
    assert done.returncode == 0, done.stderr
    data = json.loads(path.read_text())
    assert "hooks" not in data  # Droid ignores a file wrapped in {"hooks": ...}
    assert set(data) == {*droid_install.DROID_EVENTS, "Stop"} and data["Stop"] == [{"hooks": [THEIRS]}]
    assert data["UserPromptSubmit"][0] == {"hooks": [THEIRS]}
    for event in droid_install.DROID_EVENTS:
        ours = [h for g in data[event] for h in g["hooks"] if h["command"].endswith(" hook droid")]
        assert len(ours) == 1 and ours[0]["timeout"] == 10, event  # seconds
    (guard,) = [g for g in data["PreToolUse"] if g["hooks"][0]["command"].endswith(" hook droid")]
    assert guard["matcher"] == "Create|Edit|MultiEdit|ApplyPatch"
    again = run_cli("install", "droid", env=env)
    assert again.returncode == 0 and json.loads(path.read_text()) == data
    # The user changes the file meanwhile: uninstall keeps that, and takes out only sidelight's entries.
    data["Notification"] = [{"hooks": [THEIRS]}]
    path.write_text(json.dumps(data))
    assert run_cli("uninstall", "droid", env=env).returncode == 0
    assert json.loads(path.read_text()) == {**mine, "Notification": [{"hooks": [THEIRS]}]}
    assert not droid_install.uninstall_droid(home=home).changed


def test_install_into_no_file_and_uninstall_leaves_none(home: Path) -> None:
    path = home / ".factory" / "hooks.json"
    assert droid_install.install_droid(home=home).changed
    assert set(json.loads(path.read_text())) == set(droid_install.DROID_EVENTS)
    assert droid_install.uninstall_droid(home=home).changed
    assert not path.exists()


@pytest.mark.parametrize("text", ["not json", "[1, 2]", '{"PreToolUse": {"a": 1}}'])
def test_a_hooks_file_it_cannot_read_is_left_alone(home: Path, text: str) -> None:
    from sidelight.install.ledger import InstallError

    path = home / ".factory" / "hooks.json"
    path.parent.mkdir(parents=True)
    path.write_text(text)
    with pytest.raises(InstallError):
        droid_install.install_droid(home=home)
    assert path.read_text() == text
