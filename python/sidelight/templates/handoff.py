"""Built-in plugin ``handoff``: the session recap's defaults, and the sink that writes the handoff.

Hooks it implements:

- ``sidelight_token_counters``: ``estimate`` (:func:`sidelight.tokens.estimate_tokens`);
- ``sidelight_embedders``: ``hashed-ngrams`` (:func:`sidelight.features.recap.build.hashed_ngram_vectors`);
- ``sidelight_chunk_summarizers``: ``extractive`` (:func:`sidelight.features.recap.build.extractive_summary`);
- ``sidelight_sinks``: ``handoff``, which writes the ``_handoff.md`` of a session's workspace (its cwd
  as the transcript records it) when the watcher says the session ended (``session_end``: the host's
  ``SessionEnd``, or no activity for twice the idle timeout, which is how an interrupted session
  ends): in the state directory, or in the workspace itself for a volute mind or with
  ``handoff_location = "project"`` (:func:`sidelight.features.recap.handoff.handoff_path`).

The delivery to the next session is :mod:`sidelight.features.recap.handoff`.

Importing this module is cheap (it is loaded with every hook): the recap machinery is imported when used.
"""

from __future__ import annotations

from _thread import allocate_lock
from collections import deque

from sidelight._fast._hookimpl import hookimpl
from sidelight._fast.logs import get_logger
from sidelight.features.recap.handoff import SINK_TAIL_BYTES, is_enabled, write_for_session
from sidelight.records import ChunkSummarizerSpec, EmbedderSpec, SinkSpec, TokenCounterSpec
from sidelight.statelayout import HANDOFF_FILE

TYPE_CHECKING = False
if TYPE_CHECKING:
    import threading
    from collections.abc import Iterator, Sequence

    from sidelight.lines import Chunk
    from sidelight.records import Session, SinkEvent

__all__ = [
    "sidelight_chunk_summarizers",
    "sidelight_embedders",
    "sidelight_sinks",
    "sidelight_token_counters",
    "wait_for_handoffs",
]

logger = get_logger(__name__)


def _extractive(chunk: Chunk) -> str:
    from sidelight.features.recap.build import extractive_summary

    return extractive_summary(chunk)


def _hashed(texts: Sequence[str]) -> list[list[float]]:
    from sidelight.features.recap.build import hashed_ngram_vectors

    return hashed_ngram_vectors(texts)


def _estimate(text: str) -> int:
    from sidelight.tokens import estimate_tokens

    return estimate_tokens(text)


@hookimpl
def sidelight_token_counters() -> Iterator[TokenCounterSpec]:
    yield TokenCounterSpec(
        name="estimate",
        count=_estimate,
        description="built-in estimate from word pieces, numbers, punctuation and whitespace",
    )


@hookimpl
def sidelight_embedders() -> Iterator[EmbedderSpec]:
    yield EmbedderSpec(
        name="hashed-ngrams",
        embed=_hashed,
        description="built-in: hashed words and character trigrams, unit length",
    )


@hookimpl
def sidelight_chunk_summarizers() -> Iterator[ChunkSummarizerSpec]:
    yield ChunkSummarizerSpec(
        name="extractive",
        summarize=_extractive,
        description="built-in: the request, what changed, and the assistant's conclusion",
    )


@hookimpl
def sidelight_sinks() -> Iterator[SinkSpec]:
    yield SinkSpec(name="handoff", emit=_on_event, description=f"writes {HANDOFF_FILE} when a session ends")


def _on_event(event: SinkEvent) -> None:
    """On ``session_end``: queues the session's recap for its workspace's ``_handoff.md``, written by a
    thread of its own: a recap reads up to ``SINK_TAIL_BYTES`` of transcript (about a second), and an
    idle sweep can end hundreds of sessions in one pass of the watcher, which must not wait for them.
    A handoff lost when the process stops first is built by the next session's start. Never raises."""
    if event.kind != "session_end" or not is_enabled():
        return
    global _writer
    with _queue_lock:
        if any(queued.key == event.session.key for queued in _queue):
            return
        _queue.append(event.session)
        if _writer is None:
            # The thread ends when the queue is empty: nothing is left running between ends.
            import threading  # (only at a session's end: importing it cost every prompt)

            _writer = threading.Thread(target=_write_queued, name="sidelight-handoff", daemon=True)
            _writer.start()


_queue: deque[Session] = deque()


_queue_lock = allocate_lock()  # threading.Lock, without importing threading on every prompt


_writer: threading.Thread | None = None


def _write_queued() -> None:
    global _writer
    from sidelight.config import Settings
    from sidelight.plugins import get_plugins

    while True:
        with _queue_lock:
            if not _queue:
                _writer = None
                return
            session = _queue.popleft()
        try:
            path = write_for_session(session, Settings.load(), get_plugins(), tail_bytes=SINK_TAIL_BYTES)
            if path is not None:
                logger.info("handoff of %s written to %s", session.name, path)
        except Exception:
            logger.warning("could not write the handoff of %s", session.name, exc_info=True)


def wait_for_handoffs(timeout: float | None = None) -> bool:
    """Waits until the queued handoffs are written (``False``: still writing after ``timeout``)."""
    with _queue_lock:
        writer = _writer
    if writer is not None:
        writer.join(timeout)
        return not writer.is_alive()
    return True
