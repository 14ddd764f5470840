"""Built-in template: the default summarizer, one line that names the agent, the session and what changed.

::

    - pi 3f5dc7bd (2m ago, 6 messages): "write the plan" -> wrote plan.md; ran grep -c hello (+1) — last: "OK"
    - codex 5e6f7a8b (just now, 2 messages) [also touched by you: app.py]: "fix it" -> edited app.py
    - claude 1a2b3c4d (worktree feature-x, 3m ago, 4 messages): "add the export" -> edited export.py

The agent (``claude``, ``pi``, ``codex``, a plugin's format), the session's name (a volute name, a
title, else a short id), the worktree when it is another of the reader's repository, the age and the
messages; a file this session touched too; the first prompt;
the files edited or written (each once, the most recent first, relative to the sibling's directory),
the latest command's first words (or the latest that failed and was not run again with success since,
``(failed, exit 1)``) and how many others ran; the last reply where it fits. It is
registered like any plugin and asked last, so a third-party summarizer that answers wins.
"""

from __future__ import annotations

from sidelight._fast._hookimpl import hookimpl
from sidelight.features.digest import LINE_LIMIT, OPTIONAL_TAIL, ago, is_digest_text, short_path
from sidelight.records import SummarizerSpec
from sidelight.redact import sanitize

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence
    from typing import Final

    from sidelight.records import SessionActivity

__all__ = ["count", "summarize"]

#: Quoted transcript text is cut to this many characters.
TEXT_LIMIT: Final = 100
#: A session name is cut to this many characters.
NAME_LIMIT: Final = 60
#: A worktree's name (its branch, else its folder's) is cut to this many characters.
WORKTREE_LIMIT: Final = 40
#: How many file names a line shows (the others are counted: ``(+N)``).
FILES_SHOWN: Final = 2
#: The latest command is shown by its first words: at most this many, and this many characters.
COMMAND_WORDS: Final = 4
COMMAND_LIMIT: Final = 40
#: The last assistant text is shown only when at least this much of it fits in the line.
_MIN_LAST = 20


def count(n: int, one: str, many: str) -> str:
    """``1 message`` / ``3 messages``: ``one`` for exactly one, else ``many`` with ``{n}`` filled in."""
    return one if n == 1 else many.format(n=n)


def _quote(text: str | None, limit: int) -> str | None:
    """Transcript text as a quoted, sanitized, one-line snippet; ``None`` for nothing or digest text."""
    if not text or is_digest_text(text):
        return None
    snippet = sanitize(text, limit).replace('"', "'")
    return f'"{snippet}"' if snippet else None


def _more(n: int) -> str:
    return f" (+{n})" if n > 0 else ""


def _paths(paths: Sequence[str], cwd: str | None) -> str:
    """The first :data:`FILES_SHOWN` paths, shortened and sanitized, and how many more."""
    shown = [sanitize(short_path(p, cwd), 80) for p in paths[:FILES_SHOWN]]
    return ", ".join(s for s in shown if s) + _more(len(paths) - FILES_SHOWN)


def first_words(command: str) -> str:
    """A command's first words, secrets redacted (over the whole command, before it is cut).

    >>> first_words("grep -c hello notes.txt | sort | uniq -c")
    'grep -c hello notes.txt…'
    """
    words = sanitize(command, 200).replace('"', "'").split(" ")
    short = " ".join(words[:COMMAND_WORDS])
    if len(short) > COMMAND_LIMIT:
        return short[: COMMAND_LIMIT - 1] + "…"
    return short + ("…" if len(words) > COMMAND_WORDS else "")


def changes(activity: SessionActivity) -> list[str]:
    """What the sibling changed: the files it edited or wrote, the commands it ran; else what it read
    and its other tool uses, counted."""
    parts = []
    files = activity.files_changed
    edits = activity.categories.get("edit", 0)
    if files:
        written = {u.primary_arg for u in activity.tool_uses if u.category == "edit" and u.lines is not None}
        edited = {u.primary_arg for u in activity.tool_uses if u.category == "edit" and u.lines is None}
        verb = "wrote" if written and not edited and written.issuperset(files) else "edited"
        parts.append(f"{verb} {_paths(files, activity.directory)}")
    elif edits:
        parts.append(count(edits, "edited 1 file", "edited {n} files"))
    commands = activity.commands
    ran = max(activity.categories.get("command", 0), len(commands))
    if commands:
        # A failure another session has not fixed since is the news: it is shown, not the latest.
        failed = activity.failed_command
        shown, how = (commands[-1], "") if failed is None else (failed[0], f" ({failed[1]})")
        parts.append(f"ran {first_words(shown)}{how}{_more(ran - 1)}")
    elif ran:
        parts.append(count(ran, "ran 1 command", "ran {n} commands"))
    if parts:
        return parts
    reads = {u.primary_arg for u in activity.tool_uses if u.category == "read" and u.primary_arg}
    read = len(reads) or activity.categories.get("read", 0)
    if read:
        parts.append(count(read, "read 1 file", "read {n} files"))
    other = activity.categories.get("other", 0)
    if other:
        parts.append(count(other, "1 other tool use", "{n} other tool uses"))
    return parts


def summarize(activity: SessionActivity) -> str | None:
    """One digest line for a sibling's activity (``None`` when nothing happened)."""
    if activity.is_empty:
        return None
    session = activity.session
    name = sanitize(session.name, NAME_LIMIT) or "session"
    agent = sanitize(session.agent, 20)
    details = []
    if activity.worktree:
        details.append(f"worktree {sanitize(activity.worktree, WORKTREE_LIMIT)}")
    if activity.age_seconds is not None:
        details.append(ago(activity.age_seconds))
    details.append(count(activity.messages, "1 message", "{n} messages"))
    line = (
        f"- {agent} {name} ({', '.join(details)})"
        if agent and agent != name
        else f"- {name} ({', '.join(details)})"
    )
    if activity.shared_files:
        line += f" [also touched by you: {_paths(activity.shared_files, activity.directory)}]"
    done = "; ".join(changes(activity))
    first = _quote(activity.first_user_text, TEXT_LIMIT)
    if first and done:
        line += f": {first} -> {done}"
    elif first:
        line += f": {first}"
    elif done:
        line += f": {done}"
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
        description='agent, name, age, messages, "first prompt" -> files changed; commands run — last reply',
    )
