"""Session recap: a ranked, token-budgeted handoff of a finished (or interrupted) session.

The pipeline, all deterministic (byte-identical output for the same input) and without an LLM:

1. **Collapse** the transcript into plain lines (:mod:`sidelight.features.recap.collapse`), streamed line
by line.
2. **Chunk** the lines by whole turns up to :attr:`RecapSettings.chunk_chars` characters (a longer
   turn is split), and **summarize** each chunk as it completes (the built-in ``extractive``
   summarizer, or a ``sidelight_chunk_summarizers`` plugin). Only the summaries are kept, and past
   :attr:`RecapSettings.max_chunks` the oldest ones are merged pairwise, so memory stays bounded
   whatever the transcript's size (:mod:`sidelight.features.recap.chunks`).
3. **Score** each chunk (:mod:`sidelight.features.recap.rank`): ``novelty x centrality x recency x
action_weight``:

   - novelty: ``1 - max cosine`` to the long-term memories (floored at ``novelty_floor``), with
     vectors from the chosen embedder (built-in ``hashed-ngrams``: hashed words and character
     trigrams, no dependency);
   - centrality: TextRank (PageRank over the chunks' cosine-similarity graph), scaled to mean 1;
   - recency: ``2 ** (-(1 - position) / recency_half_life)``, position being where the chunk ends
     in the session (0 start, 1 end);
   - action_weight: ``1 + alpha * consequential_tool_count``.

4. **Build** the recap from the best chunks, shown in session order, within a token budget (counted
   with the chosen counter, :mod:`sidelight.tokens`): a header that says where it comes from, the
   last request and the files edited last, the chunks, and what was left unfinished (the text:
   :mod:`sidelight.features.recap.render`; the best that fit: :func:`sidelight.features.recap.rank.assemble`).

This module runs the pipeline (:func:`build_recap`); the records it passes along are in
:mod:`sidelight.features.recap.model`, and its public names are importable from here.

Settings come from ``[recap]`` in the config file and ``SIDELIGHT_RECAP_*`` environment variables
(see :meth:`RecapSettings.load`).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Final

from sidelight.engine.reads import decoder_for
from sidelight.features.recap.chunks import extractive_summary, read_chunks
from sidelight.features.recap.collapse import TranscriptLog
from sidelight.features.recap.model import (
    DEFAULT_EMBEDDER,
    DEFAULT_SUMMARIZER,
    ChunkSummary,
    Recap,
    RecapSettings,
    ScoredChunk,
)
from sidelight.features.recap.rank import (
    assemble,
    centrality,
    cosine,
    hashed_ngram_vectors,
    novelty,
    recency,
    score_chunks,
)
from sidelight.features.recap.render import closing_lines, header_lines, unfinished_items
from sidelight.formats import categories_for
from sidelight.redact import sanitize

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from pathlib import Path

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

#: How many files the header names.
FILES_SHOWN: Final = 6


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
    reading = read_chunks(log, plugins, recap)
    scored = score_chunks(reading.summaries, reading.lines, memories, plugins, recap)

    name = session.name if session is not None else None
    files = tuple(reversed(reading.files))[:FILES_SHOWN]
    subagent = None
    if log.subagent is not None:
        # The meta file is text from the transcript's folder: redacted as every line shown is.
        told = {k: sanitize(v, 300) if v else None for k, v in log.subagent._asdict().items()}
        subagent = {**told, "task": reading.first_request}
    unfinished = unfinished_items(log, reading, state)
    header = header_lines(log, reading, name, files, state)
    text, selected = assemble(header, scored, closing_lines(unfinished), budget, count)
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
