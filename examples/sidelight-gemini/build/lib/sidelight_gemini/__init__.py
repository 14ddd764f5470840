"""sidelight plugin: Gemini CLI sessions (format ``gemini``, resolver ``gemini``).

Everything here uses sidelight's public plugin API only: the ``hookimpl`` marker, the records of
``sidelight.sessions`` and the format description classes of ``sidelight.formats``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

from sidelight import hookimpl
from sidelight.formats import Blocks, Event, Layout
from sidelight.sessions import FormatSpec, HostEvent, ResolverSpec, Session

if TYPE_CHECKING:
    from collections.abc import Iterator

    from sidelight.config import Settings

__all__ = ["FORMAT", "LAYOUT", "NAME", "decode_line", "list_sessions"]

NAME = "gemini"
SAMPLES = Path(__file__).parent / "samples"

#: Where a Gemini CLI JSONL line keeps what sidelight counts (packages/core/src/services/
#: chatRecordingService.ts and chatRecordingTypes.ts in google-gemini/gemini-cli).
LAYOUT = Layout(
    # The message kind is its ``type``: ``user``, ``gemini``, or ``info`` / ``error`` / ``warning``.
    role="type",
    user_roles=("user",),
    assistant_roles=("gemini",),
    content="content",
    # ``content`` is a string or a list of parts without a type: ``{"text"}``, ``{"text", "thought":
    # true}``, ``{"functionCall": {...}}``, ``{"functionResponse": {...}}`` (a tool result: the id of
    # its call, and ``response.output``, or ``response.error`` when the tool failed).
    blocks=Blocks(
        type_key=None,
        text=("text",),
        tool=("functionCall",),
        result=("functionResponse",),
        skip_flags=("thought",),
        result_id_key="id",
        result_error_key="response.error",
        result_content_key="response.output",
    ),
    tool_calls="toolCalls",
    # Where the CLI keeps a call's result: in the call, as ``functionResponse`` parts.
    tool_call_result="result",
    # A reply is written again, whole, when its tool calls or token counts arrive: one id, one message.
    message_id="id",
    timestamp="timestamp",
    session_id="sessionId",
    title=("$set", "summary"),
    # Metadata patches (a ``$set`` may restate the whole history) and rewind markers are not messages.
    skip_keys=("$set", "$rewindTo"),
    # The CLI's own context message, and sidelight's digest should it reach a prompt.
    skip_prompt_prefixes=("<session_context>", "[Session Activity]"),
)


def _text(content: object) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            p["text"]
            for p in content
            if isinstance(p, dict) and isinstance(p.get("text"), str) and p.get("thought") is not True
        ]
        return "\n".join(parts) if parts else None
    return None


def decode_line(line: bytes) -> list[Event] | None:
    """The same format in plain Python: the fallback decoder, and the reference the layout is tested on."""
    record = json.loads(line)
    if not isinstance(record, dict):
        raise ValueError("a line is a JSON object")
    events: list[Event] = []
    kind = record.get("type")
    if isinstance(kind, str):
        events.append(Event.entry_type(kind))
    if isinstance(record.get("sessionId"), str):
        events.append(Event.meta("session_id", record["sessionId"]))
    patch = record.get("$set")
    if isinstance(patch, dict) and isinstance(patch.get("summary"), str):
        events.append(Event.meta("title", patch["summary"]))
    if "$set" in record or "$rewindTo" in record:
        return events
    stamp = record.get("timestamp") if isinstance(record.get("timestamp"), str) else None
    content = record.get("content")
    if kind == "user":
        parts = content if isinstance(content, list) else []
        results = [_result(p) for p in parts if isinstance(p, dict) and "functionResponse" in p]
        text = _text(content)
        if results:
            events.extend(results)
        elif text is not None and not text.lstrip().startswith(LAYOUT.skip_prompt_prefixes):
            events.append(Event.user(text, stamp))
    elif kind == "gemini":
        message_id = record.get("id") if isinstance(record.get("id"), str) else None
        parts = (
            [p for p in content if isinstance(p, dict) and p.get("thought") is not True]
            if isinstance(content, list)
            else []
        )
        # The reply's text is its last text that is not blank (the core keeps the last one).
        texts = [p["text"] for p in parts if isinstance(p.get("text"), str) and p["text"].strip()]
        text = content if isinstance(content, str) else (texts[-1] if texts else None)
        events.append(Event.assistant(text, stamp, message_id))
        for part in parts:
            call = part.get("functionCall")
            if isinstance(call, dict) and isinstance(call.get("name"), str):
                events.append(_tool(call, stamp))
        for call in record.get("toolCalls") or ():
            if isinstance(call, dict) and isinstance(call.get("name"), str):
                events.append(_tool(call, stamp))
        for call in record.get("toolCalls") or ():
            if isinstance(call, dict) and isinstance(call.get("result"), list):
                call_id = call.get("id") if isinstance(call.get("id"), str) else None
                for part in call["result"]:
                    if isinstance(part, dict) and "functionResponse" in part:
                        result = _result(part)
                        events.append(result if result.id is not None else result._replace(id=call_id))
    return events


def _result(part: dict[str, object]) -> Event:
    """A ``functionResponse`` part: the id of its call, its output, or its error when the tool failed."""
    response = part["functionResponse"]
    inner = response if isinstance(response, dict) else {}
    body = inner.get("response") if isinstance(inner.get("response"), dict) else {}
    assert isinstance(body, dict)
    call_id, output, error = inner.get("id"), body.get("output"), body.get("error")
    failed = error is True or (isinstance(error, str) and error != "")
    text = output if isinstance(output, str) else (error if isinstance(error, str) and error else None)
    return Event.result(call_id if isinstance(call_id, str) else None, text, is_error=failed)


def _tool(call: dict[str, object], stamp: str | None) -> Event:
    args = call.get("args")
    name = call["name"]
    assert isinstance(name, str)
    call_id = call.get("id") if isinstance(call.get("id"), str) else None
    return Event.tool(name, args if isinstance(args, dict) else None, id=call_id, timestamp=stamp)  # type: ignore[arg-type]


#: Gemini CLI tools (packages/core/src/tools/tool-names.ts); any other counts as ``other``.
CATEGORIES = {
    "replace": "edit",
    "write_file": "edit",
    "read_file": "read",
    "read_many_files": "read",
    "glob": "read",
    "grep_search": "read",
    "search_file_content": "read",
    "list_directory": "read",
    "web_fetch": "read",
    "google_web_search": "read",
    "run_shell_command": "command",
}

FORMAT = FormatSpec(
    name=NAME,
    layout=LAYOUT,
    decode=decode_line,
    categories=CATEGORIES,
    injected_markers=("[Session Activity]",),
    description="Gemini CLI sessions (~/.gemini/tmp/<project>/chats/session-*.jsonl)",
    samples=tuple(sorted(SAMPLES.glob("*.jsonl"))),
)


def gemini_dir(settings: Settings) -> Path:
    override = os.environ.get("SIDELIGHT_GEMINI_DIR")
    return Path(override) if override else settings.home / ".gemini"


def roots(settings: Settings) -> list[Path]:
    tmp = gemini_dir(settings) / "tmp"
    return [tmp] if tmp.is_dir() else []


def _header_id(path: Path) -> str | None:
    try:
        with path.open("rb") as file:
            first = file.readline(64 * 1024)
        value = json.loads(first).get("sessionId")
    except (OSError, ValueError, AttributeError):
        return None
    return value if isinstance(value, str) else None


def _project_root(project: Path) -> str:
    try:
        return (project / ".project_root").read_text(encoding="utf-8").strip() or str(project)
    except OSError:
        return str(project)


def list_sessions(settings: Settings) -> Iterator[Session]:
    """Every session file under ``~/.gemini/tmp/*/chats/``, newest name clashes resolved by longer ids."""
    seen: set[str] = set()
    for root in roots(settings):
        for project in sorted(p for p in root.iterdir() if (p / "chats").is_dir()):
            group = _project_root(project)
            chats = project / "chats"
            for path in sorted(chats.glob("session-*.jsonl")):
                session_id = _header_id(path)
                short = path.stem.rsplit("-", 1)[-1]
                name = f"gemini-{short}"
                if name in seen:
                    name = f"gemini-{session_id or path.stem}"
                seen.add(name)
                subagents = chats / session_id if session_id else None
                extra = tuple(sorted(subagents.glob("*.jsonl"))) if subagents and subagents.is_dir() else ()
                yield Session(
                    key=f"gemini:{session_id or path.stem}",
                    name=name,
                    path=path,
                    format=NAME,
                    group=group,
                    resolver=NAME,
                    id=session_id,
                    extra_paths=extra,
                )


def current(event: HostEvent, settings: Settings) -> Session | None:
    """The session a Gemini CLI hook event comes from: by transcript path, else by session id."""
    if event.transcript_path is None and event.session_id is None:
        return None
    for session in list_sessions(settings):
        if event.transcript_path is not None and session.path == event.transcript_path:
            return session
        if event.session_id is not None and session.id == event.session_id:
            return session
    return None


@hookimpl
def sidelight_formats() -> Iterator[FormatSpec]:
    yield FORMAT


@hookimpl
def sidelight_resolvers() -> Iterator[ResolverSpec]:
    yield ResolverSpec(
        name=NAME,
        list_sessions=list_sessions,
        current=current,
        roots=roots,
        description="Gemini CLI sessions under ~/.gemini/tmp (SIDELIGHT_GEMINI_DIR overrides ~/.gemini)",
    )
