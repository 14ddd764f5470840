"""Collapsing tool calls into plain lines: one test per rule, per format, with the agents' real tool
names, and the streaming reader on the transcripts the real CLIs wrote."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

import sidelight
from sidelight.features.recap.collapse import (
    Line,
    ToolCall,
    ToolResult,
    TranscriptLog,
    collapse_tool,
    command_key,
    command_outcome,
    is_acknowledgement,
)
from sidelight.records import Subagent
from tests.conftest import ROOT

if TYPE_CHECKING:
    from pathlib import Path

DATA = ROOT / "tests" / "data"
CWD = "/work/proj"


def one(
    name: str, args: dict[str, Any], result: ToolResult | None = None, category: str = "other", **kw: Any
) -> Line:
    line = collapse_tool(ToolCall(name=name, args=args, **kw), result, category, CWD)
    assert line is not None
    return line


def ok(text: str = "", **details: Any) -> ToolResult:
    return ToolResult(text=text, details=details)


# --- observational ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "args", "result", "expected"),
    [
        ("Read", {"file_path": f"{CWD}/foo.txt"}, ok("x", file={"numLines": 15}), "Read foo.txt (15 lines)."),
        ("read", {"path": f"{CWD}/src/a.ts"}, ok("a\nb\nc\n"), "Read src/a.ts (3 lines)."),
        ("Read", {"file_path": "/etc/hosts"}, ok("one line"), "Read /etc/hosts (1 line)."),
    ],
)
def test_read_names_the_file_and_its_lines(
    name: str, args: dict[str, Any], result: ToolResult, expected: str
) -> None:
    line = one(name, args, result, "read")
    assert (line.kind, line.text) == ("observational", expected)


def test_listing_names_the_entries() -> None:
    line = one("ls", {"path": f"{CWD}/src"}, ok("foo/\nbar.txt\n"), "read")
    assert line.text == "Listed directory src: foo/, bar.txt."
    listing = one(
        "Bash",
        {"command": "ls -la"},
        ok(
            "total 8\ndrwxr-xr-x 2 u u 4096 Nov 1 .\ndrwxr-xr-x 5 u u 4096 Nov 1 ..\n"
            "drwxr-xr-x 2 u u 4096 Nov 1 foo\n-rw-r--r-- 1 u u 9 Nov 1 bar.txt"
        ),
        "command",
    )
    assert (listing.kind, listing.text) == ("observational", "Listed directory .: foo/, bar.txt.")
    many = one("ls", {}, ok("\n".join(f"f{i}" for i in range(12))), "read")
    assert many.text.endswith("f7 (+4 more).")


def test_searches_keep_their_pattern() -> None:
    assert one(
        "Grep", {"pattern": "TODO", "path": f"{CWD}/src"}, ok("Found 3 files\na\nb\nc"), "read"
    ).text == ("Searched for 'TODO' in src (3 matches).")
    assert (
        one("Glob", {"pattern": "**/*.py"}, ok("a.py\nb.py"), "read").text
        == "Searched files '**/*.py' (2 matches)."
    )
    assert (
        one("find", {"pattern": "*.ts"}, ok("No files found"), "read").text
        == "Searched files '*.ts' (0 matches)."
    )
    assert (
        one("WebSearch", {"query": "pluggy hookspec"}, None, "read").text
        == "Searched the web for 'pluggy hookspec'."
    )


def test_recalls_keep_their_query() -> None:
    line = one("mcp__memory__search_nodes", {"query": "deploy steps"}, ok("[]"))
    assert (line.kind, line.text) == ("observational", "Recalled: 'deploy steps'.")
    assert one("recall", {"query": "db"}).text == "Recalled: 'db'."


def test_read_only_commands_are_observational() -> None:
    for command in (
        "cat notes.txt",
        "grep -n 'a\\|b' f.ts | head -3",
        "git diff HEAD~1",
        f"cd {CWD} && rg foo",
    ):
        line = one("Bash", {"command": command}, ok("..."), "command")
        assert line.kind == "observational", command
    # grep finding nothing exits with 1: still only a look.
    nothing = one(
        "bash",
        {"command": "grep -n foo a.ts"},
        ToolResult("Command exited with code 1", is_error=True),
        "command",
    )
    assert (nothing.kind, nothing.failed) == ("observational", False)
    assert nothing.text == "Ran `grep -n foo a.ts`: failed (exit 1)."
    # ... but writing through a redirection or sed -i changes things.
    for command in ("echo hi > notes.txt", "sed -i s/a/b/ f.txt", "cat a | tee b"):
        assert one("Bash", {"command": command}, ok(""), "command").kind == "consequential", command


# --- consequential ----------------------------------------------------------------------------------


def test_edit_shows_what_was_replaced() -> None:
    claude = one("Edit", {"file_path": f"{CWD}/foo.txt", "old_string": "X", "new_string": "Y"}, ok(), "edit")
    assert (claude.kind, claude.text, claude.path) == (
        "consequential",
        "Edited foo.txt: replaced 'X' with 'Y'.",
        "foo.txt",
    )
    pi = one(
        "edit",
        {"path": f"{CWD}/a.py", "oldText": "a = 1\nb = 2\nc = 3", "newText": "a = 1\nb = 20\nc = 3"},
        ok(),
        "edit",
    )
    assert pi.text == "Edited a.py: replaced 'b = 2' with 'b = 20'."  # the common lines are left out
    pi_many = one(
        "edit",
        {"path": "b.py", "edits": [{"oldText": "x", "newText": "y"}, {"oldText": "p", "newText": "q"}]},
        ok(),
        "edit",
    )
    assert pi_many.text == "Edited b.py: 2 replacements (first: 'x' with 'y')."
    multi = one(
        "MultiEdit", {"file_path": "c.py", "edits": [{"old_string": "o", "new_string": "n"}]}, ok(), "edit"
    )
    assert multi.text == "Edited c.py: replaced 'o' with 'n'."
    long = one("Edit", {"file_path": "d.py", "old_string": "z" * 500, "new_string": ""}, ok(), "edit")
    assert len(long.text) < 120


def test_write_counts_lines() -> None:
    line = one(
        "Write",
        {"file_path": f"{CWD}/bar.txt", "content": "".join(f"{i}\n" for i in range(20))},
        ok(),
        "edit",
    )
    assert (line.kind, line.text, line.path) == ("consequential", "Wrote bar.txt (20 lines).", "bar.txt")
    assert one("write", {"path": "one.txt", "content": "x"}, ok(), "edit").text == "Wrote one.txt (1 line)."


def test_failed_edit_is_not_a_change() -> None:
    line = one(
        "Edit",
        {"file_path": "a.py", "old_string": "q", "new_string": "r"},
        ToolResult("<tool_use_error>String to replace not found</tool_use_error>", is_error=True),
        "edit",
    )
    assert line.failed and line.path is None
    assert line.text.startswith("Failed to edit a.py: ")


def test_remember_keeps_the_memory() -> None:
    line = one("mcp__memory__create_entities", {"content": "the API key lives in vault"}, ok())
    assert (line.kind, line.text) == ("consequential", "Remembered: 'the API key lives in vault'.")


def test_asking_the_user_keeps_question_and_answer() -> None:
    claude = one(
        "AskUserQuestion",
        {"questions": [{"question": "Which database?", "header": "DB", "options": []}]},
        ok(
            'User has answered your questions: "Which database?"="Postgres".',
            answers={"Which database?": "Postgres"},
        ),
    )
    assert (claude.kind, claude.text) == (
        "consequential",
        "Asked user: 'Which database?'. Response: 'Postgres'.",
    )
    codex = one("request_user_input", {"question": "Ship it?"}, ok("yes"))
    assert codex.text == "Asked user: 'Ship it?'. Response: 'yes'."
    unanswered = one("AskUserQuestion", {"questions": [{"question": "Now?"}]}, None)
    assert unanswered.text == "Asked user: 'Now?'. No response recorded."


@pytest.mark.parametrize(
    ("output", "is_error", "expected"),
    [
        (
            "===== 2 failed, 10 passed in 0.31s =====\nProcess exited with code 1",
            False,
            "failed (exit 1): 2 failed, 10 passed",
        ),
        ("..........\n10 passed in 0.12s", False, None),
        ("===== 10 passed in 0.12s =====", False, "ok: 10 passed"),
        ("Exit code 2\nerror: no such file", True, "failed (exit 2)"),
        ("test result: FAILED. 3 passed; 1 failed; 0 ignored", False, "failed: 3 passed; 1 failed"),
        ("built in 2s", False, None),
        ("boom", True, "failed"),
    ],
)
def test_command_outcomes(output: str, is_error: bool, expected: str | None) -> None:
    assert command_outcome(output, is_error)[1] == expected


def test_commands_keep_their_outcome() -> None:
    failed = one(
        "Bash",
        {"command": "pytest -q"},
        ToolResult("===== 2 failed, 10 passed in 0.31s =====\nExit code 1", is_error=True),
        "command",
    )
    assert (failed.kind, failed.failed) == ("consequential", True)
    assert failed.text == "Ran `pytest -q`: failed (exit 1): 2 failed, 10 passed."
    passed = one(
        "exec_command",
        {"cmd": "make build"},
        ok("Chunk ID: 1\nProcess exited with code 0\nOutput:\ndone"),
        "command",
    )
    assert passed.text == "Ran `make build`: ok."
    silent = one("bash", {"command": "npm install"}, ok("added 3 packages"), "command")
    assert silent.text == "Ran `npm install`."
    codex_shell = one("shell", {"command": ["bash", "-lc", "cargo build"]}, ok("Exit code: 0"), "command")
    assert codex_shell.text == "Ran `cargo build`: ok."
    relative = one("Bash", {"command": f"{CWD}/run.sh"}, ok(""), "command")
    assert relative.text == "Ran `run.sh`."
    user = one("bashExecution", {"command": "make"}, ok("exit code: 0"), "command")
    assert user.text == "User ran `make`: ok."


def test_codex_patches() -> None:
    patch = (
        "*** Begin Patch\n*** Add File: /work/proj/new.py\n+a\n+b\n"
        "*** Update File: /work/proj/old.py\n@@\n-x = 1\n+x = 2\n"
        "*** Delete File: /work/proj/gone.py\n*** End Patch\n"
    )
    line = one("apply_patch", {}, ok("Exit code: 0\nSuccess."), "edit", raw_input=patch)
    assert (
        line.text == "Wrote new.py (2 lines); Edited old.py: replaced 'x = 1' with 'x = 2'; Deleted gone.py."
    )
    assert (line.kind, line.path) == ("consequential", "new.py")
    failed = one("apply_patch", {}, ToolResult("Exit code: 1\nverification failed"), "edit", raw_input=patch)
    assert failed.failed and failed.text.startswith("Failed to patch new.py")


def test_subagents_report_their_result() -> None:
    line = one(
        "Agent",
        {"description": "Count files"},
        ok(
            "<usage>x</usage>\n[Subagent hand-back] frame. The report follows:\n"
            "  There are 3 files.\nagentId: a1"
        ),
    )
    assert line.text == "Delegated to a subagent: 'Count files'. Result: 'There are 3 files.'."
    typed = one("Task", {"description": "Find uses", "prompt": "Find...", "subagent_type": "Explore"})
    assert typed.text == "Delegated to a subagent (Explore): 'Find uses'."


# --- meta -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "args", "category"),
    [
        ("Bash", {"command": "git status"}, "command"),
        ("bash", {"command": "cd /x && git status --short"}, "command"),
        ("TaskOutput", {"task_id": "1"}, "command"),
        ("BashOutput", {"bash_id": "1"}, "command"),
        ("write_stdin", {"session_id": 1, "chars": ""}, "command"),
        ("TodoRead", {}, "other"),
        ("EnterPlanMode", {}, "other"),
    ],
)
def test_status_checks_are_dropped(name: str, args: dict[str, Any], category: str) -> None:
    assert collapse_tool(ToolCall(name=name, args=args), ok("anything"), category, CWD) is None


def test_finished_and_plans_are_kept() -> None:
    assert one("attempt_completion", {"result": "All tests pass."}).text == "Finished: 'All tests pass.'."
    plan = one(
        "TodoWrite",
        {
            "todos": [
                {"content": "Write tests", "status": "completed"},
                {"content": "Write docs", "status": "in_progress"},
                {"content": "Bench", "status": "pending"},
            ]
        },
    )
    assert (plan.kind, plan.text) == ("meta", "Plan: 1 of 3 done; working on 'Write docs'.")
    codex = one(
        "update_plan",
        {"plan": [{"step": "Fix bug", "status": "completed"}, {"step": "Release", "status": "pending"}]},
    )
    assert codex.text == "Plan: 1 of 2 done; next 'Release'."


def test_acknowledgements() -> None:
    assert all(is_acknowledgement(t) for t in ("ok", "Thanks!", "yes please", "go ahead", "👍", "lgtm"))
    assert not any(is_acknowledgement(t) for t in ("fix the test", "what did i just execute?", "ls"))


# --- whole transcripts ------------------------------------------------------------------------------

EXPECTED_NOTES = [
    ("user", "User: Create notes.txt with two lines, then change beta to gamma and show me the file."),
    ("observational", "Listed directory .: empty."),
    ("consequential", "Wrote notes.txt (2 lines)."),
    ("consequential", "Edited notes.txt: replaced 'beta' with 'gamma'."),
]


@pytest.mark.parametrize(
    ("path", "read_line"),
    [
        (DATA / "claude-code" / "four-tools-resume.jsonl", "Read notes.txt (3 lines)."),
        (DATA / "pi" / "four-tools-continue.jsonl", "Read notes.txt (2 lines)."),
        (DATA / "codex" / "four-tools-resume.jsonl", "Ran `cat notes.txt`."),
    ],
    ids=["claude-code", "pi", "codex"],
)
def test_real_transcripts_collapse_per_format(path: Path, read_line: str) -> None:
    log = TranscriptLog(path)
    lines = list(log)
    assert [(line.kind, line.render()) for line in lines[:4]] == EXPECTED_NOTES
    assert lines[4].render() == read_line
    assert [line.render() for line in lines[5:]] == [
        "Assistant: notes.txt now reads alpha, gamma.",
        "User: What does notes.txt say now?",
        "Ran `wc -l notes.txt`.",
        "Assistant: It says alpha and gamma.",
    ]
    assert log.cwd is not None and log.cwd.endswith("/project")
    assert log.session_id and not log.interrupted


def test_claude_subagent_transcript() -> None:
    lines = [line.render() for line in TranscriptLog(DATA / "claude-code" / "subagent.jsonl")]
    assert lines == [
        "User: Use a subagent to count the files here.",
        "Delegated to a subagent (general-purpose): 'Count the files'. Result: 'There are 0 files.'.",
        "Assistant: The subagent found 0 files.",
    ]
    assert TranscriptLog(DATA / "claude-code" / "subagent.jsonl").subagent is None


def test_a_subagents_own_transcript_is_read_as_its_work() -> None:
    """Every line of ``subagents/agent-*.jsonl`` is ``isSidechain``: they are the subagent's own (its
    parent's task, its tool calls, its result), counted as a scan counts them."""
    path = DATA / "claude-code" / "subagent" / "subagents" / "agent-a2dfded9a6ae64437.jsonl"
    log = TranscriptLog(path)
    assert [(line.kind, line.render()) for line in log] == [
        ("user", "User: Count the files in the project and report the number."),
        ("observational", "Ran `ls | wc -l`."),
        ("assistant", "Assistant: There are 0 files."),
    ]
    assert log.subagent == Subagent(agent_type="general-purpose", description="Count the files")
    categories = {k: v for k, v in sidelight.scan(path).categories.as_dict().items() if v}
    assert log.tool_counts == categories == {"command": 1}
    assert not log.interrupted


def test_a_subagents_turns_inline_in_its_parent_stay_out(tmp_path: Path) -> None:
    """Older versions wrote a subagent's turns into the parent's transcript: they are not the parent's
    own work (the parent's delegation line says what the subagent did)."""
    parent = {"sessionId": "p1", "cwd": CWD, "timestamp": "2026-01-01T10:00:00Z"}
    side = {**parent, "isSidechain": True}
    lines = [
        {**parent, "type": "user", "message": {"role": "user", "content": "Audit the loader"}},
        {**side, "type": "user", "message": {"role": "user", "content": "Read loader.ts"}},
        {
            **side,
            "type": "assistant",
            "message": {
                "id": "m1",
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": "s1", "name": "Bash", "input": {"command": "make audit"}}
                ],
            },
        },
        {
            **parent,
            "type": "assistant",
            "message": {"id": "m2", "role": "assistant", "content": [{"type": "text", "text": "Audited."}]},
        },
    ]
    path = tmp_path / "p1.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    log = TranscriptLog(path)
    assert [line.render() for line in log] == ["User: Audit the loader", "Assistant: Audited."]
    assert log.subagent is None and log.tool_counts == {}


def _claude(kind: str, content: Any, **extra: Any) -> dict[str, Any]:
    return {
        "type": kind,
        "sessionId": "s1",
        "cwd": CWD,
        "timestamp": "2026-01-01T10:00:00Z",
        "message": {"role": kind, "content": content},
        **extra,
    }


def test_thinking_injected_text_and_secrets(tmp_path: Path) -> None:
    records = [
        _claude("user", "Deploy with token ghp_abcdefghijklmnopqrstuvwxyz0123456789AB please"),
        _claude("user", "<command-name>/clear</command-name>"),
        _claude("user", "meta", isMeta=True),
        _claude(
            "assistant",
            [
                {"type": "thinking", "thinking": "secret plan"},
                {"type": "text", "text": "Line one.\n\n\n  Line two."},
            ],
        ),
        _claude("user", "[Session Activity]\n- other (3m ago): did things"),
    ]
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    lines = list(TranscriptLog(path, "claude-code"))
    assert len(lines) == 2
    assert "ghp_" not in lines[0].text and "[REDACTED" in lines[0].text
    assert lines[1].text == "Line one.\n\nLine two."  # reasoning text passes through; thinking does not
    assert all("secret plan" not in line.text for line in lines)


def test_interrupted_and_streaming_limits(tmp_path: Path) -> None:
    call = {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "make deploy"}}
    records = [_claude("user", "deploy it"), _claude("assistant", [call])]
    huge = json.dumps(_claude("user", "x" * 5000))
    path = tmp_path / "s.jsonl"
    path.write_text(
        "".join(json.dumps(r) + "\n" for r in records[:1])
        + huge
        + "\n"
        + json.dumps(records[1])
        + "\n"
        + '{"type":"user","mess'
    )
    log = TranscriptLog(path, "claude-code", max_line_bytes=2000)
    lines = [line.render() for line in log]
    assert lines == ["User: deploy it", "Ran `make deploy` (no result recorded)."]
    assert log.interrupted and log.lines_skipped == 1


def test_pi_user_commands_and_aborts(tmp_path: Path) -> None:
    records = [
        {"type": "session", "id": "p1", "cwd": CWD, "timestamp": "2026-01-01T10:00:00Z"},
        {
            "type": "message",
            "timestamp": "2026-01-01T10:00:01Z",
            "message": {"role": "user", "content": [{"type": "text", "text": "fix it"}]},
        },
        {
            "type": "message",
            "timestamp": "2026-01-01T10:00:02Z",
            "message": {
                "role": "assistant",
                "content": [{"type": "text", "text": "On it"}],
                "stopReason": "aborted",
            },
        },
        {
            "type": "message",
            "timestamp": "2026-01-01T10:00:03Z",
            "message": {"role": "bashExecution", "command": "npm test", "output": "1 failed", "exitCode": 1},
        },
        {"type": "custom_message", "customType": "session-update", "content": "[Session Activity] x"},
    ]
    path = tmp_path / "p.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    log = TranscriptLog(path)
    assert [line.render() for line in log] == [
        "User: fix it",
        "Assistant: On it",
        "User ran `npm test`: failed (exit 1).",
    ]
    assert log.interrupted  # the reply was aborted


def test_tail_reading_keeps_the_header(tmp_path: Path) -> None:
    records: list[dict[str, Any]] = [
        {"type": "session", "id": "p1", "cwd": CWD, "timestamp": "2026-01-01T10:00:00Z"}
    ]
    records += [
        {
            "type": "message",
            "timestamp": f"2026-01-01T10:{i:02d}:00Z",
            "message": {"role": "user", "content": f"prompt {i}"},
        }
        for i in range(50)
    ]
    path = tmp_path / "p.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    offset = path.stat().st_size - 500
    log = TranscriptLog(path, "pi", start_offset=offset)
    lines = list(log)
    assert log.cwd == CWD and log.session_id == "p1"
    assert 0 < len(lines) < 10 and lines[-1].text == "prompt 49"


@pytest.mark.parametrize(
    ("command", "key"),
    [
        ("mix dialyzer 2>&1 | tail -20", "mix dialyzer"),
        ("MIX_ENV=test mix dialyzer --format short | tail -5", "mix dialyzer"),
        ('git commit -m "Release"', "git commit"),
        ('cd /w && git add . && git commit -m "Release"', "git commit"),
        ("cargo test && echo done", "cargo test"),
        ("npm run publish 2>&1 | grep -v warn", "npm run publish"),
        ("python3 -m pytest tests/a.py", "python3 -m pytest"),
        ("pytest tests/a.py | head", "pytest"),
        ("echo hi", "echo hi"),
    ],
)
def test_command_keys_are_program_and_subcommand(command: str, key: str) -> None:
    assert command_key(command) == key
    line = one("Bash", {"command": command}, ToolResult("Exit code 1", is_error=True), "command")
    assert line.action == (f"run:{key}" if line.kind == "consequential" else None)


def test_codex_keys_insertions_and_quotes() -> None:
    """A Ctrl-C is an interruption, not input ''; a pure insertion is not "replaced ''"; a quote that is
    cut ends after a whole word."""
    ctrl_c = one("write_stdin", {"session_id": 3, "chars": "\u0003"}, ok(""), "command")
    assert ctrl_c.text == "Interrupted a running command (Ctrl-C)."
    enter = one("write_stdin", {"session_id": 3, "chars": "\r"}, ok(""), "command")
    assert enter.text == "Sent keys to a running command (U+000D)."
    typed = one("write_stdin", {"session_id": 3, "chars": "yes\n"}, ok(""), "command")
    assert typed.text == "Sent input to a running command: 'yes'."
    patch = "*** Begin Patch\n*** Update File: /work/proj/old.py\n@@\n+import os\n*** End Patch\n"
    inserted = one("apply_patch", {}, ok("Success."), "edit", raw_input=patch)
    assert inserted.text == "Edited old.py: inserted 'import os'."
    removed = one("Edit", {"file_path": f"{CWD}/a.py", "old_string": "x = 1", "new_string": ""}, ok(), "edit")
    assert removed.text == "Edited a.py: removed 'x = 1'."
    words = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda omicron"
    asked = one("AskUserQuestion", {"question": " ".join([words] * 4)}, ok("yes"))
    quoted = asked.text.split("'")[1]
    assert quoted.endswith("…") and quoted[:-1].split()[-1] in words.split(), quoted
