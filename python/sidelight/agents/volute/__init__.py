"""Built-in template: volute minds (resolver ``volute``; formats ``claude-code`` and ``pi``).

A volute *mind* is a folder holding ``.volute/`` (and ``home/``, the agent's working directory). Its
named sessions (``main``, ``discord``, ``email``, …) are:

- **agent-sdk**: ``.volute/sessions/NAME.json`` = ``{"sessionId": ID}`` → the Claude Code transcript
  ``<claude dir>/projects/<sanitized <mind>/home>/ID.jsonl`` (the folder found by Claude Code's rule,
  by prefix when the name is over 200 characters; every Claude folder is tried), subagent files in
  ``extra_paths``. The legacy ``.volute/session.json`` counts as ``main``.
- **pi**: the newest ``*.jsonl`` (by mtime) in ``.volute/pi-sessions/NAME/``.

Names starting ``new-`` are skipped (volute keeps no transcript of them). When both kinds name the same
session, the agent-sdk one is kept.

**Records.** ``key`` = ``volute:<mind path>:<NAME>``, ``name`` = NAME, ``group`` = the mind folder
(resolved), ``cursor_file`` = ``<mind>/.volute/session-cursors.json`` (the seed's cursor file).

**Which minds.** ``Settings.volute_dirs`` (the configured ones, and ``VOLUTE_MIND_DIR``, which volute
sets for a mind's processes), the mind at or above the process's working directory (a hook runs in the
session's working directory, ``<mind>/home``), and every mind a ``current()`` call found in this
process. ``current(event)`` looks at the mind at or above ``event.cwd`` and above
``event.transcript_path``, then the configured ones, and returns the named session whose transcript is
``event.transcript_path`` (a pi transcript: any file of its ``pi-sessions/NAME/`` folder) or whose
``sessionId`` is ``event.session_id``.

**Only minds something vouches for.** A mind found around a path is one of ``Settings.volute_dirs`` or
directly in volute's minds folder (``Settings.volute_minds_dir``), never any folder with a
``.volute/``: a repository can ship ``.volute/pi-sessions/*/*.jsonl`` whose "user" prompts would
otherwise reach every digest as what the user's other sessions did
(:func:`find_volute_mind`).

**Other agents' rules.** Where a Claude Code session's transcript and subagents are, and what a Pi
transcript's id is, are those agents' own: asked of their resolvers (``folders``, ``session_at``),
only when a mind has such a session.

**Plain Claude Code.** A volute transcript is also a file under ``~/.claude/projects``, so the
``claude-code`` resolver lists it too; :func:`sidelight.engine.discovery.list_sessions` keeps one record per
path, preferring this more specific resolver, and asks it first for the current session.
"""

# Hot path (every prompt, over many files): plain str paths and os functions, no Path per file.
# ruff: noqa: PTH112, PTH118, PTH120

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from sidelight._fast import jsonio
from sidelight._fast._hookimpl import hookimpl
from sidelight._fast.logs import get_logger
from sidelight.engine.discovery import working_directory
from sidelight.engine.paths import open_regular, real
from sidelight.records import AgentSpec, HostEvent, ResolverSpec, Session

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from sidelight.config import Settings

__all__ = [
    "NAME",
    "current",
    "find_volute_mind",
    "is_volute_mind",
    "list_sessions",
    "mind_sessions",
    "minds",
    "roots",
]

logger = get_logger(__name__)

NAME = "volute"

#: The agents whose sessions a mind runs: the Claude Agent SDK's transcripts are Claude Code's.
_SDK = "claude-code"
_PI = "pi"


def is_volute_mind(path: str) -> bool:
    """A folder is laid out as a volute mind if it holds ``.volute/`` and one of ``.volute/sessions/``,
    ``.volute/pi-sessions/`` or ``home/`` (a bare ``~/.volute`` config folder does not make the
    user's home a mind). Whether it is trusted as one is :func:`find_volute_mind`'s question."""
    state = os.path.join(path, ".volute")
    if not os.path.isdir(state):
        return False
    return any(
        os.path.isdir(p)
        for p in (
            os.path.join(state, "sessions"),
            os.path.join(state, "pi-sessions"),
            os.path.join(path, "home"),
        )
    )


def find_volute_mind(path: str, settings: Settings) -> str | None:
    """The volute mind at or above ``path``, resolved, among the minds something outside the folder
    vouches for; else ``None``. Vouched for: a folder of ``settings.volute_dirs`` (the config file's
    ``volute_dirs``, ``SIDELIGHT_VOLUTE_DIRS``, or ``VOLUTE_MIND_DIR``, which volute sets for a mind's
    processes), or a folder directly in ``settings.volute_minds_dir`` (where volute creates its minds).

    Any repository can ship a ``.volute/`` whose session files speak as the user's sessions: a folder
    nobody vouched for is passed over as if it had none. A few string compares per folder up the path
    and a stat or two at a vouched one, remembered per path (no git, no walk of the repository)."""
    vouched = frozenset(real(os.fspath(folder)) for folder in settings.volute_dirs)
    minds_dir = settings.volute_minds_dir
    return _find_volute_mind(path, vouched, real(os.fspath(minds_dir)) if minds_dir is not None else None)


@lru_cache(maxsize=4096)
def _find_volute_mind(path: str, vouched: frozenset[str], minds_dir: str | None) -> str | None:
    current = real(path)
    while True:
        if (current in vouched or os.path.dirname(current) == minds_dir) and is_volute_mind(current):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def _resolver(name: str) -> ResolverSpec | None:
    """The resolver of the agent whose sessions a mind runs (imported only when a mind has one)."""
    from sidelight.plugins import get_plugins

    return get_plugins().resolver(name)


def _folders(cwd: Path, settings: Settings) -> list[Path]:
    """Where a Claude Code session run in ``cwd`` keeps its transcript, in each Claude folder."""
    sdk = _resolver(_SDK)
    if sdk is None or sdk.folders is None:
        return []
    return list(sdk.folders(os.fspath(cwd), settings))


def _at(name: str, path: Path) -> Session | None:
    """What agent ``name``'s resolver says of the session whose transcript is ``path``."""
    found = _resolver(name)
    return found.session_at(path) if found is not None and found.session_at is not None else None


def _pi_id(path: Path | str) -> str | None:
    session = _at(_PI, Path(path))
    return session.id if session is not None else None


def _history_paths(session: Session) -> list[Path]:
    """A mind's pi session keeps every transcript it had in its own folder (``sidelight history``)."""
    if session.format != _PI:
        return []
    return _jsonl_in(session.path.parent)


def _jsonl_in(folder: Path) -> list[Path]:
    try:
        with os.scandir(folder) as entries:
            return sorted(Path(e.path) for e in entries if e.name.endswith(".jsonl") and e.is_file())
    except OSError:
        return []


def _handoff_in_workspace(workspace: Path, settings: Settings) -> bool:
    """A mind reads the previous session's handoff in its own folder."""
    return find_volute_mind(os.fspath(workspace), settings) is not None


#: Minds found by ``current()`` in this process, listed from then on.
_seen_minds: dict[str, None] = {}


def minds(settings: Settings) -> list[str]:
    """The mind folders to list, resolved, each once."""
    found: dict[str, None] = {}
    for folder in settings.volute_dirs:
        r = real(os.fspath(folder))
        if is_volute_mind(r):
            found[r] = None
        else:
            logger.debug("volute: %s is not a mind (no .volute/ with sessions or home/)", folder)
    try:
        here = find_volute_mind(working_directory(), settings)
    except OSError:
        here = None
    if here is not None:
        found[here] = None
    found.update(_seen_minds)
    return list(found)


def roots(settings: Settings) -> list[Path]:
    """The folders a watcher follows: each mind's ``.volute`` and its Claude project folders."""
    out: list[Path] = []
    for mind in minds(settings):
        out.append(Path(mind, ".volute"))
        out.extend(project for project in _folders(Path(mind, "home"), settings) if project.is_dir())
    return out


def _read_session_id(path: str) -> str | None:
    try:
        with open_regular(path) as f:
            data = jsonio.loads(f.read())
    except (OSError, ValueError) as error:
        logger.debug("volute: cannot read %s: %s", path, error)
        return None
    value = data.get("sessionId") if isinstance(data, dict) else None
    return (value.strip() or None) if isinstance(value, str) else None


def _claude_transcript(settings: Settings, mind: str, session_id: str) -> Path | None:
    """The Claude Code transcript of a mind's session: the first Claude folder that has it, else
    where it will be written (the first Claude folder); ``None`` without any Claude folder."""
    home = Path(mind, "home")
    first: Path | None = None
    for project in _folders(home, settings):
        candidate = project / f"{session_id}.jsonl"
        if candidate.is_file():
            return candidate
        if first is None:
            first = candidate
    return first


def _newest_jsonl(folder: str) -> Path | None:
    newest: tuple[int, str] | None = None
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                if not entry.name.endswith(".jsonl"):
                    continue
                try:
                    if not entry.is_file():
                        continue
                    mtime = entry.stat().st_mtime_ns
                except OSError:
                    continue
                if newest is None or (mtime, entry.name) > newest:
                    newest = (mtime, entry.name)
    except OSError:
        return None
    return Path(folder, newest[1]) if newest is not None else None


def _names(folder: Path, suffix: str | None) -> list[str]:
    """Session names in a folder: files ``NAME<suffix>``, or sub-folders when ``suffix`` is ``None``."""
    try:
        with os.scandir(folder) as entries:
            if suffix is None:
                names = [e.name for e in entries if e.is_dir()]
            else:
                names = [e.name[: -len(suffix)] for e in entries if e.name.endswith(suffix) and e.is_file()]
    except OSError:
        return []
    return sorted(n for n in names if n and not n.startswith("new-") and not n.startswith("."))


def mind_sessions(settings: Settings, mind: str, include_missing: bool = False) -> Iterator[Session]:
    """One mind's named sessions; with ``include_missing``, also agent-sdk sessions whose transcript
    does not exist yet (for ``current``)."""
    state = Path(mind, ".volute")
    cursor_file = state / "session-cursors.json"
    named: set[str] = set()
    sdk: list[tuple[str, str]] = []
    for name in _names(state / "sessions", ".json"):
        sdk.append((name, os.fspath(state / "sessions" / f"{name}.json")))
    if "main" not in {n for n, _ in sdk} and (state / "session.json").is_file():
        sdk.append(("main", os.fspath(state / "session.json")))  # before volute moved it to sessions/
    for name, file in sdk:
        session_id = _read_session_id(file)
        if session_id is None:
            continue
        path = _claude_transcript(settings, mind, session_id)
        if path is None or not (include_missing or path.is_file()):
            continue
        named.add(name)
        own = _at(_SDK, path)
        yield Session(
            key=f"{NAME}:{mind}:{name}",
            name=name,
            path=path,
            format="claude-code",
            group=mind,
            resolver=NAME,
            id=session_id,
            extra_paths=own.extra_paths if own is not None else (),
            cursor_file=cursor_file,
        )
    for name in _names(state / "pi-sessions", None):
        if name in named:
            logger.debug(
                "volute: %s has both an agent-sdk and a pi session %r; keeping agent-sdk", mind, name
            )
            continue
        newest = _newest_jsonl(os.fspath(state / "pi-sessions" / name))
        if newest is None:
            continue
        yield Session(
            key=f"{NAME}:{mind}:{name}",
            name=name,
            path=newest,
            format="pi",
            group=mind,
            resolver=NAME,
            id=_pi_id(newest),
            cursor_file=cursor_file,
        )


def list_sessions(settings: Settings) -> Iterator[Session]:
    """The named sessions of every known mind (see the module docstring)."""
    for mind in minds(settings):
        try:
            yield from mind_sessions(settings, mind)
        except Exception as error:  # an odd mind never hides the others
            logger.debug("volute: skipping %s: %s", mind, error)


def _candidate_minds(event: HostEvent, settings: Settings) -> Iterable[str]:
    found: dict[str, None] = {}
    for start in (event.cwd, event.transcript_path.parent if event.transcript_path else None):
        if start is not None:
            mind = find_volute_mind(os.fspath(start), settings)
            if mind is not None:
                found[mind] = None
    for folder in settings.volute_dirs:
        r = real(os.fspath(folder))
        if is_volute_mind(r):
            found[r] = None
    return found


def current(event: HostEvent, settings: Settings) -> Session | None:
    """The named volute session a hook event comes from, else ``None``."""
    try:
        return _current(event, settings)
    except (OSError, ValueError) as error:
        logger.debug("volute: cannot identify the session of %s: %s", event, error)
        return None


def _current(event: HostEvent, settings: Settings) -> Session | None:
    given = real(os.fspath(event.transcript_path)) if event.transcript_path else None
    for mind in _candidate_minds(event, settings):
        pi_root = os.path.join(mind, ".volute", "pi-sessions") + os.sep
        for session in mind_sessions(settings, mind, include_missing=True):
            path = real(os.fspath(session.path))
            same_file = given is not None and path == given
            same_pi_folder = (
                given is not None
                and session.format == "pi"
                and given.startswith(pi_root)
                and os.path.dirname(given) == os.path.dirname(path)
            )
            same_id = event.session_id is not None and session.id == event.session_id
            if same_file or same_pi_folder or same_id:
                _seen_minds[mind] = None
                if same_pi_folder and not same_file and given is not None:
                    return _with_path(session, Path(given))
                return session
        if given is not None and given.startswith(pi_root):
            # A pi session whose folder holds no transcript yet (Pi writes after the first reply).
            name = os.path.relpath(os.path.dirname(given), pi_root.rstrip(os.sep))
            if name and os.sep not in name and not name.startswith(("new-", ".")):
                _seen_minds[mind] = None
                return Session(
                    key=f"{NAME}:{mind}:{name}",
                    name=name,
                    path=Path(given),
                    format="pi",
                    group=mind,
                    resolver=NAME,
                    id=_pi_id(given),
                    cursor_file=Path(mind, ".volute", "session-cursors.json"),
                )
    return None


def _with_path(session: Session, path: Path) -> Session:
    from dataclasses import replace

    return replace(session, path=path, id=_pi_id(path))


RESOLVER = ResolverSpec(
    name=NAME,
    list_sessions=list_sessions,
    current=current,
    roots=roots,
    history_paths=_history_paths,
    handoff_in_workspace=_handoff_in_workspace,
    description="volute minds' named sessions (.volute/sessions/*.json, .volute/pi-sessions/*/)",
)


@hookimpl
def sidelight_resolvers() -> Iterator[ResolverSpec]:
    yield RESOLVER


# -- the agent -------------------------------------------------------------------------------------------


@hookimpl
def sidelight_agents() -> Iterator[AgentSpec]:
    from sidelight.records import AgentSpec

    # A mind's sessions are other agents' transcripts (their formats, hooks and installers); volute adds
    # the names and where its minds live.
    yield AgentSpec(
        name=NAME,
        title="volute",
        resolver=NAME,
        variables=("VOLUTE_HOME", "VOLUTE_MINDS_DIR"),
    )
