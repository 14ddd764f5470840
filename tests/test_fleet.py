"""Fleets through Redis Streams (`sidelight.features.fleet.streams`, the built-in `redis-streams` plugin),
against a
real
``redis-server`` on loopback (tests/support/redis_server.py): two "hosts" (two HOMEs and state directories on
this machine, two host ids, one project directory) publishing with their watchers and reading each
other through real hook runs; Redis crashing and restarting mid-run; a reader catching up after a
long absence; Redis down or silent while a hook runs.

Every wait polls with a deadline, and every test checks that the threads it started are gone.
"""

from __future__ import annotations

import itertools
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import tracemalloc
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from sidelight.agents.claude_code import claude_project_dir
from sidelight.config import ConfigError, Settings
from sidelight.cursors import CursorStore
from sidelight.engine import discovery, reads
from sidelight.features import hook
from sidelight.features.fleet import streams as fleet
from sidelight.features.lifecycle import LifecycleSettings, SessionTracker
from sidelight.plugins import Plugins
from sidelight.records import SessionActivity
from sidelight.statelayout import FLEET_CURSORS_FILE
from sidelight.templates import redis_streams
from sidelight.watch.watcher import Watcher
from tests import conftest
from tests.conftest import cli_command, threads_joined
from tests.support.redis_server import RedisServer, free_port, make_tls_files

TIMEOUT = 30.0


def wait_for(predicate: Callable[[], Any], timeout: float = TIMEOUT, what: str = "the condition") -> Any:
    return conftest.wait_for(predicate, timeout, what)


@pytest.fixture(autouse=True)
def no_thread_left() -> Iterator[None]:
    """The publisher's thread (and every watcher thread) is joined by the end of each test."""
    before = set(threading.enumerate())
    yield
    redis_streams.stop()
    threads_joined(before)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """One server for the tests that do not stop it (each test has a stream of its own)."""
    with RedisServer(tmp_path_factory.mktemp("redis")) as running:
        yield running


def iso(moment: float | None = None) -> str:
    moment = time.time() if moment is None else moment
    return datetime.fromtimestamp(moment, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def session_id(n: int) -> str:
    return f"{n:08d}-0000-4000-8000-00000000000{n % 10}"


@dataclass
class Host:
    """One machine of the fleet: a HOME with Claude Code sessions of ``project``, a state directory,
    and a host id; all hosts share the project path (as machines of one fleet deployed alike)."""

    host_id: str
    root: Path
    project: Path
    url: str
    scope: str

    def __post_init__(self) -> None:
        self.home = self.root / self.host_id
        self.state = self.home / "state"
        self.folder = claude_project_dir(self.home / ".claude" / "projects", self.project)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.plugins = Plugins(entry_points=False)
        self._n = 0

    def transcript(self, n: int) -> Path:
        return self.folder / f"{session_id(n)}.jsonl"

    def _write(self, n: int, entry: dict[str, Any]) -> None:
        entry.update(sessionId=session_id(n), cwd=str(self.project), timestamp=iso())
        with self.transcript(n).open("a", encoding="utf-8") as file:
            file.write(json.dumps(entry, separators=(",", ":")) + "\n")  # compact, as Claude Code writes

    def prompt(self, n: int, text: str) -> None:
        self._write(n, {"type": "user", "message": {"role": "user", "content": text}})

    def reply(self, n: int, text: str) -> None:
        self._n += 1
        block = {"type": "text", "text": text}
        self._write(
            n,
            {"type": "assistant", "message": {"id": f"m{self._n}", "role": "assistant", "content": [block]}},
        )

    def edit(self, n: int, path: str) -> None:
        self._n += 1
        block = {"type": "tool_use", "id": f"t{self._n}", "name": "Edit", "input": {"file_path": path}}
        self._write(
            n,
            {"type": "assistant", "message": {"id": f"m{self._n}", "role": "assistant", "content": [block]}},
        )

    def env(self, **extra: str) -> dict[str, str]:
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("SIDELIGHT_", "CLAUDE_", "CODEX_", "PI_", "XDG_"))
        }
        env.update(
            HOME=str(self.home),
            SIDELIGHT_STATE_DIR=str(self.state),
            SIDELIGHT_REDIS_URL=self.url,
            SIDELIGHT_HOST_ID=self.host_id,
            SIDELIGHT_FLEET_SCOPE=self.scope,
            COLUMNS="100",
        )
        env.update(extra)
        return env

    def settings(self, **extra: str) -> Settings:
        return Settings.load(env=self.env(**extra), home=self.home)

    def payload(self, n: int) -> dict[str, Any]:
        return {
            "session_id": session_id(n),
            "transcript_path": str(self.transcript(n)),
            "cwd": str(self.project),
            "hook_event_name": "UserPromptSubmit",
            "prompt": "what did the others do?",
        }

    def hook(self, n: int, settings: Settings | None = None) -> str | None:
        """The digest a prompt of session ``n`` gets, through the hook as the host runs it (in-process)."""
        out = hook.handle_hook(
            "claude-code", self.payload(n), settings=settings or self.settings(), plugins=self.plugins
        )
        if out is None:
            return None
        context: str = json.loads(out)["hookSpecificOutput"]["additionalContext"]
        return context

    def cli_hook(self, n: int) -> str | None:
        """The same, as the host really runs it: ``sidelight hook claude-code`` with JSON on stdin."""
        done = subprocess.run(
            [*cli_command(), "hook", "claude-code"],
            input=json.dumps(self.payload(n)).encode(),
            capture_output=True,
            env=self.env(),
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        if not done.stdout.strip():
            return None
        context: str = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
        return context

    def log(self) -> str:
        path = self.state / "sidelight.log"
        return path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""

    def publisher(self, **extra: str) -> fleet.Publisher:
        return fleet.Publisher(self.settings(**extra), self.plugins)

    def session(self, n: int) -> Any:
        sessions = {s.path: s for s in discovery.list_sessions(self.settings(), self.plugins)}
        return sessions[self.transcript(n)]


@pytest.fixture
def fleet_of(tmp_path: Path, server: RedisServer) -> Callable[..., list[Host]]:
    """``fleet_of("host-a", "host-b", url=...)``: hosts sharing one fresh stream and project path."""
    project = tmp_path / "proj"
    project.mkdir()
    scope = f"t{uuid.uuid4().hex[:12]}"

    def make(*names: str, url: str | None = None) -> list[Host]:
        return [Host(name, tmp_path, project, url or server.url, scope) for name in names]

    return make


def records(server: RedisServer, host: Host) -> list[dict[str, Any]]:
    """Every record on ``host``'s stream, oldest first."""
    client = server.client()
    try:
        entries = client.xrange(fleet.STREAM_PREFIX + host.scope)
    finally:
        client.close()
    return [json.loads(fields[b"data"]) for _id, fields in entries]


def published_prompts(server: RedisServer, host: Host, key: str) -> int:
    """The prompts of ``host``'s session ``key`` that the stream holds, each record counted once (by
    its id). The hosts' session ids are alike: the host tells them apart."""
    seen: dict[str, int] = {}
    for record in records(server, host):
        if record["session"]["key"] == key and record["host"] == host.host_id:
            seen[record["id"]] = record["user_messages"]
    return sum(seen.values())


def digest_lines(text: str | None) -> list[str]:
    return [] if text is None else text.splitlines()[1:]


# ---------------------------------------------------------------------------------------------------
# Configuration and import cost


def test_importing_sidelight_and_hooks_without_a_fleet_never_import_redis(tmp_path):
    code = (
        "import sys, sidelight, sidelight.features.hook\n"
        "from sidelight.plugins import Plugins\n"
        "p = Plugins(entry_points=False); p.sinks(); p.resolvers()\n"
        "from sidelight.features.hook import handle_hook\n"
        "handle_hook('claude-code', {'hook_event_name': 'UserPromptSubmit', 'session_id': 'x',"
        " 'transcript_path': '/nonexistent.jsonl', 'cwd': '/tmp'}, plugins=p)\n"
        "loaded = ('redis', 'sidelight.features.fleet.streams', 'sidelight._fast.resp')\n"
        "print(sorted(m for m in loaded if m in sys.modules))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIDELIGHT_")}
    env.update(HOME=str(tmp_path), SIDELIGHT_STATE_DIR=str(tmp_path / "state"))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert done.stdout.strip() == "[]"  # without a fleet, none of its machinery is even imported
    from sidelight.templates import redis_streams

    assert redis_streams.NAME == fleet.RESOLVER


def test_hooks_with_a_fleet_read_it_without_the_redis_package(fleet_of):
    """The hook process reads the stream with sidelight's own small client: the redis package costs
    more to import than a whole hook."""
    a, b = fleet_of("host-a", "host-b")
    b.prompt(0, "the reader")
    a.prompt(1, "over the fleet")
    publisher = a.publisher()
    publisher.note([a.session(1)])
    publisher.publish_pending()
    code = (
        "import json, sys\n"
        "from sidelight.features.hook import handle_hook\n"
        "out = handle_hook('claude-code', json.loads(sys.argv[1]))\n"
        "print(json.dumps({'redis': 'redis' in sys.modules, 'out': out}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, json.dumps(b.payload(0))],
        capture_output=True,
        text=True,
        env=b.env(),
        check=True,
    )
    result = json.loads(done.stdout)
    assert result["out"] is not None and "over the fleet" in result["out"], b.log()
    assert result["redis"] is False


def test_the_hooks_client_reads_what_the_redis_package_reads(server):
    import redis

    from sidelight._fast.resp import RespClient, RespError

    stream = "sidelight:resp-test"
    full = redis.Redis.from_url(server.url)
    try:
        ids = [full.xadd(stream, {"n": str(i), "data": "é\r\n\x00" * i}) for i in range(5)]
        with RespClient(server.url, 2.0) as mine:
            assert mine.xrevrange(stream, "+", "-", count=3) == full.xrevrange(stream, "+", "-", count=3)
            assert mine.xrevrange("sidelight:nothing") == []
            first, last = (i.decode() if isinstance(i, bytes) else i for i in (ids[1], ids[-1]))
            assert mine.xread({stream: first}, count=2) == full.xread({stream: first}, count=2)
            assert mine.xread({stream: last}) is None  # nothing newer, no blocking
            assert mine.command("PING") == b"PONG"
            with pytest.raises(RespError, match="WRONGTYPE"):
                full.set("sidelight:plain", "x")
                mine.xrevrange("sidelight:plain")
    finally:
        full.delete(stream, "sidelight:plain")
        full.close()
    with pytest.raises(RespError, match="not a Redis URL"), RespClient("http://x", 1.0) as bad:
        bad.command("PING")


def test_config_from_environment_and_config_file(tmp_path):
    assert fleet.FleetConfig.of(Settings.load(env={}, home=tmp_path)) is None
    config = fleet.FleetConfig.of(
        Settings.load(env={"SIDELIGHT_REDIS_URL": "rediss://:s3cret@r.example:6380/2"}, home=tmp_path)
    )
    assert config is not None
    assert config.host_id == fleet.default_host_id() and config.stream == "sidelight:default"
    assert config.maxlen == fleet.DEFAULT_MAXLEN and config.timeout == fleet.HOOK_TIMEOUT
    state = tmp_path / "state"
    state.mkdir()
    (state / "config.toml").write_text(
        'redis_url = "redis://r:6379"\nhost_id = "host-b"\nfleet_scope = "prod"\n'
        '[fleet]\nmaxlen = 5000\ntimeout = "300ms"\n',
        encoding="utf-8",
    )
    env = {"SIDELIGHT_STATE_DIR": str(state)}
    config = fleet.FleetConfig.of(Settings.load(env=env, home=tmp_path))
    assert config == fleet.FleetConfig("redis://r:6379", "host-b", "prod", 5000, 0.3)
    # The environment wins over the file.
    env.update(SIDELIGHT_HOST_ID="host-c", SIDELIGHT_FLEET_SCOPE="staging")
    config = fleet.FleetConfig.of(Settings.load(env=env, home=tmp_path))
    assert config is not None and (config.host_id, config.stream) == ("host-c", "sidelight:staging")
    with pytest.raises(ConfigError, match="redis://"):
        fleet.FleetConfig.of(Settings.load(env={"SIDELIGHT_REDIS_URL": "http://r"}, home=tmp_path))
    with pytest.raises(ConfigError, match="one word"):
        fleet.FleetConfig.of(
            Settings.load(
                env={"SIDELIGHT_REDIS_URL": "redis://r", "SIDELIGHT_FLEET_SCOPE": "a b"}, home=tmp_path
            )
        )


def test_passwords_never_reach_messages():
    assert fleet.safe_url("rediss://:hunter2@r.example:6380/0") == "rediss://:***@r.example:6380/0"
    assert fleet.safe_url("redis://app:hunter2@r/1") == "redis://app:***@r/1"
    assert fleet.safe_url("redis://r:6379") == "redis://r:6379"


def test_the_plugin_is_inert_without_a_fleet(tmp_path):
    host = Host("host-a", tmp_path, tmp_path / "proj", "", "unused")
    settings = host.settings()  # SIDELIGHT_REDIS_URL is empty: no fleet
    assert settings.redis_url is None
    with Watcher(settings, host.plugins, debounce=0.02, reconcile_interval=60.0):
        assert redis_streams.current_publisher() is None
    assert fleet.remote_activity(_fake_current(), settings, time.monotonic() + 1, True) == []


def _fake_current() -> Any:
    from sidelight.records import Session

    return Session(
        key="x", name="x", path=Path("/nonexistent"), format="claude-code", group="g", resolver="r"
    )


# ---------------------------------------------------------------------------------------------------
# Publishing


def test_a_record_is_summarized_redacted_and_moves_the_publishers_cursor(fleet_of, server):
    (a,) = fleet_of("host-a")
    secret = "sk-ant-api03-" + "x" * 40
    a.prompt(0, f"deploy with ANTHROPIC_API_KEY={secret} please " + "and more words " * 50)
    a.edit(0, "/srv/app/deploy.sh")
    a.reply(0, "Deployed.\x1b[31m done")
    publisher = a.publisher()
    session = a.session(0)
    publisher.note([session])
    assert publisher.publish_pending() == 1
    (record,) = records(server, a)
    size = a.transcript(0).stat().st_size
    assert record["host"] == "host-a" and record["v"] == fleet.RECORD_VERSION
    assert record["session"]["key"] == session.key and record["session"]["group"] == str(a.project)
    assert (record["start"], record["end"]) == (0, size)
    assert record["id"] == f"host-a/{session.key}/{a.transcript(0).stat().st_ino}:{size}"
    assert (record["user_messages"], record["assistant_messages"]) == (1, 2)
    assert record["categories"] == {"edit": 1} and record["tools"] == {"Edit": 1}
    assert record["files_touched"] == ["/srv/app/deploy.sh"]
    assert secret not in json.dumps(record) and "[REDACTED" in record["first_user_text"]
    assert len(record["first_user_text"]) <= fleet.TEXT_LIMIT
    assert "\x1b" not in record["last_assistant_text"]
    # Only the publisher's own cursor moved, to the end of what it published.
    saved = CursorStore(a.state / FLEET_CURSORS_FILE).read("redis:host-a")
    assert saved[session.key]["offset"] == size
    # Nothing new: nothing published.
    publisher.note([session])
    publisher.publish_pending()
    assert len(records(server, a)) == 1
    a.prompt(0, "one more")
    publisher.note([session])
    publisher.publish_pending()
    second = records(server, a)[1]
    assert (second["start"], second["end"]) == (size, a.transcript(0).stat().st_size)
    assert second["user_messages"] == 1 and second["first_user_text"] == "one more"


def test_a_failed_publish_keeps_the_cursor_and_the_retry_covers_everything(fleet_of, server):
    dead = f"redis://127.0.0.1:{free_port()}/0"
    (a,) = fleet_of("host-a", url=dead)
    a.prompt(0, "first")
    publisher = a.publisher()
    session = a.session(0)
    publisher.note([session])
    with pytest.raises(fleet._transient()):
        publisher.publish_pending(timeout=0.5)
    assert publisher.pending == 1
    assert CursorStore(a.state / FLEET_CURSORS_FILE).read("redis:host-a") == {}
    a.prompt(0, "second")
    # The same publisher's cursors, now with Redis there: one record for both prompts.
    up = fleet.Publisher(a.settings(SIDELIGHT_REDIS_URL=server.url), a.plugins)
    up.note([session])
    up.publish_pending()
    (record,) = records(server, a)
    assert record["user_messages"] == 2 and record["first_user_text"] == "first"


def test_the_watcher_publishes_and_its_stop_joins_the_publisher(fleet_of, server):
    (a,) = fleet_of("host-a")
    a.prompt(0, "hello fleet")
    settings = a.settings()
    tracker = SessionTracker(LifecycleSettings(idle_timeout=60, max_duration=3600))
    with Watcher(settings, a.plugins, tracker=tracker, debounce=0.02, reconcile_interval=60.0):
        publisher = redis_streams.current_publisher()
        assert publisher is not None and publisher.running
        wait_for(lambda: records(server, a), what="the first look's record")
        a.prompt(0, "second prompt")
        a.reply(0, "answer")
        wait_for(lambda: published_prompts(server, a, f"claude-code:{session_id(0)}") == 2, what="the append")
    assert redis_streams.current_publisher() is None
    assert not publisher.running


def test_a_watcher_stopped_while_redis_was_down_publishes_at_its_next_start(fleet_of, tmp_path):
    with RedisServer(tmp_path / "own") as own:
        (a,) = fleet_of("host-a", url=own.url)
        key = f"claude-code:{session_id(0)}"
        a.prompt(0, "before the outage")
        settings = a.settings()

        def watcher() -> Watcher:
            tracker = SessionTracker(LifecycleSettings(idle_timeout=60, max_duration=3600))
            return Watcher(settings, a.plugins, tracker=tracker, debounce=0.02, reconcile_interval=60.0)

        with watcher():
            wait_for(lambda: published_prompts(own, a, key) == 1, what="the first record")
        port = own.port
        own.stop()
        with watcher():
            a.prompt(0, "during the outage")
            publisher = redis_streams.current_publisher()
            assert publisher is not None
            wait_for(lambda: publisher.failures > 0, what="a failed publish")
        # Stopped with the news unpublished; Redis is back (empty: it kept nothing), then a new run.
        own.port = port
        own.start()
        with watcher():
            wait_for(lambda: published_prompts(own, a, key) == 1, what="the news after the restart")
        (record,) = records(own, a)
        assert record["first_user_text"] == "during the outage"


def test_redis_crashing_mid_run_loses_nothing(fleet_of, tmp_path):
    """A writer appends prompts while the publisher runs; Redis is killed (SIGKILL) and restarted on the
    same port halfway. Every prompt is on the stream exactly once (duplicates are recognisable by id),
    and a reader on another host counts every one."""
    with RedisServer(tmp_path / "aof", persistent=True) as own:
        a, b = fleet_of("host-a", "host-b", url=own.url)
        key = f"claude-code:{session_id(1)}"
        a.prompt(1, "prompt 0")
        b.prompt(0, "the reader")
        assert b.hook(0) is None  # the reader's first look: nothing yet
        publisher = a.publisher()
        session = a.session(1)
        publisher.start()
        try:
            total = 60
            for i in range(1, total):
                a.prompt(1, f"prompt {i}")
                publisher.note([session])
                if i == 20:
                    wait_for(lambda: published_prompts(own, a, key) == 21, what="the first third")
                    own.kill()
                if i == 40:
                    wait_for(lambda: publisher.failures > 0, what="a failed publish")
                    own.start()
                time.sleep(0.005)
            assert publisher.wait_idle(TIMEOUT)
        finally:
            publisher.stop()
        assert publisher.failures > 0
        assert published_prompts(own, a, key) == total
        ids = [r["id"] for r in records(own, a)]
        starts_ends = sorted((r["start"], r["end"]) for r in records(own, a))
        # The ranges tile the transcript: each byte published once.
        assert starts_ends[0][0] == 0 and starts_ends[-1][1] == a.transcript(1).stat().st_size
        assert all(p[1] == n[0] for p, n in itertools.pairwise(starts_ends))
        assert len(set(ids)) == len(ids)
        digest = b.hook(0)
        (line,) = [line for line in digest_lines(digest) if "@host-a" in line]
        assert f"{total} messages" in line


# ---------------------------------------------------------------------------------------------------
# Reading


def test_two_hosts_see_each_other_through_their_watchers_and_hooks(fleet_of, server):
    """Two machines, each running `sidelight watch` and `sidelight hook claude-code` as a host does."""
    a, b = fleet_of("host-a", "host-b")
    a.prompt(0, "session a0 starts")
    a.prompt(1, "session a1 starts")
    b.prompt(0, "session b0 starts")
    b.prompt(1, "session b1 starts")
    assert a.cli_hook(0) is not None  # a0's first look: its local sibling a1
    assert b.cli_hook(0) is not None
    watchers = [
        subprocess.Popen(
            [*cli_command(), "-v", "watch", "--debounce", "20ms", "--reconcile", "1s"],
            env=host.env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for host in (a, b)
    ]
    try:
        # Each watcher's first look publishes its two sessions; a0 and b0 take that news in first.
        wait_for(
            lambda: len({(r["host"], r["session"]["key"]) for r in records(server, a)}) == 4, what="both"
        )
        assert "@host-b" in (a.cli_hook(0) or "") and "@host-a" in (b.cli_hook(0) or "")
        b.prompt(1, "deploy the staging branch")
        b.edit(1, "/srv/app/deploy.sh")
        b.reply(1, "Staging is deployed.")
        b_key = f"claude-code:{session_id(1)}"
        wait_for(lambda: published_prompts(server, b, b_key) == 2, what="b1's news on the stream")
        digest = a.cli_hook(0)
        assert digest is not None
        (remote,) = [line for line in digest_lines(digest) if "@host-b" in line]
        assert remote.startswith("- ") and "@host-b (just now, 3 messages" in remote
        assert "edited …/app/deploy.sh" in remote and "Staging is deployed." in remote
        assert "@host-a" not in digest  # its own machine's records are skipped
        # Reported once: the next prompt has no news from host-b.
        assert "@host-b" not in (a.cli_hook(0) or "")
        # The other way round, with only the new part.
        a.prompt(1, "fix the flaky test")
        a.reply(1, "Fixed.")
        wait_for(lambda: published_prompts(server, a, f"claude-code:{session_id(1)}") == 2, what="a1's news")
        digest = b.cli_hook(0)
        remote_lines = [line for line in digest_lines(digest) if "@host-a" in line]
        assert len(remote_lines) == 1 and "fix the flaky test" in remote_lines[0]
        assert "2 messages" in remote_lines[0]
    finally:
        for process in watchers:
            process.send_signal(signal.SIGTERM)
        errors = [process.communicate(timeout=TIMEOUT)[1] for process in watchers]
        print(*errors, sep="\n----\n")  # shown when the test fails
    assert [p.returncode for p in watchers] == [0, 0], errors


def test_a_reader_offline_for_a_while_catches_up(fleet_of, server):
    a, b = fleet_of("host-a", "host-b")
    b.prompt(0, "the reader")
    assert b.hook(0) is None  # the first look: the stream is empty, the position is its end
    publisher = a.publisher()
    sessions = 12
    rounds = 250  # 3,000 records: several XREAD batches
    for n in range(1, sessions + 1):
        a.prompt(n, f"session {n}")
    known = {s.path: s for s in discovery.list_sessions(a.settings(), a.plugins)}
    mine = [known[a.transcript(n)] for n in range(1, sessions + 1)]
    publisher.note(mine)
    publisher.publish_pending()
    for r in range(rounds - 1):
        for n in range(1, sessions + 1):
            a.prompt(n, f"round {r}")
        publisher.note(mine)
        publisher.publish_pending()
    assert len(records(server, a)) == sessions * rounds
    settings = b.settings()
    reader = b.session(0)
    dry = fleet.remote_activity(reader, settings, time.monotonic() + 10, False)
    assert sorted(x.session.name.rsplit("@", 1)[1] for x in dry) == ["host-a"] * sessions
    assert sum(x.user_messages for x in dry) == sessions * rounds
    digest = b.hook(0, settings)
    lines = digest_lines(digest)
    assert all("@host-a" in line for line in lines if line.startswith("- "))
    assert lines[-1].startswith("+") and "more session" in lines[-1]  # 12 siblings do not fit in 500 chars
    assert f"{rounds} messages" in lines[0]
    assert b.hook(0, settings) is None  # caught up
    entry = CursorStore(reads.cursor_file(reader, settings)).read(reader.key)[f"fleet:sidelight:{a.scope}"]
    client = server.client()
    assert entry["last_id"] == client.xrevrange(f"sidelight:{a.scope}", count=1)[0][0].decode()
    client.close()


def test_duplicates_are_reported_once(fleet_of, server):
    a, b = fleet_of("host-a", "host-b")
    b.prompt(0, "the reader")
    assert b.hook(0) is None
    a.prompt(1, "only once")
    publisher = a.publisher()
    publisher.note([a.session(1)])
    publisher.publish_pending()
    client = server.client()
    (entry,) = client.xrange(f"sidelight:{a.scope}")
    client.xadd(f"sidelight:{a.scope}", entry[1])  # what a retried XADD leaves: the same record again
    client.close()
    lines = digest_lines(b.hook(0))
    assert len(lines) == 1 and "(just now, 1 message)" in lines[0]


def test_remote_siblings_follow_the_scope(fleet_of, server, tmp_path):
    a, b = fleet_of("host-a", "host-b")
    b.prompt(0, "the reader")
    elsewhere = Host("host-c", tmp_path, tmp_path / "other-project", server.url, a.scope)
    (tmp_path / "other-project").mkdir()
    assert b.hook(0) is None
    a.prompt(1, "same project")
    elsewhere.prompt(1, "another project")
    for host in (a, elsewhere):
        publisher = host.publisher()
        publisher.note([host.session(1)])
        publisher.publish_pending()
    settings = b.settings()
    project = {
        x.session.name.rsplit("@", 1)[1]
        for x in fleet.remote_activity(b.session(0), settings, time.monotonic() + 5, False)
    }
    assert project == {"host-a"}
    everyone = replace(settings, scope="all")
    found = {
        x.session.name.rsplit("@", 1)[1]
        for x in fleet.remote_activity(b.session(0), everyone, time.monotonic() + 5, False)
    }
    assert found == {"host-a", "host-c"}


def test_redis_down_the_hook_goes_on_with_local_siblings(fleet_of):
    (a,) = fleet_of("host-a", url=f"redis://127.0.0.1:{free_port()}/0")
    a.prompt(0, "reader")
    a.prompt(1, "a local sibling")
    started = time.monotonic()
    digest = a.hook(0)
    assert time.monotonic() - started < 5.0  # a bound (its timeout is 150 ms), not a measure
    assert digest is not None and "a local sibling" in digest
    assert "fleet:" in a.log() and "local sessions only" in a.log()


def test_a_silent_redis_costs_a_hook_its_timeout_only(fleet_of):
    """A server that accepts connections and never answers: the hook gives up after its read timeout."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(16)
        (a,) = fleet_of("host-a", url=f"redis://127.0.0.1:{silent.getsockname()[1]}/0")
        a.prompt(0, "reader")
        a.prompt(1, "a local sibling")
        started = time.monotonic()
        digest = a.hook(0)
        elapsed = time.monotonic() - started
    assert digest is not None and "a local sibling" in digest
    assert elapsed < 5.0, elapsed  # a bound (its read timeout is 150 ms), not a measure
    assert "Timeout" in a.log() or "timed out" in a.log().lower()


def test_tls_and_a_password_through_the_url(fleet_of, tmp_path):
    tls = make_tls_files(tmp_path / "tls")
    with RedisServer(tmp_path / "tls-server", password="pa55word", tls=tls) as secure:
        a, b = fleet_of("host-a", "host-b", url=secure.url)
        assert secure.url.startswith("rediss://:pa55word@")
        b.prompt(0, "the reader")
        assert b.hook(0) is None
        a.prompt(1, "over TLS")
        publisher = a.publisher()
        publisher.note([a.session(1)])
        publisher.publish_pending()
        assert "over TLS" in (b.hook(0) or "")
        # A wrong password: the hook says why in its log (without the password) and injects nothing.
        wrong = secure.url.replace("pa55word", "n0tThePa55")
        a.prompt(1, "unseen")
        assert b.hook(0, b.settings(SIDELIGHT_REDIS_URL=wrong)) is None
        assert "pa55word" not in b.log() and "n0tThePa55" not in b.log()
        assert "local sessions only" in b.log()


def test_list_remote_names_the_other_machines_sessions(fleet_of, server):
    a, b = fleet_of("host-a", "host-b")
    for n, text in ((1, "older"), (2, "newer")):
        a.prompt(n, text)
        publisher = a.publisher()
        publisher.note([a.session(n)])
        publisher.publish_pending()
    b.prompt(1, "b's own")
    publisher = b.publisher()
    publisher.note([b.session(1)])
    publisher.publish_pending()
    found = fleet.list_remote(b.settings())
    assert [(x.session.name.rsplit("@", 1)[1], x.first_user_text) for x in found] == [
        ("host-a", "newer"),
        ("host-a", "older"),
    ]
    with pytest.raises(ConfigError):
        fleet.list_remote(replace(b.settings(), redis_url=None))
    with pytest.raises(fleet.FleetUnavailableError):
        fleet.list_remote(b.settings(SIDELIGHT_REDIS_URL=f"redis://127.0.0.1:{free_port()}/0"), timeout=0.5)


def test_one_huge_record_is_skipped_and_costs_the_readers_little(fleet_of, server):
    """A record of 50 MB (a foreign or hostile writer's: ours are capped) on a real redis-server: every
    reader skips it unread (it stands in the reply as TOO_LARGE, its bytes never kept) and reports the
    records around it; the next prompt does not meet it again."""
    a, b = fleet_of("host-a", "host-b")
    b.prompt(0, "the reader")
    assert b.hook(0) is None  # the first look: the position is the stream's end
    a.prompt(1, "before the huge one")
    publisher = a.publisher()
    publisher.note([a.session(1)])
    publisher.publish_pending()
    client = server.client()
    stream = f"sidelight:{a.scope}"
    (entry,) = client.xrange(stream)
    huge = dict(entry[1])
    huge[b"id"] = b"host-x/huge/1:1"
    huge[b"host"] = b"host-x"
    huge[b"data"] = b'{"session": {"key": "huge"}, "pad": "' + b"x" * (50 * 1024 * 1024) + b'"}'
    client.xadd(stream, huge)
    client.close()
    a.prompt(2, "after the huge one")
    publisher.note([a.session(2)])
    publisher.publish_pending()
    # A budget the read of a 50 MB reply fits in on a loaded machine (the default 2 s ran out once in
    # CI, at load 6, with tracemalloc tracing every allocation), below the bound on a stall.
    roomy = b.settings(SIDELIGHT_TIME_BUDGET="8s")
    tracemalloc.start()
    try:
        started = time.monotonic()
        digest = b.hook(0, roomy)
        elapsed = time.monotonic() - started
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert elapsed < 10.0, elapsed  # a bound on a stall (it took 20 s before), not a measure
    assert peak < 32 * 1024 * 1024, peak
    text = "\n".join(digest_lines(digest))
    assert "before the huge one" in text and "after the huge one" in text, text
    assert "larger than" in b.log()
    assert b.hook(0) is None  # past it for good


def test_a_record_is_bounded_when_it_is_published():
    """A session with thousands of tool names, long paths and long texts publishes a record of at most
    RECORD_BYTES: tools beyond TOOLS_LIMIT are counted together, and what still does not fit is trimmed."""
    session = replace(_fake_current(), key="k" * 100)
    activity = SessionActivity(
        session=session,
        user_messages=3,
        assistant_messages=3,
        tools={f"mcp__server__tool_{i:05d}_" + "y" * 200: 1 for i in range(5000)},
        categories={"other": 5000},
        files_touched=tuple(f"/srv/{i}/" + "z" * 400 for i in range(1000)),
        first_user_text="p" * 100_000,
        last_assistant_text="r" * 100_000,
        first_timestamp=None,
        last_timestamp=None,
        first_look=False,
        age_seconds=None,
    )
    record = fleet.build_record("host-a", activity, [("/t", 1, 0, 10)], 0.0)
    assert record is not None
    assert len(json.dumps(record, separators=(",", ":"))) <= fleet.RECORD_BYTES
    assert len(record["tools"]) <= fleet.TOOLS_LIMIT + 1 and sum(record["tools"].values()) == 5000
    assert record["user_messages"] == 3
    # A key no trimming can bring under the cap: refused, with a line in the log.
    enormous = replace(activity, session=replace(session, key="k" * (2 * fleet.RECORD_BYTES)))
    assert fleet.build_record("host-a", enormous, [("/t", 1, 0, 10)], 0.0) is None


@pytest.mark.parametrize("value", ['"nan"', '"inf"', '"0ms"', '"1h"', "1e999", '"-5ms"', '"soon"'])
def test_the_fleet_timeout_is_validated(tmp_path, value):
    state = tmp_path / "state"
    state.mkdir()
    (state / "config.toml").write_text(
        f'redis_url = "redis://r:6379"\n[fleet]\ntimeout = {value}\n', encoding="utf-8"
    )
    with pytest.raises(ConfigError, match=r"timeout|duration"):
        fleet.FleetConfig.of(Settings.load(env={"SIDELIGHT_STATE_DIR": str(state)}, home=tmp_path))
