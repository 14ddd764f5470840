"""The archive: a session's state written to a JSON file when it ends, with a gzip copy of its
transcript when asked (the only I/O of the lifecycle)."""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from sidelight.engine.paths import open_regular, short_id
from sidelight.features.lifecycle.records import SNAPSHOT_VERSION, iso_time
from sidelight.statefile import write_atomic

if TYPE_CHECKING:
    from sidelight.features.lifecycle.records import SessionState

__all__ = ["archive_session"]

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def _archive_id(state: SessionState) -> str:
    text = short_id(state.session_id) if state.session_id else state.key.rsplit(":", 1)[-1][-40:]
    return _UNSAFE.sub("-", text).strip("-.") or "session"


def archive_session(
    state: SessionState, archive_dir: Path, transcript: Path | None = None, key: str | None = None
) -> Path:
    """Writes ``archive_dir/YYYY-MM-DD_HH-MM_<id>.json`` (UTC time of the end, else of the last
    activity; ``<id>`` the session's short id) with the session's state, events, context and hot
    memory, atomically and ``0600``; returns its path. An existing archive of the same minute and id is
    kept: the new one gets a ``-2``, ``-3``… suffix.

    ``key``: the key of the ``session_end`` event (:attr:`SinkEvent.key`). The name then ends with a
    hash of it (``<id>-<hash>``), and an end archived before is not archived again: its archive's path
    is returned. The watcher archives an end it reads again after a crash once.

    With ``transcript``, a gzip copy of it is written beside the archive (same name, ``.jsonl.gz``).
    Raises :class:`OSError` when a file cannot be written (or the transcript read).
    """
    archive_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    name = _archive_id(state)
    if key is not None:
        import hashlib  # only when a session ends: hashlib is slow to load

        name = f"{name}-{hashlib.blake2b(key.encode(), digest_size=6).hexdigest()}"
        # The time in the name is when the end was seen, which differs when it is seen again.
        done = sorted(archive_dir.glob(f"*_{name}.json"))
        if done:
            return done[0]
    moment = state.ended_at if state.ended_at is not None else state.last_activity
    stem = f"{datetime.fromtimestamp(moment, UTC).strftime('%Y-%m-%d_%H-%M')}_{name}"
    candidate, n = stem, 1
    # A keyed end has a name of its own (a copy of its transcript left by a crash is written again).
    while key is None and (
        (archive_dir / f"{candidate}.json").exists() or (archive_dir / f"{candidate}.jsonl.gz").exists()
    ):
        n += 1
        candidate = f"{stem}-{n}"
    path = archive_dir / f"{candidate}.json"
    copy_name: str | None = None
    if transcript is not None:
        copy = archive_dir / f"{candidate}.jsonl.gz"

        def compress(fd: int) -> None:
            with (
                open_regular(transcript) as source,
                os.fdopen(os.dup(fd), "wb") as raw,
                gzip.GzipFile(filename=Path(transcript).name, mode="wb", fileobj=raw, mtime=0) as target,
            ):
                shutil.copyfileobj(source, target, 1 << 20)

        write_atomic(copy, compress)
        copy_name = copy.name
    record = {
        "version": SNAPSHOT_VERSION,
        "archived_at": iso_time(time.time()),
        "ended_at": None if state.ended_at is None else iso_time(state.ended_at),
        "transcript": state.path,
        "transcript_copy": copy_name,
        "session": state.as_dict(),
    }
    data = (json.dumps(record, ensure_ascii=False, indent=1) + "\n").encode("utf-8")
    write_atomic(path, data)
    return path
