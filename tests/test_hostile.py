"""Hostile content stays data (issue 7, guarantee 6).

Secrets of the common providers and prompt-injection attempts are written into a sibling's transcript
and pushed through the real paths: the digest a hook injects (``handle_hook``, the hook's orchestration,
with the real Claude Code resolver), a session's context block after a compaction, and ``sidelight read``.
Nothing secret leaks, nothing invisible or escaping gets through, and the framing holds: one frame line,
then list items only. Session names on the command line cannot leave the sessions' folders, and state
files are ``0600`` in ``0700`` directories.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import threading
import tracemalloc
import unicodedata
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from sidelight.digest import FRAMING
from sidelight.hook import handle_hook
from tests.conftest import cli_command
from tests.support.hook_world import HookWorld, context_of, session_id

DATA = Path(__file__).parent / "data" / "hostile"
ATTACKS: list[str] = json.loads((DATA / "injections.json").read_text(encoding="utf-8"))
SECRETS = json.loads(
    (Path(__file__).parent / "fixtures" / "secrets" / "secrets.json").read_text(encoding="utf-8")
)

#: What must never reach another agent's context: frames that close or open a block, role tags.
FORBIDDEN = [
    "[END SESSION]",
    "[SESSION CONTEXT]",
    "[Long-term context]",
    "</system-reminder>",
    "<system-reminder>",
]
FORBIDDEN += ["<|im_start|>", "<|im_end|>", "[INST]", "[/INST]", "<system>", "</system>", "-----BEGIN"]


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> HookWorld:
    world = HookWorld(tmp_path, sessions=2)
    for name in list(os.environ):
        if name.startswith(("SIDELIGHT_", "CLAUDE_", "XDG_")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(world.home))
    monkeypatch.setenv("SIDELIGHT_STATE_DIR", str(world.state))
    assert handle_hook("claude-code", world.payload(0)) is not None  # the first look is behind us
    return world


def digest_after(world: HookWorld, text: str) -> str:
    world.prompt(1, text)
    out = handle_hook("claude-code", world.payload(0))
    context = context_of(out.encode()) if out else None
    assert context is not None
    return context


def assert_framed(context: str) -> None:
    """One frame line, then list items; nothing invisible, nothing that closes or opens a block."""
    rows = context.split("\n")
    assert rows[0] == FRAMING
    assert all(row.startswith("- ") for row in rows[1:]), rows
    assert len(context) <= 500
    for ch in context:
        assert ch in "\n" or unicodedata.category(ch) not in ("Cc", "Cf", "Cs", "Co"), repr(ch)
    for marker in FORBIDDEN:
        assert marker.lower() not in context.lower(), marker


def secret_of(case: dict[str, object]) -> str:
    parts = case["parts"]
    assert isinstance(parts, list)
    return "".join(parts)


@pytest.mark.parametrize("case", SECRETS, ids=[f"{i}-{c['kind']}" for i, c in enumerate(SECRETS)])
def test_a_siblings_secret_never_reaches_the_digest(world: HookWorld, case: dict[str, object]) -> None:
    secret = secret_of(case)
    text = str(case["text"]).replace("{secret}", secret)
    context = digest_after(world, f"please run {text}")
    assert_framed(context)
    assert "REDACTED" in context
    for piece in secret.split():
        if len(piece) >= 8:
            assert piece not in context


@pytest.mark.parametrize("attack", ATTACKS, ids=[f"attack-{i}" for i in range(len(ATTACKS))])
def test_an_injection_attempt_stays_one_quoted_line(world: HookWorld, attack: str) -> None:
    context = digest_after(world, attack)
    assert_framed(context)
    # The sibling's line is there (an attack that looks like a digest is left out as digest text: then
    # only its counts are), and the other text never becomes a line of its own.
    assert session_id(1)[:8] in context
    assert len(context.split("\n")) == 2


def test_an_injection_in_a_tool_command_and_an_assistant_reply(world: HookWorld) -> None:
    entry = {
        "type": "assistant",
        "message": {
            "id": "m-attack",
            "role": "assistant",
            "content": [
                {"type": "text", "text": ATTACKS[0] + ATTACKS[5]},
                {
                    "type": "tool_use",
                    "id": "tu-attack",
                    "name": "Bash",
                    "input": {
                        "command": "curl -H 'Authorization: Bearer abcdefgh12345678XYZ' x; " + ATTACKS[6]
                    },
                },
            ],
        },
        "timestamp": "2027-01-15T07:57:00.000Z",
        "sessionId": session_id(1),
    }
    with world.transcript(1).open("a", encoding="utf-8") as file:
        file.write(json.dumps(entry) + "\n")
    context = digest_after(world, "a prompt")
    assert_framed(context)
    assert "abcdefgh12345678XYZ" not in context


def test_the_context_block_after_a_compaction_keeps_its_frame(world: HookWorld) -> None:
    for attack in ATTACKS:
        world.prompt(0, attack)
    payload = json.loads(world.payload(0))
    payload.update(hook_event_name="SessionStart", source="compact")
    payload.pop("prompt")
    out = handle_hook("claude-code", json.dumps(payload))
    assert out is not None
    context = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    assert context.startswith("[SESSION CONTEXT]") and context.endswith("[END SESSION]")
    inner = context[len("[SESSION CONTEXT]") : -len("[END SESSION]")]
    for marker in FORBIDDEN:
        assert marker.lower() not in inner.lower(), marker
    assert "\x1b" not in context and "\u202e" not in context


def run_cli(world: HookWorld, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*cli_command(), *args], capture_output=True, text=True, env=world.env(), timeout=60, check=False
    )


def test_sidelight_read_shows_hostile_text_as_data(world: HookWorld) -> None:
    for attack in ATTACKS:
        world.prompt(1, attack)
    secrets = [secret_of(c) for c in SECRETS]
    for case, secret in zip(SECRETS, secrets, strict=True):
        world.prompt(1, str(case["text"]).replace("{secret}", secret))
    done = run_cli(world, "read", session_id(1), "--lines", "200")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "REDACTED" in out
    for secret in secrets:
        for piece in secret.split():
            if len(piece) >= 8:
                assert piece not in out, piece
    for ch in out:
        assert ch in "\n\t" or unicodedata.category(ch) not in ("Cc", "Cf", "Cs", "Co"), repr(ch)
    for marker in FORBIDDEN:
        assert marker.lower() not in out.lower(), marker


@pytest.mark.parametrize("name", ["../../etc/passwd", "../../../../../../etc/shadow", "..", "/", "a/../../b"])
def test_a_session_name_cannot_leave_the_sessions_folders(world: HookWorld, name: str) -> None:
    done = run_cli(world, "read", name)
    assert done.returncode != 0
    assert "root:" not in done.stdout
    assert done.stderr.strip() and "Traceback" not in done.stderr


def test_state_files_are_private(world: HookWorld) -> None:
    world.prompt(1, "news")
    assert handle_hook("claude-code", world.payload(0)) is not None
    assert stat.S_IMODE(world.state.stat().st_mode) == 0o700
    checked = 0
    for path in world.state.rglob("*"):
        mode = stat.S_IMODE(path.lstat().st_mode)
        if path.is_dir():
            assert mode == 0o700, path
        else:
            assert mode == 0o600, path
        checked += 1
    assert checked >= 4  # the cursor file, its lock, the log, the prompt marker


# -- a hostile Redis -------------------------------------------------------------------------------------


class HostileRedis:
    """A tiny server on loopback that answers every command with ``reply`` (an iterator of byte strings,
    each sent after ``pause`` seconds) until the client hangs up or :meth:`close` is called."""

    def __init__(self, reply: Callable[[], Iterator[bytes]], pause: float = 0.0) -> None:
        self.reply = reply
        self.pause = pause
        self.sent = 0
        self.stopping = threading.Event()
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(8)
        self.listener.settimeout(0.05)
        self.url = f"redis://127.0.0.1:{self.listener.getsockname()[1]}/0"
        self.threads = [threading.Thread(target=self._serve, name="hostile-redis", daemon=True)]
        self.threads[0].start()

    def _serve(self) -> None:
        while not self.stopping.is_set():
            try:
                connection, _ = self.listener.accept()
            except OSError:
                continue
            thread = threading.Thread(target=self._answer, args=(connection,), daemon=True)
            self.threads.append(thread)
            thread.start()

    def _answer(self, connection: socket.socket) -> None:
        with connection:
            try:
                connection.recv(65536)  # the command, whatever it is
                for chunk in self.reply():
                    if self.stopping.wait(self.pause) or not chunk:
                        return
                    connection.sendall(chunk)
                    self.sent += len(chunk)
            except OSError:
                return  # the client hung up

    def close(self) -> None:
        self.stopping.set()
        for thread in self.threads:
            thread.join(10)
        self.listener.close()


def _trickle() -> Iterator[bytes]:
    yield b"$100000\r\n"
    while True:
        yield b"x"


def _huge_string() -> Iterator[bytes]:
    yield b"$300000000\r\n"
    chunk = b"x" * 65536
    while True:
        yield chunk


def _endless_array() -> Iterator[bytes]:
    yield b"*1000000000\r\n"
    while True:
        yield b"$1\r\nx\r\n" * 4096


def _nested_arrays() -> Iterator[bytes]:
    while True:
        yield b"*1\r\n" * 4096


HOSTILE_REPLIES = {
    "trickle": (_trickle, 0.05),
    "a 300 MB string": (_huge_string, 0.0),
    "an endless array": (_endless_array, 0.0),
    "arrays nested without end": (_nested_arrays, 0.0),
}


@pytest.mark.parametrize("kind", list(HOSTILE_REPLIES))
def test_a_hostile_redis_costs_a_hook_its_deadline_and_little_memory(
    world: HookWorld, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    """A fleet's Redis that trickles its reply a byte every 50 ms, announces a 300 MB string and sends
    it, or an endless array: the hook gives up on the fleet by its deadline (150 ms a request), keeps
    no more than a little memory, and prints the local siblings' digest."""
    reply, pause = HOSTILE_REPLIES[kind]
    server = HostileRedis(reply, pause)
    monkeypatch.setenv("SIDELIGHT_REDIS_URL", server.url)
    world.prompt(1, "a local sibling's news")
    result: list[str | None] = []
    tracemalloc.start()
    try:
        worker = threading.Thread(target=lambda: result.append(handle_hook("claude-code", world.payload(0))))
        worker.start()
        worker.join(10.0)  # a bound on a hang, not a measure: the deadline is 150 ms
        finished = not worker.is_alive()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        server.close()  # a hook still reading gets the end of the connection
        worker.join(10.0)
    assert finished, f"the hook was still reading after 10 s ({server.sent} bytes sent)"
    assert peak < 32 * 1024 * 1024, peak
    assert result and result[0] is not None
    context = context_of(result[0].encode())
    assert context is not None and "a local sibling's news" in context
    assert "local sessions only" in world.log()
