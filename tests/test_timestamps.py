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
