"""Built-in template: Cline CLI (format ``cline``, resolver ``cline``, injector ``cline``).

**Where Cline keeps its sessions.** ``~/.cline/data/sessions/<id>/`` (``$CLINE_DATA_DIR``, else
``$CLINE_DIR/data``, else ``~/.cline/data``): ``<id>.messages.json``, ONE JSON document that Cline
rewrites as the session goes (``{"version": 1, "sessionId", "messages": [...], ...}``; messages with
Anthropic-style blocks, ``text``, ``tool_use``, ``tool_result``), and ``<id>.json`` (``cwd``, ``pid``,
``started_at``, ``ended_at``, ``status``, ``metadata.title``). The id is Cline's
``<epoch ms>_<5 letters>``; a session is named by its letters (sessions started within a second share
their first digits).

**The export.** A document rewritten in place cannot be tailed, so sidelight appends what is new in it
to one JSONL file per session, ``<state dir>/exports/cline/<id>.jsonl`` (as opencode's database is
exported): a ``session`` line when a session is first seen, then one ``message`` line per message
(tool results cut to :data:`OUTPUT_LIMIT` characters). Its incremental cursor, per session, is the number
of messages exported and the last one's id, kept with the document's ``stat`` in
``<state dir>/exports/cline/index.json``; the export runs under an exclusive lock on that index, so two
hooks never append the same message twice. A document read while Cline rewrites it (torn, truncated,
not JSON) is left for a later look with its cursor unmoved: nothing is lost, nothing is said twice, and
nothing raises. Only messages after the cursor are appended (found by the last exported id; when Cline
dropped that message, by the count). A document that did not change since is not opened (one ``stat``).
The export files are transcripts like any other: every reader keeps byte cursors into them and reads
them with the ``cline`` format below (a Python decoder).

**What is counted.** A typed prompt (Cline wraps it in ``<user_input mode="act">``) is the user's; a
user message with ``metadata.displayRole: "system"`` is the hooks' context (sidelight's own text: never
counted); tools ``run_commands{commands}`` (one command each), ``editor{path, old_text, new_text,
insert_line}`` (it creates a missing file), ``read_files{files: [{path}]}`` and the rest by
:data:`CATEGORIES`.

**Current session.** A hook event of the ``cline`` host names its session
(``sessionContext.rootSessionId``); its export is brought up to date first.

**Host.** Cline runs the executables named after an event in ``~/.cline/hooks/`` (``sidelight install
cline`` writes ``PreToolUse`` and ``PostToolUse`` there) with a JSON object on stdin: ``hookName``
``tool_call`` (``tool_call: {id, name, input}``) before a tool, ``tool_result`` after it. The answer
``{"cancel": false, "contextModification": TEXT, "errorMessage": ""}`` reaches the model after the
tool's result (both events' texts in one user message). ``cancel`` would abort the whole run: sidelight
never sets it, so the stale-write guard only informs there. A headless run sends no per-prompt text
(``TaskStart``'s is not sent, ``UserPromptSubmit`` does not fire): no digest per prompt.
"""

# Hot path: a prompt of any agent imports this module when Cline's folders exist. Only os and what the
# other templates import.
# ruff: noqa: PTH110, PTH118

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from sidelight._fast import jsonio
from sidelight._fast._hookimpl import hookimpl
from sidelight._fast.logs import get_logger
from sidelight._fast.patterns import Pattern
from sidelight.agents import cline_data_dir
from sidelight.engine import exports
from sidelight.engine.paths import real, short_id
from sidelight.records import AgentSpec, FormatSpec, HostEvent, InjectorSpec, ResolverSpec, Session
from sidelight.statefile import append_lines
from sidelight.statelayout import export_dir as state_export_dir
from sidelight.timestamps import iso_ms

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping
    from typing import Any

    from sidelight.config import Settings
    from sidelight.records import Liveness

__all__ = [
    "CATEGORIES",
    "NAME",
    "decode",
    "export",
    "export_dir",
    "list_sessions",
    "live_sessions",
    "read_event",
    "render",
    "sessions_dir",
]

logger = get_logger(__name__)

NAME = "cline"

#: Cline's tools and what they do; a tool not listed (``fetch_web_content``, ``spawn_agent``,
#: ``team_*``, ``ask_question``, an MCP tool…) counts as ``other``.
CATEGORIES: dict[str, str] = {
    "run_commands": "command",
    "editor": "edit",
    "read_files": "read",
    "search_codebase": "read",
}
#: Cline's tool that writes a file: its ``PreToolUse`` is the stale-write guard's (inform only).
WRITE_TOOLS = ("editor",)
#: A tool's result is cut to this many characters in the export (the reader shows one line).
OUTPUT_LIMIT = 2000
_SESSION_ID = Pattern(r"^[A-Za-z0-9_-]{1,128}$")
_USER_INPUT = Pattern(r'(?s)^\s*<user_input mode="[a-z]*">(.*)</user_input>\s*$')
_MESSAGES = ".messages.json"


# --- Where things are ------------------------------------------------------------------------------


def sessions_dir(settings: Settings) -> str:
    """Cline's sessions folder: ``<data dir>/sessions`` (:func:`sidelight.agents.cline_data_dir`)."""
    return os.path.join(cline_data_dir(settings), "sessions")


def export_dir(settings: Settings) -> str:
    """Where sidelight's export of Cline's sessions and its index live (``<state dir>/exports/cline``)."""
    return state_export_dir(settings.state_dir, NAME)


# --- The export ------------------------------------------------------------------------------------


def _sessions_on_disk(settings: Settings) -> dict[str, str]:
    """Session id -> its folder, for every folder of Cline's sessions folder with a messages document."""
    found: dict[str, str] = {}
    try:
        with os.scandir(sessions_dir(settings)) as entries:
            for entry in entries:
                if _SESSION_ID().match(entry.name) and os.path.exists(
                    os.path.join(entry.path, entry.name + _MESSAGES)
                ):
                    found[entry.name] = entry.path
    except OSError:
        pass
    return found


def export(settings: Settings, only: str | None = None) -> dict[str, dict[str, Any]]:
    """Brings the export files up to date with Cline's documents (``only``: that session's alone) and
    returns the index's sessions (id -> ``cwd``, ``title``, ``count``, ``last``…). Never raises: a
    document that cannot be read now (being rewritten, unreadable) is retried at a later call (the
    index and its lock: :func:`sidelight.engine.exports.update`)."""
    folder = export_dir(settings)
    on_disk = _sessions_on_disk(settings)
    if only is not None:
        on_disk = {k: v for k, v in on_disk.items() if k == only}
    keys = {sid: exports.stat_key(os.path.join(path, sid + _MESSAGES)) for sid, path in on_disk.items()}

    def current(index: dict[str, Any]) -> bool:
        known: dict[str, dict[str, Any]] = index.get("sessions") or {}
        return all(known.get(sid, {}).get("source") == key for sid, key in keys.items())

    def run(index: dict[str, Any]) -> dict[str, Any] | None:
        sessions: dict[str, dict[str, Any]] = dict(index.get("sessions") or {})
        changed = False
        for sid, path in sorted(on_disk.items()):
            try:
                changed = _export_one(sid, path, folder, sessions) or changed
            except Exception as error:  # one session's trouble never stops the others, nor the hook
                logger.warning(
                    "cline: skipped exporting %s this time: %s: %s", sid, type(error).__name__, error
                )
        return {"sessions": sessions} if changed else None

    return exports.update(NAME, folder, current, run)


def _export_one(sid: str, path: str, folder: str, sessions: dict[str, dict[str, Any]]) -> bool:
    """Appends the new messages of one session's document to its export; whether the index changed. A
    document that does not parse (caught mid-rewrite) changes nothing: its ``stat`` is not recorded, so
    the next call reads it again."""
    document_path = os.path.join(path, sid + _MESSAGES)
    source = exports.stat_key(document_path)
    entry = dict(sessions.get(sid) or {})
    if source is None or entry.get("source") == source:
        return False
    document = exports.read_json(document_path)
    messages = document.get("messages") if isinstance(document, dict) else None
    if not isinstance(messages, list):
        logger.debug("cline: %s is being written; read later", document_path)
        return False
    lines: list[bytes] = []
    if not entry:
        meta = exports.read_json(os.path.join(path, sid + ".json"))
        meta = meta if isinstance(meta, dict) else {}
        title = meta.get("metadata", {}).get("title") if isinstance(meta.get("metadata"), dict) else None
        cwd = meta.get("cwd") or meta.get("workspace_root")
        entry = {
            "cwd": cwd if isinstance(cwd, str) else "",
            "title": title if isinstance(title, str) else None,
            "count": 0,
            "last": None,
        }
        lines.append(
            exports.line({"type": "session", "id": sid, "cwd": entry["cwd"], "title": entry["title"]})
        )
    start = _new_from(messages, entry)
    for message in messages[start:]:
        if isinstance(message, dict):
            lines.append(exports.line(_kept_message(sid, message)))
    if start < len(messages):
        last = messages[-1]
        entry["last"] = last.get("id") if isinstance(last, dict) else None
    entry["count"] = max(len(messages), int(entry.get("count") or 0))
    entry["source"] = source
    if lines:
        append_lines(exports.export_file(folder, sid), b"".join(lines))
    sessions[sid] = entry
    return True


def _new_from(messages: list[Any], entry: Mapping[str, Any]) -> int:
    """Where the messages not exported yet begin: after the last exported message's id (looked for
    where the count says first), else after the count (a document that dropped that message)."""
    count = int(entry.get("count") or 0)
    last = entry.get("last")
    if last is None:
        return min(count, len(messages))
    guess = count - 1
    if 0 <= guess < len(messages) and isinstance(messages[guess], dict) and messages[guess].get("id") == last:
        return count
    for n in range(len(messages) - 1, -1, -1):
        if isinstance(messages[n], dict) and messages[n].get("id") == last:
            return n + 1
    return min(count, len(messages))


def _cut(value: Any) -> str | None:
    return value[:OUTPUT_LIMIT] if isinstance(value, str) else None


def _kept_result(block: Mapping[str, Any]) -> dict[str, Any]:
    """A tool result as the export keeps it: its text cut, or (Cline's own tools: one ``{query,
    result, success}`` per command of ``run_commands``, per file of ``read_files``; ``editor``'s as JSON
    text) ``results``, each output cut."""
    kept = {k: block.get(k) for k in ("type", "tool_use_id", "name", "is_error")}
    content = block.get("content")
    if isinstance(content, str) and content.startswith("{"):  # ``editor``'s: one result as JSON text
        with contextlib.suppress(ValueError):
            content = jsonio.loads(content)
    items: list[Any] = content if isinstance(content, list) else [content]
    if items and all(isinstance(i, dict) and "query" in i for i in items):
        kept["results"] = [{"result": _cut(i.get("result")), "success": i.get("success")} for i in items]
        return kept
    if isinstance(content, str):
        kept["content"] = _cut(content)
    elif content is not None:
        texts = [i.get("text") if isinstance(i, dict) else None for i in items]
        if all(isinstance(t, str) for t in texts):
            kept["content"] = _cut("\n".join(texts))  # type: ignore[arg-type]
        else:
            kept["content"] = _cut(jsonio.dumps(content, ensure_ascii=False))
    return kept


def _kept_message(sid: str, message: Mapping[str, Any]) -> dict[str, Any]:
    """What the export keeps of a message: its blocks (tool results cut), its time, and whether it is
    the hooks' context (``hook``: ``metadata.displayRole`` ``system``)."""
    blocks = []
    content = message.get("content")
    for block in [{"type": "text", "text": content}] if isinstance(content, str) else content or ():
        if not isinstance(block, dict):
            continue
        if block.get("type") == "tool_result":
            blocks.append(_kept_result(block))
        elif block.get("type") in ("text", "tool_use"):
            blocks.append({k: block[k] for k in ("type", "text", "id", "name", "input") if k in block})
    metadata = message.get("metadata")
    hook = isinstance(metadata, dict) and metadata.get("displayRole") == "system"
    ts = message.get("ts")
    line = {
        "type": "message",
        "session_id": sid,
        "id": message.get("id"),
        "role": message.get("role"),
        "timestamp": iso_ms(ts) if isinstance(ts, (int, float)) and not isinstance(ts, bool) else None,
        "content": blocks,
    }
    if hook:
        line["hook"] = True
    return line


# --- The format: the export's lines ----------------------------------------------------------------

Event = exports.Event


def _tool_events(block: Mapping[str, Any], stamp: str | None) -> list[Event]:
    """One tool event per thing a call acts on: each command of ``run_commands`` (its arguments
    ``{"command": ...}``), each file of ``read_files`` (``{"path": ...}``), as the other agents' tools
    say them (call ids ``ID#N`` after the first, matched by the results)."""
    name, call = block.get("name"), block.get("id")
    if not isinstance(name, str):
        return []
    given = block.get("input")
    args: dict[str, Any] = given if isinstance(given, dict) else {}
    call = call if isinstance(call, str) else None
    items: list[tuple[str | None, dict[str, Any]]]
    if name == "run_commands" and isinstance(args.get("commands"), list):
        items = [(c, {"command": c}) for c in args["commands"] if isinstance(c, str)]
    elif name == "read_files" and isinstance(args.get("files"), list):
        paths = [f.get("path") if isinstance(f, dict) else f for f in args["files"]]
        items = [(p, {"path": p}) for p in paths if isinstance(p, str)]
    else:
        value = next((args.get(k) for k in ("path", "command", "url") if isinstance(args.get(k), str)), None)
        items = [(value, args)]
    return [
        ("tool", None, stamp, _call_id(call, n), name, jsonio.dumps(item, ensure_ascii=False), primary, False)
        for n, (primary, item) in enumerate(items or [(None, args)])
    ]


def _call_id(call: str | None, n: int) -> str | None:
    return call if call is None or n == 0 else f"{call}#{n}"


def _result_events(block: Mapping[str, Any]) -> list[Event]:
    call = block.get("tool_use_id") if isinstance(block.get("tool_use_id"), str) else None
    failed = bool(block.get("is_error"))
    results = block.get("results")
    if isinstance(results, list):
        return [
            (
                "result",
                _cut(r.get("result")),
                None,
                _call_id(call, n),
                None,
                None,
                None,
                failed or r.get("success") is False,
            )
            for n, r in enumerate(results)
            if isinstance(r, dict)
        ]
    return [("result", _cut(block.get("content")), None, call, None, None, None, failed)]


def decode(line: bytes) -> list[Event]:
    """The events of one line of an export file (see the module docstring), as the tuples
    :class:`sidelight.formats.Event` names; ``ValueError`` for a line that is not a JSON object."""
    entry, events = exports.decode_head(line, "cwd")
    if entry.get("type") != "message" or entry.get("hook"):
        return events  # the hooks' context (sidelight's own): never counted
    stamp = entry.get("timestamp") if isinstance(entry.get("timestamp"), str) else None
    blocks = [b for b in entry.get("content") or () if isinstance(b, dict)]
    texts = [b["text"] for b in blocks if b.get("type") == "text" and isinstance(b.get("text"), str)]
    role = entry.get("role")
    if role == "user":
        for block in blocks:
            if block.get("type") == "tool_result":
                events.extend(_result_events(block))
        if texts:
            text = "\n".join(texts)
            typed = _USER_INPUT().match(text)
            events.append(("user", typed.group(1) if typed else text, stamp, None, None, None, None, False))
        return events
    if role != "assistant":
        return events
    mid = entry.get("id") if isinstance(entry.get("id"), str) else None
    for text in texts or [None]:
        events.append(("assistant", text, stamp, mid, None, None, None, False))
    for block in blocks:
        if block.get("type") == "tool_use":
            events.extend(_tool_events(block, stamp))
    return events


FORMAT = FormatSpec(
    name=NAME,
    # The core reads events as plain tuples of Event's fields: no Event (sidelight._declared) is made.
    decode=decode,  # type: ignore[arg-type]
    categories=CATEGORIES,
    # The hooks' context is a message of its own (``hook``: never counted); its marker, should it come
    # back another way.
    injected_markers=("[Session Activity]",),
    description="Cline CLI sessions, exported from ~/.cline/data/sessions/<id>/<id>.messages.json "
    "to <state dir>/exports/cline/<id>.jsonl",
)


# --- The resolver ----------------------------------------------------------------------------------


def _name(sid: str) -> str:
    # ``<epoch ms>_<letters>``: the letters tell sessions apart (the digits are shared by neighbours).
    head, _, tail = sid.rpartition("_")
    return tail if head and tail else short_id(sid)


def _session(sid: str, entry: Mapping[str, Any], folder: str, fallback: str = "") -> Session:
    cwd = entry.get("cwd")
    return Session(
        key=f"{NAME}:{sid}",
        name=_name(sid),
        path=Path(exports.export_file(folder, sid)),
        format=NAME,
        group=real(cwd) if isinstance(cwd, str) and cwd else real(fallback) if fallback else folder,
        resolver=NAME,
        id=sid,
    )


def list_sessions(settings: Settings) -> Iterator[Session]:
    """Every Cline session that has an export (brought up to date first)."""
    sessions = export(settings)
    folder = export_dir(settings)
    for sid, entry in sorted(sessions.items()):
        if os.path.isfile(exports.export_file(folder, sid)):  # noqa: PTH113
            yield _session(sid, entry, folder)


def current(event: HostEvent, settings: Settings) -> Session | None:
    """The Cline session an event of the ``cline`` host names (its export brought up to date first)."""
    sid = event.session_id
    if event.host != NAME or not sid or not _SESSION_ID().match(sid):
        return None
    entry = export(settings, only=sid).get(sid) or {}
    cwd = os.fspath(event.cwd) if event.cwd is not None else ""
    return _session(sid, entry, export_dir(settings), cwd)


def roots(settings: Settings) -> list[Path]:
    return exports.roots(export_dir(settings))


def sources(settings: Settings) -> list[str]:
    """Every session's messages document: a watcher that sees one change lists the sessions again,
    which exports what is new (:func:`export`, under its lock)."""
    return [os.path.join(p, sid + _MESSAGES) for sid, p in sorted(_sessions_on_disk(settings).items())]


RESOLVER = ResolverSpec(
    name=NAME,
    list_sessions=list_sessions,
    current=current,
    roots=roots,
    sources=sources,
    description="Cline CLI sessions under ~/.cline/data/sessions, exported; grouped by working directory",
)


@hookimpl
def sidelight_formats() -> Iterator[FormatSpec]:
    yield FORMAT


@hookimpl
def sidelight_resolvers() -> Iterator[ResolverSpec]:
    yield RESOLVER


# --- The injector ----------------------------------------------------------------------------------

#: Cline's ``hookName`` of its before-tool and after-tool events (files ``PreToolUse``, ``PostToolUse``).
BEFORE_TOOL_HOOK = "tool_call"
AFTER_TOOL_HOOK = "tool_result"


def read_event(payload: Mapping[str, Any]) -> HostEvent | None:
    """A Cline hook's input as a :class:`HostEvent`: ``tool_call`` of :data:`WRITE_TOOLS` as a
    ``PreToolUse`` (the guard's, inform only), every ``tool_result`` as a ``PostToolUse`` (the news
    within the turn); ``None`` for anything else."""
    if not isinstance(payload, dict):
        return None
    from sidelight.hostio import before_tool_event, path_field, text_field

    context = payload.get("sessionContext")
    sid = text_field(context.get("rootSessionId")) if isinstance(context, dict) else None
    info = payload.get("workspaceInfo")
    roots = payload.get("workspaceRoots")
    cwd = path_field(info.get("rootPath")) if isinstance(info, dict) else None
    if cwd is None and isinstance(roots, list) and roots:
        cwd = path_field(roots[0])
    hook = payload.get("hookName")
    call = payload.get(hook) if isinstance(hook, str) else None
    if not isinstance(call, dict):
        return None
    tool, args = call.get("name"), call.get("input")
    if hook == BEFORE_TOOL_HOOK:
        if tool not in WRITE_TOOLS:
            return None
        return before_tool_event(NAME, payload, str(tool), args, session_id=sid, cwd=cwd)
    if hook == AFTER_TOOL_HOOK:
        raw = {**payload, "tool_name": tool, "tool_input": args, "tool_response": call.get("output")}
        return HostEvent(host=NAME, event="PostToolUse", session_id=sid, cwd=cwd, raw=raw)
    return None


def render(event: HostEvent, text: str | None) -> str | None:
    """``{"cancel": false, "contextModification": TEXT, "errorMessage": ""}``: Cline sends the text to
    the model after the tool's result. ``cancel`` stays false (true aborts the whole run)."""
    if not text:
        return None
    return jsonio.dumps(
        {"cancel": False, "contextModification": text, "errorMessage": ""}, ensure_ascii=False
    )


@hookimpl
def sidelight_injectors() -> Iterator[InjectorSpec]:
    yield InjectorSpec(
        name=NAME,
        read_event=read_event,
        render=render,
        description="Cline CLI hooks (~/.cline/hooks/PreToolUse of editor: inform only; PostToolUse)",
    )


def live_sessions(settings: Settings) -> dict[str, Liveness]:
    """Per session id, whether its process runs (``AgentSpec.live_sessions``), from each session's
    ``<id>.json``: gone once Cline recorded its end (``ended_at``), else as its ``pid`` says (running
    while a process has it, gone when none has)."""
    from sidelight.engine import liveness

    live: dict[str, Liveness] = {}
    for sid, folder in _sessions_on_disk(settings).items():
        meta = exports.read_json(os.path.join(folder, sid + ".json"))
        if not isinstance(meta, dict):
            continue
        pid = meta.get("pid")
        if meta.get("ended_at"):
            live[sid.lower()] = liveness.GONE
        elif isinstance(pid, int) and not isinstance(pid, bool):
            alive = liveness.same_process(pid, None)
            if alive is not None:
                live[sid.lower()] = liveness.RUNNING if alive else liveness.GONE
    return live


# -- the agent -------------------------------------------------------------------------------------------


def injected_values(line: Mapping[str, Any]) -> Iterator[Any]:
    """Where sidelight's text lands in an exported Cline session: the hooks' context message."""
    if line.get("type") == "message" and line.get("hook"):
        for block in line.get("content") or ():
            if isinstance(block, dict):
                yield block.get("text")


@hookimpl
def sidelight_agents() -> Iterator[AgentSpec]:
    from sidelight.records import AgentSpec, HostHook

    yield AgentSpec(
        name=NAME,
        title="Cline CLI",
        formats=(NAME,),
        resolver=NAME,
        hosts=(NAME,),
        installer=NAME,
        # No prompt hook: a headless run fires TaskStart, whose text is not sent, and no
        # UserPromptSubmit. A PreToolUse's cancel aborts the whole run: the guard only informs.
        hooks=(
            HostHook("before_tool", "PreToolUse", {"inject"}),
            HostHook("after_tool", "PostToolUse", {"inject"}),
        ),
        timeout_unit="",
        variables=("CLINE_DIR", "CLINE_DATA_DIR"),
        injected_where="Cline's hooks' context message (metadata.displayRole system)",
        injected_values=injected_values,
        live_sessions=live_sessions,
    )


# --- The installer (``sidelight install`` / ``uninstall``): this folder's ``install.py``, imported only
# when the installers are asked for (a prompt hook imports this module, and needs none of it).

if TYPE_CHECKING:
    from sidelight.records import InstallerSpec


@hookimpl
def sidelight_installers() -> Iterator[InstallerSpec]:
    from sidelight.agents.cline.install import INSTALLER

    yield INSTALLER
