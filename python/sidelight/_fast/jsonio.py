"""sidelight's JSON codec: the standard library's own C scanner and encoder (``_json``), reached
without importing :mod:`json`.

The prompt hook reads and writes JSON on every prompt (the host's payload, the cursor file, its answer),
and importing :mod:`json` costs it more than the reading: ``json.decoder`` compiles regular expressions
when it is imported, which imports :mod:`re` (and :mod:`enum` with it), some 4 ms of a 11 ms bare
interpreter start here. :func:`loads` and :func:`dumps` call the same C functions ``json.loads`` and
``json.dumps`` call, so they give the same values and the same bytes; whatever the fast path does not
handle (text that is not UTF-8, a document with an error, ``indent``) is handed to :mod:`json` itself,
which raises its own :class:`json.JSONDecodeError` (a :class:`ValueError`) or does the rest.
"""

from __future__ import annotations

import _json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any

__all__ = ["dumps", "loads", "strings"]

#: What JSON allows between tokens (``json.decoder.WHITESPACE``).
_WHITESPACE = " \t\n\r"


def _parse_constant(name: str) -> float:
    return {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}[name]


class _Context:
    """The settings ``_json.make_scanner`` reads from a decoder: ``json.JSONDecoder()``'s defaults."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = staticmethod(_parse_constant)


# typeshed types the context as a scanner: it is anything with a decoder's attributes.
_scan: Callable[[str, int], tuple[Any, int]] = _json.make_scanner(_Context())  # type: ignore[arg-type]


def loads(data: str | bytes | bytearray) -> Any:
    """``json.loads(data)``: the same value, or the same error."""
    if isinstance(data, str):
        text = data
    else:
        head = bytes(data[:4])
        if head.startswith(b"\xef\xbb\xbf") or b"\x00" in head:
            return _json_module().loads(data)  # a BOM or UTF-16/32: json tells them apart
        text = data.decode("utf-8", "surrogatepass")
    start = len(text) - len(text.lstrip(_WHITESPACE))
    try:
        value, end = _scan(text, start)
    except (StopIteration, ValueError, SystemError):
        # json's own error, which it raises: the C scanner reports a syntax error with the error class of
        # json.decoder, and says SystemError when that module was never imported (as here, on purpose).
        return _json_module().loads(text)
    if end != len(text) and text[end:].strip(_WHITESPACE):
        return _json_module().loads(text)  # extra data: raises json's own error
    return value


def _type_error(value: object) -> object:
    """``json.JSONEncoder.default``: what cannot be encoded is a ``TypeError``."""
    raise TypeError(f"Object of type {value.__class__.__name__} is not JSON serializable")


def dumps(
    value: Any,
    *,
    ensure_ascii: bool = True,
    allow_nan: bool = True,
    sort_keys: bool = False,
    separators: tuple[str, str] | None = None,
    indent: int | None = None,
    default: Callable[[Any], Any] | None = None,
) -> str:
    """``json.dumps(value, ...)`` with these arguments: the same text, or the same error."""
    if indent is not None:
        # The C encoder writes no indentation; json's Python encoder does (files people read).
        text: str = _json_module().dumps(
            value,
            ensure_ascii=ensure_ascii,
            allow_nan=allow_nan,
            sort_keys=sort_keys,
            separators=separators,
            indent=indent,
            default=default,
        )
        return text
    encode_string = _json.encode_basestring_ascii if ensure_ascii else _json.encode_basestring
    if isinstance(value, str):
        encoded: str = encode_string(value)
        return encoded
    item_separator, key_separator = separators if separators is not None else (", ", ": ")
    encode = _json.make_encoder(
        {},  # markers: circular references are an error, as json.dumps' check_circular
        default or _type_error,
        encode_string,
        None,
        key_separator,
        item_separator,
        sort_keys,
        False,  # skipkeys
        allow_nan,
    )
    return "".join(encode(value, 0))


def _json_module() -> Any:
    import json

    return json


#: How deep :func:`strings` goes into nested arrays and objects.
STRINGS_DEPTH = 20


def strings(value: Any, depth: int = 0) -> Iterator[str]:
    """Every string of a decoded JSON value (an object's values, an array's items), in document order,
    down to :data:`STRINGS_DEPTH` levels: where a host may have put a hook's text in a transcript line."""
    if isinstance(value, str):
        yield value
    elif depth < STRINGS_DEPTH and isinstance(value, dict):
        for item in value.values():
            yield from strings(item, depth + 1)
    elif depth < STRINGS_DEPTH and isinstance(value, list):
        for item in value:
            yield from strings(item, depth + 1)
