"""Finding sessions: every session the resolver plugins know, the session a hook event comes from, its
siblings, and the session a name, id, key or path means.

The engine's first half (the second, reading transcripts from cursors, is :mod:`sidelight.engine.reads`). It
asks the resolver plugins and nothing above them.
"""

from __future__ import annotations

import os
from contextvars import ContextVar
from pathlib import Path

from sidelight._fast.logs import get_logger
from sidelight.errors import (
    FileNameError,
    SidelightError,
    check_file_name,
    describe,
    is_utf8_name,
    shown_path,
)
from sidelight.records import HostEvent, Session

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence
    from contextvars import Token
    from typing import Any

    from sidelight.config import Settings
    from sidelight.plugins import Plugins

__all__ = [
    "AmbiguousSessionError",
    "SessionNotFoundError",
    "current_session",
    "describe_spec",
    "identify",
    "is_generic",
    "latest_session_here",
    "list_sessions",
    "readable_session",
    "resolve_session",
    "serving",
    "siblings_of",
    "working_directory",
]

logger = get_logger(__name__)

#: The shortest id prefix that names a session.
MIN_PREFIX = 4


#: How many candidates an error message lists.
LISTED_CANDIDATES = 8


def is_generic(resolver: str, plugins: Plugins) -> bool:
    """Whether ``resolver`` is an agent's own, which lists every transcript of the agent's formats: the
    resolver of the agent named as it (:class:`sidelight.records.AgentSpec`), when that agent has
    formats of its own. Any other (volute's, whose minds' sessions are other agents' transcripts; a
    plugin's that names no agent) is more specific: where it claims a transcript an agent's resolver
    lists too, its record wins, and it is asked first for the session of a hook event."""
    agent = plugins.agent(resolver)
    return agent is not None and agent.resolver == resolver and bool(agent.formats)


class SessionNotFoundError(SidelightError, LookupError):
    """No known session matches what was asked for."""


class AmbiguousSessionError(SidelightError, LookupError):
    """More than one session matches what was asked for."""


#: While the watcher answers a hook (:func:`serving`): its own listing of the sessions, and the hook's
#: working directory. Context variables, so that the watcher's other threads see neither.
_LISTING: ContextVar[Callable[[], list[Session]] | None] = ContextVar("sidelight_listing", default=None)
_DIRECTORY: ContextVar[str | None] = ContextVar("sidelight_directory", default=None)


class serving:  # a class, not contextlib.contextmanager: contextlib would be an import on every prompt
    """Within this block (in this thread), :func:`list_sessions` answers from ``listing`` (a watcher
    that already listed every session, and keeps the list current from file events) and
    :func:`working_directory` is ``directory`` (the hook's, not the watcher's)."""

    __slots__ = ("_directory", "_listing", "_tokens")

    def __init__(self, listing: Callable[[], list[Session]] | None, directory: str) -> None:
        self._listing = listing
        self._directory = directory
        self._tokens: list[Token[Any]] = []

    def __enter__(self) -> None:
        self._tokens.append(_LISTING.set(self._listing))
        self._tokens.append(_DIRECTORY.set(self._directory))

    def __exit__(self, *exc: object) -> None:
        _DIRECTORY.reset(self._tokens.pop())
        _LISTING.reset(self._tokens.pop())


class listed_once:  # a class, not contextlib.contextmanager: see serving
    """Within this block (in this thread), the sessions are listed at most once: the prompt hook asks for
    them to tell its own session, for the digest and for the handoff, and a project of a thousand
    transcripts costs milliseconds to list. Nothing changes where a listing is already served (the
    watcher's, :class:`serving`)."""

    __slots__ = ("_plugins", "_sessions", "_settings", "_token")

    def __init__(self, settings: Settings, plugins: Plugins) -> None:
        self._settings = settings
        self._plugins = plugins
        self._sessions: list[Session] | None = None
        self._token: Token[Any] | None = None

    def __enter__(self) -> None:
        if _LISTING.get() is None:
            self._token = _LISTING.set(self._listing)

    def __exit__(self, *exc: object) -> None:
        if self._token is not None:
            _LISTING.reset(self._token)
            self._token = None

    def _listing(self) -> list[Session]:
        if self._sessions is None:
            self._sessions = _list_all(self._settings, self._plugins)
        return self._sessions


def working_directory() -> str:
    """The directory the hook runs in: resolvers that look around it (volute's minds) ask this, not
    :func:`os.getcwd`, so that a hook the watcher answers sees the hook's directory."""
    return _DIRECTORY.get() or os.getcwd()  # noqa: PTH109 (a str, as the hook sends it)


def list_sessions(settings: Settings, plugins: Plugins) -> list[Session]:
    """Every session every resolver knows, once per transcript: where two resolvers claim one file
    (a volute session is also a plain Claude Code session), the first resolver that is not an agent's
    own (:func:`is_generic`) wins, so the session keeps its volute name. Resolvers give resolved
    paths, so paths are compared as they are (resolving a thousand paths per prompt costs more than
    the scan)."""
    listing = _LISTING.get()
    if listing is not None:
        return listing()
    return _list_all(settings, plugins)


def _list_all(settings: Settings, plugins: Plugins) -> list[Session]:
    by_path: dict[str, Session] = {}  # by text: a thousand Path hashes cost more than the texts
    resolvers = plugins.resolvers(settings)
    generic = {name for name in resolvers if is_generic(name, plugins)}
    for resolver in resolvers.values():
        try:
            found = list(resolver.list_sessions(settings))
        except Exception:
            logger.warning("resolver %s failed; its sessions are left out", resolver.name, exc_info=True)
            continue
        for session in found:
            readable = readable_session(session)
            if readable is None:
                continue
            session = readable  # the same session, maybe without a subagent file
            text = os.fspath(session.path)
            known = by_path.get(text)
            if known is None or (known.resolver in generic and session.resolver not in generic):
                by_path[text] = session
    return list(by_path.values())


def current_session(event: HostEvent, settings: Settings, plugins: Plugins) -> Session | None:
    """The session a hook event comes from, as the resolvers see it (specific resolvers first).

    Finding it can mean listing a big project folder: whoever composes the answer to an event asks
    once and hands the session on (:func:`sidelight.features.hook.plan_event`)."""
    listing = _LISTING.get()
    if listing is not None:
        # Answering for the watcher: its listing already holds a known transcript's session, with
        # the most specific resolver's name (as identify finds it), and asking the resolver again
        # would list the project folder for its subagent files.
        listed = _listed_session(event, listing())
        if listed is not None:
            return listed
    resolvers = sorted(
        plugins.resolvers(settings, event.host).values(), key=lambda r: is_generic(r.name, plugins)
    )
    for resolver in resolvers:
        try:
            found = resolver.current(event, settings)
        except Exception:
            logger.warning("resolver %s failed to identify the session", resolver.name, exc_info=True)
            continue
        if found is not None:
            return readable_session(found)
    return None


#: The file names already said to be unreadable (each is said once per process: the watcher lists often).
_unreadable_said: set[str] = set()


def readable_session(session: Session) -> Session | None:
    """``session`` as the native core can read it: ``None`` when its transcript's name is not UTF-8, else
    without the extra transcripts (subagent files) whose names are not.

    A file name is bytes; Python gives a name that is not UTF-8 as a ``str`` with lone surrogates
    (``surrogateescape``), and ``sidelight._core`` takes UTF-8 paths only, so such a file cannot be
    read. It is left out with one log line per file and process, rather than failing every scan that
    includes it (one such file silenced a whole project's hooks and stopped the watcher). The check is
    ``str.isascii`` (a flag, no scan of the string) on the common path.
    """
    main = os.fspath(session.path)
    if not is_utf8_name(main):
        _say_unreadable(main)
        return None
    if not is_utf8_name(session.key):
        # A key read from a transcript's content (an id with a lone surrogate escaped in its JSON): the
        # state files keyed by it could not be written as UTF-8.
        _say_unreadable(main, "its session id is not valid Unicode; it is left out")
        return None
    extras = session.extra_paths
    if not extras or all(is_utf8_name(os.fspath(p)) for p in extras):
        return session
    import dataclasses  # the rare case: the hook path does not import it

    kept = []
    for path in extras:
        if is_utf8_name(os.fspath(path)):
            kept.append(path)
        else:
            _say_unreadable(os.fspath(path))
    return dataclasses.replace(session, extra_paths=tuple(kept))


def _say_unreadable(name: str, why: str | None = None) -> None:
    if name in _unreadable_said:
        return
    _unreadable_said.add(name)
    if why is None:
        logger.info("%s", describe(FileNameError(name)))
    else:
        logger.info("%s: %s", shown_path(name), why)


def _listed_session(event: HostEvent, sessions: Iterable[Session]) -> Session | None:
    """The listed session whose transcript is the hook event's (``None``: none, or no transcript)."""
    if event.transcript_path is None:
        return None
    wanted = str(event.transcript_path)
    for session in sessions:
        if str(session.path) == wanted:
            return session
    return None


def siblings_of(current: Session, sessions: Iterable[Session], scope: str | frozenset[str]) -> list[Session]:
    """The sessions ``current`` reports on: by default (``repository``, or its former name ``project``)
    the others whose working directories lie in its git repository (:mod:`sidelight.engine.repos`: the
    main checkout, any linked worktree, any subfolder), and outside git the others of its group;
    ``directory``: the others of its group; ``all``: every other; else those named."""
    out = []
    own = os.fspath(current.path)  # compared as text: a thousand Path comparisons cost more
    by_repository = scope == "repository" or scope == "project"
    group = current.group
    mine: Any = _UNKNOWN  # the reader's repository, looked up once a group differs
    same: dict[str, bool] = {}  # by group: in the reader's repository
    for session in sessions:
        if session.key == current.key or os.fspath(session.path) == own:
            continue
        if scope == "all":
            out.append(session)
        elif by_repository or scope == "directory":
            other = session.group
            if other == group:
                out.append(session)
            elif by_repository:
                if mine is _UNKNOWN:
                    from sidelight.engine.repos import repository_of, within  # only for other folders

                    mine = repository_of(current.directory)
                if mine is None:
                    continue
                known = same.get(other)
                if known is None:
                    known = same[other] = within(mine, session.directory) is not None
                if known:
                    out.append(session)
        elif session.name in scope or session.key in scope:
            out.append(session)
    return out


_UNKNOWN: object = object()


def identify(
    spec: str | Session | HostEvent, sessions: Sequence[Session], settings: Settings, plugins: Plugins
) -> Session | None:
    """The session ``spec`` names for the digest: a :class:`Session` as it is, a hook event's session, or
    the session whose key, id, name or transcript path is ``spec`` (``None``: none)."""
    if isinstance(spec, Session):
        return spec
    if isinstance(spec, HostEvent):
        # The listing already holds the session of a known transcript, with the most specific
        # resolver's name; the resolvers are asked only for a session whose file is not listed (new).
        return _listed_session(spec, sessions) or current_session(spec, settings, plugins)
    for session in sessions:
        if spec in (session.key, session.id, session.name) or spec == str(session.path):
            return session
    return None


def describe_spec(spec: object) -> str:
    """What a log line says of a session asked for by :func:`identify`."""
    if isinstance(spec, HostEvent):
        return f"host {spec.host}, session_id {spec.session_id}, transcript {spec.transcript_path}"
    return repr(spec)


def resolve_session(
    spec: str | None, settings: Settings, plugins: Plugins, format: str | None = None
) -> Session:
    """The session ``spec`` names, the one rule every command that takes a SESSION follows.

    0. ``None`` (no SESSION given): the most recent session of this folder's project
       (:func:`latest_session_here`).

    1. Something that exists on disk is a path, whatever it looks like (``notes.jsonl``, ``adir``): a
       file is that transcript, a folder its most recently modified transcript (``*.jsonl`` in it).
       A transcript a resolver lists is that session (its name and format), and so is a later file of
       its own transcript (:func:`sidelight.engine.paths.resumed_paths`); another is read as it is, its
       format detected.
    2. Else a session's name, key or id, exactly.
    3. Else a prefix (at least :data:`MIN_PREFIX` characters) of a session's id, key, key without its
       agent (``codex:``) or name: what ``sidelight sessions`` shows resolves, for every agent (Codex
       and Pi sessions are shown by their id's last eight characters).

    Several sessions that share one transcript count as one. ``format`` (``--format``; ``None`` or
    ``auto``: the session's own) is the format the transcript is read as. Raises
    :class:`SessionNotFoundError` or :class:`AmbiguousSessionError` (both :class:`LookupError`) with
    a message that lists the candidates or says how to list the sessions.
    """
    if spec is None:
        session = latest_session_here(settings, plugins)
        logger.info("no SESSION given: %s, the most recent here (%s)", session.name, session.path)
    else:
        session = _resolve(spec, settings, plugins)
    if format and format != "auto" and format != session.format:
        import dataclasses

        session = dataclasses.replace(session, format=format)
    return session


def _resolve(spec: str, settings: Settings, plugins: Plugins) -> Session:
    spec = spec.strip()
    if not spec:
        raise SessionNotFoundError("no session given; run 'sidelight sessions' to list them")
    path = Path(spec).expanduser()
    if _exists(path):
        transcript = _transcript_in(path, spec) if path.is_dir() else path
        resolved = transcript.resolve()
        listed = list_sessions(settings, plugins)
        for session in listed:
            if session.path == resolved or os.path.realpath(session.path) == str(resolved):
                return session
        from sidelight.engine.paths import resumed_paths  # a command's lookup, never a hook's

        # A later file of a session's own transcript (a resume) is that session, read whole.
        for session in listed:
            if any(os.path.realpath(p) == str(resolved) for p in resumed_paths(session, plugins)):
                return session
        return _path_session(resolved)
    sessions = list_sessions(settings, plugins)
    exact = [s for s in sessions if spec in (s.name, s.key, s.id)]
    if exact:
        return _one(spec, exact)
    if len(spec) >= MIN_PREFIX:
        by_prefix = [s for s in sessions if _prefix_of(spec, s)]
        if by_prefix:
            return _one(spec, by_prefix)
    if _looks_like_path(spec):
        raise SessionNotFoundError(f"{spec}: no such file; pass a transcript (*.jsonl) or a session name")
    if not sessions:
        raise SessionNotFoundError(
            f"no session matches {spec!r}: no sessions were found (see 'sidelight plugins' for the "
            "resolvers); pass a transcript path instead"
        )
    names = _listing(sorted({s.name for s in sessions}))
    raise SessionNotFoundError(
        f"no session matches {spec!r}; known: {names}; run 'sidelight sessions' to list them"
    )


def latest_session_here(settings: Settings, plugins: Plugins, directory: str | None = None) -> Session:
    """The most recently modified session of this folder's project (``directory``: the working
    directory), by the digest's rule (:func:`siblings_of` with the configured ``scope``: the
    repository by default): what ``read``, ``recap`` and ``context`` take when no SESSION is given.
    Raises :class:`SessionNotFoundError` that lists the candidates, as an unknown name does."""
    here = os.path.abspath(directory or os.getcwd())  # noqa: PTH109, PTH100 (a str, as groups are)
    sessions = list_sessions(settings, plugins)
    me = Session(key=f"cwd:{here}", name=here, path=Path(here), format="auto", group=here, resolver="cwd")
    mine = siblings_of(me, sessions, settings.scope)
    if mine:
        return max(mine, key=_modified)
    if not sessions:
        raise SessionNotFoundError(
            "no SESSION given and no sessions were found (see 'sidelight plugins' for the resolvers); "
            "pass a transcript path"
        )
    newest = sorted(sessions, key=_modified, reverse=True)
    names = _listing([f"{s.name} ({s.group})" for s in newest])
    raise SessionNotFoundError(
        f"no SESSION given and no session works in {here}; known: {names}; pass one, or run "
        "'sidelight sessions' to list them"
    )


def _modified(session: Session) -> float:
    try:
        return os.stat(session.path).st_mtime  # noqa: PTH116
    except OSError:
        return 0.0


def _exists(path: Path) -> bool:
    try:
        return path.exists()
    except (OSError, ValueError):  # a name too long, or with a NUL: not a file
        return False


def _prefix_of(spec: str, session: Session) -> bool:
    """Whether ``spec`` starts a session's id, key, key without its agent, or name (case-insensitive
    for ids: a hex id typed in capitals is the same id)."""
    key = session.key
    agent_free = key.split(":", 1)[1] if ":" in key else key
    wanted = spec.lower()
    return any(
        value and (value.startswith(spec) or value.lower().startswith(wanted))
        for value in (session.id or "", key, agent_free, session.name)
    )


def _transcript_in(folder: Path, spec: str) -> Path:
    """The most recently modified ``*.jsonl`` file in ``folder`` (``read DIR``: a Copilot session's
    folder, a project's), not under it: a folder given by mistake (``/``, ``~``) is not walked."""
    files = []
    for path in folder.glob("*.jsonl"):
        try:
            if path.is_file():
                files.append((path.stat().st_mtime, str(path), path))
        except OSError:
            pass
    if files:
        return max(files)[2]
    raise SessionNotFoundError(
        f"{spec} is a directory without transcripts (*.jsonl) in it: pass a transcript or a session name"
    )


def _one(spec: str, candidates: list[Session]) -> Session:
    by_path: dict[str, Session] = {}
    for session in candidates:
        by_path.setdefault(str(Path(session.path).absolute()), session)
    if len(by_path) == 1:
        # One transcript, maybe listed by two resolvers: prefer the one that answers to the name.
        return next((s for s in candidates if s.name == spec), candidates[0])
    shown = _listing([f"{s.name} ({s.key})" for s in by_path.values()])
    raise AmbiguousSessionError(
        f"{spec!r} matches {len(by_path)} sessions: {shown}; pass a key, a longer id or a path"
    )


def _listing(items: Sequence[str]) -> str:
    shown = ", ".join(items[:LISTED_CANDIDATES])
    more = len(items) - LISTED_CANDIDATES
    return shown + (f" (+{more} more)" if more > 0 else "")


def _looks_like_path(spec: str) -> bool:
    return os.sep in spec or "/" in spec or spec.endswith(".jsonl") or spec.startswith("~")


def _path_session(path: Path) -> Session:
    """A session for a transcript given by its path (its format is detected when it is read)."""
    path = path.resolve()
    check_file_name(str(path))
    return Session(
        key=f"path:{path}",
        name=path.stem,
        path=path,
        format="auto",
        group=str(path.parent),
        resolver="path",
    )
