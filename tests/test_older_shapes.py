"""Older real shapes of each format (tests/fixtures/older-shapes, hand-written from docs/agent-formats.md).

The expected values are typed in from docs/activity.md for these tiny files; when the plain-Python
reference reader is importable, the core is also compared with it.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import sidelight

FIXTURES = Path(__file__).parent / "fixtures" / "older-shapes"
CC_DIR = FIXTURES / "claude-code" / "-work-repo"
S1 = "11111111-1111-4111-8111-111111111111"
S2 = "22222222-2222-4222-8222-222222222222"

# Category maps passed explicitly, so the expected categories do not depend on the built-in maps.
CATEGORIES: dict[str, dict[str, str]] = {
    "claude-code": {
        "bash": "command",
        "read": "read",
        "grep": "read",
        "edit": "edit",
        "write": "edit",
        "agent": "other",
        "task": "other",
    },
    "pi": {"bash": "command", "bashexecution": "command", "read": "read", "edit": "edit", "write": "edit"},
    "codex": {
        "shell": "command",
        "shell_command": "command",
        "exec_command": "command",
        "local_shell_call": "command",
        "apply_patch": "edit",
        "web_search_call": "read",
    },
}


class Prefix(str):
    """Equal to any string that starts with it (the primary argument of a multi-file patch)."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, str) and other.startswith(str(self))

    __hash__ = str.__hash__


class OneOf:
    """Equal to any of the given values (where docs/activity.md allows two readings)."""

    def __init__(self, *values: Any) -> None:
        self.values = values

    def __eq__(self, other: object) -> bool:
        return any(other == v for v in self.values)

    def __repr__(self) -> str:
        return f"OneOf{self.values!r}"


def cats(edit: int = 0, read: int = 0, command: int = 0, other: int = 0) -> dict[str, int]:
    return {"edit": edit, "read": read, "command": command, "other": other}


NO_SKIPS = {"malformed_json": 0, "invalid_utf8": 0, "too_long": 0}

CASES: dict[str, tuple[str, Path, dict[str, Any]]] = {
    "claude-code-2.0-session": (
        "claude-code",
        CC_DIR / f"{S1}.jsonl",
        {
            # isMeta, <command-name>, <local-command-stdout>, [Request interrupted…], isCompactSummary,
            # <bash-input>, <bash-stdout> are not prompts; the image beside text is ignored.
            "messages": {"user": 2, "assistant": 4},  # msg_01 (3 lines), msg_02 (+ replay), msg_04, msg_05
            "tools": {"Read": 1, "Edit": 1, "Bash": 1},  # the replayed tool_use counts once
            "categories": cats(edit=1, read=1, command=1),
            "tool_uses": [
                ("Read", "/work/repo/src/router.ts"),
                ("Edit", "/work/repo/src/router.ts"),
                ("Bash", "npm test"),
            ],
            "files_touched": ["/work/repo/src/router.ts"],
            "first_user_text": "The login page redirects to /404 after sign-in. Find out why.",
            # not the <synthetic> model's reply
            "last_assistant_text": "The redirect used a stale base path; fixed and tested.",
            "title": "login work",  # custom-title wins over summary
            "session_id": S1,
            "cwd": "/work/repo",
            "first_timestamp": "2025-10-30T10:00:00.000Z",
            "last_timestamp": "2025-10-30T10:03:50.000Z",
            "lines": 25,
        },
    ),
    "claude-code-old-flat-subagent": (
        "claude-code",
        CC_DIR / "agent-a1b2c3d4.jsonl",
        {
            "messages": {"user": 0, "assistant": 2},  # the sidechain prompt is written by the parent
            "tools": {"Grep": 1},
            "categories": cats(read=1),
            "tool_uses": [("Grep", "basePath")],
            "files_touched": [],
            "first_user_text": None,
            "last_assistant_text": "basePath is used in src/router.ts and src/config.ts.",
            "title": None,
            "session_id": S1,
            "cwd": "/work/repo",
            "first_timestamp": "2025-10-30T10:05:01.000Z",  # not the sidechain prompt
            "last_timestamp": "2025-10-30T10:05:03.000Z",
            "lines": 4,
        },
    ),
    "claude-code-2.1-session": (
        "claude-code",
        CC_DIR / f"{S2}.jsonl",
        {
            "messages": {"user": 1, "assistant": 2},
            "tools": {"Agent": 1},
            "categories": cats(other=1),
            "tool_uses": [("Agent", None)],  # none of the primary-argument keys
            "files_touched": [],
            "first_user_text": "Audit the config loader",
            "last_assistant_text": "The subagent found two problems in the config loader.",
            "title": "Config loader audit",
            "session_id": S2,
            "cwd": "/work/repo",
            "first_timestamp": "2026-01-15T09:00:00.002Z",  # queue-operation lines are not conversation
            "last_timestamp": "2026-01-15T09:01:05.000Z",
            "lines": 7,
        },
    ),
    "claude-code-new-layout-subagent": (
        "claude-code",
        CC_DIR / S2 / "subagents" / "agent-e5f6a7b8.jsonl",
        {
            "messages": {"user": 0, "assistant": 3},  # msg_x1 spans 2 lines
            "tools": {"Read": 1, "Bash": 1},
            "categories": cats(read=1, command=1),
            "tool_uses": [
                ("Read", "/work/repo/src/config.ts"),
                ("Bash", "node -e 'require(\"./src/config\")'"),
            ],
            "files_touched": [],
            "first_user_text": None,
            "last_assistant_text": "Two problems found.",
            "title": None,
            "session_id": S2,
            "cwd": "/work/repo",
            "first_timestamp": "2026-01-15T09:00:04.000Z",  # not the sidechain prompt
            "last_timestamp": "2026-01-15T09:00:08.000Z",
            "lines": 7,
        },
    ),
    "pi-v1": (
        "pi",
        FIXTURES / "pi" / "v1-session.jsonl",
        {
            "messages": {"user": 2, "assistant": 4},  # the aborted empty reply counts as a message
            "tools": {"bash": 1, "bashExecution": 1, "read": 1},
            "categories": cats(read=1, command=2),
            "tool_uses": [("bash", "ls -la"), ("bashExecution", "git status"), ("read", "README.md")],
            "files_touched": [],
            "first_user_text": "list the files",
            "last_assistant_text": "There are 2 entries: README.md and src.",
            "title": None,
            "session_id": "d0c0ffee-0000-4000-8000-000000000001",
            "cwd": "/Users/me/proj",
            "first_timestamp": "2025-11-20T20:00:01.000Z",
            "last_timestamp": "2025-11-20T20:03:10.000Z",
            "lines": 13,
        },
    ),
    "pi-v3": (
        "pi",
        FIXTURES / "pi" / "v3-session.jsonl",
        {
            # custom_message (session-update and others), custom, compaction, branch_summary, label and
            # the image-only prompt are not counted.
            "messages": {"user": 1, "assistant": 3},
            "tools": {"read": 1, "edit": 1},
            "categories": cats(edit=1, read=1),
            "tool_uses": [("read", "src/config.ts"), ("edit", "src/config.ts")],
            "files_touched": ["src/config.ts"],
            "first_user_text": "refactor the config loading",
            "last_assistant_text": "Done: config loading is now lazy.",
            "title": "Config refactor (lazy)",  # the newest session_info
            "session_id": "0a0b0c0d-0000-4000-8000-000000000003",
            "cwd": "/work/pi-proj",
            "first_timestamp": "2026-03-10T08:00:01.000Z",
            "last_timestamp": "2026-03-10T08:11:05.000Z",
            "lines": 18,
        },
    ),
    "codex-legacy-shell": (
        "codex",
        FIXTURES / "codex" / "rollout-2025-08-20T14-00-00-legacy-shell.jsonl",
        {
            # <user_instructions> and <environment_context> messages are not prompts; event_msg
            # user_message repeats the response_item prompt and is not counted.
            "messages": {"user": 2, "assistant": 2},
            # `shell` with ["apply_patch", PATCH] "is read the same way" as apply_patch: the patch
            # gives its primary argument. Whether it then counts as a `shell` (command, no files
            # touched) or as an `apply_patch` (edit, touching src/sum.js) docs/activity.md leaves
            # open: both readings are accepted, each one whole.
            "tools": OneOf(
                {"shell": 3, "local_shell_call": 1}, {"shell": 2, "apply_patch": 1, "local_shell_call": 1}
            ),
            "categories": OneOf(cats(command=4), cats(edit=1, command=3)),
            "tool_uses": OneOf(
                *(
                    [
                        ("shell", "npm test"),
                        (name, "src/sum.js"),
                        ("local_shell_call", "npm test -- --silent"),
                        ("shell", "git commit -am fix sum"),  # not a shell -c list: joined by spaces
                    ]
                    for name in ("shell", "apply_patch")
                )
            ),
            "files_touched": OneOf([], ["src/sum.js"]),
            "first_user_text": "run the test suite and fix the failures",
            "last_assistant_text": "Committed as 1a2b3c4.",
            "title": None,
            "session_id": "5973b6c0-94b8-487b-a530-2aeb6098ae0e",
            "cwd": "/work/cx",
            "first_timestamp": "2025-08-20T14:00:02.000Z",  # the prompt, not the context
            "last_timestamp": "2025-08-20T14:01:05.000Z",
            "lines": 20,
        },
    ),
    "codex-unified-exec": (
        "codex",
        FIXTURES / "codex" / "rollout-2026-02-02T09-00-00-unified-exec.jsonl",
        {
            # developer messages (ours included), AGENTS.md, environment and <user_shell_command>
            # messages are not prompts.
            "messages": {"user": 1, "assistant": 1},
            "tools": {
                "shell_command": 1,
                "exec_command": 1,
                "apply_patch": 2,
                "web_search_call": 1,
                "update_plan": 1,
            },
            "categories": cats(edit=2, read=1, command=2, other=1),
            "tool_uses": [
                ("shell_command", "rg -n parse src"),
                ("exec_command", "sed -n 1,40p src/cli.ts"),
                ("apply_patch", Prefix("src/cli.ts")),
                ("apply_patch", Prefix("src/old.ts")),
                ("web_search_call", "commander.js verbose option"),
                ("update_plan", None),
            ],
            "files_touched": ["src/cli.ts", "src/verbose.ts", "src/old.ts", "src/a.ts", "src/b.ts"],
            "first_user_text": "add a --verbose flag to the CLI",
            "last_assistant_text": "Added --verbose (src/verbose.ts).",
            "title": None,
            "session_id": "019a0000-0000-7000-8000-0000000000c2",
            "cwd": "/work/cx2",
            "first_timestamp": "2026-02-02T09:00:01.000Z",  # the prompt, not developer/context messages
            "last_timestamp": "2026-02-02T09:00:11.000Z",  # not the <user_shell_command> message
            "lines": 26,
        },
    ),
    # Codex CLI 0.1x (spring 2025): no session_meta, no timestamps on items, items without the
    # response_item wrapper (issue 21: "cannot detect the format").
    "codex-before-session-meta": (
        "codex",
        FIXTURES / "codex" / "rollout-2025-05-07T17-24-21-before-session-meta.jsonl",
        {
            "messages": {"user": 1, "assistant": 1},
            "tools": {"shell": 2, "apply_patch": 1},
            "categories": cats(edit=1, command=2),
            "tool_uses": [("shell", "cat cli.py"), ("apply_patch", "cli.py"), ("shell", "pytest -q")],
            "files_touched": ["cli.py"],
            "first_user_text": "add a --verbose flag to cli.py and run the tests",
            "last_assistant_text": "Added --verbose to cli.py; the 3 tests pass.",
            "title": None,
            "session_id": "3f7c2a10-5b8e-4c1d-9e2f-a4b6c8d0e1f2",
            "cwd": None,
            "first_timestamp": None,
            "last_timestamp": None,
            "lines": 14,
        },
    ),
    # A Claude Code file of usage lines only (what usage counters keep): replies without text, no
    # prompt, no session id on any line.
    "claude-code-usage-only": (
        "claude-code",
        FIXTURES / "claude-code" / "usage-only" / "usage-lines.jsonl",
        {
            "messages": {"user": 0, "assistant": 2},
            "tools": {},
            "categories": cats(),
            "tool_uses": [],
            "files_touched": [],
            "first_user_text": None,
            "last_assistant_text": None,
            "title": None,
            "session_id": None,
            "cwd": None,
            "first_timestamp": "2025-06-01T10:00:05.000Z",
            "last_timestamp": "2025-06-01T10:01:00.000Z",
            "lines": 4,
        },
    ),
}


def _scan(fmt: str, path: Path) -> dict[str, Any]:
    return _normalise(sidelight.scan(str(path), fmt, categories=CATEGORIES[fmt]).as_dict())


def _normalise(d: dict[str, Any]) -> dict[str, Any]:
    """Tool uses as ``(name, category, primary_arg, timestamp, lines, old_text, new_text)`` tuples,
    whatever their shape."""
    keys = ("name", "category", "primary_arg", "timestamp", "lines", "old_text", "new_text")
    out = dict(d)
    out["tool_uses"] = [
        tuple(u[k] for k in keys) if isinstance(u, dict) else tuple(u) for u in out.get("tool_uses", [])
    ]
    out["files_touched"] = list(out.get("files_touched", []))
    return out


def _full_categories(fmt: str) -> dict[str, str]:
    """The map the facade builds: the format's defaults with ours on top."""
    return {**sidelight.DEFAULT_CATEGORIES[fmt], **CATEGORIES[fmt]}


@pytest.mark.parametrize("case", list(CASES))
def test_older_shape_counts(case: str) -> None:
    fmt, path, expected = CASES[case]
    got = _scan(fmt, path)
    expected = {k: v for k, v in expected.items() if k not in TIMESTAMPS}
    actual = {key: got[key] for key in expected if key != "tool_uses"}
    actual["tool_uses"] = [(name, arg) for name, _cat, arg, *_rest in got["tool_uses"]]
    assert actual == expected
    if isinstance(expected["tools"], OneOf):  # the two readings must not be mixed
        named_patch = "apply_patch" in got["tools"]
        assert (got["files_touched"] != []) == named_patch
    assert dict(got["skipped"]) == NO_SKIPS
    types = Counter(
        t if isinstance(t := json.loads(line).get("type"), str) else "<none>"
        for line in path.read_text().splitlines()
    )
    assert dict(got["entry_types"]) == dict(types)


TIMESTAMPS = ("first_timestamp", "last_timestamp")


@pytest.mark.parametrize("case", list(CASES))
def test_older_shape_timestamps(case: str) -> None:
    """docs/activity.md: the first / last line that holds a counted prompt, a line of an assistant
    message, or a counted tool use; not a sidechain prompt, a ``developer`` or context message."""
    fmt, path, expected = CASES[case]
    got = _scan(fmt, path)
    assert {k: got[k] for k in TIMESTAMPS} == {k: expected[k] for k in TIMESTAMPS}


@pytest.mark.parametrize("case", list(CASES))
def test_older_shape_tool_use_categories(case: str) -> None:
    fmt, path, _ = CASES[case]
    got = _scan(fmt, path)
    for name, category, _arg, *_rest in got["tool_uses"]:
        assert category == _full_categories(fmt).get(name.lower(), "other"), name


@pytest.mark.parametrize("case", list(CASES))
def test_older_shape_format_is_detected(case: str) -> None:
    fmt, path, expected = CASES[case]
    auto = sidelight.scan(str(path), "auto", categories=CATEGORIES[fmt])
    assert auto.messages.as_dict() == expected["messages"]
    assert auto.as_dict()["session_id"] == expected["session_id"]


@pytest.mark.parametrize("case", list(CASES))
def test_older_shape_matches_reference(case: str) -> None:
    reference = pytest.importorskip("tests.support.reference")
    fmt, path, _ = CASES[case]
    got = _scan(fmt, path)
    ref = _normalise(reference.reference_scan(path, fmt, categories=_full_categories(fmt)))
    keys = (set(got) & set(ref)) - {"cursor", "offset", "reset", "elapsed_ms", "format"}
    assert keys, "the reference shares no field with the core"
    assert {k: got[k] for k in keys} == {k: ref[k] for k in keys}


def test_a_file_of_claude_code_usage_lines_without_a_type_is_detected() -> None:
    path = FIXTURES / "claude-code" / "usage-only" / "no-type-usage-lines.jsonl"
    assert sidelight.detect_format(path) == sidelight.Format.CLAUDE_CODE
    assert sidelight.scan(path).lines == 2


def test_an_opencode_export_is_not_read_as_pi() -> None:
    export = Path(__file__).parent / "data" / "opencode" / "four-tools-continue.jsonl"
    # Not Pi's (the core's detection knows none of it): opencode's own decoder, a plugin's format, reads it.
    assert sidelight.detect_format(export) == "opencode"
