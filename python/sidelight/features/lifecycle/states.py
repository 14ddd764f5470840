"""The state machine: :func:`judge_session`, the one rule of a session's timeouts, and
:class:`SessionTracker`, which moves every session the watcher follows from state to state and says so
in events (the package's docstring draws the states)."""

from __future__ import annotations

import time
from collections import deque
from typing import TYPE_CHECKING, Any, Final

from sidelight.features.digest import is_digest_text
from sidelight.features.lifecycle.memory import (
    PATH_LIMIT,
    entities_in,
    hot_memory_line,
    looks_like_path,
    tool_description,
)
from sidelight.features.lifecycle.records import (
    DETAIL_LIMIT,
    SNAPSHOT_VERSION,
    LifecycleSettings,
    SessionState,
    iso_time,
)
from sidelight.features.lifecycle.render import format_duration
from sidelight.records import SinkEvent
from sidelight.redact import sanitize
from sidelight.timestamps import epoch_seconds

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence
    from pathlib import Path

    from sidelight._core import _ScanCounts as ScanCounts
    from sidelight.features.lifecycle.records import CoreToolUse, SessionCounts, State, TranscriptLine
    from sidelight.records import HostEvent, Session
    from sidelight.types import Activity

__all__ = ["TASK_LIMIT", "SessionTracker", "judge_session"]

#: The current task (the last user request) is kept to this many characters.
TASK_LIMIT: Final = 500


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
    return None if moment is None else iso_time(moment)


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
                        found = (tool_description(name, None), _tool_data(name, category, None, None))
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
            description = tool_description(name, primary_arg)
            if line is not None:
                _push_front(state.hot_memory, line, self.settings.hot_kept, unique=False)
            _push_front(state.recent_tools, description, self.settings.tools_kept, unique=False)
            if (
                primary_arg
                and category in ("edit", "read")
                and not (files_touched and primary_arg in files_touched)  # added above
                and looks_like_path(primary_arg)
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
        stamp = None if moment is None else iso_time(moment)
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
        for entity in entities_in(text):
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
                stamp = self._stamps[millisecond] = iso_time(now)
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
