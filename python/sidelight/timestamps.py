"""The transcripts' timestamps: ISO 8601 text (``2026-01-01T10:00:00.123Z`` or with an offset).

One parser for every module. :func:`epoch_seconds` is on the watcher's hot path (a call per session per
pass): the common shape, UTC with ``Z``, costs a slice and a cached parse of its whole-second part,
which is arithmetic: :mod:`datetime` is imported only for another shape (a prompt hook, which imports
this module on every prompt, would pay some 2 ms for it).
"""

from __future__ import annotations

from functools import lru_cache

TYPE_CHECKING = False
if TYPE_CHECKING:
    from datetime import datetime

__all__ = ["epoch_seconds", "iso_ms", "parse_timestamp"]


def parse_timestamp(text: str | None) -> datetime | None:
    """``text`` as a datetime (aware when it names its zone), ``None`` when absent or unreadable.

    >>> parse_timestamp("2026-01-01T10:00:00.500Z")
    datetime.datetime(2026, 1, 1, 10, 0, 0, 500000, tzinfo=datetime.timezone.utc)
    >>> parse_timestamp("yesterday") is None
    True
    """
    if not text:
        return None
    from datetime import datetime

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


#: Days in each month of a common year.
_MONTH_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


@lru_cache(maxsize=4096)
def _whole_second(text: str) -> float | None:
    """``YYYY-MM-DDTHH:MM:SS`` (19 characters, ``T`` at 10) read as UTC, as ``datetime.fromisoformat``
    reads it: ``None`` for a date or time out of range. Other shapes it accepts in 19 characters (an
    ISO week date, ``HHMMSS`` with a fraction) go to it."""
    if (
        text[4] == "-" == text[7]
        and text[13] == ":" == text[16]
        and (digits := text[:4] + text[5:7] + text[8:10] + text[11:13] + text[14:16] + text[17:19]).isascii()
        and digits.isdigit()
    ):
        year, month, day = int(digits[:4]), int(digits[4:6]), int(digits[6:8])
        hour, minute, second = int(digits[8:10]), int(digits[10:12]), int(digits[12:14])
        leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
        if (
            year < 1
            or not 1 <= month <= 12
            or not 1 <= day <= _MONTH_DAYS[month - 1] + (month == 2 and leap)
            or hour > 23
            or minute > 59
            or second > 59
        ):
            return None
        # Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
        shifted = year - (month <= 2)
        era = shifted // 400
        of_era = shifted - era * 400
        of_year = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
        days = era * 146097 + of_era * 365 + of_era // 4 - of_era // 100 + of_year - 719468
        return float(days * 86400 + hour * 3600 + minute * 60 + second)
    from datetime import UTC, datetime

    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment.replace(tzinfo=UTC).timestamp()


def iso_ms(ms: float) -> str:
    """Epoch milliseconds as ``YYYY-MM-DDTHH:MM:SS.mmmZ`` (without datetime: a prompt does not import it)."""
    import time

    whole = int(ms)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole // 1000)) + f".{whole % 1000:03d}Z"
