"""The scanning facade: typed, defaulted wrappers around ``sidelight._core``.

The native core takes required, primitive arguments; this module adds the defaults, format detection,
category maps, typed results and the error story (see :mod:`sidelight.errors`).
"""

from __future__ import annotations

import errno
import os
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from sidelight import _core
from sidelight.errors import UnknownFormatError, check_file_name, transcript_error
from sidelight.formats import (
    DEFAULT_MAX_LINE_BYTES,
    DEFAULT_TEXT_LIMIT,
    Format,
    categories_for,
)
from sidelight.types import Activity, Cursor, CursorTuple, Entry, ScanFailure

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

__all__ = [
    "FormatArg",
    "PathArg",
    "ScanItem",
    "detect_format",
    "format_names",
    "recent_entries",
    "resolve_format",
    "scan",
    "scan_many",
]

#: A transcript path.
PathArg: TypeAlias = str | os.PathLike[str]
#: A format name (any registered format's), a :class:`~sidelight.Format`, or ``"auto"`` to detect it
#: from the file's first lines.
FormatArg: TypeAlias = Format | Literal["auto"] | str
#: One file for :func:`scan_many`: a path, or ``(path, format, cursor)``.
ScanItem: TypeAlias = PathArg | tuple[PathArg, FormatArg, Cursor | None]

#: How far into a file a plugin's format looks for entries when the built-in decoders know none of it
#: (what the core's detection reads too: 64 KiB, 20 lines).
_DETECT_BYTES = 64 << 10
_DETECT_ENTRIES = 20
#: The entries of :func:`sidelight._core.read_entries` that tell a format reads a file's lines.
_CONVERSATION = frozenset({"user", "assistant", "tool", "result"})


def detect_format(path: PathArg) -> Format | None:
    """The format of the transcript at ``path``, judged from its first lines; ``None`` if unrecognised.

    The built-in formats are asked first (by the native core). When none knows the file, the formats
    of the installed plugins that decode lines themselves (a :class:`~sidelight.formats.Layout` or a
    ``decode`` function) each read its first lines: the one that finds the most conversation entries
    in them (prompts, replies, tool calls and results; not a session id alone) wins (of two that find
    as many, the first registered).

    Raises :class:`FileNotFoundError`, :class:`PermissionError` or :class:`IsADirectoryError` when the
    file cannot be read.
    """
    name = _fspath(path)
    try:
        detected = _core.detect_format(name)
    except OSError as error:
        raise _with_path(error, name) from None
    if detected is not None:
        return Format(detected)
    return _detect_plugin_format(name)


def _detect_plugin_format(path: str) -> Format | None:
    """The plugin format that reads the most entries in the first lines of ``path`` (``None``: none)."""
    from sidelight.plugins import get_plugins

    best, most = None, 0
    for name, spec in get_plugins().formats().items():
        if spec.layout is None and spec.decode is None:
            continue  # read by a built-in decoder, whose detection said no
        try:
            entries = _core.read_entries(
                path, name, 0, _DETECT_ENTRIES, _DETECT_BYTES, DEFAULT_MAX_LINE_BYTES, DEFAULT_TEXT_LIMIT, 0
            )[0]
        except OSError as error:
            raise _with_path(error, path) from None
        except Exception:  # a plugin's decoder that fails on this file does not know it
            continue
        found = sum(entry[0] in _CONVERSATION for entry in entries)
        if found > most:
            best, most = name, found
    return None if best is None else Format(best)


def format_names() -> list[str]:
    """Every format ``format=`` (``--format``) takes: the built-in ones, then the installed plugins'."""
    from sidelight.plugins import get_plugins

    builtin = [f.value for f in Format]
    return [*builtin, *(name for name in get_plugins().formats() if name not in builtin)]


def scan(
    path: PathArg,
    format: FormatArg = "auto",
    cursor: Cursor | None = None,
    *,
    categories: Mapping[str, str] | None = None,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    text_limit: int = DEFAULT_TEXT_LIMIT,
    threads: int | None = None,
) -> Activity:
    """Scan the complete lines of the transcript at ``path`` after ``cursor`` (``None``: from the start).

    ``format`` is ``"auto"`` (detect it from the first lines) or a :class:`~sidelight.Format`.
    ``categories`` maps tool names (any ASCII case) to ``edit`` / ``read`` / ``command`` / ``other``,
    on top of the format's :data:`~sidelight.DEFAULT_CATEGORIES`. ``threads`` (default: every CPU)
    lets a large range be scanned in parallel parts.

    Raises :class:`FileNotFoundError`, :class:`PermissionError`, :class:`IsADirectoryError` or
    :class:`OSError` when the file cannot be read, and :class:`sidelight.UnknownFormatError` (a
    :class:`ValueError`) when the format is unknown or cannot be detected.
    """
    name = _fspath(path)
    fmt = resolve_format(name, format)
    _check_limits(max_line_bytes=max_line_bytes, text_limit=text_limit)
    if threads is None:
        threads = os.cpu_count() or 1
    elif threads < 1:
        raise ValueError(f"threads must be at least 1, not {threads}")
    try:
        result = _core.scan(
            name,
            fmt.value,
            _cursor_tuple(cursor),
            categories_for(fmt, categories),
            max_line_bytes,
            text_limit,
            threads,
        )
    except OSError as error:
        raise _with_path(error, name) from None
    return Activity.from_core(result)


def scan_many(
    items: Iterable[ScanItem],
    format: FormatArg = "auto",
    *,
    categories: Mapping[str, str] | None = None,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    text_limit: int = DEFAULT_TEXT_LIMIT,
) -> list[Activity | ScanFailure]:
    """Scan many transcripts in one parallel native call; one result per item, in order.

    An item is a path (scanned from the start with ``format``) or a ``(path, format, cursor)`` tuple.
    A file that cannot be scanned gets a :class:`~sidelight.ScanFailure` in its slot, holding the
    exception :func:`scan` would have raised; the others are scanned all the same.
    """
    _check_limits(max_line_bytes=max_line_bytes, text_limit=text_limit)
    results: list[Activity | ScanFailure | None] = []
    requests: list[tuple[str, str, CursorTuple | None]] = []
    slots: list[int] = []
    for item in items:
        if isinstance(item, tuple):
            item_path, item_format, item_cursor = item
        else:
            item_path, item_format, item_cursor = item, format, None
        name = os.fspath(item_path)
        try:
            fmt = resolve_format(_fspath(name), item_format)
        except (OSError, ValueError) as error:
            results.append(ScanFailure(name, error))
            continue
        slots.append(len(results))
        results.append(None)
        requests.append((name, fmt.value, _cursor_tuple(item_cursor)))
    if requests:
        tables = {fmt.value: categories_for(fmt, categories) for fmt in Format}
        scanned = _core.scan_many(requests, tables, max_line_bytes, text_limit)
        for slot, (name, _, _), outcome in zip(slots, requests, scanned, strict=True):
            results[slot] = _outcome(name, outcome)
    return [result for result in results if result is not None]


def recent_entries(
    path: PathArg,
    format: FormatArg = "auto",
    limit: int = 50,
    *,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    text_limit: int = DEFAULT_TEXT_LIMIT,
) -> list[Entry]:
    """The last ``limit`` conversation entries of the transcript at ``path``, oldest first.

    The file is read backwards in blocks, so this costs the same for a short file and a long one. A
    tool use carries its result (:attr:`Entry.result`) when the result is among the lines read. Of a
    transcript that is a tree (Pi), only the active branch is read: the path from its last entry back
    to its root, not the branches left by ``/tree`` or a fork. Raises the same errors as :func:`scan`.
    """
    name = _fspath(path)
    fmt = resolve_format(name, format)
    _check_limits(max_line_bytes=max_line_bytes, text_limit=text_limit)
    if limit < 0:
        raise ValueError(f"limit must not be negative, not {limit}")
    try:
        entries = _core.recent_entries(name, fmt.value, limit, max_line_bytes, text_limit)
    except OSError as error:
        raise _with_path(error, name) from None
    return [Entry(*entry) for entry in entries]


def _outcome(name: str, outcome: dict[str, Any] | Exception) -> Activity | ScanFailure:
    if isinstance(outcome, Exception):
        return ScanFailure(name, _with_path(outcome, name) if isinstance(outcome, OSError) else outcome)
    return Activity.from_core(outcome)


def resolve_format(path: str, format: FormatArg) -> Format:
    """The format to read ``path`` with: ``format`` itself (a built-in format, or an installed plugin's:
    one read by a built-in decoder is that decoder's), or for ``"auto"`` the one :func:`detect_format`
    finds. Raises :class:`~sidelight.UnknownFormatError` naming every format there is when ``format``
    is none of them or the file's cannot be detected, and the errors of :func:`detect_format`."""
    if format != "auto":
        try:
            return Format(format)
        except ValueError:
            from sidelight.plugins import get_plugins

            spec = get_plugins().format(str(format))  # that plugin's format only, not every agent's
            if spec is None:
                raise UnknownFormatError(
                    f"unknown format {format!r}; use auto, {', '.join(format_names())}"
                ) from None
            return Format(spec.decoder)
    detected = detect_format(path)
    if detected is not None:
        return detected
    # Nothing recognised the first lines. Say why in the terms of the file, if it is not a transcript.
    from pathlib import Path  # only on this failure path: keep the import of sidelight lean

    file = Path(path)
    try:
        size = file.stat().st_size
    except OSError as error:
        raise transcript_error(error, path) from None
    if file.is_dir():
        raise transcript_error(IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path), path)
    what = "the file is empty" if size == 0 else "no agent's transcript starts like this"
    raise UnknownFormatError(
        f"{path}: cannot detect the format ({what}); pass --format (format= in Python): "
        f"{', '.join(format_names())}",
        path,
    )


def _with_path(error: OSError, path: str) -> OSError:
    """The core's error about ``path`` as a :class:`~sidelight.errors.TranscriptFileError` (a
    :class:`~sidelight.SidelightError` and the builtin of its kind, the path said once)."""
    return transcript_error(error, path)


def _cursor_tuple(cursor: Cursor | None) -> CursorTuple | None:
    return None if cursor is None else cursor.as_tuple()


def _check_limits(**limits: int) -> None:
    for name, value in limits.items():
        if value < 1:
            raise ValueError(f"{name} must be at least 1, not {value}")


def _fspath(path: PathArg) -> str:
    name = os.fspath(path)
    if not isinstance(name, str):
        raise TypeError(f"a path must be str or os.PathLike[str], not {type(name).__name__}")
    return check_file_name(name)  # the core takes UTF-8 paths: a clear error, not a UnicodeEncodeError
