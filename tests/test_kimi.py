"""Kimi CLI as a built-in agent (docs/hosts-next.md): its sessions listed and grouped by work dir, the
current one told from a hook's ``session_id`` and ``cwd``, the stale-write guard by refusal (the only
thing its host sends the model), and ``sidelight install kimi`` in ``config.toml``, the user's file kept.

Session A (Kimi) read ``app.py`` ten minutes ago; a Claude Code session B edited it two minutes ago; A's
write is refused once with ``permissionDecision: "deny"`` and the retry goes through."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tomllib
from pathlib import Path
from typing import Any

import pytest

import sidelight
from sidelight.agents import kimi
from sidelight.agents.kimi import install
from sidelight.config import Settings
from sidelight.engine.paths import short_id
from sidelight.install.ledger import InstallError
from sidelight.records import HostEvent
from tests.test_edit_guard import B, World
from tests.test_guard_hosts import hook
from tests.test_guard_hosts import world as world  # the fixture: B prompted five minutes ago

DATA = Path(__file__).parent / "data" / "kimi"
KIMI_A = "a1a1a1a1-0000-4000-8000-000000000000"


def _md5(path: Path | str) -> str:
    return hashlib.md5(str(path).encode()).hexdigest()


def _wire(world: World, session: str, events: list[tuple[float, str, dict[str, Any]]]) -> Path:
    """Kimi session ``session``'s wire log in ``world``'s project: ``(seconds ago, type, payload)``."""
    folder = world.home / ".kimi" / "sessions" / _md5(world.project) / session
    folder.mkdir(parents=True, exist_ok=True)
    lines: list[dict[str, Any]] = [{"type": "metadata", "protocol_version": "1.10"}]
    lines += [{"timestamp": world.now - ago, "message": {"type": t, "payload": p}} for ago, t, p in events]
    path = folder / "wire.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    (world.home / ".kimi" / "kimi.json").write_text(
        json.dumps({"work_dirs": [{"path": str(world.project), "kaos": "local", "last_session_id": session}]})
    )
    return path


def _call(ago: float, ident: str, name: str, args: dict[str, Any]) -> list[tuple[float, str, dict[str, Any]]]:
    function = {"name": name, "arguments": json.dumps(args)}
    result = {"tool_call_id": ident, "return_value": {"is_error": False, "output": "ok", "message": ""}}
    return [
        (ago, "ToolCall", {"type": "function", "id": ident, "function": function}),
        (ago - 0.5, "ToolResult", result),
    ]


def _kimi_read_app(world: World) -> Path:
    return _wire(
        world,
        KIMI_A,
        [
            (600, "TurnBegin", {"user_input": "tidy app.py"}),
            (600, "StepBegin", {"n": 1}),
            *_call(599, "call_1", "ReadFile", {"path": str(world.app)}),
        ],
    )


def _pre(world: World, tool: str = "StrReplaceFile", args: Any = None) -> dict[str, Any]:
    if args is None:
        args = {"path": str(world.app), "edit": {"old": "a = 1", "new": "a = 3"}}
    return {
        "hook_event_name": "PreToolUse",
        "session_id": KIMI_A,
        "cwd": str(world.project),
        "tool_name": tool,
        "tool_input": args,
        "tool_call_id": "call_9",
    }


# --- the guard: the one channel Kimi's model hears ------------------------------------------------------


def test_kimi_stale_write_refused_once_then_retried(world: World) -> None:
    _kimi_read_app(world)
    world.tool(B, 120, "Edit", {"file_path": str(world.app), "old_string": "1", "new_string": "2"})
    out = hook("kimi", _pre(world))
    assert out is not None
    decision = json.loads(out)["hookSpecificOutput"]
    assert (decision["hookEventName"], decision["permissionDecision"]) == ("PreToolUse", "deny")
    line = decision["permissionDecisionReason"]
    assert line.startswith("sidelight stopped this write once: app.py was edited by claude session bbbbbbbb")
    assert hook("kimi", _pre(world)) is None  # the retry goes through


def test_kimi_write_after_its_own_read_and_other_tools_go_through(world: World) -> None:
    world.tool(B, 900, "Edit", {"file_path": str(world.app), "old_string": "1", "new_string": "2"})
    _kimi_read_app(world)  # read after B's edit: nothing missed
    assert hook("kimi", _pre(world)) is None
    assert hook("kimi", _pre(world, "WriteFile", {"path": str(world.app), "content": "x"})) is None
    world.tool(B, 60, "Write", {"file_path": str(world.app), "content": "a = 5\n"})
    assert hook("kimi", _pre(world, "Shell", {"command": "ls"})) is None  # not a write tool


@pytest.mark.parametrize(
    "payload",
    [
        {"hook_event_name": "UserPromptSubmit", "session_id": KIMI_A, "cwd": "/p", "prompt": "hi"},
        {"hook_event_name": "PostToolUse", "session_id": KIMI_A, "cwd": "/p", "tool_name": "WriteFile"},
        {"hook_event_name": "PreToolUse", "session_id": KIMI_A, "cwd": "/p", "tool_name": "ReadFile"},
        {"hook_event_name": "SessionStart", "session_id": KIMI_A, "cwd": "/p", "source": "startup"},
        [1],
        "text",
    ],
)
def test_kimi_hears_nothing_but_a_write_refusal(payload: Any) -> None:
    """What Kimi 1.50 never sends the model is not computed (nor marked as told)."""
    assert kimi.read_hook(payload) is None


def test_kimi_bad_input_refuses_nothing(world: World) -> None:
    _kimi_read_app(world)
    world.tool(B, 120, "Edit", {"file_path": str(world.app), "old_string": "1", "new_string": "2"})
    for bad in ({"session_id": None}, {"session_id": "../x"}, {"cwd": None}, {"tool_input": "[broken"}):
        assert hook("kimi", {**_pre(world), **bad}) is None
    assert hook("kimi", "{not json") is None  # type: ignore[arg-type]


# --- the resolver -----------------------------------------------------------------------------------


def test_kimi_sessions_are_listed_grouped_and_named_from_a_hook(world: World) -> None:
    path = _kimi_read_app(world)
    settings = Settings.load()
    (session,) = kimi.list_sessions(settings)
    assert (session.key, session.path, session.format) == (f"kimi:{KIMI_A}", path, "kimi")
    assert session.group == os.path.realpath(world.project)
    event = HostEvent(host="kimi", event="PreToolUse", session_id=KIMI_A, cwd=world.project)
    current = kimi.current(event, settings)
    assert current is not None and (current.key, current.path) == (session.key, path)
    # Another host's event, or one without a work dir, names no Kimi session.
    assert (
        kimi.current(
            HostEvent(host="qwen", event="PreToolUse", session_id=KIMI_A, cwd=world.project), settings
        )
        is None
    )
    assert kimi.current(HostEvent(host="kimi", event="PreToolUse", session_id=KIMI_A), settings) is None


def test_a_folder_kimi_json_does_not_name_is_a_group_of_its_own(home: Path) -> None:
    folder = home / ".kimi" / "sessions" / ("0" * 32) / KIMI_A
    folder.mkdir(parents=True)
    shutil.copy(DATA / "four-tools-resume.jsonl", folder / "wire.jsonl")
    (home / ".kimi" / "kimi.json").write_text("{broken")
    (session,) = kimi.list_sessions(Settings.load())
    assert session.group == "kimi:" + "0" * 32


def test_kimi_share_dir_moves_its_folder(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KIMI_SHARE_DIR", str(tmp_path / "k"))
    assert kimi.sessions_dir(Settings.load()) == tmp_path / "k" / "sessions"
    assert install.install_kimi().path == tmp_path / "k" / "config.toml"


def test_the_wire_log_and_the_context_say_the_same() -> None:
    wire = sidelight.scan(DATA / "four-tools-resume.jsonl")
    context = sidelight.scan(DATA / "four-tools-resume.context.jsonl")
    assert wire.format == context.format == sidelight.Format.KIMI
    assert wire.messages.user == context.messages.user == 2
    assert wire.files_touched == context.files_touched == ("/tmp/sidelight-samples/kimi/project/notes.txt",)
    assert (wire.categories.edit, wire.categories.read, wire.categories.command) == (2, 1, 2)
    assert wire.first_timestamp is not None and context.first_timestamp is None


def test_a_kimi_session_is_in_a_claude_code_siblings_digest(world: World) -> None:
    _wire(
        world,
        KIMI_A,
        [
            (200, "TurnBegin", {"user_input": "write the notes"}),
            (200, "StepBegin", {"n": 1}),
            *_call(199, "call_1", "WriteFile", {"path": str(world.project / "notes.txt"), "content": "n\n"}),
            *_call(198, "call_2", "Shell", {"command": "make test"}),
            (197, "StepBegin", {"n": 2}),
            (197, "ContentPart", {"type": "text", "text": "kimi: notes written"}),
        ],
    )
    payload = {
        "session_id": B,
        "transcript_path": str(world.transcript(B)),
        "cwd": str(world.project),
        "hook_event_name": "UserPromptSubmit",
        "prompt": "what happened?",
    }
    out = hook("claude-code", payload)
    assert out is not None
    digest = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    (line,) = [line for line in digest.splitlines() if line.startswith(f"- kimi {short_id(KIMI_A)}")]
    assert "notes.txt" in line and "make test" in line and "kimi: notes written" in line, digest


# --- the installer ------------------------------------------------------------------------------------

USER_CONFIG = """# my Kimi settings
default_model = "mock"   # the model I use

[providers.mock]
type = "openai_legacy"
base_url = "http://127.0.0.1:1/v1"

# my own hook
[[hooks]]
event = "Stop"
command = "notify-send done"
"""


def test_install_appends_one_table_and_keeps_the_users_file(home: Path) -> None:
    path = home / ".kimi" / "config.toml"
    path.parent.mkdir()
    path.write_text(USER_CONFIG)
    done = install.install_kimi()
    assert done.changed and done.path == path
    text = path.read_text()
    assert text.startswith(USER_CONFIG)  # comments and layout kept
    hooks = tomllib.loads(text)["hooks"]
    assert hooks[0] == {"event": "Stop", "command": "notify-send done"}
    ours = hooks[1]
    assert (ours["event"], ours["matcher"]) == ("PreToolUse", "|".join(kimi.WRITE_TOOLS))
    assert ours["command"].endswith(" hook kimi") and 1 <= ours["timeout"] <= 600
    assert {"PreToolUse": "|".join(kimi.WRITE_TOOLS)} == install.KIMI_MATCHERS
    assert not install.install_kimi().changed  # once
    assert install.uninstall_kimi().changed
    assert path.read_text() == USER_CONFIG
    assert not install.uninstall_kimi().changed


def test_uninstall_after_the_user_edited_takes_out_only_ours(home: Path) -> None:
    path = home / ".kimi" / "config.toml"
    path.parent.mkdir()
    path.write_text(USER_CONFIG)
    install.install_kimi()
    path.write_text(path.read_text() + '\n[[hooks]]\nevent = "SessionEnd"\ncommand = "echo bye"\n')
    done = install.uninstall_kimi()
    assert done.changed and done.backup is not None
    text = path.read_text()
    assert "hook kimi" not in text and install.MARK not in text
    assert text.startswith(USER_CONFIG)
    assert [h["event"] for h in tomllib.loads(text)["hooks"]] == ["Stop", "SessionEnd"]


def test_install_into_no_file_and_uninstall_removes_it(home: Path) -> None:
    path = home / ".kimi" / "config.toml"
    assert install.install_kimi().changed and path.is_file()
    assert install.uninstall_kimi().changed
    assert not path.exists() and not path.parent.exists()


@pytest.mark.parametrize("text", ["hooks = [1, 2]\n", "not = [valid\n"])
def test_install_changes_nothing_it_cannot_edit_safely(home: Path, text: str) -> None:
    path = home / ".kimi" / "config.toml"
    path.parent.mkdir()
    path.write_text(text)
    with pytest.raises(InstallError, match=str(path)):
        install.install_kimi()
    assert path.read_text() == text
