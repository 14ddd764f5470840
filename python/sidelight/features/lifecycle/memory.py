"""Hot memory and the session's context: one line per consequential tool use (:func:`hot_memory_line`),
how a tool use is listed, whether an argument names a file, and the key entities a prompt names, with
the patterns they use and the lengths they cut text to."""

from __future__ import annotations

import re
from typing import Final

from sidelight.redact import redact, sanitize, strip_invisible

__all__ = [
    "COMMAND_LIMIT",
    "EDIT_SNIPPET_LIMIT",
    "PATH_LIMIT",
    "TOOL_LIMIT",
    "entities_in",
    "hot_memory_line",
    "looks_like_path",
    "tool_description",
]

#: Hot-memory cuts: an edit's old and new text, a command.
EDIT_SNIPPET_LIMIT: Final = 30
COMMAND_LIMIT: Final = 50
#: Paths and tool descriptions are cut to these many characters.
PATH_LIMIT: Final = 200
TOOL_LIMIT: Final = 80

# Command-category tools that only look at a running command (its output), not run anything.
_POLLING_TOOLS: Final = frozenset({"bashoutput", "taskoutput", "monitor"})


def hot_memory_line(
    name: str,
    category: str,
    primary_arg: str | None,
    lines: int | None = None,
    old_text: str | None = None,
    new_text: str | None = None,
) -> str | None:
    """One hot-memory line for a consequential tool use, ``None`` for the others (reads, searches…).

    Decided by category, whatever the format's tool names (Claude Code ``Write``/``Edit``/``Bash``, Pi
    ``write``/``edit``/``bash``, Codex ``apply_patch``/``exec_command``…):

    - an ``edit`` with an old or new text: ``Edited PATH: 'old' -> 'new'`` (each cut to 30 characters);
    - an ``edit`` with a line count (a write or a create): ``Created PATH (N lines)``;
    - another ``edit``: ``Edited PATH``;
    - a ``command``: ``Ran: COMMAND`` (cut to 50 characters).

    Text is sanitized (control characters stripped, secrets redacted, whitespace collapsed).

    >>> hot_memory_line("Write", "edit", "/src/app.py", lines=12)
    'Created /src/app.py (12 lines)'
    >>> hot_memory_line("edit", "edit", "a.py", old_text="x = 1", new_text="x = 2")
    "Edited a.py: 'x = 1' -> 'x = 2'"
    >>> hot_memory_line("exec_command", "command", "pytest -q")
    'Ran: pytest -q'
    >>> hot_memory_line("Read", "read", "a.py") is None
    True
    """
    category = str(category)
    if category == "edit":
        path = sanitize(primary_arg, PATH_LIMIT) if primary_arg else ""
        path = path or f"a file ({sanitize(name, 40)})"
        if old_text is not None or new_text is not None:
            old = sanitize(old_text or "", EDIT_SNIPPET_LIMIT)
            new = sanitize(new_text or "", EDIT_SNIPPET_LIMIT)
            return f"Edited {path}: '{old}' -> '{new}'"
        if lines is not None:
            return f"Created {path} ({lines} {'line' if lines == 1 else 'lines'})"
        return f"Edited {path}"
    if category == "command":
        if name.lower() in _POLLING_TOOLS or not primary_arg:
            return None
        command = sanitize(primary_arg, COMMAND_LIMIT)
        return f"Ran: {command}" if command else None
    return None


def tool_description(name: str, primary_arg: str | None) -> str:
    """``Name arg``, sanitized and cut: how a tool use is listed among the recent tools."""
    text = f"{name} {primary_arg}" if primary_arg else name
    return sanitize(text, TOOL_LIMIT)


_GLOB = re.compile(r"[*?\[\]{}\s]")
_FILE_NAME = re.compile(r"(?:^|/)[^/]*\.[A-Za-z0-9]{1,10}$")


def looks_like_path(arg: str) -> bool:
    """A tool's primary argument that names a file (not a pattern, a URL or a query)."""
    if not arg or len(arg) > 4096 or _GLOB.search(arg) or "://" in arg:
        return False
    return "/" in arg or _FILE_NAME.search(arg) is not None


# Key entities in prompts: file names, `code spans`, snake_case and CamelCase identifiers.
_ENTITY_ALTERNATIVES: Final = (
    r"`([^`\n]{2,40})`",
    r"(?<![\w/.-])((?:[\w.-]+/)*[\w-]+\.[A-Za-z][A-Za-z0-9]{0,9})(?![\w/])",
    r"\b([a-z][a-z0-9]*(?:_[a-z0-9]+)+)\b",
    r"\b([A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+)\b",
)
_ENTITY = re.compile("|".join(_ENTITY_ALTERNATIVES))
_CAPITAL = re.compile("[A-Z]")
#: :data:`_ENTITY` without the alternatives a text cannot match, by which of them it can.
_ENTITY_PATTERNS: dict[tuple[bool, ...], re.Pattern[str]] = {(True, True, True, True): _ENTITY}


def _entity_pattern(text: str) -> re.Pattern[str] | None:
    """:data:`_ENTITY` with only the alternatives ``text`` can match (each needs a character: a
    backtick, a dot, an underscore, a capital letter), or ``None`` when it has none: the same matches,
    without trying four patterns at every position of every prompt."""
    key = ("`" in text, "." in text, "_" in text, _CAPITAL.search(text) is not None)
    if not any(key):
        return None
    pattern = _ENTITY_PATTERNS.get(key)
    if pattern is None:
        # Each alternative keeps its group number: one it cannot match becomes a group that never does.
        parts = [alt if wanted else "(?!)()" for alt, wanted in zip(_ENTITY_ALTERNATIVES, key, strict=True)]
        pattern = _ENTITY_PATTERNS[key] = re.compile("|".join(parts))
    return pattern


def entities_in(text: str) -> list[str]:
    """The key entities a prompt names, in order (file names reduced to their base name). They are
    taken from the prompt with its secrets redacted: a key's pieces (``key_sk``, ``ghp_...``) would
    otherwise pass for identifiers and be kept in clear in ``lifecycle.json`` and the archives."""
    found: list[str] = []
    text = redact(strip_invisible(text[:20000]))
    pattern = _entity_pattern(text)
    if pattern is None:
        return found
    for match in pattern.finditer(text):
        value = next(group for group in match.groups() if group)
        if match.group(2):
            value = value.rsplit("/", 1)[-1]
        value = sanitize(value, 40)
        if len(value) >= 2 and "REDACTED" not in value:
            found.append(value)
    return found
