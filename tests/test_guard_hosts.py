"""The stale-write guard (docs/guard.md) of the hosts beyond the command-hook protocol: GitHub Copilot
CLI's ``preToolUse``, and the before-tool events of sidelight's Pi extension and opencode plugin.

Session A (of the host under test) read ``app.py`` ten minutes ago; a Claude Code session B edited it
two minutes ago; A's write is refused once, with the host's own refusal, and the retry goes through."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from sidelight.config import Settings
from sidelight.features.hook import handle_hook
from tests.test_edit_guard import B, World, collect, iso

COPILOT_A = "cccccccc-0000-4000-8000-000000000000"


def hook(host: str, payload: dict[str, Any], **env: str) -> str | None:
    """What ``sidelight hook HOST`` prints for ``payload``."""
    printed: list[str | None] = []
    settings = Settings.load(env={**os.environ, **env})
    handle_hook(host, json.dumps(payload), settings=settings, deliver=collect(printed))
    assert len(printed) <= 1
    return printed[0] if printed else None


@pytest.fixture
def world(home: Path) -> World:
    w = World(home)
    w.prompt(B, 300)
    return w


def _b_edits(world: World) -> None:
    world.tool(B, 120, "Edit", {"file_path": str(world.app), "old_string": "1", "new_string": "2"})


# --- GitHub Copilot CLI -----------------------------------------------------------------------------------


def _copilot_session(world: World, read: bool = True) -> None:
    """Copilot session A's events file: it started, and (``read``) viewed app.py, ten minutes ago."""
    folder = world.home / ".copilot" / "session-state" / COPILOT_A
    folder.mkdir(parents=True)
    at = iso(world.now - 600)
    lines: list[dict[str, Any]] = [
        {
            "type": "session.start",
            "data": {"sessionId": COPILOT_A, "context": {"cwd": str(world.project)}},
            "timestamp": at,
        },
        {"type": "user.message", "data": {"content": "go", "messageId": "u1"}, "timestamp": at},
    ]
    if read:
        request = {"toolCallId": "call_1", "name": "view", "arguments": {"path": str(world.app)}}
        lines += [
            {
                "type": "assistant.message",
                "data": {"messageId": "m1", "content": "", "toolRequests": [request]},
                "timestamp": at,
            },
            {
                "type": "tool.execution_complete",
                "data": {"toolCallId": "call_1", "success": True, "result": {"content": "a = 1"}},
                "timestamp": iso(world.now - 599),
            },
        ]
    (folder / "events.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))


def _copilot_pre(world: World, tool: str = "edit", args: Any = None) -> dict[str, Any]:
    if args is None:
        args = {"path": str(world.app), "old_str": "a = 1", "new_str": "a = 3"}
    return {
        "sessionId": COPILOT_A,
        "timestamp": int(world.now * 1000),
        "cwd": str(world.project),
        "toolName": tool,
        "toolArgs": args,
    }


def test_copilot_stale_write_refused_once_then_retried(world: World) -> None:
    _copilot_session(world)
    _b_edits(world)
    out = hook("copilot", _copilot_pre(world))
    assert out is not None
    answer = json.loads(out)
    assert set(answer) == {"permissionDecision", "permissionDecisionReason"}
    assert answer["permissionDecision"] == "deny"
    line = answer["permissionDecisionReason"]
    assert line.startswith("sidelight stopped this write once: app.py was edited by claude session bbbbbbbb")
    assert "after this session last read or wrote it" in line
    assert hook("copilot", _copilot_pre(world)) is None  # the retry goes through


def test_copilot_tool_args_as_json_text_and_create(world: World) -> None:
    """Copilot may send ``toolArgs`` as a JSON text; ``create`` is a write too."""
    _copilot_session(world)
    _b_edits(world)
    args = json.dumps({"path": "app.py", "file_text": "a = 3\n"})
    out = hook("copilot", _copilot_pre(world, "create", args))
    assert out is not None and json.loads(out)["permissionDecision"] == "deny"


def test_copilot_other_tools_and_results_are_let_through_at_once(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sidelight.features import guard

    def boom(*args: object, **kwargs: object) -> None:
        raise AssertionError("the guard ran")

    monkeypatch.setattr(guard, "check_write", boom)
    _copilot_session(world)
    _b_edits(world)
    assert hook("copilot", _copilot_pre(world, "bash", {"command": "ls"})) is None
    post = {**_copilot_pre(world), "toolResult": {"resultType": "success", "textResultForLlm": "ok"}}
    assert hook("copilot", post, SIDELIGHT_TURN_NEWS="off") is None  # a result: the news's, not the guard's
    assert hook("copilot", _copilot_pre(world), SIDELIGHT_EDIT_GUARD="off") is None


def test_copilot_bad_input_refuses_nothing(world: World) -> None:
    _copilot_session(world)
    _b_edits(world)
    for args in ("{not json", None, 7, {"path": ""}):
        assert hook("copilot", {**_copilot_pre(world), "toolArgs": args}) is None
    assert hook("copilot", {**_copilot_pre(world), "sessionId": None}) is None
    assert hook("copilot", {**_copilot_pre(world), "sessionId": "../x"}) is None


def test_copilot_inform_notes_it_with_top_level_context(world: World) -> None:
    _copilot_session(world)
    _b_edits(world)
    out = hook("copilot", _copilot_pre(world), SIDELIGHT_EDIT_GUARD="inform")
    assert out is not None
    assert "this write went through" in json.loads(out)["additionalContext"]


def test_copilot_installs_the_guards_hook_and_uninstall_takes_it_away(home: Path) -> None:
    from sidelight.agents import copilot
    from sidelight.agents.copilot import install

    assert {"preToolUse": "|".join(copilot.WRITE_TOOLS)} == install.COPILOT_MATCHERS
    path = home / ".copilot" / "hooks" / "sidelight.json"
    assert install.install_copilot().changed
    hooks = json.loads(path.read_text())["hooks"]
    (pre,) = hooks["preToolUse"]
    assert pre["matcher"] == "create|edit" and pre["bash"].endswith(" hook copilot")
    assert "matcher" not in hooks["userPromptSubmitted"][0]
    assert install.uninstall_copilot().changed
    assert not path.exists()


# --- Pi (sidelight's extension: its tool_call handler sends before_tool) ---------------------------------

PI_A = "01a1fffb-62e4-7073-aed8-e9b7ed9e653b"


def _pi_session(world: World) -> Path:
    """Pi session A's transcript: it read app.py ten minutes ago."""
    from sidelight.agents.pi.paths import pi_encode_cwd

    folder = world.home / ".pi" / "agent" / "sessions" / pi_encode_cwd(str(world.project))
    folder.mkdir(parents=True)
    path = folder / f"2026-11-21T21-20-27-365Z_{PI_A}.jsonl"
    at, done = iso(world.now - 600), iso(world.now - 599)
    call = {"type": "toolCall", "id": "t1", "name": "read", "arguments": {"path": str(world.app)}}
    result = {"role": "toolResult", "toolCallId": "t1", "toolName": "read", "content": [], "isError": False}
    lines = [
        {"type": "session", "version": 3, "id": PI_A, "timestamp": at, "cwd": str(world.project)},
        {"type": "message", "id": "m1", "timestamp": at, "message": {"role": "assistant", "content": [call]}},
        {"type": "message", "id": "m2", "timestamp": done, "message": result},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _pi_before(world: World, path: Path, tool: str = "edit") -> dict[str, Any]:
    edits = [{"oldText": "a = 1", "newText": "a = 3"}]
    return {
        "event": "before_tool",
        "session_file": str(path),
        "session_id": PI_A,
        "cwd": str(world.project),
        "tool_name": tool,
        "tool_input": {"path": "app.py", "edits": edits},
    }


def test_pi_stale_write_blocked_once_then_retried(world: World) -> None:
    path = _pi_session(world)
    _b_edits(world)
    out = hook("pi", _pi_before(world, path))
    assert out is not None
    answer = json.loads(out)
    assert answer["block"] is True
    assert answer["reason"].startswith("sidelight stopped this write once: app.py was edited by claude")
    assert hook("pi", _pi_before(world, path)) is None


def test_pi_note_with_inform_and_nothing_for_other_tools(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _pi_session(world)
    _b_edits(world)
    out = hook("pi", _pi_before(world, path), SIDELIGHT_EDIT_GUARD="inform")
    assert out is not None and out.startswith("sidelight: app.py was edited by claude")
    from sidelight.features import guard

    def boom(*args: object, **kwargs: object) -> None:
        raise AssertionError("the guard ran")

    monkeypatch.setattr(guard, "check_write", boom)
    assert hook("pi", _pi_before(world, path, "bash")) is None
    assert hook("pi", _pi_before(world, path), SIDELIGHT_EDIT_GUARD="off") is None
    assert hook("pi", {**_pi_before(world, path), "tool_name": None}) is None


def test_pi_extension_asks_before_write_tools_only() -> None:
    from sidelight.agents import pi
    from sidelight.agents.pi.install import EXTENSION

    source = EXTENSION.read_text()
    assert 'pi.on("tool_call"' in source and '"before_tool"' in source
    assert f"new Set({json.dumps(list(pi.WRITE_TOOLS))})".replace(", ", ",") in source.replace(", ", ",")
    assert "block: true" in source


# --- opencode (sidelight's plugin: its tool.execute.before sends before_tool, and throws to refuse) ------


def test_opencode_before_tool_reads_a_write_and_refuses_with_block(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sidelight.agents import opencode
    from sidelight.features import guard

    seen: list[Any] = []

    def refuse(event: Any, *args: object, **kwargs: object) -> guard.Verdict:
        seen.append(event)
        return guard.Verdict(True, "sidelight stopped this write once: R", [], str(home / "ledger.json"))

    monkeypatch.setattr(guard, "check_write", refuse)
    payload = {
        "event": "before_tool",
        "session_id": "ses_1",
        "message_id": None,
        "cwd": str(home),
        "prompt": None,
        "tool_name": "write",
        "tool_input": {"filePath": "app.py", "content": "x"},
    }
    out = hook("opencode", payload)
    assert out is not None and json.loads(out) == {
        "block": True,
        "reason": "sidelight stopped this write once: R",
    }
    (event,) = seen
    assert (event.host, event.event, event.session_id) == ("opencode", "PreToolUse", "ses_1")
    assert guard.tool_paths(event.raw["tool_input"]) == ["app.py"]
    seen.clear()
    assert hook("opencode", {**payload, "tool_name": "bash"}) is None
    assert hook("opencode", payload, SIDELIGHT_EDIT_GUARD="off") is None
    assert seen == []
    assert opencode.read_event({**payload, "tool_name": "read"}) is None


def test_opencode_plugin_asks_before_write_tools_and_throws() -> None:
    from sidelight.agents import opencode
    from sidelight.agents.opencode.install import PLUGIN

    source = PLUGIN.read_text()
    assert '"tool.execute.before"' in source and "throw new Error(reason)" in source
    assert f"new Set({json.dumps(list(opencode.WRITE_TOOLS))})".replace(", ", ",") in source.replace(
        ", ", ","
    )
