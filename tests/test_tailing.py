"""Fault tests of the tailing contract (docs/activity.md, "Lines" and "Cursor and resets").

Every file here is made of Claude-Code-shaped lines holding one user prompt each, so "lines counted"
and "prompts counted" are the same number and every assertion is an exact count.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import sidelight

FORMAT = "claude-code"
MiB = 1024 * 1024


def prompt_line(i: int, text: str | None = None, *, pad: int = 0) -> bytes:
    """One user prompt as a compact JSON line; ``message`` comes last so the text sits near the end."""
    obj = {
        "type": "user",
        "uuid": f"u{i:05d}",
        "timestamp": "2026-11-21T10:00:00.000Z",
        "sessionId": "s-tailing",
        "cwd": "/work/repo",
        "message": {"role": "user", "content": (text if text is not None else f"prompt {i}") + "x" * pad},
    }
    return (json.dumps(obj, separators=(",", ":"), ensure_ascii=False) + "\n").encode()


def line_of_len(i: int, size: int) -> bytes:
    """A prompt line of exactly ``size`` bytes, newline included."""
    base = prompt_line(i)
    assert len(base) <= size, (len(base), size)
    line = prompt_line(i, pad=size - len(base))
    assert len(line) == size
    return line


def assistant_line(msg_id: str, block: dict[str, Any]) -> bytes:
    obj = {
        "type": "assistant",
        "uuid": f"a-{msg_id}-{block.get('type')}",
        "timestamp": "2026-11-21T10:00:01.000Z",
        "message": {"id": msg_id, "role": "assistant", "model": "claude-sonnet-4-5", "content": [block]},
    }
    return (json.dumps(obj, separators=(",", ":")) + "\n").encode()


def scan(path: Path, cursor: Any = None, **kwargs: Any) -> Any:
    return sidelight.scan(str(path), FORMAT, cursor, **kwargs)


def users(act: Any) -> int:
    return int(act.messages.user)


def skipped(act: Any) -> dict[str, int]:
    return dict(act.skipped.as_dict())


NO_SKIPS = {"malformed_json": 0, "invalid_utf8": 0, "too_long": 0}


def append(path: Path, data: bytes) -> None:
    with path.open("ab") as f:
        f.write(data)


# --- partial lines ------------------------------------------------------------------------------


def test_half_line_then_rest_counts_once(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    whole = b"".join(prompt_line(i) for i in range(3))
    fourth = prompt_line(3, "the fourth prompt, é and 😀 inside")
    half = len(fourth) // 2
    path.write_bytes(whole + fourth[:half])

    a1 = scan(path)
    assert a1.reset is None
    assert (users(a1), a1.lines, a1.offset, a1.pending_bytes) == (3, 3, len(whole), half)

    # Still half: nothing new, the pending bytes are reported again.
    a2 = scan(path, a1.cursor)
    assert (users(a2), a2.lines, a2.offset, a2.pending_bytes, a2.reset) == (0, 0, len(whole), half, None)

    append(path, fourth[half:])
    a3 = scan(path, a2.cursor)
    assert a3.reset is None
    assert (users(a3), a3.lines, a3.offset, a3.pending_bytes) == (1, 1, len(whole) + len(fourth), 0)
    assert skipped(a3) == NO_SKIPS

    a4 = scan(path, a3.cursor)
    assert (users(a4), a4.lines, a4.pending_bytes, a4.reset) == (0, 0, 0, None)


def test_half_multibyte_character_is_pending_not_invalid(tmp_path: Path) -> None:
    """A write cut inside a UTF-8 sequence leaves the half character pending; it is not invalid_utf8."""
    path = tmp_path / "s.jsonl"
    line = prompt_line(0, "snowman ☃ end")
    cut = line.index("☃".encode()) + 1  # one byte into the three-byte character
    path.write_bytes(line[:cut])
    a1 = scan(path)
    assert (users(a1), a1.lines, a1.pending_bytes) == (0, 0, cut)
    append(path, line[cut:])
    a2 = scan(path, a1.cursor)
    assert (users(a2), a2.lines, a2.pending_bytes, a2.reset) == (1, 1, 0, None)
    assert skipped(a2) == NO_SKIPS


def _layout(ends_on_boundary: bool) -> bytes:
    sizes = [1000, 1000, 1000, 1096 if ends_on_boundary else 1200, 500]
    data = b"".join(line_of_len(i, n) for i, n in enumerate(sizes))
    assert (data[4095:4096] == b"\n") is ends_on_boundary
    return data


@pytest.mark.parametrize("ends_on_boundary", [True, False], ids=["newline-at-4096", "line-across-4096"])
@pytest.mark.parametrize("cut", [4095, 4096, 4097])
def test_cut_at_4kib_boundary(tmp_path: Path, ends_on_boundary: bool, cut: int) -> None:
    path = tmp_path / "s.jsonl"
    data = _layout(ends_on_boundary)
    path.write_bytes(data[:cut])
    first = data[:cut].count(b"\n")
    last_nl = data[:cut].rfind(b"\n") + 1

    a1 = scan(path)
    assert (users(a1), a1.lines, a1.offset, a1.pending_bytes, a1.reset) == (
        first,
        first,
        last_nl,
        cut - last_nl,
        None,
    )

    append(path, data[cut:])
    a2 = scan(path, a1.cursor)
    assert a2.reset is None
    assert (users(a2), a2.lines, a2.offset, a2.pending_bytes) == (5 - first, 5 - first, len(data), 0)
    assert skipped(a2) == NO_SKIPS


# --- resets -------------------------------------------------------------------------------------


def test_truncate_to_zero_reports_truncated(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"".join(prompt_line(i) for i in range(5)))
    a1 = scan(path)
    assert users(a1) == 5

    path.write_bytes(b"")
    a2 = scan(path, a1.cursor)
    assert a2.reset == "truncated"
    assert (users(a2), a2.lines, a2.offset, a2.pending_bytes) == (0, 0, 0, 0)

    new = b"".join(prompt_line(100 + i) for i in range(2))
    append(path, new)
    a3 = scan(path, a2.cursor)
    assert a3.reset is None
    assert (users(a3), a3.offset) == (2, len(new))


def test_truncate_and_shorter_content_rereads_from_zero(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"".join(prompt_line(i) for i in range(5)))
    a1 = scan(path)
    assert users(a1) == 5

    new = b"".join(prompt_line(100 + i, f"new {i}") for i in range(2))
    path.write_bytes(new)  # O_TRUNC, same inode, shorter than the cursor
    a2 = scan(path, a1.cursor)
    assert a2.reset == "truncated"
    assert (users(a2), a2.lines, a2.offset, a2.pending_bytes) == (2, 2, len(new), 0)
    assert a2.as_dict()["first_user_text"] == "new 0"


def test_truncate_to_a_line_boundary_inside_the_read_range(tmp_path: Path) -> None:
    """Cut back to 2 of 5 lines: still "truncated", and the 2 kept lines are read again from 0."""
    path = tmp_path / "s.jsonl"
    lines = [prompt_line(i) for i in range(5)]
    path.write_bytes(b"".join(lines))
    a1 = scan(path)
    with path.open("r+b") as f:
        f.truncate(len(lines[0]) + len(lines[1]))
    a2 = scan(path, a1.cursor)
    assert a2.reset == "truncated"
    assert (users(a2), a2.offset) == (2, len(lines[0]) + len(lines[1]))


def test_replace_by_rename_reports_replaced(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    old = b"".join(prompt_line(i) for i in range(5))
    path.write_bytes(old)
    a1 = scan(path)
    assert users(a1) == 5

    # The new file starts with the very same bytes and is longer: only the inode tells them apart.
    new_path = tmp_path / "s.jsonl.new"
    new = old + b"".join(prompt_line(10 + i) for i in range(2))
    new_path.write_bytes(new)
    new_path.replace(path)
    a2 = scan(path, a1.cursor)
    assert a2.reset == "replaced"
    assert (users(a2), a2.lines, a2.offset, a2.pending_bytes) == (7, 7, len(new), 0)

    a3 = scan(path, a2.cursor)
    assert (users(a3), a3.reset) == (0, None)


def test_rotation_keeps_old_file_and_reads_new_one(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"".join(prompt_line(i) for i in range(3)))
    a1 = scan(path)
    path.rename(tmp_path / "s.jsonl.1")
    # Longer than the old file: were it shorter, "truncated" would be an equally true reason.
    path.write_bytes(b"".join(prompt_line(50 + i) for i in range(4)))
    a2 = scan(path, a1.cursor)
    assert a2.reset == "replaced"
    assert users(a2) == 4


def test_rewrite_same_size_different_first_bytes(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    old = b"".join(prompt_line(i) for i in range(5))
    path.write_bytes(old)
    a1 = scan(path)
    assert users(a1) == 5

    new = old.replace(b'"uuid":"u00000"', b'"uuid":"v00000"', 1)
    assert new != old and len(new) == len(old)
    with path.open("r+b") as f:  # in place: same inode, same size
        f.write(new)
    a2 = scan(path, a1.cursor)
    assert a2.reset == "rewritten"
    assert (users(a2), a2.lines, a2.offset, a2.pending_bytes) == (5, 5, len(new), 0)


def test_rewrite_only_bytes_just_before_cursor(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    lines = [prompt_line(i) for i in range(100)]
    old = b"".join(lines)
    assert len(old) > 4096 + 64  # the change below is outside the 4 KiB head
    path.write_bytes(old)
    a1 = scan(path)
    assert users(a1) == 100

    # "prompt 99" -> "prompt 98", a few bytes before the cursor, same size, same head.
    pos = old.rindex(b"prompt 99")
    assert len(old) - pos < 64
    with path.open("r+b") as f:
        f.seek(pos + len(b"prompt 9"))
        f.write(b"8")
    append(path, prompt_line(100))
    a2 = scan(path, a1.cursor)
    assert a2.reset == "rewritten"
    assert (users(a2), a2.lines, a2.offset) == (101, 101, len(old) + len(prompt_line(100)))


def test_deleted_and_recreated_with_more_bytes_resets(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"".join(prompt_line(i) for i in range(3)))
    a1 = scan(path)
    path.unlink()
    new = b"".join(prompt_line(200 + i, f"again {i}") for i in range(4))
    path.write_bytes(new)
    a2 = scan(path, a1.cursor)
    # The filesystem may reuse the inode number; then the changed head gives "rewritten".
    assert a2.reset in ("replaced", "rewritten")
    assert (users(a2), a2.offset) == (4, len(new))


# --- bad lines ----------------------------------------------------------------------------------


def test_invalid_utf8_line_is_skipped_and_neighbours_counted(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    bad1 = b'{"type":"user","message":{"role":"user","content":"bad \xff\xfe byte"}}\n'
    bad2 = b'{"type":"user","message":{"role":"user","content":"cut \xe2\x82 euro"}}\n'
    path.write_bytes(prompt_line(0) + bad1 + prompt_line(1) + bad2 + prompt_line(2))
    a = scan(path)
    assert (users(a), a.lines) == (3, 5)
    assert skipped(a) == {"malformed_json": 0, "invalid_utf8": 2, "too_long": 0}


def test_malformed_json_lines_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    bad = [
        b'{"type":"user","message":{"role":"user","content":"cut\n',  # cut object
        b"[1, 2, 3]\n",  # not an object
        b'"a string"\n',
        b"not json at all\n",
        prompt_line(9)[:-1] + b" trailing\n",  # trailing garbage
    ]
    blank = [b"\n", b"   \t \n"]  # empty / whitespace-only lines are not counted at all
    crlf = prompt_line(3)[:-1] + b"\r\n"  # \r is JSON whitespace: a valid line
    path.write_bytes(prompt_line(0) + b"".join(bad) + blank[0] + prompt_line(1) + blank[1] + crlf)
    a = scan(path)
    assert (users(a), a.lines) == (3, 3 + len(bad))
    assert skipped(a) == {"malformed_json": len(bad), "invalid_utf8": 0, "too_long": 0}
    assert a.pending_bytes == 0


def test_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"")
    a1 = scan(path)
    assert (users(a1), a1.lines, a1.offset, a1.pending_bytes, a1.reset) == (0, 0, 0, 0, None)
    assert skipped(a1) == NO_SKIPS
    a2 = scan(path, a1.cursor)
    assert (users(a2), a2.lines, a2.offset, a2.pending_bytes, a2.reset) == (0, 0, 0, 0, None)
    append(path, prompt_line(0))
    a3 = scan(path, a2.cursor)
    assert (users(a3), a3.reset) == (1, None)


def test_file_without_any_newline(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    line = prompt_line(0)
    path.write_bytes(line[:-1])
    a1 = scan(path)
    assert (users(a1), a1.lines, a1.offset, a1.pending_bytes, a1.reset) == (0, 0, 0, len(line) - 1, None)
    append(path, b"\n")
    a2 = scan(path, a1.cursor)
    assert (users(a2), a2.lines, a2.offset, a2.pending_bytes, a2.reset) == (1, 1, len(line), 0, None)


def test_only_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\n\n  \n")
    a = scan(path)
    assert (users(a), a.lines, a.offset, a.pending_bytes) == (0, 0, 5, 0)
    assert skipped(a) == NO_SKIPS


def test_assistant_message_straddling_two_scans_counts_once(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(prompt_line(0) + assistant_line("msg_1", {"type": "thinking", "thinking": "hm"}))
    a1 = scan(path)
    assert a1.messages.as_dict() == {"user": 1, "assistant": 1}
    append(path, assistant_line("msg_1", {"type": "text", "text": "Running it."}))
    append(
        path,
        assistant_line(
            "msg_1", {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}
        ),
    )
    a2 = scan(path, a1.cursor)
    assert a2.messages.as_dict() == {"user": 0, "assistant": 0}
    assert a2.as_dict()["tools"] == {"Bash": 1}
    append(path, assistant_line("msg_2", {"type": "text", "text": "Done."}))
    a3 = scan(path, a2.cursor)
    assert a3.messages.as_dict() == {"user": 0, "assistant": 1}


# --- long lines ---------------------------------------------------------------------------------

BIG = 100 * MiB


@pytest.fixture(scope="module")
def big_line_file(tmp_path_factory: pytest.TempPathFactory):
    """prompt, a 100 MB prompt line, prompt, prompt — written in chunks, deleted afterwards."""
    path = tmp_path_factory.mktemp("big") / "big.jsonl"
    head = b'{"type":"user","uuid":"big","message":{"role":"user","content":"'
    tail = b'"}}\n'
    with path.open("wb") as f:
        f.write(prompt_line(0))
        f.write(head)
        chunk = b"a" * MiB
        body = BIG - len(head) - len(tail)
        while body > 0:
            f.write(chunk[: min(body, MiB)])
            body -= MiB
        f.write(tail)
        f.write(prompt_line(1))
        f.write(prompt_line(2))
    yield path
    path.unlink()


_RSS_SCRIPT = textwrap.dedent(
    """
    import json, resource, sys
    import sidelight
    path, limit = sys.argv[1], int(sys.argv[2])
    # Warm up the import and the allocator on a tiny file before taking the baseline.
    sidelight.scan(sys.argv[3], "claude-code", None, max_line_bytes=limit)
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    act = sidelight.scan(path, "claude-code", None, max_line_bytes=limit)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"base_kib": base, "peak_kib": peak, "user": act.messages.user,
                      "lines": act.lines, "skipped": act.skipped.as_dict(), "offset": act.offset}))
    """
)


@pytest.mark.slow
def test_100mb_line_over_limit_is_streamed_past_in_little_memory(
    big_line_file: Path, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    small = tmp_path / "small.jsonl"
    small.write_bytes(prompt_line(0))
    out = subprocess.run(
        [sys.executable, "-c", _RSS_SCRIPT, str(big_line_file), str(1 * MiB), str(small)],
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    )
    result = json.loads(out.stdout)
    grown_mib = (result["peak_kib"] - result["base_kib"]) / 1024
    request.node.user_properties.append(("rss_growth_mib", round(grown_mib, 1)))
    assert result["user"] == 3
    assert result["lines"] == 4
    assert result["skipped"] == {"malformed_json": 0, "invalid_utf8": 0, "too_long": 1}
    assert result["offset"] == big_line_file.stat().st_size
    assert grown_mib < 60, f"peak RSS grew by {grown_mib:.1f} MiB scanning past a 100 MB line"


@pytest.mark.slow
def test_100mb_line_under_a_larger_limit_is_counted(big_line_file: Path) -> None:
    a = sidelight.scan(str(big_line_file), FORMAT, None, max_line_bytes=256 * MiB, text_limit=40)
    assert (users(a), a.lines) == (4, 4)
    assert skipped(a) == NO_SKIPS
    first = a.as_dict()["first_user_text"]
    assert first == "prompt 0"


def test_too_long_line_still_being_written_stays_pending(tmp_path: Path) -> None:
    """A long line without its newline yet is pending, not too_long; once complete it is skipped once."""
    path = tmp_path / "s.jsonl"
    long_line = prompt_line(1, "y" * (3 * MiB))
    path.write_bytes(prompt_line(0) + long_line[: 2 * MiB])
    a1 = scan(path, max_line_bytes=MiB)
    assert (users(a1), a1.lines, a1.pending_bytes) == (1, 1, 2 * MiB)
    assert skipped(a1) == NO_SKIPS
    append(path, long_line[2 * MiB :] + prompt_line(2))
    a2 = scan(path, a1.cursor, max_line_bytes=MiB)
    assert (users(a2), a2.lines, a2.pending_bytes, a2.reset) == (1, 2, 0, None)
    assert skipped(a2) == {"malformed_json": 0, "invalid_utf8": 0, "too_long": 1}
    a3 = scan(path, a2.cursor, max_line_bytes=MiB)
    assert (users(a3), a3.lines, skipped(a3)) == (0, 0, NO_SKIPS)


# --- a concurrent writer ------------------------------------------------------------------------

N_LINES = 3000
MIN_ROUNDS = 200


def _stream(seed: int) -> bytes:
    rng = random.Random(seed)
    texts = ["plain", "é accents ü", "emoji 😀 and ☃", 'quote \\" and \\n escapes', "中文 text"]
    return b"".join(prompt_line(i, f"{rng.choice(texts)} #{i}") for i in range(N_LINES))


def _write_in_chunks(path: Path, data: bytes, seed: int) -> None:
    rng = random.Random(seed)
    pos = 0
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    try:
        while pos < len(data):
            n = rng.randint(1, 400)  # splits lines and UTF-8 sequences anywhere
            os.write(fd, data[pos : pos + n])
            pos += n
            if rng.random() < 0.01:
                os.fsync(fd)
            time.sleep(rng.choice((0, 0, 0.0002, 0.001)))
    finally:
        os.close(fd)


_WRITER_SCRIPT = textwrap.dedent(
    """
    import os, random, sys, time
    src, dst, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
    data = open(src, "rb").read()
    rng = random.Random(seed)
    pos = 0
    fd = os.open(dst, os.O_WRONLY | os.O_APPEND)
    while pos < len(data):
        n = rng.randint(1, 400)
        os.write(fd, data[pos:pos + n])
        pos += n
        time.sleep(rng.choice((0, 0, 0.0002, 0.001)))
    os.close(fd)
    """
)


@pytest.mark.parametrize("writer", ["thread", "process"])
def test_concurrent_writer_every_line_counted_once(
    tmp_path: Path, writer: str, request: pytest.FixtureRequest
) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"")
    data = _stream(seed=7)
    done = threading.Event()

    if writer == "thread":

        def run() -> None:
            try:
                _write_in_chunks(path, data, seed=11)
            finally:
                done.set()

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        proc = None
    else:
        src = tmp_path / "src.bin"
        src.write_bytes(data)
        proc = subprocess.Popen([sys.executable, "-c", _WRITER_SCRIPT, str(src), str(path), "11"])

    def writer_done() -> bool:
        if proc is not None:
            return proc.poll() is not None
        return done.is_set()

    cursor = None
    total_users = total_lines = rounds = rounds_while_writing = rounds_with_pending = 0
    resets: list[str] = []
    skips = dict(NO_SKIPS)
    deadline = time.monotonic() + 60
    while True:
        finished = writer_done()  # read before the scan, so the last scan sees everything
        act = scan(path, cursor)
        cursor = act.cursor
        rounds += 1
        rounds_while_writing += not finished
        total_users += users(act)
        total_lines += act.lines
        rounds_with_pending += act.pending_bytes > 0
        if act.reset is not None:
            resets.append(act.reset)
        for k, v in skipped(act).items():
            skips[k] += v
        if finished:
            break
        assert time.monotonic() < deadline, "writer did not finish in 60 s"

    if proc is not None:
        assert proc.wait(timeout=10) == 0
    else:
        thread.join(timeout=10)
    request.node.user_properties.append(("rounds_while_writing", rounds_while_writing))
    request.node.user_properties.append(("rounds_with_pending", rounds_with_pending))
    assert resets == []
    assert skips == NO_SKIPS
    assert (total_users, total_lines) == (N_LINES, N_LINES)
    assert act.offset == len(data) and act.pending_bytes == 0
    assert rounds_while_writing >= MIN_ROUNDS, f"only {rounds_while_writing} scans ran during the writes"
    assert rounds_with_pending > 0, "no scan saw a half-written line; the test did not test much"


# --- counted once per id, whatever the split ----------------------------------------------------


def _bash_use(msg_id: str, tool_id: str) -> bytes:
    block = {"type": "tool_use", "id": tool_id, "name": "Bash", "input": {"command": f"echo {tool_id}"}}
    return assistant_line(msg_id, block)


def _padding(i: int, size: int) -> bytes:
    """A large tool-result line: no prompt, no response, no tool use."""
    obj = {
        "type": "user",
        "timestamp": "2026-11-21T10:00:02.000Z",
        "message": {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": f"p{i}", "content": ""}],
        },
    }
    line = json.dumps(obj, separators=(",", ":"))
    return (line.replace('"content":""', '"content":"' + "r" * size) + "\n").encode()


def _reference_counts(path: Path) -> tuple[int, dict[str, int]] | None:
    try:
        from tests.support.reference import reference_scan
    except ImportError:
        return None
    ref = reference_scan(path, FORMAT)
    return ref["messages"]["assistant"], ref["tools"]


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_replay_across_parallel_parts_counts_once(tmp_path: Path, threads: int) -> None:
    """A response replayed far into the second half of a large range (scanned in parallel parts)."""
    path = tmp_path / "s.jsonl"
    with path.open("wb") as f:
        for i in range(10):
            f.write(_bash_use(f"msg_a{i}", f"tu_a{i}"))
        for i in range(20):  # ~10 MiB, so the range is split (MIN_PARALLEL_BYTES is 8 MiB)
            f.write(_padding(i, MiB // 2))
        for i in range(30):  # more new ids than a part compares with the part before it
            f.write(_bash_use(f"msg_b{i}", f"tu_b{i}"))
        f.write(_bash_use("msg_a5", "tu_a5"))  # the replay
        f.write(assistant_line("msg_c", {"type": "text", "text": "Done."}))
    a = scan(path, threads=threads)
    assert a.messages.assistant == 41
    assert a.as_dict()["tools"] == {"Bash": 40}
    assert a.as_dict()["categories"]["command"] == 40
    assert _reference_counts(path) in (None, (41, {"Bash": 40}))


def test_replay_after_many_messages_counts_once(tmp_path: Path) -> None:
    """docs/activity.md: "ids already seen in this scan are not counted again" (not just recent ones)."""
    path = tmp_path / "s.jsonl"
    with path.open("wb") as f:
        for i in range(1100):
            f.write(_bash_use(f"msg_{i}", f"tu_{i}"))
        f.write(_bash_use("msg_0", "tu_0"))  # replayed after 1,100 other responses
    a = scan(path, threads=1)
    assert a.messages.assistant == 1100
    assert a.as_dict()["tools"] == {"Bash": 1100}
    assert _reference_counts(path) in (None, (1100, {"Bash": 1100}))


def test_pi_migration_rewrites_in_place(tmp_path: Path, pi_corpus: Path) -> None:
    """Pi migrates a v1 session to v3 by rewriting the file in place (docs/agent-formats.md §4): a real
    v1 file, scanned, then migrated the way Pi does it (header version, id/parentId on every entry)."""
    path = tmp_path / "session.jsonl"
    original = (pi_corpus / "large-session.jsonl").read_bytes()
    path.write_bytes(original)
    a1 = sidelight.scan(str(path), "pi")
    assert a1.reset is None and a1.pending_bytes == 0

    migrated = []
    parent = None
    for n, raw in enumerate(original.splitlines()):
        entry = json.loads(raw)
        if entry["type"] == "session":
            entry["version"] = 3
        else:
            entry = {"type": entry.pop("type"), "id": f"{n:08x}", "parentId": parent, **entry}
            parent = entry["id"]
        migrated.append(json.dumps(entry, separators=(",", ":"), ensure_ascii=False) + "\n")
    new = "".join(migrated).encode()
    assert len(new) > len(original)
    fd = os.open(path, os.O_WRONLY)  # writeFileSync: same inode
    try:
        os.write(fd, new)
        os.ftruncate(fd, len(new))
    finally:
        os.close(fd)
    a2 = sidelight.scan(str(path), "pi", a1.cursor)
    assert a2.reset == "rewritten"
    assert a2.messages == a1.messages
    assert a2.as_dict()["tools"] == a1.as_dict()["tools"]
    assert a2.offset == len(new)
