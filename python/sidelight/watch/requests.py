"""Requests left for the running watcher (``sidelight suspend`` / ``resume``, the dashboard, the API): one
small JSON file each in ``<state dir>/requests/``, which the watcher takes within a second. Without a
running watcher, the request is recorded in the status snapshot for the next one.
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
from typing import TYPE_CHECKING

from sidelight.statefile import private_dir
from sidelight.statelayout import REQUESTS_DIR, STATUS_FILE
from sidelight.watch.runtime import SNAPSHOT_VERSION, read_snapshot, running_watcher, write_json_atomic

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from sidelight.config import Settings

__all__ = ["WatchRequest", "request_resume", "request_suspend", "take_requests"]

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
