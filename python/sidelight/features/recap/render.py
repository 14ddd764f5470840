"""A recap's text: its header (which session, by agent and name; the last request, the files edited
last), one line per chosen chunk, what the session left unfinished (or how it ended, when nothing is),
and the short sentences they quote. Pure text from the records (:mod:`.model`), in proportion to the
session: no empty section, and nothing said twice (:func:`without_repeats`);
:func:`~sidelight.features.recap.rank.assemble` fits it into the budget."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Final

from sidelight import records
from sidelight.engine.paths import short_id
from sidelight.features.recap.collapse import clip
from sidelight.redact import sanitize

if TYPE_CHECKING:
    from collections.abc import Callable

    from sidelight.features.recap.collapse import TranscriptLog
    from sidelight.features.recap.model import ChunkSummary, Reading
    from sidelight.lines import Line

__all__ = [
    "ALL_SHOWN",
    "SOME_SHOWN",
    "chunk_line",
    "closing_lines",
    "ended",
    "header_lines",
    "lead",
    "render_text",
    "shrink",
    "tail_sentences",
    "unfinished_items",
    "without_repeats",
]

#: The heading of the chunks: all of them, or the best that fit in the budget.
ALL_SHOWN: Final = "## What happened"
SOME_SHOWN: Final = "## What happened (the most relevant parts, in order)"

_SENTENCE_END: Final = re.compile(r"(?<=[.!?:])\s+(?=[A-Z`\"'(\[*-])")


def lead(text: str, limit: int) -> str:
    """The first sentences of ``text`` that fit in ``limit`` characters (one line; cut if one does not)."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    out = ""
    for sentence in _SENTENCE_END.split(flat):
        candidate = f"{out} {sentence}".strip()
        if len(candidate) > limit:
            break
        out = candidate
    return out or clip(flat, limit)


def ended(sentence: str) -> str:
    """``sentence`` with its full stop, unless a quote at its end already ends it (no ``"Done."."``)."""
    return sentence if sentence.endswith(('."', '?"', '!"', '…"')) else sentence + "."


def _when(timestamp: str | None) -> str | None:
    if not timestamp:
        return None
    try:
        moment = datetime.fromisoformat(timestamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        return moment.strftime("%Y-%m-%d %H:%M")
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


#: How the item that quotes the assistant's last words begins.
_STOPPED: Final = "Where it stopped, the assistant said: "
#: The items that say how a session ended, not what it left open.
_ENDING: Final = ("Failed, then fixed later: ", _STOPPED)


def unfinished_items(log: TranscriptLog, reading: Reading, state: str = "ended") -> list[str]:
    """What the session left open: plan items not done, failures of its last turn that no later try
    fixed, an interruption or a question to the user; then how it ended: failures fixed later and
    where it stopped (its last words). Nothing at all when there is nothing to say (no filler)."""
    items: list[str] = []
    open_items = [text for text, status in log.plan if status != "completed"]
    if open_items:
        listed = "; ".join(f'"{sanitize(t, 100)}"' for t in open_items[:5])
        more = f" (+{len(open_items) - 5} more)" if len(open_items) > 5 else ""
        items.append(f"Plan items not done: {listed}{more}.")
    items.extend(
        f"Still failing at the end: {failure.text}" for failure in list(reading.failures.values())[-3:]
    )
    items.extend(
        f"Failed earlier and not tried again: {failure.text}"
        for failure in list(reading.earlier_failures.values())[-2:]
    )
    asked = False
    if log.interrupted:
        request = f' while working on "{lead(reading.last_request, 200)}"' if reading.last_request else ""
        doing = f" Last action: {reading.last_action.text}" if reading.last_action is not None else ""
        if state == "active":  # no final answer yet: it is still at work, not stopped
            on = request.replace(" while working on", " on", 1)
            items.append(f"The session is still working{on} (no final answer yet).{doing}")
        else:
            items.append(ended(f"The session was interrupted{request}") + doing)
    elif reading.last_assistant and reading.last_assistant.rstrip().endswith("?"):
        asked = True
        whom = "its parent" if log.subagent is not None else "the user"
        items.append(
            f'The assistant\'s last message asked {whom}: "{tail_sentences(reading.last_assistant, 240)}"'
        )
    if reading.fixed:
        fixed = [_what(failure) for failure in reading.fixed.values()]
        more = f" (+{len(fixed) - 3} more)" if len(fixed) > 3 else ""
        items.append(f"Failed, then fixed later: {'; '.join(fixed[-3:])}{more}.")
    # A subagent's last message is its result, which the header shows.
    if reading.last_assistant and not asked and (log.subagent is None or log.interrupted):
        items.append(f'{_STOPPED}"{tail_sentences(reading.last_assistant, 240)}"')
    return items


def closing_lines(items: list[str]) -> list[str]:
    """The recap's last section: ``## Unfinished`` when something is left open, else ``## How it
    ended`` (failures fixed later, the last words); no section at all when there is nothing to say."""
    if not items:
        return []
    title = "## How it ended" if all(item.startswith(_ENDING) for item in items) else "## Unfinished"
    return [title, *(f"- {item}" for item in items)]


_COMMAND_SHOWN: Final = re.compile(r"`[^`]*`")


def _what(line: Line) -> str:
    """A failed tool line's subject: its command (in backticks), else what it did without the error."""
    command = _COMMAND_SHOWN.search(line.text)
    if command:
        return command.group(0)
    return line.text.removeprefix("Failed to ").split(":", 1)[0].rstrip(".")


def tail_sentences(text: str, limit: int) -> str:
    """The last sentences of ``text`` that fit in ``limit`` characters (one line)."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    out = ""
    for sentence in reversed(_SENTENCE_END.split(flat)):
        candidate = f"{sentence} {out}".strip()
        if len(candidate) > limit:
            break
        out = candidate
    if out:
        return out
    kept = flat[-(limit - 1) :]
    space = kept.find(" ")
    return "…" + (kept[space + 1 :] if 0 <= space < limit // 2 else kept)  # from a whole word


def chunk_line(chunk: ChunkSummary) -> str:
    when = _when(chunk.first_timestamp)
    last = max(chunk.turn, chunk.last_turn)
    if last > chunk.turn:
        where = f"Turns {chunk.turn}–{last}" if chunk.turn else f"Start to turn {last}"
    else:
        where = f"Turn {chunk.turn}" if chunk.turn else "Start"
    return f"- {where}{f' ({when})' if when else ''}: {chunk.summary}"


def header_lines(
    log: TranscriptLog, reading: Reading, name: str | None, files: tuple[str, ...], state: str = "ended"
) -> list[str]:
    """The title naming the session by agent and name (``# Recap of session claude 3b6589c9 "Fix
    the tests"``), when and how long it ran and how it stands, its last request and the files it
    edited last."""
    subagent = log.subagent
    if subagent is not None:
        # Its lines carry its parent's session id: it is not a session of its own.
        label = f' "{sanitize(name, 80)}"' if name else ""
        kind = f" ({sanitize(subagent.agent_type, 40)})" if subagent.agent_type else ""
        parent = f" of session {_who(log, None)}" if log.session_id else ""
        title = f"# Recap of subagent{label}{kind}{parent}"
    else:
        kind = ""
        title = f"# Recap of session {_who(log, name)}"
    lines = [title]
    status = []
    span = [t for t in (_when(log.first_timestamp), _when(log.last_timestamp)) if t]
    if span:
        status.append(" → ".join(dict.fromkeys(span)))
    turns = f"{reading.turns} {'turn' if reading.turns == 1 else 'turns'}"
    # Its prompts are its parent's instructions: `scan` counts no person's prompt in them.
    status.append(f"{turns} (given by its parent)" if subagent is not None and reading.turns else turns)
    status.append(_ending(state, log.interrupted))
    lines.append(ended("; ".join(status)))
    if log.start_offset:
        lines.append(f"(Only the last {_size(log)} of the transcript were read.)")
    if subagent is not None:
        lines.extend(_subagent_lines(log, reading, kind))
    elif reading.last_request:
        lines.append(f'{_LAST_REQUEST}"{lead(reading.last_request, 300)}"')
    if files:
        lines.append("Files edited last: " + ", ".join(files) + ".")
    return lines


#: How the closing line that quotes the assistant's last question begins.
_ASKED: Final = "- The assistant's last message asked "
#: How the header line that quotes the last request begins.
_LAST_REQUEST: Final = "Last request: "


def _who(log: TranscriptLog, name: str | None) -> str:
    """The session by agent, short id and name, as ``sidelight status`` names it: ``claude 3b6589c9
    "Fix the tests"`` (the name left out when it is the id or a file name made of it; the file's name
    when there is no id)."""
    short = short_id(sanitize(log.session_id, 80)) if log.session_id else None
    label = sanitize(name, 80) if name else None
    if short is None and label is None:
        label = sanitize(log.path.stem, 80)
    parts = [records.agent_name(log.format)]
    if short is not None:
        parts.append(short)
    if label is not None and label != short and not (log.session_id and log.session_id in label):
        parts.append(f'"{label}"' if short is not None else label)
    return " ".join(parts)


def _ending(state: str, interrupted: bool) -> str:
    """How the header says the session stands: the state it is in, and how its last turn went."""
    if state == "active":
        return "in progress"
    if state == "ended":
        return "interrupted (no final answer)" if interrupted else "ended"
    return f"{state}, interrupted (no final answer)" if interrupted else state


def _subagent_lines(log: TranscriptLog, reading: Reading, kind: str) -> list[str]:
    """A subagent's task (its parent's first instruction, not a person's prompt), what it did and what
    it returned."""
    lines = []
    if reading.first_request:
        lines.append(f'Subagent{kind} task: "{lead(reading.first_request, 300)}"')
    if reading.last_request and reading.last_request != reading.first_request:
        lines.append(f'Last instruction from the parent: "{lead(reading.last_request, 300)}"')
    total = sum(log.tool_counts.values())
    if total:
        order = ("edit", "read", "command", "other")
        parts = ", ".join(f"{log.tool_counts[c]} {c}" for c in order if log.tool_counts.get(c))
        lines.append(f"Tool uses: {total} ({parts}).")
    if reading.last_assistant and not log.interrupted:
        lines.append(
            f'Result (its last message, returned to the parent): "{lead(reading.last_assistant, 300)}"'
        )
    return lines


def _size(log: TranscriptLog) -> str:
    try:
        size = log.path.stat().st_size - log.start_offset
    except OSError:
        return "part"
    return f"{size / 1_048_576:.1f} MB"


def without_repeats(header: list[str], chunks: list[str], closing: list[str]) -> tuple[list[str], list[str]]:
    """``header`` and ``closing`` without what the chunks shown already quote: the last request, the
    assistant's last words (a question it asked is still said, without its words again). A short
    session is not told three times."""
    shown = "\n".join(chunks)
    if not shown:
        return header, closing

    def quoted(line: str, prefix: str) -> bool:
        return line.startswith(prefix) and line[len(prefix) :] in shown

    header = [line for line in header if not quoted(line, _LAST_REQUEST)]
    kept = []
    for line in closing:
        if quoted(line, f"- {_STOPPED}"):
            continue
        if line.startswith(_ASKED) and line[line.index(": ") + 2 :] in shown:
            whom = line[len(_ASKED) : line.index(": ")]
            line = f"- The assistant's last message, quoted above, asked {whom} a question."
        kept.append(line)
    if len(kept) == 1:  # a heading alone says nothing
        kept = []
    return header, kept


def render_text(header: list[str], chunks: list[str], closing: list[str], all_shown: bool = False) -> str:
    """The recap: ``header``, the chunks shown (under :data:`ALL_SHOWN` when every chunk is, else
    :data:`SOME_SHOWN`), then the ``closing`` section (:func:`closing_lines`); no empty section."""
    header, closing = without_repeats(header, chunks, closing)
    out = list(header)
    if chunks:
        out += ["", ALL_SHOWN if all_shown else SOME_SHOWN, *chunks]
    if closing:
        out += ["", *closing]
    return "\n".join(out) + "\n"


def shrink(header: list[str], closing: list[str], budget: int, count: Callable[[str], int]) -> str:
    """A budget too small for the header and the closing section: the longest prefix of them that fits."""
    text = render_text(header, [], closing)
    low, high = 0, len(text)
    while low < high:
        middle = (low + high + 1) // 2
        if count(text[:middle]) <= budget:
            low = middle
        else:
            high = middle - 1
    if low < len(text) and not text[low].isspace():  # never end mid-word
        low = max(text.rfind(" ", 0, low), text.rfind("\n", 0, low), 0)
    return text[:low].rstrip(" ")
