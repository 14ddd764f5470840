"""Exports: a host's session store that cannot be tailed, turned into JSONL files that can.

Some hosts keep their sessions where a byte cursor cannot follow them: opencode in one SQLite
database, Cline in one JSON document per session that it rewrites. Their agents append what is new in
the store to one JSONL file per session, ``<state dir>/exports/<agent>/<session id>.jsonl``
(:func:`sidelight.statelayout.export_dir`), each with its own reading of its store, and every reader then
tails those files as it tails any transcript. What such an export shares is here:

- :func:`update`: the export's index (:data:`sidelight.statelayout.EXPORT_INDEX_FILE`: per session its
  cursor and what the listing needs), read without a lock while it is current, else read again and
  rewritten (atomically) under an exclusive lock on ``index.json.lock``, so that two hooks never append
  the same lines twice;
- :func:`stat_key`: what tells that a source changed (device, inode, size, modification time);
- :func:`line`, :func:`export_file` and :func:`sidelight.statefile.append_lines`: an export's lines,
  where they go, and how they are appended (whole lines or none);
- :func:`decode_head`: what every export line decodes to first: ``type``, ``session_id`` (a ``message``
  line's ``session_id``, another line's ``id``), and a ``session`` line's ``cwd`` and ``title``.

Hot path: an agent with an export imports this module on a prompt when its store exists; it imports
only what those agents imported before.
"""

# ruff: noqa: PTH116, PTH118

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from sidelight._fast import jsonio
from sidelight._fast.logs import get_logger
from sidelight.engine.paths import open_regular
from sidelight.statefile import private_dir, write_atomic
from sidelight.statelayout import EXPORT_INDEX_FILE

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

__all__ = [
    "Event",
    "decode_head",
    "export_file",
    "line",
    "read_index",
    "read_json",
    "roots",
    "stat_key",
    "update",
]

logger = get_logger(__name__)

#: An event of an export line, as the tuples :class:`sidelight.formats.Event` names (the core reads
#: plain tuples of its fields).
Event = tuple[str, str | None, str | None, str | None, str | None, str | None, str | None, bool]


def export_file(folder: str, session_id: str) -> str:
    """A session's export file in an agent's export folder."""
    return os.path.join(folder, session_id + ".jsonl")


def roots(folder: str) -> list[Path]:
    """An export folder as a resolver's roots: itself once it exists."""
    path = Path(folder)
    return [path] if path.is_dir() else []


def stat_key(path: str) -> list[int] | None:
    """What tells that the file at ``path`` changed: its device, inode, size and modification time;
    ``None`` when it cannot be stat'ed (missing)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns]


def read_json(path: str) -> Any:
    """A JSON document, or ``None`` (missing, unreadable, not a regular file, torn mid-rewrite, not JSON)."""
    try:
        with open_regular(path) as file:
            return jsonio.loads(file.read())
    except (OSError, ValueError):  # UnicodeDecodeError is a ValueError
        return None


def read_index(folder: str) -> dict[str, Any]:
    """An export's index (``{"sessions": {id: entry}, ...}``), or ``{}`` (none yet, or damaged)."""
    index = read_json(os.path.join(folder, EXPORT_INDEX_FILE))
    return index if isinstance(index, dict) and isinstance(index.get("sessions"), dict) else {}


def line(data: Mapping[str, Any]) -> bytes:
    """One line of an export file: compact JSON, non-ASCII kept, and its newline."""
    return jsonio.dumps(data, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def update(
    agent: str,
    folder: str,
    current: Callable[[dict[str, Any]], bool],
    run: Callable[[dict[str, Any]], dict[str, Any] | None],
) -> dict[str, dict[str, Any]]:
    """Brings ``agent``'s export in ``folder`` up to date and returns its index's sessions.

    While ``current(index)`` says the index is current, nothing is locked nor written. Else, under an
    exclusive lock on the index, ``run(index)`` gets the index read again (another hook may have
    exported while this one waited), appends what is new to the export files and returns the new index,
    which is then written, or ``None`` when the index stays as it is. A folder that cannot be written
    logs one warning and answers the sessions exported before; ``run`` raising is the caller's to catch
    (the lock is let go)."""
    index = read_index(folder)
    if current(index):
        return index.get("sessions") or {}
    try:
        private_dir(folder)  # each missing level 0700: the state directory too
        lock = os.open(
            os.path.join(folder, EXPORT_INDEX_FILE + ".lock"), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600
        )
    except OSError as error:
        logger.warning("%s: cannot write the export in %s: %s", agent, folder, error)
        return dict(index.get("sessions") or {})
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        index = read_index(folder)
        new = run(index)
        if new is None:
            return dict(index.get("sessions") or {})
        data = jsonio.dumps(new, ensure_ascii=False, separators=(",", ":")).encode()
        write_atomic(Path(folder, EXPORT_INDEX_FILE), data, durable=False)
        return new["sessions"]  # type: ignore[no-any-return]
    finally:
        os.close(lock)


def decode_head(data: bytes, cwd_key: str) -> tuple[dict[str, Any], list[Event]]:
    """One line of an export file parsed, and its first events: ``type``; ``session_id`` (a ``message``
    line's ``session_id``, another line's ``id``); a ``session`` line's ``cwd`` (its field ``cwd_key``)
    and ``title``. ``ValueError`` for a line that is not a JSON object (counted as malformed)."""
    entry = jsonio.loads(data)
    if not isinstance(entry, dict):
        raise ValueError("not a JSON object")
    kind = entry.get("type")
    events: list[Event] = []
    if isinstance(kind, str):
        events.append(("type", kind, None, None, None, None, None, False))
    sid = entry.get("session_id") if kind == "message" else entry.get("id")
    if isinstance(sid, str) and sid:
        events.append(("session_id", sid, None, None, None, None, None, False))
    if kind == "session":
        cwd, title = entry.get(cwd_key), entry.get("title")
        if isinstance(cwd, str) and cwd:
            events.append(("cwd", cwd, None, None, None, None, None, False))
        if isinstance(title, str) and title:
            events.append(("title", title, None, None, None, None, None, False))
    return entry, events
