"""What the dashboard shows, made from what the commands already read: the rows of ``sidelight status``
(the running watcher's snapshot, else the transcripts), the conversation of ``sidelight read``, the plan
of ``sidelight context``, the recap of ``sidelight recap``, and the digest's rule for shared files.

Nothing here imports the web framework: :class:`Board` is plain Python, kept by the app and refreshed
about once a second by the live updates (:meth:`Board.refresh` returns the rows that changed). Every
text that comes from a transcript is redacted and defanged here (:func:`sidelight.redact.sanitize`,
:func:`sidelight.redact.sanitize_lines`) before the templates escape it. A session is only ever one of
the rows (:meth:`Board.session`). The limits that keep it answering under a local user's load (a request
head's time, the connections, a request's deadline, running out of file descriptors) are here too.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import re
import resource
import threading
import time
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from sidelight import _core
from sidelight._fast import jsonio
from sidelight.engine.discovery import SessionNotFoundError, list_sessions
from sidelight.engine.liveness import session_liveness
from sidelight.engine.paths import open_regular
from sidelight.engine.reads import first_look, scan_reads
from sidelight.engine.repos import Repository, file_in_repository
from sidelight.features.digest import _touched, absolute_path
from sidelight.features.recap.handoff import hook_lives
from sidelight.plugins import get_plugins
from sidelight.records import SessionActivity
from sidelight.redact import redact, sanitize, sanitize_lines, strip_invisible
from sidelight.statelayout import (
    ACTIVITY_EVENTS_FILE,
    DASHBOARD_DIR,
    EVENTS_FILE,
    RECAPS_DIR,
    STATUS_FILE,
    session_path,
)
from sidelight.timestamps import epoch_seconds
from sidelight.types import Activity
from sidelight.watch.follow import (
    Identity,
    derive_state,
    host_ended,
    liveness_of,
    next_state_turn,
    state_turns,
    transcript_identities,
)
from sidelight.watch.options import watch_options
from sidelight.watch.runtime import read_snapshot, running_watcher
from sidelight.watch.status import CATEGORIES, collect_status, transcript_rows

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from sidelight.config import Settings
    from sidelight.plugins import Plugins
    from sidelight.records import AgentSpec, Liveness, Session
    from sidelight.watch.status import StatusRow

__all__ = [
    "CATEGORIES_SHOWN",
    "COLLISIONS_SHOWN",
    "COLLISION_SESSIONS_SHOWN",
    "HEAD_SECONDS",
    "LIVE_STATES",
    "NOT_LISTED",
    "REQUEST_SECONDS",
    "TIMELINE_HOURS",
    "Alarm",
    "Board",
    "Changes",
    "check_descriptors",
    "iso",
    "max_connections",
    "out_of_descriptors",
]

logger = logging.getLogger("sidelight")

#: A session in one of these states is live: its shared files are collisions.
LIVE_STATES: Final = frozenset({"active", "idle", "suspended"})
#: The timeline covers the last this many hours.
TIMELINE_HOURS: Final = 3
#: How many of the most recently active sessions the timeline charts (each costs a backwards read).
TIMELINE_SESSIONS: Final = 40
#: How much of a transcript's end the timeline counts per minute (the older part of its 3 hours, in a
#: transcript that wrote more in them, is left out of the chart: it says so in ``partial``).
TIMELINE_BYTES: Final = 8 << 20
#: The list of sessions is taken again this often (a new transcript appears); stats happen every refresh.
RELIST_SECONDS: Final = 5.0
#: How much of a transcript's end is searched for the last context sidelight injected.
INJECTED_TAIL_BYTES: Final = 512 * 1024
#: How much of the watcher's event log's end is read for the lifecycle marks of the timeline.
EVENTS_TAIL_BYTES: Final = 2 * 1024 * 1024
#: The lifecycle events the timeline marks.
LIFECYCLE_KINDS: Final = frozenset(
    {"session_start", "session_idle", "session_resume", "session_suspend", "session_unsuspend", "session_end"}
)
#: What a request for a session that is not one of the rows gets (a 404), whatever it names.
NOT_LISTED: Final = "no such session on this dashboard (it shows the sessions its overview lists)"
#: How many entries of a session's conversation its page shows (as ``sidelight read``'s default).
READ_ENTRIES: Final = 50
#: Fleet sessions are asked of Redis at most this often.
FLEET_SECONDS: Final = 5.0
#: The tool categories as the overview's columns name them.
CATEGORIES_SHOWN: Final = {"edit": "edit", "read": "read", "command": "cmd", "other": "other"}
#: How many collisions the overview and its live updates carry (the newest); ``/collisions`` has all.
COLLISIONS_SHOWN: Final = 50
#: How many of a collision's sessions the overview names (the latest to touch the file).
COLLISION_SESSIONS_SHOWN: Final = 10
#: :meth:`Board.refresh_soon` looks again only when the last look is older than this (several pages'
#: streams share one look).
REFRESH_SECONDS: Final = 0.2
#: Without a watcher, the transcripts are stat'ed (one native call for all) at most this often: at a
#: thousand sessions such a call takes about 4 ms.
STAT_SECONDS: Final = 0.5
NAME_LIMIT: Final = 80
PATH_LIMIT: Final = 300
TEXT_LIMIT: Final = 300


# -- limits ------------------------------------------------------------------------------------------------
# What keeps the dashboard answering when a local user (any process that can connect to its port, token
# or not) tries to wear it out: :mod:`.server` applies the connection rules to uvicorn's protocol,
# :mod:`.app` the deadline and the 503, :meth:`Board._listed` the check before it lists the sessions.

#: A connection that has not sent its whole request head this long after it opened (or after its last
#: response, kept alive) is closed: a client that sends half a request holds nothing for longer.
HEAD_SECONDS: Final = 5.0
#: A request that has no answer after this long gets a 503 (its work, in a thread, is left to end on
#: its own). The event stream is exempt: it is long-lived by design, and ends when its page goes.
REQUEST_SECONDS: Final = 30.0
#: At most this many connections at once (event streams count: each open page holds one), and never
#: more than a quarter of the descriptors the process may open: the rest are for reading transcripts.
MAX_CONNECTIONS: Final = 512
#: The errors that say the process may open no more files: its own limit, or the system's.
NO_DESCRIPTORS: Final = frozenset({errno.EMFILE, errno.ENFILE})
#: Running out of descriptors again after this long without is said again (a new episode).
QUIET_SECONDS: Final = 60.0


def max_connections() -> int:
    """How many connections the dashboard serves at once: :data:`MAX_CONNECTIONS`, or a quarter of the
    process's limit on open files (``ulimit -n``) when that is lower (at least 8)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft <= 0:
        return MAX_CONNECTIONS
    return max(8, min(MAX_CONNECTIONS, soft // 4))


def out_of_descriptors(error: BaseException) -> bool:
    """Whether ``error`` says that no file could be opened for lack of descriptors."""
    return isinstance(error, OSError) and error.errno in NO_DESCRIPTORS


def check_descriptors() -> None:
    """Raises the :class:`OSError` (``EMFILE`` or ``ENFILE``) of a process that cannot open a file
    now: what it read meanwhile (an empty listing, a missing session) would be wrong, not missing."""
    os.close(os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC))


class Alarm:
    """Says once, in one warning line without a traceback, that the dashboard ran out of file
    descriptors: again only once it could open files for :data:`QUIET_SECONDS` since (a new episode).
    Thread-safe."""

    def __init__(self) -> None:
        self._last: float | None = None  # when it last ran out, while the alarm is raised
        self._lock = threading.Lock()

    def raise_(self, error: BaseException) -> None:
        """Notes that ``error`` (an ``EMFILE``) happened; the first of an episode is logged."""
        with self._lock:
            first = self._last is None
            self._last = time.monotonic()
        if first:
            reason = os.strerror(error.errno) if isinstance(error, OSError) and error.errno else str(error)
            logger.warning(
                "the dashboard is out of file descriptors (%s): requests get 503 and new connections "
                "wait until others close (said once)",
                reason,
            )

    def clear(self) -> None:
        """Notes that a file could be opened: the episode ends after :data:`QUIET_SECONDS` of those."""
        with self._lock:
            if self._last is not None and time.monotonic() - self._last >= QUIET_SECONDS:
                self._last = None


def iso(moment: float | None) -> str | None:
    """Epoch seconds as an ISO 8601 UTC time (``2026-01-01T10:00:00Z``); ``None`` stays ``None``."""
    if moment is None:
        return None
    return datetime.fromtimestamp(moment, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def shown_file(path: str, project: str) -> str:
    """``path`` as a row shows it: from its project's folder when it is inside it (the project heads the
    row's table), else whole.

    >>> shown_file("/w/app/src/a.py", "/w/app"), shown_file("/etc/hosts", "/w/app")
    ('src/a.py', '/etc/hosts')
    """
    prefix = project.rstrip("/") + "/"
    return path[len(prefix) :] if project and path.startswith(prefix) else path


def row_record(row: StatusRow) -> dict[str, Any]:
    """One session as the API and the page show it (every text sanitized: redacted, defanged, one line)."""
    files = [sanitize(path, PATH_LIMIT) for path in row.files]
    project = sanitize(row.group, PATH_LIMIT)
    return {
        "id": row.key,
        "name": sanitize(row.name, NAME_LIMIT) or sanitize(row.key, NAME_LIMIT),
        "agent": row.agent,
        "project": project,
        "state": row.state,
        "last_activity": iso(row.last_activity),
        "messages": row.messages,
        "tools": {c: row.categories.get(c, 0) for c in CATEGORIES},
        "files": files,
        "last_file": shown_file(files[-1], project) if files else None,
        "hot_memory": row.hot_memory,
        "current_task": None if not row.current_task else sanitize(row.current_task, TEXT_LIMIT),
        "partial": row.partial,
    }


@dataclass(frozen=True, slots=True)
class Changes:
    """What one :meth:`Board.refresh` found: the rows that are new or changed, and the ids gone."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.rows or self.removed)


class Board:
    """The sessions as the dashboard shows them, kept between requests and refreshed in place.

    With a running watcher the rows are its snapshot's, read again when ``status.json`` is replaced;
    without one, the transcripts are read once whole (:func:`sidelight.watch.status.collect_status`),
    then only those whose size or inode changed (one native ``stat`` call for all of them), and every
    state is judged again from its last activity at each refresh (a quiet session turns idle without a
    write). Thread-safe: the event stream refreshes it while pages read it."""

    def __init__(self, settings: Settings, plugins: Plugins, clock: Callable[[], float] = time.time) -> None:
        self.settings = settings
        self.plugins = plugins
        self.clock = clock
        self.idle_timeout = watch_options(settings).idle_timeout
        self._lock = threading.RLock()
        self._rows: dict[str, StatusRow] = {}
        self._records: dict[str, dict[str, Any]] = {}
        self._sessions: dict[str, Session] = {}
        self._listed_at = -RELIST_SECONDS
        self._identities: dict[str, tuple[Identity, ...]] = {}
        self._status_identity: Identity = None
        self.source = "transcripts"
        self.watcher_pid: int | None = None
        self._suspended: set[str] = set()
        self._loaded = False
        self._fleet: tuple[float, list[dict[str, Any]], str | None] | None = None
        self._collision_cache: tuple[tuple[Any, ...], list[dict[str, Any]]] | None = None
        self._timeline_cache: dict[str, tuple[tuple[Any, ...], dict[str, Any]]] = {}
        #: Raised by each refresh that changes something; each row's and each removal's version.
        self.version = 0
        self._changed_at: dict[str, int] = {}
        self._removed_at: dict[str, int] = {}
        self._refreshed_at = float("-inf")
        #: When a session's state turns next by the clock alone (idle, ended), without a write.
        self._state_due = float("inf")
        self._paths: list[str] = []
        self._stated_at = float("-inf")
        #: The hooks' records of each session's start and end (:func:`hook_lives`), as of the events
        #: file's identity: a recorded end turns a row ended without a write to its transcript.
        self._lives: dict[str, tuple[float, float]] = {}
        self._events_identity: Identity = None
        #: Whether each session's process runs (:func:`session_liveness`), as of the last refresh.
        self._live: dict[str, Liveness] = {}

    # -- rows --------------------------------------------------------------------------------------------

    def rows(self) -> list[dict[str, Any]]:
        """Every session's record, live ones first then the most recent (as ``sidelight status``)."""
        with self._lock:
            if not self._loaded:
                self.refresh()
            return [self._records[key] for key in self._rows]

    def rows_version(self) -> tuple[list[dict[str, Any]], int]:
        """:meth:`rows` and the version they are as of (a page gives it to the event stream)."""
        with self._lock:
            return self.rows(), self.version

    def changes_since(self, version: int) -> tuple[int, list[dict[str, Any]], list[str]]:
        """The current version, the rows changed after ``version`` and the ids removed after it."""
        with self._lock:
            if not self._loaded:
                self.refresh()
            rows = [
                self._records[k] for k, v in self._changed_at.items() if v > version and k in self._records
            ]
            removed = [k for k, v in self._removed_at.items() if v > version and k not in self._records]
            return self.version, rows, removed

    def refresh_soon(self) -> None:
        """Refreshes when something may have changed, unless another caller (another page's stream) just
        looked. A look costs a lock test and one ``stat`` of the watcher's ``status.json``; without a
        watcher, every :data:`STAT_SECONDS` one native ``stat`` of every transcript, and every
        :data:`RELIST_SECONDS` the list of sessions. An idle dashboard of a thousand sessions costs that
        and no read until a file changes or a state is due to turn idle or ended by the clock."""
        with self._lock:
            if time.monotonic() - self._refreshed_at < REFRESH_SECONDS:
                return
            if not self._loaded or self._changed():
                self.refresh()
            else:
                self._refreshed_at = time.monotonic()

    def _changed(self) -> bool:
        """Whether a refresh may find something new (see :meth:`refresh_soon`)."""
        now = self.clock()
        if now >= self._state_due:
            return True
        if running_watcher(self.settings) != self.watcher_pid:  # one started or stopped
            return True
        status, events = _core.file_identities(self._state_files())
        if status != self._status_identity:
            return True
        if self.source == "watcher":
            return False
        if events != self._events_identity:  # a host recorded a start or an end
            return True
        if now - self._listed_at >= RELIST_SECONDS:
            before = self._paths
            self._listed(now)
            if self._paths != before:
                return True
        moment = time.monotonic()
        if moment - self._stated_at < STAT_SECONDS:
            return False
        self._stated_at = moment
        known = [
            identity
            for session in self._sessions.values()
            for identity in self._identities.get(session.key, (None,) * (1 + len(session.extra_paths)))
        ]
        return _core.file_identities(self._paths) != known

    def _state_files(self) -> list[str]:
        """The watcher's snapshot and the hooks' events file (their identities say when to look again)."""
        state = self.settings.state_dir
        return [os.fspath(state / STATUS_FILE), os.fspath(state / EVENTS_FILE)]

    def row(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            if not self._loaded:
                self.refresh()
            return self._records.get(key)

    def refresh(self) -> Changes:
        """Reads what changed since the last refresh; the rows that are new or differ, and the ids gone."""
        with self._lock:
            now = self.clock()
            rows = self._read_rows(now)
            self._loaded = True
            # A row that did not change keeps its record: sanitizing a thousand rows each look is the cost.
            records = {
                row.key: self._records[row.key] if self._rows.get(row.key) == row else row_record(row)
                for row in rows
            }
            changed = [record for key, record in records.items() if self._records.get(key) != record]
            removed = [key for key in self._records if key not in records]
            self._rows = {row.key: row for row in rows}
            self._records = records
            self._refreshed_at = time.monotonic()
            self._state_due = self._next_state_change(now)
            if changed or removed:
                self.version += 1
                for record in changed:
                    self._changed_at[record["id"]] = self.version
                    self._removed_at.pop(record["id"], None)
                for key in removed:
                    self._removed_at[key] = self.version
                    self._changed_at.pop(key, None)
            return Changes(changed, removed)

    def _next_state_change(self, now: float) -> float:
        """The next moment a row's state turns by the clock alone (the watcher's rows: it judges them)."""
        if self.source == "watcher":
            return float("inf")
        return next_state_turn((row.last_activity for row in self._rows.values()), now, self.idle_timeout)

    def _read_rows(self, now: float) -> list[StatusRow]:
        settings = self.settings
        pid = running_watcher(settings)
        identity, events = _core.file_identities(self._state_files())
        if events != self._events_identity:
            self._events_identity = events
            self._lives = hook_lives(settings)
        # The hosts' registries of running sessions: read again on every refresh (a process's exit
        # writes nothing a file identity would show).
        self._live = session_liveness(settings, self.plugins)
        status_changed = identity != self._status_identity or pid != self.watcher_pid
        self._status_identity = identity
        self.watcher_pid = pid
        if pid is not None:
            if status_changed or self.source != "watcher":
                report = collect_status(settings, self.plugins, now=now)
                self.source = report.source
                if report.source == "watcher":
                    return report.rows
                self._identities.clear()  # a watcher without a snapshot yet: the transcripts say
            elif self.source == "watcher":
                return list(self._rows.values())
        if status_changed:
            snapshot = read_snapshot(settings) or {}
            self._suspended = {str(k) for k in snapshot.get("suspended") or ()}
        return self._transcript_rows(now)

    def _transcript_rows(self, now: float) -> list[StatusRow]:
        if self.source != "transcripts" or not self._rows:
            self.source = "transcripts"
            report = collect_status(self.settings, self.plugins, now=now)
            self._listed(now)
            self._identities = self._stat(self._sessions.values())
            return report.rows
        if now - self._listed_at >= RELIST_SECONDS:
            self._listed(now)
        sessions = list(self._sessions.values())
        identities = self._stat(sessions)
        changed = [s for s in sessions if identities.get(s.key) != self._identities.get(s.key)]
        self._identities = identities
        rows = {key: row for key, row in self._rows.items() if key in self._sessions}
        if changed:
            for row in transcript_rows(
                changed, self.settings, self.plugins, now, self.idle_timeout, self._suspended
            ):
                rows[row.key] = row
        # Judged again as `sidelight status` judges them (the clock moved, a host recorded an end).
        out = [
            replace(
                row,
                state=derive_state(
                    row.last_activity,
                    now,
                    self.idle_timeout,
                    suspended=row.key in self._suspended,
                    ended_at=host_ended(row.session_ids, self._lives),
                    liveness=liveness_of(row.session_ids, self._live),
                ),
            )
            for row in rows.values()
        ]
        out.sort(key=_order)
        return out

    def _listed(self, now: float) -> None:
        # A listing made without file descriptors is empty or short, not the truth: the old one stays
        # and the caller gets the EMFILE (a page: 503).
        check_descriptors()
        self._sessions = {s.key: s for s in list_sessions(self.settings, self.plugins)}
        self._paths = [os.fspath(p) for s in self._sessions.values() for p in (s.path, *s.extra_paths)]
        self._listed_at = now

    def sessions(self) -> dict[str, Session]:
        """The sessions the resolvers list (taken again at most every :data:`RELIST_SECONDS`)."""
        with self._lock:
            now = self.clock()
            if now - self._listed_at >= RELIST_SECONDS or not self._sessions:
                self._listed(now)
            return self._sessions

    @staticmethod
    def _stat(sessions: Iterable[Session]) -> dict[str, tuple[Identity, ...]]:
        return transcript_identities(sessions)

    def session(self, key: str) -> Session:
        """The listed session whose key is ``key`` (a row's ``id``): the dashboard opens no other file.
        Anything else, a path among them, raises :class:`~sidelight.engine.discovery.SessionNotFoundError`
        with :data:`NOT_LISTED`, the same words whether a file of that name exists or not."""
        with self._lock:
            before = self._listed_at
            found = self.sessions().get(key)
            # A row newer than the last listing, unless sessions() has just listed again.
            if found is None and self._listed_at == before and self.row(key) is not None:
                self._listed(self.clock())
                found = self._sessions.get(key)
        if found is None:
            check_descriptors()  # not "no such session" when it could not be looked for
            raise SessionNotFoundError(NOT_LISTED)
        return found

    # -- collisions --------------------------------------------------------------------------------------

    def collisions(self) -> list[dict[str, Any]]:
        """Files more than one live session touched in its recent activity, the digest's way: one session
        edited or wrote the file, another edited, wrote or read it (the same file once made absolute
        against each session's directory, :func:`sidelight.features.digest.absolute_path`). Each names the
        sessions, whether each changed it, and when it last touched it; the newest first (then the one
        more sessions share).

        One repository is one project (unless ``scope = directory``): a file is compared by its path
        relative to its worktree (:func:`sidelight.engine.repos.file_in_repository`), so ``app.py``
        changed in the main checkout and in a linked worktree is one collision, shown as the main
        checkout's path. Each session names the worktree (branch, else folder) it touched the file in.

        "Recent" is what a first look at a sibling reads (its last ``first_look_bytes``): what a digest
        would tell a session that had not looked yet."""
        live = [
            key
            for key, record in zip(self._keys(), self.rows(), strict=True)
            if record["state"] in LIVE_STATES
        ]
        sessions = self.sessions()
        chosen = [sessions[key] for key in live if key in sessions]
        identities = self._stat(chosen)
        cache_key = tuple(sorted((key, identities[key]) for key in identities))
        if self._collision_cache is not None and self._collision_cache[0] == cache_key:
            return self._collision_cache[1]
        reads = [first_look(s, path, self.settings) for s in chosen for path in (s.path, *s.extra_paths)]
        results = scan_reads(reads, self.plugins) if reads else []
        by_session: dict[str, list[Activity]] = {}
        for read, result in zip(reads, results, strict=True):
            if isinstance(result, Activity):
                by_session.setdefault(read.session.key, []).append(result)
        # file (its path, or its repository and path there) -> session key -> (its path as the session
        # touched it, changed it, epoch seconds of its last touch)
        files: dict[Any, dict[str, tuple[str, bool, float | None]]] = {}
        where = _RepositoryFiles(self.settings.scope != "directory")
        for key, activities in by_session.items():
            session = sessions[key]
            merged = SessionActivity.merge(session, activities, first_look=True)
            changed = {absolute_path(f, merged.directory) for f in merged.files_changed}
            last = epoch_seconds(merged.last_timestamp)
            when: dict[str, float | None] = {}
            for activity in activities:
                cwd = activity.cwd or session.directory
                for path in _touched(activity):
                    when.setdefault(absolute_path(path, cwd), last)
                for use in activity.tool_uses:
                    if use.primary_arg and use.category in ("edit", "read"):
                        moment = epoch_seconds(use.timestamp) if use.timestamp else None
                        if moment is not None:
                            when[absolute_path(use.primary_arg, cwd)] = moment
            for path, moment in when.items():
                touches = files.setdefault(where.key(path), {})
                before = touches.get(key)
                if before is None or (moment or 0.0) >= (before[2] or 0.0):
                    touches[key] = (path, path in changed or (before is not None and before[1]), moment)
                elif path in changed:
                    touches[key] = (before[0], True, before[2])
        out: list[dict[str, Any]] = []
        for file, touches in files.items():
            if len(touches) < 2 or not any(changed for _, changed, _ in touches.values()):
                continue
            who = [
                {
                    "id": key,
                    "name": self._records[key]["name"] if key in self._records else sanitize(key, NAME_LIMIT),
                    "agent": sessions[key].format,
                    "changed": changed,
                    "when": iso(moment),
                    "worktree": where.worktree(path),
                    "path": sanitize(path, PATH_LIMIT),
                }
                for key, (path, changed, moment) in sorted(touches.items(), key=lambda t: -(t[1][2] or 0.0))
            ]
            latest = max((w["when"] or "") for w in who)
            paths = {path for path, _, _ in touches.values()}
            shown = next(iter(paths)) if len(paths) == 1 else where.shown(file)
            out.append(
                {
                    "file": sanitize(shown, PATH_LIMIT),
                    "sessions": who,
                    "latest": latest,
                    "worktrees": len({w["worktree"] for w in who}),
                }
            )
        # The newest first; at the same moment, the file more sessions share.
        out.sort(key=lambda c: (str(c["latest"]), len(c["sessions"])), reverse=True)
        self._collision_cache = (cache_key, out)
        return out

    def _keys(self) -> list[str]:
        with self._lock:
            if not self._loaded:
                self.refresh()
            return list(self._rows)

    # -- timeline ----------------------------------------------------------------------------------------

    def timeline(self, hours: float = TIMELINE_HOURS) -> dict[str, Any]:
        """Messages and tool uses per minute for the last ``hours``, per session (the
        :data:`TIMELINE_SESSIONS` most recently active of those active in that time), counted by the core
        as ``sidelight status`` counts them (:func:`minute_counts`); and the lifecycle changes in that
        time (the watcher's event log, else judged from each session's last activity and the idle
        timeout)."""
        now = self.clock()
        end = int(now // 60) * 60 + 60
        start = end - int(hours * 3600)
        minutes = (end - start) // 60
        with self._lock:
            if not self._loaded:
                self.refresh()
            rows = [
                r for r in self._rows.values() if r.last_activity is not None and r.last_activity >= start
            ]
        rows.sort(key=lambda r: -(r.last_activity or 0.0))
        shown, left_out = rows[:TIMELINE_SESSIONS], max(0, len(rows) - TIMELINE_SESSIONS)
        sessions = self.sessions()
        series = []
        for row in shown:
            session = sessions.get(row.key)
            if session is None:
                continue
            identity = (start, *self._stat([session]).get(row.key, ()))
            cached = self._timeline_cache.get(row.key)
            if cached is not None and cached[0] == identity:
                counts = cached[1]
            else:
                counts = {"messages": [0] * minutes, "tools": [0] * minutes, "partial": False}
                for path in (session.path, *session.extra_paths):
                    try:
                        found = minute_counts(session, path, self.plugins, start, minutes, self.settings)
                    except (OSError, ValueError, LookupError):
                        continue
                    for kind in ("messages", "tools"):
                        counts[kind] = [a + b for a, b in zip(counts[kind], found[kind], strict=True)]
                    counts["partial"] = counts["partial"] or found["partial"]
                self._timeline_cache[row.key] = (identity, counts)
            series.append(
                {
                    "id": row.key,
                    "name": self._records[row.key]["name"],
                    "agent": row.agent,
                    "messages": counts["messages"],
                    "tools": counts["tools"],
                    "partial": counts["partial"],
                }
            )
        charted = {s["id"] for s in series}
        for key in [k for k in self._timeline_cache if k not in charted]:
            del self._timeline_cache[key]
        return {
            "start": iso(start),
            "start_epoch": start,
            "minutes": minutes,
            "sessions": series,
            "left_out": left_out,
            "lifecycle": self._lifecycle_marks(start, now, {r.key for r in rows}),
        }

    def _lifecycle_marks(self, start: float, now: float, keys: set[str]) -> list[dict[str, Any]]:
        marks: list[dict[str, Any]] = []
        logged: set[str] = set()
        for event in _tail_lines(self.settings.state_dir / ACTIVITY_EVENTS_FILE, EVENTS_TAIL_BYTES):
            kind = event.get("kind")
            info = event.get("session")
            if kind not in LIFECYCLE_KINDS or not isinstance(info, dict):
                continue
            key = str(info.get("key"))
            moment = epoch_seconds(str(event.get("time") or ""))
            if moment is None or moment < start or key not in keys:
                continue
            logged.add(key)
            marks.append({"id": key, "time": iso(moment), "epoch": moment, "kind": str(kind)[8:]})
        with self._lock:
            rows = [self._rows[key] for key in keys - logged if key in self._rows]
        for row in rows:
            if row.last_activity is None:
                continue
            # No event log for it: when the idle timeout made (or will have made) it idle, then ended.
            for kind, moment in zip(
                ("idle", "end"), state_turns(row.last_activity, self.idle_timeout), strict=True
            ):
                if start <= moment <= now:
                    marks.append({"id": row.key, "time": iso(moment), "epoch": moment, "kind": kind})
        marks.sort(key=lambda m: m["epoch"])
        return marks

    # -- one session -------------------------------------------------------------------------------------

    def detail(self, key: str) -> dict[str, Any]:
        """A session's page: its row, recent conversation (``sidelight read``), the last context sidelight
        injected into it, what its next prompt would get (``sidelight context``; nothing moves) and its
        recap (``sidelight recap``). Raises ``LookupError`` for a session that does not exist."""
        from sidelight.features.hook import host_event, plan_event
        from sidelight.features.reader import read_session, result_line
        from sidelight.features.recap.handoff import build_for_session

        session = self.session(key)
        record = self.row(session.key) or {
            "id": session.key,
            "name": sanitize(session.name, NAME_LIMIT),
            "agent": session.format,
            "project": sanitize(session.group, PATH_LIMIT),
            "state": "ended",
        }
        out: dict[str, Any] = {"session": record, "path": sanitize(os.fspath(session.path), PATH_LIMIT)}
        try:
            entries = read_session(session, self.plugins, READ_ENTRIES)
            out["conversation"] = [
                {
                    "time": entry.timestamp,
                    "role": entry.role,
                    "text": None if entry.text is None else sanitize_lines(entry.text, keep_spacing=True),
                    "tool": None if entry.tool_name is None else sanitize(entry.tool_name, NAME_LIMIT),
                    "arg": None if entry.primary_arg is None else sanitize(entry.primary_arg, TEXT_LIMIT),
                    "result": result_line(entry.result, error=entry.result_error),
                }
                for entry in entries
            ]
        except (OSError, ValueError, LookupError) as error:
            if out_of_descriptors(error):
                raise  # the page would be wrong, not short of a part: a 503
            out["conversation"] = []
            out["conversation_error"] = sanitize(str(error), TEXT_LIMIT)
        spec = self.plugins.formats().get(session.format)
        injected = last_injected(
            session.path, session.format, spec.injected_markers if spec else (), self.plugins
        )
        out["last_injected"] = None if injected is None else injected["text"]
        out["last_injected_where"] = None if injected is None else injected["where"]
        out["last_injected_time"] = None if injected is None else injected["time"]
        try:
            event = host_event(session, "prompt", None, self.plugins.injectors())
            plan = plan_event(event, self.settings, self.plugins, measure=True)
            try:
                out["next_context"] = _plan_record(plan.as_dict())
            finally:
                plan.close()
        except Exception as error:  # a plugin's failure costs this part of the page, not the page
            if out_of_descriptors(error):
                raise
            out["next_context"] = None
            out["next_context_error"] = sanitize(str(error), TEXT_LIMIT)
        try:
            recap = build_for_session(session, self.settings, self.plugins)
            out["recap"] = _own_text(recap.text)
        except Exception as error:
            if out_of_descriptors(error):
                raise
            out["recap"] = None
            out["recap_error"] = sanitize(str(error), TEXT_LIMIT)
        return out

    def recap_to_file(self, key: str) -> Path:
        """Writes the session's recap as a handoff file (as ``sidelight recap -w``) in
        ``<state dir>/recaps/``; its path."""
        from sidelight.features.recap.handoff import build_for_session, handoff_document, write_handoff
        from sidelight.statefile import private_dir, regular_file_target

        session = self.session(key)
        private_dir(self.settings.state_dir / RECAPS_DIR)
        target = regular_file_target(session_path(self.settings.state_dir, RECAPS_DIR, session.key, ".md"))
        size = session.path.stat().st_size
        recap = build_for_session(session, self.settings, self.plugins)
        return write_handoff(target, handoff_document(recap, session, size), mode=0o600)

    def request(self, key: str, action: str) -> dict[str, Any]:
        """Suspends or resumes a session (as ``sidelight suspend`` / ``resume``)."""
        from sidelight.watch.requests import request_resume, request_suspend

        session = self.session(key)
        live = (request_suspend if action == "suspend" else request_resume)(session.key, self.settings)
        return {"id": session.key, "action": action, "applied_by_watcher": live}

    # -- fleet -------------------------------------------------------------------------------------------

    def fleet(self) -> dict[str, Any] | None:
        """The fleet's other machines and their sessions when Redis is configured (``None``: no fleet);
        asked at most every :data:`FLEET_SECONDS`."""
        if not self.settings.redis_url:
            return None
        now = self.clock()
        cached = self._fleet
        if cached is None or now - cached[0] >= FLEET_SECONDS:
            from sidelight.features.fleet.streams import list_remote

            hosts: dict[str, list[dict[str, Any]]] = {}
            error: str | None = None
            try:
                for activity in list_remote(self.settings, timeout=1.0):
                    host = activity.session.key.split(":", 2)[1]
                    hosts.setdefault(host, []).append(
                        {
                            "name": sanitize(activity.session.name, NAME_LIMIT),
                            "agent": activity.session.format,
                            "project": sanitize(activity.session.group, PATH_LIMIT),
                            "messages": activity.messages,
                            "last_activity": activity.last_timestamp,
                        }
                    )
            except Exception as error_:  # Redis down or misconfigured: said on the page
                error = sanitize(str(error_), TEXT_LIMIT)
            listed = [{"host": sanitize(h, NAME_LIMIT), "sessions": s} for h, s in sorted(hosts.items())]
            cached = self._fleet = (now, listed, error)
        return {"hosts": cached[1], "error": cached[2]}


_STATE_ORDER = {"active": 0, "idle": 1, "suspended": 2, "ended": 3}


class _RepositoryFiles:
    """The collisions' key of a file: its repository and its path relative to its worktree (one file in
    every worktree of a repository), else its path; and the worktree a path is in (cached per path)."""

    def __init__(self, by_repository: bool) -> None:
        self.by_repository = by_repository
        self._found: dict[str, tuple[Repository, str] | None] = {}

    def _of(self, path: str) -> tuple[Repository, str] | None:
        if path not in self._found:
            self._found[path] = file_in_repository(path)
        return self._found[path]

    def key(self, path: str) -> str | tuple[str, str]:
        found = self._of(path) if self.by_repository else None
        return path if found is None else (found[0].identity, found[1])

    def worktree(self, path: str) -> str | None:
        """The label of the worktree ``path`` is in (its branch, else its folder's name)."""
        found = self._of(path)
        return None if found is None else sanitize(found[0].label, NAME_LIMIT)

    def shown(self, key: str | tuple[str, str]) -> str:
        """A file several worktrees share, as the main checkout has it."""
        if isinstance(key, str):
            return key
        for found in self._found.values():
            if found is not None and found[0].identity == key[0]:
                return found[0].checkout.rstrip("/") + "/" + key[1]
        return key[1]


def _order(row: StatusRow) -> tuple[int, float, str]:
    """As ``sidelight status`` orders its rows: live first, then the most recent."""
    return (_STATE_ORDER.get(row.state, 4), -(row.last_activity or 0.0), row.name)


def _own_text(text: str) -> str:
    """Text sidelight made itself (a plan, a recap) from sanitized parts: secrets redacted again and
    invisible characters dropped, its own frame left as it is (defanging it would misquote it)."""
    return redact(strip_invisible(text))


def _plan_record(plan: dict[str, Any]) -> dict[str, Any]:
    plan = dict(plan)
    plan["text"] = None if plan.get("text") is None else _own_text(str(plan["text"]))
    plan["blocks"] = [{**block, "text": _own_text(str(block.get("text") or ""))} for block in plan["blocks"]]
    plan["session"] = None if plan.get("session") is None else sanitize(str(plan["session"]), NAME_LIMIT)
    return plan


#: A line's own time, to cut a transcript into minutes (which minute a count falls in is the core's
#: timestamp of what it counted; this only says where a new minute may start).
_STAMP = re.compile(rb'"timestamp"\s*:\s*"([^"\\]{10,40})"')


def minute_counts(
    session: Session, path: Path, plugins: Plugins, start: int, minutes: int, settings: Settings
) -> dict[str, Any]:
    """Messages and tool uses per minute from ``start`` in the transcript at ``path`` (its last
    :data:`TIMELINE_BYTES`), counted by the core's scan as ``sidelight status`` counts them
    (docs/activity.md): a response written over several lines is one message, a tool use counts once
    per id, what sidelight injected and what the host wrote itself count nothing.

    The lines are cut where their time turns to another minute; each piece is appended to a scratch
    copy (``<state dir>/dashboard/``, ``0600``, removed at the end) and scanned from the cursor the
    last piece left, so that a response split over two minutes still counts once, in the minute it
    began. ``partial`` says the window reaches back before the part read."""
    import tempfile

    from sidelight.engine.reads import TranscriptRead, scan_reads
    from sidelight.statefile import private_dir

    counts: dict[str, Any] = {"messages": [0] * minutes, "tools": [0] * minutes, "partial": False}
    offset = _core.tail_offset(os.fspath(path), TIMELINE_BYTES)
    with open_regular(path) as file:
        file.seek(offset)
        data = file.read(TIMELINE_BYTES + (1 << 20))
    data = data[: data.rfind(b"\n") + 1]
    pieces: list[bytes] = []
    lines: list[bytes] = []
    minute: bytes | None = None
    began = offset == 0
    for line in data.splitlines(keepends=True):
        found = _STAMP.search(line)
        if found is not None and found.group(1)[:16] != minute:
            minute = found.group(1)[:16]
            moment = epoch_seconds(found.group(1).decode("ascii", "replace"))
            if moment is not None and moment < start:
                began = True
                lines.clear()  # before the window: not counted
                continue
            if lines:
                pieces.append(b"".join(lines))
                lines = []
        lines.append(line)
    if lines:
        pieces.append(b"".join(lines))
    counts["partial"] = not began
    if not pieces:
        return counts
    folder = settings.state_dir / DASHBOARD_DIR  # the timeline copies a transcript's minutes here
    private_dir(folder)
    handle, name = tempfile.mkstemp(dir=folder, suffix=".jsonl")
    scratch = Path(name)
    try:
        with os.fdopen(handle, "wb") as out:
            cursor = None
            for piece in pieces:
                out.write(piece)
                out.flush()
                [activity] = scan_reads([TranscriptRead(session, scratch, cursor, first_look=False)], plugins)
                if isinstance(activity, Exception):
                    raise activity
                cursor = activity.cursor
                moment = epoch_seconds(activity.last_timestamp)
                if moment is None:
                    continue
                index = int((moment - start) // 60)
                if 0 <= index < minutes:
                    counts["messages"][index] += activity.messages.total
                    counts["tools"][index] += sum(activity.categories.get(c, 0) for c in CATEGORIES)
    finally:
        scratch.unlink(missing_ok=True)
    return counts


def last_injected(
    path: Path, format: str, markers: Iterable[str] = (), plugins: Plugins | None = None
) -> dict[str, Any] | None:
    """The last block sidelight injected into the transcript at ``path``, read where the agent whose
    transcripts are in ``format`` records a hook's context (its :attr:`AgentSpec.injected_values`) in
    the last :data:`INJECTED_TAIL_BYTES`, and recognised as the formats recognise our text
    (:func:`sidelight.features.history.strip_injected`: one of
    :data:`sidelight.features.history.INJECTED_HEADERS` or the
    format's ``injected_markers``), from that header on. ``{"text", "where", "time"}`` (the line's
    time, ISO 8601 UTC, or ``None``); ``None`` when there is none. A format of no agent that says where
    (a plugin's) is searched in every string of its lines."""
    from sidelight.features.history import INJECTED_HEADERS

    headers = (*INJECTED_HEADERS, *(m for m in markers if m))
    agent = _agent_of_format(format, plugins or get_plugins())
    where, strings = (
        (agent.injected_where or agent.title, agent.injected_values)
        if agent is not None and agent.injected_values is not None
        else ("a line of its transcript", lambda line: [line])
    )
    found: tuple[str, Any] | None = None
    for line in _tail_lines(path, INJECTED_TAIL_BYTES):
        for value in strings(line):
            for text in jsonio.strings(value):
                start = min((i for i in (text.find(h) for h in headers) if i >= 0), default=-1)
                if start >= 0:
                    found = (text[start:], line.get("timestamp"))
    if found is None:
        return None
    text, stamp = found
    moment = epoch_seconds(stamp) if isinstance(stamp, str) else None
    return {"text": sanitize_lines(text.rstrip(), keep_spacing=True), "where": where, "time": iso(moment)}


def _agent_of_format(format: str, plugins: Plugins) -> AgentSpec | None:
    """The agent whose transcripts are in ``format``: the one of that name, else the first that lists it."""
    named = plugins.agent(format)
    if named is not None and format in named.formats:
        return named
    return next((a for a in plugins.agents().values() if format in a.formats), None)


def _tail_lines(path: Path, size: int) -> list[dict[str, Any]]:
    """The JSON objects of the whole lines in the last ``size`` bytes of ``path`` (none when it cannot be
    read; lines that are no JSON object are skipped)."""
    try:
        with open_regular(path) as file:
            end = file.seek(0, os.SEEK_END)
            file.seek(max(0, end - size))
            data = file.read(size)
    except OSError:
        return []
    lines = data.split(b"\n")
    if end > size:
        lines = lines[1:]  # the first is cut
    out = []
    for line in lines:
        if b"{" not in line:
            continue
        try:
            value = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict):
            out.append(value)
    return out
