"""Built-in template: Pi (format ``pi``, resolver ``pi``).

**Sessions.** Every ``<pi dir>/sessions/--<cwd>--/<timestamp>_<uuid>.jsonl`` (``Settings.pi_dir``:
``PI_CODING_AGENT_DIR``, else ``~/.pi/agent``). Pi names the folder after the working directory: the
path without its leading separator, ``/``, ``\\`` and ``:`` turned into ``-``, between ``--`` and ``--``.

**Records.** ``key`` = ``pi:<uuid>`` (the uuid of the file name, else the header's ``id``), ``id`` =
that uuid, ``name`` = the newest ``session_info`` name (read from a bounded head and tail) else a short
id (the last eight characters: Pi's ids are time-ordered UUIDv7, whose first eight are shared by
sessions started within a minute).

**Group.** The working directory, absolute and resolved: the ``cwd`` of the ``session`` header of one
transcript of the folder (read once per folder and process), else the folder name decoded (lossy:
``-`` could have been ``-`` or ``/``). Claude Code and Codex sessions use their working directory too,
so sessions of one project see each other whichever agent runs them.

**Current session.** The transcript at ``event.transcript_path`` (the Pi extension passes
``ctx.sessionManager.getSessionFile()``), when it lies under Pi's sessions folder or the event comes
from the ``pi`` host; Pi writes nothing before the first assistant reply, so the file may not exist
yet. Else the session whose uuid is ``event.session_id``. Else ``None``.
"""

# Hot path (every prompt, over many files): plain str paths and os functions, no Path per file.
# ruff: noqa: PTH119

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from sidelight._fast._hookimpl import hookimpl
from sidelight._fast.logs import get_logger
from sidelight._fast.patterns import Pattern
from sidelight.agents.pi.paths import TITLE_LINES, pi_session_uuid
from sidelight.engine.paths import (
    TitledSession,
    child_path,
    head_string_field,
    own_transcript,
    quietly,
    real,
    short_id,
)
from sidelight.formats import DEFAULT_CATEGORIES
from sidelight.hostio import (
    EXTENSION_AFTER_TOOL,
    EXTENSION_BEFORE_TOOL,
    after_tool_event,
    before_tool_event,
    path_field,
    render_text,
    text_field,
)
from sidelight.records import AgentSpec, EventName, FormatSpec, HostEvent, InjectorSpec, ResolverSpec, Session

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from typing import Any

    from sidelight.config import Settings

__all__ = ["EVENTS", "FORMAT", "NAME", "current", "list_sessions", "read_event", "roots", "session_for_path"]

logger = get_logger(__name__)

NAME = "pi"

FORMAT = FormatSpec(
    name=NAME,
    decoder="pi",
    categories=DEFAULT_CATEGORIES["pi"],
    # Our digests are ``custom_message`` entries (customType ``session-update``, never counted by the
    # decoder) whose text starts with the marker.
    injected_markers=("[Session Activity]",),
    description="Pi coding agent sessions (~/.pi/agent/sessions/--<cwd>--/<ts>_<uuid>.jsonl)",
    title_lines=TITLE_LINES,
)


_folder_cwds: dict[str, str] = {}


def sessions_dir(settings: Settings) -> Path | None:
    return settings.pi_dir / "sessions" if settings.pi_dir is not None else None


def roots(settings: Settings) -> list[Path]:
    folder = sessions_dir(settings)
    return [folder] if folder is not None and folder.is_dir() else []


def decode_folder(name: str) -> str:
    """A best guess at the working directory of a ``--<cwd>--`` folder (lossy)."""
    inner = name[2:-2] if name.startswith("--") and name.endswith("--") and len(name) >= 4 else name
    return "/" + inner.replace("-", "/")


def _folder_group(folder: str, transcripts: Iterable[str], fallback: Path | None = None) -> str:
    cached = _folder_cwds.get(folder)
    if cached is not None:
        return cached
    for n, path in enumerate(transcripts):
        if n >= 4:
            break
        cwd = head_string_field(path, "cwd", limit=16 * 1024)
        if cwd:
            _folder_cwds[folder] = group = real(cwd)
            return group
    if fallback is not None:
        return real(os.fspath(fallback))
    return real(decode_folder(os.path.basename(folder)))


def list_sessions(settings: Settings) -> Iterator[Session]:
    """Every Pi session under Pi's sessions folder."""
    top = sessions_dir(settings)
    if top is None:
        return
    try:
        with os.scandir(real(os.fspath(top))) as entries:  # resolved once: canonical paths below
            folders = sorted(e.path for e in entries if e.is_dir())
    except OSError:
        return
    for folder in folders:
        try:
            yield from _folder_sessions(folder)
        except Exception as error:  # an odd folder never hides the others
            logger.debug("pi: skipping %s: %s", folder, error)


def _folder_sessions(folder: str) -> Iterator[Session]:
    with os.scandir(folder) as entries:
        files = sorted(
            (e for e in entries if e.name.endswith(".jsonl") and e.is_file()), key=lambda e: e.name
        )
    if not files:
        return
    group = _folder_group(folder, (e.path for e in files))
    parent = Path(folder)
    for entry in files:
        uuid = pi_session_uuid(entry.path)
        if uuid is None:
            continue
        yield _session(child_path(parent, entry.name, entry.path), uuid, group)


def _session(path: Path, uuid: str, group: str) -> Session:
    return TitledSession(
        key=f"{NAME}:{uuid}",
        path=path,
        format=NAME,
        group=group,
        resolver=NAME,
        id=uuid,
        title_lines=TITLE_LINES,
        fallback=short_id(uuid),
    )


def session_for_path(path: Path, event: HostEvent | None = None) -> Session | None:
    """The Pi session whose transcript is ``path`` (which may not exist yet)."""
    uuid = pi_session_uuid(path)
    if uuid is None:
        if event is None or not event.session_id:
            return None
        uuid = event.session_id
    folder = os.fspath(path.parent)
    transcripts = [os.fspath(path)] if path.is_file() else []
    if not transcripts:
        try:
            with os.scandir(folder) as entries:
                transcripts = [e.path for e in entries if e.name.endswith(".jsonl")]
        except OSError:
            pass
    group = _folder_group(folder, transcripts, event.cwd if event is not None else None)
    return _session(path, uuid, group)


def _current(event: HostEvent, settings: Settings) -> Session | None:
    top = sessions_dir(settings)
    if event.transcript_path is not None:
        path = own_transcript(event, top, NAME)
        return session_for_path(path, event) if path is not None else None
    if event.session_id and top is not None:
        wanted = event.session_id.lower()
        for session in list_sessions(settings):
            if session.id == wanted:
                return session
    return None


current = quietly(NAME, _current)


RESOLVER = ResolverSpec(
    name=NAME,
    list_sessions=list_sessions,
    current=current,
    roots=roots,
    session_at=session_for_path,
    description="Pi sessions under ~/.pi/agent/sessions; grouped by working directory",
)


@hookimpl
def sidelight_formats() -> Iterator[FormatSpec]:
    yield FORMAT


@hookimpl
def sidelight_resolvers() -> Iterator[ResolverSpec]:
    yield RESOLVER


# --- The injector ----------------------------------------------------------------------------------
# ``sidelight hook pi`` reads what sidelight's Pi extension sends (see :data:`EVENTS`) and prints the bare
# text, which the extension returns as ``{message: {customType: "session-update", content, display:
# true}}``. Before a write tool (``before_tool``, the stale-write guard's) it prints ``{"block": true,
# "reason": R}``, which the extension's ``tool_call`` handler returns as is, or a note it steers in.

#: What the Pi extension sends as ``event``, and the host event each one is.
#:
#: The extension (``agents/pi/extension.ts``) writes one JSON object to ``sidelight hook pi``'s stdin:
#: ``{"event": "before_agent_start" | "session_start" | "session_shutdown", "session_file": PATH | null,
#: "session_id": ID | null, "cwd": DIR, "prompt": TEXT | null, "reason": TEXT | null}``; and, before a
#: write tool (:data:`WRITE_TOOLS`), ``{"event": "before_tool", ..., "tool_name": NAME, "tool_input":
#: ARGS}`` (a ``PreToolUse``); after any tool ran, ``{"event": "after_tool", ..., "tool_name": NAME}`` (a
#: ``PostToolUse``: the news within the turn, whose text the extension's ``tool_result`` handler appends
#: to the tool's result content).
EVENTS: Mapping[str, EventName] = {
    "before_agent_start": "UserPromptSubmit",
    "session_start": "SessionStart",
    "session_shutdown": "SessionEnd",
}
#: Pi's tools that write a file (``write{path, content}``, ``edit{path, edits}``): the extension asks
#: before these only.
WRITE_TOOLS = ("write", "edit")

_UUID = Pattern(r"(?i)[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def read_event(payload: Mapping[str, Any]) -> HostEvent | None:
    """What sidelight's Pi extension sends (see :data:`EVENTS`) as a :class:`HostEvent`."""
    if not isinstance(payload, Mapping):
        return None
    name = payload.get("event")
    event = EVENTS.get(name)  # type: ignore[arg-type]
    tool = payload.get("tool_name")
    after = name == EXTENSION_AFTER_TOOL
    if event is None and not after and (name != EXTENSION_BEFORE_TOOL or tool not in WRITE_TOOLS):
        return None
    session_file = path_field(payload.get("session_file"))
    session_id = text_field(payload.get("session_id"))
    if session_id is None and session_file is not None:
        # Pi names its files `<timestamp>_<uuid>.jsonl`; the uuid is the session header's id.
        match = _UUID().search(session_file.name)
        session_id = match.group(0) if match else None
    if after:
        cwd = path_field(payload.get("cwd"))
        return after_tool_event(NAME, payload, session_id=session_id, cwd=cwd, transcript_path=session_file)
    if event is None:
        return before_tool_event(
            NAME,
            payload,
            str(tool),
            payload.get("tool_input"),
            session_id=session_id,
            cwd=path_field(payload.get("cwd")),
            transcript_path=session_file,
        )
    return HostEvent(
        host=NAME,
        event=event,
        session_id=session_id,
        transcript_path=session_file,
        cwd=path_field(payload.get("cwd")),
        prompt=payload.get("prompt") if isinstance(payload.get("prompt"), str) else None,
        raw=payload,
    )


def render_refusal(event: HostEvent, reason: str) -> str | None:
    """``{"block": true, "reason": REASON}``: what the extension's ``tool_call`` handler returns; Pi
    does not run the tool, and the model gets ``REASON`` as its (error) result."""
    from sidelight._fast import jsonio

    return jsonio.dumps({"block": True, "reason": reason}, ensure_ascii=False)


@hookimpl
def sidelight_injectors() -> Iterator[InjectorSpec]:
    yield InjectorSpec(
        name=NAME,
        read_event=read_event,
        render=render_text,
        description="sidelight's Pi extension (before_agent_start, session_start, session_shutdown, "
        "tool_call of a write, tool_result)",
        refuse=render_refusal,
    )


# -- the agent -------------------------------------------------------------------------------------------


def injected_values(line: Mapping[str, Any]) -> Iterator[Any]:
    """Where Pi keeps sidelight's text: the extension's ``custom_message`` entries, and the text blocks of
    a tool's result (the news within the turn is one more block of it)."""
    if line.get("type") == "custom_message":
        yield line.get("content")
    message = line.get("message")
    if line.get("type") == "message" and isinstance(message, dict) and message.get("role") == "toolResult":
        content = message.get("content")
        if isinstance(content, list):
            yield from (b.get("text") for b in content if isinstance(b, dict) and b.get("type") == "text")


@hookimpl
def sidelight_agents() -> Iterator[AgentSpec]:
    from sidelight.records import AgentSpec, HostHook

    yield AgentSpec(
        name=NAME,
        title="Pi",
        formats=(NAME,),
        resolver=NAME,
        hosts=(NAME,),
        installer=NAME,
        # sidelight's extension (agents/pi/extension.ts): it hears a session's start and end, but what
        # it answers then reaches no model; a tool call's steer message does, after the result; a tool
        # result's extra text block (the news within the turn) is part of that result.
        hooks=(
            HostHook("prompt", "before_agent_start", {"inject"}),
            HostHook("start", "session_start"),
            HostHook("end", "session_shutdown"),
            HostHook("before_tool", "tool_call", {"inject", "refuse"}),
            HostHook("after_tool", "tool_result", {"inject"}),
        ),
        timeout_unit="",
        variables=("PI_CODING_AGENT_DIR",),
        injected_where="Pi's custom message (session-update) or a tool result's last text block",
        injected_values=injected_values,
    )


# --- The installer (``sidelight install`` / ``uninstall``): this folder's ``install.py``, imported only
# when the installers are asked for (a prompt hook imports this module, and needs none of it).

if TYPE_CHECKING:
    from sidelight.records import InstallerSpec


@hookimpl
def sidelight_installers() -> Iterator[InstallerSpec]:
    from sidelight.agents.pi.install import INSTALLER

    yield INSTALLER
