"""Built-in template: Factory Droid (format ``droid``, resolver ``droid``).

**Sessions.** Every ``~/.factory/sessions/<project>/<session id>.jsonl``. Droid names the project folder
after the working directory with every ``/`` turned into ``-`` (``/home/me/app`` → ``-home-me-app``);
beside each transcript it keeps ``<session id>.settings.json`` (model, autonomy, token usage).

**Records.** ``key`` = ``droid:<session id>`` (the file name's stem), ``id`` = that id, ``name`` = the
``title`` of the transcript's ``session_start`` line (Droid rewrites that line when it titles the
session), else a short id.

**Group.** The working directory, absolute and resolved: the ``cwd`` of the ``session_start`` line, read
from the head of one transcript of the project folder, once per folder and process.

**Current session.** The transcript at ``event.transcript_path`` (Droid's hook input has it) when it lies
under Droid's sessions folder or the event comes from the ``droid`` host, else the one named
``event.session_id`` in the folder of ``event.cwd``, else ``None``.
"""

# Hot path (every prompt, over many files): plain str paths and os functions, no Path per file.
# ruff: noqa: PTH118

from __future__ import annotations

import os
from pathlib import Path

from sidelight._fast._hookimpl import hookimpl
from sidelight._fast.logs import get_logger
from sidelight.engine.paths import (
    TitledSession,
    folder_group,
    folder_sessions,
    jsonl_files,
    own_transcript,
    quietly,
    real,
    short_id,
)
from sidelight.formats import DEFAULT_CATEGORIES
from sidelight.hostio import command_hook_injector
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
    "list_sessions",
    "project_folder",
    "roots",
    "session_for_path",
    "sessions_dir",
]

logger = get_logger(__name__)

NAME = "droid"

#: The line that carries a session's title: the ``title`` of the ``session_start`` line.
TITLE_LINES = (("session_start", "type", ("title",)),)

FORMAT = FormatSpec(
    name=NAME,
    decoder="droid",
    categories=DEFAULT_CATEGORIES["droid"],
    # A hook's text is kept only as the raw stdout of a `user_only` hook record, which the decoder never
    # counts as the person's words.
    injected_markers=("[Session Activity]",),
    title_lines=TITLE_LINES,
    description="Factory Droid sessions (~/.factory/sessions/<cwd>/<session>.jsonl)",
)

_folder_cwds: dict[str, str] = {}


def sessions_dir(settings: Settings) -> Path:
    return settings.home / ".factory" / "sessions"


def roots(settings: Settings) -> list[Path]:
    folder = sessions_dir(settings)
    return [folder] if folder.is_dir() else []


def project_folder(cwd: str) -> str:
    """The name Droid gives the project folder of ``cwd``."""
    return cwd.replace(os.sep, "-")


def _session(path: Path, session_id: str, group: str) -> Session:
    return TitledSession(
        key=f"{NAME}:{session_id}",
        path=path,
        format=NAME,
        group=group,
        resolver=NAME,
        id=session_id,
        title_lines=TITLE_LINES,
        fallback=short_id(session_id),
    )


def list_sessions(settings: Settings) -> Iterator[Session]:
    """Every Droid session under Droid's sessions folder."""
    return folder_sessions(NAME, os.fspath(sessions_dir(settings)), "", _folder_cwds, _session)


def session_for_path(path: Path, event: HostEvent | None = None) -> Session | None:
    """The Droid session whose transcript is ``path`` (which may not exist yet)."""
    name = path.name
    session_id = name[:-6] if name.endswith(".jsonl") else (event.session_id if event is not None else None)
    if not session_id:
        return None
    folder = os.fspath(path.parent)
    transcripts = [os.fspath(path)] if path.is_file() else jsonl_files(folder)
    fallback = event.cwd if event is not None else None
    return _session(path, session_id, folder_group(NAME, folder, transcripts, _folder_cwds, fallback))


def _current(event: HostEvent, settings: Settings) -> Session | None:
    top = real(os.fspath(sessions_dir(settings)))
    if event.transcript_path is not None:
        path = own_transcript(event, top, NAME)
        return session_for_path(path, event) if path is not None else None
    if event.host == NAME and event.session_id and event.cwd is not None:
        folder = os.path.join(top, project_folder(real(os.fspath(event.cwd))))
        return session_for_path(Path(folder, f"{event.session_id}.jsonl"), event)
    return None


current = quietly(NAME, _current)


RESOLVER = ResolverSpec(
    name=NAME,
    list_sessions=list_sessions,
    current=current,
    roots=roots,
    description="Factory Droid sessions under ~/.factory/sessions; grouped by working directory",
)


@hookimpl
def sidelight_formats() -> Iterator[FormatSpec]:
    yield FORMAT


@hookimpl
def sidelight_resolvers() -> Iterator[ResolverSpec]:
    yield RESOLVER


# --- The injector ----------------------------------------------------------------------------------
# Droid's hooks are Claude Code's (:mod:`sidelight.hostio`): `UserPromptSubmit`'s and `SessionStart`'s
# `additionalContext` reach the model as a user message of their own (the prompt's only on Droid's
# JSON-RPC path, the IDE's and daemon's: `droid exec PROMPT` fires no `UserPromptSubmit`);
# `PostToolUse`'s as a user message after the tool's result; a `PreToolUse` answer
# `permissionDecision: "deny"` stops the tool, and the model gets `Error: <reason>` as its result.

#: Droid's tools that write a file: its ``PreToolUse`` hook, matched to these (``install.DROID_MATCHERS``),
#: is the stale-write guard's (docs/guard.md).
WRITE_TOOLS = ("Create", "Edit", "MultiEdit", "ApplyPatch")


@hookimpl
def sidelight_injectors() -> Iterator[InjectorSpec]:
    yield command_hook_injector(
        NAME,
        "Factory Droid command hooks (~/.factory/hooks.json, Claude Code's protocol; PreToolUse of a write; "
        "PostToolUse)",
        write_tools=WRITE_TOOLS,
        after_tool=True,
    )


# -- the agent -------------------------------------------------------------------------------------------


def injected_values(line: Mapping[str, Any]) -> Iterator[Any]:
    """Where Droid keeps a hook's text: the raw ``stdout`` of each of ``message.hookResults`` of a
    ``user_only`` hook record, our JSON answer (given parsed: the text is a string inside it)."""
    from sidelight._fast import jsonio

    message = line.get("message")
    if line.get("type") != "message" or not isinstance(message, dict):
        return
    results = message.get("hookResults")
    for result in results if isinstance(results, list) else ():
        stdout = result.get("stdout") if isinstance(result, dict) else None
        if isinstance(stdout, str) and stdout.strip():
            try:
                yield jsonio.loads(stdout)
            except ValueError:
                yield stdout


@hookimpl
def sidelight_agents() -> Iterator[AgentSpec]:
    from sidelight.records import HostHook

    yield AgentSpec(
        name=NAME,
        title="Factory Droid",
        formats=(NAME,),
        resolver=NAME,
        hosts=(NAME,),
        installer=NAME,
        # Seen with Droid 0.225.2: UserPromptSubmit fires (and its text is sent) only on the JSON-RPC path;
        # a PreToolUse hook's additionalContext is not sent, its deny is.
        hooks=(
            HostHook("prompt", "UserPromptSubmit", {"inject"}),
            HostHook("start", "SessionStart", {"inject"}),
            HostHook("end", "SessionEnd"),
            HostHook("before_tool", "PreToolUse", {"refuse"}),
            HostHook("after_tool", "PostToolUse", {"inject"}),
        ),
        timeout_unit="s",
        injected_where="Droid's user_only hook records (hookResults[].stdout)",
        injected_values=injected_values,
    )


# --- The installer (``sidelight install`` / ``uninstall``): this folder's ``install.py``, imported only
# when the installers are asked for (a prompt hook imports this module, and needs none of it).

if TYPE_CHECKING:
    from sidelight.records import InstallerSpec


@hookimpl
def sidelight_installers() -> Iterator[InstallerSpec]:
    from sidelight.agents.droid.install import INSTALLER

    yield INSTALLER
