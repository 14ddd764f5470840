"""The records of a transcript collapsed to plain lines (:mod:`sidelight.features.recap.collapse`): a
:class:`Line` per message or tool call, the :class:`Chunk` s of whole turns that the recap ranks and
a chunk-summarizer plugin (``sidelight_chunk_summarizers``) receives, and the :class:`Subagent` a
transcript belongs to (``FormatSpec.subagent``).

Plugins import them from :mod:`sidelight.records`, with the other records; they live in a module of
their own so that a prompt hook, which imports the records on every prompt and never needs these, does
not pay for making them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal, NamedTuple, TypeAlias

__all__ = ["KINDS", "Chunk", "Line", "LineKind", "Subagent"]

#: What a collapsed line records.
LineKind: TypeAlias = Literal["user", "assistant", "observational", "consequential", "meta"]
KINDS: Final[tuple[str, ...]] = ("user", "assistant", "observational", "consequential", "meta")


@dataclass(frozen=True, slots=True)
class Line:
    """One line of the collapsed log."""

    kind: LineKind
    text: str
    timestamp: str | None = None
    #: The tool's name, for tool lines.
    tool: str | None = None
    #: The file a consequential tool changed (as shown: relative to the session's directory when in it).
    path: str | None = None
    #: The tool call failed (an error result, a non-zero exit code, failing tests).
    failed: bool = False
    #: What the tool call did, without its outcome, so that a later try matches it: ``run:git commit``
    #: (:func:`sidelight.features.recap.collapse.command_key`), ``edit:src/app.py``; ``None``: its text
    #: decides.
    action: str | None = None

    def render(self) -> str:
        """The line as the recap shows it."""
        if self.kind == "user":
            return f"User: {self.text}"
        if self.kind == "assistant":
            return f"Assistant: {self.text}"
        return self.text


@dataclass(frozen=True, slots=True)
class Chunk:
    """A run of whole turns of the collapsed log, the unit the recap ranks and summarizes.

    ``index`` counts chunks from 0 in session order; ``turn`` is the number of the first user turn in it
    (1-based; 0 for what came before the first prompt).
    """

    index: int
    lines: tuple[Line, ...]
    turn: int = 0
    first_timestamp: str | None = None
    last_timestamp: str | None = None

    @property
    def consequential(self) -> int:
        """How many consequential tool calls the chunk holds."""
        return sum(1 for line in self.lines if line.kind == "consequential")

    @property
    def files_edited(self) -> tuple[str, ...]:
        """The files the chunk's tools changed, in order of first change."""
        return tuple(dict.fromkeys(line.path for line in self.lines if line.path))

    @property
    def user_texts(self) -> tuple[str, ...]:
        return tuple(line.text for line in self.lines if line.kind == "user")

    def text(self) -> str:
        """The chunk's lines, one per line."""
        return "\n".join(line.render() for line in self.lines)


class Subagent(NamedTuple):
    """The subagent whose own transcript a file is, as its format's ``subagent(path)`` tells it (either
    field may be ``None``: not every agent records them)."""

    #: What kind of subagent it is (``general-purpose``, ``Explore``, a custom agent's name).
    agent_type: str | None = None
    #: The parent's few words for its task.
    description: str | None = None
