"""A recap's text: its header (where it comes from, the last request, the files edited last), one line
per chosen chunk, what the session left unfinished, and the short sentences they quote. Pure text from
the records (:mod:`.model`); :func:`~sidelight.features.recap.rank.assemble` fits it into the budget."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Final

from sidelight.features.recap.collapse import clip
from sidelight.redact import sanitize

if TYPE_CHECKING:
    from collections.abc import Callable

    from sidelight.features.recap.collapse import TranscriptLog
    from sidelight.features.recap.model import ChunkSummary, Reading
    from sidelight.lines import Line

__all__ = [
    "chunk_line",
    "ended",
    "header_lines",
    "lead",
    "render_text",
    "shrink",
    "tail_sentences",
    "unfinished_items",
]

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


def unfinished_items(log: TranscriptLog, reading: Reading, state: str = "ended") -> list[str]:
    """What the session left open: plan items not done, failures of its last turn that no later try
    fixed, an interruption or a question to the user; then where it stopped (its last words)."""
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
    if not items:
        reason = f" ({reading.finished.rstrip('.')})" if reading.finished else ""
        absent = (
            "no open plan items or interruption, and every failure was fixed later"
            if reading.fixed
            else "no open plan items, failures or interruption"
        )
        items.append(f"Nothing recorded as unfinished{reason}: {absent}.")
    if reading.fixed:
        fixed = [_what(failure) for failure in reading.fixed.values()]
        more = f" (+{len(fixed) - 3} more)" if len(fixed) > 3 else ""
        items.append(f"Failed, then fixed later: {'; '.join(fixed[-3:])}{more}.")
    # A subagent's last message is its result, which the header shows.
    if reading.last_assistant and not asked and (log.subagent is None or log.interrupted):
        items.append(f'Where it stopped, the assistant said: "{tail_sentences(reading.last_assistant, 240)}"')
    return items


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
    label = f' "{sanitize(name, 80)}"' if name else ""
    subagent = log.subagent
    kind = f" ({sanitize(subagent.agent_type, 40)})" if subagent is not None and subagent.agent_type else ""
    live = state != "ended"
    what = (
        f"subagent{label}" if subagent is not None else f"{'session' if live else 'previous session'}{label}"
    )
    lines = [f"# Recap of the {what} ({log.format})"]
    source = [f"From {sanitize(str(log.path), 300)}"]
    if subagent is not None:
        # Its lines carry its parent's session id: it is not a session of its own.
        parent = f" of session {sanitize(log.session_id, 80)}" if log.session_id else ""
        source.append(f"subagent{kind}{parent}")
    elif log.session_id:
        source.append(f"session {sanitize(log.session_id, 80)}")
    span = [t for t in (_when(log.first_timestamp), _when(log.last_timestamp)) if t]
    if span:
        source.append(" → ".join(dict.fromkeys(span)))
    turns = f"{reading.turns} {'turn' if reading.turns == 1 else 'turns'}"
    # Its prompts are its parent's instructions: `scan` counts no person's prompt in them.
    source.append(f"{turns} (given by its parent)" if subagent is not None and reading.turns else turns)
    ending = _ending(state, log.interrupted)
    lines.append("; ".join(source) + f"; {ending}.")
    if log.start_offset:
        lines.append(f"(Only the last {_size(log)} of the transcript were read.)")
    if subagent is not None:
        lines.extend(_subagent_lines(log, reading, kind))
    elif reading.last_request:
        lines.append(f'Last request: "{lead(reading.last_request, 300)}"')
    if files:
        lines.append("Files edited last: " + ", ".join(files) + ".")
    return lines


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


def render_text(header: list[str], chunks: list[str], unfinished: list[str]) -> str:
    out = [*header, ""]
    if chunks:
        out += ["## What happened (the most relevant parts, in order)", *chunks, ""]
    out += ["## Unfinished", *(f"- {item}" for item in unfinished)]
    return "\n".join(out) + "\n"


def shrink(header: list[str], unfinished: list[str], budget: int, count: Callable[[str], int]) -> str:
    """A budget too small for the header and the unfinished items: the longest prefix of them that fits."""
    text = render_text(header, [], unfinished)
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
