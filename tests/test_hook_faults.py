"""A hook never breaks its host (issue 7, guarantee 4).

Whatever happens inside — a plugin raising, a file without permission, a symlink loop, a FIFO named like
a transcript, a transcript deleted or cut short while it is read, a full disk when saving state, stdin
that is not JSON, a 10 MB prompt — ``sidelight hook`` exits 0, prints either a valid payload or nothing,
and logs the cause in ``<state dir>/sidelight.log``. Most cases run the real hook process in a throwaway
Claude Code world; plugin and mid-read faults run the same orchestration in this process, where a fault
can be placed exactly.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import json
import os
import random
import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from sidelight.features.hook import handle_hook
from sidelight.hookspecs import hookimpl
from sidelight.plugins import Plugins
from sidelight.records import ResolverSpec, SummarizerSpec
from tests.support.hook_world import HookWorld, context_of, reported_ranges, session_id

ROOT = os.geteuid() == 0


def reports(context: str | None, n: int, messages: int) -> bool:
    """The digest has session ``n``'s line with ``messages`` new messages."""
    plural = "s" if messages > 1 else ""
    return context is not None and f"{session_id(n)[:8]} (just now, {messages} message{plural})" in context


def ok(done: subprocess.CompletedProcess[bytes]) -> str | None:
    """The hook kept its promise: exit 0, no traceback, a valid payload or nothing. Returns the context."""
    assert done.returncode == 0, done.stderr
    assert b"Traceback" not in done.stderr
    return context_of(done.stdout)


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> HookWorld:
    world = HookWorld(tmp_path, sessions=3)
    for name, value in world.env().items():
        if name in ("HOME", "SIDELIGHT_STATE_DIR"):
            monkeypatch.setenv(name, value)
    for name in list(os.environ):
        if name.startswith(("SIDELIGHT_", "CLAUDE_", "XDG_")) and name != "SIDELIGHT_STATE_DIR":
            monkeypatch.delenv(name)
    return world


# -- plugins -----------------------------------------------------------------------------------------


class Raising:
    """A plugin whose every callable raises."""

    def __init__(self, where: str) -> None:
        self.where = where

    def _boom(self, *args: Any) -> Any:
        raise RuntimeError(f"boom in {self.where}")

    @hookimpl
    def sidelight_resolvers(self):
        if self.where == "hookimpl":
            raise RuntimeError("boom in hookimpl")
        if self.where in ("list_sessions", "current"):
            yield ResolverSpec(
                name="raising",
                list_sessions=self._boom if self.where == "list_sessions" else lambda settings: [],
                current=self._boom if self.where == "current" else lambda event, settings: None,
            )

    @hookimpl
    def sidelight_summarizers(self):
        if self.where == "summarizer":
            yield SummarizerSpec(name="raising", summarize=self._boom)


@pytest.mark.parametrize("where", ["list_sessions", "current", "summarizer", "hookimpl"])
def test_a_raising_plugin_never_breaks_the_hook(world: HookWorld, where: str) -> None:
    plugins = Plugins(entry_points=False)
    plugins.register(Raising(where), name="raising")
    world.prompt(1, "news from one")
    if where == "current":
        # A prompt finds its session in the listing of every session; a start asks the resolvers.
        start = world.payload(0, hook_event_name="SessionStart", source="startup")
        handle_hook("claude-code", start, plugins=plugins)
    out = handle_hook("claude-code", world.payload(0), plugins=plugins)
    assert "boom" in world.log()
    # A plugin that fails is left out (a failing hookimpl is skipped by the plugin manager); the others
    # still make the digest.
    assert reports(context_of(out.encode()) if out else None, 1, 2)


# -- files -------------------------------------------------------------------------------------------


def _without_dac_override() -> None:
    """In the child, before exec: root without the capabilities that ignore file permissions."""
    libc = ctypes.CDLL(None, use_errno=True)
    for capability in (1, 2):  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH
        if libc.prctl(24, capability, 0, 0, 0) != 0:  # PR_CAPBSET_DROP
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def test_an_unreadable_sibling_is_left_out(world: HookWorld) -> None:
    world.prompt(1, "readable news")
    world.prompt(2, "secret news")
    world.transcript(2).chmod(0)
    done = subprocess.run(
        world.command(),
        input=world.payload(0),
        capture_output=True,
        env=world.env(),
        timeout=60,
        check=False,
        preexec_fn=_without_dac_override if ROOT else None,
    )
    context = ok(done)
    assert reports(context, 1, 2)
    assert context is not None and session_id(2)[:8] not in context
    assert "ermission denied" in world.log()


def test_symlink_loops_are_left_out(world: HookWorld) -> None:
    folder = world.folder
    (folder / f"{session_id(90)}.jsonl").symlink_to(folder / f"{session_id(91)}.jsonl")
    (folder / f"{session_id(91)}.jsonl").symlink_to(folder / f"{session_id(90)}.jsonl")
    (folder / session_id(0)).mkdir()
    (folder / session_id(0) / "subagents").symlink_to(folder / session_id(0))  # a directory loop
    world.prompt(1, "news despite the loops")
    assert reports(ok(world.run_hook(0)), 1, 2)
    assert ok(world.run_hook(0)) is None


def test_a_fifo_named_like_a_transcript_does_not_hang_the_hook(world: HookWorld) -> None:
    """Opening a FIFO with no writer blocks forever: the hook must not open one."""
    os.mkfifo(world.folder / f"{session_id(99)}.jsonl")
    world.prompt(1, "news beside a fifo")
    assert reports(ok(world.run_hook(0, timeout=30)), 1, 2)
    # The current session itself, named by the host as a FIFO.
    fifo = world.folder / f"{session_id(98)}.jsonl"
    os.mkfifo(fifo)
    stdin = json.dumps({**json.loads(world.payload(0)), "transcript_path": str(fifo)}).encode()
    ok(world.run_hook(0, stdin=stdin, timeout=30))


@pytest.mark.parametrize("how", ["deleted", "truncated", "replaced"])
def test_a_transcript_changing_while_it_is_read(world: HookWorld, how: str) -> None:
    big = world.transcript(2)
    line = world.line(2, "x" * 2000)
    with big.open("a") as file:
        file.write(line * 8000)  # 16 MB: long enough to be read when the fault strikes
    world.prompt(1, "steady news")
    for delay in (0.0, 0.02, 0.05, 0.1):
        timer = threading.Timer(
            delay,
            {
                "deleted": lambda: big.unlink(missing_ok=True),
                "truncated": lambda: big.write_text(line),
                "replaced": lambda: big.write_text(world.line(2, "fresh file")),
            }[how],
        )
        timer.start()
        try:
            out = handle_hook("claude-code", world.payload(0))
        finally:
            timer.join()
        context = context_of(out.encode()) if out else None
        if context is not None:
            assert context.startswith("[Session Activity]")
        if not big.exists():
            big.write_text(line * 100)
    # The hook still reports news afterwards, and its cursors hold.
    world.prompt(1, "news after the faults")
    out = handle_hook("claude-code", world.payload(0))
    assert out is not None and "news after the faults" in out
    json.loads(world.cursor_file(0).read_bytes())


# -- a full disk ----------------------------------------------------------------------------------------


def test_a_full_disk_when_saving_cursors_still_gives_the_digest(
    world: HookWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert handle_hook("claude-code", world.payload(0)) is not None
    before = world.cursor_file(0).read_bytes()
    real_write = os.write

    def full(fd: int, data: Any) -> int:
        if str(Path(f"/proc/self/fd/{fd}").readlink()).endswith(".json.tmp"):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", full)
    world.prompt(1, "news on a full disk")
    out = handle_hook("claude-code", world.payload(0))
    assert out is not None and "news on a full disk" in out
    assert world.cursor_file(0).read_bytes() == before  # the old cursors, whole
    assert "could not save the cursors" in world.log() and "No space left" in world.log()
    monkeypatch.setattr(os, "write", real_write)
    # Once there is room again, the same news is reported (not lost) and then saved.
    out = handle_hook("claude-code", world.payload(0))
    assert out is not None and "news on a full disk" in out
    assert handle_hook("claude-code", world.payload(0)) is None


@pytest.mark.skipif(not ROOT or not shutil.which("mount"), reason="mounting a tmpfs needs root")
def test_a_really_full_state_directory(tmp_path: Path) -> None:
    world = HookWorld(tmp_path, sessions=3)
    world.state.mkdir(parents=True)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k,mode=0700", "tmpfs", str(world.state)],
        capture_output=True,
        check=False,
    )
    if mounted.returncode:
        pytest.skip(f"cannot mount a tmpfs: {mounted.stderr.decode().strip()}")
    try:
        ok(world.run_hook(0))  # the log and the first cursors fit
        with contextlib.suppress(OSError), (world.state / "filler").open("wb") as filler:
            while True:
                filler.write(b"\0" * 4096)
                filler.flush()
        world.prompt(1, "news on a really full disk")
        for _ in range(2):
            context = ok(world.run_hook(0))
            assert context is not None and "news on a really full disk" in context
        (world.state / "filler").unlink()
        ok(world.run_hook(0))
        assert ok(world.run_hook(0)) is None
        json.loads(world.cursor_file(0).read_bytes())
    finally:
        subprocess.run(["umount", "-l", str(world.state)], check=False)


# -- input ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "stdin",
    [
        b"not json",
        b"\xff\xfe\x00",
        b"",
        b"[]",
        b"null",
        b'{"hook_event_name": "UserPromptSubmit"',
        b"{" * 100_000,
    ],
    ids=["text", "binary", "empty", "list", "null", "cut-off", "deep"],
)
def test_stdin_that_is_not_a_hook_input(world: HookWorld, stdin: bytes) -> None:
    world.prompt(1, "news")
    assert ok(world.run_hook(0, stdin=stdin)) is None
    assert world.log()  # the cause is logged


def test_a_10_mb_prompt(world: HookWorld) -> None:
    world.prompt(1, "news for a long prompt")
    stdin = world.payload(0, prompt="y" * (10 << 20))
    context = ok(world.run_hook(0, stdin=stdin, timeout=60))
    assert reports(context, 1, 2)
    assert context is not None and len(context) <= 500


def test_a_10_mb_line_in_a_sibling(world: HookWorld) -> None:
    world.prompt(1, "z" * (10 << 20))
    world.prompt(2, "news after a huge line")
    context = ok(world.run_hook(0, timeout=60))
    assert reports(context, 2, 2)
    assert context is not None and len(context) <= 500


# -- our own files are not followed through links (issue 19) ------------------------------------------


def test_the_hook_log_does_not_follow_a_symlink(world: HookWorld, tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("untouched\n")
    world.state.mkdir(parents=True, exist_ok=True)
    log = world.state / "sidelight.log"
    log.symlink_to(victim)
    # Each of these logs a line when the log can be opened: stdin that is no hook input (the
    # in-process handler), a wrong command line (the bare appender of cli/hooks.py).
    for done in (
        world.run_hook(0, stdin=b"{not json", SIDELIGHT_WARM="off"),
        subprocess.run(
            [*world.command(), "extra"],
            input=b"{}",
            capture_output=True,
            env=world.env(),
            timeout=60,
            check=False,
        ),
    ):
        assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr
    assert victim.read_text() == "untouched\n"
    assert log.is_symlink()
    log.unlink()  # the same two without the link do log: the test above saw real writes refused
    world.run_hook(0, stdin=b"{not json", SIDELIGHT_WARM="off")
    subprocess.run([*world.command(), "extra"], input=b"{}", capture_output=True, env=world.env(), timeout=60)
    assert log.read_text().count("\n") >= 2


# -- settings and state that cannot be used (issue 19, item 7) -----------------------------------------

HOSTS = ("claude-code", "codex", "pi", "agent-sdk")


def host_payload(world: HookWorld, host: str) -> bytes:
    """Session 0's prompt as ``host`` sends it (Pi's extension has its own shape)."""
    if host == "pi":
        return json.dumps(
            {
                "event": "before_agent_start",
                "session_file": str(world.transcript(0)),
                "session_id": session_id(0),
                "cwd": str(world.project),
                "prompt": "what did the others do?",
            }
        ).encode()
    return world.payload(0)


#: Each fault: the environment that makes it, and whether the log can tell (a state directory that
#: cannot hold a log cannot).
FAULTS: dict[str, tuple[dict[str, str], bool]] = {
    "bad-config": ({"SIDELIGHT_CONFIG": "{config}"}, True),
    "budget-abc": ({"SIDELIGHT_TIME_BUDGET": "abc"}, True),
    "empty-scope": ({"SIDELIGHT_SCOPE": ""}, True),
    "state-dev-null": ({"SIDELIGHT_STATE_DIR": "/dev/null"}, False),
    "state-unreadable": ({}, False),
}


def run_faulty_hook(world: HookWorld, host: str, fault: str) -> subprocess.CompletedProcess[bytes]:
    env, _logged = FAULTS[fault]
    config = world.root / "config.toml"
    config.write_text("this is = not [toml\n")
    if fault == "state-unreadable":
        world.state.mkdir(parents=True, exist_ok=True)
        world.state.chmod(0)
    try:
        return subprocess.run(
            world.command(host),
            input=host_payload(world, host),
            capture_output=True,
            env=world.env(**{k: v.format(config=config) for k, v in env.items()}),
            timeout=60,
            check=False,
            preexec_fn=_without_dac_override if ROOT else None,
        )
    finally:
        if world.state.exists():
            world.state.chmod(0o700)


@pytest.mark.parametrize("fault", list(FAULTS))
@pytest.mark.parametrize("host", HOSTS)
def test_a_hook_with_settings_or_state_it_cannot_use_says_nothing_on_stderr(
    world: HookWorld, host: str, fault: str
) -> None:
    world.prompt(1, "news")
    done = run_faulty_hook(world, host, fault)
    assert done.returncode == 0
    assert done.stderr == b""
    if host != "pi":
        ok(done)  # nothing, or a valid payload (a state directory that is not one still reads)
    elif fault != "state-dev-null":
        assert done.stdout == b""
    if FAULTS[fault][1]:
        assert "cannot load the settings" in world.log()
    # Once the fault is gone, the same hook works.
    assert reports(ok(world.run_hook(0)), 1, 2)


def test_a_hook_with_bad_settings_beside_a_running_watcher_says_nothing_on_stderr(world: HookWorld) -> None:
    from tests.conftest import cli_command
    from tests.support.watching import start_serving, stop

    watcher = start_serving([*cli_command(), "watch"], world.env(), world.project, world.state)
    try:
        for host in HOSTS:
            for fault in FAULTS:
                done = run_faulty_hook(world, host, fault)
                assert done.returncode == 0 and done.stderr == b"", (host, fault, done.stderr)
        world.prompt(1, "news through the watcher")
        assert reports(ok(world.run_hook(0)), 1, 2)
        assert watcher.poll() is None
    finally:
        stop(watcher)


@pytest.mark.parametrize("how", ["a-directory", "no-permission"])
def test_status_says_which_cursor_file_a_hook_cannot_read(world: HookWorld, how: str) -> None:
    from tests.conftest import cli_command

    assert ok(world.run_hook(0)) is not None
    cursors = world.cursor_file(0)
    if how == "a-directory":
        cursors.unlink()
        cursors.mkdir()
    else:
        cursors.chmod(0)
    world.prompt(1, "news nobody hears")
    done = subprocess.run(
        world.command(),
        input=world.payload(0),
        capture_output=True,
        env=world.env(),
        timeout=60,
        check=False,
        preexec_fn=_without_dac_override if ROOT else None,
    )
    assert done.returncode == 0 and done.stderr == b"" and done.stdout == b""
    for args in (["status"], ["status", "--json"]):
        status = subprocess.run(
            [*cli_command(), *args],
            capture_output=True,
            text=True,
            env=world.env(),
            timeout=60,
            check=False,
            preexec_fn=_without_dac_override if ROOT else None,
        )
        assert status.returncode == 0, status.stderr
        if "--json" in args:
            # JSON lines hold the sessions only; a problem is said on stderr.
            assert all(isinstance(json.loads(line), dict) for line in status.stdout.splitlines())
            (problem,) = [
                line for line in status.stderr.splitlines() if line.startswith("sidelight: problem: ")
            ]
        else:
            (problem,) = [line for line in status.stdout.splitlines() if line.startswith("problem: ")]
        assert f"cannot read the cursor file {cursors}" in problem and "chown" in problem


# -- appends on a full disk (issue 19, item 8) -----------------------------------------------------------


class HalfThenFull:
    """``os.write`` that, for files named ``suffix``, writes half of the bytes (the disk fills up) and
    then raises ``ENOSPC`` while ``full``; the real write otherwise."""

    def __init__(self, suffix: str) -> None:
        self.suffix = suffix
        self.full = True
        self.real = os.write

    def __call__(self, fd: int, data: Any) -> int:
        if self.full and str(Path(f"/proc/self/fd/{fd}").readlink()).endswith(self.suffix):
            if self.half_written:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            self.half_written = True
            return self.real(fd, bytes(data)[: len(data) // 2])
        return self.real(fd, data)

    half_written = False


def whole_lines(path: Path) -> list[dict[str, Any]]:
    data = path.read_bytes()
    assert not data or data.endswith(b"\n"), data[-80:]
    return [json.loads(line) for line in data.splitlines()]


def test_the_event_log_on_a_full_disk_keeps_whole_lines_and_loses_no_event(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from sidelight.records import Session, SinkEvent
    from sidelight.templates.eventlog import EventLog

    one = Session(key="k", name="n", path=tmp_path / "t.jsonl", format="claude-code", group="g", resolver="r")
    made = [SinkEvent("prompt_submitted", one, "t", {"n": n}, f"k:{n}") for n in range(6)]
    log = EventLog(tmp_path / "activity-events.jsonl")
    log.emit(made[0])
    full = HalfThenFull("activity-events.jsonl")
    monkeypatch.setattr(os, "write", full)
    log.emit_many(made[1:3])  # half of it fits, then the disk is full
    log.emit(made[3])
    assert [r["key"] for r in whole_lines(log.path)] == ["k:0"]  # no half line left behind
    full.full = False  # space again
    log.emit(made[4])
    log.emit_many(made[1:3])  # a replay (the watcher read them again) is not written twice
    log.emit(made[5])
    assert [r["key"] for r in whole_lines(log.path)] == [f"k:{n}" for n in range(6)]
    said = [r.getMessage() for r in caplog.records if "cannot record" in r.getMessage()]
    assert len(said) == 1 and "ENOSPC" in said[0] and str(log.path) in said[0]


def test_the_event_log_drops_the_oldest_kept_events_past_its_bound_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from sidelight.records import Session, SinkEvent
    from sidelight.templates import eventlog

    monkeypatch.setattr(eventlog, "PENDING_BYTES", 1000)
    one = Session(key="k", name="n", path=tmp_path / "t.jsonl", format="claude-code", group="g", resolver="r")
    log = eventlog.EventLog(tmp_path / "activity-events.jsonl")
    full = HalfThenFull("activity-events.jsonl")
    monkeypatch.setattr(os, "write", full)
    for n in range(20):
        log.emit(SinkEvent("prompt_submitted", one, "t", {"n": n}, f"k:{n}"))
    assert log.dropped > 0 and "of the oldest dropped" in caplog.text
    full.full = False
    log.emit(SinkEvent("prompt_submitted", one, "t", {"n": 20}, "k:20"))
    keys = [r["key"] for r in whole_lines(log.path)]
    assert keys == [f"k:{n}" for n in range(log.dropped, 21)]
    log.emit(SinkEvent("prompt_submitted", one, "t", {"n": 0}, "k:0"))  # a dropped one comes again
    assert whole_lines(log.path)[-1]["key"] == "k:0"


def test_the_hooks_session_records_on_a_full_disk_stay_whole(
    world: HookWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    end = json.loads(world.payload(1))
    end.update(hook_event_name="SessionEnd", reason="exit")
    full = HalfThenFull("events.jsonl")
    monkeypatch.setattr(os, "write", full)
    assert handle_hook("claude-code", json.dumps(end)) is None
    events = world.state / "events.jsonl"
    assert full.half_written and whole_lines(events) == []  # the half line was cut off again
    assert "No space left" in world.log()
    full.full = False
    end.update(session_id=session_id(2), transcript_path=str(world.transcript(2)))
    assert handle_hook("claude-code", json.dumps(end)) is None
    (record,) = whole_lines(events)
    assert record["session_id"] == session_id(2) and record["event"] == "SessionEnd"


def test_a_failed_write_is_not_called_a_read() -> None:
    from sidelight.errors import describe

    error = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), "/state/watch.lock")
    assert describe(error) == (
        "/state/watch.lock: cannot write: No space left on device (ENOSPC); free some space or fix the disk"
    )
    assert "cannot read the file" in describe(OSError(errno.EIO, os.strerror(errno.EIO), "/t.jsonl"))


@pytest.mark.skipif(not ROOT or not shutil.which("mount"), reason="mounting a tmpfs needs root")
def test_a_really_full_disk_for_the_event_log_and_the_watcher(tmp_path: Path) -> None:
    from sidelight.records import Session, SinkEvent
    from sidelight.templates.eventlog import EventLog
    from tests.conftest import cli_command

    world = HookWorld(tmp_path, sessions=2)
    world.state.mkdir(parents=True)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k,mode=0700", "tmpfs", str(world.state)],
        capture_output=True,
        check=False,
    )
    if mounted.returncode:
        pytest.skip(f"cannot mount a tmpfs: {mounted.stderr.decode().strip()}")
    try:
        one = Session(
            key="k", name="n", path=world.transcript(0), format="claude-code", group="g", resolver="r"
        )
        log = EventLog(world.state / "activity-events.jsonl")
        log.emit(SinkEvent("session_start", one, "t", {}, "k:start"))
        with contextlib.suppress(OSError), (world.state / "filler").open("wb") as filler:
            while True:
                filler.write(b"\0" * 1024)
                filler.flush()
        big = [SinkEvent("prompt_submitted", one, "t", {"text": "x" * 1500}, f"k:{n}") for n in range(20)]
        log.emit_many(big)  # 30 KB: does not fit now, fits once the filler is gone
        assert [r["key"] for r in whole_lines(log.path)] == ["k:start"]
        watch = subprocess.run(
            [*cli_command(), "watch"],
            capture_output=True,
            text=True,
            env=world.env(),
            timeout=60,
            check=False,
        )
        assert watch.returncode == 1
        assert "cannot write: No space left on device (ENOSPC)" in watch.stderr
        assert "cannot read" not in watch.stderr and "Traceback" not in watch.stderr
        (world.state / "filler").unlink()
        log.emit(SinkEvent("session_idle", one, "t", {}, "k:idle"))
        keys = [r["key"] for r in whole_lines(log.path)]
        assert keys == ["k:start", *(f"k:{n}" for n in range(20)), "k:idle"]
        log.close()
    finally:
        subprocess.run(["umount", "-l", str(world.state)], check=False)


# -- delivery: at least once (issue 19 item 9) -----------------------------------------------------------


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        found = path.stat()
    except FileNotFoundError:
        return None
    return (found.st_ino, found.st_mtime_ns)


def test_a_hook_killed_at_any_moment_loses_no_news(world: HookWorld) -> None:
    """A kill loop: real hook processes killed with SIGKILL, half of them the moment their cursor file
    is replaced (where a hook that saved before printing loses its digest), half at random moments;
    then hooks run to the end. Every prompt the siblings wrote is in some hook's output (a repeat is
    allowed: at least once)."""
    assert ok(world.run_hook(0, SIDELIGHT_WARM="off")) is not None  # the first look
    written = {1: 0, 2: 0}
    outputs: list[str | None] = []
    cursor = world.cursor_file(0)
    chance = random.Random(19)
    killed = 0
    payload = world.root / "payload.json"
    payload.write_bytes(world.payload(0))
    for round_ in range(24):
        for n in written:
            world.prompt(n, f"p{written[n]}")
            written[n] += 1
        before = _identity(cursor)
        with payload.open("rb") as stdin:
            process = subprocess.Popen(
                world.command(),
                stdin=stdin,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=world.env(SIDELIGHT_WARM="off"),
            )
        give_up = time.monotonic() + 60
        kill_at = time.monotonic() + chance.uniform(0.0, 0.3)
        while process.poll() is None and time.monotonic() < give_up:
            moved = _identity(cursor) != before
            if moved if round_ % 2 == 0 else time.monotonic() >= kill_at:
                process.kill()
                killed += 1
                break
            time.sleep(0.0005)
        out, err = process.communicate(timeout=60)
        assert b"Traceback" not in err
        outputs.append(out.decode() or None)
    for _ in range(5):  # then hooks that are left to finish, until nothing is new
        done = world.run_hook(0, SIDELIGHT_WARM="off")
        outputs.append(done.stdout.decode() or None)
        if ok(done) is None:
            break
    assert killed >= 6  # the loop did kill hooks (a hook that finished first is simply done)
    ranges = reported_ranges(outputs)
    lost = {
        n: sorted(
            set(range(total))
            - {p for first, end in ranges.get(session_id(n)[:8], []) for p in range(first, end)}
        )
        for n, total in written.items()
    }
    assert lost == {1: [], 2: []}, f"prompts lost by killed hooks: {lost}"


def test_a_host_gone_before_the_answer_was_printed_keeps_the_news(world: HookWorld) -> None:
    """stdout is a pipe nobody reads any more: the answer cannot be written, so nothing moves, and the
    hook stays silent on stderr."""
    assert ok(world.run_hook(0, SIDELIGHT_WARM="off")) is not None
    world.prompt(1, "news the host never saw")
    before = world.cursor_file(0).read_bytes()
    done = world.run_hook_for_a_gone_host(0, SIDELIGHT_WARM="off")
    assert done.returncode == 0 and done.stderr == b""
    assert world.cursor_file(0).read_bytes() == before
    context = ok(world.run_hook(0, SIDELIGHT_WARM="off"))
    assert context is not None and "news the host never saw" in context
