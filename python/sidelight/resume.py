"""Welcome back: what a session is told when it comes back after a quiet spell.

A hook has no watcher to ask, so it rebuilds the session's recent state from the tail of its own
transcript (through the same :class:`~sidelight.lifecycle.SessionTracker` the watcher uses) and turns it
into :func:`~sidelight.lifecycle.resume_context`. It is given

- on Claude Code's ``SessionStart`` with ``source: resume`` (and Codex's, which speaks the same protocol);
- on the first prompt after ``idle_timeout`` without one (every host), and on the first prompt after a
  Pi ``session_start`` of a session that was idle (Pi cannot inject at session start);

and after a compaction or a clear (Claude Code ``SessionStart`` with ``source: compact`` or ``clear``)
the session gets its own ``[SESSION CONTEXT]`` block.
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import replace
from typing import TYPE_CHECKING

from sidelight.timestamps import epoch_seconds
from sidelight.types import Activity

# The lifecycle machinery is imported only to build a context: every prompt marks its time here, and
# only a session that comes back after a quiet spell needs more.
if TYPE_CHECKING:
    from pathlib import Path

    from sidelight.config import Settings
    from sidelight.lifecycle import SessionState
    from sidelight.plugins import Plugins
    from sidelight.records import Session

__all__ = ["mark_prompt", "recent_state", "resume_text", "set_pending", "take_pending"]

logger = logging.getLogger(__name__)

#: How much of a session's own transcript is read to rebuild its recent state.
TAIL_BYTES = 256 * 1024


def recent_state(session: Session, settings: Settings, plugins: Plugins) -> SessionState | None:
    """The session's state as its transcript's recent tail shows it (``None``: nothing to show)."""
    from sidelight.lifecycle import LifecycleSettings, SessionTracker
    from sidelight.reads import first_look, scan_reads

    tail = replace(settings, first_look_bytes=TAIL_BYTES)
    reads = [
        first_look(session, path, tail) for path in (session.path, *session.extra_paths) if path.exists()
    ]
    activities = [r for r in scan_reads(reads, plugins) if isinstance(r, Activity)]
    if not activities:
        return None
    stamps = [t for t in (epoch_seconds(a.last_timestamp) for a in activities) if t is not None]
    last = max(stamps) if stamps else None
    if last is None:
        try:
            last = os.stat(session.path).st_mtime  # noqa: PTH116 (a str path is at hand)
        except OSError:
            return None
    # The tracker's clock stands at the session's last activity, so its state is as it was then.
    tracker = SessionTracker(LifecycleSettings(idle_timeout=settings.idle_timeout), clock=lambda: last)
    for activity in activities:
        tracker.observe(session, activity)
    return tracker.get(session.key)


def resume_text(
    session: Session, settings: Settings, plugins: Plugins, now: float | None = None
) -> str | None:
    """The resume context of ``session`` (``None`` when its transcript shows nothing yet)."""
    from sidelight.lifecycle import resume_context

    state = recent_state(session, settings, plugins)
    if state is None or not state.events:
        return None
    state.state = "idle"
    return resume_context(state, time.time() if now is None else now)


def context_text(
    session: Session, settings: Settings, plugins: Plugins, now: float | None = None
) -> str | None:
    """The ``[SESSION CONTEXT] ... [END SESSION]`` block of ``session`` (``None``: nothing to show)."""
    from sidelight.lifecycle import session_context_block

    state = recent_state(session, settings, plugins)
    if state is None or not state.events:
        return None
    return session_context_block(state, time.time() if now is None else now)


def _marker(settings: Settings, session: Session, kind: str) -> Path:
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in session.key)
    return settings.state_dir / kind / safe


def mark_prompt(session: Session, settings: Settings, now: float | None = None) -> float | None:
    """Records a prompt of ``session`` and returns when its previous one was (``None``: first seen)."""
    marker = _marker(settings, session, "prompts")
    try:
        previous: float | None = marker.stat().st_mtime
    except OSError:
        previous = None
    now = time.time() if now is None else now
    try:
        marker.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        marker.touch(mode=0o600)
        os.utime(marker, (now, now))
    except OSError:
        logger.info("cannot record the prompt time in %s", marker, exc_info=True)
    return previous


def set_pending(session: Session, settings: Settings) -> None:
    """Keeps a resume context for the session's next prompt (hosts that cannot inject at start)."""
    marker = _marker(settings, session, "pending-resume")
    try:
        marker.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        marker.touch(mode=0o600)
    except OSError:
        logger.info("cannot keep a pending resume context in %s", marker, exc_info=True)


def take_pending(session: Session, settings: Settings) -> bool:
    """True once after :func:`set_pending`."""
    marker = _marker(settings, session, "pending-resume")
    try:
        marker.unlink()
    except OSError:
        return False
    return True
