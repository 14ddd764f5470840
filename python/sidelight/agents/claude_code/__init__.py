"""Built-in template: Claude Code (format ``claude-code``, resolver ``claude-code``).

**Sessions.** Every ``<claude dir>/projects/<project>/<session id>.jsonl`` of every folder in
``Settings.claude_dirs`` (``CLAUDE_CONFIG_DIR``, comma-separated, else ``~/.claude`` and
``~/.config/claude``) that exists. Subagent transcripts are not sessions of their own: the new layout
``<project>/<session id>/subagents/**/agent-*.jsonl`` (workflows nested below included) and the old flat
``<project>/agent-<id>.jsonl`` (its lines carry the parent's ``sessionId``) go into the parent's
``extra_paths``.

**Records.** ``key`` = ``claude-code:<session id>``, ``id`` = the session id, ``name`` = the transcript's
title (newest ``custom-title``, else ``ai-title``, else ``summary`` line, read from a bounded head and
tail) else the first eight characters of the id.

**Group.** The project's working directory, absolute and resolved: the ``cwd`` of the first line that
carries one in the head of one transcript of the project folder (read once per folder and process),
else the project folder's path. Pi and Codex sessions use their working directory too, so sessions of
one project see each other whichever agent runs them.

**Current session.** For a hook event (not from another built-in agent's host): the transcript at
``event.transcript_path`` (symlinks resolved), else the session whose id is ``event.session_id``, else,
since Claude Code writes a transcript only when it has something to write, a session built from
``event.session_id`` and ``event.cwd`` (the project folder found by the same rule Claude Code uses:
every non-alphanumeric character of the cwd becomes ``-``; over 200 characters, cut and given a hash
suffix, found by prefix) under the first Claude folder.

A transcript that the volute resolver also lists is kept once, under volute's name:
:func:`sidelight.engine.discovery.list_sessions` keeps the more specific resolver's record for a path, and
asks
specific resolvers first for the current session.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from sidelight._fast import jsonio
from sidelight._fast._hookimpl import hookimpl
from sidelight._fast.logs import get_logger
from sidelight._fast.patterns import Pattern
from sidelight.agents import other_agents_hosts
from sidelight.engine.paths import (
    HEAD_BYTES,
    TitledSession,
    child_path,
    head_string_field,
    js_hash36,
    read_head,
    real,
    short_id,
    stat_key,
)
from sidelight.formats import DEFAULT_CATEGORIES
from sidelight.hostio import command_hook_injector
from sidelight.records import AgentSpec, FormatSpec, HostEvent, InjectorSpec, ResolverSpec, Session

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
    from typing import Any

    from sidelight.config import Settings
    from sidelight.lines import Subagent
    from sidelight.records import Liveness

__all__ = [
    "CLAUDE_MAX_SANITIZED",
    "FORMAT",
    "NAME",
    "TITLE_LINES",
    "WRITE_TOOLS",
    "claude_dirs",
    "claude_flat_parent",
    "claude_project_dir",
    "claude_project_dirs",
    "claude_sanitize",
    "claude_subagent",
    "claude_subagent_paths",
    "claude_subagents_under",
    "current",
    "list_sessions",
    "live_sessions",
    "roots",
    "session_for_path",
]

logger = get_logger(__name__)

NAME = "claude-code"

# Where Claude Code keeps a session's files, and what a file of it says. Hot path (every prompt, over
# many files): plain str paths and os functions, no Path per file.

#: Claude Code's tools that write a file: its ``PreToolUse`` hook, matched to these, is the stale-write
#: guard's (docs/guard.md).
WRITE_TOOLS = ("Write", "Edit", "MultiEdit", "NotebookEdit")

#: Claude Code cuts a sanitized project directory name to this many characters and adds ``-<hash>``.
CLAUDE_MAX_SANITIZED = 200

#: A transcript's title lines, in order of precedence (``FormatSpec.title_lines``): the newest
#: ``custom-title``, else ``ai-title``, else ``summary`` line (older versions wrote ``summary`` first).
TITLE_LINES: tuple[tuple[str, str | None, tuple[str, ...]], ...] = (
    ("custom-title", "type", ("customTitle",)),
    ("ai-title", "type", ("aiTitle",)),
    ("summary", "type", ("summary",)),
)

#: Every ASCII character but a letter or a digit, as ``-`` (Claude Code's project folder names).
_ASCII_DASHES = {c: "-" for c in range(128) if not chr(c).isalnum()}


def claude_sanitize(cwd: str) -> str:
    """Claude Code's project directory name for ``cwd``: every non-alphanumeric character becomes
    ``-``; a name over 200 characters is cut to 200 and given ``-<hash>`` (the Claude Agent SDK's
    stand-in for the CLI's hash, :func:`sidelight.engine.paths.js_hash36`: the CLI uses ``Bun.hash``, so
    existing folders are looked up by prefix, :func:`claude_project_dir`)."""
    # Claude Code is JavaScript: it replaces UTF-16 code units, so a character outside the BMP
    # becomes two dashes.
    if cwd.isascii():
        name = cwd.translate(_ASCII_DASHES)
    else:
        name = "".join(c if c.isascii() and c.isalnum() else "--" if ord(c) > 0xFFFF else "-" for c in cwd)
    if len(name) <= CLAUDE_MAX_SANITIZED:
        return name
    return f"{name[:CLAUDE_MAX_SANITIZED]}-{js_hash36(cwd)}"


def _canonical_cwd(cwd: Path | str) -> str:
    path = real(os.fspath(cwd))
    if path.isascii():
        return path  # already NFC, without importing unicodedata for every prompt
    import unicodedata

    return unicodedata.normalize("NFC", path)


def claude_project_dir(projects: Path, cwd: Path | str) -> Path:
    """The folder of ``cwd``'s transcripts under a ``projects`` folder: the exact sanitized name if it
    exists, else (for a name over 200 characters) an existing ``<first 200>-<hash>`` folder found by
    prefix, else the name sidelight would give it (which may not exist yet)."""
    canonical = _canonical_cwd(cwd)
    name = claude_sanitize(canonical)
    candidate = projects / name
    if len(name) <= CLAUDE_MAX_SANITIZED or candidate.is_dir():
        return candidate
    prefix = name[:CLAUDE_MAX_SANITIZED] + "-"
    try:
        with os.scandir(projects) as entries:
            for entry in entries:
                if entry.name.startswith(prefix) and entry.is_dir():
                    return Path(entry.path)
    except OSError:
        pass
    return candidate


def claude_project_dirs(claude_dir: Path) -> Iterator[os.DirEntry[str]]:
    """The project folders of one Claude Code configuration folder (none if it does not exist), under
    its resolved path, so the transcripts found there have canonical paths without resolving each."""
    try:
        with os.scandir(real(os.fspath(claude_dir / "projects"))) as entries:
            dirs = [e for e in entries if e.is_dir()]
    except OSError:
        return
    yield from dirs


def claude_dirs(settings: Settings) -> list[Path]:
    """The Claude folders, each once (``~/.config/claude`` may be a link to ``~/.claude``)."""
    seen: set[str] = set()
    out = []
    for d in settings.claude_dirs:
        r = real(os.fspath(d))
        if r not in seen:
            seen.add(r)
            out.append(d)
    return out


_claude_flat_parents: dict[tuple[str, int, int], str | None] = {}


def claude_subagents_under(session_folder: Path) -> list[Path]:
    """``agent-*.jsonl`` anywhere under ``<session>/subagents/`` (workflow runs nest them deeper)."""
    found: list[Path] = []
    top = session_folder / "subagents"
    for folder, dirs, files in os.walk(top, onerror=lambda error: None):
        dirs.sort()
        found.extend(
            Path(folder, f) for f in sorted(files) if f.startswith("agent-") and f.endswith(".jsonl")
        )
    return found


def claude_flat_parent(path: str) -> str | None:
    """The parent session of an old-layout ``agent-<id>.jsonl``: the ``sessionId`` of its lines."""
    key = stat_key(path)
    if key is None:
        return None
    if key not in _claude_flat_parents:
        _claude_flat_parents[key] = head_string_field(path, "sessionId")
    return _claude_flat_parents[key]


_SIDECHAIN = Pattern(rb'"isSidechain"\s*:\s*true')


def claude_subagent(path: Path | str) -> Subagent | None:
    """The subagent whose own transcript ``path`` is (``None``: not a subagent's), with what its
    ``agent-<id>.meta.json`` says: ``agentType`` (``general-purpose``, ``Explore``, a custom agent's
    name) and ``description`` (the parent's few words for the task); older versions wrote no such
    file (``FormatSpec.subagent``).

    A subagent's transcript (``<session>/subagents/agent-<id>.jsonl``, or an old flat
    ``agent-<id>.jsonl`` beside its parent) starts with the parent's task for it, a line marked
    ``isSidechain``; a session's own transcript never does (older versions wrote a subagent's turns
    inline, after the session's own first prompt).
    """
    head = read_head(path, HEAD_BYTES)
    end = head.find(b"\n")
    first = head if end < 0 else head[:end]
    if b'"isSidechain"' not in first or not _SIDECHAIN().search(first):
        return None
    from sidelight.lines import Subagent  # (a recap's question, never a prompt's)

    meta: object = None
    text = os.fspath(path)
    if text.endswith(".jsonl"):
        # Read as a transcript's head is: a FIFO named like the meta file holds nothing up.
        try:  # noqa: SIM105 (contextlib: an import on every prompt)
            meta = jsonio.loads(read_head(text[: -len(".jsonl")] + ".meta.json", HEAD_BYTES) or b"null")
        except (ValueError, RecursionError):
            pass
    if not isinstance(meta, dict):
        return Subagent()

    def field(name: str) -> str | None:
        value = meta.get(name)
        return value.strip() or None if isinstance(value, str) else None

    return Subagent(agent_type=field("agentType"), description=field("description"))


def claude_subagent_paths(project: Path, session_id: str) -> tuple[Path, ...]:
    """The subagent transcripts of one session (new layout, then old flat files naming it)."""
    found = claude_subagents_under(project / session_id)
    try:
        with os.scandir(project) as entries:
            flat = sorted(
                (e.path for e in entries if e.name.startswith("agent-") and e.name.endswith(".jsonl")),
            )
    except OSError:
        flat = []
    found.extend(Path(p) for p in flat if claude_flat_parent(p) == session_id)
    return tuple(found)


#: Text sidelight injects (a hook's ``additionalContext``) starts with this; Claude Code stores it as an
#: ``attachment`` line, which the decoder never counts, so the marker is for readers of assistant text.
INJECTED_MARKERS = ("[Session Activity]",)

FORMAT = FormatSpec(
    name=NAME,
    decoder="claude-code",
    categories=DEFAULT_CATEGORIES["claude-code"],
    injected_markers=INJECTED_MARKERS,
    description="Claude Code transcripts (~/.claude/projects/<project>/<session>.jsonl)",
    title_lines=TITLE_LINES,
    subagent=claude_subagent,
)

#: Hosts whose events are never Claude Code sessions: the other built-in agents' (their index says).
_OTHER_HOSTS = other_agents_hosts(__name__)

#: How many transcripts of a project folder are tried for its ``cwd``.
_CWD_TRIES = 4

_project_cwds: dict[str, str] = {}


def roots(settings: Settings) -> list[Path]:
    """The ``projects`` folders of the Claude folders that exist."""
    return [d / "projects" for d in claude_dirs(settings) if (d / "projects").is_dir()]


def list_sessions(settings: Settings) -> Iterator[Session]:
    """Every Claude Code session under the Claude folders, subagents folded into their parents."""
    for claude_dir in claude_dirs(settings):
        for project in claude_project_dirs(claude_dir):
            try:
                yield from _project_sessions(Path(project.path))
            except Exception as error:  # a folder that vanished or cannot be read never hides the others
                logger.debug("skipping %s: %s", project.path, error)


def _project_sessions(project: Path) -> Iterator[Session]:
    mains: dict[str, os.DirEntry[str]] = {}
    folders: dict[str, str] = {}
    flat_agents: list[os.DirEntry[str]] = []
    with os.scandir(project) as entries:
        for entry in entries:
            name = entry.name
            if name.endswith(".jsonl"):
                if name.startswith("agent-"):
                    flat_agents.append(entry)
                elif _is(entry.is_file):
                    mains[name[:-6]] = entry
            elif _is(entry.is_dir):
                folders[name] = entry.path
    if not mains:
        return
    extras: dict[str, list[Path]] = {}
    for session_id, folder in folders.items():
        if session_id in mains:
            found = claude_subagents_under(Path(folder))
            if found:
                extras[session_id] = found
    for agent in sorted(flat_agents, key=lambda e: e.name):
        parent = claude_flat_parent(agent.path)
        if parent in mains:
            extras.setdefault(parent, []).append(Path(agent.path))
    group = _project_group(project, (e.path for e in mains.values()))
    for session_id in sorted(mains):
        entry = mains[session_id]
        yield TitledSession.listed(
            f"{NAME}:{session_id}",
            child_path(project, entry.name, entry.path),
            NAME,
            group,
            NAME,
            session_id,
            tuple(extras.get(session_id, ())),
            TITLE_LINES,
            short_id(session_id),
        )


def _is(test: Callable[[], bool]) -> bool:
    """``entry.is_file`` / ``is_dir``, False for an entry that cannot be told (a symlink loop raises
    ``ELOOP``): one such entry must not hide the folder's other sessions."""
    try:
        return test()
    except OSError:
        return False


def _project_group(project: Path, transcripts: Iterable[str], fallback_cwd: Path | None = None) -> str:
    """The working directory of a project folder (see the module docstring)."""
    key = os.fspath(project)
    cached = _project_cwds.get(key)
    if cached is not None:
        return cached
    for n, path in enumerate(transcripts):
        if n >= _CWD_TRIES:
            break
        cwd = head_string_field(path, "cwd")
        if cwd:
            _project_cwds[key] = group = real(cwd)
            return group
    if fallback_cwd is not None:
        return real(os.fspath(fallback_cwd))
    return real(key)


def session_for_path(path: Path, event: HostEvent | None = None) -> Session:
    """The session whose main transcript is ``path`` (which may not exist yet)."""
    project = path.parent
    session_id = path.stem
    group = _project_group(project, _transcripts(path), event.cwd if event is not None else None)
    return TitledSession(
        key=f"{NAME}:{session_id}",
        path=path,
        format=NAME,
        group=group,
        resolver=NAME,
        id=session_id,
        extra_paths=claude_subagent_paths(project, session_id),
        title_lines=TITLE_LINES,
        fallback=short_id(session_id),
    )


def _transcripts(path: Path) -> Iterator[str]:
    """``path`` when it is a file, then the project's other main transcripts, listed only when asked
    for: a project's group is usually known already, and its folder may hold thousands."""
    own = os.fspath(path)
    if path.is_file():
        yield own
    try:
        with os.scandir(path.parent) as entries:
            for e in entries:
                if e.name.endswith(".jsonl") and not e.name.startswith("agent-") and e.path != own:
                    yield e.path
    except OSError:
        pass


def find_by_id(settings: Settings, session_id: str) -> Path | None:
    """The transcript of a session id under any Claude folder, or ``None``."""
    if not session_id or "/" in session_id or "\\" in session_id:
        return None
    for claude_dir in claude_dirs(settings):
        for project in claude_project_dirs(claude_dir):
            candidate = Path(project.path, f"{session_id}.jsonl")
            if candidate.is_file():
                return candidate
    return None


def current(event: HostEvent, settings: Settings) -> Session | None:
    """The Claude Code session a hook event comes from (see the module docstring)."""
    if event.host in _OTHER_HOSTS:
        return None
    try:
        return _current(event, settings)
    except (OSError, ValueError) as error:
        logger.debug("claude-code: cannot identify the session of %s: %s", event, error)
        return None


def _current(event: HostEvent, settings: Settings) -> Session | None:
    given = Path(real(os.fspath(event.transcript_path))) if event.transcript_path else None
    if given is not None and given.is_file():
        return session_for_path(given, event)
    if event.session_id:
        found = find_by_id(settings, event.session_id)
        if found is not None:
            return session_for_path(found, event)
    if given is not None and given.suffix == ".jsonl":
        return session_for_path(given, event)  # written lazily: not there yet
    if event.session_id and event.cwd is not None:
        dirs = claude_dirs(settings)
        if not dirs:
            return None
        project = claude_project_dir(Path(real(os.fspath(dirs[0] / "projects"))), event.cwd)
        return session_for_path(project / f"{event.session_id}.jsonl", event)
    return None


def folders(cwd: str, settings: Settings) -> Sequence[Path]:
    """The project folder of ``cwd`` in each Claude folder (resolved), the first one's first: where a
    new session run there is written."""
    return [claude_project_dir(Path(real(os.fspath(d / "projects"))), cwd) for d in claude_dirs(settings)]


RESOLVER = ResolverSpec(
    name=NAME,
    list_sessions=list_sessions,
    current=current,
    roots=roots,
    folders=folders,
    session_at=session_for_path,
    description="Claude Code sessions under ~/.claude/projects (and CLAUDE_CONFIG_DIR), grouped by cwd",
)


@hookimpl
def sidelight_formats() -> Iterator[FormatSpec]:
    yield FORMAT


@hookimpl
def sidelight_resolvers() -> Iterator[ResolverSpec]:
    yield RESOLVER


# --- The injectors ---------------------------------------------------------------------------------
# ``claude-code`` reads the command hook's stdin JSON (``session_id``, ``transcript_path``, ``cwd``,
# ``hook_event_name``, ``prompt``, ``source``) and prints ``{"hookSpecificOutput": {"hookEventName": ...,
# "additionalContext": TEXT}}`` (:mod:`sidelight.hostio`); ``agent-sdk`` reads the same fields from the
# Python ``claude-agent-sdk`` callback's input dict and renders the same JSON (the callback,
# :mod:`sidelight.integrations.agent_sdk`, turns it back into a dict).


#: Who wrote a prompt, as Claude Code's ``UserPromptSubmit`` input documents its ``source`` field
#: (``user``, ``sdk``, ``system``, ``loop_wakeup``, ``schedule_wakeup``, ``poll_event``; "payloads may
#: omit it while the field rolls out", and 2.1.330 does): these two are a person's.
TYPED_SOURCES = frozenset({"user", "sdk"})
#: How a prompt no person typed begins: Claude Code's own envelopes for a turn it starts itself (2.1.330
#: sends a finished background task as ``<task-notification>\n<task-id>...``; the others are in its list
#: of such envelopes): another session's message, a teammate's or an agent's, a tick, a relay.
ENVELOPES = (
    "<task-notification>",
    "<cross-session-message",
    "<teammate-message",
    "<agent-message",
    "<coordinator-relay",
    "<tick>",
)
#: The tools whose ``prompt`` comes back as a prompt when they fire (a ``/loop``'s wakeup, a scheduled
#: task): the input says nothing else of it, and the transcript has the call (the tick's own line is
#: written after the hook ran).
SCHEDULERS = (b'"name":"ScheduleWakeup"', b'"name":"CronCreate"')
#: How much of the transcript's end is searched for that call.
SCHEDULER_TAIL = 64 * 1024


def not_typed(event: HostEvent) -> bool:
    """Whether a prompt event of Claude Code was not typed by a person: its ``source`` says so, or the
    prompt is one of Claude Code's envelopes (:data:`ENVELOPES`), or it is the ``prompt`` of a
    scheduler call near the transcript's end (:data:`SCHEDULERS`: a loop's tick)."""
    source = event.raw.get("source")
    if isinstance(source, str) and source:
        return source not in TYPED_SOURCES
    prompt = event.prompt or ""
    if prompt.lstrip().startswith(ENVELOPES):
        return True
    return event.transcript_path is not None and _scheduled(os.fspath(event.transcript_path), prompt)


def _scheduled(path: str, prompt: str) -> bool:
    """Whether the end of the transcript at ``path`` holds a scheduler call whose ``prompt`` is
    ``prompt`` (Claude Code writes its lines as compact JSON). Unreadable: no."""
    from sidelight._fast import jsonio

    try:
        # Never waits: a FIFO named like the transcript is not read.
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return False
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return False
        tail = os.pread(fd, SCHEDULER_TAIL, max(0, info.st_size - SCHEDULER_TAIL))
    except OSError:
        return False
    finally:
        os.close(fd)
    if not any(name in tail for name in SCHEDULERS):
        return False
    return b'"prompt":' + jsonio.dumps(prompt, ensure_ascii=False).encode("utf-8") in tail


@hookimpl
def sidelight_injectors() -> Iterator[InjectorSpec]:
    yield command_hook_injector(
        NAME,
        "Claude Code command hooks (UserPromptSubmit, SessionStart, SessionEnd; PreToolUse of a write; "
        "PostToolUse)",
        not_typed=not_typed,
        write_tools=WRITE_TOOLS,
        after_tool=True,
    )
    yield command_hook_injector(
        "agent-sdk",
        "the claude-agent-sdk UserPromptSubmit callback (sidelight.integrations.agent_sdk)",
        not_typed=not_typed,
    )


# -- the agent -------------------------------------------------------------------------------------------


def injected_values(line: Mapping[str, Any]) -> Iterator[Any]:
    """Where Claude Code keeps a hook's context (ours among them): an ``attachment`` line of a hook's
    type (``hook_additional_context``)."""
    attachment = line.get("attachment")
    if (
        line.get("type") == "attachment"
        and isinstance(attachment, dict)
        and str(attachment.get("type", "")).startswith("hook")
    ):
        yield attachment.get("content")


def skills_dir(scope: str, settings: Settings) -> Path:
    """Where Claude Code reads skills: ``~/.claude/skills`` (in ``CLAUDE_CONFIG_DIR`` when set) for the
    user, ``.claude/skills`` under the current directory for the project."""
    if scope == "project":
        return Path.cwd() / ".claude" / "skills"
    dirs = claude_dirs(settings)
    return (dirs[0] if dirs else settings.home / ".claude") / "skills"


def live_sessions(settings: Settings) -> dict[str, Liveness]:
    """Per session id, whether its process runs (``AgentSpec.live_sessions``), from
    ``<claude dir>/sessions/<pid>.json``: Claude Code writes one while a session runs (``pid``,
    ``sessionId``, ``procStart``: the process's start in clock ticks, ``pidDomain``:
    ``linux:<machine id>:pid:[<pid namespace>]``) and removes it when the process exits. A record of
    another machine or pid namespace, or with a ``procStart`` that is no number, says nothing."""
    from sidelight.engine import liveness

    live: dict[str, Liveness] = {}
    for claude_dir in claude_dirs(settings):
        for pid, record in liveness.registry_records(claude_dir / "sessions"):
            start = record.get("procStart")
            if start is not None and not (isinstance(start, str) and start.isdigit() and start.isascii()):
                continue
            domain = record.get("pidDomain")
            if domain is not None and not isinstance(domain, str):
                continue
            # linux:<machine id>:pid:[<namespace>]
            parts = (domain or "").split(":")
            machine = parts[1] if len(parts) > 1 else None
            namespace = parts[-1].strip("[]") if len(parts) > 2 else None
            if liveness.is_foreign(machine=machine, namespace=namespace):
                continue
            liveness.judge_record(pid, record, None if start is None else int(start), live)
    return live


@hookimpl
def sidelight_agents() -> Iterator[AgentSpec]:
    from sidelight.records import AgentSpec, HostHook

    yield AgentSpec(
        name=NAME,
        title="Claude Code",
        formats=(NAME,),
        resolver=NAME,
        # The Claude Agent SDK's callback speaks Claude Code's hooks and writes its transcripts.
        hosts=(NAME, "agent-sdk"),
        installer=NAME,
        hooks=(
            HostHook("prompt", "UserPromptSubmit", {"inject"}),
            HostHook("start", "SessionStart", {"inject"}),
            HostHook("end", "SessionEnd"),
            HostHook("before_tool", "PreToolUse", {"inject", "refuse"}),
            HostHook("after_tool", "PostToolUse", {"inject"}),
            HostHook("after_batch", "PostToolBatch", {"inject"}),
        ),
        timeout_unit="s",
        variables=("CLAUDE_CONFIG_DIR",),
        injected_where="Claude Code's hook attachment (hook_additional_context)",
        injected_values=injected_values,
        short_name="claude",
        skills_dir=skills_dir,
        live_sessions=live_sessions,
    )


# --- The installer (``sidelight install`` / ``uninstall``): this folder's ``install.py``, imported only
# when the installers are asked for (a prompt hook imports this module, and needs none of it).

if TYPE_CHECKING:
    from sidelight.records import InstallerSpec


@hookimpl
def sidelight_installers() -> Iterator[InstallerSpec]:
    from sidelight.agents.claude_code.install import INSTALLER

    yield INSTALLER
