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
import stat
import subprocess
import unicodedata
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


# -- file names that are not UTF-8 (issue 19, item 2) ---------------------------------------------------

#: A name's bytes that are not UTF-8: Python lists them as lone surrogates (``surrogateescape``).
BAD = b"\xff\xfe"


def _write_bytes_path(path: bytes, text: str) -> None:
    # A name of bytes, as the file system has it: os functions take bytes, pathlib does not.
    os.makedirs(os.path.dirname(path), exist_ok=True)  # noqa: PTH103, PTH120
    with open(path, "wb") as file:  # noqa: PTH123
        file.write(text.encode())


def not_utf8_names(world: HookWorld) -> list[bytes]:
    """Files whose names are not UTF-8 under each agent's root, as siblings of the world's sessions
    (same project), as subagent files of the current session and of a sibling, and in folders whose own
    names are not UTF-8. Returns their paths."""
    claude = os.fsencode(world.folder)
    project = str(world.project.resolve())
    claude_line = world.line(2, "from a file with a bad name")
    codex_day = os.fsencode(world.home / ".codex" / "sessions" / "2027" / "01" / "15")
    codex_line = json.dumps({"type": "session_meta", "payload": {"id": "c0dec", "cwd": project}}) + "\n"
    pi_root = world.home / ".pi" / "agent" / "sessions"
    pi_folder = os.fsencode(pi_root / ("--" + project.strip("/").replace("/", "-") + "--"))
    pi_line = json.dumps({"type": "session", "version": 3, "id": "p1", "cwd": project}) + "\n"
    files = {
        claude + b"/bad" + BAD + b".jsonl": claude_line,  # a sibling in the same project
        claude + b"/" + session_id(0).encode() + b"/subagents/agent-" + BAD + b".jsonl": claude_line,
        claude + b"/" + session_id(1).encode() + b"/subagents/agent-" + BAD + b".jsonl": claude_line,
        claude + b"/agent-" + BAD + b".jsonl": world.line(1, "an old-layout subagent file"),
        os.fsencode(world.home / ".claude" / "projects")
        + b"/-bad"
        + BAD
        + b"/"
        + session_id(7).encode()
        + b".jsonl": claude_line,
        codex_day + b"/rollout-2027-01-15T07-57-00-" + BAD + b".jsonl": codex_line,
        codex_day
        + b"/../"
        + BAD
        + b"/rollout-2027-01-15T07-57-00-"
        + session_id(8).encode()
        + b".jsonl": codex_line,
        pi_folder + b"/2027-01-15T07-57-00-000Z_" + BAD + b".jsonl": pi_line,
        os.fsencode(pi_root)
        + b"/--bad"
        + BAD
        + b"--/2027-01-15T07-57-00-000Z_"
        + session_id(9).encode()
        + b".jsonl": pi_line,
    }
    for path, text in files.items():
        _write_bytes_path(path, text)
    return list(files)


@pytest.fixture
def bad_names(world: HookWorld) -> list[bytes]:
    return not_utf8_names(world)


def test_file_names_that_are_not_utf8_are_left_out_of_the_listing(
    world: HookWorld, bad_names: list[bytes], caplog: pytest.LogCaptureFixture
) -> None:
    from sidelight.config import Settings
    from sidelight.discovery import list_sessions
    from sidelight.plugins import get_plugins

    caplog.set_level("INFO", logger="sidelight")
    sessions = list_sessions(Settings.load(), get_plugins())
    keys = {s.key for s in sessions}
    assert {f"claude-code:{session_id(n)}" for n in range(2)} <= keys
    for session in sessions:
        for path in (session.path, *session.extra_paths):
            os.fspath(path).encode()  # every path listed can be given to the native core
    said = [r.getMessage() for r in caplog.records if "not UTF-8" in r.getMessage()]
    # One line per file the listing met (a bad folder hides its files from the resolvers before that).
    assert len(said) == len(set(said)) >= 6
    assert all("\\xff\\xfe" in line for line in said)


def test_a_hook_beside_file_names_that_are_not_utf8_reports_the_healthy_siblings(
    world: HookWorld, bad_names: list[bytes]
) -> None:
    world.prompt(1, "healthy news")
    done = world.run_hook(0)
    assert done.returncode == 0 and done.stderr == b""
    context = context_of(done.stdout)
    assert context is not None and "healthy news" in context
    assert "\\xff\\xfe" in world.log()


@pytest.mark.parametrize(
    "args",
    [("status",), ("status", "--json"), ("sessions",), ("sessions", "--json"), ("read", session_id(1))],
    ids=" ".join,
)
def test_commands_beside_file_names_that_are_not_utf8(
    world: HookWorld, bad_names: list[bytes], args: tuple[str, ...]
) -> None:
    done = run_cli(world, *args)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "codec" not in done.stderr
    if "--json" in args:
        for line in done.stdout.splitlines():
            json.loads(line)


@pytest.mark.parametrize("command", ["read", "scan", "recap", "history"])
def test_a_path_argument_that_is_not_utf8_gets_one_clear_line(tmp_path: Path, command: str) -> None:
    path = os.fsencode(tmp_path) + b"/t" + BAD + b".jsonl"
    _write_bytes_path(path, '{"type":"user","message":{"role":"user","content":"hi"}}\n')
    done = subprocess.run(
        [*cli_command(), command, os.fsdecode(path)], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and "not UTF-8" in done.stderr and "\\xff\\xfe" in done.stderr


def test_the_watcher_beside_file_names_that_are_not_utf8(world: HookWorld, bad_names: list[bytes]) -> None:
    from tests.support.watching import answered, start_serving, stop

    watcher = start_serving([*cli_command(), "watch"], world.env(), world.project, world.state)
    try:
        world.prompt(1, "news the watcher tells")
        done = world.run_hook(0)
        assert done.returncode == 0 and done.stderr == b""
        context = context_of(done.stdout)
        assert context is not None and "news the watcher tells" in context
        assert answered(world.state, 1) >= 1  # the watcher answered it, not the hook in-process
        assert watcher.poll() is None
    finally:
        errors = stop(watcher).decode(errors="replace")
    assert watcher.returncode == 0, errors
    assert "Traceback" not in errors and "\\xff\\xfe" in errors
