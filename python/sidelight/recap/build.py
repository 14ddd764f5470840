"""Session recap: a ranked, token-budgeted handoff of a finished (or interrupted) session.

The pipeline, all deterministic (byte-identical output for the same input) and without an LLM:

1. **Collapse** the transcript into plain lines (:mod:`sidelight.recap.collapse`), streamed line by line.
2. **Chunk** the lines by whole turns up to :attr:`RecapSettings.chunk_chars` characters (a longer
   turn is split), and **summarize** each chunk as it completes (the built-in ``extractive``
   summarizer, or a ``sidelight_chunk_summarizers`` plugin). Only the summaries are kept, and past
   :attr:`RecapSettings.max_chunks` the oldest ones are merged pairwise, so memory stays bounded
   whatever the transcript's size.
3. **Score** each chunk: ``novelty x centrality x recency x action_weight``:

   - novelty: ``1 - max cosine`` to the long-term memories (floored at ``novelty_floor``), with
     vectors from the chosen embedder (built-in ``hashed-ngrams``: hashed words and character
     trigrams, no dependency);
   - centrality: TextRank (PageRank over the chunks' cosine-similarity graph), scaled to mean 1;
   - recency: ``2 ** (-(1 - position) / recency_half_life)``, position being where the chunk ends
     in the session (0 start, 1 end);
   - action_weight: ``1 + alpha * consequential_tool_count``.

4. **Build** the recap from the best chunks, shown in session order, within a token budget (counted
   with the chosen counter, :mod:`sidelight.tokens`): a header that says where it comes from, the
   last request and the files edited last, the chunks, and what was left unfinished.

Settings come from ``[recap]`` in the config file and ``SIDELIGHT_RECAP_*`` environment variables
(see :meth:`RecapSettings.load`).
"""

from __future__ import annotations

import math
import os
import re
import zlib
from collections import OrderedDict
from dataclasses import asdict, dataclass, field, fields
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final

from sidelight._fast.logs import get_logger
from sidelight.formats import categories_for
from sidelight.lines import Chunk, Line
from sidelight.reads import decoder_for
from sidelight.recap.collapse import TranscriptLog, clip, is_acknowledgement
from sidelight.redact import sanitize

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
    from pathlib import Path

    from sidelight.config import Settings
    from sidelight.plugins import Plugins
    from sidelight.records import Session

__all__ = [
    "DEFAULT_EMBEDDER",
    "DEFAULT_SUMMARIZER",
    "ChunkSummary",
    "Recap",
    "RecapSettings",
    "ScoredChunk",
    "build_recap",
    "centrality",
    "cosine",
    "extractive_summary",
    "hashed_ngram_vectors",
    "novelty",
    "recency",
    "score_chunks",
]

logger = get_logger(__name__)

#: The built-in embedder's and chunk summarizer's names.
DEFAULT_EMBEDDER: Final = "hashed-ngrams"
DEFAULT_SUMMARIZER: Final = "extractive"
#: Dimensions of the built-in hashed vectors.
HASH_DIMENSIONS: Final = 1024
#: A reply of at least this many words says something (a chunk's summary quotes the last such reply).
SUBSTANTIAL_WORDS: Final = 6
#: How many files the header names.
FILES_SHOWN: Final = 6
#: How many of its look-ups a subagent's chunk that changed nothing names.
LOOKS_SHOWN: Final = 4


@dataclass(frozen=True, slots=True)
class RecapSettings:
    """How a recap is built. Every field can be set in the config file's ``[recap]`` table or with
    ``SIDELIGHT_RECAP_<FIELD>`` (upper case), e.g. ``SIDELIGHT_RECAP_BUDGET=1500``."""

    #: Most tokens the recap may take.
    budget: int = 1000
    #: A chunk holds whole turns up to this many characters of collapsed log.
    chunk_chars: int = 6000
    #: A chunk's summary is cut to this many characters.
    summary_chars: int = 600
    #: Past this many chunks, the oldest are merged pairwise (bounded memory and scoring time).
    max_chunks: int = 160
    #: action_weight = 1 + alpha * consequential tool calls.
    alpha: float = 0.25
    #: Recency halves every this fraction of the session, counted back from its end.
    recency_half_life: float = 0.25
    #: The lowest novelty (a chunk that repeats a memory still ranks among its peers).
    novelty_floor: float = 0.05
    #: TextRank's damping factor.
    damping: float = 0.85
    #: The embedder (``sidelight_embedders``) used for novelty and centrality.
    embedder: str = DEFAULT_EMBEDDER
    #: The chunk summarizer to use (``""``: the first that answers, the built-in one last).
    summarizer: str = ""
    #: Read only the last this many bytes of the transcript (``0``: all of it).
    tail_bytes: int = 0

    @classmethod
    def load(cls, settings: Settings | None = None, env: Mapping[str, str] | None = None) -> RecapSettings:
        """From the config file's ``[recap]`` table and ``SIDELIGHT_RECAP_*`` variables."""
        from sidelight.config import ConfigError, parse_count, parse_number

        env = os.environ if env is None else env
        table = settings.extra.get("recap", {}) if settings is not None else {}
        if not isinstance(table, dict):
            raise ConfigError("[recap] in the config file must be a table")
        values: dict[str, Any] = {}
        for item in fields(cls):
            raw = env.get(f"SIDELIGHT_RECAP_{item.name.upper()}", table.get(item.name))
            if raw is None:
                continue
            kind = type(getattr(cls(), item.name))
            name = f"recap setting {item.name}"
            if kind is int:  # finite, 0 or more: the one check of numbers (sidelight.config)
                values[item.name] = parse_count(str(raw).replace("_", ""), name)
            elif kind is float:
                values[item.name] = parse_number(raw, name)
            else:
                values[item.name] = kind(raw)
        recap = cls(**values)
        if recap.chunk_chars < 200 or recap.max_chunks < 2 or recap.summary_chars < 40:
            raise ConfigError("recap settings: chunk_chars >= 200, max_chunks >= 2, summary_chars >= 40")
        if not 0 < recap.damping < 1 or recap.recency_half_life <= 0:
            raise ConfigError("recap settings: 0 < damping < 1 and recency_half_life > 0")
        return recap


@dataclass(frozen=True, slots=True)
class ChunkSummary:
    """What is kept of a chunk once it is summarized: where it was, what it did, its summary."""

    index: int
    #: The number of the user turn it starts in (0: before the first prompt).
    turn: int
    #: The collapsed-log lines it spans (``end`` exclusive), for its position in the session.
    start: int
    end: int
    summary: str
    consequential: int
    files: tuple[str, ...] = ()
    first_timestamp: str | None = None
    last_timestamp: str | None = None
    #: The number of the last user turn it reaches into (``turn`` when it holds one turn or less).
    last_turn: int = 0


@dataclass(frozen=True, slots=True)
class ScoredChunk:
    chunk: ChunkSummary
    novelty: float
    centrality: float
    recency: float
    action_weight: float

    @property
    def score(self) -> float:
        return self.novelty * self.centrality * self.recency * self.action_weight


@dataclass(frozen=True, slots=True)
class Recap:
    """A built recap: its text and what it was built from."""

    text: str
    tokens: int
    budget: int
    path: str
    format: str
    session_id: str | None
    cwd: str | None
    name: str | None
    first_timestamp: str | None
    last_timestamp: str | None
    interrupted: bool
    turns: int
    last_request: str | None
    files_edited: tuple[str, ...]
    unfinished: tuple[str, ...]
    #: Every chunk with its score parts, in session order, and the indexes of those in the recap.
    chunks: tuple[ScoredChunk, ...] = ()
    selected: tuple[int, ...] = ()
    lines_read: int = 0
    lines_skipped: int = 0
    #: The fewest tokens that hold the header (a smaller budget cuts it: ``sidelight recap`` refuses one).
    header_tokens: int = 0
    #: For a subagent's own transcript: ``{"agent_type", "description", "task"}`` (``None``: a session's).
    subagent: Mapping[str, str | None] | None = None
    #: The session's state as the caller judged it (``sidelight recap``: as ``sidelight status`` shows
    #: it): ``active``, ``idle``, ``suspended`` or ``ended``.
    state: str = "ended"

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready, for ``sidelight recap --json``."""
        data = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "chunks"}
        data["subagent"] = None if self.subagent is None else dict(self.subagent)
        data["files_edited"] = list(self.files_edited)
        data["unfinished"] = list(self.unfinished)
        data["selected"] = list(self.selected)
        data["chunks"] = [
            {
                **asdict(scored.chunk),
                "files": list(scored.chunk.files),
                "novelty": round(scored.novelty, 6),
                "centrality": round(scored.centrality, 6),
                "recency": round(scored.recency, 6),
                "action_weight": round(scored.action_weight, 6),
                "score": round(scored.score, 6),
            }
            for scored in self.chunks
        ]
        return data


# --- summarizing ------------------------------------------------------------------------------------

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


def _summarize(chunk: Chunk, plugins: Plugins | None, recap: RecapSettings, subagent: bool = False) -> str:
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


# --- similarity -------------------------------------------------------------------------------------

_WORD: Final = re.compile(r"[a-z0-9_]{2,}")
_STOP_WORDS: Final = frozenset(
    [
        "the",
        "and",
        "for",
        "that",
        "this",
        "with",
        "from",
        "are",
        "was",
        "were",
        "you",
        "your",
        "have",
        "has",
        "had",
        "not",
        "but",
        "all",
        "can",
        "will",
        "would",
        "should",
        "could",
        "into",
        "then",
        "than",
        "there",
        "their",
        "them",
        "they",
        "its",
        "it's",
        "our",
        "out",
        "use",
        "used",
        "using",
        "now",
        "let",
        "lets",
        "just",
        "also",
        "what",
        "when",
        "which",
        "who",
        "how",
        "why",
        "here",
        "need",
        "needs",
        "one",
        "two",
        "via",
        "see",
        "get",
        "got",
        "did",
        "does",
        "done",
        "make",
    ]
)


def hashed_ngram_vectors(texts: Sequence[str], dimensions: int = HASH_DIMENSIONS) -> list[list[float]]:
    """The built-in embedder: words and character trigrams of words, hashed (CRC-32, so the same on
    every run and machine) into ``dimensions`` buckets, weighted ``1 + log(tf)``, unit length."""
    vectors = []
    for text in texts:
        counts: dict[int, float] = {}
        for word in _WORD.findall(text.lower()):
            if word in _STOP_WORDS:
                continue
            features = [word]
            padded = f"<{word}>"
            features.extend(padded[i : i + 3] for i in range(len(padded) - 2))
            for n, feature in enumerate(features):
                bucket = zlib.crc32(feature.encode()) % dimensions
                counts[bucket] = counts.get(bucket, 0.0) + (1.0 if n == 0 else 0.3)
        vector = [0.0] * dimensions
        for bucket, count in counts.items():
            vector[bucket] = 1.0 + math.log(count) if count >= 1 else count
        norm = math.sqrt(sum(v * v for v in vector))
        vectors.append([v / norm for v in vector] if norm else vector)
    return vectors


def _sparse(vector: Sequence[float]) -> dict[int, float]:
    norm = math.sqrt(sum(v * v for v in vector))
    if not norm:
        return {}
    return {i: v / norm for i, v in enumerate(vector) if v}


def cosine(a: Mapping[int, float], b: Mapping[int, float]) -> float:
    """Cosine of two unit-length sparse vectors."""
    if len(a) > len(b):
        a, b = b, a
    return sum(v * b.get(i, 0.0) for i, v in a.items())


def novelty(
    chunks: Sequence[Mapping[int, float]], memories: Sequence[Mapping[int, float]], floor: float
) -> list[float]:
    """``1 - max cosine`` of each chunk to the memories (1 without memories), at least ``floor``."""
    out = []
    for vector in chunks:
        nearest = max((cosine(vector, memory) for memory in memories), default=0.0)
        out.append(max(floor, 1.0 - max(0.0, nearest)))
    return out


def centrality(vectors: Sequence[Mapping[int, float]], damping: float = 0.85) -> list[float]:
    """TextRank: PageRank over the graph whose edge weights are the chunks' (positive) cosine
    similarities; scaled so that the mean is 1."""
    n = len(vectors)
    if n == 0:
        return []
    if n == 1:
        return [1.0]
    weights = [[0.0] * n for _ in range(n)]
    for i in range(n):
        for j in range(i + 1, n):
            similarity = max(0.0, cosine(vectors[i], vectors[j]))
            weights[i][j] = weights[j][i] = similarity
    totals = [sum(row) for row in weights]
    rank = [1.0 / n] * n
    for _ in range(100):
        dangling = sum(rank[j] for j in range(n) if totals[j] == 0.0) / n
        shares = [rank[j] / totals[j] if totals[j] else 0.0 for j in range(n)]
        new = [
            (1.0 - damping) / n + damping * (dangling + sum(weights[j][i] * shares[j] for j in range(n)))
            for i in range(n)
        ]
        delta = max(abs(a - b) for a, b in zip(new, rank, strict=True))
        rank = new
        if delta < 1e-10:
            break
    return [r * n for r in rank]


def recency(position: float, half_life: float) -> float:
    """``2 ** (-(1 - position) / half_life)``: 1 at the end of the session, halving every ``half_life``."""
    exponent = -(1.0 - min(1.0, max(0.0, position))) / half_life
    return float(math.pow(2.0, exponent))


def _embed(texts: Sequence[str], plugins: Plugins | None, recap: RecapSettings) -> list[dict[int, float]]:
    if not texts:
        return []
    embed: Callable[[Sequence[str]], Sequence[Sequence[float]]] = hashed_ngram_vectors
    if plugins is not None and recap.embedder != DEFAULT_EMBEDDER:
        spec = plugins.embedders().get(recap.embedder)
        if spec is None:
            known = ", ".join(sorted(plugins.embedders())) or DEFAULT_EMBEDDER
            logger.warning(
                "unknown embedder %r (known: %s); using %s", recap.embedder, known, DEFAULT_EMBEDDER
            )
        else:
            embed = spec.embed
    vectors = list(embed(list(texts)))
    if len(vectors) != len(texts):
        raise ValueError(f"the embedder returned {len(vectors)} vectors for {len(texts)} texts")
    return [_sparse([float(v) for v in vector]) for vector in vectors]


def score_chunks(
    chunks: Sequence[ChunkSummary],
    total_lines: int,
    memories: Sequence[str] = (),
    plugins: Plugins | None = None,
    recap: RecapSettings | None = None,
) -> list[ScoredChunk]:
    """The score parts of each chunk (in the order given)."""
    recap = recap or RecapSettings()
    vectors = _embed([c.summary for c in chunks] + list(memories), plugins, recap)
    chunk_vectors, memory_vectors = vectors[: len(chunks)], vectors[len(chunks) :]
    novel = novelty(chunk_vectors, memory_vectors, recap.novelty_floor)
    central = centrality(chunk_vectors, recap.damping)
    span = max(1, total_lines)
    return [
        ScoredChunk(
            chunk=chunk,
            novelty=novel[i],
            centrality=central[i],
            recency=recency(chunk.end / span, recap.recency_half_life),
            action_weight=1.0 + recap.alpha * chunk.consequential,
        )
        for i, chunk in enumerate(chunks)
    ]


# --- reading a session ------------------------------------------------------------------------------


@dataclass(slots=True)
class _Reading:
    """What streaming a transcript leaves: chunk summaries and a few facts, all bounded."""

    summaries: list[ChunkSummary] = field(default_factory=list)
    lines: int = 0
    turns: int = 0
    files: OrderedDict[str, None] = field(default_factory=OrderedDict)
    last_request: str | None = None
    #: The first prompt (a subagent's task, from its parent).
    first_request: str | None = None
    last_user: str | None = None
    last_assistant: str | None = None
    #: Failed tool calls of the last turn that did not work on a later try, by what they did.
    failures: OrderedDict[str, Line] = field(default_factory=OrderedDict)
    #: Failed tool calls of earlier turns that were not tried again since.
    earlier_failures: OrderedDict[str, Line] = field(default_factory=OrderedDict)
    #: Failed tool calls that worked on a later try (the failure, by what it did).
    fixed: OrderedDict[str, Line] = field(default_factory=OrderedDict)
    last_action: Line | None = None
    finished: str | None = None


def _chunks(lines: Iterable[Line], chunk_chars: int, reading: _Reading) -> Iterator[Chunk]:
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


def _observe(lines: Iterable[Line], reading: _Reading) -> Iterator[Line]:
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


def _read(log: TranscriptLog, plugins: Plugins | None, recap: RecapSettings) -> _Reading:
    reading = _Reading()
    position = 0
    for chunk in _chunks(_observe(log, reading), recap.chunk_chars, reading):
        summary = _summarize(chunk, plugins, recap, subagent=log.subagent is not None)
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


# --- building ---------------------------------------------------------------------------------------


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


def _unfinished(log: TranscriptLog, reading: _Reading, state: str = "ended") -> list[str]:
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
            f'The assistant\'s last message asked {whom}: "{_tail_sentences(reading.last_assistant, 240)}"'
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
        items.append(
            f'Where it stopped, the assistant said: "{_tail_sentences(reading.last_assistant, 240)}"'
        )
    return items


_COMMAND_SHOWN: Final = re.compile(r"`[^`]*`")


def _what(line: Line) -> str:
    """A failed tool line's subject: its command (in backticks), else what it did without the error."""
    command = _COMMAND_SHOWN.search(line.text)
    if command:
        return command.group(0)
    return line.text.removeprefix("Failed to ").split(":", 1)[0].rstrip(".")


def _tail_sentences(text: str, limit: int) -> str:
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


def _chunk_line(chunk: ChunkSummary) -> str:
    when = _when(chunk.first_timestamp)
    last = max(chunk.turn, chunk.last_turn)
    if last > chunk.turn:
        where = f"Turns {chunk.turn}–{last}" if chunk.turn else f"Start to turn {last}"
    else:
        where = f"Turn {chunk.turn}" if chunk.turn else "Start"
    return f"- {where}{f' ({when})' if when else ''}: {chunk.summary}"


def build_recap(
    path: Path | str,
    format: str = "auto",
    *,
    session: Session | None = None,
    memories: Sequence[str] = (),
    plugins: Plugins | None = None,
    recap_settings: RecapSettings | None = None,
    budget: int | None = None,
    count: Callable[[str], int] | None = None,
    state: str = "ended",
) -> Recap:
    """The recap of the transcript at ``path``.

    ``state``: the session's state (``active``, ``idle``, ``suspended`` or ``ended``), which the recap's
    wording follows: a live session is "in progress", not "ended" (``sidelight recap`` passes what
    ``sidelight status`` shows, :func:`sidelight.watch.status.session_state`; the text depends on
    nothing else than the transcript, the settings and this).

    ``memories`` are the long-term memories novelty is measured against; ``plugins`` bring the
    format's tool categories, summarizers, embedders and token counters; ``count`` overrides the
    token counter (default: the chosen one, :func:`sidelight.tokens.get_counter`). The text never takes
    more than ``budget`` tokens (default :attr:`RecapSettings.budget`).

    Raises what :func:`sidelight.scan` raises for a file it cannot read.
    """
    from sidelight.tokens import get_counter

    recap = recap_settings or RecapSettings()
    budget = recap.budget if budget is None else budget
    count = count or get_counter(plugins)
    categories = None
    if plugins is not None and session is not None:
        if format == "auto":
            format = decoder_for(session, plugins)
        spec = plugins.formats().get(session.format)
        if spec is not None:
            categories = categories_for(spec.decoder, spec.categories)
    log = TranscriptLog(path, format, categories=categories, start_offset=_start(path, recap.tail_bytes))
    reading = _read(log, plugins, recap)
    scored = score_chunks(reading.summaries, reading.lines, memories, plugins, recap)

    name = session.name if session is not None else None
    files = tuple(reversed(reading.files))[:FILES_SHOWN]
    subagent = None
    if log.subagent is not None:
        # The meta file is text from the transcript's folder: redacted as every line shown is.
        told = {k: sanitize(v, 300) if v else None for k, v in log.subagent._asdict().items()}
        subagent = {**told, "task": reading.first_request}
    unfinished = _unfinished(log, reading, state)
    header = _header(log, reading, name, files, state)
    text, selected = _assemble(header, scored, unfinished, budget, count)
    return Recap(
        text=text,
        tokens=count(text),
        budget=budget,
        path=str(path),
        format=log.format,
        session_id=log.session_id,
        cwd=log.cwd,
        name=name,
        first_timestamp=log.first_timestamp,
        last_timestamp=log.last_timestamp,
        interrupted=log.interrupted,
        turns=reading.turns,
        last_request=reading.last_request,
        files_edited=files,
        unfinished=tuple(unfinished),
        chunks=tuple(scored),
        selected=selected,
        lines_read=log.lines_read,
        lines_skipped=log.lines_skipped,
        header_tokens=count("\n".join(header) + "\n"),
        subagent=subagent,
        state=state,
    )


def _start(path: Path | str, tail_bytes: int) -> int:
    if tail_bytes <= 0:
        return 0
    from sidelight import _core

    return _core.tail_offset(os.fspath(path), tail_bytes)


def _header(
    log: TranscriptLog, reading: _Reading, name: str | None, files: tuple[str, ...], state: str = "ended"
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


def _subagent_lines(log: TranscriptLog, reading: _Reading, kind: str) -> list[str]:
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


def _render(header: list[str], chunks: list[str], unfinished: list[str]) -> str:
    out = [*header, ""]
    if chunks:
        out += ["## What happened (the most relevant parts, in order)", *chunks, ""]
    out += ["## Unfinished", *(f"- {item}" for item in unfinished)]
    return "\n".join(out) + "\n"


def _assemble(
    header: list[str],
    scored: Sequence[ScoredChunk],
    unfinished: list[str],
    budget: int,
    count: Callable[[str], int],
) -> tuple[str, tuple[int, ...]]:
    """The best chunks that fit in the budget with the header and the unfinished items, shown in session
    order. Ties are broken by position (the later chunk first), so the result is stable."""
    ranked = sorted(range(len(scored)), key=lambda i: (-round(scored[i].score, 12), -i))
    base = _render(header, [], unfinished)
    if count(base) > budget:
        return _shrink(header, unfinished, budget, count), ()
    used = count(base) + count("## What happened (the most relevant parts, in order)\n")
    chosen: list[int] = []
    for i in ranked:
        cost = count(_chunk_line(scored[i].chunk) + "\n")
        if used + cost <= budget:
            chosen.append(i)
            used += cost
    while True:
        order = sorted(chosen)
        text = _render(header, [_chunk_line(scored[i].chunk) for i in order], unfinished)
        if count(text) <= budget or not chosen:
            break
        chosen.pop()  # counts are not additive for every counter: drop the weakest until it fits
    if count(text) > budget:
        return _shrink(header, unfinished, budget, count), ()
    return text, tuple(scored[i].chunk.index for i in sorted(chosen))


def _shrink(header: list[str], unfinished: list[str], budget: int, count: Callable[[str], int]) -> str:
    """A budget too small for the header and the unfinished items: the longest prefix of them that fits."""
    text = _render(header, [], unfinished)
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
