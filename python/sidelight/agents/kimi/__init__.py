"""Built-in template: Kimi CLI (format ``kimi``, resolver ``kimi``, injector ``kimi``).

**Sessions.** Every ``<kimi dir>/sessions/<md5 of the work dir>/<session id>/wire.jsonl`` (``<kimi
dir>``: ``$KIMI_SHARE_DIR``, else ``~/.kimi``): the session's log of events, each with its time, appended to
for the whole session. ``context.jsonl`` beside it (what the model is sent, one message a line) has no
times, and Kimi moves it aside and starts it again on ``/clear`` and on compaction (with the summary as a
``user`` message): the stale-write guard needs each tool call's time, and a digest what happened, so the
wire log is read (the ``kimi`` decoder reads either). ``state.json`` is not read (its ``custom_title`` is
the first prompt, which the scan has).

**Records.** ``key`` = ``kimi:<session id>`` (the folder's name), ``id`` = that id, ``name`` = a short id.

**Group.** The work directory, absolute and resolved: ``<kimi dir>/kimi.json`` maps each work dir
(``work_dirs[].path``) to its folder, named after the md5 of the path (read once per process while the
file is unchanged). A folder it does not name is grouped by the hook event's ``cwd``, else on its own.

**Current session.** Kimi's hook input has ``session_id`` and ``cwd`` and no transcript path: for an
event of the ``kimi`` host, the session of that id in the folder of that work dir (its file may not exist
yet), else ``None``.

**Told.** Only the stale-write guard: a ``PreToolUse`` of ``WriteFile`` or ``StrReplaceFile`` is refused
once (``permissionDecision: "deny"``); the model gets the reason as the tool's result, ``<system>ERROR:
REASON</system>``. Kimi CLI 1.50 reads a hook's output only for a refusal: ``UserPromptSubmit`` and
``PostToolUse`` text never reaches the model, so there is no digest per prompt and no news after a tool
(docs/hosts-next.md).
"""

# Hot path (every prompt, over many files): plain str paths and os functions, no Path per file.
# ruff: noqa: PTH112, PTH113, PTH116, PTH118, PTH123

from __future__ import annotations

import os
from pathlib import Path

from sidelight._fast._hookimpl import hookimpl
from sidelight._fast.logs import get_logger
from sidelight.engine.paths import id_session, quietly, real
from sidelight.formats import DEFAULT_CATEGORIES
from sidelight.hostio import path_field, render_hook_json, text_field
from sidelight.records import AgentSpec, FormatSpec, HostEvent, InjectorSpec, ResolverSpec, Session

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping
    from typing import Any

    from sidelight.config import Settings

__all__ = [
    "FORMAT",
    "NAME",
    "WRITE_TOOLS",
    "current",
    "folder_name",
    "kimi_dir",
    "list_sessions",
    "read_hook",
    "roots",
    "session_for_path",
]

logger = get_logger(__name__)

NAME = "kimi"
#: The file of a session's folder sidelight reads.
WIRE_FILE = "wire.jsonl"
#: The variable that moves Kimi's folder.
SHARE_VARIABLE = "KIMI_SHARE_DIR"

FORMAT = FormatSpec(
    name=NAME,
    decoder="kimi",
    categories=DEFAULT_CATEGORIES["kimi"],
    # Nothing of sidelight's reaches a Kimi context but a refusal, as a tool's result.
    injected_markers=("[Session Activity]",),
    description="Kimi CLI sessions (~/.kimi/sessions/<md5 of the work dir>/<session>/wire.jsonl)",
)


def kimi_dir(settings: Settings) -> Path:
    """Kimi's folder: ``$KIMI_SHARE_DIR``, else ``~/.kimi``."""
    moved = os.environ.get(SHARE_VARIABLE)
    return Path(moved) if moved else settings.home / ".kimi"


def sessions_dir(settings: Settings) -> Path:
    return kimi_dir(settings) / "sessions"


def roots(settings: Settings) -> list[Path]:
    folder = sessions_dir(settings)
    return [folder] if folder.is_dir() else []


def folder_name(work_dir: str) -> str:
    """The name Kimi gives the sessions folder of ``work_dir``: the md5 of the path."""
    import hashlib

    return hashlib.md5(work_dir.encode("utf-8", "surrogatepass"), usedforsecurity=False).hexdigest()


#: ``kimi.json`` read: its path, its stat key, and folder name → work dir.
_work_dirs: dict[str, tuple[tuple[int, int], dict[str, str]]] = {}


def _groups(settings: Settings) -> dict[str, str]:
    """Folder name → the work dir it holds the sessions of, from ``kimi.json`` (local work dirs only)."""
    path = os.path.join(kimi_dir(settings), "kimi.json")
    try:
        st = os.stat(path)
    except OSError:
        return {}
    key = (st.st_mtime_ns, st.st_size)
    cached = _work_dirs.get(path)
    if cached is not None and cached[0] == key:
        return cached[1]
    from sidelight._fast import jsonio

    found: dict[str, str] = {}
    try:
        with open(path, "rb") as f:
            data = jsonio.loads(f.read(1024 * 1024))
    except (OSError, ValueError) as error:
        logger.debug("kimi: cannot read %s: %s", path, error)
        data = None
    entries = data.get("work_dirs") if isinstance(data, dict) else None
    for entry in entries if isinstance(entries, list) else ():
        work_dir = entry.get("path") if isinstance(entry, dict) else None
        if isinstance(work_dir, str) and work_dir and entry.get("kaos", "local") == "local":
            found[folder_name(work_dir)] = real(work_dir)
    _work_dirs[path] = (key, found)
    return found


def _group(folder: str, groups: Mapping[str, str], cwd: Path | None = None) -> str:
    known = groups.get(folder)
    if known is not None:
        return known
    if cwd is not None:
        return real(os.fspath(cwd))
    return f"{NAME}:{folder}"  # no work dir known: a group of its own


def list_sessions(settings: Settings) -> Iterator[Session]:
    """Every Kimi CLI session whose wire log exists."""
    try:
        with os.scandir(real(os.fspath(sessions_dir(settings)))) as entries:
            folders = sorted((e.name, e.path) for e in entries if e.is_dir())
    except OSError:
        return
    groups = _groups(settings)
    for name, folder in folders:
        try:
            with os.scandir(folder) as entries:
                sessions = sorted((e.name, e.path) for e in entries if e.is_dir())
        except OSError:
            continue
        group = _group(name, groups)
        for session_id, path in sessions:
            wire = os.path.join(path, WIRE_FILE)
            if os.path.isfile(wire):
                yield id_session(NAME, Path(wire), session_id, group)


def session_for_path(
    path: Path, event: HostEvent | None = None, settings: Settings | None = None
) -> Session | None:
    """The Kimi CLI session whose wire log is ``path`` (which may not exist yet)."""
    session_id = path.parent.name or (event.session_id if event is not None else None)
    if not session_id:
        return None
    if settings is None:
        from sidelight.config import Settings

        settings = Settings.load()
    group = _group(path.parent.parent.name, _groups(settings), event.cwd if event is not None else None)
    return id_session(NAME, path, session_id, group)


def _current(event: HostEvent, settings: Settings) -> Session | None:
    session_id = event.session_id
    if event.host != NAME or not session_id or "/" in session_id or session_id in (".", ".."):
        return None
    if event.cwd is None:
        return None
    top = real(os.fspath(sessions_dir(settings)))
    cwd = os.fspath(event.cwd)
    folder = os.path.join(top, folder_name(cwd))
    if not os.path.isdir(folder) and real(cwd) != cwd:
        resolved = os.path.join(top, folder_name(real(cwd)))
        folder = resolved if os.path.isdir(resolved) else folder
    return session_for_path(Path(folder, session_id, WIRE_FILE), event, settings)


current = quietly(NAME, _current)


RESOLVER = ResolverSpec(
    name=NAME,
    list_sessions=list_sessions,
    current=current,
    roots=roots,
    description="Kimi CLI sessions under ~/.kimi/sessions; grouped by work directory",
)


@hookimpl
def sidelight_formats() -> Iterator[FormatSpec]:
    yield FORMAT


@hookimpl
def sidelight_resolvers() -> Iterator[ResolverSpec]:
    yield RESOLVER


# --- The injector ----------------------------------------------------------------------------------

#: Kimi's tools that write a file (``WriteFile{path, content, mode}``, ``StrReplaceFile{path, edit}``): its
#: ``PreToolUse`` hook, matched to these (``install.KIMI_MATCHERS``), is the stale-write guard's.
WRITE_TOOLS = ("WriteFile", "StrReplaceFile")


def read_hook(payload: Mapping[str, Any]) -> HostEvent | None:
    """A Kimi CLI hook input as a :class:`HostEvent`: a ``PreToolUse`` of one of :data:`WRITE_TOOLS`
    (``{hook_event_name, session_id, cwd, tool_name, tool_input, tool_call_id}``), the only event whose
    answer reaches Kimi's model (a refusal). ``None`` for anything else: a prompt's or a tool result's
    text would be computed and marked as told, and never sent."""
    if not isinstance(payload, dict) or payload.get("hook_event_name") != "PreToolUse":
        return None
    if payload.get("tool_name") not in WRITE_TOOLS:
        return None
    return HostEvent(
        host=NAME,
        event="PreToolUse",
        session_id=text_field(payload.get("session_id")),
        cwd=path_field(payload.get("cwd")),
        raw=payload,
    )


def render_refusal(event: HostEvent, reason: str) -> str | None:
    """``permissionDecision: "deny"`` with the reason: Kimi skips the tool and sends the model
    ``<system>ERROR: REASON</system>`` as its result."""
    from sidelight.hostio import render_refusal_json

    return render_refusal_json(event, reason)


@hookimpl
def sidelight_injectors() -> Iterator[InjectorSpec]:
    yield InjectorSpec(
        name=NAME,
        read_event=read_hook,
        render=render_hook_json,
        description="Kimi CLI command hooks ([[hooks]] in ~/.kimi/config.toml; PreToolUse of a write only)",
        refuse=render_refusal,
    )


# -- the agent -------------------------------------------------------------------------------------------


def injected_values(line: Mapping[str, Any]) -> Iterator[str]:
    """Where sidelight's text is kept in a Kimi context: nowhere (no hook text reaches it but a
    refusal, which is the tool's result)."""
    return iter(())


@hookimpl
def sidelight_agents() -> Iterator[AgentSpec]:
    from sidelight.records import AgentSpec, HostHook

    yield AgentSpec(
        name=NAME,
        title="Kimi CLI",
        formats=(NAME,),
        resolver=NAME,
        hosts=(NAME,),
        installer=NAME,
        # Kimi CLI 1.50 reads a hook's output only for a block: UserPromptSubmit and PostToolUse fire,
        # and nothing they answer reaches the model (requests checked); PreToolUse can deny.
        hooks=(
            HostHook("prompt", "UserPromptSubmit"),
            HostHook("before_tool", "PreToolUse", {"refuse"}),
            HostHook("after_tool", "PostToolUse"),
        ),
        timeout_unit="s",
        variables=(SHARE_VARIABLE,),
        injected_where="nowhere: only a refusal reaches Kimi's model, as the tool's result",
        injected_values=injected_values,
    )


# --- The installer (``sidelight install`` / ``uninstall``): this folder's ``install.py``, imported only
# when the installers are asked for (a prompt hook imports this module, and needs none of it).

if TYPE_CHECKING:
    from sidelight.records import InstallerSpec


@hookimpl
def sidelight_installers() -> Iterator[InstallerSpec]:
    from sidelight.agents.kimi.install import INSTALLER

    yield INSTALLER
