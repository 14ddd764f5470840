"""Reading transcripts from cursors: the one planner of what to read for a reader (a cursor entry: the
main transcript and its subagent files), the first look at a new transcript (a bounded recent tail),
the one answer to which native decoder reads a session, one parallel native scan, and the cursor entries
a scan leaves behind.

The engine's second half (the first, finding sessions, is :mod:`sidelight.discovery`). The digest, the
fleet publisher, status, resume and the watcher read through it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import sidelight._core as _core
from sidelight._record import record
from sidelight.errors import InvalidCursorError
from sidelight.formats import DEFAULT_CATEGORIES, DEFAULT_MAX_LINE_BYTES, DEFAULT_TEXT_LIMIT, is_known_format
from sidelight.logs import get_logger
from sidelight.statefile import safe_name
from sidelight.types import CURSOR_FIELDS, Activity, Cursor, CursorTuple

if TYPE_CHECKING:
    from pathlib import Path

    from sidelight.config import Settings
    from sidelight.cursors import CursorStore
    from sidelight.plugins import Plugins
    from sidelight.records import Session

__all__ = [
    "TranscriptRead",
    "category_tables",
    "commit_reads",
    "cursor_entry",
    "cursor_file",
    "decoder_for",
    "entry_data",
    "first_look",
    "first_look_cursor",
    "plan_reads",
    "saved_cursor",
    "scan_reads",
    "scan_with_resets",
    "scan_within",
]

logger = get_logger(__name__)


def cursor_file(session: Session, settings: Settings) -> Path:
    """Where ``session`` keeps its cursors into its siblings: one file per reading session, so that a
    prompt parses only its own cursors however many sessions a host runs (the volute template keeps
    its shared ``.volute/session-cursors.json``)."""
    if session.cursor_file is not None:
        return session.cursor_file
    safe = safe_name(session.key)
    return settings.state_dir / "cursors" / f"{safe}.json"


@record(frozen=False)
class TranscriptRead:
    """One transcript of one session to scan: from ``cursor`` (``None``: from the start). (A record
    written out, not a dataclass: :mod:`sidelight._record`.)"""

    __slots__ = ("cursor", "first_look", "path", "session")

    session: Session
    path: Path
    cursor: Cursor | None
    first_look: bool

    def __init__(self, session: Session, path: Path, cursor: Cursor | None, first_look: bool) -> None:
        self.session = session
        self.path = path
        self.cursor = cursor
        self.first_look = first_look


def plan_reads(
    sessions: Sequence[Session],
    saved: Mapping[str, Mapping[str, Any]],
    settings: Settings,
    *,
    skip_unchanged: bool = True,
) -> list[TranscriptRead]:
    """What to read of ``sessions`` (each session's main transcript and subagent files) from a reader's
    cursor entries ``saved``: from the saved cursor, else a first look. ``skip_unchanged`` leaves out a
    transcript whose size and identity match its cursor (one stat instead of a scan), and one that is
    gone; without it every transcript is read (the scan reports a missing one)."""
    reads: list[TranscriptRead] = []
    for session in sessions:
        entry = saved.get(session.key)
        if (
            skip_unchanged
            and entry is not None
            and not session.extra_paths
            and _unchanged(session.path, entry)
        ):
            # The common case, a thousand times a prompt: one transcript, seen before, unchanged
            # (without building its path tuple or looking its entry up again).
            continue
        for path in (session.path, *session.extra_paths):
            data = entry_data(entry, session, path)
            if skip_unchanged and data is not None and _unchanged(path, data):
                continue
            cursor = saved_cursor(path, data) if data is not None else None
            if cursor is not None:
                reads.append(TranscriptRead(session, path, cursor, first_look=False))
            elif not skip_unchanged or path.exists():
                # Never seen: its recent tail. New to a session already seen (a subagent file): all news.
                read = first_look(session, path, settings) if entry is None else None
                reads.append(read or TranscriptRead(session, path, None, first_look=False))
    return reads


def entry_data(
    entry: Mapping[str, Any] | None, session: Session, path: Path | str
) -> Mapping[str, Any] | None:
    """The stored cursor fields of one of ``session``'s transcripts in its cursor entry: the entry itself
    for the main transcript, its ``extra`` for a subagent file (``None``: none stored)."""
    if entry is None:
        return None
    if str(path) == str(session.path):
        return entry
    extra = entry.get("extra")
    data = extra.get(str(path)) if isinstance(extra, Mapping) else None
    return data if isinstance(data, Mapping) else None


def cursor_entry(
    saved: Mapping[str, Any] | None, main: str, cursors: Mapping[str, CursorTuple]
) -> dict[str, Any] | None:
    """A reader's cursor entry for one session (the shape :mod:`sidelight.cursors` describes): ``saved``
    (the entry it had, ``None`` for none) with the new ``cursors`` of the session's transcripts (path ->
    cursor tuple) put in. The main transcript's (``main``) fields make the top level, replacing what it
    held (``extra`` aside); each other file's go under ``extra``, beside the saved ones. ``None`` when
    the entry would have no ``offset`` (the main transcript was never read): it waits for a later read.

    The one builder of cursor entries: the digest's, the fleet publisher's and the watcher's.

    >>> cursor_entry(None, "/a.jsonl", {"/a.jsonl": (10, 1, 2, 3, 4, 5, 6)})["offset"]
    10
    """
    if len(cursors) == 1 and (saved is None or "extra" not in saved):
        # The common case, a session of one transcript read again: its cursor is the whole entry.
        cursor = cursors.get(main)
        if cursor is not None:
            return dict(zip(CURSOR_FIELDS, cursor, strict=True))
    found = saved.get("extra") if saved is not None else None
    extra = dict(found) if isinstance(found, Mapping) else {}
    top = cursors.get(main)
    entry: dict[str, Any]
    if top is not None:
        entry = dict(zip(CURSOR_FIELDS, top, strict=True))
    else:
        entry = {k: v for k, v in saved.items() if k != "extra"} if saved is not None else {}
    for name, cursor in cursors.items():
        if name != main:
            extra[name] = dict(zip(CURSOR_FIELDS, cursor, strict=True))
    if extra:
        entry["extra"] = extra
    return entry if "offset" in entry else None


def saved_cursor(path: Path, data: Mapping[str, Any]) -> Cursor | None:
    """The cursor a cursor-store entry holds for ``path`` (``None``: unusable, read afresh)."""
    try:
        return Cursor.from_dict(data)
    except InvalidCursorError:
        pass
    # A cursor of the seed's shape, `{"offset": N}`: trust the offset on the file as it is now.
    offset = data.get("offset")
    if isinstance(offset, int) and offset >= 0:
        try:
            return Cursor.from_tuple(_core.file_cursor(str(path), offset))
        except OSError:
            return None
    return None


def _unchanged(path: Path, saved: Mapping[str, Any]) -> bool:
    """Nothing new since the saved cursor: one stat instead of a scan for each of the many quiet
    siblings (read from the stored fields directly; building cursors for them costs more)."""
    try:
        stat = path.stat()
    except OSError:
        return True  # gone: nothing to read, and the cursor is kept should it come back
    return (
        stat.st_size == saved.get("offset")
        and stat.st_ino == saved.get("inode")
        and stat.st_dev == saved.get("dev")
    )


def first_look(session: Session, path: Path, settings: Settings) -> TranscriptRead:
    """The first look at a transcript reads only a bounded recent tail, not months of history."""
    found = first_look_cursor(str(path), settings.first_look_bytes)
    return TranscriptRead(session, path, None if found is None else Cursor.from_tuple(found), first_look=True)


def first_look_cursor(path: str, first_look_bytes: int) -> CursorTuple | None:
    """The cursor of a first look: at the first line in the last ``first_look_bytes`` of ``path``
    (``None`` when the file cannot be read: the scan then says why)."""
    try:
        return _core.file_cursor(path, _core.tail_offset(path, first_look_bytes))
    except OSError:
        return None


def scan_with_resets(
    reads: list[TranscriptRead], plugins: Plugins, settings: Settings, deadline: float | None = None
) -> list[Activity | Exception] | None:
    """:func:`scan_within` ``reads`` (without a ``deadline``, :func:`scan_reads`), then read again, like a
    first look, each transcript the scan found truncated, replaced or rewritten (``reads`` is updated in
    place). ``None`` when the deadline passed."""
    results = scan_reads(reads, plugins) if deadline is None else scan_within(reads, plugins, deadline)
    if results is None:
        return None
    again = [i for i, r in enumerate(results) if isinstance(r, Activity) and r.reset is not None]
    if again:
        redo = [first_look(reads[i].session, reads[i].path, settings) for i in again]
        redone = scan_reads(redo, plugins) if deadline is None else scan_within(redo, plugins, deadline)
        if redone is None:
            return None
        for i, read, result in zip(again, redo, redone, strict=True):
            reads[i], results[i] = read, result
    return results


def category_tables(plugins: Plugins) -> dict[str, dict[str, str]]:
    """The tool-category tables per native decoder for ``_core.scan_many``: the built-in defaults with
    the format plugins' own names over them."""
    tables: dict[str, dict[str, str]] = {name: dict(table) for name, table in DEFAULT_CATEGORIES.items()}
    for decoder, table in plugins.categories().items():
        tables.setdefault(decoder, {}).update(table)
    return tables


def decoder_for(session: Session, plugins: Plugins | None = None) -> str:
    """The native decoder that reads ``session``'s transcripts: its format plugin's decoder, else the
    format's own name when the core knows it (built in or registered), else ``auto`` (judged from the
    file by the facade; ``_core.scan_many`` refuses it as an unknown format)."""
    if plugins is not None:
        spec = plugins.formats().get(session.format)
        if spec is not None:
            return spec.decoder
    return session.format if is_known_format(session.format) else "auto"


def _scan_requests(
    reads: Sequence[TranscriptRead], plugins: Plugins
) -> tuple[list[tuple[str, str, Any]], dict[str, dict[str, str]]]:
    """The ``_core.scan_many`` requests for ``reads`` and the tool-category tables per decoder."""
    decoders = [decoder_for(r.session, plugins) for r in reads]
    tables = category_tables(plugins)
    requests = [
        (str(r.path), decoder, None if r.cursor is None else r.cursor.as_tuple())
        for r, decoder in zip(reads, decoders, strict=True)
    ]
    return requests, tables


def scan_reads(reads: Sequence[TranscriptRead], plugins: Plugins) -> list[Activity | Exception]:
    """One parallel native scan of every read, in the calling thread (no time budget): an
    :class:`Activity` or the exception (``FileNotFoundError``, ``PermissionError``…) per read."""
    if not reads:
        return []
    requests, tables = _scan_requests(reads, plugins)
    outcomes = _core.scan_many(requests, tables, DEFAULT_MAX_LINE_BYTES, DEFAULT_TEXT_LIMIT)
    return [o if isinstance(o, Exception) else Activity.from_core(o) for o in outcomes]


def scan_within(
    reads: Sequence[TranscriptRead], plugins: Plugins, deadline: float
) -> list[Activity | Exception] | None:
    """One parallel native scan of every read, or ``None`` when it does not finish by the deadline."""
    if not reads:
        return []
    requests, tables = _scan_requests(reads, plugins)

    def work() -> list[Any]:
        return _core.scan_many(requests, tables, DEFAULT_MAX_LINE_BYTES, DEFAULT_TEXT_LIMIT)

    remaining = deadline - time.monotonic()
    if remaining <= 0:
        return None
    # A daemon thread, so that a scan still running when the budget is spent never holds up the exit
    # of the hook process (an executor's threads would be joined at exit).
    box: list[Any] = []
    done = threading.Event()

    def run() -> None:
        try:
            box.append(work())
        except BaseException as error:  # handed to the caller below
            box.append(error)
        finally:
            done.set()

    threading.Thread(target=run, name="sidelight-scan", daemon=True).start()
    if not done.wait(remaining):
        return None
    if isinstance(box[0], BaseException):
        raise box[0]
    outcomes: list[Any] = box[0]
    return [o if isinstance(o, Exception) else Activity.from_core(o) for o in outcomes]


def commit_reads(
    store: CursorStore,
    current: Session,
    reads: Sequence[TranscriptRead],
    results: Sequence[Activity | Exception],
    saved: Mapping[str, Mapping[str, Any]],
    *,
    fields: Mapping[str, Mapping[str, Any]] | None = None,
) -> None:
    """Saves, in one write, the cursor entries the scans of ``reads`` leave behind (``results``, one per
    read; ``saved``: the reader's entries before). ``fields`` adds fields to the entries of the
    sessions it names, beside their cursors (the digest's entry for the reader itself keeps the
    files the reader touched)."""
    found: dict[str, tuple[Session, dict[str, CursorTuple]]] = {}
    for read, result in zip(reads, results, strict=True):
        if isinstance(result, Exception):
            continue
        key = read.session.key
        if key not in found:
            found[key] = (read.session, {})
        found[key][1][str(read.path)] = result.cursor.as_tuple()
    # An entry needs its main transcript's cursor (a subagent file read while the main one failed
    # waits for the next prompt rather than be stored without an offset).
    complete: dict[str, dict[str, Any]] = {}
    for key, (session, cursors) in found.items():
        entry = cursor_entry(saved.get(key), str(session.path), cursors)
        if entry is not None:
            if fields is not None and key in fields:
                entry.update(fields[key])
            complete[key] = entry
    if not complete:
        return
    try:
        store.update(current.key, complete)
    except (OSError, ValueError):
        # The digest still goes out; the next prompt may repeat part of it.
        logger.warning("could not save the cursors in %s", store.path, exc_info=True)
