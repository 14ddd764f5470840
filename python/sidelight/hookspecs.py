"""The hooks a sidelight plugin can implement (pluggy, project name ``sidelight``).

A plugin is a module or object with functions marked ``@sidelight.hookimpl``, registered through the
entry-point group ``sidelight``. Every hook returns records (:mod:`sidelight.records`) that carry a
``name``; sidelight's own templates (the seven agents' and volute) use the same hooks. Each hook is
documented with its exact signature in ``docs/plugins.md``.
"""

from __future__ import annotations

# Imported at run time, not only for type checking: the hooks' signatures are read by tools and by the
# docs test (`inspect.signature(..., eval_str=True)`).
from collections.abc import Iterable  # noqa: TC003

import pluggy

from sidelight.records import (  # noqa: TC001
    AgentSpec,
    ChunkSummarizerSpec,
    EmbedderSpec,
    FormatSpec,
    InjectorSpec,
    InstallerSpec,
    ResolverSpec,
    SinkSpec,
    SummarizerSpec,
    TokenCounterSpec,
)

__all__ = ["PROJECT", "hookimpl", "hookspec"]

#: The pluggy project name, and the entry-point group plugins register under.
PROJECT = "sidelight"

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def sidelight_formats() -> Iterable[FormatSpec]:
    """Transcript formats this plugin can read.

    Example::

        from sidelight import hookimpl
        from sidelight.records import FormatSpec

        @hookimpl
        def sidelight_formats():
            yield FormatSpec(
                name="my-agent",
                decoder="claude-code",  # its transcripts are Claude-Code-shaped
                categories={"patch": "edit", "shell": "command"},
            )
    """
    raise NotImplementedError


@hookspec
def sidelight_resolvers() -> Iterable[ResolverSpec]:
    """Where a host's sessions live, and which one a hook event comes from.

    Example::

        from pathlib import Path
        from sidelight import hookimpl
        from sidelight.records import ResolverSpec, Session

        def list_sessions(settings):
            root = Path.home() / ".my-agent" / "sessions"
            for path in sorted(root.glob("*.jsonl")):
                yield Session(key=f"my-agent:{path.stem}", name=path.stem, path=path,
                              format="my-agent", group=str(root), resolver="my-agent")

        def current(event, settings):
            if event.transcript_path is None:
                return None
            return next((s for s in list_sessions(settings) if s.path == event.transcript_path), None)

        @hookimpl
        def sidelight_resolvers():
            yield ResolverSpec(name="my-agent", list_sessions=list_sessions, current=current,
                               roots=lambda settings: [Path.home() / ".my-agent" / "sessions"])
    """
    raise NotImplementedError


@hookspec
def sidelight_summarizers() -> Iterable[SummarizerSpec]:
    """One digest line for a sibling's activity; the first summarizer that answers wins.

    Example::

        from sidelight import hookimpl
        from sidelight.records import SummarizerSpec

        def terse(activity):
            if activity.is_empty:
                return None
            return f"- {activity.session.name}: {activity.messages} messages"

        @hookimpl
        def sidelight_summarizers():
            yield SummarizerSpec(name="terse", summarize=terse)
    """
    raise NotImplementedError


@hookspec
def sidelight_injectors() -> Iterable[InjectorSpec]:
    """A host's hook protocol: read its hook input, render what to print.

    Example::

        import json
        from sidelight import hookimpl
        from sidelight.records import HostEvent, InjectorSpec

        def read_event(payload):
            if "my_agent_session" not in payload:
                return None
            return HostEvent(host="my-agent", event="UserPromptSubmit",
                             session_id=payload["my_agent_session"], raw=payload)

        def render(event, text):
            return None if text is None else json.dumps({"context": text})

        @hookimpl
        def sidelight_injectors():
            yield InjectorSpec(name="my-agent", read_event=read_event, render=render)
    """
    raise NotImplementedError


@hookspec
def sidelight_sinks() -> Iterable[SinkSpec]:
    """Receivers of the watcher's activity events (a log, a webhook, a broker).

    Delivery is at least once: after a crash the watcher hands on again the events of what it had read
    since it last saved its cursors, each with the same :attr:`~sidelight.records.SinkEvent.key` and
    timestamp. A sink that must not act twice drops a key it has seen (the built-in ``jsonl-log`` does,
    so its file holds each event once).

    Example::

        import logging
        from sidelight import hookimpl
        from sidelight.records import SinkSpec

        log = logging.getLogger("my-sink")

        @hookimpl
        def sidelight_sinks():
            yield SinkSpec(name="log", emit=lambda event: log.info("%s %s", event.kind, event.session.name))
    """
    raise NotImplementedError


@hookspec
def sidelight_token_counters() -> Iterable[TokenCounterSpec]:
    """Token counters for budgets (the recap's, the history's); one is chosen by name with
    ``SIDELIGHT_TOKEN_COUNTER`` or the config file's ``token_counter``.

    Example::

        from sidelight import hookimpl
        from sidelight.records import TokenCounterSpec

        def count_words(text):
            return len(text.split())

        @hookimpl
        def sidelight_token_counters():
            yield TokenCounterSpec(name="words", count=count_words)
    """
    raise NotImplementedError


@hookspec
def sidelight_embedders() -> Iterable[EmbedderSpec]:
    """Text embeddings for the recap's similarity; one is chosen by name with
    ``SIDELIGHT_RECAP_EMBEDDER`` or the config file's ``[recap] embedder``.

    Example::

        from sidelight import hookimpl
        from sidelight.records import EmbedderSpec

        WORDS = ("test", "fix", "edit", "read", "build", "docs")

        def embed(texts):
            return [[float(text.lower().count(word)) for word in WORDS] for text in texts]

        @hookimpl
        def sidelight_embedders():
            yield EmbedderSpec(name="keywords", embed=embed)
    """
    raise NotImplementedError


@hookspec
def sidelight_chunk_summarizers() -> Iterable[ChunkSummarizerSpec]:
    """Summaries of a session's chunks for its recap; the first summarizer that answers wins.

    Example::

        from sidelight import hookimpl
        from sidelight.records import ChunkSummarizerSpec

        def edits_only(chunk):
            edits = [line.text for line in chunk.lines if line.kind == "consequential"]
            return " ".join(edits) or None

        @hookimpl
        def sidelight_chunk_summarizers():
            yield ChunkSummarizerSpec(name="edits-only", summarize=edits_only)
    """
    raise NotImplementedError


@hookspec
def sidelight_agents() -> Iterable[AgentSpec]:
    """The coding agents a plugin adds, one :class:`~sidelight.records.AgentSpec` each: the agent's
    title, the formats and the resolver its sessions are read with, the host names its hook events come
    with, its installer, and which of its host's events sidelight answers and what each answer can do.
    The formats, resolver, injector and installer it names are registered through their own hooks;
    this record ties them together, so that every command can speak of the agent by name.

    Example::

        from sidelight import hookimpl
        from sidelight.records import AgentSpec, HostHook

        @hookimpl
        def sidelight_agents():
            yield AgentSpec(
                name="my-agent", title="My Agent", formats=("my-agent",), resolver="my-agent",
                hosts=("my-agent",), installer="my-agent", timeout_unit="s",
                hooks=(HostHook("prompt", "onPrompt", {"inject"}),
                       HostHook("before_tool", "beforeTool", {"refuse"})),
                variables=("MY_AGENT_HOME",),
            )
    """
    raise NotImplementedError


@hookspec
def sidelight_installers() -> Iterable[InstallerSpec]:
    """What ``sidelight install NAME`` and ``sidelight uninstall NAME`` set up: a host's hooks or
    extension. Write the host's files with :func:`sidelight.install.install_file` and take them out
    with :func:`sidelight.install.uninstall_file`: the first backs up what was there and records what
    it wrote, the second puts back exactly what was there before (and removes the folders install
    made, once empty), so ``uninstall`` undoes ``install`` whatever was there before. Import
    :mod:`sidelight.install` inside the functions: a prompt hook loads the plugin too, and needs none
    of it.

    Example::

        import json
        from pathlib import Path
        from sidelight import hookimpl
        from sidelight.records import InstallerSpec

        MARKER = "sidelight-my-agent-hooks"

        def hooks_file():
            return Path.home() / ".my-agent" / "hooks" / "sidelight.json"

        def install(scope):
            from sidelight.install import hook_command, install_file

            hooks = {"_comment": MARKER, "onPrompt": [{"command": hook_command("my-agent")}]}
            text = json.dumps(hooks, indent=2) + "\\n"
            yield install_file("my-agent", hooks_file(), text, "my-agent hooks", lambda t: MARKER in t)

        def uninstall(scope):
            from sidelight.install import uninstall_file

            yield uninstall_file("my-agent", hooks_file(), lambda t: MARKER in t)

        @hookimpl
        def sidelight_installers():
            yield InstallerSpec(name="my-agent", install=install, uninstall=uninstall,
                                description="hooks in ~/.my-agent/hooks/sidelight.json")
    """
    raise NotImplementedError
