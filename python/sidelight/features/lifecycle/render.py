"""What is injected from a session's state: the ``[SESSION CONTEXT]`` block, the welcome back (its
resume context, with the events of its last transcript entries), and durations as a person says them."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final

from sidelight.features.digest import is_digest_text
from sidelight.features.lifecycle.memory import hot_memory_line, tool_description
from sidelight.features.lifecycle.records import DETAIL_LIMIT
from sidelight.redact import sanitize
from sidelight.timestamps import epoch_seconds

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from sidelight.features.lifecycle.records import SessionState

__all__ = [
    "CONTEXT_LIMIT",
    "RESUME_EVENTS",
    "RESUME_LIMIT",
    "entry_events",
    "format_duration",
    "resume_context",
    "session_context_block",
]

#: A welcome back (the resume context) is at most this many characters (150 tokens at 4 characters a
#: token): the host keeps it in the conversation, so every later turn pays for it again.
RESUME_LIMIT: Final = 600
#: The session context block is at most this many characters.
CONTEXT_LIMIT: Final = 1500


def format_duration(seconds: float) -> str:
    """``45s``, ``12m``, ``2h 5m``, ``3d 4h``: a duration as a person says it (rounded down).

    >>> format_duration(2 * 3600 + 5 * 60 + 30)
    '2h 5m'
    """
    total = max(0, int(seconds))
    days, rest = divmod(total, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}d {hours}h" if hours else f"{days}d"
    if hours:
        return f"{hours}h {minutes}m" if minutes else f"{hours}h"
    if minutes:
        return f"{minutes}m"
    return f"{secs}s"


def _cap_lines(lines: Iterable[str], limit: int, closing: str | None = None) -> str:
    """The lines joined with newlines, as many as fit in ``limit`` characters (``closing`` always
    fits at the end)."""
    budget = limit - (len(closing) + 1 if closing else 0)
    kept: list[str] = []
    used = 0
    for line in lines:
        cost = len(line) + (1 if kept else 0)
        if used + cost > budget:
            break
        kept.append(line)
        used += cost
    if closing:
        kept.append(closing)
    return "\n".join(kept)


def _counts_phrase(state: SessionState) -> str:
    parts = [f"{state.messages.get('user', 0)} prompts", f"{state.messages.get('assistant', 0)} responses"]
    for category, label in (("edit", "edits"), ("command", "commands"), ("read", "reads")):
        if state.categories.get(category):
            parts.append(f"{state.categories[category]} {label}")
    return ", ".join(parts)


def session_context_block(state: SessionState, now: float | None = None, limit: int = CONTEXT_LIMIT) -> str:
    """A ``[SESSION CONTEXT] ... [END SESSION]`` block with the session's status, current task, recent
    files and hot memory, at most ``limit`` characters (sanitized; lines that do not fit are left out).
    With ``now``, the time since the last activity is given too."""
    status = f"Status: {state.state}"
    if now is not None:
        status += f", last activity {format_duration(now - state.last_activity)} ago"
    status += f"; {_counts_phrase(state)}"
    lines = [
        "[SESSION CONTEXT]",
        f"Session: {sanitize(state.name, 60) or 'session'} ({sanitize(state.agent, 30)})",
        status,
    ]
    if state.current_task:
        lines.append(f"Current task: {sanitize(state.current_task, 300)}")
    if state.recent_files:
        lines.append(f"Recent files: {', '.join(sanitize(f, 120) for f in state.recent_files)}")
    if state.hot_memory:
        lines.append("Hot memory (most recent first):")
        lines.extend(f"- {sanitize(line, 160)}" for line in state.hot_memory)
    return _cap_lines(lines, limit, closing="[END SESSION]")


# Left out of a resume context's last events: they say nothing of what the session did.
_QUIET_KINDS: Final = frozenset(
    {"session_start", "session_idle", "session_resume", "session_suspend", "session_unsuspend", "session_end"}
)

#: How a welcome back names the kinds of events it lists (a tool use is its own description).
_EVENT_LABELS: Final = {"prompt_submitted": "prompt: ", "response_completed": "reply: ", "tool_executed": ""}

#: At most this many of the last events are listed in a welcome back.
RESUME_EVENTS: Final = 6


def _event_stamp(stamp: object, now: float) -> str:
    """``HH:MM`` (UTC) of an event on the day of ``now``, ``MM-DD HH:MM`` of an earlier one, ``""``
    when the event has no time."""
    moment = epoch_seconds(stamp) if isinstance(stamp, str) else None
    if moment is None:
        return ""
    when = datetime.fromtimestamp(moment, UTC)
    if when.date() == datetime.fromtimestamp(now, UTC).date():
        return when.strftime("%H:%M")
    return when.strftime("%m-%d %H:%M")


def entry_events(
    entries: Iterable[tuple[str | None, str, str | None, str | None, str | None]],
    categories: Mapping[str, str] | None = None,
) -> list[dict[str, Any]]:
    """Events (``{"kind", "time", "detail"}``, the shape of :attr:`SessionState.events`) of transcript
    entries ``(timestamp, role, text, tool_name, primary_arg)`` (:class:`sidelight.types.Entry`'s first
    fields), in their order, each with its own time: a prompt, a tool use (its hot-memory line, else
    ``Name arg``; ``categories`` maps lowercase tool names to their category) or a reply.

    >>> entry_events([("2026-01-01T10:00:00Z", "user", "fix it", None, None)])[0]["kind"]
    'prompt_submitted'
    """
    events: list[dict[str, Any]] = []
    for stamp, role, text, tool, primary_arg in entries:
        if role == "user":
            if not text or is_digest_text(text):
                continue
            events.append({"kind": "prompt_submitted", "time": stamp, "detail": sanitize(text, DETAIL_LIMIT)})
        elif role == "assistant":
            if text:
                events.append(
                    {"kind": "response_completed", "time": stamp, "detail": sanitize(text, DETAIL_LIMIT)}
                )
        elif tool:
            category = (categories or {}).get(tool.lower(), "other")
            line = hot_memory_line(tool, category, primary_arg) or tool_description(tool, primary_arg)
            events.append({"kind": "tool_executed", "time": stamp, "detail": line})
    return events


def resume_context(state: SessionState, now: float, limit: int = RESUME_LIMIT) -> str:
    """``Welcome back. Session NAME was idle for 2h 5m.`` with the current task, the recent files and
    the last events that say what the session did (prompts, tool uses, replies), oldest first, each
    with its own time (UTC, ``HH:MM``; ``MM-DD HH:MM`` before the day of ``now``): at most ``limit``
    characters (``RESUME_LIMIT``, 600: the host keeps it in the conversation, so it is paid for on every
    later turn). The most recent events are the ones kept when not all fit.

    The idle time is the quiet time until ``now`` when the session is still idle (or ended), else the
    quiet time before its last resume.
    """
    if state.state in ("idle", "ended") or state.last_idle_seconds is None:
        quiet = now - state.last_activity
    else:
        quiet = state.last_idle_seconds
    name = sanitize(state.name, 60) or "session"
    lines = [f"Welcome back. Session {name} was idle for {format_duration(quiet)}."]
    if state.current_task:
        lines.append(f"Current task: {sanitize(state.current_task, 120)}")
    if state.recent_files:
        lines.append(f"Recent files: {sanitize(', '.join(state.recent_files[:3]), 120)}")
    head = _cap_lines(lines, limit)
    events = [e for e in state.events if e.get("kind") not in _QUIET_KINDS and e.get("detail")]
    title = "Last events (UTC):"
    budget = limit - len(head) - len(title) - 2  # the two newlines that join them
    kept: list[str] = []
    for event in reversed(events[-RESUME_EVENTS:]):  # the most recent first, while they fit
        stamp = _event_stamp(event.get("time"), now)
        label = _EVENT_LABELS.get(str(event.get("kind")), f"{event.get('kind')}: ")
        text = sanitize(label + str(event.get("detail")), 80)
        line = f"- {stamp} {text}" if stamp else f"- {text}"
        if len(line) + 1 > budget:
            break
        kept.append(line)
        budget -= len(line) + 1
    if not kept:
        return head
    return "\n".join([head, title, *reversed(kept)])
