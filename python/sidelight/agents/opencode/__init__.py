"""Built-in template: opencode (format ``opencode``, resolver ``opencode``, injector ``opencode``).

**Where opencode keeps its sessions.** Not in transcripts: in one SQLite database,
``$XDG_DATA_HOME/opencode/opencode.db`` (default ``~/.local/share/opencode/opencode.db``, WAL mode),
tables ``session`` (``id``, ``directory``, ``title``, ``parent_id``…), ``message`` and ``part`` (each
with a ``data`` JSON text column). A message holds no text itself: its parts do (``text``, ``tool``,
``step-start``…), and every step of a reply is a message of its own.

**The export.** sidelight reads the database read-only (``mode=ro``, ``query_only``; a reader never
blocks opencode's writer in WAL mode) and appends what is new to one JSONL file per session,
``<state dir>/exports/opencode/<session id>.jsonl``: a ``session`` line when a session is first seen or its
title changes, then one ``message`` line per message (its parts inside, tool outputs cut). Its own
incremental cursor, per session, is the last message exported (``time_created``, ``id``), kept in
``<state dir>/exports/opencode/index.json`` with what the listing needs (directory, title, parent); the export
runs under an exclusive lock on that index, so two hooks never append the same message twice. A
message is exported once it is settled: a reply step once opencode marks it completed (or failed),
a prompt once a later message exists (its parts are written after it) or after
:data:`SETTLE_SECONDS`. The export files are then transcripts like any other: every reader keeps its
byte cursors into them, and the digest, ``sidelight read``, the recap and the watcher read them with
the ``opencode`` format below (a Python decoder; docs/activity.md says what it counts).

The database is opened only when it changed since the last export (its and its WAL's size, inode and
modification time are in the index), and ``sqlite3`` is imported only then: a prompt of any agent on
a machine without opencode pays one ``stat``. A database that is busy, locked or unreadable skips the
export for this prompt (one warning in the log); the sessions already exported are still listed.

**Records.** ``key`` = ``opencode:<session id>``, ``name`` = the session's title (opencode's default
``New session - …`` aside) else a short id, ``group`` = the session's directory, resolved. A child
session (a subagent's, ``parent_id``) is not listed on its own: its export is an ``extra_paths`` file
of its parent, as Claude Code's subagent files are.

**The watcher.** The resolver names the database and its WAL as its ``sources``: ``sidelight watch``
stats them on every pass and, when one changed, lists the sessions again, so the export is brought up
to date without a hook (the new lines then reach the watcher as any transcript's appends do).

**Current session.** A hook event from the ``opencode`` host names its session (``session_id``).

**Host.** The plugin ``plugin.ts`` of this folder (``sidelight install opencode``) runs
``sidelight hook opencode`` with one JSON object on stdin: ``{"event": "chat.message" |
"session.created" | "session.deleted", "session_id": ID, "message_id": ID | null, "cwd": DIR,
"prompt": TEXT | null}``; the hook prints the bare text, which the plugin stores with the prompt as a
synthetic, ignored text part (``synthetic: true``: never counted as a prompt, never reported back;
``ignored``: out of opencode's title request) and gives back to its chat requests (docs/hosts.md).
After any tool ran (``tool.execute.after``) it sends ``"event": "after_tool"`` (with ``tool_name``); the
news within the turn it prints is appended to the tool's output, after a blank line.
"""

# Hot path: this module is imported on every prompt of every agent. Only os, json and what the other
# templates import; sqlite3 only when there is a database to read.

from __future__ import annotations

import os
import time
from pathlib import Path

from sidelight._fast import jsonio
from sidelight._fast._hookimpl import hookimpl
from sidelight._fast.logs import get_logger
from sidelight._fast.patterns import Pattern
from sidelight.agents import opencode_database
from sidelight.engine import exports
from sidelight.engine.paths import real
from sidelight.records import AgentSpec, EventName, FormatSpec, HostEvent, InjectorSpec, ResolverSpec, Session
from sidelight.statefile import append_lines
from sidelight.statelayout import export_dir as state_export_dir
from sidelight.timestamps import iso_ms

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping
    from typing import Any

    from sidelight.config import Settings

__all__ = [
    "CATEGORIES",
    "EVENTS",
    "NAME",
    "database_path",
    "decode",
    "export",
    "export_dir",
    "list_sessions",
    "read_event",
    "sources",
]

logger = get_logger(__name__)

NAME = "opencode"

#: opencode's tool names (lowercase) and what they do; a tool not listed (``todowrite``, ``task``,
#: ``webfetch``, an MCP tool…) counts as ``other``.
CATEGORIES: dict[str, str] = {
    "bash": "command",
    "edit": "edit",
    "write": "edit",
    "multiedit": "edit",
    "patch": "edit",
    "apply_patch": "edit",
    "read": "read",
    "glob": "read",
    "grep": "read",
    "list": "read",
    "codesearch": "read",
}

#: The argument that names what a tool acts on, by tool; other tools: the first of :data:`_PRIMARY_KEYS`.
_PRIMARY_BY_TOOL: dict[str, str] = {
    "bash": "command",
    "read": "filePath",
    "write": "filePath",
    "edit": "filePath",
    "multiedit": "filePath",
    "glob": "pattern",
    "grep": "pattern",
    "list": "path",
    "webfetch": "url",
    "websearch": "query",
    "codesearch": "query",
    "task": "description",
    "skill": "name",
}
_PRIMARY_KEYS = ("filePath", "file_path", "path", "command", "pattern", "query", "url")
_PATCH_FILE = Pattern(r"(?m)^\*\*\* (?:Add|Update|Delete) File: (.+)$")

#: The host events the plugin sends, and what each one is.
EVENTS: Mapping[str, EventName] = {
    "chat.message": "UserPromptSubmit",
    "session.created": "SessionStart",
    "session.deleted": "SessionEnd",
}
#: opencode's tools that write a file (``write{filePath, content}``, ``edit{filePath, oldString,
#: newString}``): the plugin's ``tool.execute.before`` asks before these only (``before_tool``, with
#: ``tool_name`` and ``tool_input``: the stale-write guard's).
WRITE_TOOLS = ("write", "edit")

#: A prompt with no message after it is exported this long after it was written (opencode writes
#: the prompt's parts after the message itself; a reply's first step comes after both).
SETTLE_SECONDS = 60
#: A reply step opencode never marked completed (it was killed) is exported this long after its
#: last update, so that one dead step never holds up the rest of its session.
STALE_SECONDS = 30 * 60
#: A tool's output or error is cut to this many characters in the export (the reader shows one line).
OUTPUT_LIMIT = 2000
#: The titles opencode gives a session before it has one of its own.
_DEFAULT_TITLE = Pattern(r"^(New|Child) session - \d{4}-\d\d-\d\dT")
_SESSION_ID = Pattern(r"^[A-Za-z0-9_-]{1,128}$")


# --- Where things are ------------------------------------------------------------------------------


#: opencode's database, and where sidelight's export of its sessions lives (``<state dir>/exports/opencode``).
database_path = opencode_database


def export_dir(settings: Settings) -> str:
    """Where sidelight's export of opencode's sessions and its index live
    (:func:`sidelight.statelayout.export_dir`)."""
    return state_export_dir(settings.state_dir, NAME)


# --- The export ------------------------------------------------------------------------------------


def export(settings: Settings) -> dict[str, dict[str, Any]]:
    """Brings the export files up to date with opencode's database and returns the index's sessions
    (session id -> ``directory``, ``title``, ``parent``, …); ``{}`` without a database. Never raises
    for a database that cannot be read: it logs one warning and returns what was exported before
    (the index and its lock: :func:`sidelight.engine.exports.update`)."""
    db = database_path(settings)
    source = [exports.stat_key(db), exports.stat_key(db + "-wal")]
    if source[0] is None:
        return {}
    folder = export_dir(settings)

    def current(index: dict[str, Any]) -> bool:
        return index.get("source") == source and not index.get("pending")

    def run(index: dict[str, Any]) -> dict[str, Any] | None:
        if current(index):  # another hook exported while this one waited
            return None
        try:
            return _export(db, folder, index, source)
        except Exception as error:  # busy, locked, damaged, another schema: this prompt goes without
            logger.warning("opencode: skipped reading %s this time: %s: %s", db, type(error).__name__, error)
            return None

    return exports.update(NAME, folder, current, run)


def _connect(db: str) -> Any:
    """A read-only connection: ``mode=ro`` (it never writes the database; SQLite may create the
    ``-shm`` file a WAL reader needs), ``query_only``, and a short busy timeout."""
    import sqlite3

    escaped = db.replace("%", "%25").replace("?", "%3f").replace("#", "%23")
    connection = sqlite3.connect(f"file:{escaped}?mode=ro", uri=True, timeout=0.25, isolation_level=None)
    connection.execute("PRAGMA query_only = 1")
    return connection


def _export(db: str, folder: str, index: dict[str, Any], source: list[Any]) -> dict[str, Any]:
    """One export pass, under the index's lock: the new index."""
    sessions: dict[str, dict[str, Any]] = dict(index.get("sessions") or {})
    pending = False
    now_ms = time.time() * 1000
    connection = _connect(db)
    try:
        # One read transaction: every query sees the same snapshot of the database.
        connection.execute("BEGIN")
        rows = connection.execute(
            "SELECT id, directory, title, parent_id, time_created, time_updated FROM session"
        ).fetchall()
        for sid, directory, title, parent, created, updated in rows:
            if not isinstance(sid, str) or not _SESSION_ID().match(sid):
                continue
            known = sessions.get(sid)
            if known is not None and known.get("updated") == updated and not known.get("pending"):
                continue
            entry = dict(known) if known is not None else {}
            entry.update(
                directory=directory if isinstance(directory, str) else "",
                parent=parent if isinstance(parent, str) else None,
                created=created,
                updated=updated,
            )
            lines: list[bytes] = []
            shown = title if isinstance(title, str) and not _DEFAULT_TITLE().match(title) else None
            if known is None or entry.get("title") != shown:
                entry["title"] = shown
                lines.append(_session_line(sid, entry))
            after = entry.get("after") or [0, ""]
            messages, waiting = _settled_messages(connection, sid, after, now_ms)
            entry["pending"] = waiting
            pending = pending or waiting
            if messages:
                parts = _parts(connection, sid, [m[0] for m in messages])
                for mid, time_created, info in messages:
                    lines.append(_message_line(sid, mid, time_created, info, parts.get(mid, [])))
                entry["after"] = [messages[-1][1], messages[-1][0]]
            if lines:
                append_lines(exports.export_file(folder, sid), b"".join(lines))
            sessions[sid] = entry
    finally:
        connection.close()
    return {"source": source, "pending": pending, "sessions": sessions}


def _settled_messages(
    connection: Any, sid: str, after: list[Any], now_ms: float
) -> tuple[list[tuple[str, int, dict[str, Any]]], bool]:
    """The messages of ``sid`` after the cursor ``after`` that are settled, in order, and whether one
    is still being written (the export stops at it, to take it up on a later pass)."""
    start, last_id = after[0], after[1]
    rows = connection.execute(
        "SELECT id, time_created, time_updated, data FROM message WHERE session_id = ? AND "
        "(time_created > ? OR (time_created = ? AND id > ?)) ORDER BY time_created, id",
        (sid, start, start, last_id),
    ).fetchall()
    settled: list[tuple[str, int, dict[str, Any]]] = []
    for n, (mid, created, updated, data) in enumerate(rows):
        try:
            info = jsonio.loads(data)
        except (TypeError, ValueError):
            info = None
        if not isinstance(info, dict):
            info = {}
        if info.get("role") == "assistant":
            times = info.get("time")
            done = isinstance(times, dict) and bool(times.get("completed"))
            ready = done or info.get("error") is not None or now_ms - updated > STALE_SECONDS * 1000
        else:
            ready = n + 1 < len(rows) or now_ms - created > SETTLE_SECONDS * 1000
        if not ready:
            return settled, True
        settled.append((mid, created, info))
    return settled, False


def _parts(connection: Any, sid: str, message_ids: list[str]) -> dict[str, list[dict[str, Any]]]:
    """The parts of these messages, by message, in opencode's order (by part id)."""
    found: dict[str, list[dict[str, Any]]] = {}
    for start in range(0, len(message_ids), 500):
        chunk = message_ids[start : start + 500]
        marks = ",".join("?" * len(chunk))
        for mid, pid, data in connection.execute(
            f"SELECT message_id, id, data FROM part WHERE session_id = ? AND message_id IN ({marks}) "
            "ORDER BY message_id, id",
            (sid, *chunk),
        ):
            try:
                part = jsonio.loads(data)
            except (TypeError, ValueError):
                continue
            if isinstance(part, dict):
                kept = _kept_part(pid, part)
                if kept is not None:
                    found.setdefault(mid, []).append(kept)
    return found


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _cut(value: Any) -> Any:
    return value[:OUTPUT_LIMIT] if isinstance(value, str) else None


def _kept_part(pid: str, part: dict[str, Any]) -> dict[str, Any] | None:
    """What the export keeps of a part: text, tools (outputs cut), files and subtasks by name; steps,
    snapshots, reasoning and the rest are left out (nothing that is counted or shown)."""
    kind = part.get("type")
    if kind == "text":
        kept = {"id": pid, "type": kind, "text": part.get("text")}
        for flag in ("synthetic", "ignored"):
            if part.get(flag):
                kept[flag] = True
        return kept
    if kind == "tool":
        state = _dict(part.get("state"))
        times = _dict(state.get("time"))
        kept_state = {
            "status": state.get("status"),
            "input": state.get("input") if isinstance(state.get("input"), dict) else {},
            "output": _cut(state.get("output")),
            "error": _cut(state.get("error")),
            "time": {"start": times.get("start")},
        }
        # A shell command that exits non-zero is still "completed": its exit code is only here.
        code = _dict(state.get("metadata")).get("exit")
        if isinstance(code, int) and not isinstance(code, bool):
            kept_state["exit"] = code
        return {
            "id": pid,
            "type": kind,
            "tool": part.get("tool"),
            "callID": part.get("callID"),
            "state": kept_state,
        }
    if kind == "file":
        return {"id": pid, "type": kind, "filename": part.get("filename"), "mime": part.get("mime")}
    if kind in ("subtask", "agent"):
        return {"id": pid, "type": kind, "name": part.get("name"), "description": part.get("description")}
    return None


_INFO_KEYS = ("role", "time", "parentID", "agent", "modelID", "providerID", "path", "finish", "error")


def _message_line(sid: str, mid: str, created: int, info: dict[str, Any], parts: list[Any]) -> bytes:
    line = {
        "type": "message",
        "id": mid,
        "session_id": sid,
        "timestamp": iso(created),
        "role": info.get("role"),
        "info": {k: info[k] for k in _INFO_KEYS if k in info},
        "parts": parts,
    }
    return exports.line(line)


def _session_line(sid: str, entry: Mapping[str, Any]) -> bytes:
    line = {
        "type": "session",
        "id": sid,
        "directory": entry.get("directory"),
        "title": entry.get("title"),
        "parent_id": entry.get("parent"),
        "timestamp": iso(entry["created"]) if isinstance(entry.get("created"), int) else None,
    }
    return exports.line(line)


#: Epoch milliseconds as ISO 8601 text (the export's timestamps).
iso = iso_ms


# --- The format: the export's lines ----------------------------------------------------------------

Event = exports.Event


def _primary(tool: str, arguments: Mapping[str, Any]) -> str | None:
    key = _PRIMARY_BY_TOOL.get(tool)
    value = arguments.get(key) if key is not None else None
    if isinstance(value, str) and value.strip():
        return value
    patch = arguments.get("patchText")
    if isinstance(patch, str):
        match = _PATCH_FILE().search(patch)
        if match:
            return match.group(1).strip()
    for key in _PRIMARY_KEYS:
        value = arguments.get(key)
        if isinstance(value, str) and value.strip():
            return value
    return None


def decode(line: bytes) -> list[Event]:
    """The events of one line of an export file (see the module docstring and docs/activity.md), as
    the tuples :class:`sidelight.formats.Event` names; ``ValueError`` for a line that is not a JSON
    object (counted as malformed)."""
    entry, events = exports.decode_head(line, "directory")
    if entry.get("type") != "message":
        return events
    stamp = entry.get("timestamp") if isinstance(entry.get("timestamp"), str) else None
    parts = [p for p in entry.get("parts") or () if isinstance(p, dict)]
    role = entry.get("role")
    texts = [
        p["text"]
        for p in parts
        if p.get("type") == "text"
        and isinstance(p.get("text"), str)
        and not p.get("synthetic")
        # ``ignored``: text opencode keeps out of the conversation
        and not p.get("ignored")
    ]
    if role == "user":
        if texts:
            events.append(("user", "\n".join(texts), stamp, None, None, None, None, False))
        return events
    if role != "assistant":
        return events
    info = entry.get("info")
    path = info.get("path") if isinstance(info, dict) else None
    cwd = path.get("cwd") if isinstance(path, dict) else None
    if isinstance(cwd, str) and cwd:
        events.append(("cwd", cwd, None, None, None, None, None, False))
    mid = entry.get("id") if isinstance(entry.get("id"), str) else None
    for text in texts or [None]:
        events.append(("assistant", text, stamp, mid, None, None, None, False))
    for part in parts:
        if part.get("type") != "tool" or not isinstance(part.get("tool"), str):
            continue
        tool: str = part["tool"]
        state = _dict(part.get("state"))
        arguments = _dict(state.get("input"))
        started = _dict(state.get("time")).get("start")
        call = part.get("callID") if isinstance(part.get("callID"), str) else None
        events.append(
            (
                "tool",
                None,
                iso(started) if isinstance(started, (int, float)) else stamp,
                call,
                tool,
                jsonio.dumps(arguments, ensure_ascii=False),
                _primary(tool.lower(), arguments),
                False,
            )
        )
        status = state.get("status")
        if status in ("completed", "error"):
            text = state.get("output") if status == "completed" else state.get("error")
            result = text if isinstance(text, str) else None
            code = state.get("exit")
            failed = status == "error"
            if isinstance(code, int) and not isinstance(code, bool) and code != 0:
                # Said as the other agents' results say it, for the one rule that reads exit codes.
                result, failed = f"{result or ''}\nExit code: {code}", True
            events.append(("result", result, None, call, None, None, None, failed))
    return events


FORMAT = FormatSpec(
    name=NAME,
    # The core reads events as plain tuples of Event's fields: no Event (sidelight._declared) is made.
    decode=decode,  # type: ignore[arg-type]
    categories=CATEGORIES,
    # Our digest is a synthetic part (never counted); its marker, should it come back another way.
    injected_markers=("[Session Activity]",),
    description="opencode sessions, exported from ~/.local/share/opencode/opencode.db "
    "to <state dir>/exports/opencode/<session id>.jsonl",
)


# --- The resolver ----------------------------------------------------------------------------------


def _name(sid: str, entry: Mapping[str, Any]) -> str:
    title = entry.get("title")
    if isinstance(title, str) and title.strip():
        return title
    # ``ses_`` and twelve hex digits of time, then random letters: the time's first eight tell
    # sessions apart (opencode counts them down, so they differ in their first digits).
    return sid[4:12] if sid.startswith("ses_") and len(sid) > 12 else sid[:8]


def _session(sid: str, entry: Mapping[str, Any], folder: str, children: tuple[Path, ...] = ()) -> Session:
    directory = entry.get("directory")
    return Session(
        key=f"{NAME}:{sid}",
        name=_name(sid, entry),
        path=Path(exports.export_file(folder, sid)),
        format=NAME,
        group=real(directory) if isinstance(directory, str) and directory else folder,
        resolver=NAME,
        id=sid,
        extra_paths=children,
    )


def list_sessions(settings: Settings) -> Iterator[Session]:
    """Every opencode session that has an export file; child sessions as their parent's extra files."""
    sessions = export(settings)
    if not sessions:
        return
    folder = export_dir(settings)
    children: dict[str, list[Path]] = {}
    for sid, entry in sessions.items():
        parent = entry.get("parent")
        if isinstance(parent, str) and parent in sessions:
            children.setdefault(parent, []).append(Path(exports.export_file(folder, sid)))
    for sid, entry in sessions.items():
        parent = entry.get("parent")
        if isinstance(parent, str) and parent in sessions:
            continue
        yield _session(sid, entry, folder, tuple(children.get(sid, ())))


def current(event: HostEvent, settings: Settings) -> Session | None:
    """The opencode session an event of the ``opencode`` host names (exported first, so that its own
    export is current when the hook reads what it touched)."""
    if event.host != NAME or not event.session_id or not _SESSION_ID().match(event.session_id):
        return None
    sessions = export(settings)
    entry = sessions.get(event.session_id)
    if entry is None:  # not in the database yet (a new session's first prompt): as the event says
        entry = {"directory": os.fspath(event.cwd) if event.cwd is not None else ""}
    return _session(event.session_id, entry, export_dir(settings))


def roots(settings: Settings) -> list[Path]:
    return exports.roots(export_dir(settings))


def sources(settings: Settings) -> list[str]:
    """The database and its WAL (where opencode's writes land first): a watcher that sees one change
    lists the sessions again, which exports what is new (:func:`export`, under its lock)."""
    db = database_path(settings)
    return [db, db + "-wal"]


RESOLVER = ResolverSpec(
    name=NAME,
    list_sessions=list_sessions,
    current=current,
    roots=roots,
    sources=sources,
    description="opencode sessions from its SQLite database, exported read-only; grouped by directory",
)


# --- The injector ----------------------------------------------------------------------------------


def read_event(payload: Mapping[str, Any]) -> HostEvent | None:
    """What sidelight's opencode plugin sends (see the module docstring) as a :class:`HostEvent`."""
    if not isinstance(payload, dict):
        return None
    event = EVENTS.get(payload.get("event"))  # type: ignore[arg-type]
    sid, cwd, prompt = payload.get("session_id"), payload.get("cwd"), payload.get("prompt")
    if event is None:
        from sidelight.hostio import (
            EXTENSION_AFTER_TOOL,
            EXTENSION_BEFORE_TOOL,
            after_tool_event,
            before_tool_event,
        )

        if payload.get("event") == EXTENSION_AFTER_TOOL:  # any tool ran: the news within the turn
            return after_tool_event(
                NAME,
                payload,
                session_id=sid if isinstance(sid, str) and sid else None,
                cwd=Path(cwd) if isinstance(cwd, str) and cwd else None,
            )
        tool = payload.get("tool_name")
        if payload.get("event") != EXTENSION_BEFORE_TOOL or tool not in WRITE_TOOLS:
            return None
        return before_tool_event(
            NAME,
            payload,
            str(tool),
            payload.get("tool_input"),
            session_id=sid if isinstance(sid, str) and sid else None,
            cwd=Path(cwd) if isinstance(cwd, str) and cwd else None,
        )
    return HostEvent(
        host=NAME,
        event=event,
        session_id=sid if isinstance(sid, str) and sid else None,
        cwd=Path(cwd) if isinstance(cwd, str) and cwd else None,
        prompt=prompt if isinstance(prompt, str) else None,
        raw=payload,
    )


def render(event: HostEvent, text: str | None) -> str | None:
    """The bare text: the plugin makes it a synthetic part of the prompt."""
    return text if text else None


@hookimpl
def sidelight_formats() -> Iterator[FormatSpec]:
    yield FORMAT


@hookimpl
def sidelight_resolvers() -> Iterator[ResolverSpec]:
    yield RESOLVER


def render_refusal(event: HostEvent, reason: str) -> str | None:
    """``{"block": true, "reason": REASON}``: the plugin's ``tool.execute.before`` throws an ``Error``
    of ``REASON`` (opencode's way to refuse a tool), which the model gets as the tool's result."""
    return jsonio.dumps({"block": True, "reason": reason}, ensure_ascii=False)


@hookimpl
def sidelight_injectors() -> Iterator[InjectorSpec]:
    yield InjectorSpec(
        name=NAME,
        read_event=read_event,
        render=render,
        description="sidelight's opencode plugin (chat.message, session.created, session.deleted; "
        "tool.execute.before of a write; tool.execute.after)",
        refuse=render_refusal,
    )


# -- the agent -------------------------------------------------------------------------------------------


def injected_values(line: Mapping[str, Any]) -> Iterator[Any]:
    """Where sidelight's text lands in an exported opencode session: a message's synthetic text part, and
    a tool part's output (the news within the turn, appended by the plugin's ``tool.execute.after``)."""
    parts = line.get("parts") if line.get("type") == "message" else None
    if isinstance(parts, list):
        for p in parts:
            if isinstance(p, dict) and p.get("synthetic"):
                yield p.get("text")
            elif isinstance(p, dict) and p.get("type") == "tool" and isinstance(p.get("state"), dict):
                yield p["state"].get("output")


@hookimpl
def sidelight_agents() -> Iterator[AgentSpec]:
    from sidelight.records import AgentSpec, HostHook

    yield AgentSpec(
        name=NAME,
        title="opencode",
        formats=(NAME,),
        resolver=NAME,
        hosts=(NAME,),
        installer=NAME,
        # sidelight's plugin (agents/opencode/plugin.ts), in opencode's process: it hears a session's
        # start and end, but cannot add to the conversation then; tool.execute.before can only refuse
        # (it throws), tool.execute.after appends to the tool's output (the news within the turn).
        hooks=(
            HostHook("prompt", "chat.message", {"inject"}),
            HostHook("start", "session.created"),
            HostHook("end", "session.deleted"),
            HostHook("before_tool", "tool.execute.before", {"refuse"}),
            HostHook("after_tool", "tool.execute.after", {"inject"}),
        ),
        timeout_unit="",
        variables=("XDG_DATA_HOME",),  # its database, and sidelight's export of it
        injected_where="opencode's synthetic text part or a tool's output",
        injected_values=injected_values,
    )


# --- The installer (``sidelight install`` / ``uninstall``): this folder's ``install.py``, imported only
# when the installers are asked for (a prompt hook imports this module, and needs none of it).

if TYPE_CHECKING:
    from sidelight.records import InstallerSpec


@hookimpl
def sidelight_installers() -> Iterator[InstallerSpec]:
    from sidelight.agents.opencode.install import INSTALLER

    yield INSTALLER
