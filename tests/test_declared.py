"""Declared formats (a Layout compiled by the core) and Python fallback decoders, through the facade."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sidelight import _core, hookimpl
from sidelight.engine.scanning import recent_entries, scan, scan_many
from sidelight.features.history import history
from sidelight.formats import (
    DEFAULT_CATEGORIES,
    Blocks,
    Event,
    Format,
    FormatDeclarationError,
    Layout,
    ToolEntry,
    categories_for,
    register_format,
)
from sidelight.plugins import Plugins
from sidelight.records import FormatSpec, Session
from sidelight.types import Activity
from tests.conftest import PI_CORPUS
from tests.support.reference import reference_scan

DATA = Path(__file__).parent / "data"
PI_LAYOUT = Layout(
    role="message.role",
    content="message.content",
    blocks=Blocks(tool=("toolCall", "tool_use"), result=("tool_result",), input_keys=("input", "arguments")),
    tool_entries=(ToolEntry("bashExecution", literal_name="bashExecution", primary="message.command"),),
    result_roles=("toolResult",),
    result_id="message.toolCallId",
    result_error="message.isError",
    session_id="id",
    session_id_types=("session",),
    cwd="cwd",
    cwd_types=("session",),
    title="name",
    title_types=("session_info",),
)
GEMINI = Layout(
    role="type",
    assistant_roles=("gemini",),
    blocks=Blocks(
        type_key=None, tool=("functionCall",), result=("functionResponse",), skip_flags=("thought",)
    ),
    tool_calls="toolCalls",
    message_id="id",
    session_id="sessionId",
    skip_keys=("$set", "$rewindTo"),
)
LINES = [
    {"sessionId": "s1", "projectHash": "h"},
    {"id": "u1", "timestamp": "t1", "type": "user", "content": "run the tests"},
    {
        "id": "g1",
        "timestamp": "t2",
        "type": "gemini",
        "content": "",
        "toolCalls": [{"id": "c1", "name": "shell", "args": {"command": "make test"}}],
    },
    {
        "id": "g1",
        "timestamp": "t2",
        "type": "gemini",
        "content": "Done.",
        "toolCalls": [{"id": "c1", "name": "shell", "args": {"command": "make test"}}],
    },
    {"$set": {"lastUpdated": "t3"}},
]


def _write(path: Path, records: list[Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _decode(line: bytes) -> list[Event] | None:
    record = json.loads(line)
    if record.get("type") == "user":
        return [Event.entry_type("user"), Event.user(record["content"], record.get("timestamp"))]
    if record.get("type") == "gemini":
        calls = [Event.tool(c["name"], c["args"], id=c["id"]) for c in record.get("toolCalls", [])]
        return [
            Event.entry_type("gemini"),
            Event.assistant(record["content"], record["timestamp"], record["id"]),
            *calls,
        ]
    return [Event.meta("session_id", record["sessionId"])] if "sessionId" in record else None


@pytest.fixture(scope="module", autouse=True)
def formats() -> None:
    register_format(FormatSpec(name="t-gemini", layout=GEMINI, categories={"Shell": "command"}))
    register_format(FormatSpec(name="t-gemini-py", decode=_decode, categories={"shell": "command"}))
    register_format(FormatSpec(name="t-pi", layout=PI_LAYOUT, categories=DEFAULT_CATEGORIES["pi"]))


def _pi_files() -> list[Path]:
    return [DATA / "pi" / "four-tools-continue.jsonl", *sorted(PI_CORPUS.glob("*.jsonl"))]


@pytest.mark.parametrize("path", _pi_files(), ids=lambda p: p.name)
def test_pi_as_a_layout_counts_what_the_built_in_and_the_reference_count(path: Path) -> None:
    built_in, described = scan(path, "pi").as_dict(), scan(path, "t-pi").as_dict()
    for key in ("format", "path"):
        built_in.pop(key), described.pop(key)
    assert described == built_in
    reference = reference_scan(path, "pi")
    assert described["messages"] == reference["messages"] and described["tools"] == reference["tools"]
    assert described["messages"]["user"] > 0


def test_a_layout_and_a_python_decoder_count_alike(tmp_path: Path) -> None:
    path = _write(tmp_path / "g.jsonl", LINES)
    layout, python = scan(path, "t-gemini"), scan(path, "t-gemini-py")
    assert (layout.messages.user, layout.messages.assistant) == (1, 1)
    assert layout.tools == python.tools == {"shell": 1}
    assert layout.categories.command == python.categories.command == 1
    assert layout.last_assistant_text == python.last_assistant_text == "Done."
    assert layout.session_id == python.session_id == "s1"
    assert layout.format == Format("t-gemini") and layout.format.value == "t-gemini"
    assert [e.role for e in recent_entries(path, "t-gemini", 10)] == ["user", "tool", "assistant"]
    assert [e.role for e in recent_entries(path, "t-gemini-py", 10)] == ["user", "tool", "assistant"]


def test_scan_many_mixes_built_in_declared_and_python_formats(tmp_path: Path) -> None:
    gemini = _write(tmp_path / "g.jsonl", LINES)
    pi = DATA / "pi" / "four-tools-continue.jsonl"
    results = scan_many(
        [(gemini, "t-gemini", None), (pi, "pi", None), (gemini, "t-gemini-py", None), (pi, "t-pi", None)]
    )
    activities = [r for r in results if isinstance(r, Activity)]
    assert len(activities) == len(results), results
    assert [a.messages.user for a in activities] == [
        1,
        scan(pi, "pi").messages.user,
        1,
        scan(pi, "pi").messages.user,
    ]
    # The declared format's own categories apply where the call brings none.
    assert activities[0].categories.command == 1
    assert categories_for("t-gemini") == {"shell": "command"}


def test_a_python_decoder_that_raises_counts_a_malformed_line(tmp_path: Path) -> None:
    def picky(line: bytes) -> list[Event]:
        if b"bad" in line:
            raise ValueError("cannot read")
        if b"odd" in line:
            return [("nonsense",) * 7]  # type: ignore[list-item]
        return [Event.user("hi")]

    register_format(FormatSpec(name="t-picky", decode=picky))
    path = tmp_path / "p.jsonl"
    path.write_text("ok\nbad\nodd\nok\n")
    activity = scan(path, "t-picky")
    assert (activity.messages.user, activity.skipped.malformed_json, activity.lines) == (2, 2, 4)


def test_ctrl_c_in_a_python_decoder_stops_the_scan(tmp_path: Path) -> None:
    def interrupted(line: bytes) -> None:
        raise KeyboardInterrupt

    register_format(FormatSpec(name="t-interrupt", decode=interrupted))
    path = tmp_path / "p.jsonl"
    path.write_text("x\n" * 10)
    with pytest.raises(KeyboardInterrupt):
        scan(path, "t-interrupt")


@pytest.mark.parametrize(
    ("build", "field"),
    [
        (lambda: Layout(role=5), "Layout.role"),  # type: ignore[arg-type]
        (lambda: Layout(content=("message", "")), "Layout.content"),
        (lambda: Layout(user_roles="user"), "Layout.user_roles"),  # type: ignore[arg-type]
        (lambda: ToolEntry("bash"), "ToolEntry('bash').name"),
        (lambda: Blocks(text_key=""), "Blocks.text_key"),
        (lambda: Blocks(result_id_key=None), "Blocks.result_id_key"),  # type: ignore[arg-type]
        (lambda: Blocks(result_content_key=("response", "")), "Blocks.result_content_key"),
        (lambda: Layout(result_id="message.toolCallId"), "Layout.result_id: given without result_roles"),
        (lambda: Layout(result_roles=("user",)), "Layout.result_roles: 'user' is already"),
        (lambda: Layout(tool_call_result="result"), "Layout.tool_call_result: given without a tool_calls"),
        (lambda: Layout(result_roles="toolResult"), "Layout.result_roles"),  # type: ignore[arg-type]
        (lambda: register_format(FormatSpec(name="x1", layout=Layout(content=None))), "content:"),
        (lambda: register_format(FormatSpec(name="x2", layout=Layout(title_types=("a",)))), "title_types:"),
        (
            lambda: register_format(FormatSpec(name="x3", layout=Layout(), categories={"a": "b"})),
            "categories:",
        ),
        (lambda: register_format(FormatSpec(name="pi", layout=Layout())), "built-in"),
    ],
)
def test_a_bad_description_is_one_line_naming_its_field(build: Any, field: str) -> None:
    with pytest.raises(FormatDeclarationError) as caught:
        build()
    message = str(caught.value)
    assert field in message and "\n" not in message, message


def test_the_core_refuses_unknown_fields() -> None:
    with pytest.raises(ValueError, match="rolee: unknown field"):
        _core.declare_format("x4", {"rolee": ["type"]}, {})


def test_the_plugin_manager_registers_formats_and_skips_a_bad_one(tmp_path: Path) -> None:
    class Good:
        from sidelight import hookimpl

        @hookimpl
        def sidelight_formats(self) -> list[FormatSpec]:
            return [
                FormatSpec(name="t-plugin-good", layout=GEMINI),
                FormatSpec(name="t-plugin-bad", layout=Layout(role="type", content=None)),
            ]

    plugins = Plugins(entry_points=False)
    plugins.register(Good())
    formats = plugins.formats()
    assert "t-plugin-good" in formats and "t-plugin-bad" not in formats
    assert "t-plugin-good" in _core.declared_formats()
    assert any("t-plugin-bad" in b.name and "content:" in b.error for b in plugins.broken)
    assert plugins.categories()["t-plugin-good"] == {}


# --- tool results -----------------------------------------------------------------------------------------


def _pi_decode(line: bytes) -> list[Event] | None:
    """Pi's prompts, replies, tool calls and tool results in plain Python (a fallback decoder)."""
    record = json.loads(line)
    message = record.get("message") if record.get("type") == "message" else None
    if not isinstance(message, dict):
        return [Event.entry_type(record["type"])] if isinstance(record.get("type"), str) else None
    events = [Event.entry_type("message")]
    stamp, role, content = record.get("timestamp"), message.get("role"), message.get("content")
    blocks = [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
    texts = [b["text"] for b in blocks if b.get("type") == "text" and isinstance(b.get("text"), str)]
    if role == "user":
        events.append(Event.user(content if isinstance(content, str) else "\n".join(texts), stamp))
    elif role == "assistant":
        shown = [t for t in texts if t.strip()]
        events.append(Event.assistant(shown[-1] if shown else None, stamp))
        for b in blocks:
            if b.get("type") == "toolCall":
                events.append(Event.tool(b["name"], b.get("arguments"), id=b.get("id"), timestamp=stamp))
    elif role == "toolResult":
        text = content if isinstance(content, str) else ("\n".join(texts) if texts else None)
        events.append(Event.result(message.get("toolCallId"), text, is_error=message.get("isError") is True))
    return events


RESULT_LINES = [
    {"type": "session", "id": "s-results", "cwd": "/w", "timestamp": "2026-01-01T10:00:00.000Z"},
    {
        "type": "message",
        "timestamp": "2026-01-01T10:00:01.000Z",
        "message": {"role": "user", "content": [{"type": "text", "text": "run the tests"}]},
    },
    {
        "type": "message",
        "timestamp": "2026-01-01T10:00:02.000Z",
        "message": {
            "role": "assistant",
            "content": [
                {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "pytest -q"}},
                {"type": "toolCall", "id": "c2", "name": "read", "arguments": {"path": "missing.txt"}},
            ],
        },
    },
    {
        "type": "message",
        "timestamp": "2026-01-01T10:00:03.000Z",
        "message": {
            "role": "toolResult",
            "toolCallId": "c1",
            "content": [{"type": "text", "text": "..F\n1 failed, 2 passed\n\nCommand exited with code 1"}],
            "isError": True,
        },
    },
    {
        "type": "message",
        "timestamp": "2026-01-01T10:00:04.000Z",
        "message": {
            "role": "toolResult",
            "toolCallId": "c2",
            "content": [{"type": "text", "text": "ENOENT: no such file"}],
            "isError": True,
        },
    },
    {
        "type": "message",
        "timestamp": "2026-01-01T10:00:05.000Z",
        "message": {"role": "assistant", "content": [{"type": "text", "text": "One test fails."}]},
    },
]


def test_event_tuples_without_the_error_flag_are_still_read(tmp_path: Path) -> None:
    # Decoders written before results may build seven-field tuples themselves.
    assert Event.result("c", "x", is_error=True)[7] is True
    short = tuple(Event.user("hi"))[:7]
    register_format(FormatSpec(name="t-short", decode=lambda line: [short]))  # type: ignore[list-item]
    path = tmp_path / "s.jsonl"
    path.write_text("a\nb\n")
    activity = scan(path, "t-short")
    assert (activity.messages.user, activity.skipped.malformed_json) == (2, 0)


@pytest.mark.parametrize("fmt", ["pi", "t-pi", "t-pi-py"])
def test_recent_entries_carry_results_for_described_and_python_formats(tmp_path: Path, fmt: str) -> None:
    register_format(FormatSpec(name="t-pi-py", decode=_pi_decode))
    path = _write(tmp_path / "r.jsonl", RESULT_LINES)
    tools = [
        (e.tool_name, e.result, e.result_error) for e in recent_entries(path, fmt, 20) if e.role == "tool"
    ]
    assert tools == [
        ("bash", "..F\n1 failed, 2 passed\n\nCommand exited with code 1", True),
        ("read", "ENOENT: no such file", True),
    ]
    # Results are never counted.
    counted = scan(path, fmt)
    assert (counted.messages.user, counted.messages.assistant, counted.tools) == (
        1,
        2,
        {"bash": 1, "read": 1},
    )


@pytest.mark.parametrize("path", _pi_files(), ids=lambda p: p.name)
def test_pi_as_a_layout_gives_the_built_in_results(path: Path) -> None:
    register_format(FormatSpec(name="t-pi-py", decode=_pi_decode))

    def tools(fmt: str) -> list[tuple[str | None, str | None, str | None, bool]]:
        return [
            (e.tool_name, e.primary_arg, e.result, e.result_error)
            for e in recent_entries(path, fmt, 400)
            if e.role == "tool" and e.tool_name != "bashExecution"
        ]

    built_in = tools("pi")
    assert any(result is not None for *_, result, _ in built_in)
    assert tools("t-pi") == built_in
    if path.parent == DATA / "pi":  # the short decoder above knows the shapes of this session only
        assert tools("t-pi-py") == built_in


def test_history_of_described_and_python_formats_shows_results(home: Path, tmp_path: Path) -> None:
    class Formats:
        @hookimpl
        def sidelight_formats(self) -> list[FormatSpec]:
            return [
                FormatSpec(name="t-hist-layout", layout=PI_LAYOUT),
                FormatSpec(name="t-hist-python", decode=_pi_decode),
            ]

    plugins = Plugins(entry_points=False)
    plugins.register(Formats())
    path = _write(tmp_path / "h.jsonl", RESULT_LINES)
    shown: dict[str, list[tuple[str, str]]] = {}
    for fmt in ("pi", "t-hist-layout", "t-hist-python"):
        session = Session(key=f"t:{fmt}", name=fmt, path=path, format=fmt, group="g", resolver="path")
        shown[fmt] = [(m.role, m.content) for m in history(session, plugins=plugins)]
    assert shown["t-hist-layout"] == shown["t-hist-python"] == shown["pi"]
    reply = shown["pi"][-1][1].splitlines()
    assert reply == [
        "[bash pytest -q → exit 1: 1 failed, 2 passed …]",
        "[read missing.txt → error: ENOENT: no such file]",
        "One test fails.",
    ]
