"""Built-in sink ``jsonl-log``: every activity and lifecycle event of the watcher as one JSON line in
``<state dir>/activity-events.jsonl``.

::

    {"key":"5d0c…:2049-1834:14321.1","time":"2026-01-01T10:00:00.000Z","kind":"tool_executed",
     "session":{"key":"claude-code:…","name":"fix tests","format":"claude-code","path":"/…/1f3c….jsonl",
     "id":"1f3c…"},"data":{"state":"active","detail":"Ran: pytest -q",…}}

(one line in the file: compact JSON, UTF-8 text as it is). ``time`` is when it happened (the transcript
line's own timestamp, the time the hook recorded), ``key`` what it is (:attr:`SinkEvent.key`).

The log holds each event once, whatever happens to the watcher (``kill -9`` included). The watcher
saves how far it read after the log has the events of what it read, so after a crash it reads the last
lines again and makes the same events, with the same keys: the log knows the keys of its last lines
(read from its own end when it is opened, the last :data:`DEDUPE_BYTES`) and drops an event whose key
it has. A line cut short by a writer killed in the middle of it is cut off when the file is opened:
that event was not logged, and is logged whole when it comes again.

The file is created ``0600`` and only appended to (one ``write`` per event, or per pass of the watcher
through ``emit_many``, whole lines only), by one watcher at a time; when it passes
:data:`ROTATE_BYTES` it is renamed to ``activity-events.jsonl.1`` (replacing the previous one) and a new
file is started. It is not ``events.jsonl``, where the hooks record session starts and ends for the
watcher. A sink never raises: when the file cannot take a write (a full disk), nothing of it stays in
the file (:func:`sidelight.statefile.append_whole`), one line is logged, and the events wait in memory
(up to :data:`PENDING_BYTES`, past it the oldest are dropped and counted) to be written first next time.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from sidelight._fast import jsonio
from sidelight._fast._hookimpl import hookimpl
from sidelight._fast.logs import get_logger
from sidelight.records import SinkSpec
from sidelight.statefile import append_whole, private_fd
from sidelight.statelayout import ACTIVITY_EVENTS_FILE

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence
    from typing import Any, Final

    from sidelight.records import Session, SinkEvent

__all__ = [
    "DEDUPE_BYTES",
    "PENDING_BYTES",
    "ROTATE_BYTES",
    "EventLog",
    "default_log",
    "emit",
    "emit_many",
    "event_line",
    "event_record",
    "sidelight_sinks",
]

logger = get_logger(__name__)

#: Past this size the log is rotated (one old generation is kept).
ROTATE_BYTES: Final = 16 * 1024 * 1024
#: When it is opened, the log reads the keys of its last lines, this many bytes of them (the current
#: file, and the end of the previous one when the current one is shorter). A watcher killed -9 reads
#: again at most what it read since it last saved its cursors (about a second of events) and what follows
#: from its state saved before that: far less.
DEDUPE_BYTES: Final = 8 * 1024 * 1024
#: While the log cannot be written (a full disk), at most this many bytes of events wait in memory to
#: be written; past it the oldest are dropped (and counted in :attr:`EventLog.dropped`).
PENDING_BYTES: Final = 8 * 1024 * 1024


def event_record(event: SinkEvent) -> dict[str, Any]:
    """The JSON-ready record of one event, as the log writes it."""
    return {
        "key": event.key,
        "time": event.timestamp,
        "kind": event.kind,
        "session": _session_record(event.session),
        "data": dict(event.data),
    }


def _session_record(session: Session) -> dict[str, Any]:
    return {
        "key": session.key,
        "name": session.name,
        "format": session.format,
        "path": str(session.path),
        "id": session.id,
    }


def _encode(value: object) -> str:
    return jsonio.dumps(value, ensure_ascii=False, default=str, separators=(",", ":"))


def _session_json(session: Session) -> str:
    # Thousands of events a second come from the same sessions: each one's part of the line is made once
    # (looked up by key, and kept while the watcher hands the same Session object).
    hit = _session_lines.get(session.key)
    if hit is not None and hit[0] is session:
        return hit[1]
    text = _encode(_session_record(session))
    if len(_session_lines) >= 8192:
        _session_lines.clear()
    _session_lines[session.key] = (session, text)
    return text


_session_lines: dict[str, tuple[Session, str]] = {}


def event_line(event: SinkEvent) -> bytes:
    """One event as the log's line: :func:`event_record` as compact JSON (UTF-8, not ASCII-escaped),
    and a newline."""
    # orjson (a dependency) encodes the line in one call, ten times faster than json, with the session's
    # part as a ready fragment: the watcher logs thousands of events a second. It is imported on first
    # use: this module loads with every hook.
    import orjson

    record = {
        # First: the log reads the keys of its last lines from the start of each (_keys_in).
        "key": event.key,
        "time": event.timestamp,
        "kind": event.kind,
        "session": orjson.Fragment(_session_json(event.session)),
        "data": event.data,
    }
    try:
        return orjson.dumps(record, default=_plain, option=orjson.OPT_APPEND_NEWLINE)
    except (TypeError, orjson.JSONEncodeError):
        # What orjson refuses: integers past 64 bits, keys that are not text.
        return (_encode(event_record(event)) + "\n").encode()


def _plain(value: Any) -> Any:
    """What orjson does not know in an event's data: a mapping (a ``MappingProxyType``) as a dict, and
    anything else as its text."""
    from collections.abc import Mapping

    return dict(value) if isinstance(value, Mapping) else str(value)


#: How a line of the log starts when its event has a key (event_line puts it first).
_KEY_START: Final = b'{"key":"'


def _keys_in(data: bytes) -> set[int]:
    """The (hashed) keys of the whole lines in ``data``: read from the start of each line, no JSON
    parsed (a watcher's keys hold no quote or backslash; one that does is missed, and only risks an
    event logged twice)."""
    found: set[int] = set()
    start = len(_KEY_START)
    for line in data.split(b"\n"):
        if line.startswith(_KEY_START):
            end = line.find(b'"', start)
            if end > 0:
                found.add(hash(line[start:end].decode("utf-8", "replace")))
    return found


class EventLog:
    """Appends events to one JSONL file, each key once; :meth:`emit` and :meth:`emit_many` never raise."""

    def __init__(
        self, path: Path | str, rotate_bytes: int = ROTATE_BYTES, dedupe_bytes: int = DEDUPE_BYTES
    ) -> None:
        self.path = Path(path)
        self.rotate_bytes = rotate_bytes
        self.dedupe_bytes = dedupe_bytes
        # The file stays open between events: the watcher may log thousands a second.
        self._fd = -1
        self._size = 0
        #: The keys logged (hashed: a number takes a fifth of the memory of the text), in the current
        #: file and in the one before it; ``None`` until the file is opened.
        self._keys: set[int] | None = None
        self._older: set[int] = set()
        #: Events dropped because the log had their key (read again after a crash).
        self.replayed = 0
        #: The lines (with their hashed keys) that could not be written yet, oldest first.
        self._pending: list[tuple[int | None, bytes]] = []
        self._pending_bytes = 0
        #: Events dropped because the log could not be written for too long (see :data:`PENDING_BYTES`).
        self.dropped = 0

    def emit(self, event: SinkEvent) -> None:
        """Appends ``event`` as one line (logs and drops it when that fails)."""
        self.emit_many((event,))

    def emit_many(self, events: Sequence[SinkEvent]) -> None:
        """Appends ``events`` in one write of whole lines. When that fails (a full disk), none of them
        is in the file and they are kept, to be written before the next ones (up to
        :data:`PENDING_BYTES`; past it the oldest are dropped and counted); one log line says so."""
        if not events:
            return
        try:
            if self._fd < 0:
                self._open()
            elif self._size >= self.rotate_bytes:
                self.close()
                self.path.replace(self.path.with_name(self.path.name + ".1"))
                self._older, self._keys = self._keys or set(), set()
                self._open()
        except Exception as error:  # a sink never breaks the watcher
            self.close()
            self._keys = None
            self._keep([(None, event_line(event)) for event in events], events, error)
            return
        keys = self._keys
        assert keys is not None  # loaded by _open
        older = self._older
        fresh: list[tuple[int | None, bytes]] = []
        for event in events:
            hashed = None
            if event.key is not None:
                hashed = hash(event.key)
                if hashed in keys or hashed in older:
                    self.replayed += 1
                    continue
                keys.add(hashed)  # also drops a second copy within the batch (or of a kept one)
            fresh.append((hashed, event_line(event)))
        if len(fresh) < len(events):
            # Read again after a restart (a crash left the watcher's cursors behind the log).
            logger.info("event log %s: %d events already logged", self.path, len(events) - len(fresh))
        lines = self._pending + fresh if self._pending else fresh
        if not lines:
            return
        data = b"".join(line for _key, line in lines)
        try:
            append_whole(self._fd, data, self.path)
        except Exception as error:
            self._keep(lines, events, error)
            return
        self._size += len(data)
        if self._pending:
            logger.warning(
                "event log %s: wrote the %d events kept while it could not", self.path, len(self._pending)
            )
            self._pending, self._pending_bytes = [], 0

    def _keep(
        self, lines: list[tuple[int | None, bytes]], events: Sequence[SinkEvent], error: BaseException
    ) -> None:
        """Keeps ``lines`` (the kept ones and the new) to write next time, within :data:`PENDING_BYTES`."""
        first = not self._pending
        self._pending = lines
        self._pending_bytes = sum(len(line) for _key, line in lines)
        dropped = 0
        while self._pending_bytes > PENDING_BYTES and self._pending:
            hashed, line = self._pending.pop(0)
            self._pending_bytes -= len(line)
            if hashed is not None and self._keys is not None:
                self._keys.discard(hashed)  # not logged: logged when it comes again
            dropped += 1
        self.dropped += dropped
        if first or dropped:
            kinds = f"a {events[0].kind} event" if len(events) == 1 else f"{len(events)} events"
            logger.warning(
                "event log %s: cannot record %s (%s); %d kept to write when it can%s",
                self.path,
                kinds,
                _reason(error),
                len(self._pending),
                f", {dropped} of the oldest dropped" if dropped else "",
            )

    def _open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(self.path, flags, 0o600)
        try:
            private_fd(fd)  # a log an older version left 0644
            size = os.fstat(fd).st_size
            tail = os.pread(fd, min(size, self.dedupe_bytes), max(0, size - self.dedupe_bytes))
            whole = tail.rfind(b"\n") + 1
            if whole < len(tail) and (whole or size <= self.dedupe_bytes):
                # A line cut short (a writer killed in the middle of it): that event was not logged.
                os.ftruncate(fd, size - (len(tail) - whole))
                logger.warning("event log %s: cut off a line left incomplete", self.path)
                size -= len(tail) - whole
            if self._keys is None:
                # The keys of the last lines: the current file's, and the previous one's end.
                start = tail.find(b"\n") + 1 if size > self.dedupe_bytes else 0
                self._keys = _keys_in(tail[start:whole])
                self._older = set()
                if size < self.dedupe_bytes:
                    self._older = _keys_in(
                        _tail_of(self.path.with_name(self.path.name + ".1"), self.dedupe_bytes - size)
                    )
        except BaseException:
            os.close(fd)
            raise
        self._fd, self._size = fd, size

    def close(self) -> None:
        """Closes the file (the next event opens it again)."""
        if self._fd >= 0:
            try:
                os.close(self._fd)
            finally:
                self._fd = -1


def _reason(error: BaseException) -> str:
    """Why a write failed, in a few words: ``No space left on device, ENOSPC``."""
    if isinstance(error, OSError) and error.errno is not None:
        import errno

        return f"{error.strerror or error}, {errno.errorcode.get(error.errno, error.errno)}"
    return str(error) or type(error).__name__


def _tail_of(path: Path, limit: int) -> bytes:
    """The whole lines in the last ``limit`` bytes of ``path`` (nothing when it cannot be read)."""
    try:
        with path.open("rb") as file:
            size = file.seek(0, os.SEEK_END)
            file.seek(max(0, size - limit))
            data = file.read(limit)
    except OSError:
        return b""
    return data[data.find(b"\n") + 1 :] if size > limit else data


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
    emit_many((event,))


def emit_many(events: Sequence[SinkEvent]) -> None:
    """The ``jsonl-log`` sink, a watcher pass at a time: one write for all of ``events``."""
    log = default_log()
    if log is not None:
        log.emit_many(events)


@hookimpl
def sidelight_sinks() -> Iterator[SinkSpec]:
    yield SinkSpec(
        name="jsonl-log",
        emit=emit,
        emit_many=emit_many,
        description=f"activity and lifecycle events as JSON lines in <state dir>/{ACTIVITY_EVENTS_FILE}",
    )
