"""Built-in template: the Gemini CLI (format ``gemini``, resolver ``gemini``, injector ``gemini``).

**Sessions.** Every ``<gemini dir>/tmp/<project>/chats/session-<ISO minute>-<id8>.jsonl``
(``Settings.gemini_dir``: ``$GEMINI_CLI_HOME/.gemini``, else ``~/.gemini``), where ``<id8>`` is the
first eight characters of the session id. One session may have several files: a ``--resume`` in a
later minute than the session started writes ``session-<that minute>-<same id8>.jsonl`` holding only a
header and the CLI's context, while the conversation goes on in the first file. They are folded into
one session: the first file (by name, that is by time) is its transcript, the others and the
subagents' chats (``chats/<session id>/*.jsonl``) its extra files.

**Records.** ``key`` = ``gemini:<id8>``, ``id`` = ``name`` = ``<id8>``: taken from the file name, so a
listing reads no file (Gemini session ids are random UUIDs, so eight characters tell them apart; the
full id is only inside the file), unless the chat holds the summary Gemini makes of it (a
``{"$set": {"summary": …}}`` line): that is its name, read when it is first shown
(:class:`sidelight.engine.paths.TitledSession`).

**Group.** The project's directory: the key of ``<gemini dir>/projects.json`` (``{"projects":
{"/abs/dir": "<project>"}}``) that names the folder, else the folder's ``.project_root`` file, else
(for a hook) the event's ``cwd``, else the folder itself. ``projects.json`` is read once per process and
change (keyed by size and mtime).

**Current session.** The chat at ``event.transcript_path`` (the hook input has it) when it lies under
the Gemini folder or the event comes from the ``gemini`` host; else the session whose ``<id8>`` starts
``event.session_id``; else ``None``.

**Host.** ``sidelight hook gemini`` reads Gemini's command hook input (``session_id``,
``transcript_path``, ``cwd``, ``hook_event_name``: ``BeforeAgent`` (each prompt), ``SessionStart``,
``SessionEnd``; ``prompt``; ``source`` / ``reason``) and prints ``{"hookSpecificOutput": {"hookEventName":
EVENT, "additionalContext": TEXT}}``. Gemini stores that text in the user's message as a
``<hook_context>`` part (a ``SessionStart`` context before the prompt's own text), which the decoder
leaves out, and gives the ``BeforeAgent`` hook the prompt with such a prefix, which is dropped here.
"""

# Hot path (every prompt): plain str paths and os functions, no Path per file.
# ruff: noqa: PTH116, PTH118, PTH119, PTH120

from __future__ import annotations

import os
from pathlib import Path

from sidelight._fast import jsonio
from sidelight._fast._hookimpl import hookimpl
from sidelight._fast.logs import get_logger
from sidelight.engine.paths import TitledSession, open_regular, own_transcript, quietly, real
from sidelight.formats import DEFAULT_CATEGORIES
from sidelight.records import AgentSpec, EventName, FormatSpec, HostEvent, InjectorSpec, ResolverSpec, Session

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping
    from typing import Any

    from sidelight.config import Settings

__all__ = [
    "EVENTS",
    "FORMAT",
    "NAME",
    "current",
    "list_sessions",
    "read_hook",
    "roots",
    "session_for_path",
    "strip_hook_context",
]

logger = get_logger(__name__)

NAME = "gemini"

FORMAT = FormatSpec(
    name=NAME,
    decoder="gemini",
    categories=DEFAULT_CATEGORIES["gemini"],
    # Our digest is stored as a `<hook_context>` part of the user's message, which the decoder leaves out.
    injected_markers=("[Session Activity]",),
    description="Gemini CLI chats (~/.gemini/tmp/<project>/chats/session-<time>-<id8>.jsonl)",
    # The CLI saves the summary it makes of a chat as a metadata update line.
    title_lines=(("summary", None, ("$set", "summary")),),
    # A resume in a later minute writes a new file beside the first; subagents' chats are below.
    resumes_beside=True,
)

#: Gemini's hook events, and the host event each one is.
EVENTS: Mapping[str, EventName] = {
    "BeforeAgent": "UserPromptSubmit",
    "SessionStart": "SessionStart",
    "SessionEnd": "SessionEnd",
    "BeforeTool": "PreToolUse",  # of a write tool only: the stale-write guard's (docs/guard.md)
    "AfterTool": "PostToolUse",  # of every tool: the news within the turn (docs/digest.md)
}
#: Gemini's tools that write a file: its ``BeforeTool`` hook, matched to these
#: (``install.GEMINI_MATCHERS``), is the stale-write guard's.
WRITE_TOOLS = ("write_file", "replace")
#: The event names the answer is given under, by host event.
_OUTPUT_EVENTS = {host: gemini for gemini, host in EVENTS.items()}

_HOOK_OPEN = "<hook_context>"
_HOOK_CLOSE = "</hook_context>"

#: ``<gemini dir>`` → ((size, mtime), {project folder name: directory}).
_projects: dict[str, tuple[tuple[int, int], dict[str, str]]] = {}
#: A project folder → the directory its ``.project_root`` names (``""``: none).
_project_roots: dict[str, str] = {}


def gemini_tmp(settings: Settings) -> Path | None:
    return settings.gemini_dir / "tmp" if settings.gemini_dir is not None else None


def roots(settings: Settings) -> list[Path]:
    folder = gemini_tmp(settings)
    return [folder] if folder is not None and folder.is_dir() else []


def _project_dirs(gemini_dir: str) -> dict[str, str]:
    """``projects.json`` reversed: each project folder's name → its directory (cached by stat)."""
    path = os.path.join(gemini_dir, "projects.json")
    try:
        st = os.stat(path)
    except OSError:
        return {}
    stamp = (st.st_size, st.st_mtime_ns)
    cached = _projects.get(gemini_dir)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    names: dict[str, str] = {}
    try:
        with open_regular(path) as file:
            data = jsonio.loads(file.read())
        projects = data.get("projects") if isinstance(data, dict) else None
        for directory, name in (projects or {}).items():
            if isinstance(directory, str) and isinstance(name, str):
                names[name] = directory
    except (OSError, ValueError, AttributeError) as error:
        logger.debug("gemini: cannot read %s: %s", path, error)
    _projects[gemini_dir] = (stamp, names)
    return names


def _project_root(folder: str) -> str:
    cached = _project_roots.get(folder)
    if cached is None:
        try:
            with open_regular(os.path.join(folder, ".project_root")) as file:
                cached = file.read(4096).decode("utf-8").strip()
        except (OSError, ValueError):
            cached = ""
        _project_roots[folder] = cached
    return cached


def _group(folder: str, fallback: Path | None = None) -> str:
    """The directory of a project folder ``<gemini dir>/tmp/<name>`` (see the module docstring)."""
    gemini_dir = os.path.dirname(os.path.dirname(folder))
    directory = _project_dirs(gemini_dir).get(os.path.basename(folder)) or _project_root(folder)
    if directory:
        return real(directory)
    return real(os.fspath(fallback)) if fallback is not None else folder


def _id8(name: str) -> str | None:
    """The session's short id in a chat's file name ``session-<time>-<id8>.jsonl``."""
    if not (name.startswith("session-") and name.endswith(".jsonl")):
        return None
    short = name[: -len(".jsonl")].rpartition("-")[2]
    return short.lower() if len(short) == 8 and all(c in "0123456789abcdefABCDEF" for c in short) else None


def _chats(chats: str) -> tuple[dict[str, list[str]], dict[str, str]]:
    """A chats folder's files by short id (oldest first), and its subagent folders by short id."""
    files: dict[str, list[str]] = {}
    subagents: dict[str, str] = {}
    with os.scandir(chats) as entries:
        for entry in entries:
            short = _id8(entry.name)
            if short is not None:
                if entry.is_file():
                    files.setdefault(short, []).append(entry.path)
            elif entry.is_dir() and len(entry.name) >= 8:
                subagents[entry.name[:8].lower()] = entry.path
    for paths in files.values():
        paths.sort()
    return files, subagents


def _subagent_files(folder: str | None) -> list[Path]:
    if folder is None:
        return []
    try:
        with os.scandir(folder) as entries:
            return sorted(Path(e.path) for e in entries if e.name.endswith(".jsonl") and e.is_file())
    except OSError:
        return []


def _session(paths: list[str], short: str, group: str, subagents: str | None) -> Session:
    return TitledSession(
        key=f"{NAME}:{short}",
        path=Path(paths[0]),
        format=NAME,
        group=group,
        resolver=NAME,
        id=short,
        extra_paths=(*(Path(p) for p in paths[1:]), *_subagent_files(subagents)),
        title_lines=FORMAT.title_lines,
        fallback=short,
    )


def list_sessions(settings: Settings) -> Iterator[Session]:
    """Every Gemini CLI session under ``<gemini dir>/tmp/*/chats/``."""
    top = gemini_tmp(settings)
    if top is None:
        return
    try:
        with os.scandir(real(os.fspath(top))) as entries:  # resolved once: canonical paths below
            folders = sorted(e.path for e in entries if e.is_dir())
    except OSError:
        return
    for folder in folders:
        try:
            yield from _folder_sessions(folder)
        except Exception as error:  # an odd folder never hides the others
            logger.debug("gemini: skipping %s: %s", folder, error)


def _folder_sessions(folder: str, fallback: Path | None = None) -> Iterator[Session]:
    try:
        files, subagents = _chats(os.path.join(folder, "chats"))
    except (FileNotFoundError, NotADirectoryError):
        return
    if not files:
        return
    group = _group(folder, fallback)
    for short in sorted(files):
        yield _session(files[short], short, group, subagents.get(short))


def session_for_path(path: Path, event: HostEvent | None = None) -> Session | None:
    """The Gemini session whose chat (any of its files) is ``path``."""
    short = _id8(path.name)
    if short is None:
        return None
    chats = os.fspath(path.parent)
    folder = os.path.dirname(chats)
    fallback = event.cwd if event is not None else None
    try:
        files, subagents = _chats(chats)
    except OSError:
        files, subagents = {}, {}
    paths = files.get(short) or [os.fspath(path)]
    return _session(paths, short, _group(folder, fallback), subagents.get(short))


def _current(event: HostEvent, settings: Settings) -> Session | None:
    top = gemini_tmp(settings)
    if event.transcript_path is not None:
        path = own_transcript(event, top, NAME)
        return session_for_path(path, event) if path is not None else None
    if event.session_id and event.host == NAME:
        wanted = event.session_id[:8].lower()
        for session in list_sessions(settings):
            if session.id == wanted:
                return session
    return None


current = quietly(NAME, _current)


def strip_hook_context(text: str) -> str:
    """A prompt without the ``<hook_context>`` blocks Gemini put before it (a ``SessionStart`` hook's
    context, ours among them): what the person typed."""
    rest = text.lstrip()
    while rest.startswith(_HOOK_OPEN):
        end = rest.find(_HOOK_CLOSE)
        if end < 0:
            return ""
        rest = rest[end + len(_HOOK_CLOSE) :].lstrip()
    return rest


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def read_hook(payload: Mapping[str, Any]) -> HostEvent | None:
    """A Gemini CLI command hook's input as a :class:`HostEvent` (``None``: not an event we handle)."""
    if not isinstance(payload, dict):
        return None
    event = EVENTS.get(payload.get("hook_event_name"))  # type: ignore[arg-type]
    if event is None or (event == "PreToolUse" and payload.get("tool_name") not in WRITE_TOOLS):
        return None
    prompt = payload.get("prompt")
    transcript = _text(payload.get("transcript_path"))
    cwd = _text(payload.get("cwd"))
    return HostEvent(
        host=NAME,
        event=event,
        session_id=_text(payload.get("session_id")),
        transcript_path=Path(transcript) if transcript else None,
        cwd=Path(cwd) if cwd else None,
        prompt=strip_hook_context(prompt) if isinstance(prompt, str) else None,
        raw=payload,
    )


def render_hook(event: HostEvent, text: str | None) -> str | None:
    """``{"hookSpecificOutput": {"hookEventName": GEMINI EVENT, "additionalContext": TEXT}}``, or ``None``.

    Gemini HTML-escapes the ``<`` and ``>`` of the text it passes on (``->`` would reach the model as
    ``-&gt;``), so the text is sent without them (:func:`sidelight.redact.escape_proof`)."""
    from sidelight.redact import escape_proof  # loaded by the digest already

    if not text:
        return None
    text = escape_proof(text)
    return jsonio.dumps(
        {"hookSpecificOutput": {"hookEventName": _OUTPUT_EVENTS[event.event], "additionalContext": text}},
        ensure_ascii=False,
    )


RESOLVER = ResolverSpec(
    name=NAME,
    list_sessions=list_sessions,
    current=current,
    roots=roots,
    description="Gemini CLI sessions under ~/.gemini/tmp; grouped by project directory (projects.json)",
)


@hookimpl
def sidelight_formats() -> Iterator[FormatSpec]:
    yield FORMAT


@hookimpl
def sidelight_resolvers() -> Iterator[ResolverSpec]:
    yield RESOLVER


def render_refusal(event: HostEvent, reason: str) -> str | None:
    """``{"decision": "deny", "reason": REASON}``: the tool does not run, and the model gets ``Tool
    execution blocked: REASON`` (without ``<`` and ``>``, which Gemini escapes)."""
    from sidelight.redact import escape_proof

    return jsonio.dumps({"decision": "deny", "reason": escape_proof(reason)}, ensure_ascii=False)


@hookimpl
def sidelight_injectors() -> Iterator[InjectorSpec]:
    yield InjectorSpec(
        name=NAME,
        read_event=read_hook,
        render=render_hook,
        description="Gemini CLI command hooks (BeforeAgent, SessionStart, SessionEnd; BeforeTool of a write)",
        refuse=render_refusal,
    )


# -- the agent -------------------------------------------------------------------------------------------


def injected_values(line: Mapping[str, Any]) -> Iterator[str]:
    """Where Gemini CLI keeps a hook's context: a ``<hook_context>`` part of the user's message (each
    up to its closing tag)."""
    if line.get("type") == "user":
        for text in jsonio.strings(line.get("content")):
            if text.lstrip().startswith(_HOOK_OPEN):
                yield from text.split(_HOOK_CLOSE)


@hookimpl
def sidelight_agents() -> Iterator[AgentSpec]:
    from sidelight.records import AgentSpec, HostHook

    yield AgentSpec(
        name=NAME,
        title="Gemini CLI",
        formats=(NAME,),
        resolver=NAME,
        hosts=(NAME,),
        installer=NAME,
        # BeforeTool's additionalContext is not sent; AfterTool's joins the tool's result.
        hooks=(
            HostHook("prompt", "BeforeAgent", {"inject"}),
            HostHook("start", "SessionStart", {"inject"}),
            HostHook("end", "SessionEnd"),
            HostHook("before_tool", "BeforeTool", {"refuse"}),
            HostHook("after_tool", "AfterTool", {"inject"}),
        ),
        timeout_unit="ms",
        variables=("GEMINI_CLI_HOME",),
        injected_where="Gemini CLI's <hook_context> part of the prompt",
        injected_values=injected_values,
    )


# --- The installer (``sidelight install`` / ``uninstall``): this folder's ``install.py``, imported only
# when the installers are asked for (a prompt hook imports this module, and needs none of it).

if TYPE_CHECKING:
    from sidelight.records import InstallerSpec


@hookimpl
def sidelight_installers() -> Iterator[InstallerSpec]:
    from sidelight.agents.gemini.install import INSTALLER

    yield INSTALLER
