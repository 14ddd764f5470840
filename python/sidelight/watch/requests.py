"""What others leave for the running watcher: requests (``sidelight suspend`` / ``resume``, the dashboard,
the API), one small JSON file each in ``<state dir>/requests/``, which the watcher takes within a
second (without a running watcher, a request is recorded in the status snapshot for the next one);
and the session starts and ends the hooks record in ``<state dir>/events.jsonl``
(:func:`read_hook_events`).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from sidelight.records import HostEvent
from sidelight.statefile import private_dir
from sidelight.statelayout import REQUESTS_DIR, STATUS_FILE
from sidelight.watch.runtime import SNAPSHOT_VERSION, read_snapshot, running_watcher, write_json_atomic

if TYPE_CHECKING:
    from collections.abc import Iterator

    from sidelight.config import Settings

__all__ = [
    "HOOK_EVENTS",
    "WatchRequest",
    "read_hook_events",
    "request_resume",
    "request_suspend",
    "take_requests",
]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class WatchRequest:
    """A request left for the running watcher by `sidelight suspend` / `resume` or the API."""

    action: str  # "suspend" or "resume"
    session: str  # the session's key
    time: float


def _request(action: str, key: str, settings: Settings) -> bool:
    """Hand a request to the running watcher; without one, record it in the snapshot.

    Returns ``True`` when a running watcher will pick it up.
    """
    if running_watcher(settings) is not None:
        folder = settings.state_dir / REQUESTS_DIR
        name = f"{time.time():.6f}-{uuid.uuid4().hex[:8]}.json"
        write_json_atomic(folder / name, {"action": action, "session": key, "time": time.time()})
        return True
    lock = settings.state_dir / (STATUS_FILE + ".lock")
    private_dir(settings.state_dir)
    fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        snapshot = read_snapshot(settings) or {"version": SNAPSHOT_VERSION, "sessions": []}
        suspended = {str(k) for k in snapshot.get("suspended") or ()}
        if action == "suspend":
            suspended.add(key)
        else:
            suspended.discard(key)
        snapshot["suspended"] = sorted(suspended)
        for record in snapshot.get("sessions") or ():
            if isinstance(record, dict) and record.get("key") == key:
                record["state"] = "suspended" if action == "suspend" else None
        write_json_atomic(settings.state_dir / STATUS_FILE, snapshot)
    finally:
        os.close(fd)
    return False


def request_suspend(key: str, settings: Settings) -> bool:
    """Suspend the session ``key`` (the host says so): the running watcher picks the request up within
    a second; without a watcher it is recorded in the snapshot for the next one. Returns ``True`` when a
    running watcher was asked."""
    return _request("suspend", key, settings)


def request_resume(key: str, settings: Settings) -> bool:
    """Undo :func:`request_suspend`."""
    return _request("resume", key, settings)


def take_requests(state_dir: Path) -> Iterator[tuple[str, WatchRequest]]:
    """The requests waiting in ``state_dir``, oldest first, each with its file's name (its key), each
    file removed as it is taken; a file that is no request is removed with a warning."""
    folder = state_dir / REQUESTS_DIR
    try:
        names = sorted(os.listdir(folder))  # noqa: PTH208
    except OSError:
        return
    for name in names:
        if not name.endswith(".json"):
            continue
        path = folder / name
        try:
            data = json.loads(path.read_bytes())
            request = WatchRequest(str(data["action"]), str(data["session"]), float(data["time"]))
        except (OSError, ValueError, KeyError, TypeError) as error:
            logger.warning("ignoring the request %s: %s", path, error)
            request = None
        with contextlib.suppress(OSError):
            path.unlink()
        if request is not None:
            yield name, request


#: The hooks' events the watcher's lifecycle hears.
HOOK_EVENTS = frozenset({"SessionStart", "SessionEnd", "UserPromptSubmit"})


def read_hook_events(
    path: Path, offset: int | None
) -> tuple[int, list[tuple[str, HostEvent, float | None]]] | None:
    """The :data:`HOOK_EVENTS` the hooks recorded in ``path`` (the events file) past ``offset``
    (``None``: from its start), each with its key (the file and the byte offset of its line, the same
    each time it is read: after a crash, from an older offset) and its time; and the offset after the
    last whole line. ``None``: nothing new, or the file cannot be read. A file shorter than ``offset``
    was replaced: it is read from its start."""
    try:
        size = path.stat().st_size
    except OSError:
        return None
    if offset is None or size < offset:
        offset = 0  # a shrunk file was replaced: read it all
    if size == offset:
        return None
    try:
        with path.open("rb") as file:
            file.seek(offset)
            data = file.read(size - offset)
    except OSError as error:
        logger.warning("cannot read %s: %s", path, error)
        return None
    complete = data.rfind(b"\n") + 1
    try:
        info = path.stat()
        file_id = f"{info.st_dev}-{info.st_ino}"
    except OSError:
        file_id = "0-0"
    events: list[tuple[str, HostEvent, float | None]] = []
    line_offset = offset
    for line in data[:complete].split(b"\n")[:-1]:
        key = f"h{file_id}:{line_offset}"
        line_offset += len(line) + 1
        try:
            record = json.loads(line)
            event = HostEvent(
                host=str(record.get("host") or ""),
                event=record["event"],
                session_id=record.get("session_id"),
                transcript_path=Path(record["transcript_path"]) if record.get("transcript_path") else None,
                cwd=Path(record["cwd"]) if record.get("cwd") else None,
                raw={"source": record.get("source"), "reason": record.get("reason")},
            )
        except (ValueError, KeyError, TypeError, AttributeError):
            continue
        if event.event not in HOOK_EVENTS:
            continue
        moment = record.get("time")
        events.append((key, event, float(moment) if isinstance(moment, int | float) else None))
    return offset + complete, events
