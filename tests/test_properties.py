"""Property tests of the cursor invariant (docs/activity.md, "Lines" and "Cursor and resets").

A model keeps the bytes of the current file *generation* (what is on disk), the bytes the scanner has
consumed up to its cursor, and the generation changes (truncate, rotate, delete + re-create, rewrite in
place) since the last scan. The invariant: every complete line is counted exactly once per
generation; a change of the bytes before the cursor, or of the inode, is reported as a reset, and the
scan that reports it counts the new generation from byte 0; a scan with no reset counts exactly the
complete lines after the cursor (prompts, skipped lines, blank lines each where they belong).
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import event, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

import sidelight

FORMAT = "claude-code"

# Texts with multibyte UTF-8, JSON escapes (quotes, backslashes, control characters) and surrogate
# pairs (json.dumps escapes astral characters as \\ud83d\\ude00 when ensure_ascii is on).
TEXT = st.text(
    alphabet=st.one_of(
        st.sampled_from(list('ab é☃😀中"\\\n\t/')),
        st.characters(min_codepoint=0, max_codepoint=0x2FFFF, exclude_categories=["Cs"]),
    ),
    max_size=40,
)


def encode_line(gen: int, serial: int, text: str, ascii_only: bool) -> bytes:
    # The generation and serial come first in the text: every generation has a different first line,
    # so a rewrite always changes the first bytes the cursor hashed.
    obj = {
        "type": "user",
        "uuid": f"g{gen}-{serial}",
        "message": {"role": "user", "content": f"g{gen}-{serial} {text}"},
    }
    return (json.dumps(obj, separators=(",", ":"), ensure_ascii=ascii_only) + "\n").encode()


def classify(data: bytes) -> dict[str, Any]:
    """What a scan of these complete lines must count (docs/activity.md, "Lines")."""
    skipped = {"malformed_json": 0, "invalid_utf8": 0, "too_long": 0}
    prompts = lines = 0
    for line in data.split(b"\n")[:-1]:
        if not line.strip(b" \t\r"):
            continue
        lines += 1
        try:
            line.decode()
        except UnicodeDecodeError:
            skipped["invalid_utf8"] += 1
            continue
        if line.startswith(b'{"type":"user","cut '):
            skipped["malformed_json"] += 1
        else:
            prompts += 1
    return {"prompts": prompts, "lines": lines, "skipped": skipped}


class CursorMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.dir = Path(tempfile.mkdtemp(prefix="sidelight-prop-"))
        self.path = self.dir / "session.jsonl"
        self.path.write_bytes(b"")
        self.gen = 0
        self.serial = itertools.count()
        self.rotations = itertools.count()
        self.content = b""  # the bytes of the current generation, as on disk
        self.queue = b""  # bytes of lines not yet (fully) written
        self.consumed = b""  # the bytes the scanner has read, up to its cursor
        self.cursor: Any = None
        self.cursor_offset = 0
        self.changes: set[str] = set()  # generation changes since the last scan

    def teardown(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)

    # --- the file ---------------------------------------------------------------------------

    def _lines(self, texts: list[str], ascii_only: bool) -> bytes:
        return b"".join(encode_line(self.gen, next(self.serial), t, ascii_only) for t in texts)

    def _write(self, data: bytes) -> None:
        with self.path.open("ab") as f:
            f.write(data)
        self.content += data

    def _new_generation(self, change: str) -> None:
        self.gen += 1
        self.queue = b""  # a half-written line of the old generation is lost with it
        self.content = b""
        self.changes.add(change)

    @rule(texts=st.lists(TEXT, min_size=1, max_size=4), ascii_only=st.booleans(), keep=st.integers(0, 60))
    def append(self, texts: list[str], ascii_only: bool, keep: int) -> None:
        """Queue whole lines and write all but the last ``keep`` queued bytes (maybe mid-line)."""
        self.queue += self._lines(texts, ascii_only)
        cut = max(0, len(self.queue) - keep)
        data, self.queue = self.queue[:cut], self.queue[cut:]
        self._write(data)

    @rule(kind=st.sampled_from(["malformed", "invalid_utf8", "blank"]))
    def append_bad_line(self, kind: str) -> None:
        """Queue a line that counts nowhere (blank) or only in ``skipped``. Bad lines carry the
        generation too, so two generations never start with the same bytes."""
        tag = f"g{self.gen}-{next(self.serial)}".encode()
        self.queue += {
            "malformed": b'{"type":"user","cut ' + tag + b"\n",
            "invalid_utf8": b'{"type":"user","bad":"\xff\xfe ' + tag + b'"}\n',
            "blank": b" \t \n",
        }[kind]

    @rule(n=st.integers(1, 80))
    def write_more(self, n: int) -> None:
        """Write the next ``n`` queued bytes (nothing when the queue is empty)."""
        data, self.queue = self.queue[:n], self.queue[n:]
        self._write(data)

    @rule(texts=st.lists(TEXT, max_size=3))
    def truncate(self, texts: list[str]) -> None:
        """Truncate in place (same inode), then maybe append lines of the new generation."""
        with self.path.open("r+b") as f:
            f.truncate(0)
        self._new_generation("truncated")
        self._write(self._lines(texts, True))

    @rule(texts=st.lists(TEXT, max_size=3))
    def rotate(self, texts: list[str]) -> None:
        """Rename the file away (it stays, so its inode is not reused) and start a new one."""
        self.path.rename(self.dir / f"session.jsonl.{next(self.rotations)}")
        self.path.write_bytes(b"")
        self._new_generation("replaced")
        self._write(self._lines(texts, True))

    @rule(texts=st.lists(TEXT, max_size=3))
    def delete_and_recreate(self, texts: list[str]) -> None:
        self.path.unlink()
        self.path.write_bytes(b"")
        # The inode number may be reused: then the scanner sees "truncated" or "rewritten".
        self._new_generation("recreated")
        self._write(self._lines(texts, True))

    @rule(texts=st.lists(TEXT, min_size=1, max_size=5), pad=st.booleans())
    def rewrite_in_place(self, texts: list[str], pad: bool) -> None:
        """Rewrite from byte 0 without truncating first (Pi's migration), keeping the inode."""
        old_size = len(self.content)
        self._new_generation("rewritten")
        new = self._lines(texts, True)
        if pad and len(new) < old_size:
            # At least as long as before, so only the changed bytes can tell: pad with blank lines,
            # which count nowhere.
            new += b"\n" * (old_size - len(new))
        fd = os.open(self.path, os.O_WRONLY)
        try:
            os.write(fd, new)
            os.ftruncate(fd, len(new))
        finally:
            os.close(fd)
        self.content = new

    # --- the scanner ------------------------------------------------------------------------

    @rule()
    def scan(self) -> None:
        act = sidelight.scan(str(self.path), FORMAT, self.cursor)
        complete_end = self.content.rfind(b"\n") + 1
        # A change is detectable when the bytes before the cursor differ, or the inode does. (A new
        # generation made of the same bytes, blank lines say, on a reused inode cannot be told.)
        changed = not self.content.startswith(self.consumed) or "replaced" in self.changes
        must_reset = self.cursor_offset > 0 and changed
        if act.reset is None:
            assert not must_reset, f"no reset reported after {sorted(self.changes)}"
            start = self.cursor_offset
        else:
            assert self.changes, f"spurious reset {act.reset!r}"
            allowed = set(self.changes)
            if "recreated" in allowed:
                allowed |= {"replaced", "truncated", "rewritten"}
            if "truncated" in allowed:
                # Truncated and grown past the old cursor before the scan: the changed head shows it.
                allowed.add("rewritten")
            if allowed & {"rewritten", "replaced"}:
                # The new content is shorter than the cursor: "truncated" is true as well, and
                # docs/activity.md does not rank the reasons.
                allowed.add("truncated")
            assert act.reset in allowed, (act.reset, sorted(self.changes))
            start = 0
        expected = classify(self.content[start:complete_end])
        event(f"reset: {act.reset}")
        if act.pending_bytes:
            event("scan with a half-written line")
        assert act.messages.user == expected["prompts"]
        assert act.lines == expected["lines"]
        assert act.skipped.as_dict() == expected["skipped"]
        assert act.start_offset == start
        assert act.offset == complete_end
        assert act.pending_bytes == len(self.content) - complete_end
        self.consumed = self.content[:complete_end]
        self.cursor = act.cursor
        self.cursor_offset = act.offset
        self.changes = set()

    @invariant()
    def file_matches_model(self) -> None:
        assert self.path.read_bytes() == self.content


CursorMachine.TestCase.settings = settings(
    max_examples=100, stateful_step_count=40, deadline=None, database=None
)
TestCursorInvariant = CursorMachine.TestCase


@settings(max_examples=80, deadline=None, database=None)
@given(
    texts=st.lists(TEXT, min_size=1, max_size=30),
    cuts=st.lists(st.integers(0, 10_000), max_size=12),
    ascii_only=st.booleans(),
)
def test_any_split_of_a_stream_counts_each_line_once(
    texts: list[str], cuts: list[int], ascii_only: bool
) -> None:
    """Write one stream in pieces cut at arbitrary bytes, scanning after each piece."""
    data = b"".join(encode_line(0, i, t, ascii_only) for i, t in enumerate(texts))
    points = sorted({c % (len(data) + 1) for c in cuts} | {len(data)})
    with tempfile.TemporaryDirectory(prefix="sidelight-prop-") as tmp:
        path = Path(tmp) / "s.jsonl"
        path.write_bytes(b"")
        cursor, total, start = None, 0, 0
        for point in points:
            with path.open("ab") as f:
                f.write(data[start:point])
            start = point
            act = sidelight.scan(str(path), FORMAT, cursor)
            assert act.reset is None
            total += act.messages.user
            assert act.offset == data[:point].rfind(b"\n") + 1
            cursor = act.cursor
        assert total == len(texts)
