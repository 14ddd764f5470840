"""`sidelight.engine.reads.cursor_entry`: the one builder of a reader's cursor entries (the digest's, the
fleet
publisher's and the watcher's)."""

from __future__ import annotations

from sidelight.engine.reads import cursor_entry
from sidelight.types import CURSOR_FIELDS

MAIN = "/p/main.jsonl"
SUB = "/p/main/subagents/agent-1.jsonl"
OTHER = "/p/main/subagents/agent-2.jsonl"


def cursor(offset: int) -> tuple[int, int, int, int, int, int, int]:
    return (offset, 1, 2, 3, 4, 5, 6)


def fields(offset: int) -> dict[str, int]:
    return dict(zip(CURSOR_FIELDS, cursor(offset), strict=True))


def test_one_transcript_its_cursor_is_the_whole_entry():
    assert cursor_entry(None, MAIN, {MAIN: cursor(10)}) == fields(10)
    assert cursor_entry(fields(5), MAIN, {MAIN: cursor(10)}) == fields(10)
    # The seed's shape, a bare offset, is replaced by the whole cursor.
    assert cursor_entry({"offset": 5}, MAIN, {MAIN: cursor(10)}) == fields(10)


def test_the_one_transcript_fast_path_gives_what_the_general_path_gives():
    # An empty "extra" takes the general path; no "extra" the fast one: the same entry.
    for saved in (None, fields(5), {"offset": 5}):
        fast = cursor_entry(saved, MAIN, {MAIN: cursor(10)})
        general = cursor_entry({**(saved or {}), "extra": {}}, MAIN, {MAIN: cursor(10)})
        assert fast == general == fields(10)


def test_subagent_files_go_under_extra_beside_the_saved_ones():
    saved = {**fields(5), "extra": {OTHER: fields(7)}}
    entry = cursor_entry(saved, MAIN, {MAIN: cursor(10), SUB: cursor(3)})
    assert entry == {**fields(10), "extra": {OTHER: fields(7), SUB: fields(3)}}
    assert saved == {**fields(5), "extra": {OTHER: fields(7)}}  # not changed


def test_a_subagent_file_alone_keeps_the_saved_main_cursor():
    saved = {**fields(5), "extra": {SUB: fields(1)}}
    assert cursor_entry(saved, MAIN, {SUB: cursor(3)}) == {**fields(5), "extra": {SUB: fields(3)}}
    assert cursor_entry(saved, MAIN, {}) == saved


def test_without_a_main_cursor_there_is_no_entry():
    assert cursor_entry(None, MAIN, {SUB: cursor(3)}) is None
    assert cursor_entry(None, MAIN, {}) is None


def test_the_main_cursor_replaces_the_top_level():
    saved = {**fields(5), "stale": True, "extra": {SUB: fields(1)}}
    assert cursor_entry(saved, MAIN, {MAIN: cursor(10)}) == {**fields(10), "extra": {SUB: fields(1)}}
