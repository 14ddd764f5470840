"""`sidelight status`: one row per session (name, agent, state, last activity, messages, tool counts by
category, hot memory count), and whether the hooks are answered warm.

With a running watcher, the rows come from its snapshot (``<state dir>/status.json``). Without one, the
transcripts are read here, whole, in one parallel native scan (about 35 ms for 50 MB), and the state is
derived from the last timestamp and the idle timeout. Past :data:`WHOLE_BYTES` of transcripts in all,
the least recently written are read from their last :data:`TAIL_BYTES` only, and their rows say so
(:attr:`StatusRow.partial`).

The rows are shown by repository (:func:`grouped`): the sessions of one git repository (its main
checkout, linked worktrees, subfolders) under its main checkout's folder, each saying its worktree
(branch, else folder) when it is not the main checkout, and a session outside git under its working
directory. Without a session in git, or with ``scope = directory``, or with one group only, the table
is one list, as it always was.

The hooks are answered warm when a watcher runs, its snapshot has a ``hooks`` record (its hook server:
``socket``, ``answered``, ``declined``, ``last_answered``) and that socket exists; else in-process.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from sidelight.engine.discovery import list_sessions
from sidelight.engine.liveness import session_liveness
from sidelight.engine.reads import TranscriptRead, decoder_for, first_look, scan_reads
from sidelight.engine.scanning import detect_format
from sidelight.features.lifecycle import RECENT_FILES, LifecycleSettings, SessionTracker, format_duration
from sidelight.features.recap.handoff import hook_lives
from sidelight.statelayout import CURSORS_DIR, ENTRY_POINTS_FILE, HOOK_SOCKET
from sidelight.timestamps import epoch_seconds
from sidelight.watch.follow import derive_state, host_ended, live_state, liveness_of
from sidelight.watch.options import watch_options
from sidelight.watch.runtime import read_snapshot, running_watcher

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Mapping, Sequence

    from sidelight.config import Settings
    from sidelight.plugins import Plugins
    from sidelight.records import Liveness, Session
    from sidelight.types import Activity

__all__ = [
    "TAIL_BYTES",
    "WHOLE_BYTES",
    "HookServing",
    "Place",
    "StatusReport",
    "StatusRow",
    "collect_status",
    "grouped",
    "hook_serving",
    "nothing_found",
    "refused_state",
    "render_table",
    "session_state",
    "transcript_rows",
]

logger = logging.getLogger(__name__)

#: Without a watcher, `sidelight status` reads transcripts whole, the most recently written first, until
#: they add up to this many bytes (about a second of scanning on one core); the others are read from
#: their last :data:`TAIL_BYTES` and marked partial.
WHOLE_BYTES = 1024 * 1024 * 1024
#: How much of a transcript past :data:`WHOLE_BYTES` is read.
TAIL_BYTES = 64 * 1024
#: What marks a count taken from the end of a transcript only, in the table.
PARTIAL_MARK = "+"
#: The tool categories, in the order they are shown.
CATEGORIES = ("edit", "read", "command", "other")


@dataclass(frozen=True, slots=True)
class StatusRow:
    """One session as `sidelight status` shows it."""

    key: str
    name: str
    agent: str
    state: str
    #: Epoch seconds of the last activity (``None``: unknown).
    last_activity: float | None
    messages: int
    categories: dict[str, int]
    hot_memory: int
    path: str
    group: str = ""
    current_task: str | None = None
    #: The counts cover only the end of the transcripts (at least that many: see :data:`WHOLE_BYTES`).
    partial: bool = False
    #: ``messages`` by role (prompts, replies), as docs/activity.md counts them.
    user_messages: int = 0
    assistant_messages: int = 0
    #: The files it edited or wrote most recently, oldest first (the watcher's ``recent_files``; from
    #: the transcripts, the last :data:`sidelight.features.lifecycle.RECENT_FILES` of their
    #: ``files_touched``).
    files: tuple[str, ...] = ()
    #: The ids its host's hooks may know it by (the listing's, its transcripts'): its state follows the
    #: end they record (:func:`sidelight.watch.follow.host_ended`) when judged again without a read.
    session_ids: tuple[str, ...] = ()

    def as_dict(self, now: float) -> dict[str, Any]:
        return {
            "key": self.key,
            "name": self.name,
            "agent": self.agent,
            "state": self.state,
            "last_activity": self.last_activity,
            "ago_seconds": None if self.last_activity is None else max(0.0, now - self.last_activity),
            "messages": self.messages,
            "user_messages": self.user_messages,
            "assistant_messages": self.assistant_messages,
            "categories": dict(self.categories),
            "hot_memory": self.hot_memory,
            "path": self.path,
            "group": self.group,
            "current_task": self.current_task,
            "partial": self.partial,
        }


@dataclass(frozen=True, slots=True)
class Place:
    """Where a session works, as ``sessions`` and ``status`` show it: under which heading, and in which
    worktree and subfolder of its repository."""

    #: The heading its group is shown under: its repository's main checkout (:attr:`Repository.checkout`
    #: of :mod:`sidelight.engine.repos`), else its working directory (its ``group``).
    heading: str
    #: The repository's main checkout (``None``: not in git).
    repository: str | None = None
    #: Its worktree's branch, else folder name, when that is not the main checkout.
    worktree: str | None = None
    #: Its working directory relative to its worktree's root (``None``: at the root, or not in git).
    subfolder: str | None = None

    @property
    def note(self) -> str:
        """``worktree feature-x, in sub/``; empty in the main checkout's root or outside git."""
        parts = [f"worktree {self.worktree}"] if self.worktree else []
        if self.subfolder:
            parts.append(f"in {self.subfolder}/")
        return ", ".join(parts)

    def as_dict(self) -> dict[str, str | None]:
        """The fields ``--json`` adds to a session: ``repository``, ``worktree``, ``subfolder``."""
        return {"repository": self.repository, "worktree": self.worktree, "subfolder": self.subfolder}


def place_of(group: str, by_repository: bool = True) -> Place:
    """Where the session of working directory ``group`` works (:func:`sidelight.engine.repos.placement`:
    ``.git`` read, git never run); headed by its directory when ``by_repository`` is false."""
    from sidelight.engine.repos import placement

    found = placement(group)
    if found is None:
        return Place(group)
    repository, worktree, subfolder = found
    checkout = repository.checkout
    return Place(checkout if by_repository else group, checkout, worktree, subfolder or None)


def grouped(groups: Sequence[str], by_repository: bool = True) -> tuple[list[Place], dict[str, list[int]]]:
    """The place of each of the sessions whose groups are ``groups`` (in order), and the indexes of
    those under each heading, the headings in the order of their first session."""
    known: dict[str, Place] = {}
    places = []
    headings: dict[str, list[int]] = {}
    for index, group in enumerate(groups):
        place = known.get(group)
        if place is None:
            place = known[group] = place_of(group, by_repository)
        places.append(place)
        headings.setdefault(place.heading, []).append(index)
    return places, headings


@dataclass(frozen=True, slots=True)
class HookServing:
    """Who answers the hooks: the running watcher (``warm``), or each hook in its own process."""

    warm: bool
    #: Why not warm (``None`` when warm).
    reason: str | None = None
    socket: str | None = None
    answered: int = 0
    declined: int = 0
    last_answered: float | None = None

    def line(self, pid: int | None) -> str:
        """One line: ``hooks: answered warm by the watcher (...)`` or ``hooks: answered in-process (...)``."""
        if not self.warm:
            return f"hooks: answered in-process ({self.reason})"
        declined = f", {self.declined} declined" if self.declined else ""
        return (
            f"hooks: answered warm by the watcher (pid {pid}, {self.answered} answered{declined}, "
            f"socket {self.socket})"
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "warm": self.warm,
            "reason": self.reason,
            "socket": self.socket,
            "answered": self.answered,
            "declined": self.declined,
            "last_answered": self.last_answered,
        }


NO_WATCHER = HookServing(False, "no watcher running")


@dataclass(frozen=True, slots=True)
class StatusReport:
    """The rows, and where they come from: ``"watcher"`` (its snapshot) or ``"transcripts"``."""

    source: str
    rows: list[StatusRow]
    now: float
    #: The running watcher's pid (``None``: no watcher).
    watcher_pid: int | None = None
    #: Where sessions were looked for (for the message shown when there are none).
    searched: list[str] = field(default_factory=list)
    hooks: HookServing = NO_WATCHER
    #: State files the hooks cannot use, each one line that says which and what to do (see
    #: :func:`state_problems`).
    problems: list[str] = field(default_factory=list)
    #: Rows grouped by git repository (``scope`` is not ``directory``), else by working directory.
    by_repository: bool = True

    def as_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "watcher_pid": self.watcher_pid,
            "time": self.now,
            "hooks": {**self.hooks.as_dict(), "line": self.hooks.line(self.watcher_pid)},
            "sessions": [row.as_dict(self.now) for row in self.rows],
            "problems": self.problems,
        }


def collect_status(settings: Settings, plugins: Plugins, now: float | None = None) -> StatusReport:
    """The status of every session: from the running watcher's snapshot, else from the transcripts."""
    now = time.time() if now is None else now
    pid = running_watcher(settings)
    snapshot = read_snapshot(settings)
    hooks = hook_serving(pid, snapshot)
    problems = refused_state(settings) + state_problems(settings)
    by_repository = settings.scope != "directory"
    if pid is not None and snapshot is not None and snapshot.get("sessions"):
        live = session_liveness(settings, plugins)
        rows = [
            replace(row, state=live_state(row.state, liveness_of(row.session_ids, live)))
            for row in _rows_from_snapshot(snapshot)
        ]
        return StatusReport(
            "watcher", rows, now, watcher_pid=pid, hooks=hooks, problems=problems, by_repository=by_repository
        )
    suspended = {str(k) for k in (snapshot or {}).get("suspended") or ()}
    idle_timeout = watch_options(settings).idle_timeout
    rows = _rows_from_transcripts(settings, plugins, now, idle_timeout, suspended)
    searched = _searched(settings, plugins)
    return StatusReport(
        "transcripts",
        rows,
        now,
        watcher_pid=pid,
        searched=searched,
        hooks=hooks,
        problems=problems,
        by_repository=by_repository,
    )


def state_problems(settings: Settings) -> list[str]:
    """The cursor files (``<state dir>/cursors/*.json``) and their folder that the hooks cannot read or
    write, one line each saying which and what to do.

    A hook that cannot read its session's cursor file (say, left owned by root after a ``sudo`` run)
    gives no digest at all, on every prompt, and says so only in its log; this is where a person
    sees it. Opening each file costs ``status`` a few milliseconds per thousand sessions.
    """
    folder = settings.state_dir / CURSORS_DIR
    fix = "make it yours again (sudo chown -R $USER {path}) or remove it"
    problems = []
    try:
        with os.scandir(folder) as entries:
            names = sorted(e.name for e in entries)
    except FileNotFoundError:
        return []
    except OSError as error:
        reason = error.strerror or str(error)
        return [
            f"cannot read the cursor folder {folder} ({reason}): the hooks give no digest; "
            + fix.format(path=folder)
        ]
    if not os.access(folder, os.W_OK | os.X_OK):
        problems.append(
            f"cannot write in the cursor folder {folder}: the hooks cannot save what they reported; "
            + fix.format(path=folder)
        )
    for name in names:
        if not name.endswith(".json"):
            continue
        path = folder / name
        try:
            with open(path, "rb"):  # noqa: PTH123 (what the hook does: open it to read)
                pass
        except FileNotFoundError:
            continue  # replaced or removed meanwhile
        except OSError as error:
            reason = "a directory" if isinstance(error, IsADirectoryError) else error.strerror or str(error)
            problems.append(
                f"cannot read the cursor file {path} ({reason}): the session that reads it gets no "
                "digest; " + fix.format(path=path)
            )
    return problems


def refused_state(settings: Settings | None = None) -> list[str]:
    """What of its state sidelight refuses to use, one line each that says what to do: the state
    directory and the config file (:class:`sidelight.config.StateRefusedError`: with them refused,
    nothing else is used), the hook socket and the entry-point caches (another user's, or others may
    write them: :func:`sidelight.warm.untrusted`). ``[]``: nothing. ``sidelight status`` shows these
    (as a ``doctor`` would); ``settings``: the ones loaded (without: loaded here)."""
    from sidelight.config import Settings, StateRefusedError
    from sidelight.warm import untrusted

    if settings is None:
        try:
            settings = Settings.load()
        except StateRefusedError as error:
            return [str(error)]
    state = settings.state_dir
    found = []
    socket = state / HOOK_SOCKET
    with contextlib.suppress(OSError):
        reason = untrusted(socket.lstat())
        if reason is not None:
            found.append(
                f"the hook socket {socket} {reason}: hooks do not use it (they answer in-process); remove it"
            )
    for cache in sorted(state.glob(ENTRY_POINTS_FILE.format(path="*"))):
        with contextlib.suppress(OSError):
            reason = untrusted(cache.lstat())
            if reason is not None:
                found.append(f"the entry-point cache {cache} {reason}: it is not read; remove it")
    return found


def hook_serving(pid: int | None, snapshot: dict[str, Any] | None) -> HookServing:
    """Whether the running watcher (``pid``; ``None``: none) answers the hooks, from its ``snapshot``."""
    if pid is None:
        return NO_WATCHER
    if snapshot is None or snapshot.get("pid") != pid:
        return HookServing(False, "the watcher does not serve them: it has not written its status yet")
    record = snapshot.get("hooks")
    if not isinstance(record, dict) or not isinstance(record.get("socket"), str):
        return HookServing(False, "the watcher does not serve them: no hook server in its status")
    socket = record["socket"]
    if not Path(socket).is_socket():
        return HookServing(False, f"the watcher does not serve them: its socket {socket} is missing")
    last = record.get("last_answered")
    return HookServing(
        True,
        socket=socket,
        answered=_count(record.get("answered")),
        declined=_count(record.get("declined")),
        last_answered=float(last) if isinstance(last, int | float) else None,
    )


def _count(value: Any) -> int:
    return value if isinstance(value, int) and value >= 0 else 0


def _rows_from_snapshot(snapshot: dict[str, Any]) -> list[StatusRow]:
    rows = []
    for record in snapshot.get("sessions") or ():
        if not isinstance(record, dict) or "key" not in record:
            continue
        categories = record.get("categories") if isinstance(record.get("categories"), dict) else {}
        last = record.get("last_activity")
        user, assistant = _count(record.get("user_messages")), _count(record.get("assistant_messages"))
        rows.append(
            StatusRow(
                key=str(record["key"]),
                name=str(record.get("name") or record["key"]),
                agent=str(record.get("agent") or ""),
                state=str(record.get("state") or "active"),
                last_activity=float(last) if isinstance(last, int | float) else None,
                messages=user + assistant if user or assistant else int(record.get("messages") or 0),
                categories={c: int((categories or {}).get(c) or 0) for c in CATEGORIES},
                hot_memory=int(record.get("hot_memory") or 0),
                path=str(record.get("path") or ""),
                group=str(record.get("group") or ""),
                current_task=record.get("current_task"),
                user_messages=user,
                assistant_messages=assistant,
                files=tuple(str(f) for f in record.get("recent_files") or () if isinstance(f, str)),
                session_ids=(record["session_id"],) if isinstance(record.get("session_id"), str) else (),
            )
        )
    return _sorted(rows)


def session_state(session: Session, settings: Settings, plugins: Plugins, now: float | None = None) -> str:
    """The state ``sidelight status`` shows for ``session`` at ``now``: the running watcher's, else judged
    from the session's transcripts and the hooks' records as the rows without a watcher are
    (:func:`~sidelight.features.lifecycle.judge_session`). ``sidelight recap`` says the same."""
    now = time.time() if now is None else now
    snapshot = read_snapshot(settings)
    if running_watcher(settings) is not None and snapshot is not None:
        for record in snapshot.get("sessions") or ():
            # A session named by its transcript's path is the watcher's session of that transcript.
            if isinstance(record, dict) and session.key in (record.get("key"), f"path:{record.get('path')}"):
                ids = (session.id, record.get("session_id"))
                state = str(record.get("state") or "active")
                return live_state(state, liveness_of(ids, session_liveness(settings, plugins)))
    suspended = {str(k) for k in (snapshot or {}).get("suspended") or ()}
    if decoder_for(session, plugins) == "auto":  # named by its path: the format is judged from the file
        detected = detect_format(session.path)
        if detected is not None:
            session = replace(session, format=detected.value)
    activities, _partial = _scan([session], settings, plugins)
    return _judged(
        session,
        activities[session.key],
        now,
        watch_options(settings).idle_timeout,
        suspended,
        hook_lives(settings),
        session_liveness(settings, plugins),
    )


def _scan(
    sessions: Sequence[Session], settings: Settings, plugins: Plugins
) -> tuple[dict[str, list[Activity]], set[str]]:
    """The scans of each session's transcripts (:func:`_plan`), and the keys of those read in part."""
    reads = _plan(sessions, settings)
    results = scan_reads(reads, plugins)
    found: dict[str, list[Activity]] = {s.key: [] for s in sessions}
    partial: set[str] = set()
    for read, result in zip(reads, results, strict=True):
        if isinstance(result, Exception):
            logger.info("skipped %s: %s", read.path, result)
            continue
        found[read.session.key].append(result)
        if read.first_look and read.cursor is not None and read.cursor.offset > 0:
            partial.add(read.session.key)
    return found, partial


def _judged(
    session: Session,
    activities: Sequence[Activity],
    now: float,
    idle_timeout: float,
    suspended: Collection[str],
    lives: Mapping[str, tuple[float, float]],
    live: Mapping[str, Liveness],
) -> str:
    """A session's state without a watcher: from its last activity, the idle timeout, a suspension,
    the end its host recorded (unless it started again since) and whether its process runs (where its
    host keeps a registry of running sessions)."""
    ids = _session_ids(session, activities)
    return derive_state(
        _last_activity(session, activities),
        now,
        idle_timeout,
        suspended=session.key in suspended,
        ended_at=host_ended(ids, lives),
        liveness=liveness_of(ids, live),
    )


def _session_ids(session: Session, activities: Sequence[Activity]) -> tuple[str, ...]:
    """The id the listing knows, then the ones its transcripts state (a session named by its path)."""
    ids = (session.id, *(a.session_id for a in activities))
    return tuple(dict.fromkeys(i for i in ids if i))


def _rows_from_transcripts(
    settings: Settings, plugins: Plugins, now: float, idle_timeout: float, suspended: set[str]
) -> list[StatusRow]:
    return transcript_rows(list_sessions(settings, plugins), settings, plugins, now, idle_timeout, suspended)


def transcript_rows(
    sessions: Sequence[Session],
    settings: Settings,
    plugins: Plugins,
    now: float,
    idle_timeout: float,
    suspended: Collection[str] = (),
) -> list[StatusRow]:
    """The rows of ``sessions`` read from their transcripts, as :func:`collect_status` makes them
    without a watcher (the dashboard reads again only the sessions whose transcripts changed)."""
    scanned, partial = _scan(sessions, settings, plugins)
    found = {s.key: (s, scanned[s.key]) for s in sessions}
    lives = hook_lives(settings)
    live = session_liveness(settings, plugins)
    # Hot memory is the lifecycle's own reading of the tool uses: a throwaway tracker gives it.
    tracker = SessionTracker(LifecycleSettings(idle_timeout=idle_timeout), clock=lambda: now)
    rows = []
    for key, (session, activities) in found.items():
        for activity in activities:
            tracker.observe(session, activity)
        state = tracker.get(key)
        last = _last_activity(session, activities)
        rows.append(
            StatusRow(
                key=key,
                name=session.name,
                agent=session.format,
                state=_judged(session, activities, now, idle_timeout, suspended, lives, live),
                last_activity=last,
                messages=sum(a.messages.total for a in activities),
                categories={c: sum(a.categories[c] for a in activities) for c in CATEGORIES},
                hot_memory=0 if state is None else len(state.hot_memory),
                path=str(session.path),
                group=session.group,
                current_task=None if state is None else state.current_task,
                partial=key in partial,
                user_messages=sum(a.messages.user for a in activities),
                assistant_messages=sum(a.messages.assistant for a in activities),
                files=_recent_files(activities),
                session_ids=_session_ids(session, activities),
            )
        )
    return _sorted(rows)


def _recent_files(activities: Sequence[Activity]) -> tuple[str, ...]:
    """The last :data:`sidelight.features.lifecycle.RECENT_FILES` files the scans saw edited or written,
    oldest
    first, as the watcher's :class:`sidelight.features.lifecycle.SessionCounts` keeps them."""
    recent: dict[str, None] = {}
    for activity in activities:
        for path in activity.files_touched:
            recent.pop(path, None)
            recent[path] = None
    return tuple(list(recent)[-RECENT_FILES:])


def _plan(sessions: Sequence[Session], settings: Settings) -> list[TranscriptRead]:
    """Every transcript from its start (``cursor=None``), the most recently written first, until they
    add up to :data:`WHOLE_BYTES`; the rest from their last :data:`TAIL_BYTES` (a first look)."""
    files: list[tuple[float, int, Session, Path]] = []
    for session in sessions:
        for path in (session.path, *session.extra_paths):
            try:
                found = path.stat()
            except OSError:
                found = None  # the scan says why
            files.append((found.st_mtime if found else 0.0, found.st_size if found else 0, session, path))
    files.sort(key=lambda f: f[0], reverse=True)
    tail = replace(settings, first_look_bytes=TAIL_BYTES)
    reads, total = [], 0
    for _mtime, size, session, path in files:
        total += size
        if total <= WHOLE_BYTES or size <= TAIL_BYTES:
            reads.append(TranscriptRead(session, path, None, first_look=False))
        else:
            reads.append(first_look(session, path, tail))
    return reads


def _last_activity(session: Session, activities: Sequence[Activity]) -> float | None:
    stamps = [a.last_timestamp for a in activities if a.last_timestamp]
    if stamps:
        moment = epoch_seconds(max(stamps))
        if moment is not None:
            return moment
    try:
        return session.path.stat().st_mtime
    except OSError:
        return None


_STATE_ORDER = {"active": 0, "idle": 1, "suspended": 2, "ended": 3}


def _sorted(rows: list[StatusRow]) -> list[StatusRow]:
    """Live sessions first, then the most recently active."""
    return sorted(rows, key=lambda r: (_STATE_ORDER.get(r.state, 4), -(r.last_activity or 0.0), r.name))


def _searched(settings: Settings, plugins: Plugins) -> list[str]:
    """The folders the resolvers find sessions in (their ``roots``: those that exist)."""
    folders: list[str] = []
    for resolver in plugins.resolvers().values():
        try:
            folders.extend(os.fspath(root) for root in resolver.roots(settings))
        except Exception:
            continue
    return list(dict.fromkeys(folders))


def nothing_found(report: StatusReport) -> str:
    """The message shown when there are no sessions."""
    where = ", ".join(report.searched) or "the agents' folders"
    return f"no sessions found under {where}; is the agent's folder somewhere else? see `sidelight sessions`"


# -- rendering -------------------------------------------------------------------------------------------

COLUMNS = ("SESSION", "AGENT", "STATE", "LAST ACTIVITY", "MSGS", "EDIT", "READ", "CMD", "OTHER", "HOT")


def ago(last: float | None, now: float) -> str:
    """``3m ago``, ``just now``; ``-`` when unknown."""
    if last is None:
        return "-"
    seconds = now - last
    if seconds < 1:
        return "just now"
    return f"{format_duration(seconds)} ago"


def table_cells(report: StatusReport) -> list[list[str]]:
    """The table's rows as strings (names cleaned of control characters and cut to 40 characters; the
    counts of a partial row end with :data:`PARTIAL_MARK`), in the order of :func:`table_groups`, each
    ending with its :attr:`Place.note` (its worktree and subfolder, often empty)."""
    from sidelight.redact import sanitize

    cells = []
    order, places, _ = _layout(report)
    for index in order:
        row = report.rows[index]
        mark = PARTIAL_MARK if row.partial else ""
        counts = [row.messages, *(row.categories.get(c, 0) for c in CATEGORIES)]
        cells.append(
            [
                sanitize(row.name, 40) or row.key,
                row.agent,
                row.state,
                ago(row.last_activity, report.now),
                *(f"{n}{mark}" for n in counts),
                str(row.hot_memory),
                sanitize(places[index].note, 80),
            ]
        )
    return cells


def table_groups(report: StatusReport) -> dict[int, str]:
    """The headings of the table's groups, cleaned, by the number of the row (of :func:`table_cells`)
    each comes before: none unless a session works in git, and its rows and others are in two groups
    or more (outside git, or with ``scope = directory``, the table is one list, as it always was)."""
    return _layout(report)[2]


def _layout(report: StatusReport) -> tuple[list[int], list[Place], dict[int, str]]:
    from sidelight.redact import sanitize

    places, headings = grouped([row.group for row in report.rows], report.by_repository)
    if not report.by_repository or len(headings) < 2 or all(p.repository is None for p in places):
        return list(range(len(report.rows))), places, {}
    order = [index for indexes in headings.values() for index in indexes]
    starts = {}
    at = 0
    for heading, indexes in headings.items():
        starts[at] = sanitize(heading, 200) or "(no folder)"
        at += len(indexes)
    return order, places, starts


def render_table(report: StatusReport, paint: Callable[[str, str], str] | None = None) -> str:
    """A plain-text table, one line per session, with a header and lines about the source and the
    hooks (and what a partial count means, when there is one); the sessions of several repositories
    (or folders) under a heading each, their rows indented, and a last column ``WHERE`` (a worktree, a
    subfolder) when a row has one. ``paint(text, kind)`` colours the header and headings
    (``"header"``) and each state (its name as the kind), after the columns are aligned."""
    if not report.rows:
        return "".join(f"{line}\n" for line in (nothing_found(report), *_problem_lines(report)))
    body = table_cells(report)
    columns = list(COLUMNS) + (["WHERE"] if any(row[-1] for row in body) else [])
    cells = [columns, *(row[: len(columns)] for row in body)]
    widths = [max(len(row[i]) for row in cells) for i in range(len(columns))]
    numeric = {4, 5, 6, 7, 8, 9}
    starts = {number + 1: heading for number, heading in table_groups(report).items()}
    indent = "  " if starts else ""
    lines = []
    for number, row in enumerate(cells):
        if number in starts:
            lines.append(starts[number] if paint is None else paint(starts[number], "header"))
        parts = [
            value.rjust(widths[i]) if i in numeric else value.ljust(widths[i]) for i, value in enumerate(row)
        ]
        line = indent + "  ".join(parts).rstrip()
        if paint is not None:
            if number == 0:
                line = paint(line, "header")
            else:
                parts[2] = paint(parts[2], row[2])
                line = indent + "  ".join(parts).rstrip()
        lines.append(line)
    lines.append("")
    lines.append(_footer(report))
    return "\n".join(lines) + "\n"


def _footer(report: StatusReport) -> str:
    count = f"{len(report.rows)} session{'s' if len(report.rows) != 1 else ''}"
    if report.source == "watcher":
        source = f"{count}, from the running watcher (pid {report.watcher_pid})"
    else:
        source = f"{count}, read from the transcripts (no watcher running: `sidelight watch` keeps this live)"
    lines = [source]
    partial = sum(1 for row in report.rows if row.partial)
    if partial:
        lines.append(
            f"{PARTIAL_MARK}: counted from the last {TAIL_BYTES // 1024} KiB of the transcript only "
            f"({partial} session{'s' if partial != 1 else ''} not read whole: past "
            f"{WHOLE_BYTES // 1024**3} GiB of transcripts in all, the least recently written are not)"
        )
    lines.append(report.hooks.line(report.watcher_pid))
    lines.extend(_problem_lines(report))
    return "\n".join(lines)


def _problem_lines(report: StatusReport) -> list[str]:
    return [f"problem: {line}" for line in report.problems]


def print_json(report: StatusReport, out: TextIO) -> None:
    """One JSON object per session (JSON lines, as every ``--json`` prints), each with where it comes
    from (``source``: ``watcher`` or ``transcripts``) and when it was taken (``time``, epoch seconds:
    the rows of one ``--watch`` refresh share it). Who answers the hooks and the problems are not rows:
    the command says them on stderr."""
    places, _ = grouped([row.group for row in report.rows], report.by_repository)
    for row, place in zip(report.rows, places, strict=True):
        record = {**row.as_dict(report.now), **place.as_dict(), "source": report.source, "time": report.now}
        out.write(json.dumps(record, ensure_ascii=False) + "\n")


def rich_table(report: StatusReport) -> Any:
    """The table as a ``rich`` renderable (for ``--watch`` on a terminal)."""
    from rich.table import Table
    from rich.text import Text

    if not report.rows:
        return Text(nothing_found(report))
    table = Table(caption=_footer(report), caption_justify="left")
    body = table_cells(report)
    columns = list(COLUMNS) + (["WHERE"] if any(row[-1] for row in body) else [])
    for index, column in enumerate(columns):
        table.add_column(column, justify="right" if 4 <= index < len(COLUMNS) else "left", no_wrap=index == 0)
    colours = {"active": "green", "idle": "yellow", "suspended": "magenta", "ended": "dim"}
    starts = table_groups(report)
    for number, cells in enumerate(body):
        if number in starts:
            table.add_row(Text(starts[number], style="bold"), end_section=False)
        row = [Text(cell) for cell in cells[: len(columns)]]
        row[2].stylize(colours.get(cells[2], ""))
        table.add_row(*row)
    return table
