"""The one timestamp parser: its fast path for ``...Z`` agrees with ``datetime`` on every input."""

from __future__ import annotations

import doctest
from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from sidelight import timestamps
from sidelight.timestamps import epoch_seconds, parse_timestamp


def reference(text: str) -> float | None:
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment.timestamp() if moment.tzinfo is not None else None


@given(
    st.datetimes(min_value=datetime(1971, 1, 1), max_value=datetime(2200, 1, 1)),
    st.sampled_from(["", ".1", ".12", ".123", ".123456", ".5"]),
    st.sampled_from(["Z", "+00:00", "-05:30", ""]),
)
def test_fast_path_agrees_with_datetime(moment, fraction, zone):
    text = moment.strftime("%Y-%m-%dT%H:%M:%S") + fraction + zone
    expected = reference(text)
    got = epoch_seconds(text)
    assert (got is None) == (expected is None)
    if expected is not None:
        assert got is not None and abs(got - expected) < 1e-6


@given(st.text(max_size=40))
def test_any_text_is_a_time_or_none_never_an_error(text):
    got = epoch_seconds(text)
    expected = reference(text) if text else None
    assert (got is None) == (expected is None)


def test_parse_timestamp_keeps_the_zone_it_was_given():
    offset, utc, naive = (
        parse_timestamp(text)
        for text in ("2026-01-01T10:00:00+02:00", "2026-01-01T10:00:00Z", "2026-01-01T10:00:00")
    )
    assert offset is not None and offset.utcoffset() == timedelta(hours=2)
    assert utc is not None and utc.tzinfo == UTC
    assert naive is not None and naive.tzinfo is None
    assert parse_timestamp(None) is None and parse_timestamp("") is None


def test_doc_examples():
    assert doctest.testmod(timestamps).failed == 0


def whole_second_reference(text: str) -> float | None:
    try:
        return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()
    except ValueError:
        return None


@given(
    st.integers(0, 10_000),
    st.integers(0, 13),
    st.integers(0, 32),
    st.integers(0, 25),
    st.integers(0, 61),
    st.integers(0, 61),
)
def test_the_whole_second_arithmetic_agrees_with_datetime(year, month, day, hour, minute, second):
    # (datetime is imported only for shapes the arithmetic leaves to it)
    text = f"{year:04d}-{month:02d}-{day:02d}T{hour:02d}:{minute:02d}:{second:02d}"[:19]
    assert timestamps._whole_second.__wrapped__(text) == whole_second_reference(text)


def test_the_whole_second_arithmetic_on_the_edges():
    cases = [
        "0001-01-01T00:00:00",
        "0000-01-01T00:00:00",
        "9999-12-31T23:59:59",
        "1970-01-01T00:00:00",
        "1969-12-31T23:59:59",
        "2000-02-29T12:00:00",
        "1900-02-29T12:00:00",
        "2024-02-29T00:00:00",
        "2026-02-29T00:00:00",
        "2026-04-31T00:00:00",
        "2026-01-01T24:00:00",
        "2026-01-01T10:60:00",
        "2026-01-01T10:00:60",
        "2026-W01-1T10:00:00",  # an ISO week date: datetime reads it
        "2026/01/01T10:00:00",
        "2026-01-01T10-00-00",
        "２０２６-01-01T10:00:00",
        "+026-01-01T10:00:00",
        " 2026-01-1T10:00:00",
        "2026-01-01T1 :00:00",
    ]
    for text in cases:
        assert len(text) == 19 and text[10] == "T"  # what epoch_seconds hands it
        assert timestamps._whole_second.__wrapped__(text) == whole_second_reference(text), text
