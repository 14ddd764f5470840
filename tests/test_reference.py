"""Each rule of docs/activity.md on small hand-made lines, asserted against the reference reader and the core.

Every test runs twice: with ``tests.support.reference.reference_scan`` and with the native scan
(``sidelight.scan``,
or ``sidelight._core.scan`` while the facade does not exist yet). The expected values are typed in from the
spec, so a failure names the reader that is wrong. ``test_core_matches_reference_*`` then compares the two
readers on every key, over all the cases here and over the real Pi sessions in ``tests/data/pi-mono``.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import PI_CORPUS
from tests.support.reference import (
    DEFAULT_MAX_LINE_BYTES,
    DEFAULT_TEXT_LIMIT,
    FILES_TOUCHED_KEPT,
    SYNTHETIC_PREFIXES,
    TOOL_USES_KEPT,
    normalize,
    reference_scan,
)

Line = dict[str, Any] | str | bytes
Reader = Callable[..., dict[str, Any]]


# -- the two readers -----------------------------------------------------------------------------


def _core_module() -> Any:
    try:
        return importlib.import_module("sidelight._core")
    except ImportError as exc:
        pytest.skip(f"the native core sidelight._core is not built ({exc}); run `make build-dev`")


def core_scan(
    path: str | Path,
    format: str,
    *,
    categories: dict[str, str] | None = None,
    text_limit: int = DEFAULT_TEXT_LIMIT,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
) -> dict[str, Any]:
    """The native scan from offset 0, through the facade: ``sidelight.scan(...).as_dict()``."""
    _core_module()
    import sidelight

    activity = sidelight.scan(
        str(path), format=format, categories=categories, text_limit=text_limit, max_line_bytes=max_line_bytes
    )
    return normalize(activity.as_dict())


@pytest.fixture(params=["reference", "core"])
def scan(request: pytest.FixtureRequest) -> Reader:
    if request.param == "core":
        _core_module()
        return core_scan
    return reference_scan


# -- writing test files --------------------------------------------------------------------------


def encode(line: Line) -> bytes:
    if isinstance(line, bytes):
        return line
    if isinstance(line, str):
        return line.encode()
    return json.dumps(line, separators=(",", ":"), ensure_ascii=False).encode()


def content(lines: Iterable[Line], end: bytes = b"\n") -> bytes:
    return b"".join(encode(line) + end for line in lines)


@pytest.fixture
def write(tmp_path: Path) -> Callable[..., Path]:
    count = 0

    def write(lines: Iterable[Line], tail: bytes = b"") -> Path:
        nonlocal count
        count += 1
        path = tmp_path / f"t{count}.jsonl"
        path.write_bytes(content(lines) + tail)
        return path

    return write


# -- line builders, in the shapes of the real files (docs/agent-formats.md §0, 2, 4, 5) -------

SID = "0b6f1c52-5d1e-4d8e-9a53-9f1d7b0c1a11"


def ts(n: int) -> str:
    return f"2026-11-20T10:{n // 60:02d}:{n % 60:02d}.000Z"


def cc(kind: str, n: int = 0, **fields: Any) -> dict[str, Any]:
    return {
        "parentUuid": None,
        "isSidechain": False,
        "userType": "external",
        "cwd": "/work/proj",
        "sessionId": SID,
        "version": "2.1.328",
        "gitBranch": "main",
        "type": kind,
        "uuid": f"u-{kind}-{n}",
        "timestamp": ts(n),
        **fields,
    }


def cc_user(content: Any, n: int = 0, **fields: Any) -> dict[str, Any]:
    return cc("user", n, message={"role": "user", "content": content}, **fields)


def cc_assistant(blocks: list[dict[str, Any]], n: int = 0, msg_id: str | None = "msg_1", **extra: Any):
    message: dict[str, Any] = {"model": "claude-sonnet-4-6", "type": "message", "role": "assistant"}
    if msg_id is not None:
        message["id"] = msg_id
    message.update(extra)
    message["content"] = blocks
    return cc("assistant", n, message=message, requestId="req_1")


def text(t: str) -> dict[str, Any]:
    return {"type": "text", "text": t}


def tool_use(name: str, tool_input: dict[str, Any], tid: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": tid, "name": name, "input": tool_input}


def pi(kind: str, n: int = 0, **fields: Any) -> dict[str, Any]:
    return {"type": kind, "id": f"{n:08x}", "parentId": None, "timestamp": ts(n), **fields}


def pi_msg(role: str, n: int = 0, **message: Any) -> dict[str, Any]:
    return pi("message", n, message={"role": role, **message, "timestamp": 1763681581544 + n})


def cx(kind: str, payload: dict[str, Any], n: int = 0) -> dict[str, Any]:
    return {"timestamp": ts(n), "type": kind, "payload": payload}


def cx_item(payload: dict[str, Any], n: int = 0) -> dict[str, Any]:
    return cx("response_item", payload, n)


def cx_message(role: str, *texts: str, n: int = 0, block: str | None = None) -> dict[str, Any]:
    block = block or ("output_text" if role == "assistant" else "input_text")
    return cx_item(
        {"type": "message", "role": role, "content": [{"type": block, "text": t} for t in texts]}, n
    )


def cx_call(name: str, arguments: dict[str, Any] | str, n: int = 0) -> dict[str, Any]:
    args = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return cx_item({"type": "function_call", "name": name, "arguments": args, "call_id": f"call_{n}"}, n)


PATCH = (
    "*** Begin Patch\n*** Add File: src/new.py\n+print('hi')\n*** Update File: src/old.py\n"
    "*** Move to: src/moved.py\n@@\n-a\n+b\n*** Delete File: src/gone.py\n*** End Patch\n"
)
PATCH_FILES = ["src/new.py", "src/old.py", "src/moved.py", "src/gone.py"]


# -- Lines -------------------------------------------------------------------------------------------


def test_partial_last_line_is_held_back(scan, write):
    first = encode(cc_user("done", 1))
    path = write([cc_user("done", 1)], tail=encode(cc_user("not yet", 2)))
    r = scan(path, "claude-code")
    assert r["lines"] == 1
    assert r["bytes_consumed"] == len(first) + 1
    assert r["messages"]["user"] == 1
    assert r["first_user_text"] == "done"
    assert r["last_timestamp"] == ts(1)


def test_file_without_newline_reads_nothing(scan, write):
    path = write([], tail=encode(cc_user("hello")))
    r = scan(path, "claude-code")
    assert (r["lines"], r["bytes_consumed"], r["messages"]["user"]) == (0, 0, 0)
    assert r["first_user_text"] is None


def test_blank_lines_are_not_counted(scan, write):
    path = write(["", "   ", "\t", cc_user("hi", 1), "", "\r"])
    r = scan(path, "claude-code")
    assert r["lines"] == 1
    assert r["bytes_consumed"] == path.stat().st_size
    assert r["skipped"] == {"malformed_json": 0, "invalid_utf8": 0, "too_long": 0}


def test_crlf_line_endings(scan, tmp_path):
    path = tmp_path / "crlf.jsonl"
    path.write_bytes(encode(cc_user("one", 1)) + b"\r\n" + encode(cc_user("two", 2)) + b"\r\n")
    r = scan(path, "claude-code")
    assert (r["lines"], r["messages"]["user"], r["first_user_text"]) == (2, 2, "one")


def test_invalid_utf8_is_counted_and_skipped(scan, write):
    bad = encode(cc_user("caf\u00e9", 1)).replace("\u00e9".encode(), b"\xe9")
    path = write([bad, b'{"type":"user","message":{"content":"\xff\xfe"}}', cc_user("ok", 2)])
    r = scan(path, "claude-code")
    assert r["skipped"]["invalid_utf8"] == 2
    assert r["lines"] == 3
    assert r["messages"]["user"] == 1
    assert r["first_user_text"] == "ok"
    assert r["entry_types"] == {"user": 1}


def test_malformed_lines_are_counted_and_skipped(scan, write):
    bad = ["{not json", "[1, 2]", "42", '"a string"', "null", '{"type":"user"', "NaN", '{"type":"user",}']
    path = write([*bad, cc_user("still read", 1)])
    r = scan(path, "claude-code")
    assert r["skipped"]["malformed_json"] == len(bad)
    assert r["lines"] == len(bad) + 1
    assert r["messages"]["user"] == 1
    assert r["entry_types"] == {"user": 1}


def test_bytes_after_the_object_make_a_line_malformed(scan, write):
    bad = ["{}{}", encode(cc_user("two objects", 1)) + b' {"type":"user"}', '{"type":"attachment"} x']
    path = write([*bad, cc_user("still read", 2)])
    r = scan(path, "claude-code")
    assert r["skipped"]["malformed_json"] == len(bad)
    assert (r["messages"]["user"], r["first_user_text"]) == (1, "still read")


def test_a_field_of_an_unexpected_type_does_not_make_a_line_malformed(scan, write):
    path = write(
        [
            {"type": "assistant", "message": "not an object", "timestamp": ts(1)},
            {"type": "user", "message": ["a", "list"], "timestamp": ts(2)},
            {"type": "user", "message": {"role": "user", "content": 42}, "timestamp": ts(3)},
        ]
    )
    r = scan(path, "claude-code")
    assert r["skipped"]["malformed_json"] == 0
    assert r["entry_types"] == {"assistant": 1, "user": 2}
    assert r["messages"] == {"user": 0, "assistant": 0}


def test_too_long_lines_are_counted_and_skipped(scan, write):
    long_line = cc_user("x" * 5000, 1)
    path = write([long_line, cc_user("short", 2)])
    r = scan(path, "claude-code", max_line_bytes=4096)
    assert r["skipped"]["too_long"] == 1
    assert r["lines"] == 2
    assert r["messages"]["user"] == 1
    assert r["first_user_text"] == "short"
    assert r["bytes_consumed"] == path.stat().st_size


def test_entry_types_count_every_decoded_line(scan, write):
    path = write(
        [
            {"type": "queue-operation", "operation": "enqueue", "timestamp": ts(0), "sessionId": SID},
            cc_user("hi", 1),
            {"type": "brand-new-type", "x": 1},
            {"no_type": True},
            {"type": 7},
            {"type": None},
            cc("attachment", 2, attachment={"type": "skill_listing", "content": "..."}),
        ]
    )
    r = scan(path, "claude-code")
    assert r["entry_types"] == {
        "queue-operation": 1,
        "user": 1,
        "brand-new-type": 1,
        "<none>": 3,
        "attachment": 1,
    }
    assert r["lines"] == 7


# -- Common fields ---------------------------------------------------------------------------------


def test_primary_argument_key_order(scan, write):
    inputs: list[tuple[dict[str, Any], str | None]] = [
        ({"path": "/p", "pattern": "TODO"}, "TODO"),
        ({"file_path": "", "command": "ls"}, "ls"),
        ({"url": "https://x", "query": "q"}, "q"),
        ({"notebook_path": "/n.ipynb", "command": "c"}, "/n.ipynb"),
        ({"cmd": "make", "path": "/p"}, "make"),
        ({"description": "only other keys"}, None),
        ({"file_path": 3, "path": "/fallback"}, "/fallback"),
    ]
    blocks = [tool_use("Tool", inp, f"t{i}") for i, (inp, _) in enumerate(inputs)]
    path = write([cc_assistant(blocks, 1)])
    r = scan(path, "claude-code")
    assert [use[2] for use in r["tool_uses"]] == [expected for _, expected in inputs]


def test_tool_uses_categories_and_files(scan, write):
    path = write(
        [
            cc_user("fix it", 1),
            cc_assistant([tool_use("Read", {"file_path": "/w/a.py"}, "t1")], 2, "m1"),
            cc_assistant([tool_use("Edit", {"file_path": "/w/a.py", "old_string": "a"}, "t2")], 3, "m2"),
            cc_assistant([tool_use("Write", {"file_path": "/w/b.py", "content": "x"}, "t3")], 4, "m3"),
            cc_assistant([tool_use("Edit", {"file_path": "/w/a.py"}, "t4")], 5, "m4"),
            cc_assistant([tool_use("Bash", {"command": "pytest -q", "description": "run"}, "t5")], 6, "m5"),
            cc_assistant([tool_use("TodoWrite", {"todos": []}, "t6")], 7, "m6"),
            cc_assistant([tool_use("mcp__srv__do", {"query": "q"}, "t7")], 8, "m7"),
            cc_assistant([tool_use("NotebookEdit", {"notebook_path": "/w/n.ipynb"}, "t8")], 9, "m8"),
        ]
    )
    r = scan(path, "claude-code")
    assert r["tools"] == {
        "Read": 1,
        "Edit": 2,
        "Write": 1,
        "Bash": 1,
        "TodoWrite": 1,
        "mcp__srv__do": 1,
        "NotebookEdit": 1,
    }
    assert r["categories"] == {"edit": 4, "read": 1, "command": 1, "other": 2}
    assert r["files_touched"] == ["/w/a.py", "/w/b.py", "/w/n.ipynb"]
    assert r["tool_uses"][0][:4] == ["Read", "read", "/w/a.py", ts(2)]
    assert r["tool_uses"][4][:4] == ["Bash", "command", "pytest -q", ts(6)]
    assert r["tool_uses"][5][:4] == ["TodoWrite", "other", None, ts(7)]
    assert r["messages"] == {"user": 1, "assistant": 8}


def test_primary_arguments_are_trimmed_and_cut_to_text_limit(scan, write):
    blocks = [
        tool_use("Bash", {"command": "  ls -la\n"}, "t1"),
        tool_use("Write", {"file_path": " \t", "path": " /w/p.py "}, "t2"),
        tool_use("Bash", {"command": "x" * 50}, "t3"),
    ]
    path = write([cc_assistant(blocks, 1)])
    r = scan(path, "claude-code", text_limit=20)
    assert [use[2] for use in r["tool_uses"]] == ["ls -la", "/w/p.py", "x" * 20]
    assert r["files_touched"] == ["/w/p.py"]


def test_tool_call_ids_count_once_in_every_format(scan, write):
    call = {"type": "toolCall", "id": "same", "name": "bash", "arguments": {"command": "ls"}}
    pi_path = write(
        [pi_header(), pi_msg("assistant", 1, content=[call]), pi_msg("assistant", 2, content=[call])]
    )
    assert scan(pi_path, "pi")["tools"] == {"bash": 1}
    item = {"type": "function_call", "name": "exec_command", "arguments": '{"cmd":"ls"}', "call_id": "same"}
    cx_path = write([cx_meta(), cx_item(item, 1), cx_item(item, 2)])
    assert scan(cx_path, "codex")["tools"] == {"exec_command": 1}


def test_category_lookup_is_ascii_lowercase_and_caller_map(scan, write):
    path = write([cc_assistant([tool_use("BASH", {"command": "x"}, "t1"), tool_use("Deploy", {}, "t2")], 1)])
    r = scan(path, "claude-code", categories={"bash": "command", "deploy": "edit"})
    assert r["categories"] == {"edit": 1, "read": 0, "command": 1, "other": 0}
    assert [use[:2] for use in r["tool_uses"]] == [["BASH", "command"], ["Deploy", "edit"]]
    assert r["files_touched"] == []


def test_tool_uses_keep_the_last_hundred(scan, write):
    total = TOOL_USES_KEPT + 50
    path = write(
        [
            cc_assistant([tool_use("Bash", {"command": f"echo {i}"}, f"t{i}")], i, f"m{i}")
            for i in range(total)
        ]
    )
    r = scan(path, "claude-code")
    assert r["tools"] == {"Bash": total}
    assert len(r["tool_uses"]) == TOOL_USES_KEPT
    assert r["tool_uses"][0][2] == "echo 50"
    assert r["tool_uses"][-1][2] == f"echo {total - 1}"


def test_files_touched_unique_and_capped(scan, write):
    total = FILES_TOUCHED_KEPT + 100
    blocks = [tool_use("Write", {"file_path": f"/f/{i % total}"}, f"t{i}") for i in range(total + 20)]
    path = write([cc_assistant(blocks, 1)])
    r = scan(path, "claude-code")
    assert r["files_touched"] == [f"/f/{i}" for i in range(FILES_TOUCHED_KEPT)]
    assert r["categories"]["edit"] == total + 20


def test_texts_are_trimmed_and_cut_to_text_limit_code_points(scan, write):
    prompt = "\n  " + "\u00e9" * 20 + "\U0001f600" * 20 + "  \n"
    path = write([cc_user(prompt, 1), cc_assistant([text("  " + "\u4e2d" * 30 + "  ")], 2)])
    r = scan(path, "claude-code", text_limit=25)
    assert r["first_user_text"] == "\u00e9" * 20 + "\U0001f600" * 5
    assert r["last_assistant_text"] == "\u4e2d" * 25


def test_default_text_limit(scan, write):
    path = write([cc_user("a" * 2000, 1)])
    assert scan(path, "claude-code")["first_user_text"] == "a" * DEFAULT_TEXT_LIMIT


@pytest.mark.parametrize("prefix", SYNTHETIC_PREFIXES)
def test_synthetic_prompts_are_not_counted(scan, write, prefix):
    path = write([cc_user(f" \n\t{prefix} something", 1), cc_user("the real one", 2)])
    r = scan(path, "claude-code")
    assert r["messages"]["user"] == 1
    assert r["first_user_text"] == "the real one"


def test_synthetic_marker_later_in_the_text_is_a_prompt(scan, write):
    path = write([cc_user("look at <system-reminder> here", 1)])
    r = scan(path, "claude-code")
    assert (r["messages"]["user"], r["first_user_text"]) == (1, "look at <system-reminder> here")


# -- Claude Code -----------------------------------------------------------------------------------


def test_claude_string_prompt(scan, write):
    path = write([cc_user("  hello world \n", 1)])
    r = scan(path, "claude-code")
    assert r["messages"] == {"user": 1, "assistant": 0}
    assert r["first_user_text"] == "hello world"
    assert (r["first_timestamp"], r["last_timestamp"]) == (ts(1), ts(1))


def test_claude_text_block_prompt(scan, write):
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}
    path = write([cc_user([text("first"), image, text("second")], 1), cc_user([text("later")], 2)])
    r = scan(path, "claude-code")
    assert r["messages"]["user"] == 2
    assert r["first_user_text"] == "first\nsecond"


def test_claude_tool_result_is_not_a_prompt(scan, write):
    result = {"type": "tool_result", "tool_use_id": "t1", "content": "output", "is_error": False}
    path = write(
        [
            cc_user([result], 1, toolUseResult={"stdout": "output", "stderr": "", "interrupted": False}),
            cc_user([text("a note"), result], 2),
        ]
    )
    r = scan(path, "claude-code")
    assert r["messages"]["user"] == 0
    assert r["first_user_text"] is None


def test_claude_empty_prompts_are_not_counted(scan, write):
    path = write(
        [cc_user("   ", 1), cc_user([], 2), cc_user([text(" ")], 3), cc_user([{"type": "image"}], 4)]
    )
    r = scan(path, "claude-code")
    assert r["messages"]["user"] == 0
    assert r["first_user_text"] is None


def test_claude_prompt_needs_no_role(scan, write):
    path = write([{"type": "user", "message": {"content": "no role key"}, "timestamp": ts(1)}])
    r = scan(path, "claude-code")
    assert (r["messages"]["user"], r["first_user_text"]) == (1, "no role key")


@pytest.mark.parametrize("flag", ["isMeta", "isSidechain", "isCompactSummary"])
def test_claude_meta_sidechain_compact_summary_are_skipped(scan, write, flag):
    path = write([cc_user("not a person", 1, **{flag: True}), cc_user("a person", 2)])
    r = scan(path, "claude-code")
    assert r["messages"]["user"] == 1
    assert r["first_user_text"] == "a person"


def test_claude_response_lines_sharing_message_id_count_once(scan, write):
    path = write(
        [
            cc_user("go", 0),
            cc_assistant([{"type": "thinking", "thinking": "hmm", "signature": "sig"}], 1, "msg_A"),
            cc_assistant([text("Let me look.")], 2, "msg_A"),
            cc_assistant([tool_use("Read", {"file_path": "/a"}, "toolu_1")], 3, "msg_A"),
            cc_assistant([{"type": "redacted_thinking", "data": "xx"}], 4, "msg_B"),
            cc_assistant([text("Done.")], 5, "msg_B"),
            cc_assistant([text("no id")], 6, None),
            cc_assistant([text("no id either")], 7, None),
            cc_assistant([text("   ")], 8, "msg_C"),
        ]
    )
    r = scan(path, "claude-code")
    assert r["messages"] == {"user": 1, "assistant": 5}
    assert r["last_assistant_text"] == "no id either"
    assert r["tools"] == {"Read": 1}
    assert r["last_timestamp"] == ts(8)


def test_claude_tool_use_id_counts_once(scan, write):
    use = tool_use("Bash", {"command": "ls"}, "toolu_same")
    path = write([cc_assistant([use], 1, "m1"), cc_assistant([use], 2, "m2"), cc_assistant([use], 3, "m2")])
    r = scan(path, "claude-code")
    assert r["tools"] == {"Bash": 1}
    assert [use[:4] for use in r["tool_uses"]] == [["Bash", "command", "ls", ts(1)]]
    assert r["messages"]["assistant"] == 2


def test_claude_synthetic_model_is_skipped(scan, write):
    path = write(
        [
            cc_assistant([text("real")], 1, "m1"),
            cc_assistant([text("No response requested.")], 2, "m2", model="<synthetic>"),
        ]
    )
    r = scan(path, "claude-code")
    assert r["messages"]["assistant"] == 1
    assert r["last_assistant_text"] == "real"


def test_claude_attachments_are_never_counted(scan, write):
    hook = {
        "type": "hook_additional_context",
        "content": ["[Session Activity] x"],
        "hookName": "UserPromptSubmit",
    }
    path = write(
        [
            cc_user("prompt", 1),
            cc("attachment", 2, attachment=hook),
            cc("attachment", 3, attachment={"type": "file"}, message={"role": "user", "content": "sneaky"}),
        ]
    )
    r = scan(path, "claude-code")
    assert r["messages"] == {"user": 1, "assistant": 0}
    assert r["entry_types"] == {"user": 1, "attachment": 2}
    assert r["last_timestamp"] == ts(1)


def test_claude_timestamps_come_from_counted_lines(scan, write):
    path = write(
        [
            {"type": "queue-operation", "operation": "enqueue", "timestamp": ts(0), "sessionId": SID},
            cc("system", 1, subtype="turn_duration"),
            cc_user("hi", 2),
            cc_assistant([text("hello")], 3),
            cc("progress", 4, data={"type": "bash_progress"}),
            {"type": "last-prompt", "lastPrompt": "hi", "sessionId": SID},
        ]
    )
    r = scan(path, "claude-code")
    assert (r["first_timestamp"], r["last_timestamp"]) == (ts(2), ts(3))


def test_claude_session_id_and_cwd_from_first_line_that_has_them(scan, write):
    path = write(
        [
            {"type": "queue-operation", "operation": "enqueue", "timestamp": ts(0), "sessionId": "first-sid"},
            {**cc_user("hi", 1), "sessionId": "second-sid", "cwd": "/first/cwd"},
            {**cc_user("again", 2), "sessionId": "third-sid", "cwd": "/second/cwd"},
        ]
    )
    r = scan(path, "claude-code")
    assert (r["session_id"], r["cwd"]) == ("first-sid", "/first/cwd")


@pytest.mark.parametrize(
    ("lines", "title"),
    [
        ([("summary", "S1"), ("ai-title", "A1"), ("custom-title", "C1")], "C1"),
        ([("custom-title", "C1"), ("ai-title", "A1"), ("summary", "S1")], "C1"),
        ([("ai-title", "A1"), ("summary", "S1"), ("ai-title", "A2")], "A2"),
        ([("custom-title", "C1"), ("custom-title", "C2"), ("ai-title", "A3")], "C2"),
        ([("summary", "S1"), ("summary", "S2")], "S2"),
        ([], None),
    ],
)
def test_claude_titles(scan, write, lines, title):
    field = {"custom-title": "customTitle", "ai-title": "aiTitle", "summary": "summary"}
    path = write([cc_user("hi", 0), *({"type": k, field[k]: v, "sessionId": SID} for k, v in lines)])
    assert scan(path, "claude-code")["title"] == title


# -- Pi --------------------------------------------------------------------------------------------


def pi_header(n: int = 0) -> dict[str, Any]:
    return {"type": "session", "version": 3, "id": "pi-session-1", "timestamp": ts(n), "cwd": "/work/pi"}


def test_pi_header_session_info_and_timestamps(scan, write):
    path = write(
        [
            pi_header(0),
            pi("model_change", 1, provider="anthropic", modelId="claude-sonnet-4-5"),
            pi_msg("user", 2, content="hello pi"),
            pi("session_info", 3, name="first name"),
            pi_msg("assistant", 4, content=[text("hi")]),
            pi("session_info", 5, name="second name"),
            pi("thinking_level_change", 6, thinkingLevel="high"),
        ]
    )
    r = scan(path, "pi")
    assert (r["session_id"], r["cwd"], r["title"]) == ("pi-session-1", "/work/pi", "second name")
    assert (r["first_timestamp"], r["last_timestamp"]) == (ts(2), ts(4))
    assert r["messages"] == {"user": 1, "assistant": 1}


def test_pi_prompts(scan, write):
    path = write(
        [
            pi_header(),
            pi_msg(
                "user",
                1,
                content=[text("  block one"), {"type": "image", "data": "x", "mimeType": "p"}, text("two ")],
            ),
            pi_msg("user", 2, content="string prompt"),
            pi_msg("user", 3, content="<system-reminder>injected</system-reminder>"),
            pi_msg("user", 4, content=[]),
        ]
    )
    r = scan(path, "pi")
    assert r["messages"]["user"] == 2
    assert r["first_user_text"] == "block one\ntwo"


def test_pi_assistant_tool_calls(scan, write):
    thinking = {"type": "thinking", "thinking": "plan", "thinkingSignature": "s"}

    def call(i: int, name: str, **args: Any) -> dict[str, Any]:
        return {"type": "toolCall", "id": f"c{i}", "name": name, "arguments": args}

    path = write(
        [
            pi_header(),
            pi_msg("assistant", 1, content=[thinking, text("Reading."), call(1, "read", path="/r.md")]),
            pi_msg("assistant", 2, content=[call(2, "edit", path="/e.ts", oldText="a", newText="b")]),
            pi_msg("assistant", 3, content=[call(3, "write", path="/w.ts", content="x"), text("   ")]),
            pi_msg(
                "assistant",
                4,
                content=[call(4, "bash", command="npm test"), call(5, "grep", pattern="x", path=".")],
            ),
            pi_msg("assistant", 5, content=[call(6, "grep", pattern="x", path=".")]),
            pi_msg("assistant", 6, content=[], stopReason="aborted", errorMessage="Request was aborted"),
        ]
    )
    r = scan(path, "pi")
    assert r["messages"]["assistant"] == 6
    assert r["last_assistant_text"] == "Reading."
    assert r["tools"] == {"read": 1, "edit": 1, "write": 1, "bash": 1, "grep": 2}
    assert r["categories"] == {"edit": 2, "read": 3, "command": 1, "other": 0}
    assert r["files_touched"] == ["/e.ts", "/w.ts"]
    assert r["tool_uses"][3][:4] == ["bash", "command", "npm test", ts(4)]
    assert r["tool_uses"][4][:4] == ["grep", "read", "x", ts(4)]


def test_pi_bash_execution_is_a_tool_use(scan, write):
    bash = {"command": "ls -la", "output": "...", "exitCode": 0, "cancelled": False, "truncated": False}
    path = write([pi_header(), pi_msg("bashExecution", 1, **bash)])
    r = scan(path, "pi")
    assert [use[:4] for use in r["tool_uses"]] == [["bashExecution", "command", "ls -la", ts(1)]]
    assert r["messages"] == {"user": 0, "assistant": 0}


def test_pi_other_roles_and_custom_messages_are_not_counted(scan, write):
    path = write(
        [
            pi_header(),
            pi_msg(
                "toolResult", 1, toolCallId="c1", toolName="read", content=[text("file body")], isError=False
            ),
            pi_msg("custom", 2, customType="x", content="custom text"),
            pi_msg("branchSummary", 3, summary="branch"),
            pi_msg("compactionSummary", 4, summary="compacted"),
            pi(
                "custom_message", 5, customType="session-update", content="[Session Activity] a", display=True
            ),
            pi("custom_message", 6, customType="other-ext", content="extension output", display=True),
            pi("custom", 7, customType="x", data={}),
            pi("compaction", 8, summary="s", firstKeptEntryId="0", tokensBefore=1),
        ]
    )
    r = scan(path, "pi")
    assert r["messages"] == {"user": 0, "assistant": 0}
    assert r["first_user_text"] is None
    assert r["last_assistant_text"] is None
    assert r["tools"] == {}
    assert r["entry_types"] == {"session": 1, "message": 4, "custom_message": 2, "custom": 1, "compaction": 1}


# -- Codex -----------------------------------------------------------------------------------------


def cx_meta() -> dict[str, Any]:
    payload = {"id": "codex-sid", "timestamp": ts(0), "cwd": "/work/cx", "originator": "codex_exec"}
    return cx("session_meta", {**payload, "cli_version": "0.169.0", "instructions": None}, 0)


def test_codex_session_meta_and_user_message_filtering(scan, write):
    path = write(
        [
            cx_meta(),
            cx("turn_context", {"cwd": "/elsewhere", "model": "gpt-5"}, 1),
            cx_message(
                "user", "# AGENTS.md instructions for /work/cx\n\n<INSTRUCTIONS>be nice</INSTRUCTIONS>", n=2
            ),
            cx_message("user", "<environment_context>\n  <cwd>/work/cx</cwd>\n</environment_context>", n=3),
            cx_message("developer", "<permissions instructions>...</permissions instructions>", n=4),
            cx_message("user", "  <user_instructions>x</user_instructions>", "fix the bug", n=5),
            cx_message("user", "<INSTRUCTIONS>", "<user_shell_command>ls</user_shell_command>", n=6),
            cx_message("user", "<permissions>", n=7),
            cx_message("user", "second", "prompt", n=8, block="text"),
            cx("event_msg", {"type": "user_message", "message": "fix the bug", "images": []}, 9),
        ]
    )
    r = scan(path, "codex")
    assert (r["session_id"], r["cwd"]) == ("codex-sid", "/work/cx")
    assert r["messages"] == {"user": 2, "assistant": 0}
    assert r["first_user_text"] == "fix the bug"


def test_codex_assistant_and_ignored_items(scan, write):
    path = write(
        [
            cx_meta(),
            cx_message("user", "hi", n=1),
            cx_item({"type": "reasoning", "summary": [{"type": "summary_text", "text": "t"}]}, 2),
            cx_message("assistant", "first answer", n=3),
            cx_message("assistant", "", "second answer", "  ", n=4),
            cx_message("system", "system text", n=5),
            cx_item({"type": "function_call_output", "call_id": "c", "output": "x"}, 6),
            cx("event_msg", {"type": "agent_message", "message": "not counted"}, 7),
            cx("event_msg", {"type": "token_count", "info": None}, 8),
        ]
    )
    r = scan(path, "codex")
    assert r["messages"] == {"user": 1, "assistant": 2}
    assert r["last_assistant_text"] == "second answer"


def test_codex_message_text_block_types(scan, write):
    path = write(
        [
            cx_meta(),
            cx_message("user", "an output block in a user message", n=1, block="output_text"),
            cx_message("user", "the prompt", n=2, block="input_text"),
            cx_message("assistant", "the answer", n=3, block="output_text"),
            cx_message("assistant", "an input block in an assistant message", n=4, block="input_text"),
        ]
    )
    r = scan(path, "codex")
    assert r["messages"] == {"user": 1, "assistant": 2}
    assert (r["first_user_text"], r["last_assistant_text"]) == ("the prompt", "the answer")


def test_codex_function_calls(scan, write):
    path = write(
        [
            cx_meta(),
            cx_call("exec_command", {"cmd": "ls -la", "yield_time_ms": 1000}, 1),
            cx_call("shell", {"command": ["bash", "-lc", "npm test"], "workdir": "/w"}, 2),
            cx_call("shell", {"command": ["ls", "-la", "src"]}, 3),
            cx_call("shell_command", {"command": "git status"}, 4),
            cx_call("write_stdin", {"session_id": 3, "chars": "y\n"}, 5),
            cx_call("view_image", {"path": "/img.png"}, 6),
            cx_call("update_plan", {"plan": [{"step": "a", "status": "pending"}]}, 7),
            cx_call("mcp__srv__tool", "not json at all", 8),
        ]
    )
    r = scan(path, "codex")
    assert [use[:3] for use in r["tool_uses"]] == [
        ["exec_command", "command", "ls -la"],
        ["shell", "command", "npm test"],
        ["shell", "command", "ls -la src"],
        ["shell_command", "command", "git status"],
        ["write_stdin", "command", None],
        ["view_image", "read", "/img.png"],
        ["update_plan", "other", None],
        ["mcp__srv__tool", "other", None],
    ]
    assert r["tool_uses"][0][3] == ts(1)
    assert r["categories"] == {"edit": 0, "read": 1, "command": 5, "other": 2}


def test_codex_apply_patch_custom_tool(scan, write):
    call = {
        "type": "custom_tool_call",
        "status": "completed",
        "call_id": "c1",
        "name": "apply_patch",
        "input": PATCH,
    }
    path = write(
        [cx_meta(), cx_item(call, 1), cx_item({"type": "custom_tool_call_output", "call_id": "c1"}, 2)]
    )
    r = scan(path, "codex")
    assert [use[:4] for use in r["tool_uses"]] == [["apply_patch", "edit", "src/new.py", ts(1)]]
    assert r["tool_uses"][0][4:] == [1, None, None]  # the first file is added, with one line
    assert r["files_touched"] == PATCH_FILES
    assert r["categories"]["edit"] == 1


def test_tool_details_say_what_writes_and_edits_did(scan, write):
    blocks = [
        tool_use("Write", {"file_path": "/w/new.py", "content": "a\nb\nc\n"}, "t1"),
        tool_use("Edit", {"file_path": "/w/a.py", "old_string": " x = 1 ", "new_string": "x = 2"}, "t2"),
        tool_use(
            "MultiEdit", {"file_path": "/w/b.py", "edits": [{"old_string": "p", "new_string": "q"}]}, "t3"
        ),
        tool_use("Write", {"file_path": "/w/empty.py", "content": ""}, "t4"),
        tool_use("Bash", {"command": "ls"}, "t5"),
    ]
    path = write([cc_assistant([block], n, msg_id=f"m{n}") for n, block in enumerate(blocks, 1)])
    r = scan(path, "claude-code")
    assert [use[4:] for use in r["tool_uses"]] == [
        [3, None, None],
        [None, "x = 1", "x = 2"],
        [None, "p", "q"],
        [0, None, None],
        [None, None, None],
    ]
    update = "*** Begin Patch\n*** Update File: u.py\n@@\n-  old line\n+new line\n*** End Patch"
    path = write([cx_meta(), cx_call("apply_patch", {"input": update}, 1)])
    assert scan(path, "codex")["tool_uses"][0][4:] == [None, "old line", "new line"]


def test_codex_apply_patch_function_call(scan, write):
    path = write(
        [
            cx_meta(),
            cx_call("apply_patch", {"input": PATCH}, 1),
            cx_call("apply_patch", {"patch": "*** Begin Patch\n*** Update File: other.py\n*** End Patch"}, 2),
        ]
    )
    r = scan(path, "codex")
    assert [use[:3] for use in r["tool_uses"]] == [
        ["apply_patch", "edit", "src/new.py"],
        ["apply_patch", "edit", "other.py"],
    ]
    assert r["files_touched"] == [*PATCH_FILES, "other.py"]


def test_codex_shell_apply_patch_is_an_apply_patch(scan, write):
    path = write([cx_meta(), cx_call("shell", {"command": ["apply_patch", PATCH]}, 1)])
    r = scan(path, "codex")
    assert [use[:4] for use in r["tool_uses"]] == [["apply_patch", "edit", "src/new.py", ts(1)]]
    assert r["files_touched"] == PATCH_FILES


def test_codex_local_shell_and_web_search(scan, write):
    shell = {"type": "local_shell_call", "status": "completed"}
    path = write(
        [
            cx_meta(),
            cx_item(
                {**shell, "call_id": "c1", "action": {"type": "exec", "command": ["bash", "-lc", "pwd"]}}, 1
            ),
            cx_item(
                {**shell, "call_id": "c2", "action": {"type": "exec", "command": ["cat", "README.md"]}}, 2
            ),
            cx_item(
                {
                    "type": "web_search_call",
                    "status": "completed",
                    "action": {"type": "search", "query": "rust"},
                },
                3,
            ),
        ]
    )
    r = scan(path, "codex")
    assert [use[:4] for use in r["tool_uses"]] == [
        ["local_shell_call", "command", "pwd", ts(1)],
        ["local_shell_call", "command", "cat README.md", ts(2)],
        ["web_search_call", "other", "rust", ts(3)],
    ]


def test_codex_other_custom_tool(scan, write):
    call = {"type": "custom_tool_call", "call_id": "c1", "name": "js_repl", "input": "console.log(1)"}
    path = write([cx_meta(), cx_item(call, 1)])
    r = scan(path, "codex")
    assert [use[:4] for use in r["tool_uses"]] == [["js_repl", "other", "console.log(1)", ts(1)]]


# Per format: lines around the ones that count, and the (first, last) timestamps the spec gives them:
# "the first / last line that holds a counted prompt, a line of an assistant message, or a counted tool use".
TIMESTAMP_CASES: dict[str, tuple[list[Line], tuple[str, str]]] = {
    "claude-code": (
        [
            {"type": "queue-operation", "operation": "enqueue", "timestamp": ts(0), "sessionId": SID},
            cc_user("hook feedback", 1, isMeta=True),
            cc_user("<command-name>/clear</command-name>", 2),
            cc_user("real prompt", 3),
            cc_assistant([text("Let me look.")], 4, "m1"),
            cc_assistant([tool_use("Bash", {"command": "ls"}, "t1")], 5, "m1"),
            cc_user([{"type": "tool_result", "tool_use_id": "t1", "content": "out"}], 6),
            cc_assistant([text("same response, later line")], 7, "m1"),
            cc_assistant([text("No response requested.")], 8, "m2", model="<synthetic>"),
            cc_user("sidechain prompt", 9, isSidechain=True),
            cc("attachment", 10, attachment={"type": "file"}),
            cc("system", 11, subtype="turn_duration"),
        ],
        (ts(3), ts(7)),
    ),
    "pi": (
        [
            pi_header(0),
            pi_msg("custom", 1, customType="x", content="c"),
            pi_msg("user", 2, content="prompt"),
            pi_msg("assistant", 3, content=[text("ok")]),
            pi_msg("toolResult", 4, toolCallId="c", toolName="bash", content=[], isError=False),
            pi_msg("bashExecution", 5, command="ls", output="", exitCode=0),
            pi_msg("toolResult", 6, toolCallId="d", toolName="bash", content=[], isError=False),
            pi_msg("user", 7, content="   "),
            pi("custom_message", 8, customType="session-update", content="x"),
        ],
        (ts(2), ts(5)),
    ),
    "codex": (
        [
            cx_meta(),
            cx_message("developer", "<permissions instructions>", n=1),
            cx_message("user", "# AGENTS.md instructions", n=2),
            cx_message("user", "prompt", n=3),
            cx_call("exec_command", {"cmd": "ls"}, 4),
            cx_item({"type": "function_call_output", "call_id": "call_4", "output": "x"}, 5),
            cx_message("assistant", "done", n=6),
            cx_item({"type": "reasoning", "summary": []}, 7),
            cx("event_msg", {"type": "token_count"}, 8),
            {
                **cx_call("exec_command", {"cmd": "ls"}, 9),
                "payload": cx_call("exec_command", {"cmd": "ls"}, 4)["payload"],
            },
        ],
        (ts(3), ts(6)),
    ),
}


@pytest.mark.parametrize("fmt", sorted(TIMESTAMP_CASES))
def test_timestamps_come_from_lines_that_count(scan, write, fmt):
    lines, expected = TIMESTAMP_CASES[fmt]
    r = scan(write(lines), fmt)
    assert (r["first_timestamp"], r["last_timestamp"]) == expected


def test_message_ids_are_remembered_for_the_last_65536(scan, write):
    window = 65_536
    ids = [f"m{i}" for i in range(window + 1)]
    lines = [f'{{"type":"assistant","message":{{"id":"{i}"}}}}' for i in [*ids, ids[0], ids[-1], ids[1]]]
    r = scan(write(lines), "claude-code")
    # m0 had left the window (65,536 newer ids), so it counts again; the newest did not; m0's
    # return pushed m1 out.
    assert r["messages"]["assistant"] == window + 1 + 1 + 0 + 1


# -- core == reference on every key ----------------------------------------------------------------

# Small files that exercise many rules at once; both readers must agree on every key of each.
AGREEMENT_CASES: dict[str, tuple[str, list[Line]]] = {
    "claude-mixed": (
        "claude-code",
        [
            {"type": "queue-operation", "operation": "enqueue", "timestamp": ts(0), "sessionId": SID},
            cc_user("  please fix \u00e9\U0001f600 ", 1),
            cc("attachment", 2, attachment={"type": "skill_listing", "content": "x" * 1000}),
            cc_assistant([{"type": "thinking", "thinking": "t", "signature": "s"}], 3, "m1"),
            cc_assistant([text("ok")], 4, "m1"),
            cc_assistant([tool_use("Bash", {"command": "ls"}, "t1")], 5, "m1"),
            cc_user([{"type": "tool_result", "tool_use_id": "t1", "content": "a\nb"}], 6),
            cc_assistant([tool_use("Edit", {"file_path": "/x.py"}, "t2")], 7, "m2"),
            cc_user("<command-name>/clear</command-name>", 8),
            cc_user("meta", 9, isMeta=True),
            {"type": "custom-title", "customTitle": "T", "sessionId": SID},
            "{broken",
            b"\xff\xfe",
            "",
            {"type": "assistant", "message": "not a dict", "timestamp": ts(10)},
            {"type": "user", "message": {"content": 42}, "timestamp": ts(11)},
        ],
    ),
    "claude-slash-commands": (
        "claude-code",
        [
            cc_user(
                "<command-message>orchestrator</command-message>\n<command-name>/orchestrator</command-name>\n"
                "<command-args>create TODO app by Next.js</command-args>",
                1,
            ),
            cc_user([text("Split the task.\n\nTask: create TODO app by Next.js")], 2, isMeta=True),
            cc_user("<command-message>hello</command-message>\n<command-name>/hello</command-name>", 3),
            cc_user(
                "<local-command-caveat>Run directly in Claude Code</local-command-caveat>", 4, isMeta=True
            ),
            cc_user(
                "<command-name>/model</command-name>\n            <command-message>model</command-message>\n"
                "            <command-args></command-args>",
                5,
            ),
            cc_user(
                [
                    text(" \n<command-message>review is running…</command-message>"),
                    text("<command-name>review</command-name>"),
                ],
                6,
            ),
            cc_user("<command-message>x</command-message><command-name>\t</command-name>", 7),
            cc_user("<command-message>x</command-message><command-args>y</command-args>", 8),
            cc_user(
                "<command-message>d</command-message><command-name> /d </command-name>"
                "<command-args>\u00e9 <b> </command-args>\n</command-args></command-args>",
                9,
            ),
            cc_user(
                "<command-message>o</command-message><command-name>/o</command-name>", 10, isSidechain=True
            ),
        ],
    ),
    "pi-mixed": (
        "pi",
        [
            pi_header(),
            pi_msg("user", 1, content=[text("go")]),
            pi_msg(
                "assistant",
                2,
                content=[
                    text("ok"),
                    {"type": "toolCall", "id": "c", "name": "bash", "arguments": {"command": "make"}},
                ],
            ),
            pi_msg("toolResult", 3, toolCallId="c", toolName="bash", content=[text("done")], isError=False),
            pi_msg("bashExecution", 4, command="git log", output="x", exitCode=0),
            pi("custom_message", 5, customType="session-update", content="[Session Activity]"),
            pi("session_info", 6, name="named"),
        ],
    ),
    "codex-mixed": (
        "codex",
        [
            cx_meta(),
            cx_message("user", "<environment_context>x</environment_context>", n=1),
            cx_message("user", "do it", n=2),
            cx_call("exec_command", {"cmd": "rg foo"}, 3),
            cx_item({"type": "custom_tool_call", "name": "apply_patch", "input": PATCH, "call_id": "c"}, 4),
            cx_call("shell", {"command": ["apply_patch", PATCH]}, 5),
            cx_message("assistant", "done", n=6),
            cx("event_msg", {"type": "agent_message", "message": "done"}, 7),
        ],
    ),
}


@pytest.mark.parametrize("case", sorted(AGREEMENT_CASES))
def test_core_matches_reference_on_cases(write, case):
    _core_module()
    fmt, lines = AGREEMENT_CASES[case]
    path = write(lines, tail=b'{"type":"user","message":{"content":"partial"}')
    assert_same(core_scan(path, fmt), reference_scan(path, fmt))


@pytest.mark.parametrize("name", ["large-session.jsonl", "before-compaction.jsonl"])
def test_core_matches_reference_on_real_pi_sessions(name):
    path = PI_CORPUS / name
    _core_module()
    expected = reference_scan(path, "pi")
    assert expected["messages"]["assistant"] > 100
    assert_same(core_scan(path, "pi"), expected)


SAMPLE_DATA = Path(__file__).parent / "data"


def _sample_files() -> list[Any]:
    """The transcripts the real agent CLIs wrote (tests/data/<format>/**/*.jsonl, see its README)."""
    return [
        pytest.param(fmt, path, id=str(path.relative_to(SAMPLE_DATA)))
        for fmt in ("claude-code", "pi", "codex")
        for path in sorted(SAMPLE_DATA.glob(f"{fmt}/**/*.jsonl"))
    ]


@pytest.mark.parametrize(("fmt", "path"), _sample_files())
def test_core_matches_reference_on_real_cli_samples(fmt, path):
    _core_module()
    assert_same(core_scan(path, fmt), reference_scan(path, fmt))


@pytest.mark.parametrize("case", sorted(AGREEMENT_CASES))
def test_reference_is_the_same_with_orjson(write, case):
    orjson = pytest.importorskip("orjson")
    fmt, lines = AGREEMENT_CASES[case]
    path = write(lines)
    assert reference_scan(path, fmt, loads=orjson.loads) == reference_scan(path, fmt)


def assert_same(core: dict[str, Any], reference: dict[str, Any]) -> None:
    """Every key of the reference result has the same value in the core result (one message per key)."""
    differences = {
        key: (core.get(key, "<missing>"), want)
        for key, want in reference.items()
        if core.get(key, "<missing>") != want
    }
    assert not differences, "core != reference: " + "; ".join(
        f"{k}: core={c!r} reference={w!r}" for k, (c, w) in differences.items()
    )
