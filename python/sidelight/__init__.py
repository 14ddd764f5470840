"""sidelight: fast, incremental activity counts from AI-agent transcripts (Claude Code, Pi, Codex).

>>> import sidelight
>>> activity = sidelight.scan("session.jsonl")        # doctest: +SKIP
>>> activity = sidelight.scan("session.jsonl", cursor=activity.cursor)  # only what is new  # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sidelight.errors import InvalidCursorError, SidelightError, UnknownFormatError
from sidelight.formats import (
    DEFAULT_CATEGORIES,
    DEFAULT_MAX_LINE_BYTES,
    DEFAULT_SKIP_CUSTOM_TYPES,
    DEFAULT_TEXT_LIMIT,
    Category,
    Format,
)
from sidelight.history import Message, history, subagent_context
from sidelight.scanning import detect_format, recent_entries, scan, scan_many
from sidelight.types import (
    Activity,
    CategoryCounts,
    Cursor,
    Entry,
    MessageCounts,
    ScanFailure,
    SkippedLines,
    ToolUse,
)

__all__ = [
    "DEFAULT_CATEGORIES",
    "DEFAULT_MAX_LINE_BYTES",
    "DEFAULT_SKIP_CUSTOM_TYPES",
    "DEFAULT_TEXT_LIMIT",
    "Activity",
    "Category",
    "CategoryCounts",
    "Cursor",
    "Entry",
    "Fact",
    "Format",
    "InvalidCursorError",
    "Message",
    "MessageCounts",
    "ScanFailure",
    "SidelightError",
    "SkippedLines",
    "ToolUse",
    "UnknownFormatError",
    "__version__",
    "add_fact",
    "detect_format",
    "forget_fact",
    "get_session_updates",
    "history",
    "hookimpl",
    "list_facts",
    "load_fact_texts",
    "read_session_log",
    "recent_entries",
    "scan",
    "scan_many",
    "subagent_context",
]

__version__: str


if TYPE_CHECKING:
    from sidelight.facts import Fact, add_fact, forget_fact, list_facts, load_fact_texts
    from sidelight.hookspecs import hookimpl
    from sidelight.reader import read_session_log
    from sidelight.updates import get_session_updates

#: Names imported on first use: they pull in the plugin machinery, which `sidelight scan` never needs.
_LAZY = {
    "hookimpl": "sidelight.hookspecs",
    "get_session_updates": "sidelight.updates",
    "read_session_log": "sidelight.reader",
    "Fact": "sidelight.facts",
    "add_fact": "sidelight.facts",
    "list_facts": "sidelight.facts",
    "forget_fact": "sidelight.facts",
    "load_fact_texts": "sidelight.facts",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    # The version comes from the installed package's metadata. importlib.metadata is slow to import,
    # and hooks import sidelight on every prompt, so it is looked up only when asked for.
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            value = version("sidelight")
        except PackageNotFoundError:  # running from a source tree that was never installed
            from sidelight._core import __version__ as value
        globals()["__version__"] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
