"""A recap's records: how it is built (:class:`RecapSettings`), what is kept of each chunk
(:class:`ChunkSummary`) and its score parts (:class:`ScoredChunk`), what reading a transcript leaves
(:class:`Reading`), and the built recap (:class:`Recap`). Data only: :mod:`.chunks` makes the summaries,
:mod:`.rank` scores and picks them, :mod:`.render` writes the text, :mod:`.build` runs the pipeline."""

from __future__ import annotations

import os
from collections import OrderedDict
from dataclasses import asdict, dataclass, field, fields
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from collections.abc import Mapping

    from sidelight.config import Settings
    from sidelight.lines import Line

__all__ = [
    "DEFAULT_EMBEDDER",
    "DEFAULT_SUMMARIZER",
    "ChunkSummary",
    "Reading",
    "Recap",
    "RecapSettings",
    "ScoredChunk",
]

#: The built-in embedder's and chunk summarizer's names.
DEFAULT_EMBEDDER: Final = "hashed-ngrams"
DEFAULT_SUMMARIZER: Final = "extractive"


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


@dataclass(slots=True)
class Reading:
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
