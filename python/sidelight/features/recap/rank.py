"""Ranking the chunks and fitting the best into the budget: each chunk's score is
``novelty x centrality x recency x action_weight`` (:func:`score_chunks`, vectors from the chosen
embedder, the built-in one :func:`hashed_ngram_vectors`), and :func:`assemble` keeps the best-scored
chunks whose lines fit the token budget with the header and the unfinished items."""

from __future__ import annotations

import math
import re
import zlib
from typing import TYPE_CHECKING, Final

from sidelight._fast.logs import get_logger
from sidelight.features.recap.model import DEFAULT_EMBEDDER, RecapSettings, ScoredChunk
from sidelight.features.recap.render import SOME_SHOWN, chunk_line, render_text, shrink

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from sidelight.features.recap.model import ChunkSummary
    from sidelight.plugins import Plugins

__all__ = [
    "assemble",
    "centrality",
    "cosine",
    "hashed_ngram_vectors",
    "novelty",
    "recency",
    "score_chunks",
]

logger = get_logger(__name__)

#: Dimensions of the built-in hashed vectors.
HASH_DIMENSIONS: Final = 1024

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


def assemble(
    header: list[str],
    scored: Sequence[ScoredChunk],
    closing: list[str],
    budget: int,
    count: Callable[[str], int],
) -> tuple[str, tuple[int, ...]]:
    """The best chunks that fit in the budget with the header and the closing section
    (:func:`~sidelight.features.recap.render.closing_lines`), shown in session order. Ties are broken
    by position (the later chunk first), so the result is stable."""
    ranked = sorted(range(len(scored)), key=lambda i: (-round(scored[i].score, 12), -i))
    base = render_text(header, [], closing)
    if count(base) > budget:
        return shrink(header, closing, budget, count), ()
    used = count(base) + count(f"\n{SOME_SHOWN}\n")
    chosen: list[int] = []
    for i in ranked:
        cost = count(chunk_line(scored[i].chunk) + "\n")
        if used + cost <= budget:
            chosen.append(i)
            used += cost
    while True:
        order = sorted(chosen)
        lines = [chunk_line(scored[i].chunk) for i in order]
        text = render_text(header, lines, closing, all_shown=len(chosen) == len(scored))
        if count(text) <= budget or not chosen:
            break
        chosen.pop()  # counts are not additive for every counter: drop the weakest until it fits
    if count(text) > budget:
        return shrink(header, closing, budget, count), ()
    return text, tuple(scored[i].chunk.index for i in sorted(chosen))
