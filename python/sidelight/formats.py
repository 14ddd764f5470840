"""The transcript formats sidelight reads and their default settings (plain data).

Sources for every name below: ``FORMATS.md`` §6 in the shared design notes and ``docs/activity.md``.
Plugins (a later issue) extend these maps; until then this module is the single place they live.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = [
    "DEFAULT_CATEGORIES",
    "DEFAULT_MAX_LINE_BYTES",
    "DEFAULT_SKIP_CUSTOM_TYPES",
    "DEFAULT_TEXT_LIMIT",
    "Category",
    "Format",
    "categories_for",
]


class Format(StrEnum):
    """A transcript format: the agent CLI that wrote the file."""

    CLAUDE_CODE = "claude-code"
    PI = "pi"
    CODEX = "codex"


class Category(StrEnum):
    """What a tool use does, for counting: edit a file, read or search, run a command, or anything else."""

    EDIT = "edit"
    READ = "read"
    COMMAND = "command"
    OTHER = "other"


def _categories(edit: str, read: str, command: str) -> dict[str, str]:
    table: dict[str, str] = {}
    for category, names in ((Category.EDIT, edit), (Category.READ, read), (Category.COMMAND, command)):
        table.update(dict.fromkeys(names.split(), category.value))
    return table


#: Per format, the lowercase tool name → category. A tool not listed counts as ``other``.
DEFAULT_CATEGORIES: Final[dict[str, dict[str, str]]] = {
    Format.CLAUDE_CODE.value: _categories(
        edit="edit multiedit write notebookedit",
        read="read glob grep ls notebookread lsp webfetch websearch readmcpresourcetool",
        command="bash powershell monitor bashoutput killshell taskoutput taskstop",
    ),
    Format.PI.value: _categories(
        edit="edit write",
        read="read grep find ls",
        command="bash bashexecution",
    ),
    Format.CODEX.value: _categories(
        edit="apply_patch",
        read="view_image",
        command="shell shell_command exec_command write_stdin local_shell_call container.exec",
    ),
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
    table = dict(DEFAULT_CATEGORIES.get(str(format), {}))
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
