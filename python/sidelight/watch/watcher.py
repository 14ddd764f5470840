"""The watcher (`sidelight watch`): follows every session's transcript as it grows.

Threads and their jobs:

* watchdog's observer (inotify, or a polling observer for network file systems and WSL,
  :mod:`sidelight.watch.observe`) calls a handler that only adds the event's path to a dirty set under a
  lock and wakes the worker: no I/O, no parsing, so a burst of writes costs one cheap Python call per
  event;
* the worker waits for the wake-up, lets the burst settle (``debounce``), takes the whole dirty set, and
  reads every dirty transcript in one batch of the reading engine (:func:`sidelight.engine.reads.count_reads`:
  one parallel native call) from the watcher's own cursors (reader ``"watcher"`` in
  ``<state dir>/watch/cursors.json``). Each session's new activity goes to the lifecycle tracker, and a
  status snapshot (``<state dir>/status.json``) is written for ``sidelight status`` and the hooks.

Events are only hints: every ``reconcile_interval`` the worker lists the sessions again, stats every
transcript and marks the changed ones dirty (missed events, new and deleted files), and schedules roots
that did not exist before. A transcript seen for the first time is read, like a hook does, from a
bounded recent tail (``Settings.first_look_bytes``): the lifecycle hears that much of its history as
news, never months of it; its status row counts the whole file, read once more for that. A file new
to a session the watcher already follows (a subagent's) is read whole, as the hook reads it: it is all
news (:func:`sidelight.engine.reads.start_of`, the one rule of where a read starts).

One watcher per state directory: it holds an exclusive ``flock`` on ``<state dir>/watch.lock`` (which
also holds its pid) for as long as it runs.

>>> with Watcher(Settings.load(), get_plugins()) as watcher:     # doctest: +SKIP
...     stop_flag.wait()
"""

from __future__ import annotations

import gc
import logging
import os
import threading
import time
import zlib
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from sidelight.cursors import CursorStore
from sidelight.engine.discovery import list_sessions
from sidelight.engine.reads import (
    category_tables,
    count_reads,
    cursor_entry,
    decoder_for,
    entry_cursor,
    has_news,
    line_entries,
    start_of,
)
from sidelight.errors import describe
from sidelight.features.lifecycle import add_tool_counts, format_duration, judge_session
from sidelight.statefile import private_dir
from sidelight.statelayout import (
    ARCHIVE_DIR,
    EVENTS_FILE,
    STATUS_FILE,
    WATCH_CURSORS_FILE,
    WATCH_LIFECYCLE_FILE,
)
from sidelight.timestamps import epoch_seconds
from sidelight.watch.follow import derive_state
from sidelight.watch.observe import JOIN_TIMEOUT, Roots
from sidelight.watch.options import WatchOptions, watch_options
from sidelight.watch.requests import (
    WatchRequest,
    read_hook_events,
    request_resume,
    request_suspend,
    take_requests,
)
from sidelight.watch.rows import Row, row_for, status_row
from sidelight.watch.runtime import (
    SNAPSHOT_VERSION,
    WatcherRunningError,
    _acquire,
    _read_json,
    _release,
    _sweep_temporaries,
    make_state_private,
    read_snapshot,
    running_watcher,
    write_json_atomic,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from sidelight._core import _ScanCounts as ScanCounts
    from sidelight.config import Settings
    from sidelight.engine.reads import Head
    from sidelight.features.lifecycle import SessionTracker
    from sidelight.plugins import Plugins
    from sidelight.records import HostEvent, Session, SinkEvent
    from sidelight.types import CursorTuple
    from sidelight.watch.serve import HookServer

#: The names below are importable from here as before; each is defined in the module of its job
#: (:mod:`~sidelight.watch.runtime`, :mod:`~sidelight.watch.requests`, :mod:`~sidelight.watch.options`,
#: :mod:`~sidelight.watch.rows`, :mod:`~sidelight.watch.follow`).
__all__ = [
    "READER",
    "WatchOptions",
    "WatchRequest",
    "Watcher",
    "WatcherRunningError",
    "derive_state",
    "epoch_seconds",
    "read_snapshot",
    "request_resume",
    "request_suspend",
    "running_watcher",
    "status_row",
    "watch_options",
    "write_json_atomic",
]

logger = logging.getLogger(__name__)

#: The watcher's reader name in its cursor file.
READER = "watcher"
#: How often the worker looks for requests, ticks the tracker and flushes state when nothing happens.
HOUSEKEEPING_INTERVAL = 0.5
#: With ``own_gc``, how often the worker runs a full garbage collection itself.
GC_INTERVAL = 30.0
#: Seconds between two writes of the lifecycle state (it is always written on stop).
LIFECYCLE_FLUSH = 10.0
#: A transcript not written to for this long is cool: the quick stat pass looks at it only every
#: :data:`COOL_EVERY` beats (a second at the default beat), so a fleet of quiet sessions costs a quarter.
COOL_AFTER = 60.0
COOL_EVERY = 4


class Watcher:
    """Follows every session the resolver plugins list; see the module docs.

    ``tracker`` receives each session's new activity (``observe``) and a ``tick()`` after each pass;
    ``polling`` picks watchdog's polling observer (``poll_interval`` seconds between polls); ``debounce``
    is how long a burst of events may settle before the scan; ``reconcile_interval`` is the period of
    the stat pass; ``clock`` gives epoch seconds. ``modify_events=False`` asks watchdog only for new,
    deleted and moved files and finds appends with a stat pass every ``debounce`` over the transcripts
    written to in the last ``2 * idle_timeout`` (the periodic full stat pass finds the others): its
    cost follows the number of live sessions, not of writes, and is much lower when many sessions write
    at once. ``modify_events=None`` (the default) chooses at the first pass, and again at each full
    pass as the fleet grows or shrinks: the stat pass when more than :data:`AUTO_STAT_APPENDS`
    transcripts were written to in that window, file events again when at most half as many are.
    ``on_scan(now, [(path, offset), ...])`` is called by the worker after each scan (benchmarks and
    tests measure latency with it). ``own_gc=True`` is for a process that runs only the watcher
    (``sidelight watch``): after the first pass the worker freezes what is loaded and turns the
    automatic garbage collector off, then collects every :data:`GC_INTERVAL` itself. Automatic collections
    kept scanning the thousands of long-lived session records, a third of the worker's time under load;
    the records hold no reference cycles, so a periodic collection is all they need.

    :meth:`start` takes the lock (raises :class:`WatcherRunningError` when another watcher holds it) and
    starts the threads; :meth:`stop` stops and joins every thread and flushes the cursors and snapshot.
    """

    def __init__(
        self,
        settings: Settings,
        plugins: Plugins,
        *,
        tracker: SessionTracker | None = None,
        polling: bool = False,
        poll_interval: float = 1.0,
        debounce: float = 0.25,
        reconcile_interval: float = 10.0,
        flush_interval: float = 1.0,
        clock: Callable[[], float] = time.time,
        on_scan: Callable[[float, Sequence[tuple[str, int]]], None] | None = None,
        modify_events: bool | None = None,
        own_gc: bool = False,
        serve_hooks: bool = False,
    ) -> None:
        self.settings = settings
        self.plugins = plugins
        self.tracker = tracker
        self.polling = polling
        self.poll_interval = poll_interval
        self.debounce = max(0.0, debounce)
        self.reconcile_interval = max(0.05, reconcile_interval)
        self.flush_interval = max(0.0, flush_interval)
        self.clock = clock
        self.on_scan = on_scan
        #: As given; ``None`` (choose by the live sessions) is replaced by the current choice.
        self.modify_events = modify_events
        #: Whether the watcher chooses (and may change) how it finds appends: ``modify_events=None``.
        self.auto_appends = modify_events is None
        self.own_gc = own_gc
        self.serve_hooks = serve_hooks
        self._server: HookServer | None = None
        self._gc_was_enabled: bool | None = None
        self.state_dir = settings.state_dir
        self.status_path = settings.state_dir / STATUS_FILE
        self.store = CursorStore(settings.state_dir / WATCH_CURSORS_FILE, fast=True)

        self._lock = threading.Lock()  # guards _dirty only
        self._dirty: set[str] = set()
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._lock_fd: int | None = None
        self._worker: threading.Thread | None = None
        #: The observer and its watches on the resolvers' roots.
        self.roots = Roots(
            settings, plugins, self._mark, self._placed, polling=polling, poll_interval=poll_interval
        )
        self._error: BaseException | None = None
        self._sinks_started = False

        # Worker state (touched by the worker thread only once started).
        self._sessions: dict[str, Session] = {}
        #: Moves when a file is created, deleted or moved under the roots (see _placements_seen).
        self._placements = 0
        #: When each session's object was taken from a listing (monotonic): see _refresh_sessions.
        self._named_at: dict[str, float] = {}
        self._by_path: dict[str, tuple[Session, Path]] = {}
        self._ignored: set[str] = set()
        #: Cursors as the last run saved them (cursor-store entries), and this run's: key -> path -> tuple.
        self._entries: dict[str, dict[str, Any]] = {}
        #: Whether ``_entries`` holds every entry of the cursor file (it was read at start): saving
        #: then rewrites the file rather than merging into it.
        self._entries_whole = False
        self._cursors: dict[str, dict[str, CursorTuple]] = {}
        self._changed_entries: set[str] = set()
        self._removed_entries: set[str] = set()
        self._rows: dict[str, Row] = {}
        self._suspended: set[str] = set()
        self._complained: set[str] = set()
        #: Transcript -> its modification time at its last stat (what the quick stat pass skips on).
        self._mtimes: dict[str, float] = {}
        self._quick_passes = 0
        #: Resolver -> the files its listing is made from (``ResolverSpec.sources``) and their stats as
        #: of its last listing (see _follow_sources).
        self._sources: dict[str, tuple[tuple[str, ...], list[tuple[int, int, int, int] | None]]] = {}
        #: Resolver -> when to follow its sources once more although their stats did not change since
        #: (see _follow_sources).
        self._source_settle: dict[str, float] = {}
        self._dirty_state = False
        self._started_at = 0.0
        self._last_flush = 0.0
        self._scans = 0
        self._hook_offset: int | None = None
        self._last_lifecycle_flush = 0.0
        #: The tracker's transition count when its states were last saved (see _flush).
        self._saved_transitions = 0
        #: Per scan outcome of the current pass (by id): the transcript, its decoder and where the scan
        #: started, to read the entries of the lines it counted (see _lines).
        self._ranges: dict[int, tuple[str, str, int]] = {}
        #: Session key -> the text that stands for it in event keys (see _event_prefix).
        self._prefixes: dict[str, str] = {}
        self._categories: dict[str, dict[str, str]] = {}
        self.lifecycle_path = settings.state_dir / WATCH_LIFECYCLE_FILE

    # -- public ------------------------------------------------------------------------------------

    def __enter__(self) -> Watcher:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def running(self) -> bool:
        return self._worker is not None and self._worker.is_alive()

    @property
    def error(self) -> BaseException | None:
        """What stopped the worker, if it died (the CLI exits non-zero on it)."""
        return self._error

    def start(self) -> None:
        """Take the lock, restore state, and start the observer and the worker."""
        if self._worker is not None:
            raise RuntimeError("this watcher was already started")
        private_dir(self.state_dir)
        self._lock_fd = _acquire(self.state_dir)
        try:
            self._started_at = self.clock()
            make_state_private(self.state_dir)
            _sweep_temporaries(self.state_dir)
            self._restore()
            if self._hook_offset is None:
                # Hook events from before the first start are history, not news.
                try:
                    self._hook_offset = (self.state_dir / EVENTS_FILE).stat().st_size
                except OSError:
                    self._hook_offset = 0
            self.roots.start()
            self._sink_calls("start", self.settings, self.plugins)
            if self.serve_hooks:
                self._serve_hooks()
            self._worker = threading.Thread(target=self._run, name="sidelight-watch-worker", daemon=True)
            self._worker.start()
        except BaseException:
            if self._server is not None:
                self._server.stop()
                self._server = None
            self._sink_calls("stop")
            self.roots.shutdown()
            _release(self._lock_fd)
            self._lock_fd = None
            raise
        logger.info("watching the sessions; state in %s", self.state_dir)

    def _serve_hooks(self) -> None:
        from sidelight.watch.serve import HookServer

        server = HookServer(
            self.settings, self.plugins, placements=self._placements_seen, on_answer=self._hook_answered
        )
        try:
            server.start()
        except OSError as error:
            logger.warning("cannot answer hooks on %s (%s); they answer themselves", server.path, error)
        else:
            self._server = server

    def _placed(self) -> None:
        self._placements += 1

    def _placements_seen(self) -> int | None:
        """A number that moves whenever a file under the roots was created, deleted or moved, or the
        worker's listing changed: the hook server lists the sessions again then. ``None`` while a
        resolver names a root that no watch covers yet (a folder that appeared since the last reconcile,
        or one that cannot be watched): until the worker watches it, every hook lists the sessions."""
        return self._placements if self.roots.covered() else None

    def _hook_answered(self) -> None:
        # The snapshot counts the answered hooks (`sidelight status`): written at the next flush.
        self._dirty_state = True

    def stop(self) -> None:
        """Stop and join every thread, then flush the cursors and the snapshot and release the lock."""
        server, self._server = self._server, None
        if server is not None:
            server.stop()
        self._stopping.set()
        self._wake.set()
        self.roots.shutdown()
        worker = self._worker
        if worker is not None and worker is not threading.current_thread():
            worker.join(JOIN_TIMEOUT)
            if worker.is_alive():
                logger.warning("the watcher's worker did not stop within %.0fs", JOIN_TIMEOUT)
        self._sink_calls("stop")
        if self._lock_fd is not None:
            try:
                self._flush(force=True)
            except Exception:
                logger.warning("could not save the watcher's state", exc_info=True)
            _release(self._lock_fd)
            self._lock_fd = None
            logger.info("stopped watching")

    def _sink_calls(self, action: str, *args: Any) -> None:
        """The sinks' ``start(settings, plugins)`` before the first event, ``stop()`` after the last
        (once each: a sink with a thread of its own starts and joins it there)."""
        if (action == "start") == self._sinks_started:
            return
        self._sinks_started = action == "start"
        for sink in self.plugins.sinks().values():
            call = getattr(sink, action)
            try:
                if call is not None:
                    call(*args)
            except Exception:
                logger.warning("sink %s failed to %s", sink.name, action, exc_info=True)

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until the worker ends (it ends on :meth:`stop`, or on an internal error)."""
        worker = self._worker
        if worker is None:
            return True
        worker.join(timeout)
        return not worker.is_alive()

    def sessions_snapshot(self) -> dict[str, Any]:
        """The snapshot as :meth:`stop` would write it (call from the worker, or once stopped)."""
        return self._snapshot()

    # -- the handler's side: no I/O ------------------------------------------------------------------

    def _mark(self, path: str, dest: str | None) -> None:
        with self._lock:
            self._dirty.add(path)
            if dest is not None:
                self._dirty.add(dest)
        self._wake.set()

    # -- observer ------------------------------------------------------------------------------------

    # -- worker --------------------------------------------------------------------------------------

    def _run(self) -> None:
        try:
            # The first pass at once: a first look at every transcript, and a first snapshot.
            self._reconcile()
            with self._lock:
                dirty, self._dirty = self._dirty, set()
            if dirty:
                self._process(dirty)
            self._flush(force=True)
            if self.own_gc:
                self._gc_was_enabled = gc.isenabled()
                gc.collect()
                gc.freeze()
                gc.disable()
            next_gc = time.monotonic() + GC_INTERVAL
            next_reconcile = time.monotonic() + self.reconcile_interval
            next_housekeeping = time.monotonic() + HOUSEKEEPING_INTERVAL
            # Without modify events, a stat pass over the known transcripts finds the appends.
            stat_period: float | None = None
            next_stat = 0.0
            file_events: bool | None = None
            while not self._stopping.is_set():
                if file_events != bool(self.modify_events):
                    # The first time, and after a full pass changed how appends are found.
                    file_events = bool(self.modify_events)
                    stat_period = None if file_events else max(self.debounce, 0.05)
                    next_stat = time.monotonic() + (stat_period or 0.0)
                    how = "file events" if stat_period is None else f"a stat pass every {stat_period:g}s"
                    logger.info("appends found by %s", how)
                now = time.monotonic()
                due = min(
                    next_reconcile,
                    next_housekeeping,
                    next_stat if stat_period else next_reconcile,
                    min(self._source_settle.values(), default=next_reconcile),
                )
                woke = self._wake.wait(max(0.0, due - now))
                if self._stopping.is_set():
                    break
                if stat_period and time.monotonic() >= next_stat:
                    changed = self._stat_pass(everything=False)
                    if changed:
                        with self._lock:
                            self._dirty.update(changed)
                    # A steady beat (from the last due time, not from now): a pass that took long does
                    # not push every later one back, and a write waits at most one period for its stat.
                    next_stat = max(next_stat + stat_period, time.monotonic() + stat_period / 4)
                elif woke and self.debounce:
                    # Let the burst settle; stop() cuts the wait short.
                    self._stopping.wait(self.debounce)
                    if self._stopping.is_set():
                        break
                self._wake.clear()
                if self._sources:
                    self._follow_sources()
                now = time.monotonic()
                if now >= next_reconcile:
                    self._reconcile()
                    next_reconcile = time.monotonic() + self.reconcile_interval
                with self._lock:
                    dirty, self._dirty = self._dirty, set()
                if dirty:
                    self._process(dirty)
                    self._flush()
                if now >= next_housekeeping:
                    self._housekeeping()
                    next_housekeeping = time.monotonic() + HOUSEKEEPING_INTERVAL
                if self.own_gc and now >= next_gc:
                    gc.collect()
                    next_gc = time.monotonic() + GC_INTERVAL
            # A last pass over what is already marked, so that stop() loses nothing it was told about.
            with self._lock:
                dirty, self._dirty = self._dirty, set()
            if dirty:
                self._process(dirty)
            self._take_requests()
        except BaseException as error:
            self._error = error
            logger.exception("the watcher stopped on an internal error")
            self._stopping.set()
        finally:
            if self._gc_was_enabled:
                gc.enable()

    def _housekeeping(self) -> None:
        self._take_requests()
        self._take_hook_events()
        if self.tracker is not None:
            try:
                events = self.tracker.tick()
            except Exception:
                logger.warning("the lifecycle tracker failed to tick", exc_info=True)
            else:
                if events:
                    self._events(events)
                    self._dirty_state = True
        self._flush()

    def _events(self, events: Sequence[SinkEvent]) -> None:
        """Hand the tracker's events to the sink plugins, and archive the sessions that ended."""
        if not events:
            return
        self._dirty_state = True
        for sink in self.plugins.sinks().values():
            if sink.emit_many is not None:
                try:
                    sink.emit_many(events)
                except Exception:
                    logger.warning("sink %s failed on %d events", sink.name, len(events), exc_info=True)
                continue
            for event in events:
                try:
                    sink.emit(event)
                except Exception:
                    logger.warning("sink %s failed on %s", sink.name, event.kind, exc_info=True)
        for event in events:
            if event.kind == "session_end":
                self._archive(event.session.key, event.key)

    def _archive(self, key: str, event_key: str | None = None) -> None:
        from sidelight.features.lifecycle import archive_session

        tracker = self.tracker
        state = None if tracker is None else tracker.get(key)
        if tracker is None or state is None:
            return
        transcript = Path(state.path) if tracker.settings.archive_transcripts else None
        if transcript is not None and not transcript.is_file():
            transcript = None
        try:
            # Keyed: an end read again after a crash finds its archive and is not archived twice.
            path = archive_session(state, self.state_dir / ARCHIVE_DIR, transcript, event_key)
        except OSError as error:
            logger.warning("could not archive session %s: %s", state.name, error)
        else:
            logger.info("session %s ended (%s); archived to %s", state.name, state.end_reason, path)

    def _take_hook_events(self) -> None:
        """Feed the tracker the session starts and ends the hooks recorded in ``events.jsonl``."""
        if self.tracker is None:
            return
        found = read_hook_events(self.state_dir / EVENTS_FILE, self._hook_offset)
        if found is None:
            return
        self._hook_offset, events = found
        self._dirty_state = True
        for key, event, moment in events:
            self._hook_event(event, key, moment)

    def hook_event(self, event: HostEvent) -> None:
        """Pass one host hook event to the tracker (call from the worker thread, or before start)."""
        self._hook_event(event)

    def _hook_event(self, event: HostEvent, key: str | None = None, moment: float | None = None) -> None:
        tracker = self.tracker
        if tracker is None:
            return
        session = None
        if event.transcript_path is not None:
            found = self._by_path.get(os.fspath(event.transcript_path))
            session = None if found is None else found[0]
        if session is None and event.session_id is not None:
            session = next((s for s in self._sessions.values() if s.id == event.session_id), None)
        if session is None and event.event != "SessionEnd":
            from sidelight.engine.discovery import current_session

            try:
                session = current_session(event, self.settings, self.plugins)
            except Exception:
                session = None
        try:
            self._events(tracker.hook_event(event, session, key=key, moment=moment))
        except Exception:
            logger.warning("the lifecycle tracker failed on a %s hook event", event.event, exc_info=True)
            return
        if session is not None and key is not None:
            self._changed_entries.add(session.key)  # its last input (cause) is saved with its cursors

    def _note_sources(self) -> None:
        """Stat every resolver's sources before a listing: a change after it is one to follow."""
        noted: dict[str, tuple[tuple[str, ...], list[tuple[int, int, int, int] | None]]] = {}
        for resolver in self.plugins.resolvers().values():
            if resolver.sources is None:
                continue
            try:
                paths = tuple(os.fspath(p) for p in resolver.sources(self.settings))
            except Exception:
                logger.warning("resolver %s failed to name its sources", resolver.name, exc_info=True)
                continue
            if paths:
                noted[resolver.name] = (paths, [_source_stat(p) for p in paths])
        self._sources = noted

    def _follow_sources(self) -> None:
        """For each resolver whose sources changed since its last listing (a stat of each, every pass):
        list its sessions again, which brings their transcripts up to date (opencode's export), and
        mark the transcripts that differ from the watcher's cursors, or are new, dirty."""
        changed: list[str] = []
        now = time.monotonic()
        for name, (paths, seen) in list(self._sources.items()):
            stats = [_source_stat(p) for p in paths]
            settle = self._source_settle.get(name)
            if stats == seen and (settle is None or now < settle):
                continue
            if stats != seen:
                # A file's time moves in ticks of the kernel's coarse clock (a few ms): a second write
                # in the same tick that keeps the size (SQLite reusing a page) leaves the same stat, and
                # would wait for the next reconcile. Follow once more when that tick is surely over.
                self._source_settle[name] = now + SOURCE_SETTLE
            else:
                del self._source_settle[name]
            self._sources[name] = (paths, stats)
            resolver = self.plugins.resolvers().get(name)
            if resolver is None:
                continue
            try:
                listed = list(resolver.list_sessions(self.settings))
            except Exception:
                logger.warning("resolver %s failed to list its sessions", name, exc_info=True)
                continue
            for session in listed:
                for path in (session.path, *session.extra_paths):
                    if self._transcript_changed(os.fspath(path)):
                        changed.append(os.fspath(path))
        if changed:
            with self._lock:
                self._dirty.update(changed)

    def _transcript_changed(self, name: str) -> bool:
        """Whether a transcript is new to the watcher, or differs from its cursor (as in _stat_pass)."""
        known_path = self._by_path.get(name)
        if known_path is None:
            return os.path.exists(name)  # noqa: PTH110 (a new one: _process lists the sessions again)
        session, path = known_path
        mine = self._cursors.get(session.key)
        known = mine.get(name) if mine is not None else None
        if known is None:
            known = self._saved_cursor(session, path, name)
        try:
            found = os.stat(name)  # noqa: PTH116
        except OSError:
            return known is not None
        self._mtimes[name] = found.st_mtime
        return has_news(known, found.st_size, found.st_dev, found.st_ino)

    def _refresh_sessions(self) -> None:
        now = time.monotonic()
        previous, named_at = self._sessions, self._named_at
        self._note_sources()
        sessions = list_sessions(self.settings, self.plugins)
        for i, session in enumerate(sessions):
            # A listing makes new Session objects, whose names (transcript titles) are read from the
            # file on first use, every time: keep the one the watcher has, named, for TITLE_REFRESH.
            # The rows, the tracker and the event log then see the same object (their fast paths).
            known = previous.get(session.key)
            fresh = now - named_at.get(session.key, now) < TITLE_REFRESH
            if known is not None and fresh and _same_place(known, session):
                sessions[i] = known
                continue
            named_at[session.key] = now
        if previous.keys() != {s.key for s in sessions}:
            self._placements += 1
        self._sessions = {s.key: s for s in sessions}
        for key in [k for k in named_at if k not in self._sessions]:
            del named_at[key]
        by_path: dict[str, tuple[Session, Path]] = {}
        for session in sessions:
            for path in (session.path, *session.extra_paths):
                by_path[os.fspath(path)] = (session, path)
        self._by_path = by_path
        self._ignored.clear()

    def _reconcile(self) -> None:
        """List the sessions, stat every transcript, and mark the changed ones dirty; watch new roots."""
        if self.modify_events is None:
            # The first pass counts the live transcripts before it chooses and watches.
            self._refresh_sessions()
            self._stat_pass()
        if self.auto_appends:
            # By the last passes' stats; the stat pass below covers writes made while switching.
            self._choose_appends()
        self.roots.schedule(bool(self.modify_events))
        self._refresh_sessions()
        changed = self._stat_pass()
        # Sessions the watcher knew whose transcript is gone and that no resolver lists any more.
        for key in list(self._rows):
            if key not in self._sessions and not Path(self._rows[key].path).exists():
                self._forget(key)
        if changed:
            with self._lock:
                self._dirty.update(changed)
            self._wake.set()

    def _choose_appends(self) -> None:
        """File events, or the stat pass past :data:`AUTO_STAT_APPENDS` live transcripts; once chosen,
        back to file events only at half of it, so that a fleet near the threshold does not flap. A
        switch drops the watches and makes them again with the other events."""
        live = self._live_transcripts()
        threshold = AUTO_STAT_APPENDS // 2 if self.modify_events is False else AUTO_STAT_APPENDS
        file_events = live <= threshold
        if file_events == self.modify_events:
            return
        logger.info(
            "%d transcripts written to in the last %s: %s",
            live,
            format_duration(2 * self.idle_timeout),
            "file events find their appends"
            if file_events
            else "a stat pass finds their appends (--no-stat-appends for file events)",
        )
        self.roots.unwatch_all()
        # The watches are made again before the choice shows: whoever reads `modify_events` finds the
        # watches that go with it.
        self.roots.schedule(file_events)
        self.modify_events = file_events

    def _live_transcripts(self) -> int:
        """How many transcripts were written to within ``2 * idle_timeout`` (as of their last stat)."""
        horizon = time.time() - 2 * self.idle_timeout
        return sum(1 for name in self._by_path if self._mtimes.get(name, horizon) >= horizon)

    def _stat_pass(self, *, everything: bool = True) -> list[str]:
        """The known transcripts whose size or identity differs from the watcher's cursor: all of them,
        or (``everything=False``) those written to within ``2 * idle_timeout``: a session quiet for
        longer has ended, and the full pass of :meth:`_reconcile` finds it when it comes back. Of those,
        the ones quiet for :data:`COOL_AFTER` are looked at every :data:`COOL_EVERY` quick passes."""
        changed: list[str] = []
        mtimes, cursors = self._mtimes, self._cursors
        now = time.time()
        horizon = now - 2 * self.idle_timeout
        # Transcripts written to before this are skipped: older than the horizon always, cool ones on
        # all but every COOL_EVERY-th quick pass.
        skip_before = horizon
        if not everything:
            self._quick_passes += 1
            if self._quick_passes % COOL_EVERY:
                skip_before = max(horizon, now - COOL_AFTER)
        stat = os.stat
        for name, (session, path) in self._by_path.items():
            if not everything and mtimes.get(name, now) < skip_before:
                continue
            mine = cursors.get(session.key)
            known = mine.get(name) if mine is not None else None
            if known is None:
                known = self._saved_cursor(session, path, name)
            try:
                found = stat(name)  # a thousand stats a pass: plain strings
            except OSError:
                mtimes.pop(name, None)
                if known is not None:
                    changed.append(name)  # gone: the scan notices and forgets it
                continue
            mtimes[name] = found.st_mtime
            if has_news(known, found.st_size, found.st_dev, found.st_ino):
                changed.append(name)
        return changed

    def _saved_cursor(self, session: Session, path: Path, name: str) -> CursorTuple | None:
        """The cursor the last run saved for a transcript; callers look for this run's in
        ``_cursors`` first (inline: a thousand transcripts a pass)."""
        return entry_cursor(self._entries.get(session.key), session, path)

    def _process(self, dirty: set[str]) -> None:
        """Read the dirty transcripts in one batch of the engine (:func:`sidelight.engine.reads.count_reads`)
        and account for what is new.

        The hot loop of the watcher: it works on the count tuples the engine's batch call returns, and
        so does the lifecycle tracker (``observe_counts``).
        """
        unknown = [p for p in dirty if p not in self._by_path and p not in self._ignored]
        if any(p.endswith(".jsonl") for p in unknown):
            # A new transcript (or one of a new session): list the sessions again.
            self._refresh_sessions()
        plugins = self.plugins
        first_look_bytes = self.settings.first_look_bytes
        decoders: dict[str, str] = {}
        jobs: list[tuple[Session, Path, str]] = []  # session, path, name
        requests: list[tuple[str, str, CursorTuple | None]] = []
        looks: list[bool] = []  # whether each read is a first look
        by_path, cursors, entries = self._by_path, self._cursors, self._entries
        for name in dirty:
            found = by_path.get(name)
            if found is None:
                self._ignored.add(name)
                continue
            session, path = found
            decoder = decoders.get(session.format)
            if decoder is None:
                decoder = decoders[session.format] = decoder_for(session, plugins)
            mine = cursors.get(session.key)
            cursor = mine.get(name) if mine is not None else None
            if cursor is None:
                cursor = self._saved_cursor(session, path, name)
                known = mine is not None or session.key in entries
                cursor, first = start_of(name, cursor, known, first_look_bytes)
            else:
                first = False
            jobs.append((session, path, name))
            requests.append((name, decoder, cursor))
            looks.append(first)
        if not jobs:
            return
        tables = self._categories = category_tables(plugins)
        outcomes, heads = count_reads(requests, looks, tables, first_look_bytes, heads=True)
        for i, head in heads.items():
            self._count_head(jobs[i][0], head)
        now = self.clock()
        by_session: dict[str, tuple[Session, list[ScanCounts], bool]] = {}
        offsets: list[tuple[str, int]] = []
        cursors, changed_entries = self._cursors, self._changed_entries
        self._ranges.clear()
        for i, ((session, path, name), outcome) in enumerate(zip(jobs, outcomes, strict=True)):
            if isinstance(outcome, Exception):
                self._scan_failed(session, path, name, outcome)
                continue
            if self._complained:
                self._complained.discard(name)
            key = session.key
            cursor = outcome[0]
            mine = cursors.get(key)
            if mine is None:
                cursors[key] = {name: cursor}
            else:
                mine[name] = cursor
            changed_entries.add(key)
            offsets.append((name, cursor[0]))
            if not outcome[2]:  # no complete line
                continue
            if self.tracker is not None:
                start = requests[i][2]
                self._ranges[id(outcome)] = (name, requests[i][1], 0 if start is None else start[0])
            first = looks[i]
            grouped = by_session.get(key)
            if grouped is None:
                by_session[key] = (session, [outcome], first)
            else:
                grouped[1].append(outcome)
                if first and not grouped[2]:
                    by_session[key] = (grouped[0], grouped[1], True)
        self._dirty_state = True
        events: list[SinkEvent] = []
        for session, found_outcomes, was_first in by_session.values():
            self._account(session, found_outcomes, was_first, now, events)
        self._ranges.clear()
        # The sinks get the whole pass at once: one write of the event log, not one per event.
        self._events(events)
        self._scans += 1
        if self.on_scan is not None:
            self.on_scan(now, offsets)

    def _count_head(self, session: Session, head: Head) -> None:
        """Counts, into the session's status row, what a first look left out (the part of its transcript
        before its recent tail, :func:`sidelight.engine.reads.count_reads`), so that a row counts the whole
        transcript as ``sidelight scan`` does (a row showed 7 messages of 9). The tracker still hears
        only the tail: history is not news."""
        row = self._rows.get(session.key)
        if row is None:
            row = self._rows[session.key] = row_for(session)
        counts = row.counts
        lines, user, assistant, categories, tools = head
        counts.lines += lines
        counts.user_messages += user
        counts.assistant_messages += assistant
        add_tool_counts(counts.categories, counts.tools, categories, tools)

    def _scan_failed(self, session: Session, path: Path, name: str, error: Exception) -> None:
        if isinstance(error, FileNotFoundError):
            if path == session.path:
                logger.info("%s is gone; forgetting session %s", name, session.name)
                self._forget(session.key)
            else:
                self._cursors.get(session.key, {}).pop(name, None)
                entry = self._entries.get(session.key)
                if entry is not None and isinstance(entry.get("extra"), dict):
                    entry["extra"].pop(name, None)
                self._changed_entries.add(session.key)
            self._by_path.pop(name, None)
            return
        if name not in self._complained:
            self._complained.add(name)
            logger.warning("cannot read %s: %s; will try again", name, describe(error))

    def _forget(self, key: str) -> None:
        self._entries.pop(key, None)
        self._cursors.pop(key, None)
        self._rows.pop(key, None)
        self._changed_entries.discard(key)
        self._removed_entries.add(key)
        self._dirty_state = True

    def _entry(self, key: str) -> dict[str, Any] | None:
        """The cursor-store entry of ``key`` (:func:`sidelight.engine.reads.cursor_entry`): the main
        transcript's cursor, and ``extra`` for subagent files."""
        session = self._sessions.get(key)
        row = self._rows.get(key)
        main = os.fspath(session.path) if session is not None else (row.path if row is not None else "")
        entry = cursor_entry(self._entries.get(key), main, self._cursors.get(key) or {})
        state = None if self.tracker is None else self.tracker.get(key)
        if entry is not None and state is not None and state.cause is not None:
            # The key of the session's last input, saved with the cursors (its lifecycle state is saved
            # less often): a timeout after a restart is keyed as it was before the crash.
            entry["cause"] = state.cause
        return entry

    def _account(
        self,
        session: Session,
        outcomes: list[ScanCounts],
        was_first: bool,
        now: float,
        events: list[SinkEvent],
    ) -> None:
        """Adds what the scans of one session found (``_core.scan_many_counts`` tuples) to its status
        row and its lifecycle; the lifecycle events it means go to ``events``."""
        row = self._rows.get(session.key)
        if row is None:
            row = self._rows[session.key] = row_for(session)
        if row.seen is not session:
            # A new listing of the sessions (a title read, a project renamed): refresh what shows.
            row.name, row.group, row.seen = session.name, session.group, session
        counts = row.counts
        counts.add_scans(outcomes, now)
        tracker = self.tracker
        if tracker is None:
            return
        # A first look at a transcript that went quiet long ago is history: the session ended before
        # the watcher came, and its row shows as much (see _snapshot).
        last_activity = counts.last_activity if was_first else None
        if (
            last_activity is not None
            and judge_session(last_activity, now, tracker.settings.idle_timeout)[0] == "ended"
        ):
            return
        for outcome in outcomes:
            try:
                found = self._ranges.get(id(outcome))
                lines = None if found is None else self._lines(session, outcome, *found)
                table = None if found is None else self._categories.get(found[1])
                events.extend(tracker.observe_counts(session, outcome, counts, lines, table))
            except Exception:
                logger.warning("the lifecycle tracker failed on %s", session.name, exc_info=True)
        if last_activity is not None:
            # Quiet since before the watcher came: its timeouts count from its last line, as `status`
            # without a watcher and `recap` count them, not from when the watcher first read it.
            tracker.backdate(session.key, last_activity)
        if session.key in self._suspended:
            state = tracker.get(session.key)
            if state is not None and state.state not in ("suspended", "ended"):
                events.extend(tracker.suspend(session.key))

    def _lines(
        self, session: Session, outcome: ScanCounts, name: str, decoder: str, start: int
    ) -> list[tuple[str, list[Any]]]:
        """The entries of each line a scan read (from ``start`` to its cursor), with the line's key:
        the session, the transcript (device and inode), the byte offset where the line ends and a
        fingerprint of its first entry. Read again after a crash, a line has the same key, and so
        have the events made of it: the event log drops those it has (at-least-once reading,
        exactly-once logging)."""
        end, dev, inode = outcome[0][0], outcome[0][1], outcome[0][2]
        prefix = f"{self._event_prefix(session.key)}:{dev}-{inode}:"
        lines: list[tuple[str, list[Any]]] = []
        for after, entries in line_entries(name, decoder, start, end):
            first = entries[0]
            mark = zlib.crc32(f"{first[1]}\0{first[4] or first[3]}".encode()) & 0xFFFF
            lines.append((f"{prefix}{after}-{mark:04x}", entries))
        return lines

    def _event_prefix(self, key: str) -> str:
        """What stands for a session in its events' keys: its key, or a hash of one with characters
        the event log's key reader does not take (a quote, a backslash, a control character)."""
        prefix = self._prefixes.get(key)
        if prefix is None:
            if key.isprintable() and '"' not in key and "\\" not in key:
                prefix = key
            else:
                prefix = f"#{zlib.crc32(key.encode('utf-8', 'surrogatepass')):08x}"
            self._prefixes[key] = prefix
        return prefix

    # -- requests ------------------------------------------------------------------------------------

    def _take_requests(self) -> None:
        for name, request in take_requests(self.state_dir):
            self._apply(request, f"r:{name}")

    def _apply(self, request: WatchRequest, key: str | None = None) -> None:
        tracker = self.tracker
        if request.action == "suspend":
            self._suspended.add(request.session)
            if tracker is not None and tracker.get(request.session) is not None:
                self._events(tracker.suspend(request.session, key))
        elif request.action == "resume":
            self._suspended.discard(request.session)
            if tracker is not None and tracker.get(request.session) is not None:
                self._events(tracker.unsuspend(request.session, key))
        else:
            logger.warning("unknown request %r for %s", request.action, request.session)
            return
        logger.info("%s: %s", request.action, request.session)
        self._dirty_state = True

    # -- state ---------------------------------------------------------------------------------------

    def _restore(self) -> None:
        """Cursors from the cursor file; counts, suspensions and lifecycle state from the snapshot."""
        try:
            self._entries = {k: dict(v) for k, v in self.store.read(READER).items()}
            self._entries_whole = True
        except OSError as error:
            logger.warning(
                "cannot read %s (%s); starting from the transcripts' recent tails", self.store.path, error
            )
        snapshot = read_snapshot(self.settings)
        if snapshot is None:
            return
        for data in snapshot.get("sessions") or ():
            try:
                row = Row.from_dict(data)
            except (KeyError, TypeError, ValueError):
                continue
            # Counts are kept only with their cursors: together they count every line once.
            if row.key in self._entries:
                self._rows[row.key] = row
        self._suspended = {str(k) for k in snapshot.get("suspended") or ()}
        offset = snapshot.get("hook_events_offset")
        self._hook_offset = offset if isinstance(offset, int) and offset >= 0 else None
        tracker = self.tracker
        if tracker is not None:
            lifecycle = _read_json(self.lifecycle_path)
            if isinstance(lifecycle, dict):
                try:
                    self.tracker = tracker = type(tracker).restore(
                        lifecycle, tracker.settings, tracker.clock, tracker.emit
                    )
                except Exception:
                    logger.warning("cannot restore the lifecycle state; starting afresh", exc_info=True)
            # One record of the counts: the restored rows' (saved with their cursors, every flush).
            for key, row in self._rows.items():
                state = tracker.get(key)
                if state is not None:
                    state.counts = row.counts
            for key, entry in self._entries.items():
                state = tracker.get(key)
                cause = entry.get("cause")
                if state is not None and isinstance(cause, str):
                    state.cause = cause
            for key in self._suspended:
                state = tracker.get(key)
                if state is not None and state.state not in ("suspended", "ended"):
                    self._events(tracker.suspend(key))

    def _flush(self, *, force: bool = False) -> None:
        """Saves the cursors and the snapshot (and, less often, the lifecycle states).

        Called after the sinks have the events of what was read: saved cursors never stand past an event
        not handed on (nothing is lost in a crash), and what was handed on after the last save is read
        again after a crash and made into the same events, with the same keys, which the event log
        drops (nothing is logged twice). The lifecycle states are saved before the cursors whenever a
        session changed state (started, resumed, idled, ended…) since they were last saved: the state a
        restart finds is never older than its cursors, so reading a line again makes the transitions it
        made the first time, with the same keys."""
        now = time.monotonic()
        if not force and (not self._dirty_state or now - self._last_flush < self.flush_interval):
            return
        tracker = self.tracker
        if tracker is not None and tracker.transitions != self._saved_transitions:
            self._save_lifecycle(tracker, now)
        if self._changed_entries or self._removed_entries:
            changed: dict[str, dict[str, Any]] = {}
            for key in self._changed_entries:
                entry = self._entry(key)
                if entry is not None:
                    changed[key] = entry
            try:
                if self._entries_whole:
                    # The file is the watcher's own, and every entry of it is in memory (_forget took
                    # the removed ones out).
                    self.store.replace(READER, {**self._entries, **changed})
                else:
                    self.store.update(READER, changed, remove=self._removed_entries - changed.keys())
            except (OSError, ValueError) as error:
                logger.warning("could not save the cursors in %s: %s", self.store.path, error)
            else:
                self._entries.update(changed)
                self._changed_entries.clear()
                self._removed_entries.clear()
        try:
            write_json_atomic(self.status_path, self._snapshot())
        except OSError as error:
            logger.warning("could not write %s: %s", self.status_path, error)
        self._dirty_state = False
        self._last_flush = now
        # The lifecycle state (events, context, hot memory of every session) is bigger and only needed
        # for a restart: written less often.
        if tracker is not None and (force or now - self._last_lifecycle_flush >= LIFECYCLE_FLUSH):
            self._save_lifecycle(tracker, now)

    def _save_lifecycle(self, tracker: SessionTracker, now: float) -> None:
        transitions = tracker.transitions
        try:
            write_json_atomic(self.lifecycle_path, tracker.snapshot())
        except (OSError, ValueError) as error:
            logger.warning("could not write %s: %s", self.lifecycle_path, error)
        else:
            self._saved_transitions = transitions
        self._last_lifecycle_flush = now

    def _snapshot(self) -> dict[str, Any]:
        states = _tracker_states(self.tracker)
        idle_timeout = self.idle_timeout
        now = self.clock()
        sessions = []
        for key, row in self._rows.items():
            record = status_row(row)
            state = states.get(key)
            if state is not None:
                record.update(state)
            else:
                # Not followed by the tracker (no tracker, or quiet since before the watcher came).
                record["state"] = derive_state(
                    row.counts.last_activity, now, idle_timeout, suspended=key in self._suspended
                )
                record["hot_memory"] = 0
            sessions.append(record)
        return {
            "version": SNAPSHOT_VERSION,
            "pid": os.getpid(),
            "started": self._started_at,
            "updated": self.clock(),
            "state_dir": os.fspath(self.state_dir),
            "scans": self._scans,
            "suspended": sorted(self._suspended),
            "hook_events_offset": self._hook_offset,
            "idle_timeout": idle_timeout,
            **({} if self._server is None else {"hooks": self._server.stats()}),
            "sessions": sessions,
        }

    @property
    def idle_timeout(self) -> float:
        return self.tracker.settings.idle_timeout if self.tracker is not None else WatchOptions().idle_timeout


def _tracker_states(tracker: SessionTracker | None) -> dict[str, dict[str, Any]]:
    """Per session key: ``state``, ``hot_memory`` (a count) and, when given, ``last_activity``."""
    if tracker is None:
        return {}
    try:
        found = tracker.states()
    except Exception:
        logger.warning("cannot read the lifecycle states", exc_info=True)
        return {}
    out: dict[str, dict[str, Any]] = {}
    for key, state in found.items():
        out[key] = {
            "state": state.state,
            "hot_memory": len(state.hot_memory),
            "current_task": state.current_task,
            "lives": state.lives,
        }
    return out


#: How long the watcher keeps a session's name (its transcript's title) before reading it again.
TITLE_REFRESH = 60.0


def _same_place(known: Session, found: Session) -> bool:
    """Whether a listing's ``found`` is the ``known`` session unchanged, the name aside (comparing names
    would read titles)."""
    return (
        known.path == found.path
        and known.extra_paths == found.extra_paths
        and known.format == found.format
        and known.group == found.group
        and known.resolver == found.resolver
        and known.id == found.id
        and known.cursor_file == found.cursor_file
        and type(known) is type(found)
    )


#: Seconds after a resolver's sources changed when the watcher follows them once more (see
#: Watcher._follow_sources): well past the coarse clock's tick that file times move by.
SOURCE_SETTLE: Final = 0.05


def _source_stat(path: str) -> tuple[int, int, int, int] | None:
    try:
        found = os.stat(path)  # noqa: PTH116
    except OSError:
        return None
    return (found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns)


#: Past this many transcripts written to within ``2 * idle_timeout``, the watcher finds appends with a
#: stat pass rather than file events (``Watcher(modify_events=None)``). watchdog costs about 30-40 µs of
#: Python per write; the stat pass about 4 µs per live transcript per period: with many live sessions,
#: one write a second each is enough for the stat pass to cost less.
AUTO_STAT_APPENDS: Final = 100
