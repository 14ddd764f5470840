"""The watcher (`sidelight.watch.watcher`, `sidelight watch`): real files in a throwaway HOME, a writer thread
appending while the watcher runs, and nothing that can pass or fail by luck.

* Every wait polls with a deadline (:func:`wait_for`); no sleep decides an outcome.
* Every test checks that the threads it started are gone at the end (:func:`no_thread_left`).
* Writers are helper threads joined with a timeout; lifecycle time comes from an injectable clock.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import stat
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from sidelight.cli.watch import LogOutput
from sidelight.config import Settings
from sidelight.cursors import CursorStore
from sidelight.features.lifecycle import LifecycleSettings, SessionTracker
from sidelight.hookspecs import hookimpl
from sidelight.plugins import Plugins
from sidelight.records import Session, SinkEvent, SinkSpec
from sidelight.statelayout import STATUS_FILE, WATCH_CURSORS_FILE
from sidelight.watch.watcher import (
    COOL_AFTER,
    COOL_EVERY,
    READER,
    Watcher,
    WatcherRunningError,
    read_snapshot,
    request_resume,
    request_suspend,
    running_watcher,
    status_row,
    watch_options,
)
from tests import conftest
from tests.conftest import cli_command, threads_joined

#: Generous: a loaded CI machine is slow, and a passing test never waits this long.
TIMEOUT = 20.0
PROJECT = "-tmp-proj"


def wait_for(predicate: Callable[[], Any], timeout: float = TIMEOUT, what: str = "the condition") -> Any:
    return conftest.wait_for(predicate, timeout, what)


@pytest.fixture(autouse=True)
def no_thread_left() -> Iterator[None]:
    """Every thread a test starts (observer, emitters, inotify reader, worker, writers) is gone at the
    end: the watcher's stop() joins them all."""
    before = set(threading.enumerate())
    yield
    threads_joined(before)


@pytest.fixture
def settings(home: Path) -> Settings:
    return Settings.load()


@pytest.fixture
def events() -> list[SinkEvent]:
    return []


@pytest.fixture
def plugins(events: list[SinkEvent]) -> Plugins:
    """The built-in templates plus a sink that records the watcher's events."""

    class Recorder:
        @hookimpl
        def sidelight_sinks(self):
            yield SinkSpec(name="test-recorder", emit=events.append)

    fresh = Plugins(entry_points=False)
    fresh.register(Recorder(), name="test-recorder")
    return fresh


class Clock:
    """An injectable clock for the lifecycle: moves only when told to."""

    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


def iso(moment: float) -> str:
    return datetime.fromtimestamp(moment, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def prompt_line(text: str, moment: float | None = None) -> str:
    entry = {
        "type": "user",
        "message": {"role": "user", "content": text},
        "timestamp": iso(time.time() if moment is None else moment),
        "sessionId": "s",
        "cwd": "/tmp/proj",
    }
    return json.dumps(entry) + "\n"


def edit_line(n: int, path: str, moment: float | None = None) -> str:
    block = {
        "type": "tool_use",
        "id": f"tu{n}",
        "name": "Edit",
        "input": {"file_path": path, "old_string": "a", "new_string": "b"},
    }
    entry = {
        "type": "assistant",
        "message": {"id": f"m{n}", "role": "assistant", "content": [block]},
        "timestamp": iso(time.time() if moment is None else moment),
    }
    return json.dumps(entry) + "\n"


def transcript(home: Path, session_id: str, project: str = PROJECT) -> Path:
    folder = home / ".claude" / "projects" / project
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{session_id}.jsonl"


def append(path: Path, text: str) -> None:
    with path.open("a", encoding="utf-8") as file:
        file.write(text)


class Writer(threading.Thread):
    """A helper thread that appends ``count`` prompt lines to each path, some in two halves (a partial
    line must wait for its end), with short pauses. Joined by the test with a timeout."""

    def __init__(self, paths: list[Path], count: int, pause: float = 0.002) -> None:
        super().__init__(name="test-writer", daemon=True)
        self.paths = paths
        self.count = count
        self.pause = pause
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            for n in range(self.count):
                for path in self.paths:
                    line = prompt_line(f"line {n} of {path.stem}")
                    if n % 7 == 3:
                        half = len(line) // 2
                        append(path, line[:half])
                        time.sleep(self.pause)
                        append(path, line[half:])
                    else:
                        append(path, line)
                time.sleep(self.pause)
        except BaseException as error:
            self.error = error

    def finish(self) -> None:
        self.join(TIMEOUT)
        assert not self.is_alive(), "the writer did not finish"
        assert self.error is None, self.error


def rows(settings: Settings) -> dict[str, dict[str, Any]]:
    snapshot = read_snapshot(settings) or {}
    return {row["key"]: row for row in snapshot.get("sessions") or ()}


def counted(settings: Settings, key: str) -> int:
    return int(rows(settings).get(key, {}).get("lines", -1))


def make_watcher(settings: Settings, plugins: Plugins, clock: Clock | None = None, **options: Any) -> Watcher:
    tracker = SessionTracker(LifecycleSettings(idle_timeout=60, max_duration=3600), clock=clock or Clock())
    options.setdefault("debounce", 0.02)
    options.setdefault("reconcile_interval", 60.0)  # events do the work unless a test says otherwise
    options.setdefault("flush_interval", 0.0)
    return Watcher(settings, plugins, tracker=tracker, **options)


def test_every_line_is_counted_once_while_a_writer_appends(home, settings, plugins):
    paths = [transcript(home, f"s{i}") for i in range(3)]
    paths[0].write_text(prompt_line("already there"), encoding="utf-8")
    with make_watcher(settings, plugins) as watcher:
        wait_for(lambda: counted(settings, "claude-code:s0") == 1, what="the first look")
        writer = Writer(paths, count=60)
        writer.start()
        writer.finish()
        expected = {"claude-code:s0": 61, "claude-code:s1": 60, "claude-code:s2": 60}
        wait_for(
            lambda: all(counted(settings, key) == n for key, n in expected.items()),
            what=f"the counts {expected} (have { {k: counted(settings, k) for k in expected} })",
        )
        tracker = watcher.tracker
    assert tracker is not None
    for key, n in expected.items():
        assert tracker.states()[key].messages["user"] == n
    # The cursors stop exactly at the end of each file: nothing left, nothing read twice.
    cursors = CursorStore(settings.state_dir / WATCH_CURSORS_FILE).read(READER)
    for i, path in enumerate(paths):
        assert cursors[f"claude-code:s{i}"]["offset"] == path.stat().st_size
    assert not watcher.running


def test_a_deleted_transcript_is_forgotten_and_the_others_go_on(home, settings, plugins, caplog):
    keep, drop = transcript(home, "keep"), transcript(home, "drop")
    keep.write_text(prompt_line("one"), encoding="utf-8")
    drop.write_text(prompt_line("one"), encoding="utf-8")
    with make_watcher(settings, plugins, reconcile_interval=0.3):
        wait_for(lambda: counted(settings, "claude-code:drop") == 1, what="the first look")
        drop.unlink()
        wait_for(lambda: "claude-code:drop" not in rows(settings), what="the deleted session to go")
        append(keep, prompt_line("two"))
        wait_for(lambda: counted(settings, "claude-code:keep") == 2, what="the other session's line")
        # A whole project folder going away is survived too.
        gone = transcript(home, "elsewhere", project="-tmp-other")
        gone.write_text(prompt_line("x"), encoding="utf-8")
        wait_for(lambda: counted(settings, "claude-code:elsewhere") == 1, what="the new project")
        gone.unlink()
        gone.parent.rmdir()
        wait_for(lambda: "claude-code:elsewhere" not in rows(settings), what="the removed project")
        append(keep, prompt_line("three"))
        wait_for(lambda: counted(settings, "claude-code:keep") == 3, what="a line after the removal")
    assert not [r for r in caplog.records if r.levelname in ("ERROR", "CRITICAL")]


def test_a_folder_created_after_start_gets_watched(home, settings, plugins):
    # Nothing of Claude Code's exists yet: the root is picked up by the reconcile pass.
    with make_watcher(settings, plugins, reconcile_interval=0.2) as watcher:
        path = transcript(home, "late")
        path.write_text(prompt_line("hello"), encoding="utf-8")
        wait_for(lambda: counted(settings, "claude-code:late") == 1, what="the late session")
        root = os.path.realpath(home / ".claude" / "projects")
        wait_for(lambda: root in watcher.roots.watches, what="a watch on the new root")
        # From now on events do the work: a new project folder inside the root, appended at once.
        watcher.reconcile_interval = 3600.0
        newer = transcript(home, "newer", project="-tmp-new")
        newer.write_text(prompt_line("a") + prompt_line("b"), encoding="utf-8")
        wait_for(lambda: counted(settings, "claude-code:newer") == 2, what="the session of a new folder")


def test_polling_observer(home, settings, plugins):
    path = transcript(home, "polled")
    with make_watcher(settings, plugins, polling=True, poll_interval=0.1) as watcher:
        writer = Writer([path], count=25)
        writer.start()
        writer.finish()
        wait_for(lambda: counted(settings, "claude-code:polled") == 25, what="25 polled lines")
        from watchdog.observers.polling import PollingObserver

        assert isinstance(watcher.roots.observer, PollingObserver)


def test_a_second_watcher_on_one_state_directory_is_refused(home, settings, plugins):
    with make_watcher(settings, plugins):
        second = make_watcher(settings, plugins)
        with pytest.raises(WatcherRunningError) as caught:
            second.start()
        message = str(caught.value)
        assert message == f"another sidelight watch is running on {settings.state_dir} (pid {os.getpid()})"
        assert running_watcher(settings) == os.getpid()
        assert not second.running
    assert running_watcher(settings) is None
    with make_watcher(settings, plugins):  # free again once the first stopped
        pass


def test_stop_joins_every_thread_and_flushes(home, settings, plugins):
    path = transcript(home, "flush")
    before = set(threading.enumerate())
    watcher = make_watcher(settings, plugins, flush_interval=3600.0)  # only stop() writes
    watcher.start()
    assert len(set(threading.enumerate()) - before) >= 2  # observer and worker at least
    path.write_text(prompt_line("a"), encoding="utf-8")
    wait_for(lambda: watcher._scans > 0 and watcher._rows, what="the scan")
    watcher.stop()
    assert set(threading.enumerate()) - before == set()
    status = settings.state_dir / STATUS_FILE
    assert stat.S_IMODE(status.stat().st_mode) == 0o600
    assert counted(settings, "claude-code:flush") == 1
    assert CursorStore(settings.state_dir / WATCH_CURSORS_FILE).read(READER)["claude-code:flush"][
        "offset"
    ] == (path.stat().st_size)


def test_a_restart_keeps_cursors_counts_and_lifecycle(home, settings, plugins):
    path = transcript(home, "kept")
    path.write_text(prompt_line("one") + prompt_line("two"), encoding="utf-8")
    with make_watcher(settings, plugins):
        wait_for(lambda: counted(settings, "claude-code:kept") == 2, what="two lines")
    append(path, prompt_line("three"))  # written while no watcher runs
    with make_watcher(settings, plugins) as watcher:
        wait_for(lambda: counted(settings, "claude-code:kept") == 3, what="the line written meanwhile")
        append(path, edit_line(1, "/tmp/proj/a.py"))
        wait_for(lambda: counted(settings, "claude-code:kept") == 4, what="a line after the restart")
        tracker = watcher.tracker
    assert tracker is not None
    state = tracker.states()["claude-code:kept"]
    assert state.messages == {"user": 3, "assistant": 1}  # restored, then added to
    assert state.lives == 1
    assert rows(settings)["claude-code:kept"]["hot_memory"] == 1


def test_lifecycle_follows_the_injected_clock(home, settings, plugins, events):
    clock = Clock()
    path = transcript(home, "life")
    with make_watcher(settings, plugins, clock=clock):
        path.write_text(prompt_line("start"), encoding="utf-8")
        wait_for(lambda: rows(settings).get("claude-code:life", {}).get("state") == "active", what="active")
        clock.now += 61  # past the idle timeout of 60 s
        wait_for(lambda: rows(settings)["claude-code:life"]["state"] == "idle", what="idle after the tick")
        append(path, prompt_line("back"))
        wait_for(lambda: rows(settings)["claude-code:life"]["state"] == "active", what="active again")
        clock.now += 121
        wait_for(lambda: rows(settings)["claude-code:life"]["state"] == "ended", what="ended")
        wait_for(lambda: list((settings.state_dir / "archive").glob("*.json")), what="the archive")
    kinds = [e.kind for e in events if e.session.key == "claude-code:life"]
    for kind in ("session_start", "prompt_submitted", "session_idle", "session_resume", "session_end"):
        assert kind in kinds
    assert kinds.index("session_idle") < kinds.index("session_resume") < kinds.index("session_end")


def test_hook_events_from_the_events_file_reach_the_tracker(home, settings, plugins):
    path = transcript(home, "hooked")
    path.write_text(prompt_line("hi"), encoding="utf-8")
    with make_watcher(settings, plugins):
        wait_for(lambda: rows(settings).get("claude-code:hooked", {}).get("state") == "active", what="active")
        record = {"time": time.time(), "host": "claude-code", "event": "SessionEnd", "session_id": "hooked"}
        record["transcript_path"] = str(path)
        append(settings.state_dir / "events.jsonl", json.dumps(record) + "\n")
        wait_for(lambda: rows(settings)["claude-code:hooked"]["state"] == "ended", what="the hook's end")


def test_suspend_and_resume_requests(home, settings, plugins):
    path = transcript(home, "paused")
    path.write_text(prompt_line("hi"), encoding="utf-8")
    key = "claude-code:paused"
    # Without a watcher the request is recorded, and the next watcher applies it.
    assert request_suspend(key, settings) is False
    assert (read_snapshot(settings) or {})["suspended"] == [key]
    with make_watcher(settings, plugins):
        wait_for(lambda: rows(settings).get(key, {}).get("state") == "suspended", what="suspended")
        assert request_resume(key, settings) is True
        wait_for(lambda: rows(settings)[key]["state"] == "active", what="resumed")
        assert request_suspend(key, settings) is True
        wait_for(lambda: rows(settings)[key]["state"] == "suspended", what="suspended again")
        append(path, prompt_line("still suspended"))
        wait_for(lambda: counted(settings, key) == 2, what="the line read while suspended")
        assert rows(settings)[key]["state"] == "suspended"


def test_watch_options_come_from_flags_env_and_config(home, settings, monkeypatch):
    config = settings.state_dir / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('idle_timeout = "10m"\nmax_duration = "2h"\npolling = true\n', encoding="utf-8")
    loaded = Settings.load()
    options = watch_options(loaded, env={}, debounce="100ms")
    assert (options.idle_timeout, options.max_duration, options.polling, options.debounce) == (
        600.0,
        7200.0,
        True,
        0.1,
    )
    assert watch_options(loaded, env={"SIDELIGHT_IDLE_TIMEOUT": "90s"}).idle_timeout == 90.0
    assert watch_options(loaded, env={}, idle_timeout="1h").idle_timeout == 3600.0
    from sidelight.config import ConfigError

    with pytest.raises(ConfigError):
        watch_options(loaded, env={}, reconcile="soon")


class CliWatcher:
    """``sidelight ARGS`` in a subprocess; killed (and its pipes closed) whatever happens."""

    def __init__(self, home: Path, *args: str) -> None:
        self.process = subprocess.Popen(
            [*cli_command(), *args],
            env=_cli_env(home),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def __enter__(self) -> subprocess.Popen[str]:
        return self.process

    def __exit__(self, *exc: object) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.communicate(timeout=TIMEOUT)


def _cli_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIDELIGHT_")}
    env.update(HOME=str(home), SIDELIGHT_STATE_DIR=str(home / "state"), COLUMNS="100")
    return env


def test_sigterm_stops_the_cli_watcher_cleanly(home, settings):
    path = transcript(home, "cli")
    path.write_text(prompt_line("one") + prompt_line("two"), encoding="utf-8")
    env = _cli_env(home)
    with CliWatcher(home, "watch", "--debounce", "20ms", "--reconcile", "1s") as process:
        wait_for(lambda: counted(settings, "claude-code:cli") == 2, what="the CLI watcher's snapshot")
        second = subprocess.run(
            [*cli_command(), "watch"], env=env, capture_output=True, text=True, timeout=60, check=False
        )
        assert second.returncode == 1
        assert second.stderr.strip().splitlines() == [
            f"sidelight: another sidelight watch is running on {home / 'state'} (pid {process.pid})"
        ]
        append(path, prompt_line("three"))
        wait_for(lambda: counted(settings, "claude-code:cli") == 3, what="a line appended while running")
        process.send_signal(signal.SIGTERM)
        _out, err = process.communicate(timeout=TIMEOUT)
    assert process.returncode == 0, err
    assert "stopped watching" in err
    snapshot = json.loads((settings.state_dir / STATUS_FILE).read_text(encoding="utf-8"))
    assert snapshot["pid"] == process.pid
    assert {row["key"]: row["lines"] for row in snapshot["sessions"]} == {"claude-code:cli": 3}
    assert running_watcher(settings) is None


def test_sigint_stops_the_cli_watcher_too(home, settings):
    with CliWatcher(home, "-q", "watch") as process:
        wait_for(lambda: running_watcher(settings) == process.pid, what="the watcher's lock")
        wait_for(lambda: read_snapshot(settings) is not None, what="the first snapshot")
        process.send_signal(signal.SIGINT)
        _out, err = process.communicate(timeout=TIMEOUT)
    assert process.returncode == 0
    assert err == ""  # -q: nothing but errors
    assert read_snapshot(settings) is not None


def full_pipe() -> tuple[int, int]:
    """A pipe (read end, write end) that holds all it can already: the next write to it waits until
    someone reads, as a pipe nobody reads does once 64 KiB went into it."""
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    # Pages while a page fits (a write of at most PIPE_BUF is all or nothing), then bytes.
    for chunk in (b"x" * 4096, b"x"):
        with contextlib.suppress(BlockingIOError):
            while True:
                os.write(write_end, chunk)
    os.set_blocking(write_end, True)
    return read_end, write_end


def test_a_log_nobody_reads_does_not_stop_the_cli_watcher(home, settings):
    """The soak's one failing run (issue 18): ``sidelight watch`` logged into a pipe that nobody read
    until the end, and once 64 KiB of log had gone in (a line for each rotation or deletion it noticed),
    the next log call blocked its worker: it stopped scanning, and a share of the sessions ended behind.
    Its log output blocked from the start, the watcher still counts every line; once read, the log
    comes out whole, and the watcher stops cleanly."""
    path = transcript(home, "cli")
    path.write_text(prompt_line("one"), encoding="utf-8")
    read_end, write_end = full_pipe()
    try:
        process = subprocess.Popen(
            [*cli_command(), "watch", "--debounce", "20ms", "--reconcile", "1s"],
            env=_cli_env(home),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=write_end,
        )
    finally:
        os.close(write_end)
    log = bytearray()

    def read_log() -> None:
        while chunk := os.read(read_end, 65536):
            log.extend(chunk)

    reader = threading.Thread(target=read_log, name="test-log-reader", daemon=True)
    try:
        wait_for(lambda: counted(settings, "claude-code:cli") == 1, what="the first look, the log blocked")
        append(path, prompt_line("two"))
        wait_for(lambda: counted(settings, "claude-code:cli") == 2, what="an append, the log blocked")
        # The transcript replaced by a new file (the watcher logs it): its line is counted too.
        fresh = path.with_suffix(".new")
        fresh.write_text(prompt_line("three"), encoding="utf-8")
        fresh.replace(path)
        wait_for(lambda: counted(settings, "claude-code:cli") == 3, what="a replaced transcript's line")
    finally:
        # Someone reads the log at last.
        reader.start()
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(TIMEOUT)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait(TIMEOUT)
            reader.join(TIMEOUT)
            os.close(read_end)
    assert process.returncode == 0
    text = log.decode(errors="replace")
    for said in ("watching the sessions", "was replaced; reading its recent tail again", "stopped watching"):
        assert said in text, text[-2000:]


class StuckStream:
    """A log output that takes nothing until released (a pipe nobody reads), and says when a write
    first reached it."""

    def __init__(self) -> None:
        self.reached = threading.Event()
        self.release = threading.Event()
        self.written: list[str] = []

    def write(self, text: str) -> int:
        self.reached.set()
        assert self.release.wait(TIMEOUT), "never released"
        self.written.append(text)
        return len(text)

    def flush(self) -> None:
        pass


def test_the_watch_log_output_never_holds_up_the_thread_that_logs():
    stream = StuckStream()
    output = LogOutput(stream, backlog=3)  # type: ignore[arg-type]
    output.write("line 0\n")
    wait_for(stream.reached.is_set, what="the first line to reach the output")
    # The output is stuck on line 0: three more wait in the queue, the rest are dropped, and no write
    # waited for the output (the stream holds nothing yet).
    for n in range(1, 10):
        assert output.write(f"line {n}\n") == len(f"line {n}\n")
    assert stream.written == []
    stream.release.set()
    assert output.close(TIMEOUT)
    assert "".join(stream.written) == (
        "line 0\nline 1\nline 2\nline 3\nsidelight: 6 log lines dropped: the log output was blocked\n"
    )


def test_suspend_command_names_the_session(home, settings, run_cli):
    transcript(home, "abcdef12").write_text(prompt_line("hi"), encoding="utf-8")
    env = {"HOME": str(home), "SIDELIGHT_STATE_DIR": str(home / "state")}
    result = run_cli("suspend", "abcdef12", env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout == (
        "suspended abcdef12 (claude-code:abcdef12): recorded for the next 'sidelight watch'\n"
    )
    assert (read_snapshot(settings) or {})["suspended"] == ["claude-code:abcdef12"]
    result = run_cli("resume", "abcd", env=env)
    assert result.returncode == 0, result.stderr
    assert (read_snapshot(settings) or {})["suspended"] == []
    missing = run_cli("suspend", "nobody", env=env)
    assert missing.returncode == 1
    assert len(missing.stderr.strip().splitlines()) == 1


# -- under load: the stat pass, batched sinks, the collector -----------------------------------------------


def test_the_quick_stat_pass_covers_live_sessions_and_the_full_pass_all(home, settings, plugins):
    live, quiet = transcript(home, "live"), transcript(home, "quiet")
    live.write_text(prompt_line("one"), encoding="utf-8")
    quiet.write_text(prompt_line("one"), encoding="utf-8")
    long_ago = time.time() - 3 * 86400
    os.utime(quiet, (long_ago, long_ago))
    watcher = make_watcher(settings, plugins, modify_events=False)
    watcher._reconcile()  # the worker's first pass, run here: no threads
    watcher._process(watcher._dirty)
    append(live, prompt_line("two"))
    append(quiet, prompt_line("two"))  # a session quiet for days comes back
    assert watcher._stat_pass(everything=False) == [str(live)]
    assert sorted(watcher._stat_pass()) == sorted([str(live), str(quiet)])
    # Once seen written to, the quiet one is live again: the quick pass follows it.
    watcher._process({str(live), str(quiet)})
    append(quiet, prompt_line("three"))
    assert watcher._stat_pass(everything=False) == [str(quiet)]


def test_the_quick_stat_pass_looks_at_cool_transcripts_less_often(home, settings, plugins, monkeypatch):
    hot, cool = transcript(home, "hot"), transcript(home, "cool")
    hot.write_text(prompt_line("one"), encoding="utf-8")
    cool.write_text(prompt_line("one"), encoding="utf-8")
    a_while_ago = time.time() - 1.5 * COOL_AFTER  # cool, yet within the idle horizon (120 s here)
    os.utime(cool, (a_while_ago, a_while_ago))
    watcher = make_watcher(settings, plugins, modify_events=False)
    watcher._reconcile()
    watcher._process(watcher._dirty)
    statted: list[str] = []
    real_stat = os.stat

    def counting_stat(name: str, *args: Any, **kwargs: Any) -> os.stat_result:
        statted.append(name)
        return real_stat(name, *args, **kwargs)

    monkeypatch.setattr(os, "stat", counting_stat)
    for _ in range(2 * COOL_EVERY):
        assert watcher._stat_pass(everything=False) == []
    assert statted.count(str(hot)) == 2 * COOL_EVERY
    assert statted.count(str(cool)) == 2
    # A cool session that is written to again is found within COOL_EVERY passes, then is hot.
    append(cool, prompt_line("two"))
    found = [watcher._stat_pass(everything=False) for _ in range(COOL_EVERY)]
    assert found.count([str(cool)]) == COOL_EVERY - found.index([str(cool)])
    watcher._process({str(cool)})
    statted.clear()
    for _ in range(COOL_EVERY):
        watcher._stat_pass(everything=False)
    assert statted.count(str(cool)) == COOL_EVERY


@pytest.mark.parametrize(("threshold", "file_events"), [(2, False), (3, True)])
def test_file_events_or_stat_pass_is_chosen_by_live_sessions(
    home, settings, plugins, monkeypatch, threshold, file_events
):
    monkeypatch.setattr("sidelight.watch.watcher.AUTO_STAT_APPENDS", threshold)
    for name in ("a", "b", "c"):
        transcript(home, name).write_text(prompt_line("hi"), encoding="utf-8")
    old = transcript(home, "old")
    old.write_text(prompt_line("hi"), encoding="utf-8")
    os.utime(old, (time.time() - 86400, time.time() - 86400))  # ended long ago: not live
    watcher = make_watcher(settings, plugins)
    assert watcher.modify_events is None
    watcher._reconcile()
    assert watcher.modify_events is file_events


def watched_events(watcher: Watcher) -> set[bool]:
    """Per watch of the watcher: whether watchdog reports writes to it."""
    from watchdog.events import FileModifiedEvent

    return {FileModifiedEvent in (watch.event_filter or ()) for watch, _ in watcher.roots.watches.values()}


def test_a_growing_fleet_moves_to_the_stat_pass_and_back(home, settings, plugins, monkeypatch):
    monkeypatch.setattr("sidelight.watch.watcher.AUTO_STAT_APPENDS", 2)
    first = transcript(home, "first")
    first.write_text(prompt_line("hi"), encoding="utf-8")
    with make_watcher(settings, plugins, reconcile_interval=0.1) as watcher:
        wait_for(lambda: counted(settings, "claude-code:first") == 1, what="the first look")
        assert watcher.modify_events is True
        # The fleet grows past the threshold while the watcher runs.
        others = [transcript(home, f"s{i}") for i in range(3)]
        for path in others:
            path.write_text(prompt_line("hi"), encoding="utf-8")
        wait_for(lambda: watcher.modify_events is False, what="the switch to the stat pass")
        assert watched_events(watcher) == {False}  # watchdog no longer reports a write
        append(first, prompt_line("found by the stat pass"))
        wait_for(lambda: counted(settings, "claude-code:first") == 2, what="a line found by the stat pass")
        # It shrinks to half the threshold (the others end): file events again.
        long_ago = time.time() - 86400
        for path in others:
            os.utime(path, (long_ago, long_ago))
        wait_for(lambda: watcher.modify_events is True, what="the switch back to file events")
        assert watched_events(watcher) == {True}
        append(first, prompt_line("found by a file event"))
        wait_for(lambda: counted(settings, "claude-code:first") == 3, what="a line found by a file event")


def test_a_sink_with_emit_many_gets_each_pass_at_once(home, settings):
    batches: list[list[SinkEvent]] = []
    singles: list[SinkEvent] = []

    class Batcher:
        @hookimpl
        def sidelight_sinks(self):
            yield SinkSpec(name="batcher", emit=singles.append, emit_many=lambda es: batches.append(list(es)))

    plugins = Plugins(entry_points=False)
    plugins.register(Batcher(), name="batcher")
    paths = [transcript(home, f"s{i}") for i in range(3)]
    watcher = make_watcher(settings, plugins)
    watcher._reconcile()
    watcher._process(watcher._dirty)
    for path in paths:
        append(path, prompt_line("one") + edit_line(1, "/src/a.py"))
    watcher._process({str(p) for p in paths})
    assert not singles
    assert len(batches) == 1  # three sessions, one pass: one call
    kinds = sorted(e.kind for e in batches[0])
    # The edit line is a reply without text: a tool use, not a response_completed.
    assert kinds == sorted(["session_start", "prompt_submitted", "tool_executed"] * 3)


def test_own_gc_turns_the_collector_off_while_watching_and_back_on(home, settings, plugins):
    import gc

    assert gc.isenabled()
    transcript(home, "s").write_text(prompt_line("hi"), encoding="utf-8")
    with make_watcher(settings, plugins, own_gc=True) as watcher:
        wait_for(lambda: counted(settings, "claude-code:s") == 1, what="the first look")
        wait_for(lambda: not gc.isenabled(), what="the collector to be off")
    assert not watcher.running
    assert gc.isenabled()
    gc.unfreeze()


def test_stat_appends_is_true_false_or_auto(home, settings):
    from sidelight.config import ConfigError

    assert watch_options(settings, env={}).stat_appends is None
    assert watch_options(settings, env={"SIDELIGHT_STAT_APPENDS": "auto"}).stat_appends is None
    assert watch_options(settings, env={"SIDELIGHT_STAT_APPENDS": "1"}).stat_appends is True
    assert watch_options(settings, env={"SIDELIGHT_STAT_APPENDS": "no"}).stat_appends is False
    assert watch_options(settings, env={}, stat_appends=False).stat_appends is False
    with pytest.raises(ConfigError, match="true, false or auto"):
        watch_options(settings, env={"SIDELIGHT_STAT_APPENDS": "sometimes"})


def test_temporaries_left_by_killed_writers_are_swept_at_start(home, settings, plugins):
    settings.state_dir.mkdir(parents=True, exist_ok=True)
    stale = settings.state_dir / ".lifecycle.json.123.456.tmp"
    fresh = settings.state_dir / ".status.json.789.1.tmp"  # maybe a writer at work right now
    for path in (stale, fresh):
        path.write_text("{", encoding="utf-8")
    long_ago = time.time() - 3600
    os.utime(stale, (long_ago, long_ago))
    with make_watcher(settings, plugins):
        pass
    assert not stale.exists() and fresh.exists()


def _scan_counts(user: int, assistant: int, edits: int, stamp: str, touched: list[str]) -> tuple[Any, ...]:
    """A ``_core.scan_many_counts`` tuple: (cursor, reset, lines, user, assistant, by category, tools,
    tool uses, files touched, first and last user text, last reply, last timestamp)."""
    tools = {"Edit": edits} if edits else None
    uses = [("Edit", "edit", touched[0], stamp, None, "a", "b")] * edits if edits else None
    return (
        (0, 0, 0, 0, 0, 0, 0),
        None,
        user + assistant,
        user,
        assistant,
        (edits, 0, 0, 0),
        tools,
        uses,
        touched or None,
        "hi" if user else None,
        "hi" if user else None,
        None,
        stamp,
    )


def test_the_status_row_is_a_view_of_the_one_record_the_tracker_shares(tmp_path, settings, plugins):
    clock = Clock()
    tracker = SessionTracker(LifecycleSettings(idle_timeout=60, max_duration=3600), clock=clock)
    watcher = Watcher(settings, plugins, tracker=tracker, clock=clock)
    session = Session(
        key="claude-code:one",
        name="one",
        path=tmp_path / "one.jsonl",
        format="claude-code",
        group="proj",
        resolver="claude-code",
    )
    stamp = iso(clock.now)
    events: list[SinkEvent] = []
    watcher._account(session, [_scan_counts(1, 1, 1, stamp, ["/a.py"])], False, clock.now, events)
    row = watcher._rows[session.key]
    state = tracker.get(session.key)
    assert state is not None and state.counts is row.counts  # one record, counted once
    assert state.messages == {"user": 1, "assistant": 1}
    view = status_row(row)
    counted_here = (view["user_messages"], view["assistant_messages"], view["messages"], view["lines"])
    assert counted_here == (1, 1, 2, 2)
    assert view["categories"] == state.categories == {"edit": 1, "read": 0, "command": 0, "other": 0}
    assert view["tools"] == state.tools == {"Edit": 1}
    assert (view["last_timestamp"], view["recent_files"]) == (stamp, ["/a.py"])
    # A second pass changes the record; the next view shows it, the first view is left as it was.
    watcher._account(session, [_scan_counts(2, 0, 0, stamp, ["/b.py"])], False, clock.now, events)
    assert status_row(row)["user_messages"] == 3 == state.messages["user"]
    assert status_row(row)["recent_files"] == ["/a.py", "/b.py"]
    assert view["user_messages"] == 1
    # Without a tracker the watcher keeps the same record, and the snapshot the same view.
    alone = Watcher(settings, plugins)
    alone._account(session, [_scan_counts(1, 1, 1, stamp, ["/a.py"])], False, clock.now, [])
    assert {**status_row(alone._rows[session.key]), "last_activity": None} == {**view, "last_activity": None}
    (record,) = alone.sessions_snapshot()["sessions"]
    assert {k: record[k] for k in view} == status_row(alone._rows[session.key])


def test_each_line_makes_its_own_events_with_its_time_and_key_and_a_replay_logs_nothing(
    home, settings, plugins, events, monkeypatch
):
    """Issue 18: three prompts and a tool use read in one pass are four events, each with its line's
    text and timestamp (not the time of the scan) and a key of its own. A watcher that restarts from
    cursors saved before that pass (killed -9 before saving them) makes the same events with the same
    keys: the sinks get them again (at least once), the event log drops them (exactly once)."""
    monkeypatch.setattr("sidelight.templates.eventlog.RECHECK_SECONDS", 0.0)  # this test's state dir
    path = transcript(home, "keys")
    path.write_text(prompt_line("already there"), encoding="utf-8")
    watcher = make_watcher(settings, plugins)
    watcher._reconcile()
    watcher._process(set(watcher._dirty))
    watcher._flush(force=True)
    saved = {name: (settings.state_dir / name).read_bytes() for name in (WATCH_CURSORS_FILE, STATUS_FILE)}
    base = time.time() - 100
    append(
        path,
        prompt_line("one", base)
        + prompt_line("two", base + 1)
        + edit_line(1, "/src/a.py", base + 2)
        + prompt_line("three", base + 3),
    )
    events.clear()
    watcher._process({str(path)})
    watcher._flush(force=True)
    made = [(e.kind, e.data["detail"], e.timestamp) for e in events]
    assert made == [
        ("prompt_submitted", "one", iso(base)),
        ("prompt_submitted", "two", iso(base + 1)),
        ("tool_executed", "Edited /src/a.py: 'a' -> 'b'", iso(base + 2)),
        ("prompt_submitted", "three", iso(base + 3)),
    ]
    keys = [e.key for e in events]
    assert all(keys) and len(set(keys)) == 4
    log = settings.state_dir / "activity-events.jsonl"
    logged = log.read_bytes()
    assert [json.loads(line)["key"] for line in logged.splitlines()[-4:]] == keys
    # The crash: the cursors and the snapshot as they were before the pass.
    for name, data in saved.items():
        (settings.state_dir / name).write_bytes(data)
    events.clear()
    again = make_watcher(settings, plugins)
    again._restore()
    again._reconcile()
    again._process(set(again._dirty))
    assert [e.key for e in events if e.kind != "session_start"] == keys
    assert log.read_bytes() == logged


def test_a_source_changed_twice_within_one_tick_of_file_times_is_followed_again(
    home: Path, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A file's time moves by the kernel's coarse ticks: a second write within one tick that keeps the
    # size (SQLite reusing a page, as opencode's database does) leaves the stat the watcher saw after the
    # first, and its change waited for the next reconcile (tests/test_opencode.py failed now and then).
    from sidelight.records import ResolverSpec
    from sidelight.watch import watcher as watching

    source = home / "db"
    source.write_bytes(b"one")
    listings: list[float] = []

    class Host:
        @hookimpl
        def sidelight_resolvers(self):
            def listed(settings: Settings) -> list[Any]:
                listings.append(time.monotonic())
                return []

            yield ResolverSpec(
                name="db",
                list_sessions=listed,
                current=lambda event, settings: None,
                sources=lambda settings: [str(source)],
            )

    plugins = Plugins(builtins=(), entry_points=False)
    plugins.register(Host(), name="db-host")
    watcher = make_watcher(settings, plugins)
    watcher._note_sources()
    stat = watching._source_stat(str(source))
    assert stat is not None
    monkeypatch.setattr(watching, "_source_stat", lambda path: (*stat[:3], stat[3] + 1))  # the first write
    watcher._follow_sources()
    assert len(listings) == 1
    watcher._follow_sources()  # the second write, in the same tick: the same stat
    assert len(listings) == 1
    time.sleep(watching.SOURCE_SETTLE * 1.5)
    watcher._follow_sources()
    assert len(listings) == 2  # followed once more once the tick was surely over
    watcher._follow_sources()
    assert len(listings) == 2  # and only once
