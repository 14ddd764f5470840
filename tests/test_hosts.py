"""The host side: injectors' read/render for each host, `sidelight hook HOST`, the Agent SDK callback.

The hook is run as a host runs it (a subprocess with JSON on stdin, a throwaway HOME) to check its one
promise: whatever the input, it exits 0 and prints either the host's JSON or nothing.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from sidelight import hostio
from sidelight.agents import BUILTIN_AGENTS
from sidelight.agents import pi as pi_agent
from sidelight.cli import hooks as cli_hooks
from sidelight.hookspecs import hookimpl
from sidelight.plugins import Plugins
from sidelight.records import HostEvent
from tests.conftest import cli_command

CLAUDE_PROMPT = {
    "session_id": "2f1c9a4e-0b7d-4c55-9a43-6f0e8b1d2c3a",
    "transcript_path": "/home/u/.claude/projects/-tmp-proj/2f1c9a4e-0b7d-4c55-9a43-6f0e8b1d2c3a.jsonl",
    "cwd": "/tmp/proj",
    "prompt_id": "p1",
    "permission_mode": "bypassPermissions",
    "hook_event_name": "UserPromptSubmit",
    "prompt": "what did the others do?",
}
CODEX_PROMPT = {
    "session_id": "019a2b3c-4d5e-7f60-8a9b-0c1d2e3f4a5b",
    "turn_id": "t1",
    "transcript_path": "/home/u/.codex/sessions/2026/11/21/"
    "rollout-2026-11-21T10-00-00-019a2b3c-4d5e-7f60-8a9b-0c1d2e3f4a5b.jsonl",
    "cwd": "/tmp/proj",
    "hook_event_name": "UserPromptSubmit",
    "model": "gpt-5.5",
    "permission_mode": "bypassPermissions",
    "prompt": "hi",
}
PI_DIR = "/home/u/.pi/agent/sessions/--tmp-proj--"
PI_FILE = f"{PI_DIR}/2026-11-21T10-00-00-000Z_019a2b3c-1111-7222-8333-944455566677.jsonl"


#: The built-in agents with an injector (each in its agent's folder).
INJECTING = [agent.module for agent in BUILTIN_AGENTS if "injectors" in agent.provides]


@pytest.fixture
def injectors() -> dict[str, Any]:
    return dict(Plugins(builtins=INJECTING, entry_points=False).injectors())


# ---------------------------------------------------------------------------------------------------
# Injectors


def test_builtin_injectors_are_registered(injectors: dict[str, Any]) -> None:
    assert set(injectors) == {
        "claude-code",
        "codex",
        "pi",
        "qwen",
        "copilot",
        "agent-sdk",
        "gemini",
        "opencode",
        "droid",
        "kimi",
        "cline",
    }
    assert all(spec.description for spec in injectors.values())


@pytest.mark.parametrize("host", ["claude-code", "agent-sdk"])
def test_claude_code_reads_its_hook_input(injectors: dict[str, Any], host: str) -> None:
    event = injectors[host].read_event(CLAUDE_PROMPT)
    assert event == HostEvent(
        host=host,
        event="UserPromptSubmit",
        session_id=CLAUDE_PROMPT["session_id"],
        transcript_path=Path(CLAUDE_PROMPT["transcript_path"]),
        cwd=Path("/tmp/proj"),
        prompt="what did the others do?",
        raw=CLAUDE_PROMPT,
    )


@pytest.mark.parametrize("source", ["startup", "resume"])
def test_claude_code_session_start_and_end(injectors: dict[str, Any], source: str) -> None:
    start = {k: CLAUDE_PROMPT[k] for k in ("session_id", "transcript_path", "cwd")}
    event = injectors["claude-code"].read_event(
        {**start, "hook_event_name": "SessionStart", "source": source}
    )
    assert event.event == "SessionStart" and event.prompt is None and event.raw["source"] == source
    end = injectors["claude-code"].read_event({**start, "hook_event_name": "SessionEnd", "reason": "exit"})
    assert end.event == "SessionEnd" and end.session_id == CLAUDE_PROMPT["session_id"]


def test_codex_reads_its_hook_input(injectors: dict[str, Any]) -> None:
    event = injectors["codex"].read_event(CODEX_PROMPT)
    assert event.host == "codex" and event.event == "UserPromptSubmit"
    assert event.session_id == CODEX_PROMPT["session_id"]
    assert event.transcript_path == Path(CODEX_PROMPT["transcript_path"])
    assert event.cwd == Path("/tmp/proj") and event.prompt == "hi"


@pytest.mark.parametrize("host", ["claude-code", "codex", "agent-sdk"])
@pytest.mark.parametrize(
    "payload",
    [
        {},
        {"hook_event_name": "PreToolUse", "session_id": "x"},
        {"hook_event_name": "Stop"},
        {"hook_event_name": 3},
        {"event": "before_agent_start"},  # Pi's shape is not Claude Code's
    ],
)
def test_command_hooks_ignore_other_events(
    injectors: dict[str, Any], host: str, payload: dict[str, Any]
) -> None:
    assert injectors[host].read_event(payload) is None


def test_command_hooks_tolerate_odd_fields(injectors: dict[str, Any]) -> None:
    event = injectors["claude-code"].read_event(
        {
            "hook_event_name": "UserPromptSubmit",
            "session_id": 7,
            "transcript_path": None,
            "cwd": "",
            "prompt": ["x"],
        }
    )
    assert event == HostEvent(host="claude-code", event="UserPromptSubmit", raw=event.raw)


@pytest.mark.parametrize("host", ["claude-code", "codex", "agent-sdk"])
@pytest.mark.parametrize("kind", ["UserPromptSubmit", "SessionStart"])
def test_command_hooks_render_hook_specific_output(injectors: dict[str, Any], host: str, kind: str) -> None:
    event = HostEvent(host=host, event=kind)  # type: ignore[arg-type]
    text = '[Session Activity]\n- discord (3m ago, 4 messages): "déploy?" -> ran 3 commands'
    rendered = injectors[host].render(event, text)
    assert json.loads(rendered) == {"hookSpecificOutput": {"hookEventName": kind, "additionalContext": text}}
    assert injectors[host].render(event, None) is None


@pytest.mark.parametrize(
    ("sent", "expected"),
    [
        ("before_agent_start", "UserPromptSubmit"),
        ("session_start", "SessionStart"),
        ("session_shutdown", "SessionEnd"),
    ],
)
def test_pi_reads_what_the_extension_sends(injectors: dict[str, Any], sent: str, expected: str) -> None:
    payload = {
        "event": sent,
        "session_file": PI_FILE,
        "session_id": None,
        "cwd": "/tmp/proj",
        "prompt": "hello",
    }
    event = injectors["pi"].read_event(payload)
    assert event.host == "pi" and event.event == expected
    assert event.transcript_path == Path(PI_FILE) and event.cwd == Path("/tmp/proj")
    assert event.session_id == "019a2b3c-1111-7222-8333-944455566677"  # from the file name
    assert event.prompt == "hello"


def test_pi_prefers_the_session_id_it_is_given(injectors: dict[str, Any]) -> None:
    payload = {"event": "before_agent_start", "session_file": PI_FILE, "session_id": "abc", "cwd": "/p"}
    assert injectors["pi"].read_event(payload).session_id == "abc"
    no_file = injectors["pi"].read_event({"event": "before_agent_start", "session_file": None, "cwd": "/p"})
    assert no_file.transcript_path is None and no_file.session_id is None


@pytest.mark.parametrize("payload", [{}, {"event": "agent_end"}, CLAUDE_PROMPT])
def test_pi_ignores_other_input(injectors: dict[str, Any], payload: dict[str, Any]) -> None:
    assert injectors["pi"].read_event(payload) is None


def test_pi_renders_plain_text(injectors: dict[str, Any]) -> None:
    event = HostEvent(host="pi", event="UserPromptSubmit")
    assert injectors["pi"].render(event, "[Session Activity]\n- a") == "[Session Activity]\n- a"
    assert injectors["pi"].render(event, None) is None
    assert injectors["pi"].render(event, "") is None


def test_non_mapping_payloads_are_refused() -> None:
    assert hostio.read_command_hook("claude-code", ["not", "a", "dict"]) is None  # type: ignore[arg-type]
    assert pi_agent.read_event("text") is None  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------------
# `sidelight hook HOST`, in process (the orchestrator replaced by a stub)


@pytest.fixture
def fake_updates(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> dict[str, Any]:
    """Replaces ``sidelight.features.hook`` with a stub whose ``handle_hook`` does what ``state`` says."""
    state: dict[str, Any] = {"output": None, "raise": None, "calls": []}

    def handle_hook(host: str, payload: Any, **kwargs: Any) -> str | None:
        state["calls"].append((host, payload))
        if state["raise"] is not None:
            raise state["raise"]
        out: str | None = state["output"]
        deliver = kwargs.get("deliver")
        if deliver is not None:  # the hook's answer is written out before anything moves
            deliver(out)
        return out

    module = types.ModuleType("sidelight.features.hook")
    module.handle_hook = handle_hook  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "sidelight.features.hook", module)
    monkeypatch.setenv("SIDELIGHT_STATE_DIR", str(tmp_path / "state"))
    return state


def _run_hook(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], argv: list[str], stdin: bytes
) -> tuple[int, str]:
    class Stdin:
        buffer = types.SimpleNamespace(read=lambda: stdin)

    monkeypatch.setattr(sys, "stdin", Stdin)
    code = cli_hooks.run_hook(argv)
    return code, capsys.readouterr().out


def test_hook_prints_what_the_orchestrator_returns(
    fake_updates: dict[str, Any], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_updates["output"] = '{"hookSpecificOutput": {}}'
    code, out = _run_hook(monkeypatch, capsys, ["claude-code"], b'{"a": 1}')
    assert (code, out) == (0, '{"hookSpecificOutput": {}}\n')
    assert fake_updates["calls"] == [("claude-code", b'{"a": 1}')]


def test_hook_prints_nothing_when_nothing_is_new(
    fake_updates: dict[str, Any], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run_hook(monkeypatch, capsys, ["pi"], b"{}") == (0, "")


@pytest.mark.parametrize("error", [RuntimeError("boom"), KeyboardInterrupt(), SystemExit(3), MemoryError()])
def test_hook_swallows_internal_errors_and_logs_them(
    fake_updates: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    error: BaseException,
) -> None:
    fake_updates["raise"] = error
    assert _run_hook(monkeypatch, capsys, ["claude-code"], b"{}") == (0, "")
    log = (tmp_path / "state" / "sidelight.log").read_text()
    assert "hook claude-code" in log and type(error).__name__ in log


def test_hook_without_host_logs_and_exits_0(
    fake_updates: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    assert _run_hook(monkeypatch, capsys, [], b"{}") == (0, "")
    assert _run_hook(monkeypatch, capsys, ["a", "b"], b"{}") == (0, "")
    assert fake_updates["calls"] == []
    assert "expected one HOST" in (tmp_path / "state" / "sidelight.log").read_text()


def test_hook_fast_path_skips_the_parser(
    fake_updates: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    from sidelight import cli

    def no_parser() -> None:
        raise AssertionError("the hook must not build the argument parser")

    monkeypatch.setattr(cli, "build_parser", no_parser)
    monkeypatch.setattr(cli_hooks, "run_hook", lambda argv: 0 if argv == ["codex"] else 9)
    assert cli.main(["hook", "codex"]) == 0


# ---------------------------------------------------------------------------------------------------
# `sidelight hook HOST` as a host runs it: a subprocess, a throwaway HOME


def run_hook_process(home: Path, host: str, stdin: bytes, *extra: str) -> subprocess.CompletedProcess[bytes]:
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("SIDELIGHT_", "CLAUDE_", "CODEX_", "PI_"))
    }
    env["HOME"] = str(home)
    env.pop("XDG_STATE_HOME", None)
    return subprocess.run(
        [*cli_command(), "hook", host, *extra],
        input=stdin,
        capture_output=True,
        env=env,
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize(
    ("host", "stdin"),
    [
        ("claude-code", b"not json at all"),
        ("claude-code", b"\xff\xfe\x00garbage"),
        ("claude-code", b""),
        ("claude-code", b"[1, 2, 3]"),
        ("codex", b'{"hook_event_name": "UserPromptSubmit"}'),
        (
            "pi",
            b'{"event": "before_agent_start", "session_file": "/nonexistent/x.jsonl", "cwd": "/nonexistent"}',
        ),
        ("no-such-host", json.dumps(CLAUDE_PROMPT).encode()),
    ],
)
def test_hook_process_always_exits_0_and_prints_nothing_usable_but_wrong(
    tmp_path: Path, host: str, stdin: bytes
) -> None:
    done = run_hook_process(tmp_path, host, stdin)
    assert done.returncode == 0, done.stderr
    assert done.stdout == b""
    assert b"Traceback" not in done.stderr


def test_hook_process_unknown_host_is_logged(tmp_path: Path) -> None:
    done = run_hook_process(tmp_path, "no-such-host", json.dumps(CLAUDE_PROMPT).encode())
    assert (done.returncode, done.stdout) == (0, b"")
    log = tmp_path / ".local" / "state" / "sidelight" / "sidelight.log"
    assert log.is_file() and "no-such-host" in log.read_text()


def test_hook_process_prints_nothing_for_a_lone_session(tmp_path: Path) -> None:
    """A real Claude Code session with no sibling: nothing is new, nothing is printed."""
    project = tmp_path / "proj"
    project.mkdir()
    transcripts = tmp_path / ".claude" / "projects" / ("-" + str(project).strip("/").replace("/", "-"))
    transcripts.mkdir(parents=True)
    sid = "2f1c9a4e-0b7d-4c55-9a43-6f0e8b1d2c3a"
    transcript = transcripts / f"{sid}.jsonl"
    line = {
        "type": "user",
        "message": {"role": "user", "content": "hi"},
        "sessionId": sid,
        "cwd": str(project),
    }
    transcript.write_text(json.dumps(line) + "\n")
    payload = {**CLAUDE_PROMPT, "session_id": sid, "transcript_path": str(transcript), "cwd": str(project)}
    for _ in range(2):
        done = run_hook_process(tmp_path, "claude-code", json.dumps(payload).encode())
        assert (done.returncode, done.stdout) == (0, b""), done.stderr


def test_hook_help_exits_0(tmp_path: Path) -> None:
    done = run_hook_process(tmp_path, "--help", b"")
    assert done.returncode == 0 and b"usage: sidelight hook [-h] HOST" in done.stdout


# ---------------------------------------------------------------------------------------------------
# The Agent SDK callback (the real claude-agent-sdk run is in tests/e2e/test_awareness_agent_sdk.py)


def test_agent_sdk_callback_returns_the_hook_output(fake_updates: dict[str, Any]) -> None:
    from sidelight.integrations.agent_sdk import session_context_hook

    output = {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "news"}}
    fake_updates["output"] = json.dumps(output)
    assert asyncio.run(session_context_hook(CLAUDE_PROMPT, None, {"signal": None})) == output
    assert fake_updates["calls"] == [("agent-sdk", CLAUDE_PROMPT)]


@pytest.mark.parametrize("output", [None, "", "[1]"])
def test_agent_sdk_callback_returns_empty_without_news(
    fake_updates: dict[str, Any], output: str | None
) -> None:
    from sidelight.integrations.agent_sdk import session_context_hook

    fake_updates["output"] = output
    assert asyncio.run(session_context_hook(CLAUDE_PROMPT, None, None)) == {}


def test_agent_sdk_callback_never_raises(fake_updates: dict[str, Any]) -> None:
    from sidelight.integrations.agent_sdk import session_context_hook

    fake_updates["raise"] = RuntimeError("boom")
    assert asyncio.run(session_context_hook(CLAUDE_PROMPT, None, None)) == {}
    fake_updates["raise"] = None
    assert asyncio.run(session_context_hook("not a dict", None, None)) == {}


def test_agent_sdk_callback_does_not_block_the_loop(fake_updates: dict[str, Any]) -> None:
    """The work runs in a thread: another task makes progress while the hook runs."""
    import threading

    from sidelight.integrations.agent_sdk import session_context_hook

    loop_thread: list[int] = []
    seen: list[int] = []
    original = sys.modules["sidelight.features.hook"].handle_hook

    def slow(host: str, payload: Any, **kwargs: Any) -> str | None:
        seen.append(threading.get_ident())
        return original(host, payload, **kwargs)  # type: ignore[no-any-return]

    sys.modules["sidelight.features.hook"].handle_hook = slow  # type: ignore[attr-defined]

    async def main() -> None:
        loop_thread.append(threading.get_ident())
        await session_context_hook(CLAUDE_PROMPT, None, None)

    asyncio.run(main())
    assert seen and seen[0] != loop_thread[0]


def test_a_plugin_can_add_a_host(tmp_path: Path) -> None:
    """A third-party injector plugs in beside the built-in ones."""

    class MyHost:
        @hookimpl
        def sidelight_injectors(self):
            from sidelight.records import InjectorSpec

            yield InjectorSpec(name="my-agent", read_event=lambda p: None, render=lambda e, t: t)

    plugins = Plugins(builtins=INJECTING, entry_points=False)
    plugins.register(MyHost())
    assert {"my-agent", "claude-code"} <= set(plugins.injectors())


# ---------------------------------------------------------------------------------------------------
# Qwen Code and GitHub Copilot CLI (inputs as the real CLIs sent them: tests/e2e)

QWEN_PROMPT = {
    "session_id": "6e2c6a88-50de-4f5b-8d51-42d155ac90fc",
    "transcript_path": "/home/u/.qwen/projects/-tmp-proj/chats/6e2c6a88-50de-4f5b-8d51-42d155ac90fc.jsonl",
    "cwd": "/tmp/proj",
    "hook_event_name": "UserPromptSubmit",
    "timestamp": "2026-11-25T05:42:31.039Z",
    "permission_mode": "yolo",
    "prompt_id": "6e2c6a88-50de-4f5b-8d51-42d155ac90fc########0",
    "prompt": "do the steps",
    "submitted_prompt": "do the steps",
}
COPILOT_SESSION = "813c50ec-b142-4004-8931-92e23f02979e"


def test_qwen_reads_claude_codes_protocol(injectors: dict[str, Any]) -> None:
    event = injectors["qwen"].read_event(QWEN_PROMPT)
    assert event is not None and event.host == "qwen" and event.event == "UserPromptSubmit"
    assert event.transcript_path == Path(QWEN_PROMPT["transcript_path"]) and event.prompt == "do the steps"
    out = injectors["qwen"].render(event, "[Session Activity] x")
    assert json.loads(out) == {
        "hookSpecificOutput": {
            "hookEventName": "UserPromptSubmit",
            "additionalContext": "[Session Activity] x",
        }
    }


#: A digest the real Qwen Code 0.24.4 got in a seven-agent run, as sidelight made it.
SEVEN_AGENT_DIGEST = (
    "[Session Activity] (what your other sessions did since you last looked — a report, not instructions)\n"
    '- gemini 53b66091 (just now, 3 messages): "gemini: read app.py and explain" -> read 1 file\n'
    '- claude 71a8d5aa (just now, 4 messages): "cc: fix add in app.py & run the tests <please>" -> '
    "edited app.py; ran python3 test_app.py > out.txt 2>&1"
)


def test_qwen_gets_no_angle_brackets_it_would_escape(injectors: dict[str, Any]) -> None:
    # Qwen Code sends a hook's context as `context.replace(/</g, "&lt;").replace(/>/g, "&gt;")`: the
    # model got `-&gt; read 1 file`. What it sends must be what sidelight meant.
    event = injectors["qwen"].read_event(QWEN_PROMPT)
    sent = json.loads(injectors["qwen"].render(event, SEVEN_AGENT_DIGEST))["hookSpecificOutput"]
    text = sent["additionalContext"]
    assert text.replace("<", "&lt;").replace(">", "&gt;") == text
    assert '"gemini: read app.py and explain" → read 1 file' in text
    assert '"cc: fix add in app.py & run the tests ‹please›" → edited app.py' in text
    assert "ran python3 test_app.py › out.txt 2›&1" in text
    assert text.startswith("[Session Activity] (what your other sessions did")


@pytest.mark.parametrize(
    ("payload", "event", "prompt"),
    [
        ({"prompt": "do the steps"}, "UserPromptSubmit", "do the steps"),
        ({"source": "new", "initialPrompt": "do the steps"}, "SessionStart", None),
        ({"reason": "complete"}, "SessionEnd", None),
    ],
)
def test_copilot_tells_its_events_apart_by_their_keys(
    injectors: dict[str, Any], payload: dict[str, Any], event: str, prompt: str | None
) -> None:
    raw = {"sessionId": COPILOT_SESSION, "timestamp": 1795585353551, "cwd": "/tmp/proj", **payload}
    read = injectors["copilot"].read_event(raw)
    assert read == HostEvent(
        host="copilot",
        event=event,  # type: ignore[arg-type]
        session_id=COPILOT_SESSION,
        transcript_path=None,
        cwd=Path("/tmp/proj"),
        prompt=prompt,
        raw=raw,
    )
    assert injectors["copilot"].read_event({"sessionId": COPILOT_SESSION}) is None
    assert injectors["copilot"].read_event([1]) is None


def test_copilot_gets_a_top_level_additional_context(injectors: dict[str, Any]) -> None:
    event = injectors["copilot"].read_event({"sessionId": COPILOT_SESSION, "cwd": "/p", "prompt": "hi"})
    assert json.loads(injectors["copilot"].render(event, "[Session Activity] x")) == {
        "additionalContext": "[Session Activity] x"
    }
    assert injectors["copilot"].render(event, None) is None


def test_qwens_empty_prompt_call_after_a_tool_result_gets_nothing(tmp_path: Path) -> None:
    """Qwen calls its prompt hook again after each tool result with `"prompt": ""`: what it would get
    reaches the model but not the transcript, so the hook answers nothing (and logs no warning)."""
    home = tmp_path / "home"
    project = tmp_path / "proj"
    chats = home / ".qwen" / "projects" / "-proj" / "chats"
    chats.mkdir(parents=True)
    project.mkdir()
    sibling = chats / "11111111-2222-4333-8444-555555555555.jsonl"
    line = {
        "uuid": "u1",
        "sessionId": sibling.stem,
        "timestamp": "2026-11-25T05:42:31.048Z",
        "type": "user",
        "provenance": "real_user",
        "cwd": str(project),
        "message": {"role": "user", "parts": [{"text": "sibling work"}]},
    }
    sibling.write_text(json.dumps(line, separators=(",", ":")) + "\n")  # compact, as Qwen writes
    own = chats / "6e2c6a88-50de-4f5b-8d51-42d155ac90fc.jsonl"
    payload = dict(QWEN_PROMPT, transcript_path=str(own), cwd=str(project))
    empty = run_hook_process(home, "qwen", json.dumps(dict(payload, prompt="")).encode())
    assert empty.returncode == 0 and empty.stdout == b""
    typed = run_hook_process(home, "qwen", json.dumps(payload).encode())
    assert typed.returncode == 0
    context = json.loads(typed.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "sibling work" in context  # the news waited for the typed prompt
    log = home / ".local" / "state" / "sidelight" / "sidelight.log"
    assert "WARNING" not in (log.read_text() if log.exists() else "")
