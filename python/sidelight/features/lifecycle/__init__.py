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

The package is split by job (each name of ``__all__`` is importable from the package too):

- :mod:`.records`: the records (:class:`LifecycleSettings`, :class:`SessionCounts`,
  :class:`SessionState`) and the names and limits they share;
- :mod:`.states`: the state machine (:func:`judge_session`, :class:`SessionTracker`);
- :mod:`.memory`: hot memory, key entities and the patterns they use;
- :mod:`.render`: what is injected from a state (the session context block, the welcome back);
- :mod:`.archive`: the archive files of ended sessions (gzip copies of their transcripts).

No prompt imports it: a welcome back does, after a quiet spell (:mod:`sidelight.features.resume`).
"""

from __future__ import annotations

from sidelight.features.lifecycle.archive import archive_session
from sidelight.features.lifecycle.memory import PATH_LIMIT, hot_memory_line
from sidelight.features.lifecycle.records import (
    EVENT_KINDS,
    RECENT_FILES,
    STATES,
    LifecycleSettings,
    SessionCounts,
    SessionState,
    State,
    add_tool_counts,
)
from sidelight.features.lifecycle.render import (
    RESUME_LIMIT,
    entry_events,
    format_duration,
    resume_context,
    session_context_block,
)
from sidelight.features.lifecycle.states import SessionTracker, judge_session

__all__ = [
    "EVENT_KINDS",
    "PATH_LIMIT",
    "RECENT_FILES",
    "RESUME_LIMIT",
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
