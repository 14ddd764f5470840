"""The Cline CLI as a built-in agent (``sidelight.agents.cline``): its rewritten messages document
exported incrementally and safely, its sessions listed and read, its hooks (``PreToolUse``: the guard's
note, inform only; ``PostToolUse``: the news), and its installer.

The sample in tests/data/cline/four-tools/ was written by the real Cline CLI 3.0.65
(``python -m tests.e2e.make_sample_data cline``)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from sidelight.agents import cline
from sidelight.agents.cline.install import install_cline, uninstall_cline
from sidelight.config import Settings
from sidelight.engine.reads import decoder_for
from sidelight.features.hook import handle_hook
from sidelight.install import InstallError
from sidelight.plugins import Plugins
from tests.test_edit_guard import B, World, collect

SAMPLE = Path(__file__).parent / "data" / "cline" / "four-tools"
SID = "1795928908570_3mrb2"
PROJECT = "/tmp/sidelight-samples/cline/project"


@pytest.fixture
def settings(home: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    monkeypatch.delenv("CLINE_DIR", raising=False)
    monkeypatch.delenv("CLINE_DATA_DIR", raising=False)
    return Settings.load(env=dict(os.environ), home=home)


def _folder(home: Path, sid: str = SID) -> Path:
    folder = home / ".cline" / "data" / "sessions" / sid
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _sample(home: Path) -> dict[str, Any]:
    folder = _folder(home)
    for path in SAMPLE.iterdir():
        shutil.copy(path, folder / path.name)
    document: dict[str, Any] = json.loads((SAMPLE / f"{SID}.messages.json").read_text())
    return document


def _write(home: Path, document: dict[str, Any] | str, sid: str = SID) -> None:
    text = document if isinstance(document, str) else json.dumps(document)
    (_folder(home, sid) / f"{sid}.messages.json").write_text(text)


def _export_lines(settings: Settings, sid: str = SID) -> list[dict[str, Any]]:
    path = Path(cline.export_dir(settings), f"{sid}.jsonl")
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _events(settings: Settings, sid: str = SID) -> list[tuple[Any, ...]]:
    path = Path(cline.export_dir(settings), f"{sid}.jsonl")
    return [e for line in path.read_bytes().splitlines() for e in cline.decode(line)]


# --- the export ------------------------------------------------------------------------------------


def test_the_real_sample_is_listed_and_counted(home: Path, settings: Settings) -> None:
    _sample(home)
    (session,) = list(cline.list_sessions(settings))
    assert (session.key, session.name, session.format, session.group) == (
        f"cline:{SID}",
        "3mrb2",
        "cline",
        PROJECT,
    )
    events = _events(settings)
    users = [e[1] for e in events if e[0] == "user"]
    assert users == ["Create notes.txt with two lines, then change beta to gamma and show me the file."]
    tools = [(e[4], e[6]) for e in events if e[0] == "tool"]
    notes = f"{PROJECT}/notes.txt"
    assert tools == [("run_commands", "ls -la"), ("editor", notes), ("editor", notes), ("read_files", notes)]
    results = [e for e in events if e[0] == "result"]
    assert len(results) == 4 and not any(e[7] for e in results)
    assert [e[1] for e in events if e[0] == "assistant" and e[1]] == ["notes.txt now reads alpha, gamma."]
    # The core reads the export with the format's categories.
    from sidelight import scan

    activity = scan(session.path, format="cline")
    assert (activity.categories.edit, activity.categories.read, activity.categories.command) == (2, 1, 1)
    assert activity.files_touched == (notes,)


def test_a_torn_document_is_retried_and_nothing_is_lost_or_said_twice(home: Path, settings: Settings) -> None:
    """Cline rewrites the document as the session goes: a read mid-rewrite (a cut document) exports
    nothing and moves nothing; the next look exports every message once; later looks only the new."""
    document = _sample(home)
    messages = document["messages"]
    whole = json.dumps({**document, "messages": messages[:3]})
    _write(home, whole[: len(whole) // 2])  # torn
    assert cline.export(settings).get(SID) is None
    assert _export_lines(settings) == []
    _write(home, {**document, "messages": messages[:3]})
    cline.export(settings)
    assert [line["id"] for line in _export_lines(settings)[1:]] == [m["id"] for m in messages[:3]]
    _write(home, json.dumps({**document, "messages": messages})[:-5])  # torn again, longer
    cline.export(settings)
    cline.export(settings)
    _write(home, document)
    cline.export(settings)
    cline.export(settings)  # unchanged: nothing read, nothing appended
    lines = _export_lines(settings)
    assert lines[0]["type"] == "session" and lines[0]["cwd"] == PROJECT
    assert [line["id"] for line in lines[1:]] == [m["id"] for m in messages]


def test_a_document_that_drops_its_last_exported_message_goes_on_by_the_count(
    home: Path, settings: Settings
) -> None:
    document = _sample(home)
    messages = document["messages"]
    _write(home, {**document, "messages": messages[:4]})
    cline.export(settings)
    renamed = [*messages[:3], {**messages[3], "id": "rewritten"}, *messages[4:]]
    _write(home, {**document, "messages": renamed})
    cline.export(settings)
    assert [line["id"] for line in _export_lines(settings)[1:]] == [m["id"] for m in messages]


def test_hook_context_is_ours_and_a_typed_prompt_is_unwrapped(home: Path, settings: Settings) -> None:
    hook_text = (
        '<hook_context source="PostToolUse" tool_name="editor">\n[Session Activity] x\n</hook_context>'
    )
    document = {
        "version": 1,
        "sessionId": SID,
        "messages": [
            {
                "id": "u1",
                "role": "user",
                "content": [{"type": "text", "text": '<user_input mode="act">hi\nthere</user_input>'}],
                "ts": 1795928908782,
            },
            {
                "id": "h1",
                "role": "user",
                "content": [{"type": "text", "text": hook_text}],
                "metadata": {"displayRole": "system"},
            },
            {"id": "a1", "role": "assistant", "content": "plain text reply"},
            "not a message",
        ],
    }
    _write(home, document)
    cline.export(settings)
    events = _events(settings)
    assert [e[1] for e in events if e[0] == "user"] == ["hi\nthere"]
    assert [e[1] for e in events if e[0] == "assistant"] == ["plain text reply"]
    plugins = Plugins(entry_points=False)
    (agent,) = [a for name, a in plugins.agents().items() if name == "cline"]
    assert agent.injected_values is not None
    found = [v for line in _export_lines(settings) for v in agent.injected_values(line)]
    assert found == [hook_text]


def test_failed_commands_and_broken_documents(home: Path, settings: Settings) -> None:
    call = {"type": "tool_use", "id": "c1", "name": "run_commands", "input": {"commands": ["make", "true"]}}
    result = {
        "type": "tool_result",
        "tool_use_id": "c1",
        "name": "run_commands",
        "content": [
            {"query": "make", "result": "boom", "success": False},
            {"query": "true", "result": "", "success": True},
        ],
    }
    document = {
        "messages": [
            {"id": "a", "role": "assistant", "content": [call]},
            {"id": "r", "role": "user", "content": [result]},
        ]
    }
    _write(home, document)
    for sid, text in (("1_bad", "[1, 2]"), ("2_bad", '{"messages": 7}'), ("3_bad", "\xff not json")):
        _write(home, text, sid)
    sessions = cline.export(settings)
    assert set(sessions) == {SID}
    events = _events(settings)
    assert [(e[3], e[6]) for e in events if e[0] == "tool"] == [("c1", "make"), ("c1#1", "true")]
    assert [(e[3], e[7]) for e in events if e[0] == "result"] == [("c1", True), ("c1#1", False)]


def test_no_cline_costs_nothing_and_lists_nothing(home: Path, settings: Settings) -> None:
    assert list(cline.list_sessions(settings)) == []
    assert not Path(cline.export_dir(settings)).exists()
    from sidelight.agents import agent_of

    record = agent_of("sidelight.agents.cline")
    assert record is not None and record.sessions_here is not None and not record.sessions_here(settings)
    _sample(home)
    assert record.sessions_here(settings)


def test_liveness_from_the_session_record(home: Path, settings: Settings) -> None:
    _sample(home)  # ended_at set
    running = f"{int(SID.split('_')[0]) + 1}_alive"
    _write(home, {"messages": []}, running)
    (_folder(home, running) / f"{running}.json").write_text(
        json.dumps({"pid": os.getpid(), "ended_at": None})
    )
    assert cline.live_sessions(settings) == {SID: "gone", running: "running"}


# --- the hooks -------------------------------------------------------------------------------------


def _payload(world: World, hook: str, tool: str, args: dict[str, Any], sid: str = SID) -> dict[str, Any]:
    call: dict[str, Any] = {"id": "call_1", "name": tool, "input": args}
    if hook == "tool_result":
        call["output"] = "ok"
    return {
        "clineVersion": "",
        "taskId": "conv_1",
        "sessionContext": {"rootSessionId": sid},
        "workspaceRoots": [str(world.project)],
        "workspaceInfo": {"rootPath": str(world.project), "hint": "project"},
        "hookName": hook,
        hook: call,
    }


def _hook(payload: dict[str, Any], **env: str) -> str | None:
    printed: list[str | None] = []
    settings = Settings.load(env={**os.environ, **env})
    handle_hook("cline", json.dumps(payload), settings=settings, deliver=collect(printed))
    assert len(printed) <= 1
    return printed[0] if printed else None


def _cline_read_app(world: World) -> None:
    """Cline session A started and read app.py ten minutes ago."""
    from sidelight.agents.opencode import iso

    at = (world.now - 600) * 1000
    read = {
        "type": "tool_use",
        "id": "r1",
        "name": "read_files",
        "input": {"files": [{"path": str(world.app)}]},
    }
    done = {
        "type": "tool_result",
        "tool_use_id": "r1",
        "name": "read_files",
        "content": [{"query": str(world.app), "result": "a = 1", "success": True}],
    }
    messages = [
        {
            "id": "u1",
            "role": "user",
            "content": [{"type": "text", "text": '<user_input mode="act">go</user_input>'}],
            "ts": at,
        },
        {"id": "a1", "role": "assistant", "content": [read], "ts": at + 10},
        {"id": "t1", "role": "user", "content": [done], "ts": at + 20},
    ]
    _write(world.home, {"version": 1, "sessionId": SID, "messages": messages})
    meta = {"session_id": SID, "cwd": str(world.project), "started_at": iso(at), "pid": 0}
    (_folder(world.home) / f"{SID}.json").write_text(json.dumps(meta))


def test_the_guard_only_informs_cline_and_never_cancels(home: Path) -> None:
    world = World(home)
    world.prompt(B, 300)
    _cline_read_app(world)
    world.tool(B, 120, "Edit", {"file_path": str(world.app), "old_string": "1", "new_string": "2"})
    edit = _payload(
        world, "tool_call", "editor", {"path": str(world.app), "old_text": "a = 1", "new_text": "a = 3"}
    )
    out = _hook(edit)
    assert out is not None
    answer = json.loads(out)
    assert answer["cancel"] is False and answer["errorMessage"] == ""
    note = answer["contextModification"]
    assert "app.py was edited by claude session bbbbbbbb" in note and "this write went through" in note
    assert _hook(edit) is None  # said once per change
    # Other tools, results without news, bad input: nothing, and never a traceback.
    assert _hook(_payload(world, "tool_call", "run_commands", {"commands": ["ls"]})) is None
    for bad in ({}, {"hookName": "tool_call"}, {**edit, "tool_call": None}, {**edit, "sessionContext": 3}):
        assert _hook(bad) is None
    assert _hook(edit, SIDELIGHT_EDIT_GUARD="off") is None


def test_news_after_a_cline_tool(home: Path) -> None:
    world = World(home)
    world.prompt(B, 300)
    _cline_read_app(world)
    world.tool(B, 60, "Edit", {"file_path": str(world.app), "old_string": "1", "new_string": "2"})
    out = _hook(_payload(world, "tool_result", "run_commands", {"commands": ["true"]}))
    assert out is not None
    note = json.loads(out)["contextModification"]
    assert "app.py was edited by claude session bbbbbbbb" in note
    assert json.loads(out)["cancel"] is False
    assert (
        _hook(
            _payload(world, "tool_result", "run_commands", {"commands": ["true"]}), SIDELIGHT_TURN_NEWS="off"
        )
        is None
    )


def test_a_cline_session_is_in_a_claude_code_digest(home: Path) -> None:
    world = World(home)
    _cline_read_app(world)
    document = json.loads((_folder(home) / f"{SID}.messages.json").read_text())
    edit = {
        "type": "tool_use",
        "id": "e1",
        "name": "editor",
        "input": {"path": str(world.app), "old_text": "1", "new_text": "3"},
    }
    done = {
        "type": "tool_result",
        "tool_use_id": "e1",
        "name": "editor",
        "content": '{"query":"edit","result":"Edited","success":true}',
    }
    document["messages"] += [
        {"id": "a2", "role": "assistant", "content": [edit], "ts": (world.now - 30) * 1000},
        {"id": "t2", "role": "user", "content": [done], "ts": (world.now - 29) * 1000},
    ]
    _write(home, document)
    world.prompt(B, 10)
    from sidelight import get_session_updates

    digest = get_session_updates(str(world.transcript(B)))
    assert digest is not None
    (line,) = [line for line in digest.splitlines() if line.startswith("- cline")]
    assert line.startswith("- cline 3mrb2 (") and "app.py" in line, digest


# --- the installer ---------------------------------------------------------------------------------


def test_install_writes_two_executables_refuses_a_foreign_one_and_uninstall_takes_ours(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CLINE_DIR", raising=False)
    hooks = home / ".cline" / "hooks"
    hooks.mkdir(parents=True)
    (hooks / "TaskStart").write_text("#!/bin/sh\necho mine\n")
    results = install_cline()
    assert [r.path.name if r.path else None for r in results] == ["PreToolUse", "PostToolUse"]
    for name in ("PreToolUse", "PostToolUse"):
        path = hooks / name
        assert os.access(path, os.X_OK) and path.read_text().rstrip().endswith(" hook cline")
    assert not any(r.changed for r in install_cline())  # twice: nothing changes
    uninstall_cline()
    assert sorted(p.name for p in hooks.iterdir()) == ["TaskStart"]
    (hooks / "PostToolUse").write_text("#!/bin/sh\necho theirs\n")
    with pytest.raises(InstallError, match="PostToolUse exists and is not sidelight's"):
        install_cline()
    assert not (hooks / "PreToolUse").exists()  # nothing written
    with pytest.raises(InstallError):
        uninstall_cline()
    assert (hooks / "PostToolUse").read_text() == "#!/bin/sh\necho theirs\n"


def test_decoder_for_the_export_is_the_cline_format(home: Path, settings: Settings) -> None:
    _sample(home)
    (session,) = list(cline.list_sessions(settings))
    assert decoder_for(session, Plugins(entry_points=False)) is not None


def test_status_and_the_dashboard_list_and_read_a_cline_session(home: Path, settings: Settings) -> None:
    from sidelight.dashboard.data import Board

    _sample(home)
    board = Board(settings, Plugins(entry_points=False))
    board.refresh()
    (row,) = board.rows()
    assert (row["id"], row["agent"], row["state"]) == (f"cline:{SID}", "cline", "ended")
    assert row["tools"] == {"edit": 2, "read": 1, "command": 1, "other": 0}
    detail = board.detail(f"cline:{SID}")
    assert [c["tool"] for c in detail["conversation"] if c["role"] == "tool"] == [
        "run_commands",
        "editor",
        "editor",
        "read_files",
    ]
