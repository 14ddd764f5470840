"""The transcripts' timestamps: ISO 8601 text (``2026-01-01T10:00:00.123Z`` or with an offset).

One parser for every module. :func:`epoch_seconds` is on the watcher's hot path (a call per session per
pass): the common shape, UTC with ``Z``, costs a slice and a cached parse of its whole-second part.
"""

from __future__ import annotations

from datetime import UTC, datetime
from functools import lru_cache

__all__ = ["epoch_seconds", "parse_timestamp"]


def parse_timestamp(text: str | None) -> datetime | None:
    """``text`` as a datetime (aware when it names its zone), ``None`` when absent or unreadable.

    >>> parse_timestamp("2026-01-01T10:00:00.500Z")
    datetime.datetime(2026, 1, 1, 10, 0, 0, 500000, tzinfo=datetime.timezone.utc)
    >>> parse_timestamp("yesterday") is None
    True
    """
    if not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def epoch_seconds(text: str | None) -> float | None:
    """``text`` as epoch seconds; ``None`` when absent, unreadable or without a time zone.

    >>> epoch_seconds("2026-01-01T10:00:00.250Z")
    1767261600.25
    >>> epoch_seconds("2026-01-01T12:00:00+02:00")
    1767261600.0
    >>> epoch_seconds("2026-01-01T10:00:00") is None
    True
    """
    if not text:
        return None
    # The common shape: YYYY-MM-DDTHH:MM:SS, optional fraction, Z.
    if len(text) >= 20 and text[-1] == "Z" and text[10] == "T" and (len(text) == 20 or text[19] == "."):
        whole = _whole_second(text[:19])
        if whole is not None:
            fraction = text[19:-1]
            if not fraction:
                return whole
            digits = fraction[1:]
            if digits.isdigit() and digits.isascii():
                return whole + float("0." + digits)
    moment = parse_timestamp(text)
    if moment is None or moment.tzinfo is None:
        return None
    return moment.timestamp()


@lru_cache(maxsize=4096)
def _whole_second(text: str) -> float | None:
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment.replace(tzinfo=UTC).timestamp()
