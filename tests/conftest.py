"""Shared fixtures: small transcripts in each format with known counts, the shared corpus, the CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: Real Pi sessions (pi-mono's test fixtures, MIT: the LICENSE beside them), kept in the repository.
PI_CORPUS = Path(__file__).resolve().parent / "data" / "pi-mono"

_CC = {"sessionId": "cc-1", "cwd": "/tmp/proj", "version": "2.1.14", "userType": "external"}


def _cc_user(content: Any, ts: str, uuid: str) -> dict[str, Any]:
    return {
        "parentUuid": None,
        "isSidechain": False,
        **_CC,
        "type": "user",
        "message": {"role": "user", "content": content},
        "uuid": uuid,
        "timestamp": ts,
    }


def _cc_assistant(message_id: str, block: dict[str, Any], ts: str, uuid: str) -> dict[str, Any]:
    return {
        "parentUuid": None,
        "isSidechain": False,
        **_CC,
        "type": "assistant",
        "message": {
            "id": message_id,
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "content": [block],
            "stop_reason": None,
        },
        "requestId": f"req_{message_id}",
        "uuid": uuid,
        "timestamp": ts,
    }


def _tool_result(tool_use_id: str, ts: str, uuid: str) -> dict[str, Any]:
    block = {"type": "tool_result", "tool_use_id": tool_use_id, "content": "ok", "is_error": False}
    return _cc_user([block], ts, uuid)


#: A short Claude Code session: one prompt, four responses (the first spread over two lines).
CLAUDE_CODE: list[dict[str, Any]] = [
    _cc_user("Fix the failing test", "2026-01-01T10:00:00.000Z", "u1"),
    _cc_assistant("msg_1", {"type": "text", "text": "Let me look."}, "2026-01-01T10:00:01.000Z", "a1"),
    _cc_assistant(
        "msg_1",
        {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "/tmp/proj/test_x.py"}},
        "2026-01-01T10:00:02.000Z",
        "a2",
    ),
    _tool_result("toolu_1", "2026-01-01T10:00:03.000Z", "u2"),
    _cc_assistant(
        "msg_2",
        {
            "type": "tool_use",
            "id": "toolu_2",
            "name": "Edit",
            "input": {"file_path": "/tmp/proj/x.py", "old_string": "a", "new_string": "b"},
        },
        "2026-01-01T10:00:04.000Z",
        "a3",
    ),
    _tool_result("toolu_2", "2026-01-01T10:00:05.000Z", "u3"),
    _cc_assistant(
        "msg_3",
        {"type": "tool_use", "id": "toolu_3", "name": "Bash", "input": {"command": "pytest -q"}},
        "2026-01-01T10:00:06.000Z",
        "a4",
    ),
    _tool_result("toolu_3", "2026-01-01T10:00:07.000Z", "u4"),
    _cc_assistant(
        "msg_4", {"type": "text", "text": "Fixed: the test passes now."}, "2026-01-01T10:00:08.000Z", "a5"
    ),
]


def _pi_message(entry_id: str, parent: str | None, ts: str, message: dict[str, Any]) -> dict[str, Any]:
    return {"type": "message", "id": entry_id, "parentId": parent, "timestamp": ts, "message": message}


def _pi_assistant(content: list[dict[str, Any]], stop: str = "toolUse") -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": content,
        "api": "anthropic-messages",
        "provider": "mock",
        "model": "mock-1",
        "stopReason": stop,
        "timestamp": 1767261600000,
    }


def _pi_result(call_id: str, tool: str) -> dict[str, Any]:
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": tool,
        "content": [{"type": "text", "text": "ok"}],
        "isError": False,
        "timestamp": 1767261600000,
    }


#: A short Pi session: header, one prompt, three responses, and one of our own injected digests.
PI: list[dict[str, Any]] = [
    {
        "type": "session",
        "version": 3,
        "id": "pi-1",
        "timestamp": "2026-01-01T10:00:00.000Z",
        "cwd": "/tmp/proj",
    },
    _pi_message(
        "e1",
        None,
        "2026-01-01T10:00:01.000Z",
        {"role": "user", "content": [{"type": "text", "text": "List the files"}], "timestamp": 1767261600000},
    ),
    {
        "type": "custom_message",
        "customType": "session-update",
        "content": "[Session Activity] another session edited 3 files",
        "display": True,
        "id": "e2",
        "parentId": "e1",
        "timestamp": "2026-01-01T10:00:01.500Z",
    },
    _pi_message(
        "e3",
        "e2",
        "2026-01-01T10:00:02.000Z",
        _pi_assistant(
            [
                {"type": "text", "text": "Listing."},
                {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "ls"}},
            ]
        ),
    ),
    _pi_message("e4", "e3", "2026-01-01T10:00:03.000Z", _pi_result("c1", "bash")),
    _pi_message(
        "e5",
        "e4",
        "2026-01-01T10:00:04.000Z",
        _pi_assistant(
            [
                {
                    "type": "toolCall",
                    "id": "c2",
                    "name": "write",
                    "arguments": {"path": "/tmp/proj/b.py", "content": "x"},
                }
            ]
        ),
    ),
    _pi_message("e6", "e5", "2026-01-01T10:00:05.000Z", _pi_result("c2", "write")),
    _pi_message(
        "e7", "e6", "2026-01-01T10:00:06.000Z", _pi_assistant([{"type": "text", "text": "Done."}], "stop")
    ),
]


def _codex(ts: str, kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": ts, "type": kind, "payload": payload}


PATCH = "*** Begin Patch\n*** Update File: src/app.py\n@@\n-a = 1\n+a = 2\n*** End Patch\n"

#: A short Codex rollout: instructions, one prompt, a shell call, a patch and one answer.
CODEX: list[dict[str, Any]] = [
    _codex(
        "2026-01-01T10:00:00.000Z",
        "session_meta",
        {
            "id": "cx-1",
            "timestamp": "2026-01-01T10:00:00.000Z",
            "cwd": "/tmp/proj",
            "originator": "codex_exec",
            "cli_version": "0.169.0",
        },
    ),
    _codex(
        "2026-01-01T10:00:00.100Z",
        "response_item",
        {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "be brief"}]},
    ),
    _codex(
        "2026-01-01T10:00:01.000Z",
        "response_item",
        {
            "type": "message",
            "role": "user",
            "content": [
                {
                    "type": "input_text",
                    "text": "<environment_context>\n  <cwd>/tmp/proj</cwd>\n</environment_context>",
                },
                {"type": "input_text", "text": "Run the tests"},
            ],
        },
    ),
    _codex(
        "2026-01-01T10:00:02.000Z",
        "response_item",
        {
            "type": "function_call",
            "name": "exec_command",
            "arguments": '{"cmd":"pytest -q"}',
            "call_id": "k1",
        },
    ),
    _codex(
        "2026-01-01T10:00:03.000Z",
        "response_item",
        {"type": "function_call_output", "call_id": "k1", "output": "1 passed"},
    ),
    _codex(
        "2026-01-01T10:00:04.000Z",
        "response_item",
        {"type": "custom_tool_call", "name": "apply_patch", "input": PATCH, "call_id": "k2"},
    ),
    _codex(
        "2026-01-01T10:00:05.000Z",
        "response_item",
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "All green."}]},
    ),
    _codex("2026-01-01T10:00:06.000Z", "event_msg", {"type": "token_count", "info": None}),
]

SAMPLES: dict[str, list[dict[str, Any]]] = {"claude-code": CLAUDE_CODE, "pi": PI, "codex": CODEX}

#: What a scan of each sample from the start must count.
EXPECTED: dict[str, dict[str, Any]] = {
    "claude-code": {
        "messages": {"user": 1, "assistant": 4},
        "tools": {"Read": 1, "Edit": 1, "Bash": 1},
        "categories": {"edit": 1, "read": 1, "command": 1, "other": 0},
        "files_touched": ["/tmp/proj/x.py"],
        "first_user_text": "Fix the failing test",
        "last_assistant_text": "Fixed: the test passes now.",
        "first_timestamp": "2026-01-01T10:00:00.000Z",
        "last_timestamp": "2026-01-01T10:00:08.000Z",
        "session_id": "cc-1",
        "cwd": "/tmp/proj",
    },
    "pi": {
        "messages": {"user": 1, "assistant": 3},
        "tools": {"bash": 1, "write": 1},
        "categories": {"edit": 1, "read": 0, "command": 1, "other": 0},
        "files_touched": ["/tmp/proj/b.py"],
        "first_user_text": "List the files",
        "last_assistant_text": "Done.",
        "first_timestamp": "2026-01-01T10:00:01.000Z",
        "last_timestamp": "2026-01-01T10:00:06.000Z",
        "session_id": "pi-1",
        "cwd": "/tmp/proj",
    },
    "codex": {
        "messages": {"user": 1, "assistant": 1},
        "tools": {"exec_command": 1, "apply_patch": 1},
        "categories": {"edit": 1, "read": 0, "command": 1, "other": 0},
        "files_touched": ["src/app.py"],
        "first_user_text": "Run the tests",
        "last_assistant_text": "All green.",
        "first_timestamp": "2026-01-01T10:00:01.000Z",  # the prompt: the developer message is not counted
        "last_timestamp": "2026-01-01T10:00:05.000Z",
        "session_id": "cx-1",
        "cwd": "/tmp/proj",
    },
}


def jsonl(records: list[dict[str, Any]]) -> str:
    """Compact JSON lines, as the agent CLIs write them."""
    return "".join(json.dumps(record, separators=(",", ":")) + "\n" for record in records)


@pytest.fixture
def write_sample(tmp_path: Path):
    """``write_sample(format, name=None) -> Path``: one of the samples above, written to ``tmp_path``."""

    def write(fmt: str, name: str | None = None) -> Path:
        path = tmp_path / (name or f"{fmt}.jsonl")
        path.write_text(jsonl(SAMPLES[fmt]), encoding="utf-8")
        return path

    return write


@pytest.fixture
def pi_corpus() -> Path:
    """The real Pi sessions (pi-mono test fixtures, MIT) in ``tests/data/pi-mono``."""
    return PI_CORPUS


def cli_command() -> list[str]:
    """The installed ``sidelight`` console script beside this interpreter, else ``python -m sidelight``."""
    script = Path(sys.executable).with_name("sidelight")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "sidelight"]


def claude_prompt_context(transcript: Path, cwd: str, env: dict[str, str]) -> str:
    """What ``sidelight hook claude-code`` (a process, as Claude Code runs it) adds to a prompt of the
    session of ``transcript`` in ``cwd``: its ``additionalContext`` (``""``: nothing)."""
    event = {
        "session_id": transcript.stem,
        "transcript_path": str(transcript),
        "cwd": cwd,
        "hook_event_name": "UserPromptSubmit",
        "prompt": "what changed?",
    }
    done = subprocess.run(
        [*cli_command(), "hook", "claude-code"],
        input=json.dumps(event),
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    if not done.stdout.strip():
        return ""
    return str(json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"])


@pytest.fixture
def run_cli():
    """``run_cli(*args, env={...}) -> CompletedProcess``: run the CLI in a subprocess, text output."""

    def run(
        *args: str | os.PathLike[str], env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        full_env = {key: value for key, value in os.environ.items() if not key.startswith("SIDELIGHT_")}
        full_env["COLUMNS"] = "100"
        # A CI that sets FORCE_COLOR (many do) would colour every output the tests read.
        full_env.pop("FORCE_COLOR", None)
        full_env.update(env or {})
        return subprocess.run(
            [*cli_command(), *map(str, args)],
            capture_output=True,
            text=True,
            env=full_env,
            stdin=subprocess.DEVNULL,
            timeout=120,
            check=False,
        )

    return run


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A throwaway HOME with the state directory inside; the real one is never touched."""
    home = tmp_path / "home"
    home.mkdir()
    for name in list(os.environ):
        if name.startswith("SIDELIGHT_") or name in (
            "CLAUDE_CONFIG_DIR",
            "PI_CODING_AGENT_DIR",
            "CODEX_HOME",
            "QWEN_HOME",
            "COPILOT_HOME",
            "CLINE_DIR",
            "CLINE_DATA_DIR",
        ):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("SIDELIGHT_STATE_DIR", str(home / "state"))
    return home


# -- waiting on threads ------------------------------------------------------------------------------------


def wait_for(predicate: Callable[[], Any], timeout: float = 20.0, what: str = "the condition") -> Any:
    """Poll ``predicate`` until it returns something true; fail with ``what`` after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(0.02)


def threads_joined(before: set[threading.Thread], timeout: float = 5.0) -> None:
    """Every thread started since ``before`` was taken ends within ``timeout``: nothing is left behind."""
    deadline = time.monotonic() + timeout
    while True:
        left = [t for t in threading.enumerate() if t not in before and t.is_alive()]
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.02)
    assert not left, f"threads left behind: {[t.name for t in left]}"
