"""The records that plugins exchange: sessions, host events, sibling activity, and the plugin records.

Every hook of :mod:`sidelight.hookspecs` returns one of the ``*Spec`` records below: a small frozen
dataclass with a ``name`` and the callables that do the work. Keeping them plain data means a plugin
needs nothing from sidelight but these classes and the ``hookimpl`` marker.

They behave as the frozen, slotted dataclasses they were (:func:`dataclasses.fields`,
:func:`dataclasses.replace` and the rest work on them) but are written out (:mod:`sidelight._fast._record`):
a prompt hook imports this module on every prompt, and making a dataclass costs it a millisecond each.
"""

from __future__ import annotations

import posixpath

from sidelight._fast._record import NEW_DICT, record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence
    from pathlib import Path
    from typing import Any, Literal

    from sidelight.config import Settings
    from sidelight.formats import Event, Layout
    from sidelight.lines import KINDS as KINDS
    from sidelight.lines import Chunk as Chunk
    from sidelight.lines import Line as Line
    from sidelight.lines import LineKind as LineKind
    from sidelight.lines import Subagent as Subagent
    from sidelight.plugins import Plugins
    from sidelight.types import Activity, ToolUse

__all__ = [
    "HOOK_ABILITIES",
    "HOOK_MOMENTS",
    "AgentSpec",
    "ChunkSummarizerSpec",
    "EmbedderSpec",
    "FormatSpec",
    "HostEvent",
    "HostHook",
    "InjectorSpec",
    "InstallResult",
    "InstallerSpec",
    "Liveness",
    "ResolverSpec",
    "Session",
    "SessionActivity",
    "SinkEvent",
    "SinkSpec",
    "SummarizerSpec",
    "TokenCounterSpec",
]


#: Whether a session's process runs, as its host's registry of running sessions says
#: (:attr:`AgentSpec.live_sessions`): ``running``, or ``gone`` (its process exited, or its pid is now
#: another program's).
if TYPE_CHECKING:
    Liveness = Literal["running", "gone"]
else:
    Liveness = str

#: The host events sidelight handles.
if TYPE_CHECKING:
    EventName = Literal["UserPromptSubmit", "SessionStart", "SessionEnd", "PreToolUse", "PostToolUse"]
else:
    EventName = str  # the Literal above, without importing typing at run time


#: The records of a collapsed transcript (:mod:`sidelight.lines`: ``Line``, ``Chunk``, ``LineKind``,
#: ``KINDS``, ``Subagent``), importable from here like the other records and made on first use.
_LINE_RECORDS: frozenset[str] = frozenset({"KINDS", "Chunk", "Line", "LineKind", "Subagent"})


def __getattr__(name: str) -> object:
    if name in _LINE_RECORDS:
        from sidelight import lines  # on first use only: a prompt hook never needs them

        return getattr(lines, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_set = object.__setattr__


@record(frozen=True)
class Session:
    """One agent session as a resolver sees it.

    ``key`` is unique across all resolvers and stable over time (it names the session in cursor files);
    ``name`` is what a person reads in the digest (a name a host gives it like ``discord``, a transcript
    title, else a short id); ``group`` decides who the siblings are (by default, sessions of one group
    see each other: usually the project directory).
    """

    __slots__ = ("cursor_file", "extra_paths", "format", "group", "id", "key", "name", "path", "resolver")

    key: str
    name: str
    path: Path
    format: str
    group: str
    resolver: str
    #: The agent's own id of the session (as its transcript or file name records it).
    id: str | None
    #: More transcripts that belong to this session (its subagents', or a resumed session's later files:
    #: ``FormatSpec.resumes_beside``).
    extra_paths: tuple[Path, ...]
    #: Where this session keeps its cursors when it reads its siblings (``None``: the state directory's
    #: ``cursors.json``; a resolver may keep them beside the session's own files).
    cursor_file: Path | None

    def __init__(
        self,
        key: str,
        name: str,
        path: Path,
        format: str,
        group: str,
        resolver: str,
        id: str | None = None,
        extra_paths: tuple[Path, ...] = (),
        cursor_file: Path | None = None,
    ) -> None:
        _set(self, "key", key)
        _set(self, "name", name)
        _set(self, "path", path)
        _set(self, "format", format)
        _set(self, "group", group)
        _set(self, "resolver", resolver)
        _set(self, "id", id)
        _set(self, "extra_paths", extra_paths)
        _set(self, "cursor_file", cursor_file)

    @property
    def agent(self) -> str:
        """The agent's short name, as the digest says it (:data:`agent_name`): ``claude`` for
        ``claude-code``, else the format's name (``pi``, ``codex``, a plugin's format)."""
        return agent_name(self.format)

    @property
    def directory(self) -> str | None:
        """The session's directory when its ``group`` is one (the agents' resolvers group sessions by
        working directory, volute by mind folder), else ``None``."""
        return self.group if posixpath.isabs(self.group) else None


def _format_name(format: str) -> str:
    return format


#: How :attr:`Session.agent` names the agent of a format. The plugin manager sets it when it is imported
#: (:func:`sidelight.plugins.agent_name`: the :attr:`AgentSpec.short_name` of the agent named as the
#: format); until then, the format's name. Set from there, not asked from here: the plugin contract
#: never imports the plugin manager.
agent_name: Callable[[str], str] = _format_name


@record(frozen=True)
class HostEvent:
    """What a host's hook told us, whatever the host: the same fields for Claude Code, Codex and Pi."""

    __slots__ = ("cwd", "event", "host", "prompt", "raw", "session_id", "transcript_path")

    host: str
    event: EventName
    session_id: str | None
    transcript_path: Path | None
    cwd: Path | None
    prompt: str | None
    #: The hook's input as the host sent it.
    raw: Mapping[str, Any]

    def __init__(
        self,
        host: str,
        event: EventName,
        session_id: str | None = None,
        transcript_path: Path | None = None,
        cwd: Path | None = None,
        prompt: str | None = None,
        raw: Mapping[str, Any] = NEW_DICT,
    ) -> None:
        _set(self, "host", host)
        _set(self, "event", event)
        _set(self, "session_id", session_id)
        _set(self, "transcript_path", transcript_path)
        _set(self, "cwd", cwd)
        _set(self, "prompt", prompt)
        _set(self, "raw", {} if raw is NEW_DICT else raw)


@record(frozen=True)
class SessionActivity:
    """What one sibling did since the reader last looked: the input of a summarizer.

    The counts are summed over the session's transcripts (its main file and subagent files).
    """

    __slots__ = (
        "age_seconds",
        "assistant_messages",
        "categories",
        "cwd",
        "files_touched",
        "first_look",
        "first_timestamp",
        "first_user_text",
        "last_assistant_text",
        "last_timestamp",
        "session",
        "shared_files",
        "tool_uses",
        "tools",
        "user_messages",
        "worktree",
    )

    session: Session
    user_messages: int
    assistant_messages: int
    tools: Mapping[str, int]
    #: Tool uses by category: ``edit``, ``read``, ``command``, ``other``.
    categories: Mapping[str, int]
    files_touched: tuple[str, ...]
    first_user_text: str | None
    last_assistant_text: str | None
    first_timestamp: str | None
    last_timestamp: str | None
    #: True when this is the first look at the sibling (only a bounded recent tail was read).
    first_look: bool
    #: Seconds from the last timestamp to now (``None`` without timestamps).
    age_seconds: float | None
    #: The most recent tool uses (each transcript's last ``sidelight._core.TOOL_USES_KEPT``), oldest
    #: first: name, category, primary argument (a path, a command…), timestamp.
    tool_uses: tuple[ToolUse, ...]
    #: The sibling's working directory, when its transcript says it (``None``: unknown; see
    #: :attr:`directory`).
    cwd: str | None
    #: Files the sibling edited or wrote that the reading session has itself edited, written or read
    #: (as :attr:`files_changed` names them, most recent first): a possible conflict.
    shared_files: tuple[str, ...]
    #: The sibling's worktree when it works in another worktree of the reader's git repository (its
    #: branch, else its folder's name; ``None``: the reader's own worktree, or no repository).
    worktree: str | None

    def __init__(
        self,
        session: Session,
        user_messages: int = 0,
        assistant_messages: int = 0,
        tools: Mapping[str, int] = NEW_DICT,
        categories: Mapping[str, int] = NEW_DICT,
        files_touched: tuple[str, ...] = (),
        first_user_text: str | None = None,
        last_assistant_text: str | None = None,
        first_timestamp: str | None = None,
        last_timestamp: str | None = None,
        first_look: bool = False,
        age_seconds: float | None = None,
        tool_uses: tuple[ToolUse, ...] = (),
        cwd: str | None = None,
        shared_files: tuple[str, ...] = (),
        worktree: str | None = None,
    ) -> None:
        _set(self, "session", session)
        _set(self, "user_messages", user_messages)
        _set(self, "assistant_messages", assistant_messages)
        _set(self, "tools", {} if tools is NEW_DICT else tools)
        _set(self, "categories", {} if categories is NEW_DICT else categories)
        _set(self, "files_touched", files_touched)
        _set(self, "first_user_text", first_user_text)
        _set(self, "last_assistant_text", last_assistant_text)
        _set(self, "first_timestamp", first_timestamp)
        _set(self, "last_timestamp", last_timestamp)
        _set(self, "first_look", first_look)
        _set(self, "age_seconds", age_seconds)
        _set(self, "tool_uses", tool_uses)
        _set(self, "cwd", cwd)
        _set(self, "shared_files", shared_files)
        _set(self, "worktree", worktree)

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
    def failed_command(self) -> tuple[str, str] | None:
        """The latest command that failed and was not run again with success since (the same program
        and subcommand), and how (``("pytest -q", "failed, exit 1")``), as a recap tells it from the
        command's output; ``None``: none did, or no result was read (a fleet's remote sibling)."""
        if not any(
            u.category == "command" and u.result is not None and _may_tell_failure(u) for u in self.tool_uses
        ):
            return None  # the common case: nothing to load the command rules for
        from sidelight.commands import latest_failure  # only when a command may have failed

        found = latest_failure(self.tool_uses)
        return None if found is None or found[0].primary_arg is None else (found[0].primary_arg, found[1])

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


@record(frozen=False)
class SinkEvent:
    """An activity event for sinks (log, webhook, broker): see :class:`SinkSpec`. Every sink gets the
    same object: read it, never change it. (Not a frozen record: the watcher makes thousands a second,
    and a frozen one costs three times as much to make.)

    ``timestamp`` is when it happened (a transcript line's own time, the time a hook recorded), ``key``
    what it is: the watcher gives every event a key made from where it comes from (the transcript, the
    byte offset of its line and its place on the line; the offset of a hook's record), the same each
    time it is read again, so that a sink can tell an event it already has after a restart."""

    __slots__ = ("data", "key", "kind", "session", "timestamp")

    kind: str
    session: Session
    timestamp: str | None
    data: Mapping[str, Any]
    key: str | None

    def __init__(
        self,
        kind: str,
        session: Session,
        timestamp: str | None = None,
        data: Mapping[str, Any] = NEW_DICT,
        key: str | None = None,
    ) -> None:
        self.kind = kind
        self.session = session
        self.timestamp = timestamp
        self.data = {} if data is NEW_DICT else data
        self.key = key


@record(frozen=True)
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

    The rest describes the format's files, for the resolvers and commands that read them (all
    optional). ``title_lines`` are the lines that carry a session's title, in order of precedence, each
    ``(marker, key, path)``: the newest line whose top-level ``key`` is the string ``marker`` (with
    ``key`` ``None``: that holds ``marker`` as a key), the value at ``path`` (a tuple of keys) of it
    (:func:`sidelight.engine.paths.read_title`). ``resumes_beside``: a session's extra files in its
    transcript's own folder carry that transcript on (a resumed session's later file), where other
    extra files are its subagents'. ``subagent(path)`` says whose subagent the transcript at ``path``
    is (a :class:`Subagent`; ``None``: a session's own). ``tool_output(text)`` is a tool's result as a
    person reads it, from the text the transcript holds (a preamble moved after the output).
    """

    __slots__ = (
        "categories",
        "decode",
        "decoder",
        "description",
        "injected_markers",
        "layout",
        "name",
        "resumes_beside",
        "samples",
        "subagent",
        "title_lines",
        "tool_output",
    )

    name: str
    decoder: str
    categories: Mapping[str, str]
    injected_markers: tuple[str, ...]
    description: str
    layout: Layout | None
    decode: Callable[[bytes], Iterable[Event] | None] | None
    samples: tuple[Path, ...]
    title_lines: tuple[tuple[str, str | None, tuple[str, ...]], ...]
    resumes_beside: bool
    subagent: Callable[[Path], Subagent | None] | None
    tool_output: Callable[[str], str] | None

    def __init__(
        self,
        name: str,
        decoder: str = "",
        categories: Mapping[str, str] = NEW_DICT,
        injected_markers: tuple[str, ...] = (),
        description: str = "",
        layout: Layout | None = None,
        decode: Callable[[bytes], Iterable[Event] | None] | None = None,
        samples: tuple[Path, ...] = (),
        title_lines: tuple[tuple[str, str | None, tuple[str, ...]], ...] = (),
        resumes_beside: bool = False,
        subagent: Callable[[Path], Subagent | None] | None = None,
        tool_output: Callable[[str], str] | None = None,
    ) -> None:
        if not decoder:
            if layout is None and decode is None:
                raise ValueError(
                    f"format {name!r}: give a decoder (a built-in format), a layout or a decode function"
                )
            decoder = name
        _set(self, "name", name)
        _set(self, "decoder", decoder)
        _set(self, "categories", {} if categories is NEW_DICT else categories)
        _set(self, "injected_markers", injected_markers)
        _set(self, "description", description)
        _set(self, "layout", layout)
        _set(self, "decode", decode)
        _set(self, "samples", samples)
        _set(self, "title_lines", title_lines)
        _set(self, "resumes_beside", resumes_beside)
        _set(self, "subagent", subagent)
        _set(self, "tool_output", tool_output)


def _no_roots(settings: Settings) -> Iterable[Path]:
    return ()


def _told_to_watcher(name: str) -> bool:
    from sidelight.warm import told_to_watcher  # only for a resolver that declares variables

    return told_to_watcher(name)


@record(frozen=True)
class ResolverSpec:
    """Finds a host's sessions.

    ``list_sessions(settings)`` yields every session it knows; ``current(event, settings)`` says which of
    them a hook event comes from (``None``: not one of this resolver's); ``roots(settings)`` names the
    folders a watcher should follow; ``sources(settings)`` names the files outside those folders that
    the listing is made from (opencode's database): when one changes, a watcher lists this resolver's
    sessions again, which brings their transcripts up to date. ``variables`` names the environment
    variables that change what it lists (where its agent keeps its sessions): a watcher's service is
    given them, and answers a hook only when they are the same in both (:mod:`sidelight.warm`). Each
    starts with ``SIDELIGHT_`` or ends with ``_HOME`` or ``_DIR``: the names a hook tells a watcher.

    Optional, for other resolvers and the features: ``folders(cwd, settings)`` names the folders
    where a session started in working directory ``cwd`` keeps its transcript, whether or not they
    exist, the one a new session is written to first; ``session_at(path)`` is the session whose
    transcript is ``path`` (which may not exist yet; ``None``: not one of this resolver's). A resolver
    whose sessions another agent writes uses them (volute's minds run Claude Code and Pi sessions).
    ``history_paths(session)`` names the earlier transcripts of a session that ``sidelight history``
    searches beside its own; ``handoff_in_workspace(workspace, settings)`` says that a session
    working in ``workspace`` reads the previous session's handoff from the workspace itself.
    """

    __slots__ = (
        "current",
        "description",
        "folders",
        "handoff_in_workspace",
        "history_paths",
        "list_sessions",
        "name",
        "remote_activity",
        "roots",
        "session_at",
        "sources",
        "variables",
    )

    name: str
    list_sessions: Callable[[Settings], Iterable[Session]]
    current: Callable[[HostEvent, Settings], Session | None]
    roots: Callable[[Settings], Iterable[Path]]
    description: str
    #: Siblings that have no transcript on this machine (a fleet's other machines):
    #: ``remote_activity(current, settings, deadline, commit)`` returns what they did since ``current``
    #: last asked, by ``deadline`` (a :func:`time.monotonic` value); ``commit=False`` is a dry run.
    remote_activity: Callable[[Session, Settings, float, bool], Iterable[SessionActivity]] | None
    sources: Callable[[Settings], Iterable[str]] | None
    variables: tuple[str, ...]
    folders: Callable[[str, Settings], Sequence[Path]] | None
    session_at: Callable[[Path], Session | None] | None
    history_paths: Callable[[Session], Iterable[Path]] | None
    handoff_in_workspace: Callable[[Path, Settings], bool] | None

    def __init__(
        self,
        name: str,
        list_sessions: Callable[[Settings], Iterable[Session]],
        current: Callable[[HostEvent, Settings], Session | None],
        roots: Callable[[Settings], Iterable[Path]] = _no_roots,
        description: str = "",
        remote_activity: Callable[[Session, Settings, float, bool], Iterable[SessionActivity]] | None = None,
        sources: Callable[[Settings], Iterable[str]] | None = None,
        variables: tuple[str, ...] = (),
        folders: Callable[[str, Settings], Sequence[Path]] | None = None,
        session_at: Callable[[Path], Session | None] | None = None,
        history_paths: Callable[[Session], Iterable[Path]] | None = None,
        handoff_in_workspace: Callable[[Path, Settings], bool] | None = None,
    ) -> None:
        untold = [v for v in variables if not _told_to_watcher(v)] if variables else []
        if untold:
            raise ValueError(
                f"resolver {name!r}: variables: {untold[0]!r} does not start with SIDELIGHT_ nor end"
                " with _HOME or _DIR (a hook does not tell a watcher its value)"
            )
        _set(self, "name", name)
        _set(self, "list_sessions", list_sessions)
        _set(self, "current", current)
        _set(self, "roots", roots)
        _set(self, "description", description)
        _set(self, "remote_activity", remote_activity)
        _set(self, "sources", sources)
        _set(self, "variables", variables)
        _set(self, "folders", folders)
        _set(self, "session_at", session_at)
        _set(self, "history_paths", history_paths)
        _set(self, "handoff_in_workspace", handoff_in_workspace)


@record(frozen=True)
class SummarizerSpec:
    """Turns one sibling's activity into one digest line (``None``: nothing worth saying).

    The first summarizer (by plugin order) that returns a string wins; the built-in ``default`` comes last.
    """

    __slots__ = ("description", "name", "summarize")

    name: str
    summarize: Callable[[SessionActivity], str | None]
    description: str

    def __init__(
        self, name: str, summarize: Callable[[SessionActivity], str | None], description: str = ""
    ) -> None:
        _set(self, "name", name)
        _set(self, "summarize", summarize)
        _set(self, "description", description)


@record(frozen=True)
class InjectorSpec:
    """Speaks one host's hook protocol.

    ``read_event(payload)`` turns the host's hook input (the parsed stdin JSON) into a :class:`HostEvent`
    (``None``: not this host's); ``render(event, context)`` turns the text to inject (``None``: nothing
    new) into what the hook prints (``None``: print nothing). ``not_typed(event)``, when given, says that
    a prompt event was not typed by a person (a loop's tick, a background task's result, another
    session's message): it gets nothing, and no cursor moves. A prompt event without a prompt (Qwen
    Code's call after each tool batch) never gets anything, whatever the injector. ``refuse(event,
    reason)``: what the hook prints to stop the tool of a before-tool event with ``reason`` (``None``:
    this injector cannot; the reason is then rendered as a note).
    """

    __slots__ = ("description", "name", "not_typed", "read_event", "refuse", "render")

    name: str
    read_event: Callable[[Mapping[str, Any]], HostEvent | None]
    render: Callable[[HostEvent, str | None], str | None]
    description: str
    not_typed: Callable[[HostEvent], bool] | None
    refuse: Callable[[HostEvent, str], str | None] | None

    def __init__(
        self,
        name: str,
        read_event: Callable[[Mapping[str, Any]], HostEvent | None],
        render: Callable[[HostEvent, str | None], str | None],
        description: str = "",
        not_typed: Callable[[HostEvent], bool] | None = None,
        refuse: Callable[[HostEvent, str], str | None] | None = None,
    ) -> None:
        _set(self, "name", name)
        _set(self, "read_event", read_event)
        _set(self, "render", render)
        _set(self, "description", description)
        _set(self, "not_typed", not_typed)
        _set(self, "refuse", refuse)


@record(frozen=True)
class SinkSpec:
    """Receives activity events from the watcher: ``emit(event)``; it must not block for long.

    ``emit_many(events)``, when given, receives all the events of one pass of the watcher at once, in
    order, instead of one ``emit`` call each: a sink that writes or sends them does it once per pass
    (the watcher may produce thousands of events a second).
    """

    __slots__ = ("description", "emit", "emit_many", "name", "start", "stop")

    name: str
    emit: Callable[[SinkEvent], None]
    description: str
    emit_many: Callable[[Sequence[SinkEvent]], None] | None
    #: Called once when a watcher starts, before its first event (a sink with a thread starts it here).
    start: Callable[[Settings, Plugins], None] | None
    #: Called once when the watcher stops, after its last event: flush, join the sink's threads.
    stop: Callable[[], None] | None

    def __init__(
        self,
        name: str,
        emit: Callable[[SinkEvent], None],
        description: str = "",
        emit_many: Callable[[Sequence[SinkEvent]], None] | None = None,
        start: Callable[[Settings, Plugins], None] | None = None,
        stop: Callable[[], None] | None = None,
    ) -> None:
        _set(self, "name", name)
        _set(self, "emit", emit)
        _set(self, "description", description)
        _set(self, "emit_many", emit_many)
        _set(self, "start", start)
        _set(self, "stop", stop)


@record(frozen=True)
class TokenCounterSpec:
    """Counts tokens: ``count(text)``. Chosen by name with ``SIDELIGHT_TOKEN_COUNTER`` (or the config
    file's ``token_counter``); the built-in one is ``estimate``."""

    __slots__ = ("count", "description", "name")

    name: str
    count: Callable[[str], int]
    description: str

    def __init__(self, name: str, count: Callable[[str], int], description: str = "") -> None:
        _set(self, "name", name)
        _set(self, "count", count)
        _set(self, "description", description)


@record(frozen=True)
class EmbedderSpec:
    """Turns texts into vectors for the recap's similarity (novelty against long-term memories, and
    centrality between chunks): ``embed(texts)`` returns one vector per text, all of one length.
    Chosen by name with ``SIDELIGHT_RECAP_EMBEDDER``; the built-in one is ``hashed-ngrams``."""

    __slots__ = ("description", "embed", "name")

    name: str
    embed: Callable[[Sequence[str]], Sequence[Sequence[float]]]
    description: str

    def __init__(
        self, name: str, embed: Callable[[Sequence[str]], Sequence[Sequence[float]]], description: str = ""
    ) -> None:
        _set(self, "name", name)
        _set(self, "embed", embed)
        _set(self, "description", description)


@record(frozen=True)
class ChunkSummarizerSpec:
    """Summarizes one chunk of a session for its recap: ``summarize(chunk)`` returns the summary text
    (``None``: let the next summarizer answer). The built-in ``extractive`` one comes last."""

    __slots__ = ("description", "name", "summarize")

    name: str
    summarize: Callable[[Chunk], str | None]
    description: str

    def __init__(self, name: str, summarize: Callable[[Chunk], str | None], description: str = "") -> None:
        _set(self, "name", name)
        _set(self, "summarize", summarize)
        _set(self, "description", description)


@record(frozen=True)
class InstallResult:
    """What one install or uninstall step did: to ``path`` (``None``: no file, a service manager's
    step), whether it ``changed`` anything, the line said to the person, the ``backup`` made of the
    file before it changed, and ``notes`` (warnings: what the person still has to do)."""

    __slots__ = ("backup", "changed", "message", "notes", "path", "target")

    target: str
    path: Path | None
    changed: bool
    message: str
    backup: Path | None
    notes: tuple[str, ...]

    def __init__(
        self,
        target: str,
        path: Path | None,
        changed: bool,
        message: str,
        backup: Path | None = None,
        notes: tuple[str, ...] = (),
    ) -> None:
        _set(self, "target", target)
        _set(self, "path", path)
        _set(self, "changed", changed)
        _set(self, "message", message)
        _set(self, "backup", backup)
        _set(self, "notes", notes)


@record(frozen=True)
class InstallerSpec:
    """Sets sidelight up in a host, and takes it out again: ``sidelight install NAME`` calls
    ``install(scope)``, ``sidelight uninstall NAME`` calls ``uninstall(scope)``; each returns what it
    did, one :class:`InstallResult` per file or step. ``scope`` is ``"user"`` or ``"project"`` (this
    working directory's settings), one of ``scopes``. Write a host's files through
    :func:`sidelight.install.install_file` and :func:`sidelight.install.uninstall_file`: install backs
    up what was there and records what it wrote, so that uninstall puts back exactly that."""

    __slots__ = ("description", "install", "name", "scopes", "uninstall")

    name: str
    install: Callable[[str], Iterable[InstallResult]]
    uninstall: Callable[[str], Iterable[InstallResult]]
    description: str
    scopes: tuple[str, ...]

    def __init__(
        self,
        name: str,
        install: Callable[[str], Iterable[InstallResult]],
        uninstall: Callable[[str], Iterable[InstallResult]],
        description: str = "",
        scopes: tuple[str, ...] = ("user",),
    ) -> None:
        _set(self, "name", name)
        _set(self, "install", install)
        _set(self, "uninstall", uninstall)
        _set(self, "description", description)
        _set(self, "scopes", scopes)


def _may_tell_failure(use: ToolUse) -> bool:
    """Whether a command's result could say it failed, by :func:`sidelight.commands.command_outcome`'s
    rules: an error flag, an exit code (``exit``), or a test summary with failures (``fail``/``error``).
    A cheap test on every prompt's digest, so that a sibling whose commands all went well costs no
    import of those rules; ``tests/test_failed_commands.py`` checks it never misses a failure."""
    if use.result_error:
        return True
    text = use.result or ""
    lowered = (text[:2000] + "\n" + text[-2000:]).lower()
    return "exit" in lowered or "fail" in lowered or "error" in lowered


#: When a host's hook fires (:attr:`HostHook.moment`): a person's prompt, a session's start or end, just
#: before a tool runs, just after it ran, after a batch of parallel tool calls.
HOOK_MOMENTS: tuple[str, ...] = ("prompt", "start", "end", "before_tool", "after_tool", "after_batch")
#: What a hook's answer can do (:attr:`HostHook.can`): ``inject``: its text reaches the model (in the next
#: request of the turn, for a tool's hooks); ``refuse``: it can stop the tool call, its reason sent to the
#: model; ``inform``: it can only add a note (a refusal would abort more than the call).
HOOK_ABILITIES: tuple[str, ...] = ("inject", "refuse", "inform")


@record(frozen=True)
class HostHook:
    """One event of a host's hooks and what sidelight's answer to it can do, as observed with the host.

    ``moment`` is one of :data:`HOOK_MOMENTS`; ``event`` is the host's own name for it
    (``UserPromptSubmit``, ``AfterTool``, ``tool.execute.after``); ``can`` is a subset of
    :data:`HOOK_ABILITIES` (empty: the event fires, but nothing it answers reaches the model)."""

    __slots__ = ("can", "event", "moment")

    moment: str
    event: str
    can: frozenset[str]

    def __init__(self, moment: str, event: str, can: Iterable[str] = ()) -> None:
        if moment not in HOOK_MOMENTS:
            raise ValueError(f"hook {event!r}: moment {moment!r} is not one of {', '.join(HOOK_MOMENTS)}")
        abilities = frozenset(can)
        unknown = sorted(abilities.difference(HOOK_ABILITIES))
        if unknown:
            raise ValueError(f"hook {event!r}: {unknown[0]!r} is not one of {', '.join(HOOK_ABILITIES)}")
        _set(self, "moment", moment)
        _set(self, "event", event)
        _set(self, "can", abilities)


@record(frozen=True)
class AgentSpec:
    """One coding agent, everything sidelight knows of it in one record: the unit a plugin adds.

    ``name`` is the agent (``codex``) and ``title`` how a person calls it (``Codex CLI``). ``formats``
    are the formats its transcripts are written in and ``resolver`` the resolver that lists its sessions
    (each registered by name through its own hook; ``None``: its sessions are not read). ``hosts`` are
    the names its hook events come with (``sidelight hook HOST``; the first is its own, the one its
    injector and installer take), ``installer`` the :class:`InstallerSpec` that sets it up (``None``:
    nothing to install). ``hooks`` say which of its host's events sidelight answers and what each
    answer can do; ``timeout_unit`` is what a number in its hook settings counts (``s``, ``ms``;
    ``""``: hooks run in the host's process, without a timeout). ``variables`` are the environment
    variables that move its folders (a test isolates them; a watcher is told them). ``injected_where``
    says where sidelight's text lands in its transcripts, for a person reading them (``"Codex's
    developer message"``), and ``injected_values(line)`` gives the values of a decoded transcript line
    that hold such text (``None``: search every string of every line); a string it gives ends where the
    host's wrapper around the text ends (give the text before a closing tag, not the tag). ``short_name``
    is how a digest line names it (``claude``; by default the ``name``). ``skills_dir(scope, settings)``
    is the folder the agent reads skills from, for the user (``scope="user"``) or for the project in the
    current directory (``"project"``); ``None``: it reads none (``sidelight install skill`` writes the
    skill into the skills folder of the agent named as the fallback host). ``live_sessions(settings)``
    says, per session id, whether its process runs (``"running"``) or is gone (``"gone"``), from the
    registry its host keeps of running sessions (Claude Code's ``~/.claude/sessions/<pid>.json``); a
    session it does not name, or ``None`` (no registry), is judged from its files' times. It is asked
    only where a state is shown or a handoff chosen, never for a prompt's digest
    (:mod:`sidelight.engine.liveness` has the helpers)."""

    __slots__ = (
        "formats",
        "hooks",
        "hosts",
        "injected_values",
        "injected_where",
        "installer",
        "live_sessions",
        "name",
        "resolver",
        "short_name",
        "skills_dir",
        "timeout_unit",
        "title",
        "variables",
    )

    name: str
    title: str
    formats: tuple[str, ...]
    resolver: str | None
    hosts: tuple[str, ...]
    installer: str | None
    hooks: tuple[HostHook, ...]
    timeout_unit: str
    variables: tuple[str, ...]
    injected_where: str
    injected_values: Callable[[Mapping[str, Any]], Iterable[Any]] | None
    short_name: str
    skills_dir: Callable[[str, Settings], Path] | None
    live_sessions: Callable[[Settings], Mapping[str, Liveness]] | None

    def __init__(
        self,
        name: str,
        title: str = "",
        formats: tuple[str, ...] = (),
        resolver: str | None = None,
        hosts: tuple[str, ...] = (),
        installer: str | None = None,
        hooks: tuple[HostHook, ...] = (),
        timeout_unit: str = "s",
        variables: tuple[str, ...] = (),
        injected_where: str = "",
        injected_values: Callable[[Mapping[str, Any]], Iterable[Any]] | None = None,
        short_name: str = "",
        skills_dir: Callable[[str, Settings], Path] | None = None,
        live_sessions: Callable[[Settings], Mapping[str, Liveness]] | None = None,
    ) -> None:
        if timeout_unit not in ("s", "ms", ""):
            raise ValueError(f"agent {name!r}: timeout_unit {timeout_unit!r} is not 's', 'ms' or ''")
        _set(self, "name", name)
        _set(self, "title", title or name)
        _set(self, "formats", tuple(formats))
        _set(self, "resolver", resolver)
        _set(self, "hosts", tuple(hosts))
        _set(self, "installer", installer)
        _set(self, "hooks", tuple(hooks))
        _set(self, "timeout_unit", timeout_unit)
        _set(self, "variables", tuple(variables))
        _set(self, "injected_where", injected_where)
        _set(self, "injected_values", injected_values)
        _set(self, "short_name", short_name or name)
        _set(self, "skills_dir", skills_dir)
        _set(self, "live_sessions", live_sessions)

    def hook(self, moment: str) -> HostHook | None:
        """The host's event at ``moment`` (one of :data:`HOOK_MOMENTS`), ``None``: none is answered."""
        return next((h for h in self.hooks if h.moment == moment), None)

    def can(self, moment: str, ability: str) -> bool:
        """Whether sidelight's answer at ``moment`` can ``ability`` (``"inject"``, ``"refuse"``, ...)."""
        hook = self.hook(moment)
        return hook is not None and ability in hook.can
