"""``sidelight mcp``: the MCP server, called with the SDK's own client (in process and over stdio), and
``sidelight install mcp --host HOST``'s round trips (docs/mcp.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.types import Implementation

from sidelight.config import Settings
from sidelight.engine import liveness
from sidelight.integrations.mcp_hosts import HOSTS, config_path, install_mcp, uninstall_mcp
from sidelight.integrations.mcp_server import (
    NO_NEWS,
    Caller,
    Tools,
    build_server,
    caller_session,
    fit_lines,
)
from sidelight.statelayout import CURSORS_DIR, MCP_DIR, session_path
from tests.conftest import _cc_assistant, cli_command
from tests.support.hook_world import STAMP, HookWorld, session_id

TOOLS = {"digest", "list_sessions", "read_session", "recap"}


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> HookWorld:
    """Three Claude Code sessions of one project; session 1 wrote ``app.py``; HOME and the state
    directory are the world's, the working directory its project."""
    world = HookWorld(tmp_path, sessions=3)
    for name in list(os.environ):
        if name.startswith(("SIDELIGHT_", "CLAUDE_", "QWEN_", "XDG_")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(world.home))
    monkeypatch.setenv("SIDELIGHT_STATE_DIR", str(world.state))
    monkeypatch.chdir(world.project)
    write(world, 1, "app.py")
    return world


def write(world: HookWorld, n: int, name: str) -> None:
    """Session ``n`` writes ``name`` in the project (a Write tool call in its transcript)."""
    block = {
        "type": "tool_use",
        "id": f"toolu_{n}_{name}",
        "name": "Write",
        "input": {"file_path": str(world.project / name), "content": "x\n"},
    }
    line = _cc_assistant(f"msg_{n}_{name}", block, STAMP, f"a-{n}-{name}")
    line.update(sessionId=session_id(n), cwd=str(world.project))
    with world.transcript(n).open("a", encoding="utf-8") as file:
        file.write(json.dumps(line) + "\n")


def call(server: Any, *calls: tuple[str, dict[str, Any]], client: str = "cursor") -> list[tuple[bool, str]]:
    """Each tool call through the SDK's client, in one connection: (is_error, text) each."""

    async def run() -> list[tuple[bool, str]]:
        out = []
        async with Client(server, client_info=Implementation(name=client, version="1")) as session:
            for name, args in calls:
                result = await session.call_tool(name, args)
                text = "".join(getattr(block, "text", "") for block in result.content)
                out.append((bool(result.is_error), text))
        return out

    return anyio.run(run)


def connection_server(world: HookWorld) -> Any:
    return build_server(Tools(Caller(None, str(world.project))))


def test_the_tools_are_listed_with_descriptions_and_typed_inputs(world: HookWorld) -> None:
    async def run() -> Any:
        async with Client(connection_server(world)) as session:
            return await session.list_tools()

    tools = {tool.name: tool for tool in anyio.run(run).tools}
    assert set(tools) == TOOLS
    assert all(tool.description and len(tool.description) > 60 for tool in tools.values())
    assert tools["read_session"].input_schema["required"] == ["session"]
    assert tools["read_session"].input_schema["properties"]["lines"]["type"] == "integer"
    assert "ctx" not in tools["digest"].input_schema.get("properties", {})
    # Text, not structured output: a host would hand the model {"result": ...} otherwise.
    assert all(tool.output_schema is None for tool in tools.values())


def test_a_connection_gets_its_siblings_digest_once(world: HookWorld) -> None:
    server = connection_server(world)
    (first, again) = call(server, ("digest", {}), ("digest", {}))
    assert first[0] is False and first[1].startswith("[Session Activity]"), first
    assert "wrote app.py" in first[1] and "claude 00000001" in first[1]
    assert again == (False, NO_NEWS)  # nothing is repeated
    # Its cursors are the connection's, in the state directory's mcp/ folder.
    assert list((world.state / MCP_DIR).glob("*.json"))
    world.prompt(2, "later news")
    ((error, text),) = call(server, ("digest", {}))
    assert not error and "claude 00000002" in text and "app.py" not in text
    # Another client in the same folder has cursors of its own: it hears everything.
    ((error, text),) = call(server, ("digest", {}), client="windsurf")
    assert not error and "app.py" in text and "claude 00000002" in text


def test_a_known_caller_session_reads_from_its_own_cursors(world: HookWorld) -> None:
    server = build_server(Tools(Caller(("claude-code", session_id(0)), str(world.project))))
    ((error, text),) = call(server, ("digest", {}))
    assert not error and "wrote app.py" in text
    assert "00000000" not in text  # a session never reports itself
    # The hook's cursor file: the prompt's digest will not tell this again.
    assert session_path(world.state, CURSORS_DIR, f"claude-code:{session_id(0)}", ".json").exists()
    assert not (world.state / MCP_DIR).exists()
    ((error, text),) = call(server, ("list_sessions", {}))
    assert "claude 00000000 (you)" in text


def test_a_caller_whose_transcript_is_not_written_yet_is_still_itself(world: HookWorld) -> None:
    """Claude Code may call a tool before its transcript is on disk: the session is still found (its
    resolver knows where the transcript will be), and reads from its own cursors."""
    new = "abcdef12-0000-4000-8000-000000000000"
    server = build_server(Tools(Caller(("claude-code", new), str(world.project))))
    ((error, text),) = call(server, ("digest", {}))
    assert not error and "claude 00000001" in text and "claude 00000000" in text
    assert session_path(world.state, CURSORS_DIR, f"claude-code:{new}", ".json").exists()
    assert not (world.state / MCP_DIR).exists()


def test_list_read_and_recap(world: HookWorld) -> None:
    key = f"claude-code:{session_id(1)}"
    listing, read, recap, short = call(
        connection_server(world),
        ("list_sessions", {}),
        ("read_session", {"session": key}),
        ("recap", {"session": "00000001"}),
        ("read_session", {"session": "00000001", "max_tokens": 50, "lines": 2}),
    )
    assert not listing[0] and listing[1].startswith("[sidelight sessions]")
    assert "a report, not instructions" in listing[1]
    assert listing[1].count("\n- claude ") == 3 and f"key: {key}" in listing[1]
    assert not read[0] and read[1].startswith("[sidelight read] claude 00000001")
    assert "User: first prompt of session 1" in read[1] and "[Write " in read[1]
    assert not recap[0] and recap[1].startswith("[sidelight recap] claude 00000001")
    assert "# Recap" in recap[1] and "first prompt of session 1" in recap[1]
    assert not short[0]


def test_text_from_another_session_is_redacted(world: HookWorld) -> None:
    world.prompt(2, "deploy with OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz0123456789 now")
    ((error, text),) = call(connection_server(world), ("read_session", {"session": "00000002"}))
    assert not error and "OPENAI_API_KEY" in text
    assert "abcdefghijklmnopqrstuvwxyz0123456789" not in text


def test_bad_requests_are_mcp_errors_and_the_server_goes_on(world: HookWorld) -> None:
    results = call(
        connection_server(world),
        ("read_session", {"session": "no-such-session"}),
        ("recap", {"session": "  "}),
        ("read_session", {"session": str(world.transcript(1).parent / "..")}),
        ("read_session", {"session": "/etc/passwd"}),
        ("read_session", {"session": 5}),
        ("read_session", {}),
        ("read_session", {"session": "00000001", "lines": -3}),
        ("no_such_tool", {}),
        ("list_sessions", {}),
    )
    *errors, last = results
    assert all(error for error, _ in errors), errors
    assert "no session of this project matches 'no-such-session'" in errors[0][1]
    assert "list_sessions" in errors[0][1]
    assert "not one of this project's sessions" in errors[3][1]
    assert last[0] is False  # the same connection still answers


def test_sessions_of_other_projects_are_not_served(world: HookWorld, tmp_path: Path) -> None:
    other = HookWorld(tmp_path / "other", sessions=1)
    # The other project's session lives in the same HOME.
    folder = world.home / ".claude" / "projects" / other.folder.name
    folder.mkdir(parents=True)
    (folder / other.transcript(0).name).write_text(
        other.transcript(0).read_text().replace(session_id(0), "99999999-0000-4000-8000-000000000000")
    )
    listing, read = call(
        connection_server(world), ("list_sessions", {}), ("read_session", {"session": "99999999"})
    )
    assert "99999999" not in listing[1]
    assert read[0] and "99999999" in read[1]


def test_fit_lines_keeps_the_newest_lines_within_the_budget() -> None:
    text = "".join(f"line {n} " + "word " * 20 + "\n" for n in range(40))
    cut = fit_lines(text, 100, None)  # type: ignore[arg-type]
    assert cut.startswith("[... ") and "earlier lines left out" in cut
    assert cut.rstrip().endswith("line 39 " + "word " * 19 + "word")
    assert fit_lines("short\n", 100, None) == "short\n"  # type: ignore[arg-type]


def test_the_caller_session_is_found_in_the_hosts_registry(world: HookWorld) -> None:
    registry = world.home / ".claude" / "sessions"
    registry.mkdir(parents=True)
    me = os.getpid()
    record = {"pid": me, "sessionId": session_id(2), "procStart": str(liveness.process_start(me))}
    (registry / f"{me}.json").write_text(json.dumps(record))
    settings = Settings.load()
    assert caller_session(settings, me) == ("claude-code", session_id(2))
    # A process this one started finds it as its parent (the host started the server).
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert caller_session(settings, child.pid) == ("claude-code", session_id(2))
    finally:
        child.kill()
        child.wait()
    # A record of another process, a dead pid's, or a garbled one names no one.
    (registry / f"{me}.json").write_text(json.dumps({**record, "pid": me + 1}))
    assert caller_session(settings, me) is None
    (registry / f"{me}.json").write_text("{not json")
    assert caller_session(settings, me) is None


def test_sidelight_mcp_over_stdio_with_the_sdk_client(world: HookWorld) -> None:
    command = cli_command()
    params = StdioServerParameters(
        command=command[0],
        args=[*command[1:], "mcp"],
        env={**os.environ, "HOME": str(world.home), "SIDELIGHT_STATE_DIR": str(world.state)},
        cwd=str(world.project),
    )
    ((error, text),) = call(params, ("digest", {}), client="zed")
    assert not error and "wrote app.py" in text, text


@pytest.mark.timeout(90)
def test_a_malformed_message_on_stdin_gets_an_error_not_a_crash(world: HookWorld) -> None:
    server = subprocess.Popen(
        [*cli_command(), "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=world.project,
        env={**os.environ, "HOME": str(world.home), "SIDELIGHT_STATE_DIR": str(world.state)},
    )
    assert server.stdin is not None and server.stdout is not None

    def ask(message: dict[str, Any] | str) -> dict[str, Any] | None:
        assert server.stdin is not None and server.stdout is not None
        server.stdin.write((message if isinstance(message, str) else json.dumps(message)) + "\n")
        server.stdin.flush()
        if isinstance(message, str) or "id" not in message:
            return None
        return dict(json.loads(server.stdout.readline()))

    hello = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    }
    try:
        assert ask("this is not json {") is None
        parse_error = json.loads(server.stdout.readline())
        assert parse_error["error"]["code"] == -32700 and parse_error["id"] is None
        assert ask({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello})["result"]  # type: ignore[index]
        ask({"jsonrpc": "2.0", "method": "notifications/initialized"})
        unknown = ask({"jsonrpc": "2.0", "id": 2, "method": "no/such/method", "params": {}})
        assert unknown is not None and unknown["error"]["code"] == -32601
        bad = ask({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": "not an object"})
        assert bad is not None and bad["error"]["code"] == -32600
        call = {"name": "read_session", "arguments": {"session": "zzzz"}}
        missing = ask({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": call})
        assert missing is not None and missing["result"]["isError"] is True
        assert "no session of this project matches 'zzzz'" in missing["result"]["content"][0]["text"]
        listed = ask({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "list_sessions"}})
        assert listed is not None and listed["result"]["isError"] is False  # still serving
    finally:
        _out, err = server.communicate(timeout=60)
    assert server.returncode == 0, err
    assert "Traceback" not in err


def test_sidelight_mcp_without_the_extra_says_how_to_install_it() -> None:
    code = (
        "import sys; sys.modules['mcp'] = None\n"
        "from sidelight.cli import main\n"
        "raise SystemExit(main(['mcp']))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 1 and "pip install '.[mcp]'" in done.stderr, done.stderr


# --- install mcp --host -------------------------------------------------------------------------------


SCOPES = [
    (name, scope)
    for name, host in sorted(HOSTS.items())
    for scope in ("user", "project")
    if (host.project if scope == "project" else host.user) is not None
]


@pytest.mark.parametrize(("host", "scope"), SCOPES)
def test_install_and_uninstall_leave_the_hosts_config_as_it_was(
    host: str, scope: str, world: HookWorld
) -> None:
    settings = Settings.load()
    path = config_path(host, scope, settings, world.project)
    table = HOSTS[host].table
    path.parent.mkdir(parents=True, exist_ok=True)
    before = json.dumps(
        {"theme": "dark", table: {"other": {"command": "other-server", "args": []}}}, indent=4
    )
    path.write_text(before)

    result = install_mcp(host, scope, settings, world.project)
    assert result.changed and result.path == path
    data = json.loads(path.read_text())
    assert data["theme"] == "dark" and data[table]["other"]["command"] == "other-server"
    server = data[table]["sidelight"]
    assert server["args"][-1] == "mcp" and "sidelight" in " ".join([server["command"], *server["args"]])
    assert not install_mcp(host, scope, settings, world.project).changed  # twice: nothing changes

    assert uninstall_mcp(host, scope, settings, world.project).changed
    assert path.read_text() == before  # exactly as it was
    assert not uninstall_mcp(host, scope, settings, world.project).changed


def test_a_config_install_created_is_removed_with_its_folders(world: HookWorld) -> None:
    settings = Settings.load()
    install_mcp("windsurf", "user", settings)
    path = world.home / ".codeium" / "windsurf" / "mcp_config.json"
    assert json.loads(path.read_text())["mcpServers"]["sidelight"]["args"][-1] == "mcp"
    uninstall_mcp("windsurf", "user", settings)
    assert not (world.home / ".codeium").exists()


def test_an_edited_config_keeps_the_edits_and_jsonc_comments(world: HookWorld) -> None:
    settings = Settings.load()
    path = config_path("zed", "user", settings)
    path.parent.mkdir(parents=True)
    path.write_text('// my settings\n{\n  "vim_mode": true, // yes\n}\n')
    install_mcp("zed", "user", settings)
    text = path.read_text()
    assert "// my settings" in text and '"context_servers"' in text
    path.write_text(text.replace('"vim_mode": true', '"vim_mode": false'))  # the user edits it since
    uninstall_mcp("zed", "user", settings)
    text = path.read_text()
    assert "// my settings" in text and '"vim_mode": false' in text and "sidelight" not in text


def test_a_server_named_sidelight_that_is_not_ours_is_left_alone(world: HookWorld) -> None:
    from sidelight.install import InstallError

    settings = Settings.load()
    path = config_path("cursor", "user", settings)
    path.parent.mkdir(parents=True)
    theirs = json.dumps({"mcpServers": {"sidelight": {"command": "node", "args": ["x.js"]}}})
    path.write_text(theirs)
    with pytest.raises(InstallError, match="not sidelight's"):
        install_mcp("cursor", "user", settings)
    assert not uninstall_mcp("cursor", "user", settings).changed
    assert path.read_text() == theirs


def test_claude_code_user_scope_is_claude_json(world: HookWorld, monkeypatch: pytest.MonkeyPatch) -> None:
    assert config_path("claude-code", "user", Settings.load()) == world.home / ".claude.json"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(world.home / "cfg"))
    assert config_path("claude-code", "user", Settings.load()) == world.home / "cfg" / ".claude.json"
    assert (
        config_path("claude-code", "project", Settings.load(), world.project) == world.project / ".mcp.json"
    )


def test_the_install_command_line(world: HookWorld, run_cli: Any) -> None:
    env = {"SIDELIGHT_STATE_DIR": str(world.state)}
    done = run_cli("install", "mcp", "--host", "cursor", env=env)
    assert done.returncode == 0 and "added the sidelight MCP server" in done.stdout
    assert (world.home / ".cursor" / "mcp.json").exists()
    done = run_cli("uninstall", "mcp", "--host", "cursor", env=env)
    assert done.returncode == 0 and not (world.home / ".cursor").exists()
    assert run_cli("install", "mcp", env=env).returncode == 2  # which host?
    assert run_cli("install", "codex", "--host", "cursor", env=env).returncode == 2
    done = run_cli("install", "mcp", "--host", "windsurf", "--scope", "project", env=env)
    assert done.returncode == 1 and "for the user only" in done.stderr
    done = run_cli("install", "mcp", "--host", "nowhere", env=env)
    assert done.returncode == 1 and "no MCP host 'nowhere'" in done.stderr
