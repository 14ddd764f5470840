"""Path and small-read helpers shared by the resolver templates.

Everything here is cheap on purpose: resolvers run on every prompt hook, over maybe a thousand
transcripts, so they read at most a bounded head or tail of a file, never parse a whole transcript,
and remember what they read keyed by ``(path, size, mtime)`` for as long as the process lives (a hook
process lists once; the watcher lists many times).
"""

# Hot path (every prompt, over many files): plain str paths and os functions, no Path per file.
# ruff: noqa: PTH100, PTH116

from __future__ import annotations

import os
import stat
import sys
from functools import lru_cache
from pathlib import Path, PurePosixPath

from sidelight._fast import jsonio
from sidelight._fast.logs import get_logger
from sidelight.records import Session

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator
    from typing import Any, BinaryIO

    from sidelight.config import Settings
    from sidelight.plugins import Plugins
    from sidelight.records import HostEvent

    #: A format's title lines (``FormatSpec.title_lines``): ``(marker, key, path)`` each.
    TitleLines = tuple[tuple[str, str | None, tuple[str, ...]], ...]

__all__ = [
    "TitledSession",
    "folder_group",
    "folder_sessions",
    "has_field",
    "head_string_field",
    "js_hash36",
    "jsonl_files",
    "open_regular",
    "read_head",
    "read_title",
    "real",
    "resumed_paths",
    "short_id",
    "stat_key",
]

logger = get_logger(__name__)

#: How much of a transcript's head a resolver reads for ``cwd`` / ``sessionId`` / a header.
HEAD_BYTES = 64 * 1024
#: How much of a transcript's tail is searched for a title line (titles are appended when set).
TAIL_BYTES = 64 * 1024
#: How much of the head is searched for a title (an agent may write its title lines first).
TITLE_HEAD_BYTES = 16 * 1024

StatKey = tuple[str, int, int]


def stat_key(path: Path | str, st: os.stat_result | None = None) -> StatKey | None:
    """``(path, size, mtime_ns)`` for caching what was read from a file; ``None`` if it is gone."""
    if st is None:
        try:
            st = os.stat(path)
        except OSError:
            return None
    return (os.fspath(path), st.st_size, st.st_mtime_ns)


def child_path(folder: Path, name: str, full: str) -> Path:
    """``folder / name``, whose text is already known (``full``: a ``DirEntry.path``), made without
    parsing it again: resolvers list a thousand transcripts on every prompt, and pathlib's parsing was
    most of that. Python 3.11's private ``_make_child_relpath`` (what ``Path.iterdir`` uses) there; the
    plain join on other versions, whose pathlib differs."""
    if _PATH_SLOT is None:
        return folder / name
    child: Path = folder._make_child_relpath(name)  # type: ignore[attr-defined]
    _PATH_SLOT.__set__(child, full)  # the text it would compute: str(child) == full
    return child


#: ``PurePath._str`` of Python 3.11, where :func:`child_path` caches a path's text (``None``: another
#: pathlib, which gets the plain join).
_PATH_SLOT: Any = (
    getattr(PurePosixPath, "_str", None)
    if sys.version_info[:2] == (3, 11) and hasattr(Path, "_make_child_relpath")
    else None
)


@lru_cache(maxsize=4096)
def real(path: str) -> str:
    """The absolute path with symlinks resolved (a missing path is only made absolute and normal)."""
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        return os.path.abspath(path)


def js_hash36(text: str) -> str:
    """A JavaScript-style 32-bit string hash (over UTF-16 code units) of ``text``, absolute value, in
    base 36: how a JavaScript agent may shorten a long path in a folder's name."""
    h = 0
    data = text.encode("utf-16-le", "surrogatepass")
    for i in range(0, len(data), 2):
        unit = data[i] | (data[i + 1] << 8)
        h = ((h << 5) - h + unit) & 0xFFFFFFFF
    if h & 0x80000000:
        h -= 1 << 32
    h = abs(h)
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        h, r = divmod(h, 36)
        out = digits[r] + out
        if h == 0:
            return out


#: Why :func:`open_regular` refuses a path (the core's words for it too).
NOT_REGULAR = "not a regular file (a FIFO, socket or device)"


def open_regular(path: Path | str) -> BinaryIO:
    """``path`` open for reading (binary), when it is a regular file: the one way sidelight opens a
    transcript, its head or tail, or a file beside it that an agent wrote.

    The open is non-blocking (a FIFO with no writer would hold it forever, a hook with it) and without
    a controlling terminal; what it opened is checked with ``fstat``, so a swap after a look cannot slip
    a FIFO in. A directory raises :class:`IsADirectoryError`, anything else that is no regular file an
    :class:`OSError` (no ``errno``) saying :data:`NOT_REGULAR`; a failed open its own ``OSError``."""
    fd = os.open(path, _READ_FLAGS)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            if stat.S_ISDIR(mode):
                import errno  # (only here: a hook reads regular files)

                raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), os.fspath(path))
            raise OSError(None, NOT_REGULAR, os.fspath(path))
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


_READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY


def read_head(path: Path | str, limit: int) -> bytes:
    """The first ``limit`` bytes of the regular file ``path`` (empty when it cannot be read)."""
    try:
        with open_regular(path) as f:
            return f.read(limit)
    except OSError as error:
        logger.debug("cannot read %s: %s", path, error)
        return b""


def head_string_field(
    path: Path | str, name: str, limit: int = HEAD_BYTES, data: bytes | None = None
) -> str | None:
    """The first JSON string value of a key ``name`` in the first ``limit`` bytes of ``path`` (or in
    ``data``), found without parsing whole lines, whatever whitespace JSON allows around the colon.
    ``None`` if absent or blank."""
    if data is None:
        data = read_head(path, limit)
    raw = _string_after(data, b'"' + name.encode() + b'"')
    if raw is None:
        return None
    try:
        value = jsonio.loads(b'"' + raw + b'"')
    except ValueError:
        return None
    return (value.strip() or None) if isinstance(value, str) else None


def has_field(data: bytes, name: str, value: str) -> bool:
    """Whether ``data`` holds a key ``name`` whose value is the JSON string ``value`` (as
    ``"name"\\s*:\\s*"value"`` would find it), whatever whitespace JSON allows around the colon."""
    key = b'"' + name.encode() + b'"'
    token = b'"' + value.encode() + b'"'
    at = data.rfind(token)
    while at >= 0:
        if _is_value_of(data, at, key):
            return True
        at = data.rfind(token, 0, at + len(token) - 1)  # (one that ends in this one's first quote too)
    return False


#: What JSON allows between tokens.
_SPACE = b" \t\n\r"


def _value_at(data: bytes, end: int) -> int:
    """Where the value of a key whose name ends at ``end`` begins: past the colon and the whitespace
    around it; ``-1`` when no colon follows (the string was a value, not a key)."""
    size = len(data)
    while end < size and data[end] in _SPACE:
        end += 1
    if end >= size or data[end] != 0x3A:  # ':'
        return -1
    end += 1
    while end < size and data[end] in _SPACE:
        end += 1
    return end


def _is_value_of(data: bytes, at: int, key: bytes) -> bool:
    """Whether the value that begins at ``at`` is the value of the key ``key`` (quoted) before it."""
    while at > 0 and data[at - 1] in _SPACE:
        at -= 1
    if at == 0 or data[at - 1] != 0x3A:  # ':'
        return False
    at -= 1
    while at > 0 and data[at - 1] in _SPACE:
        at -= 1
    return data.endswith(key, 0, at)


def _string_after(data: bytes, key: bytes) -> bytes | None:
    """The body of the first JSON string that is the value of a key ``key`` (quoted) in ``data`` and
    ends there: ``key\\s*:\\s*"((?:[^"\\]|\\.)*)"`` searched, without :mod:`re` (an escaped line break or
    a string cut off ends that occurrence, and the next is tried)."""
    at = data.find(key)
    while at >= 0:
        begin = _value_at(data, at + len(key))
        if begin >= 0 and data[begin : begin + 1] == b'"':
            begin = position = begin + 1
            while True:
                quote = data.find(b'"', position)
                if quote < 0:
                    break
                escape = data.find(b"\\", position, quote)
                if escape < 0:
                    return data[begin:quote]
                if escape + 1 >= len(data) or data[escape + 1] == 0x0A:
                    break
                position = escape + 2
        at = data.find(key, at + 1)
    return None


#: A path's end not found (``None`` is a value a title field may hold).
_MISSING = object()


def _last_line_with(data: bytes, anchor: bytes, key: bytes | None, field: tuple[str, ...]) -> object:
    """The value at ``field`` (a path of keys) of the newest complete line of ``data`` that is a JSON
    object holding that path and whose top-level ``key`` is the string ``anchor`` (with no ``key``: in
    which ``anchor`` is a key); ``None`` if no line is. Whitespace and key order are the writer's: a
    line is found by its quoted ``anchor`` with the key before it (or the colon after it), and only
    such a line is parsed."""
    token = b'"' + anchor + b'"'
    quoted = b'"' + key + b'"' if key is not None else b""
    end = len(data)
    while True:
        at = data.rfind(token, 0, end)
        if at < 0:
            return None
        marked = _is_value_of(data, at, quoted) if key is not None else _value_at(data, at + len(token)) >= 0
        if not marked:
            end = at + len(token) - 1
            continue
        start = data.rfind(b"\n", 0, at) + 1
        stop = data.find(b"\n", at)
        try:
            value: object = jsonio.loads(data[start : stop if stop >= 0 else len(data)])
        except (ValueError, RecursionError):  # a title line nested past the recursion limit is no title
            value = None
        if isinstance(value, dict) and (key is None or value.get(key.decode()) == anchor.decode()):
            for step in field:
                value = value.get(step, _MISSING) if isinstance(value, dict) else _MISSING
            if value is not _MISSING:
                return value
        end = start


_titles: dict[StatKey, str | None] = {}


def read_title(path: Path | str, rules: TitleLines, st: os.stat_result | None = None) -> str | None:
    """A transcript's title from a bounded head and tail read (cached by path, size and mtime), by its
    format's ``rules`` (``FormatSpec.title_lines``: the newest line each marks, in order of precedence).

    Title lines are short metadata lines the agents append when a title is set (or write first), so
    the head and the tail hold them; a title buried in the middle of a huge transcript is missed, which
    costs only a nicer name.
    """
    if not rules:
        return None
    key = stat_key(path, st)
    if key is None:
        return None
    if key in _titles:
        return _titles[key]
    size = key[1]
    try:
        with open_regular(path) as f:
            if size <= TITLE_HEAD_BYTES + TAIL_BYTES:
                parts = [f.read()]
            else:
                head = f.read(TITLE_HEAD_BYTES)
                f.seek(size - TAIL_BYTES)
                tail = f.read(TAIL_BYTES)
                # The first tail line is probably cut: search from the first newline on.
                cut = tail.find(b"\n")
                parts = [tail[cut:] if cut >= 0 else b"", head]
    except OSError as error:
        logger.debug("cannot read %s: %s", path, error)
        return None
    title: str | None = None
    for marker, holder, field in rules:
        anchor = marker.encode()
        if not any(anchor in part for part in parts):
            continue
        for part in parts:  # the tail first: it holds the newest line
            value = _last_line_with(part, anchor, holder.encode() if holder is not None else None, field)
            if isinstance(value, str) and value.strip():
                title = value.strip()
                break
        if title:
            break
    if len(_titles) > 20_000:
        _titles.clear()
    _titles[key] = title
    return title


def own_transcript(event: HostEvent, root: Path | str | None, agent: str) -> Path | None:
    """The hook event's transcript, resolved, when it is ``agent``'s: sent by its own host, or under
    ``root`` (the agent's sessions folder); ``None`` for no transcript or another agent's."""
    if event.transcript_path is None:
        return None
    path = Path(real(os.fspath(event.transcript_path)))
    if event.host == agent:
        return path
    if root is not None and os.fspath(path).startswith(real(os.fspath(root)) + os.sep):
        return path
    return None


def quietly(
    agent: str, find: Callable[[HostEvent, Settings], Session | None]
) -> Callable[[HostEvent, Settings], Session | None]:
    """A resolver's ``current`` from ``find``: a session that cannot be told (a file or folder gone or
    odd mid-lookup) is ``None`` with a debug line, never an error in the host's hook."""

    def current(event: HostEvent, settings: Settings) -> Session | None:
        try:
            return find(event, settings)
        except (OSError, ValueError) as error:
            logger.debug("%s: cannot identify the session of %s: %s", agent, event, error)
            return None

    current.__doc__ = f"The {agent} session a hook event comes from (see the module's docstring)."
    return current


def id_session(agent: str, path: Path, session_id: str, group: str) -> Session:
    """A session of ``agent`` (its format, resolver and key prefix) named by the short form of its id."""
    return Session(
        key=f"{agent}:{session_id}",
        name=short_id(session_id),
        path=path,
        format=agent,
        group=group,
        resolver=agent,
        id=session_id,
    )


def working_group(agent: str, session_id: str, cwd: str | None, fallback: Path | None) -> str:
    """The group of a session told by its working directory (``cwd``, else the hook's ``fallback``);
    with neither known, a group of its own."""
    if cwd:
        return real(cwd)
    if fallback is not None:
        return real(os.fspath(fallback))
    return f"{agent}:{session_id}"


def jsonl_files(folder: str) -> list[str]:
    """The ``.jsonl`` files in ``folder``, sorted (none when it cannot be listed)."""
    try:
        with os.scandir(folder) as entries:
            return sorted(e.path for e in entries if e.name.endswith(".jsonl") and e.is_file())
    except OSError:
        return []


def folder_group(
    agent: str, folder: str, transcripts: Iterable[str], cache: dict[str, str], fallback: Path | None = None
) -> str:
    """The group of the sessions in a project folder an agent names after their working directory (which
    cannot be decoded back): the ``cwd`` in the head of one of its first transcripts (kept in ``cache``
    per folder, for the process), else the hook's ``fallback``, else a group of its own."""
    cached = cache.get(folder)
    if cached is not None:
        return cached
    for n, path in enumerate(transcripts):
        if n >= 4:
            break
        cwd = head_string_field(path, "cwd", limit=16 * 1024)
        if cwd:
            cache[folder] = group = real(cwd)
            return group
    if fallback is not None:
        return real(os.fspath(fallback))
    return f"{agent}:{os.path.basename(folder)}"  # no working directory known: a group of its own  # noqa: PTH119


def folder_sessions(
    agent: str,
    top: str,
    inner: str,
    cache: dict[str, str],
    make: Callable[[Path, str, str], Session],
) -> Iterator[Session]:
    """The sessions of an agent that keeps a folder per project under ``top``, its transcripts
    (``<id>.jsonl``) in that folder's ``inner`` folder (``""``: the folder itself), each made by
    ``make(path, session id, group)``; grouped by :func:`folder_group`."""
    try:
        with os.scandir(real(top)) as entries:
            folders = sorted(e.path for e in entries if e.is_dir())
    except OSError:
        return
    for folder in folders:
        try:
            transcripts = jsonl_files(os.path.join(folder, inner) if inner else folder)  # noqa: PTH118
            if not transcripts:
                continue
            group = folder_group(agent, folder, transcripts, cache)
            for path in transcripts:
                yield make(Path(path), os.path.basename(path)[:-6], group)  # noqa: PTH119
        except Exception as error:  # an odd folder never hides the others
            logger.debug("%s: skipping %s: %s", agent, folder, error)


def short_id(session_id: str) -> str:
    """Eight characters that tell sessions apart: a UUID's first eight, except for time-ordered
    UUIDv7 ids (as some agents use), whose first eight are a timestamp shared by sessions started within a
    minute, so their last eight."""
    if len(session_id) == 36 and session_id[14:15] == "7":
        return session_id[-8:]
    return session_id[:8]


_UNREAD = "\x00unread"
_NAME_SLOT: Any = Session.__dict__["name"]


class TitledSession(Session):
    """A :class:`~sidelight.records.Session` whose ``name`` is its transcript's title, read on first
    use (by its format's ``title_lines``, see :func:`read_title`), else ``fallback``.

    Listing runs on every prompt over every transcript, but a digest names only the few siblings with
    news: reading titles lazily keeps the listing to a directory scan. Built with ``name=...`` (as
    :func:`dataclasses.replace` does), it is a plain session.
    """

    __slots__ = ("_fallback", "_title_lines")
    _fallback: str
    _title_lines: TitleLines | None

    def __init__(
        self, *args: Any, title_lines: TitleLines | None = None, fallback: str = "", **fields: Any
    ) -> None:
        object.__setattr__(self, "_title_lines", title_lines)
        object.__setattr__(self, "_fallback", fallback)
        if title_lines is not None and "name" not in fields and len(args) < 2:
            fields["name"] = _UNREAD
        super().__init__(*args, **fields)

    @classmethod
    def listed(
        cls,
        key: str,
        path: Path,
        format: str,
        group: str,
        resolver: str,
        id: str | None,
        extra_paths: tuple[Path, ...],
        title_lines: TitleLines,
        fallback: str,
    ) -> TitledSession:
        """``cls(key=key, path=path, ..., title_lines=title_lines, fallback=fallback)``, the same
        session made without the keyword call through ``Session.__init__``: a resolver lists a thousand
        sessions on every prompt, and the generic call cost three times as much as the slots' own
        setters (``tests/test_resolvers.py`` checks the two make equal sessions)."""
        session = _new_object(cls)
        _SET_KEY(session, key)
        _NAME_SLOT.__set__(session, _UNREAD)
        _SET_PATH(session, path)
        _SET_FORMAT(session, format)
        _SET_GROUP(session, group)
        _SET_RESOLVER(session, resolver)
        _SET_ID(session, id)
        _SET_EXTRA_PATHS(session, extra_paths)
        _SET_CURSOR_FILE(session, None)
        _SET_TITLE_LINES(session, title_lines)
        _SET_FALLBACK(session, fallback)
        return session

    @property
    def name(self) -> str:
        value: str = _NAME_SLOT.__get__(self, Session)
        if value is _UNREAD:
            value = read_title(self.path, self._title_lines or ()) or self._fallback
            _NAME_SLOT.__set__(self, value)
        return value

    @name.setter
    def name(self, value: str) -> None:
        _NAME_SLOT.__set__(self, value)


_new_object = object.__new__
# The slots' own setters (member descriptors), for TitledSession.listed.
_SET_KEY, _SET_PATH, _SET_FORMAT, _SET_GROUP, _SET_RESOLVER, _SET_ID, _SET_EXTRA_PATHS, _SET_CURSOR_FILE = (
    Session.__dict__[slot].__set__
    for slot in ("key", "path", "format", "group", "resolver", "id", "extra_paths", "cursor_file")
)
_SET_TITLE_LINES = TitledSession.__dict__["_title_lines"].__set__
_SET_FALLBACK = TitledSession.__dict__["_fallback"].__set__


def resumed_paths(session: Session, plugins: Plugins | None = None) -> tuple[Path, ...]:
    """The extra files of ``session`` that carry on its own transcript, not a subagent's: those in its
    transcript's own folder when its format ``resumes_beside`` (a resumed session's later file); every
    other format's extra files are its subagents' (or child sessions')."""
    if not session.extra_paths:
        return ()
    if plugins is None:
        from sidelight.plugins import get_plugins  # a command's question, never a prompt's

        plugins = get_plugins()
    spec = plugins.format(session.format)
    if spec is None or not spec.resumes_beside:
        return ()
    folder = session.path.parent
    return tuple(path for path in session.extra_paths if path.parent == folder)
