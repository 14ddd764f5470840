"""Built-in template: the default summarizer, the seed's heuristic one-line format.

::

    - discord (3m ago, 4 messages): "how do I deploy this?" -> edited 2 files, ran 3 commands — last: "Done."

It is registered like any plugin and asked last, so a third-party summarizer that answers wins.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from sidelight.digest import LINE_LIMIT, OPTIONAL_TAIL, ago, is_digest_text
from sidelight.hookspecs import hookimpl
from sidelight.records import SummarizerSpec
from sidelight.redact import sanitize

if TYPE_CHECKING:
    from collections.abc import Iterator

    from sidelight.records import SessionActivity

__all__ = ["count", "summarize"]

#: Quoted transcript text is cut to this many characters.
TEXT_LIMIT: Final = 100
#: A session name is cut to this many characters.
NAME_LIMIT: Final = 60
#: The last assistant text is shown only when at least this much of it fits in the line.
_MIN_LAST = 20

# (category, verb phrase for one, for many): in the order they are reported.
_CATEGORIES: Final = (
    ("edit", "edited 1 file", "edited {n} files"),
    ("command", "ran 1 command", "ran {n} commands"),
    ("read", "read 1 file", "read {n} files"),
    ("other", "1 other tool use", "{n} other tool uses"),
)


def count(n: int, one: str, many: str) -> str:
    """``1 message`` / ``3 messages``: ``one`` for exactly one, else ``many`` with ``{n}`` filled in."""
    return one if n == 1 else many.format(n=n)


def _quote(text: str | None, limit: int) -> str | None:
    """Transcript text as a quoted, sanitized, one-line snippet; ``None`` for nothing or digest text."""
    if not text or is_digest_text(text):
        return None
    snippet = sanitize(text, limit).replace('"', "'")
    return f'"{snippet}"' if snippet else None


def summarize(activity: SessionActivity) -> str | None:
    """One digest line for a sibling's activity (``None`` when nothing happened)."""
    if activity.is_empty:
        return None
    name = sanitize(activity.session.name, NAME_LIMIT) or "session"
    details = []
    if activity.age_seconds is not None:
        details.append(ago(activity.age_seconds))
    details.append(count(activity.messages, "1 message", "{n} messages"))
    line = f"- {name} ({', '.join(details)})"
    tools = [
        count(n, one, many)
        for category, one, many in _CATEGORIES
        if (n := activity.categories.get(category, 0)) > 0
    ]
    first = _quote(activity.first_user_text, TEXT_LIMIT)
    if first and tools:
        line += f": {first} -> {', '.join(tools)}"
    elif first:
        line += f": {first}"
    elif tools:
        line += f": {', '.join(tools)}"
    prefix = OPTIONAL_TAIL
    room = min(TEXT_LIMIT, LINE_LIMIT - len(line) - len(prefix) - 2)
    if room >= _MIN_LAST:
        last = _quote(activity.last_assistant_text, room)
        if last:
            line += prefix + last
    return line


@hookimpl
def sidelight_summarizers() -> Iterator[SummarizerSpec]:
    yield SummarizerSpec(
        name="default",
        summarize=summarize,
        description='the seed\'s heuristic line: name, age, messages, "first prompt" -> tool counts',
    )
