"""A plugin's own transcript format, as :mod:`sidelight.formats` gives it: a declared :class:`Layout`
(with its :class:`Blocks` and :class:`ToolEntry` records) or the :class:`Event` records a Python
fallback decoder returns, and the :class:`FormatDeclarationError` either may raise.

Import them from :mod:`sidelight.formats`, their public home (their ``__module__`` says so). This module
is only where they are made, on first use: a prompt hook imports ``sidelight.formats`` on every prompt
and, without a plugin's format, never needs three dataclasses and a named tuple made for it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

import sidelight._core as _core
from sidelight.errors import SidelightError

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["Blocks", "Event", "EventKind", "FormatDeclarationError", "KeyPath", "Layout", "ToolEntry"]

#: A key path from the top of a line down to a value: ``("message", "role")``, or written dotted,
#: ``"message.role"`` (use the tuple when a key has a dot in it).
KeyPath = tuple[str, ...] | str


class FormatDeclarationError(SidelightError, ValueError):
    """A format description (or fallback decoder) the core does not accept; the message names the field."""


def _path(owner: str, name: str, value: object, *, optional: bool = True) -> tuple[str, ...] | None:
    if value is None and optional:
        return None
    if isinstance(value, str):
        parts = tuple(value.split("."))
    elif isinstance(value, (tuple, list)) and all(isinstance(v, str) for v in value):
        parts = tuple(value)
    else:
        raise FormatDeclarationError(
            f"{owner}.{name}: expected a key path (a tuple of strings, or a dotted string), not {value!r}"
        )
    if not parts or not all(parts):
        raise FormatDeclarationError(f"{owner}.{name}: a key path needs non-empty keys, not {value!r}")
    return parts


def _names(owner: str, name: str, value: object) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, (tuple, list, frozenset, set)):
        raise FormatDeclarationError(f"{owner}.{name}: expected a tuple of strings, not {value!r}")
    if not all(isinstance(v, str) and v for v in value):
        raise FormatDeclarationError(f"{owner}.{name}: every name must be a non-empty string: {value!r}")
    return tuple(value)


def _normalize(instance: object, paths: tuple[str, ...], names: tuple[str, ...]) -> None:
    owner = type(instance).__name__
    for name in paths:
        object.__setattr__(instance, name, _path(owner, name, getattr(instance, name)))
    for name in names:
        object.__setattr__(instance, name, _names(owner, name, getattr(instance, name)))


@dataclass(frozen=True, slots=True)
class Blocks:
    """How a message's content list is made: its blocks' kinds and where their fields are.

    With ``type_key`` (``"type"``), a block's kind is its type: ``text``, ``tool`` and ``result``
    list the type names. Without one (``None``, Gemini's parts), the kind is the first key present
    from those lists: ``{"text": ...}`` is text, ``{"functionCall": {...}}`` a tool call whose name,
    arguments and id are in that inner object, ``{"functionResponse": ...}`` a tool result.

    A result block's fields are at key paths inside the block (for a block without a type key: inside
    the object under its kind key): ``result_id_key`` is the id of the call it answers,
    ``result_error_key`` says it failed (``true``, or an error message), ``result_content_key`` is its
    text (a string, or a list of blocks whose text blocks are joined). They are read only for
    :func:`~sidelight.history` and ``recent_entries``; a count never reads a result.
    """

    type_key: str | None = "type"
    #: Kinds whose ``text_key`` is prompt or reply text.
    text: tuple[str, ...] = ("text",)
    #: Kinds that are tool calls (name in ``name_key``, arguments in one of ``input_keys``, id in ``id_key``).
    tool: tuple[str, ...] = ()
    #: Kinds that are tool results: a user message with one is not a prompt.
    result: tuple[str, ...] = ()
    #: A block where one of these keys is ``true`` is left out (thoughts).
    skip_flags: tuple[str, ...] = ()
    text_key: str = "text"
    name_key: str = "name"
    input_keys: tuple[str, ...] = ("input", "arguments", "args")
    id_key: str = "id"
    #: Where a result block keeps the id of the call it answers (Claude Code's ``tool_use_id``).
    result_id_key: KeyPath = "tool_use_id"
    #: Where it says it failed (``None``: never), and where its text is (``None``: it has none).
    result_error_key: KeyPath | None = "is_error"
    result_content_key: KeyPath | None = "content"

    def __post_init__(self) -> None:
        _normalize(
            self,
            ("result_error_key", "result_content_key"),
            ("text", "tool", "result", "skip_flags", "input_keys"),
        )
        object.__setattr__(
            self, "result_id_key", _path("Blocks", "result_id_key", self.result_id_key, optional=False)
        )
        for name in ("text_key", "name_key", "id_key"):
            if not isinstance(getattr(self, name), str) or not getattr(self, name):
                raise FormatDeclarationError(f"Blocks.{name}: expected a non-empty string")
        if self.type_key is not None and (not isinstance(self.type_key, str) or not self.type_key):
            raise FormatDeclarationError("Blocks.type_key: expected a non-empty string or None")


@dataclass(frozen=True, slots=True)
class ToolEntry:
    """An entry that is itself one tool use, chosen by its role value (see :attr:`Layout.role`).

    Its name is at ``name`` (a key path) or is ``literal_name``; its arguments at ``input`` (an
    object, or a string holding a JSON object: the OpenAI convention); ``primary`` names a field that
    holds the primary argument itself; ``id`` makes a replayed entry count once.
    """

    role: str
    name: KeyPath | None = None
    literal_name: str | None = None
    input: KeyPath | None = None
    primary: KeyPath | None = None
    id: KeyPath | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.role, str) or not self.role:
            raise FormatDeclarationError("ToolEntry.role: expected a non-empty string")
        _normalize(self, ("name", "input", "primary", "id"), ())
        if (self.name is None) == (self.literal_name is None):
            raise FormatDeclarationError(
                f"ToolEntry({self.role!r}).name: give a key path to the name or a literal_name (one of them)"
            )


@dataclass(frozen=True, slots=True)
class Layout:
    """Where the fields of a transcript line live: a format the native core decodes without Python.

    Every path is a key path from the top of the line (``("message", "content")`` or
    ``"message.content"``). A line is one JSON object. Its **role** (the value at ``role``) says what it
    is: one of ``user_roles`` is a prompt (its ``content``: a string or a list of :class:`Blocks`),
    one of ``assistant_roles`` is a reply (text and tool-call blocks, plus the list at ``tool_calls``),
    one of ``tool_entries``' roles is a tool use on its own, one of ``result_roles`` is one tool's
    result (the id of the call it answers at ``result_id``, its error flag at ``result_error``, its
    text at ``content``). Lines that say nothing else still give the session's ``session_id``,
    ``cwd`` and ``title``. See docs/plugins.md for the rules in full.
    """

    role: KeyPath = "role"
    user_roles: tuple[str, ...] = ("user",)
    assistant_roles: tuple[str, ...] = ("assistant",)
    content: KeyPath | None = "content"
    blocks: Blocks = field(default_factory=Blocks)
    #: A list of tool calls on a reply (``{name, args, id}``: the keys of :class:`Blocks`).
    tool_calls: KeyPath | None = None
    #: Inside each of those tool calls: a list of result blocks, that call's result (the Gemini CLI's
    #: ``toolCalls[].result``); a result block without an id answers that call. Read only for history.
    tool_call_result: KeyPath | None = None
    tool_entries: tuple[ToolEntry, ...] = ()
    #: Entries that are one tool result each (Pi's ``toolResult`` message), by role; read only for
    #: history, never counted. ``result_id``: the id of the call it answers; ``result_error``: ``true``
    #: (or an error message) when the tool failed. Result blocks inside a message: see :class:`Blocks`.
    result_roles: tuple[str, ...] = ()
    result_id: KeyPath | None = None
    result_error: KeyPath | None = None
    #: An assistant message spread over several lines (or written again) shares this id: counted once.
    message_id: KeyPath | None = None
    #: The entry's type: counted in ``entry_types``, and what the ``*_types`` filters test.
    entry_type: KeyPath | None = "type"
    timestamp: KeyPath | None = "timestamp"
    session_id: KeyPath | None = None
    cwd: KeyPath | None = None
    title: KeyPath | None = None
    #: Entry types a field is read from (empty: any entry).
    session_id_types: tuple[str, ...] = ()
    cwd_types: tuple[str, ...] = ()
    title_types: tuple[str, ...] = ()
    #: Only entries of these types are messages or tool entries (empty: any type).
    message_types: tuple[str, ...] = ()
    #: Entries that never count: of these types, with one of these top-level keys, or with a ``true``
    #: flag at one of these paths.
    skip_types: tuple[str, ...] = ()
    skip_keys: tuple[str, ...] = ()
    skip_flags: tuple[KeyPath, ...] = ()
    #: Prompts that start with one of these are the client's (or sidelight's own injected text), not a
    #: person's; the built-in list (``<system-reminder>``…, docs/activity.md) applies as well.
    skip_prompt_prefixes: tuple[str, ...] = ()
    #: The argument keys that name what a tool acts on, most telling first (default: the built-ins').
    primary_keys: tuple[str, ...] = _core.PRIMARY_KEYS

    def __post_init__(self) -> None:
        _normalize(
            self,
            (
                "content",
                "tool_calls",
                "tool_call_result",
                "message_id",
                "entry_type",
                "timestamp",
                "session_id",
                "cwd",
                "title",
                "result_id",
                "result_error",
            ),
            (
                "user_roles",
                "result_roles",
                "assistant_roles",
                "session_id_types",
                "cwd_types",
                "title_types",
                "message_types",
                "skip_types",
                "skip_keys",
                "skip_prompt_prefixes",
                "primary_keys",
            ),
        )
        object.__setattr__(self, "role", _path("Layout", "role", self.role, optional=False))
        if not isinstance(self.blocks, Blocks):
            raise FormatDeclarationError(f"Layout.blocks: expected a Blocks, not {self.blocks!r}")
        entries = self.tool_entries
        if isinstance(entries, ToolEntry) or not all(isinstance(e, ToolEntry) for e in entries):
            raise FormatDeclarationError("Layout.tool_entries: expected a tuple of ToolEntry")
        object.__setattr__(self, "tool_entries", tuple(entries))
        flags = self.skip_flags
        if isinstance(flags, str) or not isinstance(flags, (tuple, list)):
            raise FormatDeclarationError("Layout.skip_flags: expected a tuple of key paths")
        object.__setattr__(
            self, "skip_flags", tuple(_path("Layout", "skip_flags", f, optional=False) for f in flags)
        )
        if self.tool_call_result is not None and self.tool_calls is None:
            raise FormatDeclarationError("Layout.tool_call_result: given without a tool_calls path")
        for name in ("result_id", "result_error"):
            if getattr(self, name) is not None and not self.result_roles:
                raise FormatDeclarationError(f"Layout.{name}: given without result_roles")
        taken = {*self.user_roles, *self.assistant_roles, *(e.role for e in self.tool_entries)}
        for role in self.result_roles:
            if role in taken:
                raise FormatDeclarationError(
                    f"Layout.result_roles: {role!r} is already a user, assistant or tool entry role"
                )

    def to_core(self) -> dict[str, Any]:
        """The description as the plain data ``sidelight._core.declare_format`` compiles."""

        def listed(path: Any) -> list[str] | None:
            return None if path is None else list(path)

        b = self.blocks
        return {
            "entry_type": listed(self.entry_type),
            "timestamp": listed(self.timestamp),
            "session_id": listed(self.session_id),
            "session_id_types": list(self.session_id_types),
            "cwd": listed(self.cwd),
            "cwd_types": list(self.cwd_types),
            "title": listed(self.title),
            "title_types": list(self.title_types),
            "skip_types": list(self.skip_types),
            "skip_keys": list(self.skip_keys),
            "skip_flags": [list(f) for f in self.skip_flags],
            "message_types": list(self.message_types),
            "role": listed(self.role),
            "user_roles": list(self.user_roles),
            "assistant_roles": list(self.assistant_roles),
            "message_id": listed(self.message_id),
            "content": listed(self.content),
            "block_type": b.type_key,
            "text_blocks": list(b.text),
            "tool_blocks": list(b.tool),
            "result_blocks": list(b.result),
            "result_block_id": list(b.result_id_key),
            "result_block_error": listed(b.result_error_key),
            "result_block_content": listed(b.result_content_key),
            "skip_block_flags": list(b.skip_flags),
            "block_text": b.text_key,
            "block_name": b.name_key,
            "block_input": list(b.input_keys),
            "block_id": b.id_key,
            "tool_calls": listed(self.tool_calls),
            "tool_call_result": listed(self.tool_call_result),
            "tool_entries": [
                {
                    f.name: listed(getattr(e, f.name))
                    if f.name not in ("role", "literal_name")
                    else getattr(e, f.name)
                    for f in fields(e)
                }
                for e in self.tool_entries
            ],
            "result_roles": list(self.result_roles),
            "result_id": listed(self.result_id),
            "result_error": listed(self.result_error),
            "skip_prompt_prefixes": list(self.skip_prompt_prefixes),
            "primary_keys": list(self.primary_keys),
        }


EventKind = Literal["type", "session_id", "cwd", "title", "user", "assistant", "tool", "result"]


class Event(NamedTuple):
    """One thing a line says, as a Python fallback decoder reports it (build them with the class methods).

    A decoder gets a line's bytes and returns its events, in order (``None`` or ``[]``: nothing), and
    raises :class:`ValueError` for a line it cannot read (counted in ``skipped["malformed_json"]``).
    The core counts the events exactly as it counts what a built-in decoder finds (docs/activity.md).
    """

    kind: EventKind
    text: str | None = None
    timestamp: str | None = None
    id: str | None = None
    name: str | None = None
    arguments: str | None = None
    primary: str | None = None
    is_error: bool = False

    @classmethod
    def entry_type(cls, value: str) -> Event:
        """The entry's type (counted in ``entry_types``; a line without one counts as ``<none>``)."""
        return cls("type", value)

    @classmethod
    def user(cls, text: str, timestamp: str | None = None) -> Event:
        """A prompt (blank ones and the client's own, like ``<system-reminder>``, are not counted)."""
        return cls("user", text, timestamp)

    @classmethod
    def assistant(cls, text: str | None = None, timestamp: str | None = None, id: str | None = None) -> Event:
        """A reply; entries that share an ``id`` count as one message."""
        return cls("assistant", text, timestamp, id)

    @classmethod
    def tool(
        cls,
        name: str,
        arguments: Mapping[str, Any] | str | None = None,
        *,
        primary: str | None = None,
        id: str | None = None,
        timestamp: str | None = None,
    ) -> Event:
        """A tool use. ``arguments`` (a mapping, or its JSON text) give the primary argument and the
        details of edits as for the built-in formats; ``primary`` sets the primary argument itself."""
        text = arguments if arguments is None or isinstance(arguments, str) else json.dumps(arguments)
        return cls("tool", None, timestamp, id, name, text, primary)

    @classmethod
    def result(cls, id: str | None, text: str | None = None, *, is_error: bool = False) -> Event:
        """A tool's result: the ``id`` of the call it answers (``None``: the tool use reported just
        before it in the same line), its text, and whether the tool failed. Never counted: history
        (:func:`~sidelight.history`, ``sidelight read``) shows it as one short line on its call."""
        return cls("result", text, None, id, is_error=is_error)

    @classmethod
    def meta(cls, which: Literal["session_id", "cwd", "title"], value: str) -> Event:
        """The session's id, working directory or title."""
        return cls(which, value)


# Their public home, where they are imported from (and found by pickle).
for _public in (FormatDeclarationError, Blocks, ToolEntry, Layout, Event):
    _public.__module__ = "sidelight.formats"
