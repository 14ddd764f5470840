"""`sidelight status`: rows from the transcripts without a watcher, from the snapshot with one, the
message when nothing is found, JSON, and the live refresh."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from sidelight.config import Settings
from sidelight.plugins import Plugins
from sidelight.watch import status
from sidelight.watch.status import StatusReport, StatusRow, collect_status, nothing_found, render_table
from sidelight.watch.watcher import Watcher, read_snapshot, request_suspend
from tests.conftest import cli_command

# The throwaway HOME and the thread-leak check are the watcher tests' own fixtures.
from tests.test_watch import (  # noqa: F401
    TIMEOUT,
    append,
    edit_line,
    iso,
    no_thread_left,
    prompt_line,
    transcript,
    wait_for,
)

NOW = 1_800_000_000.0


def bash_line(n: int, command: str, moment: float) -> str:
    block = {"type": "tool_use", "id": f"b{n}", "name": "Bash", "input": {"command": command}}
    entry = {
        "type": "assistant",
        "message": {"id": f"bm{n}", "role": "assistant", "content": [block]},
        "timestamp": iso(moment),
    }
    return json.dumps(entry) + "\n"


def three_sessions(home: Path, now: float = NOW) -> None:
    """One session active (1 minute before ``now``), one idle (45 minutes), one ended (3 hours)."""
    transcript(home, "active1").write_text(
        prompt_line("fix it", now - 120)
        + edit_line(1, "/tmp/proj/a.py", now - 90)
        + bash_line(2, "pytest -q", now - 60),
        encoding="utf-8",
    )
    transcript(home, "idle1").write_text(prompt_line("later", now - 45 * 60), encoding="utf-8")
    transcript(home, "ended1").write_text(prompt_line("old", now - 3 * 3600), encoding="utf-8")


def test_rows_from_the_transcripts_without_a_watcher(home):
    three_sessions(home)
    report = collect_status(Settings.load(), Plugins(entry_points=False), now=NOW)
    assert report.source == "transcripts"
    assert report.watcher_pid is None
    by_name = {row.name: row for row in report.rows}
    assert [row.name for row in report.rows] == ["active1", "idle1", "ended1"]  # live first
    active = by_name["active1"]
    assert (active.agent, active.state, active.messages) == ("claude-code", "active", 3)
    assert active.last_activity == pytest.approx(NOW - 60)
    assert active.categories == {"edit": 1, "read": 0, "command": 1, "other": 0}
    assert active.hot_memory == 2  # the edit and the command
    assert by_name["idle1"].state == "idle"
    assert by_name["ended1"].state == "ended"
    table = render_table(report)
    lines = table.splitlines()
    assert lines[0].split() == [
        "SESSION", "AGENT", "STATE", "LAST", "ACTIVITY", "MSGS", "EDIT", "READ", "CMD", "OTHER", "HOT"
    ]  # fmt: skip
    assert lines[1].split() == ["active1", "claude-code", "active", "1m", "ago", "3", "1", "0", "1", "0", "2"]
    assert lines[2].split()[:4] == ["idle1", "claude-code", "idle", "45m"]
    assert lines[-2].startswith("3 sessions, read from the transcripts")
    assert lines[-1] == "hooks: answered in-process (no watcher running)"


def test_idle_timeout_from_the_config_file(home):
    three_sessions(home)
    config = home / "state" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('idle_timeout = "2h"\n', encoding="utf-8")
    report = collect_status(Settings.load(), Plugins(entry_points=False), now=NOW)
    assert {row.name: row.state for row in report.rows} == {
        "active1": "active",
        "idle1": "active",
        "ended1": "idle",
    }


def test_a_suspension_recorded_without_a_watcher_shows(home):
    three_sessions(home)
    settings = Settings.load()
    request_suspend("claude-code:idle1", settings)
    report = collect_status(settings, Plugins(entry_points=False), now=NOW)
    assert {row.name: row.state for row in report.rows}["idle1"] == "suspended"


def test_rows_from_a_running_watcher(home):
    path = transcript(home, "live")
    path.write_text(prompt_line("hello"), encoding="utf-8")
    settings = Settings.load()
    plugins = Plugins(entry_points=False)
    with Watcher(settings, plugins, debounce=0.02, flush_interval=0.0):
        wait_for(lambda: (read_snapshot(settings) or {}).get("sessions"), what="the snapshot")
        report = collect_status(settings, plugins)
        assert report.source == "watcher"
        assert report.watcher_pid == os.getpid()
        assert [(row.name, row.state, row.messages) for row in report.rows] == [("live", "active", 1)]
        assert "from the running watcher" in render_table(report)


def test_nothing_found_says_where_it_looked(home, run_cli):
    result = run_cli("status", env={"HOME": str(home), "SIDELIGHT_STATE_DIR": str(home / "state")})
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("no sessions found under the agents' folders")
    assert result.stdout.rstrip().endswith("is the agent's folder somewhere else? see `sidelight sessions`")
    report = StatusReport("transcripts", [], NOW, searched=["/x"])
    assert nothing_found(report) == (
        "no sessions found under /x; is the agent's folder somewhere else? see `sidelight sessions`"
    )


def test_status_json(home, run_cli):
    three_sessions(home, time.time())
    result = run_cli("status", "--json", env={"HOME": str(home), "SIDELIGHT_STATE_DIR": str(home / "state")})
    assert result.returncode == 0, result.stderr
    # JSON lines, as every other --json: one object per session, nothing else on stdout.
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(rows) == 3
    assert {row["source"] for row in rows} == {"transcripts"}
    assert len({row["time"] for row in rows}) == 1  # one report
    names = {row["name"]: row for row in rows}
    assert set(names) == {"active1", "idle1", "ended1"}
    assert names["active1"]["categories"] == {"edit": 1, "read": 0, "command": 1, "other": 0}
    assert names["active1"]["hot_memory"] == 2
    assert names["ended1"]["state"] == "ended"  # three hours is long past twice 30 minutes
    assert set(names["active1"]) == {
        "key", "name", "agent", "state", "last_activity", "ago_seconds", "messages", "categories",
        "hot_memory", "path", "group", "current_task", "partial", "user_messages", "assistant_messages",
        "source", "time", "repository", "worktree", "subfolder",
    }  # fmt: skip


def test_status_json_without_sessions_prints_no_line_and_says_why_on_stderr(home, run_cli):
    result = run_cli("status", "--json", env={"HOME": str(home), "SIDELIGHT_STATE_DIR": str(home / "state")})
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
    assert "no sessions found under" in result.stderr


def test_names_are_cleaned_in_the_table():
    row = StatusRow(
        key="k",
        name="evil\x1b[31mname\n",
        agent="pi",
        state="active",
        last_activity=None,
        messages=0,
        categories={},
        hot_memory=0,
        path="/p",
    )
    table = render_table(StatusReport("transcripts", [row], NOW))
    assert "\x1b" not in table
    assert table.splitlines()[1].split()[:4] == ["evilname", "pi", "active", "-"]


def _interruptible() -> None:
    """In the child, before exec: Ctrl-C as a terminal sends it, also where these tests run with SIGINT
    ignored (a background job of a shell without job control passes SIG_IGN on, and Python then makes
    no KeyboardInterrupt of it: `sidelight status --watch` went on after the signal)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_status_watch_refreshes_until_interrupted(home):
    three_sessions(home, time.time())
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIDELIGHT_")}
    env.update(HOME=str(home), SIDELIGHT_STATE_DIR=str(home / "state"))
    with subprocess.Popen(
        [*cli_command(), "status", "--watch", "--interval", "0.1"],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_interruptible,
    ) as process:
        try:
            assert process.stdout is not None
            seen = 0
            deadline = time.monotonic() + TIMEOUT
            while seen < 2 and time.monotonic() < deadline:
                line = process.stdout.readline()
                if line.startswith("SESSION"):
                    seen += 1
            assert seen == 2, "two refreshes"
            process.send_signal(signal.SIGINT)
            _out, err = process.communicate(timeout=TIMEOUT)
        finally:
            if process.poll() is None:
                process.kill()
    assert process.returncode == 0, err


def test_status_watch_on_a_terminal_draws_a_live_table(home):
    """On a terminal, ``--watch`` redraws a rich table in place (a pseudo-terminal stands in for one)."""
    import pty
    import select

    three_sessions(home, time.time())
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIDELIGHT_")}
    env.update(HOME=str(home), SIDELIGHT_STATE_DIR=str(home / "state"), COLUMNS="160", LINES="40")
    env.pop("NO_COLOR", None)
    env["TERM"] = "xterm-256color"
    main, replica = pty.openpty()
    process = subprocess.Popen(
        [*cli_command(), "status", "--watch", "--interval", "0.1"],
        env=env,
        stdin=replica,
        stdout=replica,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_interruptible,
    )
    os.close(replica)
    screen = b""
    try:
        deadline = time.monotonic() + TIMEOUT
        # Two draws of the table: the first, and a redraw that moves the cursor back up over it.
        while time.monotonic() < deadline and not (screen.count(b"active1") >= 2 and b"\x1b[" in screen):
            ready, _, _ = select.select([main], [], [], 0.2)
            if ready:
                try:
                    screen += os.read(main, 65536)
                except OSError:
                    break
        process.send_signal(signal.SIGINT)
        _out, err = process.communicate(timeout=TIMEOUT)
    finally:
        if process.poll() is None:
            process.kill()
        os.close(main)
    text = screen.decode("utf-8", "replace")
    assert process.returncode == 0, err
    assert "Traceback" not in text and "Traceback" not in err
    assert text.count("active1") >= 2, text[-2000:]
    assert "\x1b[" in text  # drawn with terminal control sequences, not printed as plain lines
    assert any(corner in text for corner in ("┏", "┌", "╭", "━", "─")), "a rich table's box"


# -- whole transcripts without a watcher (issue 18: 7 messages shown for a session with 9) --------------

SAMPLE = Path(__file__).parent / "data" / "claude-code" / "four-tools-resume.jsonl"


def sample_session(home: Path, name: str = "sample") -> Path:
    path = transcript(home, name)
    path.write_bytes(SAMPLE.read_bytes())
    return path


def test_without_a_watcher_the_whole_transcript_is_counted(home):
    # 167 KB: its last 64 KiB hold 7 of its 9 messages and one of its two commands.
    sample_session(home)
    report = collect_status(Settings.load(), Plugins(entry_points=False))
    [row] = report.rows
    assert (row.messages, row.categories, row.partial) == (
        9,
        {"edit": 2, "read": 1, "command": 2, "other": 0},
        False,
    )
    table = render_table(report)
    assert table.splitlines()[1].split()[-6:] == ["9", "2", "1", "2", "0", "4"]
    assert "+" not in table and "counted from the last" not in table


def test_past_the_budget_the_least_recent_transcripts_are_partial_and_say_so(home, monkeypatch, run_cli):
    old, new = sample_session(home, "older"), sample_session(home, "newer")
    os.utime(old, (NOW - 3600, NOW - 3600))
    os.utime(new, (NOW, NOW))
    monkeypatch.setattr(status, "WHOLE_BYTES", SAMPLE.stat().st_size + 1)  # room for one
    report = collect_status(Settings.load(), Plugins(entry_points=False))
    rows = {row.name: row for row in report.rows}
    assert (rows["newer"].messages, rows["newer"].partial) == (9, False)
    assert (rows["older"].messages, rows["older"].partial) == (7, True)
    lines = render_table(report).splitlines()
    older = next(line for line in lines if line.startswith("older"))
    assert older.split()[-6:] == ["7+", "2+", "1+", "1+", "0+", "3"]  # the counts, not hot memory
    assert "+: counted from the last 64 KiB of the transcript only (1 session not read whole" in lines[-2]
    assert rows["older"].as_dict(NOW)["partial"] is True


# -- whether the hooks are answered warm ---------------------------------------------------------------


def test_without_a_watcher_hooks_are_answered_in_process(home, run_cli):
    sample_session(home)
    env = {"HOME": str(home), "SIDELIGHT_STATE_DIR": str(home / "state")}
    result = run_cli("status", env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "hooks: answered in-process (no watcher running)"
    # With --json, who answers the hooks is no session row: it is said on stderr (-v).
    result = run_cli("status", "--json", "-v", env=env)
    assert [json.loads(line)["name"] for line in result.stdout.splitlines()] == ["sample"]
    assert "sidelight: hooks: answered in-process (no watcher running)" in result.stderr.splitlines()


@pytest.fixture
def watcher_lock(home):
    """The state directory held as a running watcher holds it (this process's pid in the lock)."""
    from sidelight.watch.runtime import _acquire, _release

    state = home / "state"
    state.mkdir(mode=0o700, exist_ok=True)
    fd = _acquire(state)
    yield state
    _release(fd)


def hook_snapshot(state: Path, socket_path: Path, **hooks: object) -> None:
    record = {"socket": str(socket_path), "answered": 12, "declined": 0, "last_answered": NOW, **hooks}
    snapshot = {"version": 1, "pid": os.getpid(), "sessions": [], "hooks": record}
    (state / "status.json").write_text(json.dumps(snapshot), encoding="utf-8")


def test_hooks_answered_warm_by_the_watcher(home, watcher_lock, run_cli):
    import socket

    sample_session(home)
    path = watcher_lock / "hook.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        server.bind(str(path))
        hook_snapshot(watcher_lock, path, declined=2)
        report = collect_status(Settings.load(), Plugins(entry_points=False))
        assert report.hooks.warm and report.hooks.answered == 12
        expected = (
            f"hooks: answered warm by the watcher (pid {os.getpid()}, 12 answered, 2 declined, socket {path})"
        )
        assert render_table(report).splitlines()[-1] == expected
        env = {"HOME": str(home), "SIDELIGHT_STATE_DIR": str(watcher_lock)}
        result = run_cli("status", "--json", "-v", env=env)
        assert f"sidelight: {expected}" in result.stderr.splitlines()
    finally:
        server.close()
    # The socket gone (the server stopped, the snapshot not yet rewritten): not warm.
    path.unlink()
    report = collect_status(Settings.load(), Plugins(entry_points=False))
    assert not report.hooks.warm
    assert report.hooks.line(os.getpid()) == (
        f"hooks: answered in-process (the watcher does not serve them: its socket {path} is missing)"
    )


def test_a_watcher_without_a_hook_server_does_not_answer_them(home, watcher_lock, run_cli):
    transcript(home, "live").write_text(prompt_line("hello"), encoding="utf-8")
    hook_snapshot(watcher_lock, watcher_lock / "hook.sock")
    data = json.loads((watcher_lock / "status.json").read_text(encoding="utf-8"))
    del data["hooks"]  # a watcher that does not serve the hooks writes no such record
    (watcher_lock / "status.json").write_text(json.dumps(data), encoding="utf-8")
    result = run_cli("status", env={"HOME": str(home), "SIDELIGHT_STATE_DIR": str(watcher_lock)})
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == (
        "hooks: answered in-process (the watcher does not serve them: no hook server in its status)"
    )


def test_hooks_of_a_stale_snapshot_are_not_believed(home, watcher_lock):
    # A snapshot left by an earlier watcher (another pid) says nothing about the one running now.
    hook_snapshot(watcher_lock, watcher_lock / "hook.sock")
    data = json.loads((watcher_lock / "status.json").read_text(encoding="utf-8"))
    data["pid"] = os.getpid() + 1
    (watcher_lock / "status.json").write_text(json.dumps(data), encoding="utf-8")
    hooks = collect_status(Settings.load(), Plugins(entry_points=False)).hooks
    assert (
        not hooks.warm
        and hooks.reason == "the watcher does not serve them: it has not written its status yet"
    )


# -- the watcher counts a transcript whole at its first look (issue 18: it showed 28 of 29) --------------


def watcher_row(settings: Settings, name: str, messages: int) -> Any:
    def row() -> Any:
        for record in (read_snapshot(settings) or {}).get("sessions") or ():
            if record["name"] == name and record["messages"] == messages:
                return record
        return None

    return wait_for(row, what=f"{name} with {messages} messages in the snapshot")


def test_the_watcher_counts_the_whole_transcript_it_first_sees(home):
    from sidelight.features.lifecycle import LifecycleSettings, SessionTracker

    sample_session(home)
    # A first look of 64 KiB: the sample's first prompt lies before it (the default holds the whole
    # 167 KB sample).
    settings = Settings.load(env={**os.environ, "SIDELIGHT_FIRST_LOOK_BYTES": str(64 * 1024)})
    plugins = Plugins(entry_points=False)
    events: list[Any] = []
    tracker = SessionTracker(LifecycleSettings(idle_timeout=10 * 365 * 86400), emit=events.append)
    with Watcher(settings, plugins, tracker=tracker, debounce=0.02, flush_interval=0.0):
        record = watcher_row(settings, "sample", 9)
        assert record["categories"] == {"edit": 2, "read": 1, "command": 2, "other": 0}
        # The tracker heard only the recent tail as news: the 2 prompts' first is before it.
        assert [e.kind for e in events].count("prompt_submitted") == 1
        append(transcript(home, "sample"), prompt_line("one more"))
        watcher_row(settings, "sample", 10)  # from then on, what is appended
    report = collect_status(settings, plugins)
    assert [(row.name, row.messages, row.partial) for row in report.rows] == [("sample", 10, False)]


def test_a_transcript_that_grows_during_the_first_look_is_counted_once(home, monkeypatch):
    from sidelight import _core

    path = sample_session(home)
    real = _core.scan_many_counts
    grown: list[bool] = []

    def scan(requests, *args):
        if not grown and requests and all(cursor is None for _p, _d, cursor in requests):
            append(path, prompt_line("written between the two scans"))  # the whole scan sees it
            grown.append(True)
        return real(requests, *args)

    monkeypatch.setattr(_core, "scan_many_counts", scan)  # the watcher calls it through the module
    # A first look shorter than the sample, so that the watcher counts its head in a second scan.
    settings = Settings.load(env={**os.environ, "SIDELIGHT_FIRST_LOOK_BYTES": str(64 * 1024)})
    with Watcher(settings, Plugins(entry_points=False), debounce=0.02, flush_interval=0.0):
        watcher_row(settings, "sample", 10)
        append(path, prompt_line("and one after"))
        watcher_row(settings, "sample", 11)
        time.sleep(0.2)  # a few more passes: nothing is counted twice
        assert watcher_row(settings, "sample", 11)
    assert grown == [True]


# -- one answer to "has this session ended?": status (with a watcher or without) and recap (issue 21) --

CODEX_SAMPLE = Path(__file__).parent / "data" / "codex" / "four-tools-resume.jsonl"
CODEX_ID = "01a1fffb-7517-7871-9b38-b9b39d5b1d71"


def codex_rollout(home: Path, moment: float | None = None) -> Path:
    """The real Codex rollout in ``~/.codex/sessions``; ``moment``: its lines moved to that minute (the
    sample's own are days old). Codex records no end: only the time tells."""
    day = home / ".codex" / "sessions" / "2026" / "11" / "21"
    day.mkdir(parents=True, exist_ok=True)
    path = day / f"rollout-2026-11-21T21-20-32-{CODEX_ID}.jsonl"
    text = CODEX_SAMPLE.read_text(encoding="utf-8")
    if moment is not None:
        text = text.replace("2026-11-21T21:20:", iso(moment)[:17])
    path.write_text(text, encoding="utf-8")
    return path


def recap_header(run_cli: Any, home: Path, session: str) -> list[str]:
    env = {"HOME": str(home), "SIDELIGHT_STATE_DIR": str(home / "state")}
    result = run_cli("recap", session, env=env)
    assert result.returncode == 0, result.stderr
    lines: list[str] = result.stdout.splitlines()[:2]
    return lines


def codex_state(home: Path) -> str:
    report = collect_status(Settings.load(), Plugins())
    (row,) = [row for row in report.rows if row.agent == "codex"]
    return row.state


def test_an_old_codex_session_is_ended_for_status_and_recap(home, run_cli):
    path = codex_rollout(home)
    os.utime(path, (time.time() - 3 * 86400,) * 2)
    assert codex_state(home) == "ended"
    title, source = recap_header(run_cli, home, CODEX_ID[:8])
    assert title == f"# Recap of session codex {CODEX_ID[-8:]}" and source.endswith("; ended."), source


def test_a_fresh_codex_session_is_in_progress_for_status_and_recap(home, run_cli):
    codex_rollout(home, time.time() - 120)
    assert codex_state(home) == "active"
    title, source = recap_header(run_cli, home, CODEX_ID[:8])
    assert title == f"# Recap of session codex {CODEX_ID[-8:]}" and source.endswith("; in progress."), source
    # Named by its path, it is the same session.
    assert recap_header(run_cli, home, str(codex_rollout(home, time.time() - 120)))[1] == source


def test_a_codex_session_quiet_past_the_idle_timeout_is_idle_for_both(home, run_cli):
    codex_rollout(home, time.time() - 45 * 60)
    assert codex_state(home) == "idle"
    assert recap_header(run_cli, home, CODEX_ID[:8])[1].endswith("; idle.")


def test_with_a_watcher_status_and_recap_give_its_answer(home, run_cli):
    from sidelight.features.lifecycle import LifecycleSettings, SessionTracker

    codex_rollout(home, time.time() - 120)
    settings = Settings.load()
    plugins = Plugins()
    with Watcher(
        settings, plugins, tracker=SessionTracker(LifecycleSettings()), debounce=0.02, flush_interval=0.0
    ):
        wait_for(lambda: (read_snapshot(settings) or {}).get("sessions"), what="the snapshot")
        report = collect_status(settings, plugins)
        assert report.source == "watcher"
        (row,) = [row for row in report.rows if row.agent == "codex"]
        assert row.state == "active"
        assert recap_header(run_cli, home, CODEX_ID[:8])[1].endswith("; in progress.")


def test_a_session_its_host_ended_is_ended_without_a_watcher(home, run_cli):
    """Claude Code's ``SessionEnd`` (recorded by the hook in ``events.jsonl``) ends a session at once, as
    the watcher's lifecycle does; a start recorded after it (a resume) lifts it."""
    session_id = "7d3c2f1e-0000-4000-8000-000000000001"
    transcript(home, session_id).write_text(prompt_line("fix it", time.time() - 60), encoding="utf-8")
    events = home / "state" / "events.jsonl"
    events.parent.mkdir(parents=True, exist_ok=True)

    def record(event: str) -> None:
        line = {"time": time.time(), "host": "claude-code", "event": event, "session_id": session_id}
        append(events, json.dumps(line) + "\n")

    def state() -> str:
        (row,) = collect_status(Settings.load(), Plugins()).rows
        return row.state

    assert state() == "active"
    env = {"HOME": str(home), "SIDELIGHT_STATE_DIR": str(home / "state")}
    working = run_cli("recap", session_id[:8], env=env).stdout
    assert "; in progress.\n" in working
    assert '- The session is still working on "fix it" (no final answer yet).' in working
    record("SessionEnd")
    assert state() == "ended"
    ended = run_cli("recap", session_id[:8], env=env).stdout
    assert "; interrupted (no final answer).\n" in ended
    assert '- The session was interrupted while working on "fix it".' in ended
    record("SessionStart")
    assert state() == "active"


def test_a_watcher_that_first_sees_an_idle_session_says_idle(home, run_cli):
    """Quiet for 45 minutes when the watcher comes: idle, as without a watcher, not active again for
    another idle timeout from the watcher's first look."""
    codex_rollout(home, time.time() - 45 * 60)
    settings = Settings.load()
    plugins = Plugins()

    def codex_row() -> Any:
        for record in (read_snapshot(settings) or {}).get("sessions") or ():
            if record.get("agent") == "codex" and record.get("state") == "idle":
                return record
        return None

    from sidelight.features.lifecycle import LifecycleSettings, SessionTracker

    tracker = SessionTracker(LifecycleSettings())  # as `sidelight watch` has one: the default timeouts
    with Watcher(settings, plugins, tracker=tracker, debounce=0.02, flush_interval=0.0):
        wait_for(codex_row, what="the codex session, idle, in the snapshot")
        assert recap_header(run_cli, home, CODEX_ID[:8])[1].endswith("; idle.")
