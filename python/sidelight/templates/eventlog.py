"""Built-in sink ``jsonl-log``: every activity and lifecycle event of the watcher as one JSON line in
``<state dir>/activity-events.jsonl``.

::

    {"time": "2026-01-01T10:00:00.000Z", "kind": "tool_executed", "session": {"key": "claude-code:…",
     "name": "fix tests", "format": "claude-code", "path": "/…/1f3c….jsonl", "id": "1f3c…"},
     "data": {"state": "active", "detail": "Ran: pytest -q", …}}

The file is created ``0600`` and only appended to (one ``write`` per line); when it passes
:data:`ROTATE_BYTES` it is renamed to ``activity-events.jsonl.1`` (replacing the previous one) and a new
file is started. It is not ``events.jsonl``, where the hooks record session starts and ends for the
watcher. A sink never raises: a failure is logged and the event dropped.
"""

from __future__ import annotations

import json
import logging
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from sidelight.hookspecs import hookimpl
from sidelight.sessions import SinkSpec

if TYPE_CHECKING:
    from collections.abc import Iterator

    from sidelight.sessions import SinkEvent

__all__ = [
    "ACTIVITY_EVENTS_FILE",
    "ROTATE_BYTES",
    "EventLog",
    "default_log",
    "emit",
    "event_record",
    "sidelight_sinks",
]

logger = logging.getLogger(__name__)

#: The log's file name in the state directory.
ACTIVITY_EVENTS_FILE: Final = "activity-events.jsonl"
#: Past this size the log is rotated (one old generation is kept).
ROTATE_BYTES: Final = 16 * 1024 * 1024


def event_record(event: SinkEvent) -> dict[str, Any]:
    """The JSON-ready record of one event, as the log writes it."""
    session = event.session
    return {
        "time": event.timestamp,
        "kind": event.kind,
        "session": {
            "key": session.key,
            "name": session.name,
            "format": session.format,
            "path": str(session.path),
            "id": session.id,
        },
        "data": dict(event.data),
    }


class EventLog:
    """Appends events to one JSONL file; :meth:`emit` never raises."""

    def __init__(self, path: Path | str, rotate_bytes: int = ROTATE_BYTES) -> None:
        self.path = Path(path)
        self.rotate_bytes = rotate_bytes
        # The file stays open between events: the watcher may log thousands a second.
        self._fd = -1
        self._size = 0

    def emit(self, event: SinkEvent) -> None:
        """Appends ``event`` as one line (logs and drops it when that fails)."""
        try:
            data = (json.dumps(event_record(event), ensure_ascii=False, default=str) + "\n").encode("utf-8")
            if self._fd < 0:
                self._open()
            elif self._size >= self.rotate_bytes:
                self.close()
                self.path.replace(self.path.with_name(self.path.name + ".1"))
                self._open()
            os.write(self._fd, data)
            self._size += len(data)
        except Exception as error:  # a sink never breaks the watcher
            self.close()
            logger.warning("event log %s: cannot record a %s event: %s", self.path, event.kind, error)

    def _open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
        self._fd = os.open(self.path, flags, 0o600)
        self._size = os.fstat(self._fd).st_size

    def close(self) -> None:
        """Closes the file (the next event opens it again)."""
        if self._fd >= 0:
            try:
                os.close(self._fd)
            finally:
                self._fd = -1


# The environment that decides the state directory; the log is resolved again when it changes.
_ENVIRONMENT: Final = ("SIDELIGHT_STATE_DIR", "SIDELIGHT_CONFIG", "XDG_STATE_HOME", "HOME")


def default_log() -> EventLog | None:
    """The log in the state directory of :meth:`sidelight.config.Settings.load`, resolved once per
    environment (``None`` when the settings cannot be loaded). The environment is looked at again at
    most every :data:`RECHECK_SECONDS`: the watcher logs thousands of events a second."""
    global _current, _checked_at
    now = time.monotonic()
    if _current is None or now - _checked_at >= RECHECK_SECONDS:
        key = tuple(os.environ.get(name) for name in _ENVIRONMENT)
        if key not in _logs:
            _logs[key] = _load_log()
        _current, _checked_at = (key, _logs[key]), now
    return _current[1]


#: How often :func:`default_log` looks at the environment again.
RECHECK_SECONDS: Final = 1.0
_current: tuple[tuple[str | None, ...], EventLog | None] | None = None
_checked_at = 0.0


def _load_log() -> EventLog | None:
    from sidelight.config import Settings

    try:
        state_dir = Settings.load().state_dir
    except Exception as error:
        logger.warning("event log disabled: cannot load the settings: %s", error)
        return None
    return EventLog(state_dir / ACTIVITY_EVENTS_FILE)


_logs: dict[tuple[str | None, ...], EventLog | None] = {}


def emit(event: SinkEvent) -> None:
    """The ``jsonl-log`` sink: appends ``event`` to ``<state dir>/activity-events.jsonl``."""
    log = default_log()
    if log is not None:
        log.emit(event)


@hookimpl
def sidelight_sinks() -> Iterator[SinkSpec]:
    yield SinkSpec(
        name="jsonl-log",
        emit=emit,
        description=f"activity and lifecycle events as JSON lines in <state dir>/{ACTIVITY_EVENTS_FILE}",
    )
