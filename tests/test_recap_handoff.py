"""Delivering the recap: ``_handoff.md`` at session end (the watcher's sink) and the handoff to the next
session of the same workspace, once (Claude Code at SessionStart, Pi with its first prompt)."""

from __future__ import annotations

import json
import os
import time
from typing import TYPE_CHECKING, Any

import pytest

from sidelight.agents.claude_code import claude_sanitize
from sidelight.agents.pi.paths import pi_encode_cwd
from sidelight.config import ConfigError, Settings
from sidelight.features.hook import handle_hook
from sidelight.features.recap import handoff
from sidelight.plugins import Plugins
from sidelight.records import Session, SinkEvent
from sidelight.templates import handoff as handoff_plugin
from tests.conftest import ROOT

if TYPE_CHECKING:
    from pathlib import Path

DATA = ROOT / "tests" / "data"
OLD = time.time() - 3600  # an hour ago: quiet long enough to count as ended


def claude_transcript(home: Path, workspace: Path, session_id: str, mtime: float | None = OLD) -> Path:
    """The real Claude Code sample, as if it had run in ``workspace`` under ``home``."""
    text = (DATA / "claude-code" / "four-tools-resume.jsonl").read_text(encoding="utf-8")
    text = text.replace("/tmp/sidelight-samples/claude-code/project", str(workspace))
    text = text.replace("efe363b5-b821-4830-99c4-b4c7fff4e274", session_id)
    folder = home / ".claude" / "projects" / claude_sanitize(str(workspace))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{session_id}.jsonl"
    path.write_text(text, encoding="utf-8")
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def start(workspace: Path, session_id: str, home: Path, source: str = "startup") -> str | None:
    folder = home / ".claude" / "projects" / claude_sanitize(str(workspace))
    payload = {
        "session_id": session_id,
        "transcript_path": str(folder / f"{session_id}.jsonl"),
        "cwd": str(workspace),
        "hook_event_name": "SessionStart",
        "source": source,
    }
    return handle_hook("claude-code", json.dumps(payload), plugins=Plugins(entry_points=False))


def stored(workspace: Path) -> Path:
    """Where the handoff of ``workspace`` is kept (the state directory, by default)."""
    return handoff.handoff_path(workspace, Settings.load())


def context(output: str | None) -> str | None:
    if output is None:
        return None
    return str(json.loads(output)["hookSpecificOutput"]["additionalContext"])


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "work" / "proj"
    folder.mkdir(parents=True)
    return folder.resolve()


def test_the_next_claude_session_gets_the_handoff_once(home: Path, workspace: Path) -> None:
    claude_transcript(home, workspace, "11111111-1111-4111-8111-111111111111")
    text = context(start(workspace, "22222222-2222-4222-8222-222222222222", home))
    assert text is not None and text.startswith(handoff.FRAME)
    # The handoff's own title says "the previous session"; the recap under it names which one.
    assert text.startswith("[Handoff] sidelight's recap of the previous session in this workspace")
    assert f"{handoff.FRAME}\n\n# Recap of session claude 11111111\n" in text
    assert "previous session" not in text.removeprefix(handoff.FRAME)
    assert 'Last request: "What does notes.txt say now?"' in text
    assert "Files edited last: notes.txt." in text
    # The previous session had no handoff (no watcher ran): it was built, and written to the state
    # directory (0600), not to the project.
    written = handoff.read_handoff(stored(workspace))
    assert stored(workspace).stat().st_mode & 0o777 == 0o600
    assert not (workspace / "_handoff.md").exists()
    assert written is not None and written[0]["session"] == "claude-code:11111111-1111-4111-8111-111111111111"
    assert written[1].rstrip() in text
    # Once: a third session (or the same one starting again) gets nothing.
    assert start(workspace, "33333333-3333-4333-8333-333333333333", home) is None
    assert list((home / "state" / "handoffs" / "delivered").iterdir())


def test_a_written_handoff_is_used_as_it_is(home: Path, workspace: Path) -> None:
    previous = claude_transcript(home, workspace, "11111111-1111-4111-8111-111111111111")
    meta = {
        "session": "claude-code:11111111-1111-4111-8111-111111111111",
        "size": previous.stat().st_size,
        "transcript": str(previous),
    }
    stored(workspace).parent.mkdir(parents=True)
    stored(workspace).write_text(
        f"<!-- sidelight handoff {json.dumps(meta)} -->\nTHE RECAP\n", encoding="utf-8"
    )
    assert (
        context(start(workspace, "22222222-2222-4222-8222-222222222222", home))
        == f"{handoff.FRAME}\n\nTHE RECAP"
    )


def test_a_session_still_running_is_not_handed_off(home: Path, workspace: Path) -> None:
    claude_transcript(home, workspace, "11111111-1111-4111-8111-111111111111", mtime=None)  # written just now
    assert start(workspace, "22222222-2222-4222-8222-222222222222", home) is None
    # ... until its SessionEnd is recorded.
    end = {
        "session_id": "11111111-1111-4111-8111-111111111111",
        "cwd": str(workspace),
        "hook_event_name": "SessionEnd",
    }
    handle_hook("claude-code", json.dumps(end), plugins=Plugins(entry_points=False))
    assert context(start(workspace, "33333333-3333-4333-8333-333333333333", home)) is not None


def test_resumed_sessions_and_other_workspaces_get_none(home: Path, workspace: Path, tmp_path: Path) -> None:
    claude_transcript(home, workspace, "11111111-1111-4111-8111-111111111111")
    other = tmp_path / "elsewhere"
    other.mkdir()
    assert start(other.resolve(), "22222222-2222-4222-8222-222222222222", home) is None
    resumed = context(start(workspace, "11111111-1111-4111-8111-111111111111", home, source="resume"))
    assert resumed is None or handoff.FRAME not in resumed
    assert not (home / "state" / "handoffs" / "delivered").exists()


def test_handoffs_can_be_turned_off(home: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    claude_transcript(home, workspace, "11111111-1111-4111-8111-111111111111")
    monkeypatch.setenv("SIDELIGHT_HANDOFF", "off")
    assert start(workspace, "22222222-2222-4222-8222-222222222222", home) is None
    assert not (workspace / "_handoff.md").exists() and not stored(workspace).exists()


def test_a_broken_previous_transcript_never_breaks_the_hook(home: Path, workspace: Path) -> None:
    path = claude_transcript(home, workspace, "11111111-1111-4111-8111-111111111111")
    path.write_bytes(b"\x00\xff not json at all\n" * 10)
    os.utime(path, (OLD, OLD))
    assert start(workspace, "22222222-2222-4222-8222-222222222222", home) is None


def pi_payload(event: str, path: Path, workspace: Path, **extra: Any) -> str:
    return json.dumps(
        {
            "event": event,
            "session_file": str(path),
            "session_id": path.stem.split("_")[-1],
            "cwd": str(workspace),
            **extra,
        }
    )


def test_pi_gets_the_handoff_with_its_first_prompt(home: Path, workspace: Path) -> None:
    folder = home / ".pi" / "agent" / "sessions" / pi_encode_cwd(str(workspace))
    folder.mkdir(parents=True)
    text = (DATA / "pi" / "four-tools-continue.jsonl").read_text(encoding="utf-8")
    previous = folder / "2026-11-21T21-20-27-365Z_01a1fffb-62e4-7073-aed8-e9b7ed9e653b.jsonl"
    previous.write_text(text.replace("/tmp/sidelight-samples/pi/project", str(workspace)), encoding="utf-8")
    os.utime(previous, (OLD, OLD))
    current = (
        folder / "2026-11-22T09-00-00-000Z_0b1b2b3b-0000-4000-8000-000000000001.jsonl"
    )  # not written yet
    plugins = Plugins(entry_points=False)
    assert (
        handle_hook("pi", pi_payload("session_start", current, workspace, reason="startup"), plugins=plugins)
        is None
    )
    first = handle_hook(
        "pi", pi_payload("before_agent_start", current, workspace, prompt="go on"), plugins=plugins
    )
    assert first is not None and first.startswith(handoff.FRAME) and "Files edited last: notes.txt." in first
    assert "[Session Activity]" not in first  # the digest does not report what the handoff covered
    second = handle_hook(
        "pi", pi_payload("before_agent_start", current, workspace, prompt="and now?"), plugins=plugins
    )
    assert second is None or handoff.FRAME not in second


def test_opencode_gets_the_handoff_with_its_first_prompt(home: Path, workspace: Path) -> None:
    # opencode's plugin hears `session.created` but cannot add anything to the conversation then: in a
    # seven-agent run the handoff was claimed at that start ("delivered") and never reached the model.
    claude_transcript(home, workspace, "aaaaaaaa-0000-4000-8000-000000000001")
    plugins = Plugins(entry_points=False)
    sid = "ses_dee419ff5ffefi3iS3JbcViGcH"

    def event(name: str, **extra: str) -> str:
        return json.dumps({"event": name, "session_id": sid, "cwd": str(workspace), **extra})

    assert handle_hook("opencode", event("session.created"), plugins=plugins) is None
    first = handle_hook(
        "opencode", event("chat.message", message_id="msg_1", prompt="go on"), plugins=plugins
    )
    assert first is not None and first.startswith(handoff.FRAME) and "Files edited last: notes.txt." in first
    assert "[Session Activity]" not in first  # the digest does not report what the handoff covered
    second = handle_hook(
        "opencode", event("chat.message", message_id="msg_2", prompt="and now?"), plugins=plugins
    )
    assert second is None or handoff.FRAME not in second


def test_the_sink_writes_the_handoff_at_session_end(home: Path, workspace: Path) -> None:
    path = claude_transcript(home, workspace, "11111111-1111-4111-8111-111111111111")
    session = Session(
        key="claude-code:1111",
        name="notes",
        path=path,
        format="claude-code",
        group=str(workspace),
        resolver="claude-code",
        id="1111",
    )
    (sink,) = [s for s in Plugins(entry_points=False).sinks().values() if s.name == "handoff"]
    sink.emit(SinkEvent(kind="session_idle", session=session))
    assert not (workspace / "_handoff.md").exists()
    sink.emit(SinkEvent(kind="session_end", session=session, data={"reason": "timeout"}))
    sink.emit(SinkEvent(kind="session_end", session=session, data={"reason": "hook"}))  # queued once
    assert handoff_plugin.wait_for_handoffs(30), "the handoff writer finishes"
    assert handoff_plugin._writer is None  # and no thread is left behind
    assert not (workspace / "_handoff.md").exists()
    found = handoff.read_handoff(stored(workspace))
    assert found is not None
    meta, text = found
    assert meta == {"session": "claude-code:1111", "size": path.stat().st_size, "transcript": str(path)}
    assert text.startswith('# Recap of session claude 11111111 "notes"\n'), text
    assert not list(stored(workspace).parent.glob(".*.tmp"))
    # The same end again (read again by a watcher restarted after a crash): the handoff is not rewritten.
    before = stored(workspace).stat()
    time.sleep(0.01)
    sink.emit(SinkEvent(kind="session_end", session=session, data={"reason": "hook"}, key="k/end"))
    assert handoff_plugin.wait_for_handoffs(30)
    after = stored(workspace).stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


def test_the_sink_never_raises(home: Path, tmp_path: Path) -> None:
    session = Session(
        key="k",
        name="gone",
        path=tmp_path / "missing.jsonl",
        format="claude-code",
        group="/nonexistent",
        resolver="r",
    )
    handoff_plugin._on_event(
        SinkEvent(kind="session_end", session=session)
    )  # nothing to read: nothing written, no error
    assert handoff_plugin.wait_for_handoffs(30)


# -- where the handoff file goes --------------------------------------------------------------------


def git(workspace: Path, *args: str) -> str:
    import subprocess

    return subprocess.run(
        ["git", "-C", str(workspace), *args], check=True, capture_output=True, text=True
    ).stdout


def test_the_handoff_goes_to_the_project_when_configured_and_never_shows_in_git_status(
    home: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = workspace.parent
    git(repo, "init", "-q")
    claude_transcript(home, workspace, "11111111-1111-4111-8111-111111111111")
    monkeypatch.setenv("SIDELIGHT_HANDOFF_LOCATION", "project")
    assert stored(workspace) == workspace / "_handoff.md"
    assert context(start(workspace, "22222222-2222-4222-8222-222222222222", home)) is not None
    assert (workspace / "_handoff.md").is_file()
    assert (workspace / "_handoff.md").stat().st_mode & 0o777 == 0o644
    assert git(repo, "status", "--porcelain", "--untracked-files=all") == ""
    exclude = (repo / ".git" / "info" / "exclude").read_text(encoding="utf-8")
    assert exclude.splitlines().count("/proj/_handoff.md") == 1  # anchored to this workspace
    # Written again: listed once.
    handoff.store_handoff(workspace, Settings.load(), "again")
    assert (repo / ".git" / "info" / "exclude").read_text(encoding="utf-8") == exclude


def test_a_project_that_is_not_a_git_repository_just_gets_the_file(
    home: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SIDELIGHT_HANDOFF_LOCATION", "project")
    assert handoff.exclude_from_git(workspace / "_handoff.md") is None
    assert handoff.store_handoff(workspace, Settings.load(), "x") == workspace / "_handoff.md"


def test_the_handoff_location_setting(home: Path, tmp_path: Path) -> None:
    env = {"HOME": str(home), "SIDELIGHT_STATE_DIR": str(home / "state")}
    assert Settings.load(env=env).handoff_location == "state"
    config = tmp_path / "config.toml"
    config.write_text('handoff_location = "project"\n', encoding="utf-8")
    assert Settings.load(env={**env, "SIDELIGHT_CONFIG": str(config)}).handoff_location == "project"
    assert Settings.load(env={**env, "SIDELIGHT_HANDOFF_LOCATION": "state"}).handoff_location == "state"
    with pytest.raises(ConfigError, match="handoff_location"):
        Settings.load(env={**env, "SIDELIGHT_HANDOFF_LOCATION": "repo"})
    # Workspaces get folders of their own in the state directory.
    settings = Settings.load(env=env)
    first, second = (
        handoff.handoff_path(tmp_path / "a", settings),
        handoff.handoff_path(tmp_path / "b", settings),
    )
    assert first.parent.parent == second.parent.parent == home / "state" / "handoffs" and first != second


def test_a_volute_mind_s_handoff_is_in_its_workspace(home: Path, tmp_path: Path) -> None:
    mind = tmp_path / "minds" / "ada"
    (mind / ".volute" / "sessions").mkdir(parents=True)
    (mind / "home").mkdir()
    settings = Settings.load(env={**os.environ, "VOLUTE_MIND_DIR": str(mind)})  # volute runs the hook
    assert (
        handoff.handoff_path((mind / "home").resolve(), settings) == (mind / "home").resolve() / "_handoff.md"
    )


# -- only a new session gets it ---------------------------------------------------------------------


def test_a_session_that_ran_alongside_gets_no_handoff(home: Path, workspace: Path) -> None:
    claude_transcript(home, workspace, "11111111-1111-4111-8111-111111111111")
    # The other session's transcript already holds prompts from before the first one ended.
    claude_transcript(home, workspace, "22222222-2222-4222-8222-222222222222", mtime=time.time() - 7200)
    assert start(workspace, "22222222-2222-4222-8222-222222222222", home) is None
    assert not (home / "state" / "handoffs" / "delivered").exists()


def test_a_session_resumed_after_its_end_is_not_handed_off(home: Path, workspace: Path) -> None:
    sid = "11111111-1111-4111-8111-111111111111"
    claude_transcript(home, workspace, sid, mtime=time.time() - 30)
    events = [("SessionEnd", {}), ("SessionStart", {"source": "resume"})]
    for name, extra in events:
        payload = {"session_id": sid, "cwd": str(workspace), "hook_event_name": name, **extra}
        handle_hook("claude-code", json.dumps(payload), plugins=Plugins(entry_points=False))
    # It ended, then came back: it is running again, so a new session gets no handoff of it.
    assert start(workspace, "22222222-2222-4222-8222-222222222222", home) is None


def test_a_pi_session_that_ends_or_resumes_before_its_first_prompt_loses_its_handoff(
    home: Path, workspace: Path
) -> None:
    folder = home / ".pi" / "agent" / "sessions" / pi_encode_cwd(str(workspace))
    folder.mkdir(parents=True)
    text = (DATA / "pi" / "four-tools-continue.jsonl").read_text(encoding="utf-8")
    previous = folder / "2026-11-21T21-20-27-365Z_01a1fffb-62e4-7073-aed8-e9b7ed9e653b.jsonl"
    previous.write_text(text.replace("/tmp/sidelight-samples/pi/project", str(workspace)), encoding="utf-8")
    os.utime(previous, (OLD, OLD))
    current = folder / "2026-11-22T09-00-00-000Z_0b1b2b3b-0000-4000-8000-000000000001.jsonl"
    plugins = Plugins(entry_points=False)
    handle_hook("pi", pi_payload("session_start", current, workspace, reason="startup"), plugins=plugins)
    assert list((home / "state" / "handoffs" / "pending").iterdir())  # kept for its first prompt
    handle_hook("pi", pi_payload("session_shutdown", current, workspace), plugins=plugins)
    assert not list((home / "state" / "handoffs" / "pending").iterdir())  # ended before it: dropped
    handle_hook("pi", pi_payload("session_start", current, workspace, reason="resume"), plugins=plugins)
    out = handle_hook(
        "pi", pi_payload("before_agent_start", current, workspace, prompt="hi"), plugins=plugins
    )
    assert out is None or handoff.FRAME not in out


# -- the digest does not repeat what the handoff said -----------------------------------------------


def test_the_handoff_moves_the_digest_cursor_past_what_it_covered(home: Path, workspace: Path) -> None:
    from sidelight.cursors import CursorStore

    previous_id, current_id = "11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222"
    previous = claude_transcript(home, workspace, previous_id)
    assert context(start(workspace, current_id, home)) is not None
    store = CursorStore(home / "state" / "cursors" / f"claude-code_{current_id}.json")
    entry = store.read(f"claude-code:{current_id}")[f"claude-code:{previous_id}"]
    assert entry["offset"] == previous.stat().st_size and entry["inode"] == previous.stat().st_ino
    # The first prompt's digest has nothing to say about the session the handoff covered.
    folder = home / ".claude" / "projects" / claude_sanitize(str(workspace))
    prompt = {
        "session_id": current_id,
        "transcript_path": str(folder / f"{current_id}.jsonl"),
        "cwd": str(workspace),
        "hook_event_name": "UserPromptSubmit",
        "prompt": "go on",
    }
    assert handle_hook("claude-code", json.dumps(prompt), plugins=Plugins(entry_points=False)) is None


def test_the_plan_of_a_pi_first_prompt_shows_the_handoff_and_moves_nothing(
    home: Path, workspace: Path
) -> None:
    from sidelight.config import Settings
    from sidelight.features.hook import plan_event

    folder = home / ".pi" / "agent" / "sessions" / pi_encode_cwd(str(workspace))
    folder.mkdir(parents=True)
    text = (DATA / "pi" / "four-tools-continue.jsonl").read_text(encoding="utf-8")
    previous = folder / "2026-11-21T21-20-27-365Z_01a1fffb-62e4-7073-aed8-e9b7ed9e653b.jsonl"
    previous.write_text(text.replace("/tmp/sidelight-samples/pi/project", str(workspace)), encoding="utf-8")
    os.utime(previous, (OLD, OLD))
    current = folder / "2026-11-22T09-00-00-000Z_0b1b2b3b-0000-4000-8000-000000000001.jsonl"
    plugins = Plugins(entry_points=False)
    handle_hook("pi", pi_payload("session_start", current, workspace, reason="startup"), plugins=plugins)
    payload = pi_payload("before_agent_start", current, workspace, prompt="go on")
    event = plugins.injectors()["pi"].read_event(json.loads(payload))
    assert event is not None
    settings = Settings.load()
    state = settings.state_dir

    def snapshot() -> dict[str, bytes]:
        return {str(p): p.read_bytes() for p in state.rglob("*") if p.is_file() and p.name != "sidelight.log"}

    before = snapshot()
    plan = plan_event(event, settings, plugins, measure=True)
    assert snapshot() == before  # the pending handoff is still there, no cursor moved
    assert [b.name for b in plan.blocks] == ["handoff"] and plan.budget == settings.start_budget
    assert plan.text is not None and "[Session Activity]" not in plan.text
    assert handle_hook("pi", payload, plugins=plugins) == plan.text
