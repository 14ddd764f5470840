"""Built-in injectors: the hook protocols of Claude Code, Codex, Pi, Qwen Code, GitHub Copilot CLI and
the Claude Agent SDK.

Each injector reads a host's hook input into a :class:`~sidelight.records.HostEvent` and renders the
digest text into what the hook prints:

- ``claude-code`` and ``codex`` read the command hook's stdin JSON (``session_id``, ``transcript_path``,
  ``cwd``, ``hook_event_name``, ``prompt``, ``source``) and print
  ``{"hookSpecificOutput": {"hookEventName": ..., "additionalContext": TEXT}}``;
- ``qwen`` reads the same fields (Qwen Code's hooks are Claude Code's) and prints the same JSON, its
  ``<`` and ``>`` as look-alikes (:func:`sidelight.redact.escape_proof`); the empty-prompt call Qwen
  makes after each tool result gets nothing (:mod:`sidelight.hook`);
- ``copilot`` reads Copilot CLI's ``{sessionId, timestamp, cwd, prompt | source | reason}`` (which event
  it is follows from the keys, see :func:`read_copilot_hook`) and prints a top-level
  ``{"additionalContext": TEXT}``, the only shape Copilot injects;
- ``agent-sdk`` reads the same fields from the Python ``claude-agent-sdk`` callback's input dict and
  renders the same JSON (the callback turns it back into a dict);
- ``pi`` reads what sidelight's Pi extension sends (see :data:`PI_EVENTS`) and prints the bare text,
  which the extension returns as ``{message: {customType: "session-update", content, display: true}}``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path

from sidelight._fast import jsonio
from sidelight._fast._hookimpl import hookimpl
from sidelight._fast.patterns import Pattern
from sidelight.records import EventName, HostEvent, InjectorSpec

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "PI_EVENTS",
    "read_command_hook",
    "read_copilot_hook",
    "read_pi_event",
    "render_copilot_json",
    "render_hook_json",
    "render_text",
]

#: The hook events sidelight handles, as Claude Code and Codex name them.
EVENTS: frozenset[str] = frozenset({"UserPromptSubmit", "SessionStart", "SessionEnd"})

#: What the Pi extension sends as ``event``, and the host event each one is.
#:
#: The extension (``integrations/pi/sidelight.ts``) writes one JSON object to ``sidelight hook pi``'s stdin:
#: ``{"event": "before_agent_start" | "session_start" | "session_shutdown", "session_file": PATH | null,
#: "session_id": ID | null, "cwd": DIR, "prompt": TEXT | null, "reason": TEXT | null}``.
PI_EVENTS: Mapping[str, EventName] = {
    "before_agent_start": "UserPromptSubmit",
    "session_start": "SessionStart",
    "session_shutdown": "SessionEnd",
}

_UUID = Pattern(r"(?i)[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _path(value: Any) -> Path | None:
    text = _text(value)
    return Path(text) if text is not None else None


def read_command_hook(host: str, payload: Mapping[str, Any]) -> HostEvent | None:
    """A Claude-Code-style hook input (Claude Code, Codex, the Agent SDK) as a :class:`HostEvent`.

    ``None`` when the payload is not a mapping or names an event sidelight does not handle.
    """
    if not isinstance(payload, Mapping):
        return None
    event = payload.get("hook_event_name")
    if event not in EVENTS:
        return None
    return HostEvent(
        host=host,
        event=event,
        session_id=_text(payload.get("session_id")),
        transcript_path=_path(payload.get("transcript_path")),
        cwd=_path(payload.get("cwd")),
        prompt=payload.get("prompt") if isinstance(payload.get("prompt"), str) else None,
        raw=payload,
    )


def read_pi_event(payload: Mapping[str, Any]) -> HostEvent | None:
    """What sidelight's Pi extension sends (see :data:`PI_EVENTS`) as a :class:`HostEvent`."""
    if not isinstance(payload, Mapping):
        return None
    event = PI_EVENTS.get(payload.get("event"))  # type: ignore[arg-type]
    if event is None:
        return None
    session_file = _path(payload.get("session_file"))
    session_id = _text(payload.get("session_id"))
    if session_id is None and session_file is not None:
        # Pi names its files `<timestamp>_<uuid>.jsonl`; the uuid is the session header's id.
        match = _UUID().search(session_file.name)
        session_id = match.group(0) if match else None
    return HostEvent(
        host="pi",
        event=event,
        session_id=session_id,
        transcript_path=session_file,
        cwd=_path(payload.get("cwd")),
        prompt=payload.get("prompt") if isinstance(payload.get("prompt"), str) else None,
        raw=payload,
    )


def read_copilot_hook(payload: Mapping[str, Any]) -> HostEvent | None:
    """A GitHub Copilot CLI hook input as a :class:`HostEvent`.

    Copilot's stdin names no event: ``userPromptSubmitted`` has ``prompt``, ``sessionStart`` has
    ``source`` (``new``, ``resume``…) and ``initialPrompt``, ``sessionEnd`` has ``reason``. Its
    ``timestamp`` is in milliseconds and it sends no transcript path. ``None`` for anything else.
    """
    if not isinstance(payload, Mapping):
        return None
    event: EventName
    if isinstance(payload.get("prompt"), str):
        event = "UserPromptSubmit"
    elif "reason" in payload:
        event = "SessionEnd"
    elif "source" in payload:
        event = "SessionStart"
    else:
        return None
    return HostEvent(
        host="copilot",
        event=event,
        session_id=_text(payload.get("sessionId")),
        transcript_path=None,
        cwd=_path(payload.get("cwd")),
        prompt=payload.get("prompt") if isinstance(payload.get("prompt"), str) else None,
        raw=payload,
    )


def render_copilot_json(event: HostEvent, text: str | None) -> str | None:
    """``{"additionalContext": TEXT}`` (top level: Copilot ignores ``hookSpecificOutput``), or ``None``."""
    if text is None:
        return None
    return jsonio.dumps({"additionalContext": text}, ensure_ascii=False)


def render_hook_json(event: HostEvent, text: str | None) -> str | None:
    """``{"hookSpecificOutput": {"hookEventName": EVENT, "additionalContext": TEXT}}``, or ``None``."""
    if text is None:
        return None
    return jsonio.dumps(
        {"hookSpecificOutput": {"hookEventName": event.event, "additionalContext": text}},
        ensure_ascii=False,
    )


def render_escaped_hook_json(event: HostEvent, text: str | None) -> str | None:
    """:func:`render_hook_json` of text with no ``<`` or ``>``, which Qwen Code would HTML-escape
    (:func:`sidelight.redact.escape_proof`)."""
    from sidelight.redact import escape_proof  # loaded by the digest already

    return render_hook_json(event, None if text is None else escape_proof(text))


def render_text(event: HostEvent, text: str | None) -> str | None:
    """The text itself (Pi's extension wraps it into its message)."""
    return text if text else None


@hookimpl
def sidelight_injectors() -> Iterator[InjectorSpec]:
    yield InjectorSpec(
        name="claude-code",
        read_event=lambda payload: read_command_hook("claude-code", payload),
        render=render_hook_json,
        description="Claude Code command hooks (UserPromptSubmit, SessionStart, SessionEnd)",
    )
    yield InjectorSpec(
        name="codex",
        read_event=lambda payload: read_command_hook("codex", payload),
        render=render_hook_json,
        description="Codex CLI command hooks (~/.codex/hooks.json, Claude Code's protocol)",
    )
    yield InjectorSpec(
        name="qwen",
        read_event=lambda payload: read_command_hook("qwen", payload),
        render=render_escaped_hook_json,
        description="Qwen Code command hooks (~/.qwen/settings.json, Claude Code's protocol)",
    )
    yield InjectorSpec(
        name="copilot",
        read_event=read_copilot_hook,
        render=render_copilot_json,
        description="GitHub Copilot CLI hooks (~/.copilot/hooks/sidelight.json)",
    )
    yield InjectorSpec(
        name="agent-sdk",
        read_event=lambda payload: read_command_hook("agent-sdk", payload),
        render=render_hook_json,
        description="the claude-agent-sdk UserPromptSubmit callback (sidelight.integrations.agent_sdk)",
    )
    yield InjectorSpec(
        name="pi",
        read_event=read_pi_event,
        render=render_text,
        description="sidelight's Pi extension (before_agent_start, session_start, session_shutdown)",
    )
