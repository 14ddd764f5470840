"""The peers that do the same counting over the same Claude Code files, for the throughput benchmarks.

Each peer takes a list of paths and returns one result dict per path (the keys of a scan result), except
``newline``, the physical limit: read the files in 1 MiB blocks and count ``\\n``.

- ``reference-json``: ``tests.support.reference.reference_scan`` with the stdlib ``json``;
- ``reference-orjson``: the same with ``orjson.loads``;
- ``msgspec``: a typed ``msgspec.json.Decoder`` per line that decodes only the fields the counting needs
  (everything else is skipped inside msgspec), plus the same Python counting logic;
- ``sidelight``: ``sidelight.scan`` (fresh cursor, default threads), one call per file;
- ``sidelight-many``: ``sidelight.scan_many``, one call for all the files (only where there are many).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import msgspec

from tests.support.reference import (
    CLAUDE_TITLE_FIELDS,
    DEFAULT_MAX_LINE_BYTES,
    LINE_WHITESPACE,
    PRIMARY_KEYS,
    Activity,
    claude_code_line,
    default_categories,
    json_loads,
    normalize,
    primary_arg,
    reference_scan,
)

if TYPE_CHECKING:
    from pathlib import Path

FORMAT = "claude-code"
BLOCK = 1024 * 1024

#: The keys every peer must agree on before it is timed.
AGREE_KEYS = (
    "messages",
    "tools",
    "categories",
    "files_touched",
    "first_user_text",
    "last_assistant_text",
    "first_timestamp",
    "last_timestamp",
    "lines",
    "bytes_consumed",
    "skipped",
)

Results = list[dict[str, Any]]
Peer = Callable[[list["Path"]], Any]


# -- the reference reader ----------------------------------------------------------------------------


def reference_json(paths: list[Path]) -> Results:
    return [reference_scan(path, FORMAT, loads=json_loads) for path in paths]


def reference_orjson(paths: list[Path]) -> Results:
    import orjson

    return [reference_scan(path, FORMAT, loads=orjson.loads) for path in paths]


# -- msgspec, typed ------------------------------------------------------------------------------------


class Input(msgspec.Struct):
    """The keys of a tool input that can be its primary argument; the rest (file contents…) is skipped."""

    file_path: Any = None
    notebook_path: Any = None
    command: Any = None
    cmd: Any = None
    pattern: Any = None
    query: Any = None
    url: Any = None
    path: Any = None


class Block(msgspec.Struct):
    type: Any = None
    text: Any = None
    id: Any = None
    name: Any = None
    input: Input | None = None


class Message(msgspec.Struct):
    id: Any = None
    model: Any = None
    content: str | list[Block] | None = None


class Line(msgspec.Struct):
    type: Any = None
    timestamp: Any = None
    sessionId: Any = None
    cwd: Any = None
    isMeta: Any = None
    isSidechain: Any = None
    isCompactSummary: Any = None
    message: Message | None = None
    customTitle: Any = None
    aiTitle: Any = None
    summary: Any = None


_LINE = msgspec.json.Decoder(Line)
_ANY = msgspec.json.Decoder()


def _typed_line(acc: Activity, line: Line) -> None:
    """``tests.support.reference.claude_code_line`` on a typed line."""
    kind = line.type if isinstance(line.type, str) else None
    acc.entry_types[kind if kind is not None else "<none>"] += 1
    acc.timestamp = line.timestamp if isinstance(line.timestamp, str) else None
    acc.set_first("session_id", line.sessionId)
    acc.set_first("cwd", line.cwd)
    if kind in CLAUDE_TITLE_FIELDS:
        field, rank = CLAUDE_TITLE_FIELDS[kind]
        acc.set_title(getattr(line, field), rank)
    elif kind == "user":
        if line.isMeta is True or line.isCompactSummary is True or line.isSidechain is True:
            return
        message = line.message
        if message is None:
            return
        content = message.content
        if isinstance(content, str):
            acc.prompt(content)
        elif content is not None:
            if any(block.type == "tool_result" for block in content):
                return
            acc.prompt("\n".join(b.text for b in content if b.type == "text" and isinstance(b.text, str)))
    elif kind == "assistant":
        message = line.message
        if message is None or message.model == "<synthetic>":
            return
        acc.assistant_line(message.id)
        if not isinstance(message.content, list):
            return
        for block in message.content:
            if block.type == "text":
                acc.assistant_text(block.text)
            elif block.type == "tool_use":
                tool_input = block.input
                args = None if tool_input is None else {k: getattr(tool_input, k) for k in PRIMARY_KEYS}
                acc.tool_use(block.name, primary_arg(args), tool_id=block.id)


def msgspec_scan_one(path: Path, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> dict[str, Any]:
    acc = Activity(default_categories(FORMAT), 500)
    decode = _LINE.decode
    with path.open("rb") as file:
        for raw in file:
            if not raw.endswith(b"\n"):
                break
            acc.bytes_consumed += len(raw)
            if not raw.strip(LINE_WHITESPACE):
                continue
            acc.lines += 1
            data = raw[:-1]
            if len(data) > max_line_bytes:
                acc.skipped["too_long"] += 1
                continue
            if not data.isascii():
                try:
                    data.decode()  # msgspec does not check the UTF-8 of the fields it skips
                except UnicodeDecodeError:
                    acc.skipped["invalid_utf8"] += 1
                    continue
            try:
                _typed_line(acc, decode(data))
                continue
            except msgspec.ValidationError:
                pass  # valid JSON of another shape (a non-object, a field of an odd type): decode it all
            except msgspec.DecodeError:
                acc.skipped["malformed_json"] += 1
                continue
            obj = _ANY.decode(data)
            if not isinstance(obj, dict):
                acc.skipped["malformed_json"] += 1
                continue
            kind = obj.get("type") if isinstance(obj.get("type"), str) else None
            acc.entry_types[kind if kind is not None else "<none>"] += 1
            timestamp = obj.get("timestamp")
            acc.timestamp = timestamp if isinstance(timestamp, str) else None
            claude_code_line(acc, obj, kind)
    return acc.as_dict()


def msgspec_typed(paths: list[Path]) -> Results:
    return [msgspec_scan_one(path) for path in paths]


# -- sidelight -----------------------------------------------------------------------------------------


def sidelight_scan(paths: list[Path]) -> Results:
    import sidelight

    return [normalize(sidelight.scan(path, format=FORMAT).as_dict()) for path in paths]


def sidelight_scan_many(paths: list[Path]) -> Results:
    import sidelight

    results = []
    for outcome in sidelight.scan_many(paths, format=FORMAT):
        if isinstance(outcome, sidelight.ScanFailure):
            raise outcome.error
        results.append(normalize(outcome.as_dict()))
    return results


# -- the physical limit ----------------------------------------------------------------------------------


def newline_count(paths: list[Path]) -> int:
    """The physical limit: read every byte into one reused buffer and count newlines (no new objects
    per block, so it measures the copy from the page cache and the count, nothing else)."""
    count = 0
    buffer = bytearray(BLOCK)
    view = memoryview(buffer)
    for path in paths:
        with path.open("rb", buffering=0) as file:
            while n := file.readinto(view):
                count += buffer.count(b"\n", 0, n)
    return count


def read_only(paths: list[Path]) -> int:
    """Only the copy from the page cache into one reused buffer: the floor under every peer."""
    total = 0
    view = memoryview(bytearray(BLOCK))
    for path in paths:
        with path.open("rb", buffering=0) as file:
            while n := file.readinto(view):
                total += n
    return total


def wc_lines(paths: list[Path]) -> int:
    """Read and count newlines natively (coreutils ``wc -l``, one process for all files): Python's
    ``bytes.count`` is slower than the copy itself, so this is the honest read + count limit."""
    out = subprocess.run(["wc", "-l", *map(str, paths)], check=True, capture_output=True, text=True).stdout
    return int(out.strip().splitlines()[-1].split()[0])


def core_available() -> str | None:
    """``None`` when ``sidelight.scan`` can run here, else why not."""
    try:
        import sidelight._core
        import sidelight.engine.scanning  # noqa: F401
    except ImportError as exc:
        return f"the native core is not built ({exc}); run `make build-dev`"
    return None


PEERS: dict[str, Peer] = {
    "reference-json": reference_json,
    "reference-orjson": reference_orjson,
    "msgspec": msgspec_typed,
    "sidelight": sidelight_scan,
    "sidelight-many": sidelight_scan_many,
    "newline": newline_count,
    "read-only": read_only,
    "wc-l": wc_lines,
}

#: Peers that measure how fast bytes can be had at all, not a decoder: no agreement to check.
PHYSICAL_LIMITS = ("newline", "read-only", "wc-l")


def disagreements(got: Results, want: Results, keys: tuple[str, ...] = AGREE_KEYS) -> dict[str, str]:
    """``{key: "file N: got … want …"}`` for the first file where each key differs."""
    if len(got) != len(want):
        return {"files": f"{len(got)} results, want {len(want)}"}
    found: dict[str, str] = {}
    for index, (a, b) in enumerate(zip(got, want, strict=True)):
        for key in keys:
            if key not in found and a.get(key) != b.get(key):
                found[key] = f"file {index}: got {_short(a.get(key))} want {_short(b.get(key))}"
    return found


def _short(value: Any, limit: int = 300) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[:limit] + "…"
