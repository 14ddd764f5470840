"""Following session status: the one owner of the rules that the watcher's snapshot, ``sidelight status``
and the dashboard's :class:`~sidelight.dashboard.data.Board` share to judge a session's state without a
lifecycle tracker, and to tell when it turns by the clock alone.

- :func:`derive_state`: ``active``, ``idle``, ``ended`` or ``suspended`` from a session's facts (its last
  activity, the idle timeout, a suspension, the end its host recorded, whether its process runs), by
  :func:`sidelight.features.lifecycle.judge_session`, the tracker's own rule;
- :func:`liveness_of`: whether a session's process runs, as its host's registry says
  (:func:`sidelight.engine.liveness.session_liveness`);
- :func:`host_ended`: the end its host recorded for a session (the hooks' events file), which counts
  unless the session started again since;
- :func:`state_turns` / :func:`next_state_turn`: when a quiet session turns idle, then ended, with no
  write (the dashboard refreshes then; its timeline marks them);
- :func:`transcript_identities`: every listed session's transcripts' identities, in one native ``stat``
  call (a follower reads again only the sessions whose transcripts changed).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from sidelight import _core
from sidelight.features.lifecycle import judge_session

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from sidelight.records import Liveness, Session

__all__ = [
    "Identity",
    "derive_state",
    "host_ended",
    "live_state",
    "liveness_of",
    "next_state_turn",
    "state_turns",
    "transcript_identities",
]

#: A transcript's ``(size, inode, device)`` (``None``: it cannot be stat-ed).
Identity = tuple[int, int, int] | None


def derive_state(
    last_activity: float | None,
    now: float,
    idle_timeout: float,
    *,
    suspended: bool = False,
    ended_at: float | None = None,
    liveness: Liveness | None = None,
) -> str:
    """A session's state judged from its facts, without a tracker
    (:func:`~sidelight.features.lifecycle.judge_session`,
    the tracker's own rule): ``active`` within the idle timeout, ``idle`` within twice that, else
    ``ended``; ``ended`` as well when its host said so (``ended_at``) and nothing was written since;
    ``suspended`` when asked to.

    Where its host's registry tells (``liveness``; ``None``: it does not): a session whose process is
    ``gone`` has ``ended``, however recently it wrote; one whose process is ``running`` is not ended
    by the clock (``idle`` at most), only by its host's word."""
    if liveness == "gone":
        return live_state(state=None, liveness=liveness)
    state, why = judge_session(last_activity, now, idle_timeout, ended_at=ended_at, suspended=suspended)
    if liveness == "running" and why == "idle_timeout":
        return "active" if last_activity is None else "idle"
    return state


def live_state(state: str | None, liveness: Liveness | None) -> str:
    """A state judged elsewhere (the watcher's), corrected by whether the session's process runs: one
    whose process is ``gone`` has ``ended`` (a process that died writes nothing to say so)."""
    return "ended" if liveness == "gone" else state or "active"


def liveness_of(session_ids: Iterable[str | None], live: Mapping[str, Liveness]) -> Liveness | None:
    """Whether the process of a session (known by any of ``session_ids``) runs, from ``live``
    (:func:`sidelight.engine.liveness.session_liveness`); ``None``: no registry names it."""
    found = [live[i.lower()] for i in session_ids if i and i.lower() in live]
    return "running" if "running" in found else (found[0] if found else None)


def host_ended(session_ids: Iterable[str | None], lives: Mapping[str, tuple[float, float]]) -> float | None:
    """When the host of a session (known by any of ``session_ids``: the listing's, its transcript's) last
    recorded its end, from ``lives`` (:func:`sidelight.features.recap.handoff.hook_lives`); ``None`` when
    it never
    did, or started it again since."""
    session_id = next((i.lower() for i in session_ids if i and i.lower() in lives), "")
    started, stopped = lives.get(session_id, (0.0, 0.0))
    return stopped if stopped > 0.0 and stopped >= started else None


def state_turns(last_activity: float, idle_timeout: float) -> tuple[float, float]:
    """When a session last active at ``last_activity`` turns ``idle``, then ``ended``, with no write
    (the moments :func:`derive_state` changes its answer at)."""
    return last_activity + idle_timeout, last_activity + 2 * idle_timeout


def next_state_turn(last_activities: Iterable[float | None], now: float, idle_timeout: float) -> float:
    """The next moment after ``now`` one of the sessions (their last activities) turns by the clock
    alone (``inf``: none will)."""
    return min(
        (
            moment
            for last in last_activities
            if last is not None
            for moment in state_turns(last, idle_timeout)
            if moment > now
        ),
        default=float("inf"),
    )


def transcript_identities(sessions: Iterable[Session]) -> dict[str, tuple[Identity, ...]]:
    """Per session key, the identities of its transcripts (the main one, then its other files), in one
    native call for all of them."""
    sessions = list(sessions)
    paths = [os.fspath(p) for s in sessions for p in (s.path, *s.extra_paths)]
    found = iter(_core.file_identities(paths))
    return {s.key: tuple(next(found) for _ in range(1 + len(s.extra_paths))) for s in sessions}
