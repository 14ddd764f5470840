"""The transcript formats sidelight reads, their default settings, and how a plugin declares its own.

Sources for the built-in names: ``docs/agent-formats.md`` §6 and ``docs/activity.md``.

A third-party format is either **declared** (a :class:`Layout`: where role, text, tool calls and
timestamps live in a line; the native core compiles it once and decodes it at close to a built-in
decoder's speed) or **written in Python** (a ``decode(line: bytes)`` function returning
:class:`Event` records; slower, for shapes a layout cannot say). :func:`register_format` hands either
to the core; the plugin manager calls it for every format plugin. ``docs/plugins.md`` ("Describing a
format") documents every field.

:class:`Layout`, :class:`Blocks`, :class:`ToolEntry`, :class:`Event` and
:class:`FormatDeclarationError` live in :mod:`sidelight._declared` and are imported from here, where
they are made on first use: a prompt hook imports this module on every prompt and, without a plugin's
format, never needs them.
"""

from __future__ import annotations

from enum import StrEnum

# (not `from sidelight import _core`: that asks the package for the attribute first, and its
# __getattr__ imports importlib to answer; a prompt hook does not otherwise import it)
import sidelight._core as _core

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Final

    from sidelight._declared import Blocks as Blocks
    from sidelight._declared import Event as Event
    from sidelight._declared import EventKind as EventKind
    from sidelight._declared import FormatDeclarationError as FormatDeclarationError
    from sidelight._declared import KeyPath as KeyPath
    from sidelight._declared import Layout as Layout
    from sidelight._declared import ToolEntry as ToolEntry
    from sidelight.records import FormatSpec

__all__ = [
    "DEFAULT_CATEGORIES",
    "DEFAULT_MAX_LINE_BYTES",
    "DEFAULT_SKIP_CUSTOM_TYPES",
    "DEFAULT_TEXT_LIMIT",
    "Blocks",
    "Category",
    "Event",
    "Format",
    "FormatDeclarationError",
    "KeyPath",
    "Layout",
    "ToolEntry",
    "categories_for",
    "declared_formats",
    "is_known_format",
    "register_format",
]


class Format(StrEnum):
    """A transcript format: the agent CLI that wrote the file.

    The members are the built-in formats; ``Format("gemini")`` also works once a plugin's format of
    that name is registered (:func:`register_format`), as a member that is not listed.
    """

    CLAUDE_CODE = "claude-code"
    PI = "pi"
    CODEX = "codex"
    QWEN = "qwen"
    COPILOT = "copilot"
    GEMINI = "gemini"
    DROID = "droid"
    KIMI = "kimi"

    @classmethod
    def _missing_(cls, value: object) -> Format | None:
        if not isinstance(value, str) or value not in _REGISTERED:
            return None
        member = _PSEUDO.get(value)
        if member is None:
            member = str.__new__(cls, value)
            member._name_ = value.upper().replace("-", "_")
            member._value_ = value
            _PSEUDO[value] = member
        return member


class Category(StrEnum):
    """What a tool use does, for counting: edit a file, read or search, run a command, or anything else."""

    EDIT = "edit"
    READ = "read"
    COMMAND = "command"
    OTHER = "other"


#: Per format, the lowercase tool name → category. A tool not listed counts as ``other``. The core's
#: table (each built-in decoder's own, in ``rust/sidelight-core/src/formats/``).
DEFAULT_CATEGORIES: Final[dict[str, dict[str, str]]] = {
    name: dict(table) for name, table in _core.DEFAULT_CATEGORIES.items()
}

#: The Pi ``customType`` of the messages our own digests are injected as. The core never counts a Pi
#: ``custom_message`` (docs/activity.md), so this names ours for the Pi integration to write and find.
DEFAULT_SKIP_CUSTOM_TYPES: Final[tuple[str, ...]] = ("session-update",)

#: Lines longer than this are streamed past and counted in ``skipped["too_long"]``.
DEFAULT_MAX_LINE_BYTES: Final[int] = 64 * 1024 * 1024

#: ``first_user_text`` and ``last_assistant_text`` are cut to this many characters.
DEFAULT_TEXT_LIMIT: Final[int] = 500


def categories_for(format: Format | str, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The tool-name → category map for ``format``: the defaults, with ``extra`` added on top.

    Keys of ``extra`` are tool names (ASCII case is ignored); values are ``edit``, ``read``,
    ``command`` or ``other``. Raises :class:`ValueError` for any other category.
    """
    name = str(format)
    registered = _REGISTERED.get(name)
    defaults = DEFAULT_CATEGORIES.get(name) or (registered.categories if registered else {})
    table = {tool.translate(_ASCII_LOWER): str(category) for tool, category in defaults.items()}
    for name, category in (extra or {}).items():
        if category not in _CATEGORY_VALUES:
            raise ValueError(
                f"tool {name!r}: category must be one of {', '.join(_CATEGORY_VALUES)}, not {category!r}"
            )
        table[name.translate(_ASCII_LOWER)] = str(category)
    return table


_CATEGORY_VALUES: Final[tuple[str, ...]] = tuple(c.value for c in Category)
# The core looks tool names up ASCII-lowercased (docs/activity.md), so we lowercase the same way.
_ASCII_LOWER: Final = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


# --- Declared formats -------------------------------------------------------------------------------

#: The names this module gives from :mod:`sidelight._declared`, made on first use.
_DECLARED: Final = frozenset(
    {"Blocks", "Event", "EventKind", "FormatDeclarationError", "KeyPath", "Layout", "ToolEntry"}
)


def __getattr__(name: str) -> object:
    if name in _DECLARED:
        from sidelight import _declared

        value = getattr(_declared, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: Formats registered with the core in this process, by name.
_REGISTERED: dict[str, FormatSpec] = {}
_BUILTIN_NAMES: Final[frozenset[str]] = frozenset(DEFAULT_CATEGORIES)
_PSEUDO: dict[str, Format] = {}


def register_format(spec: FormatSpec) -> bool:
    """Hands a plugin's declared or Python-written format to the native core, once per process.

    Returns ``True`` when ``spec`` has a :class:`Layout` or a ``decode`` function (and is now
    registered), ``False`` for a format read by a built-in decoder. Raises
    :class:`FormatDeclarationError` with one line naming the field that is wrong. A format is
    registered again only when its spec changed.
    """
    if spec.layout is None and spec.decode is None:
        return False
    if _REGISTERED.get(spec.name) == spec:
        return True
    # The error class only when there is an error: a built-in template's Python decoder (opencode) is
    # registered on every prompt, which must not import sidelight._declared for it.
    if spec.name in {f.value for f in Format}:
        from sidelight._declared import FormatDeclarationError

        raise FormatDeclarationError(f"format {spec.name!r}: name: a built-in format's; choose another")
    table = {tool.translate(_ASCII_LOWER): str(category) for tool, category in spec.categories.items()}
    try:
        if spec.layout is not None:
            _core.declare_format(spec.name, spec.layout.to_core(), table)
        else:
            _core.register_decoder(spec.name, spec.decode, table)  # type: ignore[arg-type]
    except ValueError as error:
        from sidelight._declared import FormatDeclarationError

        raise FormatDeclarationError(str(error)) from None
    _REGISTERED[spec.name] = spec
    return True


def is_known_format(name: str) -> bool:
    """Whether the core decodes ``name``: a built-in format or one registered in this process."""
    return name in _BUILTIN_NAMES or name in _REGISTERED


def declared_formats() -> dict[str, FormatSpec]:
    """The formats registered in this process (:func:`register_format`), by name."""
    return dict(_REGISTERED)
