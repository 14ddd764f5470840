"""The native core of sidelight (``rust/sidelight-py``). Private: use the ``sidelight`` facade.

Every function takes primitive, required arguments and returns plain data. File I/O and decoding run
with the GIL released.
"""

import os
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Final

__all__ = [
    "CODEX_CONTEXT_PREFIXES",
    "DEFAULT_CATEGORIES",
    "FILES_TOUCHED_KEPT",
    "FORMATS",
    "PRIMARY_KEYS",
    "SYNTHETIC_PROMPT_PREFIXES",
    "TOOL_USES_KEPT",
    "__version__",
    "declare_format",
    "declared_formats",
    "detect_format",
    "file_cursor",
    "file_identities",
    "read_entries",
    "recent_entries",
    "register_decoder",
    "scan",
    "scan_many",
    "scan_many_counts",
    "tail_offset",
]

__version__: Final[str]

#: ``(offset, dev, inode, head_len, head_hash, tail_hash, last_message)``; see docs/activity.md.
_CursorTuple = tuple[int, int, int, int, int, int, int]
#: ``(timestamp, role, text, tool_name, primary_arg, result, result_error)``; role is ``user``,
#: ``assistant`` or ``tool``; a tool use's ``result`` is its result's text when it was read.
_EntryTuple = tuple[str | None, str, str | None, str | None, str | None, str | None, bool]

FORMATS: Final[tuple[str, ...]]
#: Per built-in format, its tools by lowercase name and category (``edit``, ``read``, ``command``); a
#: tool not listed counts as ``other``. Each decoder's own table, in its file of the core.
DEFAULT_CATEGORIES: Final[dict[str, dict[str, str]]]
#: The argument keys that name what a tool acts on, most telling first: a tool use's primary argument
#: is the value of the first of them that is a non-empty string (docs/activity.md). The built-in
#: decoders use them, and a described format's ``primary_keys`` defaults to them.
PRIMARY_KEYS: Final[tuple[str, ...]]
#: Prefixes of user text that a client wrote on the person's behalf (Claude Code's command and
#: reminder blocks, "[Request interrupted by user"…): not prompts. A Claude Code slash command sent
#: to the model (``<command-message>`` first) is read as the prompt ``/name args`` instead.
SYNTHETIC_PROMPT_PREFIXES: Final[tuple[str, ...]]
#: Prefixes of Codex user messages that carry instructions or environment, not the person's words.
CODEX_CONTEXT_PREFIXES: Final[tuple[str, ...]]
TOOL_USES_KEPT: Final[int]
FILES_TOUCHED_KEPT: Final[int]

def scan(
    path: str,
    format: str,
    cursor: _CursorTuple | None,
    categories: dict[str, str],
    max_line_bytes: int,
    text_limit: int,
    threads: int,
) -> dict[str, Any]:
    """Scan the complete lines of ``path`` after ``cursor`` and return the activity as a dict.

    Its ``tool_uses`` are ``(name, category, primary_arg, timestamp, lines, old_text, new_text)``.

    ``threads`` > 1 splits a large range at line boundaries and scans the parts in parallel.
    Raises ``FileNotFoundError``, ``PermissionError``, ``IsADirectoryError``, ``OSError``, or
    ``ValueError`` for an unknown format.
    """

def scan_many(
    requests: list[tuple[str, str, _CursorTuple | None]],
    categories: dict[str, dict[str, str]],
    max_line_bytes: int,
    text_limit: int,
    results: bool = False,
) -> list[dict[str, Any] | OSError | ValueError]:
    """Scan many ``(path, format, cursor)`` requests in parallel; one result or exception per request.

    ``categories`` maps a format name to its tool-name map. A failing file puts its exception in its
    slot; the others still succeed. ``results``: each kept command (category ``command``) whose result
    is in the range read keeps it, as the last two items of its ``tool_uses`` tuple: the ends of its
    text (300 characters of each end) and whether the tool said it failed.
    """

#: What :func:`scan_many_counts` gives for one scan: ``(cursor, reset, lines, user_messages,
#: assistant_messages, (edit, read, command, other), tools, tool_uses, files_touched, first_user_text,
#: last_user_text, last_assistant_text, last_timestamp)``; ``tools`` (name -> count), ``tool_uses``
#: (``(name, category, primary_arg, timestamp, lines, old_text, new_text)``) and ``files_touched`` are
#: ``None`` when empty.
_ScanCounts = tuple[
    _CursorTuple,
    str | None,
    int,
    int,
    int,
    tuple[int, int, int, int],
    dict[str, int] | None,
    list[tuple[str, str, str | None, str | None, int | None, str | None, str | None]] | None,
    list[str] | None,
    str | None,
    str | None,
    str | None,
    str | None,
]

def scan_many_counts(
    requests: list[tuple[str, str, _CursorTuple | None]],
    categories: dict[str, dict[str, str]],
    max_line_bytes: int,
    text_limit: int,
) -> list[_ScanCounts | OSError | ValueError]:
    """:func:`scan_many` for the watcher: per request a :data:`_ScanCounts` tuple (what it counts, a few
    objects instead of a dict of dicts) or the request's exception."""

def recent_entries(
    path: str, format: str, limit: int, max_line_bytes: int, text_limit: int
) -> list[_EntryTuple]:
    """The last ``limit`` conversation entries of ``path``, oldest first, read backwards in blocks.

    A tool use carries its result when the result's line was read (the ends of a long one). Of a
    transcript that is a tree (Pi), only the active branch is read: the path from its last entry back
    to the root.
    """

#: ``(kind, timestamp, id, name, text, data, is_error, lines)``, one entry of :func:`read_entries`:
#:
#: - ``user`` / ``assistant``: a person's prompt / a reply's text, in ``text``;
#: - ``tool``: a tool call: ``id`` (the hash of its id, or ``None``), ``name``, ``data`` the JSON text
#:   of its arguments (for a Codex ``function_call``, the text its ``arguments`` string holds), ``text``
#:   an input that is not JSON (a Codex custom tool's);
#: - ``result``: a tool result: ``id`` (the hash of its call's id; ``None``: the call just before it),
#:   ``is_error``, ``text`` (the ends of a long one), ``lines`` (of the whole text), ``data`` the JSON
#:   text of the details the agent recorded (Claude Code ``toolUseResult``, Pi ``details``);
#: - ``session_id`` / ``cwd``: the session's identity, in ``text``, when a line states it (again when
#:   it changes);
#: - ``compacted`` / ``aborted``: the context was compacted; the turn was cut short.
_LogEntryTuple = tuple[str, str | None, int | None, str | None, str | None, str | None, bool, int]

def read_entries(
    path: str,
    format: str,
    start_offset: int,
    max_entries: int,
    max_bytes: int,
    max_line_bytes: int,
    text_limit: int,
    result_limit: int,
    *,
    sidechain: bool = False,
) -> tuple[list[_LogEntryTuple], int, int, int, str | None, str | None]:
    """The entries of the complete lines of ``path`` from ``start_offset`` on, in transcript order, in
    one chunk: ``(entries, next_offset, lines_read, lines_skipped, first_timestamp, last_timestamp)``.

    A chunk ends after the line that brings its entries to ``max_entries`` or the bytes read to
    ``max_bytes``; read on from ``next_offset`` (the end of the last complete line read: a partial
    last line is left for later). An offset inside a line starts at the next line. Lines longer than
    ``max_line_bytes`` are skipped without being held; texts are cut to ``text_limit`` characters, a
    result to ``result_limit`` characters of each end. The timestamps are the earliest and latest of
    the lines read. ``sidechain``: the file is a subagent's own transcript (Claude Code
    ``subagents/agent-*.jsonl``), whose ``isSidechain`` lines are its entries (its parent's task for it
    the first prompt); elsewhere they are another agent's turns and give none. Raises the errors of
    :func:`scan`.
    """

def detect_format(path: str) -> str | None:
    """The format of ``path`` judged from its first lines, or ``None`` when no decoder recognises it."""

def file_cursor(path: str, offset: int) -> _CursorTuple:
    """A cursor for ``path`` at ``offset`` (moved back to the start of the line it falls in)."""

def tail_offset(path: str, max_bytes: int) -> int:
    """The offset of the first line that starts within the last ``max_bytes`` bytes of ``path``."""

def file_identities(paths: Sequence[str | os.PathLike[str]]) -> list[tuple[int, int, int] | None]:
    """Each path's ``(size, inode, device)``, ``None`` for one that cannot be stat-ed (missing included),
    with the GIL released once for all of them."""

#: ``(kind, text, timestamp, id, name, arguments, primary, is_error)``: ``sidelight.formats.Event``
#: (a tuple without ``is_error`` is read too).
_EventTuple = (
    tuple[str, str | None, str | None, str | None, str | None, str | None, str | None, bool]
    | tuple[str, str | None, str | None, str | None, str | None, str | None, str | None]
)

def declare_format(name: str, description: dict[str, Any], categories: dict[str, str]) -> None:
    """Compile a format description (``sidelight.formats.Layout.to_core()``) and register it as ``name``.

    Every function that takes a format name then accepts ``name``; declaring a name again replaces it.
    ``categories`` is its tool-name map, used when a ``scan_many`` call brings none for it. Raises
    ``ValueError`` with one line naming the field that is wrong, or when ``name`` is a built-in's.
    """

def register_decoder(
    name: str, decode: Callable[[bytes], Iterable[_EventTuple] | None], categories: dict[str, str]
) -> None:
    """Register a Python line decoder as format ``name`` (the fallback for shapes a layout cannot say).

    ``decode(line)`` returns the line's events or ``None``; an ``Exception`` (or an unknown event kind)
    counts the line as malformed; a ``KeyboardInterrupt`` stops the scan and is raised. Scans of such a
    format hold the GIL and run in one thread.
    """

def declared_formats() -> list[str]:
    """The names of the formats declared or registered in this process, in registration order."""
