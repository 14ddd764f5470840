"""Session lifecycle: the state of each session (active, idle, suspended, ended), its events, its
context, its hot memory, and what is archived and injected from it.

A :class:`SessionTracker` is fed new transcript activity (:meth:`SessionTracker.observe`) and host hook
events (:meth:`SessionTracker.hook_event`), and applies the timeouts when it is ticked
(:meth:`SessionTracker.tick`). Time comes from an injectable clock, so tests never sleep::

    now = [0.0]
    tracker = SessionTracker(LifecycleSettings(idle_timeout=60), clock=lambda: now[0])
    tracker.observe(session, activity)     # [SinkEvent("session_start"), SinkEvent("prompt_submitted"), ...]
    now[0] = 60
    tracker.tick()                         # [SinkEvent("session_idle")]

States move like this:

- ``active`` → ``idle`` after ``idle_timeout`` seconds without activity (``session_idle``);
- ``idle`` → ``active`` on new activity, a ``SessionStart`` or a prompt (``session_resume``, with how long
  the session was quiet);
- ``active`` / ``idle`` → ``ended`` after twice ``idle_timeout`` without activity, after
  ``max_duration`` since the start, or on the host's ``SessionEnd`` (``session_end``);
- any live state → ``suspended`` when the host says so (:meth:`SessionTracker.suspend`): no timer runs
  until :meth:`SessionTracker.unsuspend`, and activity does not wake it; only an explicit end does;
- ``ended`` → a new life (``session_start``) on new activity or a ``SessionStart``: the timers start
  over, the counts, events and context carry on (a resume context still has them).

Nothing here does I/O but :func:`archive_session`; the watcher owns files, threads and sinks.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import time
from collections import deque
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal, TypeAlias, cast

from sidelight.digest import is_digest_text
from sidelight.paths import open_regular, short_id
from sidelight.records import Session, SinkEvent
from sidelight.redact import redact, sanitize, strip_invisible
from sidelight.statefile import write_atomic
from sidelight.timestamps import epoch_seconds

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence

    from sidelight._core import _ScanCounts as ScanCounts
    from sidelight.records import HostEvent
    from sidelight.types import Activity

__all__ = [
    "EVENT_KINDS",
    "RECENT_FILES",
    "STATES",
    "LifecycleSettings",
    "SessionCounts",
    "SessionState",
    "SessionTracker",
    "State",
    "add_tool_counts",
    "archive_session",
    "entry_events",
    "format_duration",
    "hot_memory_line",
    "judge_session",
    "resume_context",
    "session_context_block",
]

#: A session's state.
State: TypeAlias = Literal["active", "idle", "suspended", "ended"]
#: The tool categories, in the order the core counts them (``scan_many_counts``).
CATEGORIES: Final = ("edit", "read", "command", "other")
#: A tool use as the core reports it: ``(name, category, primary_arg, timestamp, lines, old_text,
#: new_text)``.
CoreToolUse: TypeAlias = tuple[str, str, "str | None", "str | None", "int | None", "str | None", "str | None"]
#: One transcript line as the watcher hands it to :meth:`SessionTracker.observe_counts`: its key (where
#: it is: the transcript and the byte offset of its end, see :attr:`SinkEvent.key`) and its entries
#: (``_core.read_entries`` tuples: ``(kind, timestamp, id, name, text, data, is_error, lines)``).
TranscriptLine: TypeAlias = tuple[str, "Sequence[tuple[Any, ...]]"]

STATES: Final[tuple[str, ...]] = ("active", "idle", "suspended", "ended")

#: The events a tracker emits (and keeps, the last ``events_kept`` per session).
EVENT_KINDS: Final[tuple[str, ...]] = (
    "session_start",
    "prompt_submitted",
    "tool_executed",
    "response_completed",
    "session_idle",
    "session_resume",
    "session_suspend",
    "session_unsuspend",
    "session_end",
)

#: The version of :meth:`SessionTracker.snapshot` and of the archive files.
SNAPSHOT_VERSION: Final = 1

#: Hot-memory cuts: an edit's old and new text, a command.
EDIT_SNIPPET_LIMIT: Final = 30
COMMAND_LIMIT: Final = 50
#: Paths, event details and tool descriptions are cut to these many characters.
PATH_LIMIT: Final = 200
DETAIL_LIMIT: Final = 200
TOOL_LIMIT: Final = 80
#: The current task (the last user request) is kept to this many characters.
TASK_LIMIT: Final = 500
#: How many key entities are reported, and how many candidates are counted.
ENTITIES_REPORTED: Final = 10
ENTITIES_COUNTED: Final = 100
#: A welcome back (the resume context) is at most this many characters (150 tokens at 4 characters a
#: token): the host keeps it in the conversation, so every later turn pays for it again.
RESUME_LIMIT: Final = 600
#: The session context block is at most this many characters.
CONTEXT_LIMIT: Final = 1500

# Command-category tools that only look at a running command (its output), not run anything.
_POLLING_TOOLS: Final = frozenset({"bashoutput", "taskoutput", "monitor"})


def judge_session(
    last_activity: float | None,
    now: float,
    idle_timeout: float,
    *,
    ended_at: float | None = None,
    suspended: bool = False,
    life: float | None = None,
    max_duration: float | None = None,
) -> tuple[State, str | None]:
    """A session's state from its facts, and why it ended (``hook``, ``max_duration`` or
    ``idle_timeout``; ``None`` while it lives): the one rule of the tracker's timeouts, of ``sidelight
    status`` (with a watcher or without) and of ``sidelight recap``.

    ``last_activity``: when its transcripts were last written (epoch seconds; ``None``: never);
    ``ended_at``: when its host said it ended (Claude Code's ``SessionEnd``, Pi's shutdown: Codex says
    nothing), which counts only when nothing was written after it; ``life``: how long its current life
    has lasted, unsuspended (known to a tracker only), against ``max_duration``.

    >>> judge_session(1000.0, 1000.0 + 60, 1800)
    ('active', None)
    >>> judge_session(1000.0, 1000.0 + 2700, 1800)
    ('idle', None)
    >>> judge_session(1000.0, 1000.0 + 60, 1800, ended_at=1010.0)
    ('ended', 'hook')
    """
    if ended_at is not None and (last_activity is None or ended_at >= last_activity):
        return "ended", "hook"  # only an explicit end ends a suspended session
    if suspended:
        return "suspended", None
    if last_activity is None:
        return "ended", "idle_timeout"
    if life is not None and max_duration is not None and life >= max_duration:
        return "ended", "max_duration"
    quiet = now - last_activity
    if quiet >= 2 * idle_timeout:
        return "ended", "idle_timeout"
    if quiet >= idle_timeout:
        return "idle", None
    return "active", None


@dataclass(frozen=True, slots=True)
class LifecycleSettings:
    """Timeouts (seconds; parse ``"30m"`` with :func:`sidelight.config.parse_duration`) and the caps of
    what is kept per session."""

    #: Without activity for this long, a session is ``idle``; for twice as long, ``ended``.
    idle_timeout: float = 1800.0
    #: A session is ``ended`` this long after it started (suspended time does not count).
    max_duration: float = 8 * 3600.0
    events_kept: int = 50
    files_kept: int = 10
    tools_kept: int = 10
    hot_kept: int = 5
    #: Archive a compressed copy of the transcript with the session's state.
    archive_transcripts: bool = False

    def __post_init__(self) -> None:
        if self.idle_timeout <= 0 or self.max_duration <= 0:
            raise ValueError("idle_timeout and max_duration must be positive")
        for name in ("events_kept", "files_kept", "tools_kept", "hot_kept"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1")


def _iso(moment: float) -> str:
    """Epoch seconds as ISO 8601 UTC with milliseconds and ``Z``."""
    return datetime.fromtimestamp(moment, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


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


def hot_memory_line(
    name: str,
    category: str,
    primary_arg: str | None,
    lines: int | None = None,
    old_text: str | None = None,
    new_text: str | None = None,
) -> str | None:
    """One hot-memory line for a consequential tool use, ``None`` for the others (reads, searches…).

    Decided by category, whatever the format's tool names (Claude Code ``Write``/``Edit``/``Bash``, Pi
    ``write``/``edit``/``bash``, Codex ``apply_patch``/``exec_command``…):

    - an ``edit`` with an old or new text: ``Edited PATH: 'old' -> 'new'`` (each cut to 30 characters);
    - an ``edit`` with a line count (a write or a create): ``Created PATH (N lines)``;
    - another ``edit``: ``Edited PATH``;
    - a ``command``: ``Ran: COMMAND`` (cut to 50 characters).

    Text is sanitized (control characters stripped, secrets redacted, whitespace collapsed).

    >>> hot_memory_line("Write", "edit", "/src/app.py", lines=12)
    'Created /src/app.py (12 lines)'
    >>> hot_memory_line("edit", "edit", "a.py", old_text="x = 1", new_text="x = 2")
    "Edited a.py: 'x = 1' -> 'x = 2'"
    >>> hot_memory_line("exec_command", "command", "pytest -q")
    'Ran: pytest -q'
    >>> hot_memory_line("Read", "read", "a.py") is None
    True
    """
    category = str(category)
    if category == "edit":
        path = sanitize(primary_arg, PATH_LIMIT) if primary_arg else ""
        path = path or f"a file ({sanitize(name, 40)})"
        if old_text is not None or new_text is not None:
            old = sanitize(old_text or "", EDIT_SNIPPET_LIMIT)
            new = sanitize(new_text or "", EDIT_SNIPPET_LIMIT)
            return f"Edited {path}: '{old}' -> '{new}'"
        if lines is not None:
            return f"Created {path} ({lines} {'line' if lines == 1 else 'lines'})"
        return f"Edited {path}"
    if category == "command":
        if name.lower() in _POLLING_TOOLS or not primary_arg:
            return None
        command = sanitize(primary_arg, COMMAND_LIMIT)
        return f"Ran: {command}" if command else None
    return None


def _tool_description(name: str, primary_arg: str | None) -> str:
    """``Name arg``, sanitized and cut: how a tool use is listed among the recent tools."""
    text = f"{name} {primary_arg}" if primary_arg else name
    return sanitize(text, TOOL_LIMIT)


_GLOB = re.compile(r"[*?\[\]{}\s]")
_FILE_NAME = re.compile(r"(?:^|/)[^/]*\.[A-Za-z0-9]{1,10}$")


def _looks_like_path(arg: str) -> bool:
    """A tool's primary argument that names a file (not a pattern, a URL or a query)."""
    if not arg or len(arg) > 4096 or _GLOB.search(arg) or "://" in arg:
        return False
    return "/" in arg or _FILE_NAME.search(arg) is not None


# Key entities in prompts: file names, `code spans`, snake_case and CamelCase identifiers.
_ENTITY_ALTERNATIVES: Final = (
    r"`([^`\n]{2,40})`",
    r"(?<![\w/.-])((?:[\w.-]+/)*[\w-]+\.[A-Za-z][A-Za-z0-9]{0,9})(?![\w/])",
    r"\b([a-z][a-z0-9]*(?:_[a-z0-9]+)+)\b",
    r"\b([A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+)\b",
)
_ENTITY = re.compile("|".join(_ENTITY_ALTERNATIVES))
_CAPITAL = re.compile("[A-Z]")
#: :data:`_ENTITY` without the alternatives a text cannot match, by which of them it can.
_ENTITY_PATTERNS: dict[tuple[bool, ...], re.Pattern[str]] = {(True, True, True, True): _ENTITY}


def _entity_pattern(text: str) -> re.Pattern[str] | None:
    """:data:`_ENTITY` with only the alternatives ``text`` can match (each needs a character: a
    backtick, a dot, an underscore, a capital letter), or ``None`` when it has none: the same matches,
    without trying four patterns at every position of every prompt."""
    key = ("`" in text, "." in text, "_" in text, _CAPITAL.search(text) is not None)
    if not any(key):
        return None
    pattern = _ENTITY_PATTERNS.get(key)
    if pattern is None:
        # Each alternative keeps its group number: one it cannot match becomes a group that never does.
        parts = [alt if wanted else "(?!)()" for alt, wanted in zip(_ENTITY_ALTERNATIVES, key, strict=True)]
        pattern = _ENTITY_PATTERNS[key] = re.compile("|".join(parts))
    return pattern


def _entities_in(text: str) -> list[str]:
    """The key entities a prompt names, in order (file names reduced to their base name). They are
    taken from the prompt with its secrets redacted: a key's pieces (``key_sk``, ``ghp_...``) would
    otherwise pass for identifiers and be kept in clear in ``lifecycle.json`` and the archives."""
    found: list[str] = []
    text = redact(strip_invisible(text[:20000]))
    pattern = _entity_pattern(text)
    if pattern is None:
        return found
    for match in pattern.finditer(text):
        value = next(group for group in match.groups() if group)
        if match.group(2):
            value = value.rsplit("/", 1)[-1]
        value = sanitize(value, 40)
        if len(value) >= 2 and "REDACTED" not in value:
            found.append(value)
    return found


#: How many recently touched files :class:`SessionCounts` keeps.
RECENT_FILES: Final = 10


@dataclass(slots=True)
class SessionCounts:
    """What one session's transcripts held, counted once per scan: messages, tool uses by category and
    by name, complete lines, the last timestamp and the files touched.

    The watcher keeps one per session, with or without a tracker (its status row is a view of it,
    :func:`sidelight.watch.watcher.status_row`); a tracker the watcher feeds shares it as its
    :attr:`SessionState.counts`, so the counts are added once, here (:meth:`add_scans`). A tracker fed
    on its own (:meth:`SessionTracker.observe`) adds to its state's with :meth:`add`."""

    user_messages: int = 0
    assistant_messages: int = 0
    categories: dict[str, int] = field(default_factory=lambda: dict.fromkeys(CATEGORIES, 0))
    tools: dict[str, int] = field(default_factory=dict)
    lines: int = 0
    last_timestamp: str | None = None
    #: Epoch seconds of the last activity (the last timestamp seen, else when it was read), as of the
    #: last read of :attr:`last_activity`.
    activity_seconds: float | None = None
    #: The files the scans reported touched, oldest first, at most :data:`RECENT_FILES` (as the core
    #: gives them; the tracker's context keeps its own, sanitized, in :attr:`SessionState.recent_files`).
    touched_files: list[str] = field(default_factory=list)
    #: A timestamp not yet turned into ``activity_seconds``, and when it was read (the fallback when it
    #: cannot be read): a busy session gets a new one every pass, and is shown once a second.
    pending: tuple[str, float] | None = field(default=None, repr=False, compare=False)

    @property
    def last_activity(self) -> float | None:
        """Epoch seconds of the last activity."""
        pending = self.pending
        if pending is not None:
            self.pending = None
            moment = epoch_seconds(pending[0])
            self.activity_seconds = moment if moment is not None else pending[1]
        return self.activity_seconds

    def add(
        self,
        user: int,
        assistant: int,
        by_category: tuple[int, int, int, int],
        by_tool: Mapping[str, int] | None,
    ) -> bool:
        """Adds messages and tool uses (counts in :data:`CATEGORIES` order, and by tool name); whether
        there were any."""
        if user:
            self.user_messages += user
        if assistant:
            self.assistant_messages += assistant
        return add_tool_counts(self.categories, self.tools, by_category, by_tool) or bool(user or assistant)

    def add_scans(self, outcomes: Iterable[ScanCounts], now: float) -> None:
        """Adds what ``_core.scan_many_counts`` found in one pass over a session's transcripts (``now``:
        when, the last activity when no line had a timestamp). The watcher's hot path: unrolled."""
        last: str | None = None
        busy = False
        for (
            _cursor,
            _reset,
            lines,
            user,
            assistant,
            by_category,
            tools,
            _tool_uses,
            touched,
            _first_user,
            _last_user,
            _last_reply,
            stamp,
        ) in outcomes:
            self.lines += lines
            if user or assistant:
                self.user_messages += user
                self.assistant_messages += assistant
                busy = True
            busy = add_tool_counts(self.categories, self.tools, by_category, tools) or busy
            if touched:
                recent = self.touched_files
                for path in touched:
                    if path in recent:
                        recent.remove(path)
                    recent.append(path)
                del recent[:-RECENT_FILES]
            if stamp is not None and (last is None or stamp > last):
                last = stamp
        if last is not None:
            self.last_timestamp = last
            self.pending = (last, now)
        elif busy:
            self.activity_seconds, self.pending = now, None


@dataclass(slots=True)
class SessionState:
    """Everything the tracker knows about one session; JSON round trip with :meth:`as_dict` /
    :meth:`from_dict`. Times are epoch seconds from the tracker's clock."""

    key: str
    name: str
    #: The transcript format (``claude-code``, ``pi``, ``codex``…).
    agent: str
    path: str
    state: State = "active"
    started_at: float = 0.0
    last_activity: float = 0.0
    ended_at: float | None = None
    idle_since: float | None = None
    #: The agent's own id, the session's group and resolver (to rebuild the :class:`Session`).
    session_id: str | None = None
    group: str = ""
    resolver: str = ""
    #: Why the session ended: ``hook``, ``idle_timeout`` or ``max_duration``.
    end_reason: str | None = None
    #: How long the session was quiet before its last resume (seconds).
    last_idle_seconds: float | None = None
    #: Suspension bookkeeping: since when, the total so far, and when it was last lifted.
    suspended_since: float | None = None
    suspended_total: float = 0.0
    unsuspended_at: float | None = None
    #: How many lives this session had (1 for the first; an ended session that comes back starts another).
    lives: int = 1
    #: What the session's transcripts held: the watcher's own record of the session when the watcher
    #: feeds the tracker (see :meth:`SessionTracker.observe_counts`), so that both read one set of counts.
    counts: SessionCounts = field(default_factory=SessionCounts)
    #: The last events, oldest first: ``{"kind", "time", "detail"}`` (never changed once made).
    events: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=50))
    #: Most recent first, unique.
    recent_files: list[str] = field(default_factory=list)
    #: ``Name arg`` of the last tool uses, most recent first.
    recent_tools: list[str] = field(default_factory=list)
    #: Candidate key entities and how often they came up, least recently seen first.
    entity_counts: dict[str, int] = field(default_factory=dict)
    #: The last user request.
    current_task: str | None = None
    #: The last consequential tool executions, most recent first.
    hot_memory: list[str] = field(default_factory=list)
    #: Prompts a hook reported that the transcript has not shown yet (they are not reported twice).
    pending_prompts: int = 0
    #: Where the last input that touched the session comes from (a transcript line's or a hook record's
    #: key, see :attr:`SinkEvent.key`): what the keys of the events that follow from it alone (an idle
    #: or end timeout) are made of, so that they are the same when the input is read again.
    cause: str | None = None

    @property
    def messages(self) -> dict[str, int]:
        """``{"user": N, "assistant": N}`` from :attr:`counts` (a new dict: read, do not change)."""
        counts = self.counts
        return {"user": counts.user_messages, "assistant": counts.assistant_messages}

    @property
    def categories(self) -> dict[str, int]:
        """Tool uses by category (:attr:`counts`' own dict)."""
        return self.counts.categories

    @property
    def tools(self) -> dict[str, int]:
        """Tool uses by tool name (:attr:`counts`' own dict)."""
        return self.counts.tools

    @property
    def key_entities(self) -> list[str]:
        """The most frequent entities (file base names, identifiers from prompts), ties going to the
        most recently seen: at most ``ENTITIES_REPORTED``."""
        ranked = sorted(enumerate(self.entity_counts.items()), key=lambda item: (-item[1][1], -item[0]))
        return [name for _, (name, _count) in ranked[:ENTITIES_REPORTED]]

    def add_entity(self, name: str) -> None:
        """Counts one mention of ``name`` (moving it to the most recent), keeping at most
        ``ENTITIES_COUNTED`` candidates."""
        count = self.entity_counts.pop(name, 0) + 1
        self.entity_counts[name] = count
        if len(self.entity_counts) > ENTITIES_COUNTED:
            # Drop the least mentioned, least recent candidate (never the one just added).
            candidates = list(self.entity_counts.items())[:-1]
            weakest = min(enumerate(candidates), key=lambda item: (item[1][1], item[0]))
            del self.entity_counts[weakest[1][0]]

    def session(self) -> Session:
        """The :class:`Session` this state belongs to, rebuilt from the state."""
        return Session(
            key=self.key,
            name=self.name,
            path=Path(self.path),
            format=self.agent,
            group=self.group,
            resolver=self.resolver,
            id=self.session_id,
        )

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of the state (``key_entities`` included for readers)."""
        return {
            "key": self.key,
            "name": self.name,
            "agent": self.agent,
            "path": self.path,
            "state": self.state,
            "started_at": self.started_at,
            "last_activity": self.last_activity,
            "ended_at": self.ended_at,
            "idle_since": self.idle_since,
            "session_id": self.session_id,
            "group": self.group,
            "resolver": self.resolver,
            "end_reason": self.end_reason,
            "last_idle_seconds": self.last_idle_seconds,
            "suspended_since": self.suspended_since,
            "suspended_total": self.suspended_total,
            "unsuspended_at": self.unsuspended_at,
            "lives": self.lives,
            "messages": dict(self.messages),
            "categories": dict(self.categories),
            "tools": dict(self.tools),
            # The event records are never changed once made: shared, not copied (a thousand states
            # of fifty events each are saved every few seconds by the watcher).
            "events": list(self.events),
            "context": {
                "recent_files": list(self.recent_files),
                "recent_tools": list(self.recent_tools),
                "key_entities": self.key_entities,
                "entity_counts": dict(self.entity_counts),
                "current_task": self.current_task,
            },
            "hot_memory": list(self.hot_memory),
            "pending_prompts": self.pending_prompts,
            "cause": self.cause,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], events_kept: int = 50) -> SessionState:
        """The state :meth:`as_dict` wrote. Raises :class:`ValueError` when it is not one."""
        try:
            state = str(data["state"])
            if state not in STATES:
                raise ValueError(f"unknown session state {state!r}")
            context = data.get("context") or {}
            messages = data.get("messages") or {}

            def optional_float(name: str) -> float | None:
                value = data.get(name)
                return None if value is None else float(value)

            return cls(
                key=str(data["key"]),
                name=str(data["name"]),
                agent=str(data["agent"]),
                path=str(data["path"]),
                state=cast("State", state),
                started_at=float(data["started_at"]),
                last_activity=float(data["last_activity"]),
                ended_at=optional_float("ended_at"),
                idle_since=optional_float("idle_since"),
                session_id=None if data.get("session_id") is None else str(data["session_id"]),
                group=str(data.get("group") or ""),
                resolver=str(data.get("resolver") or ""),
                end_reason=None if data.get("end_reason") is None else str(data["end_reason"]),
                last_idle_seconds=optional_float("last_idle_seconds"),
                suspended_since=optional_float("suspended_since"),
                suspended_total=float(data.get("suspended_total") or 0.0),
                unsuspended_at=optional_float("unsuspended_at"),
                lives=int(data.get("lives") or 1),
                counts=SessionCounts(
                    user_messages=int(messages.get("user") or 0),
                    assistant_messages=int(messages.get("assistant") or 0),
                    categories={k: int(v) for k, v in (data.get("categories") or {}).items()},
                    tools={str(k): int(v) for k, v in (data.get("tools") or {}).items()},
                ),
                events=deque((dict(e) for e in data.get("events") or ()), maxlen=events_kept),
                recent_files=[str(f) for f in context.get("recent_files") or ()],
                recent_tools=[str(t) for t in context.get("recent_tools") or ()],
                entity_counts={str(k): int(v) for k, v in (context.get("entity_counts") or {}).items()},
                current_task=None if context.get("current_task") is None else str(context["current_task"]),
                hot_memory=[str(h) for h in data.get("hot_memory") or ()],
                pending_prompts=int(data.get("pending_prompts") or 0),
                cause=None if data.get("cause") is None else str(data["cause"]),
            )
        except (KeyError, TypeError, AttributeError) as error:
            raise ValueError(f"not a session state: {type(error).__name__}: {error}") from None


def add_tool_counts(
    categories: dict[str, int],
    tools: dict[str, int],
    by_category: tuple[int, int, int, int],
    by_tool: Mapping[str, int] | None,
) -> bool:
    """Adds one scan's tool uses (counts in :data:`CATEGORIES` order, and by tool name) to running
    totals; whether it had any."""
    # Unrolled: twice per session a pass, thousands a second, and a scan most often has no tool use.
    edit, read, command, other = by_category
    if not (edit or read or command or other):
        return False
    get = categories.get
    if edit:
        categories["edit"] = get("edit", 0) + edit
    if read:
        categories["read"] = get("read", 0) + read
    if command:
        categories["command"] = get("command", 0) + command
    if other:
        categories["other"] = get("other", 0) + other
    if by_tool:
        get = tools.get
        for name, count in by_tool.items():
            tools[name] = get(name, 0) + count
    return True


#: The entry kinds that are events of their own (a prompt, a reply's text, a tool call).
_CONTENT: Final = frozenset({"user", "assistant", "tool"})


def _line_time(stamp: str | None) -> str | None:
    """A transcript line's timestamp as an event's time: ISO 8601 UTC with milliseconds and ``Z`` (the
    shape every event has), ``None`` when the line has none or it cannot be read."""
    if not stamp:
        return None
    if len(stamp) == 24 and stamp[10] == "T" and stamp[19] == "." and stamp[-1] == "Z":
        return stamp  # already the shape (Claude Code's, Pi's)
    moment = epoch_seconds(stamp)
    return None if moment is None else _iso(moment)


#: The events of what a session did (the others are transitions of its lifecycle).
_CONTENT_EVENTS: Final = frozenset({"prompt_submitted", "tool_executed", "response_completed"})


def _caused(cause: str | None, kind: str) -> str | None:
    """The key of a transition that ``cause`` (an input's key) brought about."""
    return None if cause is None else f"{cause}/{kind}"


def _derived(state: SessionState, kind: str) -> str | None:
    """The key of a transition that follows from the session's last input alone (a timeout)."""
    return _caused(state.cause, kind)


def _tool_data(name: str, category: str, primary_arg: str | None, line: str | None) -> dict[str, Any]:
    """A ``tool_executed`` event's data."""
    return {
        "tool": name,
        "category": category,
        "primary_arg": None if primary_arg is None else sanitize(primary_arg, DETAIL_LIMIT),
        "consequential": line is not None,
    }


def _prompt_text(text: str | None) -> str | None:
    """A prompt's text, ``None`` for none or for digest text (ours, quoted back)."""
    return None if not text or is_digest_text(text) else text


def _push_front(items: list[str], value: str, cap: int, unique: bool) -> None:
    if unique and value in items:
        items.remove(value)
    items.insert(0, value)
    del items[cap:]


class SessionTracker:
    """The lifecycle of every session the watcher follows.

    Every transition or event is a :class:`~sidelight.records.SinkEvent` (``kind``, ``session``,
    ``timestamp`` from the clock, ``data`` with at least ``state`` and ``detail``): it is passed to
    ``emit`` (when given) and returned. Not thread-safe: call it from one thread (the watcher's worker).
    """

    def __init__(
        self,
        settings: LifecycleSettings | None = None,
        clock: Callable[[], float] = time.time,
        emit: Callable[[SinkEvent], None] | None = None,
    ) -> None:
        self.settings = settings or LifecycleSettings()
        self.clock = clock
        self.emit = emit
        self._states: dict[str, SessionState] = {}
        self._sessions: dict[str, Session] = {}
        self._stamps: dict[int, str] = {}
        #: How many lifecycle transitions (every event but a prompt, a tool use or a reply) were made:
        #: the watcher saves the states again before its cursors when this changed.
        self.transitions = 0

    # -- reading ------------------------------------------------------------------------------------

    def states(self) -> dict[str, SessionState]:
        """Every session's state by key (the tracker's own objects: read, do not change)."""
        return dict(self._states)

    def get(self, key: str) -> SessionState | None:
        """One session's state, ``None`` when unknown."""
        return self._states.get(key)

    def find(self, session_id: str | None = None, path: Path | str | None = None) -> SessionState | None:
        """The state of the session with this agent id or transcript path (``None``: not known)."""
        for state in self._states.values():
            if session_id is not None and state.session_id == session_id:
                return state
            if path is not None and state.path == str(path):
                return state
        return None

    # -- feeding ------------------------------------------------------------------------------------

    def observe(self, session: Session, activity: Activity) -> list[SinkEvent]:
        """New transcript activity of ``session``: the events it means.

        A session seen for the first time (or ended before) starts (``session_start``); an idle one
        resumes (``session_resume``). Then one ``prompt_submitted`` per user message (less the prompts a
        hook already reported; the first and the last carry their text), one ``tool_executed`` per tool
        use and one ``response_completed`` per assistant message (the last one with its text). The
        current task becomes the last user request. An activity without any complete line is nothing.
        """
        categories = activity.categories
        return self._observe(
            session,
            activity.lines,
            activity.messages.user,
            activity.messages.assistant,
            (categories.edit, categories.read, categories.command, categories.other),
            activity.tools,
            activity.first_user_text,
            # ``last_user_text`` came with the core of issue 4; getattr keeps older records working.
            getattr(activity, "last_user_text", None),
            activity.files_touched,
            [
                (
                    tool.name,
                    str(tool.category),
                    tool.primary_arg,
                    None,
                    getattr(tool, "lines", None),
                    getattr(tool, "old_text", None),
                    getattr(tool, "new_text", None),
                )
                for tool in activity.tool_uses
            ],
            activity.last_assistant_text,
        )

    def observe_counts(
        self,
        session: Session,
        counts: ScanCounts,
        counted: SessionCounts | None = None,
        lines: Sequence[TranscriptLine] | None = None,
        categories: Mapping[str, str] | None = None,
    ) -> list[SinkEvent]:
        """:meth:`observe` for the tuple ``sidelight._core.scan_many_counts`` gives for a scan, as it is:
        the watcher's hot path, which builds no :class:`~sidelight.types.Activity` for thousands of
        scans a second.

        ``counted``: the caller's record of the session, to which it already added this scan
        (:meth:`SessionCounts.add_scans`): the state shares it as its :attr:`SessionState.counts`
        rather than count the scan a second time.

        ``lines``: the entries of each line the scan read (:data:`TranscriptLine`, the watcher reads
        them with ``_core.read_entries``). With them, the events are the lines' own: one
        ``prompt_submitted`` per prompt with its text, one ``tool_executed`` per tool use, one
        ``response_completed`` per reply text, each with the time of its line and a key made of the
        line's (the same each time the line is read: a sink recognises an event read again after a
        crash), and a start or resume keyed and timed by the first line. ``categories``: lowercase tool
        name -> category, for a tool use the scan's list no longer holds (more than it keeps)."""
        if lines is not None:
            return self._observe_lines(session, counts, counted, lines, categories)
        return self._observe(
            session,
            counts[2],
            counts[3],
            counts[4],
            counts[5],
            counts[6],
            counts[9],
            counts[10],
            counts[8],
            counts[7],
            counts[11],
            counted,
        )

    def _observe_lines(
        self,
        session: Session,
        counts: ScanCounts,
        counted: SessionCounts | None,
        lines: Sequence[TranscriptLine],
        categories: Mapping[str, str] | None,
    ) -> list[SinkEvent]:
        if not (counts[2] > 0 or counts[3] or counts[4] or counts[7] or lines):
            return []
        now = self.clock()
        out: list[SinkEvent] = []
        # The first line that says something starts or resumes the session: its key and time.
        first = next((line for line in lines if any(e[0] in _CONTENT for e in line[1])), None)
        cause = None if first is None else first[0]
        stamp = None if first is None else next((e[1] for e in first[1] if e[1]), None)
        state = self._wake(session, now, out, "transcript", cause, _line_time(stamp))
        state.last_activity = max(state.last_activity, now)
        if counted is None:
            state.counts.add(counts[3], counts[4], counts[5], counts[6])
        elif state.counts is not counted:
            state.counts = counted
        described = self._context(state, counts[8], counts[7])
        # The scan's tool uses are the line entries' tool calls less the ones written again (same id),
        # and only the last TOOL_USES_KEPT: they are matched from the end.
        calls: list[tuple[str, int, tuple[Any, ...]]] = []
        seen_ids: set[int] = set()
        for key, entries in lines:
            for index, entry in enumerate(entries):
                if entry[0] == "tool" and entry[3] is not None:
                    if entry[2] is not None:
                        if entry[2] in seen_ids:
                            continue
                        seen_ids.add(entry[2])
                    calls.append((key, index, entry))
        # The n-th call is matched with the scan's tool use as many from the end, when it still has one.
        offset = len(described) - len(calls)
        matched = {n: described[n + offset] for n in range(len(calls)) if n + offset >= 0}
        wanted = {(key, index): n for n, (key, index, _entry) in enumerate(calls)}
        task: str | None = None
        for key, entries in lines:
            for index, entry in enumerate(entries):
                kind = entry[0]
                if kind == "user":
                    if state.pending_prompts:
                        state.pending_prompts -= 1  # a hook reported it before the transcript had it
                        continue
                    text = _prompt_text(entry[4])
                    if text:
                        task = text
                    detail = sanitize(text, DETAIL_LIMIT) if text else None
                    out.append(
                        self._event(
                            state,
                            "prompt_submitted",
                            now,
                            detail,
                            None,
                            f"{key}.{index}",
                            _line_time(entry[1]),
                        )
                    )
                elif kind == "assistant":
                    detail = sanitize(entry[4], DETAIL_LIMIT) if entry[4] else None
                    out.append(
                        self._event(
                            state,
                            "response_completed",
                            now,
                            detail,
                            None,
                            f"{key}.{index}",
                            _line_time(entry[1]),
                        )
                    )
                elif kind == "tool":
                    n = wanted.get((key, index))
                    if n is None:
                        continue  # the same call written again: the scan counted it once
                    found = matched.get(n)
                    if found is None:
                        name = str(entry[3])
                        category = (categories or {}).get(name.lower(), "other")
                        found = (_tool_description(name, None), _tool_data(name, category, None, None))
                    out.append(
                        self._event(
                            state,
                            "tool_executed",
                            now,
                            found[0],
                            found[1],
                            f"{key}.{index}",
                            _line_time(entry[1]),
                        )
                    )
        if task:
            self._set_task(state, task)
        if lines:
            state.cause = lines[-1][0]
        return out if self.emit is None else self._send(out)

    def _context(
        self,
        state: SessionState,
        files_touched: Iterable[str] | None,
        tool_uses: Sequence[CoreToolUse] | None,
    ) -> list[tuple[str, dict[str, Any]]]:
        """Adds the files and tool uses of a scan to the session's context (recent files and tools, hot
        memory); returns each tool use's event detail and data, in order."""
        if files_touched:
            for path in files_touched:
                self._add_file(state, path)
        described: list[tuple[str, dict[str, Any]]] = []
        for name, category, primary_arg, _stamp, created_lines, old_text, new_text in tool_uses or ():
            line = hot_memory_line(name, category, primary_arg, created_lines, old_text, new_text)
            description = _tool_description(name, primary_arg)
            if line is not None:
                _push_front(state.hot_memory, line, self.settings.hot_kept, unique=False)
            _push_front(state.recent_tools, description, self.settings.tools_kept, unique=False)
            if (
                primary_arg
                and category in ("edit", "read")
                and not (files_touched and primary_arg in files_touched)  # added above
                and _looks_like_path(primary_arg)
            ):
                self._add_file(state, primary_arg)
            described.append((line or description, _tool_data(name, category, primary_arg, line)))
        return described

    def _observe(
        self,
        session: Session,
        lines: int,
        prompts: int,
        replies: int,
        categories: tuple[int, int, int, int],
        tools: Mapping[str, int] | None,
        first_user_text: str | None,
        last_user_text: str | None,
        files_touched: Iterable[str] | None,
        tool_uses: Sequence[CoreToolUse] | None,
        last_assistant_text: str | None,
        counted: SessionCounts | None = None,
    ) -> list[SinkEvent]:
        """``categories``: the counts of ``edit``, ``read``, ``command`` and ``other`` tool uses;
        ``counted``: see :meth:`observe_counts`."""
        if not (lines > 0 or prompts or replies or tool_uses):
            return []
        now = self.clock()
        out: list[SinkEvent] = []
        state = self._wake(session, now, out, source="transcript")
        state.last_activity = max(state.last_activity, now)

        if counted is None:
            state.counts.add(prompts, replies, categories, tools)
        elif state.counts is not counted:
            state.counts = counted

        if prompts:
            self._prompts(state, prompts, first_user_text, last_user_text, now, out)

        for description, data in self._context(state, files_touched, tool_uses):
            out.append(self._event(state, "tool_executed", now, description, data))

        for index in range(replies):
            last = index == replies - 1
            detail = sanitize(last_assistant_text, DETAIL_LIMIT) if last and last_assistant_text else None
            out.append(self._event(state, "response_completed", now, detail))
        return out if self.emit is None else self._send(out)

    def _prompts(
        self,
        state: SessionState,
        prompts: int,
        first_user_text: str | None,
        last_user_text: str | None,
        now: float,
        out: list[SinkEvent],
    ) -> None:
        """The ``prompt_submitted`` events of ``prompts`` new user messages, less those a hook reported
        before the transcript had them; the last request becomes the current task."""
        first_text = _prompt_text(first_user_text)
        # One prompt is usually both the first and the last: judged once.
        same = last_user_text == first_user_text
        last_text = (first_text if same else _prompt_text(last_user_text)) or (
            first_text if prompts == 1 else None
        )
        already = min(prompts, state.pending_prompts)
        state.pending_prompts -= already
        fresh = prompts - already
        if not fresh:
            return
        details: list[str | None] = [None] * fresh
        if not already:
            details[0] = first_text
        if fresh > 1 or already:
            details[-1] = last_text
        task = last_text or first_text
        if task:
            self._set_task(state, task)
        for detail in details:
            text = sanitize(detail, DETAIL_LIMIT) if detail else None
            out.append(self._event(state, "prompt_submitted", now, text))

    def hook_event(
        self,
        event: HostEvent,
        session: Session | None = None,
        *,
        key: str | None = None,
        moment: float | None = None,
    ) -> list[SinkEvent]:
        """A host hook: ``SessionStart`` starts or resumes the session, ``SessionEnd`` (also Pi's
        ``session_shutdown``) ends it, ``UserPromptSubmit`` is a prompt (and resumes an idle session).

        Without ``session``, the state is found by the event's session id or transcript path; an event
        of a session the tracker does not know and cannot build is ignored (``[]``).

        ``key``: where the hook's record is (the watcher's is the events file and the record's byte
        offset), what the events' keys are made of; ``moment``: when the hook recorded it (epoch
        seconds), the events' time and the end's.
        """
        if session is None:
            known = self.find(event.session_id, event.transcript_path)
            if known is None:
                return []
            session = self._sessions.get(known.key) or known.session()
        now = self.clock()
        stamp = None if moment is None else _iso(moment)
        out: list[SinkEvent] = []
        if event.event == "SessionEnd":
            state = self._states.get(session.key)
            if state is None or state.state == "ended":
                return []
            reason = event.raw.get("reason")
            self._end(
                state,
                now if moment is None else moment,
                "hook",
                out,
                detail=None if reason is None else str(reason),
                key=None if key is None else f"{key}/end",
            )
            state.cause = key or state.cause
            return self._send(out)
        source = event.raw.get("source")
        state = self._wake(session, now, out, str(source) if source else event.event, key, stamp)
        state.last_activity = max(state.last_activity, now)
        if key is not None:
            state.cause = key
        if event.event == "UserPromptSubmit":
            state.pending_prompts += 1
            detail = None
            if event.prompt and not is_digest_text(event.prompt):
                self._set_task(state, event.prompt)
                detail = sanitize(event.prompt, DETAIL_LIMIT)
            out.append(
                self._event(
                    state,
                    "prompt_submitted",
                    now,
                    detail,
                    {"source": "hook"},
                    None if key is None else f"{key}.0",
                    stamp,
                )
            )
        return self._send(out)

    def suspend(self, key: str, event_key: str | None = None) -> list[SinkEvent]:
        """Suspends a live session (no idle or end timer runs); ``[]`` when it is already suspended or
        ended. Raises :class:`KeyError` for an unknown session. ``event_key``: the event's key (the
        watcher's: the request's), else one made of the session's last input."""
        state = self._states[key]
        if state.state in ("suspended", "ended"):
            return []
        now = self.clock()
        previous = state.state
        state.state = "suspended"
        state.suspended_since = now
        state.idle_since = None
        event_key = event_key or _derived(state, "suspend")
        return self._send(
            [self._event(state, "session_suspend", now, None, {"previous": previous}, event_key)]
        )

    def unsuspend(self, key: str, event_key: str | None = None) -> list[SinkEvent]:
        """Lifts a suspension: the session is ``active`` again and its timers start over from now
        (suspended time does not count towards ``max_duration``). ``[]`` when it was not suspended.
        Raises :class:`KeyError` for an unknown session. ``event_key``: as for :meth:`suspend`."""
        state = self._states[key]
        if state.state != "suspended":
            return []
        now = self.clock()
        suspended = max(0.0, now - (state.suspended_since if state.suspended_since is not None else now))
        state.suspended_total += suspended
        state.suspended_since = None
        state.unsuspended_at = now
        state.state = "active"
        detail = f"suspended for {format_duration(suspended)}"
        event_key = event_key or _derived(state, "unsuspend")
        return self._send(
            [
                self._event(
                    state, "session_unsuspend", now, detail, {"suspended_seconds": suspended}, event_key
                )
            ]
        )

    def tick(self) -> list[SinkEvent]:
        """Applies the timeouts at the clock's now: ``idle`` after ``idle_timeout`` without activity,
        ``ended`` after twice that or after ``max_duration`` of (unsuspended) life. Suspended and ended
        sessions are left alone."""
        now = self.clock()
        timeout = self.settings.idle_timeout
        out: list[SinkEvent] = []
        for state in list(self._states.values()):
            if state.state in ("suspended", "ended"):
                continue
            quiet_since = max(state.last_activity, state.unsuspended_at or 0.0)
            quiet = now - quiet_since
            judged, reason = judge_session(
                quiet_since,
                now,
                timeout,
                life=now - state.started_at - state.suspended_total,
                max_duration=self.settings.max_duration,
            )
            # Keyed by the last input: a timeout follows from it alone, and is the same when the watcher
            # restarts from an older state and reaches it again.
            if judged == "ended":
                self._end(state, now, reason or "idle_timeout", out, key=_derived(state, "end"))
            elif state.state == "active" and judged == "idle":
                state.state = "idle"
                state.idle_since = quiet_since + timeout
                detail = f"no activity for {format_duration(quiet)}"
                out.append(
                    self._event(
                        state, "session_idle", now, detail, {"quiet_seconds": quiet}, _derived(state, "idle")
                    )
                )
        return self._send(out)

    def backdate(self, key: str, moment: float) -> None:
        """The session was last active at ``moment``, before it was observed (a first look at a transcript
        written before the tracker came): its timeouts count from then. A later moment changes nothing."""
        state = self._states.get(key)
        if state is not None and state.state == "active" and moment < state.last_activity:
            state.last_activity = max(moment, 0.0)

    def forget(self, key: str) -> SessionState | None:
        """Drops a session from the tracker (after it is archived); returns its last state."""
        self._sessions.pop(key, None)
        return self._states.pop(key, None)

    # -- persistence --------------------------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        """A JSON-ready dict of every session's state, for :meth:`restore` after a restart."""
        return {
            "version": SNAPSHOT_VERSION,
            "time": self.clock(),
            "sessions": {key: state.as_dict() for key, state in self._states.items()},
        }

    @classmethod
    def restore(
        cls,
        data: Mapping[str, Any],
        settings: LifecycleSettings | None = None,
        clock: Callable[[], float] = time.time,
        emit: Callable[[SinkEvent], None] | None = None,
    ) -> SessionTracker:
        """A tracker with the states of a :meth:`snapshot`. A session whose record is damaged is left
        out; a snapshot of another version is ignored (an empty tracker)."""
        tracker = cls(settings, clock, emit)
        if not isinstance(data, dict) or data.get("version") != SNAPSHOT_VERSION:
            return tracker
        sessions = data.get("sessions")
        if not isinstance(sessions, dict):
            return tracker
        for key, record in sessions.items():
            try:
                state = SessionState.from_dict(record, tracker.settings.events_kept)
            except ValueError:
                continue
            tracker._states[str(key)] = state
            tracker._sessions[str(key)] = state.session()
        return tracker

    # -- inner workings -----------------------------------------------------------------------------

    def _wake(
        self,
        session: Session,
        now: float,
        out: list[SinkEvent],
        source: str,
        cause: str | None = None,
        stamp: str | None = None,
    ) -> SessionState:
        """The live state of ``session``: a new one (``session_start``), a new life of an ended one,
        an idle one resumed (``session_resume``). The session's name and path are refreshed.
        ``cause``: the key of the input that woke it (the event's key is made of it); ``stamp``: when
        that happened (else ``now``)."""
        state = self._states.get(session.key)
        if state is not None and state.state == "active" and self._sessions.get(session.key) is session:
            return state  # the hot path: the same session, still active; nothing to refresh
        self._sessions[session.key] = session
        if state is None:
            state = self._new_state(session, now)
            self._states[session.key] = state
            data = {"source": source, "life": 1}
            out.append(self._event(state, "session_start", now, None, data, _caused(cause, "start"), stamp))
            return state
        state.name, state.path, state.agent = session.name, str(session.path), session.format
        state.group, state.resolver = session.group, session.resolver
        state.session_id = session.id or state.session_id
        if state.state == "ended":
            # A new life: the timers start over; counts, events and context carry on, so that a resume
            # context can still tell what the session did before.
            quiet = max(0.0, now - state.last_activity)
            state.state = "active"
            state.lives += 1
            state.started_at = state.last_activity = now
            state.ended_at = state.end_reason = state.idle_since = None
            state.suspended_since = state.unsuspended_at = None
            state.suspended_total = 0.0
            state.last_idle_seconds = quiet
            detail = f"new life after {format_duration(quiet)}"
            data = {"source": source, "life": state.lives, "idle_seconds": quiet}
            out.append(self._event(state, "session_start", now, detail, data, _caused(cause, "start"), stamp))
            return state
        if state.state == "idle":
            quiet = max(0.0, now - max(state.last_activity, state.unsuspended_at or 0.0))
            state.state = "active"
            state.idle_since = None
            state.last_idle_seconds = quiet
            detail = f"idle for {format_duration(quiet)}"
            data = {"idle_seconds": quiet, "source": source}
            out.append(
                self._event(state, "session_resume", now, detail, data, _caused(cause, "resume"), stamp)
            )
        return state

    def _new_state(self, session: Session, now: float) -> SessionState:
        return SessionState(
            key=session.key,
            name=session.name,
            agent=session.format,
            path=str(session.path),
            started_at=now,
            last_activity=now,
            session_id=session.id,
            group=session.group,
            resolver=session.resolver,
            events=deque(maxlen=self.settings.events_kept),
        )

    def _end(
        self,
        state: SessionState,
        now: float,
        reason: str,
        out: list[SinkEvent],
        detail: str | None = None,
        key: str | None = None,
    ) -> None:
        state.state = "ended"
        state.ended_at = now
        state.end_reason = reason
        state.idle_since = None
        state.suspended_since = None
        state.pending_prompts = 0
        text = reason if detail is None else f"{reason}: {sanitize(detail, 60)}"
        out.append(self._event(state, "session_end", now, text, {"reason": reason}, key))

    def _set_task(self, state: SessionState, text: str) -> None:
        task = sanitize(text, TASK_LIMIT)
        if not task:
            return
        state.current_task = task
        for entity in _entities_in(text):
            state.add_entity(entity)

    def _add_file(self, state: SessionState, path: str) -> None:
        clean = sanitize(path, PATH_LIMIT)
        if not clean:
            return
        _push_front(state.recent_files, clean, self.settings.files_kept, unique=True)
        base = clean.rstrip("/").rsplit("/", 1)[-1]
        if base:
            state.add_entity(base)

    def _event(
        self,
        state: SessionState,
        kind: str,
        now: float,
        detail: str | None,
        extra: Mapping[str, Any] | None = None,
        key: str | None = None,
        stamp: str | None = None,
    ) -> SinkEvent:
        """An event at ``stamp`` (when it happened: a line's time), else at ``now``, with ``key``."""
        if kind not in _CONTENT_EVENTS:
            self.transitions += 1
        if stamp is None:
            # A pass stamps thousands of events within a few milliseconds: each millisecond is formatted
            # once.
            millisecond = int(now * 1000)
            stamp = self._stamps.get(millisecond)
            if stamp is None:
                if len(self._stamps) > 64:
                    self._stamps.clear()
                stamp = self._stamps[millisecond] = _iso(now)
        state.events.append({"kind": kind, "time": stamp, "detail": detail})
        data: dict[str, Any] = (
            {"state": state.state, "detail": detail, **extra}
            if extra
            else {"state": state.state, "detail": detail}
        )
        session = self._sessions.get(state.key) or state.session()
        return SinkEvent(kind, session, stamp, data, key)

    def _send(self, events: list[SinkEvent]) -> list[SinkEvent]:
        if self.emit is not None:
            for event in events:
                self.emit(event)
        return events


# -- archive ---------------------------------------------------------------------------------------

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def _archive_id(state: SessionState) -> str:
    text = short_id(state.session_id) if state.session_id else state.key.rsplit(":", 1)[-1][-40:]
    return _UNSAFE.sub("-", text).strip("-.") or "session"


def archive_session(
    state: SessionState, archive_dir: Path, transcript: Path | None = None, key: str | None = None
) -> Path:
    """Writes ``archive_dir/YYYY-MM-DD_HH-MM_<id>.json`` (UTC time of the end, else of the last
    activity; ``<id>`` the session's short id) with the session's state, events, context and hot
    memory, atomically and ``0600``; returns its path. An existing archive of the same minute and id is
    kept: the new one gets a ``-2``, ``-3``… suffix.

    ``key``: the key of the ``session_end`` event (:attr:`SinkEvent.key`). The name then ends with a
    hash of it (``<id>-<hash>``), and an end archived before is not archived again: its archive's path
    is returned. The watcher archives an end it reads again after a crash once.

    With ``transcript``, a gzip copy of it is written beside the archive (same name, ``.jsonl.gz``).
    Raises :class:`OSError` when a file cannot be written (or the transcript read).
    """
    archive_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    name = _archive_id(state)
    if key is not None:
        import hashlib  # only when a session ends: hashlib is slow to load

        name = f"{name}-{hashlib.blake2b(key.encode(), digest_size=6).hexdigest()}"
        # The time in the name is when the end was seen, which differs when it is seen again.
        done = sorted(archive_dir.glob(f"*_{name}.json"))
        if done:
            return done[0]
    moment = state.ended_at if state.ended_at is not None else state.last_activity
    stem = f"{datetime.fromtimestamp(moment, UTC).strftime('%Y-%m-%d_%H-%M')}_{name}"
    candidate, n = stem, 1
    # A keyed end has a name of its own (a copy of its transcript left by a crash is written again).
    while key is None and (
        (archive_dir / f"{candidate}.json").exists() or (archive_dir / f"{candidate}.jsonl.gz").exists()
    ):
        n += 1
        candidate = f"{stem}-{n}"
    path = archive_dir / f"{candidate}.json"
    copy_name: str | None = None
    if transcript is not None:
        copy = archive_dir / f"{candidate}.jsonl.gz"

        def compress(fd: int) -> None:
            with (
                open_regular(transcript) as source,
                os.fdopen(os.dup(fd), "wb") as raw,
                gzip.GzipFile(filename=Path(transcript).name, mode="wb", fileobj=raw, mtime=0) as target,
            ):
                shutil.copyfileobj(source, target, 1 << 20)

        write_atomic(copy, compress)
        copy_name = copy.name
    record = {
        "version": SNAPSHOT_VERSION,
        "archived_at": _iso(time.time()),
        "ended_at": None if state.ended_at is None else _iso(state.ended_at),
        "transcript": state.path,
        "transcript_copy": copy_name,
        "session": state.as_dict(),
    }
    data = (json.dumps(record, ensure_ascii=False, indent=1) + "\n").encode("utf-8")
    write_atomic(path, data)
    return path


# -- injection -------------------------------------------------------------------------------------


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
            line = hot_memory_line(tool, category, primary_arg) or _tool_description(tool, primary_arg)
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
