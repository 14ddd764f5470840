"""One reading engine, one follower (issue 30, item 4): the hook's reads and the watcher's batch call
(:func:`sidelight.engine.reads.count_reads`) start, stop and start over at the same places on the same
transcript; the dashboard's Board and ``sidelight status`` judge a session's state by the same rules."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from sidelight import _core
from sidelight.config import Settings
from sidelight.engine.discovery import list_sessions
from sidelight.engine.reads import (
    category_tables,
    count_reads,
    decoder_for,
    plan_reads,
    scan_with_resets,
    start_of,
)
from sidelight.features.lifecycle import judge_session
from sidelight.plugins import Plugins
from sidelight.records import Session
from sidelight.types import Activity
from sidelight.watch.follow import host_ended, next_state_turn, state_turns
from sidelight.watch.status import collect_status

# The throwaway HOME and the thread-leak check are the watcher tests' own fixtures.
from tests.test_watch import (  # noqa: F401
    append,
    counted,
    make_watcher,
    no_thread_left,
    prompt_line,
    transcript,
    wait_for,
)

SESSION_ID = "7d3c2f1e-0000-4000-8000-00000000000a"
#: A first look this small skips the start of a transcript of a few dozen lines.
FIRST_LOOK = 1024


@pytest.fixture
def small_first_look(home: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    monkeypatch.setenv("SIDELIGHT_FIRST_LOOK_BYTES", str(FIRST_LOOK))
    return Settings.load()


def prompts(count: int, start: int = 0) -> str:
    return "".join(prompt_line(f"prompt number {start + n} " + "x" * 80) for n in range(count))


def only_session(settings: Settings, plugins: Plugins) -> Session:
    (session,) = list_sessions(settings, plugins)
    return session


def hook_read(
    session: Session, settings: Settings, plugins: Plugins, saved: dict[str, Any]
) -> tuple[Activity, bool]:
    """What the hook's reads give for ``session`` from a reader's cursor entries ``saved``: its
    scan, and whether it was a first look."""
    reads = plan_reads([session], saved, settings, skip_unchanged=False)
    (result,) = scan_with_resets(reads, plugins, settings)
    assert isinstance(result, Activity), result
    return result, reads[0].first_look


def watcher_read(
    session: Session,
    settings: Settings,
    plugins: Plugins,
    cursor: tuple[int, ...] | None,
    known: bool,
) -> tuple[Any, bool]:
    """What the watcher's batch call gives for the same transcript from the same cursor (as a tuple)."""
    name = os.fspath(session.path)
    start, first = start_of(name, cursor, known, settings.first_look_bytes)  # type: ignore[arg-type]
    requests = [(name, decoder_for(session, plugins), start)]
    looks = [first]
    outcomes, _heads = count_reads(requests, looks, category_tables(plugins), settings.first_look_bytes)
    (outcome,) = outcomes
    assert not isinstance(outcome, Exception), outcome
    return outcome, looks[0]


def same(activity: Activity, outcome: Any) -> None:
    """The hook's scan and the watcher's count stop at the same cursor with the same counts."""
    assert activity.cursor.as_tuple() == outcome[0]
    assert (activity.messages.user, activity.messages.assistant) == (outcome[3], outcome[4])


def test_a_first_look_a_partial_line_and_a_replaced_file_read_alike(small_first_look: Settings) -> None:
    settings, plugins = small_first_look, Plugins(entry_points=False)
    path = transcript(Path.home(), SESSION_ID)
    path.write_text(prompts(30), encoding="utf-8")
    session = only_session(settings, plugins)

    # A first look: both read the recent tail only, from the same line.
    activity, hook_first = hook_read(session, settings, plugins, {})
    outcome, watch_first = watcher_read(session, settings, plugins, None, known=False)
    assert hook_first and watch_first
    assert 0 < activity.messages.user < 30
    same(activity, outcome)

    # A partial line at the end: both stop before it; its rest makes it whole for both.
    line = prompt_line("half written")
    append(path, line[:20])
    saved = {session.key: activity.cursor.as_dict()}
    activity, _ = hook_read(session, settings, plugins, saved)
    outcome, _ = watcher_read(session, settings, plugins, activity.cursor.as_tuple(), known=True)
    assert activity.messages.user == 0
    same(activity, outcome)
    append(path, line[20:])
    before = saved[session.key]
    activity, _ = hook_read(session, settings, plugins, saved)
    outcome, _ = watcher_read(session, settings, plugins, _cursor(before), known=True)
    assert activity.messages.user == 1
    same(activity, outcome)

    # Replaced by another file (a new inode, rewritten): both read its recent tail again.
    saved = {session.key: activity.cursor.as_dict()}
    replacement = path.with_name("replacement.tmp")
    replacement.write_text(prompts(40, start=100), encoding="utf-8")
    replacement.replace(path)
    activity, hook_first = hook_read(session, settings, plugins, saved)
    outcome, watch_first = watcher_read(session, settings, plugins, _cursor(saved[session.key]), known=True)
    assert hook_first and watch_first
    assert activity.reset is not None or activity.cursor.offset == path.stat().st_size
    same(activity, outcome)

    # Truncated in place: the same again.
    saved = {session.key: activity.cursor.as_dict()}
    with path.open("r+b") as file:
        file.truncate(len(prompts(2)))
    activity, _ = hook_read(session, settings, plugins, saved)
    outcome, _ = watcher_read(session, settings, plugins, _cursor(saved[session.key]), known=True)
    same(activity, outcome)


def _cursor(data: dict[str, Any]) -> tuple[int, ...]:
    from sidelight.types import Cursor

    return Cursor.from_dict(data).as_tuple()


def test_a_file_new_to_a_known_session_is_read_from_its_start_by_both() -> None:
    """The one rule of where a read starts: a reader that has read the session before reads a file new
    to it (a subagent's) whole; a session it has never read gets a first look."""
    assert start_of("/nonexistent.jsonl", None, True, FIRST_LOOK) == (None, False)
    cursor = (5, 1, 2, 3, 4, 5, 6)
    assert start_of("/nonexistent.jsonl", cursor, False, FIRST_LOOK) == (cursor, False)
    # Never read, and unreadable: a first look from nowhere (the scan then says why).
    assert start_of("/nonexistent.jsonl", None, False, FIRST_LOOK) == (None, True)


def test_the_watcher_reads_a_new_subagent_file_of_a_session_it_follows_from_its_start(
    small_first_look: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A subagent's file that appears while the watcher follows its session is all news, as the hook's
    planner reads it: the watcher's first read of it starts at 0, not at a first look's recent tail
    (which left its first prompts out of what the lifecycle heard)."""
    settings, plugins = small_first_look, Plugins(entry_points=False)
    main = transcript(Path.home(), SESSION_ID)
    main.write_text(prompt_line("the parent"), encoding="utf-8")
    starts: dict[str, list[int | None]] = {}
    real = _core.scan_many_counts

    def spy(requests: Any, *args: Any) -> Any:
        for name, _decoder, cursor in requests:
            starts.setdefault(name, []).append(None if cursor is None else cursor[0])
        return real(requests, *args)

    monkeypatch.setattr(_core, "scan_many_counts", spy)
    key = f"claude-code:{SESSION_ID}"
    with make_watcher(settings, plugins):
        wait_for(lambda: counted(settings, key) == 1, what="the first look at the parent")
        folder = main.parent / SESSION_ID / "subagents"
        folder.mkdir(parents=True)
        staged = main.parent / "agent-staged.tmp"
        staged.write_text(prompts(30), encoding="utf-8")
        subagent = folder / "agent-a1.jsonl"
        staged.replace(subagent)
        wait_for(lambda: counted(settings, key) == 31, what="the subagent's lines counted")
    first = starts[os.fspath(subagent)][0]
    assert first in (None, 0), f"the subagent's file was first read from {first}, not from its start"


def test_a_session_its_host_ended_is_ended_on_the_board_as_in_status(home: Path) -> None:
    """The Board judges its rows again at each refresh by the rule ``sidelight status`` uses, the end
    the host recorded included: it said ``active`` again after its first refresh."""
    from sidelight.dashboard.data import Board

    path = transcript(home, SESSION_ID)
    path.write_text(prompt_line("fix it", time.time() - 60), encoding="utf-8")
    events = home / "state" / "events.jsonl"
    events.parent.mkdir(parents=True, exist_ok=True)
    record = {"time": time.time(), "host": "claude-code", "event": "SessionEnd", "session_id": SESSION_ID}
    append(events, json.dumps(record) + "\n")
    settings, plugins = Settings.load(), Plugins(entry_points=False)
    clock = [time.time()]
    board = Board(settings, plugins, clock=lambda: clock[0])

    def states() -> tuple[str, str]:
        (row,) = collect_status(settings, plugins, now=clock[0]).rows
        (shown,) = board.rows()
        return row.state, shown["state"]

    assert states() == ("ended", "ended")
    clock[0] += 1.0
    board.refresh()
    assert states() == ("ended", "ended")
    # A start recorded after it (a resume) lifts it, for both.
    record = {**record, "event": "SessionStart", "time": time.time() + 1}
    append(events, json.dumps(record) + "\n")
    clock[0] += 1.0
    board.refresh()
    assert states() == ("active", "active")


def test_the_state_turns_are_where_the_rule_turns() -> None:
    """:func:`state_turns` names the moments :func:`judge_session` changes its answer at."""
    last, idle_timeout = 1_000.0, 1_800.0
    idle, ended = state_turns(last, idle_timeout)
    assert judge_session(last, idle - 0.001, idle_timeout)[0] == "active"
    assert judge_session(last, idle, idle_timeout)[0] == "idle"
    assert judge_session(last, ended - 0.001, idle_timeout)[0] == "idle"
    assert judge_session(last, ended, idle_timeout)[0] == "ended"
    assert next_state_turn([last, None], last, idle_timeout) == idle
    assert next_state_turn([last], idle, idle_timeout) == ended
    assert next_state_turn([last], ended, idle_timeout) == float("inf")


def test_a_recorded_end_counts_unless_the_session_started_again() -> None:
    lives = {"abc": (10.0, 20.0), "def": (30.0, 20.0)}
    assert host_ended(["ABC"], lives) == 20.0
    assert host_ended([None, "def"], lives) is None
    assert host_ended(["zzz"], lives) is None
