"""Declared formats against the built-in decoder and the Python fallback (issue 8, point 5).

Group ``declared-pi``: the real Pi sessions of ``tests/data/pi-mono`` (repeated to the corpus size),
read by the built-in ``pi`` decoder, by Pi described as a :class:`~sidelight.formats.Layout` (the same
counting, compiled by the core), by Pi written as a Python fallback decoder (stdlib ``json`` and
``msgspec`` per line, the core counting its events), and by the reference reader (stdlib ``json`` and
``orjson``). Group ``declared-kiro``: the Kiro example plugin's layout against its own Python
decoder, on its samples repeated with fresh ids. Every peer must agree with the built-in (or the
layout) before it is timed; MB/s and the ratio to the built-in go to ``extra_info``.
"""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
import orjson
import pytest

from sidelight.engine.scanning import scan
from sidelight.formats import Event, register_format
from sidelight.records import FormatSpec
from tests.benchmarks.corpus import CACHE_DIR, MB
from tests.conftest import PI_CORPUS
from tests.support.reference import reference_scan
from tests.test_declared import PI_LAYOUT  # Pi as a layout, proven equal to the built-in decoder

if TYPE_CHECKING:
    from collections.abc import Callable

ROOT = Path(__file__).resolve().parents[2]
KIRO_SRC = ROOT / "examples" / "sidelight-kiro" / "src"


def _pi_events(record: Any) -> list[Event] | None:
    """Pi in plain Python, as a plugin author would write the fallback (docs/activity.md, Pi)."""
    if not isinstance(record, dict):
        raise ValueError("not an object")
    kind = record.get("type")
    events = [Event.entry_type(kind)] if isinstance(kind, str) else []
    if kind == "session":
        for key, which in (("id", "session_id"), ("cwd", "cwd")):
            if isinstance(record.get(key), str):
                events.append(Event.meta(which, record[key]))  # type: ignore[arg-type]
    elif kind == "session_info" and isinstance(record.get("name"), str):
        events.append(Event.meta("title", record["name"]))
    message = record.get("message")
    if kind != "message" or not isinstance(message, dict):
        return events
    stamp = record.get("timestamp") if isinstance(record.get("timestamp"), str) else None
    role, content = message.get("role"), message.get("content")
    blocks = [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
    if role == "user":
        texts = [b["text"] for b in blocks if b.get("type") == "text" and isinstance(b.get("text"), str)]
        text = content if isinstance(content, str) else ("\n".join(texts) if texts else None)
        if text is not None:
            events.append(Event.user(text, stamp))
    elif role == "assistant":
        texts = [b["text"] for b in blocks if b.get("type") == "text" and isinstance(b.get("text"), str)]
        shown = [t for t in texts if t.strip()]
        text = content if isinstance(content, str) else (shown[-1] if shown else None)
        events.append(Event.assistant(text, stamp))
        for b in blocks:
            if b.get("type") in ("toolCall", "tool_use") and isinstance(b.get("name"), str):
                args = b.get("arguments", b.get("input"))
                events.append(
                    Event.tool(
                        b["name"], args if isinstance(args, dict) else None, id=b.get("id"), timestamp=stamp
                    )
                )
    elif role == "bashExecution":
        command = message.get("command")
        events.append(
            Event.tool(
                "bashExecution", primary=command if isinstance(command, str) else None, timestamp=stamp
            )
        )
    return events


def pi_json(line: bytes) -> list[Event] | None:
    return _pi_events(json.loads(line))


_MSGSPEC = msgspec.json.Decoder()


def pi_msgspec(line: bytes) -> list[Event] | None:
    try:
        return _pi_events(_MSGSPEC.decode(line))
    except msgspec.DecodeError as error:
        raise ValueError(str(error)) from None


def _register() -> None:
    from sidelight.formats import DEFAULT_CATEGORIES

    pi = DEFAULT_CATEGORIES["pi"]
    register_format(FormatSpec(name="bench-pi-layout", layout=PI_LAYOUT, categories=pi))
    register_format(FormatSpec(name="bench-pi-python", decode=pi_json, categories=pi))
    register_format(FormatSpec(name="bench-pi-msgspec", decode=pi_msgspec, categories=pi))


def _pi_corpus(size_mb: float) -> Path:
    sources = sorted(PI_CORPUS.glob("*.jsonl"))
    path = CACHE_DIR / f"declared-pi-{size_mb:g}mb.jsonl"
    if not path.exists():
        CACHE_DIR.mkdir(parents=True, exist_ok=True)
        data = b"".join(p.read_bytes() for p in sources)
        tmp = path.with_suffix(".tmp")
        with tmp.open("wb") as out:
            written = 0
            while written < size_mb * MB:
                out.write(data)
                written += len(data)
        tmp.replace(path)
    return path


def _kiro_corpus(size_mb: float) -> Path:
    samples = sorted((KIRO_SRC / "sidelight_kiro" / "samples").glob("*.jsonl"))
    path = CACHE_DIR / f"declared-kiro-{size_mb:g}mb.jsonl"
    if not path.exists():
        CACHE_DIR.mkdir(parents=True, exist_ok=True)
        data = b"".join(p.read_bytes() for p in samples)
        tmp = path.with_suffix(".tmp")
        with tmp.open("wb") as out:
            written, k = 0, 0
            while written < size_mb * MB:
                # Fresh message ids per copy: a reply id seen before would be counted once.
                chunk = data.replace(b'"message_id":"', b'"message_id":"%d-' % k)
                out.write(chunk)
                written += len(chunk)
                k += 1
        tmp.replace(path)
    return path


KEYS = (
    "messages",
    "tools",
    "categories",
    "files_touched",
    "first_user_text",
    "last_assistant_text",
    "last_timestamp",
    "session_id",
    "title",
    "lines",
    "skipped",
)


def _summary(result: Any) -> dict[str, Any]:
    data = result if isinstance(result, dict) else result.as_dict()
    return {key: data[key] for key in KEYS}


PI_PEERS: dict[str, Callable[[Path], Any]] = {
    "built-in": lambda p: scan(p, "pi", threads=1),
    "layout": lambda p: scan(p, "bench-pi-layout", threads=1),
    "python-fallback-json": lambda p: scan(p, "bench-pi-python", threads=1),
    "python-fallback-msgspec": lambda p: scan(p, "bench-pi-msgspec", threads=1),
    "reference-json": lambda p: reference_scan(p, "pi"),
    "reference-orjson": lambda p: reference_scan(p, "pi", loads=orjson.loads),
}

_baseline: dict[str, float] = {}


def _measure(
    benchmark: Any, group: str, peer: str, function: Callable[[Path], Any], path: Path, want: Any
) -> None:
    benchmark.group = group
    size = path.stat().st_size
    benchmark.extra_info.update(peer=peer, bytes=size)
    got = _summary(function(path))
    diffs = {
        k: (got[k], want[k])
        for k in KEYS
        if got[k] != want[k] and not (peer.startswith("reference") and k == "skipped")
    }
    benchmark.extra_info["agreement"] = "ok" if not diffs else str(diffs)[:300]
    assert not diffs, f"{peer} disagrees: {diffs}"
    if benchmark.disabled:
        benchmark(function, path)
        return
    fast = not peer.startswith(("python", "reference"))
    benchmark.pedantic(function, args=(path,), rounds=6 if fast else 2, iterations=1, warmup_rounds=1)
    median = benchmark.stats.stats.median
    benchmark.extra_info["mb_per_s_median"] = round(size / MB / median, 1)
    key = f"{group}:{'built-in' if group == 'declared-pi' else 'layout'}"
    if peer in ("built-in", "layout") and key not in _baseline:
        _baseline[key] = median
    if key in _baseline:
        benchmark.extra_info["time_vs_baseline"] = round(median / _baseline[key], 2)


@pytest.mark.parametrize("peer", list(PI_PEERS))
def test_declared_pi(benchmark: Any, benchmarks_enabled: bool, peer: str) -> None:
    _register()
    path = _pi_corpus(40 if benchmarks_enabled else 3.5)
    want = _summary(scan(path, "pi", threads=1))
    assert want["messages"]["user"] > 0
    _measure(benchmark, "declared-pi", peer, PI_PEERS[peer], path, want)


@pytest.mark.parametrize("peer", ["layout", "python-fallback"])
def test_declared_kiro(
    benchmark: Any, benchmarks_enabled: bool, peer: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(KIRO_SRC))
    import sidelight_kiro  # type: ignore[import-not-found]

    # Registered under names of its own: the registry is process-wide and other tests may register
    # the example as "kiro".
    register_format(replace(sidelight_kiro.FORMAT, name="bench-kiro", decoder=""))
    register_format(
        FormatSpec(
            name="bench-kiro-python",
            decode=sidelight_kiro.decode_line,
            categories=sidelight_kiro.CATEGORIES,
        )
    )
    path = _kiro_corpus(20 if benchmarks_enabled else 2)
    want = _summary(scan(path, "bench-kiro", threads=1))
    assert want["messages"]["assistant"] > 0
    name = "bench-kiro" if peer == "layout" else "bench-kiro-python"
    _measure(benchmark, "declared-kiro", peer, lambda p: scan(p, name, threads=1), path, want)
    sys.modules.pop("sidelight_kiro", None)
