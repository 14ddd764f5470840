"""The lifecycle's records: its settings, what one session's transcripts held (:class:`SessionCounts`)
and everything the tracker knows about one session (:class:`SessionState`), with the names and limits
they share. Data only: the tracker (:mod:`.states`) changes them, :mod:`.render` and :mod:`.archive`
read them."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal, TypeAlias, cast

from sidelight.records import Session
from sidelight.timestamps import epoch_seconds

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from sidelight._core import _ScanCounts as ScanCounts

__all__ = [
    "CATEGORIES",
    "DETAIL_LIMIT",
    "ENTITIES_COUNTED",
    "ENTITIES_REPORTED",
    "EVENT_KINDS",
    "RECENT_FILES",
    "SNAPSHOT_VERSION",
    "STATES",
    "CoreToolUse",
    "LifecycleSettings",
    "SessionCounts",
    "SessionState",
    "State",
    "TranscriptLine",
    "add_tool_counts",
    "iso_time",
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

#: Event details are cut to this many characters.
DETAIL_LIMIT: Final = 200
#: How many key entities are reported, and how many candidates are counted.
ENTITIES_REPORTED: Final = 10
ENTITIES_COUNTED: Final = 100


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


def iso_time(moment: float) -> str:
    """Epoch seconds as ISO 8601 UTC with milliseconds and ``Z``."""
    return datetime.fromtimestamp(moment, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


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
