"""The Python facade: format detection, categories, cursors, batches, errors, recent entries."""

from __future__ import annotations

import json
import os
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest

import sidelight
from sidelight import (
    Activity,
    Category,
    Cursor,
    Entry,
    Format,
    InvalidCursorError,
    ScanFailure,
    SidelightError,
    UnknownFormatError,
)
from tests.conftest import EXPECTED, PI, SAMPLES, jsonl

FORMATS = sorted(SAMPLES)


def counts(activity: Activity) -> dict[str, Any]:
    """The fields of EXPECTED, from an activity."""
    data = activity.as_dict()
    return {key: data[key] for key in EXPECTED["pi"]}


@pytest.mark.parametrize("fmt", FORMATS)
def test_detects_each_format(write_sample, fmt):
    path = write_sample(fmt)
    assert sidelight.detect_format(path) is Format(fmt)
    assert sidelight.scan(path).format is Format(fmt)


@pytest.mark.parametrize("fmt", FORMATS)
def test_scan_counts_sample(write_sample, fmt):
    path = write_sample(fmt)
    activity = sidelight.scan(path)
    assert counts(activity) == EXPECTED[fmt]
    size = path.stat().st_size
    assert (activity.start_offset, activity.offset, activity.file_size) == (0, size, size)
    assert activity.bytes_consumed == size
    assert activity.pending_bytes == 0
    assert activity.reset is None
    assert activity.lines == len(SAMPLES[fmt])
    assert activity.skipped.total == 0
    assert activity.path == str(path)


@pytest.mark.parametrize("fmt", FORMATS)
def test_explicit_format_equals_auto(write_sample, fmt):
    path = write_sample(fmt)
    assert sidelight.scan(path, fmt).as_dict() == sidelight.scan(path, Format(fmt)).as_dict()
    assert sidelight.scan(str(path), "auto").as_dict() == sidelight.scan(path).as_dict()


def test_tool_uses_are_typed(write_sample):
    activity = sidelight.scan(write_sample("claude-code"))
    assert [(t.name, t.category, t.primary_arg) for t in activity.tool_uses] == [
        ("Read", Category.READ, "/tmp/proj/test_x.py"),
        ("Edit", Category.EDIT, "/tmp/proj/x.py"),
        ("Bash", Category.COMMAND, "pytest -q"),
    ]
    assert all(t.timestamp and t.timestamp.startswith("2026-01-01T10:00:0") for t in activity.tool_uses)


def test_categories_extend_the_defaults(write_sample):
    path = write_sample("claude-code")
    # keys in any ASCII case; bash moves to "other", read stays from the defaults
    activity = sidelight.scan(path, categories={"BASH": "other", "Edit": "read"})
    assert activity.categories.as_dict() == {"edit": 0, "read": 2, "command": 0, "other": 1}
    assert activity.files_touched == ()  # only edit tools touch files
    assert sidelight.DEFAULT_CATEGORIES["claude-code"]["bash"] == "command"  # defaults untouched


def test_default_categories_cover_each_format():
    assert set(sidelight.DEFAULT_CATEGORIES) == {f.value for f in Format}
    for table in sidelight.DEFAULT_CATEGORIES.values():
        assert all(name == name.lower() for name in table)
        assert set(table.values()) <= {"edit", "read", "command"}
    assert sidelight.DEFAULT_CATEGORIES["pi"]["bashexecution"] == "command"
    assert sidelight.DEFAULT_CATEGORIES["codex"]["apply_patch"] == "edit"


def test_bad_category_is_a_value_error(write_sample):
    with pytest.raises(ValueError, match="category must be one of"):
        sidelight.scan(write_sample("pi"), categories={"bash": "run"})


def test_cursor_reads_only_what_is_new(write_sample):
    path = write_sample("pi")
    first = sidelight.scan(path)
    again = sidelight.scan(path, cursor=first.cursor)
    assert again.messages.total == 0
    assert again.offset == again.start_offset == first.offset
    assert again.reset is None

    with path.open("a", encoding="utf-8") as file:
        file.write(jsonl(PI[1:2] + PI[-1:]))
    more = sidelight.scan(path, cursor=again.cursor)
    assert more.start_offset == first.offset
    assert more.offset == path.stat().st_size
    assert more.messages.as_dict() == {"user": 1, "assistant": 1}
    assert more.first_user_text == "List the files"


def test_partial_line_waits_for_its_newline(write_sample):
    path = write_sample("pi")
    first = sidelight.scan(path)
    line = jsonl(PI[-1:])
    with path.open("a", encoding="utf-8") as file:
        file.write(line[:20])
    partial = sidelight.scan(path, cursor=first.cursor)
    assert partial.messages.total == 0
    assert partial.offset == first.offset
    assert partial.pending_bytes == 20
    with path.open("a", encoding="utf-8") as file:
        file.write(line[20:])
    done = sidelight.scan(path, cursor=partial.cursor)
    assert done.messages.assistant == 1
    assert done.pending_bytes == 0


def test_truncated_file_resets(write_sample):
    path = write_sample("pi")
    first = sidelight.scan(path)
    path.write_text(jsonl(PI[:2]), encoding="utf-8")
    after = sidelight.scan(path, cursor=first.cursor)
    assert after.reset == "truncated"
    assert after.start_offset == 0
    assert after.messages.as_dict() == {"user": 1, "assistant": 0}


def test_cursor_round_trips():
    cursor = Cursor(10, 2049, 123456, 4096, 2**63 + 5, 7, 0)
    assert Cursor.from_tuple(cursor.as_tuple()) == cursor
    assert Cursor.from_dict(json.loads(json.dumps(cursor.as_dict()))) == cursor
    assert list(cursor.as_dict()) == [
        "offset",
        "dev",
        "inode",
        "head_len",
        "head_hash",
        "tail_hash",
        "last_message",
    ]


def test_cursor_round_trips_through_a_json_state_file(write_sample, tmp_path):
    path = write_sample("claude-code")
    first = sidelight.scan(path)
    state = tmp_path / "state.json"
    state.write_text(json.dumps({"reader": {"writer": first.cursor.as_dict()}}), encoding="utf-8")
    cursor = Cursor.from_dict(json.loads(state.read_text(encoding="utf-8"))["reader"]["writer"])
    assert cursor == first.cursor
    assert sidelight.scan(path, cursor=cursor).messages.total == 0


@pytest.mark.parametrize(
    "data",
    [
        {"offset": 1},
        {
            "offset": -1,
            "dev": 0,
            "inode": 0,
            "head_len": 0,
            "head_hash": 0,
            "tail_hash": 0,
            "last_message": 0,
        },
        {
            "offset": "1",
            "dev": 0,
            "inode": 0,
            "head_len": 0,
            "head_hash": 0,
            "tail_hash": 0,
            "last_message": 0,
        },
        {
            "offset": True,
            "dev": 0,
            "inode": 0,
            "head_len": 0,
            "head_hash": 0,
            "tail_hash": 0,
            "last_message": 0,
        },
    ],
)
def test_bad_cursor_dict_is_refused(data):
    with pytest.raises(InvalidCursorError) as caught:
        Cursor.from_dict(data)
    assert isinstance(caught.value, ValueError)
    assert isinstance(caught.value, SidelightError)


def test_activity_as_dict_is_json(write_sample):
    activity = sidelight.scan(write_sample("codex"))
    data = json.loads(json.dumps(activity.as_dict()))
    assert data["format"] == "codex"
    assert Cursor.from_dict(data["cursor"]) == activity.cursor
    assert data["skipped"] == {"malformed_json": 0, "invalid_utf8": 0, "too_long": 0}
    assert data["tool_uses"][0] == {
        "name": "exec_command",
        "category": "command",
        "primary_arg": "pytest -q",
        "timestamp": "2026-01-01T10:00:02.000Z",
        "lines": None,
        "old_text": None,
        "new_text": None,
    }
    assert data["entry_types"] == {"session_meta": 1, "response_item": 6, "event_msg": 1}


def test_bad_lines_are_counted_not_fatal(tmp_path):
    path = tmp_path / "broken.jsonl"
    path.write_bytes(
        jsonl(PI[:2]).encode() + b"{not json\n" + b'{"type":"message","x":"\xff"}\n' + jsonl(PI[-1:]).encode()
    )
    activity = sidelight.scan(path)
    assert activity.skipped.as_dict() == {"malformed_json": 1, "invalid_utf8": 1, "too_long": 0}
    assert activity.messages.as_dict() == {"user": 1, "assistant": 1}


def test_too_long_line_is_skipped(tmp_path):
    path = tmp_path / "long.jsonl"
    long_text = "x" * 5000
    records = [*PI[:2], {"type": "message", "message": {"role": "user", "content": long_text}}, PI[-1]]
    path.write_text(jsonl(records), encoding="utf-8")
    activity = sidelight.scan(path, max_line_bytes=1000)
    assert activity.skipped.too_long == 1
    assert activity.messages.as_dict() == {"user": 1, "assistant": 1}


def test_text_limit_cuts_texts(tmp_path):
    path = tmp_path / "s.jsonl"
    records = [PI[0], {**PI[1], "message": {"role": "user", "content": "word " * 100}}]
    path.write_text(jsonl(records), encoding="utf-8")
    activity = sidelight.scan(path, text_limit=12)
    assert activity.first_user_text is not None
    assert len(activity.first_user_text) <= 12
    assert activity.first_user_text.startswith("word word")


def test_threads_do_not_change_the_result(pi_corpus):
    path = pi_corpus / "large-session.jsonl"
    one = sidelight.scan(path, threads=1).as_dict()
    assert sidelight.scan(path, threads=4).as_dict() == one
    assert sidelight.scan(path).as_dict() == one


@pytest.mark.parametrize("name", ["large-session.jsonl", "before-compaction.jsonl"])
def test_real_pi_sessions(pi_corpus, name):
    path = pi_corpus / name
    activity = sidelight.scan(path)
    header = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    assert activity.format is Format.PI
    assert activity.session_id == header["id"]
    assert activity.cwd == header["cwd"]
    assert activity.messages.user > 0
    assert activity.messages.assistant > 0
    assert activity.categories.total == sum(activity.tools.values()) > 0
    assert activity.skipped.total == 0
    assert activity.offset + activity.pending_bytes == activity.file_size == path.stat().st_size
    assert activity.first_timestamp is not None
    assert activity.last_timestamp is not None
    assert activity.first_timestamp <= activity.last_timestamp
    assert sum(activity.entry_types.values()) == activity.lines


def test_scan_many_reports_each_file_in_order(write_sample, tmp_path):
    paths = [write_sample(fmt) for fmt in FORMATS]
    missing = tmp_path / "gone.jsonl"
    results = sidelight.scan_many([paths[0], missing, paths[1], str(paths[2])])
    assert [type(r) for r in results] == [Activity, ScanFailure, Activity, Activity]
    for path, result in zip(
        [paths[0], paths[1], paths[2]], [results[0], results[2], results[3]], strict=True
    ):
        assert isinstance(result, Activity)
        assert result.as_dict() == sidelight.scan(path).as_dict()
    failure = results[1]
    assert isinstance(failure, ScanFailure)
    assert isinstance(failure.error, FileNotFoundError)
    assert failure.path == str(missing)
    assert str(missing) in failure.message
    assert "\n" not in failure.message


def test_scan_many_takes_formats_and_cursors(write_sample):
    pi_path = write_sample("pi")
    cc_path = write_sample("claude-code")
    first = sidelight.scan(pi_path)
    results = sidelight.scan_many([(pi_path, "pi", first.cursor), (cc_path, Format.CLAUDE_CODE, None)])
    assert isinstance(results[0], Activity)
    assert results[0].messages.total == 0
    assert results[0].start_offset == first.offset
    assert isinstance(results[1], Activity)
    assert counts(results[1]) == EXPECTED["claude-code"]


def test_scan_many_applies_categories_to_every_format(write_sample):
    results = sidelight.scan_many([write_sample("pi"), write_sample("codex")], categories={"bash": "other"})
    assert [r.categories.as_dict() for r in results if isinstance(r, Activity)] == [
        {"edit": 1, "read": 0, "command": 0, "other": 1},
        {"edit": 1, "read": 0, "command": 1, "other": 0},
    ]


def test_scan_many_failures_of_every_kind(write_sample, tmp_path):
    not_transcript = tmp_path / "notes.jsonl"
    not_transcript.write_text('{"hello": "world"}\n', encoding="utf-8")
    results = sidelight.scan_many(
        [tmp_path / "gone.jsonl", tmp_path, not_transcript, (write_sample("pi"), "aider", None)]
    )
    assert all(isinstance(r, ScanFailure) for r in results)
    errors = [r.error for r in results if isinstance(r, ScanFailure)]
    assert isinstance(errors[0], FileNotFoundError)
    assert isinstance(errors[1], IsADirectoryError)
    assert isinstance(errors[2], UnknownFormatError)
    assert isinstance(errors[3], UnknownFormatError)
    assert sidelight.scan_many([]) == []


def test_missing_file_is_file_not_found(tmp_path):
    missing = tmp_path / "gone.jsonl"
    for fmt in ("auto", "pi"):
        with pytest.raises(FileNotFoundError) as caught:
            sidelight.scan(missing, fmt)
        assert caught.value.filename == str(missing)
    with pytest.raises(FileNotFoundError):
        sidelight.recent_entries(missing, "pi")


def test_directory_is_a_directory_error(tmp_path):
    for fmt in ("auto", "claude-code"):
        with pytest.raises(IsADirectoryError):
            sidelight.scan(tmp_path, fmt)


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root reads any file")
def test_unreadable_file_is_permission_error(write_sample):
    path = write_sample("pi")
    path.chmod(0)
    try:
        with pytest.raises(PermissionError):
            sidelight.scan(path)
    finally:
        path.chmod(0o600)


@pytest.mark.parametrize(
    ("content", "reason"), [("", "the file is empty"), ('{"hello": "world"}\n', "no agent's transcript")]
)
def test_undetectable_format(tmp_path, content, reason):
    path = tmp_path / "x.jsonl"
    path.write_text(content, encoding="utf-8")
    assert sidelight.detect_format(path) is None
    with pytest.raises(UnknownFormatError) as caught:
        sidelight.scan(path)
    message = str(caught.value)
    assert str(path) in message
    assert reason in message
    assert "--format" in message
    assert isinstance(caught.value, ValueError)
    # with the format given there is nothing to detect: an empty or foreign file has no activity
    assert sidelight.scan(path, "pi").messages.total == 0


def test_unknown_format_name(write_sample):
    with pytest.raises(UnknownFormatError, match="unknown format 'aider'"):
        sidelight.scan(write_sample("pi"), "aider")


@pytest.mark.parametrize(
    "kwargs", [{"max_line_bytes": 0}, {"text_limit": 0}, {"threads": 0}], ids=lambda kw: next(iter(kw))
)
def test_bad_limits_are_value_errors(write_sample, kwargs):
    with pytest.raises(ValueError, match="must be at least 1"):
        sidelight.scan(write_sample("pi"), **kwargs)


def test_recent_entries(write_sample):
    path = write_sample("claude-code")
    entries = sidelight.recent_entries(path)
    assert all(isinstance(entry, Entry) for entry in entries)
    assert {entry.role for entry in entries} <= {"user", "assistant", "tool"}
    assert entries[0].role == "user"
    assert entries[0].text == "Fix the failing test"
    assert entries[-1].role == "assistant"
    assert entries[-1].text == "Fixed: the test passes now."
    tools = [(e.tool_name, e.primary_arg) for e in entries if e.role == "tool"]
    assert tools == [("Read", "/tmp/proj/test_x.py"), ("Edit", "/tmp/proj/x.py"), ("Bash", "pytest -q")]
    assert sidelight.recent_entries(path, limit=2) == entries[-2:]
    assert sidelight.recent_entries(path, "claude-code", limit=0) == []


def test_recent_entries_of_a_real_session(pi_corpus):
    entries = sidelight.recent_entries(pi_corpus / "large-session.jsonl", limit=20)
    assert len(entries) == 20
    stamps = [e.timestamp for e in entries if e.timestamp]
    assert stamps == sorted(stamps)


def test_scan_failure_message_is_one_line(tmp_path):
    failure = ScanFailure(str(tmp_path), IsADirectoryError(21, "Is a directory"))
    assert failure.message == f"{tmp_path}: is a directory; pass the transcript files (*.jsonl) inside it"
    assert failure.as_dict()["error"] == "IsADirectoryError"


def test_public_api():
    assert sidelight.__version__ == version("sidelight")
    for name in sidelight.__all__:
        assert getattr(sidelight, name) is not None
    assert isinstance(sidelight.Format.PI, str)
    assert sidelight.DEFAULT_SKIP_CUSTOM_TYPES == ("session-update",)
    assert sidelight.DEFAULT_MAX_LINE_BYTES == 64 * 1024 * 1024
    assert sidelight.DEFAULT_TEXT_LIMIT == 500


def test_paths_may_be_path_objects(write_sample):
    path = write_sample("pi")
    assert isinstance(path, Path)
    assert sidelight.scan(path).path == str(path)


@pytest.mark.parametrize(
    ("error", "message"),
    [
        (
            FileNotFoundError(2, "No such file or directory", "/x.jsonl"),
            "/x.jsonl: no such file; check the path",
        ),
        (
            PermissionError(13, "Permission denied", "/x.jsonl"),
            "/x.jsonl: permission denied; check that you may read it",
        ),
        (OSError(5, "Input/output error", "/x.jsonl"), "/x.jsonl: cannot read the file: Input/output error"),
        (UnknownFormatError("unknown format 'cline'; use auto, claude-code, pi, codex"), None),
        (ValueError("bad\nthing"), "/x.jsonl: bad thing"),
    ],
    ids=lambda value: type(value).__name__ if isinstance(value, Exception) else "",
)
def test_error_messages_are_one_line(error, message):
    from sidelight.errors import describe

    text = describe(error, "/x.jsonl")
    assert "\n" not in text
    assert text == (message or f"/x.jsonl: {error}")
    if isinstance(error, OSError):
        assert describe(error) == text  # the path comes from the exception
