"""The warm path: a running watcher answers hooks on ``<state dir>/hook.sock``.

In-process tests drive :class:`sidelight.watch.serve.HookServer` and :func:`sidelight.warm.ask_watcher`
directly (the test process's environment is the world's); the subprocess tests run the real
``sidelight watch`` and ``sidelight hook`` as a host would.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from sidelight import warm
from sidelight.config import Settings
from sidelight.features import hook as hook_module
from sidelight.features.hook import handle_hook
from sidelight.plugins import get_plugins
from sidelight.statelayout import HOOK_SOCKET
from sidelight.watch.serve import CONCURRENCY, HookServer
from tests.conftest import cli_command
from tests.support import watching
from tests.support.hook_world import HookWorld, context_of

pytestmark = pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="Unix sockets")


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> HookWorld:
    """Four sessions; session 0 has looked once, and 1 and 2 have news since. The test process runs in
    the world's environment, as the watcher and its hooks would."""
    world = HookWorld(tmp_path, sessions=4)
    first = world.run_hook(0, SIDELIGHT_WARM="off")
    assert first.returncode == 0, first.stderr
    for n in (1, 2):
        world.prompt(n, f"session {n} ran make test and fixed parser.py")
    env = world.env()
    for name in list(os.environ):
        if name not in env:
            monkeypatch.delenv(name)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(world.project)
    return world


@pytest.fixture
def server(world: HookWorld) -> Any:
    settings = Settings.load()
    hook_server = HookServer(settings, get_plugins(), placements=lambda: 0)
    hook_server.start()
    yield hook_server
    hook_server.stop()


def _keep(world: HookWorld, before: Path) -> None:
    """A copy of the state directory (not the socket: that is the server's)."""
    shutil.copytree(world.state, before, ignore=shutil.ignore_patterns(HOOK_SOCKET))


def _restore(world: HookWorld, before: Path) -> None:
    """The state directory as :func:`_keep` copied it (the socket stays)."""
    for path in world.state.iterdir():
        if path.name == HOOK_SOCKET:
            continue
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink()
    shutil.copytree(before, world.state, dirs_exist_ok=True)


def _state(world: HookWorld) -> dict[str, Any]:
    """What a hook leaves behind for session 0: its cursors and the hashes of the blocks it was given."""
    cursors = json.loads(world.cursor_file(0).read_text())
    received = {p.name: p.read_text() for p in (world.state / "received").glob("*")}
    return {"cursors": cursors, "received": received}


def test_the_watcher_answers_as_the_hook_itself_would(world: HookWorld, server: HookServer) -> None:
    before = world.root / "state-before"
    _keep(world, before)
    payload = world.payload(0)

    warm_answer = warm.ask_watcher("claude-code", payload)
    assert server.answered == 1 and server.declined == 0
    assert warm_answer is not None
    context = context_of(warm_answer.encode())
    assert context is not None and "session 1 ran make test" in context
    assert server.settle(30)  # the hook does not wait for the cursors to move
    warm_state = _state(world)

    _restore(world, before)
    cold_answer = handle_hook("claude-code", payload)
    assert warm_answer == cold_answer
    assert warm_state == _state(world)
    # And the cursors moved once: asked again, either path has nothing new to say.
    assert warm.ask_watcher("claude-code", payload) == ""


def test_a_hook_of_other_settings_or_another_build_answers_itself(
    world: HookWorld, server: HookServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    payload = world.payload(0)
    assert warm.ask_watcher("claude-code", payload, {**os.environ, "SIDELIGHT_PROMPT_BUDGET": "999"}) is None
    assert warm.ask_watcher("claude-code", payload, {**os.environ, "SIDELIGHT_WARM": "off"}) is None
    # Where opencode keeps its database: another folder, other sessions.
    data = str(world.root / "elsewhere")
    assert warm.ask_watcher("claude-code", payload, {**os.environ, "XDG_DATA_HOME": data}) is None
    monkeypatch.setattr(server, "build", "another build")
    assert warm.ask_watcher("claude-code", payload) is None
    assert server.declined == 3 and server.answered == 0
    # A distribution installed since the watcher started (a plugin may have come): the hook loads it.
    monkeypatch.setattr(server, "build", warm.build_id())
    installed, server.installed = server.installed, []
    assert warm.ask_watcher("claude-code", payload) is None
    assert server.declined == 4 and server.answered == 0
    server.installed = installed
    # Options that only the watcher or the command line read do not matter.
    answer = warm.ask_watcher("claude-code", payload, {**os.environ, "SIDELIGHT_DEBOUNCE": "1s"})
    assert answer and "session 1 ran make test" in answer
    assert not world.cursor_file(1).exists()


def test_a_hook_that_gave_up_waiting_finds_nothing_moved(world: HookWorld, server: HookServer) -> None:
    cursors = world.cursor_file(0).read_bytes()
    request = warm.encode_request(
        "claude-code", world.payload(0), str(world.project), warm.environment(os.environ), warm.build_id()
    )
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(10)
        sock.connect(str(server.path))
        sock.sendall(request)
        assert sock.recv(64).startswith(b"A ")
        # ...and closes without its go-ahead, as a hook past its timeout does.
    deadline = time.monotonic() + 10
    while server._slots._value < CONCURRENCY and time.monotonic() < deadline:
        time.sleep(0.01)
    assert server.answered == 0
    assert world.cursor_file(0).read_bytes() == cursors
    answer = warm.ask_watcher("claude-code", world.payload(0))
    assert answer and "session 2 ran make test" in answer


def test_a_hook_that_dies_before_printing_the_warm_answer_moves_nothing(
    world: HookWorld, server: HookServer
) -> None:
    """At least once, warm (issue 19 item 9): the watcher saves the cursors only when the hook says it
    printed the answer; a hook that got the answer and died first leaves the news for the next prompt."""
    cursors = world.cursor_file(0).read_bytes()
    request = warm.encode_request(
        "claude-code", world.payload(0), str(world.project), warm.environment(os.environ), warm.build_id()
    )
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.connect(str(server.path))
        sock.sendall(request)
        reader = warm.Reader(sock)
        deadline = time.monotonic() + 30
        assert reader.line(deadline).startswith(b"A ")
        sock.sendall(b"G")
        answer = reader.exactly(int(reader.line(deadline)), deadline).decode()
        assert "session 2 ran make test" in answer
        # ...and dies before it printed it: no K.
    deadline = time.monotonic() + 10
    while server._slots._value < CONCURRENCY and time.monotonic() < deadline:
        time.sleep(0.01)
    assert world.cursor_file(0).read_bytes() == cursors
    printed: list[str] = []

    def deliver(text: str) -> bool:
        printed.append(text)
        return True

    again = warm.ask_watcher("claude-code", world.payload(0), deliver=deliver)
    assert again == answer and printed == [answer]
    assert server.settle(30)
    assert world.cursor_file(0).read_bytes() != cursors  # printed and said so: now they moved
    assert warm.ask_watcher("claude-code", world.payload(0)) == ""


def _slow_commits(monkeypatch: pytest.MonkeyPatch, seconds: float) -> list[float]:
    """The watcher's commits (what moves the cursors once the hook said it printed) start ``seconds``
    late; returns when each started."""
    started: list[float] = []
    finish = hook_module.finish_plan

    def slow(plan: Any) -> None:
        time.sleep(seconds)
        started.append(time.monotonic())
        finish(plan)

    monkeypatch.setattr(hook_module, "finish_plan", slow)
    return started


def test_the_hook_exits_before_the_cursors_move_and_its_next_prompt_waits_for_them(
    world: HookWorld, server: HookServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The hook leaves once it printed (K), not once the cursors moved; the session's reading lock, held
    by the watcher until they did, keeps the next prompt, warm or in-process, from saying the news
    again."""
    commits = _slow_commits(monkeypatch, 0.5)
    first = warm.ask_watcher("claude-code", world.payload(0))
    assert first and "session 1 ran make test" in first
    assert not commits and not server.settle(0)  # answered, the cursors not moved yet
    returned = time.monotonic()
    env = {**os.environ, "SIDELIGHT_WARM_TIMEOUT": "5s"}
    assert warm.ask_watcher("claude-code", world.payload(0), env) == ""  # waited for them
    assert commits and commits[0] >= returned
    assert server.settle(30)

    world.prompt(2, "session 2 deployed the parser")
    again = warm.ask_watcher("claude-code", world.payload(0))
    assert again and "session 2 deployed" in again and "session 1 ran make test" not in again
    assert not server.settle(0)
    assert handle_hook("claude-code", world.payload(0)) is None  # in-process: waited too
    assert server.settle(30)


def test_a_stopped_watcher_moves_the_cursors_it_owes_first(
    world: HookWorld, server: HookServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    cursors = world.cursor_file(0).read_bytes()
    commits = _slow_commits(monkeypatch, 0.3)
    answer = warm.ask_watcher("claude-code", world.payload(0))
    assert answer and "session 1 ran make test" in answer and not commits
    server.stop()  # what SIGTERM and the service manager's stop come to
    assert commits and world.cursor_file(0).read_bytes() != cursors
    assert handle_hook("claude-code", world.payload(0)) is None


def test_a_commit_the_watcher_never_made_leaves_the_news_for_the_next_prompt(
    world: HookWorld, server: HookServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A watcher killed (``kill -9``) between the hook's K and the commit: the lock dies with it, the
    cursors stay, and the next prompt says the same news (at least once, nothing lost)."""
    cursors = world.cursor_file(0).read_bytes()
    finish = hook_module.finish_plan
    monkeypatch.setattr(hook_module, "finish_plan", lambda plan: plan.close())
    answer = warm.ask_watcher("claude-code", world.payload(0))
    assert answer and "session 1 ran make test" in answer
    assert server.settle(30)
    assert world.cursor_file(0).read_bytes() == cursors
    monkeypatch.setattr(hook_module, "finish_plan", finish)
    assert handle_hook("claude-code", world.payload(0)) == answer


def test_a_warm_hook_whose_host_went_away_keeps_the_news_and_says_nothing(
    world: HookWorld, server: HookServer
) -> None:
    """A real hook process answered warm, its stdout a pipe nobody reads any more: nothing moves, it
    exits 0, and its stderr stays empty (no "Exception ignored" from a teardown flushing stdout again)."""
    cursors = world.cursor_file(0).read_bytes()
    done = world.run_hook_for_a_gone_host(0, SIDELIGHT_WARM_TIMEOUT="5s")
    assert done.returncode == 0 and done.stderr == b"", done.stderr
    assert server.settle(30) and server.answered == 1
    assert world.cursor_file(0).read_bytes() == cursors
    again = world.run_hook(0, SIDELIGHT_WARM_TIMEOUT="5s")
    context = context_of(again.stdout)
    assert context is not None and "session 1 ran make test" in context
    assert server.answered == 2


def test_a_watcher_out_of_threads_declines_and_serves_the_next_hook(
    world: HookWorld, server: HookServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    class NoThread(threading.Thread):
        def start(self) -> None:
            raise RuntimeError("can't start new thread")

    with monkeypatch.context() as patched:
        patched.setattr(threading, "Thread", NoThread)
        assert warm.ask_watcher("claude-code", world.payload(0)) is None
    assert server.declined == 1 and server.settle(0)
    answer = warm.ask_watcher("claude-code", world.payload(0), {**os.environ, "SIDELIGHT_WARM_TIMEOUT": "5s"})
    assert answer and "session 1 ran make test" in answer


def test_a_busy_or_silent_watcher_leaves_the_hook_to_answer_itself(
    world: HookWorld, server: HookServer
) -> None:
    taken = [server._slots.acquire(blocking=False) for _ in range(CONCURRENCY)]
    try:
        assert all(taken)
        assert warm.ask_watcher("claude-code", world.payload(0)) is None
        assert server.declined == 1
    finally:
        for _ in taken:
            server._slots.release()

    # A socket that takes connections and never answers: the hook's wait is bounded.
    server.stop()
    silent = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    silent.bind(str(server.path))
    silent.listen(8)
    try:
        env = {**os.environ, "SIDELIGHT_WARM_TIMEOUT": "30ms"}
        assert warm.ask_watcher("claude-code", world.payload(0), env) is None
        done = world.run_hook(0, timeout=60, SIDELIGHT_WARM_TIMEOUT="30ms")
        assert done.returncode == 0, done.stderr
        context = context_of(done.stdout)
        assert context is not None and "session 1 ran make test" in context
    finally:
        silent.close()


def test_the_socket_is_private_and_malformed_requests_are_declined(
    world: HookWorld, server: HookServer
) -> None:
    assert stat.S_ISSOCK(server.path.stat().st_mode)
    assert stat.S_IMODE(server.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(world.state.stat().st_mode) == 0o700
    for junk in (b"GET / HTTP/1.1\r\n\r\n", warm.MAGIC + b" 99999999999 0\n", warm.MAGIC + b" 3 0\nab"):
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(10)
            sock.connect(str(server.path))
            sock.sendall(junk)
            sock.shutdown(socket.SHUT_WR)
            assert sock.recv(64).startswith(b"D ")
    assert server.answered == 0
    answer = warm.ask_watcher("claude-code", world.payload(0))
    assert answer and "session 1 ran make test" in answer
    server.stop()
    assert not server.path.exists()


def test_a_state_directory_too_deep_for_a_socket_address_still_serves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    world = HookWorld(deep, sessions=2)
    monkeypatch.setenv("HOME", str(world.home))
    monkeypatch.setenv("SIDELIGHT_STATE_DIR", str(world.state))
    assert len(str(world.state / HOOK_SOCKET)) > warm.MAX_ADDRESS
    settings = Settings.load()
    hook_server = HookServer(settings, get_plugins())
    hook_server.start()
    try:
        assert warm.ask_watcher("claude-code", world.payload(0)) is not None
        assert hook_server.answered == 1
    finally:
        hook_server.stop()


def test_concurrent_hooks_of_different_sessions_are_each_answered_once(
    world: HookWorld, server: HookServer
) -> None:
    answers: dict[int, str | None] = {}

    def ask(n: int) -> None:
        env = {**os.environ, "SIDELIGHT_WARM_TIMEOUT": "5s"}
        answers[n] = warm.ask_watcher("claude-code", world.payload(n), env)

    threads = [threading.Thread(target=ask, args=(n,)) for n in (0, 3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert server.answered == 2
    assert answers[0] and "session 2 ran make test" in answers[0]
    assert answers[3] is not None  # session 3's first look


# --- the real processes ---------------------------------------------------------------------------------


PROBE = (
    "import sys\n"
    "from sidelight.cli import main\n"
    "main(['hook', 'claude-code'])\n"
    "sys.stderr.write(' '.join(sorted(sys.modules)))\n"
)


def test_real_hooks_answered_warm_match_cold_ones_and_import_almost_nothing(tmp_path: Path) -> None:
    world = HookWorld(tmp_path, sessions=3)
    assert world.run_hook(0, SIDELIGHT_WARM="off").returncode == 0
    world.prompt(1, "session 1 ran make test and fixed parser.py")
    before = tmp_path / "state-before"
    _keep(world, before)

    watcher = watching.start_serving(
        [*cli_command(), "watch", "--reconcile", "1s"], world.env(), world.project, world.state
    )
    try:
        probe = subprocess.run(
            [sys.executable, "-c", PROBE],
            input=world.payload(0),
            capture_output=True,
            env={**world.env(), "SIDELIGHT_WARM_TIMEOUT": "5s"},
            cwd=world.project,
            timeout=60,
            check=False,
        )
        answered = watching.answered(world.state, 1)
    finally:
        watching.stop(watcher)
    assert answered == 1
    assert probe.returncode == 0, probe.stderr
    warm_output = probe.stdout
    context = context_of(warm_output)
    assert context is not None and "session 1 ran make test" in context
    modules = set(probe.stderr.decode().split())
    for heavy in (
        "pluggy",
        "sidelight.plugins",
        "sidelight.records",
        "sidelight.features.hook",
        "typing",
        "types",
        "json",
    ):
        assert heavy not in modules, f"the warm hook imported {heavy}"
    assert not any(m.startswith(("sidelight.templates", "sidelight.agents.")) for m in modules)

    _restore(world, before)
    cold = world.run_hook(0, SIDELIGHT_WARM="off")
    assert cold.stdout == warm_output


def test_the_listing_is_made_again_when_a_transcript_is_placed(world: HookWorld) -> None:
    placed = [0]
    hook_server = HookServer(Settings.load(), get_plugins(), placements=lambda: placed[0])
    hook_server.start()
    try:
        assert warm.ask_watcher("claude-code", world.payload(0))
        newcomer = HookWorld(world.root, sessions=6)  # sessions 4 and 5 appear
        newcomer.prompt(5, "session 5 is new here")
        # Nothing said a file was placed: the listing stands (the watcher's file events move the count).
        assert "claude 00000005" not in (warm.ask_watcher("claude-code", world.payload(0)) or "")
        placed[0] += 1
        answer = warm.ask_watcher("claude-code", world.payload(0))
        assert answer and "claude 00000005" in answer
    finally:
        hook_server.stop()


def test_the_watcher_counts_placements_and_distrusts_unwatched_roots(world: HookWorld) -> None:
    from sidelight.watch.watcher import Watcher

    watcher = Watcher(Settings.load(), get_plugins(), debounce=0.05, reconcile_interval=60)
    watcher.start()
    try:
        deadline = time.monotonic() + 30
        while watcher._placements_seen() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        before = watcher._placements_seen()
        assert before is not None
        HookWorld(world.root, sessions=5)  # session 4's transcript is created
        while watcher._placements_seen() == before and time.monotonic() < deadline:
            time.sleep(0.05)
        assert watcher._placements_seen() != before
        # A root that appears after the watcher looked (Pi's first session) is not watched yet.
        (world.home / ".pi" / "agent" / "sessions").mkdir(parents=True)
        assert watcher._placements_seen() is None
    finally:
        watcher.stop()


def test_a_state_directory_moved_by_the_config_file_is_found_by_the_hook(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    world = HookWorld(tmp_path, sessions=2)
    monkeypatch.setenv("HOME", str(world.home))
    monkeypatch.delenv("SIDELIGHT_STATE_DIR", raising=False)
    monkeypatch.delenv("XDG_STATE_HOME", raising=False)
    monkeypatch.delenv("SIDELIGHT_CONFIG", raising=False)
    default = world.home / ".local" / "state" / "sidelight"
    default.mkdir(parents=True)
    moved = tmp_path / "elsewhere"
    (default / "config.toml").write_text(f'state_dir = "{moved}"\n')
    settings = Settings.load()
    assert settings.state_dir == moved
    hook_server = HookServer(settings, get_plugins())
    hook_server.start()
    try:
        assert (moved / HOOK_SOCKET).exists()
        assert warm.ask_watcher("claude-code", world.payload(0)) is not None
        assert hook_server.answered == 1
    finally:
        hook_server.stop()


@pytest.mark.parametrize(
    ("given", "seconds"),
    [("", 0.05), ("30ms", 0.03), ("0.2s", 0.2), ("0.1", 0.1), ("1m", 60.0), ("abc", 0.05), ("-1s", 0.05)],
)
def test_the_warm_timeout_is_a_duration_as_every_setting_reads_one(given: str, seconds: float) -> None:
    assert warm._timeout({warm.TIMEOUT_VARIABLE: given}) == pytest.approx(seconds)
