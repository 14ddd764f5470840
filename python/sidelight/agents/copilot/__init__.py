"""Built-in template: GitHub Copilot CLI (format ``copilot``, resolver ``copilot``).

**Sessions.** Every ``~/.copilot/session-state/<session id>/events.jsonl`` (``Settings.copilot_dir``:
``$COPILOT_HOME``, else ``~/.copilot``).

**Records.** ``key`` = ``copilot:<session id>`` (the folder's name), ``id`` = that id, ``name`` = a short
id. The events carry no title.

**Group.** The session's working directory, absolute and resolved: ``data.context.cwd`` of the
``session.start`` event that opens the file, read from a bounded head once per session and process (the
first line never changes). Sessions of the other agents use their working directory too, so sessions of
one project see each other whichever agent runs them.

**Current session.** Copilot's hook input has no transcript path: for an event of the ``copilot`` host,
the session named ``event.session_id`` (its file may not exist yet), else ``None``.
"""

# Hot path (every prompt, over many files): plain str paths and os functions, no Path per file.
# ruff: noqa: PTH113, PTH118

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from sidelight._fast import jsonio
from sidelight._fast._hookimpl import hookimpl
from sidelight._fast.logs import get_logger
from sidelight.engine.paths import has_field, head_string_field, id_session, open_regular, real, working_group
from sidelight.formats import DEFAULT_CATEGORIES
from sidelight.hostio import after_tool_event, before_tool_event, path_field, text_field
from sidelight.records import AgentSpec, EventName, FormatSpec, HostEvent, InjectorSpec, ResolverSpec, Session

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    from sidelight.config import Settings

__all__ = [
    "FORMAT",
    "NAME",
    "current",
    "list_sessions",
    "read_hook",
    "render_json",
    "roots",
    "session_for_path",
]

logger = get_logger(__name__)

NAME = "copilot"
EVENTS_FILE = "events.jsonl"

FORMAT = FormatSpec(
    name=NAME,
    decoder="copilot",
    categories=DEFAULT_CATEGORIES["copilot"],
    # A hook's text is stored in hook.end and user.message's transformedContent, which the decoder
    # never reads.
    injected_markers=("[Session Activity]",),
    description="GitHub Copilot CLI sessions (~/.copilot/session-state/<session>/events.jsonl)",
)

#: The ``session.start`` line is about 400 bytes; its ``cwd`` is read from this much of the head.
_HEAD_BYTES = 4096

_cwds: dict[str, str] = {}


def sessions_dir(settings: Settings) -> Path:
    return (settings.copilot_dir or settings.home / ".copilot") / "session-state"


def roots(settings: Settings) -> list[Path]:
    folder = sessions_dir(settings)
    return [folder] if folder.is_dir() else []


def _cwd(path: str) -> str | None:
    """The ``session.start`` line's working directory, cached by path once found."""
    cached = _cwds.get(path)
    if cached is not None:
        return cached
    try:
        with open_regular(path) as f:
            line = f.read(_HEAD_BYTES).split(b"\n", 1)[0]
    except OSError:
        return None
    if not has_field(line, "type", "session.start"):
        return None
    cwd = head_string_field(path, "cwd", data=line)
    if cwd is not None:
        _cwds[path] = cwd
    return cwd


def _session(path: Path, session_id: str, cwd: str | None, fallback: Path | None) -> Session:
    return id_session(NAME, path, session_id, working_group(NAME, session_id, cwd, fallback))


def list_sessions(settings: Settings) -> Iterator[Session]:
    """Every Copilot CLI session whose events file has begun."""
    try:
        with os.scandir(real(os.fspath(sessions_dir(settings)))) as entries:
            folders = sorted((e.name, e.path) for e in entries if e.is_dir())
    except OSError:
        return
    for session_id, folder in folders:
        path = os.path.join(folder, EVENTS_FILE)
        cwd = _cwd(path)
        if cwd is None and not os.path.isfile(path):
            continue  # a folder without events (yet)
        yield _session(Path(path), session_id, cwd, None)


def session_for_path(path: Path, event: HostEvent | None = None) -> Session | None:
    """The Copilot CLI session whose events file is ``path`` (which may not exist yet)."""
    session_id = path.parent.name or (event.session_id if event is not None else None)
    if not session_id:
        return None
    return _session(path, session_id, _cwd(os.fspath(path)), event.cwd if event is not None else None)


def current(event: HostEvent, settings: Settings) -> Session | None:
    """The Copilot CLI session a hook event comes from (see the module docstring)."""
    if event.host != NAME or not event.session_id or "/" in event.session_id:
        return None
    try:
        top = real(os.fspath(sessions_dir(settings)))
        return session_for_path(Path(top, event.session_id, EVENTS_FILE), event)
    except (OSError, ValueError) as error:
        logger.debug("copilot: cannot identify the session of %s: %s", event, error)
        return None


RESOLVER = ResolverSpec(
    name=NAME,
    list_sessions=list_sessions,
    current=current,
    roots=roots,
    description="GitHub Copilot CLI sessions under ~/.copilot/session-state; grouped by working directory",
)


@hookimpl
def sidelight_formats() -> Iterator[FormatSpec]:
    yield FORMAT


@hookimpl
def sidelight_resolvers() -> Iterator[ResolverSpec]:
    yield RESOLVER


# --- The injector ----------------------------------------------------------------------------------


#: Copilot's tools that write a file (``create{path, file_text}``, ``edit{path, old_str, new_str}``):
#: its ``preToolUse`` hook, matched to these (``install.COPILOT_MATCHERS``), is the stale-write guard's.
WRITE_TOOLS = ("create", "edit")


def read_hook(payload: Mapping[str, Any]) -> HostEvent | None:
    """A GitHub Copilot CLI hook input as a :class:`HostEvent`.

    Copilot's stdin (``{sessionId, timestamp, cwd, prompt | source | reason | toolName}``) names no
    event: ``userPromptSubmitted`` has ``prompt``, ``sessionStart`` has ``source`` (``new``,
    ``resume``…) and ``initialPrompt``, ``sessionEnd`` has ``reason``, ``preToolUse`` has ``toolName``
    and ``toolArgs`` (read into ``PreToolUse`` for :data:`WRITE_TOOLS` only: the stale-write guard's),
    ``postToolUse`` adds ``toolResult`` (read into ``PostToolUse`` for every tool: the news within the
    turn). Its ``timestamp`` is in milliseconds and it sends no transcript path. ``None`` for anything
    else.
    """
    if not isinstance(payload, Mapping):
        return None
    event: EventName
    tool = payload.get("toolName")
    if tool is not None and "toolResult" in payload:
        return after_tool_event(
            NAME, payload, session_id=text_field(payload.get("sessionId")), cwd=path_field(payload.get("cwd"))
        )
    if tool is not None:
        if tool not in WRITE_TOOLS:
            return None
        return before_tool_event(
            NAME,
            payload,
            tool,
            payload.get("toolArgs"),
            session_id=text_field(payload.get("sessionId")),
            cwd=path_field(payload.get("cwd")),
        )
    if isinstance(payload.get("prompt"), str):
        event = "UserPromptSubmit"
    elif "reason" in payload:
        event = "SessionEnd"
    elif "source" in payload:
        event = "SessionStart"
    else:
        return None
    return HostEvent(
        host=NAME,
        event=event,
        session_id=text_field(payload.get("sessionId")),
        transcript_path=None,
        cwd=path_field(payload.get("cwd")),
        prompt=payload.get("prompt") if isinstance(payload.get("prompt"), str) else None,
        raw=payload,
    )


def render_json(event: HostEvent, text: str | None) -> str | None:
    """``{"additionalContext": TEXT}`` (top level: Copilot ignores ``hookSpecificOutput``, and this is
    the only shape it injects), or ``None``."""
    if text is None:
        return None
    return jsonio.dumps({"additionalContext": text}, ensure_ascii=False)


def render_refusal(event: HostEvent, reason: str) -> str | None:
    """``{"permissionDecision": "deny", "permissionDecisionReason": REASON}`` (top level): the tool does
    not run, and the model gets ``Denied by preToolUse hook: REASON``."""
    answer = {"permissionDecision": "deny", "permissionDecisionReason": reason}
    return jsonio.dumps(answer, ensure_ascii=False)


@hookimpl
def sidelight_injectors() -> Iterator[InjectorSpec]:
    yield InjectorSpec(
        name=NAME,
        read_event=read_hook,
        render=render_json,
        description="GitHub Copilot CLI hooks (~/.copilot/hooks/sidelight.json; preToolUse of a write; "
        "postToolUse)",
        refuse=render_refusal,
    )


# -- the agent -------------------------------------------------------------------------------------------

#: Where Copilot's chat requests end a hook's context.
_CONTEXT_CLOSE = "</system_reminder>"


def injected_values(line: Mapping[str, Any]) -> Iterator[str]:
    """Where GitHub Copilot CLI keeps a hook's context: a ``hook.end`` event's output, the prompt's
    ``transformedContent`` (each text up to its ``</system_reminder>``), and a tool's result (a
    ``postToolUse`` hook's context, the news within the turn, is appended to it)."""
    from sidelight._fast.jsonio import strings

    data = line.get("data")
    if isinstance(data, dict):
        if line.get("type") == "hook.end":
            found: Any = data
        elif line.get("type") == "user.message":
            found = data.get("transformedContent")
        elif line.get("type") == "tool.execution_complete" and isinstance(data.get("result"), dict):
            found = data["result"].get("content")
        else:
            return
        for text in strings(found):
            yield from text.split(_CONTEXT_CLOSE)


@hookimpl
def sidelight_agents() -> Iterator[AgentSpec]:
    from sidelight.records import AgentSpec, HostHook

    yield AgentSpec(
        name=NAME,
        title="GitHub Copilot CLI",
        formats=(NAME,),
        resolver=NAME,
        hosts=(NAME,),
        installer=NAME,
        hooks=(
            HostHook("prompt", "userPromptSubmitted", {"inject"}),
            HostHook("start", "sessionStart", {"inject"}),
            HostHook("end", "sessionEnd"),
            HostHook("before_tool", "preToolUse", {"inject", "refuse"}),
            HostHook("after_tool", "postToolUse", {"inject"}),
        ),
        timeout_unit="s",
        variables=("COPILOT_HOME",),
        injected_where="GitHub Copilot CLI's hook.end event, transformedContent and tool results",
        injected_values=injected_values,
    )


# --- The installer (``sidelight install`` / ``uninstall``): this folder's ``install.py``, imported only
# when the installers are asked for (a prompt hook imports this module, and needs none of it).

if TYPE_CHECKING:
    from sidelight.records import InstallerSpec


@hookimpl
def sidelight_installers() -> Iterator[InstallerSpec]:
    from sidelight.agents.copilot.install import INSTALLER

    yield INSTALLER
