"""What a running watcher leaves in the state directory and how others find it: the lock that makes it
the one watcher of a state directory (``<state dir>/watch.lock``, which also holds its pid), its status
snapshot (``<state dir>/status.json``, read by ``sidelight status``, the dashboard and the hooks), and
the writes that keep the state's files private and whole.

``sidelight status``, the dashboard and the request files (:mod:`sidelight.watch.requests`) read these
without starting a watcher; :class:`sidelight.watch.watcher.Watcher` takes the lock and writes them.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import time
from typing import TYPE_CHECKING, Any

import orjson

from sidelight.errors import SidelightError
from sidelight.statefile import private_dir, private_tree, write_atomic
from sidelight.statelayout import (
    ENTRY_POINTS_FILE,
    PRIVATE_FILES,
    PRIVATE_FOLDERS,
    STATUS_FILE,
    WATCH_LOCK_FILE,
)

if TYPE_CHECKING:
    from pathlib import Path

    from sidelight.config import Settings

__all__ = [
    "SNAPSHOT_VERSION",
    "WatcherRunningError",
    "make_state_private",
    "read_snapshot",
    "running_watcher",
    "write_json_atomic",
]

logger = logging.getLogger(__name__)

#: Version of the snapshot's shape.
SNAPSHOT_VERSION = 1


class WatcherRunningError(SidelightError, RuntimeError):
    """Another ``sidelight watch`` holds the state directory."""


# -- the lock --------------------------------------------------------------------------------------------

#: How long a starting watcher retries a lock held for a moment by `sidelight status` peeking at it.
_LOCK_RETRY = 0.5


def _acquire(state_dir: Path) -> int:
    path = state_dir / WATCH_LOCK_FILE
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    deadline = time.monotonic() + _LOCK_RETRY
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            if time.monotonic() < deadline:
                time.sleep(0.02)
                continue
            pid = _read_pid(fd)
            os.close(fd)
            raise WatcherRunningError(
                f"another sidelight watch is running on {state_dir} (pid {pid or '?'})"
            ) from None
        except BaseException:
            os.close(fd)
            raise
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    except OSError as error:  # a full disk: say which file could not be written
        os.close(fd)
        error.filename = error.filename or os.fspath(path)
        raise
    return fd


def _release(fd: int | None) -> None:
    if fd is None:
        return
    with contextlib.suppress(OSError):
        os.ftruncate(fd, 0)
    os.close(fd)  # releases the lock


def _read_pid(fd: int) -> int | None:
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
        return int(text) if text else None
    except (OSError, ValueError):
        return None


def running_watcher(settings: Settings) -> int | None:
    """The pid of the watcher holding ``settings.state_dir`` (0 when its pid is unknown), else ``None``."""
    path = settings.state_dir / WATCH_LOCK_FILE
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _read_pid(fd) or 0
        return None
    finally:
        os.close(fd)  # releases a lock taken above at once


# -- files -----------------------------------------------------------------------------------------------


def write_json_atomic(path: Path, data: Any) -> None:
    """Write ``data`` as JSON to ``path`` atomically (:func:`sidelight.statefile.write_atomic`), ``0600``."""
    private_dir(path.parent)
    try:
        # orjson: the snapshot of a thousand sessions is written every second.
        payload = orjson.dumps(data)
    except (TypeError, orjson.JSONEncodeError):
        payload = json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode()
    write_atomic(path, payload)


def make_state_private(state_dir: Path) -> int:
    """Makes sidelight's folders in ``state_dir`` ``0700`` and its files ``0600`` where an older version
    or a loose umask left them open, leaving another user's and anything that is not sidelight's as they
    are (:func:`sidelight.statefile.private_tree`). A walk of the whole state: at the watcher's start
    and in ``sidelight status``, never on a hook's path. Returns how many entries it changed."""
    cache = ENTRY_POINTS_FILE.split("{", 1)[0]

    def ours(name: str) -> bool:
        # With what their writers add: NAME.lock, NAME.tmp, NAME.corrupt-<time>, a rotated NAME.1, and
        # write_atomic's temporaries .NAME.<pid>.<thread>.tmp.
        base = name[1:] if name.startswith(".") else name
        return base.startswith(cache) or any(base == f or base.startswith(f + ".") for f in PRIVATE_FILES)

    changed = private_tree(state_dir, PRIVATE_FOLDERS, ours)
    if changed:
        logger.info(
            "made %d folders and files of %s private (only their owner may read them)", changed, state_dir
        )
    return changed


#: A temporary file of :func:`write_json_atomic` this old is left over from a writer that was killed.
STALE_TEMPORARY = 60.0


def _sweep_temporaries(state_dir: Path) -> None:
    """Removes the temporary files that writers killed mid-write left in ``state_dir``."""
    cutoff = time.time() - STALE_TEMPORARY
    for path in state_dir.glob(".*.tmp"):
        with contextlib.suppress(OSError):
            if path.lstat().st_mtime < cutoff:
                path.unlink()


def read_snapshot(settings: Settings) -> dict[str, Any] | None:
    """The last snapshot a watcher wrote (``None``: none, or not readable)."""
    data = _read_json(settings.state_dir / STATUS_FILE)
    return data if isinstance(data, dict) else None


def _read_json(path: Path) -> Any:
    # A corrupt state file is moved aside with a warning and the state rebuilt (sidelight.statefile).
    from sidelight.statefile import load_json_state

    return load_json_state(path)
