"""News within the turn (docs/digest.md): after a tool call, a sibling's change of a file this session
read or wrote is told once, within its own budget, at most once per interval, and not again by the next
prompt's digest."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from sidelight.agents.claude_code import claude_project_dir
from sidelight.config import ConfigError, Settings
from sidelight.engine import repos
from sidelight.features import news
from sidelight.features.hook import handle_hook
from tests import test_edit_guard
from tests.test_edit_guard import A, B, World, collect
from tests.test_repository_scope import git


def after_tool(world: World, session: str = A, cwd: Path | None = None, **env: str) -> str | None:
    """The context ``sidelight hook claude-code`` gives the model after a tool call of ``session``."""
    payload = {
        "session_id": session,
        "transcript_path": str(world.transcript(session)),
        "cwd": str(cwd or world.project),
        "hook_event_name": "PostToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "ls"},
        "tool_response": {"stdout": "app.py"},
        "tool_use_id": "toolu_now",
    }
    settings = Settings.load(env={**os.environ, **env})
    printed: list[str | None] = []
    handle_hook("claude-code", json.dumps(payload), settings=settings, deliver=collect(printed))
    out = printed[0] if printed else None
    if out is None:
        return None
    answer = json.loads(out)["hookSpecificOutput"]
    assert answer["hookEventName"] == "PostToolUse"
    return str(answer["additionalContext"])


def prompt_digest(world: World, session: str = A) -> str | None:
    payload = {
        "session_id": session,
        "transcript_path": str(world.transcript(session)),
        "cwd": str(world.project),
        "hook_event_name": "UserPromptSubmit",
        "prompt": "next",
    }
    printed: list[str | None] = []
    handle_hook("claude-code", json.dumps(payload), deliver=collect(printed))
    out = printed[0] if printed else None
    return None if out is None else str(json.loads(out)["hookSpecificOutput"]["additionalContext"])


def edit(world: World, session: str, ago: float, path: Path | None = None) -> None:
    target = str(path or world.app)
    world.tool(session, ago, "Edit", {"file_path": target, "old_string": "1", "new_string": "2"})


#: A read app.py ten minutes ago; B started five minutes ago (the guard's tests' world).
world = test_edit_guard.world


@pytest.fixture
def no_interval(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(news, "NEWS_INTERVAL", 0.0)


def test_a_sibling_change_of_a_file_read_is_told_once(world: World, no_interval: None) -> None:
    edit(world, B, 120)
    note = after_tool(world)
    assert note is not None
    assert note.startswith(news.NEWS_HEADER)
    assert "- app.py was edited by claude session bbbbbbbb 2m ago, after you read or wrote it" in note
    assert len(note) <= news.NEWS_LIMIT
    assert after_tool(world) is None  # told once per change
    world.now = time.time()
    edit(world, B, 1)  # a new change of it: told again
    again = after_tool(world)
    assert again is not None and "app.py was edited by claude session bbbbbbbb just now" in again


def test_nothing_when_nothing_collides(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    other = world.project / "other.py"
    edit(world, B, 120, other)  # B changed a file A never touched
    world.tool(B, 100, "Read", {"file_path": str(world.app)})  # and read A's: no change
    assert after_tool(world) is None

    def never(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("no sibling wrote since the last look: nothing is read")

    monkeypatch.setattr(news, "_news", never)
    assert after_tool(world) is None  # the siblings' transcripts are only stat'ed
    assert (
        not (world.home / "state" / "sidelight.log").exists()
        or "AssertionError" not in (world.home / "state" / "sidelight.log").read_text()
    )


def test_at_most_one_note_per_interval_and_nothing_is_lost(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    edit(world, B, 120)
    assert after_tool(world) is not None
    world.now = time.time()
    edit(world, B, 1)
    assert after_tool(world) is None  # told lately: held back
    later = time.time() + news.NEWS_INTERVAL + 1
    monkeypatch.setattr(time, "time", lambda: later)
    held = after_tool(world)
    assert held is not None and "app.py was edited by claude session bbbbbbbb" in held


def test_the_next_digest_does_not_repeat_what_was_told(world: World, no_interval: None) -> None:
    edit(world, B, 120)
    assert after_tool(world) is not None
    digest = prompt_digest(world)
    assert digest is not None and "bbbbbbbb" in digest  # B's line is there
    assert "also touched by you" not in digest  # but not the change A heard of mid-turn


def test_the_digest_still_mentions_what_was_not_told(world: World) -> None:
    edit(world, B, 120)
    digest = prompt_digest(world)
    assert digest is not None and "[also touched by you: app.py]" in digest


def test_a_change_after_the_one_told_is_mentioned_by_the_digest(world: World, no_interval: None) -> None:
    edit(world, B, 120)
    assert after_tool(world) is not None
    world.now = time.time()
    edit(world, B, 1)  # changed again, not yet told
    digest = prompt_digest(world)
    assert digest is not None and "[also touched by you: app.py]" in digest


def test_a_change_before_this_turns_prompt_is_the_digests(world: World, no_interval: None) -> None:
    edit(world, B, 120)
    assert prompt_digest(world) is not None  # the prompt told it (and marked the turn's start)
    assert after_tool(world) is None


def test_the_same_path_in_another_worktree_is_told(home: Path, tmp_path: Path, no_interval: None) -> None:
    repos.forget()
    world = World(home)
    git(world.project, "init", "-q", "-b", "main")
    git(world.project, "add", ".")
    git(world.project, "commit", "-qm", "one")
    linked = tmp_path / "wt-feature"
    git(world.project, "worktree", "add", "-q", "-b", "feature-x", str(linked))
    world.prompt(A, 600)
    world.tool(A, 590, "Read", {"file_path": str(world.app)})
    # B works in the linked worktree: its own Claude Code project folder, its own app.py.
    other = World.__new__(World)
    other.__dict__.update(world.__dict__)
    other.project = linked
    other.folder = claude_project_dir(home / ".claude" / "projects", linked)
    other.folder.mkdir(parents=True)
    other.prompt(B, 300)
    other.calls = 100
    edit(other, B, 60, linked / "app.py")
    note = after_tool(world)
    assert note is not None
    assert "- app.py (in worktree feature-x) was edited by claude session bbbbbbbb 1m ago" in note
    assert after_tool(world) is None  # once
    assert after_tool(world, SIDELIGHT_SCOPE="directory") is None
    repos.forget()


def test_hostile_and_broken_input_tells_nothing_and_breaks_nothing(world: World, no_interval: None) -> None:
    with world.transcript(B).open("ab") as f:
        f.write(
            b'{"type": "assistant", "message": {"content": [{"type": "tool_use", "id": 7, "input": 3}]}}\n'
        )
        f.write(b"\x00\xff not json at all\n")
        f.write(
            b'{"type": "user", "timestamp": "yesterday", "message": {"content": [{"type": "tool_result"}]}}\n'
        )
    assert after_tool(world) is None
    # A broken ledger, a transcript that is not there: nothing, no error.
    ledger = world.home / "state" / "news"
    ledger.mkdir(parents=True, exist_ok=True)
    for file in ledger.iterdir():
        file.write_text('{"told": 5, "checked": "x", "noted": [1]}')
    edit(world, B, 30)
    note = after_tool(world)
    assert note is not None and "app.py" in note
    assert after_tool(world, session="cccccccc-0000-4000-8000-000000000000") is None
    log = world.home / "state" / "sidelight.log"
    assert not log.exists() or "Traceback" not in log.read_text()


def test_a_host_without_news_and_bad_hook_input_stay_silent(world: World) -> None:
    edit(world, B, 120)
    payload = {"hook_event_name": "PostToolUse", "session_id": 7, "transcript_path": 5}
    printed: list[str | None] = []
    handle_hook("claude-code", json.dumps(payload), deliver=collect(printed))
    handle_hook(
        "agent-sdk",
        json.dumps({**payload, "transcript_path": str(world.transcript(A))}),
        deliver=collect(printed),
    )
    assert printed == [None, None]


def test_the_installer_adds_and_removes_the_after_tool_hook(home: Path) -> None:
    from sidelight.agents.claude_code.install import install_claude_code, uninstall_claude_code

    install_claude_code(home=home)
    settings = json.loads((home / ".claude" / "settings.json").read_text())
    groups = settings["hooks"]["PostToolUse"]
    assert [g.get("matcher") for g in groups] == ["*"]
    uninstall_claude_code(home=home)
    path = home / ".claude" / "settings.json"
    assert not path.exists() or "PostToolUse" not in json.loads(path.read_text()).get("hooks", {})


def test_codex_hears_a_patch_of_a_file_its_command_read(home: Path, no_interval: None) -> None:
    from tests.test_edit_guard import _codex_line, iso

    project = home / "proj"
    project.mkdir()
    (project / "app.py").write_text("a = 1\n")
    now = time.time()
    folder = home / ".codex" / "sessions" / "2026" / "01" / "01"
    folder.mkdir(parents=True)
    ids = {n: f"0000000{n}-0000-4000-8000-000000000000" for n in "ab"}
    paths = {n: folder / f"rollout-2026-01-01T00-00-00-{ids[n]}.jsonl" for n in "ab"}
    for n, start in (("a", 600), ("b", 300)):
        meta = {"id": ids[n], "timestamp": iso(now - start), "cwd": str(project), "originator": "codex_exec"}
        paths[n].write_text(_codex_line(now - start, "session_meta", meta))

    def call(n: str, ago: float, item: dict[str, Any], output: dict[str, Any]) -> None:
        with paths[n].open("a") as f:
            f.write(_codex_line(now - ago, "response_item", item))
            f.write(_codex_line(now - ago + 1, "response_item", output))

    cat = {"type": "function_call", "name": "exec_command", "arguments": json.dumps({"cmd": "cat app.py"})}
    call("a", 590, {**cat, "call_id": "c1"}, {"type": "function_call_output", "call_id": "c1", "output": "a"})
    patch = "*** Begin Patch\n*** Update File: app.py\n@@\n-a = 1\n+a = 2\n*** End Patch\n"
    tool = {"type": "custom_tool_call", "name": "apply_patch", "input": patch, "call_id": "p1"}
    call("b", 120, tool, {"type": "custom_tool_call_output", "call_id": "p1", "output": "Success"})
    payload = {
        "session_id": ids["a"],
        "transcript_path": str(paths["a"]),
        "cwd": str(project),
        "hook_event_name": "PostToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "ls"},
        "tool_response": "app.py",
        "tool_use_id": "call_x",
    }
    printed: list[str | None] = []
    handle_hook("codex", json.dumps(payload), deliver=collect(printed))
    handle_hook("codex", json.dumps(payload), deliver=collect(printed))
    assert printed[0] is not None and printed[1] is None  # once
    note = json.loads(printed[0])["hookSpecificOutput"]["additionalContext"]
    assert "- app.py was edited by codex session 0000000b" in note, note


def test_a_note_records_when_it_looked(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    edit(world, B, 120)
    assert after_tool(world) is not None
    (state,) = (world.home / "state" / "news").iterdir()
    recorded = json.loads(state.read_text())
    assert recorded["checked"] > world.now - 5 and recorded["noted"] >= recorded["checked"]
    assert [item[1] for item in recorded["told"]] == [f"claude-code:{B}"]


def test_turn_news_off_does_nothing_after_a_tool(world: World, no_interval: None) -> None:
    # (the setting: SIDELIGHT_TURN_NEWS or turn_news; off returns before any plugin or transcript is read)
    edit(world, B, 120)
    assert after_tool(world, SIDELIGHT_TURN_NEWS="off") is None
    assert after_tool(world, SIDELIGHT_TURN_NEWS="On") is not None  # then on: the change is still news
    with pytest.raises(ConfigError, match="turn_news"):
        Settings.load(env={**os.environ, "SIDELIGHT_TURN_NEWS": "sometimes"})
