"""Built-in template: Qwen Code (format ``qwen``, resolver ``qwen``).

**Sessions.** Every ``~/.qwen/projects/<project>/chats/<session id>.jsonl`` (``Settings.qwen_dir``:
``$QWEN_HOME``, else ``~/.qwen``). Qwen Code names the project
folder after the working directory with every character other than ``[A-Za-z0-9]`` turned into ``-``
(so the name cannot be decoded back).

**Records.** ``key`` = ``qwen:<session id>`` (the file name's stem), ``id`` = that id, ``name`` = a short
id. Qwen Code writes no title line.

**Group.** The working directory, absolute and resolved: the ``cwd`` every line carries, read from the
head of one transcript of the project folder, once per folder and process. Sessions of the other agents
use their working directory too, so sessions of one project see each other whichever agent runs them.

**Current session.** The chat at ``event.transcript_path`` (Qwen's hook input has it) when it lies under
Qwen's projects folder or the event comes from the ``qwen`` host (the file may not exist yet), else the
chat named ``event.session_id`` in the folder of ``event.cwd``, else ``None``.
"""

# Hot path (every prompt, over many files): plain str paths and os functions, no Path per file.
# ruff: noqa: PTH118

from __future__ import annotations

import os
from pathlib import Path

from sidelight._fast._hookimpl import hookimpl
from sidelight._fast.logs import get_logger
from sidelight._fast.patterns import Pattern
from sidelight.engine.paths import (
    folder_group,
    folder_sessions,
    id_session,
    jsonl_files,
    own_transcript,
    quietly,
    real,
)
from sidelight.formats import DEFAULT_CATEGORIES
from sidelight.hostio import command_hook_injector, render_hook_json, render_refusal_json
from sidelight.records import AgentSpec, FormatSpec, HostEvent, InjectorSpec, ResolverSpec, Session

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping
    from typing import Any

    from sidelight.config import Settings
    from sidelight.records import Liveness

__all__ = [
    "FORMAT",
    "NAME",
    "current",
    "list_sessions",
    "live_sessions",
    "project_folder",
    "roots",
    "session_for_path",
]

logger = get_logger(__name__)

NAME = "qwen"

FORMAT = FormatSpec(
    name=NAME,
    decoder="qwen",
    categories=DEFAULT_CATEGORIES["qwen"],
    # A hook's text is stored in the prompt's line as a <qwen:user-prompt-submit-context> part, which
    # the decoder never counts as the person's words.
    injected_markers=("[Session Activity]",),
    description="Qwen Code chats (~/.qwen/projects/<cwd>/chats/<session>.jsonl)",
)

_NOT_ALNUM = Pattern(r"[^A-Za-z0-9]")

_folder_cwds: dict[str, str] = {}


def projects_dir(settings: Settings) -> Path:
    return (settings.qwen_dir or settings.home / ".qwen") / "projects"


def roots(settings: Settings) -> list[Path]:
    folder = projects_dir(settings)
    return [folder] if folder.is_dir() else []


def project_folder(cwd: str) -> str:
    """The name Qwen Code gives the project folder of ``cwd``."""
    return _NOT_ALNUM().sub("-", cwd)


def _session(path: Path, session_id: str, group: str) -> Session:
    return id_session(NAME, path, session_id, group)


def _chats(folder: str) -> list[str]:
    return jsonl_files(os.path.join(folder, "chats"))


def list_sessions(settings: Settings) -> Iterator[Session]:
    """Every Qwen Code chat under Qwen's projects folder."""
    return folder_sessions(NAME, os.fspath(projects_dir(settings)), "chats", _folder_cwds, _session)


def session_for_path(path: Path, event: HostEvent | None = None) -> Session | None:
    """The Qwen Code session whose chat is ``path`` (which may not exist yet)."""
    name = path.name
    session_id = name[:-6] if name.endswith(".jsonl") else (event.session_id if event is not None else None)
    if not session_id:
        return None
    folder = os.fspath(path.parent.parent)
    chats = [os.fspath(path)] if path.is_file() else _chats(folder)
    fallback = event.cwd if event is not None else None
    return _session(path, session_id, folder_group(NAME, folder, chats, _folder_cwds, fallback))


def _current(event: HostEvent, settings: Settings) -> Session | None:
    top = real(os.fspath(projects_dir(settings)))
    if event.transcript_path is not None:
        path = own_transcript(event, top, NAME)
        return session_for_path(path, event) if path is not None else None
    if event.host == NAME and event.session_id and event.cwd is not None:
        folder = os.path.join(top, project_folder(os.fspath(event.cwd)), "chats")
        return session_for_path(Path(folder, f"{event.session_id}.jsonl"), event)
    return None


current = quietly(NAME, _current)


RESOLVER = ResolverSpec(
    name=NAME,
    list_sessions=list_sessions,
    current=current,
    roots=roots,
    description="Qwen Code chats under ~/.qwen/projects; grouped by working directory",
)


@hookimpl
def sidelight_formats() -> Iterator[FormatSpec]:
    yield FORMAT


@hookimpl
def sidelight_resolvers() -> Iterator[ResolverSpec]:
    yield RESOLVER


# --- The injector ----------------------------------------------------------------------------------
# Qwen Code's hooks are Claude Code's (:mod:`sidelight.hostio`); the text goes without ``<`` and ``>``,
# which Qwen Code would HTML-escape. The empty-prompt call Qwen makes after each tool result gets
# nothing (:mod:`sidelight.features.hook`).


def render_escaped_hook_json(event: HostEvent, text: str | None) -> str | None:
    """:func:`~sidelight.hostio.render_hook_json` of text with no ``<`` or ``>``
    (:func:`sidelight.redact.escape_proof`)."""
    from sidelight.redact import escape_proof  # loaded by the digest already

    return render_hook_json(event, None if text is None else escape_proof(text))


def render_escaped_refusal(event: HostEvent, reason: str) -> str | None:
    """:func:`~sidelight.hostio.render_refusal_json` of a reason with no ``<`` or ``>``."""
    from sidelight.redact import escape_proof

    return render_refusal_json(event, escape_proof(reason))


#: Qwen Code's tools that write a file: its ``PreToolUse`` hook, matched to these
#: (``install.QWEN_MATCHERS``), is the stale-write guard's (docs/guard.md).
WRITE_TOOLS = ("write_file", "edit")


@hookimpl
def sidelight_injectors() -> Iterator[InjectorSpec]:
    yield command_hook_injector(
        NAME,
        "Qwen Code command hooks (~/.qwen/settings.json, Claude Code's protocol; PreToolUse of a write; "
        "PostToolUse)",
        render_escaped_hook_json,
        write_tools=WRITE_TOOLS,
        refuse=render_escaped_refusal,
        after_tool=True,
    )


# -- the agent -------------------------------------------------------------------------------------------

#: How Qwen Code wraps a prompt hook's context in the prompt it records.
_CONTEXT_OPEN = "<qwen:user-prompt-submit-context>"
_CONTEXT_CLOSE = "</qwen:user-prompt-submit-context>"


def injected_values(line: Mapping[str, Any]) -> Iterator[str]:
    """Where Qwen Code keeps a prompt hook's context: a part of the user's message, wrapped in its
    ``<qwen:user-prompt-submit-context>`` tags (each text up to its closing tag)."""
    from sidelight._fast.jsonio import strings

    message = line.get("message")
    if line.get("type") == "user" and isinstance(message, dict):
        for text in strings(message.get("parts")):
            if text.lstrip().startswith(_CONTEXT_OPEN):
                yield from text.split(_CONTEXT_CLOSE)


def live_sessions(settings: Settings) -> dict[str, Liveness]:
    """Per session id, whether its process runs (``AgentSpec.live_sessions``), from
    ``<qwen dir>/sessions/<pid>.json`` (and ``<pid>-<slot>.json``): Qwen Code's registry of running
    sessions (``pid``, ``sessionId``, ``procStart``: ``<boot id>:<start in clock ticks>``, ``pidNs``:
    the pid namespace), written by its interactive UI and its ACP sessions. A record of another boot
    or pid namespace, or with a ``procStart`` it cannot read, says nothing."""
    from sidelight.engine import liveness

    live: dict[str, Liveness] = {}
    folder = (settings.qwen_dir or settings.home / ".qwen") / "sessions"
    for pid, record in liveness.registry_records(folder):
        token = record.get("procStart")
        boot, _, ticks = token.rpartition(":") if isinstance(token, str) else ("", "", "")
        if token is not None and not (ticks.isdigit() and ticks.isascii()):
            continue
        if liveness.is_foreign(boot=boot, namespace=record.get("pidNs")):
            continue
        liveness.judge_record(pid, record, int(ticks) if ticks else None, live)
    return live


@hookimpl
def sidelight_agents() -> Iterator[AgentSpec]:
    from sidelight.records import AgentSpec, HostHook

    yield AgentSpec(
        name=NAME,
        title="Qwen Code",
        formats=(NAME,),
        resolver=NAME,
        hosts=(NAME,),
        installer=NAME,
        # A PreToolUse hook's context is not sent (0.24.4); UserPromptSubmit fires again, prompt empty,
        # after each tool batch (the hook answers nothing then).
        hooks=(
            HostHook("prompt", "UserPromptSubmit", {"inject"}),
            HostHook("start", "SessionStart", {"inject"}),
            HostHook("end", "SessionEnd"),
            HostHook("before_tool", "PreToolUse", {"refuse"}),
            HostHook("after_tool", "PostToolUse", {"inject"}),
            HostHook("after_batch", "PostToolBatch", {"inject"}),
        ),
        timeout_unit="ms",
        variables=("QWEN_HOME",),
        injected_where="Qwen Code's <qwen:user-prompt-submit-context> part of the prompt",
        injected_values=injected_values,
        live_sessions=live_sessions,
    )


# --- The installer (``sidelight install`` / ``uninstall``): this folder's ``install.py``, imported only
# when the installers are asked for (a prompt hook imports this module, and needs none of it).

if TYPE_CHECKING:
    from sidelight.records import InstallerSpec


@hookimpl
def sidelight_installers() -> Iterator[InstallerSpec]:
    from sidelight.agents.qwen.install import INSTALLER

    yield INSTALLER
