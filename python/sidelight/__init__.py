"""sidelight: fast, incremental activity counts from AI-agent transcripts (Claude Code, Codex, Pi, Gemini CLI,
Qwen Code, GitHub Copilot CLI, opencode).

>>> import sidelight
>>> activity = sidelight.scan("session.jsonl")        # doctest: +SKIP
>>> activity = sidelight.scan("session.jsonl", cursor=activity.cursor)  # only what is new  # doctest: +SKIP

Every public name is imported on first use (PEP 562): a prompt hook imports this package on every
prompt and needs none of them, so ``import sidelight`` costs next to nothing.
"""

from __future__ import annotations

import sys

# Not ``typing``, nor ``types``: the prompt hook imports this package on every prompt (see sidelight.warm).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType
    from typing import Any
else:
    ModuleType = type(sys)

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
    from sidelight.engine.scanning import detect_format, recent_entries, scan, scan_many
    from sidelight.errors import InvalidCursorError, SidelightError, UnknownFormatError
    from sidelight.features.digest import get_session_updates
    from sidelight.features.facts import Fact, add_fact, forget_fact, list_facts, load_fact_texts
    from sidelight.features.history import Message, history, subagent_context
    from sidelight.features.reader import read_session_log
    from sidelight.formats import (
        DEFAULT_CATEGORIES,
        DEFAULT_MAX_LINE_BYTES,
        DEFAULT_SKIP_CUSTOM_TYPES,
        DEFAULT_TEXT_LIMIT,
        Category,
        Format,
    )
    from sidelight.hookspecs import hookimpl
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

#: The module each public name comes from, imported on first use.
_LAZY = {
    "InvalidCursorError": "sidelight.errors",
    "SidelightError": "sidelight.errors",
    "UnknownFormatError": "sidelight.errors",
    "DEFAULT_CATEGORIES": "sidelight.formats",
    "DEFAULT_MAX_LINE_BYTES": "sidelight.formats",
    "DEFAULT_SKIP_CUSTOM_TYPES": "sidelight.formats",
    "DEFAULT_TEXT_LIMIT": "sidelight.formats",
    "Category": "sidelight.formats",
    "Format": "sidelight.formats",
    "Message": "sidelight.features.history",
    "history": "sidelight.features.history",
    "subagent_context": "sidelight.features.history",
    "detect_format": "sidelight.engine.scanning",
    "recent_entries": "sidelight.engine.scanning",
    "scan": "sidelight.engine.scanning",
    "scan_many": "sidelight.engine.scanning",
    "Activity": "sidelight.types",
    "CategoryCounts": "sidelight.types",
    "Cursor": "sidelight.types",
    "Entry": "sidelight.types",
    "MessageCounts": "sidelight.types",
    "ScanFailure": "sidelight.types",
    "SkippedLines": "sidelight.types",
    "ToolUse": "sidelight.types",
    "hookimpl": "sidelight.hookspecs",
    "get_session_updates": "sidelight.features.digest",
    "read_session_log": "sidelight.features.reader",
    "Fact": "sidelight.features.facts",
    "add_fact": "sidelight.features.facts",
    "list_facts": "sidelight.features.facts",
    "forget_fact": "sidelight.features.facts",
    "load_fact_texts": "sidelight.features.facts",
}


#: The submodules ``import sidelight`` imported when it imported every public name, which code may
#: reach as attributes of the package.
_SUBMODULES = frozenset({"_core", "errors", "formats", "types"})
#: Those of them that moved into a layer's folder, by their former name.
_MOVED = {"scanning": "sidelight.engine.scanning"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is not None:
        import importlib

        value = getattr(importlib.import_module(module), name)
        globals()[name] = value
        return value
    if name in _SUBMODULES or name in _MOVED:
        import importlib

        return importlib.import_module(_MOVED.get(name, f"{__name__}.{name}"))
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


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
