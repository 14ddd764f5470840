"""Reading transcripts from cursors: the one planner of what to read for a reader (a cursor entry: the
main transcript and its subagent files), the first look at a new transcript (a bounded recent tail),
the one answer to which native decoder reads a session, one parallel native scan, and the cursor entries
a scan leaves behind.

The engine's second half (the first, finding sessions, is :mod:`sidelight.engine.discovery`). The digest, the
fleet publisher, status, resume and the watcher read through it: where a read starts (:func:`start_of`:
its cursor, else a first look, else its start), which decoder reads it (:func:`decoder_for`), and what
a truncated, replaced or rewritten transcript gets (read again like a first look) are answered here
once. The watcher's batched fast path is the engine's batch call, :func:`count_reads`: the same rules
on the core's count tuples, without a Python object per line.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Mapping, Sequence

import sidelight._core as _core
from sidelight._fast._record import record
from sidelight._fast.logs import get_logger
from sidelight.errors import InvalidCursorError
from sidelight.formats import DEFAULT_CATEGORIES, DEFAULT_MAX_LINE_BYTES, DEFAULT_TEXT_LIMIT, is_known_format
from sidelight.statelayout import CURSORS_DIR, session_path
from sidelight.types import CURSOR_FIELDS, Activity, Cursor, CursorTuple

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, overload

    from sidelight._core import _ScanCounts as ScanCounts
    from sidelight.config import Settings
    from sidelight.cursors import CursorStore
    from sidelight.plugins import Plugins
    from sidelight.records import Session

__all__ = [
    "Head",
    "TranscriptRead",
    "category_tables",
    "commit_reads",
    "count_reads",
    "cursor_entry",
    "cursor_file",
    "decoder_for",
    "entry_cursor",
    "entry_data",
    "first_look",
    "first_look_cursor",
    "has_news",
    "line_entries",
    "plan_reads",
    "saved_cursor",
    "scan_reads",
    "scan_with_resets",
    "scan_within",
    "start_of",
]

logger = get_logger(__name__)


def cursor_file(session: Session, settings: Settings) -> Path:
    """Where ``session`` keeps its cursors into its siblings: one file per reading session, so that a
    prompt parses only its own cursors however many sessions a host runs (the volute template keeps
    its shared ``.volute/session-cursors.json``)."""
    if session.cursor_file is not None:
        return session.cursor_file
    return session_path(settings.state_dir, CURSORS_DIR, session.key, ".json")


@record(frozen=False)
class TranscriptRead:
    """One transcript of one session to scan: from ``cursor`` (``None``: from the start). (A record
    written out, not a dataclass: :mod:`sidelight._fast._record`.)"""

    __slots__ = ("cursor", "first_look", "path", "pending", "session", "skipped")

    session: Session
    path: Path
    cursor: Cursor | None
    first_look: bool
    #: About how many bytes the read has to scan, as planned (``0``: not known): the scans of a time
    #: budget take the small reads first.
    pending: int
    #: Bytes of older activity left unread to keep up (a sibling further behind than
    #: :data:`CATCH_UP_BYTES`: only its recent tail is read); the digest says so.
    skipped: int

    def __init__(
        self,
        session: Session,
        path: Path,
        cursor: Cursor | None,
        first_look: bool,
        pending: int = 0,
        skipped: int = 0,
    ) -> None:
        self.session = session
        self.path = path
        self.cursor = cursor
        self.first_look = first_look
        self.pending = pending
        self.skipped = skipped


def plan_reads(
    sessions: Sequence[Session],
    saved: Mapping[str, Mapping[str, Any]],
    settings: Settings,
    *,
    skip_unchanged: bool = True,
    deadline: float | None = None,
    share: float = 1.0,
) -> list[TranscriptRead]:
    """What to read of ``sessions`` (each session's main transcript and subagent files) from a reader's
    cursor entries ``saved``: from the saved cursor, else a first look. ``skip_unchanged`` leaves out a
    transcript whose size and identity match its cursor (one stat instead of a scan), and one that is
    gone; without it every transcript is read (the scan reports a missing one). A transcript more than
    :data:`CATCH_UP_BYTES` behind its cursor is read like a first look, and the bytes it skips are
    counted in the read's ``skipped``.

    ``deadline`` (a :func:`time.monotonic` time): planning stops at ``share`` of the time from the first
    transcript with news to the deadline (the rest is for reading what was planned), once at least
    :data:`MIN_READS` reads are planned; the sessions left wait for a later prompt (first looks cost a
    few file reads each, and a backlog must drain over successive prompts rather than never)."""
    reads: list[TranscriptRead] = []
    stop: float | None = None
    # The common case, a thousand times a prompt: one transcript, seen before. Its stat, with the
    # others', in one native call (one handover of the interpreter's lock rather than a thousand).
    quiet_candidates = [s for s in sessions if not s.extra_paths and s.key in saved] if skip_unchanged else []
    identities = dict(
        zip(
            map(id, quiet_candidates),
            _core.file_identities([s.path for s in quiet_candidates]),
            strict=True,
        )
    )
    for session in sessions:
        entry = saved.get(session.key)
        known: int | None = None  # the main transcript's news, when already told
        if skip_unchanged and entry is not None and not session.extra_paths:
            known = _news_of(identities.get(id(session), _UNSEEN), entry, session.path)
            if known is None:
                # The common case, a thousand times a prompt: one transcript, seen before, unchanged
                # (without building its path tuple or looking its entry up again).
                continue
        if deadline is not None:
            if stop is None:  # the first with news: the quiet ones' stats before it took what they took
                now = time.monotonic()
                stop = now + max(deadline - now, 0.0) * share
            elif len(reads) >= MIN_READS and time.monotonic() >= stop:
                break
        for path in (session.path, *session.extra_paths):
            data = entry_data(entry, session, path)
            if known is not None:
                news: int | None = known
            else:
                news = _news(path, data) if skip_unchanged and data is not None else UNKNOWN
            if news is None:
                continue
            cursor = saved_cursor(path, data) if data is not None else None
            if cursor is not None:
                if news > CATCH_UP_BYTES:
                    # Too far behind to keep up: its recent tail, and a word of what was left unread.
                    read = first_look(session, path, settings)
                    if read.cursor is not None and read.cursor.offset > cursor.offset:
                        read.skipped = read.cursor.offset - cursor.offset
                        reads.append(read)
                        continue
                reads.append(TranscriptRead(session, path, cursor, False, max(news, 0)))
            elif not skip_unchanged or path.exists():
                reads.append(_start_read(session, path, entry is not None, settings))
    return reads


def start_of(
    path: str, cursor: CursorTuple | None, known: bool, first_look_bytes: int
) -> tuple[CursorTuple | None, bool]:
    """Where a read of ``path`` starts (``None``: at its start), and whether it is a first look: at the
    reader's ``cursor`` when it has one; without one, a first look at its recent tail
    (:func:`first_look_cursor`) when the reader has never read the session (its history is not
    news), else from the start (a file new to a session read before, a subagent's: all news). The
    one rule of :func:`plan_reads` and of the watcher's reads (:func:`count_reads`)."""
    if cursor is not None:
        return cursor, False
    if known:
        return None, False
    return first_look_cursor(path, first_look_bytes), True


def _start_read(session: Session, path: Path, known: bool, settings: Settings) -> TranscriptRead:
    """The read of a transcript without a cursor (:func:`start_of`)."""
    start, looked = start_of(str(path), None, known, settings.first_look_bytes)
    cursor = None if start is None else Cursor.from_tuple(start)
    return TranscriptRead(session, path, cursor, looked, settings.first_look_bytes if looked else 0)


#: Reads a time budget always plans and scans (the first scan batch), even when the budget was spent
#: before they could start (listing thousands of sessions): each prompt makes some progress.
MIN_READS = 16
#: A sibling further behind its cursor than this (bytes) is read like a first look (its recent tail),
#: and its digest line says how much older activity was not shown: one transcript's backlog never
#: takes more than a few milliseconds of a prompt's budget.
CATCH_UP_BYTES = 32 << 20
#: :func:`_news` of a transcript whose news cannot be told from a stat.
UNKNOWN = 0


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


def entry_cursor(entry: Mapping[str, Any] | None, session: Session, path: Path) -> CursorTuple | None:
    """The cursor a reader's cursor entry for ``session`` holds for its transcript ``path``
    (:func:`entry_data`, :func:`saved_cursor`; ``None``: none, or unusable)."""
    data = entry_data(entry, session, path)
    if data is None:
        return None
    cursor = saved_cursor(path, data)
    return None if cursor is None else cursor.as_tuple()


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


def _news(path: Path, saved: Mapping[str, Any]) -> int | None:
    """How many bytes past the saved cursor a transcript has (``None``: nothing new, or gone; the cursor
    is kept should it come back; :data:`UNKNOWN` for another file in its place or a cursor without
    its identity): one stat instead of a scan for each of the many quiet siblings, read from the
    stored fields directly (building cursors for them costs more)."""
    try:
        stat = path.stat()
    except OSError:
        return None
    return _news_of((stat.st_size, stat.st_ino, stat.st_dev), saved, path)


#: Stands for "not stat-ed yet" in :func:`plan_reads`' batch (a session listed twice).
_UNSEEN = (-1, -1, -1)


def has_news(cursor: CursorTuple | None, size: int, dev: int, inode: int) -> bool:
    """Whether a transcript of ``size`` bytes, file ``inode`` on ``dev``, may hold something past a
    reader's ``cursor`` (``None``: never read): another file in its place, or another size. The stat
    test of :func:`_news_of`, for the watcher's cursor tuples ``(offset, dev, inode, ...)``."""
    return cursor is None or cursor[0] != size or cursor[2] != inode or cursor[1] != dev


def _news_of(identity: tuple[int, int, int] | None, saved: Mapping[str, Any], path: Path) -> int | None:
    """:func:`_news` from a transcript's ``(size, inode, device)`` (``None``: it cannot be stat-ed)."""
    if identity is None:
        return None
    if identity is _UNSEEN:
        return _news(path, saved)
    size, inode, device = identity
    if inode != saved.get("inode") or device != saved.get("dev"):
        return UNKNOWN
    offset = saved.get("offset")
    if size == offset:
        return None
    return size - offset if isinstance(offset, int) else UNKNOWN


def first_look(session: Session, path: Path, settings: Settings) -> TranscriptRead:
    """The first look at a transcript reads only a bounded recent tail, not months of history. A
    transcript found truncated, replaced or rewritten is read again this way (:func:`scan_with_resets`,
    :func:`count_reads`)."""
    found = first_look_cursor(str(path), settings.first_look_bytes)
    cursor = None if found is None else Cursor.from_tuple(found)
    return TranscriptRead(session, path, cursor, first_look=True, pending=settings.first_look_bytes)


def first_look_cursor(path: str, first_look_bytes: int) -> CursorTuple | None:
    """The cursor of a first look: at the first line in the last ``first_look_bytes`` of ``path``
    (``None`` when the file cannot be read: the scan then says why)."""
    try:
        return _core.file_cursor(path, _core.tail_offset(path, first_look_bytes))
    except OSError:
        return None


if TYPE_CHECKING:

    @overload
    def scan_with_resets(
        reads: list[TranscriptRead],
        plugins: Plugins,
        settings: Settings,
        deadline: None = None,
        grace: float = 0.0,
    ) -> list[Activity | Exception]: ...

    @overload
    def scan_with_resets(
        reads: list[TranscriptRead], plugins: Plugins, settings: Settings, deadline: float, grace: float = 0.0
    ) -> list[Activity | Exception | None]: ...


def scan_with_resets(
    reads: list[TranscriptRead],
    plugins: Plugins,
    settings: Settings,
    deadline: float | None = None,
    grace: float = 0.0,
) -> list[Any]:  # the overloads above say what
    """:func:`scan_within` ``reads`` (without a ``deadline``, :func:`scan_reads`), then read again, like a
    first look, each transcript the scan found truncated, replaced or rewritten (``reads`` is updated in
    place). A read not scanned by the deadline has ``None`` in its slot (never without one)."""
    results: list[Activity | Exception | None]
    if deadline is None:
        results = list(scan_reads(reads, plugins))
    else:
        results = scan_within(reads, plugins, deadline, grace)
    again = [i for i, r in enumerate(results) if isinstance(r, Activity) and r.reset is not None]
    if again:
        redo = [first_look(reads[i].session, reads[i].path, settings) for i in again]
        redone: Sequence[Activity | Exception | None] = (
            scan_reads(redo, plugins) if deadline is None else scan_within(redo, plugins, deadline)
        )
        for i, read, result in zip(again, redo, redone, strict=True):
            if result is None:
                results[i] = None  # the next prompt finds the reset again
            else:
                reads[i], results[i] = read, result
    return results


def category_tables(plugins: Plugins, decoders: Collection[str] | None = None) -> dict[str, dict[str, str]]:
    """The tool-category tables per native decoder for ``_core.scan_many``: the built-in defaults with
    the format plugins' own names over them (theirs for ``decoders`` only, when given)."""
    tables: dict[str, dict[str, str]] = {name: dict(table) for name, table in DEFAULT_CATEGORIES.items()}
    for decoder, table in plugins.categories(decoders).items():
        tables.setdefault(decoder, {}).update(table)
    return tables


def decoder_for(session: Session, plugins: Plugins | None = None) -> str:
    """The native decoder that reads ``session``'s transcripts: its format plugin's decoder, else the
    format's own name when the core knows it (built in or registered), else ``auto`` (judged from the
    file by the facade; ``_core.scan_many`` refuses it as an unknown format)."""
    if plugins is not None:
        spec = plugins.format(session.format)
        if spec is not None:
            return spec.decoder
    return session.format if is_known_format(session.format) else "auto"


def _scan_requests(
    reads: Sequence[TranscriptRead], plugins: Plugins
) -> tuple[list[tuple[str, str, Any]], dict[str, dict[str, str]]]:
    """The ``_core.scan_many`` requests for ``reads`` and the tool-category tables per decoder."""
    decoders = [decoder_for(r.session, plugins) for r in reads]
    tables = category_tables(plugins, set(decoders))
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
    outcomes = _core.scan_many(requests, tables, DEFAULT_MAX_LINE_BYTES, DEFAULT_TEXT_LIMIT, results=True)
    return [o if isinstance(o, Exception) else Activity.from_core(o) for o in outcomes]


#: The first batch of a budgeted scan holds at most this many reads and bytes; each next one twice
#: as many: a prompt's few reads are one native call, and a backlog is read in pieces that each fit.
FIRST_BATCH_READS = MIN_READS
FIRST_BATCH_BYTES = 4 << 20


def _batches(reads: Sequence[TranscriptRead]) -> list[list[int]]:
    """The indices of ``reads`` in scan batches: the smallest reads first (the most siblings within a
    budget), each batch up to twice the size of the one before."""
    order = sorted(range(len(reads)), key=lambda i: reads[i].pending)
    batches: list[list[int]] = []
    batch: list[int] = []
    size, most_reads, most_bytes = 0, FIRST_BATCH_READS, FIRST_BATCH_BYTES
    for i in order:
        pending = reads[i].pending
        if batch and (len(batch) >= most_reads or size + pending > most_bytes):
            batches.append(batch)
            batch, size = [], 0
            most_reads, most_bytes = most_reads * 2, most_bytes * 2
        batch.append(i)
        size += pending
    if batch:
        batches.append(batch)
    return batches


#: Reads whose news add up to at most this many bytes (each size known) are scanned without a thread
#: of their own when the budget has :data:`QUICK_SCAN_SECONDS` left: the core reads them in about a
#: millisecond, so the deadline cannot be missed by more than that.
QUICK_SCAN_BYTES = 1 << 20
QUICK_SCAN_SECONDS = 0.05


def _quick(reads: Sequence[TranscriptRead], batches: list[list[int]], remaining: float) -> bool:
    if len(batches) != 1 or remaining < QUICK_SCAN_SECONDS:
        return False
    total = 0
    for read in reads:
        if read.pending <= 0:  # its size is not known (a file replaced, a new subagent file)
            return False
        total += read.pending
    return total <= QUICK_SCAN_BYTES


def scan_within(
    reads: Sequence[TranscriptRead], plugins: Plugins, deadline: float, grace: float = 0.0
) -> list[Activity | Exception | None]:
    """Parallel native scans of ``reads`` until the deadline, in batches (:func:`_batches`): an
    :class:`Activity` or the exception per read, ``None`` for a read whose batch did not finish in time
    (it waits for a later prompt). When no batch finished by the deadline, the first one is waited for
    ``grace`` seconds more: a budget spent before the scan began still lets each prompt make progress."""
    if not reads:
        return []
    remaining = deadline - time.monotonic()
    if remaining <= 0 and grace <= 0:
        return [None] * len(reads)
    requests, tables = _scan_requests(reads, plugins)
    batches = _batches(reads)
    if _quick(reads, batches, remaining):
        # A prompt's usual news: a few KB, scanned in well under a millisecond. A thread to be able to
        # walk away from it would cost more than the scan (and the watcher answers hooks while others
        # write).
        outcomes = _core.scan_many(requests, tables, DEFAULT_MAX_LINE_BYTES, DEFAULT_TEXT_LIMIT, results=True)
        return [o if isinstance(o, Exception) else Activity.from_core(o) for o in outcomes]
    import threading  # only a scan big enough to need walking away from (a prompt's usual one is not)

    scanned: list[tuple[list[int], list[Activity | Exception]]] = []
    failed: list[BaseException] = []
    ended = [False, False]  # the worker ended; the caller stopped waiting
    progress = threading.Condition()

    def run() -> None:
        try:
            for batch in batches:
                outcomes = _core.scan_many(
                    [requests[i] for i in batch],
                    tables,
                    DEFAULT_MAX_LINE_BYTES,
                    DEFAULT_TEXT_LIMIT,
                    results=True,
                )
                done: list[Activity | Exception] = [
                    o if isinstance(o, Exception) else Activity.from_core(o) for o in outcomes
                ]
                with progress:
                    if ended[1]:
                        return  # too late: the caller has left
                    scanned.append((batch, done))
        except BaseException as error:  # handed to the caller below
            with progress:
                failed.append(error)
        finally:
            with progress:
                ended[0] = True
                progress.notify_all()

    # A daemon thread, so that a scan still running when the budget is spent never holds up the exit
    # of the hook process (an executor's threads would be joined at exit); it stops after its batch.
    threading.Thread(target=run, name="sidelight-scan", daemon=True).start()
    with progress:
        progress.wait_for(lambda: ended[0], max(remaining, 0.0))
        if not scanned and not ended[0] and grace > 0:
            progress.wait_for(lambda: ended[0] or bool(scanned), deadline + grace - time.monotonic())
        ended[1] = True
        if failed:
            raise failed[0]
        got = list(scanned)
    results: list[Activity | Exception | None] = [None] * len(reads)
    for batch, done in got:
        for i, outcome in zip(batch, done, strict=True):
            results[i] = outcome
    return results


def commit_reads(
    store: CursorStore,
    current: Session,
    reads: Sequence[TranscriptRead],
    results: Sequence[Activity | Exception | None],
    saved: Mapping[str, Mapping[str, Any]],
    *,
    fields: Mapping[str, Mapping[str, Any]] | None = None,
) -> None:
    """Saves, in one write, the cursor entries the scans of ``reads`` leave behind (``results``, one per
    read, ``None`` for one not read; ``saved``: the reader's entries before). ``fields`` adds fields to
    the entries of the sessions it names, beside their cursors (the digest's entry for the reader
    itself keeps the files the reader touched). An entry saved by someone else since ``saved`` was
    read is never moved backwards (:meth:`CursorStore.update`'s ``expected``)."""
    found: dict[str, tuple[Session, dict[str, CursorTuple]]] = {}
    for read, result in zip(reads, results, strict=True):
        if result is None or isinstance(result, Exception):
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
    for key, more in (fields or {}).items():
        # Fields for an entry not read this time (the reader's own, when it wrote nothing new) go on the
        # entry as it was saved; an entry never saved has no offset to go with them and waits.
        before = saved.get(key)
        if (
            key not in complete
            and before is not None
            and isinstance(before.get("offset"), int)
            and any(before.get(name) != value for name, value in more.items())
        ):
            complete[key] = {**before, **more}
    if not complete:
        return
    try:
        store.update(current.key, complete, expected=saved)
    except (OSError, ValueError):
        # The digest still goes out; the next prompt may repeat part of it.
        logger.warning("could not save the cursors in %s", store.path, exc_info=True)


# -- the batch call: counts ------------------------------------------------------------------------------
# The watcher's reads, thousands a second: the same rules as above (start_of, decoder_for, a reset read
# again like a first look) on the core's count tuples (``_core.scan_many_counts``), with no Python object
# per line or per cursor.

#: What the part of a transcript before a first look's tail holds: ``(lines, user_messages,
#: assistant_messages, (edit, read, command, other), tools)`` (see :func:`count_reads`).
Head = tuple[int, int, int, tuple[int, int, int, int], dict[str, int]]


def count_reads(
    requests: list[tuple[str, str, CursorTuple | None]],
    looks: list[bool],
    tables: dict[str, dict[str, str]],
    first_look_bytes: int,
    *,
    heads: bool = False,
) -> tuple[list[ScanCounts | OSError | ValueError], dict[int, Head]]:
    """The engine's batch call: one parallel native count of every request ``(path, decoder, start)``
    (``start`` from :func:`start_of`; ``looks[i]``: whether it is a first look), then each transcript
    found truncated, replaced or rewritten read again like a first look, its request and look updated
    in place (:func:`scan_with_resets`' rule). A count tuple or the exception per request.

    ``heads``: the part of each first look's transcript before its recent tail is counted too (a whole
    scan, once, when a reader first sees a transcript: about 35 ms for 50 MB), and its counts returned
    by request index, so that a reader's totals count the whole transcript as ``sidelight scan`` does
    while its news is the tail only. Should the file have grown between the two scans, the request's
    count takes the whole scan's cursor: every line is counted once (its news then misses the lines
    written in between)."""
    outcomes = _core.scan_many_counts(requests, tables, DEFAULT_MAX_LINE_BYTES, DEFAULT_TEXT_LIMIT)
    found: dict[int, Head] = {}
    if heads:
        skipped = [i for i, (_p, _d, start) in enumerate(requests) if looks[i] and start and start[0] > 0]
        if skipped:
            found = _count_heads(skipped, requests, outcomes, tables)
    again = [i for i, o in enumerate(outcomes) if not isinstance(o, Exception) and o[1] is not None]
    if again:
        for i in again:
            logger.info("%s was %s; reading its recent tail again", requests[i][0], outcomes[i][1])  # type: ignore[index]
        redo = [
            (requests[i][0], requests[i][1], first_look_cursor(requests[i][0], first_look_bytes))
            for i in again
        ]
        redone = _core.scan_many_counts(redo, tables, DEFAULT_MAX_LINE_BYTES, DEFAULT_TEXT_LIMIT)
        for i, outcome, request in zip(again, redone, redo, strict=True):
            outcomes[i], requests[i], looks[i] = outcome, request, True
    return outcomes, found


def _count_heads(
    indices: list[int],
    requests: list[tuple[str, str, CursorTuple | None]],
    outcomes: list[ScanCounts | OSError | ValueError],
    tables: dict[str, dict[str, str]],
) -> dict[int, Head]:
    """The counts of what the first looks ``indices`` left out (see :func:`count_reads`): the whole
    transcript's scan, less its tail's."""
    whole = _core.scan_many_counts(
        [(requests[i][0], requests[i][1], None) for i in indices],
        tables,
        DEFAULT_MAX_LINE_BYTES,
        DEFAULT_TEXT_LIMIT,
    )
    found: dict[int, Head] = {}
    for i, counted in zip(indices, whole, strict=True):
        tail = outcomes[i]
        if isinstance(counted, Exception) or isinstance(tail, Exception) or tail[1] is not None:
            continue  # the tail scan's failure or reset is dealt with by the caller
        in_tail = tail[6] or {}
        found[i] = (
            counted[2] - tail[2],
            counted[3] - tail[3],
            counted[4] - tail[4],
            (
                counted[5][0] - tail[5][0],
                counted[5][1] - tail[5][1],
                counted[5][2] - tail[5][2],
                counted[5][3] - tail[5][3],
            ),
            {k: n - in_tail.get(k, 0) for k, n in (counted[6] or {}).items() if n > in_tail.get(k, 0)},
        )
        if counted[0][0] != tail[0][0]:
            outcomes[i] = (counted[0], *tail[1:])
    return found


def line_entries(path: str, decoder: str, start: int, end: int) -> list[tuple[int, list[Any]]]:
    """The entries of each line of ``path`` from ``start`` to ``end`` (a count's range), each with the
    offset where its line ends: a line read again after a crash has the same end, and so the same key
    (the watcher's at-least-once reading, exactly-once logging). Stops early when the file changed
    under the read (replaced: the next count sees it)."""
    lines: list[tuple[int, list[Any]]] = []
    offset = start
    read = _core.read_entries
    while offset < end:
        # max_bytes=1: one line a call, and where it ends (the key). One native call a line.
        entries, after, _read, _skipped, _first, _last = read(
            path, decoder, offset, 1 << 30, 1, DEFAULT_MAX_LINE_BYTES, DEFAULT_TEXT_LIMIT, 0
        )
        if after <= offset or after > end:
            break
        offset = after
        if entries:
            lines.append((after, entries))
    return lines
