"""Cross-session awareness: what the other sessions did since this one last looked.

The hot path of every prompt (DESIGN §2): identify the current session, list its siblings through the
resolver plugins, read each sibling's cursor, scan every new byte in one parallel native call, summarize
each sibling in one line, assemble the digest, and commit the new cursors. No LLM, and a time budget:
a hook gives up rather than hold up the prompt.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from sidelight import _core
from sidelight.config import Settings
from sidelight.cursors import CursorStore
from sidelight.digest import DigestLine, render_digest
from sidelight.errors import InvalidCursorError
from sidelight.formats import DEFAULT_CATEGORIES, DEFAULT_MAX_LINE_BYTES, DEFAULT_TEXT_LIMIT
from sidelight.plugins import Plugins, get_plugins
from sidelight.sessions import HostEvent, ResolverSpec, Session, SessionActivity, SummarizerSpec
from sidelight.timestamps import epoch_seconds
from sidelight.types import Activity, Cursor

if TYPE_CHECKING:
    from pathlib import Path

__all__ = [
    "TranscriptRead",
    "category_tables",
    "current_session",
    "cursor_file",
    "decoder_of",
    "first_look",
    "get_session_updates",
    "handle_hook",
    "list_sessions",
    "saved_cursor",
    "scan_reads",
    "siblings_of",
]

logger = logging.getLogger(__name__)

#: The file, in the state directory, where session start and end events are recorded.
EVENTS_FILE = "events.jsonl"
#: The hook's log file, in the state directory.
LOG_FILE = "sidelight.log"
#: The plain agent templates; a more specific resolver (volute) that claims the same transcript wins.
GENERIC_RESOLVERS = frozenset({"claude-code", "pi", "codex"})


def list_sessions(settings: Settings, plugins: Plugins) -> list[Session]:
    """Every session every resolver knows, once per transcript: where two resolvers claim one file
    (a volute session is also a plain Claude Code session), the first resolver that is not a plain
    agent template wins, so the session keeps its volute name. Resolvers give resolved paths, so
    paths are compared as they are (resolving a thousand paths per prompt costs more than the scan)."""
    by_path: dict[Path, Session] = {}
    for resolver in plugins.resolvers().values():
        try:
            found = list(resolver.list_sessions(settings))
        except Exception:
            logger.warning("resolver %s failed; its sessions are left out", resolver.name, exc_info=True)
            continue
        for session in found:
            known = by_path.get(session.path)
            if known is None or (
                known.resolver in GENERIC_RESOLVERS and session.resolver not in GENERIC_RESOLVERS
            ):
                by_path[session.path] = session
    return list(by_path.values())


def current_session(event: HostEvent, settings: Settings, plugins: Plugins) -> Session | None:
    """The session a hook event comes from, as the resolvers see it (specific resolvers first).

    One hook asks this several times for one event (the digest, the welcome back, the handoff): the
    answer for the last event object is kept, since finding it can mean listing a big project folder."""
    global _last_current
    last = _last_current
    if last is not None and last[0] is event and last[1] is settings and last[2] is plugins:
        return last[3]
    found = _find_current(event, settings, plugins)
    _last_current = (event, settings, plugins, found)
    return found


_last_current: tuple[HostEvent, Settings, Plugins, Session | None] | None = None


def _find_current(event: HostEvent, settings: Settings, plugins: Plugins) -> Session | None:
    resolvers = sorted(plugins.resolvers().values(), key=lambda r: r.name in GENERIC_RESOLVERS)
    for resolver in resolvers:
        try:
            found = resolver.current(event, settings)
        except Exception:
            logger.warning("resolver %s failed to identify the session", resolver.name, exc_info=True)
            continue
        if found is not None:
            return found
    return None


def cursor_file(session: Session, settings: Settings) -> Path:
    """Where ``session`` keeps its cursors into its siblings: one file per reading session, so that a
    prompt parses only its own cursors however many sessions a host runs (the volute template keeps
    its shared ``.volute/session-cursors.json``)."""
    if session.cursor_file is not None:
        return session.cursor_file
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in session.key)
    return settings.state_dir / "cursors" / f"{safe}.json"


def siblings_of(current: Session, sessions: Iterable[Session], scope: str | frozenset[str]) -> list[Session]:
    """The sessions ``current`` reports on: by default the others of its group."""
    out = []
    for session in sessions:
        if session.key == current.key or session.path == current.path:
            continue
        if scope == "all":
            out.append(session)
        elif scope == "project":
            if session.group == current.group:
                out.append(session)
        elif session.name in scope or session.key in scope:
            out.append(session)
    return out


@dataclass(slots=True)
class TranscriptRead:
    """One transcript of one session to scan: from ``cursor`` (``None``: from the start)."""

    session: Session
    path: Path
    cursor: Cursor | None
    first_look: bool


def get_session_updates(
    current_session: str | Session | HostEvent,
    *,
    settings: Settings | None = None,
    plugins: Plugins | None = None,
    now: float | None = None,
    commit: bool = True,
) -> str | None:
    """The digest of what the current session's siblings did since it last looked, or ``None``.

    ``current_session`` is a :class:`HostEvent` from a hook, a :class:`Session`, or a session's key,
    id, name or transcript path. Reading advances this session's cursors (``commit=False``: a dry run).
    """
    settings = settings or Settings.load()
    plugins = plugins or get_plugins()
    sessions = list_sessions(settings, plugins)
    current = _identify(current_session, sessions, settings, plugins)
    if current is None:
        logger.warning("cannot tell which session this is (%s); nothing injected", _describe(current_session))
        return None
    siblings = siblings_of(current, sessions, settings.scope)
    # Resolvers of siblings with no transcript here (a fleet's other machines, docs/fleet.md).
    remote = [r for r in plugins.resolvers().values() if r.remote_activity is not None]
    if not siblings and not remote:
        return None
    store = CursorStore(cursor_file(current, settings))
    saved = store.read(current.key)
    reads = _plan(siblings, saved, settings)
    deadline = time.monotonic() + settings.time_budget
    results = _scan(reads, plugins, deadline)
    if results is None:
        logger.warning(
            "gave up after %.1fs scanning %d transcripts; the next prompt picks the news up",
            settings.time_budget,
            len(reads),
        )
        return None
    # A transcript that was truncated, replaced or rewritten is read again like a first look.
    again = [i for i, r in enumerate(results) if isinstance(r, Activity) and r.reset is not None]
    if again:
        redo = [first_look(reads[i].session, reads[i].path, settings) for i in again]
        redone = _scan(redo, plugins, deadline)
        if redone is None:
            return None
        for i, read, result in zip(again, redo, redone, strict=True):
            reads[i], results[i] = read, result
    now = time.time() if now is None else now
    lines = _summaries(reads, results, plugins, now)
    if commit:
        _commit(store, current, reads, results, saved)
    lines.extend(_remote_lines(current, remote, settings, plugins, deadline, now, commit))
    return render_digest(lines)


def _remote_lines(
    current: Session,
    resolvers: Sequence[ResolverSpec],
    settings: Settings,
    plugins: Plugins,
    deadline: float,
    now: float,
    commit: bool,
) -> list[DigestLine]:
    """The digest lines of the siblings the resolvers' ``remote_activity`` reports, within the time
    left; a resolver that fails is logged and left out (the local lines go out all the same)."""
    lines: list[DigestLine] = []
    summarizers = list(plugins.summarizers().values())
    for resolver in resolvers:
        if resolver.remote_activity is None:
            continue
        try:
            found = list(resolver.remote_activity(current, settings, deadline, commit))
        except Exception:
            logger.warning("resolver %s failed to report remote siblings", resolver.name, exc_info=True)
            continue
        for activity in found:
            if activity.is_empty:
                continue
            moment = epoch_seconds(activity.last_timestamp)
            activity = replace(activity, age_seconds=None if moment is None else max(0.0, now - moment))
            line = _line(activity, summarizers)
            if line is not None:
                lines.append(line)
    return lines


def _identify(
    spec: str | Session | HostEvent, sessions: Sequence[Session], settings: Settings, plugins: Plugins
) -> Session | None:
    if isinstance(spec, Session):
        return spec
    if isinstance(spec, HostEvent):
        # The listing already holds the session of a known transcript, with the most specific
        # resolver's name; the resolvers are asked only for a session whose file is not listed (new).
        if spec.transcript_path is not None:
            wanted = str(spec.transcript_path)
            for session in sessions:
                if str(session.path) == wanted:
                    return session
        return current_session(spec, settings, plugins)
    for session in sessions:
        if spec in (session.key, session.id, session.name) or spec == str(session.path):
            return session
    return None


def _describe(spec: object) -> str:
    if isinstance(spec, HostEvent):
        return f"host {spec.host}, session_id {spec.session_id}, transcript {spec.transcript_path}"
    return repr(spec)


def _plan(
    siblings: Sequence[Session], saved: Mapping[str, Mapping[str, Any]], settings: Settings
) -> list[TranscriptRead]:
    reads: list[TranscriptRead] = []
    for sibling in siblings:
        entry = saved.get(sibling.key)
        paths = (sibling.path, *sibling.extra_paths)
        if entry is None:
            reads.extend(first_look(sibling, path, settings) for path in paths if path.exists())
            continue
        found_extra = entry.get("extra")
        extra: Mapping[str, Any] = found_extra if isinstance(found_extra, Mapping) else {}
        for path in paths:
            data = entry if path == sibling.path else extra.get(str(path))
            if data is not None and _unchanged(path, data):
                continue
            cursor = saved_cursor(path, data) if data is not None else None
            if cursor is None and not path.exists():
                continue
            reads.append(TranscriptRead(sibling, path, cursor, first_look=False))
    return reads


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
    try:
        start = _core.tail_offset(str(path), settings.first_look_bytes)
        cursor: Cursor | None = Cursor.from_tuple(_core.file_cursor(str(path), start))
    except OSError:
        cursor = None
    return TranscriptRead(session, path, cursor, first_look=True)


def category_tables(plugins: Plugins) -> dict[str, dict[str, str]]:
    """The tool-category tables per native decoder for ``_core.scan_many``: the built-in defaults with
    the format plugins' own names over them."""
    tables: dict[str, dict[str, str]] = {name: dict(table) for name, table in DEFAULT_CATEGORIES.items()}
    for decoder, table in plugins.categories().items():
        tables.setdefault(decoder, {}).update(table)
    return tables


def decoder_of(session: Session, plugins: Plugins) -> str:
    """The native decoder that reads ``session``'s transcripts (its format's, else the format's name)."""
    formats = plugins.formats()
    return formats[session.format].decoder if session.format in formats else session.format


def _scan_requests(
    reads: Sequence[TranscriptRead], plugins: Plugins
) -> tuple[list[tuple[str, str, Any]], dict[str, dict[str, str]]]:
    """The ``_core.scan_many`` requests for ``reads`` and the tool-category tables per decoder."""
    decoders = [decoder_of(r.session, plugins) for r in reads]
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


def _scan(
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


def _summaries(
    reads: Sequence[TranscriptRead], results: Sequence[Activity | Exception], plugins: Plugins, now: float
) -> list[DigestLine]:
    by_session: dict[str, tuple[Session, list[Activity], bool]] = {}
    for read, result in zip(reads, results, strict=True):
        if isinstance(result, Exception):
            logger.info("skipped %s: %s", read.path, result)
            continue
        session, activities, first = by_session.setdefault(read.session.key, (read.session, [], False))
        activities.append(result)
        by_session[read.session.key] = (session, activities, first or read.first_look)
    summarizers = list(plugins.summarizers().values())
    lines = []
    for session, activities, first_look in by_session.values():
        activity = SessionActivity.merge(session, activities, first_look=first_look, now=now)
        if activity.is_empty:
            continue
        line = _line(activity, summarizers)
        if line is not None:
            lines.append(line)
    return lines


def _line(activity: SessionActivity, summarizers: Sequence[SummarizerSpec]) -> DigestLine | None:
    """The first summarizer's line for ``activity`` (``None``: none had anything to say)."""
    for summarizer in summarizers:
        try:
            text = summarizer.summarize(activity)
        except Exception:
            logger.warning("summarizer %s failed", summarizer.name, exc_info=True)
            continue
        if text:
            return DigestLine(
                text=text, last_timestamp=activity.last_timestamp, age_seconds=activity.age_seconds
            )
    return None


def _commit(
    store: CursorStore,
    current: Session,
    reads: Sequence[TranscriptRead],
    results: Sequence[Activity | Exception],
    saved: Mapping[str, Mapping[str, Any]],
) -> None:
    entries: dict[str, dict[str, Any]] = {}
    for read, result in zip(reads, results, strict=True):
        if isinstance(result, Exception):
            continue
        entry = entries.setdefault(read.session.key, _copy_entry(saved.get(read.session.key)))
        cursor = result.cursor.as_dict()
        if read.path == read.session.path:
            extra = entry.get("extra")
            entry.clear()
            entry.update(cursor)
            if extra:
                entry["extra"] = extra
        else:
            entry.setdefault("extra", {})[str(read.path)] = cursor
    # An entry needs its main transcript's cursor (a subagent file read while the main one failed
    # waits for the next prompt rather than be stored without an offset).
    complete = {key: entry for key, entry in entries.items() if "offset" in entry}
    if not complete:
        return
    try:
        store.update(current.key, complete)
    except (OSError, ValueError):
        # The digest still goes out; the next prompt may repeat part of it.
        logger.warning("could not save the cursors in %s", store.path, exc_info=True)


def _copy_entry(entry: Mapping[str, Any] | None) -> dict[str, Any]:
    if not entry:
        return {}
    copied = dict(entry)
    if isinstance(copied.get("extra"), Mapping):
        copied["extra"] = dict(copied["extra"])
    return copied


def handle_hook(
    host: str,
    payload: bytes | str | Mapping[str, Any],
    *,
    settings: Settings | None = None,
    plugins: Plugins | None = None,
) -> str | None:
    """What a host's hook must print for this input (``None``: nothing). Never raises: whatever goes
    wrong is logged to ``<state dir>/sidelight.log`` and the hook stays silent."""
    try:
        settings = settings or Settings.load()
    except Exception:
        logger.exception("cannot load the settings")
        return None
    handler = _log_to_file(settings)
    try:
        plugins = plugins or get_plugins()
        data = payload if isinstance(payload, Mapping) else json.loads(payload or "{}")
        if not isinstance(data, Mapping):
            logger.warning("%s hook input is not a JSON object; nothing injected", host)
            return None
        injector = plugins.injectors().get(host)
        if injector is None:
            logger.warning("no injector for host %r (known: %s)", host, ", ".join(plugins.injectors()))
            return None
        event = injector.read_event(data)
        if event is None:
            logger.warning("%s hook input not understood; nothing injected", host)
            return None
        if event.event == "SessionEnd":
            _record(settings, event)
            return None
        from sidelight.facts import with_long_term  # the [Long-term context] block, where it is due

        if event.event == "SessionStart":
            _record(settings, event)
            text = _on_start(event, settings, plugins)
            return injector.render(event, with_long_term(event, settings, plugins, text))
        text = get_session_updates(event, settings=settings, plugins=plugins)
        welcome = _welcome_back(event, settings, plugins)
        if welcome is not None:
            text = welcome if text is None else f"{welcome}\n\n{text}"
        return injector.render(event, with_long_term(event, settings, plugins, text))
    except Exception:
        logger.exception("%s hook failed; nothing injected", host)
        return None
    finally:
        if handler is not None:
            logging.getLogger("sidelight").removeHandler(handler)
            with contextlib.suppress(OSError):  # a full disk: the digest still goes out
                handler.close()


def _on_start(event: HostEvent, settings: Settings, plugins: Plugins) -> str | None:
    """At a session's start: a resumed session's welcome back where the host can take it (Claude
    Code and Codex: ``source: resume``; Pi cannot inject at start, so its next prompt gets it), and the
    ``[SESSION CONTEXT]`` block after a compaction or a clear."""
    from sidelight import resume
    from sidelight.templates import handoff

    # A new session gets the previous session's recap (issue 5); Pi gets it with its first prompt.
    recap = handoff.at_session_start(event, settings, plugins)
    if recap is not None:
        return recap
    session = current_session(event, settings, plugins)
    if session is None or not session.path.exists():
        return None
    if event.raw.get("source") == "resume":
        text = resume.resume_text(session, settings, plugins)
        if text is not None:
            logger.info("resume context for %s at its start: %s", session.name, text.split("\n", 1)[0])
        return text
    if event.raw.get("source") in ("compact", "clear"):
        # The conversation was just compacted or cleared: the session's own state, as its
        # transcript shows it, is what it lost.
        return resume.context_text(session, settings, plugins)
    if event.host == "pi":
        state = resume.recent_state(session, settings, plugins)
        if state is not None and time.time() - state.last_activity >= settings.idle_timeout:
            resume.set_pending(session, settings)
    return None


def _welcome_back(event: HostEvent, settings: Settings, plugins: Plugins) -> str | None:
    """The resume context for the first prompt after ``idle_timeout`` without one (or after a Pi
    session came back), else ``None``."""
    from sidelight import resume
    from sidelight.templates import handoff

    recap = handoff.pending_for_prompt(event, settings, plugins)  # Pi: the recap kept at its start
    if recap is not None:
        return recap
    session = current_session(event, settings, plugins)
    if session is None:
        return None
    now = time.time()
    previous = resume.mark_prompt(session, settings, now)
    pending = resume.take_pending(session, settings)
    if pending or (previous is not None and now - previous >= settings.idle_timeout):
        text = resume.resume_text(session, settings, plugins, now)
        if text is not None:
            logger.info("resume context for %s with its prompt: %s", session.name, text.split("\n", 1)[0])
        return text
    return None


def _record(settings: Settings, event: HostEvent) -> None:
    """Appends a session start or end to the events file, for the watcher and `sidelight status`."""
    line = {
        "time": time.time(),
        "host": event.host,
        "event": event.event,
        "session_id": event.session_id,
        "transcript_path": None if event.transcript_path is None else str(event.transcript_path),
        "cwd": None if event.cwd is None else str(event.cwd),
        "source": event.raw.get("source"),
    }
    settings.state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(settings.state_dir / EVENTS_FILE, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    with os.fdopen(fd, "a", encoding="utf-8") as file:
        file.write(json.dumps(line) + "\n")


class _HookLogHandler(logging.FileHandler):
    """The hook's log file. A record that cannot be written (a full disk) is dropped quietly: logging's
    default prints a traceback on the host's stderr."""

    def handleError(self, record: logging.LogRecord) -> None:
        pass


def _log_to_file(settings: Settings) -> logging.Handler | None:
    """Hook diagnostics go to a log file: a hook's stderr is not a place anyone reads."""
    try:
        settings.state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        path = settings.state_dir / LOG_FILE
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        os.close(fd)
        handler = _HookLogHandler(path, encoding="utf-8")
    except OSError:
        return None
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger("sidelight")
    root.addHandler(handler)
    if root.level == logging.NOTSET or root.level > logging.INFO:
        root.setLevel(logging.INFO)
    return handler
