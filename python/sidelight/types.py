"""The typed records sidelight returns: :class:`Activity`, :class:`Cursor`, :class:`Entry` and friends.

All are frozen, slotted dataclasses built from the plain data ``sidelight._core`` returns. The field
meanings are the contract in ``docs/activity.md``. (They are written out rather than made by
``@dataclass``, which a prompt hook would pay for on every prompt; :mod:`sidelight._fast._record` gives them
what a dataclass has, :func:`dataclasses.fields` and :func:`dataclasses.replace` included.)
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from sidelight._fast._record import record
from sidelight.errors import InvalidCursorError, describe
from sidelight.formats import Category, Format

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, ClassVar, Final, Literal, TypeAlias

__all__ = [
    "CURSOR_FIELDS",
    "Activity",
    "CategoryCounts",
    "Cursor",
    "CursorTuple",
    "Entry",
    "MessageCounts",
    "ResetReason",
    "ScanFailure",
    "SkippedLines",
    "ToolUse",
]

#: ``(offset, dev, inode, head_len, head_hash, tail_hash, last_message)``, as ``sidelight._core`` takes it.
CursorTuple: TypeAlias = tuple[int, int, int, int, int, int, int]
#: Why a scan started over at byte 0 instead of at its cursor.
if TYPE_CHECKING:
    ResetReason: TypeAlias = Literal["truncated", "replaced", "rewritten"]
else:
    ResetReason = str  # the Literal above, without importing typing at run time

#: The fields of a cursor, in the order of its tuple and of the native core's.
CURSOR_FIELDS: Final = ("offset", "dev", "inode", "head_len", "head_hash", "tail_hash", "last_message")

_set = object.__setattr__


@record(frozen=True)
class Cursor:
    """Where a scan stopped in a file, and enough of the file's identity to notice it was replaced.

    Pass it to the next :func:`sidelight.scan` to read only what was appended since. Store it as JSON
    with :meth:`as_dict` / :meth:`from_dict`.
    """

    __slots__ = ("dev", "head_hash", "head_len", "inode", "last_message", "offset", "tail_hash")

    #: Byte offset just after the last complete line read.
    offset: int
    #: Device and inode of the file.
    dev: int
    inode: int
    #: Length and hash of the file's first bytes (at most 4 KiB).
    head_len: int
    head_hash: int
    #: Hash of the (up to) 64 bytes before ``offset``.
    tail_hash: int
    #: Hash of the last assistant message id counted (0: none): a response split over two scans counts once.
    last_message: int

    def __init__(
        self,
        offset: int,
        dev: int,
        inode: int,
        head_len: int,
        head_hash: int,
        tail_hash: int,
        last_message: int,
    ) -> None:
        _set(self, "offset", offset)
        _set(self, "dev", dev)
        _set(self, "inode", inode)
        _set(self, "head_len", head_len)
        _set(self, "head_hash", head_hash)
        _set(self, "tail_hash", tail_hash)
        _set(self, "last_message", last_message)

    def as_tuple(self) -> CursorTuple:
        """The cursor as the 7-tuple ``sidelight._core`` takes."""
        return (
            self.offset,
            self.dev,
            self.inode,
            self.head_len,
            self.head_hash,
            self.tail_hash,
            self.last_message,
        )

    @classmethod
    def from_tuple(cls, values: CursorTuple | tuple[int, ...]) -> Cursor:
        """The cursor for a 7-tuple as returned by :meth:`as_tuple` (or by ``sidelight._core``)."""
        if len(values) != len(CURSOR_FIELDS):
            raise InvalidCursorError(f"a cursor has {len(CURSOR_FIELDS)} fields, got {len(values)}")
        return cls(*(_cursor_int(name, value) for name, value in zip(CURSOR_FIELDS, values, strict=True)))

    def as_dict(self) -> dict[str, int]:
        """The cursor as a JSON-ready dict, one key per field."""
        return dict(zip(CURSOR_FIELDS, self.as_tuple(), strict=True))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Cursor:
        """The cursor stored by :meth:`as_dict`; extra keys are ignored.

        Raises :class:`sidelight.InvalidCursorError` (a :class:`ValueError`) when a field is missing or
        is not a non-negative integer.
        """
        missing = [name for name in CURSOR_FIELDS if name not in data]
        if missing:
            raise InvalidCursorError(f"cursor is missing {', '.join(missing)}")
        return cls(*(_cursor_int(name, data[name]) for name in CURSOR_FIELDS))


def _cursor_int(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidCursorError(f"cursor field {name} must be a non-negative integer, not {value!r}")
    return value


class _Counts(Mapping[str, int]):
    """Named counts that are also a read-only mapping: ``counts.user == counts["user"]``, ``dict(counts)``.

    Equal to any mapping with the same items, so ``activity.skipped == {"malformed_json": 0, ...}`` holds.
    """

    __slots__ = ()
    _keys: ClassVar[tuple[str, ...]]

    def __getitem__(self, key: str) -> int:
        if key not in self._keys:
            raise KeyError(key)
        value: int = getattr(self, key)
        return value

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)

    def __repr__(self) -> str:
        fields = ", ".join(f"{key}={self[key]}" for key in self._keys)
        return f"{type(self).__name__}({fields})"

    @property
    def total(self) -> int:
        """The sum of the counts."""
        return sum(self.values())

    def as_dict(self) -> dict[str, int]:
        return dict(self.items())


@record(frozen=True, eq=False, repr=False)
class MessageCounts(_Counts):
    """Messages counted by role (an assistant response spread over several lines counts once)."""

    __slots__ = ("assistant", "user")
    _keys: ClassVar[tuple[str, ...]] = ("user", "assistant")

    user: int
    assistant: int

    def __init__(self, user: int = 0, assistant: int = 0) -> None:
        _set(self, "user", user)
        _set(self, "assistant", assistant)


@record(frozen=True, eq=False, repr=False)
class CategoryCounts(_Counts):
    """Tool uses counted by :class:`~sidelight.Category`."""

    __slots__ = ("command", "edit", "other", "read")
    _keys: ClassVar[tuple[str, ...]] = ("edit", "read", "command", "other")

    edit: int
    read: int
    command: int
    other: int

    def __init__(self, edit: int = 0, read: int = 0, command: int = 0, other: int = 0) -> None:
        _set(self, "edit", edit)
        _set(self, "read", read)
        _set(self, "command", command)
        _set(self, "other", other)


@record(frozen=True, eq=False, repr=False)
class SkippedLines(_Counts):
    """Lines that could not be decoded, by reason. None of them stops a scan."""

    __slots__ = ("invalid_utf8", "malformed_json", "too_long")
    _keys: ClassVar[tuple[str, ...]] = ("malformed_json", "invalid_utf8", "too_long")

    #: Not a JSON object.
    malformed_json: int
    #: Not valid UTF-8.
    invalid_utf8: int
    #: Longer than ``max_line_bytes``.
    too_long: int

    def __init__(self, malformed_json: int = 0, invalid_utf8: int = 0, too_long: int = 0) -> None:
        _set(self, "malformed_json", malformed_json)
        _set(self, "invalid_utf8", invalid_utf8)
        _set(self, "too_long", too_long)


@record(frozen=True)
class ToolUse:
    """One tool use: its name, category, primary argument (a path, command, pattern…) and timestamp,
    and what a hot memory shows of it (docs/activity.md, "Tool details"): the lines a write created,
    an edit's old and new text. A command's ``result`` (the ends of its output) and ``result_error``
    (the tool said it failed) are there when the scan kept results (the digest's) and read it."""

    __slots__ = (
        "category",
        "lines",
        "name",
        "new_text",
        "old_text",
        "primary_arg",
        "result",
        "result_error",
        "timestamp",
    )

    name: str
    category: Category
    primary_arg: str | None
    timestamp: str | None
    lines: int | None
    old_text: str | None
    new_text: str | None
    result: str | None
    result_error: bool

    def __init__(
        self,
        name: str,
        category: Category,
        primary_arg: str | None,
        timestamp: str | None,
        lines: int | None = None,
        old_text: str | None = None,
        new_text: str | None = None,
        result: str | None = None,
        result_error: bool = False,
    ) -> None:
        _set(self, "name", name)
        _set(self, "category", category)
        _set(self, "primary_arg", primary_arg)
        _set(self, "timestamp", timestamp)
        _set(self, "lines", lines)
        _set(self, "old_text", old_text)
        _set(self, "new_text", new_text)
        _set(self, "result", result)
        _set(self, "result_error", result_error)

    def as_dict(self) -> dict[str, str | int | None]:
        return {
            "name": self.name,
            "category": self.category.value,
            "primary_arg": self.primary_arg,
            "timestamp": self.timestamp,
            "lines": self.lines,
            "old_text": self.old_text,
            "new_text": self.new_text,
        }


@record(frozen=True)
class Activity:
    """What one scan of a transcript found between its start offset and the last complete line."""

    __slots__ = (
        "bytes_consumed",
        "categories",
        "cursor",
        "cwd",
        "entry_types",
        "file_size",
        "files_touched",
        "first_timestamp",
        "first_user_text",
        "format",
        "last_assistant_text",
        "last_timestamp",
        "last_user_text",
        "lines",
        "messages",
        "offset",
        "path",
        "pending_bytes",
        "reset",
        "session_id",
        "skipped",
        "start_offset",
        "title",
        "tool_uses",
        "tools",
    )

    path: str
    format: Format
    #: File size when scanned, the offset the scan started at, and the offset it reached.
    file_size: int
    start_offset: int
    offset: int
    #: Why the scan started over at 0 instead of at the cursor given (``None``: it did not).
    reset: ResetReason | None
    #: Pass this to the next scan to read only what is new.
    cursor: Cursor
    #: Bytes after the last newline, left for the next scan.
    pending_bytes: int
    #: Complete, non-empty lines read (skipped ones included) and the bytes they took.
    lines: int
    bytes_consumed: int
    messages: MessageCounts
    #: Tool uses by tool name.
    tools: Mapping[str, int]
    categories: CategoryCounts
    #: The most recent tool uses (at most ``sidelight._core.TOOL_USES_KEPT``), oldest first.
    tool_uses: tuple[ToolUse, ...]
    #: Paths written by ``edit`` tools, unique, in first-seen order.
    files_touched: tuple[str, ...]
    first_user_text: str | None
    #: The last prompt a person wrote in the range (its current request).
    last_user_text: str | None
    last_assistant_text: str | None
    first_timestamp: str | None
    last_timestamp: str | None
    session_id: str | None
    cwd: str | None
    title: str | None
    skipped: SkippedLines
    #: Every decoded line's top-level ``type`` (``"<none>"`` when absent), counted.
    entry_types: Mapping[str, int]

    def __init__(
        self,
        path: str,
        format: Format,
        file_size: int,
        start_offset: int,
        offset: int,
        reset: ResetReason | None,
        cursor: Cursor,
        pending_bytes: int,
        lines: int,
        bytes_consumed: int,
        messages: MessageCounts,
        tools: Mapping[str, int],
        categories: CategoryCounts,
        tool_uses: tuple[ToolUse, ...],
        files_touched: tuple[str, ...],
        first_user_text: str | None,
        last_user_text: str | None,
        last_assistant_text: str | None,
        first_timestamp: str | None,
        last_timestamp: str | None,
        session_id: str | None,
        cwd: str | None,
        title: str | None,
        skipped: SkippedLines,
        entry_types: Mapping[str, int],
    ) -> None:
        _set(self, "path", path)
        _set(self, "format", format)
        _set(self, "file_size", file_size)
        _set(self, "start_offset", start_offset)
        _set(self, "offset", offset)
        _set(self, "reset", reset)
        _set(self, "cursor", cursor)
        _set(self, "pending_bytes", pending_bytes)
        _set(self, "lines", lines)
        _set(self, "bytes_consumed", bytes_consumed)
        _set(self, "messages", messages)
        _set(self, "tools", tools)
        _set(self, "categories", categories)
        _set(self, "tool_uses", tool_uses)
        _set(self, "files_touched", files_touched)
        _set(self, "first_user_text", first_user_text)
        _set(self, "last_user_text", last_user_text)
        _set(self, "last_assistant_text", last_assistant_text)
        _set(self, "first_timestamp", first_timestamp)
        _set(self, "last_timestamp", last_timestamp)
        _set(self, "session_id", session_id)
        _set(self, "cwd", cwd)
        _set(self, "title", title)
        _set(self, "skipped", skipped)
        _set(self, "entry_types", entry_types)

    @classmethod
    def from_core(cls, data: Mapping[str, Any]) -> Activity:
        """Build an :class:`Activity` from the dict ``sidelight._core.scan`` returns."""
        messages = data["messages"]
        categories = data["categories"]
        skipped = data["skipped"]
        return cls(
            path=data["path"],
            format=Format(data["format"]),
            file_size=data["file_size"],
            start_offset=data["start_offset"],
            offset=data["offset"],
            reset=data["reset"],
            cursor=Cursor(*data["cursor"]),
            pending_bytes=data["pending_bytes"],
            lines=data["lines"],
            bytes_consumed=data["bytes_consumed"],
            messages=MessageCounts(user=messages.get("user", 0), assistant=messages.get("assistant", 0)),
            tools=dict(data["tools"]),
            categories=CategoryCounts(
                edit=categories.get("edit", 0),
                read=categories.get("read", 0),
                command=categories.get("command", 0),
                other=categories.get("other", 0),
            ),
            tool_uses=tuple(
                ToolUse(name, Category(category), primary_arg, timestamp, *details)
                for name, category, primary_arg, timestamp, *details in data["tool_uses"]
            ),
            files_touched=tuple(data["files_touched"]),
            first_user_text=data["first_user_text"],
            last_user_text=data.get("last_user_text"),
            last_assistant_text=data["last_assistant_text"],
            first_timestamp=data["first_timestamp"],
            last_timestamp=data["last_timestamp"],
            session_id=data["session_id"],
            cwd=data["cwd"],
            title=data["title"],
            skipped=SkippedLines(
                malformed_json=skipped.get("malformed_json", 0),
                invalid_utf8=skipped.get("invalid_utf8", 0),
                too_long=skipped.get("too_long", 0),
            ),
            entry_types=dict(data["entry_types"]),
        )

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every field (what ``sidelight scan --json`` prints)."""
        return {
            "path": self.path,
            "format": self.format.value,
            "file_size": self.file_size,
            "start_offset": self.start_offset,
            "offset": self.offset,
            "reset": self.reset,
            "cursor": self.cursor.as_dict(),
            "pending_bytes": self.pending_bytes,
            "lines": self.lines,
            "bytes_consumed": self.bytes_consumed,
            "messages": self.messages.as_dict(),
            "tools": dict(self.tools),
            "categories": self.categories.as_dict(),
            "tool_uses": [tool_use.as_dict() for tool_use in self.tool_uses],
            "files_touched": list(self.files_touched),
            "first_user_text": self.first_user_text,
            "last_user_text": self.last_user_text,
            "last_assistant_text": self.last_assistant_text,
            "first_timestamp": self.first_timestamp,
            "last_timestamp": self.last_timestamp,
            "session_id": self.session_id,
            "cwd": self.cwd,
            "title": self.title,
            "skipped": self.skipped.as_dict(),
            "entry_types": dict(self.entry_types),
        }


@record(frozen=True)
class Entry:
    """One conversation entry, as :func:`sidelight.recent_entries` returns it."""

    __slots__ = ("primary_arg", "result", "result_error", "role", "text", "timestamp", "tool_name")

    timestamp: str | None
    #: ``user``, ``assistant`` or ``tool``.
    role: str
    text: str | None
    tool_name: str | None
    primary_arg: str | None
    #: A tool use's result, when it was among the lines read: its text (a long one keeps its first
    #: and last 300 characters around a ``…`` line; an exit code the transcript records apart is its
    #: first line, ``Exit code: N``), and whether the tool said it failed. ``None`` for other entries.
    result: str | None
    result_error: bool

    def __init__(
        self,
        timestamp: str | None,
        role: str,
        text: str | None,
        tool_name: str | None,
        primary_arg: str | None,
        result: str | None = None,
        result_error: bool = False,
    ) -> None:
        _set(self, "timestamp", timestamp)
        _set(self, "role", role)
        _set(self, "text", text)
        _set(self, "tool_name", tool_name)
        _set(self, "primary_arg", primary_arg)
        _set(self, "result", result)
        _set(self, "result_error", result_error)

    def as_dict(self) -> dict[str, str | bool | None]:
        return {
            "timestamp": self.timestamp,
            "role": self.role,
            "text": self.text,
            "tool_name": self.tool_name,
            "primary_arg": self.primary_arg,
            "result": self.result,
            "result_error": self.result_error,
        }


@record(frozen=True)
class ScanFailure:
    """A file of :func:`sidelight.scan_many` that could not be scanned, and why."""

    __slots__ = ("error", "path")

    path: str
    #: A builtin (``FileNotFoundError``, ``PermissionError``, ``IsADirectoryError``, ``OSError``,
    #: ``ValueError``) or a :class:`sidelight.SidelightError`.
    error: Exception

    def __init__(self, path: str, error: Exception) -> None:
        _set(self, "path", path)
        _set(self, "error", error)

    @property
    def message(self) -> str:
        """One line for a user, naming the path and what to do."""
        return describe(self.error, self.path)

    def as_dict(self) -> dict[str, str]:
        return {"path": self.path, "error": type(self.error).__name__, "message": self.message}
