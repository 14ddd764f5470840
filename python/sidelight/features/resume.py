"""Welcome back: what a session is told when it comes back after a real absence.

A hook has no watcher to ask, so it rebuilds the session's recent state from the tail of its own
transcript (through the same :class:`~sidelight.features.lifecycle.SessionTracker` the watcher uses) and
turns it
into :func:`~sidelight.features.lifecycle.resume_context`, whose last events are the transcript's last
entries,
each with its own time, in the order they happened. It is given once per absence, only when the
session's transcript has been quiet for at least ``Settings.idle_timeout`` (:func:`welcome_back`):

- on Claude Code's ``SessionStart`` with ``source: resume`` (and Codex's, which speaks the same
  protocol); a resume after a shorter spell gets nothing;
- on the first prompt after ``idle_timeout`` without a prompt or a start of the session (every host),
  and on the first prompt after a Pi ``session_start`` of a session that was idle (Pi cannot inject at
  session start).

A welcome judged at a start is kept for the session's first prompt (:func:`set_pending`), which then
gets no second one; every prompt is marked (:func:`mark_prompt`), and a prompt within the idle timeout
counts as presence as much as the transcript does. After a compaction or a clear (Claude Code
``SessionStart`` with ``source: compact`` or ``clear``) the session gets its own ``[SESSION CONTEXT]``
block.
"""

from __future__ import annotations

import os
import time

from sidelight._fast._record import replace
from sidelight._fast.logs import get_logger
from sidelight.redact import sanitize
from sidelight.statefile import private_dir, write_atomic
from sidelight.statelayout import PENDING_RESUME_DIR, PROMPTS_DIR, session_path
from sidelight.timestamps import epoch_seconds
from sidelight.types import Activity

# The lifecycle machinery is imported only to build a context: every prompt marks its time here, and
# only a session that comes back after a quiet spell needs more.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from sidelight.config import Settings
    from sidelight.features.lifecycle import SessionState
    from sidelight.plugins import Plugins
    from sidelight.records import Session

__all__ = [
    "context_text",
    "last_prompt",
    "mark_prompt",
    "peek_pending",
    "recent_state",
    "resume_text",
    "set_pending",
    "take_pending",
    "welcome_back",
]

logger = get_logger(__name__)

#: How much of a session's own transcript is read to rebuild its recent state.
TAIL_BYTES = 256 * 1024

#: How many of the session's last transcript entries a welcome back reads for its last events.
ENTRIES_READ = 40


def recent_state(session: Session, settings: Settings, plugins: Plugins) -> SessionState | None:
    """The session's state as its transcript's recent tail shows it (``None``: nothing to show)."""
    from sidelight.engine.reads import first_look, scan_reads
    from sidelight.features.lifecycle import LifecycleSettings, SessionTracker

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
    """The resume context of ``session`` (``None`` when its transcript shows nothing yet), whatever
    the time since its last activity (:func:`welcome_back` decides whether it is due)."""
    return _welcome(session, settings, plugins, time.time() if now is None else now, None, None)


def welcome_back(
    session: Session,
    settings: Settings,
    plugins: Plugins,
    now: float | None = None,
    prompt: str | None = None,
    last_prompt: float | None = None,
) -> str | None:
    """The resume context of ``session`` when it has been quiet for at least ``settings.idle_timeout``
    until ``now``: its transcript, and its last prompt (``last_prompt``, as :func:`mark_prompt` recorded
    it) too; else (or when its transcript shows nothing yet) ``None``.

    ``prompt``: the prompt being submitted, which the host may have written to the transcript before
    its hook ran; a last entry that is this prompt is not activity before the absence."""
    now = time.time() if now is None else now
    if last_prompt is not None and now - last_prompt < settings.idle_timeout:
        return None
    return _welcome(session, settings, plugins, now, settings.idle_timeout, prompt)


def _welcome(
    session: Session,
    settings: Settings,
    plugins: Plugins,
    now: float,
    idle_timeout: float | None,
    prompt: str | None,
) -> str | None:
    from sidelight.features.lifecycle import resume_context

    state = recent_state(session, settings, plugins)
    if state is None:
        return None
    # The tracker saw the tail as one activity, stamped with its last time and grouped by kind; the
    # transcript's own entries give each event its time and order.
    events = _entry_events(session, plugins)
    if events and prompt and events[-1]["kind"] == "prompt_submitted":
        said = sanitize(prompt, 200)
        if said and str(events[-1]["detail"] or "").startswith(said[:100]):
            events.pop()  # the prompt being submitted, already in the transcript
            stamps = [t for t in (epoch_seconds(e["time"]) for e in events) if t is not None]
            state.last_activity = max(stamps) if stamps else state.last_activity
    if idle_timeout is not None and now - state.last_activity < idle_timeout:
        return None
    if events:
        state.events.clear()
        state.events.extend(events)
    base = _base(session)
    if base is not None:
        state.recent_files = [f.removeprefix(base) for f in state.recent_files]
    if not state.events:
        return None
    state.state = "idle"
    return resume_context(state, now)


def _entry_events(session: Session, plugins: Plugins) -> list[dict[str, Any]]:
    """The events of the session's last transcript entries, each with its own time (none when the
    transcript cannot be read)."""
    from sidelight.engine.reads import category_tables, decoder_for
    from sidelight.engine.scanning import recent_entries
    from sidelight.features.lifecycle import entry_events

    decoder = decoder_for(session, plugins)
    try:
        entries = recent_entries(session.path, decoder, ENTRIES_READ, text_limit=400)
    except (OSError, ValueError):
        logger.info("cannot read the last entries of %s", session.path, exc_info=True)
        return []
    base = _base(session)
    rows = [
        (
            e.timestamp,
            e.role,
            e.text,
            e.tool_name,
            e.primary_arg.replace(base, "") if base and e.primary_arg else e.primary_arg,
        )
        for e in entries
    ]
    return entry_events(rows, category_tables(plugins, (decoder,)).get(decoder))


def _base(session: Session) -> str | None:
    """The session's own folder with a trailing slash (``None``: not a folder path): paths in it are
    shown from there, as the welcome back has a small budget."""
    group = session.group.rstrip("/")
    return f"{group}/" if group.startswith("/") and len(group) > 1 else None


def context_text(
    session: Session, settings: Settings, plugins: Plugins, now: float | None = None
) -> str | None:
    """The ``[SESSION CONTEXT] ... [END SESSION]`` block of ``session`` (``None``: nothing to show)."""
    from sidelight.features.lifecycle import session_context_block

    state = recent_state(session, settings, plugins)
    if state is None or not state.events:
        return None
    return session_context_block(state, time.time() if now is None else now)


def _marker(settings: Settings, session: Session, kind: str) -> Path:
    return session_path(settings.state_dir, kind, session.key)


def last_prompt(session: Session, settings: Settings) -> float | None:
    """When :func:`mark_prompt` last recorded a prompt of ``session`` (``None``: never)."""
    try:
        return _marker(settings, session, PROMPTS_DIR).stat().st_mtime
    except OSError:
        return None


def mark_prompt(session: Session, settings: Settings, now: float | None = None) -> float | None:
    """Records a prompt of ``session`` and returns when its previous one was (``None``: first seen)."""
    marker = _marker(settings, session, PROMPTS_DIR)
    previous = last_prompt(session, settings)
    now = time.time() if now is None else now
    try:
        private_dir(marker.parent)
        marker.touch(mode=0o600)
        os.utime(marker, (now, now))
    except OSError:
        logger.info("cannot record the prompt time in %s", marker, exc_info=True)
    return previous


def set_pending(session: Session, settings: Settings, text: str) -> None:
    """Keeps ``text`` (a welcome back) for the session's next prompt: Claude Code drops what a resumed
    session's ``SessionStart`` adds, and Pi cannot inject at its start."""
    marker = _marker(settings, session, PENDING_RESUME_DIR)
    try:
        private_dir(marker.parent)
        write_atomic(marker, text.encode("utf-8"))
    except OSError:
        logger.info("cannot keep a pending resume context in %s", marker, exc_info=True)


def peek_pending(session: Session, settings: Settings) -> str | None:
    """The text :func:`set_pending` kept, left there (``None``: none)."""
    try:
        text = _marker(settings, session, PENDING_RESUME_DIR).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    return text or None


def take_pending(session: Session, settings: Settings) -> str | None:
    """The text :func:`set_pending` kept, once (``None``: none)."""
    marker = _marker(settings, session, PENDING_RESUME_DIR)
    try:
        text = marker.read_text(encoding="utf-8")
        marker.unlink()
    except (OSError, UnicodeDecodeError):
        return None
    return text or None
