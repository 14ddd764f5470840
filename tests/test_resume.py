"""Welcome back: the resume context after a real absence (Claude Code's resume, an idle spell, Pi), once.

The transcripts are the real ones in tests/data (written by the real CLIs), placed in a throwaway HOME
where the built-in resolvers find them; the hooks run through `handle_hook` with the real plugins.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest

from sidelight.config import Settings
from sidelight.engine.discovery import list_sessions
from sidelight.features import resume
from sidelight.features.hook import handle_hook
from sidelight.features.lifecycle import RESUME_LIMIT
from sidelight.plugins import Plugins

DATA = Path(__file__).parent / "data"
CLAUDE_SAMPLE = DATA / "claude-code" / "four-tools-resume.jsonl"
PI_SAMPLE = DATA / "pi" / "four-tools-continue.jsonl"


def first_value(path: Path, key: str) -> str:
    for line in path.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        if key in entry:
            return str(entry[key])
    raise AssertionError(f"no {key} in {path}")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path


def settings_for(home: Path, **env: str) -> Settings:
    return Settings.load(
        env={"HOME": str(home), "SIDELIGHT_STATE_DIR": str(home / "state"), **env}, home=home
    )


def claude_session(home: Path) -> tuple[Path, str, str]:
    cwd = first_value(CLAUDE_SAMPLE, "cwd")
    session_id = first_value(CLAUDE_SAMPLE, "sessionId")
    folder = home / ".claude" / "projects" / "".join(c if c.isalnum() else "-" for c in cwd)
    folder.mkdir(parents=True)
    path = folder / f"{session_id}.jsonl"
    shutil.copy(CLAUDE_SAMPLE, path)
    return path, session_id, cwd


def claude_event(path: Path, session_id: str, cwd: str, event: str, **extra: str) -> dict[str, str]:
    return {
        "session_id": session_id,
        "transcript_path": str(path),
        "cwd": cwd,
        "hook_event_name": event,
        **extra,
    }


def context_of(output: str | None) -> str:
    assert output is not None
    return str(json.loads(output)["hookSpecificOutput"]["additionalContext"])


def shift_timestamps(path: Path, last: float) -> None:
    """Moves every timestamp of the transcript at ``path`` so that its last one is ``last``."""
    from datetime import UTC, datetime

    from sidelight.timestamps import epoch_seconds

    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    stamps = [epoch_seconds(e["timestamp"]) for e in lines if isinstance(e.get("timestamp"), str)]
    delta = last - max(t for t in stamps if t is not None)
    for entry in lines:
        moment = epoch_seconds(entry.get("timestamp")) if isinstance(entry.get("timestamp"), str) else None
        if moment is not None:
            stamp = datetime.fromtimestamp(moment + delta, UTC).isoformat(timespec="milliseconds")
            entry["timestamp"] = stamp.replace("+00:00", "Z")
    path.write_text("".join(json.dumps(e) + "\n" for e in lines), encoding="utf-8")


def test_a_resumed_claude_code_session_is_welcomed_back_once_with_its_first_prompt(home: Path) -> None:
    path, session_id, cwd = claude_session(home)  # its last activity was days ago
    settings = settings_for(home)
    plugins = Plugins(entry_points=False)
    # Claude Code drops what a resumed session's SessionStart adds: the welcome waits for the prompt.
    start = claude_event(path, session_id, cwd, "SessionStart", source="resume")
    assert handle_hook("claude-code", start, settings=settings, plugins=plugins) is None
    prompt = claude_event(path, session_id, cwd, "UserPromptSubmit", prompt="where was I?")
    text = context_of(handle_hook("claude-code", prompt, settings=settings, plugins=plugins))
    assert text.startswith(f"Welcome back. Session {session_id[:8]} was idle for ")
    assert "notes.txt" in text  # the files it worked on
    assert len(text) <= RESUME_LIMIT == 600
    # Once: not again with the next prompt, nor at a new start right after.
    assert handle_hook("claude-code", prompt, settings=settings, plugins=plugins) is None
    assert handle_hook("claude-code", start, settings=settings, plugins=plugins) is None
    assert handle_hook("claude-code", prompt, settings=settings, plugins=plugins) is None
    # A new session (source: startup) gets nothing at its start.
    new = claude_event(path, session_id, cwd, "SessionStart", source="startup")
    assert handle_hook("claude-code", new, settings=settings, plugins=plugins) is None


def test_a_resume_within_the_idle_timeout_gets_no_welcome_back(home: Path) -> None:
    path, session_id, cwd = claude_session(home)
    shift_timestamps(path, time.time() - 20)  # it replied 20 seconds ago
    settings = settings_for(home, SIDELIGHT_IDLE_TIMEOUT="1m")
    plugins = Plugins(entry_points=False)
    start = claude_event(path, session_id, cwd, "SessionStart", source="resume")
    prompt = claude_event(path, session_id, cwd, "UserPromptSubmit", prompt="and now?")
    for _ in range(2):  # resumed twice within a minute
        assert handle_hook("claude-code", start, settings=settings, plugins=plugins) is None
        assert handle_hook("claude-code", prompt, settings=settings, plugins=plugins) is None
    # The same session quiet (no reply, no prompt) for longer than the idle timeout is welcomed back.
    shift_timestamps(path, time.time() - 90)
    marker = next((home / "state" / "prompts").iterdir())
    os.utime(marker, (time.time() - 90, time.time() - 90))
    assert handle_hook("claude-code", start, settings=settings, plugins=plugins) is None
    assert context_of(handle_hook("claude-code", prompt, settings=settings, plugins=plugins)).startswith(
        f"Welcome back. Session {session_id[:8]} was idle for 1m."
    )


def test_the_welcome_back_lists_each_event_at_its_own_time_in_order(home: Path) -> None:
    path, _, _ = claude_session(home)
    settings, plugins = settings_for(home), Plugins(entry_points=False)
    session = next(s for s in list_sessions(settings, plugins) if s.path == path)
    text = resume.welcome_back(session, settings, plugins, time.time())
    assert text is not None
    events = text.split("Last events (UTC):\n", 1)[1].splitlines()
    # The sample's last turn: the prompt, the command it ran, the reply; each after the one before.
    assert [e.split(" ", 3)[3] for e in events[-3:]] == [
        "prompt: What does notes.txt say now?",
        "Ran: wc -l notes.txt",  # in the session's own folder: shown from there
        "reply: It says alpha and gamma.",
    ]
    assert events[-4].endswith("reply: notes.txt now reads alpha, gamma.")
    assert "Recent files: notes.txt\n" in text
    assert all(e.startswith("- 11-21 21:20 ") for e in events)  # its own day and time, not today's
    assert len(text) <= RESUME_LIMIT


def test_the_first_prompt_after_an_idle_spell_is_welcomed_back(home: Path) -> None:
    path, session_id, cwd = claude_session(home)
    settings = settings_for(home, SIDELIGHT_IDLE_TIMEOUT="30m")
    prompt = claude_event(path, session_id, cwd, "UserPromptSubmit", prompt="go on")
    plugins = Plugins(entry_points=False)
    assert handle_hook("claude-code", prompt, settings=settings, plugins=plugins) is None  # first prompt
    assert handle_hook("claude-code", prompt, settings=settings, plugins=plugins) is None  # not idle
    marker = next((home / "state" / "prompts").iterdir())
    two_hours_ago = time.time() - 2 * 3600
    os.utime(marker, (two_hours_ago, two_hours_ago))
    text = context_of(handle_hook("claude-code", prompt, settings=settings, plugins=plugins))
    assert text.startswith("Welcome back.")
    assert handle_hook("claude-code", prompt, settings=settings, plugins=plugins) is None  # once


def test_a_pi_session_that_comes_back_idle_is_welcomed_at_its_next_prompt(home: Path) -> None:
    cwd = first_value(PI_SAMPLE, "cwd")
    folder = home / ".pi" / "agent" / "sessions" / ("--" + cwd.lstrip("/").replace("/", "-") + "--")
    folder.mkdir(parents=True)
    path = folder / PI_SAMPLE.name
    shutil.copy(PI_SAMPLE, path)
    settings = settings_for(home, SIDELIGHT_IDLE_TIMEOUT="1m")  # the sample is older than that
    plugins = Plugins(entry_points=False)
    start = {"event": "session_start", "session_file": str(path), "cwd": cwd}
    assert handle_hook("pi", start, settings=settings, plugins=plugins) is None  # Pi cannot inject here
    prompt = {"event": "before_agent_start", "session_file": str(path), "cwd": cwd, "prompt": "again"}
    text = handle_hook("pi", prompt, settings=settings, plugins=plugins)
    assert text is not None and text.startswith("Welcome back. Session ")
    assert handle_hook("pi", prompt, settings=settings, plugins=plugins) is None


def test_a_compacted_session_gets_its_own_context_block(home: Path) -> None:
    path, session_id, cwd = claude_session(home)
    event = claude_event(path, session_id, cwd, "SessionStart", source="compact")
    text = context_of(
        handle_hook("claude-code", event, settings=settings_for(home), plugins=Plugins(entry_points=False))
    )
    assert text.startswith("[SESSION CONTEXT]") and text.rstrip().endswith("[END SESSION]")
    assert "What does notes.txt say now?" in text  # its current task: the last request
    assert "notes.txt" in text
