"""History for hosts: ``sidelight.history`` beside plain Python readings of the same transcript tail.

One benchmark group per transcript (``history-<name>``): the largest file of the Claude-Code-shaped
``realistic`` corpus (code-heavy tool results), and the real Pi session of the shared corpus. Peers:

- ``sidelight``: :func:`sidelight.history` (20 messages, 8,192 tokens): reads backwards from the end in
  growing steps, builds messages, strips our blocks, redacts, counts tokens and caps; timed rounds
  repeat one call, as a host does per request, so its token counts come from its cache;
- ``sidelight-cold``: the same with the count cache emptied first (a host's first request);
- ``json-tail`` / ``orjson-tail`` / ``msgspec-tail``: read the last 256 KiB (and more, doubling, until
  20 messages are found), decode every line with the library, build the same messages (prompt; text
  and ``[Tool arg]`` lines until the next prompt) and keep the last 20: no redaction, no token count;
- ``msgspec-tail-capped``: ``msgspec-tail`` plus the same token cap (built-in estimate, no cache);
- ``json-whole``: the naive way, the stdlib loop over the whole file.

Before timing, each peer's messages must agree with sidelight's on the roles and the user prompts
(recorded in ``extra_info["agreement"]``, with the median ms); disabled by default (``--benchmark-disable``),
they then run once as smoke tests. No time is asserted.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
import orjson
import pytest

import sidelight
from sidelight import _core
from sidelight.features.history import Message, cap_messages
from sidelight.tokens import estimate_tokens
from tests.benchmarks.peers import core_available
from tests.conftest import PI_CORPUS

if TYPE_CHECKING:
    from collections.abc import Callable

history_module = sys.modules["sidelight.features.history"]  # ``sidelight.history`` is the function

ROUNDS = int(os.environ.get("SIDELIGHT_BENCH_ROUNDS", "3")) * 5
WANT = 20
TAIL = 256 * 1024

_Line = dict[str, Any]


#: Prompts that are not a person's (docs/activity.md): every peer leaves them out, as the core does.
SYNTHETIC = _core.SYNTHETIC_PROMPT_PREFIXES


def _prompt(text: str) -> list[tuple[str, str]]:
    return [] if not text.strip() or text.lstrip().startswith(SYNTHETIC) else [("user", text)]


def _tool_arg(name: str, arguments: Any) -> str:
    if not isinstance(arguments, dict):
        return ""
    for key in ("command", "cmd", "file_path", "pattern", "path", "query", "url", "description"):
        value = arguments.get(key)
        if isinstance(value, str):
            return " ".join(value.split())[:120]
    return ""


def _claude_entries(obj: _Line) -> list[tuple[str, str]]:
    kind = obj.get("type")
    message = obj.get("message")
    if not isinstance(message, dict) or obj.get("isSidechain") or obj.get("isMeta"):
        return []
    content = message.get("content")
    if kind == "user":
        if isinstance(content, str):
            return _prompt(content)
        if isinstance(content, list) and not any(b.get("type") == "tool_result" for b in content):
            return _prompt("\n".join(b.get("text", "") for b in content if b.get("type") == "text"))
        return []
    if kind != "assistant" or not isinstance(content, list):
        return []
    out = []
    for block in content:
        if block.get("type") == "text" and block.get("text", "").strip():
            out.append(("assistant", block["text"]))
        elif block.get("type") == "tool_use":
            name = block.get("name", "tool")
            arg = _tool_arg(name, block.get("input"))
            out.append(("tool", f"[{name} {arg}]" if arg else f"[{name}]"))
    return out


def _pi_entries(obj: _Line) -> list[tuple[str, str]]:
    message = obj.get("message")
    if obj.get("type") != "message" or not isinstance(message, dict):
        return []
    content = message.get("content")
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
    role = message.get("role")
    if role == "bashExecution":
        return [("user", f"[bashExecution {_tool_arg('bash', message)}]")]
    if role == "user":
        return _prompt("\n".join(b.get("text", "") for b in blocks if b.get("type") == "text"))
    if role != "assistant":
        return []
    out = []
    for block in blocks:
        if block.get("type") == "text" and block.get("text", "").strip():
            out.append(("assistant", block["text"]))
        elif block.get("type") == "toolCall":
            name = block.get("name", "tool")
            arg = _tool_arg(name, block.get("arguments"))
            out.append(("tool", f"[{name} {arg}]" if arg else f"[{name}]"))
    return out


def _messages(entries: list[tuple[str, str]]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    parts: list[str] = []
    for role, text in entries:
        if role == "user":
            if parts:
                out.append(("assistant", "\n".join(parts)))
                parts = []
            out.append(("user", text))
        else:
            parts.append(text)
    if parts:
        out.append(("assistant", "\n".join(parts)))
    return out


def _tail_reader(loads: Callable[[bytes], Any]) -> Callable[[Path, str], list[tuple[str, str]]]:
    def read(path: Path, fmt: str) -> list[tuple[str, str]]:
        decode = _pi_entries if fmt == "pi" else _claude_entries
        size = path.stat().st_size
        tail = TAIL
        while True:
            start = max(0, size - tail)
            with path.open("rb") as file:
                file.seek(start)
                data = file.read()
            lines = data.split(b"\n")
            if start > 0:
                lines = lines[1:]  # the first line may be cut
            entries: list[tuple[str, str]] = []
            for line in lines:
                if line.strip():
                    try:
                        obj = loads(line)
                    except ValueError:
                        continue
                    if isinstance(obj, dict):
                        entries.extend(decode(obj))
            messages = _messages(entries)
            if start == 0 or len(messages) > WANT:
                return messages[-WANT:]
            tail *= 2

    return read


_msgspec_decoder = msgspec.json.Decoder()


def _json_whole(path: Path, fmt: str) -> list[tuple[str, str]]:
    decode = _pi_entries if fmt == "pi" else _claude_entries
    entries: list[tuple[str, str]] = []
    with path.open("rb") as file:
        for line in file:
            if line.strip():
                try:
                    obj = json.loads(line)
                except ValueError:
                    continue
                if isinstance(obj, dict):
                    entries.extend(decode(obj))
    return _messages(entries)[-WANT:]


def _sidelight(path: Path, fmt: str) -> list[tuple[str, str]]:
    return [(m.role, m.content) for m in sidelight.history(path, WANT, 8192)]


def _sidelight_cold(path: Path, fmt: str) -> list[tuple[str, str]]:
    history_module._counts.clear()  # every message counted and cleaned afresh: a host's first request
    history_module._clean_cached.cache_clear()
    return _sidelight(path, fmt)


def _msgspec_capped(path: Path, fmt: str) -> list[tuple[str, str]]:
    """The msgspec tail, then the same token cap as sidelight's (the built-in estimate, no cache)."""
    messages = _tail_reader(_msgspec_decoder.decode)(path, fmt)
    kept = cap_messages([Message(role, text) for role, text in messages], WANT, 8192, estimate_tokens)  # type: ignore[arg-type]
    return [(m.role, m.content) for m in kept]


PEERS: dict[str, Callable[[Path, str], list[tuple[str, str]]]] = {
    "sidelight": _sidelight,
    "sidelight-cold": _sidelight_cold,
    "json-tail": _tail_reader(json.loads),
    "orjson-tail": _tail_reader(orjson.loads),
    "msgspec-tail": _tail_reader(_msgspec_decoder.decode),
    "msgspec-tail-capped": _msgspec_capped,
    "json-whole": _json_whole,
}


def _skeleton(messages: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """What every peer must agree on: the roles, and each prompt's first 40 characters (a command the
    person ran without its result's line, ``[bashExecution ls → …]``: the peers do not read results)."""
    return [
        (role, " ".join(_without_result(text).split())[:40] if role == "user" else "")
        for role, text in messages
    ]


def _without_result(text: str) -> str:
    if text.startswith("[") and text.endswith("]") and " → " in text:
        return text[: text.index(" → ")] + "]"
    return text


@pytest.fixture(scope="module")
def transcripts(corpora: Callable[[str], list[Path]]) -> dict[str, tuple[Path, str]]:
    found: dict[str, tuple[Path, str]] = {}
    realistic = corpora("realistic")
    found["claude-code"] = (max(realistic, key=lambda p: p.stat().st_size), "claude-code")
    pi = PI_CORPUS / "before-compaction.jsonl"
    if pi.is_file():
        found["pi"] = (pi, "pi")
    return found


@pytest.mark.parametrize("peer", list(PEERS))
@pytest.mark.parametrize("name", ["claude-code", "pi"])
def test_history(
    benchmark: Any,
    transcripts: dict[str, tuple[Path, str]],
    home: Path,
    name: str,
    peer: str,
) -> None:
    if reason := core_available():
        pytest.skip(reason)
    if name not in transcripts:
        pytest.skip("the shared Pi corpus is not here")
    path, fmt = transcripts[name]
    benchmark.group = f"history-{name}"
    benchmark.extra_info.update(peer=peer, bytes=path.stat().st_size)
    function = PEERS[peer]
    want = _skeleton(_sidelight(path, fmt))
    got = function(path, fmt)
    agreement = "ok" if _skeleton(got) == want else {"want": want[:4], "got": _skeleton(got)[:4]}
    benchmark.extra_info["agreement"] = agreement
    assert len(want) == WANT
    assert agreement == "ok"
    if benchmark.disabled:
        benchmark(function, path, fmt)
        return
    benchmark.pedantic(function, args=(path, fmt), rounds=ROUNDS, iterations=1, warmup_rounds=1)
    benchmark.extra_info["ms_median"] = round(benchmark.stats.stats.median * 1000, 2)
