"""sidelight plugin: Kiro CLI sessions (agent, format, resolver and installer ``kiro``).

Everything here uses sidelight's public plugin API only: the ``hookimpl`` marker, the records of
``sidelight.records`` and the format description classes of ``sidelight.formats``.

The line shape is partly ASSUMED (README.md, "The line shape"): the envelope, the prompts, the replies'
text and the tool results follow what third-party readers of kiro-cli 2.x report; the ``toolUse``
block is declared flat (``{"kind": "toolUse", "toolUseId", "name", "input"}``), and the prompt's
timestamp an ISO string. Adjust the declaration to your agent's real lines.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

from sidelight import hookimpl
from sidelight.formats import Blocks, Event, Layout
from sidelight.records import (
    AgentSpec,
    FormatSpec,
    HostEvent,
    InstallerSpec,
    InstallResult,
    ResolverSpec,
    Session,
)

if TYPE_CHECKING:
    from collections.abc import Iterator

    from sidelight.config import Settings

__all__ = ["FORMAT", "LAYOUT", "NAME", "agent_file", "agent_text", "decode_line", "list_sessions"]

NAME = "kiro"
SAMPLES = Path(__file__).parent / "samples"

#: Where a Kiro CLI line keeps what sidelight counts. A line is ``{"version", "kind", "data"}``;
#: ``data`` holds the message id, the content blocks and (on a prompt) ``meta.timestamp``.
LAYOUT = Layout(
    # The entry's kind: ``Prompt``, ``AssistantMessage``, ``ToolResults``, or one that is no message
    # (``Clear``, ...): every kind is counted in ``entry_types``.
    role="kind",
    entry_type="kind",
    # ``ToolResults`` is a user entry whose blocks are all results: a user message with a result block
    # is not a prompt (as Claude Code's tool results are user messages).
    user_roles=("Prompt", "ToolResults"),
    assistant_roles=("AssistantMessage",),
    content="data.content",
    # Every block has a ``kind``. A text block keeps its text in ``data`` (a string); a ``thinking``
    # block (``data`` an object) is of no listed kind, so it is never read as text.
    blocks=Blocks(
        type_key="kind",
        text=("text",),
        text_key="data",
        tool=("toolUse",),
        result=("toolResult",),
        name_key="name",
        input_keys=("input",),
        id_key="toolUseId",
        # A result keeps its fields under ``data`` (paths are allowed here, not for a tool block's).
        result_id_key="data.toolUseId",
        # ``status`` is ``"success"`` or ``"error"``: a layout's error flag is ``true`` or an error
        # message, so ``"success"`` would read as a failure. Failures are not marked (README).
        result_error_key=None,
        result_content_key="data.content",
    ),
    message_id="data.message_id",
    timestamp="data.meta.timestamp",
    # sidelight's digest, should it reach a prompt.
    skip_prompt_prefixes=("[Session Activity]",),
    # ``write`` has a ``command`` argument (``create``, ``str_replace``): the path is what it acts on.
    primary_keys=("path", "command", "pattern", "query", "url"),
)


def _blocks(record: dict[str, object]) -> list[dict[str, object]]:
    data = record.get("data")
    content = data.get("content") if isinstance(data, dict) else None
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _texts(blocks: list[dict[str, object]]) -> list[str]:
    return [b["data"] for b in blocks if b.get("kind") == "text" and isinstance(b.get("data"), str)]  # type: ignore[misc]


def decode_line(line: bytes) -> list[Event] | None:
    """The same format in plain Python: the fallback decoder, and the reference the layout is tested on."""
    record = json.loads(line)
    if not isinstance(record, dict):
        raise ValueError("a line is a JSON object")
    events: list[Event] = []
    kind = record.get("kind")
    if isinstance(kind, str):
        events.append(Event.entry_type(kind))
    data = record.get("data") if isinstance(record.get("data"), dict) else {}
    assert isinstance(data, dict)
    meta = data.get("meta") if isinstance(data.get("meta"), dict) else {}
    assert isinstance(meta, dict)
    stamp = meta.get("timestamp") if isinstance(meta.get("timestamp"), str) else None
    blocks = _blocks(record)
    if kind in ("Prompt", "ToolResults"):
        results = [_result(b) for b in blocks if b.get("kind") == "toolResult"]
        texts = _texts(blocks)
        if results:
            events.extend(results)
        elif texts:
            # The core joins a prompt's text blocks with a newline, then tests the skip prefixes.
            text = "\n".join(texts)
            if not text.lstrip().startswith(LAYOUT.skip_prompt_prefixes):
                events.append(Event.user(text, stamp))
    elif kind == "AssistantMessage":
        message_id = data.get("message_id") if isinstance(data.get("message_id"), str) else None
        # The reply's text is its last text that is not blank (the core keeps the last one).
        texts = [t for t in _texts(blocks) if t.strip()]
        events.append(Event.assistant(texts[-1] if texts else None, stamp, message_id))
        for block in blocks:
            if block.get("kind") == "toolUse" and isinstance(block.get("name"), str):
                events.append(_tool(block, stamp))
    return events


def _result(block: dict[str, object]) -> Event:
    """A ``toolResult`` block: the id of the call it answers and its text blocks, joined."""
    inner = block.get("data") if isinstance(block.get("data"), dict) else {}
    assert isinstance(inner, dict)
    call_id = inner.get("toolUseId")
    content = inner.get("content")
    parts = [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
    texts = [b["data"] for b in parts if b.get("kind") == "text" and isinstance(b.get("data"), str)]
    text = content if isinstance(content, str) else ("\n".join(texts) if texts else None)
    return Event.result(call_id if isinstance(call_id, str) else None, text)


def _tool(block: dict[str, object], stamp: str | None) -> Event:
    args = block.get("input")
    name = block["name"]
    assert isinstance(name, str)
    call_id = block.get("toolUseId") if isinstance(block.get("toolUseId"), str) else None
    arguments = args if isinstance(args, dict) else None
    primary = next(
        (arguments[k] for k in LAYOUT.primary_keys if arguments and isinstance(arguments.get(k), str)),
        None,
    )
    return Event.tool(name, arguments, primary=primary, id=call_id, timestamp=stamp)  # type: ignore[arg-type]


#: Kiro CLI's built-in tools (and the older ``fs_*`` / ``execute_bash`` names); any other is ``other``.
CATEGORIES = {
    "write": "edit",
    "fs_write": "edit",
    "read": "read",
    "fs_read": "read",
    "glob": "read",
    "grep": "read",
    "web_fetch": "read",
    "web_search": "read",
    "shell": "command",
    "execute_bash": "command",
}

FORMAT = FormatSpec(
    name=NAME,
    layout=LAYOUT,
    decode=decode_line,
    categories=CATEGORIES,
    injected_markers=("[Session Activity]",),
    description="Kiro CLI sessions (~/.kiro/sessions/cli/<id>.jsonl; line shape partly assumed)",
    samples=tuple(sorted(SAMPLES.glob("*.jsonl"))),
)


def kiro_dir(settings: Settings) -> Path:
    override = os.environ.get("SIDELIGHT_KIRO_DIR")
    return Path(override) if override else settings.home / ".kiro"


def roots(settings: Settings) -> list[Path]:
    cli = kiro_dir(settings) / "sessions" / "cli"
    return [cli] if cli.is_dir() else []


def _sidecar(path: Path) -> dict[str, object]:
    """``<id>.json`` beside the transcript: the session's id and working directory."""
    try:
        value = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def list_sessions(settings: Settings) -> Iterator[Session]:
    """Every ``<id>.jsonl`` under ``~/.kiro/sessions/cli/``; its sidecar gives the id and the group."""
    seen: set[str] = set()
    for root in roots(settings):
        for path in sorted(root.glob("*.jsonl")):
            meta = _sidecar(path)
            sid = meta.get("session_id")
            session_id = sid if isinstance(sid, str) and sid else path.stem
            cwd = meta.get("cwd")
            # Two sessions whose ids start alike get their full id as a name.
            name = f"kiro-{session_id[:8]}"
            if name in seen:
                name = f"kiro-{session_id}"
            seen.add(name)
            yield Session(
                key=f"kiro:{session_id}",
                name=name,
                path=path,
                format=NAME,
                # Who sees whom: the sessions of one working directory.
                group=cwd if isinstance(cwd, str) and cwd else str(root),
                resolver=NAME,
                id=session_id,
            )


def current(event: HostEvent, settings: Settings) -> Session | None:
    """The session a Kiro CLI hook event comes from: by transcript path, else by session id."""
    if event.transcript_path is None and event.session_id is None:
        return None
    for session in list_sessions(settings):
        if event.transcript_path is not None and session.path == event.transcript_path:
            return session
        if event.session_id is not None and session.id == event.session_id:
            return session
    return None


@hookimpl
def sidelight_formats() -> Iterator[FormatSpec]:
    yield FORMAT


@hookimpl
def sidelight_resolvers() -> Iterator[ResolverSpec]:
    yield ResolverSpec(
        name=NAME,
        list_sessions=list_sessions,
        current=current,
        roots=roots,
        description="Kiro CLI sessions under ~/.kiro/sessions/cli (SIDELIGHT_KIRO_DIR overrides ~/.kiro)",
        # Where the sessions are: a watcher's service is given it, and answers only hooks that agree.
        variables=("SIDELIGHT_KIRO_DIR",),
    )


# --- The installer: ``sidelight install kiro`` / ``sidelight uninstall kiro`` ---------------------------

#: In the agent file sidelight writes, so that uninstall removes only a file that is sidelight's.
MARKER = "sidelight-kiro-agent"


def agent_file() -> Path:
    """``~/.kiro/agents/sidelight.json`` (``SIDELIGHT_KIRO_DIR`` overrides ``~/.kiro``): a Kiro CLI agent
    of sidelight's own (ASSUMED, README.md "The installer")."""
    override = os.environ.get("SIDELIGHT_KIRO_DIR")
    return (Path(override) if override else Path.home() / ".kiro") / "agents" / "sidelight.json"


def agent_text() -> str:
    """The agent: every tool, and sidelight's hook on each prompt (its output joins the context)."""
    from sidelight.install import hook_command

    command = hook_command(NAME)
    agent = {
        "name": "sidelight",
        "description": f"Kiro's default tools, with sibling sessions' activity on each prompt ({MARKER})",
        "tools": ["*"],
        "hooks": {"agentSpawn": [{"command": command}], "userPromptSubmit": [{"command": command}]},
    }
    return json.dumps(agent, indent=2) + "\n"


def _ours(text: str) -> bool:
    return MARKER in text


# sidelight.install is imported only here: a prompt hook loads this module too, and needs none of it.
def install(scope: str) -> Iterator[InstallResult]:
    from sidelight.install import install_file

    yield install_file(NAME, agent_file(), agent_text(), "Kiro CLI agent", _ours)


def uninstall(scope: str) -> Iterator[InstallResult]:
    from sidelight.install import uninstall_file

    yield uninstall_file(NAME, agent_file(), _ours)


@hookimpl
def sidelight_installers() -> Iterator[InstallerSpec]:
    yield InstallerSpec(
        name=NAME,
        install=install,
        uninstall=uninstall,
        description="a Kiro CLI agent with sidelight's hooks, ~/.kiro/agents/sidelight.json",
    )


# --- The agent: what ties the records above together under one name ------------------------------------


@hookimpl
def sidelight_agents() -> Iterator[AgentSpec]:
    yield AgentSpec(
        name=NAME,
        title="Kiro CLI",
        formats=(NAME,),
        resolver=NAME,
        hosts=(NAME,),  # ``sidelight hook kiro``: the installed agent's hooks
        installer=NAME,
        # None answered yet: the installer writes ``agentSpawn`` and ``userPromptSubmit`` hooks, but
        # without an injector for Kiro's hook input sidelight prints nothing there (README.md, "The
        # installer"). With one, they would be ``HostHook("prompt", "userPromptSubmit", {"inject"})``
        # and ``HostHook("start", "agentSpawn", {"inject"})``.
        hooks=(),
        timeout_unit="ms",  # ASSUMED: the predecessor's hooks take ``timeout_ms``
        variables=("SIDELIGHT_KIRO_DIR",),
    )
