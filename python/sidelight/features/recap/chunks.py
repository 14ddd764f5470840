"""Reading a transcript into chunk summaries, streamed: its collapsed lines packed into chunks of whole
turns, each summarized as it completes (the built-in ``extractive`` summary, or a
``sidelight_chunk_summarizers`` plugin), the oldest merged pairwise past
:attr:`~sidelight.features.recap.model.RecapSettings.max_chunks`, and the facts the recap's text needs kept on
the way (:class:`~sidelight.features.recap.model.Reading`)."""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING, Final

from sidelight._fast.logs import get_logger
from sidelight.features.recap.collapse import is_acknowledgement
from sidelight.features.recap.model import DEFAULT_SUMMARIZER, ChunkSummary, Reading
from sidelight.features.recap.render import ended, lead
from sidelight.lines import Chunk
from sidelight.redact import sanitize

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from sidelight.features.recap.collapse import TranscriptLog
    from sidelight.features.recap.model import RecapSettings
    from sidelight.lines import Line
    from sidelight.plugins import Plugins

__all__ = ["extractive_summary", "read_chunks", "summarize"]

logger = get_logger(__name__)

#: A reply of at least this many words says something (a chunk's summary quotes the last such reply).
SUBSTANTIAL_WORDS: Final = 6
#: How many of its look-ups a subagent's chunk that changed nothing names.
LOOKS_SHOWN: Final = 4


def extractive_summary(chunk: Chunk, limit: int = 600, *, subagent: bool = False) -> str:
    """The built-in chunk summary: the request, what changed, and what the assistant concluded.

    ``User asked: "…". Edited a.py (3 edits); Ran `pytest`: failed (exit 1). Assistant: "…".``
    Deterministic; at most ``limit`` characters. For a ``subagent``'s own transcript the request is
    its parent's (``Task: "…"``), and a chunk that changed nothing says what it looked at (a subagent
    that only explores has nothing else to show).
    """
    parts: list[str] = []
    users = [line for line in chunk.lines if line.kind == "user"]
    if users:
        more = (
            f" (+{len(users) - 1} more {'message' if len(users) == 2 else 'messages'})"
            if len(users) > 1
            else ""
        )
        asked = users[-1].text if is_acknowledgement(users[0].text) else users[0].text
        parts.append(ended(f'{"Task" if subagent else "User asked"}: "{lead(asked, 200)}"{more}'))
    actions: list[str] = []
    edits: OrderedDict[str, list[Line]] = OrderedDict()
    for line in chunk.lines:
        if line.kind == "consequential" and line.path and not line.failed:
            edits.setdefault(line.path, []).append(line)
    shown_edits: set[str] = set()
    commands = [line for line in chunk.lines if line.kind == "consequential" and not line.path]
    last_command = next(
        (line for line in reversed(commands) if line.text.startswith(("Ran", "User ran"))), None
    )
    for line in chunk.lines:
        if line.kind == "consequential" and line.path and not line.failed:
            if line.path in shown_edits:
                continue
            shown_edits.add(line.path)
            same = edits[line.path]
            actions.append(
                line.text.rstrip(".") if len(same) == 1 else f"Edited {line.path} ({len(same)} edits)"
            )
        elif (
            line.kind == "consequential"
            and (line.failed or not line.text.startswith(("Ran", "User ran")) or line is last_command)
        ) or (line.kind == "meta" and line.text.startswith("Finished")):
            actions.append(line.text.rstrip("."))
    if not actions and subagent:
        looked = [line.text.rstrip(".") for line in chunk.lines if line.kind == "observational"]
        if looked:
            more = f" (+{len(looked) - LOOKS_SHOWN} more)" if len(looked) > LOOKS_SHOWN else ""
            actions.append("; ".join(looked[:LOOKS_SHOWN]) + more)
    if actions:
        parts.append("; ".join(actions) + ".")
    answers = [line for line in chunk.lines if line.kind == "assistant"]
    if answers:
        # The last reply that says something (not "Done." or an emoji), else the last one.
        said = next((a for a in reversed(answers) if len(a.text.split()) >= SUBSTANTIAL_WORDS), answers[-1])
        parts.append(f'Assistant: "{lead(said.text, 200)}"')
    text = " ".join(parts)
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def summarize(chunk: Chunk, plugins: Plugins | None, recap: RecapSettings, subagent: bool = False) -> str:
    if plugins is not None:
        specs = plugins.chunk_summarizers()
        chosen = [specs[recap.summarizer]] if recap.summarizer in specs else list(specs.values())
        for spec in chosen:
            if spec.name == DEFAULT_SUMMARIZER:
                break
            try:
                text = spec.summarize(chunk)
            except Exception as error:  # a broken plugin never breaks a recap
                logger.warning("chunk summarizer %s failed: %s", spec.name, error)
                continue
            if text:
                return sanitize(text, recap.summary_chars)
    return extractive_summary(chunk, recap.summary_chars, subagent=subagent)


def _chunks(lines: Iterable[Line], chunk_chars: int, reading: Reading) -> Iterator[Chunk]:
    """Whole turns packed into chunks of at most ``chunk_chars`` characters (a longer turn is split
    at line boundaries)."""
    current: list[Line] = []
    current_size = 0
    turn: list[Line] = []
    turn_size = 0
    index = 0
    start_turn = 0

    def make(block: list[Line], first_turn: int) -> Chunk:
        nonlocal index
        stamps = [line.timestamp for line in block if line.timestamp]
        chunk = Chunk(
            index=index,
            lines=tuple(block),
            turn=first_turn,
            first_timestamp=stamps[0] if stamps else None,
            last_timestamp=stamps[-1] if stamps else None,
        )
        index += 1
        return chunk

    turn_number = 0
    current_turn = 0
    for line in lines:
        reading.lines += 1
        size = len(line.text) + 1
        if line.kind == "user":
            # A turn ends: pack it into the current chunk, or start a new one with it.
            if current and current_size + turn_size > chunk_chars:
                yield make(current, start_turn)
                current, current_size = [], 0
            if not current:
                start_turn = current_turn
            current.extend(turn)
            current_size += turn_size
            turn, turn_size = [], 0
            turn_number += 1
            current_turn = turn_number
        turn.append(line)
        turn_size += size
        if turn_size > chunk_chars:
            # A turn longer than a chunk: what came before it is one chunk, the turn so far another.
            if current:
                yield make(current, start_turn)
                current, current_size = [], 0
            yield make(turn, current_turn)
            turn, turn_size = [], 0
    if current and current_size + turn_size > chunk_chars:
        yield make(current, start_turn)
        current, current_size = [], 0
    if not current:
        start_turn = current_turn
    current.extend(turn)
    if current:
        yield make(current, start_turn)
    reading.turns = turn_number


def _observe(lines: Iterable[Line], reading: Reading) -> Iterator[Line]:
    for line in lines:
        if line.kind == "user":
            reading.last_user = line.text
            reading.last_action = None  # "Last action" is one of the last turn's
            for key, failure in reading.failures.items():
                _keep(reading.earlier_failures, key, failure)
            reading.failures.clear()
            if not is_acknowledgement(line.text):
                reading.last_request = line.text
            if reading.first_request is None:
                reading.first_request = line.text
        elif line.kind == "assistant":
            reading.last_assistant = line.text
        elif line.kind == "consequential":
            reading.last_action = line
            if line.path and not line.failed:
                reading.files.pop(line.path, None)
                reading.files[line.path] = None
                while len(reading.files) > 50:
                    reading.files.popitem(last=False)
            key = _action_key(line)
            # A later try of the same thing decides.
            before = reading.failures.pop(key, None) or reading.earlier_failures.pop(key, None)
            if line.failed:
                reading.fixed.pop(key, None)
                _keep(reading.failures, key, line)
            elif before is not None:
                _keep(reading.fixed, key, before)
        elif line.kind == "meta" and line.text.startswith("Finished"):
            reading.finished = line.text
        yield line


def _keep(kept: OrderedDict[str, Line], key: str, line: Line, most: int = 20) -> None:
    """Records ``line`` as the newest under ``key``, keeping at most ``most`` (the newest)."""
    kept.pop(key, None)
    kept[key] = line
    while len(kept) > most:
        kept.popitem(last=False)


def _action_key(line: Line) -> str:
    """What a tool line did, without its outcome: ``Ran `pytest`: failed`` and ``Ran `pytest -x`: ok``
    are the same action (:attr:`Line.action`: program and subcommand); an edit is keyed by its file."""
    if line.action:
        return line.action
    if line.path:
        return f"edit:{line.path}"
    text = line.text.removeprefix("Failed to ").removeprefix("User ")
    if "`" in text:
        return text[: text.index("`", text.index("`") + 1) + 1] if text.count("`") >= 2 else text
    return text.split(":", 1)[0]


def _last_turn(chunk: Chunk) -> int:
    """The number of the last user turn a chunk reaches into (its first is ``chunk.turn``)."""
    prompts = sum(1 for line in chunk.lines if line.kind == "user")
    starts_with_prompt = bool(chunk.lines) and chunk.lines[0].kind == "user"
    return chunk.turn + prompts - (1 if starts_with_prompt else 0)


def _merge(a: ChunkSummary, b: ChunkSummary, limit: int) -> ChunkSummary:
    text = f"{a.summary} {b.summary}"
    return ChunkSummary(
        index=a.index,
        turn=a.turn,
        last_turn=max(a.last_turn, b.last_turn, b.turn),
        start=a.start,
        end=b.end,
        summary=text if len(text) <= limit else text[: limit - 1].rstrip() + "…",
        consequential=a.consequential + b.consequential,
        files=tuple(dict.fromkeys(a.files + b.files)),
        first_timestamp=a.first_timestamp or b.first_timestamp,
        last_timestamp=b.last_timestamp or a.last_timestamp,
    )


def _compact(summaries: list[ChunkSummary], recap: RecapSettings) -> list[ChunkSummary]:
    """Halves the number of older chunks by merging neighbours; the newest quarter stays as it is."""
    keep = max(1, recap.max_chunks // 4)
    old, new = summaries[:-keep], summaries[-keep:]
    merged = [
        _merge(old[i], old[i + 1], recap.summary_chars) if i + 1 < len(old) else old[i]
        for i in range(0, len(old), 2)
    ]
    return merged + new


def read_chunks(log: TranscriptLog, plugins: Plugins | None, recap: RecapSettings) -> Reading:
    reading = Reading()
    position = 0
    for chunk in _chunks(_observe(log, reading), recap.chunk_chars, reading):
        summary = summarize(chunk, plugins, recap, subagent=log.subagent is not None)
        reading.summaries.append(
            ChunkSummary(
                index=chunk.index,
                turn=chunk.turn,
                last_turn=_last_turn(chunk),
                start=position,
                end=position + len(chunk.lines),
                summary=summary,
                consequential=chunk.consequential,
                files=chunk.files_edited,
                first_timestamp=chunk.first_timestamp,
                last_timestamp=chunk.last_timestamp,
            )
        )
        position += len(chunk.lines)
        if len(reading.summaries) > recap.max_chunks:
            reading.summaries = _compact(reading.summaries, recap)
    return reading
