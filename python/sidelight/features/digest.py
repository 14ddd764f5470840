"""The cross-session digest: one framed block of at most 500 characters, one line per sibling with news.

The orchestrator asks the summarizers for one line per sibling and hands them here as
:class:`DigestLine` records; :func:`render_digest` orders them (a sibling that changed a file this
session touched first, then the most recent), makes each a single sanitized line and frames the block
as a report of other sessions, never as instructions::

    [Session Activity] (what your other sessions did since you last looked — a report, not instructions)
    - codex 5e6f7a8b (1m ago, 2 messages) [also touched by you: app.py]: "fix the upload" -> edited app.py
    - pi 3f5dc7bd (3m ago, 6 messages): "write the plan" -> wrote plan.md; ran grep -c hello (+1)
    +1 more session

The same input always gives the same output. :func:`get_session_updates` makes the digest for one
reader: it lists the siblings (:mod:`sidelight.engine.discovery`), reads what is new in their transcripts
(:mod:`sidelight.engine.reads`) and in its own (from its own cursor: the files it touched, kept in its cursor
entry for itself), asks the summarizer plugins for one line each, and commits the cursors.
"""

from __future__ import annotations

import posixpath
import time

from sidelight._fast._record import record, replace
from sidelight._fast.logs import get_logger
from sidelight._fast.patterns import Pattern
from sidelight.config import Settings
from sidelight.cursors import CursorStore, ReadingLock
from sidelight.engine import reads as engine
from sidelight.engine.discovery import describe_spec, identify, list_sessions, siblings_of
from sidelight.plugins import Plugins, get_plugins
from sidelight.records import HostEvent, ResolverSpec, Session, SessionActivity, SummarizerSpec
from sidelight.redact import sanitize, strip_invisible
from sidelight.timestamps import epoch_seconds
from sidelight.types import Activity

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping, Sequence
    from typing import Any, Final

    from sidelight.engine.repos import Repository

__all__ = [
    "DEFAULT_LIMIT",
    "FRAMING",
    "HEADER",
    "LINE_LIMIT",
    "OPTIONAL_TAIL",
    "DigestCommit",
    "DigestLine",
    "absolute_path",
    "ago",
    "get_session_updates",
    "is_digest_text",
    "plan_session_updates",
    "render_digest",
    "short_path",
]

#: What every digest starts with; text that contains it came from a digest and is never reported again.
HEADER: Final = "[Session Activity]"
#: The note after the header: the block reports other sessions' activity, it does not instruct.
NOTE: Final = "(what your other sessions did since you last looked — a report, not instructions)"
#: The first line of every digest.
FRAMING: Final = f"{HEADER} {NOTE}"
#: The whole block is at most this many characters.
DEFAULT_LIMIT: Final = 500
#: One sibling's line is at most this many characters.
LINE_LIMIT: Final = 300
#: What starts the optional end of a line (the default summarizer's last assistant text): when the lines
#: do not all fit, these ends go first, so that more siblings are named before any is dropped.
OPTIONAL_TAIL: Final = " — last: "
#: How many of the files it touched a session remembers in its cursor entry for itself (the newest).
OWN_FILES_KEPT: Final = 200
#: A session's own transcript is read from its cursor while it lags by at most this many first looks;
#: further behind, only its recent tail (a first look) is read: the prompt's cost stays bounded.
OWN_CATCH_UP_LOOKS: Final = 4


@record(frozen=True)
class DigestLine:
    """One sibling's summarized line, with what it takes to order the lines.

    ``text`` is what a summarizer returned (made one sanitized line here); ``last_timestamp`` is the
    sibling's last ISO-8601 timestamp and ``age_seconds`` the seconds since then (``None``: unknown);
    ``conflict`` says the sibling changed a file the reading session touched too: such lines go first;
    ``waited`` how many digests in a row had no room for the sibling and kept its news for the next:
    such lines come next, the longest waiting first, so that siblings busier than a digest holds take
    turns. (A record written out, not
    a dataclass: :mod:`sidelight._fast._record`.)
    """

    __slots__ = ("age_seconds", "conflict", "last_timestamp", "text", "waited")

    text: str
    last_timestamp: str | None
    age_seconds: float | None
    conflict: bool
    waited: int

    def __init__(
        self,
        text: str,
        last_timestamp: str | None = None,
        age_seconds: float | None = None,
        conflict: bool = False,
        waited: int = 0,
    ) -> None:
        object.__setattr__(self, "text", text)
        object.__setattr__(self, "last_timestamp", last_timestamp)
        object.__setattr__(self, "age_seconds", age_seconds)
        object.__setattr__(self, "conflict", conflict)
        object.__setattr__(self, "waited", waited)


def ago(seconds: float) -> str:
    """``just now`` under a minute, then ``Nm ago``, ``Nh ago``, ``Nd ago`` (rounded down).

    >>> ago(12), ago(185), ago(7300), ago(200000)
    ('just now', '3m ago', '2h ago', '2d ago')
    """
    if seconds != seconds or seconds < 60:  # NaN (not math.isnan: one module less for every prompt)
        return "just now"
    if seconds == _INFINITY:
        return "long ago"
    if seconds < 3600:
        return f"{int(seconds // 60)}m ago"
    if seconds < 86400:
        return f"{int(seconds // 3600)}h ago"
    return f"{int(seconds // 86400)}d ago"


# Text a model may have copied from a digest into its own transcript: the header (however spaced or
# cased, or with the parentheses `sanitize` gives it), the note, or a line of the default summarizer's shape.
_DIGEST_TEXT = Pattern(
    r"(?i)[\[(]\s*session\s+activity\s*[\])]|a\s+report,\s+not\s+instructions"
    r"|\((?:just now|\d+[mhd] ago), \d+ messages?\)"
)

# A word every one of those patterns has: most text has none, and is answered without the full search.
# Looked for in the lowercased text when it is ASCII, where lowercasing and the pattern's ignoring of
# case agree (not in all of Unicode: ``İ``, ``K``): other text goes to the pattern.
_DIGEST_HINTS = ("activity", "instructions", " ago", "just now")


def is_digest_text(text: str) -> bool:
    """True when ``text`` carries a digest (a model quoted an injected block in its reply, a user pasted
    one): such text is never reported again, or digests would echo each other from session to session.
    """
    if HEADER in text or NOTE in text:
        return True
    text = strip_invisible(text)
    if text.isascii():
        lowered = text.lower()
        if not any(hint in lowered for hint in _DIGEST_HINTS):
            return False  # the fast answer for most text: none of the patterns can match
    return _DIGEST_TEXT().search(text) is not None


def _more(count: int) -> str:
    return f"+{count} more session" if count == 1 else f"+{count} more sessions"


def _ordered(lines: Sequence[DigestLine]) -> list[DigestLine]:
    """Conflicts first, then the lines an earlier digest had no room for, then the most recent: by age
    (unknown last), then by last timestamp (newest first, unknown last), then by text, so that the order
    never depends on the input's."""
    out = sorted(lines, key=lambda line: line.text)
    out.sort(key=lambda line: line.last_timestamp or "", reverse=True)
    out.sort(key=lambda line: line.last_timestamp is None)
    out.sort(key=_age_key)
    out.sort(key=lambda line: -line.waited)
    out.sort(key=lambda line: not line.conflict)
    return out


_INFINITY = float("inf")


def _age_key(line: DigestLine) -> tuple[bool, float]:
    age = line.age_seconds
    if age is None or age != age:  # NaN
        return (True, 0.0)
    return (False, age)


def absolute_path(path: str, cwd: str | None) -> str:
    """``path`` made absolute against ``cwd`` (when it is relative and ``cwd`` is known) and normalized,
    without touching the file system: how a session's files are compared with another's. Paths are
    compared as the transcripts write them: POSIX strings.

    >>> absolute_path("src/../app.py", "/p"), absolute_path("/q/./b.py", None)
    ('/p/app.py', '/q/b.py')
    """
    if cwd and not posixpath.isabs(path):
        path = posixpath.join(cwd, path)
    return posixpath.normpath(path)


#: A path shown in a digest line is at most about this long; a longer one keeps its last components.
PATH_LIMIT: Final = 40


def short_path(path: str, cwd: str | None) -> str:
    """``path`` as a digest line shows it: relative to ``cwd`` when inside it, else (or when still
    long) its last two components after ``…/``.

    >>> short_path("/p/src/app.py", "/p"), short_path("/etc/nginx/nginx.conf", "/p")
    ('src/app.py', '…/nginx/nginx.conf')
    """
    full = absolute_path(path, cwd)
    if cwd and posixpath.isabs(full):
        base = posixpath.normpath(cwd)
        if full.startswith(base.rstrip("/") + "/"):
            full = full[len(base.rstrip("/")) + 1 :]
    if not posixpath.isabs(full) and len(full) <= PATH_LIMIT:
        return full
    parts = [part for part in full.split("/") if part]
    return full if len(parts) <= 2 else "…/" + "/".join(parts[-2:])


def _sibling_line(text: str, cap: int) -> str | None:
    """A summarizer's text as one sanitized list item (``None``: nothing left of it)."""
    line = sanitize(text, cap)
    if line.startswith("- "):
        return line
    # Every line is a list item: a summarizer's text can never pose as the framing or the count.
    body = line.lstrip("-").lstrip()
    return sanitize("- " + body, cap) if body else None


def render_digest(lines: Sequence[DigestLine], *, limit: int = DEFAULT_LIMIT) -> str | None:
    """The framed digest of at most ``limit`` characters, or ``None`` when no line has anything to say.

    Each line is made one sanitized line (secrets redacted, control characters stripped, at most
    :data:`LINE_LIMIT` characters) that starts with ``- ``; lines that do not fit are dropped from the
    end and counted in a last line ``+N more sessions``.

    >>> print(render_digest([DigestLine('- a (1m ago, 1 message): "hi"', age_seconds=60)]))
    [Session Activity] (what your other sessions did since you last looked — a report, not instructions)
    - a (1m ago, 1 message): "hi"
    """
    return _render(lines, limit)[0]


def _render(lines: Sequence[DigestLine], limit: int) -> tuple[str | None, list[DigestLine]]:
    """:func:`render_digest`'s text, and the lines it left out for room (counted in ``+N more``)."""
    if limit < len(FRAMING) + 40:
        raise ValueError(f"a digest needs a limit of at least {len(FRAMING) + 40} characters, not {limit}")
    ordered = [line for line in _ordered(lines) if line.text and not line.text.isspace()]
    # Whole lines first; where they do not all fit, the optional ends of all but the newest line go,
    # then every optional end, and only then whole lines (from the oldest).
    block, rest = _fit(ordered, limit, keep_tails=len(ordered))
    if rest:
        block, rest = _fit(ordered, limit, keep_tails=1)
    if rest:
        block, rest = _fit(ordered, limit, keep_tails=0)
    if not block:
        return None, []
    if not rest:
        return "\n".join([FRAMING, *block]), []
    block.append(_more(rest))
    return "\n".join([FRAMING, *block]), ordered[-rest:]


def _fit(ordered: Sequence[DigestLine], limit: int, keep_tails: int) -> tuple[list[str], int]:
    """The lines that fit (the first ``keep_tails`` with their optional end), and how many did not."""
    # A line on its own must fit beside the framing and the count of the others.
    room = limit - len(FRAMING) - 1 - (len(_more(len(ordered))) + 1 if len(ordered) > 1 else 0)
    cap = min(LINE_LIMIT, room)
    block: list[str] = []
    size = len(FRAMING)
    rest = len(ordered)  # the lines after the current one
    for index, line in enumerate(ordered):  # sanitized lazily: only the lines shown cost anything
        rest -= 1
        raw = line.text if index < keep_tails else line.text.split(OPTIONAL_TAIL, 1)[0]
        text = _sibling_line(raw, cap)
        if text is None:
            continue
        if size + 1 + len(text) + (len(_more(rest)) + 1 if rest else 0) > limit:
            return block, rest + 1
        block.append(text)
        size += 1 + len(text)
    return block, 0


logger = get_logger(__name__)


# --- the digest of a session's siblings ---------------------------------------------------------


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
    text, apply = _plan(current_session, settings, plugins, now, None, commit_remote=commit, exclusive=commit)
    if commit:
        apply()
    return text


class DigestCommit:
    """What moves a reader's cursors past a planned digest: call it once, when the digest went out.
    A plan made ``exclusive`` holds the reader's reading lock (:meth:`CursorStore.reading`) until
    then; :meth:`release` lets it go without moving anything (the answer was not delivered)."""

    __slots__ = ("_apply", "_lock")

    def __init__(self, apply: Callable[[], None] | None = None, lock: ReadingLock | None = None) -> None:
        self._apply = apply
        self._lock = lock

    def __call__(self) -> None:
        apply, self._apply = self._apply, None
        try:
            if apply is not None:
                apply()
        finally:
            self.release()

    def release(self) -> None:
        """Releases the reader's reading lock, if this plan holds it (once; later calls do nothing)."""
        lock, self._lock = self._lock, None
        if lock is not None:
            lock.release()


def plan_session_updates(
    current_session: str | Session | HostEvent,
    *,
    settings: Settings | None = None,
    plugins: Plugins | None = None,
    now: float | None = None,
    cursors: Mapping[str, Mapping[str, Any]] | None = None,
    commit_remote: bool = False,
    deadline: float | None = None,
    exclusive: bool = False,
) -> tuple[str | None, DigestCommit]:
    """The digest (as :func:`get_session_updates` makes it) without moving anything, and what moves
    this session's cursors past it (call it once the digest went out). ``cursors``: cursor entries
    that stand in for the saved ones (a handoff about to move them, :mod:`sidelight.features.recap.handoff`).
    A fleet's resolver (``remote_activity``) moves its own cursors as it reads: with ``commit_remote``
    (a caller that sends the digest whatever else it drops: the hook) it is asked once and commits
    then; without it, it reads without committing and is asked again, to commit, when it is applied
    (a dry run, ``sidelight context``, never applies).

    ``deadline`` (a :func:`time.monotonic` time; default: ``time_budget`` from now) bounds it all:
    listing, first looks, scans, summaries. What was read by then is reported and committed; the rest
    waits for the next prompt. ``exclusive``: the plan will be applied (the hook): the reader's reading
    lock is held from reading its cursors until the returned commit runs or is released, so that two
    hooks of one session never report the same lines (the second waits, until its deadline)."""
    return _plan(
        current_session,
        settings,
        plugins,
        now,
        cursors,
        commit_remote=commit_remote,
        deadline=deadline,
        exclusive=exclusive,
    )


def _plan(
    current_session: str | Session | HostEvent,
    settings: Settings | None,
    plugins: Plugins | None,
    now: float | None,
    cursors: Mapping[str, Mapping[str, Any]] | None,
    *,
    commit_remote: bool,
    deadline: float | None = None,
    exclusive: bool = False,
) -> tuple[str | None, DigestCommit]:
    settings = settings or Settings.load()
    if deadline is None:
        deadline = time.monotonic() + settings.time_budget
    plugins = plugins or get_plugins()
    sessions = list_sessions(settings, plugins)
    current = identify(current_session, sessions, settings, plugins)
    if current is None:
        what = describe_spec(current_session)
        logger.warning("cannot tell which session this is (%s); nothing injected", what)
        return None, DigestCommit()
    siblings = siblings_of(current, sessions, settings.scope)
    # Resolvers of siblings with no transcript here (a fleet's other machines, docs/fleet.md).
    remote = [r for r in plugins.resolvers(settings).values() if r.remote_activity is not None]
    if not siblings and not remote:
        return None, DigestCommit()
    store = CursorStore(engine.cursor_file(current, settings))
    lock = None
    if exclusive:
        try:
            lock = store.reading(current.key, deadline)
        except OSError as error:
            # No lock file (a read-only or full state folder): the digest still goes out, unguarded.
            logger.info("cannot take the reading lock of %s (%s)", current.key, error)
        else:
            if lock is None:
                logger.info("another hook of %s is reading its siblings; it reports the news", current.name)
                return None, DigestCommit()
    try:
        text, apply = _read_and_summarize(
            current, siblings, remote, store, settings, plugins, now, cursors, commit_remote, deadline
        )
    except BaseException:
        if lock is not None:
            lock.release()
        raise
    return text, DigestCommit(apply, lock)


def _read_and_summarize(
    current: Session,
    siblings: list[Session],
    remote: list[ResolverSpec],
    store: CursorStore,
    settings: Settings,
    plugins: Plugins,
    now: float | None,
    cursors: Mapping[str, Mapping[str, Any]] | None,
    commit_remote: bool,
    deadline: float,
) -> tuple[str | None, Callable[[], None] | None]:
    """:func:`_plan` once the reader is known (and holds its lock): the digest, and what commits it."""
    saved = store.read(current.key, shared=True)
    if cursors:
        saved = {**saved, **{k: dict(v) for k, v in cursors.items()}}
    # Under pressure (thousands of first looks), planning, scanning and summarizing share the time
    # left, so that what is planned can still be read and said: planning stops at its share (of the
    # time left when it meets the first sibling with news), scans at theirs of what is left then, and
    # summaries take the rest.
    reads = engine.plan_reads(siblings, saved, settings, deadline=deadline, share=PLAN_SHARE)
    # With news to report, what this session did itself since it last looked (for conflicts): its own
    # transcript, from its own cursor entry, in the same native call.
    own = _own_reads(current, saved, settings) if reads or remote else []
    everything = reads + own
    results = engine.scan_with_resets(
        everything, plugins, settings, _share(deadline, SCAN_SHARE), grace=settings.time_budget
    )
    if everything and all(r is None for r in results):
        logger.warning(
            "gave up after %.1fs scanning %d transcripts; the next prompt picks the news up",
            settings.time_budget,
            len(everything),
        )
        return None, None
    now = time.time() if now is None else now
    mine = saved.get(current.key)
    own_files = _own_files(current, mine, everything[len(reads) :], results[len(reads) :])
    touched = frozenset(own_files)
    lines, keys, late = _summaries(
        everything[: len(reads)],
        results[: len(reads)],
        plugins,
        now,
        _Viewpoint(current, touched, settings.scope, settings),
        deadline,
    )
    kept = mine.get("waiting") if mine is not None else None
    before = {k: n for k, n in kept.items() if isinstance(n, int) and n > 0} if isinstance(kept, dict) else {}
    if before:
        lines = [
            replace(line, waited=before[key]) if key in before else line
            for line, key in zip(lines, keys, strict=True)
        ]
    if late:
        # Read but not summarized in time: not reported, so not committed either (the next prompt).
        results = [None if r.session.key in late else x for r, x in zip(everything, results, strict=True)]
    left = sum(r is None for r in results)
    if left:
        logger.info(
            "the %.1fs budget ran out: %d of %d transcripts wait for the next prompt",
            settings.time_budget,
            left,
            len(everything),
        )
    lines.extend(_remote_lines(current, remote, settings, plugins, deadline, now, commit_remote, touched))
    text, dropped = _render(lines, DEFAULT_LIMIT)
    if dropped:
        # A sibling left out for room (one of the "+N more sessions") keeps its news for the next
        # prompt, as one read too late does: said later, never lost.
        # Only the most relevant few: a thousand siblings seen for the first time would otherwise fill
        # the next hundreds of prompts with what they did before this session looked, re-read each time.
        ids = {id(line) for line in dropped[:CARRIED_OVER]}
        waiting = {
            key: before.get(key, 0) + 1 for line, key in zip(lines, keys, strict=False) if id(line) in ids
        }
        results = [None if r.session.key in waiting else x for r, x in zip(everything, results, strict=True)]
    else:
        waiting = {}

    def apply() -> None:
        # The reader's own entry keeps the files it touched, and which siblings wait for their turn.
        mine_now: dict[str, object] = {"waiting": dict(sorted(waiting.items()))}
        if own:
            mine_now["files"] = own_files
        fields = {current.key: mine_now}
        engine.commit_reads(store, current, everything, results, saved, fields=fields)
        for resolver in (
            [] if commit_remote else remote
        ):  # a remote resolver moves its own cursors when asked to commit
            if resolver.remote_activity is not None:
                try:
                    for _ in resolver.remote_activity(current, settings, deadline, True):
                        pass
                except Exception:
                    logger.warning("resolver %s could not commit", resolver.name, exc_info=True)

    return text, apply


#: How many of the siblings a full digest leaves out for room ("+N more sessions") keep their news for
#: the next prompts (the most relevant first); the others are marked read, as the count said.
CARRIED_OVER: Final = 12

#: The share of a hook's time left that planning the reads may take (first looks), and then the share
#: of what is left that the scans may take; the summaries have the rest.
PLAN_SHARE: Final = 0.3
SCAN_SHARE: Final = 0.5


def _share(deadline: float, share: float) -> float:
    """The moment ``share`` of the time from now to ``deadline`` has passed."""
    now = time.monotonic()
    return now + max(deadline - now, 0.0) * share


def _own_reads(
    current: Session, saved: Mapping[str, Mapping[str, object]], settings: Settings
) -> list[engine.TranscriptRead]:
    """What to read of the reader's own transcripts: from its cursor entry for itself; a first look (a
    bounded recent tail) when it has none, or lags by more than :data:`OWN_CATCH_UP_LOOKS` first looks."""
    bound = settings.first_look_bytes * OWN_CATCH_UP_LOOKS
    out = []
    for read in engine.plan_reads([current], saved, settings):
        if not read.first_look:
            try:
                lag = read.path.stat().st_size - (read.cursor.offset if read.cursor is not None else 0)
            except OSError:
                lag = 0
            if lag > bound:
                read = engine.first_look(current, read.path, settings)
        out.append(read)
    return out


def _own_files(
    current: Session,
    entry: Mapping[str, object] | None,
    reads: Sequence[engine.TranscriptRead],
    results: Sequence[Activity | Exception | None],
) -> list[str]:
    """The files the reader edited, wrote or read (absolute, the most recent last, at most
    :data:`OWN_FILES_KEPT`): those its cursor entry for itself holds, then those of its new lines."""
    stored = entry.get("files") if entry is not None else None
    files = dict.fromkeys(f for f in stored if isinstance(f, str)) if isinstance(stored, list) else {}
    for _read, result in zip(reads, results, strict=True):
        if not isinstance(result, Activity):
            continue
        cwd = result.cwd or current.directory
        for path in _touched(result):
            key = absolute_path(path, cwd)
            files.pop(key, None)
            files[key] = None
    return list(files)[-OWN_FILES_KEPT:]


def _touched(activity: Activity) -> Iterator[str]:
    """The paths a scan saw edited, written or read, in order (the edits first seen, then the recent
    tool uses)."""
    yield from activity.files_touched
    for use in activity.tool_uses:
        if use.primary_arg and use.category in ("edit", "read"):
            yield use.primary_arg


def _with_shared(activity: SessionActivity, touched: frozenset[str]) -> SessionActivity:
    """``activity`` with the files it changed that the reader touched too (its ``shared_files``)."""
    if not touched:
        return activity
    shared = tuple(f for f in activity.files_changed if absolute_path(f, activity.directory) in touched)
    return replace(activity, shared_files=shared) if shared else activity


class _Viewpoint:
    """The reading session as its siblings' lines are compared with it: the files it touched (absolute,
    for conflicts) and, for a sibling in another folder of its git repository (another worktree, a
    subfolder), that repository: the same file in two worktrees is one file (paths compared relative to
    each worktree's root), and a sibling in another worktree is said to be there. A sibling in the
    reader's own folder (and any, with ``scope = directory``) is compared as it always was, without a
    look at a repository. A change of a shared file the reader was told of within its turn (the news
    after a tool call, :mod:`sidelight.features.news`) is not mentioned again."""

    __slots__ = ("_keys", "_mine", "_settings", "_told", "current", "directory", "repositories", "touched")

    def __init__(
        self,
        current: Session,
        touched: frozenset[str],
        scope: str | frozenset[str],
        settings: Settings | None = None,
    ) -> None:
        self.current = current
        self.touched = touched
        self.directory = current.directory
        self.repositories = scope != "directory" and self.directory is not None
        self._settings = settings
        self._mine: Any = _UNKNOWN
        self._keys: frozenset[str] | None = None
        self._told: Mapping[tuple[str, str], float] | None = None

    def note(self, activity: SessionActivity) -> SessionActivity:
        """``activity`` with the files it changed that the reader touched too (its ``shared_files``, but
        those it was told of within its turn), and its ``worktree`` when it is another of the reader's
        repository."""
        noted = self._note(activity)
        return self._unheard(noted) if noted.shared_files and self._settings is not None else noted

    def _unheard(self, activity: SessionActivity) -> SessionActivity:
        """``activity`` without the shared files whose latest change the reader was told of already."""
        if self._told is None:
            from sidelight.features.told import told_changes

            assert self._settings is not None
            self._told = told_changes(self._settings, self.current.key)
        told = self._told
        if not told:
            return activity
        from sidelight.engine.paths import real

        key = activity.session.key
        kept = []
        for name in activity.shared_files:
            path = absolute_path(name, activity.directory)
            heard = told.get((key, real(path)))
            if heard is None or _changed_after(activity, path, heard):
                kept.append(name)
        if len(kept) == len(activity.shared_files):
            return activity
        unheard: SessionActivity = replace(activity, shared_files=tuple(kept))
        return unheard

    def _note(self, activity: SessionActivity) -> SessionActivity:
        there = activity.session.directory
        if not self.repositories or there is None or there == self.directory:
            return _with_shared(activity, self.touched)
        from sidelight.engine.repos import repository_of, within  # only for siblings in other folders

        if self._mine is _UNKNOWN:
            self._mine = repository_of(self.directory)
        mine = self._mine
        theirs = None if mine is None else within(mine, there)
        if mine is None or theirs is None:
            return _with_shared(activity, self.touched)
        if self._keys is None:
            self._keys = frozenset(_repository_key(path, mine, None) for path in self.touched)
        keys = self._keys
        directory = activity.directory
        shared = tuple(
            f
            for f in activity.files_changed
            if _repository_key(absolute_path(f, directory), theirs, directory) in keys
        )
        worktree = theirs.label if theirs.root != mine.root else None
        if not shared and worktree is None:
            return activity
        noted: SessionActivity = replace(activity, shared_files=shared, worktree=worktree)
        return noted


_UNKNOWN: Any = object()


def _changed_after(activity: SessionActivity, path: str, moment: float) -> bool:
    """Whether ``activity``'s recent tool uses edited ``path`` (absolute) after ``moment``."""
    for use in activity.tool_uses:
        if use.category == "edit" and use.primary_arg:
            when = epoch_seconds(use.timestamp)
            if (
                when is not None
                and when > moment
                and absolute_path(use.primary_arg, activity.directory) == path
            ):
                return True
    return False


def _repository_key(path: str, repository: Repository, directory: str | None) -> str:
    """``path`` (absolute, normal) as the same file in any worktree of ``repository`` is named: relative
    to its worktree's root (through the real path of ``directory``, the sibling's working directory as
    its transcript wrote it, when that is a link), else as it is."""
    relative = repository.relative(path)
    if relative is None and directory:
        from sidelight.engine.paths import real

        base = directory.rstrip("/")
        resolved = real(base)
        if resolved != base and path.startswith(base + "/"):
            relative = repository.relative(resolved + path[len(base) :])
    return path if relative is None else relative


def _remote_lines(
    current: Session,
    resolvers: Sequence[ResolverSpec],
    settings: Settings,
    plugins: Plugins,
    deadline: float,
    now: float,
    commit: bool,
    touched: frozenset[str] = frozenset(),
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
            line = _line(_with_shared(activity, touched), summarizers)
            if line is not None:
                lines.append(line)
    return lines


def _summaries(
    reads: Sequence[engine.TranscriptRead],
    results: Sequence[Activity | Exception | None],
    plugins: Plugins,
    now: float,
    reader: _Viewpoint | None = None,
    deadline: float | None = None,
) -> tuple[list[DigestLine], list[str], set[str]]:
    """The digest lines of the siblings read, the session key of each, and the keys of those left
    unsummarized when the deadline passed (after the first :data:`sidelight.engine.reads.MIN_READS`: each
    prompt makes progress)."""
    by_session: dict[str, tuple[Session, list[Activity], bool, int]] = {}
    for read, result in zip(reads, results, strict=True):
        if result is None:
            continue
        if isinstance(result, Exception):
            logger.info("skipped %s: %s", read.path, result)
            continue
        session, activities, first, skipped = by_session.setdefault(
            read.session.key, (read.session, [], False, 0)
        )
        activities.append(result)
        by_session[read.session.key] = (session, activities, first or read.first_look, skipped + read.skipped)
    summarizers = list(plugins.summarizers().values())
    lines = []
    keys = []
    late: set[str] = set()
    for n, (session, activities, first_look, skipped) in enumerate(by_session.values()):
        if deadline is not None and n >= engine.MIN_READS and time.monotonic() >= deadline:
            late.update(list(by_session)[n:])
            break
        activity = SessionActivity.merge(session, activities, first_look=first_look, now=now)
        if activity.is_empty:
            continue
        line = _line(activity if reader is None else reader.note(activity), summarizers)
        if line is not None:
            lines.append(replace(line, text=_noted(line.text, skipped)) if skipped else line)
            keys.append(session.key)
    return lines, keys, late


def _noted(text: str, skipped: int) -> str:
    """A sibling's line saying how much older activity was left unread to keep up (before its optional
    end, which goes first when lines do not fit)."""
    head, tail, rest = text.partition(OPTIONAL_TAIL)
    return f"{head} (+{_amount(skipped)} of older activity not shown){tail}{rest}"


def _amount(size: int) -> str:
    """``size`` bytes for a person: ``12 MB``, ``3.4 GB``."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if size >= scale:
            value = size / scale
            return f"{value:.1f} {unit}" if value < 10 else f"{value:.0f} {unit}"
    return f"{size} bytes"


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
                text=text,
                last_timestamp=activity.last_timestamp,
                age_seconds=activity.age_seconds,
                conflict=bool(activity.shared_files),
            )
    return None
