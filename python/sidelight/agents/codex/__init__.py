"""Built-in template: OpenAI Codex CLI (format ``codex``, resolver ``codex``).

**Sessions.** Every ``<codex home>/sessions/YYYY/MM/DD/rollout-*.jsonl`` (``Settings.codex_dir``:
``CODEX_HOME``, else ``~/.codex``); archived rollouts are left out.

**Records.** ``key`` = ``codex:<id>``, ``id`` = the rollout id (the uuid that ends the file name, else
the ``session_meta`` line's ``id``), ``name`` = a short id (the last eight characters: Codex ids are
time-ordered UUIDv7, whose first eight are shared by sessions started within a minute). Rollouts carry
no title.

**Group.** The session's working directory, absolute and resolved: ``payload.cwd`` of the
``session_meta`` first line. Only a bounded head of that line is read (its instructions can be tens of
KB), once per rollout and process (the first line never changes). Claude Code and Pi sessions use
their working directory too, so sessions of one project see each other whichever agent runs them.

**Current session.** The rollout at ``event.transcript_path`` (Codex's hook input has it) when it
lies under Codex's sessions folder or the event comes from the ``codex`` host (the file may not exist
yet), else the rollout whose id is ``event.session_id``, else ``None``.
"""

# Hot path (every prompt, over many files): plain str paths and os functions, no Path per file.
# ruff: noqa: PTH119

from __future__ import annotations

import os
from pathlib import Path

from sidelight._fast._hookimpl import hookimpl
from sidelight._fast.logs import get_logger
from sidelight._fast.patterns import Pattern
from sidelight.engine.paths import (
    has_field,
    head_string_field,
    id_session,
    open_regular,
    own_transcript,
    quietly,
    real,
    working_group,
)
from sidelight.formats import DEFAULT_CATEGORIES
from sidelight.hostio import command_hook_injector
from sidelight.records import AgentSpec, FormatSpec, HostEvent, InjectorSpec, ResolverSpec, Session

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping
    from typing import Any

    from sidelight.config import Settings

__all__ = ["FORMAT", "NAME", "WRITE_TOOLS", "current", "list_sessions", "roots", "session_for_path"]

logger = get_logger(__name__)

NAME = "codex"


def tool_output(text: str) -> str:
    """A Codex command's output without its preamble (``Chunk ID``, ``Wall time``, ``Process exited
    with code N``, ``Output:``), which is moved after the output (the exit code is still found)."""
    head, marker, body = text[:1000].partition("\nOutput:\n")
    if not marker:
        return text
    from sidelight.commands import EXIT_CODE  # (a recap's question, never a prompt's)

    codes = EXIT_CODE.findall(head)
    return body + text[1000:] + (f"\nexit code: {codes[-1]}" if codes else "")


FORMAT = FormatSpec(
    name=NAME,
    decoder="codex",
    categories=DEFAULT_CATEGORIES["codex"],
    # A hook's additionalContext is stored as a ``developer`` message, which the decoder never counts.
    injected_markers=("[Session Activity]",),
    description="Codex CLI rollouts (~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl)",
    tool_output=tool_output,
)

_UUID_END = Pattern(r"([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})$")
#: The ``session_meta`` line's ``type`` and its fields ``id`` and ``cwd`` come before its long
#: instructions (in the order Codex writes them); at most this much of the head is read for them ...
_META_BYTES = 64 * 1024
#: ... and usually the first few hundred bytes do.
_META_SMALL = 4096

_meta: dict[str, tuple[str | None, str | None]] = {}


def sessions_dir(settings: Settings) -> Path | None:
    return settings.codex_dir / "sessions" if settings.codex_dir is not None else None


def roots(settings: Settings) -> list[Path]:
    folder = sessions_dir(settings)
    return [folder] if folder is not None and folder.is_dir() else []


def _session_meta(path: str) -> tuple[str | None, str | None]:
    """``(id, cwd)`` from the ``session_meta`` first line, cached by path (that line never changes)."""
    cached = _meta.get(path)
    if cached is not None:
        return cached
    try:
        with open_regular(path) as f:
            head = f.read(_META_SMALL)
            if len(head) == _META_SMALL and b"\n" not in head and not _meta_seen(path, head):
                head += f.read(_META_BYTES - _META_SMALL)
    except OSError as error:
        logger.debug("codex: cannot read %s: %s", path, error)
        return (None, None)
    line = head.split(b"\n", 1)[0]
    if not has_field(line, "type", "session_meta"):  # (or one whose type lies past what was read)
        return (None, None)
    found = (head_string_field(path, "id", data=line), head_string_field(path, "cwd", data=line))
    if found[1] is not None:  # complete enough to keep
        _meta[path] = found
    return found


def _meta_seen(path: str, head: bytes) -> bool:
    """Whether the start of a first line shows it a ``session_meta`` line with its ``cwd``."""
    return has_field(head, "type", "session_meta") and head_string_field(path, "cwd", data=head) is not None


def rollout_id(path: str) -> str | None:
    stem = os.path.basename(path)
    stem = stem[:-6] if stem.endswith(".jsonl") else stem
    match = _UUID_END().search(stem)
    if match:
        return match.group(1).lower()
    return _session_meta(path)[0]


def _rollouts(top: Path) -> Iterator[str]:
    """``top/YYYY/MM/DD/rollout-*.jsonl``, oldest first."""
    for depth1 in _subdirs(os.fspath(top)):
        for depth2 in _subdirs(depth1):
            for depth3 in _subdirs(depth2):
                try:
                    with os.scandir(depth3) as entries:
                        names = sorted(
                            e.path
                            for e in entries
                            if e.name.startswith("rollout-") and e.name.endswith(".jsonl") and e.is_file()
                        )
                except OSError:
                    continue
                yield from names


def _subdirs(folder: str) -> list[str]:
    try:
        with os.scandir(folder) as entries:
            return sorted(e.path for e in entries if e.is_dir())
    except OSError:
        return []


def _session(path: Path, session_id: str, cwd: str | None, fallback: Path | None) -> Session:
    return id_session(NAME, path, session_id, working_group(NAME, session_id, cwd, fallback))


def list_sessions(settings: Settings) -> Iterator[Session]:
    """Every Codex rollout under Codex's sessions folder."""
    top = sessions_dir(settings)
    if top is None:
        return
    try:
        for path in _rollouts(Path(real(os.fspath(top)))):  # resolved once: canonical paths below
            session_id = rollout_id(path)
            if session_id is None:
                continue
            yield _session(Path(path), session_id, _session_meta(path)[1], None)
    except Exception as error:  # never let an odd layout escape
        logger.debug("codex: listing stopped: %s", error)


def session_for_path(path: Path, event: HostEvent | None = None) -> Session | None:
    """The Codex session whose rollout is ``path`` (which may not exist yet)."""
    key = os.fspath(path)
    session_id = rollout_id(key) or (event.session_id if event is not None else None)
    if not session_id:
        return None
    return _session(path, session_id, _session_meta(key)[1], event.cwd if event is not None else None)


def _current(event: HostEvent, settings: Settings) -> Session | None:
    top = sessions_dir(settings)
    path = own_transcript(event, top, NAME)
    if path is not None:
        return session_for_path(path, event)
    if event.session_id and top is not None:
        wanted = event.session_id.lower()
        for rollout in _rollouts(top):
            if rollout_id(rollout) == wanted:
                return session_for_path(Path(rollout), event)
    return None


current = quietly(NAME, _current)


RESOLVER = ResolverSpec(
    name=NAME,
    list_sessions=list_sessions,
    current=current,
    roots=roots,
    description="Codex CLI rollouts under ~/.codex/sessions; grouped by working directory",
)


@hookimpl
def sidelight_formats() -> Iterator[FormatSpec]:
    yield FORMAT


@hookimpl
def sidelight_resolvers() -> Iterator[ResolverSpec]:
    yield RESOLVER


# --- The injector ----------------------------------------------------------------------------------
# Codex's command hooks speak Claude Code's protocol (:mod:`sidelight.hostio`).


#: Codex's tool that writes files (their paths are in the patch text): its ``PreToolUse`` hook, matched
#: to it (``install.CODEX_MATCHERS``), is the stale-write guard's (docs/guard.md).
WRITE_TOOLS = ("apply_patch",)


@hookimpl
def sidelight_injectors() -> Iterator[InjectorSpec]:
    yield command_hook_injector(
        NAME,
        "Codex CLI command hooks (~/.codex/hooks.json, Claude Code's protocol; PreToolUse of apply_patch; "
        "PostToolUse)",
        write_tools=WRITE_TOOLS,
        after_tool=True,
    )


# -- the agent -------------------------------------------------------------------------------------------


def injected_values(line: Mapping[str, Any]) -> Iterator[Any]:
    """Where Codex keeps a hook's context: a developer (or system) message of the rollout."""
    payload = line.get("payload") if line.get("type") == "response_item" else line
    if (
        isinstance(payload, dict)
        and payload.get("type") == "message"
        and payload.get("role") in ("developer", "system")
    ):
        yield payload.get("content")


@hookimpl
def sidelight_agents() -> Iterator[AgentSpec]:
    from sidelight.records import AgentSpec, HostHook

    yield AgentSpec(
        name=NAME,
        title="Codex CLI",
        formats=(NAME,),
        resolver=NAME,
        hosts=(NAME,),
        installer=NAME,
        hooks=(  # Codex has no SessionEnd
            HostHook("prompt", "UserPromptSubmit", {"inject"}),
            HostHook("start", "SessionStart", {"inject"}),
            HostHook("before_tool", "PreToolUse", {"inject", "refuse"}),
            HostHook("after_tool", "PostToolUse", {"inject"}),
        ),
        timeout_unit="s",
        variables=("CODEX_HOME",),
        injected_where="Codex's developer message",
        injected_values=injected_values,
    )


# --- The installer (``sidelight install`` / ``uninstall``): this folder's ``install.py``, imported only
# when the installers are asked for (a prompt hook imports this module, and needs none of it).

if TYPE_CHECKING:
    from sidelight.records import InstallerSpec


@hookimpl
def sidelight_installers() -> Iterator[InstallerSpec]:
    from sidelight.agents.codex.install import INSTALLER

    yield INSTALLER
