"""What several hosts' hook protocols share: reading a hook's input into a
:class:`~sidelight.records.HostEvent`, and writing the answer.

Many hosts copied one command-hook protocol: the hook's stdin is a JSON object with ``session_id``,
``transcript_path``, ``cwd``, ``hook_event_name``, ``prompt`` and ``source``, and the hook prints
``{"hookSpecificOutput": {"hookEventName": ..., "additionalContext": TEXT}}``
(:func:`read_command_hook`, :func:`render_hook_json`). Each built-in agent's injector lives in its own
folder and uses these; a plugin's may too. The prompt hook imports this module on every prompt, so it
imports only what a prompt has loaded already.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from sidelight._fast import jsonio
from sidelight.records import HostEvent, InjectorSpec

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Collection
    from typing import Any, Final

__all__ = [
    "AFTER_TOOL",
    "AFTER_TOOL_EVENTS",
    "BEFORE_TOOL",
    "BEFORE_TOOL_EVENTS",
    "COMMAND_HOOK_EVENTS",
    "EXTENSION_AFTER_TOOL",
    "EXTENSION_BEFORE_TOOL",
    "after_tool_event",
    "before_tool_event",
    "command_hook_injector",
    "is_after_tool",
    "is_before_tool",
    "path_field",
    "read_command_hook",
    "render_hook_json",
    "render_refusal_json",
    "render_text",
    "text_field",
]

#: The events of the command-hook protocol sidelight handles, as the protocol names them.
COMMAND_HOOK_EVENTS: frozenset[str] = frozenset({"UserPromptSubmit", "SessionStart", "SessionEnd"})
#: The protocol's before-tool event: handled for a host's write tools only (the stale-write guard). A
#: host event of another name (Gemini's ``BeforeTool``) is read into this one.
BEFORE_TOOL = "PreToolUse"
#: The before-tool events' names as hosts send them (``hook_event_name``).
BEFORE_TOOL_EVENTS: frozenset[str] = frozenset({BEFORE_TOOL, "BeforeTool"})
#: The protocol's after-tool event: handled for every tool of a host whose injector asks for it (the
#: news within the turn, :mod:`sidelight.features.news`).
AFTER_TOOL: Final = "PostToolUse"


#: The ``event`` sidelight's in-process extensions (Pi's, opencode's plugin) send before a write tool.
EXTENSION_BEFORE_TOOL = "before_tool"
#: The ``event`` they send after any tool ran (the news within the turn).
EXTENSION_AFTER_TOOL = "after_tool"


#: The host's names of its after-tool event (the Gemini CLI's is ``AfterTool``).
AFTER_TOOL_EVENTS: frozenset[str] = frozenset({AFTER_TOOL, "AfterTool"})


def is_after_tool(data: Mapping[str, Any]) -> bool:
    """Whether a hook's input is an after-tool event, told from its shape alone (before any injector is
    loaded): a command hook's ``hook_event_name``, an extension's ``event``, GitHub Copilot CLI's
    ``postToolUse`` (``toolName`` with a ``toolResult``; its input names no event), or the Cline CLI's
    ``hookName`` ``tool_result``."""
    return (
        data.get("hook_event_name") in AFTER_TOOL_EVENTS
        or data.get("event") == EXTENSION_AFTER_TOOL
        or ("toolName" in data and "toolResult" in data)
        or data.get("hookName") == "tool_result"
    )


def is_before_tool(data: Mapping[str, Any]) -> bool:
    """Whether a hook's input is a before-tool event, told from its shape alone (before any injector is
    loaded): a command hook's ``hook_event_name``, an extension's ``event``, or GitHub Copilot CLI's
    ``preToolUse`` (``toolName`` without a ``toolResult``; its input names no event), or the Cline
    CLI's ``hookName`` ``tool_call``."""
    return (
        data.get("hook_event_name") in BEFORE_TOOL_EVENTS
        or data.get("hookName") == "tool_call"
        or data.get("event") == EXTENSION_BEFORE_TOOL
        or ("toolName" in data and "toolResult" not in data)
    )


def _json_or_text(text: str) -> Any:
    try:
        return jsonio.loads(text)
    except ValueError:
        return text  # not JSON (a patch, or broken): the guard finds its paths, or none


def before_tool_event(
    host: str,
    payload: Mapping[str, Any],
    tool: str,
    args: Any,
    *,
    session_id: str | None,
    cwd: Path | None,
    transcript_path: Path | None = None,
) -> HostEvent:
    """A before-tool event of a host whose input does not follow the command-hook protocol, read into
    it: ``raw`` is ``payload`` with the protocol's ``tool_name`` and ``tool_input`` (``args``; a JSON
    text is parsed), which the stale-write guard reads."""
    if isinstance(args, str):
        args = _json_or_text(args)
    return HostEvent(
        host=host,
        event="PreToolUse",
        session_id=session_id,
        transcript_path=transcript_path,
        cwd=cwd,
        raw={**payload, "tool_name": tool, "tool_input": args},
    )


def after_tool_event(
    host: str,
    payload: Mapping[str, Any],
    *,
    session_id: str | None,
    cwd: Path | None,
    transcript_path: Path | None = None,
) -> HostEvent:
    """An after-tool event of a host whose input does not follow the command-hook protocol (sidelight's
    Pi extension and opencode plugin, GitHub Copilot CLI's ``postToolUse``), read into the protocol's
    ``PostToolUse``: the news within the turn needs only whose session it is, and where."""
    return HostEvent(
        host=host,
        event=AFTER_TOOL,
        session_id=session_id,
        transcript_path=transcript_path,
        cwd=cwd,
        raw=payload,
    )


def text_field(value: Any) -> str | None:
    """``value`` when it is a non-empty string, else ``None``."""
    return value if isinstance(value, str) and value else None


def path_field(value: Any) -> Path | None:
    """``value`` as a path when it is a non-empty string, else ``None``."""
    text = text_field(value)
    return Path(text) if text is not None else None


def read_command_hook(
    host: str, payload: Mapping[str, Any], write_tools: Collection[str] = (), *, after_tool: bool = False
) -> HostEvent | None:
    """A command hook's input (see the module docstring) as a :class:`HostEvent` of ``host``.

    ``None`` when the payload is not a mapping or names an event sidelight does not handle. A
    ``PreToolUse`` is handled for the tools named in ``write_tools`` only (the stale-write guard), a
    ``PostToolUse`` with ``after_tool`` only (the news within the turn).
    """
    if not isinstance(payload, Mapping):
        return None
    event = payload.get("hook_event_name")
    if (
        event not in COMMAND_HOOK_EVENTS
        and (event != BEFORE_TOOL or payload.get("tool_name") not in write_tools)
        and (event != AFTER_TOOL or not after_tool)
    ):
        return None
    return HostEvent(
        host=host,
        event=event,
        session_id=text_field(payload.get("session_id")),
        transcript_path=path_field(payload.get("transcript_path")),
        cwd=path_field(payload.get("cwd")),
        prompt=payload.get("prompt") if isinstance(payload.get("prompt"), str) else None,
        raw=payload,
    )


def render_hook_json(event: HostEvent, text: str | None) -> str | None:
    """``{"hookSpecificOutput": {"hookEventName": EVENT, "additionalContext": TEXT}}``, or ``None``."""
    if text is None:
        return None
    return jsonio.dumps(
        {"hookSpecificOutput": {"hookEventName": event.event, "additionalContext": text}},
        ensure_ascii=False,
    )


def render_refusal_json(event: HostEvent, reason: str) -> str | None:
    """``{"hookSpecificOutput": {"hookEventName": EVENT, "permissionDecision": "deny",
    "permissionDecisionReason": REASON}}``: the tool of a before-tool event is not run, and the model
    gets ``reason`` as its result (Claude Code, Codex, Qwen Code)."""
    return jsonio.dumps(
        {
            "hookSpecificOutput": {
                "hookEventName": event.event,
                "permissionDecision": "deny",
                "permissionDecisionReason": reason,
            }
        },
        ensure_ascii=False,
    )


def command_hook_injector(
    host: str,
    description: str,
    render: Callable[[HostEvent, str | None], str | None] | None = None,
    not_typed: Callable[[HostEvent], bool] | None = None,
    *,
    write_tools: Collection[str] = (),
    refuse: Callable[[HostEvent, str], str | None] | None = None,
    after_tool: bool = False,
) -> InjectorSpec:
    """The injector of a host that speaks the command-hook protocol: its events read with
    :func:`read_command_hook`, its answers written with ``render`` (default :func:`render_hook_json`);
    ``not_typed``: see :class:`~sidelight.records.InjectorSpec`. ``write_tools``: the host's write
    tools, whose ``PreToolUse`` it reads and refuses with ``refuse`` (default
    :func:`render_refusal_json`); ``after_tool``: it reads the host's ``PostToolUse`` too (news within
    the turn)."""
    tools = frozenset(write_tools)
    return InjectorSpec(
        name=host,
        read_event=lambda payload: read_command_hook(host, payload, tools, after_tool=after_tool),
        render=render_hook_json if render is None else render,
        description=description,
        not_typed=not_typed,
        refuse=(render_refusal_json if refuse is None else refuse) if tools else None,
    )


def render_text(event: HostEvent, text: str | None) -> str | None:
    """The text itself (for a host whose extension wraps it into its own message)."""
    return text if text else None
