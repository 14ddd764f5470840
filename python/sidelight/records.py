"""The records that plugins exchange: sessions, host events, sibling activity, and the plugin records.

Every hook of :mod:`sidelight.hookspecs` returns one of the ``*Spec`` records below: a small frozen
dataclass with a ``name`` and the callables that do the work. Keeping them plain data means a plugin
needs nothing from sidelight but these classes and the ``hookimpl`` marker.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence
    from pathlib import Path

    from sidelight.config import Settings
    from sidelight.formats import Event, Layout
    from sidelight.lines import KINDS as KINDS
    from sidelight.lines import Chunk as Chunk
    from sidelight.lines import Line as Line
    from sidelight.lines import LineKind as LineKind
    from sidelight.plugins import Plugins
    from sidelight.types import Activity, ToolUse

__all__ = [
    "ChunkSummarizerSpec",
    "EmbedderSpec",
    "FormatSpec",
    "HostEvent",
    "InjectorSpec",
    "ResolverSpec",
    "Session",
    "SessionActivity",
    "SinkEvent",
    "SinkSpec",
    "SummarizerSpec",
    "TokenCounterSpec",
]


#: The host events sidelight handles.
EventName = Literal["UserPromptSubmit", "SessionStart", "SessionEnd"]


#: The records of a collapsed transcript (:mod:`sidelight.lines`: ``Line``, ``Chunk``, ``LineKind``,
#: ``KINDS``), importable from here like the other records and made on first use.
_LINE_RECORDS: frozenset[str] = frozenset({"KINDS", "Chunk", "Line", "LineKind"})


def __getattr__(name: str) -> object:
    if name in _LINE_RECORDS:
        from sidelight import lines  # on first use only: a prompt hook never needs them

        return getattr(lines, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass(frozen=True, slots=True)
class Session:
    """One agent session as a resolver sees it.

    ``key`` is unique across all resolvers and stable over time (it names the session in cursor files);
    ``name`` is what a person reads in the digest (a volute name like ``discord``, a transcript title,
    else a short id); ``group`` decides who the siblings are (by default, sessions of one group see
    each other: for Claude Code the project directory).
    """

    key: str
    name: str
    path: Path
    format: str
    group: str
    resolver: str
    #: The agent's own id of the session (Claude Code ``sessionId``, Pi header ``id``, Codex rollout id).
    id: str | None = None
    #: More transcripts that belong to this session (Claude Code subagent files).
    extra_paths: tuple[Path, ...] = ()
    #: Where this session keeps its cursors when it reads its siblings (``None``: the state directory's
    #: ``cursors.json``; the volute template keeps ``.volute/session-cursors.json``).
    cursor_file: Path | None = None

    @property
    def agent(self) -> str:
        """The agent's short name, as the digest says it: ``claude`` for ``claude-code``, else the
        format's name (``pi``, ``codex``, a plugin's format)."""
        return _AGENTS.get(self.format, self.format)

    @property
    def directory(self) -> str | None:
        """The session's directory when its ``group`` is one (the agents' resolvers group sessions by
        working directory, volute by mind folder), else ``None``."""
        return self.group if posixpath.isabs(self.group) else None


#: Short agent names for formats whose name is long.
_AGENTS: dict[str, str] = {"claude-code": "claude"}


@dataclass(frozen=True, slots=True)
class HostEvent:
    """What a host's hook told us, whatever the host: the same fields for Claude Code, Codex and Pi."""

    host: str
    event: EventName
    session_id: str | None = None
    transcript_path: Path | None = None
    cwd: Path | None = None
    prompt: str | None = None
    #: The hook's input as the host sent it.
    raw: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class SessionActivity:
    """What one sibling did since the reader last looked: the input of a summarizer.

    The counts are summed over the session's transcripts (its main file and subagent files).
    """

    session: Session
    user_messages: int = 0
    assistant_messages: int = 0
    tools: Mapping[str, int] = field(default_factory=dict)
    #: Tool uses by category: ``edit``, ``read``, ``command``, ``other``.
    categories: Mapping[str, int] = field(default_factory=dict)
    files_touched: tuple[str, ...] = ()
    first_user_text: str | None = None
    last_assistant_text: str | None = None
    first_timestamp: str | None = None
    last_timestamp: str | None = None
    #: True when this is the first look at the sibling (only a bounded recent tail was read).
    first_look: bool = False
    #: Seconds from the last timestamp to now (``None`` without timestamps).
    age_seconds: float | None = None
    #: The most recent tool uses (each transcript's last ``sidelight._core.TOOL_USES_KEPT``), oldest
    #: first: name, category, primary argument (a path, a command…), timestamp.
    tool_uses: tuple[ToolUse, ...] = ()
    #: The sibling's working directory, when its transcript says it (``None``: unknown; see
    #: :attr:`directory`).
    cwd: str | None = None
    #: Files the sibling edited or wrote that the reading session has itself edited, written or read
    #: (as :attr:`files_changed` names them, most recent first): a possible conflict.
    shared_files: tuple[str, ...] = ()

    @property
    def messages(self) -> int:
        return self.user_messages + self.assistant_messages

    @property
    def is_empty(self) -> bool:
        """Nothing happened: no message and no tool use."""
        return self.messages == 0 and not any(self.categories.values())

    @property
    def directory(self) -> str | None:
        """Where the sibling works: its ``cwd``, else its session's :attr:`Session.directory`; relative
        paths of its tool uses are relative to it."""
        return self.cwd or self.session.directory

    @property
    def files_changed(self) -> tuple[str, ...]:
        """The files edited or written, each once, the most recently changed first (paths as the
        transcript gives them)."""
        order = dict.fromkeys(self.files_touched)
        for use in self.tool_uses:
            if use.category == "edit" and use.primary_arg:
                order.pop(use.primary_arg, None)
                order[use.primary_arg] = None
        return tuple(reversed(order))

    @property
    def commands(self) -> tuple[str, ...]:
        """The commands run among :attr:`tool_uses`, oldest first (one per run, repeats included)."""
        return tuple(u.primary_arg for u in self.tool_uses if u.category == "command" and u.primary_arg)

    @classmethod
    def merge(
        cls,
        session: Session,
        activities: Iterable[Activity],
        first_look: bool = False,
        now: float | None = None,
    ) -> SessionActivity:
        """Sums the activity of a session's transcripts, in the order given (main file first)."""
        user = assistant = 0
        tools: dict[str, int] = {}
        categories = {"edit": 0, "read": 0, "command": 0, "other": 0}
        files: dict[str, None] = {}
        first_user: str | None = None
        last_text: tuple[str, str | None] | None = None
        stamps: list[str] = []
        uses: list[ToolUse] = []
        several = False  # tool uses from more than one transcript: put in time order
        cwd: str | None = None
        for a in activities:
            user += a.messages.user
            assistant += a.messages.assistant
            for name, n in a.tools.items():
                tools[name] = tools.get(name, 0) + n
            for name in categories:
                categories[name] += getattr(a.categories, name)
            files.update(dict.fromkeys(a.files_touched))
            if first_user is None:
                first_user = a.first_user_text
            if a.last_assistant_text is not None:
                stamp = a.last_timestamp or ""
                if last_text is None or stamp >= (last_text[1] or ""):
                    last_text = (a.last_assistant_text, stamp)
            stamps.extend(t for t in (a.first_timestamp, a.last_timestamp) if t)
            if a.tool_uses:
                several = several or bool(uses)
                uses.extend(a.tool_uses)
            cwd = cwd or a.cwd
        if several:
            uses.sort(key=lambda use: use.timestamp or "")
        last = max(stamps) if stamps else None
        return cls(
            session=session,
            user_messages=user,
            assistant_messages=assistant,
            tools=tools,
            categories=categories,
            files_touched=tuple(files),
            first_user_text=first_user,
            last_assistant_text=last_text[0] if last_text else None,
            first_timestamp=min(stamps) if stamps else None,
            last_timestamp=last,
            first_look=first_look,
            age_seconds=_age(last, now),
            tool_uses=tuple(uses),
            cwd=cwd,
        )


def _age(timestamp: str | None, now: float | None) -> float | None:
    """Seconds from an ISO-8601 timestamp (``Z`` or an offset) to ``now`` (epoch seconds)."""
    if timestamp is None or now is None:
        return None
    from sidelight.timestamps import epoch_seconds

    moment = epoch_seconds(timestamp)
    return None if moment is None else max(0.0, now - moment)


@dataclass(slots=True)
class SinkEvent:
    """An activity event for sinks (log, webhook, broker): see :class:`SinkSpec`. Every sink gets the
    same object: read it, never change it. (Not a frozen dataclass: the watcher makes thousands a second,
    and a frozen one costs three times as much to make.)

    ``timestamp`` is when it happened (a transcript line's own time, the time a hook recorded), ``key``
    what it is: the watcher gives every event a key made from where it comes from (the transcript, the
    byte offset of its line and its place on the line; the offset of a hook's record), the same each
    time it is read again, so that a sink can tell an event it already has after a restart."""

    kind: str
    session: Session
    timestamp: str | None = None
    data: Mapping[str, Any] = field(default_factory=dict)
    key: str | None = None


@dataclass(frozen=True, slots=True)
class FormatSpec:
    """A transcript format: which native decoder reads it and how its tools map to categories.

    ``decoder`` names one of ``sidelight._core.FORMATS`` for a format the built-in decoders read; a
    third-party format gives a ``layout`` instead (a :class:`sidelight.formats.Layout`, compiled by the
    native core: near built-in speed), or a ``decode(line: bytes)`` function returning
    :class:`sidelight.formats.Event` records (the Python fallback, slower); its ``decoder`` is then its
    own ``name``. With both, the layout is used and ``decode`` is the reference the conformance checks
    compare it with. ``categories`` maps lowercase tool names to ``edit``, ``read``, ``command`` or
    ``other``; ``injected_markers`` are prefixes of text that sidelight itself injects into this
    format's transcripts (never reported back); ``samples`` are transcripts the plugin ships, on which
    ``sidelight plugins --check`` runs the decoding checks.
    """

    name: str
    decoder: str = ""
    categories: Mapping[str, str] = field(default_factory=dict)
    injected_markers: tuple[str, ...] = ()
    description: str = ""
    layout: Layout | None = None
    decode: Callable[[bytes], Iterable[Event] | None] | None = None
    samples: tuple[Path, ...] = ()

    def __post_init__(self) -> None:
        if not self.decoder:
            if self.layout is None and self.decode is None:
                raise ValueError(
                    f"format {self.name!r}: give a decoder (a built-in format), a layout or a decode function"
                )
            object.__setattr__(self, "decoder", self.name)


@dataclass(frozen=True, slots=True)
class ResolverSpec:
    """Finds a host's sessions.

    ``list_sessions(settings)`` yields every session it knows; ``current(event, settings)`` says which of
    them a hook event comes from (``None``: not one of this resolver's); ``roots(settings)`` names the
    folders a watcher should follow.
    """

    name: str
    list_sessions: Callable[[Settings], Iterable[Session]]
    current: Callable[[HostEvent, Settings], Session | None]
    roots: Callable[[Settings], Iterable[Path]] = lambda settings: ()
    description: str = ""
    #: Siblings that have no transcript on this machine (a fleet's other machines):
    #: ``remote_activity(current, settings, deadline, commit)`` returns what they did since ``current``
    #: last asked, by ``deadline`` (a :func:`time.monotonic` value); ``commit=False`` is a dry run.
    remote_activity: Callable[[Session, Settings, float, bool], Iterable[SessionActivity]] | None = None


@dataclass(frozen=True, slots=True)
class SummarizerSpec:
    """Turns one sibling's activity into one digest line (``None``: nothing worth saying).

    The first summarizer (by plugin order) that returns a string wins; the built-in ``default`` comes last.
    """

    name: str
    summarize: Callable[[SessionActivity], str | None]
    description: str = ""


@dataclass(frozen=True, slots=True)
class InjectorSpec:
    """Speaks one host's hook protocol.

    ``read_event(payload)`` turns the host's hook input (the parsed stdin JSON) into a :class:`HostEvent`
    (``None``: not this host's); ``render(event, context)`` turns the text to inject (``None``: nothing
    new) into what the hook prints (``None``: print nothing).
    """

    name: str
    read_event: Callable[[Mapping[str, Any]], HostEvent | None]
    render: Callable[[HostEvent, str | None], str | None]
    description: str = ""


@dataclass(frozen=True, slots=True)
class SinkSpec:
    """Receives activity events from the watcher: ``emit(event)``; it must not block for long.

    ``emit_many(events)``, when given, receives all the events of one pass of the watcher at once, in
    order, instead of one ``emit`` call each: a sink that writes or sends them does it once per pass
    (the watcher may produce thousands of events a second).
    """

    name: str
    emit: Callable[[SinkEvent], None]
    description: str = ""
    emit_many: Callable[[Sequence[SinkEvent]], None] | None = None
    #: Called once when a watcher starts, before its first event (a sink with a thread starts it here).
    start: Callable[[Settings, Plugins], None] | None = None
    #: Called once when the watcher stops, after its last event: flush, join the sink's threads.
    stop: Callable[[], None] | None = None


@dataclass(frozen=True, slots=True)
class TokenCounterSpec:
    """Counts tokens: ``count(text)``. Chosen by name with ``SIDELIGHT_TOKEN_COUNTER`` (or the config
    file's ``token_counter``); the built-in one is ``estimate``."""

    name: str
    count: Callable[[str], int]
    description: str = ""


@dataclass(frozen=True, slots=True)
class EmbedderSpec:
    """Turns texts into vectors for the recap's similarity (novelty against long-term memories, and
    centrality between chunks): ``embed(texts)`` returns one vector per text, all of one length.
    Chosen by name with ``SIDELIGHT_RECAP_EMBEDDER``; the built-in one is ``hashed-ngrams``."""

    name: str
    embed: Callable[[Sequence[str]], Sequence[Sequence[float]]]
    description: str = ""


@dataclass(frozen=True, slots=True)
class ChunkSummarizerSpec:
    """Summarizes one chunk of a session for its recap: ``summarize(chunk)`` returns the summary text
    (``None``: let the next summarizer answer). The built-in ``extractive`` one comes last."""

    name: str
    summarize: Callable[[Chunk], str | None]
    description: str = ""
