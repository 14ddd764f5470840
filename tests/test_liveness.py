"""Liveness from the hosts' own registries of running sessions (issue 31, item 6): Claude Code's
``~/.claude/sessions/<pid>.json`` and Qwen Code's ``~/.qwen/sessions/<pid>.json`` say which process runs
which session; a session whose process runs is running, one whose process is gone (dead, or its pid
now another program's) has ended, for ``sidelight status``, the dashboard and the handoff. Bad registry
files are unknown (file times decide), never an error."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from sidelight.agents import claude_code, qwen
from sidelight.config import Settings
from sidelight.engine import liveness
from sidelight.engine.liveness import (
    MAX_RECORD_BYTES,
    judge_record,
    process_start,
    registry_records,
    same_process,
    session_liveness,
)
from sidelight.features.recap import handoff
from sidelight.plugins import Plugins
from sidelight.records import AgentSpec
from sidelight.watch.follow import derive_state, liveness_of
from sidelight.watch.status import collect_status
from tests.test_recap_handoff import claude_transcript, context, start
from tests.test_watch import prompt_line, transcript

if TYPE_CHECKING:
    from sidelight.records import Liveness

pytestmark = pytest.mark.skipif(not Path("/proc").is_dir(), reason="pid start times are read from /proc")

SESSION = "7d3c2f1e-0000-4000-8000-000000000001"


def dead_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def own_start() -> int:
    found = process_start(os.getpid())
    assert found is not None
    return found


def domain() -> str:
    """This process's ``pidDomain`` as Claude Code writes it."""
    return f"linux:{liveness.machine_id()}:pid:[{liveness.pid_namespace()}]"


def claude_record(home: Path, pid: int, session_id: str = SESSION, **fields: Any) -> Path:
    """A ``sessions/<pid>.json`` as Claude Code 2.1 writes it for a running session."""
    record = {
        "pid": pid,
        "sessionId": session_id,
        "cwd": "/tmp/proj",
        "startedAt": int(time.time() * 1000),
        "procStart": str(own_start()),
        "kind": "interactive",
        "pidDomain": domain(),
        **fields,
    }
    folder = home / ".claude" / "sessions"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{pid}.json"
    path.write_text(json.dumps(record), encoding="utf-8")
    return path


def qwen_record(home: Path, pid: int, session_id: str = SESSION, name: str = "", **fields: Any) -> Path:
    """A ``sessions/<pid>.json`` as Qwen Code's session registry writes it."""
    record = {
        "schemaVersion": 1,
        "pid": pid,
        "procStart": f"{liveness.boot_id()}:{own_start()}",
        "pidNs": liveness.pid_namespace(),
        "sessionId": session_id,
        "cwd": "/tmp/proj",
        "name": "proj-3f",
        "startedAt": int(time.time() * 1000),
        "qwenVersion": "0.24.4",
        "kind": "tui",
        **fields,
    }
    folder = home / ".qwen" / "sessions"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / (name or f"{pid}.json")
    path.write_text(json.dumps(record), encoding="utf-8")
    return path


# --- is this pid the same process -----------------------------------------------------------------------


def test_this_process_with_its_start_time_is_the_same_process() -> None:
    assert same_process(os.getpid(), own_start()) is True
    assert same_process(os.getpid(), None) is True  # no start time recorded: alive is all that is told


def test_a_dead_pid_is_gone() -> None:
    assert same_process(dead_pid(), None) is False
    assert process_start(dead_pid()) is None


def test_a_reused_pid_is_not_taken_for_the_process_that_wrote_the_record() -> None:
    assert same_process(os.getpid(), own_start() + 1) is False


@pytest.mark.parametrize("pid", [0, -1, 1 << 40])
def test_a_pid_that_cannot_be_one_is_not_told(pid: int) -> None:
    assert same_process(pid, None) is None


# --- the registries ---------------------------------------------------------------------------------


def test_claude_code_s_registry_says_running_and_gone(home: Path) -> None:
    claude_record(home, os.getpid(), "AAAA-running")
    claude_record(home, dead_pid(), "bbbb-dead")
    # A pid now used by another program: this process's pid, with another start time.
    other = home / ".claude" / "sessions"
    record = json.loads((other / f"{os.getpid()}.json").read_text(encoding="utf-8"))
    (other / f"{os.getpid()}.json").write_text(
        json.dumps({**record, "sessionId": "cccc-reused", "procStart": str(own_start() - 5)}),
        encoding="utf-8",
    )
    claude_record(home, 1, "dddd-init")  # pid 1 runs, and started at another time than this process
    found = claude_code.live_sessions(Settings.load())
    assert found == {"cccc-reused": "gone", "bbbb-dead": "gone", "dddd-init": "gone"}
    claude_record(home, os.getpid(), "AAAA-running")
    assert claude_code.live_sessions(Settings.load())["aaaa-running"] == "running"  # ids in lower case


def test_qwen_s_registry_says_running_and_gone(home: Path) -> None:
    qwen_record(home, os.getpid(), "qwen-running")
    qwen_record(home, dead_pid(), "qwen-dead")
    qwen_record(home, os.getpid(), "qwen-slot", name=f"{os.getpid()}-0a1b2c3d.json")
    assert qwen.live_sessions(Settings.load()) == {
        "qwen-running": "running",
        "qwen-dead": "gone",
        "qwen-slot": "running",
    }


def test_records_of_another_machine_namespace_or_boot_say_nothing(home: Path) -> None:
    claude_record(home, dead_pid(), "other-machine", pidDomain="linux:0123456789abcdef:pid:[4026531836]")
    claude_record(home, dead_pid(), "other-namespace", pidDomain=f"linux:{liveness.machine_id()}:pid:[1]")
    qwen_record(home, dead_pid(), "other-boot", procStart=f"00000000-dead-beef:{own_start()}")
    qwen_record(home, dead_pid(), "other-pid-ns", pidNs=1)
    assert claude_code.live_sessions(Settings.load()) == {}
    assert qwen.live_sessions(Settings.load()) == {}


def test_hostile_registry_files_are_unknown_never_an_error(home: Path) -> None:
    folder = home / ".claude" / "sessions"
    folder.mkdir(parents=True)
    pid = dead_pid()
    good = {"pid": pid, "sessionId": "s-good", "procStart": "1"}
    (folder / "11.json").write_text('{"pid": 11, "sessionId": "s-trunc', encoding="utf-8")  # truncated
    (folder / "12.json").write_bytes(b"\xff\xfe\x00garbage")
    (folder / "13.json").write_text("[13]", encoding="utf-8")
    (folder / "14.json").write_text(json.dumps({**good, "pid": 14, "procStart": "soon"}), encoding="utf-8")
    (folder / "15.json").write_text(json.dumps({**good, "sessionId": "s-wrong-pid"}), encoding="utf-8")
    (folder / "16.json").write_text(json.dumps({**good, "pid": 16, "pidDomain": 7}), encoding="utf-8")
    (folder / "17.json").write_text(json.dumps({"pid": 17, "sessionId": ["x"]}), encoding="utf-8")
    huge = {**good, "pid": 18, "sessionId": "s-huge", "pad": "x" * MAX_RECORD_BYTES}
    (folder / "18.json").write_text(json.dumps(huge), encoding="utf-8")
    target = folder.parent / "elsewhere.json"
    target.write_text(json.dumps({**good, "pid": 19, "sessionId": "s-link"}), encoding="utf-8")
    (folder / "19.json").symlink_to(target)
    os.mkfifo(folder / "20.json")  # a FIFO with no writer must not hold the read
    (folder / "21.json").mkdir()
    (folder / "abc.json").write_text(json.dumps({**good, "pid": 0}), encoding="utf-8")
    (folder / f"{pid}.json").write_text(json.dumps(good), encoding="utf-8")
    # Read: the small regular files named by a pid that hold a JSON object (the agent judges their fields).
    assert sorted(p for p, _ in registry_records(folder)) == sorted([14, 15, 16, 17, pid])
    assert claude_code.live_sessions(Settings.load()) == {"s-good": "gone"}
    # A registry folder that is a file, or unreadable, has no records.
    assert list(registry_records(target)) == []
    assert list(registry_records(home / "nowhere")) == []


def test_a_session_some_record_says_runs_stays_running() -> None:
    """A resumed session: the record its crashed process left says gone, its new process's running."""
    live: dict[str, Any] = {}
    judge_record(dead_pid(), {"pid": None, "sessionId": "s"}, None, live)  # names another pid: nothing
    assert live == {}
    judge_record(os.getpid(), {"pid": os.getpid(), "sessionId": "S"}, own_start(), live)
    pid = dead_pid()
    judge_record(pid, {"pid": pid, "sessionId": "s"}, None, live)
    assert live == {"s": "running"}
    assert liveness_of(["nope", "S"], live) == "running"
    assert liveness_of([None, "other"], live) is None


def test_every_agent_s_registry_in_one_mapping_and_a_failing_one_costs_only_itself(home: Path) -> None:
    def broken(settings: Settings) -> dict[str, Liveness]:
        raise RuntimeError("boom")

    def plugin(settings: Settings) -> dict[str, Liveness]:
        return {"Plugin-Session": "running"}

    claude_record(home, dead_pid())
    agents = [
        AgentSpec("broken", live_sessions=broken),
        AgentSpec("mine", live_sessions=plugin),
        AgentSpec("none"),
        *Plugins(entry_points=False).agents().values(),
    ]
    found = session_liveness(Settings.load(), Plugins(entry_points=False), agents)
    assert found == {SESSION: "gone", "plugin-session": "running"}
    assert Plugins(entry_points=False).agent("claude-code").live_sessions is claude_code.live_sessions  # type: ignore[union-attr]


# --- the state rule -------------------------------------------------------------------------------------


def test_gone_ends_a_session_and_running_is_never_ended_by_the_clock() -> None:
    now = 10_000.0
    assert derive_state(now - 10, now, 1800, liveness="gone") == "ended"
    assert derive_state(now - 10, now, 1800, suspended=True, liveness="gone") == "ended"
    assert derive_state(now - 5000, now, 1800, liveness="running") == "idle"
    assert derive_state(None, now, 1800, liveness="running") == "active"
    assert derive_state(now - 10, now, 1800, liveness="running") == "active"
    assert derive_state(now - 10, now, 1800, ended_at=now - 5, liveness="running") == "ended"  # its host said
    assert derive_state(now - 5000, now, 1800) == "ended"  # no registry: file times, as before


# --- consumers ------------------------------------------------------------------------------------------


def status_state(home: Path) -> str:
    (row,) = collect_status(Settings.load(), Plugins(entry_points=False)).rows
    return row.state


def test_status_shows_a_session_whose_process_is_gone_as_ended(home: Path) -> None:
    transcript(home, SESSION).write_text(prompt_line("fix it", time.time() - 60), encoding="utf-8")
    assert status_state(home) == "active"  # file times alone: written a minute ago
    record = claude_record(home, dead_pid())
    assert status_state(home) == "ended"
    record.unlink()
    claude_record(home, os.getpid())
    assert status_state(home) == "active"


def test_status_does_not_end_a_quiet_session_whose_process_runs(home: Path) -> None:
    transcript(home, SESSION).write_text(prompt_line("fix it", time.time() - 3 * 3600), encoding="utf-8")
    assert status_state(home) == "ended"
    claude_record(home, os.getpid())
    assert status_state(home) == "idle"


def test_the_dashboard_judges_liveness_again_on_each_refresh(home: Path) -> None:
    from sidelight.dashboard import data

    transcript(home, SESSION).write_text(prompt_line("fix it", time.time() - 60), encoding="utf-8")
    board = data.Board(Settings.load(), Plugins(entry_points=False))
    assert [r["state"] for r in board.rows()] == ["active"]
    claude_record(home, dead_pid())
    board.refresh()
    assert [r["state"] for r in board.rows()] == ["ended"]


def test_a_session_whose_process_is_gone_is_handed_off_at_once(home: Path, workspace: Path) -> None:
    previous = "11111111-1111-4111-8111-111111111111"
    claude_transcript(home, workspace, previous, mtime=None)  # written just now: running alongside
    claude_record(home, os.getpid(), previous)
    assert start(workspace, "22222222-2222-4222-8222-222222222222", home) is None
    claude_record(home, dead_pid(), previous)  # its process is gone (killed: no SessionEnd)
    (home / ".claude" / "sessions" / f"{os.getpid()}.json").unlink()
    assert context(start(workspace, "33333333-3333-4333-8333-333333333333", home)) is not None


def test_a_quiet_session_whose_process_runs_is_running_alongside(home: Path, workspace: Path) -> None:
    previous = "11111111-1111-4111-8111-111111111111"
    claude_transcript(home, workspace, previous)  # quiet for an hour
    claude_record(home, os.getpid(), previous)
    settings, plugins = Settings.load(), Plugins(entry_points=False)
    current = claude_transcript(home, workspace, "22222222-2222-4222-8222-222222222222", mtime=None)
    me = next(s for s in plugins.resolver("claude-code").list_sessions(settings) if s.path == current)  # type: ignore[union-attr]
    assert handoff.previous_session(me, settings, plugins) is None
    (home / ".claude" / "sessions" / f"{os.getpid()}.json").unlink()
    found = handoff.previous_session(me, settings, plugins)
    assert found is not None and found.id == previous


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "work" / "proj"
    folder.mkdir(parents=True)
    return folder.resolve()


def test_with_a_watcher_status_shows_a_session_whose_process_is_gone_as_ended(home: Path) -> None:
    """The watcher writes nothing when a process dies: status corrects the snapshot's state as it reads
    it, by the session id the snapshot now records."""
    from sidelight.watch.status import session_state
    from sidelight.watch.watcher import Watcher, read_snapshot
    from tests.test_watch import wait_for

    transcript(home, SESSION).write_text(prompt_line("fix it"), encoding="utf-8")
    settings, plugins = Settings.load(), Plugins(entry_points=False)
    with Watcher(settings, plugins, debounce=0.02, flush_interval=0.0):
        wait_for(lambda: (read_snapshot(settings) or {}).get("sessions"), what="the snapshot")
        (record,) = (read_snapshot(settings) or {})["sessions"]
        assert record["session_id"] == SESSION
        assert [row.state for row in collect_status(settings, plugins).rows] == ["active"]
        claude_record(home, dead_pid())
        report = collect_status(settings, plugins)
        assert report.source == "watcher"
        assert [row.state for row in report.rows] == ["ended"]
        (session,) = plugins.resolver("claude-code").list_sessions(settings)  # type: ignore[union-attr]
        assert session_state(session, settings, plugins) == "ended"
