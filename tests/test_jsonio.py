"""sidelight._fast.jsonio: the same values, text and errors as the json module, without importing it."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sidelight._fast import jsonio

_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner, max_size=5),
    max_leaves=30,
)
_OPTIONS: list[dict[str, Any]] = [
    {},
    {"ensure_ascii": False},
    {"separators": (",", ":")},
    {"ensure_ascii": False, "allow_nan": False, "separators": (",", ":")},
    {"sort_keys": True},
    {"indent": 1, "ensure_ascii": False, "allow_nan": False},
]


@given(_VALUES)
def test_dumps_writes_what_json_writes(value: Any) -> None:
    for options in _OPTIONS:
        assert jsonio.dumps(value, **options) == json.dumps(value, **options)


@given(_VALUES, st.sampled_from(["", " ", "\n", " \t\r\n "]))
def test_loads_reads_what_json_reads(value: Any, space: str) -> None:
    text = space + json.dumps(value, ensure_ascii=False) + space
    assert jsonio.loads(text) == json.loads(text)
    assert jsonio.loads(text.encode("utf-8")) == json.loads(text.encode("utf-8"))


@pytest.mark.parametrize(
    "data",
    [
        "",
        "   ",
        "{",
        '{"a": 1} x',
        '{"a": 1}{"b": 2}',
        "[1, 2,]",
        "\ufeff{}",
        "nul",
        '{"a": "line\nbreak"}',
        b"\xff{}",
    ],
)
def test_bad_documents_raise_what_json_raises(data: str | bytes) -> None:
    with pytest.raises(ValueError) as expected:
        json.loads(data)
    with pytest.raises(ValueError) as got:
        jsonio.loads(data)
    assert type(got.value) is type(expected.value)
    assert str(got.value) == str(expected.value)


@pytest.mark.parametrize(
    "data",
    [
        '"\\ud800"',
        '{"a": [1, 2.5e3, -0.0, true, null]}',
        "\ufeff{}".encode("utf-8-sig"),
        '{"a": 1}'.encode("utf-16"),
    ],
)
def test_what_json_reads_beyond_the_fast_path(data: str | bytes) -> None:
    try:
        expected = json.loads(data)
    except ValueError:
        return
    assert jsonio.loads(data) == expected


def test_constants_and_errors_of_dumps() -> None:
    assert jsonio.loads("[NaN, Infinity, -Infinity]")[1] == math.inf
    assert math.isnan(jsonio.loads("NaN"))
    with pytest.raises(ValueError, match="Out of range float values"):
        jsonio.dumps(math.nan, allow_nan=False)
    with pytest.raises(TypeError, match="Object of type set is not JSON serializable"):
        jsonio.dumps({1, 2})
    assert jsonio.dumps({1, 2}, default=sorted) == "[1, 2]"
    loop: list[Any] = []
    loop.append(loop)
    with pytest.raises(ValueError, match="Circular reference"):
        jsonio.dumps(loop)


def test_it_does_not_import_json() -> None:
    code = (
        "import sys; import sidelight._fast.jsonio as j; j.loads(j.dumps({'a': [1]}))\n"
        "print('json' in sys.modules, 're' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "False"]


def test_a_bad_document_raises_jsons_error_where_json_was_never_imported() -> None:
    code = (
        "import sys, sidelight._fast.jsonio as j\n"
        "for bad in ('{\"a\": [1, 2', '\"\\\\x\"', '[1] 2', ''):\n"
        "    try:\n"
        "        j.loads(bad)\n"
        "    except ValueError as error:\n"
        "        print(type(error).__module__, type(error).__name__, error.pos)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines() == [
        "json.decoder JSONDecodeError 11",
        "json.decoder JSONDecodeError 1",
        "json.decoder JSONDecodeError 4",
        "json.decoder JSONDecodeError 0",
    ]
