"""Session lifecycle: transitions on an injected clock, events, context, hot memory, snapshot, archive,
injected blocks and the built-in JSONL event log. Activities come from real scans of small transcripts."""

from __future__ import annotations

import gzip
import json
import logging
import stat
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import sidelight
from sidelight.features.lifecycle import (
    RESUME_LIMIT,
    LifecycleSettings,
    SessionState,
    SessionTracker,
    archive_session,
    entry_events,
    format_duration,
    hot_memory_line,
    resume_context,
    session_context_block,
)
from sidelight.plugins import Plugins
from sidelight.records import HostEvent, Session, SinkEvent
from sidelight.templates import eventlog
from sidelight.types import Activity

from .conftest import SAMPLES, jsonl

MINUTE = 60.0
SETTINGS = LifecycleSettings(idle_timeout=30 * MINUTE, max_duration=8 * 3600.0)


class Clock:
    """A clock the test moves by hand."""

    def __init__(self, now: float = 1_767_261_600.0) -> None:  # 2026-01-01T10:00:00Z
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def session(
    path: Path, key: str = "claude-code:s1", fmt: str = "claude-code", sid: str | None = None
) -> Session:
    return Session(
        key=key,
        name="fix tests",
        path=path,
        format=fmt,
        group="/tmp/proj",
        resolver=fmt,
        id=sid or "0b1c2d3e-aaaa-4bbb-8ccc-123456789abc",
    )


# -- transcripts --------------------------------------------------------------------------------------

_CC = {"sessionId": "cc-1", "cwd": "/tmp/proj", "version": "2.1.14", "userType": "external"}


def cc_user(text: str, ts: str = "2026-01-01T10:00:00.000Z") -> dict[str, Any]:
    return {**_CC, "type": "user", "message": {"role": "user", "content": text}, "uuid": "u", "timestamp": ts}


def cc_tool(message_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    block = {"type": "tool_use", "id": f"t-{message_id}", "name": name, "input": arguments}
    message = {"id": message_id, "type": "message", "role": "assistant", "content": [block]}
    return {
        **_CC,
        "type": "assistant",
        "message": message,
        "uuid": message_id,
        "timestamp": "2026-01-01T10:00:01Z",
    }


def cc_text(message_id: str, text: str) -> dict[str, Any]:
    message = {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
    }
    return {
        **_CC,
        "type": "assistant",
        "message": message,
        "uuid": message_id,
        "timestamp": "2026-01-01T10:00:02Z",
    }


class Transcript:
    """A transcript file in ``tmp_path`` that grows; :meth:`append` returns the scan of what was added."""

    def __init__(self, path: Path, fmt: str = "claude-code") -> None:
        self.path = path
        self.format = fmt
        self.cursor: sidelight.Cursor | None = None
        path.write_text("", encoding="utf-8")

    def append(self, records: list[dict[str, Any]]) -> Activity:
        with self.path.open("a", encoding="utf-8") as file:
            file.write(jsonl(records))
        activity = sidelight.scan(self.path, self.format, self.cursor)
        self.cursor = activity.cursor
        return activity


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def transcript(tmp_path: Path) -> Transcript:
    return Transcript(tmp_path / "s1.jsonl")


def kinds(events: list[SinkEvent]) -> list[str]:
    return [event.kind for event in events]


def status(tracker: SessionTracker, key: str) -> str:
    """A session's state, read afresh (mypy would narrow ``state.state`` after an assert)."""
    return tracker.states()[key].state


def sample_activity(tmp_path: Path, fmt: str) -> Activity:
    path = tmp_path / f"{fmt}.jsonl"
    path.write_text(jsonl(SAMPLES[fmt]), encoding="utf-8")
    return sidelight.scan(path, fmt)


# -- transitions --------------------------------------------------------------------------------------


def test_start_idle_resume_end(clock: Clock, transcript: Transcript) -> None:
    emitted: list[SinkEvent] = []
    tracker = SessionTracker(SETTINGS, clock=clock, emit=emitted.append)
    s = session(transcript.path)

    events = tracker.observe(s, transcript.append([cc_user("Fix the failing test"), cc_text("m1", "On it.")]))
    assert kinds(events) == ["session_start", "prompt_submitted", "response_completed"]
    assert events[1].data["detail"] == "Fix the failing test"
    assert events[0].session is s and events[0].timestamp == "2026-01-01T10:00:00.000Z"
    state = tracker.states()[s.key]
    assert (
        state.state == "active"
        and state.started_at == clock.now
        and state.messages == {"user": 1, "assistant": 1}
    )

    clock.advance(30 * MINUTE - 1)
    assert tracker.tick() == []
    clock.advance(1)  # exactly the timeout
    events = tracker.tick()
    assert kinds(events) == ["session_idle"]
    assert status(tracker, s.key) == "idle" and state.idle_since == clock.now
    assert tracker.tick() == []  # idle once

    clock.advance(2 * 3600 + 5 * MINUTE - 30 * MINUTE)  # quiet for 2h 5m in all
    events = tracker.observe(s, transcript.append([cc_user("and now the docs")]))
    assert kinds(events) == ["session_resume", "prompt_submitted"]
    assert events[0].data["detail"] == "idle for 2h 5m" and events[0].data["idle_seconds"] == 7500
    assert state.state == "active" and state.idle_since is None and state.current_task == "and now the docs"

    clock.advance(60 * MINUTE)  # twice the idle timeout, no tick in between: straight to ended
    events = tracker.tick()
    assert kinds(events) == ["session_end"]
    assert events[0].data == {"state": "ended", "detail": "idle_timeout", "reason": "idle_timeout"}
    assert state.state == "ended" and state.ended_at == clock.now
    assert tracker.tick() == []
    # Every event went through emit, in order, and is kept in the session's events.
    assert (
        [e.kind for e in emitted]
        == [e["kind"] for e in state.events]
        == [
            "session_start",
            "prompt_submitted",
            "response_completed",
            "session_idle",
            "session_resume",
            "prompt_submitted",
            "session_end",
        ]
    )


def test_idle_then_end_after_twice_the_timeout(clock: Clock, transcript: Transcript) -> None:
    tracker = SessionTracker(SETTINGS, clock=clock)
    tracker.observe(session(transcript.path), transcript.append([cc_user("hello")]))
    clock.advance(30 * MINUTE)
    assert kinds(tracker.tick()) == ["session_idle"]
    clock.advance(30 * MINUTE - 1)
    assert tracker.tick() == []
    clock.advance(1)
    assert kinds(tracker.tick()) == ["session_end"]


def test_an_ended_session_with_new_activity_starts_a_new_life(clock: Clock, transcript: Transcript) -> None:
    tracker = SessionTracker(SETTINGS, clock=clock)
    s = session(transcript.path)
    tracker.observe(s, transcript.append([cc_user("one")]))
    clock.advance(2 * 30 * MINUTE)
    tracker.tick()
    clock.advance(10)
    events = tracker.observe(s, transcript.append([cc_user("two")]))
    assert kinds(events) == ["session_start", "prompt_submitted"]
    assert events[0].data["life"] == 2 and events[0].data["idle_seconds"] == 60 * MINUTE + 10
    state = tracker.states()[s.key]
    assert state.state == "active" and state.lives == 2 and state.started_at == clock.now
    assert state.ended_at is None and state.end_reason is None
    # What the session did before carries on (a resume context needs it).
    assert state.messages["user"] == 2 and [e["detail"] for e in state.events][1] == "one"
    # The new life has its own timers.
    clock.advance(30 * MINUTE)
    assert kinds(tracker.tick()) == ["session_idle"]


def test_max_duration(clock: Clock, transcript: Transcript) -> None:
    tracker = SessionTracker(replace(SETTINGS, max_duration=3600), clock=clock)
    s = session(transcript.path)
    tracker.observe(s, transcript.append([cc_user("start")]))
    for _ in range(5):  # busy all along: never idle
        clock.advance(10 * MINUTE)
        tracker.observe(s, transcript.append([cc_text(f"m{clock.now}", "working")]))
        assert tracker.tick() == []
    clock.advance(10 * MINUTE)
    events = tracker.tick()
    assert kinds(events) == ["session_end"] and events[0].data["reason"] == "max_duration"


def test_explicit_session_end_and_start_hooks(clock: Clock, transcript: Transcript) -> None:
    tracker = SessionTracker(SETTINGS, clock=clock)
    s = session(transcript.path)
    start = HostEvent(host="claude-code", event="SessionStart", session_id=s.id, raw={"source": "startup"})
    events = tracker.hook_event(start, s)
    assert kinds(events) == ["session_start"] and events[0].data["source"] == "startup"
    assert tracker.hook_event(start, s) == []  # already active

    # Without a Session, the state is found by the agent's session id.
    end = HostEvent(host="claude-code", event="SessionEnd", session_id=s.id, raw={"reason": "logout"})
    events = tracker.hook_event(end)
    assert kinds(events) == ["session_end"]
    assert events[0].data["reason"] == "hook" and events[0].data["detail"] == "hook: logout"
    assert tracker.hook_event(end) == []  # already ended
    unknown = HostEvent(host="pi", event="SessionEnd", session_id="nope")
    assert tracker.hook_event(unknown) == []


def test_session_start_resume_hook_and_prompt_hook(clock: Clock, transcript: Transcript) -> None:
    tracker = SessionTracker(SETTINGS, clock=clock)
    s = session(transcript.path)
    tracker.observe(s, transcript.append([cc_user("first")]))
    clock.advance(45 * MINUTE)
    tracker.tick()
    resume = HostEvent(host="claude-code", event="SessionStart", session_id=s.id, raw={"source": "resume"})
    events = tracker.hook_event(resume, s)
    assert kinds(events) == ["session_resume"] and events[0].data["source"] == "resume"
    assert events[0].data["idle_seconds"] == 45 * MINUTE

    clock.advance(40 * MINUTE)
    tracker.tick()
    prompt = HostEvent(
        host="claude-code", event="UserPromptSubmit", session_id=s.id, prompt="Deploy `app_server`"
    )
    events = tracker.hook_event(prompt, s)
    assert kinds(events) == ["session_resume", "prompt_submitted"]
    assert events[1].data["detail"] == "Deploy `app_server`"
    state = tracker.states()[s.key]
    assert state.current_task == "Deploy `app_server`"
    # The transcript then shows the same prompt: it is counted, not reported a second time.
    events = tracker.observe(s, transcript.append([cc_user("Deploy `app_server`"), cc_text("m9", "ok")]))
    assert kinds(events) == ["response_completed"]
    assert state.messages["user"] == 2 and state.pending_prompts == 0


def test_suspended_stays_suspended_through_ticks(clock: Clock, transcript: Transcript) -> None:
    tracker = SessionTracker(SETTINGS, clock=clock)
    s = session(transcript.path)
    tracker.observe(s, transcript.append([cc_user("go")]))
    assert kinds(tracker.suspend(s.key)) == ["session_suspend"]
    assert tracker.suspend(s.key) == []
    for _ in range(20):
        clock.advance(3600)
        assert tracker.tick() == []
    # Activity does not lift a suspension.
    assert kinds(tracker.observe(s, transcript.append([cc_user("more")]))) == ["prompt_submitted"]
    state = tracker.states()[s.key]
    assert state.state == "suspended"
    events = tracker.unsuspend(s.key)
    assert kinds(events) == ["session_unsuspend"] and events[0].data["suspended_seconds"] == 20 * 3600
    assert status(tracker, s.key) == "active"
    # Timers start over, and the suspended time does not count towards the maximum duration.
    clock.advance(30 * MINUTE - 1)
    assert tracker.tick() == []
    clock.advance(1)
    assert kinds(tracker.tick()) == ["session_idle"]
    with pytest.raises(KeyError):
        tracker.suspend("nope")


def test_session_end_while_suspended(clock: Clock, transcript: Transcript) -> None:
    tracker = SessionTracker(SETTINGS, clock=clock)
    s = session(transcript.path)
    tracker.observe(s, transcript.append([cc_user("go")]))
    tracker.suspend(s.key)
    events = tracker.hook_event(HostEvent(host="pi", event="SessionEnd"), s)
    assert kinds(events) == ["session_end"] and tracker.states()[s.key].state == "ended"
    assert tracker.unsuspend(s.key) == []


def test_an_empty_activity_is_nothing(clock: Clock, transcript: Transcript) -> None:
    tracker = SessionTracker(SETTINGS, clock=clock)
    assert tracker.observe(session(transcript.path), sidelight.scan(transcript.path, "claude-code")) == []
    assert tracker.states() == {}


# -- events, context, hot memory --------------------------------------------------------------------


def test_events_are_capped(clock: Clock, transcript: Transcript) -> None:
    tracker = SessionTracker(SETTINGS, clock=clock)
    s = session(transcript.path)
    for n in range(40):
        tracker.observe(s, transcript.append([cc_user(f"prompt {n}"), cc_text(f"m{n}", f"answer {n}")]))
    state = tracker.states()[s.key]
    assert len(state.events) == 50
    assert state.events[-1] == {
        "kind": "response_completed",
        "time": "2026-01-01T10:00:00.000Z",
        "detail": "answer 39",
    }
    assert state.messages == {"user": 40, "assistant": 40}
    small = SessionTracker(replace(SETTINGS, events_kept=3), clock=clock)
    small.observe(s, sample_activity(transcript.path.parent, "claude-code"))
    assert len(small.states()[s.key].events) == 3


def test_context_lists_are_capped_and_ordered(clock: Clock, transcript: Transcript) -> None:
    tracker = SessionTracker(SETTINGS, clock=clock)
    s = session(transcript.path)
    for n in range(15):
        tracker.observe(s, transcript.append([cc_tool(f"r{n}", "Read", {"file_path": f"/src/f{n}.py"})]))
    tracker.observe(s, transcript.append([cc_tool("again", "Read", {"file_path": "/src/f3.py"})]))
    tracker.observe(s, transcript.append([cc_tool("grep", "Grep", {"pattern": "def .*"})]))
    state = tracker.states()[s.key]
    assert state.recent_files == ["/src/f3.py", "/src/f14.py", *[f"/src/f{n}.py" for n in range(13, 5, -1)]]
    assert len(state.recent_tools) == 10 and state.recent_tools[0] == "Grep def .*"
    assert state.recent_tools[1] == "Read /src/f3.py"
    assert state.hot_memory == []  # reads are not consequential
    assert state.categories["read"] == 17 and state.tools == {"Read": 16, "Grep": 1}
    assert state.key_entities[0] == "f3.py"  # seen twice
    assert len(state.key_entities) == 10


def test_prompts_and_the_current_task(clock: Clock, transcript: Transcript) -> None:
    tracker = SessionTracker(SETTINGS, clock=clock)
    s = session(transcript.path)
    events = tracker.observe(
        s, transcript.append([cc_user("first ask"), cc_user("middle"), cc_user("last ask")])
    )
    assert [e.data["detail"] for e in events if e.kind == "prompt_submitted"] == [
        "first ask",
        None,
        "last ask",
    ]
    assert tracker.states()[s.key].current_task == "last ask"


def test_key_entities_from_prompts(clock: Clock, transcript: Transcript) -> None:
    tracker = SessionTracker(SETTINGS, clock=clock)
    s = session(transcript.path)
    tracker.observe(
        s, transcript.append([cc_user("Fix parse_config in src/config.py and the `Settings` class")])
    )
    tracker.observe(s, transcript.append([cc_user("parse_config still fails for HttpClient")]))
    state = tracker.states()[s.key]
    assert state.key_entities[0] == "parse_config"
    assert set(state.key_entities) == {"parse_config", "config.py", "Settings", "HttpClient"}
    assert state.current_task == "parse_config still fails for HttpClient"


def test_hot_memory_keeps_the_last_five_consequential(clock: Clock, transcript: Transcript) -> None:
    tracker = SessionTracker(SETTINGS, clock=clock)
    s = session(transcript.path)
    records = []
    for n in range(7):
        records.append(cc_tool(f"b{n}", "Bash", {"command": f"make step{n}"}))
        records.append(cc_tool(f"r{n}", "Read", {"file_path": f"/src/r{n}.py"}))
    events = tracker.observe(s, transcript.append(records))
    assert kinds(events).count("tool_executed") == 14
    assert events[1].data["detail"] == "Ran: make step0" and events[1].data["consequential"] is True
    assert events[2].data["detail"] == "Read /src/r0.py" and events[2].data["consequential"] is False
    state = tracker.states()[s.key]
    assert state.hot_memory == [f"Ran: make step{n}" for n in range(6, 1, -1)]


@pytest.mark.parametrize(
    ("fmt", "expected"),
    [
        ("claude-code", ["Ran: pytest -q", "Edited /tmp/proj/x.py: 'a' -> 'b'"]),
        ("pi", ["Created /tmp/proj/b.py (1 line)", "Ran: ls"]),
        ("codex", ["Edited src/app.py: 'a = 1' -> 'a = 2'", "Ran: pytest -q"]),
    ],
)
def test_hot_memory_from_each_format(clock: Clock, tmp_path: Path, fmt: str, expected: list[str]) -> None:
    activity = sample_activity(tmp_path, fmt)
    tracker = SessionTracker(SETTINGS, clock=clock)
    s = session(Path(activity.path), key=f"{fmt}:x", fmt=fmt)
    tracker.observe(s, activity)
    assert tracker.states()[s.key].hot_memory == expected


def test_hot_memory_of_claude_code_writes_and_edits(clock: Clock, transcript: Transcript) -> None:
    tracker = SessionTracker(SETTINGS, clock=clock)
    s = session(transcript.path)
    records = [
        cc_tool("w", "Write", {"file_path": "/src/new.py", "content": "a = 1\nb = 2\nc = 3\n"}),
        cc_tool("e", "Edit", {"file_path": "/src/new.py", "old_string": "o" * 80, "new_string": "n\nm"}),
        cc_tool("b", "Bash", {"command": "python -m pytest tests/test_lifecycle.py -q -x --no-header"}),
    ]
    tracker.observe(s, transcript.append(records))
    assert tracker.states()[s.key].hot_memory == [
        "Ran: python -m pytest tests/test_lifecycle.py -q -x --…",  # 50 characters
        f"Edited /src/new.py: '{'o' * 29}…' -> 'n m'",
        "Created /src/new.py (3 lines)",
    ]


LONG = "x" * 100


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        # Claude Code
        (("Write", "edit", "/src/app.py", 12), "Created /src/app.py (12 lines)"),
        (("Write", "edit", "/src/one.py", 1), "Created /src/one.py (1 line)"),
        (("Edit", "edit", "/src/app.py", None, "a = 1", "a = 2"), "Edited /src/app.py: 'a = 1' -> 'a = 2'"),
        (("MultiEdit", "edit", "/src/app.py"), "Edited /src/app.py"),
        (("NotebookEdit", "edit", "/nb.ipynb", None, None, "print()"), "Edited /nb.ipynb: '' -> 'print()'"),
        (("Bash", "command", "pytest -q"), "Ran: pytest -q"),
        (("Read", "read", "/src/app.py"), None),
        (("Grep", "read", "TODO"), None),
        (("Task", "other", "explore"), None),
        (("BashOutput", "command", "bash_1"), None),
        # Pi
        (("write", "edit", "notes.md", 3), "Created notes.md (3 lines)"),
        (
            ("edit", "edit", "notes.md", None, "old\ntext", "new  text"),
            "Edited notes.md: 'old text' -> 'new text'",
        ),
        (("bash", "command", "ls -la"), "Ran: ls -la"),
        (("bashExecution", "command", "npm test"), "Ran: npm test"),
        # Codex
        (
            ("apply_patch", "edit", "src/app.py", None, "a = 1", "a = 2"),
            "Edited src/app.py: 'a = 1' -> 'a = 2'",
        ),
        (("apply_patch", "edit", "src/new.py", 40), "Created src/new.py (40 lines)"),
        (("exec_command", "command", "cargo test"), "Ran: cargo test"),
        (("shell", "command", "git status"), "Ran: git status"),
        (("exec_command", "command", None), None),
        # cuts: 30 characters for old/new text, 50 for a command, each ending in an ellipsis
        (("Edit", "edit", "a.py", None, LONG, LONG), f"Edited a.py: '{'x' * 29}…' -> '{'x' * 29}…'"),
        (("Bash", "command", "echo " + LONG), f"Ran: echo {'x' * 44}…"),
        (("Bash", "command", "curl -H 'Authorization: Bearer abcdef0123456789abcdef'"), None),
    ],
)
def test_hot_memory_lines(args: tuple[Any, ...], expected: str | None) -> None:
    line = hot_memory_line(*args)
    if args[2] and args[2].startswith("curl"):
        assert line is not None and "abcdef0123456789" not in line and "REDACTED" in line
        return
    assert line == expected


def test_hot_memory_cut_lengths() -> None:
    line = hot_memory_line("Edit", "edit", "a.py", None, "o" * 31, "n" * 30)
    assert line == f"Edited a.py: '{'o' * 29}…' -> '{'n' * 30}'"
    ran = hot_memory_line("Bash", "command", "c" * 50)
    assert ran == f"Ran: {'c' * 50}"
    ran = hot_memory_line("Bash", "command", "c" * 51)
    assert ran is not None and len(ran) == len("Ran: ") + 50 and ran.endswith("…")


# -- snapshot and restore ---------------------------------------------------------------------------


def test_snapshot_restore_round_trip(clock: Clock, transcript: Transcript, tmp_path: Path) -> None:
    tracker = SessionTracker(SETTINGS, clock=clock)
    s = session(transcript.path)
    tracker.observe(
        s, transcript.append([cc_user("Fix `app.py`"), cc_tool("w", "Bash", {"command": "make"})])
    )
    other = session(tmp_path / "other.jsonl", key="pi:o", fmt="pi", sid="other")
    tracker.hook_event(HostEvent(host="pi", event="SessionStart", raw={"source": "startup"}), other)
    tracker.suspend(other.key)
    data = json.loads(json.dumps(tracker.snapshot()))

    restored = SessionTracker.restore(data, SETTINGS, clock=clock)
    assert {k: v.as_dict() for k, v in restored.states().items()} == {
        k: v.as_dict() for k, v in tracker.states().items()
    }
    state = restored.states()[s.key]
    assert state.events.maxlen == 50 and state.session() == s
    # The restored tracker goes on where the old one stopped.
    clock.advance(30 * MINUTE)
    assert [(e.kind, e.session.key) for e in restored.tick()] == [("session_idle", s.key)]
    assert restored.states()[other.key].state == "suspended"

    assert SessionTracker.restore({"version": 99}, SETTINGS).states() == {}
    damaged = {"version": 1, "sessions": {"bad": {"key": "bad"}, s.key: data["sessions"][s.key]}}
    assert list(SessionTracker.restore(damaged, SETTINGS).states()) == [s.key]
    with pytest.raises(ValueError, match="not a session state"):
        SessionState.from_dict({"state": "active"})


# -- archive ----------------------------------------------------------------------------------------


def test_archive_file_name_and_contents(clock: Clock, transcript: Transcript, tmp_path: Path) -> None:
    tracker = SessionTracker(SETTINGS, clock=clock)
    s = session(transcript.path)
    tracker.observe(
        s, transcript.append([cc_user("Ship it"), cc_tool("b", "Bash", {"command": "make release"})])
    )
    clock.advance(3600 + 5 * MINUTE)  # 11:05: ends at twice the idle timeout
    tracker.tick()
    state = tracker.states()[s.key]
    archive_dir = tmp_path / "state" / "archive"

    path = archive_session(state, archive_dir)
    assert path == archive_dir / "2026-01-01_11-05_0b1c2d3e.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    record = json.loads(path.read_text(encoding="utf-8"))
    assert record["ended_at"] == "2026-01-01T11:05:00.000Z" and record["transcript_copy"] is None
    saved = record["session"]
    assert saved["state"] == "ended" and saved["end_reason"] == "idle_timeout"
    assert saved["hot_memory"] == ["Ran: make release"]
    assert saved["context"]["current_task"] == "Ship it"
    assert [e["kind"] for e in saved["events"]][-1] == "session_end"
    assert SessionState.from_dict(saved).as_dict() == state.as_dict()
    assert not [p for p in archive_dir.iterdir() if p.name.endswith(".tmp")]

    # A second archive in the same minute gets a suffix; the transcript is copied, compressed.
    second = archive_session(state, archive_dir, transcript=transcript.path)
    assert second.name == "2026-01-01_11-05_0b1c2d3e-2.json"
    copy = archive_dir / "2026-01-01_11-05_0b1c2d3e-2.jsonl.gz"
    assert gzip.decompress(copy.read_bytes()) == transcript.path.read_bytes()
    assert stat.S_IMODE(copy.stat().st_mode) == 0o600
    assert json.loads(second.read_text(encoding="utf-8"))["transcript_copy"] == copy.name


def test_archive_id_without_an_agent_id(tmp_path: Path) -> None:
    state = SessionState(key="volute:mind/discord", name="discord", agent="pi", path="/x", last_activity=0.0)
    assert archive_session(state, tmp_path).name == "1970-01-01_00-00_mind-discord.json"
    with pytest.raises(FileNotFoundError):
        archive_session(state, tmp_path, transcript=tmp_path / "missing.jsonl")


# -- injected text ----------------------------------------------------------------------------------


def busy_state(clock: Clock, transcript: Transcript) -> SessionState:
    tracker = SessionTracker(SETTINGS, clock=clock)
    s = session(transcript.path)
    tracker.observe(
        s,
        transcript.append(
            [
                cc_user("Make the \x1b[31mlogin\x1b[0m page faster"),
                cc_tool("e", "Edit", {"file_path": "/src/login.py", "old_string": "a", "new_string": "b"}),
                cc_tool("b", "Bash", {"command": "export API_TOKEN=sk-ant-api03-" + "a" * 40 + " && make"}),
                cc_text("t", "Done."),
            ]
        ),
    )
    return tracker.states()[s.key]


def test_session_context_block(clock: Clock, transcript: Transcript) -> None:
    state = busy_state(clock, transcript)
    block = session_context_block(state, now=clock.now + 300)
    lines = block.splitlines()
    assert lines[0] == "[SESSION CONTEXT]" and lines[-1] == "[END SESSION]"
    assert "Session: fix tests (claude-code)" in block
    assert "Status: active, last activity 5m ago; 1 prompts, 3 responses, 1 edits, 1 commands" in block
    assert "Current task: Make the login page faster" in block
    assert "Recent files: /src/login.py" in block
    assert any(line.startswith("- Ran: export API_TOKEN=[REDACTED") for line in lines)
    assert "sk-ant" not in block and "\x1b" not in block
    small = session_context_block(state, limit=120)
    assert len(small) <= 120 and small.endswith("[END SESSION]") and small.startswith("[SESSION CONTEXT]")


def test_resume_context(clock: Clock, transcript: Transcript) -> None:
    state = busy_state(clock, transcript)
    text = resume_context(state, clock.now + 2 * 3600 + 5 * 60)
    assert text.startswith("Welcome back. Session fix tests was idle for 2h 5m.\n")
    assert "Current task: Make the login page faster" in text
    assert "Recent files: /src/login.py" in text
    assert (
        "Last events (UTC):\n- 10:00 prompt: Make the login page faster\n- 10:00 Edited /src/login.py" in text
    )
    assert text.endswith("\n- 10:00 reply: Done.")
    assert "sk-ant" not in text


def test_resume_context_after_the_resume_and_its_cap(clock: Clock, transcript: Transcript) -> None:
    tracker = SessionTracker(SETTINGS, clock=clock)
    s = session(transcript.path)
    long_files = [
        cc_tool(f"w{n}", "Write", {"file_path": f"/src/{'d' * 100}/f{n}.py", "content": "x"})
        for n in range(12)
    ]
    tracker.observe(s, transcript.append([cc_user("p" * 600), *long_files]))
    clock.advance(50 * MINUTE)
    tracker.tick()
    tracker.hook_event(HostEvent(host="claude-code", event="SessionStart", raw={"source": "resume"}), s)
    state = tracker.states()[s.key]
    # Asked right after the resume (the state is active again), it still tells the quiet time.
    text = resume_context(state, clock.now)
    assert text.startswith("Welcome back. Session fix tests was idle for 50m.")
    assert len(text) <= RESUME_LIMIT and "session_resume" not in text and "session_start" not in text
    assert "Created /src/" in text or "Edited /src/" in text
    assert len(resume_context(state, clock.now, limit=300)) <= 300
    # Resumed a day later (the session had ended): a new life, and the same welcome.
    clock.advance(24 * 3600)
    tracker.tick()
    tracker.hook_event(HostEvent(host="claude-code", event="SessionStart", raw={"source": "resume"}), s)
    assert state.state == "active" and state.lives == 2
    text = resume_context(state, clock.now)
    assert text.startswith("Welcome back. Session fix tests was idle for 1d.")
    assert len(text) <= RESUME_LIMIT and "Current task: ppp" in text
    assert len(resume_context(state, clock.now, limit=300)) <= 300


def test_the_welcome_back_keeps_its_events_in_order_with_their_own_times_within_its_budget(
    clock: Clock, transcript: Transcript
) -> None:
    state = busy_state(clock, transcript)
    state.events.clear()
    state.events.extend(
        entry_events(
            [
                ("2026-01-01T09:58:10Z", "user", "Make it faster", None, None),
                ("2026-01-01T09:59:00Z", "tool", None, "Edit", "/src/login.py"),
                ("2026-01-01T10:01:30Z", "tool", None, "Bash", "make test"),
                ("2026-01-01T10:02:00Z", "assistant", "All " + "fast " * 40, None, None),
                ("2025-12-31T23:50:00Z", "tool", None, "Read", "/src/old.py"),
            ],
            {"edit": "edit", "bash": "command"},
        )
    )
    text = resume_context(state, clock.now + 3600)
    events = text.split("Last events (UTC):\n")[1].splitlines()
    assert events[:3] == [
        "- 09:58 prompt: Make it faster",
        "- 09:59 Edited /src/login.py",
        "- 10:01 Ran: make test",
    ]
    assert events[3].startswith("- 10:02 reply: All fast fast") and events[3].endswith("…")
    assert len(events[3]) <= 90  # each event is cut short
    assert text.endswith("\n- 12-31 23:50 Read /src/old.py")  # another day: its date too
    assert RESUME_LIMIT == 600 and len(text) <= RESUME_LIMIT
    # Many long events: the most recent are the ones kept, still in order, within the budget.
    state.events.extend(
        {"kind": "prompt_submitted", "time": f"2026-01-01T10:{n:02d}:00Z", "detail": f"{n} " + "x" * 200}
        for n in range(10, 30)
    )
    text = resume_context(state, clock.now + 3600)
    assert len(text) <= RESUME_LIMIT and "- 10:29 prompt: 29 " in text and "- 10:10 " not in text
    times = [line[2:7] for line in text.split("Last events (UTC):\n")[1].splitlines()]
    assert times == sorted(times)


def test_format_duration() -> None:
    assert [format_duration(s) for s in (0, 59.9, 60, 3600, 7500, 86400, 90000)] == [
        "0s",
        "59s",
        "1m",
        "1h",
        "2h 5m",
        "1d",
        "1d 1h",
    ]


# -- the JSONL event log ----------------------------------------------------------------------------


def test_event_log_sink_writes_lines(
    clock: Clock, transcript: Transcript, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state_dir = tmp_path / "state"
    monkeypatch.setenv("SIDELIGHT_STATE_DIR", str(state_dir))
    monkeypatch.delenv("SIDELIGHT_CONFIG", raising=False)
    monkeypatch.setattr("sidelight.templates.eventlog.RECHECK_SECONDS", 0.0)  # see env changes at once
    sink = Plugins(builtins=["sidelight.templates.eventlog"], entry_points=False).sinks()["jsonl-log"]
    tracker = SessionTracker(SETTINGS, clock=clock, emit=sink.emit)
    events = tracker.observe(session(transcript.path), transcript.append([cc_user("hi"), cc_text("m", "yo")]))
    log = state_dir / "activity-events.jsonl"
    records = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert (
        [r["kind"] for r in records]
        == kinds(events)
        == ["session_start", "prompt_submitted", "response_completed"]
    )
    assert records[1]["time"] == "2026-01-01T10:00:00.000Z"
    assert records[1]["session"]["key"] == "claude-code:s1" and records[1]["data"]["detail"] == "hi"
    assert stat.S_IMODE(log.stat().st_mode) == 0o600
    assert not (state_dir / "events.jsonl").exists()  # the hooks' file is not ours
    # Another state directory (another environment) gets its own log.
    monkeypatch.setenv("SIDELIGHT_STATE_DIR", str(tmp_path / "other"))
    sink.emit(events[0])
    assert len((tmp_path / "other" / "activity-events.jsonl").read_text(encoding="utf-8").splitlines()) == 1


def test_event_log_rotates_and_never_raises(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    event = SinkEvent(
        kind="session_start", session=session(tmp_path / "t.jsonl"), timestamp="t", data={"n": 1}
    )
    log = eventlog.EventLog(tmp_path / "log" / "events.jsonl", rotate_bytes=200)
    for _ in range(3):
        log.emit(event)
    assert (tmp_path / "log" / "events.jsonl.1").is_file()
    assert len(log.path.read_text(encoding="utf-8").splitlines()) < 3
    (tmp_path / "blocked").write_text("a file, not a folder", encoding="utf-8")
    eventlog.EventLog(tmp_path / "blocked" / "events.jsonl").emit(event)  # logs, does not raise
    assert "cannot record a session_start event" in caplog.text


def test_event_log_logs_each_key_once_across_restarts_and_cuts_off_a_cut_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A watcher killed -9 makes the events of the lines it reads again with the same keys: the log,
    opened again, knows the keys of its last lines and drops them; a line cut short by the kill is cut
    off (that event was not logged) and logged whole when it comes again."""
    one = session(tmp_path / "t.jsonl")
    made = [
        SinkEvent("prompt_submitted", one, f"2026-01-01T10:00:0{n}.000Z", {"n": n}, f"k:{n}")
        for n in range(4)
    ]
    path = tmp_path / "activity-events.jsonl"
    first = eventlog.EventLog(path)
    first.emit_many(made[:3])
    first.emit_many(made[1:3])  # the same keys again in the same process
    first.close()
    with path.open("ab") as file:  # a writer killed in the middle of the next line
        file.write(eventlog.event_line(made[3])[:25])
    second = eventlog.EventLog(path)  # a new watcher
    with caplog.at_level(logging.INFO, logger="sidelight.templates.eventlog"):
        second.emit_many(made)  # read again from before the kill
    second.emit(SinkEvent("session_idle", one, "t"))  # no key: always logged
    second.close()
    records = [json.loads(line) for line in path.read_bytes().splitlines()]
    assert [r["key"] for r in records] == ["k:0", "k:1", "k:2", "k:3", None]
    assert records[3]["data"] == {"n": 3} and records[0]["time"] == "2026-01-01T10:00:00.000Z"
    assert second.replayed == 3 and first.replayed == 2
    assert "cut off a line left incomplete" in caplog.text and "3 events already logged" in caplog.text
    # After a rotation the previous file's keys are still known.
    third = eventlog.EventLog(path, rotate_bytes=1)
    third.emit(made[0])  # opens, knows k:0: nothing written
    third.emit(SinkEvent("session_idle", one, "t"))  # rotates
    third.close()
    fourth = eventlog.EventLog(path)
    fourth.emit_many(made)
    assert fourth.replayed == 4
    assert path.with_name(path.name + ".1").is_file()


def test_a_keyed_archive_is_written_once(clock: Clock, transcript: Transcript, tmp_path: Path) -> None:
    """The same session end (its key) archived again finds its archive, whenever it is seen again."""
    tracker = SessionTracker(SETTINGS, clock=clock)
    tracker.observe(session(transcript.path), transcript.append([cc_user("hi")]))
    clock.now += 3600
    tracker.hook_event(HostEvent(host="claude-code", event="SessionEnd", session_id="s1"))
    state = tracker.get("claude-code:s1")
    assert state is not None
    archive_dir = tmp_path / "archive"
    path = archive_session(state, archive_dir, key="h1-2:100/end")
    state.ended_at = (state.ended_at or 0) + 120  # seen again two minutes later
    assert archive_session(state, archive_dir, transcript.path, key="h1-2:100/end") == path
    assert archive_session(state, archive_dir, key="h1-2:900/end") != path  # another end
    assert len(list(archive_dir.glob("*.json"))) == 2


# -- the watcher's fast path ------------------------------------------------------------------------


# The real CLIs' runs that used tools with effects (edits, commands): the hot memory has something to show.
REAL_TRANSCRIPTS = sorted((Path(__file__).parent / "data").glob("*/four-tools-*.jsonl"))


@pytest.mark.parametrize("path", REAL_TRANSCRIPTS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_observe_counts_on_the_core_tuple_is_observe_on_the_activity(path: Path) -> None:
    from sidelight import _core
    from sidelight.engine.reads import category_tables
    from sidelight.plugins import Plugins

    fmt = path.parent.name
    tables = category_tables(Plugins(entry_points=False))
    request: list[tuple[str, str, tuple[int, int, int, int, int, int, int] | None]] = [(str(path), fmt, None)]
    data = _core.scan_many(request, tables, 1 << 26, 2000)[0]
    counts = _core.scan_many_counts(request, tables, 1 << 26, 2000)[0]
    assert isinstance(data, dict), data
    assert isinstance(counts, tuple), counts
    assert data["tool_uses"], "a transcript with tool uses, or the test proves little"
    # The tuple is the dict's counts, field for field.
    assert counts == (
        data["cursor"],
        data["reset"],
        data["lines"],
        data["messages"]["user"],
        data["messages"]["assistant"],
        tuple(data["categories"][c] for c in ("edit", "read", "command", "other")),
        data["tools"] or None,
        data["tool_uses"] or None,
        data["files_touched"] or None,
        data["first_user_text"],
        data["last_user_text"],
        data["last_assistant_text"],
        data["last_timestamp"],
    )
    by_activity, by_counts = SessionTracker(SETTINGS, clock=Clock()), SessionTracker(SETTINGS, clock=Clock())
    one = session(path, key=f"{fmt}:s", fmt=fmt)
    events = by_activity.observe(one, Activity.from_core(data))
    assert by_counts.observe_counts(one, counts) == events
    assert by_counts.snapshot() == by_activity.snapshot()
    state = by_counts.get(f"{fmt}:s")
    assert state is not None and state.hot_memory and state.recent_tools


def test_event_lines_are_the_records_as_json(tmp_path: Path) -> None:
    one = session(tmp_path / 'naïve "quoted" path.jsonl')
    events = [
        SinkEvent(kind="tool_executed", session=one, timestamp="2026-01-01T10:00:00.000Z", data=data)
        for data in (
            {"state": "active", "detail": "Edited a.py: 'x = \"1\"' -> 'é 🚀 \\n'"},
            {"state": "idle", "detail": None, "quiet_seconds": 1800.5, "path": Path("/p")},
            {},
        )
    ]
    beyond_orjson: dict[Any, Any] = {"big": 1 << 70, 3: "not a text key"}
    events.append(replace(events[0], data=beyond_orjson))
    for event in events:
        line = eventlog.event_line(event).decode()
        assert line.endswith("}\n") and "\n" not in line[:-1]
        assert json.loads(line) == json.loads(json.dumps(eventlog.event_record(event), default=str))
    assert "🚀" in eventlog.event_line(events[0]).decode()  # UTF-8, not \u escapes
    log = eventlog.EventLog(tmp_path / "log.jsonl")
    log.emit_many(events)
    log.emit(events[0])
    lines = log.path.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line) for line in lines] == [
        json.loads(json.dumps(eventlog.event_record(e), default=str)) for e in [*events, events[0]]
    ]


def test_one_rule_judges_a_session_from_its_facts():
    """``judge_session`` is the tracker's rule, and that of ``status`` and ``recap`` without it."""
    from sidelight.features.lifecycle import judge_session

    t = 1_000.0
    assert judge_session(t, t + 10, 60) == ("active", None)
    assert judge_session(t, t + 60, 60) == ("idle", None)
    assert judge_session(t, t + 120, 60) == ("ended", "idle_timeout")
    assert judge_session(None, t, 60) == ("ended", "idle_timeout")
    assert judge_session(t, t + 10, 60, suspended=True) == ("suspended", None)
    # The host's end counts unless the session wrote after it, and ends a suspended one too.
    assert judge_session(t, t + 10, 60, ended_at=t + 1) == ("ended", "hook")
    assert judge_session(t, t + 10, 60, ended_at=t + 1, suspended=True) == ("ended", "hook")
    assert judge_session(t + 5, t + 10, 60, ended_at=t + 1) == ("active", None)
    assert judge_session(t, t + 10, 60, life=100, max_duration=100) == ("ended", "max_duration")
