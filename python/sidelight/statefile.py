"""Loading a JSON state file that may have been damaged: read it, or move it aside and start afresh.

sidelight writes every state file atomically (a temporary file, ``fsync``, a rename), so a file that
does not parse was damaged from outside (a full disk under another tool, a hand edit, a copy cut
short). Such a file must never stop a hook or the watcher: :func:`load_json_state` moves it aside to
``PATH.corrupt-<UTC time>`` with a warning on the ``sidelight.state`` logger and answers ``None``, so
that the caller rebuilds its state; the damaged bytes stay on disk for whoever wants to look.

>>> data = load_json_state(state_dir / "lifecycle.json")   # doctest: +SKIP
>>> state = data if isinstance(data, dict) else {}         # doctest: +SKIP
"""

from __future__ import annotations

import json
import logging
import os
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["load_json_state", "move_aside"]

logger = logging.getLogger("sidelight.state")


def move_aside(path: Path) -> Path:
    """Renames ``path`` to ``PATH.corrupt-<UTC time>`` (a free name) and returns the new path."""
    stamp = time.time()
    base = time.strftime("%Y%m%dT%H%M%S", time.gmtime(stamp)) + f".{int(stamp % 1 * 1e6):06d}Z"
    target = path.with_name(f"{path.name}.corrupt-{base}")
    n = 1
    while target.exists():
        target = path.with_name(f"{path.name}.corrupt-{base}-{n}")
        n += 1
    path.replace(target)
    return target


def load_json_state(path: Path) -> Any:
    """The JSON value in ``path``, or ``None`` when it is missing, unreadable or corrupt.

    A file that is not JSON (or not UTF-8) is moved aside with a warning, unless it was replaced while
    it was read (another process wrote a good file meanwhile). An unreadable file (permission denied) is
    left where it is, with a warning. Never raises :class:`OSError` or :class:`ValueError`.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as error:
        logger.warning("cannot read %s: %s", path, error)
        return None
    try:
        seen = os.fstat(fd)
        with os.fdopen(fd, "rb", closefd=False) as file:
            data = file.read()
    except OSError as error:
        logger.warning("cannot read %s: %s", path, error)
        return None
    finally:
        os.close(fd)
    try:
        return json.loads(data)
    except (ValueError, RecursionError) as error:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        problem = f"not JSON: {error}"
    try:
        now = path.stat()
        if (now.st_dev, now.st_ino) != (seen.st_dev, seen.st_ino):
            return None  # replaced by a writer since it was read: the next load reads the new file
        aside = move_aside(path)
    except OSError as error:
        logger.warning("%s is corrupt (%s), cannot move it aside (%s); starting afresh", path, problem, error)
        return None
    logger.warning("%s is corrupt (%s); moved it to %s and starting afresh", path, problem, aside)
    return None
