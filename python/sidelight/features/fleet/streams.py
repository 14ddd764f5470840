"""Fleets: sessions on many machines see each other through Redis Streams (``docs/fleet.md``).

sidelight has no network layer of its own. Each machine of a fleet runs ``sidelight watch`` with
``redis_url`` set; the watcher publishes what its sessions do to the stream ``sidelight:<fleet scope>``,
and every prompt hook reads its siblings of the other machines back from that stream, beside the local
ones, with the same cursor model as on disk:

* **Publishing** (:class:`Publisher`, run by the built-in sink ``redis-streams`` for as long as the
  watcher runs). The sink only notes which sessions have news and returns; the publisher's thread scans
  them from *its own* cursors (reader ``redis:<host id>`` in ``<state dir>/fleet/cursors.json``) and
  ``XADD``s one summarized, redacted record per session and byte range (``MAXLEN ~`` bounds the stream).
  A cursor moves only after its ``XADD`` succeeded: while Redis is down the publisher retries with a
  growing pause, and the next attempt covers everything since the last success, so nothing is lost and
  a watcher that stops meanwhile resumes the job when it starts again. Delivery is at least once: each
  record carries an id made of the host, the session and the range's end, and readers skip ids they have
  seen.
* **Reading** (:func:`remote_activity`, the built-in resolver's ``remote_activity``). Each reader session
  keeps the last stream id it has reported (and the record ids seen lately) in its own cursor file,
  ``XREAD``s from there within the hook's time budget (connect and read timeouts of 150 ms), skips this
  machine's records, and merges the rest per remote session into a :class:`SessionActivity`: a remote
  sibling reads like a local one, ``- discord@host-b (2m ago, 3 messages): ...``. When Redis is down or
  slow the hook logs why and goes on with local siblings only.

A record never holds transcript text as it is: counts, tool and category counts, files touched, the
first prompt and the last reply of the range (sanitized and redacted, at most :data:`TEXT_LIMIT`
characters), timestamps, and who wrote it.

The ``redis`` client (``pip install 'sidelight[redis]'``) is imported only when a fleet is configured:
``import sidelight`` never imports it.
"""

from __future__ import annotations

import threading
import time
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlsplit, urlunsplit

import orjson

from sidelight._fast.logs import get_logger
from sidelight._fast.resp import TOO_LARGE, ReplyTooLargeError, RespClient
from sidelight.config import ConfigError, parse_duration
from sidelight.cursors import CursorStore
from sidelight.features.digest import is_digest_text
from sidelight.records import Session, SessionActivity
from sidelight.redact import sanitize
from sidelight.statelayout import FLEET_CURSORS_FILE
from sidelight.timestamps import epoch_seconds

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from sidelight.config import Settings
    from sidelight.engine.reads import TranscriptRead
    from sidelight.plugins import Plugins
    from sidelight.types import Activity, CursorTuple

__all__ = [
    "RECORD_VERSION",
    "STREAM_PREFIX",
    "FleetConfig",
    "FleetUnavailableError",
    "Publisher",
    "RemoteSession",
    "connect",
    "default_host_id",
    "list_remote",
    "record_id",
    "remote_activity",
    "safe_url",
]

logger = get_logger(__name__)

#: The stream of a fleet scope is ``sidelight:<scope>``.
STREAM_PREFIX: Final = "sidelight:"
#: The shape of a record; readers skip records of another version.
RECORD_VERSION: Final = 1
#: The stream is trimmed to about this many records (``MAXLEN ~``): at a few hundred bytes each, 100,000
#: records are some tens of MB.
DEFAULT_MAXLEN: Final = 100_000
#: A hook's deadline for one request to Redis (connecting, the command and its whole reply): Redis that
#: is down, slow or hostile costs a prompt at most this, per request.
HOOK_TIMEOUT: Final = 0.15
#: ``[fleet] timeout`` may be set between these (seconds).
TIMEOUT_RANGE: Final = (0.01, 10.0)
#: The publisher's connect and read timeout (it runs in the background).
PUBLISH_TIMEOUT: Final = 2.0
#: A reader's first look at a stream reports at most this many of the latest records, of at most this age.
FIRST_LOOK_RECORDS: Final = 200
FIRST_LOOK_SECONDS: Final = 3600.0
#: Records per ``XREAD`` while a reader catches up, and at most this many per prompt (the rest: next time).
READ_BATCH: Final = 1000
CATCH_UP_LIMIT: Final = 100_000
#: How many record ids a reader remembers to recognise duplicates.
SEEN_IDS: Final = 1024
#: Text in a record (first prompt, last reply, a file, a name) is cut to this many characters.
TEXT_LIMIT: Final = 200
NAME_LIMIT: Final = 80
#: At most this many files touched per record.
FILES_LIMIT: Final = 20
#: At most this many tool names per record (the rest are counted under ``other tools``), each cut to
#: :data:`NAME_LIMIT` characters.
TOOLS_LIMIT: Final = 64
#: A record is at most this many bytes of JSON: a larger one is trimmed (files, then texts) or, when
#: that is not enough, not published (logged). A reader skips a stream entry larger than this unread.
RECORD_BYTES: Final = 16 * 1024
#: Sessions scanned and published per round trip.
PUBLISH_BATCH: Final = 512
#: The publisher's pause after a failure doubles from the first to the last.
BACKOFF: Final = (0.1, 5.0)
#: After a round that published something, the publisher waits this long before the next.
PUBLISH_INTERVAL: Final = 0.2
#: How often the publisher looks for news in the sessions it published before (what no event announced).
RESCAN_INTERVAL: Final = 30.0
#: The resolver's name, and the ``resolver`` of remote sessions.
RESOLVER: Final = "redis-streams"


class FleetUnavailableError(ConnectionError):
    """Redis cannot be reached, or answered with an error (the message says which server, without its
    password)."""


def default_host_id() -> str:
    """This machine's short host name (``host-b`` for ``host-b.example.com``)."""
    import socket

    return socket.gethostname().split(".", 1)[0] or "localhost"


def safe_url(url: str) -> str:
    """``url`` with its password replaced by ``***``, for logs and messages."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<invalid URL>"
    if parts.password is None:
        return url
    user = parts.username or ""
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, f"{user}:***@{host}", parts.path, parts.query, parts.fragment))


@dataclass(frozen=True, slots=True)
class FleetConfig:
    """A fleet as the settings describe it; :meth:`of` gives ``None`` when none is configured.

    ``url``: the Redis server (``redis://[[user]:password@]host[:port][/db]``, ``rediss://`` for TLS, or
    ``unix://``); ``host_id``: this machine's name; ``scope``: the fleet (stream ``sidelight:<scope>``);
    ``maxlen``: the stream's approximate bound; ``timeout``: a hook's deadline for one request to Redis
    (connecting, the command and its whole reply).
    """

    url: str
    host_id: str
    scope: str = "default"
    maxlen: int = DEFAULT_MAXLEN
    timeout: float = HOOK_TIMEOUT

    @property
    def stream(self) -> str:
        return STREAM_PREFIX + self.scope

    @classmethod
    def of(cls, settings: Settings) -> FleetConfig | None:
        """The fleet of ``settings`` (``redis_url``, ``host_id``, ``fleet_scope``, and the config file's
        ``[fleet]`` table: ``maxlen``, ``timeout``), or ``None`` without a ``redis_url``. Raises
        :class:`~sidelight.config.ConfigError` on a value it cannot use."""
        url = settings.redis_url
        if not url:
            return None
        if urlsplit(url).scheme not in ("redis", "rediss", "unix"):
            raise ConfigError(
                f"redis_url must start with redis://, rediss:// or unix://, not {safe_url(url)}"
            )
        table = settings.extra.get("fleet")
        options: Mapping[str, Any] = table if isinstance(table, Mapping) else {}
        try:
            maxlen = int(options.get("maxlen", DEFAULT_MAXLEN))
        except (TypeError, ValueError):
            raise ConfigError(
                f"[fleet] maxlen must be a number of records, not {options['maxlen']!r}"
            ) from None
        if maxlen < 1:
            raise ConfigError(f"[fleet] maxlen must be at least 1, not {maxlen}")
        timeout = parse_duration(
            options.get("timeout", HOOK_TIMEOUT),
            "[fleet] timeout",
            minimum=TIMEOUT_RANGE[0],
            maximum=TIMEOUT_RANGE[1],
        )
        host = (settings.host_id or default_host_id()).strip()
        scope = settings.fleet_scope.strip()
        if not scope or any(c.isspace() for c in scope):
            raise ConfigError(f"fleet_scope must be one word, not {settings.fleet_scope!r}")
        return cls(url=url, host_id=host, scope=scope, maxlen=maxlen, timeout=timeout)


def connect(url: str, timeout: float) -> Any:
    """A ``redis.Redis`` client for ``url`` with ``timeout`` seconds to connect and per reply, and no
    retries of its own (a hook has no time for them; the publisher retries itself). Connects lazily."""
    try:
        import redis
        from redis.backoff import NoBackoff
        from redis.retry import Retry
    except ImportError:
        raise FleetUnavailableError(
            "the redis client is not installed: pip install 'sidelight[redis]'"
        ) from None
    return redis.Redis.from_url(
        url,
        socket_connect_timeout=timeout,
        socket_timeout=timeout,
        retry=Retry(NoBackoff(), 0),
        health_check_interval=0,
    )


def _transient() -> tuple[type[BaseException], ...]:
    """The errors that mean "Redis is not there right now" (the client's own, and the socket's)."""
    try:
        from redis.exceptions import RedisError
    except ImportError:
        return (FleetUnavailableError, OSError)
    return (RedisError, FleetUnavailableError, OSError)


# -- records -------------------------------------------------------------------------------------------


def record_id(host: str, key: str, ends: Sequence[tuple[str, int, int]]) -> str:
    """The id of the record of ``key``'s range that ends at ``ends`` (``(path, inode, end offset)`` per
    transcript, the main one first): ``host/key/inode:end``, and a checksum of the further transcripts'
    ends when there are some. A range published twice (a retry) has the same id."""
    _path, inode, end = ends[0]
    rid = f"{host}/{key}/{inode}:{end}"
    if len(ends) > 1:
        rest = "|".join(f"{p}:{i}:{e}" for p, i, e in sorted(ends[1:]))
        rid += f"/{zlib.crc32(rest.encode()):08x}"
    return rid


def _clean(text: str | None, limit: int = TEXT_LIMIT) -> str | None:
    """Transcript text as it may leave the machine: one sanitized, redacted line; never a digest."""
    if not text or is_digest_text(text):
        return None
    return sanitize(text, limit) or None


def build_record(
    host: str,
    activity: SessionActivity,
    ranges: Sequence[tuple[str, int, int, int]],
    published_at: float,
) -> dict[str, Any] | None:
    """The record of one session's activity over ``ranges`` (``(path, inode, start, end)`` per transcript
    read, the main one first): JSON-ready, summarized, redacted and at most :data:`RECORD_BYTES` of
    JSON; ``None`` (logged) when even trimmed it would be larger. One machine's record is read by every
    prompt hook of the fleet: it must never cost them more than a small one."""
    session = activity.session
    main = ranges[0]
    files = [f for f in (_clean(p) for p in activity.files_touched[-FILES_LIMIT:]) if f]
    tools: dict[str, int] = {}
    for name, n in activity.tools.items():
        if n:
            short = sanitize(name, NAME_LIMIT) or "tool"
            if len(tools) >= TOOLS_LIMIT and short not in tools:
                short = "other tools"
            tools[short] = tools.get(short, 0) + n
    record = {
        "v": RECORD_VERSION,
        "id": record_id(host, session.key, [(p, i, e) for p, i, _s, e in ranges]),
        "host": host,
        "session": {
            "key": session.key,
            "name": sanitize(session.name, NAME_LIMIT) or session.key,
            "group": session.group,
            "format": session.format,
            "id": session.id,
        },
        "start": main[2],
        "end": main[3],
        "transcripts": len(ranges),
        "first_look": activity.first_look,
        "user_messages": activity.user_messages,
        "assistant_messages": activity.assistant_messages,
        "tools": tools,
        "categories": {name: n for name, n in activity.categories.items() if n},
        "files_touched": files,
        "first_user_text": _clean(activity.first_user_text),
        "last_assistant_text": _clean(activity.last_assistant_text),
        "first_timestamp": activity.first_timestamp,
        "last_timestamp": activity.last_timestamp,
        "published_at": published_at,
    }
    # Trimmed in the order that loses least: the files, then the texts.
    for trim in ("files_touched", "first_user_text", "last_assistant_text"):
        if len(orjson.dumps(record)) <= RECORD_BYTES:
            return record
        record[trim] = [] if trim == "files_touched" else None
    size = len(orjson.dumps(record))
    if size <= RECORD_BYTES:
        return record
    logger.warning(
        "fleet: not publishing a record of %s: %d bytes, more than %d even trimmed",
        sanitize(session.key, 120),
        size,
        RECORD_BYTES,
    )
    return None


def _fields(record: Mapping[str, Any]) -> dict[str, bytes]:
    """A record as stream entry fields: the version, id and host on their own (readers filter on them
    without parsing), the rest as JSON."""
    return {
        "v": str(record["v"]).encode(),
        "id": str(record["id"]).encode(),
        "host": str(record["host"]).encode(),
        "data": orjson.dumps(record),
    }


# -- publishing ----------------------------------------------------------------------------------------


def _session_info(session: Session) -> dict[str, Any]:
    """What the publisher keeps of a session beside its cursor, to find its news after a restart."""
    return {
        "key": session.key,
        "name": session.name,
        "path": str(session.path),
        "format": session.format,
        "group": session.group,
        "resolver": session.resolver,
        "id": session.id,
        "extra_paths": [str(p) for p in session.extra_paths],
    }


def _session_from(info: Any) -> Session | None:
    if not isinstance(info, Mapping):
        return None
    try:
        return Session(
            key=str(info["key"]),
            name=str(info["name"]),
            path=Path(str(info["path"])),
            format=str(info["format"]),
            group=str(info["group"]),
            resolver=str(info["resolver"]),
            id=None if info.get("id") is None else str(info["id"]),
            extra_paths=tuple(Path(str(p)) for p in info.get("extra_paths") or ()),
        )
    except (KeyError, TypeError):
        return None


class Publisher:
    """Publishes the activity of this machine's sessions to the fleet's stream; see the module docs.

    :meth:`note` (from the watcher's sink) marks sessions that have news and returns at once; the
    publisher's thread (:meth:`start`, :meth:`stop`) does the rest. :meth:`publish_pending` is one round
    in the calling thread (tests and benchmarks): it raises when Redis fails, with the cursors unmoved.
    """

    def __init__(
        self,
        settings: Settings,
        plugins: Plugins,
        config: FleetConfig | None = None,
        *,
        timeout: float = PUBLISH_TIMEOUT,
        clock: Any = time.time,
    ) -> None:
        found = config or FleetConfig.of(settings)
        if found is None:
            raise ConfigError("no fleet is configured: set SIDELIGHT_REDIS_URL or redis_url")
        self.config: FleetConfig = found
        self.settings = settings
        self.plugins = plugins
        self.timeout = timeout
        self.clock = clock
        self.store = CursorStore(
            settings.state_dir / FLEET_CURSORS_FILE
        )  # under the reader name ``redis:<host id>``
        #: The publisher's reader name in its cursor file.
        self.reader = f"redis:{found.host_id}"
        #: Records published (accepted by Redis) so far, and publish rounds that failed.
        self.published = 0
        self.failures = 0
        #: When the current outage began (``time.monotonic()``), ``None`` while Redis answers.
        self.down_since: float | None = None
        self._pending: dict[str, Session] = {}
        self._lock = threading.Lock()  # guards _pending
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._idle = threading.Condition(self._lock)
        self._busy = False
        self._thread: threading.Thread | None = None
        self._client: Any = None

    # -- the sink's side: no I/O -------------------------------------------------------------------

    def note(self, sessions: Iterable[Session]) -> None:
        """Marks ``sessions`` as having news (the newest record of each session wins)."""
        with self._lock:
            for session in sessions:
                self._pending[session.key] = session
        self._wake.set()

    @property
    def pending(self) -> int:
        """How many sessions wait to be published."""
        with self._lock:
            return len(self._pending) + (1 if self._busy else 0)

    # -- the thread ----------------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        """Looks for news the last run left unpublished, and starts the thread."""
        if self._thread is not None:
            raise RuntimeError("this publisher was already started")
        self._rescan()
        self._thread = threading.Thread(target=self._run, name="sidelight-fleet-publisher", daemon=True)
        self._thread.start()
        logger.info(
            "publishing this machine's sessions as %s to %s on %s",
            self.config.host_id,
            self.config.stream,
            safe_url(self.config.url),
        )

    def stop(self, timeout: float = 10.0) -> None:
        """One last round for what is pending (when Redis answers), then the thread ends and is joined.
        What Redis did not take stays behind the cursors: the next run publishes it."""
        self._stopping.set()
        self._wake.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)
            if thread.is_alive():
                logger.warning("the fleet publisher did not stop within %.0fs", timeout)
        self._close_client()

    def wait_idle(self, timeout: float) -> bool:
        """Waits until nothing is pending (``False`` on timeout): tests and benchmarks."""
        deadline = time.monotonic() + timeout
        with self._idle:
            while self._pending or self._busy:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._idle.wait(min(left, 0.05))
        return True

    def _run(self) -> None:
        backoff = 0.0
        next_rescan = time.monotonic() + RESCAN_INTERVAL
        while True:
            if backoff:
                self._stopping.wait(backoff)
            else:
                self._wake.wait(max(0.0, next_rescan - time.monotonic()))
            stopping = self._stopping.is_set()
            self._wake.clear()
            if time.monotonic() >= next_rescan:
                self._rescan()
                next_rescan = time.monotonic() + RESCAN_INTERVAL
            rounds = 0
            try:
                while self.publish_pending(timeout=self.timeout):
                    rounds += 1
            except _transient() as error:
                self.failures += 1
                backoff = min(BACKOFF[1], max(BACKOFF[0], backoff * 2))
                if self.down_since is None:
                    self.down_since = time.monotonic()
                    logger.warning(
                        "fleet: cannot publish to %s (%s); %d sessions wait, retrying every %.1f-%.0fs",
                        safe_url(self.config.url),
                        _describe(error),
                        self.pending,
                        *BACKOFF,
                    )
                if stopping:
                    logger.warning(
                        "fleet: stopping with %d sessions unpublished; they go out when the watcher runs "
                        "again",
                        self.pending,
                    )
                    return
                continue
            except Exception:
                self.failures += 1
                backoff = min(BACKOFF[1], max(BACKOFF[0], backoff * 2))
                logger.exception("fleet: publishing failed; retrying")
                if stopping:
                    return
                continue
            if self.down_since is not None:
                logger.warning(
                    "fleet: %s answers again after %.1fs; caught up",
                    safe_url(self.config.url),
                    time.monotonic() - self.down_since,
                )
                self.down_since = None
            backoff = 0.0
            if stopping:
                return
            if rounds:
                # Let news gather for a moment: a busy session's lines of the next PUBLISH_INTERVAL go
                # out as one record, and the publisher leaves the watcher its share of the CPU.
                self._stopping.wait(PUBLISH_INTERVAL)

    def _rescan(self) -> None:
        """Sessions published before whose transcripts grew since (news no event announced: a watcher
        that stopped while Redis was down, lines that were no lifecycle event)."""
        try:
            saved = self.store.read(self.reader)
        except OSError as error:
            logger.warning("fleet: cannot read %s: %s", self.store.path, error)
            return
        found = []
        for entry in saved.values():
            session = _session_from(entry.get("session"))
            if session is not None and _grew(session, entry):
                found.append(session)
        if found:
            with self._lock:
                for session in found:
                    self._pending.setdefault(session.key, session)
            self._wake.set()

    # -- one round -----------------------------------------------------------------------------------

    def _connection(self, timeout: float) -> Any:
        if self._client is None:
            self._client = connect(self.config.url, timeout)
        return self._client

    def _close_client(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            try:
                client.close()
            except Exception:
                logger.debug("closing the Redis client failed", exc_info=True)

    def publish_pending(self, timeout: float | None = None) -> int:
        """Scans up to :data:`PUBLISH_BATCH` pending sessions from the publisher's cursors, ``XADD``s one
        record per session with news (one round trip), and moves the cursors of what Redis took.
        Returns the number of sessions handled (0: nothing was pending). Raises when Redis fails; the
        sessions stay pending and their cursors where they were."""
        with self._lock:
            keys = list(self._pending)[:PUBLISH_BATCH]
            batch = {key: self._pending.pop(key) for key in keys}
            self._busy = bool(batch)
        if not batch:
            return 0
        failed: dict[str, Session] = dict(batch)
        try:
            saved = self.store.read(self.reader)
            records, entries, done = self._scan(batch, saved)
            taken = self._send(records, self.timeout if timeout is None else timeout)
            commit = {key: entries[key] for key in entries if key in taken or key not in records}
            if commit:
                self.store.update(self.reader, commit)
            for key in done:
                failed.pop(key, None)
            for key in commit:
                failed.pop(key, None)
            self.published += len(taken)
            if len(taken) < len(records):
                raise FleetUnavailableError(
                    f"Redis refused {len(records) - len(taken)} of {len(records)} records"
                )
            return len(batch)
        finally:
            with self._idle:
                for key, session in failed.items():
                    self._pending.setdefault(key, session)
                self._busy = False
                self._idle.notify_all()

    def _scan(
        self, batch: Mapping[str, Session], saved: Mapping[str, Mapping[str, Any]]
    ) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]], set[str]]:
        """Scans the batch: the records to publish (session key -> record), the cursor entries to store
        once they are published (or at once, for sessions with nothing to say), and the sessions to drop
        (their transcript is gone)."""
        from sidelight.engine.reads import cursor_entry, plan_reads, scan_with_resets

        reads = plan_reads(list(batch.values()), saved, self.settings, skip_unchanged=False)
        results = scan_with_resets(reads, self.plugins, self.settings)
        assert results is not None  # no deadline
        by_session: dict[str, list[tuple[TranscriptRead, Activity]]] = {}
        done: set[str] = set()
        for read, result in zip(reads, results, strict=True):
            if isinstance(result, Exception):
                if read.path == read.session.path:
                    logger.info("fleet: not publishing %s: %s", read.session.name, result)
                    done.add(read.session.key)
                continue
            by_session.setdefault(read.session.key, []).append((read, result))
        records: dict[str, dict[str, Any]] = {}
        entries: dict[str, dict[str, Any]] = {}
        now = self.clock()
        for key, found in by_session.items():
            if key in done:
                continue
            session = batch[key]
            first = any(read.first_look for read, _ in found)
            activity = SessionActivity.merge(session, [a for _, a in found], first_look=first)
            cursors: dict[str, CursorTuple] = {}
            ranges: list[tuple[str, int, int, int]] = []
            for read, result in found:
                cursor = result.cursor
                start = read.cursor.offset if read.cursor is not None else 0
                span = (str(read.path), cursor.inode, start, cursor.offset)
                cursors[str(read.path)] = cursor.as_tuple()
                if read.path == session.path:
                    ranges.insert(0, span)
                else:
                    ranges.append(span)
            # Built afresh from this round's reads (every transcript of the batch is read).
            entry = cursor_entry(None, str(session.path), cursors)
            if entry is None:
                continue  # the main transcript was not read: the next round tries again
            entry["session"] = _session_info(session)
            entries[key] = entry
            if not activity.is_empty or activity.files_touched:
                record = build_record(self.config.host_id, activity, ranges, now)
                if record is not None:  # one too large to publish: its range is passed over (logged)
                    records[key] = record
        return records, entries, done

    def _send(self, records: Mapping[str, Mapping[str, Any]], timeout: float) -> set[str]:
        """``XADD``s the records in one pipelined round trip; the keys of those Redis took."""
        if not records:
            return set()
        client = self._connection(timeout)
        try:
            pipe = client.pipeline(transaction=False)
            for record in records.values():
                pipe.xadd(self.config.stream, _fields(record), maxlen=self.config.maxlen, approximate=True)
            results = pipe.execute(raise_on_error=False)
        except BaseException:
            self._close_client()  # a broken connection is not used again
            raise
        taken = set()
        for key, result in zip(records, results, strict=True):
            if isinstance(result, Exception):
                logger.warning("fleet: Redis refused the record of %s: %s", key, result)
            else:
                taken.add(key)
        return taken


def _grew(session: Session, entry: Mapping[str, Any]) -> bool:
    """A transcript of ``session`` differs from the stored cursors (grown, replaced, new subagent)."""
    extra = entry.get("extra")
    stored = extra if isinstance(extra, Mapping) else {}
    for path in (session.path, *session.extra_paths):
        data = entry if path == session.path else stored.get(str(path))
        try:
            stat = path.stat()
        except OSError:
            continue
        if not isinstance(data, Mapping):
            return True
        if stat.st_size != data.get("offset") or stat.st_ino != data.get("inode"):
            return True
    return False


def _describe(error: BaseException) -> str:
    text = str(error).strip() or type(error).__name__
    return text.splitlines()[0][:200]


# -- reading -------------------------------------------------------------------------------------------


@dataclass(slots=True)
class RemoteSession:
    """What the records of one remote session add up to (merged in stream order)."""

    host: str
    key: str
    name: str
    group: str
    format: str
    id: str | None
    user_messages: int = 0
    assistant_messages: int = 0
    tools: dict[str, int] = field(default_factory=dict)
    categories: dict[str, int] = field(default_factory=dict)
    files_touched: dict[str, None] = field(default_factory=dict)
    first_user_text: str | None = None
    last_assistant_text: str | None = None
    first_timestamp: str | None = None
    last_timestamp: str | None = None
    records: int = 0

    @property
    def session(self) -> Session:
        """The remote session as a :class:`Session` of this machine: named ``name@host``, keyed
        ``fleet:host:key``, with no transcript here (its ``path`` names it, nothing reads it)."""
        return Session(
            key=f"fleet:{self.host}:{self.key}",
            name=f"{self.name}@{self.host}",
            path=Path("/", "fleet", self.host, self.key.replace("/", "_")),
            format=self.format,
            group=self.group,
            resolver=RESOLVER,
            id=self.id,
        )

    def add(self, record: Mapping[str, Any]) -> None:
        self.records += 1
        self.name = str(record["session"].get("name") or self.name)
        self.user_messages += _int(record.get("user_messages"))
        self.assistant_messages += _int(record.get("assistant_messages"))
        for target, source in (
            (self.tools, record.get("tools")),
            (self.categories, record.get("categories")),
        ):
            if isinstance(source, Mapping):
                for name, n in source.items():
                    target[str(name)] = target.get(str(name), 0) + _int(n)
        files = record.get("files_touched")
        if isinstance(files, list):
            for path in files:
                self.files_touched.pop(str(path), None)
                self.files_touched[str(path)] = None
        if self.first_user_text is None and isinstance(record.get("first_user_text"), str):
            self.first_user_text = record["first_user_text"]
        if isinstance(record.get("last_assistant_text"), str):
            self.last_assistant_text = record["last_assistant_text"]
        first, last = record.get("first_timestamp"), record.get("last_timestamp")
        if isinstance(first, str) and (self.first_timestamp is None or first < self.first_timestamp):
            self.first_timestamp = first
        if isinstance(last, str) and (self.last_timestamp is None or last > self.last_timestamp):
            self.last_timestamp = last

    def activity(self, first_look: bool, now: float) -> SessionActivity:
        moment = epoch_seconds(self.last_timestamp)
        categories = {"edit": 0, "read": 0, "command": 0, "other": 0}
        for name, n in self.categories.items():
            categories[name] = categories.get(name, 0) + n
        return SessionActivity(
            session=self.session,
            user_messages=self.user_messages,
            assistant_messages=self.assistant_messages,
            tools=dict(self.tools),
            categories=categories,
            files_touched=tuple(self.files_touched)[-FILES_LIMIT:],
            first_user_text=self.first_user_text,
            last_assistant_text=self.last_assistant_text,
            first_timestamp=self.first_timestamp,
            last_timestamp=self.last_timestamp,
            first_look=first_look,
            age_seconds=None if moment is None else max(0.0, now - moment),
        )


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _text(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def _is_sibling(current: Session, remote: RemoteSession, scope: str | frozenset[str]) -> bool:
    """The local rule for siblings (``Settings.scope``), for a session of another machine: with
    ``repository`` or ``directory``, the same project directory (the same path on both machines: another
    machine's repository cannot be looked into); with names, the remote name as it is or as
    ``name@host``, or its key."""
    if scope == "all":
        return True
    if scope in ("repository", "directory", "project"):
        return remote.group == current.group
    return bool({remote.name, f"{remote.name}@{remote.host}", remote.key} & set(scope))


def _reader_key(config: FleetConfig) -> str:
    """The entry of a reader's cursor file that holds its position in the fleet's stream."""
    return f"fleet:{config.stream}"


def _stream_ms(stream_id: str) -> int:
    head = stream_id.split("-", 1)[0]
    return int(head) if head.isdigit() else 0


def _fetch(
    client: RespClient,
    config: FleetConfig,
    last_id: str | None,
    now: float,
    deadline: float,
    per_request: float,
) -> tuple[list[tuple[str, Mapping[bytes, bytes]]], str | None]:
    """The stream entries after ``last_id`` (at most :data:`CATCH_UP_LIMIT`, as many as fit before
    ``deadline``), or on a first look the latest ones; and the id to read from next time. Each request
    (the connection, the command, its whole reply) has ``per_request`` seconds, within ``deadline``.

    A catch-up keeps what it read when the deadline or a reply's caps stop it: the position moves past
    the batches it has, and the next prompt goes on from there. A batch past the caps is asked again in
    smaller ones; an entry past them on its own fails the read (a hostile writer's, never one of ours:
    :func:`build_record` bounds what it publishes)."""
    stream = config.stream
    if last_id is None:
        newest: list[Any] = client.xrevrange(stream, "+", "-", count=FIRST_LOOK_RECORDS) or []
        top = _text(newest[0][0]) if newest else "0-0"
        oldest = int((now - FIRST_LOOK_SECONDS) * 1000)
        recent = [(_text(i), f) for i, f in reversed(newest) if _stream_ms(_text(i)) >= oldest]
        return recent, top
    entries: list[tuple[str, Mapping[bytes, bytes]]] = []
    position = last_id
    batch_size = READ_BATCH
    while len(entries) < CATCH_UP_LIMIT:
        client.deadline = min(deadline, time.monotonic() + per_request)
        try:
            reply: Any = client.xread({stream: position}, count=batch_size)
        except ReplyTooLargeError:
            if batch_size == 1:
                raise
            batch_size = max(1, batch_size // 10)
            continue
        except TimeoutError:
            if not entries:
                raise
            break  # the deadline: what was read is reported, the rest next time
        batch = reply[0][1] if reply else []
        entries.extend((_text(i), f) for i, f in batch)
        if batch:
            position = entries[-1][0]
        if len(batch) < batch_size or time.monotonic() >= deadline:
            break
    return entries, position


def read_records(
    config: FleetConfig,
    last_id: str | None,
    *,
    deadline: float,
    now: float | None = None,
    timeout: float | None = None,
) -> tuple[list[tuple[str, dict[str, Any]]], str | None]:
    """The other machines' records after ``last_id`` (``None``: a first look), as ``(stream id,
    record)``, and the stream id to read from next time. Each request (connecting, one command and
    its whole reply) ends within ``timeout`` (default ``config.timeout``), and all of them by
    ``deadline``, whatever the server does; raises :class:`FleetUnavailableError` when Redis cannot be
    reached in time."""
    now = time.time() if now is None else now
    per_request = config.timeout if timeout is None else timeout
    first = min(deadline, time.monotonic() + per_request)
    # The hook's own small client: importing the redis package would cost more than the whole hook.
    try:
        with RespClient(config.url, per_request, deadline=first, max_string=RECORD_BYTES) as client:
            entries, position = _fetch(client, config, last_id, now, deadline, per_request)
    except (OSError, ValueError) as error:
        raise FleetUnavailableError(f"{safe_url(config.url)}: {_describe(error)}") from error
    own = config.host_id.encode()
    records: list[tuple[str, dict[str, Any]]] = []
    for stream_id, fields in entries:
        if fields.get(b"host") == own or fields.get(b"v") != str(RECORD_VERSION).encode():
            continue
        data = fields.get(b"data", b"")
        if data is TOO_LARGE:
            logger.info("fleet: skipped the record %s: larger than %d bytes", stream_id, RECORD_BYTES)
            continue
        try:
            record = orjson.loads(data)
        except orjson.JSONDecodeError:
            logger.info("fleet: skipped the unreadable record %s", stream_id)
            continue
        if isinstance(record, dict) and isinstance(record.get("session"), Mapping):
            records.append((stream_id, record))
    return records, position


def remote_activity(
    current: Session, settings: Settings, deadline: float, commit: bool
) -> list[SessionActivity]:
    """What ``current``'s siblings on the fleet's other machines did since it last asked (the built-in
    resolver's ``remote_activity``): ``[]`` without a fleet, or when Redis does not answer in time
    (logged; the hook goes on with local siblings)."""
    try:
        config = FleetConfig.of(settings)
    except ConfigError as error:
        logger.warning("fleet: %s; local sessions only", error)
        return []
    if config is None:
        return []
    from sidelight.engine.reads import cursor_file

    store = CursorStore(cursor_file(current, settings))
    key = _reader_key(config)
    try:
        entry = store.read(current.key).get(key) or {}
    except OSError as error:
        logger.warning("fleet: cannot read %s (%s); local sessions only", store.path, error)
        return []
    last_id = entry.get("last_id") if isinstance(entry.get("last_id"), str) else None
    seen_list = [s for s in entry.get("seen") or () if isinstance(s, str)]
    seen = set(seen_list)
    now = time.time()
    if deadline - time.monotonic() <= 0:
        logger.warning("fleet: no time left in the budget; local sessions only")
        return []
    try:
        records, position = read_records(config, last_id, deadline=deadline, now=now)
    except Exception as error:
        logger.warning("fleet: %s; local sessions only", _describe(error))
        return []
    merged: dict[tuple[str, str], RemoteSession] = {}
    for _stream_id, record in records:
        rid = str(record.get("id"))
        if rid in seen:
            continue  # a duplicate (a publish that was retried)
        seen.add(rid)
        seen_list.append(rid)
        info = record["session"]
        host, session_key = str(record.get("host")), str(info.get("key"))
        remote = merged.get((host, session_key))
        if remote is None:
            remote = merged[(host, session_key)] = RemoteSession(
                host=host,
                key=session_key,
                name=str(info.get("name") or session_key),
                group=str(info.get("group") or ""),
                format=str(info.get("format") or ""),
                id=None if info.get("id") is None else str(info.get("id")),
            )
        remote.add(record)
    if (
        commit
        and position is not None
        and (position != last_id or len(seen_list) != len(entry.get("seen") or ()))
    ):
        saved = {"offset": _stream_ms(position), "last_id": position, "seen": seen_list[-SEEN_IDS:]}
        try:
            store.update(current.key, {key: saved})
        except (OSError, ValueError) as error:
            logger.warning("fleet: cannot save the stream position in %s: %s", store.path, error)
    first = last_id is None
    return [
        remote.activity(first, now)
        for remote in merged.values()
        if _is_sibling(current, remote, settings.scope)
    ]


def list_remote(settings: Settings, *, records: int = 1000, timeout: float = 2.0) -> list[SessionActivity]:
    """The sessions of the fleet's other machines in its latest ``records`` records, each with the
    activity those records add up to (newest first): what ``sidelight`` knows of the fleet right now.
    Raises :class:`FleetUnavailableError` when Redis does not answer, :class:`ConfigError` without a
    fleet."""
    config = FleetConfig.of(settings)
    if config is None:
        raise ConfigError("no fleet is configured: set SIDELIGHT_REDIS_URL or redis_url")
    try:
        end = time.monotonic() + timeout
        with RespClient(config.url, timeout, deadline=end, max_string=RECORD_BYTES) as client:
            newest: list[Any] = client.xrevrange(config.stream, "+", "-", count=records)
    except (OSError, ValueError) as error:
        raise FleetUnavailableError(f"{safe_url(config.url)}: {_describe(error)}") from error
    merged: dict[tuple[str, str], RemoteSession] = {}
    for _id, fields in reversed(newest):
        if fields.get(b"host") == config.host_id.encode() or fields.get(b"data") is TOO_LARGE:
            continue
        try:
            record = orjson.loads(fields.get(b"data", b""))
        except orjson.JSONDecodeError:
            continue
        if not isinstance(record, dict) or not isinstance(record.get("session"), Mapping):
            continue
        info = record["session"]
        host, key = str(record.get("host")), str(info.get("key"))
        remote = merged.setdefault(
            (host, key),
            RemoteSession(
                host,
                key,
                str(info.get("name") or key),
                str(info.get("group") or ""),
                str(info.get("format") or ""),
                None if info.get("id") is None else str(info["id"]),
            ),
        )
        remote.add(record)
    now = time.time()
    found = [remote.activity(False, now) for remote in merged.values()]
    found.sort(key=lambda a: a.last_timestamp or "", reverse=True)
    return found
