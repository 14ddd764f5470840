"""The former name of :mod:`sidelight.records`, kept so that plugins written against it still import.

New code imports :mod:`sidelight.records`.
"""

from sidelight.records import (
    KINDS,
    Chunk,
    ChunkSummarizerSpec,
    EmbedderSpec,
    EventName,
    FormatSpec,
    HostEvent,
    InjectorSpec,
    Line,
    LineKind,
    ResolverSpec,
    Session,
    SessionActivity,
    SinkEvent,
    SinkSpec,
    SummarizerSpec,
    TokenCounterSpec,
)

__all__ = [
    "KINDS",
    "Chunk",
    "ChunkSummarizerSpec",
    "EmbedderSpec",
    "EventName",
    "FormatSpec",
    "HostEvent",
    "InjectorSpec",
    "Line",
    "LineKind",
    "ResolverSpec",
    "Session",
    "SessionActivity",
    "SinkEvent",
    "SinkSpec",
    "SummarizerSpec",
    "TokenCounterSpec",
]
